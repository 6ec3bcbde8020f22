"""The search engine of MODL's interval partitions (docs/algorithms/modl.md#discretization): ``(B, J)``
atoms of observed-class counts and a prior by number of intervals → the last atom of each interval
of least cost. ``discretization.py`` (numeric tables) and ``grouping.py`` (two-class value
grouping) call it.

Two searches share one engine, :func:`search_intervals` (for the grouping's use:
docs/algorithms/modl.md#grouping):

- ``"exact"``: the dynamic programme over the number of intervals, O(I_max · B² · J) time; it
  stops increasing I once no larger I can beat the best total (prior suffix minimum + the best
  unconstrained sum of part costs is a lower bound).
- ``"greedy"``: bottom-up merges of adjacent intervals then post-optimisation by Split,
  MergeSplit and MergeMergeSplit moves (Khiops' ``OptimizedGreedyMerge``), O(B log B) merges, then
  O(B · J) work to price every move once and only local re-pricing after each move applied.

Both first merge adjacent bins that are pure in the same class: the part cost is concave along
such a block, so an optimal cut never falls inside it, and the searches are unchanged in result
but run on fewer atoms.

Where they run (docs/algorithms/modl.md#the-automatic-switch). Integer counts (unit weights: the
GKClass tables the classifier rebuilds) go to compiled kernels (``modl._kernels``, numba) that also
compute c(M), c(M0) and B(X), and give the intervals and costs of the former pure-Python/NumPy
code to the last bit (property-tested against it, ``tests/modl/reference_discretization.py``).
Fractional counts (weights, cPiD halving, Gaussian virtual bins), more than 128 classes, or
2N + J + 2 ≥ 2^21 (past the lΓ table) keep NumPy part costs, with the former results.

``method="auto"`` runs the exact programme when at most :data:`EXACT_MAX_ATOMS` (= 100) atoms
remain after the pure-run merge, and the greedy search otherwise; the measurements behind that
switch are in docs/algorithms/modl.md#the-automatic-switch.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from . import costs as _costs
from .costs import part_cost_function, part_costs
from .partition import COST_TOLERANCE

__all__ = ["EXACT_MAX_ATOMS", "EXACT_LIMIT_ATOMS", "partition_cost", "search_intervals"]

#: Largest number of atoms (bins left after merging pure runs) that ``method="auto"`` gives to the
#: exact dynamic programme; see the module docstring for the measurements behind it.
EXACT_MAX_ATOMS = 100
#: ``method="exact"`` refuses more atoms than this: its (B, B) cost matrix would pass 32 MB.
EXACT_LIMIT_ATOMS = 2000


# --------------------------------------------------------------------------------------------
# The search engine: atoms (B, J) of observed-class counts → last atom of each interval.


def _merge_pure_runs(atoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge runs of adjacent atoms pure in the same class (docs/algorithms/modl.md#discretization).

    Returns the merged ``(B', J)`` counts and, for each merged atom, the index of its last atom.
    """
    positive = atoms > 0
    pure = np.where(positive.sum(axis=1) == 1, positive.argmax(axis=1), -1)
    starts = np.ones(len(atoms), dtype=bool)
    starts[1:] = ~((pure[1:] >= 0) & (pure[1:] == pure[:-1]))
    first = np.flatnonzero(starts)
    merged = np.add.reduceat(atoms, first, axis=0)
    last = np.append(first[1:] - 1, len(atoms) - 1)
    return merged, last


def _interval_costs(prefix: np.ndarray, ends: np.ndarray, cost=part_costs) -> np.ndarray:
    starts = np.concatenate([[0], ends[:-1] + 1])
    return cost(prefix[ends + 1] - prefix[starts])


def partition_cost(prefix: np.ndarray, ends: np.ndarray, prior: np.ndarray) -> float:
    """c(M) of the intervals ending at atoms ``ends``, from ``(B + 1, J)`` prefix sums of counts."""
    return float(prior[len(ends)] + _interval_costs(prefix, ends).sum())


def _optimal_ends(prefix: np.ndarray, prior: np.ndarray, cost=part_costs) -> np.ndarray:
    """The exact dynamic programme on ``(B + 1, J)`` prefix sums priced by ``cost`` (the fractional-count path).

    The ``(B, B)`` matrix of part costs is priced by ``cost`` in one call, then the compiled
    programme (``_kernels.optimal_ends``) runs on it. O(B² · J + I_max · B²).
    """
    n = prefix.shape[0] - 1
    first, last = np.triu_indices(n)
    # part_cost[a, b]: cost of one interval made of atoms a..b (+inf when a > b); (n, n).
    part_cost = np.full((n, n), np.inf)
    part_cost[first, last] = cost(prefix[last + 1] - prefix[first])
    by_last = np.ascontiguousarray(part_cost.T)  # the kernel reads the costs by last atom: [b, a]
    return _kernels().optimal_ends(by_last, np.ascontiguousarray(prior, dtype=float), COST_TOLERANCE)


def _greedy_merge_ends(atoms: np.ndarray, prior: np.ndarray, cost=part_costs) -> np.ndarray:
    """Greedy bottom-up merge: merge the best adjacent pair down to one interval, keep the best I.

    The fractional-count path (integer counts go to ``_kernels.greedy_merge_ends``). A heap of
    (Δ part cost, left node, version) with lazy deletion; nodes are runs of atoms named by their
    first atom, in a doubly linked list. O(B log B) time.
    """
    n, n_classes = atoms.shape
    lgamma = math.lgamma
    log_gamma_classes = lgamma(n_classes)
    prior = prior.tolist()

    # Rows hold counts + 1, so that part(i) = lΓ(Σ row) − lΓ(J) − Σ lΓ(row) (docs/algorithms/modl.md#costs).
    def row_cost(row):
        return lgamma(sum(row)) - log_gamma_classes - sum(map(lgamma, row))

    rows = (atoms + 1.0).tolist()
    part = cost(atoms).tolist()
    merged = cost(atoms[:-1] + atoms[1:]).tolist() + [0.0]  # cost of node i ∪ its successor
    following = list(range(1, n)) + [-1]
    preceding = list(range(-1, n - 1))
    version = [0] * n
    heap = [(merged[i] - part[i] - part[i + 1], i, 0) for i in range(n - 1)]
    heapq.heapify(heap)
    heappop, heappush = heapq.heappop, heapq.heappush

    total_parts = sum(part)
    totals = [prior[n] + total_parts]
    removed = []  # last atom of the left node, for each merge in order
    size = n
    while heap:
        delta, i, stamp = heappop(heap)
        if stamp != version[i]:
            continue
        j = following[i]
        # merge node j into node i
        removed.append(j - 1)
        row = rows[i] = [x + y - 1.0 for x, y in zip(rows[i], rows[j])]
        part[i] = merged[i]
        total_parts += delta
        size -= 1
        totals.append(prior[size] + total_parts)
        k = following[j]
        following[i] = k
        version[j] = -1
        version[i] += 1
        if k >= 0:
            preceding[k] = i
            merged[i] = row_cost([x + y - 1.0 for x, y in zip(row, rows[k])])
            heappush(heap, (merged[i] - part[i] - part[k], i, version[i]))
        p = preceding[i]
        if p >= 0:
            version[p] += 1
            merged[p] = row_cost([x + y - 1.0 for x, y in zip(rows[p], row)])
            heappush(heap, (merged[p] - part[p] - part[i], p, version[p]))

    totals = np.array(totals)
    # the state after the most merges whose total is within tolerance of the best
    steps = int(np.flatnonzero(totals <= totals.min() + COST_TOLERANCE)[-1])
    keep = np.ones(n, dtype=bool)
    keep[removed[:steps]] = False
    return np.flatnonzero(keep)


def _best_recuts(prefix, ends, part, width, windows, cost=part_costs):
    """Best re-cut into two intervals of each window of ``width`` intervals starting at ``windows``.

    Returns ``(len(windows),)`` arrays: the change of Σ part of the best cut (+inf when there is no
    candidate) and that cut (the last atom of the new left interval). Vectorised over all candidate
    cuts of all windows: O(Σ window lengths · J).
    """
    n_windows = len(windows)
    best = np.full(n_windows, np.inf)
    best_cut = np.zeros(n_windows, dtype=np.intp)
    if n_windows == 0:
        return best, best_cut
    first = np.where(windows > 0, ends[windows - 1] + 1, 0)
    last = ends[windows + width - 1]
    lengths = last - first  # candidate cuts c in [first, last − 1]
    total = int(lengths.sum())
    if total == 0:
        return best, best_cut
    window = np.repeat(np.arange(n_windows), lengths)
    offsets = np.cumsum(lengths) - lengths
    cut = first[window] + (np.arange(total) - offsets[window])
    old = part[windows]
    for extra in range(1, width):
        old = old + part[windows + extra]
    middle = prefix[cut + 1]
    # (2, total, J): counts of the new left and right intervals of every candidate cut
    halves = cost(np.stack([middle - prefix[first[window]], prefix[last[window] + 1] - middle]))
    delta = halves[0] + halves[1] - old[window]
    if width == 2:
        delta[cut == ends[windows][window]] = np.inf  # re-cutting at the current boundary is no move
    filled = lengths > 0
    minima = np.minimum.reduceat(delta, offsets[filled])
    best[filled] = minima
    # first candidate reaching its window's minimum
    at_min = np.flatnonzero(delta == best[window])
    _, first_hit = np.unique(window[at_min], return_index=True)
    hit = at_min[first_hit]
    best_cut[window[hit]] = cut[hit]
    return best, best_cut


def _post_optimise(prefix: np.ndarray, ends: np.ndarray, prior: np.ndarray, cost=part_costs) -> np.ndarray:
    """Post-optimisation: Split, MergeSplit and MergeMergeSplit moves until none improves.

    The fractional-count path (integer counts go to ``_kernels.post_optimise``).
    A move re-cuts a window of ``width`` consecutive intervals (1: Split, 2: MergeSplit,
    3: MergeMergeSplit) into two. The best re-cut of every window is cached per width and, after a
    move, recomputed only for the windows that overlap the two new intervals, so a move costs
    O(I + local window lengths · J) instead of O(B · J).
    """
    n_atoms = prefix.shape[0] - 1
    ends = np.asarray(ends, dtype=np.intp)
    part = _interval_costs(prefix, ends, cost)
    widths = (3, 2, 1)  # priority order for ties: MergeMergeSplit, MergeSplit, Split
    best = {w: _best_recuts(prefix, ends, part, w, np.arange(max(len(ends) - w + 1, 0)), cost) for w in widths}
    strict = -1e-9  # an improving move must lower the cost by more than rounding noise
    for _ in range(4 * n_atoms + 10):
        n_parts = len(ends)
        candidates = []  # (delta, priority, width, window)
        for priority, width in enumerate(widths):
            deltas, _ = best[width]
            if len(deltas) == 0:
                continue
            window = int(deltas.argmin())
            if not np.isfinite(deltas[window]):
                continue  # no candidate cut in any window of this width
            # prior change: width 1 → I + 1, width 2 → I, width 3 → I − 1
            delta = float(deltas[window]) + prior[n_parts - width + 2] - prior[n_parts]
            candidates.append((delta, priority, width, window))
        improving = [c for c in candidates if c[0] < strict]
        if improving:
            _, _, width, k = min(improving)
        else:
            # a MergeMergeSplit of zero cost is still taken: it removes an interval
            zero = [c for c in candidates if c[2] == 3 and c[0] <= -strict]
            if not zero:
                break
            _, _, width, k = zero[0]
        cut = int(best[width][1][k])
        ends = np.concatenate([ends[:k], [cut], ends[k + width - 1 :]])
        first = ends[k - 1] + 1 if k > 0 else 0
        new_parts = cost(
            np.stack([prefix[cut + 1] - prefix[first], prefix[ends[k + 1] + 1] - prefix[cut + 1]])
        )
        part = np.concatenate([part[:k], new_parts, part[k + width :]])
        n_new = len(ends)
        for w in widths:
            deltas, cuts = best[w]
            low, high = max(0, k - w + 1), min(k + 1, n_new - w)
            fresh = _best_recuts(prefix, ends, part, w, np.arange(low, high + 1), cost)
            tail = high + 1 + width - 2
            best[w] = (
                np.concatenate([deltas[:low], fresh[0], deltas[tail:]]),
                np.concatenate([cuts[:low], fresh[1], cuts[tail:]]),
            )
    return ends


def _kernels():
    """The compiled kernels, imported on first use (importing numba costs a fifth of a second)."""
    global _KERNELS
    if _KERNELS is None:
        from . import _kernels as module

        _KERNELS = module
    return _KERNELS


_KERNELS = None
_KERNEL_MAX_CLASSES = 128  # _kernels.MAX_CLASSES (kept here so that numba loads only when used)
_METHOD_CODES = {"auto": 0, "exact": 1, "greedy": 2}  # _kernels.AUTO, EXACT, GREEDY; others INVALID


def _integer_lookup(atoms: np.ndarray, total: float, nonnegative: bool = False):
    """``(lΓ table, lΓ(J), int64 atoms)`` when the kernels price ``(B, J)`` atoms exactly, else None.

    The condition is that of ``part_cost_function``: integer counts, and twice the total below the
    table limit (searches price unions of two parts), so that every lΓ comes from the table; and
    at most ``_kernels.MAX_CLASSES`` (= 128) classes. ``nonnegative``: the caller has checked that
    every count is ≥ 0 (``_prepare`` does), so the sign test is skipped.
    """
    n_classes = atoms.shape[1] if atoms.ndim == 2 else 0
    if atoms.size == 0 or n_classes > _KERNEL_MAX_CLASSES:
        return None
    size = 2 * int(total) + n_classes + 2
    if size >= _costs._TABLE_LIMIT:
        return None
    integers = atoms.astype(np.int64, order="C")  # one memory layout: one compiled version of each kernel
    # (``np.array_equal`` of two arrays of one shape, without its Python overhead)
    if not (integers == atoms).all() or (not nonnegative and integers.min() < 0):
        return None  # (negative counts are no table; the kernels would read outside it)
    return _costs._grow_table(size), math.lgamma(n_classes), integers


def _method_used(status: int, method: str, n_merged: int) -> str:
    """Name of the search a kernel ran, or the ValueError of the Python search for that input."""
    kernels = _kernels()
    if status == kernels.RAN_EXACT:
        return "exact"
    if status == kernels.RAN_GREEDY:
        return "greedy"
    if status == kernels.RAN_NOTHING:  # one atom after the pure-run merge
        return "exact" if method == "auto" else method
    if status == kernels.TOO_MANY_ATOMS:
        raise _too_many_atoms(n_merged)
    raise _unknown_method(method)


def _too_many_atoms(n_merged: int) -> ValueError:
    return ValueError(
        f"method='exact' is O(B³) in time and O(B²) in memory and accepts at most {EXACT_LIMIT_ATOMS} bins "
        f"after merging pure runs, got {n_merged}; use method='auto' or 'greedy'"
    )


def _unknown_method(method) -> ValueError:
    return ValueError(f"method must be 'auto', 'exact' or 'greedy', got {method!r}")


def search_intervals(atoms: np.ndarray, prior: np.ndarray, method: str = "auto") -> tuple[np.ndarray, str]:
    """Best cut of a sequence of atoms into intervals for a prior that depends on I only.

    Where each search runs (compiled kernels or NumPy): see the module docstring.

    Parameters
    ----------
    atoms
        ``(B, J)`` non-negative counts, every row non-empty, J = observed classes only.
    prior
        ``(B + 1,)`` prior cost by number of intervals (entry 0 unused), non-decreasing in I for
        the pure-run merge to be exact (true of every MODL prior here).
    method
        ``"exact"``, ``"greedy"`` or ``"auto"`` (exact up to :data:`EXACT_MAX_ATOMS` atoms after
        the pure-run merge).

    Returns
    -------
    ends, method
        ``(I,)`` index of the last atom of each interval (increasing, the last is B − 1), and the
        search that ran.
    """
    atoms = np.asarray(atoms, dtype=float)
    prior = np.ascontiguousarray(prior, dtype=float)
    if atoms.ndim == 2 and len(prior) < len(atoms) + 1:
        raise ValueError(f"prior must have at least B + 1 = {len(atoms) + 1} entries, got {len(prior)}")
    lookup = _integer_lookup(atoms, float(atoms.sum())) if atoms.ndim == 2 else None
    if lookup is not None:
        return _kernel_search(lookup, prior, method)
    merged, last = _merge_pure_runs(atoms)
    n = len(merged)
    if method == "auto":
        method = "exact" if n <= EXACT_MAX_ATOMS else "greedy"
    if n == 1:
        return last, method
    prefix = np.concatenate([np.zeros((1, merged.shape[1])), np.cumsum(merged, axis=0)])
    cost = part_cost_function(merged)
    lookup = _integer_lookup(merged, float(merged.sum())) if cost is not part_costs else None
    if lookup is not None:
        # fractional atoms whose pure runs sum to integers: the integer kernels, on the merged atoms
        ends, used = _kernel_search(lookup, prior, method)
        return last[ends], used
    if method == "exact" and n > EXACT_LIMIT_ATOMS:
        raise _too_many_atoms(n)
    if method == "exact":
        ends = _optimal_ends(prefix, prior, cost)
    elif method == "greedy":
        ends = _post_optimise(prefix, _greedy_merge_ends(merged, prior, cost), prior, cost)
    else:
        raise _unknown_method(method)
    return last[ends], method


def _kernel_search(lookup, prior: np.ndarray, method: str) -> tuple[np.ndarray, str]:
    table, log_gamma_classes, integers = lookup
    ends, n_merged, status = _kernels().search(
        integers,
        prior,
        table,
        log_gamma_classes,
        _METHOD_CODES.get(method, 3),  # _kernels.INVALID
        EXACT_MAX_ATOMS,
        EXACT_LIMIT_ATOMS,
        COST_TOLERANCE,
    )
    return ends, _method_used(status, method, n_merged)
