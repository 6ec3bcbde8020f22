"""Fast paths of a level-2 rebuild (Bins.aligned, _prepare, discretize, Intervals) against their slow forms.

Each shortcut must give what the general code gives, bit for bit: the same arrays (values, shape,
dtype, read-only flag), the same attributes in the same order (a pickle writes ``__dict__`` in order),
and the same ValueError for a bad table.
"""


import numpy as np
import pytest
import reference_discretization as reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modl_cases import _assert_same_state, _outcome, _same_array, messy_tables
from profiles import examples

from wnb_stream import modl
from wnb_stream.modl import Intervals, discretization, log_probabilities
from wnb_stream.modl.partition import _lookup_tables
from wnb_stream.summaries import Bins
from wnb_stream.tables import _align_columns

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- random tables, bad ones included


@SETTINGS
@given(messy_tables())
def test_prepare_agrees_with_the_reference_on_every_table(table):
    kind, result = _outcome(discretization._prepare, table)
    expected_kind, expected = _outcome(reference._prepare, table)
    assert kind == expected_kind
    if kind != "ok":
        assert result == expected  # the same message
        return
    (atoms, bounds, has_missing), (atoms_ref, bounds_ref, has_missing_ref) = result, expected
    assert has_missing == has_missing_ref
    assert atoms.shape == atoms_ref.shape and atoms.tobytes() == atoms_ref.tobytes()
    assert bounds.tobytes() == bounds_ref.tobytes()


@SETTINGS
@given(messy_tables(), st.sampled_from(["bins", "boulle2006"]), st.sampled_from(["auto", "exact", "greedy"]))
def test_discretize_agrees_with_the_reference_on_every_table(table, criterion, method):
    kind, result = _outcome(modl.discretize, table, criterion=criterion, method=method, selection_cost=1.5)
    expected_kind, expected = _outcome(reference.discretize, table, criterion=criterion, method=method, selection_cost=1.5)
    assert kind == expected_kind
    if kind != "ok":
        assert result == expected
        return
    _assert_same_state(result, expected)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.floats(0.0, 1e308, allow_subnormal=True) | st.just(-0.0), min_size=0, max_size=60),
    st.integers(1, 12),
)
def test_column_loops_agree_with_the_sums_they_replace(values, n_classes):
    # counts near 1e308 overflow to inf in both sums (still > 0): the warning is expected
    with np.errstate(over="ignore"):
        check_column_loops(values, n_classes)


def check_column_loops(values, n_classes):
    counts = np.array(values[: len(values) // n_classes * n_classes], dtype=float).reshape(-1, n_classes)
    assert np.array_equal(discretization._positive_rows(counts), counts.sum(axis=1) > 0)
    if len(counts):
        assert discretization._all_columns_positive(counts) == bool((counts.sum(axis=0) > 0).all())


# ---------------------------------------------------------------- Intervals._assemble


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**32 - 1), st.booleans())
def test_assemble_builds_the_value_of_the_constructor(n_parts, n_classes, seed, isolated_missing):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 50, (n_parts, n_classes)) + rng.random((n_parts, n_classes)).round(2)
    n_intervals = n_parts - 1 if isolated_missing and n_parts > 1 else n_parts
    upper = np.sort(rng.choice(1000, n_intervals, replace=False)).astype(float) / 7.0
    fields = dict(
        classes=tuple(f"c{j}" for j in range(n_classes)),
        missing_part=0 if isolated_missing else -1,
        cost=float(rng.random()),
        null_cost=2.0,
        level=0.25 if n_parts > 1 else 0.0,
        prior_cost=0.5,
        criterion="bins",
        method="exact",
    )
    # fresh arrays (taken over), a view, a Fortran-ordered array and integers (copied)
    for upper_given, counts_given in (
        (upper.copy(), counts.copy()),
        (upper[::-1][::-1], np.asfortranarray(counts)),
        (upper.copy(), counts.astype(np.int64)),
    ):
        expected = Intervals(upper_bounds=upper_given.copy(), counts=counts_given.copy(order="K"), **fields)
        result = Intervals._assemble(upper_bounds=upper_given, counts=counts_given, **fields)
        _assert_same_state(result, expected)
        result._check()


def test_lookup_tables_hold_the_estimator_and_a_zero_row():
    counts = np.array([[3.0, 0.0], [1.0, 0.5]])
    table, log_prob, rows = _lookup_tables(counts)
    assert log_prob.tobytes() == log_probabilities(counts).tobytes()
    assert table[-1].tolist() == [0.0, 0.0] and len(rows) == 3
    assert not table.flags.writeable and not any(row.flags.writeable for row in rows)


# ---------------------------------------------------------------- Bins.aligned


def _aligned_the_long_way(table: Bins, classes) -> Bins:
    classes = tuple(classes)
    return Bins(
        table.upper_bounds,
        _align_columns(table.counts, table.classes, classes),
        classes,
        _align_columns(table.missing, table.classes, classes),
    )


@pytest.mark.parametrize(
    "source, target",
    [
        (("a", "b"), ("a", "b")),  # already in order: the table itself
        ((0, 1), (0, 1)),
        ((1, 2), (1.0, 2.0)),  # equal labels, other objects: the given ones are carried
        ((True, 0), (1, False)),
        (("a", "b"), ("b", "a")),  # other order, new class, fewer classes: the general path
        (("a", "b"), ("a", "b", "c")),
        (("a", "b"), ("a",)),
        ((), ()),
    ],
)
def test_aligned_gives_the_table_of_the_general_path(source, target):
    rng = np.random.default_rng(0)
    table = Bins(
        upper_bounds=np.arange(4.0), counts=rng.random((4, len(source))), classes=source, missing=rng.random(len(source))
    )
    result, expected = table.aligned(target), _aligned_the_long_way(table, target)
    assert [type(c) for c in result.classes] == [type(c) for c in expected.classes]
    assert result.classes == expected.classes
    for name in ("upper_bounds", "counts", "missing"):
        assert _same_array(getattr(result, name), getattr(expected, name)), name
    if all(c is d for c, d in zip(source, target)) and len(source) == len(target):
        assert result is table


def test_aligned_refuses_unhashable_classes_as_before():
    table = Bins(upper_bounds=[1.0], counts=[[1.0]], classes=([0],), missing=[0.0])
    with pytest.raises(TypeError, match="unhashable"):
        table.aligned(([0],))
