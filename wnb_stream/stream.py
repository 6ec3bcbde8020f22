"""A consumer loop for delayed labels: predict on arrival, learn when the label comes, lose nothing.

In production a classifier rarely sees ``(x, y)`` together. Events arrive with an id and features;
the label for some ids arrives later, or never. ``StreamRunner`` drives a River classifier over
such a stream:

1. an **event** ``{"id": i, "x": {...}}`` is predicted at once (``predict_proba_one``) and its
   features wait in a bounded ``PendingTable`` (at most ``capacity`` entries, each for at most
   ``ttl`` seconds; the oldest or expired entries are evicted and counted);
2. a **label** ``{"id": i, "y": y}`` takes the waiting features of ``i`` and calls
   ``learn_one(x, y)``; a label whose event is unknown, evicted or expired is counted as unmatched;
   a message with both ``x`` and ``y`` is predicted, then learned at once;
3. every ``checkpoint_every`` messages or ``checkpoint_interval`` seconds, the model, the pending
   table, the source position and the counters are written together to ONE file with
   ``persistence.save`` (atomic), and the source is told (``commit``) so it may acknowledge;
4. a runner built on an existing checkpoint restores all of it and seeks the source to the saved
   position.

Exactly once
------------
The model and the position are saved atomically together, so the model in a checkpoint has
learned exactly the labels up to its position. After a crash the messages after that position
are read again and applied to that model: every label is learned exactly once, whatever the
moment of the crash (including during a save). Predictions made after the last checkpoint are
made again after a restart: outputs are *at least once*.

Sources
-------
A source is any object with ``__iter__`` yielding ``(position, message)`` and ``seek(position)``:
``position`` is a JSON-safe value such that ``seek(position)`` makes the next iteration start
right after that message, and ``seek(None)`` starts from the beginning. An optional
``commit(position)`` is called after each checkpoint (a broker acknowledges there). This module
has ``ListSource`` (in memory) and ``JSONLinesSource`` (a file, one JSON message per line);
``wnb_stream.redis_stream`` adapts Redis Streams.

Bad input
---------
A message that is not an object, has no usable ``id``, or carries neither ``x`` nor ``y``, and any
``ValueError``/``TypeError`` the model raises for unusable features or labels, is counted in
``rejected`` (the last reason in ``last_error``) and skipped with ``errors="count"`` (the
default), or raised with ``errors="raise"``. The classifier never changes when it rejects input,
so skipping keeps the model sound.
"""

from __future__ import annotations

import collections
import dataclasses
import glob
import json
import math
import numbers
import os
import time
import typing
from typing import Any, Callable, Hashable, Iterator

from . import io, persistence

__all__ = [
    "Source",
    "ListSource",
    "JSONLinesSource",
    "Malformed",
    "PendingEntry",
    "PendingTable",
    "StreamRunner",
]

#: The ``kind`` written in every checkpoint, checked on restore.
CHECKPOINT_KIND = "wnb_stream.stream/checkpoint"


@typing.runtime_checkable
class Source(typing.Protocol):
    """What ``StreamRunner.run`` reads: ``(position, message)`` pairs, and ``seek(position)``."""

    def __iter__(self) -> Iterator[tuple[Any, Any]]: ...

    def seek(self, position: Any) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Malformed:
    """What a source yields in place of a message it could not decode (counted as rejected)."""

    reason: str
    raw: str = ""


class ListSource:
    """Messages held in memory; the position is the number of messages already read.

    Parameters
    ----------
    messages
        The messages, in stream order.

    Examples
    --------
    >>> source = ListSource([{"id": 1, "x": {"a": 1.0}}, {"id": 1, "y": True}])
    >>> source.seek(1)
    >>> list(source)
    [(2, {'id': 1, 'y': True})]
    """

    def __init__(self, messages: typing.Iterable[Any]):
        self.messages = list(messages)
        self._next = 0

    def seek(self, position: int | None) -> None:
        """Start the next iteration after ``position`` messages (None: from the first). O(1)."""
        if position is None:
            position = 0
        if isinstance(position, bool) or not isinstance(position, numbers.Integral):
            raise ValueError(f"position must be None or an integer, got {position!r}")
        if not 0 <= position <= len(self.messages):
            raise ValueError(f"position must be in [0, {len(self.messages)}], got {position}")
        self._next = int(position)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        while self._next < len(self.messages):
            message = self.messages[self._next]
            self._next += 1
            yield self._next, message


class JSONLinesSource:
    """A file of JSON messages, one per line; the position is the byte offset after a line.

    Blank lines are skipped. A line that is not valid JSON is yielded as ``Malformed`` (the runner
    counts it as rejected), except the file's last line when it has no final newline: that one may
    still be being written, so it is left for a later read, unless it already parses.

    Parameters
    ----------
    path
        The file to read (it may grow between runs; it is opened at each iteration).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "stream.jsonl"
    >>> _ = path.write_text('{"id": 7, "x": {"a": 0.5}}\\n{"id": 7, "y": "spam"}\\n')
    >>> source = JSONLinesSource(path)
    >>> [(position, message["id"]) for position, message in source]
    [(27, 7), (50, 7)]
    >>> source.seek(27)
    >>> [message for _, message in source]
    [{'id': 7, 'y': 'spam'}]
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self._offset = 0

    def seek(self, position: int | None) -> None:
        """Start the next iteration at byte ``position`` (None: the start of the file). O(1)."""
        if position is None:
            position = 0
        if isinstance(position, bool) or not isinstance(position, numbers.Integral) or position < 0:
            raise ValueError(f"position must be None or a byte offset >= 0, got {position!r}")
        self._offset = int(position)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            while True:
                line = handle.readline()
                if not line:
                    return
                complete = line.endswith(b"\n")
                text = line.strip()
                if not text:
                    if not complete:
                        return
                    self._offset = handle.tell()
                    continue
                try:
                    message = json.loads(text.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as error:
                    if not complete:
                        return  # a last line still being written: read it next time
                    message = Malformed(f"invalid JSON line: {error}", text.decode("utf-8", "replace")[:200])
                self._offset = handle.tell()
                yield self._offset, message


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
        if isinstance(capacity, bool) or not isinstance(capacity, numbers.Integral) or capacity < 1:
            raise ValueError(f"capacity must be an integer >= 1, got {capacity!r}")
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, numbers.Real) or not (ttl > 0) or math.isinf(ttl)
        ):
            raise ValueError(f"ttl must be None or a finite number of seconds > 0, got {ttl!r}")
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

    def _check(self) -> None:
        assert len(self._entries) <= self.capacity
        assert min(self.evicted, self.expired, self.replaced) >= 0
        for entry in self._entries.values():
            assert isinstance(entry, PendingEntry) and isinstance(entry.x, dict)


@dataclasses.dataclass(slots=True)
class _Counts:
    """The runner's own counters (the pending table keeps evicted/expired/replaced)."""

    messages: int = 0
    events: int = 0
    labels: int = 0
    learned: int = 0
    correct: int = 0
    unmatched: int = 0
    rejected: int = 0
    checkpoints: int = 0
    restarts: int = 0
    last_error: str | None = None


def _valid_id(key) -> bool:
    return (isinstance(key, str) or isinstance(key, int)) and not isinstance(key, bool)


def _argmax(proba: dict):
    if not proba:
        return None
    return max(proba, key=proba.__getitem__)


class StreamRunner:
    """Predict on arrival, learn on the delayed label, checkpoint atomically, resume exactly once.

    Parameters
    ----------
    model
        A River classifier whose state ``wnb_stream.persistence`` can save (a
        ``WeightedNaiveBayes``). Ignored when a checkpoint is restored: use ``runner.model``.
    checkpoint_path
        The checkpoint file (model, pending table, position, counters, in one file), or None for
        no checkpoints.
    capacity
        Maximum number of events waiting for their label (>= 1).
    ttl
        Maximum seconds an event waits for its label (> 0), or None for no limit.
    checkpoint_every
        Checkpoint after this many messages (>= 1), or None.
    checkpoint_interval
        Checkpoint when this many seconds have passed since the last one (> 0), or None.
    clock
        Wall-clock time in seconds for the ``ttl`` (a message's own numeric ``"time"`` field, when
        present, is used instead). Wall-clock, not monotonic, so ages survive a restart.
    on_prediction
        Called as ``on_prediction(id, proba)`` for every event; predictions after the last
        checkpoint are repeated after a restart.
    errors
        "count" (default): bad messages and input the model rejects are counted and skipped;
        "raise": they raise ``ValueError``.
    resume
        Restore ``checkpoint_path`` if it exists (default). False starts afresh (and overwrites it).

    Examples
    --------
    >>> from wnb_stream import WeightedNaiveBayes
    >>> messages = []
    >>> for i in range(200):
    ...     messages.append({"id": i, "x": {"u": i % 7 * 1.0, "colour": "red" if i % 2 else "blue"}})
    ...     if i >= 3:
    ...         messages.append({"id": i - 3, "y": (i - 3) % 2 == 1})
    >>> runner = StreamRunner(WeightedNaiveBayes(seed=1), checkpoint_path=None, capacity=50)
    >>> runner.run(ListSource(messages))
    >>> stats = runner.stats
    >>> stats["learned"], stats["pending"], round(stats["correct"] / stats["learned"], 2)
    (197, 3, 0.97)
    """

    def __init__(
        self,
        model,
        checkpoint_path: str | os.PathLike | None,
        *,
        capacity: int = 100_000,
        ttl: float | None = None,
        checkpoint_every: int | None = 1000,
        checkpoint_interval: float | None = None,
        clock: Callable[[], float] = time.time,
        on_prediction: Callable[[Any, dict], None] | None = None,
        errors: str = "count",
        resume: bool = True,
    ):
        self.checkpoint_path = None if checkpoint_path is None else os.fspath(checkpoint_path)
        self.capacity = capacity
        self.ttl = ttl
        self.checkpoint_every = checkpoint_every
        self.checkpoint_interval = checkpoint_interval
        self.clock = clock
        self.on_prediction = on_prediction
        self.errors = errors
        self.resume = resume
        if checkpoint_every is not None and (
            isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, numbers.Integral) or checkpoint_every < 1
        ):
            raise ValueError(f"checkpoint_every must be None or an integer >= 1, got {checkpoint_every!r}")
        if checkpoint_interval is not None and (
            isinstance(checkpoint_interval, bool)
            or not isinstance(checkpoint_interval, numbers.Real)
            or not checkpoint_interval > 0
        ):
            raise ValueError(f"checkpoint_interval must be None or a number of seconds > 0, got {checkpoint_interval!r}")
        if errors not in ("count", "raise"):
            raise ValueError(f"errors must be 'count' or 'raise', got {errors!r}")
        self.pending = PendingTable(capacity, ttl)  # validates capacity and ttl
        self.model = model
        self.position: Any = None
        self._counts = _Counts()
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()
        if self.checkpoint_path is not None:
            _remove_temporaries(self.checkpoint_path)
            if resume and os.path.exists(self.checkpoint_path):
                self._restore()

    # ------------------------------------------------------------------ checkpoints
    def _restore(self) -> None:
        checkpoint = persistence.load(self.checkpoint_path)
        if not isinstance(checkpoint, dict) or checkpoint.get("kind") != CHECKPOINT_KIND:
            raise ValueError(f"{self.checkpoint_path!r} is a wnb_stream file but not a stream checkpoint")
        self.model = _model_from_checkpoint(checkpoint["model"])
        pending = checkpoint["pending"]
        self.pending = pending.resized(self.capacity, self.ttl)
        self.position = checkpoint["position"]
        self._counts = checkpoint["counts"]
        self._counts.restarts += 1

    def checkpoint(self, source=None) -> None:
        """Save model, pending table, position and counters atomically; then ``source.commit``.

        Without ``checkpoint_path`` nothing is saved, but the source is still told (so a broker
        can acknowledge what was processed and its backlog stays bounded): there is then no
        exactly-once guarantee across restarts. Cost: one encoding of the model,
        O(model + pending).
        """
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()
        if self.checkpoint_path is not None:
            self._counts.checkpoints += 1
            persistence.save(
                {
                    "kind": CHECKPOINT_KIND,
                    "position": self.position,
                    "counts": self._counts,
                    "pending": self.pending,
                    "model": _model_for_checkpoint(self.model),
                },
                self.checkpoint_path,
            )
        commit = getattr(source, "commit", None)
        if commit is not None:
            commit(self.position)

    def maybe_checkpoint(self, source=None) -> None:
        """Checkpoint if ``checkpoint_every`` messages or ``checkpoint_interval`` seconds have passed.

        ``run`` calls it after every message; a loop of its own calls ``step`` then this.
        """
        if self._checkpoint_due():
            self.checkpoint(source)

    def _checkpoint_due(self) -> bool:
        if self.checkpoint_every is not None and self._since_checkpoint >= self.checkpoint_every:
            return True
        return (
            self.checkpoint_interval is not None
            and time.monotonic() - self._last_checkpoint >= self.checkpoint_interval
        )

    # ------------------------------------------------------------------ the loop
    def run(self, source, max_messages: int | None = None, checkpoint_at_end: bool = True) -> None:
        """Seek ``source`` to the saved position and process its messages.

        Stops when the source is exhausted or after ``max_messages`` messages; then checkpoints
        (unless ``checkpoint_at_end`` is False).
        """
        if max_messages is not None and max_messages < 0:
            raise ValueError(f"max_messages must be None or >= 0, got {max_messages!r}")
        source.seek(self.position)
        done = 0
        if max_messages != 0:
            for position, message in source:
                self.step(position, message)
                done += 1
                self.maybe_checkpoint(source)
                if max_messages is not None and done >= max_messages:
                    break
        if checkpoint_at_end and self._since_checkpoint:
            self.checkpoint(source)

    def step(self, position, message) -> None:
        """Process one message read at ``position`` (no checkpoint). O(model cost) per message."""
        counts = self._counts
        counts.messages += 1
        self.position = position
        self._since_checkpoint += 1
        try:
            self._dispatch(message)
        except (ValueError, TypeError) as error:
            counts.rejected += 1
            counts.last_error = f"{type(error).__name__}: {error}"[:500]
            if self.errors == "raise":
                raise ValueError(f"message at position {position!r} rejected: {error}") from error

    def _dispatch(self, message) -> None:
        if isinstance(message, Malformed):
            raise ValueError(message.reason)
        if not isinstance(message, dict):
            raise ValueError(f"a message must be an object, got {type(message).__name__}")
        key = message.get("id")
        if not _valid_id(key):
            raise ValueError(f"a message needs an 'id' that is a string or an integer, got {key!r}")
        has_x, has_y = "x" in message, "y" in message
        if not has_x and not has_y:
            raise ValueError(f"message {key!r} has neither 'x' nor 'y'")
        now = message.get("time")
        if now is None:
            now = self.clock()
        elif isinstance(now, bool) or not isinstance(now, numbers.Real) or not math.isfinite(now):
            raise ValueError(f"message {key!r}: 'time' must be a finite number, got {now!r}")
        now = float(now)
        self.pending.expire(now)
        if has_x:
            x = message["x"]
            if not isinstance(x, dict):
                raise ValueError(f"message {key!r}: 'x' must be an object of features, got {type(x).__name__}")
            if has_y and message["y"] is None:
                raise ValueError(f"message {key!r}: 'y' must not be null")
            proba = self.model.predict_proba_one(x)
            self._counts.events += 1
            if self.on_prediction is not None:
                self.on_prediction(key, proba)
            if has_y:
                self._learn(key, x, message["y"], _argmax(proba))
            else:
                self.pending.put(key, x, now, _argmax(proba))
            return
        y = message["y"]
        if y is None:
            raise ValueError(f"message {key!r}: 'y' must not be null")
        self._counts.labels += 1
        entry = self.pending.take(key, now)
        if entry is None:
            self._counts.unmatched += 1
            return
        self._learn(key, entry.x, y, entry.prediction)

    def _learn(self, key, x, y, prediction) -> None:
        self.model.learn_one(x, y)
        self._counts.learned += 1
        if prediction is not None and prediction == y:
            self._counts.correct += 1

    # ------------------------------------------------------------------ queries
    @property
    def stats(self) -> dict:
        """Counters since the stream began (they survive restarts), as a plain dict.

        ``messages``, ``events``, ``labels``, ``learned``, ``correct`` (learned events whose
        prediction on arrival was right), ``unmatched`` (labels without a waiting event),
        ``rejected``, ``evicted`` / ``expired`` / ``replaced`` (pending events), ``pending`` (waiting
        now), ``checkpoints``, ``restarts``, ``last_error``.
        """
        counts = dataclasses.asdict(self._counts)
        counts.update(
            evicted=self.pending.evicted,
            expired=self.pending.expired,
            replaced=self.pending.replaced,
            pending=len(self.pending),
        )
        return counts

    def _check(self) -> None:
        self.pending._check()
        c = self._counts
        # Each message counts as one event or one label, unless rejected before that.
        assert c.events + c.labels <= c.messages <= c.events + c.labels + c.rejected
        assert c.correct <= c.learned <= c.events and c.unmatched <= c.labels


def _model_for_checkpoint(model):
    """A model with a saved-model record (``docs/saved-model.md``) goes in as ``{"record": …}``;
    any other model as the object itself (the checkpoint format's own encoding)."""
    if any(io.entry(name).cls is type(model) for name in io.registered()):
        return {"record": io.to_record(model)}
    return model


def _model_from_checkpoint(saved):
    if isinstance(saved, dict) and set(saved) == {"record"}:
        return io.from_record(saved["record"], "model")
    return saved


def _remove_temporaries(path: str) -> None:
    """Delete temporary files an interrupted ``persistence.save`` of ``path`` may have left."""
    directory = os.path.dirname(os.path.abspath(path))
    pattern = os.path.join(glob.escape(directory), "." + glob.escape(os.path.basename(path)) + ".*.tmp")
    for leftover in glob.glob(pattern):
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass
