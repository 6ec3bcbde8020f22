"""The classifier's input policy (``docs/algorithms/summaries.md#input-policy``), one defect of the
hardening issue per test: every entry point validates before it changes anything, a rejected call
leaves the saved record byte for byte as it was, and whatever is accepted can be saved and loaded
to the same predictions."""

from __future__ import annotations

import datetime
import decimal
import fractions
import math

import numpy as np
import pandas as pd
import pytest

from wnb_stream import WeightedNaiveBayes, io, summaries, weights


def record(model) -> bytes:
    return io.dumps(model, compress=False)


def trained(**params) -> WeightedNaiveBayes:
    model = WeightedNaiveBayes(**{"optimizer": weights.Uniform(), "seed": 0, **params})
    for i in range(30):
        model.learn_one({"a": float(i % 7), "c": "uvw"[i % 3]}, i % 2)
    return model


def assert_saves_and_predicts_alike(model, probes):
    copy = io.loads(io.dumps(model))
    for x in probes:
        assert copy.predict_proba_one(x) == model.predict_proba_one(x)
    X = pd.DataFrame(probes)
    pd.testing.assert_frame_equal(copy.predict_proba_many(X), model.predict_proba_many(X))


def assert_rejected(model, call, match):
    before = record(model)
    with pytest.raises(ValueError, match=match):
        call()
    assert record(model) == before


# ---------------------------------------------------------------------- 2. half-applied rejections
def test_pd_na_in_a_string_column_is_missing_and_nothing_is_half_learned():
    model = trained()
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "c": pd.array(["u", "v", pd.NA], dtype="string")})
    model.learn_many(X, pd.Series([0, 1, 0]))
    model._check()
    p = model.predict_proba_one({"a": 1.0, "c": "u"})
    assert math.isclose(sum(p.values()), 1.0)
    k = model._engine.registry.index["c"]
    assert model._engine.registry.variables[k].summary.table().missing.sum() == 1.0
    assert_saves_and_predicts_alike(model, [{"a": 1.0, "c": "u"}, {"a": 1.0, "c": pd.NA}])


def test_learn_one_with_pd_na_stores_a_missing_value_and_the_model_saves():
    model = WeightedNaiveBayes(optimizer=weights.Uniform())
    model.learn_one({"c": pd.NA}, 0)
    model.learn_one({"c": "a", "n": pd.NA}, 1)
    model.learn_one({"c": pd.NaT, "n": 1.0}, 0)
    assert model._engine.history.categorical[0, 0] is None
    assert_saves_and_predicts_alike(model, [{"c": "a"}, {"c": pd.NA, "n": pd.NaT}])


@pytest.mark.parametrize("numeric", [summaries.Gaussian, summaries.CPiD, summaries.GKClass])
def test_a_finite_extreme_is_learned_not_refused_after_the_class_was_counted(numeric):
    model = trained(numeric=numeric())
    for i, x in enumerate([1e308, -1e308, 1.7976931348623157e308, -5e307]):
        model.learn_one({"a": x}, i % 2)
        model._check()
    # the class prior counts exactly the examples learned (34), and each summary holds its values
    assert model._engine.classes.counts.sum() == 34.0
    k = model._engine.registry.index["a"]
    model._engine.registry.feed(np.array([k]), model._engine.history, model._engine.classes)
    table = model._engine.registry.variables[k].summary.table()
    assert float(np.sum(table.missing)) == 0.0
    assert_saves_and_predicts_alike(model, [{"a": 1e308}, {"a": 0.0}, {"a": -1e308, "c": "u"}])


# ---------------------------------------------------------------------- 7. NaN and missing labels
@pytest.mark.parametrize("label", [math.nan, np.float64("nan"), pd.NA, pd.NaT, None, np.datetime64("NaT")], ids=repr)
def test_a_missing_label_is_rejected_and_the_model_is_unchanged(label):
    model = trained()
    assert_rejected(model, lambda: model.learn_one({"a": 1.0}, label), "missing value|None")
    assert model.classes == (0, 1)


@pytest.mark.parametrize(
    "y",
    [pd.Series([1, pd.NA, 0], dtype="Int64"), np.array([1.0, math.nan, 0.0]), [1, None, 0], pd.Series(["a", pd.NA, "b"], dtype="string")],
    ids=["Int64", "float", "list", "string"],
)
def test_a_missing_label_in_a_batch_rejects_the_batch(y):
    model = trained()
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    assert_rejected(model, lambda: model.learn_many(X, y), "missing value|None|NaN")


def test_fifty_nan_labels_make_no_class():
    model = WeightedNaiveBayes(optimizer=weights.Uniform())
    for i in range(50):
        with pytest.raises(ValueError):
            model.learn_one({"a": float(i)}, math.nan)
    assert model.classes == () and model.predict_proba_one({"a": 1.0}) == {}


# ---------------------------------------------------------------------- 8. accepted means saveable
CONVERTED = [
    ("datetime64", np.datetime64("2020-01-01"), 1577836800.0),
    ("Timestamp", pd.Timestamp("2020-01-01"), 1577836800.0),
    ("datetime", datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc), 1577836800.0),
    ("date", datetime.date(2020, 1, 1), 1577836800.0),
    ("timedelta", datetime.timedelta(minutes=1), 60.0),
    ("Decimal", decimal.Decimal("1.5"), 1.5),
    ("Fraction", fractions.Fraction(1, 4), 0.25),
]


@pytest.mark.parametrize("name, value, seconds", CONVERTED, ids=[c[0] for c in CONVERTED])
def test_dates_decimals_and_fractions_become_numbers_and_the_model_saves(name, value, seconds):
    model = WeightedNaiveBayes(optimizer=weights.Uniform())
    model.learn_one({"v": value}, 0)
    model.learn_one({"v": value}, 1)
    variable = model._engine.registry.variables[0]
    assert variable.kind == "numeric" and model._engine.history.numeric[0, 0] == seconds
    assert_saves_and_predicts_alike(model, [{"v": value}, {"v": seconds}])


@pytest.mark.parametrize("value", [1 + 2j, b"ab", frozenset({1}), 10**400, decimal.Decimal("1e400"), object(), ("t", b"x"), datetime.time(1)], ids=lambda v: type(v).__name__)
def test_values_a_saved_model_cannot_hold_are_refused_by_every_entry_point(value):
    model = trained()
    for x in ({"new": value}, {"a": value}, {"c": value}):
        assert_rejected(model, lambda: model.learn_one(x, 0), "feature '(new|a|c)'")
        assert_rejected(model, lambda: model.learn_many(pd.DataFrame({k: pd.Series([v], dtype=object) for k, v in x.items()}), [0]), "feature")
        with pytest.raises(ValueError, match="feature"):
            model.predict_proba_one(x)
    model.learn_one({"a": 1.0}, 1)
    assert_saves_and_predicts_alike(model, [{"a": 1.0, "c": "u"}])


def test_learn_many_keeps_no_timestamp_a_datetime_column_is_seconds():
    model = WeightedNaiveBayes(optimizer=weights.Uniform())
    X = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", "2021-01-01", None]), "c": ["u", "v", "u"]})
    model.learn_many(X, pd.Series([0, 1, 0]))
    assert [v.kind for v in model._engine.registry.variables] == ["categorical", "numeric"]
    one = WeightedNaiveBayes(optimizer=weights.Uniform())
    for x, y in zip(X.to_dict(orient="records"), [0, 1, 0]):
        one.learn_one(x, y)
    assert record(one) == record(model)
    assert_saves_and_predicts_alike(model, [{"d": pd.Timestamp("2020-06-01"), "c": "u"}])


@pytest.mark.parametrize("label", [frozenset({1}), b"a", decimal.Decimal(1), pd.Timestamp(0), 1j], ids=lambda v: type(v).__name__)
def test_labels_a_saved_model_cannot_hold_are_refused(label):
    model = trained()
    assert_rejected(model, lambda: model.learn_one({"a": 1.0}, label), "class label y")
    assert_rejected(model, lambda: model.learn_many(pd.DataFrame({"a": [1.0]}), [label]), "class label y")


def test_unsaveable_feature_names_are_refused_when_learning_and_ignored_when_predicting():
    model = trained()
    for name in (frozenset({1}), b"n", None):
        assert_rejected(model, lambda: model.learn_one({name: 1.0}, 0), "feature name")
        assert_rejected(model, lambda: model.learn_many(pd.DataFrame({name: [1.0]}), [0]), "feature name")
        assert model.predict_proba_one({name: 1.0}) == model.predict_proba_one({})


def test_an_empty_dataframe_learns_nothing_and_predicts_an_empty_frame():
    model = trained()
    before = record(model)
    for X in (pd.DataFrame(), pd.DataFrame({"a": pd.Series([], dtype=float)}), pd.DataFrame({"zz": []})):
        model.learn_many(X, pd.Series([], dtype=int))
        assert record(model) == before
        p = model.predict_proba_many(X)
        assert p.shape == (0, 2) and list(p.columns) == [0, 1]


def test_duplicate_column_names_are_refused():
    model = trained()
    X = pd.DataFrame([[1.0, 2.0]], columns=["a", "a"])
    assert_rejected(model, lambda: model.learn_many(X, [0]), "duplicate column names")
    with pytest.raises(ValueError, match="duplicate column names"):
        model.predict_proba_many(X)
    X = pd.DataFrame([[1.0, 2.0]], columns=["new", "new"])
    assert_rejected(model, lambda: model.learn_many(X, [0]), "duplicate column names")


def test_sample_weights_of_a_batch_follow_the_policy_of_learn_one():
    model = trained()
    X = pd.DataFrame({"a": [1.0, 2.0]})
    for w in ([True, 1.0], ["1", 1.0], [1.0, math.inf], [1.0, -1.0], [10**400, 1]):
        assert_rejected(model, lambda: model.learn_many(X, [0, 1], w), "w must hold one finite weight")


# ---------------------------------------------------------------------- 6. large sample weights
@pytest.mark.parametrize("numeric", [summaries.GKClass, summaries.Gaussian])
@pytest.mark.parametrize("big", [1e3, 1e6, 1e9, 1e100, 1e300])
def test_graphical_stays_finite_with_one_example_in_fifty_weighted_large(numeric, big):
    rng = np.random.default_rng(0)
    model = WeightedNaiveBayes(numeric=numeric(), optimizer=weights.Graphical(), seed=1)
    for i in range(400):
        x = {"a": float(rng.normal()), "b": float(rng.normal())}
        y = int(x["a"] + rng.normal() > 0)
        model.learn_one(x, y, w=big if i % 50 == 0 else 1.0)
        p = model.predict_proba_one(x)
        assert all(0.0 <= v <= 1.0 for v in p.values()) and math.isclose(sum(p.values()), 1.0)
    optimizer = model._engine.optimizer
    assert np.isfinite(optimizer.class_weights).all() and np.isfinite(optimizer.bias).all()
    assert np.abs(optimizer.class_weights - 1.0).max() <= 400 * weights.graphical.MAX_STEP
    model._check()
    assert_saves_and_predicts_alike(model, [{"a": 0.1, "b": -0.2}, {"a": 3.0}])


def test_the_total_weight_is_bounded_and_a_call_passing_the_bound_is_refused():
    from wnb_stream.summaries.policy import MAX_TOTAL_WEIGHT

    model = trained()
    model.learn_one({"a": 1.0}, 0, w=0.6 * MAX_TOTAL_WEIGHT)
    assert_rejected(model, lambda: model.learn_one({"a": 1.0}, 1, w=0.6 * MAX_TOTAL_WEIGHT), "total weight")
    assert_rejected(model, lambda: model.learn_many(pd.DataFrame({"a": [1.0, 2.0]}), [0, 1], [0.25 * MAX_TOTAL_WEIGHT] * 2), "total weight")
    model.learn_one({"a": 2.0}, 1, w=0.3 * MAX_TOTAL_WEIGHT)
    model._check()
    assert_saves_and_predicts_alike(model, [{"a": 1.0}, {"a": 2.0, "c": "u"}])
