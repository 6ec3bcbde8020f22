"""Records of the engine's parts: ``Variable``, ``Classes``, ``Registry``, ``History``, ``Schedule``.

What each holds (``docs/saved-model.md``, "The engine and the classifier"):

- ``Variable``: the feature's name and kind, its summary, and its level 2 as of its last
  rebuild: the partition (or the Gaussian density and the partition of its virtual bins), its
  Level and prior cost, and the locator compiled from the partition (cut points, first and
  missing part; the value → part dict and the unseen values' part of a categorical variable).
  ``log_prob`` is the partition's table, rebuilt.
- ``Classes``: labels, weighted counts, examples per class, per-class rebuild thresholds.
- ``Registry``: the variables in index order and their per-variable columns (observations,
  rebuild threshold, feed clock). The history columns and the name index follow from the order.
- ``History``: the raw rows of the window in ring order, the ring's cursor and the number of
  rows ever stored. The encoded block ``log_lik`` is not saved: it is a function of the raw rows
  and the current level 2 (``Engine.reencode_all`` rebuilds it, bit for bit).
- ``Schedule``: the rebuild countdown and the learner's step counters.
- ``Monitor``: the change detector's buckets of recent errors.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.history import SparseHistory
from ..engine.slots import Slots
from ..engine.variable import NOWHERE, Scorer, Variable
from ..modl.partition import MISSING, STAR
from .errors import join
from .registry import Record, register
from .schema import Array, Bool, Fields, Float, Int, Key, Keys, Optional, Schema, Str, Struct

__all__: list[str] = []

_SUMMARIES = ("GKClass", "CPiD", "Gaussian", "Categorical")

# ------------------------------------------------------------------------------------------------
# Variable

_LOCATOR = Struct(
    {
        "cuts": Array("float64", ("n_cuts",), increasing=True, doc="cut points between consecutive parts (numeric)"),
        "first_part": Int(low=NOWHERE, doc="part of the first interval (−1: none)"),
        "missing_part": Int(low=NOWHERE, doc="part of missing values (−1: none)"),
        "values": Keys(length="n_values", doc="category values kept when it was built (categorical)"),
        "parts": Array("int64", ("n_values",), low=0, doc="their parts"),
        "star_part": Int(low=NOWHERE, doc="part of values not kept (categorical; −1: none)"),
    },
    doc="the locator compiled from the partition",
)


def _variable_state(v: Variable) -> dict:
    binned = v.log_prob is not None
    return {
        "name": v.name,
        "kind": v.kind,
        "summary": v.summary,
        "partition": v.model,
        "density": v._density,
        "level": v.level,
        "prior_cost": v.prior_cost,
        "locator": {
            "cuts": np.asarray(v.cuts, dtype=float),
            "first_part": v.first_part,
            "missing_part": v.missing_part,
            "values": list(v._groups),
            "parts": np.array(list(v._groups.values()), dtype=np.int64),
            "star_part": v._star_part,
        }
        if binned
        else None,
    }


def _variable_check(fields: Fields) -> None:
    s = fields.state
    density = s["summary"].__class__.__name__ == "Gaussian"
    if s["kind"] == "categorical" and s["summary"].kind != "categorical":
        fields.fail("summary", f"a categorical variable needs a categorical summary, got {type(s['summary']).__name__}")
    if s["kind"] == "numeric" and s["summary"].kind != "numeric":
        fields.fail("summary", f"a numeric variable needs a numeric summary, got {type(s['summary']).__name__}")
    if s["density"] is not None and not density:
        fields.fail("density", "only a Gaussian summary has a density")
    _level2_check(fields, density)


def _level2_check(fields: Fields, density: bool) -> None:
    """Level 2 of a variable scored by a ``density`` or by parts: partition, Level, locator."""
    s = fields.state
    if density and s["kind"] != "numeric":
        fields.fail("density", "only a numeric variable is scored by a density")
    locator, partition = s["locator"], s["partition"]
    if partition is not None:
        kind_of_partition = "numeric" if type(partition).__name__ == "Intervals" else "categorical"
        if kind_of_partition != s["kind"]:
            fields.fail("partition", f"a {s['kind']} variable cannot hold a {type(partition).__name__}")
        # Variable.rebuild copies the partition's Level and prior cost
        if s["level"] != partition.level or s["prior_cost"] != partition.prior_cost:
            fields.fail("level", f"level and prior_cost must be the partition's ({partition.level!r}, {partition.prior_cost!r})")
    elif s["level"] != 0.0:
        fields.fail("level", "must be 0 before level 2 is built")
    if density:
        if locator is not None:
            fields.fail("locator", "a density-scored variable has no locator")
        if s["density"] is None and partition is not None:
            fields.fail("density", "a Gaussian variable with a partition of its virtual bins has its density")
        return
    if (locator is None) != (partition is None):
        fields.fail("locator", "must be given exactly when the partition is")
    if partition is None:
        return
    n_parts = len(np.asarray(partition.log_prob))
    for name in ("first_part", "missing_part", "star_part"):
        if locator[name] >= n_parts:
            fields.fail(f"locator.{name}", f"must be < n_parts = {n_parts}, got {locator[name]}")
    if len(locator["parts"]) and int(locator["parts"].max()) >= n_parts:
        fields.fail("locator.parts", f"values must be < n_parts = {n_parts}")
    if locator["first_part"] != NOWHERE and locator["first_part"] + len(locator["cuts"]) >= n_parts:
        # a finite value lands in part first_part + (number of cuts below it)
        fields.fail("locator.cuts", f"first_part + n_cuts must be < n_parts = {n_parts}")
    _locator_matches(fields, locator, partition)


def _locator_matches(fields: Fields, locator: dict, partition) -> None:
    """The locator is compiled from the partition (``Variable._compile_locator``): it must send
    every value where the partition does, or predictions would silently differ from level 2."""
    if locator["missing_part"] != partition.missing_part:
        fields.fail("locator.missing_part", f"must be the partition's missing_part = {partition.missing_part}")
    if type(partition).__name__ == "Intervals":
        # the cuts are the intervals' right bounds but the last; finite values start after the
        # missing values' own part when they have one
        if not np.array_equal(locator["cuts"], partition.upper_bounds[:-1]):
            fields.fail("locator.cuts", "must be the partition's upper bounds but the last")
        if locator["first_part"] != partition.n_parts - partition.n_intervals:
            fields.fail("locator.first_part", f"must be {partition.n_parts - partition.n_intervals} for this partition")
        if locator["values"] or locator["star_part"] != NOWHERE:
            fields.fail("locator.values", "a numeric variable has no category values")
        return
    if len(locator["cuts"]) or locator["first_part"] != NOWHERE:
        fields.fail("locator.cuts", "a categorical variable has no cut points")
    if locator["star_part"] != partition.star_part:
        fields.fail("locator.star_part", f"must be the partition's star_part = {partition.star_part}")
    values = np.empty(len(locator["values"]), dtype=object)
    values[:] = locator["values"]
    expected = partition.part_index(values) if len(values) else np.zeros(0, dtype=np.intp)
    if not np.array_equal(expected, locator["parts"]):
        i = int(np.flatnonzero(expected != locator["parts"])[0])
        fields.fail(join("locator.values", i), f"{values[i]!r} is in part {int(expected[i])} of the partition, not {int(locator['parts'][i])}")
    kept = set(locator["values"])
    for part, members in enumerate(partition.groups):
        for value in members:
            if value is not STAR and value is not MISSING and value not in kept:
                fields.fail("locator.values", f"{value!r} of group {part} is missing")


def _variable_build(fields: Fields) -> Variable:
    s = fields.state
    return _with_level2(Variable(s["name"], s["kind"], s["summary"]), s)


def _with_level2(v: Variable, s: dict) -> Variable:
    v.model = s["partition"]
    v._density = s["density"]
    v.level = float(s["level"])
    v.prior_cost = float(s["prior_cost"])
    locator = s["locator"]
    if locator is not None:
        v.log_prob = np.asarray(v.model.log_prob, dtype=float)
        v.n_parts = v.log_prob.shape[0]
        v.cuts = locator["cuts"].tolist()
        v.first_part = int(locator["first_part"])
        v.missing_part = int(locator["missing_part"])
        v._groups = dict(zip(locator["values"], locator["parts"].tolist()))
        v._star_part = int(locator["star_part"])
    return v


_VARIABLE_SCHEMA = Schema(
        state={
            "name": Key(doc="the feature name"),
            "kind": Str(choices=("numeric", "categorical"), doc="numeric or categorical"),
            "summary": Record(*_SUMMARIES, doc="level 1: the variable's summary"),
            "partition": Optional(Record("Intervals", "Groups"), doc="level 2 as of the last rebuild (null: not built yet; with `absent` set, a rare variable's rebuild proven to give the null model is skipped, so it may never be built); for a Gaussian summary, the partition of its virtual bins"),
            "density": Optional(Record("GaussianDensity"), doc="the per-class Gaussians of the last rebuild (Gaussian summaries)"),
            "level": Float(low=0.0, below=1.0, doc="MODL Level of the last rebuild (0: none)"),
            "prior_cost": Float(low=0.0, doc="B(X): the variable's MODL prior cost"),
            "locator": Optional(_LOCATOR, doc="null for density-scored or not-yet-built variables"),
        },
        checks=(_variable_check,),
        doc="One feature: summary, level 2 and locator",
    )
register("Variable", Variable, _VARIABLE_SCHEMA, state=_variable_state, build=_variable_build)


def _scorer_state(v: Scorer) -> dict:
    state = _variable_state(v)
    del state["summary"]
    return {"name": state.pop("name"), "kind": state.pop("kind"), "density_scored": v.density, **state}


def _scorer_build(fields: Fields) -> Scorer:
    s = fields.state
    v = Scorer.__new__(Scorer)
    Variable.__init__(v, s["name"], s["kind"], None)
    v.summary, v.density = None, bool(s["density_scored"])
    return _with_level2(v, s)


_VARIABLE_STATE = {k: kind for k, kind in _VARIABLE_SCHEMA.state.items() if k != "summary"}
register(
    "Scorer",
    Scorer,
    Schema(
        state={
            "name": _VARIABLE_STATE["name"],
            "kind": _VARIABLE_STATE["kind"],
            "density_scored": Bool(doc="scored by per-class Gaussians (a Gaussian summary), not by parts"),
            **{k: kind for k, kind in _VARIABLE_STATE.items() if k not in ("name", "kind")},
        },
        checks=(lambda fields: _level2_check(fields, fields.state["density_scored"]),),
        doc="One variable's level 2 and locator without its summary (a Predictor's variables)",
    ),
    state=_scorer_state,
    build=_scorer_build,
)


# ------------------------------------------------------------------------------------------------
# History

def _history_state(h: SparseHistory) -> dict:
    """The rows in use as entries (``WeightedNaiveBayes``'s record saves a dense window in this
    layout: ``SparseHistory.of``)."""
    rows = h.filled()
    r, variable, column, value = h.rows_entries(rows)
    order = np.lexsort((variable, r))  # row by row, variables increasing: one file for one window
    r, variable, column, value = r[order], variable[order], column[order], value[order]
    missing = np.isnan(value)
    return {
        "size": h.size,
        "cursor": h.cursor,
        "stored": h.stored,
        "n_variables": h.n_variables,
        "n_numeric": h.n_numeric,
        "entries": np.bincount(r, minlength=h.size).astype(np.int64),
        "variable": variable.astype(np.int64),
        "column": column.astype(np.int64),
        "value": np.where(missing, 0.0, value),
        "missing": missing & (column >= 0),
        "categorical": h.categorical[rows, : h.n_categorical],
        "y": h.y[rows].astype(np.int64),
        "sample_weight": h.sample_weight[rows],
    }


def _history_check(fields: Fields) -> None:
    s, capacity = fields.state, fields.params["capacity"]
    if s["size"] > capacity:
        fields.fail("size", f"must be <= capacity = {capacity}, got {s['size']}")
    if s["cursor"] >= capacity or (s["size"] < capacity and s["cursor"] != s["size"]):
        fields.fail("cursor", f"does not fit a ring of {capacity} rows holding {s['size']}")
    if s["stored"] < s["size"]:
        fields.fail("stored", "cannot be below size")
    entries, variable, column = s["entries"], s["variable"], s["column"]
    if int(entries.sum()) != len(variable):
        fields.fail("entries", f"must add up to the {len(variable)} entries, got {int(entries.sum())}")
    row = np.repeat(np.arange(len(entries)), entries)
    if len(np.unique(row * max(1, s["n_variables"]) + variable)) != len(variable):
        fields.fail("variable", "a row holds a variable twice")
    categorical = column < 0
    if np.any(s["value"][categorical] != 0.0) or np.any(s["missing"][categorical]):
        fields.fail("value", "a categorical variable's entry (column −1) holds 0 and is not missing (its value is in categorical)")


def _history_build(fields: Fields) -> SparseHistory:
    s = fields.state
    h = SparseHistory(fields.params["capacity"])
    n_categorical = s["categorical"].shape[1]
    h.resize(s["n_variables"], 0, s["n_numeric"], n_categorical, n_encoded=0)  # (the model sizes the encoding: its slots)
    n = s["size"]
    row = np.repeat(np.arange(n), s["entries"])
    value = np.where(s["missing"], np.nan, s["value"])
    value[s["column"] < 0] = np.nan  # (a categorical entry's value is in the categorical block)
    h._push_entries(row, (s["variable"].astype(np.intp), s["column"].astype(np.intp), value),
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
        checks=(_history_check,),
        doc="The window of raw rows, as each row's entries (the encoded block is rebuilt on load)",
    ),
    state=_history_state,
    build=_history_build,
)


# ------------------------------------------------------------------------------------------------
# Across the parts of one model (``WeightedNaiveBayes``'s record calls this before it builds)


def check_parts(fields: Fields, classes, registry, history, schedule, learner, slots: Slots, faded: bool = False) -> None:
    """The invariants that tie a model's loaded parts together (``fields.fail`` on the first broken).

    ``faded``: the model fades its past (``half_life``), so its class counts shrink while a
    partition keeps the weight of its last rebuild, which may then exceed them."""
    K, J = len(registry), len(classes)
    if len(slots.of) != K:
        fields.fail("slots.n_variables", f"must be the model's number of variables ({K})")
    missing = np.setdiff1d(registry.informative(), slots.variable).tolist()
    if missing:
        fields.fail("slots", f"variable {missing[0]} ({registry.variables[missing[0]].name!r}) has a level 2 that is not flat and no slot")
    if history.n_variables != K or history.n_numeric != registry.n_numeric or history.n_categorical != registry.n_categorical:
        fields.fail("history", f"its columns do not match the {K} variables")
    if history.size and int(history.y[: history.size].max()) >= J:
        fields.fail("history.y", f"values must be < n_classes = {J}")
    if history.stored and len(classes) == 0:
        fields.fail("classes", "a model that stored rows has classes")
    if np.any(registry.synced > history.stored) or np.any(registry.synced < history.stored - history.size):
        fields.fail("registry.synced", f"must lie in [stored − size, stored] = [{history.stored - history.size}, {history.stored}]")
    if not history.size <= float(classes.seen.sum()) <= history.stored:
        fields.fail(
            "classes.seen",
            f"must add up to between the rows held and the rows stored, [{history.size}, {history.stored}]"
            " (every example learned is stored once; a change forgets the older ones)",
        )
    # The engine sizes its learner for (slots, J) at every row learned: a loaded model starts so.
    size = _learner_size(learner)
    if size is not None and size != (len(slots), J):
        fields.fail("learner", f"is sized for {size[0]} variables and {size[1]} classes, the model has {len(slots)} slots and {J} classes")
    if K and not schedule.quiet <= max(0, math.ceil(np.min(registry.next_rebuild - registry.count))):
        fields.fail("schedule.quiet", "a rebuild would fall due during the countdown")
    labels = list(classes.labels)
    known = set(labels)
    for k, variable in enumerate(registry.variables):
        where = f"registry.variables[{k}]"
        if not set(variable.summary.classes) <= known:
            fields.fail(f"{where}.summary.classes", "holds a class the model has not seen")
        for part, name in ((variable.model, "partition"), (variable._density, "density")):
            # level 2 is built with the class axis in the model's order (the classes of its time)
            if part is not None and list(part.classes) != labels[: len(part.classes)]:
                fields.fail(f"{where}.{name}.classes", "must be the model's classes (or the first of them), in its order")
        if variable.model is not None and not faded:
            # a partition holds the weight of the summary at its rebuild: never more than the class had
            weight = np.asarray(variable.model.counts).sum(axis=0)
            if np.any(weight > classes.counts[: len(weight)] * (1.0 + 1e-6) + 1e-9):
                fields.fail(f"{where}.partition.counts", "hold more weight of a class than the model has learned")
    _check_presence(fields, registry, history)


def _learner_size(learner) -> tuple[int, int] | None:
    """(K, J) a learner is sized for, or None when it keeps no size."""
    if hasattr(learner, "_n_variables"):
        return (learner._n_variables, learner._n_classes)
    if getattr(learner, "_ready", False):
        return tuple(learner._w.shape)
    return (0, 0)


def _check_presence(fields: Fields, registry, history) -> None:
    """A history entry's column is its variable's (−1 for a categorical one), and a categorical
    value stands only in a row that holds its feature (``History.push`` clears the row)."""
    rows = history.filled()
    r, variable, column, _ = history.rows_entries(rows)
    numeric = np.array([v.kind == "numeric" for v in registry.variables], dtype=bool)
    expected = np.where(numeric[variable], registry.column[variable], -1)
    if np.any(column != expected):
        i = int(np.flatnonzero(column != expected)[0])
        k = int(variable[i])
        fields.fail("history.column", f"an entry of feature {registry.variables[k].name!r} (variable {k}) is not in its column {int(expected[i])}")
    categorical = ~numeric[variable]
    held = np.zeros((history.size, registry.n_categorical), dtype=bool)  # (rows, categorical columns)
    held[r[categorical], registry.column[variable[categorical]]] = True
    stray = np.array([value is not None for value in history.categorical[rows, : registry.n_categorical][~held].tolist()], dtype=bool)
    if stray.any():
        c = int(np.nonzero(~held)[1][np.flatnonzero(stray)[0]])
        k = int(np.flatnonzero(~numeric & (registry.column == c))[0])
        fields.fail("history.categorical", f"a row lacks feature {registry.variables[k].name!r} (variable {k}) but holds a value of it")
