"""Compiled locator of the hot path: numeric values → rows of the stacked level-2 table.

The classifier compiles the intervals of every binned numeric variable into one padded cut matrix
(``docs/design-notes.md``, "Hot path"): variable ``k`` owns the table rows ``first_row[k] + p``,
``p = 0 … n_cuts[k]``, and a finite value ``x`` lies in part ``p = #{cuts[k, :n_cuts[k]] < x}``
(``bisect_left``: intervals are right-closed, docs/algorithms/modl.md#discretization). The count is taken by a branch-free linear
scan, which on the 5–30 cuts of a MODL partition is 6–8× faster than a binary search per value
and than NumPy's ``searchsorted`` called once per variable (measured in ``benchmarks/throughput.py``
runs; the result is the same integer, so nothing downstream changes).

:func:`encode_rows` writes the located table rows straight into their destination (the
history's encoded block), without the row and gather temporaries.

:func:`locate_row`, :func:`score_row`, :func:`locate_and_score` and :func:`place_rows` serve one example (``predict_proba_one``
and ``learn_one``): at K = 500 the NumPy temporaries, gathers and argument conversions around a
kernel cost more than its work, so they take the compiled lookups' arrays as they are and write
no temporary beyond their result.

:func:`row_sums` adds the table rows of each example, in the order of its variables, as NumPy's
``table[rows].sum(axis=1)`` does for two classes or more (a reduction over a non-contiguous axis
is a sequential sum; property-tested equal to the last bit), without the ``(n, a, J)`` temporary.

The kernels are compiled by Numba on first call (``cache=True`` keeps the machine code next to this
module, so later processes load it in milliseconds).
"""

from __future__ import annotations

import numba
import numpy as np

from .. import _kernel_notice
from .variable import NOWHERE

_kernel_notice.install()  # one line on the wnb_stream logger at the first compile

__all__ = ["encode_rows", "locate_and_score", "locate_row", "locate_rows", "place_rows", "row_sums", "score_row"]


@numba.njit(cache=True, nogil=True)
def _locate(cuts, n_cuts, first_row, missing_row, ks, block, out):  # pragma: no cover - compiled
    n, a = block.shape
    for r in range(n):
        for i in range(a):
            k = ks[i]
            x = block[r, i]
            if x != x:  # NaN: the missing part's row (NOWHERE if the variable has none)
                out[r, i] = missing_row[k]
            elif first_row[k] < 0:
                out[r, i] = NOWHERE
            else:
                count = 0
                for p in range(n_cuts[k]):
                    count += cuts[k, p] < x
                out[r, i] = first_row[k] + count
    return out


@numba.njit(cache=True, nogil=True)
def _encode(cuts, n_cuts, first_row, missing_row, ks, block, present, table, out, at):  # pragma: no cover - compiled
    # _locate's rule, written out again: a shared compiled helper (even inlined) made both loops
    # several times slower (numba 0.68), as the GK kernels' speed notes say.
    n, a = block.shape
    n_rows, n_classes = table.shape
    for r in range(n):
        for i in range(a):
            k = ks[i]
            x = block[r, i]
            if not present[r, i]:
                row = n_rows - 1  # NOWHERE: the zero row
            elif x != x:
                row = missing_row[k]
            elif first_row[k] < 0:
                row = NOWHERE
            else:
                count = 0
                for p in range(n_cuts[k]):
                    count += cuts[k, p] < x
                row = first_row[k] + count
            if row < 0:
                row += n_rows  # NOWHERE reads the last row, as NumPy indexing does
            s = at[i]
            for j in range(n_classes):
                out[r, s, j] = table[row, j]


def locate_rows(cuts, n_cuts, first_row, missing_row, ks, block) -> np.ndarray:
    """Table rows ``(n, a)`` of a block of values ``(n, a)`` of the numeric variables ``ks (a,)``.

    Parameters
    ----------
    cuts
        ``(K, P)`` cut points of every variable, increasing in each row (padding after
        ``n_cuts[k]`` is never read).
    n_cuts, first_row, missing_row
        ``(K,)`` integers: number of cuts, table row of the first part (``NOWHERE``: the variable
        has no interval), table row of the missing values' part (``NOWHERE``: none).
    ks
        ``(a,)`` the variables of the block's columns.
    block
        ``(n, a)`` float values; NaN is a missing value.

    Examples
    --------
    >>> cuts = np.array([[0.5, 2.0, np.inf], [np.inf, np.inf, np.inf]])
    >>> rows = locate_rows(cuts, np.array([2, 0]), np.array([0, 3]), np.array([-1, 4]),
    ...                    np.array([0, 1]), np.array([[0.5, 7.0], [3.0, np.nan]]))
    >>> rows.tolist()
    [[0, 3], [2, 4]]
    """
    block = np.ascontiguousarray(block, dtype=float)
    out = np.empty(block.shape, dtype=np.intp)
    if block.size == 0:
        return out
    return _locate(*_partitions(cuts, n_cuts, first_row, missing_row, ks), block, out)


def _partitions(cuts, n_cuts, first_row, missing_row, ks) -> tuple:
    """The compiled partitions and the block's variables in the kernels' array types."""
    return (
        np.ascontiguousarray(cuts, dtype=float),
        np.asarray(n_cuts, dtype=np.intp),
        np.asarray(first_row, dtype=np.intp),
        np.asarray(missing_row, dtype=np.intp),
        np.asarray(ks, dtype=np.intp),
    )


def encode_rows(cuts, n_cuts, first_row, missing_row, ks, block, present, table, out, at=None) -> None:
    """Write ``table[rows]`` into ``out (n, a, J)``: the located rows of ``block``, where ``present``.

    The same as ``out[...] = table[locate_rows(...)]`` with ``NOWHERE`` where ``present (n, a)``
    is False (``table``'s last row, zeros in the classifier's table), without the row and gather
    temporaries; ``out`` may be a strided view (of the history). ``at``: ``(a,)`` distinct
    indices along ``out``'s second axis (``out (n, S, ≥ J)``), column ``i`` of ``block`` written
    to ``out[:, at[i], :J]``, as ``out[:, at, :J] = table[rows]`` does (None: ``0 … a − 1``).

    Examples
    --------
    >>> table = np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])
    >>> out = np.full((2, 1, 2), np.nan)
    >>> encode_rows(np.array([[0.5, np.inf]]), np.array([1]), np.array([0]), np.array([-1]),
    ...             np.array([0]), np.array([[0.7], [0.2]]), np.array([[True], [False]]), table, out)
    >>> out[:, 0].tolist()
    [[3.0, 4.0], [0.0, 0.0]]
    """
    block = np.ascontiguousarray(block, dtype=float)
    if block.size == 0:
        return
    present = np.ascontiguousarray(present, dtype=np.bool_)
    at = np.arange(block.shape[1], dtype=np.intp) if at is None else np.asarray(at, dtype=np.intp)
    _encode(*_partitions(cuts, n_cuts, first_row, missing_row, ks), block, present, np.ascontiguousarray(table, dtype=float), out, at)


@numba.njit(cache=True, nogil=True)
def _row_sums(table, rows, out):  # pragma: no cover - compiled
    n, a = rows.shape
    n_classes = table.shape[1]
    for r in range(n):
        for j in range(n_classes):
            out[r, j] = table[rows[r, 0], j]
        for i in range(1, a):
            row = rows[r, i]
            for j in range(n_classes):
                out[r, j] += table[row, j]
    return out


def row_sums(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``(n, J)`` sums over the variables of ``table[rows]``: ``table (R, J)``, ``rows (n, a)``.

    Row indices may be negative (``NOWHERE`` = -1 reads the table's last row, as NumPy indexing
    does). Equal to ``table[rows].sum(axis=1)`` bit for bit; with one class, or no variable,
    NumPy computes it (its sum over a contiguous axis is pairwise).

    Examples
    --------
    >>> table = np.array([[1.0, 2.0], [0.5, 0.25], [0.0, 0.0]])
    >>> row_sums(table, np.array([[0, 1], [1, -1]])).tolist()
    [[1.5, 2.25], [0.5, 0.25]]
    """
    rows = np.asarray(rows, dtype=np.intp)
    if table.shape[1] < 2 or rows.shape[1] == 0 or rows.shape[0] == 0:
        return table[rows].sum(axis=1)
    rows = np.where(rows < 0, rows + table.shape[0], rows)
    out = np.empty((rows.shape[0], table.shape[1]))
    return _row_sums(np.ascontiguousarray(table, dtype=float), np.ascontiguousarray(rows), out)


def locate_row(cuts, n_cuts, first_row, missing_row, ks, values) -> np.ndarray:
    """Table rows ``(a,)`` of one row's values ``(a,)`` of the numeric variables ``ks (a,)``.

    ``locate_rows`` of the block ``values[None]``, without its argument conversions: the arrays
    are the compiled lookups' (``Lookup``: floats and ``intp`` integers, contiguous) and the row's
    (``rows.Row``). Another type or layout is still located right (the kernel is compiled for
    it), only once more.

    Examples
    --------
    >>> cuts = np.array([[0.5, 2.0, np.inf], [np.inf, np.inf, np.inf]])
    >>> locate_row(cuts, np.array([2, 0]), np.array([0, 3]), np.array([-1, 4]),
    ...            np.array([0, 1]), np.array([3.0, np.nan])).tolist()
    [2, 4]
    """
    out = np.empty((1, len(values)), dtype=np.intp)
    if len(values):
        _locate(cuts, n_cuts, first_row, missing_row, ks, values.reshape(1, -1), out)
    return out[0]


@numba.njit(cache=True, nogil=True)
def _score_row(table, rows, intercept, out):  # pragma: no cover - compiled
    n_rows, n_classes = table.shape
    a = len(rows)
    if a == 0:
        for j in range(n_classes):
            out[j] = intercept[j] + 0.0
        return out
    row = rows[0] + n_rows if rows[0] < 0 else rows[0]
    for j in range(n_classes):
        out[j] = table[row, j]
    for i in range(1, a):
        row = rows[i] + n_rows if rows[i] < 0 else rows[i]
        for j in range(n_classes):
            out[j] += table[row, j]
    for j in range(n_classes):
        out[j] = intercept[j] + out[j]
    return out


def score_row(table: np.ndarray, rows: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    """``(J,)`` ``intercept + np.add.reduce(table[rows], axis=0)``, equal to it bit for bit.

    NumPy sums the gathered ``(a, J)`` block over its first, non-contiguous axis one row after
    the other (as ``row_sums``, property-tested); with one class the axis is contiguous and NumPy
    sums pairwise, so NumPy computes it. Row indices may be negative (``NOWHERE`` reads the last
    row). ``table (R, J)`` floats and ``intercept (J,)``, as the compiled lookups hold them.

    Examples
    --------
    >>> table = np.array([[1.0, 2.0], [0.5, 0.25], [0.0, 0.0]])
    >>> score_row(table, np.array([0, 1, -1]), np.array([10.0, 20.0])).tolist()
    [11.5, 22.25]
    """
    if table.shape[1] < 2:
        return intercept + np.add.reduce(table[rows], axis=0)
    return _score_row(table, rows, intercept, np.empty(table.shape[1]))


@numba.njit(cache=True, nogil=True)
def _place_rows(table, rows, ks, slot_of, out):  # pragma: no cover - compiled
    n_rows, n_classes = table.shape
    for i in range(len(rows)):
        s = slot_of[ks[i]]
        if s < 0:
            continue
        row = rows[i] + n_rows if rows[i] < 0 else rows[i]
        for j in range(n_classes):
            out[s, j] = table[row, j]


def place_rows(table: np.ndarray, rows: np.ndarray, ks: np.ndarray, slot_of: np.ndarray, out: np.ndarray) -> None:
    """``out[slot_of[ks], :J] = table[rows]`` for the variables ``ks`` that have a slot (``slot_of``
    ≥ 0), the others skipped: one row's encoding written into its place in the history.

    ``table (R, J)``, ``rows (a,)`` table rows of the variables ``ks (a,)`` (distinct; negative
    indices read from the end, as NumPy's), ``slot_of (K,)`` and ``out (A', J')`` with J' ≥ J.

    Examples
    --------
    >>> out = np.zeros((2, 3))
    >>> place_rows(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1, 0]), np.array([0, 1]), np.array([1, -1]), out)
    >>> out.tolist()
    [[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]]
    """
    if len(rows):
        _place_rows(table, rows, ks, slot_of, out)


@numba.njit(cache=True, nogil=True)
def _locate_score(cuts, n_cuts, first_row, missing_row, ks, values, table, intercept, rows, out):  # pragma: no cover - compiled
    # _locate's rule then _score_row's sum, written out in one loop (see _encode on shared helpers)
    n_rows, n_classes = table.shape
    for j in range(n_classes):
        out[j] = 0.0
    for i in range(len(values)):
        k = ks[i]
        x = values[i]
        if x != x:
            row = missing_row[k]
        elif first_row[k] < 0:
            row = NOWHERE
        else:
            count = 0
            for p in range(n_cuts[k]):
                count += cuts[k, p] < x
            row = first_row[k] + count
        rows[i] = row
        if row < 0:
            row += n_rows
        if i == 0:
            for j in range(n_classes):
                out[j] = table[row, j]
        else:
            for j in range(n_classes):
                out[j] += table[row, j]
    for j in range(n_classes):
        out[j] = intercept[j] + out[j]
    return out


def locate_and_score(cuts, n_cuts, first_row, missing_row, ks, values, table, intercept) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)``: ``locate_row`` of one row's numeric values, then ``score_row`` of those
    table rows, in one compiled pass (``predict_proba_one`` of a row with no categorical value).

    Equal to the two calls bit for bit (tested); with one class NumPy computes the sum, as
    ``score_row`` does.

    Examples
    --------
    >>> cuts = np.array([[0.5, 2.0, np.inf], [np.inf, np.inf, np.inf]])
    >>> table = np.array([[1.0, 2.0], [0.5, 0.25], [3.0, 0.0], [0.0, 1.0], [4.0, 4.0], [0.0, 0.0]])
    >>> rows, scores = locate_and_score(cuts, np.array([2, 0]), np.array([0, 3]), np.array([-1, 4]),
    ...                                 np.array([0, 1]), np.array([3.0, np.nan]), table, np.array([10.0, 20.0]))
    >>> rows.tolist(), scores.tolist()
    ([2, 4], [17.0, 24.0])
    """
    if table.shape[1] < 2:
        rows = locate_row(cuts, n_cuts, first_row, missing_row, ks, values)
        return rows, score_row(table, rows, intercept)
    rows = np.empty(len(values), dtype=np.intp)
    scores = _locate_score(cuts, n_cuts, first_row, missing_row, ks, values, table, intercept, rows, np.empty(table.shape[1]))
    return rows, scores
