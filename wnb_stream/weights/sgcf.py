"""SG.CF: the two-stage weight optimisation of Hue & Boullé 2024 §3.2.2 (docs/algorithms/weights.md#sgcf).

HB24 minimise CR(w) = F_N(w) + λ f_C(w) on [0, 1]^K (eq. 13), F_N the negative log-likelihood
of the N rows and f_C the R2 prior of eq. 12, Σ_k (1 − log(W + 1) + B_k) ξ_δ(w_k), W = Σ_k w_k.
It is not convex (the concave ξ_δ and the coupling through log(W + 1)), so they solve it in two
stages (their "SG.CF", retained in §4.2):

1. **SG, convex relaxation** (eq. 15): W is frozen at an a-priori estimate W0 and ξ_δ(w) is
   replaced by w: ``CR~(w) = F_N(w) + λ Σ_k c_k w_k``, ``c_k = 1 − log(W0 + 1) + B_k``, convex
   with a Lipschitz gradient. Solved by the simplest gradient method: a projected gradient step
   ``T_L(w) = P_[0,1]^K(w − ∇CR~(w)/L)`` with a backtracking search on L (L doubles until the
   quadratic upper model holds at T_L(w); after an accepted step it halves), Nesterov 2004 §2.2.
   The accepted step decreases CR~ by at least L/2·‖T_L(w) − w‖² (monotone).
2. **CF, composite step** (eq. 16): W is frozen at the first stage's W~ = Σ_k w~_k and the
   concave ξ_δ comes back: ``CR^(w) = F_N(w) + λ Σ_k ĉ_k ξ_δ(w_k)``,
   ``ĉ_k = 1 − log(W~ + 1) + B_k``, started at w~. The penalty is separable, so each iteration
   (Nesterov 2013's gradient method for composite functions) minimises the quadratic model of
   F_N plus the exact penalty, coordinate by coordinate:
   ``x_k = argmin_{x ∈ [0,1]} g_k (x − w_k) + L/2 (x − w_k)² + λ ĉ_k ξ_δ(x)``
   (``coordinate_minimum``: the global minimum of a 1-D function that is quadratic on [0, δ],
   concave then convex on [δ, 1]). With the same backtracking on L, CR^ never increases.

Both stages stop when the accepted displacement is small, ``‖w⁺ − w‖ < tolerance`` (HB24 §4.3
retain 0.01), or after ``max_iterations`` accepted steps. HB24 leave W0 open ("an a priori
estimate for W"): we take W0 = Σ_k of the start point (K/2 from HB24's uniform start 1/2; the
previous solution's W when warm-started).

Everything here except the ``SGCF`` class is a pure function of arrays. Costs: one evaluation of
F_N and its gradient is O(N·K·J); a stage makes ``max_iterations`` accepted steps at most, each
with one evaluation plus one per backtrack.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._checks import integer
from ..io.schema import Float, Int
from .base import Batch
from .criterion import negative_log_likelihood, negative_log_likelihood_and_gradient
from .regularizers import DEFAULT_DELTA, _xi_constants, r2, xi_delta
from .search import WarmSearch, register_warm_search

__all__ = [
    "SGCF",
    "StageResult",
    "composite_objective",
    "composite_stage",
    "convex_objective",
    "convex_stage",
    "coordinate_minimum",
    "relaxed_costs",
]

#: Backtracking doublings of L per iteration before the stage gives up (2^60: beyond any curvature).
_MAX_BACKTRACKS = 60


@dataclasses.dataclass(slots=True)
class StageResult:
    """Output of one stage: ``weights (K,)``, the objective after each accepted step
    (``values``, its first entry at the start point), the last Lipschitz estimate and whether the
    displacement test stopped it."""

    weights: np.ndarray
    values: list
    lipschitz: float
    converged: bool


def relaxed_costs(prior_costs: np.ndarray, total_weight: float) -> np.ndarray:
    """``(K,)`` coefficients ``1 − log(W + 1) + B_k`` of eq. 15/16 for a frozen ``W = total_weight``.

    >>> relaxed_costs(np.array([3.0, 2.0]), 1.0).round(4).tolist()
    [3.3069, 2.3069]
    """
    return 1.0 - np.log1p(total_weight) + np.asarray(prior_costs, dtype=float)


def convex_objective(weights: np.ndarray, data: Batch, coefficients: np.ndarray, penalty: float) -> float:
    """CR~ of HB24 eq. 15: ``F_N(w) + λ Σ_k c_k w_k`` (``coefficients`` c from :func:`relaxed_costs`).

    Examples
    --------
    >>> data = Batch(np.log([[[0.7, 0.2], [0.4, 0.5]]]), np.array([1]), np.ones(1), np.log([0.6, 0.4]))
    >>> round(convex_objective(np.array([0.5, 0.5]), data, np.array([2.0, 1.0]), 0.1), 6)
    1.40561
    """
    nll = negative_log_likelihood(weights, data.log_lik, data.y, data.log_prior, data.sample_weight)
    return float(nll) + penalty * float(np.dot(coefficients, weights))


def composite_objective(
    weights: np.ndarray, data: Batch, coefficients: np.ndarray, penalty: float, exponent: float, delta: float
) -> float:
    """CR^ of HB24 eq. 16: ``F_N(w) + λ Σ_k ĉ_k ξ_δ(w_k)`` (W frozen inside ĉ)."""
    nll = negative_log_likelihood(weights, data.log_lik, data.y, data.log_prior, data.sample_weight)
    return float(nll) + penalty * float(np.dot(coefficients, xi_delta(weights, exponent, delta)))


def coordinate_minimum(
    weights: np.ndarray,
    gradient: np.ndarray,
    lipschitz: float,
    coefficients: np.ndarray,
    exponent: float,
    delta: float,
    upper: np.ndarray,
) -> np.ndarray:
    """``(K,)`` per-coordinate global minimiser of the composite model on ``[0, upper_k]``.

    Minimises ``φ_k(x) = g_k (x − w_k) + L/2 (x − w_k)² + a_k ξ_δ(x)``, ``a_k = coefficients_k ≥ 0``.
    On [0, δ] ξ_δ is linear, so φ_k is a convex quadratic (closed form). On [δ, 1],
    ``φ''(x) = L − a α(1 − α) x^(α−2) / (1 − ξ_δ(0))`` increases with x: φ_k is concave up to
    ``x_c = (a α (1 − α) / ((1 − ξ_δ(0)) L))^(1/(2 − α))`` and convex after, so its minimum there is
    at δ, at max(δ, x_c) or at the root of φ' in the convex part (bisection, 60 halvings). The
    least of these candidates (and of 0 and ``upper``) is returned. ``upper`` 0 pins a coordinate.
    Cost O(K) (times the 60 halvings).

    >>> coordinate_minimum(np.array([0.5, 0.5]), np.array([0.0, 10.0]), 4.0, np.array([0.0, 0.0]),
    ...                    0.95, 1e-3, np.ones(2)).tolist()
    [0.5, 0.0]
    """
    w, g, a = (np.asarray(v, dtype=float) for v in (weights, gradient, coefficients))
    upper = np.asarray(upper, dtype=float)
    _, slope, at_zero = _xi_constants(exponent, delta)
    scale = 1.0 / (1.0 - at_zero)  # the renormalisation of ξ_δ

    def phi(x):
        return g * (x - w) + 0.5 * lipschitz * (x - w) ** 2 + a * xi_delta(x, exponent, delta)

    def phi_prime_right(x):  # φ' on [δ, 1]
        return g + lipschitz * (x - w) + a * exponent * np.power(x, exponent - 1.0) * scale

    linear_cap = np.minimum(delta, upper)
    candidates = [np.zeros_like(w), upper, np.clip(w - (g + a * slope * scale) / lipschitz, 0.0, linear_cap)]
    right = upper >= delta
    if np.any(right):
        with np.errstate(divide="ignore"):
            inflection = np.power(a * exponent * (1.0 - exponent) * scale / lipschitz, 1.0 / (2.0 - exponent))
        low = np.clip(np.maximum(delta, inflection), delta, np.maximum(upper, delta))
        high = np.maximum(upper, delta)
        root_low, root_high = low.copy(), high.copy()
        for _ in range(60):  # bisection of the increasing φ' on [low, high]
            middle = 0.5 * (root_low + root_high)
            positive = phi_prime_right(middle) >= 0
            root_high = np.where(positive, middle, root_high)
            root_low = np.where(positive, root_low, middle)
        root = np.where(phi_prime_right(low) >= 0, low, np.where(phi_prime_right(high) <= 0, high, root_high))
        for x in (np.full_like(w, delta), low, root):
            candidates.append(np.where(right, x, 0.0))
    stack = np.stack(candidates)  # (m, K)
    values = np.stack([phi(x) for x in candidates])  # (m, K)
    best = stack[np.argmin(values, axis=0), np.arange(len(w))]
    return np.clip(best, 0.0, upper)


def _gradient_stage(start, data, objective, step, lipschitz, tolerance, max_iterations) -> StageResult:
    """Generic composite gradient method with backtracking (Nesterov 2013, "gradient method").

    ``step(w, g, L) -> x`` minimises the model ``g·(x − w) + L/2‖x − w‖² + Ψ(x)``; the smooth
    part F_N is the window's NLL. A step is accepted when F_N(x) ≤ F_N(w) + g·(x − w) + L/2‖x − w‖².
    """
    w = np.asarray(start, dtype=float).copy()
    value, gradient = negative_log_likelihood_and_gradient(w, data.log_lik, data.y, data.log_prior, data.sample_weight)
    values = [objective(w)]
    converged = False
    for _ in range(max_iterations):
        for _ in range(_MAX_BACKTRACKS):
            x = step(w, gradient, lipschitz)
            move = x - w
            new_value, new_gradient = negative_log_likelihood_and_gradient(
                x, data.log_lik, data.y, data.log_prior, data.sample_weight
            )
            bound = value + float(np.dot(gradient, move)) + 0.5 * lipschitz * float(np.dot(move, move))
            if new_value <= bound + 1e-12 * max(1.0, abs(bound)):
                break
            lipschitz *= 2.0
        else:  # the model never held (rounding at a minimum): stop where we are
            converged = True
            break
        w, value, gradient = x, new_value, new_gradient
        values.append(objective(w))
        lipschitz = max(lipschitz / 2.0, 1e-12)
        if float(np.linalg.norm(move)) < tolerance:  # HB24 §3.2.1: small norm of the displacement
            converged = True
            break
    return StageResult(w, values, lipschitz, converged)


def convex_stage(
    start: np.ndarray,
    data: Batch,
    coefficients: np.ndarray,
    penalty: float,
    movable: np.ndarray | None = None,
    tolerance: float = 0.01,
    max_iterations: int = 200,
    lipschitz: float = 1.0,
) -> StageResult:
    """Stage 1 (SG on eq. 15): projected gradient with backtracking from ``start``.

    Variables outside ``movable`` stay at 0. Each accepted step decreases CR~ (``values`` is
    non-increasing). Cost O(N·K·J) per evaluation.
    """
    upper = np.ones(len(start)) if movable is None else np.asarray(movable, dtype=float)
    linear = penalty * np.asarray(coefficients, dtype=float)

    def step(w, g, lip):
        return np.clip(w - (g + linear) / lip, 0.0, upper)

    return _gradient_stage(
        np.minimum(start, upper), data, lambda w: convex_objective(w, data, coefficients, penalty),
        step, lipschitz, tolerance, max_iterations,
    )  # fmt: skip


def composite_stage(
    start: np.ndarray,
    data: Batch,
    coefficients: np.ndarray,
    penalty: float,
    exponent: float = 0.95,
    delta: float = DEFAULT_DELTA,
    movable: np.ndarray | None = None,
    tolerance: float = 0.01,
    max_iterations: int = 200,
    lipschitz: float = 1.0,
) -> StageResult:
    """Stage 2 (CF on eq. 16): composite gradient steps solved by :func:`coordinate_minimum`.

    ``values`` is non-increasing. Cost O(N·K·J) per evaluation.
    """
    upper = np.ones(len(start)) if movable is None else np.asarray(movable, dtype=float)
    a = penalty * np.asarray(coefficients, dtype=float)

    def step(w, g, lip):
        return coordinate_minimum(w, g, lip, a, exponent, delta, upper)

    return _gradient_stage(
        np.minimum(start, upper), data,
        lambda w: composite_objective(w, data, coefficients, penalty, exponent, delta),
        step, lipschitz, tolerance, max_iterations,
    )  # fmt: skip


class SGCF(WarmSearch):
    """Two-stage SG.CF search of HB24 §3.2.2 on the history window (see the module's doc).

    A batch search: ``learn`` counts rows, and when a search is due (32 rows, then each time the
    rows since the last search amount to the window it saw) both stages run on the window, warm-
    started from the current weights (docs/algorithms/weights.md#batch-searches).

    Parameters
    ----------
    batch_size
        Rows per ``learn`` call asked of the classifier (the schedule counts rows, so this only
        sets how often it is checked).
    penalty
        λ ≥ 0 of eq. 13 (HB24 §4.3 retain 0.25).
    exponent
        α in (0, 1] of ξ(τ) = τ^α (HB24 §4.3: 0.95).
    delta
        δ in (0, 1) of the ξ_δ smoothing (docs/algorithms/weights.md#regularizers).
    tolerance
        ε > 0: a stage stops when ``‖Δw‖ < ε`` (HB24 §4.3: 0.01).
    max_iterations
        Accepted steps per stage, at least 1.
    max_variables
        None (no limit) or m ≥ 0: every hand-over has at most m non-zero weights (kept by
        criterion gain, the others pinned at 0 and the search re-run; module
        :mod:`~wnb_stream.weights.search`).
    refine
        None or a ``PGDMB``/``VNS`` prototype restarted from each hand-over (HB24 §4.4); then
        predictions use its weights. Not with ``max_variables``.

    Examples
    --------
    >>> import numpy as np
    >>> from wnb_stream.weights import Context, SGCF, toy_batch
    >>> rng = np.random.default_rng(42)
    >>> model = SGCF()
    >>> model.reset(n_variables=6, n_classes=2, seed=42)
    >>> context = Context(prior_costs=np.full(6, np.log(6) + 1), active=np.ones(6, bool))
    >>> history = toy_batch(rng, 2000)
    >>> model.learn(toy_batch(rng, 100), history, context)
    >>> model.weights.round(2).tolist()
    [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    """

    def __init__(
        self,
        batch_size: int = 100,
        penalty: float = 0.25,
        exponent: float = 0.95,
        delta: float = DEFAULT_DELTA,
        tolerance: float = 0.01,
        max_iterations: int = 200,
        max_variables: int | None = None,
        refine=None,
    ):
        super().__init__(batch_size, max_variables, refine)
        if not penalty >= 0:
            raise ValueError(f"penalty must be >= 0, got {penalty}")
        if not 0.0 < exponent <= 1.0:
            raise ValueError(f"exponent must be in (0, 1], got {exponent}")
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta}")
        if not tolerance > 0:
            raise ValueError(f"tolerance must be > 0, got {tolerance}")
        integer(max_iterations, "max_iterations", low=1)
        self.penalty = penalty
        self.exponent = exponent
        self.delta = delta
        self.tolerance = tolerance
        self.max_iterations = max_iterations

    @classmethod
    def _unit_test_params(cls):
        yield {"batch_size": 20}
        yield {"batch_size": 20, "max_variables": 2}

    def _penalty(self, weights: np.ndarray, costs: np.ndarray) -> float:
        """λ f_C(w), HB24 eq. 12 (R2 with exponent α)."""
        return self.penalty * r2(weights, costs, self.exponent, self.delta)

    def _search(self, window: Batch, costs: np.ndarray, start: np.ndarray, movable: np.ndarray) -> np.ndarray:
        """SG (eq. 15, W0 = Σ start) then CF (eq. 16, W~ = Σ of the first stage's output)."""
        start = np.where(movable, start, 0.0)
        lipschitz = max(float(np.sum(window.sample_weight)), 1e-12) * 1e-2  # backtracking adapts it
        first = convex_stage(
            start, window, relaxed_costs(costs, float(start.sum())), self.penalty, movable,
            self.tolerance, self.max_iterations, lipschitz,
        )  # fmt: skip
        second = composite_stage(
            first.weights, window, relaxed_costs(costs, float(first.weights.sum())), self.penalty,
            self.exponent, self.delta, movable, self.tolerance, self.max_iterations, first.lipschitz,
        )  # fmt: skip
        return second.weights


register_warm_search(
    SGCF,
    {
        "penalty": Float(doc="λ"),
        "exponent": Float(doc="α of ξ(τ) = τ^α"),
        "delta": Float(doc="δ of the ξ_δ smoothing"),
        "tolerance": Float(doc="a stage stops when the displacement norm is below it"),
        "max_iterations": Int(doc="accepted steps per stage"),
    },
    doc="Two-stage SG.CF search on the window (HB24 §3.2.2)",
)
