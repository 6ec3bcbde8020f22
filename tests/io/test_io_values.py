"""Plain values in JSON (wnb_stream.io.values): exact round trips, and nothing else is built."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from profiles import examples

from wnb_stream.io import ModelFileError, values


def through_json(value):
    return values.decode(json.loads(json.dumps(values.encode(value), allow_nan=False)))


def identical(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if type(a) is not type(b):
        return False
    if isinstance(a, float):  # a scalar NaN comes back as NaN (its sign and payload are not kept)
        return (a != a and b != b) or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    return a == b


scalars = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=True, allow_infinity=True)
plain = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.lists(children, max_size=4).map(tuple)
    | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)
dtypes = st.sampled_from(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", ">f8", ">i4"])


@settings(max_examples=examples(200), deadline=None)
@given(plain)
def test_plain_values_round_trip_exactly(value):
    assert identical(through_json(value), value)


@settings(max_examples=examples(100), deadline=None)
@given(dtypes.flatmap(lambda d: hnp.arrays(np.dtype(d), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))))
def test_arrays_round_trip_bit_for_bit(array):
    back = through_json(array)
    # big-endian arrays come back in native order, with the same values
    assert back.dtype == array.dtype.newbyteorder("=") and back.shape == array.shape
    assert back.tobytes() == array.astype(array.dtype.newbyteorder("=")).tobytes()
    assert back.flags.writeable and back.flags.c_contiguous


def test_nan_payloads_and_signed_zeros_survive_in_arrays():
    array = np.array([-0.0, np.nan, -np.nan, np.inf]).view(np.uint64)
    array[1] |= 0xDEAD  # a NaN with a payload
    array = array.view(np.float64)
    assert through_json(array).tobytes() == array.tobytes()


def test_object_arrays_hold_scalars_element_by_element():
    array = np.empty((2, 2), dtype=object)
    array[:] = [["a", 1], [(2.5, None), float("nan")]]
    back = through_json(array)
    assert back.dtype == object and back.shape == (2, 2)
    assert back[0, 0] == "a" and back[1, 0] == (2.5, None) and math.isnan(back[1, 1])
    array[0, 0] = [1]
    with pytest.raises(TypeError, match=r"\[0\]: an object array may only hold scalars and tuples"):
        values.encode(array)


def test_numpy_scalars_are_written_as_python_scalars():
    assert values.encode([np.float64(0.5), np.int64(3), np.bool_(True)]) == [0.5, 3, True]


def test_a_dict_holding_the_tag_key_is_escaped():
    value = {"$": "ndarray", "shape": [1]}
    assert identical(through_json(value), value)


@pytest.mark.parametrize("value", [{1: "a"}, {1, 2}, b"bytes", object(), np.float64, np.array(["a"]), np.array([1 + 2j]), 1 + 2j])
def test_values_that_are_not_plain_cannot_be_saved(value):
    with pytest.raises(TypeError, match="cannot save"):
        values.encode(value)


@pytest.mark.parametrize(
    "node, match",
    [
        ({"$": "float", "value": "NaN"}, "malformed float node"),
        ({"$": "float", "value": "nan", "x": 1}, "unexpected"),
        ({"$": "tuple"}, "missing"),
        ({"$": "tuple", "items": 3}, "expected a list of items"),
        ({"$": "dict", "items": [[1, 2]]}, r"not a \[str, value\] pair"),
        ({"$": "dict", "items": [["a", 1], ["a", 2]]}, "key 'a' twice"),
        ({"$": "set", "items": [1]}, "unknown value tag 'set'"),
        ({"$": "obj", "cls": "os:system", "state": {}}, "unknown value tag 'obj'"),
        ({"$": "ref", "id": 0}, "unknown value tag 'ref'"),
        ({"$": "ndarray", "dtype": "<f8", "shape": [2], "data": "AAAAAAAA8D8="}, "8 bytes, expected 16"),
        ({"$": "ndarray", "dtype": "<f8", "shape": [-1], "data": ""}, "malformed array shape"),
        ({"$": "ndarray", "dtype": "<f8", "shape": [True], "data": ""}, "malformed array shape"),
        ({"$": "ndarray", "dtype": "<f8", "shape": [1] * 40, "data": ""}, "malformed array shape"),
        ({"$": "ndarray", "dtype": "|O", "shape": [1], "data": ""}, "unsupported array dtype"),
        ({"$": "ndarray", "dtype": "<M8[s]", "shape": [1], "data": "AAAAAAAAAAA="}, "unsupported array dtype"),
        ({"$": "ndarray", "dtype": "|b1", "shape": [1], "data": "Ag=="}, "bytes 0 or 1"),
        ({"$": "ndarray", "dtype": "object", "shape": [3], "items": [1]}, "do not fill the shape"),
        ({"$": "ndarray", "dtype": "object", "shape": [1], "items": [[1]]}, "only hold scalars and tuples"),
        (float("nan"), "non-finite float"),
        ({"a": {"$": "float", "value": "-INF"}}, r"^a: malformed float node"),
    ],
)
def test_malformed_nodes_are_refused_naming_the_path(node, match):
    with pytest.raises(ModelFileError, match=match):
        values.decode(node)


def test_decoding_builds_only_plain_types():
    node = {"a": [1, {"$": "tuple", "items": [{"$": "float", "value": "inf"}]}], "b": values.encode(np.arange(3))}
    seen = set()

    def walk(value):
        seen.add(type(value))
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(values.decode(node))
    assert seen <= {dict, list, tuple, int, float, str, bool, type(None), np.ndarray}
