"""Schemas and the registry (wnb_stream.io.schema, .registry): kinds, symbols, checks, and a
parent record holding its children's, registered the way the engine's records will be."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wnb_stream import io
from wnb_stream.summaries import Categorical, GKClass


class Shelf:
    """A parent of summaries, as a ``Variable`` holds its summary: registered by this test module."""

    def __init__(self, label: str, size: int = 2):
        self.label = label
        self.size = size
        self.summaries: list = []
        self.weights = np.zeros(0)
        self.spare = None


def _shelf_check(fields: io.Fields) -> None:
    if len(fields.state["summaries"]) > fields.params["size"]:
        fields.fail("summaries", f"more than size = {fields.params['size']} summaries")


def _shelf_build(fields: io.Fields) -> Shelf:
    shelf = Shelf(**fields.params)
    shelf.summaries = fields.state["summaries"]
    shelf.weights = fields.state["weights"]
    shelf.spare = fields.state["spare"]
    return shelf


SHELF = io.Schema(
    params={"label": io.Str(doc="a name"), "size": io.Int(low=1, doc="most summaries")},
    state={
        "summaries": io.List(io.Record("GKClass", "Categorical"), length="n_summaries", doc="child records"),
        "weights": io.Array("float64", ("n_summaries",), low=0.0, high=1.0, doc="one weight per summary"),
        "spare": io.Optional(io.Record(), doc="any registered record, or null"),
    },
    checks=(_shelf_check,),
)


@pytest.fixture(scope="module", autouse=True)
def shelf_entry():
    entry = io.register(
        "Shelf",
        Shelf,
        SHELF,
        state=lambda shelf: {"summaries": shelf.summaries, "weights": shelf.weights, "spare": shelf.spare},
        build=_shelf_build,
    )
    yield entry
    from wnb_stream.io import registry

    del registry._BY_NAME["Shelf"], registry._BY_CLASS[Shelf]


def make_shelf() -> Shelf:
    shelf = Shelf("numbers and colours")
    gk, colours = GKClass(), Categorical()
    for i in range(50):
        gk.update(i / 7, i % 3)
        colours.update(["red", "blue"][i % 2], i % 3)
    shelf.summaries = [gk, colours]
    shelf.weights = np.array([0.25, 1.0])
    shelf.spare = GKClass(max_tuples=5)
    return shelf


def test_a_parent_record_holds_its_children_records():
    shelf = make_shelf()
    record = io.to_record(shelf)
    assert record["params"] == {"label": "numbers and colours", "size": 2}
    assert [child["type"] for child in record["state"]["summaries"]] == ["GKClass", "Categorical"]
    assert record["state"]["spare"]["params"]["max_tuples"] == 5
    back = io.loads(io.dumps(shelf))
    assert json.dumps(io.to_record(back)) == json.dumps(record)
    assert type(back) is Shelf and back.label == shelf.label and back.weights.tolist() == [0.25, 1.0]
    assert [type(s) for s in back.summaries] == [GKClass, Categorical]
    assert back.summaries[0].table().counts.tolist() == shelf.summaries[0].table().counts.tolist()


def test_a_child_error_is_reported_at_its_path_in_the_parent():
    record = io.to_record(make_shelf())
    record["state"]["summaries"][1]["state"]["totals"] = io.to_record(make_shelf())["state"]["weights"]
    with pytest.raises(io.ModelFileError, match=r"^summaries\[1\].totals: expected shape \(3,\), got \(2,\)$"):
        io.from_record(record)
    record = io.to_record(make_shelf())
    record["state"]["summaries"][0]["type"] = "Uniform"
    with pytest.raises(io.ModelFileError, match=r"^summaries\[0\].type: expected a record of type GKClass or Categorical"):
        io.from_record(record)


def test_symbols_tie_a_list_length_to_an_array_shape():
    record = io.to_record(make_shelf())
    record["state"]["weights"] = io.values.encode(np.array([0.5, 0.5, 0.5]))
    with pytest.raises(io.ModelFileError, match=r"^weights: expected shape \(2,\), got \(3,\)$"):
        io.from_record(record)


def test_checks_run_with_the_loaded_fields():
    record = io.to_record(make_shelf())
    record["params"]["size"] = 1
    with pytest.raises(io.ModelFileError, match="^summaries: more than size = 1 summaries$"):
        io.from_record(record)


def test_params_ranges_and_types():
    record = io.to_record(make_shelf())
    record["params"]["size"] = 0
    with pytest.raises(io.ModelFileError, match="^size: must be >= 1, got 0$"):
        io.from_record(record)
    record["params"]["size"] = 2
    record["params"]["label"] = 3
    with pytest.raises(io.ModelFileError, match="^label: expected a string, got an integer$"):
        io.from_record(record)


def test_a_registered_name_or_class_cannot_be_taken_twice():
    with pytest.raises(ValueError, match="registered already"):
        io.register("Shelf", dict, SHELF, state=dict, build=dict)
    with pytest.raises(ValueError, match="registered already"):
        io.register("Other", Shelf, SHELF, state=dict, build=dict)


def test_subclasses_are_not_saved_as_their_base():
    class Mine(GKClass):
        pass

    with pytest.raises(TypeError, match="no record type is registered"):
        io.to_record(Mine())


def test_state_functions_must_give_exactly_the_schema_fields():
    schema = io.Schema(state={"a": io.Int()})
    with pytest.raises(ValueError, match=r"expected the fields \['a'\]"):
        schema.dump_state({"a": 1, "b": 2}, "x")


def test_a_field_name_in_both_params_and_state_is_refused():
    with pytest.raises(ValueError, match="unique across params and state"):
        io.Schema(params={"n": io.Int()}, state={"n": io.Int()})


@pytest.mark.parametrize(
    "kind, node, match",
    [
        (io.Int(low=0, high=3), 4, "must be <= 3, got 4"),
        (io.Int(below=3), 3, "must be < 3, got 3"),
        (io.Int(), 2.0, "expected an integer, got a float"),
        (io.Int(), True, "expected an integer, got a boolean"),
        (io.Float(above=0.0), 0.0, r"must be > 0.0, got 0.0"),
        (io.Float(), {"$": "float", "value": "inf"}, "must be finite, got inf"),
        (io.Float(finite=False), {"$": "float", "value": "nan"}, "must not be NaN"),
        (io.Float(), None, "expected a number, got null"),
        (io.Bool(), 1, "expected a boolean, got an integer"),
        (io.Str(choices=("a",)), "b", r"must be one of \['a'\], got 'b'"),
        (io.Keys(length=2), ["a"], "expected length 2, got 1"),
        (io.Keys(), [1, True], "True repeats item 0"),
        (io.Keys(), [1.0, 1], "1 repeats item 0"),
        (io.Keys(), [{"$": "float", "value": "nan"}], "NaN is a missing value"),
        (io.List(io.Int(), length=1), [1, 2], "expected length 1, got 2"),
        (io.Struct({"a": io.Int()}), {"a": 1, "b": 2}, r"^x.b: unexpected field$"),
        (io.Struct({"a": io.Int()}), {}, r"^x.a: missing field$"),
        (io.Struct({"a": io.Int()}), [1], "expected an object, got a list"),
        (io.Array("int64", (2,), low=0), io.values.encode(np.array([1, -1])), r"values must be >= 0, got -1 at index \(1,\)"),
        (io.Array("float64", ("n",), finite=False), io.values.encode(np.array([np.nan])), "must be free of NaN"),
        (io.Array("float64", (2,), increasing=True), io.values.encode(np.array([1.0, 1.0])), "must increase strictly"),
        (io.Array("bool", (1,)), io.values.encode(np.array([1])), "expected dtype bool, got int64"),
    ],
)
def test_kinds_refuse_what_they_do_not_describe(kind, node, match):
    with pytest.raises(io.ModelFileError, match=match):
        kind.load(node, "x", {})


def test_kinds_accept_what_they_describe():
    scope: dict = {}
    assert io.Float(finite=False).load({"$": "float", "value": "-inf"}, "x", scope) == -np.inf
    assert io.Float().load(3, "x", scope) == 3 and type(io.Float().load(3, "x", scope)) is int
    assert io.Keys(length="n").load(["a", 1, 2.5, False, {"$": "tuple", "items": [None, 1]}], "x", scope) == ["a", 1, 2.5, False, (None, 1)]
    assert scope == {"n": 5}
    array = io.Array("float64", ("n", 2)).load(io.values.encode(np.zeros((5, 2))), "x", scope)
    assert array.shape == (5, 2)
    assert io.Optional(io.Int()).load(None, "x", scope) is None


def test_schema_markdown_lists_every_field_flattened():
    text = SHELF.markdown()
    assert text.splitlines()[0] == "| field | in | kind | meaning |"
    assert "| `weights` | state | float64 (n_summaries,), >= 0.0, <= 1.0, finite | one weight per summary |" in text
    assert "| `summaries` | state | list of record (GKClass or Categorical) (length n_summaries) | child records |" in text


def test_object_arrays_hold_raw_values_element_by_element():
    kind = io.Array("object", ("n_rows", 2), doc="raw values of two categorical columns")
    raw = np.empty((2, 2), dtype=object)
    raw[:] = [["red", None], [1.5, ("t", 2)]]
    back = kind.load(kind.dump(raw, "raw"), "raw", {})
    assert back.dtype == object and back.tolist() == raw.tolist()
    node = kind.dump(raw, "raw")
    node["items"][3] = [1, 2]
    with pytest.raises(io.ModelFileError, match=r"^raw\[3\]: an object array may only hold scalars and tuples$"):
        kind.load(node, "raw", {})
