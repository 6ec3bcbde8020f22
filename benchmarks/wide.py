"""Wide dense streams: K numeric variables, a few of them informative, in mini-batches.

A seeded synthetic stream: two balanced classes; ``--informative`` variables are Gaussian with a
class-dependent mean (shifts 0.25–1 standard deviations, spread among the others at random), the
other ``K − informative`` are standard Gaussian noise. Our default model
(``WeightedNaiveBayes(seed=…)``: GK summaries, VNS weights) and River's ``GaussianNB`` take the
stream in DataFrames of ``--batch`` rows, ``predict_proba_many`` then ``learn_many`` (the first
batch is only learned).

Reported per model: accuracy and log loss over the predicted rows, the time of its own calls,
``memory_usage()`` and the process's peak RSS; for ours the variables in level 3 (the slots,
``docs/algorithms/prediction.md#compact-window``), the variables weighted (w > 0) and how many of
those are informative, and the informative variables at MODL Level > 0.

    python benchmarks/wide.py --K 10000 --n 5000
"""

from __future__ import annotations

import argparse
import math
import resource
import time

import numpy as np
from common import RESULTS, ResultFile, markdown, provenance


def stream(K: int, n: int, informative: int, seed: int):
    """``(X (n, K) float array, y (n,) ints, names, the informative names)``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, K))
    y = rng.integers(0, 2, size=n)
    hot = rng.choice(K, size=informative, replace=False)
    shift = rng.uniform(0.25, 1.0, size=informative) * rng.choice([-1.0, 1.0], size=informative)
    X[:, hot] += np.where(y[:, None] == 1, shift, 0.0)
    names = [f"x{k}" for k in range(K)]
    return X, y, names, {names[k] for k in hot}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--K", type=int, default=10000, help="variables")
    parser.add_argument("--n", type=int, default=5000, help="rows")
    parser.add_argument("--informative", type=int, default=20)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--models", default="wnb,gnb")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", default=str(RESULTS / "wide.csv"))
    args = parser.parse_args()

    import pandas as pd
    from river import naive_bayes

    from wnb_stream import WeightedNaiveBayes

    makers = {"wnb": lambda: WeightedNaiveBayes(seed=args.seed), "gnb": naive_bayes.GaussianNB}
    X, y, names, informative = stream(args.K, args.n, args.informative, args.seed)
    frame, labels = pd.DataFrame(X, columns=names), pd.Series(y)
    info = provenance()
    results = ResultFile(args.output, info)
    out = []
    for name in args.models.split(","):
        model = makers[name]()
        seconds, hits, loss, predicted = 0.0, 0, 0.0, 0
        for start in range(0, args.n, args.batch):
            Xb, yb = frame.iloc[start : start + args.batch], labels.iloc[start : start + args.batch]
            t = time.perf_counter()
            p = model.predict_proba_many(Xb) if start else None
            model.learn_many(Xb, yb)
            seconds += time.perf_counter() - t
            if p is not None and len(p.columns):
                p = p.reindex(columns=[0, 1], fill_value=0.0).to_numpy()
                truth = yb.to_numpy()
                hits += int((p.argmax(axis=1) == truth).sum())
                loss -= float(np.log(np.clip(p[np.arange(len(truth)), truth], 1e-15, 1.0)).sum())
                predicted += len(truth)
        row = {"model": name, "K": args.K, "n": args.n, "informative": args.informative, "batch": args.batch,
               "accuracy": hits / predicted, "log_loss": loss / predicted, "seconds": seconds, "examples_per_s": args.n / seconds,
               "memory_usage_mib": model.memory_usage() / 2**20 if hasattr(model, "memory_usage") else "",
               "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # fmt: skip
        if name == "wnb":
            e = model._engine
            weighted = {k for k, w in model.weights.items() if w > 0}
            levels = {v.name for v in e.registry.variables if v.level > 0}
            row.update(slots=len(e.slots), weighted=len(weighted), weighted_informative=len(weighted & informative),
                       informative_at_level=len(levels & informative), noise_at_level=len(levels - informative))  # fmt: skip
        results.add(row)
        out.append(row)
    print(f"{info['commit']} {info['date']} {info['machine']}; K = {args.K}, n = {args.n}, {args.informative} informative, batches of {args.batch}")
    print(markdown([[r["model"], f"{r['accuracy']:.4f}", f"{r['log_loss']:.4f}", f"{r['seconds']:.1f}", f"{r['examples_per_s']:,.0f}",
                     f"{r['memory_usage_mib']:.1f}" if r["memory_usage_mib"] != "" else "", f"{r['peak_rss_mib']:.0f}",
                     r.get("slots", ""), r.get("weighted", ""), r.get("weighted_informative", ""),
                     r.get("informative_at_level", ""), r.get("noise_at_level", "")] for r in out],
                   ["model", "accuracy", "log loss", "seconds", "examples/s", "memory_usage() MiB", "peak RSS MiB (so far)",
                    "level-3 slots", "weighted", "of them informative", "informative at Level > 0", "noise at Level > 0"]))  # fmt: skip
    if math.isfinite(out[0]["seconds"]) and len(out) > 1:
        print(f"time ÷ {out[1]['model']}: {out[0]['seconds'] / out[1]['seconds']:.2f}")


if __name__ == "__main__":
    main()
