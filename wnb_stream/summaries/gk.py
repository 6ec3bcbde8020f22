"""Greenwald–Khanna quantile summary with per-class counts ("GK-class"; Greenwald & Khanna 2001,
``docs/algorithms/summaries.md#gk``).

The summary keeps, for one numeric variable, a short list of tuples sorted by value. Level 2
(MODL) reads them as elementary bins through ``table() -> Bins``; ``quantile`` and ``rank``
answer the usual GK queries.

Design note
-----------
State. Tuple ``i`` is ``(v_i, g_i, Δ_i, e_i, c_i)`` held in parallel arrays: ``v (s,)`` strictly
increasing values, ``g (s,)`` weight charged to the tuple, ``Δ (s,)`` rank uncertainty,
``e (s,)`` the part of ``g_i`` whose value is exactly ``v_i``, and ``c (s, J)`` class counts with
``Σ_j c_ij = g_i``. With ``L_i = Σ_{m≤i} g_m`` and ``R(x)`` the true weight of values ``≤ x``,
every operation below keeps

    (a) every observation charged to tuples ``0..i`` is ``≤ v_i``            (so ``L_i ≤ R(v_i)``),
    (b) ``R(v_i) ≤ L_i + Δ_i``,
    (c) ``h_i := g_i + Δ_i − e_i ≤ 2εn`` (guarantee mode; ``n`` = non-missing weight).

(a)–(b) are the charging lemma (``docs/algorithms/summaries.md#gk``), per class:
``Ĉ_j(i) ≤ R_j(v_i)`` with a total deficit ``Σ_j (R_j(v_i) − Ĉ_j(i)) ≤ Δ_i``. (c) is the
weighted form of the GK ε-invariant: the weight of values ``< v_i`` is at most
``L_{i−1} + h_i``, so a rank is known within ``h ≤ 2εn`` and every rank or quantile query is
answered within ``εn``. For unit weights and distinct values
(``e_i = 1``) the rules below also keep the textbook ``g_i + Δ_i ≤ max(⌊2εn⌋, 1)``; with
weights or repeated values that form cannot hold (one value may weigh more than ``2εn``).

Equal values. A value already held by a tuple is added to that tuple (``g``, ``e`` and ``c``
grow, ``Δ`` is unchanged), so tuple values stay distinct and ``table()`` needs no collapsing
of equal values. This is a deviation from the textbook insert (which opens a new tuple after the
equal ones): with that rule a later duplicate can be merged into the *next* tuple, and after collapsing
the deficit at ``v_i`` is no longer bounded by ``Δ_i``; absorbing keeps (b) exact.

Buffering. ``update`` appends to a small typed buffer; every ``buffer_size`` values the buffer is
sorted, collapsed into an exact summary (one tuple per distinct value, ``Δ = 0``) and inserted
by the insert rule, which is the merge with an exact summary; new values that share a
successor are grouped while the group keeps ``g + Δ ≤ 2εn`` (``insert_batch``); then the tuples
are compressed. A batch needs no per-value Python work, and ``update_many`` feeds the very same buffer,
so it produces exactly the tuples of a loop of ``update`` (bit for bit). Every query flushes the
buffer first. The guarantee never depends on the buffer: each flush keeps (a)–(c); the buffer
only adds ``buffer_size`` pending values (24 bytes each) to the memory, and compressing once
per flush rather than every ``⌊1/(2ε)⌋`` values (as Greenwald & Khanna 2001 do) only changes
the size between two flushes.

Compiled flush. A flush is NumPy's vectorised ``argsort`` of the batch and one numba kernel
(``_gk_kernels.absorb``: stable order, exact summary, ``insert_batch``, then the compress);
``gk_tuples.insert_batch`` and ``gk_tuples.compress_runs`` are the same kernels. They form every
float as the NumPy form they replaced did, so the tuples are the same bits (``_gk_kernels``'
design note; ``tests/summaries/test_gk_kernels.py``). They compile on first use, cached on disk.

Inserting, merging and compressing: the rules on the tuple arrays, and why each keeps (a)–(c),
are the design note of ``gk_tuples``, the module of the pure functions that apply them.
"""

from __future__ import annotations

import array
import copy
import functools
import math
import sys

import numpy as np

from .._checks import integer, real
from ..io.registry import register
from ..io.schema import Array, Fields, Float, Int, Optional, Schema
from ..tables import Bins, ClassIndex
from . import _gk_kernels, gk_batch
from .base import CLASSES, Summary, all_close, decayed, padded
from .gk_tuples import budget_pairs, merge_tuples, screen
from .policy import (
    as_weights,
    check_codes,
    check_factor,
    check_label,
    check_weight,
    known_columns,
    label_batch,
    numeric_batch,
    real_value,
    register_labels,
)

__all__ = ["GKClass"]

_INF = math.inf
#: Default ε when neither ``epsilon``, ``quantiles`` nor ``max_tuples`` is given (``docs/algorithms/summaries.md#gk``).
DEFAULT_EPSILON = 0.005
#: Default number of buffered values between two flushes (see the design note).
DEFAULT_BUFFER_SIZE = 1000


# --------------------------------------------------------------------------------------------
# The summary
# --------------------------------------------------------------------------------------------


class GKClass(Summary):
    """Greenwald–Khanna quantile summary of a numeric variable, with class counts per tuple.

    A sorted list of tuples ``(v_i, g_i, Δ_i, e_i, c_i)`` summarises the (weighted) values seen;
    level 2 reads them as elementary bins ``(v_{i−1}, v_i]`` with class counts ``c_i``
    (``docs/algorithms/summaries.md#gk``; the design notes of this module and of ``gk_tuples`` detail the rules and their proofs).

    Guarantee (guarantee mode): with ``n`` the total weight of the non-missing values,
    every tuple has ``g_i + Δ_i − e_i ≤ 2εn``, so ``rank(x)`` is within ``εn`` of the true
    weight of values ``≤ x`` and ``quantile(φ)`` returns a value whose rank range is within
    ``εn`` of ``φn``; the class counts of bins ``0..i`` are lower bounds of the true class counts
    of values ``≤ v_i`` with a total deficit ``≤ Δ_i ≤ 2εn``. Size: about ``0.7/ε`` tuples
    measured over 10^6 uniform or sorted values (``benchmarks/bench_gk.py``); the worst-case
    figure of Greenwald & Khanna 2001, ``max_tuples_bound(ε, n) = (11/(2ε))·log2(2εn)``, is proved
    for their band compress, not for the simple compress used here.

    Cost: ``update`` O(1) amortised plus a flush every ``buffer_size`` values, each
    O(b log b + (s + b)·J) (a vectorised sort and one compiled pass); ``update_many`` the same
    per value without Python work per value, plus the labels' look-up; ``merge``
    O((s_a + s_b)·J); ``table``, ``quantile``, ``rank`` O(s·J). Memory ``s·(4 + J)`` floats plus
    ``24·buffer_size`` bytes of buffer. The first flush of a process compiles the kernels (a few
    seconds) or loads them from numba's cache.

    Parameters
    ----------
    epsilon
        Rank error bound ε in (0, 0.5). ``None`` means 0.005 unless ``quantiles`` or
        ``max_tuples`` is given. At most one of the three may be given.
    quantiles
        Number q ≥ 2 of equal-frequency bins to resolve with a rank error of at most half a bin:
        ε = 1/(2q).
    max_tuples
        Budget mode: keep at most this many tuples (an integer ≥ 3), with no ε guarantee; the
        error reached is reported by ``effective_epsilon`` (MOA's fixed-budget variant).
    buffer_size
        Number of values buffered between two flushes (an integer ≥ 1; ``None`` means 1000).
        Larger is faster and holds ``24`` bytes per buffered value.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(42)
    >>> values = rng.normal(size=5000)
    >>> labels = np.where(values + rng.normal(scale=0.5, size=5000) > 0, "pos", "neg")
    >>> gk = GKClass(epsilon=0.01)
    >>> for x, y in zip(values.tolist(), labels.tolist()):
    ...     gk.update(x, y)
    >>> gk.update(None, "pos")  # a missing value
    >>> gk.n, gk.n_tuples, GKClass.max_tuples_bound(0.01, 5000)
    (5001.0, 73, 3655)
    >>> round(gk.quantile(0.5), 3), round(float(np.median(values)), 3)
    (-0.014, -0.004)
    >>> gk.rank(0.0), int((values <= 0.0).sum())  # within εn = 50
    (2533.5, 2507)
    >>> table = gk.table()
    >>> table.classes, table.counts.shape, table.missing.tolist()
    (('pos', 'neg'), (73, 2), [1.0, 0.0])
    >>> table.upper_bounds[:3].round(3).tolist(), table.counts[:3].tolist()
    ([-3.648, -2.132, -1.89], [[0.0, 1.0], [0.0, 91.0], [0.0, 9.0]])

    """

    kind = "numeric"
    skip_null_rebuilds = True  # (settle and n_atoms read the tuples, not a table)

    def __init__(
        self,
        epsilon: float | None = None,
        quantiles: int | None = None,
        max_tuples: int | None = None,
        buffer_size: int | None = None,
    ):
        modes = (("epsilon", epsilon), ("quantiles", quantiles), ("max_tuples", max_tuples))
        given = [name for name, value in modes if value is not None]
        if len(given) > 1:
            raise ValueError(f"give at most one of epsilon, quantiles and max_tuples, got {', '.join(given)}")
        if epsilon is not None:
            real(epsilon, "epsilon", above=0, below=0.5)
        for name, value, low in (("quantiles", quantiles, 2), ("max_tuples", max_tuples, 3), ("buffer_size", buffer_size, 1)):
            if value is not None:
                integer(value, name, low=low)
        self.epsilon = epsilon
        self.quantiles = quantiles
        self.max_tuples = max_tuples
        self.buffer_size = buffer_size

        # ε maintained by the summary (None in budget mode); merge() may raise it.
        if max_tuples is not None:
            self._epsilon = None
        elif quantiles is not None:
            self._epsilon = 1.0 / (2.0 * quantiles)
        else:
            self._epsilon = float(epsilon) if epsilon is not None else DEFAULT_EPSILON
        self._buffer_limit = int(buffer_size) if buffer_size is not None else DEFAULT_BUFFER_SIZE
        self._classes = ClassIndex()
        # Tuples (s = 0 at birth): values, g, Δ, e (s,) and class counts (s, J).
        self._values = np.zeros(0)
        self._g = np.zeros(0)
        self._delta = np.zeros(0)
        self._at_value = np.zeros(0)
        self._counts = np.zeros((0, 0))
        self._weight = 0.0  # Σ g: weight of the flushed non-missing values
        self._missing = np.zeros(0)  # (J,) weight of missing values per class
        # Pending values: value, class column, weight (typed arrays: 24 bytes a value).
        self._buffer_values = array.array("d")
        self._buffer_classes = array.array("q")
        self._buffer_weights = array.array("d")

    # -- configuration ------------------------------------------------------------------------

    @property
    def guaranteed_epsilon(self) -> float | None:
        """The ε the summary maintains (``None`` in budget mode); ``merge`` keeps the largest."""
        return self._epsilon

    @staticmethod
    def max_tuples_bound(epsilon: float, n: float) -> int:
        """Worst-case number of tuples after ``n`` values, ``⌈(11/(2ε))·log2(2εn)⌉`` (Greenwald &
        Khanna 2001).

        The bound is ``O((1/ε)·log(εn))``; it is capped by ``n`` (at most one tuple per distinct
        value) and uses ``log2(2εn) ≥ 1``. It is proved for their band compress; the simple
        compress used here keeps far fewer tuples in practice but has no proof.
        """
        if not 0.0 < epsilon < 0.5:
            raise ValueError(f"epsilon must be in (0, 0.5), got {epsilon!r}")
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n!r}")
        bound = 11.0 / (2.0 * epsilon) * max(1.0, math.log2(max(2.0 * epsilon * n, 1.0)))
        return int(min(math.ceil(n), math.ceil(bound)))

    # -- updates ------------------------------------------------------------------------------

    def update(self, x, y, w: float = 1.0) -> None:
        """Add value ``x`` of class ``y`` with weight ``w``. Cost O(1) amortised.

        None, NaN and ±inf are counted in ``missing``. A non-number ``x`` or a negative,
        NaN or infinite ``w`` raises ``ValueError`` and changes nothing.
        """
        if x.__class__ is not float:
            x = real_value(x)  # the input policy: NaN when missing (±inf are kept, then missing)
        if w.__class__ is not float or not 0.0 <= w < _INF:
            w = check_weight(w)
        classes = self._classes
        try:
            j = classes.position.get(y)
        except TypeError:  # an unhashable label: check_label names it
            j = None
        if j is None:
            j = classes.encode(check_label(y))
            self._grow()  # a class gets its zero columns when it is registered, on both paths
        if x - x != 0.0:  # NaN or ±inf: never inserted (docs/algorithms/summaries.md#input-policy)
            if j >= len(self._missing):
                self._grow()
            self._missing[j] += w
            return
        if w > 0.0:
            self._buffer_values.append(x)
            self._buffer_classes.append(j)
            self._buffer_weights.append(w)
            if len(self._buffer_values) >= self._buffer_limit:
                self._flush()

    def update_many(self, values, labels, weights=None) -> None:
        """Add a batch: ``values (m,)``, ``labels (m,)``, ``weights (m,)`` or None (ones).

        The result is exactly that of a loop of ``update`` (same tuples, counts and class order).
        The whole batch is validated first: on a bad value, label or weight nothing changes.
        Cost O(m log b): the labels' columns from ``ClassIndex.lookup_many`` (``encode_many``
        when a class is new), the rest vectorised or compiled.
        """
        x = numeric_batch(values)
        m = len(x)
        labels = label_batch(labels, m)
        codes = known_columns(self._classes, labels)  # the usual case: no new class
        w = as_weights(weights, m)
        if m == 0:
            return
        if codes is None:
            codes = register_labels(self._classes, labels).astype(np.int64)
            self._grow()  # the new classes' zero columns, as a loop of update adds them
        self._update_columns(x, codes, w)

    def update_coded(self, values, codes, labels, weights=None) -> None:
        """``update_many(values, labels[codes], weights)``: the labels' columns are found once per
        batch (``codes (m,)`` index ``labels (J,)``). The same summary as ``update_many``."""
        labels = np.asarray(labels)
        codes = check_codes(codes, len(labels))
        columns = self._columns_of(codes, labels) if len(codes) else None
        if columns is None:  # a class new to this summary (or an empty batch): the general path
            self.update_many(values, labels[codes], weights)
            return
        x = numeric_batch(values)
        if len(x) != len(codes):
            raise ValueError(f"codes must have one entry per value ({len(x)}), got {len(codes)}")
        self._update_columns(x, columns, as_weights(weights, len(x)))

    def _update_columns(self, x: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
        """Add validated values ``(m,)`` with their class columns and weights."""
        if not (w.flags.c_contiguous and w.flags.writeable):
            w = w.copy()  # one array type for the kernel
        finite = np.isfinite(x)
        if not finite.all():
            self._grow()
            missing = ~finite
            # add.at accumulates in order: the same floats as a loop of update
            np.add.at(self._missing, codes[missing], w[missing])
        keep = finite & (w > 0.0)
        if not keep.all():
            x, codes, w = x[keep], codes[keep], w[keep]
        self._push(x, codes, w)

    def _push(self, x: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
        """Feed finite values with positive weights through the buffer, flushing where a loop would."""
        gk_batch.push(self, x, codes, w)

    def _flush(self) -> None:
        """Merge the buffered values into the tuples."""
        if not len(self._buffer_values):
            return
        self._absorb(*self._take_buffer())

    def _take_buffer(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pending buffer as arrays ``(x, codes, w)``, the buffer emptied."""
        x = np.array(self._buffer_values, dtype=np.float64)
        codes = np.array(self._buffer_classes, dtype=np.int64)
        w = np.array(self._buffer_weights, dtype=np.float64)
        del self._buffer_values[:], self._buffer_classes[:], self._buffer_weights[:]
        return x, codes, w

    def _absorb(self, x: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
        """Merge a batch ``(m,)`` of finite values with positive weights, then compress.

        NumPy sorts the batch (its vectorised ``argsort``), then one compiled pass
        (``_gk_kernels.absorb``) makes the order stable, collapses the batch into an exact summary
        (one tuple per distinct value, ``g = e`` = its weight, ``Δ = 0``), inserts it as
        ``insert_batch`` does and, in guarantee mode, compresses as ``compress_runs``.
        """
        self._grow()
        guaranteed = self._epsilon is not None
        epsilon = self._epsilon if guaranteed else 0.0
        order = np.argsort(x).astype(np.int64, copy=False)
        state = (self._values, self._g, self._delta, self._at_value, self._counts)
        *state, self._weight = _gk_kernels.absorb(*state, x, codes, w, order, self._weight, epsilon, guaranteed)
        self._values, self._g, self._delta, self._at_value, self._counts = state
        if not guaranteed:
            self._compress()

    def merge(self, other: GKClass) -> None:
        """Absorb a summary built on another stream (the tight merge of the design note).

        The result keeps ``max(ε_a, ε_b)`` (a budget-mode ``other`` counts with its
        ``effective_epsilon``); a budget-mode summary stays within its budget. ``other``'s
        pending buffer is flushed; its content is not changed. ``TypeError`` if ``other`` is not
        a ``GKClass``; any two merge (whatever their ε, mode or buffer size). Cost
        O((s_a + s_b)·J).
        """
        if not isinstance(other, GKClass):
            raise TypeError(f"can only merge another GKClass, got {type(other).__name__}")
        if other is self:
            other = copy.deepcopy(other)
        incoming = self._take_in(other)
        state = (self._values, self._g, self._delta, self._at_value, self._counts)
        self._values, self._g, self._delta, self._at_value, self._counts = merge_tuples(state, incoming)
        self._compress()

    def _take_in(self, other: GKClass, columns: np.ndarray | None = None) -> tuple:
        """A merge's work outside the tuples (``merge``, ``merge_many``): both buffers flushed,
        ``other``'s classes registered here, its missing counts and weight added, ε widened to
        ``other``'s (a budget-mode ``other``: its ``effective_epsilon``). Returns ``other``'s
        tuples ``(v, g, Δ, e, c)`` with the class counts on this summary's class axis.

        ``columns``, where each of ``other``'s classes is here, is given by a caller that knows
        every one of them is registered already (``gk_batch.merge_many``, for many summaries with
        the same classes): the counts are then returned on ``other``'s own class axis, and the
        caller places them (for all its summaries at once)."""
        self._flush()
        other._flush()
        other._grow()
        placed = columns is None
        if placed:
            columns = self._classes.merge(other._classes)
        self._grow()
        if not placed:
            counts = other._counts  # (on other's class axis: the caller places the columns)
        elif other._counts.shape[1] == len(self._classes) and columns.tolist() == list(range(len(columns))):
            counts = other._counts  # (the same class axis: only read, by a kernel or ``merge_tuples``)
        else:
            counts = np.zeros((len(other._values), len(self._classes)))
            counts[:, columns] = other._counts
        self._missing[columns] += other._missing
        other_epsilon = other._epsilon if other._epsilon is not None else other.effective_epsilon
        self._weight += other._weight
        if self._epsilon is not None:
            self._epsilon = max(self._epsilon, other_epsilon)
        return other._values, other._g, other._delta, other._at_value, counts

    def decay(self, factor: float) -> None:
        """Multiply the weight of everything seen so far by ``factor`` (0 < factor ≤ 1).

        ``g``, ``Δ``, ``e``, the class counts, the flushed weight, the pending weights and the
        missing counts are multiplied by ``factor``; values and buffer positions stay. Every
        invariant of the design note is linear in the weights, ``2εn`` included, so the rank
        error stays within ``εn`` of the weight now held, and updates and merges that follow
        keep it (the compress threshold only grows with ``n``). Positive ``g``, ``Δ``, ``e`` and
        pending weights are kept at least the smallest positive float (``base.decayed``). ``factor == 1``
        changes nothing; ``ValueError`` naming ``factor`` unless it is in (0, 1]. Cost O(s·J + b).
        """
        factor = check_factor(factor)
        if factor == 1.0:
            return
        self._g = decayed(self._g, factor)
        self._at_value = decayed(self._at_value, factor)
        self._delta = decayed(self._delta, factor)  # an upper bound: never rounded down to 0
        self._counts = self._counts * factor
        self._weight *= factor
        self._missing = self._missing * factor
        if len(self._buffer_weights):
            pending = decayed(np.frombuffer(self._buffer_weights, dtype=np.float64), factor)
            self._buffer_weights = array.array("d", pending.tobytes())

    def _grow(self) -> None:
        """Append zero class columns for classes registered since the last call
        (``docs/algorithms/summaries.md#class-counts-and-tables``)."""
        n_classes = len(self._classes)
        if self._counts.shape[1] < n_classes:
            counts = np.zeros((len(self._values), n_classes))
            counts[:, : self._counts.shape[1]] = self._counts
            self._counts = counts
        if len(self._missing) < n_classes:
            self._missing = np.concatenate([self._missing, np.zeros(n_classes - len(self._missing))])

    def _compress(self) -> None:
        if self._epsilon is not None:
            # the simple compress, p = 2εn (compress_runs then _apply, compiled)
            state = (self._values, self._g, self._delta, self._at_value, self._counts)
            state = _gk_kernels.compress(*state, 2.0 * self._epsilon * self._weight)
            self._values, self._g, self._delta, self._at_value, self._counts = state
            return
        while len(self._values) > self.max_tuples:
            dropped = budget_pairs(self._g, self._delta, self._at_value, len(self._values) - self.max_tuples)
            keep = np.ones(len(self._values), dtype=bool)
            keep[dropped] = False
            self._apply(keep)

    def _apply(self, keep: np.ndarray) -> None:
        """Merge every dropped tuple into the next kept tuple to its right (class counts follow)."""
        if keep.all():
            return
        # a run of merged tuples starts right after each kept tuple; tuple 0 is always kept
        starts = np.flatnonzero(np.concatenate(([True], keep[:-1])))
        self._g = np.add.reduceat(self._g, starts)
        self._counts = np.add.reduceat(self._counts, starts, axis=0)
        self._values = self._values[keep]
        self._delta = self._delta[keep]
        self._at_value = self._at_value[keep]

    # -- queries ------------------------------------------------------------------------------

    @property
    def n(self) -> float:
        """Total weight seen, missing values included (does not flush)."""
        return self._weight + math.fsum(self._buffer_weights) + float(self._missing.sum())

    def holds_weight(self) -> bool:
        """``n > 0``: every term of ``n`` is ≥ 0, so the sum is positive exactly when one is."""
        return self._weight > 0.0 or any(self._buffer_weights) or any(self._missing.tolist())

    @property
    def n_tuples(self) -> int:
        """Number of tuples s (after a flush)."""
        self._flush()
        return len(self._values)

    @property
    def effective_epsilon(self) -> float:
        """ε_eff = max_i (g_i + Δ_i − e_i) / (2n): the error actually reached."""
        self._flush()
        if not self._weight:
            return 0.0
        return float(np.max(self._g + self._delta - self._at_value)) / (2.0 * self._weight)

    def table(self) -> Bins:
        """Elementary bins ``(v_{i−1}, v_i]`` with class counts (``docs/algorithms/summaries.md#gk``). Cost O(s·J).

        Bounds are the tuple values (distinct by construction); no bin is empty, as every tuple
        holds a positive weight (``g > 0``, checked by ``problems``); missing values are counted
        apart. The table is a frozen copy.
        """
        self._flush()
        self._grow()
        return Bins(self._values, self._counts, self.classes, self._missing)  # Bins copies

    def settle(self) -> float:
        """Take the buffered values and give every registered class its column, as reading the
        table does (only where there is work: a rebuild settles thousands of summaries); then the
        weight held, missing values included (``n``; ``Summary.settle``)."""
        if self._buffer_values:
            self._flush()
        n_classes = len(self._classes.labels)
        if self._counts.shape[1] < n_classes or len(self._missing) < n_classes:
            self._grow()
        return self._weight + sum(self._missing.tolist())  # (a few floats: cheaper than NumPy's sum)

    def settled(self) -> bool:
        """``Summary.settled``: no buffered value, and a class column for every registered class."""
        n_classes = len(self._classes)
        return not self._buffer_values and self._counts.shape[1] >= n_classes and len(self._missing) >= n_classes

    @classmethod
    def take_many(cls, summaries: list, values, codes, labels: tuple, weights, starts: list, ends: list) -> None:
        """``Summary.take_many``, bit for bit: ``update_coded(…)`` (a ``GKClass``'s ``take_rows``)
        then ``settle()`` for each summary.

        The summaries with an empty buffer whose new values fit in one block absorb them in one
        compiled call for all of them (``_gk_kernels.absorb_many``) instead of a buffer, a flush
        and a kernel call each; the others (a buffer, a block to split, or a fixed budget of
        tuples) take the usual path.
        """
        gk_batch.take_many(summaries, values, codes, labels, weights, starts, ends)

    @classmethod
    def settle_many(cls, summaries: list) -> None:
        """``Summary.settle_many``, bit for bit: ``settle()`` for each summary, the buffers of
        those that keep an ε guarantee flushed in one compiled call per class width
        (``gk_batch.flush_many``)."""
        gk_batch.flush_many(summaries)
        for summary in summaries:
            summary.settle()  # (nothing left to flush: the class columns only)

    @classmethod
    def merge_many(cls, pairs: list) -> None:
        """``Summary.merge_many``, bit for bit: ``summary.merge(other)`` for each pair.

        The pairs whose summary keeps an ε guarantee merge their tuples and compress in one
        compiled call for all of them (``_gk_kernels.merge_many``, the floats of ``merge_tuples``
        then the compress); a summary with a budget of tuples merges alone.
        """
        gk_batch.merge_many(pairs)

    def n_atoms(self) -> int:
        """The non-empty bins of the table (tuples whose class counts are not all 0: a long decay
        can take a tuple's counts to 0), and one for missing values if there are any."""
        return int(np.count_nonzero(self._counts.sum(axis=1))) + bool(self._missing.any())

    @classmethod
    def stack_tables(cls, summaries: list, classes: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``Summary.stack_tables``, the same floats, made with a few NumPy calls per class order
        instead of a few per summary (``Variable.rebuild_many``); each summary settles."""
        return gk_batch.stack_tables(summaries, classes)

    def aligned_table(self, classes: tuple) -> Bins:
        """``table().aligned(classes)`` made from copies of the tuples' arrays (their columns moved
        as ``aligned`` moves them), without the intermediate table: the same floats."""
        classes = tuple(classes)
        bounds, counts, missing = gk_batch.aligned_arrays(self, classes)
        return Bins._assemble(bounds, counts, classes, missing)

    def quantile(self, phi: float) -> float:
        """A value whose rank range is within ``εn`` of ``φ·n`` (Greenwald & Khanna 2001). Cost O(s).

        ``n`` is the weight of the non-missing values; an observation of weight ``w`` covers the
        ranks ``(r − w, r]``. Returns NaN when no value has been seen.
        """
        real(phi, "phi", low=0, high=1)
        self._flush()
        if not len(self._values):
            return math.nan
        rmin = np.cumsum(self._g)
        target = float(phi) * rmin[-1]
        # worst distance between the target and the ranks (W(< v_i), R(v_i)] of v_i
        error = np.maximum(target - rmin, rmin + self._delta - self._at_value - target)
        return float(self._values[np.argmin(error)])

    def rank(self, x: float) -> float:
        """Estimated weight of the non-missing values ``≤ x``, within ``εn``. Cost O(s)."""
        x = real_value(x)
        if x != x:
            raise ValueError("x must not be missing (None or NaN) in rank(x)")
        self._flush()
        s = len(self._values)
        if not s:
            return 0.0
        rmin = np.cumsum(self._g)
        i = int(np.searchsorted(self._values, x, side="right")) - 1
        low = float(rmin[i]) if i >= 0 else 0.0
        if i + 1 < s:  # weight < v_{i+1} is at most L_{i+1} + Δ_{i+1} − e_{i+1}
            high = float(rmin[i + 1] + self._delta[i + 1] - self._at_value[i + 1])
        else:
            high = float(rmin[-1])
        if i >= 0 and self._values[i] == x:
            high = min(high, float(rmin[i] + self._delta[i]))
        return (low + max(high, low)) / 2.0

    def memory_usage(self) -> int:
        """Bytes held by the tuples, the buffer and the class labels (an O(1) estimate)."""
        arrays = (self._values, self._g, self._delta, self._at_value, self._counts, self._missing)
        size = sys.getsizeof(self) + sum(a.nbytes for a in arrays)
        buffers = (self._buffer_values, self._buffer_classes, self._buffer_weights)
        size += sum(sys.getsizeof(b) for b in buffers)
        size += sys.getsizeof(self._classes.labels) + sys.getsizeof(self._classes.position)
        return int(size)

    # -- invariants ---------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants of the design note on the flushed tuples (does not flush), each
        ``"field: what is wrong"`` with the field's name in the record; empty when sound. O(s + J
        + buffered)."""
        s, n_classes = len(self._values), len(self._classes)
        if any(getattr(self, name).shape != (s,) for name in ("_g", "_delta", "_at_value")):
            return ["g: g, delta and at_value must hold one entry per tuple"]
        if self._counts.ndim != 2 or self._counts.shape[0] != s or self._counts.shape[1] > n_classes:
            return [f"counts: expected {s} rows of at most n_classes = {n_classes} columns, got shape {self._counts.shape}"]
        if self._missing.shape[0] > n_classes or not (self._missing >= 0.0).all():
            return ["missing: must hold at most n_classes counts, each >= 0"]
        if (self._epsilon is None) != (self.max_tuples is not None):
            return ["guaranteed_epsilon: must be null exactly when max_tuples is set (budget mode)"]
        found = []
        n_buffered = len(self._buffer_values)
        if not n_buffered == len(self._buffer_classes) == len(self._buffer_weights):
            return ["buffer_values: the buffer's values, classes and weights must have one length"]
        if n_buffered >= self._buffer_limit:
            found.append(f"buffer_values: holds {n_buffered} values, the buffer flushes at {self._buffer_limit}")
        if not all(0 <= j < n_classes for j in self._buffer_classes):
            found.append(f"buffer_classes: must be < n_classes = {n_classes}")
        if not all(w > 0.0 and w < _INF for w in self._buffer_weights):
            found.append("buffer_weights: must be > 0 and finite")
        if not all(x - x == 0.0 for x in self._buffer_values):
            found.append("buffer_values: must be finite")
        if not s:
            if self._weight != 0.0:
                found.append(f"weight: must be 0 without tuples, got {self._weight!r}")
            return found
        v, g, delta, e, counts, weight = self._values, self._g, self._delta, self._at_value, self._counts, self._weight
        tolerance = 1e-9 * max(1.0, weight)
        if not (np.isfinite(v).all() and (v[1:] > v[:-1]).all()):
            found.append("values: must be finite and increase strictly")
        if not (g > 0.0).all():
            found.append("g: every tuple carries weight (g > 0)")
        if not (delta >= 0.0).all():
            found.append("delta: must be >= 0")
        if not ((e > 0.0).all() and (e <= g + tolerance).all()):
            found.append("at_value: must lie in (0, g] (the weight at a value is part of its tuple's)")
        if not (counts >= -tolerance).all():
            found.append("counts: class counts must be >= 0")
        if not all_close(counts.sum(axis=1), g, 1e-9, tolerance):
            found.append("counts: the class counts of a tuple must add up to its g (Σ_j c_ij = g_i)")
        if not abs(float(g.sum()) - weight) <= tolerance:
            found.append(f"weight: must be Σ g = {float(g.sum())!r}, got {weight!r}")
        if delta[0] != 0.0 or delta[-1] != 0.0:
            found.append("delta: the first and last tuples (the minimum and maximum) are exact (Δ = 0)")
        if not abs(float(g[0]) - float(e[0])) <= tolerance:
            found.append("at_value: nothing merges into the minimum (g_0 = e_0)")
        if self._epsilon is not None:
            if not (g + delta - e <= 2.0 * self._epsilon * weight + tolerance).all():
                found.append("delta: breaks the ε-invariant g + Δ − e <= 2εn")
        elif s > self.max_tuples:
            found.append(f"values: holds {s} tuples, the budget is max_tuples = {self.max_tuples}")
        return found

    @staticmethod
    def screen_columns(group) -> np.ndarray:
        """``(m,)`` True for the summaries of a table's group (``io.columns.Group``: the checked
        columns of m records) whose ``problems()`` may not be empty (``gk_tuples.screen``). O(size)."""
        return screen(group, DEFAULT_BUFFER_SIZE)

    # -- saved record (docs/saved-model.md) ---------------------------------------------------

    def record_state(self) -> dict:
        """The state fields of the record: the tuples, the maintained ε, the flushed weight, the
        missing counts and the pending buffer (flushing it at save time would move the later
        flush points, hence the tuples). Class-count rows are padded to the number of classes."""
        state = {name: column[0] for name, column in self.record_columns([self]).items()}
        state["counts"], state["missing"] = state["counts"].copy(), state["missing"].copy()  # (copies: the record is the caller's)
        return state

    @staticmethod
    def record_columns(summaries: list) -> dict:
        """The state fields of the records of many summaries, each a list over ``summaries`` (the
        k-th item as ``summaries[k].record_state()`` holds it; arrays may be the summaries' own,
        as ``record_state`` has always shared them: values, g, delta, at_value; counts and missing
        too, when no padding is needed, which ``record_state`` copies; the buffers are copies): one
        pass per field, no dict per summary (``io.columns``, which concatenates them at once).
        O(summaries + rows)."""
        counts, missing = [], []
        for gk in summaries:
            n_tuples, n_classes = len(gk._values), len(gk._classes)
            c, m = gk._counts, gk._missing
            counts.append(c if c.shape == (n_tuples, n_classes) and c.dtype == np.float64 else padded(c, (n_tuples, n_classes)))
            missing.append(m if m.shape == (n_classes,) and m.dtype == np.float64 else padded(m, (n_classes,)))
        return {
            "classes": [list(gk._classes.labels) for gk in summaries],
            "guaranteed_epsilon": [gk._epsilon for gk in summaries],
            "values": [gk._values for gk in summaries],
            "g": [gk._g for gk in summaries],
            "delta": [gk._delta for gk in summaries],
            "at_value": [gk._at_value for gk in summaries],
            "counts": counts,
            "weight": [gk._weight for gk in summaries],
            "missing": missing,
            # copies (bytes), not views: a view of a typed array would stop it from growing
            "buffer_values": [_buffer_copy(gk._buffer_values, np.float64) for gk in summaries],
            "buffer_classes": [_buffer_copy(gk._buffer_classes, np.int64) for gk in summaries],
            "buffer_weights": [_buffer_copy(gk._buffer_weights, np.float64) for gk in summaries],
        }

    @classmethod
    def from_record(cls, fields: Fields) -> GKClass:
        """The summary a loaded, schema-checked record describes (its ``problems()`` not yet
        asked: the registry does). The buffer limit is rebuilt from ``buffer_size``."""
        return cls.build_columns({name: [value] for name, value in fields.params.items()}, {name: [value] for name, value in fields.state.items()})[0]

    @classmethod
    def build_columns(cls, params: dict, state: dict) -> list:
        """The summaries of many loaded, schema-checked records (``io.columns``: each field's
        per-item values), as ``from_record`` builds each: a copy of the checked prototype of its
        parameters (a wide model has thousands of summaries and a few parameter sets) with the
        record's arrays (views of the loaded columns). O(items + classes)."""
        prototypes: dict = {}
        out = []
        new = cls.__new__
        state = {**state, "class_index": ClassIndex.of_many(state["classes"])}
        columns = (state[name] for name in ("class_index", "guaranteed_epsilon", "values", "g", "delta", "at_value", "counts", "weight", "missing", "buffer_values", "buffer_classes", "buffer_weights"))
        for key, class_index, epsilon, values, g, delta, at_value, counts, weight, missing, buffer_values, buffer_classes, buffer_weights in zip(zip(*(params[name] for name in _PARAMS)), *columns):
            base = prototypes.get(key)
            if base is None:
                base = prototypes[key] = _prototype(cls, *key).__dict__
            gk = new(cls)
            gk.__dict__.update(base)
            gk._classes = class_index
            gk._epsilon = None if epsilon is None else float(epsilon)
            gk._values, gk._g, gk._delta, gk._at_value = values, g, delta, at_value
            gk._counts = counts
            gk._weight = float(weight)
            gk._missing = missing
            gk._buffer_values = array.array("d", buffer_values.tobytes())
            gk._buffer_classes = array.array("q", buffer_classes.tobytes())
            gk._buffer_weights = array.array("d", buffer_weights.tobytes())
            out.append(gk)
        return out


_PARAMS = ("epsilon", "quantiles", "max_tuples", "buffer_size")


@functools.lru_cache(maxsize=64)
def _prototype(cls: type, *params) -> GKClass:
    """A fresh ``cls(*params)``: its constructor's checks and derived fields, once per parameters
    (``from_record`` replaces every mutable field of a copy)."""
    return cls(*params)


register(
    "GKClass",
    GKClass,
    Schema(
        params={
            "epsilon": Optional(Float(), doc="rank error bound ε (constructor parameter)"),
            "quantiles": Optional(Int(), doc="number of equal-frequency bins to resolve"),
            "max_tuples": Optional(Int(), doc="budget mode: most tuples kept"),
            "buffer_size": Optional(Int(), doc="values buffered between two flushes (null: 1000)"),
        },
        state={
            "classes": CLASSES,
            "guaranteed_epsilon": Optional(Float(above=0.0), doc="ε maintained (merge keeps the largest); null in budget mode"),
            "values": Array("float64", ("n_tuples",), increasing=True, doc="tuple values v_i"),
            "g": Array("float64", ("n_tuples",), low=0.0, doc="weight charged to each tuple g_i"),
            "delta": Array("float64", ("n_tuples",), low=0.0, doc="rank uncertainty Δ_i"),
            "at_value": Array("float64", ("n_tuples",), low=0.0, doc="weight exactly at v_i, e_i"),
            "counts": Array("float64", ("n_tuples", "n_classes"), doc="class counts c_ij (Σ_j c_ij = g_i)"),
            "weight": Float(low=0.0, doc="weight of the flushed non-missing values (Σ g)"),
            "missing": Array("float64", ("n_classes",), low=0.0, doc="weight of missing values per class"),
            "buffer_values": Array("float64", ("n_buffered",), doc="pending values, in arrival order"),
            "buffer_classes": Array("int64", ("n_buffered",), low=0, below="n_classes", doc="their class columns"),
            "buffer_weights": Array("float64", ("n_buffered",), above=0.0, doc="their weights"),
        },
        doc="Greenwald–Khanna summary with class counts",
    ),
    state=GKClass.record_state,
    build=GKClass.from_record,
)


_EMPTY = {np.float64: np.empty(0, dtype=np.float64), np.int64: np.empty(0, dtype=np.int64)}
for _array in _EMPTY.values():
    _array.flags.writeable = False


def _buffer_copy(buffer, dtype) -> np.ndarray:
    """A copy of a pending buffer (``array.array``) as an array of ``dtype``; one shared read-only
    empty array for an empty buffer (most summaries' at a save). O(buffer)."""
    if not len(buffer):
        return _EMPTY[dtype]
    return np.frombuffer(buffer.tobytes(), dtype=dtype)
