"""Mini-batches from any table: polars, pyarrow, NumPy arrays and lists of dicts give the model pandas gives."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes, io
from wnb_stream.engine.frames import as_pandas

polars = pytest.importorskip("polars")
pyarrow = pytest.importorskip("pyarrow")


def _rows(n: int):
    rows = []
    for i, (x, y) in enumerate(itertools.islice(synth.Agrawal(seed=3, classification_function=2), n)):
        x = {"salary": x["salary"], "age": float(x["age"]), "car": f"c{x['car']}", "loan": x["loan"]}
        if i % 9 == 0:
            x["age"] = None
        if i % 13 == 0:
            x["car"] = None
        rows.append((x, y))
    return rows


def _learned(to_table, rows, batch: int = 150):
    model = WeightedNaiveBayes(seed=4)
    outputs = []
    for i in range(0, len(rows), batch):
        piece = rows[i : i + batch]
        X = to_table([x for x, _ in piece])
        if i:
            outputs.append(model.predict_proba_many(X).to_numpy())
        model.learn_many(X, [y for _, y in piece])
    return np.concatenate(outputs), model.weights


TABLES = {
    "polars": lambda dicts: polars.DataFrame(dicts),
    "pyarrow": lambda dicts: pyarrow.Table.from_pylist(dicts),
    "list of dicts": lambda dicts: dicts,
}


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_every_table_kind_gives_the_model_pandas_gives(kind):
    rows = _rows(900)
    expected, expected_weights = _learned(lambda dicts: pd.DataFrame(dicts), rows)
    found, found_weights = _learned(TABLES[kind], rows)
    np.testing.assert_array_equal(found, expected)
    assert found_weights == expected_weights


def test_numpy_arrays_name_their_features_by_position_and_structured_arrays_by_field():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + X[:, 2] > 0).tolist()
    a, b = WeightedNaiveBayes(seed=1), WeightedNaiveBayes(seed=1)
    a.learn_many(X, y)
    b.learn_many(pd.DataFrame(X), y)
    assert a.weights == b.weights and sorted(a.weights) == [0, 1, 2]
    np.testing.assert_array_equal(a.predict_proba_many(X).to_numpy(), b.predict_proba_many(pd.DataFrame(X)).to_numpy())
    structured = np.zeros(400, dtype=[("u", float), ("v", float), ("w", float)])
    for i, name in enumerate("uvw"):
        structured[name] = X[:, i]
    c = WeightedNaiveBayes(seed=1)
    c.learn_many(structured, y)
    assert sorted(c.weights) == ["u", "v", "w"]


@pytest.mark.parametrize("bad", [np.zeros(3), "a,b", 3.0, [{"a": 1}, 2], {"a": [1, 2]}])
def test_what_is_not_a_table_is_refused_naming_x_and_nothing_changes(bad):
    model = WeightedNaiveBayes(seed=0)
    model.learn_one({"a": 1.0}, True)
    before = model.to_dict()
    with pytest.raises(ValueError, match="X"):
        model.learn_many(bad, [True] * 3)
    with pytest.raises(ValueError, match="X"):
        model.predict_proba_many(bad)
    assert model.to_dict() == before


def test_a_pandas_frame_is_used_as_it_is():
    X = pd.DataFrame({"a": [1.0, 2.0]})
    assert as_pandas(X) is X


LABEL_TYPES = {
    "str": ["x", "y", "x", "z", "y", "x"],
    "bool": [True, False, True, True, False, True],
    "int": [1, 2, 1, 3, 2, 1],
    "float": [1.5, 2.5, 1.5, 3.5, 2.5, 1.5],
}
LABEL_COLUMNS = {
    "pyarrow Array": lambda labels: pyarrow.array(labels),
    "pyarrow ChunkedArray": lambda labels: pyarrow.chunked_array([labels[:2], labels[2:]]),
    "pyarrow table column": lambda labels: pyarrow.table({"y": labels})["y"],
    "polars Series": lambda labels: polars.Series(labels),
    "pandas Series": lambda labels: pd.Series(labels),
    "pandas arrow Series": lambda labels: pd.Series(labels).astype(pd.ArrowDtype(pyarrow.array(labels).type)),
}


@pytest.mark.parametrize("table", ["pandas", *sorted(TABLES)])
@pytest.mark.parametrize("column", sorted(LABEL_COLUMNS))
@pytest.mark.parametrize("label_type", sorted(LABEL_TYPES))
def test_labels_of_every_type_from_every_column_kind_give_the_model_a_list_gives(table, column, label_type):
    # issue 32: a pyarrow column of str or bool labels raised ArrowInvalid (zero-copy conversion)
    labels = LABEL_TYPES[label_type]
    dicts = [{"a": float(i), "c": "uv"[i % 2]} for i in range(len(labels))]
    X = pd.DataFrame(dicts) if table == "pandas" else TABLES[table](dicts)
    expected, found = WeightedNaiveBayes(seed=2), WeightedNaiveBayes(seed=2)
    expected.learn_many(pd.DataFrame(dicts), list(labels))
    found.learn_many(X, LABEL_COLUMNS[column](labels))
    assert found.to_dict() == expected.to_dict()
    classes = list(found.predict_proba_one(dicts[0]))
    assert classes == list(expected.predict_proba_one(dicts[0]))
    assert [type(c) for c in classes] == [type(labels[0])] * len(classes)  # Python values, not NumPy scalars


@pytest.mark.parametrize("column", ["pyarrow Array", "polars Series", "pandas Series"])
@pytest.mark.parametrize("labels", [["x", None, "y"], [True, None, False], [1, None, 2], [1.0, None, 2.0]], ids=repr)
def test_a_null_label_in_a_column_is_refused_naming_y_and_nothing_changes(column, labels):
    model = WeightedNaiveBayes(seed=0)
    model.learn_one({"a": 1.0}, labels[0])
    before = model.to_dict()
    with pytest.raises(ValueError, match=r"\by\b"):
        model.learn_many(pyarrow.table({"a": [1.0, 2.0, 3.0]}), LABEL_COLUMNS[column](labels))
    assert model.to_dict() == before


def test_sample_weights_from_a_pyarrow_or_polars_column():
    X = pyarrow.table({"a": [1.0, 2.0, 3.0]})
    expected = WeightedNaiveBayes(seed=0)
    expected.learn_many(X, ["x", "y", "x"], w=[1.0, 2.0, 0.5])
    for w in (pyarrow.array([1.0, 2.0, 0.5]), polars.Series([1.0, 2.0, 0.5])):
        model = WeightedNaiveBayes(seed=0)
        model.learn_many(X, pyarrow.array(["x", "y", "x"]), w=w)
        assert model.to_dict() == expected.to_dict()


def assert_same_record(a: WeightedNaiveBayes, b: WeightedNaiveBayes) -> None:
    """``a`` and ``b`` save the same record but for the schedule's countdown (``Schedule.quiet``,
    the rows during which no check is needed): a batch counts a chunk at once, so it restarts
    the countdown at the chunk's end, where a loop restarted it at an earlier row. Both are
    bounds that hold (tested by ``_check``), so the same rebuilds follow."""
    ra, rb = a.to_dict(), b.to_dict()
    for record in (ra, rb):
        record["state"]["schedule"]["state"].pop("quiet")
    assert ra == rb


def _without_countdown(model) -> dict:
    """A model's saved payload with the rebuild countdown taken out (see its use)."""
    import gzip
    import json

    payload = json.loads(gzip.decompress(io.dumps(model)))["payload"]
    payload["state"]["schedule"]["state"]["quiet"] = None
    return payload


def test_a_key_absent_from_a_dict_of_a_batch_is_read_as_absent_says():
    """The rows of issue 33: with ``absent=0`` an absent word is a 0, not a missing value, in
    ``learn_many`` and ``predict_proba_many`` of a list of dicts as in a ``learn_one`` loop; with
    ``absent=None`` an absent key is not counted (a None is a missing value, counted)."""
    rows = [({"agenda": 1}, "ham")] * 10 + [({"cheap": 1}, "spam")] * 10
    loop, batch = (WeightedNaiveBayes(absent=0, seed=0, catch_up=False) for _ in range(2))  # (one state: no catch-up)
    for x, y in rows:
        loop.learn_one(x, y)
    batch.learn_many([x for x, _ in rows], [y for _, y in rows])
    assert io.dumps(batch) == io.dumps(loop)
    assert loop.predict_proba_one({"cheap": 1})["spam"] > 0.99
    probes = [{"cheap": 1}, {"agenda": 1}, {}]
    many = batch.predict_proba_many(probes)
    for i, x in enumerate(probes):
        np.testing.assert_allclose(many.iloc[i].to_numpy(), list(loop.predict_proba_one(x).values()), rtol=0, atol=1e-12)
    optional = [({"a": 1.0, "c": "u"}, "x"), ({"b": 2.0}, "y"), ({"a": None, "b": 1.0, "c": None}, "x")] * 30
    loop, batch = (WeightedNaiveBayes(seed=0, catch_up=False) for _ in range(2))
    for x, y in optional:
        loop.learn_one(x, y)
    batch.learn_many([x for x, _ in optional], [y for _, y in optional])
    # Known difference: the rebuild countdown (``schedule.quiet``, a lower bound on the rows before
    # any rebuild can fall due) is recomputed where each path checks. With missing values the loop
    # checks at rows a chunk does not end at, so the two bounds may differ; both are valid (the
    # engine's own check), rebuilds fall due at the same rows, and everything else is equal.
    loop._engine._check(), batch._engine._check()
    assert _without_countdown(batch) == _without_countdown(loop)
    probes = [x for x, _ in optional[:3]] + [{}]
    many = batch.predict_proba_many(probes)
    for i, x in enumerate(probes):
        np.testing.assert_allclose(many.iloc[i].to_numpy(), list(loop.predict_proba_one(x).values()), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
@pytest.mark.parametrize("absent", [0, None])
def test_a_table_without_a_column_reads_its_feature_as_absent(kind, absent):
    """A table has no absent key but a column it does not hold: a model's feature missing from a
    table's columns is absent from every row, as in a loop over dicts without that key; its cells
    (NaN, null) are missing values, as in dicts holding None."""
    rng = np.random.default_rng(1)
    first = [{"u": float(rng.normal(j)), "v": float(rng.normal(-j))} for j in (0, 1) * 40]
    second = [{"u": float(rng.normal(j)) if i % 7 else None} for i, j in enumerate((0, 1) * 40)]
    ys = ["ab"[j] for j in (0, 1) * 40]
    make = {"pandas": pd.DataFrame, "polars": polars.DataFrame, "pyarrow": pyarrow.Table.from_pylist}[kind]
    # (predictions on one state of the model: no catch-up, docs/algorithms/prediction.md#catching-up)
    loop, batch = (WeightedNaiveBayes(absent=absent, seed=2, catch_up=False) for _ in range(2))
    for x, y in zip(first + second, ys + ys):
        loop.learn_one(x, y)
    batch.learn_many(make(first), ys)
    batch.learn_many(make(second), ys)
    assert_same_record(batch, loop)
    many = batch.predict_proba_many(make(second[:10]))
    for i, x in enumerate(second[:10]):
        np.testing.assert_allclose(many.iloc[i].to_numpy(), list(loop.predict_proba_one(x).values()), rtol=0, atol=1e-12)
