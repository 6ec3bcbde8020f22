"""The input policy of the level-1 summaries: the one place that decides what a value, a class label
and a sample weight are (``docs/algorithms/summaries.md#input-policy``).

Every summary validates its input with these functions, in ``update`` (one observation) and in
``update_many`` / ``update_coded`` (a batch), so the same input gets the same answer everywhere.

Numeric value (``GKClass``, ``CPiD``, ``Gaussian``): ``numeric_value`` / ``numeric_batch``

- a real number that is not a bool (Python ``int``/``float``, NumPy integers and floats,
  ``fractions.Fraction``, ``decimal.Decimal``…) is used as its ``float``; every finite float is
  kept, ±1.8e308 included (each summary handles the extremes, see its docstring);
- None, NaN, ±inf and pandas' ``NA``/``NaT`` are *missing*: counted per class in ``missing``,
  never inserted;
- a finite number beyond the float range (an ``int`` of 10**400, ``Decimal("1e400")``):
  ``ValueError`` naming the value (it is neither missing nor representable);
- a bool (``True``, ``np.bool_``, a boolean array) is **not** a number for a numeric summary:
  ``ValueError``. The classifier treats bools as categorical values, and the summaries agree;
- a string, bytes, a complex number, a date or any other object: ``ValueError`` naming the value.

Categorical value (``Categorical``): any hashable; None, NaN, pandas' ``NA``/``NaT`` are missing
(``is_missing_category``); ±inf are ordinary values. An unhashable value: ``ValueError``.

Class label ``y``: any hashable but a missing value (None, NaN, pandas' ``NA``/``NaT``:
``check_label``, ``check_labels``); NumPy scalars are stored as the Python values they hold. A
missing or an unhashable label: ``ValueError`` naming ``y``.

The classifier (``feature_value``, ``model_key``, ``model_label``) reads a feature value with
these rules and one more: whatever it accepts, its saved model can hold. Dates and durations are
numbers of seconds; a value that is neither a number, a missing marker, a str, a bool nor a tuple
of these is refused (``ValueError``) instead of being accepted and then unsaveable
(``docs/algorithms/summaries.md#input-policy`` has the table of every kind of value).

Sample weight ``w``: a finite real number ≥ 0, not a bool (``check_weight``); a batch of them
(``as_weights``; ``None`` means ones) is a 1-D numeric array. Anything else: ``ValueError``
naming ``w`` (``weights`` for a batch). A zero weight registers the class and changes no count.

Decay factor (``decay(factor)``): a real number in (0, 1], not a bool (``check_factor``); anything
else (NaN, 0, a negative number, more than 1, a string): ``ValueError`` naming ``factor``.

Batches: ``values``, ``labels`` and ``weights`` are 1-D, of one length, else ``ValueError``
naming the argument. A summary validates the whole batch, in that order (values, labels, weights;
``update``: value, weight, label), before it changes anything, and registers a new class only
after every check has passed, so a rejected call leaves it unchanged.
"""

from __future__ import annotations

import datetime
import decimal
import math
import numbers
import reprlib
from typing import Any

import numpy as np

from .._checks import is_real, real
from ..tables import MAX_KEY_DEPTH, ClassIndex, _python_scalar, key_depth

__all__ = [
    "MAX_TOTAL_WEIGHT",
    "excerpt",
    "check_factor",
    "column_array",
    "check_total_weight",
    "feature_value",
    "model_key",
    "model_label",
    "seconds",
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


def _beyond_range(x: Any) -> ValueError:
    text = repr(x) if len(repr(x)) <= 40 else repr(x)[:37] + "..."
    return ValueError(f"x must be a real number within the float range (|x| <= 1.8e308), got {type(x).__name__} {text}")


def real_value(x: Any) -> float:
    """A value as a float for a numeric query: NaN when missing, but ±inf kept (``GKClass.rank``).

    ``ValueError`` for a bool, for anything that is not a real number (``decimal.Decimal`` is
    one), and for a finite number beyond the float range. Cost O(1).
    """
    if x is None or is_pandas_missing(x):
        return math.nan
    if is_real(x):  # (not a bool; np.bool_ is not a numbers.Real)
        try:
            value = float(x)
        except OverflowError:  # an int (or a Fraction) beyond the float range
            raise _beyond_range(x) from None
        if value - value != 0.0 and value == value and type(x) is not float:
            with np.errstate(invalid="ignore"):
                finite = x - x == 0
            if finite:  # a finite number of another type (np.longdouble…) that rounds to ±inf
                raise _beyond_range(x)
        return value
    if isinstance(x, decimal.Decimal):
        value = float(x)  # NaN → nan, ±Infinity → ±inf
        if x.is_finite() and value - value != 0.0:
            raise _beyond_range(x)
        return value
    raise _not_a_number(x)


def numeric_value(x: Any) -> float | None:
    """One value of a numeric summary as a float, or None when it is missing.

    Missing: None, NaN, ±inf, pandas' NA/NaT. ``ValueError`` for a bool, for anything that is not
    a real number, and for a finite number beyond the float range. Cost O(1).

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


def column_array(values: Any) -> np.ndarray:
    """A pandas, polars or pyarrow column (Series, Array, ChunkedArray) as a NumPy array.

    pyarrow converts without copying only for numbers without nulls, so its strings, bools and
    columns holding nulls are copied (nulls become None, or NaN in a numeric column).
    """
    if type(values).__module__.partition(".")[0] == "pyarrow":
        return np.asarray(values.to_numpy(zero_copy_only=False))
    return np.asarray(values.to_numpy())


def _one_dimensional(values: Any, name: str) -> np.ndarray:
    """``values`` as a 1-D array; lists and tuples element by element into an object array, so
    that nothing is coerced (``[1.0, True]`` keeps its bool, ``[(1, 2)]`` stays one tuple)."""
    if isinstance(values, np.ndarray):
        array = values
    elif hasattr(values, "to_numpy"):  # pandas, polars, pyarrow
        array = column_array(values)
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
            except OverflowError:  # an int beyond the float range: numeric_value names it
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


def _missing_label(y: Any) -> bool:
    """True for the labels that are missing values: None, NaN (any float type), pandas' NA/NaT and
    NumPy's NaT."""
    if y is None or is_pandas_missing(y):
        return True
    if isinstance(y, float | np.floating):
        return y != y
    return isinstance(y, np.datetime64 | np.timedelta64) and bool(np.isnat(y))


def check_label(y: Any) -> Any:
    """A class label as summaries store it (NumPy scalars become Python values).

    ``ValueError`` naming ``y`` for a missing label (None, NaN, pandas' NA/NaT) or an unhashable
    one: a missing label is not a class.

    >>> check_label(np.int64(2)), check_label("a")
    (2, 'a')
    """
    if _missing_label(y):
        raise ValueError(f"class label y must not be None or another missing value, got {y!r}")
    y = _python_scalar(y)
    problem = _hash_problem(y)
    if problem is not None:
        raise ValueError(f"class label y must be hashable, got {problem}")
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
    elif hasattr(labels, "to_numpy"):  # pandas, polars, pyarrow
        out = column_array(labels)
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

    Typed arrays (numbers, bools, strings) hold valid labels but for NaN (floats) and NaT
    (dates); object arrays are checked with one ``set`` (C-level hashing) and a pass over its
    distinct entries. Cost O(m).
    """
    if labels.dtype.kind in "fc":
        if np.isnan(labels).any():
            raise ValueError("class labels y must not be NaN (a missing value is not a class)")
        return
    if labels.dtype.kind in "mM":
        if np.isnat(labels).any():
            raise ValueError("class labels y must not be NaT (a missing value is not a class)")
        return
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
    for y in distinct:
        if _missing_label(y):
            raise ValueError(f"class labels y must not be missing values, got {y!r}")


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
    if not is_real(w):
        raise ValueError(f"sample weight w must be a finite number >= 0, got {w!r}")
    try:
        value = float(w)
    except OverflowError:  # an int beyond the float range is not a finite weight
        value = math.inf
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"sample weight w must be a finite number >= 0, got {w!r}")
    return value


def check_factor(factor: Any) -> float:
    """A decay factor as a float: a real number in (0, 1], else ``ValueError`` naming ``factor``."""
    # compared before the conversion: an int beyond the float range is refused, not an OverflowError
    return float(real(factor, "decay factor", above=0, high=1, what="a real number"))


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
                if not is_real(w):
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


# --------------------------------------------------------------------------------------------
# The classifier: feature values, keys and labels a saved model can hold
# --------------------------------------------------------------------------------------------

#: Seconds in one unit of a NumPy datetime64/timedelta64 (months and years are not fixed lengths:
#: a date in those units is converted to days first; a duration in them is refused).
_UNIT_SECONDS = {"W": 604800, "D": 86400, "h": 3600, "m": 60, "s": 1}
_UNIT_FRACTIONS = {"ms": 10**3, "us": 10**6, "ns": 10**9, "ps": 10**12, "fs": 10**15, "as": 10**18}
_EPOCH = datetime.datetime(1970, 1, 1)


def seconds(x: Any) -> float | None:
    """A date or a duration as a number of seconds, None for NaT, or ``ValueError``.

    Dates (``datetime.date``, ``datetime.datetime``, ``pandas.Timestamp``, ``numpy.datetime64``)
    are seconds since 1970-01-01T00:00:00 UTC, a naive date-time being taken as UTC; durations
    (``datetime.timedelta``, ``pandas.Timedelta``, ``numpy.timedelta64``) are seconds. The count
    of the value's own unit is converted exactly (integer arithmetic, one rounding), so one
    instant gives one float whatever its type or unit.

    >>> seconds(datetime.date(1970, 1, 2)), seconds(np.datetime64("1970-01-01T00:00:01.5"))
    (86400.0, 1.5)
    """
    if hasattr(x, "to_datetime64"):  # pandas.Timestamp (tz-aware: its UTC instant)
        x = x.to_datetime64()
    elif hasattr(x, "to_timedelta64"):  # pandas.Timedelta
        x = x.to_timedelta64()
    elif isinstance(x, datetime.datetime):
        if x.tzinfo is not None and x.utcoffset() is not None:
            x = x.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return _microseconds(x.replace(tzinfo=None) - _EPOCH)
    elif isinstance(x, datetime.date):
        return float((x - _EPOCH.date()).days * 86400)
    elif isinstance(x, datetime.timedelta):
        return _microseconds(x)
    if not isinstance(x, np.datetime64 | np.timedelta64):
        raise ValueError(f"not a date or a duration: {type(x).__name__} {x!r}")
    if np.isnat(x):
        return None
    unit, multiple = np.datetime_data(x.dtype)
    if unit in ("Y", "M"):
        if isinstance(x, np.timedelta64):
            raise ValueError(f"a duration in {'years' if unit == 'Y' else 'months'} has no fixed length in seconds: {x!r}")
        x = x.astype("datetime64[D]")
        unit, multiple = "D", 1
    count = int(x.astype(np.int64)) * multiple
    if unit in _UNIT_SECONDS:
        return float(count * _UNIT_SECONDS[unit])
    return count / _UNIT_FRACTIONS[unit]  # int / int: correctly rounded


def _microseconds(delta: datetime.timedelta) -> float:
    """A ``timedelta`` in seconds: its exact count of microseconds, divided once (one rounding)."""
    return ((delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds) / 10**6


def _not_saveable(x: Any) -> ValueError:
    kind = type(x)
    return ValueError(
        f"a {kind.__module__}.{kind.__qualname__} value cannot be held by a saved model "
        "(values are numbers, str, bool, dates, or tuples of str, int, float, bool and None); convert it first"
    )


def _key_item(x: Any) -> Any:
    """An item of a tuple key, as a saved model holds it (``ValueError`` otherwise).

    A NaN item is refused: a tuple holding NaN equals only itself (NaN is not equal to NaN), so
    the tuple a loaded model holds would not find the one a stream sends."""
    item = _plain_item(x)
    if isinstance(item, float) and item != item:
        raise _not_saveable(x)
    return item


def _plain_item(x: Any) -> Any:
    kind = type(x)
    if kind is str or kind is int or kind is float or kind is bool or x is None:
        return x
    if kind is tuple:
        return tuple(_key_item(item) for item in x)
    if isinstance(x, np.bool_ | np.integer | np.floating | np.str_):
        return x.item()
    if isinstance(x, str):  # a str subclass (an enum…): the str it equals
        return str.__str__(x)
    if isinstance(x, int) and not isinstance(x, bool):  # an int subclass (IntEnum…)
        return int(x)
    if isinstance(x, float):
        return float(x)
    raise _not_saveable(x)


def _hash_problem(x: Any) -> str | None:
    """Why ``x`` cannot be a dict key (unhashable, or its ``__hash__`` raises), or None."""
    if key_depth(x) > MAX_KEY_DEPTH:
        return f"a tuple nested too deeply (more than MAX_KEY_DEPTH = {MAX_KEY_DEPTH} levels)"
    try:
        hash(x)
    except TypeError:
        return f"unhashable value of type {type(x).__name__}"
    except Exception as error:  # noqa: BLE001 - a __hash__ of the caller's that raises anything
        return f"a {type(x).__name__} whose hash raises {type(error).__name__}"
    return None


def model_key(x: Any) -> Any:
    """``x`` as a key a saved model can hold (a category value, a feature name, a class label).

    Keys are ``str``, ``int``, ``float``, ``bool`` and tuples of these (which may also hold None
    and NaN); NumPy scalars and subclasses of these types become the value of the base type they
    equal (same hash, same dict key). ``ValueError`` for anything else (unhashable values
    included), and for None and NaN, which are missing values, not keys.

    >>> model_key(np.str_("a")), model_key((np.int64(1), None))
    ('a', (1, None))
    """
    if x is None or (isinstance(x, float | np.floating) and x != x):
        raise ValueError(f"a missing value ({x!r}) is not a key")
    problem = _hash_problem(x)
    if problem is not None:
        raise ValueError(problem)
    return _key_item(x)


def model_label(y: Any) -> Any:
    """A class label as the classifier stores it: ``check_label`` (not missing, hashable), then
    ``model_key`` (a label the saved model can hold). ``ValueError`` naming ``y`` otherwise.

    >>> model_label(np.int64(1)), model_label(("a", 2))
    (1, ('a', 2))
    """
    y = check_label(y)
    try:
        return model_key(y)
    except ValueError as error:
        raise ValueError(f"class label y: {error}") from None


def feature_value(x: Any) -> tuple[str | None, Any]:
    """The classifier's reading of one feature value: ``(kind, value)``.

    - ``("numeric", float)`` for a real number (``numeric_value``'s rules; ±inf is returned as
      it is: missing in a numeric feature, the other kind in a categorical one), a date or a
      duration (``seconds``);
    - ``("categorical", key)`` for a str, a bool or a tuple (``model_key``);
    - ``(None, None)`` for a missing value: None, NaN, pandas' NA and NaT, NumPy's NaT;
    - ``ValueError`` (the caller adds the feature's name) for a finite number beyond the float
      range, a complex number, bytes, an unhashable value, and any other value a saved model
      cannot hold.

    >>> feature_value(3), feature_value("a"), feature_value(float("nan")), feature_value(True)
    (('numeric', 3.0), ('categorical', 'a'), (None, None), ('categorical', True))
    """
    kind = type(x)
    # Exact-type fast paths first: this runs once per feature per example.
    if kind is float:
        return (None, None) if x != x else ("numeric", x)
    if kind is str:
        return "categorical", x
    if kind is int:
        try:
            return "numeric", float(x)
        except OverflowError:
            raise _beyond_range(x) from None
    if x is None:
        return None, None
    if isinstance(x, bool | np.bool_):
        return "categorical", bool(x)
    if is_pandas_missing(x):
        return None, None
    if isinstance(x, numbers.Real | decimal.Decimal) and not isinstance(x, np.datetime64 | np.timedelta64):
        value = real_value(x)
        return (None, None) if value != value else ("numeric", value)
    if isinstance(x, datetime.date | datetime.timedelta | np.datetime64 | np.timedelta64):
        value = seconds(x)
        return (None, None) if value is None else ("numeric", value)
    if isinstance(x, numbers.Complex):
        raise ValueError(f"a complex number is not a usable value, got {x!r}")
    if isinstance(x, bytes | bytearray | memoryview):
        raise ValueError(f"bytes are not a usable value (decode them to str first), got {x!r}")
    return "categorical", model_key(x)


#: Largest total sample weight a classifier learns. MODL's costs grow like N·log N in the
#: weighted count N and overflow the float range between N = 6e304 and 6e305 (measured); below
#: 1e303 every cost, count and prior stays finite (tested up to 9.6e302 with ten classes).
MAX_TOTAL_WEIGHT = 1e303
#: A weight at most this small cannot bring a total past ``MAX_TOTAL_WEIGHT`` in fewer than 1e20
#: examples: ``check_total_weight`` skips the sum for it.
_SMALL_WEIGHT = 1e280


def check_total_weight(total: Any, added: float) -> None:
    """``ValueError`` naming ``w`` when adding the sample weight(s) ``added`` to the model's total
    weight would pass ``MAX_TOTAL_WEIGHT``; ``total`` is the model's class counts (an array) or
    their sum. O(1) for a weight up to 1e280, O(J) otherwise."""
    if added <= _SMALL_WEIGHT:
        return
    before = float(np.sum(total))
    if not before + added <= MAX_TOTAL_WEIGHT:
        raise ValueError(
            f"sample weight w = {added!r} would bring the model's total weight to {before + added!r}, "
            f"beyond {MAX_TOTAL_WEIGHT!r} (the weighted counts must stay within the float range of MODL's costs)"
        )


# A short text of any value, for error messages and dead letters

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple, _REPR.maxset = 4, 30, 30, 30, 30
_REPR.maxstring, _REPR.maxlong, _REPR.maxother = 300, 80, 200
_EXCERPT = 1000


def excerpt(message: Any) -> str:
    """A short text of ``message`` that never fails (deep nesting, huge integers, odd objects)."""
    if isinstance(message, str):
        return message[:_EXCERPT]
    try:
        text = _REPR.repr(message)
    except Exception:  # noqa: BLE001 - an int too long for str(), a __repr__ that raises...
        text = f"<a {type(message).__name__} that cannot be shown>"
    return text[:_EXCERPT]
