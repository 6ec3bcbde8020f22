"""The one error a saved model that cannot be loaded raises, and how it names the place at fault."""

from __future__ import annotations

__all__ = ["ModelFileError", "LegacyFormatError", "join"]


class ModelFileError(ValueError):
    """A saved model that cannot be loaded: not a model file, truncated, corrupt, of a newer
    format version, or holding a value its schema does not allow.

    The message starts with the path of the offending field in the saved model, e.g.
    ``variables[3].summary.counts: expected shape (12, 2), got (12, 3)`` (``<file>`` for the
    envelope, ``<root>`` for the top record itself).

    >>> raise ModelFileError("counts: expected shape (12, 2), got (12, 3)")
    Traceback (most recent call last):
    ...
    wnb_stream.io.errors.ModelFileError: counts: expected shape (12, 2), got (12, 3)
    """


class LegacyFormatError(ModelFileError):
    """A file of the object-graph format of wnb_stream 0.1 (format name ``"wnb_stream"``, the
    private attributes of every object), which this library no longer reads: its content depends
    on the private attribute names of the classes of its time, so it cannot be migrated."""


def join(path: str, name: str | int) -> str:
    """The path of field ``name`` (a key) or item ``name`` (an int) inside ``path``.

    >>> join("", "variables"), join("variables", 3), join("variables[3]", "summary")
    ('variables', 'variables[3]', 'variables[3].summary')
    """
    if isinstance(name, int):
        return f"{path}[{name}]"
    return f"{path}.{name}" if path else name


def where(path: str) -> str:
    """``path``, or ``<root>`` for the top of the saved model (used at the start of messages)."""
    return path or "<root>"
