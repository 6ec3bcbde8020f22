"""Finite extremes (values near ±1.8e308) in every numeric summary
(``docs/algorithms/summaries.md#input-policy``): no summary refuses or loses a finite value, its
state stays finite and valid (``_check``), level 2 builds on its table; and the scale-safe forms
change nothing for ordinary values."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from wnb_stream import modl
from wnb_stream.summaries import CPiD, Gaussian, GKClass
from wnb_stream.summaries import gaussian as gaussian_module
from wnb_stream.tables import Bins

BIG = 1e308
STREAMS = {
    "alternating": [BIG if i % 2 else -BIG for i in range(200)],
    "max-float": [sys.float_info.max if i % 3 else -sys.float_info.max for i in range(150)],
    "mixed": [(-1) ** i * 10.0 ** (300 + i % 9) if i % 4 else float(i) for i in range(300)],
}
SUMMARIES = {"gk": GKClass, "cpid": lambda: CPiD(n_bins=20, warm_up=10), "cpid-default": CPiD, "gaussian": Gaussian}


def _table_is_valid(summary) -> None:
    table = summary.table()
    if isinstance(summary, Gaussian):
        assert np.isfinite(table.means).all() and np.isfinite(table.variances).all()
        density = gaussian_module.GaussianDensity(table)
        ll = density.log_likelihood([0.0, BIG, -BIG, None])
        assert np.isfinite(ll).all()
        table = gaussian_module.virtual_bins(table)
    assert isinstance(table, Bins) and np.isfinite(table.upper_bounds).all() and np.isfinite(table.counts).all()
    if len(table.upper_bounds):
        partition = modl.discretize(table)
        parts = partition.part_index(table.upper_bounds)
        step = np.diff(parts)
        assert ((step == 0) | (step == 1)).all(), "every interval holds consecutive bins"


@pytest.mark.parametrize("stream", list(STREAMS))
@pytest.mark.parametrize("name", list(SUMMARIES))
@pytest.mark.parametrize("form", ["update", "update_many"])
def test_extreme_finite_values_are_kept_and_the_state_stays_valid(name, stream, form):
    values = STREAMS[stream]
    labels = [i % 2 for i in range(len(values))]
    summary = SUMMARIES[name]()
    if form == "update":
        for x, y in zip(values, labels):
            summary.update(x, y)
            assert not summary.problems()
    else:
        for lo in range(0, len(values), 37):
            summary.update_many(np.array(values[lo : lo + 37]), np.array(labels[lo : lo + 37]))
            assert not summary.problems()
    table = summary.table()
    assert float(np.sum(table.missing)) == 0.0, "a finite value is never missing"
    total = float(np.sum(table.weights)) if isinstance(summary, Gaussian) else float(np.sum(table.counts))
    assert total == len(values)
    _table_is_valid(summary)


def test_cpid_breaks_stay_finite_across_the_whole_float_range():
    summary = CPiD()
    for i in range(400):
        summary.update(BIG if i % 2 else -BIG, i % 3)
    breaks = np.array(summary.breaks)
    assert np.isfinite(breaks).all() and (np.diff(breaks) > 0).all()
    assert breaks[0] <= -BIG * 0.99 and breaks[-1] >= BIG * 0.99


def test_gaussian_moments_saturate_instead_of_overflowing():
    summary = Gaussian()
    for i in range(10):
        summary.update(BIG if i % 2 else -BIG, "a")
    weight, mean, variance = summary.pooled
    assert weight == 10.0 and abs(mean) <= BIG and variance == sys.float_info.max / 10.0
    table = summary.table()
    assert table.means[0] == mean and math.isfinite(table.variances[0])


def _welford_reference(values, labels, weights):
    """The Welford/West update as it was written before the scale-safe fallback."""
    state: dict = {}
    for x, y, w in zip(values, labels, weights):
        total, mean, m2 = state.get(y, (0.0, 0.0, 0.0))
        total += w
        delta = x - mean
        mean += (w / total) * delta
        m2 += w * delta * (x - mean)
        state[y] = (total, mean, m2)
    return state


def test_gaussian_is_bit_identical_to_the_plain_welford_update_on_ordinary_values():
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(5.0, 3.0, 500), rng.normal(-1e6, 1e5, 200), rng.uniform(-1e150, 1e150, 50)])
    labels = rng.integers(0, 3, len(values)).tolist()
    weights = rng.choice([0.5, 1.0, 2.0, 3.0], len(values)).tolist()
    summary = Gaussian()
    for x, y, w in zip(values.tolist(), labels, weights):
        summary.update(x, y, w)
    expected = _welford_reference(values.tolist(), labels, weights)
    table = summary.table()
    for j, y in enumerate(table.classes):
        total, mean, m2 = expected[y]
        assert table.weights[j] == total and table.means[j] == mean and summary._m2[j] == m2


def test_cpid_grid_is_bit_identical_on_ordinary_ranges():
    rng = np.random.default_rng(4)
    for scale in (1e-3, 1.0, 1e6, 1e300):
        summary = CPiD(n_bins=12, warm_up=10)
        values = (rng.normal(size=10) * scale).tolist()
        for x in values:
            summary.update(x, 0)
        low, high = min(values), max(values)
        step = high / 10 - low / 10
        assert summary.breaks == tuple(low + i * step for i in range(11))


def test_virtual_bins_of_means_at_the_largest_float_stay_finite():
    summary = Gaussian()
    for i in range(20):
        summary.update(sys.float_info.max if i % 2 else sys.float_info.max * 0.999, i % 2)
    bins = gaussian_module.virtual_bins(summary.table())
    assert np.isfinite(bins.upper_bounds).all() and (np.diff(bins.upper_bounds) > 0).all()
    np.testing.assert_allclose(bins.counts.sum(axis=0), [10.0, 10.0])
