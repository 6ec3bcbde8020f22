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
