"""The whole model's record: a saved model predicts and keeps learning exactly as the original.

``WeightedNaiveBayes.save`` / ``load`` / ``to_dict`` / ``from_dict`` go through the records of
``docs/saved-model.md``; a loaded model is checked against the schema before anything is built.
"""

from __future__ import annotations

import copy
import gzip
import json

import numpy as np
import pandas as pd
import pytest
from io_cases import model_cases, model_rows

from wnb_stream import WeightedNaiveBayes, io, summaries, weights

CONFIGS = {
    "vns": {},
    "uniform": {"optimizer": weights.Uniform()},
    "pgdmb": {"optimizer": weights.PGDMB(batch_size=40)},
    "fnb": {"optimizer": weights.FNB()},
    "fnb-vns": {"optimizer": weights.FNB(refine=weights.VNS())},
    "snb": {"optimizer": weights.SNB(max_variables=3)},
    "graphical": {"optimizer": weights.Graphical()},
    "cpid": {"numeric": summaries.CPiD()},
    "gaussian": {"numeric": summaries.Gaussian()},
    "sketch": {"categorical": summaries.Categorical(max_values=3, top_k=2, epsilon=0.05)},
    "fading": {"half_life": 256},
}


def _frame(rows):
    return pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows])


@pytest.mark.parametrize("history_size", [5000, 37])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_a_loaded_model_predicts_and_learns_as_the_original(tmp_path, config, history_size):
    rows = model_rows(900, seed=hash((config, history_size)) % 1000)
    original = WeightedNaiveBayes(seed=2, history_size=history_size, **CONFIGS[config])
    for x, y in rows[:400]:
        original.learn_one(x, y)
    path = tmp_path / "model.wnb"
    original.save(path)
    copy_ = WeightedNaiveBayes.load(path)
    copy_._check()
    assert copy_.classes == original.classes and copy_.weights == original.weights
    for x, y in rows[400:700]:  # per instance, a new class and a new feature among them
        assert copy_.predict_proba_one(x) == original.predict_proba_one(x)
        original.learn_one(x, y)
        copy_.learn_one(x, y)
    X, Y = _frame(rows[700:])
    original.learn_many(X, Y)
    copy_.learn_many(X, Y)
    pd.testing.assert_frame_equal(copy_.predict_proba_many(X), original.predict_proba_many(X), check_exact=True)
    assert copy_.weights == original.weights
    copy_._check()


@pytest.mark.parametrize("absent", [None, 0.0])
def test_a_model_that_fades_its_past_loads_between_its_rebuilds(absent):
    """A fade (every 256 rows with ``half_life``) shrinks the class counts while a partition keeps
    the weight of its last rebuild: the model saved then loads, and predicts the same."""
    rows = model_rows(330, seed=4)
    model = WeightedNaiveBayes(seed=2, half_life=256, absent=absent)
    exceeding = 0  # round trips of a model with a partition heavier than its class counts
    for i, (x, y) in enumerate(rows):
        model.learn_one(x, y)
        if i >= 250 and i % 4 == 0:
            counts = model._engine.classes.counts
            exceeding += any(
                np.any(v.model.counts.sum(axis=0) > counts[: v.model.counts.shape[1]] * (1 + 1e-6))
                for v in model._engine.registry.variables
                if v.model is not None
            )
            copy_ = io.loads(io.dumps(model))
            assert copy_.predict_proba_one(x) == model.predict_proba_one(x)
    assert exceeding  # (the test means something)


def test_to_dict_is_json_and_from_dict_gives_the_same_record():
    model = WeightedNaiveBayes(seed=1)
    for x, y in model_rows(300, seed=7):
        model.learn_one(x, y)
    record = model.to_dict()
    text = json.dumps(record)
    again = WeightedNaiveBayes.from_dict(json.loads(text))
    assert json.dumps(again.to_dict()) == text
    assert record["type"] == "WeightedNaiveBayes"
    assert set(record["state"]) == {"classes", "registry", "history", "schedule", "learner", "slots", "monitor"}
    assert "log_lik" not in text  # the encoded window is rebuilt, not saved


def test_the_default_model_trained_on_phishing_saves_in_under_200_kb(tmp_path):
    from river import datasets

    model = WeightedNaiveBayes(seed=42)
    for x, y in datasets.Phishing():
        model.learn_one(x, y)
    path = tmp_path / "phishing.wnb"
    model.save(path)
    assert path.stat().st_size <= 200_000
    assert WeightedNaiveBayes.load(path).predict_proba_one(x) == model.predict_proba_one(x)


@pytest.fixture(scope="module")
def record():
    model = WeightedNaiveBayes(seed=3, history_size=60)
    for x, y in model_rows(200, seed=8):
        model.learn_one(x, y)
    return model.to_dict()


def _variables(record):
    """The variables' records, a list: the damages edit them as such (``_damage`` writes them
    back as the registry's table of columns, format version 9)."""
    return record["state"]["registry"]["state"]["variables"]


def _damage(record, change):
    damaged = copy.deepcopy(record)
    state = damaged["state"]["registry"]["state"]
    state["variables"] = io.column_records.table_to_records(state["variables"])
    change(damaged)
    state["variables"] = io.column_records.records_to_table(state["variables"])
    return damaged


def _history(record):
    return record["state"]["history"]["state"]


def _next_column(history):
    """Each numeric entry's column moved to the next numeric column (a valid column, not its own)."""
    column = io.values.decode_array(history["column"])
    assert history["n_numeric"] >= 2
    return np.where(column >= 0, (column + 1) % history["n_numeric"], column)


def _array(node, array):
    encoded = io.values.encode_array(np.asarray(array), "")
    node.clear()
    node.update(encoded)


DAMAGES = {
    "history holds more rows than history_size": (lambda r: r["params"].__setitem__("history_size", 10), "history"),
    "a class index beyond the classes": (lambda r: _array(_history(r)["y"], np.full(60, 7, dtype=np.int64)), "history.y"),
    "a history column too few": (lambda r: _history(r).__setitem__("n_numeric", _history(r)["n_numeric"] + 1), "history: its columns"),
    "a history entry in another column": (lambda r: _array(_history(r)["column"], _next_column(_history(r))), "history.column"),
    "a variable twice in a row": (lambda r: _array(_history(r)["variable"], np.zeros_like(io.values.decode_array(_history(r)["variable"]))), "history.variable"),
    "a locator part beyond the partition": (
        lambda r: _variables(r)[0]["state"]["locator"].__setitem__("missing_part", 99),
        "locator.missing_part",
    ),
    "cut points out of order": (
        lambda r: _array(_variables(r)[0]["state"]["locator"]["cuts"], np.array([2.0, 1.0, 3.0] + [0.0] * 0)),
        "locator",
    ),
    "a summary of the wrong kind": (
        lambda r: _variables(r)[0]["state"].__setitem__("kind", "categorical"),
        "variables[0]",
    ),
    "a feed clock ahead of the history": (lambda r: _array(r["state"]["registry"]["state"]["synced"], np.full(len(_variables(r)), 10**6)), "synced"),
    "two variables of one name": (lambda r: _variables(r)[1]["state"].__setitem__("name", _variables(r)[0]["state"]["name"]), "variables"),
    "a negative class count": (lambda r: _array(r["state"]["classes"]["state"]["counts"], -np.ones(3)), "counts"),
    "an unknown learner": (lambda r: r["state"]["learner"].__setitem__("type", "builtins.eval"), "learner"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_record_gives_one_clear_error(record, damage):
    change, where = DAMAGES[damage]
    with pytest.raises(io.ModelFileError, match=where.replace("[", r"\[").replace("]", r"\]")):
        WeightedNaiveBayes.from_dict(_damage(record, change))


def test_files_of_a_newer_version_truncated_or_corrupt_are_refused(tmp_path):
    model = WeightedNaiveBayes(seed=0)
    for x, y in model_rows(100, seed=9):
        model.learn_one(x, y)
    data = io.dumps(model)
    document = json.loads(gzip.decompress(data))
    newer = tmp_path / "newer.wnb"
    newer.write_bytes(json.dumps(dict(document, version=io.VERSION + 1)).encode())
    with pytest.raises(io.ModelFileError, match="newer"):
        WeightedNaiveBayes.load(newer)
    for cut in (10, len(data) // 2, len(data) - 3):
        truncated = tmp_path / f"cut{cut}.wnb"
        truncated.write_bytes(data[:cut])
        with pytest.raises(io.ModelFileError):
            WeightedNaiveBayes.load(truncated)
    plain = json.dumps(document)
    flipped = tmp_path / "flipped.wnb"
    flipped.write_text(plain.replace('"history_size": 5000', '"history_size": 5001'))
    with pytest.raises(io.ModelFileError, match="checksum"):
        WeightedNaiveBayes.load(flipped)


def test_loading_a_file_of_another_record_type_is_refused(tmp_path):
    path = tmp_path / "summary.wnb"
    io.save(summaries.GKClass(), path)
    with pytest.raises(io.ModelFileError, match="GKClass"):
        WeightedNaiveBayes.load(path)


@pytest.mark.parametrize("name,make", model_cases(), ids=[name for name, _ in model_cases()])
def test_every_model_fixture_case_round_trips_to_the_same_bytes(name, make):
    model = make()
    assert io.dumps(io.loads(io.dumps(model))) == io.dumps(model)
