"""Bad input is normal in streams: it never crashes the model, and unusable input leaves it as it was."""

from __future__ import annotations

import math
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import WeightedNaiveBayes, summaries, weights

values = st.one_of(
    st.none(),
    st.just(float("nan")),
    st.just(float("inf")),
    st.just(float("-inf")),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.integers(-5, 5),
    st.sampled_from(["red", "green", "blue", ""]),
    st.booleans(),
    st.integers(-3, 3).map(np.int64),
    st.floats(-10, 10, allow_nan=False).map(np.float32),
)
rows = st.dictionaries(st.sampled_from(["a", "b", "c", 7, ("t", 1)]), values, max_size=5)
labels = st.one_of(st.booleans(), st.integers(0, 3), st.sampled_from(["x", "y"]), st.integers(0, 2).map(np.int64))
streams = st.lists(st.tuples(rows, labels, st.sampled_from([1.0, 0.5, 2.0, 0.0])), max_size=60)


def _assert_distribution(model, x):
    p = model.predict_proba_one(x)
    assert set(p) == set(model.classes)
    if p:
        assert all(0.0 <= v <= 1.0 for v in p.values())
        assert math.isclose(sum(p.values()), 1.0, rel_tol=1e-9)


OPTIMIZERS = [weights.Uniform(), weights.VNS(batch_size=8), weights.Graphical()]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=streams, which=st.integers(0, len(OPTIMIZERS) - 1))
def test_lenient_policy_accepts_every_stream(stream, which):
    model = WeightedNaiveBayes(optimizer=OPTIMIZERS[which], history_size=32, on_type_change="missing", seed=0)
    for x, y, w in stream:
        model.learn_one(x, y, w)
        _assert_distribution(model, x)
        _assert_distribution(model, {})


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=streams)
def test_strict_policy_either_learns_or_raises_a_named_error_and_changes_nothing(stream):
    model = WeightedNaiveBayes(optimizer=weights.VNS(batch_size=8), history_size=32, seed=0)
    for x, y, w in stream:
        before = pickle.dumps(model)
        try:
            model.learn_one(x, y, w)
        except ValueError as error:
            assert "feature" in str(error)
            assert pickle.dumps(model) == before
        try:
            _assert_distribution(model, x)
        except ValueError as error:
            assert "feature" in str(error)


def test_an_empty_dict_and_missing_values_only():
    model = WeightedNaiveBayes(seed=0)
    model.learn_one({}, "a")
    model.learn_one({"x": None, "y": float("nan")}, "b")
    assert model.predict_proba_one({}) == pytest.approx({"a": 0.5, "b": 0.5})
    model.learn_one({"x": 1.0}, "a")
    _assert_distribution(model, {"x": float("inf")})


def test_numpy_scalars_are_the_python_values_they_hold():
    a = WeightedNaiveBayes(optimizer=weights.Uniform(), seed=0)
    b = WeightedNaiveBayes(optimizer=weights.Uniform(), seed=0)
    rng = random.Random(0)
    for _ in range(300):
        y = rng.choice([0, 1])
        v = rng.gauss(y, 1.0)
        a.learn_one({"v": v, "c": "k" if y else "m"}, y)
        b.learn_one({"v": np.float64(v), "c": np.str_("k" if y else "m")}, np.int64(y))
    assert a.classes == b.classes and all(type(c) is int for c in b.classes)
    assert a.predict_proba_one({"v": 0.3, "c": "k"}) == pytest.approx(b.predict_proba_one({"v": np.float32(0.3), "c": "k"}), abs=1e-6)


def test_a_class_first_seen_after_ten_thousand_examples():
    model = WeightedNaiveBayes(optimizer=weights.Uniform(), numeric=summaries.Gaussian(), seed=0)
    rng = random.Random(2)
    for _ in range(10_000):
        y = rng.choice(["a", "b"])
        model.learn_one({"v": rng.gauss(0.0 if y == "a" else 2.0, 1.0)}, y)
    model.learn_one({"v": 9.0}, "new")
    p = model.predict_proba_one({"v": 9.0})
    assert set(p) == {"a", "b", "new"}
    for _ in range(50):
        model.learn_one({"v": rng.gauss(9.0, 0.3)}, "new")
    p = model.predict_proba_one({"v": 9.0})
    assert max(p, key=p.get) == "new"
