"""The sliding history buffer: ring order, bulk pushes equal single pushes, re-encoding."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.engine.history import History, SparseHistory


def _rows(n, K=3, J=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)), rng.normal(size=(n, K, J)), rng.integers(0, J, n), rng.random(n)


@settings(max_examples=examples(60), deadline=None)
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
    values, present = h.column(h.filled(), 0, 0, numeric=True)
    h.reencode(0, present, np.stack([values[present], -values[present]], axis=1))
    rows = h.order()
    np.testing.assert_array_equal(h.log_lik[rows, 0, 0], h.numeric[rows, 0])
    np.testing.assert_array_equal(h.log_lik[rows, 0, 1], -h.numeric[rows, 0])
    # Variable 1 was never present: its encoded column stays zero.
    values, present = h.column(h.filled(), 1, 1, numeric=True)
    h.reencode(1, present, np.ones((int(present.sum()), 3)))
    assert not h.log_lik[rows, 1].any()


@settings(max_examples=examples(60), deadline=None)
@given(capacity=st.integers(1, 12), n=st.integers(0, 30), keep=st.integers(0, 12), grow_to=st.integers(1, 9),
       classes=st.integers(2, 5))  # fmt: skip
def test_growing_and_fitting_the_encoding_keep_the_rows_in_use_and_zeros_after_them(capacity, n, keep, grow_to, classes):
    # (an unfilled ring copies only its first ``size`` rows: the others must be zeros anyway)
    numeric, log_lik, y, w = _rows(n, K=2)
    h = History(capacity)
    h.resize(n_variables=2, n_classes=2, n_numeric=2, n_categorical=0)
    for i in range(n):
        h.push(([0, 1], numeric[i].tolist()), ([], []), [0, 1], log_lik[i], int(y[i]), float(w[i]))
    h.keep_recent(keep)  # (forgetting leaves fewer rows than the ring held)
    before = h.log_lik[h.order()].copy()
    h.resize(n_variables=2 + grow_to, n_classes=classes, n_numeric=2, n_categorical=0)
    h.fit_encoding(2 + grow_to, classes)
    assert h.log_lik.shape == (capacity, 2 + grow_to, classes) and h.log_lik.flags.c_contiguous
    rows = h.order()
    np.testing.assert_array_equal(h.log_lik[rows, :2, :2], before[:, :2, :2])
    assert not h.log_lik[rows, 2:].any() and not h.log_lik[rows, :, 2:].any()
    unused = np.setdiff1d(np.arange(capacity), rows)
    assert not h.log_lik[unused].any()


# ---------------------------------------------------------------------------------------------
# The sparse layout reads the same rows as the dense one


@st.composite
def _sparse_rows(draw):
    """Rows over K variables (the first ``a`` numeric, columns 0 … a − 1; the rest categorical),
    each holding a random subset, some numeric values missing (NaN), some categorical None."""
    a = draw(st.integers(0, 5))
    c = draw(st.integers(0, 3))
    n = draw(st.integers(0, 30))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    present = rng.random((n, a + c)) < draw(st.sampled_from([0.1, 0.5, 1.0]))
    values = np.where(rng.random((n, a)) < 0.1, np.nan, rng.normal(size=(n, a)).round(2))
    categories = np.array([[rng.choice(["u", "v", None]) for _ in range(c)] for _ in range(n)], dtype=object).reshape(n, c)
    return a, c, present, values, categories, rng.integers(0, 3, n), rng.random(n)


def _fill(h, a, c, present, values, categories, y, w, split):
    """Push the rows (one by one up to ``split``, then in one ``push_many``) as the engine does:
    a row lists its numeric variables first, then its categorical ones."""
    h.resize(a + c, 3, a, c, n_encoded=0)
    n = len(y)
    for i in range(min(split, n)):
        ks = np.flatnonzero(present[i, :a])
        cs = np.flatnonzero(present[i, a:])
        h.push((ks, values[i, ks]), (cs, categories[i, cs]), np.concatenate([ks, a + cs]), None, int(y[i]), float(w[i]))
    rest = slice(min(split, n), n)
    block = np.where(present[rest, :a], values[rest], np.nan)
    cats = np.where(present[rest, a:], categories[rest], None)
    h.push_many((np.arange(a), block), (np.arange(c), cats), present[rest], None, y[rest], w[rest],
                variables=(np.arange(a), a + np.arange(c)))


def _same_reads(dense, sparse, a, c):
    assert (dense.size, dense.cursor, dense.stored) == (sparse.size, sparse.cursor, sparse.stored)
    for got, want in zip(sparse.raw(), dense.raw()):
        np.testing.assert_array_equal(got, want)
    for rows in (dense.filled(), dense.order(), dense.recent(3), slice(0, min(2, dense.size))):
        for ks in (np.arange(a), slice(0, a), np.arange(a)[::-1][:2]):
            columns = ks
            for got, want in zip(sparse.numeric_block(rows, ks, columns), dense.numeric_block(rows, ks, columns)):
                np.testing.assert_array_equal(got, want)
        for k in range(a + c):
            numeric = k < a
            for got, want in zip(sparse.column(rows, k, k if numeric else k - a, numeric), dense.column(rows, k, k if numeric else k - a, numeric)):
                np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(sparse.counts(rows, a + c), dense.counts(rows, a + c))
    np.testing.assert_array_equal(sparse.y[sparse.order()], dense.y[dense.order()])
    np.testing.assert_array_equal(sparse.sample_weight[sparse.order()], dense.sample_weight[dense.order()])


def _same_entries(sparse, seed):
    """``numeric_entries`` (the compiled scan of the ring's runs) finds what NumPy's ``nonzero``
    over a gather of the ``m`` most recent rows finds, in the same order, for every ``m`` and a
    few sets of wanted variables (the ring wrapped or not, entries packed after a removal)."""
    rng = np.random.default_rng(seed)
    K = sparse.n_variables
    for m in range(sparse.size + 1):
        for wanted in (np.zeros(K, dtype=bool), np.ones(K, dtype=bool), rng.random(K) < 0.4):
            variable = sparse.entry_variable[sparse.recent(m), : sparse.width]
            value = sparse.entry_value[sparse.recent(m), : sparse.width]
            r, e = np.nonzero(np.append(wanted, False)[variable])
            for got, want in zip(sparse.numeric_entries(m, wanted), (variable[r, e], r, value[r, e])):
                np.testing.assert_array_equal(got, want)


@settings(max_examples=examples(80), deadline=None)
@given(rows=_sparse_rows(), capacity=st.integers(1, 12), split=st.integers(0, 30), keep=st.integers(0, 12))
def test_sparse_layout_reads_what_the_dense_one_reads(rows, capacity, split, keep):
    a, c = rows[0], rows[1]
    dense, sparse = History(capacity), SparseHistory(capacity)
    for h in (dense, sparse):
        _fill(h, *rows, split)
    _same_reads(dense, sparse, a, c)
    # a dense history turned sparse (a loaded model) holds the same rows in the same places
    column = np.concatenate([np.arange(a), np.arange(c)]).astype(np.intp)
    _same_reads(dense, SparseHistory.of(dense, column, np.arange(a + c) < a), a, c)
    _same_reads(dense, sparse.dense(), a, c)  # and back (a saved dense model, loaded)
    # the feed's entries: each wanted variable's present rows, oldest first
    m = min(dense.size, 5)
    wanted = np.arange(a + c) % 2 == 0
    variable, row, value = sparse.numeric_entries(m, wanted & (np.arange(a + c) < a))
    values, present = dense.numeric_block(dense.recent(m), np.arange(a), np.arange(a))
    for k in range(a):
        mine = variable == k
        if wanted[k]:
            np.testing.assert_array_equal(row[mine], np.flatnonzero(present[:, k]))
            np.testing.assert_array_equal(value[mine], values[present[:, k], k])
        else:
            assert not mine.any()
    _same_entries(sparse, seed=m)
    # forgetting and a memory budget move the same rows
    dense.keep_recent(keep)
    sparse.keep_recent(keep)
    _same_reads(dense, sparse, a, c)
    dense.shrink(max(1, keep // 2))
    sparse.shrink(max(1, keep // 2))
    _same_reads(dense, sparse, a, c)


@settings(max_examples=examples(40), deadline=None)
@given(rows=_sparse_rows(), capacity=st.integers(1, 12), split=st.integers(0, 30), seed=st.integers(0, 2**16))
def test_removing_variables_leaves_the_rows_a_history_without_them_holds(rows, capacity, split, seed):
    """``remove`` (a memory budget's eviction) in either layout: the history of the same rows
    filled without the removed variables, row for row in the same places."""
    a, c, present, values, categories, y, w = rows
    keep = np.random.default_rng(seed).random(a + c) < 0.5
    new_index = np.where(keep, np.cumsum(keep) - 1, -1)
    numeric_columns, categorical_columns = np.flatnonzero(keep[:a]), np.flatnonzero(keep[a:])
    a2, c2 = len(numeric_columns), len(categorical_columns)
    without = (a2, c2, present[:, keep], values[:, numeric_columns], categories[:, categorical_columns], y, w)
    expected = History(capacity)
    _fill(expected, *without, split)
    for h in (History(capacity), SparseHistory(capacity)):
        _fill(h, *rows, split)
        h.remove(new_index, numeric_columns, categorical_columns)
        assert (h.n_variables, h.n_numeric, h.n_categorical) == (a2 + c2, a2, c2)
        _same_reads(expected, h, a2, c2)
        if isinstance(h, SparseHistory):
            _same_entries(h, seed)


def test_sparse_layout_memory_grows_with_the_entries_not_the_variables():
    """A row of 3 entries among 100,000 variables costs its entries, not a column per variable."""
    h = SparseHistory(100)
    h.resize(100_000, 2, 100_000, 0, n_encoded=0)
    for i in range(100):
        ks = np.array([i, 50_000 + i, 99_999])
        h.push((ks, np.ones(3)), ([], []), ks, None, i % 2, 1.0)
    assert h.memory_usage() < 100 * 64 * 8  # 100 rows × (at most 4 entries × 24 bytes + row arrays), far below 100 × 100,000
    dense = History(100)
    dense.resize(100_000, 2, 100_000, 0, n_encoded=0)
    assert dense.memory_usage() > 100 * 100_000


def test_fade_clear_encoding_and_resume_clock():
    for h in (History(4), SparseHistory(4)):
        h.resize(1, 2, 1, 0)
        for i in range(6):
            h.push(([0], [float(i)]), ([], []), [0], np.full((1, 2), -1.0), i % 2, 2.0)
        h.fade(0.25)
        assert h.sample_weight[: h.size].tolist() == [0.5] * 4
        h.clear_encoding()
        assert not h.log_lik.any()
        h.resume_clock(40)
        assert h.stored == 40 and h.size == 4
