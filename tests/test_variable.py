"""A variable's compiled locator agrees with its partition's own ``part_index``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wnb_stream import summaries
from wnb_stream.variable import NOWHERE, Variable


def _agrees(variable: Variable, probes) -> None:
    for value in probes:
        column = np.empty(1, dtype=float if variable.kind == "numeric" else object)
        column[0] = value
        expected = int(variable.model.part_index(column)[0])
        assert variable.locate(value) == (expected if expected >= 0 else NOWHERE), value


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-50, 50), st.integers(-5, 5).map(float), st.just(float("nan"))), min_size=1, max_size=300),
    seed=st.integers(0, 2**16),
)
def test_numeric_locator_matches_part_index(values, seed):
    rng = np.random.default_rng(seed)
    variable = Variable("x", "numeric", summaries.GKClass())
    for v in values:  # labels depend on the value, so MODL finds cuts
        y = "a" if (v == v and v < 0) ^ (rng.random() < 0.1) else "b"
        variable.summary.update(v, y)
    variable.rebuild(("a", "b"), selection_cost=0.0)
    probes = values + [-1e9, 1e9, float("nan"), None, float("inf")] + rng.uniform(-60, 60, 50).tolist()
    _agrees(variable, [None if p is None else p for p in probes])


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.one_of(st.sampled_from(list("abcdefgh")), st.none()), min_size=1, max_size=200))
def test_categorical_locator_matches_part_index(values):
    variable = Variable("c", "categorical", summaries.Categorical())
    for i, v in enumerate(values):
        variable.summary.update(v, "p" if v in ("a", "b", "c") else ("q" if i % 3 else "p"))
    variable.rebuild(("p", "q"), selection_cost=0.0)
    _agrees(variable, values + ["never seen", None, "a"])


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if type(a).__module__.startswith("wnb_stream"):
        names = [name for cls in type(a).__mro__ for name in getattr(cls, "__slots__", ())]
        state = lambda x: {**getattr(x, "__dict__", {}), **{n: getattr(x, n) for n in names if hasattr(x, n)}}  # noqa: E731
        return type(a) is type(b) and _same(state(a), state(b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _fed(kind_seed: tuple, values, labels) -> Variable:
    kind, prototype = kind_seed
    variable = Variable("v", kind, prototype.clone())
    for value, label in zip(values, labels):
        variable.summary.update(value, label)
    return variable


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(1, 400),
    missing=st.sampled_from([0.0, 0.05]),
    default=st.booleans(),
)
def test_rebuild_many_gives_each_variable_what_rebuild_gives(seed, n, missing, default):
    rng = np.random.default_rng(seed)
    classes = ("a", "b", "c")
    kinds = [
        ("numeric", summaries.GKClass()),
        ("numeric", summaries.GKClass()),
        ("numeric", summaries.CPiD()),
        ("numeric", summaries.Gaussian()),
        ("categorical", summaries.Categorical()),
    ]
    streams = []
    for kind, _ in kinds + kinds[:2]:
        labels = rng.choice(classes[: rng.integers(1, 4)], n).tolist()
        if kind == "numeric":
            values = (rng.normal(size=n) + np.array([classes.index(y) for y in labels]) * rng.random()).round(rng.integers(1, 4))
            values = [None if rng.random() < missing else float(v) for v in values]
        else:
            values = [None if rng.random() < missing else "xyzw"[int(rng.integers(4))] for _ in range(n)]
        streams.append((values, labels))
    spec = kinds + kinds[:2]
    one = [_fed(k, v, y) for k, (v, y) in zip(spec, streams)]
    many = [_fed(k, v, y) for k, (v, y) in zip(spec, streams)]
    option = (0.0, np.array([3.0, 400.0, 9.0])) if default else None
    for variable in one:
        variable.rebuild(classes, 2.5, default=option)
    Variable.rebuild_many(many, classes, 2.5, default=option)
    for a, b in zip(one, many):
        for name in Variable.__slots__:
            if name == "summary":
                continue
            assert _same(getattr(b, name), getattr(a, name)), name
        if b.density or b.model is None:
            continue  # (locators: binned variables only)
        _agrees(b, [None, float("nan"), -1e9, 1e9, 0.0, "x", "never"] if b.kind == "categorical" else [None, float("nan"), -1e9, 1e9, 0.0, 0.5])
