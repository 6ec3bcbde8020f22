"""Compiled locator of the hot path: numeric values → rows of the stacked level-2 table.

The classifier compiles the intervals of every binned numeric variable into one padded cut matrix
(``docs/design-notes.md``, "Hot path"): variable ``k`` owns the table rows ``first_row[k] + p``,
``p = 0 … n_cuts[k]``, and a finite value ``x`` lies in part ``p = #{cuts[k, :n_cuts[k]] < x}``
(``bisect_left``: intervals are right-closed, spec §5). The count is taken by a branch-free linear
scan, which on the 5–30 cuts of a MODL partition is 6–8× faster than a binary search per value
and than NumPy's ``searchsorted`` called once per variable (measured in ``benchmarks/throughput.py``
runs; the result is the same integer, so nothing downstream changes).

The kernel is compiled by Numba on first call (``cache=True`` keeps the machine code next to this
module, so later processes load it in milliseconds).
"""

from __future__ import annotations

import numba
import numpy as np

from .variable import NOWHERE

__all__ = ["locate_rows"]


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
    return _locate(
        np.ascontiguousarray(cuts, dtype=float),
        np.asarray(n_cuts, dtype=np.intp),
        np.asarray(first_row, dtype=np.intp),
        np.asarray(missing_row, dtype=np.intp),
        np.asarray(ks, dtype=np.intp),
        block,
        out,
    )
