"""FNB: the fractional naive Bayes of Hue & Boullé (2024, Algorithm 2), docs/algorithms/weights.md#fnb.

Design note. FNB is a batch search: at the times :class:`~.selection.SelectionSearch` schedules,
it runs HB24's Algorithm 2 on the whole history window (:func:`~.selection.fractional_search`):
one start from the empty model, fast forward then fast backward passes over the variables in
random orders, moving one weight at a time by δ = 1/2, 1/4, … while δ > 1/N, each δ repeated
⌈1 + log K / log N⌉ times; a move is kept when it lowers the criterion of HB24 eq. 17–18
(:func:`~.selection.selection_criterion`). Each trial costs O(N·J) (incremental scores), a search
O(K·N·J·log(K·N)), the order of the SNB's.

Schedules of the increments. ``schedule="paper"`` (default) is HB24's Algorithm 2 as written:
δ from 1/2 down to just above 1/N, 1 + log K / log N repetitions per δ. ``schedule="khiops"`` is
the Khiops implementation: δ from 1 (a Boolean first pass), ⌈log2(N + 1)⌉ increments, two
repetitions per δ. The paper is the reference of this library; Khiops' variant is kept for
comparison. In both, repetitions at one δ stop as soon as one accepts no move.

Refinement. HB24 §4.4 use FNB's weights as the starting point of their gradient search ("the
FNB initialization appears to be the best trade-off between execution time, quality of the
optimization, number of selected variables and predictive performance"). ``refine=VNS()`` (or
``PGDMB()``) does that on a stream: each search's result restarts the learner's w* and descent,
the learner steps on every batch, and predictions use its weights (:mod:`~.refinement`, the
code SGCF's and Direct's ``refine`` use).
"""

from __future__ import annotations

import numpy as np

from ..io.registry import Record, register
from ..io.schema import Fields, Float, Optional, Schema, Str
from .base import Batch
from .pgdmb import PGDMB
from .selection import DEFAULT_EXPONENT, PARAMS, SCHEDULE, SCHEDULES, SelectionSearch, fractional_search, search_state

__all__ = ["FNB"]


class FNB(SelectionSearch):
    """Fractional naive Bayes: fractional fast forward–backward search on the window (HB24 Alg. 2).

    Parameters
    ----------
    batch_size
        Rows per ``learn`` call asked of the classifier; ``learn`` only counts them unless a
        search is due, so a small value checks the schedule often at little cost.
    penalty
        λ ≥ 0, the weight of the prior f_F (0.1: Khiops' prior weight, as PGDMB's default).
    exponent
        p in (0, 1] of the prior term Σ B_k w_k^p (HB24: 0.95; p < 1 favours sparse weights).
    max_variables
        At most this many non-zero weights (None: no limit): a variable at 0 cannot enter once
        the budget is full, and a forward pass that has more variables at 0 than free places
        fills them best first, each with the variable that lowers the criterion most given those
        already in (:func:`~.selection.ranked_forward_pass`: greedy forward selection, which sees
        redundancy with the selected variables, unlike a ranking of single-variable gains; one
        evaluation of the candidates, O(K·N·J), per place filled). A budget that every variable
        fits changes nothing.
    schedule
        ``"paper"`` (default: HB24 Algorithm 2 as written, δ from 1/2, 1 + log K / log N
        repetitions; the paper is this library's reference) or ``"khiops"`` (Khiops' code: δ
        from 1, two repetitions; kept for comparison).
    growth
        > 1: search again when the rows seen have grown by this factor since the last search.
    refresh
        Search again when ``refresh`` × (window size) rows have come since the last search
        (None: only on growth).
    refine
        None, or a :class:`~.PGDMB` or :class:`~.VNS` prototype: each search's result becomes
        the start of its live copy, which steps on every batch and gives the weights (HB24
        §4.4; the module's note). Not combined with ``max_variables``.

    Examples
    --------
    >>> import numpy as np
    >>> from wnb_stream.weights import Context, FNB, toy_batch
    >>> rng = np.random.default_rng(42)
    >>> model = FNB()
    >>> model.reset(n_variables=6, n_classes=2, seed=42)
    >>> context = Context(prior_costs=np.full(6, np.log(6) + 1), active=np.ones(6, bool))
    >>> history = toy_batch(rng, 2000)
    >>> model.learn(history, history, context)
    >>> model.weights.round(3).tolist()
    [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    >>> model.n_searches
    1
    """

    def __init__(
        self,
        batch_size: int = 100,
        penalty: float = 0.1,
        exponent: float = DEFAULT_EXPONENT,
        max_variables: int | None = None,
        schedule: str = "paper",
        growth: float = 2.0,
        refresh: float | None = 1.0,
        refine: PGDMB | None = None,
    ):
        self.batch_size = batch_size
        self.penalty = penalty
        self.exponent = exponent
        self.max_variables = max_variables
        self.schedule = schedule
        self.growth = growth
        self.refresh = refresh
        self.refine = refine
        self._validate_schedule()
        self._check_refine()
        if not 0.0 < self.exponent <= 1.0:
            raise ValueError(f"exponent must be in (0, 1], got {self.exponent}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        self._n_variables = 0
        self._n_classes = 0
        self._ready = False  # set by reset

    @classmethod
    def _unit_test_params(cls):
        yield {"batch_size": 20}
        yield {"batch_size": 20, "max_variables": 2, "schedule": "khiops", "refresh": None}
        yield {"batch_size": 20, "refine": PGDMB(batch_size=20)}

    def _search(self, history: Batch, prior_costs: np.ndarray, active: np.ndarray) -> None:
        search = fractional_search(
            history, prior_costs, active, self._rng, self.penalty, self.exponent, self.max_variables, self.schedule
        )
        self._best = search.weights.copy()
        self._value = float(search.value)

    # -- saved record (docs/saved-model.md): SelectionSearch's, plus the refine learner

    def record_state(self) -> dict:
        state = super().record_state()
        if state["run"] is not None:
            state["run"]["refiner"] = self._refiner
        return state

    @classmethod
    def from_record(cls, fields: Fields) -> FNB:
        model = super().from_record(fields)
        if fields.state["run"] is not None:
            model._refiner = fields.state["run"]["refiner"]
        return model


register(
    "FNB",
    FNB,
    Schema(
        params={
            **PARAMS,
            "exponent": Float(doc="p of the prior term Σ B_k w_k^p"),
            "schedule": Str(choices=SCHEDULES, doc="increments and repetitions: HB24 or Khiops"),
            **SCHEDULE,
            "refine": Optional(Record("PGDMB", "VNS"), doc="learner restarted from each search's result (null: none)"),
        },
        state=search_state({"refiner": Optional(Record("PGDMB", "VNS"), doc="the refine learner's live copy (null without refine)")}),
        doc="Fractional naive Bayes (HB24 Algorithm 2)",
    ),
    state=FNB.record_state,
    build=FNB.from_record,
)
