"""Projected Rprop steps on [0, 1]^K with sparsification (docs/algorithms/weights.md#rprop, HBL17 §1.3–1.4).

Rprop (Riedmiller & Braun 1993) gives every coordinate its own step size Δ_k, multiplied by
η+ = 1.2 when the partial derivative keeps its sign and by η− = 0.5 when it flips (HBL17 §1.4;
its §1.3 prose states the two factors the other way round, a slip that §1.4 and RB93 correct),
within [Δmin, Δmax]. Three variants (``variant``, the ``rprop`` parameter of PGDMB and VNS):

- ``"irprop-"`` (default; Igel & Hüsken 2000): sign-only, each coordinate moves by
  ``−sign(g_k) Δ_k``. On a sign flip the coordinate does not move and its remembered derivative
  is set to 0, so the next step neither grows nor shrinks Δ_k. It damps the oscillations that
  noisy mini-batch gradients cause (their frequent sign flips make plain Rprop's steps collapse).
- ``"rprop-"``: plain sign-only Rprop: every coordinate moves by ``−sign(g_k) Δ_k`` at every
  step, no backtracking.
- ``"scaled"``: the step of HBL17 (eq. 1.10 and Algorithm 1), a gradient step with one learning
  rate per coordinate: ``w ← P(w − η ⊙ g)``. The rates η_k are the Δ_k above: they start at η0
  and follow the same ×η+ / ×η− rule, but scale the derivative instead of replacing it by its
  sign, so a coordinate whose derivative is small moves little. The order is the paper's:
  Algorithm 1 first moves with η_t, then "computes η_{t+1}" from the two successive derivatives it
  knows, g_t and g_{t−1}; the rate a step uses was therefore adapted at the previous step (the
  sign variants adapt Δ_k with g_t before moving). A flip moves the coordinate anyway, as in
  ``"rprop-"``.

After the move: projection on [0, 1] (HBL17 eq. 1.10) and weights below ``zero_threshold``
(1e-3, HBL17 §1.4) set to 0. A coordinate that was clipped or zeroed forgets its derivative
(``previous_gradient = 0``), so Δ_k does not keep growing while it is pinned to a bound
(our addition, docs/algorithms/weights.md#rprop). Coordinates outside ``movable`` stay at 0 with their state reset.

Cost: O(K) per step.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["RpropState", "project", "rprop_step"]

VARIANTS = ("irprop-", "rprop-", "scaled")


@dataclasses.dataclass(slots=True)
class RpropState:
    """Per-coordinate Rprop memory: ``step (K,)`` Δ_k and ``previous_gradient (K,)``."""

    step: np.ndarray
    previous_gradient: np.ndarray

    @classmethod
    def initial(cls, n_variables: int, initial_step: float) -> RpropState:
        """Fresh state: Δ_k = η0 for every coordinate, no remembered derivative."""
        return cls(np.full(n_variables, float(initial_step)), np.zeros(n_variables))


def project(weights: np.ndarray, zero_threshold: float) -> np.ndarray:
    """``P_[0,1]^K`` followed by the zeroing of weights below ``zero_threshold``; a new array."""
    projected = np.clip(weights, 0.0, 1.0)
    projected[projected < zero_threshold] = 0.0
    return projected


def rprop_step(
    weights: np.ndarray,
    gradient: np.ndarray,
    state: RpropState,
    *,
    variant: str = "irprop-",
    step_increase: float = 1.2,
    step_decrease: float = 0.5,
    step_min: float = 1e-6,
    step_max: float = 1.0,
    zero_threshold: float = 1e-3,
    movable: np.ndarray | None = None,
) -> tuple[np.ndarray, RpropState]:
    """One projected Rprop step: the new ``(K,)`` weights and the new state (inputs untouched).

    ``variant`` is one of ``VARIANTS`` (module doc). For ``"scaled"``, ``state.step`` holds the
    learning rates η_k and ``step_min``, ``step_max`` bound them.

    Examples
    --------
    >>> state = RpropState.initial(3, initial_step=0.1)
    >>> w, state = rprop_step(np.array([0.5, 0.05, 0.95]), np.array([1.0, 1.0, -1.0]), state)
    >>> w.tolist(), state.previous_gradient.tolist()
    ([0.4, 0.0, 1.0], [1.0, 0.0, 0.0])
    >>> w, state = rprop_step(w, np.array([1.0, -1.0, -1.0]), state)
    >>> w.round(2).tolist(), state.step.round(2).tolist()
    ([0.28, 0.1, 1.0], [0.12, 0.1, 0.1])

    The gradient-scaled step: the move is η_k · g_k with the current rates; the rates are adapted
    for the next step.

    >>> state = RpropState.initial(2, initial_step=0.1)
    >>> w, state = rprop_step(np.array([0.5, 0.5]), np.array([2.0, -0.5]), state, variant="scaled")
    >>> w.tolist(), state.step.tolist()
    ([0.3, 0.55], [0.1, 0.1])
    >>> w, state = rprop_step(w, np.array([1.0, 0.5]), state, variant="scaled")
    >>> w.round(3).tolist(), state.step.round(3).tolist()
    ([0.2, 0.5], [0.12, 0.05])
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    agreement = state.previous_gradient * gradient
    step = np.where(
        agreement > 0,
        np.minimum(state.step * step_increase, step_max),
        np.where(agreement < 0, np.maximum(state.step * step_decrease, step_min), state.step),
    )
    effective = gradient.copy()
    if variant == "scaled":
        raw = weights - state.step * gradient  # HBL17: η_t ⊙ g_t, then η_{t+1} from (g_t, g_{t−1})
    else:
        if variant == "irprop-":
            effective[agreement < 0] = 0.0  # iRprop−: no move after a sign flip, forget the sign
        raw = weights - np.sign(effective) * step
    new_weights = project(raw, zero_threshold)
    previous = effective
    previous[new_weights != raw] = 0.0  # pinned at a bound (or zeroed): do not grow Δ there
    if movable is not None:
        new_weights[~movable] = 0.0
        previous[~movable] = 0.0
    return new_weights, RpropState(step, previous)
