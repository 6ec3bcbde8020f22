"""``engine.registry.Registry`` alone: variables and their columns, feeding numeric summaries from a
hand-built ``History`` (the summary a loop of ``update`` builds), ``make_room`` before a row is
overwritten, ``_check``."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import summaries
from wnb_stream.engine.classes import Classes
from wnb_stream.engine.history import History
from wnb_stream.engine.registry import SETTLE_TOGETHER_ROWS, Registry
from wnb_stream.engine.rows import Row
from wnb_stream.engine.variable import Variable
from wnb_stream.summaries.base import FEW_ROWS

PROTOTYPES = {
    "GKClass": lambda: summaries.GKClass(),
    "GKClass(max_tuples=12)": lambda: summaries.GKClass(max_tuples=12),
    "CPiD": lambda: summaries.CPiD(n_bins=10, warm_up=5),
    "Gaussian": lambda: summaries.Gaussian(),
    "Categorical": lambda: summaries.Categorical(),
}


def state(summary) -> tuple:
    """Everything level 2 reads of a summary, to the bit: each array's dtype, shape and bytes (not
    a pickle of the table, whose length depends on whether its arrays share one dtype object; the
    arrays of a kernel loaded from numba's cache carry copies of the dtype, those of a kernel
    compiled in the process the shared one)."""
    table = summary.table()
    fields = [(f.name, getattr(table, f.name)) for f in dataclasses.fields(table)]
    arrays = tuple((name, a.dtype.str, a.shape, a.tobytes()) for name, a in fields if isinstance(a, np.ndarray))
    others = tuple(pickle.dumps(value) for _, value in fields if not isinstance(value, np.ndarray))
    return summary.classes, tuple(map(type, summary.classes)), arrays, others, type(table).__name__, summary.n, type(summary.n)


def assert_same_summary(fed, reference):
    """``fed`` is the summary ``reference`` (fed by a loop of ``update``) is: to the bit for the
    binned summaries; up to float rounding for ``Gaussian``, whose batch update merges per-class
    moments by the Chan rule ("same result as a loop of update up to float rounding")."""
    if not isinstance(fed, summaries.Gaussian):
        assert state(fed) == state(reference)
        return
    a, b = fed.table(), reference.table()
    assert a.classes == b.classes
    assert [type(c) for c in a.classes] == [type(c) for c in b.classes]
    for name in ("weights", "missing", "means", "variances"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-9, atol=1e-12, err_msg=name)


def check(registry, stored: int, history_size: int):
    registry._check()
    registry._check_clock(stored, history_size)


def test_add_gives_each_kind_its_own_columns():
    registry = Registry()
    kinds = ["numeric", "categorical", "numeric", "numeric", "categorical"]
    for k, kind in enumerate(kinds):
        assert registry.add(f"f{k}", kind, summaries.GKClass() if kind == "numeric" else summaries.Categorical(), stored=3 * k) == k
        check(registry, stored=3 * k, history_size=100)
    assert len(registry) == 5 and registry.index == {f"f{k}": k for k in range(5)}
    assert [v.kind for v in registry.variables] == kinds and [v.name for v in registry.variables] == list(registry.index)
    assert registry.column.tolist() == [0, 0, 1, 2, 1] and registry.column.dtype == np.intp
    assert (registry.n_numeric, registry.n_categorical) == (3, 2)
    assert registry.count.tolist() == [0.0] * 5 and registry.next_rebuild.tolist() == [1.0] * 5
    assert registry.synced.tolist() == [0, 3, 6, 9, 12] and registry.synced_min == 0
    assert not registry.all_numeric(3)  # a categorical variable exists
    assert registry.prior_costs().shape == (5,) and not registry.active().any()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(["numeric", "categorical"]), max_size=6), st.integers(0, 50)), max_size=8))
def test_add_many_in_batches_holds_what_each_variable_was_given(batches):
    """The per-variable arrays lengthened in their buffers' room (``arrays.extended``) hold, batch
    after batch, each variable's raw column, count, threshold and clock as given when it was
    added, and what was written in place since."""
    registry = Registry()
    column, count, next_rebuild, synced, stored = [], [], [], [], 0
    seen = {"numeric": 0, "categorical": 0}
    for kinds, more in batches:
        stored += more
        make = lambda kind: summaries.GKClass() if kind == "numeric" else summaries.Categorical()  # noqa: E731
        ks = registry.add_many([(f"f{len(column) + i}", kind, make(kind)) for i, kind in enumerate(kinds)], stored)
        assert ks.tolist() == list(range(len(column), len(column) + len(kinds)))
        for kind in kinds:
            column.append(seen[kind])
            seen[kind] += 1
        count += [0.0] * len(kinds)
        next_rebuild += [1.0] * len(kinds)
        synced += [stored] * len(kinds)
        registry.count[ks] += np.arange(len(ks))  # (written in place, as the engine does)
        count[len(count) - len(ks) :] = np.arange(len(ks), dtype=float).tolist()
        assert registry.column.tolist() == column and registry.column.dtype == np.intp
        assert registry.count.tolist() == count and registry.next_rebuild.tolist() == next_rebuild
        assert registry.synced.tolist() == synced and registry.synced.dtype == np.int64
        assert registry.synced_min == min(synced, default=0)
        registry._check()


def test_all_numeric():
    registry = Registry()
    assert registry.all_numeric(0)
    for k in range(3):
        registry.add(k, "numeric", summaries.Gaussian(), 0)
    assert registry.all_numeric(3) and not registry.all_numeric(2)


@st.composite
def streams(draw):
    """Events on a registry: new variables, rows (class, weight, a value or absence per variable), feeds."""
    kinds = draw(st.lists(st.sampled_from(list(PROTOTYPES)), min_size=1, max_size=5), label="summaries")
    label_set = draw(st.sampled_from([[0, 1, 2], ["b", "a", "c"], ["x", 1, (2,)], [True, False]]), label="labels")
    events, K = [], 1
    for _ in range(draw(st.integers(1, 60))):
        what = draw(st.integers(0, 9))
        if what == 0 and K < len(kinds):
            events.append(("add",))
            K += 1
        elif what == 1:
            events.append(("feed", draw(st.lists(st.integers(0, K - 1), unique=True, min_size=1))))
        else:
            y = draw(st.sampled_from(label_set))
            w = draw(st.sampled_from([1.0, 1.0, 0.0, 0.5, 2.0]))
            values = [draw(st.one_of(st.none(), st.sampled_from([math.nan, 0.0, 1.0, -2.5]), st.floats(-3, 3))) for _ in range(K)]
            # None: the feature is absent from the row; NaN: missing
            events.append(("row", y, w, values))
    return kinds, events


class Stream:
    """A registry, its history and classes, and per variable a reference summary fed by ``update``."""

    def __init__(self, kinds, capacity):
        self.kinds = kinds
        self.registry = Registry()
        self.history = History(capacity)
        self.classes = Classes()
        self.reference = []
        self.add()

    def add(self):
        name = self.kinds[len(self.registry)]
        kind = "categorical" if name == "Categorical" else "numeric"
        self.registry.add(len(self.registry), kind, PROTOTYPES[name](), self.history.stored)
        self.reference.append(PROTOTYPES[name]())

    def row(self, y, w, values, make_room=True):
        registry, h = self.registry, self.history
        j = self.classes.encode(y)
        self.classes.count_one(j, w)
        label = self.classes.labels[j]
        numeric, categorical, present = [], [], []
        for k, value in enumerate(values[: len(registry)]):
            if value is None:
                continue
            present.append(k)
            variable = registry.variables[k]
            if variable.kind == "numeric":
                numeric.append((k, value))
            else:  # categorical summaries take the rows as they come
                value = None if math.isnan(value) else f"v{value:.0f}"
                categorical.append((k, value))
                variable.summary.update(value, label, w)
            self.reference[k].update(value, label, w)
        h.resize(len(registry), len(self.classes), registry.n_numeric, registry.n_categorical)
        if make_room:
            registry.make_room(1, h, self.classes)
        ks = np.array([k for k, _ in numeric], dtype=np.intp)
        cs = np.array([k for k, _ in categorical], dtype=np.intp)
        h.push((registry.column[ks], [v for _, v in numeric]), (registry.column[cs], [v for _, v in categorical]), present, None, j, w)

    def assert_fed(self, indices):
        for k in indices:
            assert_same_summary(self.registry.variables[k].summary, self.reference[k])


@settings(max_examples=examples(150), deadline=None)
@given(streams())
def test_feed_builds_the_summary_a_loop_of_update_builds(stream):
    kinds, events = stream
    s = Stream(kinds, capacity=100)  # holds every row: nothing is dropped
    for event in events:
        if event[0] == "add":
            s.add()
        elif event[0] == "row":
            s.row(*event[1:], make_room=False)
        else:
            indices = np.array(event[1], dtype=np.intp)
            categorical = {k: state(v.summary) for k, v in enumerate(s.registry.variables) if v.kind == "categorical"}
            s.registry.feed(indices, s.history, s.classes)
            assert s.registry.synced[indices].tolist() == [s.history.stored] * len(indices)
            assert s.registry.synced_min == s.registry.synced.min()
            s.assert_fed(event[1])
            # categorical summaries took their rows already: feeding leaves them alone
            assert categorical == {k: state(v.summary) for k, v in enumerate(s.registry.variables) if v.kind == "categorical"}
        check(s.registry, s.history.stored, len(s.history))
    s.registry.feed(np.arange(len(s.registry)), s.history, s.classes)
    s.assert_fed(range(len(s.registry)))


@settings(max_examples=examples(50), deadline=None)
@given(streams())
def test_feed_with_settle_builds_the_settled_summary_a_loop_of_update_builds(stream):
    # a rebuild's feed (``settle``) goes through each type's ``take_many``, all summaries at once,
    # on a dense history as on a sparse one: the same summaries as feeding each, then settling it
    kinds, events = stream
    s = Stream(kinds, capacity=100)
    for event in events:
        if event[0] == "add":
            s.add()
        elif event[0] == "row":
            s.row(*event[1:], make_room=False)
        else:
            s.registry.feed(np.array(event[1], dtype=np.intp), s.history, s.classes, settle=True)
            assert s.registry.synced[event[1]].tolist() == [s.history.stored] * len(event[1])
            for k in event[1]:  # settled: nothing left in a buffer for the rebuild to take
                summary = s.registry.variables[k].summary
                assert not getattr(summary, "_buffer_values", ())
            s.assert_fed(event[1])  # (reads the tables, which would settle them)
        check(s.registry, s.history.stored, len(s.history))


@pytest.mark.parametrize("n", [3 * FEW_ROWS, SETTLE_TOGETHER_ROWS, SETTLE_TOGETHER_ROWS + 3])
def test_feed_with_settle_settles_a_dense_history_s_summaries(n):
    # up to SETTLE_TOGETHER_ROWS rows, the summaries take and settle them together; beyond, one
    # at a time (settled when their tables are read): the same summaries either way
    s = Stream(["GKClass", "GKClass", "Gaussian"], capacity=n)
    s.add()
    s.add()
    for i in range(n):
        s.row("ab"[i % 2], 1.0, [float(i % 5), None if i % 3 == 0 else float(i), float(i)])
    s.registry.feed(np.arange(3), s.history, s.classes, settle=True)
    buffered = [len(s.registry.variables[k].summary._buffer_values) for k in (0, 1)]
    assert buffered == [0, 0] if n <= SETTLE_TOGETHER_ROWS else min(buffered) > 0
    s.assert_fed([0, 1, 2])  # (reads the tables, which would settle them)
    assert s.registry.variables[1].summary.n == n - len(range(0, n, 3))


def test_feed_uses_both_ways_of_feeding():
    # a handful of rows by a loop of update, more by update_coded; some rows without the feature
    for n in (FEW_ROWS, FEW_ROWS + 1, 3 * FEW_ROWS):
        s = Stream(["GKClass", "Gaussian"], capacity=100)
        s.add()
        for i in range(n):
            s.row("ab"[i % 2], 1.0, [float(i % 5), None if i % 3 == 0 else float(i), math.nan])
        s.registry.feed(np.arange(2), s.history, s.classes)
        s.assert_fed([0, 1])
        assert s.registry.variables[0].summary.n == n


@settings(max_examples=examples(150), deadline=None)
@given(streams(), st.integers(1, 12), st.lists(st.integers(1, 12), max_size=20))
def test_make_room_feeds_exactly_the_summaries_that_would_lose_a_row(stream, capacity, batches):
    kinds, events = stream
    s = Stream(kinds, capacity=capacity)
    registry, h = s.registry, s.history
    rows = [event for event in events if event[0] == "row"]
    batches = [min(m, capacity) for m in batches] or [1]
    position = 0
    while position < len(rows):
        m = min(batches[position % len(batches)], len(rows) - position)
        chunk = rows[position : position + m]
        # make_room(m) before pushing m rows at once (as the engine does for a chunk)
        for _, y, w, values in chunk:
            s.classes.encode(y)
        h.resize(len(registry), len(s.classes), registry.n_numeric, registry.n_categorical)
        kept = h.stored + m - h.capacity  # rows before this one will be overwritten
        before = registry.synced.copy()
        registry.make_room(m, h, s.classes)
        numeric = np.array([v.kind == "numeric" for v in registry.variables])
        assert np.all(registry.synced[numeric] >= kept), "a summary would lose a row it has not seen"
        untouched = before >= kept
        assert registry.synced[untouched].tolist() == before[untouched].tolist(), "fed without need"
        assert np.all(registry.synced[~untouched] == h.stored)
        s.assert_fed(np.flatnonzero(~untouched & numeric).tolist())
        for _, y, w, values in chunk:
            s.row(y, w, values, make_room=False)
        check(registry, h.stored, len(h))
        position += m
        if position % 7 == 0 and len(registry) < len(kinds):
            s.add()
    registry.feed(np.arange(len(registry)), h, s.classes)  # nothing was lost, nothing counted twice
    s.assert_fed(range(len(registry)))


def test_make_room_does_nothing_while_the_history_has_room():
    s = Stream(["GKClass"], capacity=5)
    for i in range(5):
        s.row("a", 1.0, [float(i)])  # make_room(1) before each push
    assert s.registry.synced.tolist() == [0] and s.registry.variables[0].summary.n == 0
    s.row("a", 1.0, [5.0])  # the first row is overwritten: fed just before
    assert s.registry.synced.tolist() == [5] and s.registry.variables[0].summary.n == 5


def test_check_catches_broken_states():
    s = Stream(["GKClass", "Categorical", "CPiD"], capacity=4)
    s.add()
    s.add()
    for i in range(6):
        s.row("ab"[i % 2], 1.0, [float(i), float(i), float(i)])
    stored, size = s.history.stored, len(s.history)
    check(s.registry, stored, size)
    assert s.registry.synced.tolist() == [4, 4, 4]

    def too_old(r):  # a row the summary never saw is gone from the history
        r.synced[:] = stored - size - 1
        r.synced_min = stored - size - 1

    for breakage in (lambda r: r.synced.__setitem__(0, stored + 1), too_old):  # the clock: ahead, or behind the history
        broken = pickle.loads(pickle.dumps(s.registry))
        breakage(broken)
        broken._check()
        with pytest.raises(AssertionError):
            broken._check_clock(stored, size)
    breakages = [
        lambda r: setattr(r, "synced_min", r.synced_min + 1),
        lambda r: setattr(r, "column", np.array([0, 0, 0], dtype=np.intp)),
        lambda r: setattr(r, "count", np.array([1.0, -1.0, 0.0])),
        lambda r: setattr(r, "next_rebuild", np.array([1.0, 0.0, 1.0])),
        lambda r: setattr(r, "count", np.zeros(2)),
        lambda r: r.index.__setitem__(0, 2),  # a name pointing at another variable
        lambda r: setattr(r, "n_numeric", 1),
    ]
    for breakage in breakages:
        broken = pickle.loads(pickle.dumps(s.registry))
        breakage(broken)
        with pytest.raises(AssertionError):
            broken._check()


def test_remove_renumbers_the_variables_and_their_raw_columns():
    registry = Registry()
    kinds = ["numeric", "categorical", "numeric", "numeric", "categorical", "categorical"]
    registry.add_many([(f"f{k}", kind, summaries.GKClass() if kind == "numeric" else summaries.Categorical()) for k, kind in enumerate(kinds)], 5)
    registry.count[:] = np.arange(6)
    registry.synced[:] = [5, 4, 3, 5, 2, 5]
    new_index, numeric_columns, categorical_columns = registry.remove(np.array([0, 4]))
    assert new_index.tolist() == [-1, 0, 1, 2, -1, 3]
    assert numeric_columns.tolist() == [1, 2] and categorical_columns.tolist() == [0, 2]  # the raw columns kept
    assert list(registry.index) == ["f1", "f2", "f3", "f5"] and registry.column.tolist() == [0, 0, 1, 1]
    assert registry.count.tolist() == [1, 2, 3, 5] and registry.synced.tolist() == [4, 3, 5, 5] and registry.synced_min == 3
    registry._check()
    assert registry.add("f0", "numeric", summaries.GKClass(), 6) == 4  # a removed feature comes back as a new variable
    registry._check()


# ---------------------------------------------------------------------- verbs the engine calls
def three_variables() -> Registry:
    registry = Registry()
    registry.add_many([("a", "numeric", summaries.Gaussian()), ("b", "categorical", summaries.Categorical()),
                       ("c", "numeric", summaries.Gaussian())], 4)  # fmt: skip
    return registry


def test_count_row_counts_the_variables_a_row_holds():
    registry = three_variables()
    registry.count_row(Row(np.array([2], dtype=np.intp), np.array([1.0]), [(1, "x")], [], False))
    assert registry.count.tolist() == [0.0, 1.0, 1.0]
    numeric = Registry()
    numeric.add_many([("a", "numeric", summaries.Gaussian()), ("b", "numeric", summaries.Gaussian())], 0)
    numeric.count_row(Row(np.array([0, 1], dtype=np.intp), np.array([1.0, 2.0]), [], [], False))  # every variable, all numeric
    assert numeric.count.tolist() == [1.0, 1.0]


def test_count_many_rebuilt_and_rebuild_all_soon_move_the_thresholds():
    registry = three_variables()
    registry.count_many(np.array([0, 2]), np.array([4.0, 9.0]))
    registry.count_many(1, 2)
    assert registry.count.tolist() == [4.0, 2.0, 9.0]
    registry.rebuilt(np.array([0, 2]), np.array([2.0, 3.0]))
    assert registry.next_rebuild.tolist() == [6.0, 1.0, 12.0]
    registry.rebuild_all_soon()
    assert registry.next_rebuild.tolist() == [1.0, 1.0, 1.0]
    registry._check()


def test_renew_and_all_synced_restart_the_variables_and_their_clock():
    registry = three_variables()
    registry.count_many(np.arange(3), 5.0)
    registry.rebuilt(np.arange(3), np.full(3, 2.0))
    fresh = [Variable(v.name, v.kind, v.summary.clone()) for v in registry.variables]
    registry.renew(fresh, np.array([1.0, 0.0, 2.0]), np.array([7, 9, 7], dtype=np.int64))
    assert registry.variables == fresh and registry.index == {"a": 0, "b": 1, "c": 2}
    assert registry.count.tolist() == [1.0, 0.0, 2.0] and registry.next_rebuild.tolist() == [1.0, 1.0, 1.0]
    assert registry.synced.tolist() == [7, 9, 7] and registry.synced_min == 7 and registry.synced.dtype == np.int64
    registry.all_synced(12)
    assert registry.synced.tolist() == [12, 12, 12] and registry.synced_min == 12
    registry._check()
    empty = Registry()
    empty.all_synced(5)
    assert empty.synced.shape == (0,) and empty.synced_min == 0
