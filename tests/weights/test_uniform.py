"""Uniform: the plain naive Bayes."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_weights import make_rows

from wnb_stream.weights import Uniform


def test_scores_are_the_plain_naive_bayes():
    batch = make_rows(np.random.default_rng(0), 20, n_classes=3)
    model = Uniform()
    model.reset(batch.log_lik.shape[1], 3)
    model.learn(batch, batch, None)
    np.testing.assert_allclose(model.scores(batch.log_lik, batch.log_prior), batch.log_prior + batch.log_lik.sum(axis=1))
    np.testing.assert_array_equal(model.weights, np.ones(batch.log_lik.shape[1]))
    coefficients, offsets = model.coefficients(4, 3)
    assert coefficients.shape == (4, 3) and np.all(coefficients == 1) and np.all(offsets == 0)


def test_sizes_follow_resize_and_learn():
    model = Uniform()
    model.reset(0, 0)
    assert model.weights.shape == (0,)
    model.resize(3, 2)
    assert model.weights.shape == (3,)
    model.learn(make_rows(np.random.default_rng(1), 5, n_informative=2, n_noise=3), None, None)
    assert model.weights.shape == (5,)
    assert not model.problems()


def test_clone_and_repr():
    model = Uniform(batch_size=50)
    assert model.clone().batch_size == 50
    assert "Uniform" in repr(model)
    with pytest.raises(ValueError, match="batch_size"):
        Uniform(batch_size=0)
