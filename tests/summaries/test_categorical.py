"""Tests of the categorical summary and its sketches (``docs/algorithms/summaries.md#categorical``)."""

from __future__ import annotations

import collections
import copy
import math
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.summaries.categorical import Categorical
from wnb_stream.summaries.sketch import CountMinSketch, SpaceSaving, canonical_bytes, stable_hash

REPO = Path(__file__).resolve().parents[2]


def _state(summary: Categorical):
    heavy = None
    if summary._heavy is not None:
        heavy = [(v, s.count, s.error, s.class_counts) for v, s in summary._heavy.items()]
    sketch = None if summary._sketch is None else summary._sketch._table.tobytes()
    return pickle.dumps(
        (summary._classes.labels, summary._missing, summary._totals, summary._counts, sketch, heavy)
    )


def _feed_loop(summary, values, labels, weights=None):
    weights = [1.0] * len(values) if weights is None else list(weights)
    for x, y, w in zip(values, labels, weights):
        summary.update(x, y, w)


def _oracle(values, labels, weights):
    """Exact counts: {value: Counter(class -> weight)}, missing Counter, totals Counter."""
    counts: dict = collections.defaultdict(collections.Counter)
    missing, totals = collections.Counter(), collections.Counter()
    for x, y, w in zip(values, labels, weights):
        if x is None or (isinstance(x, float) and math.isnan(x)):
            missing[y] += w
        else:
            counts[x][y] += w
            totals[y] += w
    return counts, missing, totals


def _as_dict(table):
    return {value: dict(zip(table.classes, row)) for value, row in zip(table.values, table.counts.tolist())}


# -- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, name",
    [
        ({"max_values": 0}, "max_values"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 1.0}, "epsilon"),
        ({"delta": 1.5}, "delta"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_bad_parameters_are_named(params, name):
    with pytest.raises(ValueError, match=name):
        Categorical(**params)


# -- exact mode -------------------------------------------------------------------------------

value_strategy = st.one_of(
    st.sampled_from(["a", "b", "c", "é", ""]),
    st.integers(-3, 3),
    st.booleans(),
    st.sampled_from([None, math.nan, 2.5, ("t", 1)]),
)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.tuples(value_strategy, st.sampled_from(["x", "y", 3]), st.integers(0, 3)), max_size=60),
    st.booleans(),
)
def test_exact_counts_match_a_counter(stream, batch):
    values = [x for x, _, _ in stream]
    labels = [y for _, y, _ in stream]
    weights = [float(w) for _, _, w in stream]
    summary = Categorical()
    if batch:
        summary.update_many(values, labels, weights)
    else:
        _feed_loop(summary, values, labels, weights)
    assert not summary.problems()
    counts, missing, totals = _oracle(values, labels, weights)
    table = summary.table()
    assert summary.mode == "exact"
    assert set(table.classes) == set(labels)
    got = _as_dict(table)
    assert set(got) == set(counts)
    for value, expected in counts.items():
        assert {c: n for c, n in got[value].items() if n} == {c: n for c, n in expected.items() if n}
    assert dict(zip(table.classes, table.missing.tolist())) == {c: missing[c] for c in table.classes}
    assert np.all(table.star == 0)
    assert math.isclose(summary.n, sum(weights))


def test_values_keep_order_of_first_appearance_and_numpy_scalars_are_python_values():
    summary = Categorical()
    summary.update_many(np.array([3, 1, 3, 2]), ["a", "b", "a", "a"])
    summary.update(np.int64(1), "c")
    table = summary.table()
    assert table.values == (3, 1, 2) and all(type(v) is int for v in table.values)
    assert table.counts.tolist() == [[2.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.update(["unhashable"], "a"),
        lambda s: s.update("v", "a", -1.0),
        lambda s: s.update("v", "a", math.nan),
        lambda s: s.update_many(["v", ["unhashable"]], ["a", "b"]),
        lambda s: s.update_many(np.array([{"k": 1}, "v"], dtype=object), ["a", "b"]),
        lambda s: s.update_many(["v", "w"], ["a", "b"], [1.0, -1.0]),
        lambda s: s.update_many(["v", "w"], ["a"]),
    ],
)
@pytest.mark.parametrize("max_values", [1000, 3])  # exact and sketch modes
def test_bad_input_raises_and_leaves_summary_unchanged(call, max_values):
    summary = Categorical(max_values=max_values, top_k=2, epsilon=0.1)
    summary.update_many(["p", "q", "r", "s", "p"], ["a", "b", "a", "b", "a"])
    before = _state(summary)
    with pytest.raises(ValueError):
        call(summary)
    assert _state(summary) == before


# -- switching to sketch mode -----------------------------------------------------------------


def test_switch_to_sketch_mode_past_max_values():
    summary = Categorical(max_values=10, top_k=4, epsilon=0.01, seed=3)
    for i in range(10):
        summary.update(f"v{i}", i % 2, 1.0 + i)
    assert summary.mode == "exact"
    summary.update("v0", 0)  # a known value does not switch
    assert summary.mode == "exact"
    summary.update("new", 1)
    assert summary.mode == "sketch"
    assert not summary.problems()
    table = summary.table()
    # the heaviest exact values were kept with their exact counts; "new" replaced the lightest
    # (v6, count 7) as SpaceSaving does, and its counts come from the count-min sketch
    assert table.values == ("v9", "v8", "v7", "new")
    assert _as_dict(table)["v9"] == {0: 0.0, 1: 10.0}
    assert summary._heavy.get("new").error == 7.0
    assert _as_dict(table)["new"][1] >= 1.0
    totals = dict(zip(table.classes, (table.counts.sum(axis=0) + table.star).tolist()))
    assert totals == {0: 1 + 3 + 5 + 7 + 9 + 1.0, 1: 2 + 4 + 6 + 8 + 10 + 1.0}


def _zipf_stream(seed, n=20000, n_values=5000, n_classes=3):
    rng = np.random.default_rng(seed)
    ranks = np.minimum(rng.zipf(1.3, size=n), n_values)
    values = np.array([f"item-{r}" for r in ranks], dtype=object)
    labels = (ranks + rng.integers(0, 2, size=n)) % n_classes
    return values, labels, ranks


def test_heavy_hitters_are_found():
    values, labels, ranks = _zipf_stream(0)
    summary = Categorical(max_values=100, top_k=50, epsilon=0.005)
    summary.update_many(values, labels)
    assert not summary.problems()
    table = summary.table()
    assert summary.mode == "sketch" and len(table.values) == 50
    truth = collections.Counter(values.tolist())
    top = [value for value, _ in truth.most_common(10)]
    assert set(top) <= set(table.values)
    # their class counts are within the count-min bound
    exact = _oracle(values.tolist(), labels.tolist(), [1.0] * len(values))[0]
    totals = np.bincount(labels, minlength=3)
    for value in top:
        row = _as_dict(table)[value]
        for c in table.classes:
            assert exact[value][c] - 1e-9 <= row[c] <= exact[value][c] + 0.005 * totals[c] + 1e-9


@settings(max_examples=examples(60), deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 2)), min_size=20, max_size=600),
    st.integers(0, 2**64 - 1),
    st.sampled_from([0.01, 0.05]),
)
def test_count_min_guarantee(stream, seed, epsilon):
    delta = 0.05
    summary = Categorical(max_values=5, top_k=3, epsilon=epsilon, delta=delta, seed=seed)
    summary.update_many([x for x, _ in stream], [y for _, y in stream])
    assert not summary.problems()
    counts, _, totals = _oracle([x for x, _ in stream], [y for _, y in stream], [1] * len(stream))
    if summary.mode == "exact":
        return
    sketch = summary._sketch
    columns = {c: j for j, c in enumerate(summary.classes)}
    pairs = violations = 0
    for value, by_class in counts.items():
        estimate = sketch.estimate(sketch.cells(value))
        for c, j in columns.items():
            pairs += 1
            assert estimate[j] >= by_class[c]  # never under-estimates
            violations += estimate[j] > by_class[c] + epsilon * totals[c]
    # Cormode & Muthukrishnan 2005: each estimate exceeds c + ε·N_j with probability ≤ δ
    assert violations <= delta * pairs + 3 * math.sqrt(delta * pairs) + 1


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 200), st.sampled_from("abc"), st.integers(0, 5)), max_size=400),
    st.integers(1, 30),
    st.integers(1, 10),
    st.booleans(),
)
def test_star_is_non_negative_and_columns_sum_to_class_totals(stream, max_values, top_k, batch):
    summary = Categorical(max_values=max_values, top_k=top_k, epsilon=0.2, delta=0.2)
    values, labels, weights = ([row[i] for row in stream] for i in range(3))
    if batch:
        summary.update_many(values, labels, weights)
    else:
        _feed_loop(summary, values, labels, weights)
    assert not summary.problems()
    table = summary.table()
    _, _, totals = _oracle(values, labels, weights)
    assert np.all(table.star >= 0) and np.all(table.counts >= 0)
    assert len(table.values) <= (top_k if summary.mode == "sketch" else max_values)
    columns = table.counts.sum(axis=0) + table.star
    assert np.allclose(columns, [totals[c] for c in table.classes], rtol=1e-12, atol=1e-9)


# -- update_many vs loop ----------------------------------------------------------------------


def test_update_many_equals_loop_in_exact_mode():
    rng = np.random.default_rng(1)
    values = rng.choice(np.array(["a", "b", None, "c", 1, 2.0, math.nan], dtype=object), size=2000)
    labels = rng.integers(0, 4, size=2000)
    weights = rng.integers(0, 3, size=2000).astype(float)
    loop, batch = Categorical(), Categorical()
    _feed_loop(loop, values.tolist(), labels.tolist(), weights.tolist())
    for start in range(0, 2000, 300):
        batch.update_many(values[start : start + 300], labels[start : start + 300], weights[start : start + 300])
    assert _state(batch) == _state(loop)


def test_update_many_equals_loop_across_the_switch_and_in_sketch_mode():
    values, labels, _ = _zipf_stream(2, n=6000, n_values=2000)
    weights = np.random.default_rng(3).integers(0, 3, size=len(values)).astype(float)
    loop, batch = Categorical(max_values=50, top_k=20, epsilon=0.01), Categorical(max_values=50, top_k=20, epsilon=0.01)
    _feed_loop(loop, values.tolist(), labels.tolist(), weights.tolist())
    for start in range(0, len(values), 1000):
        batch.update_many(values[start : start + 1000], labels[start : start + 1000], weights[start : start + 1000])
    assert not batch.problems()
    assert batch.mode == loop.mode == "sketch"
    assert batch.classes == loop.classes
    # the same state: count-min table, totals, missing counts and heavy hitters
    assert _state(batch) == _state(loop)
    # at the switch point both hold the same exact counts
    cut_loop, cut_batch = Categorical(max_values=50), Categorical(max_values=50)
    prefix = values[:400]
    _feed_loop(cut_loop, prefix.tolist(), labels[:400].tolist())
    cut_batch.update_many(prefix, labels[:400])
    assert cut_loop.mode == cut_batch.mode
    assert np.allclose(cut_batch._sketch._table, cut_loop._sketch._table)
    assert [v for v, _ in cut_batch._heavy.items()] == [v for v, _ in cut_loop._heavy.items()][: len(cut_batch._heavy)]


# -- merge ------------------------------------------------------------------------------------


def test_merge_exact_equals_one_summary_fed_both():
    a, b, both = Categorical(), Categorical(), Categorical()
    first = (["x", "y", "x", None], ["p", "q", "p", "q"])
    second = (["y", "z", 1, "x"], ["r", "q", "p", "r"])
    a.update_many(*first)
    b.update_many(*second)
    both.update_many(*first)
    both.update_many(*second)
    a.merge(b)
    assert not a.problems()
    assert _as_dict(a.table()) == _as_dict(both.table().aligned(a.classes))
    assert a.table().missing.tolist() == both.table().aligned(a.classes).missing.tolist()


def test_merge_of_sketches_adds_tables_and_merges_heavy_hitters():
    values, labels, _ = _zipf_stream(4, n=20000, n_values=3000)
    params = dict(max_values=100, top_k=40, epsilon=0.005, seed=11)
    a, b, both = Categorical(**params), Categorical(**params), Categorical(**params)
    a.update_many(values[:10000], labels[:10000])
    b.update_many(values[10000:], (labels[10000:] + 1) % 4)  # a fourth class in b only
    both.update_many(values[:10000], labels[:10000])
    both.update_many(values[10000:], (labels[10000:] + 1) % 4)
    a.merge(b)
    assert not a.problems()
    assert a.classes == both.classes
    assert np.allclose(a._sketch._table, both._sketch._table, rtol=1e-12)
    assert a._totals == both._totals
    truth = collections.Counter(values.tolist())
    assert {value for value, _ in truth.most_common(10)} <= set(a.table().values)
    table = a.table()
    assert np.allclose(table.counts.sum(axis=0) + table.star, a._totals)


def test_merge_mixed_modes_and_switching_by_merge():
    values, labels, _ = _zipf_stream(5, n=3000, n_values=500)
    params = dict(max_values=60, top_k=10, epsilon=0.01)
    exact, sketched, both = Categorical(**params), Categorical(**params), Categorical(**params)
    exact.update_many(values[:40], labels[:40])
    sketched.update_many(values[40:], labels[40:])
    assert exact.mode == "exact" and sketched.mode == "sketch"
    both.update_many(values, labels)
    for left, right in ((exact, sketched), (sketched, exact)):
        merged = copy.deepcopy(left)
        merged.merge(right)
        assert not merged.problems()
        assert merged.mode == "sketch"
        order = [merged.classes.index(c) for c in both.classes]
        assert np.allclose(merged._sketch._table[:, order], both._sketch._table)
    # two exact summaries whose union exceeds max_values
    small = dict(max_values=5, top_k=3, epsilon=0.1)
    a, b, one = Categorical(**small), Categorical(**small), Categorical(**small)
    a.update_many(list("abcd"), [0, 0, 1, 1])
    b.update_many(list("cdef"), [1, 0, 1, 0])
    one.update_many(list("abcd") + list("cdef"), [0, 0, 1, 1, 1, 0, 1, 0])
    a.merge(b)
    assert not a.problems()
    assert a.mode == "sketch"
    assert np.allclose(a._sketch._table, one._sketch._table)


def test_merge_requires_equal_sketch_parameters():
    a = Categorical(max_values=2, seed=1)
    b = Categorical(max_values=2, seed=2)
    c = Categorical(max_values=2, epsilon=0.01, seed=1)
    for summary in (a, b, c):
        summary.update_many(list("abcde"), [0, 1, 0, 1, 0])
    before = _state(a)
    for other, name in ((b, "seed"), (c, "epsilon")):  # the error names the parameter that differs
        with pytest.raises(ValueError, match=name):
            a.merge(other)
    assert _state(a) == before
    with pytest.raises(TypeError, match="Categorical"):
        a.merge(object())
    exact = Categorical(seed=2)
    exact.update("a", 0)
    exact.merge(b)  # an exact summary merging a sketch needs the same sketch parameters too
    with pytest.raises(ValueError):
        Categorical(seed=1).merge(b)


def test_merge_with_itself_doubles():
    summary = Categorical(max_values=3, top_k=2, epsilon=0.1)
    summary.update_many(list("aabcdd"), [0, 1, 0, 1, 0, 1])
    table = summary.table()
    summary.merge(summary)
    assert not summary.problems()
    doubled = summary.table()
    assert np.allclose(doubled.counts.sum(axis=0) + doubled.star, 2 * (table.counts.sum(axis=0) + table.star))


# -- reproducibility, serialisation, memory ----------------------------------------------------


def _reproducibility_script() -> str:
    return textwrap.dedent(
        """
        import numpy as np
        from wnb_stream.summaries.categorical import Categorical
        summary = Categorical(max_values=20, top_k=5, epsilon=0.05, seed=99)
        for i in range(400):
            summary.update(("word", i % 37) if i % 3 else f"w{(i * 7) % 53}", i % 2)
        table = summary.table()
        print(repr(table.values))
        print(table.counts.tolist(), table.star.tolist())
        cells = summary._sketch._table
        print(cells.sum(axis=1).tolist(), float(cells[:, 0] @ np.arange(cells.shape[0])))
        """
    )


def test_hashing_is_reproducible_across_processes():
    outputs = []
    for hash_seed in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(REPO))
        result = subprocess.run(
            [sys.executable, "-c", _reproducibility_script()], capture_output=True, text=True, env=env, check=True
        )
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == 3


def test_stable_hash_and_canonical_bytes():
    assert canonical_bytes(1) == canonical_bytes(1.0) == canonical_bytes(True) == canonical_bytes(np.int64(1))
    assert canonical_bytes("1") != canonical_bytes(1) != canonical_bytes(b"1")
    assert canonical_bytes(("a", "bc")) != canonical_bytes(("ab", "c"))
    assert canonical_bytes(frozenset({"a", "b"})) == canonical_bytes(frozenset({"b", "a"}))
    assert stable_hash("x", 0) != stable_hash("x", 1)
    assert 0 <= stable_hash(("x", 2.5), 2**64 - 1) < 2**64


def test_pickle_round_trip_in_both_modes():
    for max_values in (100, 3):
        summary = Categorical(max_values=max_values, top_k=2, epsilon=0.1)
        summary.update_many(list("abcdeab"), [0, 1, 0, 1, 0, 1, 0])
        restored = pickle.loads(pickle.dumps(summary))
        assert not restored.problems()
        assert _state(restored) == _state(summary)
        restored.update("f", 1)
        summary.update("f", 1)
        assert _state(restored) == _state(summary)


def test_memory_is_bounded_in_sketch_mode():
    summary = Categorical(max_values=100, top_k=20, epsilon=0.01, delta=0.01)
    summary.update_many([f"v{i}" for i in range(1000)], np.arange(1000) % 2)
    size = summary.memory_usage()
    summary.update_many([f"w{i}" for i in range(20000)], np.arange(20000) % 2)
    assert summary.memory_usage() == size
    width, depth = CountMinSketch.dimensions(0.01, 0.01)
    assert size >= 8 * width * depth * 2


# -- the sketches alone -----------------------------------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4)), max_size=300), st.integers(1, 8))
def test_space_saving_guarantee(stream, capacity):
    heavy = SpaceSaving(capacity)
    truth: collections.Counter = collections.Counter()
    for value, w in stream:
        heavy.update(value, float(w), 0)
        truth[value] += w
        assert not heavy.problems()
    total = sum(truth.values())
    for value, slot in heavy.items():
        assert slot.count - slot.error <= truth[value] <= slot.count
        assert slot.error <= total / capacity + 1e-9
    for value, count in truth.items():
        if count > total / capacity:
            assert value in heavy


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(1, 4)), max_size=150),
    st.lists(st.tuples(st.integers(0, 20), st.integers(1, 4)), max_size=150),
    st.integers(1, 6),
)
def test_space_saving_merge_keeps_the_guarantee(first, second, capacity):
    a, b = SpaceSaving(capacity), SpaceSaving(capacity)
    truth: collections.Counter = collections.Counter()
    for summary, stream in ((a, first), (b, second)):
        for value, w in stream:
            summary.update(value, float(w), value % 2)
            truth[value] += w
    a.merge(b)
    assert not a.problems()
    for value, slot in a.items():
        assert slot.count - slot.error <= truth[value] <= slot.count


def test_count_min_sketch_rejects_bad_dimensions_and_merges():
    with pytest.raises(ValueError, match="width"):
        CountMinSketch(0, 3)
    with pytest.raises(ValueError, match="epsilon"):
        CountMinSketch.dimensions(0, 0.1)
    a, b = CountMinSketch(50, 3, seed=1, n_classes=1), CountMinSketch(50, 3, seed=1, n_classes=2)
    a.add(a.cells("v"), 0, 2.0)
    b.add(b.cells("v"), 0, 3.0)
    b.add(b.cells("w"), 1, 4.0)
    a.merge(b, columns=[1, 0])  # b's class 0 is a's 1 and vice versa
    assert a.estimate(a.cells("v")).tolist() == [2.0, 3.0]
    assert a.estimate(a.cells("w")).tolist() == [4.0, 0.0]
    with pytest.raises(ValueError, match="seed"):
        a.merge(CountMinSketch(50, 3, seed=2))
