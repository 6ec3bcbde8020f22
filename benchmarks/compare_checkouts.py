"""Throughput of two checkouts of the package, interleaved, to show a change costs no speed.

Two versions of one package cannot share a process, so each measurement is a fresh process that
imports the package from one checkout (``--old`` or ``--new``), builds the stream before the
clock starts, warms the compiled kernels on another seed, then times one model on one path:

- ``one``: ``predict_proba_one(x)`` then ``learn_one(x, y)`` on dicts;
- ``many``: ``predict_proba_many(X)`` then ``learn_many(X, y)`` on DataFrames of ``--batch`` rows.

The processes alternate old, new, old, new … (``--rounds`` pairs per stream × path × model), so
a load change on a shared machine hits both alike. The table gives each checkout's median
examples/s and the median of the pairwise ratios new ÷ old (> 1: the new checkout is faster).

Usage (from the repository root)::

    git worktree add /tmp/old 2eb1681      # or: git archive 2eb1681 | tar -x -C /tmp/old
    python benchmarks/compare_checkouts.py --old /tmp/old --new . --streams rbf20,k500 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys

STREAMS = {"rbf20": (20, 5), "k10": (10, 2), "k100": (100, 2), "k500": (500, 2), "k1000": (1000, 2)}


def worker(root: str, stream: str, path: str, model_name: str, rows: int, batch: int, seed: int) -> None:
    """Time one model on one path with the package of ``root``; print examples/s as JSON."""
    sys.path.insert(0, root)
    import itertools
    import time

    import pandas as pd
    from river.datasets import synth

    import wnb_stream
    from wnb_stream import WeightedNaiveBayes, weights

    if not pathlib.Path(wnb_stream.__file__).resolve().is_relative_to(pathlib.Path(root).resolve()):
        raise SystemExit(f"wnb_stream was imported from {wnb_stream.__file__}, not from {root}")
    k, j = STREAMS[stream]

    def data(s: int, n: int) -> list:
        return list(itertools.islice(synth.RandomRBF(seed_model=s, seed_sample=s, n_features=k, n_classes=j), n))

    def make():
        options = {"optimizer": weights.Uniform()} if model_name == "nb" else {}
        return WeightedNaiveBayes(seed=seed, **options)

    def frames(items: list) -> list:
        X = pd.DataFrame([x for x, _ in items])
        y = pd.Series([label for _, label in items])
        return [(X.iloc[i : i + batch], y.iloc[i : i + batch]) for i in range(0, len(items), batch)]

    def run(model, items, pieces) -> float:
        clock = time.perf_counter()
        if path == "one":
            for x, y in items:
                model.predict_proba_one(x)
                model.learn_one(x, y)
        else:
            for i, (X, y) in enumerate(pieces):
                if i:
                    model.predict_proba_many(X)
                model.learn_many(X, y)
        return time.perf_counter() - clock

    warm = data(seed + 1, 2 * batch)
    run(make(), warm, frames(warm))  # kernels loaded or compiled before the clock
    items = data(seed, rows)
    seconds = run(make(), items, frames(items) if path == "many" else [])
    print(json.dumps({"per_s": rows / seconds}))


def measure(root: str, stream: str, path: str, model: str, args) -> float:
    command = [sys.executable, __file__, "--worker", root, stream, path, model, str(args.rows_for(stream)), str(args.batch), str(args.seed)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["per_s"]


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--worker":
        root, stream, path, model, rows, batch, seed = sys.argv[2:9]
        worker(root, stream, path, model, int(rows), int(batch), int(seed))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="checkout of the reference commit")
    parser.add_argument("--new", default=str(pathlib.Path(__file__).resolve().parents[1]), help="checkout to compare")
    parser.add_argument("--streams", default="rbf20,k500")
    parser.add_argument("--paths", default="one,many")
    parser.add_argument("--models", default="vns", help="vns (the default model) and/or nb (weights.Uniform)")
    parser.add_argument("--rows", type=int, default=20_000, help="examples per measurement (K = 500: a fifth)")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5, help="old/new pairs per cell")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    args.rows_for = lambda stream: args.rows if STREAMS[stream][0] < 500 else max(args.batch * 2, args.rows // 5)
    print(f"old: {args.old}\nnew: {args.new}\n")
    print("| stream | path | model | rows | old ex/s (median) | new ex/s (median) | new ÷ old (median of pairs) | min–max |")
    print("|:---|:---|:---|---:|---:|---:|---:|---:|")
    for stream in args.streams.split(","):
        for path in args.paths.split(","):
            for model in args.models.split(","):
                old, new = [], []
                for _ in range(args.rounds):
                    old.append(measure(args.old, stream, path, model, args))
                    new.append(measure(args.new, stream, path, model, args))
                ratios = [b / a for a, b in zip(old, new)]
                print(f"| {stream} | {path} | {model} | {args.rows_for(stream):,} | {statistics.median(old):,.0f} | "
                      f"{statistics.median(new):,.0f} | {statistics.median(ratios):.3f} | {min(ratios):.3f}–{max(ratios):.3f} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
