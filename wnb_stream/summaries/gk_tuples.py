"""Pure functions on the tuple arrays of a Greenwald–Khanna summary (``GKClass``, ``gk.py``):
merging two tuple lists, inserting a sorted exact batch, and the two compresses.

A tuple list is ``(v, g, Δ, e, c)`` (``gk.py``'s design note: values, weight charged, rank
uncertainty, weight at the value, class counts), ``h_i = g_i + Δ_i − e_i``.

Design note
-----------
Inserting. A new value ``x`` whose successor (first tuple above it) is ``u`` gets
``Δ = h_u = g_u + Δ_u − e_u``, and ``Δ = 0`` when it is a new minimum or maximum: the weight
of older values ``≤ x`` charged right of ``x`` is at most the weight ``< v_u`` charged to
``u`` onwards, ``≤ h_u``. For unit weights ``e_u = 1`` and this is MOA's tight rule
``g_u + Δ_u − 1`` (Greenwald & Khanna 2001 use ``⌊2εn⌋``).

Merging (tight form; ``docs/algorithms/summaries.md#merge``). For a tuple of one summary, the
other summary's observations ``≤ v`` charged to its tuples after ``v`` weigh at most ``h`` of its
first tuple above ``v`` (0 if none), so ``Δ += h_successor``; equal values are collapsed with
``Δ = min(Δ_a, h_a,next) + min(Δ_b, h_b,next)``. Then
``h ≤ 2ε_a n_a + 2ε_b n_b ≤ 2 max(ε_a, ε_b) n``.

Compressing. Guarantee mode runs the simple variant (no bands): right to left, merge tuple ``i``
into ``i + 1`` when ``g_i + g_{i+1} + Δ_{i+1} ≤ 2εn`` (the first and last tuples stay).
Budget mode (``max_tuples``) merges, in rounds, the adjacent pairs whose merged tuple has the
smallest rank width ``g_i + g_{i+1} + Δ_{i+1} − e_{i+1}`` until ``max_tuples`` remain (the
batch form of MOA's ``deleteMergeableTupleMostFull``); it has no ε guarantee and reports
``effective_epsilon``.
"""

from __future__ import annotations

import numpy as np

from . import _gk_kernels


def merge_tuples(a: tuple, b: tuple) -> tuple:
    """Combine two tuple lists (the tight merge of the design note).

    ``a`` and ``b`` are ``(v, g, Δ, e, c)`` with ``v, g, Δ, e (s,)`` and ``c (s, J)`` on the same
    class axis, values strictly increasing. Returns the merged ``(v, g, Δ, e, c)`` (new arrays,
    values strictly increasing). Cost O((s_a + s_b)·J).
    """
    va, ga, da, ea, ca = a
    vb, gb, db, eb, cb = b
    if not len(vb):
        return tuple(np.array(x, copy=True) for x in a)
    if not len(va):
        return tuple(np.array(x, copy=True) for x in b)
    # h of the successor of each tuple in its own list; 0 past the last tuple (R(max) = L(max)).
    ha = np.append(ga + da - ea, 0.0)  # (s_a + 1,)
    hb = np.append(gb + db - eb, 0.0)  # (s_b + 1,)
    ua = np.searchsorted(vb, va, side="right")  # (s_a,) first b tuple above each a value
    ub = np.searchsorted(va, vb, side="right")  # (s_b,)
    # the other list's weight <= v charged after v is at most h of its successor (design note)
    da = da + hb[ua]
    db = db + ha[ub]
    ga, ea, ca = ga.copy(), ea.copy(), ca.copy()
    tie_a = np.zeros(len(va), dtype=bool)
    tie_a[ua > 0] = vb[ua[ua > 0] - 1] == va[ua > 0]
    if tie_a.any():
        ia = np.flatnonzero(tie_a)
        ib = ua[ia] - 1
        # Equal values collapse: R(v) ≤ L + min(Δ_a, h_a,next) + min(Δ_b, h_b,next).
        da[ia] = np.minimum(a[2][ia], ha[ia + 1]) + np.minimum(b[2][ib], hb[ib + 1])
        ga[ia] += gb[ib]
        ea[ia] += eb[ib]
        ca[ia] += cb[ib]
        keep = np.ones(len(vb), dtype=bool)
        keep[ib] = False
        vb, gb, db, eb, cb, ub = vb[keep], gb[keep], db[keep], eb[keep], cb[keep], ub[keep]
    if not len(vb):
        return va.copy(), ga, da, ea, ca
    size = len(va) + len(vb)
    at_b = ub + np.arange(len(vb))  # final positions of b's tuples (no ties left)
    from_a = np.ones(size, dtype=bool)
    from_a[at_b] = False
    out = []
    for x, y in ((va, vb), (ga, gb), (da, db), (ea, eb), (ca, cb)):
        z = np.empty((size,) + x.shape[1:])
        z[from_a] = x
        z[at_b] = y
        out.append(z)
    return tuple(out)


def insert_batch(state: tuple, values: np.ndarray, weights: np.ndarray, counts: np.ndarray, threshold: float | None) -> tuple:
    """Insert a sorted exact batch into a tuple list (the insert rule for many values at once).

    ``state`` is ``(v, g, Δ, e, c)`` as in ``merge_tuples``; the batch holds distinct values
    ``values (k,)`` in increasing order with their weights ``(k,)`` and class counts ``(k, J)``.
    A value already held is absorbed by its tuple. A new value with successor ``u`` gets
    ``Δ = h_u = g_u + Δ_u − e_u`` (0 for a new minimum or maximum). With a ``threshold``
    (``2εn``, guarantee mode), consecutive new values sharing the same successor are grouped
    into one tuple (held by the largest) in windows of cumulative weight of width
    ``threshold − h_u − max(weights)``, so a grouped tuple has ``g + Δ < threshold``; a new
    minimum stays alone. Returns new arrays. Cost O((s + k)·J), one compiled pass
    (``_gk_kernels.insert_exact``).
    """
    state = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in state)
    batch = (np.ascontiguousarray(a, dtype=np.float64) for a in (values, weights, counts))
    grouped = threshold is not None
    return _gk_kernels.insert_exact(*state, *batch, float(threshold) if grouped else 0.0, grouped)


def compress_runs(g: np.ndarray, delta: np.ndarray, threshold: float) -> np.ndarray:
    """Keeper mask of the simple compress (design note).

    Right to left, tuple ``i`` (``1 ≤ i ≤ s − 2``) is merged into the tuple currently at
    ``i + 1`` when ``g_i + G + Δ ≤ threshold``, where ``G`` and ``Δ`` are the accumulated weight
    and the uncertainty of that tuple. Returns ``keep (s,)`` bool; tuples dropped are merged
    into the next kept tuple to their right. Cost O(s), one compiled scan
    (``_gk_kernels.compress_keep``).
    """
    g = np.ascontiguousarray(g, dtype=np.float64)
    delta = np.ascontiguousarray(delta, dtype=np.float64)
    return _gk_kernels.compress_keep(g, delta, float(threshold))


def budget_pairs(g: np.ndarray, delta: np.ndarray, at_value: np.ndarray, excess: int) -> np.ndarray:
    """Tuples to merge into their right neighbour in one round of the budget compress.

    Among the pairs ``(i, i + 1)``, ``1 ≤ i ≤ s − 2``, takes the ``excess`` whose merged tuple has
    the smallest rank width ``g_i + g_{i+1} + Δ_{i+1} − e_{i+1}``, then drops every second pair of
    each run of adjacent chosen pairs so that no tuple is in two pairs. Returns the indices ``i``.
    """
    width = g[1:-1] + g[2:] + delta[2:] - at_value[2:]  # (s − 2,)
    if excess < len(width):
        chosen = np.zeros(len(width), dtype=bool)
        chosen[np.argpartition(width, excess - 1)[:excess]] = True
    else:
        chosen = np.ones(len(width), dtype=bool)
    index = np.arange(len(width))
    run_start = chosen.copy()
    run_start[1:] &= ~chosen[:-1]
    offset = index - np.maximum.accumulate(np.where(run_start, index, 0))
    return np.flatnonzero(chosen & (offset % 2 == 0)) + 1


def screen(group, default_buffer_size: int) -> np.ndarray:
    """``(m,)`` True for the GK summaries of a table's group (``io.columns.Group``: the checked
    columns of m records; ``default_buffer_size``: the buffer of a null ``buffer_size``) whose
    ``problems()`` may not be empty: the checks of ``GKClass.problems()`` beyond the schema's,
    over all m at once; the sums, whose order of addition differs, with
    half the tolerance, so that every summary ``problems()`` refuses is marked. O(total size)."""
    values, g, delta, e, counts = (group.column(name) for name in ("values", "g", "delta", "at_value", "counts"))
    m = group.m
    s = values.sizes
    weight = group.column("weight")
    has_epsilon, epsilons = group.column("guaranteed_epsilon")
    has_budget, budgets = group.column("max_tuples")
    has_buffer, buffer_sizes = group.column("buffer_size")
    suspect = has_epsilon == has_budget  # ε is null exactly in budget mode
    limit = np.full(m, default_buffer_size, dtype=np.int64)
    limit[has_buffer] = np.array(buffer_sizes, dtype=np.int64)
    suspect |= group.column("buffer_values").sizes >= limit
    suspect |= (s == 0) & (weight != 0.0)
    tolerance = 1e-9 * np.maximum(1.0, weight)
    owner = np.repeat(np.arange(m), s)  # (n,) the summary of each tuple
    eps = np.zeros(m)
    eps[has_epsilon] = np.array(epsilons, dtype=float)
    with np.errstate(all="ignore"):
        bad = ~(g.data > 0.0) | ~(e.data > 0.0) | ~(e.data <= g.data + tolerance[owner])
        # the class counts, row by row (summaries may have different numbers of classes)
        row_of = np.repeat(np.arange(len(g.data)), np.repeat(counts.shapes[:, 1], s))  # (n·J,) each count's tuple
        low = counts.data < -tolerance[owner][row_of]
        bad[row_of[low]] = True
        sums = np.bincount(row_of, weights=counts.data, minlength=len(g.data))
        bad |= ~(np.abs(sums - g.data) <= 0.5 * (tolerance[owner] + 1e-9 * np.abs(g.data)))
        bad |= has_epsilon[owner] & ~(g.data + delta.data - e.data <= 2.0 * eps[owner] * weight[owner] + tolerance[owner])
        suspect[owner[bad]] = True
        total = np.bincount(owner, weights=g.data, minlength=m)
        suspect |= (s > 0) & ~(np.abs(total - weight) <= 0.5 * tolerance)
        tuples = s > 0
        first, last = e.starts[tuples], e.starts[tuples] + s[tuples] - 1
        ends = np.zeros(m, dtype=bool)
        ends[tuples] = (delta.data[first] != 0.0) | (delta.data[last] != 0.0) | ~(np.abs(g.data[first] - e.data[first]) <= tolerance[tuples])
        suspect |= ends
    budget = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    budget[has_budget] = np.array(budgets, dtype=np.int64)
    suspect |= ~has_epsilon & (s > budget)
    return suspect
