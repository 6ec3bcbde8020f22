"""The level-1 contract, checked on every summary and configuration (``wnb_stream.summaries.base``).

For each configuration: ``update_many`` leaves the state of a loop of ``update``; ``merge`` agrees
with one summary fed both streams (exactly for counts, within float rounding for moments, within
the stated bound for GK's ranks, cPiD's re-binning and the sketches); a ``persistence`` round trip
gives a summary with the same table that goes on learning identically; bad input raises the
documented exception and leaves the summary byte for byte as it was; ``_check`` holds after random
updates and merges; and the numeric summaries give one answer to one input
(``docs/algorithms/summaries.md#input-policy``, ``#merge``).

Weights are drawn from dyadic fractions (0.25, 0.5, …), whose sums are exact in floating point:
that is the condition under which the summaries promise bit-for-bit equality of counts.
"""

from __future__ import annotations

import dataclasses
import decimal
import fractions
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import persistence
from wnb_stream.summaries import Categorical, CPiD, Gaussian, GKClass, Summary
from wnb_stream.summaries import policy

CONFIGS = {
    "gk-eps0.01": lambda: GKClass(epsilon=0.01, buffer_size=16),
    "gk-eps0.1": lambda: GKClass(epsilon=0.1, buffer_size=7),
    "gk-eps0.3": lambda: GKClass(epsilon=0.3, buffer_size=1),
    "gk-quantiles": lambda: GKClass(quantiles=4, buffer_size=5),
    "gk-budget": lambda: GKClass(max_tuples=5, buffer_size=6),
    "cpid": lambda: CPiD(n_bins=8, warm_up=5),
    "cpid-step": lambda: CPiD(n_bins=5, warm_up=3, tail_split="step"),
    "gaussian": lambda: Gaussian(),
    "categorical-exact": lambda: Categorical(),
    "categorical-sketch": lambda: Categorical(max_values=3, top_k=2, epsilon=0.2, delta=0.1, seed=5),
}
NUMERIC = [name for name in CONFIGS if CONFIGS[name]().kind == "numeric"]
EXAMPLES = examples(30)  # per configuration and property (in CI): the file runs in well under a minute

numeric_values = st.one_of(
    st.integers(-6, 6).map(float),  # repeated values
    st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
    st.sampled_from([math.nan, math.inf, -math.inf, None]),
)
category_values = st.sampled_from(["a", "b", "c", "d", "e", 1, 1.0, 2, (1, "t"), None, math.nan])
weights = st.sampled_from([1.0, 1.0, 1.0, 0.0, 0.25, 0.5, 2.0, 3.0])  # dyadic: exact sums
LABEL_POOLS = [("x", "y", "z"), (0, 1, 2, 3), ("x", 0, (1, 2))]


@st.composite
def streams(draw, kind: str, max_size: int = 40):
    """Rows ``(x, y, w)`` of one kind of variable, with labels from one pool."""
    pool = LABEL_POOLS[draw(st.integers(0, len(LABEL_POOLS) - 1))]
    values = numeric_values if kind == "numeric" else category_values
    return draw(st.lists(st.tuples(values, st.sampled_from(pool), weights), max_size=max_size))


def batch(rows: list, kind: str, as_arrays: bool) -> tuple:
    """``(values, labels, weights)`` of ``rows`` as lists, or as the arrays a caller would build."""
    values, labels, w = [x for x, _, _ in rows], [y for _, y, _ in rows], [w for _, _, w in rows]
    if not as_arrays:
        return values, labels, w
    if kind == "numeric":
        values = np.array([math.nan if x is None else x for x in values], dtype=float)
    elif values and all(type(x) is str for x in values):
        values = np.array(values)  # a string array, as pandas or a CSV reader gives
    else:
        values = _objects(values)
    typed = {type(y) for y in labels}
    labels = np.array(labels) if len(typed) == 1 and typed <= {int, str} else _objects(labels)
    return values, labels, np.array(w)


def _objects(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):  # element by element: tuples stay one entry
        out[i] = item
    return out


def feed(summary: Summary, rows: list, how: str) -> None:
    kind = summary.kind
    if how == "loop":
        for x, y, w in rows:
            summary.update(x, y, w)
    else:
        summary.update_many(*batch(rows, kind, as_arrays=how == "arrays"))


def assert_same_table(a, b, moments_tolerance: float = 0.0) -> None:
    """Equal tables: the same class order and values (and their types), bit-identical arrays;
    a ``Moments`` table's means and variances within ``moments_tolerance`` relative to the scale
    of the data (0: bit-identical too)."""
    assert type(a) is type(b)
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, field.name
            if moments_tolerance and field.name in ("means", "variances"):
                scale = 1.0 + float(np.max(np.abs(a.means), initial=0.0) + np.sqrt(np.max(a.variances, initial=0.0)))
                atol = moments_tolerance * (scale if field.name == "means" else scale * scale)
                assert np.allclose(x, y, rtol=moments_tolerance, atol=atol), (field.name, x, y)
            else:
                assert x.tobytes() == y.tobytes(), (field.name, x, y)
        else:
            assert x == y and [type(v) for v in x] == [type(v) for v in y], field.name


def moments_rtol(summary: Summary) -> float:
    """The Gaussian's update_many and merge agree with its loop up to float rounding (Chan's
    combination against Welford's update); every other table is bit-identical."""
    return 1e-9 if isinstance(summary, Gaussian) else 0.0


def dumps(summary: Summary) -> str:
    return persistence.dumps(summary)


# --------------------------------------------------------------------------------------------
# update_many ≡ a loop of update
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_update_many_equals_a_loop_of_update(name, data):
    loop, batched = CONFIGS[name](), CONFIGS[name]()
    rows = data.draw(streams(loop.kind, max_size=60))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(rows)), max_size=4)))
    feed(loop, rows, "loop")
    for start, stop in zip([0, *cuts], [*cuts, len(rows)]):
        feed(batched, rows[start:stop], data.draw(st.sampled_from(["lists", "arrays"])))
    assert batched.classes == loop.classes
    assert batched.n == loop.n
    assert_same_table(batched.table(), loop.table(), moments_rtol(loop))
    if isinstance(loop, Categorical) and loop.mode == "sketch":  # the sketch itself, not only its table
        assert batched._sketch.counts.tobytes() == loop._sketch.counts.tobytes()
        slots = [[(v, s.count, s.error) for v, s in c._heavy.items()] for c in (batched, loop)]
        assert slots[0] == slots[1]
    batched._check()


def test_categorical_sketch_update_many_is_a_loop_even_when_evictions_depend_on_order():
    """A batch whose values arrive interleaved: adding each distinct value once with its total
    (the former rule) would monitor 'a' and 'b'; the loop, row by row, evicts and re-admits."""
    rows = [(v, "y", 1.0) for v in "abcabcdddd"]
    loop, batched = Categorical(max_values=1, top_k=2, seed=1), Categorical(max_values=1, top_k=2, seed=1)
    feed(loop, rows, "loop")
    feed(batched, rows, "arrays")
    assert [(v, s.count, s.error) for v, s in batched._heavy.items()] == [
        (v, s.count, s.error) for v, s in loop._heavy.items()
    ]
    assert_same_table(batched.table(), loop.table())


# --------------------------------------------------------------------------------------------
# merge ≡ one summary fed both streams
# --------------------------------------------------------------------------------------------


def _truth(rows: list, kind: str):
    """Per class: weight of the present values, weight of the missing ones; and the present rows."""
    present, missing, kept = {}, {}, []
    for x, y, w in rows:
        absent = policy.numeric_value(x) is None if kind == "numeric" else policy.is_missing_category(x)
        target = missing if absent else present
        target[y] = target.get(y, 0.0) + w
        if not absent:
            kept.append((x, y, w))
    return present, missing, kept


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_merge_agrees_with_one_summary_fed_both_streams(name, data):
    a, b, one = CONFIGS[name](), CONFIGS[name](), CONFIGS[name]()
    first, second = data.draw(streams(a.kind)), data.draw(streams(a.kind))
    feed(a, first, "lists")
    feed(b, second, "arrays")
    feed(one, first + second, "loop")
    a.merge(b)
    a._check()
    b._check()
    assert a.classes == one.classes  # the other stream's new classes, in its order
    assert a.n == one.n
    merged, single = a.table(), one.table()
    assert merged.missing.tobytes() == single.missing.tobytes()
    present, _, kept = _truth(first + second, a.kind)
    expected = np.array([present.get(c, 0.0) for c in a.classes])
    if isinstance(a, Gaussian):
        assert_same_table(merged, single, moments_tolerance=1e-9)
    elif isinstance(a, GKClass):
        assert np.array_equal(merged.counts.sum(axis=0), expected)  # class totals: exact
        _assert_ranks_within_bound(a, kept)
    elif isinstance(a, CPiD):  # re-binning moves counts, conserves them up to rounding
        assert np.allclose(merged.counts.sum(axis=0), expected, rtol=1e-9, atol=1e-9)
        assert len(merged.upper_bounds) <= a.n_bins
    elif a.mode == "exact":
        assert one.mode == "exact"
        assert_same_table(merged, single)
    else:
        _assert_sketch_bounds(a, one, kept, expected)


def _assert_ranks_within_bound(gk: GKClass, kept: list) -> None:
    """Every rank within ε·n of the true weight of the values ≤ x (ε the merged guarantee, or the
    error reached in budget mode); Greenwald & Khanna 2001, ``docs/algorithms/summaries.md#gk``."""
    points = sorted({float(x) for x, _, _ in kept} | {-1e9, 1e9})
    n = sum(w for _, _, w in kept)
    epsilon = gk.guaranteed_epsilon if gk.guaranteed_epsilon is not None else gk.effective_epsilon
    for point in points:
        truth = sum(w for x, _, w in kept if float(x) <= point)
        assert abs(gk.rank(point) - truth) <= epsilon * n + 1e-9 * max(1.0, n), (point, truth)


def _assert_sketch_bounds(merged: Categorical, one: Categorical, kept: list, expected: np.ndarray) -> None:
    """A sketched merge: the count-min table is the one-stream one, class totals are exact, and each
    heavy hitter's count over-estimates its weight by at most its error ≤ n / top_k (Metwally et
    al. 2005; ``docs/algorithms/summaries.md#categorical``)."""
    table = merged.table()
    assert merged.mode == one.mode == "sketch"
    assert np.allclose(table.counts.sum(axis=0) + table.star, expected, rtol=1e-12, atol=1e-9)
    assert merged._sketch.counts.tobytes() == one._sketch.counts.tobytes()
    n = float(sum(w for _, _, w in kept))
    for value, slot in merged._heavy.items():
        weight = sum(w for x, _, w in kept if x == value)
        assert slot.count - slot.error <= weight + 1e-9 <= slot.count + 2e-9, (value, slot, weight)
        assert slot.error <= n / merged.top_k + 1e-9


# --------------------------------------------------------------------------------------------
# Serialisation round trip
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_a_persistence_round_trip_keeps_the_table_and_learns_identically(name, data):
    summary = CONFIGS[name]()
    first, second = data.draw(streams(summary.kind)), data.draw(streams(summary.kind))
    feed(summary, first, data.draw(st.sampled_from(["loop", "lists"])))
    copy = persistence.loads(dumps(summary))
    assert type(copy) is type(summary) and copy is not summary
    copy._check()
    assert dumps(copy) == dumps(summary)
    for target in (summary, copy):
        feed(target, second[: len(second) // 2], "loop")
        feed(target, second[len(second) // 2 :], "arrays")
    assert_same_table(copy.table(), summary.table())
    assert dumps(copy) == dumps(summary)


# --------------------------------------------------------------------------------------------
# Bad input: the documented exception, and nothing changes
# --------------------------------------------------------------------------------------------


def _filled(name: str) -> Summary:
    summary = CONFIGS[name]()
    rng = np.random.default_rng(7)
    if summary.kind == "numeric":
        values = [float(v) for v in rng.integers(0, 9, size=23)] + [None, math.inf]
    else:
        values = [str(v) for v in rng.integers(0, 9, size=23)] + [None, "z"]
    for i, x in enumerate(values):  # not a multiple of any buffer size: GK holds pending values
        summary.update(x, ("p", "q")[i % 2], 1.0)
    return summary


OK = {"numeric": 1.0, "categorical": "a"}
BAD_VALUES = {
    "numeric": ["1.5", b"1", True, np.bool_(False), 1 + 2j, [1.0], np.datetime64("2020-01-01")],
    "categorical": [["unhashable"], {"k": 1}],
}
BAD_BATCH_VALUES = {
    "numeric": [["1.5", 2.0], [1.0, True], np.array([True, False]), np.array(["1", "2"]), np.array([1 + 1j, 2])],
    "categorical": [[["unhashable"], "a"], _objects([{"k": 1}, "a"])],
}


def _bad_calls(kind: str) -> list:
    ok = OK[kind]
    calls = [("x ", lambda s, x=x: s.update(x, "p")) for x in BAD_VALUES[kind]]
    calls += [("x ", lambda s, v=v: s.update_many(v, ["p", "q"])) for v in BAD_BATCH_VALUES[kind]]
    calls += [
        ("y ", lambda s: s.update(ok, None)),
        ("y ", lambda s: s.update(ok, ["unhashable"])),
        ("y ", lambda s: s.update(None, {"unhashable": 1})),
        ("y ", lambda s: s.update_many([ok, ok], ["new", None])),
        ("y ", lambda s: s.update_many([ok, ok], _objects(["new", ["unhashable"]]))),
        ("w ", lambda s: s.update(ok, "new", -1.0)),
        ("w ", lambda s: s.update(ok, "new", math.nan)),
        ("w ", lambda s: s.update(ok, "new", math.inf)),
        ("w ", lambda s: s.update(ok, "new", "1")),
        ("w ", lambda s: s.update(ok, "new", True)),
        ("w ", lambda s: s.update(ok, "new", 10**400)),
        ("w ", lambda s: s.update(None, "new", -1.0)),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], [1.0, -1.0])),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], [1.0, math.nan])),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], np.array([math.inf, 1.0]))),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], [1.0, True])),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], [10**400, 1])),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], np.ones((2, 1)))),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], np.array(["1", "2"]))),
        ("weights", lambda s: s.update_many([ok, ok], ["new", "p"], [1.0])),
        ("labels", lambda s: s.update_many([ok, ok], ["new"])),
        ("labels", lambda s: s.update_many([ok, ok], np.array([["new", "p"]]))),
        ("values", lambda s: s.update_many(np.array([[ok, ok]], dtype=object), ["new", "p"])),
        ("values", lambda s: s.update_many(np.array(ok, dtype=object), ["new"])),
        ("codes|labels", lambda s: s.update_coded([ok, ok], np.array([0]), np.array(["new", "p"]))),
        ("codes", lambda s: s.update_coded([ok, ok], np.array([0, 2]), np.array(["new", "p"]))),
        ("codes", lambda s: s.update_coded([ok, ok], np.array([0, -1]), np.array(["p", "q"]))),
        ("codes", lambda s: s.update_coded([ok, ok], np.array([0.0, 1.0]), np.array(["p", "q"]))),
    ]
    return calls


BAD = [(name, i, word.strip()) for name in CONFIGS for i, (word, _) in enumerate(_bad_calls(CONFIGS[name]().kind))]


@pytest.mark.parametrize("name, i", [(name, i) for name, i, _ in BAD], ids=[f"{n}-{i}-{w}" for n, i, w in BAD])
def test_bad_input_raises_a_value_error_naming_it_and_changes_nothing(name, i):
    summary = _filled(name)
    before = dumps(summary)
    word, call = _bad_calls(summary.kind)[i]
    with pytest.raises(ValueError) as raised:
        call(summary)
    assert any(name in str(raised.value) for name in word.split("|")), str(raised.value)  # names the culprit
    assert dumps(summary) == before


@pytest.mark.parametrize("name", CONFIGS)
def test_merging_another_type_raises_type_error_and_changes_nothing(name):
    summary = _filled(name)
    before = dumps(summary)
    for other in (object(), *(make() for other_name, make in CONFIGS.items() if type(make()) is not type(summary))):
        with pytest.raises(TypeError, match=type(summary).__name__):
            summary.merge(other)
    assert dumps(summary) == before


@pytest.mark.parametrize("parameter, value", [("seed", 6), ("epsilon", 0.05), ("delta", 0.001)])
def test_merging_incompatible_parameters_raises_value_error_naming_it(parameter, value):
    summary = _filled("categorical-sketch")
    other = Categorical(**{"max_values": 3, "top_k": 2, "epsilon": 0.2, "delta": 0.1, "seed": 5, parameter: value})
    for i in range(8):
        other.update(f"v{i}", "p")
    before = dumps(summary)
    with pytest.raises(ValueError, match=parameter):
        summary.merge(other)
    assert dumps(summary) == before


# --------------------------------------------------------------------------------------------
# _check after random updates and merges
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_invariants_hold_after_random_updates_and_merges(name, data):
    summary = CONFIGS[name]()
    for _ in range(data.draw(st.integers(1, 6))):
        operation = data.draw(st.sampled_from(["loop", "lists", "arrays", "merge", "merge-self", "table"]))
        if operation == "merge":
            other = CONFIGS[name]()
            feed(other, data.draw(streams(summary.kind)), data.draw(st.sampled_from(["loop", "arrays"])))
            summary.merge(other)
        elif operation == "merge-self":
            summary.merge(summary)
        elif operation == "table":
            assert summary.table().n == pytest.approx(summary.n, rel=1e-12, abs=1e-9)
        else:
            feed(summary, data.draw(streams(summary.kind)), operation)
        summary._check()


def test_check_can_fail():
    summary = _filled("gk-eps0.1")
    summary._flush()
    summary._g[1] += 1.0  # Σ g no longer equals the weight seen
    with pytest.raises(AssertionError):
        summary._check()


# --------------------------------------------------------------------------------------------
# One input, one answer in every numeric summary
# --------------------------------------------------------------------------------------------

try:
    import pandas as pd
except ImportError:  # pragma: no cover - pandas is a test dependency
    pd = None

INPUTS = [
    (True, "error"),
    (False, "error"),
    (np.bool_(True), "error"),
    ("1.5", "error"),
    (b"2", "error"),
    (1 + 2j, "error"),
    (np.datetime64("2020-01-01"), "error"),
    (np.float32(1.5), 1.5),
    (np.float16(-0.5), -0.5),
    (np.int64(3), 3.0),
    (np.uint8(7), 7.0),
    (2, 2.0),
    (fractions.Fraction(1, 4), 0.25),
    (-0.0, -0.0),
    (10**400, "error"),  # finite, beyond the float range: neither missing nor representable
    (decimal.Decimal("1e400"), "error"),
    (decimal.Decimal("-2.5"), -2.5),
    (decimal.Decimal("NaN"), "missing"),
    (decimal.Decimal("Infinity"), "missing"),
    (math.nan, "missing"),
    (np.float64("nan"), "missing"),
    (np.float32("nan"), "missing"),
    (math.inf, "missing"),
    (-math.inf, "missing"),
    (np.float64(-np.inf), "missing"),
    (None, "missing"),
    *([(pd.NA, "missing"), (pd.NaT, "missing")] if pd is not None else []),
]


def _answer(summary: Summary):
    """What the summary made of the one value it was given: "missing" or the value it holds."""
    table = summary.table()
    if table.missing.sum() == 1.0:
        return "missing"
    if isinstance(summary, Gaussian):
        return float(table.means[0])
    assert len(table.upper_bounds) == 1
    return float(table.upper_bounds[0])


@pytest.mark.parametrize("x, expected", INPUTS, ids=[repr(x)[:24] for x, _ in INPUTS])
def test_one_input_gets_one_answer_in_every_numeric_summary(x, expected):
    answers = []
    for name in NUMERIC:
        for form in ("update", "list", "object array", "array"):
            summary = CONFIGS[name]()
            try:
                if form == "update":
                    summary.update(x, "p")
                elif form == "list":
                    summary.update_many([x], ["p"])
                elif form == "object array":
                    summary.update_many(_objects([x]), ["p"])
                else:
                    summary.update_many(np.array([x]), ["p"])
            except ValueError as error:
                assert "x " in str(error) and "real number" in str(error)
                answers.append((name, form, "error"))
                continue
            summary._check()
            answers.append((name, form, _answer(summary)))
    assert {answer for _, _, answer in answers} == {expected}, answers
