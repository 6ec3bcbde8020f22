"""The values level 2 hands on: a partition of a variable with its class counts and lookups.

``Intervals`` (numeric variables) and ``Groups`` (categorical variables) are frozen values. Both
carry the part × class counts, the MODL costs (``cost``, ``null_cost``, ``level``, ``prior_cost``)
and the conditional log-probabilities ``log_prob[i, j] = log p(part i | C_j)`` of the Khiops
estimator (docs/algorithms/modl.md#log-probabilities), and map raw values to parts:

- ``part_index(values) -> (n,) int array`` (−1 for a missing value when the table had none);
- ``log_likelihood(values) -> (n, J)`` rows of ``log_prob`` (a zero row for index −1, so the
  variable drops out of that prediction);
- ``log_likelihood_one(x) -> (J,)``: the same for one value, without array overhead.

Design note — the lookup table. ``log_prob`` is stored with one extra row of zeros appended, so
``table[part_index]`` answers index −1 (missing value, table without missing values) by NumPy's
negative indexing with no branch; the scalar path keeps the rows as a tuple of read-only arrays
and the interval bounds as a Python list for ``bisect``.

Saved records (docs/saved-model.md). A partition's record holds the dataclass fields (classes,
bounds or groups, part × class counts, the part of missing and unseen values, the MODL costs and
how it was built). The lookups are caches rebuilt by the constructor: ``log_prob`` and the table
with its zero row (from the counts, by the Khiops estimator), the row views, the cut list and the
offset of ``Intervals``, the value → part dict of ``Groups``. They come back bit for bit, since
the constructor computes them from the same counts as the search that built the partition. In
``Groups.groups`` the pseudo-values ``STAR`` and ``MISSING`` are written ``{"marker": "star"}``
and ``{"marker": "missing"}``, in their place among the group's values.
"""

from __future__ import annotations

import bisect
import dataclasses

import numpy as np

from ..io.errors import ModelFileError, join, where
from ..io.registry import register
from ..io.schema import Array, Fields, Float, Int, Kind, List, Schema, Str, _dump_key, _load_key
from ..summaries.base import CLASSES, all_close

__all__ = ["Intervals", "Groups", "STAR", "MISSING", "log_probabilities"]

# Tolerance of the MODL cost comparisons (Khiops ``dEpsilon``, docs/algorithms/modl.md#comparing-costs).
COST_TOLERANCE = 1e-6

#: The searches that build a partition (``discretize`` and ``group``'s ``method``).
METHODS = ("auto", "exact", "greedy", "null")

#: The MODL criteria of a discretization and of a grouping (``discretization.CRITERIA``,
#: ``grouping.CRITERIA``).
INTERVAL_CRITERIA = ("bins", "boulle2006")
GROUP_CRITERIA = ("khiops", "boulle2005")


class _Marker:
    """A named singleton standing for a pseudo-value in ``Groups.groups`` (the star, the missing)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name.lower()}>"

    def __reduce__(self):
        # Pickle by reference to the module-level name, so the singletons stay unique.
        return self.name


#: Stands for every value not kept by the level-1 summary (docs/algorithms/summaries.md#categorical,
#: docs/algorithms/modl.md#grouping).
STAR = _Marker("STAR")
#: Stands for the missing value (None or NaN) of a categorical variable (docs/algorithms/modl.md#grouping).
MISSING = _Marker("MISSING")


def log_probabilities(counts: np.ndarray) -> np.ndarray:
    """Khiops estimator of log p(part i | C_j) from ``(I, J)`` part × class counts.

    p(i | C_j) = (N_ij + ε) / (N_j + I·ε), ε = 1/(N + 1), N the total count. Never 0, so the
    logs are finite; a class with N_j = 0 gets 1/I in every part. Returns an ``(I, J)`` array
    (docs/algorithms/modl.md#log-probabilities).

    >>> np.round(np.exp(log_probabilities(np.array([[3.0, 0.0], [1.0, 0.0]]))), 4).tolist()
    [[0.7273, 0.5], [0.2727, 0.5]]
    """
    counts = np.asarray(counts, dtype=float)
    return _log_probabilities(counts, np.empty(counts.shape))


def _log_probabilities(counts: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``log_probabilities`` of ``(I, J)`` float counts, written into ``out`` ``(I, J)`` and returned."""
    n_parts = counts.shape[0]
    # (ε in Python floats: the same IEEE operations as on NumPy scalars, without their overhead)
    epsilon = 1.0 / (float(counts.sum()) + 1.0)
    return np.subtract(np.log(counts + epsilon), np.log(counts.sum(axis=0) + n_parts * epsilon), out=out)


#: Largest total count of a partition whose log-probabilities a load's screen takes as sound
#: without computing them (``Intervals.screen_columns``): far from overflow, for any part count.
_SCREEN_TOTAL = 1e250


def _frozen(array, dtype=float) -> np.ndarray:
    array = np.array(array, dtype=dtype, copy=True)
    array.setflags(write=False)
    return array


def _lookup_tables(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple]:
    """``(_table, log_prob, _rows)`` of ``(I, J)`` part × class counts (see the module design note)."""
    n_parts = counts.shape[0]
    # (I + 1, J): the last row answers part index −1 (a missing value, table without missing
    # values) with log-likelihood 0: docs/algorithms/modl.md#log-probabilities.
    table = np.empty((n_parts + 1, counts.shape[1]))
    _log_probabilities(counts, table[:n_parts])
    table[n_parts] = 0.0
    table.setflags(write=False)
    # a read-only view of the first I rows, and the read-only row views
    return table, table[:n_parts], tuple(table)


def _owned_frozen(array: np.ndarray) -> np.ndarray:
    """``_frozen(array)`` for a float array handed over by its only holder: frozen in place when it
    owns C-contiguous float64 data (the copy would be equal), else copied."""
    if array.base is None and array.dtype == np.float64 and array.flags.c_contiguous:
        array.setflags(write=False)
        return array
    return _frozen(array)


class _Lookup:
    """Shared part of ``Intervals`` and ``Groups``: costs, estimator and likelihood lookups."""

    def _init_lookup(self):
        counts = _frozen(self.counts)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "classes", tuple(self.classes))
        table, log_prob, rows = _lookup_tables(counts)
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "log_prob", log_prob)
        object.__setattr__(self, "_rows", rows)

    @property
    def n_parts(self) -> int:
        """Number of parts I."""
        return self.counts.shape[0]

    @property
    def n(self) -> float:
        """Total count of the table the partition was built on (missing values included)."""
        return float(self.counts.sum())

    @property
    def informative(self) -> bool:
        """True when the MODL model beats the null model (``level > 0``)."""
        return self.level > 0.0

    def log_likelihood(self, values) -> np.ndarray:
        """``(n, J)`` array of log p(x | C_j) for each value (zeros where ``part_index`` is −1).

        Cost: O(n log I) for intervals, O(n) dictionary look-ups for groups.
        """
        return self._table[self.part_index(values)]

    def _lookup_problems(self) -> list[str]:
        """The broken invariants shared by both partitions: the counts, their lookup table (each
        class column of p(i | C_j) a distribution over the parts), the costs and the Level."""
        if self.counts.ndim != 2 or self.counts.shape[0] < 1 or self.counts.shape[1] != len(self.classes):
            return [f"counts: expected at least one part and n_classes = {len(self.classes)} columns, got shape {self.counts.shape}"]
        found = []
        if not (np.all(np.isfinite(self.counts)) and np.all(self.counts >= 0)):
            found.append("counts: must be finite and >= 0")
        if not self.cost <= self.null_cost + COST_TOLERANCE:
            found.append(f"cost: must be <= null_cost = {self.null_cost!r} (the null model is a candidate), got {self.cost!r}")
        if not 0.0 <= self.level < 1.0:
            found.append(f"level: must be in [0, 1), got {self.level!r}")
        elif self.level != 0.0 and self.n_parts < 2:
            found.append("level: must be 0 for a partition of one part")
        if not np.isfinite(self.counts.sum()):
            found.append("counts: must add up to a finite total")
        log_prob = self.log_prob
        if log_prob.shape != self.counts.shape or not np.all(np.isfinite(log_prob)) or not all_close(np.exp(log_prob).sum(axis=0), 1.0, rtol=1e-5, atol=1e-8):
            found.append("counts: do not give finite log-probabilities (Khiops estimator)")
        if not -1 <= self.missing_part < self.n_parts:
            found.append(f"missing_part: must be in [-1, n_parts = {self.n_parts}), got {self.missing_part}")
        return found

    def _check(self):
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def _cost_fields(self) -> dict:
        return {name: getattr(self, name) for name in _FIELDS}


@dataclasses.dataclass(frozen=True, eq=False)
class Intervals(_Lookup):
    """A MODL discretization of a numeric variable: intervals with class counts.

    Numeric interval ``k`` covers ``(upper_bounds[k − 1], upper_bounds[k]]`` (right-closed, the first
    starts at −∞ and the last extends to +∞). When the table had missing values they form a bin
    placed before the first bin (docs/algorithms/modl.md#discretization): either merged with the
    first interval (then ``missing_part == 0`` and part ``k`` is interval ``k``) or isolated in
    part 0 (then part ``k + 1`` is interval ``k``). ``missing_part`` is −1 when the table had no missing value.

    Attributes
    ----------
    classes
        Class labels, one per column of ``counts``.
    upper_bounds
        ``(n_intervals,)`` right boundaries of the numeric intervals (the last is informative only).
    counts
        ``(n_parts, n_classes)`` part × class counts, missing values included.
    missing_part
        Part holding missing values (None, NaN, ±inf), or −1.
    cost, null_cost
        MODL cost c(M*) of this partition and c(M0) of the one-part model (nats).
    level
        1 − c(M*)/c(M0), or 0 for an uninformative variable
        (docs/algorithms/modl.md#level-and-prior-cost).
    prior_cost
        B(X) = selection cost + preparation cost (docs/algorithms/modl.md#level-and-prior-cost).
    criterion, method
        The criterion used and the search that produced the partition.
    log_prob
        ``(n_parts, n_classes)`` log p(part i | C_j) by the part estimator (derived;
        docs/algorithms/modl.md#log-probabilities).

    Examples
    --------
    >>> from wnb_stream.summaries import Bins
    >>> from wnb_stream import modl
    >>> table = Bins(upper_bounds=[1.0, 2.0, 3.0, 4.0], counts=[[10, 0], [8, 2], [1, 9], [0, 10]],
    ...              classes=("a", "b"), missing=[0, 0])
    >>> intervals = modl.discretize(table)
    >>> intervals.upper_bounds.tolist(), round(intervals.level, 6)
    ([2.0, 4.0], 0.444795)
    >>> intervals.part_index(np.array([0.5, 2.0, 2.5, 99.0, np.nan])).tolist()
    [0, 0, 1, 1, -1]
    >>> np.round(intervals.log_likelihood_one(1.5), 4).tolist()
    [-0.0553, -2.3416]
    """

    classes: tuple
    upper_bounds: np.ndarray
    counts: np.ndarray
    missing_part: int
    cost: float
    null_cost: float
    level: float
    prior_cost: float
    criterion: str = "bins"
    method: str = "null"
    log_prob: np.ndarray = dataclasses.field(init=False, repr=False)
    _table: np.ndarray = dataclasses.field(init=False, repr=False)
    _rows: tuple = dataclasses.field(init=False, repr=False)
    _cuts: list = dataclasses.field(init=False, repr=False)
    _offset: int = dataclasses.field(init=False, repr=False)

    def __post_init__(self):
        self._init_lookup()
        upper_bounds = _frozen(np.asarray(self.upper_bounds, dtype=float).reshape(-1))
        object.__setattr__(self, "upper_bounds", upper_bounds)
        object.__setattr__(self, "missing_part", int(self.missing_part))
        for name in ("cost", "null_cost", "level", "prior_cost"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "_cuts", upper_bounds[:-1].tolist())
        object.__setattr__(self, "_offset", self.n_parts - len(upper_bounds))

    @classmethod
    def _assemble(cls, classes, upper_bounds, counts, missing_part, cost, null_cost, level, prior_cost, criterion, method,
                  table=None):  # fmt: skip
        """``Intervals(...)`` of these fields, for ``discretize``, whose arrays already have their shapes.

        The value and its attributes (in the order the dataclass ``__init__`` and ``__post_init__``
        set them) are those of the constructor, for ``upper_bounds`` ``(n_intervals,)`` and
        ``counts`` ``(n_parts, n_classes)`` float arrays and a tuple of classes; it skips the
        frozen dataclass's per-field ``__setattr__`` calls and its argument normalisation. The
        value takes over arrays that own their data (they become read-only): the caller hands
        over fresh arrays that nothing else holds. ``table``: the ``(I + 1, J)`` lookup table of
        ``_lookup_tables(counts)``, already computed (``discretize_many``, for many partitions at
        once), a fresh array that becomes read-only.
        """
        counts = _owned_frozen(counts)
        upper_bounds = _owned_frozen(upper_bounds)
        if table is None:
            table, log_prob, rows = _lookup_tables(counts)
        else:
            table.setflags(write=False)
            log_prob, rows = table[: counts.shape[0]], tuple(table)
        value = object.__new__(cls)
        value.__dict__.update(
            classes=tuple(classes),
            upper_bounds=upper_bounds,
            counts=counts,
            missing_part=int(missing_part),
            cost=float(cost),
            null_cost=float(null_cost),
            level=float(level),
            prior_cost=float(prior_cost),
            criterion=criterion,
            method=method,
            _table=table,
            log_prob=log_prob,
            _rows=rows,
            _cuts=upper_bounds[:-1].tolist(),
            _offset=counts.shape[0] - len(upper_bounds),
        )
        return value

    @property
    def n_intervals(self) -> int:
        """Number of numeric intervals (``n_parts`` minus one when missing values are isolated)."""
        return len(self.upper_bounds)

    def part_index(self, values) -> np.ndarray:
        """``(n,)`` part index of each value of a 1-D array (None/NaN/±inf are missing).

        Right-closed intervals: x ≤ boundary goes left. Missing values go to ``missing_part``
        (−1 if the table had none). Cost: O(n log I).
        """
        values = np.asarray(values, dtype=float).reshape(-1)
        # (the cuts as a view of the bounds: the values of ``_cuts`` without converting the list)
        index = np.searchsorted(self.upper_bounds[:-1], values, side="left")
        if self._offset:
            index += self._offset
        finite = np.isfinite(values)
        if not finite.all():
            index[~finite] = self.missing_part
        return index

    def log_likelihood_one(self, x) -> np.ndarray:
        """``(J,)`` log p(x | C_j) for one value (read-only array; zeros if skipped). Cost O(log I)."""
        if x is None:
            return self._rows[self.missing_part]
        x = float(x)
        if x - x != 0.0:  # NaN or ±inf: missing
            return self._rows[self.missing_part]
        return self._rows[bisect.bisect_left(self._cuts, x) + self._offset]

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. O(I·J)."""
        n_parts, n_intervals = self.n_parts, self.n_intervals
        if n_intervals < 1:
            return ["upper_bounds: a discretization has at least one interval"]
        if n_parts not in (n_intervals, n_intervals + 1):
            return [f"counts: expected n_intervals = {n_intervals} or one more parts, got {n_parts}"]
        found = []
        if n_parts == n_intervals + 1 and self.missing_part != 0:
            found.append("missing_part: must be 0 when missing values have a part of their own")
        found += self._lookup_problems()
        if not np.all(np.diff(self.upper_bounds) > 0):
            found.append("upper_bounds: must increase strictly")
        return found

    @staticmethod
    def screen_columns(group) -> np.ndarray:
        """``(m,)`` True for the discretizations of a table's group (``io.columns.Group``: the
        checked columns of m records) whose ``problems()`` may not be empty: the checks beyond the
        schema's (which holds the shapes, counts >= 0 and finite, increasing bounds, the Level's
        and missing part's ranges), over all m at once. The log-probabilities of finite counts
        whose total is at most ``_SCREEN_TOTAL`` are finite and sum to 1 within rounding, so a
        larger total is marked rather than computed. O(total size)."""
        counts, bounds = group.column("counts"), group.column("upper_bounds")
        n_parts, n_intervals = counts.shapes[:, 0], bounds.sizes
        cost, null_cost, level = (np.asarray(group.column(name), dtype=float) for name in ("cost", "null_cost", "level"))
        missing_part = np.asarray(group.column("missing_part"), dtype=np.int64)
        total = np.bincount(counts.segment_ids(), weights=counts.data, minlength=group.m)
        with np.errstate(invalid="ignore"):
            return (
                (n_intervals < 1)
                | ((n_parts != n_intervals) & (n_parts != n_intervals + 1))
                | ((n_parts == n_intervals + 1) & (missing_part != 0))
                | ~(cost <= null_cost + COST_TOLERANCE)
                | ((level != 0.0) & (n_parts < 2))
                | ~(total <= _SCREEN_TOTAL)
            )

    def record_state(self) -> dict:
        """The state fields of the record: the dataclass fields (the lookups are rebuilt)."""
        return {
            "classes": list(self.classes),
            "upper_bounds": self.upper_bounds,
            "counts": self.counts,
            "missing_part": self.missing_part,
            **self._cost_fields(),
        }

    @classmethod
    def from_record(cls, fields: Fields) -> Intervals:
        """The partition a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        state = fields.state
        return cls(
            classes=tuple(state["classes"]),
            upper_bounds=state["upper_bounds"],
            counts=state["counts"],
            missing_part=state["missing_part"],
            **{name: state[name] for name in _FIELDS},
        )


@dataclasses.dataclass(frozen=True, eq=False)
class Groups(_Lookup):
    """A MODL value grouping of a categorical variable: groups of values with class counts.

    Attributes
    ----------
    classes
        Class labels, one per column of ``counts``.
    groups
        One tuple of values per part; the pseudo-values ``STAR`` (every value the summary did not
        keep, and values never seen) and ``MISSING`` appear in the group that holds them.
    counts
        ``(n_parts, n_classes)`` part × class counts.
    star_part
        Group of unseen values (docs/algorithms/modl.md#grouping).
    missing_part
        Group of missing values (None, NaN), or −1 when the table had none.
    garbage_part
        Group coded as the garbage group (docs/algorithms/modl.md#grouping), or −1.
    cost, null_cost, level, prior_cost, criterion, method, log_prob
        As in ``Intervals``.

    Examples
    --------
    >>> from wnb_stream.summaries import Categories
    >>> from wnb_stream import modl
    >>> table = Categories(values=("A", "B", "C", "D", "E"),
    ...                    counts=[[10, 0], [9, 1], [1, 9], [0, 10], [5, 5]],
    ...                    classes=(0, 1), missing=[0, 0], star=[0, 0])
    >>> groups = modl.group(table)
    >>> groups.groups, round(groups.level, 6)
    ((('A', 'B'), ('C', 'D'), ('E', <star>)), 0.306792)
    >>> groups.part_index(np.array(["D", "Z", None], dtype=object)).tolist()
    [1, 2, -1]
    """

    classes: tuple
    groups: tuple
    counts: np.ndarray
    star_part: int
    missing_part: int
    garbage_part: int
    cost: float
    null_cost: float
    level: float
    prior_cost: float
    criterion: str = "khiops"
    method: str = "null"
    log_prob: np.ndarray = dataclasses.field(init=False, repr=False)
    _table: np.ndarray = dataclasses.field(init=False, repr=False)
    _rows: tuple = dataclasses.field(init=False, repr=False)
    _index: dict = dataclasses.field(init=False, repr=False)

    def __post_init__(self):
        self._init_lookup()
        object.__setattr__(self, "groups", tuple(tuple(g) for g in self.groups))
        for name in ("star_part", "missing_part", "garbage_part"):
            object.__setattr__(self, name, int(getattr(self, name)))
        for name in ("cost", "null_cost", "level", "prior_cost"):
            object.__setattr__(self, name, float(getattr(self, name)))
        index = {}
        for part, members in enumerate(self.groups):
            for value in members:
                if value is not STAR and value is not MISSING:
                    index[value] = part
        # None is the usual missing value: answer it by the dictionary too.
        index[None] = self.missing_part
        object.__setattr__(self, "_index", index)

    def part_index(self, values) -> np.ndarray:
        """``(n,)`` group index of each value of a 1-D array.

        Unseen values go to ``star_part``; None and NaN to ``missing_part`` (−1 if the table had no
        missing value). Cost: O(n) dictionary look-ups.
        """
        values = np.asarray(values, dtype=object).reshape(-1)
        get, star, missing = self._index.get, self.star_part, self.missing_part
        # ``v == v`` is False only for NaN: the missing float.
        return np.fromiter(
            (get(v, star) if v == v else missing for v in values.tolist()), dtype=np.intp, count=len(values)
        )

    def log_likelihood_one(self, x) -> np.ndarray:
        """``(J,)`` log p(x | C_j) for one value (read-only array; zeros if skipped). Cost O(1)."""
        try:
            part = self._index.get(x, self.star_part)
        except TypeError:  # an unhashable value was never seen
            part = self.star_part
        if part == self.star_part and x != x:  # NaN: the missing float
            part = self.missing_part
        return self._rows[part]

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound: every value in one group only, the star marker in ``star_part`` only, the
        missing marker in ``missing_part`` only, and the shared ones. O(values + I·J)."""
        if len(self.groups) != self.n_parts:
            return [f"groups: expected n_parts = {self.n_parts} groups, got {len(self.groups)}"]
        seen: dict = {}
        stars, missings = [], []
        for part, members in enumerate(self.groups):
            for i, value in enumerate(members):
                path = join(join("groups", part), i)
                if value is STAR:
                    stars.append(part)
                elif value is MISSING:
                    missings.append(part)
                elif value in seen:
                    return [f"{path}: {value!r} is in two places (also {seen[value]})"]
                else:
                    seen[value] = path
        found = []
        # (the star may be listed twice in its group: once as the table's star value, once as unseen values)
        if not stars or set(stars) != {self.star_part}:
            found.append(f"star_part: the star marker must be in group star_part = {self.star_part} only, found in {stars}")
        expected = set() if self.missing_part < 0 else {self.missing_part}
        if set(missings) != expected:
            found.append(f"missing_part: the missing marker must be in group missing_part = {self.missing_part} only, found in {missings}")
        if not -1 <= self.garbage_part < self.n_parts:
            found.append(f"garbage_part: must be in [-1, n_parts = {self.n_parts}), got {self.garbage_part}")
        return found + self._lookup_problems()

    def record_state(self) -> dict:
        """The state fields of the record: the dataclass fields (the lookups are rebuilt)."""
        return {
            "classes": list(self.classes),
            "groups": [list(members) for members in self.groups],
            "counts": self.counts,
            "star_part": self.star_part,
            "missing_part": self.missing_part,
            "garbage_part": self.garbage_part,
            **self._cost_fields(),
        }

    @classmethod
    def from_record(cls, fields: Fields) -> Groups:
        """The partition a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        state = fields.state
        return cls(
            classes=tuple(state["classes"]),
            groups=tuple(tuple(members) for members in state["groups"]),
            counts=state["counts"],
            star_part=state["star_part"],
            missing_part=state["missing_part"],
            garbage_part=state["garbage_part"],
            **{name: state[name] for name in _FIELDS},
        )


# ------------------------------------------------------------------------------------------------
# Saved records (docs/saved-model.md)

#: The costs and provenance fields of both records, after the partition's own.
_FIELDS = ("cost", "null_cost", "level", "prior_cost", "criterion", "method")

_MARKERS = {"star": STAR, "missing": MISSING}


class Member(Kind):
    """A member of a group: a category value (a key, as in ``Keys``) or the marker of the star or
    of the missing value."""

    doc = "a category value, or the marker {\"marker\": \"star\"} or {\"marker\": \"missing\"}"

    def dump(self, value, path):
        if value is STAR or value is MISSING:
            return {"marker": value.name.lower()}
        return _dump_key(value, path)

    def load(self, node, path, scope):
        if isinstance(node, dict) and "marker" in node:
            if set(node) != {"marker"} or not isinstance(node["marker"], str) or node["marker"] not in _MARKERS:
                raise ModelFileError(f"{where(path)}: malformed marker {node!r}")
            return _MARKERS[node["marker"]]
        return _load_key(node, path)

    def text(self):
        return "category value or marker"


def _costs() -> dict:
    return {
        "cost": Float(doc="MODL cost c(M*) of the partition (nats)"),
        "null_cost": Float(doc="cost c(M0) of the one-part model"),
        "level": Float(low=0.0, below=1.0, doc="1 − c(M*)/c(M0), or 0"),
        "prior_cost": Float(doc="B(X): selection plus preparation cost"),
    }


register(
    "Intervals",
    Intervals,
    Schema(
        state={
            "classes": CLASSES,
            "upper_bounds": Array(
                "float64", ("n_intervals",), finite=False, increasing=True, doc="right bounds of the intervals (the last may be +inf)"
            ),
            "counts": Array("float64", ("n_parts", "n_classes"), low=0.0, doc="part × class counts, missing values included"),
            "missing_part": Int(low=-1, below="n_parts", doc="part of missing values, or −1"),
            **_costs(),
            "criterion": Str(choices=INTERVAL_CRITERIA, doc="the MODL criterion used"),
            "method": Str(choices=METHODS, doc="the search that built the partition"),
        },
        doc="MODL discretization of a numeric variable",
    ),
    state=Intervals.record_state,
    build=Intervals.from_record,
)

register(
    "Groups",
    Groups,
    Schema(
        state={
            "classes": CLASSES,
            "groups": List(List(Member()), length="n_parts", doc="the values of each group, with the star and missing markers"),
            "counts": Array("float64", ("n_parts", "n_classes"), low=0.0, doc="group × class counts"),
            "star_part": Int(low=0, below="n_parts", doc="group of unseen values (holds the star)"),
            "missing_part": Int(low=-1, below="n_parts", doc="group of missing values, or −1"),
            "garbage_part": Int(low=-1, below="n_parts", doc="the garbage group, or −1"),
            **_costs(),
            "criterion": Str(choices=GROUP_CRITERIA, doc="the MODL criterion used"),
            "method": Str(choices=METHODS, doc="the search that built the partition"),
        },
        doc="MODL value grouping of a categorical variable",
    ),
    state=Groups.record_state,
    build=Groups.from_record,
)
