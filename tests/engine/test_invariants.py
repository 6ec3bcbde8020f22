"""The whole model after random streams: every part's invariants hold after every call, the
probabilities are a distribution, ``learn_many`` reaches the model of a ``learn_one`` loop bit for
bit, and a learner cannot write into the window it is handed.

Streams mix numeric and categorical features, missing values, features appearing and
disappearing, classes arriving late, sample weights (0 included), ``learn_one``, ``learn_many``
and predictions interleaved, with a small history so that its ring wraps. ``test_classifier.py``
checks the equivalence on fixed streams; here hypothesis draws them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_cases import NUMERIC, OPTIMIZERS, run, streams
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import WeightedNaiveBayes, summaries, weights


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    numeric=st.sampled_from(list(NUMERIC)),
    history_size=st.integers(7, 40),
    batch_size=st.sampled_from([1, 2, 5, 16, 50]),
    stream=streams(),
    container_seed=st.integers(0, 2**16),
)
def test_random_streams_keep_every_invariant_and_learn_many_is_a_learn_one_loop(name, numeric, history_size, batch_size, stream, container_seed):
    policy, ops = stream
    a, b = run(OPTIMIZERS[name](batch_size), NUMERIC[numeric](), history_size, policy, ops, container_seed)
    assert a._engine.history.stored == sum(len(rows) for op, rows in ops if op != "predict")
    assert len(a._engine.history) == min(history_size, a._engine.history.stored)
    event(f"the ring wrapped: {a._engine.history.stored > history_size}")
    event(f"classes: {len(a.classes)}")
    event(f"variables: {len(a._engine.registry)}")


def test_a_long_stream_wraps_the_history_many_times():
    # a fixed, longer stream on every optimizer: the ring wraps many times, every rebuild path runs
    rng = np.random.default_rng(0)
    rows = []
    for i in range(400):
        y = ["a", "b", "c"][int(rng.integers(0, 3 if i > 150 else 2))]
        x = {"n0": round(float(rng.normal("abc".index(y), 1.0)), 1), "c0": "uvw"[int(rng.integers(0, 3))]}
        if i % 11 == 0:
            x["n0"] = None
        if i > 200:
            x["late"] = float(rng.integers(0, 4))
        rows.append((x, y, float(rng.choice([1.0, 0.0, 2.0]))))
    ops, i = [], 0
    while i < len(rows):
        size = int(rng.choice([1, 7, 30]))
        ops.append(("many" if size > 1 else "one", rows[i : i + size]))
        i += size
    for name, make in OPTIMIZERS.items():
        run(make(20), summaries.GKClass(), 13, "raise", ops, 1)


# ---------------------------------------------------------------------- the learner's window
def spy(cls):
    """A learner that checks it cannot write into what it is handed, then learns as ``cls``."""

    def learn(self, batch, history, context):
        arrays = {f"{which}.{name}": getattr(part, name) for which, part in (("batch", batch), ("history", history))
                  for name in ("log_lik", "y", "sample_weight", "log_prior")}  # fmt: skip
        before = {name: array.copy() for name, array in arrays.items()}
        for name, array in arrays.items():
            assert not array.flags.writeable, name
            with pytest.raises(ValueError, match="read-only"):
                array[...] = 0
            if array.size:
                with pytest.raises(ValueError, match="read-only"):
                    np.multiply(array, 2, out=array)
        assert batch.log_lik.shape[1:] == history.log_lik.shape[1:] and len(batch) <= len(history)
        cls.learn(self, batch, history, context)
        for name, array in arrays.items():
            np.testing.assert_array_equal(array, before[name], err_msg=name)
        self.steps = getattr(self, "steps", 0) + 1

    return type(f"Spy{cls.__name__}", (cls,), {"learn": learn})


@pytest.mark.parametrize("cls", [weights.Uniform, weights.PGDMB, weights.VNS, weights.Graphical], ids=lambda c: c.__name__)
def test_a_learner_cannot_write_into_its_window(cls):
    optimizer = spy(cls)(batch_size=10) if cls is not weights.Graphical else spy(cls)()
    model = WeightedNaiveBayes(optimizer=optimizer, history_size=15, seed=1)
    rng = np.random.default_rng(3)
    for i in range(60):
        y = "ab"[int(rng.integers(0, 2))]
        x = {"n": float(rng.normal("ab".index(y))), "c": "uv"[int(rng.integers(0, 2))]}
        if i % 2:
            model.learn_one(x, y)
        else:
            model.learn_many(pd.DataFrame([x, x]), [y, "b"])
        model._check()
    assert model._engine.optimizer.steps > 2
