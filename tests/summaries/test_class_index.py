"""ClassIndex: the vectorised look-up gives the codes of one dict look-up per label."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.tables import _COMPARE_MAX_CLASSES, ClassIndex

LABELS = st.one_of(
    st.lists(st.integers(-3, 40), max_size=60),
    st.lists(st.booleans(), max_size=60),
    st.lists(st.sampled_from(["a", "b", "spam", "", "é"]), max_size=60),
)


def registered_index(labels: list) -> ClassIndex:
    index = ClassIndex()
    for label in labels:
        index.encode(label)
    return index


def by_dict(index: ClassIndex, labels: list):
    try:
        return [index.position[label] for label in labels]
    except KeyError:
        return None


@settings(max_examples=examples(200), deadline=None)
@given(registered=LABELS, labels=LABELS)
def test_lookup_many_matches_one_lookup_per_label(registered, labels):
    index = registered_index(registered)
    expected = by_dict(index, labels)
    codes = index.lookup_many(np.array(labels))
    if expected is None:
        assert codes is None
    else:
        assert codes is not None and codes.tolist() == expected
    assert index.labels == list(dict.fromkeys(registered))  # a look-up registers nothing


@settings(max_examples=examples(100), deadline=None)
@given(registered=LABELS, labels=LABELS)
def test_encode_many_registers_in_order_of_first_appearance(registered, labels):
    index, reference = registered_index(registered), registered_index(registered)
    codes = index.encode_many(np.array(labels))
    assert codes.tolist() == [reference.encode(label) for label in labels]
    assert index.labels == reference.labels


def test_bools_and_ints_share_keys_as_in_a_dict():
    index = ClassIndex()
    index.encode(True)
    index.encode(False)
    assert index.lookup_many(np.array([1, 0, 1])).tolist() == [0, 1, 0]
    assert index.lookup_many(np.array([2])) is None
    assert index.lookup_many(np.array(["a"])) is None


def test_many_classes_use_the_dict_path():
    index = ClassIndex()
    for label in range(_COMPARE_MAX_CLASSES + 5):
        index.encode(label)
    labels = np.arange(_COMPARE_MAX_CLASSES + 5)[::-1]
    assert index.lookup_many(labels).tolist() == labels.tolist()
    assert index.lookup_many(np.array([object()], dtype=object)) is None


POOL = st.sampled_from([1, 1.0, True, 0, False, "a", "b", (1,), (True,), 2.5])


@settings(max_examples=examples(200), deadline=None)
@given(lists=st.lists(st.lists(POOL, max_size=4, unique_by=lambda v: (type(v), v)), max_size=8))
def test_of_many_is_of_for_each_list_and_each_index_is_its_own(lists):
    """Equal lists of labels share nothing, and 1, 1.0 and True (or (1,) and (True,)) stay the
    types they were."""
    many = ClassIndex.of_many(lists)
    one_by_one = [ClassIndex.of(labels) for labels in lists]
    assert len(many) == len(one_by_one)
    for got, expected in zip(many, one_by_one):
        assert [(type(v), repr(v)) for v in got.labels] == [(type(v), repr(v)) for v in expected.labels]
        assert list(got.position.items()) == list(expected.position.items())
        assert [type(k) for k in got.position] == [type(k) for k in expected.position]
    for i, index in enumerate(many):  # each index grows alone
        index.encode(("new", i))
    assert all(len(index) == len(expected) + 1 for index, expected in zip(many, one_by_one))
