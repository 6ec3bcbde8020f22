"""``update_coded``: a batch given as class codes builds the summary ``update_many`` builds."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.summaries import CPiD, Gaussian, GKClass

SUMMARIES = [
    lambda: GKClass(epsilon=0.01),
    lambda: GKClass(max_tuples=24),
    lambda: CPiD(n_bins=20, warm_up=10),
    lambda: Gaussian(),
]
LABEL_SETS = [np.array([3, 1, 7]), np.array(["b", "a", "c"]), np.array([True, False]), np.array([(1, 2), "x", 2.5], dtype=object)]


def state(summary) -> bytes:
    return pickle.dumps((summary.classes, summary.table(), summary.n))


@settings(max_examples=examples(60), deadline=None)
@given(
    which=st.integers(0, len(SUMMARIES) - 1),
    label_set=st.integers(0, len(LABEL_SETS) - 1),
    blocks=st.lists(
        st.lists(st.tuples(st.one_of(st.floats(-5, 5), st.just(float("nan")), st.sampled_from([0.0, 1.0])), st.integers(0, 2), st.sampled_from([0.0, 1.0, 2.0])), max_size=40),
        min_size=1,
        max_size=6,
    ),
)
def test_update_coded_equals_update_many(which, label_set, blocks):
    labels = LABEL_SETS[label_set]
    coded, plain = SUMMARIES[which](), SUMMARIES[which]()
    for block in blocks:
        values = np.array([v for v, _, _ in block], dtype=float)
        codes = np.array([c % len(labels) for _, c, _ in block], dtype=np.intp)
        weights = np.array([w for _, _, w in block])
        coded.update_coded(values, codes, labels, weights)
        plain.update_many(values, labels[codes], weights)
        assert state(coded) == state(plain)  # classes registered in the same order, same floats


def test_a_class_new_to_the_summary_is_registered_in_order_of_first_appearance():
    gk = GKClass(epsilon=0.01)
    labels = np.array(["x", "y", "z"])
    gk.update_coded(np.arange(5.0), np.array([2, 2, 0, 2, 0]), labels)  # z, x: y never seen
    assert gk.classes == ("z", "x")
    gk.update_coded(np.arange(3.0), np.array([1, 0, 1]), labels)
    assert gk.classes == ("z", "x", "y")


@pytest.mark.parametrize("make", SUMMARIES)
def test_bad_values_leave_the_summary_unchanged(make):
    summary = make()
    labels = np.array([0, 1])
    summary.update_coded(np.arange(30.0), np.arange(30) % 2, labels)
    before = state(summary)
    with pytest.raises(ValueError):
        summary.update_coded(np.array(["a", "b"], dtype=object), np.array([0, 1]), labels)
    with pytest.raises(ValueError):
        summary.update_coded(np.array([1.0, 2.0]), np.array([0, 1]), labels, np.array([1.0, -1.0]))
    assert state(summary) == before
