"""Graphical: per-class softmax weights by SGD (SLH15, docs/algorithms/weights.md#graphical)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import make_rows

from wnb_stream.weights import Batch, Context, Graphical, Uniform
from wnb_stream.weights.criterion import log_softmax


def mean_log_loss(model, data):
    log_p = log_softmax(model.scores(data.log_lik, data.log_prior))
    return -np.mean(log_p[np.arange(len(data.y)), data.y])


def problem(seed, n, n_classes):
    # under-confident duplicated evidence and noise: plain NB is far from the best fit
    return make_rows(np.random.default_rng(seed), n, n_informative=3, n_noise=4, n_classes=n_classes, duplicates=2)


def test_starts_as_the_plain_naive_bayes():
    data = problem(0, 50, 3)
    model, plain = Graphical(), Uniform()
    model.reset(9, 3)
    plain.reset(9, 3)
    np.testing.assert_allclose(model.scores(data.log_lik, data.log_prior), plain.scores(data.log_lik, data.log_prior))
    np.testing.assert_array_equal(model.class_weights, np.ones((9, 3)))
    np.testing.assert_array_equal(model.bias, np.zeros(3))


@pytest.mark.parametrize("params", [{}, {"adaptive": True}, {"learning_rate": 1e-3, "clip": 5.0}])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_reduces_the_log_loss_on_a_stream(params, n_classes):
    train, test = problem(1, 4000, n_classes), problem(2, 3000, n_classes)
    model = Graphical(**params)
    model.reset(9, n_classes)
    before = mean_log_loss(model, test)
    for lo in range(0, 4000, 500):  # the classifier's batches
        model.learn(Batch(train.log_lik[lo : lo + 500], train.y[lo : lo + 500], train.sample_weight[lo : lo + 500], train.log_prior))
        assert not model.problems()
    after = mean_log_loss(model, test)
    assert after < before - 0.02
    assert model.n_examples == 4000


def test_adam_beats_the_fixed_rate_on_a_short_stream():
    train, test = problem(3, 4000, 2), problem(4, 3000, 2)
    fixed, adam = Graphical(), Graphical(adaptive=True)
    for model in (fixed, adam):
        model.reset(9, 2)
        model.learn(train)
    assert adam.rate == 1e-3 and fixed.rate == 1e-4
    assert mean_log_loss(adam, test) < mean_log_loss(fixed, test)


@settings(max_examples=examples(50), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.integers(1, 5))
def test_one_step_is_minus_rate_times_the_log_loss_gradient(seed, n_classes, k):
    """SLH15 eq. 3–4, checked against finite differences of the per-example log loss."""
    rng = np.random.default_rng(seed)
    model = Graphical(learning_rate=1e-3)
    model.reset(k, n_classes)
    model._w = rng.uniform(-1, 2, (k, n_classes))
    model._b = rng.normal(size=n_classes)
    w0, b0 = model.class_weights, model.bias
    row = Batch(rng.normal(-1.5, 1, (1, k, n_classes)), rng.integers(0, n_classes, 1), np.ones(1), np.log(rng.dirichlet(np.ones(n_classes))))

    def loss(w, b):
        h = row.log_prior + b + np.einsum("kj,kj->j", w, row.log_lik[0])
        return -log_softmax(h)[row.y[0]]

    h = 1e-6
    grad_w = np.zeros_like(w0)
    for index in np.ndindex(*w0.shape):
        up, down = w0.copy(), w0.copy()
        up[index] += h
        down[index] -= h
        grad_w[index] = (loss(up, b0) - loss(down, b0)) / (2 * h)
    grad_b = np.array([(loss(w0, b0 + h * e) - loss(w0, b0 - h * e)) / (2 * h) for e in np.eye(n_classes)])
    model.learn(row)
    np.testing.assert_allclose(model.class_weights, w0 - 1e-3 * grad_w, atol=1e-9)
    np.testing.assert_allclose(model.bias, b0 - 1e-3 * grad_b, atol=1e-9)


def test_a_batch_is_a_sequence_of_single_row_steps():
    data = problem(5, 60, 3)
    for params in ({}, {"adaptive": True}):
        whole, single = Graphical(**params), Graphical(**params)
        whole.reset(9, 3)
        single.reset(9, 3)
        whole.learn(data)
        for i in range(60):
            single.learn(Batch(data.log_lik[i : i + 1], data.y[i : i + 1], data.sample_weight[i : i + 1], data.log_prior))
        np.testing.assert_allclose(whole.class_weights, single.class_weights, rtol=1e-12)


def test_rows_of_weight_zero_change_nothing():
    data = problem(6, 40, 2)
    model = Graphical(adaptive=True)
    model.reset(9, 2)
    model.learn(Batch(data.log_lik, data.y, np.zeros(40), data.log_prior))
    np.testing.assert_array_equal(model.class_weights, np.ones((9, 2)))
    assert model.n_examples == 0


def test_clipping_bounds_each_step():
    data = problem(7, 30, 3)
    model = Graphical(learning_rate=0.1, clip=0.5)
    model.reset(9, 3)
    for i in range(30):
        w, b = model.class_weights, model.bias
        model.learn(Batch(data.log_lik[i : i + 1] * 100, data.y[i : i + 1], np.ones(1), data.log_prior))
        change = np.sqrt(np.sum((model.class_weights - w) ** 2) + np.sum((model.bias - b) ** 2))
        assert change <= 0.1 * 0.5 + 1e-12


def test_resize_keeps_weights_and_new_classes_start_as_nb():
    data = problem(8, 200, 2)
    model = Graphical(adaptive=True)
    model.reset(9, 2)
    model.learn(data)
    w, b = model.class_weights, model.bias
    model.resize(10, 3)
    assert not model.problems()
    np.testing.assert_array_equal(model.class_weights[:9, :2], w)
    np.testing.assert_array_equal(model.bias[:2], b)
    np.testing.assert_array_equal(model.class_weights[:, 2], 1.0)
    np.testing.assert_array_equal(model.class_weights[9], 1.0)
    assert model.bias[2] == 0.0
    np.testing.assert_allclose(model.weights, model.class_weights.mean(axis=1))
    coefficients, offsets = model.coefficients(10, 3)
    np.testing.assert_array_equal(coefficients, model.class_weights)
    np.testing.assert_array_equal(offsets, model.bias)


def test_a_new_class_without_examples_makes_no_nan():
    model = Graphical(adaptive=True)
    model.reset(9, 2)
    model.learn(problem(9, 100, 2))
    for third in (np.log(1e-6), -np.inf):
        data = problem(10, 100, 2)
        log_lik = np.concatenate([data.log_lik, np.full((100, 9, 1), np.log(0.2))], axis=2)
        model.learn(Batch(log_lik, data.y, data.sample_weight, np.append(data.log_prior, third)))  # no resize call
        assert not model.problems()
        s = model.scores(log_lik, np.append(data.log_prior, third))
        assert np.all(np.isfinite(s[:, :2]))


def test_inactive_variables_are_not_updated():
    data = problem(11, 100, 2)
    model = Graphical(learning_rate=1e-2)
    model.reset(9, 2)
    active = np.ones(9, bool)
    active[[1, 4]] = False
    model.learn(data, None, Context(np.full(9, 3.0), active))
    np.testing.assert_array_equal(model.class_weights[[1, 4]], 1.0)
    assert np.all(model.class_weights[active] != 1.0)


def test_clone_repr_and_validation():
    model = Graphical(learning_rate=1e-3, adaptive=True, clip=2.0)
    clone = model.clone()
    assert clone.learning_rate == 1e-3 and clone.adaptive and clone.clip == 2.0
    assert "Graphical" in repr(model)
    assert model.batch_size == 1
    for params, name in [({"learning_rate": 0}, "learning_rate"), ({"clip": -1}, "clip"), ({"adaptive": "yes"}, "adaptive")]:
        with pytest.raises(ValueError, match=name):
            Graphical(**params)


def _reference_sgd(model, batch):
    """The plain SGD step loop (SLH15 eq. 4, the sample weight scaling the gradient), unclipped."""
    for row, label, weight in zip(batch.log_lik, batch.y, batch.sample_weight):
        if weight <= 0:
            continue
        h = batch.log_prior + model._b + np.einsum("kj,kj->j", model._w, row)
        residual = np.exp(h - h.max())
        residual /= residual.sum()
        residual[label] -= 1.0
        residual *= weight
        model._w -= model.rate * (row * residual)
        model._b -= model.rate * residual


@pytest.mark.parametrize("weights", ["ones", "moderate"])
def test_steps_below_the_bound_are_the_plain_sgd_steps_bit_for_bit(weights):
    data = problem(8, 300, 3)
    sample_weight = np.ones(300) if weights == "ones" else np.random.default_rng(0).choice([0.0, 0.5, 1.0, 3.0, 20.0], 300)
    batch = Batch(data.log_lik, data.y, sample_weight, data.log_prior)
    model, reference = Graphical(), Graphical()
    model.reset(9, 3)
    reference.reset(9, 3)
    model.learn(batch)
    _reference_sgd(reference, batch)
    np.testing.assert_array_equal(model.class_weights, reference.class_weights)
    np.testing.assert_array_equal(model.bias, reference.bias)


@pytest.mark.parametrize("params", [{}, {"adaptive": True}, {"clip": 5.0}, {"learning_rate": 0.5}])
@pytest.mark.parametrize("big", [1e3, 1e6, 1e9, 1e100, 1e300])
def test_large_sample_weights_keep_the_parameters_finite_and_each_step_bounded(params, big):
    from wnb_stream.weights.graphical import MAX_STEP

    data = problem(9, 200, 3)
    model = Graphical(**params)
    model.reset(9, 3)
    sample_weight = np.where(np.arange(200) % 50 == 0, big, 1.0)
    for i in range(200):
        w, b = model.class_weights, model.bias
        model.learn(Batch(data.log_lik[i : i + 1], data.y[i : i + 1], sample_weight[i : i + 1], data.log_prior))
        assert not model.problems()
        step = np.sqrt(np.sum((model.class_weights - w) ** 2) + np.sum((model.bias - b) ** 2))
        if not params.get("adaptive"):
            assert step <= MAX_STEP * (1 + 1e-9)
    assert np.isfinite(model.class_weights).all() and np.isfinite(model.bias).all()
    assert np.abs(model.class_weights - 1.0).max() <= 200 * MAX_STEP
    scores = model.scores(data.log_lik, data.log_prior)
    assert np.isfinite(scores).all()


def test_extreme_log_likelihoods_and_weights_make_no_nan():
    # ℓ at the Gaussian density's floor (−1e150) with a weight of 1e300: still finite, still a step
    model = Graphical()
    model.reset(2, 2)
    log_lik = np.array([[[-1e150, -1.0], [0.5, -1e150]]] * 20)
    model.learn(Batch(log_lik, np.array([0, 1] * 10), np.full(20, 1e300), np.log([0.5, 0.5])))
    assert not model.problems()
    assert np.isfinite(model.scores(log_lik, np.log([0.5, 0.5]))).all()
