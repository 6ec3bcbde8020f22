"""The batch verbs of ``GKClass`` over many summaries at once (a rebuild's: ``Registry.feed``,
``Variable.rebuild_many``), and a batch's way through the buffer (``update_many``): the bodies
of ``GKClass.take_many``, ``GKClass.stack_tables``, ``GKClass.aligned_table`` and
``GKClass._push`` (whose docstrings state what they do). They read and write the summaries' tuple arrays as
``GKClass``'s own methods do: this module is part of the summary, as ``_gk_kernels`` is."""

from __future__ import annotations

import copy
import functools

import numpy as np

from .._threads import run_spans
from ..tables import _align_columns, _same_order
from . import _gk_kernels

#: Tuples and values (both sides together) from which a merge or a feed of many summaries runs
#: its compiled merges or absorbs in threads, groups of consecutive summaries apart
#: (``_threads.run_all``: the kernels release the GIL; each summary's floats are those of its own
#: merge or absorb either way). A round's merge at K = 1,000 holds about 250,000; a rebuild's feed
#: at K = 500 after a few thousand rows, hundreds of thousands; a merge of two small models or an
#: early rebuild's feed, a few thousand.
PARALLEL_TUPLES = 50_000


def take_many(summaries: list, values, codes, labels: tuple, weights, starts: list, ends: list) -> None:
    """``GKClass.take_many``."""
    names, typed = labels
    J = len(names)
    finite = np.isfinite(values)
    keep = finite & (weights > 0.0)
    kept = np.zeros(len(values) + 1, dtype=np.intp)
    np.cumsum(keep, out=kept[1:])
    gaps = np.zeros(len(values) + 1, dtype=np.intp)
    np.cumsum(~finite, out=gaps[1:])
    starts_a, ends_a = np.asarray(starts, dtype=np.intp), np.asarray(ends, dtype=np.intp)
    k_starts, k_ends = kept[starts_a].tolist(), kept[ends_a].tolist()
    n_missing = (gaps[ends_a] - gaps[starts_a]).tolist()
    orders: dict = {}  # a summary's class order → (its id, its column of each of the labels)
    groups: dict = {}  # width of the counts → ([summary], [order id], [first kept entry], [last])
    for t, summary in enumerate(summaries):
        a, b, ka, kb = starts[t], ends[t], k_starts[t], k_ends[t]
        # (a budget, a block beyond the buffer, or a buffer: rare after a rebuild, which settles)
        if summary._epsilon is None or summary._buffer_values or kb - ka >= summary._buffer_limit:
            summary.update_coded(values[a:b], codes[a:b], typed, weights[a:b])
            summary.settle()
            continue
        classes = summary._classes
        if len(classes.labels) < J:  # new classes, registered in order of first appearance (``update_many``)
            position = classes.position
            for c in codes[a:b].tolist():
                if names[c] not in position:
                    classes.encode(names[c])
        width = len(classes.labels)
        if summary._counts.shape[1] < width or len(summary._missing) < width:
            summary._grow()
        key = tuple(classes.labels)
        order = orders.get(key)
        if order is None:  # (the labels this summary has not seen are in none of its entries)
            order = orders[key] = (len(orders), [classes.position.get(label, 0) for label in names])
        if n_missing[t]:  # (``np.add.at`` accumulates in order, as ``_update_columns``)
            gone = ~finite[a:b]
            np.add.at(summary._missing, np.array(order[1], dtype=np.intp)[codes[a:b][gone]], weights[a:b][gone])
        if kb > ka:
            group = groups.get(width)
            if group is None:
                group = groups[width] = ([], [], [], [])
            group[0].append(summary)
            group[1].append(order[0])
            group[2].append(ka)
            group[3].append(kb)
    if not groups:
        return
    table = np.array([columns for _, columns in orders.values()], dtype=np.int64)  # order id → columns
    x_kept, w_kept, c_kept = values[keep], weights[keep], codes[keep]
    for group, ids, firsts, lasts in groups.values():
        firsts, lasts = np.array(firsts, dtype=np.intp), np.array(lasts, dtype=np.intp)
        lengths = lasts - firsts
        taken = np.zeros(len(group) + 1, dtype=np.int64)
        np.cumsum(lengths, out=taken[1:])
        entries = np.arange(taken[-1]) + np.repeat(firsts - taken[:-1], lengths)  # the groups' kept entries
        _absorb_group(group, x_kept[entries], table[np.repeat(np.array(ids, dtype=np.intp), lengths), c_kept[entries]], w_kept[entries], taken)


def stack_tables(summaries: list, classes: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``GKClass.stack_tables``."""
    T, J = len(summaries), len(classes)
    values, sizes = [], []
    orders: dict = {}  # class order of the summaries → their positions
    for t, summary in enumerate(summaries):  # (one pass)
        summary.settle()
        labels = summary._classes.labels
        values.append(summary._values)
        sizes.append(len(summary._values))
        order = orders.get(tuple(labels))
        if order is None:
            orders[tuple(labels)] = [t]
        else:
            order.append(t)
    lengths = np.array(sizes, dtype=np.intp)
    starts = np.zeros(T + 1, dtype=np.intp)
    np.cumsum(lengths, out=starts[1:])
    bounds = np.concatenate(values + [np.zeros(0)]).astype(float, copy=False)
    counts, missing = np.empty((int(starts[-1]), J)), np.empty((T, J))
    for source, members in orders.items():
        ts = np.array(members, dtype=np.intp)
        sizes = lengths[ts]
        ends = np.cumsum(sizes)
        rows = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(starts[ts] - (ends - sizes), sizes)
        block = np.concatenate([summaries[t]._counts.reshape(len(summaries[t]._values), len(source)) for t in members])
        counts[rows] = _align_columns(block, source, classes)
        missing[ts] = _align_columns(np.stack([summaries[t]._missing for t in members]), source, classes)
    return bounds, counts, missing, lengths


def aligned_arrays(summary, classes: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arrays of ``GKClass.aligned_table``: fresh ``(upper_bounds, counts, missing)``."""
    summary._flush()
    summary._grow()
    values = np.array(summary._values, dtype=float)
    source = summary.classes
    if _same_order(source, classes):
        counts = np.array(summary._counts, dtype=float).reshape(len(values), len(classes))
        return values, counts, np.array(summary._missing, dtype=float).reshape(len(classes))
    return values, _align_columns(summary._counts, source, classes), _align_columns(summary._missing, source, classes)


def push(summary, x: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
    """``GKClass._push``."""
    limit = summary._buffer_limit
    start = 0
    pending = len(summary._buffer_values)
    if pending and pending + len(x) >= limit:
        room = limit - pending
        summary._buffer_values.frombytes(x[:room].tobytes())
        summary._buffer_classes.frombytes(codes[:room].tobytes())
        summary._buffer_weights.frombytes(w[:room].tobytes())
        summary._flush()
        start = room
    while len(x) - start >= limit:
        stop = start + limit
        summary._absorb(x[start:stop], codes[start:stop], w[start:stop])
        start = stop
    if start < len(x):
        summary._buffer_values.frombytes(x[start:].tobytes())
        summary._buffer_classes.frombytes(codes[start:].tobytes())
        summary._buffer_weights.frombytes(w[start:].tobytes())


def flush_many(summaries: list) -> None:
    """``summary._flush()`` for each of ``summaries`` (distinct), bit for bit: the buffers of the
    guarantee-mode summaries go through one ``_gk_kernels.absorb_many`` call per class width
    (each summary's floats are those of ``absorb`` on it alone), the others flush one by one."""
    groups: dict = {}  # width of the counts → ([summary], [its buffer as (x, codes, w)])
    for summary in summaries:
        if not len(summary._buffer_values):
            continue
        if summary._epsilon is None:  # (a budget: its own flush, with its compress)
            summary._flush()
            continue
        summary._grow()
        group = groups.setdefault(summary._counts.shape[1], ([], []))
        group[0].append(summary)
        group[1].append(summary._take_buffer())
    for group, buffers in groups.values():
        taken = np.zeros(len(group) + 1, dtype=np.int64)
        np.cumsum([len(x) for x, _, _ in buffers], out=taken[1:])
        _absorb_group(group, *(np.concatenate([buffer[f] for buffer in buffers]) for f in range(3)), taken)


def _absorb_group(group: list, x: np.ndarray, codes: np.ndarray, w: np.ndarray, taken: np.ndarray) -> None:
    """Summary ``t`` of ``group`` (guarantee mode, one class width) absorbs the block
    ``taken[t]:taken[t + 1]`` of ``x, codes, w``: one ``_gk_kernels.absorb_many`` call (one per
    group of consecutive summaries, in threads, from ``PARALLEL_TUPLES``), each summary's floats
    those of ``absorb`` on it alone (``take_many``, ``flush_many``)."""
    held = np.zeros(len(group) + 1, dtype=np.int64)
    np.cumsum([len(summary._values) for summary in group], out=held[1:])
    weights, epsilons = np.array([summary._weight for summary in group]), np.array([summary._epsilon for summary in group])
    absorb_span = functools.partial(_absorb_span, _stacked_tuples(group), held, x, codes, w, taken, weights, epsilons)
    for (lo, hi), (v, g, delta, at_value, counts, bounds, weight) in run_spans(absorb_span, len(group), int(held[-1] + taken[-1]) >= PARALLEL_TUPLES):
        _unstack(group[lo:hi], (v, g, delta, at_value, counts), bounds)
        for summary, weight_t in zip(group[lo:hi], weight.tolist()):
            summary._weight = weight_t


def _absorb_span(tuples: tuple, held, x, codes, w, taken, weights, epsilons, lo: int, hi: int) -> tuple:
    """``_gk_kernels.absorb_many`` on the summaries ``lo:hi`` of a group (their stacked
    ``tuples``, bounds ``held``, and blocks ``taken`` of ``x, codes, w``): they are consecutive."""
    (a0, a1), (b0, b1) = (held[lo], held[hi]), (taken[lo], taken[hi])
    return _gk_kernels.absorb_many(*(array[a0:a1] for array in tuples), held[lo : hi + 1] - a0, x[b0:b1], codes[b0:b1],
                                   w[b0:b1], taken[lo : hi + 1] - b0, weights[lo:hi], epsilons[lo:hi])  # fmt: skip


def merge_many(pairs: list) -> None:
    """``GKClass.merge_many``."""
    pairs = [(summary, copy.deepcopy(other) if other is summary else other) for summary, other in pairs]
    if all(type(other) is type(summary) for summary, other in pairs):  # (else each pair as ``merge`` would, up to its refusal)
        batched = {id(s): s for pair in pairs if pair[0]._epsilon is not None for s in pair}
        flush_many(list(batched.values()))  # every buffer at once: ``_take_in``'s flushes then find none
    # Pairs merge in groups of one class width. The pairs whose summary knows every class of
    # the other (``_known_columns``) are grouped by where those classes are, and their counts
    # placed on the summaries' class axis once per group; ``_take_in`` places the others' itself.
    columns_of: dict = {}  # (the summary's class labels, the other's) → ``_known_columns``
    groups: dict = {}  # (width, columns or None) → ([summary], [its incoming tuples], [threshold])
    for summary, other in pairs:
        if summary._epsilon is None or type(other) is not type(summary):  # (a budget; or a refusal: ``merge``'s)
            summary.merge(other)
            continue
        columns = _known_columns(summary, other, columns_of)
        if columns is None:
            taken = summary._take_in(other)
            key = (taken[4].shape[1], None)
        else:  # (the counts stay on the other's class axis: the group places them)
            taken = summary._take_in(other, columns[0])
            key = (summary._counts.shape[1], columns[1])
        group = groups.get(key)
        if group is None:
            group = groups[key] = ([], [], [])
        group[0].append(summary)
        group[1].append(taken)
        group[2].append(2.0 * summary._epsilon * summary._weight)
    for (width, columns), (group, incoming, thresholds) in groups.items():
        a_held = np.zeros(len(group) + 1, dtype=np.int64)
        np.cumsum([len(summary._values) for summary in group], out=a_held[1:])
        b_held = np.zeros(len(group) + 1, dtype=np.int64)
        np.cumsum([len(item[0]) for item in incoming], out=b_held[1:])
        if columns is None:
            cb = _stacked([item[4] for item in incoming], width)
        else:  # (the counts ``_take_in`` would place pair by pair: zeros, then the other's columns)
            cb = np.zeros((int(b_held[-1]), width))
            cb[:, np.array(columns, dtype=np.intp)] = _stacked([item[4] for item in incoming], len(columns))
        a = _stacked_tuples(group, width)
        b = (*(_stacked([item[f] for item in incoming]) for f in range(4)), cb)
        thresholds = np.array(thresholds, dtype=np.float64)

        merge_span = functools.partial(_merge_span, a, a_held, b, b_held, thresholds)
        for (lo, hi), (v, g, delta, at_value, counts, bounds) in run_spans(merge_span, len(group), int(a_held[-1] + b_held[-1]) >= PARALLEL_TUPLES):
            _unstack(group[lo:hi], (v, g, delta, at_value, counts), bounds)


def _merge_span(a: tuple, a_held, b: tuple, b_held, thresholds, lo: int, hi: int) -> tuple:
    """``_gk_kernels.merge_many`` on the pairs ``lo:hi`` of a group (stacked sides ``a`` and
    ``b``, their bounds ``a_held`` and ``b_held``): their tuples are consecutive."""
    (a0, a1), (b0, b1) = (a_held[lo], a_held[hi]), (b_held[lo], b_held[hi])
    return _gk_kernels.merge_many(*(x[a0:a1] for x in a), a_held[lo : hi + 1] - a0,
                                  *(x[b0:b1] for x in b), b_held[lo : hi + 1] - b0, thresholds[lo:hi])  # fmt: skip


def _known_columns(summary, other, known: dict) -> tuple | None:
    """Where ``other``'s classes are on ``summary``'s class axis, ``(columns (J_other,) intp,
    the same as a tuple)``, when ``summary`` has registered every one of them (None when one is
    new to it: ``_take_in`` registers it). ``known`` caches the answer by the two label lists
    (a round's summaries share a few)."""
    key = (tuple(summary._classes.labels), tuple(other._classes.labels))
    columns = known.get(key, False)
    if columns is False:
        position = summary._classes.position
        if all(label in position for label in key[1]):
            places = [position[label] for label in key[1]]
            columns = (np.array(places, dtype=np.intp), tuple(places))
        else:
            columns = None
        known[key] = columns
    return columns


def _unstack(group: list, tuples: tuple, bounds: np.ndarray) -> None:
    """Give summary ``t`` of ``group`` its rows ``bounds[t]:bounds[t + 1]`` of the stacked tuple
    arrays ``(v, g, Δ, e, c)`` a kernel returned, as arrays of its own."""
    bounds = bounds.tolist()
    v, g, delta, at_value, counts = tuples
    for t, summary in enumerate(group):
        a, b = bounds[t], bounds[t + 1]
        summary._values, summary._g, summary._delta = v[a:b].copy(), g[a:b].copy(), delta[a:b].copy()
        summary._at_value, summary._counts = at_value[a:b].copy(), counts[a:b].copy()


def _stacked_tuples(group: list, width: int | None = None) -> tuple:
    """The tuple arrays ``(v, g, Δ, e, c)`` of ``group``'s summaries, each stacked (``_stacked``;
    ``width``: that of the class counts, for an empty group)."""
    return (_stacked([summary._values for summary in group]), _stacked([summary._g for summary in group]),
            _stacked([summary._delta for summary in group]), _stacked([summary._at_value for summary in group]),
            _stacked([summary._counts for summary in group], width))  # fmt: skip


def _stacked(arrays: list, width: int | None = None) -> np.ndarray:
    """``arrays`` one after the other as one float64 array (``(R, width)`` for class counts)."""
    if not arrays:
        return np.zeros((0, width) if width is not None else 0)
    return np.ascontiguousarray(np.concatenate(arrays), dtype=np.float64)
