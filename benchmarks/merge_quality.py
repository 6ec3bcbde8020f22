"""Merged shards against one model (docs/algorithms/merge.md, "Quality"): four models trained on
four round-robin shards of a stream, merged with ``WeightedNaiveBayes.merge``, against one model
trained on the whole stream, on held-out rows: the share of rows where both predict the same
class, the log loss and accuracy of each.

Part 2 (``--part rounds``, docs/algorithms/merge.md, "Rounds"): one model trained in rounds of
``--round`` rows over four round-robin partitions (``WeightedNaiveBayes.absorb``), its deltas
absorbed one by one or first merged in a tree (``Delta.merge``: ((d0 + d1) + (d2 + d3))),
against one model on the whole stream and against that model trained on the same rows in
another (seeded) order: the share of held-out rows where two models predict the same class, and
the log loss of each.

Usage (from the repository root)::

    python benchmarks/merge_quality.py                  # both parts: SEA, Phishing, Agrawal 0, RandomRBF
    python benchmarks/merge_quality.py --part rounds --round 1000
"""

from __future__ import annotations

import argparse
import math
import random
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


def in_rounds(train: list, per_round: int, shards: int, tree: bool, **params) -> WeightedNaiveBayes:
    """A model trained in rounds of ``per_round`` rows, each shared round-robin among ``shards``
    deltas, absorbed one by one or merged pairwise first (``tree``)."""
    model = WeightedNaiveBayes(**params)
    for start in range(0, len(train), per_round):
        deltas = [model.delta() for _ in range(shards)]
        for i, (x, y) in enumerate(train[start : start + per_round]):
            deltas[i % shards].learn_one(x, y)
        while tree and len(deltas) > 1:  # ((d0 + d1) + (d2 + d3)) …
            for left, right in zip(deltas[::2], deltas[1::2]):
                left.merge(right)
            deltas = deltas[::2]
        model.absorb(deltas)
    return model


def held_out(models: dict, test: list) -> tuple[dict, dict]:
    """Each model's predicted class and log loss on ``test``."""
    classes, losses = {}, {}
    for name, model in models.items():
        predicted, loss = [], 0.0
        for x, y in test:
            p = model.predict_proba_one(x)
            predicted.append(max(p, key=p.get))
            loss -= math.log(max(p.get(y, 0.0), 1e-15))
        classes[name], losses[name] = predicted, loss / len(test)
    return classes, losses


def rounds(args) -> None:
    print(f"Rounds of {args.round:,} rows (at most a quarter of the training rows) over 4 partitions, against one model on the whole stream (held-out rows):\n")
    print("| stream | one model, another order | rounds, one by one | rounds, tree | tree vs one by one | "
          "log loss: one | another order | one by one | tree |")  # fmt: skip
    print("|:---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (make, n_train) in STREAMS.items():
        rows = list(make())
        train, test = rows[:n_train], rows[n_train:]
        shuffled = random.Random(7).sample(train, len(train))
        models = {"one": WeightedNaiveBayes(seed=1), "order": WeightedNaiveBayes(seed=1)}
        for (x, y), (x2, y2) in zip(train, shuffled):
            models["one"].learn_one(x, y)
            models["order"].learn_one(x2, y2)
        per_round = min(args.round, n_train // 4)  # (at least four rounds: Phishing's 1,000 rows in rounds of 250)
        models["rounds"] = in_rounds(train, per_round, 4, False, seed=1)
        models["tree"] = in_rounds(train, per_round, 4, True, seed=1)
        classes, losses = held_out(models, test)

        def same(a, b):
            return sum(p == q for p, q in zip(classes[a], classes[b])) / len(test)

        print(f"| {name} | {same('one', 'order'):.2%} | {same('one', 'rounds'):.2%} | {same('one', 'tree'):.2%} | "
              f"{same('rounds', 'tree'):.2%} | {losses['one']:.4f} | {losses['order']:.4f} | {losses['rounds']:.4f} | "
              f"{losses['tree']:.4f} |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("merge", "rounds", "both"), default="both")
    parser.add_argument("--round", type=int, default=1000, help="stream rows per round (part 2)")
    args = parser.parse_args()
    if args.part in ("merge", "both"):
        print("| stream | same class | log loss, one model | log loss, merged | accuracy, one | accuracy, merged | s |")
        print("|:---|---:|---:|---:|---:|---:|---:|")
        for name, (make, n_train) in STREAMS.items():
            start = time.perf_counter()
            r = compare(list(make()), n_train, seed=1)
            print(f"| {name} | {r['same']:.2%} | {r['log loss whole']:.4f} | {r['log loss merged']:.4f} | "
                  f"{r['accuracy whole']:.2%} | {r['accuracy merged']:.2%} | {time.perf_counter() - start:.0f} |")  # fmt: skip
    if args.part in ("rounds", "both"):
        rounds(args)


if __name__ == "__main__":
    main()
