"""Checkpoints of the stream runner and of partitioned training, in the saved-model format.

A checkpoint is a file of the saved-model format (``docs/saved-model.md``): the same envelope,
checksum, limits and checks as ``model.save``, holding a ``StreamCheckpoint`` record (the
runner's position, counters, pending table, dead letters and model) or a
``CoordinatorCheckpoint`` record (the rounds, the examples absorbed, each partition's position
and the model). The model is its own record, the very payload ``model.save`` writes; a model
with no record (a River pipeline, a Hoeffding tree…) is held as its pickle, written and read
only when the caller says the checkpoint is trusted. The file is gzip when its name ends in
``.gz``, plain JSON otherwise; either is read. Writing is atomic (``io.atomic_write``).

A checkpoint of the object-graph format that earlier releases wrote (format name
``"wnb_stream"``) is refused with a ``ModelFileError`` that says what to do: it cannot be
migrated, since its content is the private attributes of the classes of its time.

Examples
--------
>>> import pathlib, tempfile
>>> from wnb_stream import WeightedNaiveBayes
>>> model = WeightedNaiveBayes(seed=0)
>>> model.learn_one({"u": 1.0}, True)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "rounds.json.gz"
>>> write(path, CoordinatorCheckpoint(rounds=1, absorbed=1, positions={"p0": 1}, model=model))
>>> path.read_bytes()[:2] == b"\\x1f\\x8b"   # gzip, as its name says
True
>>> back = read(path, CoordinatorCheckpoint)
>>> back.positions, back.model.predict_one({"u": 1.0})
({'p0': 1}, True)
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import glob
import os
import pickle
from typing import Any

from .. import io
from .dead_letters import DeadLetters
from .pending import PendingTable

__all__ = [
    "StreamCheckpoint",
    "CoordinatorCheckpoint",
    "Pickled",
    "write",
    "read",
    "dumps",
    "checkpointable",
    "model_part",
    "saved_as_record",
    "remove_temporaries",
]

_RECORD_CLASSES: dict[int, frozenset] = {}


def saved_as_record(model) -> bool:
    """True for a model with a saved-model record (``docs/saved-model.md``)."""
    names = io.registered()
    classes = _RECORD_CLASSES.get(len(names))  # (record types are only ever added)
    if classes is None:
        classes = _RECORD_CLASSES[len(names)] = frozenset(io.entry(name).cls for name in names)
    return type(model) in classes


def checkpointable(model, trusted: bool) -> None:
    """``ValueError`` naming ``trusted_checkpoint`` when ``model`` has no record and the
    checkpoint is not trusted (it could only be pickled). O(1)."""
    if not trusted and not saved_as_record(model):
        raise ValueError(
            f"a {type(model).__name__} has no safe checkpoint format (only WeightedNaiveBayes has); "
            "pass trusted_checkpoint=True to checkpoint it with pickle (load such checkpoints only from a place only you can write)"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Pickled:
    """A model with no saved-model record, as its pickle (in a trusted checkpoint only)."""

    data: bytes

    @classmethod
    def of(cls, model) -> Pickled:
        return cls(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))

    def load(self, trusted: bool, path: str):
        """The model; ``ValueError`` unless ``trusted`` (loading a pickle runs code)."""
        if not trusted:
            raise ValueError(f"{path!r} holds a pickled model: restore it only with trusted_checkpoint=True (loading a pickle runs code)")
        return pickle.loads(self.data)


def model_part(model, trusted: bool):
    """What a checkpoint holds of ``model``: the model itself when it has a record, else its
    ``Pickled`` form (``ValueError`` unless ``trusted``)."""
    if saved_as_record(model):
        return model
    checkpointable(model, trusted)
    return Pickled.of(model)


@dataclasses.dataclass(slots=True)
class StreamCheckpoint:
    """What a stream runner's checkpoint holds: the source ``position`` of the last message
    processed, the runner's ``counts`` (a dict), the ``pending`` table, the ``dead_letters`` and
    the ``model`` (the model object, or its ``Pickled`` form)."""

    position: Any
    counts: dict
    pending: PendingTable
    dead_letters: DeadLetters
    model: Any


@dataclasses.dataclass(slots=True)
class CoordinatorCheckpoint:
    """What a coordinator of partitioned training saves each round: the ``rounds`` run, the
    examples ``absorbed``, the position of each partition (``positions``), the ``model`` and the
    change ``detector`` it runs across rounds (a ``Monitor``; None: none)."""

    rounds: int
    absorbed: int
    positions: dict
    model: Any
    detector: Any = None


def _model_fields(checkpoint) -> dict:
    pickled = checkpoint.model if isinstance(checkpoint.model, Pickled) else None
    return {
        "model": None if pickled is not None else checkpoint.model,
        "pickle": None if pickled is None else base64.b64encode(pickled.data).decode("ascii"),
    }


def _model_of(fields: io.Fields):
    state = fields.state
    if (state["model"] is None) == (state["pickle"] is None):
        fields.fail("model", "a checkpoint holds exactly one of model and pickle")
    if state["model"] is not None:
        return state["model"]
    try:
        return Pickled(base64.b64decode(state["pickle"].encode("ascii"), validate=True))
    except (binascii.Error, UnicodeEncodeError):
        fields.fail("pickle", "not valid base64")


_MODEL_FIELDS = {
    "model": io.Optional(io.Record(), doc="the model's record, as model.save writes it (null: pickled)"),
    "pickle": io.Optional(io.Str(), doc="base64 of the model's pickle, for a model with no record in a trusted checkpoint (else null)"),
}

#: The runner's counters, in a checkpoint (``StreamRunner.stats``).
COUNTS = {
    "messages": "messages processed",
    "events": "events predicted",
    "labels": "labels received",
    "learned": "examples learned",
    "correct": "learned events whose prediction on arrival was right",
    "unmatched": "labels without a waiting event",
    "rejected": "messages dead-lettered",
    "checkpoints": "checkpoints saved",
    "restarts": "restarts from a checkpoint",
}


def _check_counts(fields: io.Fields) -> None:
    c = fields.state["counts"]
    if not c["events"] + c["labels"] <= c["messages"] <= c["events"] + c["labels"] + c["rejected"]:
        fields.fail("counts.messages", "each message counts as one event or one label, unless rejected before that")
    if not c["correct"] <= c["learned"] <= c["events"]:
        fields.fail("counts.learned", "must be at least correct and at most events")
    if c["unmatched"] > c["labels"]:
        fields.fail("counts.unmatched", "must be at most labels")
    _model_of(fields)


io.register(
    "StreamCheckpoint",
    StreamCheckpoint,
    io.Schema(
        state={
            "position": io.Value(doc="source position of the last message processed (null: none yet)"),
            "counts": io.Struct(
                {name: io.Int(low=0, doc=doc) for name, doc in COUNTS.items()} | {"last_error": io.Optional(io.Str(), doc="of the last rejected message")},
                doc="the runner's counters (stats)",
            ),
            "pending": io.Record("PendingTable", doc="events waiting for their labels"),
            "dead_letters": io.Record("DeadLetters", doc="messages the runner could not process"),
            **_MODEL_FIELDS,
        },
        checks=(_check_counts,),
    ),
    state=lambda checkpoint: {
        "position": checkpoint.position,
        "counts": checkpoint.counts,
        "pending": checkpoint.pending,
        "dead_letters": checkpoint.dead_letters,
        **_model_fields(checkpoint),
    },
    build=lambda fields: StreamCheckpoint(
        fields.state["position"], fields.state["counts"], fields.state["pending"], fields.state["dead_letters"], _model_of(fields)
    ),
)


def _check_partitions(fields: io.Fields) -> None:
    seen: dict = {}
    for i, entry in enumerate(fields.state["positions"]):
        if entry["partition"] in seen:
            fields.fail(f"positions[{i}].partition", f"{entry['partition']!r} repeats item {seen[entry['partition']]}")
        seen[entry["partition"]] = i
    _model_of(fields)


io.register(
    "CoordinatorCheckpoint",
    CoordinatorCheckpoint,
    io.Schema(
        state={
            "rounds": io.Int(low=0, doc="rounds run"),
            "absorbed": io.Int(low=0, doc="examples absorbed"),
            "positions": io.List(
                io.Struct({
                    "partition": io.Key(doc="the partition"),
                    "position": io.Value(doc="the source position up to which the model holds it"),
                }),
                doc="each partition's position, in the order they were first absorbed",
            ),
            **_MODEL_FIELDS,
            "detector": io.Optional(
                io.Record("Monitor"), doc="the change detector across rounds: its buckets of the learners' errors (null: none; since version 10)"
            ),
        },
        checks=(_check_partitions,),
    ),
    state=lambda checkpoint: {
        "rounds": checkpoint.rounds,
        "absorbed": checkpoint.absorbed,
        "positions": [{"partition": p, "position": at} for p, at in checkpoint.positions.items()],
        **_model_fields(checkpoint),
        "detector": checkpoint.detector,
    },
    build=lambda fields: CoordinatorCheckpoint(
        fields.state["rounds"],
        fields.state["absorbed"],
        {entry["partition"]: entry["position"] for entry in fields.state["positions"]},
        _model_of(fields),
        fields.state["detector"],
    ),
)


def dumps(checkpoint, path: str | os.PathLike) -> bytes:
    """The bytes of ``checkpoint``'s file at ``path``: gzip when the name ends in ``.gz``.
    ``TypeError``/``ValueError`` for a value that cannot be saved. O(size)."""
    return io.pack(io.to_record(checkpoint), compress=os.fspath(path).endswith(".gz"))


def write(path: str | os.PathLike, checkpoint) -> None:
    """Write ``checkpoint`` to ``path`` atomically (``io.atomic_write``); the bytes are made
    before the file is touched."""
    io.atomic_write(path, dumps(checkpoint, path))


def read(path: str | os.PathLike, kind: type):
    """The checkpoint of class ``kind`` saved at ``path``, checked as a saved model is.

    ``ModelFileError`` (a ``ValueError``) for a damaged file, a file of another kind, or a
    checkpoint of the old object-graph format (which says what to do).
    """
    path = os.fspath(path)
    try:
        found = io.load(path)
    except io.LegacyFormatError:
        raise io.ModelFileError(
            f"{path!r}: a checkpoint of the object-graph format of earlier wnb_stream releases (format 'wnb_stream'), which "
            "this release cannot read or migrate (docs/saved-model.md#checkpoints): finish the stream with the release that "
            "wrote it, or start afresh (StreamRunner(..., resume=False) or delete the file), reading the source from its beginning"
        ) from None
    if type(found) is not kind:
        what = "a stream checkpoint" if kind is StreamCheckpoint else "a checkpoint of partitioned training"
        raise io.ModelFileError(f"{path!r} is a wnb_stream file but not {what} (it holds a {type(found).__name__})")
    return found


def remove_temporaries(path: str) -> None:
    """Delete temporary files an interrupted write of ``path`` may have left."""
    directory = os.path.dirname(os.path.abspath(path))
    pattern = os.path.join(glob.escape(directory), "." + glob.escape(os.path.basename(path)) + ".*.tmp")
    for leftover in glob.glob(pattern):
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass
