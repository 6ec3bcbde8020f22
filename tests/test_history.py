"""The sliding history buffer: ring order, bulk pushes equal single pushes, re-encoding."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wnb_stream.history import History


def _rows(n, K=3, J=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)), rng.normal(size=(n, K, J)), rng.integers(0, J, n), rng.random(n)


@settings(max_examples=60, deadline=None)
@given(capacity=st.integers(1, 20), n=st.integers(0, 50), split=st.integers(0, 50))
def test_push_many_equals_a_loop_of_push(capacity, n, split):
    numeric, log_lik, y, w = _rows(n)
    one, many = History(capacity), History(capacity)
    for h in (one, many):
        h.resize(n_variables=3, n_classes=2, n_numeric=2, n_categorical=0)
    present = np.ones((n, 3), dtype=bool)
    for i in range(n):
        one.push(([0, 1], numeric[i].tolist()), ([], []), [0, 1, 2], log_lik[i], int(y[i]), float(w[i]))
    split = min(split, n)
    for lo, hi in ((0, split), (split, n)):
        many.push_many(([0, 1], numeric[lo:hi]), ([], np.zeros((hi - lo, 0), dtype=object)), present[lo:hi],
                       log_lik[lo:hi], y[lo:hi], w[lo:hi])
    assert len(one) == len(many) == min(n, capacity)
    o, m = one.order(), many.order()
    np.testing.assert_array_equal(one.numeric[o, :2], many.numeric[m, :2])
    np.testing.assert_array_equal(one.log_lik[o, :3, :2], many.log_lik[m, :3, :2])
    np.testing.assert_array_equal(one.y[o], many.y[m])
    # The ring keeps the most recent rows, oldest first.
    np.testing.assert_array_equal(one.y[o], y[max(0, n - capacity):])
    np.testing.assert_array_equal(one.y[one.recent(2)], y[max(0, n - capacity):][-2:])


def test_growing_axes_keeps_rows_and_reencode_uses_raw_values():
    h = History(4)
    h.resize(1, 2, 1, 0)
    for i in range(6):
        h.push(([0], [float(i)]), ([], []), [0], np.full((1, 2), -1.0), i % 2, 1.0)
    h.resize(3, 3, 2, 1)
    assert h.log_lik.shape[1] >= 3 and h.log_lik.shape[2] >= 3
    np.testing.assert_array_equal(np.sort(h.numeric[h.order(), 0]), [2.0, 3.0, 4.0, 5.0])
    h.reencode(0, h.numeric[:, 0], lambda v: np.stack([v, -v], axis=1))
    rows = h.order()
    np.testing.assert_array_equal(h.log_lik[rows, 0, 0], h.numeric[rows, 0])
    np.testing.assert_array_equal(h.log_lik[rows, 0, 1], -h.numeric[rows, 0])
    # Variable 1 was never present: its encoded column stays zero.
    h.reencode(1, h.numeric[:, 1], lambda v: np.ones((len(v), 3)))
    assert not h.log_lik[rows, 1].any()
