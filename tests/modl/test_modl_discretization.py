"""MODL discretization (docs/algorithms/modl.md#discretization): optimality, known answers, edge cases."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modl_cases import bins, oracle_cost, splits
from profiles import examples

from wnb_stream import modl
from wnb_stream.modl.discretization import discretization_prior
from wnb_stream.modl.search import partition_cost
from wnb_stream.summaries import Bins

APPENDIX = [[10, 0], [8, 2], [1, 9], [0, 10]]


# ---------------------------------------------------------------- an independent oracle


def brute_force(table, criterion="bins", selection_cost=0.0):
    """(best cost, null cost) over every cut set of the non-empty bins (missing bin first)."""
    atoms = [list(row) for row in table.counts]
    if table.missing.sum() > 0:
        atoms = [list(table.missing)] + atoms
    observed = [j for j in range(len(table.classes)) if sum(a[j] for a in atoms) > 0]
    atoms = [[a[j] for j in observed] for a in atoms if sum(a) > 0]
    if len(observed) < 2:
        return 0.0, 0.0
    n = len(atoms)
    null = oracle_cost([[sum(col) for col in zip(*atoms)]], n, criterion, selection_cost)
    best = null
    for parts in splits(atoms):
        best = min(best, oracle_cost(parts, n, criterion, selection_cost))
    # a model not better than the null one by the tolerances is the null model
    # (docs/algorithms/modl.md#comparing-costs)
    if not (best < null - 1e-6 and 1 - best / null >= 1e-6):
        best = null
    return best, null


# ------------------------------------------------- known answers (docs/algorithms/modl.md#test-vectors)


@pytest.mark.parametrize(
    "sizes, paper, bins_variant",
    [
        ([4], 33.003068, 30.007336),
        ([2, 2], 21.734253, 16.660235),
        ([1, 1, 2], 25.089682, 18.069754),
        ([1, 1, 1, 1], 28.810390, 19.993901),
    ],
)
def test_appendix_b_partition_costs(sizes, paper, bins_variant):
    counts = np.array(APPENDIX, dtype=float)
    prefix = np.concatenate([np.zeros((1, 2)), np.cumsum(counts, axis=0)])
    ends = np.cumsum(sizes) - 1
    assert partition_cost(prefix, ends, discretization_prior(4, 40.0, "bins")) == pytest.approx(bins_variant, abs=1e-6)
    assert partition_cost(prefix, ends, discretization_prior(4, 40.0, "boulle2006")) == pytest.approx(paper, abs=1e-6)
    # and the oracle of these tests agrees with the known answers
    starts = np.concatenate([[0], ends[:-1] + 1])
    parts = [list(counts[a : b + 1].sum(axis=0)) for a, b in zip(starts, ends)]
    assert oracle_cost(parts, 4, "bins") == pytest.approx(bins_variant, abs=1e-6)
    assert oracle_cost(parts, 4, "boulle2006") == pytest.approx(paper, abs=1e-6)


@pytest.mark.parametrize("method", ["auto", "exact", "greedy"])
def test_appendix_b_optimum_and_level(method):
    table = bins(APPENDIX)
    result = modl.discretize(table, method=method)
    result._check()
    assert result.upper_bounds.tolist() == [2.0, 4.0]
    assert result.counts.tolist() == [[18, 2], [1, 19]]
    assert result.cost == pytest.approx(16.660235, abs=1e-6)
    assert result.null_cost == pytest.approx(30.007336, abs=1e-6)
    assert result.level == pytest.approx(0.444795, abs=1e-6)
    paper = modl.discretize(table, criterion="boulle2006", method=method)
    assert paper.upper_bounds.tolist() == [2.0, 4.0]
    assert paper.cost == pytest.approx(21.734253, abs=1e-6)
    assert paper.null_cost == pytest.approx(33.003068, abs=1e-6)
    assert paper.level == pytest.approx(0.341448, abs=1e-6)
    selected = modl.discretize(table, method=method, selection_cost=math.log(10))
    assert selected.cost == pytest.approx(18.962820, abs=1e-6)
    assert selected.null_cost == pytest.approx(30.007336, abs=1e-6)


def test_prior_cost_is_selection_plus_preparation():
    table = bins(APPENDIX)
    result = modl.discretize(table, selection_cost=1.5)
    # preparation = c(M) − construction (log 2 + c_sel) − data (docs/algorithms/modl.md#level-and-prior-cost)
    data = sum(math.lgamma(sum(p) + 1) - sum(math.lgamma(c + 1) for c in p) for p in result.counts)
    preparation = result.cost - (math.log(2) + 1.5) - data
    assert result.prior_cost == pytest.approx(1.5 + preparation, abs=1e-9)
    null = modl.null_partition(table)
    # the null model's B(X) is the class-distribution prior of its single part: log C(N + J − 1, J − 1)
    assert null.prior_cost == pytest.approx(math.log(math.comb(41, 1)), abs=1e-9)


# ---------------------------------------------------------------- optimality (brute force)


@st.composite
def small_tables(draw, fractional=False):
    n_bins = draw(st.integers(1, 8))
    n_classes = draw(st.integers(2, 4))
    if fractional:
        element = st.floats(0.0, 12.0, allow_nan=False).map(lambda v: round(v, 3))
    else:
        element = st.integers(0, 15)
    # sparse counts make pure bins, empty bins and unobserved classes common
    cell = st.one_of(st.just(0), element)
    counts = draw(st.lists(st.lists(cell, min_size=n_classes, max_size=n_classes), min_size=n_bins, max_size=n_bins))
    missing = draw(st.one_of(st.just([0] * n_classes), st.lists(cell, min_size=n_classes, max_size=n_classes)))
    return bins(counts, missing=missing)


@settings(max_examples=examples(150), deadline=None)
@given(small_tables(), st.sampled_from(["bins", "boulle2006"]), st.sampled_from([0.0, math.log(7)]))
def test_exact_programme_equals_brute_force(table, criterion, selection_cost):
    best, null = brute_force(table, criterion, selection_cost)
    exact = modl.discretize(table, criterion=criterion, method="exact", selection_cost=selection_cost)
    exact._check()
    assert exact.null_cost == pytest.approx(null, abs=1e-9)
    # ties within the 1e-6 tolerance may go to fewer intervals
    assert exact.cost == pytest.approx(best, abs=2e-6)
    greedy = modl.discretize(table, criterion=criterion, method="greedy", selection_cost=selection_cost)
    greedy._check()
    assert greedy.cost >= exact.cost - 1e-9
    assert greedy.counts.sum() == pytest.approx(table.n)


@settings(max_examples=examples(60), deadline=None)
@given(small_tables(fractional=True))
def test_exact_programme_equals_brute_force_with_fractional_counts(table):
    best, _ = brute_force(table)
    exact = modl.discretize(table, method="exact")
    exact._check()
    assert exact.cost == pytest.approx(best, abs=2e-6)
    assert modl.discretize(table, method="greedy").cost >= exact.cost - 1e-9


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 10_000), st.integers(20, 120), st.integers(2, 4))
def test_greedy_never_beats_the_exact_programme_on_larger_tables(seed, n_bins, n_classes):
    rng = np.random.default_rng(seed)
    profile = rng.dirichlet(np.ones(n_classes), size=rng.integers(1, 6))  # piecewise class profiles
    segment = np.sort(rng.integers(0, len(profile), n_bins))
    counts = np.array([rng.multinomial(rng.integers(1, 25), profile[s]) for s in segment])
    table = bins(counts)
    exact = modl.discretize(table, method="exact")
    greedy = modl.discretize(table, method="greedy")
    assert greedy.cost >= exact.cost - 1e-9
    assert exact.cost <= exact.null_cost + 1e-9


# ---------------------------------------------------------------- known answers


@pytest.mark.parametrize("method", ["exact", "greedy"])
@pytest.mark.parametrize("block", [1, 7, 50])
def test_pure_class_blocks_are_cut_at_the_class_boundaries(method, block):
    pattern = [0, 1, 2, 0, 1]
    counts = np.zeros((block * len(pattern), 3))
    rng = np.random.default_rng(block)
    for i, c in enumerate(pattern):
        counts[i * block : (i + 1) * block, c] = rng.integers(1, 20, block)
    bounds = np.arange(len(counts), dtype=float) * 0.5
    result = modl.discretize(bins(counts, bounds=bounds), method=method)
    expected = [bounds[(i + 1) * block - 1] for i in range(len(pattern))]
    assert result.upper_bounds.tolist() == expected
    assert result.n_parts == len(pattern)
    assert np.count_nonzero(result.counts, axis=1).tolist() == [1] * len(pattern)


@pytest.mark.parametrize("n_bins", [100, 5000])
def test_labels_independent_of_the_value_give_one_part_and_level_zero(n_bins):
    rng = np.random.default_rng(7)
    values = rng.normal(size=5000)
    labels = rng.permutation(np.arange(5000) % 2)
    order = np.argsort(values)
    # equal-frequency bins of the sorted values
    edges = np.linspace(0, 5000, n_bins + 1).astype(int)
    counts = np.array([np.bincount(labels[order[a:b]], minlength=2) for a, b in zip(edges[:-1], edges[1:])])
    bounds = values[order[edges[1:] - 1]]
    result = modl.discretize(bins(counts, bounds=bounds))
    result._check()
    assert result.n_parts == 1
    assert result.level == 0.0
    assert result.cost == result.null_cost
    assert not result.informative
    # the null model's likelihood carries no information: log p(part | C_j) = 0 for every class
    assert np.allclose(result.log_likelihood(values[:10]), 0.0)


def test_auto_picks_exact_for_small_tables_and_greedy_for_large_ones():
    rng = np.random.default_rng(3)
    small = bins(rng.integers(1, 10, size=(modl.EXACT_MAX_ATOMS, 2)))
    large = bins(rng.integers(1, 10, size=(modl.EXACT_MAX_ATOMS + 1, 2)))
    assert modl.discretize(small, method="auto").method in ("exact",)
    assert modl.discretize(large, method="auto").method == "greedy"


def test_exact_refuses_tables_too_large_for_its_cost_matrix():
    from wnb_stream.modl.search import EXACT_LIMIT_ATOMS

    counts = np.tile([[1, 2], [2, 1]], (EXACT_LIMIT_ATOMS // 2 + 1, 1))
    with pytest.raises(ValueError, match="method='exact'"):
        modl.discretize(bins(counts), method="exact")
    assert modl.discretize(bins(counts)).method == "greedy"


def test_a_strong_signal_is_found_by_both_searches_on_many_bins():
    rng = np.random.default_rng(11)
    x = np.linspace(0, 1, 400)
    rate = np.where(x < 0.3, 0.1, np.where(x < 0.7, 0.6, 0.95))
    b = rng.binomial(40, rate)
    table = bins(np.column_stack([40 - b, b]), bounds=x)
    exact = modl.discretize(table, method="exact")
    greedy = modl.discretize(table, method="greedy")
    assert greedy.cost == pytest.approx(exact.cost, abs=1e-6)
    assert exact.n_parts == 3
    assert exact.level > 0.1


# ---------------------------------------------------------------- edge cases


def test_empty_table():
    table = Bins(upper_bounds=np.zeros(0), counts=np.zeros((0, 2)), classes=("a", "b"), missing=[0, 0])
    result = modl.discretize(table)
    result._check()
    assert result.n_parts == 1 and result.level == 0.0 and result.cost == 0.0
    assert result.counts.tolist() == [[0.0, 0.0]]
    assert result.missing_part == -1
    assert result.part_index(np.array([1.0, np.nan])).tolist() == [0, -1]
    # no counts at all: every class gets 1/I = 1
    assert np.allclose(result.log_likelihood_one(3.0), 0.0)


def test_table_with_only_empty_bins_and_no_classes():
    table = Bins(upper_bounds=[1.0, 2.0], counts=np.zeros((2, 0)), classes=(), missing=np.zeros(0))
    result = modl.discretize(table)
    assert result.n_parts == 1 and result.log_likelihood(np.array([1.5])).shape == (1, 0)


def test_one_bin_is_the_null_model():
    result = modl.discretize(bins([[5, 3]]))
    result._check()
    assert result.n_parts == 1 and result.level == 0.0 and result.method == "null"
    assert result.null_cost == pytest.approx(oracle_cost([[5, 3]], 1))


def test_one_class_observed_costs_nothing():
    table = bins([[5, 0], [3, 0], [9, 0]])
    result = modl.discretize(table)
    result._check()
    assert (result.n_parts, result.cost, result.null_cost, result.level) == (1, 0.0, 0.0, 0.0)
    # the unseen class gets 1/I = 1 in the single part
    assert np.allclose(result.log_prob, 0.0)


def test_all_counts_in_one_class_of_three():
    result = modl.discretize(bins([[0, 4, 0], [0, 2, 0]], classes=("x", "y", "z")))
    assert result.n_parts == 1 and result.cost == 0.0


def test_fractional_counts():
    table = bins([[10.5, 0.25], [8.0, 2.5], [1.0, 9.75], [0.5, 10.0]])
    best, null = brute_force(table)
    result = modl.discretize(table)
    result._check()
    assert result.cost == pytest.approx(best, abs=1e-9)
    assert result.null_cost == pytest.approx(null, abs=1e-9)
    assert result.upper_bounds.tolist() == [2.0, 4.0]


def test_a_class_that_appears_later_is_a_zero_column_that_changes_nothing():
    table = bins(APPENDIX)
    widened = table.aligned((0, 1, "new"))
    before, after = modl.discretize(table), modl.discretize(widened)
    after._check()
    assert after.upper_bounds.tolist() == before.upper_bounds.tolist()
    assert after.cost == pytest.approx(before.cost) and after.level == pytest.approx(before.level)
    assert after.counts.shape == (2, 3) and after.counts[:, 2].tolist() == [0.0, 0.0]
    assert np.allclose(after.log_prob[:, :2], before.log_prob)
    # the zero-count class gets ε / (I·ε) = 1/I in every part
    assert np.allclose(np.exp(after.log_prob[:, 2]), 0.5)


def test_equal_upper_bounds_are_collapsed_and_a_value_on_a_boundary_goes_left():
    # bins 2 and 3 share the value 2.0: MODL never cuts between equal values
    table = bins([[10, 0], [8, 2], [0, 5], [1, 9], [0, 10]], bounds=[1.0, 2.0, 2.0, 3.0, 4.0])
    result = modl.discretize(table)
    result._check()
    collapsed = modl.discretize(bins([[10, 0], [8, 7], [1, 9], [0, 10]], bounds=[1.0, 2.0, 3.0, 4.0]))
    assert result.upper_bounds.tolist() == collapsed.upper_bounds.tolist()
    assert result.counts.tolist() == collapsed.counts.tolist()
    assert result.cost == pytest.approx(collapsed.cost) and result.null_cost == pytest.approx(collapsed.null_cost)
    boundary = float(result.upper_bounds[0])
    low = result.part_index(np.array([boundary, np.nextafter(boundary, np.inf)])).tolist()
    assert low == [0, 1]
    assert result.log_likelihood_one(boundary).tolist() == result.log_prob[0].tolist()


def test_empty_bins_are_dropped_and_absorbed_by_the_next_interval():
    table = bins([[10, 0], [0, 0], [0, 10], [0, 0]], bounds=[1.0, 2.0, 3.0, 4.0])
    result = modl.discretize(table)
    # B = 2 non-empty bins: the empty bin (1, 2] falls in the interval of the next non-empty bin
    assert result.upper_bounds.tolist() == [1.0, 3.0]
    assert result.part_index(np.array([1.5, 3.5, 100.0])).tolist() == [1, 1, 1]
    assert result.null_cost == pytest.approx(oracle_cost([[10, 10]], 2))


def test_bad_tables_and_options_are_rejected():
    with pytest.raises(TypeError, match="Bins"):
        modl.discretize(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="criterion"):
        modl.discretize(bins(APPENDIX), criterion="khiops2")
    with pytest.raises(ValueError, match="method"):
        modl.discretize(bins(APPENDIX), method="fast")
    for bad in (-1.0, math.inf, "1", True):
        with pytest.raises(ValueError, match="selection_cost"):
            modl.discretize(bins(APPENDIX), selection_cost=bad)
    with pytest.raises(ValueError, match="counts"):
        modl.discretize(bins([[1, -1], [2, 2]]))
    with pytest.raises(ValueError, match="upper_bounds"):
        modl.discretize(bins([[1, 1], [2, 2]], bounds=[2.0, 1.0]))


def test_selection_cost_can_make_a_weak_variable_uninformative():
    table = bins([[12, 8], [8, 12]])
    assert modl.discretize(table).cost <= modl.discretize(table).null_cost
    weak = modl.discretize(table, selection_cost=50.0)
    assert weak.n_parts == 1 and weak.level == 0.0


# ---------------------------------------------------------------- missing values


def test_missing_values_form_a_first_bin_that_may_be_isolated():
    # missing values are all of class 1, unlike the low bins: MODL isolates them
    table = bins(APPENDIX, missing=[0, 30])
    result = modl.discretize(table, method="exact")
    result._check()
    best, _ = brute_force(table)
    assert result.cost == pytest.approx(best, abs=1e-9)
    assert result.missing_part == 0
    assert result.n_parts == result.n_intervals + 1
    assert result.counts[0].tolist() == [0.0, 30.0]
    values = np.array([np.nan, -np.inf, np.inf, 1.0, 3.0])
    assert result.part_index(values).tolist() == [0, 0, 0, 1, 2]
    for x in [None, math.nan, math.inf, 1.0, 3.0]:
        assert result.log_likelihood_one(x).tolist() == result.log_likelihood(np.array([x], dtype=float))[0].tolist()


def test_missing_values_like_the_first_bin_are_merged_with_it():
    table = bins(APPENDIX, missing=[9, 1])
    result = modl.discretize(table)
    assert result.missing_part == 0
    assert result.n_parts == result.n_intervals == 2
    assert result.counts[0].tolist() == [27.0, 3.0]
    assert result.part_index(np.array([np.nan, 0.0, 3.0])).tolist() == [0, 0, 1]


def test_missing_values_when_the_table_had_none_are_skipped():
    result = modl.discretize(bins(APPENDIX))
    log_lik = result.log_likelihood(np.array([np.nan, np.inf, 1.0]))
    assert log_lik.shape == (3, 2)
    assert log_lik[0].tolist() == [0.0, 0.0] and log_lik[1].tolist() == [0.0, 0.0]
    assert result.log_likelihood_one(None).tolist() == [0.0, 0.0]
    assert result.part_index(np.array([None, 2.0], dtype=object)).tolist() == [-1, 0]


def test_only_missing_values():
    table = Bins(upper_bounds=np.zeros(0), counts=np.zeros((0, 2)), classes=(0, 1), missing=[4, 6])
    result = modl.discretize(table)
    result._check()
    assert result.n_parts == 1 and result.missing_part == 0
    assert result.counts.tolist() == [[4.0, 6.0]]
    assert result.part_index(np.array([np.nan, 5.0])).tolist() == [0, 0]


# ---------------------------------------------------------------- the value itself


def test_log_likelihood_agrees_with_the_estimator_and_the_scalar_path():
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 30, size=(60, 3))
    counts[30:, 0] += 40
    table = bins(counts, missing=[3, 0, 1])
    result = modl.discretize(table)
    values = np.concatenate([rng.uniform(-5, 70, 200), [np.nan, np.inf]])
    log_lik = result.log_likelihood(values)
    assert log_lik.shape == (len(values), 3)
    index = result.part_index(values)
    epsilon = 1.0 / (table.n + 1.0)
    expected = np.log((result.counts + epsilon) / (result.counts.sum(axis=0) + result.n_parts * epsilon))
    assert np.allclose(log_lik, expected[index])
    for x, row in zip(values, log_lik):
        assert np.array_equal(result.log_likelihood_one(x), row)


def test_intervals_are_immutable_and_pickle():
    result = modl.discretize(bins(APPENDIX, missing=[1, 2]))
    with pytest.raises(Exception):
        result.cost = 0.0
    with pytest.raises(ValueError):
        result.counts[0, 0] = 1.0
    copy = pickle.loads(pickle.dumps(result))
    copy._check()
    assert copy.upper_bounds.tolist() == result.upper_bounds.tolist()
    assert np.array_equal(copy.log_likelihood(np.array([0.5, np.nan])), result.log_likelihood(np.array([0.5, np.nan])))


def test_null_partition_is_the_one_interval_model():
    table = bins(APPENDIX, missing=[2, 2])
    null = modl.null_partition(table)
    same = modl.discretize(table, method="null")
    null._check()
    assert null.n_parts == 1 and null.level == 0.0 and null.method == "null"
    assert null.cost == pytest.approx(modl.discretize(table).null_cost)
    assert null.cost == same.cost
    assert null.counts.tolist() == [[21.0, 23.0]]
    with pytest.raises(TypeError):
        modl.null_partition([1, 2])


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_tables_give_valid_intervals(seed):
    rng = np.random.default_rng(seed)
    n_classes, n_bins = int(rng.integers(1, 6)), int(rng.integers(0, 80))
    counts = rng.integers(0, 20, (n_bins, n_classes)) * (rng.random((n_bins, n_classes)) < 0.6)
    if rng.random() < 0.3:
        counts = counts * rng.random((n_bins, n_classes))  # fractional
    missing = rng.integers(0, 5, n_classes) * (rng.random() < 0.4)
    bounds = np.sort(rng.integers(0, max(1, n_bins), n_bins)).astype(float)  # ties are common
    table = Bins(upper_bounds=bounds, counts=counts, classes=tuple(range(n_classes)), missing=missing)
    values = np.concatenate([rng.uniform(-10, n_bins + 10, 20), [np.nan, np.inf, -np.inf]])
    for method in ("auto", "exact", "greedy", "null"):
        for criterion in ("bins", "boulle2006"):
            result = modl.discretize(table, method=method, criterion=criterion, selection_cost=float(rng.random()))
            result._check()
            assert result.counts.sum() == pytest.approx(table.n)
            log_lik = result.log_likelihood(values)
            assert log_lik.shape == (len(values), n_classes) and np.all(np.isfinite(log_lik))
