"""Tests of the cPiD summary (``docs/algorithms/summaries.md#cpid``)."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.summaries.cpid import CPiD


def _state(summary: CPiD):
    """Everything that defines a CPiD, for equality checks."""
    return pickle.dumps(
        (
            summary._classes.labels,
            summary._missing,
            summary._buffer,
            summary._breaks,
            summary._counts,
            summary._class_counts,
            summary._total,
            summary._min_seen,
            summary._max_seen,
        )
    )


def _feed_loop(summary, values, labels, weights=None):
    weights = np.ones(len(values)) if weights is None else weights
    for x, y, w in zip(np.asarray(values, dtype=object).tolist(), list(labels), np.asarray(weights).tolist()):
        summary.update(x, y, w)


def _class_totals(values, labels, weights, classes):
    """Oracle: per-class weight of the non-missing values and of the missing ones."""
    values = np.array([np.nan if v is None else v for v in values], dtype=float)
    present = np.isfinite(values)
    labels = np.asarray(labels)
    inside = np.array([weights[present & (labels == c)].sum() for c in classes])
    missing = np.array([weights[~present & (labels == c)].sum() for c in classes])
    return inside, missing


# -- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, name",
    [
        ({"n_bins": 3}, "n_bins"),
        ({"n_bins": 20.5}, "n_bins"),
        ({"n_bins": True}, "n_bins"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"warm_up": 0}, "warm_up"),
        ({"min_width": -1e-9}, "min_width"),
        ({"min_width": 1.0}, "min_width"),
        ({"tail_split": "double"}, "tail_split"),
    ],
)
def test_bad_parameters_are_named(params, name):
    with pytest.raises(ValueError, match=name):
        CPiD(**params)


def test_clone_keeps_parameters_and_drops_state():
    summary = CPiD(n_bins=30, alpha=0.1, warm_up=10, tail_split="step")
    summary.update_many(np.arange(50.0), np.zeros(50, dtype=int))
    clone = summary.clone()
    assert clone._get_params() == summary._get_params()
    assert clone.n == 0 and clone.table().counts.shape == (0, 0)


# -- warm-up ----------------------------------------------------------------------------------


def test_warm_up_table_is_exact():
    summary = CPiD(warm_up=100)
    values = [3.0, 1.0, 3.0, 2.0, None, 1.0]
    labels = ["a", "b", "a", "b", "a", "a"]
    _feed_loop(summary, values, labels)
    table = summary.table()
    assert table.classes == ("a", "b")
    assert table.upper_bounds.tolist() == [1.0, 2.0, 3.0]
    assert table.counts.tolist() == [[1.0, 1.0], [0.0, 1.0], [2.0, 0.0]]
    assert table.missing.tolist() == [1.0, 0.0]
    assert not summary.problems()


def test_number_of_bins_is_fixed_after_warm_up():
    rng = np.random.default_rng(0)
    summary = CPiD(n_bins=50, warm_up=20)
    for i, x in enumerate(rng.standard_t(2, size=5000).tolist()):
        summary.update(x, i % 3)
        if i >= 19:
            assert len(summary._counts) == 50 and len(summary.breaks) == 49
    assert not summary.problems()


# -- property test: random operations then _check ---------------------------------------------


segments = st.tuples(
    st.sampled_from(["normal", "constant", "uniform", "shift", "with_missing"]),
    st.integers(1, 400),  # length
    st.integers(0, 4),  # largest class label
    st.booleans(),  # batch or loop
    st.sampled_from(["ones", "integers", "floats"]),
)


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(segments, min_size=1, max_size=6), st.integers(0, 2**32 - 1), st.sampled_from(["step", "halfway"]))
def test_random_streams_keep_invariants_and_conserve_counts(plan, seed, tail_split):
    rng = np.random.default_rng(seed)
    summary = CPiD(n_bins=16, warm_up=25, tail_split=tail_split)
    all_values, all_labels, all_weights = [], [], []
    for kind, size, top_class, batch, weighting in plan:
        if kind == "normal":
            values = rng.normal(rng.uniform(-5, 5), rng.uniform(0.1, 3), size=size)
        elif kind == "constant":
            values = np.full(size, rng.uniform(-100, 100))
        elif kind == "uniform":
            values = rng.uniform(-1e3, 1e3, size=size)
        elif kind == "shift":
            values = rng.normal(50, 1, size=size)
        else:
            values = rng.normal(size=size)
            values[rng.random(size) < 0.3] = np.nan
            values[rng.random(size) < 0.1] = np.inf
        labels = rng.integers(0, top_class + 1, size=size)
        weights = {
            "ones": np.ones(size),
            "integers": rng.integers(0, 4, size=size).astype(float),
            "floats": rng.uniform(0, 2, size=size),
        }[weighting]
        if batch:
            summary.update_many(values, labels, weights)
        else:
            _feed_loop(summary, values, labels, weights)
        assert not summary.problems()
        if summary._started:
            assert len(summary._counts) == summary.n_bins
        all_values.extend(values.tolist())
        all_labels.extend(labels.tolist())
        all_weights.extend(weights.tolist())
    weights = np.array(all_weights)
    table = summary.table()
    inside, missing = _class_totals(all_values, all_labels, weights, table.classes)
    assert np.allclose(table.counts.sum(axis=0), inside, rtol=1e-12, atol=1e-9)
    assert np.allclose(table.missing, missing, rtol=1e-12, atol=1e-9)
    assert math.isclose(table.n, summary.n, rel_tol=1e-12, abs_tol=1e-9)
    assert math.isclose(summary.n, weights.sum(), rel_tol=1e-12, abs_tol=1e-9)
    assert np.all(np.diff(table.upper_bounds) > 0)
    assert np.all(table.counts >= 0)


def test_unit_weights_conserve_counts_exactly():
    rng = np.random.default_rng(1)
    values = rng.lognormal(0, 2, size=30000)
    values[rng.random(len(values)) < 0.02] = np.nan
    labels = rng.integers(0, 3, size=len(values))
    summary = CPiD()
    summary.update_many(values, labels)
    table = summary.table()
    present = ~np.isnan(values)
    expected = np.bincount(labels[present], minlength=3).astype(float)
    assert table.counts.sum(axis=0).tolist() == expected[list(table.classes)].tolist()
    assert table.counts.sum() + table.missing.sum() == summary.n == len(values)


# -- update_many equals the loop ---------------------------------------------------------------


@pytest.mark.parametrize("tail_split", ["step", "halfway"])
def test_update_many_equals_loop(tail_split):
    rng = np.random.default_rng(2)
    values = np.concatenate([rng.normal(size=4000), rng.normal(8, 2, size=4000), rng.uniform(-20, 0, size=2000)])
    values[rng.random(len(values)) < 0.05] = np.nan
    labels = np.concatenate([rng.integers(0, 2, size=6000), rng.integers(0, 4, size=4000)])  # classes 2, 3 appear late
    weights = rng.integers(0, 3, size=len(values)).astype(float)
    loop, batch, chunks = (CPiD(n_bins=40, tail_split=tail_split) for _ in range(3))
    _feed_loop(loop, values, labels, weights)
    batch.update_many(values, labels, weights)
    for start in range(0, len(values), 777):
        chunks.update_many(values[start : start + 777], labels[start : start + 777], weights[start : start + 777])
    for other in (batch, chunks):
        assert not other.problems()
        assert other._breaks == loop._breaks
        assert other._counts == loop._counts
        assert other._class_counts == loop._class_counts
        assert other._missing == loop._missing
        assert other.classes == loop.classes


# -- drifting and degenerate streams -----------------------------------------------------------


@pytest.mark.parametrize("tail_split", ["step", "halfway"])
def test_shifted_stream_gets_bins_where_its_mass_is(tail_split):
    rng = np.random.default_rng(3)
    summary = CPiD(tail_split=tail_split)
    summary.update_many(rng.normal(size=20000), np.zeros(20000, dtype=int))
    summary.update_many(rng.normal(10, 1, size=100000), np.ones(100000, dtype=int))
    assert not summary.problems()
    table = summary.table()
    assert len(table.upper_bounds) == summary.n_bins
    new_region = table.upper_bounds > 5
    assert new_region.mean() > 0.5  # most bins cover the new mass
    # the new class's counts are where its values are (PiD's halving misplaces some with "step")
    placed = table.counts[new_region, 1].sum() / 100000
    assert placed > (0.99 if tail_split == "halfway" else 0.8)


def test_halfway_tails_follow_a_drift_better_than_fixed_steps():
    rng = np.random.default_rng(4)
    values = np.linspace(0, 20, 50000) + rng.normal(size=50000)

    def cdf_error(summary):
        table = summary.table()
        estimated = np.cumsum(table.counts.sum(axis=1))
        exact = np.searchsorted(np.sort(values), table.upper_bounds, side="right")
        return np.abs(estimated - exact).max() / len(values)

    errors = {}
    for tail_split in ("step", "halfway"):
        summary = CPiD(tail_split=tail_split)
        summary.update_many(values, np.zeros(len(values), dtype=int))
        errors[tail_split] = cdf_error(summary)
    assert errors["halfway"] < 0.02 < errors["step"]


def test_constant_stream_does_not_blow_up():
    summary = CPiD()
    for _ in range(20000):
        summary.update(3.0, "a")
    assert not summary.problems()
    table = summary.table()
    assert np.all(np.isfinite(table.upper_bounds)) and np.all(np.diff(table.upper_bounds) > 0)
    home = np.searchsorted(table.upper_bounds, 3.0)  # the bin holding 3.0
    low = table.upper_bounds[home - 1] if home else -np.inf
    assert low < 3.0 <= table.upper_bounds[home]
    assert table.counts[home, 0] / 20000 > 0.95
    assert table.upper_bounds[home] - low < 1e-6


def test_constant_warm_up_then_other_values():
    summary = CPiD(n_bins=20, warm_up=10)
    summary.update_many(np.zeros(10), np.zeros(10, dtype=int))
    summary.update_many(np.ones(2000), np.ones(2000, dtype=int))
    assert not summary.problems()
    table = summary.table()
    # a cut separates the two values: no bin holds both classes
    assert np.all((table.counts[:, 0] == 0) | (table.counts[:, 1] == 0))
    assert table.counts.sum(axis=0).tolist() == [10.0, 2000.0]


@pytest.mark.parametrize("values", [[0.0, 0.0, 5e-324], [-5e-324, 5e-324, 0.0], [5e-324, 0.0, 1e-323]])
@pytest.mark.parametrize("tail_split", ["step", "halfway"])
def test_a_warm_up_range_below_the_float_step_keeps_breaks_distinct(values, tail_split):
    """A warm-up spanning a few subnormals (hypothesis found 0, 0, 5e-324): (high − low)/inner
    underflows to 0, and the grid falls back to the constant warm-up's unit window."""
    summary = CPiD(n_bins=5, warm_up=3, tail_split=tail_split)
    for x in values:
        summary.update(x, "x")
    assert not summary.problems()
    table = summary.table()
    assert np.all(np.diff(table.upper_bounds) > 0) and table.counts.sum() == 3.0
    summary.update_many(np.array([1e-300, -1.0, 2.0]), np.zeros(3, dtype=int))
    assert not summary.problems()


def test_extreme_magnitudes_keep_breaks_distinct():
    summary = CPiD(n_bins=10, warm_up=5)
    summary.update_many(np.array([1e16, 1e16 + 2, 1e16 + 4, 1e16, 1e16 + 8, 1e300, -1e300]), np.zeros(7, dtype=int))
    assert not summary.problems()
    assert np.all(np.diff(summary.table().upper_bounds) > 0)


# -- missing values, classes, bad input ----------------------------------------------------------


def test_missing_values_are_counted_per_class_apart():
    summary = CPiD(warm_up=3)
    _feed_loop(summary, [1.0, None, np.nan, np.inf, -np.inf, 2.0, 3.0, 4.0], list("abababab"))
    table = summary.table()
    assert table.missing.tolist() == [2.0, 2.0]
    assert table.counts.sum(axis=0).tolist() == [2.0, 2.0]
    assert not summary.problems()


def test_new_class_mid_stream_gets_a_zero_column():
    rng = np.random.default_rng(5)
    summary = CPiD(n_bins=20)
    summary.update_many(rng.normal(size=500), np.zeros(500, dtype=int))
    before = summary.table()
    summary.update(0.5, "late")
    table = summary.table()
    assert table.classes == (0, "late")
    assert table.counts[:, 1].sum() == 1.0
    assert before.aligned(table.classes).counts.shape[1] == 2
    assert not summary.problems()


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.update("1.5", 0),
        lambda s: s.update(1.0, 0, -1.0),
        lambda s: s.update(1.0, 0, math.nan),
        lambda s: s.update(1.0, 0, math.inf),
        lambda s: s.update_many(np.array([1.0, 2.0, "x"], dtype=object), [0, 1, 0]),
        lambda s: s.update_many(np.array(["1", "2"]), [0, 1]),
        lambda s: s.update_many([1.0, 2.0], [0, 1], [1.0, -2.0]),
        lambda s: s.update_many([1.0, 2.0], [0, 1], [1.0, np.nan]),
        lambda s: s.update_many([1.0, 2.0], [0, 1, 0]),
    ],
)
@pytest.mark.parametrize("n_before", [5, 500])  # during and after the warm-up
def test_bad_input_raises_and_leaves_summary_unchanged(call, n_before):
    rng = np.random.default_rng(6)
    summary = CPiD(n_bins=20, warm_up=50)
    summary.update_many(rng.normal(size=n_before), rng.integers(0, 2, size=n_before))
    before = _state(summary)
    with pytest.raises(ValueError):
        call(summary)
    assert _state(summary) == before


# -- merge ------------------------------------------------------------------------------------


def _cdf_distance(a, b):
    """Largest gap between the cumulative counts of two Bins tables, over both grids, / n."""
    grid = np.union1d(a.upper_bounds, b.upper_bounds)

    def cumulative(table):
        totals = np.concatenate(([0.0], np.cumsum(table.counts.sum(axis=1))))
        return totals[np.searchsorted(table.upper_bounds, grid, side="left")]

    return np.abs(cumulative(a) - cumulative(b)).max() / a.counts.sum()


def test_merge_approximates_one_summary_fed_both_streams():
    rng = np.random.default_rng(7)
    first = rng.normal(0, 1, size=20000)
    second = rng.normal(2, 2, size=20000)
    first_labels = rng.integers(0, 2, size=20000)
    second_labels = rng.integers(1, 3, size=20000)  # class 2 only in the second stream
    a, b, both = CPiD(), CPiD(), CPiD()
    a.update_many(first, first_labels)
    b.update_many(second, second_labels)
    both.update_many(first, first_labels)
    both.update_many(second, second_labels)
    a.merge(b)
    assert not a.problems()
    merged = a.table()
    assert set(merged.classes) == {0, 1, 2}
    single = both.table().aligned(merged.classes)
    assert len(a._counts) == a.n_bins
    # totals conserved (up to rounding), class totals too
    assert math.isclose(a.n, 40000, rel_tol=1e-12)
    assert np.allclose(merged.counts.sum(axis=0), single.counts.sum(axis=0), rtol=1e-12)
    # the distribution is close to the one-pass summary's
    assert _cdf_distance(merged, single) < 0.02


def test_merge_with_warm_up_summaries_replays_them():
    rng = np.random.default_rng(8)
    values = rng.normal(size=3000)
    labels = rng.integers(0, 2, size=3000)
    started, warming = CPiD(n_bins=30), CPiD(n_bins=30)
    started.update_many(values[:2970], labels[:2970])
    warming.update_many(values[2970:], labels[2970:])  # 30 values: still warming up
    reference = copy.deepcopy(started)
    _feed_loop(reference, values[2970:], labels[2970:])
    merged = copy.deepcopy(started)
    merged.merge(warming)  # the buffer is replayed like a stream
    assert _state(merged) == _state(reference)
    adopted = copy.deepcopy(warming)
    adopted.merge(started)  # adopts the grid, then replays its own buffer
    assert not adopted.problems()
    assert math.isclose(adopted.n, 3000) and len(adopted._counts) == 30
    assert _cdf_distance(adopted.table(), reference.table()) < 0.02


def test_merge_with_different_numbers_of_bins():
    rng = np.random.default_rng(9)
    a, b, warming = CPiD(n_bins=50), CPiD(n_bins=80), CPiD(n_bins=20)
    a.update_many(rng.normal(size=5000), np.zeros(5000, dtype=int))
    b.update_many(rng.normal(1, 1, size=5000), np.ones(5000, dtype=int))
    warming.update_many(rng.normal(size=10), np.zeros(10, dtype=int))
    a.merge(b)
    warming.merge(b)
    for summary, total in ((a, 10000), (warming, 5010)):
        assert not summary.problems()
        assert math.isclose(summary.n, total, rel_tol=1e-12)
    assert len(warming._counts) == 20


def test_merge_with_itself_doubles_and_wrong_type_fails():
    rng = np.random.default_rng(10)
    summary = CPiD(n_bins=20)
    summary.update_many(rng.normal(size=1000), rng.integers(0, 2, size=1000))
    table = summary.table()
    summary.merge(summary)
    assert not summary.problems()
    assert np.allclose(summary.table().counts.sum(axis=0), 2 * table.counts.sum(axis=0))
    with pytest.raises(TypeError, match="CPiD"):
        summary.merge(object())


def test_memory_is_constant_after_warm_up():
    rng = np.random.default_rng(11)
    summary = CPiD()
    summary.update_many(rng.normal(size=1000), rng.integers(0, 2, size=1000))
    size = summary.memory_usage()
    summary.update_many(rng.normal(5, 3, size=100000), rng.integers(0, 2, size=100000))
    assert summary.memory_usage() == size
    assert 10_000 < size < 100_000
