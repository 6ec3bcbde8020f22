"""``Delta``: what one partition's learner collects between two rounds of training across machines.

A round (``docs/algorithms/merge.md#rounds``) trains one model on many partitions of a stream:
each partition's learner counts its examples into a ``Delta`` (class counts, each feature's
level-1 summary, and the raw rows of its most recent examples, at most ``history_size`` of
them), with no level-2 or level-3 work; a coordinator then folds every partition's delta into the
model (``WeightedNaiveBayes.absorb``), rebuilds level 2 once, re-optimises the weights on the
merged window and publishes a ``Predictor``. A delta is therefore cheap to learn into (the
learner's cost is level 1's) and small to ship (summaries and at most N raw rows).
"""

from __future__ import annotations

import pickle

from .._checks import integer
from ..engine import merge
from ..summaries.policy import excerpt as _excerpt
from ..summaries.policy import feature_value

__all__ = ["Delta"]


def _hashable(name) -> bool:
    try:
        hash(name)
    except Exception:  # noqa: BLE001 - a name whose hash fails: learn_one names it
        return False
    return True


class Delta:
    """One partition's examples since the last round, at level 1 (``WeightedNaiveBayes.delta()``).

    ``learn_one`` and ``learn_many`` validate their input as the model does (a ``ValueError``
    names the feature, ``y`` or ``w``, and nothing changes).

    ``kinds`` maps each feature of the model the delta was made from to its kind ("numeric" or
    "categorical"): a delta starts empty, so its first value of a feature would otherwise fix a
    kind the model contradicts, and every later round would fail to absorb it.
    ``check_kinds(x)`` reads a row against them (a ``partitioned.Learner`` calls it before
    learning); ``fresh()`` carries them on, with the kinds this delta has learned.

    Examples
    --------
    >>> from river import datasets
    >>> from wnb_stream import WeightedNaiveBayes
    >>> model = WeightedNaiveBayes(seed=1)
    >>> rows = list(datasets.Phishing())
    >>> deltas = [model.delta(), model.delta()]
    >>> for i, (x, y) in enumerate(rows[:600]):
    ...     deltas[i % 2].learn_one(x, y)
    >>> [delta.n_seen for delta in deltas]
    [300, 300]
    >>> model.absorb(deltas)
    >>> model.n_seen, round(model.predict_proba_one(rows[700][0])[True], 3)
    (600, 0.996)
    """

    def __init__(self, engine, kinds: dict | None = None, blocks: tuple[int, ...] | None = None):
        if not engine.collect:
            raise ValueError("a Delta holds an engine that collects level 1 only (Engine(collect=True))")
        self._engine = engine
        self.kinds = {} if kinds is None else kinds
        #: None, or (a merged delta) the rows of each delta merged in, one block after another
        self.blocks = blocks

    def merge(self, other: Delta, in_place: bool = False) -> None:
        """Take in ``other``'s examples (``other`` is unchanged): one delta that a model absorbs
        as it would absorb both, in this order (``model.absorb([a, b])``), so that the deltas
        of many partitions can be merged in a tree, in parallel, and the coordinator absorbs one.

        Counts and the raw rows are those of both, exactly: the rows stay in blocks, one per
        delta merged in, so that absorbing shares the window among the original deltas and
        interleaves them as it would unmerged. What may differ from absorbing one by one is
        the summaries' grouping: a model absorbs ``(a + b) + c`` rather than ``((m + a) + b) + c``,
        which is the same for categorical counts, the same up to float rounding for Gaussian
        moments, and within each sketch's bound for GK and CPiD
        (``docs/algorithms/merge.md#rounds``). A merged delta learns nothing more and cannot be
        trimmed. ``ValueError`` for a delta of other summaries, or naming a feature of the other
        kind; nothing changes then. Cost: a copy of this delta (and of ``other`` unless it is
        settled, ``flush``), one summary merge per shared feature, O(rows × K) for the rows.

        ``in_place``: this delta's own parts are changed instead of a copy of them, the same
        result without the copy (15–20 ms of a 45–55 ms merge at K = 1,000, 50 rows a delta), for a caller that
        holds the only reference to this delta and whose arrays are writable (one unpickled by a
        pool worker, ``partitioned.merge_reports(take=True)``; not one Ray hands over read-only).
        A ``copy.copy`` of this delta then shares the change. The checks still come first.
        """
        if not isinstance(other, Delta):
            raise TypeError(f"can only merge a Delta, got {type(other).__name__}")
        mine, theirs = self._engine.params, other._engine.params
        for name in ("numeric", "categorical"):
            a, b = getattr(mine, name), getattr(theirs, name)
            if (type(a), a._get_params()) != (type(b), b._get_params()):
                raise ValueError(f"cannot merge a delta with another {name} summary: {b!r} != {a!r}")
        for name in ("absent", "history_size"):
            if getattr(mine, name) != getattr(theirs, name):
                raise ValueError(f"cannot merge a delta with another {name}: {getattr(theirs, name)!r} != {getattr(mine, name)!r}")
        engine, blocks = merge.combined([self._engine, other._engine], [self.blocks, other.blocks], in_place=in_place)
        self._engine, self.blocks = engine, blocks
        self.kinds = {**self.kinds, **other.kinds}

    def feature_kinds(self) -> dict:
        """``{feature: kind}`` of the features this delta has learned. O(K)."""
        return {variable.name: variable.kind for variable in self._engine.registry.variables}

    def check_kinds(self, x: dict) -> dict:
        """``x`` read against the model's ``kinds``: ``ValueError`` naming the first feature whose
        value is of the other kind (what the model would do with ``on_type_change="raise"``); with
        ``"missing"``, a copy of ``x`` in which such values are None (missing, as the model would
        count them). Other problems are left to ``learn_one``. O(features of x)."""
        kinds = self.kinds
        if not kinds:
            return x
        missing = self._engine.parser.on_type_change == "missing"
        out = x
        for name, value in x.items():
            known = kinds.get(name) if _hashable(name) else None
            if known is None:
                continue
            try:
                kind, _ = feature_value(value)
            except ValueError:
                continue  # (learn_one names the problem)
            if kind is not None and kind != known:
                if not missing:
                    shown = repr(value[:80]) if isinstance(value, str) else _excerpt(value)[:80]
                    raise ValueError(f"feature {name!r} is {known} in the model, got a {kind} value {shown}")
                if out is x:
                    out = dict(x)
                out[name] = None
        return out

    @property
    def n_seen(self) -> int:
        """Examples learned."""
        return self._engine.n_seen

    @property
    def n_rows(self) -> int:
        """Raw rows held (the newest examples, at most ``history_size``; all of a merged
        delta's), the rows it brings to the model's window."""
        return len(self._engine.history)

    def learn_one(self, x: dict, y, w: float = 1.0) -> None:
        """Count one example (level 1 and the history). O(K)."""
        self._learning()
        self._engine.learn_dict(x, y, w)

    def learn_many(self, X, y, w=None) -> None:
        """Count a batch (any dataframe ``WeightedNaiveBayes.learn_many`` takes), in bulk."""
        self._learning()
        self._engine.learn_table(X, y, w)

    def _learning(self) -> None:
        if self.blocks is not None:  # (its rows are blocks of exactly its deltas' rows)
            raise ValueError("a merged delta learns nothing more: learn into a fresh() one")

    def flush(self) -> None:
        """Give the numeric summaries the rows they have not taken yet (they take rows from the
        history lazily, ``engine/registry.py``), and settle every summary (a sketch's pending
        buffer taken in). ``absorb`` and ``merge`` would do it; a learner calls it before handing
        the delta over so that this work is done where the delta was learned, and a round then
        only reads the delta's summaries (``engine.merge.absorbed``)."""
        e = self._engine
        e.registry.settle_all(e.history, e.classes)

    def trim(self, rows: int) -> None:
        """Keep only the ``rows`` most recent raw rows (after ``flush``, so that no summary loses
        a row). A round's window shares ``history_size`` rows among the partitions' deltas, so a
        learner of one of P partitions ships at most ⌈N / P⌉ rows (``partitioned.Learner``)."""
        rows = int(integer(rows, "rows", low=0))
        if self.blocks is not None:
            raise ValueError("a merged delta cannot be trimmed: trim each delta before merging")
        self.flush()
        self._engine.history.keep_recent(rows)

    def fresh(self) -> Delta:
        """An empty delta with the same parameters (the next round's), knowing the kinds of this
        one's features too (they go to the model with this delta)."""
        return Delta(self._engine.blank(collect=True), {**self.kinds, **self.feature_kinds()})

    def memory_usage(self) -> int:
        """Bytes held by its summaries and raw rows."""
        return self._engine.memory_usage()

    def nbytes(self) -> int:
        """Bytes of the delta as shipped between processes (its pickle)."""
        # Measured by pickle because pickle is how it travels: Ray serialises the learners'
        # reports with (cloud)pickle between processes of one cluster, whose code and data are
        # the user's own. Nothing is saved to a file this way; files are io records.
        return len(pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))

    def __repr__(self) -> str:
        return f"Delta({self.n_seen} examples, {len(self._engine.registry)} features)"
