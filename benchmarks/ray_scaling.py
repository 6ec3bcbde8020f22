"""Training on partitions: 1 against 2 Ray learners, and what a round costs as K and the window grow.

Part 1 (``--part ray``): ``wnb_stream.distributed.ray.train`` on one stream split round-robin into L = 1 and
L = 2 partitions, on a local Ray cluster of this machine, a round every ``--round`` stream rows
(each learner hands over ``round / L`` rows), the runs of both settings interleaved
``--repeats`` times. The stream is RandomRBF with 5 classes (seeded), in two configurations
(``CONFIGURATIONS``): K = 20 learned one example at a time (the consumer loop, whose
per-example cost is dominated by learning and predicting, both in the learners), and K = 100 in
mini-batches of 256. Reported: examples/s from the learners' first run to the last round
(medians), the ratio to one learner, the coordinator's time per round and the bytes shipped per
round (the reports' pickles), and the prequential accuracy of the published predictors.

Part 2 (``--part rounds``): in one process, for K numeric features and deltas of n rows (a
learner of P partitions ships at most ⌈5,000 / P⌉: 50 rows at P = 100), into a model that has
seen 5,000 rows: the bytes of one delta, and the time of one round absorbing 1 or 4 such deltas
(median of 3), from which ``docs/guides/scaling-out.md`` projects the cost of a round at 100
partitions.

Usage (from the repository root; ``pip install -e ".[ray]"``)::

    python benchmarks/ray_scaling.py                       # both parts
    python benchmarks/ray_scaling.py --part ray --rows 200000 --round 40000 --repeats 3
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes
from wnb_stream.distributed import IterableSource


def rbf(n: int, features: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    stream = synth.RandomRBF(seed_model=seed, seed_sample=seed, n_classes=5, n_features=features).take(n)
    X, y = [], []
    for x, label in stream:
        X.append(list(x.values()))
        y.append(int(label))
    return np.array(X), np.array(y)


def rows_of(X: np.ndarray, y: np.ndarray):
    names = [f"x{i}" for i in range(X.shape[1])]
    for row, label in zip(X.tolist(), y.tolist()):
        yield {"x": dict(zip(names, row)), "y": label}


def sources(X: np.ndarray, y: np.ndarray, learners: int) -> dict:
    return {p: functools.partial(IterableSource, functools.partial(rows_of, X[p::learners], y[p::learners])) for p in range(learners)}


#: (name, features, learner batch size): one example at a time (the consumer loop: per-example
#: cost dominated by learning and predicting), and mini-batches of 256 (cheaper per example, so the
#: coordinator's fixed cost per round weighs more).
CONFIGURATIONS = (("one example at a time", 20, 1), ("mini-batches of 256", 100, 256))


def part_ray(args) -> None:
    import ray

    from wnb_stream.distributed import ray as wnb_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    rows = []
    for name, features, batch in CONFIGURATIONS:
        X, y = rbf(args.rows, features)
        runs: dict = {1: [], 2: []}
        for _ in range(args.repeats):
            for learners in (1, 2):
                model, progress = wnb_ray.train(WeightedNaiveBayes(seed=1), sources(X, y, learners), batch_size=batch,
                                                round_examples=args.round // learners, measure_bytes=True)  # fmt: skip
                assert progress.examples == args.rows
                runs[learners].append(progress)
                print(f"  {name}, K = {features}, L = {learners}: {progress.examples_per_second:,.0f} ex/s, "
                      f"{progress.rounds} rounds, {progress.seconds:.1f} s", flush=True)  # fmt: skip
        speed = {L: statistics.median(p.examples_per_second for p in runs[L]) for L in runs}
        for L in runs:
            rounds = [s for p in runs[L] for s in p.round_seconds[:-1]]  # (the last round absorbs empty reports)
            shipped = [b for p in runs[L] for b in p.shipped_bytes[:-1]]
            accuracy = statistics.median(p.accuracy for p in runs[L])
            ratio = f"{speed[L] / speed[1]:.2f}x"
            rows.append(f"| {name}, K = {features} | {L} | {speed[L]:,.0f} | {ratio} | {statistics.median(rounds):.2f} | "
                        f"{statistics.median(shipped) / 1e6:.2f} | {accuracy:.4f} |")  # fmt: skip
    ray.shutdown()
    print(f"\nRandomRBF (5 classes, seeded), {args.rows:,} rows, a round every {args.round:,} rows, median of {args.repeats}:\n")
    print("| stream | learners | examples/s | vs 1 learner | coordinator s/round | MB shipped/round | prequential accuracy |")
    print("|:---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


def part_rounds(args) -> None:
    print("| K | rows per delta | MB per delta | round, 1 delta (s) | round, 4 deltas (s) | per extra delta (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for features in (10, 100, 1000):
        for n in (50, 1000, 5000):
            X, y = rbf(5000 + 4 * n, features)
            base = WeightedNaiveBayes(seed=1)
            first = base.delta()
            first.learn_many(X[:5000], y[:5000])
            base.absorb([first])  # a model that has seen one round of 5,000 rows
            deltas = []
            for p in range(4):
                d = base.delta()
                d.learn_many(X[5000 + p * n : 5000 + (p + 1) * n], y[5000 + p * n : 5000 + (p + 1) * n])
                d.flush()
                deltas.append(d)
            times = {}
            for count in (1, 4):
                samples = []
                for _ in range(3):
                    model = WeightedNaiveBayes.from_dict(base.to_dict())
                    start = time.perf_counter()
                    model.absorb(deltas[:count])
                    samples.append(time.perf_counter() - start)
                times[count] = statistics.median(samples)
            print(f"| {features:,} | {n:,} | {deltas[0].nbytes() / 1e6:.2f} | {times[1]:.2f} | {times[4]:.2f} | "
                  f"{(times[4] - times[1]) / 3:.3f} |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("ray", "rounds", "both"), default="both")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--round", type=int, default=40_000, help="stream rows per round")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.part in ("ray", "both"):
        part_ray(args)
    if args.part in ("rounds", "both"):
        part_rounds(args)


if __name__ == "__main__":
    main()
