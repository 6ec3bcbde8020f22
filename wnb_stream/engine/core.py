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

import functools
import inspect
import math

import numpy as np
from river.base import Base as RiverBase

from .._threads import run_all
from ..summaries.policy import check_total_weight, fast_weight
from ..tables import Batch, Context
from . import frames
from ._locate import place_rows
from .arrays import as_slice
from .batches import MiniBatches
from .budget import MemoryBudget
from .classes import Classes
from .drift import EVERY, Monitor
from .forgetting import Forgetting
from .history import History, SparseHistory
from .lookup import Lookup
from .params import Params
from .registry import Registry
from .rows import Frame, Row, RowParser, check_label, check_sample_weights, feature_order, same_row
from .rows import labels as label_codes
from .schedule import Schedule
from .slots import Slots
from .variable import Variable

__all__ = ["Engine"]

#: Cells (rows × variables × classes) of the temporaries of one re-encoding piece.
REENCODE_CELLS = 1 << 20
#: Encoded cells (rows × variables × classes) from which a re-encoding runs its pieces of rows in
#: threads (``_threads.run_all``: the compiled lookups release the GIL): a round's rebuild at
#: K = 1,000 encodes 26 million; a rebuild of a few variables stays in the calling thread.
PARALLEL_CELLS = 1 << 21

#: A catch-up steps the learner on the window only if no class expected at least this many
#: times in the window (by the class counts) holds less than ``WINDOW_CLASS_SHARE`` of that
#: (``Engine._window_holds_the_classes``): a window of one class of a stream sorted by class is
#: no ground to fit the weights on.
WINDOW_CLASS_MIN = 4.0
WINDOW_CLASS_SHARE = 0.25

#: Parameter types that ``copy.deepcopy`` returns as they are (``clones``).
ATOMS = (type(None), bool, int, float, str)


def clones(prototype, n: int) -> list:
    """``[prototype.clone() for _ in range(n)]``, the summaries of ``n`` new variables.

    River's ``clone`` reads the parameters through ``inspect.signature`` at every call, which is
    most of its cost (some 21 µs a summary, 9 times the constructor's): a row of a wide sparse
    stream brings dozens of new features. Here the names of a class's parameters are read once
    per class (``_parameter_names``) and their values from the prototype at each call; when they
    are all atoms (None, bools, numbers, strings: what ``clone``'s ``copy.deepcopy`` returns as
    they are) the class is called with them, as ``clone`` would; any other parameter, a
    signature with ``*args`` or ``**kwargs``, or a class with its own ``clone`` or ``_get_params``
    takes ``clone`` itself.
    """
    cls = type(prototype)
    plain = cls.clone is RiverBase.clone and cls._get_params is RiverBase._get_params
    names = _parameter_names(cls) if plain else None
    if names is None:
        return [prototype.clone() for _ in range(n)]
    params = {name: getattr(prototype, name) for name in names}
    if not all(type(value) in ATOMS for value in params.values()):
        return [prototype.clone() for _ in range(n)]
    return [cls(**params) for _ in range(n)]


@functools.lru_cache(maxsize=64)
def _parameter_names(cls: type) -> tuple | None:
    """The names of ``cls.__init__``'s parameters, as River's ``_get_params`` reads them; None
    when it takes ``*args`` or ``**kwargs`` (``_get_params`` reads those apart)."""
    names = []
    for name, parameter in list(inspect.signature(cls.__init__).parameters.items())[1:]:  # (after self)
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            return None
        names.append(name)
    return tuple(names)


class Engine(MiniBatches, Forgetting, MemoryBudget):
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
    #: The encoded window is owed (``restart(defer_encoding=True)``): written, from the raw rows,
    #: by the first reader of it (``settle_encoding``), e.g. the step that a round left for later.
    _owes_encoding = False
    _last_row = None  # the row predicted last (``serve``; not part of the model: a loaded one has none)

    def __init__(self, params: Params, collect: bool = False):
        # a stream whose absent features hold a value is sparse: its rows are kept as entries
        history = (History if params.absent is None else SparseHistory)(params.history_size, encoded=not collect)
        monitor = Monitor(params.drift_delta) if params.drift_delta is not None else None
        schedule = Schedule(params.rebuild_growth, params.rebuild_every)
        self._assemble(params, Classes(), Registry(), history, schedule, params.learner(), Slots(), monitor, collect)

    @classmethod
    def from_parts(cls, params: Params, classes: Classes, registry: Registry, history: History, schedule: Schedule,
                   learner, slots: Slots, monitor: Monitor | None, collect: bool = False) -> Engine:  # fmt: skip
        """The engine of these parts (a loaded model's, a merge's), taken over as they are: the
        learner is sized for the slots and the classes, the clock ``n_seen`` is the history's;
        the compiled lookups start empty (compiled at the next use). The encoded window is
        not written: a loaded model encodes it again (``reencode_all``), a merge restarts
        levels 2 and 3 (``restart``). ``collect``: level 1 only (deltas merged into one)."""
        engine = cls.__new__(cls)
        engine._assemble(params, classes, registry, history, schedule, learner, slots, monitor, collect=collect)
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
        self.step_if_due()

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
        context = self._context
        if context is not None:  # (a new variable has no slot: the cached entries stand, the count moves on)
            self._context = Context(context.prior_costs, context.active, len(self.registry))
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
        grown_only = shape == self.shape and shape == (h.n_encoded, h.n_classes)  # (new variables only)
        self.slots.grow(K)
        self.history.resize(K, J, self.registry.n_numeric, self.registry.n_categorical, n_encoded=shape[0])
        if shape != self.shape:
            # new slots: a variable entering level 3 enters the learner as a new variable does (at
            # the learner's initial weight, in the weights it predicts with too), from this row on
            self.optimizer.resize(*shape)
            self.shape = shape
        if not grown_only:  # (new variables alone leave the learner as it was: the lookups give them theirs)
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
        self._context_rebuilt(held)
        self._enter([k for k in held[self.slots.of[held] < 0].tolist() if not variables[k].flat])  # (the others have one)
        self._reencode_columns(held[self.slots.of[held] >= 0].tolist())

    def _context_rebuilt(self, ks: np.ndarray) -> None:
        """Level 2 of the variables ``ks`` was rebuilt: the cached context takes their prior
        costs and activity again (the values ``context`` computes). When a variable with a slot
        wakes or falls asleep, the lookups take the learner's coefficients again at the next
        refresh, through ``Optimizer.sync``: a woken variable predicts before the next step.
        With no cached context to compare with, they are taken again anyway (new variables alone
        keep it: ``_add_variables`` counts them in, so that the lookups give them their
        coefficients alone, ``Lookup.take_new_coefficients``). O(len(ks)) and a copy of the
        context's arrays when they change."""
        if not self._context_current():
            self._context = None
            self.lookup.coefficients_changed()
            return
        context = self._context
        at = self.slots.of[ks]
        ks, at = ks[at >= 0], at[at >= 0]
        if not len(ks):
            return
        costs, active = self._context_entries(ks)
        woke = not np.array_equal(context.active[at], active)
        if not woke and np.array_equal(context.prior_costs[at], costs):
            return
        context = Context(context.prior_costs.copy(), context.active.copy(), context.n_variables)  # (a learner may hold the old arrays)
        context.prior_costs[at], context.active[at] = costs, active
        self._context = context
        if woke:
            self.lookup.coefficients_changed()

    def _not_rebuilt(self, ks: np.ndarray, due) -> list:
        """The variables ``ks`` that ``_rebuild_due`` will not re-encode, ``due`` being what the
        schedule finds due now (``rebuilds_due``): a rebuild re-encodes the slots' columns of the
        due variables whose summary holds weight (``_rebuild``). O(K)."""
        if due is None or not len(due[0]):
            return ks.tolist()
        variables = self.registry.variables
        rebuilt = [k for k in due[0].tolist() if variables[k].summary.holds_weight()]
        return ks[~np.isin(ks, rebuilt)].tolist()

    def _enter(self, ks: list) -> None:
        """Give level-3 slots to the variables ``ks`` (their level 2 is not flat) that have none."""
        if ks and self.slots.enter(np.array(ks, dtype=np.intp), len(self.registry)):
            self._resize()
            self._context = None

    def _reencode_columns(self, ks: list) -> None:
        """Encode the history columns of the variables ``ks`` (all with slots) with their level 2
        (nothing while the whole window is owed: ``settle_encoding`` writes every column)."""
        if not ks or not self.history.size or self._owes_encoding:
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

        def encode(start: int, stop: int) -> None:
            values, present = h.numeric_block(slice(start, stop), held, columns)
            self.lookup.encode_block(ks, values, present, h.log_lik[start:stop], at)
            h.log_lik[start:stop, at, J:] = 0.0  # (no class beyond J)
            if defaults is not None:  # absent cells hold the default value
                h.log_lik[start:stop, at, :J] = np.where(present[..., None], h.log_lik[start:stop, at, :J], defaults)

        pieces = [(start, min(h.size, start + piece)) for start in range(0, h.size, piece)]
        if h.size * len(ks) * J >= PARALLEL_CELLS and not h.sparse:
            run_all([functools.partial(encode, start, stop) for start, stop in pieces])  # (rows apart: the same floats)
        else:
            for start, stop in pieces:
                encode(start, stop)

    def settle_encoding(self) -> None:
        """Write the encoded window if it is owed (``restart(defer_encoding=True)``); every reader
        of the encoded rows calls this first. O(1) when it is not owed."""
        if self._owes_encoding:
            self._encode_window()

    def _encode_window(self) -> None:
        """Every slot's column over the rows in use (what ``restart`` writes); nothing is owed after."""
        self._owes_encoding = False
        self._resize()
        self._reencode_columns(self.slots.variable.tolist())

    def reencode_all(self) -> None:
        """Encode every row of the history with the current level 2 of every variable.

        The encoded block is a function of the raw rows and the current partitions: rows are
        encoded on arrival with the level 2 of the moment, and a variable's column is re-encoded
        whenever its level 2 is rebuilt. So this reproduces it exactly (tested bit for bit), and a
        loaded model rebuilds it here instead of storing it.
        """
        self._resize()
        self.history.clear_encoding()
        self._encode_window()

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
    def step_if_due(self) -> bool:
        """The learner's step on the rows waiting for it, when the schedule says one is due
        (after each row learned; after a ``restart`` without ``step``, what a round absorbed
        with its weights left for later owes); whether it stepped. O(1) when none is due."""
        target = self.target_batch
        m = self.schedule.step_due(target)
        if m:
            self._step(m)
            h = self.history
            self.schedule.stepped(target, h.size, full=h.size >= h.capacity)
        return bool(m)

    def context(self) -> Context:
        """The slots' variables' prior costs and activity, cached until the next rebuild or slot."""
        if not self._context_current():
            prior_costs, active = self._context_entries(self.slots.variable)
            self._context = Context(prior_costs=prior_costs, active=active, n_variables=len(self.registry))
        return self._context

    def _context_current(self) -> bool:
        """Whether the cached context is there and sized for the slots and the variables."""
        context = self._context
        return context is not None and len(context.active) == len(self.slots) and context.n_variables == len(self.registry)

    def _context_entries(self, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The context's entries of the variables ``ks``: their prior costs and whether they are
        active (level 2 not at Level 0). O(len(ks))."""
        variables, ks = self.registry.variables, ks.tolist()
        return (
            np.array([variables[k].prior_cost for k in ks], dtype=float),
            np.array([variables[k].level > 0 for k in ks], dtype=bool),
        )

    def _step(self, m: int) -> None:
        """One learner step on the ``m`` most recent rows, judged on the whole history."""
        self.settle_encoding()
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

    def restart(self, recent: int, step: bool = False, warm: bool = False, defer_encoding: bool = False) -> None:
        """Start levels 2 and 3 afresh on the parts as they are (after ``forget`` or a merge).

        The learner restarts from its initial weights (seeded by ``seed`` and the clock) and will
        step on the ``recent`` most recent rows; every variable whose class threshold is due
        (``classes.next_rebuild`` set to 0 by the caller) is rebuilt now with the encoding of the
        history; the change detector starts afresh. With ``step``, the learner steps at once
        (else at the next row learned). With ``warm`` (a round: the rows absorbed came after the
        model's), the learner keeps its run instead, each variable its weight
        (``remap``; a learner that cannot carry it restarts). With ``defer_encoding`` (and no
        ``step``), the history is not encoded now but by its first reader (``settle_encoding``:
        the same block, from the raw rows and the rebuilt level 2), so that a round's predictor
        is ready before it (``docs/algorithms/merge.md#rounds``).
        """
        registry, classes, schedule = self.registry, self.classes, self.schedule
        self._owes_encoding = bool(defer_encoding) and not step
        before = self.slots.variable.copy() if warm else None
        # level 3 starts with the variables whose level 2 is not flat now (the rebuilds below add others)
        self.slots.clear()
        self.slots.enter(registry.informative(), len(registry))
        self.history.drop_encoding()
        A, J = len(self.slots), len(classes)
        carried = False
        if before is not None:
            position = np.full(len(registry), -1, dtype=np.intp)
            position[before] = np.arange(len(before))
            carried = self.optimizer.remap(position[self.slots.variable], J)
        if not carried:
            seed = None if self.params.seed is None else hash((self.params.seed, self.history.stored)) & (2**63 - 1)
            self.optimizer.reset(A, J, seed)
        self.shape = (A, J)
        self.history.resize(len(registry), J, registry.n_numeric, registry.n_categorical, n_encoded=A)
        self.lookup.invalidate()  # (the variables may be new: a merge)
        self.lookup.coefficients_changed()
        self.lookup.prior_changed()
        schedule.restart(min(recent, self.target_batch))
        # their columns moved: encoded again, but for those the rebuild below encodes (due, with a summary)
        self._reencode_columns(self._not_rebuilt(self.slots.variable, schedule.rebuilds_due(registry, classes)))
        self._context = None
        self._rebuild_due()  # level 2 and the encoding of the history
        if self.monitor is not None:
            self.monitor.reset()
        if step:
            self.step_if_due()

    # ------------------------------------------------------------------ serving
    def serve(self, row: Row | None, rows: int = 1) -> None:
        """Before a prediction of ``row`` (None: a batch of ``rows`` rows): when the model serves,
        that is, predicts rows without learning between them, it catches up (``catch_up``). It
        serves at a prediction of another row than its last one with no row learned since, and at
        a batch of two rows or more (``predict_proba_many``), so that a batch and a loop over its
        rows predict alike. A stream fed test-then-train one row at a time (predict a row, learn
        it, predict the next) never serves. Predicting the same row twice is one prediction (the
        parser hands the same ``Row`` back for an equal dict; ``same_row`` tells the others); the
        row is not saved with the model, so a loaded model that predicted before it was saved
        takes its next row as another. O(1) but when the model serves."""
        if not self.params.catch_up:  # (then a prediction changes nothing)
            return
        again = self.schedule.predicted(self.n_seen)
        last, self._last_row = self._last_row, row
        if rows < 2:
            if not again:
                return
            if row is not None and last is not None and same_row(row, last):
                return
        self.catch_up()

    def catch_up(self) -> bool:
        """Bring level 2 up to date with every row the model holds, and step the learner once on
        the whole window (``docs/algorithms/prediction.md#catching-up``); whether it did.

        Level 2 is rebuilt on a schedule, so a model that stops learning predicts with
        partitions built on as few as 1/(1 + ``rebuild_growth``) of its rows. A catch-up
        rebuilds every variable built before its count of now (``Schedule.behind``; the schedule
        of each starts again from there; the others' rebuild would give the same partition) and
        steps the weights on the window, encoded with the new level 2, if the window holds the
        classes about as the model does (``_window_holds_the_classes``). At most one per growth of
        the rows by ``rebuild_growth`` (``Schedule.catch_up_due``), so that a model serving and
        learning by turns costs at most about twice the rebuilds of its schedule, and a step
        each time."""
        schedule, registry = self.schedule, self.registry
        if self.collect or not len(registry) or len(self.classes) < 2:
            return False
        if not schedule.catch_up_due(self.n_seen):
            return False
        behind = schedule.behind(registry)
        if len(behind):
            self._rebuild(behind)
            schedule.count_down(registry, self.classes)
        h = self.history
        if h.size and self._window_holds_the_classes():
            self._step(h.size)
            schedule.stepped(self.target_batch, h.size, full=h.size >= h.capacity)
        schedule.caught_up_at(self.n_seen)
        return True

    def _window_holds_the_classes(self) -> bool:
        """Whether the history window holds each class about as the model does: no class with
        at least ``WINDOW_CLASS_MIN`` rows expected in it (its share of the class counts times
        the window's weight) holds less than ``WINDOW_CLASS_SHARE`` of them. A window of the last
        rows of a stream sorted by class holds one class; a step on it alone would fit the
        weights to that class (``catch_up`` then rebuilds level 2 only). O(history size + J)."""
        counts = self.classes.counts
        held = self.history.class_weights(len(counts))
        if not counts.sum() > 0.0:
            return False
        expected = counts / counts.sum() * held.sum()  # (shares first: no overflow with huge weights)
        judged = expected >= WINDOW_CLASS_MIN
        return bool(np.all(held[judged] >= WINDOW_CLASS_SHARE * expected[judged]))

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
            if lookup.grown_only:  # (only variables were added since: O(new), the same coefficients)
                lookup.take_new_coefficients(self.optimizer.outside_weight)
            else:
                lookup.take_coefficients(*self.coefficients(J))
        if lookup.weigh():
            lookup.take_prior(self.classes.log_prior())

    def coefficients(self, J: int) -> tuple[np.ndarray, np.ndarray]:
        """The learner's ``coef`` of the slots, per variable ``(K, J)``, and its ``bias (J,)``.

        A variable without a slot has a flat level 2 (ℓ = 0), so its coefficient changes no score;
        it is the learner's ``outside_weight`` (what it reports as that variable's weight).
        """
        self.optimizer.sync(self.context())  # level 2 may have moved since the learner's last step
        coef, bias = self.optimizer.coefficients(len(self.slots), J)
        return self.slots.scatter(np.asarray(coef, dtype=float), len(self.registry), self.optimizer.outside_weight), bias

    def encoding(self, rows=None) -> np.ndarray:
        """``(n, K, J)`` the history's encoded ``rows`` (default: the rows in use) per variable: the
        slots' columns where they are, zeros for the variables outside level 3 (whose ℓ is 0).
        For inspection and tests; the learners read the compact ``(n, A, J)`` window."""
        self.settle_encoding()
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
        state.pop("_last_row", None)  # (which row was predicted last: not part of the model)
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
        assert self.history.zeros_beyond_size(), "the encoded rows beyond the ring's size hold zeros"
        self.slots._check(K)
        assert self.collect or np.all(self.slots.of[self.registry.informative()] >= 0), (
            "every variable whose level 2 is not flat has a slot"
        )
        assert self.shape[0] <= len(self.slots) and self.shape[1] <= J
