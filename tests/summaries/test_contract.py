"""The level-1 contract, checked on every summary and configuration (``wnb_stream.summaries.base``).

For each configuration: ``update_many`` leaves the state of a loop of ``update``; ``merge`` agrees
with one summary fed both streams (exactly for counts, within float rounding for moments, within
the stated bound for GK's ranks, cPiD's re-binning and the sketches); a saved-model round trip (``io``)
gives a summary with the same table that goes on learning identically; bad input raises the
documented exception and leaves the summary byte for byte as it was; ``problems()`` is empty after random
updates and merges; and the numeric summaries give one answer to one input
(``docs/algorithms/summaries.md#input-policy``, ``#merge``).

Weights are drawn from dyadic fractions (0.25, 0.5, …), whose sums are exact in floating point:
that is the condition under which the summaries promise bit-for-bit equality of counts.
"""

from __future__ import annotations

import decimal
import fractions
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from summary_cases import CONFIGS, EXAMPLES, NUMERIC, _filled, _objects, _truth, assert_same_table, dumps, feed, moments_rtol, streams

from wnb_stream import io
from wnb_stream.summaries import Categorical, CPiD, Gaussian, GKClass, Summary

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
    assert not batched.problems()


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
    assert not a.problems()
    assert not b.problems()
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


def test_a_loaded_sketch_saves_as_its_original_after_the_wider_heavy_hitter_is_evicted():
    """A heavy hitter's class counts are a list as long as the largest class it was given; a
    loaded sketch's lists all have the width saved. Once the one slot with a second class is
    evicted, the two used to save different widths of the same counts (Hypothesis found it)."""
    summary = CONFIGS["categorical-sketch"]()
    feed(summary, [("a", "x", 1.0)] * 5 + [("b", "x", 1.0), ("b", "x", 1.0), ("b", "x", 2.0), ("c", "y", 1.0), ("d", "x", 1.0)], "loop")
    copy = io.loads(io.dumps(summary))
    for target in (summary, copy):
        feed(target, [("b", "x", 1.0)], "arrays")
    assert_same_table(copy.table(), summary.table())
    assert io.dumps(copy) == io.dumps(summary)


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_a_saved_round_trip_keeps_the_table_and_learns_identically(name, data):
    summary = CONFIGS[name]()
    first, second = data.draw(streams(summary.kind)), data.draw(streams(summary.kind))
    feed(summary, first, data.draw(st.sampled_from(["loop", "lists"])))
    copy = io.loads(io.dumps(summary))
    assert type(copy) is type(summary) and copy is not summary
    assert not copy.problems()
    assert io.dumps(copy) == io.dumps(summary)
    for target in (summary, copy):
        feed(target, second[: len(second) // 2], "loop")
        feed(target, second[len(second) // 2 :], "arrays")
    assert_same_table(copy.table(), summary.table())
    assert io.dumps(copy) == io.dumps(summary)


# --------------------------------------------------------------------------------------------
# Bad input: the documented exception, and nothing changes
# --------------------------------------------------------------------------------------------


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
        assert not summary.problems()


def test_check_can_fail():
    summary = _filled("gk-eps0.1")
    summary._flush()
    summary._g[1] += 1.0  # Σ g no longer equals the weight seen
    with pytest.raises(AssertionError):
        assert not summary.problems()


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
            assert not summary.problems()
            answers.append((name, form, _answer(summary)))
    assert {answer for _, _, answer in answers} == {expected}, answers
