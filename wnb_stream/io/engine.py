"""The checks across the parts of one saved model (``WeightedNaiveBayes``'s record runs them).

Each part of the engine owns its record and its invariants (``problems()``), in its own module:
``Variable`` and ``Scorer`` (``engine/variable.py``), ``Classes``, ``Registry``, ``SparseHistory``
(the record type ``History``), ``Schedule``, ``Slots`` and ``Monitor`` (``engine/drift.py``).
What no part can check alone is here: that the loaded parts fit together (``check_parts``): the
slots against the variables, the window's columns, classes and clock against the registry and
the classes, the learner's size, the rebuild countdown, each variable's classes and weights.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.slots import Slots
from .schema import Fields

__all__: list[str] = []

# ------------------------------------------------------------------------------------------------
# Across the parts of one model (``WeightedNaiveBayes``'s record calls this before it builds)


def check_parts(fields: Fields, classes, registry, history, schedule, learner, slots: Slots, faded: bool = False) -> None:
    """The invariants that tie a model's loaded parts together (``fields.fail`` on the first broken).

    ``faded``: the model fades its past (``half_life``), so its class counts shrink while a
    partition keeps the weight of its last rebuild, which may then exceed them."""
    K, J = len(registry), len(classes)
    if len(slots.of) != K:
        fields.fail("slots.n_variables", f"must be the model's number of variables ({K})")
    missing = np.setdiff1d(registry.informative(), slots.variable).tolist()
    if missing:
        fields.fail("slots", f"variable {missing[0]} ({registry.variables[missing[0]].name!r}) has a level 2 that is not flat and no slot")
    if history.n_variables != K or history.n_numeric != registry.n_numeric or history.n_categorical != registry.n_categorical:
        fields.fail("history", f"its columns do not match the {K} variables")
    if history.size and int(history.y[: history.size].max()) >= J:
        fields.fail("history.y", f"values must be < n_classes = {J}")
    if history.stored and len(classes) == 0:
        fields.fail("classes", "a model that stored rows has classes")
    if np.any(registry.synced > history.stored) or np.any(registry.synced < history.stored - history.size):
        fields.fail("registry.synced", f"must lie in [stored − size, stored] = [{history.stored - history.size}, {history.stored}]")
    if not history.size <= float(classes.seen.sum()) <= history.stored:
        fields.fail(
            "classes.seen",
            f"must add up to between the rows held and the rows stored, [{history.size}, {history.stored}]"
            " (every example learned is stored once; a change forgets the older ones)",
        )
    # The engine sizes its learner for (slots, J) at every row learned: a loaded model starts so.
    size = _learner_size(learner)
    if size is not None and size != (len(slots), J):
        fields.fail("learner", f"is sized for {size[0]} variables and {size[1]} classes, the model has {len(slots)} slots and {J} classes")
    if K and not schedule.quiet <= max(0, math.ceil(np.min(registry.next_rebuild - registry.count))):
        fields.fail("schedule.quiet", "a rebuild would fall due during the countdown")
    labels = list(classes.labels)
    known = set(labels)
    for k, variable in enumerate(registry.variables):
        where = f"registry.variables[{k}]"
        if not known.issuperset(variable.summary.classes):
            fields.fail(f"{where}.summary.classes", "holds a class the model has not seen")
        for part, name in ((variable.model, "partition"), (variable._density, "density")):
            # level 2 is built with the class axis in the model's order (the classes of its time)
            if part is not None and list(part.classes) != labels[: len(part.classes)]:
                fields.fail(f"{where}.{name}.classes", "must be the model's classes (or the first of them), in its order")
        if variable.model is not None and not faded:
            # a partition holds the weight of the summary at its rebuild: never more than the class had
            weight = np.asarray(variable.model.counts).sum(axis=0)
            if np.any(weight > classes.counts[: len(weight)] * (1.0 + 1e-6) + 1e-9):
                fields.fail(f"{where}.partition.counts", "hold more weight of a class than the model has learned")
    _check_presence(fields, registry, history)


def _learner_size(learner) -> tuple[int, int] | None:
    """(K, J) a learner is sized for, or None when it keeps no size."""
    if hasattr(learner, "_n_variables"):
        return (learner._n_variables, learner._n_classes)
    if getattr(learner, "_ready", False):
        return tuple(learner._w.shape)
    return (0, 0)


def _check_presence(fields: Fields, registry, history) -> None:
    """A history entry's column is its variable's (−1 for a categorical one), and a categorical
    value stands only in a row that holds its feature (``History.push`` clears the row)."""
    rows = history.filled()
    r, variable, column, _ = history.rows_entries(rows)
    numeric = np.array([v.kind == "numeric" for v in registry.variables], dtype=bool)
    expected = np.where(numeric[variable], registry.column[variable], -1)
    if np.any(column != expected):
        i = int(np.flatnonzero(column != expected)[0])
        k = int(variable[i])
        fields.fail("history.column", f"an entry of feature {registry.variables[k].name!r} (variable {k}) is not in its column {int(expected[i])}")
    categorical = ~numeric[variable]
    held = np.zeros((history.size, registry.n_categorical), dtype=bool)  # (rows, categorical columns)
    held[r[categorical], registry.column[variable[categorical]]] = True
    stray = np.array([value is not None for value in history.categorical[rows, : registry.n_categorical][~held].tolist()], dtype=bool)
    if stray.any():
        c = int(np.nonzero(~held)[1][np.flatnonzero(stray)[0]])
        k = int(np.flatnonzero(~numeric & (registry.column == c))[0])
        fields.fail("history.categorical", f"a row lacks feature {registry.variables[k].name!r} (variable {k}) but holds a value of it")
