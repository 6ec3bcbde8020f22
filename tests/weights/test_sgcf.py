"""SG.CF (HB24 §3.2.2) and the batch-search machinery it shares with Direct (weights/search.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from scipy.optimize import minimize
from synthetic_weights import concat, context_for, finite_difference, make_rows

from wnb_stream import WeightedNaiveBayes
from wnb_stream.weights import SGCF, VNS, Batch
from wnb_stream.weights.criterion import negative_log_likelihood_and_gradient
from wnb_stream.weights.regularizers import r2, xi_delta, xi_delta_derivative
from wnb_stream.weights.search import FIRST_SEARCH, drop_gains
from wnb_stream.weights.sgcf import (
    composite_objective,
    composite_stage,
    convex_objective,
    convex_stage,
    coordinate_minimum,
    relaxed_costs,
)


def problem(seed: int, n: int = 120, n_informative: int = 2, n_noise: int = 3, n_classes: int = 2, duplicates: int = 1):
    rng = np.random.default_rng(seed)
    data = make_rows(rng, n, n_informative=n_informative, n_noise=n_noise, n_classes=n_classes, duplicates=duplicates)
    data = Batch(data.log_lik, data.y, rng.uniform(0.5, 1.5, n), data.log_prior)  # sample weights too
    k = data.log_lik.shape[1]
    return data, np.full(k, np.log(k) + 1.0)


# ------------------------------------------------------------------------------------------------
# The objectives and their gradients


@pytest.mark.parametrize("seed", range(4))
def test_convex_objective_gradient_matches_finite_differences(seed):
    data, costs = problem(seed, n_classes=2 + seed % 2)
    coefficients = relaxed_costs(costs, 2.0)
    w = np.random.default_rng(seed).uniform(0.2, 0.8, len(costs))
    _, nll_gradient = negative_log_likelihood_and_gradient(w, data.log_lik, data.y, data.log_prior, data.sample_weight)
    analytic = nll_gradient + 0.25 * coefficients  # the gradient the first stage steps along
    numeric = finite_difference(lambda v: convex_objective(v, data, coefficients, 0.25), w, 1e-6)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_composite_objective_gradient_matches_finite_differences(seed):
    data, costs = problem(seed)
    coefficients = relaxed_costs(costs, 1.5)
    w = np.random.default_rng(seed).uniform(0.05, 0.95, len(costs))
    w[0] = 4e-4  # inside the linearised neighbourhood [0, δ]
    _, nll_gradient = negative_log_likelihood_and_gradient(w, data.log_lik, data.y, data.log_prior, data.sample_weight)
    analytic = nll_gradient + 0.25 * coefficients * xi_delta_derivative(w, 0.95)
    numeric = finite_difference(lambda v: composite_objective(v, data, coefficients, 0.25, 0.95, 1e-3), w, 1e-7)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_relaxed_objectives_meet_the_criterion_where_w_is_frozen_right():
    data, costs = problem(0)
    w = np.array([0.5, 1.0, 0.0, 0.25, 0.75, 0.5])
    frozen = relaxed_costs(costs, w.sum())
    exact = composite_objective(w, data, frozen, 0.25, 0.95, 1e-3)  # eq. 16 with W~ = W is eq. 13
    model = SGCF(penalty=0.25)
    assert exact == pytest.approx(model.criterion(w, data, costs), rel=1e-12)
    assert model._penalty(w, costs) == pytest.approx(0.25 * r2(w, costs, 0.95))


# ------------------------------------------------------------------------------------------------
# The per-coordinate composite step


@settings(max_examples=examples(60), deadline=None)
@given(
    w=st.floats(0.0, 1.0),
    g=st.floats(-50.0, 50.0),
    lipschitz=st.floats(0.05, 200.0),
    a=st.floats(0.0, 20.0),
    alpha=st.sampled_from([0.5, 0.8, 0.95, 1.0]),
    pinned=st.booleans(),
)
def test_coordinate_minimum_is_the_global_minimum_of_the_one_dimensional_model(w, g, lipschitz, a, alpha, pinned):
    delta = 1e-3
    upper = 0.0 if pinned else 1.0
    x = coordinate_minimum(np.array([w]), np.array([g]), lipschitz, np.array([a]), alpha, delta, np.array([upper]))[0]

    def phi(v):
        return g * (v - w) + 0.5 * lipschitz * (v - w) ** 2 + a * xi_delta(v, alpha, delta)

    grid = np.concatenate([np.linspace(0.0, upper, 20001), np.linspace(0.0, min(delta, upper), 201)])
    assert 0.0 <= x <= upper
    assert phi(x) <= phi(grid).min() + 1e-9 * (1.0 + abs(phi(grid).min()))


# ------------------------------------------------------------------------------------------------
# The stages


@pytest.mark.slow  # end to end, seconds even in the dev profile: CI runs it (--run-slow)
@pytest.mark.parametrize("seed", range(5))
def test_convex_stage_reaches_the_optimum_of_a_generic_bounded_solver(seed):
    data, costs = problem(seed, n_classes=2 + seed % 3, duplicates=seed % 2)
    coefficients = relaxed_costs(costs, len(costs) / 2)
    penalty = 0.25

    def objective(v):
        value, gradient = negative_log_likelihood_and_gradient(v, data.log_lik, data.y, data.log_prior, data.sample_weight)
        return value + penalty * coefficients @ v, gradient + penalty * coefficients

    start = np.full(len(costs), 0.5)
    reference = minimize(objective, start, jac=True, method="L-BFGS-B", bounds=[(0, 1)] * len(costs),
                         options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 10_000})  # fmt: skip
    ours = convex_stage(start, data, coefficients, penalty, tolerance=1e-7, max_iterations=20_000)
    assert ours.values[-1] <= reference.fun + 1e-6 * abs(reference.fun)
    assert ours.values[-1] == pytest.approx(reference.fun, rel=1e-7)
    # a convex problem: at the HB24 tolerance 0.01 the criterion is already close
    rough = convex_stage(start, data, coefficients, penalty)
    assert rough.converged and rough.values[-1] == pytest.approx(reference.fun, rel=1e-3)


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 10_000), penalty=st.sampled_from([0.0, 0.25, 2.0, 20.0]), lipschitz=st.sampled_from([1e-3, 1.0, 1e4]))
def test_backtracking_never_increases_either_stage_objective(seed, penalty, lipschitz):
    data, costs = problem(seed, n=60, n_classes=2 + seed % 3)
    start = np.random.default_rng(seed).random(len(costs))
    first = convex_stage(start, data, relaxed_costs(costs, start.sum()), penalty, lipschitz=lipschitz, tolerance=1e-4)
    assert np.all(np.diff(first.values) <= 1e-9 * (1 + np.abs(first.values[:-1])))
    coefficients = relaxed_costs(costs, first.weights.sum())
    second = composite_stage(first.weights, data, coefficients, penalty, lipschitz=lipschitz, tolerance=1e-4)
    assert np.all(np.diff(second.values) <= 1e-9 * (1 + np.abs(second.values[:-1])))
    for result in (first, second):
        assert np.all((result.weights >= 0) & (result.weights <= 1))


def test_pinned_variables_stay_at_zero_in_both_stages():
    data, costs = problem(3)
    movable = np.array([True, False, True, True, False, True])
    model = SGCF()
    w = model._search(data, costs, np.full(6, 0.5), movable)
    assert np.all(w[~movable] == 0.0)


def test_the_composite_stage_is_sparser_than_the_relaxation_it_starts_from():
    data, costs = problem(1, n=400, n_informative=3, n_noise=12)
    start = np.full(len(costs), 0.5)
    first = convex_stage(start, data, relaxed_costs(costs, start.sum()), 0.25)
    second = composite_stage(first.weights, data, relaxed_costs(costs, first.weights.sum()), 0.25)
    assert np.count_nonzero(second.weights) <= np.count_nonzero(first.weights)
    assert np.all(second.weights[:3] > 0.3)  # the informative variables keep a weight


# ------------------------------------------------------------------------------------------------
# The learner: schedule, hand-over, budget, refinement


def feed(model, seed: int, batches: int, batch_size: int = 20, k_informative: int = 3, k_noise: int = 5, depth: int = 400):
    rng = np.random.default_rng(seed)
    window: list[Batch] = []
    k = k_informative + k_noise
    for _ in range(batches):
        batch = make_rows(rng, batch_size, n_informative=k_informative, n_noise=k_noise)
        window = window + [batch]
        while sum(len(b) for b in window) > depth:
            window = window[1:]
        model.learn(batch, concat(window), context_for(k))
        assert not model.problems()
    return model


def test_searches_run_when_the_rows_since_the_last_match_the_window_it_saw():
    searched_at = []

    class Spy(SGCF):
        def _run(self, window, costs, active):
            searched_at.append((self._rows_seen, len(window)))
            super()._run(window, costs, active)

    feed(Spy(), seed=0, batches=60, batch_size=16, depth=256)  # 960 rows, a window of 256
    assert searched_at[0] == (FIRST_SEARCH, 32)
    assert [rows for rows, _ in searched_at] == [32, 64, 128, 256, 512, 768]  # doubling, then every window


def test_weights_are_the_plain_naive_bayes_until_the_first_search():
    model = SGCF()
    model.reset(8, 2)
    feed(model, seed=1, batches=1, batch_size=FIRST_SEARCH - 1)
    assert model.n_searches == 0 and model.weights.tolist() == [1.0] * 8
    feed(model, seed=2, batches=1, batch_size=1)
    assert model.n_searches == 1 and model.weights.tolist() != [1.0] * 8


def test_inactive_variables_keep_weight_zero():
    model = SGCF(batch_size=50)
    model.reset(8, 2)
    rng = np.random.default_rng(3)
    history = make_rows(rng, 300, n_informative=3, n_noise=5)
    active = np.ones(8, bool)
    active[[0, 6]] = False
    for _ in range(6):
        model.learn(make_rows(rng, 50, n_informative=3, n_noise=5), history, context_for(8, active))
        assert model.weights[0] == 0.0 and model.weights[6] == 0.0
        assert not model.problems()


def test_noise_is_dropped_and_informative_variables_kept():
    model = feed(SGCF(), seed=4, batches=40, batch_size=50, depth=2000)
    w = model.weights
    assert np.all(w[:3] > 0.8) and np.all(w[3:] < 0.1)


@settings(max_examples=examples(15), deadline=None)
@given(seed=st.integers(0, 1000), budget=st.integers(0, 4), learner=st.sampled_from(["sgcf", "direct"]))
def test_max_variables_is_respected_by_every_hand_over(seed, budget, learner):
    from wnb_stream.weights import Direct

    model = SGCF(max_variables=budget) if learner == "sgcf" else Direct(max_variables=budget, n_starts=2)
    model.reset(8, 2, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(8):
        batch = make_rows(rng, 40, n_informative=3, n_noise=5, duplicates=0)
        model.learn(batch, concat([batch, make_rows(rng, 200, 3, 5)]), context_for(8))
        assert not model.problems()
        if model.n_searches:
            assert np.count_nonzero(model.weights) <= budget


def test_the_budget_keeps_the_variables_of_largest_criterion_gain():
    rng = np.random.default_rng(5)
    data = make_rows(rng, 600, n_informative=3, n_noise=5, accuracy=0.8)
    model = SGCF(max_variables=2)
    model.reset(8, 2)
    model.learn(data, data, context_for(8))
    free = SGCF()
    free.reset(8, 2)
    free.learn(data, data, context_for(8))
    gains = drop_gains(free.weights, data)
    assert np.count_nonzero(model.weights) == 2
    assert set(np.flatnonzero(model.weights)) == set(np.argsort(-gains)[:2])


def test_drop_gains_match_the_criterion_difference():
    data, _ = problem(6)
    w = np.array([0.9, 0.0, 0.4, 0.7, 0.2, 0.5])
    gains = drop_gains(w, data)
    model = SGCF(penalty=0.0)
    costs = np.ones(6)
    for k in range(6):
        dropped = w.copy()
        dropped[k] = 0.0
        assert gains[k] == pytest.approx(model.criterion(dropped, data, costs) - model.criterion(w, data, costs), abs=1e-9)


def test_refine_restarts_vns_from_the_search_result():
    rng = np.random.default_rng(7)
    history = make_rows(rng, 400, n_informative=3, n_noise=5)
    model = SGCF(batch_size=40, refine=VNS(batch_size=40, opti_level=0, replay_level=None))
    model.reset(8, 2, seed=1)
    model.learn(make_rows(rng, 40, n_informative=3, n_noise=5), history, context_for(8))
    solution = np.where(model._best < 1e-3, 0.0, model._best)
    refiner = model._refiner
    assert model.n_searches == 1 and not refiner._incumbent_is_nb
    assert refiner.n_steps == 1  # then one step on the batch, judged against the solution
    value = refiner._window_value
    assert np.array_equal(refiner.weights, solution) or (
        value(refiner.weights, history, context_for(8).prior_costs) < value(solution, history, context_for(8).prior_costs)
    )
    np.testing.assert_array_equal(model.weights, refiner.weights)
    assert not model.problems()


def test_parameters_are_checked_once():
    with pytest.raises(ValueError, match="tolerance must be > 0"):
        SGCF(tolerance=0)
    with pytest.raises(ValueError, match="max_variables must be None or an integer >= 0"):
        SGCF(max_variables=-1)
    with pytest.raises(ValueError, match="refine and max_variables cannot be combined"):
        SGCF(max_variables=3, refine=VNS())
    with pytest.raises(ValueError, match="refine must be None or a PGDMB or VNS"):
        SGCF(refine="vns")


def test_same_seed_same_weights_and_resize_keeps_learning():
    a, b = feed(SGCF(), seed=8, batches=20), feed(SGCF(), seed=8, batches=20)
    np.testing.assert_array_equal(a.weights, b.weights)
    a.resize(10, 3)
    assert a.weights.shape == (10,) and np.all(a.weights[8:] == 0.0)
    assert not a.problems()


@pytest.mark.slow  # River's whole estimator check: CI runs it (--run-slow)
@pytest.mark.parametrize("params", list(SGCF._unit_test_params()), ids=str)
def test_river_check_estimator(params):
    from river import checks

    checks.check_estimator(WeightedNaiveBayes(optimizer=SGCF(**params), history_size=100, seed=1))


def test_classifier_learns_phishing_with_sgcf():
    from river import datasets, evaluate, metrics

    model = WeightedNaiveBayes(optimizer=SGCF(), seed=1)
    metric = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert metric.get() > 0.85
    assert isinstance(model._engine.optimizer, SGCF) and model._engine.optimizer.n_searches >= 4
