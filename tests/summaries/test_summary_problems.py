"""One list of problems per class: what the tests assert empty is what a load refuses.

Each summary (and the sketches and the Gaussian density) states its invariants once, in
``problems()``: a list of ``"field: what is wrong"``. The tests assert it empty after every
operation; ``io.from_record`` raises its first entry as the ``ModelFileError`` of a file whose
rebuilt summary breaks one. Here a live summary is damaged by hand (its own private state, as a
bug would), saved, and loaded: the load refuses it with exactly the first problem the damaged
summary lists.
"""

from __future__ import annotations

import numpy as np
import pytest
from testkit import assert_listed_and_refused

from wnb_stream import io
from wnb_stream.summaries import Categorical, CPiD, Gaussian, GKClass
from wnb_stream.summaries.gaussian import GaussianDensity
from wnb_stream.summaries.sketch import CountMinSketch, SpaceSaving


def _rows(seed: int, n: int, kind: str):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n).tolist()
    if kind == "numeric":
        return (rng.normal(size=n) + np.array(labels)).round(2).tolist(), labels
    return [f"v{i}" for i in rng.zipf(1.4, n) % 60], labels


def _fed(summary, seed: int = 0, n: int = 600):
    values, labels = _rows(seed, n, summary.kind)
    summary.update_many(values, labels)
    return summary


def _heavy() -> SpaceSaving:
    heavy = SpaceSaving(capacity=5)
    rng = np.random.default_rng(3)
    for value, j in zip((rng.zipf(1.3, 300) % 30).tolist(), rng.integers(0, 2, 300).tolist()):
        heavy.update(value, 1.0, j)
    return heavy


def _sketch() -> CountMinSketch:
    sketch = CountMinSketch(*CountMinSketch.dimensions(0.1, 0.1), seed=4, n_classes=2)
    for value in range(40):
        sketch.add(sketch.cells(value), value % 2, 1.0)
    return sketch


def _density() -> GaussianDensity:
    return GaussianDensity(_fed(Gaussian(), seed=5).table())


MAKERS = {
    "GKClass": lambda: _fed(GKClass(epsilon=0.02, buffer_size=64)),
    "GKClass-budget": lambda: _fed(GKClass(max_tuples=10, buffer_size=50)),
    "CPiD": lambda: _fed(CPiD(n_bins=12, warm_up=20)),
    "CPiD-warm-up": lambda: _fed(CPiD(warm_up=100), n=40),
    "Gaussian": lambda: _fed(Gaussian()),
    "Categorical": lambda: _fed(Categorical()),
    "Categorical-sketch": lambda: _fed(Categorical(max_values=8, top_k=4, epsilon=0.1, seed=2)),
    "SpaceSaving": _heavy,
    "CountMinSketch": _sketch,
    "GaussianDensity": _density,
}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_sound_summary_lists_no_problem_before_and_after_a_round_trip(name):
    summary = MAKERS[name]()
    assert summary.problems() == []
    assert io.loads(io.dumps(summary)).problems() == []


def _scale_first(array_name: str, factor: float):
    def damage(summary):
        array = getattr(summary, array_name).copy()
        array[0] *= factor
        setattr(summary, array_name, array)

    return damage


def _set_heap_top(heavy: SpaceSaving) -> None:
    count, sequence, value = heavy._heap[0]
    heavy._heap[0] = (heavy._slots[value].count + 1.0, sequence, value)


def _cpid_count(summary: CPiD) -> None:
    summary._counts[0] += 1.0


def _gaussian_m2(summary: Gaussian) -> None:
    summary._m2[0] = -1.0


def _categorical_total(summary: Categorical) -> None:
    summary._totals[0] += 1.0


def _sketch_cell(summary: Categorical) -> None:
    summary._sketch._table[0, 0] += 1.0  # one row no longer holds the class totals


def _density_floor(density: GaussianDensity) -> None:
    variances = density.variances.copy()
    variances[0] = 1e-300  # below the floor of any mean
    density.variances = variances


def _gk_weight(gk: GKClass) -> None:
    gk._weight += 1.0


def _gk_epsilon(gk: GKClass) -> None:
    gk._epsilon = None  # budget mode without a budget


DAMAGES = {
    "GK: Σ g is not the weight": ("GKClass", _gk_weight, "weight: must be Σ g = "),
    "GK: a tuple's class counts": ("GKClass", _scale_first("_counts", 2.0), "counts: the class counts of a tuple must add up to its g"),
    "GK: ε dropped outside budget mode": ("GKClass", _gk_epsilon, "guaranteed_epsilon: must be null exactly when max_tuples is set"),
    "cPiD: an interval's count": ("CPiD", _cpid_count, "class_counts: the class counts of interval 0 do not add up"),
    "Gaussian: a negative M2": ("Gaussian", _gaussian_m2, "m2: sums of squared deviations must be >= 0"),
    "Categorical: the totals": ("Categorical", _categorical_total, "exact.counts: the counts of the values must add up to totals"),
    "Categorical: a sketch row": ("Categorical-sketch", _sketch_cell, "sketch.table: every row of the sketch must hold the same class totals"),
    "SpaceSaving: a heap entry above its slot": ("SpaceSaving", _set_heap_top, "heap_counts: a heap entry is above its slot's count"),
    "GaussianDensity: a variance below its floor": ("GaussianDensity", _density_floor, "variances: below the variance floor of their means"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_broken_invariant_is_listed_and_refused_on_load_with_the_same_words(damage):
    name, change, expected = DAMAGES[damage]
    summary = MAKERS[name]()
    change(summary)
    assert_listed_and_refused(summary, expected)


def test_a_nested_record_names_the_full_path():
    summary = MAKERS["Categorical-sketch"]()
    _sketch_cell(summary)
    record = {"type": "Shelf", "state": {"summary": io.to_record(summary)}}
    with pytest.raises(io.ModelFileError, match=r"^inner\.sketch\.table: every row of the sketch must hold the same class totals$"):
        io.from_record(record["state"]["summary"], "inner")
