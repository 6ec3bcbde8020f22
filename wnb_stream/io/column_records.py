"""A table of columns (``io.columns``) and the list of records it holds, each way: for the
migration of version-8 files (``MIGRATIONS[8]``) and for tools and tests that edit one record.

>>> from wnb_stream import io
>>> from wnb_stream.summaries import Gaussian
>>> records = [io.to_record(Gaussian()), io.to_record(Gaussian())]
>>> table = records_to_table(records)
>>> table["count"], table["types"], table_to_records(table) == records
(2, ['Gaussian'], True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import values
from .columns import _BY_NAME, _is_record, _Plain, dump_table
from .errors import join, where
from .schema import Array, Bool, Float, Int, Kind, Optional, Str, Struct

__all__ = ["records_to_table", "table_to_records"]


def records_to_table(records: list) -> dict:
    """The table of the JSON ``records`` of an older file (a list of records as ``to_record``
    writes them): each record decoded to its live values, then written as ``dump_table`` does.
    ``ValueError`` or ``TypeError`` (or ``ModelFileError``) for a malformed record."""
    return dump_table([_plain(record, join("", i)) for i, record in enumerate(records)])


def _plain(node: Any, path: str) -> _Plain:
    if not isinstance(node, dict) or set(node) != {"type", "params", "state"} or node["type"] not in _BY_NAME:
        raise ValueError(f"{where(path)}: not a record")
    schema = _BY_NAME[node["type"]].schema
    return _Plain(node["type"], _plain_fields(schema.params, node["params"], path), _plain_fields(schema.state, node["state"], path))


def _plain_fields(fields: dict, node: Any, path: str) -> dict:
    if not isinstance(node, dict) or set(node) != set(fields):
        raise ValueError(f"{where(path)}: the fields differ from the schema's")
    return {name: _plain_value(kind, node[name], join(path, name)) for name, kind in fields.items()}


def _plain_value(kind: Kind, node: Any, path: str) -> Any:
    if isinstance(kind, Optional):
        return None if node is None else _plain_value(kind.kind, node, path)
    if isinstance(kind, Struct):
        return _plain_fields(kind.fields, node, path)
    if _is_record(kind):
        return _plain(node, path)
    if isinstance(kind, Array):
        return values.decode_array(node, path)
    if isinstance(kind, Float):
        return values.decode(node, path)
    if isinstance(kind, Int | Bool | Str):
        return node
    return kind.load(node, path, {})


def table_to_records(node: dict) -> list:
    """The JSON records (as ``to_record`` writes them) of a JSON table written by ``dump_table``:
    the inverse of ``records_to_table``, value for value. Nothing is checked (a malformed table
    raises whatever its first malformed part does); for tools and tests that edit one record."""
    type_of = values.decode_array(node["type_of"]).tolist()
    out: list = [None] * node["count"]
    for g, name in enumerate(node["types"]):
        members = [i for i, t in enumerate(type_of) if t == g]
        schema = _BY_NAME[name].schema
        group = node["groups"][g]
        params = {f: _column_items(k, group["params"][f], len(members)) for f, k in schema.params.items()}
        state = {f: _column_items(k, group["state"][f], len(members)) for f, k in schema.state.items()}
        for j, i in enumerate(members):
            out[i] = {"type": name, "params": {f: c[j] for f, c in params.items()}, "state": {f: c[j] for f, c in state.items()}}
    return out


def _column_items(kind: Kind, node: Any, n: int) -> list:
    """The JSON value of each of the ``n`` items of a column."""
    if isinstance(kind, Array):
        shapes = values.decode_array(node["shapes"])
        data = values.decode_array(node["data"])
        sizes = np.prod(shapes, axis=1).astype(np.int64) if shapes.shape[1] else np.ones(n, dtype=np.int64)
        ends = np.cumsum(sizes)
        return [values.encode_array(data[e - s : e].reshape(shape.tolist())) for s, e, shape in zip(sizes.tolist(), ends.tolist(), shapes)]
    if isinstance(kind, Float):
        return [values.encode(v) for v in values.decode_array(node).tolist()]
    if isinstance(kind, Int | Bool | Str):
        return list(node)
    if isinstance(kind, Optional):
        present = values.decode_array(node["present"]).tolist()
        inner = iter(_column_items(kind.kind, node["values"], sum(present)))
        return [next(inner) if p else None for p in present]
    if isinstance(kind, Struct):
        parts = {f: _column_items(k, node[f], n) for f, k in kind.fields.items()}
        return [{f: parts[f][i] for f in kind.fields} for i in range(n)]
    if _is_record(kind):
        return table_to_records(node)
    index = values.decode_array(node["index"]).tolist()
    return [node["distinct"][d] for d in index]
