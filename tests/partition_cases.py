"""Messages, models and counts shared by the partitioned-training tests and the Ray tests: a mixed
three-class stream of messages, a model whose counts are exact, and the class and category
counts a model must hold after absorbing every message once."""

from __future__ import annotations

import collections

import numpy as np

from wnb_stream import WeightedNaiveBayes, summaries, weights


def messages(seed: int, n: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        j = int(rng.integers(3))
        x = {"u": float(rng.normal(j, 1.0)), "colour": ["red", "green", "blue", "grey"][min(3, j + int(rng.integers(2)))]}
        out.append({"x": x, "y": "abc"[j]})
    return out


def exact_model() -> WeightedNaiveBayes:
    return WeightedNaiveBayes(numeric=summaries.Gaussian(), optimizer=weights.Uniform(), history_size=300, seed=1)


def counts_of(model) -> tuple[dict, dict]:
    c = model._engine.classes
    classes = {label: c.seen[j] for j, label in enumerate(c.labels)}
    e = model._engine
    table = e.registry.variables[e.registry.index["colour"]].summary.table()
    colours = {(v, cl): float(row[j]) for v, row in zip(table.values, np.asarray(table.counts)) for j, cl in enumerate(table.classes) if row[j]}
    return classes, colours


def expected_counts(parts) -> tuple[dict, dict]:
    classes = collections.Counter(m["y"] for part in parts for m in part)
    colours = collections.Counter((m["x"]["colour"], m["y"]) for part in parts for m in part)
    return {k: float(v) for k, v in classes.items()}, {k: float(v) for k, v in colours.items()}
