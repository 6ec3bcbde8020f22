"""Redis Streams as a ``StreamRunner`` source, with a consumer group and exactly-once learning.

Needs the optional extra ``redis`` (``pip install "wnb-stream[redis]"``).

Each stream entry holds one message (``{"id": ..., "x": {...}}`` or ``{"id": ..., "y": ...}``) as
JSON in the field ``data``; ``publish`` writes one. ``RedisStreamSource`` reads the stream through
a consumer group, and its position is the stream entry id (``"1700000000000-0"``).

Why nothing is lost or learned twice
------------------------------------
The runner processes messages, then saves its checkpoint (model + the last processed entry id,
atomically), then calls ``commit``, which ``XACK``-s the entries up to that id. The acking rule:
**an entry is acknowledged only by ``commit(position)``, and the runner calls ``commit`` only with
the position of a checkpoint it has just saved**, so every acknowledged entry is held by a saved
checkpoint, whatever the calling pattern (a crash, a second ``run()`` on the same runner after an
exception, a loop of ``step``/``maybe_checkpoint`` of one's own). A crash may happen anywhere:

- entries delivered but not acknowledged stay in the group's pending entries list (PEL); each
  iteration of the source reads them again first (``XREADGROUP`` with id ``0``, in id order),
  before any new entry (``>``), so the replay follows stream order;
- entries whose id is at or below the position the runner sought (``seek``) were already learned
  by the runner's model: they are skipped, and acknowledged by the next ``commit`` (never on
  sight: after a second ``run()`` on the same runner that position may be ahead of the saved
  checkpoint, and acking then would lose them if the process died before the next checkpoint);
- the others are processed again on the restored model, which had not learned them.

So every label is learned exactly once as long as one consumer at a time serves a group (one
model per group). A consumer that restarts under another name takes over the entries the dead
one left pending with ``XAUTOCLAIM`` (``claim_idle_ms``). Without a checkpoint file the runner
still calls ``commit`` after each (empty) checkpoint, so the backlog stays bounded, but then
nothing survives a crash.

Poison entries
--------------
An entry that cannot be decoded (no ``data`` field, not JSON, an integer of thousands of digits,
arrays nested too deeply) is handed to the runner as ``Malformed``, never raised inside the
iteration: the runner dead-letters it (``StreamRunner.dead_letters``), moves past it and acks it
with the next checkpoint, so a restart does not meet it again.

Examples
--------
>>> source = RedisStreamSource(client=None, stream="events", group="wnb", consumer="worker-1")
>>> source.seek("1700000000000-3")
>>> source.after
(1700000000000, 3)
"""

from __future__ import annotations

import collections
import json
import time
from typing import Any, Iterator

from .sources import MAX_LINE_BYTES, Malformed, check_max_line_bytes

__all__ = ["RedisStreamSource", "publish", "parse_id"]

FIELD = "data"


def parse_id(entry_id: Any) -> tuple[int, int]:
    """``(milliseconds, sequence)`` of a stream entry id (``str`` or ``bytes``), for ordering.

    >>> parse_id(b"1700000000000-12") < parse_id("1700000000001-0")
    True
    """
    if isinstance(entry_id, bytes):
        entry_id = entry_id.decode("ascii")
    if not isinstance(entry_id, str):
        raise ValueError(f"a stream entry id must be a string like '1700000000000-0', got {entry_id!r}")
    ms, _, seq = entry_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        raise ValueError(f"a stream entry id must look like '1700000000000-0', got {entry_id!r}") from None


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def publish(client, stream: str, message: dict, *, maxlen: int | None = None) -> str:
    """Append ``message`` as JSON to ``stream`` (``XADD``); return the new entry id.

    ``maxlen`` caps the stream length (approximate trimming); keep it well above what a consumer
    can lag behind, or entries are trimmed before they are read.
    """
    text = json.dumps(message, allow_nan=False, separators=(",", ":"))
    kwargs = {} if maxlen is None else {"maxlen": maxlen, "approximate": True}
    return _text(client.xadd(stream, {FIELD: text}, **kwargs))


def _entries(response) -> list:
    """The ``(id, fields)`` pairs of an ``XREADGROUP`` reply for one stream (RESP2 or RESP3)."""
    if not response:
        return []
    if isinstance(response, dict):  # RESP3: {stream: [[(id, fields), ...]]}
        entries = next(iter(response.values()))
        if entries and isinstance(entries[0], list):
            entries = entries[0]
        return list(entries)
    return list(response[0][1])  # RESP2: [[stream, [(id, fields), ...]]]


class RedisStreamSource:
    """Read a Redis stream through a consumer group; the position is the last entry id processed.

    Parameters
    ----------
    client
        A ``redis.Redis`` client (``decode_responses`` either way).
    stream, group, consumer
        Stream key, consumer group and this consumer's name. The group is created at the start of
        the stream (``MKSTREAM``) if missing.
    batch_size
        Entries fetched per ``XREADGROUP`` call (>= 1).
    block_ms
        How long one read waits for new entries, in milliseconds (>= 1).
    idle_timeout
        End the iteration after this many seconds without a new entry; None waits forever.
    claim_idle_ms
        If not None, take over entries pending for at least this many milliseconds at other
        consumers of the group (``XAUTOCLAIM``) before reading; for a consumer that replaces a dead
        one under a new name.
    max_line_bytes
        Largest entry decoded, in bytes (``sources.MAX_LINE_BYTES``, 1 MiB, by default): a larger
        one is handed on as ``Malformed`` (dead-lettered and acknowledged), not parsed.

    Notes
    -----
    ``seek(position)`` only sets the id at or below which entries are skipped: where reading
    starts is the group's business (its pending list, then new entries). Delivered entries, the
    skipped ones included, are acknowledged by ``commit(position)`` only, which the runner calls
    after each checkpoint; the ids awaiting it are kept in a deque (at most the entries read since
    the last checkpoint), emptied at each new iteration since the pending list is read again.
    """

    def __init__(
        self,
        client,
        stream: str,
        group: str,
        consumer: str,
        *,
        batch_size: int = 100,
        block_ms: int = 1000,
        idle_timeout: float | None = None,
        claim_idle_ms: int | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
    ):
        self.max_line_bytes = check_max_line_bytes(max_line_bytes)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        if not isinstance(block_ms, int) or block_ms < 1:
            raise ValueError(f"block_ms must be an integer >= 1, got {block_ms!r}")
        if idle_timeout is not None and not idle_timeout >= 0:
            raise ValueError(f"idle_timeout must be None or >= 0 seconds, got {idle_timeout!r}")
        if claim_idle_ms is not None and (not isinstance(claim_idle_ms, int) or claim_idle_ms < 0):
            raise ValueError(f"claim_idle_ms must be None or an integer >= 0, got {claim_idle_ms!r}")
        self.client = client
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.batch_size = batch_size
        self.block_ms = block_ms
        self.idle_timeout = idle_timeout
        self.claim_idle_ms = claim_idle_ms
        self.after: tuple[int, int] | None = None
        self._unacked: collections.deque[tuple[tuple[int, int], str]] = collections.deque()
        self.skipped = 0  # entries at or below the checkpoint, acknowledged without processing
        self.lost = 0  # pending entries of other consumers deleted from the stream (XAUTOCLAIM)

    # ------------------------------------------------------------------ source protocol
    def seek(self, position: str | None) -> None:
        """Skip entries with ids at or below ``position`` (None: skip nothing)."""
        self.after = None if position is None else parse_id(position)

    def commit(self, position: str | None) -> None:
        """Acknowledge every delivered entry with an id at or below ``position`` (``XACK``)."""
        if position is None:
            return
        limit = parse_id(position)
        done = []
        while self._unacked and self._unacked[0][0] <= limit:
            done.append(self._unacked.popleft()[1])
        self._ack(done)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        # The pending list is read again below: what awaited acknowledgement is delivered again.
        self._unacked.clear()
        self._ensure_group()
        if self.claim_idle_ms is not None:
            self._claim()
        # 1. Entries delivered to this consumer earlier and never acknowledged, in id order.
        last = "0-0"
        while True:
            reply = self.client.xreadgroup(self.group, self.consumer, {self.stream: last}, count=self.batch_size)
            entries = _entries(reply)
            if not entries:
                break
            for entry_id, fields in entries:
                last = _text(entry_id)
                yield from self._deliver(last, fields)
        # 2. New entries.
        idle_since = time.monotonic()
        block = self.block_ms
        if self.idle_timeout is not None:
            block = max(1, min(block, int(self.idle_timeout * 1000)))
        while True:
            reply = self.client.xreadgroup(
                self.group, self.consumer, {self.stream: ">"}, count=self.batch_size, block=block
            )
            entries = _entries(reply)
            if not entries:
                if self.idle_timeout is not None and time.monotonic() - idle_since >= self.idle_timeout:
                    return
                continue
            for entry_id, fields in entries:
                yield from self._deliver(_text(entry_id), fields)
            idle_since = time.monotonic()

    # ------------------------------------------------------------------ internals
    def _ensure_group(self) -> None:
        try:
            self.client.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except Exception as error:  # redis.ResponseError, without importing redis here
            if "BUSYGROUP" not in str(error):
                raise

    def _claim(self) -> None:
        start = "0-0"
        # Each call scans at most `count` PEL entries and returns the cursor to go on from; "0-0"
        # ends the scan. Claimed entries join this consumer's PEL and are read in phase 1.
        # (redis-py drops the cursor when justid=True, so the entries are fetched.)
        while True:
            reply = self.client.xautoclaim(
                self.stream, self.group, self.consumer, self.claim_idle_ms, start_id=start, count=self.batch_size
            )
            start = _text(reply[0])
            if len(reply) > 2:
                self.lost += len(reply[2])  # entries trimmed from the stream before anyone acked them
            if parse_id(start) == (0, 0):
                return

    def _deliver(self, entry_id: str, fields) -> Iterator[tuple[str, Any]]:
        key = parse_id(entry_id)
        self._unacked.append((key, entry_id))
        if self.after is not None and key <= self.after:
            # Learned already (before a crash, or by this runner's model before a second run()):
            # not processed again, and acknowledged only by the next commit, i.e. once a saved
            # checkpoint holds it.
            self.skipped += 1
            return
        yield entry_id, self._decode(fields)

    def _decode(self, fields) -> Any:
        """The message of an entry, or ``Malformed``: the content of an entry never raises here."""
        if not fields:
            return Malformed("stream entry deleted before it was read")
        try:
            raw = fields.get(FIELD, fields.get(FIELD.encode()))
            if raw is None:
                return Malformed(f"stream entry has no {FIELD!r} field")
            if isinstance(raw, bytes):
                size, head = len(raw), raw[:200].decode("utf-8", "replace")
            else:  # (a str of more characters than the limit is beyond it in bytes too)
                raw = str(raw)
                size = len(raw) if len(raw) > self.max_line_bytes else len(raw.encode("utf-8", "surrogatepass"))
                head = raw[:200]
            if size > self.max_line_bytes:
                return Malformed(f"a stream entry of {size} bytes or more, beyond max_line_bytes = {self.max_line_bytes}", head)
            text = _text(raw)
        except MemoryError:
            raise
        except Exception as error:  # noqa: BLE001 - bytes that are not UTF-8, say
            return Malformed(f"unreadable stream entry: {type(error).__name__}: {error}")
        try:
            return json.loads(text)
        except MemoryError:
            raise
        except Exception as error:  # noqa: BLE001 - not JSON, an integer too long, nesting too deep
            return Malformed(f"invalid JSON in stream entry: {type(error).__name__}: {error}", text[:200])

    def _ack(self, ids: list) -> None:
        for start in range(0, len(ids), 1000):
            self.client.xack(self.stream, self.group, *ids[start : start + 1000])
