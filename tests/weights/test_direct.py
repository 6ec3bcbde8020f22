"""Direct weight optimisation (Guigourès & Boullé 2011, docs/algorithms/weights.md#direct)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from scipy.integrate import quad
from synthetic_weights import concat, context_for, finite_difference, make_rows

from wnb_stream import WeightedNaiveBayes
from wnb_stream.weights import Batch, Direct
from wnb_stream.weights.criterion import negative_log_likelihood_and_gradient
from wnb_stream.weights.direct import bimodal_prior, bimodal_prior_gradient, descent


@pytest.mark.parametrize("sigma", [0.1, 0.25, 0.4])
def test_the_prior_is_a_density_on_the_unit_interval_with_modes_at_0_and_1(sigma):
    mass, _ = quad(lambda t: math.exp(-bimodal_prior(np.array([t]), sigma)), 0.0, 1.0)
    assert mass == pytest.approx(1.0, rel=1e-9)
    grid = np.linspace(0.0, 1.0, 101)
    values = np.array([bimodal_prior(np.array([t]), sigma) for t in grid])
    assert values[50] == values.max()  # least likely at 1/2
    assert values[0] == pytest.approx(values[-1])  # symmetric


@settings(max_examples=examples(30), deadline=None)
@given(w=st.lists(st.floats(0.01, 0.99), min_size=1, max_size=6), sigma=st.floats(0.05, 0.49))
def test_prior_gradient_matches_finite_differences(w, sigma):
    w = np.array(w)
    numeric = finite_difference(lambda v: bimodal_prior(v, sigma), w, 1e-6)
    np.testing.assert_allclose(bimodal_prior_gradient(w, sigma), numeric, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed", range(3))
def test_objective_gradient_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    data = make_rows(rng, 80, n_informative=2, n_noise=3, n_classes=2 + seed)
    model = Direct(penalty=0.7, sigma=0.3)
    w = rng.uniform(0.1, 0.9, 5)
    _, nll_gradient = negative_log_likelihood_and_gradient(w, data.log_lik, data.y, data.log_prior, data.sample_weight)
    analytic = nll_gradient + 0.7 * bimodal_prior_gradient(w, 0.3)  # what the descent steps along
    numeric = finite_difference(lambda v: model.criterion(v, data, np.ones(5)), w, 1e-6)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-5)


def test_descent_converges_to_within_one_over_n_and_improves_the_start():
    data = make_rows(np.random.default_rng(1), 500, n_informative=3, n_noise=5)
    result = descent(np.full(8, 0.5), data)
    assert result.values[-1] < result.values[0]
    assert result.iterations < 100  # stopped by the 1/N test (GB11 report 20 to 60 passes)
    assert np.all(result.weights[:3] > 0.8)


def test_a_weight_pushed_below_zero_twice_is_pruned_for_the_rest_of_the_start():
    data = make_rows(np.random.default_rng(2), 400, n_informative=2, n_noise=6)
    result = descent(np.full(8, 0.5), data, initial_rate=0.5)
    assert result.pruned.any()
    assert np.all(result.weights[result.pruned] == 0.0)
    assert not result.pruned[:2].any()


def test_pinned_variables_stay_at_zero():
    data = make_rows(np.random.default_rng(3), 200, n_informative=3, n_noise=3)
    movable = np.array([True, False, True, True, True, False])
    result = descent(np.full(6, 0.5), data, movable=movable)
    assert np.all(result.weights[~movable] == 0.0) and not result.pruned[~movable].any()


def test_multistart_keeps_the_best_start():
    data = make_rows(np.random.default_rng(4), 300, n_informative=3, n_noise=5)
    one, five = Direct(n_starts=1), Direct(n_starts=5)
    for model in (one, five):
        model.reset(8, 2, seed=0)
    costs = np.ones(8)
    w_one = one._search(data, costs, np.full(8, 0.5), np.ones(8, bool))
    w_five = five._search(data, costs, np.full(8, 0.5), np.ones(8, bool))
    assert five.criterion(w_five, data, costs) <= one.criterion(w_one, data, costs)


def feed(model, seed, batches=15, batch_size=40):
    rng = np.random.default_rng(seed)
    window: list[Batch] = []
    for _ in range(batches):
        batch = make_rows(rng, batch_size, n_informative=3, n_noise=5)
        window = (window + [batch])[-10:]
        model.learn(batch, concat(window), context_for(8))
        assert not model.problems()
    return model


def test_same_seed_same_weights_other_seed_other_draws():
    a, b, c = (Direct(n_starts=3) for _ in range(3))
    a.reset(8, 2, seed=1)
    b.reset(8, 2, seed=1)
    c.reset(8, 2, seed=2)
    for model in (a, b, c):
        feed(model, seed=9)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a._rng.random() == b._rng.random() != c._rng.random()


def test_noise_is_dropped_and_informative_variables_kept():
    model = feed(Direct(), seed=5, batches=40, batch_size=50)
    assert np.all(model.weights[:3] > 0.8) and np.all(model.weights[3:] < 0.2)


def test_parameters_are_checked_once():
    with pytest.raises(ValueError, match=r"sigma must be in \(0, 0.5\)"):
        Direct(sigma=0.5)
    with pytest.raises(ValueError, match="n_starts must be an integer >= 1"):
        Direct(n_starts=0)
    with pytest.raises(ValueError, match="rates must satisfy"):
        Direct(initial_rate=100.0)


@pytest.mark.slow  # River's whole estimator check: CI runs it (--run-slow)
@pytest.mark.parametrize("params", list(Direct._unit_test_params()), ids=str)
def test_river_check_estimator(params):
    from river import checks

    checks.check_estimator(WeightedNaiveBayes(optimizer=Direct(**params), history_size=100, seed=1))


def test_a_saved_classifier_keeps_learning_identically():
    from river import datasets

    from wnb_stream import io

    rows = list(datasets.Phishing().take(600))
    model = WeightedNaiveBayes(optimizer=Direct(n_starts=2), history_size=300, seed=3)
    for x, y in rows[:300]:
        model.learn_one(x, y)
    copy = io.loads(io.dumps(model))
    for m in (model, copy):
        for x, y in rows[300:]:
            m.learn_one(x, y)
    assert model._engine.optimizer.n_searches >= 4
    np.testing.assert_array_equal(model._engine.optimizer.weights, copy._engine.optimizer.weights)
    assert model.predict_proba_one(rows[0][0]) == copy.predict_proba_one(rows[0][0])
