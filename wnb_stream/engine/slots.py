"""Level 3's variables: the slots of the variables whose level 2 says something about the class.

A variable whose level 2 is *flat* (one part, so ℓ_kj(x) = log p(x_k | C_j) = 0 for every value
and class: a MODL partition that found no information, or a variable not built yet) adds nothing
to any score, whatever its weight. Such a variable takes no part in level 3: it has no column in
the history's encoded window and no place in the weight learner, so a stream of many
uninformative variables costs the learners nothing for them
(``docs/algorithms/prediction.md#compact-window``).

A variable gets a slot when a rebuild first gives it a level 2 that is not flat; slots are
appended in that order (the learner's variable axis grows at its end, as it always does) and
kept until levels 2 and 3 restart (a change of concept, a merge), when they are handed out again
to the variables that are not flat then. A variable that becomes flat again keeps its slot: its
column is zeros, and the learners pin the weight of a variable at level 0.

Invariant: every variable whose level 2 is not flat (``Variable.flat``, ``Registry.informative``)
has a slot (``Engine._check``). Any larger
set is valid too (a model saved before slots existed gives every variable one).

A variable that gets a slot enters the learner as a new variable does (``Optimizer.resize``): at
the learner's initial weight, in the weights the model predicts with too, from that row on. (Up to
format version 6 a variable that the learner had stepped past while it had no slot entered pinned
at 0 until the next step, up to half the window later; the model then ignored, between two steps,
what plain naive Bayes already used.)
"""

from __future__ import annotations

import numpy as np

from ..io.registry import register
from ..io.schema import Array, Fields, Int, Schema
from .arrays import extended

__all__ = ["Slots"]


class Slots:
    """The variables in level 3, in the order of the learner's variable axis.

    >>> slots = Slots()
    >>> slots.enter(np.array([4, 1, 4]), n_variables=6)
    True
    >>> slots.variable.tolist(), slots.of.tolist()
    ([4, 1], [-1, 1, -1, -1, 0, -1])
    >>> slots.enter(np.array([1]), n_variables=6)
    False
    """

    __slots__ = ("variable", "of")

    def __init__(self, variable=(), n_variables: int = 0):
        self.variable = np.asarray(variable, dtype=np.intp).reshape(-1)  # (A,) variable of each slot
        self.of = np.full(0, -1, dtype=np.intp)  # (K,) slot of each variable, -1: none
        self.grow(max(int(n_variables), int(self.variable.max()) + 1 if len(self.variable) else 0))
        self.of[self.variable] = np.arange(len(self.variable))

    def __len__(self) -> int:
        return len(self.variable)

    def grow(self, n_variables: int) -> None:
        """Room for ``n_variables`` variables (new ones have no slot)."""
        extra = int(n_variables) - len(self.of)
        if extra > 0:  # (in the room its buffer keeps: a row of a wide sparse stream brings dozens)
            self.of = extended(self.of, int(n_variables), -1)

    def enter(self, ks: np.ndarray, n_variables: int) -> bool:
        """Give the variables ``ks`` that have none a slot each, in order; True when some did."""
        self.grow(n_variables)
        ks = np.asarray(ks, dtype=np.intp)
        new = ks[self.of[ks] < 0]
        if not len(new):
            return False
        new = new[np.sort(np.unique(new, return_index=True)[1])]  # first occurrences, in order
        self.of[new] = len(self.variable) + np.arange(len(new))
        self.variable = np.concatenate([self.variable, new])
        return True

    def remove(self, new_index: np.ndarray) -> None:
        """Renumber after evicted variables left (``new_index (K,)``: each variable's index after
        the removal, −1 for a dropped one, which must have no slot)."""
        self.grow(len(new_index))
        keep = new_index >= 0
        assert np.all(keep[self.variable]), "a variable with a slot is not evicted"
        self.variable = new_index[self.variable]
        self.of = self.of[: len(keep)][keep]

    def clear(self) -> None:
        """No variable has a slot (the learner restarts)."""
        self.variable = np.zeros(0, dtype=np.intp)
        self.of[:] = -1

    def scatter(self, values: np.ndarray, n_variables: int, outside: float) -> np.ndarray:
        """``(K, …)`` per variable from ``values (A, …)`` per slot; ``outside`` for the others."""
        out = np.full((int(n_variables), *values.shape[1:]), outside, dtype=float)
        out[self.variable] = values[: len(self.variable)]
        return out

    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self, n_variables: int | None = None) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. ``n_variables``: the model's K (default: the variables the slots have room
        for). O(K)."""
        n_variables = len(self.of) if n_variables is None else n_variables
        A = len(self.variable)
        if A and (len(np.unique(self.variable)) != A or self.variable.min() < 0 or self.variable.max() >= min(n_variables, len(self.of))):
            return [f"variable: must be distinct variable indices below n_variables = {n_variables}"]
        if A and len(self.of) < n_variables:
            return [f"n_variables: the slots have room for {len(self.of)} variables, the model has {n_variables}"]
        if not np.array_equal(self.of[self.variable], np.arange(A)) or np.count_nonzero(self.of >= 0) != A:
            return ["variable: the slot of each variable and the variable of each slot must agree"]
        return []

    def _check(self, n_variables: int | None = None) -> None:
        """Assert that ``problems(n_variables)`` is empty."""
        found = self.problems(n_variables)
        assert not found, "; ".join(found)

    def record_state(self) -> dict:
        """The state fields of the record: the variable of each slot, and the model's K."""
        return {"variable": self.variable.astype(np.int64), "n_variables": len(self.of)}

    @classmethod
    def from_record(cls, fields: Fields) -> Slots:
        """The slots a loaded, schema-checked record describes (its ``problems()`` not yet asked):
        room for ``n_variables`` variables, even when a slot names a variable beyond them."""
        variable, n_variables = fields.state["variable"], fields.state["n_variables"]
        slots = cls()
        slots.variable = np.asarray(variable, dtype=np.intp)
        slots.of = np.full(n_variables, -1, dtype=np.intp)
        inside = slots.variable < n_variables
        slots.of[slots.variable[inside]] = np.flatnonzero(inside)
        return slots


register(
    "Slots",
    Slots,
    Schema(
        params={},
        state={
            "variable": Array("int64", ("n_slots",), low=0, doc="the variable of each slot, in the learner's order"),
            "n_variables": Int(low=0, doc="the model's variables (version 7; before: the length of `passed`)"),
        },
        doc="The variables in level 3 (those whose level 2 is not flat), since version 4",
    ),
    state=Slots.record_state,
    build=Slots.from_record,
)
