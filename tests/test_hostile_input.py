"""Hostile input raises only what the docs promise: ``ValueError`` (``ModelFileError`` for a file)
naming the field, and the model is unchanged. Each case raised something else before (a
RecursionError, a RuntimeError, a TypeError, an AssertionError or an OverflowError)."""

from __future__ import annotations

import hashlib
import json

import pytest

from wnb_stream import WeightedNaiveBayes, io
from wnb_stream.io import files
from wnb_stream.modl.partition import MISSING
from wnb_stream.summaries import GKClass, policy


def nested(depth: int):
    value = "v"
    for _ in range(depth):
        value = (value,)
    return value


class BadHash:
    """A value whose ``__hash__`` raises something other than TypeError."""

    def __hash__(self):
        raise RuntimeError("no hash today")


def trained(**params) -> WeightedNaiveBayes:
    model = WeightedNaiveBayes(seed=0, **params)
    for i in range(40):
        model.learn_one({"a": float(i % 7), "c": f"v{i % 3}"}, i % 2)
    return model


@pytest.mark.parametrize(
    "x, y, match",
    [
        ({"c": nested(330)}, 0, "feature 'c': a tuple nested too deeply"),
        ({"c": "v"}, nested(330), "class label y must be hashable, got a tuple nested too deeply"),
        ({nested(330): "v"}, 0, "feature name .* nested too deeply"),
        ({"c": nested(10**5)}, 0, "feature 'c': a tuple nested too deeply"),
        ({"c": BadHash()}, 0, "feature 'c': a BadHash whose hash raises RuntimeError"),
        ({"c": "v"}, BadHash(), "class label y must be hashable, got a BadHash whose hash raises RuntimeError"),
    ],
)
def test_deep_tuples_and_raising_hashes_are_value_errors_and_change_nothing(x, y, match):
    model = trained()
    before = io.dumps(model)
    with pytest.raises(ValueError, match=match):
        model.learn_one(x, y)
    if y == 0 and "name" not in match:  # (a prediction ignores a feature it does not know)
        with pytest.raises(ValueError, match=match):
            model.predict_proba_one(x)
    assert io.dumps(model) == before


def test_a_tuple_key_up_to_the_depth_limit_is_learned_and_saved():
    model = trained()
    model.learn_one({"c": nested(policy.MAX_KEY_DEPTH)}, nested(policy.MAX_KEY_DEPTH))
    assert io.key_problem(nested(policy.MAX_KEY_DEPTH)) is None
    assert "nested too deeply" in io.key_problem(nested(policy.MAX_KEY_DEPTH + 1))
    assert io.loads(io.dumps(model)).predict_proba_one({"c": nested(policy.MAX_KEY_DEPTH)}) == model.predict_proba_one(
        {"c": nested(policy.MAX_KEY_DEPTH)}
    )


def seal(payload: bytes, spaced: bool = False) -> bytes:
    checksum = hashlib.sha256(payload).hexdigest().encode()
    separator = b", " if spaced else b","
    head = b'{"format":"wnb_stream.model","version":' + str(files.VERSION).encode() + b',"checksum":"sha256:'
    return head + checksum + b'"' + separator + b'"payload":' + payload + b"}"


@pytest.mark.parametrize("spaced", [False, True])
def test_a_payload_holding_1e999_is_a_model_file_error(spaced):
    gk = GKClass()
    for i in range(50):
        gk.update(float(i), i % 2)
    record = io.to_record(gk)
    record["state"]["weight"] = 12345.678
    payload = files._canonical(record).replace(b"12345.678", b"1e999")
    # laid out as pack writes it, the stored bytes match their checksum and the schema names the
    # field; laid out otherwise, the re-written payload is checked, and 1e999 cannot be written
    match = "float range" if spaced else "^weight: must be finite, got inf$"
    with pytest.raises(io.ModelFileError, match=match):
        io.loads(seal(payload, spaced))


@pytest.mark.parametrize("marker", [{}, [], 3, "other", None])
def test_a_malformed_marker_in_a_grouping_is_a_model_file_error(marker):
    model = trained()
    record = io.to_record(model)
    text = json.dumps(record)
    assert '{"marker": "star"}' in text  # every grouping holds the star
    broken = json.loads(text.replace('{"marker": "star"}', json.dumps({"marker": marker}), 1))
    with pytest.raises(io.ModelFileError, match="malformed marker"):
        io.loads(io.pack(broken))
    assert MISSING.name == "MISSING"


@pytest.mark.parametrize("into, other", [(None, 0.0), (0.0, None)])
def test_a_delta_of_another_absent_is_refused_and_changes_nothing(into, other):
    model = trained(absent=into)
    delta = trained(absent=other).delta()
    for i in range(10):
        delta.learn_one({"a": float(i), "b": 1.0}, i % 2)
    before = io.dumps(model)
    with pytest.raises(ValueError, match="cannot absorb a delta of a model with another absent"):
        model.absorb([delta])
    assert io.dumps(model) == before


def beyond_int64(model) -> WeightedNaiveBayes:
    """``model`` as a file that counts 2^62 more rows would load it (a forged or a very old model)."""
    record = io.to_record(model)
    state = record["state"]
    state["history"]["state"]["stored"] += 2**62
    synced = io.values.decode_array(state["registry"]["state"]["synced"])
    state["registry"]["state"]["synced"] = io.values.encode_array(synced + 2**62)
    return io.loads(io.pack(record))


def test_merges_beyond_the_int64_clock_are_refused_and_change_nothing():
    a, b = beyond_int64(trained()), beyond_int64(trained())
    before = io.dumps(a), io.dumps(b)
    with pytest.raises(ValueError, match=r"history.stored would be \d+, beyond 2\*\*63 - 1"):
        a.merge(b)
    delta = b.delta()
    delta._engine.history.stored = 2**62  # (a delta counted from the model's clock)
    delta.learn_one({"a": 1.0}, 0)
    with pytest.raises(ValueError, match=r"history.stored would be \d+, beyond 2\*\*63 - 1"):
        a.absorb([delta])
    assert (io.dumps(a), io.dumps(b)) == before
