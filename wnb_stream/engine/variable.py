"""One variable's pipeline: level-1 summary → level-2 model → log p(x | C_j) lookups.

A ``Variable`` owns the summary of one feature and the model level 2 built from it:

- a MODL partition (numeric summaries with bins, categorical summaries): a table of
  ``log_prob (n_parts, J)`` and a locator that maps a value to its part;
- per-class Gaussians (``summaries.Gaussian``): analytic log-densities, no parts.

Design note. Prediction is the hot path, so a binned variable compiles its partition into a
locator once per rebuild, and the classifier gathers rows of a stacked table with it:

- numeric: the sorted ``cuts`` between consecutive parts and the ``first_part``; a finite value
  ``x`` lies in part ``first_part + #{cuts < x}`` (``bisect_left``), so the classifier can locate
  all the numeric variables of a row at once with one comparison against a padded matrix of cuts;
- categorical: a dict value → part, with the part of unseen values (the star).

The locators are derived from the partition's public ``part_index`` (so they agree with it by
construction) and are checked against it in the tests.
"""

from __future__ import annotations

import bisect
import collections
import copy
import math

import numpy as np

from .. import modl
from ..io.errors import join
from ..io.registry import Record, register
from ..io.schema import Array, Bool, Fields, Float, Int, Key, Keys, Optional, Schema, Str, Struct
from ..modl.batch import discretize_many_flagged, discretize_stacked
from ..modl.partition import MISSING, STAR
from ..summaries.base import Summary
from ..summaries.policy import feature_value
from ..tables import Bins, Categories

__all__ = ["Scorer", "Variable", "value_kind"]

#: ``locate`` result for a value that contributes nothing (missing with no missing statistics).
NOWHERE = -1


def first_of_equal(bounds: np.ndarray, counts: np.ndarray, missing: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``(T,)`` for each of the stacked tables (``Variable._stack``), the first table equal to it:
    the same number of bins and the same bytes of bounds, counts and missing counts (itself when
    none comes before it).

    Each table gets a signature that equal tables share: its length, its missing counts' bits
    and a sum modulo 2⁶⁴ of its bounds' and counts' bits, each bin's times an odd multiplier of
    its place (exact in any order of addition). Tables whose signature is unique have no equal;
    only those whose signature is shared are compared byte for byte, in Python. On a dense stream
    that is none of them; on a sparse one, most tables are a few equal shapes.

    >>> b = np.array([1.0, 2.0, 1.0, 2.0, 3.0]); c = np.ones((5, 2))
    >>> first_of_equal(b, c, np.zeros((3, 2)), np.array([0, 2, 4, 5])).tolist()
    [0, 0, 2]
    """
    T = len(starts) - 1
    first = np.arange(T)
    if T < 2:
        return first
    lengths = np.diff(starts)
    owner = np.repeat(np.arange(T), lengths)
    place = (np.arange(len(bounds), dtype=np.uint64) - starts[:-1].astype(np.uint64)[owner]) * np.uint64(2) + np.uint64(1)
    with np.errstate(over="ignore"):  # (uint64 arithmetic wraps: a sum modulo 2⁶⁴)
        mixed = np.ascontiguousarray(bounds, dtype=float).view(np.uint64) * (place * np.uint64(0x9E3779B97F4A7C15))
        bits = np.ascontiguousarray(counts, dtype=float).view(np.uint64)
        for j in range(bits.shape[1]):
            mixed += bits[:, j] * (place * np.uint64(0xC2B2AE3D27D4EB4F + 2 * j))
        sums = np.zeros(T, dtype=np.uint64)
        np.add.at(sums, owner, mixed)
    keys = np.column_stack([lengths.astype(np.uint64), sums, np.ascontiguousarray(missing, dtype=float).view(np.uint64)])
    keys = list(map(tuple, keys.tolist()))
    shared = collections.Counter(keys)
    seen: dict = {}
    for t in [t for t, key in enumerate(keys) if shared[key] > 1]:
        a, b = int(starts[t]), int(starts[t + 1])
        first[t] = seen.setdefault((bounds[a:b].tobytes(), counts[a:b].tobytes(), missing[t].tobytes()), t)
    return first


def value_kind(value) -> str | None:
    """The kind of variable a value belongs to: "numeric", "categorical", or None if missing.

    ``summaries.policy.feature_value`` decides (one policy for the whole package): numbers, dates
    and durations are numeric; strings, bools and tuples are categorical; None, NaN, pandas' NA and
    NaT are missing; ±inf are numeric values that the summaries count as missing. ``ValueError``
    for a value the classifier refuses (unhashable, complex, bytes, beyond the float range, or
    any other value a saved model cannot hold).
    """
    return feature_value(value)[0]


class Variable:
    """One feature: its summary, its level-2 model and the lookups built from them.

    Parameters
    ----------
    name
        The feature name.
    kind
        "numeric" or "categorical".
    summary
        A fresh level-1 summary (a clone of the classifier's prototype).
    """

    __slots__ = (
        "name",
        "kind",
        "summary",
        "density",
        "model",
        "log_prob",
        "level",
        "prior_cost",
        "n_parts",
        "cuts",
        "first_part",
        "missing_part",
        "_groups",
        "_star_part",
        "_density",
    )

    def __init__(self, name, kind: str, summary: Summary):
        self.name = name
        self.kind = kind
        self.summary = summary
        self.density = summary is not None and bool(summary.scored_by_density)
        self.model = None
        self.log_prob = None  # (n_parts, J) for binned variables
        self.level = 0.0
        self.prior_cost = 0.0
        self.n_parts = 0
        # Numeric locator: part of a finite x = first_part + bisect_left(cuts, x) (NOWHERE: none).
        self.cuts: list = []
        self.first_part = NOWHERE
        self.missing_part = NOWHERE  # part of missing values (both kinds)
        self._groups: dict = {}
        self._star_part = NOWHERE
        self._density = None  # the summary's density (Summary.density), for a density-scored variable

    def __deepcopy__(self, memo: dict) -> Variable:
        """A copy with a copy of the summary, sharing the level 2 (``model``, ``log_prob``,
        ``cuts``, the groups, the density): a rebuild replaces those, never changes them, as
        ``Scorer.of`` relies on. O(summary); a merge copies every variable of a model
        (``engine.merge``), and copying each level 2 was most of that cost."""
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        for name in Variable.__slots__:
            setattr(clone, name, getattr(self, name))
        clone.summary = copy.deepcopy(self.summary, memo)
        return clone

    # ------------------------------------------------------------------ level 2
    def rebuild(self, classes: tuple, selection_cost: float, criterion: str | None = None, default=None) -> None:
        """Rebuild the level-2 model from the summary, with the class axis in ``classes`` order.

        ``default`` (numeric variables of a model whose absent features hold a value,
        ``docs/algorithms/summaries.md#absent-features``) is ``(value, class_counts (J,))``: the
        summary holds the variable's other values, so every row of the class counts it does not
        hold had the default value; that mass joins the table as a point (``Bins.with_point``,
        ``Moments.with_point``) before level 2 is built.
        """
        table = self._table(classes, default)
        options = {"selection_cost": selection_cost}
        if criterion is not None:
            options["criterion"] = criterion
        if self.density:
            self._density = self.summary.density(table)
            # docs/algorithms/summaries.md#gaussian: MODL on virtual bins gives a Level and a B(X) comparable
            # with binned variables, used by the regularizers and to decide activity.
            virtual = self.summary.level2_table(table)
            partition = modl.discretize(virtual, **options) if len(virtual.upper_bounds) else None
            self.model = partition
            self.level = float(partition.level) if partition is not None else 0.0
            self.prior_cost = float(partition.prior_cost) if partition is not None else selection_cost
            self.n_parts = 0
            return
        if isinstance(table, Bins):
            partition = modl.discretize(table, **options)
        elif isinstance(table, Categories):
            partition = modl.group(table, **options)
        else:  # pragma: no cover - a summary handing an unknown table is a programming error
            raise TypeError(f"unsupported table type {type(table).__name__}")
        self._take(partition, table)

    @property
    def flat(self) -> bool:
        """True when level 2 scores every value 0 for every class: a single part (MODL found no
        information), or not built yet. Such a variable changes no score, whatever its weight
        (``docs/algorithms/prediction.md#compact-window``). A built Gaussian is never flat."""
        if self.density:
            return self._density is None
        return self.log_prob is None or not self.log_prob.any()

    def _table(self, classes: tuple, default):
        """The summary's table on the class axis ``classes`` (``Summary.aligned_table``), with the
        default value's mass as a point (``rebuild``)."""
        table = self.summary.aligned_table(tuple(classes))
        if default is not None and self.kind == "numeric":
            value, class_counts = default
            held = (table.weights if self.density else table.counts.sum(axis=0)) + table.missing
            table = table.with_point(value, np.maximum(np.asarray(class_counts, dtype=float) - held, 0.0))
        return table

    @staticmethod
    def _stack(variables: list, classes: tuple, default) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The tables of ``[variable._table(classes, default) for variable in variables]`` (numeric
        variables whose summaries are of one type and hand ``Bins``, ``classes`` two or more),
        stacked as that type's ``Summary.stack_tables`` stacks them, with ``starts (T + 1,)``
        their first rows: read-only ``bounds (R,)``, ``counts (R, J)`` and ``missing (T, J)``,
        whose blocks are the tables.

        The summaries' tables are stacked, then the default value's point is found and inserted
        for all the tables at once. The same floats: a table's column sums, which the point
        needs, are the sums of its rows in order from 0 (``np.bincount``'s, as NumPy's ``sum``
        along the rows of a C-contiguous table with two or more columns, tested); the point is
        the same element-wise operations; bounds and counts are moved, not computed.

        A rebuild at a class threshold rebuilds every variable, thousands on a wide sparse
        stream; one at a time, ``_table`` cost more than their MODL searches.
        """
        J = len(classes)
        summaries = [variable.summary for variable in variables]
        bounds, counts, missing, lengths = type(summaries[0]).stack_tables(summaries, classes)
        T = len(lengths)
        starts = np.zeros(T + 1, dtype=np.intp)
        np.cumsum(lengths, out=starts[1:])
        if default is not None:
            value, class_counts = default
            owner = np.repeat(np.arange(T), lengths)
            held = np.stack([np.bincount(owner, weights=counts[:, j], minlength=T) for j in range(J)], axis=1)
            point = np.maximum(np.asarray(class_counts, dtype=float) - (held + missing), 0.0)  # (T, J)
            # where the point goes: after the bounds below it (``searchsorted``: the bounds increase)
            at = np.bincount(owner[bounds < value], minlength=T) if len(bounds) else np.zeros(T, dtype=np.intp)
            inside = at < lengths
            on_bound = np.zeros(T, dtype=bool)
            on_bound[inside] = bounds[(starts[:-1] + at)[inside]] == value
            has_point = point.any(axis=1)
            joins, inserted = has_point & on_bound, has_point & ~on_bound  # the point joins a bin, or is one
            counts[(starts[:-1] + at)[joins]] += point[joins]
            if inserted.any():
                new_lengths = lengths + inserted
                new_starts = np.zeros(T + 1, dtype=np.intp)
                np.cumsum(new_lengths, out=new_starts[1:])
                local = np.arange(len(bounds)) - starts[:-1][owner]
                moved = np.arange(len(bounds)) + (new_starts[:-1] - starts[:-1])[owner] + (inserted[owner] & (local >= at[owner]))
                grown_bounds, grown_counts = np.empty(int(new_starts[-1])), np.empty((int(new_starts[-1]), J))
                grown_bounds[moved], grown_counts[moved] = bounds, counts
                places = (new_starts[:-1] + at)[inserted]
                grown_bounds[places] = float(value)
                grown_counts[places] = point[inserted]
                bounds, counts, starts = grown_bounds, grown_counts, new_starts
        for array in (bounds, counts, missing):
            array.setflags(write=False)  # (the tables' views are read-only)
        return bounds, counts, missing, starts

    @staticmethod
    def null_proven(variables: list, n_classes: int, selection_cost: float, default) -> np.ndarray:
        """``(len(variables),)`` bool: True where a rebuild with these arguments is proven to give
        the null model again, so that it may be skipped (``docs/algorithms/prediction.md#rebuild-schedule``).

        Only numeric variables whose summary type allows it (``Summary.skip_null_rebuilds``,
        ``GKClass``'s) and whose level 2 is the null model (one part) on
        ``n_classes`` classes, or not built yet, qualify, in a model whose absent features hold a
        number (``default`` = ``(value, class_counts)``): their table is the default value's point
        and the weight the summary holds, and ``modl.null_proven`` bounds every split of such a
        table. A skipped variable's level 2 scores every value 0 for every class, as the null
        model does; its partition (if any) keeps the counts and costs of its last rebuild, and a
        variable never rebuilt has none (it costs no lookup rows). Its summary takes its buffered
        values as a rebuild's table would (``Summary.settle``), so the summaries do not depend on
        which rebuilds were skipped.
        """
        proven = np.zeros(len(variables), dtype=bool)
        if default is None or not variables or not math.isfinite(default[0]):
            return proven
        candidates, weights = [], []  # (one pass: each candidate settles as it is found)
        for t, v in enumerate(variables):
            if v.summary.skip_null_rebuilds and v.kind == "numeric" and (v.model is None or (v.n_parts == 1 and v.log_prob.shape[1] == n_classes)):
                candidates.append(t)
                weights.append(v.summary.settle())
        if not candidates:
            return proven
        held = np.array(weights)
        counts = default[1][:n_classes]
        # Every table has at least 2 atoms (one cannot be split); counting them proves more, so
        # it is done only for the variables that the least count leaves unproven.
        sure = modl.null_proven(held, np.full(len(candidates), 2), counts, selection_cost=selection_cost)
        rest = np.flatnonzero(~sure)
        if len(rest):
            atoms = np.array([variables[candidates[i]].summary.n_atoms() for i in rest.tolist()], dtype=np.intp)
            sure[rest] = modl.null_proven(held[rest], atoms, counts, selection_cost=selection_cost)
        proven[candidates] = sure
        return proven

    def _take(self, partition, table, plain: bool = False) -> None:
        """Make ``partition`` of ``table`` this variable's level 2 (a binned variable).

        ``plain``: the partition's atoms were the table's bins as they are (``discretize_many``'s
        usual tables: increasing bounds, no missing value, no empty bin), so its intervals are runs
        of the bins and the locator is read off the partition itself: the cuts are its upper bounds
        but the last, the first part is 0 and no part holds missing values, as ``_compile_locator``
        finds them (tested equal).
        """
        self.model = partition
        self.level = float(partition.level)
        self.prior_cost = float(partition.prior_cost)
        self.log_prob = np.asarray(partition.log_prob, dtype=float)
        self.n_parts = self.log_prob.shape[0]
        if plain:
            self.cuts = partition.upper_bounds[:-1].tolist()
            self.first_part = 0
            self.missing_part = int(partition.missing_part)
        else:
            self._compile_locator(partition, table)

    @staticmethod
    def rebuild_many(variables, classes: tuple, selection_cost: float, criterion: str | None = None, default=None) -> None:
        """``variable.rebuild(classes, selection_cost, criterion, default)`` for each of ``variables``.

        The same level 2 for each, bit for bit (tested); the numeric binned variables (with the
        default value's point, if any) are discretized together by ``modl.discretize_many``, one
        pass for all of them instead of one Python round per variable
        (``docs/algorithms/prediction.md#rebuild-schedule``).

        Equal tables are discretized once, and their variables share the partition (a frozen
        value, which a rebuild replaces and never mutates): among the stacked tables of a summary
        type, found by signature (``first_of_equal``) and discretized where they lie in the stack
        (``modl.batch.discretize_stacked``), without a ``Bins`` value each; among the others, by
        their bytes. On a sparse stream most variables are rare words seen once or twice, and
        with absent features holding a value (``default``) every one of them is rebuilt when a
        class count reaches its threshold: their tables are the class counts' point and one or
        two small bins, so a few thousand variables hold a few hundred distinct tables.
        """
        classes = tuple(classes)
        stacked: dict = {}  # summary type → its numeric variables (binned: not a density)
        if len(classes) > 1 and (default is None or math.isfinite(default[0])):  # (a default value
            for v in variables:  # that is not a number sorts apart: ``_table`` alone places it)
                if v.kind == "numeric" and not v.density:
                    stacked.setdefault(type(v.summary), []).append(v)
        together, tables, index = [], [], {}  # variables of each distinct table, the tables, table → its place

        def join(variable, bounds, counts, missing, classes_, make) -> None:
            """``variable`` to the group of its table (made by ``make()`` if it is the first)."""
            i = index.setdefault((bounds.tobytes(), counts.tobytes(), missing.tobytes(), classes_), len(tables))
            if i == len(tables):
                together.append([variable])
                tables.append(make())
            else:
                together[i].append(variable)

        options = {"selection_cost": selection_cost}
        if criterion is not None:
            options["criterion"] = criterion
        done = set()
        for group in stacked.values():  # their tables, stacked: each distinct one discretized where it lies
            if len(group) < 2:
                continue
            bounds, counts, missing, starts = Variable._stack(group, classes, default)
            first = first_of_equal(bounds, counts, missing, starts)
            partitions, plain, made = discretize_stacked(bounds, counts, missing, starts, classes, first == np.arange(len(group)), **options)
            plain = plain.tolist()
            for variable, f in zip(group, first.tolist()):
                variable._take(partitions[f], made[f], plain[f])
            done |= set(map(id, group))
        if done:
            variables = [variable for variable in variables if id(variable) not in done]
        for variable in variables:
            if variable.kind == "numeric" and not variable.density:
                table = variable._table(classes, default)
                if isinstance(table, Bins):
                    join(variable, table.upper_bounds, table.counts, table.missing, table.classes, lambda table=table: table)
                    continue
            variable.rebuild(classes, selection_cost, criterion, default)
        if not together:
            return
        partitions, plain = discretize_many_flagged(tables, **options)
        for group, partition, table, simple in zip(together, partitions, tables, plain.tolist()):
            for variable in group:
                variable._take(partition, table, simple)

    def _compile_locator(self, partition, table) -> None:
        if isinstance(table, Bins):
            bounds = np.asarray(table.upper_bounds, dtype=float)
            parts = partition.part_index(bounds) if len(bounds) else np.zeros(0, dtype=int)
            # Parts are runs of consecutive bins (intervals): a cut after each run but the last,
            # at the run's last bound (right-closed). No bin at all: finite values go nowhere.
            step = parts[1:] - parts[:-1]  # (n_bins - 1,)
            cut = step != 0  # a new part starts after bin i
            assert (step == cut).all(), "every interval holds consecutive bins"
            self.cuts = bounds[:-1][cut].tolist()
            # No finite bin (only missing values seen): a finite value goes where the partition
            # sends it (its single part, or nowhere).
            self.first_part = int(parts[0]) if len(parts) else int(partition.part_index(np.array([0.0]))[0])
            # part_index sends every missing value (None, NaN, ±inf) to ``missing_part``
            self.missing_part = int(partition.missing_part)
        else:
            values = np.empty(len(table.values), dtype=object)
            values[:] = list(table.values)
            parts = partition.part_index(values) if len(values) else np.zeros(0, dtype=int)
            self._groups = dict(zip(table.values, parts.tolist()))
            # Probe the star's group with a string that is not a kept value.
            kept = set(table.values)
            probe = "\x00unseen"
            while probe in kept:
                probe += "\x00"
            unseen = np.empty(1, dtype=object)
            unseen[0] = probe
            self._star_part = int(partition.part_index(unseen)[0])
            missing = np.empty(1, dtype=object)
            missing[0] = None
            self.missing_part = int(partition.part_index(missing)[0])

    # ------------------------------------------------------------------ lookups
    def locate(self, value) -> int:
        """Part of one value (``NOWHERE`` if it contributes nothing). Binned variables only.

        The value must already be of this variable's kind or missing. O(log n_parts).
        """
        if self.kind == "numeric":
            if value is None or value != value or value in (math.inf, -math.inf):
                return self.missing_part
            if self.first_part == NOWHERE:
                return NOWHERE
            return self.first_part + bisect.bisect_left(self.cuts, value)
        if value is None or (isinstance(value, float) and value != value):
            return self.missing_part
        return self._groups.get(value, self._star_part)

    def locate_many(self, values: np.ndarray) -> np.ndarray:
        """Parts of an array of values, ``(n,)`` ints (``NOWHERE`` where nothing is contributed)."""
        if self.model is None:
            return np.full(len(values), NOWHERE, dtype=np.intp)
        return np.asarray(self.model.part_index(values), dtype=np.intp)

    def log_lik_many(self, values: np.ndarray) -> np.ndarray:
        """ℓ_j(x) for an array of values, ``(n, J)`` (zeros where nothing is contributed)."""
        if self.density:
            if self._density is None:
                return np.zeros((len(values), 0))
            return self._density.log_likelihood(np.asarray(values, dtype=float))
        if self.log_prob is None:
            return np.zeros((len(values), 0))
        parts = self.locate_many(values)
        out = np.zeros((len(values), self.log_prob.shape[1]))
        ok = parts >= 0
        out[ok] = self.log_prob[parts[ok]]
        return out

    def log_lik_one(self, value) -> np.ndarray | None:
        """ℓ_j(x) of one value, ``(J,)``, or None if it contributes nothing."""
        if self.density:
            if self._density is None:
                return None
            return self._density.log_likelihood_one(value)
        if self.log_prob is None:
            return None
        part = self.locate(value)
        return None if part < 0 else self.log_prob[part]

    def memory_usage(self) -> int:
        size = int(self.summary.memory_usage())
        if self.log_prob is not None:
            size += int(self.log_prob.nbytes) + 16 * (len(self.cuts) + len(self._groups))
        return size

    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound: the summary is of the variable's kind, level 2 (partition, density, Level,
        prior cost) is of the variable's kind and scoring, and the locator sends every value
        where the partition does. O(values kept + parts)."""
        return list(_problems(self.record_state()))

    def _check(self) -> None:
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def record_state(self) -> dict:
        """The state fields of the record: name, kind, summary, level 2 and the locator compiled
        from the partition (``log_prob`` is the partition's table, rebuilt)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "summary": self.summary,
            "partition": self.model,
            "density": self._density,
            "level": self.level,
            "prior_cost": self.prior_cost,
            "locator": self._locator_record(),
        }

    @staticmethod
    def record_columns(variables: list) -> dict:
        """The ``record_state`` of each of ``variables`` as one list per field (``io.columns``: a
        wide model writes tens of thousands of variables, most of them never built). O(items)."""
        return {
            "name": [v.name for v in variables],
            "kind": [v.kind for v in variables],
            "summary": [v.summary for v in variables],
            "partition": [v.model for v in variables],
            "density": [v._density for v in variables],
            "level": [v.level for v in variables],
            "prior_cost": [v.prior_cost for v in variables],
            "locator": [v._locator_record() for v in variables],
        }

    def _locator_record(self) -> dict | None:
        """The record's ``locator``: the locator compiled from the partition, or None for a
        variable that is not binned (``log_prob`` is the partition's table, rebuilt)."""
        if self.log_prob is None:
            return None
        return {
            "cuts": np.asarray(self.cuts, dtype=float),
            "first_part": self.first_part,
            "missing_part": self.missing_part,
            "values": list(self._groups),
            "parts": np.array(list(self._groups.values()), dtype=np.int64),
            "star_part": self._star_part,
        }

    @staticmethod
    def screen_columns(group) -> np.ndarray:
        """``(m,)`` True for the variables of a table's group (``io.columns.Group``) whose
        ``problems()`` may not be empty: every variable with a level 2 (a partition, a density,
        a locator or a Level) or whose summary is of another kind. The others, a wide model's
        rare variables whose level 2 was never built, have no invariant left to break. O(m)."""
        partition, density, locator = (group.column(name)[0] for name in ("partition", "density", "locator"))
        summaries = group.column("summary")
        same_kind = np.array([s.kind == kind for s, kind in zip(summaries, group.column("kind"))], dtype=bool)
        return partition | density | locator | (group.column("level") != 0.0) | ~same_kind

    @classmethod
    def from_record(cls, fields: Fields) -> Variable:
        """The variable a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        s = fields.state
        return _with_level2(cls(s["name"], s["kind"], s["summary"]), fields)

    @classmethod
    def build_columns(cls, params: dict, state: dict) -> list:
        """The variables of many loaded, schema-checked records (``io.columns``: each field's
        per-item values), as ``from_record`` builds each, without a ``Fields`` per variable
        (``ValueError`` for a record ``from_record`` refuses: the loader then names it). O(items)."""
        out = []
        for name, kind, summary, partition, density, level, prior_cost, locator in zip(*(state[f] for f in _VARIABLE_SCHEMA.state)):
            v = cls(name, kind, summary)
            if not _set_level2(v, partition, density, level, prior_cost, locator):
                raise ValueError("a locator without a partition")
            out.append(v)
        return out


class Scorer(Variable):
    """A variable's level 2 without its summary: what scoring needs (a ``Predictor``'s variables).

    It locates and scores values exactly as the ``Variable`` it was taken from (the same
    partition, density and locator); it cannot learn or be rebuilt.
    """

    __slots__ = ()

    @classmethod
    def of(cls, variable: Variable) -> Scorer:
        """The level 2 of ``variable`` as of its last rebuild (shared: a rebuild replaces, never mutates it)."""
        scorer = cls.__new__(cls)
        for name in Variable.__slots__:
            setattr(scorer, name, getattr(variable, name))
        scorer.summary = None
        return scorer

    def rebuild(self, classes: tuple, selection_cost: float, criterion: str | None = None) -> None:
        raise TypeError("a Scorer has no summary to rebuild from")

    def memory_usage(self) -> int:
        size = 0 if self.log_prob is None else int(self.log_prob.nbytes) + 16 * (len(self.cuts) + len(self._groups))
        return size + (0 if self._density is None else 4 * int(self._density.means.nbytes))  # means, variances, two derived

    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants of its level 2 and locator (``Variable.problems`` without the summary)."""
        return list(_level2_problems(self._scorer_state(), self.density))

    def _scorer_state(self) -> dict:
        state = Variable.record_state(self)
        del state["summary"]
        return state

    def record_state(self) -> dict:
        """The state fields of the record: a ``Variable``'s but the summary, and how it scores."""
        state = self._scorer_state()
        return {"name": state.pop("name"), "kind": state.pop("kind"), "density_scored": self.density, **state}

    @classmethod
    def from_record(cls, fields: Fields) -> Scorer:
        """The scorer a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        s = fields.state
        scorer = cls.__new__(cls)
        Variable.__init__(scorer, s["name"], s["kind"], None)
        scorer.summary, scorer.density = None, bool(s["density_scored"])
        return _with_level2(scorer, fields)


# ------------------------------------------------------------------------------------------------
# The records' invariants, on the record's state (``record_state``), and the level 2 of a record


def _problems(s: dict):
    """``Variable.problems``: each broken invariant, as ``"field: what is wrong"``."""
    density = bool(s["summary"].scored_by_density)
    if s["kind"] == "categorical" and s["summary"].kind != "categorical":
        yield f"summary: a categorical variable needs a categorical summary, got {type(s['summary']).__name__}"
        return
    if s["kind"] == "numeric" and s["summary"].kind != "numeric":
        yield f"summary: a numeric variable needs a numeric summary, got {type(s['summary']).__name__}"
        return
    if s["density"] is not None and not density:
        yield "density: only a Gaussian summary has a density"
        return
    yield from _level2_problems(s, density)


def _level2_problems(s: dict, density: bool):
    """Level 2 of a variable scored by a ``density`` or by parts: partition, Level, locator (the
    first broken invariant of each group; a later group assumes the earlier ones hold)."""
    if density and s["kind"] != "numeric":
        yield "density: only a numeric variable is scored by a density"
        return
    locator, partition = s["locator"], s["partition"]
    if partition is not None:
        kind_of_partition = "numeric" if type(partition).__name__ == "Intervals" else "categorical"
        if kind_of_partition != s["kind"]:
            yield f"partition: a {s['kind']} variable cannot hold a {type(partition).__name__}"
            return
        # Variable.rebuild copies the partition's Level and prior cost
        if s["level"] != partition.level or s["prior_cost"] != partition.prior_cost:
            yield f"level: level and prior_cost must be the partition's ({partition.level!r}, {partition.prior_cost!r})"
            return
    elif s["level"] != 0.0:
        yield "level: must be 0 before level 2 is built"
        return
    if density:
        if locator is not None:
            yield "locator: a density-scored variable has no locator"
        elif s["density"] is None and partition is not None:
            yield "density: a Gaussian variable with a partition of its virtual bins has its density"
        return
    if (locator is None) != (partition is None):
        yield "locator: must be given exactly when the partition is"
        return
    if partition is None:
        return
    n_parts = len(np.asarray(partition.log_prob))
    for name in ("first_part", "missing_part", "star_part"):
        if locator[name] >= n_parts:
            yield f"locator.{name}: must be < n_parts = {n_parts}, got {locator[name]}"
            return
    if len(locator["parts"]) and int(locator["parts"].max()) >= n_parts:
        yield f"locator.parts: values must be < n_parts = {n_parts}"
        return
    if locator["first_part"] != NOWHERE and locator["first_part"] + len(locator["cuts"]) >= n_parts:
        # a finite value lands in part first_part + (number of cuts below it)
        yield f"locator.cuts: first_part + n_cuts must be < n_parts = {n_parts}"
        return
    yield from _locator_problems(locator, partition)


def _locator_problems(locator: dict, partition):
    """The locator is compiled from the partition (``Variable._compile_locator``): it must send
    every value where the partition does, or predictions would silently differ from level 2."""
    if locator["missing_part"] != partition.missing_part:
        yield f"locator.missing_part: must be the partition's missing_part = {partition.missing_part}"
        return
    if type(partition).__name__ == "Intervals":
        # the cuts are the intervals' right bounds but the last; finite values start after the
        # missing values' own part when they have one
        if not np.array_equal(locator["cuts"], partition.upper_bounds[:-1]):
            yield "locator.cuts: must be the partition's upper bounds but the last"
        elif locator["first_part"] != partition.n_parts - partition.n_intervals:
            yield f"locator.first_part: must be {partition.n_parts - partition.n_intervals} for this partition"
        elif locator["values"] or locator["star_part"] != NOWHERE:
            yield "locator.values: a numeric variable has no category values"
        return
    if len(locator["cuts"]) or locator["first_part"] != NOWHERE:
        yield "locator.cuts: a categorical variable has no cut points"
        return
    if locator["star_part"] != partition.star_part:
        yield f"locator.star_part: must be the partition's star_part = {partition.star_part}"
        return
    values = np.empty(len(locator["values"]), dtype=object)
    values[:] = locator["values"]
    expected = partition.part_index(values) if len(values) else np.zeros(0, dtype=np.intp)
    if not np.array_equal(expected, locator["parts"]):
        i = int(np.flatnonzero(expected != locator["parts"])[0])
        yield f"{join('locator.values', i)}: {values[i]!r} is in part {int(expected[i])} of the partition, not {int(locator['parts'][i])}"
        return
    kept = set(locator["values"])
    for part, members in enumerate(partition.groups):
        for value in members:
            if value is not STAR and value is not MISSING and value not in kept:
                yield f"locator.values: {value!r} of group {part} is missing"
                return


def _with_level2(v: Variable, fields: Fields) -> Variable:
    """``v`` with the level 2 and locator of the record ``fields`` (a locator without a partition
    to compile it from cannot be built: refused here)."""
    s = fields.state
    if not _set_level2(v, s["partition"], s["density"], s["level"], s["prior_cost"], s["locator"]):
        fields.fail("locator", "must be given exactly when the partition is")
    return v


def _set_level2(v: Variable, partition, density, level, prior_cost, locator) -> bool:
    """Give ``v`` this level 2 and locator; False (``v`` half set) for a locator without a partition."""
    v.model = partition
    v._density = density
    v.level = float(level)
    v.prior_cost = float(prior_cost)
    if locator is not None:
        if v.model is None:
            return False
        v.log_prob = np.asarray(v.model.log_prob, dtype=float)
        v.n_parts = v.log_prob.shape[0]
        v.cuts = locator["cuts"].tolist()
        v.first_part = int(locator["first_part"])
        v.missing_part = int(locator["missing_part"])
        v._groups = dict(zip(locator["values"], locator["parts"].tolist()))
        v._star_part = int(locator["star_part"])
    return True


_SUMMARIES = ("GKClass", "CPiD", "Gaussian", "Categorical")

_LOCATOR = Struct(
    {
        "cuts": Array("float64", ("n_cuts",), increasing=True, doc="cut points between consecutive parts (numeric)"),
        "first_part": Int(low=NOWHERE, doc="part of the first interval (−1: none)"),
        "missing_part": Int(low=NOWHERE, doc="part of missing values (−1: none)"),
        "values": Keys(length="n_values", doc="category values kept when it was built (categorical)"),
        "parts": Array("int64", ("n_values",), low=0, doc="their parts"),
        "star_part": Int(low=NOWHERE, doc="part of values not kept (categorical; −1: none)"),
    },
    doc="the locator compiled from the partition",
)

_VARIABLE_SCHEMA = Schema(
    state={
        "name": Key(doc="the feature name"),
        "kind": Str(choices=("numeric", "categorical"), doc="numeric or categorical"),
        "summary": Record(*_SUMMARIES, doc="level 1: the variable's summary"),
        "partition": Optional(Record("Intervals", "Groups"), doc="level 2 as of the last rebuild (null: not built yet; with `absent` set, a rare variable's rebuild proven to give the null model is skipped, so it may never be built); for a Gaussian summary, the partition of its virtual bins"),
        "density": Optional(Record("GaussianDensity"), doc="the per-class Gaussians of the last rebuild (Gaussian summaries)"),
        "level": Float(low=0.0, below=1.0, doc="MODL Level of the last rebuild (0: none)"),
        "prior_cost": Float(low=0.0, doc="B(X): the variable's MODL prior cost"),
        "locator": Optional(_LOCATOR, doc="null for density-scored or not-yet-built variables"),
    },
    doc="One feature: summary, level 2 and locator",
)
register("Variable", Variable, _VARIABLE_SCHEMA, state=Variable.record_state, build=Variable.from_record)

_LEVEL2 = {k: kind for k, kind in _VARIABLE_SCHEMA.state.items() if k != "summary"}
register(
    "Scorer",
    Scorer,
    Schema(
        state={
            "name": _LEVEL2["name"],
            "kind": _LEVEL2["kind"],
            "density_scored": Bool(doc="scored by per-class Gaussians (a Gaussian summary), not by parts"),
            **{k: kind for k, kind in _LEVEL2.items() if k not in ("name", "kind")},
        },
        doc="One variable's level 2 and locator without its summary (a Predictor's variables)",
    ),
    state=Scorer.record_state,
    build=Scorer.from_record,
)
