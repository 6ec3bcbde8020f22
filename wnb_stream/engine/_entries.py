"""Compiled scan of a sparse history's entries (``SparseHistory.numeric_entries``).

A rebuild of a wide sparse stream feeds a few dozen variables from the rows they have not taken,
which may be thousands of rows of a hundred entries each. NumPy finds them with a gather of a
wanted-flag per entry and a ``nonzero`` over the ``rows × width`` result; this kernel reads each
row's entries once, up to the first empty one (a row's entries are packed to the left, −1 after
them), and writes only the positions found: the same positions, in the same order (row by row,
then by place in the row), a few times faster (``benchmarks/README.md``, Sparse streams).

Compiled by Numba on first call (``cache=True``: later processes load the machine code).
"""

from __future__ import annotations

import numba
import numpy as np

from .. import _kernel_notice

_kernel_notice.install()  # one line on the wnb_stream logger at the first compile

__all__ = ["wanted_entries"]


@numba.njit(cache=True, nogil=True)
def wanted_entries(variable, start, stop, width, wanted):
    """``(r, e)`` int64: the entries ``variable[start + r, e]`` (``e < width``) whose variable is
    ``wanted`` (bool, one per variable), rows ``start … stop − 1`` in order, each row's in order;
    ``r`` counts from ``start``. Each row's entries end at its first −1. The positions of
    ``np.nonzero(flag[variable[start:stop, :width]])``, with ``flag`` = ``wanted`` and False for −1."""
    size = max(stop - start, 0) * width  # (room for every entry: np.empty touches no page it is not given)
    rows = np.empty(size, dtype=np.int64)
    places = np.empty(size, dtype=np.int64)
    found = 0
    for i in range(start, stop):
        for j in range(width):
            k = variable[i, j]
            if k < 0:
                break
            if wanted[k]:
                rows[found] = i - start
                places[found] = j
                found += 1
    return rows[:found].copy(), places[:found].copy()
