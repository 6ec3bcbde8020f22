"""Saved model files: the envelope, versions, corrupt and forged files (one ``ModelFileError``
naming the fault), atomic saves."""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import pathlib

import numpy as np
import pytest
from io_cases import feed, numeric_rows

from wnb_stream import io
from wnb_stream.io import values
from wnb_stream.io.values import decode_array, encode_array
from wnb_stream.summaries import Categorical, GKClass
from wnb_stream.weights import VNS


def gk_summary() -> GKClass:
    """Three classes, missing values, 1,100 values with 100 of them still in the buffer."""
    gk = GKClass(epsilon=0.02, buffer_size=500)
    feed(gk, numeric_rows(np.random.default_rng(1), 1100, classes=("a", "b", "c"), missing=0.05))
    return gk


def sketched() -> Categorical:
    summary = Categorical(max_values=5, top_k=3, epsilon=0.1)
    for i in range(300):
        summary.update(f"v{i % 17}", i % 2)
    return summary


def trained_vns() -> VNS:
    from io_cases import learner_cases

    return dict(learner_cases())["vns"]()


def load_record(record):
    return io.loads(io.pack(record))


def rejects(record, match: str):
    with pytest.raises(io.ModelFileError, match=match) as error:
        load_record(record)
    return str(error.value)


# ------------------------------------------------------------------------------------------------
# The envelope


def test_the_envelope_holds_format_version_checksum_and_payload():
    data = io.dumps(gk_summary(), compress=False)
    document = json.loads(data)
    assert list(document) == ["format", "version", "checksum", "payload"]
    assert document["format"] == "wnb_stream.model" and document["version"] == io.VERSION == 13
    canonical = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert document["checksum"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert document["payload"]["type"] == "GKClass"
    assert gzip.decompress(io.dumps(gk_summary())) == data  # the default file is that text, gzipped


def test_the_same_model_gives_the_same_bytes():
    assert io.dumps(gk_summary()) == io.dumps(gk_summary())


def test_a_newer_version_is_refused_naming_the_version_read():
    document = json.loads(io.dumps(gk_summary(), compress=False))
    document["version"] = 14
    with pytest.raises(io.ModelFileError, match=r"version 14 is newer than this library reads \(version 13 and older\)"):
        io.loads(json.dumps(document).encode())


@pytest.mark.parametrize("version", [0, 1, -2, "2", 2.0, None])
def test_malformed_or_unknown_old_versions_are_refused(version):
    document = json.loads(io.dumps(gk_summary(), compress=False))
    document["version"] = version
    with pytest.raises(io.ModelFileError, match="version"):
        io.loads(json.dumps(document).encode())


def test_a_version_1_object_graph_file_is_refused_with_an_explanation():
    old = (pathlib.Path(__file__).parent / "fixtures" / "v1" / "stream-checkpoint.json").read_bytes()  # (by wnb_stream 0.1)
    assert json.loads(old)["format"] == "wnb_stream"
    with pytest.raises(io.LegacyFormatError, match="object-graph format .* cannot be migrated"):
        io.loads(old)


def test_migrations_run_in_order_from_an_older_version(monkeypatch):
    """A version-13 payload read by a library of version 14 goes through MIGRATIONS[13]; without it
    the file is refused naming the missing step."""
    data = io.dumps(gk_summary(), compress=False)
    monkeypatch.setattr(io.files, "VERSION", 14)
    seen = []

    def to_version_14(payload):
        seen.append(payload["type"])
        return payload

    monkeypatch.setitem(io.files.MIGRATIONS, 13, to_version_14)
    assert isinstance(io.loads(data), GKClass) and seen == ["GKClass"]
    monkeypatch.delitem(io.files.MIGRATIONS, 13)
    with pytest.raises(io.ModelFileError, match="version 13 has no migration to version 14"):
        io.loads(data)


def test_a_version_2_model_reads_with_absent_features_missing():
    """Version 3 added ``absent`` to ``WeightedNaiveBayes`` and ``Predictor``: a version-2 record
    (nested too, as a checkpoint holds its model) reads with null, the meaning it was saved with."""
    from wnb_stream import WeightedNaiveBayes

    model = WeightedNaiveBayes(seed=1)
    for i in range(60):  # "a" separates the classes: its level 2 is not flat, it has slot 0
        model.learn_one({"a": float(i % 2) + 0.01 * i}, bool(i % 2))
    assert model._engine.slots.variable.tolist() == [0]  # as a version-2 model's learner axis
    for obj in (model, model.predictor()):
        document = json.loads(io.dumps(obj, compress=False))
        assert document["payload"]["params"].pop("absent") is None
        document["payload"]["params"].pop("memory_budget", None)
        document["payload"]["state"].pop("slots", None)
        if "registry" in document["payload"]["state"]:  # version 2 held the variables as a list of records
            registry = document["payload"]["state"]["registry"]["state"]
            registry["variables"] = io.column_records.table_to_records(registry["variables"])
        document["version"] = 2
        canonical = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        document["checksum"] = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
        loaded = io.loads(json.dumps(document).encode())
        assert loaded.absent is None and loaded.predict_proba_one({"a": 1.5}) == obj.predict_proba_one({"a": 1.5})
    nested = {"type": "Checkpoint", "params": {}, "state": {"model": {"type": "WeightedNaiveBayes", "params": {"seed": 1}, "state": {}}}}
    assert io.files.MIGRATIONS[2](nested)["state"]["model"]["params"] == {"seed": 1, "absent": None, "memory_budget": None}


def test_a_version_3_model_gets_a_slot_for_every_variable():
    """Version 4 added the model's ``slots``: a version-3 model (its learner sized for every
    variable) reads with the slots 0 … K−1, predicts as saved (the fixture's facts) and keeps
    learning with its invariants (a variable whose level 2 is flat may keep its slot)."""
    from wnb_stream import WeightedNaiveBayes

    path = pathlib.Path(__file__).parent / "fixtures" / "v3" / "model-vns.json.gz"
    document = json.loads(gzip.decompress(path.read_bytes()))
    K = len(document["payload"]["state"]["registry"]["state"]["variables"])
    assert "slots" not in document["payload"]["state"] and K > 1
    model = io.loads(path.read_bytes())
    assert isinstance(model, WeightedNaiveBayes)
    assert model._engine.slots.variable.tolist() == list(range(K))
    _keep_learning(model, seed=0, n=300)
    nested = {"type": "Checkpoint", "params": {}, "state": {"model": document["payload"]}}
    migrated = io.files.MIGRATIONS[3](nested)["state"]["model"]["state"]["slots"]["state"]
    assert values.decode_array(migrated["variable"]).tolist() == list(range(K))
    assert not values.decode_array(migrated["passed"]).any()


@pytest.mark.parametrize("case", ["model-vns", "model-absent-zero", "model-sketch", "model-memory-budget", "model-uniform-many"])
def test_a_version_4_window_becomes_entries(case):
    """Version 5 stores the history's rows as entries: a version-4 file (a cell per variable per
    row) loads to the window its version-5 twin holds, cell for cell, and saves as that twin."""
    here = pathlib.Path(__file__).parent / "fixtures"
    old, new = (io.loads((here / version / f"{case}.json.gz").read_bytes()) for version in ("v4", "v5"))
    a, b = old._engine.history, new._engine.history
    assert type(a) is type(b) and (a.size, a.cursor, a.stored, a.capacity) == (b.size, b.cursor, b.stored, b.capacity)
    for got, want in zip(a.raw(), b.raw()):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(a.y[: a.size], b.y[: b.size])
    np.testing.assert_array_equal(a.sample_weight[: a.size], b.sample_weight[: b.size])
    assert io.dumps(old) == io.dumps(new)


@pytest.mark.parametrize("reset", [False, True])
def test_a_version_2_fnb_reads_without_a_refine_learner(reset):
    """Version 3 added FNB's ``refine`` and its search state's ``refiner``: a version-2 FNB
    record (as saved before or after ``reset``) reads with both null."""
    from wnb_stream.weights import FNB

    fnb = FNB()
    if reset:
        fnb.reset(3, 2, seed=1)
    document = json.loads(io.dumps(fnb, compress=False))
    assert document["payload"]["params"].pop("refine") is None
    if reset:
        assert document["payload"]["state"]["run"].pop("refiner") is None
    else:
        assert document["payload"]["state"]["run"] is None
    document["version"] = 2
    canonical = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    document["checksum"] = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    loaded = io.loads(json.dumps(document).encode())
    assert loaded.refine is None and io.dumps(loaded) == io.dumps(fnb)


@pytest.mark.parametrize(
    "data, match",
    [
        (b"", "truncated or not JSON"),
        (b"\x00\x01garbage", "truncated or not JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"format": "something else"}', "format 'something else'"),
        (b'{"format": "wnb_stream.model", "version": 2, "checksum": "sha256:00", "payload": {}}', "malformed checksum"),
        (b'{"format": "wnb_stream.model", "version": 2, "payload": {}}', "no 'checksum'"),
        (b'{"format": "wnb_stream.model", "format": "wnb_stream.model"}', "key 'format' twice"),
        (b'{"format": NaN}', "bare NaN"),
        (b"[" * 100_000, "nested too deeply|not JSON"),
    ],
)
def test_what_is_not_a_model_file_is_refused(data, match):
    with pytest.raises(io.ModelFileError, match=match):
        io.loads(data)


def test_extra_envelope_keys_are_refused():
    document = json.loads(io.dumps(gk_summary(), compress=False))
    document["note"] = "hello"
    with pytest.raises(io.ModelFileError, match=r"unexpected envelope keys \['note'\]"):
        io.loads(json.dumps(document).encode())


# ------------------------------------------------------------------------------------------------
# Truncated and corrupt files


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("keep", [0.0, 0.01, 0.25, 0.5, 0.9, 0.999])
def test_a_truncated_file_is_refused(compress, keep):
    data = io.dumps(gk_summary(), compress=compress)
    cut = data[: int(len(data) * keep)] if keep else data[:1]
    with pytest.raises(io.ModelFileError):
        io.loads(cut)


def test_a_file_missing_its_last_byte_is_refused():
    for compress in (True, False):
        data = io.dumps(gk_summary(), compress=compress)
        with pytest.raises(io.ModelFileError, match="truncated"):
            io.loads(data[:-1])


@pytest.mark.parametrize("where", [0.2, 0.5, 0.8])
def test_a_changed_digit_in_the_payload_fails_the_checksum(where):
    data = bytearray(io.dumps(gk_summary(), compress=False))
    start = data.index(b'"payload"')
    digits = [i for i in range(start, len(data)) if chr(data[i]).isdigit()]
    i = digits[int(len(digits) * where)]
    data[i] = ord("7") if data[i] != ord("7") else ord("3")
    with pytest.raises(io.ModelFileError, match="checksum mismatch"):
        io.loads(bytes(data))


@pytest.mark.parametrize("where", [0.1, 0.3, 0.5, 0.7, 0.95])
def test_a_flipped_byte_in_a_compressed_file_is_refused(where):
    data = bytearray(io.dumps(gk_summary()))
    i = 10 + int((len(data) - 18) * where)  # inside the deflate stream
    data[i] ^= 0x10
    with pytest.raises(io.ModelFileError, match="corrupt|checksum|JSON"):
        io.loads(bytes(data))


def test_a_changed_base64_character_fails_the_checksum():
    data = io.dumps(gk_summary(), compress=False).decode()
    i = data.index('"data":"') + 20
    changed = data[:i] + ("B" if data[i] != "B" else "C") + data[i + 1 :]
    with pytest.raises(io.ModelFileError, match="checksum mismatch"):
        io.loads(changed.encode())


def test_a_forged_gzip_bomb_is_bounded(monkeypatch):
    monkeypatch.setattr(io.files, "MAX_SIZE", 1000)
    with pytest.raises(io.ModelFileError, match="beyond max_size = 1000 bytes"):
        io.loads(io.dumps(gk_summary()))


# ------------------------------------------------------------------------------------------------
# Records that break their schema (the checksum is right: pack() seals whatever it is given)


def encoded(array) -> dict:
    return values.encode_array(np.asarray(array))


def test_wrong_dtype():
    record = io.to_record(gk_summary())
    counts = values.decode_array(record["state"]["counts"])
    record["state"]["counts"] = encoded(counts.astype(np.float32))
    rejects(record, r"^counts: expected dtype float64, got float32$")


def test_wrong_shape_names_the_expected_shape():
    record = io.to_record(gk_summary())
    counts = values.decode_array(record["state"]["counts"])
    s = counts.shape[0]
    record["state"]["counts"] = encoded(np.zeros((s, 4)))
    rejects(record, rf"^counts: expected shape \({s}, 3\), got \({s}, 4\)$")
    record["state"]["counts"] = encoded(np.zeros(s * 3))
    rejects(record, r"^counts: expected 2 dimensions")


def test_array_data_that_does_not_fill_its_shape():
    record = io.to_record(gk_summary())
    record["state"]["missing"]["shape"] = [1 << 40]  # a forged shape cannot allocate beyond the data
    rejects(record, r"^missing: array data has 24 bytes, expected 8796093022208 for float64")


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("buffer_classes", lambda a: np.where(np.arange(len(a)) == 5, 3, a), r"^buffer_classes: values must be < n_classes = 3, got 3 at index \(5,\)$"),
        ("buffer_classes", lambda a: a - 1, "buffer_classes: values must be >= 0"),
        ("missing", lambda a: a - 100.0, "missing: values must be >= 0.0"),
        ("g", lambda a: np.where(np.arange(len(a)) == 2, np.nan, a), r"g: must be finite, got nan at index \(2,\)"),
        ("values", lambda a: a[::-1].copy(), "values: must increase strictly"),
        ("buffer_weights", lambda a: np.where(np.arange(len(a)) == 0, 0.0, a), "buffer_weights: values must be > 0.0"),
    ],
)
def test_values_out_of_range(field, value, match):
    record = io.to_record(gk_summary())
    array = values.decode_array(record["state"][field])
    record["state"][field] = encoded(value(array))
    rejects(record, match)


def test_out_of_range_indices_in_partitions_and_heaps():
    from io_cases import other_cases

    cases = dict(other_cases())
    record = io.to_record(cases["intervals"]())
    record["state"]["missing_part"] = len(values.decode_array(record["state"]["counts"]))
    rejects(record, r"^missing_part: must be < n_parts = \d+, got \d+$")
    record = io.to_record(cases["groups"]())
    record["state"]["star_part"] = -1
    rejects(record, "star_part: must be >= 0, got -1")
    record = io.to_record(cases["space-saving"]())
    slots = values.decode_array(record["state"]["heap_slots"])
    record["state"]["heap_slots"] = encoded(slots + 1)
    rejects(record, "heap_slots: values must be < n_slots")


def test_an_invariant_of_check_is_a_check_of_the_record_too():
    # _check() is asserts, gone under python -O: the record's checks state its invariants again
    record = io.to_record(gk_summary())
    record["state"]["weight"] = record["state"]["weight"] + 1.0  # Σ g no longer equals the weight
    rejects(record, r"^weight: must be Σ g = [\d.]+, got [\d.]+$")


def test_a_parameter_the_constructor_refuses():
    record = io.to_record(gk_summary())
    record["params"]["epsilon"] = 0.7
    rejects(record, r"cannot rebuild GKClass: epsilon must be in \(0, 0.5\), got 0.7")


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda r: r.update(type="Foo"), r"^type: unknown record type 'Foo'$"),
        (lambda r: r.update(type="wnb_stream.summaries.gk:GKClass"), "unknown record type"),
        (lambda r: r.update(type=["GKClass"]), "unknown record type"),
        (lambda r: r.pop("params"), r"^params: missing field"),
        (lambda r: r.update(extra=1), r"^extra: unexpected field"),
        (lambda r: r["state"].pop("delta"), r"^delta: missing field$"),
        (lambda r: r["state"].update(cache={}), r"^cache: unexpected field$"),
        (lambda r: r["params"].pop("buffer_size"), r"^buffer_size: missing field$"),
        (lambda r: r["params"].update(seed=1), r"^seed: unexpected field$"),
        (lambda r: r["state"].update(weight="12.5"), r"^weight: expected a number, got a string$"),
        (lambda r: r["state"].update(weight=True), r"^weight: expected a number, got a boolean$"),
        (lambda r: r["params"].update(buffer_size=500.0), r"^buffer_size: expected an integer, got a float$"),
        (lambda r: r["state"].update(classes=["a", "b", "a"]), r"^classes\[2\]: 'a' repeats item 0"),
        (lambda r: r["state"].update(classes=["a", "b", None]), r"^classes\[2\]: None is a missing value"),
        (lambda r: r["state"].update(classes=["a", "b", [1]]), r"^classes\[2\]: expected a key, got a list"),
        (lambda r: r["state"].update(classes=["a", "b", {"$": "ndarray"}]), r"^classes\[2\]: expected a key"),
        (lambda r: r["state"].update(classes=["a", "b"]), r"^counts: expected shape \(\d+, 2\), got \(\d+, 3\)$"),
        (lambda r: r["state"].update(values=[1.0, 2.0]), r"^values: expected an array, got a list$"),
        (lambda r: r["state"]["values"].update({"$": "pickle"}), r"^values: expected an array"),
        (lambda r: r["state"]["values"].update(dtype="|O"), r"^values: unsupported array dtype '\|O'$"),
        (lambda r: r["state"]["values"].update(data="not base64!"), r"^values: array data is not valid base64$"),
        (lambda r: r["state"].update(guaranteed_epsilon=None), "guaranteed_epsilon: must be null exactly when max_tuples is set"),
    ],
)
def test_malformed_records_name_the_field(change, match):
    record = io.to_record(gk_summary())
    change(record)
    rejects(record, match)


def test_errors_in_child_records_carry_the_full_path():
    record = io.to_record(sketched())
    table = values.decode_array(record["state"]["sketch"]["state"]["table"])
    record["state"]["sketch"]["state"]["table"] = encoded(table[:, :1])
    rejects(record, r"^sketch.table: expected \d+ class columns \(n_classes\), got 1$")
    record = io.to_record(sketched())
    record["state"]["sketch"]["type"] = "SpaceSaving"
    rejects(record, r"^sketch.type: expected a record of type CountMinSketch, got 'SpaceSaving'$")
    record = io.to_record(sketched())
    record["state"]["heavy"] = None
    rejects(record, "^heavy: exact, or both sketch and heavy, must be given$")
    record = io.to_record(trained_vns())
    step = values.decode_array(record["state"]["run"]["rprop"]["step"])
    record["state"]["run"]["rprop"]["step"] = encoded(-step)
    rejects(record, r"^run.rprop.step: values must be > 0.0")
    record = io.to_record(trained_vns())
    record["state"]["run"]["descent"]["surprise"] = 1
    rejects(record, r"^run.descent.surprise: unexpected field$")
    record = io.to_record(trained_vns())
    record["state"]["session"]["rng"]["state"] = -1
    rejects(record, r"^session.rng.state: must be >= 0, got -1$")


def test_every_error_is_a_value_error():
    assert issubclass(io.ModelFileError, ValueError)


# ------------------------------------------------------------------------------------------------
# Saving


def test_save_and_load_through_a_path(tmp_path):
    path = tmp_path / "summary.wnb"
    summary = gk_summary()
    io.save(summary, path)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert io.to_record(io.load(path)) == io.to_record(summary)
    io.save(summary, path, compress=False)
    assert path.read_bytes().startswith(b'{"format":"wnb_stream.model"')
    assert io.to_record(io.load(path)) == io.to_record(summary)


def test_an_object_without_a_record_type_cannot_be_saved_and_the_file_is_untouched(tmp_path):
    path = tmp_path / "model.wnb"
    io.save(gk_summary(), path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="no record type is registered for it"):
        io.save(object(), path)
    summary = Categorical()
    summary.update(frozenset({1}), "a")
    with pytest.raises(TypeError, match=r"exact.values\[0\]: a builtins.frozenset cannot be saved"):
        io.save(summary, path)
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["model.wnb"]


@pytest.mark.parametrize("failure", ["fsync", "replace", "interrupt"])
def test_a_failed_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, failure):
    path = tmp_path / "model.wnb"
    io.save(gk_summary(), path)
    before = path.read_bytes()

    def fail(*args, **kwargs):
        raise KeyboardInterrupt if failure == "interrupt" else OSError("simulated crash")

    monkeypatch.setattr(os, "fsync" if failure == "fsync" else "replace", fail)
    with pytest.raises((OSError, KeyboardInterrupt)):
        io.save(sketched(), path)
    monkeypatch.undo()
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["model.wnb"]


def test_records_are_plain_json():
    record = io.to_record(trained_vns())
    assert json.loads(json.dumps(record, allow_nan=False)) == record
    assert copy.deepcopy(record) == record


def seal(payload: str) -> bytes:
    """A file around a payload given as JSON text (the checksum right, whatever the payload)."""
    checksum = hashlib.sha256(payload.encode()).hexdigest()
    return ('{"format":"wnb_stream.model","version":2,"checksum":"sha256:' + checksum + '","payload":' + payload + "}").encode()


@pytest.mark.parametrize("depth", [10, 300, 490, 600, 5000])
def test_deep_nesting_loads_or_gives_a_model_file_error(depth):
    labels = '{"$":"tuple","items":[' * depth + "1" + "]}" * depth
    data = seal('{"params":{},"state":{"labels":[' + labels + ']},"type":"ClassIndex"}')
    try:
        index = io.loads(data)
    except io.ModelFileError as error:
        assert "nested too deeply" in str(error)
    else:
        assert len(index.labels) == 1


def test_an_integer_too_long_to_read_is_refused():
    data = seal('{"params":{},"state":{"n_variables":' + "9" * 5000 + ',"n_classes":0},"type":"Uniform"}')
    with pytest.raises(io.ModelFileError, match="malformed JSON"):
        io.loads(data)


def _version_5_gaussian(change=None) -> bytes:
    """The version-5 Gaussian fixture, its ``pooled`` changed by ``change`` and its checksum made
    right again (a crafted file: only the migration's check can catch it)."""
    path = pathlib.Path(__file__).parent / "fixtures" / "v5" / "gaussian-1000.json.gz"
    document = json.loads(gzip.decompress(path.read_bytes()))
    state = document["payload"]["state"]
    if change is not None:
        state["pooled"] = encode_array(change(decode_array(state["pooled"])))
    canonical = json.dumps(document["payload"], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    document["checksum"] = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    return json.dumps(document).encode()


def test_version_6_drops_the_gaussians_pooled_moments_after_checking_them():
    """Version 6 derives the pooled moments instead of storing them (a platform's BLAS may round a
    stored copy differently); a version-5 file's copy must still agree with its classes."""
    summary = io.loads(_version_5_gaussian())
    assert "pooled" not in json.loads(io.dumps(summary, compress=False))["payload"]["state"]
    for change, what in [(lambda p: p + [1.0, 0, 0], "weight"), (lambda p: p + [0, 0.5, 0], "mean"), (lambda p: p * [1, 1, 1.001], "M2")]:
        with pytest.raises(io.ModelFileError, match=f"Gaussian.pooled: its {what} must be"):
            io.loads(_version_5_gaussian(change))


def test_two_damaged_version_5_pooled_moments_do_not_load_as_one_model():
    # (issue 33: two files that differed only in pooled loaded as one model and saved back alike)
    original = io.dumps(io.loads(_version_5_gaussian()))
    assert io.dumps(io.loads(_version_5_gaussian(lambda p: p * [1, 1, 1 + 1e-12]))) == original  # rounding: the same model
    for factor in (0.5, 2.0, 1.01):
        with pytest.raises(io.ModelFileError, match=r"^Gaussian.pooled: its M2 must be Σ M2 \+ Σ W"):
            io.loads(_version_5_gaussian(lambda p, f=factor: p * [1, 1, f]))


def test_a_version_6_model_drops_the_slots_passed_marks():
    """Version 7 drops ``Slots.passed`` (a variable now enters level 3 as a new variable does) and
    records its length as ``n_variables``: a version-6 model reads with the same slots, predicts as
    saved (the fixture's facts) and keeps learning with its invariants."""
    from wnb_stream import WeightedNaiveBayes

    path = pathlib.Path(__file__).parent / "fixtures" / "v6" / "model-vns.json.gz"
    document = json.loads(gzip.decompress(path.read_bytes()))
    old = document["payload"]["state"]["slots"]["state"]
    K = len(document["payload"]["state"]["registry"]["state"]["variables"])
    assert values.decode_array(old["passed"]).shape == (K,)
    migrated = io.files.MIGRATIONS[6](json.loads(json.dumps(document["payload"])))["state"]["slots"]["state"]
    assert sorted(migrated) == ["n_variables", "variable"] and migrated["n_variables"] == K
    assert migrated["variable"] == old["variable"]
    model = io.loads(path.read_bytes())
    assert isinstance(model, WeightedNaiveBayes)
    assert model._engine.slots.variable.tolist() == values.decode_array(old["variable"]).tolist()
    _keep_learning(model, seed=1, n=200)


#: Parameters a version added to PGDMB and VNS: (the last version without it, the parameter, the
#: value an older learner loads with, a new learner's default). The old value is the behaviour the
#: learner was saved with: version 8's ``spread`` (μ = 0: the papers' criterion), version 11's
#: ``wake`` (a woken variable kept 0 in w* until a step took it), version 13's ``spread_rows``
#: (μ on windows of any size).
LEARNER_PARAMS_ADDED = [(7, "spread", 0.0, 20.0), (10, "wake", False, True), (12, "spread_rows", None, 500.0)]


@pytest.mark.parametrize("version, param, old, new", LEARNER_PARAMS_ADDED, ids=lambda v: str(v))
@pytest.mark.parametrize("name", ["model-vns", "pgdmb", "vns", "fnb-refine-pgdmb-resized"])
def test_an_older_learner_loads_with_the_parameter_it_was_saved_without_and_keeps_learning(name, version, param, old, new):
    """A parameter added to PGDMB and VNS by a later version: an older learner, wherever it
    nests (a model, a refining FNB), loads with the value that reproduces how it was saved,
    while a new one takes the default."""
    path = pathlib.Path(__file__).parent / "fixtures" / f"v{version}" / f"{name}.json.gz"
    assert f'"{param}"' not in gzip.decompress(path.read_bytes()).decode()
    loaded = io.loads(path.read_bytes())
    payload = json.loads(io.dumps(loaded, compress=False))
    learners = [*io.files._records(payload, "PGDMB"), *io.files._records(payload, "VNS")]
    assert learners and all(node["params"][param] == old and type(node["params"][param]) is type(old) for node in learners)
    assert getattr(VNS(), param) == new
    if name == "model-vns":
        assert getattr(loaded._engine.optimizer, param) == old
        _keep_learning(loaded, seed=1, n=100)


def _keep_learning(model, seed: int, n: int) -> None:
    """``n`` rows of random values of the model's own variables and classes, then its invariants."""
    rng = np.random.default_rng(seed)
    kinds = {v.name: v.kind for v in model._engine.registry.variables}
    for _ in range(n):
        x = {name: float(rng.normal()) if kind == "numeric" else f"c{rng.integers(4)}" for name, kind in kinds.items()}
        model.learn_one(x, model.classes[int(rng.integers(len(model.classes)))])
    model._check()


@pytest.mark.parametrize("damaged", [False, True])
def test_a_load_and_a_save_run_without_the_cyclic_collector_and_restore_it(damaged):
    # A wide model's load or save allocates millions of objects and no garbage: the collector,
    # walking the growing heap again and again, took a third of a load. It is paused while the
    # file is read or written, and back on after it, an error included.
    import gc
    import sys

    data = io.dumps(gk_summary())
    if damaged:
        data = data[:-4]
    inside = []  # per collection: whether it ran while a record was read, checked or written

    def callback(phase, info):
        if phase == "start":
            frame, names = sys._getframe(1), set()
            while frame is not None:
                names.add(frame.f_code.co_name)
                frame = frame.f_back
            inside.append(bool(names & {"unpack", "from_record", "to_record", "pack"}))

    threshold = gc.get_threshold()
    gc.set_threshold(1, 1, 1)  # a collection at almost every allocation while the collector is on
    gc.callbacks.append(callback)
    try:
        if damaged:
            with pytest.raises(io.ModelFileError):
                io.loads(data)
        else:
            io.dumps(io.loads(data))
        assert gc.isenabled()
        garbage = [[] for _ in range(100)]
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*threshold)
    assert len(garbage) == 100 and inside and not any(inside)
