"""Streams and checks shared by the merge and rounds tests: a mixed three-class stream, models fed
with it, and the class and category counts two models must share."""

from __future__ import annotations

import numpy as np
import pytest

from wnb_stream import WeightedNaiveBayes, summaries, weights


def stream(seed: int, n: int, labels=("a", "b", "c"), features=("u", "v", "colour")):
    """``n`` rows whose class depends on every feature; the dicts list ``features`` in that order,
    the first rows hold the classes in the order of ``labels``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        j = i if i < len(labels) else int(rng.integers(len(labels)))
        values = {
            "u": float(rng.normal(j, 1.0)),
            "v": float(rng.normal(-j, 2.0)) if rng.random() > 0.1 else None,
            "colour": ["red", "green", "blue", "grey"][min(3, j + int(rng.random() < 0.3))],
        }
        rows.append(({name: values[name] for name in features}, labels[j]))
    return rows


def fit(rows, **params) -> WeightedNaiveBayes:
    model = WeightedNaiveBayes(**{"drift_delta": None, "seed": 1, **params})
    for x, y in rows:
        model.learn_one(x, y)
    return model


EXACT = {"numeric": summaries.Gaussian(), "optimizer": weights.Uniform()}


def fed(model) -> WeightedNaiveBayes:
    """``model`` with every numeric summary fed the history rows it has not taken yet (the lazy
    feed of ``registry.py``, which a merge does first)."""
    e = model._engine
    e.registry.feed(np.arange(len(e.registry)), e.history, e.classes)
    return model


def summary_of(model, name):
    e = model._engine
    return e.registry.variables[e.registry.index[name]].summary


def by_class(model) -> dict:
    c = model._engine.classes
    return {label: (c.counts[j], c.seen[j]) for j, label in enumerate(c.labels)}


def categories(model, name) -> dict:
    """``{(value, class): count}`` of a categorical summary, missing and star counts included."""
    table = summary_of(model, name).table()
    out = {("<missing>", c): float(table.missing[j]) for j, c in enumerate(table.classes)}
    out.update({("<star>", c): float(table.star[j]) for j, c in enumerate(table.classes)})
    for value, row in zip(table.values, np.asarray(table.counts)):
        out.update({(value, c): float(row[j]) for j, c in enumerate(table.classes)})
    return {key: count for key, count in out.items() if count}


def moments(model, name) -> dict:
    """``{class: (weight, mean, variance)}`` of a Gaussian summary."""
    table = summary_of(model, name).table()
    return {c: (table.weights[j], table.means[j], table.variances[j]) for j, c in enumerate(table.classes)}


def assert_counts_equal(merged, whole) -> None:
    """Everything exact in a merge: class counts, observations, categorical counts; Gaussian moments up to rounding."""
    assert by_class(merged) == by_class(whole)
    observations = {v.name: c for v, c in zip(merged._engine.registry.variables, merged._engine.registry.count)}
    assert observations == {v.name: c for v, c in zip(whole._engine.registry.variables, whole._engine.registry.count)}
    assert categories(merged, "colour") == categories(whole, "colour")
    for name in ("u", "v"):
        ours, theirs = moments(merged, name), moments(whole, name)
        assert set(ours) == set(theirs)
        for c in ours:
            assert ours[c] == pytest.approx(theirs[c], rel=1e-9)


def probabilities(model, rows) -> list[dict]:
    return [model.predict_proba_one(x) for x, _ in rows]
