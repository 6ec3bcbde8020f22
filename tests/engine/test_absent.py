"""Absent features that hold a value (``WeightedNaiveBayes(absent=v)``, docs/algorithms/summaries.md#absent-features).

- a sparse dict and the same row spelled out densely (the value written where the key was
  absent) give the same model, bit for bit, by ``learn_one`` and by ``learn_many``;
- the summaries never see the value, and level 2 sees it as a point mass of the class counts:
  the tables equal those of a model fed the values explicitly with absent features missing;
- a row's scores (the default terms folded into one constant) equal the plain sum over every
  variable, and the history's encoding holds ℓ(default) where a feature is absent;
- every invariant of the random-stream test holds with a default value;
- save and load, the predictor, merge, and parameter errors;
- the sparse layout of the history (``SparseHistory``) gives the model of the dense one, bit for
  bit, through learning, forgetting and a merge;
- a rebuild proven to give the null model again is skipped, and changes nothing the model
  computes: the same predictions, weights, schedule and summaries as rebuilding it.
"""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from engine_cases import NUMERIC, OPTIMIZERS, assert_encoding_is_a_function_of_the_raw_rows, assert_same_model, run, streams
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import WeightedNaiveBayes, io, summaries, weights
from wnb_stream.engine.history import History
from wnb_stream.engine.variable import Variable

NAMES = [f"f{k}" for k in range(6)]


@st.composite
def sparse_streams(draw, max_rows=80):
    """Rows of mostly-zero counts: (sparse dict, dense dict, label). Features 0 and 1 carry the class."""
    n = draw(st.integers(2, max_rows))
    rows = []
    for _ in range(n):
        y = draw(st.sampled_from("ab"))
        dense = {}
        for k, name in enumerate(NAMES):
            roll = draw(st.integers(0, 9))
            hot = k < 2 and y == "a"
            if roll == 0:
                dense[name] = math.nan  # a missing value stays missing
            elif roll <= (5 if hot else 2):
                dense[name] = float(draw(st.integers(1, 3))) * (-1 if roll == 1 and k == 5 else 1)
            else:
                dense[name] = 0.0
        # a categorical feature in every row (one absent from a dict is not the same as a
        # DataFrame's missing cell; categorical features never take the default value)
        dense["c"] = draw(st.sampled_from(["u", "v", None]))
        sparse = {name: v for name, v in dense.items() if v != 0.0}
        rows.append((sparse, dense, y))
    return rows


def model(numeric=None, **params):
    return WeightedNaiveBayes(numeric=numeric, absent=0.0, history_size=30, seed=3, **params)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=sparse_streams(), numeric=st.sampled_from(list(NUMERIC)), name=st.sampled_from(list(OPTIMIZERS)), chunk=st.sampled_from([2, 7, 16]))
def test_a_sparse_row_and_its_dense_spelling_give_the_same_model(rows, numeric, name, chunk):
    # (three spellings compared on one state: no catch-up between the comparisons; tests/test_catch_up.py)
    sparse, dense, many = (model(NUMERIC[numeric](), optimizer=OPTIMIZERS[name](5), catch_up=False) for _ in range(3))
    for x, full, y in rows:
        assert sparse.predict_proba_one(x) == dense.predict_proba_one(full)  # bit for bit
        sparse.learn_one(x, y)
        dense.learn_one(full, y)
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        many.learn_many(pd.DataFrame([full for _, full, _ in part]), pd.Series([y for _, _, y in part]))
    probes = [x for x, _, _ in rows[-5:]] + [{}]
    assert_same_model(sparse, dense, probes)
    assert_same_model(sparse, many, probes)
    for m in (sparse, dense, many):
        m._check()
    assert_encoding_is_a_function_of_the_raw_rows(many)


def _same_rows(a: WeightedNaiveBayes, b: WeightedNaiveBayes) -> None:
    """The histories of ``a`` and ``b`` hold the same rows: each variable's presence and its values
    where present (the dense layout of a chunk may hold the default in an absent cell)."""
    ha, hb, registry = a._engine.history, b._engine.history, a._engine.registry
    assert (ha.size, ha.cursor, ha.stored) == (hb.size, hb.cursor, hb.stored)
    for k, variable in enumerate(registry.variables):
        numeric = variable.kind == "numeric"
        va, pa = ha.column(ha.filled(), k, int(registry.column[k]), numeric)
        vb, pb = hb.column(hb.filled(), k, int(registry.column[k]), numeric)
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_array_equal(va[pa], vb[pb])


def _dense_layout(m: WeightedNaiveBayes) -> WeightedNaiveBayes:
    """``m`` with its history in the dense layout (a column per variable) instead of entries."""
    e = m._engine
    e.history = History(e.history.capacity, encoded=not e.collect)
    return m


@settings(max_examples=examples(18), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=sparse_streams(), numeric=st.sampled_from(list(NUMERIC)), name=st.sampled_from(list(OPTIMIZERS)),
       chunk=st.sampled_from([3, 11]), cut=st.integers(0, 80), keep=st.integers(0, 40))  # fmt: skip
def test_the_sparse_layout_gives_the_model_of_the_dense_one(rows, numeric, name, chunk, cut, keep):
    """Learning row by row and in chunks, forgetting and a merge: a model whose history keeps
    entries and the same model keeping a column per variable agree bit for bit (a memory budget
    cuts the two windows at different rows, as their memory differs: ``test_budget.py``)."""
    params = dict(optimizer=OPTIMIZERS[name](5))
    pair = [model(NUMERIC[numeric](), **params), _dense_layout(model(NUMERIC[numeric](), **params))]
    others = [model(NUMERIC[numeric](), **params), _dense_layout(model(NUMERIC[numeric](), **params))]
    assert pair[0]._engine.history.sparse and not pair[1]._engine.history.sparse
    cut = min(cut, len(rows))
    for m, other in zip(pair, others):
        for x, _, y in rows[:cut]:
            m.learn_one(x, y)
        m._engine.forget(keep)
        for start in range(cut, len(rows), chunk):
            part = rows[start : start + chunk]
            m.learn_many(pd.DataFrame([full for _, full, _ in part]), pd.Series([y for _, _, y in part]))
        for x, _, y in rows[::2]:
            other.learn_one(x, y)
    probes = [x for x, _, _ in rows[-5:]] + [{}]
    assert_same_model(*pair, probes)
    _same_rows(*pair)
    for m, other in zip(pair, others):
        m.merge(other)
        m._check()
    assert_same_model(*pair, probes)
    assert_encoding_is_a_function_of_the_raw_rows(pair[0])


@pytest.mark.slow  # end to end, seconds even in the dev profile: CI runs it (--run-slow)
@pytest.mark.parametrize("numeric", ["GKClass", "CPiD"])
def test_level_2_sees_the_default_as_a_point_mass_of_the_class_counts(numeric):
    """The summaries of a default-valued model never hold the value; its tables, with the point
    added, equal those of a model fed every value explicitly (absent = missing)."""
    rng = np.random.default_rng(0)
    spelled = WeightedNaiveBayes(numeric=NUMERIC[numeric](), seed=1)
    sparse = WeightedNaiveBayes(numeric=NUMERIC[numeric](), absent=0.0, seed=1)
    for _ in range(300):
        y = int(rng.integers(0, 2))
        full = {"a": float(rng.integers(0, 3) * (rng.random() < (0.7 if y else 0.2))), "b": float(rng.integers(0, 4))}
        spelled.learn_one(full, y)
        sparse.learn_one({k: v for k, v in full.items() if v != 0.0}, y)
    e1, e2 = spelled._engine, sparse._engine
    e1._rebuild(np.arange(2))
    e2._rebuild(np.arange(2))
    for k in range(2):
        summary = e2.registry.variables[k].summary
        assert 0.0 not in summary.table().upper_bounds  # the value itself is never summarised
        v1, v2 = e1.registry.variables[k], e2.registry.variables[k]
        np.testing.assert_array_equal(v1.model.counts, v2.model.counts)  # the same partition of the rows
        if numeric == "GKClass":  # exact on a few distinct values: the same tables
            np.testing.assert_array_equal(v1.log_prob, v2.log_prob)
            assert v1.cuts == v2.cuts and v1.level == v2.level
        # (CPiD splits a run of equal values into a cascade of narrow bins; the point mass is one
        # bin, so its MODL cost counts fewer elementary bins: a higher level, the same partition)
    assert e1.registry.variables[0].level > 0  # (the test means something: "a" carries the class)


def test_a_gaussian_variable_takes_the_default_into_its_moments():
    rng = np.random.default_rng(1)
    spelled = WeightedNaiveBayes(numeric=summaries.Gaussian(), seed=1)
    sparse = WeightedNaiveBayes(numeric=summaries.Gaussian(), absent=0.0, seed=1)
    for _ in range(200):
        y = int(rng.integers(0, 2))
        full = {"a": float(rng.normal(2.0 * y, 1.0)) * (rng.random() < 0.6), "b": float(rng.normal())}
        spelled.learn_one(full, y)
        sparse.learn_one({k: v for k, v in full.items() if v != 0.0}, y)
    for e in (spelled._engine, sparse._engine):
        e._rebuild(np.arange(2))
    for k in range(2):
        d1, d2 = (e.registry.variables[k]._density for e in (spelled._engine, sparse._engine))
        np.testing.assert_allclose(d2.means, d1.means, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(d2.variances, d1.variances, rtol=1e-9)


@pytest.mark.slow  # end to end, seconds even in the dev profile: CI runs it (--run-slow)
def test_the_folded_scores_are_the_sum_over_every_variable():
    """Scores = bias + Σ_k w_kj ℓ_kj(x_k), with ℓ_kj(default) for the absent ones, computed
    variable by variable (no fold); and the history's encoded rows hold ℓ(default) where absent."""
    rng = np.random.default_rng(2)
    m = WeightedNaiveBayes(absent=0.0, optimizer=weights.Graphical(), seed=1)  # per-class coefficients
    rows = []
    for _ in range(400):
        y = int(rng.integers(0, 3))
        x = {f"f{k}": float(rng.integers(1, 4)) for k in range(8) if rng.random() < (0.5 if k == y else 0.15)}
        x["n"] = float(rng.normal(y, 1.0))
        m.learn_one(x, y)
        rows.append(x)
    e = m._engine
    e.refresh()
    for x in rows[-20:] + [{}, {"f1": math.nan}]:
        expected = e.lookup.bias.copy()
        for k, variable in enumerate(e.registry.variables):
            value = x.get(variable.name, 0.0)
            ll = variable.log_lik_one(None if isinstance(value, float) and math.isnan(value) else value)
            if ll is not None:
                expected[: len(ll)] += e.lookup.coef[k, : len(ll)] * ll
        np.testing.assert_allclose(e.scores_one(e.parser.row(x)), expected, rtol=0, atol=1e-9)
    h, J = e.history, len(e.classes)
    newest = e.encoding([h.newest()])[0]  # (K, J)
    for k, variable in enumerate(e.registry.variables):
        value = rows[-1].get(variable.name, 0.0)
        np.testing.assert_allclose(newest[k, :J], variable.log_lik_one(value), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(numeric=st.sampled_from(list(NUMERIC)), history_size=st.integers(7, 40), stream=streams(), container_seed=st.integers(0, 2**16))
def test_random_streams_keep_every_invariant_with_a_default_value(name, numeric, history_size, stream, container_seed):
    policy, ops = stream
    run(OPTIMIZERS[name](5), NUMERIC[numeric](), history_size, policy, ops, container_seed, absent=0.0)


def test_save_load_predictor_and_merge_keep_the_default():
    rng = np.random.default_rng(4)
    data = []
    for _ in range(600):
        y = int(rng.integers(0, 2))
        data.append(({f"w{k}": 1.0 for k in range(30) if rng.random() < (0.4 if k < 3 and y else 0.1)}, y))
    a, b = WeightedNaiveBayes(absent=0, seed=2), WeightedNaiveBayes(absent=0, seed=2)
    for i, (x, y) in enumerate(data):
        (a if i % 2 else b).learn_one(x, y)
    predictor = a.predictor()  # (a predictor is for serving: the model catches up first)
    loaded = io.loads(io.dumps(a))
    assert loaded.absent == 0
    served = io.loads(io.dumps(predictor))
    for x, _ in data[:50]:
        assert loaded.predict_proba_one(x) == a.predict_proba_one(x)
        assert predictor.predict_proba_one(x) == a.predict_proba_one(x) == served.predict_proba_one(x)
    X = pd.DataFrame([{f"w{k}": x.get(f"w{k}", 0.0) for k in range(30)} for x, _ in data[:50]])
    np.testing.assert_allclose(predictor.predict_proba_many(X).to_numpy(), a.predict_proba_many(X).to_numpy(), rtol=0, atol=1e-12)
    a.merge(b)
    a._check()
    assert io.loads(io.dumps(a)).predict_proba_one(data[0][0]) == a.predict_proba_one(data[0][0])
    # rows learned in a batch: the cells holding the default are absent, not values (a model so
    # trained saves and loads)
    X = pd.DataFrame([{f"w{k}": x.get(f"w{k}", 0.0) for k in range(30)} for x, _ in data[:100]])
    b.learn_many(X, pd.Series([y for _, y in data[:100]]))
    assert io.loads(io.dumps(b)).predict_proba_one(data[0][0]) == b.predict_proba_one(data[0][0])
    accuracy = np.mean([a.predict_one(x) == y for x, y in data])
    assert accuracy > 0.75
    with pytest.raises(ValueError, match="same parameters|absent"):
        a.merge(WeightedNaiveBayes(seed=2))


@pytest.mark.parametrize("bad", [math.nan, math.inf, "0", True, [0]])
def test_an_unusable_default_value_is_refused_naming_absent(bad):
    with pytest.raises(ValueError, match="absent"):
        WeightedNaiveBayes(absent=bad)


def test_absent_features_as_missing_cannot_learn_what_presence_tells():
    """Why the switch exists: on word-count rows, presence carries the class only when absence
    means zero."""
    rng = np.random.default_rng(5)
    hits = {None: 0, 0.0: 0}
    models = {absent: WeightedNaiveBayes(absent=absent, seed=1) for absent in hits}
    for i in range(2000):
        y = int(rng.integers(0, 2))
        x = {f"w{k}": float(rng.integers(1, 3)) for k in range(20) if rng.random() < (0.35 if k < 4 and y else 0.1)}
        for absent, m in models.items():
            if i >= 200:
                hits[absent] += m.predict_one(x) == y
            m.learn_one(x, y)
    assert hits[0.0] / 1800 > 0.7 > hits[None] / 1800 + 0.05


def test_debug_one_shows_the_absent_features_terms_and_its_lines_add_up():
    rng = np.random.default_rng(6)
    model = WeightedNaiveBayes(absent=0.0, seed=1)
    for _ in range(300):
        y = int(rng.integers(0, 2))
        model.learn_one({f"w{k}": 1.0 for k in range(6) if rng.random() < (0.6 if k < 2 and y else 0.15)}, y)
    x = {"w0": 1.0, "w4": 1.0}
    text = model.debug_one(x)
    assert "4 absent (= 0)" in text
    lines = text.splitlines()
    terms = np.array([[float(v) for v in line.split()[-2:]] for line in lines[1:-1]])
    probability = np.array([float(v) for v in lines[-1].split()[-2:]])
    scores = terms.sum(axis=0)
    np.testing.assert_allclose(np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum(), probability, atol=2e-4)
    assert [float(v) for v in lines[-1].split()[-2:]] == [round(p, 4) for p in model.predict_proba_one(x).values()]


def _word_counts(n: int, K: int, seed: int):
    """Rows of a few word counts among ``K`` (Zipf rates, a long tail of rare words); words 0 to 3 carry the class."""
    rng = np.random.default_rng(seed)
    rates = np.minimum(2.0 / np.arange(1, K + 1), 0.5)
    for _ in range(n):
        y = int(rng.integers(0, 2))
        on = rng.random(K) < rates
        on[:4] = rng.random(4) < (0.6 if y else 0.15)
        yield {f"w{k}": float(1 + rng.poisson(0.5)) for k in np.flatnonzero(on).tolist()}, y


def _rebuild_all(variables, n_classes, selection_cost, default):
    return np.zeros(len(variables), dtype=bool)


def _same_summaries(a: WeightedNaiveBayes, b: WeightedNaiveBayes) -> None:
    for va, vb in zip(a._engine.registry.variables, b._engine.registry.variables):
        sa, sb = va.summary, vb.summary
        assert sa.classes == sb.classes and list(sa._buffer_values) == list(sb._buffer_values)
        for name in ("_values", "_g", "_delta", "_at_value", "_counts", "_missing"):
            np.testing.assert_array_equal(getattr(sa, name), getattr(sb, name))


@pytest.mark.parametrize("name, params, weighted", [("VNS", {}, False), ("Uniform", {}, False), ("VNS", {"half_life": 256}, True)])
def test_a_rebuild_proven_null_is_skipped_and_changes_nothing(name, params, weighted):
    """``Variable.null_proven`` skips most rebuilds of a stream of rare words; a model that rebuilds
    every one of them (the proof switched off) predicts the same, bit for bit, row after row, and
    ends with the same weights, schedule and summaries, also with fractional sample weights, a
    fading past and a forgetting in the middle. Only the skipped partitions' counts and costs are
    those of their last rebuild, and rare words never rebuilt hold no partition."""
    rows = list(_word_counts(520 if weighted else 400, 300, 1))
    make = lambda: WeightedNaiveBayes(absent=0.0, seed=2, optimizer=OPTIMIZERS[name](5), **params)  # noqa: E731
    skipping, full = make(), make()
    proofs = []
    proven = Variable.null_proven

    def counted(*args):
        result = proven(*args)
        proofs.append(int(result.sum()))
        return result

    with mock.patch.object(Variable, "null_proven", staticmethod(counted)):
        for i, (x, y) in enumerate(rows):
            w = (0.5, 1.0, 2.5)[i % 3] if weighted else 1.0
            p = skipping.predict_proba_one(x)
            skipping.learn_one(x, y, w)
            if weighted and i == 300:
                skipping._engine.forget(100)
            with mock.patch.object(Variable, "null_proven", staticmethod(_rebuild_all)):
                assert full.predict_proba_one(x) == p  # bit for bit
                full.learn_one(x, y, w)
                if weighted and i == 300:
                    full._engine.forget(100)
    assert sum(proofs) > 1000  # (the test means something: most rebuilds were skipped)
    assert_same_model(skipping, full, [x for x, _ in rows[-20:]] + [{}])
    _same_summaries(skipping, full)
    assert [v.flat for v in skipping._engine.registry.variables] == [v.flat for v in full._engine.registry.variables]
    never = [v for v in skipping._engine.registry.variables if v.model is None and v.summary.n > 0]
    assert never and skipping.memory_usage() < full.memory_usage()  # rare words never built: no partition
    for m in (skipping, full):
        m._check()
    assert_encoding_is_a_function_of_the_raw_rows(skipping)
    restored = io.loads(io.dumps(skipping))  # (a skipped partition, and no partition, are valid)
    predictor = skipping.predictor()
    for x, _ in rows[:20]:
        assert restored.predict_proba_one(x) == predictor.predict_proba_one(x) == skipping.predict_proba_one(x)


@pytest.mark.parametrize("name, absent, many", [("VNS", 0.0, False), ("Uniform", 0.0, False), ("VNS", None, False), ("VNS", 0.0, True)])
def test_new_variables_take_their_coefficients_alone_as_the_whole_take_gives_them(name, absent, many):
    """Between two changes of the learner, a refresh that finds only new variables gives them
    the learner's outside weight, O(new) (``Lookup.take_new_coefficients``), instead of taking
    the learner's ``(K, J)`` coefficients again: a model that always takes them whole predicts
    the same, bit for bit, row after row, and ends the same. With absent features at 0 or
    missing, one row at a time or in chunks."""
    from wnb_stream.engine.lookup import Lookup

    rows = list(_word_counts(300, 400, 3))
    make = lambda: WeightedNaiveBayes(absent=absent, seed=4, optimizer=OPTIMIZERS[name](5))  # noqa: E731
    alone, whole = make(), make()
    taken = []
    take_new = Lookup.take_new_coefficients

    def counted(self, outside):
        taken.append(len(self.offsets) - len(self.coef))
        take_new(self, outside)

    never = property(lambda self: False, lambda self, value: None)  # (the whole take, always)
    chunks = [rows[i : i + 7] for i in range(0, len(rows), 7)] if many else [[row] for row in rows]
    for chunk in chunks:
        X = pd.DataFrame([x for x, _ in chunk]) if many else None
        with mock.patch.object(Lookup, "take_new_coefficients", counted):
            p = alone.predict_proba_many(X) if many else alone.predict_proba_one(chunk[0][0])
            alone.learn_many(X, pd.Series([y for _, y in chunk])) if many else alone.learn_one(*chunk[0])
        with mock.patch.object(Lookup, "grown_only", never):
            q = whole.predict_proba_many(X) if many else whole.predict_proba_one(chunk[0][0])
            whole.learn_many(X, pd.Series([y for _, y in chunk])) if many else whole.learn_one(*chunk[0])
        if many:
            pd.testing.assert_frame_equal(p, q)
        else:
            assert p == q  # bit for bit
    if not many:  # (the test means something: the O(new) path served; a chunk's refresh takes the whole)
        assert len(taken) > 20 and sum(taken) > 100
    assert_same_model(alone, whole, [x for x, _ in rows[-20:]] + [{}])
