"""The classes of a model: labels in order of first appearance, the prior's counts, and each
class's rebuild threshold.

The class prior is P(C_j) = N_j / N on the weighted counts, with a floor so that no class has a
log-probability of −∞ (``docs/algorithms/prediction.md#prior``). Level 2 is rebuilt for every
variable when a class is new or its number of examples has grown by the schedule's factor
(``docs/algorithms/prediction.md#rebuild-schedule``): ``seen`` and ``next_rebuild`` are that
schedule's per-class columns, advanced by ``Schedule``.
"""

from __future__ import annotations

import numpy as np

from ..tables import ClassIndex

__all__ = ["Classes"]


class Classes:
    """Class labels, weighted counts ``(J,)``, examples per class ``(J,)`` and rebuild thresholds ``(J,)``.

    >>> classes = Classes()
    >>> classes.encode("spam"), classes.encode("ham"), classes.encode("spam")
    (0, 1, 0)
    >>> classes.count_many(np.array([0, 1, 0]), np.array([1.0, 1.0, 2.0]))
    >>> classes.counts.tolist(), classes.seen.tolist()
    ([3.0, 1.0], [2.0, 1.0])
    >>> np.exp(classes.log_prior()).round(3).tolist()
    [0.727, 0.273]
    """

    __slots__ = ("index", "counts", "seen", "next_rebuild", "_typed")

    def __init__(self):
        self.index = ClassIndex()
        self.counts = np.zeros(0)  # (J,) weighted class counts (the prior)
        self.seen = np.zeros(0)  # (J,) examples per class (the rebuild schedule)
        self.next_rebuild = np.zeros(0)  # (J,) examples of the class at which level 2 is rebuilt again
        self._typed: np.ndarray | None = None  # (J,) labels as a typed array (a cache, see ``typed``)

    def __len__(self) -> int:
        return len(self.index)

    @property
    def labels(self) -> list:
        """The labels, in column order (do not modify)."""
        return self.index.labels

    def encode(self, label) -> int:
        """Column of ``label``, registering it (with zero counts) if it is new."""
        j = self.index.encode(label)
        self.grow()
        return j

    def grow(self) -> bool:
        """Give every class registered in ``index`` its columns; True when some were added."""
        extra = len(self.index) - len(self.counts)
        if extra <= 0:
            return False
        self.counts = np.append(self.counts, np.zeros(extra))
        self.seen = np.append(self.seen, np.zeros(extra))
        self.next_rebuild = np.append(self.next_rebuild, np.zeros(extra))
        return True

    def count_one(self, j: int, w: float) -> None:
        """Count one example of class ``j`` with sample weight ``w``."""
        self.counts[j] += w
        self.seen[j] += 1

    def count_many(self, j: np.ndarray, w: np.ndarray) -> None:
        """Count examples of classes ``j (m,)`` with sample weights ``w (m,)``."""
        np.add.at(self.counts, j, w)
        np.add.at(self.seen, j, 1.0)

    def log_prior(self) -> np.ndarray:
        """``(J,)`` log P(C_j) = log((N_j + ε) / (N + J·ε)) with ε = 1 / (N + 1)."""
        n = float(np.add.reduce(self.counts))  # (``counts.sum()`` without its Python wrapper: once per example)
        eps = 1.0 / (n + 1.0)
        J = len(self.counts)
        if n < 1e150:  # the ratio is at least ε / (N + Jε) > 1e-301: finite, and no warning state to set
            return np.log((self.counts + eps) / (n + J * eps))
        with np.errstate(divide="ignore"):
            log_prior = np.log((self.counts + eps) / (n + J * eps))
        if not np.isfinite(log_prior).all():  # the ratio underflowed (N beyond ~1e154): in logs
            log_prior = np.where(np.isfinite(log_prior), log_prior, np.log(self.counts + eps) - np.log(n + J * eps))
        return log_prior

    def typed(self) -> np.ndarray:
        """``(J,)`` the labels, typed (ints, bools or strings) when they all share that type.

        Summaries register labels through ``np.unique``, which is fast on typed arrays and gives
        the same Python values back (``.item()``); any other mix stays an object array.
        """
        labels = self.index.labels
        if self._typed is None or len(self._typed) != len(labels):
            kinds = {type(label) for label in labels}
            array = None
            # NumPy's str arrays drop trailing NUL characters: such labels stay objects
            if len(kinds) == 1 and kinds <= {int, bool, str} and not (kinds == {str} and any(s.endswith("\x00") for s in labels)):
                try:
                    array = np.array(labels)
                except OverflowError:  # ints beyond 64 bits
                    array = None
                if array is not None and array.dtype.kind not in "iubU":
                    array = None
            if array is None:
                array = np.empty(len(labels), dtype=object)
                array[:] = labels
            self._typed = array
        return self._typed

    def __getstate__(self) -> dict:
        return {"index": self.index, "counts": self.counts, "seen": self.seen, "next_rebuild": self.next_rebuild}

    def __setstate__(self, state: dict) -> None:
        self.index = state["index"]
        self.counts, self.seen, self.next_rebuild = state["counts"], state["seen"], state["next_rebuild"]
        self._typed = None

    def _check(self) -> None:
        J = len(self.index)
        assert self.counts.shape == self.seen.shape == self.next_rebuild.shape == (J,)
        assert np.all(self.counts >= 0) and np.all(self.seen >= 0)
        assert np.all(self.counts[self.seen == 0] == 0), "a class holds weight without an example"
