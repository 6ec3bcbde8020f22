"""The parameters of ``WeightedNaiveBayes``: their checks, the parts a None stands for, the
engine they build, and the lock every public method holds (``wnb_stream.classifier`` is the River
face; this is what its ``__init__``, ``__repr__``, ``merge`` and ``absorb`` check and build with)."""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from ._checks import integer, real
from .engine import Engine, Params, rows
from .engine.drift import EVERY

LEARNERS = ("Uniform", "PGDMB", "VNS", "FNB", "SNB", "Graphical", "SGCF", "Direct")
#: The command line's names of the parts (``--models``, ``--summary``), for the error a string gets.
LEARNER_NAMES = {"nb": "Uniform", "uniform": "Uniform", **{name.lower(): name for name in LEARNERS[1:]}}
NUMERIC_SUMMARIES = {"gk": "GKClass", "gkclass": "GKClass", "cpid": "CPiD", "gaussian": "Gaussian"}


def one_at_a_time(method):
    """``method`` holding the model's lock: calls from several threads run one after the other."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def check(model) -> None:
    """``ValueError`` naming the first parameter of ``model`` out of its range. O(1)."""
    from . import summaries, weights

    check_part("numeric", model.numeric, summaries.Summary, "numeric", NUMERIC_SUMMARIES)
    check_part("categorical", model.categorical, summaries.Summary, "categorical", {"categorical": "Categorical"})
    check_part("optimizer", model.optimizer, weights.Optimizer, None, LEARNER_NAMES)
    integer(model.history_size, "history_size", low=1)
    history = model.history_size
    integer(model.batch_size, "batch_size", low=1, high=history, optional=True, bounds=f"in [1, history_size={history}]")
    real(model.rebuild_growth, "rebuild_growth", above=0, what="a number")
    integer(model.rebuild_every, "rebuild_every", low=1)
    if model.on_type_change not in rows.POLICIES:
        raise ValueError(f"on_type_change must be one of {rows.POLICIES}, got {model.on_type_change!r}")
    real(model.drift_delta, "drift_delta", above=0, below=1, optional=True, what="a number")
    real(model.half_life, "half_life", low=EVERY, finite=True, optional=True, what="a number of rows")
    integer(model.seed, "seed", optional=True)
    real(model.absent, "absent", finite=True, optional="None (missing)", what="a finite number")
    integer(model.memory_budget, "memory_budget", low=1, optional=True, what="a number of bytes")
    if not isinstance(model.catch_up, (bool, np.bool_)):
        raise ValueError(f"catch_up must be True or False, got {model.catch_up!r}")


def new_engine(model) -> Engine:
    """A fresh engine for the parameters of ``model`` (checked)."""
    return Engine(engine_params(model))


def engine_params(model) -> Params:
    """The engine's ``Params`` of the parameters of ``model`` (checked), the defaults in place of None."""
    default = default_parts()
    numeric = model.numeric if model.numeric is not None else default["numeric"]
    categorical = model.categorical if model.categorical is not None else default["categorical"]
    optimizer = (model.optimizer if model.optimizer is not None else default["optimizer"]).clone()
    drift_delta = None if model.drift_delta is None else float(model.drift_delta)
    half_life = None if model.half_life is None else float(model.half_life)
    return Params(numeric, categorical, optimizer, model.history_size, model.batch_size, model.rebuild_growth,
                  model.rebuild_every_rows, model.on_type_change, drift_delta, half_life, model.seed,
                  None if model.absent is None else float(model.absent),
                  None if model.memory_budget is None else int(model.memory_budget), bool(model.catch_up))  # fmt: skip


def default_parts() -> dict:
    """The parts a parameter left None stands for (fresh prototypes)."""
    from . import summaries, weights

    return {"numeric": summaries.GKClass(), "categorical": summaries.Categorical(), "optimizer": weights.VNS()}


def check_part(name: str, value, base_class: type, kind: str | None, names: dict) -> None:
    """``ValueError`` naming the parameter ``name`` unless ``value`` is None or an instance of
    ``base_class`` (of the summary ``kind``); the message says what to write instead."""
    if value is None:
        return
    family = "weights" if name == "optimizer" else "summaries"
    accepted = ", ".join(f"{family}.{cls}()" for cls in dict.fromkeys(names.values()))
    if isinstance(value, str):
        known = names.get(value.strip().lower())
        hint = f"write {name}={family}.{known}()" if known else f"one of {accepted}"
        raise ValueError(f"{name} must be None or an instance such as {accepted}, got the string {value!r}: {hint}")
    if isinstance(value, type):
        raise ValueError(f"{name} must be an instance, not the class {value.__name__}: write {name}={family}.{value.__name__}()")
    if not isinstance(value, base_class) or (kind is not None and value.kind != kind):
        what = f"a {kind} summary" if kind else "a weight learner"
        raise ValueError(f"{name} must be None or {what} such as {accepted}, got a {type(value).__name__}")


def largest_gap(rebuild_every: int, half_life) -> int:
    """The schedule's largest gap between rebuilds: ``rebuild_every``, at most ``half_life``."""
    return rebuild_every if half_life is None else max(1, min(rebuild_every, math.ceil(half_life)))


def merge_params(model) -> dict:
    """The parameters, with the prototypes in use in place of None (the same model either way)."""
    e = model._engine
    used = {"numeric": e.params.numeric, "categorical": e.params.categorical, "optimizer": e.optimizer}
    return {**model._get_params(), **{name: (type(p), p._get_params()) for name, p in used.items()}}


def check_mergeable(model, other) -> None:
    """``ValueError`` naming the first parameter, ``seed`` aside, in which ``model`` and ``other`` differ."""
    ours, theirs = merge_params(model), merge_params(other)
    for name, value in ours.items():
        if name != "seed" and value != theirs[name]:
            raise ValueError(f"cannot merge models with a different {name}: {value!r} != {theirs[name]!r}")


def check_delta(engine, delta) -> None:
    """``ValueError`` unless the ``Delta`` ``delta`` has the summaries of ``engine``."""
    for name in ("numeric", "categorical"):
        theirs, ours = getattr(delta._engine.params, name), getattr(engine.params, name)
        if (type(theirs), theirs._get_params()) != (type(ours), ours._get_params()):
            raise ValueError(f"cannot absorb a delta with another {name} summary: {theirs!r} != {ours!r}")


def describe(model) -> str:
    """``repr(model)``: River's form, with the summaries and the learner in use where a parameter is None."""
    used = default_parts()
    lines = [f"{type(model).__name__} ("]
    for name in list(inspect.signature(type(model).__init__).parameters)[1:]:  # after self
        value = getattr(model, name)
        if name in used:
            text = repr(value if value is not None else used[name]).replace("\n", "\n  ")
        else:
            text = f'"{value}"' if isinstance(value, str) else repr(value)
        lines.append(f"  {name}={text}")
    return "\n".join(lines) + "\n)"


def unit_test_params():
    """The configurations River's ``check_estimator`` runs (``WeightedNaiveBayes._unit_test_params``)."""
    from . import weights

    yield {"optimizer": weights.Uniform(), "history_size": 200}
    yield {"optimizer": weights.PGDMB(batch_size=20), "history_size": 100, "seed": 1}
    yield {"optimizer": weights.VNS(batch_size=20), "history_size": 100, "seed": 1}
    yield {"optimizer": weights.FNB(batch_size=20), "history_size": 100, "seed": 1}
    yield {"optimizer": weights.SNB(batch_size=20), "history_size": 100, "seed": 1}
    yield {"optimizer": weights.Graphical(), "history_size": 100, "seed": 1}
    yield {"optimizer": weights.SGCF(batch_size=20), "history_size": 100, "seed": 1}
    yield {"optimizer": weights.Direct(batch_size=20, n_starts=2), "history_size": 100, "seed": 1}
    yield {"absent": 0.0, "history_size": 100, "seed": 1}
