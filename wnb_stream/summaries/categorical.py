"""Class counts of a categorical variable: exact while values are few, a sketch beyond.

Design note. In *exact* mode the summary is a dict ``value → [count per class]`` (rows padded
lazily when a class appears), which is what MODL grouping wants (``docs/algorithms/summaries.md#categorical``). When a
value would make more than ``max_values`` distinct values, the summary switches once and for all
to *sketch* mode: a count-min sketch with per-class counters holds every value's
class counts approximately, SpaceSaving keeps the ``top_k`` heaviest values (seeded with the
``top_k`` largest exact counts at the switch), and every other value is folded into the *star*
value. Memory is then bounded by ``8·depth·width·J`` bytes plus ``top_k`` slots, whatever the
number of distinct values.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .._checks import integer, real
from ..io.registry import Record, register
from ..io.schema import Array, Fields, Float, Int, Keys, Optional, Schema, Struct
from ..tables import Categories, ClassIndex
from .base import CLASSES, Summary, all_close, padded
from .policy import (
    as_weights,
    category_batch,
    check_factor,
    fast_weight,
    known_columns,
    label_batch,
    label_column,
    register_labels,
    unhashable_category,
)
from .policy import is_missing_category as _missing
from .sketch import CountMinSketch, SpaceSaving, check_seed

__all__ = ["Categorical"]


class Categorical(Summary):
    """Per-class counts of each category value, exact up to ``max_values`` values, then sketched.

    Parameters
    ----------
    max_values
        Largest number of distinct values counted exactly. The next new value switches the
        summary to sketch mode. ≥ 1.
    top_k
        Number of heavy hitters kept as their own values in sketch mode (SpaceSaving slots). ≥ 1.
    epsilon, delta
        Count-min accuracy in sketch mode: per class ``j``, ``c_j(v) ≤ ĉ_j(v) ≤ c_j(v) + ε·N_j``
        with probability ≥ ``1 − δ`` (Cormode & Muthukrishnan 2005), with width ``⌈e/ε⌉`` and
        depth ``⌈ln 1/δ⌉``. Both in (0, 1).
    seed
        Key of the stable hash (an integer in [0, 2^64)). Sketches merge only with equal
        ``(epsilon, delta, seed)``; the default 0 makes all default summaries mergeable.

    Notes
    -----
    ``table()`` returns ``Categories``: in exact mode every value in order of first appearance;
    in sketch mode the monitored heavy hitters by decreasing count, with their exact class counts
    when they have been monitored since they first appeared and their count-min estimates
    otherwise, and the star counts ``N_j − Σ_kept ĉ_j(v)``, clipped at 0; when the kept estimates
    exceed ``N_j`` they are scaled down so that each column sums to the class total.

    Values may be any hashable (str, int, bool, tuples, …); None, NaN and pandas' NA are missing.
    Values equal as dict keys are one value (``1``, ``1.0`` and ``True``), in both modes.

    Cost: ``update`` O(1) in exact mode, O(depth) in sketch mode (one BLAKE2b hash unless the
    value is monitored: its cells are cached in its slot); ``update_many`` factorises the batch
    (``np.unique`` for numeric arrays, a dict for object and string arrays) and counts with
    ``bincount``, plus O(1) Python work per row in sketch mode; ``table`` O(V·J) or
    O(k·(depth + J)). Memory: O(V·J) exact,
    ``8·depth·width·J`` bytes + O(k·J) sketched.

    ``update_many`` leaves the state of a loop of ``update``, in both modes and across the switch:
    the same values in the same order, the same monitored heavy hitters, the same count-min table.
    The exact counts, the class totals and the missing counts are summed per batch (``bincount``),
    so they equal the loop's bit for bit whenever the sums of the weights are exact in floating
    point (integer weights, for instance), and up to rounding otherwise. In sketch mode the rows
    are a Python loop (SpaceSaving's evictions depend on their order), with one hash per distinct
    value and the count-min cells added in one in-order ``np.add.at``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(42)
    >>> values = rng.choice(["red", "green", "blue"], size=300, p=[0.5, 0.3, 0.2])
    >>> labels = np.where(values == "red", rng.random(300) < 0.8, rng.random(300) < 0.3)
    >>> summary = Categorical()
    >>> summary.update_many(values, labels)
    >>> table = summary.table()
    >>> table.values, table.classes
    (('green', 'red', 'blue'), (False, True))
    >>> table.counts.tolist()
    [[59.0, 29.0], [28.0, 127.0], [34.0, 23.0]]

    With few ``max_values`` the summary sketches; the heavy value keeps its exact counts and the
    rest goes to the star:

    >>> sketched = Categorical(max_values=5, top_k=2, seed=42)
    >>> for i in range(1000):
    ...     sketched.update("frequent" if i % 2 else f"rare-{i}", i % 3 == 0)
    >>> sketched.mode
    'sketch'
    >>> table = sketched.table()
    >>> table.classes, table.values[0], table.counts[0].tolist()
    ((True, False), 'frequent', [167.0, 333.0])
    >>> table.star.tolist(), table.n
    ([167.0, 332.0], 1000.0)
    """

    kind = "categorical"

    def __init__(
        self, max_values: int = 1000, top_k: int = 100, epsilon: float = 0.001, delta: float = 0.01, seed: int = 0
    ):
        integer(max_values, "max_values", low=1)
        integer(top_k, "top_k", low=1)
        real(epsilon, "epsilon", above=0, below=1)
        real(delta, "delta", above=0, below=1)
        check_seed(seed)
        self.max_values = max_values
        self.top_k = top_k
        self.epsilon = epsilon
        self.delta = delta
        self.seed = seed

        self._width, self._depth = CountMinSketch.dimensions(epsilon, delta)
        self._classes = ClassIndex()
        self._missing: list[float] = []  # (n_classes,)
        self._totals: list[float] = []  # (n_classes,) weight of the non-missing values
        self._counts: dict | None = {}  # exact mode: value → class counts (padded lazily)
        self._sketch: CountMinSketch | None = None  # sketch mode
        self._heavy: SpaceSaving | None = None  # sketch mode

    # -- queries ------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """``"exact"`` or ``"sketch"``."""
        return "exact" if self._counts is not None else "sketch"

    @property
    def n(self) -> float:
        return math.fsum(self._totals) + math.fsum(self._missing)

    def table(self) -> Categories:
        """Kept values with class counts, and the star counts (see the class notes). Cost O(V·J)."""
        n_classes = len(self._classes)
        if self._counts is not None:
            counts = np.zeros((len(self._counts), n_classes))  # (n_values, n_classes)
            for i, row in enumerate(self._counts.values()):
                counts[i, : len(row)] = row
            return Categories(tuple(self._counts), counts, self.classes, self._missing, np.zeros(n_classes))
        items = self._heavy.items()
        counts = np.zeros((len(items), n_classes))
        for i, (_, slot) in enumerate(items):
            if slot.error == 0:  # monitored since its first appearance: exact
                counts[i, : len(slot.class_counts)] = slot.class_counts
            else:
                counts[i] = self._sketch.estimate(slot.cells)
        totals = np.array(self._totals)
        kept = counts.sum(axis=0)
        # star = N_j − Σ kept ĉ_j clipped at 0; over-estimated columns are scaled to N_j
        over = kept > totals
        if over.any():
            scale = np.ones(n_classes)
            scale[over] = totals[over] / kept[over]
            counts = counts * scale
        star = np.maximum(totals - kept, 0.0)
        return Categories(tuple(value for value, _ in items), counts, self.classes, self._missing, star)

    def memory_usage(self) -> int:
        n_classes = len(self._classes)
        row_size = sys.getsizeof([]) + 32 * n_classes + 64  # a row of floats plus a typical key
        size = sys.getsizeof(self._missing) + sys.getsizeof(self._totals) + 64 * n_classes
        size += sys.getsizeof(self._classes.labels)
        if self._counts is not None:
            return int(size + sys.getsizeof(self._counts) + len(self._counts) * row_size)
        slot_size = 56 + 8 * self._depth + 64 + row_size  # slot, cached cells, dict entry, heap entry
        return int(size + self._sketch.nbytes + len(self._heavy) * slot_size)

    # -- updates ------------------------------------------------------------------------------

    def _add_classes(self) -> None:
        while len(self._missing) < len(self._classes):
            self._missing.append(0.0)
            self._totals.append(0.0)
        if self._sketch is not None:
            self._sketch.grow(len(self._classes))

    def update(self, x, y, w: float = 1.0) -> None:
        """Add value ``x`` of class ``y`` with weight ``w``. Cost O(1) exact, O(depth) sketched."""
        if isinstance(x, np.generic):
            x = x.item()
        if x is None or _missing(x):
            w = fast_weight(w)
            j = label_column(self._classes, y)
            if j == len(self._missing):
                self._add_classes()
            self._missing[j] += w
            return
        counts = self._counts
        try:  # the lookup also checks that x is hashable, before anything changes
            found = counts.get(x) if counts is not None else self._heavy.get(x)
        except TypeError:
            raise unhashable_category(x) from None
        w = fast_weight(w)
        j = label_column(self._classes, y)
        if j == len(self._missing):
            self._add_classes()
        self._totals[j] += w
        if counts is not None:
            if found is None:
                if len(counts) >= self.max_values:
                    self._switch_to_sketch()
                    self._sketch_update(x, j, w, None)
                    return
                found = counts[x] = [0.0] * len(self._missing)
            elif j >= len(found):
                found.extend([0.0] * (j + 1 - len(found)))
            found[j] += w
        else:
            self._sketch_update(x, j, w, found)

    def _sketch_update(self, x, j: int, w: float, slot) -> None:
        cells = slot.cells if slot is not None else self._sketch.cells(x)
        self._sketch.add(cells, j, w)
        self._heavy.update(x, w, j, cells, slot)

    def _switch_to_sketch(self) -> None:
        """Move the exact counts into a count-min sketch and the heaviest values into SpaceSaving."""
        self._sketch, self._heavy = self._sketched(self._counts, list(range(len(self._classes))))
        self._counts = None

    def _sketched(self, exact: dict, columns: list) -> tuple[CountMinSketch, SpaceSaving]:
        """A (sketch, heavy hitters) pair holding the exact counts ``exact`` (class ``i`` → column ``columns[i]``)."""
        n_classes = len(self._classes)
        sketch = CountMinSketch(self._width, self._depth, self.seed, n_classes)
        heavy = SpaceSaving(self.top_k)
        values = list(exact)
        counts = np.zeros((len(values), n_classes))  # (n_values, n_classes)
        for i, row in enumerate(exact.values()):
            counts[i, columns[: len(row)]] = row
        cells = [sketch.cells(value) for value in values]
        if values:
            sketch.add_counts(np.array(cells), counts)
        totals = counts.sum(axis=1)
        for i in np.argsort(-totals, kind="stable")[: self.top_k].tolist():
            heavy.update_counts(values[i], counts[i].tolist(), cells[i])
        return sketch, heavy

    def update_many(self, values, labels, weights=None) -> None:
        """Add a batch: factorisation of the values and ``bincount`` counting. Cost O(n log n).

        The state of a loop of ``update`` (see the class notes for how exactly). The whole batch is
        validated before anything changes.
        """
        array = category_batch(values)
        n = len(array)
        uniques, value_codes, missing = _factorize_present(array)
        labels = label_batch(labels, n)
        codes = known_columns(self._classes, labels)
        w = as_weights(weights, n)
        # validated: from here on the summary changes
        if codes is None:
            codes = register_labels(self._classes, labels)
        self._add_classes()
        n_classes = len(self._classes)
        if n == 0:
            return
        if missing.any():
            extra = np.bincount(codes[missing], weights=w[missing], minlength=n_classes)
            self._missing = [a + b for a, b in zip(self._missing, extra.tolist())]
        class_codes, w = codes[~missing], w[~missing]
        totals = np.bincount(class_codes, weights=w, minlength=n_classes)
        self._totals = [a + b for a, b in zip(self._totals, totals.tolist())]
        if not len(value_codes):
            return
        split = 0  # values before `split` are counted exactly, the others sketched
        if self._counts is not None:
            split = len(value_codes)
            new = [u for u, value in enumerate(uniques) if value not in self._counts]
            room = self.max_values - len(self._counts)
            if len(new) > room:  # the first new value that does not fit switches the mode
                first = np.full(len(uniques), len(value_codes))
                np.minimum.at(first, value_codes, np.arange(len(value_codes)))
                split = int(first[new[room]])
            self._add_exact(uniques, value_codes[:split], class_codes[:split], w[:split])
            if split < len(value_codes):
                self._switch_to_sketch()
        if split < len(value_codes):
            rows = array[~missing][split:].tolist()  # each row's own value, as update receives it
            if array.dtype.kind == "O":
                rows = [value.item() if isinstance(value, np.generic) else value for value in rows]
            self._add_sketched(uniques, rows, value_codes[split:], class_codes[split:], w[split:])

    def _add_exact(self, uniques: list, value_codes, class_codes, w) -> None:
        n_classes = len(self._classes)
        seen = np.unique(value_codes)  # codes follow first appearance: so does this order
        if not len(seen):
            return
        counts = np.bincount(value_codes * n_classes + class_codes, weights=w, minlength=len(uniques) * n_classes)
        counts = counts.reshape(len(uniques), n_classes)
        table = self._counts
        for u in seen.tolist():
            value = uniques[u]
            row = table.get(value)
            if row is None:
                table[value] = counts[u].tolist()
                continue
            if len(row) < n_classes:
                row.extend([0.0] * (n_classes - len(row)))
            for j, c in enumerate(counts[u].tolist()):
                row[j] += c

    def _add_sketched(self, uniques: list, rows: list, value_codes, class_codes, w) -> None:
        """Sketch rows in order, as a loop of ``update`` would: ``rows (m,)`` the values, coded into
        ``uniques`` by ``value_codes (m,)``, of classes ``class_codes (m,)`` with weights ``w (m,)``.

        Every cell of the count-min table receives the rows' weights in row order (one
        ``np.add.at``), and SpaceSaving one update per row, so its evictions are the loop's.
        """
        heavy, sketch = self._heavy, self._sketch
        cells = {}  # unique code → its count-min cells (one hash per distinct value)
        for u in np.unique(value_codes).tolist():
            slot = heavy.get(uniques[u])
            cells[u] = slot.cells if slot is not None else sketch.cells(uniques[u])
        codes = value_codes.tolist()
        sketch.add_rows(np.array([cells[u] for u in codes], dtype=np.intp), class_codes, w)
        update = heavy.update
        for value, u, j, weight in zip(rows, codes, class_codes.tolist(), w.tolist()):
            update(value, weight, j, cells[u])

    # -- merge --------------------------------------------------------------------------------

    def merge(self, other: Categorical) -> None:
        """Absorb ``other``. Exact + exact adds counts (switching to sketch mode past
        ``max_values``); otherwise the count-min tables add and the heavy hitters merge
        (SpaceSaving merge), an exact side being sketched first with this summary's parameters.

        ``TypeError`` if ``other`` is not a ``Categorical``; ``ValueError`` naming ``epsilon``,
        ``delta`` or ``seed`` when ``other`` is sketched with a different one (its count-min
        table would not add to ours). Nothing changes when it raises.
        """
        if not isinstance(other, Categorical):
            raise TypeError(f"can only merge another Categorical, got {type(other).__name__}")
        if other._counts is None:  # its sketch is added to ours: same count-min width, depth and hash
            for name, ours, theirs in (
                ("epsilon", self._width, other._width),
                ("delta", self._depth, other._depth),
                ("seed", self.seed, other.seed),
            ):
                if ours != theirs:
                    raise ValueError(
                        f"cannot merge a sketched Categorical with a different {name}: "
                        f"{getattr(self, name)!r} != {getattr(other, name)!r}"
                    )
        if other is self:
            other = _copy_categorical(other)
        columns = self._classes.merge(other._classes).tolist()
        self._add_classes()
        for i, j in enumerate(columns):
            self._missing[j] += other._missing[i]
            self._totals[j] += other._totals[i]
        if self._counts is not None and other._counts is not None:
            union = len(self._counts) + sum(1 for value in other._counts if value not in self._counts)
            if union <= self.max_values:
                for value, row in other._counts.items():
                    mine = self._counts.get(value)
                    if mine is None:
                        mine = self._counts[value] = [0.0] * len(self._missing)
                    elif len(mine) < len(self._missing):
                        mine.extend([0.0] * (len(self._missing) - len(mine)))
                    for i, c in enumerate(row):
                        mine[columns[i]] += c
                return
        if self._counts is not None:
            self._switch_to_sketch()
        if other._counts is not None:
            sketch, heavy = self._sketched(other._counts, columns)
            self._sketch.merge(sketch)
            self._heavy.merge(heavy)
        else:
            self._sketch.merge(other._sketch, columns)
            self._heavy.merge(other._heavy, columns)

    # -- forgetting ---------------------------------------------------------------------------

    def decay(self, factor: float) -> None:
        """Multiply the weight of everything seen so far by ``factor`` (0 < factor ≤ 1).

        The class totals, missing counts and, in exact mode, every count are multiplied by
        ``factor``: the counts of the same stream with every weight times ``factor``. In sketch
        mode the count-min table and the heavy hitters' counts and errors scale alike
        (``CountMinSketch.decay``, ``SpaceSaving.decay``), so both guarantees hold relative to the
        decayed totals. The mode and the values kept do not change. ``factor == 1`` changes
        nothing; ``ValueError`` naming ``factor`` unless it is in (0, 1]. Cost O(V·J) exact,
        O(depth·width·J + k·J) sketched.
        """
        factor = check_factor(factor)
        if factor == 1.0:
            return
        self._missing = [value * factor for value in self._missing]
        self._totals = [value * factor for value in self._totals]
        if self._counts is not None:
            for row in self._counts.values():
                row[:] = [value * factor for value in row]
            return
        self._sketch.decay(factor)
        self._heavy.decay(factor)

    # -- invariants ---------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. Exact mode: at most ``max_values`` values whose class counts add up to the
        totals. Sketch mode: a sketch of the parameters' dimensions, sound itself, each row of
        which holds the totals, and sound heavy hitters of ``top_k`` slots whose cached cells are
        their values' cells in the sketch. O(values·J), or O(depth·width·J + top_k·J)."""
        n_classes, found = len(self._classes), []
        if len(self._missing) != n_classes or len(self._totals) != n_classes:
            return [f"totals: expected n_classes = {n_classes} missing and non-missing totals"]
        if not (all(v >= 0 for v in self._missing) and all(v >= 0 for v in self._totals)):
            found.append("totals: weights must be >= 0")
        if self._counts is not None:
            if self._sketch is not None or self._heavy is not None:
                return found + ["sketch: must be null in exact mode"]
            if len(self._counts) > self.max_values:
                found.append(f"exact.values: {len(self._counts)} values exceed max_values {self.max_values}")
            sums = np.zeros(n_classes)
            for value, row in self._counts.items():
                if _missing(value):
                    found.append(f"exact.values: {value!r} is a missing value")
                if len(row) > n_classes or not all(c >= 0 for c in row):
                    found.append(f"exact.counts: the counts of {value!r} must be at most n_classes = {n_classes} counts >= 0")
                    return found
                sums[: len(row)] += row
            if not all_close(sums, self._totals, 1e-9, 1e-9):
                found.append("exact.counts: the counts of the values must add up to totals")
            return found
        sketch, heavy = self._sketch, self._heavy
        if sketch is None or heavy is None:
            return found + [("sketch" if sketch is None else "heavy") + ": exact, or both sketch and heavy, must be given"]
        if (sketch.width, sketch.depth, sketch.seed) != (self._width, self._depth, self.seed):
            return found + [f"sketch: expected (width, depth, seed) = {(self._width, self._depth, self.seed)} from the parameters"]
        if sketch.n_classes != n_classes:
            return found + [f"sketch.table: expected {n_classes} class columns (n_classes), got {sketch.n_classes}"]
        if heavy.capacity != self.top_k:
            found.append(f"heavy.capacity: expected top_k = {self.top_k}, got {heavy.capacity}")
        found += ["sketch." + problem for problem in sketch.problems()]
        found += ["heavy." + problem for problem in heavy.problems()]
        for value, slot in heavy._slots.items():  # a slot caches its value's cells in our sketch
            if len(slot.class_counts) > n_classes:
                found.append(f"heavy.class_counts: more class columns than n_classes = {n_classes}")
                break
            if _missing(value) or tuple(slot.cells) != sketch.cells(value):
                found.append(f"heavy.values: {value!r} is missing, or its cached cells are not its cells in the sketch")
                break
        # each row of the sketch holds every non-missing weight once
        per_row = sketch.counts.sum(axis=1)  # (depth, n_classes)
        if not all_close(per_row, np.asarray(self._totals)[None, :], 1e-9, 1e-9):
            found.append("sketch.table: every row of the sketch must hold the totals")
        return found

    # -- saved record (docs/saved-model.md) ---------------------------------------------------

    def record_state(self) -> dict:
        """The state fields of the record: the exact counts, or the count-min sketch and the
        heavy hitters (the sketch's width and depth are rebuilt from ``epsilon`` and ``delta``,
        each heavy hitter's cells from the sketch)."""
        n_classes = len(self._classes)
        exact = None
        if self._counts is not None:
            rows = list(self._counts.values())
            exact = {"values": list(self._counts), "counts": padded(rows, (len(rows), n_classes))}
        return {
            "classes": list(self._classes.labels),
            "missing": padded(self._missing, (n_classes,)),
            "totals": padded(self._totals, (n_classes,)),
            "exact": exact,
            "sketch": self._sketch,
            "heavy": self._heavy,
        }

    @classmethod
    def from_record(cls, fields: Fields) -> Categorical:
        """The summary a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        state = fields.state
        summary = cls(**fields.params)
        summary._classes = ClassIndex.of(state["classes"])
        summary._missing = state["missing"].tolist()
        summary._totals = state["totals"].tolist()
        exact = state["exact"]
        if exact is not None:
            summary._counts = dict(zip(exact["values"], exact["counts"].tolist()))
        else:
            summary._counts = None
        summary._sketch, summary._heavy = state["sketch"], state["heavy"]
        if exact is None and summary._sketch is not None and summary._heavy is not None:
            for value, slot in summary._heavy._slots.items():
                slot.cells = summary._sketch.cells(value)
        return summary


register(
    "Categorical",
    Categorical,
    Schema(
        params={
            "max_values": Int(doc="distinct values counted exactly"),
            "top_k": Int(doc="heavy hitters kept in sketch mode"),
            "epsilon": Float(doc="count-min accuracy ε"),
            "delta": Float(doc="count-min failure probability δ"),
            "seed": Int(doc="key of the stable hash"),
        },
        state={
            "classes": CLASSES,
            "missing": Array("float64", ("n_classes",), low=0.0, doc="weight of missing values per class"),
            "totals": Array("float64", ("n_classes",), low=0.0, doc="weight of the non-missing values per class"),
            "exact": Optional(
                Struct(
                    {
                        "values": Keys(length="n_values", doc="values in order of first appearance"),
                        "counts": Array("float64", ("n_values", "n_classes"), low=0.0, doc="class counts of each value"),
                    }
                ),
                doc="exact mode: values and their class counts; null in sketch mode",
            ),
            "sketch": Optional(Record("CountMinSketch"), doc="sketch mode: the count-min sketch"),
            "heavy": Optional(Record("SpaceSaving"), doc="sketch mode: the heavy hitters"),
        },
        doc="Per-class counts of category values, exact then sketched",
    ),
    state=Categorical.record_state,
    build=Categorical.from_record,
)


def _factorize_present(array: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    """``_factorize`` of the non-missing values: ``(uniques, codes (p,), missing (n,) bool)``."""
    n = len(array)
    if array.dtype.kind == "f":
        missing = np.isnan(array)
        uniques, value_codes = _factorize(array[~missing])
        return uniques, value_codes, missing
    # factorise first, then test only the distinct values for missingness
    uniques, value_codes = _factorize(array)
    missing = np.zeros(n, dtype=bool)
    if array.dtype.kind == "O" and uniques:
        dropped = np.fromiter((_missing(value) for value in uniques), dtype=bool, count=len(uniques))
        if dropped.any():
            missing = dropped[value_codes]
            kept = np.flatnonzero(~dropped)
            recode = np.full(len(uniques), -1, dtype=np.intp)
            recode[kept] = np.arange(len(kept))
            uniques = [uniques[i] for i in kept.tolist()]
            value_codes = recode[value_codes[~missing]]
    return uniques, value_codes, missing


def _factorize(array: np.ndarray) -> tuple[list, np.ndarray]:
    """Distinct values in order of first appearance (as Python objects) and the ``(n,)`` codes.

    Numeric and boolean arrays use ``np.unique``; object and string arrays a dict, measured ~6x
    faster than ``np.unique`` on object arrays of strings (which compares Python objects to sort).
    """
    if not len(array):
        return [], np.zeros(0, dtype=np.intp)
    if array.dtype.kind in "biuf":
        uniques, first, inverse = np.unique(array, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.intp)
        rank[order] = np.arange(len(order))
        return uniques[order].tolist(), rank[inverse.reshape(-1)]
    position: dict = {}
    try:
        codes = [position.setdefault(value, len(position)) for value in array.tolist()]
    except TypeError:
        unhashable = next(value for value in array.tolist() if not _hashable(value))
        raise unhashable_category(unhashable) from None
    uniques = [value.item() if isinstance(value, np.generic) else value for value in position]
    return uniques, np.array(codes, dtype=np.intp)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _copy_categorical(summary: Categorical) -> Categorical:
    clone = summary.clone()
    clone._classes.__setstate__(summary._classes.__getstate__())
    clone._missing = list(summary._missing)
    clone._totals = list(summary._totals)
    if summary._counts is not None:
        clone._counts = {value: list(row) for value, row in summary._counts.items()}
    else:
        clone._counts = None
        clone._sketch = summary._sketch.copy()
        clone._heavy = summary._heavy.copy()
    return clone
