"""The batch verbs of ``Summary`` (``wnb_stream.summaries.base``), on every summary and configuration.

The engine calls them on the type of each group of summaries and never names a concrete class:
``take_rows`` (a feed from the history), ``take_many`` (a rebuild's feed and settle of many
summaries), ``settle``, ``n_atoms``, ``aligned_table`` and ``stack_tables`` (a rebuild's tables).
The generic defaults give what the single-summary path gives, and ``GKClass``'s compiled
overrides give what the defaults give, bit for bit; a subclass of ``GKClass`` inherits them.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from summary_cases import CONFIGS, LABEL_POOLS, assert_same_table, dumps, lay_out, moments_rtol

from wnb_stream import WeightedNaiveBayes, _threads
from wnb_stream.summaries import Bins, GKClass, Summary, gk_batch
from wnb_stream.summaries.base import FEW_ROWS

BINNED = [name for name in CONFIGS if isinstance(CONFIGS[name]().table(), Bins)]  # GK and CPiD
OTHER = [name for name in CONFIGS if name not in BINNED]

# what a history holds: floats (NaN missing), dyadic weights (exact sums), class codes
history_values = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, math.nan]), st.integers(-4, 4).map(float))
history_weights = st.sampled_from([1.0, 1.0, 0.0, 0.25, 0.5, 2.0])


@st.composite
def groups(draw, name: str):
    """Summaries of one configuration, each fed a stream before, and the rows each takes next, laid
    out in one array as a history's entries are: ``(summaries, values, codes, labels, weights,
    starts, ends)``."""
    names = LABEL_POOLS[draw(st.integers(0, len(LABEL_POOLS) - 1))]
    typed = np.empty(len(names), dtype=object)
    typed[:] = names
    entry = st.tuples(history_values, st.integers(0, len(names) - 1), history_weights)
    made, segments = [], []
    for _ in range(draw(st.integers(1, 5))):
        summary = CONFIGS[name]()
        for value, code, weight in draw(st.lists(entry, max_size=12)):
            summary.update(value, names[code], weight)
        made.append(summary)
        segments.append(draw(st.lists(entry, max_size=2 * FEW_ROWS)))  # a handful, or more
    values, codes, weights, starts, ends = lay_out(segments, draw(st.permutations(range(len(made)))))
    return made, values, codes, (tuple(names), typed), weights, starts, ends


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_take_many_gives_each_summary_a_loop_of_update(name, data):
    """``take_many`` of a type leaves each summary as ``take_rows`` then ``settle`` does, and its
    table as a loop of ``update`` on the same rows does (bit for bit; a Gaussian's moments up to
    rounding); ``take_rows`` is a loop of ``update`` for a handful of rows and ``update_coded``
    for more, bit for bit."""
    made, values, codes, labels, weights, starts, ends = data.draw(groups(name))
    names = labels[0]
    by_rows, by_loop = copy.deepcopy(made), copy.deepcopy(made)
    type(made[0]).take_many(made, values, codes, labels, weights, starts, ends)
    for summary, rows, loop, a, b in zip(made, by_rows, by_loop, starts, ends):
        rows.take_rows(values[a:b], codes[a:b], labels, weights[a:b])
        rows.settle()
        for value, code, weight in zip(values[a:b].tolist(), codes[a:b].tolist(), weights[a:b].tolist()):
            loop.update(value, names[code], weight)
        assert dumps(summary) == dumps(rows)
        assert_same_table(summary.table(), loop.table(), moments_rtol(loop))
        assert not summary.problems()
    if len(made) == 1 and ends[0] - starts[0] > FEW_ROWS:  # the batch path of take_rows
        coded = copy.deepcopy(by_loop[0])
        by_loop[0].update_coded(values, codes, labels[1], weights)
        coded.take_rows(values, codes, labels, weights)
        assert dumps(coded) == dumps(by_loop[0])


@pytest.mark.parametrize("name", [name for name in CONFIGS if name.startswith("gk")])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_gk_take_many_is_the_generic_default(name, data):
    """``GKClass.take_many`` (one compiled call for many summaries, or one per group of
    consecutive summaries in threads: ``PARALLEL_TUPLES``, forced here on any input and any
    number of cores) leaves the summaries that the generic default of ``Summary`` leaves, bit
    for bit, and so does ``settle_many`` (their buffers flushed the same way)."""
    made, values, codes, labels, weights, starts, ends = data.draw(groups(name))
    threads = data.draw(st.sampled_from([1, 2, 3]), label="threads")
    generic = copy.deepcopy(made)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gk_batch, "PARALLEL_TUPLES", 0 if threads > 1 else gk_batch.PARALLEL_TUPLES)
        patch.setattr(_threads, "cores", lambda: threads)
        GKClass.take_many(made, values, codes, labels, weights, starts, ends)
        Summary.take_many.__func__(GKClass, generic, values, codes, labels, weights, starts, ends)
        assert [dumps(s) for s in made] == [dumps(s) for s in generic]
        for summaries in (made, generic):  # pending buffers, flushed together or one by one
            for summary in summaries:
                summary.update(0.5, labels[0][0])
        GKClass.settle_many(made)
        Summary.settle_many.__func__(GKClass, generic)
    assert [dumps(s) for s in made] == [dumps(s) for s in generic]


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=20, deadline=None)
@given(data=st.data(), order=st.sampled_from([0, 1, 2]))
def test_tables_of_many_summaries_are_each_summarys_own(name, data, order):
    """``aligned_table`` is ``table().aligned(classes)``; ``stack_tables`` stacks those tables
    (bit for bit; ``GKClass``'s arrays as the generic default's); ``settle`` returns ``n`` and
    ``n_atoms`` counts the table's non-empty bins and the missing values; a summary whose table
    is not ``Bins`` cannot be stacked (``TypeError``)."""
    made = data.draw(groups(name))[0]
    pool = tuple(dict.fromkeys(c for s in made for c in s.classes)) + ("never seen",)
    classes = (pool, pool[::-1], pool[1:])[order]
    for summary in made:
        assert_same_table(summary.aligned_table(classes), summary.table().aligned(classes))
        assert summary.settle() == pytest.approx(summary.n, rel=1e-12, abs=1e-300)
    if name in OTHER:
        with pytest.raises(TypeError, match="stack_tables"):
            type(made[0]).stack_tables(made, classes)
        return
    bounds, counts, missing, lengths = type(made[0]).stack_tables(made, classes)
    generic = Summary.stack_tables.__func__(type(made[0]), made, classes)
    for got, want in zip((bounds, counts, missing, lengths), generic):
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for t, summary in enumerate(made):
        table = summary.table().aligned(classes)
        lo, hi = starts[t], starts[t + 1]
        assert bounds[lo:hi].tobytes() == table.upper_bounds.tobytes()
        assert counts[lo:hi].tobytes() == table.counts.tobytes() and missing[t].tobytes() == table.missing.tobytes()
        assert summary.n_atoms() == Summary.n_atoms(summary)


class SubGK(GKClass):
    """A subclass of ``GKClass`` defined here: the engine must treat it as it treats ``GKClass``."""


def test_a_subclass_of_gk_inherits_its_batch_kernels_and_results():
    for verb in ("take_many", "stack_tables"):
        assert getattr(SubGK, verb).__func__ is getattr(GKClass, verb).__func__ is not getattr(Summary, verb).__func__
    assert SubGK.aligned_table is GKClass.aligned_table and SubGK.skip_null_rebuilds
    rng = np.random.default_rng(7)
    values = rng.choice([0.0, 1.0, 2.0, 3.5, np.nan], 60)
    codes, weights = rng.integers(0, 2, 60), rng.choice([1.0, 0.5], 60)
    labels = (("a", "b"), np.array(["a", "b"]))
    starts, ends = [0, 5, 12, 40], [5, 12, 40, 60]
    sub, plain = [SubGK() for _ in starts], [GKClass() for _ in starts]
    SubGK.take_many(sub, values, codes, labels, weights, starts, ends)
    GKClass.take_many(plain, values, codes, labels, weights, starts, ends)
    for a, b in zip(SubGK.stack_tables(sub, ("b", "a")), GKClass.stack_tables(plain, ("b", "a"))):
        assert a.tobytes() == b.tobytes()


def test_a_model_of_a_gk_subclass_learns_as_one_of_gk():
    """The engine groups summaries by type and calls that type's verbs: a model whose numeric
    prototype is a subclass of ``GKClass`` (no class-identity test sends it elsewhere) predicts
    what a model of ``GKClass`` does, bit for bit, on a sparse stream whose absent features are
    0 (the rebuilds feed and settle many summaries at once, stack their tables and skip the ones
    proven null)."""
    rng = np.random.default_rng(3)
    rows = []
    for _ in range(400):
        y = bool(rng.random() < 0.4)
        x = {f"w{k}": float(rng.integers(1, 4)) for k in rng.choice(40, 4, replace=False).tolist() if rng.random() < 0.5 + 0.3 * y}
        rows.append((x, y))
    models = [WeightedNaiveBayes(numeric=prototype, absent=0.0, seed=1) for prototype in (GKClass(), SubGK())]
    for x, y in rows:
        answers = [model.predict_proba_one(x) for model in models]
        assert answers[0] == answers[1]
        for model in models:
            model.learn_one(x, y)
    assert all(type(v.summary) is SubGK for v in models[1]._engine.registry.variables)


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_merge_many_is_a_loop_of_merge(name, data):
    """``merge_many`` of a type (a merge of two models' shared summaries) leaves each summary as
    ``summary.merge(other)`` does, bit for bit, and each other summary as that merge leaves it;
    ``GKClass``'s compiled override as the generic default. Pairs of summaries fed other streams,
    other class sets, some empty, some with pending buffers, one merged with itself."""
    made = data.draw(groups(name))[0]
    others = data.draw(groups(name))[0]
    pairs = list(zip(made, others[: len(made)]))
    if data.draw(st.booleans(), label="one merged with itself") and len(made) > len(pairs):
        pairs.append((made[len(pairs)], made[len(pairs)]))
    loop = copy.deepcopy(pairs)
    type(made[0]).merge_many(pairs)
    for summary, other in loop:
        summary.merge(other)
    assert [(dumps(a), dumps(b)) for a, b in pairs] == [(dumps(a), dumps(b)) for a, b in loop]
    for summary, _ in pairs:
        assert not summary.problems()
    generic = copy.deepcopy(loop)
    Summary.merge_many.__func__(type(made[0]), generic)  # (merged once more: the default's loop)
    type(made[0]).merge_many(loop)
    assert [dumps(a) for a, _ in loop] == [dumps(a) for a, _ in generic]


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_settle_many_is_a_loop_of_settle(name, data):
    """``settle_many`` of a type (what a delta does before it is handed over) leaves each summary
    as its own ``settle`` does, bit for bit, and as the generic default's loop: pending buffers,
    budgets and other class sets included."""
    made = data.draw(groups(name))[0]
    loop, generic = copy.deepcopy(made), copy.deepcopy(made)
    type(made[0]).settle_many(made)
    for summary in loop:
        summary.settle()
    Summary.settle_many.__func__(type(made[0]), generic)
    assert [dumps(s) for s in made] == [dumps(s) for s in loop] == [dumps(s) for s in generic]


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_a_merge_only_reads_a_settled_other(name, data):
    """A settled summary merged into others (``merge`` and ``merge_many``) is not changed at all,
    bit for bit: a round merges the learners' settled deltas without copying them
    (``engine.merge.absorbed``, ``combined``)."""
    made, values, codes, labels, weights, starts, ends = data.draw(groups(name))
    others = data.draw(groups(name))[0]
    if data.draw(st.booleans(), label="merged into empty summaries"):
        made = [CONFIGS[name]() for _ in made]
    type(others[0]).settle_many(others)
    before = [dumps(other) for other in others]
    by_loop = copy.deepcopy(made)
    type(made[0]).merge_many(list(zip(made, others)))
    for summary, other in zip(by_loop, others):
        summary.merge(other)
    assert [dumps(other) for other in others] == before
    # nothing of the others is shared with the merged summaries: what they learn next stays theirs
    for summary in made + by_loop:
        summary.decay(0.5)
    type(made[0]).take_many(made, values, codes, labels, weights, starts, ends)
    type(by_loop[0]).take_many(by_loop, values, codes, labels, weights, starts, ends)
    assert [dumps(other) for other in others] == before


@pytest.mark.parametrize("name", [name for name in CONFIGS if name.startswith("gk")])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_gk_flush_many_is_a_loop_of_flush(name, data):
    """``gk_batch.flush_many`` (the buffers of a merge's summaries in one compiled call per class
    width) leaves each summary as its own ``_flush`` does, bit for bit: budgets, empty buffers and
    other class sets included."""
    from wnb_stream.summaries import gk_batch

    made = data.draw(groups(name))[0]
    loop = copy.deepcopy(made)
    gk_batch.flush_many(made)
    for summary in loop:
        summary._flush()
    assert [dumps(a) for a in made] == [dumps(b) for b in loop]
    assert all(not len(summary._buffer_values) and not summary.problems() for summary in made)


@pytest.mark.parametrize("threads", [1, 3])
def test_merge_many_of_summaries_with_the_classes_in_other_orders(threads, monkeypatch):
    """A round's merge: many summaries whose classes came in one order merged with others whose
    classes came in another order, some with a class the first ones never saw, and one pair
    whose summary has a pending buffer. ``GKClass.merge_many`` places the counts of the pairs
    that share their two orders in one step for all of them (``gk_batch._known_columns``),
    and runs the compiled merges of groups of consecutive summaries in ``threads`` threads
    (``PARALLEL_TUPLES`` lowered to 0): each summary as ``merge`` leaves it, bit for bit, and the
    others unchanged."""
    monkeypatch.setattr(gk_batch, "PARALLEL_TUPLES", 0)
    monkeypatch.setattr(_threads, "cores", lambda: threads)
    rng = np.random.default_rng(5)
    orders = (["a", "b", "c"], ["c", "a", "b"], ["b", "d", "a", "c"])

    def fed(order, n, epsilon=0.02):
        summary = GKClass(epsilon=epsilon)
        for label in order:  # the classes in this order
            summary.update(float(rng.normal()), label)
        for _ in range(n):
            summary.update(float(rng.normal()), order[int(rng.integers(len(order)))], float(rng.choice([1.0, 0.5])))
        return summary

    made = [fed(orders[0], 60, (0.01, 0.1)[t % 2]) for t in range(30)]  # (thresholds of the compress apart)
    others = [fed(orders[1 if t % 3 else 2], 40) for t in range(30)]
    for summary in made[1:] + others:
        summary.settle()
    loop, before = copy.deepcopy(list(zip(made, others))), [dumps(other) for other in others]
    GKClass.merge_many(list(zip(made, others)))
    for summary, other in loop:
        summary.merge(other)
    assert [dumps(summary) for summary in made] == [dumps(summary) for summary, _ in loop]
    assert [dumps(other) for other in others] == before
    assert all(summary.classes[:3] == ("a", "b", "c") for summary in made)
