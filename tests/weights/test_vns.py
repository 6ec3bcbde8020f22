"""PGDMB-VNS (HBL17 Algorithm 2, docs/algorithms/weights.md#vns)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from synthetic_weights import concat, context_for, make_rows

from wnb_stream.weights import PGDMB, VNS, Batch
from wnb_stream.weights.criterion import criterion, negative_log_likelihood


class SpyVNS(VNS):
    """Records the state around every end of descent."""

    def reset(self, n_variables, n_classes, seed=None):
        self.log = []
        super().reset(n_variables, n_classes, seed)

    def _end_descent(self, history, prior_costs):
        record = {
            "improved": self._descent.improved,
            "size": self._neighbourhood,
            "spent": self._spent,
            "iterations": self._descent.iterations,
            "budget": self._budget,
            "sessions": self._sessions,
            "best": self.weights,
        }
        super()._end_descent(history, prior_costs)
        record.update(size_after=self._neighbourhood, sessions_after=self._sessions, start=self.iterate)
        self.log.append(record)


def stream(model, seed, steps, batch_size=200, depth=5, n_informative=3, n_noise=5, n_classes=2):
    rng = np.random.default_rng(seed)
    window = []
    k = n_informative + n_noise
    for _ in range(steps):
        batch = make_rows(rng, batch_size, n_informative=n_informative, n_noise=n_noise, n_classes=n_classes)
        window = (window + [batch])[-depth:]
        model.learn(batch, concat(window), context_for(k))
        assert not model.problems()
        yield model


@pytest.mark.parametrize("multi_start", [False, True])
def test_neighbourhood_and_budget_follow_the_seed_schedule(multi_start):
    model = SpyVNS(batch_size=200, opti_level=4, tolerance=2, max_iterations=8, multi_start=multi_start, replay_level=None)
    model.reset(8, 2, seed=11)
    # a fixed window: descents converge, so both failures and successes happen
    data = make_rows(np.random.default_rng(0), 300, n_informative=3, n_noise=5)
    for _ in range(300):
        model.learn(data, data, context_for(8))
        assert not model.problems()
    log = model.log
    assert len(log) > 10 and any(r["sessions_after"] > r["sessions"] for r in log)
    s0 = 1 / 16
    distances = []
    for r in log:
        if r["sessions_after"] > r["sessions"]:  # budget spent: a new session from w*, s back to s0
            assert r["spent"] + r["iterations"] >= r["budget"]
            assert r["size_after"] == s0
            np.testing.assert_array_equal(r["start"], r["best"])
            continue
        assert r["spent"] + r["iterations"] < r["budget"]
        expected = max(r["size"] / 2, s0) if r["improved"] else min(2 * r["size"], 1.0)
        assert r["size_after"] == expected
        assert np.all((r["start"] >= 0) & (r["start"] <= 1))
        distance = np.abs(r["start"] - r["best"]).max()
        distances.append(distance)
        if not multi_start:  # a perturbation stays in the neighbourhood of w*
            assert distance <= r["size_after"] + 1e-3
    if multi_start:  # uniform restarts land far from w*
        assert np.mean(distances) > 0.3
    # both directions of the schedule happened, and the cap at 1
    assert any(r["improved"] for r in log) and any(not r["improved"] for r in log)
    assert any(r["size_after"] == 1.0 for r in log)
    if multi_start:  # (this seed) a success after failures reduces a large neighbourhood
        assert any(r["improved"] and r["size"] > s0 for r in log)


def test_session_budget_is_log_kn_times_two_to_the_level():
    assert VNS.session_budget(20, 10_000, 5) == pytest.approx(math.log(20 * 10_000) * 32)
    assert VNS.session_budget(1, 1, 3) == 1.0  # never below one iteration
    model = VNS(batch_size=200, opti_level=3)
    model.reset(8, 2, seed=0)
    assert model.budget is None
    next(stream(model, 0, 1, depth=5))
    assert model.budget == pytest.approx(math.log(8 * 200) * 8)


def test_same_seed_same_weights_other_seed_other_path():
    def path(seed):
        model = VNS(batch_size=200, opti_level=1, tolerance=2)
        model.reset(8, 2, seed=seed)
        return [(m.weights, m.iterate) for m in stream(model, 5, 60)]

    first, again, other = path(1), path(1), path(2)
    for (w1, i1), (w2, i2) in zip(first, again):
        np.testing.assert_array_equal(w1, w2)
        np.testing.assert_array_equal(i1, i2)
    assert any(not np.array_equal(i1, i2) for (_, i1), (_, i2) in zip(first, other))


def test_clone_is_a_fresh_model_that_replays_the_same_path():
    model = VNS(batch_size=200, opti_level=1, tolerance=2)
    model.reset(8, 2, seed=3)
    clone = model.clone()
    clone.reset(8, 2, seed=3)
    for a, b in zip(stream(model, 9, 30), stream(clone, 9, 30)):
        np.testing.assert_array_equal(a.weights, b.weights)
    assert "VNS" in repr(model) and "opti_level=1" in repr(model)


@pytest.mark.parametrize("seed, n_classes", [(0, 2), (1, 3)])
def test_drops_irrelevant_variables_and_beats_plain_nb(seed, n_classes):
    model = VNS()
    model.reset(20, n_classes, seed=seed)
    rng = np.random.default_rng(seed)
    window = []
    for _ in range(60):
        batch = make_rows(rng, 1000, n_classes=n_classes)
        window = (window + [batch])[-10:]
        model.learn(batch, concat(window), context_for(20))
    w = model.weights
    # Pure-noise variables sit near the criterion's own optimum, ~1/sqrt(N·var) ≈ 0.01–0.05 for a
    # window of 10^4 rows, not at an exact 0: the bar is 0.1 (the LED test of the classifier, where
    # MODL makes such variables uninformative, asserts < 0.05).
    assert np.all(w[5:] < 0.1), w
    assert np.all(w[:5] > 0.8), w
    test = make_rows(rng, 5000, n_classes=n_classes)
    nll = negative_log_likelihood(w, test.log_lik, test.y, test.log_prior)
    assert nll < 0.5 * negative_log_likelihood(np.ones(20), test.log_lik, test.y, test.log_prior)


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.integers(2, 3), st.sampled_from(["irprop-", "scaled"]))
def test_kept_criterion_never_increases_on_a_fixed_batch(seed, multi_start, n_classes, rprop):
    rng = np.random.default_rng(seed)
    data = make_rows(rng, 150, n_informative=3, n_noise=3, n_classes=n_classes)
    model = VNS(batch_size=150, opti_level=0, tolerance=2, multi_start=multi_start, rprop=rprop)
    model.reset(6, n_classes, seed=seed)
    context = context_for(6)
    previous = np.inf
    for _ in range(50):
        model.learn(data, data, context)
        assert not model.problems()
        value = criterion(model.weights, data, context.prior_costs, model._regularizer)
        assert value <= previous + 1e-9
        previous = value
    assert model.n_sessions > 1  # the endless stream restarts sessions


def test_parameter_validation():
    for params, name in [
        ({"opti_level": -1}, "opti_level"),
        ({"neighbourhood": 0.0}, "neighbourhood"),
        ({"neighbourhood": 1.5}, "neighbourhood"),
        ({"batch_size": 0}, "batch_size"),
    ]:
        with pytest.raises(ValueError, match=name):
            VNS(**params)


def test_resize_keeps_the_weights():
    model = VNS(batch_size=200, opti_level=1)
    model.reset(8, 2, seed=0)
    for _ in stream(model, 4, 20):
        pass
    weights = model.weights
    model.resize(10, 2)
    assert not model.problems()
    np.testing.assert_array_equal(model.weights[:8], weights)
    assert model.weights.shape == (10,)


def test_replay_runs_one_session_each_time_the_rows_seen_have_grown_by_half():
    """VNS replays mini-batches from the window each time the rows seen have grown by half."""
    from wnb_stream.weights import Batch, Context

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    data = Batch(np.log(rng.dirichlet([1, 1], size=(1000, 4))), y, np.ones(1000), np.log([0.5, 0.5]))
    context = Context(prior_costs=np.full(4, np.log(4) + 1), active=np.ones(4, bool))
    model = VNS(batch_size=50, opti_level=1, replay_level=1)
    model.reset(4, 2, seed=1)
    budget = lambda n: int(VNS.session_budget(4, n, 1))
    expected, total = [], 0
    for i in range(1, 21):
        end = 32 * i
        start = max(0, end - 200)  # a window of at most 200 rows
        window = Batch(data.log_lik[start:end], data.y[start:end], data.sample_weight[start:end], data.log_prior)
        batch = Batch(data.log_lik[end - 32 : end], data.y[end - 32 : end], data.sample_weight[end - 32 : end], data.log_prior)
        model.learn(batch, window, context)
        assert not model.problems()
        if i in (1, 2, 3, 5, 8, 12, 18):  # 32, 64, 96, 160, 256, 384, 576 rows seen (≥ 1.5× the last)
            total += budget(end - start)
        expected.append(total)
        assert model.n_replay_steps == total
    off = VNS(batch_size=50, replay_level=None)
    off.reset(4, 2, seed=1)
    off.learn(data, data, context)
    assert off.n_replay_steps == 0 and off.n_steps == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_spread_keeps_the_weights_of_a_small_window_together(seed):
    """150 rows, 8 informative variables and 4 noise: with μ = 0 the informative weights part
    (std 0.14-0.22 over seeds 0-4, from 0.36 to 1.0); the spread term keeps them within a third
    of that while the noise variables stay below half the informative mean."""
    rng = np.random.default_rng(seed)
    data = make_rows(rng, 150, n_informative=8, n_noise=4, accuracy=0.65)
    found = {}
    for mu in (0.0, 20.0):
        model = VNS(batch_size=150, opti_level=1, spread=mu)
        model.reset(12, 2, seed=seed)
        for _ in range(60):
            model.learn(data, data, context_for(12))
        found[mu] = model.weights
    assert VNS().spread == 20.0
    assert np.std(found[20.0][:8]) < np.std(found[0.0][:8]) / 2.5
    assert np.mean(found[20.0][8:]) < np.mean(found[20.0][:8]) / 2


@pytest.mark.parametrize("learner", [VNS, PGDMB])
def test_the_spread_weighs_less_on_windows_beyond_spread_rows(learner):
    """Up to ``spread_rows`` of window weight the spread term weighs μ, and the learner is the one
    without the parameter, bit for bit; beyond it the learner runs as one with μ · spread_rows / W
    and no fading, bit for bit (W: the window's sample weight)."""
    rng = np.random.default_rng(3)
    data = make_rows(rng, 400, n_informative=6, n_noise=4, accuracy=0.7)
    context = context_for(10)

    def trained(window, **params):
        model = learner(batch_size=100, **params)
        model.reset(10, 2, seed=3)
        for start in list(range(0, 400, 100)) * 10:
            model.learn(Batch(*(a[start : start + 100] for a in (data.log_lik, data.y, data.sample_weight)), data.log_prior), window, context)
        return model.weights

    short = trained(data, spread_rows=400.0)
    assert short.tolist() == trained(data, spread_rows=None).tolist()
    faded = trained(data, spread_rows=100.0)
    assert faded.tolist() == trained(data, spread=20.0 * 100.0 / 400.0, spread_rows=None).tolist()
    assert faded.tolist() != short.tolist()
    heavy = Batch(data.log_lik, data.y, np.full(400, 2.0), data.log_prior)  # weight 800: μ · 400 / 800
    assert trained(heavy, spread_rows=400.0).tolist() == trained(heavy, spread=10.0, spread_rows=None).tolist()


@pytest.mark.parametrize("value", [0.0, -1.0, float("inf"), float("nan"), "500"])
def test_a_bad_spread_rows_is_refused_naming_it(value):
    for learner in (VNS, PGDMB):
        with pytest.raises(ValueError, match="spread_rows"):
            learner(spread_rows=value)
