"""Tests of wnb_stream.stream.redis_stream against a real redis-server on a loopback port.

Skipped when ``redis-server`` or the ``redis`` Python module is not installed.
"""

from __future__ import annotations

import functools
import os
import pickle
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import types

import numpy as np
import pytest
from consumer_process import Consumer
from testkit import require

from wnb_stream.stream import ListSource, StreamRunner, checkpoints

require("redis")
require("redis_server", shutil.which("redis-server") is not None)
import redis  # noqa: E402

from wnb_stream.stream.redis_stream import RedisStreamSource, parse_id, publish  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A recording model with no saved-model record, checkpointed as its pickle (see tests/test_stream.py).
FIXTURES = types.ModuleType("wnb_stream._redis_test_fixtures")


#: A runner whose checkpoint may hold a pickle.
Trusted = functools.partial(StreamRunner, trusted_checkpoint=True)


def saved_position(path):
    return checkpoints.read(path, checkpoints.StreamCheckpoint).position


class Recorder:
    def __init__(self):
        self.learned: list = []

    def predict_proba_one(self, x):
        return {}

    def learn_one(self, x, y):
        self.learned.append((x["i"], y))


Recorder.__module__ = FIXTURES.__name__
FIXTURES.Recorder = Recorder


@pytest.fixture(autouse=True, scope="module")
def fixtures_module():
    sys.modules[FIXTURES.__name__] = FIXTURES
    yield
    del sys.modules[FIXTURES.__name__]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A throw-away redis-server on 127.0.0.1 (no persistence), killed at teardown."""
    directory = tmp_path_factory.mktemp("redis")
    port = _free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
    try:
        for _ in range(100):  # up to ~10 s
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None:
                    pytest.skip("redis-server did not start")
                time.sleep(0.1)
        else:
            pytest.skip("redis-server did not answer")
        yield port
    finally:
        client.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def client(server, request):
    connection = redis.Redis(host="127.0.0.1", port=server, socket_timeout=10)
    connection.flushall()
    yield connection
    connection.close()


def delayed_stream(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    messages, due = [], {}
    for i in range(n):
        messages.append({"id": i, "x": {"i": i}})
        if rng.random() < 0.85:
            due.setdefault(i + int(rng.integers(0, 12)), []).append(i)
        for j in due.pop(i, []):
            messages.append({"id": j, "y": j % 2})
    return messages


def expected_learning(messages: list) -> list:
    waiting, learned = {}, []
    for m in messages:
        if "x" in m:
            waiting[m["id"]] = m["x"]
        elif m["id"] in waiting:
            learned.append((waiting.pop(m["id"])["i"], m["y"]))
    return learned


def source(client, consumer="worker", **kwargs) -> RedisStreamSource:
    kwargs.setdefault("idle_timeout", 0.2)
    kwargs.setdefault("batch_size", 16)
    return RedisStreamSource(client, "events", "wnb", consumer, **kwargs)


def pending_count(client) -> int:
    return client.xpending("events", "wnb")["pending"]


# ------------------------------------------------------------------------------------------------


def test_parse_id():
    assert parse_id("1-2") == (1, 2) and parse_id(b"17-0") == (17, 0) and parse_id("5") == (5, 0)
    with pytest.raises(ValueError, match="stream entry id"):
        parse_id("a-b")
    with pytest.raises(ValueError, match="stream entry id"):
        parse_id(12)


def test_parameters_are_validated(client):
    for kwargs, name in [({"batch_size": 0}, "batch_size"), ({"block_ms": 0}, "block_ms"),
                         ({"idle_timeout": -1}, "idle_timeout"), ({"claim_idle_ms": -5}, "claim_idle_ms")]:
        with pytest.raises(ValueError, match=name):
            RedisStreamSource(client, "events", "wnb", "c", **kwargs)


def test_messages_flow_and_are_acknowledged_after_checkpoints(client, tmp_path):
    messages = delayed_stream(50, seed=1)
    ids = [publish(client, "events", m) for m in messages]
    assert all(parse_id(a) < parse_id(b) for a, b in zip(ids, ids[1:]))
    runner = Trusted(Recorder(), tmp_path / "ckpt.json", checkpoint_every=10)
    runner.run(source(client))
    assert runner.model.learned == expected_learning(messages)
    assert runner.position == ids[-1] and saved_position(tmp_path / "ckpt.json") == ids[-1]
    assert pending_count(client) == 0  # every entry acknowledged after the final checkpoint
    assert runner.stats["messages"] == len(messages)


def test_without_checkpoint_file_entries_are_still_acknowledged(client):
    for m in delayed_stream(20, seed=2):
        publish(client, "events", m)
    runner = Trusted(Recorder(), None, checkpoint_every=7)
    runner.run(source(client), max_messages=10, checkpoint_at_end=False)
    assert runner.stats["checkpoints"] == 0
    assert pending_count(client) == 16 - 7  # one batch read, the first 7 acknowledged
    runner.run(source(client))
    assert pending_count(client) == 0


def test_unacknowledged_entries_are_replayed_once_after_a_crash(client, tmp_path):
    messages = delayed_stream(120, seed=3)
    for m in messages:
        publish(client, "events", m)
    path = tmp_path / "ckpt.json"
    # Read ahead by batches of 16, process 50 (checkpoint at 40), "crash": 10 processed and more
    # delivered entries stay pending for this consumer.
    Trusted(Recorder(), path, checkpoint_every=20).run(source(client), max_messages=50, checkpoint_at_end=False)
    assert pending_count(client) > 10
    runner = Trusted(Recorder(), path, checkpoint_every=20)
    runner.run(source(client))
    assert runner.model.learned == expected_learning(messages)
    assert pending_count(client) == 0


def test_crash_between_checkpoint_and_ack_skips_learned_entries(client, tmp_path, monkeypatch):
    messages = delayed_stream(60, seed=4)
    for m in messages:
        publish(client, "events", m)
    path = tmp_path / "ckpt.json"
    first = source(client)

    def crash(position):
        raise ConnectionError("crashed after the save, before XACK")

    monkeypatch.setattr(first, "commit", crash)
    with pytest.raises(ConnectionError):
        Trusted(Recorder(), path, checkpoint_every=30).run(first)
    checkpointed = saved_position(path)
    second = source(client)
    runner = Trusted(Recorder(), path, checkpoint_every=30)
    runner.run(second)
    assert second.skipped == 30  # entries up to the checkpointed id: acknowledged, not relearned
    assert runner.model.learned == expected_learning(messages)
    assert parse_id(checkpointed) < parse_id(runner.position) and pending_count(client) == 0


def test_a_new_consumer_claims_the_dead_ones_entries(client, tmp_path):
    messages = delayed_stream(80, seed=5)
    for m in messages:
        publish(client, "events", m)
    path = tmp_path / "ckpt.json"
    Trusted(Recorder(), path, checkpoint_every=25).run(
        source(client, "worker-1"), max_messages=40, checkpoint_at_end=False
    )
    replacement = source(client, "worker-2", claim_idle_ms=0)
    runner = Trusted(Recorder(), path, checkpoint_every=25)
    runner.run(replacement)
    assert runner.model.learned == expected_learning(messages)
    assert pending_count(client) == 0


def test_random_crash_points(client, tmp_path):
    rng = np.random.default_rng(6)
    messages = delayed_stream(100, seed=6)
    for m in messages:
        publish(client, "events", m)
    path = tmp_path / "ckpt.json"
    for k in rng.integers(1, 60, size=5):
        Trusted(Recorder(), path, checkpoint_every=int(rng.integers(1, 20))).run(
            source(client, batch_size=int(rng.integers(1, 30))), max_messages=int(k), checkpoint_at_end=False
        )
    runner = Trusted(Recorder(), path, checkpoint_every=7)
    runner.run(source(client))
    assert runner.model.learned == expected_learning(messages)


def test_bad_entries_are_rejected_not_fatal(client):
    publish(client, "events", {"id": 0, "x": {"i": 0}})
    client.xadd("events", {"data": "{not json"})
    client.xadd("events", {"other": "field"})
    publish(client, "events", {"id": 0, "y": 1})
    runner = Trusted(Recorder(), None)
    runner.run(source(client))
    assert runner.model.learned == [(0, 1)] and runner.stats["rejected"] == 2


def test_decode_responses_client(server):
    text_client = redis.Redis(host="127.0.0.1", port=server, decode_responses=True, socket_timeout=10)
    try:
        text_client.flushall()
        for m in delayed_stream(15, seed=7):
            publish(text_client, "events", m)
        runner = Trusted(Recorder(), None)
        runner.run(source(text_client))
        assert runner.model.learned == expected_learning(delayed_stream(15, seed=7))
    finally:
        text_client.close()


# ------------------------------------------------------------------------------------------------
# SIGKILL of a real consumer process, with our classifier


CONSUMER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    import redis
    import pickle
    from wnb_stream import WeightedNaiveBayes
    from wnb_stream.stream.redis_stream import RedisStreamSource
    from wnb_stream.stream import StreamRunner

    mode, port, checkpoint, out, limit = sys.argv[1:]
    client = redis.Redis(host="127.0.0.1", port=int(port), socket_timeout=30)
    source = RedisStreamSource(client, "events", "wnb", "worker", batch_size=50, idle_timeout=1.0)
    runner = StreamRunner(WeightedNaiveBayes(seed=3), checkpoint, checkpoint_every=41)
    print("started", flush=True)
    if mode == "stop":
        runner.run(source, max_messages=int(limit), checkpoint_at_end=False)
        print("ready", flush=True)
        time.sleep(120)
    else:
        runner.run(source)
        with open(out, "wb") as handle:
            pickle.dump({{"model": runner.model, "stats": runner.stats}}, handle)
        print("done", flush=True)
    """
)


def labelled_stream(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    messages, due = [], {}
    for i in range(n):
        y = str(rng.choice(["a", "b", "c"]))
        x = {"num": float(rng.normal({"a": 0.0, "b": 1.0, "c": 2.0}[y])), "cat": f"v{rng.integers(0, 4)}",
             "noise": float(rng.normal())}
        messages.append({"id": i, "x": x})
        if rng.random() < 0.9:
            due.setdefault(i + int(rng.integers(0, 20)), []).append((i, y))
        for key, label in due.pop(i, []):
            messages.append({"id": key, "y": label})
    return messages






def test_sigkill_consumer_then_restart_gives_the_uninterrupted_model(client, server, tmp_path):
    from wnb_stream import WeightedNaiveBayes

    messages = labelled_stream(600, seed=21)
    for m in messages:
        publish(client, "events", m)
    script = tmp_path / "consumer.py"
    script.write_text(CONSUMER.format(repo=REPO))
    checkpoint, out = tmp_path / "ckpt.json", tmp_path / "final.json"
    consumers = []
    try:
        consumers.append(Consumer(script, "stop", server, checkpoint, out, limit=300))
        consumers[-1].wait_for("ready")
        assert pending_count(client) > 0  # delivered, not acknowledged: the kill loses them in memory
        consumers[-1].kill()
        consumers.append(Consumer(script, "finish", server, checkpoint, out))
        consumers[-1].wait_for("done")
        assert consumers[-1].process.wait(timeout=60) == 0
    finally:
        for consumer in consumers:
            consumer.kill()
    assert pending_count(client) == 0

    final = pickle.loads(out.read_bytes())
    reference = StreamRunner(WeightedNaiveBayes(seed=3), None)
    reference.run(ListSource(messages))
    model = final["model"]
    assert model.weights == reference.model.weights
    rng = np.random.default_rng(0)
    for _ in range(40):
        x = {"num": float(rng.normal(1.0, 1.5)), "cat": f"v{rng.integers(0, 6)}", "noise": float(rng.normal())}
        assert model.predict_proba_one(x) == reference.model.predict_proba_one(x)
    for key in ("messages", "events", "labels", "learned", "unmatched", "pending", "correct"):
        assert final["stats"][key] == reference.stats[key], key
    assert final["stats"]["restarts"] == 1


# ------------------------------------------------------------------------------------------------
# Acknowledgements only for what a saved checkpoint holds, whatever the calling pattern


def labelled_pairs(n: int) -> list:
    """``n`` messages that each carry an event and its label: each one is one label to learn."""
    return [{"id": i, "x": {"i": i}, "y": i % 2} for i in range(n)]


@pytest.mark.parametrize("every", [7, 1000])
@pytest.mark.parametrize("second", ["stopped", "finished"])
def test_a_second_run_on_the_same_runner_acks_only_what_a_checkpoint_holds(client, tmp_path, every, second):
    messages = labelled_pairs(100)
    for m in messages:
        publish(client, "events", m)
    path = tmp_path / "ckpt.json"
    runner = Trusted(Recorder(), path, checkpoint_every=every)
    runner.run(source(client), max_messages=30, checkpoint_at_end=False)  # stopped: 30 learned, unsaved
    if second == "stopped":
        # A second run() on the same runner (a retry loop, say), stopped again before any checkpoint
        runner.run(source(client), max_messages=5, checkpoint_at_end=False)
    else:
        runner.run(source(client))
        assert runner.model.learned == [(i, i % 2) for i in range(100)] and pending_count(client) == 0
    # The process dies: what the broker still holds and the checkpoint must add up to every label, once
    restarted = Trusted(Recorder(), path, checkpoint_every=every)
    restarted.run(source(client))
    assert restarted.model.learned == [(i, i % 2) for i in range(100)]
    assert pending_count(client) == 0


def test_a_second_run_after_the_connection_failed_learns_every_label_once(client, tmp_path, monkeypatch):
    messages = labelled_pairs(100)
    for m in messages:
        publish(client, "events", m)
    path = tmp_path / "ckpt.json"
    runner = Trusted(Recorder(), path, checkpoint_every=25)
    real = client.xreadgroup
    calls = [0]

    def flaky(*args, **kwargs):
        calls[0] += 1
        if calls[0] in (3, 7):
            raise redis.ConnectionError("connection reset")
        return real(*args, **kwargs)

    monkeypatch.setattr(client, "xreadgroup", flaky)
    first = source(client)
    for _ in range(2):
        with pytest.raises(redis.ConnectionError):
            runner.run(first, checkpoint_at_end=False)
    runner.run(first, max_messages=3, checkpoint_at_end=False)  # then the process dies
    monkeypatch.undo()
    assert runner.stats["checkpoints"] >= 1 and runner.position != saved_position(path)
    restarted = Trusted(Recorder(), path, checkpoint_every=25)
    restarted.run(source(client))
    assert restarted.model.learned == [(i, i % 2) for i in range(100)] and pending_count(client) == 0


# ------------------------------------------------------------------------------------------------
# Poison entries


POISON_ENTRIES = [
    '{"id": 900, "x": {"i": 1, "a": ' + "7" * 5000 + "}}",  # an integer of 5,000 digits
    '{"id": 901, "x": {"i": 1, "a": ' + "[" * 100_000 + "]" * 100_000 + "}}",  # nested 10^5 deep
    '{"id": 902, "x": {"i": 1, "a": ' + "9" * 400 + "}}",  # an integer of 400 digits
    '{"id": 903, "x": {"i": 1}, "time": ' + "9" * 400 + "}",
    '{"id": 904, "x": {"i": 1}, "y": NaN}',  # a label no checkpoint of the classifier can hold
    "{not json",
    b"\xff\xfe not utf-8",
]


class Strict(Recorder):
    """A recording model that reads its numeric features as floats (OverflowError for 400 digits)."""

    def predict_proba_one(self, x):
        for value in x.values():
            if isinstance(value, int):
                float(value)
        return {}

    def learn_one(self, x, y):
        if y != y:
            raise ValueError("a NaN label")
        super().learn_one(x, y)


Strict.__module__ = FIXTURES.__name__
FIXTURES.Strict = Strict


def test_poison_entries_are_dead_lettered_and_acked_with_the_next_checkpoint(client, tmp_path):
    messages = delayed_stream(120, seed=8)
    rng = np.random.default_rng(9)
    slots = sorted(rng.choice(len(messages), size=len(POISON_ENTRIES), replace=False).tolist())
    poison = dict(zip(slots, POISON_ENTRIES))
    for i, m in enumerate(messages):
        if i in poison:
            client.xadd("events", {"data": poison[i]})
        publish(client, "events", m)
    client.xadd("events", {"other": "field"})
    path = tmp_path / "ckpt.json"
    for k in rng.integers(5, 60, size=5):  # killed after k messages each time, no final checkpoint
        Trusted(Strict(), path, checkpoint_every=int(rng.integers(1, 20))).run(
            source(client, batch_size=int(rng.integers(1, 30))), max_messages=int(k), checkpoint_at_end=False
        )
    runner = Trusted(Strict(), path, checkpoint_every=9)
    runner.run(source(client))
    assert runner.model.learned == expected_learning(messages)
    n_poison = len(POISON_ENTRIES) + 1
    assert runner.stats["rejected"] == runner.stats["dead_letters"] == n_poison
    assert len({letter.position for letter in runner.dead_letters}) == n_poison  # each once, across restarts
    assert pending_count(client) == 0


def test_poison_entries_against_the_classifier(client, tmp_path):
    from wnb_stream import WeightedNaiveBayes

    messages = labelled_stream(200, seed=10)
    for i, m in enumerate(messages):
        if i % 40 == 7:
            client.xadd("events", {"data": POISON_ENTRIES[(i // 40) % len(POISON_ENTRIES)]})
        publish(client, "events", m)
    path = tmp_path / "ckpt.json"
    StreamRunner(WeightedNaiveBayes(seed=3), path, checkpoint_every=41).run(source(client), max_messages=150, checkpoint_at_end=False)
    runner = StreamRunner(WeightedNaiveBayes(seed=3), path, checkpoint_every=41)
    runner.run(source(client))
    reference = StreamRunner(WeightedNaiveBayes(seed=3), None)
    reference.run(ListSource(messages))
    assert runner.model.weights == reference.model.weights
    for key in ("events", "labels", "learned", "unmatched", "pending", "correct"):
        assert runner.stats[key] == reference.stats[key], key
    assert runner.stats["rejected"] == sum(1 for i in range(len(messages)) if i % 40 == 7)
    assert pending_count(client) == 0


def test_two_consumers_of_a_group_train_one_model_in_rounds_exactly_once(client):
    """The consumers of one group as partitions (``wnb_stream.distributed.partitioned``): a consumer that dies
    mid-round comes back under its name, its unacknowledged entries are delivered again, and the
    ones the checkpoint holds are skipped: every entry is absorbed once."""
    import collections

    from wnb_stream import WeightedNaiveBayes, summaries, weights
    from wnb_stream.distributed import Coordinator, Learner

    rng = np.random.default_rng(4)
    labels = collections.Counter()
    for _ in range(900):
        j = int(rng.integers(3))
        labels["abc"[j]] += 1
        publish(client, "events", {"x": {"u": float(rng.normal(j, 1.0)), "c": "abc"[j]}, "y": "abc"[j]})

    def learner(name):
        source = RedisStreamSource(client, "events", "trainers", name, batch_size=40, block_ms=50, idle_timeout=0.3)
        return Learner(name, source, batch_size=32)

    coordinator = Coordinator(WeightedNaiveBayes(numeric=summaries.Gaussian(), optimizer=weights.Uniform(), seed=1))
    learners = {name: learner(name) for name in ("c0", "c1")}
    for name, one in learners.items():
        one.reset(coordinator.position(name), coordinator.model.delta())
    crashed = False
    for _ in range(100):
        reports = [one.run(max_messages=100) for one in learners.values()]
        if not crashed and coordinator.rounds == 2:  # c1 dies with its report: a new process, the same name
            crashed = True
            reports = reports[:1]
            learners["c1"] = learner("c1")
            learners["c1"].reset(coordinator.position("c1"), coordinator.model.delta())
        predictor = coordinator.round(reports)
        for name, one in learners.items():
            one.publish(predictor, coordinator.position(name))
        if all(r.exhausted and r.messages == 0 for r in reports) and len(reports) == 2:
            break
    c = coordinator.model._engine.classes
    assert crashed and {label: c.seen[j] for j, label in enumerate(c.labels)} == {k: float(v) for k, v in labels.items()}
    assert client.xpending("events", "trainers")["pending"] == 0  # everything absorbed was acknowledged


def test_an_entry_beyond_max_line_bytes_is_dead_lettered_and_acked(client, tmp_path):
    publish(client, "events", {"id": 0, "x": {"i": 0}})
    publish(client, "events", {"id": 1, "x": {"i": 1, "c": "w" * 5000}})
    publish(client, "events", {"id": 0, "y": 1})
    runner = Trusted(Recorder(), tmp_path / "ckpt.json", checkpoint_every=1)
    runner.run(source(client, max_line_bytes=1000))
    assert runner.model.learned == [(0, 1)] and runner.stats["rejected"] == 1
    (letter,) = runner.dead_letters
    assert "a stream entry of 5027 bytes or more, beyond max_line_bytes = 1000" in letter.error and len(letter.message) <= 200
    assert pending_count(client) == 0
    with pytest.raises(ValueError, match="max_line_bytes must be an integer >= 1"):
        source(client, max_line_bytes=0)
