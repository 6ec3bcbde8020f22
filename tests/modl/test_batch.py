"""``discretize_many`` against ``discretize`` table by table: the same partitions, bit for bit."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modl_cases import _assert_same_state, _outcome, messy_tables
from profiles import examples

from wnb_stream import _threads, modl
from wnb_stream.modl import batch
from wnb_stream.summaries import Bins

SETTINGS = settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def usual_tables(draw, n_classes=None):
    """Tables as a GK summary hands them: increasing bounds, non-empty bins of integer counts."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_bins = draw(st.sampled_from([1, 2, 3, 5, 20, 99, 100, 101, 180]))
    if n_classes is None:
        n_classes = draw(st.integers(2, 6))
    bounds = np.cumsum(rng.random(n_bins) + 0.01) - 3.0
    # a class drifting along the bins: informative tables as well as noise
    shift = draw(st.sampled_from([0.0, 0.5, 3.0]))
    weights = np.exp(shift * np.outer(np.linspace(-1.0, 1.0, n_bins), np.arange(n_classes) - n_classes / 2))
    counts = np.zeros((n_bins, n_classes))
    for i in range(n_bins):
        size = int(rng.integers(1, 8))
        counts[i] = rng.multinomial(size, weights[i] / weights[i].sum())
    for j in np.flatnonzero(counts.sum(axis=0) == 0):  # every class observed
        counts[rng.integers(n_bins), j] = 1.0
    return Bins(upper_bounds=bounds, counts=counts, classes=tuple(range(n_classes)), missing=np.zeros(n_classes))


def _check(tables, criterion="bins", selection_cost=1.5):
    kind, result = _outcome(batch.discretize_many, tables, criterion=criterion, selection_cost=selection_cost)
    expected_kind, expected = _outcome(
        lambda: [modl.discretize(table, criterion=criterion, selection_cost=selection_cost) for table in tables]
    )
    assert kind == expected_kind
    if kind != "ok":
        assert result == expected  # the same error, from the same table
        return
    assert len(result) == len(expected)
    for partition, reference in zip(result, expected):
        _assert_same_state(partition, reference)


@SETTINGS
@given(st.lists(usual_tables(), min_size=1, max_size=12), st.sampled_from(["bins", "boulle2006"]), st.sampled_from([0.0, 1.5, 6.2]))
def test_usual_tables_are_discretized_together_as_one_by_one(tables, criterion, selection_cost):
    _check(tables, criterion, selection_cost)
    _, together = batch.discretize_many_flagged(tables, criterion=criterion, selection_cost=selection_cost)
    assert together.all()


@SETTINGS
@given(st.lists(usual_tables(), min_size=1, max_size=12), st.integers(2, 5), st.sampled_from(["bins", "boulle2006"]))
def test_tables_searched_in_threads_give_what_one_call_gives(tables, threads, criterion):
    """Many tables are searched in groups of consecutive tables, in threads (``PARALLEL_ATOMS``):
    forced here on any input and any number of cores, the partitions are those of one by one,
    bit for bit."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batch, "PARALLEL_ATOMS", 0)
        patch.setattr(_threads, "cores", lambda: threads)
        _check(tables, criterion)


@SETTINGS
@given(st.lists(messy_tables() | usual_tables(), min_size=0, max_size=10), st.sampled_from(["bins", "boulle2006"]))
def test_any_tables_give_what_discretize_gives(tables, criterion):
    _check(tables, criterion)


@SETTINGS
@given(st.lists(usual_tables(n_classes=3), min_size=1, max_size=6))
def test_together_exactly_for_the_tables_whose_atoms_are_their_bins(tables):
    # spoil some: a missing value, equal bounds, an empty bin, a fraction, an unseen class
    spoiled = []
    for i, table in enumerate(tables):
        counts, bounds, missing = table.counts.copy(), table.upper_bounds.copy(), table.missing.copy()
        kind = i % 6
        if kind == 1:
            missing[0] = 1.0
        elif kind == 2 and len(bounds) > 1:
            bounds[1] = bounds[0]
        elif kind == 3:
            counts[0] = 0.0
        elif kind == 4:
            counts[0, 0] += 0.5
        elif kind == 5:
            counts[:, 1] = 0.0
            counts[counts.sum(axis=1) == 0, 0] = 1.0
        spoiled.append(Bins(upper_bounds=bounds, counts=counts, classes=table.classes, missing=missing))
    _check(spoiled)
    _, together = batch.discretize_many_flagged(spoiled)
    plain = [(i % 6 == 0) or (i % 6 == 2 and len(t.upper_bounds) == 1) for i, t in enumerate(tables)]
    assert together.tolist() == plain


def test_classes_of_several_sizes_and_wrong_input():
    rng = np.random.default_rng(3)
    tables = []
    for n_classes in (2, 5, 2, 3, 1, 129):
        counts = rng.integers(1, 5, (30, n_classes)).astype(float)
        tables.append(Bins(np.arange(30.0), counts, tuple(range(n_classes)), np.zeros(n_classes)))
    _check(tables)
    _, together = batch.discretize_many_flagged(tables)
    assert together.tolist() == [True, True, True, True, False, False]
    assert batch.discretize_many([]) == []
    with pytest.raises(TypeError, match="Bins"):
        batch.discretize_many([tables[0], "table"])
    with pytest.raises(ValueError, match="criterion"):
        batch.discretize_many([tables[0]], criterion="nope")


def _with_classes(table, J: int):
    """``table`` on J classes: its count columns cut, or padded with zeros."""
    n = len(table.upper_bounds)
    counts = np.zeros((n, J))
    held = np.asarray(table.counts, dtype=float)
    held = held.reshape(n, held.size // n if n else 0)[:, :J]
    counts[:, : held.shape[1]] = held
    missing = np.zeros(J)
    kept = np.asarray(table.missing, dtype=float)[:J]
    missing[: len(kept)] = kept
    return Bins(upper_bounds=table.upper_bounds, counts=counts, classes=tuple(range(J)), missing=missing)


def _stacked(tables):
    """The tables (one class axis) stacked as ``Summary.stack_tables`` stacks them."""
    lengths = [len(table.upper_bounds) for table in tables]
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.intp)
    J = len(tables[0].classes)
    bounds = np.concatenate([table.upper_bounds for table in tables]) if sum(lengths) else np.zeros(0)
    counts = np.concatenate([table.counts for table in tables]) if sum(lengths) else np.zeros((0, J))
    return bounds, counts, np.stack([table.missing for table in tables]), starts


@SETTINGS
@given(st.integers(2, 5).flatmap(lambda J: st.lists(usual_tables(n_classes=J) | messy_tables().map(lambda t: _with_classes(t, J)),
                                                    min_size=1, max_size=10)),  # fmt: skip
       st.sampled_from(["bins", "boulle2006"]), st.sampled_from([0.0, 1.5]), st.integers(0, 2**32 - 1))  # fmt: skip
def test_stacked_tables_are_discretized_as_the_tables_themselves(tables, criterion, selection_cost, seed):
    """``discretize_stacked`` on the stack of some tables, a random subset chosen, gives the
    partitions and flags of ``discretize_many_flagged`` on the chosen tables, bit for bit, and a
    ``Bins`` value equal to the table for each one not done together."""
    chosen = np.random.default_rng(seed).random(len(tables)) < 0.7
    picked = [table for table, c in zip(tables, chosen) if c]
    kind, expected = _outcome(lambda: batch.discretize_many_flagged(picked, criterion=criterion, selection_cost=selection_cost))
    got_kind, got = _outcome(lambda: batch.discretize_stacked(*_stacked(tables), tables[0].classes, chosen, criterion=criterion,
                                                              selection_cost=selection_cost))  # fmt: skip
    assert got_kind == kind
    if kind != "ok":
        assert got == expected
        return
    partitions, together, made = got
    assert [p is None for p in partitions] == (~chosen).tolist()
    assert together[chosen].tolist() == expected[1].tolist() and not together[~chosen].any()
    for partition, reference in zip([p for p in partitions if p is not None], expected[0]):
        _assert_same_state(partition, reference)
    for table, c, t, m in zip(tables, chosen, together, made):
        assert (m is None) == (not c or t)
        if m is not None:
            assert m.classes == table.classes
            for name in ("upper_bounds", "counts", "missing"):
                assert getattr(m, name).tobytes() == getattr(table, name).tobytes() and getattr(m, name).shape == getattr(table, name).shape
