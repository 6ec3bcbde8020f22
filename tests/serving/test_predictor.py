"""The predictor (``serving.Predictor``): the model's probabilities bit for bit, in little memory.

Every configuration (each summary, each learner, both type-change policies), rows with missing
values, unseen categories, unknown features and values of the other kind, one row and a
DataFrame; a saved and loaded predictor; a predictor taken before the model learns more keeps
its numbers; a model with no class.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from river import datasets

from wnb_stream import Predictor, WeightedNaiveBayes, io, summaries, weights

CONFIGURATIONS = {
    "default": {},
    "cpid": {"numeric": summaries.CPiD(n_bins=50)},
    "gaussian": {"numeric": summaries.Gaussian()},
    "sketch": {"categorical": summaries.Categorical(max_values=3, top_k=2, epsilon=0.1)},
    "uniform": {"optimizer": weights.Uniform()},
    "graphical": {"optimizer": weights.Graphical()},
    "missing": {"on_type_change": "missing"},
}


def rows(seed: int, n: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        j = int(rng.integers(3))
        x = {"u": float(rng.normal(j, 1.0)), "colour": ["red", "green", "blue", "grey", "pink"][min(4, j + int(rng.integers(3)))]}
        if rng.random() < 0.2:
            x["v"] = float(rng.normal(-j, 1.0))
        if rng.random() < 0.1:
            x["u"] = None
        out.append((x, "abc"[j]))
    return out


def trained(name: str) -> WeightedNaiveBayes:
    model = WeightedNaiveBayes(seed=1, history_size=300, **CONFIGURATIONS[name])
    for x, y in rows(1, 600):
        model.learn_one(x, y)
    return model


MODELS = {name: trained(name) for name in CONFIGURATIONS}

values = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["red", "grey", "unseen", "pink"]))
dicts = st.dictionaries(st.sampled_from(["u", "v", "colour", "new"]), values, max_size=4)


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
@settings(max_examples=examples(40), deadline=None)
@given(xs=st.lists(dicts, min_size=1, max_size=6))
def test_the_predictor_gives_the_model_probabilities_bit_for_bit(name, xs):
    model = MODELS[name]
    predictor = model.predictor()
    for x in xs:
        try:
            expected = model.predict_proba_one(x)
        except ValueError as error:  # a value of the other kind under "raise": the same error
            with pytest.raises(ValueError, match=str(error)[:20].replace("(", r"\(").replace("[", r"\[")):
                predictor.predict_proba_one(x)
            continue
        assert predictor.predict_proba_one(x) == expected
    frame = pd.DataFrame(xs)
    try:
        expected = model.predict_proba_many(frame)
    except ValueError:
        with pytest.raises(ValueError):
            predictor.predict_proba_many(frame)
        return
    pd.testing.assert_frame_equal(predictor.predict_proba_many(frame), expected, check_exact=True)


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_a_saved_predictor_loads_with_the_same_numbers_and_is_small(name, tmp_path):
    model = MODELS[name]
    predictor = model.predictor()
    predictor.save(tmp_path / "p.wnb")
    loaded = Predictor.load(tmp_path / "p.wnb")
    assert io.dumps(loaded) == io.dumps(predictor)
    test = rows(2, 200)
    X = pd.DataFrame([x for x, _ in test])
    pd.testing.assert_frame_equal(loaded.predict_proba_many(X), model.predict_proba_many(X), check_exact=True)
    assert [loaded.predict_one(x) for x, _ in test] == [model.predict_one(x) for x, _ in test]
    assert loaded.predict_many(X).tolist() == model.predict_many(X).tolist()
    assert loaded.classes == model.classes and set(loaded.weights) == set(model.weights)
    assert predictor.memory_usage() * 10 < model.memory_usage()
    with pytest.raises(io.ModelFileError):
        WeightedNaiveBayes.load(tmp_path / "p.wnb")


def test_a_predictor_keeps_its_numbers_while_the_model_learns():
    model = trained("default")
    test = [x for x, _ in rows(3, 100)]
    predictor = model.predictor()
    before = [model.predict_proba_one(x) for x in test]
    for x, y in rows(4, 2000):
        model.learn_one(x, y)
    model.forget(100)
    assert [predictor.predict_proba_one(x) for x in test] == before
    assert [model.predictor().predict_proba_one(x) for x in test[:5]] == [model.predict_proba_one(x) for x in test[:5]]


def test_the_predictor_of_a_real_stream_and_of_a_model_with_no_class():
    data = list(datasets.Phishing())
    model = WeightedNaiveBayes(seed=3)
    for x, y in data[:800]:
        model.learn_one(x, y)
    predictor = model.predictor()
    assert [predictor.predict_proba_one(x) for x, _ in data[800:]] == [model.predict_proba_one(x) for x, _ in data[800:]]
    assert predictor.weights == pytest.approx(model.weights)
    empty = WeightedNaiveBayes().predictor()
    assert empty.predict_proba_one({"a": 1.0}) == {} and empty.predict_one({"a": 1.0}) is None
    assert len(empty.predict_proba_many(pd.DataFrame({"a": [1.0, 2.0]})).columns) == 0
    assert empty.predict_many(pd.DataFrame({"a": [1.0, 2.0]})).tolist() == [None, None]


def test_a_corrupted_predictor_record_is_refused():
    record = MODELS["default"].predictor().to_dict()
    record["state"]["coef"] = {"dtype": "float64", "shape": [1, 1], "data": [0.5]} if isinstance(record["state"]["coef"], dict) else record["state"]["coef"][:1]
    with pytest.raises(io.ModelFileError):
        Predictor.from_dict(record)
