"""Direct optimisation of the weights (Guigourès & Boullé 2011, docs/algorithms/weights.md#direct).

GB11 minimise ``D(w) = C(w) − log f(w)`` over [0, 1]^K: C the negative log-likelihood of the
N rows, f a prior that favours weights at 0 or 1, "the mean of two normal laws centred on 0 and 1,
projected on [0, 1]", taken independently per weight:

    −log f(w) = Σ_k −log[(φ_σ(w_k) + φ_σ(w_k − 1)) / erf(1 / (σ√2))]

φ_σ the normal density of standard deviation σ; the divisor makes each factor a density on
[0, 1]. (GB11 print the constant as 2 / (erf(1) σ√(2π)), which integrates to 1 only for
σ = 1/√2; the constant does not move the optimum.) σ must be large enough not to spoil the
likelihood (GB11) and below 1/2 for the mixture to be bimodal; default 0.25.
``penalty`` multiplies the prior term (GB11: 1).

The descent (GB11 §3), from a start point:

- ``w ← P_[0,1]^K(w − η ⊙ ∇D(w)/N)``, with per-coordinate rates η_k starting at η0 = 1e-2 and
  adapted Rprop-style: ×1.2 when ∂D/∂w_k keeps its sign between two iterations, ×0.5 otherwise,
  within [``rate_min``, ``rate_max``]. The step uses the gradient's magnitude (GB11's update is
  ``W − η ∇C``, not Rprop's sign step); we divide it by the window's total sample weight N so
  that η0 means the same on any window (GB11 leave the scale open).
- **Pruning**: a weight at 0 whose derivative still pushes it below 0 at the next iteration is
  removed from the model for the rest of the start (GB11: the variable "takes a zero value and the
  gradient stays negative", the descent direction −∂D/∂w_k being negative there).
- **Stop** when no weight moves by 1/N or more (GB11: "convergence of the weights to within 1/N"),
  or after ``max_iterations`` iterations.

**Multistart** (GB11 §3): ``n_starts`` descents; the first from the warm start, each next one
from the best result so far with its non-zero weights redrawn uniformly in [0, 1] (zeros stay 0:
"the first start eliminates most variables, the next ones refine the selection"). The best D wins.
Draws come from the learner's seeded generator.

Pure functions: :func:`bimodal_prior`, :func:`bimodal_prior_gradient`, :func:`descent`.
Cost: O(N·K·J) per iteration, at most ``n_starts × max_iterations`` iterations per search.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._checks import integer
from ..io.schema import Float, Int
from .base import Batch
from .criterion import negative_log_likelihood_and_gradient
from .search import WarmSearch, register_warm_search

__all__ = ["Direct", "DescentResult", "bimodal_prior", "bimodal_prior_gradient", "descent"]


def bimodal_prior(weights: np.ndarray, sigma: float = 0.25) -> float:
    """``−log f(w) = Σ_k −log[(φ_σ(w_k) + φ_σ(w_k − 1)) / erf(1/(σ√2))]`` (GB11 §3); O(K).

    Examples
    --------
    >>> round(bimodal_prior(np.array([0.0, 1.0]), sigma=0.25), 6) == round(2 * bimodal_prior(np.array([0.0])), 6)
    True
    >>> bimodal_prior(np.array([0.5])) > bimodal_prior(np.array([0.0]))
    True
    """
    w = np.asarray(weights, dtype=float)
    log_density = np.logaddexp(-0.5 * (w / sigma) ** 2, -0.5 * ((w - 1.0) / sigma) ** 2)
    log_density -= math.log(sigma * math.sqrt(2.0 * math.pi)) + math.log(math.erf(1.0 / (sigma * math.sqrt(2.0))))
    return -float(np.sum(log_density))


def bimodal_prior_gradient(weights: np.ndarray, sigma: float = 0.25) -> np.ndarray:
    """``(K,)`` gradient of :func:`bimodal_prior`: ``Σ_m r_km (w_k − μ_m)/σ²``, μ ∈ {0, 1}, r the
    posterior responsibilities of the two modes (computed in log space); O(K)."""
    w = np.asarray(weights, dtype=float)
    near_zero, near_one = -0.5 * (w / sigma) ** 2, -0.5 * ((w - 1.0) / sigma) ** 2
    r_one = np.exp(near_one - np.logaddexp(near_zero, near_one))  # responsibility of the mode at 1
    return (w - r_one) / sigma**2  # r0·w + r1·(w − 1) = w − r1


@dataclasses.dataclass(slots=True)
class DescentResult:
    """One start: ``weights (K,)``, the objective D after each iteration (``values``, from the
    start point), the iterations made and the variables pruned (``(K,)`` bool)."""

    weights: np.ndarray
    values: list
    iterations: int
    pruned: np.ndarray


def descent(
    start: np.ndarray,
    data: Batch,
    penalty: float = 1.0,
    sigma: float = 0.25,
    movable: np.ndarray | None = None,
    initial_rate: float = 1e-2,
    rate_increase: float = 1.2,
    rate_decrease: float = 0.5,
    rate_min: float = 1e-6,
    rate_max: float = 50.0,
    max_iterations: int = 100,
) -> DescentResult:
    """One GB11 descent from ``start`` on ``data`` (module doc); pure. Cost O(N·K·J) per iteration."""
    k = len(start)
    alive = np.ones(k, dtype=bool) if movable is None else np.asarray(movable, dtype=bool).copy()
    w = np.where(alive, np.clip(start, 0.0, 1.0), 0.0)
    scale = max(float(np.sum(data.sample_weight)), 1e-12)  # N: the step is taken on D/N
    tolerance = 1.0 / max(len(data), 1)  # GB11: weights converged to within 1/N
    rate = np.full(k, float(initial_rate))
    previous = np.zeros(k)

    def objective_and_gradient(weights):
        nll, gradient = negative_log_likelihood_and_gradient(
            weights, data.log_lik, data.y, data.log_prior, data.sample_weight
        )
        return nll + penalty * bimodal_prior(weights, sigma), gradient + penalty * bimodal_prior_gradient(weights, sigma)

    value, gradient = objective_and_gradient(w)
    values, iterations = [value], 0
    for _ in range(max_iterations):
        gradient = np.where(alive, gradient, 0.0)
        # GB11 pruning: a weight at 0 that the gradient still pushes below 0 leaves the model
        newly_pruned = alive & (w == 0.0) & (gradient > 0) & (previous > 0)
        alive &= ~newly_pruned
        gradient[newly_pruned] = 0.0
        if iterations:  # GB11: Rprop-style rates, ×1.2 if the sign is kept, ×0.5 otherwise
            agree = previous * gradient > 0
            rate = np.clip(np.where(agree, rate * rate_increase, rate * rate_decrease), rate_min, rate_max)
        new_w = np.where(alive, np.clip(w - rate * gradient / scale, 0.0, 1.0), 0.0)
        move = float(np.max(np.abs(new_w - w))) if k else 0.0
        previous = gradient
        w = new_w
        value, gradient = objective_and_gradient(w)
        values.append(value)
        iterations += 1
        if move < tolerance:
            break
    return DescentResult(w, values, iterations, ~alive if movable is None else (~alive & np.asarray(movable, bool)))


class Direct(WarmSearch):
    """Direct gradient optimisation with a bimodal prior and multistarts (GB11), on the window.

    A batch search (docs/algorithms/weights.md#batch-searches): ``learn`` counts rows, and when a
    search is due (32 rows, then each time the rows since the last search amount to the window it
    saw) ``n_starts`` descents run on the window; the first starts from the current weights.

    Parameters
    ----------
    batch_size
        Rows per ``learn`` call asked of the classifier (how often the schedule is checked).
    penalty
        Multiplier ≥ 0 of the prior term −log f(w) (GB11: 1).
    sigma
        σ in (0, 0.5) of the two modes (bimodal below 1/2); default 0.25.
    n_starts
        Descents per search, at least 1 (GB11's experiments: 5).
    max_iterations
        Iterations per descent, at least 1 (GB11 report 20 to 60 until convergence).
    initial_rate, rate_increase, rate_decrease, rate_min, rate_max
        η0 (GB11: 1e-2), the factors (GB11: 1.2 and 0.5) and the bounds of the per-coordinate rates.
    max_variables
        None (no limit) or m ≥ 0: every hand-over has at most m non-zero weights
        (:mod:`~wnb_stream.weights.search`).
    refine
        None or a ``PGDMB``/``VNS`` prototype restarted from each hand-over; then predictions use
        its weights. Not with ``max_variables``.

    Examples
    --------
    >>> import numpy as np
    >>> from wnb_stream.weights import Context, Direct, toy_batch
    >>> rng = np.random.default_rng(42)
    >>> model = Direct()
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
        penalty: float = 1.0,
        sigma: float = 0.25,
        n_starts: int = 5,
        max_iterations: int = 100,
        initial_rate: float = 1e-2,
        rate_increase: float = 1.2,
        rate_decrease: float = 0.5,
        rate_min: float = 1e-6,
        rate_max: float = 50.0,
        max_variables: int | None = None,
        refine=None,
    ):
        super().__init__(batch_size, max_variables, refine)
        integer(n_starts, "n_starts", low=1)
        integer(max_iterations, "max_iterations", low=1)
        if not penalty >= 0:
            raise ValueError(f"penalty must be >= 0, got {penalty}")
        if not 0.0 < sigma < 0.5:
            raise ValueError(f"sigma must be in (0, 0.5), got {sigma}")
        if not rate_increase > 1.0:
            raise ValueError(f"rate_increase must be > 1, got {rate_increase}")
        if not 0.0 < rate_decrease < 1.0:
            raise ValueError(f"rate_decrease must be in (0, 1), got {rate_decrease}")
        if not 0.0 < rate_min <= initial_rate <= rate_max:
            raise ValueError(
                f"rates must satisfy 0 < rate_min <= initial_rate <= rate_max, got {rate_min}, {initial_rate}, {rate_max}"
            )
        self.penalty = penalty
        self.sigma = sigma
        self.n_starts = n_starts
        self.max_iterations = max_iterations
        self.initial_rate = initial_rate
        self.rate_increase = rate_increase
        self.rate_decrease = rate_decrease
        self.rate_min = rate_min
        self.rate_max = rate_max

    @classmethod
    def _unit_test_params(cls):
        yield {"batch_size": 20, "n_starts": 2}
        yield {"batch_size": 20, "n_starts": 2, "max_variables": 2}

    def _penalty(self, weights: np.ndarray, costs: np.ndarray) -> float:
        """``penalty · (−log f(w))`` (GB11's prior; the MODL costs play no part)."""
        return self.penalty * bimodal_prior(weights, self.sigma)

    def _search(self, window: Batch, costs: np.ndarray, start: np.ndarray, movable: np.ndarray) -> np.ndarray:
        """``n_starts`` descents; the best D wins (module doc)."""
        options = dict(
            penalty=self.penalty, sigma=self.sigma, movable=movable, initial_rate=self.initial_rate,
            rate_increase=self.rate_increase, rate_decrease=self.rate_decrease, rate_min=self.rate_min,
            rate_max=self.rate_max, max_iterations=self.max_iterations,
        )  # fmt: skip
        best = descent(start, window, **options)
        for _ in range(self.n_starts - 1):
            restart = np.where(best.weights > 0, self._rng.random(len(start)), 0.0)  # GB11: redraw the non-zero weights
            result = descent(restart, window, **options)
            if result.values[-1] < best.values[-1]:
                best = result
        return best.weights


register_warm_search(
    Direct,
    {
        "penalty": Float(doc="multiplier of the bimodal prior term"),
        "sigma": Float(doc="σ of the two modes"),
        "n_starts": Int(doc="descents per search"),
        "max_iterations": Int(doc="iterations per descent"),
        "initial_rate": Float(doc="η0, initial per-coordinate rate"),
        "rate_increase": Float(doc="rate factor when the sign is kept"),
        "rate_decrease": Float(doc="rate factor otherwise"),
        "rate_min": Float(doc="least rate"),
        "rate_max": Float(doc="largest rate"),
    },
    doc="Direct descent with a bimodal prior and multistarts (GB11)",
)
