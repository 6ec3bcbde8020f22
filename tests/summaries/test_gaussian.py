"""Tests of the per-class Gaussian summary and its density (``docs/algorithms/summaries.md#gaussian``)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.summaries.gaussian import (
    LOG_DENSITY_FLOOR,
    Gaussian,
    GaussianDensity,
    log_likelihood,
    pooled_moments,
    prior_cost,
    virtual_bins,
)
from wnb_stream.tables import Moments


def _state(summary: Gaussian):
    return pickle.dumps(
        (summary._classes.labels, summary._weights, summary._means, summary._m2, summary._missing)
    )


def _feed_loop(summary, values, labels, weights):
    for x, y, w in zip(np.asarray(values, dtype=object).tolist(), list(labels), np.asarray(weights).tolist()):
        summary.update(x, y, w)


def _numpy_moments(values, labels, weights, classes):
    """Oracle: weighted mean and ML variance per class with NumPy (missing values dropped)."""
    values = np.asarray(values, dtype=float)
    labels = np.asarray(labels)
    present = np.isfinite(values)
    out = []
    for c in classes:
        mask = present & (labels == c)
        w = weights[mask]
        if w.sum() == 0:
            out.append((0.0, 0.0, 0.0))
            continue
        mean = np.average(values[mask], weights=w)
        out.append((w.sum(), mean, np.average((values[mask] - mean) ** 2, weights=w)))
    return np.array(out)


def _stream(seed, n=3000, n_classes=3):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n)
    values = rng.normal(labels * 2.0 - 1.0, 1.0 + labels, size=n) + 1e4  # an offset tests stability
    values[rng.random(n) < 0.05] = np.nan
    values[rng.random(n) < 0.01] = np.inf
    weights = rng.uniform(0, 3, size=n)
    return values, labels, weights


# -- the summary ------------------------------------------------------------------------------


def test_moments_match_numpy():
    values, labels, weights = _stream(0)
    summary = Gaussian()
    _feed_loop(summary, values, labels, weights)
    assert not summary.problems()
    table = summary.table()
    expected = _numpy_moments(values, labels, weights, table.classes)
    assert np.allclose(table.weights, expected[:, 0], rtol=1e-12)
    assert np.allclose(table.means, expected[:, 1], rtol=1e-12)
    assert np.allclose(table.variances, expected[:, 2], rtol=1e-8)
    missing = ~np.isfinite(values)
    assert np.allclose(table.missing, [weights[missing & (labels == c)].sum() for c in table.classes])
    total, mean, variance = summary.pooled
    present = ~missing
    assert math.isclose(total, weights[present].sum(), rel_tol=1e-12)
    assert math.isclose(mean, np.average(values[present], weights=weights[present]), rel_tol=1e-12)
    assert math.isclose(
        variance, np.average((values[present] - mean) ** 2, weights=weights[present]), rel_tol=1e-8
    )


def test_update_many_equals_loop():
    values, labels, weights = _stream(1)
    loop, batch, chunks = Gaussian(), Gaussian(), Gaussian()
    _feed_loop(loop, values, labels, weights)
    batch.update_many(values, labels, weights)
    for start in range(0, len(values), 500):
        chunks.update_many(values[start : start + 500], labels[start : start + 500], weights[start : start + 500])
    expected = loop.table()
    for other in (batch, chunks):
        assert not other.problems()
        table = other.table()
        assert table.classes == expected.classes
        for name in ("weights", "means", "variances", "missing"):
            assert np.allclose(getattr(table, name), getattr(expected, name), rtol=1e-9), name
        assert np.allclose(other.pooled, loop.pooled, rtol=1e-9)


def test_merge_equals_one_summary_fed_both_streams():
    values, labels, weights = _stream(2)
    a, b, both = Gaussian(), Gaussian(), Gaussian()
    # the two halves see different classes first, and class 2 only in the second half
    first = labels[:1500] < 2
    a.update_many(values[:1500][first], labels[:1500][first], weights[:1500][first])
    b.update_many(values[1500:], labels[1500:], weights[1500:])
    both.update_many(values[:1500][first], labels[:1500][first], weights[:1500][first])
    both.update_many(values[1500:], labels[1500:], weights[1500:])
    a.merge(b)
    assert not a.problems()
    merged, single = a.table(), both.table().aligned(a.table().classes)
    for name in ("weights", "means", "variances", "missing"):
        assert np.allclose(getattr(merged, name), getattr(single, name), rtol=1e-9), name
    assert np.allclose(a.pooled, both.pooled, rtol=1e-9)
    with pytest.raises(TypeError, match="Gaussian"):
        a.merge(object())


def test_new_class_mid_stream():
    summary = Gaussian()
    summary.update_many([1.0, 2.0, 3.0], ["a", "a", "a"])
    summary.update(10.0, "b")
    summary.update(None, "c")
    table = summary.table()
    assert table.classes == ("a", "b", "c")
    assert table.weights.tolist() == [3.0, 1.0, 0.0]
    assert table.means.tolist() == [2.0, 10.0, 0.0]
    assert table.missing.tolist() == [0.0, 0.0, 1.0]
    assert np.all(np.isfinite(log_likelihood(table, [0.0, 10.0, 1e6])))
    assert not summary.problems()


def test_zero_weights_register_the_class_but_change_nothing():
    summary = Gaussian()
    summary.update(5.0, "a", 0.0)
    summary.update_many([1.0, 2.0], ["b", "b"], [0.0, 0.0])
    table = summary.table()
    assert table.classes == ("a", "b") and table.weights.tolist() == [0.0, 0.0]
    assert table.means.tolist() == [0.0, 0.0] and summary.n == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.update("3.0", 0),
        lambda s: s.update(b"3", 0),
        lambda s: s.update(1.0, 0, -1.0),
        lambda s: s.update(1.0, 0, "1"),
        lambda s: s.update_many(np.array([1.0, "a"], dtype=object), [0, 1]),
        lambda s: s.update_many(np.array([1 + 2j, 3]), [0, 1]),
        lambda s: s.update_many([1.0, 2.0], [0, 1], [np.inf, 1.0]),
        lambda s: s.update_many([1.0, 2.0], [0]),
    ],
)
def test_bad_input_raises_and_leaves_summary_unchanged(call):
    summary = Gaussian()
    summary.update_many([1.0, 2.0, 4.0], [0, 1, 0])
    before = _state(summary)
    with pytest.raises(ValueError):
        call(summary)
    assert _state(summary) == before


def test_clone_and_memory():
    summary = Gaussian()
    summary.update_many(np.arange(100.0), np.arange(100) % 2)
    assert summary.clone().n == 0
    assert 0 < summary.memory_usage() < 2000


# -- the density ------------------------------------------------------------------------------


def _analytic(x, mean, variance):
    return -0.5 * math.log(2 * math.pi * variance) - (x - mean) ** 2 / (2 * variance)


def test_log_likelihood_is_the_gaussian_log_density_with_the_floor():
    moments = Moments([20.0, 30.0], [1.0, -2.0], [0.5, 4.0], ("a", "b"), [0.0, 0.0])
    _, _, pooled_variance = pooled_moments(moments)
    values = [0.0, 1.5, -3.0, None, math.nan, math.inf]
    out = log_likelihood(moments, values, var_smoothing=1e-2)
    assert out.shape == (6, 2)
    for i, x in enumerate(values[:3]):
        for j in range(2):
            variance = moments.variances[j] + 1e-2 * pooled_variance
            assert out[i, j] == pytest.approx(_analytic(x, moments.means[j], variance), rel=1e-12)
    assert np.all(out[3:] == 0.0)  # missing values: 0 for every class
    # max_variance: the largest pooled variance over all variables sets the floor
    wide = log_likelihood(moments, [0.0], var_smoothing=1e-2, max_variance=100.0)
    assert wide[0, 0] == pytest.approx(_analytic(0.0, 1.0, 0.5 + 1.0), rel=1e-12)


def test_classes_with_weight_below_two_use_the_pooled_gaussian():
    moments = Moments([1.0, 50.0, 0.0], [7.0, 0.0, 0.0], [0.0, 1.0, 0.0], ("a", "b", "c"), [0.0, 0.0, 0.0])
    _, mean, variance = pooled_moments(moments)
    out = log_likelihood(moments, [3.0], var_smoothing=0.0)
    assert out[0, 0] == pytest.approx(_analytic(3.0, mean, variance), rel=1e-12)
    assert out[0, 2] == out[0, 0]


@settings(max_examples=examples(100), deadline=None)
@given(
    constants=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=4),
    repeats=st.lists(st.integers(1, 20), min_size=4, max_size=4),
    queries=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none()), min_size=1, max_size=20
    ),
    var_smoothing=st.sampled_from([0.0, 1e-9, 1e-3]),
)
def test_density_is_finite_for_features_constant_within_a_class(constants, repeats, queries, var_smoothing):
    summary = Gaussian()
    for j, (value, count) in enumerate(zip(constants, repeats)):
        summary.update_many(np.full(count, value), np.full(count, j))
    table = summary.table()
    assert np.all(table.variances == 0)
    out = log_likelihood(table, queries + constants, var_smoothing=var_smoothing)
    assert out.shape == (len(queries) + len(constants), len(constants))
    assert np.all(np.isfinite(out)) and np.all(out >= LOG_DENSITY_FLOOR)
    # at its own constant, a class with weight >= 2 is (weakly) the most likely one
    for j, (value, count) in enumerate(zip(constants, repeats)):
        if count >= 2:
            row = out[len(queries) + j]
            assert row[j] >= row.max() - 1e-9 * abs(row.max())


def test_density_of_extreme_values_stays_finite():
    moments = Moments([5.0, 5.0], [1e300, -1e300], [0.0, 1e300], ("a", "b"), [0.0, 0.0])
    out = log_likelihood(moments, [1e308, -1e308, 0.0])
    assert np.all(np.isfinite(out))


def test_bad_density_arguments():
    moments = Moments([5.0], [0.0], [1.0], ("a",), [0.0])
    with pytest.raises(ValueError, match="var_smoothing"):
        log_likelihood(moments, [1.0], var_smoothing=-1.0)
    with pytest.raises(ValueError, match="max_variance"):
        log_likelihood(moments, [1.0], max_variance=math.inf)
    with pytest.raises(ValueError):
        log_likelihood(moments, ["a"])


# -- prior cost and virtual bins --------------------------------------------------------------


def test_prior_cost_is_j_log_n():
    moments = Moments([30.0, 60.0, 10.0], [0.0, 1.0, 2.0], [1.0, 1.0, 1.0], ("a", "b", "c"), [0.0, 0.0, 0.0])
    assert prior_cost(moments) == pytest.approx(3 * math.log(100.0))
    empty = Moments([0.0, 1.0], [0.0, 0.0], [0.0, 0.0], ("a", "b"), [0.0, 0.0])
    assert prior_cost(empty) == 0.0


@settings(max_examples=examples(50), deadline=None)
@given(
    weights=st.lists(st.floats(0, 1e4), min_size=1, max_size=5),
    means=st.lists(st.floats(-1e3, 1e3), min_size=5, max_size=5),
    variances=st.lists(st.floats(0, 1e3), min_size=5, max_size=5),
    n_bins=st.integers(1, 40),
)
def test_virtual_bins_hold_each_class_total(weights, means, variances, n_bins):
    n = len(weights)
    moments = Moments(weights, means[:n], variances[:n], tuple(range(n)), np.zeros(n))
    bins = virtual_bins(moments, n_bins=n_bins)
    assert len(bins.upper_bounds) <= n_bins
    assert np.all(np.diff(bins.upper_bounds) > 0)
    assert np.all(bins.counts >= 0)
    if sum(weights) > 0:
        assert np.allclose(bins.counts.sum(axis=0), weights, rtol=1e-9, atol=1e-9)


def test_virtual_bins_separate_separated_classes():
    moments = Moments([500.0, 500.0], [-5.0, 5.0], [1.0, 1.0], ("a", "b"), [3.0, 0.0])
    bins = virtual_bins(moments, n_bins=10)
    assert len(bins.upper_bounds) == 10
    # equal-frequency cuts of the pooled mixture: each bin holds about a tenth of the mass
    assert np.allclose(bins.counts.sum(axis=1), 100.0, rtol=0.05)
    assert np.all(bins.counts[:5, 0] > 99 * bins.counts[:5, 1])
    assert np.all(bins.counts[5:, 1] > 99 * bins.counts[5:, 0])
    assert bins.missing.tolist() == [3.0, 0.0]
    with pytest.raises(ValueError, match="n_bins"):
        virtual_bins(moments, n_bins=0)


def test_virtual_bins_of_a_constant_feature():
    summary = Gaussian()
    summary.update_many(np.full(50, 2.5), np.zeros(50, dtype=int))
    bins = virtual_bins(summary.table(), n_bins=8)
    assert np.all(np.isfinite(bins.upper_bounds)) and np.all(np.diff(bins.upper_bounds) > 0)
    assert bins.counts.sum() == pytest.approx(50.0)
    assert bins.upper_bounds[0] < 2.5 + 1e-3 and bins.upper_bounds[-1] > 2.5


@pytest.mark.parametrize("n_classes", [2, 12])  # the Python path (<= 8 classes) and the NumPy one
def test_density_one_value_path_equals_the_batch_path(n_classes):
    rng = np.random.default_rng(12)
    summary = Gaussian()
    labels = rng.integers(0, n_classes, size=500)
    summary.update_many(rng.normal(labels, 1 + labels), labels)
    summary.update_many(np.full(5, 3.0), np.full(5, n_classes))  # a constant class
    density = GaussianDensity(summary.table(), var_smoothing=1e-6)
    values = [0.0, -2.5, 3.0, 1e10, -1e308, 1e308, None, math.nan, math.inf, 7]
    batch = density.log_likelihood(values)
    assert np.array_equal(batch, log_likelihood(summary.table(), values, var_smoothing=1e-6))
    for value, row in zip(values, batch):
        assert np.allclose(density.log_likelihood_one(value), row, rtol=1e-12, atol=0)
    assert np.all(np.isfinite(batch))
    with pytest.raises(ValueError):
        density.log_likelihood_one("3.0")
