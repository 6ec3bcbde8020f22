"""Batch weight searches on the history window: one base, and the schedule, hand-over and variable
budget of SGCF and Direct.

:class:`WindowSearch` is the base of every batch search on the window (FNB and SNB through
:class:`~.selection.SelectionSearch`; SGCF and Direct through :class:`WarmSearch`): the state
they share, under one set of names, and the protocol; a family adds its schedule (``_due``) and
its hand-over (``_handover``). :class:`WarmSearch` is the family of
:class:`~wnb_stream.weights.SGCF` and :class:`~wnb_stream.weights.Direct`, which are batch
optimisers (HB24 §3.2.2, GB11): they minimise a criterion over the whole window rather than step
along mini-batches. Design note (docs/algorithms/weights.md#batch-searches):

- **Schedule.** ``learn`` only counts rows until a search is due: the first once 32 rows have
  arrived, then whenever the rows arrived since the last search amount to the window that search
  saw. While the window fills this is a search each time the data has doubled (as VNS's replay
  sessions); once it is full, one search per renewal of the window, which follows drift and
  level-2 rebuilds. A stream of n rows with a window of N rows gets O(log N + n/N) searches.
- **Anytime.** A search runs to its end inside one ``learn`` call (its cost is bounded by the
  learner's iteration caps) and is warm-started from the current best weights w*, inactive
  variables at 0. Its result replaces w* when the learner's own criterion, evaluated on the
  current window, is not worse than that of w* (w* is the plain naive Bayes, all ones, until the
  first hand-over). Between searches ``weights`` and ``scores`` use w*.
- **Variable budget** (``max_variables`` = m). When a result has more than m non-zero weights,
  each of them is scored by its *criterion gain*, the increase of the criterion when that weight
  alone is set to 0 (one pass over the window per variable, O(K·N·J)); the m largest are kept and
  the search is run again from the result with the others pinned at 0. Every hand-over thus has
  at most m non-zero weights, and w* = plain naive Bayes is never kept against a budgeted result.
  (Until the first search, 32 rows, the learner predicts as the plain naive Bayes.)
- **Refinement** (``refine``, HB24 §4.4: "FNB or SG.CF as starting points"). With a PGDMB or VNS
  prototype, each hand-over restarts that learner from the search's result (its w* and its
  descent's start), the learner then takes one step per ``learn`` call, and predictions use its
  w*. ``refine`` and ``max_variables`` cannot be combined (PGDMB and VNS know no budget). The
  code is :class:`~.refinement.Refinable`'s, shared with FNB.
- **New and inactive variables.** Variables whose ``Context.active`` is False are 0 in w* and
  in every search. A variable that appears (``resize``) gets 1 in w* while w* is the plain naive
  Bayes, 0 afterwards until a search weighs it.

Subclasses of :class:`WarmSearch` implement ``_search(window, costs, start, movable) -> (K,)`` and
``_penalty(w, costs)`` (the criterion is ``NLL(w) + _penalty(w)`` on the window).
"""

from __future__ import annotations

import numpy as np

from .._checks import integer
from ..io.generators import GENERATOR, generator_from_state, generator_state
from ..io.registry import Record, register
from ..io.schema import Array, Bool, Int, Optional, Schema, Struct
from .base import SIZES, WEIGHT_RANGE, Batch, Context
from .criterion import _log_normaliser, negative_log_likelihood, scores
from .pgdmb import PGDMB
from .refinement import Refinable

__all__ = ["FIRST_SEARCH", "WindowSearch", "WarmSearch", "drop_gains", "register_warm_search", "top_variables"]

#: Rows before the first search (a search on fewer rows would fit noise).
FIRST_SEARCH = 32


def drop_gains(weights: np.ndarray, data: Batch) -> np.ndarray:
    """``(K,)`` increase of the NLL on ``data`` when each weight alone is set to 0 (0 where w_k = 0).

    Shares one score matrix: dropping k changes the scores by ``−w_k ℓ_k``. Cost O(K'·n·J), K'
    the non-zero weights.

    Examples
    --------
    >>> data = Batch(np.log([[[0.9, 0.1], [0.5, 0.5]]]), np.array([0]), np.ones(1), np.log([0.5, 0.5]))
    >>> drop_gains(np.array([1.0, 1.0]), data).round(4).tolist()
    [0.5878, 0.0]
    """
    weights = np.asarray(weights, dtype=float)
    base = scores(data.log_lik, data.log_prior, weights)  # (n, J)
    used = data.sample_weight > 0
    rows, y, a = np.flatnonzero(used), data.y[used], data.sample_weight[used]
    base, log_lik = base[rows], data.log_lik[rows]
    reference = -float(np.dot(a, base[np.arange(len(y)), y] - _log_normaliser(base)))
    gains = np.zeros(len(weights))
    for k in np.flatnonzero(weights):
        dropped = base - weights[k] * log_lik[:, k, :]  # (n, J)
        gains[k] = -float(np.dot(a, dropped[np.arange(len(y)), y] - _log_normaliser(dropped))) - reference
    return gains


def top_variables(gains: np.ndarray, support: np.ndarray, count: int) -> np.ndarray:
    """``(K,)`` bool mask of the ``count`` variables of ``support`` with the largest gains.

    Ties go to the lower index (a stable order, so the choice is deterministic).

    >>> top_variables(np.array([0.1, 0.5, 0.5, 0.2]), np.ones(4, bool), 2).tolist()
    [False, True, True, False]
    """
    candidates = np.flatnonzero(support)
    order = candidates[np.argsort(-gains[candidates], kind="stable")]
    keep = np.zeros(len(gains), dtype=bool)
    keep[order[:count]] = True
    return keep


class WindowSearch(Refinable):
    """Base of every batch search on the history window: FNB and SNB
    (:class:`~.selection.SelectionSearch`), SGCF and Direct (:class:`WarmSearch`).

    One state, whatever the family (``reset`` sets it): ``_best``, the ``(K,)`` weights w* that
    predictions use (ones, the plain naive Bayes, until the first hand-over:
    ``_incumbent_is_nb``); ``_active``, the variables that may enter a search; ``_rng``, seeded
    by ``reset``; ``_rows_seen``, the rows of the arriving batches; ``_rows_at_search``, the rows
    seen when the last search ran; ``_searches``; and the refine learner (:mod:`~.refinement`).
    ``learn`` counts rows and, when the family's ``_due`` says so, hands the window to its
    ``_handover`` (search, then maybe replace w*); ``refit`` does so at once. A variable that
    appears (``resize``) gets 1 in w* while w* is the plain naive Bayes, 0 afterwards.

    Families implement ``_due(window_rows) -> bool`` and ``_handover(window, costs, active,
    window_rows) -> bool`` (True when w* was replaced), and may grow arrays of their own in
    ``_grow(extra)``.
    """

    #: Rows seen before the first search (a search on fewer rows would fit noise; as VNS's first
    #: replay session).
    FIRST_SEARCH = FIRST_SEARCH

    # ------------------------------------------------------------------ family hooks

    def _due(self, window_rows: int) -> bool:  # pragma: no cover - abstract
        """Whether a search is due now, the window holding ``window_rows`` rows."""
        raise NotImplementedError

    def _handover(self, window: Batch, costs: np.ndarray, active: np.ndarray, window_rows: int) -> bool:  # pragma: no cover
        """Search ``window`` and maybe replace w* (True if it did); O(the family's search)."""
        raise NotImplementedError

    def _grow(self, extra: int) -> None:
        """Hook: grow the family's own arrays by ``extra`` variables."""

    def _reset_family(self) -> None:
        """Hook: the family's own state, fresh (``reset``)."""

    # ------------------------------------------------------------------ protocol

    def reset(self, n_variables: int, n_classes: int, seed: int | None = None) -> None:
        """Fresh state; ``seed`` drives every random draw (``np.random.default_rng(seed)``)."""
        self._n_variables = int(n_variables)
        self._n_classes = int(n_classes)
        self._rng = np.random.default_rng(seed)
        self._best = np.ones(self._n_variables)  # (K,) w*: the plain naive Bayes until the first hand-over
        self._incumbent_is_nb = True
        self._active = np.ones(self._n_variables, dtype=bool)
        self._rows_seen = 0  # rows of the arriving batches
        self._rows_at_search = 0  # rows seen when the last search ran
        self._searches = 0
        self._reset_family()
        self._reset_refiner(n_variables, n_classes, seed)
        self._ready = True

    def resize(self, n_variables: int, n_classes: int) -> None:
        """Grow to ``n_variables`` and ``n_classes``; O(K). New variables: 1 in w* while it is the
        plain naive Bayes, 0 afterwards."""
        if not self._ready:
            self.reset(n_variables, n_classes)
            return
        extra = int(n_variables) - self._n_variables
        if extra > 0:
            self._best = np.concatenate([self._best, np.full(extra, self._new_weight)])
            self._active = np.concatenate([self._active, np.ones(extra, dtype=bool)])
            self._grow(extra)
            self._n_variables = int(n_variables)
        self._n_classes = max(self._n_classes, int(n_classes))
        self._resize_refiner()

    def learn(self, batch: Batch, history: Batch | None = None, context: Context | None = None) -> None:
        """Count the batch's rows; search the window when the family's schedule says so; the
        refiner's step.

        O(K) between searches (plus the refiner's step); a search costs the family's search.
        """
        n_variables, n_classes = batch.log_lik.shape[1], batch.log_lik.shape[2]
        if not self._ready:
            self.reset(n_variables, n_classes)
        elif n_variables > self._n_variables or n_classes > self._n_classes:
            self.resize(n_variables, n_classes)
        history = batch if history is None else history
        costs, active = self._context(context)
        self._apply_active(active)
        self._rows_seen += len(batch)
        if self._due(len(history)) and float(np.sum(history.sample_weight)) > 0:
            self._rows_at_search = self._rows_seen
            self._handover(self._padded(history), costs, active, len(history))
        self._step_refiner(batch, history, context)

    def refit(self, history: Batch, context: Context | None = None) -> bool:
        """Search the window now, out of schedule (the change detector asks before it forgets);
        True if the result was handed over. The schedule restarts its count from here."""
        if not self._ready_to_refit(history):
            return False
        costs, active = self._context(context)
        self._apply_active(active)
        self._rows_at_search = self._rows_seen
        return self._handover(self._padded(history), costs, active, len(history))

    @property
    def weights(self) -> np.ndarray:
        """``(K,)`` anytime best weights w* (the refiner's when ``refine`` is set)."""
        if not self._ready:
            return np.zeros(0)
        if self._refiner is not None:
            return self._refiner.weights
        return self._best.copy()

    @property
    def n_searches(self) -> int:
        """Searches run since ``reset``."""
        return self._searches if self._ready else 0

    # ------------------------------------------------------------------ internals

    @property
    def _new_weight(self) -> float:
        """Weight in w* of a variable that appears: 1 while w* is the plain naive Bayes, else 0."""
        return 1.0 if self._incumbent_is_nb else 0.0

    def _context(self, context: Context | None) -> tuple[np.ndarray, np.ndarray]:
        k = self._n_variables
        costs = np.full(k, np.log(max(k, 1)) + 1.0)  # unknown costs: log K + 1 (criterion._default_costs)
        active = np.ones(k, dtype=bool)
        if context is not None:
            given = np.asarray(context.active, dtype=bool)[:k]
            active[: len(given)] = given
            given_costs = np.asarray(context.prior_costs, dtype=float)[:k]
            costs[: len(given_costs)] = given_costs
        return costs, active

    def _apply_active(self, active: np.ndarray) -> None:
        self._best[~active] = 0.0
        self._active = active

    def _prediction_weights(self, n_variables: int) -> np.ndarray:
        if not self._ready:
            return np.ones(n_variables)
        if self._refiner is not None:
            return self._refiner._prediction_weights(n_variables)
        if n_variables <= self._n_variables:
            return self._best[:n_variables]
        return np.concatenate([self._best, np.full(n_variables - self._n_variables, self._new_weight)])

    #: The names of the state's fields in the family's record (FNB and SNB keep those of format
    #: version 2), used by ``problems``.
    _FIELDS = {"best": "run.best", "rows_at_search": "run.rows_at_search"}

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. Once reset: w* holds weights of [0, 1], 0 for every inactive variable, and
        (after a hand-over) at most ``max_variables`` non-zero ones; the search's row counter is
        at most the rows seen; the refine learner is there exactly when ``refine`` is, and sound.
        O(K)."""
        if not self._ready:
            if self._n_variables or self._n_classes:
                return ["run: a learner with sizes must have its run state (reset has sized it)"]
            return []
        k, best, found = self._n_variables, self._FIELDS["best"], []
        if self._best.shape != (k,) or self._active.shape != (k,):
            return [f"{best}: expected the weights and the active mask of n_variables = {k} variables"]
        if not np.all((self._best >= 0.0) & (self._best <= 1.0)):
            found.append(f"{best}: weights must lie in [0, 1]")
        if np.any(self._best[~self._active] != 0.0):
            found.append(f"{best}: holds a weight other than 0 for an inactive variable")
        if self.max_variables is not None and not self._incumbent_is_nb and np.count_nonzero(self._best) > self.max_variables:
            found.append(f"{best}: has more non-zero weights than max_variables = {self.max_variables!r}")
        if not 0 <= self._rows_at_search <= self._rows_seen:
            found.append(f"{self._FIELDS['rows_at_search']}: must be <= run.rows_seen")
        if not self._searches >= 0:
            found.append("run.searches: must be >= 0")
        if (self._refiner is None) != (self.refine is None):
            found.append("run.refiner: must be given exactly when the parameter refine is")
        elif self._refiner is not None:
            found += ["run.refiner." + problem for problem in self._refiner.problems()]
        return found


class WarmSearch(WindowSearch):
    """The family of SGCF and Direct: warm-started searches with a hand-over test, one per
    renewal of the window (see the module's design note).

    Its own state: ``_window_at_search``, the rows of the window the last search saw.
    Subclasses implement ``_search(window, costs, start, movable) -> (K,)`` and
    ``_penalty(w, costs)`` (the criterion is ``NLL + _penalty`` on the window).
    """

    def __init__(self, batch_size: int = 100, max_variables: int | None = None, refine: PGDMB | None = None):
        integer(batch_size, "batch_size", low=1)
        integer(max_variables, "max_variables", low=0, optional=True)
        self.batch_size = batch_size
        self.max_variables = max_variables
        self.refine = refine
        self._check_refine()
        self._n_variables = 0
        self._n_classes = 0
        self._ready = False

    # ------------------------------------------------------------------ subclass hooks

    def _search(self, window: Batch, costs: np.ndarray, start: np.ndarray, movable: np.ndarray) -> np.ndarray:
        """``(K,)`` the search's result from ``start``; variables outside ``movable`` stay 0."""
        raise NotImplementedError  # pragma: no cover

    def _penalty(self, weights: np.ndarray, costs: np.ndarray) -> float:
        """The criterion's prior term (the criterion is ``NLL + _penalty`` on the window)."""
        raise NotImplementedError  # pragma: no cover

    # ------------------------------------------------------------------ the family's schedule and hand-over

    def _reset_family(self) -> None:
        self._window_at_search = 0  # rows of the window that search saw

    def _due(self, window_rows: int) -> bool:
        """The first search once ``FIRST_SEARCH`` rows have come, then whenever the rows since
        the last search amount to the window it saw."""
        return self._rows_seen - self._rows_at_search >= max(self.FIRST_SEARCH, self._window_at_search)

    def _handover(self, window: Batch, costs: np.ndarray, active: np.ndarray, window_rows: int) -> bool:
        self._window_at_search = window_rows
        return self._run(window, costs, active)

    def criterion(self, weights: np.ndarray, window: Batch, costs: np.ndarray) -> float:
        """The learner's criterion ``NLL(w) + penalty(w)`` on ``window``; O(N·K·J)."""
        weights = np.asarray(weights, dtype=float)
        nll = negative_log_likelihood(weights, window.log_lik, window.y, window.log_prior, window.sample_weight)
        return float(nll) + self._penalty(weights, costs)

    def _run(self, window: Batch, costs: np.ndarray, active: np.ndarray) -> bool:
        """One search from w* (the first from 0.5), the budget, then the hand-over (True if the
        result replaced w*)."""
        start = np.full(self._n_variables, 0.5) if self._incumbent_is_nb else self._best.copy()
        start[~active] = 0.0
        result = self._search(window, costs, start, active.copy())
        budget = self.max_variables
        if budget is not None and np.count_nonzero(result) > budget:
            keep = top_variables(drop_gains(result, window), result > 0, budget)
            start = np.where(keep, result, 0.0)
            result = self._search(window, costs, start, active & keep)
        self._searches += 1
        # a w* over the budget (the plain naive Bayes start) never stays against a budgeted result
        over_budget = budget is not None and (self._incumbent_is_nb or np.count_nonzero(self._best) > budget)
        if over_budget or self.criterion(result, window, costs) <= self.criterion(self._best, window, costs):
            self._best = result
            self._incumbent_is_nb = False
            self._restart_refiner(result)
            return True
        return False


    # -- saved record (docs/saved-model.md) ---------------------------------------------------

    def _run_state(self) -> dict:
        """The ``run`` of a ``WarmSearch``'s record (SGCF's, Direct's)."""
        return {
            "best": self._best,
            "incumbent_is_nb": self._incumbent_is_nb,
            "active": self._active,
            "rng": generator_state(self._rng, "run.rng"),
            "rows_seen": self._rows_seen,
            "rows_at_search": self._rows_at_search,
            "window_at_search": self._window_at_search,
            "searches": self._searches,
            "refiner": self._refiner,
        }

    def _load_run(self, run: dict) -> None:
        self._best, self._incumbent_is_nb, self._active = run["best"], run["incumbent_is_nb"], run["active"]
        self._rng = generator_from_state(run["rng"])
        self._rows_seen, self._rows_at_search = run["rows_seen"], run["rows_at_search"]
        self._window_at_search, self._searches = run["window_at_search"], run["searches"]
        self._refiner = run["refiner"]


# ------------------------------------------------------------------------------------------------
# The saved record of SGCF and Direct (docs/saved-model.md): once reset, w*, whether w* is still
# the plain naive Bayes start, the active mask, the generator, the schedule's row counters, the
# number of searches, and the refine learner (a PGDMB or VNS record) when ``refine`` is set.

#: The parameters SGCF and Direct share in their records.
PARAMS = {
    "batch_size": Int(doc="rows per learn call"),
    "max_variables": Optional(Int(), doc="most non-zero weights of a hand-over (null: no limit)"),
    "refine": Optional(Record("PGDMB", "VNS"), doc="learner restarted from each hand-over (null: none)"),
}

#: The state fields of SGCF's and Direct's records.
STATE = {
    **SIZES,
    "run": Optional(
        Struct(
            {
                "best": Array("float64", ("n_variables",), **WEIGHT_RANGE, doc="w*, the anytime best weights"),
                "incumbent_is_nb": Bool(doc="w* is still the plain naive Bayes start"),
                "active": Array("bool", ("n_variables",), doc="variables not pinned at 0 (Level > 0)"),
                "rng": GENERATOR,
                "rows_seen": Int(low=0, doc="rows of the arriving batches"),
                "rows_at_search": Int(low=0, doc="rows seen when the last search ran"),
                "window_at_search": Int(low=0, doc="rows of the window the last search saw"),
                "searches": Int(low=0, doc="searches run since reset"),
                "refiner": Optional(Record("PGDMB", "VNS"), doc="the refine learner's live copy (null without refine)"),
            },
            doc="the search state, once reset",
        ),
        doc="null before reset",
    ),
}


def register_warm_search(cls: type[WarmSearch], params: dict, doc: str) -> None:
    """Register the record type ``cls.__name__`` of a ``WarmSearch`` subclass: the shared
    ``PARAMS`` around the learner's own ``params`` (``batch_size`` first, ``max_variables`` and
    ``refine`` last), the shared ``STATE``, and ``WarmSearch``'s ``record_state``/``from_record``."""
    fields = {"batch_size": PARAMS["batch_size"], **params, "max_variables": PARAMS["max_variables"], "refine": PARAMS["refine"]}
    register(cls.__name__, cls, Schema(params=fields, state=STATE, doc=doc), state=cls.record_state, build=cls.from_record)
