"""Poison messages: whatever one message makes the source, the parser or the model raise, the
runner dead-letters it, moves past it (the checkpoint too) and goes on; nothing is lost or learned
twice across crashes and restarts."""

from __future__ import annotations

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
from stream_cases import Trusted, saved

from wnb_stream import WeightedNaiveBayes, io
from wnb_stream.stream import DeadLetter, DeadLetters, JSONLinesSource, Limits, ListSource, Malformed, StreamRunner
from wnb_stream.stream import runner as runner_module
from wnb_stream.summaries.policy import excerpt

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = types.ModuleType("wnb_stream._stream_poison_fixtures")


class Touchy:
    """A recording model that reads its features as numbers and fails on some of them."""

    def __init__(self):
        self.learned: list = []

    def _read(self, x):
        for name, value in x.items():
            if name == "boom":
                raise RuntimeError("the model broke on this one")
            if name == "zero":
                raise ZeroDivisionError("division by zero")
            if name == "key":
                raise KeyError(value)
            if isinstance(value, int) and not isinstance(value, bool):
                float(value)  # OverflowError for an integer of 400 digits
            hash(value)  # TypeError for a list

    def predict_proba_one(self, x):
        self._read(x)
        return {}

    def learn_one(self, x, y):
        self._read(x)
        self.learned.append((x["i"], y))


class Thing:  # a value a checkpoint cannot save (not a plain value)
    pass


class Interrupting(Touchy):
    """Interrupted (KeyboardInterrupt) once, half way through its ``at``-th example."""

    remaining = 0  # (a class attribute: a restored instance is not interrupted again)

    def __init__(self, at: int):
        super().__init__()
        self.at = at

    def learn_one(self, x, y):
        super().learn_one(x, y)
        if len(self.learned) == self.at and Interrupting.remaining:
            Interrupting.remaining -= 1
            raise KeyboardInterrupt


for cls in (Touchy, Interrupting):
    cls.__module__ = FIXTURES.__name__
    setattr(FIXTURES, cls.__name__, cls)


@pytest.fixture(autouse=True, scope="module")
def fixtures_module():
    sys.modules[FIXTURES.__name__] = FIXTURES
    yield
    del sys.modules[FIXTURES.__name__]


def nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


BIG = 10**400
#: Lines that a JSON source cannot even decode.
UNDECODABLE = [
    '{"id": 900, "x": {"i": 1, "a": ' + "7" * 5000 + "}}",  # an integer of 5,000 digits
    '{"id": 901, "x": {"i": 1, "a": ' + "[" * 100_000 + "]" * 100_000 + "}}",  # nested 10^5 deep
    "[" * 100_000,  # unfinished and deep
    '{"id": 902, "x": {"i": 1}',  # cut short
]
#: Messages that decode but that the runner or the model cannot use.
POISON = [
    {"id": 903, "x": {"i": 1, "a": BIG}},  # OverflowError in the model
    {"id": 904, "x": {"i": 1, "a": 1.0}, "time": BIG},  # a time of 400 digits
    {"id": 905, "x": {"i": 1, "a": -BIG}, "y": 1},
    {"id": 906, "x": {"i": 1, "boom": 1.0}},  # any exception of the model
    {"id": 907, "x": {"i": 1, "zero": 1.0}},
    {"id": 908, "x": {"i": 1, "key": "k"}},
    {"id": 909, "x": {"i": 1, "a": nested(100_000)}},
    {"id": 10**5000, "x": {"i": 1}},  # an id no checkpoint could write
    {"id": 910, "x": {"i": 1}, "time": float("nan")},
    [1, 2],
]


def clean_stream(n: int, seed: int) -> list:
    """Events 0..n-1, each label 0..8 messages later (90 %)."""
    rng = np.random.default_rng(seed)
    messages, due = [], {}
    for i in range(n):
        messages.append({"id": i, "x": {"i": i, "a": float(rng.normal()), "c": f"v{int(rng.integers(0, 3))}"}})
        if rng.random() < 0.9:
            due.setdefault(i + int(rng.integers(0, 9)), []).append(i)
        for j in due.pop(i, []):
            messages.append({"id": j, "y": j % 3})
    return messages


def poisoned(messages: list, poison: list, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = list(messages)
    for item in poison:
        out.insert(int(rng.integers(0, len(out) + 1)), item)
    return out


def expected_learning(messages: list) -> list:
    waiting, learned = {}, []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("id"), int) or m["id"] >= 900:
            continue
        if "x" in m:
            waiting[m["id"]] = m["x"]
        elif m["id"] in waiting:
            learned.append((waiting.pop(m["id"])["i"], m["y"]))
    return learned


def jsonl(path, messages: list, raw: list = ()) -> None:
    """Write ``messages`` (and the raw lines ``raw`` at seeded places) one per line."""
    lines = [json.dumps(m) for m in messages]
    rng = np.random.default_rng(5)
    for line in raw:
        lines.insert(int(rng.integers(0, len(lines) + 1)), line)
    path.write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------------


def test_the_json_lines_source_never_raises_for_a_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(UNDECODABLE + ['{"id": 1, "y": 2}']) + "\n")
    read = list(JSONLinesSource(path))
    assert [type(m) for _, m in read] == [Malformed] * 4 + [dict]
    assert "Exceeds the limit" in read[0][1].reason and "RecursionError" in read[1][1].reason
    assert all(len(m.raw) <= 1000 for _, m in read[:4])
    assert read[-1][0] == path.stat().st_size  # positions move past every line


POISON_NAMES = ["int-400-digits", "time-400-digits", "int-400-digits-with-label", "runtime-error", "zero-division",
                "key-error", "nested-1e5", "id-5000-digits", "time-nan", "not-an-object"]


@pytest.mark.parametrize("message", POISON, ids=POISON_NAMES)
def test_one_poison_message_is_dead_lettered_and_the_runner_goes_on(message):
    runner = Trusted(Touchy(), None)
    runner.run(ListSource([{"id": 0, "x": {"i": 0}}, message, {"id": 0, "y": "ok"}]))
    assert runner.model.learned == [(0, "ok")]
    stats = runner.stats
    assert stats["rejected"] == 1 == stats["dead_letters"] and stats["messages"] == 3
    (letter,) = runner.dead_letters
    assert letter.position == 2 and len(letter.message) <= 1000 and letter.error
    runner._check()
    strict = Trusted(Touchy(), None, errors="raise")
    with pytest.raises(ValueError, match="position 2"):
        strict.run(ListSource([{"id": 0, "x": {"i": 0}}, message]))
    assert strict.position == 2 and len(strict.dead_letters) == 1  # counted as processed


def test_poison_on_a_file_source_with_crashes_learns_every_label_once(tmp_path):
    messages = clean_stream(150, seed=1)
    path = tmp_path / "s.jsonl"
    poison = [m for i, m in enumerate(POISON) if i not in (6, 7)]  # (JSON cannot write these two)
    jsonl(path, poisoned(messages, poison, seed=2), UNDECODABLE)
    checkpoint = tmp_path / "ckpt.json"
    rng = np.random.default_rng(3)
    for k in rng.integers(5, 60, size=6):  # killed after k messages each time, no final checkpoint
        Trusted(Touchy(), checkpoint, checkpoint_every=int(rng.integers(1, 15))).run(
            JSONLinesSource(path), max_messages=int(k), checkpoint_at_end=False
        )
    runner = Trusted(Touchy(), checkpoint, checkpoint_every=7)
    runner.run(JSONLinesSource(path))
    assert runner.model.learned == expected_learning(messages)
    n_poison = len(poison) + len(UNDECODABLE)
    assert runner.stats["rejected"] == runner.stats["dead_letters"] == n_poison
    assert len({letter.position for letter in runner.dead_letters}) == n_poison  # each once, across restarts
    last = saved(checkpoint)
    assert last.dead_letters.total == n_poison and last.position == path.stat().st_size


def test_poison_against_the_classifier_changes_nothing(tmp_path):
    messages = clean_stream(300, seed=4)
    for m in messages:
        if "x" in m:
            m["x"].pop("i")
    poison = [m for m in POISON if isinstance(m, dict) and "x" in m and not {"boom", "zero", "key"} & set(m["x"])]
    poison = [dict(m, x={k: v for k, v in m["x"].items() if k != "i"}) for m in poison]
    poison += [
        {"id": 911, "x": {"a": 0.5}, "y": float("nan")},  # a label no saved model can hold
        {"id": 912, "x": {float("nan"): 1.0}},  # a feature name likewise
        {"id": 913, "x": {"c": frozenset({1})}},  # a value likewise
        {"id": 914, "x": {"c": (1, [2])}},
        {"id": 915, "x": {"a": 1.0}, "y": [1]},
    ]
    path = tmp_path / "ckpt.json"
    runner = StreamRunner(WeightedNaiveBayes(seed=1), path, checkpoint_every=50)
    runner.run(ListSource(poisoned(messages, poison, seed=5)), max_messages=200, checkpoint_at_end=False)
    runner = StreamRunner(WeightedNaiveBayes(seed=1), path, checkpoint_every=50)
    runner.run(ListSource(poisoned(messages, poison, seed=5)))
    reference = StreamRunner(WeightedNaiveBayes(seed=1), None)
    reference.run(ListSource(messages))
    assert runner.model.weights == reference.model.weights
    for x in ({"a": 0.3, "c": "v1"}, {"a": -1.0}, {"c": "v2"}):
        assert runner.model.predict_proba_one(x) == reference.model.predict_proba_one(x)
    stats = runner.stats
    assert stats["rejected"] == len(poison) and stats["learned"] == reference.stats["learned"]
    assert StreamRunner(WeightedNaiveBayes(seed=1), path).model.weights == reference.model.weights


def test_the_dead_letter_list_is_bounded_and_saved(tmp_path):
    path = tmp_path / "ckpt.json"
    messages = [{"id": i, "x": {"i": i, "boom": 1}} for i in range(7)] + [{"id": 1, "y": 0}]
    runner = Trusted(Touchy(), path, dead_letter_capacity=3)
    runner.run(ListSource(messages))
    assert [letter.position for letter in runner.dead_letters] == [5, 6, 7]
    assert runner.stats["dead_letters"] == 7 and runner.stats["dead_letters_dropped"] == 4
    restored = Trusted(Touchy(), path, dead_letter_capacity=2)
    assert [letter.id for letter in restored.dead_letters] == [5, 6] and restored.stats["dead_letters_dropped"] == 5
    assert [letter.id for letter in restored.dead_letters.clear()] == [5, 6]
    assert len(restored.dead_letters) == 0 and restored.stats["dead_letters"] == 7
    with pytest.raises(ValueError, match="dead_letter_capacity"):
        Trusted(Touchy(), None, dead_letter_capacity=-1)


def test_a_checkpoint_of_the_object_graph_format_is_refused_with_what_to_do(tmp_path):
    # (written by wnb_stream 0.1's StreamRunner: 23 messages, one dead-lettered, two events pending)
    path = tmp_path / "ckpt.json"
    path.write_bytes((pathlib.Path(__file__).parent / "io" / "fixtures" / "v1" / "stream-checkpoint.json").read_bytes())
    with pytest.raises(io.ModelFileError, match="cannot read or migrate .* resume=False"):
        StreamRunner(WeightedNaiveBayes(seed=1), path)
    assert StreamRunner(WeightedNaiveBayes(seed=1), path, resume=False).position is None


def test_a_waiting_event_a_checkpoint_cannot_save_is_dead_lettered(tmp_path):
    path = tmp_path / "ckpt.json"
    messages = [{"id": 0, "x": {"i": 0}}, {"id": 1, "x": {"i": 1, "thing": Thing()}}, {"id": 0, "y": 1}, {"id": 1, "y": 1}]
    runner = Trusted(Touchy(), path, checkpoint_every=2)
    runner.run(ListSource(messages))
    assert runner.stats["checkpoints"] == 2 and [letter.id for letter in runner.dead_letters] == [1]
    assert runner.dead_letters._letters[0].position is None and "cannot be saved" in runner.dead_letters._letters[0].error
    assert runner.model.learned == [(0, 1)] and runner.stats["unmatched"] == 1
    assert saved(path).position == 4 and list(saved(path).pending._entries) == []


def test_an_exception_of_the_callback_propagates_and_the_message_is_read_again(tmp_path):
    messages = clean_stream(40, seed=6)
    failures = [3]

    def sink(key, proba):
        if key == 17 and failures[0]:
            failures[0] -= 1
            raise ConnectionError("the output sink is down")

    runner = Trusted(Touchy(), tmp_path / "ckpt.json", checkpoint_every=5, on_prediction=sink)
    source = ListSource(messages)
    for _ in range(3):
        with pytest.raises(ConnectionError):
            runner.run(source)
        assert messages[runner.position]["id"] == 17 and "x" in messages[runner.position]  # not processed
    runner.run(source)
    assert runner.model.learned == expected_learning(messages) and runner.stats["rejected"] == 0
    runner._check()
    assert runner.stats["messages"] == len(messages)


def test_an_interrupted_model_call_is_not_saved_and_run_restores_the_checkpoint(tmp_path):
    path = tmp_path / "ckpt.json"
    messages = clean_stream(60, seed=7)
    Interrupting.remaining = 1
    runner = Trusted(Interrupting(at=20), path, checkpoint_every=10)
    with pytest.raises(KeyboardInterrupt):
        runner.run(ListSource(messages))
    assert len(runner.model.learned) == 20  # half done: learned, then interrupted
    with pytest.raises(RuntimeError, match="interrupted"):
        runner.checkpoint()
    assert len(saved(path).model.learned) < 20
    runner.run(ListSource(messages))  # back to the checkpoint first, as a restart
    assert runner.stats["restarts"] == 1 and runner.model.learned == expected_learning(messages)
    Interrupting.remaining = 1
    fresh = Trusted(Interrupting(at=5), None)
    with pytest.raises(KeyboardInterrupt):
        fresh.run(ListSource(messages))
    with pytest.raises(RuntimeError, match="no checkpoint"):
        fresh.run(ListSource(messages))


def test_dead_letter_excerpts_never_fail():
    assert excerpt({"a": 10**5000}).startswith("<a dict")
    assert len(excerpt(nested(100_000))) < 100
    assert len(excerpt("x" * 10_000)) == 1000
    letters = DeadLetters(2)
    letters.add(DeadLetter(1, None, "E", "m"))
    assert list(io.loads(io.dumps(letters))) == [DeadLetter(1, None, "E", "m")]
    assert runner_module._time(1, 1.5) == 1.5 and runner_module._time(1, np.float32(2.0)) == 2.0
    with pytest.raises(ValueError, match="time"):
        runner_module._time(1, BIG)


# ------------------------------------------------------------------------------------------------
# SIGKILL of a real consumer on a file with poison lines


CONSUMER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    import pickle
    from wnb_stream import WeightedNaiveBayes
    from wnb_stream.stream import JSONLinesSource, StreamRunner

    mode, data, checkpoint, out, limit = sys.argv[1:]
    runner = StreamRunner(WeightedNaiveBayes(seed=7), checkpoint, checkpoint_every=37)
    print("started", runner.stats["restarts"], flush=True)
    if mode == "stop":
        runner.run(JSONLinesSource(data), max_messages=int(limit), checkpoint_at_end=False)
        print("ready", flush=True)
        time.sleep(120)
    elif mode == "slow":
        runner.on_prediction = lambda key, proba: time.sleep(0.002)
        runner.run(JSONLinesSource(data))
    else:
        runner.run(JSONLinesSource(data))
        with open(out, "wb") as handle:
            pickle.dump({{"model": runner.model, "stats": runner.stats, "letters": list(runner.dead_letters)}}, handle)
        print("done", flush=True)
    """
)






def test_sigkill_with_poison_lines_then_restart_gives_the_clean_model(tmp_path):
    messages = clean_stream(400, seed=12)
    for m in messages:
        if "x" in m:
            m["x"].pop("i")
    for_the_classifier = [
        m for m in POISON
        if isinstance(m, dict) and "x" in m and m["id"] != 10**5000 and not {"boom", "zero", "key"} & set(m["x"]) and not isinstance(m["x"].get("a"), list)
    ]  # (JSON cannot write the last two; the others are plain features for the classifier)
    poison = [json.dumps(dict(m, x={k: v for k, v in m["x"].items() if k != "i"})) for m in for_the_classifier]
    poison += UNDECODABLE + ['{"id": 911, "x": {"a": 0.5}, "y": NaN}', '{"id": 912, "x": {"c": [1, [2]]}}']
    data = tmp_path / "stream.jsonl"
    lines = [json.dumps(m) for m in messages]
    rng = np.random.default_rng(13)
    for line in poison:
        lines.insert(int(rng.integers(0, len(lines) + 1)), line)
    data.write_text("\n".join(lines) + "\n")
    script = tmp_path / "consumer.py"
    script.write_text(CONSUMER.format(repo=REPO))
    checkpoint, out = tmp_path / "ckpt.json", tmp_path / "final.json"
    consumers = []
    try:
        consumers.append(Consumer(script, "stop", data, checkpoint, out, limit=250))
        consumers[-1].wait_for("ready")
        consumers[-1].kill()
        consumers.append(Consumer(script, "slow", data, checkpoint, out))
        consumers[-1].wait_for("started 1")
        time.sleep(0.5)
        consumers[-1].kill()
        consumers.append(Consumer(script, "finish", data, checkpoint, out))
        consumers[-1].wait_for("done")
        assert consumers[-1].process.wait(timeout=60) == 0
    finally:
        for consumer in consumers:
            consumer.kill()
    final = pickle.loads(out.read_bytes())
    reference = StreamRunner(WeightedNaiveBayes(seed=7), None)
    reference.run(ListSource(messages))
    assert final["model"].weights == reference.model.weights
    for x in ({"a": 0.3, "c": "v1"}, {"a": -1.0}, {"c": "v2"}, {}):
        assert final["model"].predict_proba_one(x) == reference.model.predict_proba_one(x)
    for key in ("events", "labels", "learned", "unmatched", "pending", "correct"):
        assert final["stats"][key] == reference.stats[key], key
    assert final["stats"]["rejected"] == len(poison) == len({letter.position for letter in final["letters"]})


def test_lone_surrogates_go_through_checkpoints_and_a_restart(tmp_path):
    # A lone surrogate is a valid str (and valid JSON, "\ud800"), which the model accepts as a value,
    # a label or a feature name, and the runner as a pending id: every checkpoint must hold it.
    lone = "\ud800"
    messages = [
        {"id": 0, "x": {"c": lone, "a": 0.5}},
        {"id": "waits" + lone, "x": {"c": "v", lone + "name": 1.0}},
        {"id": 0, "y": "a" + lone},
        {"id": 1, "x": {"c": "w" + lone, "a": -0.5}},
        {"id": 1, "y": "b"},
        {"id": "waits" + lone, "y": "b"},
    ]
    path = tmp_path / "ckpt.json"
    first = StreamRunner(WeightedNaiveBayes(seed=1), path, checkpoint_every=1)
    first.run(ListSource(messages), max_messages=3)  # stops with a surrogate id pending
    assert first.stats["checkpoints"] == 3 and first.stats["rejected"] == 0
    restarted = StreamRunner(WeightedNaiveBayes(seed=1), path, checkpoint_every=1)
    assert restarted.position == 3 and restarted.stats["pending"] == 1
    restarted.run(ListSource(messages))
    reference = StreamRunner(WeightedNaiveBayes(seed=1), None)
    reference.run(ListSource(messages))
    assert restarted.stats["learned"] == reference.stats["learned"] == 3
    assert set(restarted.model.classes) == {"a" + lone, "b"}
    for x in ({"c": lone}, {"c": "w" + lone, lone + "name": 1.0}):
        assert restarted.model.predict_proba_one(x) == reference.model.predict_proba_one(x)
    assert StreamRunner(WeightedNaiveBayes(seed=1), path).model.predict_proba_one({"c": lone}) == reference.model.predict_proba_one({"c": lone})


def test_a_200_mb_line_is_dead_lettered_never_learned(tmp_path):
    # one category of 200 MB on one line, between clean messages; written in blocks (never held whole)
    path = tmp_path / "stream.jsonl"
    with open(path, "wb") as handle:
        handle.write(b'{"id": 0, "x": {"a": 0.5, "c": "v1"}, "y": 0}\n{"id": 1, "x": {"a": 0.1, "c": "')
        block = b"w" * (1 << 20)
        for _ in range(200):
            handle.write(block)
        handle.write(b'"}, "y": 1}\n{"id": 2, "x": {"a": -0.5, "c": "v2"}, "y": 1}\n')
    checkpoint = tmp_path / "ckpt.json"
    runner = StreamRunner(WeightedNaiveBayes(seed=1), checkpoint, checkpoint_every=1)
    runner.run(JSONLinesSource(path))
    assert runner.stats["learned"] == 2 and runner.stats["rejected"] == 1
    (letter,) = runner.dead_letters
    assert letter.error.startswith("ValueError: a line of 209715") and "beyond max_line_bytes = 1048576" in letter.error
    assert len(letter.message) <= 1000 and letter.position == path.stat().st_size - len('{"id": 2, "x": {"a": -0.5, "c": "v2"}, "y": 1}\n')
    assert checkpoint.stat().st_size < 100_000  # the model and the letter hold an excerpt only
    reference = WeightedNaiveBayes(seed=1)
    reference.learn_one({"a": 0.5, "c": "v1"}, 0)
    reference.learn_one({"a": -0.5, "c": "v2"}, 1)
    assert runner.model.predict_proba_one({"c": "v1"}) == reference.predict_proba_one({"c": "v1"})


def test_an_unfinished_long_last_line_waits_and_a_small_limit_applies(tmp_path):
    path = tmp_path / "stream.jsonl"
    path.write_bytes(b'{"id": 0, "x": {"a": 1.0}}\n{"id": 1, "x": {"a": 2.0, "c": "' + b"z" * 500)
    source = JSONLinesSource(path, max_line_bytes=100)
    assert [position for position, _ in source] == [27]  # the long line may still be being written
    with open(path, "ab") as handle:
        handle.write(b'"}}\n{"id": 2, "x": {"a": 3.0}}\n')
    read = list(source)
    assert isinstance(read[0][1], Malformed) and "a line of 536 bytes, beyond max_line_bytes = 100" in read[0][1].reason
    assert read[1][1] == {"id": 2, "x": {"a": 3.0}}
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_line_bytes must be an integer >= 1"):
            JSONLinesSource(path, max_line_bytes=bad)


@pytest.mark.parametrize(
    "message, reason",
    [
        ({"id": "k" * 70_000, "x": {"a": 1.0}}, "a message id of 70000 characters, beyond Limits.string = 65536"),
        ({"id": 1, "x": {"c": "v" * 70_000}}, "feature 'c': a string of 70000 characters, beyond Limits.string = 65536"),
        ({"id": 1, "x": {"n" * 2000: 1.0}}, "a feature name of 2000 characters"),
        ({"id": 1, "x": {f"f{i}": 1.0 for i in range(100_001)}}, "'x' has 100001 features, beyond Limits.features = 100000"),
        ({"id": 1, "x": {"a": 1.0}, "y": "y" * 70_000}, "'y' is a string of 70000 characters, beyond Limits.string = 65536"),
    ],
)
def test_limits_on_a_message_dead_letter_it(message, reason):
    runner = StreamRunner(WeightedNaiveBayes(seed=1), None)
    runner.run(ListSource([{"id": 0, "x": {"a": 0.5}, "y": 0}, message]))
    assert runner.stats["rejected"] == 1 and runner.stats["learned"] == 1 and runner.stats["pending"] == 0
    (letter,) = runner.dead_letters
    assert reason in letter.error and len(letter.message) <= 1000


def test_limits_are_configurable_and_checked():
    runner = StreamRunner(WeightedNaiveBayes(seed=1), None, limits=Limits(features=2, string=3, name=4))
    runner.run(ListSource([
        {"id": 0, "x": {"a": 0.5, "c": "abc"}, "y": 0},
        {"id": 1, "x": {"a": 0.5, "b": 1.0, "d": 2.0}, "y": 0},
        {"id": 2, "x": {"c": "abcd"}, "y": 0},
        {"id": 3, "x": {"abcde": 1.0}, "y": 0},
        {"id": "abcd", "x": {"a": 1.0}, "y": 0},
    ]))  # fmt: skip
    assert runner.stats["learned"] == 1 and [letter.position for letter in runner.dead_letters] == [2, 3, 4, 5]
    for field in ("features", "string", "name"):
        with pytest.raises(ValueError, match=f"Limits.{field} must be an integer >= 1"):
            Limits(**{field: 0})
    with pytest.raises(ValueError, match="limits must be None or a Limits"):
        StreamRunner(WeightedNaiveBayes(), None, limits={"string": 3})
