"""A memory budget (``WeightedNaiveBayes(memory_budget=bytes)``, docs/algorithms/prediction.md#memory-budget).

- on a long stream whose variables keep coming, ``memory_usage()`` is within the budget after
  every check point, the window shrinks and never grows back, and the model keeps learning;
- the summaries lose no row to the cut (their class totals are the stream's);
- ``learn_many`` is still a loop of ``learn_one``; the model saves and loads with its cut window;
- no budget, or one the model never reaches, changes nothing.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from engine_cases import assert_same_model
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes, io, weights
from wnb_stream.engine.core import MIN_WINDOW
from wnb_stream.engine.drift import EVERY


def rows(n: int, seed: int = 1, grow: bool = True):
    """RandomRBF rows (8 variables, 3 classes), and one more variable every 100 rows."""
    data = itertools.islice(synth.RandomRBF(seed_model=seed, seed_sample=seed, n_features=8, n_classes=3), n)
    for i, (x, y) in enumerate(data):
        x = dict(x)
        if grow:
            for k in range(i // 100):
                x[f"extra{k}"] = x[0] * (k + 1) if k % 2 else float(i % 7)
        yield x, y


@pytest.mark.parametrize("absent", [None, 0.0])  # the dense layout of the window, and the sparse one
def test_the_budget_holds_at_every_check_point_and_the_window_only_shrinks(absent):
    budget = 3 * 2**20
    model = WeightedNaiveBayes(memory_budget=budget, seed=1, absent=absent)
    free = WeightedNaiveBayes(seed=1, absent=absent)
    capacities, hits, free_hits = [], 0, 0
    for i, (x, y) in enumerate(rows(6000)):
        hits += model.predict_one(x) == y
        free_hits += free.predict_one(x) == y
        model.learn_one(x, y)
        free.learn_one(x, y)
        if model.n_seen % EVERY == 0:
            assert model.memory_usage() <= budget
            capacities.append(model._engine.history.capacity)
    assert capacities == sorted(capacities, reverse=True) and capacities[-1] < 5000  # it shrank, never grew
    assert free.memory_usage() > 2 * budget  # (the budget binds)
    model._check()
    counts = model._engine.classes.counts
    for variable in model._engine.registry.variables[:8]:  # present in every row: every row summarised
        model._engine.registry.feed(np.arange(len(model._engine.registry)), model._engine.history, model._engine.classes)
        np.testing.assert_allclose(variable.summary.table().aligned(model._engine.classes.labels).counts.sum(axis=0), counts)
    assert hits / 6000 > free_hits / 6000 - 0.03  # a shorter window, about the same accuracy


@pytest.mark.slow  # end to end, seconds even in the dev profile: CI runs it (--run-slow)
def test_learn_many_is_a_learn_one_loop_under_a_budget_and_the_model_saves():
    data = list(rows(2600, seed=2))
    a = WeightedNaiveBayes(memory_budget=2**20, seed=3, drift_delta=None)
    b = WeightedNaiveBayes(memory_budget=2**20, seed=3, drift_delta=None)
    for start in range(0, len(data), 300):
        part = data[start : start + 300]
        a.learn_many(pd.DataFrame([x for x, _ in part]), pd.Series([y for _, y in part]))
        for x, y in part:
            b.learn_one(dict(pd.Series(x).reindex(pd.DataFrame([x for x, _ in part]).columns)), y)
    assert a._engine.history.capacity == b._engine.history.capacity < 5000
    probes = [x for x, _ in data[-20:]]
    assert_same_model(a, b, probes)
    loaded = io.loads(io.dumps(a))
    assert loaded._engine.history.capacity == a._engine.history.capacity
    for x in probes:
        assert loaded.predict_proba_one(x) == a.predict_proba_one(x)
    x, y = data[0]
    loaded.learn_one(x, y)
    loaded._check()


def test_a_budget_never_reached_changes_nothing():
    data = list(rows(1500, grow=False))
    a, b = WeightedNaiveBayes(memory_budget=2**40, seed=1), WeightedNaiveBayes(seed=1)
    for x, y in data:
        assert a.predict_proba_one(x) == b.predict_proba_one(x)
        a.learn_one(x, y)
        b.learn_one(x, y)


def test_a_budget_below_the_summaries_keeps_the_fewest_rows():
    model = WeightedNaiveBayes(memory_budget=1, seed=1)
    for x, y in rows(600, grow=False):
        model.learn_one(x, y)
    assert model._engine.history.capacity == MIN_WINDOW
    model._check()


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "1GB"])
def test_an_unusable_budget_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="memory_budget"):
        WeightedNaiveBayes(memory_budget=bad)


def token_rows(n: int, kind: str, seed: int = 0):
    """A token stream whose vocabulary keeps growing: counts of words with ``absent=0``
    ("counts"), or the words as categorical values of a few slots ("categories", whose values
    are the tokens) plus one categorical feature per token ("names")."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        j = int(rng.integers(2))
        words = [f"w{int(w)}" for w in np.unique(rng.integers(0, 8 * (i + 1), size=6) * 2 + j)]
        if kind == "counts":
            yield {w: 1 for w in words}, "ab"[j]
        else:
            yield {w: "yes" for w in words} | {"first": words[0], "last": words[-1]}, "ab"[j]


@pytest.mark.parametrize("kind", ["counts", "names"])
def test_on_a_token_stream_the_budget_cuts_the_window_to_its_fewest_rows_before_it_is_passed(kind):
    """What the budget bounds (docs/algorithms/prediction.md#memory-budget): at every check point
    the model is within it, or its window is down to ``MIN_WINDOW`` rows and what is left over
    is what the budget cannot bound (the variables' summaries and level 2, the lookups), which
    grows with the vocabulary."""
    budget = 2**19
    model = WeightedNaiveBayes(memory_budget=budget, absent=0 if kind == "counts" else None, optimizer=weights.Uniform(), seed=1)
    passed = False
    for x, y in token_rows(1300, kind):
        model.learn_one(x, y)
        if model.n_seen % EVERY == 0:
            e = model._engine
            within = model.memory_usage() <= budget
            assert within or e.history.capacity == MIN_WINDOW
            rest = e.lookup.memory_usage() + e.registry.memory_usage()
            assert within or rest + e.history.memory_usage() * MIN_WINDOW / e.history.capacity > budget * 0.5
            passed = passed or not within
    assert passed  # (the vocabulary outgrows the budget: the window alone cannot hold it)
    model._check()
