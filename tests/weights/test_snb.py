"""SNB: MS(FFWBW) with compression-based averaging (HB24 Algorithm 1, docs/algorithms/weights.md#snb)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import context_for, costs, make_rows, problem

from wnb_stream.weights import SNB, Batch
from wnb_stream.weights.selection import ms_ffwbw, selection_criterion


def exhaustive(data: Batch, b: np.ndarray, penalty: float, active=None, max_variables=None) -> tuple[float, np.ndarray]:
    """The best 0/1 subset by enumeration (K ≤ 6)."""
    k = data.log_lik.shape[1]
    best = (np.inf, None)
    for bits in itertools.product((0.0, 1.0), repeat=k):
        w = np.array(bits)
        if active is not None and np.any(w[~active] > 0):
            continue
        if max_variables is not None and w.sum() > max_variables:
            continue
        value = selection_criterion(w, data, b, penalty)
        if value < best[0]:
            best = (value, w)
    return best


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.sampled_from([0.1, 1.0]))
def test_snb_never_beats_the_exhaustive_optimum(seed, k, penalty):
    rng = np.random.default_rng(seed)
    n_informative = int(rng.integers(0, k + 1))
    data = problem(seed, n=50, n_informative=n_informative, n_noise=k - n_informative)
    b = costs(k, seed)
    result = ms_ffwbw(data, b, np.ones(k, bool), np.random.default_rng(seed), penalty)
    optimum, _ = exhaustive(data, b, penalty)
    assert optimum <= result.best_value + 1e-9 * (1 + abs(optimum))
    assert result.best_value == pytest.approx(selection_criterion(result.best, data, b, penalty), rel=1e-9)
    assert result.best_value <= result.empty_value


@pytest.mark.parametrize("seed", range(6))
def test_snb_finds_the_exhaustive_optimum_on_easy_data(seed):
    rng = np.random.default_rng(seed)
    data = make_rows(rng, 1500, n_informative=3, n_noise=3, accuracy=0.75)
    b = costs(6, seed)
    result = ms_ffwbw(data, b, np.ones(6, bool), np.random.default_rng(seed))
    optimum, subset = exhaustive(data, b, 0.1)
    assert result.best.tolist() == subset.tolist() == [1, 1, 1, 0, 0, 0]
    assert result.best_value == pytest.approx(optimum, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_with_one_start_and_optima_averaging_the_weights_are_the_local_optimum(seed):
    data = problem(seed, n=200, n_informative=3, n_noise=2)
    b = costs(5, seed)
    result = ms_ffwbw(data, b, np.ones(5, bool), np.random.default_rng(seed), starts=1, averaging="optima")
    if result.best.any() and result.best_value < result.empty_value:
        assert result.weights.tolist() == result.best.tolist()
        assert result.models == 1


def test_trajectory_averaging_counts_the_subsets_met_on_the_way():
    data = make_rows(np.random.default_rng(1), 1000, n_informative=3, n_noise=3)
    result = ms_ffwbw(data, costs(6), np.ones(6, bool), np.random.default_rng(0))
    # the optimum {0, 1, 2} is reached through smaller subsets: its variables get weights in (0, 1)
    assert result.models >= 3
    assert np.all((result.weights[:3] > 0.3) & (result.weights[:3] < 1.0))
    assert np.all(result.weights[3:] < result.weights[:3].min())


def test_the_budget_holds_in_the_exhaustive_comparison_too():
    data = make_rows(np.random.default_rng(2), 800, n_informative=4, n_noise=2)
    b = costs(6)
    result = ms_ffwbw(data, b, np.ones(6, bool), np.random.default_rng(2), max_variables=2)
    optimum, _ = exhaustive(data, b, 0.1, max_variables=2)
    assert result.best.sum() <= 2 and np.count_nonzero(result.weights) <= 2
    assert optimum <= result.best_value + 1e-9 * abs(optimum)


def stream(model: SNB | None, seed: int, batches: int = 12, k_noise: int = 3, active=None):
    rng = np.random.default_rng(seed)
    history = make_rows(rng, 400, n_informative=3, n_noise=k_noise)
    k = 3 + k_noise
    for _ in range(batches):
        model.learn(make_rows(rng, 40, 3, k_noise), history, context_for(k, active))
        assert not model.problems()
    return model


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.sampled_from(["trajectory", "optima"]))
def test_max_variables_is_respected(seed, budget, averaging):
    model = SNB(max_variables=budget, averaging=averaging, starts=2)
    model.reset(6, 2, seed=seed)
    stream(model, seed, batches=4)
    assert model.n_searches >= 1
    assert np.count_nonzero(model.weights) <= budget
    assert model.best_subset.sum() <= budget


def test_deterministic_given_the_seed_and_inactive_variables_stay_out():
    active = np.array([True, False, True, True, True, True])
    runs = []
    for _ in range(2):
        model = SNB()
        model.reset(6, 2, seed=7)
        runs.append(stream(model, 3, active=active))
    assert runs[0].weights.tolist() == runs[1].weights.tolist()
    assert runs[0].criterion_value == runs[1].criterion_value
    assert runs[0].weights[1] == 0.0 and runs[0].best_subset[1] == 0.0
