"""cPiD: the first layer of PiD (Gama & Pinto 2006) made constant-memory
(``docs/algorithms/summaries.md#cpid``).

Design note. The summary is a fixed number ``m = n_bins`` of right-closed intervals
``(b_{k−1}, b_k]`` (the first and last are the open tails), each with a total count and a
vector of class counts. A value goes to its interval; if that interval then holds more than
a share ``α`` of the data, ``(1 + count)/(N + 2) > α`` (Gama & Pinto 2006), it is split in two
halves that share its counts equally (class counts included, so counts become fractional): an
inner interval at its midpoint, a tail by a new break one ``step`` further out. cPiD
(Salperwyck et al. 2015) then merges the adjacent pair with the smallest count sum, so ``m``
never changes; the two halves just created are not candidates (otherwise a split could be undone
at once).

The state is plain Python lists (breaks, counts, one list of class counts per interval):
one ``update`` is a ``bisect`` and two list increments, measured ~5x cheaper than NumPy item
access for 200 bins; splits and merges are O(m) list edits. ``update_many`` reproduces a loop
of ``update`` exactly (for integer weights; up to float rounding otherwise) with NumPy: it scans
the batch in windows, finds with a vectorised running count the first value that triggers a
split, commits the counts before it with ``bincount``, splits, and goes on.
"""

from __future__ import annotations

import copy
import math
import operator
import sys
from bisect import bisect_left

import numpy as np

from .._checks import integer, real
from ..io.registry import register
from ..io.schema import Array, Bool, Fields, Float, Int, Optional, Schema, Str
from ..tables import Bins, ClassIndex
from .base import CLASSES, Summary, padded
from .policy import (
    as_weights,
    check_factor,
    fast_weight,
    known_columns,
    label_batch,
    label_column,
    numeric_batch,
    numeric_value,
    register_labels,
)

__all__ = ["CPiD"]

# update_many scans the batch in windows whose size adapts to how often splits happen
_MIN_WINDOW = 64
_MAX_WINDOW = 1 << 16
# the initial grid spacing is at least this fraction of the values' magnitude, so that the
# breaks stay distinct floats whatever the range
_RELATIVE_SPACING = 1e-12


def _midpoint(low: float, high: float) -> float:
    """``low + (high − low)/2``, or ``low/2 + high/2`` when ``high − low`` overflows (bounds near
    ±1.8e308): the same float wherever the first form is finite."""
    middle = low + 0.5 * (high - low)
    return middle if middle - middle == 0.0 else 0.5 * low + 0.5 * high


def _half_gap(low: float, high: float) -> float:
    """``(high − low)/2`` without overflow (``high/2 − low/2`` when the difference overflows)."""
    gap = high - low
    return 0.5 * gap if gap - gap == 0.0 else 0.5 * high - 0.5 * low


class CPiD(Summary):
    """Constant-memory PiD layer-1 histogram with class counts (cPiD).

    Parameters
    ----------
    n_bins
        Number of intervals kept, tails included (Gama & Pinto's b1 plus the two tails), ≥ 4. The
        first ``warm_up`` values fix the initial range ``[min0, max0]``, cut into ``n_bins − 2``
        equal-width intervals of width ``step``.
    alpha
        Split threshold: an interval splits when ``(1 + count)/(N + 2) > alpha``. ``None``
        means ``2 / n_bins`` (twice the average share). In (0, 1).
    warm_up
        Number of (non-missing) values buffered to find the initial range; no split happens
        during the warm-up and ``table()`` then holds the exact distinct values. ≥ 1.
    min_width
        Minimum-width guard (``docs/algorithms/summaries.md#cpid``): an inner interval narrower
        than ``min_width · (max0 − min0)`` is never split, so a constant value cannot cause endless
        splits. In [0, 1).
    tail_split
        Where a tail split puts its new break. ``"step"`` is Gama & Pinto's: one ``step`` beyond the outer
        break. ``"halfway"`` (default, our choice) moves at least one ``step`` and up to halfway to
        the extreme value seen in that tail, so a stream that drifts out of the initial range
        reaches its new mass in O(log distance) splits instead of O(distance/step). As each tail
        split hands half of the tail's counts to the new interval, fewer splits also misplace
        less mass: on a stream drifting from N(0,1) to N(20,1) over 10^5 values the largest
        error of the table's cumulative counts was 0.7% of n with ``"halfway"`` and 40% with
        ``"step"`` (0.01% and 0.26% on a stationary N(0,1)).

    Notes
    -----
    Cost: ``update`` O(log m) plus O(m) when it splits; ``update_many`` O(n log w) vectorised
    (w the window size) plus O(m) per split; ``merge`` O(m²·J); memory O(m·J) after the warm-up.
    The halving rule is PiD's assumption, not a guarantee: counts are exact in total (Σ counts
    and each class total equal the weights seen) but their location inside a split interval is
    approximate. Values outside the running range go to the tails, which move out by ``step``
    per split (``tail_split``).

    ``merge`` is approximate (``docs/algorithms/summaries.md#merge``): both summaries' counts are spread onto the
    union of their breaks assuming a uniform density inside each interval (the tails span up
    to the min/max seen), then the adjacent pairs with the smallest sums are merged until
    ``n_bins`` intervals remain (cPiD's own rule). Totals are conserved up to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(42)
    >>> summary = CPiD(n_bins=20)
    >>> summary.update_many(rng.normal(size=5000), rng.integers(0, 2, size=5000))
    >>> table = summary.table()
    >>> len(table.upper_bounds), table.counts.sum(axis=0).tolist()
    (20, [2494.0, 2506.0])
    >>> table.upper_bounds.round(2).tolist()[:5]
    [-1.5, -1.27, -1.04, -0.93, -0.81]

    """

    kind = "numeric"

    def __init__(
        self,
        n_bins: int = 200,
        alpha: float | None = None,
        warm_up: int = 100,
        min_width: float = 1e-9,
        tail_split: str = "halfway",
    ):
        integer(n_bins, "n_bins", low=4)
        real(alpha, "alpha", above=0, below=1, optional=True)
        integer(warm_up, "warm_up", low=1)
        real(min_width, "min_width", low=0, below=1)
        if tail_split not in ("step", "halfway"):
            raise ValueError(f"tail_split must be 'step' or 'halfway', got {tail_split!r}")
        self.n_bins = n_bins
        self.alpha = alpha
        self.warm_up = warm_up
        self.min_width = min_width
        self.tail_split = tail_split

        self._alpha = 2.0 / n_bins if alpha is None else float(alpha)
        self._classes = ClassIndex()
        self._missing: list[float] = []  # (n_classes,)
        self._buffer: list[tuple[float, int, float]] = []  # warm-up values (x, class column, w)
        self._started = False
        self._breaks: list[float] = []  # (n_bins − 1,) strictly increasing, once started
        self._counts: list[float] = []  # (n_bins,)
        self._class_counts: list[list[float]] = []  # (n_bins, n_classes)
        self._total = 0.0  # weight of the non-missing values (N)
        self._step = 0.0
        self._min_split_width = 0.0
        self._min_seen = math.inf
        self._max_seen = -math.inf

    # -- queries ------------------------------------------------------------------------------

    @property
    def n(self) -> float:
        return self._total + math.fsum(self._missing)

    @property
    def breaks(self) -> tuple:
        """Current breaks ``b_1 < … < b_{m−1}`` (empty during the warm-up)."""
        return tuple(self._breaks)

    def table(self) -> Bins:
        """Non-empty intervals with their class counts. Cost O(m·J).

        Upper bounds are the breaks; the right tail's upper bound is the largest value seen
        (or ``b_{m−1} + step`` when the tail only holds counts moved there by a split). During
        the warm-up the bins are the distinct buffered values, exactly.
        """
        n_classes = len(self._classes)
        if not self._started:
            if not self._buffer:
                return Bins(np.zeros(0), np.zeros((0, n_classes)), self.classes, self._missing)
            xs, js, ws = (np.array(column) for column in zip(*self._buffer))
            uniques, inverse = np.unique(xs, return_inverse=True)
            counts = np.bincount(
                inverse * n_classes + js.astype(np.intp), weights=ws, minlength=len(uniques) * n_classes
            ).reshape(len(uniques), n_classes)
            keep = counts.sum(axis=1) > 0
            return Bins(uniques[keep], counts[keep], self.classes, self._missing)
        last = self._breaks[-1]
        upper = self._max_seen if self._max_seen > last else last + self._step
        if not math.isfinite(upper) or not upper > last:
            with np.errstate(over="ignore"):
                upper = float(np.nextafter(last, math.inf))
            if not math.isfinite(upper):  # the last break is the largest float: nothing lies beyond it
                upper = last
        upper_bounds = np.array(self._breaks + [upper])  # (n_bins,)
        class_counts = np.array(self._class_counts, dtype=float).reshape(self.n_bins, n_classes)
        keep = np.array(self._counts) > 0
        return Bins(upper_bounds[keep], class_counts[keep], self.classes, self._missing)

    def memory_usage(self) -> int:
        n_classes = len(self._classes)
        float_size = 32  # a float object (24 bytes) plus its list slot (8)
        size = sys.getsizeof(self._breaks) + sys.getsizeof(self._counts) + sys.getsizeof(self._class_counts)
        size += float_size * (len(self._breaks) + len(self._counts))
        size += len(self._class_counts) * (sys.getsizeof([]) + float_size * n_classes)
        size += sys.getsizeof(self._buffer) + len(self._buffer) * (sys.getsizeof((0.0, 0, 0.0)) + 3 * 28)
        size += sys.getsizeof(self._missing) + float_size * n_classes + sys.getsizeof(self._classes.labels)
        return int(size)

    # -- updates ------------------------------------------------------------------------------

    def _add_class(self) -> None:
        self._missing.append(0.0)
        for row in self._class_counts:
            row.append(0.0)

    def update(self, x, y, w: float = 1.0) -> None:
        """Add value ``x`` of class ``y`` with weight ``w``. Cost O(log m), O(m) on a split."""
        x = numeric_value(x)
        w = fast_weight(w)
        j = label_column(self._classes, y)
        if j == len(self._missing):
            self._add_class()
        if x is None:
            self._missing[j] += w
        elif self._started:
            self._insert(x, j, w)
        else:
            self._buffer_value(x, j, w)

    def _insert(self, x: float, j: int, w: float) -> None:
        k = bisect_left(self._breaks, x)  # b_{k−1} < x ≤ b_k
        count = self._counts[k] + w
        self._counts[k] = count
        self._class_counts[k][j] += w
        total = self._total + w
        self._total = total
        if x < self._min_seen:
            self._min_seen = x
        if x > self._max_seen:
            self._max_seen = x
        # Gama & Pinto 2006 split test (1 + count)/(N + 2) > α, written without the division
        if 1.0 + count > self._alpha * (total + 2.0):
            self._split(k)

    def _buffer_value(self, x: float, j: int, w: float) -> None:
        self._buffer.append((x, j, w))
        self._total += w
        if x < self._min_seen:
            self._min_seen = x
        if x > self._max_seen:
            self._max_seen = x
        if len(self._buffer) >= self.warm_up:
            self._start()

    def _start(self) -> None:
        """End of the warm-up: equal-width grid on the buffered range, then count the buffer."""
        low, high = self._min_seen, self._max_seen
        inner = self.n_bins - 2
        step = high / inner - low / inner if high > low else 0.0  # (high − low)/inner without overflow
        if not step > 0.0:
            # a constant warm-up, or a range too narrow for a float step (0 and 5e-324: the step
            # underflows to 0): a unit window (relative to |x|) centred on its low end
            half = 0.5 * max(abs(low), 1.0)
            low, high = low - half, low + half
            step = high / inner - low / inner
        step = max(step, _RELATIVE_SPACING * max(abs(low), abs(high)))
        self._step = step
        self._min_split_width = self.min_width * step * inner
        self._breaks = [low + i * step for i in range(inner + 1)]
        if not math.isfinite(self._breaks[-1]):
            # i·step overflowed (a range near ±1.8e308): halve, add, double (the same floats, in a
            # wider exponent range), the last break kept within the float range
            half_low, half_step = 0.5 * low, 0.5 * step
            self._breaks = [min(2.0 * (half_low + i * half_step), sys.float_info.max) for i in range(inner + 1)]
        n_classes = len(self._classes)
        self._counts = [0.0] * self.n_bins
        self._class_counts = [[0.0] * n_classes for _ in range(self.n_bins)]
        for x, j, w in self._buffer:  # no split test during the warm-up
            k = bisect_left(self._breaks, x)
            self._counts[k] += w
            self._class_counts[k][j] += w
        self._buffer = []
        self._started = True

    def _split(self, k: int) -> bool:
        """Split interval ``k`` into two halves, then merge the smallest other pair (Gama & Pinto 2006; cPiD)."""
        breaks = self._breaks
        counts = self._counts
        if k == 0 or k == len(counts) - 1:
            new = self._tail_break(k == 0)
            if new is None:
                return False
        else:
            low, high = breaks[k - 1], breaks[k]
            if high - low < self._min_split_width:  # min-width guard
                return False
            new = _midpoint(low, high)
            if not low < new < high:
                return False
        breaks.insert(k, new)
        half = counts[k] * 0.5
        counts[k] = half
        counts.insert(k + 1, half)
        rows = self._class_counts
        row = [value * 0.5 for value in rows[k]]
        rows[k] = row
        rows.insert(k + 1, row.copy())
        self._merge_smallest_pair(k)
        return True

    def _tail_break(self, left: bool) -> float | None:
        """The break a tail split adds (None if it would not be a new finite break)."""
        if left:
            edge = self._breaks[0]
            distance = self._step
            if self.tail_split == "halfway" and self._min_seen < edge:
                distance = max(distance, _half_gap(self._min_seen, edge))
            new = edge - distance
            return new if new < edge and math.isfinite(new) else None
        edge = self._breaks[-1]
        distance = self._step
        if self.tail_split == "halfway" and self._max_seen > edge:
            distance = max(distance, _half_gap(edge, self._max_seen))
        new = edge + distance
        return new if new > edge and math.isfinite(new) else None

    def _merge_smallest_pair(self, k: int | None) -> None:
        """cPiD: merge the adjacent pair with the smallest count sum, not touching halves k, k+1.

        ``k = None`` excludes nothing. Ties go to the leftmost pair.
        """
        counts = self._counts
        sums = list(map(operator.add, counts, counts[1:]))  # sums[i] = counts[i] + counts[i + 1]
        if k is not None:
            for i in (k - 1, k, k + 1):
                if 0 <= i < len(sums):
                    sums[i] = math.inf
        i = sums.index(min(sums))
        merged = counts[i] + counts[i + 1]
        del counts[i + 1]
        counts[i] = merged
        rows = self._class_counts
        right = rows.pop(i + 1)
        rows[i] = [a + b for a, b in zip(rows[i], right)]
        del self._breaks[i]

    def update_many(self, values, labels, weights=None) -> None:
        """Add a batch; same result as a loop of ``update`` (exact for integer weights).

        Validation happens before any change: a bad value, label count or weight leaves the
        summary untouched. Cost O(n log w) vectorised plus O(m) per split.
        """
        x = numeric_batch(values)
        n = len(x)
        labels = label_batch(labels, n)
        codes = known_columns(self._classes, labels)
        w = as_weights(weights, n)
        if codes is None:  # validated: new classes are registered from here on
            codes = register_labels(self._classes, labels)
        while len(self._missing) < len(self._classes):
            self._add_class()
        if n == 0:
            return
        missing = np.isnan(x)
        if missing.any():
            extra = np.bincount(codes[missing], weights=w[missing], minlength=len(self._missing))
            self._missing = [a + b for a, b in zip(self._missing, extra.tolist())]
            keep = ~missing
            x, codes, w = x[keep], codes[keep], w[keep]
        start = 0
        while start < len(x) and not self._started:  # at most warm_up values
            self._buffer_value(float(x[start]), int(codes[start]), float(w[start]))
            start += 1
        if start < len(x):
            self._insert_batch(x[start:], codes[start:], w[start:])

    def _splittable(self) -> np.ndarray:
        """``(m,)`` bool: would ``_split`` act on each interval (same tests, vectorised)."""
        breaks = np.array(self._breaks)
        low, high = breaks[:-1], breaks[1:]
        with np.errstate(over="ignore", invalid="ignore"):
            middle = low + 0.5 * (high - low)
            narrow = high - low < self._min_split_width
        overflow = ~np.isfinite(middle)
        if overflow.any():  # as _midpoint: the halves added where the gap overflows
            middle[overflow] = 0.5 * low[overflow] + 0.5 * high[overflow]
        inner = ~narrow & (low < middle) & (middle < high)
        left, right = self._tail_break(True) is not None, self._tail_break(False) is not None
        return np.concatenate(([left], inner, [right]))

    def _insert_batch(self, x: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
        """Vectorised ``_insert`` over non-missing values, after the warm-up."""
        n = len(x)
        position = 0
        window = _MIN_WINDOW
        while position < n:
            end = min(n, position + window)
            xs, js, ws = x[position:end], codes[position:end], w[position:end]
            k = np.searchsorted(np.array(self._breaks), xs, side="left")  # same as bisect_left
            # running count of each value's interval just after the value is added
            order = np.argsort(k, kind="stable")
            k_sorted, w_sorted = k[order], ws[order]
            cumulative = np.cumsum(w_sorted)
            group_start = np.empty(len(k_sorted), dtype=bool)
            group_start[0] = True
            np.not_equal(k_sorted[1:], k_sorted[:-1], out=group_start[1:])
            group = np.cumsum(group_start) - 1
            offset = (cumulative - w_sorted)[group_start]
            running = np.empty(len(xs))
            running[order] = cumulative - offset[group]
            count_after = np.array(self._counts)[k] + running
            total_after = self._total + np.cumsum(ws)
            splits = (1.0 + count_after > self._alpha * (total_after + 2.0)) & self._splittable()[k]
            hits = np.flatnonzero(splits)
            stop = int(hits[0]) + 1 if len(hits) else len(xs)
            self._commit(xs[:stop], k[:stop], js[:stop], ws[:stop])
            if len(hits):
                self._split(int(k[stop - 1]))
                window = max(_MIN_WINDOW, 2 * stop)
            else:
                window = min(2 * window, _MAX_WINDOW)
            position += stop

    def _commit(self, xs: np.ndarray, k: np.ndarray, js: np.ndarray, ws: np.ndarray) -> None:
        n_bins, n_classes = len(self._counts), len(self._missing)
        added = np.bincount(k, weights=ws, minlength=n_bins)
        added_list = added.tolist()
        counts = self._counts
        for i in np.flatnonzero(added).tolist():
            counts[i] += added_list[i]
        by_class = np.bincount(k * n_classes + js, weights=ws, minlength=n_bins * n_classes)
        by_class_list = by_class.tolist()
        rows = self._class_counts
        for index in np.flatnonzero(by_class).tolist():
            rows[index // n_classes][index % n_classes] += by_class_list[index]
        self._total += float(np.sum(ws))
        self._min_seen = min(self._min_seen, float(xs.min()))
        self._max_seen = max(self._max_seen, float(xs.max()))

    # -- forgetting ---------------------------------------------------------------------------

    def decay(self, factor: float) -> None:
        """Multiply the weight of everything seen so far by ``factor`` (0 < factor ≤ 1).

        The interval counts, class counts, the total ``N``, the missing counts and the weights of
        the warm-up buffer are multiplied by ``factor``; the breaks, the step and the range seen
        stay. The table is then the former table with its counts times ``factor`` (class totals
        conserved times ``factor``, as for any cPiD). The split test ``(1 + count)/(N + 2) > α``
        (Gama & Pinto 2006) counts in units of weight: while ``N < 1/α − 2`` every value that
        follows splits its interval, as it does after a warm-up on small weights.
        ``factor == 1`` changes nothing; ``ValueError`` naming ``factor`` unless it is in (0, 1].
        Cost O(m·J).
        """
        factor = check_factor(factor)
        if factor == 1.0:
            return
        self._missing = [value * factor for value in self._missing]
        self._total *= factor
        if not self._started:
            self._buffer = [(x, j, w * factor) for x, j, w in self._buffer]
            return
        class_counts = np.array(self._class_counts, dtype=float).reshape(self.n_bins, len(self._missing))
        self._class_counts = (class_counts * factor).tolist()  # (n_bins, n_classes)
        self._counts = (np.array(self._counts) * factor).tolist()  # (n_bins,)

    # -- merge --------------------------------------------------------------------------------

    def merge(self, other: CPiD) -> None:
        """Absorb ``other`` (approximate: uniform re-binning, see the class notes). Cost O(m²·J).

        If one side is still in its warm-up its buffered values are replayed into the other's
        grid, which is then exact in the same sense as a stream of updates. ``TypeError`` if
        ``other`` is not a ``CPiD``; any two merge (whatever their parameters: the result keeps
        this summary's).
        """
        if not isinstance(other, CPiD):
            raise TypeError(f"can only merge another CPiD, got {type(other).__name__}")
        if other is self:
            other = copy.deepcopy(other)
        columns = self._classes.merge(other._classes).tolist()
        while len(self._missing) < len(self._classes):
            self._add_class()
        for j, value in zip(columns, other._missing):
            self._missing[j] += value
        if not other._started:
            for x, j, w in other._buffer:
                if self._started:
                    self._insert(x, columns[j], w)
                else:
                    self._buffer_value(x, columns[j], w)
            return
        n_classes = len(self._missing)
        incoming = np.zeros((other.n_bins, n_classes))  # other's class counts in our columns
        incoming[:, columns] = np.array(other._class_counts, dtype=float).reshape(other.n_bins, -1)
        if not self._started and self.n_bins == other.n_bins:
            # adopt the other's grid, then replay our buffer into it as a stream would
            buffer = self._buffer
            self._breaks = list(other._breaks)
            self._counts = list(other._counts)
            self._class_counts = incoming.tolist()
            self._step, self._min_split_width = other._step, other._min_split_width
            self._total = other._total
            self._min_seen = min(self._min_seen, other._min_seen)
            self._max_seen = max(self._max_seen, other._max_seen)
            self._buffer = []
            self._started = True
            for x, j, w in buffer:
                self._insert(x, j, w)
            return
        if not self._started:  # our own grid on the range of both, then re-bin the other
            self._min_seen = min(self._min_seen, other._min_seen)
            self._max_seen = max(self._max_seen, other._max_seen)
            self._start()
        # both spread onto the union of the breaks, then cPiD merges pairs until n_bins remain
        grid = np.union1d(self._breaks, other._breaks)  # (n_grid − 1,)
        fractions = self._rebin_fractions(grid)  # (n_grid, n_bins)
        theirs = other._rebin_fractions(grid)  # (n_grid, other.n_bins)
        ours = np.array(self._class_counts, dtype=float).reshape(self.n_bins, n_classes)
        class_counts = fractions @ ours + theirs @ incoming  # (n_grid, n_classes)
        counts = fractions @ np.array(self._counts) + theirs @ np.array(other._counts)  # (n_grid,)
        self._breaks = grid.tolist()
        self._counts = counts.tolist()
        self._class_counts = class_counts.tolist()
        while len(self._counts) > self.n_bins:
            self._merge_smallest_pair(None)
        self._total += other._total
        self._min_seen = min(self._min_seen, other._min_seen)
        self._max_seen = max(self._max_seen, other._max_seen)

    def _rebin_fractions(self, grid: np.ndarray) -> np.ndarray:
        """``(len(grid) + 1, n_bins)``: share of each of our intervals in each interval of ``grid``.

        Each interval is taken as uniform on ``(low, high]``; the left tail spans
        ``(min seen, b_1]`` and the right tail ``(b_{m−1}, max seen]`` (a point mass at ``b_1``,
        or one ``step`` above ``b_{m−1}``, when a tail only holds counts moved there by a split).
        """
        breaks = np.array(self._breaks)
        low = np.concatenate(([breaks[0]], breaks))
        high = np.concatenate((breaks, [breaks[-1]]))
        if self._min_seen < breaks[0]:
            low[0] = self._min_seen
        high[-1] = self._max_seen if self._max_seen > breaks[-1] else breaks[-1] + self._step
        cuts = np.asarray(grid, dtype=float)[:, None]  # (len(grid), 1)
        width = high - low
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            uniform = np.clip((cuts - low) / width, 0.0, 1.0)
        point = (cuts >= high).astype(float)
        cdf = np.where(width > 0, uniform, point)  # (len(grid), n_bins)
        cdf = np.vstack((np.zeros(self.n_bins), cdf, np.ones(self.n_bins)))
        return np.diff(cdf, axis=0)

    # -- invariants ---------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. The warm-up buffer adds up to the total; once started, the grid has
        ``n_bins`` intervals whose class counts add up to their counts, which add up to the
        total. O(n_bins·J + buffered)."""
        n_classes, found = len(self._classes), []
        if len(self._missing) != n_classes or not all(value >= 0 for value in self._missing):
            found.append(f"missing: must hold n_classes = {n_classes} counts, each >= 0")
        total = float(self._total)
        if not self._started:
            if self._breaks or self._counts or self._class_counts:
                found.append("breaks: must be empty during the warm-up")
            if len(self._buffer) >= self.warm_up:
                found.append(f"buffer_values: holds {len(self._buffer)} values, the warm-up ends at {self.warm_up}")
            if not all(0 <= j < n_classes for _, j, _ in self._buffer):
                found.append(f"buffer_classes: must be < n_classes = {n_classes}")
            if not math.isclose(total, math.fsum(w for _, _, w in self._buffer), rel_tol=1e-12, abs_tol=1e-12):
                found.append("total: must be the weight of the buffered values during the warm-up")
            return found
        if len(self._breaks) != self.n_bins - 1:
            return found + [f"breaks: expected {self.n_bins - 1} breaks (n_bins - 1) once started, got {len(self._breaks)}"]
        if len(self._counts) != self.n_bins or len(self._class_counts) != self.n_bins:
            return found + [f"counts: expected {self.n_bins} intervals (n_bins) once started, got {len(self._counts)}"]
        if self._buffer:
            found.append("buffer_values: must be empty once started")
        if not all(math.isfinite(b) for b in self._breaks) or not all(a < b for a, b in zip(self._breaks, self._breaks[1:])):
            found.append("breaks: must be finite and increase strictly")
        scale = max(1.0, total)
        for i, (count, row) in enumerate(zip(self._counts, self._class_counts)):
            if len(row) != n_classes:
                found.append(f"class_counts: interval {i} holds {len(row)} class counts, expected n_classes = {n_classes}")
            elif not (count >= 0 and all(value >= -1e-12 * scale for value in row)):
                found.append(f"class_counts: the counts of interval {i} must be >= 0")
            elif not math.isclose(count, math.fsum(row), rel_tol=1e-9, abs_tol=1e-9 * scale):
                found.append(f"class_counts: the class counts of interval {i} do not add up to its count {count!r}")
        if not math.isclose(math.fsum(self._counts), total, rel_tol=1e-9, abs_tol=1e-9):
            found.append(f"counts: must add up to total = {total!r}")
        if total > 0 and not self._min_seen <= self._max_seen:
            found.append("min_seen: must be <= max_seen once values were seen")
        return found

    # -- saved record (docs/saved-model.md) ---------------------------------------------------

    def record_state(self) -> dict:
        """The state fields of the record: the warm-up buffer or the intervals (breaks, counts,
        class counts), the totals and the grid step (``alpha``'s default is rebuilt from
        ``n_bins``)."""
        n_classes = len(self._classes)
        buffered = self._buffer
        return {
            "classes": list(self._classes.labels),
            "missing": padded(self._missing, (n_classes,)),
            "buffer_values": np.array([x for x, _, _ in buffered], dtype=np.float64),
            "buffer_classes": np.array([j for _, j, _ in buffered], dtype=np.int64),
            "buffer_weights": np.array([w for _, _, w in buffered], dtype=np.float64),
            "started": self._started,
            "breaks": np.array(self._breaks, dtype=np.float64),
            "counts": np.array(self._counts, dtype=np.float64),
            "class_counts": padded(self._class_counts, (len(self._counts), n_classes)),
            "total": self._total,
            "step": self._step,
            "min_split_width": self._min_split_width,
            "min_seen": self._min_seen,
            "max_seen": self._max_seen,
        }

    @classmethod
    def from_record(cls, fields: Fields) -> CPiD:
        """The summary a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        state = fields.state
        summary = cls(**fields.params)
        summary._classes = ClassIndex.of(state["classes"])
        summary._missing = state["missing"].tolist()
        summary._buffer = list(zip(state["buffer_values"].tolist(), state["buffer_classes"].tolist(), state["buffer_weights"].tolist()))
        summary._started = state["started"]
        summary._breaks = state["breaks"].tolist()
        summary._counts = state["counts"].tolist()
        summary._class_counts = state["class_counts"].tolist()
        summary._total, summary._step, summary._min_split_width, summary._min_seen, summary._max_seen = (
            float(state[name]) for name in ("total", "step", "min_split_width", "min_seen", "max_seen")
        )
        return summary


register(
    "CPiD",
    CPiD,
    Schema(
        params={
            "n_bins": Int(doc="intervals kept, tails included"),
            "alpha": Optional(Float(), doc="split threshold (null: 2 / n_bins)"),
            "warm_up": Int(doc="values buffered to find the initial range"),
            "min_width": Float(doc="minimum-width guard, a share of the initial range"),
            "tail_split": Str(choices=("step", "halfway"), doc="where a tail split puts its break"),
        },
        state={
            "classes": CLASSES,
            "missing": Array("float64", ("n_classes",), low=0.0, doc="weight of missing values per class"),
            "buffer_values": Array("float64", ("n_buffered",), doc="warm-up values, in arrival order"),
            "buffer_classes": Array("int64", ("n_buffered",), low=0, below="n_classes", doc="their class columns"),
            "buffer_weights": Array("float64", ("n_buffered",), low=0.0, doc="their weights"),
            "started": Bool(doc="the warm-up is over (the grid exists)"),
            "breaks": Array("float64", ("n_breaks",), increasing=True, doc="breaks b_1 < … < b_{m−1} (empty in the warm-up)"),
            "counts": Array("float64", ("n_intervals",), low=0.0, doc="total count of each interval (empty in the warm-up)"),
            "class_counts": Array("float64", ("n_intervals", "n_classes"), doc="class counts of each interval"),
            "total": Float(low=0.0, doc="weight of the non-missing values N"),
            "step": Float(low=0.0, doc="width of the initial grid's intervals"),
            "min_split_width": Float(low=0.0, doc="inner intervals narrower than this never split"),
            "min_seen": Float(finite=False, doc="smallest value seen (+inf before any)"),
            "max_seen": Float(finite=False, doc="largest value seen (−inf before any)"),
        },
        doc="Constant-memory PiD histogram with class counts",
    ),
    state=CPiD.record_state,
    build=CPiD.from_record,
)
