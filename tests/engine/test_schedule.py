"""``engine.schedule.Schedule`` alone: gaps, rebuilds falling due (and the ``quiet`` countdown that
skips checks), the learner's step sizes, and ``chunk_end`` against a brute-force ``learn_one`` loop
run with the same parts."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import summaries
from wnb_stream.engine.classes import Classes
from wnb_stream.engine.registry import Registry
from wnb_stream.engine.rows import feature_order
from wnb_stream.engine.schedule import STEP_GROWTH, Schedule


def check(schedule, registry):
    schedule._check()
    schedule._check_countdown(registry)


# ---------------------------------------------------------------------- gaps
def test_gap_values():
    schedule = Schedule(growth=0.5, every=100)
    assert schedule.gap(np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 199.0, 200.0, 201.0, 1e6])).tolist() == [
        1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 5.0, 99.0, 100.0, 100.0, 100.0,
    ]  # fmt: skip
    assert Schedule(growth=2.0, every=7).gap(np.array([0.0, 1.0, 3.0, 4.0])).tolist() == [1.0, 2.0, 6.0, 7.0]
    assert Schedule(growth=0.1, every=1).gap(np.array([1e9])).tolist() == [1.0]
    assert float(schedule.gap(12.0)) == 6.0  # a scalar count


@given(st.floats(0.01, 10.0), st.integers(1, 1000), st.lists(st.integers(0, 10**6), min_size=1, max_size=20))
def test_gap_is_the_growth_clipped_to_one_and_every(growth, every, counts):
    gaps = Schedule(growth, every).gap(np.array(counts, dtype=float))
    assert gaps.tolist() == [float(min(max(1, math.floor(c * growth)), every)) for c in counts]


# ---------------------------------------------------------------------- rebuilds
def parts(counts, thresholds, seen=(), class_thresholds=()):
    """A registry with variables of these counts and thresholds, classes of these counts and thresholds."""
    registry = Registry()
    for k, (count, threshold) in enumerate(zip(counts, thresholds)):
        registry.add(f"f{k}", "numeric", summaries.Gaussian(), 0)
        registry.count[k], registry.next_rebuild[k] = count, threshold
    classes = Classes()
    for j, (s, threshold) in enumerate(zip(seen, class_thresholds)):
        classes.encode(j)
        classes.count_many(np.full(int(s), j, dtype=np.intp), np.ones(int(s)))
        classes.next_rebuild[j] = threshold
    return registry, classes


def rebuild_due(schedule, registry, classes, rebuild) -> None:
    """What ``Engine._rebuild_due`` does with the schedule's answer: ``rebuild(indices)`` the
    variables due (also none, when a class is due), move the classes' thresholds on, count down."""
    due = schedule.rebuilds_due(registry, classes)
    if due is None:
        return
    indices, every = due
    if every or len(indices):
        rebuild(indices)
    if every:
        classes.rebuilt(schedule.class_gap(classes.seen))
    schedule.count_down(registry, classes)


def rebuilt(schedule, registry, k) -> None:
    """Variable ``k`` was rebuilt: its next threshold, as the engine sets it."""
    ks = np.array([k], dtype=np.intp)
    registry.rebuilt(ks, schedule.gap(registry.count[ks]))


class Calls:
    """A ``rebuild`` callback: records its calls and, like the engine's, sets the next thresholds."""

    def __init__(self, schedule, registry, skip=()):
        self.schedule, self.registry, self.skip, self.calls = schedule, registry, set(skip), []

    def __call__(self, indices):
        assert isinstance(indices, np.ndarray) and indices.dtype.kind == "i"
        self.calls.append(indices.tolist())
        for k in indices.tolist():
            if k not in self.skip:  # the engine skips a variable with no weight yet
                rebuilt(self.schedule, self.registry, k)


def test_rebuild_due_rebuilds_the_variables_due():
    schedule = Schedule(growth=0.5, every=100)
    registry, classes = parts([3, 5, 8, 2], [3, 6, 8, 9], seen=[4, 2], class_thresholds=[6, 5])
    rebuild = Calls(schedule, registry)
    rebuild_due(schedule, registry, classes, rebuild)
    assert rebuild.calls == [[0, 2]]
    assert registry.next_rebuild.tolist() == [3 + 1, 6, 8 + 4, 9]
    assert classes.next_rebuild.tolist() == [6, 5]  # no class due: class thresholds unchanged
    # the countdown: the smallest gap left over variables and classes
    assert schedule.quiet == 1  # variable 1: 6 - 5
    check(schedule, registry)


def test_a_class_due_rebuilds_every_variable():
    schedule = Schedule(growth=0.5, every=100)
    registry, classes = parts([3, 5, 9], [9, 9, 9], seen=[10, 2, 7], class_thresholds=[11, 2, 9])
    rebuild = Calls(schedule, registry, skip={2})
    rebuild_due(schedule, registry, classes, rebuild)
    assert rebuild.calls == [[0, 1, 2]]
    assert classes.next_rebuild.tolist() == [10 + 5, 2 + 1, 7 + 3]  # every class restarts: seen + gap(seen)
    assert registry.next_rebuild.tolist() == [3 + 1, 5 + 2, 9]  # variable 2 was skipped (no weight)
    assert schedule.quiet == 0  # variable 2 is still due: checked at the next row


def test_a_class_due_without_variables_calls_rebuild_with_none():
    schedule = Schedule(growth=0.5, every=100)
    registry, classes = parts([], [], seen=[1], class_thresholds=[0])
    rebuild = Calls(schedule, registry)
    rebuild_due(schedule, registry, classes, rebuild)
    assert rebuild.calls == [[]] and classes.next_rebuild.tolist() == [2.0] and schedule.quiet == 1


def test_nothing_is_checked_while_the_countdown_runs():
    schedule = Schedule(growth=0.5, every=100)
    registry, classes = parts([5], [5], seen=[5], class_thresholds=[5])
    rebuild = Calls(schedule, registry)
    schedule.quiet = 2
    rebuild_due(schedule, registry, classes, rebuild)
    assert rebuild.calls == [] and schedule.quiet == 2 and classes.next_rebuild.tolist() == [5]
    schedule.quiet = 0
    rebuild_due(schedule, registry, classes, rebuild)
    assert rebuild.calls == [[0]]
    schedule.quiet = -3  # a chunk of several rows overshoots: checked too
    registry.count[0] = registry.next_rebuild[0]
    rebuild_due(schedule, registry, classes, rebuild)
    assert rebuild.calls == [[0], [0]] and schedule.quiet >= 0
    check(schedule, registry)
    with pytest.raises(AssertionError):  # a countdown longer than a variable's gap
        schedule.quiet = int(registry.next_rebuild[0] - registry.count[0]) + 1
        check(schedule, registry)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 30)), max_size=6),
    st.lists(st.integers(1, 20), min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 3), st.lists(st.booleans(), min_size=6, max_size=6)), max_size=80),
    st.sampled_from([0.3, 0.5, 1.0, 2.0]),
    st.integers(1, 20),
    st.sets(st.integers(0, 5), max_size=2),
)
def test_the_countdown_never_skips_a_rebuild(variables, seen, rows, growth, every, skip):
    """With ``quiet`` the checks are skipped; without it, every row is checked: the same rebuilds."""
    logs = []
    for use_countdown in (True, False):
        schedule = Schedule(growth, every)
        registry, classes = parts([c for c, _ in variables], [c + g for c, g in variables], seen, [s + 1 for s in seen])
        rebuild = Calls(schedule, registry, skip)
        log = []
        for r, (j, present) in enumerate(rows):
            j %= len(seen)
            classes.count_one(j, 1.0)  # a row adds at most 1 to each count
            registry.count[np.array(present[: len(registry)], dtype=bool)] += 1
            schedule.quiet -= 1
            if not use_countdown:
                schedule.quiet = 0
            if schedule.quiet > 0:  # the claim: nothing can be due while the countdown runs
                assert not np.any(registry.count >= registry.next_rebuild)
                assert not np.any(classes.seen >= classes.next_rebuild)
            before = len(rebuild.calls)
            rebuild_due(schedule, registry, classes, rebuild)
            log += [(r, call) for call in rebuild.calls[before:]]
            check(schedule, registry)
        logs.append((log, registry.next_rebuild.tolist(), classes.next_rebuild.tolist()))
    assert logs[0] == logs[1]


def test_rebuilt_sets_the_next_threshold():
    schedule = Schedule(growth=0.5, every=10)
    registry, _ = parts([0, 7, 40], [1, 1, 1])
    for k in range(3):
        rebuilt(schedule, registry, k)
    assert registry.next_rebuild.tolist() == [1.0, 7 + 3, 40 + 10]


# ---------------------------------------------------------------------- learner steps
def step_sizes(target: int, rows: int, history_size: int = 5000) -> list:
    """The sizes of the steps of ``rows`` rows, a window of ``history_size`` rows."""
    schedule = Schedule(growth=0.5, every=100)
    sizes = []
    for seen in range(1, rows + 1):
        schedule.pending += 1
        m = schedule.step_due(target)
        if m:
            assert m == schedule.pending
            sizes.append(m)
            schedule.stepped(target, min(seen, history_size), full=seen >= history_size)
            assert schedule.pending == 0
    return sizes


@pytest.mark.parametrize(
    "target, expected",
    [
        (1000, [32, 32, 32, 48, 72, 108, 162, 243, 365, 547, 821]),
        (100, [32, 32, 32, 48, 72] + [100] * 27),
        (50, [32, 32, 32, 48] + [50] * 57),
        (32, [32] * 93),
        (20, [20] * 150),
        (2, [2] * 1500),
        (1, [1] * 3000),
    ],
)
def test_step_sizes_grow_with_the_window_up_to_the_batch_size(target, expected):
    assert step_sizes(target, 3000) == expected


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 2000), st.integers(1, 5000))
def test_step_sizes_property(target, history_size):
    """Each step falls due once the window has grown by half (at least the first size), until the
    size is the batch size: weights are never fitted on a window of less than 2/3 of the rows.
    A full window grows no more: the size doubles up to the batch size."""
    sizes = step_sizes(target, 4 * target + 200, history_size)
    first = min(target, 32) if target > 1 else 1
    assert sizes[0] == first
    seen = np.cumsum(sizes)
    for a, size, b in zip(seen, sizes, sizes[1:]):
        if a < history_size:
            assert b == min(target, max(first, math.ceil(STEP_GROWTH * a)))
            assert a + b <= max(a + first, math.ceil((1 + STEP_GROWTH) * a))  # the window grew by half at most
        else:
            assert b == min(target, 2 * size)
    assert sizes[-1] == target


# ---------------------------------------------------------------------- chunks of a mini-batch
class Model:
    """The schedule's part of a model: classes, variables (with the weight their summary has seen),
    the schedule, and a log of what a ``learn_one`` loop does (the engine's order, no summaries)."""

    def __init__(self, growth, every, target):
        self.classes, self.registry, self.schedule = Classes(), Registry(), Schedule(growth, every)
        self.target = target
        self.held = 0  # rows learned: the window's rows (the engine's window is at least this long here)
        self.weight: list[float] = []  # summary.n of each variable
        self.log: list = []

    def rebuild(self, row):
        def call(indices):
            done = [k for k in indices.tolist() if self.weight[k] > 0]  # the engine skips the others
            for k in done:
                rebuilt(self.schedule, self.registry, k)
            if done:
                self.log.append((row, "rebuild", tuple(done)))

        return call

    def add(self, name, row):
        self.registry.add(name, "numeric", summaries.Gaussian(), 0)
        self.weight.append(0.0)
        self.schedule.rebuild_all_soon()
        self.log.append((row, "variable", name))

    def step(self, row):
        m = self.schedule.step_due(self.target)
        if m:
            self.log.append((row, "step", m))
            self.schedule.stepped(self.target, self.held)

    def learn_one(self, row, y, w, new, present):
        """Row ``row``: class ``y``, weight ``w``; features ``new`` created, ``present`` counted."""
        j = self.classes.index.encode(y)
        if self.classes.grow():
            self.schedule.rebuild_all_soon()
            self.log.append((row, "class", y))
        self.classes.count_one(j, w)
        self.schedule.tick()
        for name in sorted(set(new) - set(self.registry.index), key=feature_order):
            self.add(name, row)
        for name in present:
            k = self.registry.index[name]
            self.registry.count_many(k, 1)
            self.weight[k] += w
        rebuild_due(self.schedule, self.registry, self.classes, self.rebuild(row))
        self.schedule.queue()
        self.held += 1
        self.step(row)

    def learn_batch(self, labels, weights, columns, batch_columns):
        """``Engine.learn_frame``'s cuts and ``_learn_chunk``'s bulk updates; the chunks' last rows."""
        n = len(labels)
        positions: dict = {}
        for r, y in enumerate(labels):
            positions.setdefault(y, []).append(r)
        positions = {y: np.array(rows, dtype=np.intp) for y, rows in positions.items()}
        ends, t = [], 0
        while t < n:
            end = self.schedule.chunk_end(t, n, positions, batch_columns, self.registry, self.classes, self.target)
            assert t <= end < n
            lo, hi = t, end + 1
            for r in range(lo, hi):
                self.classes.index.encode(labels[r])
                if len(self.classes.index) > len(self.classes.counts):
                    self.log.append((r, "class", labels[r]))
            if self.classes.grow():
                self.schedule.rebuild_all_soon()
            self.classes.count_many(np.array([self.classes.index.position[y] for y in labels[lo:hi]], dtype=np.intp), np.array(weights[lo:hi]))
            self.schedule.tick(hi - lo)
            new = [name for name, start in batch_columns if name not in self.registry.index and lo <= start < hi]
            for name in sorted(new, key=feature_order):
                self.add(name, columns[name])
            for name, start in batch_columns:
                k = self.registry.index.get(name)
                since = max(lo, start)
                if k is not None and since < hi:
                    self.registry.count_many(k, hi - since)
                    self.weight[k] += float(np.sum(weights[since:hi]))
            rebuild_due(self.schedule, self.registry, self.classes, self.rebuild(hi - 1))
            self.schedule.queue(hi - lo)
            self.held += hi - lo
            self.step(hi - 1)
            ends.append(end)
            t = hi
        return ends


@st.composite
def batches(draw):
    growth = draw(st.sampled_from([0.2, 0.5, 1.0]), label="growth")
    every = draw(st.sampled_from([1, 2, 5, 30, 1000]), label="every")
    target = draw(st.sampled_from([1, 5, 33, 40, 100, 100]), label="target")
    names = [f"f{i}" for i in range(6)]
    warm = draw(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from([1.0, 0.0, 2.0]), st.sets(st.sampled_from(names[:4]))), max_size=60), label="warm-up")
    n = draw(st.integers(1, 120), label="rows")
    labels = draw(st.lists(st.sampled_from("abcde"), min_size=n, max_size=n), label="labels")
    weights = draw(st.lists(st.sampled_from([1.0, 1.0, 0.0, 0.5]), min_size=n, max_size=n), label="weights")
    # the batch's columns: a known feature counts from row 0; a new one from its first value (or never)
    starts = {name: draw(st.one_of(st.just(-1), st.integers(0, n - 1))) for name in draw(st.sets(st.sampled_from(names)), label="columns")}
    return growth, every, target, warm, labels, weights, starts


@settings(max_examples=examples(300), deadline=None)
@given(batches())
def test_chunks_end_where_a_learn_one_loop_registers_rebuilds_or_steps(batch):
    growth, every, target, warm, labels, weights, starts = batch
    model = Model(growth, every, target)
    # a random past: classes, variables (some seen with weight 0 only), thresholds, pending rows
    for y, w, features in warm:
        model.learn_one(-1, y, w, features, features)
    model.log = []
    one = pickle.loads(pickle.dumps(model))
    many = pickle.loads(pickle.dumps(model))
    # as Engine.learn_frame: a known column takes part from row 0, a new one from its first value
    batch_columns = [(name, 0 if name in model.registry.index else start) for name, start in starts.items()]
    columns = dict(batch_columns)
    for r, (y, w) in enumerate(zip(labels, weights)):
        new = [name for name, start in batch_columns if start == r]
        present = [name for name, start in batch_columns if 0 <= start <= r]
        one.learn_one(r, y, w, new, present)
    ends = many.learn_batch(labels, weights, columns, batch_columns)
    # only a chunk's last row registers a class or a variable, rebuilds or steps: the same events
    assert {row for row, _, _ in many.log} <= set(ends)
    assert many.log == one.log
    assert one.classes.labels == many.classes.labels and one.classes.seen.tolist() == many.classes.seen.tolist()
    assert one.classes.next_rebuild.tolist() == many.classes.next_rebuild.tolist()
    assert list(one.registry.index) == list(many.registry.index)
    assert one.registry.count.tolist() == many.registry.count.tolist()
    assert one.registry.next_rebuild.tolist() == many.registry.next_rebuild.tolist()
    assert (one.schedule.pending, one.schedule.step_size) == (many.schedule.pending, many.schedule.step_size)
    event(f"chunks per row: {len(ends) / len(labels):.1f}")


def test_class_gap_is_the_gap_below_64_classes_and_floored_at_j_over_32_above():
    from wnb_stream.engine.schedule import CLASS_SPREAD

    schedule = Schedule(growth=0.5, every=100)
    for J in (1, 2, 5, 31, 32, 63):
        seen = np.arange(J, dtype=float)
        np.testing.assert_array_equal(schedule.class_gap(seen), schedule.gap(seen))
    seen = np.array([0.0, 1.0, 3.0, 40.0, 1e6] + [1.0] * 995)
    assert CLASS_SPREAD == 32 and schedule.class_gap(seen)[:5].tolist() == [31.0, 31.0, 31.0, 31.0, 100.0]


def test_many_classes_rebuild_every_variable_at_new_classes_and_rarely_else():
    # 300 classes (about 220 seen), 3 variables: the class-triggered rebuilds of every variable are
    # the new classes plus at most one per ⌊J/32⌋ examples, and learn_many reaches the learn_one
    # model. (1,000 classes over 600 rows checked the same at 8 times the cost.)
    from wnb_stream import WeightedNaiveBayes, weights

    n_rows = 400
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 300, n_rows)
    rows = [({"a": float(y % 7) + rng.normal(), "b": float(y % 3), "c": "uvw"[y % 3]}, int(y)) for y in labels]
    one = WeightedNaiveBayes(optimizer=weights.Uniform(), history_size=300)
    calls = []
    original = one._engine._rebuild
    one._engine._rebuild = lambda indices: (calls.append(len(indices)), original(indices))[1]
    for x, y in rows:
        one.learn_one(x, y)
    n_new = len(set(labels.tolist()))
    assert n_new >= 200
    full = sum(1 for n in calls if n == 3)
    assert full <= n_new + 1 + n_rows // (n_new // 32) + 12  # + the variables' own schedule (≈ log_1.5 n_rows)
    import pandas as pd

    many = WeightedNaiveBayes(optimizer=weights.Uniform(), history_size=300)
    X = pd.DataFrame([x for x, _ in rows])
    for lo in range(0, n_rows, 97):
        many.learn_many(X.iloc[lo : lo + 97], [y for _, y in rows[lo : lo + 97]])
    np.testing.assert_array_equal(one._engine.classes.next_rebuild, many._engine.classes.next_rebuild)
    for x, _ in rows[-5:]:
        assert one.predict_proba_one(x) == many.predict_proba_one(x)


def test_tick_queue_and_restart_run_the_counters():
    schedule = Schedule(growth=0.5, every=100)
    registry, classes = parts([3, 5], [9, 8], seen=[4], class_thresholds=[10])
    schedule.count_down(registry, classes)
    assert schedule.quiet == 3  # variable 1: 8 - 5
    schedule.tick()
    schedule.tick(2)
    assert schedule.quiet == 0 and schedule.rebuilds_due(registry, classes)[0].tolist() == []
    schedule.tick(4)
    schedule.count_down(registry, classes)
    schedule.rebuild_all_soon()
    assert schedule.quiet == 0
    schedule.queue()
    schedule.queue(6)
    assert schedule.step_due(32) == 0 and schedule.pending == 7 and schedule.step_size == 32
    schedule.restart(40)
    assert (schedule.quiet, schedule.pending, schedule.step_size) == (0, 40, 0)
    assert schedule.step_due(32) == 40


def test_rebuilds_due_answers_nothing_while_the_countdown_runs():
    schedule = Schedule(growth=0.5, every=100)
    registry, classes = parts([5], [5], seen=[5], class_thresholds=[5])
    schedule.quiet = 1
    assert schedule.rebuilds_due(registry, classes) is None
    schedule.tick()
    indices, every = schedule.rebuilds_due(registry, classes)
    assert indices.tolist() == [0] and every  # the class is due: every variable
    classes.rebuilt(schedule.class_gap(classes.seen))
    indices, every = schedule.rebuilds_due(registry, classes)
    assert indices.tolist() == [0] and not every  # the variable alone
