"""Training on partitions with Ray (``wnb_stream.distributed.ray``), on a local cluster started by the test.

End to end on file shards: every message is absorbed once (class and category counts equal the
stream's), and the trained model predicts as one model trained on the whole stream; then the
same with a learner and the coordinator killed mid-stream (exactly once through restarts, and
a second ``train`` resumes from the checkpoint). Skipped when Ray is not installed, unless
``WNB_REQUIRE_RAY=1`` (CI installs the ``ray`` extra and sets it).
"""

from __future__ import annotations

import functools
import importlib
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from testkit import require

require("ray")
import ray  # noqa: E402

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]  # one local cluster at a time (pytest -n); local Ray clusters: CI runs them (--run-slow)

from partition_cases import counts_of, exact_model, expected_counts, messages, shards  # noqa: E402

from wnb_stream import WeightedNaiveBayes, io  # noqa: E402
from wnb_stream.distributed import IterableSource  # noqa: E402
from wnb_stream.distributed import ray as wnb_ray  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    if not ray.is_initialized():  # (a page of the docs may have started one in this process)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_two_learners_train_one_model(cluster, tmp_path):
    parts = [messages(p, 1500) for p in range(2)]
    model, progress = wnb_ray.train(exact_model(), shards(tmp_path, parts), round_examples=400, measure_bytes=True)
    model._check()
    assert counts_of(model) == expected_counts(parts)
    assert progress.examples == 3000 and progress.messages == 3000 and progress.rounds >= 4
    assert progress.restarts == 0 and progress.accuracy > 0.6 and min(progress.shipped_bytes[:-1]) > 0
    whole = exact_model()
    for part in parts:
        for m in part:
            whole.learn_one(m["x"], m["y"])
    test = messages(99, 500)
    agree = np.mean([whole.predict_one(m["x"]) == model.predict_one(m["x"]) for m in test])
    assert agree >= 0.97


def test_weights_stepped_in_the_background_train_the_same_model(cluster, tmp_path):
    # the coordinator's actor publishes the stepped predictor to the learners' actors itself
    parts = [messages(20 + p, 1200) for p in range(2)]
    sources = shards(tmp_path, parts)
    models = [wnb_ray.train(WeightedNaiveBayes(history_size=300, seed=1), sources, round_examples=300, background_weights=later)[0] for later in (False, True)]
    assert io.dumps(models[0]) == io.dumps(models[1])


def test_exactly_once_when_a_learner_and_the_coordinator_are_killed(cluster, tmp_path):
    parts = [messages(10 + p, 2000) for p in range(2)]
    sources = shards(tmp_path, parts)
    path = tmp_path / "checkpoint.json.gz"
    kills = []

    def kill(progress, actors):
        if progress.rounds == 2 and not kills:
            ray.kill(actors["learners"]["shard-1"], no_restart=False)
            kills.append("learner")
        elif progress.rounds == 4 and len(kills) == 1:
            ray.kill(actors["coordinator"], no_restart=False)
            kills.append("coordinator")

    model, progress = wnb_ray.train(exact_model(), sources, checkpoint_path=path, round_examples=300, on_round=kill)
    # a killed learner is always noticed (its queued runs fail); a coordinator killed between two
    # rounds restarts from its checkpoint, which holds everything it had, before the next round
    # reaches it, so nothing may need recovering then
    assert kills == ["learner", "coordinator"] and progress.restarts >= 1
    model._check()
    assert counts_of(model) == expected_counts(parts)
    # every message was read (some twice when the killed learner had read messages it had not
    # shipped yet: whether it had depends on where the kill falls, so not asserted), none absorbed
    # twice (the counts above)
    assert progress.messages >= 4000
    # a second call resumes from the checkpoint: nothing is left to read, nothing changes
    again, more = wnb_ray.train(WeightedNaiveBayes(), sources, checkpoint_path=path, round_examples=300)
    assert counts_of(again) == expected_counts(parts) and more.examples == 0


def test_bad_arguments_are_refused(cluster, tmp_path):
    with pytest.raises(ValueError, match="sources"):
        wnb_ray.train(exact_model(), {})
    with pytest.raises(ValueError, match="round"):
        wnb_ray.train(exact_model(), shards(tmp_path, [messages(1, 10)]), round_examples=None)


_EXAMPLE = pathlib.Path(__file__).parents[1] / "examples" / "ray_partitions.py"


def _run_example(directory) -> subprocess.CompletedProcess:
    """The README's Ray example run as a user runs it, in ``directory`` (each run starts its own
    local Ray cluster)."""
    env = {**os.environ, "PYTHONPATH": str(_EXAMPLE.parents[1])}
    result = subprocess.run([sys.executable, str(_EXAMPLE)], cwd=directory, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def test_the_readme_example_runs_and_is_the_readme_s(tmp_path):
    assert _EXAMPLE.read_text() in (_EXAMPLE.parents[1] / "README.md").read_text()
    lines = _run_example(tmp_path).stdout.strip().splitlines()
    assert lines[0].startswith("1250 examples in ") and lines[-1] == "True"


def test_the_readme_example_run_again_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    """The example's checkpoint written by a first training (here the local driver's, the same
    coordinator checkpoint, so that one test starts one Ray cluster), the example run again finds
    every example absorbed (issue 32: it printed "nan")."""
    from wnb_stream.distributed import local

    monkeypatch.syspath_prepend(str(_EXAMPLE.parent))  # (the spawned learners import the example's partitions)
    example = importlib.import_module(_EXAMPLE.stem)
    sources = {p: functools.partial(IterableSource, functools.partial(example.partition, p, 2)) for p in range(2)}
    local.train(WeightedNaiveBayes(seed=1), sources, round_examples=200, checkpoint_path=tmp_path / "phishing-rounds.json.gz")
    result = _run_example(tmp_path)
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "nothing new to read: phishing-rounds.json.gz holds the model of all 1250 examples (delete it to train again)"
    assert lines[-1] == "True" and "nan" not in result.stdout


def test_a_type_changed_message_does_not_wedge_training(cluster, tmp_path):
    # a string in the numeric feature u as the first row of a learner's delta: at the start of its
    # shard (round 1, when the model knows no feature yet) and at the start of its second run
    parts = [messages(50 + p, 1200) for p in range(2)]
    wedges = [{"x": {"u": "text", "colour": "red"}, "y": "a"}, {"x": {"u": "more text"}, "y": "b"}]
    parts[1][0], parts[1][400] = wedges
    path = tmp_path / "checkpoint.json.gz"
    model, progress = wnb_ray.train(exact_model(), shards(tmp_path, parts), checkpoint_path=path, round_examples=400)
    model._check()
    registry = model._engine.registry
    assert registry.variables[registry.index["u"]].kind == "numeric"
    clean = [parts[0], [m for m in parts[1] if m not in wedges]]
    assert counts_of(model) == expected_counts(clean) and progress.examples == 2398
    assert progress.refused >= 1 and progress.rejected >= 2  # round 1 refused the shard that met u as a string
    resumed, again = wnb_ray.train(exact_model(), shards(tmp_path, parts), checkpoint_path=path, round_examples=400)
    assert again.examples == 0 and counts_of(resumed) == counts_of(model)  # a resume finds everything absorbed


def test_reports_merged_in_a_tree_of_ray_tasks_train_one_model(cluster, tmp_path):
    parts = [messages(60 + p, 600) for p in range(3)]
    model, progress = wnb_ray.train(exact_model(), shards(tmp_path, parts), round_examples=200, merge_tree=True)
    model._check()
    assert counts_of(model) == expected_counts(parts) and progress.examples == 1800
