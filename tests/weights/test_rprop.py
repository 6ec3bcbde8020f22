"""The projected Rprop step (docs/algorithms/weights.md#rprop)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.weights.rprop import RpropState, project, rprop_step


def test_steps_grow_on_agreement_and_shrink_on_a_flip():
    state = RpropState(np.full(2, 0.1), np.array([1.0, 1.0]))
    w, state = rprop_step(np.array([0.5, 0.5]), np.array([1.0, -1.0]), state)
    np.testing.assert_allclose(state.step, [0.12, 0.05])
    # iRprop−: the flipped coordinate does not move and forgets its derivative
    np.testing.assert_allclose(w, [0.38, 0.5])
    np.testing.assert_allclose(state.previous_gradient, [1.0, 0.0])


def test_plain_rprop_moves_on_a_flip():
    state = RpropState(np.full(2, 0.1), np.array([1.0, 1.0]))
    w, state = rprop_step(np.array([0.5, 0.5]), np.array([1.0, -1.0]), state, variant="rprop-")
    np.testing.assert_allclose(w, [0.38, 0.55])
    np.testing.assert_allclose(state.previous_gradient, [1.0, -1.0])


def test_step_bounds():
    state = RpropState(np.array([0.9, 2e-6]), np.array([1.0, 1.0]))
    _, state = rprop_step(np.array([0.5, 0.5]), np.array([1.0, -1.0]), state, step_max=1.0, step_min=1e-6)
    np.testing.assert_allclose(state.step, [1.0, 1e-6])


def test_projection_zeroing_and_pinned_coordinates_forget_their_sign():
    state = RpropState(np.full(4, 0.3), np.zeros(4))
    w, state = rprop_step(np.array([0.2, 0.9, 0.3005, 0.5]), np.array([1.0, -1.0, 1.0, 1.0]), state)
    np.testing.assert_allclose(w, [0.0, 1.0, 0.0, 0.2])  # 0.0005 < 1e-3 is zeroed
    np.testing.assert_allclose(state.previous_gradient, [0.0, 0.0, 0.0, 1.0])


def test_immovable_coordinates_stay_at_zero():
    state = RpropState.initial(3, 0.1)
    w, state = rprop_step(np.array([0.5, 0.5, 0.5]), np.array([-1.0, -1.0, 1.0]), state, movable=np.array([True, False, True]))
    np.testing.assert_allclose(w, [0.6, 0.0, 0.4])


def test_scaled_step_moves_by_rate_times_gradient_and_adapts_the_rates_after_the_move():
    """HBL17 Algorithm 1: w^{t+1} = P(w^t − η_t ⊙ g_t), then η_{t+1} from the signs of g_t and g_{t−1}."""
    state = RpropState.initial(3, 0.1)  # η_0 = 0.1, no derivative remembered
    w, state = rprop_step(np.array([0.5, 0.5, 0.5]), np.array([2.0, -1.0, 0.5]), state, variant="scaled")
    np.testing.assert_allclose(w, [0.3, 0.6, 0.45])  # 0.5 − 0.1·g
    np.testing.assert_allclose(state.step, [0.1, 0.1, 0.1])  # first step: nothing to compare with
    np.testing.assert_allclose(state.previous_gradient, [2.0, -1.0, 0.5])
    # second step: signs kept, flipped, flipped; the move still uses η_1 = 0.1
    w, state = rprop_step(w, np.array([1.0, 3.0, -0.5]), state, variant="scaled")
    np.testing.assert_allclose(w, [0.2, 0.3, 0.5])  # a flip moves the coordinate (no backtracking)
    np.testing.assert_allclose(state.step, [0.12, 0.05, 0.05])  # η_2 = η_1 · (1.2, 0.5, 0.5)
    np.testing.assert_allclose(state.previous_gradient, [1.0, 3.0, -0.5])
    # third step: the adapted rates scale the move
    w, state = rprop_step(w, np.array([1.0, 2.0, 1.0]), state, variant="scaled")
    np.testing.assert_allclose(w, [0.2 - 0.12, 0.3 - 0.1, 0.5 - 0.05])
    np.testing.assert_allclose(state.step, [0.144, 0.06, 0.025])


def test_scaled_step_rate_bounds_projection_and_pinned_coordinates():
    state = RpropState(np.array([0.9, 2e-6, 0.5, 0.5, 0.5]), np.array([1.0, 1.0, -1.0, 1.0, 1.0]))
    w, state = rprop_step(
        np.array([0.5, 0.5, 0.5, 0.5, 0.5]), np.array([1.0, -1.0, -4.0, 0.9992, 0.2]), state,
        variant="scaled", step_min=1e-6, step_max=1.0,
    )  # fmt: skip
    # moves: −0.9, +2e-6, +2.0 (clipped to 1), −0.4996 (0.0004 < 1e-3: zeroed), −0.1
    np.testing.assert_allclose(w, [0.0, 0.500002, 1.0, 0.0, 0.4])
    np.testing.assert_allclose(state.step, [1.0, 1e-6, 0.6, 0.6, 0.6])  # ×1.2 / ×0.5 within [1e-6, 1]
    np.testing.assert_allclose(state.previous_gradient, [0.0, -1.0, 0.0, 0.0, 0.2])  # clipped or zeroed: forgotten


def test_scaled_step_keeps_immovable_coordinates_at_zero():
    state = RpropState.initial(2, 0.1)
    w, state = rprop_step(np.array([0.5, 0.5]), np.array([-1.0, -1.0]), state, variant="scaled", movable=np.array([True, False]))
    np.testing.assert_allclose(w, [0.6, 0.0])
    np.testing.assert_allclose(state.previous_gradient, [-1.0, 0.0])


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant"):
        rprop_step(np.full(2, 0.5), np.ones(2), RpropState.initial(2, 0.1), variant="adam")


def test_scaled_step_is_proportional_to_the_gradient_where_sign_steps_are_not():
    w0, gradient = np.full(2, 0.5), np.array([0.01, 1.0])
    scaled, _ = rprop_step(w0, gradient, RpropState.initial(2, 0.1), variant="scaled")
    signed, _ = rprop_step(w0, gradient, RpropState.initial(2, 0.1), variant="rprop-")
    np.testing.assert_allclose(w0 - scaled, [0.001, 0.1])
    np.testing.assert_allclose(w0 - signed, [0.1, 0.1])


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 20), st.integers(0, 2**32 - 1), st.sampled_from(["irprop-", "rprop-", "scaled"]))
def test_weights_stay_in_the_cube_and_small_values_are_zeroed(k, seed, variant):
    rng = np.random.default_rng(seed)
    w = project(rng.uniform(-0.5, 1.5, k), 1e-3)
    state = RpropState.initial(k, 0.01)
    for _ in range(30):
        w, state = rprop_step(w, rng.normal(size=k), state, variant=variant)
        assert np.all((w >= 0) & (w <= 1))
        assert not np.any((w > 0) & (w < 1e-3))
        assert np.all((state.step >= 1e-6) & (state.step <= 1.0))
