"""Fuzzing the public entry points with hostile input, on every learner × numeric summary.

Hypothesis (derandomized: the same examples on every run, bounded so that the file runs in about a
minute) draws streams of calls: ``learn_one``, ``learn_many``, ``predict_proba_one`` and
``predict_proba_many``, with values from every row of the input-policy table
(``docs/algorithms/summaries.md#input-policy``): missing markers (None, NaN, ``pd.NA``,
``pd.NaT``), ±inf, finite extremes (±1e308, the largest float, the smallest subnormal), dates,
``Decimal``, ``Fraction``, complex numbers, bytes, ints beyond the float range, unhashable and
unsaveable values, values of the other kind; hostile labels (NaN, None, ``pd.NA``, unsaveable),
sample weights (0, 1e3, 1e300, negative, NaN, inf, bools) and frames (empty, duplicate column
names, nullable and string dtypes with NA, datetime and complex columns).

After every call:

- a call that raised (``ValueError``, the only exception allowed) left the saved record,
  ``io.dumps(model, compress=False)``, byte for byte as it was;
- the model's invariants hold (``_check``) and its probabilities are a distribution: finite, in
  [0, 1], summing to 1, on the call's own rows and on a probe set;
- a call that was accepted left a model that saves and loads (``io.loads(io.dumps(model))``) to
  identical predictions on the probe set, by ``predict_proba_one`` and ``predict_proba_many``.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
import math
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.control import event as _event
from profiles import examples

from wnb_stream import WeightedNaiveBayes, io, summaries, weights

OPTIMIZERS = {
    "Uniform": lambda: weights.Uniform(),
    "PGDMB": lambda: weights.PGDMB(batch_size=20),
    "VNS": lambda: weights.VNS(batch_size=20),
    "Graphical": lambda: weights.Graphical(),
}
SUMMARIES = {"GKClass": summaries.GKClass, "CPiD": summaries.CPiD, "Gaussian": summaries.Gaussian}
EXAMPLES = examples(30)  # per learner × summary: 12 × 30 streams of up to 24 calls (in CI)

BIG = sys.float_info.max
ORDINARY_NUMBERS = st.one_of(st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 2)), st.integers(-3, 3))
# hostile numbers the policy accepts (missing markers, extremes, NumPy scalars, dates, Decimal…)…
ACCEPTED_NUMBERS = [
    1e308, -1e308, BIG, -BIG, 5e-324, -5e-324, 1e-300, math.inf, -math.inf, math.nan, None, pd.NA, pd.NaT,
    np.float32(2.5), np.int64(-4), np.uint8(7), np.float64(1e308), np.datetime64("2020-01-01"),
    np.datetime64("NaT"), pd.Timestamp("2021-06-30 12:00", tz="UTC"), datetime.date(1999, 12, 31),
    datetime.timedelta(hours=1), pd.Timedelta("3s"), decimal.Decimal("1.5"), decimal.Decimal("NaN"),
    decimal.Decimal("-Infinity"), fractions.Fraction(1, 3),
]  # fmt: skip
# …and those it refuses (or takes as the other kind)
REFUSED_NUMBERS = [decimal.Decimal("1e400"), 10**400, -(10**400), 1 + 2j, b"x", [1], {"a": 1}, frozenset({1}), True, "u", ("t", 1)]
HOSTILE_NUMBERS = st.one_of(st.sampled_from(ACCEPTED_NUMBERS), st.sampled_from(REFUSED_NUMBERS))
ORDINARY_CATEGORIES = st.sampled_from(["u", "v", "w", True, False])
ACCEPTED_CATEGORIES = [None, math.nan, pd.NA, pd.NaT, np.str_("v"), np.bool_(True), ("t", 1), ("t", (None, 2.5)), ""]
REFUSED_CATEGORIES = [1.5, math.inf, 1e308, b"x", [1], frozenset(), ("t", b"x"), 1j, decimal.Decimal(2), pd.Timestamp(0)]
HOSTILE_CATEGORIES = st.one_of(st.sampled_from(ACCEPTED_CATEGORIES), st.sampled_from(REFUSED_CATEGORIES))
NAMES = st.sampled_from(["n0", "n0", "n0", "n1", "n1", "n1", "c0", "c0", "c0", "late", ("t", 1), 7, frozenset({1}), None, b"n", np.str_("n1")])
ORDINARY_LABELS = st.sampled_from(["a", "b", "c"])
HOSTILE_LABELS = st.sampled_from(
    [math.nan, None, pd.NA, pd.NaT, np.str_("a"), frozenset({1}), b"a", decimal.Decimal(1), 1j, ("a", 1), [1], 7, True]
)
ORDINARY_WEIGHTS = st.sampled_from([1.0, 1.0, 1.0, 2.0, 0.5, 0.0])
HOSTILE_WEIGHTS = st.sampled_from([1e3, 1e300, 5e-324, -1.0, math.nan, math.inf, True, 10**400, np.float32(3.0)])


def rare(ordinary, hostile, one_in: int = 4):
    """Mostly ordinary draws, a hostile one sometimes."""
    return st.integers(0, one_in - 1).flatmap(lambda roll: hostile if roll == 0 else ordinary)


def value_for(name, refused: int):
    """A value for feature ``name``: ordinary mostly; hostile but accepted one time in 4; refused
    (or of the other kind) one time in ``refused``."""
    if name == "c0":
        ordinary, accepted, bad = ORDINARY_CATEGORIES, st.sampled_from(ACCEPTED_CATEGORIES), st.sampled_from(REFUSED_CATEGORIES)
    else:
        ordinary, accepted, bad = ORDINARY_NUMBERS, st.sampled_from(ACCEPTED_NUMBERS), st.sampled_from(REFUSED_NUMBERS)
        if name == "late":  # a feature whose first value decides its kind
            ordinary = st.one_of(ORDINARY_NUMBERS, ORDINARY_CATEGORIES)
    return st.integers(0, 4 * refused - 1).flatmap(lambda roll: bad if roll == 0 else accepted if roll % 4 == 1 else ordinary)


@st.composite
def rows(draw, refused: int = 6):
    names = draw(st.lists(NAMES, max_size=4, unique_by=lambda n: (type(n), repr(n))))
    return {name: draw(value_for(name, refused)) for name in names}


FRAMES = ["records", "records", "records", "empty", "no rows", "duplicate", "string NA", "Int64 NA", "datetime", "complex"]


@st.composite
def frames(draw, n):
    kind = draw(st.sampled_from(FRAMES))
    records = [draw(rows(refused=40)) for _ in range(n)]  # one refused cell refuses the batch: rarer
    if kind == "empty":
        return pd.DataFrame(index=range(n)) if draw(st.booleans()) else pd.DataFrame()
    if kind == "no rows":
        return pd.DataFrame({"n0": pd.Series([], dtype=float), "c0": pd.Series([], dtype=object)})
    try:
        X = pd.DataFrame(records, index=range(n)) if records and any(records) else pd.DataFrame(index=range(n))
    except OverflowError:  # pandas cannot infer a column holding 10**400: object columns
        names = list(dict.fromkeys(name for x in records for name in x))
        X = pd.DataFrame({name: pd.Series([x.get(name, math.nan) for x in records], dtype=object) for name in names}, index=range(n))
    if kind == "duplicate" and n:
        X = pd.DataFrame(np.zeros((n, 2)), columns=["n0", "n0"])
    elif kind == "string NA" and n:
        X["c0"] = pd.array([draw(st.sampled_from(["u", "v", pd.NA])) for _ in range(n)], dtype="string")
    elif kind == "Int64 NA" and n:
        X["n1"] = pd.array([draw(st.sampled_from([1, 2, pd.NA])) for _ in range(n)], dtype="Int64")
    elif kind == "datetime" and n:
        X["n1"] = pd.to_datetime([draw(st.sampled_from(["2020-01-01 00:00:00", "2021-02-03 04:05:06", None])) for _ in range(n)], format="ISO8601")
    elif kind == "complex" and n:
        X["n0"] = np.array([1 + 1j] * n)
    return X


@st.composite
def labels_of(draw, n):
    ys = [draw(rare(ORDINARY_LABELS, HOSTILE_LABELS, one_in=12)) for _ in range(n)]
    container = draw(st.sampled_from(["list", "series", "array"]))
    if container == "series":
        return pd.Series(ys, dtype=object)
    if container == "array":
        out = np.empty(len(ys), dtype=object)
        out[:] = ys
        return out
    return ys


@st.composite
def calls(draw):
    policy = draw(st.sampled_from(["raise", "missing"]))
    ops = []
    for _ in range(draw(st.integers(4, 24))):
        op = draw(st.sampled_from(["learn_one"] * 5 + ["learn_many"] * 2 + ["predict_proba_one", "predict_proba_many"]))
        if op == "learn_one":
            ops.append((op, draw(rows()), draw(rare(ORDINARY_LABELS, HOSTILE_LABELS, one_in=10)), draw(rare(ORDINARY_WEIGHTS, HOSTILE_WEIGHTS, one_in=8))))
        elif op == "learn_many":
            n = draw(st.integers(0, 12))
            weights_ = None if draw(st.booleans()) else [draw(rare(ORDINARY_WEIGHTS, HOSTILE_WEIGHTS, one_in=12)) for _ in range(n)]
            ops.append((op, draw(frames(n)), draw(labels_of(n)), weights_))
        elif op == "predict_proba_one":
            ops.append((op, draw(rows()), None, None))
        else:
            n = draw(st.integers(0, 6))
            ops.append((op, draw(frames(n)), None, None))
    return policy, ops


def event(text: str) -> None:
    """hypothesis' ``event`` inside a drawn test (its statistics), nothing outside."""
    if currently_in_test_context():
        _event(text)


def record(model) -> bytes:
    return io.dumps(model, compress=False)


def assert_distribution(p: dict, classes: tuple) -> None:
    assert list(p) == list(classes)
    values = np.array(list(p.values()), dtype=float)
    if len(values):
        assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all(), p
        assert math.isclose(values.sum(), 1.0, abs_tol=1e-9), p


def assert_frame_distribution(P: pd.DataFrame, classes: tuple, n: int) -> None:
    assert P.shape == (n, len(classes)) and list(P.columns) == list(classes)
    if n and classes:
        values = P.to_numpy(dtype=float)
        assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()
        np.testing.assert_allclose(values.sum(axis=1), 1.0, atol=1e-9)


def probes(model) -> list:
    """Rows every model accepts: each variable given a value of its own kind, missing or absent."""
    variables = model._engine.registry.variables
    plain = {v.name: (0.5 if v.kind == "numeric" else "u") for v in variables}
    extreme = {v.name: (1e308 if v.kind == "numeric" else ("t", 1)) for v in variables}
    missing = {v.name: None for v in variables}
    return [{}, plain, extreme, missing]


def assert_valid_everywhere(model) -> None:
    model._check()
    for x in probes(model):
        assert_distribution(model.predict_proba_one(x), model.classes)


def assert_saves_and_loads_to_the_same_predictions(model, saved: bytes) -> None:
    copy = io.loads(saved)
    copy._check()
    assert copy.classes == model.classes
    xs = probes(model)
    for x in xs:
        assert copy.predict_proba_one(x) == model.predict_proba_one(x)
    X = pd.DataFrame(xs[1:], index=range(len(xs) - 1)) if len(model._engine.registry) else pd.DataFrame(index=range(2))
    pd.testing.assert_frame_equal(copy.predict_proba_many(X), model.predict_proba_many(X))


def run(optimizer: str, numeric: str, policy: str, ops: list, round_trip_every: int = 1) -> None:
    """The calls ``ops`` on a fresh model, with the module's assertions after each; the save and
    load round trip after every ``round_trip_every``-th accepted call that changed the model, and
    at the end."""
    model = WeightedNaiveBayes(numeric=SUMMARIES[numeric](), optimizer=OPTIMIZERS[optimizer](), history_size=40, on_type_change=policy, seed=3)
    before = record(model)
    changed = 0
    for op, x, y, w in ops:
        try:
            if op == "learn_one":
                model.learn_one(x, y, w) if w is not None else model.learn_one(x, y)
            elif op == "learn_many":
                model.learn_many(x, y, w)
            elif op == "predict_proba_one":
                assert_distribution(model.predict_proba_one(x), model.classes)
            else:
                assert_frame_distribution(model.predict_proba_many(x), model.classes, len(x))
        except ValueError:
            event(f"{op} rejected")
            assert record(model) == before, f"a rejected {op} changed the model"
            assert_valid_everywhere(model)
            continue
        event(f"{op} accepted")
        assert_valid_everywhere(model)
        after = record(model)
        if op.startswith("learn"):
            if op == "learn_one":
                assert_distribution(model.predict_proba_one(x), model.classes)
            else:
                assert_frame_distribution(model.predict_proba_many(x), model.classes, len(x))
            if after != before:
                changed += 1
                if changed % round_trip_every == 0:
                    assert_saves_and_loads_to_the_same_predictions(model, after)
        else:
            assert after == before, "a prediction changed the model"
        before = after
    assert_saves_and_loads_to_the_same_predictions(model, record(model))
    event(f"classes: {len(model.classes)}, variables: {len(model._engine.registry)}")


@pytest.mark.parametrize("numeric", list(SUMMARIES))
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])  # fmt: skip
@given(stream=calls())
def test_hostile_streams_leave_valid_saveable_models_and_rejected_calls_change_nothing(optimizer, numeric, stream):
    policy, ops = stream
    run(optimizer, numeric, policy, ops)


@pytest.mark.parametrize("numeric", list(SUMMARIES))
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_a_fixed_stream_of_every_hostile_value(optimizer, numeric):
    """Every hostile value of the strategies once, in each numeric, categorical and new feature,
    between ordinary rows: the same assertions as the drawn streams, deterministically."""
    ops = []
    for i, value in enumerate(ACCEPTED_NUMBERS + REFUSED_NUMBERS + ACCEPTED_CATEGORIES + REFUSED_CATEGORIES):
        y = "abc"[i % 3]
        ops.append(("learn_one", {"n0": float(i % 5), "c0": "uvw"[i % 3]}, y, 1.0))
        for name in ("n0", "c0", f"new{i}"):
            ops.append(("learn_one", {name: value, "n1": 0.25 * i}, y, 1.0))
        ops.append(("predict_proba_one", {"n0": value, "c0": value}, None, None))
    for y in HOSTILE_LABELS.elements:
        ops.append(("learn_one", {"n0": 1.0}, y, 1.0))
    for w in HOSTILE_WEIGHTS.elements:
        ops.append(("learn_one", {"n0": 2.0, "c0": "v"}, "a", w))
    for i in range(8):  # a burst of the largest weights (their total stays below MAX_TOTAL_WEIGHT)
        ops.append(("learn_one", {"n0": float(i % 3), "c0": "uvw"[i % 3], "n1": 1e308 * (-1) ** i}, "abc"[i % 3], 1e300))
        ops.append(("learn_many", pd.DataFrame({"n0": [0.5, 2.5], "c0": ["u", "w"]}), ["a", "c"], [1.0, 1e300]))
    run(optimizer, numeric, "raise", ops, round_trip_every=3)
