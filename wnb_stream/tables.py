"""The frozen values that flow between the levels: tables of class counts and the class index.

Level 1 (``wnb_stream.summaries``) hands level 2 (``wnb_stream.modl``) one of these values, never
its internals:

- ``Bins``: ordered elementary bins of a numeric variable with class counts (``GKClass``, ``CPiD``,
  and the Gaussian summary's virtual bins);
- ``Categories``: category values with class counts, plus the *star* counts of the values not kept
  (``Categorical``);
- ``Moments``: per-class weight, mean and variance of a numeric variable (``Gaussian``).

The engine hands level 3 (``wnb_stream.weights``) two more: ``Batch`` (encoded rows of the history
window, read-only arrays) and ``Context`` (what the regularizers need to know of each variable).

Each carries its ``classes`` (labels in order of first appearance, one per column of its counts)
and its ``missing`` counts per class; ``aligned(classes)`` reorders and pads the class axis to
another order. ``ClassIndex`` maps class labels to those columns. See
``docs/algorithms/summaries.md#class-counts-and-tables``.

This module depends on NumPy only (no River, no other ``wnb_stream`` module), so every level can
import it without importing the level-1 package.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Hashable, Iterable

import numpy as np

__all__ = ["Batch", "Bins", "Categories", "ClassIndex", "Context", "MAX_KEY_DEPTH", "Moments", "key_depth", "python_scalar"]


def _align_columns(counts: np.ndarray, source: tuple, target: Iterable[Hashable]) -> np.ndarray:
    """Reorder the last axis of ``counts`` from class order ``source`` to ``target``.

    Classes of ``target`` absent from ``source`` get zero columns; classes of ``source`` absent
    from ``target`` are dropped.
    """
    target = tuple(target)
    position = {c: i for i, c in enumerate(source)}
    out = np.zeros(counts.shape[:-1] + (len(target),), dtype=float)
    for j, c in enumerate(target):
        i = position.get(c)
        if i is not None:
            out[..., j] = counts[..., i]
    return out


def _frozen(array: np.ndarray, dtype=float) -> np.ndarray:
    array = np.array(array, dtype=dtype, copy=True)
    array.setflags(write=False)
    return array


def _same_order(source: tuple, target: tuple) -> bool:
    """True when ``_align_columns(counts, source, target)`` would copy ``counts`` column for column.

    That is when column ``j`` of the result is column ``j`` of ``counts`` for every ``j``: as many
    classes, and each class of ``target`` found at its own position by the look-up
    ``_align_columns`` makes (so equal labels that are distinct objects, e.g. ``1`` and ``1.0``,
    count as found, exactly as they are there).
    """
    if len(source) != len(target):
        return False
    position = {c: i for i, c in enumerate(source)}
    return all(position.get(c) == j for j, c in enumerate(target))


@dataclasses.dataclass(frozen=True)
class Bins:
    """Ordered elementary bins of a numeric variable, with class counts.

    Bin ``i`` covers ``(upper_bounds[i - 1], upper_bounds[i]]`` (bin 0 starts at −∞); values above
    the last bound belong to the last bin when the table is deployed.

    Attributes
    ----------
    upper_bounds
        ``(n_bins,)`` strictly increasing floats.
    counts
        ``(n_bins, n_classes)`` class counts (floats; may be fractional).
    classes
        Class labels, one per column of ``counts``.
    missing
        ``(n_classes,)`` counts of missing values per class.
    """

    upper_bounds: np.ndarray
    counts: np.ndarray
    classes: tuple
    missing: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "upper_bounds", _frozen(self.upper_bounds))
        object.__setattr__(self, "counts", _frozen(self.counts).reshape(len(self.upper_bounds), len(self.classes)))
        object.__setattr__(self, "classes", tuple(self.classes))
        object.__setattr__(self, "missing", _frozen(self.missing).reshape(len(self.classes)))

    @property
    def n(self) -> float:
        """Total weight, missing values included."""
        return float(self.counts.sum() + self.missing.sum())

    def aligned(self, classes: Iterable[Hashable]) -> Bins:
        """The same table with its class axis in the order ``classes`` (new classes are zeros).

        When the classes are already in that order (the usual case) nothing is aligned: the result
        is this table itself when ``classes`` holds the very label objects of ``self.classes``, else
        a copy carrying the given labels (equal ones, e.g. ``1.0`` for ``1``).
        """
        classes = tuple(classes)
        if _same_order(self.classes, classes):
            if all(c is d for c, d in zip(classes, self.classes)):
                return self
            return dataclasses.replace(self, classes=classes)
        return Bins(
            self.upper_bounds,
            _align_columns(self.counts, self.classes, classes),
            classes,
            _align_columns(self.missing, self.classes, classes),
        )

    def with_point(self, value: float, counts: np.ndarray) -> Bins:
        """The table with a point mass of class ``counts (J,)`` at ``value`` (an absent feature's
        default value, ``docs/algorithms/summaries.md#absent-features``): its own bin ``(b, value]``.

        The bin is inserted before the first bin whose upper bound is at least ``value`` (bin ``i``
        is ``(b_{i−1}, b_i]``); when a bin ends exactly at ``value`` the mass joins it. The
        summary never holds the value itself (the engine leaves default values out of it), so the
        point is exact when no bin straddles it, as for non-negative counts and ``value = 0``;
        otherwise the straddling bin keeps its counts above the point. A zero mass leaves the
        table as it is.

        >>> table = Bins([1.0, 3.0], [[2, 0], [0, 2]], ("a", "b"), [0, 0])
        >>> point = table.with_point(0.0, np.array([5.0, 1.0]))
        >>> point.upper_bounds.tolist(), point.counts.tolist()
        ([0.0, 1.0, 3.0], [[5.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
        """
        counts = np.asarray(counts, dtype=float).reshape(len(self.classes))
        if not counts.any():
            return self
        bounds, merged = Bins.point_arrays(self.upper_bounds, self.counts, value, counts)
        return Bins._assemble(bounds, merged, self.classes, self.missing)  # (fresh arrays, already typed)

    @staticmethod
    def point_arrays(upper_bounds: np.ndarray, counts: np.ndarray, value: float, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ``(upper_bounds, counts)`` of ``with_point(value, point)`` (``point (J,)`` floats, not
        all zero) from a table's arrays: new arrays, the arguments left as they are."""
        i = int(np.searchsorted(upper_bounds, value, side="left"))
        if i < len(upper_bounds) and upper_bounds[i] == value:
            merged = np.array(counts, dtype=float)
            merged[i] += point
            return np.array(upper_bounds, dtype=float), merged
        bounds = np.concatenate([upper_bounds[:i], [float(value)], upper_bounds[i:]])
        return bounds, np.concatenate([counts[:i], point[None, :], counts[i:]])

    @classmethod
    def _assemble(cls, upper_bounds: np.ndarray, counts: np.ndarray, classes: tuple, missing: np.ndarray) -> Bins:
        """``Bins(upper_bounds, counts, classes, missing)`` of arrays that already have their types and
        shapes (float64 ``(n,)``, ``(n, J)``, ``(J,)``; ``classes`` a tuple), for the rebuild of many
        variables (``Variable.rebuild_many``), where the constructor's copies and checks were most of
        the cost. The value takes over the arrays, which become read-only: the caller hands over
        fresh arrays that nothing else holds. The same value as the constructor's.
        """
        for array in (upper_bounds, counts, missing):
            array.setflags(write=False)
        value = object.__new__(cls)
        value.__dict__.update(upper_bounds=upper_bounds, counts=counts, classes=classes, missing=missing)
        return value


@dataclasses.dataclass(frozen=True)
class Categories:
    """Category values of a categorical variable, with class counts.

    Attributes
    ----------
    values
        The kept category values (all of them in exact mode; the heavy hitters in sketch mode).
    counts
        ``(n_values, n_classes)`` class counts of each kept value.
    classes
        Class labels, one per column.
    missing
        ``(n_classes,)`` counts of missing values per class.
    star
        ``(n_classes,)`` class counts of the *star* value, i.e. every value not kept in
        ``values`` (zeros in exact mode). Level 2 places unseen values with the star.
    """

    values: tuple
    counts: np.ndarray
    classes: tuple
    missing: np.ndarray
    star: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "classes", tuple(self.classes))
        n_classes = len(self.classes)
        object.__setattr__(self, "counts", _frozen(self.counts).reshape(len(self.values), n_classes))
        object.__setattr__(self, "missing", _frozen(self.missing).reshape(n_classes))
        object.__setattr__(self, "star", _frozen(self.star).reshape(n_classes))

    @property
    def n(self) -> float:
        return float(self.counts.sum() + self.missing.sum() + self.star.sum())

    def aligned(self, classes: Iterable[Hashable]) -> Categories:
        classes = tuple(classes)
        return Categories(
            self.values,
            _align_columns(self.counts, self.classes, classes),
            classes,
            _align_columns(self.missing, self.classes, classes),
            _align_columns(self.star, self.classes, classes),
        )


@dataclasses.dataclass(frozen=True)
class Moments:
    """Per-class weighted moments of a numeric variable (the Gaussian summary's table).

    Attributes
    ----------
    weights, means, variances
        ``(n_classes,)`` total weight, mean and maximum-likelihood variance per class (no floor).
    classes
        Class labels.
    missing
        ``(n_classes,)`` counts of missing values per class.
    """

    weights: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    classes: tuple
    missing: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "classes", tuple(self.classes))
        for name in ("weights", "means", "variances", "missing"):
            object.__setattr__(self, name, _frozen(getattr(self, name)).reshape(len(self.classes)))

    @property
    def n(self) -> float:
        return float(self.weights.sum() + self.missing.sum())

    def aligned(self, classes: Iterable[Hashable]) -> Moments:
        classes = tuple(classes)
        return Moments(
            _align_columns(self.weights, self.classes, classes),
            _align_columns(self.means, self.classes, classes),
            _align_columns(self.variances, self.classes, classes),
            classes,
            _align_columns(self.missing, self.classes, classes),
        )

    def with_point(self, value: float, counts: np.ndarray) -> Moments:
        """The moments with a point mass of class ``counts (J,)`` at ``value`` added (as
        ``Bins.with_point``): per class, the weighted mean and variance of the union.

        >>> m = Moments([2.0, 0.0], [1.0, 0.0], [1.0, 0.0], ("a", "b"), [0.0, 0.0])
        >>> point = m.with_point(0.0, np.array([2.0, 3.0]))
        >>> point.weights.tolist(), point.means.tolist(), point.variances.tolist()
        ([4.0, 3.0], [0.5, 0.0], [0.75, 0.0])
        """
        counts = np.asarray(counts, dtype=float).reshape(len(self.classes))
        if not counts.any():
            return self
        weights = self.weights + counts
        safe = np.where(weights > 0, weights, 1.0)
        means = np.where(weights > 0, (self.weights * self.means + counts * value) / safe, self.means)
        # the two groups' second moments about the common mean (Chan et al.'s pairwise update)
        m2 = self.weights * self.variances + self.weights * counts / safe * (self.means - value) ** 2
        variances = np.where(weights > 0, m2 / safe, self.variances)
        return Moments(weights, means, variances, self.classes, self.missing)


_PLAIN_LABELS = frozenset({str, int, bool, float, type(None)})  # (immutable labels: shared by a copy)


class ClassIndex:
    """Class labels in order of first appearance, mapped to column indices.

    >>> index = ClassIndex()
    >>> index.encode("b"), index.encode("a"), index.encode("b")
    (0, 1, 0)
    >>> index.encode_many(np.array(["a", "c", "b"], dtype=object)).tolist()
    [1, 2, 0]
    >>> index.classes
    ('b', 'a', 'c')
    """

    __slots__ = ("labels", "position")

    def __init__(self):
        self.labels: list = []
        self.position: dict = {}

    @classmethod
    def of(cls, labels) -> ClassIndex:
        """The index of ``labels`` (distinct), column ``i`` holding ``labels[i]``. O(len(labels))."""
        index = cls()
        index.labels = [label.item() if isinstance(label, np.generic) else label for label in labels]
        index.position = {label: i for i, label in enumerate(index.labels)}
        if len(index.position) != len(index.labels):  # a label twice: the first place, as encode gives
            index.labels, index.position = [], {}
            for label in labels:
                index.encode(label)
        return index

    @classmethod
    def of_many(cls, label_lists) -> list:
        """``[ClassIndex.of(labels) for labels in label_lists]``, each its own index; lists of
        plain labels met before are copied from the first one's index instead of being read
        again (a wide model's file holds thousands of summaries with the same few lists).
        O(Σ len)."""
        out, seen = [], {}
        for labels in label_lists:
            types = tuple(map(type, labels))
            if _PLAIN_LABELS.issuperset(types):  # (a key of types and values: 1, 1.0 and True differ)
                key = (types, tuple(labels))
                first = seen.get(key)
                if first is None:
                    first = seen[key] = cls.of(labels)
                index = first._copy()
            else:
                index = cls.of(labels)
            out.append(index)
        return out

    def __len__(self) -> int:
        return len(self.labels)

    def __deepcopy__(self, memo: dict) -> ClassIndex:
        """A copy; labels of the plain immutable types are shared, others deep-copied (the copy
        ``copy.deepcopy`` makes, without its generic walk: every summary holds an index)."""
        if all(type(label) in _PLAIN_LABELS for label in self.labels):
            clone = memo[id(self)] = self._copy()
        else:
            clone = memo[id(self)] = ClassIndex.__new__(ClassIndex)
            clone.labels, clone.position = copy.deepcopy((self.labels, self.position), memo)
        return clone

    def _copy(self) -> ClassIndex:
        """An index of its own with the same labels (shared: for immutable labels only)."""
        clone = ClassIndex.__new__(ClassIndex)
        clone.labels, clone.position = list(self.labels), dict(self.position)
        return clone

    @property
    def classes(self) -> tuple:
        return tuple(self.labels)

    def peek(self, y) -> tuple[int, bool]:
        """Index ``y`` would get, and whether it is new (does not register it)."""
        i = self.position.get(y)
        if i is None:
            return len(self.labels), True
        return i, False

    def encode(self, y) -> int:
        """Index of ``y``, registering it if new (NumPy scalars are stored as Python values)."""
        if isinstance(y, np.generic):
            y = y.item()
        i = self.position.get(y)
        if i is None:
            i = len(self.labels)
            self.labels.append(y)
            self.position[y] = i
        return i

    def lookup_many(self, labels: np.ndarray) -> np.ndarray | None:
        """Indices ``(m,)`` of an array of labels when all are registered already, else None.

        Typed labels (ints, bools, strings) and few classes: one vectorised comparison per class;
        otherwise one dict look-up per label (``tolist`` turns NumPy scalars into the Python values
        the index holds). Registers nothing, so a caller may validate the rest of its input first.
        """
        labels = np.asarray(labels)
        flat = labels.ravel()
        kind = flat.dtype.kind
        if kind in "iubU" and len(self.labels) <= _COMPARE_MAX_CLASSES:
            # Typed labels, few classes: one vectorised comparison per class. The registered labels
            # are distinct dict keys, so at most one matches an element, as the look-up would.
            codes = np.full(flat.size, -1, dtype=np.intp)
            for i, label in enumerate(self.labels):
                if isinstance(label, str) if kind == "U" else isinstance(label, int):  # bool is an int
                    codes[flat == label] = i
            return None if flat.size and codes.min() < 0 else codes
        try:
            return np.fromiter(map(self.position.__getitem__, flat.tolist()), dtype=np.intp, count=flat.size)
        except (KeyError, TypeError):  # a new label, or one that cannot be a dict key
            return None

    def encode_many(self, labels: np.ndarray) -> np.ndarray:
        """Indices of an array of labels, registering new ones in order of first appearance."""
        labels = np.asarray(labels)
        if labels.size == 0:
            return np.zeros(0, dtype=np.intp)
        codes = self.lookup_many(labels)  # the usual case: no new class
        if codes is not None:
            return codes
        uniques, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        codes = np.empty(len(uniques), dtype=np.intp)
        for u in np.argsort(first, kind="stable"):
            codes[u] = self.encode(python_scalar(uniques[u]))
        return codes[inverse.reshape(-1)]

    def merge(self, other: ClassIndex) -> np.ndarray:
        """Register ``other``'s labels; return the column of each of ``other``'s classes here."""
        if self.labels[: len(other.labels)] == other.labels:  # the usual case: a delta of this model's classes
            return np.arange(len(other.labels), dtype=np.intp)
        return np.array([self.encode(c) for c in other.labels], dtype=np.intp)

    def __getstate__(self):
        return {"labels": list(self.labels)}

    def __setstate__(self, state):
        self.labels = list(state["labels"])
        self.position = {c: i for i, c in enumerate(self.labels)}


#: Deepest nesting of tuples in a key: deeper ones are refused (reading, hashing and saving a key
#: recurse once per level; a key is a value, a name or a label, never a deep structure).
MAX_KEY_DEPTH = 32


def key_depth(x: Any) -> int:
    """How deep tuples nest in ``x`` (0 for a non-tuple), counted iteratively up to
    ``MAX_KEY_DEPTH + 1`` (so that a tuple nested a million deep costs no recursion)."""
    deepest, stack = 0, [(x, 0)]
    while stack:
        node, depth = stack.pop()
        if type(node) is tuple or isinstance(node, tuple):
            depth += 1
            deepest = max(deepest, depth)
            if depth > MAX_KEY_DEPTH:
                return depth
            stack.extend((item, depth) for item in node)
    return deepest


#: ``ClassIndex.lookup_many`` compares typed label arrays class by class up to this many classes.
_COMPARE_MAX_CLASSES = 16


def python_scalar(value: Any) -> Any:
    """NumPy scalars become the Python scalar they hold (so labels hash and compare as users expect)."""
    return value.item() if isinstance(value, np.generic) else value


#: The old private name (kept for the modules that import it).
_python_scalar = python_scalar


@dataclasses.dataclass(frozen=True, slots=True)
class Batch:
    """Encoded rows handed to a weight learner.

    ``log_lik (n, K, J)`` values ℓ_kj(x_n) = log p(x_nk | C_j) from level 2; ``y (n,)`` class
    indices in ``[0, J)``; ``sample_weight (n,)`` non-negative weights; ``log_prior (J,)`` log P(C_j).
    The engine hands read-only arrays, valid for the duration of the learner's call (views of the
    history window, see ``docs/architecture.md``).
    """

    log_lik: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray
    log_prior: np.ndarray

    def __len__(self) -> int:
        return len(self.y)


@dataclasses.dataclass(frozen=True, slots=True)
class Context:
    """Per-variable facts for the regularizers: ``prior_costs (K,)`` the MODL prior costs B(X_k),
    ``active (K,)`` bool, False for variables at Level 0 (their weight stays 0 in the selective
    learners); ``n_variables``, the model's number of variables when the learner's K counts only
    those in level 3 (None: K), for budgets that the papers size by the data's variables."""

    prior_costs: np.ndarray
    active: np.ndarray
    n_variables: int | None = None
