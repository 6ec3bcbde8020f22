"""The compiled lookups of the hot path equal their NumPy definitions to the last bit."""

from __future__ import annotations

import bisect

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.engine._locate import (
    encode_rows,
    locate_and_score,
    locate_row,
    locate_rows,
    place_rows,
    row_sums,
    score_row,
)


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.integers(1, 60), st.integers(1, 12), st.integers(1, 300))
def test_row_sums_equal_numpy_sum_over_variables(seed, n, a, n_classes, n_rows):
    rng = np.random.default_rng(seed)
    # magnitudes over 6 decades: a different order of additions would show in the last bits
    table = rng.normal(size=(n_rows, n_classes)) * 10.0 ** rng.uniform(-3, 3, size=(n_rows, 1))
    rows = rng.integers(-1, n_rows, size=(n, a))
    assert np.array_equal(row_sums(table, rows), table[rows].sum(axis=1))


def random_partitions(rng, n_variables: int):
    """Cut matrix, cut counts, first and missing rows of ``n_variables`` random partitions."""
    n_cuts = rng.integers(0, 6, size=n_variables)
    width = int(n_cuts.max()) + 1
    cuts = np.full((n_variables, width), np.inf)
    grid = np.round(rng.normal(size=(n_variables, width)), 1)  # ties between values and cuts
    for k in range(n_variables):
        values = np.unique(grid[k])[: n_cuts[k]]  # increasing, distinct
        n_cuts[k] = len(values)
        cuts[k, : n_cuts[k]] = values
    first = np.where(rng.random(n_variables) < 0.2, -1, rng.integers(0, 50, size=n_variables))
    missing = np.where(rng.random(n_variables) < 0.3, -1, rng.integers(0, 50, size=n_variables))
    return cuts, n_cuts, first, missing


def random_block(rng, n: int, n_variables: int):
    """Variables ``ks`` and a block of their values with ties, NaN and inf."""
    ks = rng.permutation(n_variables)[: int(rng.integers(1, n_variables + 1))]
    block = np.round(rng.normal(size=(n, len(ks))), 1)
    block[rng.random(block.shape) < 0.1] = np.nan
    block[rng.random(block.shape) < 0.05] = np.inf
    return ks, block


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30), st.integers(1, 8))
def test_locate_rows_is_bisect_left_per_variable(seed, n, n_variables):
    rng = np.random.default_rng(seed)
    cuts, n_cuts, first, missing = random_partitions(rng, n_variables)
    ks, block = random_block(rng, n, n_variables)
    rows = locate_rows(cuts, n_cuts, first, missing, ks, block)
    for r in range(n):
        for i, k in enumerate(ks):
            x = block[r, i]
            if np.isnan(x):
                expected = missing[k]
            elif first[k] < 0:
                expected = -1
            else:
                expected = first[k] + bisect.bisect_left(cuts[k, : n_cuts[k]].tolist(), x)
            assert rows[r, i] == expected


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30), st.integers(1, 8), st.integers(1, 5))
def test_encode_rows_writes_the_located_rows_into_a_strided_view(seed, n, n_variables, n_classes):
    rng = np.random.default_rng(seed)
    cuts, n_cuts, first, missing = random_partitions(rng, n_variables)
    ks, block = random_block(rng, n, n_variables)
    present = rng.random(block.shape) < 0.8
    table = rng.normal(size=(60, n_classes))  # rows up to 49 + 5 cuts, and the zero row
    table[-1] = 0.0
    rows = locate_rows(cuts, n_cuts, first, missing, ks, block)
    rows[~present] = -1
    history = np.full((n + 3, len(ks) + 2, n_classes + 1), 7.0)  # headroom around the view
    encode_rows(cuts, n_cuts, first, missing, ks, block, present, table, history[2 : n + 2, 1 : len(ks) + 1, :n_classes])
    assert np.array_equal(history[2 : n + 2, 1 : len(ks) + 1, :n_classes], table[rows])
    history[2 : n + 2, 1 : len(ks) + 1, :n_classes] = 7.0
    assert np.all(history == 7.0)  # nothing written outside the view


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30), st.integers(1, 8), st.integers(1, 5), st.booleans())
def test_encode_rows_writes_each_column_to_its_slot(seed, n, n_variables, n_classes, contiguous):
    """With ``at``, column i of the block goes to ``out[:, at[i], :J]``, as NumPy's scattered
    assignment ``out[:, at, :J] = table[rows]`` writes it, and nothing else is written."""
    rng = np.random.default_rng(seed)
    cuts, n_cuts, first, missing = random_partitions(rng, n_variables)
    ks, block = random_block(rng, n, n_variables)
    present = rng.random(block.shape) < 0.8
    table = rng.normal(size=(60, n_classes))
    table[-1] = 0.0
    rows = locate_rows(cuts, n_cuts, first, missing, ks, block)
    rows[~present] = -1
    at = rng.permutation(len(ks) + 3)[: len(ks)].astype(np.intp)  # distinct slots, in any order
    history = np.full((n + 3, len(ks) + 3, n_classes + 1), 7.0)
    out = history[1 : n + 1] if contiguous else history[1 : n + 1, :, :n_classes]  # rows of the history, or a strided view
    expected = history.copy()
    expected[1 : n + 1, at, :n_classes] = table[rows]
    encode_rows(cuts, n_cuts, first, missing, ks, block, present, table, out, at)
    assert np.array_equal(history, expected)


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 700), st.integers(1, 8), st.integers(1, 300), st.booleans())
def test_score_row_equals_numpy_to_the_last_bit(seed, a, n_classes, n_rows, zero):
    rng = np.random.default_rng(seed)
    # magnitudes over 12 decades: a pairwise sum (NumPy's over a contiguous axis) would differ
    table = rng.normal(size=(n_rows, n_classes)) * 10.0 ** rng.uniform(-6, 6, size=(n_rows, 1))
    table[-1] = 0.0
    rows = rng.integers(-1, n_rows, size=a).astype(np.intp)
    intercept = np.full(n_classes, -0.0) if zero else rng.normal(size=n_classes)  # -0.0 + 0.0 is 0.0
    got = score_row(table, rows, intercept)
    expected = intercept + np.add.reduce(table[rows], axis=0)
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))  # signed zeros too


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8))
def test_locate_row_is_locate_rows_of_one_row(seed, n_variables):
    rng = np.random.default_rng(seed)
    cuts, n_cuts, first, missing = random_partitions(rng, n_variables)
    ks, block = random_block(rng, 1, n_variables)
    expected = locate_rows(cuts, n_cuts, first, missing, ks, block)[0]
    assert np.array_equal(locate_row(cuts, n_cuts, first, missing, ks, np.ascontiguousarray(block[0])), expected)
    assert locate_row(cuts, n_cuts, first, missing, ks[:0], block[0, :0]).shape == (0,)


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 5))
def test_place_rows_is_the_fancy_assignment(seed, n_variables, n_classes):
    rng = np.random.default_rng(seed)
    table = rng.normal(size=(30, n_classes))
    table[-1] = 0.0
    ks = rng.permutation(n_variables)[: int(rng.integers(0, n_variables + 1))].astype(np.intp)
    rows = rng.integers(-1, 30, size=len(ks)).astype(np.intp)
    slot_of = np.where(rng.random(n_variables) < 0.7, rng.permutation(n_variables), -1).astype(np.intp)
    out = np.full((n_variables + 2, n_classes + 1), 7.0)
    expected = out.copy()
    at = slot_of[ks]
    held = at >= 0
    expected[at[held], :n_classes] = table[rows[held]]
    place_rows(table, rows, ks, slot_of, out)
    assert np.array_equal(out, expected)


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8), st.integers(1, 5), st.booleans())
def test_locate_and_score_is_locate_row_then_score_row(seed, n_variables, n_classes, empty):
    rng = np.random.default_rng(seed)
    cuts, n_cuts, first, missing = random_partitions(rng, n_variables)
    ks, block = random_block(rng, 1, n_variables)
    values = np.ascontiguousarray(block[0, :0] if empty else block[0])
    ks = ks[: len(values)]
    table = rng.normal(size=(60, n_classes)) * 10.0 ** rng.uniform(-6, 6, size=(60, 1))
    table[-1] = 0.0
    intercept = rng.normal(size=n_classes)
    rows, scores = locate_and_score(cuts, n_cuts, first, missing, ks, values, table, intercept)
    expected_rows = locate_row(cuts, n_cuts, first, missing, ks, values)
    assert np.array_equal(rows, expected_rows) and rows.dtype == np.intp
    assert np.array_equal(scores.view(np.int64), score_row(table, expected_rows, intercept).view(np.int64))
