"""The sliding history buffer: the last N raw rows, and their encoding by the current level 2.

Design note. The weight learners judge their criterion on the N most recent examples
(docs/algorithms/prediction.md#history). Level 2 is rebuilt on a schedule, and every rebuild changes
ℓ_kj(x) = log p(x_k | C_j), so the buffer keeps the *raw* values and re-encodes a
variable's column whenever that variable's partition changes. Between rebuilds the encoded tensor
``log_lik`` is kept up to date row by row, so a learner step never re-encodes anything.

Storage is columnar and preallocated (a ring of ``capacity`` rows):

- ``numeric``: ``(capacity, n_numeric)`` floats, NaN for missing;
- ``categorical``: ``(capacity, n_categorical)`` objects, None for missing;
- ``present``: ``(capacity, K)`` bool, False where the feature was absent from the row;
- ``log_lik``: ``(capacity, A, J)`` encoded rows, one column per level-3 slot (the engine's
  ``Slots``: the A variables whose level 2 is not flat; zeros where absent). While the ring is
  not full, its rows beyond ``size`` hold zeros (every method that frees rows zeroes them), so
  a row appended there is not zeroed first (``zeros_beyond_size`` checks it);
- ``y``: ``(capacity,)`` class indices; ``sample_weight``: ``(capacity,)``.

Column axes grow by doubling when variables, slots or classes appear, so memory is bounded by
capacity × (number of variables + slots × classes), never by the stream length.

A sparse stream (a model with ``absent`` set) keeps each row's entries instead of ``numeric`` and
``present`` (``SparseHistory``): its memory is bounded by capacity × (the widest row's entries +
categorical columns + slots × classes), whatever the number of variables. Callers read the raw
rows of either layout through the same methods (``numeric_block``, ``column``, ``counts``,
``raw``).
"""

from __future__ import annotations

import numpy as np

from ..io.registry import register
from ..io.schema import Array, Fields, Int, Schema
from ._entries import wanted_entries
from .arrays import as_slice, grow

__all__ = ["History", "SparseHistory"]


def _some(index) -> bool:
    """True unless ``index`` is an empty list or array of indices (a slice always counts)."""
    return isinstance(index, slice) or len(index) > 0


class History:
    """Ring buffer of the last ``capacity`` rows (raw values and encoded log-likelihoods).

    Parameters
    ----------
    capacity
        The history depth N.
    encoded
        False for a history of raw rows only (a round's delta, ``Engine(collect=True)``): the
        encoded block ``log_lik`` is never allocated.

    Examples
    --------
    >>> h = History(capacity=3)
    >>> h.resize(n_variables=1, n_classes=2, n_numeric=1, n_categorical=0)
    >>> for i in range(5):
    ...     h.push(numeric=([0], [float(i)]), categorical=([], []), present=[0],
    ...            log_lik_row=np.zeros((1, 2)), y=i % 2, sample_weight=1.0)
    >>> len(h), sorted(h.numeric[h.order(), 0].tolist())
    (3, [2.0, 3.0, 4.0])
    """

    encoded = True  # (a class default: histories pickled before the flag existed)
    sparse = False  # (``SparseHistory``: a row's entries instead of a column per variable)

    def __init__(self, capacity: int, encoded: bool = True):
        self.capacity = int(capacity)
        self.encoded = encoded
        self.size = 0
        self.cursor = 0  # next row to write
        self.stored = 0  # rows ever pushed (the clock of the summaries fed from here)
        self.n_variables = 0  # columns in use of present (the arrays may hold more)
        self.n_encoded = 0  # columns in use of log_lik (slots)
        self.n_classes = 0
        self.n_numeric = 0  # columns in use of numeric and categorical
        self.n_categorical = 0
        self.numeric = np.full((self.capacity, 0), np.nan)
        self.categorical = np.full((self.capacity, 0), None, dtype=object)
        self.present = np.zeros((self.capacity, 0), dtype=bool)
        self.log_lik = np.zeros((self.capacity, 0, 0))
        self.y = np.zeros(self.capacity, dtype=np.intp)
        self.sample_weight = np.zeros(self.capacity)

    def __len__(self) -> int:
        return self.size

    def resize(self, n_variables: int, n_classes: int, n_numeric: int, n_categorical: int, n_encoded: int | None = None) -> None:
        """Make room for at least these many variables, classes, raw columns and encoded columns
        (``n_encoded``: as many as variables if not given)."""
        n_encoded = n_variables if n_encoded is None else n_encoded
        self._grow_raw(n_variables, n_numeric, n_categorical)
        if self.encoded:
            # (the rows beyond ``size`` are zeros, written before they are read: not copied)
            self.log_lik = grow(self.log_lik, 1, n_encoded, 0.0, rows=self.size)
            self.log_lik = grow(self.log_lik, 2, n_classes, 0.0, rows=self.size)
        self.n_encoded = max(self.n_encoded, n_encoded)
        self.n_variables = max(self.n_variables, n_variables)
        self.n_classes = max(self.n_classes, n_classes)
        self.n_numeric = max(self.n_numeric, n_numeric)
        self.n_categorical = max(self.n_categorical, n_categorical)

    def _grow_raw(self, n_variables: int, n_numeric: int, n_categorical: int) -> None:
        self.numeric = grow(self.numeric, 1, n_numeric, np.nan)
        self.categorical = grow(self.categorical, 1, n_categorical, None)
        self.present = grow(self.present, 1, n_variables, False)

    def fit_encoding(self, n_encoded: int, n_classes: int) -> None:
        """Drop the headroom of ``log_lik`` beyond ``(n_encoded, n_classes)`` (at least the sizes
        in use), so that the rows in use are one contiguous ``(size, K, J)`` block for the learners.

        ``resize`` grows with headroom (doubling) so that features and classes arriving one at a
        time cost amortised O(1) copies; the learners read the history far more often than it
        grows, and a strided window costs every criterion evaluation (several times slower gathers
        and products). A copy is made only when there is headroom to drop.
        """
        if self.log_lik.shape[1:] != (n_encoded, n_classes):
            assert n_encoded >= self.n_encoded and n_classes >= self.n_classes, "cells in use would be dropped"
            # (only the rows in use: an unfilled ring holds them at the front, zeros after them)
            fitted = np.zeros((self.log_lik.shape[0], n_encoded, n_classes))
            fitted[: self.size] = self.log_lik[: self.size, :n_encoded, :n_classes]
            self.log_lik = fitted

    def drop_encoding(self) -> None:
        """No encoded column is in use any more (level 3 restarts; columns are encoded again as
        slots are handed out)."""
        self.n_encoded = 0

    def push(self, numeric, categorical, present, log_lik_row, y: int, sample_weight: float) -> None:
        """Append one row, overwriting the oldest when full.

        ``numeric`` and ``categorical`` are pairs (column indices, values); ``present`` lists the
        variable indices present in the row; indices may be given as a slice. ``log_lik_row`` is
        ``(K, J)``, or None for a row to be encoded later (zeros until then, see ``newest``).
        """
        i = self.cursor
        self._write_raw(i, numeric, present)
        if self.categorical.shape[1]:
            self.categorical[i] = None
        if _some(categorical[0]):
            self.categorical[i, categorical[0]] = categorical[1]
        if i < self.size:  # (a row of an unfilled ring beyond ``size`` holds zeros already)
            self.log_lik[i] = 0.0
        if log_lik_row is not None:
            k, j = log_lik_row.shape
            self.log_lik[i, :k, :j] = log_lik_row
        self.y[i] = y
        self.sample_weight[i] = sample_weight
        self.cursor = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)
        self.stored += 1

    def _write_raw(self, i: int, numeric, present) -> None:
        """Row ``i``'s raw numeric values and presence (``push``'s arguments)."""
        self.numeric[i] = np.nan
        self.present[i] = False
        if _some(numeric[0]):
            self.numeric[i, numeric[0]] = numeric[1]
        self.present[i, present] = True

    def push_many(self, numeric, categorical, present, log_lik, y, sample_weight, variables=None) -> None:
        """Append ``m`` rows at once (same layout as ``push``, with a leading row axis).

        ``numeric`` is ``(columns, (m, c) values)``, ``categorical`` likewise, ``present`` is an
        ``(m, K)`` bool array and ``log_lik`` ``(m, K, J)`` or None (zeros, encoded later). Only the
        last ``capacity`` rows are kept. ``variables``, the variable indices of ``numeric``'s and
        ``categorical``'s columns, is for the sparse layout (``SparseHistory``).
        """
        m = len(y)
        if m == 0:
            return
        rows, skip = self._rows(m)
        at, columns = as_slice(rows), as_slice(np.asarray(numeric[0], dtype=np.intp))
        if isinstance(at, slice) and isinstance(columns, slice) and columns.start == 0:
            # consecutive ring rows and the first c columns (a merged window): slices, no NaN first
            self.numeric[at, : columns.stop] = numeric[1][skip:]
            self.numeric[at, columns.stop :] = np.nan
        else:
            self.numeric[rows] = np.nan
            if len(numeric[0]):
                self.numeric[np.ix_(rows, numeric[0])] = numeric[1][skip:]
        self.present[at, : present.shape[1]] = present[skip:]
        self.present[at, present.shape[1] :] = False
        self._write_rest(rows, skip, categorical, log_lik, y, sample_weight)

    def open_rows(self, m: int) -> slice:
        """Append ``m`` rows (at most ``capacity``) to an empty ring without writing them: the ring
        rows ``0:m``, which hold what a fresh ring holds (NaN, absent, no category, a zero
        encoding, class 0, weight 0) until the caller writes them. A merged window
        (``merge.merge_histories``) writes each side's rows where they go, instead of through a
        block of its own that ``push_many`` would copy. The clock counts them."""
        assert self.size == 0 and self.cursor == 0 and 0 <= m <= self.capacity, "an empty ring with room for the rows"
        self.stored += m
        self.size = m
        self.cursor = m % self.capacity
        return slice(0, m)

    def _rows(self, m: int) -> tuple[np.ndarray, int]:
        """The ring rows of ``m`` rows being appended, and how many of them do not fit (the first
        ``skip``: they pass through the ring at once; the rows are those of the others). Advances
        the clock."""
        self.stored += m
        skip = max(0, m - self.capacity)
        if skip:
            self.cursor = (self.cursor + skip) % self.capacity
            self.size = min(self.size + skip, self.capacity)
        return (self.cursor + np.arange(m - skip)) % self.capacity, skip

    def _write_rest(self, rows: np.ndarray, skip: int, categorical, log_lik, y, sample_weight) -> None:
        """What both layouts store alike for the appended ``rows`` (of the rows given, those after
        the first ``skip``): categorical values, encoding (None: zeros), class and sample weight;
        then the ring moves past them."""
        self.categorical[rows] = None
        if len(categorical[0]):
            self.categorical[np.ix_(rows, categorical[0])] = categorical[1][skip:]
        # Only the rows that held a row before are zeroed: those of an unfilled ring beyond
        # ``size`` hold zeros (the ring's invariant), so a young model's batches and a sparse
        # merged window do not write their fresh encoded rows twice.
        dirty = rows if self.size >= self.capacity else rows[rows < self.size]
        if len(dirty):
            self.log_lik[as_slice(dirty)] = 0.0
        if log_lik is not None:
            self.log_lik[rows, : log_lik.shape[1], : log_lik.shape[2]] = log_lik[skip:]
        self.y[rows] = y[skip:]
        self.sample_weight[rows] = sample_weight[skip:]
        self.cursor = (self.cursor + len(rows)) % self.capacity
        self.size = min(self.size + len(rows), self.capacity)

    def keep_recent(self, m: int) -> None:
        """Drop every row but the ``m`` most recent (forgetting); they move to the front of the ring.

        ``stored`` (the clock) does not change. Cost O(m · columns).
        """
        m = max(0, min(int(m), self.size))
        if m == self.size:
            return
        rows = self.recent(m)
        for name in self._ROWS:
            array = getattr(self, name)
            kept = array[rows]
            array[m:] = self._FILL.get(name, 0)
            array[:m] = kept
        self.size = m
        self.cursor = m % self.capacity

    def shrink(self, capacity: int) -> None:
        """Keep the ``capacity`` most recent rows in a ring of that many rows (a memory budget);
        the arrays are reallocated, so the memory of the dropped rows is freed. ``stored`` (the
        clock) does not change. Cost O(capacity · columns)."""
        capacity = max(1, int(capacity))
        if capacity >= self.capacity:
            return
        m = min(self.size, capacity)
        rows = self.recent(m)  # oldest first: they go to the front of the new ring
        for name in self._ROWS:
            array = getattr(self, name)
            kept = np.full((capacity, *array.shape[1:]), self._FILL.get(name, 0), dtype=array.dtype)
            kept[:m] = array[rows]
            setattr(self, name, kept)
        self.capacity, self.size = capacity, m
        self.cursor = m % capacity

    def remove(self, new_index: np.ndarray, numeric_columns: np.ndarray, categorical_columns: np.ndarray) -> None:
        """Drop the raw columns of evicted variables (``Registry.remove``'s results: ``new_index
        (n_variables,)`` each variable's index after the removal, −1 for a dropped one, and the
        raw ``numeric_columns`` and ``categorical_columns`` kept, increasing). Every row keeps its
        place; the blocks are reallocated without headroom, so their memory is freed. The
        encoded block is the slots' and does not change (an evicted variable has no slot).
        Cost O(capacity · columns)."""
        keep = new_index >= 0
        self.categorical = np.ascontiguousarray(self.categorical[:, categorical_columns])
        self._remove_raw(keep, new_index, numeric_columns)
        self.n_variables, self.n_numeric, self.n_categorical = int(keep.sum()), len(numeric_columns), len(categorical_columns)

    def _remove_raw(self, keep: np.ndarray, new_index: np.ndarray, numeric_columns: np.ndarray) -> None:
        self.numeric = np.ascontiguousarray(self.numeric[:, numeric_columns])
        self.present = np.ascontiguousarray(self.present[:, : len(keep)][:, keep])

    def column_bytes(self, numeric: bool) -> int:
        """Bytes of the window's raw blocks that one variable of that kind holds."""
        return self.capacity * (self.numeric.itemsize if numeric else self.categorical.itemsize) + self.capacity * self.present.itemsize

    def order(self) -> np.ndarray:
        """Row indices from the oldest to the most recent, ``(size,)``."""
        start = (self.cursor - self.size) % self.capacity
        return (start + np.arange(self.size)) % self.capacity

    def zeros_beyond_size(self) -> bool:
        """Whether the encoded rows beyond ``size`` of an unfilled ring hold zeros (the ring's
        invariant, which ``push`` and ``push_many`` rely on). O(capacity · A · J)."""
        return self.size >= self.capacity or not self.log_lik[self.size :].any()

    def newest(self) -> int:
        """Row index of the most recent row (the history must not be empty)."""
        return (self.cursor - 1) % self.capacity

    def recent(self, m: int) -> np.ndarray:
        """Row indices of the ``m`` most recent rows, oldest first."""
        m = min(m, self.size)
        return (self.cursor - m + np.arange(m)) % self.capacity

    def runs(self, m: int) -> list[tuple[int, int]]:
        """The rows of ``recent(m)`` as one or two runs ``(start, stop)`` of the ring, oldest first
        (the ring wraps at most once): to read them where they lie."""
        m = min(m, self.size)
        start = (self.cursor - m) % self.capacity
        return [(start, start + m)] if start + m <= self.capacity else [(start, self.capacity), (0, start + m - self.capacity)]

    def filled(self) -> np.ndarray | slice:
        """Index of the rows in use (order does not matter for a sum over rows)."""
        return slice(0, self.size)

    def class_weights(self, n_classes: int) -> np.ndarray:
        """``(n_classes,)`` the sample weight of the rows in use, per class. O(size)."""
        rows = self.filled()
        return np.bincount(self.y[rows], weights=self.sample_weight[rows], minlength=n_classes)[:n_classes]

    def window(self, rows, n_encoded: int, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Read-only ``log_lik (n, A, J)``, ``y (n,)`` and ``sample_weight (n,)`` of ``rows``.

        ``rows`` is a slice (a view, no copy: the rows in use, or a run of consecutive rows) or
        an index array (a copy). The arrays are valid until the next push or re-encoding; a
        learner reads them during its step and cannot write to them.
        """
        out = self.log_lik[rows, :n_encoded, :n_classes], self.y[rows], self.sample_weight[rows]
        for array in out:
            array.flags.writeable = False
        return out

    def reencode(self, slot: int, present: np.ndarray, encoded: np.ndarray | None, default: np.ndarray | None = None) -> None:
        """Write the encoded column ``slot`` over the rows in use: ``encoded (p, ·)`` at the p rows
        where ``present (n,)`` (None: p = 0), elsewhere ``default (J,)`` (an absent value's) or zeros."""
        ll = np.zeros((self.size, self.log_lik.shape[2]))
        if default is not None:
            ll[~present, : len(default)] = default
        if encoded is not None:
            ll[present, : encoded.shape[1]] = encoded
        self.log_lik[self.filled(), slot, :] = ll

    def clear_encoding(self) -> None:
        """Zero the encoded block (it is written again from the raw rows). O(capacity · A · J)."""
        self.log_lik[...] = 0.0

    def fade(self, factor: float) -> None:
        """Multiply the sample weight of the rows in use by ``factor`` (forgetting). O(size)."""
        self.sample_weight[: self.size] *= factor

    def resume_clock(self, stored: int) -> None:
        """Count ``stored`` rows stored so far (a merged window: the sides' rows together). O(1)."""
        self.stored = stored

    # ------------------------------------------------------------------ reading the raw rows
    # Every reader of the raw rows goes through these, so that the sparse layout
    # (``SparseHistory``) serves the same callers.

    def numeric_block(self, rows, ks, columns) -> tuple[np.ndarray, np.ndarray]:
        """``values (m, g)`` (NaN where absent or missing) and ``present (m, g)`` of the numeric
        variables ``ks`` (their raw ``columns``; either may be a slice) in ``rows`` (a slice or an
        index array)."""
        if isinstance(rows, slice):
            return self.numeric[rows, columns], self.present[rows, ks]
        if isinstance(ks, slice) or isinstance(columns, slice):
            return self.numeric[rows][:, columns], self.present[rows][:, ks]
        return self.numeric[np.ix_(rows, columns)], self.present[np.ix_(rows, ks)]

    def column(self, rows, k: int, column: int, numeric: bool) -> tuple[np.ndarray, np.ndarray]:
        """``values (m,)`` and ``present (m,)`` of variable ``k`` (raw ``column`` of its kind) in ``rows``."""
        raw = self.numeric if numeric else self.categorical
        return raw[rows, column], self.present[rows, k]

    def counts(self, rows, n_variables: int) -> np.ndarray:
        """``(n_variables,)`` the number of ``rows`` each variable is present in."""
        return self.present[rows, :n_variables].sum(axis=0)

    def raw(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows in use in ring order, dense: ``numeric (size, n_numeric)`` (NaN where absent
        or missing), ``categorical (size, n_categorical)`` and ``present (size, n_variables)``
        (a saved model's layout)."""
        rows = self.filled()
        return self.numeric[rows, : self.n_numeric], self.categorical[rows, : self.n_categorical], self.present[rows, : self.n_variables]

    _ROWS = ("numeric", "categorical", "present", "log_lik", "y", "sample_weight")  # arrays with a row axis
    _FILL = {"numeric": np.nan, "categorical": None, "present": False}  # (others: 0)

    def __getstate__(self) -> dict:
        """The state, with only the rows in use while the ring has not filled (a delta of a few
        rows is shipped without its empty capacity); a full ring as it is."""
        state = dict(self.__dict__)
        if self.size < self.capacity:
            assert self.cursor == self.size, "an unfilled ring holds its rows at the front"
            for name in self._ROWS:
                state[name] = state[name][: self.size]
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("n_encoded", state.get("n_variables", 0))  # (pickled before slots: one per variable)
        self.__dict__.update(state)
        for name in self._ROWS:
            array = getattr(self, name)
            if array.shape[0] < self.capacity:
                full = np.full((self.capacity, *array.shape[1:]), self._FILL.get(name, 0), dtype=array.dtype)
                full[: array.shape[0]] = array
                setattr(self, name, full)

    def memory_usage(self) -> int:
        return int(sum(getattr(self, name).nbytes for name in self._ROWS))


class SparseHistory(History):
    """A ``History`` that stores each row's entries instead of a column per variable: the layout
    of a model whose absent features hold a default value (``absent``, a sparse stream).

    A row of a sparse stream holds a few of the K variables, so the dense blocks (``numeric``
    ``(capacity, n_numeric)`` and ``present`` ``(capacity, K)``) would be almost all absent cells:
    gigabytes at K = 10⁵. Here a row keeps, in a ring of ``capacity`` rows and ``width`` entries
    (grown by doubling to the widest row):

    - ``entry_variable``: the variables present in the row (−1 past its entries);
    - ``entry_column``: a numeric variable's raw column (−1 for a categorical one);
    - ``entry_value``: a numeric variable's value (NaN: missing);
    - ``entry_count``: the number of entries.

    The categorical values stay in the dense ``categorical`` block (wide streams are numeric), the
    encoded block ``log_lik`` is the same as ``History``'s. Memory: capacity × (width × 24 bytes +
    categorical columns + slots × classes), nothing per variable. The readers (``numeric_block``,
    ``column``, ``counts``, ``numeric_entries``, ``raw``) give what ``History``'s give (tested).
    """

    sparse = True
    _ROWS = ("entry_variable", "entry_column", "entry_value", "entry_count", "categorical", "log_lik", "y", "sample_weight")
    _FILL = {"entry_variable": -1, "entry_column": -1, "entry_value": np.nan, "categorical": None}

    def __init__(self, capacity: int, encoded: bool = True):
        super().__init__(capacity, encoded)
        self.numeric = self.present = None  # (the dense layout's blocks: not kept)
        self.width = 0  # entries in use per row (the widest row stored since the ring's start)
        self.entry_variable = np.full((self.capacity, 0), -1, dtype=np.intp)
        self.entry_column = np.full((self.capacity, 0), -1, dtype=np.intp)
        self.entry_value = np.full((self.capacity, 0), np.nan)
        self.entry_count = np.zeros(self.capacity, dtype=np.intp)

    def _grow_raw(self, n_variables: int, n_numeric: int, n_categorical: int) -> None:
        self.categorical = grow(self.categorical, 1, n_categorical, None)

    def _reserve(self, width: int) -> None:
        """Room for rows of ``width`` entries."""
        if width > self.entry_variable.shape[1]:
            self.entry_variable = grow(self.entry_variable, 1, width, -1)
            self.entry_column = grow(self.entry_column, 1, width, -1)
            self.entry_value = grow(self.entry_value, 1, width, np.nan)
        self.width = max(self.width, width)

    # ------------------------------------------------------------------ writing
    def _write_raw(self, i: int, numeric, present) -> None:
        """Row ``i``'s entries: ``present`` (``push``'s) lists the numeric variables first, in the
        order of ``numeric``'s columns (as the engine builds it), then the categorical ones."""
        columns, values = numeric
        if isinstance(present, slice):
            present = np.arange(present.start or 0, present.stop)
        if isinstance(columns, slice):
            columns = np.arange(columns.start or 0, columns.stop)
        a, n = len(values), len(present)
        self._reserve(n)
        self.entry_variable[i] = -1
        self.entry_column[i] = -1
        self.entry_value[i] = np.nan
        self.entry_variable[i, :n] = present
        self.entry_column[i, :a] = columns
        self.entry_value[i, :a] = values
        self.entry_count[i] = n

    def push_many(self, numeric, categorical, present, log_lik, y, sample_weight, variables=None) -> None:
        """As ``History.push_many``, with ``variables = (numeric variables, categorical variables)``
        naming the columns of ``numeric`` and ``categorical`` (their presence is read from
        ``present``)."""
        numeric_ks, categorical_ks = (np.asarray(v, dtype=np.intp) for v in variables)
        m = len(y)
        if m == 0:
            return
        held = np.concatenate([present[:, numeric_ks], present[:, categorical_ks]], axis=1)  # (m, a + c)
        every = np.concatenate([numeric_ks, categorical_ks])
        columns = np.concatenate([np.asarray(numeric[0], dtype=np.intp), np.full(len(categorical_ks), -1, dtype=np.intp)])
        values = np.concatenate([np.asarray(numeric[1], dtype=float).reshape(m, len(numeric_ks)), np.full((m, len(categorical_ks)), np.nan)], axis=1)
        r, e = np.nonzero(held)  # row by row, in the columns' order
        entries = (every[e], columns[e], values[r, e])
        self._push_entries(r, entries, categorical, log_lik, y, sample_weight)

    def _push_entries(self, r: np.ndarray, entries: tuple, categorical, log_lik, y, sample_weight) -> None:
        """Append ``m = len(y)`` rows given as entries: ``r (E,)`` the row of each (non-decreasing)
        and ``entries = (variable, column, value)`` ``(E,)`` each; ``categorical`` as in
        ``push_many``. Only the last ``capacity`` rows are kept."""
        m = len(y)
        if m == 0:
            return
        count = np.bincount(r, minlength=m)
        rows, skip = self._rows(m)
        if skip:
            keep = r >= skip
            r, entries = r[keep] - skip, tuple(a[keep] for a in entries)
            count = count[skip:]
        self._reserve(int(count.max()))
        slot = np.arange(len(r)) - (np.cumsum(count) - count)[r]  # an entry's place in its row
        for array, value, fill in zip((self.entry_variable, self.entry_column, self.entry_value), entries, (-1, -1, np.nan)):
            array[rows] = fill
            array[rows[r], slot] = value
        self.entry_count[rows] = count
        self._write_rest(rows, skip, categorical, log_lik, np.asarray(y), np.asarray(sample_weight))

    def _remove_raw(self, keep: np.ndarray, new_index: np.ndarray, numeric_columns: np.ndarray) -> None:
        """The entries of evicted variables leave their rows; the others move up, in order."""
        variable = self.entry_variable[:, : self.width]
        index = np.append(new_index, -1)  # (the −1 past a row's entries stays −1)
        renamed = index[variable]  # (capacity, width)
        held = renamed >= 0
        order = np.argsort(~held, axis=1, kind="stable")  # a row's kept entries first, in order
        column_index = np.full(self.n_numeric + 1, -1, dtype=np.intp)
        column_index[numeric_columns] = np.arange(len(numeric_columns))
        count = held.sum(axis=1)
        width = int(count.max()) if len(count) else 0
        rows = np.arange(self.capacity)[:, None]
        columns = order[:, :width]
        kept = held[rows, columns]
        self.entry_variable = np.where(kept, renamed[rows, columns], -1)
        self.entry_column = np.where(kept, column_index[self.entry_column[:, : self.width][rows, columns]], -1)
        self.entry_value = np.where(kept, self.entry_value[:, : self.width][rows, columns], np.nan)
        self.entry_count = count.astype(np.intp)
        self.width = width

    def column_bytes(self, numeric: bool) -> int:
        return 0 if numeric else self.capacity * self.categorical.itemsize  # (a row's entries are per row)

    # ------------------------------------------------------------------ reading
    def _entries(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """``variable (m, width)`` (−1 past a row's entries) and ``value (m, width)`` of ``rows``."""
        w = self.width
        return self.entry_variable[rows, :w], self.entry_value[rows, :w]

    def _positions(self, ks) -> tuple[np.ndarray, int]:
        """``(n_variables + 1,)`` the position of each variable among ``ks`` (−1: not among them;
        the last cell answers the −1 past a row's entries) and ``len(ks)``."""
        ks = np.arange(self.n_variables)[ks] if isinstance(ks, slice) else np.asarray(ks, dtype=np.intp)
        position = np.full(self.n_variables + 1, -1, dtype=np.intp)
        position[ks] = np.arange(len(ks))
        return position, len(ks)

    def numeric_block(self, rows, ks, columns) -> tuple[np.ndarray, np.ndarray]:
        position, g = self._positions(ks)
        variable, value = self._entries(rows)
        at = position[variable]  # (m, width)
        r, e = np.nonzero(at >= 0)
        m = variable.shape[0]
        values, present = np.full((m, g), np.nan), np.zeros((m, g), dtype=bool)
        values[r, at[r, e]] = value[r, e]
        present[r, at[r, e]] = True
        return values, present

    def column(self, rows, k: int, column: int, numeric: bool) -> tuple[np.ndarray, np.ndarray]:
        if numeric:
            values, present = self.numeric_block(rows, [k], [column])
            return values[:, 0], present[:, 0]
        variable, _ = self._entries(rows)
        return self.categorical[rows, column], (variable == k).any(axis=1)

    def counts(self, rows, n_variables: int) -> np.ndarray:
        variable, _ = self._entries(rows)
        return np.bincount(variable[variable >= 0], minlength=n_variables)[:n_variables]

    def numeric_entries(self, m: int, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries of the ``m`` most recent rows (oldest first) whose variable is ``wanted``
        (``(n_variables,)`` bool): ``variable (E,)``, ``row (E,)`` (0 … m − 1) and ``value (E,)``,
        row by row.

        The rows are read where they lie, as one or two runs of the ring, by a compiled scan
        (``_entries.wanted_entries``: no gather of ``m × width`` entries, where a feed of a wide
        stream reads thousands of rows for a few wanted variables); the entries found are the
        same, in the same order, as NumPy's ``nonzero`` over a gather of ``recent(m)`` gives."""
        wanted = np.ascontiguousarray(wanted, dtype=np.bool_)
        found, before = [], 0
        for a, b in self.runs(m):
            r, e = wanted_entries(self.entry_variable, a, b, self.width, wanted)
            found.append((self.entry_variable[r + a, e], r + before, self.entry_value[r + a, e]))
            before += b - a
        if len(found) == 1:
            return found[0]
        return tuple(np.concatenate([piece[i] for piece in found]) for i in range(3))

    def rows_entries(self, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The entries of ``rows`` flattened: ``row (E,)`` (position in ``rows``), ``variable``,
        ``column`` and ``value``, row by row."""
        variable, value = self._entries(rows)
        r, e = np.nonzero(variable >= 0)
        return r, variable[r, e], self.entry_column[rows, : self.width][r, e], value[r, e]

    def raw(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = self.filled()
        variable, value = self._entries(rows)
        column = self.entry_column[rows, : self.width]
        r, e = np.nonzero(column >= 0)
        numeric = np.full((self.size, self.n_numeric), np.nan)
        numeric[r, column[r, e]] = value[r, e]
        present = np.zeros((self.size, self.n_variables), dtype=bool)
        r, e = np.nonzero(variable >= 0)
        present[r, variable[r, e]] = True
        return numeric, self.categorical[rows, : self.n_categorical], present

    @classmethod
    def of(cls, history: History, column: np.ndarray, numeric: np.ndarray) -> SparseHistory:
        """The rows of a dense ``history`` in this layout, in the same places of the ring
        (``column (K,)`` each variable's raw column, ``numeric (K,)`` True for a numeric one); the
        encoded block is not carried (re-encode it)."""
        out = cls(history.capacity, history.encoded)
        out.resize(history.n_variables, history.n_classes, history.n_numeric, history.n_categorical, n_encoded=0)
        values, categorical, present = history.raw()  # the rows in use, in storage order
        r, k = np.nonzero(present)  # row by row, variables increasing
        at = np.where(numeric[k], column[k], -1)
        value = np.full(len(k), np.nan)
        held = at >= 0
        value[held] = values[r[held], at[held]]
        n = history.size
        out._push_entries(r, (k, at, value), (np.arange(history.n_categorical), categorical), None,
                          history.y[:n], history.sample_weight[:n])  # fmt: skip
        out.cursor, out.stored = history.cursor, history.stored
        return out

    def dense(self) -> History:
        """These rows in ``History``'s layout, in the same places of the ring (the encoded block
        is not carried: re-encode it)."""
        out = History(self.capacity, self.encoded)
        out.resize(self.n_variables, self.n_classes, self.n_numeric, self.n_categorical, n_encoded=0)
        r, variable, column, value = self.rows_entries(self.filled())
        numeric = column >= 0
        out.numeric[r[numeric], column[numeric]] = value[numeric]
        out.present[r, variable] = True
        n, c = self.size, self.n_categorical
        out.categorical[:n, :c] = self.categorical[:n, :c]
        out.y[:n], out.sample_weight[:n] = self.y[:n], self.sample_weight[:n]
        out.size, out.cursor, out.stored = n, self.cursor, self.stored
        return out


    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants of the ring and its entries, each ``"field: what is wrong"`` (the
        record's field names); empty when sound. (Its columns against the model's variables are
        checks of the whole model.) O(capacity × width)."""
        capacity, size = self.capacity, self.size
        found = []
        if size > capacity:
            found.append(f"size: must be <= capacity = {capacity}, got {size}")
        if self.cursor >= capacity or (size < capacity and self.cursor != size):
            found.append(f"cursor: does not fit a ring of {capacity} rows holding {size}")
        if self.stored < size:
            found.append("stored: cannot be below size")
        if found:  # (the entries are read from a sound ring)
            return found
        r, variable, _, _ = self.rows_entries(self.filled())
        key = r * max(1, self.n_variables) + variable
        # (entries come row by row, variables increasing: a strictly increasing key has no pair; else sort)
        if len(key) > 1 and not (key[1:] > key[:-1]).all() and len(np.unique(key)) != len(key):
            found.append("variable: a row holds a variable twice")
        return found

    def _check(self) -> None:
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def record_state(self) -> dict:
        """The state fields of the record: the rows in use as entries, row by row and variables
        increasing (``WeightedNaiveBayes``'s record saves a dense window in this layout: ``of``)."""
        rows = self.filled()
        r, variable, column, value = self.rows_entries(rows)
        order = np.lexsort((variable, r))  # row by row, variables increasing: one file for one window
        r, variable, column, value = r[order], variable[order], column[order], value[order]
        missing = np.isnan(value)
        return {
            "size": self.size,
            "cursor": self.cursor,
            "stored": self.stored,
            "n_variables": self.n_variables,
            "n_numeric": self.n_numeric,
            "entries": np.bincount(r, minlength=self.size).astype(np.int64),
            "variable": variable.astype(np.int64),
            "column": column.astype(np.int64),
            "value": np.where(missing, 0.0, value),
            "missing": missing & (column >= 0),
            "categorical": self.categorical[rows, : self.n_categorical],
            "y": self.y[rows].astype(np.int64),
            "sample_weight": self.sample_weight[rows],
        }

    @classmethod
    def from_record(cls, fields: Fields) -> SparseHistory:
        """The window a loaded, schema-checked record describes (its ``problems()`` not yet asked).
        A record whose entries cannot be laid out as rows (their count, a categorical entry's
        value) is refused here (``fields.fail``)."""
        s = fields.state
        entries, variable, column = s["entries"], s["variable"], s["column"]
        if int(entries.sum()) != len(variable):
            fields.fail("entries", f"must add up to the {len(variable)} entries, got {int(entries.sum())}")
        categorical = column < 0
        if np.any(s["value"][categorical] != 0.0) or np.any(s["missing"][categorical]):
            fields.fail("value", "a categorical variable's entry (column −1) holds 0 and is not missing (its value is in categorical)")
        h = cls(fields.params["capacity"])
        n_categorical = s["categorical"].shape[1]
        h.resize(s["n_variables"], 0, s["n_numeric"], n_categorical, n_encoded=0)  # (the model sizes the encoding: its slots)
        n = s["size"]
        row = np.repeat(np.arange(n), entries)
        value = np.where(s["missing"], np.nan, s["value"])
        value[categorical] = np.nan  # (a categorical entry's value is in the categorical block)
        h._push_entries(row, (variable.astype(np.intp), column.astype(np.intp), value),
                        (np.arange(n_categorical), s["categorical"]), None, s["y"], s["sample_weight"])  # fmt: skip
        h.size, h.cursor, h.stored = n, int(s["cursor"]), int(s["stored"])
        return h


register(
    "History",
    SparseHistory,
    Schema(
        params={"capacity": Int(low=1, doc="the history depth N")},
        state={
            "size": Int(low=0, binds="n_rows", doc="rows held"),
            "cursor": Int(low=0, doc="ring position of the next row"),
            "stored": Int(low=0, doc="rows ever stored (the summaries' feed clock)"),
            "n_variables": Int(low=0, binds="n_variables", doc="variables of the model (since version 5)"),
            "n_numeric": Int(low=0, binds="n_numeric", doc="raw numeric columns: the numeric variables (since version 5)"),
            "entries": Array("int64", ("n_rows",), low=0, high="n_variables", doc="features held by each row, in ring order (since version 5)"),
            "variable": Array("int64", ("n_entries",), low=0, below="n_variables", doc="the variable of each entry, row by row (since version 5)"),
            "column": Array("int64", ("n_entries",), low=-1, below="n_numeric", doc="a numeric variable's raw column, −1 for a categorical one (since version 5)"),
            "value": Array("float64", ("n_entries",), doc="a numeric entry's value (0 where missing, and for a categorical entry; since version 5)"),
            "missing": Array("bool", ("n_entries",), doc="True where a numeric entry's value is missing (since version 5)"),
            "categorical": Array("object", ("n_rows", "n_categorical"), doc="raw categorical values (null: missing or absent)"),
            "y": Array("int64", ("n_rows",), low=0, doc="class index of each row"),
            "sample_weight": Array("float64", ("n_rows",), low=0.0, doc="sample weight of each row"),
        },
        doc="The window of raw rows, as each row's entries (the encoded block is rebuilt on load)",
    ),
    state=SparseHistory.record_state,
    build=SparseHistory.from_record,
)
