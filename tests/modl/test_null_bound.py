"""The bound that proves MODL's null model without the table
(docs/algorithms/modl.md#a-bound-that-proves-the-null-model): checked against every split of small
tables (brute force) and against ``discretize``."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modl_cases import bins, oracle_cost, splits
from profiles import examples

from wnb_stream import modl
from wnb_stream.modl.discretization import null_bound


@st.composite
def point_tables(draw):
    """A table whose weight sits mostly in one atom (the default value's point) and a few small
    bins around it, maybe missing values; with its held weight and atoms (the point aside)."""
    J = draw(st.integers(2, 3))
    point = draw(st.lists(st.integers(0, 80), min_size=J, max_size=J))
    small = st.lists(st.integers(0, 4), min_size=J, max_size=J)
    others = draw(st.lists(small, min_size=0, max_size=4))
    at = draw(st.integers(0, len(others)))
    missing = draw(st.one_of(st.just([0] * J), small))
    counts = others[:at] + [point] + others[at:]
    table = bins(counts, missing=missing)
    held = float(np.sum(others) + np.sum(missing))
    atoms = sum(1 for row in others if sum(row) > 0) + (sum(missing) > 0)
    return table, held, atoms


def least_split(table, criterion, selection_cost):
    """min over the models of two or more intervals of c(M) − c(M0), by brute force (inf: none)."""
    atoms = [list(row) for row in table.counts]
    if table.missing.sum() > 0:
        atoms = [list(table.missing)] + atoms
    observed = [j for j in range(len(table.classes)) if sum(a[j] for a in atoms) > 0]
    atoms = [[a[j] for j in observed] for a in atoms if sum(a) > 0]
    n = len(atoms)
    null = oracle_cost([[sum(column) for column in zip(*atoms)]], n, criterion, selection_cost)
    return min((oracle_cost(parts, n, criterion, selection_cost) - null for parts in splits(atoms) if len(parts) > 1), default=math.inf)


@settings(max_examples=examples(300), deadline=None)
@given(point_tables(), st.sampled_from(["bins", "boulle2006"]), st.sampled_from([0.0, math.log(5), math.log(50), math.log(1000)]))
def test_the_bound_is_below_every_split_and_a_proof_gives_the_null_model(case, criterion, selection_cost):
    table, held, atoms = case
    totals = table.counts.sum(axis=0) + table.missing
    bound = float(null_bound([held], [atoms], totals, selection_cost=selection_cost, criterion=criterion)[0])
    if (totals > 0).sum() >= 2:
        assert least_split(table, criterion, selection_cost) >= bound - 1e-9
    if modl.null_proven([held], [atoms], totals, selection_cost=selection_cost, criterion=criterion)[0]:
        partition = modl.discretize(table, criterion=criterion, selection_cost=selection_cost)
        assert partition.n_parts == 1 and partition.level == 0.0


def test_the_bound_proves_rare_values_and_not_frequent_ones():
    """Two balanced classes of 1,000, 37,000 candidate variables: a variable seen a dozen times is
    proven uninformative whatever its classes; at 30 it is not, and 30 values of one class are
    indeed a split that MODL takes (the proof is not vacuous, nor too loose to matter)."""
    cost = math.log(37_000)
    proven = modl.null_proven([1, 12, 30], [2, 2, 2], [1000.0, 1000.0], selection_cost=cost)
    assert proven.tolist() == [True, True, False]
    table = bins([[970, 1000], [30, 0]], bounds=np.array([0.0, 1.0]))
    assert modl.discretize(table, selection_cost=cost).n_parts == 2


def test_held_weight_above_the_least_class_proves_nothing():
    assert modl.null_proven([11.0], [2], [10.0, 500.0]).tolist() == [False]
    assert null_bound([11.0], [2], [10.0, 500.0])[0] == -math.inf


def test_fewer_than_two_classes_is_always_the_null_model():
    assert modl.null_proven([3.0, 50.0], [2, 9], [0.0, 60.0]).tolist() == [True, True]


def test_criterion_is_checked():
    with pytest.raises(ValueError, match="criterion"):
        modl.null_proven([1.0], [2], [5.0, 5.0], criterion="khiops")
