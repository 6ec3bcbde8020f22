"""A variable's compiled locator agrees with its partition's own ``part_index``."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import summaries
from wnb_stream.engine.variable import NOWHERE, Variable
from wnb_stream.tables import Bins


def _stacked_tables(variables: list, classes: tuple, default) -> list:
    """The tables of ``Variable._stack``, one per variable (each a view of the stack)."""
    bounds, counts, missing, starts = Variable._stack(variables, classes, default)
    return [Bins._assemble(bounds[lo:hi], counts[lo:hi], classes, missing[t])
            for t, (lo, hi) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist()))]  # fmt: skip


def _agrees(variable: Variable, probes) -> None:
    for value in probes:
        column = np.empty(1, dtype=float if variable.kind == "numeric" else object)
        column[0] = value
        expected = int(variable.model.part_index(column)[0])
        assert variable.locate(value) == (expected if expected >= 0 else NOWHERE), value


@settings(max_examples=examples(80), deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-50, 50), st.integers(-5, 5).map(float), st.just(float("nan"))), min_size=1, max_size=300),
    seed=st.integers(0, 2**16),
)
def test_numeric_locator_matches_part_index(values, seed):
    rng = np.random.default_rng(seed)
    variable = Variable("x", "numeric", summaries.GKClass())
    for v in values:  # labels depend on the value, so MODL finds cuts
        y = "a" if (v == v and v < 0) ^ (rng.random() < 0.1) else "b"
        variable.summary.update(v, y)
    variable.rebuild(("a", "b"), selection_cost=0.0)
    probes = values + [-1e9, 1e9, float("nan"), None, float("inf")] + rng.uniform(-60, 60, 50).tolist()
    _agrees(variable, [None if p is None else p for p in probes])


@settings(max_examples=examples(60), deadline=None)
@given(values=st.lists(st.one_of(st.sampled_from(list("abcdefgh")), st.none()), min_size=1, max_size=200))
def test_categorical_locator_matches_part_index(values):
    variable = Variable("c", "categorical", summaries.Categorical())
    for i, v in enumerate(values):
        variable.summary.update(v, "p" if v in ("a", "b", "c") else ("q" if i % 3 else "p"))
    variable.rebuild(("p", "q"), selection_cost=0.0)
    _agrees(variable, values + ["never seen", None, "a"])


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if type(a).__module__.startswith("wnb_stream"):
        names = [name for cls in type(a).__mro__ for name in getattr(cls, "__slots__", ())]
        state = lambda x: {**getattr(x, "__dict__", {}), **{n: getattr(x, n) for n in names if hasattr(x, n)}}  # noqa: E731
        return type(a) is type(b) and _same(state(a), state(b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _fed(kind_seed: tuple, values, labels) -> Variable:
    kind, prototype = kind_seed
    variable = Variable("v", kind, prototype.clone())
    for value, label in zip(values, labels):
        variable.summary.update(value, label)
    return variable


@settings(max_examples=examples(60), deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(1, 400),
    missing=st.sampled_from([0.0, 0.05]),
    default=st.booleans(),
)
def test_rebuild_many_gives_each_variable_what_rebuild_gives(seed, n, missing, default):
    rng = np.random.default_rng(seed)
    classes = ("a", "b", "c")
    kinds = [
        ("numeric", summaries.GKClass()),
        ("numeric", summaries.GKClass()),
        ("numeric", summaries.CPiD()),
        ("numeric", summaries.Gaussian()),
        ("categorical", summaries.Categorical()),
    ]
    streams = []
    for kind, _ in kinds + kinds[:3]:
        labels = rng.choice(classes[: rng.integers(1, 4)], n).tolist()
        if kind == "numeric":
            values = (rng.normal(size=n) + np.array([classes.index(y) for y in labels]) * rng.random()).round(rng.integers(1, 4))
            values = [None if rng.random() < missing else float(v) for v in values]
        else:
            values = [None if rng.random() < missing else "xyzw"[int(rng.integers(4))] for _ in range(n)]
        streams.append((values, labels))
    spec = kinds + kinds[:3]  # (two of each numeric binned kind: rebuilt together)
    one = [_fed(k, v, y) for k, (v, y) in zip(spec, streams)]
    many = [_fed(k, v, y) for k, (v, y) in zip(spec, streams)]
    option = (0.0, np.array([3.0, 400.0, 9.0])) if default else None
    for variable in one:
        variable.rebuild(classes, 2.5, default=option)
    Variable.rebuild_many(many, classes, 2.5, default=option)
    for a, b in zip(one, many):
        for name in Variable.__slots__:
            if name == "summary":
                continue
            assert _same(getattr(b, name), getattr(a, name)), name
        if b.density or b.model is None:
            continue  # (locators: binned variables only)
        _agrees(b, [None, float("nan"), -1e9, 1e9, 0.0, "x", "never"] if b.kind == "categorical" else [None, float("nan"), -1e9, 1e9, 0.0, 0.5])


def _reference_table(variable: Variable, classes: tuple, default):
    """A rebuild's table as the summary's own ``table``, ``aligned`` and ``with_point`` make it."""
    table = variable.summary.table().aligned(classes)
    if default is not None:
        value, class_counts = default
        held = table.counts.sum(axis=0) + table.missing
        table = table.with_point(value, np.maximum(np.asarray(class_counts, dtype=float) - held, 0.0))
    return table


@pytest.mark.parametrize("prototype", [summaries.GKClass(), summaries.CPiD(n_bins=4, warm_up=3)], ids=["gk", "cpid"])
@settings(max_examples=examples(80), deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_variables=st.integers(0, 12),
    default=st.sampled_from([None, 0.0, 1.0, 2.5, -3.0]),
    weights=st.sampled_from([1.0, 0.5, 0.3]),
)
def test_the_tables_made_together_are_each_variables_own(prototype, seed, n_variables, default, weights):
    """``Variable._stack`` (the stacked tables of a rebuild of many variables, ``GKClass``'s own
    ``stack_tables`` or the generic one) and ``_table``
    make, table by table, the summary's ``table().aligned(classes)`` with the default value's
    point (``with_point``) bit for bit: whatever the class order each summary met its classes in,
    classes it never met, no value but missing ones, a point that joins a bin or falls between
    two; and ``rebuild_many`` gives variables with equal tables (one partition, shared) what
    ``rebuild`` gives each."""
    rng = np.random.default_rng(seed)
    classes = ("a", "b", "c")
    variables = []
    for _ in range(n_variables):
        variable = Variable("v", "numeric", prototype.clone())
        seen = list(rng.permutation(classes)[: int(rng.integers(1, 4))])
        for _ in range(int(rng.integers(0, 8))):
            value = float(rng.integers(-4, 4)) if rng.random() > 0.1 else float("nan")
            variable.summary.update(value, str(rng.choice(seen)), weights)
        if rng.random() < 0.3 and variables:  # the same summary as another variable's
            variable = Variable("v", "numeric", copy.deepcopy(variables[int(rng.integers(0, len(variables)))].summary))
        variables.append(variable)
    # twins: equal summaries (equal tables), rebuilt together
    variables += [_fed(("numeric", prototype), [1.0, 2.0], ["a", "b"]) for _ in range(3)]
    option = None if default is None else (default, rng.integers(0, 30, len(classes)).astype(float))
    together = _stacked_tables(variables, classes, option)
    for variable, table in zip(variables, together):
        expected = _reference_table(variable, classes, option)
        for got in (table, variable._table(classes, option)):
            assert got.classes == expected.classes
            for name in ("upper_bounds", "counts", "missing"):
                assert _same(getattr(got, name), getattr(expected, name)), name
    one = [Variable("v", "numeric", copy.deepcopy(v.summary)) for v in variables]
    many = [Variable("v", "numeric", copy.deepcopy(v.summary)) for v in variables]
    for variable in one:
        if variable.summary.n > 0:
            variable.rebuild(classes, 2.5, default=option)
    Variable.rebuild_many([v for v in many if v.summary.n > 0], classes, 2.5, default=option)
    for a, b in zip(one, many):
        for name in Variable.__slots__:
            if name != "summary":
                assert _same(getattr(b, name), getattr(a, name)), name


def test_bincount_sums_the_rows_of_tables_as_their_sum_does():
    """``Variable._stack`` takes the column sums of many stacked tables with ``np.bincount``
    (rows added in order from 0): the floats of each table's own ``counts.sum(axis=0)``, which
    NumPy adds row after row for a C-contiguous table of two or more columns."""
    rng = np.random.default_rng(0)
    for J in (2, 3, 7):
        lengths = rng.integers(0, 300, size=200)
        owner = np.repeat(np.arange(len(lengths)), lengths)
        counts = rng.standard_normal((len(owner), J)) * np.exp(rng.uniform(-30, 30, (len(owner), J)))
        held = np.stack([np.bincount(owner, weights=counts[:, j], minlength=len(lengths)) for j in range(J)], axis=1)
        starts = np.concatenate([[0], np.cumsum(lengths)])
        for t in range(len(lengths)):
            assert held[t].tobytes() == counts[starts[t] : starts[t + 1]].copy().sum(axis=0).tobytes()


def test_a_deep_copy_shares_level_2_and_copies_the_summary():
    # level 2 is replaced by a rebuild, never changed, so a copy shares it; the summary is the copy's own
    rng = np.random.default_rng(5)
    variable = Variable("x", "numeric", summaries.GKClass())
    for v in rng.normal(size=200):
        variable.summary.update(float(v), "a" if v < 0.3 else "b")
    variable.rebuild(("a", "b"), selection_cost=0.0)
    assert variable.n_parts > 1
    clone = copy.deepcopy(variable)
    assert type(clone) is Variable and clone.summary is not variable.summary
    assert all(getattr(clone, name) is getattr(variable, name) for name in Variable.__slots__ if name != "summary")
    a, b = clone.summary.table(), variable.summary.table()
    assert a.classes == b.classes and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("upper_bounds", "counts", "missing"))
    before = (variable.log_prob.copy(), list(variable.cuts), variable.model, variable.summary.n)
    for v in rng.normal(size=300):  # the copy learns other rows and is rebuilt: the original keeps its own
        clone.summary.update(float(v), "a" if v > 0.0 else "b")
    clone.rebuild(("a", "b"), selection_cost=0.0)
    assert clone.model is not variable.model
    np.testing.assert_array_equal(variable.log_prob, before[0])
    assert variable.cuts == before[1] and variable.model is before[2] and variable.summary.n == before[3]
    pair = copy.deepcopy([variable, variable])  # one variable given twice: one copy
    assert pair[0] is pair[1]


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 4))
def test_first_of_equal_finds_the_first_table_with_the_same_bytes(seed, T, J):
    """Tables drawn from a few shapes (so that many are equal), zeros of either sign among
    them: each table's first equal is the first with the same bytes, as a dict of bytes finds it."""
    from wnb_stream.engine.variable import first_of_equal

    rng = np.random.default_rng(seed)
    shapes = []
    for _ in range(int(rng.integers(1, 5))):
        n = int(rng.integers(0, 4))
        shapes.append((np.sort(rng.choice([-0.0, 0.0, 1.0, 2.5], n)), rng.choice([-0.0, 0.0, 1.0, 3.0], (n, J)), rng.choice([0.0, -0.0, 1.0], J)))
    tables = [shapes[int(rng.integers(len(shapes)))] for _ in range(T)]
    lengths = [len(b) for b, _, _ in tables]
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.intp)
    bounds = np.concatenate([b for b, _, _ in tables]).astype(float)
    counts = np.concatenate([c for _, c, _ in tables]).reshape(-1, J).astype(float)
    missing = np.stack([m for _, _, m in tables]).astype(float)
    seen, expected = {}, []
    for t in range(T):
        a, b = starts[t], starts[t + 1]
        expected.append(seen.setdefault((bounds[a:b].tobytes(), counts[a:b].tobytes(), missing[t].tobytes()), t))
    assert first_of_equal(bounds, counts, missing, starts).tolist() == expected
