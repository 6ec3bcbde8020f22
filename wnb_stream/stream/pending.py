"""The stream runner's pending table: events waiting for their labels, bounded in size and age,
and its record in a checkpoint (``docs/saved-model.md#pendingtable``).
"""

from __future__ import annotations

import collections
import dataclasses
import json
from typing import Any, Hashable

import numpy as np

from .. import io
from .._checks import integer, real
from ..io.errors import ModelFileError, join, where
from ..io.values import describe

__all__ = ["PendingEntry", "PendingTable"]


@dataclasses.dataclass(slots=True)
class PendingEntry:
    """Features of an event waiting for its label: ``x``, arrival ``time``, predicted label."""

    x: dict
    time: float
    prediction: Any = None


class PendingTable:
    """Events waiting for their labels, bounded in size and in age.

    Entries are kept in arrival order; adding beyond ``capacity`` evicts the oldest, and entries
    older than ``ttl`` seconds are expired when time moves on. Both are counted (``evicted``,
    ``expired``); an event id that arrives again replaces its entry (counted in ``replaced``).

    Parameters
    ----------
    capacity
        Maximum number of waiting events (>= 1).
    ttl
        Maximum age in seconds of a waiting event (> 0), or None for no limit.

    Notes
    -----
    An ``OrderedDict`` keyed by event id: insertion, lookup, removal and eviction of the oldest
    are O(1); expiry pops from the old end and is O(1) amortised. Arrival times are expected to
    be non-decreasing; an out-of-order older entry is expired when the entries before it have
    gone, or when its label arrives (a match is never older than ``ttl``).

    Examples
    --------
    >>> table = PendingTable(capacity=2, ttl=10.0)
    >>> table.put("a", {"f": 1}, time=0.0)
    >>> table.put("b", {"f": 2}, time=5.0)
    >>> table.put("c", {"f": 3}, time=6.0)
    >>> len(table), table.evicted
    (2, 1)
    >>> table.expire(now=15.5)
    >>> len(table), table.expired
    (1, 1)
    >>> table.take("c", now=15.5).x
    {'f': 3}
    """

    def __init__(self, capacity: int = 100_000, ttl: float | None = None):
        integer(capacity, "capacity", low=1)
        real(ttl, "ttl", above=0, finite=True, optional=True, what="a finite number of seconds")
        self.capacity = int(capacity)
        self.ttl = None if ttl is None else float(ttl)
        self._entries: collections.OrderedDict[Hashable, PendingEntry] = collections.OrderedDict()
        self.evicted = 0
        self.expired = 0
        self.replaced = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key) -> bool:
        return key in self._entries

    def put(self, key: Hashable, x: dict, time: float, prediction: Any = None) -> None:
        """Add (or replace) the waiting event ``key``, evicting the oldest beyond capacity. O(1)."""
        if key in self._entries:
            del self._entries[key]
            self.replaced += 1
        self._entries[key] = PendingEntry(x, float(time), prediction)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
            self.evicted += 1

    def expire(self, now: float) -> None:
        """Drop the entries that arrived more than ``ttl`` seconds before ``now``. O(1) amortised."""
        if self.ttl is None:
            return
        limit = now - self.ttl
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.time >= limit:
                return
            del self._entries[key]
            self.expired += 1

    def take(self, key: Hashable, now: float) -> PendingEntry | None:
        """Remove and return the entry of ``key`` (None if absent or older than ``ttl``). O(1)."""
        entry = self._entries.pop(key, None)
        if entry is not None and self.ttl is not None and entry.time < now - self.ttl:
            self.expired += 1
            return None
        return entry

    def resized(self, capacity: int, ttl: float | None) -> PendingTable:
        """A table with new bounds holding the same entries (the oldest dropped beyond capacity)."""
        table = PendingTable(capacity, ttl)
        table.evicted, table.expired, table.replaced = self.evicted, self.expired, self.replaced
        for key, entry in self._entries.items():
            table.put(key, entry.x, entry.time, entry.prediction)
        return table

    def unsaveable(self) -> list[tuple[Hashable, PendingEntry, Exception]]:
        """``(key, entry, error)`` of each entry a checkpoint cannot write (an id, a feature name
        or a value that is not a plain value, an integer too long to write...). O(entries)."""
        found = []
        key_kind, features, plain = io.Key(), _Features(), io.Value()
        for key, entry in self._entries.items():
            try:
                node = [key_kind.dump(key, "id"), features.dump(entry.x, "x"), plain.dump(entry.prediction, "prediction")]
                json.dumps(node, allow_nan=False, ensure_ascii=True)
            except (TypeError, ValueError, OverflowError, RecursionError) as error:
                found.append((key, entry, error))
        return found

    def discard(self, key: Hashable) -> None:
        """Remove the entry of ``key`` if there is one, counting nothing. O(1)."""
        self._entries.pop(key, None)

    def _check(self) -> None:
        assert len(self._entries) <= self.capacity
        assert min(self.evicted, self.expired, self.replaced) >= 0
        for entry in self._entries.values():
            assert isinstance(entry, PendingEntry) and isinstance(entry.x, dict)




class _Features(io.Kind):
    """A feature dict: names that are keys (``io.Key``), values that are plain values
    (``io.Value``), written as a list of ``[name, value]`` pairs (a name need not be a str)."""

    doc = ""

    def dump(self, value, path):
        if type(value) is not dict:
            raise TypeError(f"{where(path)}: expected a dict of features, got {type(value).__name__}")
        key, plain = io.Key(), io.Value()
        return [[key.dump(name, path), plain.dump(item, join(path, str(name)))] for name, item in value.items()]

    def load(self, node, path, scope):
        if not isinstance(node, list):
            raise ModelFileError(f"{where(path)}: expected a list of [name, value] pairs, got {describe(node)}")
        key, plain, x = io.Key(), io.Value(), {}
        for i, pair in enumerate(node):
            if not isinstance(pair, list) or len(pair) != 2:
                raise ModelFileError(f"{where(join(path, i))}: expected a [name, value] pair, got {describe(pair)}")
            name = key.load(pair[0], join(path, i), scope)
            if name in x:
                raise ModelFileError(f"{where(join(path, i))}: feature {name!r} twice")
            x[name] = plain.load(pair[1], join(path, i), scope)
        return x

    def text(self):
        return "features: list of [key, plain value]"


def _state(table: PendingTable) -> dict:
    entries = list(table._entries.items())
    return {
        "ids": [key for key, _ in entries],
        "times": np.array([entry.time for _, entry in entries], dtype=np.float64),
        "predictions": [entry.prediction for _, entry in entries],
        "features": [entry.x for _, entry in entries],
        "evicted": table.evicted,
        "expired": table.expired,
        "replaced": table.replaced,
    }


def _check_ids(fields: io.Fields) -> None:
    for i, key in enumerate(fields.state["ids"]):
        if type(key) is not str and type(key) is not int:
            fields.fail(f"ids[{i}]", f"an event id is a str or an int, got {key!r}")
    if len(fields.state["ids"]) > fields.params["capacity"]:
        fields.fail("ids", f"{len(fields.state['ids'])} entries, beyond capacity = {fields.params['capacity']}")


def _build(fields: io.Fields) -> PendingTable:
    params, state = fields.params, fields.state
    table = PendingTable(params["capacity"], params["ttl"])
    for key, time, prediction, x in zip(state["ids"], state["times"].tolist(), state["predictions"], state["features"]):
        table._entries[key] = PendingEntry(x, time, prediction)
    table.evicted, table.expired, table.replaced = state["evicted"], state["expired"], state["replaced"]
    return table


io.register(
    "PendingTable",
    PendingTable,
    io.Schema(
        params={
            "capacity": io.Int(low=1, doc="most waiting events"),
            "ttl": io.Optional(io.Float(above=0.0), doc="most seconds an event waits (null: no limit)"),
        },
        state={
            "ids": io.Keys(length="n_pending", doc="ids of the waiting events (str or int), oldest first"),
            "times": io.Array("float64", ("n_pending",), doc="arrival time of each, in seconds"),
            "predictions": io.List(io.Value(), length="n_pending", doc="the label predicted on arrival (null: none)"),
            "features": io.List(_Features(), length="n_pending", doc="the features of each"),
            "evicted": io.Int(low=0, doc="events evicted beyond capacity"),
            "expired": io.Int(low=0, doc="events expired beyond ttl"),
            "replaced": io.Int(low=0, doc="events replaced by an event of the same id"),
        },
        checks=(_check_ids,),
    ),
    state=_state,
    build=_build,
)
