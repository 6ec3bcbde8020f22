"""Tests of wnb_stream.stream (runner, sources, pending): sources, the pending table, and the exactly-once consumer loop."""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import pickle
import sys
import textwrap
import time
import types

import numpy as np
import pytest
from consumer_process import Consumer
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from stream_cases import Trusted, saved

from wnb_stream import io
from wnb_stream.stream import JSONLinesSource, ListSource, Malformed, PendingTable, StreamRunner, checkpoints
from wnb_stream.stream import runner as runner_module

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ------------------------------------------------------------------------------------------------
# A recording model (no saved-model record: checkpointed as its pickle, so with trust): it remembers
# every example it learns, in order, which makes "every label learned exactly once" directly checkable.

FIXTURES = types.ModuleType("wnb_stream._stream_test_fixtures")


class Recorder:
    def __init__(self):
        self.learned: list = []
        self.counts: dict = {}

    def predict_proba_one(self, x):
        if "bad" in x:
            raise ValueError(f"feature 'bad': unusable value {x['bad']!r}")
        total = sum(self.counts.values())
        return {y: c / total for y, c in self.counts.items()}

    def learn_one(self, x, y):
        if "bad" in x or isinstance(y, list):
            raise ValueError("unusable example")
        self.learned.append((x["i"], y))
        self.counts[y] = self.counts.get(y, 0) + 1


Recorder.__module__ = FIXTURES.__name__
FIXTURES.Recorder = Recorder


@pytest.fixture(autouse=True, scope="module")
def fixtures_module():
    sys.modules[FIXTURES.__name__] = FIXTURES
    yield
    del sys.modules[FIXTURES.__name__]


def delayed_stream(n: int, delay: int, rng: np.random.Generator, label_rate: float = 0.8) -> list:
    """Events 0..n-1; the label of event i (for a share of them) arrives after event i + delay."""
    messages = []
    labels: dict[int, list] = {}
    for i in range(n):
        messages.append({"id": i, "x": {"i": i, "u": float(rng.normal())}})
        if rng.random() < label_rate:
            labels.setdefault(i + int(rng.integers(0, delay + 1)), []).append(i)
        for j in labels.pop(i, []):
            messages.append({"id": j, "y": bool(j % 3 == 0)})
    return messages


# ------------------------------------------------------------------------------------------------
# Sources


def test_list_source_positions_and_seek():
    source = ListSource(["a", "b", "c"])
    assert list(source) == [(1, "a"), (2, "b"), (3, "c")]
    assert list(source) == []  # exhausted until sought
    source.seek(None)
    assert [m for _, m in source] == ["a", "b", "c"]
    source.seek(2)
    assert list(source) == [(3, "c")]
    for bad in (-1, 4, "1", True):
        with pytest.raises(ValueError, match="position"):
            source.seek(bad)


def test_jsonlines_source(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"id": 1, "x": {"a": 1}}\n\n{not json}\n{"id": 1, "y": "\xc3\xa9t\xc3\xa9"}\n{"id": 2, "x"')
    source = JSONLinesSource(path)
    read = list(source)
    assert [type(m) for _, m in read] == [dict, Malformed, dict]
    assert read[2][1] == {"id": 1, "y": "été"}
    # The torn last line is not consumed: the position stops before it.
    assert read[-1][0] == len(path.read_bytes()) - len(b'{"id": 2, "x"')
    with open(path, "ab") as handle:  # the writer finishes the line
        handle.write(b': {"a": 2}}\n{"id": 2, "y": "x"}')  # and writes a last line without newline
    more = list(source)
    assert [m for _, m in more] == [{"id": 2, "x": {"a": 2}}, {"id": 2, "y": "x"}]
    assert more[-1][0] == path.stat().st_size
    source.seek(read[0][0])
    assert [m for _, m in source][-1] == {"id": 2, "y": "x"}


# ------------------------------------------------------------------------------------------------
# Pending table


def test_pending_table_bounds():
    table = PendingTable(capacity=3, ttl=10.0)
    for i in range(5):
        table.put(i, {"i": i}, time=float(i))
    assert len(table) == 3 and table.evicted == 2 and 0 not in table and 4 in table
    table.put(2, {"i": 22}, time=5.0)  # replaced, moved to the newest end
    assert table.replaced == 1 and table.take(2, now=5.0).x == {"i": 22}
    table.expire(now=13.5)  # 3 arrived at 3.0 < 13.5 - 10
    assert table.expired == 1 and list(table._entries) == [4]
    table.put(5, {"i": 5}, time=14.0)
    assert table.take(4, now=14.5) is None and table.expired == 2  # too old to match
    assert table.take(404, now=0.0) is None
    table._check()
    with pytest.raises(ValueError, match="capacity"):
        PendingTable(capacity=0)
    with pytest.raises(ValueError, match="ttl"):
        PendingTable(ttl=0)
    with pytest.raises(ValueError, match="ttl"):
        PendingTable(ttl=float("inf"))


operations = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 9), st.floats(0, 3)),
        st.tuples(st.just("take"), st.integers(0, 9), st.floats(0, 3)),
        st.tuples(st.just("expire"), st.just(0), st.floats(0, 3)),
    ),
    max_size=60,
)


@settings(max_examples=examples(150), deadline=None)
@given(operations, st.integers(1, 5), st.sampled_from([None, 2.0, 5.0]))
def test_pending_table_matches_a_plain_list(ops, capacity, ttl):
    table = PendingTable(capacity, ttl)
    reference: list = []  # (key, time), oldest first
    counts = {"evicted": 0, "expired": 0, "replaced": 0}
    now = 0.0
    for op, key, dt in ops:
        now += dt  # time only moves forward
        if op == "put":
            if any(k == key for k, _ in reference):
                reference = [(k, t) for k, t in reference if k != key]
                counts["replaced"] += 1
            reference.append((key, now))
            table.put(key, {"k": key}, now)
            while len(reference) > capacity:
                reference.pop(0)
                counts["evicted"] += 1
        elif op == "take":
            found = [t for k, t in reference if k == key]
            reference = [(k, t) for k, t in reference if k != key]
            entry = table.take(key, now)
            if found and ttl is not None and found[0] < now - ttl:
                counts["expired"] += 1
                found = []
            assert (entry is None) == (not found)
            if entry is not None:
                assert entry.x == {"k": key} and entry.time == found[0]
        else:
            table.expire(now)
            if ttl is not None:
                kept = [(k, t) for k, t in reference if t >= now - ttl]
                counts["expired"] += len(reference) - len(kept)
                reference = kept
        table._check()
        assert [(k, e.time) for k, e in table._entries.items()] == reference
        assert {"evicted": table.evicted, "expired": table.expired, "replaced": table.replaced} == counts


# ------------------------------------------------------------------------------------------------
# The runner (in process, with the recording model)


def expected_learning(messages: list, capacity: int = 10**9) -> list:
    """What an uninterrupted run must learn: each label whose event waits, in label order."""
    waiting: dict = {}
    learned = []
    for m in messages:
        if "x" in m:
            waiting.pop(m["id"], None)
            waiting[m["id"]] = m["x"]
            while len(waiting) > capacity:
                waiting.pop(next(iter(waiting)))
        elif m["id"] in waiting:
            learned.append((waiting.pop(m["id"])["i"], m["y"]))
    return learned


def test_runner_learns_delayed_labels_once():
    messages = delayed_stream(300, delay=20, rng=np.random.default_rng(1))
    predictions = []
    runner = Trusted(Recorder(), None, on_prediction=lambda key, proba: predictions.append(key))
    runner.run(ListSource(messages))
    assert runner.model.learned == expected_learning(messages)
    stats = runner.stats
    assert stats["events"] == 300 and predictions == list(range(300))
    assert stats["learned"] == len(runner.model.learned) == stats["labels"] - stats["unmatched"]
    assert stats["pending"] == 300 - stats["learned"] and stats["rejected"] == 0
    assert stats["checkpoints"] == 0 and runner.position == len(messages)
    runner._check()


def test_runner_counts_unmatched_evicted_and_correct():
    messages = [{"id": i, "x": {"i": i}} for i in range(5)]
    messages += [{"id": 0, "y": "a"}, {"id": 4, "y": "a"}, {"id": 4, "y": "a"}, {"id": 99, "y": "b"}, {"id": 3, "y": "a"}]
    runner = Trusted(Recorder(), None, capacity=2)
    runner.run(ListSource(messages))
    assert runner.model.learned == [(4, "a"), (3, "a")]
    stats = runner.stats
    assert stats["evicted"] == 3 and stats["unmatched"] == 3 and stats["learned"] == 2
    # Event 3 was predicted before any learning (no prediction); event 4 likewise.
    assert stats["correct"] == 0
    runner = Trusted(Recorder(), None)
    runner.run(ListSource([{"id": "a", "x": {"i": 0}, "y": 1}, {"id": "b", "x": {"i": 1}}, {"id": "b", "y": 1}]))
    assert runner.model.learned == [(0, 1), (1, 1)] and runner.stats["correct"] == 1


def test_runner_time_to_live_with_clock_and_event_time():
    now = [100.0]
    runner = Trusted(Recorder(), None, ttl=10.0, clock=lambda: now[0])
    runner.step(1, {"id": 1, "x": {"i": 1}})
    now[0] = 105.0
    runner.step(2, {"id": 2, "x": {"i": 2}})
    now[0] = 112.0  # event 1 is now 12 s old
    runner.step(3, {"id": 1, "y": True})
    runner.step(4, {"id": 2, "y": True})
    assert runner.model.learned == [(2, True)] and runner.stats["expired"] == 1
    # A message's own "time" wins over the clock.
    runner.step(5, {"id": 3, "x": {"i": 3}, "time": 0.0})
    runner.step(6, {"id": 3, "y": False, "time": 9.0})
    assert runner.model.learned[-1] == (3, False)


@pytest.mark.parametrize(
    "message, reason",
    [
        ("text", "object"),
        ({"x": {"i": 0}}, "'id'"),
        ({"id": True, "x": {"i": 0}}, "'id'"),
        ({"id": 1.5, "x": {"i": 0}}, "'id'"),
        ({"id": 1}, "neither"),
        ({"id": 1, "x": [1, 2]}, "'x'"),
        ({"id": 1, "y": None}, "null"),
        ({"id": 1, "x": {"i": 0}, "time": "soon"}, "time"),
        ({"id": 1, "x": {"i": 0, "bad": "?"}}, "feature 'bad'"),
        (Malformed("invalid JSON line: oops"), "oops"),
    ],
)
def test_bad_messages_are_counted_and_skipped(message, reason):
    runner = Trusted(Recorder(), None)
    runner.run(ListSource([{"id": 0, "x": {"i": 0}}, message, {"id": 0, "y": "ok"}]))
    stats = runner.stats
    assert stats["rejected"] == 1 and reason in stats["last_error"]
    assert runner.model.learned == [(0, "ok")] and stats["messages"] == 3
    runner._check()
    strict = Trusted(Recorder(), None, errors="raise")
    with pytest.raises(ValueError, match="position 2"):
        strict.run(ListSource([{"id": 0, "x": {"i": 0}}, message]))


def test_rejected_label_keeps_nothing_half_learned():
    runner = Trusted(Recorder(), None)
    runner.run(ListSource([{"id": 0, "x": {"i": 0}}, {"id": 0, "y": [1]}, {"id": 0, "y": "late"}]))
    # The rejected label consumed the pending event; the later label finds nothing.
    assert runner.model.learned == [] and runner.stats["rejected"] == 1 and runner.stats["unmatched"] == 1


def test_parameters_are_validated():
    for kwargs, name in [
        ({"capacity": 0}, "capacity"),
        ({"ttl": -1}, "ttl"),
        ({"checkpoint_every": 0}, "checkpoint_every"),
        ({"checkpoint_interval": 0}, "checkpoint_interval"),
        ({"errors": "ignore"}, "errors"),
    ]:
        with pytest.raises(ValueError, match=name):
            Trusted(Recorder(), None, **kwargs)
    with pytest.raises(ValueError, match="max_messages"):
        Trusted(Recorder(), None).run(ListSource([]), max_messages=-1)


# ------------------------------------------------------------------------------------------------
# Checkpoints and restarts (in process)


class CommittingSource(ListSource):
    def __init__(self, messages):
        super().__init__(messages)
        self.commits: list = []

    def commit(self, position):
        self.commits.append(position)


def test_checkpoint_is_one_file_with_everything(tmp_path):
    path = tmp_path / "ckpt.json"
    messages = [{"id": i, "x": {"i": i}} for i in range(5)] + [{"id": 1, "y": "a"}]
    source = CommittingSource(messages)
    runner = Trusted(Recorder(), path, checkpoint_every=4)
    runner.run(source)
    assert source.commits == [4, 6] and os.listdir(tmp_path) == ["ckpt.json"]
    checkpoint = saved(path)
    assert checkpoint.position == 6
    assert checkpoint.model.learned == [(1, "a")]
    assert list(checkpoint.pending._entries) == [0, 2, 3, 4]
    assert checkpoint.counts["learned"] == 1 and checkpoint.counts["checkpoints"] == 2
    # A label arriving after a restart still finds its features.
    restarted = Trusted(Recorder(), path)
    assert restarted.stats["restarts"] == 1 and restarted.stats["pending"] == 4
    restarted.run(ListSource(messages + [{"id": 3, "y": "b"}]))
    assert restarted.model.learned == [(1, "a"), (3, "b")]


def test_fresh_start_when_asked(tmp_path):
    path = tmp_path / "ckpt.json"
    Trusted(Recorder(), path).run(ListSource([{"id": 0, "x": {"i": 0}}, {"id": 0, "y": 1}]))
    fresh = Trusted(Recorder(), path, resume=False)
    assert fresh.model.learned == [] and fresh.position is None


def test_restored_bounds_follow_the_new_parameters(tmp_path):
    path = tmp_path / "ckpt.json"
    Trusted(Recorder(), path, capacity=10).run(ListSource([{"id": i, "x": {"i": i}} for i in range(6)]))
    runner = Trusted(Recorder(), path, capacity=4)
    assert runner.pending.capacity == 4 and list(runner.pending._entries) == [2, 3, 4, 5]
    assert runner.stats["evicted"] == 2


def test_not_a_checkpoint(tmp_path):
    from wnb_stream import WeightedNaiveBayes

    path = tmp_path / "model.json"
    io.save(WeightedNaiveBayes(seed=0), path)
    with pytest.raises(io.ModelFileError, match="not a stream checkpoint .*WeightedNaiveBayes"):
        Trusted(Recorder(), path)


def _wnb_runner(path, **kwargs):
    from wnb_stream import WeightedNaiveBayes

    return StreamRunner(WeightedNaiveBayes(seed=3), path, **kwargs)


def test_a_checkpoint_named_gz_is_gzip_and_round_trips(tmp_path):
    messages = labelled_stream(120, seed=2)
    for name in ("ckpt.json.gz", "ckpt.json"):
        path = tmp_path / name
        first = _wnb_runner(path, checkpoint_every=25)
        first.run(ListSource(messages), max_messages=100, checkpoint_at_end=False)
        data = path.read_bytes()
        assert (data[:2] == b"\x1f\x8b") == name.endswith(".gz")  # gzip exactly when the name says so
        if name.endswith(".gz"):
            assert gzip.decompress(data) == checkpoints.dumps(saved(path), tmp_path / "plain.json")
        restored = _wnb_runner(path, checkpoint_every=25)
        assert restored.position == 100 and restored.stats["pending"] == saved(path).pending.__len__() > 0
        assert io.dumps(restored.model) == io.dumps(saved(path).model)
        restored.run(ListSource(messages))
        whole = _wnb_runner(None)
        whole.run(ListSource(messages))
        assert_same_model(restored.model, whole.model, probe_rows(4))


def test_the_checkpoint_holds_the_model_as_the_record_model_save_writes(tmp_path):
    path = tmp_path / "ckpt.json"
    runner = _wnb_runner(path, checkpoint_every=1000)
    runner.run(ListSource(labelled_stream(150, seed=3)))
    payload = io.unpack(path.read_bytes())
    assert payload["type"] == "StreamCheckpoint" and payload["state"]["pickle"] is None
    runner.model.save(tmp_path / "model.wnb")
    saved_model = gzip.decompress((tmp_path / "model.wnb").read_bytes())
    record = saved_model[saved_model.index(b',"payload":') + len(b',"payload":') : -1]  # model.save's payload, as stored
    assert b'"model":' + record + b',"pending":' in path.read_bytes()  # the same bytes, inside the checkpoint
    assert io.unpack(saved_model) == payload["state"]["model"]


def test_a_damaged_checkpoint_is_refused_not_loaded(tmp_path):
    path = tmp_path / "ckpt.json"
    runner = _wnb_runner(path, checkpoint_every=1000)
    runner.run(ListSource(labelled_stream(60, seed=4)))
    text = path.read_bytes()
    at = text.index(b'"position":') + len(b'"position":')
    damaged = text[:at] + bytes([ord("1") if text[at] != ord("1") else ord("2")]) + text[at + 1 :]  # one digit changed
    path.write_bytes(damaged)
    with pytest.raises(io.ModelFileError, match="checksum mismatch"):
        _wnb_runner(path)


def test_a_forged_checkpoint_is_refused_within_the_load_limits(tmp_path):
    # the limits of a saved model (docs/saved-model.md#limits) bound a checkpoint's load too
    path = tmp_path / "ckpt.json.gz"
    path.write_bytes(gzip.compress(b'{"format":"wnb_stream.model",' + b" " * (16 << 20)))  # inflates 1,000 times
    with pytest.raises(io.ModelFileError, match="MAX_RATIO"):
        _wnb_runner(path)
    path.write_bytes(gzip.compress(b"{}")[:-3])  # truncated
    with pytest.raises(io.ModelFileError, match="truncated or corrupt gzip"):
        _wnb_runner(path)


def test_a_checkpoint_of_the_old_object_graph_format_is_refused_saying_what_to_do(tmp_path):
    old = pathlib.Path(__file__).parent / "io" / "fixtures" / "v1" / "stream-checkpoint.json"  # written by wnb_stream 0.1
    path = tmp_path / "ckpt.json"
    path.write_bytes(old.read_bytes())
    with pytest.raises(io.ModelFileError, match="object-graph format .* resume=False"):
        _wnb_runner(path)
    fresh = _wnb_runner(path, resume=False)  # what the message says to do: start afresh
    assert fresh.position is None
    fresh.run(ListSource(labelled_stream(30, seed=5)))
    assert _wnb_runner(path).position == fresh.position


def test_stale_temporary_files_are_removed(tmp_path):
    path = tmp_path / "ckpt.json"
    (tmp_path / ".ckpt.json.abc123.tmp").write_text("half a checkpoint")
    (tmp_path / ".other.json.abc123.tmp").write_text("not ours")
    Trusted(Recorder(), path)
    assert sorted(os.listdir(tmp_path)) == [".other.json.abc123.tmp"]


def test_checkpoint_interval(tmp_path, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(runner_module.time, "monotonic", lambda: clock[0])
    path = tmp_path / "ckpt.json"
    runner = Trusted(Recorder(), path, checkpoint_every=None, checkpoint_interval=5.0)
    source = CommittingSource([{"id": i, "x": {"i": i}} for i in range(10)])
    source.seek(None)
    for position, message in source:
        clock[0] += 1.0
        runner.step(position, message)
        runner.maybe_checkpoint(source)
    assert source.commits == [5, 10]


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 120), min_size=1, max_size=4), st.integers(1, 30))
def test_crashes_anywhere_learn_every_label_exactly_once(tmp_path_factory, seed, crash_after, every):
    """Runs killed after k messages (no final checkpoint), restarted, end with the same learning."""
    messages = delayed_stream(80, delay=15, rng=np.random.default_rng(seed))
    path = tmp_path_factory.mktemp("crash") / "ckpt.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", lambda fd: None)  # durability is not under test here
        for k in crash_after:
            runner = Trusted(Recorder(), path, checkpoint_every=every)
            runner.run(ListSource(messages), max_messages=k, checkpoint_at_end=False)
        runner = Trusted(Recorder(), path, checkpoint_every=every)
        runner.run(ListSource(messages))
    reference = Trusted(Recorder(), None)
    reference.run(ListSource(messages))
    assert runner.model.learned == expected_learning(messages) == reference.model.learned
    stats, expected = runner.stats, reference.stats
    for key in ("messages", "events", "labels", "learned", "unmatched", "pending", "correct"):
        assert stats[key] == expected[key], key


def test_crash_during_a_checkpoint_save(tmp_path, monkeypatch):
    messages = delayed_stream(60, delay=10, rng=np.random.default_rng(3))
    path = tmp_path / "ckpt.json"
    saves = [0]
    real_replace = os.replace

    def dying_replace(src, dst):
        saves[0] += 1
        if saves[0] == 3:
            raise OSError("power cut")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", dying_replace)
    with pytest.raises(OSError, match="power cut"):
        Trusted(Recorder(), path, checkpoint_every=7).run(ListSource(messages))
    monkeypatch.undo()
    assert saved(path).position == 14  # the second checkpoint is intact
    runner = Trusted(Recorder(), path, checkpoint_every=7)
    runner.run(ListSource(messages))
    assert runner.model.learned == expected_learning(messages)


# ------------------------------------------------------------------------------------------------
# SIGKILL of a real consumer process, with our classifier and our checkpoints


CONSUMER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    import pickle
    from wnb_stream import WeightedNaiveBayes
    from wnb_stream.stream import JSONLinesSource, StreamRunner

    mode, data, checkpoint, out, limit = sys.argv[1:]
    runner = StreamRunner(WeightedNaiveBayes(seed=7), checkpoint, checkpoint_every=53, capacity=100_000)
    source = JSONLinesSource(data)
    print("started", runner.stats["restarts"], runner.position, flush=True)
    if mode == "stop":  # process `limit` messages, then wait to be killed with unsaved work in memory
        runner.run(source, max_messages=int(limit), checkpoint_at_end=False)
        print("ready", flush=True)
        time.sleep(120)
    elif mode == "slow":  # keep busy until killed at an arbitrary moment
        runner.on_prediction = lambda key, proba: time.sleep(0.002)
        runner.run(source)
    else:
        runner.run(source)
        with open(out, "wb") as handle:
            pickle.dump({{"model": runner.model, "stats": runner.stats}}, handle)
        print("done", flush=True)
    """
)


def labelled_stream(n: int, seed: int) -> list:
    """Events with numeric and categorical features; labels arrive 0..25 messages later, 10% never."""
    rng = np.random.default_rng(seed)
    messages, due = [], {}
    for i in range(n):
        y = bool(rng.random() < 0.4)
        x = {
            "num": float(rng.normal(1.0 if y else 0.0)),
            "noise": float(rng.normal()),
            "colour": str(rng.choice(["red", "green", "blue"] if y else ["red", "blue", "blue"])),
        }
        if i % 17 == 0:
            x["num"] = None  # missing values are normal input
        messages.append({"id": f"e{i}", "x": x})
        if rng.random() < 0.9:
            due.setdefault(i + int(rng.integers(0, 26)), []).append((f"e{i}", y))
        for key, label in due.pop(i, []):
            messages.append({"id": key, "y": label})
    return messages


def probe_rows(seed: int, n: int = 40) -> list:
    rng = np.random.default_rng(seed)
    return [
        {"num": float(rng.normal(0.5)), "noise": float(rng.normal()), "colour": str(rng.choice(["red", "green", "blue", "new"]))}
        for _ in range(n)
    ]


def assert_same_model(model, reference, rows):
    assert model.weights == reference.weights
    for x in rows:
        assert model.predict_proba_one(x) == reference.predict_proba_one(x)


def test_sigkill_mid_stream_then_restart_gives_the_uninterrupted_model(tmp_path):
    from wnb_stream import WeightedNaiveBayes

    messages = labelled_stream(700, seed=11)
    data = tmp_path / "stream.jsonl"
    data.write_text("".join(json.dumps(m) + "\n" for m in messages))
    script = tmp_path / "consumer.py"
    script.write_text(CONSUMER.format(repo=REPO))
    checkpoint, out = tmp_path / "ckpt.json", tmp_path / "final.json"

    consumers = []
    try:
        # 1. Killed with 300 messages read, 300 - 265 = 35 of them after the last checkpoint.
        consumers.append(Consumer(script, "stop", data, checkpoint, out, limit=300))
        consumers[-1].wait_for("ready")
        consumers[-1].kill()
        assert saved(checkpoint).position < data.stat().st_size
        # 2. Killed at an arbitrary moment (possibly during a save) while busy.
        consumers.append(Consumer(script, "slow", data, checkpoint, out))
        consumers[-1].wait_for("started 1")
        time.sleep(0.7)
        consumers[-1].kill()
        # 3. Restarted, runs to the end.
        consumers.append(Consumer(script, "finish", data, checkpoint, out))
        consumers[-1].wait_for("done")
        assert consumers[-1].process.wait(timeout=60) == 0
    finally:
        for consumer in consumers:
            consumer.kill()

    final = pickle.loads(out.read_bytes())
    reference = StreamRunner(WeightedNaiveBayes(seed=7), None)
    reference.run(ListSource(messages))
    assert_same_model(final["model"], reference.model, probe_rows(5))
    stats, expected = final["stats"], reference.stats
    assert stats["restarts"] >= 1
    for key in ("messages", "events", "labels", "learned", "unmatched", "pending", "correct", "rejected"):
        assert stats[key] == expected[key], key
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []


# ------------------------------------------------------------------------------------------------
# Checkpoints of any River model


def _events(n):
    messages = []
    for i in range(n):
        messages.append({"id": i, "x": {"u": i % 7 * 1.0, "v": (i * 3) % 5 * 1.0}})
        if i >= 2:
            messages.append({"id": i - 2, "y": (i - 2) % 7 > 3})
    return messages


def test_a_pipeline_is_refused_when_the_runner_is_built_unless_the_checkpoint_is_trusted(tmp_path):
    from river import preprocessing

    from wnb_stream import WeightedNaiveBayes

    path = tmp_path / "ck.json"
    with pytest.raises(ValueError, match="trusted_checkpoint"):
        StreamRunner(preprocessing.StandardScaler() | WeightedNaiveBayes(seed=1), path)
    assert not path.exists()


def test_a_pipeline_checkpointed_with_trust_resumes_as_if_never_stopped(tmp_path):
    from river import preprocessing, tree

    from wnb_stream import WeightedNaiveBayes

    for make in (lambda: preprocessing.StandardScaler() | WeightedNaiveBayes(seed=1), lambda: tree.HoeffdingTreeClassifier()):
        messages = _events(300)
        whole = StreamRunner(make(), None)
        whole.run(ListSource(messages))
        path = tmp_path / f"ck{id(make)}.json"
        first = StreamRunner(make(), path, trusted_checkpoint=True, checkpoint_every=50)
        first.run(ListSource(messages), max_messages=333)  # stops mid-stream, as a crash would
        with pytest.raises(ValueError, match="pickled model"):
            StreamRunner(WeightedNaiveBayes(seed=1), path)  # a pickle is never loaded without trust
        second = StreamRunner(make(), path, trusted_checkpoint=True, checkpoint_every=50)
        second.run(ListSource(messages))
        x = {"u": 3.0, "v": 1.0}
        assert second.model.predict_proba_one(x) == whole.model.predict_proba_one(x)
        assert second.stats["learned"] == whole.stats["learned"]
