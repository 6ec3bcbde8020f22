"""Record types: which class is saved under which name, with which schema, and how it is rebuilt.

A record is ``{"type": name, "params": {...}, "state": {...}}`` (JSON-safe). ``register`` ties a
name to a class, its ``Schema`` and two functions: ``state(obj) -> dict`` (the live values of the
state fields, child objects included) and ``build(fields) -> obj`` (the object from loaded, checked
``Fields``). Then

- ``to_record(obj)`` writes ``params`` (the constructor's arguments, read as attributes unless the
  entry gives its own ``params`` function) and ``state`` through the schema's kinds;
- ``from_record(record)`` checks the record against the schema (child records are rebuilt by the
  same path, through the ``Record`` kind), runs the schema's checks, calls ``build``, then asks
  the rebuilt object for its broken invariants: ``problems()`` (a list of ``"field: what is
  wrong"``, the same list the tests assert empty after every operation) where the class has it,
  else its ``_check()``. Every failure is a ``ModelFileError`` naming the record's path.

Names are looked up in this registry only: a name in a file selects one of the registered
entries, or is refused. Nothing is imported or called by a name read from a file.

Examples
--------
>>> from wnb_stream import io
>>> from wnb_stream.summaries import Gaussian
>>> summary = Gaussian()
>>> summary.update(1.5, "a"); summary.update(2.5, "a")
>>> record = io.to_record(summary)
>>> record["type"], record["state"]["means"]["shape"]
('Gaussian', [1])
>>> io.from_record(record).table().means.tolist()
[2.0]
>>> io.from_record({"type": "os.system", "params": {}, "state": {}})
Traceback (most recent call last):
...
wnb_stream.io.errors.ModelFileError: type: unknown record type 'os.system'
"""

from __future__ import annotations

import dataclasses
import traceback
from typing import Any, Callable

from .errors import ModelFileError, join, where
from .schema import Fields, Kind, Schema
from .values import describe

__all__ = ["Entry", "Record", "register", "entry", "registered", "to_record", "from_record"]

_RECORD_KEYS = ("type", "params", "state")


@dataclasses.dataclass(frozen=True)
class Entry:
    """A registered record type (see ``register``)."""

    name: str
    cls: type
    schema: Schema
    state: Callable[[Any], dict]
    build: Callable[[Fields], Any]
    params: Callable[[Any], dict] | None = None
    lock: Callable[[Any], Any] | None = None


_BY_NAME: dict[str, Entry] = {}
_BY_CLASS: dict[type, Entry] = {}


def register(
    name: str,
    cls: type,
    schema: Schema,
    *,
    state: Callable[[Any], dict],
    build: Callable[[Fields], Any],
    params: Callable[[Any], dict] | None = None,
    lock: Callable[[Any], Any] | None = None,
) -> Entry:
    """Save instances of exactly ``cls`` (not subclasses) as records of type ``name``.

    ``state(obj)`` returns a dict with exactly the schema's state fields (live values: arrays,
    numbers, child objects for ``Record`` fields); ``build(fields)`` returns the rebuilt object
    from ``fields.params`` and ``fields.state``; ``params(obj)``, when given, replaces reading the
    schema's parameters as attributes of ``obj``; ``lock(obj)``, when given, is a context manager
    held while the record is written (an object other threads may change: the record is then a
    consistent snapshot). A name or class registered twice is a ``ValueError``. Returns the entry.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a record type name must be a non-empty str, got {name!r}")
    if name in _BY_NAME or cls in _BY_CLASS:
        taken = _BY_NAME.get(name) or _BY_CLASS[cls]
        raise ValueError(f"record type {name!r} for {cls.__qualname__}: {taken.name!r} for {taken.cls.__qualname__} is registered already")
    new = Entry(name, cls, schema, state, build, params, lock)
    _BY_NAME[name] = new
    _BY_CLASS[cls] = new
    return new


def entry(name: str) -> Entry:
    """The entry registered under ``name`` (``KeyError`` if none)."""
    return _BY_NAME[name]


def registered() -> tuple[str, ...]:
    """Names of the registered record types, in registration order."""
    return tuple(_BY_NAME)


def to_record(obj: Any, path: str = "") -> dict:
    """The JSON-safe record of ``obj``: ``{"type", "params", "state"}``.

    ``TypeError`` (naming ``path``) when no record type is registered for ``type(obj)`` or a value
    of its state cannot be saved. Cost: O(size of the state).
    """
    found = _BY_CLASS.get(type(obj))
    if found is None:
        kind = type(obj)
        raise TypeError(f"{where(path)}: cannot save a {kind.__module__}.{kind.__qualname__}: no record type is registered for it")
    if found.lock is not None:
        with found.lock(obj):  # no other thread changes ``obj`` while its record is written
            return _record(found, obj, path)
    return _record(found, obj, path)


def _record(found: Entry, obj: Any, path: str) -> dict:
    params = found.params(obj) if found.params is not None else {name: getattr(obj, name) for name in found.schema.params}
    return {
        "type": found.name,
        "params": found.schema.dump_params(params, path),
        "state": found.schema.dump_state(found.state(obj), path),
    }


def from_record(node: Any, path: str = "", *, expected: tuple[str, ...] | None = None) -> Any:
    """The object a record describes, checked against its schema before it is built.

    ``expected`` restricts the record types accepted at this place. ``ModelFileError`` naming the
    path of the first field at fault for anything the schema, the record's checks or the rebuilt
    object (its first ``problems()``, else its ``_check()``) does not accept.
    """
    if not isinstance(node, dict) or "$" in node:
        raise ModelFileError(f"{where(path)}: expected a record, got {describe(node)}")
    for key in _RECORD_KEYS:
        if key not in node:
            raise ModelFileError(f"{where(join(path, key))}: missing field (a record has type, params and state)")
    for key in node:
        if key not in _RECORD_KEYS:
            raise ModelFileError(f"{where(join(path, key))}: unexpected field (a record has type, params and state)")
    name = node["type"]
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ModelFileError(f"{where(join(path, 'type'))}: unknown record type {name!r}")
    if expected and name not in expected:
        raise ModelFileError(f"{where(join(path, 'type'))}: expected a record of type {' or '.join(expected)}, got {name!r}")
    found = _BY_NAME[name]
    fields = found.schema.load(node, path, name)
    try:
        obj = found.build(fields)
    except ModelFileError:
        raise
    except Exception as error:  # a constructor refusing a parameter, say: one error type for the caller
        raise ModelFileError(f"{where(path)}: cannot rebuild {name}: {error}") from error
    return check_rebuilt(obj, path, name)


def check_rebuilt(obj: Any, path: str, name: str) -> Any:
    """``obj`` (rebuilt from a record of type ``name`` at ``path``) if sound: its first
    ``problems()`` (else its failed ``_check()``) is a ``ModelFileError`` naming ``path``."""
    if hasattr(obj, "problems"):  # the class's own list of broken invariants, empty when sound
        try:
            problems = obj.problems()
        except Exception as error:  # values it cannot even compare: refused all the same
            raise ModelFileError(f"{where(path)}: the rebuilt {name} breaks an invariant: {_failure(error)}") from error
        if problems:
            raise ModelFileError(join(path, problems[0]))
        return obj
    check = getattr(obj, "_check", None)
    if check is not None:
        try:
            check()
        except Exception as error:
            raise ModelFileError(f"{where(path)}: the rebuilt {name} breaks an invariant: {_failure(error)}") from error
    return obj


def _failure(error: Exception) -> str:
    """What a failed ``_check`` says: the assertion's message, else its source line."""
    message = str(error)
    if message:
        return message
    frames = traceback.extract_tb(error.__traceback__)
    return (frames[-1].line or type(error).__name__) if frames else type(error).__name__


class Record(Kind):
    """A child record (one of the type ``names``, any registered type when none is given).

    Its live value is the child object: ``dump`` writes ``to_record(child)`` and ``load`` returns
    ``from_record(...)``, so a parent's record holds its children's records.
    """

    def __init__(self, *names: str, doc: str = ""):
        self.names = names
        self.doc = doc

    def dump(self, value, path):
        record = to_record(value, path)
        if self.names and record["type"] not in self.names:
            raise TypeError(f"{where(path)}: expected a {' or '.join(self.names)}, got a {record['type']}")
        return record

    def load(self, node, path, scope):
        return from_record(node, path, expected=self.names or None)

    def text(self):
        return "record (" + (" or ".join(self.names) if self.names else "any type") + ")"

    def __repr__(self) -> str:
        return f"Record({', '.join(map(repr, self.names))})"
