"""The weighted naive Bayes criterion and its gradient, as pure functions.

docs/algorithms/weights.md#criterion describes them.

Shapes: ``log_lik (n, K, J)`` holds ℓ_kj(x_n) = log p(x_nk | C_j); ``log_prior (J,)``;
``y (n,)`` class indices; ``sample_weight (n,)``; ``weights (K,)`` or a stack ``(m, K)`` of
candidate weight vectors (evaluated in one pass over ``log_lik``).

- Scores: ``s_nj = log P(C_j) + Σ_k w_k ℓ_nkj``, i.e. ``einsum("nkj,k->nj")``; computed as
  the batched product ``w @ log_lik``: NumPy's matmul beats its einsum on this contraction, by
  1.3× to 23× over K ∈ {10, 100, 1000}, J ∈ {2, 10}, N = 10^4 (``benchmarks/bench_weights.py``).
- Posteriors by the max-shifted log-sum-exp, finite for scores of any magnitude; a class whose
  log prior is −inf gets probability exactly 0 (never NaN).
- Data term: ``NLL = −Σ_n s_n log P_w(y_n | x_n)`` and
  ``∂NLL/∂w_k = Σ_n s_n Σ_j (P_nj − [y_n = j]) ℓ_nkj`` (expected minus observed ℓ).
- Criterion (HBL17 eq. 1.4): ``CR(w) = NLL(w) + λ R(w)`` on a reference set.
- Step gradient: ``(1/L) Σ_{n∈batch} s_n ∇NLL_n + (λ/N_ref) ∇R`` with L and N_ref the
  total sample weights of the batch and of the reference set, so that the regularizer weighs the
  same in the step as in the criterion judging it. (HBL17's Algorithm 1 writes
  ``(1/L) ∇CR^{batch}``, i.e. ``λ/L``; docs/algorithms/weights.md#criterion explains the choice
  made here.)

Preconditions: ℓ is finite (level 2 never yields log 0); every row has at least one class with a
finite log prior; the class of every row with positive weight has a finite log prior.
Rows with sample weight 0 contribute nothing. Cost: O(n·K·J) time, O(n·m·J) extra memory.
"""

from __future__ import annotations

import functools

import numpy as np

from .._threads import pieces, run_all
from .base import Batch
from .regularizers import Regularizer

__all__ = [
    "compression_rate",
    "criterion",
    "criterion_gradient",
    "log_softmax",
    "negative_log_likelihood",
    "negative_log_likelihood_and_gradient",
    "negative_log_likelihood_gradient",
    "scores",
    "softmax",
]


def scores(log_lik: np.ndarray, log_prior: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Unnormalised log posteriors ``s = log_prior + Σ_k w_k ℓ_k`` (the log numerator of HBL17 eq. 1.2).

    Returns ``(n, J)`` for ``weights (K,)`` and ``(n, m, J)`` for a stack ``weights (m, K)``.

    Examples
    --------
    >>> log_lik = np.log([[[0.7, 0.2], [0.4, 0.5]]])        # (1, 2, 2)
    >>> scores(log_lik, np.log([0.6, 0.4]), np.array([0.5, 0.5])).round(6).tolist()
    [[-1.147308, -2.067583]]
    """
    log_prior = np.asarray(log_prior, dtype=float)
    weights = np.asarray(weights, dtype=float)
    # einsum("nkj,k->nj") as a broadcast matrix-vector product over rows: (K,) @ (n, K, J)
    if weights.ndim == 1:
        product = lambda rows, out: np.matmul(weights, log_lik[rows], out=out)  # noqa: E731
        return log_prior + _by_rows(product, (log_lik.shape[0], log_lik.shape[-1]), log_lik.size)
    # a stack: one product per candidate is faster than the batched (m, K) @ (n, K, J)
    return log_prior + np.stack([np.matmul(w, log_lik) for w in weights], axis=1)


def _log_normaliser(values: np.ndarray) -> np.ndarray:
    """``LSE`` over the last axis with the max shift, shape ``values.shape[:-1]``.

    Loops over the (few) classes: NumPy reduces a short last axis slowly, a column at a time is
    faster (2.5–10× for J ∈ {2, 10}, N = 10^4, ``benchmarks/bench_weights.py``). A row of −inf gets −inf.
    """
    n_classes = values.shape[-1]
    top = values[..., 0].copy()
    for j in range(1, n_classes):
        np.maximum(top, values[..., j], out=top)
    top[~np.isfinite(top)] = 0.0
    total = np.zeros_like(top)
    for j in range(n_classes):
        total += np.exp(values[..., j] - top)
    with np.errstate(divide="ignore"):
        return top + np.log(total)


def log_softmax(values: np.ndarray) -> np.ndarray:
    """``log P_j = s_j − LSE(s)`` along the last axis, with the max shift.

    Stays finite for scores of ±1e4; entries of −inf get −inf (probability 0)
    (docs/algorithms/prediction.md#log-sum-exp).

    Examples
    --------
    >>> log_softmax(np.array([[1e4, -1e4, 0.0]])).tolist()
    [[0.0, -20000.0, -10000.0]]
    """
    values = np.asarray(values, dtype=float)
    return values - _log_normaliser(values)[..., None]


def softmax(values: np.ndarray) -> np.ndarray:
    """Posterior probabilities ``exp(log_softmax(values))``; rows sum to 1."""
    return np.exp(log_softmax(values))


def _rows(n: int, y: np.ndarray, sample_weight: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=np.intp)
    if sample_weight is None:
        return y, np.ones(n)
    return y, np.asarray(sample_weight, dtype=float)


def negative_log_likelihood(
    weights: np.ndarray,
    log_lik: np.ndarray,
    y: np.ndarray,
    log_prior: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> float | np.ndarray:
    """``−Σ_n s_n log P_w(y_n | x_n)``: a float for ``weights (K,)``, ``(m,)`` for ``(m, K)``.

    Examples
    --------
    >>> log_lik = np.log([[[0.7, 0.2], [0.4, 0.5]]])
    >>> round(negative_log_likelihood(np.array([0.5, 0.5]), log_lik, [1], np.log([0.6, 0.4])), 6)
    1.25561
    """
    n = log_lik.shape[0]
    y, sample_weight = _rows(n, y, sample_weight)
    weights = np.asarray(weights, dtype=float)
    if weights.ndim == 2:
        return np.array([negative_log_likelihood(w, log_lik, y, log_prior, sample_weight) for w in weights])
    values = scores(log_lik, log_prior, weights)  # (n, J)
    used = sample_weight > 0  # a row of weight 0 contributes nothing, even at probability 0
    if not used.all():
        values, y, sample_weight = values[used], y[used], sample_weight[used]
    observed = values[np.arange(len(y)), y] - _log_normaliser(values)  # log P_w(y_n | x_n)
    return -float(np.dot(sample_weight, observed))


def negative_log_likelihood_and_gradient(
    weights: np.ndarray,
    log_lik: np.ndarray,
    y: np.ndarray,
    log_prior: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """The NLL (float) and its ``(K,)`` gradient, sharing one softmax; ``weights (K,)``.

    ``∂NLL/∂w_k = Σ_n s_n (Σ_j P_nj ℓ_nkj − ℓ_nk,y_n)`` (HBL17 eq. 1.9).

    Examples
    --------
    >>> log_lik = np.log([[[0.7, 0.2], [0.4, 0.5]]])
    >>> value, grad = negative_log_likelihood_and_gradient(
    ...     np.array([0.5, 0.5]), log_lik, [1], np.log([0.6, 0.4]))
    >>> round(value, 6), grad.round(6).tolist()
    (1.25561, [0.895848, -0.15957])
    """
    n = log_lik.shape[0]
    y, sample_weight = _rows(n, y, sample_weight)
    values = scores(log_lik, log_prior, weights)  # (n, J)
    log_posterior = values - _log_normaliser(values)[:, None]
    rows = np.arange(n)
    used = sample_weight > 0
    value = -float(np.dot(sample_weight[used], log_posterior[rows[used], y[used]]))
    residual = np.exp(log_posterior)  # (n, J): P − T, scaled by the sample weight
    residual[rows, y] -= 1.0
    residual *= sample_weight[:, None]
    # einsum("nj,nkj->k", residual, log_lik) as batched matrix-vector products
    product = lambda rows, out: np.matmul(log_lik[rows], residual[rows, :, None], out=out)  # noqa: E731
    products = _by_rows(product, (*log_lik.shape[:2], 1), log_lik.size)
    gradient = products.sum(axis=0)[:, 0]  # (K,)
    return value, gradient


#: Cells of ``log_lik`` from which a product over its rows runs in pieces of rows in threads
#: (``_threads``: NumPy's matmul releases the GIL). Each row's product is the same call on the
#: same row either way, so the same floats: a round's step at K = 1,000 scores 25 million cells
#: 69 times; a small window stays in the calling thread.
PARALLEL_CELLS = 1 << 21


def _by_rows(product, shape: tuple, cells: int) -> np.ndarray:
    """A new ``out`` of ``shape`` (its first axis: rows) filled by ``product(rows, out[rows])``
    (``rows`` a slice), in pieces of rows run in threads when the input holds ``cells`` ≥
    ``PARALLEL_CELLS``, else in one call."""
    out = np.empty(shape)
    run_all([functools.partial(product, slice(a, b), out[a:b]) for a, b in pieces(shape[0], large=cells >= PARALLEL_CELLS)])
    return out


def negative_log_likelihood_gradient(
    weights: np.ndarray,
    log_lik: np.ndarray,
    y: np.ndarray,
    log_prior: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> np.ndarray:
    """``(K,)`` gradient of :func:`negative_log_likelihood` for ``weights (K,)``."""
    return negative_log_likelihood_and_gradient(weights, log_lik, y, log_prior, sample_weight)[1]


def _default_costs(n_variables: int) -> np.ndarray:
    # No knowledge of the preparation cost: B^prep = 1 (HBL17 §1.2), plus the selection cost log K
    return np.full(n_variables, np.log(max(n_variables, 1)) + 1.0)


def criterion(
    weights: np.ndarray,
    data: Batch,
    prior_costs: np.ndarray | None = None,
    regularizer: Regularizer | None = None,
) -> float | np.ndarray:
    """``CR(w) = Σ_n s_n NLL_n(w) + λ R(w)`` on ``data`` (HBL17 eq. 1.4/1.5, HB24 eq. 11).

    ``weights (K,)`` gives a float, a stack ``(m, K)`` gives ``(m,)``. ``prior_costs (K,)`` are the
    B_k of ``Context`` (None: log K + 1 for every variable). Cost O(n·K·J).

    Examples
    --------
    >>> from wnb_stream.weights import Batch
    >>> data = Batch(np.log([[[0.7, 0.2], [0.4, 0.5]]]), np.array([1]), np.ones(1), np.log([0.6, 0.4]))
    >>> round(criterion(np.array([0.5, 0.5]), data, np.array([3.0, 2.0]), Regularizer("r1")), 6)
    1.40561
    """
    weights = np.asarray(weights, dtype=float)
    value = negative_log_likelihood(weights, data.log_lik, data.y, data.log_prior, data.sample_weight)
    if regularizer is None:
        return value
    if prior_costs is None:
        prior_costs = _default_costs(weights.shape[-1])
    if weights.ndim == 1:
        return value + regularizer.value(weights, prior_costs)
    return value + np.array([regularizer.value(w, prior_costs) for w in weights])


def criterion_gradient(
    weights: np.ndarray,
    batch: Batch,
    prior_costs: np.ndarray | None = None,
    regularizer: Regularizer | None = None,
    reference_size: float | None = None,
) -> np.ndarray:
    """``(K,)`` per-example step gradient ``(1/L) Σ_batch s_n ∇NLL_n + (λ/N_ref) ∇R``.

    L is the total sample weight of ``batch`` and N_ref = ``reference_size`` (default L): the
    gradient of ``CR^{reference}/N_ref`` estimated on the batch (the scaling is explained in
    docs/algorithms/weights.md#criterion). A batch of weight 0 gives a data term of 0.
    Cost O(L·K·J).

    Examples
    --------
    >>> from wnb_stream.weights import Batch
    >>> data = Batch(np.log([[[0.7, 0.2], [0.4, 0.5]]]), np.array([1]), np.ones(1), np.log([0.6, 0.4]))
    >>> criterion_gradient(np.array([0.5, 0.5]), data).round(6).tolist()
    [0.895848, -0.15957]
    """
    weights = np.asarray(weights, dtype=float)
    total_weight = float(np.sum(batch.sample_weight))
    if total_weight > 0:
        _, data_gradient = negative_log_likelihood_and_gradient(
            weights, batch.log_lik, batch.y, batch.log_prior, batch.sample_weight
        )
        gradient = data_gradient / total_weight
    else:
        gradient = np.zeros(weights.shape[-1])
    if regularizer is not None:
        if prior_costs is None:
            prior_costs = _default_costs(weights.shape[-1])
        if reference_size is None:
            reference_size = total_weight
        if reference_size > 0:
            gradient = gradient + regularizer.gradient(weights, prior_costs) / reference_size
    return gradient


def compression_rate(
    true_class_proba: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> float:
    """Compression rate ``1 − NLL / (N·H(Y))`` (docs/algorithms/prediction.md#metrics, Khiops' evaluation).

    ``true_class_proba (n,)`` is the predicted probability of each row's true class, clipped to
    [1e-6, 1]; H(Y) is the (weighted) entropy of the class frequencies of ``y (n,)``. The rate is 0
    when H(Y) = 0 and is rounded to 0 when ``|rate| < H(Y)/N``. Range (−∞, 1]: 1 is a perfect
    model, 0 no better than the class prior.

    Examples
    --------
    >>> compression_rate(np.array([0.5, 0.5]), np.array([0, 1]))
    0.0
    >>> round(compression_rate(np.array([0.9, 0.8, 0.9, 0.7]), np.array([0, 1, 0, 1])), 6)
    0.714873
    """
    proba = np.clip(np.asarray(true_class_proba, dtype=float), 1e-6, 1.0)
    y, sample_weight = _rows(len(proba), y, sample_weight)
    total = float(sample_weight.sum())
    if total <= 0:
        return 0.0
    frequencies = np.bincount(y, weights=sample_weight) / total
    frequencies = frequencies[frequencies > 0]
    entropy = float(-np.dot(frequencies, np.log(frequencies)))
    if entropy <= 0:
        return 0.0
    rate = 1.0 - float(-np.dot(sample_weight, np.log(proba))) / (total * entropy)
    return 0.0 if abs(rate) < entropy / total else rate
