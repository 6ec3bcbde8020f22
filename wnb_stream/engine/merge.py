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
import typing

import numpy as np

from .._gc import collector_paused
from .arrays import as_slice
from .classes import Classes
from .core import Engine
from .history import History
from .registry import Registry

__all__ = ["MAX_STORED", "Side", "absorbed", "check_clock", "check_kinds", "combined", "interleave", "merge_classes", "merge_histories", "merge_variables", "merged", "window_sizes"]


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
    classes, ``(J_other,)``. A new class is due for a rebuild (``Classes.grow``); when the others
    are is the caller's choice (``_combine``)."""
    columns = classes.index.merge(other.index)
    classes.grow()
    classes.add(columns, other.counts, other.seen)  # columns are distinct
    return columns


def merge_variables(registry: Registry, other: Registry, stored: int, take: bool = True) -> np.ndarray:
    """Add ``other``'s variables to ``registry``: the index here of each of ``other``'s, ``(K_other,)``.

    A feature both know keeps its index here and its summary absorbs the other's; a new one is
    appended with ``other``'s summary (``take``: taken over, not copied; else a copy, and
    ``other`` is only read when its summaries are settled). Observations add up; a new
    variable's first rebuild falls due at once (``Registry.add_many``); when the others' do is
    the caller's choice (``_combine``). Call ``check_kinds`` first.
    """
    indices = np.empty(len(other), dtype=np.intp)
    pairs: dict = {}  # summary type → [(this registry's summary, the other's)]: each merged once
    for k, variable in enumerate(other.variables):
        mine = registry.index.get(variable.name)
        if mine is None:
            summary = variable.summary if take else copy.deepcopy(variable.summary)
            mine = registry.add(variable.name, variable.kind, summary, stored)
        else:
            summary = registry.variables[mine].summary
            pairs.setdefault(type(summary), []).append((summary, variable.summary))
        indices[k] = mine
    for kind, group in pairs.items():  # (distinct summaries: the order of the merges changes nothing)
        kind.merge_many(group)
    registry.count_many(indices, other.count)
    return indices


def window_sizes(sizes, capacity: int) -> tuple[int, ...]:
    """Rows taken from each history into a merged window of ``capacity`` rows.

    The sides share the window equally (water-filling: a side with fewer rows than its share
    leaves the rest to the others; an odd row goes to the earlier sides). The window holds
    min(capacity, Σ sizes) rows.

    >>> window_sizes((5000, 5000), 5000), window_sizes((800, 5000), 5000), window_sizes((30, 40), 100)
    ((2500, 2500), (800, 4200), (30, 40))
    >>> window_sizes((7, 100, 100), 100)
    (7, 47, 46)
    """
    sizes = [int(size) for size in sizes]
    room = min(int(capacity), sum(sizes))
    low, high = 0, max(sizes, default=0)  # the largest level L with Σ min(size, L) ≤ room
    while low < high:
        level = (low + high + 1) // 2
        if sum(min(size, level) for size in sizes) <= room:
            low = level
        else:
            high = level - 1
    taken = [min(size, low) for size in sizes]
    left = room - sum(taken)
    for i, size in enumerate(sizes):  # one more row each, to the earlier sides that have it
        if left and size > low:
            taken[i] += 1
            left -= 1
    return tuple(taken)


def interleave(*sizes: int) -> np.ndarray:
    """``(Σ sizes,)`` the merged window's rows, oldest first, as positions in the concatenation
    of the sides' rows (each oldest first).

    Models trained on parts of one stream share no clock, so each row is placed by its relative
    position in its own window, (i + ½) / n: windows that cover the same span of the stream
    interleave evenly, and the most recent rows of all end the merged window. Ties go to the
    earlier side.

    >>> interleave(2, 4).tolist()
    [2, 0, 3, 4, 1, 5]
    """
    position = np.concatenate([(np.arange(n) + 0.5) / max(n, 1) for n in sizes] + [np.zeros(0)])
    return np.argsort(position, kind="stable")


class Side(typing.NamedTuple):
    """One history's part of a merged window: the indices of its ``rows`` there (oldest first:
    its newest, or the newest of one block of a merged delta's), its ``registry``, the index of
    each of its variables in the merged registry (``indices``) and the merged column of each of
    its classes (``columns``)."""

    history: History
    rows: np.ndarray
    registry: Registry
    indices: np.ndarray
    columns: np.ndarray


def merge_histories(sides: list[Side], order: np.ndarray, registry: Registry, n_classes: int, capacity: int, encoded: bool = True) -> History:
    """The merged window: a new ``History`` of ``capacity`` rows, sized for the merged ``registry``
    and ``n_classes`` classes, holding each side's ``rows`` in the given ``order`` (positions in
    the concatenation of the sides' rows, oldest first); ``encoded``: False for a delta's.

    Rows are remapped through each side's ``indices`` (variables) and ``columns`` (classes); the
    clock ``stored`` is the sum of the sides'. The encoding is left at 0 (the rebuild that
    follows writes it). The sides hold at most ``capacity`` rows together (the callers take
    each side's share, ``window_sizes``). Cost O(capacity · K).
    """
    K = len(registry)
    m = sum(len(side.rows) for side in sides)
    where = np.empty(m, dtype=np.intp)
    where[order] = np.arange(m)  # the merged row of each concatenated row: each side's rows go there at once
    sparse = sides[0].history.sparse  # (models merge with the same ``absent``: one layout)
    assert all(side.history.sparse == sparse for side in sides), "histories of both layouts"
    merged = type(sides[0].history)(capacity, encoded=encoded)
    merged.resize(K, n_classes, registry.n_numeric, registry.n_categorical)
    if sparse:  # the rows are gathered in merged order, then pushed as entries
        categorical = np.full((m, registry.n_categorical), None, dtype=object)  # (m, n_categorical), merged order
        y, sample_weight = np.empty(m, dtype=np.intp), np.empty(m)
        numeric = present = None
    else:  # each side's rows are written where the merged ring holds them (row r of the merged order at ring row r)
        merged.open_rows(m)
        numeric, categorical, present = merged.numeric, merged.categorical, merged.present
        y, sample_weight = merged.y, merged.sample_weight
    entries = []  # (sparse) per side: row in the concatenation, variable, column, value
    start = 0
    for h, rows, source, here, classes in sides:
        n = len(rows)
        dest = where[start : start + n]
        kinds = np.array([source.variables[k].kind == "numeric" for k in range(len(here))], dtype=bool)
        if (~kinds).any():
            _put(categorical, dest, registry.column[here[~kinds]], _take(h.categorical, rows, source.column[: len(here)][~kinds]))
        if sparse:
            r, variable, column, value = h.rows_entries(rows)
            variable = here[variable]
            entries.append((start + r, variable, np.where(column >= 0, registry.column[variable], -1), value))
        else:
            if kinds.any():
                _put(numeric, dest, registry.column[here[kinds]], _take(h.numeric, rows, source.column[: len(here)][kinds]))
            _put(present, dest, here, _take(h.present, rows, np.arange(len(here))))
        y[dest] = classes[h.y[rows]]
        sample_weight[dest] = h.sample_weight[rows]
        start += n
    if sparse:
        categorical = (np.arange(registry.n_categorical), categorical)
        r, variable, column, value = (np.concatenate(part) for part in zip(*entries))
        moved = np.argsort(where[r], kind="stable")  # row by row, each row's entries in their order
        merged._push_entries(where[r][moved], (variable[moved], column[moved], value[moved]), categorical, None, y, sample_weight)
    merged.resume_clock(sum(h.stored for h in {id(side.history): side.history for side in sides}.values()))
    return merged


def _take(array: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``array[np.ix_(rows, columns)]``, with a slice where an index is a run (a view or one copy,
    not a gather of every cell)."""
    r, c = as_slice(rows), as_slice(columns)
    if isinstance(r, slice) or isinstance(c, slice):
        return array[r][:, c] if isinstance(r, slice) else array[r, c]
    return array[np.ix_(rows, columns)]


def _put(array: np.ndarray, rows: np.ndarray, columns: np.ndarray, values: np.ndarray) -> None:
    """``array[np.ix_(rows, columns)] = values``, with a slice where an index is a run."""
    r, c = as_slice(rows), as_slice(columns)
    if isinstance(r, slice) or isinstance(c, slice):
        array[r, c] = values
    else:
        array[np.ix_(rows, columns)] = values


def _fold(base: Engine, others: list[Engine], owned: list[bool]) -> tuple[int, list]:
    """``base``'s classes and variables (changed) having absorbed ``others``' (copies where
    ``owned``; the others are settled, and only read); every summary first takes its history's rows,
    so none is lost or counted twice. The clock of both and, per engine, ``(history, registry,
    indices, columns)``: where its variables and classes are in ``base``'s."""
    for engine, copied in zip((base, *others), (True, *owned)):
        if copied:  # (a settled other has taken every row already, and may be read-only)
            engine.registry.feed(np.arange(len(engine.registry)), engine.history, engine.classes)
    stored = base.history.stored + sum(other.history.stored for other in others)
    registry = base.registry
    sides = [(base.history, base.registry, np.arange(len(registry)), np.arange(len(base.classes)))]
    for other, copied in zip(others, owned):
        columns = merge_classes(base.classes, other.classes)
        sides.append((other.history, other.registry, merge_variables(registry, other.registry, stored, take=copied), columns))
    return stored, sides


def _blocks(history: History, blocks) -> list[np.ndarray]:
    """The rows of each block of ``history`` (oldest first): one block, or those of a merged
    delta (``combined``: its deltas' rows one block after another, ``blocks`` their sizes)."""
    rows = history.recent(history.size)
    if blocks is None:
        return [rows]
    edges = np.cumsum((0, *blocks))
    return [rows[edges[b] : edges[b + 1]] for b in range(len(blocks))]


def _combine(base: Engine, others: list[Engine], owned: list[bool], newer: bool, blocks: list | None = None, step: bool = True) -> Engine:
    """``base`` (changed) having absorbed ``others`` (copies where ``owned``; the others are
    settled, and only read): classes, variables, the window of the most recent rows (``newer``: every row of
    ``others`` came after ``base``'s; ``blocks``: the blocks of each other, a merged delta's),
    the clocks; then levels 2 and 3 restart on the merged parts (the learner steps at once
    unless not ``step``: then it owes that step, ``Engine.step_if_due``)."""
    stored, sides = _fold(base, others, owned)
    registry = base.registry
    if not newer:  # two models share no schedule: every variable is rebuilt (a round: what is due, as one model would)
        registry.rebuild_all_soon()
        base.classes.rebuild_all_soon()
    blocks = [None] * len(others) if blocks is None else blocks
    # each block is a side of the window: a merged delta's deltas share it as they would unmerged
    parts = [(side, rows) for side, given in zip(sides, [None, *blocks]) for rows in _blocks(side[0], given)]
    capacity = base.history.capacity
    sizes = [len(rows) for _, rows in parts]
    if newer:  # the newest rows of the others first, then what room is left to base's
        taken = window_sizes(sizes[1:], capacity)
        taken = (min(sizes[0], capacity - sum(taken)), *taken)
        order = np.concatenate([np.arange(taken[0]), taken[0] + interleave(*taken[1:])]).astype(np.intp)
    else:
        taken = window_sizes(sizes, capacity)
        order = interleave(*taken)
    window = [Side(h, rows[len(rows) - n :], source, here, columns) for ((h, source, here, columns), rows), n in zip(parts, taken)]
    history = merge_histories(window, order, registry, len(base.classes), capacity)  # (its clock: ``stored``)
    registry.all_synced(stored)  # every summary has taken every row
    if base.monitor is not None:
        base.monitor.count_detected(sum(other.monitor.detected for other in others if other.monitor is not None))
    engine = Engine.from_parts(base.params, base.classes, registry, history, base.schedule, base.optimizer, base.slots, base.monitor)
    if newer:  # a round: the learner keeps its run and steps on the deltas' rows, as on rows learned
        engine.restart(max(1, sum(taken[1:])), step=step, warm=True, defer_encoding=not step)
    else:
        engine.restart(len(history), step=True)
    return engine


def combined(deltas: list[Engine], blocks: list | None = None, in_place: bool = False) -> tuple[Engine, tuple[int, ...]]:
    """One delta (an ``Engine(collect=True)``) holding the examples of ``deltas``, and the sizes
    of its blocks of rows (the first delta is copied, unless ``in_place``: then its parts are the
    result's, changed; the others are copied unless they are settled, ``Delta.flush``: then they
    are only read): absorbing it is absorbing ``deltas`` in this order (``absorbed``), but for
    the summaries, which merge in another grouping.

    Classes and variables come in the order ``absorbed`` would add them (first appearance, left
    to right: the same order whatever the grouping); counts, examples per class and observations
    add up (exact); each summary merges the others' (``Summary.merge``: exact for categorical
    counts, Gaussian moments up to float rounding, within each sketch's bound otherwise; the
    grouping differs from one by one, so a sketch's tuples may differ). The rows are kept whole,
    each delta's (each block of a merged one's) as a block of its own, so that ``absorbed``
    shares the window among the original deltas and interleaves them exactly as it would
    unmerged. ``blocks``: the blocks of each of ``deltas`` (None: one). ``ValueError`` naming a
    feature whose kinds differ; nothing changes then (every check comes before the first change,
    ``in_place`` or not). Cost: a copy of the first (none ``in_place``), one merge per delta
    variable, O(rows × K) for the rows; no level-2 or level-3 work.
    """
    _check_deltas(deltas[0], deltas)
    with collector_paused():  # (copies and merged summaries, no cycles to free: _copies)
        (first, *others), owned = _copies(deltas, read_others=True, take_first=in_place)
        stored, sides = _fold(first, others, owned[1:])
        blocks = [None] * len(deltas) if blocks is None else blocks
        window, sizes = [], []
        for side, given in zip(sides, blocks):
            for rows in _blocks(side[0], given):
                window.append(Side(side[0], rows, *side[1:]))
                sizes.append(len(rows))
        m = sum(sizes)
        history = merge_histories(window, np.arange(m), first.registry, len(first.classes), max(m, 1), encoded=False)
        first.registry.all_synced(stored)
        engine = Engine.from_parts(first.params, first.classes, first.registry, history, first.schedule, first.optimizer, first.slots, first.monitor, collect=True)
        return engine, tuple(sizes)


def merged(a: Engine, b: Engine) -> Engine:
    """The engine of a model that has learned ``a``'s and ``b``'s examples; neither changes.

    ``a`` and ``b`` must have the same parameters (the classifier checks them, ``seed`` aside:
    the result keeps ``a``'s). ``ValueError`` naming the feature when one is numeric in one and
    categorical in the other. Two models share no clock: their windows interleave by relative
    position (``interleave``). Cost: a copy of both models, one feed of every numeric summary,
    one merge per shared variable, a rebuild of every variable and one learner step.
    """
    check_kinds(a.registry, b.registry)
    check_clock([a, b])
    with collector_paused():  # (copies and merged summaries, no cycles to free: _copies)
        (a, b), owned = _copies([a, b])  # a raise below leaves both models as they were
        return _combine(a, [b], owned[1:], newer=False)


def absorbed(base: Engine, deltas: list[Engine], blocks: list | None = None, step: bool = True) -> Engine:
    """The engine of ``base`` having learned the examples of ``deltas`` (``Engine(collect=True)``,
    each a partition's rows since ``base`` was published); none of them changes.

    One coordinator round (``docs/algorithms/merge.md#rounds``): counts and summaries add up as
    in ``merged``; every delta row came after every row of ``base``, so the merged window holds
    the deltas' newest rows (sharing the window equally, interleaved by relative position) and
    fills the rest with ``base``'s newest; then level 2 is rebuilt for the variables the schedule
    finds due (as one model that had counted the same rows would: a new class or variable, or
    observations grown by ``rebuild_growth`` since the last rebuild) and the learner steps on the
    deltas' rows (not ``step``: the step is left due, for ``Engine.step_if_due``; until then the
    learner predicts with the weights it carried, on the rebuilt level 2). ``ValueError`` naming
    a feature whose kinds differ.
    ``blocks``: the sizes of the blocks of rows of each delta (None: one block; a merged delta's:
    ``combined``), each a side of the window. A settled delta (``Delta.flush``, which a learner
    does before it hands its delta over) is only read, not copied. Cost: a copy of ``base`` (and
    of each unsettled delta), one merge per delta variable, the rebuilds due, one learner step.
    """
    _check_deltas(base, deltas)
    with collector_paused():  # (copies and merged summaries, no cycles to free: _copies)
        (base, *deltas), owned = _copies([base, *deltas], read_others=True)
        return _combine(base, deltas, owned[1:], newer=True, blocks=blocks, step=step)


def _copies(engines: list[Engine], read_others: bool = False, take_first: bool = False) -> tuple[list[Engine], list[bool]]:
    """Deep copies of ``engines`` that share their histories, and for each whether it is a copy.
    A merge only reads the histories of its sides (the merged window is a new ``History``), so
    the copies are what the merge may change (classes, variables, levels 2 and 3), not the
    O(window × K) rows. A history met again (a model merged into itself, a delta given twice) is
    copied, so that each side keeps a history of its own, as the merge's clock counts them
    (``merge_histories``).

    With ``read_others``, the engines after the first that are settled (``Registry.settled``: a
    learner's delta, ``Delta.flush``) are not copied: a merge only reads them (``Summary.merge``
    reads a settled other; a new variable's summary is copied when it is taken,
    ``merge_variables``), and they may be read-only (a delta from Ray's object store). A round
    then copies one side instead of every delta: at K = 1,000, about 40 ms per delta. The
    others are copied, as the first is (unless ``take_first``: the caller gives it up to be
    changed, ``Delta.merge(in_place=True)``). The callers pause the cyclic garbage collector
    (``collector_paused``): the copies are tens of thousands of objects at K = 1,000, none of them
    garbage, and the collections they set off walked the whole heap for about 0.1 s of a round."""
    shared: set = set()
    copies, owned = [], []
    for i, engine in enumerate(engines):
        h = engine.history
        if take_first and not i:
            copies.append(engine)
            owned.append(True)
        elif read_others and i and id(h) not in shared and engine.registry.settled(h):
            copies.append(engine)
            owned.append(False)
        else:
            copies.append(copy.deepcopy(engine, {} if id(h) in shared else {id(h): h}))
            owned.append(True)
        shared.add(id(h))
    return copies, owned


def _check_deltas(base: Engine, deltas: list[Engine]) -> None:
    """``ValueError`` unless ``deltas`` are deltas of ``base``'s layout whose features agree in
    kind with ``base``'s and with the deltas' before them, and the clocks fit."""
    for delta in deltas:
        if not delta.collect:
            raise ValueError("absorbed takes the deltas of a round (engines that collect level 1 only)")
    for delta in deltas:
        if delta.params.absent != base.params.absent:  # (the sparse and the dense window do not merge)
            raise ValueError(f"cannot absorb a delta of a model with another absent: {delta.params.absent!r} != {base.params.absent!r}")
    check_clock([base, *(delta for delta in deltas if delta is not base)])
    known = base.registry
    others = [delta for delta in deltas if delta is not base]
    for i, delta in enumerate(others):  # kinds checked against base and the deltas before it, before anything changes
        check_kinds(known, delta.registry)
        if i + 1 < len(others):  # (the last one's features are checked against nothing more)
            known = _kinds_union(known, delta.registry)


#: Largest count of rows a model's clock (``History.stored``) holds: its arrays are int64.
MAX_STORED = 2**63 - 1


def check_clock(engines: list) -> None:
    """``ValueError`` when the merged model's clock (the rows every side has stored) would pass
    ``MAX_STORED``; nothing changes."""
    total = sum(engine.history.stored for engine in engines)
    if total > MAX_STORED:
        raise ValueError(f"cannot merge: history.stored would be {total}, beyond 2**63 - 1 rows (the int64 clock)")


def _kinds_union(registry: Registry, other: Registry) -> Registry:
    """A registry-like view of every feature of both, with its kind (for ``check_kinds`` only)."""
    features = {}
    for source in (registry, other):
        for variable in source.variables:
            features.setdefault(variable.name, (variable.name, variable.kind, variable.summary))
    union = Registry()
    union.add_many(list(features.values()), 0)
    return union
