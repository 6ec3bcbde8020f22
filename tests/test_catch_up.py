"""A model that serves catches up (``catch_up``, docs/algorithms/prediction.md#catching-up): level 2
of every variable rebuilt on all its rows and one step of the weights, when it predicts another
row without having learned since its last prediction; at most once per growth of its rows by
``rebuild_growth``; never in a test-then-train stream."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wnb_stream import WeightedNaiveBayes, io, weights


def stream(n: int, seed: int, K: int = 6) -> list:
    """Rows whose class depends on the first three features, the others noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        x = rng.normal(size=K)
        y = int(x[0] + 0.7 * x[1] - 0.5 * x[2] + 0.6 * rng.normal() > 0)
        rows.append(({f"x{k}": float(v) for k, v in enumerate(x)}, y))
    return rows


def trained(rows, **params) -> WeightedNaiveBayes:
    model = WeightedNaiveBayes(seed=1, **params)
    for x, y in rows:
        model.learn_one(x, y)
    return model


def held_in_level_2(model) -> list:
    """Per variable, the rows its level 2 was built on (its partition's total count)."""
    return [float(v.model.counts.sum()) for v in model._engine.registry.variables]


def test_a_model_that_serves_predicts_with_level_2_built_on_all_its_rows():
    # 216 rows: level 2 was last rebuilt before the end (the schedule's points grow by a quarter)
    rows, test = stream(216, 0), stream(20, 1)
    stale = trained(rows, catch_up=False)
    model = trained(rows)
    built = held_in_level_2(stale)
    assert held_in_level_2(model) == built and max(built) < 216
    model.predict_proba_one(test[0][0])  # (the first prediction after learning: not serving yet)
    assert held_in_level_2(model) == built
    for x, _ in test[1:]:
        model.predict_proba_one(x)
        stale.predict_proba_one(x)
    assert held_in_level_2(model) == [216.0] * 6
    assert held_in_level_2(stale) == built
    assert model._engine.schedule.caught_up == 216
    model._check()


def test_catching_up_predicts_what_a_model_rebuilt_and_stepped_on_all_its_rows_predicts():
    rows, test = stream(300, 2), stream(30, 3)
    model, by_hand = trained(rows), trained(rows, catch_up=False)
    engine = by_hand._engine
    engine._rebuild(np.arange(len(engine.registry), dtype=np.intp))
    engine.schedule.count_down(engine.registry, engine.classes)
    engine._step(engine.history.size)
    model.predict_proba_one(test[0][0])
    assert [model.predict_proba_one(x) for x, _ in test[1:]] == [by_hand.predict_proba_one(x) for x, _ in test[1:]]
    assert model.weights == by_hand.weights


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 400), seed=st.integers(0, 2**16), optimizer=st.sampled_from(["VNS", "PGDMB", "Uniform"]))
def test_a_test_then_train_stream_learns_and_predicts_the_same_with_or_without_catching_up(n, seed, optimizer):
    models = [WeightedNaiveBayes(seed=1, optimizer=getattr(weights, optimizer)(), catch_up=c) for c in (True, False)]
    for x, y in stream(n, seed):
        predictions = [m.predict_proba_one(x) for m in models]
        assert predictions[0] == predictions[1]
        for m in models:
            m.learn_one(x, y)
    assert models[0].weights == models[1].weights
    assert models[0]._engine.schedule.caught_up == 0
    records = [io.to_record(m) for m in models]
    for record in records:  # (the same but for the setting and the count at the last prediction)
        record["params"].pop("catch_up")
        record["state"]["schedule"]["state"].pop("served")
    assert records[0] == records[1]


def test_predicting_the_same_row_twice_is_one_prediction():
    rows, test = stream(200, 4), stream(3, 5)
    model = trained(rows)
    x = test[0][0]
    first = model.predict_proba_one(x)
    assert model.predict_one(x) == max(first, key=first.get)
    assert model.predict_proba_one(dict(x)) == first  # an equal dict is the same row
    assert model._engine.schedule.caught_up == 0
    model.predict_proba_one(test[1][0])
    assert model._engine.schedule.caught_up == 200


def test_a_model_catches_up_at_most_once_per_growth_of_its_rows():
    # serve two rows after every 10 rows learned: without the bound, a catch-up every 10 rows
    model = WeightedNaiveBayes(seed=1, rebuild_growth=0.25)
    catch_ups = []
    for t, (x, y) in enumerate(stream(1000, 6), start=1):
        model.learn_one(x, y)
        if t % 10 == 0:
            before = model._engine.schedule.caught_up
            model.predict_proba_one(x)
            model.predict_proba_one({**x, "x0": x["x0"] + 1.0})
            if model._engine.schedule.caught_up != before:
                catch_ups.append(t)
    assert catch_ups and catch_ups[0] <= 40  # (the first after the dense early rebuilds left level 2 behind)
    assert all(later >= 1.25 * earlier for earlier, later in zip(catch_ups, catch_ups[1:]))
    assert len(catch_ups) <= 1 + np.log(100) / np.log(1.25)
    model._check()


def test_with_catch_up_false_predictions_never_change_the_model():
    rows, test = stream(150, 7), stream(20, 8)
    model = trained(rows, catch_up=False)
    before = io.dumps(model)
    for x, _ in test:
        model.predict_proba_one(x)
    model.predict_proba_many(pd.DataFrame([x for x, _ in test]))
    assert io.dumps(model) == before


def test_a_batch_of_rows_serves_and_predicts_as_a_loop_over_them_after_it():
    # River's check: predict_proba_many on a batch agrees with predict_proba_one on each of its rows
    rows, test = stream(216, 9), stream(10, 10)
    model = trained(rows)
    X = pd.DataFrame([x for x, _ in test])
    many = model.predict_proba_many(X)  # two rows or more, no learning between them: it serves
    assert model._engine.schedule.caught_up == 216
    for i, (x, _) in enumerate(test):
        one = model.predict_proba_one(x)
        np.testing.assert_allclose(many.iloc[i].to_numpy(), [one[c] for c in many.columns], rtol=0, atol=1e-12)
    single = trained(rows)
    single.predict_proba_many(X.iloc[:1])  # one row: a prediction like predict_proba_one's
    assert single._engine.schedule.caught_up == 0


def test_a_predictor_is_made_from_the_caught_up_model_unless_told_not_to():
    rows, test = stream(216, 14), stream(10, 15)
    model, stale = trained(rows), trained(rows)
    fresh = model.predictor()
    assert model._engine.schedule.caught_up == 216
    as_trained = stale.predictor(catch_up=False)
    assert stale._engine.schedule.caught_up == 0
    assert [fresh.predict_proba_one(x) for x, _ in test] == [model.predict_proba_one(x) for x, _ in test]
    assert [as_trained.predict_proba_one(x) for x, _ in test] != [fresh.predict_proba_one(x) for x, _ in test]


def test_a_saved_model_goes_on_serving_as_the_original():
    rows, test = stream(260, 11), stream(20, 12)
    model = trained(rows)
    twin = io.loads(io.dumps(model))
    assert [twin.predict_proba_one(x) for x, _ in test] == [model.predict_proba_one(x) for x, _ in test]
    assert twin._engine.schedule.caught_up == model._engine.schedule.caught_up == 260
    for x, y in stream(100, 13):
        model.learn_one(x, y)
        twin.learn_one(x, y)
    assert io.dumps(twin) == io.dumps(model)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_catch_up_must_be_a_bool(value):
    with pytest.raises(ValueError, match="catch_up"):
        WeightedNaiveBayes(catch_up=value)


def test_once_caught_up_a_batch_and_a_loop_of_rows_predict_alike():
    rows, test = stream(216, 0), stream(12, 17)
    model = trained(rows)
    model.predictor()  # (caught up: the next catch-up waits for the rows to grow by a quarter)
    many = model.predict_proba_many(pd.DataFrame([x for x, _ in test]))
    for i, (x, _) in enumerate(test):
        one = model.predict_proba_one(x)
        np.testing.assert_allclose(many.iloc[i].to_numpy(), [one[c] for c in many.columns], rtol=0, atol=1e-12)
    assert model._engine.schedule.caught_up == 216


def test_a_sparse_model_catches_up_as_a_dense_one():
    rng = np.random.default_rng(18)
    rows = []
    for _ in range(300):
        y = int(rng.integers(0, 2))
        rows.append(({f"w{k}": 1.0 for k in range(40) if rng.random() < (0.5 if k < 4 and y else 0.1)}, y))
    model = trained(rows[:250], absent=0.0)
    for x, _ in rows[250:]:
        p = model.predict_proba_one(x)
        assert abs(sum(p.values()) - 1.0) < 1e-12
    assert model._engine.schedule.caught_up == 250
    model._check()
    twin = io.loads(io.dumps(model))
    assert [twin.predict_proba_one(x) for x, _ in rows[:20]] == [model.predict_proba_one(x) for x, _ in rows[:20]]


def test_a_window_of_one_class_is_not_stepped_on():
    # a stream sorted by class, the window (100 rows) holding the last class only: the catch-up
    # rebuilds level 2 and leaves the weights; shuffled, the same rows make it step
    rows = stream(400, 19)
    ordered = sorted(rows, key=lambda row: row[1])
    sorted_model = trained(ordered, history_size=100, drift_delta=None)
    shuffled_model = trained(rows, history_size=100, drift_delta=None)
    test, stepped = stream(3, 20), []
    for model in (sorted_model, shuffled_model):
        steps = model._engine.optimizer.n_steps
        for x, _ in test:
            model.predict_proba_one(x)
        assert model._engine.schedule.caught_up == 400
        assert held_in_level_2(model) == [400.0] * 6
        stepped.append(model._engine.optimizer.n_steps - steps)
    assert stepped == [0, 1]
