"""Forgetting: ``decay(factor)`` on every summary and configuration of the contract
(``wnb_stream.summaries.base``, ``docs/algorithms/summaries.md#forgetting``).

After ``s.decay(f)``, ``s`` answers as a summary fed the same stream with every weight times
``f``. With a power-of-two factor every product and every sum of the (dyadic) test weights is
exact in floating point and every rule of the summaries is scale-equivariant, so the decayed
summary *is* that summary, bit for bit, except cPiD, whose split test ``(1 + count)/(N + 2) > α``
counts in units of weight. With any other factor the tables scale up to rounding and the stated
guarantees hold relative to the decayed weights: GK's rank error ≤ εn, cPiD's conserved class
totals, the count-min and SpaceSaving bounds. ``decay(1)`` changes nothing; a bad factor raises
and changes nothing; decay commutes with merge; a long decay keeps every state valid.
"""

from __future__ import annotations

import dataclasses
import fractions
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from summary_cases import CONFIGS, EXAMPLES, _filled, _truth, dumps, feed, streams

from wnb_stream import io
from wnb_stream.summaries import Categorical, CPiD, Gaussian, GKClass, Summary

#: powers of two: products and sums of dyadic weights stay exact
DYADIC_FACTORS = (0.5, 0.25, 0.125, 2.0**-10)
DYADIC = st.sampled_from(DYADIC_FACTORS)
#: any factor a user may pass (0.999 … 0.001), and powers of two
FACTORS = st.one_of(DYADIC, st.floats(1e-3, 1.0, exclude_max=True))


def clear_of_subnormals(rows: list) -> bool:
    """No value so small that a second moment of it, times a dyadic factor, would be subnormal:
    below 2⁻¹⁰²² a float loses bits, so a power of two no longer multiplies exactly (Hypothesis
    found the values 0 and 1.7e-160 in CI on b4d61d4: their second moment, 7.5e-321, decayed inexactly)."""
    return all(not isinstance(x, float) or x == 0.0 or not math.isfinite(x) or abs(x) >= 1e-100 for x, _, _ in rows)


def scaled(rows: list, factor: float) -> list:
    """The rows with every weight times ``factor``."""
    return [(x, y, w * factor) for x, y, w in rows]


def filled(name: str, rows: list, how: str = "lists") -> Summary:
    summary = CONFIGS[name]()
    feed(summary, rows, how)
    return summary


def class_totals(summary: Summary) -> np.ndarray:
    """Per class, the weight of the present values according to the table."""
    table = summary.table()
    if isinstance(summary, Gaussian):
        return table.weights
    if isinstance(summary, Categorical):
        return table.counts.sum(axis=0) + table.star
    return table.counts.sum(axis=0)


def assert_within_guarantee(summary: Summary, rows: list) -> None:
    """``summary`` answers for the weighted ``rows`` within its stated guarantee: missing counts and
    class totals (up to rounding); GK's ranks within εn (Greenwald & Khanna 2001); each heavy hitter
    within its error ≤ n / top_k (Metwally et al. 2005) and each count-min estimate above the
    weight it estimates (Cormode & Muthukrishnan 2005)."""
    assert not summary.problems()
    present, missing, kept = _truth(rows, summary.kind)
    table = summary.table()
    expected_missing = np.array([missing.get(c, 0.0) for c in summary.classes])
    expected = np.array([present.get(c, 0.0) for c in summary.classes])
    n = float(sum(w for _, _, w in kept))
    tolerance = 1e-9 * max(1.0, n)
    assert np.allclose(table.missing, expected_missing, rtol=1e-9, atol=1e-12)
    assert np.allclose(class_totals(summary), expected, rtol=1e-9, atol=tolerance)
    if isinstance(summary, GKClass):
        epsilon = summary.guaranteed_epsilon
        if epsilon is None:
            epsilon = summary.effective_epsilon
        for point in sorted({float(x) for x, _, _ in kept} | {-1e9, 1e9}):
            truth = sum(w for x, _, w in kept if float(x) <= point)
            assert abs(summary.rank(point) - truth) <= epsilon * n + tolerance, (point, truth)
    elif isinstance(summary, Categorical) and summary.mode == "sketch":
        for value, slot in summary._heavy.items():
            weight = sum(w for x, _, w in kept if x == value)
            assert slot.count - slot.error <= weight + tolerance <= slot.count + 2 * tolerance, (value, slot)
            assert slot.error <= n / summary.top_k + tolerance
        for value in {x for x, _, _ in kept}:
            estimate = summary._sketch.estimate(summary._sketch.cells(value))
            for j, label in enumerate(summary.classes):
                weight = sum(w for x, y, w in kept if x == value and y == label)
                assert estimate[j] >= weight - tolerance, (value, label)


def assert_close_tables(a, b) -> None:
    """The same classes and values, every array equal up to float rounding (relative to its scale)."""
    assert type(a) is type(b) and a.classes == b.classes
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            scale = 1.0 + float(np.max(np.abs(x), initial=0.0))
            assert x.shape == y.shape and np.allclose(x, y, rtol=1e-9, atol=1e-9 * scale), (field.name, x, y)
        else:
            assert x == y, field.name


def assert_table_scaled(decayed, original, factor: float) -> None:
    """``decayed`` is ``original`` with every weight times ``factor``: the same bounds, values and
    classes, the counts multiplied (bit for bit where the summary just multiplies them)."""
    assert type(decayed) is type(original) and decayed.classes == original.classes
    assert decayed.missing.tobytes() == (original.missing * factor).tobytes()
    if hasattr(original, "upper_bounds"):  # Bins: GK and cPiD multiply their counts
        assert decayed.upper_bounds.tobytes() == original.upper_bounds.tobytes()
        # (cPiD may hold two weights at one value apart and add them after the decay: 2f + 3f
        # against 5f, equal up to rounding; Hypothesis found it in CI on 107d461)
        np.testing.assert_allclose(decayed.counts, original.counts * factor, rtol=1e-14, atol=0.0)
    elif hasattr(original, "means"):  # Moments: W scales, μ stays, M2/W up to rounding
        assert decayed.weights.tobytes() == (original.weights * factor).tobytes()
        assert decayed.means.tobytes() == original.means.tobytes()
        assert np.allclose(decayed.variances, original.variances, rtol=1e-12, atol=0.0)
    else:  # Categories: exact counts multiply; a sketch's star and rescaling up to rounding
        assert decayed.values == original.values
        assert np.allclose(decayed.counts, original.counts * factor, rtol=1e-12, atol=0.0)
        assert np.allclose(decayed.star, original.star * factor, rtol=1e-12, atol=1e-12 * max(1.0, original.n))


# --------------------------------------------------------------------------------------------
# decay(f) ≡ the stream with weights × f
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_decay_by_a_power_of_two_is_the_summary_of_the_weights_times_factor(name, data):
    summary = CONFIGS[name]()
    rows = data.draw(streams(summary.kind, max_size=60))
    assume(clear_of_subnormals(rows))  # (the exactness claimed is that of normal floats)
    factor = data.draw(DYADIC)
    how = data.draw(st.sampled_from(["loop", "lists", "arrays"]))
    feed(summary, rows, how)
    original = summary.table()
    summary.decay(factor)
    assert not summary.problems()
    assert_table_scaled(summary.table(), original, factor)
    fed = filled(name, scaled(rows, factor), how)
    fed.table()  # GK flushes its buffer on a query, as the summary did before its decay
    assert summary.n == fed.n
    if isinstance(summary, CPiD):  # its split test is not scale-free: totals only
        assert_within_guarantee(summary, scaled(rows, factor))
    else:  # the very same summary: every array, buffer and heap entry
        assert dumps(summary) == dumps(fed)


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_decay_by_any_factor_scales_the_table_and_keeps_the_guarantee(name, data):
    summary = CONFIGS[name]()
    rows = data.draw(streams(summary.kind, max_size=60))
    factor = data.draw(FACTORS)
    feed(summary, rows, data.draw(st.sampled_from(["loop", "arrays"])))
    original = summary.table()
    summary.decay(factor)
    assert_table_scaled(summary.table(), original, factor)
    assert_within_guarantee(summary, scaled(rows, factor))
    fed = filled(name, scaled(rows, factor), "loop")
    assert summary.n == pytest.approx(fed.n, rel=1e-12, abs=1e-12)
    if isinstance(summary, Gaussian) or (isinstance(summary, Categorical) and summary.mode == "exact"):
        assert_close_tables(summary.table(), fed.table())


ONES = [1, 1.0, np.float64(1.0), np.float32(1.0), fractions.Fraction(1, 1)]


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("one", ONES, ids=[repr(one) for one in ONES])
def test_decay_by_one_changes_nothing(name, one):
    summary = _filled(name)  # GK holds pending values, cPiD has started, the sketch is full
    before = dumps(summary)
    summary.decay(one)
    assert dumps(summary) == before


# --------------------------------------------------------------------------------------------
# Decay and merge: summaries sharing a clock stay mergeable
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_decay_then_updates_then_merge_agrees_with_one_summary_fed_the_decayed_streams(name, data):
    kind = CONFIGS[name]().kind
    a_old, a_new, b_old, b_new = (data.draw(streams(kind)) for _ in range(4))
    factor = data.draw(FACTORS)
    a, b = filled(name, a_old, "lists"), filled(name, b_old, "arrays")
    a.decay(factor)
    b.decay(factor)
    feed(a, a_new, "loop")
    feed(b, b_new, "arrays")
    a.merge(b)
    assert not b.problems()
    rows = scaled(a_old, factor) + a_new + scaled(b_old, factor) + b_new
    assert_within_guarantee(a, rows)
    one = filled(name, rows, "loop")
    assert a.n == pytest.approx(one.n, rel=1e-12, abs=1e-12)
    if isinstance(a, Gaussian):
        assert_close_tables(a.table(), one.table())
    elif isinstance(a, Categorical) and a.mode == one.mode == "exact":  # the same counts per value
        mine, theirs = (dict(zip(s.table().values, s.table().counts.tolist())) for s in (a, one))
        assert mine.keys() == theirs.keys()
        assert all(np.allclose(mine[v], theirs[v], rtol=1e-12, atol=0.0) for v in mine)
    elif isinstance(a, Categorical) and factor in DYADIC_FACTORS:
        assert a._sketch.counts.tobytes() == one._sketch.counts.tobytes()  # exact sums: the same table


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_decay_commutes_with_merge(name, data):
    kind = CONFIGS[name]().kind
    first, second = data.draw(streams(kind)), data.draw(streams(kind))
    factor = data.draw(FACTORS)
    merged_then_decayed = filled(name, first, "lists")
    merged_then_decayed.merge(filled(name, second, "arrays"))
    merged_then_decayed.decay(factor)
    a, b = filled(name, first, "lists"), filled(name, second, "arrays")
    started = isinstance(a, CPiD) and a._started and b._started
    a.decay(factor)
    b.decay(factor)
    a.merge(b)
    assert not a.problems()
    assert not merged_then_decayed.problems()
    rows = scaled(first + second, factor)
    assert_within_guarantee(a, rows)
    assert_within_guarantee(merged_then_decayed, rows)
    if factor in DYADIC_FACTORS and (not isinstance(a, CPiD) or started):
        # every rule is scale-equivariant (cPiD's warm-up replay is not: its split test)
        assert dumps(a) == dumps(merged_then_decayed)
    elif isinstance(a, Gaussian) or (isinstance(a, Categorical) and a.mode == "exact"):  # up to rounding
        assert_close_tables(a.table(), merged_then_decayed.table())


# --------------------------------------------------------------------------------------------
# Invariants, bad factors, long decays
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_invariants_hold_after_random_updates_decays_and_merges(name, data):
    summary = CONFIGS[name]()
    rows: list = []  # the stream the summary stands for, decayed weights included
    for _ in range(data.draw(st.integers(1, 8))):
        operation = data.draw(st.sampled_from(["loop", "arrays", "decay", "decay", "merge"]))
        if operation == "decay":
            factor = data.draw(FACTORS)
            summary.decay(factor)
            rows = scaled(rows, factor)
        elif operation == "merge":
            other_rows = data.draw(streams(summary.kind))
            summary.merge(filled(name, other_rows, "arrays"))
            rows = rows + other_rows
        else:
            new = data.draw(streams(summary.kind))
            feed(summary, new, operation)
            rows = rows + new
        assert not summary.problems()
    assert_within_guarantee(summary, rows)


BAD_FACTORS = [0, 0.0, -0.5, 1.5, 1 + 1e-15, math.nan, math.inf, -math.inf, True, False, "0.5", None, 2, 10**400]


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("factor", BAD_FACTORS, ids=[repr(f)[:12] for f in BAD_FACTORS])
def test_a_bad_factor_raises_a_value_error_naming_it_and_changes_nothing(name, factor):
    summary = _filled(name)
    before = dumps(summary)
    with pytest.raises(ValueError, match="factor"):
        summary.decay(factor)
    assert dumps(summary) == before


@pytest.mark.parametrize("name", CONFIGS)
def test_a_long_decay_keeps_the_state_finite_and_valid(name):
    """1,000 decays by 0.99, then weights below the float range (1e-300 twice): the summary stays
    valid, saves and loads, and learns a new stream within its guarantee."""
    summary = _filled(name)
    n = summary.n
    for _ in range(1000):
        summary.decay(0.99)
    assert not summary.problems()
    assert summary.n == pytest.approx(n * 0.99**1000, rel=1e-9)
    assert io.loads(io.dumps(summary)).table().n == pytest.approx(summary.table().n, rel=1e-12, abs=1e-300)
    summary.decay(1e-300)
    summary.decay(1e-300)  # every weight underflows: the summary keeps a valid (tiny) state
    assert not summary.problems()
    table = summary.table()
    arrays = [getattr(table, field.name) for field in dataclasses.fields(table)]
    assert all(np.all(np.isfinite(a)) for a in arrays if isinstance(a, np.ndarray))
    assert 0.0 <= table.n <= 1e-290
    assert not io.loads(io.dumps(summary)).problems()  # the saved-model checks accept it
    rng = np.random.default_rng(3)
    if summary.kind == "numeric":
        rows = [(float(x), ("p", "q")[i % 2], 1.0) for i, x in enumerate(rng.normal(size=200))]
    else:
        rows = [(str(x), ("p", "q")[i % 2], 1.0) for i, x in enumerate(rng.integers(0, 9, size=200))]
    feed(summary, rows, "arrays")
    assert_within_guarantee(summary, rows)  # what was forgotten weighs nothing


def test_gk_keeps_its_epsilon_invariant_when_new_weights_dwarf_the_decayed_ones():
    """Decayed tuples are light next to new values: the compress threshold 2εn follows n, so the
    old tuples merge away while the ε-invariant holds (design note of ``gk.py``, invariant (c))."""
    gk = GKClass(epsilon=0.05, buffer_size=10)
    rng = np.random.default_rng(1)
    for step in range(40):
        gk.update_many(rng.normal(size=50), rng.integers(0, 2, size=50))
        gk.decay(0.5)
        assert not gk.problems()
        assert gk.n_tuples <= 4 * GKClass.max_tuples_bound(0.05, 2 * 50)
    width = gk._g + gk._delta - gk._at_value
    assert np.all(width <= 2 * 0.05 * gk._weight * (1 + 1e-9))


def _gk_forgetting_its_pending_weights(gk: GKClass, f: float) -> None:
    gk._g, gk._delta, gk._at_value, gk._counts = gk._g * f, gk._delta * f, gk._at_value * f, gk._counts * f
    gk._weight, gk._missing = gk._weight * f, gk._missing * f


def _gaussian_scaling_its_means(summary: Gaussian, f: float) -> None:
    for name in ("_weights", "_means", "_m2", "_missing"):
        setattr(summary, name, [v * f for v in getattr(summary, name)])


def _space_saving_keeping_its_heap(summary: Categorical, f: float) -> None:
    summary._totals, summary._missing = [v * f for v in summary._totals], [v * f for v in summary._missing]
    summary._sketch.decay(f)
    for slot in summary._heavy._slots.values():
        slot.count, slot.error = slot.count * f, slot.error * f
        slot.class_counts = [c * f for c in slot.class_counts]


WRONG = {
    "gk-pending": (GKClass, _gk_forgetting_its_pending_weights, "gk-eps0.1"),
    "gaussian-means": (Gaussian, _gaussian_scaling_its_means, "gaussian"),
    "space-saving-heap": (Categorical, _space_saving_keeping_its_heap, "categorical-sketch"),
}


@pytest.mark.parametrize("wrong", WRONG)
def test_a_wrong_decay_fails_these_checks(wrong, monkeypatch):
    """Each wrong decay is caught by ``_check`` or by the comparison with the summary fed the
    weights times the factor: the tests above can fail."""
    cls, decay, name = WRONG[wrong]
    monkeypatch.setattr(cls, "decay", decay)
    summary = _filled(name)  # 25 values: GK holds pending ones, the sketch has evicted
    fed = CONFIGS[name]()
    rng = np.random.default_rng(7)  # the rows of _filled, with weights 0.5
    if summary.kind == "numeric":
        values = [float(v) for v in rng.integers(0, 9, size=23)] + [None, math.inf]
    else:
        values = [str(v) for v in rng.integers(0, 9, size=23)] + [None, "z"]
    for i, x in enumerate(values):
        fed.update(x, ("p", "q")[i % 2], 0.5)
    summary.decay(0.5)
    with pytest.raises(AssertionError):
        assert not summary.problems()
        assert dumps(summary) == dumps(fed)
