"""The fast forward-backward search shared by FNB and SNB (docs/algorithms/weights.md#fnb)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import costs, problem

from wnb_stream.modl.costs import universal_code_length
from wnb_stream.weights.criterion import scores
from wnb_stream.weights.selection import (
    Search,
    average_models,
    fast_pass,
    fractional_search,
    increments,
    selection_criterion,
    selection_prior,
)


def test_the_prior_is_the_hb24_code_of_the_selected_variables():
    b = np.array([2.0, 5.0, 3.0, 4.0])
    # Boolean weights: L*(K_s) − log K_s! + Σ_selected B_k (HB24 eq. 9)
    assert selection_prior(np.array([1.0, 0.0, 1.0, 0.0]), b) == pytest.approx(universal_code_length(2) - math.log(2) + 5.0)
    # fractional weights: ⌈W⌉ and B_k w_k^p (HB24 eq. 18)
    w = np.array([0.5, 0.25, 0.0, 1.0])
    expected = universal_code_length(2) - math.log(2) + 2.0 * 0.5**0.95 + 5.0 * 0.25**0.95 + 4.0
    assert selection_prior(w, b) == pytest.approx(expected)
    assert selection_prior(np.zeros(4), b) == 0.0


def test_increments_halve_from_one_half_while_above_one_over_n():
    for n in (2, 3, 10, 64, 65, 1000):
        deltas = [d for d, _ in increments(n, 7)]
        assert deltas[0] == 0.5
        assert all(b == a / 2 for a, b in itertools.pairwise(deltas))
        assert all(d > 1 / n for d in deltas) or deltas == [0.5]
        assert deltas[-1] / 2 <= 1 / n
    assert {r for _, r in increments(1000, 10)} == {2}  # ⌈1 + log 10 / log 1000⌉
    assert {r for _, r in increments(10, 1000)} == {4}  # ⌈1 + 3⌉
    assert [d for d, _ in increments(1000, 10, "khiops")] == [2.0**-i for i in range(10)]


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.sampled_from(["paper", "khiops"]))
def test_incremental_scores_equal_recomputed_scores(seed, n_classes, schedule):
    data = problem(seed, n_classes=n_classes)
    b = costs(data.log_lik.shape[1], seed)
    active = np.ones(data.log_lik.shape[1], bool)
    search = fractional_search(data, b, active, np.random.default_rng(seed), penalty=0.3, schedule=schedule)
    used = data.sample_weight > 0
    np.testing.assert_allclose(search.scores, scores(data.log_lik[used], data.log_prior, search.weights), rtol=1e-9, atol=1e-9)
    assert search.value == pytest.approx(selection_criterion(search.weights, data, b, penalty=0.3), rel=1e-9, abs=1e-9)
    assert search.trials > 0 and 0 <= search.moves <= search.trials


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1.0, 0.5, 0.25, 0.125]), st.booleans())
def test_no_pass_increases_the_criterion(seed, delta, boolean_first):
    """Every fast forward or backward pass, at any δ, leaves the recomputed criterion no higher."""
    data = problem(seed, n=80, n_informative=3, n_noise=3)
    k = data.log_lik.shape[1]
    b = costs(k, seed)
    rng = np.random.default_rng(seed)
    search = Search(data, b, np.ones(k, bool), penalty=0.1)
    if boolean_first:
        fast_pass(search, rng.permutation(k), 1.0, forward=True)
    for forward in (True, False, True, False):
        before = selection_criterion(search.weights, data, b, penalty=0.1)
        fast_pass(search, rng.permutation(k), delta, forward)
        after = selection_criterion(search.weights, data, b, penalty=0.1)
        assert after <= before + 1e-9 * (1 + abs(before))


def test_a_search_keeps_out_inactive_variables_and_respects_the_budget():
    data = problem(3, n=300, n_informative=4, n_noise=2, zero_rows=False)
    active = np.array([True, False, True, True, True, True])
    search = fractional_search(data, costs(6), active, np.random.default_rng(0), max_variables=2)
    assert search.weights[1] == 0.0
    assert 0 < np.count_nonzero(search.weights) <= 2


def test_weights_are_multiples_of_the_smallest_increment():
    data = problem(5, n=100, zero_rows=False)
    search = fractional_search(data, costs(5), np.ones(5, bool), np.random.default_rng(1))
    smallest = increments(search.n_rows, 5)[-1][0]
    assert np.all(np.round(search.weights / smallest) * smallest == search.weights)
    assert np.all((search.weights >= 0) & (search.weights <= 1))


def test_model_averaging_weights_are_compression_rate_shares():
    mask = lambda *bits: np.array(bits, bool).tobytes()
    models = {mask(1, 1, 0): 40.0, mask(1, 0, 0): 70.0, mask(0, 0, 1): 120.0}  # κ = 0.6, 0.3, <0
    weights, n = average_models(models, 100.0, 3)
    np.testing.assert_allclose(weights, [1.0, 0.6 / 0.9, 0.0])
    assert n == 2
    assert average_models({mask(1, 0, 0): 150.0}, 100.0, 3)[0].tolist() == [0.0, 0.0, 0.0]
    assert average_models({}, 100.0, 3)[1] == 0
