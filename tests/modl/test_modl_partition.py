"""The partition values (docs/algorithms/modl.md#log-probabilities): estimator, lookups, markers."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.modl import MISSING, STAR, Groups, Intervals, log_probabilities


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=3, max_size=3), min_size=1, max_size=8))
def test_estimator_columns_are_distributions_and_never_zero(rows):
    counts = np.array(rows)
    counts[:, 2] = 0.0  # a class never seen
    log_prob = log_probabilities(counts)
    assert log_prob.shape == counts.shape
    assert np.all(np.isfinite(log_prob))
    assert np.allclose(np.exp(log_prob).sum(axis=0), 1.0)
    assert np.allclose(np.exp(log_prob[:, 2]), 1.0 / len(counts))


def test_estimator_formula():
    counts = np.array([[8.0, 1.0], [2.0, 9.0]])
    epsilon = 1.0 / 21.0
    expected = np.log((counts + epsilon) / (counts.sum(axis=0) + 2 * epsilon))
    assert np.allclose(log_probabilities(counts), expected)


def _intervals(missing_part=-1, with_missing_row=False):
    counts = [[5.0, 1.0], [1.0, 5.0], [3.0, 3.0]]
    if with_missing_row:
        counts = [[0.0, 4.0]] + counts
    return Intervals(
        classes=("a", "b"),
        upper_bounds=[1.0, 2.0, 3.0],
        counts=counts,
        missing_part=missing_part,
        cost=10.0,
        null_cost=12.0,
        level=1 - 10 / 12,
        prior_cost=3.0,
        method="exact",
    )


@pytest.mark.parametrize("missing_part, with_missing_row", [(-1, False), (0, False), (0, True)])
def test_interval_lookup_vector_and_scalar_paths_agree(missing_part, with_missing_row):
    intervals = _intervals(missing_part, with_missing_row)
    intervals._check()
    offset = 1 if with_missing_row else 0
    values = np.array([-np.inf, -5.0, 1.0, 1.0 + 1e-12, 2.0, 2.5, 3.0, 7.0, np.inf, np.nan])
    index = intervals.part_index(values)
    finite = [0, 0, 1, 1, 2, 2, 2]
    assert index[1:8].tolist() == [offset + i for i in finite]
    assert index[[0, 8, 9]].tolist() == [missing_part] * 3
    log_lik = intervals.log_likelihood(values)
    assert log_lik.shape == (len(values), 2)
    for x, row in zip(values, log_lik):
        assert np.array_equal(intervals.log_likelihood_one(x), row)
    if missing_part == -1:
        assert np.all(log_lik[[0, 8, 9]] == 0.0)
    # the scalar path returns read-only rows
    with pytest.raises(ValueError):
        intervals.log_likelihood_one(1.5)[0] = 0.0


def test_groups_lookup_and_markers():
    groups = Groups(
        classes=(0, 1),
        groups=[("x", "y"), ("z", STAR), (MISSING,)],
        counts=[[9.0, 1.0], [1.0, 9.0], [2.0, 2.0]],
        star_part=1,
        missing_part=2,
        garbage_part=-1,
        cost=5.0,
        null_cost=9.0,
        level=1 - 5 / 9,
        prior_cost=2.0,
    )
    groups._check()
    values = np.array(["x", "y", "z", "new", None, math.nan, 1.5], dtype=object)
    assert groups.part_index(values).tolist() == [0, 0, 1, 1, 2, 2, 1]
    assert groups.log_likelihood(values).shape == (7, 2)
    assert repr(STAR) == "<star>" and repr(MISSING) == "<missing>"
    assert pickle.loads(pickle.dumps(STAR)) is STAR and pickle.loads(pickle.dumps(MISSING)) is MISSING


def test_check_catches_a_broken_value():
    broken = Intervals(
        classes=("a", "b"),
        upper_bounds=[2.0, 1.0],  # not increasing
        counts=[[1.0, 0.0], [0.0, 1.0]],
        missing_part=-1,
        cost=1.0,
        null_cost=2.0,
        level=0.5,
        prior_cost=0.0,
    )
    with pytest.raises(AssertionError):
        broken._check()
