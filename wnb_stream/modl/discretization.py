"""MODL discretization of a numeric table into intervals (docs/algorithms/modl.md#discretization).

The table is a level-1 ``Bins`` value: ordered elementary bins × class counts. A discretization
cuts the sequence of bins into intervals of consecutive bins; MODL picks the one of least cost
c(M) = prior(I) + Σ_i part(i) (docs/algorithms/modl.md#costs), where part(i) codes the class
distribution of interval i and its data, and prior(I) depends on the number of intervals only.

Two searches share one engine, :func:`search_intervals`, also used by the two-class value
grouping (docs/algorithms/modl.md#grouping):

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

import functools
import heapq
import math

import numpy as np

from ..tables import Bins
from . import costs as _costs
from ._common import (
    LEVEL_TOLERANCE,
    check_options,
    is_informative,
    level,
    null_construction_cost,
    observed_columns,
    prior_cost,
)
from .costs import bounded_universal_code_length, log_binomial, log_gamma, part_cost_function, part_costs
from .partition import COST_TOLERANCE, INTERVAL_CRITERIA, Intervals

__all__ = [
    "EXACT_MAX_ATOMS",
    "EXACT_LIMIT_ATOMS",
    "discretize",
    "discretization_prior",
    "search_intervals",
    "null_intervals",
]

#: Largest number of atoms (bins left after merging pure runs) that ``method="auto"`` gives to the
#: exact dynamic programme; see the module docstring for the measurements behind it.
EXACT_MAX_ATOMS = 100
#: ``method="exact"`` refuses more atoms than this: its (B, B) cost matrix would pass 32 MB.
EXACT_LIMIT_ATOMS = 2000

CRITERIA = INTERVAL_CRITERIA

_LN2 = math.log(2.0)


def discretization_prior(n_bins: int, n_total: float, criterion: str = "bins", selection_cost: float = 0.0) -> np.ndarray:
    """Prior cost of a discretization by its number of intervals I, ``(n_bins + 1,)`` array.

    Entry I (1 ≤ I ≤ B) is the part of c(M) that depends on I only; entry 0 is +inf.

    - ``"bins"`` (default): log 2 + [I > 1]·(c_sel + L*_{B−1}(I − 1) + (I − 1)·log(B − 1)
      − log (I − 1)!), B = number of non-empty elementary bins (docs/algorithms/modl.md#discretization);
    - ``"boulle2006"`` (Boullé 2006, MODL): log N + log C(N + I − 1, I − 1), plus c_sel when I > 1
      (our extension, so that Level accounts for multiple testing with this criterion too).

    >>> np.round(discretization_prior(4, 40.0)[1:], 6).tolist()
    [0.693147, 2.328434, 3.427046, 4.293072]
    """
    prior = np.full(n_bins + 1, np.inf)
    sizes = np.arange(1, n_bins + 1)
    if criterion == "bins":
        prior[1] = _LN2
        if n_bins > 1:
            cuts = sizes[1:] - 1  # I − 1 ≥ 1
            prior[2:] = (
                _LN2
                + selection_cost
                # Khiops KWMODLDiscretizationCosts: number of intervals by the bounded universal code
                + bounded_universal_code_length(cuts, n_bins - 1)
                # cut points as I − 1 multinomial draws among the B − 1 bin boundaries
                + cuts * math.log(n_bins - 1)
                - log_gamma(cuts + 1.0)
            )
    elif criterion == "boulle2006":
        # Boullé 2006: number of intervals uniform in [1, N], then their frequencies
        prior[1:] = math.log(n_total) + log_binomial(n_total + sizes - 1.0, sizes - 1.0)
        prior[2:] += selection_cost
    else:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    return prior


#: ``discretize`` keeps the priors of tables of at most this many bins (each ``(B + 1,)`` floats).
_PRIOR_CACHE_MAX_BINS = 4096


@functools.lru_cache(maxsize=256)
def _cached_prior(n_bins: int, n_total: float | None, criterion: str, selection_cost: float) -> np.ndarray:
    # Private: the arrays are shared between calls and handed to internal code only, which never
    # writes to them (they stay writable so that the kernels see one array type).
    return discretization_prior(n_bins, n_total, criterion, selection_cost)


def _prior(n_bins: int, n_total: float, criterion: str, selection_cost: float) -> np.ndarray:
    """``discretization_prior``, cached per (B, criterion, c_sel) — and N for ``"boulle2006"``.

    A classifier rebuilds tables of the same few sizes again and again; the "bins" prior does not
    depend on N, so the cache hits. The values are those of ``discretization_prior``.
    """
    if n_bins > _PRIOR_CACHE_MAX_BINS:
        return discretization_prior(n_bins, n_total, criterion, selection_cost)
    return _cached_prior(n_bins, n_total if criterion == "boulle2006" else None, criterion, selection_cost)


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


# --------------------------------------------------------------------------------------------
# The public entry point.


def _prepare(table: Bins) -> tuple[np.ndarray, np.ndarray, bool]:
    """Atoms of a ``Bins`` table: ``(B, J_all)`` counts, ``(B,)`` upper bounds, missing-bin flag.

    Bins with equal upper bounds are collapsed (MODL never cuts between equal values); a bin of
    missing values is placed first when the table has any; empty bins are dropped (they would
    inflate log(B − 1)). See docs/algorithms/modl.md#discretization.
    """
    bounds = np.asarray(table.upper_bounds, dtype=float)
    counts = np.asarray(table.counts, dtype=float)
    missing = np.asarray(table.missing, dtype=float)
    # The usual table (a GK summary's) has strictly increasing bounds: one comparison shows it, and
    # rules out NaN too (a NaN bound fails its comparisons), so the checks of the bounds and the
    # collapse of equal bounds below have nothing to do.
    distinct = len(bounds) > 1 and bool((bounds[1:] > bounds[:-1]).all())
    # (one reduction per check: min/max propagate NaN, so "min >= 0 and max < inf" is "finite, >= 0")
    if not distinct and len(bounds) and np.isnan(bounds.min()):
        raise ValueError("table.upper_bounds must not contain NaN")
    if not distinct and len(bounds) > 1:
        later, earlier = bounds[1:], bounds[:-1]
        if (later < earlier).any():
            raise ValueError("table.upper_bounds must be increasing")
    if counts.size and not (counts.min() >= 0.0 and counts.max() < np.inf):
        raise ValueError("table.counts must be finite and >= 0")
    # (J values: plain Python; a NaN fails both comparisons, as it fails the min/max test)
    missing_values = missing.ravel().tolist()
    if not all(0.0 <= value < math.inf for value in missing_values):
        raise ValueError("table.missing must be finite and >= 0")
    if not distinct and len(bounds) > 1:
        same = later == earlier
        if same.any():
            first = np.flatnonzero(np.concatenate([[True], ~same]))
            counts = np.add.reduceat(counts, first, axis=0)
            bounds = bounds[first]
    # a sum of counts ≥ 0 is positive exactly when one of them is (rounding is monotone)
    has_missing = any(value > 0.0 for value in missing_values)
    if has_missing:
        counts = np.vstack([missing[None, :], counts])
        bounds = np.concatenate([[np.nan], bounds])
    keep = _positive_rows(counts)
    if keep.all():
        return counts, bounds, has_missing
    return counts[keep], bounds[keep], has_missing


def _positive_rows(counts: np.ndarray) -> np.ndarray:
    """``counts.sum(axis=1) > 0``, ``(B,)``, for ``(B, J)`` counts that are finite and ≥ 0.

    A sum of non-negative floats is positive exactly when one term is, whatever the order of the
    additions (rounding is monotone), so for few classes the columns are added one by one: NumPy's
    reductions along a short last axis cost several times more on tables of this size.
    """
    n_classes = counts.shape[1]
    if not 0 < n_classes <= _COLUMN_LOOP_MAX_CLASSES:
        return counts.sum(axis=1) > 0
    total = counts[:, 0]
    for j in range(1, n_classes):
        total = total + counts[:, j]
    return total > 0


def _all_columns_positive(counts: np.ndarray) -> bool:
    """``(counts.sum(axis=0) > 0).all()`` for ``(B, J)`` counts that are finite and ≥ 0 (see above)."""
    n_classes = counts.shape[1]
    if n_classes > _COLUMN_LOOP_MAX_CLASSES:
        return bool((counts.sum(axis=0) > 0).all())
    for j in range(n_classes):
        if not counts[:, j].any():  # (a count ≥ 0 is positive when non-zero)
            return False
    return True


#: ``_positive_rows`` / ``_all_columns_positive`` loop over the columns up to this many classes.
_COLUMN_LOOP_MAX_CLASSES = 8


def _intervals(atoms, bounds, has_missing, ends, cost, null_cost, prior, classes, criterion, method, table):
    """Assemble the ``Intervals`` value from the last atom of each part."""
    if len(atoms):
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        counts = np.add.reduceat(atoms, starts, axis=0)
        upper = bounds[ends]
        if has_missing:
            if ends[0] == 0 and len(ends) > 1:
                # the missing bin is a part of its own: the numeric intervals are the other parts
                upper = upper[1:]
            upper = upper[~np.isnan(upper)]  # the bound of the missing bin is NaN
    else:
        counts = np.zeros((1, len(classes)))
        upper = np.zeros(0)
    if len(upper) == 0:
        # no numeric bin at all: one interval covering the real line
        upper = np.array([np.inf])
    # (the ``Intervals`` constructor, without the frozen dataclass's per-field overhead)
    return Intervals._assemble(
        classes=classes,
        upper_bounds=upper,
        counts=counts,
        missing_part=0 if has_missing else -1,
        cost=cost,
        null_cost=null_cost,
        level=level(cost, null_cost, len(counts)),
        prior_cost=prior,
        criterion=criterion,
        method=method,
    )


def discretize(table: Bins, *, criterion: str = "bins", method: str = "auto", selection_cost: float = 0.0) -> Intervals:
    """MODL discretization of a level-1 numeric table (docs/algorithms/modl.md#discretization).

    Parameters
    ----------
    table
        A ``Bins`` value: ``(n_bins,)`` upper bounds, ``(n_bins, n_classes)`` counts, missing counts.
    criterion
        ``"bins"`` (default: Khiops' criterion, the level-1 bins playing its partiles) or
        ``"boulle2006"`` (the prior of Boullé 2006, MODL, on N instances).
    method
        ``"auto"`` (exact up to :data:`EXACT_MAX_ATOMS` atoms, greedy beyond), ``"exact"``
        (dynamic programme, O(B³J)), ``"greedy"`` (merges + post-optimisation, O(B log B)) or
        ``"null"`` (the one-interval model, no search).
    selection_cost
        c_sel ≥ 0 charged to informative models, e.g. log K for K candidate variables
        (docs/algorithms/modl.md#level-and-prior-cost).

    Returns
    -------
    Intervals
        The best partition found. J in the costs is the number of classes with a positive count;
        missing values form a bin before the first bin; a variable whose best model is the null
        model gets one part and level 0.

    Examples
    --------
    >>> from wnb_stream.summaries import Bins
    >>> rng = np.random.default_rng(0)
    >>> sizes = rng.integers(10, 30, 30)
    >>> rate = np.where(np.arange(30) < 15, 0.2, 0.8)  # P(b) jumps after the bin bounded by 14
    >>> b = rng.binomial(sizes, rate)
    >>> table = Bins(upper_bounds=np.arange(30.0), counts=np.column_stack([sizes - b, b]),
    ...              classes=("a", "b"), missing=[0, 0])
    >>> intervals = discretize(table)
    >>> intervals.upper_bounds.tolist(), intervals.method, round(intervals.level, 4)
    ([14.0, 29.0], 'exact', 0.2329)
    """
    if not isinstance(table, Bins):
        raise TypeError(f"table must be a Bins value, got {type(table).__name__}")
    check_options(criterion, CRITERIA, method, selection_cost)
    atoms_all, bounds, has_missing = _prepare(table)
    classes = table.classes
    lookup = None
    n_atoms, n_columns = atoms_all.shape
    if n_columns >= 2 and n_atoms and _all_columns_positive(atoms_all):
        # The usual table: every class observed and integer counts. The atoms are then all the
        # columns as they are, and the total is exact whatever the order of the sum, so it is the
        # one the general path below computes on its copy (and the lookup is the one it would get).
        n_total = float(atoms_all.sum())
        if n_total < _costs._TABLE_LIMIT:
            lookup = _integer_lookup(atoms_all, n_total, nonnegative=True)
    if lookup is not None:
        atoms = atoms_all
    else:
        columns = observed_columns(atoms_all)
        # (a copy in NumPy's layout for this indexing, even with every column: n_total sums it in that order)
        atoms = atoms_all[:, columns]
        n_total = float(atoms.sum())
    n_atoms, n_observed = atoms.shape

    if n_total <= 0 or n_observed < 2:
        # Khiops: cost 0 with fewer than two classes; no information to code.
        ends = np.array([n_atoms - 1], dtype=np.intp) if n_atoms else np.array([0], dtype=np.intp)
        return _intervals(atoms_all, bounds, has_missing, ends, 0.0, 0.0, 0.0, classes, criterion, "null", table)

    prior = _prior(n_atoms, n_total, criterion, selection_cost)
    if lookup is None:
        lookup = _integer_lookup(atoms, n_total)
    if lookup is not None:
        # integer counts: the search, then c(M), c(M0), the null-model fallback and B(X), compiled
        table_values, log_gamma_classes, integers = lookup
        kernels = _kernels()
        if method == "null" or n_atoms == 1:
            ends, used = np.array([n_atoms - 1], dtype=np.int64), "null"
        else:
            ends, used = _kernel_search(lookup, prior, method)
        ends, cost, null_cost, b_x = kernels.score(
            integers,
            ends,
            prior,
            table_values,
            log_gamma_classes,
            COST_TOLERANCE,
            LEVEL_TOLERANCE,
            null_construction_cost(criterion),
        )
        return _intervals(atoms_all, bounds, has_missing, ends, cost, null_cost, b_x, classes, criterion, used, table)

    prefix = np.concatenate([np.zeros((1, n_observed)), np.cumsum(atoms, axis=0)])
    null_ends = np.array([n_atoms - 1], dtype=np.intp)
    null_cost = partition_cost(prefix, null_ends, prior)
    if method == "null" or n_atoms == 1:
        ends, used = null_ends, "null"
    else:
        ends, used = search_intervals(atoms, prior, method)
    cost = partition_cost(prefix, ends, prior)
    if len(ends) > 1 and not is_informative(cost, null_cost):
        ends, cost = null_ends, null_cost
    starts = np.concatenate([[0], ends[:-1] + 1])
    b_x = prior_cost(prefix[ends + 1] - prefix[starts], cost, criterion)
    return _intervals(atoms_all, bounds, has_missing, ends, cost, null_cost, b_x, classes, criterion, used, table)


def null_intervals(table: Bins, *, criterion: str = "bins", selection_cost: float = 0.0) -> Intervals:
    """The one-interval model of a table (used before the first rebuild is worthwhile)."""
    return discretize(table, criterion=criterion, method="null", selection_cost=selection_cost)


@functools.lru_cache(maxsize=1024)
def _least_prior_excess(n_atoms: int) -> float:
    """min over I ≥ 2 of prior(I) − prior(1) for the ``"bins"`` criterion without c_sel, B = ``n_atoms`` ≥ 2."""
    prior = discretization_prior(n_atoms, 1.0, "bins", 0.0)
    return float(np.min(prior[2:]) - prior[1])


def null_proven(held, n_atoms, class_counts, *, selection_cost: float = 0.0, criterion: str = "bins") -> np.ndarray:
    """True where MODL is proven to choose the null model, without the table
    (docs/algorithms/modl.md#a-bound-that-proves-the-null-model).

    Each variable ``t`` has a table with the class totals ``class_counts (J,)`` in which all but a
    weight ``held[t]`` lies in one atom (the point of the default value of absent features), and
    at least ``n_atoms[t]`` atoms. True where :func:`null_bound` exceeds the rounding of the costs:
    ``discretize`` then returns the null model (one part, Level 0) for every such table. False
    says nothing. Criteria ``"bins"`` and ``"boulle2006"``.

    >>> null_proven([2, 30], [2, 5], [500.0, 500.0], selection_cost=math.log(1000)).tolist()
    [True, False]
    """
    bound = null_bound(held, n_atoms, class_counts, selection_cost=selection_cost, criterion=criterion)
    counts = np.asarray(class_counts, dtype=float)
    total = float(counts[counts > 0].sum())
    slack = COST_TOLERANCE + 1e-8 * math.lgamma(total + len(counts) + 1.0)  # the costs' rounding, with room
    return bound > slack


def null_bound(held, n_atoms, class_counts, *, selection_cost: float = 0.0, criterion: str = "bins") -> np.ndarray:
    """A lower bound of c(M) − c(M0) over the models M of two or more intervals of every table of
    :func:`null_proven`'s kind (``-inf`` where ``held`` exceeds the least class count; ``+inf``
    with fewer than two classes observed, where every model costs 0).

    c(M) − c(M0) ≥ e(B) + c_sel + log J − [part(n) − part(n − h)]: e(B), the least extra prior of
    I ≥ 2 intervals over B atoms, is nondecreasing in B; the intervals besides the point's cost at
    least log J each, and the point's at least part(n − h), part being increasing in each count;
    over the class counts h ≥ 0 of the held weight (Σ h = held ≤ the least count),
    part(n) − part(n − h) is a constant plus Σ_j lΓ(n_j − h_j + 1), convex, so it is greatest at
    a vertex of that simplex: all of it in the least class.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    held = np.asarray(held, dtype=float)
    n_atoms = np.asarray(n_atoms, dtype=np.intp)
    counts = np.asarray(class_counts, dtype=float)
    counts = counts[counts > 0]
    J = len(counts)
    if J < 2:
        return np.full(held.shape, np.inf)
    N, least = float(counts.sum()), float(counts.min())
    if criterion == "bins":
        distinct, where = np.unique(np.maximum(n_atoms, 2), return_inverse=True)
        excess = np.array([_least_prior_excess(int(b)) for b in distinct.tolist()])[where].reshape(held.shape)
    else:  # Boullé 2006: log N + log C(N + I − 1, I − 1), least for I = 2 over I = 1
        excess = np.full(held.shape, math.log(N + 1.0))
    inside = held <= least
    h = np.where(inside, held, 0.0)
    gain = math.lgamma(N + J) - log_gamma(N - h + J) - math.lgamma(least + 1.0) + log_gamma(least - h + 1.0)
    return np.where(inside, excess + selection_cost + math.log(J) - gain, -np.inf)
