"""The variables of a model as a table of columns (format version 9, ``wnb_stream.io.columns``):
round trips for every summary kind and a wide sparse model, the migration of version-8 files,
and hostile tables refused naming the variable and field."""

from __future__ import annotations

import copy
import gzip
import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from io_cases import PROBES, model_cases, model_rows, trained_model

from wnb_stream import WeightedNaiveBayes, io
from wnb_stream.io import column_records, columns
from wnb_stream.summaries import Categorical, CPiD, Gaussian, GKClass

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
MODEL_CASES = dict(model_cases())


def _predictions(model, rows) -> list:
    return [model.predict_proba_one(x) for x in rows]


def _table(record: dict) -> dict:
    return record["state"]["registry"]["state"]["variables"]


def _records_in(node) -> int:
    """Records in a JSON payload (nodes with a ``type`` and a ``state``)."""
    stack, found = [node], 0
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found += "type" in item and "state" in item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


# ------------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize(
    "numeric, categorical",
    [
        (GKClass(), None),
        (GKClass(max_tuples=8, buffer_size=7), None),
        (CPiD(n_bins=12, warm_up=30), None),
        (Gaussian(), None),
        (None, Categorical()),
        (None, Categorical(max_values=3, top_k=2, epsilon=0.05)),
    ],
    ids=["gk", "gk-budget", "cpid", "gaussian", "categorical-exact", "categorical-sketch"],
)
def test_a_model_of_every_summary_kind_round_trips_bit_for_bit(numeric, categorical):
    options = {k: v for k, v in (("numeric", numeric), ("categorical", categorical)) if v is not None}
    model = trained_model(model_rows(400, 7), **options)
    data = io.dumps(model)
    twin = io.loads(data)
    assert io.dumps(twin) == data  # the same payload, byte for byte
    probes = PROBES + [x for x, _ in model_rows(60, 8)]
    assert _predictions(twin, probes) == _predictions(model, probes)
    assert io.dumps(twin) == io.dumps(model)  # both served the same rows: they caught up alike
    for x, y in model_rows(150, 9):  # and it learns on as the original does
        model.learn_one(x, y)
        twin.learn_one(x, y)
    assert _predictions(twin, probes) == _predictions(model, probes)
    assert io.dumps(twin) == io.dumps(model)


def _wide_sparse_model(n_features: int, n_rows: int, seed: int) -> WeightedNaiveBayes:
    """A wide sparse stream: counts of ``n_features`` possible words (a few dozen per row, most
    words rare) and a categorical feature of hundreds of values, ``absent = 0``."""
    rng = np.random.default_rng(seed)
    model = WeightedNaiveBayes(absent=0.0, history_size=300, seed=seed)
    rate = 1.0 / np.arange(1, n_features + 1)
    rate *= 30 / rate.sum()
    for _ in range(n_rows):
        y = int(rng.integers(0, 2))
        on = np.flatnonzero(rng.random(n_features) < np.minimum(rate * (1.5 if y else 1.0), 0.9))
        x = {f"w{k}": float(1 + rng.poisson(0.5)) for k in on.tolist()}
        if rng.random() < 0.5:
            x["site"] = f"s{int(rng.zipf(1.3)) % 500}"
        model.learn_one(x, y)
    return model


def test_a_wide_sparse_model_round_trips_as_a_few_records():
    model = _wide_sparse_model(5000, 600, seed=3)
    n_variables = len(model._engine.registry)
    assert n_variables > 2000
    record = io.to_record(model)
    assert _records_in(record) < 40  # not a record per variable and per summary
    twin = io.loads(io.dumps(model))
    probes = [dict(x) for x in ({"w1": 2.0, "w7": 1.0, "site": "s3"}, {"w4000": 1.0}, {"site": "s499"}, {})]
    probes += [{f"w{k}": 1.0 for k in range(i, 5000, 97)} for i in range(20)]
    assert io.to_record(twin) == record
    assert _predictions(twin, probes) == _predictions(model, probes)
    assert io.to_record(twin) == io.to_record(model)  # (both served the same rows: caught up alike)
    assert [v.name for v in twin._engine.registry.variables] == [v.name for v in model._engine.registry.variables]


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(0, 120),
    numeric=st.sampled_from(["gk", "cpid", "gaussian"]),
    absent=st.sampled_from([None, 0.0]),
)
def test_load_of_save_predicts_identically(seed, n, numeric, absent):
    summary = {"gk": GKClass(buffer_size=16), "cpid": CPiD(n_bins=8, warm_up=10), "gaussian": Gaussian()}[numeric]
    rng = np.random.default_rng(seed)
    model = WeightedNaiveBayes(numeric=summary, absent=absent, history_size=40, seed=seed)
    for i in range(n):
        y = int(rng.integers(0, 3))
        x = {f"f{k}": float(rng.normal(y * (k % 2))) for k in rng.choice(12, size=int(rng.integers(0, 6)), replace=False).tolist()}
        if rng.random() < 0.5:
            x["c"] = f"v{int(rng.integers(0, 5 + y))}"
        model.learn_one(x, y, w=float(rng.uniform(0.5, 2.0)))
    probes = [{f"f{k}": float(v) for k, v in enumerate(rng.normal(size=12))} | {"c": f"v{i}"} for i in range(6)] + [{}]
    twin = io.loads(io.dumps(model))
    assert _predictions(twin, probes) == _predictions(model, probes)
    assert io.dumps(twin) == io.dumps(model)


# ------------------------------------------------------------------------------------------------
# Version 8 → 9


def _payload(path: pathlib.Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))["payload"]


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_a_version_8_file_migrates_to_the_same_model(case):
    """``MIGRATIONS[8]`` writes the variables' records as the table, value for value: the table's
    records are the version-8 records, the migrated model saves as the version-9 fixture of the
    same model and predicts as the version-8 file's facts say."""
    old = _payload(FIXTURES / "v8" / f"{case}.json.gz")
    records = copy.deepcopy(_table(old))
    migrated = io.files.MIGRATIONS[8](copy.deepcopy(old))
    assert column_records.table_to_records(_table(migrated)) == records
    current = _to_current(migrated, 9)  # (later versions' migrations: fields of other records)
    model = io.from_record(current)
    assert io.to_record(model) == current
    assert io.to_record(model) == _to_current(_payload(FIXTURES / "v9" / f"{case}.json.gz"), 9)
    assert _predictions(model, PROBES) == _predictions(io.load(FIXTURES / "v9" / f"{case}.json.gz"), PROBES)


def _to_current(payload: dict, version: int) -> dict:
    """A version-``version`` payload through the migrations to the current version."""
    for step in range(version, io.VERSION):
        payload = io.files.MIGRATIONS[step](payload)
    return payload


def test_the_migration_finds_a_registry_wherever_it_nests():
    """A checkpoint holds its model's record: its registry is migrated too."""
    old = _payload(FIXTURES / "v8" / "model-vns.json.gz")
    nested = {"type": "Checkpoint", "params": {}, "state": {"model": copy.deepcopy(old)}}
    assert isinstance(_table(nested["state"]["model"]), list)
    assert io.files.MIGRATIONS[8](nested)["state"]["model"] == io.files.MIGRATIONS[8](old)


def test_a_malformed_version_8_list_is_refused_as_a_table():
    old = _payload(FIXTURES / "v8" / "model-vns.json.gz")
    del next(v for v in _table(old) if v["state"]["summary"]["type"] == "GKClass")["state"]["summary"]["state"]["g"]
    migrated = _to_current(io.files.MIGRATIONS[8](old), 9)
    with pytest.raises(io.ModelFileError, match=r"registry\.variables: expected a table of records, got a list"):
        io.from_record(migrated)


# ------------------------------------------------------------------------------------------------
# Hostile tables: refused naming the variable and the field


@pytest.fixture(scope="module")
def record():
    """A model of numeric variables only (GK summaries: group item k is variable k)."""
    return io.to_record(trained_model([({k: v for k, v in x.items() if k != "colour"}, y) for x, y in model_rows(300, 11)]))


def _summaries(record) -> dict:
    """The GKClass group of the variables' summaries (the model of ``record`` has only those)."""
    table = _table(record)["groups"][0]["state"]["summary"]
    assert table["types"] == ["GKClass"]
    return table["groups"][0]["state"]


def _edit(node: dict, change) -> None:
    array = io.values.decode_array(node)
    change(array)
    node.clear()
    node.update(io.values.encode_array(array))


def _first_tuple_of(record, variable: int) -> int:
    shapes = io.values.decode_array(_summaries(record)["g"]["shapes"])
    return int(shapes[:variable, 0].sum())


def _refused(record, change, match: str) -> None:
    damaged = copy.deepcopy(record)
    change(damaged)
    with pytest.raises(io.ModelFileError, match=match):
        io.from_record(damaged)


def test_a_negative_weight_names_the_variable_and_field(record):
    at = _first_tuple_of(record, 1)
    _refused(record, lambda r: _edit(_summaries(r)["g"]["data"], lambda a: a.__setitem__(at, -1.0)), r"registry\.variables\[1\]\.summary\.g: values must be >= 0\.0")


def test_a_broken_invariant_found_by_the_screen_names_the_variable(record):
    """Σ_j c_ij = g_i broken in the second variable's summary: the vectorised screen marks it and
    its problems() names the field."""
    at = _first_tuple_of(record, 1)

    def change(r):
        _edit(_summaries(r)["g"]["data"], lambda a: a.__setitem__(at, a[at] + 0.5))
        _edit(_summaries(r)["at_value"]["data"], lambda a: a.__setitem__(at, a[at] + 0.5))

    _refused(record, change, r"registry\.variables\[1\]\.summary\.counts: the class counts of a tuple must add up to its g")


def test_values_out_of_order_name_the_variable(record):
    at = _first_tuple_of(record, 2)
    _refused(record, lambda r: _edit(_summaries(r)["values"]["data"], lambda a: a.__setitem__(at + 1, a[at])), r"registry\.variables\[2\]\.summary\.values: must increase strictly")


def test_shapes_that_do_not_fill_the_data_are_refused(record):
    _refused(record, lambda r: _edit(_summaries(r)["g"]["shapes"], lambda a: a.__setitem__((0, 0), a[0, 0] + 1)), r"summary\.g")
    _refused(record, lambda r: _edit(_summaries(r)["g"]["shapes"], lambda a: a.__setitem__((0, 0), 2**61)), r"the shapes ask for more")


def test_a_shape_against_its_own_record_is_refused(record):
    """``counts`` of variable 0 one row short, the rows given to variable 1: the data still fill
    the shapes, but each record's shape must agree with its own n_tuples."""

    def change(r):
        _edit(_summaries(r)["counts"]["shapes"], lambda a: (a.__setitem__((0, 0), a[0, 0] - 1), a.__setitem__((1, 0), a[1, 0] + 1)))

    _refused(record, change, r"registry\.variables\[0\]\.summary\.counts: expected shape")


def test_an_index_beyond_the_types_or_the_distinct_values_is_refused(record):
    _refused(record, lambda r: _edit(_table(r)["type_of"], lambda a: a.__setitem__(0, 5)), r"registry\.variables\.type_of: values must be in")
    _refused(record, lambda r: _edit(_summaries(r)["classes"]["index"], lambda a: a.__setitem__(0, 9)), r"classes\.index: values must be in")
    _refused(record, lambda r: _table(r)["types"].__setitem__(0, "os.system"), r"unknown record type 'os\.system'")


def test_a_column_of_the_wrong_length_is_refused(record):
    _refused(record, lambda r: _table(r)["groups"][0]["state"]["kind"].pop(), r"registry\.variables\.groups\[0\]\.state\.kind: expected a list of")
    _refused(record, lambda r: _table(r).__setitem__("count", 2), r"type_of: expected int64")


@pytest.mark.parametrize("bad", ["words", 7, None, True])
def test_a_bad_item_of_a_column_of_strings_names_its_variable(record, bad):
    """A column of plain values loads as the list itself; one bad item falls back to the items'
    own checks, which name it."""
    kinds = lambda r: _table(r)["groups"][0]["state"]["kind"]  # noqa: E731
    _refused(record, lambda r: kinds(r).__setitem__(2, bad), r"registry\.variables\[2\]\.kind: (must be one of|expected a string)")


def test_columns_of_plain_values_load_as_their_items_do():
    """``_plain_column`` says yes exactly when every item loads as itself under its kind."""
    from wnb_stream.io.schema import Bool, Int, Str

    cases = [
        (Str(), ["a", "b"], True), (Str(), ["a", 1], False), (Str(choices=("a",)), ["a", "b"], False),
        (Bool(), [True, False], True), (Bool(), [True, 1], False),
        (Int(), [1, -5], True), (Int(), [1, True], False), (Int(), [1, 2.0], False),
        (Int(low=0), [0, 3], True), (Int(low=0), [0, -1], False), (Int(high=3), [3, 4], False),
        (Int(below=4), [3], True), (Int(below=4), [4], False),
        (Int(below="n_parts"), [0], False), (Int(low=0, binds="n_rows"), [1], False),
        (Int(low=0), [], True),
    ]
    for kind, node, plain in cases:
        assert columns._plain_column(kind, node) is plain, (kind, node)
        if plain:  # the items' own loads accept every item, unchanged
            assert [kind.load(item, "x", {}) for item in node] == node


def _refused_as_a_table_exactly_when_alone(record) -> None:
    """The table of ``record`` is refused exactly when one of its variables, loaded alone, is, and
    with one of their messages."""
    alone = []
    for variable in column_records.table_to_records(_table(record)):
        try:
            io.from_record(variable)
        except io.ModelFileError as error:
            alone.append(str(error))
    try:
        columns.load_table(_table(record))
    except io.ModelFileError as error:
        assert alone, f"refused as a table only: {error}"
        assert str(error).split(": ", 1)[1] in [a.split(": ", 1)[1] for a in alone]
    else:
        assert not alone, f"accepted as a table, refused alone: {alone[0]}"


@settings(max_examples=40, deadline=None)
@given(field=st.sampled_from(["g", "delta", "at_value", "counts", "weight"]), item=st.integers(0, 10**6), factor=st.sampled_from([0.0, 0.5, 1.0 + 1e-12, 1.0 + 1e-6, 2.0, -1.0]))
def test_the_screen_refuses_exactly_what_problems_refuses(record, field, item, factor):
    """A table is refused exactly when one of its records, loaded alone (schema, then
    ``problems()`` of each summary and variable), is refused: the GK screen marks every summary
    whose problems() is not empty, including changes within the rounding of its sums."""
    damaged = copy.deepcopy(record)
    node = _summaries(damaged)[field] if field == "weight" else _summaries(damaged)[field]["data"]
    _edit(node, lambda a: a.__setitem__(item % len(a), a[item % len(a)] * factor))
    _refused_as_a_table_exactly_when_alone(damaged)


def test_a_parameter_the_constructor_refuses_names_its_summary(record):
    """The summaries of a group are built together (``GKClass.build_columns``), from one checked
    prototype per parameter set; a parameter set its constructor refuses names its item."""

    def change(r):
        buffer_size = _table(r)["groups"][0]["state"]["summary"]["groups"][0]["params"]["buffer_size"]
        present = io.values.decode_array(buffer_size["present"])
        present[:] = True
        sizes = np.full(len(present), 1000, dtype=np.int64)
        sizes[2] = 0
        buffer_size.update({"present": io.values.encode_array(present), "values": sizes.tolist()})

    _refused(record, change, r"registry\.variables\[2\]\.summary: cannot rebuild GKClass: buffer_size must be")


def test_a_table_of_summaries_is_written_as_their_records_are():
    """``GKClass.record_columns`` (one pass per field over a group) writes what each summary's
    own record holds: shorter class-count rows padded, the pending buffer, a summary of no
    tuples."""
    rng = np.random.default_rng(5)
    summaries = [GKClass(), GKClass(epsilon=0.05, buffer_size=7), GKClass()]
    for x in rng.normal(size=40):
        summaries[1].update(float(x), "a")
    for x in rng.normal(size=5):
        summaries[1].update(float(x), "b")  # class b after the first flushes
    summaries[2].update(1.0, "c")
    pending = list(summaries[1]._buffer_values)
    table = columns.dump_table(summaries)
    state = column_records.table_to_records(table)[1]["state"]
    counts, g = io.values.decode_array(state["counts"]), io.values.decode_array(state["g"])
    assert counts.shape == (len(g), 2) and np.array_equal(counts.sum(axis=1), g)
    assert io.values.decode_array(state["buffer_values"]).tolist() == pending and len(pending) == 3  # 45 values, flushed every 7
    assert io.values.decode_array(state["missing"]).tolist() == [0.0, 0.0]
    assert column_records.table_to_records(table) == [io.to_record(s) for s in summaries]
    for summary, loaded in zip(summaries, columns.load_table(table)):
        assert io.to_record(loaded) == io.to_record(summary)
        assert loaded.record_state()["buffer_values"].tolist() == summary.record_state()["buffer_values"].tolist()


def test_a_locator_without_its_partition_names_the_variable(record):
    """Variables are built together (``Variable.build_columns``); one whose locator has no
    partition to come from is refused by name, as when it is loaded alone."""
    variables = column_records.table_to_records(_table(record))
    built = [k for k, v in enumerate(variables) if v["state"]["locator"] is not None]
    assert built
    k = built[-1]
    variables[k]["state"]["partition"] = None
    with pytest.raises(io.ModelFileError, match=rf"^variables\[{k}\]\.locator: must be given exactly when the partition is"):
        columns.load_table(column_records.records_to_table(variables), "variables")
    with pytest.raises(io.ModelFileError, match=r"^locator: must be given exactly when the partition is"):
        io.from_record(variables[k])


def _partitions(record) -> dict:
    """The Intervals group of the variables' partitions (the model of ``record`` has some)."""
    table = _table(record)["groups"][0]["state"]["partition"]["values"]
    assert table["types"] == ["Intervals"]
    return table["groups"][0]["state"]


@settings(max_examples=40, deadline=None)
@given(
    field=st.sampled_from(["cost", "null_cost", "level", "counts", "upper_bounds", "missing_part"]),
    item=st.integers(0, 10**6),
    factor=st.sampled_from([0.0, 0.5, 1.0 + 1e-12, 1.0 + 1e-6, 2.0, -1.0, 1e300]),
)
def test_the_partition_screen_refuses_exactly_what_problems_refuses(record, field, item, factor):
    """As for the GK screen: a table whose partitions are damaged is refused exactly when one of
    its variables, loaded alone, is (a column screen of the partitions must keep this)."""
    damaged = copy.deepcopy(record)
    state = _partitions(damaged)
    if field == "missing_part":
        values = state[field]
        values[item % len(values)] = int(values[item % len(values)] * factor) if abs(factor) < 10 else 10**6
    else:
        node = state[field] if field in ("cost", "null_cost", "level") else state[field]["data"]
        _edit(node, lambda a: a.__setitem__(item % len(a), a[item % len(a)] * factor))
    _refused_as_a_table_exactly_when_alone(damaged)


def test_the_partition_screen_marks_no_sound_discretization(record, monkeypatch):
    """Loading the table asks ``problems()`` of no sound discretization: the screen spares it
    (and ``test_the_partition_screen_refuses_exactly_what_problems_refuses`` that it misses none)."""
    from wnb_stream.modl.partition import Intervals

    asked = []
    original = Intervals.problems
    monkeypatch.setattr(Intervals, "problems", lambda self: asked.append(self) or original(self))
    io.from_record(record)
    assert asked == []
    damaged = copy.deepcopy(record)
    _edit(_partitions(damaged)["cost"], lambda a: a.__setitem__(0, a[0] + 1e9))
    with pytest.raises(io.ModelFileError, match=r"cost: must be <= null_cost"):
        io.from_record(damaged)
    assert len(asked) == 1
