"""Merged shards against one model (docs/algorithms/merge.md, "Quality"): four models trained on
four round-robin shards of a stream, merged with ``WeightedNaiveBayes.merge``, against one model
trained on the whole stream, on held-out rows: the share of rows where both predict the same
class, the log loss and accuracy of each.

Usage (from the repository root)::

    python benchmarks/merge_quality.py            # SEA, Phishing, Agrawal 0, RandomRBF
"""

from __future__ import annotations

import math
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from river import datasets
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes

STREAMS = {
    "SEA": (lambda: synth.SEA(seed=7).take(10_000), 8000),
    "Phishing": (lambda: datasets.Phishing(), 1000),
    "Agrawal 0": (lambda: synth.Agrawal(classification_function=0, seed=7).take(10_000), 8000),
    "RandomRBF": (lambda: synth.RandomRBF(seed_model=7, seed_sample=7, n_classes=3, n_features=10).take(10_000), 8000),
}


def compare(rows: list, n_train: int, shards: int = 4, **params) -> dict:
    train, test = rows[:n_train], rows[n_train:]
    whole = WeightedNaiveBayes(**params)
    parts = [WeightedNaiveBayes(**params) for _ in range(shards)]
    for i, (x, y) in enumerate(train):
        whole.learn_one(x, y)
        parts[i % shards].learn_one(x, y)
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    same = accuracy_whole = accuracy_merged = loss_whole = loss_merged = 0.0
    for x, y in test:
        p, q = whole.predict_proba_one(x), merged.predict_proba_one(x)
        cp, cq = max(p, key=p.get), max(q, key=q.get)
        same += cp == cq
        accuracy_whole += cp == y
        accuracy_merged += cq == y
        loss_whole -= math.log(max(p.get(y, 0.0), 1e-15))
        loss_merged -= math.log(max(q.get(y, 0.0), 1e-15))
    n = len(test)
    return {"same": same / n, "log loss whole": loss_whole / n, "log loss merged": loss_merged / n,
            "accuracy whole": accuracy_whole / n, "accuracy merged": accuracy_merged / n}  # fmt: skip


def main() -> None:
    print("| stream | same class | log loss, one model | log loss, merged | accuracy, one | accuracy, merged | s |")
    print("|:---|---:|---:|---:|---:|---:|---:|")
    for name, (make, n_train) in STREAMS.items():
        start = time.perf_counter()
        r = compare(list(make()), n_train, seed=1)
        print(f"| {name} | {r['same']:.2%} | {r['log loss whole']:.4f} | {r['log loss merged']:.4f} | "
              f"{r['accuracy whole']:.2%} | {r['accuracy merged']:.2%} | {time.perf_counter() - start:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
