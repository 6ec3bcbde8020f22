"""The whole model after random streams: every part's invariants hold after every call, the
probabilities are a distribution, ``learn_many`` reaches the model of a ``learn_one`` loop bit for
bit, and a learner cannot write into the window it is handed.

Streams mix numeric and categorical features, missing values, features appearing and
disappearing, classes arriving late, sample weights (0 included), ``learn_one``, ``learn_many``
and predictions interleaved, with a small history so that its ring wraps. ``test_classifier.py``
checks the equivalence on fixed streams; here hypothesis draws them.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from profiles import examples

from wnb_stream import WeightedNaiveBayes, summaries, weights
from wnb_stream.engine import frames

OPTIMIZERS = {
    "Uniform": lambda b: weights.Uniform(),
    "PGDMB": lambda b: weights.PGDMB(batch_size=b),
    "VNS": lambda b: weights.VNS(batch_size=b),
    "Graphical": lambda b: weights.Graphical(),
}
NUMERIC = {"GKClass": summaries.GKClass, "CPiD": summaries.CPiD, "Gaussian": summaries.Gaussian}

# feature → (kind, first row it may appear in, last row): some appear late, one disappears
FEATURES = {
    "n0": ("numeric", 0, 10**9),
    "n1": ("numeric", 0, 10**9),
    "c0": ("categorical", 0, 10**9),
    "gone": ("numeric", 0, 15),
    "late_n": ("numeric", 20, 10**9),
    "late_c": ("categorical", 30, 10**9),
}


def value(draw, kind: str, policy: str):
    """A value of the feature's kind, missing sometimes, of the other kind sometimes (lenient policy)."""
    roll = draw(st.integers(0, 19))
    if roll == 0:
        return draw(st.sampled_from([None, math.nan]))
    if roll == 1 and policy == "missing":  # the other kind: counted as missing
        return draw(st.sampled_from(["u", 1.5, math.inf] if kind == "categorical" else ["u", True]))
    if kind == "numeric":
        if roll == 2:
            return draw(st.sampled_from([math.inf, -math.inf]))  # missing in a numeric feature
        return draw(st.one_of(st.floats(-3, 3).map(lambda v: round(v, 1)), st.integers(-2, 2)))
    return draw(st.sampled_from(["u", "v", "w", "x", True]))


@st.composite
def streams(draw, max_rows=60):
    policy = draw(st.sampled_from(["raise", "missing"]), label="on_type_change")
    int_labels = draw(st.booleans(), label="int labels")
    n = draw(st.integers(1, max_rows), label="rows")
    late = draw(st.integers(1, max(1, n)), label="row of the late classes")
    rows = []
    for i in range(n):
        x = {}
        for name, (kind, first, last) in FEATURES.items():
            if first <= i <= last and draw(st.integers(0, 4)):  # absent sometimes
                x[name] = value(draw, kind, policy)
        pool = "abcd" if i >= late else "ab"
        y = draw(st.sampled_from(pool))
        y = "abcd".index(y) if int_labels else y
        w = draw(st.sampled_from([1.0, 1.0, 1.0, 0.0, 0.5, 2.0]))
        rows.append((x, y, w))
    # cut the rows into calls: learn_one, or learn_many on a DataFrame of a few rows
    ops, i = [], 0
    while i < n:
        size = draw(st.sampled_from([1, 1, 2, 3, 5, 8, 13]))
        many = size > 1 or draw(st.booleans())
        ops.append(("many" if many else "one", rows[i : i + size]))
        if draw(st.integers(0, 3)) == 0:
            ops.append(("predict", [rows[min(i, n - 1)], rows[draw(st.integers(0, n - 1))]]))
        i += size
    return policy, ops


def frame(rows):
    X = pd.DataFrame([x for x, _, _ in rows], index=range(len(rows)))
    return X, [y for _, y, _ in rows], [w for _, _, w in rows]


def records(X: pd.DataFrame) -> list:
    """The rows of ``X`` as dicts (NaN where a feature was absent); ``{}`` per row when it has no column."""
    return X.to_dict(orient="records") if X.shape[1] else [{} for _ in range(len(X))]


def labels_as(draw_container: int, ys: list):
    """The batch's labels in a container of some kind (all give the same model)."""
    if draw_container == 0:
        return pd.Series(ys)
    if draw_container == 1:
        return np.array(ys)
    return list(ys)


def assert_distribution(p: dict, classes: tuple):
    assert list(p) == list(classes)
    assert all(0.0 <= v <= 1.0 for v in p.values())
    assert math.fsum(p.values()) == pytest.approx(1.0, abs=1e-12)


def assert_same_model(a: WeightedNaiveBayes, b: WeightedNaiveBayes, probes: list):
    assert a.classes == b.classes and [type(c) for c in a.classes] == [type(c) for c in b.classes]
    ea, eb = a._engine, b._engine
    assert ea.n_seen == eb.n_seen and list(ea.registry.index) == list(eb.registry.index)
    assert [v.kind for v in ea.registry.variables] == [v.kind for v in eb.registry.variables]
    for name in ("counts", "seen", "next_rebuild"):
        assert getattr(ea.classes, name).tolist() == getattr(eb.classes, name).tolist(), name
    for name in ("count", "next_rebuild"):
        assert getattr(ea.registry, name).tolist() == getattr(eb.registry, name).tolist(), name
    assert a.weights == b.weights
    for x in probes:
        assert a.predict_proba_one(x) == b.predict_proba_one(x)  # bit for bit


def assert_encoding_is_a_function_of_the_raw_rows(model: WeightedNaiveBayes):
    """The history's encoded block is what encoding its raw rows with the current level 2 gives."""
    e = model._engine
    A, J, n = len(e.slots), len(e.classes), len(e.history)
    copy = pickle.loads(pickle.dumps(model))
    copy._engine.reencode_all()
    np.testing.assert_array_equal(copy._engine.history.log_lik[:n, :A, :J], e.history.log_lik[:n, :A, :J])


def note_event(text: str) -> None:
    """``hypothesis.event`` inside a hypothesis test (``run`` also serves plain tests)."""
    if currently_in_test_context():
        event(text)


def batch(rows, as_dicts: bool):
    """A batch of ``rows`` for ``learn_many``: a DataFrame, or the list of their dicts; and the
    dicts a ``learn_one`` loop takes for it (a DataFrame's rows hold NaN where a key was absent,
    a list keeps its dicts, absent keys included: ``absent`` says what those mean)."""
    X, ys, ws = frame(rows)
    if as_dicts:
        dicts = [x for x, _, _ in rows]
        return dicts, dicts, ys, ws
    return X, records(X), ys, ws


def run(optimizer, numeric, history_size, policy, ops, container_seed, absent=None):
    """Model ``a`` takes the ops as drawn; ``b`` takes every row by ``learn_one``: the same model.

    A batch goes to ``learn_many`` as a DataFrame or as a list of dicts (drawn by
    ``container_seed``), and ``b`` learns the dicts of that batch one by one: with keys absent
    from some dicts, the batch must read them as a loop does (``absent`` None or a number)."""
    params = dict(numeric=numeric, optimizer=optimizer, history_size=history_size, on_type_change=policy, seed=5, absent=absent)
    a, b = WeightedNaiveBayes(**params), WeightedNaiveBayes(**params)
    rng = np.random.default_rng(container_seed)
    for op, rows in ops:
        if op == "predict":
            for x, _, _ in rows:
                p = a.predict_proba_one(x)
                if a.classes:
                    assert_distribution(p, a.classes)
                else:
                    assert p == {}
                a._check()
            if a.classes:
                as_dicts = bool(rng.integers(0, 2))
                X, xs, _, _ = batch(rows, as_dicts)
                note_event(f"predict_proba_many of {'dicts' if as_dicts else 'a DataFrame'}")
                many = a.predict_proba_many(X)
                assert list(many.columns) == list(a.classes)
                np.testing.assert_allclose(many.sum(axis=1).to_numpy(), 1.0, rtol=0, atol=1e-12)
                # the same scores as row by row, up to the order of the additions: compared on the
                # scores (a density can reach ~1e12 in magnitude, where the softmax of two paths'
                # roundings may differ in the 4th digit)
                e = a._engine
                table, absent_keys = frames.read(X)
                scores = e.scores_frame(e.parser.frame(table, absent=absent_keys), len(xs))
                for i, x in enumerate(xs):
                    one = e.scores_one(e.parser.row(x))
                    np.testing.assert_allclose(scores[i], one, rtol=0, atol=1e-12 * (1.0 + np.abs(one).max()))
                a._check()
            continue
        if op == "one":
            (x, y, w), = rows
            a.learn_one(x, y, w)
            b.learn_one(x, y, w)
        else:
            as_dicts = bool(rng.integers(0, 2))
            X, xs, ys, ws = batch(rows, as_dicts)
            note_event(f"learn_many of {'dicts' if as_dicts else 'a DataFrame'}")
            weights_ = None if all(w == 1.0 for w in ws) else (ws if rng.random() < 0.5 else np.array(ws))
            a.learn_many(X, labels_as(int(rng.integers(0, 3)), ys), weights_)
            for x, y, w in zip(xs, ys, ws, strict=True):
                b.learn_one(x, y, w)
                b._check()
        a._check()
        b._check()
        assert_encoding_is_a_function_of_the_raw_rows(a)
        probes = [x for x, _, _ in rows]
        assert_same_model(a, b, probes)
        p = a.predict_proba_one(probes[-1])
        assert_distribution(p, a.classes)
        a._check()
    return a, b


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
