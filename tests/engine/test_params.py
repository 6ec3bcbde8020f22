"""``engine.params.Params`` and the engine's constructors: one frozen value of settings, an empty
engine from it (``Engine``, ``blank``) and an engine from given parts (``Engine.from_parts``, which
load and merge use)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes, summaries, weights
from wnb_stream.engine import Engine, Params


def params(**changes) -> Params:
    base = Params(summaries.Gaussian(), summaries.Categorical(), weights.PGDMB(), 64, 8, 0.5, 1000, "raise", 0.002, None, 7)
    return dataclasses.replace(base, **changes)


def rows(n: int, seed: int = 3):
    return list(synth.Agrawal(seed=seed).take(n))


def test_params_are_frozen_and_compared_by_value():
    p = params()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.history_size = 10
    assert pickle.loads(pickle.dumps(p)).history_size == 64 and p.absent is None and p.memory_budget is None


def test_an_engine_and_its_blank_read_one_params_and_learn_with_fresh_learners():
    p = params()
    engine = Engine(p)
    assert engine.params is p and engine.optimizer is not p.optimizer and type(engine.optimizer) is weights.PGDMB
    assert engine.history.capacity == 64 and engine.target_batch == 8 and engine.monitor.delta == 0.002
    for x, y in rows(100):
        engine.learn_dict(x, y, 1.0)
    blank = engine.blank(collect=True)
    assert blank.params is p and blank.collect and blank.n_seen == 0 and len(blank.registry) == 0
    assert blank.optimizer is not engine.optimizer and blank.optimizer is not p.optimizer


def test_from_parts_takes_the_parts_as_they_are_and_predicts_as_the_engine_they_came_from():
    model = WeightedNaiveBayes(numeric=summaries.Gaussian(), seed=1, history_size=50)
    for x, y in rows(300):
        model.learn_one(x, y)
    e = model._engine
    engine = Engine.from_parts(e.params, e.classes, e.registry, e.history, e.schedule, e.optimizer, e.slots, e.monitor)
    assert engine.n_seen == e.history.stored == 300 and engine.shape == (len(e.slots), len(e.classes))
    assert engine.lookup is not e.lookup and engine.parser.registry is e.registry and not engine.collect
    engine.reencode_all()
    engine._check()
    x = rows(1, seed=9)[0][0]
    np.testing.assert_array_equal(engine.scores_one(engine.parser.row(x)), e.scores_one(e.parser.row(x)))


def test_an_engine_pickled_with_positional_arguments_loads_with_params():
    engine = Engine(params())
    for x, y in rows(40):
        engine.learn_dict(x, y, 1.0)
    state = engine.__getstate__()
    p = state.pop("params")
    state["arguments"] = tuple(getattr(p, field.name) for field in dataclasses.fields(p))
    state.update(numeric_prototype=p.numeric, categorical_prototype=p.categorical, batch_size=p.batch_size, absent=None, seed=7)
    old = Engine.__new__(Engine)
    old.__setstate__(state)
    assert old.params == p and not hasattr(old, "arguments") and not hasattr(old, "numeric_prototype")
    old._check()
