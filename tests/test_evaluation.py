"""The prequential loop and its metrics (wnb_stream.apps.evaluation)."""

from __future__ import annotations

import csv
import gc
import itertools
import math
import pathlib
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from river import base, datasets, naive_bayes, tree
from sklearn.metrics import roc_auc_score

from wnb_stream.apps import evaluation
from wnb_stream.apps.evaluation import (
    COMPRESSION_CLIP,
    LOG_LOSS_CLIP,
    RunningMetrics,
    binary_auc,
    class_entropy,
    compression_rate,
    macro_auc,
    prequential,
)
from wnb_stream.apps.models import NoOp, NumericOnly, build_model, deep_memory, make_model, parse_models

ANCHORS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "anchors" / "peers-prequential.csv"


# --- AUC ---------------------------------------------------------------------------------------


@settings(max_examples=examples(100), deadline=None)
@given(
    labels=st.lists(st.booleans(), min_size=2, max_size=60),
    seed=st.integers(0, 2**32 - 1),
    levels=st.integers(1, 6),
)
def test_binary_auc_matches_sklearn_with_ties(labels, seed, levels):
    positive = np.array(labels)
    if positive.all() or not positive.any():
        assert math.isnan(binary_auc(positive, np.zeros(len(positive))))
        return
    # Few distinct score levels: many ties, where mid-ranks matter.
    scores = np.random.default_rng(seed).integers(0, levels, len(positive)) / levels
    assert binary_auc(positive, scores) == pytest.approx(roc_auc_score(positive, scores), abs=1e-12)


@pytest.mark.parametrize("n_classes", [3, 4, 6])
def test_macro_auc_matches_sklearn_ovr_macro(n_classes):
    rng = np.random.default_rng(n_classes)
    y = np.r_[np.arange(n_classes), rng.integers(0, n_classes, 80)]
    proba = rng.dirichlet(np.ones(n_classes), len(y))
    proba[rng.random(len(y)) < 0.3] = 1.0 / n_classes  # ties, as empty predictions make them
    expected = roc_auc_score(y, proba, multi_class="ovr", average="macro")
    assert macro_auc(y, proba) == pytest.approx(expected, abs=1e-12)


def test_macro_auc_binary_is_sklearn_binary_auc():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    p1 = rng.random(50)
    proba = np.c_[1 - p1, p1]
    assert macro_auc(y, proba) == pytest.approx(roc_auc_score(y, p1), abs=1e-12)


def test_macro_auc_skips_classes_without_positives_and_is_nan_when_none_left():
    y = np.array([0, 1, 0, 1])
    proba = np.array([[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.6, 0.4, 0.0], [0.3, 0.7, 0.0]])
    assert macro_auc(y, proba) == pytest.approx(1.0)
    assert math.isnan(macro_auc(np.zeros(3, dtype=int), np.ones((3, 2)) / 2))


# --- log loss, accuracy, empty predictions -----------------------------------------------------


def test_log_loss_clips_at_1e15_for_an_unseen_class_and_a_zero_probability():
    metrics = RunningMetrics()
    metrics.update("c", {"a": 0.6, "b": 0.4})  # "c" absent from the prediction
    assert metrics.log_loss == pytest.approx(-math.log(LOG_LOSS_CLIP))
    metrics.update("a", {"a": 0.0, "b": 1.0})  # explicit zero
    metrics.update("a", {"a": 1e-30, "b": 1.0})  # below the clip
    assert metrics.log_loss == pytest.approx(-math.log(LOG_LOSS_CLIP))
    assert metrics.accuracy == 0.0


def test_log_loss_is_mean_negative_log_probability():
    metrics = RunningMetrics()
    for y, proba in [("a", {"a": 0.7, "b": 0.3}), ("b", {"a": 0.2, "b": 0.8}), ("b", {"a": 0.9, "b": 0.1})]:
        metrics.update(y, proba)
    assert metrics.log_loss == pytest.approx(-(math.log(0.7) + math.log(0.8) + math.log(0.1)) / 3)
    assert metrics.accuracy == pytest.approx(2 / 3)


def test_empty_prediction_is_wrong_and_uniform_over_known_classes():
    given_classes = RunningMetrics(classes=[0, 1, 2, 3])
    given_classes.update(0, {})
    assert given_classes.accuracy == 0.0
    assert given_classes.log_loss == pytest.approx(math.log(4))
    # Without classes given: the labels seen so far, the current one included.
    seen = RunningMetrics()
    seen.update("a", {})
    seen.update("b", {})
    assert seen.log_loss == pytest.approx((0.0 + math.log(2)) / 2)


def test_accuracy_breaks_ties_by_dict_order_like_river():
    metrics = RunningMetrics()
    metrics.update("b", {"b": 0.5, "a": 0.5})
    metrics.update("b", {"a": 0.5, "b": 0.5})
    assert metrics.accuracy == 0.5


def test_running_auc_matches_sklearn_on_the_stored_predictions():
    rng = np.random.default_rng(3)
    metrics = RunningMetrics(classes=["x", "y", "z"])
    rows, labels = [], []
    for _ in range(40):
        p = rng.dirichlet(np.ones(3))
        label = ["x", "y", "z"][rng.integers(0, 3)]
        metrics.update(label, dict(zip(["z", "x", "y"], p)))  # columns in another order
        rows.append([p[1], p[2], p[0]])
        labels.append(["x", "y", "z"].index(label))
    expected = roc_auc_score(labels, rows, multi_class="ovr", average="macro")
    assert metrics.macro_auc == pytest.approx(expected, abs=1e-12)


def test_running_auc_can_be_turned_off():
    metrics = RunningMetrics(keep_proba=False)
    metrics.update(1, {1: 0.9, 0: 0.1})
    assert math.isnan(metrics.macro_auc)


# --- compression rate (docs/algorithms/prediction.md#metrics) -----------------------------------


def test_class_entropy():
    assert class_entropy([5, 5]) == pytest.approx(math.log(2))
    assert class_entropy([3, 0]) == 0.0
    assert class_entropy([]) == 0.0
    assert class_entropy([1, 1, 2]) == pytest.approx(-(2 * 0.25 * math.log(0.25) + 0.5 * math.log(0.5)))


def test_compression_rate_known_values():
    counts = [30, 10]
    h = class_entropy(counts)
    assert compression_rate(0.0, counts) == 1.0  # perfect
    assert compression_rate(40 * h, counts) == 0.0  # the prior's code length
    assert compression_rate(2 * 40 * h, counts) == pytest.approx(-1.0)  # worse than the prior
    assert compression_rate(0.5 * 40 * h, counts) == pytest.approx(0.5)
    assert compression_rate(1.0, [7, 0]) == 0.0  # H(Y) = 0
    # Khiops rounds a rate smaller than H(Y)/N to 0.
    assert compression_rate(40 * h * (1 - 0.5 * h / 40), counts) == 0.0


def test_running_compression_rate_clips_at_1e6():
    metrics = RunningMetrics()
    metrics.update("a", {"a": 0.5, "b": 0.5})
    metrics.update("b", {"a": 1.0})  # "b" unseen by the model: 1e-6, not 1e-15
    expected = 1 - (math.log(2) - math.log(COMPRESSION_CLIP)) / (2 * math.log(2))
    assert metrics.compression_rate == pytest.approx(expected)


def test_compression_rate_is_one_minus_log_loss_over_entropy_without_clipping():
    metrics = RunningMetrics()
    rng = np.random.default_rng(1)
    for _ in range(50):
        p = float(rng.uniform(0.05, 0.95))
        metrics.update(int(rng.integers(0, 2)), {0: p, 1: 1 - p})
    h = class_entropy(np.bincount(metrics._y))
    assert metrics.compression_rate == pytest.approx(1 - metrics.log_loss / h)


# --- the loop ----------------------------------------------------------------------------------


class Spy(base.Classifier):
    """Records the calls it gets; predicts the last label it learnt."""

    def __init__(self):
        self.calls = []
        self.last = None

    def learn_one(self, x, y):
        self.calls.append(("learn", x["i"]))
        self.last = y

    def predict_proba_one(self, x):
        self.calls.append(("predict", x["i"]))
        return {} if self.last is None else {self.last: 1.0}


class Weighted(Spy):
    weights = {"i": 0.0, "j": 0.5, "k": 1.0}


def _toy_stream(n):
    return (({"i": i, "j": i % 3}, i % 2) for i in range(n))


def test_every_model_predicts_before_learning_the_same_examples():
    spies = {"a": Spy(), "b": Spy()}
    run = prequential(_toy_stream(10), spies, n=7)
    expected = [(verb, i) for i in range(7) for verb in ("predict", "learn")]
    assert spies["a"].calls == expected and spies["b"].calls == expected
    assert run.n == 7 and [r.n for r in run.results] == [7, 7]
    # Predicting the previous label on an alternating stream is always wrong.
    assert run.results[0].accuracy == 0.0
    assert run.results[0].n_features == 2


def test_results_agree_with_a_hand_written_loop():
    data = list(datasets.Phishing().take(300))
    run = prequential(data, {"gnb": naive_bayes.GaussianNB()}, classes=[True, False])
    model, correct, nll = naive_bayes.GaussianNB(), 0, 0.0
    for x, y in data:
        proba = model.predict_proba_one(x) or {True: 0.5, False: 0.5}
        correct += bool(model.predict_proba_one(x)) and max(proba, key=proba.get) == y
        nll -= math.log(max(proba.get(y, 0.0), 1e-15))
        model.learn_one(x, y)
    row = run.results[0]
    assert row.accuracy == pytest.approx(correct / 300)
    assert row.log_loss == pytest.approx(nll / 300)
    assert row.selected is None
    assert row.examples_per_second > 0 and row.peak_memory > 0


def test_selected_variables_counts_non_zero_weights():
    run = prequential(_toy_stream(5), {"w": Weighted()})
    assert run.results[0].selected == 2


def test_learning_curves_and_progress():
    seen = []
    run = prequential(_toy_stream(1000), {"s": Spy()}, n=1000, checkpoints=10, on_progress=lambda r: seen.append(r.n),
                      progress_every=250)  # fmt: skip
    assert run.curves["s"]["n"] == list(range(100, 1001, 100))
    assert len(run.curves["s"]["accuracy"]) == 10
    assert seen == [250, 500, 750, 1000, 1000]


def test_memory_is_one_measure_for_every_model():
    class Measured(Spy):
        def memory_usage(self):
            return 12345

    run = prequential(_toy_stream(3), {"m": Measured()})
    assert run.results[0].peak_memory == deep_memory(run.models["m"]) != 12345


def _learned(model, n=1250):
    for x, y in itertools.islice(datasets.Phishing(), n):
        model.learn_one(x, y)
    return model


@pytest.mark.parametrize("make", [naive_bayes.GaussianNB, lambda: tree.HoeffdingTreeClassifier()])
def test_deep_memory_is_rivers_measure_for_a_model_without_numpy_arrays(make):
    model = _learned(make())
    assert deep_memory(model) == model._raw_memory_usage


@pytest.mark.parametrize("name, summary", [("vns", "gk"), ("graphical", "cpid"), ("nb", "gaussian")])
def test_deep_memory_agrees_with_memory_usage_and_explains_rivers_figure(name, summary):
    """River's walk adds ``nbytes`` to ``sys.getsizeof`` of an array, which already holds the data
    of an array that owns it, and counts views' data again: for our models, made of NumPy arrays,
    it is about twice the memory (issue 17: 1.21 MB against 2.63 MB on Phishing)."""
    model = _learned(make_model(name, summary=summary))
    deep = deep_memory(model)
    assert deep == pytest.approx(model.memory_usage(), rel=0.10)
    owned, views = _array_bytes(model)
    assert model._raw_memory_usage == pytest.approx(deep + owned + views, rel=0.02)
    assert model._raw_memory_usage > 1.7 * deep


def _array_bytes(root):
    """Bytes of the data of the arrays reachable from ``root``: owned, and seen through views."""
    seen, pending, owned, views = set(), [root], 0, 0
    skipped = (type, types.ModuleType, types.FunctionType)
    while pending:
        walked = []
        for item in pending:
            if isinstance(item, skipped) or id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, np.ndarray):
                if item.flags.owndata:
                    owned += item.nbytes
                else:
                    views += item.nbytes
            walked.append(item)
        pending = gc.get_referents(*walked)
    return owned, views


def test_prequential_needs_a_model():
    with pytest.raises(ValueError, match="models"):
        prequential(_toy_stream(3), {})


@pytest.mark.skipif(not ANCHORS.is_file(), reason="the peers' anchor table is not beside the repository")
def test_reproduces_the_anchor_for_river_gaussian_nb_on_phishing():
    """The conventions above are those of the peers' anchor table (benchmarks/README.md)."""
    anchor = next(
        row for row in csv.DictReader(open(ANCHORS))
        if row["stream"] == "Phishing" and row["model"] == "river.GaussianNB"
    )  # fmt: skip
    run = prequential(datasets.Phishing(), {"gnb": naive_bayes.GaussianNB()}, classes=[False, True])
    row = run.results[0]
    assert row.accuracy == pytest.approx(float(anchor["accuracy"]), abs=1e-6)
    assert row.log_loss == pytest.approx(float(anchor["log_loss"]), abs=1e-6)
    assert row.macro_auc == pytest.approx(float(anchor["macro_auc"]), abs=1e-5)


# --- models ------------------------------------------------------------------------------------


def test_make_model_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown model 'svm'"):
        make_model("svm")
    with pytest.raises(ValueError, match="unknown summary 'tdigest'"):
        make_model("nb", summary="tdigest")


@pytest.mark.parametrize("name, search", [("fnb-vns", "FNB"), ("sgcf-vns", "SGCF")])
def test_the_hybrid_names_start_vns_from_the_search_and_take_its_parameters(name, search):
    model = make_model(name, params={"optimizer": {"batch_size": 50}})
    assert type(model.optimizer).__name__ == search and model.optimizer.batch_size == 50
    assert type(model.optimizer.refine).__name__ == "VNS"
    assert make_model(name).optimizer.refine is not make_model(name).optimizer.refine
    _learned(model, n=300)
    assert model._engine.optimizer.n_searches >= 1 and model._engine.optimizer._refiner is not None


def test_numeric_only_drops_what_gaussian_nb_cannot_read():
    model = NumericOnly(naive_bayes.GaussianNB())
    model.learn_one({"a": 1.0, "b": "red", "c": None, "d": float("nan"), "e": float("inf")}, 0)
    assert set(model.classifier.gaussians[0]) == {"a"}


def test_noop_does_nothing():
    model = NoOp()
    assert model.learn_one({"a": 1}, 1) is None
    assert model.predict_proba_one({"a": 1}) == {}


# --- rolling curves, warm-up, partial results, model specs -------------------------------------


def test_rolling_metrics_cover_the_last_window_examples():
    metrics = RunningMetrics(window=3)
    for y, p in [("a", 0.9), ("a", 0.9), ("b", 0.2), ("b", 0.2), ("b", 0.2)]:
        metrics.update(y, {"a": 1 - p if y == "b" else p, "b": p if y == "b" else 1 - p})
    assert metrics.accuracy == pytest.approx(2 / 5) and metrics.rolling_accuracy == 0.0
    assert metrics.rolling_log_loss == pytest.approx(-math.log(0.2))


def test_curves_hold_cumulative_and_rolling_values():
    run = prequential(_toy_stream(1000), {"s": Spy()}, n=1000, checkpoints=10, window=50)
    curve = run.curves["s"]
    assert set(curve) == {"n", "accuracy", "log_loss", "rolling_accuracy", "rolling_log_loss"}
    assert all(len(values) == 10 for values in curve.values()) and run.window == 50


class Dice(base.Classifier):
    """Random distributions over three classes (empty at first); keeps what it predicted."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self.predicted = []

    def learn_one(self, x, y):
        return None

    def predict_proba_one(self, x):
        if len(self.predicted) < 3:  # no prediction yet: wrong, uniform over the known classes
            proba = {}
        else:
            p = self._rng.dirichlet([1.0, 1.0, 1.0])
            proba = {c: float(v) for c, v in zip("abc", p) if v > 0.2 or c == "a"}  # some classes missing
        self.predicted.append(proba)
        return proba


@pytest.mark.parametrize("window", [1, 7, 50, 1000])
def test_rolling_curves_and_final_rolling_figures_match_a_brute_force_computation(window):
    rng = np.random.default_rng(5)
    stream = [({"i": i}, str(rng.choice(list("abc")))) for i in range(300)]
    model = Dice(seed=3)
    run = prequential(stream, {"d": model}, classes=["a", "b", "c"], checkpoint_every=13, window=window)
    hits, losses = [], []
    for (_, y), proba in zip(stream, model.predicted):
        if proba:
            hits.append(max(proba, key=proba.get) == y)
            losses.append(-math.log(max(proba.get(y, 0.0), evaluation.LOG_LOSS_CLIP)))
        else:
            hits.append(False)
            losses.append(math.log(3))
    curve = run.curves["d"]
    assert curve["n"] == list(range(13, 300, 13)) + [300]
    for i, end in enumerate(curve["n"]):
        last = slice(max(0, end - window), end)
        assert curve["rolling_accuracy"][i] == pytest.approx(np.mean(hits[last]))
        assert curve["rolling_log_loss"][i] == pytest.approx(np.mean(losses[last]))
        assert curve["accuracy"][i] == pytest.approx(np.mean(hits[:end]))
    (row,) = run.results
    assert row.window == window
    assert row.rolling_accuracy == pytest.approx(np.mean(hits[-window:]))
    assert row.rolling_log_loss == pytest.approx(np.mean(losses[-window:]))


def test_warm_up_runs_clones_and_leaves_the_models_untouched():
    spy = Spy()
    evaluation.warm_up({"s": spy}, n=20)
    assert spy.calls == []
    model = make_model("vns")
    evaluation.warm_up({"m": model})
    assert model.predict_proba_one({"a": 1.0}) == {}


def test_an_exception_carries_the_evaluation_so_far():
    def stream():
        yield from _toy_stream(30)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as stopped:
        prequential(stream(), {"s": Spy()}, checkpoint_every=7)
    partial = stopped.value.evaluation
    assert not partial.complete and partial.n == 30 and partial.results[0].n == 30
    assert partial.curves["s"]["n"] == [7, 14, 21, 28, 30]

    class Breaks(Spy):
        def learn_one(self, x, y):
            if x["i"] == 5:
                raise ValueError("no")
            super().learn_one(x, y)

    with pytest.raises(ValueError) as stopped:
        prequential(_toy_stream(30), {"a": Spy(), "b": Breaks()})
    assert stopped.value.model == "b" and stopped.value.evaluation.n == 5
    assert [r.n for r in stopped.value.evaluation.results] == [5, 5]


def test_parse_models_splits_at_top_level_commas_only():
    specs = parse_models('nb, x=vns{"optimizer": {"penalty": 0.1}, "history_size": 100}, river.tree:HoeffdingTreeClassifier')
    assert [(s.label, s.target) for s in specs] == [("nb", "nb"), ("x", "vns"), ("HoeffdingTreeClassifier", "river.tree:HoeffdingTreeClassifier")]
    assert specs[1].params == {"optimizer": {"penalty": 0.1}, "history_size": 100}
    model = build_model(specs[1], seed=3)
    assert model.history_size == 100 and model.optimizer.penalty == 0.1 and model.seed == 3
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_models('nb{"history_size": 1} x')
    with pytest.raises(ValueError, match="unknown model 'svm'"):
        parse_models("svm")


def test_build_model_passes_the_seed_to_a_river_model_that_takes_one():
    model = build_model(parse_models("river.forest:ARFClassifier{\"n_models\": 2}")[0], seed=7)
    assert model.seed == 7 and model.n_models == 2
