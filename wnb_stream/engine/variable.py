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
import math

import numpy as np

from .. import modl
from ..modl.batch import discretize_many_flagged
from ..summaries import gaussian as gaussian_module
from ..summaries.base import Summary
from ..summaries.gk import GKClass
from ..summaries.policy import feature_value
from ..tables import Bins, Categories

__all__ = ["Scorer", "Variable", "value_kind"]

#: ``locate`` result for a value that contributes nothing (missing with no missing statistics).
NOWHERE = -1


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
        self.density = isinstance(summary, gaussian_module.Gaussian)
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
        self._density: gaussian_module.GaussianDensity | None = None

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
            self._density = gaussian_module.GaussianDensity(table)
            # docs/algorithms/summaries.md#gaussian: MODL on virtual bins gives a Level and a B(X) comparable
            # with binned variables, used by the regularizers and to decide activity.
            virtual = gaussian_module.virtual_bins(table)
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
        """The summary's table on the class axis ``classes``, with the default value's mass as a
        point (``rebuild``)."""
        if self.summary.__class__ is GKClass:  # the usual summary: one table made, not three
            return self._gk_table(tuple(classes), default)
        table = self.summary.table().aligned(classes)
        if default is not None and self.kind == "numeric":
            value, class_counts = default
            held = (table.weights if self.density else table.counts.sum(axis=0)) + table.missing
            table = table.with_point(value, np.maximum(np.asarray(class_counts, dtype=float) - held, 0.0))
        return table

    def _gk_table(self, classes: tuple, default) -> Bins:
        """``_table`` of a ``GKClass`` summary from its arrays (``GKClass.aligned_arrays``,
        ``Bins.point_arrays``): the same table, the same floats, without the two intermediate
        tables and their copies, which cost more than the MODL search of a small table does."""
        bounds, counts, missing = self.summary.aligned_arrays(classes)
        if default is not None and self.kind == "numeric":
            value, class_counts = default
            point = np.maximum(np.asarray(class_counts, dtype=float) - (counts.sum(axis=0) + missing), 0.0)
            if point.any():
                bounds, counts = Bins.point_arrays(bounds, counts, value, point)
        return Bins._assemble(bounds, counts, classes, missing)

    @staticmethod
    def _gk_stack(variables: list, classes: tuple, default) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The tables of ``[variable._table(classes, default) for variable in variables]`` (variables
        of ``GKClass`` summaries, ``classes`` two or more), stacked as ``GKClass.aligned_stack``
        stacks them, with ``starts (T + 1,)`` their first rows: read-only ``bounds (R,)``, ``counts
        (R, J)`` and ``missing (T, J)``, whose blocks are the tables.

        The summaries' arrays are stacked, then the default value's point is found and inserted
        for all the tables at once. The same floats: a table's column sums, which the point
        needs, are the sums of its rows in order from 0 (``np.bincount``'s, as NumPy's ``sum``
        along the rows of a C-contiguous table with two or more columns, tested); the point is
        the same element-wise operations; bounds and counts are moved, not computed.

        A rebuild at a class threshold rebuilds every variable, thousands on a wide sparse
        stream; one at a time, ``_table`` cost more than their MODL searches.
        """
        J = len(classes)
        bounds, counts, missing, lengths = GKClass.aligned_stack([variable.summary for variable in variables], classes)
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

        Only numeric ``GKClass`` variables whose level 2 is the null model (one part) on
        ``n_classes`` classes, or not built yet, qualify, in a model whose absent features hold a
        number (``default`` = ``(value, class_counts)``): their table is the default value's point
        and the weight the summary holds, and ``modl.null_proven`` bounds every split of such a
        table. A skipped variable's level 2 scores every value 0 for every class, as the null
        model does; its partition (if any) keeps the counts and costs of its last rebuild, and a
        variable never rebuilt has none (it costs no lookup rows). Its summary takes its buffered
        values as a rebuild's table would (``GKClass.settle``), so the summaries do not depend on
        which rebuilds were skipped.
        """
        proven = np.zeros(len(variables), dtype=bool)
        if default is None or not variables or not math.isfinite(default[0]):
            return proven
        candidates = [
            t
            for t, v in enumerate(variables)
            if v.summary.__class__ is GKClass
            and v.kind == "numeric"
            and (v.model is None or (v.n_parts == 1 and v.log_prob.shape[1] == n_classes))
        ]
        if not candidates:
            return proven
        held = np.array([variables[t].summary.settle() for t in candidates])
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
        value, which a rebuild replaces and never mutates). On a sparse stream most variables
        are rare words seen once or twice, and with absent features holding a value (``default``)
        every one of them is rebuilt when a class count reaches its threshold: their tables are
        the class counts' point and one or two small bins, so a few thousand variables hold a few
        hundred distinct tables.
        """
        classes = tuple(classes)
        stacked = []  # (a default value that is not a number sorts apart: ``_table`` alone places it)
        if len(classes) > 1 and (default is None or math.isfinite(default[0])):
            stacked = [v for v in variables if v.summary.__class__ is GKClass and v.kind == "numeric"]
        together, tables, index = [], [], {}  # variables of each distinct table, the tables, table → its place

        def join(variable, bounds, counts, missing, classes_, make) -> None:
            """``variable`` to the group of its table (made by ``make()`` if it is the first)."""
            i = index.setdefault((bounds.tobytes(), counts.tobytes(), missing.tobytes(), classes_), len(tables))
            if i == len(tables):
                together.append([variable])
                tables.append(make())
            else:
                together[i].append(variable)

        if len(stacked) > 1:  # their tables, stacked: only the distinct ones are made
            bounds, counts, missing, starts = Variable._gk_stack(stacked, classes, default)
            for t, (variable, lo, hi) in enumerate(zip(stacked, starts[:-1].tolist(), starts[1:].tolist())):
                part = (bounds[lo:hi], counts[lo:hi], missing[t])
                join(variable, *part, classes, lambda part=part: Bins._assemble(part[0], part[1], classes, part[2]))
            done = set(map(id, stacked))
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
        options = {"selection_cost": selection_cost}
        if criterion is not None:
            options["criterion"] = criterion
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
