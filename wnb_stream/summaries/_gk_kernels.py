"""Compiled kernels of ``GKClass``: absorb a block of values, insert an exact batch, compress.

The kernels are the batch rules of ``gk.py`` (``docs/algorithms/summaries.md#gk``; the design notes of
``gk.py`` and ``gk_tuples.py`` state them and their proofs) written as loops for numba. They replace a chain of small
NumPy calls whose per-call overhead dominated at the sizes the classifier uses (~150 tuples, blocks
of ≤ 1,000 values). They compile on their first call (``cache=True`` keeps the machine code in
``__pycache__`` next to this file, or in numba's user cache when that is read-only) and release
the GIL.

Bit-identical floats. Every float is formed by the operations, in the order, of the NumPy
implementation these kernels replaced (kept as ``tests/summaries/reference_gk.py``), so a summary
holds the very same floats either way:

- ``np.add.reduceat(a, bounds[:-1])`` copies the first element of a segment and adds NumPy's
  pairwise sum of the rest; with ``axis=0``, each column alike (``_reduceat``);
- ``a.sum()`` of a 1-D float64 array is ``0.0 +`` the pairwise sum of all its elements;
- ``np.cumsum`` adds left to right from the first element, ``np.bincount(..., weights=...)`` left
  to right from 0.0;
- ``np.argsort(kind="stable")`` keeps equal values in their input order; ``absorb`` takes NumPy's
  faster (vectorised, unstable) ``argsort`` and puts equal values back in input order
  (``_stable_ties``), so their weights are summed in the same order.

``_pairwise_sum`` is NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src: a plain
loop below 8 values, 8 accumulators up to 128, halves above). ``tests/summaries/test_gk_kernels.py``
checks it against ``np.sum`` and ``np.add.reduceat``.

Speed notes (measured with numba 0.68). A loop that may call another compiled function with an
array, even on a branch it never takes, runs several times slower, and so does one that makes a
view per iteration. Hence the loops over tuples call nothing: ``_block_sum`` (no calls) is
inlined, and ``_reduceat`` sums the rare segment of more than 129 values in a loop of its own.
Comparison sorts of fresh data mispredict most branches: NumPy's vectorised ``argsort`` is several
times faster than any sort compiled here.
"""

from __future__ import annotations

import numba
import numpy as np

from .. import _kernel_notice

_kernel_notice.install()  # one line on the wnb_stream logger at the first compile

__all__ = ["absorb", "absorb_many", "compress", "compress_keep", "insert_exact"]

#: NumPy's block size for pairwise summation.
_PAIRWISE_BLOCK = 128

_jit = numba.njit(cache=True, nogil=True)
#: helpers without calls, inlined into loops (see the speed notes above)
_inline = numba.njit(cache=True, nogil=True, inline="always")


# --------------------------------------------------------------------------------------------
# Sums in NumPy's order
# --------------------------------------------------------------------------------------------


@_inline
def _block_sum(a, j, lo, n):
    """NumPy's pairwise sum of ``a[lo : lo + n, j]`` for ``n ≤ 128`` (``a`` 2-D): a plain loop from
    −0.0 below 8 values, else 8 accumulators combined as a tree, then the remainder."""
    if n < 8:
        total = -0.0
        for i in range(lo, lo + n):
            total += a[i, j]
        return total
    r0, r1, r2, r3 = a[lo, j], a[lo + 1, j], a[lo + 2, j], a[lo + 3, j]
    r4, r5, r6, r7 = a[lo + 4, j], a[lo + 5, j], a[lo + 6, j], a[lo + 7, j]
    i = lo + 8
    stop = lo + n - n % 8
    while i < stop:
        r0 += a[i, j]
        r1 += a[i + 1, j]
        r2 += a[i + 2, j]
        r3 += a[i + 3, j]
        r4 += a[i + 4, j]
        r5 += a[i + 5, j]
        r6 += a[i + 6, j]
        r7 += a[i + 7, j]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < lo + n:
        total += a[i, j]
        i += 1
    return total


@_jit
def _pairwise_sum(a, j, lo, n):
    """NumPy's pairwise sum of ``a[lo : lo + n, j]`` (``a`` 2-D float64; ``a.reshape(-1, 1)`` for
    a 1-D array, column 0).

    Up to 128 values ``_block_sum``; above, the sum of the two halves (the first rounded down to
    a multiple of 8), recursively. The recursion is unrolled on an explicit stack (numba cannot
    cache recursive functions reliably).
    """
    if n <= _PAIRWISE_BLOCK:
        return _block_sum(a, j, lo, n)
    starts = np.empty(64, dtype=np.int64)  # 64 halvings cover any array size
    sizes = np.empty(64, dtype=np.int64)
    lefts = np.empty(64)  # the sum of a left half, once known
    has_left = np.zeros(64, dtype=np.bool_)
    depth = 0
    starts[0] = lo
    sizes[0] = n
    while True:
        size = sizes[depth]
        if size > _PAIRWISE_BLOCK:  # descend into the left half
            half = size // 2
            half -= half % 8
            has_left[depth] = False
            starts[depth + 1] = starts[depth]
            sizes[depth + 1] = half
            depth += 1
            continue
        value = _block_sum(a, j, starts[depth], size)
        # climb: a left half waits for its right sibling, a right half completes its parent
        while True:
            depth -= 1
            if depth < 0:
                return value
            if has_left[depth]:
                value = lefts[depth] + value
                continue
            lefts[depth] = value
            has_left[depth] = True
            half = sizes[depth] // 2
            half -= half % 8
            starts[depth + 1] = starts[depth] + half
            sizes[depth + 1] = sizes[depth] - half
            depth += 1
            break


@_jit
def _reduceat(a, bounds, n_segments):
    """``np.add.reduceat(a, bounds[:n_segments], axis=0)`` for segments ``bounds[q]:bounds[q + 1]``.

    ``a`` is ``(k, J)`` float64 (``a.reshape(-1, 1)`` for a 1-D array), ``bounds (≥ n_segments + 1,)``
    increasing with every segment non-empty; returns ``(n_segments, J)``. Each column of a segment
    is its first element plus the pairwise sum of the rest.
    """
    n_columns = a.shape[1]
    out = np.empty((n_segments, n_columns))
    n_long = 0
    for q in range(n_segments):
        lo = bounds[q]
        n = bounds[q + 1] - lo - 1  # the values after the first
        if n > _PAIRWISE_BLOCK:
            n_long += 1
            continue
        for j in range(n_columns):
            out[q, j] = a[lo, j] + _block_sum(a, j, lo + 1, n) if n else a[lo, j]
    if n_long:  # segments of more than 129 values, in a loop of their own (see the speed notes)
        for q in range(n_segments):
            lo = bounds[q]
            n = bounds[q + 1] - lo - 1
            if n > _PAIRWISE_BLOCK:
                for j in range(n_columns):
                    out[q, j] = a[lo, j] + _pairwise_sum(a, j, lo + 1, n)
    return out


# --------------------------------------------------------------------------------------------
# Insert an exact batch (the insert rule for many values; gk_tuples.insert_batch)
# --------------------------------------------------------------------------------------------


@_jit
def _runs_ending_at(ends):
    """Runs of consecutive entries each closed by a True of ``ends (s,)``, the last entry closing
    the last run: ``(bounds, count)`` with run ``q`` = ``bounds[q]:bounds[q + 1]``, ``q < count``."""
    s = ends.shape[0]
    bounds = np.empty(s + 1, dtype=np.int64)
    bounds[0] = 0
    count = 0
    for i in range(s):
        if ends[i]:
            count += 1
            bounds[count] = i + 1
    return bounds, count


@_jit
def insert_exact(v, g, delta, at_value, counts, values, weights, batch_counts, threshold, grouped):
    """Insert distinct sorted values with their weights and class counts into a tuple list.

    ``v, g, delta, at_value (s,)`` and ``counts (s, J)`` are the tuples; ``values, weights (k,)``
    and ``batch_counts (k, J)`` the batch. ``grouped`` (guarantee mode) groups consecutive new
    values that share a successor in windows of width ``threshold − h_u − max(weights)``; see
    ``gk_tuples.insert_batch`` for the rule. Returns new ``(v, g, Δ, e, c)``; the inputs are not changed.
    """
    s = v.shape[0]
    k = values.shape[0]
    n_classes = counts.shape[1]
    g_out = g.copy()
    at_value_out = at_value.copy()
    counts_out = counts.copy()
    # Successor of each batch value: the first tuple with v >= value (searchsorted "left").
    position = np.empty(k, dtype=np.int64)
    p = 0
    for i in range(k):
        while p < s and v[p] < values[i]:
            p += 1
        position[i] = p
    # A value already held is absorbed by its tuple; the others are fresh.
    fresh = np.empty(k, dtype=np.int64)
    n_fresh = 0
    for i in range(k):
        p = position[i]
        if p < s and v[p] == values[i]:
            g_out[p] += weights[i]
            at_value_out[p] += weights[i]
            for j in range(n_classes):
                counts_out[p, j] += batch_counts[i, j]
        else:
            fresh[n_fresh] = i
            n_fresh += 1
    if n_fresh == 0:
        return v.copy(), g_out, delta.copy(), at_value_out, counts_out
    # The fresh values (k_f,) and their class counts (k_f, J). Δ of a fresh value: h = g + Δ − e of
    # its successor (before absorbing ties); 0 for a new minimum (position 0) or maximum (s).
    fresh_values = np.empty(n_fresh)
    fresh_weight = np.empty(n_fresh)
    fresh_counts = np.empty((n_fresh, n_classes))
    fresh_delta = np.empty(n_fresh)
    fresh_position = np.empty(n_fresh, dtype=np.int64)
    largest = weights[fresh[0]]
    for t in range(n_fresh):
        i = fresh[t]
        p = position[i]
        fresh_values[t] = values[i]
        fresh_weight[t] = weights[i]
        for j in range(n_classes):
            fresh_counts[t, j] = batch_counts[i, j]
        fresh_position[t] = p
        fresh_delta[t] = 0.0 if p == 0 or p == s else g[p] + delta[p] - at_value[p]
        largest = max(largest, weights[i])
    # ends[t]: fresh value t holds a tuple (the largest of its group).
    ends = np.ones(n_fresh, dtype=np.bool_)
    if grouped and n_fresh > 1:
        cumulative = 0.0
        base = 0.0
        previous_slot = 0.0
        for t in range(n_fresh):
            # the batch weight before t, as np.cumsum(weights) − weights
            cumulative = fresh_weight[0] if t == 0 else cumulative + fresh_weight[t]
            before = cumulative - fresh_weight[t]
            gap_start = t == 0 or fresh_position[t] != fresh_position[t - 1]
            if gap_start:
                base = before
            within = before - base
            # A group never reaches `room` before its last value is added, so g + Δ ≤ threshold.
            room = threshold - fresh_delta[t] - largest
            slot = np.floor(within / room) if room > 0.0 else float(t)
            if t > 0:
                ends[t - 1] = gap_start or slot != previous_slot
            previous_slot = slot
        if fresh_position[0] == 0:
            ends[0] = True  # the minimum stays alone and exact
    # Groups of consecutive fresh values: group q is bounds[q]:bounds[q + 1].
    bounds, n_new = _runs_ending_at(ends)
    group_g = _reduceat(fresh_weight.reshape(-1, 1), bounds, n_new)  # (n_new, 1)
    group_counts = _reduceat(fresh_counts, bounds, n_new)  # (n_new, J)
    # Interleave: each new tuple goes right before its successor.
    size = s + n_new
    v_out = np.empty(size)
    g_new = np.empty(size)
    delta_out = np.empty(size)
    at_new = np.empty(size)
    counts_new = np.empty((size, n_classes))
    out = 0
    old = 0
    for q in range(n_new + 1):
        stop = s if q == n_new else fresh_position[bounds[q + 1] - 1]
        while old < stop:
            v_out[out] = v[old]
            g_new[out] = g_out[old]
            delta_out[out] = delta[old]
            at_new[out] = at_value_out[old]
            for j in range(n_classes):
                counts_new[out, j] = counts_out[old, j]
            old += 1
            out += 1
        if q == n_new:
            break
        t = bounds[q + 1] - 1  # the group's tuple is held by its largest value
        v_out[out] = fresh_values[t]
        g_new[out] = group_g[q, 0]
        delta_out[out] = fresh_delta[t]
        at_new[out] = fresh_weight[t]
        for j in range(n_classes):
            counts_new[out, j] = group_counts[q, j]
        out += 1
    return v_out, g_new, delta_out, at_new, counts_new


# --------------------------------------------------------------------------------------------
# Simple compress (gk_tuples.compress_runs and GKClass._apply)
# --------------------------------------------------------------------------------------------


@_jit
def compress_keep(g, delta, threshold):
    """Keeper mask ``(s,)`` of the simple compress: right to left, tuple ``i`` (``1 ≤ i ≤ s − 2``)
    merges into the tuple at ``i + 1`` when ``g_i + G + Δ ≤ threshold`` (``G``, ``Δ``: that tuple's
    accumulated weight and uncertainty)."""
    s = g.shape[0]
    keep = np.ones(s, dtype=np.bool_)
    if s < 3:
        return keep
    total = g[s - 1]
    slack = delta[s - 1]
    for i in range(s - 2, 0, -1):
        gi = g[i]
        if gi + total + slack <= threshold:
            keep[i] = False
            total += gi
        else:
            total = gi
            slack = delta[i]
    return keep


@_jit
def compress(v, g, delta, at_value, counts, threshold):
    """The simple compress with threshold ``2εn``: ``compress_keep``, then every dropped
    tuple merged into the next kept tuple to its right (``g`` and the class counts summed as
    ``np.add.reduceat``). Returns new ``(v, g, Δ, e, c)``, or the inputs when nothing merges."""
    keep = compress_keep(g, delta, threshold)
    s = v.shape[0]
    # Runs: run q is bounds[q]:bounds[q + 1] and ends at a kept tuple (the last one is kept).
    bounds, size = _runs_ending_at(keep)
    if size == s:
        return v, g, delta, at_value, counts
    g_out = _reduceat(g.reshape(-1, 1), bounds, size)[:, 0].copy()
    counts_out = _reduceat(counts, bounds, size)
    v_out = np.empty(size)
    delta_out = np.empty(size)
    at_out = np.empty(size)
    for q in range(size):
        i = bounds[q + 1] - 1
        v_out[q] = v[i]
        delta_out[q] = delta[i]
        at_out[q] = at_value[i]
    return v_out, g_out, delta_out, at_out, counts_out


# --------------------------------------------------------------------------------------------
# The block absorb of GKClass (sort, exact summary, insert, compress)
# --------------------------------------------------------------------------------------------


@_jit
def _stable_ties(order, xs):
    """Make ``order`` the stable sort: equal values ``xs`` (gathered by ``order``) get their
    indices in increasing order. A counting sort by run of equal values, visiting the indices in
    increasing order: O(m), no comparisons."""
    m = order.shape[0]
    run = np.empty(m, dtype=np.int64)  # run[i]: the run of equal values x[i] belongs to
    slot = np.empty(m, dtype=np.int64)  # slot[r]: the next position of run r
    r = -1
    for i in range(m):
        if i == 0 or xs[i] != xs[i - 1]:
            r += 1
            slot[r] = i
        run[order[i]] = r
    for i in range(m):
        order[slot[run[i]]] = i
        slot[run[i]] += 1


@_jit
def absorb(v, g, delta, at_value, counts, x, codes, w, order, weight, epsilon, guaranteed):
    """Absorb a block of finite values with positive weights into a tuple list.

    ``x, w (m,)`` float64 and ``codes (m,)`` int64 class columns ``< J``, ``m ≥ 1``; ``order (m,)``
    int64 sorts ``x`` (any sort: ``np.argsort(x)``, NumPy's vectorised one; the kernel makes it
    stable, and changes it); ``weight`` is the flushed weight ``Σ g`` before the block. The block
    is collapsed into an exact summary (one tuple per distinct value, ``g = e`` = its weight,
    ``Δ = 0``), inserted with ``insert_exact`` and, when ``guaranteed``, compressed with threshold
    ``2εn``. Returns ``(v, g, Δ, e, c, weight)`` with the new flushed weight.
    """
    m = x.shape[0]
    n_classes = counts.shape[1]
    xs = np.empty(m)
    for i in range(m):
        xs[i] = x[order[i]]
    ties = False
    for i in range(1, m):
        if xs[i] == xs[i - 1]:
            ties = True
            break
    if ties:  # equal values keep their input order, as np.argsort(kind="stable")
        _stable_ties(order, xs)
        for i in range(m):
            xs[i] = x[order[i]]
    ws = np.empty(m)
    for i in range(m):
        ws[i] = w[order[i]]
    # The block as an exact summary: distinct value q is xs[bounds[q]:bounds[q + 1]]; its class
    # weights as np.bincount (left to right from 0.0), its weight as np.add.reduceat.
    values = np.empty(m)
    bounds = np.empty(m + 1, dtype=np.int64)
    batch_counts = np.zeros((m, n_classes))
    k = 0
    for i in range(m):
        if i == 0 or xs[i] != xs[i - 1]:
            values[k] = xs[i]
            bounds[k] = i
            k += 1
        batch_counts[k - 1, codes[order[i]]] += ws[i]
    bounds[k] = m
    weights = ws.copy() if k == m else _reduceat(ws.reshape(-1, 1), bounds, k)[:, 0].copy()
    weight = weight + (0.0 + _pairwise_sum(ws.reshape(-1, 1), 0, 0, m))  # self._weight += w.sum()
    threshold = 2.0 * epsilon * weight
    v, g, delta, at_value, counts = insert_exact(
        v, g, delta, at_value, counts, values[:k].copy(), weights, batch_counts[:k].copy(), threshold, guaranteed
    )
    if guaranteed:
        v, g, delta, at_value, counts = compress(v, g, delta, at_value, counts, threshold)
    return v, g, delta, at_value, counts, weight


@_jit
def _order(x):
    """A permutation sorting ``x (m,)``: insertion sort for a few values (stable), else NumPy's.
    ``absorb`` makes any sorting permutation stable, so the choice changes no float."""
    m = x.shape[0]
    if m > 32:
        return np.argsort(x).astype(np.int64)
    order = np.arange(m)
    for i in range(1, m):
        o = order[i]
        value = x[o]
        p = i
        while p > 0 and x[order[p - 1]] > value:
            order[p] = order[p - 1]
            p -= 1
        order[p] = o
    return order


@_inline
def _put(v_out, g_out, d_out, e_out, c_out, at, v, g, d, e, c):
    """Write one summary's tuples ``(v, g, Δ, e, c)`` at row ``at`` of the stacked outputs; the row after them."""
    n = v.shape[0]
    v_out[at : at + n] = v
    g_out[at : at + n] = g
    d_out[at : at + n] = d
    e_out[at : at + n] = e
    c_out[at : at + n] = c
    return at + n


@_jit
def absorb_many(v, g, delta, at_value, counts, held, x, codes, w, taken, weight, epsilon):
    """``absorb`` (guarantee mode) for many summaries in one call.

    Summary ``t`` holds the tuples ``held[t]:held[t + 1]`` of the stacked ``v, g, delta, at_value
    (S,)`` and ``counts (S, J)``, the flushed weight ``weight[t]`` and ``epsilon[t]``; it absorbs
    the block ``taken[t]:taken[t + 1]`` of ``x, w (M,)`` and ``codes (M,)`` (finite values with
    positive weights, class columns ``< J``; an empty block changes nothing). Returns the stacked
    tuples after (``(S', …)``, at most ``S + M``), their bounds ``(T + 1,)`` and the flushed
    weights ``(T,)``: each summary's floats are those of ``absorb`` on it alone.
    """
    T = held.shape[0] - 1
    n_classes = counts.shape[1]
    cap = v.shape[0] + x.shape[0]
    v_out, g_out, d_out, e_out = np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap)
    c_out = np.empty((cap, n_classes))
    bounds = np.zeros(T + 1, dtype=np.int64)
    weights = np.empty(T)
    at = 0
    for t in range(T):
        a, b, c, d = held[t], held[t + 1], taken[t], taken[t + 1]
        if d > c:
            xt = x[c:d]
            out = absorb(v[a:b], g[a:b], delta[a:b], at_value[a:b], counts[a:b], xt, codes[c:d], w[c:d], _order(xt),
                         weight[t], epsilon[t], True)  # fmt: skip
            at = _put(v_out, g_out, d_out, e_out, c_out, at, out[0], out[1], out[2], out[3], out[4])
            weights[t] = out[5]
        else:
            at = _put(v_out, g_out, d_out, e_out, c_out, at, v[a:b], g[a:b], delta[a:b], at_value[a:b], counts[a:b])
            weights[t] = weight[t]
        bounds[t + 1] = at
    return v_out[:at], g_out[:at], d_out[:at], e_out[:at], c_out[:at], bounds, weights


# --------------------------------------------------------------------------------------------
# Merges of many summaries (GKClass.merge_many)
# --------------------------------------------------------------------------------------------


@_jit
def _merge_pair(va, ga, da, ea, ca, vb, gb, db, eb, cb):
    """``gk_tuples.merge_tuples`` on two tuple lists (the same floats, one compiled pass): the
    merged ``(v, g, Δ, e, c)``, new arrays."""
    sa, sb = va.shape[0], vb.shape[0]
    if sb == 0:
        return va.copy(), ga.copy(), da.copy(), ea.copy(), ca.copy()
    if sa == 0:
        return vb.copy(), gb.copy(), db.copy(), eb.copy(), cb.copy()
    ha = np.empty(sa + 1)  # h of each tuple, 0 past the last (R(max) = L(max))
    for i in range(sa):
        ha[i] = ga[i] + da[i] - ea[i]
    ha[sa] = 0.0
    hb = np.empty(sb + 1)
    for j in range(sb):
        hb[j] = gb[j] + db[j] - eb[j]
    hb[sb] = 0.0
    ua = np.searchsorted(vb, va, side="right")  # first b tuple above each a value
    ub = np.searchsorted(va, vb, side="right")
    da2 = np.empty(sa)
    for i in range(sa):
        da2[i] = da[i] + hb[ua[i]]
    db2 = np.empty(sb)
    for j in range(sb):
        db2[j] = db[j] + ha[ub[j]]
    ga2, ea2, ca2 = ga.copy(), ea.copy(), ca.copy()
    taken = np.zeros(sb, dtype=np.bool_)  # b tuples collapsed into an a tuple of the same value
    for i in range(sa):
        if ua[i] > 0 and vb[ua[i] - 1] == va[i]:
            ib = ua[i] - 1
            da2[i] = min(da[i], ha[i + 1]) + min(db[ib], hb[ib + 1])
            ga2[i] += gb[ib]
            ea2[i] += eb[ib]
            for j in range(ca.shape[1]):
                ca2[i, j] += cb[ib, j]
            taken[ib] = True
    kept = sb - int(taken.sum())
    if kept == 0:
        return va.copy(), ga2, da2, ea2, ca2
    size = sa + kept
    v, g, d, e = np.empty(size), np.empty(size), np.empty(size), np.empty(size)
    c = np.empty((size, ca.shape[1]))
    from_a = np.ones(size, dtype=np.bool_)
    k = 0
    for j in range(sb):  # b's kept tuples at ub + their rank among the kept (no ties left)
        if not taken[j]:
            at = ub[j] + k
            k += 1
            from_a[at] = False
            v[at], g[at], d[at], e[at] = vb[j], gb[j], db2[j], eb[j]
            c[at] = cb[j]
    i = 0
    for at in range(size):
        if from_a[at]:
            v[at], g[at], d[at], e[at] = va[i], ga2[i], da2[i], ea2[i]
            c[at] = ca2[i]
            i += 1
    return v, g, d, e, c


@_jit
def merge_many(va, ga, da, ea, ca, a_held, vb, gb, db, eb, cb, b_held, thresholds):
    """Summary ``t``'s tuples ``a_held[t]:a_held[t + 1]`` of the stacked ``va, ga, da, ea (S,)``,
    ``ca (S, J)`` merged with the tuples ``b_held[t]:b_held[t + 1]`` of ``vb, …, cb`` (the same
    class axis), then compressed with ``thresholds[t]`` (``2εn`` after the merge): the floats of
    ``merge_tuples`` then ``compress`` on each pair alone. Returns the stacked results ``(S', …)``
    and their bounds ``(T + 1,)``."""
    T = a_held.shape[0] - 1
    n_classes = ca.shape[1]
    cap = va.shape[0] + vb.shape[0]
    v_out, g_out, d_out, e_out = np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap)
    c_out = np.empty((cap, n_classes))
    bounds = np.zeros(T + 1, dtype=np.int64)
    at = 0
    for t in range(T):
        a, b, c, d = a_held[t], a_held[t + 1], b_held[t], b_held[t + 1]
        merged = _merge_pair(va[a:b], ga[a:b], da[a:b], ea[a:b], ca[a:b], vb[c:d], gb[c:d], db[c:d], eb[c:d], cb[c:d])
        out = compress(merged[0], merged[1], merged[2], merged[3], merged[4], thresholds[t])
        at = _put(v_out, g_out, d_out, e_out, c_out, at, out[0], out[1], out[2], out[3], out[4])
        bounds[t + 1] = at
    return v_out[:at], g_out[:at], d_out[:at], e_out[:at], c_out[:at], bounds
