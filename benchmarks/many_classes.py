"""Throughput with many classes: examples per second of ``learn_one`` on a stream of J classes.

A stream of ``--n`` examples (``--features`` Gaussian variables whose means depend on the class,
``--classes`` classes drawn uniformly, seed 42, generated before the clock starts) is learnt by
``learn_one``; the script prints examples/s
over the whole stream and over its second half (when most classes exist), and the number of
level-2 rebuilds (variables rebuilt) per example.

Usage (from the repository root)::

    python benchmarks/many_classes.py                    # 1,000 classes, 10 variables, 5,000 examples
    python benchmarks/many_classes.py --root /tmp/old    # another checkout
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]))
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--optimizer", default="Uniform", choices=["Uniform", "VNS", "PGDMB", "Graphical"])
    args = parser.parse_args()
    sys.path.insert(0, args.root)
    import numpy as np

    import wnb_stream
    from wnb_stream import WeightedNaiveBayes, weights

    rng = np.random.default_rng(42)
    centres = rng.normal(size=(args.classes, args.features))
    labels = rng.integers(0, args.classes, args.n)
    values = centres[labels] + rng.normal(scale=0.5, size=(args.n, args.features))
    rows = [({f"x{k}": float(v) for k, v in enumerate(row)}, int(y)) for row, y in zip(values, labels)]
    model = WeightedNaiveBayes(optimizer=getattr(weights, args.optimizer)(), seed=1)
    rebuilt = [0]
    engine = model._engine
    original = engine._rebuild

    def counting(indices):
        rebuilt[0] += len(indices)
        original(indices)

    engine._rebuild = counting
    half = len(rows) // 2
    start = time.perf_counter()
    for i, (x, y) in enumerate(rows):
        if i == half:
            middle = time.perf_counter()
            rebuilt_first = rebuilt[0]
        model.learn_one(x, y)
    end = time.perf_counter()
    print(f"wnb_stream from {wnb_stream.__file__}")
    print(f"{args.n} examples, {args.classes} classes ({len(model.classes)} seen), {args.features} variables, {args.optimizer}")
    print(f"all: {args.n / (end - start):.1f} examples/s; second half: {(len(rows) - half) / (end - middle):.1f} examples/s")
    print(f"variables rebuilt per example: all {rebuilt[0] / args.n:.2f}; second half {(rebuilt[0] - rebuilt_first) / (len(rows) - half):.2f}")


if __name__ == "__main__":
    main()
