"""Forgetting on grouped streams (issue 33): one stationary concept whose examples come sorted by
class, or in runs of one class, and a shuffled hold-out of the same concept.

The default model (change detector on, ``drift_delta=0.002``) and the same model with forgetting
off (``drift_delta=None``) learn the same grouped training rows; both are then scored on the
hold-out. A change of the order of the classes is not a change of concept: forgetting must not
leave the model below the one that never forgets.

Streams (``--n`` training rows, ``--holdout`` hold-out rows, seed ``--seed``):

- ``sorted``: the rows sorted by class (a file sorted by its label column);
- ``runs``: runs of 50 to 400 rows of one class, the class of each run drawn at random (a file
  grouped by session);
- ``shuffled``: the rows in their own order (the control).

Usage (from the repository root)::

    python benchmarks/grouped.py                       # waveform and led, 8,000 rows
    python benchmarks/grouped.py --datasets waveform --n 4000
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import provenance

from wnb_stream import WeightedNaiveBayes
from wnb_stream.apps import datasets

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--datasets", default="waveform,led", help="streams, comma-separated (wnb_stream.apps.datasets names)")
parser.add_argument("--n", type=int, default=8000, help="training rows")
parser.add_argument("--holdout", type=int, default=3000, help="hold-out rows (shuffled)")
parser.add_argument("--seed", type=int, default=0)


def grouped(rows: list, order: str, rng: np.random.Generator) -> list:
    """``rows`` sorted by class, in runs of 50 to 400 rows of one class, or as they are."""
    if order == "shuffled":
        return rows
    by_class: dict = {}
    for x, y in rows:
        by_class.setdefault(y, []).append((x, y))
    if order == "sorted":
        return [row for label in sorted(by_class, key=str) for row in by_class[label]]
    out, left = [], {label: list(part) for label, part in by_class.items()}
    while any(left.values()):
        label = [label for label, part in left.items() if part][int(rng.integers(sum(1 for part in left.values() if part)))]
        size = int(rng.integers(50, 401))
        out.extend(left[label][:size])
        left[label] = left[label][size:]
    return out


def main(argv=None) -> int:
    args = parser.parse_args(argv)
    meta = provenance()
    command = shlex.join(["python", "benchmarks/grouped.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"# forgetting on grouped streams — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    print(f"command: `{command}`\n")
    print("| stream | order | hold-out accuracy, forgetting on | forgetting off | changes detected |")
    print("|:---|:---|---:|---:|---:|")
    for name in args.datasets.split(","):
        stream = list(itertools.islice(iter(datasets.get_dataset(name, seed=args.seed)), args.n + args.holdout))
        train, holdout = stream[: args.n], stream[args.n :]
        for order in ("sorted", "runs", "shuffled"):
            rows = grouped(train, order, np.random.default_rng(args.seed))
            on, off = WeightedNaiveBayes(seed=args.seed), WeightedNaiveBayes(seed=args.seed, drift_delta=None)
            for x, y in rows:
                on.learn_one(x, y)
                off.learn_one(x, y)
            accuracy = [float(np.mean([m.predict_one(x) == y for x, y in holdout])) for m in (on, off)]
            print(f"| {name} | {order} | {accuracy[0]:.3f} | {accuracy[1]:.3f} | {on.changes_detected} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
