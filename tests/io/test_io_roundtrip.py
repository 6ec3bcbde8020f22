"""Every component record round-trips: same state bit for bit, and the copy keeps learning as the
original does (same arrays after a further stream, a merge, more optimisation steps)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from io_cases import (
    context,
    feed,
    learner_cases,
    learner_rows,
    more_rows,
    other_cases,
    summary_cases,
    train,
)
from profiles import examples

from wnb_stream import io
from wnb_stream.modl.partition import Groups, Intervals
from wnb_stream.summaries import ClassIndex
from wnb_stream.summaries.gaussian import GaussianDensity
from wnb_stream.summaries.sketch import CountMinSketch, SpaceSaving


def copy_of(obj):
    """The object a saved file of ``obj`` loads to (through the bytes, compressed)."""
    return io.loads(io.dumps(obj))


def record_text(obj) -> str:
    return json.dumps(io.to_record(obj), sort_keys=True)


def same(a, b) -> bool:
    """Equal values of equal types; arrays equal bit for bit (dtype, shape, bytes)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and (a.tobytes() == b.tobytes() if a.dtype != object else all(same(x, y) for x, y in zip(a.ravel(), b.ravel())))
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def assert_same_summary(a, b) -> None:
    assert record_text(a) == record_text(b)
    assert same(a.table(), b.table())  # Bins, Categories or Moments: every array bit for bit
    assert same(a.n, b.n) and a.classes == b.classes
    a._check()
    b._check()
    if getattr(a, "mode", None) == "sketch":  # the heavy hitters' cells are rebuilt from the sketch
        assert {v: s.cells for v, s in a._heavy._slots.items()} == {v: s.cells for v, s in b._heavy._slots.items()}
    if hasattr(a, "quantile"):
        assert same(a.quantile(0.3), b.quantile(0.3)) and same(a.rank(1.0), b.rank(1.0))


@pytest.mark.parametrize("name, make", summary_cases(), ids=[name for name, _ in summary_cases()])
def test_summary_round_trip_keeps_learning_identically(name, make):
    original = make()
    copy = copy_of(original)
    assert type(copy) is type(original) and copy is not original
    assert repr(copy) == repr(original)  # same parameters
    assert_same_summary(original, copy)
    for step, one_by_one in enumerate((True, False, True)):
        rows = more_rows(original, np.random.default_rng(100 + step))
        feed(original, rows, one_by_one)
        feed(copy, rows, one_by_one)
        assert_same_summary(original, copy)
    # both absorb the same third summary
    third = make()
    feed(third, more_rows(third, np.random.default_rng(200)))
    original.merge(third)
    copy.merge(copy_of(third))
    assert_same_summary(original, copy)


def test_a_summary_copy_is_independent_of_the_original():
    name, make = summary_cases()[1]  # gk-1000
    original = make()
    copy = copy_of(original)
    before = record_text(original)
    feed(copy, more_rows(copy, np.random.default_rng(3)))
    assert record_text(original) == before != record_text(copy)


# ------------------------------------------------------------------------------------------------
# Class index, sketches, partitions, density


def assert_same_other(a, b) -> None:
    assert record_text(a) == record_text(b)
    if isinstance(a, ClassIndex):
        assert same(a.labels, b.labels) and a.position == b.position
    elif isinstance(a, CountMinSketch):
        assert same(a._table, b._table) and (a.width, a.depth, a.seed) == (b.width, b.depth, b.seed)
        assert all(a.cells(v) == b.cells(v) for v in ("x", 3, (1, "t")))
    elif isinstance(a, SpaceSaving):
        assert a._heap == b._heap and a._sequence == b._sequence
        for (va, sa), (vb, sb) in zip(a._slots.items(), b._slots.items()):
            width = max(len(sa.class_counts), len(sb.class_counts))
            assert same(va, vb) and (sa.count, sa.error, sa.cells) == (sb.count, sb.error, sb.cells)
            assert np.array_equal(np.pad(sa.class_counts, (0, width - len(sa.class_counts))), np.pad(sb.class_counts, (0, width - len(sb.class_counts))))
    elif isinstance(a, Intervals | Groups):
        for name in vars(a):  # the fields and every cache the constructor rebuilds
            assert same(getattr(a, name), getattr(b, name)), name
        a._check()
        b._check()
    elif isinstance(a, GaussianDensity):
        for name in GaussianDensity.__slots__:
            assert same(getattr(a, name), getattr(b, name)), name
    else:  # pragma: no cover
        raise AssertionError(type(a))


PROBES = np.array([None, float("nan"), -1e9, 0.0, 0.5, 1.0, 2.0, 3.5, 1e9, "v1", "v3", 2, (3, "t"), "unseen"], dtype=object)


@pytest.mark.parametrize("name, make", other_cases(), ids=[name for name, _ in other_cases()])
def test_component_round_trip(name, make):
    original = make()
    copy = copy_of(original)
    assert type(copy) is type(original)
    assert_same_other(original, copy)
    if isinstance(original, Intervals):
        numeric = np.array([np.nan, -1e9, 0.0, 0.5, 1.0, 2.0, 3.5, 1e9])
        assert same(original.part_index(numeric), copy.part_index(numeric))
        assert all(same(original.log_likelihood_one(x), copy.log_likelihood_one(x)) for x in numeric.tolist() + [None])
    elif isinstance(original, Groups):
        assert same(original.part_index(PROBES), copy.part_index(PROBES))
        assert all(same(original.log_likelihood_one(x), copy.log_likelihood_one(x)) for x in PROBES.tolist())
    elif isinstance(original, GaussianDensity):
        values = [None, -3.0, 0.0, 1.5, 2.0, 1e200]
        assert same(original.log_likelihood(values), copy.log_likelihood(values))
        assert all(same(original.log_likelihood_one(x), copy.log_likelihood_one(x)) for x in values)
    elif isinstance(original, CountMinSketch | SpaceSaving):  # keeps counting identically
        rng = np.random.default_rng(5)
        for value, j in zip(rng.integers(0, 60, 300).tolist(), rng.integers(0, 4, 300).tolist()):
            for target in (original, copy):
                if isinstance(target, CountMinSketch):
                    target.grow(4)
                    target.add(target.cells(value), j, 0.5)
                else:
                    target.update(value, 0.5, j)
        assert_same_other(original, copy)


# ------------------------------------------------------------------------------------------------
# Learners


def assert_same_learner(a, b) -> None:
    assert record_text(a) == record_text(b)
    assert same(a.weights, b.weights)
    a._check()
    b._check()
    batch = learner_rows(np.random.default_rng(9), 20, k=len(a.weights) or 6, j=3)
    k, j = batch.log_lik.shape[1:]
    assert same(a.coefficients(k, j), b.coefficients(k, j))


def sizes(model) -> tuple[int, int]:
    """(K, J) the learner is sized for."""
    if hasattr(model, "_w"):
        return model._w.shape
    return model._n_variables, model._n_classes


@pytest.mark.parametrize("name, make", learner_cases(), ids=[name for name, _ in learner_cases()])
def test_learner_round_trip_keeps_learning_identically(name, make):
    original = make()
    copy = copy_of(original)
    assert type(copy) is type(original) and repr(copy) == repr(original)
    assert_same_learner(original, copy)
    if name.endswith("-unset"):
        for model in (original, copy):
            model.reset(6, 2, seed=3)
    k, j = sizes(original)
    for model in (original, copy):  # same further stream, with a variable switched off
        train(model, np.random.default_rng(77), 25, k=k, j=j, inactive=(1,))
    assert_same_learner(original, copy)
    if hasattr(original, "_rng"):  # the generator continues the same sequence
        assert same(original._rng.random(4), copy._rng.random(4))
    batch = learner_rows(np.random.default_rng(8), 10, k=k)
    assert same(original.scores(batch.log_lik, batch.log_prior), copy.scores(batch.log_lik, batch.log_prior))


def test_a_learner_copy_does_not_share_arrays_with_the_original():
    _, make = learner_cases()[2]  # pgdmb
    original = make()
    copy = copy_of(original)
    before = record_text(original)
    copy.learn(learner_rows(np.random.default_rng(1), 40), learner_rows(np.random.default_rng(2), 100), context(6))
    assert record_text(original) == before


EXTREME = [0.0, -0.0, 2.0, -2.0, 1e-300, 2.94, 1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(EXTREME), st.sampled_from("abc"), st.sampled_from([5e-324, 0.5, 1.0, 2.0, 1000.0])),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
)
def test_a_gaussian_fed_extreme_values_saves_and_loads(stream, batched):
    """Values at the ends of the float range with weights from 5e-324 to 1000: the file loads back
    (its pooled moments agree with the classes whatever the rounding) to the same tables."""
    from wnb_stream.summaries import Gaussian

    summary = Gaussian()
    if batched:
        values, labels, weights = zip(*stream)
        summary.update_many(list(values), list(labels), list(weights))
    else:
        for x, y, w in stream:
            summary.update(x, y, w)
    summary._check()
    copy = copy_of(summary)
    copy._check()
    assert same(copy.table().means, summary.table().means) and same(copy.table().weights, summary.table().weights)
    assert copy.pooled == summary.pooled
