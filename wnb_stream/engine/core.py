"""The engine: one example's (or one chunk's) way through the parts, in the order that makes the
model what it is.

For a row: count its class, create the variables of its new features, count the variables it
holds, update its categorical summaries, store its raw values in the history (the numeric
summaries take them from there, see ``registry.py``), rebuild level 2 where the schedule says,
encode the row with the current level 2, check for a change of concept every ``drift.EVERY`` rows
(and forget what came before one), and step the learner when its batch is full. A chunk of
a mini-batch goes through the same steps in bulk; the schedule cuts chunks so that only a
chunk's last row can register a class, rebuild, check for a change or step (``schedule.py``).
The parts each own their state: ``Classes``, ``Registry`` (the variables), ``History``,
``Lookup``, ``Schedule``, ``Monitor``, ``Slots`` (the variables in level 3), the learner; the
engine owns none beyond them.

Level 3 sees only the variables with a slot (``slots.py``): the learner's variable axis and the
history's encoded columns are the slots', and the engine maps them to and from the variables
(``coefficients``, ``context``).
"""

from __future__ import annotations

import math

import numpy as np
from river.base import Base as RiverBase

from ..summaries.policy import check_total_weight, fast_weight
from ..tables import Batch, Context
from . import frames
from ._locate import place_rows
from .classes import Classes
from .drift import EVERY, Monitor
from .history import History, SparseHistory
from .lookup import Lookup
from .params import Params
from .registry import Registry
from .rows import Frame, Row, RowParser, check_label, check_sample_weights, feature_order
from .rows import labels as label_codes
from .schedule import Schedule
from .slots import Slots
from .variable import NOWHERE, Variable

__all__ = ["Engine"]

#: Weighted rows a refit needs before the rise (``Engine._refit``): as a learner's first search.
FIRST_REFIT = 32

#: Older rows of a class that give its error rate when a rise is checked within the classes
#: (``Engine._rose_within_classes``).
MIN_STRATUM = 32

#: Fewest rows a memory budget leaves in the history window (``Engine.keep_budget``).
MIN_WINDOW = 32

#: Cells (rows × variables × classes) of the temporaries of one re-encoding piece.
REENCODE_CELLS = 1 << 20

#: Parameter types that ``copy.deepcopy`` returns as they are (``clones``).
ATOMS = (type(None), bool, int, float, str)


def clones(prototype, n: int) -> list:
    """``[prototype.clone() for _ in range(n)]``, the summaries of ``n`` new variables.

    River's ``clone`` reads the parameters through ``inspect.signature`` at every call, which is
    most of its cost (some 60 µs a summary, 15 times the constructor's): a row of a wide sparse
    stream brings dozens of new features. Here the parameters are read once, and when they
    are all atoms (None, bools, numbers, strings: what ``clone``'s ``copy.deepcopy`` returns as
    they are) the class is called with them, as ``clone`` would; any other parameter, or a class
    with its own ``clone``, takes ``clone`` itself.
    """
    if n < 2 or type(prototype).clone is not RiverBase.clone:
        return [prototype.clone() for _ in range(n)]
    params = prototype._get_params()
    if "_POSITIONAL_ARGS" in params or not all(type(value) in ATOMS for value in params.values()):
        return [prototype.clone() for _ in range(n)]
    return [prototype.clone()] + [prototype.__class__(**params) for _ in range(n - 1)]


def as_slice(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice when it is a run of consecutive increasing integers (a view, not a gather)."""
    if len(index) and index[-1] - index[0] == len(index) - 1 and (len(index) < 3 or np.all(np.diff(index) == 1)):
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


class Engine:
    """The parts of one model and the order in which a row goes through them.

    Parameters
    ----------
    params
        The settings (``Params``, checked by the classifier).
    collect
        Level 1 only (the delta of a training round, ``docs/algorithms/merge.md#rounds``): rows
        are counted, summarised and stored raw in the history; nothing is rebuilt, encoded,
        checked for a change or learned at level 3. ``merge.absorbed`` takes such engines.

    An engine of given parts (a loaded model's, a merge's) is built by ``from_parts``.
    """

    _evicted = False  # a check point evicted variables since ``learn_frame`` last looked

    def __init__(self, params: Params, collect: bool = False):
        # a stream whose absent features hold a value is sparse: its rows are kept as entries
        history = (History if params.absent is None else SparseHistory)(params.history_size, encoded=not collect)
        monitor = Monitor(params.drift_delta) if params.drift_delta is not None else None
        schedule = Schedule(params.rebuild_growth, params.rebuild_every)
        self._assemble(params, Classes(), Registry(), history, schedule, params.learner(), Slots(), monitor, collect)

    @classmethod
    def from_parts(cls, params: Params, classes: Classes, registry: Registry, history: History, schedule: Schedule,
                   learner, slots: Slots, monitor: Monitor | None) -> Engine:  # fmt: skip
        """The engine of these parts (a loaded model's, a merge's), taken over as they are: the
        learner is sized for the slots and the classes, the clock ``n_seen`` is the history's;
        the compiled lookups start empty (compiled at the next use). The encoded window is
        not written: a loaded model encodes it again (``reencode_all``), a merge restarts
        levels 2 and 3 (``restart``)."""
        engine = cls.__new__(cls)
        engine._assemble(params, classes, registry, history, schedule, learner, slots, monitor, collect=False)
        engine.shape = (len(slots), len(classes))
        engine.n_seen = history.stored
        return engine

    def _assemble(self, params, classes, registry, history, schedule, learner, slots, monitor, collect) -> None:
        self.params = params
        self.collect = collect
        self.classes = classes
        self.registry = registry
        self.history = history
        self.schedule = schedule
        self.optimizer = learner
        self.slots = slots
        self.monitor = monitor
        self.parser = RowParser(registry, params.on_type_change, params.absent)
        self.lookup = Lookup(params.absent)
        # exponential forgetting: the weight of the past times this factor at every check point
        self.fading = None if params.half_life is None else 0.5 ** (EVERY / params.half_life)
        self.shape = (0, 0)  # (A, J) the learner is sized for (slots, classes)
        self.n_seen = 0
        self._context: Context | None = None  # the variables' prior costs and activity (a cache)

    def blank(self, collect: bool = False) -> Engine:
        """An empty engine with this one's parameters (``collect``: level 1 only, a round's delta)."""
        return Engine(self.params, collect=collect)

    # ------------------------------------------------------------------ validated input
    def learn_dict(self, x: dict, y, w: float) -> None:
        """Validate one example (a ``ValueError`` names what is wrong; nothing changes), then learn it."""
        y = check_label(y)
        w = fast_weight(w)  # (``check_weight``, a valid Python float at once)
        check_total_weight(self.classes.counts, w)
        row = self.parser.row(x, learn=True)  # validated: from here on the model changes
        self.learn_row(row, y, w)

    def learn_table(self, X, y, w=None) -> None:
        """Validate a batch (any dataframe ``frames.as_pandas`` reads; nothing is learned if a row
        is unusable), then learn it."""
        X, absent = frames.read(X)
        labels, codes, uniques = label_codes(y)
        if len(labels) != len(X):
            raise ValueError(f"y must have one label per row of X ({len(X)}), got {len(labels)}")
        sample_weight = check_sample_weights(w, len(X))
        check_total_weight(self.classes.counts, float(sample_weight.sum()))
        frame = self.parser.frame(X, learn=True, absent=absent)  # validated: from here on the model changes
        if len(X):
            self.learn_frame(frame, labels, codes, uniques, sample_weight)

    @property
    def target_batch(self) -> int:
        batch_size = self.params.batch_size
        return batch_size if batch_size is not None else int(self.optimizer.batch_size)

    # ------------------------------------------------------------------ one row
    def learn_row(self, row: Row, y, w: float) -> None:
        """Learn one parsed row of class ``y`` (a checked label) with sample weight ``w``."""
        registry, schedule = self.registry, self.schedule
        j = self.classes.index.encode(y)
        self._grow_classes()
        self.classes.count_one(j, w)
        self.n_seen += 1
        schedule.tick()
        self.lookup.prior_changed()
        if row.new:
            row = self._register(row)
        registry.count_row(row)
        for k, value in row.categorical:
            registry.variables[k].summary.update(value, y, w)
        self._store(row, j, w)  # numeric summaries take the row from the history later
        self._settle(1, self._encode_newest, row)

    def _settle(self, m: int, encode, *args) -> None:
        """The tail of a row and of a chunk (``m`` rows, stored raw): rebuild level 2 where it
        falls due, encode the new rows with the level 2 of now (``encode(*args)``: one row or a
        chunk), count them for the learner, check for a change every ``EVERY`` rows, and step
        the learner when its batch is full. Nothing with ``collect`` (level 1 only)."""
        if self.collect:
            return
        self._rebuild_due()
        encode(*args)
        self.schedule.queue(m)
        if self.n_seen % EVERY == 0:
            self._check_point()
        self._maybe_step()

    def _grow_classes(self) -> None:
        if self.classes.grow():
            self.schedule.rebuild_all_soon()  # a new class rebuilds every variable
            self.lookup.invalidate()  # (the lookups gain its column, even if no rebuild writes one)

    def _register(self, row: Row) -> Row:
        """Create the variables of the row's new features (in a deterministic order); the full row."""
        numeric, values, categorical = [], [], list(row.categorical)
        new = sorted(row.new, key=lambda item: feature_order(item[0]))
        for (name, kind, value), k in zip(new, self._add_variables([(name, kind) for name, kind, _ in new]).tolist()):
            if kind == "numeric":
                numeric.append(k)
                values.append(value)
            else:
                categorical.append((k, value))
        return Row(
            np.concatenate([row.numeric, np.array(numeric, dtype=np.intp)]),
            np.concatenate([row.values, np.array(values, dtype=float)]),
            categorical,
            [],
            row.missing,  # new features hold values
        )

    def _add_variables(self, features: list) -> np.ndarray:
        """Create the variables of the ``(name, kind)`` of ``features``, in order; their indices."""
        summaries = self._fresh_summaries([kind for _, kind in features])
        ks = self.registry.add_many([(name, kind, summary) for (name, kind), summary in zip(features, summaries)], self.history.stored)
        self.schedule.rebuild_all_soon()  # their first rebuild falls due at once
        self.lookup.mark(ks.tolist())
        self._context = None
        return ks

    def _fresh_summaries(self, kinds: list) -> list:
        """A fresh summary (a clone of the prototype of its kind) for each of ``kinds``, in order."""
        prototypes = {"numeric": self.params.numeric, "categorical": self.params.categorical}
        fresh = {kind: iter(clones(prototypes[kind], kinds.count(kind))) for kind in set(kinds)}
        return [next(fresh[kind]) for kind in kinds]

    def _resize(self) -> None:
        """Grow the history and the learner to the current numbers of variables, slots and classes."""
        K, J = len(self.registry), len(self.classes)
        shape, h = (len(self.slots), J), self.history
        if shape == self.shape and (K, *shape) == (h.n_variables, h.n_encoded, h.n_classes):
            return
        self.slots.grow(K)
        self.history.resize(K, J, self.registry.n_numeric, self.registry.n_categorical, n_encoded=shape[0])
        if shape != self.shape:
            # new slots: a variable entering level 3 enters the learner as a new variable does (at
            # the learner's initial weight, in the weights it predicts with too), from this row on
            self.optimizer.resize(*shape)
            self.shape = shape
        self.lookup.coefficients_changed()

    def _store(self, row: Row, j: int, w: float) -> None:
        """Append the row's raw values to the history (its encoding follows the rebuilds)."""
        self._resize()
        self.registry.make_room(1, self.history, self.classes)
        if self.registry.all_numeric(len(row.numeric)):
            every = slice(0, len(row.numeric))
            self.history.push((every, row.values), ([], []), every, None, j, w)
        else:
            present, categorical = row.numeric, ([], [])
            if row.categorical:
                ks = np.array([k for k, _ in row.categorical], dtype=np.intp)
                present = np.concatenate([present, ks])
                categorical = (self.registry.column[ks], [value for _, value in row.categorical])
            self.history.push((self.registry.column[row.numeric], row.values), categorical, present, None, j, w)

    def _encode_newest(self, row: Row) -> None:
        """Write the encoding ℓ_kj of the most recent history row with the current level 2."""
        lookup, h = self.lookup, self.history
        if lookup.stale:
            self._compile()
        i = h.newest()
        variables, slots = self.registry.variables, self.slots
        if not len(slots):
            return
        ks, rows = lookup.locate(row, variables)
        J = len(self.classes)
        if lookup.defaults is not None:  # the row's absent numeric features hold the default value
            h.log_lik[i, : len(slots), :J] = lookup.defaults[slots.variable]
        place_rows(lookup.table, rows, ks, slots.of, h.log_lik[i])  # the row's variables in level 3; NOWHERE: the zero row
        for k, value in lookup.density_values(row):
            ll = variables[k].log_lik_one(value)
            if ll is not None and slots.of[k] >= 0:
                h.log_lik[i, slots.of[k], : len(ll)] = ll

    # ------------------------------------------------------------------ level 2
    def _compile(self) -> None:
        self._resize()
        self.lookup.recompile(self.registry.variables, len(self.classes))

    def _rebuild_due(self) -> None:
        """Rebuild level 2 of the variables the schedule finds due (every one when a class is)."""
        schedule, registry, classes = self.schedule, self.registry, self.classes
        due = schedule.rebuilds_due(registry, classes)
        if due is None:  # the countdown runs
            return
        indices, every = due
        if every or len(indices):
            self._rebuild(indices)
        if every:
            classes.rebuilt(schedule.class_gap(classes.seen))
        schedule.count_down(registry, classes)

    def _rebuild(self, indices: np.ndarray) -> None:
        """Rebuild level 2 of the given variables, then re-encode their history columns."""
        self._resize()
        registry = self.registry
        registry.feed(indices, self.history, self.classes, settle=True)  # (a rebuild reads what it feeds)
        classes = self.classes.index.classes
        selection_cost = math.log(max(1, len(registry)))
        absent = self.params.absent
        default = None if absent is None else (absent, self.classes.counts)
        variables = registry.variables
        rebuilt = [k for k in indices.tolist() if variables[k].summary.holds_weight()]  # (an empty summary is skipped)
        held = np.array(rebuilt, dtype=np.intp)
        # A variable out of level 3 whose rebuild is proven to give the null model again keeps it.
        free = self.slots.of[held] < 0
        same = np.zeros(len(held), dtype=bool)
        same[free] = Variable.null_proven([variables[k] for k in held[free].tolist()], len(classes), selection_cost, default)
        changed = np.setdiff1d(indices, held[same], assume_unique=True) if same.any() else indices
        held = held[~same]
        # all at once: the numeric binned variables are discretized together (``Variable.rebuild_many``)
        Variable.rebuild_many([variables[k] for k in held.tolist()], classes, selection_cost, default=default)
        rebuilt = np.array(rebuilt, dtype=np.intp)
        registry.rebuilt(rebuilt, self.schedule.gap(registry.count[rebuilt]))
        if len(changed):
            self.lookup.mark(changed.tolist())
        self._context = None
        self._enter([k for k in held[self.slots.of[held] < 0].tolist() if not variables[k].flat])  # (the others have one)
        self._reencode_columns(held[self.slots.of[held] >= 0].tolist())

    def _enter(self, ks: list) -> None:
        """Give level-3 slots to the variables ``ks`` (their level 2 is not flat) that have none."""
        if ks and self.slots.enter(np.array(ks, dtype=np.intp), len(self.registry)):
            self._resize()
            self._context = None

    def _reencode_columns(self, ks: list) -> None:
        """Encode the history columns of the variables ``ks`` (all with slots) with their level 2."""
        if not ks or not self.history.size:
            return
        variables = self.registry.variables
        binned = [k for k in ks if variables[k].kind == "numeric" and not variables[k].density]
        for k in ks:
            if variables[k].kind != "numeric" or variables[k].density:
                self._reencode(k)
        if binned:
            self._reencode_numeric(np.array(binned, dtype=np.intp))

    def _reencode_numeric(self, ks: np.ndarray) -> None:
        """Re-encode the history columns of the numeric binned variables ``ks`` with the compiled lookups.

        The same values as ``History.reencode`` with ``Variable.log_lik_many`` per variable (the
        compiled table rows are the partitions' ``log_prob`` rows, the locator is tested equal to
        ``part_index``), in one pass over the history block instead of one per variable.
        """
        self._compile()
        h = self.history
        J = len(self.classes)
        columns = self.registry.column[ks]
        # consecutive variables, slots and columns (every variable rebuilt at once): slices, not gathers
        held, at, columns = as_slice(ks), as_slice(self.slots.of[ks]), as_slice(columns)
        piece = max(1, REENCODE_CELLS // max(1, len(ks) * J))  # rows per piece: bounded temporaries
        defaults = None if self.lookup.defaults is None else self.lookup.defaults[ks]  # (a, J)
        for start in range(0, h.size, piece):
            stop = min(h.size, start + piece)
            values, present = h.numeric_block(slice(start, stop), held, columns)
            self.lookup.encode_block(ks, values, present, h.log_lik[start:stop], at)
            h.log_lik[start:stop, at, J:] = 0.0  # (no class beyond J)
            if defaults is not None:  # absent cells hold the default value
                h.log_lik[start:stop, at, :J] = np.where(present[..., None], h.log_lik[start:stop, at, :J], defaults)

    def reencode_all(self) -> None:
        """Encode every row of the history with the current level 2 of every variable.

        The encoded block is a function of the raw rows and the current partitions: rows are
        encoded on arrival with the level 2 of the moment, and a variable's column is re-encoded
        whenever its level 2 is rebuilt. So this reproduces it exactly (tested bit for bit), and a
        loaded model rebuilds it here instead of storing it.
        """
        self._resize()
        self.history.clear_encoding()
        self._reencode_columns(self.slots.variable.tolist())

    def _reencode(self, k: int) -> None:
        variable, h = self.registry.variables[k], self.history
        numeric = variable.kind == "numeric"
        default = None
        if self.params.absent is not None and numeric:  # absent cells hold the default value
            ll = variable.log_lik_one(float(self.params.absent))
            default = np.zeros(len(self.classes))
            if ll is not None:
                default[: len(ll)] = ll
        values, present = h.column(h.filled(), k, int(self.registry.column[k]), numeric)
        encoded = variable.log_lik_many(values[present]) if present.any() else None
        h.reencode(int(self.slots.of[k]), present, encoded, default)

    # ------------------------------------------------------------------ level 3
    def _maybe_step(self) -> None:
        target = self.target_batch
        m = self.schedule.step_due(target)
        if m:
            self._step(m)
            h = self.history
            self.schedule.stepped(target, h.size, full=h.size >= h.capacity)

    def context(self) -> Context:
        """The slots' variables' prior costs and activity, cached until the next rebuild or slot."""
        if self._context is None or len(self._context.active) != len(self.slots) or self._context.n_variables != len(self.registry):
            variables, ks = self.registry.variables, self.slots.variable.tolist()
            self._context = Context(
                prior_costs=np.array([variables[k].prior_cost for k in ks], dtype=float),
                active=np.array([variables[k].level > 0 for k in ks], dtype=bool),
                n_variables=len(variables),
            )
        return self._context

    def _step(self, m: int) -> None:
        """One learner step on the ``m`` most recent rows, judged on the whole history."""
        h = self.history
        A, J = len(self.slots), len(self.classes)
        h.fit_encoding(A, J)  # the window below: one contiguous block
        log_prior = self.classes.log_prior()
        log_prior.flags.writeable = False
        rows = as_slice(h.recent(m))  # consecutive in the ring (the usual case): a view, not a copy
        batch = Batch(*h.window(rows, A, J), log_prior)
        window = Batch(*h.window(h.filled(), A, J), log_prior)
        self.optimizer.learn(batch, window, self.context())
        self.lookup.coefficients_changed()

    # ------------------------------------------------------------------ change detection, forgetting
    def _check_point(self) -> None:
        """Every ``EVERY`` rows: fade the past (``half_life``), watch for a change, then keep the
        memory budget."""
        if self.fading is not None:
            self.fade(self.fading)
        if self.monitor is not None:
            self._watch()
        if self.params.memory_budget is not None:
            self.keep_budget(self.params.memory_budget)

    def keep_budget(self, budget: int) -> None:
        """Bring ``memory_usage()`` within ``budget`` bytes: first cut the history window, then,
        with the window at its floor, evict variables outside level 3
        (``docs/algorithms/prediction.md#memory-budget``).

        What the budget cannot bound is left as it is: the variables in level 3 (their summaries,
        level 2 and lookups), what every class holds, and ``MIN_WINDOW`` rows of the window.
        """
        total = self._cut_window(budget)
        if self.history.capacity <= MIN_WINDOW and total > budget:
            self._evict_to(budget, total - self.history.memory_usage() - self.lookup.memory_usage())

    def _cut_window(self, budget: int) -> int:
        """Cut the history window to the most recent rows that bring ``memory_usage()`` within
        ``budget`` bytes (at least ``MIN_WINDOW`` rows; it never grows back). The numeric
        summaries take the rows that go first (as before the ring overwrites a row). Returns
        ``memory_usage()`` after the cut."""
        h, registry = self.history, self.registry
        while True:
            total = self.memory_usage()
            if total <= budget or h.capacity <= MIN_WINDOW:
                return total
            window = h.memory_usage()
            rows = int((budget - (total - window)) // (window / h.capacity))
            rows = max(MIN_WINDOW, min(rows, h.capacity - 1))
            dropped = h.stored - min(h.size, rows)  # rows stored before this one leave the window
            if dropped <= registry.synced_min:
                break
            # the summaries take those rows first; they grow, so measure again
            registry.feed(np.flatnonzero(registry.synced < dropped), h, self.classes)
        h.shrink(rows)
        return total - window + h.memory_usage()

    def _evict_to(self, budget: int, held: int) -> None:
        """Evict the least useful variables outside level 3 (``eviction_order``) until
        ``memory_usage()`` is within ``budget``, or none is left to evict; ``held`` is the
        registry's ``memory_usage()`` (the variables' bytes, an O(K) walk made once).

        Each pass evicts the first variables of the order whose estimated bytes (their own, their
        raw column in the window, their lookup rows) cover the excess, then measures the window
        and the lookups again (the estimates leave out the containers' headroom, which the
        removal frees too); the registry's bytes go down by exactly the evicted variables'.
        Cost O(K + window) per pass, a few passes per check point that finds the model over its
        budget with its window at the floor.
        """
        h, lookup = self.history, self.lookup
        self.evict(np.zeros(0, dtype=np.intp))  # the window's raw blocks without headroom first
        for _ in range(8):
            excess = held + h.memory_usage() + lookup.memory_usage() - budget
            if excess <= 0:
                return
            order = self.eviction_order()
            if not len(order):
                return  # what is left is what the budget cannot bound
            variables = self.registry.variables
            freed, own, n = 0, 0, 0
            for k in order.tolist():
                size = variables[k].memory_usage() + 64  # (``Registry.memory_usage``'s share)
                own += size
                freed += size + h.column_bytes(variables[k].kind == "numeric") + lookup.variable_bytes(k)
                n += 1
                if freed >= excess:
                    break
            self.evict(order[:n])
            held -= own

    def eviction_order(self) -> np.ndarray:
        """The variables a memory budget may evict, the least useful first: ``(m,)`` indices.

        Only variables without a level-3 slot are candidates: their level 2 is flat (one part,
        or not built yet), so they add ℓ = 0 to every score and evicting them changes no
        prediction; what is lost is the evidence their summaries gathered. Among them, those
        absent from the rows of the window go first (not seen lately), then the fewest
        observations (``Registry.count``: the least evidence, the least likely to become
        informative), then the oldest (a variable that has had longer to show something).
        """
        registry, h = self.registry, self.history
        K = len(registry)
        self.slots.grow(K)
        free = np.flatnonzero(self.slots.of[:K] < 0)
        if not len(free):
            return free
        seen = h.counts(h.filled(), K)[free] > 0
        return free[np.lexsort((free, registry.count[free], seen))]

    def evict(self, gone: np.ndarray) -> None:
        """Remove the variables ``gone`` (none with a level-3 slot) from every part: the registry
        and its columns, the window's raw columns, the slots' numbering, the compiled lookups
        (compiled again, for the variables left). An evicted feature seen again is a new
        variable, with a fresh summary. With ``gone`` empty, the window's raw blocks lose their
        headroom. Cost O(K + capacity · columns) and a full compilation of the lookups."""
        registry = self.registry
        self._resize()
        new_index, numeric_columns, categorical_columns = registry.remove(gone)
        self.history.remove(new_index, numeric_columns, categorical_columns)
        self.slots.remove(new_index)
        if len(gone):
            self._evicted = True  # (``learn_frame`` re-enters the batch's evicted columns)
            self.parser.forget_plan()  # (a cache of variable indices)
            self._context = None
            self.lookup.invalidate()
            self.refresh()  # compiled for the variables left, so that their memory is measured

    def fade(self, factor: float) -> None:
        """Multiply the weight of everything learned so far by ``factor`` (0 < factor ≤ 1).

        Every summary decays (``Summary.decay``), so do the class counts and the sample weights of
        the history's rows: a row a numeric summary has not taken yet enters it with its faded
        weight, and the learners judge older rows with less weight. All share the stream's
        clock, so the model is the one built on the stream with the weight of each example
        times ``factor`` per check point since it came (forward decay).
        """
        for variable in self.registry.variables:
            variable.summary.decay(factor)
        self.classes.fade(factor)
        self.history.fade(factor)
        self.lookup.prior_changed()

    def _watch(self) -> None:
        """A check point: the 0/1 errors of the rows since the last one go to the monitor; on a
        rise of the error, forget what came before the change.

        A row's error is that of the current model on the row's encoding in the history (level 2
        as rebuilt so far, the learner's current weights): both paths of learning meet here in
        the same state, so they detect the same changes.
        """
        h, monitor = self.history, self.monitor
        m = min(EVERY, h.size)
        if len(self.classes) < 2 or m == 0:
            return
        before = monitor.snapshot()
        errors = self._errors(m)
        since = monitor.add(errors)
        if since and self._refit(since):
            since = self._retest(before, errors, since)
        if since and not self._rose_within_classes(since):
            monitor.dismiss()  # the class mix changed, not the concept: nothing is forgotten
            since = 0
        if since:
            self.forget(since)

    def _rose_within_classes(self, since: int) -> bool:
        """Whether the error rose within a class, not only through the mix of classes: the check
        of a rise found in the ``since`` newest weighted rows against the older rows of the
        history (``docs/algorithms/drift.md#a-rise-of-the-class-mix-alone-check-within-classes``).

        Every weighted row of the history is scored by the current model. A class j with at
        least ``MIN_STRATUM`` older rows gives its older error rate p_j; its n_j newer rows would
        make n_j p_j errors if nothing changed within it, with variance
        V_j = n_j p_j (1 − p_j)(1 + n_j / n⁰_j) (n⁰_j older rows). The rise holds when one class
        makes more than n_j p_j + ε_j, ε_j = sqrt(2 V_j ln(4nJ/δ)) + 2/3 ln(4nJ/δ) (the monitor's
        Bernstein bound at δ/2, shared among the J classes; n the rows compared), or when the
        classes together make more than Σ n_j p_j + ε, ε the same bound on Σ V_j at the other
        δ/2 (a change that raises every class a little, as one that swaps which variables tell
        the classes apart: one class's rows are too few to show it). Newer rows of a class
        the older rows hardly hold cannot be compared (a sorted file's next class). A rise
        reaching back past all but ``MIN_STRATUM`` rows of the history cannot be checked and
        holds, as before this check. Cost O(history × K × J), at an alarm only.
        """
        h, J = self.history, len(self.classes)
        rows = h.recent(h.size)  # oldest first
        y = h.y[rows][h.sample_weight[rows] > 0]  # the weighted rows, as ``_errors`` scores them
        cut = len(y) - since
        if cut < MIN_STRATUM:
            return True
        errors = self._errors(h.size).astype(float)
        old_rows, new_rows = np.bincount(y[:cut], minlength=J), np.bincount(y[cut:], minlength=J)
        old_errors, new_errors = np.bincount(y[:cut], errors[:cut], J), np.bincount(y[cut:], errors[cut:], J)
        comparable = (old_rows >= MIN_STRATUM) & (new_rows > 0)
        if not comparable.any():
            return False
        n_old, n_new = old_rows[comparable].astype(float), new_rows[comparable].astype(float)
        p = old_errors[comparable] / n_old
        variance = np.maximum(n_new * p * (1.0 - p) * (1.0 + n_new / n_old), 1.0)
        excess = new_errors[comparable] - n_new * p
        # half of δ for one class at a time (shared among the J), half for all of them together
        log_class = math.log(4.0 * len(y) * J / self.monitor.delta)
        if np.any(excess > np.sqrt(2.0 * variance * log_class) + 2.0 / 3.0 * log_class):
            return True
        log_all = math.log(4.0 * len(y) / self.monitor.delta)
        return bool(excess.sum() > math.sqrt(2.0 * variance.sum() * log_all) + 2.0 / 3.0 * log_all)

    def _retest(self, before: tuple, errors: np.ndarray, since: int) -> int:
        """The test again after a refit on the rows before the rise (``_refit``): the rows since
        the rise, as the refitted model scores them, against the older rows as they were scored.

        The monitor goes back to the state the first test saw (``before`` this check point, with
        its ``errors``); the part older than the rise, the reference, keeps its errors; the
        ``since`` rows after it (whole buckets, all in the history: ``_refit`` checked) are
        scored again by the refitted model, which has not been fitted on them, and the split test
        runs once. Only a rise that survives is a change. Returns the rows since it (0: none).
        """
        monitor = self.monitor
        monitor.restore(before)
        monitor.append(errors)
        tail = np.cumsum(monitor.rows[::-1])  # rows of the newest 1, 2, … buckets
        newer = int(np.searchsorted(tail, since)) + 1  # the newest buckets hold the rows since the rise
        monitor.drop_newest(newer)
        fresh = self._errors(self.history.size)  # every weighted row of the history, oldest first
        return monitor.add(fresh[len(fresh) - int(tail[newer - 1]) :])

    def _errors(self, m: int) -> np.ndarray:
        """0/1 errors of the current model on the ``m`` most recent rows of the history, oldest
        first (rows of sample weight 0 left out)."""
        h = self.history
        self.refresh()
        A, J = len(self.slots), len(self.classes)
        rows = as_slice(h.recent(m))
        scores = self.lookup.bias + np.einsum("nkj,kj->nj", h.log_lik[rows, :A, :J], self.lookup.coef[self.slots.variable, :J])
        errors = np.argmax(scores, axis=1) != h.y[rows]
        return errors[h.sample_weight[rows] > 0]

    def _refit(self, since: int) -> bool:
        """Ask the learner to re-fit its weights now (``Optimizer.refit``) on the rows of the
        window older than the ``since`` weighted rows of the rise; True when it did.

        The rows after the rise are left out so that the new test judges them out of sample:
        weights fitted on them could absorb a change of concept (the error of the refitted model
        on them would fall without the model being any good after the change).
        """
        refit = getattr(self.optimizer, "refit", None)
        if refit is None:
            return False
        h = self.history
        rows = h.recent(h.size)  # oldest first
        weighted = np.cumsum(h.sample_weight[rows][::-1] > 0)  # weighted rows among the newest 1, 2, …
        after = int(np.searchsorted(weighted, since)) + 1  # history rows holding the rise's rows
        if after >= len(rows) or weighted[-1] < since + FIRST_REFIT:  # too little before the rise
            return False
        A, J = len(self.slots), len(self.classes)
        h.fit_encoding(A, J)
        log_prior = self.classes.log_prior()
        log_prior.flags.writeable = False
        window = Batch(*h.window(rows[: len(rows) - after], A, J), log_prior)
        if not refit(window, self.context()):
            return False
        self.lookup.coefficients_changed()
        return True

    def forget(self, keep: int) -> None:
        """Forget all but the ``keep`` most recent rows of the history (0: everything).

        What the model learned from older examples is dropped: each variable's summary starts
        afresh from the kept rows (its level 2 with it), the class counts are those of the kept
        rows, the learner restarts (a variable it had zeroed can come back) and steps on them.
        The variables, the classes and the clocks stay.
        """
        h, registry, classes = self.history, self.registry, self.classes
        keep = max(0, min(int(keep), h.size))
        h.keep_recent(keep)
        K = len(registry)
        y, w = h.y[:keep], h.sample_weight[:keep]
        classes.recount(y, w)  # every variable is rebuilt below
        labels = classes.typed()
        summaries = self._fresh_summaries([old.kind for old in registry.variables])
        variables = []
        for k, (old, summary) in enumerate(zip(registry.variables, summaries)):
            variable = Variable(old.name, old.kind, summary)
            variables.append(variable)
            if old.kind == "categorical":
                values, present = h.column(slice(0, keep), k, int(registry.column[k]), numeric=False)
                if present.any():
                    variable.summary.update_coded(values[present], y[present], labels, w[present])
        numeric = np.array([v.kind == "numeric" for v in variables], dtype=bool)
        registry.renew(variables, h.counts(slice(0, keep), K).astype(float), np.where(numeric, h.stored - keep, h.stored).astype(np.int64))
        self.restart(keep)

    def restart(self, recent: int, step: bool = False) -> None:
        """Start levels 2 and 3 afresh on the parts as they are (after ``forget`` or a merge).

        The learner restarts from its initial weights (seeded by ``seed`` and the clock) and will
        step on the ``recent`` most recent rows; every variable whose class threshold is due
        (``classes.next_rebuild`` set to 0 by the caller) is rebuilt now with the encoding of the
        history; the change detector starts afresh. With ``step``, the learner steps at once
        (else at the next row learned).
        """
        registry, classes, schedule = self.registry, self.classes, self.schedule
        # level 3 starts with the variables whose level 2 is not flat now (the rebuilds below add others)
        self.slots.clear()
        self.slots.enter(registry.informative(), len(registry))
        self.history.drop_encoding()
        A, J = len(self.slots), len(classes)
        seed = None if self.params.seed is None else hash((self.params.seed, self.history.stored)) & (2**63 - 1)
        self.optimizer.reset(A, J, seed)
        self.shape = (A, J)
        self.history.resize(len(registry), J, registry.n_numeric, registry.n_categorical, n_encoded=A)
        self.lookup.invalidate()  # (the variables may be new: a merge)
        self.lookup.coefficients_changed()
        self.lookup.prior_changed()
        self._reencode_columns(self.slots.variable.tolist())  # their columns moved
        self._context = None
        schedule.restart(min(recent, self.target_batch))
        self._rebuild_due()  # level 2 and the encoding of the history
        if self.monitor is not None:
            self.monitor.reset()
        if step:
            self._maybe_step()

    # ------------------------------------------------------------------ a mini-batch
    def learn_frame(self, frame: Frame, labels: np.ndarray, codes: np.ndarray, uniques: list, sample_weight: np.ndarray) -> None:
        """Learn a parsed batch in chunks cut by the schedule (the states of a loop of ``learn_row``)."""
        n = len(labels)
        # A feature takes part from the first row where it is known (a new one: its first value).
        columns = [(name, 0 if name in self.registry.index else first) for name, _, first in frame.columns()]
        if self.collect:  # nothing but level 1 and the history: one chunk
            self._learn_chunk(frame, columns, labels, codes, uniques, sample_weight, 0, n)
            return
        # Row positions of each label: a class count reaching its rebuild threshold ends a chunk
        # (a new class has threshold 1, so its first row ends one).
        by_label = np.argsort(codes, kind="stable")
        positions = dict(zip(uniques, np.split(by_label, np.cumsum(np.bincount(codes, minlength=len(uniques)))[:-1])))
        t = 0
        while t < n:
            end = self.schedule.chunk_end(t, n, positions, columns, self.registry, self.classes, self.target_batch)
            if self.monitor is not None or self.fading is not None or self.params.memory_budget is not None:  # a check point ends a chunk
                end = min(end, t + EVERY - 1 - self.n_seen % EVERY)
            self._learn_chunk(frame, columns, labels, codes, uniques, sample_weight, t, end + 1)
            t = end + 1
            if self._evicted:
                self._evicted = False
                columns = self._reenter(frame, columns, t)

    def _reenter(self, frame: Frame, columns: list, t: int) -> list:
        """``columns`` after an eviction (a memory budget's): a column of the batch whose variable
        left starts again at its next value from row ``t`` (−1: none), where a loop of
        ``learn_one`` would create it anew."""
        index, a = self.registry.index, len(frame.numeric_names)
        out = list(columns)
        for i, (name, start) in enumerate(columns):
            if not 0 <= start < t or name in index:
                continue
            if i < a:
                values = frame.numeric[t:, i]
                held = ~np.isnan(values)
                if self.params.absent is not None:
                    held &= values != self.params.absent
                if frame.numeric_absent is not None:
                    held &= ~frame.numeric_absent[t:, i]
            else:
                held = np.array([value is not None for value in frame.categorical[i - a][1][t:].tolist()], dtype=bool)
                absent = frame.categorical_absent[i - a] if frame.categorical_absent else None
                if absent is not None:
                    held &= ~absent[t:]
            out[i] = (name, t + int(np.argmax(held)) if held.any() else -1)
        return out

    def _learn_chunk(self, frame: Frame, columns: list, labels, codes, uniques, sample_weight, lo: int, hi: int) -> None:
        """Rows ``lo:hi`` in bulk; only the last row may trigger a class, a rebuild or a step."""
        registry, schedule, h = self.registry, self.schedule, self.history
        chunk_weight = sample_weight[lo:hi]
        m = hi - lo
        # class indices through the batch's distinct labels; new ones registered in row order
        known = np.array([self.classes.index.position.get(label, -1) for label in uniques], dtype=np.intp)
        class_index = known[codes[lo:hi]]
        for r in np.flatnonzero(class_index < 0).tolist():
            class_index[r] = self.classes.index.encode(labels[lo + r])
        self._grow_classes()
        self.classes.count_many(class_index, chunk_weight)
        self.n_seen += m
        schedule.tick(m)
        self.lookup.prior_changed()
        new = [(name, kind) for (name, kind, _), (_, start) in zip(frame.columns(), columns) if name not in registry.index and lo <= start < hi]
        if new:
            self._add_variables(sorted(new, key=lambda item: feature_order(item[0])))
        # Columns taking part in the chunk, each from row ``since`` (its first row if it is new).
        a = len(frame.numeric_names)
        numeric = [(i, registry.index.get(name), max(lo, start)) for i, (name, start) in enumerate(columns[:a])]
        numeric = [(i, k, since) for i, k, since in numeric if k is not None and since < hi]
        categorical = []
        absent_keys = frame.categorical_absent or [None] * len(frame.categorical)
        for (name, values, _), (_, start), absent in zip(frame.categorical, columns[a:], absent_keys):
            k = registry.index.get(name)
            if k is not None and start < hi:
                since = max(lo, start)
                held = slice(since, hi) if absent is None else since + np.flatnonzero(~absent[since:hi])  # (a key absent from a dict is not counted)
                registry.variables[k].summary.update_many(values[held], labels[held], sample_weight[held])
                categorical.append((k, values, since, absent))
        ks = np.array([k for _, k, _ in numeric], dtype=np.intp)
        at = np.array([i for i, _, _ in numeric], dtype=np.intp)
        since = np.array([s for _, _, s in numeric], dtype=np.intp)
        default = self.params.absent  # (None: an absent feature is missing)
        if default is None and frame.numeric_absent is None:
            registry.count_many(ks, hi - since)
        self._resize()
        K = len(registry)
        # The raw rows go to the history now (numeric summaries take them from there).
        present = np.zeros((m, K), dtype=bool)
        present[:, ks] = np.arange(lo, hi)[:, None] >= since[None, :]
        for k, _, s, absent in categorical:
            present[s - lo :, k] = True if absent is None else ~absent[s:hi]
            registry.count_many(k, present[s - lo :, k].sum())
        block = frame.numeric[lo:hi][:, at]  # (m, a') NaN before a new variable's first value
        if default is not None:  # a cell holding the default value is absent
            present[:, ks] &= block != default
            registry.count_many(ks, present[:, ks].sum(axis=0))
        elif frame.numeric_absent is not None:  # a key absent from a dict: neither a value nor a missing one
            present[:, ks] &= ~frame.numeric_absent[lo:hi][:, at]
            registry.count_many(ks, present[:, ks].sum(axis=0))
        categories = np.empty((m, len(categorical)), dtype=object)
        for c, (_, values, _, _) in enumerate(categorical):
            categories[:, c] = values[lo:hi]  # None before a new variable's first value
        numeric_columns = registry.column[ks]
        categorical_columns = registry.column[np.array([k for k, _, _, _ in categorical], dtype=np.intp)]
        for start in range(0, m, h.capacity):  # pieces the history can hold at once
            stop = min(m, start + h.capacity)
            registry.make_room(stop - start, h, self.classes)
            h.push_many((numeric_columns, block[start:stop]), (categorical_columns, categories[start:stop]),
                        present[start:stop], None, class_index[start:stop], chunk_weight[start:stop],
                        variables=(ks, [k for k, _, _, _ in categorical]))  # fmt: skip
        self._settle(m, self._encode_chunk, ks, block, present, categorical, m, hi)

    def _encode_chunk(self, ks, block, present, categorical, m: int, hi: int) -> None:
        """Encode the chunk's rows still held in the history with the current level 2."""
        lookup, h, variables, slots = self.lookup, self.history, self.registry.variables, self.slots
        if lookup.stale:
            self._compile()
        A, J = len(slots), len(self.classes)
        if not A:
            return
        kept = min(m, len(h))
        at_rows = as_slice(h.recent(kept))
        if isinstance(at_rows, slice):  # the rows are consecutive in the ring: encode in place
            log_lik = h.log_lik[at_rows, :A, :J]  # (kept, A, J) a view
            log_lik[...] = 0.0
        else:
            log_lik = np.zeros((kept, A, J))  # (kept, A, J)
        held = slots.of[ks] >= 0  # the chunk's numeric variables in level 3
        block, rows = block[m - kept :], slice(m - kept, m)
        if held.all():
            lookup.encode_block(ks, block, present[rows, ks], log_lik, as_slice(slots.of[ks]))
        elif held.any():
            lookup.encode_block(ks[held], block[:, held], present[rows, ks[held]], log_lik, as_slice(slots.of[ks[held]]))
        for k, values, _, _ in categorical:
            variable = variables[k]
            if slots.of[k] < 0:
                continue
            parts = variable.locate_many(values[hi - kept : hi]) if variable.log_prob is not None else None
            if parts is not None:
                found = lookup.categorical_rows(k, parts)
                found[~present[rows, k]] = NOWHERE
                log_lik[:, slots.of[k], :] = lookup.table[found]
        for i in np.flatnonzero(held).tolist():
            k = int(ks[i])
            if variables[k].density:
                ll = variables[k].log_lik_many(block[:, i])
                ll[~present[rows, k]] = 0.0
                log_lik[:, slots.of[k], : ll.shape[1]] = ll
        if lookup.defaults is not None:  # absent numeric features hold the default value
            np.copyto(log_lik, lookup.defaults[slots.variable], where=~present[rows, slots.variable][..., None])
        if not isinstance(at_rows, slice):
            h.log_lik[at_rows, :A, :J] = log_lik

    # ------------------------------------------------------------------ prediction
    def refresh(self) -> None:
        """Bring the compiled lookups, the learner's coefficients and the bias up to date."""
        lookup = self.lookup
        if lookup.fresh():  # the usual case: nothing to do
            return
        if lookup.stale:
            self._resize()
        J = len(self.classes)
        if lookup.compile_due(self.registry.variables, J):
            lookup.take_coefficients(*self.coefficients(J))
        if lookup.weigh():
            lookup.take_prior(self.classes.log_prior())

    def coefficients(self, J: int) -> tuple[np.ndarray, np.ndarray]:
        """The learner's ``coef`` of the slots, per variable ``(K, J)``, and its ``bias (J,)``.

        A variable without a slot has a flat level 2 (ℓ = 0), so its coefficient changes no score;
        it is the learner's ``outside_weight`` (what it reports as that variable's weight).
        """
        coef, bias = self.optimizer.coefficients(len(self.slots), J)
        return self.slots.scatter(np.asarray(coef, dtype=float), len(self.registry), self.optimizer.outside_weight), bias

    def encoding(self, rows=None) -> np.ndarray:
        """``(n, K, J)`` the history's encoded ``rows`` (default: the rows in use) per variable: the
        slots' columns where they are, zeros for the variables outside level 3 (whose ℓ is 0).
        For inspection and tests; the learners read the compact ``(n, A, J)`` window."""
        h = self.history
        rows = h.filled() if rows is None else rows
        block = h.log_lik[rows, : len(self.slots), : len(self.classes)]
        out = np.zeros((block.shape[0], len(self.registry), len(self.classes)))
        out[:, self.slots.variable] = block
        return out

    def weights(self) -> np.ndarray:
        """``(K,)`` the learner's current weight of each variable (``outside_weight`` outside level 3)."""
        w = np.asarray(self.optimizer.weights, dtype=float)
        known = self.slots.variable[: len(w)]
        out = np.full(len(self.registry), float(self.optimizer.outside_weight))
        out[known] = w[: len(known)]
        return out

    def scores_one(self, row: Row) -> np.ndarray:
        """``(J,)`` unnormalised log posterior of one parsed row."""
        self.refresh()
        return self.lookup.scores_one(row, self.registry.variables)

    def scores_frame(self, frame: Frame, n: int) -> np.ndarray:
        """``(n, J)`` unnormalised log posteriors of a parsed batch."""
        self.refresh()
        return self.lookup.scores_frame(frame, n, self.registry)

    def contribution(self, k: int, value) -> np.ndarray | None:
        """``(J,)`` the weighted log-likelihood of ``value`` in variable ``k`` (None: no contribution);
        call ``refresh`` first."""
        ll = self.registry.variables[k].log_lik_one(value)
        if ll is None:
            return None
        contribution = np.zeros(len(self.classes))
        contribution[: len(ll)] = self.lookup.coef[k, : len(ll)] * ll
        return contribution

    # ------------------------------------------------------------------ state
    def memory_usage(self) -> int:
        return int(self.history.memory_usage() + self.lookup.memory_usage() + self.registry.memory_usage())

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_context"] = None  # a cache
        return state

    def __setstate__(self, state: dict) -> None:
        if "slots" not in state:  # pickled before slots: the learner's axis is the variables'
            state["slots"] = Slots(np.arange(state["shape"][0]))
        if "params" not in state:  # pickled before ``Params``: its positional arguments
            state["params"] = Params(*state.pop("arguments"))
            for name in ("numeric_prototype", "categorical_prototype", "batch_size", "absent", "memory_budget", "seed"):
                state.pop(name, None)
        self.__dict__.update(state)

    def _check(self) -> None:
        """Assert the invariants of every part and of how they fit together."""
        K, J = len(self.registry), len(self.classes)
        self.classes._check()
        self.registry._check()
        self.registry._check_clock(self.history.stored, len(self.history))
        self.schedule._check()
        self.schedule._check_countdown(self.registry)
        if self.monitor is not None:
            self.monitor._check()
        self.lookup._check(K, J)
        assert self.n_seen == self.history.stored, "every example learned is stored once"
        self.slots._check(K)
        assert self.collect or np.all(self.slots.of[self.registry.informative()] >= 0), (
            "every variable whose level 2 is not flat has a slot"
        )
        assert self.shape[0] <= len(self.slots) and self.shape[1] <= J
