"""``GKClass.take_many``: many summaries take a few values each and settle, bit for bit as each
would with ``update_coded`` then ``settle`` (what a rebuild of a sparse model did per variable)."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from summary_cases import lay_out

from wnb_stream.summaries import GKClass

LABEL_SETS = [[3, 1, 7], ["b", "a", "c"], [True, False], [(1, 2), "x", 2.5]]
MAKERS = [
    GKClass,  # the classifier's default
    lambda: GKClass(epsilon=0.2),  # compresses after a few values
    lambda: GKClass(epsilon=0.01, buffer_size=3),  # blocks beyond the buffer: the usual path
    lambda: GKClass(max_tuples=4),  # a budget: the usual path
]


def raw(summary: GKClass) -> tuple:
    """Everything a ``GKClass`` holds, as bytes and Python values (``==`` is bit for bit)."""
    arrays = (summary._values, summary._g, summary._delta, summary._at_value, summary._counts, summary._missing)
    buffers = (summary._buffer_values, summary._buffer_classes, summary._buffer_weights)
    return (
        tuple(summary._classes.labels),
        tuple((a.shape, a.tobytes()) for a in arrays),
        tuple(bytes(b) for b in buffers),
        summary._weight.hex(),
        summary._epsilon,
    )


values_ = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 2.5, float("nan")]), st.floats(-3, 3, allow_nan=False))
weights_ = st.sampled_from([0.0, 1.0, 0.25, 3.0, 1e-3])
entry = st.tuples(values_, st.integers(0, 2), weights_)


@settings(max_examples=examples(80), deadline=None)
@given(
    label_set=st.integers(0, len(LABEL_SETS) - 1),
    summaries=st.lists(
        st.tuples(
            st.integers(0, len(MAKERS) - 1),
            st.lists(entry, max_size=12),  # what the summary took before (flushed or not)
            st.booleans(),  # settled before
            st.sampled_from([1.0, 0.5]),  # a decay after
            st.lists(entry, max_size=8),  # the feed
        ),
        min_size=1,
        max_size=8,
    ),
    shuffle=st.randoms(use_true_random=False),
)
def test_take_many_is_update_coded_then_settle(label_set, summaries, shuffle):
    names = LABEL_SETS[label_set]
    typed = np.empty(len(names), dtype=object)
    typed[:] = names
    if label_set < 3:
        typed = np.array(names)
    J = len(names)
    made, segments = [], []
    for which, before, settled, factor, feed in summaries:
        summary = MAKERS[which]()
        for value, code, weight in before:
            summary.update(value, names[code % J], weight)
        if settled:
            summary.settle()
        summary.decay(factor)
        made.append(summary)
        segments.append([(value, code % J, weight) for value, code, weight in feed])
    # the segments laid out in some order in one array, as a history's entries are
    order = list(range(len(made)))
    shuffle.shuffle(order)
    values, codes, weights, starts, ends = lay_out(segments, order)

    expected = copy.deepcopy(made)
    for summary, a, b in zip(expected, starts, ends):
        summary.update_coded(values[a:b], codes[a:b], typed, weights[a:b])
        summary.settle()
    GKClass.take_many(made, values, codes, (names, typed), weights, starts, ends)
    for got, want in zip(made, expected):
        assert raw(got) == raw(want)
        assert not got.problems()


def test_a_loop_of_update_gives_the_same_summaries():
    """What a feed of a few rows did before (``update`` per value, then ``settle``)."""
    rng = np.random.default_rng(3)
    names = ["no", "yes"]
    for _ in range(20):
        made = [GKClass() for _ in range(6)]
        sizes = rng.integers(0, 5, len(made))
        ends = np.cumsum(sizes).tolist()
        starts = [end - size for end, size in zip(ends, sizes.tolist())]
        values = rng.choice([0.5, 1.0, 2.0, np.nan], ends[-1])
        codes = rng.integers(0, 2, ends[-1])
        weights = rng.choice([1.0, 0.5, 0.0], ends[-1])
        expected = copy.deepcopy(made)
        for summary, a, b in zip(expected, starts, ends):
            for value, code, weight in zip(values[a:b].tolist(), codes[a:b].tolist(), weights[a:b].tolist()):
                summary.update(value, names[code], weight)
            summary.settle()
        GKClass.take_many(made, values, codes, (names, np.array(names)), weights, starts, ends)
        assert [raw(s) for s in made] == [raw(s) for s in expected]


def test_many_summaries_share_one_compiled_call():
    """Two class orders and two widths in one call (a summary that saw one class, one that saw
    both in either order)."""
    names = ["a", "b"]
    made = [GKClass() for _ in range(4)]
    made[1].update(1.0, "b")
    made[2].update(1.0, "b")
    made[2].update(2.0, "a")
    made[3].update(5.0, "a")
    values = np.array([1.0, 1.0, 3.0, 2.0, 0.5, 5.0, 5.0])
    codes = np.array([0, 1, 1, 0, 0, 1, 0])
    weights = np.ones(7)
    starts, ends = [0, 2, 3, 5], [2, 3, 5, 7]
    expected = copy.deepcopy(made)
    for summary, a, b in zip(expected, starts, ends):
        summary.update_coded(values[a:b], codes[a:b], np.array(names), weights[a:b])
        summary.settle()
    GKClass.take_many(made, values, codes, (names, np.array(names)), weights, starts, ends)
    assert [raw(s) for s in made] == [raw(s) for s in expected]
    assert [s.classes for s in made] == [("a", "b"), ("b",), ("b", "a"), ("a", "b")]


floats_ = st.one_of(st.floats(-1e3, 1e3), st.sampled_from([0.0, -0.0, 1e-9, float("inf"), float("-inf"), float("nan")]))


@settings(max_examples=examples(300), deadline=None)
@given(
    pairs=st.lists(st.tuples(floats_, floats_, st.sampled_from([0.0, 1e-12, 1e-9, 1e-3])), min_size=0, max_size=6),
    rtol=st.sampled_from([0.0, 1e-9, 1e-3]),
    atol=st.sampled_from([0.0, 1e-9, 1.0]),
)
def test_all_close_is_numpys_allclose(pairs, rtol, atol):
    """The summaries' checks (a file's load runs them for every summary) use ``all_close``."""
    from wnb_stream.summaries.base import all_close

    found = np.array([a for a, _, _ in pairs], dtype=float)
    expected = np.array([b for _, b, _ in pairs], dtype=float)
    near = found + np.array([d for _, _, d in pairs], dtype=float)  # values within (or just beyond) a tolerance
    for x in (found, near):
        assert all_close(x, expected, rtol, atol) == bool(np.allclose(x, expected, rtol=rtol, atol=atol))
