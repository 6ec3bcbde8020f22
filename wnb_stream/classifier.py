"""WeightedNaiveBayes: the River classifier in front of the three levels.

This module is the River face only: parameters, the public methods, and saving. The work is done
by the parts in ``wnb_stream.engine`` (see ``docs/architecture.md``): ``rows`` validates and codes
input (one path for a dict and a DataFrame), ``Engine`` takes a row through the class counts,
the variables (summaries and level 2), the history, the schedule, the lookups and the learner.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import threading

import numpy as np
from river import base

from . import io
from .engine import Engine, frames, merge, rows
from .engine.drift import EVERY
from .engine.history import SparseHistory
from .io.engine import check_parts
from .serving import Delta, Predictor
from .serving.predictor import proba_dict, proba_frame, softmax

__all__ = ["WeightedNaiveBayes"]


def _one_at_a_time(method):
    """``method`` holding the model's lock: calls from several threads run one after the other."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


class WeightedNaiveBayes(base.MiniBatchClassifier):
    """Weighted naive Bayes learned online, in one pass and bounded memory.

    $P(C_j \\mid x) \\propto P(C_j) \\prod_k p(x_k \\mid C_j)^{w_k}$, computed in log space. Each feature gets a level-1
    stream summary (``numeric`` or ``categorical`` prototype, cloned per feature), level 2 (MODL
    discretization or value grouping, or per-class Gaussians) turns it into log p(x_k | C_j), and
    the ``optimizer`` learns the weights w_k ∈ [0, 1] (``weights.Graphical``: one free weight per
    variable and class) from a sliding history of the last ``history_size`` rows. ``weights.Uniform()`` gives plain naive Bayes on the same summaries.

    Parameters
    ----------
    numeric
        Summary prototype for numeric features. Defaults to ``summaries.GKClass()``.
    categorical
        Summary prototype for categorical features. Defaults to ``summaries.Categorical()``.
    optimizer
        Weight learner. Defaults to ``weights.VNS()``. Regularizer settings (``regularizer``,
        ``penalty``, ``exponent``) are parameters of the learner.

        The three parts are River objects, as in River: an instance, not a class and not a
        name. ``optimizer="vns"`` (the command line's name), ``numeric=summaries.GKClass`` (the
        class) or a part of the wrong kind (``numeric=weights.VNS()``) raise a ``ValueError``
        naming the parameter and saying what to write (``optimizer=weights.VNS()``). Left None,
        a part is the default above, which ``repr(model)`` shows.
    history_size
        History depth N: the most recent rows on which the learners judge their criterion.
    batch_size
        Mini-batch size L of the learner's steps; None takes the learner's own ``batch_size``.
        Early in a stream steps run on batches of 32, 64, … up to L so that small streams learn.
    rebuild_growth
        Level 2 of a variable is rebuilt when its count of observations has grown by this factor
        since the last rebuild (at every one of the first observations, sparser later).
    rebuild_every
        Upper bound on the gap, in observations, between two rebuilds of a variable.
    on_type_change
        What to do with a value of the other kind (a string in a numeric feature, or a number in a
        categorical one): "raise" a ``ValueError`` naming the feature (default; nothing is
        learned), or count it as "missing".
    drift_delta
        Confidence δ of the change detector on the model's own error (``docs/algorithms/drift.md``):
        every 256 rows the error of the most recent rows is tested against the older ones, and
        when it has risen significantly, and within the classes (a change of the mix of classes
        alone, as in a file sorted or grouped by class, is not a change of concept), the model
        forgets what it learned before the change
        (summaries, level 2, class counts, older history rows) and restarts its weights on the
        rows since. Smaller detects later and more rarely by chance; None never forgets.
    half_life
        Exponential forgetting (off by default): the weight of an example halves every
        ``half_life`` rows after it came, in the summaries, the class counts and the history
        (applied every 256 rows). For gradual drift; it costs accuracy on a stationary stream.
        Level 2 is then rebuilt at least every ``half_life`` observations of a variable.
    seed
        Seed of every random choice (the learners' perturbations).
    absent
        What a numeric feature absent from a row means. None (default): a missing value, which
        contributes nothing. A number such as 0: the feature holds that value, as in sparse data
        (word counts, one-hot codes, click logs) handed as dicts of the non-zero entries
        (``docs/algorithms/summaries.md#absent-features``). An entry holding the value is then
        the same as an absent one, the summaries learn the other values only and level 2 adds the
        value's mass from the class counts, and a row costs in proportion to its other entries
        when it is scored. Categorical features absent from a row stay missing.
    memory_budget
        None (default), or a number of bytes that ``memory_usage()`` should not exceed. Every 256
        rows the history window is cut to the most recent rows that fit (it never grows back,
        and keeps at least 32 rows); with the window at 32 rows, the variables outside level 3
        (whose level 2 is flat: they change no score) are evicted, those not seen lately and
        with the fewest observations first; a feature evicted and seen again starts afresh.
        It cannot bound the variables in level 3, what each class holds, nor 32 rows of the
        window: at every check point the model is within the budget, or holds only these
        (``docs/algorithms/prediction.md#memory-budget``).

    Notes
    -----
    *Which features are numeric.* A feature is numeric when its first non-missing value is a
    number (Python or NumPy int or float, ``Fraction``, ``Decimal``; not a bool) or a date or a
    duration (as seconds since 1970-01-01 UTC, or seconds), and categorical when it is a string, a
    bool or a tuple. None, NaN, pandas' NA and NaT are missing values (counted per class); ±inf in
    a numeric feature is counted as missing. A feature absent from a dict contributes nothing
    (unless ``absent`` gives numeric features a value).
    Features first seen with a missing value are created at their first non-missing value.

    *Input policy* (``docs/algorithms/summaries.md#input-policy``). Every method validates its
    input before it changes anything: a call that raises leaves the model as it was. A value the
    saved model could not hold (bytes, a complex number, a frozenset, any other object), a finite
    number beyond the float range, an unhashable value, a missing or unsaveable label, a sample
    weight that is not a finite number ≥ 0 or would bring the total weight past 1e303, and
    duplicate column names raise a ``ValueError`` naming the feature, ``y`` or ``w``.

    *Anytime.* ``predict_proba_one`` works after the first ``learn_one`` and uses the best weights
    found so far; before any learning it returns ``{}``.

    *Threads.* A model may be shared between threads: every public method holds the model's
    lock (``lock``, re-entrant), so calls run one at a time, never interleaved (a prediction too:
    it brings the compiled lookups up to date). ``save``, ``to_dict`` and any record of the model
    (``io.dumps``, checkpoints) are written under it: a consistent snapshot, even while another
    thread learns. Hold ``with model.lock:`` to make several calls one step. Pickling (``pickle``,
    ``copy.deepcopy``) does not take the lock: pickle a model no thread is changing. A
    ``Predictor`` changes nothing but a parse cache when it predicts; for predictions in
    parallel, share one (tested).

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from wnb_stream import WeightedNaiveBayes, weights
    >>> model = WeightedNaiveBayes(seed=42)
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: 90.79%
    >>> round(model.weights["https"], 2), model.weights["ip_in_url"]
    (1.0, 0.0)

    """

    def __init__(
        self,
        numeric=None,
        categorical=None,
        optimizer=None,
        history_size: int = 5000,
        batch_size: int | None = None,
        rebuild_growth: float = 0.5,
        rebuild_every: int = 50_000,
        on_type_change: str = "raise",
        drift_delta: float | None = 0.002,
        half_life: float | None = None,
        seed: int | None = None,
        absent: float | None = None,
        memory_budget: int | None = None,
    ):
        self.numeric = numeric
        self.categorical = categorical
        self.optimizer = optimizer
        self.history_size = history_size
        self.batch_size = batch_size
        self.rebuild_growth = rebuild_growth
        self.rebuild_every = rebuild_every
        self.on_type_change = on_type_change
        self.drift_delta = drift_delta
        self.half_life = half_life
        self.seed = seed
        self.absent = absent
        self.memory_budget = memory_budget
        self._check_params()
        self._lock = threading.RLock()
        self._engine = self._new_engine()

    def _check_params(self) -> None:
        from . import summaries, weights

        _check_part("numeric", self.numeric, summaries.Summary, "numeric", _NUMERIC_SUMMARIES)
        _check_part("categorical", self.categorical, summaries.Summary, "categorical", {"categorical": "Categorical"})
        _check_part("optimizer", self.optimizer, weights.Optimizer, None, _LEARNER_NAMES)
        if not isinstance(self.history_size, numbers.Integral) or self.history_size < 1:
            raise ValueError(f"history_size must be an integer >= 1, got {self.history_size!r}")
        if self.batch_size is not None and (
            not isinstance(self.batch_size, numbers.Integral) or not 1 <= self.batch_size <= self.history_size
        ):
            raise ValueError(
                f"batch_size must be None or an integer in [1, history_size={self.history_size}], got {self.batch_size!r}"
            )
        if not isinstance(self.rebuild_growth, numbers.Real) or not self.rebuild_growth > 0:
            raise ValueError(f"rebuild_growth must be a number > 0, got {self.rebuild_growth!r}")
        if not isinstance(self.rebuild_every, numbers.Integral) or self.rebuild_every < 1:
            raise ValueError(f"rebuild_every must be an integer >= 1, got {self.rebuild_every!r}")
        if self.on_type_change not in rows.POLICIES:
            raise ValueError(f"on_type_change must be one of {rows.POLICIES}, got {self.on_type_change!r}")
        if self.drift_delta is not None and (
            isinstance(self.drift_delta, bool | np.bool_)
            or not isinstance(self.drift_delta, float | np.floating)
            or not 0.0 < self.drift_delta < 1.0
        ):
            raise ValueError(f"drift_delta must be None or a number in (0, 1), got {self.drift_delta!r}")
        if self.half_life is not None and (
            isinstance(self.half_life, bool | np.bool_)
            or not isinstance(self.half_life, int | float | np.integer | np.floating)
            or not EVERY <= self.half_life < math.inf
        ):
            raise ValueError(f"half_life must be None or a number of rows >= {EVERY}, got {self.half_life!r}")
        if self.seed is not None and not isinstance(self.seed, numbers.Integral):
            raise ValueError(f"seed must be None or an integer, got {self.seed!r}")
        if self.absent is not None and (
            isinstance(self.absent, bool | np.bool_)
            or not isinstance(self.absent, numbers.Real)
            or not math.isfinite(float(self.absent))
        ):
            raise ValueError(f"absent must be None (missing) or a finite number, got {self.absent!r}")
        if self.memory_budget is not None and (
            isinstance(self.memory_budget, bool | np.bool_) or not isinstance(self.memory_budget, numbers.Integral) or self.memory_budget < 1
        ):
            raise ValueError(f"memory_budget must be None or a number of bytes >= 1, got {self.memory_budget!r}")

    def _new_engine(self) -> Engine:
        default = _default_parts()
        numeric = self.numeric if self.numeric is not None else default["numeric"]
        categorical = self.categorical if self.categorical is not None else default["categorical"]
        optimizer = (self.optimizer if self.optimizer is not None else default["optimizer"]).clone()
        optimizer.reset(0, 0, self.seed)
        drift_delta = None if self.drift_delta is None else float(self.drift_delta)
        half_life = None if self.half_life is None else float(self.half_life)
        return Engine(numeric, categorical, optimizer, self.history_size, self.batch_size, self.rebuild_growth,
                      self.rebuild_every_rows, self.on_type_change, drift_delta, half_life, self.seed,
                      None if self.absent is None else float(self.absent),
                      None if self.memory_budget is None else int(self.memory_budget))  # fmt: skip

    def __repr__(self) -> str:
        """River's form, with the summaries and the learner in use where a parameter is None."""
        used = _default_parts()
        lines = [f"{type(self).__name__} ("]
        for name in list(inspect.signature(type(self).__init__).parameters)[1:]:  # after self
            value = getattr(self, name)
            if name in used:
                text = repr(value if value is not None else used[name]).replace("\n", "\n  ")
            else:
                text = f'"{value}"' if isinstance(value, str) else repr(value)
            lines.append(f"  {name}={text}")
        return "\n".join(lines) + "\n)"

    @property
    def rebuild_every_rows(self) -> int:
        """The largest gap between two rebuilds of a variable: ``rebuild_every``, and at most
        ``half_life`` when the model fades."""
        return _largest_gap(self.rebuild_every, self.half_life)

    @property
    def _multiclass(self) -> bool:
        return True

    @classmethod
    def _unit_test_params(cls):
        from . import weights

        yield {"optimizer": weights.Uniform(), "history_size": 200}
        yield {"optimizer": weights.PGDMB(batch_size=20), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.VNS(batch_size=20), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.FNB(batch_size=20), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.SNB(batch_size=20), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.Graphical(), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.SGCF(batch_size=20), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.Direct(batch_size=20, n_starts=2), "history_size": 100, "seed": 1}
        yield {"absent": 0.0, "history_size": 100, "seed": 1}

    def _unit_test_skips(self) -> set:
        return set()

    # ------------------------------------------------------------------ threads
    @property
    def lock(self) -> threading.RLock:
        """The model's lock (re-entrant), held by every public method: ``with model.lock:`` makes
        several calls one step for the other threads. About 0.1 µs a call."""
        return self._lock

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_lock", None)  # a lock cannot be pickled; a copy gets its own
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ public queries
    @property
    @_one_at_a_time
    def classes(self) -> tuple:
        """Class labels in order of first appearance."""
        return self._engine.classes.index.classes

    @property
    @_one_at_a_time
    def weights(self) -> dict:
        """Current best weight of every feature (``{feature: weight in [0, 1]}``), anytime.

        For ``weights.Graphical`` (one weight per feature and class, free in sign and size) this is
        the mean over classes. A feature whose level 2 is flat (it found no information, so the
        feature changes no prediction) is outside level 3 and reports the learner's
        ``outside_weight``: 0, or 1 for plain naive Bayes (``weights.Uniform()``).
        """
        w = self._engine.weights()
        return {v.name: float(w[k]) for k, v in enumerate(self._engine.registry.variables)}

    @_one_at_a_time
    def memory_usage(self) -> int:
        """Bytes held by the model's arrays and summaries (cheap; no object-graph walk).

        A walk of the whole object graph that counts each NumPy buffer once
        (``wnb_stream.apps.models.deep_memory``, the figure ``wnb-stream evaluate`` shows for every
        model) agrees with it within a few percent. River's ``_raw_memory_usage`` reports about
        twice as much for this model: it adds ``nbytes`` to ``sys.getsizeof`` of each array, which
        already includes the data of an array that owns it, and counts views' data again.
        """
        return self._engine.memory_usage()

    # ------------------------------------------------------------------ saving
    def to_dict(self) -> dict:
        """The model's record (``docs/saved-model.md``): its parameters and the state of every part.

        JSON-safe; ``WeightedNaiveBayes.from_dict(model.to_dict())`` predicts and keeps learning
        exactly as ``model`` does.
        """
        return io.to_record(self)

    @classmethod
    def from_dict(cls, d: dict) -> WeightedNaiveBayes:
        """The model of a record made by ``to_dict``; ``io.ModelFileError`` names what is wrong."""
        return io.from_record(d, expected=(cls.__name__,))

    def save(self, path) -> None:
        """Write the model to ``path`` atomically (temporary file, fsync, rename; gzip, checksummed)."""
        io.save(self, path)

    @classmethod
    def load(cls, path) -> WeightedNaiveBayes:
        """The model saved at ``path`` by ``save``; ``io.ModelFileError`` for a file that is not one."""
        model = io.load(path)
        if not isinstance(model, cls):
            raise io.ModelFileError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
        return model

    # ------------------------------------------------------------------ one example
    @_one_at_a_time
    def learn_one(self, x: dict, y, w: float = 1.0) -> None:
        """Update the model with one example. O(K) in a few NumPy calls, plus amortised level-2 and learner work."""
        self._engine.learn_dict(x, y, w)

    @_one_at_a_time
    def predict_proba_one(self, x: dict) -> dict:
        """{class: probability} over every class seen so far (``{}`` before any learning)."""
        engine = self._engine
        if not len(engine.classes):
            return {}
        return proba_dict(engine.classes.labels, engine.scores_one(engine.parser.row(x)))

    @property
    @_one_at_a_time
    def changes_detected(self) -> int:
        """Changes of concept the model has detected (and forgotten what came before) so far."""
        return 0 if self._engine.monitor is None else self._engine.monitor.detected

    @_one_at_a_time
    def forget(self, keep: int = 0) -> None:
        """Forget what was learned before the ``keep`` most recent rows of the history (at most
        ``history_size``), as after a detected change (``docs/algorithms/drift.md``): summaries,
        level 2 and class counts from the kept rows only, the weights restarted on them. The
        variables and the classes stay."""
        if isinstance(keep, bool) or not isinstance(keep, numbers.Integral) or keep < 0:
            raise ValueError(f"keep must be an integer >= 0, got {keep!r}")
        self._engine.forget(int(keep))

    def merge(self, other: WeightedNaiveBayes) -> None:
        """Absorb ``other``, a model trained on another part of the stream (``other`` is unchanged).

        Class and example counts add up, each feature's summary absorbs the other's (exact for
        counts and Gaussian moments, within each sketch's guarantee otherwise), the history keeps
        the most recent rows of both, and level 2, the weights and the change detector restart on
        the merged parts (``docs/algorithms/merge.md``). Both must have the same parameters but
        ``seed`` (this model keeps its own): ``ValueError`` naming the one that differs, or the
        feature that is numeric in one and categorical in the other; ``TypeError`` for another
        type. Nothing changes when it raises. Cost O(both models' state) plus a rebuild of every
        variable and one learner step.
        """
        if not isinstance(other, WeightedNaiveBayes):
            raise TypeError(f"can only merge another WeightedNaiveBayes, got {type(other).__name__}")
        first, second = sorted((self, other), key=id)  # both locks, always in one order: no deadlock
        with first._lock, second._lock:
            ours, theirs = self._merge_params(), other._merge_params()
            for name, value in ours.items():
                if name != "seed" and value != theirs[name]:
                    raise ValueError(f"cannot merge models with a different {name}: {value!r} != {theirs[name]!r}")
            self._engine = merge.merged(self._engine, other._engine)

    # ------------------------------------------------------------------ training across machines
    @property
    @_one_at_a_time
    def n_seen(self) -> int:
        """Examples learned (those of merged models and absorbed deltas included)."""
        return self._engine.n_seen

    @_one_at_a_time
    def predictor(self) -> Predictor:
        """What serving needs (``Predictor``): level 2, weights and prior, without the
        summaries, the history and the learner. Its probabilities are this model's, bit for bit,
        until the model learns again. Cost O(K · J) plus the lookups' compilation if stale."""
        return Predictor.of_engine(self._engine)

    @_one_at_a_time
    def delta(self) -> Delta:
        """An empty ``Delta`` for one partition's examples of a training round (``absorb``),
        knowing the kind of each of this model's features (``Delta.kinds``). O(K)."""
        return Delta(self._engine.blank(collect=True), {v.name: v.kind for v in self._engine.registry.variables})

    @_one_at_a_time
    def absorb(self, deltas) -> None:
        """Learn the examples of ``deltas`` (``Delta`` of this model's parameters, each filled by a
        partition's learner since this model was last published), in one round.

        Counts and summaries add up as in ``merge``; every delta row is newer than the model's,
        so the history keeps the deltas' newest rows (sharing the window equally, interleaved) and
        fills the rest with its own newest; level 2 is then rebuilt once and the weights
        re-optimised on the merged window (``docs/algorithms/merge.md#rounds``). ``ValueError``
        for a delta of other summaries or a feature of the other kind; nothing changes then.
        """
        deltas = list(deltas)
        for delta in deltas:
            if not isinstance(delta, Delta):
                raise TypeError(f"can only absorb a Delta, got {type(delta).__name__}")
            theirs, ours = delta._engine.arguments, self._engine.arguments
            for i, name in ((0, "numeric"), (1, "categorical")):
                if (type(theirs[i]), theirs[i]._get_params()) != (type(ours[i]), ours[i]._get_params()):
                    raise ValueError(f"cannot absorb a delta with another {name} summary: {theirs[i]!r} != {ours[i]!r}")
        if deltas:
            self._engine = merge.absorbed(self._engine, [delta._engine for delta in deltas])

    def _merge_params(self) -> dict:
        """The parameters, with the prototypes in use in place of None (the same model either way)."""
        e = self._engine
        used = {"numeric": e.numeric_prototype, "categorical": e.categorical_prototype, "optimizer": e.optimizer}
        return {**self._get_params(), **{name: (type(p), p._get_params()) for name, p in used.items()}}

    @_one_at_a_time
    def explain(self, x: dict):
        """Each term of the score of ``x``, per class: a pandas DataFrame, one row per term and
        one column per class (``model.classes``' order).

        The first row, ``"prior + bias"``, holds each class's log prior (with the learner's
        bias); then one row per feature of ``x`` the model has a level 2 for, in ``x``'s order,
        holding its weighted log-likelihood ``w_k · log p(x_k | C_j)``; with ``absent``, one more
        row sums the terms of the numeric features absent from ``x``. A column's sum is that
        class's score, and ``predict_proba_one(x)`` is the softmax of these sums: a term is how
        much the feature pushed each class (positive or negative against the others, as in a
        logistic regression's coefficient times its value). Empty before any learning. Input is
        validated as ``predict_proba_one`` does; nothing changes. O(K · J).

        >>> from river import datasets
        >>> model = WeightedNaiveBayes(seed=42)
        >>> for x, y in datasets.Phishing().take(500): model.learn_one(x, y)
        >>> terms = model.explain(x)
        >>> terms.round(3).head(3)
                                   True   False
        prior + bias              -0.872 -0.541
        empty_server_form_handler -1.632 -0.084
        popup_window              -0.919 -0.578
        >>> import numpy as np
        >>> scores = terms.sum().to_numpy()
        >>> round(float(np.exp(scores[0]) / np.exp(scores).sum()), 4), round(model.predict_proba_one(x)[True], 4)
        (0.0583, 0.0583)
        """
        import pandas as pd

        engine = self._engine
        if not len(engine.classes):
            return pd.DataFrame()
        row = engine.parser.row(x)
        engine.refresh()
        numeric = [(k, None if math.isnan(v) else v) for k, v in zip(row.numeric.tolist(), row.values.tolist())]
        values = dict(numeric + row.categorical)  # variable → value, shown in the dict's order
        index = engine.registry.index
        names, terms = ["prior + bias"], [np.asarray(engine.lookup.bias, dtype=float)]
        for name in x:
            k = index.get(name)
            if k in values:
                contribution = engine.contribution(k, values[k])
                if contribution is not None:
                    names.append(name)
                    terms.append(contribution)
        if engine.lookup.shift is not None:  # with a default value: the numeric variables absent from the row
            held = set(row.numeric.tolist())
            ks = [k for k, v in enumerate(engine.registry.variables) if v.kind == "numeric" and k not in held]
            names.append(f"{len(ks)} absent (= {engine.absent:g})")
            terms.append(engine.lookup.shift[ks].sum(axis=0))
        return pd.DataFrame(np.array(terms), index=pd.Index(names, dtype=object, name=None),
                            columns=list(engine.classes.labels))  # fmt: skip

    @_one_at_a_time
    def debug_one(self, x: dict) -> str:
        """``explain(x)`` as a text table, with the probabilities on the last line."""
        terms = self.explain(x)
        if terms.empty:
            return "no class seen yet"
        labels = [str(name) for name in terms.index]
        width = max(len(label) for label in labels) + 2
        lines = [" " * width + " ".join(f"{str(c):>12}" for c in terms.columns)]
        for label, values in zip(labels, terms.to_numpy()):
            lines.append(f"{label:<{width}}" + " ".join(f"{v:12.4f}" for v in values))
        p = softmax(terms.sum().to_numpy())
        lines.append(f"{'probability':<{width}}" + " ".join(f"{v:12.4f}" for v in p))
        return "\n".join(lines)

    @_one_at_a_time
    def summary(self):
        """The variables as a table, as Khiops' variable report gives it: a pandas DataFrame with
        one row per variable (index: the feature names), sorted by ``importance`` then ``level``.

        Columns: ``kind`` ("numeric" or "categorical"); ``summary`` (its level-1 summary);
        ``parts`` (intervals or groups of its level-2 partition, 1 when it found nothing; for a
        Gaussian density, the parts of the discretization that judges it); ``level`` (MODL's
        informativeness in [0, 1]: 1 − cost of the partition / cost of the one-part partition,
        0 for a variable that tells nothing about the class, ``docs/algorithms/modl.md``);
        ``weight`` (``model.weights``); ``kept`` (True when the variable changes predictions: it
        has a level 2 that is not flat and a non-zero weight); ``importance`` (Khiops' variable
        importance, the geometric mean √(level · weight) of a kept variable, 0 otherwise).
        O(K log K).

        >>> from river import datasets
        >>> model = WeightedNaiveBayes(seed=42)
        >>> for x, y in datasets.Phishing().take(500): model.learn_one(x, y)
        >>> print(model.summary().round(3).head(4).to_string())
                                      kind  summary  parts  level  weight  kept  importance
        empty_server_form_handler  numeric  GKClass      2  0.408   0.980  True       0.633
        https                      numeric  GKClass      2  0.174   1.000  True       0.418
        popup_window               numeric  GKClass      3  0.166   0.879  True       0.382
        anchor_from_other_domain   numeric  GKClass      2  0.043   0.546  True       0.153
        """
        import pandas as pd

        engine = self._engine
        engine.refresh()
        weights = self.weights
        rows = []
        for k, v in enumerate(engine.registry.variables):
            weight = weights[v.name]
            kept = bool(engine.slots.of[k] >= 0 and weight != 0) if k < len(engine.slots.of) else False
            importance = math.sqrt(v.level * weight) if kept and weight > 0 else 0.0
            rows.append((v.name, v.kind, type(v.summary).__name__, int(max(v.n_parts, 1)), v.level, weight, kept, importance))
        columns = ["name", "kind", "summary", "parts", "level", "weight", "kept", "importance"]
        table = pd.DataFrame(rows, columns=columns).set_index("name")
        table.index.name = None
        return table.sort_values(["importance", "level"], ascending=False, kind="stable")

    # ------------------------------------------------------------------ mini-batches
    @_one_at_a_time
    def learn_many(self, X, y, w=None) -> None:
        """Learn a DataFrame of rows: the same model as a loop of ``learn_one`` over its rows.

        ``X`` is a pandas DataFrame, any eager dataframe narwhals reads (polars, pyarrow …), a 2-D
        NumPy array (features ``0 … a − 1``) or a list of dicts (``engine/frames.py``); ``y`` a
        Series, an array or a list.

        NaN cells are missing values. A key absent from a dict of a list of dicts is read as
        ``learn_one`` reads it (``absent``), not as a missing value; a table's only absent keys
        are the model's features it has no column for. The whole batch is validated first (nothing is learned if a
        row is unusable). Rows are then processed in chunks that end exactly where the per-row loop
        would register a class, rebuild level 2 or step the learner, so both paths go through the
        same states; within a chunk the rows are stored, encoded and pushed to the history in bulk.
        """
        self._engine.learn_table(X, y, w)

    @_one_at_a_time
    def predict_proba_many(self, X):
        """A DataFrame of probabilities, one column per known class, one row per row of ``X``."""
        X, absent = frames.read(X)
        engine = self._engine
        if not len(engine.classes):
            return proba_frame((), None, X.index)
        return proba_frame(engine.classes.labels, engine.scores_frame(engine.parser.frame(X, absent=absent), len(X)), X.index)

    @_one_at_a_time
    def _check(self) -> None:
        """Assert the invariants of every part of the model (see ``Engine._check``)."""
        self._engine._check()


# ------------------------------------------------------------------------------------------------
# The saved model's record (docs/saved-model.md, "The engine and the classifier")

_LEARNERS = ("Uniform", "PGDMB", "VNS", "FNB", "SNB", "Graphical", "SGCF", "Direct")
#: The command line's names of the parts (``--models``, ``--summary``), for the error a string gets.
_LEARNER_NAMES = {"nb": "Uniform", "uniform": "Uniform", **{name.lower(): name for name in _LEARNERS[1:]}}
_NUMERIC_SUMMARIES = {"gk": "GKClass", "gkclass": "GKClass", "cpid": "CPiD", "gaussian": "Gaussian"}


def _default_parts() -> dict:
    """The parts a parameter left None stands for (fresh prototypes)."""
    from . import summaries, weights

    return {"numeric": summaries.GKClass(), "categorical": summaries.Categorical(), "optimizer": weights.VNS()}


def _check_part(name: str, value, base_class: type, kind: str | None, names: dict) -> None:
    """``ValueError`` naming the parameter ``name`` unless ``value`` is None or an instance of
    ``base_class`` (of the summary ``kind``); the message says what to write instead."""
    if value is None:
        return
    family = "weights" if name == "optimizer" else "summaries"
    accepted = ", ".join(f"{family}.{cls}()" for cls in dict.fromkeys(names.values()))
    if isinstance(value, str):
        known = names.get(value.strip().lower())
        hint = f"write {name}={family}.{known}()" if known else f"one of {accepted}"
        raise ValueError(f"{name} must be None or an instance such as {accepted}, got the string {value!r}: {hint}")
    if isinstance(value, type):
        raise ValueError(f"{name} must be an instance, not the class {value.__name__}: write {name}={family}.{value.__name__}()")
    if not isinstance(value, base_class) or (kind is not None and value.kind != kind):
        what = f"a {kind} summary" if kind else "a weight learner"
        raise ValueError(f"{name} must be None or {what} such as {accepted}, got a {type(value).__name__}")


def _largest_gap(rebuild_every: int, half_life) -> int:
    """The schedule's largest gap between rebuilds: ``rebuild_every``, at most ``half_life``."""
    return rebuild_every if half_life is None else max(1, min(rebuild_every, math.ceil(half_life)))


def _model_state(model: WeightedNaiveBayes) -> dict:
    e = model._engine
    history = e.history
    if not history.sparse:  # the file holds the rows as entries (version 5), whatever the layout in memory
        history = SparseHistory.of(history, e.registry.column, _numeric(e.registry))
    return {
        "classes": e.classes,
        "registry": e.registry,
        "history": history,
        "schedule": e.schedule,
        "learner": e.optimizer,
        "slots": e.slots,
        "monitor": e.monitor,
    }


def _numeric(registry) -> np.ndarray:
    """``(K,)`` True for the numeric variables."""
    return np.array([v.kind == "numeric" for v in registry.variables], dtype=bool)


def _model_check(fields: io.Fields) -> None:
    p, s = fields.params, fields.state
    classes, registry, history, schedule = s["classes"], s["registry"], s["history"], s["schedule"]
    if history.capacity != p["history_size"] and (p["memory_budget"] is None or history.capacity > p["history_size"]):
        budget = "" if p["memory_budget"] is None else " (a memory budget only shrinks it)"
        fields.fail("history", f"holds {history.capacity} rows, history_size is {p['history_size']}{budget}")
    every = _largest_gap(p["rebuild_every"], p["half_life"])
    if (schedule.growth, schedule.every) != (p["rebuild_growth"], every):
        fields.fail("schedule", "its growth and every differ from rebuild_growth and rebuild_every")
    monitor = s["monitor"]
    if (monitor is None) != (p["drift_delta"] is None) or (monitor is not None and monitor.delta != p["drift_delta"]):
        fields.fail("monitor", "must be null exactly when drift_delta is, with delta = drift_delta")
    check_parts(fields, classes, registry, history, schedule, s["learner"], s["slots"], faded=p["half_life"] is not None)


def _model_build(fields: io.Fields) -> WeightedNaiveBayes:
    model = WeightedNaiveBayes(**fields.params)
    e, s = model._engine, fields.state
    e.classes, e.registry, e.history, e.schedule, e.optimizer, e.monitor = (
        s[k] for k in ("classes", "registry", "history", "schedule", "learner", "monitor")
    )
    if e.absent is None:  # a dense stream keeps a column per variable (the file holds entries)
        e.history = e.history.dense()
    e.slots = s["slots"]
    e.shape = (len(e.slots), len(e.classes))  # the learner's size (checked above)
    e.parser.registry = e.registry
    e.n_seen = e.history.stored
    e.reencode_all()  # the encoded window, a function of the raw rows and level 2
    return model


io.register(
    "WeightedNaiveBayes",
    WeightedNaiveBayes,
    io.Schema(
        params={
            "numeric": io.Optional(io.Record("GKClass", "CPiD", "Gaussian"), doc="numeric summary prototype"),
            "categorical": io.Optional(io.Record("Categorical"), doc="categorical summary prototype"),
            "optimizer": io.Optional(io.Record(*_LEARNERS), doc="weight learner prototype"),
            "history_size": io.Int(low=1, doc="history depth N"),
            "batch_size": io.Optional(io.Int(low=1), doc="learner batch size L (null: the learner's)"),
            "rebuild_growth": io.Float(above=0.0, doc="rebuild when a count has grown by this factor"),
            "rebuild_every": io.Int(low=1, doc="largest gap between two rebuilds"),
            "on_type_change": io.Str(choices=rows.POLICIES, doc="a value of the other kind: raise or missing"),
            "drift_delta": io.Optional(io.Float(above=0.0, below=1.0), doc="confidence of the change detector (null: off)"),
            "half_life": io.Optional(io.Float(low=256.0), doc="rows in which an example's weight halves (null: no fading)"),
            "seed": io.Optional(io.Int(), doc="seed of every random choice"),
            "absent": io.Optional(io.Float(), doc="the value of an absent numeric feature (null: missing)"),
            "memory_budget": io.Optional(io.Int(low=1), doc="bytes memory_usage() is kept within (null: no budget)"),
        },
        state={
            "classes": io.Record("Classes", doc="labels, prior counts, rebuild thresholds"),
            "registry": io.Record("Registry", doc="the variables and their per-variable columns"),
            "history": io.Record("History", doc="the window of raw rows"),
            "schedule": io.Record("Schedule", doc="rebuild countdown and step counters"),
            "learner": io.Record(*_LEARNERS, doc="the weight learner and its state"),
            "slots": io.Record("Slots", doc="the variables in level 3, in the learner's order (since version 4)"),
            "monitor": io.Optional(io.Record("Monitor"), doc="the change detector (null when drift_delta is)"),
        },
        checks=(_model_check,),
        doc="The classifier: its parameters and the state of every part",
    ),
    state=_model_state,
    build=_model_build,
    lock=lambda model: model.lock,
)
