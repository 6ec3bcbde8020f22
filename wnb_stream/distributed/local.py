"""Training one model on many partitions with the processes of one machine (standard library only).

``train`` runs one ``partitioned.Learner`` per partition, each in a process of its own
(``multiprocessing``, started with ``spawn`` by default: safe with threads and compiled kernels in
the parent), and a ``partitioned.Coordinator`` in the calling process. It is the Ray driver
(``wnb_stream.distributed.ray``) without Ray, for a user with one many-core machine and for the
benchmarks; the rounds are the same:

1. every learner reads up to ``round_examples`` messages of its partition (or for
   ``round_seconds``), predicting each with the latest published predictor and counting it into
   its delta, and sends its ``Report`` back through its pipe;
2. the learners go on with their next run at once (``DEPTH`` runs are queued at each, so a
   learner never waits for the coordinator; it predicts with a predictor at most ``DEPTH``
   rounds old), while the coordinator absorbs the reports, checkpoints the model with every
   partition's position (atomically) and returns the new predictor, which is then published to
   every learner (and the learners' sources may forget what the checkpoint holds).

A learner process handles its commands in the order they were sent (reset, run, publish), as a
Ray actor does its tasks, so a round absorbs the same reports under either driver and trains the
same model as the plain loop of ``Learner.run`` and ``Coordinator.round`` (tested bit for bit).

Exactly once. A learner process that dies (killed, out of memory) is noticed when its pipe
closes: it is started again and resumes from the coordinator's position of its partition, and
the runs it had queued are read again. A learner whose run raises is treated the same way
(``MAX_FAILURES`` consecutive failures of one partition raise). The coordinator lives in the
calling process: if that process dies, ``train`` called again with the same ``checkpoint_path``
restores the checkpoint and every learner starts from its positions, so no message is absorbed
twice (``docs/algorithms/merge.md#rounds``).

Every learner process, and the calling process for its coordinator, loads the compiled kernels
when it starts (``partitioned.load_kernels``), before the first round. Three options take work off
the coordinator's path: ``merge_workers`` helper processes merge a
round's reports in a tree so that the coordinator absorbs one delta, ``background_checkpoint``
writes each checkpoint while the next reports arrive, and ``background_weights`` steps the
weights then, publishing level 2 at once and the stepped weights when ready
(``docs/algorithms/merge.md#trade-offs-measured``).
"""

from __future__ import annotations

import collections
import concurrent.futures
import copy
import multiprocessing
import os
import pickle
import queue
import threading
import time
from typing import Any, Callable, Hashable

from .._checks import integer, real
from .partitioned import Coordinator, Learner, Progress, load_kernels, merge_reports, merged_in_a_tree

__all__ = ["DEPTH", "MAX_FAILURES", "train"]

#: Runs queued at each learner: it reads on while the coordinator works, and predicts with a
#: predictor at most this many rounds old (as ``ray.DEPTH``).
DEPTH = 2
#: Consecutive failed runs of one partition before ``train`` gives up (raises).
MAX_FAILURES = 5


def _serve(conn, partition, batch_size: int, keep_rows: int | None, blank=None) -> None:
    """A learner process: its ``Learner`` handles the commands of ``conn`` in order until ``stop``.

    ``("source", factory)`` comes first (the factory of its source: it travels through the pipe,
    not with the process, so that starting a process does not wait for the one before to have
    imported its modules and read its factory: L processes start in the time of one);
    ``("reset", (position, delta, predictor))`` answers ``("ready", pid)``; ``("publish",
    (pickled, committed))`` answers nothing (an error is answered by the next run; ``pickled``:
    the predictor's pickle, made once by the driver for every learner); ``("run",
    (max_messages, max_seconds, measure))`` answers ``("run", (counts, pickled))``, ``pickled``
    the report's pickle (the driver reads it, or hands the bytes to a helper that merges it:
    ``_merge_pickled``); a command
    that raises answers ``("error", message)``.

    A thread reads the commands as they come, whatever the learner is doing: the driver's sends
    (a published predictor, the next runs) never wait for a run to end. Without it a driver
    blocked sending a predictor to a learner busy with its run, and that learner then blocked
    sending its report to the driver, would wait for each other for ever (pipes hold a few
    hundred kilobytes).
    """
    inbox: queue.SimpleQueue = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                inbox.put(conn.recv())
            except (EOFError, OSError):  # the driver is gone
                inbox.put(("stop", ()))
                return
            except Exception as error:  # noqa: BLE001 - a command that does not unpickle here: answered as its error
                inbox.put(("unreadable", f"{type(error).__name__}: {error}"))

    threading.Thread(target=read, daemon=True).start()
    if blank is not None:  # (the model's settings: the kernels are loaded before the first run)
        load_kernels(blank, batch_size)
    learner, failed, source_factory = None, None, None
    while True:
        command, args = inbox.get()
        if command == "stop":
            return
        try:
            if command == "unreadable":
                raise RuntimeError(f"a command could not be read: {args}")
            if command == "source":
                source_factory = args
            elif command == "reset":
                if learner is None:
                    learner = Learner(partition, source_factory(), batch_size, keep_rows)
                learner.reset(*args)
                failed = None
                conn.send(("ready", os.getpid()))
            elif command == "publish":
                if failed is None:
                    try:
                        pickled, committed = args
                        learner.publish(pickle.loads(pickled), committed)
                    except Exception as error:  # noqa: BLE001 - reported by the next run
                        failed = f"publish: {type(error).__name__}: {error}"
            elif command == "run":
                if failed is not None:
                    raise RuntimeError(failed)
                max_messages, max_seconds, measure = args
                report = learner.run(max_messages, max_seconds)
                counts = {name: getattr(report, name) for name in ("messages", "rejected", "predicted", "correct", "exhausted")}
                counts["examples"] = report.delta.n_seen
                counts["bytes"] = report.delta.nbytes() if measure else 0
                counts["seconds"] = report.seconds
                conn.send(("run", (counts, pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL))))
        except Exception as error:  # noqa: BLE001 - the driver decides (reset, or give up)
            conn.send(("error", f"{type(error).__name__}: {error}"))


def _merge_pickled(a: bytes, b: bytes) -> bytes:
    """A helper's merge of two pickled reports (``Report`` or ``Merged``), pickled: it owns
    what it unpickled, so ``a``'s delta takes in ``b``'s in place (``merge_reports(take=True)``).
    ``ValueError`` (a feature of two kinds) leaves the pair apart (``merged_in_a_tree``)."""
    return pickle.dumps(merge_reports(pickle.loads(a), pickle.loads(b), take=True), protocol=pickle.HIGHEST_PROTOCOL)


class _Failed(Exception):
    """A learner's process died or its command raised (the message says which)."""


class _LearnerProcess:
    """One partition's learner process and the driver's end of its pipe."""

    def __init__(self, context, partition, factory, batch_size: int, keep_rows: int | None, blank=None):
        self.partition = partition
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, partition, batch_size, keep_rows, blank), daemon=True)
        self.process.start()  # (returns at once: what it carries is small)
        theirs.close()  # (so that a dead process closes the pipe: recv raises EOFError)
        self.queued = 0  # runs sent and not yet answered
        self._factory = factory  # sent before the first command (``_serve``)
        self._stopped = False
        self._sending = threading.Lock()  # (the coordinator's thread publishes the stepped weights)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def send(self, command: str, args=()) -> None:
        try:
            with self._sending:
                if self._factory is not None:
                    self.conn.send(("source", self._factory))
                    self._factory = None
                self.conn.send((command, args))
        except (OSError, ValueError) as error:
            raise _Failed(f"learner {self.partition!r}: its process is gone ({error})") from None

    def answer(self, expected: str):
        try:
            kind, payload = self.conn.recv()
        except (EOFError, OSError) as error:
            raise _Failed(f"learner {self.partition!r}: its process died ({type(error).__name__})") from None
        if kind == "error":
            raise _Failed(f"learner {self.partition!r}: {payload}")
        assert kind == expected, (kind, expected)
        return payload

    def stop(self) -> None:
        """Ask the process to end, once (``close`` waits for it: stop every learner, then close each)."""
        if self._stopped:
            return
        self._stopped = True
        try:
            with self._sending:
                self.conn.send(("stop", ()))
        except (OSError, ValueError):
            pass

    def close(self, timeout: float = 5.0) -> None:
        self.stop()
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


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
    start_method: str = "spawn",
    merge_workers: int = 0,
    background_checkpoint: bool = False,
    background_weights: bool = False,
):
    """Train ``model`` on the partitions ``sources`` with one process per partition.

    The parameters are those of ``wnb_stream.distributed.ray.train``, and:

    start_method
        How the learner processes start (``multiprocessing``): ``"spawn"`` (the default: a fresh
        interpreter, safe whatever the parent holds), ``"forkserver"`` or ``"fork"`` where the
        platform has them.
    merge_workers
        Helper processes that merge each round's reports pairwise, in a tree
        (``partitioned.merged_in_a_tree``), so that the coordinator absorbs one delta; 0 (the
        default): the coordinator absorbs the reports one by one. Worth it only where cores are
        idle: the merges then leave the coordinator, and the model differs only in the grouping
        of the summaries' merges (``docs/algorithms/merge.md#deltas-merged-in-a-tree``).
    background_checkpoint
        Write each round's checkpoint in a thread while the learners' next reports arrive
        (``Coordinator(background=True)``): the sources are told to forget only what a written
        checkpoint holds.
    background_weights
        Publish each round's predictor with level 2 rebuilt and the weights carried from before
        it, and step the weights in a thread while the next reports arrive; their predictor is
        published to every learner when ready (``Coordinator(background_weights=True)``). The
        trained model is the same, bit for bit; the learners predict with the carried weights
        in between.

    ``on_round`` receives ``{"learners": {partition: multiprocessing.Process}, "coordinator":
    Coordinator}`` (the tests kill processes from here). ``model`` is not changed: the
    coordinator trains a copy (or the checkpoint's model, when ``checkpoint_path`` exists).

    Returns
    -------
    (model, progress)
        The trained model and a ``Progress`` (``round_seconds``: the coordinator's time of each
        round; ``wait_seconds``: the time the coordinator waited for each round's reports).

    ``ValueError`` naming the parameter for a bad one (nothing is started then). Cost per round:
    the learners' runs in parallel, then one ``Coordinator.round`` (absorb, checkpoint) while
    they read on; each report crosses one pipe (its pickle, ``Delta.nbytes``).
    """
    if not sources:
        raise ValueError("sources must name at least one partition")
    integer(round_examples, "round_examples", low=1, optional=True)
    real(round_seconds, "round_seconds", above=0.0, optional=True)
    integer(max_rounds, "max_rounds", low=1, optional=True)
    integer(batch_size, "batch_size", low=1)
    integer(merge_workers, "merge_workers", low=0)
    if round_examples is None and round_seconds is None and max_rounds is None:
        raise ValueError("round_examples or round_seconds must be given: a round must end")
    if start_method not in multiprocessing.get_all_start_methods():
        raise ValueError(f"start_method must be one of {multiprocessing.get_all_start_methods()}, got {start_method!r}")
    for p, factory in sources.items():
        if not callable(factory):
            raise ValueError(f"sources[{p!r}] must be a factory (a callable returning the source), got {type(factory).__name__}")
    context = multiprocessing.get_context(start_method)
    learners: dict = {}

    def publish(predictor) -> None:
        """Send ``predictor`` to every learner (from the coordinator's thread too: the weights),
        pickled once: each pipe then carries the same bytes (at K = 1,000 a predictor's pickle
        takes about 0.24 s; once per learner, it grew the round's loop with the learners)."""
        pickled = pickle.dumps(predictor, protocol=pickle.HIGHEST_PROTOCOL)
        for p, learner in list(learners.items()):
            try:
                learner.send("publish", (pickled, coordinator.committed.get(p)))
            except _Failed:
                pass  # (its queued run fails next, and it is started again then)

    coordinator = Coordinator(
        copy.deepcopy(model), checkpoint_path, background=background_checkpoint, background_weights=background_weights, on_weights=publish
    )
    keep_rows = -(-coordinator.model.history_size // len(sources))  # each partition's share of the window
    progress = Progress()
    pool = concurrent.futures.ProcessPoolExecutor(merge_workers, mp_context=context) if merge_workers else None
    failures: collections.Counter = collections.Counter()

    blank = model.clone()  # (its settings, for each process's warm-up: ``partitioned.load_kernels``)

    def start(p) -> None:
        learners[p] = _LearnerProcess(context, p, sources[p], batch_size, keep_rows, blank)

    def drain(p) -> None:
        """Wait out and drop the queued runs of ``p`` (their reads are read again)."""
        learner = learners[p]
        while learner.queued:
            learner.queued -= 1
            try:
                learner.answer("run")
            except _Failed:
                break
        learner.queued = 0

    def recover(p) -> None:
        """Reset ``p``'s learner to the coordinator's position (a new process if it died)."""
        predictor = coordinator.model.predictor(catch_up=False) if coordinator.model.classes else None
        for attempt in range(MAX_FAILURES + 1):
            drain(p)
            try:
                learners[p].send("reset", (coordinator.position(p), coordinator.model.delta(), predictor))
                learners[p].answer("ready")
                return
            except _Failed:
                if attempt == MAX_FAILURES:
                    raise
                learners[p].close(timeout=0)
                start(p)

    def top_up(partitions) -> None:
        for p in partitions:
            while learners[p].queued < DEPTH:
                learners[p].queued += 1
                try:
                    learners[p].send("run", (round_examples, round_seconds, measure_bytes))
                except _Failed:
                    # Its process died between two runs. Not recovered here: a report of it may be
                    # in the round not yet absorbed, and the position to restart from is the one
                    # that round leaves. The answer to this run fails next, and recovers then.
                    break

    def failed(p, error: _Failed) -> None:
        failures[p] += 1
        if failures[p] > MAX_FAILURES:
            raise RuntimeError(f"{MAX_FAILURES + 1} runs of partition {p!r} failed in a row; the last: {error}") from None
        progress.restarts += 1
        if not learners[p].process.is_alive():
            learners[p].close(timeout=0)
            start(p)
        recover(p)

    try:
        absorbed_before = coordinator.absorbed
        for p in sources:
            start(p)
        load_kernels(blank, batch_size)  # (the coordinator's, here, while the learners load theirs)
        for p in sources:  # (waits for the processes to start)
            recover(p)
        began = time.monotonic()
        active = set(sources)
        top_up(active)
        while any(learner.queued for learner in learners.values()) and (max_rounds is None or progress.rounds < max_rounds):
            reports, shipped, waited = [], 0, time.monotonic()
            for p, learner in learners.items():
                if not learner.queued:
                    continue
                learner.queued -= 1
                try:
                    counts, report = learner.answer("run")
                except _Failed as error:
                    failed(p, error)  # what it read since the coordinator's position is read again
                    continue
                failures.pop(p, None)
                reports.append(report)
                shipped += counts["bytes"]
                progress.messages += counts["messages"]
                progress.rejected += counts["rejected"]
                progress.predicted += counts["predicted"]
                progress.correct += counts["correct"]
                progress.learner_seconds += counts["seconds"]
                if counts["exhausted"]:
                    active.discard(p)
            progress.wait_seconds.append(time.monotonic() - waited)
            if max_rounds is None or progress.rounds + DEPTH < max_rounds:
                top_up(active)  # the next runs go on while the coordinator works
            if pool is not None and len(reports) > 1:
                merging = time.monotonic()
                # (the reports' pickles go to the helpers as they came, and the merged ones come
                # back pickled: only the tree's last items are unpickled here)
                reports = merged_in_a_tree(reports, _merge_pickled, lambda merge, pairs: list(pool.map(merge, pairs)))
                progress.tree_seconds.append(time.monotonic() - merging)
            absorbing = time.monotonic()  # (reading the reports is the coordinator's work: in its time)
            reports = [pickle.loads(report) for report in reports]
            predictor = coordinator.round(reports)
            progress.round_seconds.append(time.monotonic() - absorbing)
            progress.rounds += 1
            progress.shipped_bytes.append(shipped)
            if coordinator.refused:  # read again from the model's position, with a delta that knows the kinds now
                progress.refused += len(coordinator.refused)
                for p in coordinator.refused:
                    recover(p)
                active |= set(coordinator.refused)
                if max_rounds is None or progress.rounds + DEPTH < max_rounds:
                    top_up(coordinator.refused)
            publish(predictor)
            if on_round is not None:
                on_round(progress, {"learners": {p: learner.process for p, learner in learners.items()}, "coordinator": coordinator})
        for p in learners:  # runs beyond max_rounds: not absorbed, read again by the next call
            drain(p)
        coordinator.settle()  # (the last checkpoint written)
        progress.examples = coordinator.absorbed - absorbed_before
        progress.changes = coordinator.changes
        progress.seconds = time.monotonic() - began
    finally:
        for learner in learners.values():
            learner.stop()  # (all at once: they end in parallel)
        for learner in learners.values():
            learner.close()
        try:
            coordinator.settle()  # (a checkpoint being written when something else raised: let it land)
        except Exception:  # noqa: BLE001, S110 - the error being raised is the one to report
            pass
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return coordinator.model, progress
