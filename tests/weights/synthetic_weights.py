"""Synthetic log-likelihood streams for the weight-learner tests (arrays only, no summaries)."""

from __future__ import annotations

import numpy as np

from wnb_stream.weights import Batch, Context


def make_rows(
    rng: np.random.Generator,
    n: int,
    n_informative: int = 5,
    n_noise: int = 15,
    n_classes: int = 2,
    accuracy: float = 0.7,
    duplicates: int = 0,
) -> Batch:
    """``n`` rows: informative variables whose ℓ depends on y, then noise, then exact duplicates.

    An informative variable points at the true class with probability ``accuracy`` (else at a
    uniformly drawn wrong class) and its ℓ is the exact log-likelihood of that evidence, so the
    naive Bayes with weight 1 is calibrated on them. A noise variable has ℓ = log of a Dirichlet(1)
    draw, independent of y. Duplicates copy the first ``duplicates`` informative variables.
    """
    j = n_classes
    y = rng.integers(0, j, n)  # (n,)
    hit = rng.random((n, n_informative)) < accuracy
    wrong = (y[:, None] + rng.integers(1, j, (n, n_informative))) % j
    pointed = np.where(hit, y[:, None], wrong)  # (n, n_informative)
    # P(point at c | C = j) = accuracy if c == j else (1 − accuracy)/(J − 1)
    informative = np.where(
        pointed[:, :, None] == np.arange(j), np.log(accuracy), np.log((1 - accuracy) / (j - 1))
    )  # (n, n_informative, J)
    noise = np.log(rng.dirichlet(np.ones(j), size=(n, n_noise)))  # (n, n_noise, J)
    parts = [informative, noise, informative[:, :duplicates, :]]
    log_lik = np.concatenate(parts, axis=1)
    return Batch(log_lik, y, np.ones(n), np.full(j, -np.log(j)))


def context_for(n_variables: int, active=None) -> Context:
    costs = np.full(n_variables, np.log(n_variables) + 1.0)
    active = np.ones(n_variables, bool) if active is None else np.asarray(active, bool)
    return Context(prior_costs=costs, active=active)


def concat(batches: list[Batch]) -> Batch:
    """One batch holding the rows of ``batches`` in order (a history window)."""
    return Batch(
        np.concatenate([b.log_lik for b in batches]),
        np.concatenate([b.y for b in batches]),
        np.concatenate([b.sample_weight for b in batches]),
        batches[-1].log_prior,
    )


def finite_difference(function, w: np.ndarray, h: float) -> np.ndarray:
    """Central finite differences of a scalar ``function`` at ``w``, ``(K,)``."""
    out = np.empty_like(w)
    for i in range(len(w)):
        up, down = w.copy(), w.copy()
        up[i] += h
        down[i] -= h
        out[i] = (function(up) - function(down)) / (2 * h)
    return out


def problem(seed: int, n: int = 60, n_informative: int = 2, n_noise: int = 3, n_classes: int = 2, zero_rows: bool = True) -> Batch:
    """A window with some rows of sample weight 0 and uneven weights."""
    rng = np.random.default_rng(seed)
    data = make_rows(rng, n, n_informative, n_noise, n_classes, accuracy=0.75)
    sample_weight = rng.uniform(0.2, 2.0, n)
    if zero_rows:
        sample_weight[rng.random(n) < 0.1] = 0.0
    return Batch(data.log_lik, data.y, sample_weight, np.log(rng.dirichlet(np.ones(n_classes) * 5)))


def costs(k: int, seed: int = 0) -> np.ndarray:
    return np.log(k) + np.random.default_rng(seed).uniform(0.5, 3.0, k)
