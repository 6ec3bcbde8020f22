"""WeightedNaiveBayes: the River classifier in front of the three levels."""

from __future__ import annotations

import math
import numbers
import typing

import numpy as np
from river import base

from . import history as history_module
from .summaries.base import ClassIndex, _python_scalar, check_weight, is_missing
from .variable import NOWHERE, Variable, value_kind
from .weights.base import Batch, Context

__all__ = ["WeightedNaiveBayes"]

_POLICIES = ("raise", "missing")


def _feature_order(name) -> tuple:
    """A deterministic order for features first seen in the same row (dict order must not matter)."""
    return (type(name).__name__, repr(name))


class WeightedNaiveBayes(base.MiniBatchClassifier):
    """Weighted naive Bayes learned online, in one pass and bounded memory.

    P(C_j | x) ∝ P(C_j) Π_k p(x_k | C_j)^{w_k}, computed in log space. Each feature gets a level-1
    stream summary (``numeric`` or ``categorical`` prototype, cloned per feature), level 2 (MODL
    discretization or value grouping, or per-class Gaussians) turns it into log p(x_k | C_j), and
    the ``optimizer`` learns the weights w_k ∈ [0, 1] from a sliding history of the last
    ``history_size`` rows. ``weights.Uniform()`` gives plain naive Bayes on the same summaries.

    Parameters
    ----------
    numeric
        Summary prototype for numeric features. Defaults to ``summaries.GKClass()``.
    categorical
        Summary prototype for categorical features. Defaults to ``summaries.Categorical()``.
    optimizer
        Weight learner. Defaults to ``weights.VNS()``. Regularizer settings (``regularizer``,
        ``penalty``, ``exponent``) are parameters of the learner.
    history_size
        History depth N: the most recent rows on which the learners judge their criterion.
    batch_size
        Mini-batch size L of the learner's steps; None takes the learner's own ``batch_size``.
        Early in a stream steps run on batches of 32, 64, … up to L so that small streams learn.
    rebuild_growth
        Level 2 of a variable is rebuilt when its count of observations has grown by this factor
        since the last rebuild (at every one of the first observations, sparser later).
    rebuild_every
        Upper bound on the gap, in observations, between two rebuilds of a variable (drift).
    on_type_change
        What to do with a value of the other kind (a string in a numeric feature, or a number in a
        categorical one): "raise" a ``ValueError`` naming the feature (default; nothing is
        learned), or count it as "missing".
    seed
        Seed of every random choice (the learners' perturbations).

    Notes
    -----
    *Which features are numeric.* A feature is numeric when its first non-missing value is a
    number (Python or NumPy int or float, not a bool) and categorical otherwise (strings, bools,
    any other hashable value). None and NaN are missing values (counted per class); ±inf in a
    numeric feature is counted as missing. A feature absent from a dict contributes nothing.
    Features first seen with a missing value are created at their first non-missing value.

    *Anytime.* ``predict_proba_one`` works after the first ``learn_one`` and uses the best weights
    found so far; before any learning it returns ``{}``.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from wnb_stream import WeightedNaiveBayes, weights
    >>> model = WeightedNaiveBayes(seed=42)
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: ...

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
        seed: int | None = None,
    ):
        self.numeric = numeric
        self.categorical = categorical
        self.optimizer = optimizer
        self.history_size = history_size
        self.batch_size = batch_size
        self.rebuild_growth = rebuild_growth
        self.rebuild_every = rebuild_every
        self.on_type_change = on_type_change
        self.seed = seed
        self._check_params()
        self._reset()

    # ------------------------------------------------------------------ set-up
    def _check_params(self) -> None:
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
        if self.on_type_change not in _POLICIES:
            raise ValueError(f"on_type_change must be one of {_POLICIES}, got {self.on_type_change!r}")
        if self.seed is not None and not isinstance(self.seed, numbers.Integral):
            raise ValueError(f"seed must be None or an integer, got {self.seed!r}")

    def _prototypes(self):
        from . import summaries, weights

        numeric = self.numeric if self.numeric is not None else summaries.GKClass()
        categorical = self.categorical if self.categorical is not None else summaries.Categorical()
        optimizer = self.optimizer if self.optimizer is not None else weights.VNS()
        return numeric, categorical, optimizer

    def _reset(self) -> None:
        self._numeric_proto, self._categorical_proto, optimizer = self._prototypes()
        self._optimizer = optimizer.clone()
        self._optimizer.reset(0, 0, self.seed)
        self._classes = ClassIndex()
        self._class_counts = np.zeros(0)  # (J,) weighted class counts (the prior)
        self._class_seen = np.zeros(0)  # (J,) examples per class (the rebuild schedule)
        self._class_next = np.zeros(0)  # (J,) class count at which level 2 is rebuilt again
        self._variables: list[Variable] = []
        self._index: dict = {}  # feature name → variable index
        self._column: list[int] = []  # variable index → column in the history's raw arrays
        self._n_numeric = 0
        self._n_categorical = 0
        self._count = np.zeros(0)  # observations per variable (rebuild schedule)
        self._next_rebuild = np.zeros(0)
        self._history = history_module.History(self.history_size)
        self._pending = 0  # rows since the last learner step
        self._step_size = 0  # size of the next learner batch (grows up to batch_size)
        self._n_seen = 0
        self._shape = (0, 0)  # (K, J) the history and the learner are sized for
        # Compiled prediction state: the stacked tables change with level 2 (_compile), the
        # learner's coefficients after each of its steps (_refresh).
        self._stale = True
        self._stale_coef = True
        self._context_cache: Context | None = None
        self._offsets = np.zeros(0, dtype=np.intp)
        self._table = np.zeros((0, 0))  # (R, J) stacked log_prob of binned variables
        self._coef = np.zeros((0, 0))  # (K, J) learner coefficients
        self._bias = np.zeros(0)  # (J,) log prior + learner bias

    @property
    def _multiclass(self) -> bool:
        return True

    @property
    def _target_batch(self) -> int:
        return self.batch_size if self.batch_size is not None else int(self._optimizer.batch_size)

    @classmethod
    def _unit_test_params(cls):
        from . import weights

        yield {"optimizer": weights.Uniform(), "history_size": 200}
        yield {"optimizer": weights.PGDMB(batch_size=20), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.VNS(batch_size=20), "history_size": 100, "seed": 1}
        yield {"optimizer": weights.Graphical(), "history_size": 100, "seed": 1}

    def _unit_test_skips(self) -> set:
        return set()

    # ------------------------------------------------------------------ public queries
    @property
    def classes(self) -> tuple:
        """Class labels in order of first appearance."""
        return self._classes.classes

    @property
    def weights(self) -> dict:
        """Current best weight of every feature (``{feature: weight in [0, 1]}``), anytime.

        For ``weights.Graphical`` (one weight per feature and class) this is the mean over classes.
        """
        w = np.asarray(self._optimizer.weights, dtype=float)
        return {v.name: float(w[k]) if k < len(w) else 1.0 for k, v in enumerate(self._variables)}

    def memory_usage(self) -> int:
        """Bytes held by the model's arrays and summaries (cheap; no object-graph walk)."""
        size = self._history.memory_usage() + self._table.nbytes + self._coef.nbytes
        size += sum(v.memory_usage() for v in self._variables)
        size += 64 * len(self._index)
        return int(size)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        """The whole model as a JSON-safe dict with a format version (no pickle).

        ``WeightedNaiveBayes.from_dict(model.to_dict())`` predicts and keeps learning exactly as
        ``model`` does. Loading a file of a newer, unknown format version is a ``ValueError``.
        """
        from . import persistence

        return {"format": persistence.FORMAT, "version": persistence.VERSION, "state": persistence.to_state(self)}

    @classmethod
    def from_dict(cls, d: dict) -> WeightedNaiveBayes:
        """The model saved by ``to_dict``."""
        import json

        from . import persistence

        model = persistence.loads(json.dumps(d))
        if not isinstance(model, cls):
            raise ValueError(f"the dict holds a {type(model).__name__}, not a {cls.__name__}")
        return model

    def save(self, path) -> None:
        """Write the model to ``path`` atomically (temporary file, fsync, rename)."""
        from . import persistence

        persistence.save(self, path)

    @classmethod
    def load(cls, path) -> WeightedNaiveBayes:
        """The model saved at ``path`` by ``save``."""
        from . import persistence

        model = persistence.load(path)
        if not isinstance(model, cls):
            raise ValueError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
        return model

    # ------------------------------------------------------------------ input parsing
    def _parse(self, x: dict, learning: bool) -> list:
        """Validate ``x`` without touching the model: a list of (name, variable or None, kind, value).

        ``kind`` is the value's kind, or None for a missing value. Raises ``ValueError`` naming the
        feature for unusable input (an unhashable categorical value, or a value of the other kind
        under the "raise" policy).
        """
        if not isinstance(x, dict):
            raise ValueError(f"x must be a dict of features, got {type(x).__name__}")
        parsed = []
        index, variables = self._index, self._variables
        for name, value in x.items():
            i = index.get(name)
            variable = variables[i] if i is not None else None
            if type(value) is float and variable is not None and variable.kind == "numeric":
                # The common case, validated with two type checks.
                if value != value or value in (math.inf, -math.inf):
                    parsed.append((name, variable, None, None))
                else:
                    parsed.append((name, variable, "numeric", value))
                continue
            kind = value_kind(value)
            if kind == "categorical":
                try:
                    hash(value)
                except TypeError:
                    raise ValueError(f"feature {name!r}: unhashable value {value!r}") from None
            if kind is not None and variable is not None and kind != variable.kind:
                if self.on_type_change == "raise":
                    raise ValueError(
                        f"feature {name!r} is {variable.kind} but got {value!r}; "
                        "use on_type_change='missing' to count such values as missing"
                    )
                kind = None
            if kind == "numeric":
                value = float(value)
                if math.isinf(value):
                    kind = None
            elif kind is None:
                value = None
            elif isinstance(value, np.generic):
                value = value.item()
            parsed.append((name, variable, kind, value))
        return parsed

    # ------------------------------------------------------------------ learning
    def learn_one(self, x: dict, y, w: float = 1.0) -> None:
        """Update the model with one example. O(K log B) plus amortised level-2 and learner work."""
        if y is None:
            raise ValueError("y must not be None")
        try:
            hash(y)
        except TypeError:
            raise ValueError(f"y must be a hashable class label, got {y!r}") from None
        w = check_weight(w)
        y = _python_scalar(y)
        parsed = self._parse(x, learning=True)
        # -- from here on the model changes.
        j = self._classes.encode(y)
        self._grow_classes()
        self._class_counts[j] += w
        self._class_seen[j] += 1
        self._n_seen += 1
        present = self._register(parsed)
        for (name, variable, kind, value), k in zip(parsed, present):
            if k is None:
                continue
            self._variables[k].summary.update(value, y, w)
        ks = [k for k in present if k is not None]
        if ks:
            self._count[ks] += 1
        self._rebuild_due()
        self._push_one(parsed, present, j, w)
        self._stale_coef = True  # the class prior moved
        self._maybe_step()

    def _grow_classes(self) -> None:
        extra = len(self._classes) - len(self._class_counts)
        if extra > 0:
            self._class_counts = np.append(self._class_counts, np.zeros(extra))
            self._class_seen = np.append(self._class_seen, np.zeros(extra))
            self._class_next = np.append(self._class_next, np.zeros(extra))

    def _rebuild_due(self) -> None:
        """Rebuild level 2 where the schedule says so.

        Every variable when a class is new or its count has grown by ``rebuild_growth`` (J changes
        every MODL cost, and a young class needs dense rebuilds, pitfall 10); otherwise each
        variable whose own count has grown by ``rebuild_growth``.
        """
        if np.any(self._class_seen >= self._class_next):
            self._rebuild(range(len(self._variables)))
            self._class_next = self._class_seen + self._gap(self._class_seen)
            return
        due = np.flatnonzero(self._count >= self._next_rebuild)
        if len(due):
            self._rebuild(due)

    def _gap(self, count):
        """Observations until the next rebuild: every one early, then a growth factor, capped."""
        return np.maximum(1.0, np.minimum(np.floor(count * self.rebuild_growth), float(self.rebuild_every)))

    def _register(self, parsed: list) -> list:
        """Create the variables of new features (in a deterministic order); their indices."""
        new = [(name, kind) for name, variable, kind, _ in parsed if variable is None and kind is not None]
        for name, kind in sorted(new, key=lambda item: _feature_order(item[0])):
            if name not in self._index:
                self._add_variable(name, kind)
        return [self._index.get(name) for name, _, _, _ in parsed]

    def _add_variable(self, name, kind: str) -> int:
        proto = self._numeric_proto if kind == "numeric" else self._categorical_proto
        k = len(self._variables)
        self._variables.append(Variable(name, kind, proto.clone()))
        self._index[name] = k
        if kind == "numeric":
            self._column.append(self._n_numeric)
            self._n_numeric += 1
        else:
            self._column.append(self._n_categorical)
            self._n_categorical += 1
        self._count = np.append(self._count, 0.0)
        self._next_rebuild = np.append(self._next_rebuild, 1.0)
        self._offsets = np.append(self._offsets, 0)
        self._stale = True
        self._context_cache = None
        return k

    def _resize(self) -> None:
        """Grow the history and the learner to the current numbers of variables and classes."""
        shape = (len(self._variables), len(self._classes))
        if shape == self._shape:
            return
        self._history.resize(shape[0], shape[1], self._n_numeric, self._n_categorical)
        self._optimizer.resize(*shape)
        self._shape = shape

    def _rebuild(self, indices) -> None:
        """Rebuild level 2 of the given variables, then re-encode their history columns."""
        self._resize()
        classes = self._classes.classes
        selection_cost = math.log(max(1, len(self._variables)))
        for k in indices:
            k = int(k)
            variable = self._variables[k]
            if variable.summary.n <= 0:
                continue
            variable.rebuild(classes, selection_cost)
            self._next_rebuild[k] = self._count[k] + self._gap(self._count[k])
            self._reencode(k)
        self._stale = True
        self._context_cache = None

    def _raw_column(self, k: int) -> np.ndarray:
        if self._variables[k].kind == "numeric":
            return self._history.numeric[:, self._column[k]]
        return self._history.categorical[:, self._column[k]]

    def _reencode(self, k: int) -> None:
        if self._history.size:
            self._history.reencode(k, self._raw_column(k), self._variables[k].log_lik_many)

    def _push_one(self, parsed, present, j: int, w: float) -> None:
        """Encode the row with the current level 2 and append it to the history."""
        self._resize()
        self._refresh()
        K, J = len(self._variables), len(self._classes)
        num_cols, num_vals, cat_cols, cat_vals, ks = [], [], [], [], []
        binned, rows = [], []
        row = np.zeros((K, J))
        for (name, _, kind, value), k in zip(parsed, present):
            if k is None:
                continue
            variable = self._variables[k]
            ks.append(k)
            if variable.kind == "numeric":
                num_cols.append(self._column[k])
                num_vals.append(np.nan if value is None else value)
            else:
                cat_cols.append(self._column[k])
                cat_vals.append(value)
            if variable.density:
                ll = variable.log_lik_one(value)
                if ll is not None:
                    row[k, : len(ll)] = ll
            elif variable.log_prob is not None:
                part = variable.locate(value)
                if part != NOWHERE:
                    binned.append(k)
                    rows.append(self._offsets[k] + part)
        if rows:
            row[binned] = self._table[rows]
        self._history.push((num_cols, num_vals), (cat_cols, cat_vals), ks, row, j, w)
        self._pending += 1

    def _maybe_step(self) -> None:
        target = self._target_batch
        if self._step_size == 0:
            self._step_size = min(target, 32) if target > 1 else 1
        if self._pending < self._step_size:
            return
        self._step(self._pending)
        self._pending = 0
        self._step_size = min(target, 2 * self._step_size)

    def _log_prior(self) -> np.ndarray:
        # algorithms.md §7: P(C_j) = N_j / N; a class with zero weight keeps a tiny mass
        # (ε = 1/(N+1), as the part estimator) so that no score is -inf.
        n = float(self._class_counts.sum())
        eps = 1.0 / (n + 1.0)
        J = len(self._class_counts)
        return np.log((self._class_counts + eps) / (n + J * eps))

    def _context(self) -> Context:
        """Variables' prior costs and activity, cached until the next rebuild or new variable."""
        if self._context_cache is None or len(self._context_cache.active) != len(self._variables):
            prior_costs = np.array([v.prior_cost for v in self._variables], dtype=float)
            active = np.array([v.level > 0 for v in self._variables], dtype=bool)
            self._context_cache = Context(prior_costs=prior_costs, active=active)
        return self._context_cache

    def _step(self, m: int) -> None:
        """One learner step on the ``m`` most recent rows, judged on the whole history."""
        h = self._history
        K, J = len(self._variables), len(self._classes)
        log_prior = self._log_prior()
        rows = h.recent(m)
        batch = Batch(h.log_lik[rows, :K, :J], h.y[rows], h.sample_weight[rows], log_prior)
        filled = h.filled()
        window = Batch(h.log_lik[filled, :K, :J], h.y[filled], h.sample_weight[filled], log_prior)
        self._optimizer.learn(batch, window, self._context())
        self._stale_coef = True

    # ------------------------------------------------------------------ prediction
    def _coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        """The learner's per-(variable, class) multipliers ``(K, J)`` and class offsets ``(J,)``."""
        K, J = len(self._variables), len(self._classes)
        return self._optimizer.coefficients(K, J)

    def _compile(self) -> None:
        """Stack the binned variables' ``log_prob`` tables into one ``(R, J)`` array."""
        K, J = len(self._variables), len(self._classes)
        self._resize()
        offsets = np.zeros(K, dtype=np.intp)
        pieces, start = [], 0
        for k, variable in enumerate(self._variables):
            offsets[k] = start
            if variable.log_prob is None or variable.density:
                continue
            table = np.zeros((variable.log_prob.shape[0], J))
            table[:, : variable.log_prob.shape[1]] = variable.log_prob
            pieces.append(table)
            start += table.shape[0]
        self._offsets = offsets
        self._table = np.concatenate(pieces) if pieces else np.zeros((0, J))
        self._stale = False
        self._stale_coef = True

    def _refresh(self) -> None:
        """Bring the compiled tables and the learner's coefficients up to date."""
        if self._stale:
            self._compile()
        if self._stale_coef:
            coef, bias = self._coefficients()
            self._coef = np.asarray(coef, dtype=float)
            self._bias = self._log_prior() + bias
            self._stale_coef = False

    def _scores_one(self, parsed) -> np.ndarray:
        self._refresh()
        scores = self._bias.copy()
        rows, ks = [], []
        for name, variable, kind, value in parsed:
            if variable is None:
                continue
            if variable.density:
                ll = variable.log_lik_one(value)
                if ll is not None:
                    k = self._index[name]
                    scores[: len(ll)] += self._coef[k, : len(ll)] * ll
                continue
            if variable.log_prob is None:
                continue
            part = variable.locate(value)
            if part != NOWHERE:
                k = self._index[name]
                ks.append(k)
                rows.append(self._offsets[k] + part)
        if rows:
            scores += (self._coef[ks] * self._table[rows]).sum(axis=0)
        return scores

    @staticmethod
    def _softmax(scores: np.ndarray) -> np.ndarray:
        # algorithms.md §8.1: max-shifted log-sum-exp
        shifted = scores - scores.max(axis=-1, keepdims=True)
        p = np.exp(shifted)
        return p / p.sum(axis=-1, keepdims=True)

    def predict_proba_one(self, x: dict) -> dict:
        """{class: probability} over every class seen so far (``{}`` before any learning)."""
        if not len(self._classes):
            return {}
        parsed = self._parse(x, learning=False)
        p = self._softmax(self._scores_one(parsed))
        return dict(zip(self._classes.labels, p.tolist()))

    def debug_one(self, x: dict) -> str:
        """Each feature's weighted log-likelihood contribution per class, as a text table."""
        if not len(self._classes):
            return "no class seen yet"
        parsed = self._parse(x, learning=False)
        self._refresh()
        classes = [str(c) for c in self._classes.labels]
        width = max([len("prior + bias")] + [len(str(name)) for name, *_ in parsed]) + 2
        lines = [" " * width + " ".join(f"{c:>12}" for c in classes)]
        lines.append(f"{'prior + bias':<{width}}" + " ".join(f"{v:12.4f}" for v in self._bias))
        for name, variable, kind, value in parsed:
            if variable is None:
                continue
            ll = variable.log_lik_one(value)
            if ll is None:
                continue
            k = self._index[name]
            contribution = np.zeros(len(classes))
            contribution[: len(ll)] = self._coef[k, : len(ll)] * ll
            lines.append(f"{str(name):<{width}}" + " ".join(f"{v:12.4f}" for v in contribution))
        p = self._softmax(self._scores_one(parsed))
        lines.append(f"{'probability':<{width}}" + " ".join(f"{v:12.4f}" for v in p))
        return "\n".join(lines)

    # ------------------------------------------------------------------ mini-batches
    def learn_many(self, X, y, w=None) -> None:
        """Learn a DataFrame of rows: the same model as a loop of ``learn_one`` over its rows.

        NaN cells are missing values. The whole batch is validated first (nothing is learned if a
        row is unusable). Rows are then processed in chunks that end exactly where the per-row loop
        would register a class, rebuild level 2 or step the learner, so both paths go through the
        same states; within a chunk the summaries take ``update_many`` and the rows are encoded and
        pushed to the history in bulk.
        """
        import pandas as pd

        if not isinstance(X, pd.DataFrame):
            raise ValueError(f"X must be a pandas DataFrame, got {type(X).__name__}")
        labels = np.empty(len(X), dtype=object)
        labels[:] = [_python_scalar(v) for v in y]
        if len(labels) != len(X):
            raise ValueError(f"y must have one label per row of X ({len(X)}), got {len(labels)}")
        for label in labels:
            if label is None:
                raise ValueError("y must not contain None")
            try:
                hash(label)
            except TypeError:
                raise ValueError(f"y must hold hashable class labels, got {label!r}") from None
        if w is None:
            sample_weight = np.ones(len(X))
        else:
            sample_weight = np.asarray(list(w), dtype=float)
            if len(sample_weight) != len(X) or not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
                raise ValueError("w must hold one finite weight >= 0 per row of X")
        columns = [self._parse_column(name, X[name]) for name in X.columns]
        if not len(X):
            return
        self._learn_chunks(columns, labels, sample_weight)

    def _parse_column(self, name, column) -> tuple:
        """Validate one DataFrame column: (name, kind, values, first) without touching the model.

        ``values`` is float with NaN (numeric) or object with None (categorical) for missing;
        ``first`` is the first row holding a non-missing value (-1 if none).
        """
        import pandas as pd

        i = self._index.get(name)
        known = self._variables[i].kind if i is not None else None
        if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
            values = np.array(column.to_numpy(dtype=float, na_value=np.nan), dtype=float, copy=True)
            values[np.isinf(values)] = np.nan
            kinds = np.where(np.isnan(values), 0, 1)
        else:
            raw = column.to_numpy(dtype=object)
            kinds = np.zeros(len(raw), dtype=np.int8)
            values = np.empty(len(raw), dtype=object)
            for r, v in enumerate(raw):
                kind = value_kind(v)
                if kind is None:
                    continue
                if isinstance(v, np.generic):
                    v = v.item()
                if kind == "categorical":
                    try:
                        hash(v)
                    except TypeError:
                        raise ValueError(f"feature {name!r}: unhashable value {v!r}") from None
                    kinds[r] = 2
                else:
                    v = float(v)
                    kinds[r] = 0 if math.isinf(v) else 1
                values[r] = v
        present_kinds = kinds[kinds > 0]
        if known is None and len(present_kinds):
            known = "numeric" if present_kinds[0] == 1 else "categorical"
        if known is not None:
            code = 1 if known == "numeric" else 2
            wrong = (kinds > 0) & (kinds != code)
            if wrong.any():
                if self.on_type_change == "raise":
                    bad = values[int(np.flatnonzero(wrong)[0])]
                    raise ValueError(
                        f"feature {name!r} is {known} but got {bad!r}; "
                        "use on_type_change='missing' to count such values as missing"
                    )
                kinds = np.where(wrong, 0, kinds)
            if known == "numeric":
                out = np.full(len(kinds), np.nan)
                ok = kinds == 1
                out[ok] = np.asarray(values[ok], dtype=float)
            else:
                out = np.empty(len(kinds), dtype=object)
                ok = kinds == 2
                out[ok] = values[ok]
            values = out
        nonmissing = np.flatnonzero(kinds > 0)
        return name, known, values, int(nonmissing[0]) if len(nonmissing) else -1

    def _learn_chunks(self, columns: list, labels: np.ndarray, sample_weight: np.ndarray) -> None:
        n = len(labels)
        # Row positions of each label: a class count reaching its rebuild threshold ends a chunk
        # (a new class has threshold 1, so its first row ends one).
        positions: dict = {}
        for r, label in enumerate(labels):
            positions.setdefault(label, []).append(r)
        positions = {label: np.array(rows) for label, rows in positions.items()}
        # A feature takes part from the first row where it is known (a new one: its first value).
        starts = []
        for name, kind, values, first in columns:
            starts.append(0 if name in self._index else first)
        t = 0
        while t < n:
            end = n - 1
            for label, rows in positions.items():
                j, new = self._classes.peek(label)
                need = 1 if new else int(self._class_next[j] - self._class_seen[j])
                i = int(np.searchsorted(rows, t)) + max(need, 1) - 1
                if i < len(rows):
                    end = min(end, int(rows[i]))
            # New variables are created at their first row: end the chunk there.
            for (name, kind, values, first), start in zip(columns, starts):
                if kind is not None and name not in self._index and start >= t:
                    end = min(end, start)
            # Learner step.
            target = self._target_batch
            step_size = self._step_size or (min(target, 32) if target > 1 else 1)
            end = min(end, t + max(0, step_size - self._pending - 1))
            # Level-2 rebuild of an existing variable whose count reaches its threshold.
            for (name, kind, values, first), start in zip(columns, starts):
                k = self._index.get(name)
                if k is None or start > t:
                    continue
                need = self._next_rebuild[k] - self._count[k]
                if need <= end - t + 1:
                    end = min(end, t + int(max(need, 1)) - 1)
            self._learn_chunk(columns, starts, labels, sample_weight, t, end + 1)
            t = end + 1

    def _learn_chunk(self, columns, starts, labels, sample_weight, lo: int, hi: int) -> None:
        """Rows ``lo:hi`` in bulk; only the last row may trigger a class, a rebuild or a step."""
        chunk_labels = labels[lo:hi]
        chunk_weight = sample_weight[lo:hi]
        m = hi - lo
        class_index = np.array([self._classes.encode(label) for label in chunk_labels], dtype=np.intp)
        self._grow_classes()
        np.add.at(self._class_counts, class_index, chunk_weight)
        np.add.at(self._class_seen, class_index, 1.0)
        self._n_seen += m
        new = [(name, kind) for (name, kind, _, _), start in zip(columns, starts) if name not in self._index and kind is not None and lo <= start < hi]
        for name, kind in sorted(new, key=lambda item: _feature_order(item[0])):
            self._add_variable(name, kind)
        active = []
        for (name, kind, values, first), start in zip(columns, starts):
            k = self._index.get(name)
            if k is None or start >= hi:
                continue
            a = max(lo, start)
            self._variables[k].summary.update_many(values[a:hi], labels[a:hi], sample_weight[a:hi])
            self._count[k] += hi - a
            active.append((k, values, a))
        self._rebuild_due()
        self._resize()
        K, J = len(self._variables), len(self._classes)
        present = np.zeros((m, K), dtype=bool)
        log_lik = np.zeros((m, K, J))
        num_cols, num_vals, cat_cols, cat_vals = [], [], [], []
        for k, values, a in active:
            variable = self._variables[k]
            present[a - lo :, k] = True
            block = values[lo:hi].copy()
            if a > lo:
                block[: a - lo] = np.nan if variable.kind == "numeric" else None
            if variable.kind == "numeric":
                num_cols.append(self._column[k])
                num_vals.append(block)
            else:
                cat_cols.append(self._column[k])
                cat_vals.append(block)
            ll = variable.log_lik_many(values[a:hi])
            if ll.shape[1]:
                log_lik[a - lo :, k, : ll.shape[1]] = ll
        numeric = (num_cols, np.column_stack(num_vals) if num_vals else np.zeros((m, 0)))
        categorical = (cat_cols, np.column_stack(cat_vals) if cat_vals else np.zeros((m, 0), dtype=object))
        self._history.push_many(numeric, categorical, present, log_lik, class_index, chunk_weight)
        self._pending += m
        self._stale_coef = True  # the class prior moved
        self._maybe_step()

    def predict_proba_many(self, X):
        """A DataFrame of probabilities, one column per known class, one row per row of ``X``."""
        import pandas as pd

        if not isinstance(X, pd.DataFrame):
            raise ValueError(f"X must be a pandas DataFrame, got {type(X).__name__}")
        if not len(self._classes):
            return pd.DataFrame(index=X.index)
        scores = self._scores_many(X)
        return pd.DataFrame(self._softmax(scores), index=X.index, columns=list(self._classes.labels))

    def _scores_many(self, X) -> np.ndarray:
        self._refresh()
        n = len(X)
        scores = np.tile(self._bias, (n, 1))
        for name in X.columns:
            k = self._index.get(name)
            if k is None:
                continue
            variable = self._variables[k]
            values = self._parse_column(name, X[name])[2]
            if variable.density:
                ll = variable.log_lik_many(values)
                if ll.shape[1]:
                    scores[:, : ll.shape[1]] += ll * self._coef[k, : ll.shape[1]]
                continue
            if variable.log_prob is None:
                continue
            parts = variable.locate_many(values)
            ok = parts != NOWHERE
            if ok.any():
                scores[ok] += self._table[self._offsets[k] + parts[ok]] * self._coef[k]
        return scores
