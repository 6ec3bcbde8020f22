"""NumPy helpers the engine's parts share: an index run as a slice, an array grown by doubling,
a per-variable array lengthened in the room its buffer keeps."""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["as_slice", "extended", "grow"]


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


#: The arrays ``extended`` returned, each the first rows of its buffer (by id; an entry goes
#: with its array).
_VIEWS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def extended(array: np.ndarray, n: int, fill) -> np.ndarray:
    """``array`` (``m`` rows) lengthened to ``n`` rows, the new ones holding ``fill``: a view of
    ``n`` rows of a buffer with room for more. Amortised O(n − m) rows written per call, where a
    concatenation copies all m: a row of a wide sparse stream brings dozens of new variables to
    arrays of 10^5 rows (the registry's and the lookups' per-variable arrays).

    When ``array`` is the last view of a buffer this function returned (its first ``m`` rows) and
    that buffer has ``n`` rows, the result is its first ``n`` rows, and the rows beyond ``m`` are
    written again with ``fill``. Any other array (an earlier, shorter view of such a buffer, one
    of a loaded model's decoded columns, a copy) is copied into the first ``m`` rows of a new
    buffer of twice as many: no array this function returned changes in its rows but the ones
    the caller writes.

    >>> a = extended(np.arange(3), 5, -1)
    >>> a.tolist(), len(a.base)
    ([0, 1, 2, -1, -1], 6)
    >>> b = extended(a, 6, 9)
    >>> b.tolist(), b.base is a.base
    ([0, 1, 2, -1, -1, 9], True)
    >>> extended(b, 7, 0).base is a.base  # (no room left: a buffer twice as long)
    False
    >>> extended(a, 6, 0).base is a.base  # (a shorter view than the last one: copied)
    False
    """
    m = len(array)
    if n <= m:
        return array
    if _VIEWS.get(id(array)) is array and len(array.base) >= n:  # (the last view of its buffer returned)
        del _VIEWS[id(array)]  # (a shorter view of a buffer is never lengthened in place again)
        out = array.base[:n]
    else:
        buffer = np.empty((max(n, 2 * m),) + array.shape[1:], dtype=array.dtype)
        out = buffer[:n]
        out[:m] = array
    _VIEWS[id(out)] = out
    out[m:] = fill
    return out
