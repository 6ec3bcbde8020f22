"""FNB: the fractional naive Bayes search (HB24 Algorithm 2, docs/algorithms/weights.md#fnb)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_weights import context_for, make_rows
from test_selection import costs, problem

from wnb_stream.weights import FNB, selection
from wnb_stream.weights.selection import (
    Search,
    ffwbw_round,
    fractional_search,
    increments,
    selection_criterion,
)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["paper", "khiops"]), st.sampled_from([None, 1, 2]))
def test_the_criterion_never_increases_over_the_passes(seed, schedule, max_variables):
    """Algorithm 2 step by step: after every round, the recomputed criterion is no higher."""
    data = problem(seed, n=70, n_informative=3, n_noise=3)
    b = costs(6, seed)
    rng = np.random.default_rng(seed)
    search = Search(data, b, np.ones(6, bool), max_variables=max_variables)
    values = [selection_criterion(search.weights, data, b)]
    for delta, repeats in increments(search.n_rows, 6, schedule):
        for _ in range(repeats):
            ffwbw_round(search, rng, delta)
            values.append(selection_criterion(search.weights, data, b))
            assert values[-1] == pytest.approx(search.value, rel=1e-9, abs=1e-9)
    assert all(after <= before + 1e-9 * (1 + abs(before)) for before, after in itertools.pairwise(values))


@pytest.mark.parametrize("seed", range(4))
def test_fnb_is_at_least_as_good_as_the_empty_and_the_one_variable_models(seed):
    data = problem(seed, n=120, n_informative=2, n_noise=3)
    b = costs(5, seed)
    search = fractional_search(data, b, np.ones(5, bool), np.random.default_rng(seed))
    assert search.value <= search.empty_value
    # a move of δ = 1/2 from 0 was tried for every variable at the first increment: the result
    # is no worse than the best single variable at weight 1/2
    for k in range(5):
        w = np.zeros(5)
        w[k] = 0.5
        assert search.value <= selection_criterion(w, data, b) + 1e-9 * abs(search.value)


def test_fnb_keeps_the_informative_variables_and_little_of_the_noise():
    """With λ = 0.1 on 3,000 rows the prior is light: a noise variable may keep a few hundredths."""
    data = make_rows(np.random.default_rng(0), 3000, n_informative=4, n_noise=6)
    search = fractional_search(data, costs(10), np.ones(10, bool), np.random.default_rng(0))
    assert np.all(search.weights[:4] > 0.5)
    assert np.all(search.weights[4:] < 0.1)
    heavy = fractional_search(data, costs(10), np.ones(10, bool), np.random.default_rng(0), penalty=1.0)
    assert np.all(heavy.weights[:4] > 0.5)
    assert np.count_nonzero(heavy.weights[4:]) < np.count_nonzero(search.weights[4:])


def test_duplicated_variables_share_their_weight():
    """Two copies of one variable: the naive Bayes double-counts them, FNB's weights sum to about 1."""
    data = make_rows(np.random.default_rng(4), 3000, n_informative=2, n_noise=2, duplicates=1)
    search = fractional_search(data, costs(5), np.ones(5, bool), np.random.default_rng(4))
    assert search.weights[0] + search.weights[4] == pytest.approx(1.0, abs=0.3)
    assert search.weights[1] > 0.5


def stream(model, seed, batches=12, k_noise=3, active=None, history_rows=400, batch_rows=40):
    rng = np.random.default_rng(seed)
    history = make_rows(rng, history_rows, n_informative=3, n_noise=k_noise)
    k = 3 + k_noise
    for _ in range(batches):
        model.learn(make_rows(rng, batch_rows, 3, k_noise), history, context_for(k, active))
        model._check()
    return model


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.sampled_from(["paper", "khiops"]))
def test_max_variables_is_respected(seed, budget, schedule):
    model = FNB(max_variables=budget, schedule=schedule)
    model.reset(6, 2, seed=seed)
    stream(model, seed, batches=3)
    assert model.n_searches >= 1
    assert np.count_nonzero(model.weights) <= budget


def test_deterministic_given_the_seed():
    runs = []
    for _ in range(2):
        model = FNB()
        model.reset(6, 2, seed=11)
        runs.append(stream(model, 5))
    assert runs[0].weights.tolist() == runs[1].weights.tolist()
    assert runs[0].criterion_value == runs[1].criterion_value


def test_the_schedule_searches_on_doubling_and_on_a_renewed_window(monkeypatch):
    calls = []
    original = selection.fractional_search

    def spy(history, *args, **kwargs):
        calls.append(model._rows_seen)
        return original(history, *args, **kwargs)

    monkeypatch.setattr("wnb_stream.weights.fnb.fractional_search", spy)
    model = FNB()
    model.reset(6, 2, seed=0)
    assert model.weights.tolist() == [1.0] * 6  # plain naive Bayes before the first search
    stream(model, 0, batches=20, history_rows=100, batch_rows=16)  # 16, 32, 48, … rows seen
    # first at 32 rows, then doubling (64, 128) and every 100 rows (the window's size)
    assert calls[:3] == [32, 64, 128]
    assert all(b - a <= 112 for a, b in itertools.pairwise(calls))
    assert model.n_searches == len(calls)
    calls.clear()
    model = FNB(refresh=None)
    model.reset(6, 2, seed=0)
    stream(model, 0, batches=20, history_rows=100, batch_rows=16)
    assert calls == [32, 64, 128, 256]


def test_inactive_and_new_variables():
    active = np.array([True, True, False, True, True, True])
    model = FNB()
    model.reset(6, 2, seed=0)
    stream(model, 1, batches=1, active=active)  # 40 rows: one search
    assert model.n_searches == 1 and model.weights[2] == 0.0
    model.resize(8, 3)  # no search has selected them: weight 0
    assert model.weights[6:].tolist() == [0.0, 0.0]
    assert model.coefficients(9, 3)[0][8].tolist() == [0.0, 0.0, 0.0]
    fresh = FNB()
    fresh.reset(2, 2)
    fresh.resize(3, 2)  # before any search: plain naive Bayes
    assert fresh.weights.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"exponent": 0.0}, "exponent"),
        ({"exponent": 1.5}, "exponent"),
        ({"max_variables": 0}, "max_variables"),
        ({"schedule": "fast"}, "schedule"),
        ({"growth": 1.0}, "growth"),
        ({"refresh": 0.0}, "refresh"),
        ({"penalty": -1.0}, "penalty"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_parameters_are_checked(params, message):
    with pytest.raises(ValueError, match=message):
        FNB(**params)
