"""Messages, models and counts shared by the partitioned-training tests and the Ray tests: a mixed
three-class stream of messages, a model whose counts are exact, and the class and category
counts a model must hold after absorbing every message once."""

from __future__ import annotations

import collections
import functools
import json

import numpy as np

from wnb_stream import WeightedNaiveBayes, summaries, weights
from wnb_stream.stream import JSONLinesSource


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


def shards(tmp_path, parts) -> dict:
    """``{"shard-p": factory}`` of JSON-lines files under ``tmp_path``, one per part of messages."""
    sources = {}
    for p, part in enumerate(parts):
        path = tmp_path / f"shard-{p}.jsonl"
        path.write_text("".join(json.dumps(m) + "\n" for m in part))
        sources[f"shard-{p}"] = functools.partial(JSONLinesSource, str(path))
    return sources
