"""How the stream runner puts a model into a checkpoint and takes it back out: the saved-model
record for our models, pickle only when the checkpoint is trusted.
"""

from __future__ import annotations

import glob
import os

from . import io, persistence

_RECORD_CLASSES: dict[int, frozenset] = {}


def _saved_as_record(model) -> bool:
    """True for a model with a saved-model record (``docs/saved-model.md``)."""
    names = io.registered()
    classes = _RECORD_CLASSES.get(len(names))  # (record types are only ever added)
    if classes is None:
        classes = _RECORD_CLASSES[len(names)] = frozenset(io.entry(name).cls for name in names)
    return type(model) in classes


def _model_for_checkpoint(model, trusted: bool):
    """How ``model`` goes into a checkpoint: ``{"record": …}`` for a model with a saved-model record
    (``docs/saved-model.md``); the object itself when the checkpoint format encodes it (objects of
    this package); ``{"pickle": bytes}`` for any other model when the checkpoint is trusted.
    ``ValueError`` naming ``trusted_checkpoint`` otherwise."""
    if _saved_as_record(model):
        return {"record": io.to_record(model)}
    try:
        persistence.to_state(model)
    except TypeError:
        if not trusted:
            raise ValueError(
                f"a {type(model).__name__} has no safe checkpoint format (only WeightedNaiveBayes has); "
                "pass trusted_checkpoint=True to checkpoint it with pickle (load such checkpoints only from a place only you can write)"
            ) from None
        import pickle

        return {"pickle": pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)}
    return model


def _model_from_checkpoint(saved, trusted: bool, path: str):
    if isinstance(saved, dict) and set(saved) == {"record"}:
        return io.from_record(saved["record"], "model")
    if isinstance(saved, dict) and set(saved) == {"pickle"}:
        if not trusted:
            raise ValueError(f"{path!r} holds a pickled model: restore it only with trusted_checkpoint=True (loading a pickle runs code)")
        import pickle

        return pickle.loads(saved["pickle"])
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
