"""FNB: the fractional naive Bayes search (HB24 Algorithm 2, docs/algorithms/weights.md#fnb)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import context_for, costs, make_rows, problem

from wnb_stream.weights import FNB, PGDMB, VNS, Batch, selection
from wnb_stream.weights.selection import (
    Search,
    ffwbw_round,
    fractional_search,
    increments,
    ranked_forward_pass,
    selection_criterion,
)


@settings(max_examples=examples(25), deadline=None)
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
        assert not model.problems()
    return model


@settings(max_examples=examples(20), deadline=None)
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
        ({"refine": "vns"}, "refine must be None or a PGDMB or VNS"),
        ({"refine": VNS(), "max_variables": 3}, "refine and max_variables cannot be combined"),
    ],
)
def test_parameters_are_checked(params, message):
    with pytest.raises(ValueError, match=message):
        FNB(**params)


# ------------------------------------------------------------------------------------------------
# A binding budget fills best first (selection.ranked_forward_pass)


def pointing_window(accuracy, n: int = 600, seed: int = 0) -> Batch:
    """Binary rows; variable k points at the class with probability ``accuracy[k]`` (exact ℓ)."""
    rng = np.random.default_rng(seed)
    accuracy = np.asarray(accuracy, dtype=float)
    y = rng.integers(0, 2, n)
    pointed = np.where(rng.random((n, len(accuracy))) < accuracy, y[:, None], 1 - y[:, None])
    log_lik = np.where(pointed[..., None] == np.arange(2), np.log(accuracy)[:, None], np.log(1 - accuracy)[:, None])
    return Batch(log_lik, y, np.ones(n), np.log([0.5, 0.5]))


def test_a_budget_takes_the_strong_variables_that_come_last_in_the_random_order():
    """Seed 31's first order is 4 2 1 5 3 0 6 7: the random pass would fill a budget of 2 with two
    weak variables (each lowers the criterion) before it meets the strong ones."""
    data = pointing_window([0.58] * 6 + [0.85] * 2)  # 0–5 weakly informative, 6 and 7 strongly
    assert np.random.default_rng(31).permutation(8)[-2:].tolist() == [6, 7]
    context = context_for(8)
    b = context.prior_costs
    for k in range(6):  # a weak variable alone pays for its place: the random pass keeps it
        w = np.zeros(8)
        w[k] = 0.5
        assert selection_criterion(w, data, b) < selection_criterion(np.zeros(8), data, b)
    model = FNB(max_variables=2)
    model.reset(8, 2, seed=31)
    model.learn(data, data, context)
    assert model.n_searches == 1
    assert np.flatnonzero(model.weights).tolist() == [6, 7]
    assert not model.problems()


def test_each_entry_is_the_best_given_those_already_in():
    """Greedy, not a ranking of single gains: variable 4 copies the strongest, 0; alone each gains
    the most, but next to 0 the copy gains less than an independent weaker variable."""
    data = pointing_window([0.85, 0.75, 0.75, 0.75], n=1500, seed=3)
    data = Batch(np.concatenate([data.log_lik, data.log_lik[:, :1]], axis=1), data.y, data.sample_weight, data.log_prior)
    b = costs(5)
    search = Search(data, b, np.ones(5, bool), max_variables=2)
    single = search.trial_values(np.arange(5), 0.5)
    assert set(np.argsort(single)[:2].tolist()) == {0, 4}  # the two best single gains
    assert ranked_forward_pass(search, np.random.default_rng(0).permutation(5), 0.5) == 2
    chosen = np.flatnonzero(search.weights).tolist()
    assert len(set(chosen) & {0, 4}) == 1 and len(set(chosen) & {1, 2, 3}) == 1


def test_trial_values_are_the_criterion_of_each_single_move():
    data = problem(5, n=80, n_informative=3, n_noise=3)
    b = costs(6, 5)
    search = Search(data, b, np.ones(6, bool))
    search.try_move(1, 0.5, forward=True)
    values = search.trial_values(np.arange(6), 0.75)
    for k in range(6):
        w = search.weights.copy()
        w[k] = 0.75
        assert values[k] == pytest.approx(selection_criterion(w, data, b), rel=1e-12)
    assert search.weights.tolist() == [0.0, 0.5, 0.0, 0.0, 0.0, 0.0]  # nothing kept


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.sampled_from(["paper", "khiops"]))
def test_a_budgeted_search_never_holds_more_variables_and_never_worsens(seed, budget, schedule):
    """Every round of the budgeted search (the ranked forward pass when the budget binds)."""
    data = make_rows(np.random.default_rng(seed), 200, n_informative=4, n_noise=6)
    b = costs(10, seed)
    rng = np.random.default_rng(seed)
    search = Search(data, b, np.ones(10, bool), max_variables=budget)
    value = search.value
    for delta, repeats in increments(search.n_rows, 10, schedule):
        for _ in range(repeats):
            ffwbw_round(search, rng, delta, ranked=True)
            assert np.count_nonzero(search.weights) <= budget
            assert search.value <= value + 1e-9 * (1 + abs(value))
            assert search.value == pytest.approx(selection_criterion(search.weights, data, b), rel=1e-9)
            value = search.value


@pytest.mark.parametrize("seed", range(3))
def test_a_budget_that_every_variable_fits_changes_nothing(seed):
    data = make_rows(np.random.default_rng(seed), 400, n_informative=3, n_noise=4)
    free = fractional_search(data, costs(7), np.ones(7, bool), np.random.default_rng(seed))
    roomy = fractional_search(data, costs(7), np.ones(7, bool), np.random.default_rng(seed), max_variables=7)
    assert roomy.weights.tolist() == free.weights.tolist() and roomy.value == free.value


# ------------------------------------------------------------------------------------------------
# refine: FNB's result as the start of VNS or PGDMB (HB24 §4.4)


def test_refine_restarts_the_learner_from_each_search_result():
    rng = np.random.default_rng(7)
    history = make_rows(rng, 400, n_informative=3, n_noise=5)
    model = FNB(batch_size=40, refine=VNS(batch_size=40, opti_level=0, replay_level=None))
    model.reset(8, 2, seed=1)
    assert model.weights.tolist() == [1.0] * 8  # the refiner's plain naive Bayes start
    model.learn(make_rows(rng, 40, n_informative=3, n_noise=5), history, context_for(8))
    refiner = model._refiner
    assert model.n_searches == 1 and not refiner._incumbent_is_nb
    assert refiner.n_steps == 1  # restarted from the search's result, then one step on the batch
    solution = np.where(model._best < refiner.zero_threshold, 0.0, model._best)
    value = refiner._window_value
    assert np.array_equal(refiner.weights, solution) or (
        value(refiner.weights, history, context_for(8).prior_costs) < value(solution, history, context_for(8).prior_costs)
    )
    np.testing.assert_array_equal(model.weights, refiner.weights)
    np.testing.assert_array_equal(model.coefficients(8, 2)[0][:, 0], refiner.weights)
    assert not model.problems()


def test_refine_follows_refits_resizes_and_is_deterministic():
    runs = []
    for _ in range(2):
        model = FNB(refine=PGDMB(batch_size=40))
        model.reset(6, 2, seed=3)
        stream(model, 2, batches=6)
        assert model.refit(make_rows(np.random.default_rng(9), 300, 3, 3), context_for(6))
        assert np.array_equal(model._refiner._best, np.where(model._best < 1e-3, 0.0, model._best))
        model.resize(8, 3)
        assert model.weights.shape == (8,) and model._refiner._n_variables == 8
        assert not model.problems()
        runs.append(model.weights.tolist())
    assert runs[0] == runs[1]


def test_the_refiner_predicts_a_woken_variable_at_once():
    """``sync`` reaches the refiner, which predicts: a variable that wakes between two steps
    predicts at the refiner's entry weight (PGDMB's ``wake``); FNB without refine predicts with its
    search's result, where a woken variable waits for the next search (as a new one does)."""
    from wnb_stream.weights import Context

    rng = np.random.default_rng(7)
    history = make_rows(rng, 400, n_informative=3, n_noise=5)
    asleep = Context(context_for(8).prior_costs, np.array([True, False] + [True] * 6))
    model = FNB(batch_size=40, refine=VNS(batch_size=40, opti_level=0, replay_level=None))
    model.reset(8, 2, seed=1)
    model.learn(make_rows(rng, 40, n_informative=3, n_noise=5), history, asleep)
    assert model.weights[1] == 0.0
    model.sync(context_for(8))
    assert model.coefficients(8, 2)[0][1, 0] == model._refiner.entry_weight > 0.0
    plain = FNB(batch_size=40)
    plain.reset(8, 2, seed=1)
    plain.learn(make_rows(rng, 40, n_informative=3, n_noise=5), history, asleep)
    plain.sync(context_for(8))
    assert plain.coefficients(8, 2)[0][1, 0] == 0.0


def test_fnb_without_refine_predicts_with_its_search_result():
    model = FNB()
    model.reset(6, 2, seed=0)
    stream(model, 4, batches=2)
    assert model._refiner is None and model.weights.tolist() == model._best.tolist()


@pytest.mark.slow  # River's whole estimator check: CI runs it (--run-slow)
@pytest.mark.parametrize("params", list(FNB._unit_test_params()), ids=str)
def test_river_check_estimator(params):
    from river import checks

    from wnb_stream import WeightedNaiveBayes

    checks.check_estimator(WeightedNaiveBayes(optimizer=FNB(**params), history_size=100, seed=1))
