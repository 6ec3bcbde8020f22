"""A versioned, pickle-free, JSON-safe state format for models and stream checkpoints.

Pickle can run any code named in the file it loads, so a model file from an untrusted place is a
security hole. This module writes the object graph of a model as plain JSON instead, and reads it
back without importing anything outside ``wnb_stream``:

- ``to_state(obj)`` turns an object graph into a JSON-safe structure (dicts with ``str`` keys,
  lists, ``str``, ``int``, finite ``float``, ``bool``, ``None``); ``from_state(state)`` rebuilds it.
- ``dumps(obj)`` / ``loads(text)`` add the envelope ``{"format": "wnb_stream", "version": 1,
  "state": ...}`` and check it on the way back.
- ``save(obj, path)`` / ``load(path)`` write atomically: a crash during ``save`` leaves the previous
  file untouched and no temporary file behind.

What is encoded
---------------
``None``, ``bool``, ``int``, ``str``, ``float`` (NaN and ±inf spelled out, since JSON has none),
``bytes``, ``list``, ``tuple``, ``dict`` with any hashable keys, ``set``, ``frozenset``,
``collections.deque`` / ``OrderedDict`` / ``Counter`` / ``defaultdict``, ``array.array``, NumPy arrays (dtype,
shape and the raw little-endian bytes in base64, so every float comes back bit for bit; object
arrays element by element), NumPy scalars and dtypes, ``numpy.random.Generator`` /
``RandomState`` and ``random.Random`` (their exact state), and instances, named tuples, enums and
classes defined in a ``wnb_stream`` module. An instance is written as its class path and the
state that pickle would use (``__getstate__()``, else ``__dict__`` and slots), and is rebuilt by
``cls.__new__(cls)`` then ``__setstate__`` (or the attributes set directly), so ``__init__`` is not
run and frozen dataclasses, ``@dataclass(slots=True)`` records and River ``Base`` objects all work.

Safety
------
On load a class path must name a module ``wnb_stream`` or ``wnb_stream.*`` and a class whose own
``__module__`` and ``__qualname__`` are that path (so a re-exported foreign name cannot be reached).
NumPy and the standard-library types above are rebuilt by dedicated code, never looked up by
name. Loading therefore imports nothing but ``wnb_stream`` modules and calls no function named by
the file; ``__setstate__`` methods of ``wnb_stream`` classes are the only code it runs.

Shared references and cycles
----------------------------
Identity-bearing objects (lists, dicts, sets, arrays, instances, …) are numbered in the order the
encoder first meets them, as pickle's memo does; a second meeting writes ``{"$": "ref", "id": n}``.
The decoder numbers them in the same order, so an object held twice comes back as one object, and
cycles through mutable objects are restored. Two views of one NumPy buffer come back as two
independent arrays. A cycle that runs through a tuple or a frozenset cannot be rebuilt and is
refused at encoding time.

Encoded form
------------
A JSON object whose keys do not include ``"$"`` is a plain ``dict`` with ``str`` keys, a JSON array
is a ``list``, and every other type is a JSON object tagged by its ``"$"`` key, e.g.
``{"$": "float", "value": "nan"}`` or ``{"$": "ndarray", "dtype": "<f8", "shape": [2], "data": "…"}``.

Examples
--------
>>> import numpy as np
>>> from wnb_stream import persistence
>>> state = {"counts": np.array([[1.0, 2.0], [3.0, np.nan]]), ("a", 1): float("inf")}
>>> text = persistence.dumps(state)
>>> back = persistence.loads(text)
>>> back["counts"].tolist(), back[("a", 1)]
([[1.0, 2.0], [3.0, nan]], inf)
>>> persistence.to_state([1.5, float("nan"), (2, "b")])
[1.5, {'$': 'float', 'value': 'nan'}, {'$': 'tuple', 'items': [2, 'b']}]
"""

from __future__ import annotations

import array as pyarray
import base64
import collections
import enum
import importlib
import json
import math
import os
import random
import re
import sys
from typing import Any

import numpy as np

# The atomic write of saved models; re-exported here for the stream runner's checkpoints.
from .io.files import atomic_write

__all__ = ["FORMAT", "VERSION", "to_state", "from_state", "dumps", "loads", "save", "load", "atomic_write"]

#: Name written in the envelope of every file of this format.
FORMAT = "wnb_stream"
#: Version of the encoded form written by this module; files with a larger version are refused.
VERSION = 1

_TAG = "$"
_ALLOWED_ROOT = "wnb_stream"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# NumPy dtype kinds whose values are plain bytes (bool, ints, floats, complex, datetimes, strings).
_RAW_KINDS = frozenset("biufcmMUS")
# Builtin classes a "type" node (e.g. a defaultdict factory) may name.
_BUILTIN_TYPES = {
    t.__name__: t for t in (bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, type(None))
}
# Type codes of the standard library's array.array (fixed-size numbers), stored little-endian.
_ARRAY_TYPECODES = frozenset("bBhHiIlLqQfd")
_BIT_GENERATORS = {
    name: getattr(np.random, name) for name in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
}


class _EncodeError(TypeError):
    """A value that cannot be encoded; carries the path of attributes/keys leading to it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.path: list[str] = []

    def __str__(self) -> str:
        where = "".join(self.path) or "<root>"
        return f"{self.message} (at {where})"


# ------------------------------------------------------------------------------------------------
# Class paths


def _is_allowed_module(module: str) -> bool:
    return module == _ALLOWED_ROOT or module.startswith(_ALLOWED_ROOT + ".")


def _class_path(cls: type) -> str:
    """``module:qualname`` of a ``wnb_stream`` class; ``_EncodeError`` for any other class."""
    module = getattr(cls, "__module__", "") or ""
    qualname = getattr(cls, "__qualname__", "") or ""
    if not _is_allowed_module(module) or "<locals>" in qualname:
        raise _EncodeError(
            f"cannot encode an instance of {module}.{qualname}: only classes defined at module level "
            f"in {_ALLOWED_ROOT} modules, and the builtin and NumPy types listed in "
            f"wnb_stream.persistence, can be saved"
        )
    return f"{module}:{qualname}"


def _resolve_class(path: Any) -> type:
    """The ``wnb_stream`` class named by ``module:qualname``; ``ValueError`` for anything else.

    Only modules ``wnb_stream`` / ``wnb_stream.*`` are ever imported, and the object found must be
    a class whose own ``__module__`` and ``__qualname__`` equal the path.
    """
    if not isinstance(path, str) or path.count(":") != 1:
        raise ValueError(f"malformed class path {path!r}")
    module_name, qualname = path.split(":")
    module_parts = module_name.split(".")
    qual_parts = qualname.split(".")
    if not _is_allowed_module(module_name) or not all(
        _IDENTIFIER.match(p) and not p.startswith("__") for p in module_parts
    ):  # no dunder modules: importing wnb_stream.__main__ would run the command line
        raise ValueError(f"refusing to load class {path!r}: only {_ALLOWED_ROOT} classes may be loaded")
    if not all(_IDENTIFIER.match(p) and not p.startswith("__") for p in qual_parts):
        raise ValueError(f"refusing to load class {path!r}: malformed qualified name")
    try:
        target: Any = importlib.import_module(module_name)
        for part in qual_parts:
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"cannot find class {path!r} ({error})") from None
    if (
        not isinstance(target, type)
        or target.__module__ != module_name
        or target.__qualname__ != qualname
    ):
        raise ValueError(f"refusing to load {path!r}: it does not name a class defined in {module_name}")
    return target


def _is_namedtuple_class(cls: type) -> bool:
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


# ------------------------------------------------------------------------------------------------
# Arrays


def _array_dtype(descr: Any) -> np.dtype:
    if not isinstance(descr, str):
        raise ValueError(f"malformed dtype {descr!r}")
    try:
        dtype = np.dtype(descr)
    except TypeError:
        raise ValueError(f"malformed dtype {descr!r}") from None
    if dtype.kind not in _RAW_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(f"unsupported dtype {descr!r}")
    return dtype


def _encode_raw(array: np.ndarray) -> tuple[str, str]:
    """(dtype string, base64 of the little-endian C-order bytes) of a non-object array."""
    dtype = array.dtype
    # "|" marks dtypes without a byte order (bool, 1-byte ints, bytes strings).
    target = dtype if dtype.byteorder == "|" else dtype.newbyteorder("<")
    data = np.ascontiguousarray(array, dtype=target).tobytes()
    return target.str, base64.b64encode(data).decode("ascii")


def _decode_raw(descr: Any, shape: tuple[int, ...], data: Any) -> np.ndarray:
    dtype = _array_dtype(descr)
    if not isinstance(data, str):
        raise ValueError("malformed array data")
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    expected = dtype.itemsize * math.prod(shape)
    if len(raw) != expected:
        raise ValueError(f"array data has {len(raw)} bytes, expected {expected} for {descr} {list(shape)}")
    array = np.frombuffer(raw, dtype=dtype).reshape(shape)
    # Back to native byte order, in a fresh writable buffer.
    return array.astype(dtype.newbyteorder("="), copy=True)


def _shape(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(type(d) is int and d >= 0 for d in value):
        raise ValueError(f"malformed array shape {value!r}")
    return tuple(value)


# ------------------------------------------------------------------------------------------------
# Encoder


class _Encoder:
    """One ``to_state`` call: walks the graph, numbering identity-bearing objects (pickle's memo)."""

    def __init__(self):
        # id(obj) -> (number, obj); keeping obj alive stops its id from being reused by a
        # temporary (e.g. a dict returned by __getstate__) while the walk goes on.
        self.memo: dict[int, tuple[int, Any]] = {}
        # ids of immutable containers being encoded, to refuse cycles through them.
        self.active: set[int] = set()

    def remember(self, obj: Any) -> None:
        self.memo[id(obj)] = (len(self.memo), obj)

    def encode(self, obj: Any) -> Any:
        kind = type(obj)
        # Immutable scalars: written by value.
        if obj is None or kind is bool or kind is str:
            return obj
        if kind is int:
            return obj
        if kind is float:
            if math.isfinite(obj):
                return obj
            return {_TAG: "float", "value": "nan" if obj != obj else ("inf" if obj > 0 else "-inf")}

        seen = self.memo.get(id(obj))
        if seen is not None:
            return {_TAG: "ref", "id": seen[0]}

        if kind is list:
            self.remember(obj)
            return self.items(obj)
        if kind is dict:
            self.remember(obj)
            return self.mapping(obj)
        if kind is tuple:
            return {_TAG: "tuple", "items": self.immutable_items(obj)}
        if kind is set:
            self.remember(obj)
            return {_TAG: "set", "items": self.items(obj)}
        if kind is frozenset:
            return {_TAG: "frozenset", "items": self.immutable_items(obj)}
        if kind is bytes:
            return {_TAG: "bytes", "data": base64.b64encode(obj).decode("ascii")}
        if kind is np.ndarray:
            self.remember(obj)
            return self.ndarray(obj)
        if isinstance(obj, np.generic):
            if obj.dtype.kind == "O":
                raise _EncodeError(f"cannot encode a NumPy object scalar {obj!r}")
            descr, data = _encode_raw(np.asarray(obj))
            return {_TAG: "npscalar", "dtype": descr, "data": data}
        if kind is pyarray.array:
            self.remember(obj)
            return self.pyarray(obj)
        if kind is collections.deque:
            self.remember(obj)
            return {_TAG: "deque", "maxlen": obj.maxlen, "items": self.items(obj)}
        if kind is collections.OrderedDict:
            self.remember(obj)
            return {_TAG: "ordereddict", "items": self.pairs(obj)}
        if kind is collections.Counter:
            self.remember(obj)
            return {_TAG: "counter", "items": self.pairs(obj)}
        if kind is collections.defaultdict:
            self.remember(obj)
            factory = None if obj.default_factory is None else self.type_node(obj.default_factory)
            return {_TAG: "defaultdict", "factory": factory, "items": self.pairs(obj)}
        if isinstance(obj, np.dtype):
            if obj.kind not in _RAW_KINDS and obj.kind != "O":
                raise _EncodeError(f"cannot encode dtype {obj!r}")
            return {_TAG: "dtype", "descr": obj.str}
        if kind is np.random.Generator:
            self.remember(obj)
            return self.generator(obj)
        if kind is np.random.RandomState:
            self.remember(obj)
            return {_TAG: "randomstate", "state": self.encode(obj.get_state(legacy=False))}
        if kind is random.Random:
            self.remember(obj)
            return {_TAG: "random", "state": self.encode(obj.getstate())}
        if isinstance(obj, type):
            return self.type_node(obj)
        if isinstance(obj, enum.Enum):
            return {_TAG: "enum", "cls": _class_path(kind), "name": obj.name}
        if _is_namedtuple_class(kind):
            return {_TAG: "namedtuple", "cls": _class_path(kind), "items": self.immutable_items(obj)}
        return self.instance(obj)

    # -- containers ------------------------------------------------------------------------------

    def items(self, values) -> list:
        out = []
        for i, value in enumerate(values):
            try:
                out.append(self.encode(value))
            except _EncodeError as error:
                error.path.insert(0, f"[{i}]")
                raise
        return out

    def immutable_items(self, values) -> list:
        key = id(values)
        if key in self.active:
            raise _EncodeError(f"cannot encode a cycle through a {type(values).__name__}")
        self.active.add(key)
        try:
            return self.items(values)
        finally:
            self.active.discard(key)

    def mapping(self, obj: dict) -> Any:
        if all(type(k) is str for k in obj) and _TAG not in obj:
            out = {}
            for k, v in obj.items():
                try:
                    out[k] = self.encode(v)
                except _EncodeError as error:
                    error.path.insert(0, f"[{k!r}]")
                    raise
            return out
        return {_TAG: "dict", "items": self.pairs(obj)}

    def pairs(self, obj) -> list:
        out = []
        for k, v in obj.items():
            try:
                out.append([self.encode(k), self.encode(v)])
            except _EncodeError as error:
                error.path.insert(0, f"[{k!r}]")
                raise
        return out

    def ndarray(self, array: np.ndarray) -> dict:
        shape = list(array.shape)
        readonly = not array.flags.writeable
        if array.dtype.kind == "O":
            node = {_TAG: "ndarray", "dtype": "object", "shape": shape}
            node["items"] = self.items(array.reshape(-1).tolist() if array.size else [])
        elif array.dtype.kind in _RAW_KINDS and array.dtype.fields is None:
            descr, data = _encode_raw(array)
            node = {_TAG: "ndarray", "dtype": descr, "shape": shape, "data": data}
        else:
            raise _EncodeError(f"cannot encode an array of dtype {array.dtype}")
        if readonly:
            node["readonly"] = True
        return node

    def pyarray(self, values: pyarray.array) -> dict:
        if values.typecode not in _ARRAY_TYPECODES:
            raise _EncodeError(f"cannot encode an array.array of type code {values.typecode!r}")
        if sys.byteorder == "big" and values.itemsize > 1:  # pragma: no cover - big-endian hosts
            values = pyarray.array(values.typecode, values)
            values.byteswap()
        return {_TAG: "array", "typecode": values.typecode, "data": base64.b64encode(values.tobytes()).decode("ascii")}

    def generator(self, rng: np.random.Generator) -> dict:
        bit_generator = rng.bit_generator
        name = type(bit_generator).__name__
        if _BIT_GENERATORS.get(name) is not type(bit_generator):
            raise _EncodeError(f"cannot encode a Generator over {name}")
        return {_TAG: "generator", "bit_generator": name, "state": self.encode(bit_generator.state)}

    def type_node(self, cls: type) -> dict:
        if _BUILTIN_TYPES.get(cls.__name__) is cls:
            return {_TAG: "type", "builtin": cls.__name__}
        return {_TAG: "type", "cls": _class_path(cls)}

    def instance(self, obj: Any) -> dict:
        cls = type(obj)
        path = _class_path(cls)
        if isinstance(obj, (list, dict, set, tuple, str, int, float, bytes, np.ndarray)):
            raise _EncodeError(f"cannot encode {path}: subclasses of builtin containers are not supported")
        self.remember(obj)
        state = obj.__getstate__()
        node = {_TAG: "obj", "cls": path}
        if state is not None:
            try:
                node["state"] = self.encode(state)
            except _EncodeError as error:
                error.path.insert(0, f"<{cls.__qualname__}>")
                raise
        return node


# ------------------------------------------------------------------------------------------------
# Public API


def to_state(obj: Any) -> Any:
    """Encode an object graph into a JSON-safe structure.

    Parameters
    ----------
    obj
        Any combination of the types listed in the module docstring.

    Returns
    -------
    A structure of dicts with ``str`` keys, lists, ``str``, ``int``, finite ``float``, ``bool`` and
    ``None`` that ``json.dumps(..., allow_nan=False)`` accepts.

    Raises
    ------
    TypeError
        For a value of a type that is not supported, naming the path to it in the graph.

    Cost: O(size of the graph); NumPy arrays are copied once into base64.

    Examples
    --------
    >>> to_state({"w": 0.5, 3: float("-inf")})
    {'$': 'dict', 'items': [['w', 0.5], [3, {'$': 'float', 'value': '-inf'}]]}
    """
    return _Encoder().encode(obj)


def from_state(state: Any) -> Any:
    """Rebuild the object graph encoded by ``to_state``.

    Raises
    ------
    ValueError
        If the structure is malformed or names a class outside ``wnb_stream``.

    Examples
    --------
    >>> from_state({"$": "tuple", "items": [1, {"$": "float", "value": "nan"}]})
    (1, nan)
    """
    from ._persistence_decode import _Decoder  # (it imports this module's helpers)

    return _Decoder().decode(state)


def dumps(obj: Any, *, indent: int | None = None) -> str:
    """JSON text of ``obj`` in the envelope ``{"format": "wnb_stream", "version": 1, "state": ...}``.

    Examples
    --------
    >>> dumps([1, 2.5])
    '{"format":"wnb_stream","version":1,"state":[1,2.5]}'
    """
    document = {"format": FORMAT, "version": VERSION, "state": to_state(obj)}
    separators = (",", ":") if indent is None else (",", ": ")
    # ASCII: a lone surrogate ("\ud800") is a valid str the model accepts but no UTF-8 can encode;
    # escaped as \ud800 it round-trips (json.loads gives the same str back)
    return json.dumps(document, allow_nan=False, ensure_ascii=True, indent=indent, separators=separators)


def loads(text: str | bytes) -> Any:
    """Rebuild the object written by ``dumps``.

    Raises
    ------
    ValueError
        If the text is not JSON, is not a ``wnb_stream`` document, was written by a newer
        version of the format, or is malformed.

    Examples
    --------
    >>> loads('{"format": "wnb_stream", "version": 1, "state": {"$": "set", "items": [3]}}')
    {3}
    """
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("not a wnb_stream file: JSON nested too deeply") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not a wnb_stream file: invalid JSON ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise ValueError(f"not a wnb_stream file: format is {found!r}, expected {FORMAT!r}")
    version = document.get("version")
    if type(version) is not int or version < 1:
        raise ValueError(f"malformed wnb_stream file: version {version!r}")
    if version > VERSION:
        raise ValueError(
            f"this wnb_stream file has format version {version}, newer than the version {VERSION} "
            f"this library reads: upgrade wnb_stream to load it"
        )
    if "state" not in document:
        raise ValueError("malformed wnb_stream file: no state")
    try:
        return from_state(document["state"])
    except RecursionError:
        raise ValueError("malformed wnb_stream file: nested too deeply") from None


def _reject_constant(name: str):
    raise ValueError(f"malformed wnb_stream file: bare {name} (non-finite floats are written as float nodes)")


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` to ``path`` as a ``wnb_stream`` JSON file, atomically (see ``atomic_write``).

    The whole document is encoded before the file is touched, so an object that cannot be encoded
    raises ``TypeError`` and leaves any previous file as it was.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "state.json"
    >>> save({"n": 3, "mean": 0.25}, target)
    >>> load(target)
    {'n': 3, 'mean': 0.25}
    """
    atomic_write(path, dumps(obj).encode("utf-8"))


def load(path: str | os.PathLike) -> Any:
    """Read an object written by ``save``; ``ValueError`` if the file is not a valid one."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"not a wnb_stream file: {os.fspath(path)!r} is not UTF-8 text") from None
    return loads(text)
