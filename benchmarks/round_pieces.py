"""The pieces of one coordinator round (``model.absorb``) at K features, in one process.

A model that has seen 5,000 rows of RandomRBF (5 classes, ``ray_scaling.rbf``) absorbs ``--deltas``
deltas of ``--rows`` rows each, five times from the same saved model; the medians of the absorb and
of its pieces: the summaries' feeds and merges (``merge._fold``), the merged window
(``merge_histories``), and the restart of levels 2 and 3 (``Engine.restart``), of which level 2's
rebuild and the weights' re-optimisation; "other" is the absorb less the first three (the copies,
the checks).

    python benchmarks/round_pieces.py --features 1000 --rows 50 --deltas 4
"""

from __future__ import annotations

import argparse
import statistics
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from ray_scaling import rbf

from wnb_stream import WeightedNaiveBayes
from wnb_stream.engine import core, merge

PIECES = ((merge, "_fold"), (merge, "merge_histories"), (core.Engine, "restart"), (core.Engine, "_rebuild_due"), (core.Engine, "_maybe_step"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=50, help="rows per delta")
    parser.add_argument("--deltas", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    spent: dict = {}

    def timed(owner, name):
        step = getattr(owner, name)

        def wrapper(*a, **kw):
            start = time.perf_counter()
            try:
                return step(*a, **kw)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - start

        setattr(owner, name, wrapper)

    for owner, name in PIECES:
        timed(owner, name)
    n, count = args.rows, args.deltas
    X, y = rbf(5000 + count * n, args.features)
    base = WeightedNaiveBayes(seed=1)
    first = base.delta()
    first.learn_many(X[:5000], y[:5000])
    base.absorb([first])
    deltas = []
    for p in range(count):
        delta = base.delta()
        delta.learn_many(X[5000 + p * n : 5000 + (p + 1) * n], y[5000 + p * n : 5000 + (p + 1) * n])
        delta.flush()
        deltas.append(delta)
    saved, samples = base.to_dict(), []
    for _ in range(args.repeats):
        model = WeightedNaiveBayes.from_dict(saved)
        spent.clear()
        start = time.perf_counter()
        model.absorb(deltas)
        samples.append((time.perf_counter() - start, *(spent.get(name, 0.0) for _, name in PIECES)))
    absorb, fold, window, restart, rebuild, weights = (statistics.median(s[i] for s in samples) for i in range(6))
    print("| K | rows per delta | deltas | absorb (s) | feeds and merges | merged window | level-2 rebuild | weights | other |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.features:,} | {n:,} | {count} | {absorb:.3f} | {fold:.3f} | {window:.3f} | {rebuild:.3f} | {weights:.3f} | "
          f"{absorb - fold - window - restart:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
