"""The capymoa adapter (wnb_stream.apps.compat), run in capymoa's own prequential evaluation.

The streams are built here from River's bundled data and our generators (no download). Needs
capymoa and Java: the tests skip without them, except in CI (``WNB_REQUIRE_CAPYMOA=1``, set by
``.ci/run``), where they must run.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
from river import datasets as river_datasets
from testkit import require

from wnb_stream import WeightedNaiveBayes, weights
from wnb_stream.apps import compat, datasets, evaluation

pytestmark = pytest.mark.capymoa  # CI runs these in capymoa's own environment (pytest -m capymoa)
require("capymoa", compat.capymoa_available(), f"({compat._IMPORT_ERROR})")

from capymoa.classifier import NaiveBayes  # noqa: E402
from capymoa.evaluation import prequential_evaluation  # noqa: E402
from capymoa.stream import CSVStream, NumpyStream  # noqa: E402


@pytest.fixture(scope="module")
def phishing():
    rows = list(river_datasets.Phishing())
    names = list(rows[0][0])
    X = np.array([[x[k] for k in names] for x, _ in rows], dtype=float)
    y = np.array([int(label) for _, label in rows])
    return rows, NumpyStream(X, y, dataset_name="Phishing", feature_names=names)


def test_prequential_evaluation_of_capymoa_runs_our_model_as_our_loop_does(phishing):
    rows, stream = phishing
    learner = compat.CapyMOAClassifier(stream.get_schema(), random_seed=42)
    results = prequential_evaluation(stream, learner, window_size=250)
    ours = evaluation.prequential([(x, int(y)) for x, y in rows], {"wnb": WeightedNaiveBayes(seed=42)}, warm_up_rows=0)
    assert results.cumulative.accuracy() == pytest.approx(100 * ours.results[0].accuracy, abs=1e-9)
    assert results.cumulative.accuracy() > 90
    assert len(results.windowed.accuracy()) == 5 and str(learner) == "WeightedNaiveBayes"
    assert learner.model.weights["ip_in_url"] == 0.0  # the River model is there to inspect


def test_beside_moas_own_naive_bayes_on_the_same_stream(phishing):
    _, stream = phishing
    ours = prequential_evaluation(stream, compat.CapyMOAClassifier(stream.get_schema(), random_seed=42))
    moa = prequential_evaluation(stream, NaiveBayes(schema=stream.get_schema()))
    assert ours.cumulative.accuracy() > moa.cumulative.accuracy()  # 90.8 % against 88.4 %


def test_nominal_attributes_reach_the_model_as_categories(tmp_path):
    rows = list(datasets.get_dataset("stagger").stream(2000))
    path = tmp_path / "stagger.csv"
    names = list(rows[0][0])
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(names + ["class"])
        for x, y in rows:
            writer.writerow([x[k] for k in names] + [str(y)])
    categories = {name: sorted({x[name] for x, _ in rows}) for name in names}
    stream = CSVStream(str(path), target="class", categories={**categories, "class": ["0", "1"]}, name="stagger",
                       length=len(rows))  # capymoa 0.15.1's evaluation needs the length of a CSV stream
    learner = compat.CapyMOAClassifier(stream.get_schema(), model=WeightedNaiveBayes(optimizer=weights.Uniform()))
    results = prequential_evaluation(stream, learner)
    ours = evaluation.prequential(rows, {"nb": WeightedNaiveBayes(optimizer=weights.Uniform())}, warm_up_rows=0)
    # the same model learned (ties between classes are broken differently: capymoa takes the
    # lowest class index, our loop the class seen first, hence a tolerance of 2 examples)
    assert results.cumulative.accuracy() == pytest.approx(100 * ours.results[0].accuracy, abs=0.1)
    for x, _ in rows[:50]:
        assert learner.model.predict_proba_one(x) == ours.models["nb"].predict_proba_one(x)
    stream.restart()
    x, y = next(compat.river_stream(stream))
    assert x == rows[0][0] and y == str(rows[0][1])  # nominal values as their strings


def test_river_stream_reads_a_capymoa_stream_as_river_pairs(phishing):
    rows, stream = phishing
    stream.restart()
    read = list(compat.river_stream(stream, labels=False))
    assert len(read) == len(rows)
    assert read[0][0] == pytest.approx(rows[0][0]) and read[0][1] == int(rows[0][1])


def test_any_river_classifier_goes_in(phishing):
    from river import tree

    _, stream = phishing
    learner = compat.CapyMOAClassifier(stream.get_schema(), model=tree.HoeffdingTreeClassifier())
    stream.restart()
    assert learner.predict_proba(stream.next_instance()) is None  # nothing learned yet
    assert prequential_evaluation(stream, learner).cumulative.accuracy() > 80


def test_without_capymoa_the_adapter_says_what_to_install(monkeypatch, phishing):
    monkeypatch.setattr(compat, "_IMPORT_ERROR", ImportError("No module named 'capymoa'"))
    with pytest.raises(ImportError, match=r"pip install \"wnb-stream\[moa\]\""):
        compat.CapyMOAClassifier(phishing[1].get_schema())
