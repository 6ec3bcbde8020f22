"""Level 3's slots: only variables whose level 2 is not flat enter the window and the learner."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import WeightedNaiveBayes, weights
from wnb_stream.engine.slots import Slots
from wnb_stream.summaries import Gaussian

# ------------------------------------------------------------------------------------------------
# The part alone


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.lists(st.integers(0, 19), max_size=6), max_size=8))
def test_slots_are_handed_out_once_in_order_of_entry(batches):
    slots, order = Slots(), []
    slots.grow(20)
    for batch in batches:
        grown = slots.enter(np.array(batch, dtype=np.intp), 20)
        new = [k for k in dict.fromkeys(batch) if k not in order]
        order += new
        assert grown == bool(new)
        slots._check(20)
    assert slots.variable.tolist() == order
    assert [int(slots.of[k]) for k in order] == list(range(len(order)))
    assert np.all(slots.of[[k for k in range(20) if k not in order]] == -1)
    values = np.arange(len(order), dtype=float)[:, None] + 1.0  # (A, 1)
    scattered = slots.scatter(values, 20, outside=-7.0)
    assert scattered[order, 0].tolist() == values[:, 0].tolist()
    assert np.all(scattered[[k for k in range(20) if k not in order]] == -7.0)
    slots.clear()
    assert len(slots) == 0 and np.all(slots.of == -1)


def test_a_flat_level_2_is_one_part_or_none():
    model = WeightedNaiveBayes(seed=0)
    rng = np.random.default_rng(0)
    for i in range(400):
        model.learn_one({"signal": float(i % 2) + rng.normal(0, 0.1), "noise": float(rng.normal())}, i % 2)
    variables = {v.name: v for v in model._engine.registry.variables}
    assert not variables["signal"].flat and variables["noise"].flat
    assert variables["noise"].log_prob.shape[0] == 1  # one part: log 1 = 0 everywhere
    dense = WeightedNaiveBayes(numeric=Gaussian(), seed=0)
    dense.learn_one({"x": 1.0}, 0)
    dense.learn_one({"x": 2.0}, 1)
    assert not dense._engine.registry.variables[0].flat  # a built Gaussian is never flat


# ------------------------------------------------------------------------------------------------
# Through the engine


def _stream(n: int, n_noise: int, seed: int, sparse: bool = False):
    """Two classes; 4 informative numeric variables, a categorical one, ``n_noise`` noise variables
    (with ``sparse``, each noise value is absent — zero — 90 % of the time)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        y = int(rng.integers(0, 2))
        x = {f"s{k}": float(rng.normal(y * (k + 1) / 2, 1.0)) for k in range(4)}
        x["c"] = "ab"[y] if rng.random() < 0.8 else "ba"[y]
        for k in range(n_noise):
            value = float(rng.normal())
            if not sparse or rng.random() < 0.1:
                x[f"z{k:03d}"] = value
        if rng.random() < 0.05:
            x["s0"] = math.nan
        yield x, y


class Spy(weights.VNS):
    """VNS that records the width of every window it is given."""

    def learn(self, batch, history, context):
        self.widths = getattr(self, "widths", []) + [(batch.log_lik.shape[1], history.log_lik.shape[1], len(context.active))]
        super().learn(batch, history, context)


def _dense_encoding(engine, absent):
    """``(n, K, J)`` every variable's ℓ over the history's raw rows, variable by variable."""
    h, registry, J = engine.history, engine.registry, len(engine.classes)
    out = np.zeros((h.size, len(registry), J))
    numeric, categorical, presence = h.raw()  # the rows in use, dense (either layout)
    for k, variable in enumerate(registry.variables):
        raw = (numeric if variable.kind == "numeric" else categorical)[:, registry.column[k]]
        present = presence[:, k]
        if present.any():
            ll = variable.log_lik_many(raw[present])
            out[np.flatnonzero(present), k, : ll.shape[1]] = ll
        if absent is not None and variable.kind == "numeric" and (~present).any():
            ll = variable.log_lik_one(float(absent))
            if ll is not None:
                out[~present, k, : len(ll)] = ll
    return out


@pytest.mark.parametrize("absent", [None, 0.0])
@pytest.mark.parametrize("path", ["one", "many"])
def test_the_compact_window_is_the_dense_encoding_without_its_flat_columns(path, absent):
    """The window (N, A, J) put back per variable equals every variable's ℓ on the raw rows exactly;
    the columns left out are zeros there; the learner saw only the slots."""
    rows = list(_stream(1500, 40, seed=3, sparse=absent is not None))
    model = WeightedNaiveBayes(optimizer=Spy(batch_size=50), history_size=600, absent=absent, seed=1)
    if path == "one":
        for x, y in rows:
            model.learn_one(x, y)
    else:
        for start in range(0, len(rows), 250):
            chunk = rows[start : start + 250]
            model.learn_many(pd.DataFrame([x for x, _ in chunk]), pd.Series([y for _, y in chunk]))
    e = model._engine
    model._check()
    dense = _dense_encoding(e, absent)
    np.testing.assert_array_equal(e.encoding(), dense)
    outside = np.setdiff1d(np.arange(len(e.registry)), e.slots.variable)
    assert not dense[:, outside].any()
    A, K = len(e.slots), len(e.registry)
    assert 5 <= A < K / 2, (A, K)  # the informative five, and a few noise variables at most
    assert {int(k) for k in e.slots.variable} >= {e.registry.index[name] for name in ("s0", "s1", "s2", "s3", "c")}
    widths = e.optimizer.widths
    assert widths and all(b == w == c <= A for b, w, c in widths)


def test_inactive_variables_cost_no_level_3_work():
    """200 noise variables: the learner's state and every window it sees hold the informative
    variables and the few noise ones MODL ever found something in, not the 205."""
    model = WeightedNaiveBayes(optimizer=Spy(batch_size=100), history_size=1000, seed=2)
    for x, y in _stream(3000, 200, seed=4):
        model.learn_one(x, y)
    e = model._engine
    A = len(e.slots)
    assert A <= 25 and len(e.registry) == 205
    assert max(w for w, _, _ in e.optimizer.widths) == A
    assert e.optimizer.weights.shape == (A,) and e.history.log_lik.shape[1] < 2 * max(A, 4)
    w = model.weights
    assert all(w[name] == 0.0 for k, name in enumerate(e.registry.index) if e.slots.of[k] < 0)
    assert w["s0"] > 0.25 and all(w[f"s{k}"] > 0.5 for k in range(1, 4))  # s0, the weakest, enters at 0.5: 0.47


def test_plain_naive_bayes_reports_weight_1_outside_level_3():
    model = WeightedNaiveBayes(optimizer=weights.Uniform(), seed=0)
    for x, y in _stream(500, 20, seed=5):
        model.learn_one(x, y)
    assert set(model.weights.values()) == {1.0}
    assert len(model._engine.slots) < len(model._engine.registry)


def test_slots_are_handed_out_again_after_forgetting():
    model = WeightedNaiveBayes(seed=0, history_size=500)
    for x, y in _stream(800, 20, seed=6):
        model.learn_one(x, y)
    e = model._engine
    before = len(e.slots)
    model.forget(0)
    assert len(e.slots) == 0 and e.optimizer.weights.shape == (0,)
    model._check()
    for x, y in _stream(800, 20, seed=7):
        model.learn_one(x, y)
    model._check()
    assert 5 <= len(e.slots) and before >= 5
    np.testing.assert_array_equal(e.encoding(), _dense_encoding(e, None))


def test_a_variable_that_turns_flat_keeps_its_slot_with_zeros():
    """A variable informative at first, noise later (fading, no restart): its slot stays and its
    column follows its level 2 (zeros once flat)."""
    rng = np.random.default_rng(8)
    model = WeightedNaiveBayes(seed=0, history_size=300, half_life=300)
    for i in range(4000):
        y = i % 2
        x = {"a": float(rng.normal(y if i < 150 else 0.0, 0.3)), "b": float(rng.normal(y, 0.5))}
        model.learn_one(x, y)
    e = model._engine
    a = e.registry.index["a"]
    assert e.slots.of[a] >= 0 and e.registry.variables[a].flat
    assert not e.history.log_lik[: e.history.size, e.slots.of[a]].any()
    assert model.weights["a"] == 0.0
    model._check()


@pytest.mark.parametrize("absent", [None, 0.0])
def test_a_merge_hands_out_the_slots_again_and_encodes_their_columns(absent):
    """Two models of one stream's halves, one seeing a variable the other never had: the merged
    model's slots cover every variable whose level 2 is not flat, and its window is the dense
    encoding of its raw rows without the flat columns."""
    rows = list(_stream(1200, 15, seed=9, sparse=absent is not None))
    left, right = (WeightedNaiveBayes(seed=3, history_size=500, absent=absent) for _ in range(2))
    for i, (x, y) in enumerate(rows):
        if i % 2:
            right.learn_one({**x, "only_right": float(y) + 0.1 * (i % 7)}, y)
        else:
            left.learn_one(x, y)
    left.merge(right)
    e = left._engine
    left._check()
    assert e.slots.of[e.registry.index["only_right"]] >= 0
    np.testing.assert_array_equal(e.encoding(), _dense_encoding(e, absent))
    for x, y in rows[:200]:
        left.learn_one(x, y)
    left._check()
    np.testing.assert_array_equal(e.encoding(), _dense_encoding(e, absent))


def test_remove_renumbers_the_slots_variables():
    slots = Slots()
    slots.enter(np.array([3, 1]), n_variables=5)
    slots.remove(np.array([-1, 0, -1, 1, 2]))  # variables 0 and 2 leave
    assert slots.variable.tolist() == [1, 0] and slots.of.tolist() == [1, 0, -1]
    slots._check(3)
