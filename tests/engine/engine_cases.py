"""Streams and checks shared by the engine tests: Hypothesis streams of learn and predict calls over
every kind of feature value, the runner that plays them on a model (checking its invariants), and
the comparison of two models on probes."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import event
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

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
    e.settle_encoding()  # (a round that left its step for later owes the block: written now)
    A, J, n = len(e.slots), len(e.classes), len(e.history)
    copy = pickle.loads(pickle.dumps(model))
    copy._engine.reencode_all()
    np.testing.assert_array_equal(copy._engine.history.log_lik[:n, :A, :J], e.history.log_lik[:n, :A, :J])


def note_event(text: str) -> None:
    """``hypothesis.event`` inside a hypothesis test (``run`` also serves plain tests)."""
    if currently_in_test_context():
        event(text)


def run(optimizer, numeric, history_size, policy, ops, container_seed, absent=None):
    """Model ``a`` takes the ops as drawn; ``b`` takes every row by ``learn_one``: the same model.

    A batch goes to ``learn_many`` as a DataFrame or as a list of dicts (drawn by
    ``container_seed``), and ``b`` learns the dicts of that batch one by one: with keys absent
    from some dicts, the batch must read them as a loop does (``absent`` None or a number)."""
    params = dict(numeric=numeric, optimizer=optimizer, history_size=history_size, on_type_change=policy, seed=5, absent=absent)
    a, b = WeightedNaiveBayes(**params), WeightedNaiveBayes(**params)
    rng = np.random.default_rng(container_seed)
    for op, rows in ops:
        if op == "predict":  # (b serves the same rows: a model that serves catches up, docs/algorithms/prediction.md)
            for x, _, _ in rows:
                p = a.predict_proba_one(x)
                assert b.predict_proba_one(x) == p
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
                b.predict_proba_many(X)
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
        assert b.predict_proba_one(probes[-1]) == p
        assert_distribution(p, a.classes)
        a._check()
    return a, b


def batch(rows, as_dicts: bool):
    """A batch of ``rows`` for ``learn_many``: a DataFrame, or the list of their dicts; and the
    dicts a ``learn_one`` loop takes for it (a DataFrame's rows hold NaN where a key was absent,
    a list keeps its dicts, absent keys included: ``absent`` says what those mean)."""
    X, ys, ws = frame(rows)
    if as_dicts:
        dicts = [x for x, _, _ in rows]
        return dicts, dicts, ys, ws
    return X, records(X), ys, ws
