"""Helpers shared by the stream runner's test modules (test modules do not import each other)."""

from __future__ import annotations

import functools

from wnb_stream.stream import StreamRunner, checkpoints

#: A runner whose checkpoint may hold a pickle (the tests' recording models have no saved-model record).
Trusted = functools.partial(StreamRunner, trusted_checkpoint=True)


def saved(path) -> checkpoints.StreamCheckpoint:
    """The checkpoint at ``path``, its model unpickled (our own file)."""
    checkpoint = checkpoints.read(path, checkpoints.StreamCheckpoint)
    if isinstance(checkpoint.model, checkpoints.Pickled):
        checkpoint.model = checkpoint.model.load(True, path)
    return checkpoint
