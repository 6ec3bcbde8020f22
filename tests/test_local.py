"""Training on partitions with the processes of one machine (``wnb_stream.distributed.local``).

The local driver trains, bit for bit, the model of the plain loop of ``Learner.run`` and
``Coordinator.round`` (one run of every partition per round); every message is absorbed once
(class and category counts equal the stream's) through a learner process killed mid-stream and
a driver that dies and is called again on its checkpoint; a message of the other kind does not
wedge the rounds; bad parameters are refused with a ``ValueError`` naming them.
"""

from __future__ import annotations

import functools
import multiprocessing
import pickle
import threading

import numpy as np
import pytest
from partition_cases import counts_of, exact_model, expected_counts, messages, shards

from wnb_stream import WeightedNaiveBayes, io
from wnb_stream.distributed import local
from wnb_stream.distributed.partitioned import Coordinator, IterableSource, Learner
from wnb_stream.stream import ListSource


def plain_loop(model, sources: dict, round_examples: int, batch_size: int):
    """The rounds in one process: each round, one run of every partition not yet exhausted."""
    coordinator = Coordinator(model)
    keep_rows = -(-model.history_size // len(sources))
    learners = {p: Learner(p, factory(), batch_size, keep_rows) for p, factory in sources.items()}
    for learner in learners.values():
        learner.reset(None, coordinator.model.delta())
    active = set(learners)
    while active:
        reports = [learners[p].run(round_examples) for p in learners if p in active]
        active -= {r.partition for r in reports if r.exhausted}
        predictor = coordinator.round(reports)
        for learner in learners.values():
            learner.publish(predictor)
    return coordinator.model


def test_each_round_pickles_its_predictor_once_whatever_the_number_of_learners(tmp_path, monkeypatch):
    """The driver sends every learner the same bytes: one pickle of the predictor per round,
    not one per learner (at K = 1,000 a pickle takes a quarter of a second)."""
    from wnb_stream.serving.predictor import Predictor

    pickled = []
    dumps = pickle.dumps

    def counting(value, *args, **kwargs):
        if isinstance(value, Predictor):
            pickled.append(value)
        return dumps(value, *args, **kwargs)

    monkeypatch.setattr(local.pickle, "dumps", counting)
    sources = shards(tmp_path, [messages(p, 300) for p in range(3)])
    _, progress = local.train(WeightedNaiveBayes(history_size=300, seed=1), sources, round_examples=100, batch_size=50)
    assert progress.rounds >= 3
    assert len(pickled) == progress.rounds


def test_the_local_driver_trains_the_model_of_the_plain_loop(tmp_path):
    # what must be equal: the whole saved model (summaries, window, level 2, weights, clocks),
    # since a round absorbs the same reports under either driver; only the predictor a learner
    # predicts with (DEPTH rounds old here) differs, and it changes the prequential counts only
    parts = [messages(p, 900) for p in range(2)]
    sources = shards(tmp_path, parts)
    start = WeightedNaiveBayes(history_size=300, seed=1)
    model, progress = local.train(start, sources, round_examples=250, batch_size=64, measure_bytes=True)
    assert start.n_seen == 0  # (the coordinator trains a copy)
    model._check()
    assert counts_of(model) == expected_counts(parts)
    assert progress.examples == 1800 and progress.messages == 1800 and progress.restarts == 0
    assert progress.rounds >= 4 and min(progress.shipped_bytes[:3]) > 0 and progress.accuracy > 0.6
    assert len(progress.round_seconds) == len(progress.wait_seconds) == progress.rounds and progress.learner_seconds > 0
    loop = plain_loop(WeightedNaiveBayes(history_size=300, seed=1), sources, 250, 64)
    assert io.dumps(model) == io.dumps(loop)


def test_weights_stepped_in_the_background_train_the_model_of_the_plain_loop(tmp_path):
    # the stepped predictor goes to the learners from the coordinator's thread, between the
    # driver's own sends (a lock per pipe); the model and its checkpoint are the plain loop's
    parts = [messages(p, 900) for p in range(2)]
    sources = shards(tmp_path, parts)
    path = tmp_path / "checkpoint.json"
    model, progress = local.train(
        WeightedNaiveBayes(history_size=300, seed=1), sources, round_examples=250, batch_size=64,
        checkpoint_path=path, background_checkpoint=True, background_weights=True,
    )  # fmt: skip
    loop = plain_loop(WeightedNaiveBayes(history_size=300, seed=1), sources, 250, 64)
    assert io.dumps(model) == io.dumps(loop) == io.dumps(Coordinator(exact_model(), path).model)
    assert progress.rounds >= 4 and progress.accuracy > 0.6


@pytest.mark.parametrize("background", [False, True])  # the checkpoint written before a round returns, or while the next reports arrive
def test_exactly_once_when_a_learner_process_is_killed_and_the_driver_dies(tmp_path, background):
    parts = [messages(10 + p, 1500) for p in range(2)]
    sources = shards(tmp_path, parts)
    path = tmp_path / "checkpoint.json.gz"
    processes, killed, restarts = {}, [], []

    class DriverDied(Exception):
        pass

    def crash(progress, actors):
        processes.update(actors["learners"])
        if progress.rounds == 2 and not killed:
            actors["learners"]["shard-1"].kill()  # SIGKILL: its queued runs are lost
            killed.append("shard-1")
        elif progress.rounds == 4:
            restarts.append(progress.restarts)
            raise DriverDied  # the driver and its coordinator die after the 4th round's checkpoint

    with pytest.raises(DriverDied):
        local.train(exact_model(), sources, checkpoint_path=path, round_examples=200, batch_size=32, on_round=crash, background_checkpoint=background)
    assert killed and restarts == [1]  # the killed learner was noticed and started again
    assert not any(process.is_alive() for process in processes.values())  # the driver stopped its processes
    checkpointed = Coordinator(exact_model(), path)
    assert checkpointed.rounds == 4 and 0 < checkpointed.absorbed < 3000
    model, progress = local.train(exact_model(), sources, checkpoint_path=path, round_examples=200, batch_size=32, background_checkpoint=background)
    model._check()
    assert counts_of(model) == expected_counts(parts)
    assert progress.examples == 3000 - checkpointed.absorbed
    again, more = local.train(exact_model(), sources, checkpoint_path=path, round_examples=200)
    assert more.examples == 0 and counts_of(again) == expected_counts(parts)


@pytest.mark.parametrize("background", [False, True])
def test_a_learner_dying_right_after_its_answer_is_restarted_from_the_round_it_was_in(tmp_path, monkeypatch, background):
    """The learner's process dies after its report arrived and before the next run is sent to it:
    the send fails while that report is not yet absorbed. It restarts from the position the round
    leaves, not from the one before it (a repeat), and the send's failure does not escape."""
    parts = [messages(20 + p, 1200) for p in range(2)]
    answer, runs = local._LearnerProcess.answer, []

    def dies_after_its_second_report(self, expected):
        payload = answer(self, expected)
        if expected == "run" and self.partition == "shard-1":
            runs.append(self.process)
            if len(runs) == 2:
                self.process.kill()
                self.process.join()  # (dead before the driver sends it the next run)
        return payload

    monkeypatch.setattr(local._LearnerProcess, "answer", dies_after_its_second_report)
    model, progress = local.train(exact_model(), shards(tmp_path, parts), round_examples=200, batch_size=32, background_checkpoint=background)
    assert len(runs) > 2 and progress.restarts == 1
    assert counts_of(model) == expected_counts(parts)


@pytest.mark.parametrize("merge_workers", [0, 1])
def test_a_type_changed_message_does_not_wedge_the_local_driver(tmp_path, merge_workers):
    """Also through a tree of merges: the pair that cannot merge stays apart (its pickles as
    they came), and the coordinator refuses the second."""
    parts = [messages(50 + p, 600) for p in range(2)]
    wedge = {"x": {"u": "text", "colour": "red"}, "y": "a"}
    parts[1][0] = wedge  # u met as a string by one partition, as a number by the other, in round 1
    model, progress = local.train(exact_model(), shards(tmp_path, parts), round_examples=200, batch_size=16, merge_workers=merge_workers)
    registry = model._engine.registry
    assert registry.variables[registry.index["u"]].kind == "numeric"
    assert counts_of(model) == expected_counts([parts[0], parts[1][1:]]) and progress.examples == 1199
    assert progress.refused >= 1 and progress.rejected >= 1


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"sources": {}}, "sources"),
        ({"round_examples": 0}, "round_examples"),
        ({"round_examples": None}, "round_examples or round_seconds"),
        ({"round_seconds": -1.0}, "round_seconds"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"batch_size": 0}, "batch_size"),
        ({"start_method": "threads"}, "start_method"),
        ({"sources": {"p": "not a factory"}}, r"sources\['p'\]"),
        ({"merge_workers": -1}, "merge_workers"),
    ],
)
def test_bad_parameters_are_refused_naming_them(arguments, named):
    model = exact_model()
    given = {"sources": {"p": functools.partial(ListSource, messages(1, 10))}, **arguments}
    with pytest.raises(ValueError, match=named):
        local.train(model, **given)
    assert model.n_seen == 0


def wide_messages(n: int, k: int = 300):
    """``n`` messages of ``k`` numeric features (a module function: a spawned process imports it)."""
    rng = np.random.default_rng(0)
    for i in range(n):
        yield {"x": {f"f{j}": float(v) for j, v in enumerate(rng.normal(size=k))}, "y": i % 2}


def test_a_learner_sending_a_large_report_does_not_wait_for_a_driver_sending_predictors():
    """The driver sends large predictors while the learner runs, and the learner then sends a
    report larger than a pipe holds: both go through (before the learner read its commands in a
    thread of their own, each waited for the other for ever)."""
    learner = local._LearnerProcess(multiprocessing.get_context("spawn"), 0, functools.partial(IterableSource, functools.partial(wide_messages, 400)), 50, None)
    done = []

    def drive():
        learner.send("reset", (None, WeightedNaiveBayes().delta(), None))
        learner.answer("ready")
        learner.send("run", (400, None, False))
        for _ in range(3):
            learner.send("publish", (pickle.dumps(b"p" * 2**23), None))  # (a pickle of 8 MB each: no pipe holds one)
        counts, report = learner.answer("run")
        done.append((counts["examples"], len(pickle.dumps(report))))

    driver = threading.Thread(target=drive, daemon=True)
    driver.start()
    driver.join(timeout=120)
    try:
        assert done and done[0][0] == 400 and done[0][1] > 2**21, done  # (the report: 2 MB or more)
    finally:
        learner.process.kill()  # (unblocks a driver thread that waits)
        learner.close()


def _refuse_to_load():
    raise ValueError("this source does not load here")


class _SourceThatDoesNotLoad:
    """A source factory that pickles in the driver and raises when its process unpickles it."""

    def __reduce__(self):
        return (_refuse_to_load, ())


def test_a_source_that_does_not_load_in_its_process_is_answered_as_an_error_naming_it():
    """The factory travels through the pipe after the process starts (so that L processes start
    in the time of one): one that fails to unpickle there is the learner's error, not a hang."""
    learner = local._LearnerProcess(multiprocessing.get_context("spawn"), 0, _SourceThatDoesNotLoad(), 50, None)
    try:
        learner.send("reset", (None, WeightedNaiveBayes().delta(), None))
        with pytest.raises(local._Failed, match="this source does not load here"):
            learner.answer("ready")
    finally:
        learner.close()


def _heavy_source(ballast):
    return IterableSource(functools.partial(wide_messages, 10))


def test_a_learner_process_starts_without_its_source_which_follows_its_first_command(monkeypatch):
    """Starting a process hands it nothing large (a spawned process reads what it is started with
    only after importing its modules, and the driver's start waited for that, one process after
    the other): its source follows with its first command."""
    context, carried = multiprocessing.get_context("spawn"), []
    start = context.Process.start

    def measured(process):
        carried.append(len(pickle.dumps(process._args[1:])))  # (all but its end of the pipe)
        start(process)

    monkeypatch.setattr(context.Process, "start", measured)
    heavy = functools.partial(_heavy_source, np.zeros(2**20))  # (8 MB: more than any pipe holds)
    learner = local._LearnerProcess(context, 0, heavy, 50, None)
    try:
        assert carried and carried[0] < 1000, carried
        learner.send("reset", (None, WeightedNaiveBayes().delta(), None))
        assert learner.answer("ready") == learner.pid
        learner.send("run", (10, None, False))
        counts, _ = learner.answer("run")
        assert counts["examples"] == 10
    finally:
        learner.close()


def test_reports_merged_by_helper_processes_train_the_model_of_the_plain_loop(tmp_path):
    # categorical features: the summaries' merges add counts, exact in any grouping, so the
    # tree of merges gives the plain loop's model bit for bit
    parts = [[{"x": {"colour": m["x"]["colour"], "band": str(round(m["x"]["u"]))}, "y": m["y"]} for m in messages(80 + p, 600)] for p in range(3)]
    sources = shards(tmp_path, parts)
    model, progress = local.train(WeightedNaiveBayes(history_size=300, seed=1), sources, round_examples=200, batch_size=50, merge_workers=2)
    assert progress.examples == 1800 and len(progress.tree_seconds) >= 3
    assert io.dumps(model) == io.dumps(plain_loop(WeightedNaiveBayes(history_size=300, seed=1), sources, 200, 50))
