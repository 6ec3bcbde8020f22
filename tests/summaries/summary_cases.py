"""Configurations, streams and checks shared by the summaries contract and decay tests: one of each
summary kind and setting, Hypothesis streams of (value, class, weight), the four ways of feeding a
summary, the comparison of two tables, and a summary filled with a few values."""

from __future__ import annotations

import dataclasses
import math
import struct

import numpy as np
from hypothesis import strategies as st
from profiles import examples

from wnb_stream.summaries import Categorical, CPiD, Gaussian, GKClass, Summary, policy

numeric_values = st.one_of(
    st.integers(-6, 6).map(float),  # repeated values
    st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
    st.sampled_from([math.nan, math.inf, -math.inf, None]),
)


category_values = st.sampled_from(["a", "b", "c", "d", "e", 1, 1.0, 2, (1, "t"), None, math.nan])


weights = st.sampled_from([1.0, 1.0, 1.0, 0.0, 0.25, 0.5, 2.0, 3.0])  # dyadic: exact sums

CONFIGS = {
    "gk-eps0.01": lambda: GKClass(epsilon=0.01, buffer_size=16),
    "gk-eps0.1": lambda: GKClass(epsilon=0.1, buffer_size=7),
    "gk-eps0.3": lambda: GKClass(epsilon=0.3, buffer_size=1),
    "gk-quantiles": lambda: GKClass(quantiles=4, buffer_size=5),
    "gk-budget": lambda: GKClass(max_tuples=5, buffer_size=6),
    "cpid": lambda: CPiD(n_bins=8, warm_up=5),
    "cpid-step": lambda: CPiD(n_bins=5, warm_up=3, tail_split="step"),
    "gaussian": lambda: Gaussian(),
    "categorical-exact": lambda: Categorical(),
    "categorical-sketch": lambda: Categorical(max_values=3, top_k=2, epsilon=0.2, delta=0.1, seed=5),
}


NUMERIC = [name for name in CONFIGS if CONFIGS[name]().kind == "numeric"]


EXAMPLES = examples(30)  # per configuration and property (in CI): the file runs in well under a minute


LABEL_POOLS = [("x", "y", "z"), (0, 1, 2, 3), ("x", 0, (1, 2))]


@st.composite
def streams(draw, kind: str, max_size: int = 40):
    """Rows ``(x, y, w)`` of one kind of variable, with labels from one pool."""
    pool = LABEL_POOLS[draw(st.integers(0, len(LABEL_POOLS) - 1))]
    values = numeric_values if kind == "numeric" else category_values
    return draw(st.lists(st.tuples(values, st.sampled_from(pool), weights), max_size=max_size))


def batch(rows: list, kind: str, as_arrays: bool) -> tuple:
    """``(values, labels, weights)`` of ``rows`` as lists, or as the arrays a caller would build."""
    values, labels, w = [x for x, _, _ in rows], [y for _, y, _ in rows], [w for _, _, w in rows]
    if not as_arrays:
        return values, labels, w
    if kind == "numeric":
        values = np.array([math.nan if x is None else x for x in values], dtype=float)
    elif values and all(type(x) is str for x in values):
        values = np.array(values)  # a string array, as pandas or a CSV reader gives
    else:
        values = _objects(values)
    typed = {type(y) for y in labels}
    labels = np.array(labels) if len(typed) == 1 and typed <= {int, str} else _objects(labels)
    return values, labels, np.array(w)


def _objects(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):  # element by element: tuples stay one entry
        out[i] = item
    return out


def feed(summary: Summary, rows: list, how: str) -> None:
    kind = summary.kind
    if how == "loop":
        for x, y, w in rows:
            summary.update(x, y, w)
    else:
        summary.update_many(*batch(rows, kind, as_arrays=how == "arrays"))


def assert_same_table(a, b, moments_tolerance: float = 0.0) -> None:
    """Equal tables: the same class order and values (and their types), bit-identical arrays;
    a ``Moments`` table's means and variances within ``moments_tolerance`` relative to the scale
    of the data (0: bit-identical too)."""
    assert type(a) is type(b)
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, field.name
            if moments_tolerance and field.name in ("means", "variances"):
                scale = 1.0 + float(np.max(np.abs(a.means), initial=0.0) + np.sqrt(np.max(a.variances, initial=0.0)))
                atol = moments_tolerance * (scale if field.name == "means" else scale * scale)
                assert np.allclose(x, y, rtol=moments_tolerance, atol=atol), (field.name, x, y)
            else:
                assert x.tobytes() == y.tobytes(), (field.name, x, y)
        else:
            assert x == y and [type(v) for v in x] == [type(v) for v in y], field.name


def moments_rtol(summary: Summary) -> float:
    """The Gaussian's update_many and merge agree with its loop up to float rounding (Chan's
    combination against Welford's update); every other table is bit-identical."""
    return 1e-9 if isinstance(summary, Gaussian) else 0.0


def dumps(summary: Summary) -> bytes:
    """The whole state of a summary, caches included, as bytes to compare.

    Not its pickle: a pickle also records which attributes share one object (its memo), so two
    equal states built in different orders can pickle differently. Arrays count by dtype, shape
    and values, floats by ``repr`` (so −0.0 and 0.0 differ)."""
    return repr(_state(summary)).encode()


def _state(value, depth: int = 0):
    if depth > 50:
        raise RecursionError("summary state nested deeper than 50")
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_state(v, depth + 1) for v in value])
    if isinstance(value, dict):
        return ("dict", [(repr(k), _state(v, depth + 1)) for k, v in value.items()])
    fields = {}
    if hasattr(value, "__dict__"):
        fields.update(vars(value))
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                fields[name] = getattr(value, name)
    if fields:
        return (type(value).__qualname__, sorted((name, _state(v, depth + 1)) for name, v in fields.items()))
    if isinstance(value, struct.Struct):  # a cached packer: its format is its state
        return ("Struct", value.format)
    return (type(value).__qualname__, repr(value))


def _truth(rows: list, kind: str):
    """Per class: weight of the present values, weight of the missing ones; and the present rows."""
    present, missing, kept = {}, {}, []
    for x, y, w in rows:
        absent = policy.numeric_value(x) is None if kind == "numeric" else policy.is_missing_category(x)
        target = missing if absent else present
        target[y] = target.get(y, 0.0) + w
        if not absent:
            kept.append((x, y, w))
    return present, missing, kept


def _filled(name: str) -> Summary:
    summary = CONFIGS[name]()
    rng = np.random.default_rng(7)
    if summary.kind == "numeric":
        values = [float(v) for v in rng.integers(0, 9, size=23)] + [None, math.inf]
    else:
        values = [str(v) for v in rng.integers(0, 9, size=23)] + [None, "z"]
    for i, x in enumerate(values):  # not a multiple of any buffer size: GK holds pending values
        summary.update(x, ("p", "q")[i % 2], 1.0)
    return summary


def lay_out(segments: list, order) -> tuple:
    """The segments of ``(value, code, weight)`` rows laid out in one array each, in ``order``, as a
    history's entries are: ``(values, codes, weights, starts, ends)``, where segment ``t`` holds
    the rows ``starts[t]:ends[t]``."""
    values, codes, weights, starts, ends = [], [], [], [0] * len(segments), [0] * len(segments)
    for t in order:
        starts[t] = len(values)
        for value, code, weight in segments[t]:
            values.append(value)
            codes.append(code)
            weights.append(weight)
        ends[t] = len(values)
    return np.array(values, dtype=float), np.array(codes, dtype=np.intp), np.array(weights, dtype=float), starts, ends
