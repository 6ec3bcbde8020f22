"""Sources of messages for the stream runner: a list, a JSON-lines file; the protocol a source
follows (iterate positions and messages, seek to a saved position, optionally commit).
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from typing import Any, Iterator

from .._checks import integer
from ..summaries.policy import excerpt as _excerpt

#: Longest line (or stream entry) a source decodes by default, in bytes: longer ones are handed on
#: as ``Malformed`` (dead-lettered) without being held whole. A message of ten thousand features
#: with names and values of some twenty characters is about 0.5 MB.
MAX_LINE_BYTES = 1 << 20


def check_max_line_bytes(value) -> int:
    return int(integer(value, "max_line_bytes", low=1, unit=" (bytes)"))


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """Size limits on a message's content, checked by ``StreamRunner`` before the model sees it: a
    message beyond one is dead-lettered (a ``ValueError`` naming the field and the limit), never
    learned, so that one message cannot make every later checkpoint large and slow.

    The line of a message is bounded by its source (``max_line_bytes``, ``MAX_LINE_BYTES`` by
    default). The defaults leave room for wide sparse rows (the benchmarks' have some 100 of
    100,000 features) and for text values of a few pages.

    Parameters
    ----------
    features
        Most features in one message's ``x``.
    string
        Longest string (or bytes) value, label or id, in characters.
    name
        Longest feature name, in characters.

    Examples
    --------
    >>> Limits(string=100)
    Limits(features=100000, string=100, name=1024)
    """

    features: int = 100_000
    string: int = 65_536
    name: int = 1_024

    def __post_init__(self):
        for field in ("features", "string", "name"):
            value = getattr(self, field)
            integer(value, f"Limits.{field}", low=1)

    def check(self, key, x, y=None, has_y: bool = False) -> None:
        """``ValueError`` naming the first field of a message beyond a limit. O(features)."""
        if isinstance(key, str) and len(key) > self.string:
            raise ValueError(f"a message id of {len(key)} characters, beyond Limits.string = {self.string}")
        if has_y and isinstance(y, str | bytes) and len(y) > self.string:
            raise ValueError(f"message {key!r}: 'y' is a string of {len(y)} characters, beyond Limits.string = {self.string}")
        if x is None:
            return
        if len(x) > self.features:
            raise ValueError(f"message {key!r}: 'x' has {len(x)} features, beyond Limits.features = {self.features}")
        for name, value in x.items():
            if isinstance(name, str | bytes) and len(name) > self.name:
                raise ValueError(
                    f"message {key!r}: a feature name of {len(name)} characters ({_excerpt(name)[:40]!r}…), "
                    f"beyond Limits.name = {self.name}"
                )
            if isinstance(value, str | bytes) and len(value) > self.string:
                raise ValueError(
                    f"message {key!r}: feature {name!r}: a string of {len(value)} characters, beyond Limits.string = {self.string}"
                )


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
        integer(position, "position", optional=True)
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

    Blank lines are skipped. A line that cannot be decoded (not UTF-8, not JSON, an integer too
    long for Python to read, arrays nested too deeply) is yielded as ``Malformed`` (the runner
    dead-letters it), except the file's last line when it has no final newline: that one may
    still be being written, so it is left for a later read, unless it already parses. The
    iteration itself never raises for the content of a line.

    A line longer than ``max_line_bytes`` is yielded as ``Malformed`` without being held whole
    (it is read on in blocks to its end), so a line of any size costs O(max_line_bytes) memory.

    Parameters
    ----------
    path
        The file to read (it may grow between runs; it is opened at each iteration).
    max_line_bytes
        Longest line decoded, in bytes (``MAX_LINE_BYTES``, 1 MiB, by default).

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

    def __init__(self, path: str | os.PathLike, *, max_line_bytes: int = MAX_LINE_BYTES):
        self.path = os.fspath(path)
        self.max_line_bytes = check_max_line_bytes(max_line_bytes)
        self._offset = 0

    def seek(self, position: int | None) -> None:
        """Start the next iteration at byte ``position`` (None: the start of the file). O(1)."""
        if position is None:
            position = 0
        integer(position, "position", low=0, optional=True, what="a byte offset")
        self._offset = int(position)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            while True:
                line = handle.readline(self.max_line_bytes + 1)
                if not line:
                    return
                complete = line.endswith(b"\n")
                if not complete and len(line) > self.max_line_bytes:
                    skipped, complete = _skip_line(handle)
                    if not complete:
                        return  # a last line still being written: read it next time
                    size = len(line) + skipped
                    self._offset = handle.tell()
                    reason = f"a line of {size} bytes, beyond max_line_bytes = {self.max_line_bytes}"
                    yield self._offset, Malformed(reason, _excerpt(line[:1000].decode("utf-8", "replace")))
                    continue
                text = line.strip()
                if not text:
                    if not complete:
                        return
                    self._offset = handle.tell()
                    continue
                try:
                    message = json.loads(text.decode("utf-8"))
                except MemoryError:
                    raise
                except Exception as error:  # noqa: BLE001 - bad UTF-8 or JSON, an integer too long, nesting too deep
                    if not complete:
                        return  # a last line still being written: read it next time
                    message = Malformed(f"invalid JSON line: {type(error).__name__}: {error}", _excerpt(text.decode("utf-8", "replace")))
                self._offset = handle.tell()
                yield self._offset, message


def _skip_line(handle, block: int = 1 << 16) -> tuple[int, bool]:
    """Read ``handle`` on to just after the next newline (or to its end), in blocks: the bytes
    read, and whether a newline ended them."""
    skipped = 0
    while True:
        part = handle.readline(block)
        skipped += len(part)
        if not part or part.endswith(b"\n"):
            return skipped, bool(part)
