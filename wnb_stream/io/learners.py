"""Records of level 3: the weight learners ``Uniform``, ``PGDMB``, ``VNS``, ``FNB``, ``SNB``, ``Graphical``, ``SGCF`` and ``Direct``.

Parameters are the River ``Base`` ``__init__`` arguments. State is what the learner needs to keep
learning exactly as before:

- ``Uniform``: the sizes it has seen.
- ``PGDMB``: the sizes, and once ``reset`` has run (``run``): the best weights w*, whether w* is
  still the plain naive Bayes start, the active mask, the step and descent counters, the
  iterate, the Rprop state (steps Δ_k and remembered derivatives) and the running descent
  (its best point, counters and flags). The regularizer is rebuilt from the parameters; the
  criterion memo of a replay window (``_window_memo``) is a cache and is not saved.
- ``VNS``: that of PGDMB plus the session (``session``): the NumPy generator's exact state,
  the budget, the steps spent, the neighbourhood size and the session and replay counters.
- ``FNB``: the sizes, and once ``reset`` has run: the weights of the last search (ones before
  the first), the active mask, the NumPy generator of the variable orders, the rows seen, the
  rows seen at the last search, the number of searches, the criterion of the last result, and
  the refiner (a PGDMB or VNS record) when ``refine`` is set.
- ``SNB``: that of FNB without the refiner, plus the best subset of the last search and the
  number of models averaged.
- ``Graphical``: once ``reset`` has run, the per-class weights and biases, Adam's moments and
  per-class step counts, and the number of updates.
- ``SGCF`` and ``Direct`` (batch searches on the window): once ``reset`` has run, the best
  weights w*, whether w* is still the plain naive Bayes start, the active mask, the generator,
  the schedule's row counters, the number of searches, and the refiner (a PGDMB or VNS record)
  when ``refine`` is set.

The generator is saved as the state of its PCG64 bit generator (plain integers), the only bit
generator ``np.random.default_rng`` makes, and rebuilt by setting that state on a new PCG64.
"""

from __future__ import annotations

import numpy as np

from ..weights.direct import Direct
from ..weights.fnb import FNB
from ..weights.graphical import Graphical
from ..weights.pgdmb import PGDMB, _Descent
from ..weights.rprop import VARIANTS, RpropState
from ..weights.selection import AVERAGING, SCHEDULES
from ..weights.sgcf import SGCF
from ..weights.snb import SNB
from ..weights.uniform import Uniform
from ..weights.vns import VNS
from .errors import where
from .registry import Record, register
from .schema import Array, Bool, Fields, Float, Int, Optional, Schema, Str, Struct

__all__ = ["GENERATOR", "generator_state", "generator_from_state"]

#: The exact state of a ``np.random.Generator`` on PCG64 (``bit_generator.state`` flattened).
GENERATOR = Struct(
    {
        "bit_generator": Str(choices=("PCG64",), doc="the bit generator"),
        "state": Int(low=0, below=1 << 128, doc="PCG64 state (128-bit)"),
        "inc": Int(low=0, below=1 << 128, doc="PCG64 increment (128-bit)"),
        "has_uint32": Int(low=0, high=1, doc="a buffered 32-bit half is pending"),
        "uinteger": Int(low=0, below=1 << 32, doc="that buffered half"),
    },
    doc="NumPy generator state",
)


def generator_state(rng: np.random.Generator, path: str = "") -> dict:
    """The live value of a ``GENERATOR`` field: the exact state of ``rng`` (a PCG64 generator)."""
    if type(rng) is not np.random.Generator or type(rng.bit_generator) is not np.random.PCG64:
        raise TypeError(f"{where(path)}: only a np.random.Generator on PCG64 can be saved, got {rng!r}")
    state = rng.bit_generator.state
    return {
        "bit_generator": "PCG64",
        "state": state["state"]["state"],
        "inc": state["state"]["inc"],
        "has_uint32": state["has_uint32"],
        "uinteger": state["uinteger"],
    }


def generator_from_state(state: dict) -> np.random.Generator:
    """A generator in the state a loaded ``GENERATOR`` field describes (it draws what the saved one would).

    >>> rng = np.random.default_rng(42); _ = rng.random(3)
    >>> twin = generator_from_state(generator_state(rng))
    >>> twin.random() == rng.random()
    True
    """
    bit_generator = np.random.PCG64()
    bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": state["state"], "inc": state["inc"]},
        "has_uint32": state["has_uint32"],
        "uinteger": state["uinteger"],
    }
    return np.random.Generator(bit_generator)


# ------------------------------------------------------------------------------------------------
# Uniform

register(
    "Uniform",
    Uniform,
    Schema(
        params={"batch_size": Int(doc="rows per learn call asked of the classifier")},
        state={
            "n_variables": Int(low=0, doc="variables seen (K)"),
            "n_classes": Int(low=0, doc="classes seen (J)"),
        },
        doc="All weights 1 (plain naive Bayes)",
    ),
    state=lambda model: {"n_variables": model._n_variables, "n_classes": model._n_classes},
    build=lambda fields: _with(Uniform(**fields.params), _n_variables=fields.state["n_variables"], _n_classes=fields.state["n_classes"]),
)


def _with(obj, **attributes):
    for name, value in attributes.items():
        setattr(obj, name, value)
    return obj


# ------------------------------------------------------------------------------------------------
# PGDMB and VNS

_PGDMB_PARAMS = {
    "batch_size": Int(doc="L, rows per learn call"),
    "regularizer": Optional(Str(choices=("r1", "r2")), doc="r1, r2 or null"),
    "penalty": Float(doc="λ"),
    "exponent": Optional(Float(), doc="p of the penalty (null: the regularizer's default)"),
    "tolerance": Int(doc="successive degradations that end a descent"),
    "max_iterations": Int(doc="steps per descent"),
    "epsilon": Float(doc="least decrease counted as an improvement"),
    "initial_weight": Float(doc="w0, start of the first descent"),
    "initial_step": Float(doc="η0, initial Rprop step"),
    "step_increase": Float(doc="η+"),
    "step_decrease": Float(doc="η−"),
    "step_min": Float(doc="Δmin"),
    "step_max": Float(doc="Δmax"),
    "zero_threshold": Float(doc="weights below it are set to 0"),
    "delta": Float(doc="δ of the ξ_δ smoothing"),
    "rprop": Str(choices=VARIANTS, doc="Rprop variant"),
}

_WEIGHTS = {"low": 0.0, "high": 1.0}

_RUN = Struct(
    {
        "best": Array("float64", ("n_variables",), **_WEIGHTS, doc="w*, the anytime best weights"),
        "incumbent_is_nb": Bool(doc="w* is still the plain naive Bayes start"),
        "active": Array("bool", ("n_variables",), doc="variables not pinned at 0 (Level > 0)"),
        "steps": Int(low=0, doc="Rprop steps since reset"),
        "descents": Int(low=1, doc="descents started since reset"),
        "iterate": Array("float64", ("n_variables",), **_WEIGHTS, doc="w^t, the running descent's point"),
        "rprop": Struct(
            {
                "step": Array("float64", ("n_variables",), above=0.0, doc="Δ_k (the learning rates η_k with rprop='scaled')"),
                "previous_gradient": Array("float64", ("n_variables",), finite=False, doc="remembered derivative (±inf after an overflowing batch: only its sign is used)"),
            },
            doc="Rprop state",
        ),
        "descent": Struct(
            {
                "best": Array("float64", ("n_variables",), **_WEIGHTS, doc="best point of the descent"),
                "from_best": Bool(doc="that point is w*"),
                "improved": Bool(doc="the descent improved w*"),
                "degradations": Int(low=0, doc="successive non-improving steps"),
                "iterations": Int(low=0, doc="steps of the descent"),
            },
            doc="the running descent",
        ),
    },
    doc="the optimisation state, once reset",
)

_SESSION = Struct(
    {
        "rng": GENERATOR,
        "budget": Optional(Float(low=1.0), doc="iteration budget T (null before the first history)"),
        "spent": Int(low=0, doc="steps charged to the session"),
        "neighbourhood": Float(above=0.0, high=1.0, doc="current neighbourhood size s"),
        "sessions": Int(low=1, doc="sessions started"),
        "replayed_at": Int(low=0, doc="rows seen at the last replay session"),
        "rows_seen": Int(low=0, doc="rows of the arriving batches"),
        "replay_steps": Int(low=0, doc="steps on replayed mini-batches"),
    },
    doc="the VNS session, once reset",
)


def _pgdmb_state(model: PGDMB) -> dict:
    state = {"n_variables": model._n_variables, "n_classes": model._n_classes, "run": None}
    if model._ready:
        descent = model._descent
        state["run"] = {
            "best": model._best,
            "incumbent_is_nb": model._incumbent_is_nb,
            "active": model._active,
            "steps": model._steps,
            "descents": model._descents,
            "iterate": model._iterate,
            "rprop": {"step": model._rprop.step, "previous_gradient": model._rprop.previous_gradient},
            "descent": {
                "best": descent.best,
                "from_best": descent.from_best,
                "improved": descent.improved,
                "degradations": descent.degradations,
                "iterations": descent.iterations,
            },
        }
    return state


def _vns_state(model: VNS) -> dict:
    state = _pgdmb_state(model)
    state["session"] = None
    if model._ready:
        state["session"] = {
            "rng": generator_state(model._rng, "session.rng"),
            "budget": model._budget,
            "spent": model._spent,
            "neighbourhood": model._neighbourhood,
            "sessions": model._sessions,
            "replayed_at": model._replayed_at,
            "rows_seen": model._rows_seen,
            "replay_steps": model._replay_steps,
        }
    return state


def _pgdmb_check(fields: Fields) -> None:
    state, params = fields.state, fields.params
    if state["run"] is None and (state["n_variables"] or state["n_classes"]):
        fields.fail("run", "a learner with sizes must have its run state (reset has sized it)")
    if "session" in state and (state["session"] is None) != (state["run"] is None):
        fields.fail("session", "must be given exactly when run is")
    run = state["run"]
    if run is None:
        return
    # The invariants of PGDMB._check() (and VNS._check()), here so that they hold under python -O.
    threshold = params["zero_threshold"]
    for name, vector in (("best", run["best"]), ("iterate", run["iterate"]), ("descent.best", run["descent"]["best"])):
        if np.any((vector > 0.0) & (vector < threshold)):
            fields.fail(f"run.{name}", f"holds a weight in (0, zero_threshold = {threshold!r}) (such weights are set to 0)")
        if np.any(vector[~run["active"]] != 0.0):
            fields.fail(f"run.{name}", "holds a weight other than 0 for an inactive variable")
    step = run["rprop"]["step"]
    if np.any((step < params["step_min"]) | (step > params["step_max"])):
        fields.fail("run.rprop.step", f"must lie in [step_min, step_max] = [{params['step_min']!r}, {params['step_max']!r}]")
    descent = run["descent"]
    if not descent["degradations"] < params["tolerance"]:
        fields.fail("run.descent.degradations", f"must be < tolerance = {params['tolerance']!r}")
    if not descent["iterations"] < params["max_iterations"]:
        fields.fail("run.descent.iterations", f"must be < max_iterations = {params['max_iterations']!r}")
    if descent["from_best"] and not np.array_equal(descent["best"], run["best"]):
        fields.fail("run.descent.best", "must equal run.best when the descent starts from it")
    session = state.get("session")
    if session is not None and not params["neighbourhood"] <= session["neighbourhood"]:
        fields.fail("session.neighbourhood", f"must be >= the parameter neighbourhood = {params['neighbourhood']!r}")


def _pgdmb_build(fields: Fields) -> PGDMB:
    cls = VNS if fields.name == "VNS" else PGDMB
    model = cls(**fields.params)
    state = fields.state
    model._n_variables, model._n_classes = state["n_variables"], state["n_classes"]
    run = state["run"]
    if run is None:
        return model
    model._best = run["best"]
    model._incumbent_is_nb = run["incumbent_is_nb"]
    model._active = run["active"]
    model._steps, model._descents = run["steps"], run["descents"]
    model._iterate = run["iterate"]
    model._rprop = RpropState(run["rprop"]["step"], run["rprop"]["previous_gradient"])
    model._descent = _Descent(**run["descent"])
    session = state.get("session")
    if session is not None:
        model._rng = generator_from_state(session["rng"])
        model._budget = None if session["budget"] is None else float(session["budget"])
        model._neighbourhood = float(session["neighbourhood"])
        for name in ("spent", "sessions", "replayed_at", "rows_seen", "replay_steps"):
            setattr(model, "_" + name, session[name])
    model._ready = True
    return model


_SIZES = {
    "n_variables": Int(low=0, binds="n_variables", doc="variables the learner is sized for (K)"),
    "n_classes": Int(low=0, doc="classes the learner is sized for (J)"),
}

register(
    "PGDMB",
    PGDMB,
    Schema(
        params=_PGDMB_PARAMS,
        state={**_SIZES, "run": Optional(_RUN, doc="null before reset")},
        checks=(_pgdmb_check,),
        doc="Projected mini-batch Rprop (HBL17 Algorithm 1)",
    ),
    state=_pgdmb_state,
    build=_pgdmb_build,
)

register(
    "VNS",
    VNS,
    Schema(
        params={
            **_PGDMB_PARAMS,
            "opti_level": Int(doc="OptiLevel of the session budget"),
            "neighbourhood": Float(doc="s0, the smallest neighbourhood size"),
            "multi_start": Bool(doc="restart from uniform points of the cube"),
            "replay_level": Optional(Int(), doc="budget level of replay sessions (null: no replay)"),
        },
        state={
            **_SIZES,
            "run": Optional(_RUN, doc="null before reset"),
            "session": Optional(_SESSION, doc="null before reset"),
        },
        checks=(_pgdmb_check,),
        doc="PGDMB with variable-neighbourhood restarts (HBL17 Algorithm 2)",
    ),
    state=_vns_state,
    build=_pgdmb_build,
)


# ------------------------------------------------------------------------------------------------
# FNB and SNB

_SEARCH_PARAMS = {
    "batch_size": Int(doc="rows per learn call"),
    "penalty": Float(doc="λ, weight of the prior"),
    "max_variables": Optional(Int(), doc="most non-zero weights (null: no limit)"),
}
_SEARCH_SCHEDULE = {
    "growth": Float(doc="search when the rows seen have grown by this factor"),
    "refresh": Optional(Float(), doc="search when this many windows of rows have come (null: off)"),
}

_SEARCH_RUN = {
    "weights": Array("float64", ("n_variables",), **_WEIGHTS, doc="weights of the last search (ones before the first)"),
    "active": Array("bool", ("n_variables",), doc="variables that may enter a search (Level > 0)"),
    "rng": GENERATOR,
    "rows_seen": Int(low=0, doc="rows of the arriving batches"),
    "searched_at": Int(low=0, doc="rows seen at the last search"),
    "searches": Int(low=0, doc="searches since reset"),
    "value": Optional(Float(), doc="criterion of the last search's result (null before the first)"),
}
_FNB_RUN = {
    **_SEARCH_RUN,
    "refiner": Optional(Record("PGDMB", "VNS"), doc="the refine learner's live copy (null without refine)"),
}
_SNB_RUN = {
    **_SEARCH_RUN,
    "best": Array("float64", ("n_variables",), **_WEIGHTS, doc="0/1 weights of the best subset of the last search"),
    "models": Int(low=0, doc="subsets averaged by the last search"),
}


def _search_state(model) -> dict:
    state = {"n_variables": model._n_variables, "n_classes": model._n_classes, "run": None}
    if model._ready:
        state["run"] = {
            "weights": model._best,  # (the saved names are those of format version 2)
            "active": model._active,
            "rng": generator_state(model._rng, "run.rng"),
            "rows_seen": model._rows_seen,
            "searched_at": model._rows_at_search,
            "searches": model._searches,
            "value": model._value,
        }
        if isinstance(model, SNB):
            state["run"].update(best=model._subset, models=model._models)
        else:
            state["run"].update(refiner=model._refiner)
    return state


def _search_check(fields: Fields) -> None:
    state, params = fields.state, fields.params
    if state["run"] is None and (state["n_variables"] or state["n_classes"]):
        fields.fail("run", "a learner with sizes must have its run state (reset has sized it)")
    run = state["run"]
    if run is None:
        return
    # The invariants of SelectionSearch._check() (and SNB._check()), here so that they hold under python -O.
    if np.any(run["weights"][~run["active"]] != 0.0):
        fields.fail("run.weights", "holds a weight other than 0 for an inactive variable")
    if run["searched_at"] > run["rows_seen"]:
        fields.fail("run.searched_at", "must be <= run.rows_seen")
    if (run["searches"] == 0) != (run["value"] is None):
        fields.fail("run.value", "must be null exactly before the first search")
    limit = params["max_variables"]
    if run["searches"] and limit is not None and np.count_nonzero(run["weights"]) > limit:
        fields.fail("run.weights", f"holds more than max_variables = {limit!r} non-zero weights")
    if "best" in run and np.any((run["best"] != 0.0) & (run["best"] != 1.0)):
        fields.fail("run.best", "must hold 0/1 weights")
    if "refine" in params:
        if (run["refiner"] is None) != (params["refine"] is None):
            fields.fail("run.refiner", "must be given exactly when the parameter refine is")
        if limit is not None and params["refine"] is not None:
            fields.fail("refine", "cannot be combined with max_variables")


def _search_build(fields: Fields):
    model = (SNB if fields.name == "SNB" else FNB)(**fields.params)
    state = fields.state
    model._n_variables, model._n_classes = state["n_variables"], state["n_classes"]
    run = state["run"]
    if run is None:
        return model
    model._best, model._active = run["weights"], run["active"]
    model._rng = generator_from_state(run["rng"])
    model._rows_seen, model._rows_at_search, model._searches = run["rows_seen"], run["searched_at"], run["searches"]
    model._incumbent_is_nb = run["searches"] == 0  # (every search of FNB and SNB replaces the weights)
    model._value = None if run["value"] is None else float(run["value"])
    if fields.name == "SNB":
        model._subset, model._models = run["best"], run["models"]
    else:
        model._refiner = run["refiner"]
    model._ready = True
    return model


register(
    "FNB",
    FNB,
    Schema(
        params={
            **_SEARCH_PARAMS,
            "exponent": Float(doc="p of the prior term Σ B_k w_k^p"),
            "schedule": Str(choices=SCHEDULES, doc="increments and repetitions: HB24 or Khiops"),
            **_SEARCH_SCHEDULE,
            "refine": Optional(Record("PGDMB", "VNS"), doc="learner restarted from each search's result (null: none)"),
        },
        state={**_SIZES, "run": Optional(Struct(_FNB_RUN, doc="the search state, once reset"), doc="null before reset")},
        checks=(_search_check,),
        doc="Fractional naive Bayes (HB24 Algorithm 2)",
    ),
    state=_search_state,
    build=_search_build,
)

register(
    "SNB",
    SNB,
    Schema(
        params={
            **_SEARCH_PARAMS,
            "starts": Optional(Int(), doc="starts of MS(FFWBW) (null: ⌈log(K·N)⌉)"),
            "averaging": Str(choices=AVERAGING, doc="subsets averaged: the trajectory or the local optima"),
            **_SEARCH_SCHEDULE,
        },
        state={**_SIZES, "run": Optional(Struct(_SNB_RUN, doc="the search state, once reset"), doc="null before reset")},
        checks=(_search_check,),
        doc="Selective naive Bayes with compression-based averaging (HB24 Algorithm 1)",
    ),
    state=_search_state,
    build=_search_build,
)


# ------------------------------------------------------------------------------------------------
# Graphical

_GRAPHICAL_ARRAYS = ("w", "b", "m_w", "v_w", "m_b", "v_b", "updates")
#: Bound of the magnitude of a weight, bias or first moment: far beyond what a descent reaches,
#: and small enough that a weight times a log-likelihood times the variables stays a finite score.
_LARGE = 1e100
_PARAMETER = {"low": -_LARGE, "high": _LARGE}


def _graphical_build(fields: Fields) -> Graphical:
    model = Graphical(**fields.params)
    run = fields.state["run"]
    if run is not None:
        for name in _GRAPHICAL_ARRAYS:
            setattr(model, "_" + name, run[name])
        model._examples = run["examples"]
        model._ready = True
    return model


register(
    "Graphical",
    Graphical,
    Schema(
        params={
            "learning_rate": Optional(Float(), doc="η (null: the default of the update rule)"),
            "adaptive": Bool(doc="Adam instead of the fixed rate"),
            "clip": Optional(Float(), doc="L2 bound of each example's gradient"),
        },
        state={
            "run": Optional(
                Struct(
                    {
                        "w": Array("float64", ("n_variables", "n_classes"), **_PARAMETER, doc="per-class weights w_kj"),
                        "b": Array("float64", ("n_classes",), **_PARAMETER, doc="per-class biases b_j"),
                        "m_w": Array("float64", ("n_variables", "n_classes"), **_PARAMETER, doc="Adam first moments of w"),
                        "v_w": Array("float64", ("n_variables", "n_classes"), low=0.0, high=_LARGE**2, doc="Adam second moments of w"),
                        "m_b": Array("float64", ("n_classes",), **_PARAMETER, doc="Adam first moments of b"),
                        "v_b": Array("float64", ("n_classes",), low=0.0, high=_LARGE**2, doc="Adam second moments of b"),
                        "updates": Array("int64", ("n_classes",), low=0, doc="Adam steps of each class column"),
                        "examples": Int(low=0, doc="updates made since reset"),
                    }
                ),
                doc="null before reset",
            )
        },
        doc="Per-class softmax weights by SGD (SLH15)",
    ),
    state=lambda model: {
        "run": {**{name: getattr(model, "_" + name) for name in _GRAPHICAL_ARRAYS}, "examples": model._examples}
        if model._ready
        else None
    },
    build=_graphical_build,
)


# ------------------------------------------------------------------------------------------------
# SGCF and Direct (batch searches on the window, weights/search.py)

_SEARCH_PARAMS = {
    "batch_size": Int(doc="rows per learn call"),
    "max_variables": Optional(Int(), doc="most non-zero weights of a hand-over (null: no limit)"),
    "refine": Optional(Record("PGDMB", "VNS"), doc="learner restarted from each hand-over (null: none)"),
}

_SEARCH_RUN = Struct(
    {
        "best": Array("float64", ("n_variables",), **_WEIGHTS, doc="w*, the anytime best weights"),
        "incumbent_is_nb": Bool(doc="w* is still the plain naive Bayes start"),
        "active": Array("bool", ("n_variables",), doc="variables not pinned at 0 (Level > 0)"),
        "rng": GENERATOR,
        "rows_seen": Int(low=0, doc="rows of the arriving batches"),
        "rows_at_search": Int(low=0, doc="rows seen when the last search ran"),
        "window_at_search": Int(low=0, doc="rows of the window the last search saw"),
        "searches": Int(low=0, doc="searches run since reset"),
        "refiner": Optional(Record("PGDMB", "VNS"), doc="the refine learner's live copy (null without refine)"),
    },
    doc="the search state, once reset",
)


def _search_state(model) -> dict:
    state = {"n_variables": model._n_variables, "n_classes": model._n_classes, "run": None}
    if model._ready:
        state["run"] = {
            "best": model._best,
            "incumbent_is_nb": model._incumbent_is_nb,
            "active": model._active,
            "rng": generator_state(model._rng, "run.rng"),
            "rows_seen": model._rows_seen,
            "rows_at_search": model._rows_at_search,
            "window_at_search": model._window_at_search,
            "searches": model._searches,
            "refiner": model._refiner,
        }
    return state


def _search_check(fields: Fields) -> None:
    state, params = fields.state, fields.params
    run = state["run"]
    if run is None:
        if state["n_variables"] or state["n_classes"]:
            fields.fail("run", "a learner with sizes must have its run state (reset has sized it)")
        return
    # The invariants of WindowSearch._check() and WarmSearch's, here so that they hold under python -O.
    if np.any(run["best"][~run["active"]] != 0.0):
        fields.fail("run.best", "holds a weight other than 0 for an inactive variable")
    budget = params["max_variables"]
    if budget is not None and not run["incumbent_is_nb"] and np.count_nonzero(run["best"]) > budget:
        fields.fail("run.best", f"has more non-zero weights than max_variables = {budget!r}")
    if run["rows_at_search"] > run["rows_seen"]:
        fields.fail("run.rows_at_search", "must be <= run.rows_seen")
    if (run["refiner"] is None) != (params["refine"] is None):
        fields.fail("run.refiner", "must be given exactly when the parameter refine is")
    if budget is not None and params["refine"] is not None:
        fields.fail("refine", "cannot be combined with max_variables")


def _search_build(fields: Fields):
    cls = SGCF if fields.name == "SGCF" else Direct
    model = cls(**fields.params)
    state = fields.state
    model._n_variables, model._n_classes = state["n_variables"], state["n_classes"]
    run = state["run"]
    if run is None:
        return model
    model._best, model._incumbent_is_nb, model._active = run["best"], run["incumbent_is_nb"], run["active"]
    model._rng = generator_from_state(run["rng"])
    for name in ("rows_seen", "rows_at_search", "window_at_search", "searches"):
        setattr(model, "_" + name, run[name])
    model._refiner = run["refiner"]
    model._ready = True
    return model


_SEARCH_STATE = {**_SIZES, "run": Optional(_SEARCH_RUN, doc="null before reset")}

register(
    "SGCF",
    SGCF,
    Schema(
        params={
            "batch_size": _SEARCH_PARAMS["batch_size"],
            "penalty": Float(doc="λ"),
            "exponent": Float(doc="α of ξ(τ) = τ^α"),
            "delta": Float(doc="δ of the ξ_δ smoothing"),
            "tolerance": Float(doc="a stage stops when the displacement norm is below it"),
            "max_iterations": Int(doc="accepted steps per stage"),
            "max_variables": _SEARCH_PARAMS["max_variables"],
            "refine": _SEARCH_PARAMS["refine"],
        },
        state=_SEARCH_STATE,
        checks=(_search_check,),
        doc="Two-stage SG.CF search on the window (HB24 §3.2.2)",
    ),
    state=_search_state,
    build=_search_build,
)

register(
    "Direct",
    Direct,
    Schema(
        params={
            "batch_size": _SEARCH_PARAMS["batch_size"],
            "penalty": Float(doc="multiplier of the bimodal prior term"),
            "sigma": Float(doc="σ of the two modes"),
            "n_starts": Int(doc="descents per search"),
            "max_iterations": Int(doc="iterations per descent"),
            "initial_rate": Float(doc="η0, initial per-coordinate rate"),
            "rate_increase": Float(doc="rate factor when the sign is kept"),
            "rate_decrease": Float(doc="rate factor otherwise"),
            "rate_min": Float(doc="least rate"),
            "rate_max": Float(doc="largest rate"),
            "max_variables": _SEARCH_PARAMS["max_variables"],
            "refine": _SEARCH_PARAMS["refine"],
        },
        state=_SEARCH_STATE,
        checks=(_search_check,),
        doc="Direct descent with a bimodal prior and multistarts (GB11)",
    ),
    state=_search_state,
    build=_search_build,
)
