"""Test oracle: the pre-kernel GKClass, kept verbatim (tests only).

This is ``wnb_stream/summaries/gk.py`` as it was before the numba kernels of
``wnb_stream/summaries/_gk_kernels.py`` replaced its NumPy batch insert and compress. It is kept
as the oracle of ``tests/summaries/test_gk_kernels.py``: every array of the state must stay
bit-identical between the two implementations. What the kernels did not change is shared with
the package: the functions are imported, and ``GKClass`` here subclasses the package's, keeping
only the pre-kernel ``update_many``, ``_absorb``, ``_compress`` and ``table`` (``_labels`` is the
package's label checks from its input policy module, hashability included); the rest is verbatim
(imports made absolute); do not change it.
"""

from __future__ import annotations

import numpy as np

from wnb_stream.summaries import gk as _package_gk

# Unchanged by the kernels: the oracle shares these with the package (the input checks now live in
# the package's input policy module).
from wnb_stream.summaries.gk_tuples import (  # noqa: E402
    budget_pairs,
)
from wnb_stream.summaries.policy import as_weights, check_labels, label_batch  # noqa: E402
from wnb_stream.summaries.policy import numeric_batch as _values  # noqa: E402
from wnb_stream.tables import Bins

__all__ = ["GKClass"]


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _labels(labels, m: int) -> np.ndarray:
    """The package's label checks, with the hashability check the pre-kernel code made there."""
    out = label_batch(labels, m)
    check_labels(out)
    return out


# --------------------------------------------------------------------------------------------
# Pure functions on tuple arrays
# --------------------------------------------------------------------------------------------


def insert_batch(state: tuple, values: np.ndarray, weights: np.ndarray, counts: np.ndarray, threshold: float | None) -> tuple:
    """Insert a sorted exact batch into a tuple list (the insert rule for many values at once).

    ``state`` is ``(v, g, Δ, e, c)`` as in ``merge_tuples``; the batch holds distinct values
    ``values (k,)`` in increasing order with their weights ``(k,)`` and class counts ``(k, J)``.
    A value already held is absorbed by its tuple. A new value with successor ``u`` gets
    ``Δ = h_u = g_u + Δ_u − e_u`` (0 for a new minimum or maximum). With a ``threshold``
    (``2εn``, guarantee mode), consecutive new values sharing the same successor are grouped
    into one tuple (held by the largest) in windows of cumulative weight of width
    ``threshold − h_u − max(weights)``, so a grouped tuple has ``g + Δ < threshold``; a new
    minimum stays alone. Returns new arrays. Cost O((s + k)·J).
    """
    v, g, delta, at_value, class_counts = state
    s = len(v)
    g, at_value, class_counts = g.copy(), at_value.copy(), class_counts.copy()
    position = np.searchsorted(v, values, side="left")  # (k,) index of the successor
    if s:
        tie = v[np.minimum(position, s - 1)] == values
        tie &= position < s
        if tie.any():
            held = position[tie]
            g[held] += weights[tie]
            at_value[held] += weights[tie]
            class_counts[held] += counts[tie]
            fresh = ~tie
            values, weights, counts, position = values[fresh], weights[fresh], counts[fresh], position[fresh]
    k = len(values)
    if not k:
        return v.copy(), g, delta.copy(), at_value, class_counts
    # Δ of a new value: h of its successor; 0 below the minimum or above the maximum
    width = np.append(state[1] + delta - state[3], 0.0)  # (s + 1,) h before absorbing ties
    new_delta = width[position]
    new_delta[position == 0] = 0.0
    ends = np.ones(k, dtype=bool)  # ends[i]: value i holds a tuple
    if threshold is not None and k > 1:
        index = np.arange(k)
        before = np.cumsum(weights) - weights  # (k,) weight of the batch values before i
        gap_start = np.ones(k, dtype=bool)
        gap_start[1:] = position[1:] != position[:-1]
        within = before - before[np.maximum.accumulate(np.where(gap_start, index, 0))]
        # A group never reaches `room` before its last value is added, so g + Δ ≤ threshold
        # (the textbook form, stronger than g + Δ − e ≤ threshold).
        room = threshold - new_delta - weights.max()
        with np.errstate(divide="ignore", invalid="ignore"):
            slot = np.where(room > 0.0, np.floor(within / room), index)
        ends[:-1] = gap_start[1:] | (slot[1:] != slot[:-1])
        if position[0] == 0:
            ends[0] = True  # the minimum stays alone and exact
    if ends.all():
        new = (values, weights, new_delta, weights, counts)
    else:
        last = np.flatnonzero(ends)
        first = np.concatenate(([0], last[:-1] + 1))
        new = (
            values[last],
            np.add.reduceat(weights, first),
            new_delta[last],
            weights[last],
            np.add.reduceat(counts, first, axis=0),
        )
        position = position[last]
    size = s + len(new[0])
    at_new = position + np.arange(len(new[0]))  # final positions of the new tuples
    from_old = np.ones(size, dtype=bool)
    from_old[at_new] = False
    out = []
    for old, fresh_values in zip((v, g, delta, at_value, class_counts), new):
        z = np.empty((size,) + old.shape[1:])
        z[from_old] = old
        z[at_new] = fresh_values
        out.append(z)
    return tuple(out)


def compress_runs(g: np.ndarray, delta: np.ndarray, threshold: float) -> np.ndarray:
    """Keeper mask of the simple compress.

    Right to left, tuple ``i`` (``1 ≤ i ≤ s − 2``) is merged into the tuple currently at
    ``i + 1`` when ``g_i + G + Δ ≤ threshold``, where ``G`` and ``Δ`` are the accumulated weight
    and the uncertainty of that tuple. Returns ``keep (s,)`` bool; tuples dropped are merged
    into the next kept tuple to their right. Cost O(s); the Python loop skips the tuples with
    ``g_i + g_{i+1} > threshold``, which can never merge (``G ≥ g_{i+1}`` whatever happens to
    their right).
    """
    s = len(g)
    keep = np.ones(s, dtype=bool)
    if s < 3:
        return keep
    candidates = np.flatnonzero(g[1:-1] + g[2:] <= threshold) + 1
    if not len(candidates):
        return keep
    gl = g.tolist()
    dl = delta.tolist()
    drop = []
    previous = -2
    total = slack = 0.0
    for i in reversed(candidates.tolist()):
        if i + 1 != previous:  # tuple i + 1 was not examined: a keeper that absorbed nothing yet
            total = gl[i + 1]
            slack = dl[i + 1]
        gi = gl[i]
        if gi + total + slack <= threshold:
            drop.append(i)
            total += gi
        else:
            total = gi
            slack = dl[i]
        previous = i
    keep[drop] = False
    return keep


# --------------------------------------------------------------------------------------------
# The summary
# --------------------------------------------------------------------------------------------


class GKClass(_package_gk.GKClass):
    """The package's ``GKClass`` with its pre-kernel block insert, compress, ``update_many`` and ``table``.

    The other methods are not touched by the kernels and are inherited.
    """

    kind = "numeric"


    # -- configuration ------------------------------------------------------------------------


    # -- updates ------------------------------------------------------------------------------


    def update_many(self, values, labels, weights=None) -> None:
        """Add a batch: ``values (m,)``, ``labels (m,)``, ``weights (m,)`` or None (ones).

        The result is exactly that of a loop of ``update`` (same tuples, counts and class order).
        The whole batch is validated first: on a bad value, label or weight nothing changes.
        Cost O(m log b) vectorised.
        """
        x = _values(values)
        m = len(x)
        labels = _labels(labels, m)
        w = as_weights(weights, m)
        if m == 0:
            return
        try:
            codes = self._classes.encode_many(labels)
        except TypeError:  # labels of mixed types that np.unique cannot sort
            codes = np.fromiter((self._classes.encode(y) for y in labels.tolist()), dtype=np.intp, count=m)
        self._grow()  # (new classes get their zero columns at registration, as in the package)
        finite = np.isfinite(x)
        if not finite.all():
            self._grow()
            missing = ~finite
            # add.at accumulates in order: the same floats as a loop of update
            np.add.at(self._missing, codes[missing], w[missing])
        keep = finite & (w > 0.0)
        if not keep.all():
            x, codes, w = x[keep], codes[keep], w[keep]
        self._push(x, codes.astype(np.int64), w)


    def _absorb(self, x: np.ndarray, codes: np.ndarray, w: np.ndarray) -> None:
        """Merge a batch ``(m,)`` of finite values with positive weights, then compress."""
        self._grow()
        n_classes = self._counts.shape[1]
        order = np.argsort(x, kind="stable")
        x, codes, w = x[order], codes[order], w[order]
        # The batch as an exact summary: one tuple per distinct value, g = e = its weight, Δ = 0.
        first = np.empty(len(x), dtype=bool)
        first[0] = True
        np.not_equal(x[1:], x[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        g = np.add.reduceat(w, starts)
        group = np.cumsum(first) - 1
        counts = np.bincount(group * n_classes + codes, weights=w, minlength=len(starts) * n_classes)
        counts = counts.reshape(len(starts), n_classes)
        self._weight += float(w.sum())
        threshold = 2.0 * self._epsilon * self._weight if self._epsilon is not None else None
        state = (self._values, self._g, self._delta, self._at_value, self._counts)
        self._values, self._g, self._delta, self._at_value, self._counts = insert_batch(state, x[starts], g, counts, threshold)
        self._compress()


    def _compress(self) -> None:
        if self._epsilon is not None:
            # the simple compress, p = 2εn
            keep = compress_runs(self._g, self._delta, 2.0 * self._epsilon * self._weight)
            self._apply(keep)
            return
        while len(self._values) > self.max_tuples:
            dropped = budget_pairs(self._g, self._delta, self._at_value, len(self._values) - self.max_tuples)
            keep = np.ones(len(self._values), dtype=bool)
            keep[dropped] = False
            self._apply(keep)


    # -- queries ------------------------------------------------------------------------------


    def table(self) -> Bins:
        """Elementary bins ``(v_{i−1}, v_i]`` with class counts. Cost O(s·J).

        Bounds are the tuple values (distinct by construction), empty bins are dropped, missing
        values are counted apart. The table is a frozen copy.
        """
        self._flush()
        self._grow()
        nonempty = self._g > 0.0
        return Bins(self._values[nonempty], self._counts[nonempty], self.classes, self._missing)


    # -- invariants ---------------------------------------------------------------------------

