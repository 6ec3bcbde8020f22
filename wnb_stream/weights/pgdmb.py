"""PGDMB: projected gradient descent with mini-batches (HBL17 Algorithm 1, docs/algorithms/weights.md#pgdmb).

Design note. HBL17 runs one descent over a stream: iteration t takes the next batch of L rows,
makes one projected Rprop step with the batch gradient, then judges the new point on the history
window (the last N rows, ending with the batch); an improvement stores the point as the best
w*, and the descent stops after ``tolerance`` successive degradations or ``max_iterations``
steps. Here one ``learn`` call is one iteration, and HBL17 is read as follows (docs/algorithms/weights.md#pgdmb):

- *Improvement* means ``CR(w^{t+1}) < CR(w_best) − ε`` with both evaluated on the same, current
  window (one pass over the window's ℓ for the two points), w_best the best point of the running
  descent (w* itself when the descent started from w*). HBL17 compares with the previous
  iterate's value, computed on the previous window; windows slide, so that number is not
  comparable, and comparing with w* makes the kept criterion monotone.
- The degradation counter is reset by an improvement (HBL17 calls them *successive*
  degradations; its pseudo-code never resets the counter).
- The step uses ``(1/L) Σ_batch ∇NLL + (λ/N) ∇R`` rather than HBL17's ``(1/L) ∇CR^{batch}``,
  so the regularizer weighs the same in the step and in the criterion that judges it
  (docs/algorithms/weights.md#criterion).
- An endless stream: when a descent ends, a new one starts from w* (Rprop steps back to η0,
  counters cleared) and judges its points against w* re-evaluated on the window, so the weights
  keep adapting to drift and to level-2 rebuilds.
- Anytime prediction: ``weights`` is w*, the best point judged so far. The plain naive Bayes
  (w = 1) is the first incumbent w*, so predictions start as plain NB and change only when a step
  beats it on the window (docs/algorithms/weights.md#pgdmb). The first descent starts from
  ``initial_weight`` (0.5, HBL17 §1.4), which is its own first reference: a step is accepted when
  it improves on the descent's best, and replaces w* when it also improves on w*.
- Variables whose ``Context.active`` is False (Level 0) are pinned at 0 in every vector. A variable
  that becomes active restarts at ``initial_weight`` in the current iterate with a fresh Rprop
  step, and enters w* as a new variable does (below). Between two steps, ``sync`` (called by the
  engine after level 2 is rebuilt) notes the variables woken since the last step, and predictions
  give them that weight at once; w* itself changes at the next step only, so predicting never
  changes what is learnt. A variable that appears through
  ``resize`` gets 1 in w* while w* is still the plain NB start (and ``initial_weight``, the
  neutral start of HBL17, in the iterate); afterwards it enters w* and the iterate at the median
  of w*'s non-zero weights (``entry_weight``), so that it does not outweigh the variables the
  window has fitted.

Cost per ``learn``: O(L·K·J) for the gradient + O(N·K·J) to judge two points on the window.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._checks import integer, real
from ..io.registry import register
from ..io.schema import Array, Bool, Float, Int, Optional, Schema, Str, Struct
from .base import SIZES, WEIGHT_RANGE, Batch, Context, VectorWeights
from .criterion import criterion, criterion_gradient
from .regularizers import DEFAULT_DELTA, DEFAULT_SPREAD, DEFAULT_SPREAD_ROWS, Regularizer
from .rprop import VARIANTS, RpropState, project, rprop_step

#: Criterion values kept per window (the points of the running descent and w*).
_MEMO_SIZE = 8

__all__ = ["PGDMB"]


@dataclasses.dataclass(slots=True)
class _Descent:
    """One PGDMB run: its best point, counters, and whether that best is also the global w*."""

    best: np.ndarray  # (K,) best point of this descent (its start point at first)
    from_best: bool  # True when ``best`` equals the global w* (descent started at w* or beat it)
    improved: bool = False  # the descent improved the global w* at least once
    degradations: int = 0  # successive non-improving steps
    iterations: int = 0


class PGDMB(VectorWeights):
    """Projected mini-batch Rprop on the regularized criterion (HBL17 Algorithm 1).

    Parameters
    ----------
    batch_size
        L, the rows per ``learn`` call the learner asks for (HBL17 §1.4 retains 1000).
    regularizer
        ``"r2"`` (HB24, default), ``"r1"`` (HBL17) or None (plain likelihood); see
        docs/algorithms/weights.md#regularizers.
    penalty
        λ ≥ 0, the regularization weight (HBL17's recommended 0.1).
    exponent
        p of the penalty; None means 1 for R1 and 0.95 for R2. R1 accepts p > 0 (p < 1 through
        ξ_δ), R2 accepts p in (0, 1].
    tolerance
        Tol ≥ 1, successive degradations that end a descent (HBL17: 5).
    max_iterations
        Max ≥ 1, steps per descent (HBL17: 100).
    epsilon
        ε ≥ 0, the least decrease of the criterion that counts as an improvement (HBL17: 1e-4).
    initial_weight
        w0 in [0, 1], the start of the first descent (HBL17: 0.5).
    initial_step
        η0 in [Δmin, Δmax], the initial Rprop step of every coordinate (HBL17: 1e-2); with
        ``rprop="scaled"``, the initial learning rate of every coordinate.
    step_increase, step_decrease
        Rprop factors η+ > 1 and η− in (0, 1) (HBL17: 1.2 and 0.5).
    step_min, step_max
        Bounds 0 < Δmin ≤ Δmax of the Rprop steps (1e-6 and 1.0, docs/algorithms/weights.md#rprop);
        of the learning rates with ``rprop="scaled"``.
    zero_threshold
        Weights below it are set to 0 after each step (HBL17: 1e-3), in [0, 1).
    delta
        δ of the ξ_δ smoothing of concave penalties (docs/algorithms/weights.md#regularizers), in (0, 1).
    spread
        μ ≥ 0, the weight of the spread term ``μ Σ_k (w_k − w̄)²`` added to the regularizer (a
        Gaussian prior tying the weights to their mean, w̄; docs/algorithms/weights.md#spread).
        It keeps the weights of variables that say the same thing together at a few hundred rows
        and fades as the window grows. 0 gives the papers' criterion. Ignored when
        ``regularizer`` is None.
    spread_rows
        The window weight (rows, at sample weight 1) up to which the spread term weighs μ; on a
        window of weight W above it, the term weighs μ · ``spread_rows`` / W
        (docs/algorithms/weights.md#spread). The term was chosen for windows of a few hundred
        rows; on long windows it buys no accuracy and keeps variables the penalty would drop.
        None: μ at every size (the criterion before format version 13).
    wake
        If True (default), a variable whose level 2 becomes informative again enters w* at the
        weight a new variable enters with (``entry_weight``), and predicts at it from the rebuild
        that wakes it (``sync``). False keeps it at 0 in w* until an accepted step includes it
        (the behaviour before format version 11).
    rprop
        The step: ``"irprop-"`` (default) or ``"rprop-"``, sign-only Rprop steps, or ``"scaled"``,
        HBL17's gradient step ``w − η ⊙ g`` with per-coordinate rates adapted by the Rprop rule;
        see :mod:`.rprop`.

    Examples
    --------
    Five variables carry the class, five are noise; after 40 batches of 200 rows, judged on a
    window of 5,000 rows, the noise variables are dropped.

    >>> import numpy as np
    >>> from wnb_stream.weights import Context, PGDMB, toy_batch
    >>> rng = np.random.default_rng(42)
    >>> model = PGDMB(batch_size=200)
    >>> model.reset(n_variables=10, n_classes=2)
    >>> context = Context(prior_costs=np.full(10, np.log(10) + 1), active=np.ones(10, bool))
    >>> history = toy_batch(rng, 5000, n_variables=10, n_informative=5)
    >>> for _ in range(40):
    ...     model.learn(toy_batch(rng, 200, n_variables=10, n_informative=5), history, context)
    >>> model.weights.round(1).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """

    def __init__(
        self,
        batch_size: int = 1000,
        regularizer: str | None = "r2",
        penalty: float = 0.1,
        exponent: float | None = None,
        tolerance: int = 5,
        max_iterations: int = 100,
        epsilon: float = 1e-4,
        initial_weight: float = 0.5,
        initial_step: float = 1e-2,
        step_increase: float = 1.2,
        step_decrease: float = 0.5,
        step_min: float = 1e-6,
        step_max: float = 1.0,
        zero_threshold: float = 1e-3,
        delta: float = DEFAULT_DELTA,
        rprop: str = "irprop-",
        spread: float = DEFAULT_SPREAD,
        wake: bool = True,
        spread_rows: float | None = DEFAULT_SPREAD_ROWS,
    ):
        self.batch_size = batch_size
        self.regularizer = regularizer
        self.penalty = penalty
        self.exponent = exponent
        self.tolerance = tolerance
        self.max_iterations = max_iterations
        self.epsilon = epsilon
        self.initial_weight = initial_weight
        self.initial_step = initial_step
        self.step_increase = step_increase
        self.step_decrease = step_decrease
        self.step_min = step_min
        self.step_max = step_max
        self.zero_threshold = zero_threshold
        self.delta = delta
        self.rprop = rprop
        self.spread = spread
        self.wake = wake
        self.spread_rows = spread_rows
        self._validate()
        self._regularizer = (
            None if regularizer is None else Regularizer(regularizer, penalty, exponent, delta, spread)
        )
        self._base_regularizer = self._regularizer  # (μ in full: ``_regularizer_for``)
        self._n_variables = 0
        self._n_classes = 0
        self._ready = False  # set by reset

    # ------------------------------------------------------------------ configuration

    def _validate(self) -> None:
        def integer_at_least(name: str, value, low: int) -> None:
            integer(value, name, low=low)

        integer_at_least("batch_size", self.batch_size, 1)
        integer_at_least("tolerance", self.tolerance, 1)
        integer_at_least("max_iterations", self.max_iterations, 1)
        if self.regularizer not in ("r1", "r2", None):
            raise ValueError(f"regularizer must be 'r1', 'r2' or None, got {self.regularizer!r}")
        if not self.epsilon >= 0:
            raise ValueError(f"epsilon must be >= 0, got {self.epsilon}")
        if not 0.0 <= self.initial_weight <= 1.0:
            raise ValueError(f"initial_weight must be in [0, 1], got {self.initial_weight}")
        if not self.step_increase > 1.0:
            raise ValueError(f"step_increase must be > 1, got {self.step_increase}")
        if not 0.0 < self.step_decrease < 1.0:
            raise ValueError(f"step_decrease must be in (0, 1), got {self.step_decrease}")
        if not 0.0 < self.step_min <= self.step_max:
            raise ValueError(
                f"step_min and step_max must satisfy 0 < step_min <= step_max, "
                f"got {self.step_min} and {self.step_max}"
            )
        if not self.step_min <= self.initial_step <= self.step_max:
            raise ValueError(
                f"initial_step must be in [step_min, step_max] = [{self.step_min}, {self.step_max}], "
                f"got {self.initial_step}"
            )
        if not 0.0 <= self.zero_threshold < 1.0:
            raise ValueError(f"zero_threshold must be in [0, 1), got {self.zero_threshold}")
        if not isinstance(self.wake, bool):
            raise ValueError(f"wake must be True or False, got {self.wake!r}")
        real(self.spread_rows, "spread_rows", above=0.0, finite=True, optional=True, what="a finite number")
        if self.rprop not in VARIANTS:
            raise ValueError(f"rprop must be one of {VARIANTS}, got {self.rprop!r}")
        if self.regularizer is not None:  # checks penalty, exponent, delta and spread
            Regularizer(self.regularizer, self.penalty, self.exponent, self.delta, self.spread)
        else:
            if not 0.0 < self.delta < 1.0:
                raise ValueError(f"delta must be in (0, 1), got {self.delta}")
            real(self.spread, "spread", low=0.0, finite=True, what="a finite number")

    @classmethod
    def _unit_test_params(cls):
        yield {"batch_size": 50}
        yield {"batch_size": 20, "regularizer": "r1", "exponent": 0.5, "rprop": "rprop-"}
        yield {"batch_size": 30, "regularizer": "r1", "rprop": "scaled"}

    # ------------------------------------------------------------------ protocol

    def reset(self, n_variables: int, n_classes: int, seed: int | None = None) -> None:
        """Fresh state for ``n_variables`` variables and ``n_classes`` classes (seed unused)."""
        self._n_variables = int(n_variables)
        self._n_classes = int(n_classes)
        # HBL17: w0 = 0.5 (projected, so a tiny w0 is zeroed like any weight below the threshold)
        start = project(np.full(self._n_variables, float(self.initial_weight)), self.zero_threshold)
        self._best = np.ones(self._n_variables)  # (K,) w*: the plain naive Bayes until a step beats it
        self._incumbent_is_nb = True
        self._active = np.ones(self._n_variables, dtype=bool)
        self._woken = None  # (K,) bool: variables active since the last step (``sync``), or None
        self._steps = 0
        self._descents = 0
        self._start_descent(start, from_best=bool(np.array_equal(start, self._best)))
        self._ready = True

    def resize(self, n_variables: int, n_classes: int) -> None:
        """Grow to ``n_variables`` and ``n_classes``; O(K).

        While w* is the plain naive Bayes start, new variables get 1 in w* and ``initial_weight``
        in the iterate. Once a step has replaced it, they enter every vector at the median of w*'s
        non-zero weights (``entry_weight``), the scale the window has fitted.
        """
        if not self._ready:
            self.reset(n_variables, n_classes)
            return
        extra = int(n_variables) - self._n_variables
        if extra > 0:
            fill, best_fill = (np.full(extra, value) for value in self._entry_values())
            self._iterate = np.concatenate([self._iterate, fill])
            self._best = np.concatenate([self._best, best_fill])
            self._descent.best = np.concatenate([self._descent.best, best_fill if self._descent.from_best else fill])
            self._rprop = RpropState(
                np.concatenate([self._rprop.step, np.full(extra, float(self.initial_step))]),
                np.concatenate([self._rprop.previous_gradient, np.zeros(extra)]),
            )
            self._active = np.concatenate([self._active, np.ones(extra, dtype=bool)])
            self._n_variables = int(n_variables)
        self._n_classes = max(self._n_classes, int(n_classes))

    def _entry_values(self) -> tuple[float, float]:
        """A variable entering now: its value in the iterate and in w* (``initial_weight`` and 1
        while w* is the plain naive Bayes start, else ``entry_weight`` in both)."""
        if self._incumbent_is_nb:
            return self._initial_value, 1.0
        weight = self.entry_weight
        return weight, weight

    def remap(self, kept: np.ndarray, n_classes: int) -> bool:
        """Carry w*, the running descent and the Rprop memory into a new layout of the
        variables (``VectorWeights.remap``): each kept variable keeps its values; a new one
        enters as ``resize`` enters it. The counters (and VNS's session) go on. O(K)."""
        if not self._ready:
            return False
        kept = np.asarray(kept, dtype=np.intp)
        new = kept < 0
        at = np.where(new, 0, kept)
        fill, best_fill = self._entry_values()

        def take(vector: np.ndarray, value) -> np.ndarray:
            out = vector[at] if len(vector) else np.zeros(len(kept), dtype=vector.dtype)
            out[new] = value
            return out

        self._iterate = take(self._iterate, fill)
        self._best = take(self._best, best_fill)
        self._descent.best = take(self._descent.best, best_fill if self._descent.from_best else fill)
        self._rprop = RpropState(take(self._rprop.step, float(self.initial_step)), take(self._rprop.previous_gradient, 0.0))
        self._active = take(self._active, True)
        self._n_variables = len(kept)
        self._n_classes = max(self._n_classes, int(n_classes))
        return True

    def learn(self, batch: Batch, history: Batch | None = None, context: Context | None = None) -> None:
        """One PGDMB iteration on ``batch``, judged on ``history`` (default: the batch).

        Cost O(L·K·J + N·K·J).
        """
        n_variables, n_classes = batch.log_lik.shape[1], batch.log_lik.shape[2]
        if not self._ready:
            self.reset(n_variables, n_classes)
        elif n_variables > self._n_variables or n_classes > self._n_classes:
            self.resize(n_variables, n_classes)
        history = batch if history is None else history
        reference_size = float(np.sum(history.sample_weight))  # (padding adds no rows: the padded window's too)
        self._regularizer = self._regularizer_for(reference_size)  # (VNS's replay on this window too)
        if float(np.sum(batch.sample_weight)) <= 0:
            return  # nothing to learn from
        batch, history = self._padded(batch), self._padded(history)
        self._prepare(history)
        prior_costs, active = self._context(context)
        self._apply_active(active)

        gradient = criterion_gradient(
            self._iterate, batch, prior_costs, self._regularizer, reference_size
        )
        gradient[~active] = 0.0
        self._iterate, self._rprop = rprop_step(
            self._iterate,
            gradient,
            self._rprop,
            variant=self.rprop,
            step_increase=self.step_increase,
            step_decrease=self.step_decrease,
            step_min=self.step_min,
            step_max=self.step_max,
            zero_threshold=self.zero_threshold,
            movable=active,
        )
        self._steps += 1
        self._judge(history, prior_costs)

    @property
    def weights(self) -> np.ndarray:
        """``(K,)`` anytime best weights w* (all ones until a step beats the plain naive Bayes)."""
        return self._best.copy() if self._ready else np.zeros(0)

    # ------------------------------------------------------------------ diagnostics

    @property
    def iterate(self) -> np.ndarray:
        """``(K,)`` the current point of the running descent (w^t)."""
        return self._iterate.copy() if self._ready else np.zeros(0)

    @property
    def n_steps(self) -> int:
        """Number of Rprop steps made since ``reset``."""
        return self._steps if self._ready else 0

    @property
    def n_descents(self) -> int:
        """Number of descents started since ``reset`` (the running one included)."""
        return self._descents if self._ready else 0

    # ------------------------------------------------------------------ internals

    def _regularizer_for(self, weight: float) -> Regularizer | None:
        """The regularizer of a window of total sample weight ``weight``: μ in full up to
        ``spread_rows``, μ · ``spread_rows`` / ``weight`` beyond (the same object below it, so
        that a short window's criterion is the one before ``spread_rows``). O(1)."""
        base = self._base_regularizer
        if base is None or not base.spread or self.spread_rows is None or not weight > self.spread_rows:
            return base
        return dataclasses.replace(base, spread=base.spread * (self.spread_rows / weight))

    def _context(self, context: Context | None) -> tuple[np.ndarray | None, np.ndarray]:
        k = self._n_variables
        active = np.ones(k, dtype=bool)
        if context is None:
            return None, active
        given = np.asarray(context.active, dtype=bool)[:k]
        active[: len(given)] = given
        # a context older than the last resize: unknown costs are log K + 1 (criterion._default_costs)
        prior_costs = np.full(k, np.log(max(k, 1)) + 1.0)
        given_costs = np.asarray(context.prior_costs, dtype=float)[:k]
        prior_costs[: len(given_costs)] = given_costs
        return prior_costs, active

    def _apply_active(self, active: np.ndarray) -> None:
        """Pin inactive variables at 0; restart newly active ones at ``initial_weight`` in the
        iterate and give them the weight a new variable enters with in w* (``_entry_values``)."""
        woken = active & ~self._active
        if woken.any():
            self._iterate[woken] = self._initial_value
            self._rprop.step[woken] = self.initial_step
            self._rprop.previous_gradient[woken] = 0.0
            if self.wake:
                entry = self._entry_values()[1]
                self._best[woken] = entry
                if self._descent.from_best:
                    self._descent.best[woken] = entry
        self._woken = None
        asleep = ~active
        if asleep.any():
            for vector in (self._iterate, self._best, self._descent.best, self._rprop.previous_gradient):
                vector[asleep] = 0.0
        self._active = active

    def sync(self, context: Context) -> None:
        """Note the variables active in ``context`` that were not at the last step: predictions
        give them the weight the next step will give them in w* (``_apply_active``). Nothing the
        next ``learn`` reads changes. O(K)."""
        if not self._ready or not self.wake:
            return
        _, active = self._context(context)
        woken = active & ~self._active
        self._woken = woken if woken.any() else None

    @property
    def entry_weight(self) -> float:
        """The weight a variable appearing now enters with, once w* is no longer the plain NB start:
        the median of w*'s non-zero weights (``initial_weight`` when there are none). O(K).

        A window's weights are fitted as a whole: a few hundred rows give weights of about 0.1 for
        tens of redundant variables. A variable entering at ``initial_weight`` = 0.5 then counts
        five times as much as each of them until the next step (docs/algorithms/weights.md#pgdmb).

        >>> learner = PGDMB()
        >>> learner.reset(3, 2)
        >>> learner._best = np.array([0.1, 0.3, 0.0])
        >>> learner.entry_weight
        0.2
        """
        kept = self._best[self._best > 0.0] if self._ready else np.empty(0)
        return float(np.median(kept)) if len(kept) else self._initial_value

    @property
    def _initial_value(self) -> float:
        return 0.0 if self.initial_weight < self.zero_threshold else float(self.initial_weight)

    def _prediction_weights(self, n_variables: int) -> np.ndarray:
        """``(n_variables,)`` weights to predict with: w*, the variables woken since the last step
        (``sync``) at the entry weight."""
        if not self._ready:
            return np.ones(n_variables)
        best = self._best
        woken = getattr(self, "_woken", None)  # (absent from a learner loaded or unpickled)
        if woken is not None and len(woken) == len(best):
            best = np.where(woken, self._entry_values()[1], best)
        if n_variables <= self._n_variables:
            return best[:n_variables]
        # variables not resized to yet: the value resize would give them
        return np.concatenate([best, np.full(n_variables - self._n_variables, self._entry_values()[1])])

    def _prepare(self, history: Batch) -> None:
        """Hook run before each step (VNS fixes its session budget here)."""

    def _start_descent(self, start: np.ndarray, from_best: bool) -> None:
        self._iterate = start.copy()
        self._rprop = RpropState.initial(len(start), self.initial_step)
        self._descent = _Descent(best=start.copy(), from_best=from_best)
        self._descents += 1

    def _judge(self, history: Batch, prior_costs: np.ndarray | None) -> None:
        """Compare w^{t+1} with the descent's best on the window; end the descent if it stalls."""
        descent = self._descent
        best_value = self._window_value(descent.best, history, prior_costs)
        new_value = self._window_value(self._iterate, history, prior_costs)
        descent.iterations += 1
        if new_value < best_value - self.epsilon:
            descent.best = self._iterate.copy()
            descent.degradations = 0
            if descent.from_best:
                self._best = self._iterate.copy()
                descent.improved = True
                self._incumbent_is_nb = False
            else:
                global_value = self._window_value(self._best, history, prior_costs)
                if new_value < global_value - self.epsilon:
                    self._best = self._iterate.copy()
                    descent.from_best = True
                    descent.improved = True
                    self._incumbent_is_nb = False
        else:
            descent.degradations += 1
        if descent.degradations >= self.tolerance or descent.iterations >= self.max_iterations:
            self._end_descent(history, prior_costs)

    # ------------------------------------------------------------------ window values
    # Within a replay session (VNS) every step is judged on the same window: the criterion of a
    # point already judged on it is read back instead of recomputed: the very float a new
    # evaluation of the same point on the same arrays gives. The window is held (identity is
    # only meaningful while it lives) and never saved.

    def _window_value(self, weights: np.ndarray, history: Batch, prior_costs: np.ndarray | None) -> float:
        """``criterion(weights)`` on the window, read back when this window already judged it."""
        memo = getattr(self, "_window_memo", None)
        if (
            memo is None
            or memo["history"] is not history
            or (memo["prior_costs"] is None) != (prior_costs is None)
            or (prior_costs is not None and not np.array_equal(memo["prior_costs"], prior_costs))
        ):
            memo = self._window_memo = {"history": history, "prior_costs": prior_costs, "values": {}}
        values, key = memo["values"], weights.tobytes()
        if key not in values:
            if len(values) >= _MEMO_SIZE:
                values.pop(next(iter(values)))  # the oldest point
            values[key] = float(criterion(weights, history, prior_costs, self._regularizer))
        return values[key]

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_window_memo", None)
        return state

    def _end_descent(self, history: Batch, prior_costs: np.ndarray | None) -> None:
        """PGDMB in an endless stream: start again from w*."""
        self._start_descent(self._best, from_best=True)

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. Once reset: w*, the iterate and the descent's best are weights of [0, 1],
        none in (0, zero_threshold), 0 for every inactive variable; the Rprop steps lie in
        [step_min, step_max]; the descent's counters are below their limits, and its best is w*
        when it started from w*. O(K)."""
        if not self._ready:
            if self._n_variables or self._n_classes:
                return ["run: a learner with sizes must have its run state (reset has sized it)"]
            return []
        k, found = self._n_variables, []
        vectors = (("best", self._best), ("iterate", self._iterate), ("descent.best", self._descent.best))
        arrays = (*vectors, ("active", self._active), ("rprop.step", self._rprop.step), ("rprop.previous_gradient", self._rprop.previous_gradient))
        for name, vector in arrays:
            if vector.shape != (k,):
                return [f"run.{name}: expected shape ({k},) (n_variables), got {vector.shape}"]
        for name, vector in vectors:
            if not np.all((vector >= 0.0) & (vector <= 1.0)):
                found.append(f"run.{name}: weights must lie in [0, 1]")
            elif np.any((vector > 0.0) & (vector < self.zero_threshold)):
                found.append(f"run.{name}: holds a weight in (0, zero_threshold = {self.zero_threshold!r}) (such weights are set to 0)")
            if np.any(vector[~self._active] != 0.0):
                found.append(f"run.{name}: holds a weight other than 0 for an inactive variable")
        step = self._rprop.step
        if not np.all((step >= self.step_min) & (step <= self.step_max)):
            found.append(f"run.rprop.step: must lie in [step_min, step_max] = [{self.step_min!r}, {self.step_max!r}]")
        descent = self._descent
        if not 0 <= descent.degradations < self.tolerance:
            found.append(f"run.descent.degradations: must be < tolerance = {self.tolerance!r}")
        if not 0 <= descent.iterations < self.max_iterations:
            found.append(f"run.descent.iterations: must be < max_iterations = {self.max_iterations!r}")
        if descent.from_best and not np.array_equal(descent.best, self._best):
            found.append("run.descent.best: must equal run.best when the descent starts from it")
        return found

    # -- saved record (docs/saved-model.md) ---------------------------------------------------
    # The sizes, and once reset: w*, whether w* is still the plain naive Bayes start, the active
    # mask, the step and descent counters, the iterate, the Rprop state and the running descent.
    # The regularizer is rebuilt from the parameters; the criterion memo is a cache.

    def _run_state(self) -> dict:
        descent = self._descent
        return {
            "best": self._best,
            "incumbent_is_nb": self._incumbent_is_nb,
            "active": self._active,
            "steps": self._steps,
            "descents": self._descents,
            "iterate": self._iterate,
            "rprop": {"step": self._rprop.step, "previous_gradient": self._rprop.previous_gradient},
            "descent": {
                "best": descent.best,
                "from_best": descent.from_best,
                "improved": descent.improved,
                "degradations": descent.degradations,
                "iterations": descent.iterations,
            },
        }

    def _load_run(self, run: dict) -> None:
        self._best = run["best"]
        self._incumbent_is_nb = run["incumbent_is_nb"]
        self._active = run["active"]
        self._steps, self._descents = run["steps"], run["descents"]
        self._iterate = run["iterate"]
        self._rprop = RpropState(run["rprop"]["step"], run["rprop"]["previous_gradient"])
        self._descent = _Descent(**run["descent"])


#: The parameters of PGDMB's record (VNS adds its own).
PARAMS = {
    "batch_size": Int(doc="L, rows per learn call"),
    "regularizer": Optional(Str(choices=("r1", "r2")), doc="r1, r2 or null"),
    "penalty": Float(doc="λ"),
    "exponent": Optional(Float(), doc="p of the penalty (null: the regularizer's default)"),
    "tolerance": Int(doc="successive degradations that end a descent"),
    "max_iterations": Int(doc="steps per descent"),
    "epsilon": Float(doc="least decrease counted as an improvement"),
    "initial_weight": Float(doc="w0, start of the first descent"),
    "initial_step": Float(doc="η0, initial Rprop step"),
    "step_increase": Float(doc="η+"),
    "step_decrease": Float(doc="η−"),
    "step_min": Float(doc="Δmin"),
    "step_max": Float(doc="Δmax"),
    "zero_threshold": Float(doc="weights below it are set to 0"),
    "delta": Float(doc="δ of the ξ_δ smoothing"),
    "rprop": Str(choices=VARIANTS, doc="Rprop variant"),
    "spread": Float(low=0.0, doc="μ, weight of the spread term (0 before format version 8)"),
    "wake": Bool(doc="a woken variable enters w* as a new one does and predicts so at once (false before format version 11)"),
    "spread_rows": Optional(Float(above=0.0), doc="window weight up to which the spread term weighs μ, beyond it μ·spread_rows/W (null: μ at every size, as before format version 13)"),
}

#: The optimisation state of PGDMB's record (VNS's too).
RUN = Struct(
    {
        "best": Array("float64", ("n_variables",), **WEIGHT_RANGE, doc="w*, the anytime best weights"),
        "incumbent_is_nb": Bool(doc="w* is still the plain naive Bayes start"),
        "active": Array("bool", ("n_variables",), doc="variables not pinned at 0 (Level > 0)"),
        "steps": Int(low=0, doc="Rprop steps since reset"),
        "descents": Int(low=1, doc="descents started since reset"),
        "iterate": Array("float64", ("n_variables",), **WEIGHT_RANGE, doc="w^t, the running descent's point"),
        "rprop": Struct(
            {
                "step": Array("float64", ("n_variables",), above=0.0, doc="Δ_k (the learning rates η_k with rprop='scaled')"),
                "previous_gradient": Array("float64", ("n_variables",), finite=False, doc="remembered derivative (±inf after an overflowing batch: only its sign is used)"),
            },
            doc="Rprop state",
        ),
        "descent": Struct(
            {
                "best": Array("float64", ("n_variables",), **WEIGHT_RANGE, doc="best point of the descent"),
                "from_best": Bool(doc="that point is w*"),
                "improved": Bool(doc="the descent improved w*"),
                "degradations": Int(low=0, doc="successive non-improving steps"),
                "iterations": Int(low=0, doc="steps of the descent"),
            },
            doc="the running descent",
        ),
    },
    doc="the optimisation state, once reset",
)

register(
    "PGDMB",
    PGDMB,
    Schema(
        params=PARAMS,
        state={**SIZES, "run": Optional(RUN, doc="null before reset")},
        doc="Projected mini-batch Rprop (HBL17 Algorithm 1)",
    ),
    state=PGDMB.record_state,
    build=PGDMB.from_record,
)
