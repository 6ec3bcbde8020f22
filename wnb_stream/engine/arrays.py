"""Two NumPy helpers the engine's parts share: an index run as a slice, an array grown by doubling."""

from __future__ import annotations

import numpy as np

__all__ = ["as_slice", "grow"]


def as_slice(index: np.ndarray) -> np.ndarray | slice:
    """``index`` as a slice when it is a run of consecutive increasing integers (a view, not a
    gather): a run of slots, of history rows in ring order, of raw columns."""
    if len(index) and index[-1] - index[0] == len(index) - 1 and (len(index) < 3 or np.all(np.diff(index) == 1)):
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


def grow(array: np.ndarray, axis: int, size: int, fill, rows: int | None = None) -> np.ndarray:
    """``array`` padded along ``axis`` to at least ``size`` (capacity doubled), new cells = ``fill``.

    ``rows``: only the first ``rows`` entries of axis 0 hold values (a ring not yet full); the
    others are copied as ``fill`` without being read (``axis`` must not be 0)."""
    if array.shape[axis] >= size:
        return array
    new_size = max(size, 2 * array.shape[axis], 4)
    shape = list(array.shape)
    shape[axis] = new_size
    # zeros come from the allocator's zeroed pages, touched only where written (the encoded block
    # of a wide stream is gigabytes); other fills are written out
    out = np.zeros(shape, dtype=array.dtype) if fill is not None and not fill else np.full(shape, fill, dtype=array.dtype)
    index = [slice(None)] * array.ndim
    index[axis] = slice(0, array.shape[axis])
    if rows is not None and rows < array.shape[0]:
        index[0] = slice(0, rows)
        array = array[:rows]
    out[tuple(index)] = array
    return out
