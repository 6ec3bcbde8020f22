"""Plain values in JSON: the leaves of a saved model.

A saved model holds plain values only: ``None``, ``bool``, ``int``, ``str``, ``float`` (NaN and
±inf included), ``list``, ``tuple``, ``dict`` with ``str`` keys and NumPy arrays. There are no
instances, no class paths and nothing looked up by name, so decoding can never import a module or
run code named by the file: it only builds the types above.

Encoded form. ``None``, booleans, integers, strings and finite floats are themselves (JSON keeps
``1`` and ``1.0`` apart, so the Python type comes back; ``-0.0`` too); a list is a JSON array; a
``dict`` with ``str`` keys is a JSON object. Every other value is a JSON object tagged by its
``"$"`` key:

- ``{"$": "float", "value": "nan" | "inf" | "-inf"}`` (JSON has no non-finite numbers; a scalar
  NaN comes back as Python's NaN, without its sign or payload, which arrays keep);
- ``{"$": "tuple", "items": [...]}``;
- ``{"$": "dict", "items": [[key, value], ...]}`` for a dict whose keys include ``"$"``;
- ``{"$": "ndarray", "dtype": "<f8", "shape": [2, 3], "data": "<base64>"}``: the C-order
  little-endian bytes, so floats come back bit for bit (dtypes: bool, signed and unsigned
  integers, float32 and float64);
- ``{"$": "ndarray", "dtype": "object", "shape": [n], "items": [...]}``: an object array of
  plain scalars (and tuples of them), element by element.

NumPy scalars are written as the Python scalar they hold (``np.float64(0.5)`` as ``0.5``).

Examples
--------
>>> import numpy as np
>>> encode({"w": (1, float("nan")), "counts": np.array([[1.0, 2.0]])})
{'w': {'$': 'tuple', 'items': [1, {'$': 'float', 'value': 'nan'}]}, 'counts': {'$': 'ndarray', 'dtype': '<f8', 'shape': [1, 2], 'data': 'AAAAAAAA8D8AAAAAAAAAQA=='}}
>>> decode(encode({"counts": np.array([[1.0, 2.0]])}))["counts"].tolist()
[[1.0, 2.0]]
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

from .errors import ModelFileError, join, where

__all__ = ["encode", "decode", "encode_array", "decode_array", "describe", "DTYPES"]

_TAG = "$"
#: The array dtypes a saved model may hold, as written (little-endian, or "|" for one byte).
DTYPES = {
    "|b1": np.dtype(bool),
    "|i1": np.dtype(np.int8),
    "<i2": np.dtype("<i2"),
    "<i4": np.dtype("<i4"),
    "<i8": np.dtype("<i8"),
    "|u1": np.dtype(np.uint8),
    "<u2": np.dtype("<u2"),
    "<u4": np.dtype("<u4"),
    "<u8": np.dtype("<u8"),
    "<f4": np.dtype("<f4"),
    "<f8": np.dtype("<f8"),
}
_MAX_NDIM = 32


# ------------------------------------------------------------------------------------------------
# Encoding


def encode(value: Any, path: str = "") -> Any:
    """The JSON-safe form of a plain value (see the module docstring).

    Raises ``TypeError`` naming ``path`` for anything else (an instance, a set, bytes, a dict
    with a non-``str`` key...). Cost O(size); arrays are copied once into base64.
    """
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is int:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        return {_TAG: "float", "value": "nan" if value != value else ("inf" if value > 0 else "-inf")}
    if kind is list:
        return [encode(item, join(path, i)) for i, item in enumerate(value)]
    if kind is tuple:
        return {_TAG: "tuple", "items": [encode(item, join(path, i)) for i, item in enumerate(value)]}
    if kind is dict:
        for key in value:
            if type(key) is not str:
                raise TypeError(f"{where(path)}: cannot save a dict with a {type(key).__name__} key {key!r}")
        if _TAG in value:
            return {_TAG: "dict", "items": [[k, encode(v, join(path, k))] for k, v in value.items()]}
        return {k: encode(v, join(path, k)) for k, v in value.items()}
    if kind is np.ndarray:
        return encode_array(value, path)
    if isinstance(value, np.bool_ | np.integer | np.floating):
        return encode(value.item(), path)
    raise TypeError(
        f"{where(path)}: cannot save a value of type {kind.__module__}.{kind.__qualname__}; a saved "
        f"model holds None, bool, int, float, str, lists, tuples, dicts with str keys and NumPy arrays"
    )


def encode_array(array: np.ndarray, path: str = "") -> dict:
    """The tagged form of a NumPy array: dtype, shape and little-endian bytes in base64.

    Object arrays are written element by element (each a plain scalar or tuple).

    >>> encode_array(np.array([1, 2], dtype=np.int64))
    {'$': 'ndarray', 'dtype': '<i8', 'shape': [2], 'data': 'AQAAAAAAAAACAAAAAAAAAA=='}
    """
    shape = [int(d) for d in array.shape]
    if array.dtype == object:
        flat = array.reshape(-1)
        items = []
        for i, item in enumerate(flat.tolist()):
            if isinstance(item, list | dict | np.ndarray):
                raise TypeError(f"{where(join(path, i))}: an object array may only hold scalars and tuples, got a {type(item).__name__}")
            items.append(encode(item, join(path, i)))
        return {_TAG: "ndarray", "dtype": "object", "shape": shape, "items": items}
    dtype = array.dtype
    target = dtype if dtype.byteorder == "|" else dtype.newbyteorder("<")
    if target.str not in DTYPES:
        raise TypeError(f"{where(path)}: cannot save an array of dtype {dtype}; saved arrays are bool, integers or floats")
    data = np.ascontiguousarray(array, dtype=target).tobytes()
    return {_TAG: "ndarray", "dtype": target.str, "shape": shape, "data": base64.b64encode(data).decode("ascii")}


# ------------------------------------------------------------------------------------------------
# Decoding


def decode(node: Any, path: str = "") -> Any:
    """The plain value of a JSON-safe form written by ``encode``.

    Raises ``ModelFileError`` naming ``path`` for anything ``encode`` cannot have written. It
    builds the types listed in the module docstring and nothing else.
    """
    kind = type(node)
    if node is None or kind is bool or kind is str or kind is int:
        return node
    if kind is float:
        if not math.isfinite(node):  # the JSON parser refuses these: only a caller's own tree has them
            raise ModelFileError(f"{where(path)}: a non-finite float must be written as a float node")
        return node
    if kind is list:
        return [decode(item, join(path, i)) for i, item in enumerate(node)]
    if kind is not dict:
        raise ModelFileError(f"{where(path)}: not a saved value: {kind.__name__}")
    tag = node.get(_TAG)
    if tag is None:
        return {k: decode(v, join(path, k)) for k, v in node.items()}
    if tag == "float":
        _keys(node, ("value",), path)
        value = node["value"]
        if value not in ("nan", "inf", "-inf"):
            raise ModelFileError(f"{where(path)}: malformed float node {value!r}")
        return float(value)
    if tag == "tuple":
        _keys(node, ("items",), path)
        return tuple(decode(item, join(path, i)) for i, item in enumerate(_list(node["items"], path)))
    if tag == "dict":
        _keys(node, ("items",), path)
        out = {}
        for pair in _list(node["items"], path):
            if not isinstance(pair, list) or len(pair) != 2 or type(pair[0]) is not str:
                raise ModelFileError(f"{where(path)}: malformed dict node: an item is not a [str, value] pair")
            if pair[0] in out:
                raise ModelFileError(f"{where(path)}: malformed dict node: key {pair[0]!r} twice")
            out[pair[0]] = decode(pair[1], join(path, pair[0]))
        return out
    if tag == "ndarray":
        return decode_array(node, path)
    raise ModelFileError(f"{where(path)}: unknown value tag {tag!r}")


def decode_array(node: Any, path: str = "") -> np.ndarray:
    """The NumPy array of a tagged ``ndarray`` node: a fresh, writable array in native byte order.

    Checks the dtype against ``DTYPES`` (or ``"object"``), the shape (non-negative integers) and
    that the data fills the shape exactly (so a forged shape cannot allocate more than the file
    holds); boolean data must be bytes 0 or 1.
    """
    if not isinstance(node, dict) or node.get(_TAG) != "ndarray":
        found = "an array node with another tag" if isinstance(node, dict) and _TAG in node else describe(node)
        raise ModelFileError(f"{where(path)}: expected an array, got {found}")
    descr = node.get("dtype")
    if descr == "object":
        _keys(node, ("dtype", "shape", "items"), path)
        shape = _shape(node["shape"], path)
        items = _list(node["items"], path)
        if len(items) != math.prod(shape):
            raise ModelFileError(f"{where(path)}: {len(items)} items do not fill the shape {tuple(shape)}")
        array = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            value = decode(item, join(path, i))
            if isinstance(value, list | dict | np.ndarray):
                raise ModelFileError(f"{where(join(path, i))}: an object array may only hold scalars and tuples")
            array[i] = value
        return array.reshape(shape)
    _keys(node, ("dtype", "shape", "data"), path)
    if not isinstance(descr, str) or descr not in DTYPES:
        raise ModelFileError(f"{where(path)}: unsupported array dtype {descr!r}")
    dtype = DTYPES[descr]
    shape = _shape(node["shape"], path)
    data = node["data"]
    if not isinstance(data, str):
        raise ModelFileError(f"{where(path)}: array data must be a base64 string, got {describe(data)}")
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ModelFileError(f"{where(path)}: array data is not valid base64") from None
    expected = dtype.itemsize * math.prod(shape)
    if len(raw) != expected:
        raise ModelFileError(
            f"{where(path)}: array data has {len(raw)} bytes, expected {expected} for {dtype.name} {tuple(shape)}"
        )
    if dtype.kind == "b" and raw.translate(None, b"\x00\x01"):
        raise ModelFileError(f"{where(path)}: boolean array data must be bytes 0 or 1")
    return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="), copy=True).reshape(shape)


def _keys(node: dict, expected: tuple, path: str) -> None:
    found = set(node) - {_TAG}
    if found != set(expected):
        missing = sorted(set(expected) - found)
        extra = sorted(found - set(expected))
        detail = "; ".join(
            part for part in (f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else "") if part
        )
        raise ModelFileError(f"{where(path)}: malformed {node[_TAG]!r} node: {detail}")


def _list(value: Any, path: str) -> list:
    if not isinstance(value, list):
        raise ModelFileError(f"{where(path)}: expected a list of items, got {describe(value)}")
    return value


def _shape(value: Any, path: str) -> list[int]:
    if (
        not isinstance(value, list)
        or len(value) > _MAX_NDIM
        or not all(type(d) is int and 0 <= d < 1 << 62 for d in value)
    ):
        raise ModelFileError(f"{where(path)}: malformed array shape {value!r}")
    return value


def describe(value: Any) -> str:
    """A short name of a JSON node's type, for messages.

    >>> describe([1]), describe({"$": "tuple", "items": []}), describe(None)
    ('a list', "a 'tuple' node", 'null')
    """
    if isinstance(value, dict) and _TAG in value:
        return f"a {value[_TAG]!r} node"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer", float: "a float"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
