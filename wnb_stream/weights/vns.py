"""PGDMB-VNS: PGDMB restarted by a variable neighbourhood search (HBL17 Algorithm 2, docs/algorithms/weights.md#vns).

Design note. A *session* has an iteration budget ``T = log(K·N) · 2^opti_level`` (HBL17 §1.4,
natural log, N the history depth when the session starts). Its first descent starts from the
best weights w* (from ``initial_weight`` = 0.5 in the very first session, HBL17's w^0_1, while
w* is the plain naive Bayes as in :class:`PGDMB`); every later descent starts from a random point
of the neighbourhood of w*:
``P_[0,1]^K(w* + U[−s, s]^K)``, s the neighbourhood size (``multi_start=True``: a uniform point of
the whole cube, HBL17's multi-start comparison). A descent is the PGDMB run of :class:`PGDMB`
(one step per ``learn`` call); when it ends, its steps are charged to the budget and

- if it improved w* (judged on the window, as in PGDMB), the neighbourhood is reduced: s ← max(s/2, s0);
- otherwise it is enlarged: s ← min(2s, 1) (HBL17 Algorithm 2),

with s0 = ``neighbourhood`` (1/16, HBL17 §1.4). When the budget is spent the session ends and a
new one starts from w* with s = s0 and a budget recomputed from the current K and N, so that an
endless stream keeps adapting. A perturbed descent that beats w* on the window replaces it at
once (anytime). Perturbations can give a zero weight back to a variable ("a variable can
re-appear", HBL17 §1.3). All randomness comes from the seed given to ``reset``.

Reading of HBL17: its Algorithm 2 writes the next start as a perturbation of the last
descent's result w*_m, its prose as a perturbation of "the current optimal weight vector"; the
prose (the usual VNS shaking of the incumbent) is implemented: the start perturbs the global w*.

Cost: that of PGDMB per ``learn``, plus O(K) per restart; O(T·(L + N)·K·J) per session.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import integer
from ..io.generators import GENERATOR, generator_from_state, generator_state
from ..io.registry import register
from ..io.schema import Bool, Fields, Float, Int, Optional, Schema, Struct
from .base import SIZES, Batch
from .pgdmb import PARAMS, PGDMB, RUN
from .regularizers import DEFAULT_DELTA, DEFAULT_SPREAD, DEFAULT_SPREAD_ROWS
from .rprop import project

__all__ = ["VNS"]


class VNS(PGDMB):
    """PGDMB with variable-neighbourhood restarts around the best weights (HBL17 Algorithm 2).

    Parameters
    ----------
    batch_size, regularizer, penalty, exponent, tolerance, max_iterations, epsilon, initial_weight, initial_step, step_increase, step_decrease, step_min, step_max, zero_threshold, delta, rprop, spread, wake, spread_rows
        As in :class:`PGDMB`.
    opti_level
        OptiLevel ≥ 0 in the session budget ``T = log(K·N)·2^OptiLevel`` (HBL17 retains 5).
    neighbourhood
        s0 in (0, 1], the initial (and smallest) neighbourhood size (HBL17: 1/16).
    multi_start
        If True, every restart is a uniform point of [0, 1]^K (PGDMB-MS, for comparison).
    replay_level
        Each time the number of rows seen has grown by half (from 32 rows on), run
        ``session_budget(K, N, replay_level)`` extra steps on mini-batches drawn without
        replacement from the history window (HBL17 §1.4 reuses instances across shuffled
        mini-batches when the data is shorter than the budget). Short streams thus get optimised
        weights early, and later sessions refit them on the current level 2; there are
        O(log n) sessions in all. None turns replay off: single pass, as PGDMB.

    Examples
    --------
    >>> import numpy as np
    >>> from wnb_stream.weights import Context, VNS, toy_batch
    >>> rng = np.random.default_rng(42)
    >>> model = VNS(batch_size=100, opti_level=1)
    >>> model.reset(n_variables=6, n_classes=2, seed=42)
    >>> context = Context(prior_costs=np.full(6, np.log(6) + 1), active=np.ones(6, bool))
    >>> history = toy_batch(rng, 2000)
    >>> for _ in range(60):
    ...     model.learn(toy_batch(rng, 100), history, context)
    >>> model.weights.round(1).tolist()  # (on 2,000 rows the spread term weighs 20 · 500 / 2,000)
    [1.0, 0.9, 1.0, 0.1, 0.1, 0.0]
    >>> model.n_sessions, model.n_descents
    (9, 21)
    """

    _REPLAY_START = 32  # rows seen before the first replay session
    # A session each time the rows seen have grown by half: level 2 is rebuilt at least as often
    # (``rebuild_growth`` 0.25), and weights fitted on partitions of n rows must not serve a model
    # whose partitions hold 2n or more (the last session of a 216-row stream was at its 96th row).
    _REPLAY_GROWTH = 1.5

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
        opti_level: int = 5,
        neighbourhood: float = 1 / 16,
        multi_start: bool = False,
        replay_level: int | None = 1,
        spread: float = DEFAULT_SPREAD,
        wake: bool = True,
        spread_rows: float | None = DEFAULT_SPREAD_ROWS,
    ):
        super().__init__(
            batch_size=batch_size,
            regularizer=regularizer,
            penalty=penalty,
            exponent=exponent,
            tolerance=tolerance,
            max_iterations=max_iterations,
            epsilon=epsilon,
            initial_weight=initial_weight,
            initial_step=initial_step,
            step_increase=step_increase,
            step_decrease=step_decrease,
            step_min=step_min,
            step_max=step_max,
            zero_threshold=zero_threshold,
            delta=delta,
            rprop=rprop,
            spread=spread,
            wake=wake,
            spread_rows=spread_rows,
        )
        integer(opti_level, "opti_level", low=0)
        if not 0.0 < neighbourhood <= 1.0:
            raise ValueError(f"neighbourhood must be in (0, 1], got {neighbourhood}")
        integer(replay_level, "replay_level", low=0, optional=True)
        self.opti_level = opti_level
        self.neighbourhood = neighbourhood
        self.multi_start = multi_start
        self.replay_level = replay_level

    @classmethod
    def _unit_test_params(cls):
        yield {"batch_size": 50, "opti_level": 1}
        yield {"batch_size": 20, "opti_level": 0, "multi_start": True, "regularizer": "r1"}

    @staticmethod
    def session_budget(n_variables: int, history_size: int, opti_level: int) -> float:
        """HBL17's budget ``T = log(K·N) · 2^OptiLevel`` (natural log), at least 1 iteration.

        >>> round(VNS.session_budget(n_variables=20, history_size=10_000, opti_level=5), 1)
        390.6
        """
        return max(1.0, math.log(max(n_variables * history_size, 1)) * 2.0**opti_level)

    # ------------------------------------------------------------------ protocol

    def reset(self, n_variables: int, n_classes: int, seed: int | None = None) -> None:
        """Fresh state; ``seed`` drives every perturbation (``np.random.default_rng(seed)``)."""
        self._rng = np.random.default_rng(seed)
        self._budget: float | None = None  # fixed when the session meets its first history
        self._spent = 0  # SumT: steps charged to the running session
        self._neighbourhood = float(self.neighbourhood)
        self._sessions = 1
        self._replayed_at = 0  # rows seen at the last replay session
        self._rows_seen = 0  # rows of the arriving batches
        self._replay_steps = 0
        super().reset(n_variables, n_classes, seed)

    def learn(self, batch: Batch, history: Batch | None = None, context=None) -> None:
        """One PGDMB iteration on ``batch``, then a replay session if the rows seen have grown by half.

        Cost O(L·K·J + N·K·J) per iteration; a replay session costs its budget in iterations
        (O(log n) sessions over a stream of n rows).
        """
        self._scope = None if context is None else context.n_variables
        super().learn(batch, history, context)
        if self.replay_level is None or history is None or not self._ready:
            return
        self._rows_seen += len(batch)
        if self._rows_seen < self._REPLAY_START or self._rows_seen < self._REPLAY_GROWTH * self._replayed_at:
            return
        self._replayed_at = self._rows_seen
        n = len(history)
        size = min(int(self.batch_size), n)
        budget = int(self.session_budget(self._budget_variables, n, self.replay_level))
        for _ in range(budget):
            rows = self._rng.choice(n, size=size, replace=False)  # (size,) a shuffled mini-batch
            replayed = Batch(history.log_lik[rows], history.y[rows], history.sample_weight[rows], history.log_prior)
            super().learn(replayed, history, context)
            self._replay_steps += 1

    @property
    def n_replay_steps(self) -> int:
        """Steps made on mini-batches replayed from the history window."""
        return self._replay_steps if self._ready else 0

    # ------------------------------------------------------------------ diagnostics

    @property
    def neighbourhood_size(self) -> float:
        """Current neighbourhood size s, in [s0, 1]."""
        return self._neighbourhood if self._ready else float(self.neighbourhood)

    @property
    def budget(self) -> float | None:
        """Iteration budget T of the running session (None before the first ``learn``)."""
        return self._budget if self._ready else None

    @property
    def spent(self) -> int:
        """Steps charged to the running session by its finished descents (SumT)."""
        return self._spent if self._ready else 0

    @property
    def n_sessions(self) -> int:
        """Number of sessions started since ``reset`` (the running one included)."""
        return self._sessions if self._ready else 0

    # ------------------------------------------------------------------ internals

    _scope: int | None = None  # the model's variables, from the context of the running ``learn``

    @property
    def _budget_variables(self) -> int:
        """K of HBL17's budget: the model's variables (``Context.n_variables``) when the learner
        holds only those in level 3, else its own."""
        return max(self._n_variables, self._scope or 0)

    def _prepare(self, history: Batch) -> None:
        if self._budget is None:
            self._budget = self.session_budget(self._budget_variables, len(history), self.opti_level)

    def _end_descent(self, history: Batch, prior_costs: np.ndarray | None) -> None:
        descent = self._descent
        self._spent += descent.iterations
        if descent.improved:  # HBL17 §1.3: "the size of the neighbourhood is reduced"
            self._neighbourhood = max(self._neighbourhood / 2.0, float(self.neighbourhood))
        else:  # HBL17 Algorithm 2: NeighSize = min(2 · NeighSize, 1)
            self._neighbourhood = min(2.0 * self._neighbourhood, 1.0)
        if self._spent >= self._budget:  # new session from w* (endless stream)
            self._sessions += 1
            self._spent = 0
            self._neighbourhood = float(self.neighbourhood)
            self._budget = self.session_budget(self._budget_variables, len(history), self.opti_level)
            self._start_descent(self._best, from_best=True)
            return
        k = self._n_variables
        if self.multi_start:
            start = self._rng.random(k)  # (K,) uniform in [0, 1]^K
        else:
            s = self._neighbourhood
            start = self._best + self._rng.uniform(-s, s, size=k)  # (K,)
        start = project(start, self.zero_threshold)
        start[~self._active] = 0.0
        self._start_descent(start, from_best=False)

    def problems(self) -> list[str]:
        """PGDMB's broken invariants, then the session's: the neighbourhood size between the
        parameter and 1, the steps spent >= 0, the budget (when set) >= 1. O(K)."""
        found = super().problems()
        if not self._ready:
            return found
        if not float(self.neighbourhood) <= self._neighbourhood <= 1.0:
            found.append(f"session.neighbourhood: must be >= the parameter neighbourhood = {self.neighbourhood!r} and <= 1")
        if not self._spent >= 0:
            found.append("session.spent: must be >= 0")
        if not (self._budget is None or self._budget >= 1.0):
            found.append("session.budget: must be >= 1")
        return found

    # -- saved record (docs/saved-model.md): PGDMB's, plus the session (the generator's exact
    # state, the budget, the steps spent, the neighbourhood size, the session and replay counters)

    def record_state(self) -> dict:
        state = super().record_state()
        state["session"] = None
        if self._ready:
            state["session"] = {
                "rng": generator_state(self._rng, "session.rng"),
                "budget": self._budget,
                "spent": self._spent,
                "neighbourhood": self._neighbourhood,
                "sessions": self._sessions,
                "replayed_at": self._replayed_at,
                "rows_seen": self._rows_seen,
                "replay_steps": self._replay_steps,
            }
        return state

    @classmethod
    def from_record(cls, fields: Fields) -> VNS:
        model = super().from_record(fields)
        session = fields.state["session"]
        if session is not None:
            model._rng = generator_from_state(session["rng"])
            model._budget = None if session["budget"] is None else float(session["budget"])
            model._neighbourhood = float(session["neighbourhood"])
            model._spent, model._sessions, model._replayed_at = session["spent"], session["sessions"], session["replayed_at"]
            model._rows_seen, model._replay_steps = session["rows_seen"], session["replay_steps"]
        return model


def _session_with_run(fields: Fields) -> None:
    """The session is given exactly when the run is (a record's shape, checked before the build:
    a run without its session would build a learner without its generator)."""
    if (fields.state["session"] is None) != (fields.state["run"] is None):
        fields.fail("session", "must be given exactly when run is")


SESSION = Struct(
    {
        "rng": GENERATOR,
        "budget": Optional(Float(low=1.0), doc="iteration budget T (null before the first history)"),
        "spent": Int(low=0, doc="steps charged to the session"),
        "neighbourhood": Float(above=0.0, high=1.0, doc="current neighbourhood size s"),
        "sessions": Int(low=1, doc="sessions started"),
        "replayed_at": Int(low=0, doc="rows seen at the last replay session"),
        "rows_seen": Int(low=0, doc="rows of the arriving batches"),
        "replay_steps": Int(low=0, doc="steps on replayed mini-batches"),
    },
    doc="the VNS session, once reset",
)

register(
    "VNS",
    VNS,
    Schema(
        params={
            **PARAMS,
            "opti_level": Int(doc="OptiLevel of the session budget"),
            "neighbourhood": Float(doc="s0, the smallest neighbourhood size"),
            "multi_start": Bool(doc="restart from uniform points of the cube"),
            "replay_level": Optional(Int(), doc="budget level of replay sessions (null: no replay)"),
        },
        state={
            **SIZES,
            "run": Optional(RUN, doc="null before reset"),
            "session": Optional(SESSION, doc="null before reset"),
        },
        checks=(_session_with_run,),
        doc="PGDMB with variable-neighbourhood restarts (HBL17 Algorithm 2)",
    ),
    state=VNS.record_state,
    build=VNS.from_record,
)
