"""MODL discretization of a numeric table into intervals (docs/algorithms/modl.md#discretization).

The table is a level-1 ``Bins`` value: ordered elementary bins × class counts. A discretization
cuts the sequence of bins into intervals of consecutive bins; MODL picks the one of least cost
c(M) = prior(I) + Σ_i part(i) (docs/algorithms/modl.md#costs), where part(i) codes the class
distribution of interval i and its data, and prior(I) depends on the number of intervals only.

The search for that cut (the exact dynamic programme or the greedy merges, compiled or NumPy) is
``modl.search``'s :func:`~wnb_stream.modl.search.search_intervals`; this module builds its atoms and
prior from the table, and turns its cut into ``Intervals``.
"""

from __future__ import annotations

import functools
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
from .costs import bounded_universal_code_length, log_binomial, log_gamma
from .partition import COST_TOLERANCE, INTERVAL_CRITERIA, Intervals
from .search import _integer_lookup, _kernel_search, _kernels, partition_cost, search_intervals

__all__ = [
    "discretize",
    "discretization_prior",
    "null_intervals",
]

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
        ``"auto"`` (exact up to :data:`~wnb_stream.modl.search.EXACT_MAX_ATOMS` atoms, greedy beyond), ``"exact"``
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
    if criterion == "bins" and (not n_atoms.size or n_atoms.max() <= 2):  # (a rebuild's first proof: no table read yet)
        excess = np.full(held.shape, _least_prior_excess(2))
    elif criterion == "bins":
        distinct, where = np.unique(np.maximum(n_atoms, 2), return_inverse=True)
        excess = np.array([_least_prior_excess(int(b)) for b in distinct.tolist()])[where].reshape(held.shape)
    else:  # Boullé 2006: log N + log C(N + I − 1, I − 1), least for I = 2 over I = 1
        excess = np.full(held.shape, math.log(N + 1.0))
    inside = held <= least
    h = np.where(inside, held, 0.0)
    gain = math.lgamma(N + J) - log_gamma(N - h + J) - math.lgamma(least + 1.0) + log_gamma(least - h + 1.0)
    return np.where(inside, excess + selection_cost + math.log(J) - gain, -np.inf)
