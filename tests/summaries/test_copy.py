"""``copy.deepcopy`` of a summary (``Summary.__deepcopy__``, ``ClassIndex.__deepcopy__``): the copy a
merge takes of every summary of its sides. It must be the copy the generic walk makes: the same
state, to the bit, and nothing shared that either may change."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from summary_cases import CONFIGS, EXAMPLES, assert_same_table, feed, streams

from wnb_stream import io
from wnb_stream.tables import ClassIndex


def _generic(summary):
    """The copy of the generic walk (pickle's reduce protocol), bypassing ``__deepcopy__``."""
    return pickle.loads(pickle.dumps(summary))


def _state(summary) -> bytes:
    """The summary's saved record (its JSON text: every field of its state, arrays to the bit)."""
    return io.dumps(summary, compress=False)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(data=st.data())
@settings(max_examples=EXAMPLES, deadline=None)
def test_a_copy_is_the_generic_copy_and_shares_nothing_that_changes(name, data):
    summary = CONFIGS[name]()
    rows = data.draw(streams(summary.kind))
    feed(summary, rows, "one")
    clone = copy.deepcopy(summary)
    assert type(clone) is type(summary) and _state(clone) == _state(summary) == _state(_generic(summary))
    assert clone.classes == summary.classes
    for field, value in summary.__dict__.items():  # no mutable state shared
        if isinstance(value, np.ndarray | list | dict) or hasattr(value, "__dict__") or hasattr(value, "__slots__"):
            assert clone.__dict__[field] is not value or isinstance(value, int | float | str), field
    more = data.draw(streams(summary.kind, max_size=10))
    before = _state(summary)
    feed(clone, more, "one")  # the copy learns on; the original does not move
    assert _state(summary) == before
    twin = copy.deepcopy(summary)
    feed(twin, more, "one")
    assert_same_table(twin.table(), clone.table())


def test_objects_met_twice_stay_shared_in_the_copy():
    summary = CONFIGS["gk-eps0.1"]()
    feed(summary, [(1.0, "a", 1.0), (2.0, "b", 1.0)], "one")
    pair = copy.deepcopy([summary, summary])
    assert pair[0] is pair[1] and pair[0] is not summary


@pytest.mark.parametrize("labels", [["b", "a", 3, 2.5, True, None], [(1, "t"), "x", frozenset({1})]])
def test_a_class_index_copy_answers_as_the_original(labels):
    index = ClassIndex.of(labels)
    clone = copy.deepcopy(index)
    assert clone.classes == index.classes and clone.position == index.position
    assert clone.labels is not index.labels and clone.position is not index.position
    clone.encode("new")
    assert "new" not in index.position
