"""MODL discretization of many tables at once (a rebuild of level 2 for a group of variables).

``discretize_many(tables)`` is ``[discretize(table) for table in tables]``, the same partitions
to the last bit (property-tested, ``tests/modl/test_batch.py``), at a fraction of the cost when the
tables are many and small: the rebuild of every variable at the start of a stream
(``docs/algorithms/prediction.md#rebuild-schedule``).

Design note. ``discretize`` spends most of its time on one small table in Python around the
compiled search (checks, the integer look-up, the call, the assembly of ``Intervals`` and its
log-probabilities). Here the usual tables (a ``GKClass``'s: strictly increasing bounds, integer
counts, no missing value, every bin and every class non-empty, 2 ≤ J ≤ 128) are checked with one
NumPy pass over all of them stacked, searched and scored by one compiled call
(``_kernels.search_score_many``: the same ``search`` and ``score`` that ``discretize`` calls, on the
same arguments), and their parts' counts and log-probabilities are computed for all of them with
one NumPy pass each; only the ``Intervals`` values are made one by one. Every other table (fractional
counts, missing values, equal bounds, an empty class...) goes to ``discretize`` itself.

Why the floats agree: the searches and costs are the same compiled functions on the same integer
atoms and priors; the counts are sums of integers (exact in any order); the estimator
``log p(i | C_j)`` is computed with the same IEEE operations element by element (ε = 1/(N + 1) and
N_j + I·ε as float64 operations, then NumPy's ``log``, an element-wise function).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._threads import pieces, run_all
from ..tables import Bins
from . import costs as _costs
from ._common import LEVEL_TOLERANCE, check_options, level, null_construction_cost
from .discretization import CRITERIA, _prior, discretize
from .partition import COST_TOLERANCE, Intervals
from .search import _KERNEL_MAX_CLASSES, EXACT_LIMIT_ATOMS, EXACT_MAX_ATOMS, _kernels

__all__ = ["discretize_many"]

# ``_kernels`` status codes → the search named in ``Intervals.method`` (for ``method="auto"``).
_METHOD_NAMES = {0: "exact", 1: "exact", 2: "greedy", 3: "null"}  # RAN_NOTHING, RAN_EXACT, RAN_GREEDY, NO_SEARCH


def discretize_many(tables, *, criterion: str = "bins", selection_cost: float = 0.0) -> list[Intervals]:
    """``[discretize(table, criterion=criterion, selection_cost=selection_cost) for table in tables]``.

    The same ``Intervals`` values (every attribute, bit for bit) and the same errors; see the
    module docstring for how the usual tables are done together.

    >>> table = Bins(upper_bounds=[1.0, 2.0, 3.0, 4.0], counts=[[10, 0], [8, 2], [1, 9], [0, 10]],
    ...              classes=("a", "b"), missing=[0, 0])
    >>> [p.upper_bounds.tolist() for p in discretize_many([table, table])]
    [[2.0, 4.0], [2.0, 4.0]]
    """
    return discretize_many_flagged(tables, criterion=criterion, selection_cost=selection_cost)[0]


def discretize_many_flagged(tables, *, criterion: str = "bins", selection_cost: float = 0.0) -> tuple[list, np.ndarray]:
    """``discretize_many``, and ``(T,)`` bool: the tables done together, whose atoms are their bins
    as they are (no bin dropped, merged or added: ``Variable`` derives its locator from that)."""
    tables = list(tables)
    for table in tables:
        if not isinstance(table, Bins):
            raise TypeError(f"table must be a Bins value, got {type(table).__name__}")
    check_options(criterion, CRITERIA, "auto", selection_cost)
    out: list = [None] * len(tables)
    together = np.zeros(len(tables), dtype=bool)
    by_classes: dict = {}  # J → candidate tables
    for i, table in enumerate(tables):
        n_classes = len(table.classes)
        if 2 <= n_classes <= _KERNEL_MAX_CLASSES and len(table.upper_bounds):
            by_classes.setdefault(n_classes, []).append(i)
    for n_classes, members in by_classes.items():
        done = _discretize_together([tables[i] for i in members], n_classes, criterion, selection_cost)
        for i, partition in zip(members, done):
            if partition is not None:
                out[i] = partition
                together[i] = True
    for i, table in enumerate(tables):
        if out[i] is None:
            out[i] = discretize(table, criterion=criterion, selection_cost=selection_cost)
    return out, together


def discretize_stacked(bounds, counts, missing, starts, classes: tuple, chosen=None, *, criterion: str = "bins",
                       selection_cost: float = 0.0) -> tuple[list, np.ndarray, list]:  # fmt: skip
    """``discretize_many_flagged`` of the tables ``Bins(bounds[a:b], counts[a:b], classes,
    missing[t])``, ``a, b = starts[t], starts[t + 1]``, given stacked (``Summary.stack_tables``:
    float64 ``bounds (R,)``, ``counts (R, J)``, ``missing (T, J)``, ``starts (T + 1,)``), for the
    tables where ``chosen (T,)`` (None: all; the others' partitions are None).

    The same partitions and flags as ``discretize_many_flagged`` of those tables, bit for bit
    (tested): the usual tables are searched on the stacked arrays as they are, and only the
    others are made into ``Bins`` values, for ``discretize``. Also returns those values (None for
    the tables done together), which a variable's locator reads when its partition's atoms are
    not the table's bins. Checks none of the arguments (``Variable.rebuild_many`` hands a
    summary type's stacked tables).
    """
    check_options(criterion, CRITERIA, "auto", selection_cost)
    classes = tuple(classes)
    n_tables = len(starts) - 1
    lengths = np.diff(starts).astype(np.int64)
    chosen = np.ones(n_tables, dtype=bool) if chosen is None else np.asarray(chosen, dtype=bool)
    out: list = [None] * n_tables
    made: list = [None] * n_tables
    together = np.zeros(n_tables, dtype=bool)
    if 2 <= len(classes) <= _KERNEL_MAX_CLASSES:
        candidates = chosen & (lengths > 0)  # (an empty table is no block of the stack: ``discretize``)
        picked = np.flatnonzero(candidates)
        stack = (bounds, counts, missing, lengths)
        if len(picked) < n_tables:  # the candidates' blocks alone
            rows = np.repeat(candidates, lengths)
            stack = (bounds[rows], counts[rows], missing[candidates], lengths[candidates])
        done = _discretize_stacked(*stack, lambda i: classes, len(classes), criterion, selection_cost) if len(picked) else []
        for i, partition in zip(picked.tolist(), done):
            if partition is not None:
                out[i] = partition
                together[i] = True
    for i in np.flatnonzero(chosen & ~together).tolist():
        a, b = int(starts[i]), int(starts[i + 1])
        made[i] = Bins._assemble(bounds[a:b], counts[a:b], classes, missing[i])
        out[i] = discretize(made[i], criterion=criterion, selection_cost=selection_cost)
    return out, together, made


def _discretize_together(tables: list, n_classes: int, criterion: str, selection_cost: float) -> list:
    """Partitions of the usual tables among ``tables`` (all with J classes), None for the others."""
    lengths = np.array([len(table.upper_bounds) for table in tables], dtype=np.int64)
    bounds = np.concatenate([table.upper_bounds for table in tables])
    counts = np.concatenate([table.counts for table in tables])  # (R, J)
    missing = np.stack([table.missing for table in tables])  # (T, J)
    return _discretize_stacked(bounds, counts, missing, lengths, lambda i: tables[i].classes, n_classes, criterion, selection_cost)


def _discretize_stacked(bounds, counts, missing, lengths, classes_of, n_classes: int, criterion: str, selection_cost: float) -> list:
    """Partitions of the usual tables among the stacked ones (all with J classes, none empty),
    None for the others; ``classes_of(t)``: table t's classes."""
    n_tables = len(lengths)
    first = np.zeros(n_tables, dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    limit = float(_costs._TABLE_LIMIT)
    with np.errstate(invalid="ignore"):
        # every cell an integer in [0, limit) (NaN fails), every bin non-empty
        usual = ((counts >= 0.0) & (counts < limit) & (counts == np.floor(counts))).all(axis=1)
        usual &= (counts > 0.0).any(axis=1)
        # strictly increasing bounds within each table (NaN fails), the first not NaN
        increasing = np.empty(len(bounds), dtype=bool)
        increasing[1:] = bounds[1:] > bounds[:-1]
        increasing[first] = ~np.isnan(bounds[first])
        usual &= increasing
        ok = np.logical_and.reduceat(usual, first)
        ok &= ~(missing != 0.0).any(axis=1)  # no missing value (NaN counts as one: the general path)
        column_totals = np.add.reduceat(np.where(usual[:, None], counts, 0.0), first, axis=0)  # (T, J)
        ok &= (column_totals > 0.0).all(axis=1)  # every class observed
        totals = column_totals.sum(axis=1)  # exact: integers
        ok &= 2.0 * totals + (n_classes + 2) < limit  # the lΓ table prices unions of two parts
    picked = np.flatnonzero(ok)
    if not len(picked):
        return [None] * n_tables
    rows = np.repeat(ok, lengths)
    atoms = counts[rows]  # (R', J) float counts of the tables done here
    integers = atoms.astype(np.int64)
    bounds = bounds[rows]
    sizes = lengths[picked]
    row_starts = np.zeros(len(picked) + 1, dtype=np.int64)
    np.cumsum(sizes, out=row_starts[1:])
    totals = totals[picked]
    column_totals = column_totals[picked]
    found: dict = {}  # (B, N) → prior: the tables of a rebuild share a few sizes
    priors = [found.get(key) if key in found else found.setdefault(key, _prior(*key, criterion, selection_cost))
              for key in zip(sizes.tolist(), totals.tolist())]  # fmt: skip
    prior_starts = np.zeros(len(picked) + 1, dtype=np.int64)
    np.cumsum(sizes + 1, out=prior_starts[1:])
    lgamma_table = _costs._grow_table(int(2 * totals.max()) + n_classes + 2)
    ends, n_ends, cost, null_cost, b_x, status = _search_score(
        integers, row_starts, np.concatenate(priors), prior_starts, lgamma_table, n_classes, criterion
    )
    # the ends kept, as rows of ``atoms``; part p spans rows part_first[p] … ends[p]
    owner = np.repeat(np.arange(len(picked)), sizes)
    kept = (np.arange(len(atoms)) - row_starts[owner]) < n_ends[owner]
    last = ends[kept] + row_starts[np.repeat(np.arange(len(picked)), n_ends)]
    part_first = np.zeros(len(last), dtype=np.int64)
    part_first[1:] = last[:-1] + 1  # (each table's last part ends at its last row)
    part_counts = np.add.reduceat(atoms, part_first, axis=0)  # (P, J)
    upper = bounds[last]
    # log p(i | C_j) (``partition._log_probabilities``): ε = 1/(N + 1), log(N_ij + ε) − log(N_j + I·ε)
    epsilon = 1.0 / (totals + 1.0)
    part_of = np.repeat(np.arange(len(picked)), n_ends)
    denominator = np.log(column_totals + n_ends[:, None].astype(float) * epsilon[:, None])
    log_prob = np.log(part_counts + epsilon[part_of][:, None]) - denominator[part_of]
    part_starts = np.zeros(len(picked) + 1, dtype=np.int64)
    np.cumsum(n_ends, out=part_starts[1:])
    out: list = [None] * n_tables
    cost, null_cost, b_x = cost.tolist(), null_cost.tolist(), b_x.tolist()
    for t, (i, lo, hi, used) in enumerate(zip(picked.tolist(), part_starts[:-1].tolist(), part_starts[1:].tolist(), status.tolist())):
        lookup = np.zeros((hi - lo + 1, n_classes))
        lookup[: hi - lo] = log_prob[lo:hi]
        out[i] = Intervals._assemble(
            classes=classes_of(i),
            upper_bounds=upper[lo:hi].copy(),
            counts=part_counts[lo:hi].copy(),
            missing_part=-1,
            cost=cost[t],
            null_cost=null_cost[t],
            level=level(cost[t], null_cost[t], hi - lo),
            prior_cost=b_x[t],
            criterion=criterion,
            method=_METHOD_NAMES[used],
            table=lookup,
        )
    return out


#: Atoms (rows of the stacked tables) from which the tables' searches run in threads, groups of
#: consecutive tables apart (``_threads.run_all``: the compiled search releases the GIL). A
#: round's rebuild at K = 1,000 searches about 60,000; a rebuild of a few variables, a few hundred.
PARALLEL_ATOMS = 20_000


def _search_score(integers, row_starts, priors, prior_starts, lgamma_table, n_classes: int, criterion: str) -> tuple:
    """``_kernels.search_score_many`` on the stacked tables, in groups of consecutive tables run
    in threads when they are many: each table's search and score are the same call on the same
    arguments either way, so the same ends and costs to the last bit; the groups' outputs are
    put back one after the other."""
    search = _kernels().search_score_many
    options = (lgamma_table, math.lgamma(n_classes), 0, EXACT_MAX_ATOMS, EXACT_LIMIT_ATOMS, COST_TOLERANCE, LEVEL_TOLERANCE,
               null_construction_cost(criterion))  # fmt: skip  (0: _kernels.AUTO)
    groups = pieces(len(row_starts) - 1, large=len(integers) >= PARALLEL_ATOMS)
    if len(groups) <= 1:
        return search(integers, row_starts, priors, prior_starts, *options)

    def group(a: int, b: int):
        lo, hi, p_lo, p_hi = row_starts[a], row_starts[b], prior_starts[a], prior_starts[b]
        return search(integers[lo:hi], row_starts[a : b + 1] - lo, priors[p_lo:p_hi], prior_starts[a : b + 1] - p_lo, *options)

    done = run_all([functools.partial(group, a, b) for a, b in groups])
    return tuple(np.concatenate([part[i] for part in done]) for i in range(6))
