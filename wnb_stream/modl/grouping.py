"""MODL value grouping of a categorical table (docs/algorithms/modl.md#grouping).

The table is a level-1 ``Categories`` value: kept values × class counts, plus the *star* value
(every value the summary did not keep) and the missing values. The MODL inputs are the kept values
with a positive count, the star when its count is positive, and one pseudo-value for the missing
values when there are any; V is their number. A grouping is a partition of the V inputs;
MODL picks the one of least cost prior + Σ_i part(i).

Searches (``method="auto"``):

- V ≤ :data:`EXHAUSTIVE_MAX_VALUES` (= 7, Bell(7) = 877 partitions): exhaustive enumeration of
  every set partition, vectorised (Khiops does it for V ≤ 3; at 7 it still costs about a
  millisecond — 3 to 12 ms at 8 — and makes small tables exact, garbage group included);
- otherwise (``"greedy"``) candidates, the best of which is post-optimised by single value moves
  and up to three forced merges each followed by moves:

  - two observed classes: sort the values by P(C_1 | v) and cut the sorted sequence with the
    discretization engine (exact for the criterion without garbage group);
  - more classes: merge values pure in the same class, then repeatedly merge the pair of groups
    with the least Δ part down to one group, pricing each state with and without garbage group,
    and keep the best state;
  - when a garbage group is possible (V ≥ 7, ``"khiops"`` criterion): a divisive path from the
    one-group model that moves out one value at a time (our addition: the agglomerative path
    rarely passes through garbage optima, a large group plus a few informative values).

``method="exact"`` enumerates every partition and accepts up to :data:`EXACT_MAX_VALUES` values.

Unseen values: they go to the group of the star value when the star is an input;
otherwise (exact level-1 counts, star count 0) to the garbage group if there is one, else to the
group of the least frequent value, as Khiops does.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..tables import Categories
from ._common import check_options, is_informative, level, observed_columns, prior_cost
from .costs import (
    bounded_universal_code_length,
    log2_star,
    log_bell_table,
    log_gamma,
    part_cost_function,
    universal_normalisers,
)
from .partition import COST_TOLERANCE, GROUP_CRITERIA, MISSING, STAR, Groups
from .search import search_intervals

__all__ = [
    "EXHAUSTIVE_MAX_VALUES",
    "EXACT_MAX_VALUES",
    "GARBAGE_MIN_VALUES",
    "group",
    "grouping_prior",
    "null_groups",
]

#: ``method="auto"`` enumerates every partition up to this many values.
EXHAUSTIVE_MAX_VALUES = 7
#: ``method="exact"`` accepts at most this many values (Bell(10) = 115,975 partitions).
EXACT_MAX_VALUES = 10
#: Khiops searches a garbage group from this many values on (``nMinimumNumberOfModalitiesForGarbage``).
GARBAGE_MIN_VALUES = 7

CRITERIA = GROUP_CRITERIA

_LN2 = math.log(2.0)
_STRICT = -1e-9  # an improving move must lower the cost by more than rounding noise


def grouping_prior(n_values: int, criterion: str = "khiops", selection_cost: float = 0.0) -> np.ndarray:
    """Prior cost of a grouping without garbage group by its number of groups I, ``(V + 1,)``.

    Entry 0 is +inf.

    - ``"khiops"`` (default, Khiops' criterion without granularity): log 2 + [I > 1 and V > 1]·(c_sel +
      [V > 7]·log 2 + L*_{V−1}(I − 1) + log B(V, I));
    - ``"boulle2005"`` (Boullé 2005): log V + log B(V, I), plus c_sel when I > 1 (our extension).

    >>> np.round(grouping_prior(5)[1:], 6).tolist()
    [0.693147, 4.072949, 5.70708, 6.791359, 7.331046]
    """
    sizes = np.arange(1, n_values + 1)
    prior = np.full(n_values + 1, np.inf)
    bell = log_bell_table(n_values)[n_values]
    if criterion == "khiops":
        prior[1] = _LN2
        if n_values > 1:
            prior[2:] = (
                _LN2
                + selection_cost
                + (_LN2 if n_values > GARBAGE_MIN_VALUES else 0.0)  # garbage-or-not bit (Khiops: V > 7)
                + bounded_universal_code_length(sizes[1:] - 1, n_values - 1)  # number of groups
                + bell[sizes[1:]]  # the partition itself, among B(V, I)
            )
    elif criterion == "boulle2005":
        # Boullé 2005: number of groups uniform in [1, V], then the partition among B(V, I)
        prior[1:] = math.log(n_values) + bell[sizes]
        prior[2:] += selection_cost
    else:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    return prior


class _Criterion:
    """Prior of a grouping of V values, with and without garbage group (docs/algorithms/modl.md#grouping).

    The garbage form is separable into lookups of precomputed 1-D arrays (the bounded universal
    code is ln C0(nmax) + ln 2 · log2*(n)) and of the log B(n, k) table, so pricing thousands of
    candidate groupings costs a few fancy-indexing operations.
    """

    def __init__(self, counts: np.ndarray, criterion: str, selection_cost: float):
        n_values = len(counts)
        self.n_values = n_values
        #: part costs of sums of rows of ``counts`` (fast path for integer counts)
        self.part_costs = part_cost_function(counts)
        self.plain = grouping_prior(n_values, criterion, selection_cost)
        self.garbage_allowed = criterion == "khiops" and n_values >= GARBAGE_MIN_VALUES
        if self.garbage_allowed:
            v = n_values
            count = np.arange(v + 1)
            # ln 2 · log2*(n) and ln C0(nmax), indexed by n and nmax (entry 0 unused)
            self._star = _LN2 * log2_star(np.maximum(count, 1))
            self._log_normaliser = np.log(np.maximum(universal_normalisers(v), 1.0))
            informative_values = count
            self._by_values = (
                self._log_normaliser[v - 2]
                + self._star[np.maximum(informative_values - 1, 0)]  # L*_{V−2}(V_inf − 1)
                + informative_values * math.log(v)  # which values: V_inf draws among V,
                - log_gamma(informative_values + 1.0)  # distinct, in any order
                + self._log_normaliser[np.maximum(informative_values - 1, 0)]  # C0(V_inf − 1) of L*_{V_inf−1}
            )
            self._constant = _LN2 + selection_cost + (_LN2 if v > GARBAGE_MIN_VALUES else 0.0)
            self._bell = log_bell_table(v)

    def garbage(self, n_parts, largest) -> np.ndarray:
        """Prior when the largest group (``largest`` values) is the garbage group; +inf if not allowed.

        Khiops ``KWMODLGroupingCosts::ComputePartitionCost`` with garbage: V_inf = V − V_g
        informative values in I_inf = I − 1 ≥ 2 informative groups:
        log 2 + c_sel + [V > 7]·log 2 + L*_{V−2}(V_inf − 1) + V_inf·log V − log V_inf!
        + L*_{V_inf−1}(I_inf − 1) + log B(V_inf, I_inf).
        """
        n_parts = np.asarray(n_parts, dtype=np.intp)
        largest = np.asarray(largest, dtype=np.intp)
        if not self.garbage_allowed:
            return np.full(np.broadcast(n_parts, largest).shape, np.inf)
        parts = n_parts - 1
        values = self.n_values - largest
        valid = (parts >= 2) & (parts <= values)
        parts = np.where(valid, parts, 2)
        values = np.where(valid, values, 2)
        value = self._constant + self._by_values[values] + self._star[parts - 1] + self._bell[values, parts]
        return np.where(valid, value, np.inf)

    def prior(self, n_parts, largest) -> tuple[np.ndarray, np.ndarray]:
        """Best prior over the two forms and whether it is the garbage form (arrays)."""
        plain = self.plain[np.asarray(n_parts, dtype=np.intp)]
        garbage = self.garbage(n_parts, largest)
        use_garbage = garbage < plain
        return np.where(use_garbage, garbage, plain), use_garbage

    def cost(self, counts: np.ndarray, labels: np.ndarray) -> tuple[float, bool]:
        """c(M) of the grouping ``labels`` (compact labels 0..I−1) of ``(V, J)`` value counts."""
        n_parts = int(labels.max()) + 1
        groups = np.zeros((n_parts, counts.shape[1]))
        np.add.at(groups, labels, counts)
        largest = int(np.bincount(labels).max())
        prior, garbage = self.prior(n_parts, largest)
        return float(prior + self.part_costs(groups).sum()), bool(garbage)


def _compact(labels: np.ndarray) -> np.ndarray:
    """Relabel groups 0..I−1 in order of first appearance."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


# --------------------------------------------------------------------------------------------
# Exhaustive enumeration.


@functools.lru_cache(maxsize=EXACT_MAX_VALUES + 1)
def _set_partitions(n_values: int) -> np.ndarray:
    """Every set partition of n values as restricted growth strings, ``(Bell(n), n)`` int8."""
    strings = np.zeros((1, 1), dtype=np.int8)
    tops = np.zeros(1, dtype=np.int8)  # highest label used so far
    for _ in range(1, n_values):
        choices = tops.astype(np.intp) + 2  # labels 0..top+1
        rows = np.repeat(np.arange(len(strings)), choices)
        offsets = np.concatenate([[0], np.cumsum(choices)[:-1]])
        label = (np.arange(len(rows)) - offsets[rows]).astype(np.int8)
        strings = np.column_stack([strings[rows], label])
        tops = np.maximum(tops[rows], label)
    strings.setflags(write=False)
    return strings


def _exhaustive(counts: np.ndarray, criterion: _Criterion) -> np.ndarray:
    """Cost of every set partition (vectorised by chunks); the best, ties to fewer groups."""
    n_values = counts.shape[0]
    strings = _set_partitions(n_values).astype(np.intp)
    totals = np.empty(len(strings))
    for start in range(0, len(strings), 8192):
        chunk = strings[start : start + 8192]
        # (P, V, V) one-hot of each value's group, then (P, V groups, J) group counts
        onehot = chunk[:, :, None] == np.arange(n_values)[None, None, :]
        groups = np.einsum("pvg,vj->pgj", onehot, counts)
        prior, _ = criterion.prior(chunk.max(axis=1) + 1, onehot.sum(axis=1).max(axis=1))
        totals[start : start + len(chunk)] = prior + criterion.part_costs(groups).sum(axis=1)  # empty groups cost 0
    n_parts = strings.max(axis=1) + 1
    # ties within the tolerance go to fewer groups (docs/algorithms/modl.md#comparing-costs)
    near = np.flatnonzero(totals <= totals.min() + COST_TOLERANCE)
    return strings[near[np.argmin(n_parts[near])]].copy()


# --------------------------------------------------------------------------------------------
# Greedy search.


def _pure_labels(counts: np.ndarray) -> np.ndarray:
    """Initial groups: values pure in the same class together, every other value alone."""
    positive = counts > 0
    pure = np.where(positive.sum(axis=1) == 1, positive.argmax(axis=1), -1)
    key = np.where(pure >= 0, -1 - pure, np.arange(len(counts)))
    return _compact(key)


#: ``_few_groups`` leaves at least this many initial groups (and at least ⌈√N⌉).
FEW_GROUPS_MIN = 64


def _few_groups(counts: np.ndarray, labels: np.ndarray, cost) -> np.ndarray:
    """Few groups: when more than ⌈√N⌉ initial groups remain, keep the ⌈√N⌉ most frequent
    (at least :data:`FEW_GROUPS_MIN`) and send every other one to the kept group whose Δ part is the
    least. Khiops merges the small groups by a frequency threshold (``MergeSmallGroups``); joining
    the closest frequent group keeps their class profile, and the value moves of the
    post-optimisation can still take any value elsewhere. Bounds the O(I²) pair table.
    """
    n_groups = int(labels.max()) + 1
    keep = max(int(math.ceil(math.sqrt(counts.sum()))), FEW_GROUPS_MIN)
    if n_groups <= keep:
        return labels
    groups = np.zeros((n_groups, counts.shape[1]))
    np.add.at(groups, labels, counts)
    order = np.argsort(-groups.sum(axis=1), kind="stable")
    kept, small = order[:keep], order[keep:]
    part = cost(groups)
    # (small, kept) Δ part of joining each small group to each kept group
    delta = cost(groups[small][:, None, :] + groups[kept][None, :, :]) - part[small][:, None] - part[kept][None, :]
    target = np.empty(n_groups, dtype=np.intp)
    target[kept] = kept
    target[small] = kept[delta.argmin(axis=1)]
    return _compact(target[labels])


def _greedy(counts: np.ndarray, criterion: _Criterion) -> np.ndarray:
    """Greedy search: merge the best pair down to one group, keep the best state."""
    cost = criterion.part_costs
    labels = _few_groups(counts, _pure_labels(counts), cost)
    n_groups = int(labels.max()) + 1
    groups = np.zeros((n_groups, counts.shape[1]))
    np.add.at(groups, labels, counts)
    sizes = np.bincount(labels, minlength=n_groups)
    part = cost(groups)

    # delta[g, h] = part(g ∪ h) − part(g) − part(h); (n_groups, n_groups), +inf on the diagonal.
    delta = np.empty((n_groups, n_groups))
    for start in range(0, n_groups, 128):
        block = groups[start : start + 128, None, :] + groups[None, :, :]
        delta[start : start + 128] = cost(block) - part[start : start + 128, None] - part[None, :]
    np.fill_diagonal(delta, np.inf)
    alive = np.ones(n_groups, dtype=bool)
    row_arg = delta.argmin(axis=1)
    row_min = delta[np.arange(n_groups), row_arg]

    total_parts = float(part.sum())
    path_parts = [total_parts]  # Σ part after each merge
    path_largest = [int(sizes.max())]  # values in the largest group after each merge
    merges = []
    for size in range(n_groups - 1, 0, -1):
        g = int(row_min.argmin())
        h = int(row_arg[g])
        if h < g:
            g, h = h, g
        merges.append((g, h))
        total_parts += float(delta[g, h])
        groups[g] += groups[h]
        sizes[g] += sizes[h]
        sizes[h] = 0
        alive[h] = False
        part[g] = float(cost(groups[g]))
        delta[h, :] = np.inf
        delta[:, h] = np.inf
        row_min[h] = np.inf
        others = np.flatnonzero(alive)
        others = others[others != g]
        if len(others):
            column = cost(groups[others] + groups[g]) - part[others] - part[g]
            delta[g, others] = column
            delta[others, g] = column
            # rows whose best partner was g or h: rescan; the others may now prefer g
            stale = others[(row_arg[others] == g) | (row_arg[others] == h)]
            fresh = others[(row_arg[others] != g) & (row_arg[others] != h)]
            if len(stale):
                row_arg[stale] = delta[stale].argmin(axis=1)
                row_min[stale] = delta[stale, row_arg[stale]]
            better = fresh[delta[fresh, g] < row_min[fresh]]
            row_arg[better] = g
            row_min[better] = delta[better, g]
            row_arg[g] = int(delta[g].argmin())
            row_min[g] = delta[g, row_arg[g]]
        else:
            row_min[g] = np.inf
        path_parts.append(total_parts)
        path_largest.append(int(sizes.max()))

    prior, _ = criterion.prior(np.arange(n_groups, 0, -1), np.array(path_largest))
    totals = prior + np.array(path_parts)
    steps = int(np.flatnonzero(totals <= totals.min() + COST_TOLERANCE)[-1])
    group_of = np.arange(n_groups)
    for g, h in merges[:steps]:
        group_of[group_of == h] = g
    return _compact(group_of[labels])


def _best_move(counts: np.ndarray, labels: np.ndarray, criterion: _Criterion, new_group: bool = False):
    """Best transfer of one value to another group: (delta cost, value, target group).

    Targets are the existing groups, plus a new empty group (index I) when ``new_group``.
    Vectorised over values × groups: O(V · I · J).
    """
    cost = criterion.part_costs
    n_real = int(labels.max()) + 1
    n_parts = n_real + int(new_group)
    groups = np.zeros((n_parts, counts.shape[1]))
    np.add.at(groups, labels, counts)
    sizes = np.bincount(labels, minlength=n_parts)
    part = cost(groups)
    # (V,) change of the source group; (V, I) change of the target group
    leave = cost(groups[labels] - counts) - part[labels]
    join = cost(groups[None, :, :] + counts[:, None, :]) - part[None, :]
    # number of groups after the move: the source may empty, an empty target becomes a group
    new_parts = n_real - (sizes[labels] == 1)[:, None].astype(np.intp) + (sizes == 0)[None, :].astype(np.intp)
    # largest group after the move: the source loses one value, the target gains one
    order = np.argsort(sizes)[::-1]
    top, second = sizes[order[0]], (sizes[order[1]] if n_parts > 1 else 0)
    largest_without = np.where((labels == order[0]), np.maximum(top - 1, second), top)
    largest = np.maximum(sizes[None, :] + 1, largest_without[:, None])
    current, _ = criterion.prior(n_real, sizes.max())
    prior, _ = criterion.prior(new_parts, largest)
    delta = leave[:, None] + join + prior - current
    delta[np.arange(len(labels)), labels] = np.inf
    value, target = np.unravel_index(int(delta.argmin()), delta.shape)
    return float(delta[value, target]), int(value), int(target)


def _best_merge(counts: np.ndarray, labels: np.ndarray, criterion: _Criterion):
    """The pair of groups whose merge raises Σ part the least: (g, h) with g < h."""
    cost = criterion.part_costs
    n_parts = int(labels.max()) + 1
    groups = np.zeros((n_parts, counts.shape[1]))
    np.add.at(groups, labels, counts)
    part = cost(groups)
    delta = cost(groups[:, None, :] + groups[None, :, :]) - part[:, None] - part[None, :]
    np.fill_diagonal(delta, np.inf)
    g, h = np.unravel_index(int(delta.argmin()), delta.shape)
    return int(min(g, h)), int(max(g, h))


def _move_values(counts, labels, criterion):
    """Move the best single value while it lowers the cost (Khiops ``PostOptimizeGroups``)."""
    for _ in range(10 * len(labels) + 10):
        if labels.max() == 0:
            break
        delta, value, target = _best_move(counts, labels, criterion)
        if not delta < _STRICT:
            break
        emptied = np.count_nonzero(labels == labels[value]) == 1
        labels = labels.copy()
        labels[value] = target
        if emptied:
            labels = _compact(labels)
    return labels


def _post_optimise(counts, labels, criterion):
    """Post-optimisation: value moves, then up to 3 forced merges each followed by moves; keep the best."""
    labels = _move_values(counts, labels, criterion)
    best_labels = labels
    best_cost, _ = criterion.cost(counts, labels)
    for _ in range(3):
        if labels.max() == 0:
            break
        g, h = _best_merge(counts, labels, criterion)
        labels = labels.copy()
        labels[labels == h] = g
        labels = _move_values(counts, _compact(labels), criterion)
        cost, _ = criterion.cost(counts, labels)
        if cost < best_cost - COST_TOLERANCE or (cost <= best_cost + COST_TOLERANCE and labels.max() < best_labels.max()):
            best_labels, best_cost = labels, cost
    return best_labels


#: ``_divisive`` extracts at most this many values from the one-group model.
DIVISIVE_MAX_STEPS = 32


def _divisive(counts: np.ndarray, criterion: _Criterion) -> np.ndarray:
    """Start from one group and repeatedly move out the value whose transfer (to another group or
    to a new one) gives the lowest total cost, for up to :data:`DIVISIVE_MAX_STEPS` steps; keep the
    best state met.

    Garbage-group optima (docs/algorithms/modl.md#grouping) are a large group holding most values plus a few informative
    ones; the agglomerative path of ``_greedy``, which merges by Δ part only, seldom passes through
    them, while this divisive path starts there. O(steps · V · I · J).
    """
    labels = np.zeros(len(counts), dtype=np.intp)
    cost = criterion.cost(counts, labels)[0]
    best_labels, best_cost = labels, cost
    for _ in range(min(len(counts) - 1, DIVISIVE_MAX_STEPS)):
        delta, value, target = _best_move(counts, labels, criterion, new_group=True)
        emptied = np.count_nonzero(labels == labels[value]) == 1
        labels = labels.copy()
        labels[value] = target
        if emptied:
            labels = _compact(labels)
        cost += delta
        if cost < best_cost - COST_TOLERANCE:
            best_labels, best_cost = labels, cost
    return best_labels


def _two_class(counts, criterion, method):
    """Two classes: sort by P(C_1 | v), then the discretization engine on the sorted values."""
    order = np.argsort(counts[:, 0] / counts.sum(axis=1), kind="stable")
    ends, _ = search_intervals(counts[order], criterion.plain, method)
    labels = np.empty(len(counts), dtype=np.intp)
    labels[order] = np.searchsorted(ends, np.arange(len(counts)), side="left")
    return _compact(labels)


def search_groups(counts: np.ndarray, criterion: _Criterion, method: str) -> tuple[np.ndarray, str]:
    """Best grouping of ``(V, J)`` value counts (rows non-empty, J observed classes): labels, method."""
    n_values, n_classes = counts.shape
    if method == "auto":
        method = "exact" if n_values <= EXHAUSTIVE_MAX_VALUES else "greedy"
    if method == "exact":
        if n_values > EXACT_MAX_VALUES:
            raise ValueError(
                f"method='exact' enumerates every partition and accepts at most {EXACT_MAX_VALUES} values, "
                f"got {n_values}; use method='auto' or 'greedy'"
            )
        return _compact(_exhaustive(counts, criterion)), method
    candidates = []
    if n_classes == 2:
        candidates.append(_two_class(counts, criterion, "auto"))
    else:
        candidates.append(_greedy(counts, criterion))
    if criterion.garbage_allowed:
        candidates.append(_move_values(counts, _divisive(counts, criterion), criterion))
    scored = [(criterion.cost(counts, labels)[0], labels.max(), i) for i, labels in enumerate(candidates)]
    best = candidates[min(scored)[2]]
    return _post_optimise(counts, best, criterion), method


# --------------------------------------------------------------------------------------------
# The public entry point.


def _inputs(table: Categories):
    """MODL inputs of a table: keys (values, STAR, MISSING) and ``(V, J_all)`` counts; unused values."""
    counts = np.asarray(table.counts, dtype=float)
    star = np.asarray(table.star, dtype=float)
    missing = np.asarray(table.missing, dtype=float)
    for name, array in (("counts", counts), ("star", star), ("missing", missing)):
        if not np.all(np.isfinite(array)) or np.any(array < 0):
            raise ValueError(f"table.{name} must be finite and >= 0")
    used = counts.sum(axis=1) > 0
    keys = [v for v, u in zip(table.values, used) if u]
    rows = [counts[used]]
    if star.sum() > 0:
        keys.append(STAR)
        rows.append(star[None, :])
    if missing.sum() > 0:
        keys.append(MISSING)
        rows.append(missing[None, :])
    unused = [v for v, u in zip(table.values, used) if not u]
    return keys, np.vstack(rows), unused


def _groups(table, keys, counts_all, labels, unused, garbage, cost, null_cost, b_x, criterion, method):
    """Assemble the ``Groups`` value: order groups by decreasing count, place the star."""
    n_classes = len(table.classes)
    if len(keys) == 0:
        members = [list(unused) + [STAR]]
        return Groups(table.classes, members, np.zeros((1, n_classes)), 0, -1, -1, 0.0, 0.0, 0.0, 0.0, criterion, method)
    n_parts = int(labels.max()) + 1
    counts = np.zeros((n_parts, n_classes))
    np.add.at(counts, labels, counts_all)
    sizes = np.bincount(labels, minlength=n_parts)
    first = np.array([np.flatnonzero(labels == g)[0] for g in range(n_parts)])
    order = np.lexsort((first, -counts.sum(axis=1)))  # decreasing count, then first value
    rank = np.empty(n_parts, dtype=np.intp)
    rank[order] = np.arange(n_parts)
    labels = rank[labels]
    counts = counts[order]
    sizes = sizes[order]
    members = [[] for _ in range(n_parts)]
    for key, label in zip(keys, labels):
        members[label].append(key)
    garbage_part = -1
    if garbage:
        # the garbage group is the group with the most values (the first such in count order)
        garbage_part = int(np.argmax(sizes))
    if STAR in keys:
        star_part = int(labels[keys.index(STAR)])
    elif garbage_part >= 0:
        star_part = garbage_part
    else:
        # Khiops: the group of the least frequent value (ties: the last in table order), not the missing one
        totals = counts_all.sum(axis=1)
        candidates = [i for i, key in enumerate(keys) if key is not MISSING] or [0]
        least = min(candidates, key=lambda i: (totals[i], -i))
        star_part = int(labels[least])
    members[star_part].extend(unused)
    members[star_part].append(STAR)
    missing_part = int(labels[keys.index(MISSING)]) if MISSING in keys else -1
    return Groups(
        classes=table.classes,
        groups=members,
        counts=counts,
        star_part=star_part,
        missing_part=missing_part,
        garbage_part=garbage_part,
        cost=cost,
        null_cost=null_cost,
        level=level(cost, null_cost, n_parts),
        prior_cost=b_x,
        criterion=criterion,
        method=method,
    )


def group(table: Categories, *, criterion: str = "khiops", method: str = "auto", selection_cost: float = 0.0) -> Groups:
    """MODL value grouping of a level-1 categorical table (docs/algorithms/modl.md#grouping).

    Parameters
    ----------
    table
        A ``Categories`` value: kept values, ``(n_values, n_classes)`` counts, star and missing counts.
    criterion
        ``"khiops"`` (default: Khiops' criterion with garbage group, without granularity) or
        ``"boulle2005"`` (the prior of Boullé 2005, MODL grouping).
    method
        ``"auto"`` (see the module docstring), ``"exact"`` (every set partition, at most
        :data:`EXACT_MAX_VALUES` values), ``"greedy"`` or ``"null"`` (one group, no search).
    selection_cost
        c_sel ≥ 0 charged to informative models, e.g. log K for K candidate variables
        (docs/algorithms/modl.md#level-and-prior-cost).

    Returns
    -------
    Groups
        The best grouping found; J in the costs is the number of classes with a positive count;
        missing values are one more input value; unseen values go to ``star_part``.

    Examples
    --------
    >>> from wnb_stream.summaries import Categories
    >>> rng = np.random.default_rng(1)
    >>> rates = np.repeat([0.1, 0.5, 0.9], 4)  # twelve values, three hidden levels of P(b | v)
    >>> sizes = rng.integers(20, 60, 12)
    >>> b = rng.binomial(sizes, rates)
    >>> table = Categories(values=tuple("ABCDEFGHIJKL"), counts=np.column_stack([sizes - b, b]),
    ...                    classes=("a", "b"), missing=[0, 0], star=[0, 0])
    >>> groups = group(table)
    >>> [''.join(str(v) for v in g) for g in groups.groups], round(groups.level, 4)
    (['ABCD', 'EFGH<star>', 'IJKL'], 0.3504)
    """
    if not isinstance(table, Categories):
        raise TypeError(f"table must be a Categories value, got {type(table).__name__}")
    check_options(criterion, CRITERIA, method, selection_cost)
    keys, counts_all, unused = _inputs(table)
    if len(keys) == 0:
        return _groups(table, keys, counts_all, None, unused, False, 0.0, 0.0, 0.0, criterion, "null")
    columns = observed_columns(counts_all)
    counts = counts_all[:, columns]
    n_values = len(keys)
    null_labels = np.zeros(n_values, dtype=np.intp)
    if len(columns) < 2:
        # fewer than two classes: nothing to code (Khiops returns cost 0)
        return _groups(table, keys, counts_all, null_labels, unused, False, 0.0, 0.0, 0.0, criterion, "null")

    crit = _Criterion(counts, criterion, selection_cost)
    null_cost, _ = crit.cost(counts, null_labels)
    if method == "null" or n_values == 1:
        labels, used = null_labels, "null"
    else:
        labels, used = search_groups(counts, crit, method)
    cost, garbage = crit.cost(counts, labels)
    if labels.max() > 0 and not is_informative(cost, null_cost):
        labels, cost, garbage = null_labels, null_cost, False
    n_parts = int(labels.max()) + 1
    part_counts = np.zeros((n_parts, counts.shape[1]))
    np.add.at(part_counts, labels, counts)
    b_x = prior_cost(part_counts, cost, criterion)
    return _groups(table, keys, counts_all, labels, unused, garbage, cost, null_cost, b_x, criterion, used)


def null_groups(table: Categories, *, criterion: str = "khiops", selection_cost: float = 0.0) -> Groups:
    """The one-group model of a table (used before the first rebuild is worthwhile)."""
    return group(table, criterion=criterion, method="null", selection_cost=selection_cost)
