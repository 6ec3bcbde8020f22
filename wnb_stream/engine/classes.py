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

from ..io.registry import register
from ..io.schema import Array, Fields, Keys, Schema
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

    def add(self, columns: np.ndarray, counts: np.ndarray, seen: np.ndarray) -> None:
        """Add another model's weighted ``counts (m,)`` and examples ``seen (m,)`` to the distinct
        ``columns (m,)`` (a merge: its classes' columns here). O(m)."""
        self.counts[columns] += counts
        self.seen[columns] += seen

    def recount(self, j: np.ndarray, w: np.ndarray) -> None:
        """Count afresh from the examples of classes ``j (m,)`` with sample weights ``w (m,)``
        only (what is kept after forgetting); every class's rebuild falls due. O(m + J)."""
        J = len(self.index)
        self.counts = np.bincount(j, weights=w, minlength=J).astype(float)
        self.seen = np.bincount(j, minlength=J).astype(float)
        self.next_rebuild = np.zeros(J)

    def fade(self, factor: float) -> None:
        """Multiply the weighted counts by ``factor`` (forgetting; examples per class stay). O(J)."""
        self.counts = self.counts * factor

    def rebuild_all_soon(self) -> None:
        """Every class's rebuild threshold falls due at the next check (a merge). O(J)."""
        self.next_rebuild = np.zeros(len(self.index))

    def rebuilt(self, gaps: np.ndarray) -> None:
        """Every variable was rebuilt for the classes: each class's next threshold is its
        examples plus its ``gaps (J,)`` (``Schedule.class_gap``). O(J)."""
        self.next_rebuild = self.seen + gaps

    def due(self) -> bool:
        """True when a class's examples reached its rebuild threshold. O(J)."""
        return bool(np.any(self.seen >= self.next_rebuild))

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

    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. O(J)."""
        J = len(self.index)
        for name in ("counts", "seen", "next_rebuild"):
            if getattr(self, name).shape != (J,):
                return [f"{name}: expected shape ({J},) (one entry per label), got {getattr(self, name).shape}"]
        found = []
        if not (np.all(self.counts >= 0) and np.all(self.seen >= 0)):
            found.append("counts: class counts and examples per class must be >= 0")
        if np.any(self.counts[self.seen == 0] != 0):
            found.append("counts: a class holds weight without an example")
        if np.any(self.seen != np.floor(self.seen)):
            found.append("seen: examples per class are whole numbers")
        if not np.isfinite(self.counts.sum()):
            found.append("counts: must add up to a finite total (the prior's denominator)")
        return found

    def _check(self) -> None:
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def record_state(self) -> dict:
        """The state fields of the record: the labels and the three columns."""
        return {"labels": list(self.labels), "counts": self.counts, "seen": self.seen, "next_rebuild": self.next_rebuild}

    @classmethod
    def from_record(cls, fields: Fields) -> Classes:
        """The classes a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        state = fields.state
        classes = cls()
        index = ClassIndex()
        for label in state["labels"]:
            index.encode(label)
        classes.__setstate__({"index": index, "counts": state["counts"], "seen": state["seen"], "next_rebuild": state["next_rebuild"]})
        return classes


register(
    "Classes",
    Classes,
    Schema(
        state={
            "labels": Keys(length="n_classes", doc="class labels in order of first appearance"),
            "counts": Array("float64", ("n_classes",), low=0.0, doc="weighted examples per class (the prior)"),
            "seen": Array("float64", ("n_classes",), low=0.0, doc="examples per class"),
            "next_rebuild": Array("float64", ("n_classes",), low=0.0, doc="examples of the class at which every variable is rebuilt"),
        },
        doc="The classes: labels, prior counts, rebuild thresholds",
    ),
    state=Classes.record_state,
    build=Classes.from_record,
)
