"""Compiled MODL searches (modl/_kernels.py) against the pre-kernel implementation, bit for bit.

The oracle is ``reference_discretization``: the pure-Python/NumPy searches and ``discretize`` as
they stood before the kernels. On integer counts the kernels must give the same intervals and the
same floats (==); fractional counts keep NumPy part costs (the exact programme runs compiled on
them, the greedy search stays in Python), so they too must agree exactly.
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import reference_discretization as reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import modl
from wnb_stream.modl import _kernels, costs
from wnb_stream.modl.search import search_intervals
from wnb_stream.summaries import Bins

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("exact", "greedy", "auto")

# ---------------------------------------------------------------- random tables


def _counts(rng: np.random.Generator, n_bins: int, n_classes: int, style: str) -> np.ndarray:
    """``(n_bins, n_classes)`` integer counts of one of several shapes that stress the searches."""
    if style == "sparse":  # many zeros: pure bins and empty cells are common
        scale = int(rng.integers(1, 30))
        kept = rng.random((n_bins, n_classes)) < rng.uniform(0.1, 0.9)
        return rng.integers(0, scale + 1, (n_bins, n_classes)) * kept
    if style == "runs":  # long runs pure in one class, a few mixed bins between them
        counts = np.zeros((n_bins, n_classes), dtype=np.int64)
        i = 0
        while i < n_bins:
            length = int(rng.geometric(0.08))
            cls = int(rng.integers(n_classes))
            counts[i : i + length, cls] = rng.integers(1, 20, min(length, n_bins - i))
            i += length
            if i < n_bins and rng.random() < 0.5:
                counts[i] = rng.integers(0, 5, n_classes)
                i += 1
        return counts
    if style == "repeated":  # a block of rows tiled: equal costs, equal heap keys, equal DP candidates
        block = rng.integers(0, 6, (int(rng.integers(1, 4)), n_classes))
        return np.tile(block, (n_bins // len(block) + 1, 1))[:n_bins]
    # "profile": class profiles piecewise constant along the bins, as in real variables
    profiles = rng.dirichlet(np.full(n_classes, 0.7), size=int(rng.integers(1, 6)))
    segment = np.sort(rng.integers(0, len(profiles), n_bins))
    rows = [rng.multinomial(int(rng.integers(1, 40)), profiles[s]) for s in segment]
    return np.array(rows).reshape(n_bins, n_classes)


def _fractional(rng: np.random.Generator, counts: np.ndarray, kind: str) -> np.ndarray:
    if kind == "halved":  # cPiD halving: counts of multiples of 1/2 (some rows sum to integers)
        return counts / 2.0
    return counts * rng.uniform(0.05, 3.0, counts.shape)  # weights, Gaussian virtual bins


def _size(rng: np.random.Generator, kind: str, low: int, high: int) -> int:
    """A number of bins spread over the range (hypothesis alone favours small integers)."""
    bounds = {"small": (low, 20), "medium": (20, 120), "large": (120, high)}[kind]
    return int(rng.integers(bounds[0], bounds[1] + 1))


def _drawn_counts(draw, low: int, max_bins: int) -> tuple[np.random.Generator, np.ndarray]:
    """A seeded generator and ``(B, J)`` float counts of a drawn size, J ≤ 12 and style."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_bins = _size(rng, draw(st.sampled_from(["small", "medium", "large"])), low, max_bins)
    n_classes = int(rng.integers(1, 13))
    style = draw(st.sampled_from(["sparse", "runs", "repeated", "profile"]))
    return rng, _counts(rng, n_bins, n_classes, style).astype(float)


@st.composite
def atom_tables(draw, max_bins=400):
    """``(B, J)`` atoms for ``search_intervals``: non-empty rows, observed columns only."""
    rng, counts = _drawn_counts(draw, 1, max_bins)
    n_bins, n_classes = counts.shape
    empty = counts.sum(axis=1) == 0
    counts[empty, rng.integers(0, n_classes, int(empty.sum()))] = 1.0
    counts = counts[:, counts.sum(axis=0) > 0]
    fraction = draw(st.sampled_from([None, None, "halved", "weighted"]))
    if fraction is not None:
        counts = _fractional(rng, counts, fraction)
    return counts


def _prior(kind: str, n: int, total: float, selection_cost: float) -> np.ndarray:
    if kind == "grouping":  # the two-class grouping runs the same engine with its own prior
        return modl.grouping_prior(n, "khiops", selection_cost)
    return reference.discretization_prior(n, total, kind, selection_cost)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    atom_tables(),
    st.sampled_from(["bins", "boulle2006", "grouping"]),
    st.sampled_from([0.0, math.log(20.0)]),
)
def test_search_gives_the_ends_of_the_python_search(atoms, prior_kind, selection_cost):
    prior = _prior(prior_kind, len(atoms), float(atoms.sum()), selection_cost)
    prefix = np.concatenate([np.zeros((1, atoms.shape[1])), np.cumsum(atoms, axis=0)])
    for method in METHODS:
        if method == "exact" and len(atoms) > 250:
            continue  # the Python programme is O(B³): keep the test fast
        expected, expected_method = reference.search_intervals(atoms, prior, method)
        ends, used = search_intervals(atoms, prior, method)
        assert used == expected_method
        assert ends.tolist() == expected.tolist()
        assert reference.partition_cost(prefix, ends, prior) == reference.partition_cost(prefix, expected, prior)


def _integer_case(atoms, prior_kind, selection_cost):
    """Merged integer atoms and what the kernels and the Python searches take for them."""
    merged, _ = reference._merge_pure_runs(np.ceil(atoms))  # integer, rows still non-empty
    prior = _prior(prior_kind, len(atoms), float(merged.sum()), selection_cost)
    table = costs._grow_table(2 * int(merged.sum()) + merged.shape[1] + 2)
    prefix = np.concatenate([np.zeros((1, merged.shape[1])), np.cumsum(merged, axis=0)])
    return merged, prefix, prior, table, math.lgamma(merged.shape[1]), costs.part_cost_function(merged)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(atom_tables(max_bins=250), st.sampled_from(["bins", "boulle2006", "grouping"]), st.integers(0, 2**32 - 1))
def test_each_kernel_follows_its_python_search_step_by_step(atoms, prior_kind, seed):
    """The three searches one by one, the post-optimisation from random cuts (many moves)."""
    merged, prefix, prior, table, log_gamma_classes, cost = _integer_case(atoms, prior_kind, 0.0)
    n = len(merged)
    if n < 2:
        return
    integers, prefix_integers = merged.astype(np.int64), prefix.astype(np.int64)
    greedy = _kernels.greedy_merge_ends(integers, prior, table, log_gamma_classes, reference.COST_TOLERANCE)
    assert greedy.tolist() == reference._greedy_merge_ends(merged, prior, cost).tolist()
    rng = np.random.default_rng(seed)
    cuts = np.flatnonzero(rng.random(n - 1) < rng.uniform(0.0, 1.0))
    start = np.append(cuts, n - 1)
    moved = _kernels.post_optimise(prefix_integers, start, prior, table, log_gamma_classes)
    assert moved.tolist() == reference._post_optimise(prefix, start, prior, cost).tolist()
    if n <= 150:
        matrix = _kernels.interval_cost_matrix(prefix_integers, table, log_gamma_classes)
        exact = _kernels.optimal_ends(matrix, prior, reference.COST_TOLERANCE)
        assert exact.tolist() == reference._optimal_ends(prefix, prior, cost).tolist()


def _tie_table(seed: int, n_classes: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, (int(rng.integers(4, 30)), n_classes)).astype(float)
    counts[counts.sum(axis=1) == 0, 0] = 1.0
    counts[:, 0] += 1.0  # no pure bins: the searches see every atom
    return counts


@pytest.mark.parametrize("seed", range(8))
def test_ties_between_numbers_of_intervals_follow_the_python_rules(seed):
    """Priors built so that two numbers of intervals tie within the tolerance.

    docs/algorithms/modl.md#comparing-costs
    """
    atoms = _tie_table(seed)
    n = len(atoms)
    prefix = np.concatenate([np.zeros((1, 2)), np.cumsum(atoms, axis=0)])
    cost = costs.part_cost_function(atoms)
    parts = cost(atoms)
    whole = float(cost(atoms.sum(axis=0)))
    table, log_gamma_classes = costs._grow_table(2 * int(atoms.sum()) + 4), math.lgamma(2)
    integers, prefix_integers = atoms.astype(np.int64), prefix.astype(np.int64)

    # greedy: no merge and every merge cost the same in total → the state after the most merges
    prior = np.full(n + 1, 1e9)
    prior[n], prior[1] = 0.0, float(parts.sum()) - whole
    greedy = _kernels.greedy_merge_ends(integers, prior, table, log_gamma_classes, reference.COST_TOLERANCE)
    assert greedy.tolist() == reference._greedy_merge_ends(atoms, prior, cost).tolist() == [n - 1]

    # exact: one interval and the best two intervals cost the same in total → fewer intervals
    split = min(reference.partition_cost(prefix, np.array([c, n - 1]), np.zeros(3)) for c in range(n - 1))
    prior = np.full(n + 1, 1e9)
    prior[1], prior[2] = 0.0, whole - split
    matrix = _kernels.interval_cost_matrix(prefix_integers, table, log_gamma_classes)
    exact = _kernels.optimal_ends(matrix, prior, reference.COST_TOLERANCE)
    assert exact.tolist() == reference._optimal_ends(prefix, prior, cost).tolist() == [n - 1]

    # post-optimisation: three intervals that no MergeSplit improves, whose best MergeMergeSplit
    # costs nothing in total → the move is still taken (it removes an interval)
    prior = np.full(n + 1, 1e9)
    prior[3] = 0.0
    start = reference._post_optimise(prefix, np.array([n // 3, 2 * n // 3, n - 1]), prior, cost)
    part = reference._interval_costs(prefix, start, cost)
    deltas, _ = reference._best_recuts(prefix, start, part, 3, np.array([0]), cost)
    prior[2] = -float(deltas[0])
    moved = _kernels.post_optimise(prefix_integers, start, prior, table, log_gamma_classes)
    expected = reference._post_optimise(prefix, start, prior, cost)
    assert moved.tolist() == expected.tolist()
    assert expected.tolist() != start.tolist()


@pytest.mark.parametrize("x, y", [([20, 1], [1, 20]), ([5, 3, 0], [0, 2, 9]), ([7, 7], [1, 30])])
def test_equal_split_points_go_to_the_first_as_in_the_python_programme(x, y):
    """x | y x and x y | x cost the same to the last bit (the float sum commutes): a tie."""
    atoms = np.array([x, y, x], dtype=float)
    prefix = np.concatenate([np.zeros((1, atoms.shape[1])), np.cumsum(atoms, axis=0)])
    cost = costs.part_cost_function(atoms)
    table = costs._grow_table(2 * int(atoms.sum()) + atoms.shape[1] + 2)
    prior = np.array([np.inf, 1e9, 0.0, 1e9])  # two intervals or nothing
    matrix = _kernels.interval_cost_matrix(prefix.astype(np.int64), table, math.lgamma(atoms.shape[1]))
    exact = _kernels.optimal_ends(matrix, prior, reference.COST_TOLERANCE)
    assert exact.tolist() == reference._optimal_ends(prefix, prior, cost).tolist() == [0, 2]


@pytest.mark.parametrize(
    "block",
    [[[1, 2]], [[3, 1], [1, 3]], [[2, 0], [0, 2], [1, 1]], [[4, 1, 0], [0, 1, 4]], [[1, 1], [2, 5], [1, 1], [5, 2]]],
)
@pytest.mark.parametrize("repeats", [5, 13, 40])
def test_tiled_tables_break_exact_ties_as_the_python_searches(block, repeats):
    """Identical rows make equal candidates everywhere: split points, heap keys, moves."""
    atoms = np.tile(np.array(block, dtype=float), (repeats, 1))
    for prior_kind in ("bins", "boulle2006", "grouping"):
        merged, prefix, prior, table, log_gamma_classes, cost = _integer_case(atoms, prior_kind, 0.0)
        integers, prefix_integers = merged.astype(np.int64), prefix.astype(np.int64)
        matrix = _kernels.interval_cost_matrix(prefix_integers, table, log_gamma_classes)
        exact = _kernels.optimal_ends(matrix, prior, reference.COST_TOLERANCE)
        assert exact.tolist() == reference._optimal_ends(prefix, prior, cost).tolist()
        greedy = _kernels.greedy_merge_ends(integers, prior, table, log_gamma_classes, reference.COST_TOLERANCE)
        assert greedy.tolist() == reference._greedy_merge_ends(merged, prior, cost).tolist()
        n = len(merged)
        for step in (1, 2, 3, 5):
            start = np.append(np.arange(step - 1, n - 1, step), n - 1)
            moved = _kernels.post_optimise(prefix_integers, start, prior, table, log_gamma_classes)
            assert moved.tolist() == reference._post_optimise(prefix, start, prior, cost).tolist()


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_part_costs_are_priced_in_the_order_of_the_python_code(n_classes, seed):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 500, (20, n_classes)) * (rng.random((20, n_classes)) < 0.7)
    table = costs._grow_table(int(rows.sum()) + n_classes + 2)  # covers every interval of the table
    log_gamma_classes = math.lgamma(n_classes)
    prefix = np.concatenate([np.zeros((1, n_classes), dtype=np.int64), np.cumsum(rows, axis=0)])
    scratch = np.empty(n_classes)
    # part_costs (NumPy: pairwise sums) for intervals of the prefix sums
    numpy_costs = costs.part_costs((prefix[1:] - prefix[0]).astype(float))
    for b in range(20):
        assert _kernels._interval_cost(prefix, 0, b + 1, table, log_gamma_classes, scratch) == numpy_costs[b]
    # the greedy merge's row_cost (math.lgamma on counts + 1 and Python's sum)
    for row in rows:
        plus_one = (row + 1.0).tolist()
        expected = math.lgamma(sum(plus_one)) - log_gamma_classes - sum(map(math.lgamma, plus_one))
        assert _kernels._row_cost(row.astype(np.int64), table, log_gamma_classes, scratch) == expected


# ---------------------------------------------------------------- discretize, all in


@st.composite
def bins_tables(draw, max_bins=300):
    rng, counts = _drawn_counts(draw, 0, max_bins)
    n_bins, n_classes = counts.shape
    fraction = draw(st.sampled_from([None, None, None, "halved", "weighted"]))
    if fraction is not None:
        counts = _fractional(rng, counts, fraction)
    missing = np.zeros(n_classes)
    if draw(st.booleans()):  # a bin of missing values
        missing = rng.integers(0, 8, n_classes).astype(float)
    # equal bounds are collapsed by discretize: draw some
    bounds = np.sort(rng.integers(0, max(1, 2 * n_bins), n_bins)).astype(float)
    return Bins(upper_bounds=bounds, counts=counts, classes=tuple(range(n_classes)), missing=missing)


def assert_same_intervals(result, expected):
    assert result.method == expected.method
    assert result.upper_bounds.tolist() == expected.upper_bounds.tolist()
    assert np.array_equal(result.counts, expected.counts)
    assert result.missing_part == expected.missing_part
    assert result.cost == expected.cost
    assert result.null_cost == expected.null_cost
    assert result.level == expected.level
    assert result.prior_cost == expected.prior_cost
    assert np.array_equal(result.log_prob, expected.log_prob)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bins_tables(), st.sampled_from(["bins", "boulle2006"]), st.sampled_from([0.0, 1.5, math.log(500.0)]))
def test_discretize_gives_the_intervals_and_costs_of_the_python_code(table, criterion, selection_cost):
    for method in METHODS + ("null",):
        if method == "exact" and len(table.upper_bounds) > 250:
            continue
        options = dict(criterion=criterion, method=method, selection_cost=selection_cost)
        result = modl.discretize(table, **options)
        result._check()
        assert_same_intervals(result, reference.discretize(table, **options))


def _gk_tables():
    """Level-1 tables of GKClass summaries along a seeded RandomRBF stream (5 and 2 classes)."""
    from river.datasets import synth

    from wnb_stream.summaries import GKClass

    tables = []
    for n_features, n_classes, n in ((4, 5, 3000), (3, 2, 3000)):
        stream = synth.RandomRBF(seed_model=11, seed_sample=11, n_features=n_features, n_classes=n_classes)
        summaries = [GKClass() for _ in range(n_features)]
        for t, (x, y) in enumerate(stream.take(n), 1):
            for k, summary in enumerate(summaries):
                summary.update(x[k], y)
            if t in (300, 1000, 3000):
                tables.extend(summary.table() for summary in summaries)
    return tables


def test_real_gk_tables_give_the_same_intervals_and_costs():
    tables = _gk_tables()
    assert any(len(t.upper_bounds) > modl.EXACT_MAX_ATOMS for t in tables)  # both searches of "auto"
    for table in tables:
        for method in METHODS:
            for criterion in ("bins", "boulle2006"):
                options = dict(criterion=criterion, method=method, selection_cost=math.log(20.0))
                assert_same_intervals(modl.discretize(table, **options), reference.discretize(table, **options))


# ---------------------------------------------------------------- paths and edge cases


def test_fractional_atoms_whose_pure_runs_sum_to_integers_take_the_integer_kernels():
    # two halves pure in class 0 merge into an integer atom: every merged atom is integer
    atoms = np.array([[0.5, 0.0], [0.5, 0.0], [0.0, 1.5], [0.0, 0.5], [2.0, 1.0], [1.0, 3.0], [0.0, 4.0]])
    prior = reference.discretization_prior(len(atoms), float(atoms.sum()))
    for method in METHODS:
        ends, used = search_intervals(atoms, prior, method)
        expected, expected_method = reference.search_intervals(atoms, prior, method)
        assert (ends.tolist(), used) == (expected.tolist(), expected_method)


@pytest.mark.parametrize(
    "counts",
    [
        np.full((12, 2), 300_000.0),  # total past the lΓ table: Stirling series (NumPy path)
        np.vstack([np.full((6, 2), 4.0), np.full((6, 2), 90_000.0)]),  # 2N past the table, N within
        np.random.default_rng(5).integers(0, 4, (9, 130)).astype(float),  # more classes than MAX_CLASSES
    ],
    ids=["huge-total", "huge-pairs", "130-classes"],
)
def test_tables_outside_the_kernels_take_the_python_path_unchanged(counts):
    counts = counts.copy()
    counts[::3, 0] += 7.0
    table = Bins(upper_bounds=np.arange(float(len(counts))), counts=counts, classes=tuple(range(counts.shape[1])),
                 missing=np.zeros(counts.shape[1]))
    for method in METHODS:
        assert_same_intervals(modl.discretize(table, method=method), reference.discretize(table, method=method))


def test_one_atom_and_bad_methods_behave_as_before():
    one = np.array([[3.0, 0.0], [2.0, 0.0]])  # one atom after the pure-run merge
    prior = reference.discretization_prior(2, 5.0)
    for method in ("auto", "exact", "greedy", "anything"):
        assert [v.tolist() if hasattr(v, "tolist") else v for v in search_intervals(one, prior, method)] == [
            v.tolist() if hasattr(v, "tolist") else v for v in reference.search_intervals(one, prior, method)
        ]
    two = np.array([[3.0, 0.0], [0.0, 2.0]])
    for method in ("anything", "null"):
        with pytest.raises(ValueError, match="method must be"):
            reference.search_intervals(two, prior, method)
        with pytest.raises(ValueError, match="method must be"):
            search_intervals(two, prior, method)
    with pytest.raises(ValueError, match="prior must have"):
        search_intervals(two, prior[:2], "auto")


def test_exact_refuses_too_many_atoms_like_the_python_search():
    atoms = np.tile([[1.0, 2.0], [2.0, 1.0]], (modl.search.EXACT_LIMIT_ATOMS // 2 + 1, 1))
    prior = reference.discretization_prior(len(atoms), float(atoms.sum()))
    with pytest.raises(ValueError, match="accepts at most") as python_error:
        reference.search_intervals(atoms, prior, "exact")
    with pytest.raises(ValueError, match="accepts at most") as kernel_error:
        search_intervals(atoms, prior, "exact")
    assert str(kernel_error.value) == str(python_error.value)


# ---------------------------------------------------------------- the summation orders


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(0, 3000), st.integers(0, 9), st.integers(0, 2**32 - 1))
def test_pairwise_sum_is_numpy_sum(n, offset, seed):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(n + offset) * 10.0 ** rng.uniform(-8, 8, n + offset)
    assert _kernels.pairwise_sum(values, offset, n) == values[offset:].sum()
    rows = values[offset:].reshape(1, -1) if n else np.zeros((1, 0))
    assert _kernels.pairwise_sum(values, offset, n) == rows.sum(axis=-1)[0]


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.floats(-1e12, 1e12, allow_nan=False, allow_subnormal=False), min_size=1, max_size=40))
def test_python_sum_is_the_builtin_sum_of_this_interpreter(values):
    assert _kernels.python_sum(np.array(values), len(values)) == sum(values)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the built-in sum is compensated from Python 3.12 on")
@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.floats(-1e12, 1e12, allow_nan=False, allow_subnormal=False), min_size=1, max_size=40))
def test_neumaier_sum_is_the_builtin_sum_from_python_3_12(values):
    assert _kernels.neumaier_sum(np.array(values), len(values)) == sum(values)


def test_table_values_are_math_lgamma_of_integers():
    # the kernels read lΓ from this table where the Python code called math.lgamma(float(n))
    table = costs._grow_table(5000)
    assert all(table[k] == math.lgamma(float(k)) for k in range(1, 5000))


def test_kernels_are_not_compiled_at_import():
    code = (
        "import wnb_stream\n"
        "from wnb_stream.modl import _kernels\n"
        "import numba\n"
        "compiled = [n for n in dir(_kernels) if isinstance(getattr(_kernels, n), numba.core.registry.CPUDispatcher)"
        " and getattr(_kernels, n).signatures]\n"
        "assert not compiled, compiled\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
