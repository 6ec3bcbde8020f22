"""``engine.classes.Classes`` alone: registration, counts, the floored prior, typed labels, ``_check``."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.engine.classes import Classes


def test_labels_are_registered_in_order_of_first_appearance_with_zero_columns():
    classes = Classes()
    assert len(classes) == 0 and classes.log_prior().shape == (0,)
    assert [classes.encode(y) for y in ["b", "a", "b", np.str_("c"), 1, True]] == [0, 1, 0, 2, 3, 3]
    assert classes.labels == ["b", "a", "c", 1] and type(classes.labels[2]) is str
    assert classes.counts.tolist() == classes.seen.tolist() == classes.next_rebuild.tolist() == [0.0] * 4
    classes._check()


def test_grow_gives_classes_registered_in_the_index_their_columns():
    classes = Classes()
    classes.encode("a")
    classes.count_one(0, 2.0)
    classes.index.encode("b")  # registered elsewhere (the engine registers a chunk's classes first)
    classes.index.encode("c")
    assert len(classes.counts) == 1
    assert classes.grow() and not classes.grow()
    assert classes.counts.tolist() == [2.0, 0.0, 0.0] and classes.seen.tolist() == [1.0, 0.0, 0.0]
    assert classes.next_rebuild.shape == (3,)
    classes._check()


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0, 3.0])), max_size=30), st.integers(1, 5))
def test_count_one_at_a_time_equals_count_in_bulk(rows, chunk):
    one, bulk = Classes(), Classes()
    for c in (one, bulk):
        for label in range(5):
            c.encode(label)
    for j, w in rows:
        one.count_one(j, w)
    for lo in range(0, len(rows), chunk):  # repeated classes within a chunk are all counted
        part = rows[lo : lo + chunk]
        bulk.count_many(np.array([j for j, _ in part], dtype=np.intp), np.array([w for _, w in part]))
    assert one.counts.tolist() == bulk.counts.tolist()
    assert one.seen.tolist() == bulk.seen.tolist() == [float(sum(j == k for j, _ in rows)) for k in range(5)]
    assert one.counts.tolist() == pytest.approx([sum(w for j, w in rows if j == k) for k in range(5)])
    one._check()


def prior_formula(counts: list) -> list:
    """The documented prior: P(C_j) = (N_j + ε) / (N + J·ε) with ε = 1 / (N + 1)."""
    n = math.fsum(counts)
    eps = 1.0 / (n + 1.0)
    return [(c + eps) / (n + len(counts) * eps) for c in counts]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(0.0, 1e6), st.integers(0, 10**9).map(float)), min_size=1, max_size=30))
def test_the_prior_is_a_floored_distribution_given_by_its_formula(counts):
    classes = Classes()
    for j in range(len(counts)):
        classes.encode(j)
    classes.counts = np.array(counts, dtype=float)
    classes.seen = np.where(classes.counts > 0, 1.0, 0.0)
    log_prior = classes.log_prior()
    p = np.exp(log_prior)
    assert log_prior.shape == (len(counts),) and np.isfinite(log_prior).all()
    assert (p > 0).all(), "the floor keeps every class possible"
    assert math.fsum(p) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(p, prior_formula(counts), rtol=1e-12, atol=0)
    # the order of the counts is the order of the probabilities
    order = np.argsort(counts, kind="stable")
    assert np.all(np.diff(p[order]) >= -1e-15)
    if not any(counts):  # nothing weighed yet: uniform
        np.testing.assert_allclose(p, 1.0 / len(counts), rtol=1e-12)


def test_the_prior_of_the_docstring():
    classes = Classes()
    for y, w in [("spam", 1.0), ("ham", 1.0), ("spam", 2.0)]:
        classes.count_one(classes.encode(y), w)
    # N = 4, ε = 1/5: (3.2 / 4.4, 1.2 / 4.4)
    np.testing.assert_allclose(np.exp(classes.log_prior()), [3.2 / 4.4, 1.2 / 4.4], rtol=1e-15)


LABEL_SETS = [
    [3, 1, 2],
    [-(2**62), 2**62],
    [True, False],
    ["b", "a", "ccc", ""],
    ["é", "日本", "\x00a"],
    [2.5, 1.0],  # floats stay objects
    ["a", 1],  # a mix stays objects
    [(1, 2), "x"],
    [2**70, 1],  # beyond 64 bits
    [-(2**64), 0],
]


@pytest.mark.parametrize("labels", LABEL_SETS, ids=repr)
def test_typed_labels_round_trip(labels):
    classes = Classes()
    for y in labels:
        classes.encode(y)
    typed = classes.typed()
    assert typed.shape == (len(labels),)
    kinds = {type(y) for y in labels}
    if len(kinds) == 1 and kinds <= {int, bool, str} and all(abs(y) < 2**63 for y in labels if type(y) is int):
        assert typed.dtype.kind in "iubU"
    else:
        assert typed.dtype == object
    back = typed.tolist()
    assert back == labels and [type(v) for v in back] == [type(v) for v in labels]
    if typed.dtype != object:  # np.unique (how summaries register typed labels) gives the same Python values back
        assert sorted(np.unique(typed).tolist(), key=repr) == sorted(labels, key=repr)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.one_of(
        st.lists(st.integers(-(2**65), 2**65), unique=True, min_size=1, max_size=6),
        st.lists(st.text(max_size=4), unique=True, min_size=1, max_size=6),
        st.lists(st.booleans(), unique=True, min_size=1),
    ),
    st.integers(1, 5),
)
def test_typed_labels_round_trip_and_follow_new_classes(labels, split):
    # NumPy drops trailing NUL characters from strings: see the test below
    assume(not any(isinstance(y, str) and y.endswith("\x00") for y in labels))
    classes = Classes()
    for y in labels[:split]:
        classes.encode(y)
    first = classes.typed()
    assert classes.typed() is first  # a cache
    for y in labels[split:]:
        classes.encode(y)
    typed = classes.typed()
    assert len(typed) == len(labels)  # the cache follows new classes
    assert typed.tolist() == labels and [type(v) for v in typed.tolist()] == [type(v) for v in labels]
    # pickling drops the cache; the state and the typed labels come back
    copy = pickle.loads(pickle.dumps(classes))
    assert copy._typed is None and copy.typed().tolist() == labels and copy.labels == classes.labels


def test_typed_labels_keep_trailing_nul_characters():
    classes = Classes()
    for y in ["a\x00", "b"]:
        classes.encode(y)
    assert classes.typed().tolist() == ["a\x00", "b"]


def test_check_catches_broken_states():
    classes = Classes()
    for y, w in [("a", 1.0), ("b", 0.0)]:
        classes.count_one(classes.encode(y), w)
    classes._check()
    for attribute, value in [
        ("counts", np.array([1.0])),  # a column missing
        ("seen", np.array([1.0, -1.0])),
        ("counts", np.array([1.0, -0.5])),
        ("counts", np.array([1.0, 0.0, 0.0])),
    ]:
        broken = pickle.loads(pickle.dumps(classes))
        setattr(broken, attribute, value)
        with pytest.raises(AssertionError):
            broken._check()
    broken = pickle.loads(pickle.dumps(classes))
    broken.seen = np.array([1.0, 0.0])
    broken.counts = np.array([1.0, 2.0])  # weight without an example
    with pytest.raises(AssertionError, match="weight without an example"):
        broken._check()


def test_log_prior_stays_finite_when_the_total_weight_is_huge():
    classes = Classes()
    classes.count_one(classes.encode("a"), 1e300)
    classes.encode("b")  # no weight
    log_prior = classes.log_prior()
    assert np.isfinite(log_prior).all() and log_prior[1] < -1000
    small = Classes()
    small.count_one(small.encode("a"), 3.0)
    small.count_one(small.encode("b"), 1.0)
    n, eps = 4.0, 1.0 / 5.0
    np.testing.assert_array_equal(small.log_prior(), np.log((np.array([3.0, 1.0]) + eps) / (n + 2 * eps)))


# ---------------------------------------------------------------------- verbs the engine calls
def three_classes() -> Classes:
    classes = Classes()
    for label in "abc":
        classes.encode(label)
    classes.count_many(np.array([0, 0, 1, 2, 2, 2]), np.array([1.0, 2.0, 0.5, 1.0, 1.0, 4.0]))
    return classes


def test_fade_scales_the_weighted_counts_not_the_examples():
    classes = three_classes()
    classes.fade(0.5)
    assert classes.counts.tolist() == [1.5, 0.25, 3.0] and classes.seen.tolist() == [2.0, 1.0, 3.0]
    classes._check()


def test_recount_counts_the_kept_examples_only_and_makes_every_class_due():
    classes = three_classes()
    classes.rebuilt(np.array([5.0, 5.0, 5.0]))
    assert not classes.due()
    classes.recount(np.array([2, 0, 2]), np.array([1.0, 0.5, 2.0]))
    assert classes.counts.tolist() == [0.5, 0.0, 3.0] and classes.seen.tolist() == [1.0, 0.0, 2.0]
    assert classes.next_rebuild.tolist() == [0.0, 0.0, 0.0] and classes.due()
    classes._check()


def test_add_adds_counts_to_the_given_columns():
    classes = three_classes()
    classes.add(np.array([2, 0]), np.array([1.0, 3.0]), np.array([1.0, 2.0]))
    assert classes.counts.tolist() == [6.0, 0.5, 7.0] and classes.seen.tolist() == [4.0, 1.0, 4.0]


def test_rebuilt_moves_each_threshold_past_the_examples_and_rebuild_all_soon_takes_it_back():
    classes = three_classes()
    assert classes.due()  # (new classes: threshold 0)
    classes.rebuilt(np.array([1.0, 2.0, 3.0]))
    assert classes.next_rebuild.tolist() == [3.0, 3.0, 6.0] and not classes.due()
    classes.count_one(1, 1.0)
    classes.count_one(1, 1.0)
    assert classes.due()  # class 1 reached 3
    classes.rebuilt(np.array([1.0, 1.0, 1.0]))
    classes.rebuild_all_soon()
    assert classes.next_rebuild.tolist() == [0.0, 0.0, 0.0] and classes.due()
