"""WeightedNaiveBayes: the River classifier in front of the three levels.

This module is the River face only: parameters, the public methods, and saving. The work is done
by the parts in ``wnb_stream.engine`` (see ``docs/architecture.md``): ``rows`` validates and codes
input (one path for a dict and a DataFrame), ``Engine`` takes a row through the class counts,
the variables (summaries and level 2), the history, the schedule, the lookups and the learner.
"""

from __future__ import annotations

import threading

from river import base

from . import _classifier_params as _params
from . import _classifier_record as _record
from . import _classifier_report as _report
from . import io
from ._checks import integer
from ._classifier_params import one_at_a_time
from .engine import frames, merge
from .engine.drift import Monitor
from .serving import Delta, Predictor
from .serving.predictor import proba_dict, proba_frame

__all__ = ["WeightedNaiveBayes"]


class WeightedNaiveBayes(_report.Reports, base.MiniBatchClassifier):
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
        since the last rebuild (at every one of the first observations, sparser later). The
        default 0.25 keeps the partitions a model predicts with built on at least 4/5 of the rows
        it holds (0.5, the earlier default, left them on 2/3: docs/algorithms/prediction.md).
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
    catch_up
        True (default): a model that serves, that is, predicts two rows or more without learning
        between them (a model trained, then asked for predictions; a ``predict_proba_many`` of
        several rows), first rebuilds level 2 of every variable on all the rows it holds and
        steps its weights once on its window, at most once per growth of its rows by
        ``rebuild_growth`` (``docs/algorithms/prediction.md#catching-up``). A stream fed
        test-then-train one row at a time never serves, so it learns and predicts the same with
        or without it. False: predictions never change the model.

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
    Accuracy: 91.27%
    >>> round(model.weights["https"], 2), model.weights["ip_in_url"]
    (0.91, 0.0)

    """

    def __init__(
        self,
        numeric=None,
        categorical=None,
        optimizer=None,
        history_size: int = 5000,
        batch_size: int | None = None,
        rebuild_growth: float = 0.25,
        rebuild_every: int = 50_000,
        on_type_change: str = "raise",
        drift_delta: float | None = 0.002,
        half_life: float | None = None,
        seed: int | None = None,
        absent: float | None = None,
        memory_budget: int | None = None,
        catch_up: bool = True,
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
        self.catch_up = catch_up
        _params.check(self)
        self._lock = threading.RLock()
        self._engine = _params.new_engine(self)

    def __repr__(self) -> str:
        """River's form, with the summaries and the learner in use where a parameter is None."""
        return _params.describe(self)

    @property
    def rebuild_every_rows(self) -> int:
        """The largest gap between two rebuilds of a variable: ``rebuild_every``, and at most
        ``half_life`` when the model fades."""
        return _params.largest_gap(self.rebuild_every, self.half_life)

    @property
    def _multiclass(self) -> bool:
        return True

    @classmethod
    def _unit_test_params(cls):
        yield from _params.unit_test_params()

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
    @one_at_a_time
    def classes(self) -> tuple:
        """Class labels in order of first appearance."""
        return self._engine.classes.index.classes

    @property
    @one_at_a_time
    def weights(self) -> dict:
        """Current best weight of every feature (``{feature: weight in [0, 1]}``), anytime.

        For ``weights.Graphical`` (one weight per feature and class, free in sign and size) this is
        the mean over classes. A feature whose level 2 is flat (it found no information, so the
        feature changes no prediction) is outside level 3 and reports the learner's
        ``outside_weight``: 0, or 1 for plain naive Bayes (``weights.Uniform()``).
        """
        w = self._engine.weights()
        return {v.name: float(w[k]) for k, v in enumerate(self._engine.registry.variables)}

    @one_at_a_time
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
    @one_at_a_time
    def learn_one(self, x: dict, y, w: float = 1.0) -> None:
        """Update the model with one example. O(K) in a few NumPy calls, plus amortised level-2 and learner work."""
        self._engine.learn_dict(x, y, w)

    @one_at_a_time
    def predict_proba_one(self, x: dict) -> dict:
        """{class: probability} over every class seen so far (``{}`` before any learning)."""
        engine = self._engine
        if not len(engine.classes):
            return {}
        row = engine.parser.row(x)
        engine.serve(row)
        return proba_dict(engine.classes.labels, engine.scores_one(row))

    @property
    @one_at_a_time
    def changes_detected(self) -> int:
        """Changes of concept the model has detected (and forgotten what came before) so far."""
        return 0 if self._engine.monitor is None else self._engine.monitor.detected

    @one_at_a_time
    def forget(self, keep: int = 0) -> None:
        """Forget what was learned before the ``keep`` most recent rows of the history (at most
        ``history_size``), as after a detected change (``docs/algorithms/drift.md``): summaries,
        level 2 and class counts from the kept rows only, the weights restarted on them. The
        variables and the classes stay."""
        integer(keep, "keep", low=0)
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
            _params.check_mergeable(self, other)
            self._engine = merge.merged(self._engine, other._engine)

    # ------------------------------------------------------------------ training across machines
    @property
    @one_at_a_time
    def n_seen(self) -> int:
        """Examples learned (those of merged models and absorbed deltas included)."""
        return self._engine.n_seen

    @one_at_a_time
    def predictor(self, catch_up: bool | None = None) -> Predictor:
        """What serving needs (``Predictor``): level 2, weights and prior, without the
        summaries, the history and the learner. Its probabilities are this model's, bit for bit,
        until the model learns again. A predictor is for serving: the model catches up first
        (``docs/algorithms/prediction.md#catching-up``) when ``catch_up`` says so (None: the
        model's ``catch_up``; a coordinator publishing each round's model passes False: the
        round rebuilt what its rows moved). Cost O(K · J) plus the lookups' compilation if
        stale, and the catch-up's rebuild and step when one is due."""
        if self._engine.params.catch_up if catch_up is None else catch_up:
            self._engine.catch_up()
        return Predictor.of_engine(self._engine)

    def change_detector(self) -> Monitor | None:
        """A fresh change detector of this model's kind (``drift_delta``; None when it is None):
        ``add(errors)`` takes 0/1 errors, oldest first, and returns the number of the newest
        ones since a rise of the error (0: none), as the model's own detector does
        (``docs/algorithms/drift.md``). A ``Coordinator`` runs one across rounds on the
        learners' prequential errors. O(1)."""
        return None if self.drift_delta is None else Monitor(float(self.drift_delta))

    @one_at_a_time
    def delta(self) -> Delta:
        """An empty ``Delta`` for one partition's examples of a training round (``absorb``),
        knowing the kind of each of this model's features (``Delta.kinds``). O(K)."""
        return Delta(self._engine.blank(collect=True), {v.name: v.kind for v in self._engine.registry.variables})

    @one_at_a_time
    def absorb(self, deltas, step: bool = True) -> None:
        """Learn the examples of ``deltas`` (``Delta`` of this model's parameters, each filled by a
        partition's learner since this model was last published), in one round.

        Counts and summaries add up as in ``merge``; every delta row is newer than the model's,
        so the history keeps the deltas' newest rows (sharing the window equally, interleaved) and
        fills the rest with its own newest; level 2 is then rebuilt for the variables due (on the
        schedule of one model counting the same rows) and the weights step on the deltas' rows
        (``docs/algorithms/merge.md#rounds``). ``ValueError`` for a delta of other summaries or a
        feature of the other kind; nothing changes then.

        ``step=False`` leaves the weights' step for later (``step_weights``): the model predicts
        at once with the rebuilt level 2 and the weights it had (a new or woken variable at the
        entry weight), and ``step_weights`` then makes it the model ``absorb(deltas)`` makes, bit
        for bit, provided nothing else changes it in between (a ``Coordinator`` does the step in
        a thread: ``background_weights``).
        """
        deltas = list(deltas)
        for delta in deltas:
            if not isinstance(delta, Delta):
                raise TypeError(f"can only absorb a Delta, got {type(delta).__name__}")
            _params.check_delta(self._engine, delta)
        if deltas:
            self._engine = merge.absorbed(self._engine, [delta._engine for delta in deltas], [delta.blocks for delta in deltas], step=bool(step))

    @one_at_a_time
    def step_weights(self) -> bool:
        """The weights' step that ``absorb(deltas, step=False)`` left due, on the round's rows;
        whether there was one (False: none was due, nothing changes). O(one learner step)."""
        return self._engine.step_if_due()

    # ------------------------------------------------------------------ mini-batches
    @one_at_a_time
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

    @one_at_a_time
    def predict_proba_many(self, X):
        """A DataFrame of probabilities, one column per known class, one row per row of ``X``."""
        X, absent = frames.read(X)
        engine = self._engine
        if not len(engine.classes):
            return proba_frame((), None, X.index)
        frame = engine.parser.frame(X, absent=absent)
        if len(X):  # (no row, no prediction)
            engine.serve(None, len(X))
        return proba_frame(engine.classes.labels, engine.scores_frame(frame, len(X)), X.index)

    @one_at_a_time
    def _check(self) -> None:
        """Assert the invariants of every part of the model (see ``Engine._check``)."""
        self._engine._check()


_record.register(WeightedNaiveBayes)
