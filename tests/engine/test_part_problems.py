"""One list of problems per engine part: what the tests assert empty is what a load refuses.

Each part of the engine that has a saved record (``Schedule``, ``Slots``, ``Monitor``, …) states
its invariants once, in ``problems()``: a list of ``"field: what is wrong"``. ``Engine._check``
asserts them empty after every operation; ``io.from_record`` raises the first as the
``ModelFileError`` of a file whose rebuilt part breaks one. Here the parts of a model trained on
a seeded stream are damaged by hand (their own state, as a bug would), saved and loaded: the load
refuses each with exactly the first problem the damaged part lists.
"""

from __future__ import annotations

import numpy as np
import pytest

from wnb_stream import WeightedNaiveBayes, io


def _model(seed: int = 0, n: int = 700) -> WeightedNaiveBayes:
    rng = np.random.default_rng(seed)
    model = WeightedNaiveBayes(seed=seed, history_size=300)
    for _ in range(n):
        y = int(rng.integers(0, 3))
        x = {"a": float(rng.normal() + y), "b": f"v{int(rng.integers(0, 4)) + y}", "c": float(rng.normal())}
        model.learn_one(x, y)
    return model


PARTS = {
    "Schedule": lambda engine: engine.schedule,
    "Slots": lambda engine: engine.slots,
    "Monitor": lambda engine: engine.monitor,
    "Classes": lambda engine: engine.classes,
    "Registry": lambda engine: engine.registry,
}


@pytest.fixture(scope="module")
def engine():
    return _model()._engine


@pytest.mark.parametrize("name", sorted(PARTS))
def test_a_sound_part_lists_no_problem_before_and_after_a_round_trip(engine, name):
    part = PARTS[name](engine)
    assert part.problems() == []
    loaded = io.loads(io.dumps(part))
    assert loaded.problems() == []
    assert io.dumps(loaded) == io.dumps(part)


def _schedule_pending(schedule):
    schedule.pending = -1


def _slots_twice(slots):
    slots.variable = np.concatenate([slots.variable, slots.variable[:1]])


def _monitor_errors(monitor):
    monitor.errors = monitor.errors.copy()
    monitor.errors[0] = monitor.rows[0] + 1.0


def _monitor_buckets(monitor):
    monitor.rows = np.ones(300)
    monitor.errors = np.zeros(300)


def _classes_fraction(classes):
    classes.seen = classes.seen + np.eye(len(classes.seen))[0] * 0.5


def _classes_unseen(classes):
    classes.seen = classes.seen.copy()
    classes.seen[0] = 0.0


def _registry_names(registry):
    registry.variables[1].name = registry.variables[0].name


DAMAGES = {
    "Schedule: negative pending rows": ("Schedule", _schedule_pending, "pending: must be >= 0"),
    "Slots: a variable with two slots": ("Slots", _slots_twice, "variable: must be distinct variable indices below n_variables"),
    "Monitor: more errors than rows": ("Monitor", _monitor_errors, "errors: a bucket cannot hold more errors than rows"),
    "Classes: a fraction of an example": ("Classes", _classes_fraction, "seen: examples per class are whole numbers"),
    "Classes: weight without an example": ("Classes", _classes_unseen, "counts: a class holds weight without an example"),
    "Registry: two variables of one name": ("Registry", _registry_names, "variables: two variables share a name"),
    "Monitor: too many buckets": ("Monitor", _monitor_buckets, "rows: holds 300 buckets, at most 256 are kept"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_broken_invariant_is_listed_and_refused_on_load_with_the_same_words(engine, damage):
    name, change, expected = DAMAGES[damage]
    part = io.loads(io.dumps(PARTS[name](engine)))  # a copy of the model's part
    assert part.problems() == []
    change(part)
    found = part.problems()
    assert found and found[0].startswith(expected), found
    with pytest.raises(io.ModelFileError) as error:
        io.loads(io.dumps(part))
    assert str(error.value) == found[0]
    with pytest.raises(AssertionError, match=expected.split(":")[0]):
        part._check()  # the tests' assertion is the same list
