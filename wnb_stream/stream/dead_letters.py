"""The stream runner's dead letters: messages it could not process, kept (bounded) with the error
they raised and saved with every checkpoint (its record: ``docs/saved-model.md#deadletters``).
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Iterator

from .. import io
from .._checks import integer


@dataclasses.dataclass(frozen=True, slots=True)
class DeadLetter:
    """A message the runner could not process: where it was read, its id if it had a usable one,
    the error, and an excerpt of the message (at most 1,000 characters, never the whole of it).

    ``position`` is the source position of the message (None for an event dropped at a checkpoint
    because its features could not be saved).
    """

    position: Any
    id: Any
    error: str
    message: str


class DeadLetters:
    """The dead-letter list: the last ``capacity`` dead letters, oldest first.

    Adding beyond ``capacity`` drops the oldest (counted in ``dropped``); ``total`` counts every
    letter ever added. The list is saved with each checkpoint, so it survives restarts.

    >>> letters = DeadLetters(capacity=2)
    >>> for i in range(3):
    ...     letters.add(DeadLetter(i, None, "ValueError: bad", "{...}"))
    >>> [letter.position for letter in letters], letters.total, letters.dropped
    ([1, 2], 3, 1)
    """

    def __init__(self, capacity: int = 1000):
        integer(capacity, "dead_letter_capacity", low=0)
        self.capacity = int(capacity)
        self._letters: collections.deque[DeadLetter] = collections.deque()
        self.total = 0
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._letters)

    def __iter__(self) -> Iterator[DeadLetter]:
        return iter(list(self._letters))

    def add(self, letter: DeadLetter) -> None:
        """Append ``letter``, dropping the oldest beyond capacity. O(1)."""
        self._letters.append(letter)
        self.total += 1
        while len(self._letters) > self.capacity:
            self._letters.popleft()
            self.dropped += 1

    def clear(self) -> list[DeadLetter]:
        """Remove and return the letters held (the counters stay)."""
        letters = list(self._letters)
        self._letters.clear()
        return letters

    def resized(self, capacity: int) -> DeadLetters:
        """A list of another capacity holding the same letters (the oldest dropped beyond it)."""
        other = DeadLetters(capacity)
        other.total, other.dropped = self.total - len(self._letters), self.dropped
        for letter in self._letters:
            other.add(letter)
        return other

    def __getstate__(self) -> dict:
        return {"capacity": self.capacity, "letters": list(self._letters), "total": self.total, "dropped": self.dropped}

    def __setstate__(self, state: dict) -> None:
        self.capacity, self.total, self.dropped = state["capacity"], state["total"], state["dropped"]
        self._letters = collections.deque(state["letters"])

    def _check(self) -> None:
        assert len(self._letters) <= self.capacity
        assert len(self._letters) + self.dropped <= self.total
        assert all(isinstance(letter, DeadLetter) for letter in self._letters)


def _check_letters(fields: io.Fields) -> None:
    params, state = fields.params, fields.state
    if len(state["letters"]) > params["capacity"]:
        fields.fail("letters", f"{len(state['letters'])} letters, beyond capacity = {params['capacity']}")
    if len(state["letters"]) + state["dropped"] > state["total"]:
        fields.fail("total", f"fewer letters added ({state['total']}) than held and dropped ({len(state['letters'])} + {state['dropped']})")
    for i, letter in enumerate(state["letters"]):
        if letter["id"] is not None and type(letter["id"]) is not str and type(letter["id"]) is not int:
            fields.fail(f"letters[{i}].id", f"an id is a str or an int, got {letter['id']!r}")


def _build(fields: io.Fields) -> DeadLetters:
    letters = DeadLetters(fields.params["capacity"])
    letters._letters.extend(DeadLetter(**letter) for letter in fields.state["letters"])
    letters.total, letters.dropped = fields.state["total"], fields.state["dropped"]
    return letters


io.register(
    "DeadLetters",
    DeadLetters,
    io.Schema(
        params={"capacity": io.Int(low=0, doc="most letters kept (dead_letter_capacity)")},
        state={
            "letters": io.List(
                io.Struct({
                    "position": io.Value(doc="source position of the message (null: an event a checkpoint could not save)"),
                    "id": io.Optional(io.Key(), doc="the message's id (str or int), when usable"),
                    "error": io.Str(doc="the error it raised"),
                    "message": io.Str(doc="an excerpt of the message"),
                }),
                doc="the letters kept, oldest first",
            ),
            "total": io.Int(low=0, doc="letters ever added"),
            "dropped": io.Int(low=0, doc="oldest letters dropped beyond capacity"),
        },
        checks=(_check_letters,),
    ),
    state=lambda letters: {
        "letters": [dataclasses.asdict(letter) for letter in letters._letters],
        "total": letters.total,
        "dropped": letters.dropped,
    },
    build=_build,
)

