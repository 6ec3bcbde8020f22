"""Records of level 1: class labels, the four summaries, the sketches and the Gaussian density.

Each record holds what its object needs to predict and to keep learning exactly as before (the
same arrays, bit for bit, after any further stream), and nothing it can rebuild:

- ``ClassIndex``: the labels in order; the label → column dict is rebuilt.
- ``GKClass``: the tuples ``(v, g, Δ, e, c)``, the maintained ε (``merge`` may raise it), the
  flushed weight, the missing counts and the pending buffer (flushing it at save time would move
  the later flush points, hence the tuples); the buffer limit is rebuilt from ``buffer_size``.
- ``CPiD``: the warm-up buffer or the intervals (breaks, counts, class counts), the totals and the
  grid step; ``alpha``'s default is rebuilt from ``n_bins``.
- ``Gaussian``: per-class weights, means, M2 and missing counts (the pooled moments are derived
  from them, so the file does not hold them: version 6).
- ``Categorical``: the exact counts, or the count-min sketch and the SpaceSaving heavy hitters;
  the sketch width and depth are rebuilt from ``epsilon`` and ``delta``, each heavy hitter's
  count-min cells (a cache of its hash) from the sketch.
- ``CountMinSketch``: the table; the hash keys and row offsets are rebuilt from the parameters.
- ``SpaceSaving``: the slots in monitoring order and the lazy heap as it stands (its stale counts
  and sequence numbers decide ties between equal counts, so rebuilding it would change later
  evictions).
- ``GaussianDensity``: the smoothed means and variances (state: a snapshot of the summary at the
  last level-2 rebuild, which the summary has moved on from); the log normalisers and inverse
  deviations are rebuilt.

Class-count rows that a summary pads lazily (a class registered after the row was made) are
saved padded with zeros to the number of classes: the summaries treat a short row as zero-padded,
so nothing they compute changes.
"""

from __future__ import annotations

import array
import math

import numpy as np

from ..summaries.base import all_close
from ..summaries.categorical import Categorical
from ..summaries.cpid import CPiD
from ..summaries.gaussian import Gaussian, GaussianDensity
from ..summaries.gk import DEFAULT_BUFFER_SIZE, GKClass
from ..summaries.sketch import CountMinSketch, Slot, SpaceSaving
from ..tables import ClassIndex, Moments
from .registry import Record, register
from .schema import Array, Bool, Fields, Float, Int, Keys, Optional, Schema, Str, Struct

__all__ = ["class_index", "CLASSES"]

#: The class labels field shared by the summaries' records: binds ``n_classes``.
CLASSES = Keys(length="n_classes", doc="class labels in order of first appearance (column order)")


def class_index(labels: list) -> ClassIndex:
    """A ``ClassIndex`` holding ``labels`` (distinct) in this order."""
    index = ClassIndex()
    for label in labels:
        index.encode(label)
    return index


def _padded(values, shape: tuple) -> np.ndarray:
    """``values`` (a list, list of rows or array, maybe shorter on its last axis) zero-padded to ``shape``."""
    out = np.zeros(shape)
    if len(shape) == 1:
        source = np.asarray(values, dtype=float).reshape(-1)
        out[: len(source)] = source
        return out
    for i, row in enumerate(values):
        row = np.asarray(row, dtype=float).reshape(-1)
        out[i, : len(row)] = row
    return out


def _counts(name: str, doc: str) -> Array:
    return Array("float64", (name,), low=0.0, doc=doc)


def _close(found, expected, rtol: float, atol: float) -> bool:
    """``np.allclose`` of two arrays or numbers (the tolerance of the ``_check()`` it mirrors)."""
    return all_close(found, expected, rtol, atol)


def _isclose(a: float, b: float, rel_tol: float, abs_tol: float) -> bool:
    return math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=abs_tol)


# ------------------------------------------------------------------------------------------------
# ClassIndex

register(
    "ClassIndex",
    ClassIndex,
    Schema(state={"labels": Keys(length="n_classes", doc="class labels, column i is labels[i]")}, doc="Class labels"),
    state=lambda index: {"labels": list(index.labels)},
    build=lambda fields: class_index(fields.state["labels"]),
)


# ------------------------------------------------------------------------------------------------
# GKClass


def _gk_state(gk: GKClass) -> dict:
    n_tuples, n_classes = len(gk._values), len(gk._classes)
    return {
        "classes": list(gk._classes.labels),
        "guaranteed_epsilon": gk._epsilon,
        "values": gk._values,
        "g": gk._g,
        "delta": gk._delta,
        "at_value": gk._at_value,
        "counts": _padded(gk._counts, (n_tuples, n_classes)),
        "weight": gk._weight,
        "missing": _padded(gk._missing, (n_classes,)),
        "buffer_values": np.array(gk._buffer_values, dtype=np.float64),
        "buffer_classes": np.array(gk._buffer_classes, dtype=np.int64),
        "buffer_weights": np.array(gk._buffer_weights, dtype=np.float64),
    }


def _gk_check(fields: Fields) -> None:
    params, state = fields.params, fields.state
    if (state["guaranteed_epsilon"] is None) != (params["max_tuples"] is not None):
        fields.fail("guaranteed_epsilon", "must be null exactly when max_tuples is set (budget mode)")
    limit = params["buffer_size"] if params["buffer_size"] is not None else DEFAULT_BUFFER_SIZE
    if fields.scope["n_buffered"] >= limit:
        fields.fail("buffer_values", f"holds {fields.scope['n_buffered']} values, the buffer flushes at {limit}")
    # The invariants of GKClass._check() (docs/design-notes.md), checked here so that they hold
    # under ``python -O`` too: the compiled kernels merge and compress these tuples.
    v, g, delta, e, counts, weight = (state[k] for k in ("values", "g", "delta", "at_value", "counts", "weight"))
    if not len(v):
        if weight != 0.0:
            fields.fail("weight", f"must be 0 without tuples, got {weight!r}")
        return
    tolerance = 1e-9 * max(1.0, weight)
    if (g <= 0.0).any():
        fields.fail("g", "every tuple carries weight (g > 0)")
    if (e <= 0.0).any() or (e > g + tolerance).any():
        fields.fail("at_value", "must lie in (0, g] (the weight at a value is part of its tuple's)")
    if (counts < -tolerance).any():
        fields.fail("counts", "class counts must be >= 0")
    if not _close(counts.sum(axis=1), g, 1e-9, tolerance):
        fields.fail("counts", "the class counts of a tuple must add up to its g (Σ_j c_ij = g_i)")
    if abs(float(g.sum()) - weight) > tolerance:
        fields.fail("weight", f"must be Σ g = {float(g.sum())!r}, got {weight!r}")
    if delta[0] != 0.0 or delta[-1] != 0.0:
        fields.fail("delta", "the first and last tuples (the minimum and maximum) are exact (Δ = 0)")
    if abs(float(g[0]) - float(e[0])) > tolerance:
        fields.fail("at_value", "nothing merges into the minimum (g_0 = e_0)")
    epsilon = state["guaranteed_epsilon"]
    if epsilon is not None:
        if (g + delta - e > 2.0 * float(epsilon) * weight + tolerance).any():
            fields.fail("delta", "breaks the ε-invariant g + Δ − e <= 2εn")
    elif len(v) > params["max_tuples"]:
        fields.fail("values", f"holds {len(v)} tuples, the budget is max_tuples = {params['max_tuples']}")


def _gk_build(fields: Fields) -> GKClass:
    state = fields.state
    gk = GKClass(**fields.params)
    gk._classes = class_index(state["classes"])
    gk._epsilon = None if state["guaranteed_epsilon"] is None else float(state["guaranteed_epsilon"])
    gk._values, gk._g, gk._delta, gk._at_value = (state[k] for k in ("values", "g", "delta", "at_value"))
    gk._counts = state["counts"]
    gk._weight = float(state["weight"])
    gk._missing = state["missing"]
    gk._buffer_values = array.array("d", state["buffer_values"].tobytes())
    gk._buffer_classes = array.array("q", state["buffer_classes"].tobytes())
    gk._buffer_weights = array.array("d", state["buffer_weights"].tobytes())
    return gk


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
            "missing": _counts("n_classes", "weight of missing values per class"),
            "buffer_values": Array("float64", ("n_buffered",), doc="pending values, in arrival order"),
            "buffer_classes": Array("int64", ("n_buffered",), low=0, below="n_classes", doc="their class columns"),
            "buffer_weights": Array("float64", ("n_buffered",), above=0.0, doc="their weights"),
        },
        checks=(_gk_check,),
        doc="Greenwald–Khanna summary with class counts",
    ),
    state=_gk_state,
    build=_gk_build,
)


# ------------------------------------------------------------------------------------------------
# CPiD


def _cpid_state(summary: CPiD) -> dict:
    n_classes = len(summary._classes)
    buffered = summary._buffer
    return {
        "classes": list(summary._classes.labels),
        "missing": _padded(summary._missing, (n_classes,)),
        "buffer_values": np.array([x for x, _, _ in buffered], dtype=np.float64),
        "buffer_classes": np.array([j for _, j, _ in buffered], dtype=np.int64),
        "buffer_weights": np.array([w for _, _, w in buffered], dtype=np.float64),
        "started": summary._started,
        "breaks": np.array(summary._breaks, dtype=np.float64),
        "counts": np.array(summary._counts, dtype=np.float64),
        "class_counts": _padded(summary._class_counts, (len(summary._counts), n_classes)),
        "total": summary._total,
        "step": summary._step,
        "min_split_width": summary._min_split_width,
        "min_seen": summary._min_seen,
        "max_seen": summary._max_seen,
    }


def _cpid_check(fields: Fields) -> None:
    n_bins, scope = fields.params["n_bins"], fields.scope
    if fields.state["started"]:
        if scope["n_breaks"] != n_bins - 1:
            fields.fail("breaks", f"expected {n_bins - 1} breaks (n_bins - 1) once started, got {scope['n_breaks']}")
        if scope["n_intervals"] != n_bins:
            fields.fail("counts", f"expected {n_bins} intervals (n_bins) once started, got {scope['n_intervals']}")
        if scope["n_buffered"]:
            fields.fail("buffer_values", "must be empty once started")
    else:
        if scope["n_breaks"] or scope["n_intervals"]:
            fields.fail("breaks", "must be empty during the warm-up")
        if scope["n_buffered"] >= fields.params["warm_up"]:
            fields.fail("buffer_values", f"holds {scope['n_buffered']} values, the warm-up ends at {fields.params['warm_up']}")
    _cpid_sums(fields)


def _cpid_sums(fields: Fields) -> None:
    """CPiD._check(): the buffer's weights, or each interval's class counts, add up to the totals."""
    state = fields.state
    total = float(state["total"])
    if not state["started"]:
        if not _isclose(total, math.fsum(state["buffer_weights"].tolist()), 1e-12, 1e-12):
            fields.fail("total", "must be the weight of the buffered values during the warm-up")
        return
    scale = max(1.0, total)
    counts, class_counts = state["counts"], state["class_counts"]
    if np.any(class_counts < -1e-12 * scale):
        fields.fail("class_counts", "class counts must be >= 0")
    for i, (count, row) in enumerate(zip(counts.tolist(), class_counts.tolist())):
        if not _isclose(count, math.fsum(row), 1e-9, 1e-9 * scale):
            fields.fail("class_counts", f"the class counts of interval {i} do not add up to its count {count!r}")
    if not _isclose(math.fsum(counts.tolist()), total, 1e-9, 1e-9):
        fields.fail("counts", f"must add up to total = {total!r}")
    if total > 0 and not state["min_seen"] <= state["max_seen"]:
        fields.fail("min_seen", "must be <= max_seen once values were seen")


def _cpid_build(fields: Fields) -> CPiD:
    state = fields.state
    summary = CPiD(**fields.params)
    summary._classes = class_index(state["classes"])
    summary._missing = state["missing"].tolist()
    summary._buffer = list(
        zip(state["buffer_values"].tolist(), state["buffer_classes"].tolist(), state["buffer_weights"].tolist())
    )
    summary._started = state["started"]
    summary._breaks = state["breaks"].tolist()
    summary._counts = state["counts"].tolist()
    summary._class_counts = state["class_counts"].tolist()
    for name in ("total", "step", "min_split_width", "min_seen", "max_seen"):
        setattr(summary, "_" + name, float(state[name]))
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
            "missing": _counts("n_classes", "weight of missing values per class"),
            "buffer_values": Array("float64", ("n_buffered",), doc="warm-up values, in arrival order"),
            "buffer_classes": Array("int64", ("n_buffered",), low=0, below="n_classes", doc="their class columns"),
            "buffer_weights": Array("float64", ("n_buffered",), low=0.0, doc="their weights"),
            "started": Bool(doc="the warm-up is over (the grid exists)"),
            "breaks": Array("float64", ("n_breaks",), increasing=True, doc="breaks b_1 < … < b_{m−1} (empty in the warm-up)"),
            "counts": _counts("n_intervals", "total count of each interval (empty in the warm-up)"),
            "class_counts": Array("float64", ("n_intervals", "n_classes"), doc="class counts of each interval"),
            "total": Float(low=0.0, doc="weight of the non-missing values N"),
            "step": Float(low=0.0, doc="width of the initial grid's intervals"),
            "min_split_width": Float(low=0.0, doc="inner intervals narrower than this never split"),
            "min_seen": Float(finite=False, doc="smallest value seen (+inf before any)"),
            "max_seen": Float(finite=False, doc="largest value seen (−inf before any)"),
        },
        checks=(_cpid_check,),
        doc="Constant-memory PiD histogram with class counts",
    ),
    state=_cpid_state,
    build=_cpid_build,
)


# ------------------------------------------------------------------------------------------------
# Gaussian

_GAUSSIAN_LISTS = ("weights", "means", "m2", "missing")


def _gaussian_check(fields: Fields) -> None:
    """Gaussian._check(): M2 >= 0 up to rounding."""
    if np.any(fields.state["m2"] < -1e-9 * np.maximum(1.0, np.abs(fields.state["m2"]))):
        fields.fail("m2", "sums of squared deviations must be >= 0")


def _gaussian_build(fields: Fields) -> Gaussian:
    state = fields.state
    summary = Gaussian()
    summary._classes = class_index(state["classes"])
    summary._weights, summary._means, summary._m2, summary._missing = (state[k].tolist() for k in _GAUSSIAN_LISTS)
    return summary


register(
    "Gaussian",
    Gaussian,
    Schema(
        state={
            "classes": CLASSES,
            "weights": _counts("n_classes", "total weight W_j of each class's non-missing values"),
            "means": Array("float64", ("n_classes",), finite=False, doc="weighted mean μ_j"),
            "m2": Array("float64", ("n_classes",), finite=False, doc="sum of squared deviations M2_j"),
            "missing": _counts("n_classes", "weight of missing values per class"),
        },
        checks=(_gaussian_check,),
        doc="Per-class Gaussian moments",
    ),
    state=lambda summary: {
        "classes": list(summary._classes.labels),
        **{k: np.array(getattr(summary, "_" + k), dtype=np.float64) for k in _GAUSSIAN_LISTS},
    },
    build=_gaussian_build,
)


# ------------------------------------------------------------------------------------------------
# CountMinSketch and SpaceSaving


def _sketch_check(fields: Fields) -> None:
    params = fields.params
    if params["width"] < 1 or params["depth"] < 1:
        fields.fail("width", "width and depth must be >= 1")
    if fields.scope["n_cells"] != params["width"] * params["depth"]:
        fields.fail("table", f"expected width · depth = {params['width'] * params['depth']} rows, got {fields.scope['n_cells']}")
    # every update adds its weight once per row: the rows hold the same class totals
    per_row = fields.state["table"].reshape(params["depth"], params["width"], -1).sum(axis=1)
    if not _close(per_row, per_row[0], 1e-9, 1e-9):
        fields.fail("table", "every row of the sketch must hold the same class totals")


def _sketch_build(fields: Fields) -> CountMinSketch:
    sketch = CountMinSketch(**fields.params)
    sketch.__setstate__({**fields.params, "table": fields.state["table"]})
    return sketch


register(
    "CountMinSketch",
    CountMinSketch,
    Schema(
        params={
            "width": Int(doc="cells per row (⌈e/ε⌉)"),
            "depth": Int(doc="rows (⌈ln 1/δ⌉)"),
            "seed": Int(doc="key of the stable hash, in [0, 2^64)"),
        },
        state={"table": Array("float64", ("n_cells", "n_classes"), low=0.0, doc="counters, row r·width + h_r(v), one column per class")},
        checks=(_sketch_check,),
        doc="Count-min sketch with per-class counters",
    ),
    state=lambda sketch: {"table": sketch._table},
    build=_sketch_build,
)


def _heavy_state(heavy: SpaceSaving) -> dict:
    values = list(heavy._slots)
    slots = list(heavy._slots.values())
    position = {value: i for i, value in enumerate(values)}
    width = max((len(slot.class_counts) for slot in slots), default=0)
    return {
        "values": values,
        "counts": np.array([slot.count for slot in slots], dtype=np.float64),
        "errors": np.array([slot.error for slot in slots], dtype=np.float64),
        "class_counts": _padded([slot.class_counts for slot in slots], (len(slots), width)),
        "heap_slots": np.array([position[value] for _, _, value in heavy._heap], dtype=np.int64),
        "heap_counts": np.array([count for count, _, _ in heavy._heap], dtype=np.float64),
        "heap_sequences": np.array([sequence for _, sequence, _ in heavy._heap], dtype=np.int64),
        "sequence": heavy._sequence,
    }


def _heavy_check(fields: Fields) -> None:
    state, n_slots = fields.state, fields.scope["n_slots"]
    if n_slots > fields.params["capacity"]:
        fields.fail("values", f"{n_slots} slots exceed the capacity {fields.params['capacity']}")
    if np.any(state["errors"] > state["counts"]):
        fields.fail("errors", "an error exceeds its count")
    # the class counts hold what the value received while monitored: count − error
    for i, (count, error, row) in enumerate(zip(state["counts"].tolist(), state["errors"].tolist(), state["class_counts"].tolist())):
        if not _isclose(math.fsum(row), count - error, 1e-9, 1e-9 * max(1.0, count)):
            fields.fail("class_counts", f"slot {i} received {math.fsum(row)!r}, its count − error is {count - error!r}")
    slots, counts, sequences = state["heap_slots"], state["heap_counts"], state["heap_sequences"]
    if len(np.unique(slots)) != n_slots:
        fields.fail("heap_slots", "must hold every slot once")
    if len(np.unique(sequences)) != n_slots or (n_slots and sequences.max() > state["sequence"]):
        fields.fail("heap_sequences", "must be distinct and at most sequence")
    if np.any(counts > state["counts"][slots]):
        fields.fail("heap_counts", "a heap entry is above its slot's count (counts only grow)")
    children = np.arange(1, n_slots)
    parents = (children - 1) // 2
    ordered = (counts[parents] < counts[children]) | (
        (counts[parents] == counts[children]) & (sequences[parents] < sequences[children])
    )
    if not ordered.all():
        fields.fail("heap_counts", f"not a min-heap at entry {int(children[~ordered][0])}")


def _heavy_build(fields: Fields) -> SpaceSaving:
    state = fields.state
    heavy = SpaceSaving(**fields.params)
    values = state["values"]
    rows = zip(state["counts"].tolist(), state["errors"].tolist(), state["class_counts"].tolist())
    # the count-min cells are the owner's cache: Categorical fills them from its sketch
    heavy._slots = {value: Slot(count, error, row, ()) for value, (count, error, row) in zip(values, rows)}
    heap = zip(state["heap_counts"].tolist(), state["heap_sequences"].tolist(), state["heap_slots"].tolist())
    heavy._heap = [(count, sequence, values[i]) for count, sequence, i in heap]
    heavy._sequence = state["sequence"]
    return heavy


register(
    "SpaceSaving",
    SpaceSaving,
    Schema(
        params={"capacity": Int(doc="most values monitored")},
        state={
            "values": Keys(length="n_slots", doc="monitored values, in monitoring order"),
            "counts": _counts("n_slots", "over-estimated weight of each value"),
            "errors": _counts("n_slots", "bound of each over-estimate"),
            "class_counts": Array("float64", ("n_slots", "n_columns"), low=0.0, doc="weight per class received while monitored"),
            "heap_slots": Array("int64", ("n_slots",), low=0, below="n_slots", doc="lazy min-heap, in heap order: the slot of each entry"),
            "heap_counts": _counts("n_slots", "the count each entry was pushed with"),
            "heap_sequences": Array("int64", ("n_slots",), low=1, doc="each entry's sequence number (breaks ties)"),
            "sequence": Int(low=0, doc="last sequence number given"),
        },
        checks=(_heavy_check,),
        doc="SpaceSaving heavy hitters with class counts",
    ),
    state=_heavy_state,
    build=_heavy_build,
)


# ------------------------------------------------------------------------------------------------
# Categorical


def _categorical_state(summary: Categorical) -> dict:
    n_classes = len(summary._classes)
    exact = None
    if summary._counts is not None:
        rows = list(summary._counts.values())
        exact = {"values": list(summary._counts), "counts": _padded(rows, (len(rows), n_classes))}
    return {
        "classes": list(summary._classes.labels),
        "missing": _padded(summary._missing, (n_classes,)),
        "totals": _padded(summary._totals, (n_classes,)),
        "exact": exact,
        "sketch": summary._sketch,
        "heavy": summary._heavy,
    }


def _categorical_check(fields: Fields) -> None:
    params, state, n_classes = fields.params, fields.state, fields.scope["n_classes"]
    sketch, heavy = state["sketch"], state["heavy"]
    if state["exact"] is not None:
        if sketch is not None or heavy is not None:
            fields.fail("sketch", "must be null in exact mode")
        if len(state["exact"]["values"]) > params["max_values"]:
            fields.fail("exact.values", f"{len(state['exact']['values'])} values exceed max_values {params['max_values']}")
        if not _close(state["exact"]["counts"].sum(axis=0), state["totals"], 1e-9, 1e-9):
            fields.fail("exact.counts", "the counts of the values must add up to totals")
        return
    if sketch is None or heavy is None:
        fields.fail("sketch" if sketch is None else "heavy", "exact, or both sketch and heavy, must be given")
    try:
        dimensions = CountMinSketch.dimensions(params["epsilon"], params["delta"])
    except ValueError as error:
        fields.fail("epsilon", str(error))
    if (sketch.width, sketch.depth, sketch.seed) != (*dimensions, params["seed"]):
        fields.fail("sketch", f"expected (width, depth, seed) = {(*dimensions, params['seed'])} from the parameters")
    if sketch.n_classes != n_classes:
        fields.fail("sketch.table", f"expected {n_classes} class columns (n_classes), got {sketch.n_classes}")
    if heavy.capacity != params["top_k"]:
        fields.fail("heavy.capacity", f"expected top_k = {params['top_k']}, got {heavy.capacity}")
    if any(len(slot.class_counts) > n_classes for slot in heavy._slots.values()):
        fields.fail("heavy.class_counts", f"more class columns than n_classes = {n_classes}")
    # each row of the sketch holds every non-missing weight once
    per_row = sketch.counts.sum(axis=1)  # (depth, n_classes)
    if not _close(per_row, state["totals"][None, :], 1e-9, 1e-9):
        fields.fail("sketch.table", "every row of the sketch must hold the totals")


def _categorical_build(fields: Fields) -> Categorical:
    state = fields.state
    summary = Categorical(**fields.params)
    summary._classes = class_index(state["classes"])
    summary._missing = state["missing"].tolist()
    summary._totals = state["totals"].tolist()
    if state["exact"] is not None:
        exact = state["exact"]
        summary._counts = dict(zip(exact["values"], exact["counts"].tolist()))
        return summary
    summary._counts = None
    summary._sketch, summary._heavy = state["sketch"], state["heavy"]
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
            "missing": _counts("n_classes", "weight of missing values per class"),
            "totals": _counts("n_classes", "weight of the non-missing values per class"),
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
        checks=(_categorical_check,),
        doc="Per-class counts of category values, exact then sketched",
    ),
    state=_categorical_state,
    build=_categorical_build,
)


# ------------------------------------------------------------------------------------------------
# GaussianDensity


def _density_build(fields: Fields) -> GaussianDensity:
    state = fields.state
    n_classes = len(state["classes"])
    # The density of a table whose smoothed parameters are exactly the saved ones: weights >= 2
    # (no pooled fallback) and no smoothing, so smoothed_parameters hands the saved means and
    # variances back unchanged (they are above their floor already); the constructor then
    # derives its normalisers from them as it did when the model was trained.
    moments = Moments(np.full(n_classes, 2.0), state["means"], state["variances"], tuple(state["classes"]), np.zeros(n_classes))
    density = GaussianDensity(moments, var_smoothing=0.0, max_variance=0.0)
    if not (np.array_equal(density.means, state["means"]) and np.array_equal(density.variances, state["variances"])):
        fields.fail("variances", "below the variance floor of their means (not the parameters of a density)")
    return density


register(
    "GaussianDensity",
    GaussianDensity,
    Schema(
        state={
            "classes": CLASSES,
            "means": Array("float64", ("n_classes",), finite=False, doc="smoothed mean of each class"),
            "variances": Array("float64", ("n_classes",), above=0.0, doc="floored variance of each class"),
        },
        doc="Class-conditional Gaussian log densities (a snapshot of the summary at the last rebuild)",
    ),
    state=lambda density: {"classes": list(density.classes), "means": density.means, "variances": density.variances},
    build=_density_build,
)
