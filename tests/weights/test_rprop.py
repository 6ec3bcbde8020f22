"""The projected Rprop step (docs/algorithms/weights.md#rprop)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 20), st.integers(0, 2**32 - 1), st.sampled_from(["irprop-", "rprop-"]))
def test_weights_stay_in_the_cube_and_small_values_are_zeroed(k, seed, variant):
    rng = np.random.default_rng(seed)
    w = project(rng.uniform(-0.5, 1.5, k), 1e-3)
    state = RpropState.initial(k, 0.01)
    for _ in range(30):
        w, state = rprop_step(w, rng.normal(size=k), state, variant=variant)
        assert np.all((w >= 0) & (w <= 1))
        assert not np.any((w > 0) & (w < 1e-3))
        assert np.all((state.step >= 1e-6) & (state.step <= 1.0))
