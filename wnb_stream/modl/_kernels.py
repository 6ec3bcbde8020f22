"""Compiled searches of MODL discretization for integer counts (numba kernels, docs/algorithms/modl.md#discretization).

The kernels run the searches of the former pure-Python/NumPy code in the same order of floating
point operations, so that they return the same intervals and the same costs to the last bit
(property-tested against that code, kept in ``tests/modl/reference_discretization.py``):

- :func:`search` — pure-run merge, then either the exact dynamic programme or the greedy
  bottom-up merge followed by the post-optimisation (Split, MergeSplit, MergeMergeSplit), with the
  same tie rules;
- :func:`score` — c(M) of the intervals found, c(M0), the null-model fallback and B(X), as
  ``discretize`` computed them;
- :func:`optimal_ends` — the dynamic programme alone, on a precomputed matrix of part costs (also
  used for fractional counts, whose part costs stay in NumPy).

Design note — why the floats agree. For integer counts every lΓ is read from the cached table of
``math.lgamma`` values of ``modl.costs`` (passed in as ``table``), never from numba's ``lgamma``.
A part costs lΓ(N_i + J) − lΓ(J) − Σ_j lΓ(N_ij + 1), and the sum over j is taken in
one of two orders, as the former code did: NumPy's order (:func:`pairwise_sum`: left to right
below 8 terms, eight interleaved accumulators up to 128, halves beyond, starting from 0) wherever
it priced parts with ``part_costs``, and the order of Python's ``sum`` (:func:`python_sum`: left
to right, Neumaier-compensated from Python 3.12 on) where the greedy merge re-priced a merged
node with ``sum(map(math.lgamma, row))``. Sums of costs over parts follow the same rule
(``ndarray.sum`` → NumPy's order, ``sum`` → Python's); counts are int64, so their sums are
exact. The kernels take at most :data:`MAX_CLASSES` classes, so that a sum over classes is one
block of NumPy's order.

Compilation is lazy (first call) and cached next to this file (``cache=True``); every kernel
releases the GIL. Small helpers are inlined at numba's IR level (``inline="always"``): a call
between compiled functions passes each array as a struct and counts references, which costs more
than these helpers' work.
"""

from __future__ import annotations

import sys

import numba
import numpy as np

from .. import _kernel_notice

_kernel_notice.install()  # one line on the wnb_stream logger at the first compile

__all__ = [
    "MAX_CLASSES",
    "AUTO",
    "EXACT",
    "GREEDY",
    "pairwise_sum",
    "neumaier_sum",
    "python_sum",
    "merge_pure_runs",
    "optimal_ends",
    "search",
    "score",
]

#: Most classes the kernels take: NumPy sums up to 128 terms in one block, and keeping the sums
#: over classes to one block keeps the inner loops free of calls (more classes: the NumPy path).
MAX_CLASSES = 128
#: ``method`` codes of :func:`search`.
AUTO, EXACT, GREEDY, INVALID = 0, 1, 2, 3
#: ``status`` codes they return: which search ran, or why none did.
RAN_NOTHING, RAN_EXACT, RAN_GREEDY, TOO_MANY_ATOMS, BAD_METHOD = 0, 1, 2, -1, -2

# Post-optimisation: an improving move lowers the cost by more than rounding noise.
_STRICT = -1e-9
# Python's built-in sum of floats is compensated (Neumaier) from 3.12 on, left to right before;
# the greedy merge follows the interpreter it runs under (numba caches per Python version).
_COMPENSATED_SUM = sys.version_info >= (3, 12)

_jit = numba.njit(cache=True, nogil=True)
_inline = numba.njit(cache=True, nogil=True, inline="always")


# --------------------------------------------------------------------------------------------
# Sums and part costs in the orders of the NumPy code.


@_jit
def _pairwise_block(values, start, n):
    # NumPy's pairwise_sum for n ≤ 128: left to right below 8 terms, else eight accumulators
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    r0 = values[start]
    r1 = values[start + 1]
    r2 = values[start + 2]
    r3 = values[start + 3]
    r4 = values[start + 4]
    r5 = values[start + 5]
    r6 = values[start + 6]
    r7 = values[start + 7]
    limit = n - n % 8
    i = 8
    while i < limit:
        b = start + i
        r0 += values[b]
        r1 += values[b + 1]
        r2 += values[b + 2]
        r3 += values[b + 3]
        r4 += values[b + 4]
        r5 += values[b + 5]
        r6 += values[b + 6]
        r7 += values[b + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += values[start + i]
        i += 1
    return total


@_jit
def pairwise_sum(values, start, n):
    """Σ values[start : start + n] in the order of NumPy's ``add.reduce`` along a contiguous axis.

    NumPy starts from 0, sums fewer than 8 terms left to right, up to 128 terms in eight
    interleaved accumulators combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) plus
    the remainder, and splits longer runs in two halves (the first a multiple of 8), summing each
    the same way. The halves are walked with an explicit stack: numba's cache mishandles
    recursive functions (numba issue #6061).
    """
    if n <= 128:
        return _pairwise_block(values, start, n)
    # frames: first index, length, stage (0: go left, 1: go right, 2: add), sum of the left half
    starts = np.empty(64, dtype=np.int64)
    sizes = np.empty(64, dtype=np.int64)
    stages = np.empty(64, dtype=np.int64)
    lefts = np.empty(64)
    top = 0
    starts[0], sizes[0], stages[0] = start, n, 0
    returned = 0.0
    while top >= 0:
        size = sizes[top]
        if size <= 128:
            returned = _pairwise_block(values, starts[top], size)
            top -= 1
            continue
        half = size // 2
        half -= half % 8
        if stages[top] == 0:
            stages[top] = 1
            starts[top + 1], sizes[top + 1], stages[top + 1] = starts[top], half, 0
            top += 1
        elif stages[top] == 1:
            lefts[top] = returned
            stages[top] = 2
            starts[top + 1], sizes[top + 1], stages[top + 1] = starts[top] + half, size - half, 0
            top += 1
        else:
            returned = lefts[top] + returned
            top -= 1
    return returned


@_inline
def neumaier_sum(values, n):
    """Σ values[:n] (n ≥ 1) as CPython ≥ 3.12's built-in ``sum`` of floats (``builtin_sum_impl``).

    Neumaier's compensated sum from 0 + values[0], the compensation added at the end when it is
    non-zero and finite.
    """
    total = 0.0 + values[0]
    compensation = 0.0
    for i in range(1, n):
        x = values[i]
        t = total + x
        if abs(total) >= abs(x):
            compensation += (total - t) + x
        else:
            compensation += (x - t) + total
        total = t
    if compensation != 0.0 and np.isfinite(compensation):
        total += compensation
    return total


@_inline
def python_sum(values, n):
    """Σ values[:n] (n ≥ 1) in the order of Python's built-in ``sum`` on this interpreter.

    Left to right before Python 3.12, :func:`neumaier_sum` from 3.12 on.
    """
    if _COMPENSATED_SUM:
        return neumaier_sum(values, n)
    total = 0.0 + values[0]
    for i in range(1, n):
        total += values[i]
    return total


@_inline
def _sum_classes(scratch, n):
    """Σ scratch[:n] (n ≤ 128) in NumPy's order, using ``scratch`` as the eight accumulators.

    The same sum as one block of :func:`pairwise_sum`: lane k accumulates scratch[k], scratch[k + 8],
    … in order, then ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) and the remainder.
    """
    if n < 8:
        total = 0.0
        for i in range(n):
            total += scratch[i]
        return total
    limit = n - n % 8
    for i in range(8, limit):
        scratch[i % 8] += scratch[i]
    total = (scratch[0] + scratch[1]) + (scratch[2] + scratch[3])
    total = total + ((scratch[4] + scratch[5]) + (scratch[6] + scratch[7]))
    for i in range(limit, n):
        total += scratch[i]
    return total


@_inline
def _interval_terms(prefix, lo, hi, table, scratch):
    """N_i of atoms lo..hi − 1 from ``(B + 1, J)`` int64 prefix sums; ``scratch[j]`` = lΓ(N_ij + 1)."""
    total = 0
    for j in range(prefix.shape[1]):
        count = prefix[hi, j] - prefix[lo, j]
        total += count
        scratch[j] = table[count + 1]
    return total


@_inline
def _interval_cost(prefix, lo, hi, table, log_gamma_classes, scratch):
    """part(i) of atoms lo..hi − 1 from ``(B + 1, J)`` int64 prefix sums, NumPy order.

    J ≤ :data:`MAX_CLASSES`, so that the sum over classes is one block of NumPy's pairwise sum.
    """
    n_classes = prefix.shape[1]
    total = _interval_terms(prefix, lo, hi, table, scratch)
    return table[total + n_classes] - log_gamma_classes - _sum_classes(scratch, n_classes)


@_inline
def _row_cost(row, table, log_gamma_classes, scratch):
    """part(i) of one ``(J,)`` int64 count row, Σ_j lΓ(N_ij + 1) in the order of Python's ``sum``."""
    n_classes = row.shape[0]
    total = 0
    for j in range(n_classes):
        total += row[j]
        scratch[j] = table[row[j] + 1]
    return table[total + n_classes] - log_gamma_classes - python_sum(scratch, n_classes)


@_inline
def _data_cost(prefix, lo, hi, table, scratch):
    """log N_i! − Σ_j log N_ij! of atoms lo..hi − 1 (the data cost), NumPy order (J ≤ 128)."""
    total = _interval_terms(prefix, lo, hi, table, scratch)
    return table[total + 1] - _sum_classes(scratch, prefix.shape[1])


@_jit
def _prefix_sums(atoms):
    """``(B + 1, J)`` int64 prefix sums of ``(B, J)`` counts, row 0 zero."""
    n, n_classes = atoms.shape
    prefix = np.empty((n + 1, n_classes), dtype=np.int64)
    for j in range(n_classes):
        prefix[0, j] = 0
    for i in range(n):
        for j in range(n_classes):
            prefix[i + 1, j] = prefix[i, j] + atoms[i, j]
    return prefix


@_jit
def merge_pure_runs(atoms):
    """Merge runs of adjacent atoms pure in the same class (docs/algorithms/modl.md#discretization).

    Returns the ``(B', J)`` merged int64 counts and ``(B',)`` the last atom of each merged atom.
    """
    n, n_classes = atoms.shape
    pure = np.empty(n, dtype=np.int64)
    for i in range(n):
        positive, column = 0, -1
        for j in range(n_classes):
            if atoms[i, j] > 0:
                positive += 1
                if column < 0:
                    column = j
        pure[i] = column if positive == 1 else -1
    size = 0
    for i in range(n):
        if i == 0 or not (pure[i] >= 0 and pure[i] == pure[i - 1]):
            size += 1
    last = np.empty(size, dtype=np.int64)
    merged = np.empty((size, n_classes), dtype=np.int64)
    size = 0
    for i in range(n):
        if i == 0 or not (pure[i] >= 0 and pure[i] == pure[i - 1]):
            size += 1
            for j in range(n_classes):
                merged[size - 1, j] = atoms[i, j]
        else:
            for j in range(n_classes):
                merged[size - 1, j] += atoms[i, j]
        last[size - 1] = i
    return merged, last


# --------------------------------------------------------------------------------------------
# The exact dynamic programme (docs/algorithms/modl.md#discretization).


@_jit
def interval_cost_matrix(prefix, table, log_gamma_classes):
    """``(B, B)`` part cost of the interval of atoms a..b at [b, a] (+inf when a > b).

    Stored by last atom so that the programme reads each column of candidates contiguously.
    """
    n = prefix.shape[0] - 1
    scratch = np.empty(prefix.shape[1])
    costs = np.empty((n, n))
    for b in range(n):
        for a in range(b + 1):
            costs[b, a] = _interval_cost(prefix, a, b + 1, table, log_gamma_classes, scratch)
        for a in range(b + 1, n):
            costs[b, a] = np.inf
    return costs


@_jit
def optimal_ends(costs, prior, cost_tolerance):
    """Exact programme: D[I][b] = min_a D[I−1][a−1] + part(a..b); the best prior(I) + D[I][B].

    ``costs`` is ``(B, B)``, the part cost of atoms a..b at [b, a] (+inf when a > b), ``prior``
    ``(≥ B + 1,)``. Stops increasing I once min_{I' ≥ I} prior(I') + the best unconstrained
    Σ part cannot beat the best total; ties within ``cost_tolerance`` go to fewer intervals (see
    docs/algorithms/modl.md#comparing-costs); ties between split points to the first. Returns the
    ``(I,)`` last atom of each interval.
    """
    n = costs.shape[0]
    # Lower bound on Σ part over every partition, whatever I: the unconstrained programme.
    free = np.empty(n)
    for b in range(n):
        value = costs[b, 0]
        if b:
            lowest = free[0] + costs[b, 1]
            for a in range(2, b + 1):
                candidate = free[a - 1] + costs[b, a]
                if candidate < lowest:
                    lowest = candidate
            if lowest < value:
                value = lowest
        free[b] = value
    floor = free[n - 1]
    prior_floor = np.empty(n + 1)  # min of prior[I'] over I' ≥ I (to the end of ``prior``)
    running = prior[prior.shape[0] - 1]
    for size in range(prior.shape[0] - 1, -1, -1):
        if prior[size] < running:
            running = prior[size]
        if size <= n:
            prior_floor[size] = running

    best_by_size = np.empty(n)  # D[I − 1][b], then D[I][b]
    new = np.empty(n)
    for b in range(n):
        best_by_size[b] = costs[b, 0]  # D[1][b]
    totals = np.empty(n + 1)
    totals[0] = np.inf
    totals[1] = prior[1] + best_by_size[n - 1]
    best = totals[1]
    n_totals = 2
    # back[I, b]: first atom of the last interval of D[I][b]; rows are written up to the last I tried
    back = np.empty((n + 1, n), dtype=np.int64)
    for size in range(2, n + 1):
        if prior_floor[size] + floor >= best:
            break
        for b in range(size - 1):
            new[b] = np.inf
        for b in range(size - 1, n):
            # first atom a of the last interval: size − 1 ≤ a ≤ b (a > b costs +inf), first minimum
            lowest = best_by_size[size - 2] + costs[b, size - 1]
            arg = size - 1
            for a in range(size, b + 1):
                candidate = best_by_size[a - 1] + costs[b, a]
                if candidate < lowest:
                    lowest = candidate
                    arg = a
            new[b] = lowest
            back[size, b] = arg
        best_by_size, new = new, best_by_size
        totals[size] = prior[size] + best_by_size[n - 1]
        if totals[size] < best:
            best = totals[size]
        n_totals = size + 1

    lowest = totals[0]
    for size in range(1, n_totals):
        if totals[size] < lowest:
            lowest = totals[size]
    chosen = 0
    while not totals[chosen] <= lowest + cost_tolerance:
        chosen += 1
    ends = np.empty(chosen, dtype=np.int64)
    b = n - 1
    for i in range(chosen, 1, -1):
        ends[i - 1] = b
        b = back[i, b] - 1
    ends[0] = b
    return ends


# --------------------------------------------------------------------------------------------
# Greedy bottom-up merge (docs/algorithms/modl.md#discretization).


@_inline
def _heap_less(deltas, nodes, stamps, a, b):
    # Lexicographic order of (Δ, node, version), as Python compares the heap's tuples.
    if deltas[a] != deltas[b]:
        return deltas[a] < deltas[b]
    if nodes[a] != nodes[b]:
        return nodes[a] < nodes[b]
    return stamps[a] < stamps[b]


@_inline
def _heap_swap(deltas, nodes, stamps, a, b):
    deltas[a], deltas[b] = deltas[b], deltas[a]
    nodes[a], nodes[b] = nodes[b], nodes[a]
    stamps[a], stamps[b] = stamps[b], stamps[a]


@_inline
def _heap_push(deltas, nodes, stamps, size, delta, node, stamp):
    deltas[size] = delta
    nodes[size] = node
    stamps[size] = stamp
    child = size
    while child > 0:
        parent = (child - 1) // 2
        if not _heap_less(deltas, nodes, stamps, child, parent):
            break
        _heap_swap(deltas, nodes, stamps, child, parent)
        child = parent
    return size + 1


@_inline
def _heap_pop(deltas, nodes, stamps, size):
    """Move the least entry to index ``size − 1`` and restore the heap on the first ``size − 1``."""
    size -= 1
    _heap_swap(deltas, nodes, stamps, 0, size)
    parent = 0
    while True:
        child = 2 * parent + 1
        if child >= size:
            break
        if child + 1 < size and _heap_less(deltas, nodes, stamps, child + 1, child):
            child += 1
        if not _heap_less(deltas, nodes, stamps, child, parent):
            break
        _heap_swap(deltas, nodes, stamps, child, parent)
        parent = child
    return size


@_jit
def greedy_merge_ends(atoms, prior, table, log_gamma_classes, cost_tolerance):
    """Merge the best adjacent pair down to one interval; keep the best I (greedy search).

    ``atoms`` ``(B, J)`` int64. A heap of (Δ part cost, left node, version) with lazy deletion;
    nodes are runs of atoms named by their first atom, in a doubly linked list. Ties within
    ``cost_tolerance`` go to the state after the most merges. O(B log B · J) time.
    """
    n, n_classes = atoms.shape
    scratch = np.empty(n_classes)
    prefix = _prefix_sums(atoms)
    rows = np.empty((n, n_classes), dtype=np.int64)
    for i in range(n):
        for c in range(n_classes):
            rows[i, c] = atoms[i, c]
    pair = np.empty(n_classes, dtype=np.int64)
    part = np.empty(n)
    merged = np.empty(n)  # cost of node i ∪ its successor (the last node has none)
    merged[n - 1] = 0.0
    for i in range(n):
        part[i] = _interval_cost(prefix, i, i + 1, table, log_gamma_classes, scratch)
    for i in range(n - 1):
        merged[i] = _interval_cost(prefix, i, i + 2, table, log_gamma_classes, scratch)
    following = np.empty(n, dtype=np.int64)
    preceding = np.empty(n, dtype=np.int64)
    version = np.empty(n, dtype=np.int64)
    for i in range(n):
        following[i] = i + 1 if i < n - 1 else -1
        preceding[i] = i - 1
        version[i] = 0

    capacity = 3 * n + 1  # n − 1 entries, then at most two pushes a merge
    heap_deltas = np.empty(capacity)
    heap_nodes = np.empty(capacity, dtype=np.int64)
    heap_stamps = np.empty(capacity, dtype=np.int64)
    heap_size = 0
    for i in range(n - 1):
        heap_size = _heap_push(
            heap_deltas, heap_nodes, heap_stamps, heap_size, merged[i] - part[i] - part[i + 1], i, 0
        )

    total_parts = python_sum(part, n)  # the Python code's sum(part)
    totals = np.empty(n)
    totals[0] = prior[n] + total_parts
    n_totals = 1
    removed = np.empty(max(n - 1, 0), dtype=np.int64)  # last atom of the left node, per merge
    size = n
    while heap_size > 0:
        heap_size = _heap_pop(heap_deltas, heap_nodes, heap_stamps, heap_size)
        delta = heap_deltas[heap_size]
        i = heap_nodes[heap_size]
        if heap_stamps[heap_size] != version[i]:
            continue
        j = following[i]
        # merge node j into node i
        removed[n_totals - 1] = j - 1
        for c in range(n_classes):
            rows[i, c] += rows[j, c]
        part[i] = merged[i]
        total_parts += delta
        size -= 1
        totals[n_totals] = prior[size] + total_parts
        n_totals += 1
        k = following[j]
        following[i] = k
        version[j] = -1
        version[i] += 1
        if k >= 0:
            preceding[k] = i
            for c in range(n_classes):
                pair[c] = rows[i, c] + rows[k, c]
            merged[i] = _row_cost(pair, table, log_gamma_classes, scratch)
            heap_size = _heap_push(
                heap_deltas, heap_nodes, heap_stamps, heap_size, merged[i] - part[i] - part[k], i, version[i]
            )
        p = preceding[i]
        if p >= 0:
            version[p] += 1
            for c in range(n_classes):
                pair[c] = rows[p, c] + rows[i, c]
            merged[p] = _row_cost(pair, table, log_gamma_classes, scratch)
            heap_size = _heap_push(
                heap_deltas, heap_nodes, heap_stamps, heap_size, merged[p] - part[p] - part[i], p, version[p]
            )

    lowest = totals[0]
    for t in range(1, n_totals):
        if totals[t] < lowest:
            lowest = totals[t]
    # the state after the most merges whose total is within tolerance of the best
    steps = n_totals - 1
    while not totals[steps] <= lowest + cost_tolerance:
        steps -= 1
    keep = np.empty(n, dtype=np.bool_)
    for i in range(n):
        keep[i] = True
    for t in range(steps):
        keep[removed[t]] = False
    ends = np.empty(n - steps, dtype=np.int64)
    size = 0
    for i in range(n):
        if keep[i]:
            ends[size] = i
            size += 1
    return ends


# --------------------------------------------------------------------------------------------
# Post-optimisation of the greedy search (docs/algorithms/modl.md#discretization).


@_jit
def _best_recut(prefix, ends, part, width, window, table, log_gamma_classes, scratch):
    """Best re-cut into two of the ``width`` intervals from ``window``: (Δ Σ part, cut).

    Δ is +inf when the window has no candidate cut (or, for width 2, only its current boundary);
    the cut is the last atom of the new left interval, the first one reaching the minimum.
    """
    first = ends[window - 1] + 1 if window > 0 else 0
    last = ends[window + width - 1]
    if last == first:
        return np.inf, 0
    old = part[window]
    for extra in range(1, width):
        old = old + part[window + extra]
    best = np.inf
    best_cut = -1
    boundary = ends[window] if width == 2 else -1
    for cut in range(first, last):
        if cut == boundary:
            continue  # re-cutting at the current boundary is no move
        left = _interval_cost(prefix, first, cut + 1, table, log_gamma_classes, scratch)
        right = _interval_cost(prefix, cut + 1, last + 1, table, log_gamma_classes, scratch)
        delta = left + right - old
        if delta < best:
            best = delta
            best_cut = cut
    if best_cut < 0:
        best_cut = first  # every candidate is +inf: the first candidate reaches the minimum
    return best, best_cut


@_inline
def _argmin(values, length):
    arg = 0
    for i in range(1, length):
        if values[i] < values[arg]:
            arg = i
    return arg


@_jit
def post_optimise(prefix, initial_ends, prior, table, log_gamma_classes):
    """Split, MergeSplit and MergeMergeSplit moves until none improves (post-optimisation).

    A move re-cuts a window of ``width`` consecutive intervals (1: Split, 2: MergeSplit,
    3: MergeMergeSplit) into two. The best re-cut of every window is cached per width and, after a
    move, recomputed only for the windows that overlap the two new intervals. The best improving
    move is applied (ties: MergeMergeSplit, then MergeSplit, then Split); a MergeMergeSplit of zero
    cost is still taken, as it removes an interval. At most 4·B + 10 moves.
    """
    n_atoms = prefix.shape[0] - 1
    scratch = np.empty(prefix.shape[1])
    capacity = n_atoms + 1
    ends = np.empty(capacity, dtype=np.int64)
    n_parts = initial_ends.shape[0]
    for i in range(n_parts):
        ends[i] = initial_ends[i]
    part = np.empty(capacity)
    for i in range(n_parts):
        first = ends[i - 1] + 1 if i > 0 else 0
        part[i] = _interval_cost(prefix, first, ends[i] + 1, table, log_gamma_classes, scratch)
    # best re-cut of each window, by width − 1: (3, capacity) deltas and cuts, and their lengths
    deltas = np.empty((3, capacity))
    cuts = np.empty((3, capacity), dtype=np.int64)
    lengths = np.empty(3, dtype=np.int64)
    for width in range(1, 4):
        n_windows = max(n_parts - width + 1, 0)
        for window in range(n_windows):
            d, c = _best_recut(prefix, ends, part, width, window, table, log_gamma_classes, scratch)
            deltas[width - 1, window] = d
            cuts[width - 1, window] = c
        lengths[width - 1] = n_windows
    new_deltas = np.empty(capacity)
    new_cuts = np.empty(capacity, dtype=np.int64)

    for _ in range(4 * n_atoms + 10):
        # candidates in priority order (MergeMergeSplit, MergeSplit, Split)
        chosen_width, chosen_window = 0, 0
        chosen_delta = np.inf
        zero_window = -1
        for width in range(3, 0, -1):
            length = lengths[width - 1]
            if length == 0:
                continue
            window = _argmin(deltas[width - 1], length)
            value = deltas[width - 1, window]
            if not np.isfinite(value):
                continue  # no candidate cut in any window of this width
            # prior change: width 1 → I + 1, width 2 → I, width 3 → I − 1
            delta = value + prior[n_parts - width + 2] - prior[n_parts]
            if delta < _STRICT and delta < chosen_delta:
                chosen_delta, chosen_width, chosen_window = delta, width, window
            if width == 3 and delta <= -_STRICT:
                zero_window = window
        if chosen_width == 0:
            if zero_window < 0:
                break
            chosen_width, chosen_window = 3, zero_window
        width, k = chosen_width, chosen_window
        cut = cuts[width - 1, k]
        # ends ← ends[:k] + [cut] + ends[k + width − 1:]; part likewise with the two new parts
        shift = 2 - width
        if shift > 0:
            for i in range(n_parts - 1, k - 1, -1):
                ends[i + shift] = ends[i]
                part[i + shift] = part[i]
        elif shift < 0:
            for i in range(k + width - 1, n_parts):
                ends[i + shift] = ends[i]
            for i in range(k + width, n_parts):
                part[i + shift] = part[i]
        ends[k] = cut
        n_new = n_parts + shift
        first = ends[k - 1] + 1 if k > 0 else 0
        part[k] = _interval_cost(prefix, first, cut + 1, table, log_gamma_classes, scratch)
        part[k + 1] = _interval_cost(prefix, cut + 1, ends[k + 1] + 1, table, log_gamma_classes, scratch)
        for w in range(1, 4):
            # windows low..high overlap the new intervals k and k + 1; the others keep their
            # cached re-cut (shifted by the change in the number of intervals)
            old_length = lengths[w - 1]
            low, high = max(0, k - w + 1), min(k + 1, n_new - w)
            tail = high + 1 + width - 2
            size = 0
            for i in range(min(low, old_length)):
                new_deltas[size] = deltas[w - 1, i]
                new_cuts[size] = cuts[w - 1, i]
                size += 1
            for window in range(low, high + 1):
                d, c = _best_recut(prefix, ends, part, w, window, table, log_gamma_classes, scratch)
                new_deltas[size] = d
                new_cuts[size] = c
                size += 1
            for i in range(min(max(tail, 0), old_length), old_length):
                new_deltas[size] = deltas[w - 1, i]
                new_cuts[size] = cuts[w - 1, i]
                size += 1
            for i in range(size):
                deltas[w - 1, i] = new_deltas[i]
                cuts[w - 1, i] = new_cuts[i]
            lengths[w - 1] = size
        n_parts = n_new
    result = np.empty(n_parts, dtype=np.int64)
    for i in range(n_parts):
        result[i] = ends[i]
    return result


# --------------------------------------------------------------------------------------------
# Entry points.


@_jit
def search(atoms, prior, table, log_gamma_classes, method, exact_max_atoms, exact_limit_atoms, cost_tolerance):
    """Best cut of ``(B, J)`` int64 atoms into intervals for a prior ``(≥ B + 1,)`` on I only.

    ``method`` is AUTO, EXACT or GREEDY (anything else: INVALID). Returns ``(ends, n_merged,
    status)``: the last original atom of each interval (empty unless a search ran or one merged
    atom remains), the number of atoms after the pure-run merge, and RAN_EXACT, RAN_GREEDY,
    RAN_NOTHING (one merged atom), TOO_MANY_ATOMS or BAD_METHOD.
    """
    merged, last = merge_pure_runs(atoms)
    n = merged.shape[0]
    if n == 1:
        return last, n, RAN_NOTHING
    if method == AUTO:
        method = EXACT if n <= exact_max_atoms else GREEDY
    if method == EXACT and n > exact_limit_atoms:
        return np.empty(0, dtype=np.int64), n, TOO_MANY_ATOMS
    if method != EXACT and method != GREEDY:
        return np.empty(0, dtype=np.int64), n, BAD_METHOD
    prefix = _prefix_sums(merged)
    if method == EXACT:
        ends = optimal_ends(interval_cost_matrix(prefix, table, log_gamma_classes), prior, cost_tolerance)
    else:
        initial = greedy_merge_ends(merged, prior, table, log_gamma_classes, cost_tolerance)
        ends = post_optimise(prefix, initial, prior, table, log_gamma_classes)
    for i in range(ends.shape[0]):
        ends[i] = last[ends[i]]  # merged atoms → original atoms
    return ends, n, RAN_EXACT if method == EXACT else RAN_GREEDY


@_inline
def _partition_cost(prefix, ends, prior, table, log_gamma_classes, scratch, costs):
    # c(M) = prior(I) + Σ part, the sum in NumPy's order (``partition_cost``)
    for i in range(ends.shape[0]):
        first = ends[i - 1] + 1 if i > 0 else 0
        costs[i] = _interval_cost(prefix, first, ends[i] + 1, table, log_gamma_classes, scratch)
    return prior[ends.shape[0]] + pairwise_sum(costs, 0, ends.shape[0])


@_jit
def score(atoms, ends, prior, table, log_gamma_classes, cost_tolerance, level_tolerance, null_construction):
    """Costs of ``discretize`` for the intervals ending at ``ends`` of ``(B, J)`` int64 atoms.

    Returns ``(ends, cost, null_cost, prior_cost)``: the model kept (the null model unless the
    given one beats it by the tolerances of docs/algorithms/modl.md#comparing-costs), c(M), c(M0) and
    B(X) = c(M) − data cost − null construction cost (≥ 0), each summed as ``discretize`` did
    with NumPy.
    """
    n, n_classes = atoms.shape
    prefix = _prefix_sums(atoms)
    scratch = np.empty(n_classes)
    costs = np.empty(n)
    null_ends = np.empty(1, dtype=np.int64)
    null_ends[0] = n - 1
    null_cost = _partition_cost(prefix, null_ends, prior, table, log_gamma_classes, scratch, costs)
    cost = _partition_cost(prefix, ends, prior, table, log_gamma_classes, scratch, costs)
    # the null model unless this one beats it by the tolerances (docs/algorithms/modl.md#comparing-costs)
    if ends.shape[0] > 1 and not (cost < null_cost - cost_tolerance and 1.0 - cost / null_cost >= level_tolerance):
        ends, cost = null_ends, null_cost
    # B(X) = c(M) − Σ_i (log N_i! − Σ_j log N_ij!) − null construction cost (``prior_cost``)
    for i in range(ends.shape[0]):
        first = ends[i - 1] + 1 if i > 0 else 0
        costs[i] = _data_cost(prefix, first, ends[i] + 1, table, scratch)
    value = cost - pairwise_sum(costs, 0, ends.shape[0]) - null_construction
    if 0.0 > value:  # Python's max(value, 0.0)
        value = 0.0
    return ends, cost, null_cost, value


#: ``status`` of :func:`search_score_many` for a table of one atom: no search ran (``"null"``).
NO_SEARCH = 3


@_jit
def search_score_many(atoms, row_starts, priors, prior_starts, table, log_gamma_classes, method,
                      exact_max_atoms, exact_limit_atoms, cost_tolerance, level_tolerance, null_construction):  # fmt: skip
    """:func:`search` then :func:`score` on each of T tables stacked in ``(R, J)`` int64 ``atoms``.

    Table ``t`` is rows ``row_starts[t]:row_starts[t + 1]`` (at least one) with the prior
    ``priors[prior_starts[t]:prior_starts[t + 1]]``; a table of one atom runs no search (its one
    interval, status :data:`NO_SEARCH`), as ``discretize`` does. The same calls as ``discretize``
    makes per table, so the same ends and costs to the last bit, without one call from Python
    per table. Returns ``(ends (R,), n_ends (T,), cost (T,), null_cost (T,), prior_cost (T,),
    status (T,))``: the ends of table ``t`` are ``ends[row_starts[t]:row_starts[t] + n_ends[t]]``,
    indices of its own atoms.
    """
    n_tables = row_starts.shape[0] - 1
    ends_out = np.empty(atoms.shape[0], dtype=np.int64)
    n_ends = np.empty(n_tables, dtype=np.int64)
    costs = np.empty(n_tables)
    null_costs = np.empty(n_tables)
    prior_costs = np.empty(n_tables)
    status = np.empty(n_tables, dtype=np.int64)
    for t in range(n_tables):
        lo, hi = row_starts[t], row_starts[t + 1]
        block = atoms[lo:hi]
        prior = priors[prior_starts[t] : prior_starts[t + 1]]
        if hi - lo == 1:
            ends = np.zeros(1, dtype=np.int64)
            ran = NO_SEARCH
        else:
            ends, _, ran = search(block, prior, table, log_gamma_classes, method, exact_max_atoms, exact_limit_atoms,
                                  cost_tolerance)  # fmt: skip
        kept, cost, null_cost, b_x = score(block, ends, prior, table, log_gamma_classes, cost_tolerance, level_tolerance,
                                           null_construction)  # fmt: skip
        for i in range(kept.shape[0]):
            ends_out[lo + i] = kept[i]
        n_ends[t] = kept.shape[0]
        costs[t] = cost
        null_costs[t] = null_cost
        prior_costs[t] = b_x
        status[t] = ran
    return ends_out, n_ends, costs, null_costs, prior_costs, status
