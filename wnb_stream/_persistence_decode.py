"""The decoder of ``persistence``: rebuilds an object graph from its JSON-safe state.

See ``wnb_stream.persistence`` for the encoded form and the safety rules the decoder keeps.
"""

from __future__ import annotations

import array as pyarray
import base64
import collections
import enum
import math
import random
import sys
from typing import Any

import numpy as np

from .persistence import (  # the encoded form's constants and helpers
    _ARRAY_TYPECODES,
    _BIT_GENERATORS,
    _BUILTIN_TYPES,
    _IDENTIFIER,
    _TAG,
    _array_dtype,
    _decode_raw,
    _is_namedtuple_class,
    _resolve_class,
    _shape,
)

# ------------------------------------------------------------------------------------------------
# Decoder


class _Decoder:
    """One ``from_state`` call: rebuilds the graph, numbering objects in the encoder's order."""

    def __init__(self):
        self.memo: list[Any] = []

    def remember(self, obj: Any) -> Any:
        self.memo.append(obj)
        return obj

    def decode(self, node: Any) -> Any:
        kind = type(node)
        if node is None or kind is bool or kind is str or kind is int:
            return node
        if kind is float:
            if not math.isfinite(node):
                raise ValueError("non-finite float outside a float node")
            return node
        if kind is list:
            out = self.remember([])
            out.extend(self.decode(v) for v in node)
            return out
        if kind is not dict:
            raise ValueError(f"malformed state: unexpected {kind.__name__}")
        tag = node.get(_TAG)
        if tag is None:
            out = self.remember({})
            for k, v in node.items():
                out[k] = self.decode(v)
            return out
        method = getattr(self, f"tag_{tag}", None) if isinstance(tag, str) and _IDENTIFIER.match(tag) else None
        if method is None:
            raise ValueError(f"malformed state: unknown tag {tag!r}")
        try:
            return method(node)
        except KeyError as error:
            raise ValueError(f"malformed {tag!r} node: missing {error}") from None

    def items(self, node: dict) -> list:
        values = node["items"]
        if not isinstance(values, list):
            raise ValueError(f"malformed {node[_TAG]!r} node: items is not a list")
        return [self.decode(v) for v in values]

    def pairs(self, node: dict, out: dict) -> dict:
        values = node["items"]
        if not isinstance(values, list):
            raise ValueError(f"malformed {node[_TAG]!r} node: items is not a list")
        for pair in values:
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError(f"malformed {node[_TAG]!r} node: an item is not a [key, value] pair")
            key = self.decode(pair[0])
            out[key] = self.decode(pair[1])
        return out

    # -- tags (one method per "$" value) ---------------------------------------------------------

    def tag_ref(self, node):
        index = node["id"]
        if type(index) is not int or not 0 <= index < len(self.memo):
            raise ValueError(f"malformed state: reference to unknown object {index!r}")
        return self.memo[index]

    def tag_float(self, node):
        value = node["value"]
        if value not in ("nan", "inf", "-inf"):
            raise ValueError(f"malformed float node {value!r}")
        return float(value)

    def tag_tuple(self, node):
        return tuple(self.items(node))

    def tag_frozenset(self, node):
        return frozenset(self.items(node))

    def tag_set(self, node):
        out = self.remember(set())
        out.update(self.items(node))
        return out

    def tag_dict(self, node):
        return self.pairs(node, self.remember({}))

    def tag_ordereddict(self, node):
        return self.pairs(node, self.remember(collections.OrderedDict()))

    def tag_counter(self, node):
        return self.pairs(node, self.remember(collections.Counter()))

    def tag_defaultdict(self, node):
        out = self.remember(collections.defaultdict())
        factory = node["factory"]
        out.default_factory = None if factory is None else self.tag_type(factory)
        return self.pairs(node, out)

    def tag_deque(self, node):
        maxlen = node["maxlen"]
        if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
            raise ValueError(f"malformed deque maxlen {maxlen!r}")
        out = self.remember(collections.deque(maxlen=maxlen))
        out.extend(self.items(node))
        return out

    def tag_bytes(self, node):
        data = node["data"]
        if not isinstance(data, str):
            raise ValueError("malformed bytes node")
        return base64.b64decode(data.encode("ascii"), validate=True)

    def tag_ndarray(self, node):
        shape = _shape(node["shape"])
        if node["dtype"] == "object":
            items = node["items"]
            if not isinstance(items, list) or len(items) != math.prod(shape):
                raise ValueError(f"malformed object array: items do not fill the shape {list(shape)}")
            array = self.remember(np.empty(shape, dtype=object))
            values = self.items(node)
            flat = array.reshape(-1)
            for i, value in enumerate(values):
                flat[i] = value
        else:
            array = self.remember(_decode_raw(node["dtype"], shape, node["data"]))
        if node.get("readonly", False):
            array.setflags(write=False)
        return array

    def tag_array(self, node):
        typecode, data = node["typecode"], node["data"]
        if typecode not in _ARRAY_TYPECODES or not isinstance(data, str):
            raise ValueError(f"malformed array.array node (type code {typecode!r})")
        values = self.remember(pyarray.array(typecode))
        raw = base64.b64decode(data.encode("ascii"), validate=True)
        if len(raw) % values.itemsize:
            raise ValueError(f"array.array data of {len(raw)} bytes for type code {typecode!r}")
        values.frombytes(raw)
        if sys.byteorder == "big" and values.itemsize > 1:  # pragma: no cover - big-endian hosts
            values.byteswap()
        return values

    def tag_npscalar(self, node):
        return _decode_raw(node["dtype"], (), node["data"])[()]

    def tag_dtype(self, node):
        if node["descr"] == "|O":
            return np.dtype(object)
        return _array_dtype(node["descr"])

    def tag_generator(self, node):
        name = node["bit_generator"]
        if name not in _BIT_GENERATORS:
            raise ValueError(f"unsupported bit generator {name!r}")
        bit_generator = _BIT_GENERATORS[name]()
        rng = self.remember(np.random.Generator(bit_generator))
        bit_generator.state = self.decode(node["state"])
        return rng

    def tag_randomstate(self, node):
        rng = self.remember(np.random.RandomState())
        rng.set_state(self.decode(node["state"]))
        return rng

    def tag_random(self, node):
        rng = self.remember(random.Random())
        state = self.decode(node["state"])
        # getstate() gives (version, tuple of ints, gauss_next); JSON tuples come back as tuples.
        rng.setstate(state)
        return rng

    def tag_type(self, node):
        if "builtin" in node:
            name = node["builtin"]
            if name not in _BUILTIN_TYPES:
                raise ValueError(f"refusing to load builtin {name!r}")
            return _BUILTIN_TYPES[name]
        return _resolve_class(node["cls"])

    def tag_enum(self, node):
        cls = _resolve_class(node["cls"])
        if not issubclass(cls, enum.Enum):
            raise ValueError(f"{node['cls']!r} is not an enum")
        try:
            return cls[node["name"]]
        except KeyError:
            raise ValueError(f"{node['cls']!r} has no member {node['name']!r}") from None

    def tag_namedtuple(self, node):
        cls = _resolve_class(node["cls"])
        if not _is_namedtuple_class(cls):
            raise ValueError(f"{node['cls']!r} is not a named tuple")
        return cls(*self.items(node))

    def tag_obj(self, node):
        cls = _resolve_class(node["cls"])
        if _is_namedtuple_class(cls) or issubclass(cls, enum.Enum):
            raise ValueError(f"malformed state: {node['cls']!r} cannot be an obj node")
        try:
            obj = cls.__new__(cls)
        except TypeError as error:
            raise ValueError(f"cannot create {node['cls']!r} without arguments: {error}") from None
        self.remember(obj)
        state = self.decode(node["state"]) if "state" in node else None
        _set_state(obj, state)
        return obj


def _set_state(obj: Any, state: Any) -> None:
    """Apply a ``__getstate__`` result the way pickle does (bypassing frozen ``__setattr__``)."""
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    if state is None:
        return
    slot_state = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slot_state = state
    if state:
        if not isinstance(state, dict):
            raise ValueError(f"malformed state for {type(obj).__qualname__}")
        obj.__dict__.update(state)
    if slot_state:
        if not isinstance(slot_state, dict):
            raise ValueError(f"malformed slot state for {type(obj).__qualname__}")
        for name, value in slot_state.items():
            object.__setattr__(obj, name, value)


