"""A small declarative language for the records of a saved model.

A record is ``{"type": <registered name>, "params": {...}, "state": {...}}``. Its ``Schema``
lists each field of ``params`` and ``state`` with a *kind* (``Int``, ``Float``, ``Array``,
``Keys``, ``Struct``, ``Record``...). A kind knows how to write a live value (``dump``) and how
to read one back (``load``), checking on the way everything the schema states: the type, the
dtype, the shape, the value range. Checks run before any object is built, and every failure is a
``ModelFileError`` whose message starts with the field's path.

Shapes are written with *symbols*: ``Array("float64", ("n_tuples", "n_classes"))``. A symbol is
bound by its first use in a record (a ``Keys(length="n_classes")`` list, an array's dimension, an
``Int(binds="n_variables")``), and every later use must agree, so ``counts`` with one column too
many fails with ``counts: expected shape (12, 2), got (12, 3)``. Bounds may name symbols too:
``Array("int64", ("n_buffered",), low=0, below="n_classes")``. Symbols belong to one record;
a child record has its own.

What a kind cannot say (``values`` sorted *and* ``Σ counts = g``, say) goes into the schema's
``checks``: functions of the loaded ``Fields`` that call ``fields.fail(field, message)``.

A field holding many records of a few types (a model's variables) is written as columns
(``io.columns.Columns``, format version 9): the kinds here then check a column of all the
records at once, each record against its own symbols.

Examples
--------
>>> import numpy as np
>>> schema = Schema(state={
...     "classes": Keys(length="n_classes", doc="class labels"),
...     "counts": Array("float64", ("n_bins", "n_classes"), low=0.0, doc="class counts per bin"),
... })
>>> record = {"params": {}, "state": schema.dump_state({"classes": ["a", "b"], "counts": np.ones((3, 2))}, "")}
>>> schema.load(record, "summary").scope
{'n_classes': 2, 'n_bins': 3}
>>> record["state"]["counts"] = schema.dump_state({"classes": [], "counts": np.ones((3, 3))}, "")["counts"]
>>> schema.load(record, "summary")
Traceback (most recent call last):
...
wnb_stream.io.errors.ModelFileError: summary.counts: expected shape (n_bins, 2), got (3, 3)
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any, Callable, NoReturn

import numpy as np

from .._checks import bound_terms, is_integer, is_real
from ..tables import MAX_KEY_DEPTH, key_depth
from . import values
from .errors import ModelFileError, join, where
from .values import describe

__all__ = [
    "Kind",
    "Bool",
    "Int",
    "Float",
    "Str",
    "Key",
    "Keys",
    "Value",
    "Array",
    "List",
    "Struct",
    "Optional",
    "Schema",
    "Fields",
    "key_problem",
]

Bound = float | int | str | None
_FLOAT_MAX = sys.float_info.max


def _fail(path: str, message: str) -> NoReturn:
    raise ModelFileError(f"{where(path)}: {message}")


def _resolve(bound: Bound, scope: dict) -> float | int | None:
    """A bound's value: a number, or the size a symbol is bound to in ``scope``."""
    if isinstance(bound, str):
        if bound not in scope:
            raise RuntimeError(f"schema error: symbol {bound!r} is used before a field binds it")
        return scope[bound]
    return bound


class Kind:
    """The kind of a field: how its live value is written and read back.

    ``dump(value, path)`` returns the JSON-safe form (``TypeError``/``ValueError`` naming ``path``
    for a value that cannot be saved); ``load(node, path, scope)`` checks the JSON form against
    the kind and returns the live value, binding symbols in ``scope``. ``text()`` describes the
    kind in the schema document.
    """

    doc: str = ""

    def dump(self, value: Any, path: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def load(self, node: Any, path: str, scope: dict) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def text(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


def _range_text(low: Bound, high: Bound, above: Bound, below: Bound) -> str:
    return ", ".join(bound_terms(low, high, above, below))


def _check_range(value: Any, low: Bound, high: Bound, above: Bound, below: Bound, path: str, scope: dict) -> None:
    """``ModelFileError`` when the number ``value`` is outside the (symbolic) bounds."""
    for bound, holds, sign in (
        (low, lambda v, b: v >= b, ">="),
        (above, lambda v, b: v > b, ">"),
        (high, lambda v, b: v <= b, "<="),
        (below, lambda v, b: v < b, "<"),
    ):
        if bound is None:
            continue
        limit = _resolve(bound, scope)
        if not holds(value, limit):
            named = f"{bound} = {limit}" if isinstance(bound, str) else f"{limit}"
            _fail(path, f"must be {sign} {named}, got {value!r}")


@dataclasses.dataclass(frozen=True)
class Bool(Kind):
    """``True`` or ``False``."""

    doc: str = ""

    def dump(self, value, path):
        if not isinstance(value, bool | np.bool_):
            raise TypeError(f"{where(path)}: expected a bool, got {type(value).__name__}")
        return bool(value)

    def load(self, node, path, scope):
        if type(node) is not bool:
            _fail(path, f"expected a boolean, got {describe(node)}")
        return node

    def text(self):
        return "bool"


@dataclasses.dataclass(frozen=True)
class Int(Kind):
    """An integer (not a bool) within inclusive ``low``/``high`` and exclusive ``below``;
    ``binds`` names a symbol bound to the value."""

    low: Bound = None
    high: Bound = None
    below: Bound = None
    binds: str | None = None
    doc: str = ""

    def dump(self, value, path):
        if not is_integer(value):
            raise TypeError(f"{where(path)}: expected an int, got {type(value).__name__}")
        return int(value)

    def load(self, node, path, scope):
        if type(node) is not int:
            _fail(path, f"expected an integer, got {describe(node)}")
        _check_range(node, self.low, self.high, None, self.below, path, scope)
        if self.binds is not None:
            _bind(scope, self.binds, node, path, "value")
        return node

    def text(self):
        bounds = _range_text(self.low, self.high, None, self.below)
        return "int" + (f" ({bounds})" if bounds else "")


@dataclasses.dataclass(frozen=True)
class Float(Kind):
    """A real number: a float or an int (kept as written; never a bool).

    ``finite=False`` admits ±inf; NaN only with ``nan=True``. Bounds: ``low``/``high`` inclusive,
    ``above``/``below`` exclusive.
    """

    low: Bound = None
    high: Bound = None
    above: Bound = None
    below: Bound = None
    finite: bool = True
    nan: bool = False
    doc: str = ""

    def dump(self, value, path):
        if not is_real(value) or not isinstance(value, int | float | np.integer | np.floating):
            raise TypeError(f"{where(path)}: expected a number, got {type(value).__name__}")
        return values.encode(value.item() if isinstance(value, np.generic) else value, path)

    def load(self, node, path, scope):
        value = node
        if isinstance(node, dict):
            value = values.decode(node, path)
        if type(value) is not float and type(value) is not int:
            _fail(path, f"expected a number, got {describe(node)}")
        if type(value) is float and value != value:
            if not self.nan:
                _fail(path, "must not be NaN")
            return value
        if self.finite and type(value) is float and not math.isfinite(value):
            _fail(path, f"must be finite, got {value!r}")
        if type(value) is int and abs(value) > _FLOAT_MAX:  # read as a float, it would overflow
            _fail(path, f"must be a number within the range of a float, got an integer of {value.bit_length()} bits")
        _check_range(value, self.low, self.high, self.above, self.below, path, scope)
        return value

    def text(self):
        bounds = _range_text(self.low, self.high, self.above, self.below)
        extra = [] if self.finite else ["±inf allowed"]
        if self.nan:
            extra.append("NaN allowed")
        details = ", ".join(part for part in [bounds, *extra] if part)
        return "float" + (f" ({details})" if details else "")


@dataclasses.dataclass(frozen=True)
class Str(Kind):
    """A string, one of ``choices`` when given."""

    choices: tuple | None = None
    doc: str = ""

    def dump(self, value, path):
        if type(value) is not str:
            raise TypeError(f"{where(path)}: expected a str, got {type(value).__name__}")
        return value

    def load(self, node, path, scope):
        if type(node) is not str:
            _fail(path, f"expected a string, got {describe(node)}")
        if self.choices is not None and node not in self.choices:
            _fail(path, f"must be one of {list(self.choices)}, got {node!r}")
        return node

    def text(self):
        return "str" + (f" (one of {', '.join(map(repr, self.choices))})" if self.choices else "")


#: Most decimal digits of a saved integer: Python's default limit of int ↔ str conversion, so
#: that what is written can be read back.
MAX_DIGITS = 4300


def key_problem(value: Any, *, missing: bool = False) -> str | None:
    """Why ``value`` cannot be saved as a key (a class label, feature name or category value), or
    None when it can. ``missing=True`` accepts None and NaN too (a missing value, as a feature's
    value may be).

    >>> key_problem("spam"), key_problem(("a", 1)), key_problem(float("nan"), missing=True)
    (None, None, None)
    >>> key_problem(float("nan"))
    'NaN is a missing value, not a key'
    >>> key_problem(frozenset())
    'a builtins.frozenset cannot be saved (keys are str, int, bool, float and tuples of these)'
    """
    return _key_problem(value, not missing)


def _key_problem(value: Any, top: bool) -> str | None:
    if type(value) is tuple and key_depth(value) > MAX_KEY_DEPTH:  # (before the recursion below)
        return f"a tuple nested too deeply (more than MAX_KEY_DEPTH = {MAX_KEY_DEPTH} levels)"
    return _item_problem(value, top)


def _item_problem(value: Any, top: bool) -> str | None:
    """Why ``value`` cannot be a saved key (a class label or category value), or None.

    Keys are str, int, bool, float (at the top level neither NaN nor None: those are missing
    values) and tuples of keys (which may hold None and NaN).
    """
    kind = type(value)
    if kind is int:
        # 3.33 bits a digit: an int that str() could not write is refused before it is saved
        if value.bit_length() > 3.32 * MAX_DIGITS:
            return f"an integer of more than {MAX_DIGITS} digits cannot be saved"
        return None
    if kind is str or kind is bool:
        return None
    if kind is float:
        return "NaN is a missing value, not a key" if top and value != value else None
    if value is None:
        return "None is a missing value, not a key" if top else None
    if kind is tuple:
        for item in value:
            problem = _item_problem(item, False)
            if problem is not None:
                return problem
        return None
    return f"a {kind.__module__}.{kind.__qualname__} cannot be saved (keys are str, int, bool, float and tuples of these)"


def _load_key(node: Any, path: str) -> Any:
    if isinstance(node, dict) and node.get("$") not in ("float", "tuple"):
        _fail(path, f"expected a key, got {describe(node)}")
    if isinstance(node, list):
        _fail(path, "expected a key, got a list")
    key = values.decode(node, path)
    problem = _key_problem(key, True)
    if problem is not None:
        _fail(path, problem)
    return key


def _dump_key(key: Any, path: str) -> Any:
    if isinstance(key, np.generic):
        key = key.item()
    problem = _key_problem(key, True)
    if problem is not None:
        raise TypeError(f"{where(path)}: {problem}")
    return values.encode(key, path)


@dataclasses.dataclass(frozen=True)
class Key(Kind):
    """One dict key: a str, int, bool or float (not NaN), or a tuple of these (a feature name, say)."""

    doc: str = ""

    def dump(self, value, path):
        return _dump_key(value, path)

    def load(self, node, path, scope):
        return _load_key(node, path)

    def text(self):
        return "key"


@dataclasses.dataclass(frozen=True)
class Keys(Kind):
    """A list of distinct dict keys: class labels or category values.

    Each is a str, int, bool or float (not NaN), or a tuple of these (None and NaN allowed inside).
    Distinct means distinct as dict keys (``1``, ``1.0`` and ``True`` are one key). ``length``
    is a number or a symbol.
    """

    length: int | str | None = None
    doc: str = ""

    def dump(self, value, path):
        return [_dump_key(key, join(path, i)) for i, key in enumerate(value)]

    def load(self, node, path, scope):
        if not isinstance(node, list):
            _fail(path, f"expected a list, got {describe(node)}")
        if self.length is not None:
            _bind(scope, self.length, len(node), path, "length")
        keys = [_load_key(item, join(path, i)) for i, item in enumerate(node)]
        if len(set(keys)) != len(keys):
            seen: dict = {}
            for i, key in enumerate(keys):
                if key in seen:
                    _fail(join(path, i), f"{key!r} repeats item {seen[key]} (keys must be distinct)")
                seen[key] = i
        return keys

    def text(self):
        return f"list of keys ({_length_text(self.length)}, distinct)"


@dataclasses.dataclass(frozen=True)
class Value(Kind):
    """Any plain value (``values``: None, bool, int, float, str, lists, tuples, dicts with str
    keys, NumPy arrays), written as ``values.encode`` writes it: a source position, say, whose
    shape only its source knows."""

    doc: str = ""

    def dump(self, value, path):
        return values.encode(value, path)

    def load(self, node, path, scope):
        return values.decode(node, path)

    def text(self):
        return "plain value"


def _length_text(length) -> str:
    return "any length" if length is None else f"length {length}"


def _bind(scope: dict, symbol: int | str, size: int, path: str, what: str) -> None:
    """Bind ``symbol`` to ``size`` in ``scope`` or check it agrees (a number is checked as is)."""
    if isinstance(symbol, int):
        if size != symbol:
            _fail(path, f"expected {what} {symbol}, got {size}")
        return
    known = scope.get(symbol)
    if known is None:
        scope[symbol] = size
    elif known != size:
        _fail(path, f"expected {what} {known} ({symbol}), got {size}")


@dataclasses.dataclass(frozen=True)
class Array(Kind):
    """A NumPy array of one ``dtype`` ("float64", "int64", "bool"...) and a ``shape`` of symbols
    and numbers.

    Float arrays never hold NaN; ``finite`` (default) also excludes ±inf. ``low``/``high``
    (inclusive) and ``above``/``below`` (exclusive) bound every element; ``increasing`` asks
    for a strictly increasing 1-D array.
    """

    dtype: str
    shape: tuple
    low: Bound = None
    high: Bound = None
    above: Bound = None
    below: Bound = None
    finite: bool = True
    increasing: bool = False
    doc: str = ""

    def dump(self, value, path):
        dtype = np.dtype(self.dtype)
        array = np.asarray(value)
        if array.dtype != dtype:
            if array.size and not np.can_cast(array.dtype, dtype, "same_kind"):
                raise TypeError(f"{where(path)}: expected an array of {dtype.name}, got {array.dtype.name}")
            array = array.astype(dtype)
        if array.ndim != len(self.shape):
            raise ValueError(f"{where(path)}: expected {len(self.shape)} dimensions, got shape {array.shape}")
        return values.encode_array(array, path)

    def load(self, node, path, scope):
        array = values.decode_array(node, path)
        dtype = np.dtype(self.dtype)
        if array.dtype != dtype:
            _fail(path, f"expected dtype {dtype.name}, got {array.dtype.name}")
        self._check_shape(array.shape, path, scope)
        if array.size:
            self._check_values(array, path, scope)
        return array

    def _check_shape(self, shape: tuple, path: str, scope: dict) -> None:
        if len(shape) != len(self.shape):
            _fail(path, f"expected {len(self.shape)} dimensions {self._shape_text(scope)}, got shape {shape}")
        for expected, size in zip(self.shape, shape):
            known = expected if isinstance(expected, int) else scope.get(expected)
            if known is not None and known != size:
                _fail(path, f"expected shape {self._shape_text(scope)}, got {shape}")
        for expected, size in zip(self.shape, shape):
            if isinstance(expected, str):
                scope.setdefault(expected, size)

    def _shape_text(self, scope: dict) -> str:
        dims = [str(scope.get(d, d)) if isinstance(d, str) else str(d) for d in self.shape]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    def _check_values(self, array: np.ndarray, path: str, scope: dict) -> None:
        if array.dtype.kind == "f":
            bad = np.isnan(array) if not self.finite else ~np.isfinite(array)
            if bad.any():
                at = tuple(int(i) for i in np.argwhere(bad)[0])
                _fail(path, f"must be {'finite' if self.finite else 'free of NaN'}, got {array[at].item()!r} at index {at}")
        for bound, test, sign in (
            (self.low, np.less, ">="),
            (self.above, np.less_equal, ">"),
            (self.high, np.greater, "<="),
            (self.below, np.greater_equal, "<"),
        ):
            if bound is None:
                continue
            limit = _resolve(bound, scope)
            bad = test(array, limit)
            if bad.any():
                at = tuple(int(i) for i in np.argwhere(bad)[0])
                named = f"{bound} = {limit}" if isinstance(bound, str) else f"{limit}"
                _fail(path, f"values must be {sign} {named}, got {array[at].item()!r} at index {at}")
        if self.increasing and array.ndim == 1 and len(array) > 1:
            steps = np.diff(array) > 0
            if not steps.all():
                i = int(np.flatnonzero(~steps)[0])
                _fail(path, f"must increase strictly, got {array[i].item()!r} then {array[i + 1].item()!r} at index {i + 1}")

    def text(self):
        shape = "(" + ", ".join(map(str, self.shape)) + ("," if len(self.shape) == 1 else "") + ")"
        details = [_range_text(self.low, self.high, self.above, self.below)]
        if np.dtype(self.dtype).kind == "f":
            details.append("finite" if self.finite else "no NaN")
        if self.increasing:
            details.append("strictly increasing")
        details = ", ".join(d for d in details if d)
        return f"{self.dtype} {shape}" + (f", {details}" if details else "")


@dataclasses.dataclass(frozen=True)
class List(Kind):
    """A list of items of one kind; ``length`` is a number or a symbol."""

    item: Kind
    length: int | str | None = None
    doc: str = ""

    def dump(self, value, path):
        return [self.item.dump(item, join(path, i)) for i, item in enumerate(value)]

    def load(self, node, path, scope):
        if not isinstance(node, list):
            _fail(path, f"expected a list, got {describe(node)}")
        if self.length is not None:
            _bind(scope, self.length, len(node), path, "length")
        return [self.item.load(item, join(path, i), scope) for i, item in enumerate(node)]

    def text(self):
        return f"list of {self.item.text()} ({_length_text(self.length)})"


def _load_fields(fields: dict, node: Any, path: str, scope: dict, what: str) -> dict:
    """Load the JSON object ``node`` holding exactly ``fields`` (in their declared order)."""
    if not isinstance(node, dict) or "$" in node:
        _fail(path, f"expected {what}, got {describe(node)}")
    missing = [name for name in fields if name not in node]
    if missing:
        _fail(join(path, missing[0]), "missing field")
    extra = [name for name in node if name not in fields]
    if extra:
        _fail(join(path, extra[0]), "unexpected field")
    return {name: kind.load(node[name], join(path, name), scope) for name, kind in fields.items()}


def _dump_fields(fields: dict, value: dict, path: str) -> dict:
    if not isinstance(value, dict) or set(value) != set(fields):
        given = sorted(value) if isinstance(value, dict) else type(value).__name__
        raise ValueError(f"{where(path)}: expected the fields {list(fields)}, got {given}")
    return {name: kind.dump(value[name], join(path, name)) for name, kind in fields.items()}


@dataclasses.dataclass(frozen=True)
class Struct(Kind):
    """A JSON object with exactly these fields (a dict of live values; symbols are the record's)."""

    fields: dict
    doc: str = ""

    def dump(self, value, path):
        return _dump_fields(self.fields, value, path)

    def load(self, node, path, scope):
        return _load_fields(self.fields, node, path, scope, "an object")

    def text(self):
        return "object"


@dataclasses.dataclass(frozen=True)
class Optional(Kind):
    """``None`` (JSON null) or a value of ``kind``."""

    kind: Kind
    doc: str = ""

    def dump(self, value, path):
        return None if value is None else self.kind.dump(value, path)

    def load(self, node, path, scope):
        return None if node is None else self.kind.load(node, path, scope)

    def text(self):
        return f"{self.kind.text()} or null"


def _markdown_rows(name: str, kind: Kind, part: str) -> list[str]:
    inner = kind.kind if isinstance(kind, Optional) else kind
    doc = kind.doc or inner.doc
    if isinstance(inner, List) and isinstance(inner.item, Struct):  # each item's fields as name[].field
        rows = [f"| `{name}` | {part} | {kind.text()} | {doc} |"]
        for sub, sub_kind in inner.item.fields.items():
            rows.extend(_markdown_rows(f"{name}[].{sub}", sub_kind, part))
        return rows
    if isinstance(inner, Struct):
        text = "object" + (" or null" if inner is not kind else "")
        rows = [f"| `{name}` | {part} | {text} | {doc} |"]
        for sub, sub_kind in inner.fields.items():
            rows.extend(_markdown_rows(f"{name}.{sub}", sub_kind, part))
        return rows
    return [f"| `{name}` | {part} | {kind.text()} | {doc} |"]


@dataclasses.dataclass
class Fields:
    """The loaded, checked fields of one record, handed to its ``checks`` and its builder.

    ``params`` and ``state`` are dicts of live values (child records already rebuilt);
    ``scope`` maps each symbol to its size; ``path`` is the record's place in the saved model.
    """

    name: str
    path: str
    params: dict
    state: dict
    scope: dict

    def fail(self, field: str, message: str) -> NoReturn:
        """Raise ``ModelFileError`` for ``field`` (a name, or a dotted path inside the record)."""
        _fail(join(self.path, field) if field else self.path, message)


@dataclasses.dataclass(frozen=True)
class Schema:
    """The fields of one record type and the checks a kind cannot state.

    ``params`` are the constructor's parameters (a River ``Base``'s ``__init__`` arguments);
    ``state`` is what the object must hold to predict and keep learning, no caches. Field names
    are unique across both (paths do not say which of the two a field is in). ``checks`` are
    functions of ``Fields`` run after every field has loaded.
    """

    params: dict = dataclasses.field(default_factory=dict)
    state: dict = dataclasses.field(default_factory=dict)
    checks: tuple[Callable[[Fields], None], ...] = ()
    doc: str = ""

    def __post_init__(self):
        shared = set(self.params) & set(self.state)
        if shared:
            raise ValueError(f"schema fields must be unique across params and state, got {sorted(shared)} in both")

    def dump_params(self, params: dict, path: str) -> dict:
        """The JSON form of the parameters (exactly the declared ones)."""
        return _dump_fields(self.params, params, path)

    def dump_state(self, state: dict, path: str) -> dict:
        """The JSON form of the state (exactly the declared fields)."""
        return _dump_fields(self.state, state, path)

    def markdown(self) -> str:
        """The fields as a Markdown table (field, part, kind, meaning), nested objects flattened
        to dotted names: the tables of ``docs/saved-model.md``."""
        rows = ["| field | in | kind | meaning |", "|---|---|---|---|"]
        for part, fields in (("params", self.params), ("state", self.state)):
            for name, kind in fields.items():
                rows.extend(_markdown_rows(name, kind, part))
        return "\n".join(rows)

    def load(self, node: dict, path: str, name: str = "") -> Fields:
        """Load and check ``node["params"]`` and ``node["state"]``, then run the ``checks``."""
        scope: dict = {}
        params = _load_fields(self.params, node["params"], path, scope, "the params object")
        state = _load_fields(self.state, node["state"], path, scope, "the state object")
        fields = Fields(name, path, params, state, scope)
        for check in self.checks:
            try:
                check(fields)
            except ModelFileError:
                raise
            except Exception as error:  # a check meeting values it cannot even compare: one error type
                _fail(path, f"cannot check the record: {type(error).__name__}: {error}")
        return fields
