"""The saved record of ``WeightedNaiveBayes`` (``docs/saved-model.md``, "The engine and the
classifier"): its schema, the state it holds, its checks and the model it builds.
``wnb_stream.classifier`` registers it with ``register(WeightedNaiveBayes)``."""

from __future__ import annotations

import numpy as np

from . import io
from ._classifier_params import LEARNERS, largest_gap
from .engine import Engine, rows
from .engine.history import SparseHistory
from .io.engine import check_parts


def model_state(model) -> dict:
    e = model._engine
    history = e.history
    if not history.sparse:  # the file holds the rows as entries (version 5), whatever the layout in memory
        history = SparseHistory.of(history, e.registry.column, _numeric(e.registry))
    return {
        "classes": e.classes,
        "registry": e.registry,
        "history": history,
        "schedule": e.schedule,
        "learner": e.optimizer,
        "slots": e.slots,
        "monitor": e.monitor,
    }


def _numeric(registry) -> np.ndarray:
    """``(K,)`` True for the numeric variables."""
    return np.array([v.kind == "numeric" for v in registry.variables], dtype=bool)


def model_check(fields: io.Fields) -> None:
    p, s = fields.params, fields.state
    classes, registry, history, schedule = s["classes"], s["registry"], s["history"], s["schedule"]
    if history.capacity != p["history_size"] and (p["memory_budget"] is None or history.capacity > p["history_size"]):
        budget = "" if p["memory_budget"] is None else " (a memory budget only shrinks it)"
        fields.fail("history", f"holds {history.capacity} rows, history_size is {p['history_size']}{budget}")
    every = largest_gap(p["rebuild_every"], p["half_life"])
    if (schedule.growth, schedule.every) != (p["rebuild_growth"], every):
        fields.fail("schedule", "its growth and every differ from rebuild_growth and rebuild_every")
    monitor = s["monitor"]
    if (monitor is None) != (p["drift_delta"] is None) or (monitor is not None and monitor.delta != p["drift_delta"]):
        fields.fail("monitor", "must be null exactly when drift_delta is, with delta = drift_delta")
    check_parts(fields, classes, registry, history, schedule, s["learner"], s["slots"], faded=p["half_life"] is not None)


def model_build(cls: type, fields: io.Fields):
    """The ``cls`` model of checked ``fields``."""
    model = cls(**fields.params)
    params, s = model._engine.params, fields.state
    history = s["history"] if params.absent is not None else s["history"].dense()  # a dense stream keeps a column per variable
    model._engine = Engine.from_parts(params, s["classes"], s["registry"], history, s["schedule"], s["learner"], s["slots"], s["monitor"])
    model._engine.reencode_all()  # the encoded window, a function of the raw rows and level 2
    return model


SCHEMA = io.Schema(
    params={
        "numeric": io.Optional(io.Record("GKClass", "CPiD", "Gaussian"), doc="numeric summary prototype"),
        "categorical": io.Optional(io.Record("Categorical"), doc="categorical summary prototype"),
        "optimizer": io.Optional(io.Record(*LEARNERS), doc="weight learner prototype"),
        "history_size": io.Int(low=1, doc="history depth N"),
        "batch_size": io.Optional(io.Int(low=1), doc="learner batch size L (null: the learner's)"),
        "rebuild_growth": io.Float(above=0.0, doc="rebuild when a count has grown by this factor"),
        "rebuild_every": io.Int(low=1, doc="largest gap between two rebuilds"),
        "on_type_change": io.Str(choices=rows.POLICIES, doc="a value of the other kind: raise or missing"),
        "drift_delta": io.Optional(io.Float(above=0.0, below=1.0), doc="confidence of the change detector (null: off)"),
        "half_life": io.Optional(io.Float(low=256.0), doc="rows in which an example's weight halves (null: no fading)"),
        "seed": io.Optional(io.Int(), doc="seed of every random choice"),
        "absent": io.Optional(io.Float(), doc="the value of an absent numeric feature (null: missing)"),
        "memory_budget": io.Optional(io.Int(low=1), doc="bytes memory_usage() is kept within (null: no budget)"),
        "catch_up": io.Bool(doc="a model that serves first rebuilds level 2 and steps its weights (since version 12)"),
    },
    state={
        "classes": io.Record("Classes", doc="labels, prior counts, rebuild thresholds"),
        "registry": io.Record("Registry", doc="the variables and their per-variable columns"),
        "history": io.Record("History", doc="the window of raw rows"),
        "schedule": io.Record("Schedule", doc="rebuild countdown and step counters"),
        "learner": io.Record(*LEARNERS, doc="the weight learner and its state"),
        "slots": io.Record("Slots", doc="the variables in level 3, in the learner's order (since version 4)"),
        "monitor": io.Optional(io.Record("Monitor"), doc="the change detector (null when drift_delta is)"),
    },
    checks=(model_check,),
    doc="The classifier: its parameters and the state of every part",
)


def register(cls: type) -> None:
    """Register ``cls`` (``WeightedNaiveBayes``) as the io record kind of its name."""
    io.register(
        "WeightedNaiveBayes",
        cls,
        SCHEMA,
        state=model_state,
        build=lambda fields: model_build(cls, fields),
        lock=lambda model: model.lock,
    )
