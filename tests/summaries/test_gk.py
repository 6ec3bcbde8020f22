"""Tests of the GK quantile summary with class counts (``docs/algorithms/summaries.md#gk``).

The oracle is an exact sorted copy of the stream: every guarantee of ``GKClass`` (ε-invariant,
rank and quantile errors, the charging lemma on class counts) is checked against it.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.summaries.gk import GKClass
from wnb_stream.summaries.gk_tuples import budget_pairs, compress_runs, insert_batch, merge_tuples
from wnb_stream.tables import Bins

SETTINGS = settings(max_examples=examples(60), deadline=None)
KINDS = ("random", "sorted", "reversed", "duplicates", "constant")


# --------------------------------------------------------------------------------------------
# Streams and the exact oracle
# --------------------------------------------------------------------------------------------


def make_stream(kind: str, n: int, seed: int, weighted: bool, n_classes: int = 3):
    """Values (n,) float, labels (n,) object, weights (n,) float or None."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        x = rng.normal(size=n)
    elif kind == "sorted":
        x = np.sort(rng.uniform(-5, 5, size=n))
    elif kind == "reversed":
        x = np.sort(rng.uniform(-5, 5, size=n))[::-1].copy()
    elif kind == "duplicates":
        x = rng.integers(0, max(2, n // 20), size=n).astype(float)
    else:
        x = np.full(n, 3.25)
    labels = np.empty(n, dtype=object)
    labels[:] = [f"c{j}" for j in rng.integers(0, n_classes, size=n)]
    weights = rng.choice([0.0, 0.5, 1.0, 2.0, 7.25], size=n, p=[0.05, 0.25, 0.4, 0.2, 0.1]) if weighted else None
    return x, labels, weights


def snapshot(gk: GKClass) -> tuple:
    """Everything a mutation could touch (for exact comparisons)."""
    return (
        gk._values.tobytes(),
        gk._g.tobytes(),
        gk._delta.tobytes(),
        gk._at_value.tobytes(),
        gk._counts.tobytes(),
        gk._counts.shape,
        gk._missing.tobytes(),
        gk._weight,
        gk._buffer_values.tobytes(),
        gk._buffer_classes.tobytes(),
        gk._buffer_weights.tobytes(),
        gk.classes,
        gk._epsilon,
    )


class Oracle:
    """Exact weighted counts of a stream (the finite values, per class)."""

    def __init__(self, values, labels, weights=None):
        values = np.asarray(values, dtype=float)
        weights = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float)
        labels = np.asarray(labels, dtype=object)
        finite = np.isfinite(values)
        self.classes = list(dict.fromkeys(labels.tolist()))
        self.missing = {c: float(weights[~finite & (labels == c)].sum()) for c in self.classes}
        order = np.argsort(values[finite], kind="stable")
        self.x = values[finite][order]
        self.w = weights[finite][order]
        self.y = labels[finite][order]
        self.total = float(self.w.sum())

    def at_most(self, v, classes=None) -> np.ndarray:
        """``(len(v), J)`` weight of values ``<= v`` per class (``classes`` order)."""
        classes = self.classes if classes is None else classes
        columns = np.stack([np.cumsum(np.where(self.y == c, self.w, 0.0)) for c in classes], axis=1)
        columns = np.vstack([np.zeros(len(classes)), columns])
        return columns[np.searchsorted(self.x, v, side="right")]

    def below(self, v) -> np.ndarray:
        return np.concatenate([[0.0], np.cumsum(self.w)])[np.searchsorted(self.x, v, side="left")]

    def up_to(self, v) -> np.ndarray:
        return np.concatenate([[0.0], np.cumsum(self.w)])[np.searchsorted(self.x, v, side="right")]


def assert_guarantees(gk: GKClass, oracle: Oracle, epsilon: float | None = None) -> None:
    """All the guarantees of the class docstring, against the exact oracle."""
    gk._flush()
    assert not gk.problems()
    tol = 1e-9 * max(1.0, oracle.total)
    assert gk.n == pytest.approx(oracle.total + sum(oracle.missing.values()), rel=1e-12, abs=1e-9)
    assert gk._g.sum() == pytest.approx(oracle.total, rel=1e-12, abs=1e-9)
    assert set(gk.classes) == set(oracle.classes)
    assert list(gk.classes) == oracle.classes  # order of first appearance
    table = gk.table()
    for j, c in enumerate(table.classes):
        assert table.missing[j] == pytest.approx(oracle.missing[c], abs=1e-9)
    if oracle.total == 0.0:
        assert len(table.upper_bounds) == 0
        return
    v, g, d, e = gk._values, gk._g, gk._delta, gk._at_value
    # table: one bin per tuple, bounds = values, counts = class counts
    np.testing.assert_array_equal(table.upper_bounds, v)
    np.testing.assert_allclose(table.counts.sum(axis=1), g, rtol=1e-12)
    # every bound is an observed value; e_i never exceeds the true weight at v_i
    assert np.all(np.isin(v, oracle.x))
    assert np.all(e <= oracle.up_to(v) - oracle.below(v) + tol)
    # charging lemma (docs/algorithms/summaries.md#gk): cumulative class counts are lower bounds, total deficit <= Δ_i
    exact = oracle.at_most(v, table.classes)  # (s, J)
    cumulative = np.cumsum(table.counts, axis=0)
    assert np.all(cumulative <= exact + tol)
    assert np.all((exact - cumulative).sum(axis=1) <= d + tol)
    # ε-invariant (weighted form): g + Δ − e <= 2εn
    bound = gk.guaranteed_epsilon if epsilon is None else epsilon
    if bound is None:
        bound = gk.effective_epsilon
    assert np.all(g + d - e <= 2.0 * bound * oracle.total + tol)
    # rank queries within εn, on tuple values, data values, midpoints and outside the range
    probes = np.concatenate(
        [v, oracle.x[:: max(1, len(oracle.x) // 200)], (v[1:] + v[:-1]) / 2, [v[0] - 1.0, v[-1] + 1.0, -np.inf, np.inf]]
    )
    truth = oracle.up_to(probes)
    estimates = np.array([gk.rank(float(p)) for p in probes])
    assert np.all(np.abs(estimates - truth) <= bound * oracle.total + tol)
    # quantile queries: the answer's rank range (W(< q), W(<= q)] is within εn of φn
    for phi in np.linspace(0.0, 1.0, 41):
        q = gk.quantile(float(phi))
        target = phi * oracle.total
        low, high = oracle.below(q), oracle.up_to(q)
        distance = max(0.0, low - target, target - high)
        assert distance <= bound * oracle.total + tol, (phi, q)


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, name",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 0.5}, "epsilon"),
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": "0.1"}, "epsilon"),
        ({"epsilon": True}, "epsilon"),
        ({"quantiles": 1}, "quantiles"),
        ({"quantiles": 2.5}, "quantiles"),
        ({"max_tuples": 2}, "max_tuples"),
        ({"max_tuples": 10.0}, "max_tuples"),
        ({"buffer_size": 0}, "buffer_size"),
        ({"epsilon": 0.01, "quantiles": 10}, "at most one"),
        ({"quantiles": 10, "max_tuples": 50}, "at most one"),
    ],
)
def test_bad_parameters_are_named(params, name):
    with pytest.raises(ValueError, match=name):
        GKClass(**params)


def test_configuration_modes():
    assert GKClass().guaranteed_epsilon == 0.005
    assert GKClass(epsilon=0.02).guaranteed_epsilon == 0.02
    assert GKClass(quantiles=100).guaranteed_epsilon == pytest.approx(0.005)
    assert GKClass(quantiles=8).guaranteed_epsilon == pytest.approx(1 / 16)
    assert GKClass(max_tuples=10).guaranteed_epsilon is None
    assert GKClass.kind == "numeric"


def test_max_tuples_bound():
    assert GKClass.max_tuples_bound(0.005, 10**6) == math.ceil(1100 * math.log2(10**4))
    assert GKClass.max_tuples_bound(0.01, 50) == 50  # small n: at most one tuple per value
    assert GKClass.max_tuples_bound(0.01, 0) == 0
    with pytest.raises(ValueError, match="epsilon"):
        GKClass.max_tuples_bound(0.7, 10)


# --------------------------------------------------------------------------------------------
# Guarantees against the oracle
# --------------------------------------------------------------------------------------------


@SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(0, 2500),
    seed=st.integers(0, 2**32 - 1),
    weighted=st.booleans(),
    epsilon=st.sampled_from([0.01, 0.03, 0.1, 0.25]),
    buffer_size=st.sampled_from([1, 7, 64, None]),
)
def test_update_loop_keeps_guarantees(kind, n, seed, weighted, epsilon, buffer_size):
    x, y, w = make_stream(kind, n, seed, weighted)
    gk = GKClass(epsilon=epsilon, buffer_size=buffer_size)
    half = n // 2
    for i in range(n):
        gk.update(float(x[i]), y[i], 1.0 if w is None else float(w[i]))
        if i + 1 == half:  # check a prefix too (the query flushes mid-stream)
            assert_guarantees(gk, Oracle(x[:half], y[:half], None if w is None else w[:half]))
    assert_guarantees(gk, Oracle(x, y, w))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_longer_streams_keep_guarantees(kind, weighted):
    x, y, w = make_stream(kind, 8000, seed=len(kind) + weighted, weighted=weighted)
    gk = GKClass(epsilon=0.01, buffer_size=250)
    for i in range(len(x)):
        gk.update(float(x[i]), y[i], 1.0 if w is None else float(w[i]))
    assert_guarantees(gk, Oracle(x, y, w))
    assert gk.n_tuples <= 4 / 0.01


@SETTINGS
@given(
    values=st.lists(st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.0, 1.0, 1.5]), max_size=300),
    seed=st.integers(0, 2**32 - 1),
    epsilon=st.sampled_from([0.02, 0.1, 0.3]),
)
def test_adversarial_small_streams(values, seed, epsilon):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=len(values)).tolist()
    weights = rng.choice([0.25, 1.0, 3.0], size=len(values))
    gk = GKClass(epsilon=epsilon, buffer_size=int(rng.integers(1, 20)))
    for v, c, w in zip(values, labels, weights.tolist()):
        gk.update(v, c, w)
    assert_guarantees(gk, Oracle(values, labels, weights))


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), epsilon=st.sampled_from([0.01, 0.05]))
def test_unit_weights_distinct_values_textbook_invariant(seed, epsilon):
    """For unit weights and distinct values: g + Δ <= max(⌊2εn⌋, 1) (Greenwald & Khanna 2001)."""
    rng = np.random.default_rng(seed)
    gk = GKClass(epsilon=epsilon, buffer_size=int(rng.integers(1, 200)))
    values = rng.permutation(3000).astype(float)
    for chunk in np.array_split(values, 5):
        gk.update_many(chunk, np.zeros(len(chunk), dtype=int))
        gk._flush()
        n = gk._weight
        assert np.all(gk._at_value == 1.0)
        assert np.all(gk._g + gk._delta <= max(math.floor(2 * epsilon * n), 1))


@SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(1, 2500),
    seed=st.integers(0, 2**32 - 1),
    weighted=st.booleans(),
    max_tuples=st.sampled_from([3, 5, 20, 100]),
)
def test_budget_mode_keeps_its_budget_and_reports_its_error(kind, n, seed, weighted, max_tuples):
    x, y, w = make_stream(kind, n, seed, weighted)
    gk = GKClass(max_tuples=max_tuples, buffer_size=37)
    gk.update_many(x, y, w)
    assert gk.n_tuples <= max_tuples
    # the charging lemma holds for any merge; queries are within the reported ε_eff
    assert_guarantees(gk, Oracle(x, y, w))


def test_budget_mode_is_exact_until_full():
    gk = GKClass(max_tuples=50)
    gk.update_many(np.arange(40.0)[::-1], ["a"] * 40)
    assert gk.n_tuples == 40 and gk.effective_epsilon == 0.0
    gk.update_many(np.arange(40.0, 400.0), ["b"] * 360)
    assert gk.n_tuples == 50 and gk.effective_epsilon > 0.0


def test_long_stream_stays_small():
    """Tuple count stays a few 1/ε, far below Greenwald & Khanna's (2001) O((1/ε) log(εn)) bound."""
    rng = np.random.default_rng(7)
    for values in (rng.uniform(size=60_000), np.arange(60_000.0)):
        gk = GKClass(epsilon=0.01)
        gk.update_many(values, np.zeros(len(values), dtype=int))
        assert gk.n_tuples <= 4 / 0.01 < GKClass.max_tuples_bound(0.01, len(values))
        assert not gk.problems()


# --------------------------------------------------------------------------------------------
# update_many
# --------------------------------------------------------------------------------------------


@SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(0, 1500),
    seed=st.integers(0, 2**32 - 1),
    weighted=st.booleans(),
    budget=st.booleans(),
    buffer_size=st.sampled_from([1, 5, 100, None]),
    n_chunks=st.integers(1, 6),
)
# a class first seen with a buffered value, then only missing values of older classes: its zero
# columns must exist on both paths (found by hypothesis; the loop used to add them later)
@example(kind="random", n=16, seed=586, weighted=False, budget=False, buffer_size=100, n_chunks=1)
def test_update_many_is_a_loop_of_update(kind, n, seed, weighted, budget, buffer_size, n_chunks):
    """Bit-identical tuples, counts, missing counts, class order and buffer."""
    x, y, w = make_stream(kind, n, seed, weighted)
    rng = np.random.default_rng(seed)
    if n:  # missing values of every flavour
        x = x.astype(object)
        for i in rng.choice(n, size=min(n, 10), replace=False):
            x[i] = rng.choice([None, math.nan, math.inf, -math.inf])
    params = {"max_tuples": 10} if budget else {"epsilon": 0.05}
    looped = GKClass(buffer_size=buffer_size, **params)
    batched = GKClass(buffer_size=buffer_size, **params)
    for i in range(n):
        looped.update(x[i], y[i], 1.0 if w is None else float(w[i]))
    for part in np.array_split(np.arange(n), n_chunks):
        batched.update_many(x[part], y[part], None if w is None else w[part])
    assert snapshot(looped) == snapshot(batched)
    a, b = looped.table(), batched.table()
    np.testing.assert_array_equal(a.upper_bounds, b.upper_bounds)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.missing, b.missing)
    assert a.classes == b.classes


def test_update_many_accepts_common_inputs():
    gk = GKClass()
    gk.update_many([1, 2, 3], ["a", "b", "a"])  # lists of ints
    gk.update_many(np.array([1.5, 2.5], dtype=np.float32), np.array([0, 1]))  # labels of another type
    gk.update_many(np.array([None, 4, 2.0], dtype=object), ["a", 1, "a"])  # mixed, unsortable labels
    gk.update_many(np.zeros(0), [])
    table = gk.table()
    assert table.classes == ("a", "b", 0, 1)
    np.testing.assert_array_equal(table.upper_bounds, [1.0, 1.5, 2.0, 2.5, 3.0, 4.0])
    np.testing.assert_array_equal(table.missing, [1.0, 0.0, 0.0, 0.0])


# --------------------------------------------------------------------------------------------
# Merge (docs/algorithms/summaries.md#merge)
# --------------------------------------------------------------------------------------------


@SETTINGS
@given(
    kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
    sizes=st.tuples(st.integers(0, 1500), st.integers(0, 1500)),
    seed=st.integers(0, 2**32 - 1),
    weighted=st.booleans(),
    epsilons=st.tuples(st.sampled_from([0.01, 0.05, 0.2]), st.sampled_from([0.01, 0.05, 0.2])),
)
def test_merge_keeps_guarantees_against_the_union(kinds, sizes, seed, weighted, epsilons):
    xa, ya, wa = make_stream(kinds[0], sizes[0], seed, weighted, n_classes=2)
    xb, yb, wb = make_stream(kinds[1], sizes[1], seed + 1, weighted, n_classes=4)
    a = GKClass(epsilon=epsilons[0], buffer_size=50)
    b = GKClass(epsilon=epsilons[1])
    a.update_many(xa, ya, wa)
    b.update_many(xb, yb, wb)
    b.update(None, "only-missing")
    b_before = pickle.dumps(b.table())
    a.merge(b)
    assert a.guaranteed_epsilon == max(epsilons)
    assert pickle.dumps(b.table()) == b_before  # other is unchanged
    union = Oracle(
        np.concatenate([xa, xb, [np.nan]]),
        np.concatenate([ya, yb, np.array(["only-missing"], dtype=object)]),
        None if not weighted else np.concatenate([wa, wb, [1.0]]),
    )
    assert_guarantees(a, union)
    # and it keeps working as a summary
    a.update_many(xa, ya, wa)
    assert not a.problems()


def test_merge_trees_do_not_accumulate_error():
    rng = np.random.default_rng(3)
    parts = [rng.normal(loc=i, size=2000) for i in range(8)]
    summaries = []
    for values in parts:
        gk = GKClass(epsilon=0.02)
        gk.update_many(values, rng.integers(0, 2, size=len(values)))
        summaries.append(gk)
    while len(summaries) > 1:
        for left, right in zip(summaries[::2], summaries[1::2]):
            left.merge(right)
        summaries = summaries[::2]
    merged = summaries[0]
    values = np.concatenate(parts)
    oracle = Oracle(values, np.zeros(len(values)))
    for phi in (0.1, 0.5, 0.9):
        q = merged.quantile(phi)
        assert abs(oracle.up_to(q) - phi * len(values)) <= 0.02 * len(values) + 1
    assert merged.effective_epsilon <= 0.02


def test_merge_budget_mode_and_self():
    rng = np.random.default_rng(5)
    x = rng.uniform(size=3000)
    budget = GKClass(max_tuples=30)
    budget.update_many(x, np.zeros(3000, dtype=int))
    guaranteed = GKClass(epsilon=0.01)
    guaranteed.update_many(x[:100], np.ones(100, dtype=int))
    eps_budget = budget.effective_epsilon
    guaranteed.merge(budget)  # a budget summary counts with its effective ε
    assert guaranteed.guaranteed_epsilon == max(0.01, eps_budget)
    assert not guaranteed.problems()
    budget.merge(guaranteed)
    assert budget.n_tuples <= 30
    assert not budget.problems()
    total = budget.n
    budget.merge(budget)
    assert budget.n == 2 * total
    assert not budget.problems()
    with pytest.raises(TypeError, match="GKClass"):
        budget.merge(object())


def test_merge_tuples_with_ties_uses_the_tighter_bound():
    # a: 1, 2, 3 exact; b: 2 (exact) -> the tie collapses with Δ = 0
    a = (np.array([1.0, 2.0, 3.0]), np.ones(3), np.zeros(3), np.ones(3), np.ones((3, 1)))
    b = (np.array([2.0]), np.array([4.0]), np.zeros(1), np.array([4.0]), np.array([[4.0]]))
    v, g, d, e, c = merge_tuples(a, b)
    np.testing.assert_array_equal(v, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g, [1.0, 5.0, 1.0])
    np.testing.assert_array_equal(d, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(e, [1.0, 5.0, 1.0])
    # b: 1.5 and 2.5, with an uncertain 2.5 -> a's 2 gains the h of b's successor
    b = (np.array([1.5, 2.5]), np.array([1.0, 3.0]), np.array([0.0, 2.0]), np.array([1.0, 1.0]), np.ones((2, 1)))
    v, g, d, e, c = merge_tuples(a, b)
    np.testing.assert_array_equal(v, [1.0, 1.5, 2.0, 2.5, 3.0])
    np.testing.assert_array_equal(d, [0.0, 0.0, 3.0 + 2.0 - 1.0, 2.0 + 0.0, 0.0])


def test_insert_batch_groups_new_values_within_the_threshold():
    empty = (np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, 1)))
    values = np.arange(10.0)
    v, g, d, e, c = insert_batch(empty, values, np.ones(10), np.ones((10, 1)), threshold=2.5)
    assert v[0] == 0.0 and g[0] == 1.0 and v[-1] == 9.0  # the minimum alone, the maximum kept
    assert len(v) < 10 and g.sum() == 10.0 and np.all(g + d <= 2.5) and np.all(d == 0.0)
    np.testing.assert_array_equal(e, np.ones(len(v)))
    # between two tuples, new values inherit h of their successor and group within the room left
    state = (np.array([0.0, 100.0]), np.array([1.0, 5.0]), np.array([0.0, 0.0]), np.array([1.0, 1.0]), np.ones((2, 1)))
    v, g, d, e, c = insert_batch(state, np.arange(1.0, 21.0), np.ones(20), np.ones((20, 1)), threshold=9.0)
    inner = (v > 0.0) & (v < 100.0)
    assert np.all(d[inner] == 4.0) and np.all(g[inner] + d[inner] <= 9.0) and g.sum() == 26.0
    # no threshold (budget mode): one tuple per new value
    v, g, d, e, c = insert_batch(state, np.arange(1.0, 21.0), np.ones(20), np.ones((20, 1)), threshold=None)
    assert len(v) == 22


# --------------------------------------------------------------------------------------------
# Compress helpers
# --------------------------------------------------------------------------------------------


def test_compress_runs_matches_the_sequential_rule():
    rng = np.random.default_rng(11)
    for _ in range(200):
        s = int(rng.integers(0, 40))
        g = rng.integers(1, 6, size=s).astype(float)
        d = rng.integers(0, 6, size=s).astype(float)
        threshold = float(rng.integers(2, 14))
        # the simple compress written with Python lists
        G, D, ids = g.tolist(), d.tolist(), list(range(s))
        for i in range(s - 2, 0, -1):
            if G[i] + G[i + 1] + D[i + 1] <= threshold:
                G[i + 1] += G[i]
                del G[i], D[i], ids[i]
        keep = compress_runs(g, d, threshold)
        assert np.flatnonzero(keep).tolist() == ids


def test_budget_pairs_are_disjoint_and_cheapest():
    g = np.array([1.0, 5.0, 1.0, 1.0, 1.0, 1.0, 9.0, 1.0])
    d = np.zeros(8)
    e = np.ones(8)
    pairs = budget_pairs(g, d, e, 3)
    assert np.all(np.diff(pairs) >= 2)  # no tuple in two pairs
    assert set(pairs) <= {2, 3, 4}  # the three cheapest merges (width 1) are among 2->3, 3->4, 4->5


# --------------------------------------------------------------------------------------------
# Missing values, bad input, classes
# --------------------------------------------------------------------------------------------


def test_missing_and_infinite_values_are_counted_apart():
    gk = GKClass()
    gk.update(None, "a")
    gk.update(math.nan, "b", 2.0)
    gk.update(math.inf, "a")
    gk.update(np.float32("-inf"), "b")
    gk.update(math.inf, "a")
    with pytest.raises(ValueError, match="float range"):
        gk.update(10**400, "a")  # finite beyond the float range: refused, nothing changes
    gk.update(1.0, "a")
    gk.update_many([np.nan, None, -np.inf, 2.0], ["a", "c", "c", "b"], [1.0, 1.0, 3.0, 1.0])
    table = gk.table()
    assert table.classes == ("a", "b", "c")
    np.testing.assert_array_equal(table.upper_bounds, [1.0, 2.0])
    np.testing.assert_array_equal(table.counts, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(table.missing, [4.0, 3.0, 4.0])
    assert gk.n == 13.0 == table.n
    assert gk.rank(np.inf) == 2.0 and gk.quantile(1.0) == 2.0


@pytest.mark.parametrize(
    "x, w, message",
    [
        ("1.5", 1.0, "real number"),
        (b"1", 1.0, "real number"),
        (True, 1.0, "real number"),
        (np.bool_(False), 1.0, "real number"),
        (1 + 2j, 1.0, "real number"),
        ([1.0], 1.0, "real number"),
        (1.0, -1.0, "weight"),
        (1.0, math.nan, "weight"),
        (1.0, math.inf, "weight"),
        (1.0, "2", "weight"),
        (None, -2.0, "weight"),
    ],
)
def test_bad_update_raises_and_changes_nothing(x, w, message):
    gk = GKClass(epsilon=0.1, buffer_size=4)
    gk.update_many(np.arange(10.0), ["a"] * 10)
    before = snapshot(gk)
    with pytest.raises(ValueError, match=message):
        gk.update(x, "new class", w)
    assert snapshot(gk) == before


@pytest.mark.parametrize(
    "values, labels, weights, message",
    [
        (np.array([1.0, "2.0"], dtype=object), ["z", "z"], None, "real number"),
        (np.array(["1.0", "2.0"]), ["z", "z"], None, "real number"),
        (np.array([True, False]), ["z", "z"], None, "real number"),
        ([1.0, True], ["z", "z"], None, "real number"),
        ([1.0, "2"], ["z", "z"], None, "real number"),
        ([1.0, [2.0]], ["z", "z"], None, "real number"),
        (np.array([1.0, 2.0]), ["z"], None, "labels"),
        (np.array([1.0, 2.0]), ["z", "z"], [1.0, -1.0], "weights"),
        (np.array([1.0, 2.0]), ["z", "z"], [1.0, np.nan], "weights"),
        (np.array([1.0, 2.0]), ["z", "z"], [1.0], "weights"),
        (np.array([[1.0, 2.0]]), ["z", "z"], None, "1-D"),
        (np.array([1.0, 2.0]), [["unhashable"], "z"], None, "hashable"),
    ],
)
def test_bad_batch_raises_and_changes_nothing(values, labels, weights, message):
    gk = GKClass(epsilon=0.1, buffer_size=4)
    gk.update_many(np.arange(10.0), ["a"] * 10)
    gk.update(None, "a")
    before = snapshot(gk)
    with pytest.raises(ValueError, match=message):
        gk.update_many(values, labels, weights)
    assert snapshot(gk) == before


def test_zero_weights_register_the_class_only():
    gk = GKClass()
    gk.update(1.0, "a", 0.0)
    gk.update_many([2.0], ["b"], [0.0])
    assert gk.classes == ("a", "b") and gk.n == 0.0 and gk.n_tuples == 0
    table = gk.table()
    assert table.counts.shape == (0, 2) and table.missing.tolist() == [0.0, 0.0]


def test_new_class_mid_stream_gets_a_zero_column():
    gk = GKClass(epsilon=0.05, buffer_size=3)
    gk.update_many(np.arange(100.0), [0] * 100)
    early = gk.table()
    gk.update(150.0, "late")
    gk.update(-5.0, "late", 2.0)
    table = gk.table()
    assert early.classes == (0,) and table.classes == (0, "late")
    np.testing.assert_array_equal(table.counts[:, 1], [2.0] + [0.0] * (len(table.counts) - 2) + [1.0])
    assert table.counts[0, 0] == 0.0 and table.counts[:, 0].sum() == early.counts.sum() == 100.0
    aligned = table.aligned(["late", 0, "never"])
    assert aligned.counts[:, 2].sum() == 0.0 and aligned.counts[:, 0].sum() == 3.0


# --------------------------------------------------------------------------------------------
# Table, queries, copies
# --------------------------------------------------------------------------------------------


def test_small_stream_table_is_exact():
    """With 2εn < 1 nothing can merge: the table is the exact frequency table."""
    values = [3.0, 1.0, 2.0, 3.0, 3.0, -1.0, 2.0]
    labels = ["x", "y", "x", "y", "y", "x", "x"]
    gk = GKClass(epsilon=0.01)
    for v, c in zip(values, labels):
        gk.update(v, c)
    table = gk.table()
    assert isinstance(table, Bins)
    np.testing.assert_array_equal(table.upper_bounds, [-1.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(table.counts, [[1, 0], [0, 1], [2, 0], [1, 2]])
    assert gk.quantile(0.0) == -1.0 and gk.quantile(0.5) == 2.0 and gk.quantile(1.0) == 3.0
    assert gk.rank(2.0) == 4.0 and gk.rank(2.5) == 4.0 and gk.rank(-3) == 0.0


def test_table_is_a_frozen_copy():
    gk = GKClass(epsilon=0.05)
    gk.update_many(np.arange(50.0), ["a", "b"] * 25)
    table = gk.table()
    bounds = table.upper_bounds.copy()
    for array_ in (table.upper_bounds, table.counts, table.missing):
        with pytest.raises(ValueError):
            array_[0] = 99.0
    gk.update_many(np.arange(50.0, 500.0), ["c"] * 450)
    np.testing.assert_array_equal(table.upper_bounds, bounds)
    assert table.classes == ("a", "b")


def test_empty_summary_queries():
    gk = GKClass()
    assert gk.n == 0.0 and gk.n_tuples == 0 and gk.effective_epsilon == 0.0
    assert math.isnan(gk.quantile(0.5)) and gk.rank(1.0) == 0.0
    table = gk.table()
    assert table.upper_bounds.shape == (0,) and table.counts.shape == (0, 0)
    with pytest.raises(ValueError, match="phi"):
        gk.quantile(1.5)
    with pytest.raises(ValueError, match="missing"):
        gk.rank(math.nan)
    with pytest.raises(ValueError, match="real number"):
        gk.rank("a")
    assert not gk.problems()


def test_pickle_and_clone():
    rng = np.random.default_rng(9)
    gk = GKClass(quantiles=20, buffer_size=33)
    gk.update_many(rng.normal(size=500), rng.integers(0, 3, size=500))
    gk.update(None, 7)
    restored = pickle.loads(pickle.dumps(gk))
    copied = copy.deepcopy(gk)
    assert snapshot(restored) == snapshot(gk) == snapshot(copied)
    more = rng.normal(size=300)
    for summary in (gk, restored, copied):
        summary.update_many(more, np.full(300, 8))
    assert snapshot(restored) == snapshot(gk) == snapshot(copied)
    fresh = gk.clone()
    assert fresh.quantiles == 20 and fresh.buffer_size == 33 and fresh.epsilon is None
    assert fresh.n == 0.0 and fresh.classes == () and fresh.guaranteed_epsilon == pytest.approx(0.025)
    assert repr(fresh).startswith("GKClass")


def test_memory_usage_grows_with_tuples_and_classes():
    gk = GKClass(epsilon=0.01)
    empty = gk.memory_usage()
    rng = np.random.default_rng(1)
    gk.update_many(rng.uniform(size=5000), rng.integers(0, 5, size=5000))
    used = gk.memory_usage()
    assert isinstance(used, int) and used > empty
    assert used >= gk._counts.nbytes + 4 * gk._values.nbytes


def test_settle_and_n_atoms_read_what_a_rebuild_reads():
    """``settle`` takes the buffer (as reading the table does) and gives the weight held;
    ``n_atoms`` counts the bins MODL sees: a tuple whose counts a long decay took to 0 is none."""
    s = GKClass()
    for x, y in [(1.0, "a"), (2.0, "b"), (2.0, "a")]:
        s.update(x, y)
    assert s.settle() == 3.0 and not s._buffer_values and s.n_atoms() == 2
    s.decay(1e-200)
    s.decay(1e-200)  # the counts underflow to 0 (g is kept at the least positive float)
    s.update(3.0, "a")
    s.update(None, "b")
    s.settle()
    assert s.n_atoms() == 2  # the tuple of 3.0 and the missing values
    assert len(s.table().upper_bounds) == 3 and int((s.table().counts.sum(axis=1) > 0).sum()) == 1
