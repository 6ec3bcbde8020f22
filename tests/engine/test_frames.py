"""Mini-batches from any table: polars, pyarrow, NumPy arrays and lists of dicts give the model pandas gives."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes
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
