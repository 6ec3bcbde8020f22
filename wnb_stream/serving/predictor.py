"""What serving needs of a model: ``Predictor``, its level 2 and weights without the learning state.

A ``WeightedNaiveBayes`` holds what it needs to go on learning: a summary per variable (GK
tuples, PiD histograms, category counts), the history window (N raw rows and their encoding,
N·K·J floats) and the learner's state. Scoring needs only each variable's level 2 (the
partition's log-probability table and its locator, or the per-class Gaussians), the learner's
coefficients and the log prior. ``model.predictor()`` takes those; the predictor scores a row
with the same code and the same arrays as the model, so its probabilities are the model's, bit
for bit (tested), and it is saved with a record of its own (``docs/saved-model.md``).

The probabilities of both come from ``proba_dict`` and ``proba_frame`` (a max-shifted softmax,
``docs/algorithms/prediction.md#log-sum-exp``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import io
from ..engine import frames
from ..engine.lookup import Lookup
from ..engine.rows import POLICIES, RowParser
from ..engine.variable import Scorer

__all__ = ["Predictor", "proba_dict", "proba_frame"]


def proba_dict(labels, scores) -> dict:
    """{label: probability} of one row's unnormalised log posteriors ``scores (J,)`` (a list or an
    array; in Python floats, cheaper than NumPy for one row)."""
    scores = scores.tolist() if isinstance(scores, np.ndarray) else scores
    top = max(scores)
    p = [math.exp(s - top) for s in scores]
    total = sum(p)
    return {label: v / total for label, v in zip(labels, p)}


def softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise probabilities of ``scores (n, J)``, max-shifted."""
    shifted = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(shifted)
    return p / p.sum(axis=-1, keepdims=True)


def proba_frame(labels, scores: np.ndarray, index):
    """A pandas DataFrame of probabilities, one column per label, rows on ``index``."""
    import pandas as pd

    if not len(labels):
        return pd.DataFrame(index=index)
    return pd.DataFrame(softmax(scores), index=index, columns=list(labels))


class _Names:
    """The variables by name, as ``RowParser`` and ``Lookup.scores_frame`` read a registry."""

    __slots__ = ("variables", "index")

    def __init__(self, variables: list):
        self.variables = variables
        self.index = {v.name: k for k, v in enumerate(variables)}


class Predictor:
    """A model's level 2, weights and prior, for serving: ``predict_proba_one`` / ``_many`` give
    the probabilities of the model it came from (``WeightedNaiveBayes.predictor()``), bit for
    bit, in a fraction of its memory. It does not learn.

    Parameters
    ----------
    labels
        The class labels, in the model's order.
    variables
        ``Scorer`` of each variable, in the model's order.
    coef
        ``(K, J)`` the learner's multipliers of each variable's log-likelihoods.
    offset
        ``(J,)`` the learner's offsets (zeros for a weighted naive Bayes).
    log_prior
        ``(J,)`` log P(C_j).
    on_type_change
        As the model's: "raise" or "missing" for a value of the other kind.
    absent
        As the model's: None (an absent feature is missing) or the value of an absent numeric
        feature.

    Examples
    --------
    >>> from river import datasets
    >>> from wnb_stream import WeightedNaiveBayes
    >>> model = WeightedNaiveBayes(seed=1)
    >>> rows = list(datasets.Phishing())
    >>> for x, y in rows[:500]:
    ...     model.learn_one(x, y)
    >>> predictor = model.predictor()
    >>> predictor.predict_proba_one(rows[600][0]) == model.predict_proba_one(rows[600][0])
    True
    >>> predictor.memory_usage() < model.memory_usage() / 50
    True
    """

    def __init__(self, labels, variables, coef, offset, log_prior, on_type_change: str = "raise", absent: float | None = None):
        if on_type_change not in POLICIES:
            raise ValueError(f"on_type_change must be one of {POLICIES}, got {on_type_change!r}")
        self.labels = tuple(labels)
        self.variables = list(variables)
        K, J = len(self.variables), len(self.labels)
        self.coef = np.array(coef, dtype=float).reshape(K, J)
        self.offset = np.array(offset, dtype=float).reshape(J)
        self.log_prior = np.array(log_prior, dtype=float).reshape(J)
        self.on_type_change = on_type_change
        self.absent = None if absent is None else float(absent)
        self._names = _Names(self.variables)
        self._parser = RowParser(self._names, on_type_change, self.absent)
        self._lookup = Lookup(self.absent)
        self._lookup.refresh(self.variables, J, self.coef, self.offset, self.log_prior)

    @classmethod
    def of_engine(cls, engine) -> Predictor:
        """The predictor of an engine's current state (its lookups brought up to date first)."""
        engine.refresh()
        lookup, K = engine.lookup, len(engine.registry)
        return cls(engine.classes.labels, [Scorer.of(v) for v in engine.registry.variables], lookup.coef[:K],
                   lookup.learner_bias, engine.classes.log_prior(), engine.parser.on_type_change, engine.params.absent)  # fmt: skip

    # ------------------------------------------------------------------ queries
    @property
    def classes(self) -> tuple:
        """Class labels, in the model's order."""
        return self.labels

    @property
    def weights(self) -> dict:
        """The weight of every feature (the mean over classes of a per-class learner's)."""
        mean = self.coef.mean(axis=1) if self.coef.shape[1] else np.ones(len(self.variables))
        return {v.name: float(w) for v, w in zip(self.variables, mean.tolist())}

    def memory_usage(self) -> int:
        """Bytes of the lookups, the coefficients and each variable's level 2."""
        return int(self._lookup.memory_usage() + sum(v.memory_usage() for v in self.variables) + self.log_prior.nbytes)

    # ------------------------------------------------------------------ prediction
    def predict_proba_one(self, x: dict) -> dict:
        """{class: probability} of one dict of features (``{}`` for a model with no class)."""
        if not self.labels:
            return {}
        return proba_dict(self.labels, self._lookup.scores_one(self._parser.row(x), self.variables))

    def predict_one(self, x: dict):
        """The most probable class (None for a model with no class)."""
        proba = self.predict_proba_one(x)
        return max(proba, key=proba.get) if proba else None

    def predict_proba_many(self, X):
        """A DataFrame of probabilities, one column per class, one row per row of ``X``."""
        X, absent = frames.read(X)
        if not self.labels:
            return proba_frame(self.labels, None, X.index)
        frame = self._parser.frame(X, absent=absent)
        return proba_frame(self.labels, self._lookup.scores_frame(frame, len(X), self._names), X.index)

    def predict_many(self, X):
        """A Series of the most probable class of each row of ``X``."""
        import pandas as pd

        proba = self.predict_proba_many(X)
        if not self.labels:
            return pd.Series([None] * len(proba), index=proba.index, dtype=object)
        return proba.idxmax(axis=1)

    # ------------------------------------------------------------------ saving
    def to_dict(self) -> dict:
        """The predictor's record (``docs/saved-model.md``), JSON-safe."""
        return io.to_record(self)

    @classmethod
    def from_dict(cls, d: dict) -> Predictor:
        return io.from_record(d, expected=(cls.__name__,))

    def save(self, path) -> None:
        """Write the predictor to ``path`` atomically (as ``WeightedNaiveBayes.save``)."""
        io.save(self, path)

    @classmethod
    def load(cls, path) -> Predictor:
        predictor = io.load(path)
        if not isinstance(predictor, cls):
            raise io.ModelFileError(f"{path} holds a {type(predictor).__name__}, not a {cls.__name__}")
        return predictor

    def __getstate__(self) -> dict:
        return {name: getattr(self, name) for name in ("labels", "variables", "coef", "offset", "log_prior", "on_type_change", "absent")}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def __repr__(self) -> str:
        return f"Predictor({len(self.variables)} variables, {len(self.labels)} classes)"


# ------------------------------------------------------------------------------------------------
# The predictor's record (docs/saved-model.md)


def _predictor_check(fields: io.Fields) -> None:
    s = fields.state
    K, J = len(s["variables"]), len(s["labels"])
    if s["coef"].shape != (K, J):
        fields.fail("coef", f"must be (n_variables, n_classes) = ({K}, {J}), got {s['coef'].shape}")
    names = [v.name for v in s["variables"]]
    if len(set(names)) != len(names):
        fields.fail("variables", "two variables share a name")


io.register(
    "Predictor",
    Predictor,
    io.Schema(
        params={
            "on_type_change": io.Str(choices=POLICIES, doc="a value of the other kind: raise or missing"),
            "absent": io.Optional(io.Float(), doc="the value of an absent numeric feature (null: missing)"),
        },
        state={
            "labels": io.Keys(length="n_classes", doc="class labels in the model's order"),
            "variables": io.List(io.Record("Scorer"), doc="each variable's level 2, in the model's order"),
            "coef": io.Array("float64", ("n_variables", "n_classes"), finite=True, doc="the learner's multipliers"),
            "offset": io.Array("float64", ("n_classes",), finite=True, doc="the learner's offsets"),
            "log_prior": io.Array("float64", ("n_classes",), doc="log P(C_j)"),
        },
        checks=(_predictor_check,),
        doc="What serving needs of a model: level 2, weights and prior (no summaries, no history)",
    ),
    state=lambda p: {"labels": list(p.labels), "variables": p.variables, "coef": p.coef, "offset": p.offset, "log_prior": p.log_prior},
    build=lambda fields: Predictor(fields.state["labels"], fields.state["variables"], fields.state["coef"],
                                   fields.state["offset"], fields.state["log_prior"], fields.params["on_type_change"],
                                   fields.params["absent"]),  # fmt: skip
)
