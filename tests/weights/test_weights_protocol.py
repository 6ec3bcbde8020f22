"""What every learner owes the classifier (weights/base.py), checked on each of them."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_weights import context_for, make_rows

from wnb_stream.weights import FNB, PGDMB, SGCF, SNB, VNS, Batch, Direct, Graphical, Optimizer, Uniform, toy_batch

LEARNERS = [Uniform, PGDMB, VNS, Graphical]


def configurations():
    for cls in LEARNERS:
        for params in cls._unit_test_params():
            yield pytest.param(cls, params, id=f"{cls.__name__}-{params}")


@pytest.mark.parametrize("cls, params", list(configurations()))
def test_a_stream_that_grows_from_nothing(cls, params):
    """The classifier's life cycle: reset(0, 0), resize as variables and classes appear, learn."""
    model = cls(**params)
    assert isinstance(model, Optimizer) and model.batch_size >= 1
    model.reset(0, 0, seed=1)
    assert model.weights.shape == (0,)
    rng = np.random.default_rng(0)
    k, j = 0, 0
    for step, (new_k, new_j) in enumerate([(3, 2), (3, 2), (5, 2), (5, 3), (8, 3), (8, 3)]):
        k, j = new_k, new_j
        model.resize(k, j)
        data = make_rows(rng, 40, n_informative=2, n_noise=k - 2, n_classes=j)
        model.learn(data, data, context_for(k))
        assert not model.problems()
        w = model.weights
        assert w.shape == (k,) and np.all(np.isfinite(w))
        log_lik = data.log_lik
        s = model.scores(log_lik, data.log_prior)
        assert s.shape == (40, j) and np.all(np.isfinite(s))
        coefficients, offsets = model.coefficients(k, j)
        assert coefficients.shape == (k, j) and offsets.shape == (j,)
        np.testing.assert_allclose(s, data.log_prior + offsets + np.einsum("nkj,kj->nj", log_lik, coefficients))


@pytest.mark.parametrize("cls", LEARNERS)
def test_a_batch_encoded_before_the_last_resize_is_accepted(cls):
    model = cls()
    model.reset(6, 2, seed=0)
    data = make_rows(np.random.default_rng(1), 30, n_informative=2, n_noise=2)  # 4 of the 6 variables
    model.learn(data, data, context_for(4))
    assert not model.problems()
    assert model.weights.shape == (6,)


@pytest.mark.parametrize("cls", LEARNERS)
def test_clone_and_repr(cls):
    model = cls()
    model.reset(3, 2, seed=0)
    data = make_rows(np.random.default_rng(2), 30, n_informative=2, n_noise=1)
    model.learn(data, data, context_for(3))
    clone = model.clone()
    assert type(clone) is cls and repr(clone) == repr(model)
    assert clone._get_params() == model._get_params()
    assert clone.weights.shape == (0,)  # a fresh, unreset prototype


@pytest.mark.parametrize("cls", LEARNERS)
def test_prediction_before_any_reset_is_plain_naive_bayes(cls):
    data = make_rows(np.random.default_rng(3), 10, n_informative=2, n_noise=1)
    s = cls().scores(data.log_lik, data.log_prior)
    np.testing.assert_allclose(s, data.log_prior + data.log_lik.sum(axis=1))


@pytest.mark.parametrize("cls", [PGDMB, VNS, Graphical])
def test_learning_changes_the_model_and_zero_weights_do_not(cls):
    data = make_rows(np.random.default_rng(4), 200, n_informative=2, n_noise=3)
    model = cls(batch_size=200) if cls is not Graphical else cls(adaptive=True)
    model.reset(5, 2, seed=0)
    before = model.scores(data.log_lik, data.log_prior)
    model.learn(Batch(data.log_lik, data.y, np.zeros(200), data.log_prior), None, context_for(5))
    np.testing.assert_array_equal(model.scores(data.log_lik, data.log_prior), before)
    for _ in range(5):
        model.learn(data, data, context_for(5))
    assert not np.allclose(model.scores(data.log_lik, data.log_prior), before)


@pytest.mark.parametrize("cls", [Uniform, PGDMB, VNS, Graphical, FNB, SNB, SGCF, Direct])
def test_refit_searches_the_window_now_or_does_nothing(cls):
    """``refit`` (asked by the change detector before it forgets): the batch searches run one
    search on the window at once, out of schedule, and say so; the learners that step on every
    batch do nothing and return False (their state is left as it was)."""
    model = cls()
    model.reset(5, 2, seed=0)
    rng = np.random.default_rng(3)
    first = make_rows(rng, 40, n_informative=2, n_noise=3)
    model.learn(first, first, context_for(5))
    searches, weights = getattr(model, "n_searches", None), model.weights
    window = make_rows(rng, 400, n_informative=2, n_noise=3)
    done = model.refit(window, context_for(5))
    assert not model.problems()
    if cls in (FNB, SNB, SGCF, Direct):
        assert model.n_searches == searches + 1
        # FNB and SNB always take the search's result; SGCF and Direct only one not worse on the window
        assert done is True if cls in (FNB, SNB) else isinstance(done, bool)
    else:
        assert done is False and np.array_equal(model.weights, weights)


def _examples_rows(rng, n, k, m):
    """The generator the learners' examples wrote out before ``toy_batch`` (kept to pin it)."""
    y = rng.integers(0, 2, n)
    log_lik = np.log(rng.dirichlet([1, 1], size=(n, k)))
    agree = rng.random((n, m)) < 0.7
    hot = np.where(agree, y[:, None], 1 - y[:, None])
    log_lik[:, :m, :] = np.log(np.where(hot[..., None] == np.arange(2), 0.7, 0.3))
    return Batch(log_lik, y, np.ones(n), np.log([0.5, 0.5]))


@pytest.mark.parametrize("k, m", [(6, 3), (10, 5), (4, 0), (3, 3)])
def test_toy_batch_draws_the_examples_rows_bit_for_bit(k, m):
    """The examples' printed weights depend on every draw: toy_batch makes the same ones, in order."""
    mine, theirs = np.random.default_rng(7), np.random.default_rng(7)
    for n in (50, 0, 120):
        got, expected = toy_batch(mine, n, n_variables=k, n_informative=m), _examples_rows(theirs, n, k, m)
        for name in ("log_lik", "y", "sample_weight", "log_prior"):
            assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    assert got.log_lik.shape == (120, k, 2)
    assert set(np.exp(got.log_lik[:, :m, :]).round(12).ravel()) <= {0.7, 0.3}


@pytest.mark.parametrize(
    "args, name",
    [((10,), None), ((-1,), "n"), ((10, 2, 3), "n_informative"), ((10, 6, -1), "n_informative"), ((10, -1, 0), "n_variables"), ((2.5,), "n")],
)
def test_toy_batch_refuses_impossible_sizes_naming_them(args, name):
    rng = np.random.default_rng(0)
    if name is None:
        assert len(toy_batch(rng, *args)) == 10
        return
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        toy_batch(rng, *args)
    assert rng.bit_generator.state == state  # nothing drawn
