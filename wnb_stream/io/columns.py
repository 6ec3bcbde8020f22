"""Many records of a few types, stored as columns (format version 9): the variables of a model.

A wide model holds tens of thousands of variables, each a record holding its summary's record.
Written one record each, a file is a million JSON objects and hundreds of thousands of base64
arrays, and a load spends its time on per-record work. ``Columns`` stores such a list as a
*table* instead: the records grouped by type, and each field of a group one column across the
group's records, so that a load decodes each column once and checks it in a few NumPy calls.

Table (``docs/saved-model.md``, "Columns")::

    {"count": N, "types": ["Variable"], "type_of": <int64 (N,)>, "groups": [{"params": {...}, "state": {...}}]}

``type_of[i]`` is item i's type (an index into ``types``); group ``g`` holds the items of type
``types[g]``, in their order. A group's ``params`` and ``state`` hold one *column* per field of
the type's schema, by the field's kind:

- ``Array``: ``{"shapes": <int64 (m, ndim)>, "data": <dtype (total,)>}``, each item's array in
  C order, one after the other;
- ``Float``: a float64 array ``(m,)``; ``Int``, ``Bool``, ``Str``: a JSON list of ``m`` values;
- ``Optional``: ``{"present": <bool (m,)>, "values": <column of the present items>}``;
- ``Struct``: a JSON object of its fields' columns;
- ``Record``: a table of the ``m`` child records;
- any other kind (keys, lists of keys, plain values): ``{"distinct": [...], "index": <int64
  (m,)>}``, the distinct values as the kind writes them and each item's index among them.

Loading checks every column against the field's kind over all items at once (dtypes, shapes
against the symbols of each item's record, ranges, strict orders, finiteness), builds each
record's object from its slices (views of the decoded columns) with the type's ``build``, and
asks for each object's ``problems()``. A type may register a ``screen``: a vectorised check
over the group's columns that marks the items whose invariants may be broken (a superset of
them, with a margin for rounding), so that ``problems()`` is asked of those items only; the
decision is the one ``problems()`` takes item by item. Errors name the item as a list of
records would: ``registry.variables[3].summary.g: …``.

A type without schema ``checks`` may also define ``build_columns(params, state)`` (a classmethod
of its own class, not inherited): the objects its ``build`` gives, item for item, from each
field's per-item values (``params[field][k]``), without a ``Fields`` per item. Where it raises,
the items are built one by one, so that the item its ``build`` refuses is named as before.
"""

from __future__ import annotations

import functools
import json
import operator
from typing import Any, Callable

import numpy as np

from . import values
from .errors import ModelFileError, join, where
from .registry import _BY_CLASS, _BY_NAME, Entry, check_rebuilt
from .schema import Array, Bool, Fields, Float, Int, Kind, Optional, Schema, Str, Struct
from .values import describe

__all__ = ["Columns", "Group", "ArrayColumn", "dump_table", "load_table"]

_TABLE_KEYS = ("count", "types", "type_of", "groups")
_SIMPLE = frozenset({str, int, bool})
_UNBOUND = -1


def _fail(path: str, message: str):
    raise ModelFileError(f"{where(path)}: {message}")


def _keys(node: Any, expected: tuple, path: str, what: str) -> None:
    if not isinstance(node, dict) or "$" in node:
        _fail(path, f"expected {what}, got {describe(node)}")
    for key in expected:
        if key not in node:
            _fail(join(path, key), "missing field")
    for key in node:
        if key not in expected:
            _fail(join(path, key), "unexpected field")


# ------------------------------------------------------------------------------------------------
# Writing


class _Plain:
    """A record given as its live ``params`` and ``state`` (the records of an older file, decoded)."""

    __slots__ = ("name", "params", "state")

    def __init__(self, name: str, params: dict, state: dict):
        self.name, self.params, self.state = name, params, state


def _record_type(item: Any, path_of: Callable[[int], str], i: int, names: tuple):
    """The registered record type of an object or a ``_Plain`` record (item ``i``, at ``path_of(i)``);
    ``TypeError`` for an object of no registered type, or of one outside ``names`` (when given)."""
    if type(item) is _Plain:
        return _BY_NAME[item.name]
    found = _BY_CLASS.get(type(item))
    if found is None:
        kind = type(item)
        raise TypeError(f"{where(path_of(i))}: cannot save a {kind.__module__}.{kind.__qualname__}: no record type is registered for it")
    if names and found.name not in names:
        raise TypeError(f"{where(path_of(i))}: expected a {' or '.join(names)}, got a {found.name}")
    return found


def _parts(item: Any, found) -> tuple[str, dict, dict]:
    """The type name, params and state (live values) of an object or a ``_Plain`` record whose
    registered record type is ``found`` (``_record_type``)."""
    if type(item) is _Plain:
        return found.name, item.params, item.state
    params = found.params(item) if found.params is not None else {name: getattr(item, name) for name in found.schema.params}
    if found.lock is not None:
        with found.lock(item):
            return found.name, params, found.state(item)
    return found.name, params, found.state(item)


def dump_table(items: list, path: str = "", names: tuple = (), path_of: Callable[[int], str] | None = None) -> dict:
    """The JSON table of ``items`` (objects of the registered types ``names``; any when empty).

    ``path_of(i)``: item i's path in messages (default ``path[i]``). ``TypeError`` (naming the
    item's path) for an item that cannot be saved. Cost O(size), with a few Python steps per
    item and field; a type whose class defines ``record_columns(objects)`` (its own, not a base
    class's, and no lock) gives its state fields as one list per field over its items.
    """
    if path_of is None:
        path_of = lambda i: join(path, i)  # noqa: E731 (paths are made only for a message)
    types: list[str] = []
    type_of = np.empty(len(items), dtype=np.int64)
    members: dict[str, list] = {}
    first = type(items[0]) if items else None
    if first is not None and first is not _Plain and set(map(type, items)) == {first}:  # (one class: one look-up)
        types.append(_record_type(items[0], path_of, 0, names).name)
        type_of[:] = 0
        members[types[0]] = list(range(len(items)))
        items_left: Any = ()
    else:
        items_left = items
    for i, item in enumerate(items_left):
        name = _record_type(item, path_of, i, names).name
        group = members.get(name)
        if group is None:
            group = members[name] = []
            types.append(name)
        type_of[i] = types.index(name) if len(types) > 1 else 0
        group.append(i)
    groups = []
    for name in types:
        found = _BY_NAME[name]
        at = members[name]
        objects = [items[i] for i in at]
        if "record_columns" in found.cls.__dict__ and found.lock is None and set(map(type, objects)) == {found.cls}:
            params = {f: [getattr(item, f) for item in objects] for f in found.schema.params} if found.params is None else _by_field([found.params(item) for item in objects], found.schema.params, at, path_of)
            groups.append({"params": _dump_columns(found.schema.params, params, path_of, at), "state": _dump_columns(found.schema.state, found.cls.record_columns(objects), path_of, at)})
            continue
        rows = [_parts(item, found) for item in objects]  # (a group's items are of the type ``found``)
        groups.append(
            {
                "params": _dump_fields(found.schema.params, [r[1] for r in rows], at, path_of),
                "state": _dump_fields(found.schema.state, [r[2] for r in rows], at, path_of),
            }
        )
    return {"count": len(items), "types": types, "type_of": values.encode_array(type_of), "groups": groups}


def _by_field(dicts: list, fields: dict, at: list, path_of: Callable[[int], str]) -> dict:
    """The per-field lists of values of the dicts ``dicts`` (items ``at``), checked to hold exactly ``fields``."""
    _check_names(fields, dicts, at, path_of)
    return {f: [d[f] for d in dicts] for f in fields}


def _dump_columns(fields: dict, columns: dict, path_of: Callable[[int], str], at: list) -> dict:
    """The columns of ``fields`` from one list of live values per field (items ``at``)."""
    if columns.keys() != set(fields):
        raise ValueError(f"the state columns {sorted(columns)} are not the fields {sorted(fields)}")
    return {f: _dump_column(kind, columns[f], _within(path_of, at, f)) for f, kind in fields.items()}


def _dump_fields(fields: dict, dicts: list, at: list, path_of: Callable[[int], str]) -> dict:
    """The columns of ``fields`` over the dicts of live values ``dicts`` (items ``at``)."""
    _check_names(fields, dicts, at, path_of)
    return {f: _dump_column(kind, [d[f] for d in dicts], _within(path_of, at, f)) for f, kind in fields.items()}


def _check_names(fields: dict, dicts: list, at: list, path_of: Callable[[int], str]) -> None:
    names = set(fields)
    for k, value in enumerate(dicts):
        if value.keys() != names:
            missing = sorted(names - set(value))
            raise ValueError(f"{where(path_of(at[k]))}: the state has no field {missing[0]!r}" if missing else f"{where(path_of(at[k]))}: unexpected fields {sorted(set(value) - names)}")


def _within(path_of: Callable[[int], str], at: list | None, field: str) -> Callable[[int], str]:
    """The path of ``field`` of the k-th value (item ``at[k]``; item k when ``at`` is None)."""
    if at is None:
        return lambda k: join(path_of(k), field)
    return lambda k: join(path_of(at[k]), field)


_DTYPE, _NDIM = operator.attrgetter("dtype"), operator.attrgetter("ndim")


def _dump_column(kind: Kind, items: list, path_of: Callable[[int], str]) -> Any:
    """The column of ``kind`` holding the live values ``items`` (the k-th at ``path_of(k)``)."""
    if isinstance(kind, Array):
        dtype = np.dtype(kind.dtype)
        arrays = items if set(map(type, items)) <= {np.ndarray} else [np.asarray(value) for value in items]
        ndim = len(kind.shape)
        # (the common case: nothing to cast or refuse; map and set, not a Python step per item)
        sound = set(map(_DTYPE, arrays)) <= {dtype} and set(map(_NDIM, arrays)) <= {ndim}
        if not sound:
            arrays = list(arrays)
        for k, array in enumerate(() if sound else arrays):
            if array.dtype != dtype:
                if array.size and not np.can_cast(array.dtype, dtype, "same_kind"):
                    raise TypeError(f"{where(path_of(k))}: expected an array of {dtype.name}, got {array.dtype.name}")
                arrays[k] = array = array.astype(dtype)
            if array.ndim != ndim:
                raise ValueError(f"{where(path_of(k))}: expected {ndim} dimensions, got shape {array.shape}")
        if ndim == 1:  # (one length per item: no tuple per item)
            shapes = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays)).reshape(len(items), 1)
        else:
            shapes = np.array([a.shape for a in arrays], dtype=np.int64).reshape(len(items), ndim)
        data = np.concatenate(arrays, axis=None) if arrays else np.zeros(0, dtype=dtype)
        return {"shapes": values.encode_array(shapes), "data": values.encode_array(data.astype(dtype, copy=False))}
    if isinstance(kind, Float):
        if not set(map(type, items)) <= {float, int}:
            for k, value in enumerate(items):
                kind.dump(value, path_of(k))  # (the type check of the kind: a NumPy number passes)
        return values.encode_array(np.array(items, dtype=np.float64).reshape(len(items)))
    if isinstance(kind, Int | Bool | Str):
        plain = {Int: int, Bool: bool, Str: str}[type(kind)]
        if all(type(value) is plain for value in items):
            return list(items)
        return [kind.dump(value, path_of(k)) for k, value in enumerate(items)]
    if isinstance(kind, Optional):
        kept = [k for k, value in enumerate(items) if value is not None]
        present = np.zeros(len(items), dtype=bool)
        present[kept] = True
        return {"present": values.encode_array(present), "values": _dump_column(kind.kind, [items[k] for k in kept], lambda j: path_of(kept[j]))}
    if isinstance(kind, Struct):
        for k, value in enumerate(items):
            if not isinstance(value, dict) or set(value) != set(kind.fields):
                given = sorted(value) if isinstance(value, dict) else type(value).__name__
                raise ValueError(f"{where(path_of(k))}: expected the fields {list(kind.fields)}, got {given}")
        return {f: _dump_column(k, [v[f] for v in items], _within(path_of, None, f)) for f, k in kind.fields.items()}
    if _is_record(kind):
        return dump_table(items, "", kind.names, path_of)
    distinct: list = []
    seen: dict[str, int] = {}
    index = np.empty(len(items), dtype=np.int64)
    plain_key = type(kind).__name__ == "Key"
    written: dict = {}  # lists of str, int and bool (the class labels of each summary): dumped once
    for k, value in enumerate(items):
        if plain_key and type(value) is str:  # a feature name: written as itself
            node, text = value, "str:" + value
        elif type(value) is list and _SIMPLE.issuperset(types := tuple(map(type, value))):
            cached = (types, tuple(value))
            if cached not in written:
                node = kind.dump(value, path_of(k))
                written[cached] = (node, json.dumps(node, sort_keys=True, separators=(",", ":")))
            node, text = written[cached]
        else:
            node = kind.dump(value, path_of(k))
            text = json.dumps(node, sort_keys=True, separators=(",", ":"))  # (never starts with "str:")
        at = seen.get(text)
        if at is None:
            at = seen[text] = len(distinct)
            distinct.append(node)
        index[k] = at
    return {"distinct": distinct, "index": values.encode_array(index)}


def _is_record(kind: Kind) -> bool:
    return type(kind).__name__ == "Record" and hasattr(kind, "names")


# ------------------------------------------------------------------------------------------------
# Reading


class ArrayColumn:
    """An array field across a group's items: ``data`` (total,) the items' elements one after the
    other, ``shapes (m, ndim)``, ``sizes (m,)`` and ``starts (m,)`` (offset of each item's first
    element in ``data``)."""

    __slots__ = ("data", "shapes", "sizes", "starts")

    def __init__(self, data: np.ndarray, shapes: np.ndarray, sizes: np.ndarray, starts: np.ndarray):
        self.data, self.shapes, self.sizes, self.starts = data, shapes, sizes, starts

    def item(self, k: int) -> np.ndarray:
        """Item ``k``'s array: a view of ``data``."""
        a = int(self.starts[k])
        return self.data[a : a + int(self.sizes[k])].reshape(self.shapes[k].tolist())

    def items(self) -> list:
        """Every item's array, a view of ``data`` (slices where the trailing shape is shared)."""
        n = len(self.sizes)
        if not n:
            return []
        ndim = self.shapes.shape[1]
        if ndim == 1:
            data = self.data
            return [data[a:b] for a, b in zip(self.starts.tolist(), (self.starts + self.sizes).tolist())]
        if ndim == 2:
            data = self.data
            return [data[a : a + r * w].reshape(r, w) for a, r, w in zip(self.starts.tolist(), self.shapes[:, 0].tolist(), self.shapes[:, 1].tolist())]
        return [self.item(k) for k in range(n)]

    def segment_ids(self) -> np.ndarray:
        """``(total,)`` the item each element of ``data`` belongs to."""
        return np.repeat(np.arange(len(self.sizes)), self.sizes)


class Group:
    """The loaded columns of the ``m`` items of one record type in a table, for its ``screen``.

    ``column(name)`` is a field's column: an ``ArrayColumn``, a NumPy array (``Float``; ``Int``,
    ``Bool`` as int64/bool arrays where they fit), a list (``Str`` and the other kinds), for
    ``Optional`` fields ``(present (m,), column of the present items)``, for ``Record`` fields
    the list of child objects; ``objects`` are the rebuilt items; ``scope`` each symbol's size
    per item (−1: unbound)."""

    def __init__(self, name: str, m: int):
        self.name, self.m = name, m
        self.columns: dict[str, Any] = {}
        self.scope: dict[str, np.ndarray] = {}
        self.objects: list = []

    def column(self, name: str) -> Any:
        return self.columns[name]

    def size(self, symbol: str) -> np.ndarray:
        return self.scope[symbol]


class _Context:
    """Where a group's items are: ``paths[k]`` the path of item k (its record)."""

    def __init__(self, group: Group, paths: list):
        self.group, self.paths = group, paths

    def bind(self, symbol: str, sizes: np.ndarray, rows: np.ndarray | None, path_of: Callable[[int], str], what: str) -> None:
        """Bind ``symbol`` to ``sizes`` for the items ``rows`` (None: all), or check they agree."""
        scope = self.group.scope
        known = scope.get(symbol)
        if known is None:
            known = scope[symbol] = np.full(self.group.m, _UNBOUND, dtype=np.int64)
        target = known if rows is None else known[rows]
        clash = (target != _UNBOUND) & (target != sizes)
        if clash.any():
            i = int(clash.nonzero()[0][0])
            _fail(path_of(i), f"expected {what} {int(target[i])} ({symbol}), got {int(sizes[i])}")
        if rows is None:
            np.copyto(known, sizes, where=known == _UNBOUND)
        else:
            known[rows] = np.where(target == _UNBOUND, sizes, target)

    def resolve(self, bound, rows: np.ndarray | None, path: str):
        """A bound: a number, or the sizes of a symbol for the items ``rows``."""
        if isinstance(bound, str):
            sizes = self.group.scope.get(bound)
            if sizes is None:
                raise RuntimeError(f"schema error: symbol {bound!r} is used before a field binds it")
            return sizes if rows is None else sizes[rows]
        return bound


class Columns(Kind):
    """A list of records of the types ``names`` (any registered type when none), written as a
    table of columns (see the module docstring); ``length`` binds the number of items."""

    def __init__(self, *names: str, length: str | None = None, doc: str = ""):
        self.names, self.length, self.doc = names, length, doc

    def dump(self, value, path):
        return dump_table(list(value), path, self.names)

    def load(self, node, path, scope):
        items = load_table(node, path, self.names)
        if self.length is not None:
            known = scope.get(self.length)
            if known is None:
                scope[self.length] = len(items)
            elif known != len(items):
                _fail(path, f"expected length {known} ({self.length}), got {len(items)}")
        return items

    def text(self):
        return "columns of records (" + (" or ".join(self.names) if self.names else "any type") + ")" + (f" (length {self.length})" if self.length else "")

    def __repr__(self) -> str:
        return f"Columns({', '.join(map(repr, self.names))})"


def load_table(node: Any, path: str = "", names: tuple = (), paths: list | None = None) -> list:
    """The objects of a JSON table, checked as the module docstring says.

    ``paths``: each item's path in messages (default: ``path[i]``). ``ModelFileError`` naming the
    item and field for anything its type's schema, checks or invariants refuse.
    """
    _keys(node, _TABLE_KEYS, path, "a table of records")
    count = node["count"]
    if type(count) is not int or count < 0:
        _fail(join(path, "count"), f"expected a count >= 0, got {describe(count)}")
    types = node["types"]
    if not isinstance(types, list) or len(set(map(repr, types))) != len(types):
        _fail(join(path, "types"), "expected a list of distinct record type names")
    for i, name in enumerate(types):
        if not isinstance(name, str) or name not in _BY_NAME:
            _fail(join(join(path, "types"), i), f"unknown record type {name!r}")
        if names and name not in names:
            _fail(join(join(path, "types"), i), f"expected a record of type {' or '.join(names)}, got {name!r}")
    type_of = _int_array(node["type_of"], join(path, "type_of"), (count,))
    if count and (type_of.min() < 0 or type_of.max() >= len(types)):
        _fail(join(path, "type_of"), f"values must be in [0, {len(types)})")
    groups = node["groups"]
    if not isinstance(groups, list) or len(groups) != len(types):
        _fail(join(path, "groups"), f"expected a list of {len(types)} groups (one per type)")
    if paths is None:
        paths = _Paths(functools.partial(join, path), count)
    out: list = [None] * count
    for g, name in enumerate(types):
        members = (type_of == g).nonzero()[0].tolist()
        if not members:
            _fail(join(join(path, "types"), g), "a type without items")
        picked = paths if len(types) == 1 else _Paths(lambda k, members=members: paths[members[k]], len(members))
        objects = _load_group(_BY_NAME[name], groups[g], join(join(path, "groups"), g), picked)
        for i, obj in zip(members, objects):
            out[i] = obj
    return out


class _Paths:
    """Items' paths, each made when asked (a message names it): ``paths[k]`` is ``path_of(k)``."""

    __slots__ = ("path_of", "n")

    def __init__(self, path_of: Callable[[int], str], n: int):
        self.path_of, self.n = path_of, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: int) -> str:
        if not 0 <= k < self.n:
            raise IndexError(k)
        return self.path_of(k)


def _int_array(node: Any, path: str, shape: tuple) -> np.ndarray:
    array = values.decode_array(node, path)
    if array.dtype != np.int64 or array.shape != shape:
        _fail(path, f"expected int64 {shape}, got {array.dtype.name} {array.shape}")
    return array


def _load_group(found: Entry, node: Any, path: str, paths: list) -> list:
    """The objects of one group: columns loaded and checked, objects built, invariants asked."""
    schema: Schema = found.schema
    _keys(node, ("params", "state"), path, "a group of columns")
    m = len(paths)
    group = Group(found.name, m)
    context = _Context(group, paths)
    params_columns = _load_fields(schema.params, node["params"], join(path, "params"), context, None)
    state_columns = _load_fields(schema.state, node["state"], join(path, "state"), context, None)
    objects = None
    if "build_columns" in found.cls.__dict__ and not schema.checks:  # the type's own, not a base class's
        try:
            objects = found.cls.build_columns(params_columns, state_columns)
        except ModelFileError:
            raise
        except Exception:  # an item its build refuses: found (and named) one by one below
            objects = None
    if objects is None:
        objects = _build_each(found, params_columns, state_columns, group, paths)
    group.objects = objects
    screen = getattr(found.cls, "screen_columns", None)
    if screen is not None:
        try:
            suspects = np.asarray(screen(group), dtype=bool)
        except Exception:  # values the screen cannot even compare: each item is asked
            suspects = np.ones(m, dtype=bool)
    else:
        suspects = np.ones(m, dtype=bool)
    for k in suspects.nonzero()[0].tolist():
        check_rebuilt(objects[k], paths[k], found.name)
    return objects


def _build_each(found: Entry, params_columns: dict, state_columns: dict, group: Group, paths: list) -> list:
    """The objects of a group built one by one: each item's ``Fields``, the schema's checks, then
    the type's ``build``."""
    schema, m = found.schema, group.m
    symbols = list(group.scope)
    params_names, state_names = list(params_columns), list(state_columns)
    objects = []
    for k, params_row, state_row, sizes in zip(range(m), _rows(params_columns), _rows(state_columns), _rows(group.scope, tolist=True)):
        params = dict(zip(params_names, params_row))
        state = dict(zip(state_names, state_row))
        fields = Fields(found.name, paths[k], params, state, {s: size for s, size in zip(symbols, sizes) if size != _UNBOUND})
        for check in schema.checks:
            try:
                check(fields)
            except ModelFileError:
                raise
            except Exception as error:
                _fail(paths[k], f"cannot check the record: {type(error).__name__}: {error}")
        try:
            obj = found.build(fields)
        except ModelFileError:
            raise
        except Exception as error:
            raise ModelFileError(f"{where(paths[k])}: cannot rebuild {found.name}: {error}") from error
        objects.append(obj)
    return objects


def _rows(columns: dict, tolist: bool = False):
    """The items' tuples of values, one per item, of a dict of columns (endless empty tuples when
    there are no columns: ``zip`` with ``range(m)`` stops them)."""
    if not columns:
        return iter(tuple, None)
    return zip(*(column.tolist() if tolist else column for column in columns.values()))


def _load_fields(fields: dict, node: Any, path: str, context: _Context, rows: np.ndarray | None) -> dict:
    """Each field's per-item values (a list, or an indexable column), checked."""
    _keys(node, tuple(fields), path, "an object of columns")
    out = {}
    for name, kind in fields.items():
        out[name] = _load_column(kind, node[name], join(path, name), context, rows, name)
    return out


def _item_path(context: _Context, rows: np.ndarray | None, field: str) -> Callable[[int], str]:
    """The path of ``field`` of the i-th item of ``rows`` (of the group when None)."""
    if rows is None:
        return lambda i: join(context.paths[i], field)
    return lambda i: join(context.paths[int(rows[i])], field)


def _load_column(kind: Kind, node: Any, path: str, context: _Context, rows: np.ndarray | None, field: str) -> Any:
    """The values of a column for the items ``rows`` (all when None), as a list or an indexable."""
    n = context.group.m if rows is None else len(rows)
    path_of = _item_path(context, rows, field)
    top = rows is None
    if isinstance(kind, Array):
        column = _load_array(kind, node, path, context, rows, path_of, n)
        if top:
            context.group.columns[field] = column
        return column.items()
    if isinstance(kind, Float):
        array = values.decode_array(node, path)
        if array.dtype != np.float64 or array.shape != (n,):
            _fail(path, f"expected a float64 column of shape ({n},), got {array.dtype.name} {array.shape}")
        _check_floats(array, kind.finite, kind.nan, path_of, np.arange(n))
        _check_bounds(array, kind, context, rows, path_of, np.arange(n))
        if top:
            context.group.columns[field] = array
        return array.tolist()
    if isinstance(kind, Int | Bool | Str):
        if not isinstance(node, list) or len(node) != n:
            _fail(path, f"expected a list of {n} values, got {describe(node)}" + (f" of {len(node)}" if isinstance(node, list) else ""))
        plain = _plain_column(kind, node)
        out = list(node) if plain else []
        symbols = context.group.scope
        for i, item in enumerate(() if plain else node):
            k = i if rows is None else int(rows[i])
            scope = {s: int(sizes[k]) for s, sizes in symbols.items() if sizes[k] != _UNBOUND} if symbols else {}
            value = kind.load(item, path_of(i), scope)
            for s, size in scope.items():
                if s not in symbols:
                    symbols[s] = np.full(context.group.m, _UNBOUND, dtype=np.int64)
                symbols[s][k] = size
            out.append(value)
        if top:
            context.group.columns[field] = np.array(out) if isinstance(kind, Bool | Int) and _fits(out) else out
        return out
    if isinstance(kind, Optional):
        _keys(node, ("present", "values"), path, "an optional column")
        present = values.decode_array(node["present"], join(path, "present"))
        if present.dtype != np.bool_ or present.shape != (n,):
            _fail(join(path, "present"), f"expected a bool column of shape ({n},)")
        kept = present.nonzero()[0]
        inner_rows = kept if rows is None else rows[kept]
        inner = _load_column(kind.kind, node["values"], join(path, "values"), context, inner_rows, field)
        out = [None] * n
        for i, value in zip(kept.tolist(), inner):
            out[i] = value
        if top:
            context.group.columns[field] = (present, inner)
        return out
    if isinstance(kind, Struct):
        _keys(node, tuple(kind.fields), path, "an object of columns")
        parts = {f: _load_column(k, node[f], join(path, f), context, rows, join(field, f)) for f, k in kind.fields.items()}
        return [{f: parts[f][i] for f in kind.fields} for i in range(n)]
    if _is_record(kind):
        children = load_table(node, path, kind.names, _Paths(path_of, n))
        if top:
            context.group.columns[field] = children
        return children
    _keys(node, ("distinct", "index"), path, "a column of distinct values")
    distinct = node["distinct"]
    if not isinstance(distinct, list):
        _fail(join(path, "distinct"), f"expected a list, got {describe(distinct)}")
    index = _int_array(node["index"], join(path, "index"), (n,))
    if n and (index.min() < 0 or index.max() >= len(distinct)):
        _fail(join(path, "index"), f"values must be in [0, {len(distinct)})")
    loaded, bound = [], []
    plain_key = type(kind).__name__ == "Key"
    for d, item in enumerate(distinct):
        scope: dict = {}
        loaded.append(item if plain_key and type(item) is str else kind.load(item, join(join(path, "distinct"), d), scope))
        bound.append(scope)
    for symbol in {s for scope in bound for s in scope}:
        sizes = np.array([scope.get(symbol, _UNBOUND) for scope in bound], dtype=np.int64)[index]
        context.bind(symbol, sizes, rows, path_of, "length")
    # each item's own copy (``_fresh``): a list of no lists is copied by ``list``, the rest shared
    flat = [type(v) is list and not any(type(x) is list for x in v) for v in loaded]
    out = [list(loaded[d]) if flat[d] else _fresh(loaded[d]) for d in index.tolist()]
    if top:
        context.group.columns[field] = out
    return out


def _plain_column(kind: Kind, node: list) -> bool:
    """Whether every item of an ``Int``, ``Bool`` or ``Str`` column loads as itself, with no symbol
    to bind or read: the column is then the list as it is, with no Python step (and no path) per
    item. False leaves the items to ``kind.load`` one by one, which names the first bad one."""
    if isinstance(kind, Str):
        return all(type(item) is str for item in node) and (kind.choices is None or set(node) <= set(kind.choices))
    if isinstance(kind, Bool):
        return all(type(item) is bool for item in node)
    bounds = (kind.low, kind.high, kind.below)
    if kind.binds is not None or not all(b is None or type(b) in (int, float) for b in bounds) or not all(type(item) is int for item in node):
        return False
    if not node:
        return True
    least, most = min(node), max(node)
    return (kind.low is None or least >= kind.low) and (kind.high is None or most <= kind.high) and (kind.below is None or most < kind.below)


def _fits(values_: list) -> bool:
    return all(type(v) is bool for v in values_) or all(type(v) is int and -(1 << 62) < v < 1 << 62 for v in values_)


def _fresh(value: Any) -> Any:
    """An item's own copy of a shared distinct value (lists are mutable)."""
    if type(value) is list:
        return [_fresh(v) for v in value]
    return value


def _load_array(kind: Array, node: Any, path: str, context: _Context, rows, path_of, n: int) -> ArrayColumn:
    _keys(node, ("shapes", "data"), path, "an array column")
    ndim = len(kind.shape)
    shapes = _int_array(node["shapes"], join(path, "shapes"), (n, ndim))
    data = values.decode_array(node["data"], join(path, "data"))
    dtype = np.dtype(kind.dtype)
    if data.dtype != dtype or data.ndim != 1:
        _fail(join(path, "data"), f"expected a 1-D {dtype.name} array, got {data.dtype.name} {data.shape}")
    if n and shapes.min() < 0:
        i = int((shapes < 0).any(axis=1).nonzero()[0][0])
        _fail(path_of(i), f"malformed shape {tuple(shapes[i].tolist())}")
    # sizes as floats first: a forged shape's product must not overflow before it is compared
    if n and float(np.prod(shapes.astype(np.float64), axis=1).sum()) > len(data):
        _fail(join(path, "data"), f"the shapes ask for more than the {len(data)} elements given")
    sizes = np.prod(shapes, axis=1) if ndim else np.ones(n, dtype=np.int64)
    if int(sizes.sum()) != len(data):
        _fail(join(path, "data"), f"{len(data)} elements do not fill the shapes ({int(sizes.sum())} elements)")
    starts = np.zeros(n, dtype=np.int64)
    if n > 1:
        np.cumsum(sizes[:-1], out=starts[1:])
    for axis, expected in enumerate(kind.shape):
        if isinstance(expected, int):
            bad = shapes[:, axis] != expected
            if bad.any():
                i = int(bad.nonzero()[0][0])
                _fail(path_of(i), f"expected shape {kind.shape}, got {tuple(shapes[i].tolist())}")
        else:
            context.bind(expected, shapes[:, axis].copy(), rows, path_of, "shape")
    column = ArrayColumn(data, shapes, sizes, starts)
    if data.size:
        owner = np.repeat(np.arange(n), sizes)
        if dtype.kind == "f":
            _check_floats(data, kind.finite, False, path_of, owner, column)
        _check_bounds(data, kind, context, rows, path_of, owner, column)
        if kind.increasing and ndim == 1 and len(data) > 1:
            with np.errstate(over="ignore"):  # (huge values of opposite signs: an infinite step is still a step)
                steps = np.diff(data) > 0
            bad = ~steps & (owner[1:] == owner[:-1])
            if bad.any():
                at = int(bad.nonzero()[0][0])
                i = int(owner[at])
                j = at + 1 - int(starts[i])
                _fail(path_of(i), f"must increase strictly, got {data[at].item()!r} then {data[at + 1].item()!r} at index {j}")
    return column


def _index_in_item(column: ArrayColumn | None, owner: np.ndarray, at: int) -> str:
    """`` at index (i, j)``: where element ``at`` of the data lies in its item's array (as a
    record's array check says it); nothing for a column of scalars."""
    if column is None:
        return ""
    k = int(owner[at])
    index = np.unravel_index(at - int(column.starts[k]), tuple(column.shapes[k].tolist()))
    return f" at index {tuple(int(i) for i in index)}"


def _check_floats(data: np.ndarray, finite: bool, nan: bool, path_of, owner: np.ndarray, column: ArrayColumn | None = None) -> None:
    """NaN (unless ``nan``) and, with ``finite``, ±inf are refused, naming the item (the
    messages of ``Float`` and ``Array``)."""
    if finite:
        bad = ~np.isfinite(data) & ~np.isnan(data) if nan else ~np.isfinite(data)
    else:
        bad = np.zeros(data.shape, dtype=bool) if nan else np.isnan(data)
    if bad.any():
        at = int(bad.nonzero()[0][0])
        value = data[at].item()
        if column is not None:
            _fail(path_of(int(owner[at])), f"must be {'finite' if finite else 'free of NaN'}, got {value!r}{_index_in_item(column, owner, at)}")
        _fail(path_of(int(owner[at])), "must not be NaN" if value != value else f"must be finite, got {value!r}")


def _check_bounds(data: np.ndarray, kind: Kind, context: _Context, rows, path_of, owner: np.ndarray, column: ArrayColumn | None = None) -> None:
    for attr, test, sign in (("low", np.less, ">="), ("above", np.less_equal, ">"), ("high", np.greater, "<="), ("below", np.greater_equal, "<")):
        bound = getattr(kind, attr, None)
        if bound is None:
            continue
        limit = context.resolve(bound, rows, "")
        if isinstance(limit, np.ndarray):
            limit = limit[owner]
        with np.errstate(invalid="ignore"):
            bad = test(data, limit)
        if bad.any():
            at = int(bad.nonzero()[0][0])
            value = limit[at] if isinstance(limit, np.ndarray) else limit
            named = f"{bound} = {value}" if isinstance(bound, str) else f"{value}"
            prefix = "values must" if column is not None else "must"
            _fail(path_of(int(owner[at])), f"{prefix} be {sign} {named}, got {data[at].item()!r}{_index_in_item(column, owner, at)}")
