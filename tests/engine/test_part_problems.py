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
from testkit import assert_listed_and_refused

from wnb_stream import WeightedNaiveBayes, io
from wnb_stream.engine.history import SparseHistory
from wnb_stream.engine.variable import Scorer


def _model(seed: int = 0, n: int = 700) -> WeightedNaiveBayes:
    rng = np.random.default_rng(seed)
    model = WeightedNaiveBayes(seed=seed, history_size=300)
    for _ in range(n):
        y = int(rng.integers(0, 3))
        x = {"a": float(rng.normal() + y), "b": f"v{int(rng.integers(0, 4)) + y}", "c": float(rng.normal())}
        model.learn_one(x, y)
    return model


def _window(engine) -> SparseHistory:
    """The model's window in the layout its record is saved in."""
    numeric = np.array([v.kind == "numeric" for v in engine.registry.variables], dtype=bool)
    return SparseHistory.of(engine.history, engine.registry.column, numeric)


def _built(engine, kind: str):
    """The first variable of ``kind`` whose level 2 is built and informative."""
    return next(v for v in engine.registry.variables if v.kind == kind and v.log_prob is not None and v.level > 0)


PARTS = {
    "Schedule": lambda engine: engine.schedule,
    "Slots": lambda engine: engine.slots,
    "Monitor": lambda engine: engine.monitor,
    "Classes": lambda engine: engine.classes,
    "Registry": lambda engine: engine.registry,
    "History": _window,
    "Variable": lambda engine: _built(engine, "numeric"),
    "Variable-categorical": lambda engine: _built(engine, "categorical"),
    "Scorer": lambda engine: Scorer.of(_built(engine, "numeric")),
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


def _history_clock(history):
    history.stored = history.size - 1


def _history_twice(history):
    history.entry_variable[history.cursor, 1] = history.entry_variable[history.cursor, 0]


def _level(variable):
    variable.level = variable.level / 2


def _cuts(variable):
    variable.cuts = [cut + 0.5 for cut in variable.cuts]


def _group(variable):
    value = next(iter(variable._groups))
    variable._groups[value] = (variable._groups[value] + 1) % variable.n_parts


DAMAGES = {
    "Schedule: negative pending rows": ("Schedule", _schedule_pending, "pending: must be >= 0"),
    "Slots: a variable with two slots": ("Slots", _slots_twice, "variable: must be distinct variable indices below n_variables"),
    "Monitor: more errors than rows": ("Monitor", _monitor_errors, "errors: a bucket cannot hold more errors than rows"),
    "Classes: a fraction of an example": ("Classes", _classes_fraction, "seen: examples per class are whole numbers"),
    "Classes: weight without an example": ("Classes", _classes_unseen, "counts: a class holds weight without an example"),
    "Registry: two variables of one name": ("Registry", _registry_names, "variables: two variables share a name"),
    "History: fewer rows stored than held": ("History", _history_clock, "stored: cannot be below size"),
    "History: a row holds a variable twice": ("History", _history_twice, "variable: a row holds a variable twice"),
    "Variable: a Level not its partition's": ("Variable", _level, "level: level and prior_cost must be the partition's"),
    "Variable: cut points not the partition's": ("Variable", _cuts, "locator.cuts: must be the partition's upper bounds but the last"),
    "Variable: a value in another part": ("Variable-categorical", _group, "locator.values[0]: "),
    "Scorer: a Level not its partition's": ("Scorer", _level, "level: level and prior_cost must be the partition's"),
    "Monitor: too many buckets": ("Monitor", _monitor_buckets, "rows: holds 300 buckets, at most 256 are kept"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_broken_invariant_is_listed_and_refused_on_load_with_the_same_words(engine, damage):
    name, change, expected = DAMAGES[damage]
    part = io.loads(io.dumps(PARTS[name](engine)))  # a copy of the model's part
    assert part.problems() == []
    change(part)
    assert_listed_and_refused(part, expected)
