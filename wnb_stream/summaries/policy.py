"""The input policy of the level-1 summaries: the one place that decides what a value, a class label
and a sample weight are (``docs/algorithms/summaries.md#input-policy``).

Every summary validates its input with these functions, in ``update`` (one observation) and in
``update_many`` / ``update_coded`` (a batch), so the same input gets the same answer everywhere.

Numeric value (``GKClass``, ``CPiD``, ``Gaussian``): ``numeric_value`` / ``numeric_batch``

- a real number that is not a bool (Python ``int``/``float``, NumPy integers and floats,
  ``fractions.Fraction``…) is used as its ``float``;
- None, NaN, ±inf, an integer beyond the float range and pandas' ``NA``/``NaT`` are *missing*:
  counted per class in ``missing``, never inserted;
- a bool (``True``, ``np.bool_``, a boolean array) is **not** a number for a numeric summary:
  ``ValueError``. The classifier treats bools as categorical values, and the summaries agree;
- a string, bytes, a complex number, a date or any other object: ``ValueError`` naming the value.

Categorical value (``Categorical``): any hashable; None, NaN, pandas' ``NA``/``NaT`` are missing
(``is_missing_category``); ±inf are ordinary values. An unhashable value: ``ValueError``.

Class label ``y``: any hashable but None (``check_label``, ``check_labels``); NumPy scalars are
stored as the Python values they hold. None or an unhashable label: ``ValueError`` naming ``y``.

Sample weight ``w``: a finite real number ≥ 0, not a bool (``check_weight``); a batch of them
(``as_weights``; ``None`` means ones) is a 1-D numeric array. Anything else: ``ValueError``
naming ``w`` (``weights`` for a batch). A zero weight registers the class and changes no count.

Batches: ``values``, ``labels`` and ``weights`` are 1-D, of one length, else ``ValueError``
naming the argument. A summary validates the whole batch, in that order (values, labels, weights;
``update``: value, weight, label), before it changes anything, and registers a new class only
after every check has passed, so a rejected call leaves it unchanged.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..tables import ClassIndex, _python_scalar

__all__ = [
    "real_value",
    "numeric_value",
    "numeric_batch",
    "is_missing",
    "is_pandas_missing",
    "is_missing_category",
    "category_batch",
    "unhashable_category",
    "check_label",
    "label_column",
    "label_batch",
    "check_labels",
    "known_columns",
    "check_codes",
    "register_labels",
    "check_weight",
    "fast_weight",
    "as_weights",
]


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def is_missing(x: Any) -> bool:
    """True for None and NaN (of any float type)."""
    if x is None:
        return True
    if isinstance(x, float | np.floating):
        return x != x
    return False


def is_pandas_missing(x: Any) -> bool:
    """True for pandas' ``NA`` and ``NaT`` (recognised by type name: pandas is not a dependency)."""
    return type(x).__name__ in ("NAType", "NaTType")


def is_missing_category(x: Any) -> bool:
    """True for the values a categorical summary counts as missing: None, NaN, pandas' NA/NaT."""
    return is_missing(x) or is_pandas_missing(x)


def _not_a_number(x: Any) -> ValueError:
    kind = type(x).__name__
    return ValueError(f"x must be a real number (not a bool), None or NaN in a numeric summary, got {kind} {x!r}")


def real_value(x: Any) -> float:
    """A value as a float for a numeric query: NaN when missing, but ±inf kept (``GKClass.rank``).

    ``ValueError`` for a bool and for anything that is not a real number. Cost O(1).
    """
    if x is None or is_pandas_missing(x):
        return math.nan
    if isinstance(x, numbers.Real) and not isinstance(x, bool):  # np.bool_ is not a numbers.Real
        try:
            return float(x)
        except OverflowError:  # an int beyond the float range: missing, as in numeric_value
            return math.nan
    raise _not_a_number(x)


def numeric_value(x: Any) -> float | None:
    """One value of a numeric summary as a float, or None when it is missing.

    Missing: None, NaN, ±inf, an integer beyond the float range, pandas' NA/NaT. ``ValueError``
    for a bool and for anything that is not a real number. Cost O(1).

    >>> numeric_value(3), numeric_value(np.float32(0.5)), numeric_value(float("inf"))
    (3.0, 0.5, None)
    """
    if x is None:
        return None
    if type(x) is not float:
        x = real_value(x)
    return x if x - x == 0.0 else None  # x - x is 0.0 for a finite x, NaN for NaN and ±inf


def _element(x: Any) -> float:
    value = numeric_value(x)
    return math.nan if value is None else value


_elements = np.frompyfunc(_element, 1, 1)
#: Element types of an object array that ``astype(float)`` converts exactly as ``numeric_value``.
_PLAIN = frozenset((float, int, type(None), np.float64, np.float32, np.float16, np.int64, np.int32, np.int16,
                    np.int8, np.uint64, np.uint32, np.uint16, np.uint8))  # fmt: skip


_PLAIN_WEIGHTS = _PLAIN - {type(None)}


def _one_dimensional(values: Any, name: str) -> np.ndarray:
    """``values`` as a 1-D array; lists and tuples element by element into an object array, so
    that nothing is coerced (``[1.0, True]`` keeps its bool, ``[(1, 2)]`` stays one tuple)."""
    if isinstance(values, np.ndarray):
        array = values
    elif hasattr(values, "to_numpy"):  # pandas
        array = np.asarray(values.to_numpy())
    elif hasattr(values, "__iter__") and not isinstance(values, str | bytes):
        values = list(values)
        array = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            array[i] = value
    else:  # a scalar: refused below
        array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {array.shape}")
    return array


def numeric_batch(values: Any) -> np.ndarray:
    """A batch of a numeric summary's values as a new ``(m,)`` float array, NaN where missing.

    The rules of ``numeric_value``, for every entry: ``ValueError`` naming the first bad entry
    (a bool, a string…) or the array's dtype. Cost O(m) vectorised for numeric arrays; one Python
    call per entry for object arrays holding other than plain ints, floats and None.

    >>> numeric_batch(np.array([1, 2])).tolist(), numeric_batch([0.5, None, float("-inf")]).tolist()
    ([1.0, 2.0], [0.5, nan, nan])
    """
    array = _one_dimensional(values, "values")
    kind = array.dtype.kind
    if kind in "iuf":
        out = array.astype(np.float64)  # a new array: ±inf are overwritten below
    elif kind == "O":
        if set(map(type, array)) <= _PLAIN:
            out = array.copy()
            out[out == None] = math.nan  # noqa: E711 - elementwise comparison on an object array
            try:
                out = out.astype(np.float64)
            except OverflowError:  # an int beyond the float range: missing, as numeric_value says
                with np.errstate(invalid="ignore"):
                    out = _elements(array).astype(np.float64)
        else:
            with np.errstate(invalid="ignore"):
                out = _elements(array).astype(np.float64) if len(array) else np.zeros(0)
    elif len(array):  # bools, strings, complex numbers, dates…: name the first entry
        raise _not_a_number(_python_scalar(array[0]))
    else:
        raise ValueError(f"values must be real numbers in a numeric summary, got an array of dtype {array.dtype}")
    out[~np.isfinite(out)] = math.nan
    return out


def category_batch(values: Any) -> np.ndarray:
    """A batch of a categorical summary's values as a 1-D array (object dtype for lists, so that
    mixed types and tuples are not coerced to strings or to a 2-D array). ``ValueError`` unless 1-D."""
    return _one_dimensional(values, "values")


def unhashable_category(x: Any) -> ValueError:
    """The error for a value a categorical summary cannot count (it is not hashable)."""
    return ValueError(f"x must be hashable in a categorical summary, got {type(x).__name__} {x!r}")


# --------------------------------------------------------------------------------------------
# Class labels
# --------------------------------------------------------------------------------------------


def check_label(y: Any) -> Any:
    """A class label as summaries store it (NumPy scalars become Python values).

    ``ValueError`` naming ``y`` for None or an unhashable label.

    >>> check_label(np.int64(2)), check_label("a")
    (2, 'a')
    """
    y = _python_scalar(y)
    if y is None:
        raise ValueError("class label y must not be None")
    try:
        hash(y)
    except TypeError:
        raise ValueError(f"class label y must be hashable, got {type(y).__name__} {y!r}") from None
    return y


def label_column(classes: ClassIndex, y: Any) -> int:
    """Column of class label ``y``, registering it when new (``check_label`` first: ``ValueError``
    naming ``y`` for None or an unhashable label, and nothing registered). Cost O(1)."""
    try:
        j = classes.position.get(y)
    except TypeError:  # an unhashable label: check_label names it
        j = None
    if j is None:
        j = classes.encode(check_label(y))
    return j


def label_batch(labels: Any, m: int) -> np.ndarray:
    """A batch's labels as a ``(m,)`` array (object dtype for lists: types are not coerced).

    ``ValueError`` naming ``labels`` unless it is 1-D with one entry per value.
    """
    if isinstance(labels, np.ndarray):
        out = labels
    elif hasattr(labels, "to_numpy"):  # pandas
        out = np.asarray(labels.to_numpy())
    else:
        labels = list(labels)
        out = np.empty(len(labels), dtype=object)
        for i, label in enumerate(labels):  # element by element: nested sequences stay labels
            out[i] = label
    if out.ndim != 1 or len(out) != m:
        raise ValueError(f"labels must be a 1-D array with one entry per value ({m}), got shape {np.shape(out)}")
    return out


def check_labels(labels: np.ndarray) -> None:
    """``ValueError`` naming ``y`` when an entry of ``labels`` is None or unhashable.

    Typed arrays (numbers, bools, strings) hold valid labels; object arrays are checked with one
    ``set`` (C-level hashing). Cost O(m).
    """
    if labels.dtype.kind != "O":
        return
    entries = labels.tolist()
    try:
        distinct = set(entries)
    except TypeError:
        for y in entries:
            check_label(y)
        raise  # pragma: no cover - check_label raised on the unhashable entry
    if None in distinct:
        raise ValueError("class labels y must not be None")


def known_columns(classes: ClassIndex, labels: np.ndarray) -> np.ndarray | None:
    """Columns ``(m,)`` of a batch's labels when every one is registered (the usual case: one
    ``ClassIndex.lookup_many``), else None once ``check_labels`` has passed. Registers nothing."""
    codes = classes.lookup_many(labels)
    if codes is None:
        check_labels(labels)
    return codes


def register_labels(classes: ClassIndex, labels: np.ndarray) -> np.ndarray:
    """Columns ``(m,)`` of checked labels, registering new classes in order of first appearance."""
    try:
        return classes.encode_many(labels)
    except TypeError:  # labels of mixed, unorderable types: np.unique cannot sort them
        return np.fromiter((classes.encode(y) for y in labels.tolist()), dtype=np.intp, count=len(labels))


def check_codes(codes: Any, n_labels: int) -> np.ndarray:
    """Class codes of ``update_coded`` as a ``(m,)`` intp array: ``ValueError`` naming ``codes``
    unless they are 1-D integers in ``[0, n_labels)``. Cost O(m) vectorised."""
    codes = np.asarray(codes)
    if codes.ndim != 1 or (codes.size and codes.dtype.kind not in "iu"):
        raise ValueError(f"codes must be a 1-D array of integers, got shape {codes.shape} and dtype {codes.dtype}")
    codes = codes.astype(np.intp, copy=False)
    if codes.size and (codes.min() < 0 or codes.max() >= n_labels):
        raise ValueError(f"codes must be positions in labels, in [0, {n_labels}), got {codes.min()}..{codes.max()}")
    return codes


# --------------------------------------------------------------------------------------------
# Sample weights
# --------------------------------------------------------------------------------------------


def check_weight(w: Any) -> float:
    """One sample weight as a float: a finite real number ≥ 0, else ``ValueError`` naming ``w``."""
    if isinstance(w, bool) or not isinstance(w, numbers.Real):
        raise ValueError(f"sample weight w must be a finite number >= 0, got {w!r}")
    try:
        value = float(w)
    except OverflowError:  # an int beyond the float range is not a finite weight
        value = math.inf
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"sample weight w must be a finite number >= 0, got {w!r}")
    return value


def fast_weight(w: Any) -> float:
    """``check_weight`` with a fast path for the common case, a valid Python float."""
    if type(w) is float and 0.0 <= w < math.inf:
        return w
    return check_weight(w)


def as_weights(weights: Any, m: int) -> np.ndarray:
    """A batch's sample weights as a ``(m,)`` float array (``None`` means ones).

    ``ValueError`` naming ``weights`` (the sample weights ``w``) unless it is a 1-D array of ``m``
    finite real numbers ≥ 0 (bools and strings are not weights). A float64 array is returned as
    it is, not copied.
    """
    if weights is None:
        return np.ones(m)
    array = _one_dimensional(weights, "weights")
    kind = array.dtype.kind
    if kind == "O":
        if not set(map(type, array)) <= _PLAIN_WEIGHTS:
            for w in array.tolist():
                if isinstance(w, bool | np.bool_) or not isinstance(w, numbers.Real):
                    raise ValueError(f"weights (sample weights w) must be finite numbers >= 0, got {w!r}")
    elif kind not in "iuf":
        raise ValueError(f"weights (sample weights w) must be finite numbers >= 0, got an array of dtype {array.dtype}")
    try:
        array = np.asarray(array, dtype=float)
    except OverflowError:  # an int beyond the float range is not a finite weight
        raise ValueError("weights (sample weights w) must be finite numbers >= 0, got an int beyond the float range") from None
    if len(array) != m:
        raise ValueError(f"weights must have one entry per value ({m}), got {len(array)}")
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        bad = array[~(np.isfinite(array) & (array >= 0))][0]
        raise ValueError(f"weights (sample weights w) must be finite numbers >= 0, got {float(bad)!r}")
    return array
