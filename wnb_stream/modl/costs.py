"""MODL cost terms as small pure functions (all costs in nats).

docs/algorithms/modl.md#costs describes every formula, with the paper or the Khiops function it
comes from. The functions accept real (fractional) counts: factorials go through the log-gamma
function, ``log n! = lΓ(n + 1)`` (a factorial table indexed by integers would be wrong for weighted
counts, halved cPiD bins or Gaussian virtual bins).

Design note — vectorised log-gamma. NumPy has no ``lgamma`` and SciPy is not a dependency.
:func:`log_gamma` answers integer-valued arguments from a cached table of ``math.lgamma`` values
(exact to the last bit, the common case: unit weights give integer counts) and every other
argument from the Stirling series with a shift of 8 (``lΓ(x) = lΓ(x + 8) − log x(x+1)…(x+7)``
for ``x < 8``), whose truncation error is below 3e-13 at ``x ≥ 8``.

>>> round(float(log_gamma(np.array([0.5, 10.0, 1234.5]))[2]), 6)
7550.550901
>>> round(universal_code_length(10), 6), round(log_bell_sum(5, 5), 6)
(5.10501, 3.951244)
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "RISSANEN_C0",
    "log_gamma",
    "log_factorial",
    "log_binomial",
    "log2_star",
    "universal_code_length",
    "universal_normaliser",
    "universal_normalisers",
    "bounded_universal_code_length",
    "log_stirling2_table",
    "log_bell_sum",
    "part_costs",
    "part_cost_function",
    "data_costs",
]

#: Rissanen's normalising constant of the universal code for the integers (Rissanen 1983);
#: Khiops uses 2.86511 (``NaturalNumbersUniversalCodeLength``), 1.6e-5 nats more.
RISSANEN_C0 = 2.865064

_LN2 = math.log(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
# Stirling series coefficients B_2k / (2k (2k − 1)) for k = 1..5.
_STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0)
_SHIFT = 8.0

# Integer-argument table: _TABLE[k] = lΓ(k) for k = 0..len − 1 (lΓ(0) = +inf is never read
# because arguments are > 0). It grows by doubling up to _TABLE_LIMIT entries.
_TABLE_LIMIT = 1 << 21
_TABLE = np.array([math.inf] + [math.lgamma(k) for k in range(1, 1024)])


def _grow_table(size: int) -> np.ndarray:
    global _TABLE
    if size > len(_TABLE):
        new_size = len(_TABLE)
        while new_size < size:
            new_size *= 2
        new_size = min(new_size, _TABLE_LIMIT)
        start = len(_TABLE)
        extra = np.fromiter(map(math.lgamma, range(start, new_size)), float, new_size - start)  # (no Python frame per entry)
        _TABLE = np.concatenate([_TABLE, extra])
    return _TABLE


def _stirling(x: np.ndarray) -> np.ndarray:
    """lΓ(x) for x ≥ 8 by the Stirling series (error < 3e-13)."""
    inv = 1.0 / x
    inv2 = inv * inv
    c1, c2, c3, c4, c5 = _STIRLING
    series = inv * (c1 + inv2 * (c2 + inv2 * (c3 + inv2 * (c4 + inv2 * c5))))
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + series


def _log_gamma_real(x: np.ndarray) -> np.ndarray:
    """lΓ(x) for real x > 0: Stirling above 8, recurrence shift of 8 below."""
    out = np.empty_like(x)
    small = x < _SHIFT
    if small.any():
        xs = x[small]
        # lΓ(x) = lΓ(x + 8) − log(x (x+1) … (x+7)); the product stays below 2.6e8 for x < 8.
        product = xs * (xs + 1.0) * (xs + 2.0) * (xs + 3.0) * (xs + 4.0) * (xs + 5.0) * (xs + 6.0) * (xs + 7.0)
        out[small] = _stirling(xs + _SHIFT) - np.log(product)
        large = ~small
        out[large] = _stirling(x[large])
    else:
        out[...] = _stirling(x)
    return out


def log_gamma(x) -> np.ndarray:
    """Vectorised lΓ(x) for real x > 0, any shape.

    Integer-valued arguments below 2**21 come from a cached table of ``math.lgamma``; the others
    from the Stirling series (absolute error ≤ 1e-10·max(1, |lΓ(x)|)).
    Cost: O(size) NumPy operations.

    >>> bool(np.allclose(log_gamma([1.0, 2.0, 3.0, 4.5]), [0.0, 0.0, math.log(2), math.lgamma(4.5)]))
    True
    """
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return np.zeros(x.shape)
    top = x.max()
    rounded = np.rint(x)
    if top < _TABLE_LIMIT and np.array_equal(rounded, x) and x.min() >= 1.0:
        table = _grow_table(int(top) + 1)
        return table[rounded.astype(np.intp)]
    return _log_gamma_real(x)


def log_factorial(n):
    """log n! = lΓ(n + 1) for real n ≥ 0; a float for a scalar, else an array."""
    if np.ndim(n) == 0:
        return math.lgamma(float(n) + 1.0)
    return log_gamma(np.asarray(n, dtype=float) + 1.0)


def log_binomial(n, k):
    """log C(n, k) = lΓ(n + 1) − lΓ(k + 1) − lΓ(n − k + 1) for reals 0 ≤ k ≤ n.

    >>> round(log_binomial(5, 2), 12) == round(math.log(10), 12)
    True
    """
    if np.ndim(n) == 0 and np.ndim(k) == 0:
        n, k = float(n), float(k)
        return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return log_gamma(n + 1.0) - log_gamma(k + 1.0) - log_gamma(n - k + 1.0)


def log2_star(n):
    """Rissanen's log2*(n) = log2 n + log2 log2 n + … (positive iterates only), n ≥ 1 (Rissanen 1983).

    Scalar in, float out; array in, array out.

    >>> [round(float(log2_star(n)), 6) for n in (1, 2, 3, 4, 16, 100)]
    [0.0, 1.0, 2.249411, 3.0, 7.0, 11.361867]
    """
    scalar = np.ndim(n) == 0
    term = np.log2(np.asarray(n, dtype=float))
    total = np.zeros_like(term)
    positive = term > 0
    while positive.any():
        total = total + np.where(positive, term, 0.0)
        term = np.where(positive, np.log2(np.where(positive, term, 1.0)), 0.0)
        positive = term > 0
    return float(total) if scalar else total


def universal_code_length(n, c0: float = RISSANEN_C0) -> float:
    """L*(n) = ln 2 · (log2 c0 + log2*(n)): Rissanen's universal code for n ≥ 1, in nats (Rissanen 1983).

    >>> round(universal_code_length(1), 6), round(universal_code_length(100), 6)
    (1.052591, 8.928037)
    """
    if n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    return _LN2 * (math.log2(c0) + log2_star(n))


@functools.lru_cache(maxsize=1)
def _normaliser_cache(size: int) -> np.ndarray:
    # C0 cumulated: entry m = Σ_{i=1}^{m} 2^(−log2*(i)), entry 0 = 0.
    terms = np.exp2(-log2_star(np.arange(1, size + 1, dtype=float)))
    table = np.concatenate([[0.0], np.cumsum(terms)])
    table.setflags(write=False)
    return table


def _normalisers(nmax: int) -> np.ndarray:
    size = 1024
    while size < nmax:
        size *= 4
    return _normaliser_cache(size)


def universal_normalisers(nmax: int) -> np.ndarray:
    """``(nmax + 1,)`` array of C0(m) for m = 0..nmax (C0(0) = 0 by convention; read-only)."""
    return _normalisers(int(nmax))[: int(nmax) + 1]


def universal_normaliser(nmax: int) -> float:
    """C0(nmax) = Σ_{i=1}^{nmax} 2^(−log2*(i)), the normaliser of the bounded code (docs/algorithms/modl.md#costs).

    >>> [round(universal_normaliser(m), 6) for m in (1, 2, 3, 10, 100)]
    [1.0, 1.5, 1.71031, 2.05214, 2.236764]
    """
    if nmax < 1:
        raise ValueError(f"nmax must be an integer >= 1, got {nmax!r}")
    return float(_normalisers(int(nmax))[int(nmax)])


def bounded_universal_code_length(n, nmax):
    """L*_{nmax}(n) = ln 2 · (log2 C0(nmax) + log2*(n)) for 1 ≤ n ≤ nmax (docs/algorithms/modl.md#costs).

    Khiops' ``BoundedNaturalNumbersUniversalCodeLength``. ``n`` and ``nmax`` may be integer arrays
    (broadcast together); a float comes back for scalars.

    >>> round(bounded_universal_code_length(1, 3), 6), round(bounded_universal_code_length(3, 99), 6)
    (0.536675, 2.364033)
    """
    nmax = np.asarray(nmax, dtype=np.intp)
    if nmax.size and nmax.min() < 1:
        raise ValueError(f"nmax must be integers >= 1, got {nmax!r}")
    top = int(nmax.max()) if nmax.size else 1
    normaliser = _normalisers(top)[nmax]
    result = _LN2 * (np.log2(normaliser) + log2_star(n))
    return float(result) if np.ndim(result) == 0 else result


@functools.lru_cache(maxsize=4)
def _stirling_table(size: int) -> np.ndarray:
    # docs/algorithms/modl.md#costs: log S(n, k) = logaddexp(log k + log S(n−1, k), log S(n−1, k−1)),
    # log S(0, 0) = 0, log S(n, 0) = −inf for n ≥ 1, log S(n, k) = −inf for k > n.
    table = np.full((size + 1, size + 1), -np.inf)
    table[0, 0] = 0.0
    log_k = np.log(np.arange(1, size + 1, dtype=float))
    for n in range(1, size + 1):
        previous = table[n - 1]
        table[n, 1 : n + 1] = np.logaddexp(log_k[:n] + previous[1 : n + 1], previous[:n])
    return table


def log_stirling2_table(n_max: int) -> np.ndarray:
    """``(n_max + 1, n_max + 1)`` table of log S(n, k), Stirling numbers of the second kind.

    Entries with k > n (and S(n, 0), n ≥ 1) are −inf. Cached; O(n_max²) time and memory.

    >>> round(float(np.exp(log_stirling2_table(5)[5, 2])), 6)
    15.0
    """
    size = 8
    while size < n_max:
        size *= 2
    return _stirling_table(size)[: n_max + 1, : n_max + 1]


@functools.lru_cache(maxsize=4)
def _bell_table(size: int) -> np.ndarray:
    # log B(n, k) = log Σ_{i ≤ k} S(n, i): cumulative log-sum-exp along k (docs/algorithms/modl.md#costs).
    with np.errstate(invalid="ignore"):
        return np.logaddexp.accumulate(_stirling_table(size), axis=1)


def log_bell_table(n_max: int) -> np.ndarray:
    """``(n_max + 1, n_max + 1)`` table of log B(n, k) = log Σ_{i=1}^{k} S(n, i) (docs/algorithms/modl.md#costs)."""
    size = 8
    while size < n_max:
        size *= 2
    return _bell_table(size)[: n_max + 1, : n_max + 1]


def log_bell_sum(n_values: int, n_groups):
    """log B(V, I): number of partitions of V values into at most I groups (Boullé 2005, MODL grouping).

    B(V, V) is the Bell number. ``n_groups`` may be an integer array.

    >>> round(log_bell_sum(5, 2), 6), round(log_bell_sum(10, 3), 6)
    (2.772589, 9.194414)
    """
    if n_values < 1:
        raise ValueError(f"n_values must be >= 1, got {n_values!r}")
    row = log_bell_table(int(n_values))[int(n_values)]
    result = row[np.minimum(np.asarray(n_groups, dtype=np.intp), int(n_values))]
    return float(result) if np.ndim(result) == 0 else result


def part_costs(counts) -> np.ndarray:
    """MODL cost of each part: log C(N_i + J − 1, J − 1) + log N_i! − Σ_j log N_ij! (Boullé 2006).

    Simplifies to lΓ(N_i + J) − lΓ(J) − Σ_j lΓ(N_ij + 1). ``counts`` has shape ``(..., J)``;
    the result has shape ``(...)``. An empty part costs 0. J is the length of the last axis:
    pass only the class columns that are observed (see ``modl.discretize``).

    >>> round(float(part_costs(np.array([10.0, 0.0]))), 6) == round(math.log(11), 6)
    True
    """
    counts = np.asarray(counts, dtype=float)
    n_classes = counts.shape[-1]
    # one log-gamma call on (..., J + 1): the J counts + 1, then the total + J
    arguments = np.empty(counts.shape[:-1] + (n_classes + 1,))
    arguments[..., :n_classes] = counts + 1.0
    arguments[..., n_classes] = counts.sum(axis=-1) + n_classes
    logs = log_gamma(arguments)
    return logs[..., n_classes] - math.lgamma(n_classes) - logs[..., :n_classes].sum(axis=-1)


def data_costs(counts) -> np.ndarray:
    """Multinomial (data) cost of each part: log N_i! − Σ_j log N_ij!, shape ``(...)``.

    docs/algorithms/modl.md#level-and-prior-cost
    """
    counts = np.asarray(counts, dtype=float)
    return log_gamma(counts.sum(axis=-1) + 1.0) - log_gamma(counts + 1.0).sum(axis=-1)


def part_cost_function(counts):
    """A function equal to :func:`part_costs` for sums of rows of ``counts``, fast for integers.

    When every count is an integer and twice the total is below 2**21 (unit weights), the returned
    function reads lΓ from the cached integer table with four NumPy operations; otherwise it is
    :func:`part_costs` itself. Searches call it thousands of times on small arrays, where the
    per-call overhead dominates.

    >>> table = np.array([[3.0, 1.0], [0.0, 2.0]])
    >>> fast = part_cost_function(table)
    >>> bool(np.allclose(fast(table.sum(axis=0)), part_costs(table.sum(axis=0))))
    True
    """
    counts = np.asarray(counts, dtype=float)
    n_classes = counts.shape[-1] if counts.ndim else 1
    total = float(counts.sum()) if counts.size else 0.0
    # pairwise searches also price a group merged with itself (then masked): up to twice the total
    size = 2 * int(total) + n_classes + 2
    if counts.size == 0 or size >= _TABLE_LIMIT or not np.array_equal(counts, np.rint(counts)):
        return part_costs
    table = _grow_table(size)
    log_gamma_classes = math.lgamma(n_classes)

    def integer_part_costs(part_counts):
        index = np.asarray(part_counts).astype(np.intp)
        return table[index.sum(axis=-1) + n_classes] - log_gamma_classes - table[index + 1].sum(axis=-1)

    return integer_part_costs
