"""Tests of wnb_stream.persistence: exact round trips, shared references, safety, atomic saves."""

from __future__ import annotations

import array
import collections
import dataclasses
import enum
import json
import math
import os
import random
import sys
import types
import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from profiles import examples
from river import base

from wnb_stream import persistence
from wnb_stream.summaries.base import Bins, Categories, ClassIndex
from wnb_stream.weights.base import Batch, Context

# ------------------------------------------------------------------------------------------------
# Small classes of our own, placed in a wnb_stream module for the duration of this test module.

FIXTURES = types.ModuleType("wnb_stream._persistence_test_fixtures")


def _register(cls):
    cls.__module__ = FIXTURES.__name__
    setattr(FIXTURES, cls.__qualname__.split(".")[0], cls)
    return cls


@pytest.fixture(autouse=True, scope="module")
def fixtures_module():
    sys.modules[FIXTURES.__name__] = FIXTURES
    yield
    del sys.modules[FIXTURES.__name__]


@_register
class Plain:
    def __init__(self, **attributes):
        self.__dict__.update(attributes)


@_register
class Outer:
    class Inner:
        def __init__(self, value):
            self.value = value


Outer.Inner.__module__ = FIXTURES.__name__


@_register
@dataclasses.dataclass(slots=True)
class Record:
    counts: np.ndarray
    label: typing.Any = None


@_register
@dataclasses.dataclass(frozen=True)
class Frozen:
    name: str
    values: tuple
    post_inits: typing.ClassVar[list] = []

    def __post_init__(self):
        Frozen.post_inits.append(self.name)


@_register
@dataclasses.dataclass(frozen=True, slots=True)
class Key:
    a: int
    b: str


@_register
class Summary(base.Base):
    """A River Base object: parameters in __init__, state created in __init__ under underscores."""

    def __init__(self, epsilon: float = 0.1, prototype=None):
        self.epsilon = epsilon
        self.prototype = prototype
        self._tuples = np.zeros((0, 3))
        self._n = 0

    def update(self, x: float) -> None:
        self._tuples = np.vstack([self._tuples, [x, 1.0, 0.0]])
        self._n += 1


@_register
class Custom:
    """State through __getstate__/__setstate__, with a derived index rebuilt on load."""

    def __init__(self, labels):
        self.labels = list(labels)
        self.position = {c: i for i, c in enumerate(self.labels)}

    def __getstate__(self):
        return {"labels": self.labels}

    def __setstate__(self, state):
        self.labels = state["labels"]
        self.position = {c: i for i, c in enumerate(self.labels)}


class _SlotBase:
    __slots__ = ("slot",)


@_register
class Mixed(_SlotBase):
    """Both __slots__ (inherited) and __dict__: pickle's (dict, slots) state."""


_register(_SlotBase)


@_register
class Colour(enum.Enum):
    RED = 1
    BLUE = 2


@_register
class Point(typing.NamedTuple):
    x: float
    y: float


class Foreign:
    """A class outside wnb_stream: refused."""


# ------------------------------------------------------------------------------------------------
# Exact comparison (NaN equals NaN, -0.0 differs from 0.0, arrays bit for bit, types must match)


def same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, np.ndarray):
        # Arrays come back in native byte order: compare dtypes and bytes after normalising it.
        native = a.dtype.newbyteorder("=")
        if native != b.dtype.newbyteorder("=") or a.shape != b.shape or a.flags.writeable != b.flags.writeable:
            return False
        if a.dtype.kind == "O":
            return all(same(u, v) for u, v in zip(a.reshape(-1), b.reshape(-1)))
        return np.ascontiguousarray(a, dtype=native).tobytes() == np.ascontiguousarray(b, dtype=native).tobytes()
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(k1, k2) and same(v1, v2) for (k1, v1), (k2, v2) in zip(a.items(), b.items()))
    if isinstance(a, (list, tuple, collections.deque)):
        return len(a) == len(b) and all(same(u, v) for u, v in zip(a, b))
    if isinstance(a, (set, frozenset)):
        return a == b
    return a == b


def roundtrip(value):
    text = persistence.dumps(value)
    json.loads(text, parse_constant=lambda name: pytest.fail(f"bare {name} in output"))
    return persistence.loads(text)


# ------------------------------------------------------------------------------------------------
# Values

finite_or_special = st.floats(allow_nan=True, allow_infinity=True)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    finite_or_special,
    st.text(max_size=8),
    st.binary(max_size=8),
)
hashables = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda children: st.one_of(
        st.tuples(children, children), st.frozensets(children, max_size=3)
    ),
    max_leaves=5,
)
arrays = st.one_of(
    hnp.arrays(dtype=st.sampled_from(["<f8", ">f8", "<f4", "<i8", ">i4", "|u1", "|b1", "<c16"]),
               shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)),
    hnp.arrays(dtype=hnp.unicode_string_dtypes(max_len=4), shape=hnp.array_shapes(max_dims=2, max_side=3)),
)
values = st.recursive(
    st.one_of(scalars, arrays),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(st.text(max_size=5), children, max_size=4),
        st.dictionaries(hashables, children, max_size=4),
        st.sets(hashables, max_size=4),
        st.frozensets(hashables, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=examples(150), deadline=None)
@given(values)
def test_any_value_graph_round_trips_exactly(value):
    assert same(roundtrip(value), value)


@settings(max_examples=examples(100), deadline=None)
@given(values)
def test_state_is_plain_json(value):
    state = persistence.to_state(value)
    text = json.dumps(state, allow_nan=False)
    assert json.loads(text) == state
    assert same(persistence.from_state(json.loads(text)), value)


def test_special_floats_are_explicit():
    state = persistence.to_state([float("nan"), float("inf"), -math.inf, -0.0, 1e308])
    assert state[:3] == [{"$": "float", "value": v} for v in ("nan", "inf", "-inf")]
    back = persistence.from_state(state)
    assert math.isnan(back[0]) and back[1] == math.inf and back[2] == -math.inf
    assert math.copysign(1, back[3]) == -1 and back[4] == 1e308


def test_dict_keys_and_order():
    value = {"b": 1, "a": 2, "$": 3}  # a str key that is the tag: stored as pairs, still a dict
    back = roundtrip(value)
    assert list(back.items()) == [("b", 1), ("a", 2), ("$", 3)]
    value = {1: "one", (2, "x"): [3], None: 4, False: 5, frozenset({1, 2}): 6, 2.5: 7}
    back = roundtrip(value)
    assert same(back, value)


def test_numpy_arrays_exact_and_native():
    rng = np.random.default_rng(0)
    floats = rng.normal(size=(3, 4))
    floats[0, 0], floats[1, 1], floats[2, 2] = np.nan, np.inf, -np.inf
    cases = [
        floats,
        floats.T,  # not contiguous
        floats[::2, 1:],
        rng.integers(-5, 5, size=(2, 0, 3)),
        np.array(3.5),  # 0-d
        np.arange(6, dtype=">i4").reshape(2, 3),  # big-endian in, native out
        np.array(["ab", "ç", ""]),
        np.array([b"x", b"yz"]),
        np.array(["2024-01-01", "NaT"], dtype="datetime64[s]"),
        np.array([1 + 2j, np.nan * 1j]),
        np.array([True, False]),
    ]
    for values in cases:
        back = roundtrip(values)
        assert back.dtype.newbyteorder("=") == values.dtype.newbyteorder("=")
        assert back.dtype.isnative and back.flags.writeable and back.flags.c_contiguous
        assert same(back, values)


def test_readonly_flag_and_object_arrays():
    frozen = np.arange(3.0)
    frozen.setflags(write=False)
    assert not roundtrip(frozen).flags.writeable
    shared = [1, 2]
    objects = np.empty((2, 2), dtype=object)
    objects[:] = [["a", 1.5], [shared, shared]]
    back = roundtrip(objects)
    assert back.dtype == object and back.shape == (2, 2)
    assert back[0, 0] == "a" and back[1, 0] == [1, 2]
    assert back[1, 0] is back[1, 1]


def test_numpy_scalars_and_dtypes_keep_their_type():
    for value in (np.float64(np.nan), np.float32(1.25), np.int64(-7), np.uint8(255), np.bool_(True), np.complex64(1j)):
        back = roundtrip(value)
        assert type(back) is type(value) and same(back, value)
    assert roundtrip(np.dtype(">f4")) == np.dtype(">f4")
    assert roundtrip(np.dtype(object)) == np.dtype(object)


def test_random_generators_continue_identically():
    generator = np.random.default_rng(12)
    generator.normal(size=3)
    legacy = np.random.RandomState(5)
    legacy.rand(2)
    stdlib = random.Random(9)
    stdlib.random()
    mt = np.random.Generator(np.random.MT19937(3))
    back = roundtrip([generator, legacy, stdlib, mt])
    assert np.array_equal(back[0].normal(size=5), generator.normal(size=5))
    assert np.array_equal(back[1].rand(5), legacy.rand(5))
    assert [back[2].random() for _ in range(5)] == [stdlib.random() for _ in range(5)]
    assert np.array_equal(back[3].integers(0, 100, 5), mt.integers(0, 100, 5))


def test_collections():
    value = [
        collections.deque([1, 2, 3], maxlen=3),
        collections.deque(),
        collections.OrderedDict([("b", 1), ("a", 2)]),
        collections.Counter({"x": 3, 5: 1}),
        collections.defaultdict(list, {"k": [1]}),
        collections.defaultdict(None),
        b"\x00\xff",
        array.array("d", [1.5, float("nan"), -0.0]),
        array.array("q", [2**62, -3]),
    ]
    back = roundtrip(value)
    assert back[0].maxlen == 3 and list(back[0]) == [1, 2, 3] and back[1].maxlen is None
    assert type(back[2]) is collections.OrderedDict and list(back[2]) == ["b", "a"]
    assert back[3] == value[3] and type(back[3]) is collections.Counter
    assert back[4]["new"] == [] and back[4]["k"] == [1]
    assert back[5].default_factory is None
    assert back[6] == b"\x00\xff"
    assert type(back[7]) is array.array and back[7].typecode == "d" and same(back[7].tolist(), value[7].tolist())
    assert back[8] == value[8]
    with pytest.raises(ValueError, match="type code"):
        persistence.from_state({"$": "array", "typecode": "u", "data": ""})


# ------------------------------------------------------------------------------------------------
# Objects


def test_wnb_stream_records_round_trip():
    bins = Bins([1.0, 2.0], [[1, 2], [3, 4]], ("a", "b"), [0, 1])
    categories = Categories(("red", 3), [[1, 0], [0, 2]], ("a", "b"), [0, 0], [1, 1])
    index = ClassIndex()
    for label in ("b", "a", 3):
        index.encode(label)
    batch = Batch(np.ones((2, 3, 2)), np.array([0, 1]), np.ones(2), np.log([0.5, 0.5]))
    context = Context(np.array([1.5, np.inf]), np.array([True, False]))
    back_bins, back_categories, back_index, back_batch, back_context = roundtrip(
        [bins, categories, index, batch, context]
    )
    for field in ("upper_bounds", "counts", "missing"):
        assert same(getattr(back_bins, field), getattr(bins, field))
    assert back_bins.classes == ("a", "b")
    assert not back_bins.counts.flags.writeable  # frozen arrays stay frozen
    assert back_categories.values == ("red", 3) and np.array_equal(back_categories.star, [1, 1])
    assert back_index.classes == ("b", "a", 3) and back_index.position == {"b": 0, "a": 1, 3: 2}
    assert back_index.encode("a") == 1 and back_index.encode("z") == 3
    assert np.array_equal(back_batch.log_lik, batch.log_lik) and np.array_equal(back_batch.y, batch.y)
    assert np.array_equal(back_context.prior_costs, context.prior_costs)
    assert back_context.active.dtype == bool


def test_user_classes_round_trip_without_running_init():
    Frozen.post_inits.clear()
    frozen = Frozen("f", (1, 2.5))
    record = Record(np.zeros(2), label=Key(1, "k"))
    plain = Plain(a=1, nested=Outer.Inner([1, 2]), colour=Colour.BLUE, point=Point(1.0, float("nan")))
    mixed = Mixed()
    mixed.slot = "in a slot"
    mixed.extra = "in the dict"
    value = {Key(1, "k"): frozen, "record": record, "plain": plain, "custom": Custom(["x", "y"]), "mixed": mixed,
             "types": [Summary, int, type(None)]}
    back = roundtrip(value)
    assert Frozen.post_inits == ["f"]  # __post_init__ is not run again on load
    assert back[Key(1, "k")] == frozen
    assert back["record"].label == Key(1, "k") and np.array_equal(back["record"].counts, np.zeros(2))
    assert back["plain"].nested.value == [1, 2] and back["plain"].colour is Colour.BLUE
    assert type(back["plain"].point) is Point and math.isnan(back["plain"].point.y)
    assert back["custom"].position == {"x": 0, "y": 1}
    assert back["mixed"].slot == "in a slot" and back["mixed"].extra == "in the dict"
    assert back["types"] == [Summary, int, type(None)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        back[Key(1, "k")].name = "changed"


def test_river_base_objects_keep_params_and_state():
    summary = Summary(epsilon=0.05, prototype=Summary(epsilon=0.2))
    for x in (3.0, 1.0, np.nan):
        summary.update(x)
    back = roundtrip(summary)
    assert repr(back) == repr(summary)
    assert back._get_params() == summary._get_params() or repr(back._get_params()) == repr(summary._get_params())
    assert back._n == 3 and same(back._tuples, summary._tuples)
    clone = back.clone()  # River's clone rebuilds from the params
    assert clone.epsilon == 0.05 and clone._n == 0
    back.update(4.0)  # the loaded object keeps working
    assert back._tuples.shape == (4, 3)


def test_shared_references_and_cycles():
    shared = [1, 2]
    array = np.arange(3.0)
    a = Plain(items=shared, array=array)
    b = Plain(items=shared, array=array, sibling=a)
    a.sibling = b  # a cycle through instances
    loop: list = [0]
    loop.append(loop)  # a list that contains itself
    table = {"self": None}
    table["self"] = table
    back_a, back_b, back_loop, back_table, back_shared = roundtrip([a, b, loop, table, shared])
    assert back_a.items is back_b.items is back_shared
    assert back_a.array is back_b.array
    assert back_a.sibling is back_b and back_b.sibling is back_a
    assert back_loop[1] is back_loop
    assert back_table["self"] is back_table
    back_a.items.append(3)
    assert back_b.items == [1, 2, 3]


def test_cycle_through_tuple_is_refused():
    holder: list = []
    cycle = (holder,)
    holder.append(cycle)
    with pytest.raises(TypeError, match="cycle through a tuple"):
        persistence.dumps(cycle)


def test_unsupported_values_name_their_path():
    from river import stats

    with pytest.raises(TypeError, match=r"river\.stats.*at \['model'\]<Plain>\['mean'\]"):
        persistence.dumps({"model": Plain(mean=stats.Mean())})
    with pytest.raises(TypeError, match="Foreign"):
        persistence.to_state([Foreign()])
    with pytest.raises(TypeError, match="function"):
        persistence.to_state({"f": lambda: 0})
    with pytest.raises(TypeError):
        persistence.to_state(np.zeros(2, dtype=[("a", "<f8")]))  # structured arrays

    class Local:
        pass

    Local.__module__ = FIXTURES.__name__
    with pytest.raises(TypeError, match="module level"):
        persistence.to_state(Local())


# ------------------------------------------------------------------------------------------------
# Safety and versions


def _document(state) -> str:
    return json.dumps({"format": "wnb_stream", "version": 1, "state": state})


@pytest.mark.parametrize(
    "path",
    [
        "os:system",
        "builtins:eval",
        "subprocess:Popen",
        "wnb_streamx:Thing",  # a prefix look-alike
        "wnb_stream.persistence:np.random.Generator",  # a re-exported foreign class
        "wnb_stream.persistence:os",  # a module, not a class
        "wnb_stream.persistence:_Encoder.__init__",
        "wnb_stream.persistence:__builtins__",
        "wnb_stream..x:A",
        "wnb_stream.persistence",
        "wnb_stream.persistence:to_state",  # a function, not a class
        "wnb_stream.__main__:main",  # importing it would run the command line
    ],
)
def test_loading_refuses_classes_outside_wnb_stream(path):
    before = set(sys.modules)
    for node in ({"$": "obj", "cls": path, "state": None}, {"$": "type", "cls": path}):
        with pytest.raises(ValueError):
            persistence.loads(_document(node))
    assert set(sys.modules) <= before | {FIXTURES.__name__}


def test_loading_never_imports_foreign_modules():
    assert "antigravity" not in sys.modules
    with pytest.raises(ValueError):
        persistence.loads(_document({"$": "obj", "cls": "antigravity:Thing"}))
    assert "antigravity" not in sys.modules
    with pytest.raises(ValueError, match="builtin"):
        persistence.loads(_document({"$": "type", "builtin": "eval"}))


@pytest.mark.parametrize(
    "state, message",
    [
        ({"$": "nope"}, "unknown tag"),
        ({"$": "ref", "id": 3}, "unknown object"),
        ({"$": "float", "value": "1e999"}, "float"),
        ({"$": "ndarray", "dtype": "<f8", "shape": [3], "data": "AAAA"}, "bytes"),
        ({"$": "ndarray", "dtype": "|V8", "shape": [1], "data": "AAAAAAAAAAA="}, "dtype"),
        ({"$": "ndarray", "dtype": "<f8", "shape": [-1], "data": ""}, "shape"),
        ({"$": "dict", "items": [[1]]}, "pair"),
        ({"$": "tuple"}, "missing"),
        ({"$": "generator", "bit_generator": "Evil", "state": {}}, "bit generator"),
        ({"$": "ndarray", "dtype": "object", "shape": [10**12], "items": []}, "fill the shape"),
    ],
)
def test_malformed_states_give_value_errors(state, message):
    with pytest.raises(ValueError, match=message):
        persistence.loads(_document(state))


def test_deep_nesting_is_a_value_error():
    text = '{"format": "wnb_stream", "version": 1, "state": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ValueError, match="nested too deeply"):
        persistence.loads(text)


def test_envelope_is_checked():
    text = persistence.dumps({"a": 1})
    document = json.loads(text)
    assert document["format"] == "wnb_stream" and document["version"] == persistence.VERSION == 1
    newer = dict(document, version=2)
    with pytest.raises(ValueError, match="newer"):
        persistence.loads(json.dumps(newer))
    with pytest.raises(ValueError, match="format"):
        persistence.loads(json.dumps(dict(document, format="pickle")))
    with pytest.raises(ValueError, match="format"):
        persistence.loads("[1, 2]")
    with pytest.raises(ValueError, match="invalid JSON"):
        persistence.loads(text[: len(text) // 2])  # what a torn write would leave
    with pytest.raises(ValueError, match="bare NaN"):
        persistence.loads('{"format": "wnb_stream", "version": 1, "state": NaN}')


# ------------------------------------------------------------------------------------------------
# Atomic saves


def _files(directory) -> list[str]:
    return sorted(os.listdir(directory))


def test_save_and_load(tmp_path):
    path = tmp_path / "model.json"
    value = {"weights": np.array([0.5, np.nan]), "n": 3}
    persistence.save(value, path)
    assert same(persistence.load(path), value)
    assert _files(tmp_path) == ["model.json"]
    persistence.save({"n": 4}, str(path))  # overwrite
    assert persistence.load(path) == {"n": 4}
    assert _files(tmp_path) == ["model.json"]


class _TornWriter:
    """A file object that writes half of what it is given, then fails like a full disk."""

    def __init__(self, handle):
        self.handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()
        return False

    def write(self, data):
        self.handle.write(data[: len(data) // 2])
        self.handle.flush()
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.handle, name)


def _fail_replace(*args, **kwargs):
    raise OSError("simulated crash before the rename")


def _fail_fsync(fd):
    raise OSError("simulated I/O error in fsync")


def _interrupt_replace(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize("failure", ["write", "fsync", "replace", "interrupt"])
def test_failed_save_keeps_old_checkpoint_and_leaves_no_temporary(tmp_path, monkeypatch, failure):
    path = tmp_path / "checkpoint.json"
    old = {"version": "old", "weights": np.ones(3)}
    persistence.save(old, path)
    before = path.read_bytes()
    real_fdopen = os.fdopen
    new = {"version": "new", "weights": np.zeros(10_000)}
    if failure == "write":
        monkeypatch.setattr(persistence.os, "fdopen", lambda fd, mode: _TornWriter(real_fdopen(fd, mode)))
    elif failure == "fsync":
        monkeypatch.setattr(persistence.os, "fsync", _fail_fsync)
    elif failure == "replace":
        monkeypatch.setattr(persistence.os, "replace", _fail_replace)
    else:
        monkeypatch.setattr(persistence.os, "replace", _interrupt_replace)
    with pytest.raises((OSError, KeyboardInterrupt)):
        persistence.save(new, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert _files(tmp_path) == ["checkpoint.json"]
    loaded = persistence.load(path)
    assert loaded["version"] == "old" and same(loaded["weights"], old["weights"])


def test_unencodable_object_never_touches_the_file(tmp_path):
    path = tmp_path / "checkpoint.json"
    persistence.save([1], path)
    with pytest.raises(TypeError):
        persistence.save([Foreign()], path)
    assert persistence.load(path) == [1] and _files(tmp_path) == ["checkpoint.json"]


def test_save_syncs_file_and_directory(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        synced.append(os.path.isdir(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else None)
        real_fsync(fd)

    monkeypatch.setattr(persistence.os, "fsync", recording_fsync)
    persistence.save([1, 2], tmp_path / "x.json")
    assert len(synced) == 2
    if synced[0] is not None:
        assert synced == [False, True]  # the file first, then its directory


def test_load_rejects_non_utf8(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="UTF-8"):
        persistence.load(path)


# ------------------------------------------------------------------------------------------------
# The classifier


def _rows(n: int, seed: int):
    """Mixed rows: numeric with missing values, a many-valued categorical, a late third class."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        y = int(rng.integers(0, 3 if i > n // 2 else 2))
        x = {
            "a": float(rng.normal(y)),
            "b": None if rng.random() < 0.1 else float(rng.exponential(1 + y)),
            "c": f"v{rng.integers(0, 40) if y else rng.integers(20, 60)}",
            "d": bool(rng.random() < 0.3 + 0.2 * y),
        }
        if i % 50 == 0:
            x["late"] = float(i)  # a feature that appears now and then
        yield x, y


def _configurations():
    from wnb_stream import WeightedNaiveBayes, summaries, weights

    yield WeightedNaiveBayes(seed=5)
    yield WeightedNaiveBayes(numeric=summaries.CPiD(), optimizer=weights.Uniform(), history_size=150)
    yield WeightedNaiveBayes(
        numeric=summaries.Gaussian(), categorical=summaries.Categorical(max_values=8, top_k=4),
        optimizer=weights.Graphical(), history_size=100, seed=2,
    )
    yield WeightedNaiveBayes(optimizer=weights.PGDMB(batch_size=20), history_size=100, seed=1)


@pytest.mark.parametrize("model", list(_configurations()), ids=["default", "cpid-uniform", "gaussian-sketch-graphical", "pgdmb"])
def test_classifier_round_trip_is_exact_and_keeps_learning(model, tmp_path):
    rows = list(_rows(900, seed=8))
    for x, y in rows[:600]:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    path = tmp_path / "model.json"
    persistence.save(model, path)
    back = persistence.load(path)
    assert type(back) is type(model) and repr(back) == repr(model)
    assert back.weights == model.weights and back.classes == model.classes
    assert abs(back.memory_usage() - model.memory_usage()) <= 0.01 * model.memory_usage()  # getsizeof-based
    assert persistence.dumps(back) == persistence.dumps(model)
    # Both go on with the same examples and stay identical, state included.
    for x, y in rows[600:]:
        assert back.predict_proba_one(x) == model.predict_proba_one(x)
        model.learn_one(x, y)
        back.learn_one(x, y)
    assert persistence.dumps(back) == persistence.dumps(model)
    fresh = back.clone()
    assert repr(fresh) == repr(model) and fresh.predict_proba_one(rows[0][0]) == {}
