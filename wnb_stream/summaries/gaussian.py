"""Per-class Gaussian summary of a numeric variable, and the density it implies.

The summary keeps, per class, the total weight ``W``, the weighted mean ``μ`` and the sum of
squared deviations ``M2`` (``docs/algorithms/summaries.md#gaussian``), plus one pooled accumulator over all classes.
Level 2 never sees the values: it reads ``table() -> Moments`` and the pure functions of this
module turn those moments into what the classifier needs:

- ``log_likelihood(moments, values)``: ``(n_values, n_classes)`` log densities ℓ_j(x),
  or ``GaussianDensity(moments)`` to precompute them for many queries;
- ``prior_cost(moments)``: a BIC-like prior cost ``J·log N``;
- ``virtual_bins(moments)``: expected class counts on a grid of pooled quantiles, a ``Bins``
  table MODL can read (``docs/algorithms/modl.md``).

Input is validated by the summaries' input policy (``policy``).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .._checks import integer
from ..io.registry import register
from ..io.schema import Array, Fields, Schema
from ..tables import Bins, ClassIndex, Moments
from .base import CLASSES, Summary
from .policy import (
    as_weights,
    check_factor,
    fast_weight,
    known_columns,
    label_batch,
    label_column,
    numeric_batch,
    numeric_value,
    register_labels,
)

__all__ = [
    "Gaussian",
    "GaussianDensity",
    "log_likelihood",
    "pooled_moments",
    "prior_cost",
    "smoothed_parameters",
    "virtual_bins",
]

_LOG_2PI = math.log(2.0 * math.pi)
#: Relative variance floor: σ̃² ≥ 1e-12·(1 + μ²) keeps a constant feature finite (our choice).
_RELATIVE_VARIANCE_FLOOR = 1e-12
#: Largest variance used in a density (guards against M2 overflowing to inf on absurd inputs).
_MAX_VARIANCE = 1e300
#: Largest M2 kept: the sum of squared deviations saturates here instead of overflowing to inf
#: (values spanning more than ~1e154 have a variance beyond the float range; the density then
#: uses its largest variance, ``_MAX_VARIANCE``).
_M2_MAX = sys.float_info.max
#: Lower clamp of a log density. It is only reached ~1e75 standard deviations from the mean (or on
#: overflowing inputs); it keeps ℓ finite and its square finite for the levels above.
LOG_DENSITY_FLOOR = -1e150


# --------------------------------------------------------------------------------------------
# The summary
# --------------------------------------------------------------------------------------------


class Gaussian(Summary):
    """Per-class weighted mean and variance of a numeric variable.

    Per class ``j`` the summary holds ``(W_j, μ_j, M2_j)`` updated with the weighted Welford/West
    rule and merged with the Chan–Golub–LeVeque rule (``docs/algorithms/summaries.md#gaussian``).
    The pooled moments over all classes are derived from the classes' (``pooled``), not kept
    apart: two accumulators of the same values drift apart by rounding on extreme streams.
    The variance is the maximum-likelihood one, ``M2/W``.
    Missing values (None, NaN, ±inf) are counted per class in ``missing``.

    Cost: ``update`` O(1); ``update_many`` O(n) vectorised; ``merge`` O(J); memory O(J).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(42)
    >>> summary = Gaussian()
    >>> for x, y in zip(rng.normal(size=200), rng.integers(0, 2, size=200)):
    ...     summary.update(float(x), int(y))
    >>> table = summary.table()
    >>> table.classes, table.weights.tolist()
    ((1, 0), [105.0, 95.0])
    >>> round(float(table.means[0]), 4), round(float(table.variances[0]), 4)
    (0.0141, 0.7891)
    >>> log_likelihood(table, [0.0, None]).round(3).tolist()
    [[-0.801, -0.781], [0.0, 0.0]]

    """

    scored_by_density = True  # by its per-class Gaussians; level 2 is built on their virtual bins

    def density(self, table: Moments) -> GaussianDensity:
        """The per-class Gaussians of ``table``, which score the variable."""
        return GaussianDensity(table)

    def level2_table(self, table: Moments) -> Bins:
        """The virtual bins of ``table``: a level and prior cost comparable with binned variables'."""
        return virtual_bins(table)

    kind = "numeric"

    def __init__(self):
        self._classes = ClassIndex()
        # per class, in the order of self._classes (Python floats: cheapest for one update)
        self._weights: list[float] = []
        self._means: list[float] = []
        self._m2: list[float] = []
        self._missing: list[float] = []

    # -- protocol -----------------------------------------------------------------------------

    @property
    def n(self) -> float:
        return math.fsum(self._weights) + math.fsum(self._missing)

    def _add_class(self) -> None:
        self._weights.append(0.0)
        self._means.append(0.0)
        self._m2.append(0.0)
        self._missing.append(0.0)

    def update(self, x, y, w: float = 1.0) -> None:
        """Add value ``x`` of class ``y`` with weight ``w``. Cost O(1)."""
        x = numeric_value(x)
        w = fast_weight(w)
        j = label_column(self._classes, y)
        if j == len(self._weights):
            self._add_class()
        if x is None:
            self._missing[j] += w
            return
        if w == 0.0:
            return
        # Welford/West weighted update: W' = W + a; μ' = μ + (a/W')·d; M2' = M2 + a·d·(x − μ')
        total = self._weights[j] + w
        mean = self._means[j]
        delta = x - mean
        mean += (w / total) * delta
        m2 = self._m2[j] + w * delta * (x - mean)
        if m2 - m2 != 0.0 or m2 < self._m2[j]:
            # d or M2 overflowed (values near ±1.8e308), or x − μ' lost d to rounding (a tiny
            # weight far away, then a weight that swamps it): the scale-safe form
            mean, m2 = _welford_extreme(self._weights[j], self._means[j], self._m2[j], x, w)
        self._weights[j] = total
        self._means[j] = mean
        self._m2[j] = m2

    def update_many(self, values, labels, weights=None) -> None:
        """Add a batch: same result as a loop of ``update`` up to float rounding. Cost O(n).

        The batch's per-class moments are computed with two vectorised passes and combined with
        the state by the Chan rule.
        """
        x = numeric_batch(values)
        n = len(x)
        labels = label_batch(labels, n)
        codes = known_columns(self._classes, labels)
        w = as_weights(weights, n)
        if codes is None:  # validated: new classes are registered from here on
            codes = register_labels(self._classes, labels)
        while len(self._weights) < len(self._classes):
            self._add_class()
        n_classes = len(self._weights)
        if n == 0:
            return
        missing = np.isnan(x)
        if missing.any():
            extra = np.bincount(codes[missing], weights=w[missing], minlength=n_classes)
            self._missing = (np.asarray(self._missing) + extra).tolist()
            keep = ~missing
            x, codes, w = x[keep], codes[keep], w[keep]
        batch = _batch_moments(x, codes, w, n_classes)
        state = (np.asarray(self._weights), np.asarray(self._means), np.asarray(self._m2))
        weights_, means, m2 = chan_merge(*state, *batch)
        self._weights, self._means, self._m2 = weights_.tolist(), means.tolist(), m2.tolist()

    def merge(self, other: Gaussian) -> None:
        """Absorb ``other`` (exact up to float rounding: Chan et al.'s parallel rule). Cost O(J).

        ``TypeError`` if ``other`` is not a ``Gaussian``.
        """
        if not isinstance(other, Gaussian):
            raise TypeError(f"can only merge another Gaussian, got {type(other).__name__}")
        columns = self._classes.merge(other._classes)
        while len(self._weights) < len(self._classes):
            self._add_class()
        n_classes = len(self._weights)
        incoming = [np.zeros(n_classes) for _ in range(4)]
        for source, target in zip((other._weights, other._means, other._m2, other._missing), incoming):
            target[columns] = source
        weights_, means, m2 = chan_merge(
            np.asarray(self._weights), np.asarray(self._means), np.asarray(self._m2), *incoming[:3]
        )
        self._weights, self._means, self._m2 = weights_.tolist(), means.tolist(), m2.tolist()
        self._missing = (np.asarray(self._missing) + incoming[3]).tolist()

    def decay(self, factor: float) -> None:
        """Multiply the weight of everything seen so far by ``factor`` (0 < factor ≤ 1).

        Per class ``W`` and ``M2`` are multiplied by ``factor`` and the mean is unchanged, so the
        variance ``M2/W`` is unchanged too (up to rounding): the moments of the same values with
        every weight times ``factor``. The missing counts scale alike. A class whose ``W``
        underflows to 0 restarts empty, ``(0, 0, 0)``. ``factor == 1`` changes nothing;
        ``ValueError`` naming ``factor`` unless it is in (0, 1]. Cost O(J).
        """
        factor = check_factor(factor)
        if factor == 1.0:
            return
        weights_ = np.asarray(self._weights, dtype=float) * factor  # (n_classes,)
        empty = weights_ == 0.0
        self._weights = weights_.tolist()
        self._means = np.where(empty, 0.0, np.asarray(self._means, dtype=float)).tolist()
        self._m2 = np.where(empty, 0.0, np.asarray(self._m2, dtype=float) * factor).tolist()
        self._missing = (np.asarray(self._missing, dtype=float) * factor).tolist()

    def table(self) -> Moments:
        """Per-class weights, means and ML variances (``(n_classes,)`` each). Cost O(J)."""
        weights_ = np.asarray(self._weights, dtype=float)
        m2 = np.asarray(self._m2, dtype=float)
        variances = np.divide(m2, weights_, out=np.zeros_like(m2), where=weights_ > 0)
        return Moments(weights_, self._means, np.maximum(variances, 0.0), self.classes, self._missing)

    @property
    def pooled(self) -> tuple[float, float, float]:
        """Pooled ``(weight, mean, ML variance)`` over all classes (missing values excluded). Cost O(J).

        Derived from the per-class moments (``pooled_moments``), so it always agrees with them.
        """
        return pooled_moments(self.table())

    def memory_usage(self) -> int:
        n_classes = len(self._weights)
        # four lists of floats (24 bytes per float object + 8 per slot) and the class index
        return int(4 * sys.getsizeof([]) + 32 * 4 * n_classes + sys.getsizeof(self._classes.labels))

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound: one entry per class in each list, weights >= 0, M2 >= 0 up to rounding and
        finite. O(J)."""
        n_classes, found = len(self._classes), []
        for name in ("weights", "means", "m2", "missing"):
            if len(getattr(self, "_" + name)) != n_classes:
                found.append(f"{name}: expected n_classes = {n_classes} entries, got {len(getattr(self, '_' + name))}")
        if found:
            return found
        if not (all(v >= 0.0 for v in self._weights) and all(v >= 0.0 for v in self._missing)):
            found.append("weights: weights and missing weights must be >= 0")
        if not all(m2 >= -1e-9 * max(1.0, abs(m2)) for m2 in self._m2):
            found.append("m2: sums of squared deviations must be >= 0")
        if not all(m2 <= _M2_MAX for m2 in self._m2):
            found.append("m2: sums of squared deviations must be finite")
        return found

    # -- saved record (docs/saved-model.md) ---------------------------------------------------

    def record_state(self) -> dict:
        """The state fields of the record: per-class weights, means, M2 and missing counts (the
        pooled moments derive from them)."""
        return {"classes": list(self._classes.labels), **{k: np.array(getattr(self, "_" + k), dtype=np.float64) for k in _LISTS}}

    @classmethod
    def from_record(cls, fields: Fields) -> Gaussian:
        """The summary a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        state = fields.state
        summary = cls()
        summary._classes = ClassIndex.of(state["classes"])
        summary._weights, summary._means, summary._m2, summary._missing = (state[k].tolist() for k in _LISTS)
        return summary


#: The per-class lists of a ``Gaussian``, as its record names them.
_LISTS = ("weights", "means", "m2", "missing")

register(
    "Gaussian",
    Gaussian,
    Schema(
        state={
            "classes": CLASSES,
            "weights": Array("float64", ("n_classes",), low=0.0, doc="total weight W_j of each class's non-missing values"),
            "means": Array("float64", ("n_classes",), finite=False, doc="weighted mean μ_j"),
            "m2": Array("float64", ("n_classes",), finite=False, doc="sum of squared deviations M2_j"),
            "missing": Array("float64", ("n_classes",), low=0.0, doc="weight of missing values per class"),
        },
        doc="Per-class Gaussian moments",
    ),
    state=Gaussian.record_state,
    build=Gaussian.from_record,
)


# --------------------------------------------------------------------------------------------
# Pure functions: moments of a batch, Chan merge, pooled moments
# --------------------------------------------------------------------------------------------


def _batch_moments(x: np.ndarray, codes: np.ndarray, w: np.ndarray, n_classes: int):
    """Per-class ``(W, μ, M2)`` of a batch, each ``(n_classes,)``.

    Two passes, with the mean of each class computed on values shifted by the class's first
    value (so a constant class gets its value and M2 = 0 exactly). When a shifted value or a
    sum overflows (values near ±1.8e308), the means are instead Σ (a/W)·(x/4 − shift/4), times 4,
    which cannot overflow, and M2 saturates at ``_M2_MAX``; nothing changes where the direct
    computation is finite.
    """
    shift = np.zeros(n_classes)
    classes, first = np.unique(codes, return_index=True)
    shift[classes] = x[first]
    total = np.bincount(codes, weights=w, minlength=n_classes)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.bincount(codes, weights=w * (x - shift[codes]), minlength=n_classes)
        means = shift + np.divide(sums, total, out=np.zeros(n_classes), where=total > 0)
        if not np.isfinite(means).all():  # on quarters, each value weighted by its share of W
            scaled = 0.25 * shift
            share = np.divide(w, total[codes], out=np.zeros(len(w)), where=total[codes] > 0)
            means = 4.0 * (scaled + np.bincount(codes, weights=share * (0.25 * x - scaled[codes]), minlength=n_classes))
            low = np.full(n_classes, np.inf)
            high = np.full(n_classes, -np.inf)
            np.minimum.at(low, codes, x)
            np.maximum.at(high, codes, x)
            means = np.where(total > 0, np.clip(means, np.minimum(low, high), np.maximum(low, high)), means)  # within the values
        deviation = x - means[codes]
        m2 = np.bincount(codes, weights=w * deviation * deviation, minlength=n_classes)
    return total, means, _saturate(m2)


def _saturate(m2: np.ndarray) -> np.ndarray:
    """M2 with overflowed entries (±inf, or NaN from inf − inf) set to ``_M2_MAX``."""
    finite = np.isfinite(m2)
    return m2 if finite.all() else np.where(finite, m2, _M2_MAX)


def _welford_extreme(total: float, mean: float, m2: float, x: float, w: float) -> tuple[float, float]:
    """The Welford/West update of ``update`` when ``d = x − μ`` or M2 overflows, or M2 would
    shrink: the new mean computed on halves, ``2·(μ/2 + (a/W')·(x/2 − μ/2))``, and the increment
    ``a·(W/W')·d²``, which cannot be negative, with M2 saturating at ``_M2_MAX``. The new mean
    lies between μ and x (a rounding past the float range is clipped back)."""
    before = total
    total += w
    share = w / total
    half = 0.5 * x - 0.5 * mean
    low, high = (mean, x) if mean <= x else (x, mean)
    mean = min(max(2.0 * (0.5 * mean + share * half), low), high)
    increment = (4.0 * w * (before / total)) * half * half  # a·d·(x − μ') = a·(W/W')·d²
    m2 = m2 + increment
    return mean, (m2 if m2 <= _M2_MAX else _M2_MAX)


def chan_merge(weights_a, means_a, m2_a, weights_b, means_b, m2_b):
    """Combine two sets of weighted moments, arrays of the same shape (Chan, Golub & LeVeque).

    ``W = W_a + W_b``; ``d = μ_b − μ_a``; ``μ = μ_a + d·W_b/W``; ``M2 = M2_a + M2_b + d²·W_a·W_b/W``.
    Entries with ``W = 0`` stay ``(0, 0, 0)``.

    >>> [float(v[0]) for v in chan_merge(np.array([2.0]), np.array([1.0]), np.array([0.0]),
    ...                                  np.array([2.0]), np.array([3.0]), np.array([0.0]))]
    [4.0, 2.0, 4.0]
    """
    total = weights_a + weights_b
    positive = total > 0
    with np.errstate(over="ignore", invalid="ignore"):
        delta = means_b - means_a
        share_b = np.divide(weights_b, total, out=np.zeros_like(total), where=positive)
        means = np.where(positive, means_a + delta * share_b, 0.0)
        m2 = np.where(positive, m2_a + m2_b + delta * delta * weights_a * share_b, 0.0)
        if not (np.isfinite(means).all() and np.isfinite(m2).all()):
            # d overflowed (means near ±1.8e308): on halves, as _welford_extreme
            half = 0.5 * means_b - 0.5 * means_a
            safe = np.where(positive, 2.0 * (0.5 * means_a + half * share_b), 0.0)
            safe = np.clip(safe, np.minimum(means_a, means_b), np.maximum(means_a, means_b))  # between the two
            means = np.where(np.isfinite(means), means, safe)
            spread = np.where(positive, m2_a + m2_b + (4.0 * (weights_a * share_b)) * half * half, 0.0)
            m2 = np.where(np.isfinite(m2), m2, spread)
    return total, means, _saturate(m2)


def pooled_moments(moments: Moments) -> tuple[float, float, float]:
    """Pooled ``(weight, mean, ML variance)`` of all classes of ``moments`` (exact, Chan rule).

    >>> m = Moments([2.0, 2.0], [1.0, 3.0], [0.0, 0.0], ("a", "b"), [0.0, 0.0])
    >>> pooled_moments(m)
    (4.0, 2.0, 1.0)
    """
    weights_ = moments.weights
    total = float(weights_.sum())
    if total <= 0:
        return 0.0, 0.0, 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        mean = float(weights_ @ moments.means) / total
        if not math.isfinite(mean):  # W·μ overflowed (means near ±1.8e308): the shares first
            mean = float((weights_ / total) @ moments.means)
        spread = moments.variances + (moments.means - mean) ** 2
        variance = max(float(weights_ @ spread) / total, 0.0)
        if not variance <= _M2_MAX:  # beyond the float range: saturates, as M2 does
            variance = _M2_MAX
        return total, mean, variance


# --------------------------------------------------------------------------------------------
# Pure functions: density, prior cost, virtual bins
# --------------------------------------------------------------------------------------------


def smoothed_parameters(
    moments: Moments, var_smoothing: float = 1e-9, max_variance: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Means and floored variances ``(n_classes,)`` used by the density (``docs/algorithms/summaries.md#gaussian``).

    - classes with weight < 2 take the pooled mean and variance (their term is then nearly
      class-independent);
    - ``σ̃² = σ² + var_smoothing · max_variance`` where ``max_variance`` is the largest pooled
      variance over the classifier's variables (scikit-learn's ``var_smoothing``); by default
      this variable's pooled variance;
    - ``σ̃² ≥ 1e-12·(1 + μ²)`` so a feature constant within a class stays finite.
    """
    if not (var_smoothing >= 0 and math.isfinite(var_smoothing)):
        raise ValueError(f"var_smoothing must be a finite number >= 0, got {var_smoothing!r}")
    _, pooled_mean, pooled_variance = pooled_moments(moments)
    if max_variance is None:
        max_variance = pooled_variance
    elif not (max_variance >= 0 and math.isfinite(max_variance)):
        raise ValueError(f"max_variance must be a finite number >= 0, got {max_variance!r}")
    small = moments.weights < 2.0
    means = np.where(small, pooled_mean, moments.means)
    variances = np.where(small, pooled_variance, moments.variances)
    with np.errstate(over="ignore", invalid="ignore"):
        variances = np.nan_to_num(variances + var_smoothing * max_variance, nan=_MAX_VARIANCE, posinf=_MAX_VARIANCE)
        floor = np.minimum(_RELATIVE_VARIANCE_FLOOR * (1.0 + means * means), _MAX_VARIANCE)
    floor = np.nan_to_num(floor, nan=_MAX_VARIANCE)
    return means, np.clip(variances, floor, _MAX_VARIANCE)


def log_likelihood(
    moments: Moments, values, var_smoothing: float = 1e-9, max_variance: float | None = None
) -> np.ndarray:
    """Log densities ℓ_j(x) of ``values`` under each class's Gaussian.

    ``ℓ_j(x) = −½ log(2π σ̃_j²) − (x − μ_j)² / (2σ̃_j²)``, computed in log form (never the log of
    a pdf), with the means and variance floors of ``smoothed_parameters``.
    The result is always finite: missing values (None, NaN, ±inf) give 0 for every class, and the
    log density is clamped at ``LOG_DENSITY_FLOOR`` for values absurdly far from the mean.
    For repeated queries on the same table, build a ``GaussianDensity`` once.

    Parameters
    ----------
    moments
        The Gaussian summary's table.
    values
        ``(n_values,)`` numbers (None/NaN/±inf allowed).
    var_smoothing
        Portion of ``max_variance`` added to every variance.
    max_variance
        Largest pooled variance across the classifier's variables; defaults to this variable's.

    Returns
    -------
    ``(n_values, n_classes)`` float array.

    Examples
    --------
    Class "b" is constant (variance 0): its density stays finite, very peaked at its mean.

    >>> m = Moments([10.0, 10.0], [0.0, 1.0], [1.0, 0.0], ("a", "b"), [0.0, 0.0])
    >>> log_likelihood(m, [0.0, 1.0, None]).round(2).tolist()
    [[-0.92, -666666657.08], [-1.42, 9.59], [0.0, 0.0]]
    """
    return GaussianDensity(moments, var_smoothing, max_variance).log_likelihood(values)


class GaussianDensity:
    """The class-conditional log densities of a ``Moments`` table, precomputed for queries.

    Holds ``means`` and floored ``variances`` ``(n_classes,)`` from ``smoothed_parameters`` and the
    log normalisers ``−½ log(2π σ̃_j²)``; ``log_likelihood(values) -> (n, n_classes)`` and
    ``log_likelihood_one(x) -> (n_classes,)`` (the per-example prediction path, no NumPy call
    for up to 8 classes) give the same values as the module's ``log_likelihood``.

    >>> m = Moments([10.0, 10.0], [0.0, 1.0], [1.0, 4.0], ("a", "b"), [0.0, 0.0])
    >>> density = GaussianDensity(m)
    >>> density.log_likelihood_one(1.0).round(3).tolist(), density.log_likelihood_one(None).tolist()
    ([-1.419, -1.612], [0.0, 0.0])
    """

    __slots__ = ("classes", "means", "variances", "_log_normalizers", "_inverse_sigmas", "_python")

    def __init__(self, moments: Moments, var_smoothing: float = 1e-9, max_variance: float | None = None):
        means, variances = smoothed_parameters(moments, var_smoothing, max_variance)
        self._set(moments.classes, means, variances)

    @classmethod
    def of_parameters(cls, classes: tuple, means: np.ndarray, variances: np.ndarray) -> GaussianDensity:
        """The density of these smoothed ``means`` and floored ``variances`` ``(n_classes,)`` as
        they are (a saved density); ``problems()`` says whether they are a density's. O(J)."""
        density = cls.__new__(cls)
        density._set(tuple(classes), means, variances)
        return density

    def _set(self, classes: tuple, means: np.ndarray, variances: np.ndarray) -> None:
        self.classes = classes
        self.means = means  # (n_classes,)
        self.variances = variances  # (n_classes,)
        self._log_normalizers = -0.5 * (_LOG_2PI + np.log(variances))  # (n_classes,)
        self._inverse_sigmas = 1.0 / np.sqrt(variances)  # (n_classes,)
        # plain Python lists serve the one-value path for a few classes
        self._python = (
            list(zip(self._log_normalizers.tolist(), means.tolist(), self._inverse_sigmas.tolist()))
            if len(means) <= 8
            else None
        )

    def log_likelihood(self, values) -> np.ndarray:
        """``(n_values, n_classes)`` log densities; 0 rows for missing values."""
        x = numeric_batch(values)
        out = np.zeros((len(x), len(self.means)))  # (n_values, n_classes)
        present = ~np.isnan(x)
        if not present.any() or len(self.means) == 0:
            return out
        out[present] = self._evaluate(x[present, None])
        return out

    def _evaluate(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            z = (x - self.means) * self._inverse_sigmas
            values = self._log_normalizers - 0.5 * z * z
        # fmax ignores NaN (from overflowing inputs), so the floor also replaces them
        return np.fmax(values, LOG_DENSITY_FLOOR)

    def log_likelihood_one(self, x) -> np.ndarray:
        """``(n_classes,)`` log densities of one value (zeros if it is missing)."""
        if type(x) is not float or not x - x == 0.0:
            x = numeric_value(x)
            if x is None:
                return np.zeros(len(self.means))
        if self._python is None:
            return self._evaluate(np.array([x]))
        out = []
        for log_normalizer, mean, inverse_sigma in self._python:
            z = (x - mean) * inverse_sigma  # Python floats overflow to inf without an error
            value = log_normalizer - 0.5 * (z * z)
            out.append(value if value > LOG_DENSITY_FLOOR else LOG_DENSITY_FLOOR)
        return np.array(out)


    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"``; empty when sound: one mean and
        one variance per class, and parameters that smoothing leaves as they are (weights >= 2,
        no smoothing: the variances are above the floor of their means). O(J)."""
        n_classes = len(self.classes)
        if self.means.shape != (n_classes,) or self.variances.shape != (n_classes,):
            return [f"means: expected a mean and a variance for each of the n_classes = {n_classes} classes"]
        if not (self.variances > 0.0).all():
            return ["variances: must be > 0"]
        moments = Moments(np.full(n_classes, 2.0), self.means, self.variances, self.classes, np.zeros(n_classes))
        means, variances = smoothed_parameters(moments, var_smoothing=0.0, max_variance=0.0)
        if not (np.array_equal(means, self.means) and np.array_equal(variances, self.variances)):
            return ["variances: below the variance floor of their means (not the parameters of a density)"]
        return []

    def _check(self) -> None:
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def record_state(self) -> dict:
        """The state fields of the record: the smoothed means and variances (a snapshot of the
        summary at the last level-2 rebuild); the normalisers are rebuilt."""
        return {"classes": list(self.classes), "means": self.means, "variances": self.variances}

    @classmethod
    def from_record(cls, fields: Fields) -> GaussianDensity:
        state = fields.state
        return cls.of_parameters(tuple(state["classes"]), state["means"], state["variances"])


register(
    "GaussianDensity",
    GaussianDensity,
    Schema(
        state={
            "classes": CLASSES,
            "means": Array("float64", ("n_classes",), finite=False, doc="smoothed mean of each class"),
            "variances": Array("float64", ("n_classes",), above=0.0, doc="floored variance of each class"),
        },
        doc="Class-conditional Gaussian log densities (a snapshot of the summary at the last rebuild)",
    ),
    state=GaussianDensity.record_state,
    build=GaussianDensity.from_record,
)

def prior_cost(moments: Moments) -> float:
    """BIC-like prior cost of a Gaussian variable: ``J · log N`` nats (``docs/algorithms/summaries.md#gaussian``).

    There are 2J free parameters (a mean and a variance per class), each costing ½ log N;
    ``J`` is the number of classes in the table and ``N`` its total weight (missing values
    included, as for the MODL costs). Returns 0 when ``N ≤ 1``.

    >>> m = Moments([50.0, 50.0], [0.0, 1.0], [1.0, 1.0], ("a", "b"), [0.0, 0.0])
    >>> round(prior_cost(m), 4)
    9.2103
    """
    total = moments.n
    return len(moments.classes) * math.log(total) if total > 1 else 0.0


_erfc_many = np.frompyfunc(math.erfc, 1, 1)


def normal_cdf(z) -> np.ndarray:
    """Standard normal CDF Φ(z), exact to double precision (``math.erfc``, element-wise)."""
    z = np.asarray(z, dtype=float)
    return 0.5 * _erfc_many(-z / math.sqrt(2.0)).astype(float)


def _approximate_normal_cdf(z: np.ndarray) -> np.ndarray:
    """A fast monotone approximation of Φ (tanh form, |error| < 2e-4): used to place cut points only."""
    return 0.5 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z * z * z)))


def _middle(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``(lower + upper)/2``, or ``lower/2 + upper/2`` where the sum overflows (the same float
    wherever the first form is finite)."""
    with np.errstate(over="ignore"):
        middle = 0.5 * (lower + upper)
    overflow = ~np.isfinite(middle)
    if overflow.any():
        middle[overflow] = 0.5 * lower[overflow] + 0.5 * upper[overflow]
    return middle


def virtual_bins(
    moments: Moments, n_bins: int = 32, var_smoothing: float = 1e-9, max_variance: float | None = None
) -> Bins:
    """Expected class counts of each class's Gaussian on a grid of pooled quantiles (virtual bins for MODL).

    Cut points ``b_1 < … < b_{B−1}`` are (approximately) the ``i/B`` quantiles of the pooled
    mixture ``Σ_j W_j N(μ_j, σ̃_j²) / W``; bin ``i`` gets, for class ``j``,
    ``W_j · [Φ((b_i − μ_j)/σ̃_j) − Φ((b_{i−1} − μ_j)/σ̃_j)]`` with ``b_0 = −∞`` and ``b_B = +∞``, so
    every column sums to ``W_j`` (up to rounding). The parameters ``μ_j, σ̃_j`` are those of the
    density (``smoothed_parameters``). The placement of the cuts uses a fast approximation of
    Φ; the counts use the exact Φ. Equal cut points (a constant feature) are collapsed, so the
    table may hold fewer than ``n_bins`` bins. The last upper bound is ``max_j μ_j + 8σ̃_j``.

    Returns
    -------
    Bins with ``upper_bounds (n,)`` and fractional ``counts (n, n_classes)``, ``n ≤ n_bins``.

    Examples
    --------
    >>> m = Moments([100.0, 100.0], [0.0, 4.0], [1.0, 1.0], ("a", "b"), [0.0, 0.0])
    >>> bins = virtual_bins(m, n_bins=4)
    >>> bins.upper_bounds.round(3).tolist()
    [0.0, 2.0, 4.0, 12.0]
    >>> bins.counts.round(1).tolist()
    [[50.0, 0.0], [47.7, 2.3], [2.3, 47.7], [0.0, 50.0]]
    """
    integer(n_bins, "n_bins", low=1)
    n_classes = len(moments.classes)
    weights_ = moments.weights
    total = float(weights_.sum())
    if total <= 0:
        return Bins(np.zeros(0), np.zeros((0, n_classes)), moments.classes, moments.missing)
    means, variances = smoothed_parameters(moments, var_smoothing, max_variance)
    sigmas = np.sqrt(variances)
    active = weights_ > 0
    shares = weights_[active] / total
    mu, sd = means[active], sigmas[active]
    low, high = float(np.min(mu - 10 * sd)), float(np.max(mu + 10 * sd))
    targets = np.arange(1, n_bins) / n_bins  # (n_bins − 1,)
    lower = np.full(len(targets), low)
    upper = np.full(len(targets), high)
    for _ in range(60):  # bisection on the mixture CDF, all targets at once
        middle = _middle(lower, upper)
        with np.errstate(over="ignore", invalid="ignore"):
            cdf = _approximate_normal_cdf((middle[:, None] - mu[None, :]) / sd[None, :]) @ shares
        below = cdf < targets
        lower = np.where(below, middle, lower)
        upper = np.where(below, upper, middle)
    cuts = np.unique(_middle(lower, upper))
    last = float(np.max(mu + 8 * sd))
    if len(cuts) and not last > cuts[-1]:
        with np.errstate(over="ignore"):
            last = float(np.nextafter(cuts[-1], math.inf))
        if not math.isfinite(last):  # the last cut is the largest float: it closes the last bin
            cuts, last = cuts[:-1], float(cuts[-1])
    upper_bounds = np.append(cuts, last)  # (n,)
    cdf = np.zeros((len(cuts) + 2, n_classes))  # Φ at −∞, the cuts, +∞
    with np.errstate(over="ignore"):
        cdf[1:-1] = normal_cdf((cuts[:, None] - means[None, :]) / sigmas[None, :])
    cdf[-1] = 1.0
    counts = np.diff(cdf, axis=0) * weights_[None, :]  # (n, n_classes)
    return Bins(upper_bounds, counts, moments.classes, moments.missing)
