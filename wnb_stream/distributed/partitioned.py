"""One model trained on many partitions of a stream, in rounds: the engine-free core.

A stream too fast for one consumer is split into partitions (Kafka partitions, the consumers of
a Redis group, file shards). Each partition gets a ``Learner``: it reads its source, predicts
each example with the latest published ``Predictor`` (the serving path) and counts it into a
``Delta`` (level 1 and the raw rows, ``wnb_stream.serving.delta``). Every round, a ``Coordinator``
takes the learners' ``Report`` (a delta and the source positions it spans), folds the deltas into
the model (``WeightedNaiveBayes.absorb``: summaries merged, level 2 rebuilt where due, the
weights stepped on the round's rows), saves the model and every partition's position in one
atomic checkpoint and returns the new predictor for the learners.

Exactly once. A report spans the positions ``start`` → ``position`` of its partition. The
coordinator absorbs a report only if its ``start`` is the position the model holds for the
partition (else ``ValueError``: a gap or a repeat), and the checkpoint holds the model together
with the positions it has absorbed. After a crash, the coordinator restores the checkpoint and
each learner restarts from the checkpoint's position of its partition (``Learner.reset``):
examples read but not absorbed are read again, none is absorbed twice.

These are plain objects: ``wnb_stream.distributed.ray`` runs them as Ray actors; a Dask or Spark adapter
would move the same reports. ``docs/algorithms/merge.md#rounds`` describes a round.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import os
import threading
import time
from typing import Any, Callable, Hashable, Iterable, Iterator

import numpy as np

from .._checks import integer
from ..stream import checkpoints, warm_up
from ..stream.checkpoints import CoordinatorCheckpoint
from ..stream.sources import Malformed

__all__ = [
    "Coordinator", "IterableSource", "Learner", "Merged", "Progress", "Report", "example", "forget_rows", "interleaved", "load_kernels",
    "merge_reports", "merged_in_a_tree",
]  # fmt: skip


def example(message) -> tuple[dict, Any]:
    """``(x, y)`` of a message: ``{"x": {...}, "y": label}`` (extra keys ignored) or a pair ``(x, y)``.

    ``ValueError`` for anything else (the learner counts it as rejected).

    >>> example({"x": {"a": 1.0}, "y": True}), example(({"a": 1.0}, True))
    (({'a': 1.0}, True), ({'a': 1.0}, True))
    """
    if isinstance(message, dict) and "x" in message and "y" in message:
        x, y = message["x"], message["y"]
    elif isinstance(message, tuple | list) and len(message) == 2:
        x, y = message
    else:
        raise ValueError(f"a message is {{'x': features, 'y': label}} or (x, y), got {type(message).__name__}")
    if not isinstance(x, dict):
        raise ValueError(f"the features of a message must be a dict, got {type(x).__name__}")
    return x, y


def interleaved(parts: list) -> np.ndarray:
    """The 0/1 arrays ``parts`` (each oldest first) in one sequence, each value placed by its
    relative position in its own array, (i + ½) / n, ties to the earlier part: partitions read
    side by side over one span of the stream interleave evenly (as the window of a merge).

    >>> interleaved([np.array([1, 1]), np.array([0, 0, 0, 0])]).astype(int).tolist()
    [0, 1, 0, 0, 1, 0]
    """
    parts = [np.asarray(part, dtype=bool) for part in parts]
    if not parts:
        return np.zeros(0, dtype=bool)
    position = np.concatenate([(np.arange(len(part)) + 0.5) / max(len(part), 1) for part in parts])
    return np.concatenate(parts)[np.argsort(position, kind="stable")]


def forget_rows(since: int, errors: int, rows: int, window: int) -> int:
    """Rows of the model's window to keep after a change found ``since`` errors ago, when the
    round brought ``errors`` errors and ``rows`` rows to the window (its newest): the round's
    rows in the proportion ``since / errors`` (more than all of them when the change came in an
    earlier round), at most the ``window``.

    >>> forget_rows(300, 1000, 2500, 5000), forget_rows(1500, 1000, 2500, 5000), forget_rows(9000, 1000, 2500, 5000)
    (750, 3750, 5000)
    """
    return int(min(window, -(-since * rows // max(errors, 1))))


class IterableSource:
    """Any re-iterable sequence of messages as a source: ``factory()`` returns a fresh iterable
    of the partition's messages, in the same order every time; the position is the number read.

    ``seek(position)`` makes the next iteration skip the first ``position`` messages (O(position)
    for a plain iterable). The factory must be picklable to run in another process.

    >>> source = IterableSource(lambda: iter(["a", "b", "c"]))
    >>> source.seek(1)
    >>> list(source)
    [(2, 'b'), (3, 'c')]
    """

    def __init__(self, factory: Callable[[], Iterable]):
        self.factory = factory
        self._start = 0

    def seek(self, position: int | None) -> None:
        position = 0 if position is None else position
        self._start = int(integer(position, "position", low=0, optional=True))

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        start = self._start
        for i, message in enumerate(itertools.islice(self.factory(), start, None), start=start + 1):
            self._start = i
            yield i, message


@dataclasses.dataclass
class Report:
    """What a learner hands the coordinator at the end of a run."""

    partition: Hashable
    delta: Any  # Delta: the examples learned in this run
    start: Any  # the source position the run started from
    position: Any  # the position after the last message read
    messages: int = 0  # messages read
    rejected: int = 0  # messages that were not a usable example
    predicted: int = 0  # examples predicted with a published predictor before they were learned
    correct: int = 0  # of which the predicted class was the label
    exhausted: bool = False  # the source had nothing more to read
    seconds: float = 0.0  # time spent in the run
    # (predicted,) bool: True where the published predictor was wrong, in the order read (the
    # prequential errors the coordinator's change detector reads; None in a report of before)
    errors: Any = None


@dataclasses.dataclass
class Progress:
    """What a driver's ``train`` did (``distributed.ray``, ``distributed.local``): rounds, examples,
    time, and per-round costs."""

    rounds: int = 0
    examples: int = 0  # examples absorbed in this call
    messages: int = 0  # messages read (rejected ones and ones read again after a restart included)
    rejected: int = 0
    predicted: int = 0
    correct: int = 0
    seconds: float = 0.0  # from the learners' first run (the actors started) to the last round
    round_seconds: list = dataclasses.field(default_factory=list)  # coordinator time of each round
    wait_seconds: list = dataclasses.field(default_factory=list)  # time the driver waited for each round's reports
    tree_seconds: list = dataclasses.field(default_factory=list)  # time of each round's tree of merges (merge_workers)
    learner_seconds: float = 0.0  # the learners' runs, added up (÷ learners × seconds: how busy they were)
    shipped_bytes: list = dataclasses.field(default_factory=list)  # bytes of the reports of each round
    restarts: int = 0  # actors restarted after a failure
    refused: int = 0  # reports not absorbed (a feature of the other kind): their learners start again
    changes: int = 0  # changes the coordinator detected across rounds (each made the model forget)

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def accuracy(self) -> float:
        """Prequential accuracy of the published predictors on the examples they predicted."""
        return self.correct / self.predicted if self.predicted else float("nan")


@dataclasses.dataclass
class Merged:
    """The reports of several partitions whose deltas were merged into one (``merge_reports``):
    the coordinator absorbs ``delta`` once and moves every partition of ``reports`` (their own
    deltas None). A tree of such merges, done by helper processes, leaves the coordinator one
    delta to absorb per round (``docs/algorithms/merge.md#deltas-merged-in-a-tree``)."""

    reports: list  # the partitions' reports, in order, without their deltas
    delta: Any  # Delta: all their examples (Delta.merge)


def merge_reports(a, b, take: bool = False):
    """``a`` and ``b`` (``Report`` or ``Merged``) as one ``Merged``: ``a``'s delta having taken in
    ``b``'s (``Delta.merge``; neither changes, unless ``take``: then ``a``'s delta is merged in
    place, without a copy, for a caller that owns ``a``, as a pool worker owns what it
    unpickled). ``ValueError`` when a feature is of one kind in one and of the other in the
    other: absorb them apart then (the coordinator refuses the second; nothing changed). O(a
    delta merge).
    """
    parts = []
    for side in (a, b):
        for report in side.reports if isinstance(side, Merged) else [side]:
            parts.append(dataclasses.replace(report, delta=None))
    delta = copy.copy(a.delta)  # (unless take, merge gives the copy a new engine: a's delta keeps its own)
    delta.merge(b.delta, in_place=take)
    return Merged(parts, delta)


def merged_in_a_tree(items: list, merge: Callable = merge_reports, pairs: Callable | None = None) -> list:
    """``items`` (reports) merged pairwise, level by level, until one is left: ``[(r0 + r1) +
    (r2 + r3), …]``. ``pairs(function, list_of_pairs)`` runs one level's merges (a process pool's
    ``map``; None: one after the other, here). A pair that cannot merge (a feature of two kinds)
    stays apart; then more than one item is returned, in order. O(log₂ P) levels."""
    run = pairs or (lambda function, work: [function(pair) for pair in work])
    while len(items) > 1:
        work = list(zip(items[::2], items[1::2]))
        done = run(functools.partial(_merge_pair, merge), work)
        level = [item for result in done for item in result]
        if len(items) % 2:
            level.append(items[-1])
        if len(level) == len(items):  # no pair merged: they stay apart
            return level
        items = level
    return items


def _merge_pair(merge: Callable, pair: tuple) -> list:
    try:
        return [merge(*pair)]
    except ValueError:  # a feature of two kinds: the coordinator refuses the second
        return list(pair)


class Learner:
    """One partition's consumer: predict with the latest predictor, count into a delta.

    Parameters
    ----------
    partition
        The partition's name (a str or an int).
    source
        Its ``sources.Source`` (``ListSource``, ``JSONLinesSource``, ``RedisStreamSource``,
        ``IterableSource``...): ``(position, message)`` pairs and ``seek``.
    batch_size
        Messages predicted and learned together (``predict_proba_many``, ``learn_many``).
    keep_rows
        Raw rows a report ships at most (its newest; ``Delta.trim``): a round's window shares
        ``history_size`` rows among the partitions, so ⌈N / P⌉ for P partitions loses nothing
        when every partition has that many. None ships every row the delta holds.
    """

    def __init__(self, partition: Hashable, source, batch_size: int = 256, keep_rows: int | None = None):
        integer(batch_size, "batch_size", low=1)
        integer(keep_rows, "keep_rows", low=0, optional=True)
        self.keep_rows = keep_rows
        self.partition = partition
        self.source = source
        self.batch_size = batch_size
        self.delta = None
        self.predictor = None
        self.start = None
        self.position = None
        self._messages: Iterator | None = None

    def reset(self, position, delta, predictor=None) -> None:
        """Start again from ``position`` (the coordinator's for this partition) with an empty
        ``delta``; what was read since and not absorbed is dropped and will be read again."""
        self.source.seek(position)
        self._messages = None
        self.start = self.position = position
        self.delta = delta
        self.predictor = predictor

    def publish(self, predictor, committed=None) -> None:
        """Predict with ``predictor`` from now on; the source may forget what is at or before the
        ``committed`` position (``source.commit``: a checkpoint holds it)."""
        self.predictor = predictor
        commit = getattr(self.source, "commit", None)
        if committed is not None and commit is not None:
            commit(committed)

    def run(self, max_messages: int | None = None, max_seconds: float | None = None) -> Report:
        """Read up to ``max_messages`` messages or for ``max_seconds`` (at least one batch), then
        hand over the delta (``Report``) and start a fresh one."""
        if self.delta is None:
            raise RuntimeError("call reset(position, delta) first")
        began = time.monotonic()
        report = Report(self.partition, self.delta, self.start, self.position, errors=[])
        if self._messages is None:
            self._messages = iter(self.source)
        while max_messages is None or report.messages < max_messages:
            room = self.batch_size if max_messages is None else min(self.batch_size, max_messages - report.messages)
            batch = list(itertools.islice(self._messages, room))
            if batch:
                self._learn(batch, report)
                report.position = self.position = batch[-1][0]
            if len(batch) < room:
                report.exhausted = True
                self._messages = None  # a source that grows is read again at the next run
                break
            if max_seconds is not None and time.monotonic() - began >= max_seconds:
                break
        self.delta.flush()  # the summaries' work is done here, not at the coordinator
        if self.keep_rows is not None:
            self.delta.trim(self.keep_rows)
        report.seconds = time.monotonic() - began
        report.errors = np.array(report.errors, dtype=bool)
        self.delta = self.delta.fresh()
        report.delta.kinds = {}  # (the model's kinds stay here: a report ships only what it learned)
        self.start = self.position
        return report

    def _learn(self, batch: list, report: Report) -> None:
        xs, ys = [], []
        for _, message in batch:
            report.messages += 1
            try:
                if isinstance(message, Malformed):
                    raise ValueError(message.reason)
                x, y = example(message)
                x = self.delta.check_kinds(x)  # (a value of the kind the model does not hold would wedge every round)
            except ValueError:
                report.rejected += 1
                continue
            xs.append(x)
            ys.append(y)
        if not xs:
            return
        predicting = self.predictor is not None and self.predictor.classes
        if len(xs) == 1:  # one example (batch_size=1, the per-example consumer loop): no DataFrame
            predicted = [self._predict(xs[0])] if predicting else []
            self._count(predicted, ys, report)
            self._learn_each(xs, ys, report)
            return
        X = xs  # the dicts as they are: a key absent from one is read as the model's ``absent`` says
        if predicting:
            try:
                predicted = self.predictor.predict_many(X).tolist()
            except ValueError:  # a row the predictor cannot read: predict one by one
                predicted = [self._predict(x) for x in xs]
            self._count(predicted, ys, report)
        try:
            self.delta.learn_many(X, ys)
        except ValueError:  # a row the model refuses: learn one by one (nothing was learned)
            self._learn_each(xs, ys, report)

    @staticmethod
    def _count(predicted: list, ys: list, report: Report) -> None:
        for guess, y in zip(predicted, ys):
            if guess is not None:
                report.predicted += 1
                report.correct += guess == y
                report.errors.append(guess != y)

    def _learn_each(self, xs: list, ys: list, report: Report) -> None:
        for x, y in zip(xs, ys):
            try:
                self.delta.learn_one(x, y)
            except ValueError:
                report.rejected += 1

    def _predict(self, x):
        try:
            return self.predictor.predict_one(x)
        except ValueError:
            return None


class Coordinator:
    """Folds the learners' reports into one model, checkpoints it, publishes its predictor.

    Parameters
    ----------
    model
        The model to train (a ``WeightedNaiveBayes``; it is changed in place by each round).
    checkpoint_path
        Where each round saves the model and every partition's position, atomically (None: no
        checkpoint, and no recovery across a crash of the coordinator). If the file exists, the
        coordinator starts from it instead of ``model``.
    background
        Write each round's checkpoint in a thread, while the learners' next reports arrive, instead
        of before ``round`` returns: the checkpoint, O(model), is the largest piece of a round
        (``docs/algorithms/merge.md#what-a-round-costs-and-what-grows``). The next ``round`` (or
        ``settle``) waits for it first and raises its error, if any. ``committed`` holds the
        positions of the last checkpoint written: what a source may forget (``Learner.publish``),
        so that a crash before a checkpoint is written loses nothing.
    background_weights
        Leave each round's step of the weights out of ``round`` (``model.absorb(deltas,
        step=False)``): the predictor it returns has the rebuilt level 2 and the weights carried
        from before the round, and the step (``model.step_weights``) runs in a thread while the
        learners' next reports arrive, before the checkpoint when that is written in the
        background too (a checkpoint always holds stepped weights: with one written before
        ``round`` returns, the step comes before it, and nothing leaves the critical path). The
        model after the step is the one a round with it makes, bit for bit; the next ``round``
        (or ``settle``) waits for it. The step is a round's largest piece when the round brings
        many rows (``docs/algorithms/merge.md#trade-offs-measured``).
    on_weights
        Called in that thread with the predictor of the model once its weights have stepped
        (to publish it to the learners); its error is raised by the next ``round``.

    Notes
    -----
    Forgetting across rounds. Each report carries its learner's prequential errors (``Report.errors``);
    the coordinator runs the model's change detector (``model.change_detector()``: none when
    ``drift_delta`` is None) on them across rounds, every ``CHECK`` errors, the partitions'
    errors interleaved by their relative position in the round. A rise of the error makes the
    model forget (``model.forget``) all but the rows of its window since the change (the
    round's rows in proportion: ``forget_rows``); ``changes`` counts them. Nothing is left for
    the learners to forget: a delta holds only the examples read since its previous report, all
    newer than the reports in which the change was found. The detector's buckets are in the
    checkpoint (since format version 10): a coordinator restored from one goes on watching the
    errors it had seen; one restored from an older checkpoint, or whose model's ``drift_delta``
    differs from the saved detector's, starts it afresh.
    """

    #: Errors between two tests of the change detector (the model's own check point, ``drift.EVERY``).
    CHECK = 256

    def __init__(self, model, checkpoint_path: str | os.PathLike | None = None, background: bool = False, background_weights: bool = False, on_weights: Callable | None = None):
        self.model = model
        self.background = bool(background)
        self.background_weights = bool(background_weights)
        self.on_weights = on_weights
        self._writing: threading.Thread | None = None  # the step and the checkpoint being done in the background
        self._failed: BaseException | None = None  # its error, raised by the next round
        self.positions: dict = {}
        self.refused: list = []  # partitions whose report the last round did not absorb
        self.rounds = 0
        self.absorbed = 0  # examples absorbed since the model was first given (rounds of this run and before)
        self.changes = 0  # changes detected across rounds (each made the model forget)
        self.checkpoint_path = None if checkpoint_path is None else os.fspath(checkpoint_path)
        restored = None
        if self.checkpoint_path is not None and os.path.exists(self.checkpoint_path):
            restored = self._restore()
        self.committed = dict(self.positions)  # the positions a written checkpoint holds (all, without one)
        self.detector = self._new_detector(restored)
        self._owes_step = False  # a round absorbed without its step of the weights (background_weights), not yet stepped

    def _new_detector(self, restored=None):
        """The model's change detector: ``restored`` (a checkpoint's) when it is of the same kind."""
        make = getattr(self.model, "change_detector", None)
        fresh = None if make is None else make()
        if fresh is not None and restored is not None and restored.delta == fresh.delta:
            return restored
        return fresh

    def position(self, partition):
        """The position up to which the model holds ``partition``'s messages (None: none yet)."""
        return self.positions.get(partition)

    def round(self, reports: list):
        """Absorb ``reports`` (one per partition at most; a ``Merged`` holds several partitions'
        reports and one delta), checkpoint, and return the new predictor.

        ``ValueError`` when a report does not start where the model's position of its partition
        is (nothing changes then).

        A report whose delta holds a feature of the other kind than the model's, or than a report
        before it in this round (two partitions met a new feature as a number and as a string), is
        not absorbed: its partition keeps its position and is listed in ``refused``; its learner
        must start again from there (``Learner.reset`` with ``model.delta()``, which then knows
        the kind and refuses such values). If absorbing or the checkpoint raises, the model and
        the positions are left as they were before the round.
        """
        self.settle()
        parts = [part for item in reports for part in (item.reports if isinstance(item, Merged) else [item])]
        seen = set()
        for report in parts:
            if report.partition in seen:
                raise ValueError(f"two reports of partition {report.partition!r} in one round")
            seen.add(report.partition)
            if report.start != self.positions.get(report.partition):
                raise ValueError(
                    f"partition {report.partition!r}: the report starts at {report.start!r}, the model holds it up to "
                    f"{self.positions.get(report.partition)!r} (a gap or a repeat)"
                )
        accepted, self.refused = self._compatible(reports)
        deltas = [item.delta for item in accepted if item.delta.n_seen]
        accepted = [part for item in accepted for part in (item.reports if isinstance(item, Merged) else [item])]
        detector = None if self.detector is None else self.detector.snapshot()
        before = (copy.copy(self.model), dict(self.positions), self.absorbed, self.rounds, self.changes)
        try:
            self.model.absorb(deltas, step=not self.background_weights)  # (a new engine: the shallow copy keeps the old one)
            self._owes_step = self.background_weights and bool(deltas)  # (no delta: absorb changed nothing, and owes nothing)
            self._watch(accepted, deltas)
            for report in accepted:
                self.positions[report.partition] = report.position
            self.absorbed += sum(delta.n_seen for delta in deltas)
            self.rounds += 1
            if not (self.background and self.checkpoint_path is not None):
                if self.checkpoint_path is not None:
                    self._step_weights()  # (a checkpoint holds a model with its weights stepped)
                self.checkpoint()
                self.committed = dict(self.positions)
        except BaseException:
            self.model, self.positions, self.absorbed, self.rounds, self.changes = before
            self._owes_step = False
            if detector is not None:
                self.detector.restore(detector)
            raise
        predictor = self.model.predictor(catch_up=False)  # (the round rebuilt what its rows moved)
        writing = self.background and self.checkpoint_path is not None
        if writing or self._owes_step:
            self._in_background(writing)
        return predictor

    def _in_background(self, writing: bool) -> None:
        """Start, in a thread, the weights' step the round left (``background_weights``, then
        ``on_weights``) and the writing of the checkpoint of now (``writing``). The model is not
        changed otherwise before the next ``round``, which waits for them; the model's lock guards
        it meanwhile."""
        snapshot = CoordinatorCheckpoint(self.rounds, self.absorbed, dict(self.positions), self.model, self._detector_now()) if writing else None

        def work() -> None:
            try:
                if self._step_weights() and self.on_weights is not None:
                    self.on_weights(self.model.predictor(catch_up=False))
                if snapshot is not None:
                    checkpoints.write(self.checkpoint_path, snapshot)
                    self.committed = snapshot.positions
            except BaseException as error:  # noqa: BLE001 - raised by the next round (settle)
                self._failed = error

        self._writing = threading.Thread(target=work, name="checkpoint" if snapshot is not None else "weights")
        self._writing.start()

    def _step_weights(self) -> bool:
        """The weights' step the last round owes (``background_weights``), once; whether the
        model stepped."""
        if not self._owes_step:
            return False
        self._owes_step = False
        return bool(self.model.step_weights())

    def settle(self) -> None:
        """Wait for what the last round left to a thread (the weights' step, ``background_weights``;
        the checkpoint being written, ``background``), if any, and raise its error (once; the
        model and the positions stay as the rounds left them, and the next checkpoint holds them
        all). O(1) when nothing is being done."""
        if self._writing is not None:
            self._writing.join()
            self._writing = None
        if self._failed is not None:
            error, self._failed = self._failed, None
            raise error

    def _watch(self, reports: list[Report], deltas: list) -> None:
        """The change detector on the round's prequential errors; on a rise, forget. O(errors)."""
        errors = interleaved([report.errors for report in reports if report.errors is not None])
        if self.detector is None or not len(errors) or not deltas:  # (forget only a model absorb has just made: a raise restores the one before)
            return
        for end in range(self.CHECK, len(errors) + self.CHECK, self.CHECK):
            since = self.detector.add(errors[end - self.CHECK : end])
            if since:
                since += max(0, len(errors) - end)  # the rows after this check are after the change too
                self._step_weights()  # (the round's own step first, as a round with it: then the forgetting)
                self.model.forget(forget_rows(since, len(errors), sum(delta.n_rows for delta in deltas), self.model.history_size))
                self.changes += 1
                self.detector.append(errors[end:])  # (the detector starts afresh from the rows after it)
                return

    def _compatible(self, reports: list) -> tuple[list, list]:
        """The reports (or ``Merged``) whose features agree in kind with the model's and with
        those of the reports accepted before them, and the partitions of the others. O(K +
        features shipped)."""
        known = self.model.delta().kinds
        accepted, refused = [], []
        for report in reports:
            theirs = report.delta.feature_kinds()
            if any(known.get(name, kind) != kind for name, kind in theirs.items()):
                refused.extend(part.partition for part in (report.reports if isinstance(report, Merged) else [report]))
                continue
            known.update(theirs)
            accepted.append(report)
        return accepted, refused

    def checkpoint(self) -> None:
        """Save the model, the positions and the round count in one file, atomically (a
        ``CoordinatorCheckpoint`` record, ``docs/saved-model.md#checkpoints``; gzip when the
        name ends in ``.gz``; after the one being written in the background, if any). O(size of
        the model)."""
        if self.checkpoint_path is None:
            return
        self.settle()
        checkpoints.write(
            self.checkpoint_path, CoordinatorCheckpoint(self.rounds, self.absorbed, dict(self.positions), self.model, self._detector_now())
        )

    def _detector_now(self):
        """A copy of the change detector as it is now (a checkpoint written in the background
        must not see the next round's errors). O(buckets)."""
        return None if self.detector is None else copy.deepcopy(self.detector)

    def _restore(self):
        """Take the model, positions and counts of the checkpoint; its change detector (None in
        a checkpoint of before version 10)."""
        checkpoint = checkpoints.read(self.checkpoint_path, CoordinatorCheckpoint)
        self.model = checkpoint.model
        self.positions = checkpoint.positions
        self.rounds = checkpoint.rounds
        self.absorbed = checkpoint.absorbed
        return checkpoint.detector


#: Rows of the fixed stream of ``load_kernels`` (``stream.warm_up.rows``, half to each of its
#: two learners), and how many each learner reads per run.
WARM_UP_ROWS, WARM_UP_RUN = 240, 60


def load_kernels(model, batch_size: int = 256) -> None:
    """Train a throw-away clone of ``model`` (``model.clone()``: its settings, nothing learned) in
    rounds on a small fixed stream, two learners of ``batch_size`` and a coordinator, so that
    this process loads the compiled kernels that a learner's run and a coordinator's round use
    (from numba's cache, or compiled) before its first real run or round. The drivers call it
    when a learner or a coordinator starts, so that the first round of a new process does not
    pay for the loading (about half a second of CPU per process on a two-core machine;
    ``docs/algorithms/merge.md#rounds``). ``model`` is not changed; a warm-up that fails
    changes nothing (the real run will say why).
    """
    try:
        coordinator = Coordinator(model.clone())
        messages = warm_up.rows(WARM_UP_ROWS)
        half = WARM_UP_ROWS // 2
        learners = [Learner(p, IterableSource(functools.partial(list, messages[p * half : (p + 1) * half])), batch_size) for p in range(2)]
        for learner in learners:
            learner.reset(None, coordinator.model.delta())
        for _ in range(WARM_UP_ROWS // (2 * WARM_UP_RUN)):
            predictor = coordinator.round([learner.run(max_messages=WARM_UP_RUN) for learner in learners])
            for learner in learners:
                learner.publish(predictor)
        coordinator.settle()
    except Exception:  # noqa: BLE001 - a warm-up that fails changes nothing
        return

