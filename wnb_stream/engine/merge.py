"""Merging two models trained on disjoint parts of a stream: plain functions over the parts.

``merged(a, b)`` is the engine of a model that has learned both ``a``'s and ``b``'s examples;
``a`` and ``b`` are not changed. Each part merges on its own (``docs/algorithms/merge.md``):

- ``merge_classes``: labels in ``a``'s order, then ``b``'s new ones; weighted counts and examples
  per class add up (exact);
- ``merge_variables``: variables by feature name, ``a``'s then ``b``'s new ones; observations add
  up (exact); each summary absorbs the other's (``Summary.merge``: exact for counts and Gaussian
  moments, within each sketch's guarantee otherwise); kinds must agree (``check_kinds``);
- ``merge_histories``: the window of the most recent rows of both (``window_sizes``),
  interleaved by their relative position in their own window (``interleave``), remapped to the
  merged variables, raw columns and classes;
- what cannot be merged starts afresh on the merged parts (``Engine.restart``): level 2 of every
  variable is rebuilt, the weight learner restarts and steps on the merged window, the change
  detector restarts (two models' errors measure two different models).

Before merging, every numeric summary takes the rows of its history it has not seen yet
(``Registry.feed``), so the merged history's rows count as taken: no row is lost or counted
twice. A distributed adapter (Ray, Dask, Spark) only has to move models and call ``merged``.
"""

from __future__ import annotations

import copy

import numpy as np

from ..history import History
from .classes import Classes
from .core import Engine
from .registry import Registry

__all__ = ["check_kinds", "interleave", "merge_classes", "merge_histories", "merge_variables", "merged", "window_sizes"]


def check_kinds(registry: Registry, other: Registry) -> None:
    """``ValueError`` naming the first feature that is numeric in one registry and categorical in the other."""
    for variable in other.variables:
        k = registry.index.get(variable.name)
        if k is not None and registry.variables[k].kind != variable.kind:
            raise ValueError(
                f"cannot merge: feature {variable.name!r} is {registry.variables[k].kind} in this model "
                f"and {variable.kind} in the other"
            )


def merge_classes(classes: Classes, other: Classes) -> np.ndarray:
    """Add ``other``'s classes and counts to ``classes``; the column here of each of ``other``'s
    classes, ``(J_other,)``. Every class is then due for a rebuild (``next_rebuild`` = 0)."""
    columns = classes.index.merge(other.index)
    classes.grow()
    classes.counts[columns] += other.counts  # columns are distinct
    classes.seen[columns] += other.seen
    classes.next_rebuild = np.zeros(len(classes))
    return columns


def merge_variables(registry: Registry, other: Registry, stored: int) -> np.ndarray:
    """Add ``other``'s variables to ``registry``: the index here of each of ``other``'s, ``(K_other,)``.

    A feature both know keeps its index here and its summary absorbs the other's; a new one is
    appended with ``other``'s summary (taken over, not copied). Observations add up; every
    variable's next rebuild falls due at once. Call ``check_kinds`` first.
    """
    indices = np.empty(len(other), dtype=np.intp)
    for k, variable in enumerate(other.variables):
        mine = registry.index.get(variable.name)
        if mine is None:
            mine = registry.add(variable.name, variable.kind, variable.summary, stored)
        else:
            registry.variables[mine].summary.merge(variable.summary)
        indices[k] = mine
    registry.count[indices] += other.count
    registry.next_rebuild = np.ones(len(registry))
    return indices


def window_sizes(size: int, other_size: int, capacity: int) -> tuple[int, int]:
    """Rows taken from each history into a merged window of ``capacity`` rows.

    Each side gets half the window (the first side the larger half when ``capacity`` is odd); a
    side with fewer rows leaves the rest to the other. The window holds min(capacity, size +
    other_size) rows.

    >>> window_sizes(5000, 5000, 5000), window_sizes(800, 5000, 5000), window_sizes(30, 40, 100)
    ((2500, 2500), (800, 4200), (30, 40))
    """
    n = min(size, max(capacity - capacity // 2, capacity - other_size))
    return n, min(other_size, capacity - n)


def interleave(n: int, other_n: int) -> np.ndarray:
    """``(n + other_n,)`` the merged window's rows, oldest first, as positions in the
    concatenation of both sides' rows (each oldest first).

    Two models trained on parts of one stream share no clock, so each row is placed by its
    relative position in its own window, (i + ½) / n: two windows that cover the same span of
    the stream interleave evenly, and the most recent rows of both end the merged window. Ties
    go to the first side.

    >>> interleave(2, 4).tolist()
    [2, 0, 3, 4, 1, 5]
    """
    position = np.concatenate([(np.arange(n) + 0.5) / max(n, 1), (np.arange(other_n) + 0.5) / max(other_n, 1)])
    return np.argsort(position, kind="stable")


def merge_histories(history: History, other: History, registry: Registry, n_first: int, other_registry: Registry,
                    indices: np.ndarray, columns: np.ndarray, n_classes: int) -> History:  # fmt: skip
    """The merged window: a new ``History`` of ``history``'s capacity (see ``window_sizes`` and
    ``interleave``), sized for the merged ``registry`` and ``n_classes`` classes.

    ``registry`` is the merged one: ``history``'s variables are its ``n_first`` first ones, with
    their raw columns (``merge_variables`` appends). ``other``'s rows are remapped through ``indices`` (their
    variables here) and ``columns`` (their classes here). The clock ``stored`` is the sum of both.
    The encoding is left at 0 (the rebuild that follows writes it). Cost O(capacity · K).
    """
    capacity, K = history.capacity, len(registry)
    n, other_n = window_sizes(history.size, other.size, capacity)
    m = n + other_n
    numeric = np.full((m, registry.n_numeric), np.nan)  # (m, n_numeric)
    categorical = np.full((m, registry.n_categorical), None, dtype=object)  # (m, n_categorical)
    present = np.zeros((m, K), dtype=bool)  # (m, K)
    y = np.empty(m, dtype=np.intp)
    sample_weight = np.empty(m)
    first = np.arange(n_first)
    sides = (
        (history, history.recent(n), slice(0, n), first, registry, None),
        (other, other.recent(other_n), slice(n, m), indices, other_registry, columns),
    )
    for h, rows, block, here, source, classes in sides:
        kinds = np.array([source.variables[k].kind == "numeric" for k in range(len(here))], dtype=bool)
        for raw, out, mask in ((h.numeric, numeric, kinds), (h.categorical, categorical, ~kinds)):
            if mask.any():
                out[block, registry.column[here[mask]]] = raw[np.ix_(rows, source.column[: len(here)][mask])]
        present[block, here] = h.present[np.ix_(rows, np.arange(len(here)))]
        y[block] = h.y[rows] if classes is None else classes[h.y[rows]]
        sample_weight[block] = h.sample_weight[rows]
    order = interleave(n, other_n)
    merged = History(capacity)
    merged.resize(K, n_classes, registry.n_numeric, registry.n_categorical)
    merged.push_many((np.arange(registry.n_numeric), numeric[order]), (np.arange(registry.n_categorical), categorical[order]),
                     present[order], None, y[order], sample_weight[order])  # fmt: skip
    merged.stored = history.stored + other.stored
    return merged


def merged(a: Engine, b: Engine) -> Engine:
    """The engine of a model that has learned ``a``'s and ``b``'s examples; neither changes.

    ``a`` and ``b`` must have the same parameters (the classifier checks them, ``seed`` aside:
    the result keeps ``a``'s). ``ValueError`` naming the feature when one is numeric in one and
    categorical in the other. Cost: a copy of both models, one feed of every numeric summary,
    one merge per shared variable, a rebuild of every variable and one learner step.
    """
    check_kinds(a.registry, b.registry)
    a, b = copy.deepcopy(a), copy.deepcopy(b)  # a raise below leaves both models as they were
    for engine in (a, b):
        engine.registry.feed(np.arange(len(engine.registry)), engine.history, engine.classes)
    stored = a.history.stored + b.history.stored
    k_before = len(a.registry)
    columns = merge_classes(a.classes, b.classes)
    indices = merge_variables(a.registry, b.registry, stored)
    a.history = merge_histories(a.history, b.history, a.registry, k_before, b.registry, indices, columns, len(a.classes))
    registry = a.registry
    registry.synced = np.full(len(registry), stored, dtype=np.int64)  # every summary has taken every row
    registry.synced_min = stored if len(registry) else 0
    a.n_seen = stored
    if a.monitor is not None and b.monitor is not None:
        a.monitor.detected += b.monitor.detected
    a.restart(len(a.history), step=True)
    return a
