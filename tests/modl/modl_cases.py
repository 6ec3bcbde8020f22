"""Tables, oracles and checks shared by the MODL tests: small Bins tables, the brute-force cost of a
partition, every split of a few atoms, messy tables of special floats, and the comparison of two
rebuild outcomes bit for bit."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st

from wnb_stream.summaries import Bins


def bins(counts, missing=None, bounds=None, classes=None):
    counts = np.asarray(counts, dtype=float).reshape(len(counts), -1)
    n_bins, n_classes = counts.shape
    return Bins(
        upper_bounds=np.arange(1.0, n_bins + 1.0) if bounds is None else bounds,
        counts=counts,
        classes=tuple(range(n_classes)) if classes is None else classes,
        missing=np.zeros(n_classes) if missing is None else missing,
    )


def oracle_cost(parts, n_bins, criterion="bins", selection_cost=0.0):
    """c(M) of a list of part count vectors, with math only (docs/algorithms/modl.md#discretization)."""
    n_parts = len(parts)
    total = sum(sum(p) for p in parts)
    if criterion == "bins":
        prior = math.log(2)
        if n_parts > 1:
            prior += (
                selection_cost
                + _bounded_code(n_parts - 1, n_bins - 1)
                + (n_parts - 1) * math.log(n_bins - 1)
                - math.lgamma(n_parts)
            )
    else:
        prior = math.log(total) + math.lgamma(total + n_parts) - math.lgamma(n_parts) - math.lgamma(total + 1)
        if n_parts > 1:
            prior += selection_cost
    return prior + sum(_part(p) for p in parts)


def splits(atoms):
    """Every partition of a sequence of atoms (count vectors) into runs: lists of the runs' counts."""
    n = len(atoms)
    for mask in itertools.product([False, True], repeat=n - 1):
        parts, current = [], [0.0] * len(atoms[0])
        for i, atom in enumerate(atoms):
            current = [c + a for c, a in zip(current, atom)]
            if i == n - 1 or mask[i]:
                parts.append(current)
                current = [0.0] * len(atoms[0])
        yield parts


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and a.tobytes() == b.tobytes()
        and a.flags.writeable == b.flags.writeable
        and a.flags.c_contiguous == b.flags.c_contiguous
    )


def _same_value(x, y) -> bool:
    if isinstance(x, np.ndarray):
        return isinstance(y, np.ndarray) and _same_array(x, y)
    if isinstance(x, tuple) and x and isinstance(x[0], np.ndarray):
        return isinstance(y, tuple) and len(x) == len(y) and all(_same_array(a, b) for a, b in zip(x, y))
    return type(x) is type(y) and (x == y or (x != x and y != y))


def _assert_same_state(result, expected):
    """Same attributes, in the same order, with equal values bit for bit."""
    assert list(vars(result)) == list(vars(expected))
    for name, value in vars(expected).items():
        assert _same_value(vars(result)[name], value), name


# (no huge finite counts: their costs overflow, where the reference and the kernels part ways by design)
_SPECIALS = [0.0, -0.0, 5e-324, 1.0, 2.5, math.inf, -1.0, math.nan]


@st.composite
def messy_tables(draw):
    """Bins with equal, decreasing or NaN bounds, and counts with zeros, −0.0, fractions, inf, NaN."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_bins = draw(st.integers(0, 40))
    n_classes = draw(st.integers(0, 11))
    bounds = np.sort(rng.integers(-5, 5 + 2 * n_bins, n_bins)).astype(float)
    if draw(st.booleans()):
        bounds = np.unique(bounds) if n_bins else bounds  # strictly increasing: the fast path
        n_bins = len(bounds)
    counts = rng.integers(0, 6, (n_bins, n_classes)).astype(float)
    counts[rng.random((n_bins, n_classes)) < draw(st.sampled_from([0.0, 0.3, 0.8]))] = 0.0
    if n_classes and draw(st.booleans()):
        counts[:, rng.integers(n_classes)] = 0.0  # a class never seen by this variable
    if draw(st.booleans()):
        counts = counts + rng.random(counts.shape).round(1)  # fractional counts
    missing = np.zeros(n_classes)
    if n_classes and draw(st.booleans()):
        missing = rng.integers(0, 4, n_classes).astype(float)
    # the odd value: bad (negative, inf, NaN), or on the edge of the checks (−0.0, subnormal, huge)
    spoil = draw(st.sampled_from(["none", "none", "bounds", "counts", "missing"]))
    special = draw(st.sampled_from(_SPECIALS))
    if spoil == "bounds" and n_bins:
        bounds[rng.integers(n_bins)] = special if not (special == 0.0 and n_bins > 1) else bounds[0] - 1.0
    elif spoil == "counts" and counts.size:
        counts.flat[rng.integers(counts.size)] = special
    elif spoil == "missing" and missing.size:
        missing[rng.integers(missing.size)] = special
    return Bins(upper_bounds=bounds, counts=counts, classes=tuple(range(n_classes)), missing=missing)


def _outcome(function, *args, **kwargs):
    try:
        return "ok", function(*args, **kwargs)
    except (ValueError, OverflowError) as error:
        return type(error).__name__, str(error)


def _bounded_code(n, nmax):
    normaliser = sum(2.0 ** -_log2_star(i) for i in range(1, nmax + 1))
    return math.log(2) * (math.log2(normaliser) + _log2_star(n))


def _part(counts):
    n_classes, total = len(counts), sum(counts)
    return (
        math.lgamma(total + n_classes) - math.lgamma(total + 1) - math.lgamma(n_classes)
        + math.lgamma(total + 1) - sum(math.lgamma(c + 1) for c in counts)
    )


def _log2_star(n):
    total, term = 0.0, math.log2(n)
    while term > 0:
        total += term
        term = math.log2(term)
    return total
