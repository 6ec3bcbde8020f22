"""Training one model on many partitions with Ray (the optional extra ``pip install wnb-stream[ray]``).

``train`` runs one ``partitioned.Learner`` per partition, each in a Ray actor of its own, and a
``partitioned.Coordinator`` in another; the calling process drives the rounds:

1. every learner reads up to ``round_examples`` messages of its partition (or for
   ``round_seconds``), predicting each with the latest published predictor and counting it into
   its delta, and hands over a ``Report``;
2. the learners go on with their next run at once (``DEPTH`` runs are queued at each, so a
   learner never waits for the driver; it predicts with a predictor at most ``DEPTH`` rounds
   old), while the coordinator absorbs the reports (fetched from the learners' processes, not
   through the driver), rebuilds, re-optimises, checkpoints the model with every partition's
   position (atomically) and returns the new predictor, which is then published to every
   learner (and the learners' sources may forget what the checkpoint holds).

A report the coordinator does not absorb (a feature of another kind than the model's, met first
by another partition in the same round: ``Coordinator.round``) leaves its partition's position
where it was; its learner is reset there and reads those messages again, refusing the values of
the other kind, so one such message never stops a round.

Actors are restartable (``max_restarts=-1``). When a learner dies, its restarted actor resumes
from the coordinator's position of its partition; when the coordinator dies, its restarted
actor restores the last checkpoint and every learner resumes from the checkpoint's positions.
So every message is absorbed exactly once (``docs/algorithms/merge.md#rounds``), and ``train``
called again with the same ``checkpoint_path`` resumes a run that was stopped. ``merge_tree``
merges a round's reports in Ray tasks so that the coordinator absorbs one delta,
``background_checkpoint`` writes each checkpoint while the next reports arrive, and
``background_weights`` steps the weights then (the coordinator's actor publishes the stepped
predictor to the learners itself).

Each actor loads the compiled kernels when it starts (``partitioned.load_kernels``), before the
first round. The functions and classes here only move ``partitioned`` objects between processes; Ray is
imported when ``train`` is called. Ray hands the NumPy arrays of an argument as read-only views
of its object store, so an actor deep-copies what it will change (a delta, the model) first.
"""

from __future__ import annotations

import collections
import copy
import os
import time
from typing import Any, Callable, Hashable

from .partitioned import Coordinator, Learner, Progress, Report, load_kernels, merged_in_a_tree

__all__ = ["Progress", "train"]

#: Runs queued at each learner: it reads on while the driver and the coordinator work, and
#: predicts with a predictor at most this many rounds old.
DEPTH = 2
#: Consecutive failed runs of one partition before ``train`` gives up (raises the last error).
MAX_FAILURES = 5
#: Attempts (0.2 s apart) to reset a learner whose actor is restarting.
RESET_ATTEMPTS = 150


class _LearnerActor:
    """A ``Learner`` in a Ray actor; its source comes from ``source_factory()`` in the actor."""

    def __init__(self, partition, source_factory: Callable[[], Any], batch_size: int, keep_rows: int, blank=None):
        if blank is not None:  # (the model's settings: the kernels are loaded before the first run)
            load_kernels(blank, batch_size)
        self.learner = Learner(partition, source_factory(), batch_size, keep_rows)

    def reset(self, position, delta, predictor) -> None:
        self.learner.reset(position, copy.deepcopy(delta), predictor)  # writable: Ray hands read-only arrays (the module docstring)

    def publish(self, predictor, committed) -> None:
        self.learner.publish(predictor, committed)

    def run(self, max_messages, max_seconds, measure: bool) -> tuple[dict, Report]:
        """A run: its counts for the driver (small), and its report for the coordinator (two
        objects: the delta goes from this actor to the coordinator without passing the driver)."""
        if self.learner.delta is None:  # restarted and not reset yet: the driver resets it
            raise RuntimeError(f"learner {self.learner.partition!r} was restarted: reset it first")
        report = self.learner.run(max_messages, max_seconds)
        counts = {name: getattr(report, name) for name in ("messages", "rejected", "predicted", "correct", "exhausted")}
        counts["examples"] = report.delta.n_seen
        counts["bytes"] = report.delta.nbytes() if measure else 0
        counts["seconds"] = report.seconds
        return counts, report

    def pid(self) -> int:
        return os.getpid()


class _CoordinatorActor:
    """A ``Coordinator`` in a Ray actor (restored from its checkpoint when restarted)."""

    def __init__(self, model, checkpoint_path, background: bool = False, background_weights: bool = False, learners: dict | None = None):
        self.learners = learners or {}  # (actor handles: the stepped weights are published to them from here)
        self.coordinator = Coordinator(
            copy.deepcopy(model), checkpoint_path, background=background, background_weights=background_weights, on_weights=self._publish
        )  # writable: Ray hands read-only arrays (the module docstring)
        load_kernels(model)  # (before the first round)

    def _publish(self, predictor) -> None:
        """The predictor of the stepped weights to every learner (from the coordinator's thread),
        put in the object store once: each learner reads it from there, instead of one copy
        serialized per call."""
        import ray

        committed = dict(self.coordinator.committed)
        stored = ray.put(predictor)
        for p, learner in self.learners.items():
            learner.publish.remote(stored, committed.get(p))

    def state(self) -> tuple[dict, Any, Any]:
        """The positions, an empty delta and the current predictor (what learners start from)."""
        model = self.coordinator.model
        return dict(self.coordinator.positions), model.delta(), model.predictor(catch_up=False) if model.classes else None

    def round(self, *reports) -> tuple[Any, tuple[dict, float, list]]:
        """Absorb ``reports`` (``Report``, ``Merged``, or lists of them: a tree's results): the
        predictor, and the positions, seconds and refused partitions (two return values: the
        driver hands the predictor's object to the learners without fetching it)."""
        began = time.monotonic()
        predictor = self.coordinator.round([item for report in reports for item in _items(report)])
        # (the positions the sources may forget: those of the last checkpoint written)
        return predictor, (dict(self.coordinator.committed), time.monotonic() - began, list(self.coordinator.refused))

    def model(self):
        self.coordinator.settle()
        return self.coordinator.model

    def absorbed(self) -> int:
        return self.coordinator.absorbed

    def changes(self) -> int:
        return self.coordinator.changes

    def pid(self) -> int:
        return os.getpid()


def _items(value) -> list:
    """A tree's result (a list of ``Report``/``Merged``) or one report, as a list."""
    return list(value) if isinstance(value, list) else [value]


def _merge_results(a, b) -> list:
    """A Ray task of the tree: two reports (or two earlier results) merged into one, or kept
    apart when a feature is of two kinds (``partitioned.merged_in_a_tree``)."""
    return merged_in_a_tree(_items(a) + _items(b))


def train(
    model,
    sources: dict[Hashable, Callable[[], Any]],
    *,
    checkpoint_path: str | os.PathLike | None = None,
    round_examples: int | None = 5000,
    round_seconds: float | None = None,
    max_rounds: int | None = None,
    batch_size: int = 256,
    measure_bytes: bool = False,
    on_round: Callable[[Progress, dict], None] | None = None,
    merge_tree: bool = False,
    background_checkpoint: bool = False,
    background_weights: bool = False,
):
    """Train ``model`` on the partitions ``sources`` with one Ray actor per partition.

    Parameters
    ----------
    model
        A ``WeightedNaiveBayes`` to start from (ignored when ``checkpoint_path`` exists: the run
        resumes from it).
    sources
        ``{partition: factory}``; ``factory()`` returns the partition's source (``sources.Source``)
        in the learner's process, so it must be picklable (a ``functools.partial`` of
        ``JSONLinesSource``, ``RedisStreamSource``...). Partition names are str or int.
    checkpoint_path
        The coordinator's checkpoint (model + positions, each round). Without it a killed
        coordinator starts again from ``model`` and the learners from the start of their sources
        (still exactly once, from the beginning).
    round_examples, round_seconds
        A learner hands over its delta after this many messages or seconds (whichever first;
        None for no limit on one of them, not both).
    max_rounds
        Stop after this many rounds (None: when every source is exhausted).
    batch_size
        Messages a learner predicts and learns together.
    measure_bytes
        Record each round's shipped bytes (the reports' pickles) in ``Progress.shipped_bytes``.
    on_round
        Called after each round with the progress so far and ``{"learners": {partition: actor},
        "coordinator": actor}`` (for monitoring; the tests kill actors from here).
    merge_tree
        Merge each round's reports pairwise in Ray tasks, level by level, so that the coordinator
        absorbs one delta (``partitioned.merged_in_a_tree``; the model differs from one by one only
        in the grouping of the summaries' merges, ``docs/algorithms/merge.md#deltas-merged-in-a-tree``).
        The reports go from the learners to the tasks and on to the coordinator, not through the
        driver.
    background_checkpoint
        The coordinator writes each round's checkpoint in a thread while the next reports arrive
        (``Coordinator(background=True)``); the sources forget only what a written checkpoint holds.
    background_weights
        The coordinator returns each round's predictor with level 2 rebuilt and the weights
        carried from before it, steps the weights in a thread while the next reports arrive and
        publishes their predictor to the learners when ready (``Coordinator(background_weights=True)``).
        The trained model is the same, bit for bit.

    Returns
    -------
    (model, progress)
        The trained model (fetched from the coordinator) and a ``Progress``.

    A local cluster is started (``ray.init``) when none is running.
    """
    import ray
    from ray.exceptions import RayActorError, RayError

    if round_examples is None and round_seconds is None and max_rounds is None:
        raise ValueError("give round_examples or round_seconds: a round must end")
    if not sources:
        raise ValueError("sources must name at least one partition")
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    options = {"max_restarts": -1, "max_task_retries": 0}
    Learner_ = ray.remote(**options)(_LearnerActor)
    merge_task = ray.remote(_merge_results)
    Coordinator_ = ray.remote(**options)(_CoordinatorActor)
    path = None if checkpoint_path is None else os.path.abspath(os.fspath(checkpoint_path))
    keep_rows = -(-model.history_size // len(sources))  # each partition's share of the window
    blank = model.clone()  # (its settings, for each actor's warm-up: ``partitioned.load_kernels``)
    learners = {p: Learner_.remote(p, factory, batch_size, keep_rows, blank) for p, factory in sources.items()}
    coordinator = Coordinator_.remote(model, path, background_checkpoint, background_weights, learners if background_weights else None)
    progress = Progress()

    def patiently(call):
        """``ray.get(call())``, again while the actor is restarting."""
        for attempt in range(RESET_ATTEMPTS):
            try:
                return ray.get(call())
            except RayActorError:
                if attempt == RESET_ATTEMPTS - 1:
                    raise
                time.sleep(0.2)

    def recover(partitions) -> None:
        """Reset the learners of ``partitions`` (restarted or not) to the coordinator's positions."""
        positions, delta, predictor = patiently(coordinator.state.remote)
        for p in partitions:
            patiently(lambda: learners[p].reset.remote(positions.get(p), delta, predictor))

    queues: dict = {p: collections.deque() for p in learners}  # each learner's runs in flight, oldest first

    def top_up(partitions) -> None:
        """Keep ``DEPTH`` runs queued at each learner: it goes from one run to the next without
        waiting for the driver, which collects the oldest (counts, report) references."""
        for p in partitions:
            while len(queues[p]) < DEPTH:
                queues[p].append(learners[p].run.options(num_returns=2).remote(round_examples, round_seconds, measure_bytes))

    def drain(partitions) -> None:
        """Wait out and drop the queued runs of ``partitions`` (their reads are read again)."""
        for p in partitions:
            while queues[p]:
                try:
                    ray.get(queues[p].popleft()[0])
                except RayError:
                    pass

    absorbed_before = patiently(coordinator.absorbed.remote)
    recover(learners)  # (waits for the actors to start)
    began = time.monotonic()
    active = set(learners)  # partitions whose source may hold more
    top_up(active)
    failures: dict = {}
    while any(queues.values()) and (max_rounds is None or progress.rounds < max_rounds):
        reports, failed, shipped, waited = [], [], 0, time.monotonic()
        for p, queue in queues.items():
            if not queue:
                continue
            pending, report = queue.popleft()
            try:
                counts = ray.get(pending)
            except RayError:  # the actor died (or restarted and was not reset yet)
                failures[p] = failures.get(p, 0) + 1
                if failures[p] > MAX_FAILURES:
                    raise
                failed.append(p)
                continue
            failures.pop(p, None)
            reports.append(report)  # a reference: the coordinator fetches it from the learner
            shipped += counts["bytes"]
            progress.messages += counts["messages"]
            progress.rejected += counts["rejected"]
            progress.predicted += counts["predicted"]
            progress.correct += counts["correct"]
            progress.learner_seconds += counts["seconds"]
            if counts["exhausted"]:
                active.discard(p)
        progress.wait_seconds.append(time.monotonic() - waited)
        if failed:  # what they read since the coordinator's positions is read again
            progress.restarts += len(failed)
            drain(failed)
            recover(failed)
        if max_rounds is None or progress.rounds + DEPTH < max_rounds:
            top_up(active)  # the next runs go on while the coordinator works
        while merge_tree and len(reports) > 1:  # one level of the tree: its merges run in parallel tasks
            level = [merge_task.remote(a, b) for a, b in zip(reports[::2], reports[1::2])]
            reports = level + reports[len(level) * 2 :]
        try:
            # (the predictor stays in the object store: every learner reads the one stored copy)
            predictor, answer = coordinator.round.options(num_returns=2).remote(*reports)
            positions, seconds, refused = ray.get(answer)
        except RayActorError:  # restarted from its checkpoint: every learner resumes from its positions
            progress.restarts += 1
            drain(learners)
            recover(learners)
            active = set(learners)
            top_up(active)
            continue
        progress.rounds += 1
        progress.round_seconds.append(seconds)
        progress.shipped_bytes.append(shipped)
        if refused:  # read again from the model's position, with a delta that knows the kinds now
            progress.refused += len(refused)
            drain(refused)
            recover(refused)
            active |= set(refused)
            if max_rounds is None or progress.rounds + DEPTH < max_rounds:
                top_up(refused)
        for p in learners:
            learners[p].publish.remote(predictor, positions.get(p))
        if on_round is not None:
            on_round(progress, {"learners": learners, "coordinator": coordinator})
    drain(learners)  # runs beyond max_rounds: not absorbed, read again by the next call
    progress.examples = patiently(coordinator.absorbed.remote) - absorbed_before
    progress.changes = patiently(coordinator.changes.remote)  # (of this coordinator: since it started or was restored)
    progress.seconds = time.monotonic() - began
    # (``ray.get`` hands arrays read-only, views of the object store: a copy the caller can train on,
    # and that can catch up when it serves)
    trained = copy.deepcopy(patiently(coordinator.model.remote))
    for actor in (*learners.values(), coordinator):
        ray.kill(actor, no_restart=True)
    return trained, progress
