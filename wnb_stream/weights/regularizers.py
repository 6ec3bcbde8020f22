"""Sparse regularizers of the weighted naive Bayes criterion (docs/algorithms/weights.md#regularizers).

Two penalties R(w) on the weights ``w ∈ [0, 1]^K``, both weighted by the per-variable prior
costs ``prior_costs`` (``Context.prior_costs``, the B_k of docs/algorithms/modl.md#level-and-prior-cost:
the MODL preparation cost *including* the selection cost log K):

- **R1** (HBL17 §1.2): ``Σ_k (log K − 1 + B_k^prep) · w_k^p``. HBL17's B_k is the preparation
  cost alone; ours already holds ``log K + B_k^prep``, so the coefficient is ``prior_costs − 1``.
  For ``p < 1`` the power ``w^p`` is replaced by the smoothed ``ξ_δ`` below (its slope is
  infinite at 0 otherwise); ``p ≥ 1`` uses ``w^p`` as is.
- **R2** (HB24 §3.1, eq. 12): ``Σ_k (1 − log(W + 1) + B_k) · ξ_δ(w_k)`` with ``W = Σ_k w_k``,
  the Stirling-smoothed form of the selection prior. Its coefficients stay positive because
  ``B_k ≥ log K`` and ``W ≤ K``.

``ξ_δ`` follows the HB24 text (§3.1, item 2): ``ξ(τ) = τ^α`` is replaced on ``[0, δ]`` by its
*tangent* at δ, ``ξ(δ) + ξ'(δ)(τ − δ)``, and the result is renormalised by
``(ξ_δ(τ) − ξ_δ(0)) / (1 − ξ_δ(0))`` so that ``ξ_δ(0) = 0`` and ``ξ_δ(1) = 1``. (A chord through
0 would also linearise ``τ^α`` on ``[0, δ]``; HB24 states the tangent and the renormalisation, and
they are what is implemented.) The result is continuously differentiable, increasing and concave.

A third term, the **spread** ``μ Σ_k (w_k − w̄)²`` with ``w̄`` the mean weight, can be added to
either penalty (``Regularizer(spread=μ)``). It is the log of a Gaussian prior that ties the weights
to a common value, fitted with them: the mean that minimises ``Σ_k (w_k − t)²`` over t is w̄, so
the term costs nothing for tempered plain naive Bayes ``t·1`` and grows as the weights part. Its
weight does not grow with the rows while the likelihood does, so it decides at a few hundred rows,
where likelihoods fitted on the same rows as level 2 single out a few variables of many redundant
ones (which calibrates but ranks worse than plain naive Bayes), and fades on long windows. Its
gradient is ``2μ (w − w̄)`` (the mean's own derivative cancels, as Σ_k (w_k − w̄) = 0).

Everything here is a pure function of NumPy arrays, O(K) time.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._checks import real

__all__ = [
    "DEFAULT_SPREAD",
    "DEFAULT_SPREAD_ROWS",
    "Regularizer",
    "r1",
    "r1_gradient",
    "r2",
    "r2_gradient",
    "spread",
    "spread_gradient",
    "xi_delta",
    "xi_delta_derivative",
]

#: μ of PGDMB and VNS (docs/algorithms/weights.md#spread): chosen on the public small-data suite
#: (``benchmarks/quality_small.py``) among 0, 20, 50, 100 and 200.
DEFAULT_SPREAD = 20.0
#: ``spread_rows`` of PGDMB and VNS: the window weight up to which the spread term weighs μ, and
#: beyond which it weighs μ · spread_rows / W (docs/algorithms/weights.md#spread). The suite that
#: chose μ cuts its sets to 200–500 rows, so that up to 500 rows the criterion is the one chosen.
DEFAULT_SPREAD_ROWS = 500.0

DEFAULT_DELTA = 1e-3  # matches the 1e-3 zeroing threshold of PGDMB (docs/algorithms/weights.md#rprop)


def _xi_constants(exponent: float, delta: float) -> tuple[float, float, float]:
    """(ξ(δ), ξ'(δ), ξ_δ(0)) for ξ(τ) = τ^α."""
    at_delta = delta**exponent
    slope = exponent * delta ** (exponent - 1.0)
    at_zero = at_delta - slope * delta  # = δ^α (1 − α) ≥ 0
    return at_delta, slope, at_zero


def xi_delta(tau: np.ndarray, exponent: float, delta: float = DEFAULT_DELTA) -> np.ndarray:
    """Smoothed concave power ``ξ_δ(τ)`` of HB24 §3.1, same shape as ``tau``.

    Parameters
    ----------
    tau
        Values in [0, 1].
    exponent
        α in (0, 1].
    delta
        Width δ of the linearised neighbourhood of 0, in (0, 1).

    Examples
    --------
    >>> xi_delta(np.array([0.0, 1e-4, 0.25, 1.0]), exponent=0.95).round(6).tolist()
    [0.0, 0.000134, 0.267892, 1.0]
    """
    tau = np.asarray(tau, dtype=float)
    at_delta, slope, at_zero = _xi_constants(exponent, delta)
    raw = np.where(
        tau >= delta,
        np.power(np.maximum(tau, delta), exponent),  # the maximum keeps 0 out of the power
        at_delta + slope * (tau - delta),  # HB24: tangent at δ on [0, δ]
    )
    return (raw - at_zero) / (1.0 - at_zero)  # HB24: renormalised to ξ(0) = 0, ξ(1) = 1


def xi_delta_derivative(tau: np.ndarray, exponent: float, delta: float = DEFAULT_DELTA) -> np.ndarray:
    """Derivative ``ξ'_δ(τ)``, same shape as ``tau``; finite everywhere, continuous at δ."""
    tau = np.asarray(tau, dtype=float)
    _, slope, at_zero = _xi_constants(exponent, delta)
    raw = np.where(tau >= delta, exponent * np.power(np.maximum(tau, delta), exponent - 1.0), slope)
    return raw / (1.0 - at_zero)


def _r1_power(weights: np.ndarray, exponent: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """(w^p, d w^p / dw) with the ξ_δ smoothing for p < 1."""
    if exponent < 1.0:
        return xi_delta(weights, exponent, delta), xi_delta_derivative(weights, exponent, delta)
    return np.power(weights, exponent), exponent * np.power(weights, exponent - 1.0)


def r1(
    weights: np.ndarray, prior_costs: np.ndarray, exponent: float = 1.0, delta: float = DEFAULT_DELTA
) -> float:
    """R1 of HBL17: ``Σ_k (prior_costs_k − 1) · w_k^p`` (``w^p → ξ_δ`` when p < 1).

    ``weights`` and ``prior_costs`` are ``(K,)``; ``prior_costs`` includes log K (see module doc).

    Examples
    --------
    >>> r1(np.array([0.5, 1.0]), prior_costs=np.array([3.0, 2.0]))
    2.0
    """
    power, _ = _r1_power(np.asarray(weights, dtype=float), exponent, delta)
    return float(np.dot(np.asarray(prior_costs, dtype=float) - 1.0, power))


def r1_gradient(
    weights: np.ndarray, prior_costs: np.ndarray, exponent: float = 1.0, delta: float = DEFAULT_DELTA
) -> np.ndarray:
    """``(K,)`` gradient of :func:`r1`: ``(prior_costs_k − 1) · p w_k^(p−1)`` (HBL17 eq. 1.9)."""
    _, slope = _r1_power(np.asarray(weights, dtype=float), exponent, delta)
    return (np.asarray(prior_costs, dtype=float) - 1.0) * slope


def r2(
    weights: np.ndarray, prior_costs: np.ndarray, exponent: float = 0.95, delta: float = DEFAULT_DELTA
) -> float:
    """R2 of HB24 eq. 12: ``Σ_k (1 − log(W + 1) + B_k) · ξ_δ(w_k)``, ``W = Σ_k w_k``.

    Examples
    --------
    >>> round(r2(np.array([0.5, 1.0]), prior_costs=np.array([3.0, 2.0]), exponent=1.0), 6)
    3.625564
    """
    weights = np.asarray(weights, dtype=float)
    coefficients = 1.0 - np.log1p(weights.sum()) + np.asarray(prior_costs, dtype=float)
    return float(np.dot(coefficients, xi_delta(weights, exponent, delta)))


def r2_gradient(
    weights: np.ndarray, prior_costs: np.ndarray, exponent: float = 0.95, delta: float = DEFAULT_DELTA
) -> np.ndarray:
    """``(K,)`` gradient of :func:`r2`.

    ``∂R/∂w_m = (1 − log(W+1) + B_m) ξ'_δ(w_m) − Σ_k ξ_δ(w_k) / (W + 1)``
    (docs/algorithms/weights.md#regularizers).
    """
    weights = np.asarray(weights, dtype=float)
    total = weights.sum()
    coefficients = 1.0 - np.log1p(total) + np.asarray(prior_costs, dtype=float)
    coupling = xi_delta(weights, exponent, delta).sum() / (1.0 + total)
    return coefficients * xi_delta_derivative(weights, exponent, delta) - coupling


def spread(weights: np.ndarray) -> float:
    """``Σ_k (w_k − w̄)²``, the spread of the weights around their mean (0 for no weights).

    Examples
    --------
    >>> spread(np.array([0.5, 1.0, 0.0]))
    0.5
    """
    weights = np.asarray(weights, dtype=float)
    if weights.size == 0:
        return 0.0
    return float(np.sum((weights - weights.mean()) ** 2))


def spread_gradient(weights: np.ndarray) -> np.ndarray:
    """``(K,)`` gradient of :func:`spread`: ``2 (w − w̄)``."""
    weights = np.asarray(weights, dtype=float)
    if weights.size == 0:
        return np.zeros(0)
    return 2.0 * (weights - weights.mean())


@dataclasses.dataclass(frozen=True, slots=True)
class Regularizer:
    """A configured penalty ``λ · R(w) + μ · spread(w)``: ``kind`` is ``"r1"`` or ``"r2"``.

    ``exponent`` None means the paper default: 1 for R1 (HBL17 §1.4.2), 0.95 for R2 (HB24 §4).
    ``spread`` is μ ≥ 0, the weight of the spread term (0: the papers' criterion).

    Examples
    --------
    >>> reg = Regularizer("r1", penalty=0.1)
    >>> reg.value(np.array([0.5, 1.0]), np.array([3.0, 2.0]))
    0.2
    >>> reg.gradient(np.array([0.5, 1.0]), np.array([3.0, 2.0])).tolist()
    [0.2, 0.1]
    """

    kind: str
    penalty: float = 0.1
    exponent: float | None = None
    delta: float = DEFAULT_DELTA
    spread: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("r1", "r2"):
            raise ValueError(f"regularizer must be 'r1', 'r2' or None, got {self.kind!r}")
        if not self.penalty >= 0.0:
            raise ValueError(f"penalty must be >= 0, got {self.penalty}")
        if self.exponent is not None:
            upper = np.inf if self.kind == "r1" else 1.0
            if not 0.0 < self.exponent <= upper:
                bound = "(0, inf)" if self.kind == "r1" else "(0, 1]"
                raise ValueError(f"exponent must be in {bound} for {self.kind}, got {self.exponent}")
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {self.delta}")
        real(self.spread, "spread", low=0.0, finite=True, what="a finite number")

    @property
    def power(self) -> float:
        """The exponent in use (paper default when ``exponent`` is None)."""
        if self.exponent is not None:
            return float(self.exponent)
        return 1.0 if self.kind == "r1" else 0.95

    def value(self, weights: np.ndarray, prior_costs: np.ndarray) -> float:
        """``λ · R(w) + μ · spread(w)``; O(K)."""
        value = 0.0
        if self.penalty != 0.0:
            function = r1 if self.kind == "r1" else r2
            value = self.penalty * function(weights, prior_costs, self.power, self.delta)
        if self.spread != 0.0:
            value += self.spread * spread(weights)
        return value

    def gradient(self, weights: np.ndarray, prior_costs: np.ndarray) -> np.ndarray:
        """``(K,)`` gradient of ``λ · R(w) + μ · spread(w)``; O(K)."""
        if self.penalty == 0.0:
            gradient = np.zeros(len(weights))
        else:
            function = r1_gradient if self.kind == "r1" else r2_gradient
            gradient = self.penalty * function(weights, prior_costs, self.power, self.delta)
        if self.spread != 0.0:
            gradient = gradient + self.spread * spread_gradient(weights)
        return gradient
