"""The variables of a model, and the per-variable columns that drive them.

A ``Variable`` owns one feature's summary, partition and locator. What every variable has and
a row updates all at once is kept here as columns, so that one NumPy call serves all K
variables of a row (a Python loop over ``Variable`` objects would cost O(K) interpreter steps per
example):

- ``count (K,)``: observations of the variable (its rebuild schedule); ``next_rebuild (K,)``:
  the count at which its level 2 is rebuilt again;
- ``column (K,)``: its column in the history's raw numeric or categorical block;
- ``synced (K,)``: rows the history had stored when the variable's summary was last fed.

Design note (feeding numeric summaries in blocks). The history keeps every row's raw values, so a
numeric variable's summary is not updated per example: it takes the rows it has not seen with
``update_coded`` (``update_many`` on class codes, the same summary as a loop of ``update``)
when its level 2 is rebuilt (``feed``), and before the history overwrites a row it has not seen
(``make_room``). Categorical summaries are updated as the rows come (their ``update_many`` may
differ from a loop of ``update`` once they sketch), so their ``synced`` just follows.
"""

from __future__ import annotations

import numpy as np

from ..io.columns import Columns
from ..io.registry import register
from ..io.schema import Array, Fields, Schema
from .arrays import extended
from .variable import Variable

__all__ = ["Registry"]


#: The most rows since their last feed for which a rebuild's summaries take and settle them
#: together (``Registry._feed_block``). Measured on rbf streams (K = 20 and 500, CPU time): together
#: is 1.2-2.2 times as fast up to 500 rows, even at 800, and slower from 1,000 (where
#: ``GKClass.take_many`` hands a summary's values to its buffer anyway, its default size).
SETTLE_TOGETHER_ROWS = 800


class Registry:
    """Variables by index, their names, and their per-variable columns (see the module docstring)."""

    __slots__ = ("variables", "index", "column", "n_numeric", "n_categorical", "count", "next_rebuild", "synced", "synced_min")

    def __init__(self):
        self.variables: list[Variable] = []
        self.index: dict = {}  # feature name → variable index
        self.column = np.zeros(0, dtype=np.intp)  # (K,) column of each variable in the history's raw blocks
        self.n_numeric = 0
        self.n_categorical = 0
        self.count = np.zeros(0)  # (K,) observations per variable
        self.next_rebuild = np.zeros(0)  # (K,) count at which the variable is rebuilt again
        self.synced = np.zeros(0, dtype=np.int64)  # (K,) rows stored when summary k was last fed
        self.synced_min = 0  # min(synced): the oldest row a summary still needs

    def __len__(self) -> int:
        return len(self.variables)

    def add(self, name, kind: str, summary, stored: int) -> int:
        """Register feature ``name`` of ``kind`` with a fresh ``summary``; its index.

        ``stored`` is the number of rows the history has stored so far: the new summary counts as
        having seen them all (the feature was absent from them).
        """
        return int(self.add_many([(name, kind, summary)], stored)[0])

    def add_many(self, features: list, stored: int) -> np.ndarray:
        """Register the ``(name, kind, summary)`` of ``features``, in order (as ``add`` each); their
        indices. The per-variable columns are lengthened in the room their buffers keep
        (``arrays.extended``: a row of a wide sparse stream brings dozens of new features, and a
        copy of them costs O(K))."""
        start = len(self.variables)
        columns = []
        for name, kind, summary in features:
            self.index[name] = len(self.variables)
            self.variables.append(Variable(name, kind, summary))
            if kind == "numeric":
                columns.append(self.n_numeric)
                self.n_numeric += 1
            else:
                columns.append(self.n_categorical)
                self.n_categorical += 1
        n = len(self.variables)
        if n == start:
            return np.arange(start, n, dtype=np.intp)
        self.column = extended(self.column, n, 0)
        self.column[start:] = columns
        self.count = extended(self.count, n, 0.0)
        self.next_rebuild = extended(self.next_rebuild, n, 1.0)
        self.synced = extended(self.synced, n, stored)
        self.synced_min = min(self.synced_min, stored) if start else stored
        return np.arange(start, n, dtype=np.intp)

    def all_numeric(self, n_numeric_in_row: int) -> bool:
        """True when a row holding ``n_numeric_in_row`` numeric values holds every variable and
        they are all numeric (the usual numeric stream): its indices are then ``0 … K − 1``."""
        return n_numeric_in_row == self.n_numeric == len(self.variables)

    # ------------------------------------------------------------------ counts and rebuild thresholds
    def count_row(self, row) -> None:
        """Count one observation of each variable a parsed ``Row`` holds (its numeric indices and
        its categorical entries). O(entries of the row)."""
        if self.all_numeric(len(row.numeric)):
            self.count += 1
        elif len(row.numeric):
            self.count[row.numeric] += 1
        for k, _ in row.categorical:
            self.count[k] += 1

    def count_many(self, ks, n) -> None:
        """Add ``n`` (a number, or one per variable) observations to the distinct variables ``ks``. O(len(ks))."""
        self.count[ks] += n

    def rebuilt(self, ks: np.ndarray, gaps: np.ndarray) -> None:
        """The variables ``ks`` were rebuilt: each next threshold is its count plus its gap
        (``Schedule.gap`` of the count). O(len(ks))."""
        self.next_rebuild[ks] = self.count[ks] + gaps

    def rebuild_all_soon(self) -> None:
        """Every variable's rebuild falls due at its next observation (a merge). O(K)."""
        self.next_rebuild = np.ones(len(self.variables))

    def renew(self, variables: list, count: np.ndarray, synced: np.ndarray) -> None:
        """Start afresh from the window (forgetting): the same features as ``variables`` (fresh
        summaries), ``count (K,)`` their observations in the rows kept, ``synced (K,)`` the rows
        each summary counts as taken; every rebuild falls due at once. O(K)."""
        self.variables[:] = variables
        self.count = count
        self.next_rebuild = np.ones(len(variables))
        self.all_synced(synced)

    def all_synced(self, synced) -> None:
        """Every summary has taken the rows up to ``synced`` (a number, or ``(K,)`` one per
        variable). O(K)."""
        self.synced = np.broadcast_to(np.asarray(synced, dtype=np.int64), (len(self.variables),)).copy()
        self.synced_min = int(self.synced.min()) if len(self.variables) else 0

    # ------------------------------------------------------------------ numeric summaries, in blocks
    def feed(self, indices: np.ndarray, history, classes, settle: bool = False) -> None:
        """Give the numeric summaries of ``indices`` the history rows they have not seen yet.

        Variables that last took rows at the same point are fed together from one slice of the
        history (from one pass over the entries of a sparse history): ``Summary.take_rows`` per
        variable. With ``settle`` (a rebuild, which settles what it feeds), the summaries fed
        also settle, those of each type together (``Summary.take_many``, which a summary type
        may run for all of them at once: the same summaries as settling each after its feed).
        A rebuild at K = 500 feeds 500 summaries a few hundred values each; one at a time, the
        Python around each feed and each settle cost more than their compiled work.
        """
        if not len(indices):
            return
        stored = history.stored
        lagging = indices[self.synced[indices] < stored]
        numeric = np.array([self.variables[k].kind == "numeric" for k in lagging.tolist()], dtype=bool)
        self.synced[lagging[~numeric]] = stored  # categorical summaries take rows as they come
        lagging = lagging[numeric]
        if history.sparse:
            self._feed_entries(lagging, history, classes, settle)
        else:
            self._feed_block(lagging, history, classes, settle)
        self.synced_min = int(self.synced.min())

    def settled(self, history) -> bool:
        """Whether every summary has taken every row of ``history`` and has nothing pending
        (``Summary.settled``): a merge then only reads this registry (``engine.merge.absorbed``).
        O(K)."""
        return bool((self.synced >= history.stored).all()) and all(variable.summary.settled() for variable in self.variables)

    def settle_all(self, history, classes) -> None:
        """Every numeric summary takes the history's rows it has not seen (``feed``), then every
        summary settles (``Summary.settle_many``, those of each type together): nothing is left
        pending (``settled``), so a merge only reads them (``engine.merge.absorbed``). The same
        summaries as a merge's own feed and flush would leave. O(pending rows + K)."""
        self.feed(np.arange(len(self.variables)), history, classes)
        groups: dict = {}  # summary type → its summaries
        for variable in self.variables:
            groups.setdefault(type(variable.summary), []).append(variable.summary)
        for kind, members in groups.items():
            kind.settle_many(members)

    def _feed_block(self, lagging: np.ndarray, h, classes, settle: bool = False) -> None:
        """``feed`` from the dense layout: the variables that last took rows at the same point,
        together. With ``settle``, the groups of at most ``SETTLE_TOGETHER_ROWS`` rows lay out
        each variable's present values one variable after the other (oldest row first, as
        ``take_rows`` would take them), and every summary of them takes and settles through its
        type's ``take_many`` (``_take_settled``), once for all; a longer group is fed one
        summary at a time, as without ``settle`` (its summaries settle when their tables are read)."""
        stored = h.stored
        labels = (classes.labels, classes.typed())
        pieces = []  # with ``settle``: (variables, values, codes, weights, entries per variable) of each group
        for since in np.unique(self.synced[lagging]).tolist():
            group = lagging[self.synced[lagging] == since]
            rows = h.recent(stored - since)  # (m,) oldest first
            assert len(rows) == stored - since, "a summary missed a row the history dropped"
            values, present = h.numeric_block(rows, group, self.column[group])  # (m, g) each
            codes, weights = h.y[rows], h.sample_weight[rows]
            self.synced[group] = stored
            if settle and len(rows) <= SETTLE_TOGETHER_ROWS:
                used = present.T  # (g, m): variable by variable, rows oldest first
                pieces.append((group, values.T[used], np.broadcast_to(codes, used.shape)[used],
                               np.broadcast_to(weights, used.shape)[used], used.sum(axis=1)))  # fmt: skip
                continue
            counts = present.sum(axis=0).tolist()
            for i, k in enumerate(group.tolist()):
                if counts[i] == len(rows):
                    self._take(k, values[:, i], codes, weights, labels)
                else:
                    used = present[:, i]
                    self._take(k, values[used, i], codes[used], weights[used], labels)
        if pieces:
            ks = np.concatenate([piece[0] for piece in pieces])
            lengths = np.concatenate([piece[4] for piece in pieces])
            ends = np.cumsum(lengths)
            values, codes, weights = (np.concatenate([piece[i] for piece in pieces]) for i in (1, 2, 3))
            self._take_settled(ks, ends - lengths, ends, values, codes, weights, labels)

    def _feed_entries(self, lagging: np.ndarray, h, classes, settle: bool = False) -> None:
        """``feed`` from the sparse layout (``SparseHistory``): one pass over the entries of the
        rows the most lagging summary has not seen, each entry to its variable if that variable
        has not seen its row (the same rows, in the same order, as ``_feed_block``)."""
        stored = h.stored
        if not len(lagging):
            return
        m = stored - int(self.synced[lagging].min())
        assert m <= len(h), "a summary missed a row the history dropped"
        wanted = np.zeros(len(self.variables), dtype=bool)
        wanted[lagging] = True
        variable, row, value = h.numeric_entries(m, wanted)
        unseen = row >= self.synced[variable] - (stored - m)  # the row came after the summary's last feed
        variable, row, value = variable[unseen], row[unseen], value[unseen]
        order = np.argsort(variable, kind="stable")  # by variable, rows oldest first
        variable, row, value = variable[order], row[order], value[order]
        rows = h.recent(m)
        codes, weights = h.y[rows][row], h.sample_weight[rows][row]
        ks, starts = np.unique(variable, return_index=True)
        ends = np.append(starts[1:], len(variable))
        labels = (classes.labels, classes.typed())
        if settle:
            self._take_settled(ks, starts, ends, value, codes, weights, labels)
        else:
            for k, a, b in zip(ks.tolist(), starts.tolist(), ends.tolist()):
                self._take(k, value[a:b], codes[a:b], weights[a:b], labels)
        self.synced[lagging] = stored

    def _take(self, k: int, values: np.ndarray, codes: np.ndarray, weights: np.ndarray, labels: tuple) -> None:
        """Variable ``k``'s summary takes ``values`` of classes ``codes`` with ``weights``
        (``Summary.take_rows``); ``labels`` is the classes' ``(labels, typed())``."""
        self.variables[k].summary.take_rows(values, codes, labels, weights)

    def _take_settled(self, ks, starts, ends, values, codes, weights, labels: tuple) -> None:
        """Variable ``ks[i]``'s summary takes the entries ``starts[i]:ends[i]`` of ``values``,
        ``codes`` and ``weights``, then settles: the summaries of each type together, through
        that type's ``take_many``."""
        groups: dict = {}  # summary type → ([summary], [first entry], [end])
        for k, a, b in zip(ks.tolist(), starts.tolist(), ends.tolist()):
            summary = self.variables[k].summary
            group = groups.get(type(summary))
            if group is None:
                group = groups[type(summary)] = ([], [], [])
            group[0].append(summary)
            group[1].append(a)
            group[2].append(b)
        for kind, (members, firsts, lasts) in groups.items():
            kind.take_many(members, values, codes, labels, weights, firsts, lasts)

    def make_room(self, m: int, history, classes) -> None:
        """Feed the numeric summaries that have not seen rows the next ``m`` stored rows overwrite."""
        kept = history.stored + m - history.capacity  # rows before this one are overwritten
        if kept > self.synced_min:
            self.feed(np.flatnonzero(self.synced < kept), history, classes)

    def remove(self, gone: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Drop the variables ``gone`` (indices; a memory budget evicts them, ``Engine.evict``).

        The others keep their order and are numbered ``0 … K' − 1`` again, as are their raw
        columns within each kind; their columns here follow them. Returns ``new_index (K,)``,
        each variable's index after the removal (−1: dropped), and the raw numeric and
        categorical columns kept, increasing (``History.remove``). A dropped feature seen again
        is a new variable. Cost O(K).
        """
        K = len(self.variables)
        keep = np.ones(K, dtype=bool)
        keep[gone] = False
        new_index = np.full(K, -1, dtype=np.intp)
        new_index[keep] = np.arange(int(keep.sum()))
        numeric = np.array([v.kind == "numeric" for v in self.variables], dtype=bool)
        kept_columns = []
        column = self.column.copy()
        for mask in (numeric, ~numeric):
            held = keep & mask
            old = np.sort(self.column[held])  # the raw columns kept, in their order
            column[held] = np.searchsorted(old, self.column[held])
            kept_columns.append(old)
        self.variables = [v for v, held in zip(self.variables, keep.tolist()) if held]
        self.index = {v.name: k for k, v in enumerate(self.variables)}
        self.column = column[keep]
        self.n_numeric, self.n_categorical = len(kept_columns[0]), len(kept_columns[1])
        self.count, self.next_rebuild, self.synced = self.count[keep], self.next_rebuild[keep], self.synced[keep]
        self.synced_min = int(self.synced.min()) if len(self.synced) else 0
        return new_index, kept_columns[0], kept_columns[1]

    # ------------------------------------------------------------------ queries
    def prior_costs(self) -> np.ndarray:
        """``(K,)`` each variable's MODL prior cost B(X_k)."""
        return np.array([v.prior_cost for v in self.variables], dtype=float)

    def informative(self) -> np.ndarray:
        """Indices of the variables whose level 2 is not flat (``Variable.flat``): level 3's."""
        return np.array([k for k, v in enumerate(self.variables) if not v.flat], dtype=np.intp)

    def active(self) -> np.ndarray:
        """``(K,)`` bool: the variables whose level 2 found information (Level > 0)."""
        return np.array([v.level > 0 for v in self.variables], dtype=bool)

    def memory_usage(self) -> int:
        return int(sum(v.memory_usage() for v in self.variables) + 64 * len(self.index))

    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. (The feed clock against the history is a check of the whole model:
        ``_check_clock``.) O(K)."""
        K = len(self.variables)
        names = [v.name for v in self.variables]
        if len(set(names)) != K:
            return ["variables: two variables share a name"]
        for name in ("count", "next_rebuild", "synced", "column"):
            if getattr(self, name).shape != (K,):
                return [f"{name}: expected shape ({K},) (one entry per variable), got {getattr(self, name).shape}"]
        found = []
        if self.n_numeric + self.n_categorical != K:
            found.append(f"variables: {self.n_numeric} numeric and {self.n_categorical} categorical columns for {K} variables")
        if len(self.index) != K or list(map(self.index.get, names)) != list(range(K)):
            found.append("variables: the name index does not match the variables' order")
        kinds = np.array([v.kind for v in self.variables], dtype=object)
        for kind, n in (("numeric", self.n_numeric), ("categorical", self.n_categorical)):
            mask = kinds == kind
            if sorted(self.column[mask].tolist()) != list(range(n)):
                found.append(f"variables: the {kind} variables' raw columns are not 0 … {n - 1}")
        if self.synced_min != (self.synced.min() if K else 0):
            found.append("synced: its minimum is not the one kept (synced_min)")
        if not np.all(self.count >= 0):
            found.append("count: must be >= 0")
        if not np.all(self.next_rebuild >= 1):
            found.append("next_rebuild: must be >= 1")
        return found

    def _check(self) -> None:
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def _check_clock(self, stored: int, history_size: int) -> None:
        """The feed clock against the history: no summary is ahead of it, none missed a dropped row."""
        assert np.all(self.synced <= stored)
        assert np.all(self.synced >= stored - history_size)

    def record_state(self) -> dict:
        """The state fields of the record: the variables and their per-variable columns (the name
        index and the raw columns follow from the variables' order)."""
        return {"variables": self.variables, "count": self.count, "next_rebuild": self.next_rebuild, "synced": self.synced}

    @classmethod
    def from_record(cls, fields: Fields) -> Registry:
        """The registry a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        state = fields.state
        registry = cls()
        variables = registry.variables = list(state["variables"])
        registry.index = {v.name: k for k, v in enumerate(variables)}
        numeric = np.array([v.kind == "numeric" for v in variables], dtype=bool)
        registry.n_numeric = int(numeric.sum())
        registry.n_categorical = len(variables) - registry.n_numeric
        registry.column = np.empty(len(variables), dtype=np.intp)  # each kind's variables take its raw columns in order
        registry.column[numeric] = np.arange(registry.n_numeric)
        registry.column[~numeric] = np.arange(registry.n_categorical)
        registry.count = state["count"]
        registry.next_rebuild = state["next_rebuild"]
        registry.synced = state["synced"]
        registry.synced_min = int(registry.synced.min()) if len(registry.synced) else 0
        return registry


register(
    "Registry",
    Registry,
    Schema(
        state={
            "variables": Columns("Variable", length="n_variables", doc="the variables, in index order, as columns (since version 9)"),
            "count": Array("float64", ("n_variables",), low=0.0, doc="observations of each variable"),
            "next_rebuild": Array("float64", ("n_variables",), low=1.0, doc="count at which each is rebuilt again"),
            "synced": Array("int64", ("n_variables",), low=0, doc="rows stored when each summary was last fed"),
        },
        doc="The variables and their per-variable columns (history columns follow from the order)",
    ),
    state=Registry.record_state,
    build=Registry.from_record,
)
