"""SNB: selective naive Bayes with compression-based model averaging (HB24 §2, Algorithm 1).

Design note. At the times :class:`~.selection.SelectionSearch` schedules, SNB runs MS(FFWBW) on the
whole history window (:func:`~.selection.ms_ffwbw`): ⌈log(K·N)⌉ starts, each from the empty
subset, with up to two repetitions of a fast forward then a fast backward pass of Boolean moves
(add or drop one variable) in random orders, each move kept when it lowers the criterion of HB24
eq. 6 and 9 (the FNB criterion at Boolean weights). The weights are then the compression-based
average of the subsets met (Boullé 2007): with κ(M) = 1 − c(M)/c(∅) the compression rate of
subset M (negative rates count 0), ``w_k = Σ_{M ∋ X_k} κ(M) / Σ_M κ(M)``. HB24 §2.2 averages
"the Boolean weights obtained for all the subsets of variables encountered along the optimization
trajectory": each accepted add or drop gives a subset, and each distinct subset counts once
(``averaging="trajectory"``, default). ``averaging="optima"`` averages only the local optimum
each start ends in. Cost O(K·N·J·log(K·N)) per search.
"""

from __future__ import annotations

import numpy as np

from .._checks import integer
from ..io.registry import register
from ..io.schema import Array, Fields, Int, Optional, Schema, Str
from .base import WEIGHT_RANGE, Batch
from .selection import AVERAGING, PARAMS, SCHEDULE, SelectionSearch, ms_ffwbw, search_state

__all__ = ["SNB"]


class SNB(SelectionSearch):
    """Selective naive Bayes, MS(FFWBW) with compression-based averaging (HB24 Alg. 1, Boullé 2007).

    Parameters
    ----------
    batch_size, penalty, growth, refresh
        As in :class:`FNB`.
    max_variables
        At most this many variables in each subset searched (a variable cannot enter a full
        subset) and at most this many non-zero averaged weights (the largest are kept).
    starts
        Number of starts of MS(FFWBW) (None: ⌈log(K·N)⌉, natural log, Boullé 2007).
    averaging
        ``"trajectory"`` (HB24 §2.2, default) or ``"optima"`` (see the module note).

    Examples
    --------
    Three variables carry the class, three are noise. The best subset holds the three; the
    averaged weights also count the smaller subsets met on the way to it.

    >>> import numpy as np
    >>> from wnb_stream.weights import Context, SNB, toy_batch
    >>> rng = np.random.default_rng(42)
    >>> model = SNB()
    >>> model.reset(n_variables=6, n_classes=2, seed=42)
    >>> context = Context(prior_costs=np.full(6, np.log(6) + 1), active=np.ones(6, bool))
    >>> history = toy_batch(rng, 2000)
    >>> model.learn(history, history, context)
    >>> model.weights.round(3).tolist()
    [0.646, 0.662, 0.658, 0.0, 0.0, 0.0]
    >>> model.best_subset.tolist()
    [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    """

    def __init__(
        self,
        batch_size: int = 100,
        penalty: float = 0.1,
        max_variables: int | None = None,
        starts: int | None = None,
        averaging: str = "trajectory",
        growth: float = 2.0,
        refresh: float | None = 1.0,
    ):
        self.batch_size = batch_size
        self.penalty = penalty
        self.max_variables = max_variables
        self.starts = starts
        self.averaging = averaging
        self.growth = growth
        self.refresh = refresh
        self._validate_schedule()
        integer(starts, "starts", low=1, optional=True)
        if self.averaging not in AVERAGING:
            raise ValueError(f"averaging must be one of {AVERAGING}, got {self.averaging!r}")
        self._n_variables = 0
        self._n_classes = 0
        self._ready = False  # set by reset

    @classmethod
    def _unit_test_params(cls):
        yield {"batch_size": 20}
        yield {"batch_size": 20, "max_variables": 2, "starts": 2, "averaging": "optima", "refresh": None}

    def _reset_family(self) -> None:
        super()._reset_family()
        self._subset = np.zeros(self._n_variables)  # (K,) 0/1: the best subset of the last search
        self._models = 0

    @property
    def best_subset(self) -> np.ndarray:
        """``(K,)`` 0/1 weights of the best subset the last search found (its MAP model)."""
        return self._subset.copy() if self._ready else np.zeros(0)

    @property
    def n_models(self) -> int:
        """Distinct subsets with a positive compression rate averaged by the last search."""
        return self._models if self._ready else 0

    def _grow(self, extra: int) -> None:
        self._subset = np.concatenate([self._subset, np.zeros(extra)])

    def _search(self, history: Batch, prior_costs: np.ndarray, active: np.ndarray) -> None:
        selection = ms_ffwbw(
            history, prior_costs, active, self._rng, self.penalty, self.max_variables, self.starts, self.averaging
        )
        self._best = selection.weights
        self._subset = selection.best
        self._models = selection.models
        self._value = selection.best_value

    def problems(self) -> list[str]:
        """The selection search's broken invariants, then SNB's: the best subset of the last
        search holds 0/1 weights, one per variable. O(K)."""
        found = super().problems()
        if self._ready:
            if self._subset.shape != (self._n_variables,):
                found.append(f"run.best: expected the 0/1 weights of n_variables = {self._n_variables} variables")
            elif not np.all((self._subset == 0.0) | (self._subset == 1.0)):
                found.append("run.best: must hold 0/1 weights")
        return found

    # -- saved record (docs/saved-model.md): SelectionSearch's, plus the best subset of the last
    # search and the number of models averaged

    def record_state(self) -> dict:
        state = super().record_state()
        if state["run"] is not None:
            state["run"].update(best=self._subset, models=self._models)
        return state

    @classmethod
    def from_record(cls, fields: Fields) -> SNB:
        model = super().from_record(fields)
        run = fields.state["run"]
        if run is not None:
            model._subset, model._models = run["best"], run["models"]
        return model


register(
    "SNB",
    SNB,
    Schema(
        params={
            **PARAMS,
            "starts": Optional(Int(), doc="starts of MS(FFWBW) (null: ⌈log(K·N)⌉)"),
            "averaging": Str(choices=AVERAGING, doc="subsets averaged: the trajectory or the local optima"),
            **SCHEDULE,
        },
        state=search_state(
            {
                "best": Array("float64", ("n_variables",), **WEIGHT_RANGE, doc="0/1 weights of the best subset of the last search"),
                "models": Int(low=0, doc="subsets averaged by the last search"),
            }
        ),
        doc="Selective naive Bayes with compression-based averaging (HB24 Algorithm 1)",
    ),
    state=SNB.record_state,
    build=SNB.from_record,
)
