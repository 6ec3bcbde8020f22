"""Prequential (test-then-train) evaluation: the loop, the metrics and the models it compares.

One pass over a stream: for every example each model first predicts ``predict_proba_one(x)``, then
learns ``learn_one(x, y)`` (docs/algorithms/prediction.md#metrics); every model sees the same
examples in the same order. Per model the loop reports

- accuracy (a model with no prediction yet, ``{}``, counts as wrong);
- log loss, the mean of −log p(y | x) with p clipped at 1e-15; a class the model has not seen gets
  the clipped value, and an empty prediction counts as the uniform distribution over the classes
  known to the evaluator (those given up front, plus every label seen so far, the current one
  included);
- macro one-vs-rest AUC (exact, from the stored probabilities: O(n·J) memory, can be turned off);
- the compression rate 1 − NLL / (n·H(Y)) (docs/algorithms/prediction.md#metrics), with Khiops' conventions
  (true-class probability clipped at 1e-6, 0 when H(Y) = 0, 0 when |rate| < H(Y)/n);
- the number of variables with non-zero weight (for models with ``weights``), out of the number
  of variables seen in the stream;
- examples per second of the predict+learn calls of that model alone, after every model has been
  warmed up on a few rows of another stream (``warm_up``: the compiled kernels' first load is not
  charged to the first model), and peak memory (``deep_memory``, the same walk of the object graph
  for every model, sampled along the stream).

Learning curves hold the cumulative values and the values over a rolling window of the last
``window`` examples.

These conventions reproduce the River and MOA peers' accuracy and log loss as measured by the
benchmarks' anchor table (``benchmarks/README.md``, "How the quality figures are computed").

>>> from river import datasets, naive_bayes
>>> evaluation = prequential(datasets.Phishing(), {"gnb": naive_bayes.GaussianNB()},
...                          classes=[False, True])
>>> row = evaluation.results[0]
>>> row.model, row.n, f"{row.accuracy:.4f} {row.log_loss:.4f} {row.macro_auc:.4f}"
('gnb', 1250, '0.8840 0.5875 0.9368')
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
import time
from typing import Any, Callable, Hashable, Iterable, Mapping

import numpy as np
from river import base

from ..stream.warm_up import rows as warm_up_rows
from .models import memory_of, selected_variables

__all__ = [
    "LOG_LOSS_CLIP",
    "COMPRESSION_CLIP",
    "Evaluation",
    "Result",
    "RunningMetrics",
    "binary_auc",
    "macro_auc",
    "compression_rate",
    "class_entropy",
    "warm_up",
    "warm_up_stream",
    "WARM_UP_ROWS",
    "prequential",
]

#: Probabilities below this are raised to it before the log in the log loss
#: (docs/algorithms/prediction.md#metrics).
LOG_LOSS_CLIP = 1e-15
#: Khiops' floor on the true-class probability in the compression rate (docs/algorithms/prediction.md#metrics).
COMPRESSION_CLIP = 1e-6


# ---------------------------------------------------------------------------------------------
# Pure metric functions


def binary_auc(positive: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` for the ``positive`` examples (Mann–Whitney U).

    Ties count one half (mid-ranks). ``positive`` and ``scores`` are ``(n,)`` arrays; returns NaN
    when one of the two groups is empty. Cost: O(n log n).

    >>> binary_auc(np.array([False, False, True, True]), np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    """
    positive = np.asarray(positive, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    sorted_scores = scores[order]
    # Mid-ranks (1-based) of tied runs: the average of the first and last rank of each run.
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    ends = np.r_[starts[1:], len(scores)]
    run_ranks = (starts + 1 + ends) / 2.0
    ranks = np.empty(len(scores))
    ranks[order] = np.repeat(run_ranks, ends - starts)
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def macro_auc(y: np.ndarray, proba: np.ndarray) -> float:
    """Macro one-vs-rest AUC: the mean over classes of the AUC of column ``j`` for class ``j``.

    ``y`` is ``(n,)`` class indices, ``proba`` is ``(n, J)``. Classes without positive or without
    negative examples are left out (NaN if none is left). With rows summing to 1 and two classes
    this equals the binary AUC of either column, as ``sklearn.metrics.roc_auc_score`` computes it.

    >>> macro_auc(np.array([0, 1, 2, 1]),
    ...           np.array([[.8, .1, .1], [.2, .5, .3], [.1, .3, .6], [.3, .4, .3]]))
    1.0
    """
    y = np.asarray(y)
    proba = np.asarray(proba, dtype=float).reshape(len(y), -1)
    values = [binary_auc(y == j, proba[:, j]) for j in range(proba.shape[1])]
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def class_entropy(class_counts: Iterable[float]) -> float:
    """H(Y) = −Σ_j (N_j/N) log(N_j/N) in nats, from class counts (0 for an empty or pure sample)."""
    counts = np.asarray(list(class_counts), dtype=float)
    counts = counts[counts > 0]
    if counts.size == 0:
        return 0.0
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


def compression_rate(nll_total: float, class_counts: Iterable[float]) -> float:
    """Compression rate 1 − NLL / (N·H(Y)) (docs/algorithms/prediction.md#metrics).

    ``nll_total`` is the summed negative log-likelihood of the true classes (nats, probabilities
    clipped at ``COMPRESSION_CLIP`` by the caller), ``class_counts`` the class counts of the same
    examples. Following Khiops, the rate is 0 when H(Y) = 0 and is rounded to 0 when
    |rate| < H(Y)/N. 1 is perfect, 0 is no better than the class prior, negative is worse.

    >>> round(compression_rate(0.5 * 4 * math.log(2), [2, 2]), 6)
    0.5
    """
    counts = np.asarray(list(class_counts), dtype=float)
    n = counts.sum()
    h = class_entropy(counts)
    if n <= 0 or h == 0.0:
        return 0.0
    rate = 1.0 - nll_total / (n * h)
    return 0.0 if abs(rate) < h / n else float(rate)


# ---------------------------------------------------------------------------------------------
# Running metrics of one model


class RunningMetrics:
    """Prequential metrics of one model, updated one prediction at a time.

    Parameters
    ----------
    classes
        Class labels known up front (may be empty); labels met in the stream are added in order
        of first appearance. They define the uniform distribution used for an empty prediction
        and the columns of the stored probabilities.
    keep_proba
        Store every predicted distribution (``(n, J)`` floats) to compute the exact macro AUC.
    window
        Length of the rolling window of ``rolling_accuracy`` and ``rolling_log_loss``.

    Examples
    --------
    >>> metrics = RunningMetrics(classes=["a", "b"])
    >>> metrics.update("a", {})                       # no prediction yet: wrong, uniform
    >>> metrics.update("b", {"a": 0.2, "b": 0.8})
    >>> metrics.update("c", {"a": 0.5, "b": 0.5})     # a class never seen: clipped at 1e-15
    >>> round(metrics.accuracy, 4), round(metrics.log_loss, 4)
    (0.3333, 11.8184)
    >>> metrics = RunningMetrics(window=2)
    >>> for y in ["a", "a", "b", "b"]:
    ...     metrics.update(y, {"a": 0.9, "b": 0.1})
    >>> metrics.accuracy, metrics.rolling_accuracy
    (0.5, 0.0)
    """

    def __init__(self, classes: Iterable[Hashable] = (), keep_proba: bool = True, window: int = 1000):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.keep_proba = keep_proba
        self.window = window
        self._recent: collections.deque = collections.deque(maxlen=window)  # (correct, −log p) per example
        self.n = 0
        self.correct = 0
        self._nll = 0.0  # Σ −log max(p, 1e-15)
        self._nll_compression = 0.0  # Σ −log max(p, 1e-6) (docs/algorithms/prediction.md#metrics)
        self._position: dict = {}
        self._labels: list = []
        self._class_counts: list[int] = []
        self._y: list[int] = []
        self._proba = np.zeros((0, 0))  # (capacity, J) rows of predicted probabilities
        for c in classes:
            self._column(c)

    @property
    def classes(self) -> tuple:
        return tuple(self._labels)

    def _column(self, label) -> int:
        j = self._position.get(label)
        if j is None:
            j = len(self._labels)
            self._position[label] = j
            self._labels.append(label)
            self._class_counts.append(0)
            if self.keep_proba:
                self._proba = np.pad(self._proba, ((0, 0), (0, 1)))
        return j

    def update(self, y, proba: Mapping) -> None:
        """Account one prediction ``proba`` (a dict, possibly empty) of the true class ``y``."""
        jy = self._column(y)
        self._class_counts[jy] += 1
        if proba:
            predicted = max(proba, key=proba.get)
            p_true = float(proba.get(y, 0.0))
        else:
            predicted = None
            proba = {c: 1.0 / len(self._labels) for c in self._labels}
            p_true = 1.0 / len(self._labels)
        correct = predicted is not None and predicted == y
        loss = -math.log(max(p_true, LOG_LOSS_CLIP))
        self.correct += correct
        self._nll += loss
        self._recent.append((correct, loss))
        self._nll_compression -= math.log(max(p_true, COMPRESSION_CLIP))
        if self.keep_proba:
            columns = [self._column(c) for c in proba]
            if self.n == len(self._proba):
                grown = np.zeros((max(64, 2 * self.n), len(self._labels)))
                grown[: self.n, : self._proba.shape[1]] = self._proba[: self.n]
                self._proba = grown
            self._proba[self.n, columns] = list(proba.values())
            self._y.append(jy)
        self.n += 1

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")

    @property
    def log_loss(self) -> float:
        return self._nll / self.n if self.n else float("nan")

    @property
    def rolling_accuracy(self) -> float:
        """Accuracy over the last ``window`` examples."""
        return sum(c for c, _ in self._recent) / len(self._recent) if self._recent else float("nan")

    @property
    def rolling_log_loss(self) -> float:
        """Log loss over the last ``window`` examples."""
        return math.fsum(v for _, v in self._recent) / len(self._recent) if self._recent else float("nan")

    @property
    def compression_rate(self) -> float:
        return compression_rate(self._nll_compression, self._class_counts)

    @property
    def macro_auc(self) -> float:
        """Exact macro one-vs-rest AUC of the predictions so far (NaN if not kept). Cost O(n·J log n)."""
        if not self.keep_proba or self.n == 0:
            return float("nan")
        return macro_auc(np.asarray(self._y), self._proba[: self.n])



# ---------------------------------------------------------------------------------------------
# The loop


@dataclasses.dataclass(slots=True)
class Result:
    """Final figures of one model on one stream (one row of the comparison table).

    ``rolling_accuracy`` and ``rolling_log_loss`` are over the last ``window`` examples: after a
    change of concept they show where the model stands now, which the cumulative figures blur.
    """

    model: str
    n: int
    accuracy: float
    log_loss: float
    macro_auc: float
    compression_rate: float
    selected: int | None
    n_features: int
    seconds: float
    examples_per_second: float
    peak_memory: int
    window: int = 1000
    rolling_accuracy: float = float("nan")
    rolling_log_loss: float = float("nan")

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Evaluation:
    """What ``prequential`` returns: the final rows and the learning curves.

    ``curves[name]`` has the lists ``n``, ``accuracy`` and ``log_loss`` (cumulative prequential
    values at each checkpoint) and ``rolling_accuracy``, ``rolling_log_loss`` (over the last
    ``window`` examples); ``metrics[name]`` are the running metrics, ``seconds[name]`` the time
    spent in the model's calls, ``features`` the variables met in the stream. ``complete`` is
    False for the partial evaluation attached to an exception that stopped the loop.
    """

    models: dict
    metrics: dict
    seconds: dict
    peak_memory: dict
    curves: dict
    features: set
    n: int = 0
    results: list = dataclasses.field(default_factory=list)
    window: int = 1000
    complete: bool = True

    def finish(self) -> None:
        """Compute the final rows (``results``) from the running state."""
        self.results = []
        for name, model in self.models.items():
            metrics = self.metrics[name]
            seconds = self.seconds[name]
            self.results.append(
                Result(
                    model=name,
                    n=metrics.n,
                    accuracy=metrics.accuracy,
                    log_loss=metrics.log_loss,
                    macro_auc=metrics.macro_auc,
                    compression_rate=metrics.compression_rate,
                    selected=selected_variables(model),
                    n_features=len(self.features),
                    seconds=seconds,
                    examples_per_second=metrics.n / seconds if seconds > 0 else float("inf"),
                    peak_memory=self.peak_memory[name],
                    window=self.window,
                    rolling_accuracy=metrics.rolling_accuracy,
                    rolling_log_loss=metrics.rolling_log_loss,
                )
            )


#: Rows of ``warm_up_stream`` each model learns before its clock starts.
WARM_UP_ROWS = 200


def warm_up_stream(n: int = WARM_UP_ROWS, numeric_only: bool = False) -> list[tuple[dict, Any]]:
    """A small fixed stream to warm models up on (``stream.warm_up.rows``): 4 numeric variables
    (one with missing values), 2 categorical ones, 3 classes; ``numeric_only`` leaves the
    categorical ones out.

    Examples
    --------
    >>> rows = warm_up_stream(5)
    >>> len(rows), sorted(rows[0][0]), rows[0][1] in ("a", "b", "c")
    (5, ['g', 'n0', 'n1', 'n2', 'n3', 'tone'], True)
    """
    return warm_up_rows(n, numeric_only)


def warm_up(models: Mapping[str, base.Classifier], n: int = WARM_UP_ROWS) -> None:
    """Run clones of every model (``model.clone()``) on ``warm_up_stream(n)`` and on its numeric
    variables alone, predicting then learning, so that one-time costs (loading or compiling the
    kernels for both kinds of streams, first imports, caches) are paid before any model's clock
    starts. The models themselves are left untouched.

    A model that cannot read one of the two streams (a River model that takes numbers only) is
    warmed up on the other; a failure changes nothing (the model will say why on the real stream).
    """
    if n <= 0:
        return
    for model in models.values():
        for numeric_only in (False, True):
            try:
                clone = model.clone()
                for x, y in warm_up_stream(n, numeric_only):
                    clone.predict_proba_one(x)
                    clone.learn_one(x, y)
            except Exception:  # noqa: BLE001 - a warm-up that fails changes nothing
                continue


def prequential(
    stream: Iterable[tuple[dict, Any]],
    models: Mapping[str, base.Classifier],
    *,
    n: int | None = None,
    classes: Iterable[Hashable] = (),
    auc: bool = True,
    window: int = 1000,
    checkpoints: int = 100,
    checkpoint_every: int | None = None,
    memory_samples: int = 20,
    warm_up_rows: int = WARM_UP_ROWS,
    on_progress: Callable[[Evaluation], None] | None = None,
    progress_every: int = 200,
) -> Evaluation:
    """Evaluate ``models`` test-then-train on one pass of ``stream`` (at most ``n`` examples).

    Parameters
    ----------
    stream
        Iterable of ``(x, y)`` with ``x`` a dict.
    models
        ``{name: classifier}``; every model sees every example, predicting before learning.
    n
        Stop after ``n`` examples (None: the whole stream).
    classes
        Class labels known up front (used for an empty prediction; see the module docstring).
    auc
        Keep the predicted distributions to compute the exact macro AUC (O(n·J) memory).
    window
        Length of the rolling window of the rolling curves.
    checkpoints, checkpoint_every
        Learning-curve points: every ``checkpoint_every`` examples, by default ``n // checkpoints``
        when ``n`` is given and 1,000 otherwise.
    memory_samples
        Memory is measured about every ``memory_samples``-th of the curve points and at the end;
        the peak of those samples is reported (its cost is not counted in the throughput).
    warm_up_rows
        Rows of ``warm_up_stream`` that a clone of every model learns before the loop (0: none).
    on_progress, progress_every
        ``on_progress(evaluation)`` is called every ``progress_every`` examples and at the end.

    Notes
    -----
    If the stream or a model raises, the exception goes on with the evaluation of the examples
    done so far attached as ``error.evaluation`` (``complete`` False, ``results`` filled), and the
    name of the model that raised, if one did, as ``error.model``.

    Cost per example: one ``predict_proba_one`` and one ``learn_one`` per model, plus O(J) here.
    """
    models = dict(models)
    if not models:
        raise ValueError("models must name at least one model")
    classes = list(classes)
    if checkpoint_every is None:
        checkpoint_every = max(1, n // checkpoints) if n else 1000
    memory_every = checkpoint_every * max(1, checkpoints // max(1, memory_samples))
    evaluation = Evaluation(
        models=models,
        metrics={name: RunningMetrics(classes, keep_proba=auc, window=window) for name in models},
        seconds={name: 0.0 for name in models},
        peak_memory={name: 0 for name in models},
        curves={name: {key: [] for key in _CURVES} for name in models},
        features=set(),
        window=window,
    )
    warm_up(models, warm_up_rows)
    clock = time.perf_counter
    if n is not None:
        stream = itertools.islice(stream, n)
    current = None
    probas = {}
    try:
        for x, y in stream:
            evaluation.features.update(x)
            for name, model in models.items():
                current = name
                start = clock()
                probas[name] = model.predict_proba_one(x)
                model.learn_one(x, y)
                evaluation.seconds[name] += clock() - start
            current = None
            for name, metrics in evaluation.metrics.items():
                metrics.update(y, probas[name])
            evaluation.n += 1
            count = evaluation.n
            if count % checkpoint_every == 0:
                _record_curves(evaluation)
                if count % memory_every == 0:
                    _record_memory(evaluation)
            if on_progress is not None and count % progress_every == 0:
                on_progress(evaluation)
    except BaseException as error:
        evaluation.complete = False
        if evaluation.n % checkpoint_every:
            _record_curves(evaluation)
        _record_memory(evaluation)
        evaluation.finish()
        try:
            error.evaluation = evaluation
            error.model = current
        except AttributeError:  # pragma: no cover - an exception type without a __dict__
            pass
        raise
    if evaluation.n and evaluation.n % checkpoint_every:
        _record_curves(evaluation)
    _record_memory(evaluation)
    evaluation.finish()
    if on_progress is not None:
        on_progress(evaluation)
    return evaluation


_CURVES = ("n", "accuracy", "log_loss", "rolling_accuracy", "rolling_log_loss")


def _record_curves(evaluation: Evaluation) -> None:
    for name, metrics in evaluation.metrics.items():
        curve = evaluation.curves[name]
        curve["n"].append(metrics.n)
        curve["accuracy"].append(metrics.accuracy)
        curve["log_loss"].append(metrics.log_loss)
        curve["rolling_accuracy"].append(metrics.rolling_accuracy)
        curve["rolling_log_loss"].append(metrics.rolling_log_loss)


def _record_memory(evaluation: Evaluation) -> None:
    for name, model in evaluation.models.items():
        evaluation.peak_memory[name] = max(evaluation.peak_memory[name], memory_of(model))
