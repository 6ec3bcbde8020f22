"""Regularizers R1 (HBL17) and R2 (HB24) and the smoothed power ξ_δ (docs/algorithms/weights.md#regularizers)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import finite_difference as central_difference

from wnb_stream.weights.regularizers import (
    Regularizer,
    r1,
    r1_gradient,
    r2,
    r2_gradient,
    spread,
    spread_gradient,
    xi_delta,
    xi_delta_derivative,
)

SETTINGS = settings(max_examples=examples(100), deadline=None)
exponents = st.floats(0.3, 1.0)
deltas = st.sampled_from([1e-3, 1e-2, 0.1])


@SETTINGS
@given(exponents, deltas)
def test_xi_delta_is_an_increasing_concave_map_of_the_unit_interval(alpha, delta):
    tau = np.linspace(0, 1, 2001)
    xi = xi_delta(tau, alpha, delta)
    assert xi[0] == pytest.approx(0.0, abs=1e-15) and xi[-1] == pytest.approx(1.0)
    assert np.all(np.diff(xi) > 0)
    assert np.all(np.diff(xi, 2) <= 1e-12)  # concave
    slope = xi_delta_derivative(tau, alpha, delta)
    assert np.all(np.isfinite(slope)) and np.all(slope > 0)


@SETTINGS
@given(exponents, deltas)
def test_xi_delta_is_the_tangent_below_delta_and_the_power_above(alpha, delta):
    """HB24 §3.1: ξ(δ) + ξ'(δ)(τ − δ) on [0, δ], τ^α above, then renormalised."""
    at_zero = delta**alpha * (1 - alpha)
    above = np.array([delta, (1 + delta) / 2, 1.0])
    np.testing.assert_allclose(xi_delta(above, alpha, delta), (above**alpha - at_zero) / (1 - at_zero))
    below = np.array([0.0, delta / 3, delta * 0.999])
    tangent = delta**alpha + alpha * delta ** (alpha - 1) * (below - delta)
    np.testing.assert_allclose(xi_delta(below, alpha, delta), (tangent - at_zero) / (1 - at_zero), atol=1e-15)
    # continuously differentiable at δ
    h = delta * 1e-7
    left = xi_delta_derivative(delta - h, alpha, delta)
    right = xi_delta_derivative(delta + h, alpha, delta)
    assert left == pytest.approx(right, rel=1e-5)


def test_exponent_one_is_the_identity():
    tau = np.array([0.0, 1e-4, 0.3, 1.0])
    np.testing.assert_allclose(xi_delta(tau, 1.0), tau)
    np.testing.assert_allclose(xi_delta_derivative(tau, 1.0), 1.0)


@st.composite
def weight_vectors(draw):
    k = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    w = rng.uniform(0.0, 1.0, size=k)
    w[np.abs(w - 1e-3) < 1e-4] = 0.5  # stay away from the kink of the second derivative
    w[rng.random(k) < 0.2] = 0.0  # exact zeros are allowed: ξ_δ is linear there
    costs = np.log(k) + rng.uniform(0.0, 8.0, size=k)
    return w, costs



def finite_difference(function, w):
    return central_difference(function, w, h=1e-7)


@SETTINGS
@given(weight_vectors(), st.sampled_from([0.5, 1.0, 2.0, 0.8]))
def test_r1_gradient_matches_finite_differences(vectors, p):
    w, costs = vectors
    if p > 1:
        w = np.maximum(w, 1e-3)  # w^p for p > 1 is not defined left of 0
    numeric = finite_difference(lambda v: r1(v, costs, p), w)
    np.testing.assert_allclose(r1_gradient(w, costs, p), numeric, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(weight_vectors(), st.sampled_from([0.95, 1.0, 0.65]))
def test_r2_gradient_matches_finite_differences(vectors, p):
    w, costs = vectors
    numeric = finite_difference(lambda v: r2(v, costs, p), w)
    np.testing.assert_allclose(r2_gradient(w, costs, p), numeric, rtol=1e-5, atol=1e-5)


def test_r1_is_the_hbl17_formula():
    """HBL17 §1.2: Σ (log K − 1 + B_k) w_k^p, with prior_costs = log K + B_k."""
    k = 3
    preparation = np.array([0.5, 2.0, 7.0])
    costs = np.log(k) + preparation
    w = np.array([0.0, 0.25, 1.0])
    assert r1(w, costs, 2.0) == pytest.approx(np.sum((np.log(k) - 1 + preparation) * w**2))
    assert r1(w, costs, 1.0) == pytest.approx(np.sum((np.log(k) - 1 + preparation) * w))


def test_r2_coefficients_stay_positive_on_the_cube():
    """HB24: 1 − log(W+1) + B_k > 0 for every feasible w when B_k ≥ log K."""
    for k in (1, 2, 10, 1000):
        costs = np.full(k, np.log(k))
        w = np.ones(k)
        assert np.all(1 - np.log(w.sum() + 1) + costs > 0)
        assert r2(w, costs) > 0
        # the penalty vanishes only at w = 0
        assert r2(np.zeros(k), costs) == 0.0


def test_regularizer_validates_and_defaults():
    assert Regularizer("r1").power == 1.0
    assert Regularizer("r2").power == 0.95
    with pytest.raises(ValueError, match="regularizer"):
        Regularizer("l1")
    with pytest.raises(ValueError, match="penalty"):
        Regularizer("r1", penalty=-1)
    with pytest.raises(ValueError, match="exponent"):
        Regularizer("r2", exponent=1.5)
    with pytest.raises(ValueError, match="delta"):
        Regularizer("r2", delta=0.0)
    w, costs = np.array([0.3, 0.9]), np.array([2.0, 3.0])
    assert Regularizer("r2", penalty=0.0).value(w, costs) == 0.0
    assert Regularizer("r2", penalty=0.5).value(w, costs) == pytest.approx(0.5 * r2(w, costs))


@SETTINGS
@given(weight_vectors(), st.sampled_from(["r1", "r2"]), st.sampled_from([0.0, 0.1]), st.sampled_from([0.5, 20.0]))
def test_the_spread_term_adds_its_value_and_gradient(vectors, kind, penalty, mu):
    """λR + μ·spread: the value is the sum of the two, and the gradient matches finite differences."""
    w, costs = vectors
    regularizer = Regularizer(kind, penalty=penalty, spread=mu)
    plain = Regularizer(kind, penalty=penalty)
    assert regularizer.value(w, costs) == pytest.approx(plain.value(w, costs) + mu * np.sum((w - w.mean()) ** 2))
    numeric = finite_difference(lambda v: regularizer.value(v, costs), w)
    np.testing.assert_allclose(regularizer.gradient(w, costs), numeric, rtol=1e-5, atol=1e-4)


@SETTINGS
@given(st.integers(1, 12), st.floats(0.0, 1.0))
def test_the_spread_is_zero_on_tempered_plain_naive_bayes(k, t):
    """spread(t·1) = 0 with a zero gradient, up to the rounding of the mean (the prior's centre is
    fitted: any common value), and any other vector costs more."""
    w = np.full(k, t)
    assert spread(w) < 1e-28 and np.allclose(spread_gradient(w), 0.0, atol=1e-14)
    if k > 1:
        other = w.copy()
        other[0] = 1.0 if t < 0.5 else 0.0  # moved by at least 1/2
        assert spread(other) >= 0.25 * (1.0 - 1.0 / k) - 1e-12


def test_a_zero_spread_is_the_papers_criterion_bit_for_bit():
    w, costs = np.array([0.3, 0.0, 0.9]), np.array([2.0, 3.0, 2.5])
    for kind in ("r1", "r2"):
        assert Regularizer(kind, spread=0.0).value(w, costs) == Regularizer(kind).value(w, costs)
        assert Regularizer(kind, spread=0.0).gradient(w, costs).tolist() == Regularizer(kind).gradient(w, costs).tolist()
    assert spread(np.zeros(0)) == 0.0 and spread_gradient(np.zeros(0)).shape == (0,)


@pytest.mark.parametrize("mu", [-1.0, float("nan"), float("inf"), True])
def test_a_bad_spread_is_refused_naming_it(mu):
    with pytest.raises(ValueError, match="spread"):
        Regularizer("r2", spread=mu)
