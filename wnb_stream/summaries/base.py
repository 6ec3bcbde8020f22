"""The contract of level-1 summaries: one abstract base, ``Summary``, for every summary.

A summary keeps, for one variable, class counts in bounded memory and offers one verb set
(``docs/algorithms/summaries.md#class-counts-and-tables``):

- ``update(x, y, w=1.0) -> None``: one observation;
- ``update_many(values, labels, weights=None) -> None``: a batch ``values (m,)``, ``labels (m,)``,
  ``weights (m,)`` or None (ones), vectorised; it leaves the state a loop of ``update`` would
  (``GKClass`` bit for bit; ``CPiD`` and ``Categorical`` bit for bit whenever the sums of the
  weights are exact in floating point, e.g. integer weights, else up to rounding; ``Gaussian``
  its weights and missing counts so, its means and variances up to rounding);
- ``update_coded(values, codes, labels, weights=None)``: the same batch given as class codes
  ``codes (m,)`` into the caller's labels ``labels (J,)``;
- ``merge(other) -> None``: absorb a summary of the same type built on another stream;
- ``decay(factor) -> None``: multiply the weight of everything seen so far by ``factor`` in
  (0, 1] (forgetting, see below);
- ``table()``: a frozen value of ``wnb_stream.tables`` (``Bins``, ``Categories`` or ``Moments``)
  that level 2 reads; ``n``: the total weight seen (missing values included);
  ``memory_usage()``: bytes held;
- ``problems()``: the summary's broken invariants, a list of ``"field: what is wrong"`` (empty when
  sound), which the tests assert empty after every operation and a load raises as a
  ``ModelFileError``; ``_check()`` asserts it empty;
- its saved record (``docs/saved-model.md``), registered in its module: ``record_state()`` and
  ``from_record(fields)``, on the schema helpers of ``wnb_stream.io``.
- the batch verbs the engine calls on the type of each group of summaries, so that it never
  names a concrete class: ``take_rows`` (rows as a model's history holds them), ``settle``,
  ``n_atoms``, ``aligned_table``, and the classmethods ``take_many(summaries, …)`` (feed and
  settle many) and ``stack_tables(summaries, classes)`` (their tables stacked). The defaults
  loop over single summaries and give what that loop gives; ``GKClass`` overrides them with
  compiled kernels that give the same floats, and its subclasses inherit them.

Classes may appear at any time: each summary keeps its class labels in order of first appearance
(``classes``), and every count array grows a zero column when a class is registered. Tables
carry their ``classes`` tuple; ``aligned(classes)`` reorders and pads them to another order.

Input (``policy``, ``docs/algorithms/summaries.md#input-policy``). Missing values (None, NaN,
pandas' NA; ±inf too in numeric summaries) are counted per class in ``missing``, apart from the
bins, and never inserted. The faults below raise, and a summary that raised is unchanged:

- a value that is not one (a string or a bool in a numeric summary, an unhashable category):
  ``ValueError`` naming the value;
- a class label that is None or unhashable: ``ValueError`` naming ``y``;
- a weight that is negative, NaN, infinite or not a number: ``ValueError`` naming ``w``
  (``weights`` in a batch);
- a batch whose parts are not 1-D or differ in length, class codes outside the labels:
  ``ValueError`` naming the argument;
- a decay factor that is not a real number in (0, 1] (NaN, 0, > 1, a bool): ``ValueError``
  naming ``factor``;
- merging a summary of another type: ``TypeError``;
- merging a summary whose parameters cannot be combined with this one's: ``ValueError`` naming
  the parameter.

Merging (``docs/algorithms/summaries.md#merge``): the merged summary is compared with one summary
fed both streams (the first, then the second):

- ``GKClass``: any two merge; the result keeps the ε-invariant with ``ε = max(ε_a, ε_b)``, so its
  rank error is ≤ ``max(ε_a, ε_b)·n`` (a budget-mode result keeps its budget and reports the
  error reached, ``effective_epsilon``); class totals and missing counts are exact
  (``docs/algorithms/summaries.md#gk``);
- ``CPiD``: any two merge; approximate (uniform re-binning onto the union of the breaks): the
  totals per class and the missing counts are conserved, the location of the counts is not;
- ``Gaussian``: exact up to float rounding (Chan, Golub & LeVeque);
- ``Categorical``: exact counts while both are exact and their values fit in ``max_values``; a
  sketched ``other`` must share this summary's ``epsilon``, ``delta`` and ``seed`` (else
  ``ValueError`` naming the one that differs); the count-min tables add exactly, the class totals and missing
  counts are exact, and each heavy hitter's count over-estimates its weight by at most its
  ``error`` ≤ ``n / top_k`` (``n`` the weight of the non-missing values).

Merging a summary into itself is allowed (it doubles the counts).

Forgetting (``docs/algorithms/summaries.md#forgetting``): after ``s.decay(f)``, ``s`` answers as
a summary built on the same stream with every sample weight multiplied by ``f``, the values it
keeps (tuple values, breaks, means) unchanged; ``decay(1.0)`` changes nothing, bit for bit.
Exponential forgetting applied at a clock shared by several summaries (forward decay, Cormode,
Shkapenyuk, Srivastava & Xu 2009) keeps them mergeable: decay is linear, so decaying two summaries
by the same factors and merging them gives the merge decayed. Per summary:

- ``GKClass``: ``g``, ``Δ``, ``e``, the class counts, the weights (flushed, pending and missing)
  scale; the ε-invariant ``g + Δ − e ≤ 2εn`` scales with ``n``, so the rank error stays
  ``≤ εn`` with ``n`` the weight it now holds, and further updates and merges keep it;
- ``CPiD``: the interval counts, class counts, totals and missing counts scale (the breaks stay);
- ``Gaussian``: ``W`` and ``M2`` scale, the means are unchanged (exact up to rounding);
- ``Categorical``: exact counts, class totals and missing counts scale exactly; in sketch mode
  the count-min table scales (its guarantee is relative to the class totals, which scale alike)
  and so do the heavy hitters' counts and errors.

A positive weight that would underflow to 0 (after a very long decay) is kept at the smallest
positive float where the summary needs it positive (``GKClass``'s ``g`` and ``e``, SpaceSaving's
counts and errors); a ``Gaussian`` class whose weight underflows to 0 restarts empty.
"""

from __future__ import annotations

import abc
import array
import copy

import numpy as np
from river import base

from ..io.registry import register
from ..io.schema import Keys, Schema
from ..tables import Bins, ClassIndex
from .policy import check_codes

__all__ = ["FEW_ROWS", "Summary", "decayed"]

#: Rows up to which ``Summary.take_rows`` feeds a summary by a loop of ``update`` (cheaper than
#: one ``update_coded`` call for a handful of rows; both give the summary ``update_many`` does).
FEW_ROWS = 8

_SHARED = frozenset({int, float, bool, str, type(None), np.float64, np.int64, np.bool_})  # (immutable: shared by a copy)


class Summary(base.Base, abc.ABC):
    """Abstract base of level-1 summaries (the module docstring states the contract).

    Subclasses implement ``update``, ``update_many``, ``merge``, ``decay``, ``table``, ``n``,
    ``memory_usage`` and ``problems``, validate their input with ``policy``, and keep their class
    labels in ``self._classes`` (a ``ClassIndex``). Each also owns its saved record (registered
    in its module with ``io.register``): a schema, ``record_state()`` and ``from_record(fields)``.
    """

    #: "numeric" or "categorical": which kind of variable the summary is for.
    kind: str = "numeric"

    def __deepcopy__(self, memo: dict) -> Summary:
        """``copy.deepcopy`` without its generic walk for what a summary mostly holds: numbers,
        strings and None are shared (immutable), NumPy arrays of numbers and ``array.array``
        buffers are copied directly; anything else is deep-copied as usual. The same copy as the
        generic one (objects met twice stay shared, through ``memo``). O(state); a merge copies
        every summary of its sides (``engine.merge``), and the generic walk was most of that."""
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        fields = clone.__dict__
        for name, value in self.__dict__.items():
            kind = type(value)
            if kind in _SHARED:
                fields[name] = value
                continue
            known = memo.get(id(value))
            if known is not None:
                fields[name] = known
            elif kind is np.ndarray and value.dtype.kind in "biuf":
                fields[name] = memo[id(value)] = value.copy(order="K")
            elif kind is array.array:
                fields[name] = memo[id(value)] = array.array(value.typecode, value)
            else:
                fields[name] = copy.deepcopy(value, memo)
        return clone

    @property
    def classes(self) -> tuple:
        """Class labels in order of first appearance (one per column of the tables)."""
        return self._classes.classes

    @abc.abstractmethod
    def update(self, x, y, w: float = 1.0) -> None:
        """Add value ``x`` of class ``y`` with sample weight ``w``."""

    @abc.abstractmethod
    def update_many(self, values, labels, weights=None) -> None:
        """Add a batch ``values (m,)``, ``labels (m,)``, ``weights (m,)`` or None (ones)."""

    def update_coded(self, values, codes, labels, weights=None) -> None:
        """``update_many(values, labels[codes], weights)``, for a caller that holds class codes.

        ``codes (m,)`` are integer positions in ``labels (J,)`` (the caller's class labels, in its
        own order). Same summary as ``update_many``; a subclass may map the codes to its columns
        once per batch instead of looking up each label. ``ValueError`` naming ``codes`` unless
        they are integers in ``[0, J)``.
        """
        labels = np.asarray(labels)
        self.update_many(values, labels[check_codes(codes, len(labels))], weights)

    def _columns_of(self, codes: np.ndarray, labels: np.ndarray) -> np.ndarray | None:
        """This summary's columns ``(m,)`` of rows coded into ``labels (J,)``; None when a label of
        the batch is not registered here (the caller then registers it through ``update_many``).
        """
        columns = self._classes.lookup_many(labels)  # (J,) the usual case: every class known here
        if columns is None:  # some class is not registered here: only those of the batch must be
            seen = np.flatnonzero(np.bincount(codes, minlength=len(labels)))
            found = self._classes.lookup_many(labels[seen])
            if found is None:
                return None
            columns = np.zeros(len(labels), dtype=np.intp)
            columns[seen] = found
        return columns[codes]

    @abc.abstractmethod
    def merge(self, other) -> None:
        """Absorb ``other``, a summary of the same type built on another stream.

        ``TypeError`` if ``other`` is of another type; ``ValueError`` naming the parameter if
        its parameters cannot be merged with this summary's.
        """

    @abc.abstractmethod
    def decay(self, factor: float) -> None:
        """Multiply the weight of everything seen so far by ``factor`` (0 < factor ≤ 1).

        The summary then answers as one built on the same stream with every sample weight
        multiplied by ``factor`` (the module docstring states how closely, per summary);
        ``factor == 1`` changes nothing. ``ValueError`` naming ``factor`` unless it is a real
        number in (0, 1] (``policy.check_factor``); the summary is then unchanged. Cost O(state).
        """

    @abc.abstractmethod
    def table(self):
        """The frozen table level 2 reads (``Bins``, ``Categories`` or ``Moments``)."""

    @property
    @abc.abstractmethod
    def n(self) -> float:
        """Total weight seen, missing values included."""

    def holds_weight(self) -> bool:
        """``n > 0`` (what a rebuild asks of every summary it may read; a summary may answer it
        without summing)."""
        return self.n > 0

    @abc.abstractmethod
    def memory_usage(self) -> int:
        """Bytes held (an estimate)."""

    # -- batch verbs: what the engine asks of many summaries at once ---------------------------
    #
    # The engine groups summaries by ``type(summary)`` and calls that type's verb, never naming a
    # concrete class. The defaults below loop over single summaries; a subclass with a faster way
    # for many summaries at once (``GKClass``: compiled kernels) overrides them, with the same
    # results (its docstrings state how closely).

    #: Whether a rebuild of this summary's variable that is proven to give the null model again
    #: may be skipped (``Variable.null_proven``); such a summary answers ``settle`` and
    #: ``n_atoms`` without building its table. Off by default: a skipped rebuild keeps the costs
    #: of the last one, so turning it on changes the level-2 costs a model reports.
    skip_null_rebuilds: bool = False

    #: Whether the variable of this summary is scored by a density built from its table
    #: (``density``), not by the parts of its level 2. Off by default; ``Gaussian`` sets it.
    scored_by_density: bool = False

    def density(self, table):
        """The density that scores this summary's variable, built from ``table`` (this summary's
        ``aligned_table``), for a summary that is ``scored_by_density``: an object with
        ``log_likelihood(values) -> (n, J)`` and ``log_likelihood_one(x) -> (J,)``. The default
        has none (``TypeError``). Cost: the subclass's."""
        raise TypeError(f"{type(self).__name__} scores its variable by the parts of level 2, not by a density")

    def level2_table(self, table):
        """The table level 2 is built on, from ``table`` (this summary's ``aligned_table``): the
        table itself by default; a density-scored summary hands the table its density gives
        (``Gaussian``: virtual bins), so that its level and prior cost compare with binned
        variables'. Cost O(1) by default."""
        return table

    def take_rows(self, values, codes, labels: tuple, weights) -> None:
        """Take rows as a model's history holds them: ``values (m,)`` float64 (NaN: missing), class
        ``codes (m,)`` into ``labels``, ``weights (m,)`` float64 (finite, ≥ 0).

        ``labels`` is the pair ``(names, typed)``: the class labels as a tuple and as an array
        (``Classes.typed()``). Up to ``FEW_ROWS`` rows go through a loop of ``update`` (cheaper than
        one batch call for a handful), more through one ``update_coded``: the summary
        ``update_many`` leaves (the module docstring states how closely that is a loop of
        ``update`` for each summary). Cost: that of ``update`` or ``update_coded``.
        """
        if len(values) <= FEW_ROWS:
            names = labels[0]
            for value, code, weight in zip(values.tolist(), codes.tolist(), weights.tolist()):
                self.update(float(value), names[code], float(weight))
        else:
            self.update_coded(values, codes, labels[1], weights)

    def settle(self) -> float:
        """Bring pending input into the state a table is read from (as ``table()`` would), then
        return ``n``. The default has nothing pending: it returns ``n``. Cost O(1) plus ``n``'s."""
        return self.n

    def n_atoms(self) -> int:
        """The atoms level 2 would see in ``table()`` (a ``Bins`` summary's): its non-empty bins,
        and one for missing values if there are any. Cost: that of ``table()``."""
        table = self.table()
        if not isinstance(table, Bins):
            raise TypeError(f"n_atoms counts the bins of a Bins table; {type(self).__name__} hands {type(table).__name__}")
        return int(np.count_nonzero(table.counts.sum(axis=1))) + bool(table.missing.any())

    def aligned_table(self, classes: tuple):
        """``table().aligned(classes)``: the table with its class axis in the order ``classes``.

        The same value, float for float; a subclass may make it without the intermediate table.
        Cost: that of ``table()`` plus O(size·J) when the class order differs."""
        return self.table().aligned(classes)

    @classmethod
    def take_many(cls, summaries: list, values, codes, labels: tuple, weights, starts: list, ends: list) -> None:
        """Each summary ``t`` of ``summaries`` (distinct, of this type) takes the rows
        ``starts[t]:ends[t]`` of ``values``, ``codes`` and ``weights`` (``take_rows``' arguments)
        and settles (``settle``); what a rebuild asks of the summaries it feeds.

        The default is exactly that loop, so each summary ends as it would alone. Cost: the
        loop's; ``GKClass`` merges the new values of all its summaries in one compiled call.
        """
        for summary, a, b in zip(summaries, starts, ends):
            summary.take_rows(values[a:b], codes[a:b], labels, weights[a:b])
            summary.settle()

    def settled(self) -> bool:
        """Whether ``settle`` would change nothing (no pending input): a merge then only reads
        this summary as its ``other``. The default has nothing pending. Cost O(1)."""
        return True

    @classmethod
    def settle_many(cls, summaries: list) -> None:
        """``summary.settle()`` for each of ``summaries`` (distinct, of this type): what a delta
        does before it is handed over (``Delta.flush``), so that a merge finds nothing pending.

        The default is exactly that loop; ``GKClass`` flushes the buffers of all of them in one
        compiled call, with the same floats. Cost: the loop's.
        """
        for summary in summaries:
            summary.settle()

    @classmethod
    def merge_many(cls, pairs: list) -> None:
        """``summary.merge(other)`` for each ``(summary, other)`` of ``pairs`` (summaries of this
        type, each at most once; what a merge of two models asks of the summaries they share).

        The default is exactly that loop; ``GKClass`` merges the tuples of all its pairs in one
        compiled call, with the same floats. Cost: the loop's.
        """
        for summary, other in pairs:
            summary.merge(other)

    @classmethod
    def stack_tables(cls, summaries: list, classes: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The ``Bins`` tables ``[s.aligned_table(classes) for s in summaries]`` stacked, as fresh
        arrays: ``bounds (R,)`` and ``counts (R, J)`` (the tables' rows one after the other),
        ``missing (T, J)`` and ``lengths (T,)`` (the rows of each table).

        The default makes each table and concatenates their arrays: the same floats, moved, not
        computed. ``TypeError`` for a summary whose table is not ``Bins``. Cost O(R·J) plus the
        tables'; ``GKClass`` stacks its tuple arrays with a few NumPy calls per class order.
        """
        J = len(classes)
        tables = [summary.aligned_table(classes) for summary in summaries]
        for table in tables:
            if not isinstance(table, Bins):
                raise TypeError(f"stack_tables stacks Bins tables; {cls.__name__} hands {type(table).__name__}")
        lengths = np.array([len(table.upper_bounds) for table in tables], dtype=np.intp)
        bounds = np.concatenate([table.upper_bounds for table in tables] + [np.zeros(0)])
        counts = np.concatenate([table.counts.reshape(len(table.upper_bounds), J) for table in tables] + [np.zeros((0, J))])
        missing = np.array([table.missing for table in tables], dtype=float).reshape(len(tables), J)
        return bounds, counts, missing, lengths

    @abc.abstractmethod
    def problems(self) -> list[str]:
        """Every broken invariant of the state, each ``"field: what is wrong"`` (field: the name
        in the saved record); empty when the state is sound. The tests assert it empty after
        every operation; a load refuses a record whose rebuilt summary has one (a
        ``ModelFileError`` naming the field). It raises nothing, whatever the state holds."""

    def _check(self) -> None:
        """Assert that ``problems()`` is empty (``AssertionError`` listing them otherwise)."""
        found = self.problems()
        assert not found, "; ".join(found)


#: The smallest positive float: what a positive weight that ``decay`` would round to 0 becomes.
SMALLEST_WEIGHT = 5e-324


def all_close(found, expected, rtol: float, atol: float) -> bool:
    """``np.allclose(found, expected, rtol=rtol, atol=atol)``, without its general machinery where
    ``expected`` is finite (the checks of every summary of a wide model's file run it thousands
    of times). Where the plain test passes and ``expected`` is finite, ``np.allclose`` passes too;
    anything else is left to it."""
    found, expected = np.asarray(found, dtype=float), np.asarray(expected, dtype=float)
    with np.errstate(all="ignore"):  # (±inf and NaN go to np.allclose, which warns of nothing)
        if (np.abs(found - expected) <= atol + rtol * np.abs(expected)).all() and np.isfinite(expected).all():
            return True
    return bool(np.allclose(found, expected, rtol=rtol, atol=atol))


def padded(values, shape: tuple) -> np.ndarray:
    """``values`` (a list, list of rows or array, maybe shorter on its last axis) zero-padded to
    ``shape``: the class-count rows a summary pads lazily, as its record holds them.

    >>> padded([[1.0], [2.0, 3.0]], (2, 3)).tolist()
    [[1.0, 0.0, 0.0], [2.0, 3.0, 0.0]]
    """
    out = np.zeros(shape)
    if len(shape) == 1:
        source = np.asarray(values, dtype=float).reshape(-1)
        out[: len(source)] = source
        return out
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[0] == shape[0] and values.shape[1] <= shape[1]:
        out[:, : values.shape[1]] = values  # (a summary's own array: one copy, not a loop over its rows)
        return out
    for i, row in enumerate(values):
        row = np.asarray(row, dtype=float).reshape(-1)
        out[i, : len(row)] = row
    return out


def decayed(weights: np.ndarray, factor: float) -> np.ndarray:
    """``weights × factor`` (a new float array of the same shape), each positive entry kept at
    least ``SMALLEST_WEIGHT``, so that a weight a summary needs positive does not underflow to 0.

    >>> decayed(np.array([0.0, 2.0, 1e-320]), 1e-10).tolist()
    [0.0, 2e-10, 5e-324]
    """
    weights = np.asarray(weights, dtype=np.float64)
    scaled = weights * factor
    return np.where(weights > 0.0, np.maximum(scaled, SMALLEST_WEIGHT), scaled)


# ------------------------------------------------------------------------------------------------
# Records (docs/saved-model.md)

#: The class labels field of every summary's record: binds ``n_classes``.
CLASSES = Keys(length="n_classes", doc="class labels in order of first appearance (column order)")

register(
    "ClassIndex",
    ClassIndex,
    Schema(state={"labels": Keys(length="n_classes", doc="class labels, column i is labels[i]")}, doc="Class labels"),
    state=lambda index: {"labels": list(index.labels)},
    build=lambda fields: ClassIndex.of(fields.state["labels"]),
)
