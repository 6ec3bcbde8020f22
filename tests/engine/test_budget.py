"""A memory budget (``WeightedNaiveBayes(memory_budget=bytes)``, docs/algorithms/prediction.md#memory-budget).

- on a long stream whose variables keep coming, ``memory_usage()`` is within the budget after
  every check point, the window shrinks and never grows back, and the model keeps learning;
- the summaries lose no row to the cut (their class totals are the stream's);
- ``learn_many`` is still a loop of ``learn_one``; the model saves and loads with its cut window;
- no budget, or one the model never reaches, changes nothing;
- with the window at its floor, variables outside level 3 are evicted: on token streams whose
  vocabulary keeps growing the budget holds at every check point, the informative tokens stay
  and predict as well as without a budget, the parts stay consistent (``_check``), the model
  saves and loads, an evicted feature seen again starts afresh, and ``learn_many`` is still a
  loop of ``learn_one``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from engine_cases import assert_encoding_is_a_function_of_the_raw_rows, assert_same_model
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes, io, weights
from wnb_stream.engine.budget import MIN_WINDOW
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


def token_rows(n: int, kind: str, seed: int = 0, size: int = 6):
    """A token stream whose vocabulary keeps growing (``size`` words drawn per row): counts of
    words with ``absent=0`` ("counts"), or one categorical feature per word plus the first and
    last words as the values of two categorical features ("names")."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        j = int(rng.integers(2))
        words = [f"w{int(w)}" for w in np.unique(rng.integers(0, 8 * (i + 1), size=size) * 2 + j)]
        if kind == "counts":
            yield {w: 1 for w in words}, "ab"[j]
        else:
            yield {w: "yes" for w in words} | {"first": words[0], "last": words[-1]}, "ab"[j]


@pytest.mark.parametrize("kind", ["counts", "names"])
def test_on_a_token_stream_the_budget_holds_at_every_check_point(kind):
    """Counts of words with ``absent=0`` (the sparse window), and one categorical feature per
    word (the dense window): the vocabulary outgrows what the window alone can give back, so
    variables outside level 3 are evicted once the window is at its floor."""
    budget = 2**16
    model = WeightedNaiveBayes(memory_budget=budget, absent=0 if kind == "counts" else None, optimizer=weights.Uniform(), seed=1)
    seen, floor = set(), False
    for x, y in token_rows(520, kind, size=3):
        model.learn_one(x, y)
        seen.update(x)
        if model.n_seen % EVERY == 0:
            assert model.memory_usage() <= budget
            floor = floor or model._engine.history.capacity == MIN_WINDOW
    assert floor and len(model._engine.registry) < len(seen) / 2  # (the budget binds: variables were evicted)
    model._check()


def word_rows(n: int, seed: int, vocabulary: int = 4000, informative: int = 20):
    """Sparse word counts: ``informative`` words whose rate depends on the class among
    ``vocabulary`` noise words drawn uniformly (a few per row, most of them rare)."""
    concept = np.random.default_rng(0)  # (one concept, whatever the sample's seed)
    hot = concept.uniform(0.3, 0.5, size=informative)
    side = concept.integers(0, 2, size=informative)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        y = int(rng.integers(0, 2))
        rate = np.where(side == y, hot, hot / 4)
        x = {f"i{k}": 1 for k in np.flatnonzero(rng.random(informative) < rate).tolist()}
        x |= {f"n{k}": 1 for k in rng.integers(0, vocabulary, size=8).tolist()}
        yield x, y


def test_the_informative_tokens_survive_eviction_and_predict_as_well():
    train, test = list(word_rows(600, seed=3)), list(word_rows(200, seed=4))
    budget = 2**18
    bounded = WeightedNaiveBayes(absent=0, memory_budget=budget, optimizer=weights.Uniform(), seed=2)
    free = WeightedNaiveBayes(absent=0, optimizer=weights.Uniform(), seed=2)
    for x, y in train:
        bounded.learn_one(x, y)
        free.learn_one(x, y)
        if bounded.n_seen % EVERY == 0:
            assert bounded.memory_usage() <= budget
    registry = bounded._engine.registry
    assert free.memory_usage() > 2 * budget and len(registry) < len(free._engine.registry) / 2  # (evicted)
    assert all(f"i{k}" in registry.index for k in range(20))  # every informative word is still there
    accuracy = np.mean([bounded.predict_one(x) == y for x, y in test])
    free_accuracy = np.mean([free.predict_one(x) == y for x, y in test])
    assert accuracy > 0.85 and accuracy >= free_accuracy - 0.02


def evicted_model(absent):
    model = WeightedNaiveBayes(memory_budget=2**16, absent=absent, optimizer=weights.Uniform(), seed=1)
    kind = "counts" if absent is not None else "names"
    rows = list(token_rows(520, kind, seed=5, size=3))
    for x, y in rows:
        model.learn_one(x, y)
    return model, rows


@pytest.mark.parametrize("absent", [None, 0.0])
def test_after_eviction_the_parts_agree_and_the_model_saves_and_loads(absent):
    model, rows = evicted_model(absent)
    seen = {name for x, _ in rows for name in x}
    assert len(model._engine.registry) < len(seen) / 2
    model._check()
    assert_encoding_is_a_function_of_the_raw_rows(model)
    loaded = io.loads(io.dumps(model))
    loaded._check()
    for x, _ in rows[-30:]:
        assert loaded.predict_proba_one(x) == model.predict_proba_one(x)
    for x, y in token_rows(100, "counts" if absent is not None else "names", seed=6, size=3):
        loaded.learn_one(x, y)
    loaded._check()


@pytest.mark.parametrize("absent", [None, 0.0])
def test_an_evicted_feature_seen_again_starts_afresh(absent):
    model, rows = evicted_model(absent)
    registry = model._engine.registry
    gone = next(name for x, _ in rows[:200] for name in x if name not in registry.index and name not in ("first", "last"))
    x = {gone: 1} if absent is not None else {gone: "yes"}
    model.learn_one(x, "a")
    k = registry.index[gone]
    assert k == len(registry) - 1 and registry.count[k] == 1  # a new variable, one observation
    if absent is None:
        assert registry.variables[k].summary.table().aligned(model._engine.classes.labels).counts.sum() == 1
    model._check()


@pytest.mark.parametrize("absent", [None, 0.0])  # categorical words (dense window), counts (sparse window)
def test_learn_many_is_a_learn_one_loop_when_variables_are_evicted(absent):
    rng = np.random.default_rng(7)  # words as features, 3 a row: the budget evicts most of them
    vocabulary, value = (120, "yes") if absent is None else (300, 1)
    rows = [({f"w{k}": value for k in rng.integers(0, vocabulary, size=3).tolist()}, "ab"[i % 2]) for i in range(300)]
    a, b = (WeightedNaiveBayes(memory_budget=2**13, absent=absent, optimizer=weights.Uniform(), seed=3, drift_delta=None) for _ in range(2))
    a.learn_many([x for x, _ in rows], [y for _, y in rows])  # (one batch: its evicted features come back within it)
    for x, y in rows:
        b.learn_one(x, y)
    assert len(a._engine.registry) < len({name for x, _ in rows for name in x})  # (evicted: some never came back)
    assert_same_model(a, b, [x for x, _ in rows[-20:]])
    a._check()
