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
   table, the source position, the counters and the dead letters are written together to ONE
   file (``checkpoints``: atomic, gzip when its name ends in ``.gz``), and the source is told
   (``commit``) so it may acknowledge;
4. a runner built on an existing checkpoint restores all of it and seeks the source to the saved
   position.

Exactly once
------------
The model and the position are saved atomically together, so the model in a checkpoint has
learned exactly the labels up to its position. After a crash the messages after that position
are read again and applied to that model: every label is learned exactly once, whatever the
moment of the crash (including during a save). Predictions made after the last checkpoint are
made again after a restart: outputs are *at least once*. The source is told ``commit(position)``
only with the position of a checkpoint just saved, so a broker acknowledges only what a saved
checkpoint holds; a second ``run`` on the same runner goes on from the runner's own position
(its model has learned up to there) without acknowledging anything before the next checkpoint.

Sources
-------
A source is any object with ``__iter__`` yielding ``(position, message)`` and ``seek(position)``:
``position`` is a JSON-safe value such that ``seek(position)`` makes the next iteration start
right after that message, and ``seek(None)`` starts from the beginning. An optional
``commit(position)`` is called after each checkpoint (a broker acknowledges there). This module
has ``ListSource`` (in memory) and ``JSONLinesSource`` (a file, one JSON message per line);
``wnb_stream.stream.redis_stream`` adapts Redis Streams.

Dead letters
------------
One poison message must not stop a consumer for good: a message whose processing raises would
be read again after each restart (the checkpoint is before it), and raise again. So whatever a
message makes the runner, the parser or the model raise (any ``Exception``: a message that is not
an object, has no usable ``id``, carries neither ``x`` nor ``y``, a ``time`` that is not a finite
number, features or a label the model refuses, an ``OverflowError`` for an integer of 400 digits,
a ``RecursionError``...) sends it to the **dead-letter list** ``runner.dead_letters``: its
position, its id when usable, the error and an excerpt of the message (``DeadLetter``). The list
is bounded (``dead_letter_capacity``, the oldest dropped and counted), saved with every
checkpoint, and counted in ``stats`` (``rejected``, ``dead_letters``, ``dead_letters_dropped``,
``last_error``). The message then counts as processed: the position, hence the next checkpoint,
moves past it, and a restart does not meet it again. With ``errors="raise"`` it is dead-lettered,
then ``ValueError`` is raised.

The sources never raise for the content of a message: ``JSONLinesSource`` (and the Redis source)
yield a ``Malformed`` marker for a line they cannot decode (not UTF-8, not JSON, an integer of
5,000 digits that Python refuses to read, arrays nested 10^5 deep), which is dead-lettered.

What a checkpoint will have to save is checked before the model learns it: a label (and, for a
model saved as a record, ``docs/saved-model.md``, the feature names and values) that a
checkpoint could not write is refused with the message (a NaN label, an id of thousands of
digits); a waiting event that still cannot be saved (any object an in-memory source may hand a
model checkpointed by pickle: the pending table holds plain values only) is dead-lettered by the
checkpoint instead of failing it.
The classifier does not change when it refuses input, so dead-lettering keeps the model sound.

Not the message's fault, and so not dead-lettered: an exception of ``on_prediction`` propagates
and the message is not counted as processed (the next ``run`` reads it again); a
``KeyboardInterrupt`` or ``MemoryError`` inside the model propagates too, and since the model may
then be half updated, ``checkpoint`` refuses to save it and the next ``run`` first goes back to
the last checkpoint, as a restarted process would.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from typing import Any, Callable

from .. import io
from .._checks import integer, is_real, real
from ..summaries.policy import excerpt as _excerpt
from . import checkpoints
from .checkpoints import StreamCheckpoint
from .dead_letters import DeadLetter, DeadLetters
from .pending import PendingTable
from .sources import Limits, Malformed

__all__ = ["StreamRunner"]


class _CallbackError(Exception):
    """An exception of ``on_prediction``: the caller's, not the message's (it propagates)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


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
    # (an id is saved with the pending table: an integer str() cannot write is refused)
    return (isinstance(key, str) or isinstance(key, int)) and not isinstance(key, bool) and io.key_problem(key) is None


def _plain(value):
    """A NumPy scalar as the Python value it holds (what the classifier reads it as)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _time(key, now) -> float:
    """A message's ``time`` as a finite float; ``ValueError`` for anything else."""
    if not is_real(now):
        raise ValueError(f"message {key!r}: 'time' must be a finite number, got a {type(now).__name__}")
    try:
        value = float(now)
    except (OverflowError, ValueError):
        value = math.inf
    if not math.isfinite(value):
        raise ValueError(f"message {key!r}: 'time' must be a finite number, got {_excerpt(now)[:60]}")
    return value


def _argmax(proba: dict):
    if not proba:
        return None
    return max(proba, key=proba.__getitem__)


class StreamRunner:
    """Predict on arrival, learn on the delayed label, checkpoint atomically, resume exactly once.

    Parameters
    ----------
    model
        A River classifier (a ``WeightedNaiveBayes``, or any other with ``trusted_checkpoint``).
        Ignored when a checkpoint is restored: use ``runner.model``.
    checkpoint_path
        The checkpoint file (model, pending table, position, counters, in one file), or None for
        no checkpoints. A file of the saved-model format (``docs/saved-model.md#checkpoints``),
        gzip when the name ends in ``.gz``; a checkpoint of the object-graph format of earlier
        releases is refused with ``io.ModelFileError`` (start afresh with ``resume=False``).
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
        "count" (default): a message that cannot be processed (malformed, or anything the model
        raises for it) goes to the dead-letter list and the runner goes on; "raise": it is
        dead-lettered, then ``ValueError`` is raised (the message counts as processed).
    resume
        Restore ``checkpoint_path`` if it exists (default). False starts afresh (and overwrites it).
    dead_letter_capacity
        Most dead letters kept (>= 0; the oldest are dropped and counted). They are saved with
        each checkpoint.
    trusted_checkpoint
        How a model with no safe format is checkpointed. ``WeightedNaiveBayes`` (and every model
        with a saved-model record, ``docs/saved-model.md``) is always saved in the safe format. Any
        other River estimator or pipeline (``StandardScaler() | WeightedNaiveBayes()``, a Hoeffding
        tree …) can only be pickled, and loading a pickle runs code named by the file: so it is
        checkpointed only when this is True (the file is yours and nobody else can write it), and
        a runner built for such a model without it raises ``ValueError`` at once, not at its
        first checkpoint. A checkpoint holding a pickle is restored only when this is True.
    limits
        Size limits on a message's content (``Limits``: features per message, characters of a
        string value, label or id, and of a feature name; None: the defaults). A message beyond
        one is dead-lettered, never learned. A source bounds the bytes of a line or an entry
        (``max_line_bytes``).

    Examples
    --------
    >>> from wnb_stream import WeightedNaiveBayes
    >>> from wnb_stream.stream import ListSource, StreamRunner
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
        dead_letter_capacity: int = 1000,
        trusted_checkpoint: bool = False,
        limits: Limits | None = None,
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
        integer(checkpoint_every, "checkpoint_every", low=1, optional=True)
        real(checkpoint_interval, "checkpoint_interval", above=0, optional=True, what="a number of seconds")
        if errors not in ("count", "raise"):
            raise ValueError(f"errors must be 'count' or 'raise', got {errors!r}")
        self.pending = PendingTable(capacity, ttl)  # validates capacity and ttl
        if limits is not None and not isinstance(limits, Limits):
            raise ValueError(f"limits must be None or a Limits, got {type(limits).__name__}")
        self.limits = Limits() if limits is None else limits
        self.dead_letter_capacity = dead_letter_capacity
        self.dead_letters = DeadLetters(dead_letter_capacity)  # validates the capacity
        self.model = model
        self.trusted_checkpoint = bool(trusted_checkpoint)
        if self.checkpoint_path is not None:  # can this model be checkpointed? (now, not at the first checkpoint)
            checkpoints.checkpointable(model, self.trusted_checkpoint)
        self.position: Any = None
        self._counts = _Counts()
        # An exception other than the message's own (KeyboardInterrupt, MemoryError) left a model
        # call half done: the model may be half updated, so it must not be saved (see ``run``).
        self._interrupted = False
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()
        if self.checkpoint_path is not None:
            checkpoints.remove_temporaries(self.checkpoint_path)
            if resume and os.path.exists(self.checkpoint_path):
                self._restore()

    # ------------------------------------------------------------------ checkpoints
    def _restore(self) -> None:
        checkpoint = checkpoints.read(self.checkpoint_path, StreamCheckpoint)
        model = checkpoint.model
        self.model = model.load(self.trusted_checkpoint, self.checkpoint_path) if isinstance(model, checkpoints.Pickled) else model
        self.pending = checkpoint.pending.resized(self.capacity, self.ttl)
        self.position = checkpoint.position
        self._counts = _Counts(**checkpoint.counts)
        self._counts.restarts += 1
        self.dead_letters = checkpoint.dead_letters.resized(self.dead_letter_capacity)
        self._interrupted = False

    def checkpoint(self, source=None) -> None:
        """Save model, pending table, position and counters atomically; then ``source.commit``.

        Without ``checkpoint_path`` nothing is saved, but the source is still told (so a broker
        can acknowledge what was processed and its backlog stays bounded): there is then no
        exactly-once guarantee across restarts. Cost: one encoding of the model,
        O(model + pending).
        """
        if self._interrupted:
            raise RuntimeError(
                "a model call was interrupted (KeyboardInterrupt, MemoryError...): the model may be half "
                "updated and is not saved; run() restores the last checkpoint first"
            )
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()
        if self.checkpoint_path is not None:
            self._counts.checkpoints += 1
            io.atomic_write(self.checkpoint_path, self._checkpoint_bytes())
        commit = getattr(source, "commit", None)
        if commit is not None:
            commit(self.position)

    def _checkpoint_bytes(self) -> bytes:
        """The checkpoint file's bytes (``checkpoints``). A waiting event whose features cannot be
        saved (an in-memory source can hand anything) is dead-lettered rather than let it stop
        every checkpoint."""

        def checkpoint() -> bytes:
            model = checkpoints.model_part(self.model, self.trusted_checkpoint)
            counts = dataclasses.asdict(self._counts)
            state = StreamCheckpoint(self.position, counts, self.pending, self.dead_letters, model)
            return checkpoints.dumps(state, self.checkpoint_path)

        try:
            return checkpoint()
        except (TypeError, ValueError, OverflowError, RecursionError):
            for key, entry, error in self.pending.unsaveable():
                self.pending.discard(key)
                reason = f"{type(error).__name__}: {error}"[:500]
                self.dead_letters.add(DeadLetter(None, key if _valid_id(key) else None, f"cannot be saved: {reason}", _excerpt(entry.x)))
            return checkpoint()  # the model itself, or the position: raises

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
        if self._interrupted:
            self._recover()
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

    def _recover(self) -> None:
        """After an interrupted model call: back to the last checkpoint, as a restart would."""
        if self.checkpoint_path is None or not os.path.exists(self.checkpoint_path):
            raise RuntimeError(
                "a model call was interrupted (KeyboardInterrupt, MemoryError...) and there is no checkpoint "
                "to go back to: the model may be half updated; build a new runner"
            )
        self._restore()
        self._since_checkpoint = 0

    def step(self, position, message) -> None:
        """Process one message read at ``position`` (no checkpoint). O(model cost) per message.

        Whatever the message makes the parser or the model raise (an ``Exception``), it goes to the
        dead-letter list and counts as processed. An exception of ``on_prediction`` propagates and
        the message does not count as processed (a later ``run`` reads it again); so does a
        ``KeyboardInterrupt`` or ``MemoryError``, after which the model is not saved until ``run``
        has restored the last checkpoint.
        """
        counts = self._counts
        counts.messages += 1
        try:
            self._dispatch(message)
        except _CallbackError as failed:  # (raised right after the event was counted)
            counts.messages -= 1
            counts.events -= 1
            raise failed.error from None
        except Exception as error:  # noqa: BLE001 - one poison message must not stop the stream
            if isinstance(error, MemoryError):
                self._interrupted = True
                raise
            self._reject(position, message, error)
            if self.errors == "raise":
                raise ValueError(f"message at position {position!r} rejected: {type(error).__name__}: {error}") from error
        except BaseException:
            self._interrupted = True
            raise
        else:
            self.position = position
            self._since_checkpoint += 1

    def _reject(self, position, message, error: Exception) -> None:
        counts = self._counts
        counts.rejected += 1
        try:
            reason = f"{type(error).__name__}: {error}"[:500]
        except Exception:  # noqa: BLE001 - a message that cannot even be put in words
            reason = type(error).__name__
        counts.last_error = reason
        if isinstance(message, Malformed):
            key, text = None, message.raw
        else:
            key = message.get("id") if isinstance(message, dict) else None
            key, text = (key if _valid_id(key) else None), _excerpt(message)
        self.dead_letters.add(DeadLetter(position, key, reason, text))
        self.position = position
        self._since_checkpoint += 1

    def _dispatch(self, message) -> None:
        if isinstance(message, Malformed):
            raise ValueError(message.reason)
        if not isinstance(message, dict):
            raise ValueError(f"a message must be an object, got {type(message).__name__}")
        key = message.get("id")
        if isinstance(key, str) and len(key) > self.limits.string:  # (before the id is checked or shown)
            raise ValueError(f"a message id of {len(key)} characters, beyond Limits.string = {self.limits.string}")
        if not _valid_id(key):
            raise ValueError(f"a message needs an 'id' that is a string or an integer, got {key!r}")
        has_x, has_y = "x" in message, "y" in message
        if not has_x and not has_y:
            raise ValueError(f"message {key!r} has neither 'x' nor 'y'")
        if has_x and not isinstance(message["x"], dict):
            raise ValueError(f"message {key!r}: 'x' must be an object of features, got {type(message['x']).__name__}")
        self.limits.check(key, message["x"] if has_x else None, message.get("y"), has_y)
        now = message.get("time")
        now = self.clock() if now is None else _time(key, now)
        if has_x:
            x = message["x"]
            if has_y:
                self._check_label(key, message["y"])
            self._check_features(key, x)
            self.pending.expire(now)
            proba = self.model.predict_proba_one(x)
            self._counts.events += 1
            if self.on_prediction is not None:
                try:
                    self.on_prediction(key, proba)
                except BaseException as error:  # noqa: BLE001 - the caller's error, not the message's
                    raise _CallbackError(error) from error
            if has_y:
                self._learn(key, x, message["y"], _argmax(proba))
            else:
                self.pending.put(key, x, now, _argmax(proba))
            return
        y = message["y"]
        if y is None:
            raise ValueError(f"message {key!r}: 'y' must not be null")
        self.pending.expire(now)
        self._counts.labels += 1
        entry = self.pending.take(key, now)
        if entry is None:
            self._counts.unmatched += 1
            return
        self._check_label(key, y)
        self._learn(key, entry.x, y, entry.prediction)

    def _check_label(self, key, y) -> None:
        """A label the checkpoint can hold (or learning it would make every later checkpoint fail)."""
        if y is None:
            raise ValueError(f"message {key!r}: 'y' must not be null")
        problem = io.key_problem(_plain(y))
        if problem is not None:
            raise ValueError(f"message {key!r}: 'y' cannot be a class label: {problem}")

    def _check_features(self, key, x: dict) -> None:
        """Features a saved model can hold: names that are keys, values that are keys or missing.

        Only for models saved as records (``docs/saved-model.md``); the checkpoint of another model
        dead-letters a waiting event it cannot save. O(number of features).
        """
        if not checkpoints.saved_as_record(self.model):
            return
        for name, value in x.items():
            if type(name) is not str:
                problem = io.key_problem(_plain(name))
                if problem is not None:
                    raise ValueError(f"message {key!r}: feature name {_excerpt(name)[:60]}: {problem}")
            kind = type(value)
            if kind is float or kind is str or value is None or kind is bool:
                continue
            problem = io.key_problem(_plain(value), missing=True)
            if problem is not None:
                raise ValueError(f"message {key!r}: feature {name!r}: {problem}")

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
        ``rejected`` (messages dead-lettered), ``evicted`` / ``expired`` / ``replaced`` (pending
        events), ``pending`` (waiting now), ``checkpoints``, ``restarts``, ``last_error`` (of the
        last rejected message), ``dead_letters`` (letters ever added: the rejected messages and
        the waiting events a checkpoint could not save) and ``dead_letters_dropped`` (the oldest,
        beyond ``dead_letter_capacity``; ``runner.dead_letters`` holds the others).
        """
        counts = dataclasses.asdict(self._counts)
        counts.update(
            evicted=self.pending.evicted,
            expired=self.pending.expired,
            replaced=self.pending.replaced,
            pending=len(self.pending),
            dead_letters=self.dead_letters.total,
            dead_letters_dropped=self.dead_letters.dropped,
        )
        return counts

    def _check(self) -> None:
        self.pending._check()
        self.dead_letters._check()
        c = self._counts
        # Each message counts as one event or one label, unless rejected before that.
        assert c.events + c.labels <= c.messages <= c.events + c.labels + c.rejected
        assert c.correct <= c.learned <= c.events and c.unmatched <= c.labels


