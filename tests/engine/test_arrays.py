"""The engine's array helpers (``engine/arrays.py``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wnb_stream.engine.arrays import extended


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=12), st.integers(0, 3), st.booleans())
def test_extended_is_a_concatenation(growths, width, start_with_a_view):
    """A sequence of ``extended`` calls gives the arrays a sequence of concatenations gives, and
    writes nothing an earlier result holds (its first rows)."""
    shape = (3,) if width == 0 else (3, width)
    array = np.arange(np.prod(shape), dtype=float).reshape(shape)
    if start_with_a_view:  # a prefix of an array it did not make (a loaded model's column): copied
        other = np.full((10,) + shape[1:], 99.0)
        other[:3] = array
        array = other[:3]
    expected = array.copy()
    earlier = []
    for step, grow in enumerate(growths):
        n = len(expected) + grow
        array = extended(array, n, float(step))
        expected = np.concatenate([expected, np.full((grow,) + shape[1:], float(step))])
        assert array.shape == expected.shape and array.dtype == expected.dtype
        assert np.array_equal(array, expected)
        earlier.append((array, array.copy()))
        array[-1:] += 0.0  # (written in place, as the engine writes its arrays)
    for held, copy in earlier:
        assert np.array_equal(held, copy), "an earlier result changed"
    if start_with_a_view:
        assert (other[3:] == 99.0).all(), "the rows after a foreign prefix were written"


def test_extended_keeps_its_buffer_while_it_has_room():
    a = extended(np.zeros(4, dtype=np.intp), 5, 1)
    assert a.base is not None and len(a.base) == 8
    b = extended(a, 8, 2)
    assert b.base is a.base and b.tolist() == [0, 0, 0, 0, 1, 2, 2, 2]
    assert extended(b, 8, 3) is b  # nothing to add
    c = extended(b.copy(), 9, 4)  # a copy is not its buffer's prefix: a new buffer
    assert c.base is not a.base and c.tolist() == [0, 0, 0, 0, 1, 2, 2, 2, 4]


def test_an_earlier_view_is_copied_not_lengthened_over_a_later_one():
    a = extended(np.zeros(2), 3, 1.0)  # buffer of 4
    b = extended(a, 4, 2.0)  # the same buffer, rows 0–3
    c = extended(a, 4, 3.0)  # an earlier view: its own buffer
    assert b.tolist() == [0.0, 0.0, 1.0, 2.0] and c.tolist() == [0.0, 0.0, 1.0, 3.0]
    assert c.base is not b.base
