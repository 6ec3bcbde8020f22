"""Criterion, gradient, softmax and compression rate (docs/algorithms/weights.md#criterion)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import finite_difference as central_difference

from wnb_stream.weights import Batch
from wnb_stream.weights.criterion import (
    compression_rate,
    criterion,
    criterion_gradient,
    log_softmax,
    negative_log_likelihood,
    negative_log_likelihood_and_gradient,
    scores,
    softmax,
)
from wnb_stream.weights.regularizers import Regularizer

SETTINGS = settings(max_examples=examples(100), deadline=None)


def test_documented_test_vector():
    """The worked example of docs/algorithms/weights.md#worked-example."""
    log_lik = np.log([[[0.7, 0.2], [0.4, 0.5]]])
    log_prior = np.log([0.6, 0.4])
    w = np.array([0.5, 0.5])
    np.testing.assert_allclose(scores(log_lik, log_prior, w)[0], [-1.147308, -2.067583], atol=1e-6)
    np.testing.assert_allclose(softmax(scores(log_lik, log_prior, w))[0], [0.715098, 0.284902], atol=1e-6)
    value, gradient = negative_log_likelihood_and_gradient(w, log_lik, [1], log_prior)
    assert value == pytest.approx(1.255610, abs=1e-6)
    np.testing.assert_allclose(gradient, [0.895848, -0.159570], atol=1e-6)


@st.composite
def problems(draw):
    """A random batch (n ≤ 6, K ≤ 5, J ≤ 4), weights away from 0 and from δ, costs ≥ log K."""
    n = draw(st.integers(1, 6))
    k = draw(st.integers(1, 5))
    j = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    log_lik = rng.normal(-1.5, 1.5, size=(n, k, j))
    log_prior = np.log(rng.dirichlet(np.ones(j)))
    y = rng.integers(0, j, n)
    sample_weight = rng.choice([0.0, 0.5, 1.0, 2.0], size=n)
    weights = rng.uniform(0.02, 0.98, size=k)
    costs = np.log(k) + rng.uniform(0.0, 5.0, size=k)
    return Batch(log_lik, y, sample_weight, log_prior), weights, costs



def finite_difference(function, w):
    return central_difference(function, w, h=1e-6)


@SETTINGS
@given(problems())
def test_nll_gradient_matches_finite_differences(problem):
    batch, w, _ = problem
    _, gradient = negative_log_likelihood_and_gradient(w, batch.log_lik, batch.y, batch.log_prior, batch.sample_weight)
    numeric = finite_difference(
        lambda v: negative_log_likelihood(v, batch.log_lik, batch.y, batch.log_prior, batch.sample_weight), w
    )
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(problems(), st.sampled_from([("r1", 0.5), ("r1", 1.0), ("r1", 2.0), ("r2", 0.95), ("r2", 1.0), ("r2", 0.6)]))
def test_regularized_criterion_gradient_matches_finite_differences(problem, config):
    batch, w, costs = problem
    kind, exponent = config
    regularizer = Regularizer(kind, penalty=0.7, exponent=exponent)
    _, data_gradient = negative_log_likelihood_and_gradient(w, batch.log_lik, batch.y, batch.log_prior, batch.sample_weight)
    gradient = data_gradient + regularizer.gradient(w, costs)
    numeric = finite_difference(lambda v: criterion(v, batch, costs, regularizer), w)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(problems(), st.floats(1.0, 1e4))
def test_step_gradient_is_the_per_example_scaled_criterion_gradient(problem, reference_size):
    """(1/L) Σ ∇NLL + (λ/N) ∇R  (docs/algorithms/weights.md#criterion): with N = L it is ∇CR / L."""
    batch, w, costs = problem
    total = batch.sample_weight.sum()
    regularizer = Regularizer("r2", penalty=0.3)
    step = criterion_gradient(w, batch, costs, regularizer, reference_size)
    _, data_gradient = negative_log_likelihood_and_gradient(w, batch.log_lik, batch.y, batch.log_prior, batch.sample_weight)
    expected = (data_gradient / total if total > 0 else 0.0) + regularizer.gradient(w, costs) / reference_size
    np.testing.assert_allclose(step, expected, rtol=1e-10, atol=1e-12)
    if total > 0:
        numeric = finite_difference(lambda v: criterion(v, batch, costs, regularizer), w)
        np.testing.assert_allclose(criterion_gradient(w, batch, costs, regularizer) * total, numeric, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(problems(), st.integers(1, 4))
def test_stacked_weights_give_the_same_values_as_one_at_a_time(problem, m):
    batch, w, costs = problem
    rng = np.random.default_rng(m)
    stack = rng.uniform(0, 1, size=(m, len(w)))
    regularizer = Regularizer("r1", exponent=0.5)
    values = criterion(stack, batch, costs, regularizer)
    assert values.shape == (m,)
    for i in range(m):
        assert values[i] == pytest.approx(criterion(stack[i], batch, costs, regularizer), rel=1e-12, abs=1e-12)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**32 - 1), st.sampled_from([1e4, 1e3, 1.0]))
def test_softmax_sums_to_one_and_stays_finite_for_huge_scores(n, j, seed, scale):
    rng = np.random.default_rng(seed)
    values = rng.choice([-1.0, 1.0], size=(n, j)) * scale * rng.random((n, j))
    values[:, 0] = scale  # a score of +1e4 ...
    if j > 1:
        values[:, -1] = -scale  # ... and one of −1e4
    proba = softmax(values)
    assert np.all(np.isfinite(proba)) and np.all(np.isfinite(log_softmax(values)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(proba >= 0)


def test_minus_infinite_prior_gets_zero_probability_and_no_nan():
    """A class known to the model with no example (log prior −inf) must not produce NaN."""
    rng = np.random.default_rng(0)
    log_lik = rng.normal(-1, 1, size=(4, 3, 3))
    log_prior = np.array([np.log(0.5), np.log(0.5), -np.inf])
    y = np.array([0, 1, 1, 0])
    w = np.array([0.2, 0.7, 1.0])
    proba = softmax(scores(log_lik, log_prior, w))
    assert np.all(proba[:, 2] == 0.0) and np.all(np.isfinite(proba))
    value, gradient = negative_log_likelihood_and_gradient(w, log_lik, y, log_prior)
    assert np.isfinite(value) and np.all(np.isfinite(gradient))
    # and it is the same model as the two-class one
    value2, gradient2 = negative_log_likelihood_and_gradient(w, log_lik[:, :, :2], y, log_prior[:2])
    assert value == pytest.approx(value2)
    np.testing.assert_allclose(gradient, gradient2)


@SETTINGS
@given(problems())
def test_rows_of_weight_zero_contribute_nothing(problem):
    batch, w, costs = problem
    keep = batch.sample_weight > 0
    if not keep.any():
        assert criterion(w, batch) == 0.0
        assert np.all(criterion_gradient(w, batch) == 0.0)
        return
    reduced = Batch(batch.log_lik[keep], batch.y[keep], batch.sample_weight[keep], batch.log_prior)
    assert criterion(w, batch) == pytest.approx(criterion(w, reduced), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(criterion_gradient(w, batch), criterion_gradient(w, reduced), rtol=1e-10, atol=1e-12)


def test_zero_weights_give_n_times_the_entropy():
    """HBL17 eq. 1.6: CR(0) = −Σ log p_n = N·H(Y) when the prior is the empirical frequency."""
    rng = np.random.default_rng(1)
    y = np.array([0, 0, 0, 1, 2, 2])
    frequencies = np.bincount(y) / len(y)
    batch = Batch(rng.normal(size=(6, 4, 3)), y, np.ones(6), np.log(frequencies))
    entropy = -np.sum(frequencies * np.log(frequencies))
    assert criterion(np.zeros(4), batch) == pytest.approx(6 * entropy)


def test_compression_rate():
    y = np.array([0, 0, 1, 1, 1, 0])
    frequencies = np.array([0.5, 0.5])
    # predicting the class prior compresses nothing
    assert compression_rate(frequencies[y], y) == 0.0
    # a perfect model compresses everything
    assert compression_rate(np.ones(6), y) == pytest.approx(1.0)
    # a model worse than the prior is negative
    assert compression_rate(np.full(6, 0.2), y) < 0
    # a single class has no entropy
    assert compression_rate(np.full(3, 0.9), np.zeros(3, int)) == 0.0
    # probabilities are clipped at 1e-6 (Khiops)
    assert compression_rate(np.zeros(6), y) == pytest.approx(1 - (-np.log(1e-6)) / np.log(2))
    # sample weights count rows
    w = np.array([2.0, 1, 1, 1, 1, 1])
    repeated = np.array([0.9, 0.9, 0.6, 0.7, 0.8, 0.9, 0.6])
    assert compression_rate(np.array([0.9, 0.6, 0.7, 0.8, 0.9, 0.6]), y, w) == pytest.approx(
        compression_rate(repeated, np.array([0, 0, 0, 1, 1, 1, 0]))
    )


@SETTINGS
@given(problems(), st.integers(2, 5))
def test_products_over_rows_in_threads_give_what_one_call_gives(problem, threads):
    """Large windows score and take the gradient in pieces of rows run in threads
    (``criterion.PARALLEL_CELLS``): forced here on any batch and any number of cores, the scores,
    the NLL and its gradient are those of one call, bit for bit."""
    from wnb_stream import _threads
    from wnb_stream.weights import criterion

    batch, w, _ = problem
    args = (w, batch.log_lik, batch.y, batch.log_prior, batch.sample_weight)
    one = (scores(batch.log_lik, batch.log_prior, w), *negative_log_likelihood_and_gradient(*args))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(criterion, "PARALLEL_CELLS", 0)
        patch.setattr(_threads, "cores", lambda: threads)
        pieces = (scores(batch.log_lik, batch.log_prior, w), *negative_log_likelihood_and_gradient(*args))
    assert np.array_equal(one[0], pieces[0]) and one[1] == pieces[1] and np.array_equal(one[2], pieces[2])
