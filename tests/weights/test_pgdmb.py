"""PGDMB (HBL17 Algorithm 1, docs/algorithms/weights.md#pgdmb)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import concat, context_for, make_rows

from wnb_stream.weights import PGDMB, VNS, Batch, Context, Uniform
from wnb_stream.weights.criterion import criterion, criterion_gradient, negative_log_likelihood, scores
from wnb_stream.weights.regularizers import Regularizer


def run_stream(model, seed, n_classes, steps=60, batch_size=1000, depth=10, **rows_kwargs):
    """Feed ``steps`` batches, each judged on the last ``depth`` batches (the history window)."""
    rng = np.random.default_rng(seed)
    window = []
    n_variables = None
    for _ in range(steps):
        batch = make_rows(rng, batch_size, n_classes=n_classes, **rows_kwargs)
        n_variables = batch.log_lik.shape[1]
        window = (window + [batch])[-depth:]
        model.learn(batch, concat(window), context_for(n_variables))
        assert not model.problems()
    return make_rows(rng, 5000, n_classes=n_classes, **rows_kwargs)


@pytest.mark.parametrize("seed, n_classes", [(0, 2), (1, 3)])
def test_drops_irrelevant_variables_keeps_relevant_ones_and_beats_plain_nb(seed, n_classes):
    model = PGDMB()
    model.reset(20, n_classes)
    test = run_stream(model, seed, n_classes)
    w = model.weights
    assert np.all(w[5:] < 0.05), w
    assert np.all(w[:5] > 0.8), w
    nll = negative_log_likelihood(w, test.log_lik, test.y, test.log_prior)
    plain = Uniform()
    plain.reset(20, n_classes)
    plain_nll = negative_log_likelihood(plain.weights, test.log_lik, test.y, test.log_prior)
    assert nll < 0.5 * plain_nll


def test_duplicates_share_one_weight():
    """Exact copies double-count the evidence in plain NB; PGDMB halves them (w_a + w_b ≈ 1)."""
    model = PGDMB(batch_size=500)
    model.reset(8, 2)
    test = run_stream(model, 2, 2, steps=40, batch_size=500, n_informative=3, n_noise=2, duplicates=3)
    w = model.weights
    pair_sums = w[:3] + w[5:]
    assert np.all((pair_sums > 0.7) & (pair_sums < 1.3)), w
    nll = negative_log_likelihood(w, test.log_lik, test.y, test.log_prior)
    assert nll < negative_log_likelihood(np.ones(8), test.log_lik, test.y, test.log_prior)


configurations = st.sampled_from(
    [
        {},
        {"regularizer": "r1"},
        {"regularizer": "r1", "exponent": 0.5, "penalty": 5.0},
        {"regularizer": "r1", "exponent": 2.0},
        {"regularizer": None},
        {"rprop": "rprop-"},
        {"rprop": "scaled"},
        {"rprop": "scaled", "regularizer": "r1"},
        {"tolerance": 1, "max_iterations": 3},
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 2**32 - 1), configurations, st.integers(2, 4))
def test_kept_criterion_never_increases_on_a_fixed_batch(seed, params, n_classes):
    """With batch == history fixed, the criterion of w* is monotone non-increasing."""
    rng = np.random.default_rng(seed)
    data = make_rows(rng, 200, n_informative=3, n_noise=4, n_classes=n_classes)
    model = PGDMB(batch_size=200, **params)
    model.reset(7, n_classes)
    context = context_for(7)
    regularizer = None if model.regularizer is None else Regularizer(model.regularizer, model.penalty, model.exponent, spread=model.spread)
    previous = np.inf
    for _ in range(40):
        model.learn(data, data, context)
        assert not model.problems()
        w = model.weights
        assert np.all((w >= 0) & (w <= 1))
        assert not np.any((w > 0) & (w < 1e-3))
        value = criterion(w, data, context.prior_costs, regularizer)
        assert value <= previous + 1e-9
        previous = value


def test_scaled_first_step_is_the_gradient_step_of_hbl17():
    """rprop="scaled": w^1 = P(w^0 − η_0 · g) with g the step gradient of the batch (HBL17 eq. 1.10)."""
    rng = np.random.default_rng(5)
    data = make_rows(rng, 300, n_informative=3, n_noise=3)
    costs = context_for(6).prior_costs
    model = PGDMB(batch_size=300, rprop="scaled", regularizer="r1", initial_step=0.05)
    model.reset(6, 2)
    model.learn(data, data, context_for(6))
    g = criterion_gradient(np.full(6, 0.5), data, costs, Regularizer("r1"), 300.0)
    np.testing.assert_allclose(model.iterate, np.clip(0.5 - 0.05 * g, 0.0, 1.0))
    assert len(np.unique(np.abs(model.iterate - 0.5).round(12))) > 2  # not a sign step: sizes differ


@pytest.mark.parametrize("regularizer", ["r2", "r1"])
def test_scaled_step_lowers_the_criterion_and_separates_the_variables(regularizer):
    """The PGDMB docstring's problem: five informative variables, five noise, 40 batches of 200 rows."""
    rng = np.random.default_rng(42)
    history = make_rows(rng, 5000, n_informative=5, n_noise=5)
    context = context_for(10)
    model = PGDMB(batch_size=200, rprop="scaled", regularizer=regularizer)
    model.reset(10, 2)
    for _ in range(40):
        model.learn(make_rows(rng, 200, n_informative=5, n_noise=5), history, context)
        assert not model.problems()
    reg = Regularizer(regularizer)

    def value(w):
        return criterion(w, history, context.prior_costs, reg)

    w = model.weights
    assert model.n_steps == 40
    assert value(w) < 0.9 * min(value(np.full(10, 0.5)), value(np.ones(10))), w
    assert w[:5].min() > 0.5 > 0.1 > w[5:].max(), w


def test_plain_nb_is_the_first_incumbent_and_a_step_replaces_it_only_when_better():
    rng = np.random.default_rng(3)
    data = make_rows(rng, 300, n_informative=2, n_noise=2)
    costs = context_for(4).prior_costs
    model = PGDMB(batch_size=300)
    model.reset(4, 2)
    np.testing.assert_array_equal(model.weights, np.ones(4))
    np.testing.assert_allclose(model.scores(data.log_lik, data.log_prior), data.log_prior + data.log_lik.sum(axis=1))
    start = model.iterate
    np.testing.assert_array_equal(start, np.full(4, 0.5))
    model.learn(data, data, context_for(4))
    step = model.iterate

    def value(w):
        return criterion(w, data, costs, Regularizer("r2"))

    beats = value(step) < value(start) - 1e-4 and value(step) < value(np.ones(4)) - 1e-4
    np.testing.assert_array_equal(model.weights, step if beats else np.ones(4))
    assert beats  # the noise variables make plain NB poor: the first step already beats it
    np.testing.assert_allclose(model.scores(data.log_lik, data.log_prior), scores(data.log_lik, data.log_prior, step))


def test_plain_nb_stays_until_beaten():
    """Calibrated, conditionally independent variables: NB is optimal, steps from 0.5 do not beat it."""
    rng = np.random.default_rng(12)
    data = make_rows(rng, 500, n_informative=4, n_noise=0)
    model = PGDMB(batch_size=500, regularizer=None)
    model.reset(4, 2)
    for _ in range(5):
        model.learn(data, data, None)
        np.testing.assert_array_equal(model.weights, np.ones(4))
    assert model.iterate.max() < 0.6


def test_descents_end_after_tol_degradations_and_restart_from_the_best():
    rng = np.random.default_rng(4)
    data = make_rows(rng, 300, n_informative=3, n_noise=3)
    model = PGDMB(batch_size=300, tolerance=2)
    model.reset(6, 2)
    restarts = 0
    for _ in range(150):
        before = model.n_descents
        model.learn(data, data, context_for(6))
        if model.n_descents > before:
            restarts += 1
            np.testing.assert_array_equal(model.iterate, model.weights)  # new descent from w*
    assert restarts >= 3  # on a fixed batch the descent converges, then stalls, then restarts
    assert model.n_steps == 150


def test_max_iterations_bounds_a_descent():
    rng = np.random.default_rng(5)
    model = PGDMB(batch_size=100, max_iterations=3, tolerance=100)
    model.reset(6, 2)
    for _ in range(9):
        model.learn(make_rows(rng, 100, n_informative=3, n_noise=3), None, None)
    assert model.n_descents == 4  # three full descents, the fourth just started


def test_inactive_variables_are_pinned_at_zero_and_wake_up_at_the_start_weight():
    rng = np.random.default_rng(6)
    model = PGDMB(batch_size=200)
    model.reset(6, 2)
    active = np.array([True, False, True, True, False, True])
    context = Context(np.full(6, np.log(6) + 1), active)
    for _ in range(10):
        model.learn(make_rows(rng, 200, n_informative=3, n_noise=3), None, context)
        assert np.all(model.weights[~active] == 0) and np.all(model.iterate[~active] == 0)
        assert not model.problems()
    woken = Context(np.full(6, np.log(6) + 1), np.ones(6, bool))
    model.learn(make_rows(rng, 200, n_informative=3, n_noise=3), None, woken)
    # variable 1 is informative: after waking it moves away from 0 in the iterate
    assert model.iterate[1] > 0.4
    for _ in range(30):
        model.learn(make_rows(rng, 200, n_informative=3, n_noise=3), None, woken)
    assert model.weights[1] > 0.5


@pytest.mark.parametrize("learner", [PGDMB, VNS])
def test_a_variable_woken_between_two_steps_predicts_at_the_entry_weight_at_once(learner):
    """A variable whose level 2 becomes informative again after the last step (``sync``) predicts
    at the weight a new variable enters with, the median of w*'s non-zero weights, from then on;
    the next step gives it that weight in w*. Before, it predicted at 0 until the next step: on
    pima-300 (seed 2) the model ignored the glucose column for rows 97–144 while plain NB used it
    (AUC on rows 64–150: 0.554 against plain NB's 0.692). ``sync`` changes nothing ``learn`` reads."""
    rng = np.random.default_rng(6)
    model = learner(batch_size=200)
    model.reset(6, 2)
    asleep = Context(np.full(6, np.log(6) + 1), np.array([True, False, True, True, False, True]))
    for _ in range(10):
        model.learn(make_rows(rng, 200, n_informative=3, n_noise=3), None, asleep)
    assert not np.all(model.weights[model.weights > 0] == 1.0)  # w* has left plain NB
    awake = Context(np.full(6, np.log(6) + 1), np.ones(6, bool))
    twin = copy.deepcopy(model)
    entry = model.entry_weight
    before = model.weights
    model.sync(awake)
    w, _ = model.coefficients(6, 2)
    assert w[1, 0] == entry and w[4, 0] == entry  # both woken, at the fitted scale
    assert np.array_equal(np.delete(w[:, 0], [1, 4]), np.delete(before, [1, 4]))
    assert np.array_equal(model.weights, before) and not model.problems()  # w* itself unchanged
    batch = make_rows(rng, 200, n_informative=3, n_noise=3)
    model.learn(batch, None, awake)
    twin.learn(batch, None, awake)  # never synced: the same step
    assert np.array_equal(model.weights, twin.weights) and np.array_equal(model.iterate, twin.iterate)
    model.sync(asleep)  # asleep again: pinned at 0 by the next step, as before
    assert model.coefficients(6, 2)[0][1, 0] == model.weights[1]


def test_resize_keeps_the_weights_and_starts_new_variables_at_the_entry_weight():
    rng = np.random.default_rng(7)
    model = PGDMB(batch_size=200)
    model.reset(4, 2)
    for _ in range(10):
        model.learn(make_rows(rng, 200, n_informative=2, n_noise=2), None, None)
    weights, iterate = model.weights, model.iterate
    model.resize(6, 3)
    assert not model.problems()
    np.testing.assert_array_equal(model.weights[:4], weights)
    np.testing.assert_array_equal(model.iterate[:4], iterate)
    entry = np.median(weights[weights > 0])  # the fitted scale, not initial_weight
    assert entry != 0.5
    np.testing.assert_array_equal(model.weights[4:], [entry, entry])
    np.testing.assert_array_equal(model.iterate[4:], [entry, entry])
    coefficients, offsets = model.coefficients(6, 3)
    np.testing.assert_array_equal(coefficients, np.repeat(model.weights[:, None], 3, axis=1))
    assert np.all(offsets == 0)


def test_a_new_class_without_examples_makes_no_nan():
    rng = np.random.default_rng(8)
    model = PGDMB(batch_size=100)
    model.reset(4, 2)
    for _ in range(5):
        model.learn(make_rows(rng, 100, n_informative=2, n_noise=2), None, None)
    # a third class appears in the prior (tiny or impossible) but in no row; no resize call first
    for third in (np.log(1e-6), -np.inf):
        batch = make_rows(rng, 100, n_informative=2, n_noise=2)
        log_lik = np.concatenate([batch.log_lik, np.full((100, 4, 1), np.log(0.1))], axis=2)
        log_prior = np.append(batch.log_prior, third)
        grown = Batch(log_lik, batch.y, batch.sample_weight, log_prior)
        model.learn(grown, grown, None)
        assert not model.problems()
        assert np.all(np.isfinite(model.weights))
        s = model.scores(log_lik, log_prior)
        assert np.all(np.isfinite(s[:, :2]))


def test_rows_of_weight_zero_contribute_nothing():
    rng = np.random.default_rng(9)
    batches = [make_rows(rng, 100, n_informative=2, n_noise=2) for _ in range(8)]
    plain, padded = PGDMB(batch_size=100), PGDMB(batch_size=100)
    plain.reset(4, 2)
    padded.reset(4, 2)
    for batch in batches:
        plain.learn(batch, batch, None)
        noise = make_rows(rng, 30, n_informative=2, n_noise=2)
        extra = Batch(
            np.concatenate([batch.log_lik, noise.log_lik]),
            np.concatenate([batch.y, noise.y]),
            np.concatenate([batch.sample_weight, np.zeros(30)]),
            batch.log_prior,
        )
        padded.learn(extra, extra, None)
    np.testing.assert_allclose(plain.weights, padded.weights, atol=1e-12)
    # a batch of weight 0 is no step at all
    steps = plain.n_steps
    empty = Batch(batches[0].log_lik, batches[0].y, np.zeros(100), batches[0].log_prior)
    plain.learn(empty, empty, None)
    assert plain.n_steps == steps


def test_clone_repr_and_parameter_validation():
    model = PGDMB(batch_size=123, regularizer="r1", exponent=0.5)
    clone = model.clone()
    assert isinstance(clone, PGDMB) and clone.batch_size == 123 and clone.exponent == 0.5
    assert "PGDMB" in repr(model) and "123" in repr(model)
    bad = [
        ({"batch_size": 0}, "batch_size"),
        ({"regularizer": "l2"}, "regularizer"),
        ({"penalty": -0.1}, "penalty"),
        ({"regularizer": "r2", "exponent": 2.0}, "exponent"),
        ({"tolerance": 0}, "tolerance"),
        ({"max_iterations": 0}, "max_iterations"),
        ({"epsilon": -1}, "epsilon"),
        ({"initial_weight": 1.5}, "initial_weight"),
        ({"initial_step": 0}, "initial_step"),
        ({"step_increase": 1.0}, "step_increase"),
        ({"step_decrease": 1.0}, "step_decrease"),
        ({"step_min": 0.5, "step_max": 0.1}, "step_min"),
        ({"zero_threshold": 1.0}, "zero_threshold"),
        ({"delta": 0}, "delta"),
        ({"rprop": "adam"}, "rprop"),
        ({"wake": 1}, "wake"),
    ]
    for params, name in bad:
        with pytest.raises(ValueError, match=name):
            PGDMB(**params)


operations = st.lists(
    st.one_of(
        st.tuples(st.just("learn"), st.integers(1, 60), st.integers(0, 2**16)),
        st.tuples(st.just("grow"), st.integers(0, 2), st.integers(0, 1)),
        st.tuples(st.just("sleep"), st.integers(0, 2**16), st.just(0)),
    ),
    max_size=25,
)


@settings(max_examples=examples(60), deadline=None)
@given(operations)
def test_random_operations_keep_the_invariants(ops):
    model = PGDMB(batch_size=32, tolerance=2, max_iterations=5)
    k, j = 3, 2
    model.reset(k, j)
    active = np.ones(k, bool)
    for op, a, b in ops:
        if op == "learn":
            rng = np.random.default_rng(b)
            data = make_rows(rng, a, n_informative=1, n_noise=k - 1, n_classes=j)
            model.learn(data, data, Context(np.full(k, np.log(k) + 1), active))
        elif op == "grow":
            k, j = k + a, j + b
            model.resize(k, j)
            active = np.append(active, np.ones(a, bool))
        else:
            active = np.random.default_rng(a).random(k) < 0.7
        assert not model.problems()
        w = model.weights
        assert w.shape == (k,) and np.all((w >= 0) & (w <= 1))


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12), st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_a_new_variable_enters_at_the_median_of_the_non_zero_weights(best, extra):
    """Once w* has left the plain NB start, a variable that appears enters w* and the iterate at
    the median of w*'s non-zero weights (initial_weight when all are 0); w* is otherwise unchanged."""
    model = PGDMB(initial_weight=0.5)
    model.reset(len(best), 2)
    model._best = np.array(best)
    model._incumbent_is_nb = False
    kept = [w for w in best if w > 0]
    expected = float(np.median(kept)) if kept else 0.5
    model.resize(len(best) + extra, 2)
    np.testing.assert_array_equal(model.weights[: len(best)], best)
    np.testing.assert_array_equal(model.weights[len(best):], np.full(extra, expected))
    np.testing.assert_array_equal(model.iterate[len(best):], np.full(extra, expected))


def _run_state(model) -> dict:
    return {"iterate": model._iterate, "best": model._best, "descent.best": model._descent.best, "step": model._rprop.step,
            "previous_gradient": model._rprop.previous_gradient, "active": model._active}  # fmt: skip


@pytest.mark.parametrize("learner", [PGDMB(batch_size=50), VNS(batch_size=50)], ids=["pgdmb", "vns"])
@given(seed=st.integers(0, 2**16), extra=st.integers(0, 3), fitted=st.booleans())
@settings(max_examples=examples(25), deadline=None)
def test_remap_carries_each_variable_and_enters_new_ones_as_resize_does(learner, seed, extra, fitted):
    rng = np.random.default_rng(seed)
    model = learner.clone()
    model.reset(6, 2, seed=seed)
    if fitted:  # (a step that beats the plain NB start changes how new variables enter)
        window = make_rows(rng, 300, n_informative=3, n_noise=3, n_classes=2)
        for _ in range(8):
            model.learn(window, window, context_for(6))
    before = {name: vector.copy() for name, vector in _run_state(model).items()}
    grown = model.clone()
    grown.__dict__.update(copy.deepcopy(model.__dict__))
    grown.resize(6 + extra, 2)
    order = rng.permutation(6)
    assert model.remap(np.concatenate([order, np.full(extra, -1)]), 2)
    assert not model.problems()
    after, resized = _run_state(model), _run_state(grown)
    for name, vector in after.items():
        np.testing.assert_array_equal(vector[:6], before[name][order], err_msg=name)  # each kept variable keeps its values
        np.testing.assert_array_equal(vector[6:], resized[name][6:], err_msg=name)  # a new one enters as resize enters it
    assert model.n_steps == grown.n_steps and model.n_descents == grown.n_descents  # the run goes on


def test_an_unready_learner_carries_nothing():
    assert not PGDMB().remap(np.array([0, -1]), 2)
