"""``engine.rows`` alone: the parser's kinds and policies, the ``Plan`` cache against the general
path, ``frame`` against ``row`` column by column, labels and sample weights; parsing never changes
the registry (nor the DataFrame it reads)."""

from __future__ import annotations

import datetime
import decimal
import fractions
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import summaries
from wnb_stream.engine.registry import Registry
from wnb_stream.engine.rows import RowParser, check_label, check_sample_weights, labels
from wnb_stream.engine.variable import value_kind

NUMERIC, CATEGORICAL = "numeric", "categorical"


def make_registry(kinds: dict) -> Registry:
    """A registry with a variable of the given kind per name (in that order)."""
    registry = Registry()
    for name, kind in kinds.items():
        registry.add(name, kind, summaries.GKClass() if kind == NUMERIC else summaries.Categorical(), 0)
    return registry


def canon(row, registry) -> tuple:
    """A ``Row`` as comparable values: variables by name, NaN as a marker, value types kept."""
    assert row.numeric.dtype == np.intp and row.values.dtype == float
    assert list(row.numeric) == sorted(row.numeric), "numeric indices increase"
    names = [v.name for v in registry.variables]
    numeric = [(names[k], "nan" if math.isnan(v) else v) for k, v in zip(row.numeric.tolist(), row.values.tolist())]
    categorical = [(names[k], type(v), v) for k, v in row.categorical]
    new = [(name, kind, type(v), v) for name, kind, v in row.new]
    assert row.missing == any(v == "nan" for _, v in numeric)
    return numeric, categorical, new, row.missing


def outcome(parse, x, registry) -> tuple:
    try:
        return ("row", canon(parse(x), registry))
    except ValueError as error:
        return ("raise", str(error))


# ---------------------------------------------------------------------- kinds, policies, errors
KNOWN = {"n": NUMERIC, "c": CATEGORICAL}

NUMBERS = [1.5, -2, 0, np.int64(3), np.int8(-1), np.float32(2.5), np.float64(-0.25), np.uint16(7)]
CATEGORIES = ["a", "", True, False, np.bool_(True), np.str_("s"), ("t", 1), ("t", (None, 2.5))]
MISSING = [None, math.nan, np.float64("nan"), np.float32("nan")]
INFINITE = [math.inf, -math.inf, np.float32("inf"), np.float64("-inf")]


@pytest.mark.parametrize("value", NUMBERS, ids=repr)
def test_numbers_are_numeric(value):
    registry = make_registry(KNOWN)
    parser = RowParser(registry)
    row = parser.row({"new": value})
    assert row.new == [("new", NUMERIC, float(value))] and type(row.new[0][2]) is float
    row = parser.row({"n": value})
    assert row.numeric.tolist() == [0] and row.values.tolist() == [float(value)] and not row.missing
    assert row.categorical == [] and row.new == []


@pytest.mark.parametrize("value", CATEGORIES, ids=repr)
def test_strings_bools_and_other_hashables_are_categorical(value):
    registry = make_registry(KNOWN)
    parser = RowParser(registry)
    expected = value.item() if isinstance(value, np.generic) else value
    (name, kind, got), = parser.row({"new": value}).new
    assert (name, kind, got) == ("new", CATEGORICAL, expected) and type(got) is type(expected)
    row = parser.row({"c": value})
    assert row.categorical == [(1, expected)] and type(row.categorical[0][1]) is type(expected)
    assert len(row.numeric) == 0 and row.new == [] and not row.missing


@pytest.mark.parametrize("value", MISSING + INFINITE, ids=repr)
def test_none_nan_and_inf_are_missing(value):
    registry = make_registry(KNOWN)
    parser = RowParser(registry)
    assert parser.row({"new": value}).new == []  # a feature is created at its first value
    row = parser.row({"n": value})
    assert row.numeric.tolist() == [0] and math.isnan(row.values[0]) and row.missing
    if value_kind(value) is None:  # None and NaN are missing in a categorical feature too
        assert parser.row({"c": value}).categorical == [(1, None)]


@pytest.mark.parametrize("value", INFINITE, ids=repr)
def test_inf_in_a_categorical_feature_is_the_other_kind(value):
    # ±inf is a number: "missing" only in a numeric feature (learn_one's rule)
    registry = make_registry(KNOWN)
    with pytest.raises(ValueError, match="'c'"):
        RowParser(registry, "raise").row({"c": value})
    assert RowParser(registry, "missing").row({"c": value}).categorical == [(1, None)]


@pytest.mark.parametrize(
    "name, value",
    [("n", "a"), ("n", True), ("n", np.bool_(False)), ("n", ("t",)), ("c", 1.0), ("c", 3), ("c", np.float32(0.5))],
    ids=repr,
)
def test_the_other_kind_raises_naming_the_feature_or_is_missing(name, value):
    registry = make_registry(KNOWN)
    before = pickle.dumps(registry)
    with pytest.raises(ValueError, match=f"feature '{name}' is"):
        RowParser(registry, "raise").row({"c": "a", name: value, "n": 1.0} if name == "c" else {"n": 2.0, name: value})
    row = RowParser(registry, "missing").row({name: value, "z": 1.0})
    if name == "n":
        assert row.numeric.tolist() == [0] and math.isnan(row.values[0]) and row.missing
    else:
        assert row.categorical == [(1, None)] and not row.missing
    assert row.new == [("z", NUMERIC, 1.0)]
    assert pickle.dumps(registry) == before


@pytest.mark.parametrize("policy", ["raise", "missing"])
@pytest.mark.parametrize("name", ["n", "c", "unknown"])
@pytest.mark.parametrize("value", [[1], {"a": 1}, {2}, ([1],)], ids=repr)
def test_unhashable_values_raise_naming_the_feature(policy, name, value):
    registry = make_registry(KNOWN)
    before = pickle.dumps(registry)
    with pytest.raises(ValueError, match=f"feature '{name}': unhashable"):
        RowParser(registry, policy).row({"n": 1.0, name: value})
    with pytest.raises(ValueError, match=f"feature '{name}': unhashable"):
        RowParser(registry, policy).frame(pd.DataFrame({"n": [1.0, 2.0], name: ["ok" if name != "n" else 1.0, value]}))
    assert pickle.dumps(registry) == before


def test_new_features_are_listed_with_their_kind_and_value():
    registry = make_registry(KNOWN)
    row = RowParser(registry).row({"n": 1.0, "x": np.int64(4), "c": "a", "y": np.str_("b"), "z": None, 3: True})
    assert row.new == [("x", NUMERIC, 4.0), ("y", CATEGORICAL, "b"), (3, CATEGORICAL, True)]
    assert [type(v) for _, _, v in row.new] == [float, str, bool]
    assert row.numeric.tolist() == [0] and row.categorical == [(1, "a")]


def test_numeric_values_follow_the_variable_order_not_the_dict_order():
    registry = make_registry({"a": NUMERIC, "b": CATEGORICAL, "c": NUMERIC, "d": NUMERIC})
    parser = RowParser(registry)
    for x in ({"d": 4.0, "a": 1.0, "c": 3.0}, {"c": 3, "d": 4, "a": 1}):
        for _ in range(2):  # general path, then the plan
            row = parser.row(x)
            assert row.numeric.tolist() == [0, 2, 3] and row.values.tolist() == [1.0, 3.0, 4.0]


def test_bad_arguments():
    with pytest.raises(ValueError, match="on_type_change"):
        RowParser(Registry(), "ignore")
    with pytest.raises(ValueError, match="x must be a dict"):
        RowParser(Registry()).row([("a", 1.0)])
    with pytest.raises(ValueError, match="X must be a pandas DataFrame"):
        RowParser(Registry()).frame({"a": [1.0]})


@pytest.mark.parametrize("known", [False, True])
@pytest.mark.parametrize("policy", ["raise", "missing"])
def test_an_int_too_large_for_a_float_raises_naming_the_feature(known, policy):
    registry = make_registry({"n": NUMERIC} if known else {})
    parser = RowParser(registry, policy)
    with pytest.raises(ValueError, match="feature 'n': .*float range"):
        parser.row({"n": 10**400})
    parser.row({"n": 10})  # the plan of this shape reads ints in bulk...
    with pytest.raises(ValueError, match="feature 'n': .*float range"):
        parser.row({"n": 10**400})  # ...and hands this one to the general path, which names it
    with pytest.raises(ValueError, match="feature 'n': .*float range"):
        parser.frame(pd.DataFrame({"n": pd.Series([1, 10**400], dtype=object)}))


# Values a saved model cannot hold are refused, whatever the policy and the feature's kind.
REFUSED = [1 + 2j, np.complex128(1j), b"x", frozenset({1}), ("t", b"x"), ("t", frozenset()), object(), decimal.Decimal("1e400")]


@pytest.mark.parametrize("policy", ["raise", "missing"])
@pytest.mark.parametrize("name", ["n", "c", "unknown"])
@pytest.mark.parametrize("value", REFUSED, ids=lambda v: type(v).__name__)
def test_values_a_saved_model_cannot_hold_raise_naming_the_feature(policy, name, value):
    registry = make_registry(KNOWN)
    before = pickle.dumps(registry)
    with pytest.raises(ValueError, match=f"feature '{name}'"):
        RowParser(registry, policy).row({"n": 1.0, name: value})
    column = pd.Series([value, value], dtype=object)
    with pytest.raises(ValueError, match=f"feature '{name}'"):
        RowParser(registry, policy).frame(pd.DataFrame({"n": [1.0, 2.0], name: column}) if name != "n" else pd.DataFrame({name: column}))
    assert pickle.dumps(registry) == before


def test_a_complex_column_is_refused_not_read_as_its_real_part():
    with pytest.raises(ValueError, match="feature 'z': a complex number"):
        RowParser(Registry()).frame(pd.DataFrame({"z": np.array([1 + 1j, 2.0])}))


@pytest.mark.parametrize(
    "value, expected",
    [
        (pd.NA, None),
        (pd.NaT, None),
        (np.datetime64("NaT"), None),
        (np.timedelta64("NaT"), None),
        (decimal.Decimal("NaN"), None),
        (decimal.Decimal("2.5"), 2.5),
        (fractions.Fraction(1, 4), 0.25),
        (np.datetime64("1970-01-02"), 86400.0),
        (pd.Timestamp("1970-01-01T00:00:01.5"), 1.5),
        (pd.Timestamp("1970-01-01T01:00:00", tz="Europe/Paris"), 0.0),
        (datetime.datetime(1970, 1, 1, 0, 1), 60.0),
        (datetime.date(1970, 1, 3), 172800.0),
        (datetime.timedelta(seconds=3, microseconds=5), 3.000005),
        (pd.Timedelta("2min"), 120.0),
        (np.timedelta64(250, "ms"), 0.25),
    ],
    ids=repr,
)
def test_missing_markers_are_missing_and_numbers_dates_and_durations_are_numeric(value, expected):
    registry = make_registry(KNOWN)
    parser = RowParser(registry)
    row = parser.row({"n": value})
    got = row.values[0]
    assert (math.isnan(got) if expected is None else got == expected)
    new = parser.row({"new": value}).new
    assert new == ([] if expected is None else [("new", NUMERIC, expected)])
    if expected is None:  # missing in a categorical feature too
        assert parser.row({"c": value}).categorical == [(1, None)]
    frame = parser.frame(pd.DataFrame({"n": pd.Series([value, value], dtype=object), "c": ["u", "v"]}))
    assert np.array_equal(frame.numeric[:, 0], [got, got], equal_nan=True)


def test_a_datetime_column_is_read_as_seconds_like_its_cells():
    X = pd.DataFrame({"d": pd.to_datetime(["2020-01-01 00:00:00", None, "2021-06-30 12:00:00.25"], format="ISO8601"),
                      "z": pd.to_datetime(["2020-01-01", "2020-01-02", None]).tz_localize("UTC"),
                      "t": pd.to_timedelta(["1s", None, "1h"])})  # fmt: skip
    parser = RowParser(Registry())
    frame = parser.frame(X)
    for name in X.columns:
        i = frame.numeric_names.index(name)
        cells = [parser.row({name: v}).new for v in X[name].tolist()]
        expected = [c[0][2] if c else math.nan for c in cells]
        np.testing.assert_array_equal(frame.numeric[:, i], expected)
    assert frame.numeric[0, frame.numeric_names.index("d")] == 1577836800.0


def test_names_of_new_features_must_be_keys_when_learning():
    registry = make_registry(KNOWN)
    parser = RowParser(registry)
    for name in [frozenset({1}), b"n", None, math.nan, (1, b"x")]:
        assert parser.row({name: 1.0}).new  # predicting: an unknown feature is ignored later
        with pytest.raises(ValueError, match="feature name"):
            parser.row({name: 1.0}, learn=True)
        with pytest.raises(ValueError, match="feature name"):
            parser.frame(pd.DataFrame({name: [1.0]}), learn=True)
    assert parser.row({np.str_("x"): 1.0}, learn=True).new == [("x", NUMERIC, 1.0)]
    assert type(parser.row({np.str_("x"): 1.0}, learn=True).new[0][0]) is str
    parser.frame(pd.DataFrame({frozenset({1}): [math.nan]}), learn=True)  # no value: creates nothing


def test_duplicate_column_names_and_empty_frames():
    registry = make_registry(KNOWN)
    parser = RowParser(registry)
    X = pd.DataFrame([[1.0, 2.0, "u"]], columns=["n", "n", "c"])
    with pytest.raises(ValueError, match=r"duplicate column names \['n'\]"):
        parser.frame(X)
    for X in [pd.DataFrame(), pd.DataFrame({"n": [], "c": []}), pd.DataFrame({"new": pd.Series([], dtype=float)}), pd.DataFrame(index=range(3))]:
        frame = parser.frame(X, learn=True)
        assert frame.numeric.shape == (len(X), len(frame.numeric_names))
        assert all(first == -1 for _, _, first in frame.columns())


# ---------------------------------------------------------------------- the plan cache
NAMES = ["a", "b", "c", "d", "e", 7]


def family(draw):
    """A type of values for one key: the plan reads plain numbers and strings, the rest goes the general way."""
    return draw(st.sampled_from(["float", "int", "np.float64", "np.int64", "np.float32", "str", "bool", "missing", "tuple", "np.str_", "list"]))


def value_of(draw, kind):
    finite = st.floats(allow_nan=False, allow_infinity=False)
    special = draw(st.integers(0, 2)) == 0  # (an explicit roll: one_of leans on its first branch)
    if kind == "float":  # NaN and ±inf are floats: a plain type whose value is missing
        return draw(st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0]) if special else finite)
    if kind == "int":
        return draw(st.integers(-(2**70), 2**70) if special else st.integers(-5, 5))
    if kind == "np.float64":
        return np.float64(draw(st.sampled_from([math.nan, math.inf]) if special else finite))
    if kind == "np.int64":
        return np.int64(draw(st.integers(-(2**63), 2**63 - 1)))
    if kind == "np.float32":
        return np.float32(draw(st.floats(width=32)))
    if kind == "str":
        return draw(st.one_of(st.sampled_from(["u", "v", ""]), st.text(max_size=3)))
    if kind == "bool":
        return draw(st.booleans())
    if kind == "missing":
        return draw(st.sampled_from([None, math.nan]))
    if kind == "tuple":
        return (draw(st.integers(0, 2)),)
    if kind == "np.str_":
        return np.str_(draw(st.sampled_from(["u", "v"])))
    return [draw(st.integers(0, 2))]  # unhashable


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_the_plan_reads_a_dict_as_the_general_path_does(data):
    draw = data.draw
    kinds = {name: draw(st.sampled_from([NUMERIC, NUMERIC, CATEGORICAL, CATEGORICAL, None]), label=f"kind {name!r}") for name in NAMES}
    registry = make_registry({name: kind for name, kind in kinds.items() if kind})
    policy = draw(st.sampled_from(["raise", "missing"]), label="policy")
    keys = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4), label="keys")
    # a plain type per key most of the time (the plan's case), anything else sometimes
    plain = {NUMERIC: ["float", "int", "np.float64", "np.int64", "np.float32"], CATEGORICAL: ["str"], None: ["float", "str"]}
    families = {key: draw(st.sampled_from(plain[kinds[key]])) if draw(st.integers(0, 9)) else family(draw) for key in keys}
    xs = [{key: value_of(draw, families[key]) for key in keys} for _ in range(3)]
    if draw(st.booleans()):  # a value of another type in one key
        key = draw(st.sampled_from(keys)) if keys else None
        if key is not None:
            xs.append({**xs[0], key: value_of(draw, family(draw))})
    xs.append(dict(reversed(list(xs[1].items()))))  # the same values, keys in the other order
    xs.append(dict(xs[0]))  # equal to an earlier dict (the plan's cached last row)
    order = draw(st.lists(st.sampled_from(range(len(xs))), min_size=1, max_size=8), label="calls")
    parser = RowParser(registry, policy)
    before = pickle.dumps(registry)
    for i in order:
        plan = parser.plan
        if plan is not None and tuple(xs[i]) == plan.keys and tuple(map(type, xs[i].values())) == plan.types:
            event("read by the plan")
            if any(isinstance(v, float) and not math.isfinite(v) for v in xs[i].values()):
                event("read by the plan: NaN or ±inf")
        expected = outcome(RowParser(registry, policy).row, xs[i], registry)  # a fresh parser: no plan
        assert outcome(parser.row, xs[i], registry) == expected
    assert pickle.dumps(registry) == before


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_a_dict_of_plain_numbers_is_read_in_bulk_as_the_general_path_reads_it(data):
    """``_numeric_plan``: a dict of Python ints and floats in known numeric variables (a sparse
    row: its keys change every time) is read without a check per entry, as ``_each`` reads it,
    with or without a default value of absent features."""
    draw = data.draw
    kinds = {name: draw(st.sampled_from([NUMERIC, NUMERIC, NUMERIC, CATEGORICAL, None]), label=f"kind {name!r}") for name in NAMES}
    registry = make_registry({name: kind for name, kind in kinds.items() if kind})
    default = draw(st.sampled_from([None, 0.0, 1.0, -2.0]), label="default")
    keys = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=5), label="keys")
    x = {key: value_of(draw, draw(st.sampled_from(["float", "float", "int", "int", "bool", "np.float64"]))) for key in keys}
    if default is not None and keys and draw(st.booleans()):
        x[keys[0]] = draw(st.sampled_from([default, int(default)]))  # an entry holding the default value
    bulk = RowParser(registry, "raise", default)._numeric_plan(x) is not None
    event(f"read in bulk: {bulk}")
    plain = all(kinds[k] == NUMERIC and type(v) in (int, float) for k, v in x.items())
    assert bulk == plain
    for learn in (False, True):  # (``_numbers`` reads a dict of plain numbers with new features in bulk too)
        general = outcome(lambda x: RowParser(registry, "raise", default)._each(x, learn)[0], x, registry)
        assert outcome(lambda x: RowParser(registry, "raise", default).row(x, learn), x, registry) == general
    numbers = RowParser(registry, "raise", default)._numbers(x) is not None
    event(f"read by _numbers: {numbers}")
    assert not numbers or all(kinds[k] in (NUMERIC, None) and type(v) in (int, float) for k, v in x.items())


def test_a_plain_dict_is_read_by_its_plan(monkeypatch):
    registry = make_registry({"a": NUMERIC, "b": CATEGORICAL, "c": NUMERIC})
    parser = RowParser(registry)
    first = parser.row({"c": 1.0, "a": 2, "b": "u"})
    assert parser.plan is not None and parser.plan.keys == ("c", "a", "b")

    def no_general_path(self, x, learn=False):
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(RowParser, "_each", no_general_path)
    row = parser.row({"c": math.inf, "a": -3, "b": "v"})
    assert row.numeric.tolist() == [0, 2] and row.values[0] == -3.0 and math.isnan(row.values[1]) and row.missing
    assert row.categorical == [(1, "v")] and first.values.tolist() == [2.0, 1.0]
    assert parser.row({"c": math.inf, "a": -3, "b": "v"}) is row  # the last row read is kept
    with pytest.raises(AssertionError, match="general path"):  # another type: not the plan's shape
        parser.row({"c": 1.0, "a": 2.0, "b": "u"})


def exact(row) -> tuple:
    """A ``Row`` to the last bit: the floats as their bit patterns (the sign of a zero counts),
    categorical values and new features with their types."""
    categorical = [(k, type(v), v) for k, v in row.categorical]
    new = [(name, kind, type(v), v if not isinstance(v, float) else np.float64(v).view(np.int64)) for name, kind, v in row.new]
    return row.numeric.tolist(), row.values.view(np.int64).tolist(), categorical, new, row.missing


def exact_outcome(parse, x) -> tuple:
    try:
        return ("row", exact(parse(x)))
    except ValueError as error:
        return ("raise", str(error))


#: values that compare equal to one another (or to themselves only) but read differently
TWINS = [0.0, -0.0, 0, False, np.float64(-0.0), np.float32(0.0), 1.0, 1, True, np.int64(1), np.float64(1.0),
         np.bool_(True), decimal.Decimal(1), fractions.Fraction(1), math.nan, float("nan"), math.inf, 2.5, "u", "1"]


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_a_row_read_again_is_a_fresh_read_even_if_the_dict_changed_in_place(data):
    """The plan returns its last row for a dict of the same content (``predict_proba_one`` then
    ``learn_one`` on one dict): whatever the caller changes in the dict between the calls (a value
    replaced by an equal one of another type or sign, keys reordered, added or removed), the row
    read is a fresh parser's, bit for bit."""
    draw = data.draw
    kinds = {name: draw(st.sampled_from([NUMERIC, NUMERIC, CATEGORICAL, None]), label=f"kind {name!r}") for name in NAMES}
    registry = make_registry({name: kind for name, kind in kinds.items() if kind})
    policy = draw(st.sampled_from(["raise", "missing"]), label="policy")
    default = draw(st.sampled_from([None, None, 0.0, 1.0]), label="default")
    keys = draw(st.lists(st.sampled_from(NAMES), unique=True, min_size=1, max_size=4), label="keys")
    plain = {NUMERIC: [0.0, -0.0, 1.0, 2.5, 1, math.nan], CATEGORICAL: ["u", "v"], None: [1.0]}
    x = {key: draw(st.sampled_from(plain[kinds[key]])) for key in keys}
    parser = RowParser(registry, policy, default)
    for _ in range(draw(st.integers(1, 6), label="rounds")):
        for learn in draw(st.lists(st.booleans(), min_size=1, max_size=3), label="calls"):
            expected = exact_outcome(lambda x, learn=learn: RowParser(registry, policy, default).row(x, learn=learn), x)
            assert exact_outcome(lambda x, learn=learn: parser.row(x, learn=learn), x) == expected
        change = draw(st.sampled_from(["twin", "twin", "same object", "reorder", "drop", "add", "copy"]), label="change")
        key = draw(st.sampled_from(sorted(x, key=str))) if x else None
        if change == "twin" and key is not None:
            x[key] = draw(st.sampled_from(TWINS))
        elif change == "reorder":
            items = list(x.items())
            x.clear()
            x.update(reversed(items))
        elif change == "drop" and key is not None:
            del x[key]
        elif change == "add":
            x[draw(st.sampled_from(NAMES))] = draw(st.sampled_from(TWINS))
        elif change == "copy":  # an equal dict, another object
            x = dict(x)


def test_negative_zero_after_zero_is_read_afresh():
    # -0.0 == 0.0: a last row holding a zero is not returned again, so the sign of the zero is
    # the dict's, as a fresh parser reads it.
    registry = make_registry({"a": NUMERIC, "b": NUMERIC})
    parser = RowParser(registry)
    x = {"a": 0.0, "b": 1.5}
    parser.row(x)
    x["a"] = -0.0
    assert math.copysign(1.0, parser.row(x).values[0]) == -1.0
    y = {"a": 2.0, "b": 1.5}
    row = parser.row(y)
    assert parser.row(y) is row  # no zero: the last row is returned again



@pytest.mark.parametrize("default", [None, 0.0])
@pytest.mark.parametrize("twin", [True, np.bool_(True), decimal.Decimal(1), fractions.Fraction(1), np.float64(1.0), 1, -0.0, 0.0])
def test_a_sparse_row_read_again_is_a_fresh_read_even_if_the_dict_changed_in_place(default, twin):
    """A dict of plain numbers with new features (a sparse row: the plan cannot read it again)
    read to predict is kept, and an equal dict of the same types read next (``learn_one``) is
    that row, with the new names checked; a value replaced by an equal one of another type or
    sign, or a variable created in between, gives a fresh read, bit for bit."""
    registry = make_registry({"a": NUMERIC})
    parser = RowParser(registry, "raise", default)
    for key in ("new", "a"):
        x = {"a": 2.0, "new": 1.0, "other": 3}
        row = parser.row(x)
        assert parser.row(x) is row  # kept: read again to predict
        again = parser.row(x, learn=True)
        assert exact(again) == exact(RowParser(registry, "raise", default).row(x, learn=True))
        assert again.values is row.values  # (the same read)
        x[key] = twin if key == "new" else 2 * twin
        for learn in (False, True):
            assert exact_outcome(lambda x, learn=learn: parser.row(x, learn=learn), x) == exact_outcome(
                lambda x, learn=learn: RowParser(registry, "raise", default).row(x, learn=learn), x)
    x = {"a": 2.0, "new": 1.0}
    parser.row(x)
    registry.add("new", NUMERIC, summaries.GKClass(), 0)  # (a variable created by another row's learning)
    assert exact(parser.row(x, learn=True)) == exact(RowParser(registry, "raise", default).row(x, learn=True))
    assert not parser.row(x, learn=True).new
    for x, key in (({"a": 0.0, "new": 2.0}, "a"), ({"a": 2.0, "new": 0.0}, "new")):  # a zero, then its twin
        parser = RowParser(registry, "raise", default)
        x = {**x, "newer": 1.0}
        parser.row(x)
        x[key] = -0.0
        assert exact(parser.row(x, learn=True)) == exact(RowParser(registry, "raise", default).row(x, learn=True))

# ---------------------------------------------------------------------- a DataFrame, column by column
def cell(parser, name, value, registry):
    """The parse of one feature alone: ("raise", message) or (kind, value) with kind None for missing."""
    try:
        row = parser.row({name: value})
    except ValueError as error:
        return "raise", str(error)
    if row.new:
        (_, kind, v), = row.new
        return kind, v
    k = registry.index.get(name)
    if k is None:
        return None, None
    if len(row.numeric):
        v = float(row.values[0])
        return (None, None) if math.isnan(v) else (NUMERIC, v)
    (_, v), = row.categorical
    return (None, None) if v is None else (CATEGORICAL, v)


COLUMN_VALUES = {
    "numbers": lambda draw: draw(st.one_of(st.sampled_from([0.5, -1.0, 2, 0, np.int64(3)]), st.floats(-10, 10))),
    "words": lambda draw: draw(st.sampled_from(["u", "v", "w", True, False])),
    "missing": lambda draw: draw(st.sampled_from([None, math.nan])),
    "infinite": lambda draw: draw(st.sampled_from([math.inf, -math.inf])),
    "tuple": lambda draw: (draw(st.integers(0, 1)),),
    "unhashable": lambda draw: [draw(st.integers(0, 1))],
}


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_frame_reads_each_column_as_row_reads_each_cell(data):
    draw = data.draw
    names = ["a", "b", "c", "d", "e"]
    kinds = {name: draw(st.sampled_from([NUMERIC, CATEGORICAL, None]), label=f"kind {name!r}") for name in names}
    registry = make_registry({name: kind for name, kind in kinds.items() if kind})
    policy = draw(st.sampled_from(["raise", "missing"]), label="policy")
    # each column draws mostly from one or two families (a numeric or categorical feature), a stray value sometimes
    mains = {name: draw(st.lists(st.sampled_from(["numbers", "words", "missing", "infinite"]), min_size=1, max_size=2)) for name in names}
    n = draw(st.integers(1, 6), label="rows")
    records = []
    for _ in range(n):
        x = {}
        for name in draw(st.lists(st.sampled_from(names), unique=True)):
            rare = draw(st.integers(0, 19)) == 0
            kind = draw(st.sampled_from(list(COLUMN_VALUES) if rare else mains[name]))
            x[name] = COLUMN_VALUES[kind](draw)
        records.append(x)
    X = pd.DataFrame(records, index=range(n))
    X_before = X.copy(deep=True)
    records = X.to_dict(orient="records")  # the cells as pandas holds them (NaN where a key was absent)
    before = pickle.dumps(registry)
    parser = RowParser(registry, policy)

    # Expected, cell by cell: an unknown feature takes the kind of its first value (a learn_one loop
    # creates it there); from then on its cells are read as a known feature's.
    first, kind_of = {}, dict(kinds)
    for name in X.columns:
        for r, x in enumerate(records):
            got = cell(RowParser(registry, policy), name, x[name], registry)
            if got[0] is not None:
                first[name] = r
                if got[0] != "raise" and kind_of[name] is None:
                    kind_of[name] = got[0]
                break
    extended = make_registry({name: kind for name, kind in kind_of.items() if kind})
    expected, raising = {}, set()
    for name in X.columns:
        column = []
        for r, x in enumerate(records):
            if kinds[name] is None and r < first.get(name, n):  # not created yet: missing
                column.append((None, None))
                continue
            got = cell(RowParser(extended, policy), name, x[name], extended)
            if got[0] == "raise":
                raising.add(name)
                # ±inf in a categorical feature: see test_frame_and_row_treat_inf_in_a_categorical_feature_alike
                assume(not (isinstance(x[name], float) and math.isinf(x[name])))
            column.append(got)
        expected[name] = column

    event("raises" if raising else "parsed")
    if raising:
        with pytest.raises(ValueError) as error:
            parser.frame(X)
        assert any(f"feature {name!r}" in str(error.value) for name in raising)
    else:
        frame = parser.frame(X)
        assert frame.numeric.shape == (n, len(frame.numeric_names)) and frame.numeric.dtype == float
        got_kinds = {name: kind for name, kind, _ in frame.columns()}
        assert len(got_kinds) == len(list(frame.columns())) and set(got_kinds) <= set(X.columns)
        for name in X.columns:
            column = expected[name]
            present = [r for r, (kind, _) in enumerate(column) if kind is not None]
            if kind_of[name] is None:  # a feature never seen with a value creates nothing
                assert not present
                assert name not in got_kinds or (got_kinds[name] == NUMERIC and frame.numeric_first[frame.numeric_names.index(name)] == -1)
                continue
            assert got_kinds[name] == kind_of[name]
            if kind_of[name] == NUMERIC:
                i = frame.numeric_names.index(name)
                want = [v if kind else math.nan for kind, v in column]
                np.testing.assert_array_equal(frame.numeric[:, i], np.array(want, dtype=float))
                assert frame.numeric_first[i] == (present[0] if present else -1)
            else:
                (values, first_row), = [(values, f) for other, values, f in frame.categorical if other == name]
                assert [(type(v), v) for v in values] == [(type(v), v) if kind else (type(None), None) for kind, v in column]
                assert first_row == (present[0] if present else -1)
    assert pickle.dumps(registry) == before
    pd.testing.assert_frame_equal(X, X_before)


@pytest.mark.xfail(strict=True, reason="frame() counts ±inf in a categorical feature as missing where row() raises (the other kind)")
@pytest.mark.parametrize("column", [[math.inf, "u"], [-math.inf, math.nan]], ids=["object", "float"])
def test_frame_and_row_treat_inf_in_a_categorical_feature_alike(column):
    registry = make_registry({"c": CATEGORICAL})
    with pytest.raises(ValueError, match="'c'"):
        RowParser(registry, "raise").row({"c": column[0]})  # learn_one rejects the row
    with pytest.raises(ValueError, match="'c'"):
        RowParser(registry, "raise").frame(pd.DataFrame({"c": column}))  # so learn_many should reject the batch


def test_frame_does_not_write_into_the_dataframe():
    X = pd.DataFrame({"a": [1.0, math.inf, -math.inf], "b": [0.5, 2.0, 3.0]})
    frame = RowParser(Registry()).frame(X)
    assert np.isnan(frame.numeric[1:, 0]).all()
    assert X["a"].tolist() == [1.0, math.inf, -math.inf]


# ---------------------------------------------------------------------- labels and weights
def dict_codes(values: list) -> list:
    distinct: dict = {}
    return [distinct.setdefault(v, len(distinct)) for v in values]


def same_value(a, b) -> bool:
    """Same type and value (NaN equal to NaN: the values, not the dict keys)."""
    return type(a) is type(b) and (a == b or (a != a and b != b))


def objects(values) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        array[i] = v
    return array


def assert_labels_like_a_dict(y, values: list):
    out, codes, uniques = labels(y)
    assert out.dtype == object and out.shape == (len(values),) and codes.dtype == np.intp
    out = out.tolist()
    assert all(same_value(a, b) for a, b in zip(out, values)), "the labels are the Python values given"
    assert not any(isinstance(u, np.generic) for u in uniques)
    assert len(set(dict_codes(uniques))) == len(uniques), "the distinct labels are distinct dict keys"
    for label, code in zip(out, codes.tolist()):  # each code points at its label, as a dict key
        assert uniques[code] is label or uniques[code] == label
    # the same partition into classes as a dict of the labels
    expected = dict_codes(out)
    assert len(uniques) == len(set(expected))
    n = len(out)
    assert all((codes[i] == codes[k]) == (expected[i] == expected[k]) for i in range(n) for k in range(n))


ABC = ["b", "a", "c", "a", "b", "b"]


@pytest.mark.parametrize(
    "y",
    [
        pd.Series([1, 3, 2, 3]),
        pd.Series(ABC),
        pd.Series(ABC, dtype=object),
        pd.Series(ABC, dtype="category"),
        pd.Series([True, False, True]),
        pd.Series([2.5, -0.0, 0.0, 1.0, 2.5]),
        np.array([3, 1, 3, 2], dtype=np.int32),
        np.array([3, 1, 3], dtype=np.uint8),
        np.array(ABC),
        np.array([True, True, False]),
        np.array([0.5, np.inf, 0.5]),
        objects(["a", 1, True, 1.0, (1, 2), np.int64(1), np.str_("a")]),
        ABC,
        [1, True, 1.0, "1"],
        [],
        np.array([], dtype=float),
    ],
    ids=lambda y: type(y).__name__ + ":" + (str(getattr(y, "dtype", "")) or "py"),
)
def test_labels_give_the_codes_of_a_dict(y):
    values = [v.item() if isinstance(v, np.generic) else v for v in (y.tolist() if hasattr(y, "tolist") else y)]
    assert_labels_like_a_dict(y, values)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.one_of(st.integers(-3, 3), st.booleans(), st.sampled_from(["a", "b", "1"]), st.sampled_from([0.0, -0.0, 1.0, 2.5, math.inf]), st.tuples(st.integers(0, 1))), max_size=12),
    st.sampled_from(["list", "object array", "typed array", "series"]),
)
def test_labels_of_any_container_give_the_codes_of_a_dict(values, container):
    if container == "list":
        y = list(values)
    elif container == "object array":
        y = objects(values)
    elif container == "typed array":
        kinds = {type(v) for v in values}
        assume(len(kinds) == 1 and kinds <= {int, bool, str, float})
        y = np.array(values)
        values = y.tolist()
    else:
        y = pd.Series(values, dtype=object)
    assert_labels_like_a_dict(y, values)


@pytest.mark.parametrize(
    "y, message",
    [
        (["a", None, "b"], "must not be None"),
        (np.array(["a", None], dtype=object), "must not be None"),
        (pd.Series(["a", None], dtype=object), "must not be None"),
        (["a", ["b"]], "hashable"),
        (objects([{"a": 1}, "b"]), "hashable"),
        (np.array([math.nan, 1.0, math.nan]), "missing value"),
        ([math.nan, math.nan, 0.0], "missing value"),
        (pd.Series([1, pd.NA, 0], dtype="Int64"), "missing value"),
        (pd.Series(["a", pd.NA], dtype="string"), "missing value"),
        (pd.Series([pd.NaT, pd.Timestamp(0)]), "missing value"),
        (["a", frozenset({1})], "cannot be held by a saved model"),
        (["a", b"b"], "cannot be held by a saved model"),
        (["a", decimal.Decimal(1)], "cannot be held by a saved model"),
        (np.array([1, 2], dtype=complex), "cannot be held by a saved model"),
    ],
)
def test_labels_reject_missing_unhashable_and_unsaveable(y, message):
    with pytest.raises(ValueError, match=message):
        labels(y)


def test_check_label():
    for good in ["a", 0, 1.5, True, (1, "a"), (1, None, 2.5), np.int64(2)]:
        assert check_label(good) == good
    assert type(check_label(np.str_("a"))) is str and type(check_label(np.int64(2))) is int
    for missing in [None, math.nan, np.float32("nan"), pd.NA, pd.NaT, np.datetime64("NaT")]:
        with pytest.raises(ValueError, match="y must not be None or another missing value"):
            check_label(missing)
    for bad in [["a"], {"a": 1}, {1}]:
        with pytest.raises(ValueError, match="y must be hashable"):
            check_label(bad)
    # a tuple holding NaN equals only itself: a loaded model could not find it again
    for bad in [frozenset({1}), b"a", 1j, decimal.Decimal(1), pd.Timestamp(0), ("a", b"b"), (1, None, math.nan)]:
        with pytest.raises(ValueError, match="class label y: .*cannot be held by a saved model"):
            check_label(bad)


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.integers(), st.integers(-(2**200), 2**200), st.text(), st.booleans()))
def test_check_label_takes_python_ints_strings_and_bools_as_the_policy_does(label):
    from wnb_stream.summaries.policy import model_label

    expected = model_label(label)
    got = check_label(label)
    assert type(got) is type(expected) and got == expected and got is label


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.floats(), st.sampled_from([-0.0, 0.0, 1.0, math.inf, -math.inf, math.nan, 5e-324])))
def test_fast_weight_is_check_weight_for_python_floats(w):
    """``learn_one`` reads its weight with ``fast_weight``: the same float as ``check_weight``, or
    the same error."""
    from wnb_stream.summaries.policy import check_weight, fast_weight

    def read(check):
        try:
            return np.float64(check(w)).view(np.int64)
        except ValueError as error:
            return str(error)

    assert read(fast_weight) == read(check_weight)


def test_check_sample_weights():
    np.testing.assert_array_equal(check_sample_weights(None, 3), np.ones(3))
    np.testing.assert_array_equal(check_sample_weights(pd.Series([0, 2.5, 1]), 3), [0.0, 2.5, 1.0])
    np.testing.assert_array_equal(check_sample_weights((w for w in [1, 0]), 2), [1.0, 0.0])
    for bad in [[1.0, 2.0], [1.0, -0.5, 1.0], [1.0, math.nan, 1.0], [math.inf, 1.0, 1.0]]:
        with pytest.raises(ValueError, match="w must hold one finite weight >= 0 per row of X"):
            check_sample_weights(bad, 3)


def test_columns_named_by_mixed_types_are_read_by_position():
    X = pd.DataFrame({"c": ["u", None], b"n": [1e308, math.nan], 7: [math.nan, 2.0], ("t", 1): [0.5, 1.5]})
    frame = RowParser(Registry()).frame(X)
    assert frame.numeric_names == [b"n", 7, ("t", 1)]
    np.testing.assert_array_equal(frame.numeric, [[1e308, math.nan, 0.5], [math.nan, 2.0, 1.5]])
