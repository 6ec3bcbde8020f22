"""WeightedNaiveBayes: the River classifier in front of the three levels.

Design note (the hot paths). A River model pays per example, so the classifier keeps the work
done per example to a few NumPy calls whatever the number of variables K:

- *Parsing.* A dict whose keys and value types are those of the previous row (the usual stream)
  is read through a cached ``_Plan``: its numeric values become one float array in one call. Any
  other dict goes through the general per-feature validation, which then caches its plan.
- *Level-2 lookups.* Each rebuild compiles the binned variables into one stacked table
  ``(R + 1, J)`` of log p(part | C_j) whose last row is zeros (index ``NOWHERE`` = −1 lands
  there: no contribution), a padded matrix of the numeric variables' cut points, and the table row
  of each variable's first and missing part; the learner's weights are folded into a weighted copy
  of the table after each step. One row of numeric values is then located by one comparison with
  the cut matrix and scored by one gather and one sum.
- *Numeric summaries are fed in blocks.* The history already holds every row's raw values, so a
  numeric variable's summary is not updated per example: it takes the rows it has not seen yet
  with ``update_coded`` (``update_many`` on class codes: the same summary as a loop of
  ``update``) when its level 2 is rebuilt, and before the history overwrites a row it has not
  seen. Categorical summaries are updated as the
  rows come (their ``update_many`` may differ from a loop once they sketch).
- *Mini-batches* run the same steps on whole chunks: numeric columns are one ``(n, a)`` block,
  located by the compiled locator (``_locate.py``), encoded straight into the history
  (``encode_rows``) and scored by one compiled row sum.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
from river import base

from . import history as history_module
from ._locate import encode_rows, locate_rows, row_sums
from .summaries.base import ClassIndex, _python_scalar, check_weight
from .variable import NOWHERE, Variable, value_kind
from .weights.base import Batch, Context

__all__ = ["WeightedNaiveBayes"]

_POLICIES = ("raise", "missing")
#: Pending rows up to which a numeric summary is fed by a loop of ``update`` (cheaper than one
#: ``update_coded`` call for a handful of rows; both give the same summary).
_FEW_ROWS = 8
#: Cells (rows × variables × classes) of the temporaries of one re-encoding piece.
_REENCODE_CELLS = 1 << 20


def _feature_order(name) -> tuple:
    """A deterministic order for features first seen in the same row (dict order must not matter)."""
    return (type(name).__name__, repr(name))


def _plain_number(kind: type) -> bool:
    """True for the number types a plan converts in bulk (Python and NumPy ints and floats, not bools)."""
    return kind is float or kind is int or issubclass(kind, (np.floating, np.integer))


def _check_label(label) -> None:
    """``ValueError`` naming ``y`` for a label that cannot be a class: None, or unhashable."""
    if label is None:
        raise ValueError("y must not be None")
    try:
        hash(label)
    except TypeError:
        raise ValueError(f"y must be a hashable class label, got {label!r}") from None


def _batch_labels(y) -> tuple[np.ndarray, np.ndarray, list]:
    """Validate a batch's labels: ``(n,)`` object labels, ``(n,)`` codes into the distinct labels.

    Labels are Python values (NumPy scalars are converted) compared as dict keys, as
    ``ClassIndex`` does; a typed array (bools, ints, strings, floats without NaN) needs no check.
    """
    raw = y if isinstance(y, np.ndarray) else y.to_numpy() if hasattr(y, "to_numpy") else None
    if raw is not None and raw.ndim == 1 and (raw.dtype.kind in "biuU" or (raw.dtype.kind == "f" and not np.isnan(raw).any())):
        # Python scalars, all hashable; np.unique's equality is the dict's for these types
        labels = np.empty(len(raw), dtype=object)
        labels[:] = raw.tolist()
        uniques, codes = np.unique(raw, return_inverse=True)
        return labels, codes.astype(np.intp, copy=False).reshape(-1), uniques.tolist()
    values = [_python_scalar(v) for v in y]
    for label in values:
        _check_label(label)
    labels = np.empty(len(values), dtype=object)
    labels[:] = values
    distinct: dict = {}
    codes = np.fromiter((distinct.setdefault(label, len(distinct)) for label in values), dtype=np.intp, count=len(values))
    return labels, codes, list(distinct)


def _as_slice(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice when it is a run of consecutive increasing integers (a view, not a gather)."""
    if len(index) and index[-1] - index[0] == len(index) - 1 and (len(index) < 3 or np.all(np.diff(index) == 1)):
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


@dataclasses.dataclass(slots=True)
class _Row:
    """One validated example, by variable.

    ``numeric (a,)`` increasing variable indices with ``values (a,)`` floats (NaN for a missing
    value); ``categorical`` a list of (variable index, value or None); ``new`` a list of
    (name, kind, value) for features that have no variable yet (created when learning).
    ``missing`` tells whether some value is NaN. ``located`` keeps the row's table rows for the
    compiled lookups of one version (a row is usually scored by ``predict_proba_one`` then encoded
    by ``learn_one``).
    """

    numeric: np.ndarray
    values: np.ndarray
    categorical: list
    new: list
    missing: bool = True
    located: tuple | None = None


@dataclasses.dataclass(slots=True)
class _Plan:
    """How to read a dict with these keys and value types without per-feature validation.

    Every key is a known variable; numeric variables hold plain numbers and categorical ones
    strings, so nothing can be invalid. ``numeric_at``/``categorical_at`` are positions in the
    dict's order, ``numeric_at`` following the increasing variable indices ``numeric``. The last
    row read is kept: a stream usually hands the same dict to ``predict_proba_one`` then
    ``learn_one``.
    """

    keys: tuple
    types: tuple
    numeric: np.ndarray  # (a,) increasing variable indices
    numeric_at: np.ndarray  # (a,) their positions in the dict
    categorical: list  # variable indices
    categorical_at: list
    last: tuple = (None, None)  # (values, _Row) of the last row read

    def row(self, values: tuple) -> _Row:
        if self.last[0] == values:
            return self.last[1]
        if not self.categorical:  # every value is a number: one conversion, then variable order
            numbers_ = np.array(values, dtype=float)[self.numeric_at]  # (a,)
        else:
            numbers_ = np.array([values[i] for i in self.numeric_at.tolist()], dtype=float)
        missing = not np.isfinite(numbers_).all()
        if missing:
            numbers_[np.isinf(numbers_)] = np.nan  # ±inf counts as missing
        categorical = [(k, values[i]) for k, i in zip(self.categorical, self.categorical_at)]
        row = _Row(self.numeric, numbers_, categorical, [], missing)
        self.last = (values, row)
        return row


@dataclasses.dataclass(slots=True)
class _Frame:
    """A validated DataFrame: its numeric columns as one block, its categorical columns apart.

    ``numeric (n, a)`` floats (NaN for missing) of the columns ``numeric_names``, with the first
    row holding a value in ``numeric_first (a,)`` (−1: none); ``categorical`` a list of
    (name, ``(n,)`` object values with None for missing, first row). Columns holding no value of
    a feature not known yet are left out (they create nothing).
    """

    numeric_names: list
    numeric: np.ndarray
    numeric_first: np.ndarray
    categorical: list

    def columns(self):
        """(name, kind, first row) of every column."""
        for name, first in zip(self.numeric_names, self.numeric_first.tolist()):
            yield name, "numeric", first
        for name, _, first in self.categorical:
            yield name, "categorical", first


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
        self._column = np.zeros(0, dtype=np.intp)  # (K,) column of each variable in the history's raw arrays
        self._n_numeric = 0
        self._n_categorical = 0
        self._count = np.zeros(0)  # observations per variable (rebuild schedule)
        self._next_rebuild = np.zeros(0)
        self._history = history_module.History(self.history_size)
        self._stored = 0  # rows ever stored in the history
        self._synced = np.zeros(0, dtype=np.int64)  # (K,) rows stored when summary k was last fed
        self._synced_min = 0  # min(_synced): the oldest row a summary still needs
        self._pending = 0  # rows since the last learner step
        self._step_size = 0  # size of the next learner batch (grows up to batch_size)
        self._n_seen = 0
        self._shape = (0, 0)  # (K, J) the history and the learner are sized for
        # Compiled prediction state (see the design note): the level-2 lookups change with level 2
        # (_compile), the learner's coefficients after each of its steps, the prior with each row.
        self._stale = True
        self._stale_coef = True
        self._stale_prior = True
        self._context_cache: Context | None = None
        self._offsets = np.zeros(0, dtype=np.intp)  # (K,) first table row of each variable
        self._table = np.zeros((1, 0))  # (R + 1, J) stacked log_prob of binned variables, zero last row
        self._row_variable = np.zeros(0, dtype=np.intp)  # (R,) variable of each table row
        self._cuts = np.zeros((0, 1))  # (K, P + 1) cut points of numeric binned variables, +inf padded
        self._n_cuts = np.zeros(0, dtype=np.intp)  # (K,) cuts in use in each row
        self._first_row = np.zeros(0, dtype=np.intp)  # (K,) row of the first interval, or NOWHERE
        self._missing_row = np.zeros(0, dtype=np.intp)  # (K,) row of the missing part, or NOWHERE
        self._density: list[int] = []  # variables scored by a density (Gaussian), not the table
        self._coef = np.zeros((0, 0))  # (K, J) learner coefficients
        self._learner_bias = np.zeros(0)  # (J,) learner class offsets
        self._weighted = np.zeros((1, 0))  # (R + 1, J) table rows times their variable's coefficients
        self._bias = np.zeros(0)  # (J,) log prior + learner offsets
        self._labels_array: np.ndarray | None = None  # (J,) class labels for update_coded
        self._version = 0  # compilations of the lookups so far
        self._plan: _Plan | None = None  # how the last plain dict was read (a cache, not state)
        self._quiet = 0  # rows during which no rebuild can fall due (0: check at the next row)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_plan"] = None  # a cache (of type objects): rebuilt from the next row
        return state

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
        size = self._history.memory_usage() + self._table.nbytes + self._weighted.nbytes + self._cuts.nbytes
        size += self._coef.nbytes
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
    def _parse(self, x: dict) -> _Row:
        """Validate ``x`` without touching the model (the plan cache aside): its ``_Row``.

        Raises ``ValueError`` naming the feature for unusable input (an unhashable categorical
        value, or a value of the other kind under the "raise" policy).
        """
        if not isinstance(x, dict):
            raise ValueError(f"x must be a dict of features, got {type(x).__name__}")
        plan = self._plan
        if plan is not None and tuple(x) == plan.keys:
            values = tuple(x.values())
            if tuple(map(type, values)) == plan.types:
                return plan.row(values)
        row, plain = self._parse_each(x)
        if plain:
            self._plan = self._make_plan(x)
        return row

    def _parse_each(self, x: dict) -> tuple[_Row, bool]:
        """Validate ``x`` feature by feature: its ``_Row``, and whether a plan can read it."""
        numeric, values, categorical, new = [], [], [], []
        plain = True
        index, variables = self._index, self._variables
        for name, value in x.items():
            i = index.get(name)
            variable = variables[i] if i is not None else None
            kind = value_kind(value)
            # A plan reads known variables holding plain numbers (numeric) or strings (categorical).
            plain = plain and variable is not None and kind == variable.kind
            plain = plain and (_plain_number(type(value)) if kind == "numeric" else type(value) is str)
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
                    kind, value = None, None
            elif kind is None:
                value = None
            elif isinstance(value, np.generic):
                value = value.item()
            if variable is None:
                if kind is not None:  # a feature is created at its first non-missing value
                    new.append((name, kind, value))
            elif variable.kind == "numeric":
                numeric.append(i)
                values.append(math.nan if value is None else value)
            else:
                categorical.append((i, value))
        order = np.argsort(numeric)
        values = np.array(values, dtype=float)[order]
        row = _Row(np.array(numeric, dtype=np.intp)[order], values, categorical, new, bool(np.isnan(values).any()))
        return row, plain

    def _make_plan(self, x: dict) -> _Plan:
        """The plan of a dict whose every key is a known variable holding a plain value."""
        numeric, numeric_at, categorical, categorical_at = [], [], [], []
        for position, name in enumerate(x):
            k = self._index[name]
            if self._variables[k].kind == "numeric":
                numeric.append(k)
                numeric_at.append(position)
            else:
                categorical.append(k)
                categorical_at.append(position)
        order = np.argsort(numeric)
        return _Plan(tuple(x), tuple(map(type, x.values())), np.array(numeric, dtype=np.intp)[order],
                     np.array(numeric_at, dtype=np.intp)[order], categorical, categorical_at)  # fmt: skip

    # ------------------------------------------------------------------ learning
    def learn_one(self, x: dict, y, w: float = 1.0) -> None:
        """Update the model with one example. O(K) in a few NumPy calls, plus amortised level-2 and learner work."""
        _check_label(y)
        w = check_weight(w)
        y = _python_scalar(y)
        row = self._parse(x)
        # -- from here on the model changes.
        j = self._classes.encode(y)
        self._grow_classes()
        self._class_counts[j] += w
        self._class_seen[j] += 1
        self._n_seen += 1
        self._quiet -= 1
        self._stale_prior = True
        if row.new:
            row = self._register(row)
        if self._dense(row):
            self._count += 1
        elif len(row.numeric):
            self._count[row.numeric] += 1
        for k, value in row.categorical:
            self._count[k] += 1
            self._variables[k].summary.update(value, y, w)
        self._store(row, j, w)  # numeric summaries take the row from the history later
        self._rebuild_due()
        self._encode_newest(row)
        self._pending += 1
        self._maybe_step()

    def _dense(self, row: _Row) -> bool:
        """True when the row holds every variable and they are all numeric (the usual numeric stream).

        Its numeric indices are then ``0, 1, …, K − 1`` (increasing and distinct), as are their
        history columns, so slices replace index arrays.
        """
        return len(row.numeric) == self._n_numeric == len(self._variables)

    def _grow_classes(self) -> None:
        extra = len(self._classes) - len(self._class_counts)
        if extra > 0:
            self._quiet = 0  # a new class rebuilds every variable
            self._class_counts = np.append(self._class_counts, np.zeros(extra))
            self._class_seen = np.append(self._class_seen, np.zeros(extra))
            self._class_next = np.append(self._class_next, np.zeros(extra))

    def _rebuild_due(self) -> None:
        """Rebuild level 2 where the schedule says so.

        Every variable when a class is new or its count has grown by ``rebuild_growth`` (J changes
        every MODL cost, and a young class needs dense rebuilds, pitfall 10); otherwise each
        variable whose own count has grown by ``rebuild_growth``.
        """
        if self._quiet > 0:
            return
        if np.any(self._class_seen >= self._class_next):
            self._rebuild(np.arange(len(self._variables)))
            self._class_next = self._class_seen + self._gap(self._class_seen)
        else:
            due = np.flatnonzero(self._count >= self._next_rebuild)
            if len(due):
                self._rebuild(due)
        # A row adds at most 1 to each count: nothing falls due before the smallest gap is spent.
        gaps = np.concatenate([self._next_rebuild - self._count, self._class_next - self._class_seen])
        self._quiet = max(0, math.ceil(gaps.min())) if len(gaps) else 0

    def _gap(self, count):
        """Observations until the next rebuild: every one early, then a growth factor, capped."""
        return np.maximum(1.0, np.minimum(np.floor(count * self.rebuild_growth), float(self.rebuild_every)))

    def _register(self, row: _Row) -> _Row:
        """Create the variables of the row's new features (in a deterministic order); the full row."""
        numeric, values, categorical = [], [], list(row.categorical)
        for name, kind, value in sorted(row.new, key=lambda item: _feature_order(item[0])):
            k = self._add_variable(name, kind)
            if kind == "numeric":
                numeric.append(k)
                values.append(value)
            else:
                categorical.append((k, value))
        return _Row(
            np.concatenate([row.numeric, np.array(numeric, dtype=np.intp)]),
            np.concatenate([row.values, np.array(values, dtype=float)]),
            categorical,
            [],
            row.missing,  # new features hold values
        )

    def _add_variable(self, name, kind: str) -> int:
        proto = self._numeric_proto if kind == "numeric" else self._categorical_proto
        k = len(self._variables)
        self._variables.append(Variable(name, kind, proto.clone()))
        self._index[name] = k
        if kind == "numeric":
            self._column = np.append(self._column, self._n_numeric)
            self._n_numeric += 1
        else:
            self._column = np.append(self._column, self._n_categorical)
            self._n_categorical += 1
        self._count = np.append(self._count, 0.0)
        self._next_rebuild = np.append(self._next_rebuild, 1.0)
        self._synced = np.append(self._synced, self._stored)  # it has seen every row before it
        self._synced_min = int(self._synced.min())
        self._quiet = 0  # its first rebuild falls due at once
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
        self._stale_coef = True

    def _rebuild(self, indices: np.ndarray) -> None:
        """Rebuild level 2 of the given variables, then re-encode their history columns."""
        self._resize()
        self._feed(indices)
        classes = self._classes.classes
        selection_cost = math.log(max(1, len(self._variables)))
        binned = []  # numeric binned variables rebuilt: re-encoded together below
        for k in indices.tolist():
            variable = self._variables[k]
            if variable.summary.n <= 0:
                continue
            variable.rebuild(classes, selection_cost)
            self._next_rebuild[k] = self._count[k] + self._gap(self._count[k])
            if variable.kind == "numeric" and not variable.density:
                binned.append(k)
            else:
                self._reencode(k)
        self._stale = True
        self._context_cache = None
        if binned and self._history.size:
            self._reencode_numeric(np.array(binned, dtype=np.intp))

    def _reencode_numeric(self, ks: np.ndarray) -> None:
        """Re-encode the history columns of the numeric binned variables ``ks`` with the compiled lookups.

        The same values as ``History.reencode`` with ``Variable.log_lik_many`` per variable (the
        compiled table rows are the partitions' ``log_prob`` rows, the locator is tested equal to
        ``part_index``), in one pass over the history block instead of one per variable.
        """
        self._compile()
        h = self._history
        J = len(self._classes)
        columns = self._column[ks]
        # consecutive variables and columns (every variable rebuilt at once): slices, not gathers
        at, columns = _as_slice(ks), _as_slice(columns)
        piece = max(1, _REENCODE_CELLS // max(1, len(ks) * J))  # rows per piece: bounded temporaries
        for start in range(0, h.size, piece):
            stop = min(h.size, start + piece)
            self._encode_block(ks, h.numeric[start:stop, columns], h.present[start:stop, at], h.log_lik[start:stop], at)
            h.log_lik[start:stop, at, J:] = 0.0  # (no class beyond J)

    def _raw_column(self, k: int) -> np.ndarray:
        if self._variables[k].kind == "numeric":
            return self._history.numeric[:, self._column[k]]
        return self._history.categorical[:, self._column[k]]

    def _reencode(self, k: int) -> None:
        if self._history.size:
            self._history.reencode(k, self._raw_column(k), self._variables[k].log_lik_many)

    # ------------------------------------------------------------------ numeric summaries, in blocks
    def _label_values(self) -> np.ndarray:
        """``(J,)`` the class labels, typed (ints, bools or strings) when they all share that type.

        Summaries register labels through ``np.unique``, which is fast on typed arrays and gives
        the same Python values back (``.item()``); any other mix stays an object array.
        """
        labels = self._classes.labels
        if self._labels_array is None or len(self._labels_array) != len(labels):
            kinds = {type(label) for label in labels}
            array = None
            if len(kinds) == 1 and kinds <= {int, bool, str}:
                try:
                    array = np.array(labels)
                except OverflowError:  # ints beyond 64 bits
                    array = None
                if array is not None and array.dtype.kind not in "iubU":
                    array = None
            if array is None:
                array = np.empty(len(labels), dtype=object)
                array[:] = labels
            self._labels_array = array
        return self._labels_array

    def _feed(self, indices: np.ndarray) -> None:
        """Give the numeric summaries of ``indices`` the history rows they have not seen yet.

        Variables that last took rows at the same point are fed together from one slice of the
        history: ``update_coded`` per variable (a loop of ``update`` for a handful of rows).
        """
        if not len(indices):
            return
        lagging = indices[self._synced[indices] < self._stored]
        numeric = np.array([self._variables[k].kind == "numeric" for k in lagging.tolist()], dtype=bool)
        self._synced[lagging[~numeric]] = self._stored  # categorical summaries take rows as they come
        lagging = lagging[numeric]
        h = self._history
        for since in np.unique(self._synced[lagging]).tolist():
            group = lagging[self._synced[lagging] == since]
            rows = h.recent(self._stored - since)  # (m,) oldest first
            assert len(rows) == self._stored - since, "a summary missed a row the history dropped"
            columns = self._column[group]
            present = h.present[np.ix_(rows, group)]  # (m, g)
            values = h.numeric[np.ix_(rows, columns)]  # (m, g)
            codes, weights = h.y[rows], h.sample_weight[rows]
            labels = self._label_values()
            counts = present.sum(axis=0).tolist()
            for i, k in enumerate(group.tolist()):
                summary = self._variables[k].summary
                count = counts[i]
                if count <= _FEW_ROWS:
                    names = self._classes.labels
                    for r in np.flatnonzero(present[:, i]).tolist():
                        summary.update(float(values[r, i]), names[codes[r]], float(weights[r]))
                elif count == len(rows):
                    summary.update_coded(values[:, i], codes, labels, weights)
                else:
                    used = present[:, i]
                    summary.update_coded(values[used, i], codes[used], labels, weights[used])
            self._synced[group] = self._stored
        self._synced_min = int(self._synced.min())

    def _make_room(self, m: int) -> None:
        """Feed the numeric summaries that have not seen rows the next ``m`` stored rows overwrite."""
        h = self._history
        kept = self._stored + m - h.capacity  # rows before this one are overwritten
        if kept > self._synced_min:
            self._feed(np.flatnonzero(self._synced < kept))

    def _store(self, row: _Row, j: int, w: float) -> None:
        """Append the row's raw values to the history (its encoding follows the rebuilds)."""
        self._resize()
        self._make_room(1)
        if self._dense(row):
            every = slice(0, len(row.numeric))
            self._history.push((every, row.values), ([], []), every, None, j, w)
        else:
            present, categorical = row.numeric, ([], [])
            if row.categorical:
                ks = np.array([k for k, _ in row.categorical], dtype=np.intp)
                present = np.concatenate([present, ks])
                categorical = (self._column[ks], [value for _, value in row.categorical])
            self._history.push((self._column[row.numeric], row.values), categorical, present, None, j, w)
        self._stored += 1

    def _encode_newest(self, row: _Row) -> None:
        """Write the encoding ℓ_kj of the most recent history row with the current level 2."""
        if self._stale:
            self._compile()
        h = self._history
        i = h.newest()
        ks, rows = self._locate(row)
        J = len(self._classes)
        if self._dense(row):
            h.log_lik[i, : len(ks), :J] = self._table[rows]
        else:
            h.log_lik[i, ks, :J] = self._table[rows]  # NOWHERE rows are the zero row
        for k, value in self._density_values(row):
            ll = self._variables[k].log_lik_one(value)
            if ll is not None:
                h.log_lik[i, k, : len(ll)] = ll

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
        h.fit_encoding(K, J)  # the window below: one contiguous block
        log_prior = self._log_prior()
        rows = _as_slice(h.recent(m))  # consecutive in the ring (the usual case): a view, not a copy
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
        """Compile the binned variables' level 2 into the stacked lookups of the design note."""
        K, J = len(self._variables), len(self._classes)
        self._resize()
        offsets = np.zeros(K, dtype=np.intp)
        first_row = np.full(K, NOWHERE, dtype=np.intp)
        missing_row = np.full(K, NOWHERE, dtype=np.intp)
        pieces, owners, cuts, density, start = [], [], [], [], 0
        for k, variable in enumerate(self._variables):
            offsets[k] = start
            if variable.density:
                density.append(k)
                continue
            if variable.log_prob is None:
                continue
            n_parts = variable.log_prob.shape[0]
            table = np.zeros((n_parts, J))
            table[:, : variable.log_prob.shape[1]] = variable.log_prob
            pieces.append(table)
            owners.append(np.full(n_parts, k, dtype=np.intp))
            if variable.kind == "numeric" and variable.first_part != NOWHERE:
                first_row[k] = start + variable.first_part
                cuts.append((k, variable.cuts))
            if variable.missing_part != NOWHERE:
                missing_row[k] = start + variable.missing_part
            start += n_parts
        width = 1 + max([len(c) for _, c in cuts], default=0)  # at least one +inf per row
        cut_matrix = np.full((K, width), np.inf)  # (K, P + 1)
        n_cuts = np.zeros(K, dtype=np.intp)  # (K,) cuts in use in each row of the matrix
        for k, c in cuts:
            cut_matrix[k, : len(c)] = c
            n_cuts[k] = len(c)
        pieces.append(np.zeros((1, J)))  # the row of NOWHERE (index -1): no contribution
        self._offsets = offsets
        self._table = np.concatenate(pieces)
        self._row_variable = np.concatenate(owners) if owners else np.zeros(0, dtype=np.intp)
        self._cuts = cut_matrix
        self._n_cuts = n_cuts
        self._first_row = first_row
        self._missing_row = missing_row
        self._density = density
        self._stale = False
        self._stale_coef = True
        self._version += 1

    def _refresh(self) -> None:
        """Bring the compiled lookups, the learner's coefficients and the prior up to date."""
        if self._stale:
            self._compile()
        if self._stale_coef:
            coef, bias = self._coefficients()
            self._coef = np.asarray(coef, dtype=float)  # (K, J)
            self._learner_bias = np.asarray(bias, dtype=float)  # (J,)
            self._weighted = np.zeros_like(self._table)  # (R + 1, J), the last row stays zero
            self._weighted[:-1] = self._table[:-1] * self._coef[self._row_variable]
            self._stale_coef = False
            self._stale_prior = True
        if self._stale_prior:
            self._bias = self._log_prior() + self._learner_bias
            self._stale_prior = False

    def _locate(self, row: _Row) -> tuple[np.ndarray, np.ndarray]:
        """Variables of the row and their table rows ``(m,)`` each (``NOWHERE`` → the zero row)."""
        if row.located is not None and row.located[0] == self._version:
            return row.located[1:]
        ks, rows = row.numeric, self._locate_numeric(row.numeric, row.values)
        if row.categorical:
            found = []
            for k, value in row.categorical:
                part = self._variables[k].locate(value)
                found.append(NOWHERE if part == NOWHERE else self._offsets[k] + part)
            ks = np.concatenate([ks, np.array([k for k, _ in row.categorical], dtype=np.intp)])
            rows = np.concatenate([rows, np.array(found, dtype=np.intp)])
        row.located = (self._version, ks, rows)
        return ks, rows

    def _locate_numeric(self, ks: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Table rows ``(a,)`` of one value of each numeric variable ``ks (a,)``.

        A finite value lies in the first row plus the number of cuts below it (``bisect_left``);
        a missing value (NaN) in the missing part's row.
        """
        return self._locate_block(ks, values.reshape(1, -1))[0]

    def _locate_block(self, ks: np.ndarray, block: np.ndarray) -> np.ndarray:
        """Table rows ``(n, a)`` of a block of values ``(n, a)`` of the numeric variables ``ks (a,)``."""
        return locate_rows(self._cuts, self._n_cuts, self._first_row, self._missing_row, ks, block)

    def _encode_block(self, ks: np.ndarray, block: np.ndarray, present: np.ndarray, out: np.ndarray, at) -> None:
        """``out[:, at, :J] = ℓ`` of a block of values ``(n, a)`` of the numeric variables ``ks (a,)``
        (zeros where ``present (n, a)`` is False); ``at`` is ``ks`` or the same as a slice."""
        J = self._table.shape[1]
        if isinstance(at, slice):  # a view: the compiled lookups write into it
            encode_rows(self._cuts, self._n_cuts, self._first_row, self._missing_row, ks, block, present, self._table, out[:, at, :J])
        else:
            rows = self._locate_block(ks, block)  # (n, a)
            rows[~present] = NOWHERE
            out[:, at, :J] = self._table[rows]

    def _density_values(self, row: _Row):
        """(variable, value or None) of the row's density-scored variables."""
        if not self._density:
            return []
        density = np.isin(row.numeric, self._density)
        return [(k, None if math.isnan(v) else v) for k, v in zip(row.numeric[density].tolist(), row.values[density].tolist())]

    def _scores_one(self, row: _Row) -> np.ndarray:
        self._refresh()
        _, rows = self._locate(row)
        scores = self._bias + np.add.reduce(self._weighted[rows], axis=0)  # (J,)
        for k, value in self._density_values(row):
            ll = self._variables[k].log_lik_one(value)
            if ll is not None:
                scores[: len(ll)] += self._coef[k, : len(ll)] * ll
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
        # algorithms.md §8.1, max-shifted; in Python floats, cheaper than NumPy for one row
        scores = self._scores_one(self._parse(x)).tolist()
        top = max(scores)
        p = [math.exp(s - top) for s in scores]
        total = sum(p)
        return {label: v / total for label, v in zip(self._classes.labels, p)}

    def debug_one(self, x: dict) -> str:
        """Each feature's weighted log-likelihood contribution per class, as a text table."""
        if not len(self._classes):
            return "no class seen yet"
        row = self._parse(x)
        self._refresh()
        classes = [str(c) for c in self._classes.labels]
        numeric = [(k, None if math.isnan(v) else v) for k, v in zip(row.numeric.tolist(), row.values.tolist())]
        values = dict(numeric + row.categorical)  # variable → value, shown in the dict's order
        shown = [(name, self._index[name]) for name in x if self._index.get(name) in values]
        width = max([len("prior + bias")] + [len(str(name)) for name, _ in shown]) + 2
        lines = [" " * width + " ".join(f"{c:>12}" for c in classes)]
        lines.append(f"{'prior + bias':<{width}}" + " ".join(f"{v:12.4f}" for v in self._bias))
        for name, k in shown:
            ll = self._variables[k].log_lik_one(values[k])
            if ll is None:
                continue
            contribution = np.zeros(len(classes))
            contribution[: len(ll)] = self._coef[k, : len(ll)] * ll
            lines.append(f"{name!s:<{width}}" + " ".join(f"{v:12.4f}" for v in contribution))
        p = self._softmax(self._scores_one(row))
        lines.append(f"{'probability':<{width}}" + " ".join(f"{v:12.4f}" for v in p))
        return "\n".join(lines)

    # ------------------------------------------------------------------ mini-batches
    def learn_many(self, X, y, w=None) -> None:
        """Learn a DataFrame of rows: the same model as a loop of ``learn_one`` over its rows.

        NaN cells are missing values. The whole batch is validated first (nothing is learned if a
        row is unusable). Rows are then processed in chunks that end exactly where the per-row loop
        would register a class, rebuild level 2 or step the learner, so both paths go through the
        same states; within a chunk the rows are stored, encoded and pushed to the history in bulk.
        """
        import pandas as pd

        if not isinstance(X, pd.DataFrame):
            raise ValueError(f"X must be a pandas DataFrame, got {type(X).__name__}")
        labels, codes, uniques = _batch_labels(y)
        if len(labels) != len(X):
            raise ValueError(f"y must have one label per row of X ({len(X)}), got {len(labels)}")
        if w is None:
            sample_weight = np.ones(len(X))
        else:
            sample_weight = np.asarray(list(w), dtype=float)
            if len(sample_weight) != len(X) or not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
                raise ValueError("w must hold one finite weight >= 0 per row of X")
        frame = self._parse_frame(X)
        if not len(X):
            return
        self._learn_chunks(frame, labels, codes, uniques, sample_weight)

    def _parse_frame(self, X) -> _Frame:
        """Validate a DataFrame without touching the model (numeric columns read in one block)."""
        import pandas as pd

        names, others = [], []
        for name, dtype in X.dtypes.items():
            k = self._index.get(name)
            known = self._variables[k].kind if k is not None else None
            if known != "categorical" and pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
                names.append(name)
            else:
                others.append(self._parse_column(name, X[name]))
        block = (X if len(names) == X.shape[1] else X[names]).to_numpy(dtype=float, na_value=np.nan)  # (n, a)
        infinite = np.isinf(block)
        if infinite.any():  # ±inf counts as missing (on a copy: the block may share X's memory)
            block = np.where(infinite, np.nan, block)
        columns, categorical = [block], []
        for name, kind, values, first in others:
            if kind == "numeric":
                names.append(name)
                columns.append(values[:, None])
            elif kind == "categorical":
                categorical.append((name, values, first))
        numeric = np.concatenate(columns, axis=1) if len(columns) > 1 else block  # (n, a)
        present = ~np.isnan(numeric)
        first = np.where(present.any(axis=0), present.argmax(axis=0), -1)  # (a,)
        return _Frame(names, numeric, first, categorical)

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

    def _learn_chunks(self, frame: _Frame, labels: np.ndarray, codes: np.ndarray, uniques: list, sample_weight: np.ndarray) -> None:
        n = len(labels)
        # Row positions of each label: a class count reaching its rebuild threshold ends a chunk
        # (a new class has threshold 1, so its first row ends one).
        by_label = np.argsort(codes, kind="stable")
        positions = dict(zip(uniques, np.split(by_label, np.cumsum(np.bincount(codes, minlength=len(uniques)))[:-1])))
        # A feature takes part from the first row where it is known (a new one: its first value).
        columns = [(name, 0 if name in self._index else first) for name, _, first in frame.columns()]
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
            for name, start in columns:
                if name not in self._index and start >= t:
                    end = min(end, start)
            # Learner step.
            target = self._target_batch
            step_size = self._step_size or (min(target, 32) if target > 1 else 1)
            end = min(end, t + max(0, step_size - self._pending - 1))
            # Level-2 rebuild of an existing variable whose count reaches its threshold.
            known = [(self._index[name], start) for name, start in columns if name in self._index and start <= t]
            if known:
                ks = np.array([k for k, _ in known], dtype=np.intp)
                need = np.maximum(self._next_rebuild[ks] - self._count[ks], 1.0)
                soon = need <= end - t + 1
                if soon.any():
                    end = min(end, t + int(need[soon].min()) - 1)
            self._learn_chunk(frame, columns, labels, codes, uniques, sample_weight, t, end + 1)
            t = end + 1

    def _learn_chunk(self, frame: _Frame, columns: list, labels, codes, uniques, sample_weight, lo: int, hi: int) -> None:
        """Rows ``lo:hi`` in bulk; only the last row may trigger a class, a rebuild or a step."""
        chunk_weight = sample_weight[lo:hi]
        m = hi - lo
        # class indices through the batch's distinct labels; new ones registered in row order
        known = np.array([self._classes.position.get(label, -1) for label in uniques], dtype=np.intp)
        class_index = known[codes[lo:hi]]
        for r in np.flatnonzero(class_index < 0).tolist():
            class_index[r] = self._classes.encode(labels[lo + r])
        self._grow_classes()
        np.add.at(self._class_counts, class_index, chunk_weight)
        np.add.at(self._class_seen, class_index, 1.0)
        self._n_seen += m
        self._quiet -= m
        self._stale_prior = True
        new = [(name, kind) for (name, kind, _), (_, start) in zip(frame.columns(), columns) if name not in self._index and lo <= start < hi]
        for name, kind in sorted(new, key=lambda item: _feature_order(item[0])):
            self._add_variable(name, kind)
        # Columns taking part in the chunk, each from row ``since`` (its first row if it is new).
        a = len(frame.numeric_names)
        numeric = [(i, self._index.get(name), max(lo, start)) for i, (name, start) in enumerate(columns[:a])]
        numeric = [(i, k, since) for i, k, since in numeric if k is not None and since < hi]
        categorical = []
        for (name, values, _), (_, start) in zip(frame.categorical, columns[a:]):
            k = self._index.get(name)
            if k is not None and start < hi:
                since = max(lo, start)
                self._variables[k].summary.update_many(values[since:hi], labels[since:hi], sample_weight[since:hi])
                categorical.append((k, values, since))
        ks = np.array([k for _, k, _ in numeric], dtype=np.intp)
        at = np.array([i for i, _, _ in numeric], dtype=np.intp)
        since = np.array([s for _, _, s in numeric], dtype=np.intp)
        self._count[ks] += hi - since
        for k, _, s in categorical:
            self._count[k] += hi - s
        self._resize()
        K = len(self._variables)
        # The raw rows go to the history now (numeric summaries take them from there).
        present = np.zeros((m, K), dtype=bool)
        present[:, ks] = np.arange(lo, hi)[:, None] >= since[None, :]
        for k, _, s in categorical:
            present[s - lo :, k] = True
        block = frame.numeric[lo:hi][:, at]  # (m, a') NaN before a new variable's first value
        categories = np.empty((m, len(categorical)), dtype=object)
        for c, (_, values, _) in enumerate(categorical):
            categories[:, c] = values[lo:hi]  # None before a new variable's first value
        numeric_columns = self._column[ks]
        categorical_columns = self._column[np.array([k for k, _, _ in categorical], dtype=np.intp)]
        h = self._history
        for start in range(0, m, h.capacity):  # pieces the history can hold at once
            stop = min(m, start + h.capacity)
            self._make_room(stop - start)
            h.push_many((numeric_columns, block[start:stop]), (categorical_columns, categories[start:stop]),
                        present[start:stop], None, class_index[start:stop], chunk_weight[start:stop])  # fmt: skip
            self._stored += stop - start
        self._rebuild_due()
        # Encode the rows still held with the current level 2.
        if self._stale:
            self._compile()
        J = len(self._classes)
        kept = min(m, len(h))
        slots = _as_slice(h.recent(kept))
        if isinstance(slots, slice):  # the rows are consecutive in the ring: encode in place
            log_lik = h.log_lik[slots, :K, :J]  # (kept, K, J) a view
            log_lik[...] = 0.0
        else:
            log_lik = np.zeros((kept, K, J))  # (kept, K, J)
        self._encode_block(ks, block[m - kept :], present[m - kept :, ks], log_lik, _as_slice(ks))
        for k, values, _ in categorical:
            variable = self._variables[k]
            parts = variable.locate_many(values[hi - kept : hi]) if variable.log_prob is not None else None
            if parts is not None:
                found = np.where(parts == NOWHERE, NOWHERE, self._offsets[k] + parts)
                found[~present[m - kept :, k]] = NOWHERE
                log_lik[:, k, :] = self._table[found]
        for i, k in enumerate(ks.tolist()):
            if self._variables[k].density:
                ll = self._variables[k].log_lik_many(block[m - kept :, i])
                ll[~present[m - kept :, k]] = 0.0
                log_lik[:, k, : ll.shape[1]] = ll
        if not isinstance(slots, slice):
            h.log_lik[slots, :K, :J] = log_lik
        self._pending += m
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
        frame = self._parse_frame(X)
        self._refresh()
        n = len(X)
        scores = np.tile(self._bias, (n, 1))  # (n, J)
        known = [(i, self._index.get(name)) for i, name in enumerate(frame.numeric_names)]
        known = [(i, k) for i, k in known if k is not None]
        if known:
            at = np.array([i for i, _ in known], dtype=np.intp)
            ks = np.array([k for _, k in known], dtype=np.intp)
            block = frame.numeric[:, at]  # (n, a)
            scores += row_sums(self._weighted, self._locate_block(ks, block))
            for i, k in enumerate(ks.tolist()):
                variable = self._variables[k]
                if variable.density:
                    ll = variable.log_lik_many(block[:, i])
                    if ll.shape[1]:
                        scores[:, : ll.shape[1]] += ll * self._coef[k, : ll.shape[1]]
        for name, values, _ in frame.categorical:
            k = self._index.get(name)
            if k is None or self._variables[k].log_prob is None:
                continue
            parts = self._variables[k].locate_many(values)
            scores += self._weighted[np.where(parts == NOWHERE, NOWHERE, self._offsets[k] + parts)]
        return scores

    def _check(self) -> None:
        """Assert the invariants of the bookkeeping (summaries fed in blocks, compiled lookups)."""
        K, J = len(self._variables), len(self._classes)
        h = self._history
        assert len(self._count) == len(self._next_rebuild) == len(self._synced) == len(self._column) == K
        assert np.all(self._synced <= self._stored) and self._synced_min == (self._synced.min() if K else 0)
        # the rows a numeric summary has not seen are all still in the history
        assert np.all(self._synced >= self._stored - len(h))
        if K:  # nothing falls due while the countdown runs
            assert self._quiet <= max(0, math.ceil(np.min(self._next_rebuild - self._count)))
        if not self._stale:
            assert self._table.shape == (len(self._row_variable) + 1, J) and not self._table[-1].any()
            assert self._cuts.shape[0] == len(self._first_row) == len(self._missing_row) == len(self._n_cuts) == K
            assert np.all(self._n_cuts < self._cuts.shape[1]) and np.all(np.isinf(self._cuts[np.arange(K), self._n_cuts]))
            assert np.all(self._first_row < len(self._table) - 1) and np.all(self._missing_row < len(self._table) - 1)
            if not self._stale_coef:
                assert self._weighted.shape == self._table.shape and not self._weighted[-1].any()
