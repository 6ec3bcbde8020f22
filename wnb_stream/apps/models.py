"""The models that ``wnb-stream evaluate`` and the benchmarks compare: ours by name, any River
classifier by ``module:Class`` with JSON parameters, the peers' wrappers, and how much memory each holds.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import importlib
import inspect
import json
import math
import operator
import sys
import types
from typing import Mapping

import numpy as np
from river import base

from wnb_stream import WeightedNaiveBayes, summaries, weights

from .._checks import is_real

# ---------------------------------------------------------------------------------------------
# The models the command and the benchmarks compare


class NoOp(base.Classifier):
    """A classifier that does nothing: the ceiling of any River-style loop (``benchmarks/README.md``, Speed).

    >>> model = NoOp()
    >>> model.learn_one({"a": 1.0}, True)
    >>> model.predict_proba_one({"a": 1.0})
    {}
    """

    def learn_one(self, x, y) -> None:
        return None

    def predict_proba_one(self, x) -> dict:
        return {}

    def learn_many(self, X, y) -> None:
        return None

    def predict_proba_many(self, X):
        import pandas as pd

        return pd.DataFrame(index=X.index)


class NumericOnly(base.Wrapper, base.Classifier):
    """Feed ``classifier`` the numeric values of each example only (for River's GaussianNB).

    River's GaussianNB cannot take a string or a missing value; this wrapper drops categorical,
    missing (None, NaN) and infinite values, so the peer runs on every stream with the numeric
    variables it can use.

    >>> from river import naive_bayes
    >>> model = NumericOnly(naive_bayes.GaussianNB())
    >>> for a, y in [(1.0, True), (1.4, True), (3.0, False), (3.2, False)]:
    ...     model.learn_one({"a": a, "colour": "red", "b": None}, y)
    >>> {y: round(p, 3) for y, p in model.predict_proba_one({"a": 1.2, "colour": "blue"}).items()}
    {True: 1.0, False: 0.0}
    """

    def __init__(self, classifier: base.Classifier):
        self.classifier = classifier

    @property
    def _wrapped_model(self):
        return self.classifier

    @staticmethod
    def _numeric(x: dict) -> dict:
        return {
            k: v
            for k, v in x.items()
            if is_real(v) and math.isfinite(v)
        }

    def learn_one(self, x, y) -> None:
        self.classifier.learn_one(self._numeric(x), y)

    def predict_proba_one(self, x) -> dict:
        return self.classifier.predict_proba_one(self._numeric(x))


#: Model names understood by ``make_model`` (the command's ``--models``).
MODEL_NAMES = (
    "nb", "pgdmb", "vns", "fnb", "snb", "graphical", "sgcf", "direct", "fnb-vns", "sgcf-vns", "river-gnb", "river-ht", "noop"
)  # fmt: skip
#: What ``wnb-stream evaluate`` compares by default.
DEFAULT_MODELS = ("nb", "pgdmb", "vns", "graphical", "river-gnb")
#: Numeric summaries of level 1 by name (the command's ``--summary``).
SUMMARY_NAMES = ("gk", "cpid", "gaussian")

_DESCRIPTIONS = {
    "nb": "plain naive Bayes: WeightedNaiveBayes(optimizer=weights.Uniform())",
    "pgdmb": "WeightedNaiveBayes(optimizer=weights.PGDMB())",
    "vns": "WeightedNaiveBayes(optimizer=weights.VNS())",
    "fnb": "WeightedNaiveBayes(optimizer=weights.FNB())",
    "snb": "WeightedNaiveBayes(optimizer=weights.SNB())",
    "graphical": "WeightedNaiveBayes(optimizer=weights.Graphical())",
    "sgcf": "WeightedNaiveBayes(optimizer=weights.SGCF())",
    "direct": "WeightedNaiveBayes(optimizer=weights.Direct())",
    "fnb-vns": "WeightedNaiveBayes(optimizer=weights.FNB(refine=weights.VNS())): FNB's result as VNS's start",
    "sgcf-vns": "WeightedNaiveBayes(optimizer=weights.SGCF(refine=weights.VNS())): SGCF's result as VNS's start",
    "river-gnb": "river.naive_bayes.GaussianNB() on the numeric variables",
    "river-ht": 'river.tree.HoeffdingTreeClassifier(leaf_prediction="nba")',
    "noop": "a classifier that does nothing",
}


def describe_model(name: str) -> str:
    """One line saying what ``make_model(name)`` builds."""
    return _DESCRIPTIONS[name]


def make_model(name: str, summary: str = "gk", seed: int | None = 42, params: Mapping | None = None) -> base.Classifier:
    """A fresh model by name: one of ``MODEL_NAMES``; ``summary`` is one of ``SUMMARY_NAMES``.

    Our models are ``WeightedNaiveBayes`` with the chosen numeric summary, exact categorical
    counts and the named weight optimizer; the peers ignore ``summary``. ``params`` are keyword
    arguments of the model: of ``WeightedNaiveBayes`` for ours (where ``optimizer``, ``numeric``
    and ``categorical`` may be dicts: the parameters of the named learner and of the summaries),
    of ``GaussianNB`` and ``HoeffdingTreeClassifier`` for the peers.

    >>> make_model("river-ht")
    HoeffdingTreeClassifier (
      ...
      leaf_prediction="nba"
      ...
    )
    >>> model = make_model("vns", params={"history_size": 1000, "optimizer": {"penalty": 0.1}})
    >>> model.history_size, model.optimizer.penalty
    (1000, 0.1)
    """
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; known models: {', '.join(MODEL_NAMES)}")
    if summary not in SUMMARY_NAMES:
        raise ValueError(f"unknown summary {summary!r}; known summaries: {', '.join(SUMMARY_NAMES)}")
    params = dict(params or {})
    if name == "noop":
        if params:
            raise ValueError("the noop model takes no parameters")
        return NoOp()
    if name == "river-gnb":
        from river import naive_bayes

        return NumericOnly(_call(naive_bayes.GaussianNB, params, "river-gnb"))
    if name == "river-ht":
        from river import tree

        return _call(tree.HoeffdingTreeClassifier, {"leaf_prediction": "nba", **params}, "river-ht")

    numeric = {"gk": summaries.GKClass, "cpid": summaries.CPiD, "gaussian": summaries.Gaussian}[summary]
    optimizer = {
        "nb": weights.Uniform,
        "pgdmb": weights.PGDMB,
        "vns": weights.VNS,
        "fnb": weights.FNB,
        "snb": weights.SNB,
        "graphical": weights.Graphical,
        "sgcf": weights.SGCF,
        "direct": weights.Direct,
        "fnb-vns": functools.partial(weights.FNB, refine=weights.VNS()),
        "sgcf-vns": functools.partial(weights.SGCF, refine=weights.VNS()),
    }[name]
    parts = {"numeric": numeric, "categorical": summaries.Categorical, "optimizer": optimizer}
    arguments = {"seed": seed}
    for key, cls in parts.items():
        value = params.pop(key, {})
        arguments[key] = _call(cls, value, f"{name}: {key}") if isinstance(value, Mapping) and not _is_object_spec(value) else _value(value)
    arguments.update({key: _value(value) for key, value in params.items()})
    return _call(WeightedNaiveBayes, arguments, name)


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """One model of a command line: ``label`` (its row in the table), ``target`` (a name of
    ``MODEL_NAMES`` or ``module:Class``) and ``params`` (keyword arguments, from JSON). A
    pipeline has its ``steps`` (one ``ModelSpec`` each, joined by River's ``|``), its target the
    steps' targets joined by ``|`` and no params of its own."""

    label: str
    target: str
    params: dict = dataclasses.field(default_factory=dict)
    steps: tuple = ()


def _split_top_level(text: str, separator: str = ",") -> list[str]:
    """Split at the ``separator`` characters outside braces, brackets and JSON strings."""
    parts, depth, start, quoted, escaped = [], 0, 0, False, False
    for i, char in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


#: River's modules where a bare class name of ``--models`` is looked for (``StandardScaler``).
RIVER_MODULES = (
    "compose", "dummy", "ensemble", "facto", "feature_extraction", "feature_selection", "forest", "imblearn",
    "linear_model", "multiclass", "naive_bayes", "neighbors", "preprocessing", "rules", "tree",
)  # fmt: skip


def river_target(name: str) -> str:
    """``module:Class`` of a River class named without its module (``StandardScaler`` gives
    ``river.preprocessing:StandardScaler``); ``ValueError`` if no module or several hold it.

    >>> river_target("LogisticRegression")
    'river.linear_model:LogisticRegression'
    """
    found = []
    for module_name in RIVER_MODULES:
        try:
            module = importlib.import_module(f"river.{module_name}")
        except ImportError:  # pragma: no cover - a River without that module
            continue
        if isinstance(getattr(module, name, None), type):
            found.append(f"river.{module_name}:{name}")
    if len(found) != 1:
        why = "no River module holds it" if not found else f"River has several ({', '.join(found)}): write one"
        raise ValueError(
            f"unknown model {name!r} ({why}): a name among {', '.join(MODEL_NAMES)}, a River class name "
            f"(StandardScaler, LogisticRegression, …) or any class as module:Class"
        )
    return found[0]


def _parse_step(text: str, part: str) -> ModelSpec:
    """One model or pipeline step: ``TARGET[JSON]``."""
    brace = text.find("{")
    head, body = (text, "") if brace < 0 else (text[:brace].strip(), text[brace:])
    if not head:
        raise ValueError(f"no model named in {part!r}")
    params = {}
    if body:
        try:
            params = json.loads(body)
        except json.JSONDecodeError as error:
            raise ValueError(f"the parameters of {head} are not valid JSON ({error.msg} at {error.pos}): {body}") from None
        if not isinstance(params, dict):
            raise ValueError(f"the parameters of {head} must be a JSON object, got {body}")
    if ":" not in head and head not in MODEL_NAMES:
        head = river_target(head)
    label = head.rsplit(":", 1)[-1].rsplit(".", 1)[-1] if ":" in head else head
    return ModelSpec(label, head, params)


def parse_models(text: str) -> list[ModelSpec]:
    """The models of a ``--models`` value: comma-separated ``[LABEL=]MODEL``.

    ``MODEL`` is a name of ``MODEL_NAMES``, a River class by its name (``LogisticRegression``,
    looked for in ``RIVER_MODULES``) or any class as ``module:Class``, each optionally followed
    by its parameters as a JSON object; or a pipeline of such steps joined by ``|``, as River
    writes ``StandardScaler() | LogisticRegression()`` (``StandardScaler|LogisticRegression``).
    The label defaults to the name, the class name, or the steps' joined by ``|``. A parameter
    whose value is an object with one key ``"module:Class"`` is built the same way
    (``{"model": {"river.tree:HoeffdingTreeClassifier": {}}}``).

    >>> parse_models('nb, ht=river.tree:HoeffdingTreeClassifier{"grace_period": 50, "delta": 1e-5}')
    [ModelSpec(label='nb', target='nb', params={}, steps=()), ModelSpec(label='ht', target='river.tree:HoeffdingTreeClassifier', params={'grace_period': 50, 'delta': 1e-05}, steps=())]
    >>> (pipeline,) = parse_models('StandardScaler|LogisticRegression{"l2": 0.1}')
    >>> pipeline.label, tuple(step.target for step in pipeline.steps)
    ('StandardScaler|LogisticRegression', ('river.preprocessing:StandardScaler', 'river.linear_model:LogisticRegression'))
    """
    specs = []
    for part in _split_top_level(text):
        if not part:
            continue
        label, rest = None, part
        cut = min((i for i in (part.find("{"), part.find("|")) if i >= 0), default=len(part))
        if "=" in part[:cut]:
            label, rest = (piece.strip() for piece in part.split("=", 1))
            if not label:
                raise ValueError(f"empty label in {part!r}")
        steps = [_parse_step(step, part) for step in _split_top_level(rest, "|")]
        if len(steps) == 1:
            spec = steps[0]
        else:
            spec = ModelSpec("|".join(s.label for s in steps), "|".join(s.target for s in steps), {}, tuple(steps))
        specs.append(dataclasses.replace(spec, label=label) if label is not None else spec)
    return specs


def _import_target(target: str):
    module_name, _, qualname = target.partition(":")
    if not module_name or not qualname:
        raise ValueError(f"{target!r} is not module:Class")
    try:
        obj = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import {module_name!r} for {target}: {error}") from None
    for attribute in qualname.split("."):
        try:
            obj = getattr(obj, attribute)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no {qualname!r}") from None
    return obj


def _is_object_spec(value) -> bool:
    return isinstance(value, Mapping) and len(value) == 1 and ":" in next(iter(value)) and isinstance(next(iter(value.values())), Mapping)


def _value(value):
    """A parameter value from JSON: ``{"module:Class": {params}}`` is built, lists recursively."""
    if _is_object_spec(value):
        (target, params), = value.items()
        return _call(_import_target(target), {k: _value(v) for k, v in params.items()}, target)
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def _call(factory, params: Mapping, what: str):
    try:
        return factory(**params)
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot build {what}: {error}") from None


def build_model(spec: ModelSpec, summary: str = "gk", seed: int | None = 42) -> base.Classifier:
    """A fresh model from a ``ModelSpec``.

    A ``module:Class`` target must be a River classifier; it gets ``seed`` when its constructor
    takes one and the parameters do not set it. In a pipeline every step but the last must be a
    River transformer, and the last a classifier.

    >>> build_model(parse_models('river.naive_bayes:MultinomialNB{"alpha": 0.5}')[0])
    MultinomialNB (
      alpha=0.5
    )
    >>> model = build_model(parse_models("StandardScaler|LogisticRegression")[0])
    >>> tuple(type(step).__name__ for step in model.steps.values())
    ('StandardScaler', 'LogisticRegression')
    """
    if not spec.steps:
        model = _build_step(spec, summary, seed)
    else:
        *first, last = (_build_step(step, summary, seed) for step in spec.steps)
        for step, built in zip(spec.steps, first):
            if not isinstance(built, base.Transformer):
                raise ValueError(f"{step.target} is not a River transformer (river.base.Transformer): "
                                 "every step of a pipeline but the last must be one")  # fmt: skip
        model = functools.reduce(operator.or_, [*first, last])
    if not isinstance(model, base.Classifier):
        raise ValueError(f"{spec.target} is not a River classifier (river.base.Classifier)")
    return model


def _build_step(spec: ModelSpec, summary: str, seed: int | None):
    if ":" not in spec.target:
        return make_model(spec.target, summary=summary, seed=seed, params=spec.params)
    factory = _import_target(spec.target)
    params = {key: _value(value) for key, value in spec.params.items()}
    try:
        accepts_seed = "seed" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        accepts_seed = False
    if accepts_seed and "seed" not in params:
        params["seed"] = seed
    return _call(factory, params, spec.target)


def deep_memory(obj) -> int:
    """Bytes held by ``obj`` and everything it references: River's walk of the object graph
    (``_raw_memory_usage``), with each NumPy data buffer counted once.

    River's measure adds ``ndarray.nbytes`` to ``sys.getsizeof(array)``, which already includes
    the data of an array that owns it, and counts a view's data again beside its base's: for a
    model made of NumPy arrays it is about twice the memory. Here an array counts its header, and
    each buffer its bytes once. For a model without NumPy arrays both measures are equal.

    >>> import numpy as np
    >>> class Holder:
    ...     def __init__(self):
    ...         self.data = np.zeros(100_000)
    ...         self.view = self.data[:50_000]
    >>> deep_memory(Holder()) // 1000
    800
    """
    skipped = (type, types.ModuleType, types.FunctionType)
    seen: set[int] = set()
    buffers: dict[int, int] = {}
    size = 0
    pending = [obj]
    while pending:
        walked = []
        for item in pending:
            if isinstance(item, skipped) or id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, np.ndarray):
                owner = item
                while isinstance(owner.base, np.ndarray):
                    owner = owner.base
                size += sys.getsizeof(item) - (item.nbytes if item.flags.owndata else 0)
                data = owner.nbytes if owner.flags.owndata or owner.base is None else item.nbytes
                key = id(owner if owner.base is None or owner.flags.owndata else owner.base)
                buffers[key] = max(buffers.get(key, 0), data)
            else:
                size += sys.getsizeof(item)
            walked.append(item)
        pending = gc.get_referents(*walked)
    return size + sum(buffers.values())


def memory_of(model: base.Base) -> int:
    """Bytes held by ``model``, measured the same way for every model: ``deep_memory(model)``.

    ``WeightedNaiveBayes.memory_usage()`` (its arrays only, without walking the object graph)
    is within a few percent of it; River's ``_raw_memory_usage`` counts NumPy data twice.
    """
    return deep_memory(model)


def selected_variables(model: base.Base) -> int | None:
    """Number of variables with a non-zero weight, or None for a model without ``weights``."""
    if isinstance(model, base.Wrapper):
        model = model._wrapped_model
    weights = getattr(model, "weights", None)
    if not isinstance(weights, Mapping):
        return None
    return sum(1 for w in weights.values() if np.any(np.asarray(w) != 0))
