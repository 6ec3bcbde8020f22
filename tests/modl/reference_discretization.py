"""Pre-kernel MODL discretization, kept as a test oracle (not part of the package).

This module is the pure-Python/NumPy search of ``wnb_stream/modl/discretization.py`` as it stood
before integer tables moved to compiled kernels (``wnb_stream/modl/_kernels.py``), so that
``tests/modl/test_kernels.py`` can check that the compiled searches give the same ends and the same
costs, bit for bit on integer counts. The exact dynamic programme, ``search_intervals``,
``_prepare``, ``_intervals`` and ``discretize`` are copied verbatim (only the imports changed, and
``discretize``'s long docstring left to the package's); the
greedy merge, the post-optimisation (still the package's path for fractional counts) and every
other function the kernels did not change are imported from the package. Do not edit the copies
to follow later changes of the package: their value is that they stay the old behaviour.
"""

from __future__ import annotations

import math

import numpy as np

from wnb_stream.modl._common import check_options, is_informative, level, observed_columns, prior_cost
from wnb_stream.modl.costs import part_cost_function, part_costs

# Unchanged by the kernels: the oracle shares these with the package.
from wnb_stream.modl.discretization import discretization_prior  # noqa: E402, F401  (re-exported: the tests read it here)
from wnb_stream.modl.partition import COST_TOLERANCE, Intervals
from wnb_stream.modl.search import (  # noqa: E402, F401  (re-exported: the tests read them here)
    _best_recuts,
    _greedy_merge_ends,
    _interval_costs,
    _merge_pure_runs,
    _post_optimise,
    partition_cost,
)
from wnb_stream.tables import Bins

_KHIOPS_FORMS = ("bins", "khiops")


#: Largest number of atoms (bins left after merging pure runs) that ``method="auto"`` gives to the
#: exact dynamic programme; see the module docstring for the measurements behind it.
EXACT_MAX_ATOMS = 100
#: ``method="exact"`` refuses more atoms than this: its (B, B) cost matrix would pass 32 MB.
EXACT_LIMIT_ATOMS = 2000

CRITERIA = ("bins", "boulle2006")

_LN2 = math.log(2.0)


# --------------------------------------------------------------------------------------------
# The search engine: atoms (B, J) of observed-class counts → last atom of each interval.


def _optimal_ends(prefix: np.ndarray, prior: np.ndarray, cost=part_costs) -> np.ndarray:
    """Exact programme: D[I][b] = min_a D[I−1][a−1] + part(a..b), keep the best prior(I) + D[I][B]."""
    n = prefix.shape[0] - 1
    first, last = np.triu_indices(n)
    # part_cost[a, b]: cost of one interval made of atoms a..b (+inf when a > b); (n, n).
    part_cost = np.full((n, n), np.inf)
    part_cost[first, last] = cost(prefix[last + 1] - prefix[first])

    # Lower bound on Σ part over every partition, whatever I: the unconstrained programme.
    free = np.empty(n)
    for b in range(n):
        free[b] = part_cost[0, b]
        if b:
            free[b] = min(free[b], float((free[:b] + part_cost[1 : b + 1, b]).min()))
    floor = free[-1]
    prior_floor = np.minimum.accumulate(prior[::-1])[::-1]  # min of prior[I'] over I' ≥ I

    best_by_size = part_cost[0].copy()  # D[1][b], (n,)
    totals = [np.inf, prior[1] + best_by_size[-1]]
    best = totals[1]
    back = []  # back[I − 2][b − (I − 1)] = first atom of the last interval of D[I][b]
    for size in range(2, n + 1):
        if prior_floor[size] + floor >= best:
            break
        # rows: first atom a = size−1..n−1; columns: last atom b = size−1..n−1; (n−size+1, n−size+1)
        candidates = best_by_size[size - 2 : n - 1, None] + part_cost[size - 1 :, size - 1 :]
        arg = candidates.argmin(axis=0)
        new = np.full(n, np.inf)
        new[size - 1 :] = candidates[arg, np.arange(n - size + 1)]
        back.append(arg + size - 1)
        best_by_size = new
        totals.append(prior[size] + new[-1])
        best = min(best, totals[-1])

    totals = np.array(totals)
    # Ties (within the Khiops tolerance) go to fewer intervals (docs/algorithms/modl.md#comparing-costs).
    size = int(np.flatnonzero(totals <= totals.min() + COST_TOLERANCE)[0])
    ends = []
    b = n - 1
    for i in range(size, 1, -1):
        a = int(back[i - 2][b - (i - 1)])
        ends.append(b)
        b = a - 1
    ends.append(b)
    return np.array(ends[::-1], dtype=np.intp)


def search_intervals(atoms: np.ndarray, prior: np.ndarray, method: str = "auto") -> tuple[np.ndarray, str]:
    """Best cut of a sequence of atoms into intervals for a prior that depends on I only.

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
    merged, last = _merge_pure_runs(np.asarray(atoms, dtype=float))
    n = len(merged)
    if method == "auto":
        method = "exact" if n <= EXACT_MAX_ATOMS else "greedy"
    if n == 1:
        return last, method
    prefix = np.concatenate([np.zeros((1, merged.shape[1])), np.cumsum(merged, axis=0)])
    cost = part_cost_function(merged)
    if method == "exact" and n > EXACT_LIMIT_ATOMS:
        raise ValueError(
            f"method='exact' is O(B³) in time and O(B²) in memory and accepts at most {EXACT_LIMIT_ATOMS} bins "
            f"after merging pure runs, got {n}; use method='auto' or 'greedy'"
        )
    if method == "exact":
        ends = _optimal_ends(prefix, prior, cost)
    elif method == "greedy":
        ends = _post_optimise(prefix, _greedy_merge_ends(merged, prior, cost), prior, cost)
    else:
        raise ValueError(f"method must be 'auto', 'exact' or 'greedy', got {method!r}")
    return last[ends], method


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
    if np.isnan(bounds).any():
        raise ValueError("table.upper_bounds must not contain NaN")
    if len(bounds) > 1 and np.any(np.diff(bounds) < 0):
        raise ValueError("table.upper_bounds must be increasing")
    for name, array in (("counts", counts), ("missing", missing)):
        if not np.all(np.isfinite(array)) or np.any(array < 0):
            raise ValueError(f"table.{name} must be finite and >= 0")
    if len(bounds) > 1:
        new_value = np.ones(len(bounds), dtype=bool)
        new_value[1:] = bounds[1:] != bounds[:-1]
        if not new_value.all():
            first = np.flatnonzero(new_value)
            counts = np.add.reduceat(counts, first, axis=0)
            bounds = bounds[first]
    has_missing = bool(missing.sum() > 0)
    if has_missing:
        counts = np.vstack([missing[None, :], counts])
        bounds = np.concatenate([[np.nan], bounds])
    keep = counts.sum(axis=1) > 0
    return counts[keep], bounds[keep], has_missing


def _intervals(atoms, bounds, has_missing, ends, cost, null_cost, prior, classes, criterion, method, table):
    """Assemble the ``Intervals`` value from the last atom of each part."""
    if len(atoms):
        starts = np.concatenate([[0], ends[:-1] + 1])
        counts = np.add.reduceat(atoms, starts, axis=0)
        upper = bounds[ends]
        if has_missing and ends[0] == 0 and len(ends) > 1:
            # the missing bin is a part of its own: the numeric intervals are the other parts
            upper = upper[1:]
        upper = upper[~np.isnan(upper)]
    else:
        counts = np.zeros((1, len(classes)))
        upper = np.zeros(0)
    if len(upper) == 0:
        # no numeric bin at all: one interval covering the real line
        upper = np.array([np.inf])
    return Intervals(
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
    """The pre-kernel ``wnb_stream.modl.discretization.discretize`` (its docstring says what it does)."""
    if not isinstance(table, Bins):
        raise TypeError(f"table must be a Bins value, got {type(table).__name__}")
    check_options(criterion, CRITERIA, method, selection_cost)
    atoms_all, bounds, has_missing = _prepare(table)
    columns = observed_columns(atoms_all)
    atoms = atoms_all[:, columns]
    n_atoms, n_observed = atoms.shape
    n_total = float(atoms.sum())
    classes = table.classes

    if n_total <= 0 or n_observed < 2:
        # Khiops: cost 0 with fewer than two classes; no information to code.
        ends = np.array([n_atoms - 1], dtype=np.intp) if n_atoms else np.array([0], dtype=np.intp)
        return _intervals(atoms_all, bounds, has_missing, ends, 0.0, 0.0, 0.0, classes, criterion, "null", table)

    prior = discretization_prior(n_atoms, n_total, criterion, selection_cost)
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


