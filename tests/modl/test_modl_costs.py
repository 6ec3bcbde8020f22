"""Cost terms of MODL (docs/algorithms/modl.md#costs; known answers from docs/algorithms/modl.md#test-vectors)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.modl import costs

# ---------------------------------------------------------------- log-gamma and factorials


def test_log_gamma_matches_math_lgamma_on_a_dense_grid():
    x = np.concatenate([np.linspace(1e-3, 40.0, 40001), np.geomspace(1.0, 1e9, 5001), np.arange(1.0, 5000.0)])
    reference = np.array([math.lgamma(v) for v in x])
    error = np.abs(costs.log_gamma(x) - reference) / np.maximum(1.0, np.abs(reference))
    assert error.max() < 1e-10


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.floats(min_value=1e-3, max_value=1e7, allow_nan=False), min_size=1, max_size=20))
def test_log_gamma_agrees_with_math_for_any_real_array(values):
    x = np.array(values)
    reference = np.array([math.lgamma(v) for v in values])
    assert np.allclose(costs.log_gamma(x), reference, rtol=1e-10, atol=1e-10)


def test_log_gamma_integer_path_is_exact_and_keeps_shape():
    x = np.arange(1.0, 3001.0).reshape(3, 1000)
    out = costs.log_gamma(x)
    assert out.shape == (3, 1000)
    assert np.array_equal(out.ravel(), np.array([math.lgamma(v) for v in x.ravel()]))
    assert costs.log_gamma(np.zeros((0, 2))).shape == (0, 2)


def test_log_factorial_and_binomial():
    assert costs.log_factorial(0) == 0.0
    assert costs.log_factorial(5) == pytest.approx(math.log(120))
    assert costs.log_factorial(2.5) == pytest.approx(math.lgamma(3.5))
    assert np.allclose(costs.log_factorial(np.array([0.0, 3.0, 0.5])), [0.0, math.log(6), math.lgamma(1.5)])
    for n in range(0, 30):
        for k in range(0, n + 1):
            assert costs.log_binomial(n, k) == pytest.approx(math.log(math.comb(n, k)), abs=1e-9)
    assert np.allclose(costs.log_binomial(np.array([10.0, 7.0]), np.array([3.0, 7.0])), [math.log(120), 0.0])


# ---------------------------------------------------------------- universal codes (known answers)


def test_log2_star_vectors():
    expected = {1: 0.0, 2: 1.0, 3: 2.249411, 4: 3.0, 16: 7.0, 100: 11.361867}
    for n, value in expected.items():
        assert costs.log2_star(n) == pytest.approx(value, abs=1e-6)
    assert np.allclose(costs.log2_star(np.array(list(expected))), list(expected.values()), atol=1e-6)


def test_universal_code_vectors():
    expected = {1: 1.052591, 2: 1.745738, 3: 2.611764, 10: 5.105010, 100: 8.928037}
    for n, value in expected.items():
        assert costs.universal_code_length(n) == pytest.approx(value, abs=1e-6)
    # Khiops' constant 2.86511 adds about 1.6e-5 nats (docs/algorithms/modl.md#costs)
    khiops = costs.universal_code_length(10, c0=2.86511) - costs.universal_code_length(10)
    assert khiops == pytest.approx(1.6e-5, abs=1e-6)
    with pytest.raises(ValueError, match="n must be"):
        costs.universal_code_length(0)


def test_bounded_universal_code_vectors():
    expected = {1: 1.0, 2: 1.5, 3: 1.710310, 10: 2.052140, 100: 2.236764}
    for nmax, value in expected.items():
        assert costs.universal_normaliser(nmax) == pytest.approx(value, abs=1e-6)
    assert costs.bounded_universal_code_length(1, 1) == pytest.approx(0.0, abs=1e-12)
    assert costs.bounded_universal_code_length(1, 3) == pytest.approx(0.536675, abs=1e-6)
    assert costs.bounded_universal_code_length(2, 3) == pytest.approx(1.229822, abs=1e-6)
    assert costs.bounded_universal_code_length(3, 99) == pytest.approx(2.364033, abs=1e-6)
    # array arguments broadcast, and agree with the scalar form
    n = np.array([1, 2, 3])
    nmax = np.array([3, 3, 99])
    assert np.allclose(costs.bounded_universal_code_length(n, nmax), [0.536675, 1.229822, 2.364033], atol=1e-6)
    # the bounded code is a proper code: Σ_n exp(−L*_{nmax}(n)) = 1
    lengths = costs.bounded_universal_code_length(np.arange(1, 51), 50)
    assert np.exp(-lengths).sum() == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="nmax"):
        costs.universal_normaliser(0)


def test_normaliser_by_direct_summation_for_large_nmax():
    nmax = 5000
    direct = sum(2.0 ** -costs.log2_star(i) for i in range(1, nmax + 1))
    assert costs.universal_normaliser(nmax) == pytest.approx(direct, rel=1e-12)


# ---------------------------------------------------------------- Stirling and Bell (known answers)


def _stirling2(n, k):
    table = [[0] * (n + 1) for _ in range(n + 1)]
    table[0][0] = 1
    for i in range(1, n + 1):
        for j in range(1, i + 1):
            table[i][j] = j * table[i - 1][j] + table[i - 1][j - 1]
    return table[n][k]


def test_log_stirling_table_matches_exact_integers():
    table = costs.log_stirling2_table(25)
    for n in range(1, 26):
        for k in range(1, n + 1):
            assert table[n, k] == pytest.approx(math.log(_stirling2(n, k)), rel=1e-12, abs=1e-12)
        assert table[n, 0] == -np.inf
    assert table[3, 5] == -np.inf


def test_log_bell_sum_vectors():
    assert costs.log_bell_sum(5, 1) == pytest.approx(0.0, abs=1e-12)
    assert costs.log_bell_sum(5, 2) == pytest.approx(math.log(16), abs=1e-9)
    assert costs.log_bell_sum(5, 5) == pytest.approx(math.log(52), abs=1e-9)
    assert costs.log_bell_sum(10, 3) == pytest.approx(9.194414, abs=1e-6)
    # groups beyond V add nothing; Bell(12) = 4213597
    assert costs.log_bell_sum(12, 40) == pytest.approx(math.log(4213597), abs=1e-9)
    assert np.allclose(costs.log_bell_sum(5, np.array([1, 2, 5])), [0.0, math.log(16), math.log(52)])


def test_log_bell_sum_is_finite_for_thousands_of_values():
    value = costs.log_bell_sum(1500, 1500)
    assert math.isfinite(value) and value > costs.log_bell_sum(1500, 10) > 0


# ---------------------------------------------------------------- part and data costs


def _part_cost(counts):
    n_classes = len(counts)
    total = sum(counts)
    return (
        math.lgamma(total + n_classes) - math.lgamma(total + 1) - math.lgamma(n_classes)  # log C(N+J−1, J−1)
        + math.lgamma(total + 1) - sum(math.lgamma(c + 1) for c in counts)  # multinomial
    )


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.lists(st.floats(0, 500, allow_nan=False), min_size=4, max_size=4), min_size=1, max_size=6))
def test_part_costs_match_the_formula(rows):
    counts = np.array(rows)[:, : 2 + len(rows) % 3]  # 2 to 4 classes
    expected = [_part_cost(list(row)) for row in counts]
    assert np.allclose(costs.part_costs(counts), expected, rtol=1e-10, atol=1e-9)


def test_part_costs_of_an_empty_part_and_a_pure_part():
    assert costs.part_costs(np.zeros(3)) == pytest.approx(0.0, abs=1e-12)
    # a pure part costs only its class-distribution prior log C(N + J − 1, J − 1)
    assert costs.part_costs(np.array([7.0, 0.0, 0.0])) == pytest.approx(math.log(math.comb(9, 2)))
    assert costs.data_costs(np.array([7.0, 0.0, 0.0])) == pytest.approx(0.0, abs=1e-12)
    assert costs.data_costs(np.array([[2.0, 2.0]])) == pytest.approx([math.log(6)])
