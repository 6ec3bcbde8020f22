"""Sources of messages for the stream runner: a list, a JSON-lines file; the protocol a source
follows (iterate positions and messages, seek to a saved position, optionally commit).
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import typing
from typing import Any, Iterator



from .dead_letters import _excerpt


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

    Blank lines are skipped. A line that cannot be decoded (not UTF-8, not JSON, an integer too
    long for Python to read, arrays nested too deeply) is yielded as ``Malformed`` (the runner
    dead-letters it), except the file's last line when it has no final newline: that one may
    still be being written, so it is left for a later read, unless it already parses. The
    iteration itself never raises for the content of a line.

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
                except MemoryError:
                    raise
                except Exception as error:  # noqa: BLE001 - bad UTF-8 or JSON, an integer too long, nesting too deep
                    if not complete:
                        return  # a last line still being written: read it next time
                    message = Malformed(f"invalid JSON line: {type(error).__name__}: {error}", _excerpt(text.decode("utf-8", "replace")))
                self._offset = handle.tell()
                yield self._offset, message
