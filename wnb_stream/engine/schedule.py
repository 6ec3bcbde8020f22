"""When the model does its periodic work: level-2 rebuilds, learner steps, and mini-batch cuts.

- *Rebuilds* (``docs/algorithms/prediction.md#rebuild-schedule``). Level 2 of a variable is
  rebuilt when its count of observations reaches its threshold; the next threshold is
  count + gap(count), gap(c) = clip(⌊c · growth⌋, 1, every): at every one of the first
  observations, then geometrically sparser, never further apart than ``every``. Every variable
  is rebuilt when a class is new or a class's count reaches its own threshold (J enters every
  MODL cost, and a young class needs dense rebuilds); a class's threshold is its count plus
  ``class_gap``, the same gap floored at ⌊J/32⌋ so that many classes do not rebuild every
  variable at nearly every example. A row adds at most 1 to each count, so
  after a check nothing can fall due for ``quiet`` rows: the check is skipped meanwhile.
- *Learner steps*. The learner steps on the rows received since its last step when there are
  ``step_size`` of them; ``step_size`` starts at min(L, 32), then is ⌈STEP_GROWTH · H⌉ for the
  H rows the window holds after a step, between that start and the learner's batch size L (once
  the window is full it doubles up to L, as the window grows no more). So
  small streams learn early, and the weights are stepped again each time the window (and the
  level 2 built on the same rows) has grown by half: weights fitted when the window held H rows
  never serve more than about 1.5·H rows (with doubling sizes, up to 2.3·H: a 216-row stream was
  last stepped at its 96th row, and every variable that entered level 3 after that kept weight 0).
- *Mini-batch cuts*. ``learn_many`` processes a batch in chunks that end exactly where a loop of
  ``learn_one`` would register a class, create a variable, rebuild level 2 or step the learner
  (``chunk_end``), so both paths go through the same states.
"""

from __future__ import annotations

import math

import numpy as np

from ..io.registry import register
from ..io.schema import Fields, Float, Int, Schema

__all__ = ["CLASS_SPREAD", "STEP_GROWTH", "Schedule"]

#: A class's growth rebuilds every variable at most once per ⌊J / CLASS_SPREAD⌋ of its examples
#: (``Schedule.class_gap``); 32 keeps the rule of every model with fewer than 64 classes.
CLASS_SPREAD = 32

#: After a step, the next one falls due when the window has grown by this fraction of its rows
#: (``Schedule.stepped``), until the step size reaches the learner's batch size.
STEP_GROWTH = 0.5


class Schedule:
    """Counters of the rebuild and step schedules (the per-variable and per-class thresholds live
    with the variables and the classes).

    Parameters
    ----------
    growth
        A variable (or class) is rebuilt again once its count has grown by this factor.
    every
        Upper bound on the gap, in observations, between two rebuilds.

    >>> schedule = Schedule(growth=0.5, every=100)
    >>> schedule.gap(np.array([0.0, 3.0, 10.0, 1e6])).tolist()
    [1.0, 1.0, 5.0, 100.0]
    """

    __slots__ = ("growth", "every", "quiet", "pending", "step_size", "caught_up", "served")

    def __init__(self, growth: float, every: int):
        self.growth = growth
        self.every = every
        self.quiet = 0  # rows during which no rebuild can fall due (0: check at the next row)
        self.pending = 0  # rows since the last learner step
        self.step_size = 0  # size of the next learner batch (grows up to the learner's batch size)
        self.caught_up = 0  # rows seen at the model's last catch-up (0: none; ``Engine.catch_up``)
        self.served = -1  # rows seen at the model's last prediction (-1: none; ``Engine.serve``)

    def gap(self, count):
        """Observations until the next rebuild: every one early, then a growth factor, capped."""
        return np.maximum(1.0, np.minimum(np.floor(count * self.growth), float(self.every)))

    # ------------------------------------------------------------------ rebuilds
    def tick(self, m: int = 1) -> None:
        """``m`` rows arrived: the countdown runs down by ``m``. O(1)."""
        self.quiet -= m

    def rebuild_all_soon(self) -> None:
        """Check at the next row (a new class or new variables: their rebuild falls due at once). O(1)."""
        self.quiet = 0

    def rebuilds_due(self, registry, classes) -> tuple[np.ndarray, bool] | None:
        """What level 2 rebuilds now: None while the countdown runs; else the indices of the
        variables due and whether a class reached its threshold (then every variable is due,
        and the classes' thresholds move on after the rebuild: ``Classes.rebuilt`` with
        ``class_gap``). After the rebuild, ``count_down`` restarts the countdown. O(K + J)."""
        if self.quiet > 0:
            return None
        if classes.due():
            return np.arange(len(registry)), True
        return np.flatnonzero(registry.count >= registry.next_rebuild), False

    def count_down(self, registry, classes) -> None:
        """Restart the countdown after a check: a row adds at most 1 to each count, so nothing
        falls due before the smallest gap left is spent. O(K + J)."""
        gaps = [gap.min() for gap in (registry.next_rebuild - registry.count, classes.next_rebuild - classes.seen) if len(gap)]
        self.quiet = max(0, math.ceil(min(gaps))) if gaps else 0

    def class_gap(self, seen):
        """Examples of a class until its count makes every variable rebuild again: ``gap``, and
        at least ⌊J / CLASS_SPREAD⌋ for J classes.

        A class-triggered rebuild costs every variable a MODL search over J classes. With the
        plain ``gap``, each young class rebuilds everything at its 2nd, 3rd, 4th… example, so
        with J classes nearly every example rebuilt every variable (1,000 classes: ~1 full
        rebuild per example). With the floor, classes trigger at most one full rebuild per
        ⌊J/32⌋ examples between them (each example feeds one class), so the rebuild work per
        example no longer grows with J; young classes are still rebuilt by the variables' own
        schedule. Below 64 classes the floor is ≤ 1 ≤ ``gap``: nothing changes.
        """
        seen = np.asarray(seen, dtype=float)
        return np.maximum(self.gap(seen), float(len(seen) // CLASS_SPREAD))

    # ------------------------------------------------------------------ learner steps
    def queue(self, m: int = 1) -> None:
        """``m`` more rows wait for the learner's next step. O(1)."""
        self.pending += m

    def restart(self, pending: int) -> None:
        """Start both schedules afresh (after forgetting or a merge): check for rebuilds at the
        next row, and step first on the ``pending`` most recent rows. O(1)."""
        self.quiet = 0
        self.step_size = 0
        self.pending = pending

    def first_step_size(self, target: int) -> int:
        return self.step_size or (min(target, 32) if target > 1 else 1)

    def step_due(self, target: int) -> int:
        """Rows the learner steps on now (0: not yet), for a learner batch size ``target``."""
        if self.step_size == 0:
            self.step_size = self.first_step_size(target)
        return self.pending if self.pending >= self.step_size else 0

    def stepped(self, target: int, held: int, full: bool = False) -> None:
        """The learner stepped with ``held`` rows in the window: the next step falls due after
        ⌈STEP_GROWTH · held⌉ rows, at least the first step's size and at most ``target``. A
        ``full`` window grows no more: the size then doubles up to ``target``."""
        self.pending = 0
        if full:
            self.step_size = min(target, 2 * self.step_size)
        else:
            self.step_size = min(target, max(self.first_step_size(target), math.ceil(STEP_GROWTH * held)))

    # ------------------------------------------------------------------ catching up
    def predicted(self, n_seen: int) -> bool:
        """A prediction with ``n_seen`` rows seen; whether the model had already predicted since it
        learned its last row (then it may be serving: ``Engine.serve``). O(1)."""
        again = self.served == n_seen
        self.served = int(n_seen)
        return again

    def catch_up_due(self, n_seen: int) -> bool:
        """Whether a model that serves, having seen ``n_seen`` rows, catches up now: at its first
        catch-up, then once its rows have grown by ``growth`` since the last
        (``Engine.catch_up``). O(1)."""
        return n_seen > 0 and (not self.caught_up or n_seen >= (1.0 + self.growth) * self.caught_up)

    def behind(self, registry) -> np.ndarray:
        """The variables whose level 2 was built before their count of now (their next point is
        less than a full gap away): those a catch-up rebuilds. O(K)."""
        count = registry.count
        return np.flatnonzero(registry.next_rebuild < count + self.gap(count))

    def caught_up_at(self, n_seen: int) -> None:
        """The model caught up with ``n_seen`` rows seen. O(1)."""
        self.caught_up = int(n_seen)

    # ------------------------------------------------------------------ mini-batches
    def chunk_end(self, t: int, n: int, positions: dict, columns: list, registry, classes, target: int) -> int:
        """Last row of the chunk of a batch starting at row ``t``: the first row at which a loop of
        ``learn_one`` would register a class, rebuild, create a variable or step the learner.

        ``positions`` maps each distinct label of the batch to its rows (increasing); ``columns``
        lists (feature name, first row where it takes part).
        """
        end = n - 1
        for label, rows in positions.items():
            j, new = classes.index.peek(label)
            need = 1 if new else int(classes.next_rebuild[j] - classes.seen[j])
            i = int(np.searchsorted(rows, t)) + max(need, 1) - 1
            if i < len(rows):
                end = min(end, int(rows[i]))
        # New variables are created at their first row: end the chunk there.
        for name, start in columns:
            if name not in registry.index and start >= t:
                end = min(end, start)
        # Learner step.
        end = min(end, t + max(0, self.first_step_size(target) - self.pending - 1))
        # Level-2 rebuild of an existing variable whose count reaches its threshold.
        known = [(registry.index[name], start) for name, start in columns if name in registry.index and start <= t]
        if known:
            ks = np.array([k for k, _ in known], dtype=np.intp)
            need = np.maximum(registry.next_rebuild[ks] - registry.count[ks], 1.0)
            soon = need <= end - t + 1
            if soon.any():
                end = min(end, t + int(need[soon].min()) - 1)
        return end

    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. O(1). (The countdown against the variables' thresholds is a check of the
        whole model: ``_check_countdown``.)"""
        found = []
        if not self.growth > 0.0:
            found.append(f"growth: must be > 0, got {self.growth!r}")
        if not self.every >= 1:
            found.append(f"every: must be >= 1, got {self.every!r}")
        if self.pending < 0:
            found.append(f"pending: must be >= 0, got {self.pending!r}")
        if self.step_size < 0:
            found.append(f"step_size: must be >= 0, got {self.step_size!r}")
        if self.caught_up < 0:
            found.append(f"caught_up: must be >= 0, got {self.caught_up!r}")
        if self.served < -1:
            found.append(f"served: must be >= -1, got {self.served!r}")
        return found

    def _check(self) -> None:
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def _check_countdown(self, registry) -> None:
        """Nothing falls due while the countdown runs."""
        if len(registry):
            assert self.quiet <= max(0, math.ceil(np.min(registry.next_rebuild - registry.count)))

    def record_state(self) -> dict:
        """The state fields of the record: the countdown, the step counters and the last catch-up."""
        return {"quiet": self.quiet, "pending": self.pending, "step_size": self.step_size, "caught_up": self.caught_up,
                "served": self.served}  # fmt: skip

    @classmethod
    def from_record(cls, fields: Fields) -> Schedule:
        """The schedule a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        schedule = cls(fields.params["growth"], fields.params["every"])
        keys = ("quiet", "pending", "step_size", "caught_up", "served")
        schedule.quiet, schedule.pending, schedule.step_size, schedule.caught_up, schedule.served = (fields.state[k] for k in keys)
        return schedule


register(
    "Schedule",
    Schedule,
    Schema(
        params={
            "growth": Float(above=0.0, doc="rebuild_growth"),
            "every": Int(low=1, doc="rebuild_every"),
        },
        state={
            "quiet": Int(doc="rows during which no rebuild can fall due (≤ 0: check at the next row)"),
            "pending": Int(low=0, doc="rows since the learner's last step"),
            "step_size": Int(low=0, doc="rows of the learner's next step (0: not started)"),
            "caught_up": Int(low=0, doc="rows seen at the model's last catch-up (0: none; since version 12)"),
            "served": Int(low=-1, doc="rows seen at the model's last prediction (-1: none; since version 12)"),
        },
        doc="The rebuild countdown and the learner's step counters",
    ),
    state=Schedule.record_state,
    build=Schedule.from_record,
)
