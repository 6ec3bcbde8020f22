"""The compiled GKClass equals the pre-kernel NumPy implementation bit for bit.

``reference_gk.py`` (beside this file) is ``gk.py`` as it was before ``_gk_kernels.py``. Random
streams and random sequences of ``update``, ``update_many``, ``table``, queries and ``merge`` are
fed to both; every array of both summaries (values, g, Δ, e, class counts, missing, buffer) and
every float of their tables must be the very same bytes. The sum helpers of the kernels are
checked against the NumPy calls they reproduce.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
import reference_gk as reference
from hypothesis import example, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.summaries import _gk_kernels as kernels
from wnb_stream.summaries import gk, gk_tuples

SETTINGS = settings(max_examples=examples(80), deadline=None)
KINDS = ("uniform", "sorted", "reversed", "duplicates", "constant", "signed_zeros", "wide")
WEIGHTS = ("none", "ones", "floats", "with_zeros")


# --------------------------------------------------------------------------------------------
# Streams and state
# --------------------------------------------------------------------------------------------


def make_values(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    """``(n,)`` float values of one of ``KINDS``."""
    if kind == "uniform":
        return rng.uniform(-5.0, 5.0, size=n)
    if kind == "sorted":
        return np.sort(rng.normal(size=n))
    if kind == "reversed":
        return np.sort(rng.normal(size=n))[::-1].copy()
    if kind == "duplicates":
        return rng.integers(0, max(2, n // 15), size=n).astype(float)
    if kind == "constant":
        return np.full(n, 1.75)
    if kind == "signed_zeros":  # −0.0 and 0.0 compare equal: which one a tuple keeps is order-bound
        return rng.choice([-0.0, 0.0, 1.0, -1.0, 0.5], size=n)
    return rng.normal(size=n) * 10.0 ** rng.uniform(-8, 8, size=n)  # "wide"


def make_weights(rng: np.random.Generator, kind: str, n: int) -> np.ndarray | None:
    """``(n,)`` weights or None; "floats" are not dyadic, so every summation order shows."""
    if kind == "none":
        return None
    if kind == "ones":
        return np.ones(n)
    weights = rng.uniform(0.0, 1.0, size=n) * 10.0 ** rng.uniform(-3, 3, size=n)
    if kind == "with_zeros":
        weights[rng.random(n) < 0.2] = 0.0
    return weights


def make_labels(rng: np.random.Generator, n: int, n_classes: int, start: int) -> np.ndarray:
    """``(n,)`` object labels; the class pool grows along the stream (new classes mid-stream)."""
    grow = np.minimum(n_classes, 1 + (start + np.arange(n)) // 40)
    labels = np.empty(n, dtype=object)
    labels[:] = [f"c{j}" for j in (rng.random(n) * grow).astype(int)]
    return labels


def add_missing(rng: np.random.Generator, values: np.ndarray, rate: float) -> np.ndarray:
    values = values.copy()
    mask = rng.random(len(values)) < rate
    values[mask] = rng.choice([np.nan, np.inf, -np.inf], size=int(mask.sum()))
    return values


def state(summary) -> tuple:
    """Every field of a summary that a mutation can touch, as bytes (so −0.0 ≠ 0.0)."""
    return (
        summary._values.tobytes(),
        summary._g.tobytes(),
        summary._delta.tobytes(),
        summary._at_value.tobytes(),
        summary._counts.shape,
        summary._counts.tobytes(),
        summary._missing.tobytes(),
        float(summary._weight).hex(),
        summary._buffer_values.tobytes(),
        summary._buffer_classes.tobytes(),
        summary._buffer_weights.tobytes(),
        summary.classes,
        summary._epsilon,
    )


def table_bytes(table) -> tuple:
    return table.upper_bounds.tobytes(), table.counts.tobytes(), table.classes, table.missing.tobytes()


def assert_same(new, old) -> None:
    assert state(new) == state(old)


def pair(**params):
    """The same configuration in both implementations."""
    return gk.GKClass(**params), reference.GKClass(**params)


CONFIGS = st.one_of(
    st.builds(dict, epsilon=st.sampled_from([None, 0.001, 0.005, 0.02, 0.1, 0.45])),
    st.builds(dict, quantiles=st.sampled_from([2, 10])),
    st.builds(dict, max_tuples=st.integers(3, 40)),
).flatmap(lambda config: st.builds(lambda b: {**config, "buffer_size": b}, st.sampled_from([None, 1, 2, 7, 64, 500])))


# --------------------------------------------------------------------------------------------
# Whole summaries
# --------------------------------------------------------------------------------------------


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["update", "update_many", "update_many", "table", "query", "merge"]),
        st.integers(1, 1500),  # size of the block (values for update loops: at most 80)
        st.sampled_from(KINDS),
        st.sampled_from(WEIGHTS),
    ),
    min_size=1,
    max_size=8,
)


def run_operation(new, old, rng, operation, config, position):
    """Apply one operation to both summaries (the same data); returns values fed."""
    name, size, kind, weight_kind = operation
    if name == "update":
        size = min(size, 80)
    values = make_values(rng, kind, size)
    if rng.random() < 0.3:
        values = add_missing(rng, values, 0.1)
    labels = make_labels(rng, size, 4, position)
    weights = make_weights(rng, weight_kind, size)
    if name == "update":
        for i, (x, y) in enumerate(zip(values.tolist(), labels.tolist())):
            w = 1.0 if weights is None else float(weights[i])
            new.update(x, y, w)
            old.update(x, y, w)
    elif name == "update_many":
        new.update_many(values, labels, weights)
        old.update_many(values, labels, weights)
    elif name == "table":
        assert table_bytes(new.table()) == table_bytes(old.table())
    elif name == "query":
        phi = float(rng.random())
        got, want = new.quantile(phi), old.quantile(phi)
        assert got == want or (math.isnan(got) and math.isnan(want))
        assert new.rank(0.25) == old.rank(0.25)
        assert new.n_tuples == old.n_tuples
    else:  # merge a summary built on another stream, in both implementations alike
        other_new, other_old = pair(**config)
        other_new.update_many(values, labels, weights)
        other_old.update_many(values, labels, weights)
        new.merge(other_new)
        old.merge(other_old)
        assert_same(other_new, other_old)
    return size


@SETTINGS
@given(config=CONFIGS, operations=OPERATIONS, seed=st.integers(0, 2**32 - 1))
def test_random_operations_leave_identical_state(config, operations, seed):
    rng = np.random.default_rng(seed)
    new, old = pair(**config)
    position = 0
    for operation in operations:
        position += run_operation(new, old, rng, operation, config, position)
        assert_same(new, old)
    assert table_bytes(new.table()) == table_bytes(old.table())
    assert_same(new, old)
    assert not new.problems()


@SETTINGS
@given(
    kind=st.sampled_from(KINDS),
    weight_kind=st.sampled_from(WEIGHTS),
    n=st.integers(1, 6000),
    block=st.integers(1, 2500),
    config=CONFIGS,
    seed=st.integers(0, 2**32 - 1),
)
def test_block_streams_as_the_classifier_feeds_them(kind, weight_kind, n, block, config, seed):
    """``update_many`` in blocks, ``table()`` after each (the level-2 rebuild), one long stream."""
    rng = np.random.default_rng(seed)
    values = make_values(rng, kind, n)
    labels = make_labels(rng, n, 5, 0)
    weights = make_weights(rng, weight_kind, n)
    new, old = pair(**config)
    for start in range(0, n, block):
        part = slice(start, start + block)
        new.update_many(values[part], labels[part], None if weights is None else weights[part])
        old.update_many(values[part], labels[part], None if weights is None else weights[part])
        assert table_bytes(new.table()) == table_bytes(old.table())
        assert_same(new, old)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weight_kind", ["ones", "floats"])
def test_long_streams_with_the_default_epsilon(kind, weight_kind):
    """~150 tuples and blocks of 1,000 (the classifier's regime), 40,000 values."""
    rng = np.random.default_rng(7)
    n = 40_000
    values = make_values(rng, kind, n)
    labels = make_labels(rng, n, 3, 0)
    weights = make_weights(rng, weight_kind, n)
    new, old = pair()
    for start in range(0, n, 1000):
        new.update_many(values[start : start + 1000], labels[start : start + 1000], weights[start : start + 1000])
        old.update_many(values[start : start + 1000], labels[start : start + 1000], weights[start : start + 1000])
    assert table_bytes(new.table()) == table_bytes(old.table())
    assert_same(new, old)


def test_update_loop_and_merge_tree():
    rng = np.random.default_rng(3)
    parts = []
    for k in range(4):
        values = make_values(rng, KINDS[k], 3000)
        labels = make_labels(rng, 3000, 3, 0)
        weights = make_weights(rng, "floats", 3000)
        new, old = pair(epsilon=0.01)
        for x, y, w in zip(values.tolist(), labels.tolist(), weights.tolist()):
            new.update(x, y, w)
            old.update(x, y, w)
        assert_same(new, old)
        parts.append((new, old))
    (a_new, a_old), (b_new, b_old), (c_new, c_old), (d_new, d_old) = parts
    a_new.merge(b_new)
    a_old.merge(b_old)
    c_new.merge(d_new)
    c_old.merge(d_old)
    a_new.merge(c_new)
    a_old.merge(c_old)
    a_new.merge(a_new)  # merging with itself copies first
    a_old.merge(a_old)
    assert_same(a_new, a_old)


# --------------------------------------------------------------------------------------------
# Labels (the look-up that replaces encode_many when no class is new)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "labels",
    [
        np.array([1, 2, 1, 3, 2, 1]),
        np.array(["b", "a", "b", "c", "a", "b"]),
        [True, False, True, True, False, True],
        np.array([np.int64(4), 4.0, np.float64(4.0), 5, np.str_("x"), "x"], dtype=object),
        ["a", 1, "a", 2.5, 1, "a"],  # mixed types: np.unique cannot sort them
        ((1, 2), "n", (1, 2), "n", "m", 0),  # tuples are labels too (None is refused: see below)
    ],
)
def test_label_kinds_give_identical_codes(labels):
    values = np.array([0.5, 1.5, 0.5, 2.5, 3.5, 1.5])
    new, old = pair(buffer_size=4)
    for _ in range(3):  # first call registers the classes, later calls take the look-up
        new.update_many(values, labels)
        old.update_many(values, labels)
        assert_same(new, old)
    new.update_many(values, labels[::-1] if isinstance(labels, np.ndarray) else list(labels)[::-1])
    old.update_many(values, labels[::-1] if isinstance(labels, np.ndarray) else list(labels)[::-1])
    assert_same(new, old)
    assert table_bytes(new.table()) == table_bytes(old.table())


@pytest.mark.parametrize(
    "values, labels, weights",
    [
        ([1.0, 2.0], ["a", ["unhashable"]], None),
        ([1.0, 2.0], ["a", "b"], [1.0, -1.0]),
        ([1.0, "x"], ["a", "b"], None),
        ([1.0, 2.0], ["a"], None),
        ([1.0, 2.0], ["a", {"b": 1}], [1.0, np.nan]),
        ([1.0, 2.0], ["a", None], None),
    ],
)
def test_bad_batches_raise_alike_and_change_nothing(values, labels, weights):
    new, old = pair()
    new.update_many([0.0, 1.0, 2.0], ["a", "b", "a"])
    old.update_many([0.0, 1.0, 2.0], ["a", "b", "a"])
    before = state(new)
    with pytest.raises(ValueError) as raised_new:
        new.update_many(values, labels, weights)
    with pytest.raises(ValueError) as raised_old:
        old.update_many(values, labels, weights)
    assert str(raised_new.value) == str(raised_old.value)
    assert state(new) == before
    assert_same(new, old)


# --------------------------------------------------------------------------------------------
# Pure functions and sum helpers
# --------------------------------------------------------------------------------------------


def random_tuples(rng: np.random.Generator, s: int, n_classes: int) -> tuple:
    """A valid-looking tuple list ``(v, g, Δ, e, c)`` with awkward floats."""
    v = np.unique(rng.normal(size=s) * 3.0)
    s = len(v)
    counts = rng.uniform(0.0, 3.0, size=(s, n_classes)) * 10.0 ** rng.uniform(-2, 2, size=(s, n_classes))
    g = counts.sum(axis=1)
    e = g * rng.uniform(0.1, 1.0, size=s)
    delta = rng.uniform(0.0, 5.0, size=s) * (rng.random(s) < 0.7)
    if s:
        delta[0] = delta[-1] = 0.0
    return v, g, delta, e, counts


@settings(max_examples=examples(150), deadline=None)
@given(
    s=st.integers(0, 60),
    k=st.integers(1, 400),
    n_classes=st.integers(1, 4),
    threshold=st.one_of(st.none(), st.floats(0.5, 500.0)),
    seed=st.integers(0, 2**32 - 1),
)
def test_insert_batch_equals_the_reference(s, k, n_classes, threshold, seed):
    rng = np.random.default_rng(seed)
    tuples = random_tuples(rng, s, n_classes)
    pool = np.concatenate([tuples[0], rng.normal(size=k) * 3.0])  # some batch values are held already
    values = np.unique(rng.choice(pool, size=k))
    weights = rng.uniform(0.0, 1.0, size=len(values)) * 10.0 ** rng.uniform(-3, 3, size=len(values)) + 1e-3
    counts = rng.dirichlet(np.ones(n_classes), size=len(values)) * weights[:, None]
    got = gk_tuples.insert_batch(tuples, values, weights, counts, threshold)
    want = reference.insert_batch(tuples, values, weights, counts, threshold)
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]
    assert [a.shape for a in got] == [a.shape for a in want]


@settings(max_examples=examples(150), deadline=None)
@given(s=st.integers(0, 300), threshold=st.floats(0.0, 200.0), seed=st.integers(0, 2**32 - 1))
def test_compress_equals_the_reference(s, threshold, seed):
    rng = np.random.default_rng(seed)
    v, g, delta, e, counts = random_tuples(rng, s, 3)
    keep = gk_tuples.compress_runs(g, delta, threshold)
    np.testing.assert_array_equal(keep, reference.compress_runs(g, delta, threshold))
    # the compiled compress merges as GKClass._apply did
    old = reference.GKClass()
    old._values, old._g, old._delta, old._at_value, old._counts = v, g, delta, e, counts
    old._apply(reference.compress_runs(g, delta, threshold))
    got = kernels.compress(v, g, delta, e, counts, threshold)
    want = (old._values, old._g, old._delta, old._at_value, old._counts)
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]


@settings(max_examples=examples(200), deadline=None)
@example(tenths=[6, 11, 2, 7, 6, 3, 6], held=[], threshold=16, seed=0)  # before = cumsum − w matters
@given(
    tenths=st.lists(st.sampled_from([1, 2, 3, 6, 7, 11]), min_size=2, max_size=60),
    held=st.lists(st.tuples(st.integers(1, 30), st.integers(0, 10)), max_size=4),
    threshold=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_insert_batch_at_the_edges_of_its_windows(tenths, held, threshold, seed):
    """Weights and thresholds in tenths (not dyadic): the windows' ``floor`` lands on integers
    give or take one ulp, so only the very same float operations give the same groups."""
    rng = np.random.default_rng(seed)
    # a few held tuples far apart, g and Δ in tenths too
    v = np.sort(rng.choice(np.arange(-5, 500, 7), size=len(held), replace=False)).astype(float)
    g = np.array([a / 10 for a, _ in held], dtype=float)
    delta = np.array([b / 10 for _, b in held], dtype=float)
    if len(held):
        delta[0] = delta[-1] = 0.0
    tuples = (v, g, delta, g / 2, np.stack([g, np.zeros(len(held))], axis=1).reshape(-1, 2))
    values = np.arange(len(tenths)) * 3.0 + 0.5
    weights = np.array(tenths) / 10
    counts = np.stack([weights, np.zeros(len(tenths))], axis=1)
    got = gk_tuples.insert_batch(tuples, values, weights, counts, threshold / 10)
    want = reference.insert_batch(tuples, values, weights, counts, threshold / 10)
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]


@settings(max_examples=examples(200), deadline=None)
@given(
    tenths=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 5)), min_size=3, max_size=60),
    threshold=st.integers(1, 30),
)
def test_compress_at_its_threshold(tenths, threshold):
    """``g_i + G + Δ ≤ p`` in tenths: only the same additions in the same order agree at the edge."""
    g = np.array([a / 10 for a, _ in tenths])
    delta = np.array([b / 10 for _, b in tenths])
    want = reference.compress_runs(g, delta, threshold / 10)
    np.testing.assert_array_equal(gk_tuples.compress_runs(g, delta, threshold / 10), want)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000, 5003])
def test_pairwise_sum_is_numpys(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.uniform(0.0, 1.0, size=n) * 10.0 ** rng.uniform(-6, 6, size=n)
        assert 0.0 + kernels._pairwise_sum(a.reshape(-1, 1), 0, 0, n) == np.sum(a)


@settings(max_examples=examples(100), deadline=None)
@given(n=st.integers(1, 700), n_cuts=st.integers(0, 6), n_columns=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_reduceat_is_numpys(n, n_cuts, n_columns, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.0, 1.0, size=(n, n_columns)) * 10.0 ** rng.uniform(-6, 6, size=(n, n_columns))
    bounds = np.unique(np.concatenate([[0, n], rng.integers(0, n, size=n_cuts)]))
    got = kernels._reduceat(a, bounds, len(bounds) - 1)
    assert got.tobytes() == np.add.reduceat(a, bounds[:-1], axis=0).tobytes()


@settings(max_examples=examples(60), deadline=None)
@given(n=st.integers(1, 400), n_distinct=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_any_sort_order_is_made_stable(n, n_distinct, seed):
    """``absorb`` takes any sorting order (``np.argsort``) and gives the stable sort's result."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, n_distinct, size=n).astype(float)
    x[rng.random(n) < 0.2] *= -0.0  # signed zeros among the ties
    codes = rng.integers(0, 3, size=n)
    w = rng.uniform(0.0, 1.0, size=n) * 10.0 ** rng.uniform(-3, 3, size=n)
    empty = (np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, 3)))
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(x[shuffled], kind="stable")]  # sorted, ties in random order
    got = kernels.absorb(*empty, x, codes, w, order.astype(np.int64), 0.0, 0.01, True)
    want = kernels.absorb(*empty, x, codes, w, np.argsort(x, kind="stable"), 0.0, 0.01, True)
    assert [a.tobytes() for a in got[:5]] == [a.tobytes() for a in want[:5]] and got[5] == want[5]


@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda summary: pickle.loads(pickle.dumps(summary))])
def test_copies_go_on_alike(duplicate):
    new, old = pair(epsilon=0.02, buffer_size=10)
    rng = np.random.default_rng(0)
    values = rng.normal(size=505)
    labels = make_labels(rng, 505, 3, 0)
    new.update_many(values, labels)
    old.update_many(values, labels)
    clone = duplicate(new)
    clone.update_many(values, labels)
    old.update_many(values, labels)
    assert_same(clone, old)
