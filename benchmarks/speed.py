"""Speed (benchmarks.md): examples per second and peak memory, ours against the peers, same run.

Streams: ``RandomRBF(n_features=K, n_classes=2)`` (seed 42) at K = 10, 100, 1,000 variables,
generated before the clock starts. Paths:

- ``one``: per instance, ``predict_proba_one(x)`` then ``learn_one(x, y)`` on dicts;
- ``many``: mini-batches of 1,000 rows, ``predict_proba_many(X)`` then ``learn_many(X, y)`` on
  pandas DataFrames (the first batch is only learnt).

Models: our ``nb`` (``weights.Uniform()``, plain naive Bayes) and ``vns`` (the default optimizer)
with GKClass, River's GaussianNB, and a no-op classifier (the ceiling of the loop). Ratios to
GaussianNB and to the no-op are computed within the same K and path. Peak memory comes from a
second pass of the per-instance path under ``tracemalloc`` (peak traced bytes while the model
learns, so it includes transient buffers), next to ``model.memory_usage()`` at the end for ours.
Then, for K = 10, throughput per segment of a longer stream shows how time grows with its length.

Results go to ``benchmarks/results/speed.csv`` (and ``speed.md``).

Usage (from the repository root)::

    python benchmarks/speed.py
    python benchmarks/speed.py --k 10,100 --n 2000 --lengths 1000,10000
"""

from __future__ import annotations

import argparse
import shlex
import itertools
import sys
import time
import tracemalloc

import common  # noqa: F401  (puts the checkout on sys.path)
from common import RESULTS, ResultFile, fmt, markdown, names, provenance, rate

from wnb_stream import evaluation

LABELS = {"nb": "nb", "vns": "vns", "river-gnb": "river.GaussianNB", "noop": "noop"}


def rbf(k: int, n: int, seed: int) -> list:
    from river.datasets import synth

    return list(itertools.islice(synth.RandomRBF(seed_model=seed, seed_sample=seed, n_features=k, n_classes=2), n))


def run_one(model, data) -> float:
    clock = time.perf_counter()
    for x, y in data:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    return time.perf_counter() - clock


def run_many(model, batches) -> float:
    clock = time.perf_counter()
    for i, (X, y) in enumerate(batches):
        if i:
            model.predict_proba_many(X)
        model.learn_many(X, y)
    return time.perf_counter() - clock


def peak_memory(make, data) -> int:
    """Peak bytes allocated while a fresh model runs the per-instance path (tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        model = make()
        run_one(model, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base


def main(argv=None) -> int:
    import pandas as pd

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=names, default=["10", "100", "1000"], help="numbers of variables")
    parser.add_argument("--n", type=int, default=5000, help="examples per stream (capped by --max-cells / K)")
    parser.add_argument("--max-cells", type=int, default=1_000_000, help="cap on n·K per stream")
    parser.add_argument("--models", type=names, default=list(LABELS))
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--lengths", type=names, default=["1000", "10000", "50000"], help="segment ends at K=10 ('' = skip)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", default=str(RESULTS / "speed.csv"))
    args = parser.parse_args(argv)

    meta = provenance()
    print(f"# speed — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    results = ResultFile(args.output, meta)

    def make(name):
        if name == "river-gnb":  # the streams are numeric: River's GaussianNB as a user would run it
            from river import naive_bayes

            return naive_bayes.GaussianNB()
        return evaluation.make_model(name, seed=args.seed)

    lines = []
    for k in map(int, args.k):
        n = max(args.batch, min(args.n, args.max_cells // k))
        data = rbf(k, n, args.seed)
        frame = pd.DataFrame([x for x, _ in data])
        target = pd.Series([y for _, y in data])
        batches = [(frame.iloc[i : i + args.batch], target.iloc[i : i + args.batch]) for i in range(0, n, args.batch)]
        for path in ("one", "many"):
            timings, models = {}, {}
            for name in args.models:
                models[name] = make(name)
                timings[name] = run_one(models[name], data) if path == "one" else run_many(models[name], batches)
            for name, seconds in timings.items():
                row = {"k": k, "path": path, "model": LABELS[name], "n": n, "seconds": seconds,
                       "examples_per_second": n / seconds}  # fmt: skip
                for peer in ("river-gnb", "noop"):
                    if peer in timings:
                        row[f"time_vs_{peer.replace('-', '_')}"] = seconds / timings[peer]
                if path == "one":
                    row["peak_memory_bytes"] = peak_memory(lambda: make(name), data)
                if callable(getattr(models[name], "memory_usage", None)):
                    row["model_memory_bytes"] = models[name].memory_usage()
                results.add(row)
                lines.append([k, path, LABELS[name], f"{n:,}", rate(row["examples_per_second"]),
                              fmt(row.get("time_vs_river_gnb"), 2), fmt(row.get("time_vs_noop"), 1),
                              fmt(row.get("peak_memory_bytes", float("nan")) / 2**20, 2)])  # fmt: skip
            print(markdown(lines[-len(timings):], ["K", "path", "model", "n", "examples/s", "time ÷ GaussianNB",
                                                   "time ÷ no-op", "peak MiB"]), flush=True)  # fmt: skip
    growth = []
    ends = [int(v) for v in args.lengths or []]
    if ends:
        data = rbf(10, max(ends), args.seed)
        for name in [m for m in args.models if m != "noop"]:
            model, start = make(name), 0
            for end in ends:
                seconds = run_one(model, data[start:end])
                row = {"k": 10, "path": "one/segment", "model": LABELS[name], "n": end, "segment_start": start,
                       "seconds": seconds, "examples_per_second": (end - start) / seconds}  # fmt: skip
                results.add(row)
                growth.append([LABELS[name], f"{start:,}–{end:,}", rate(row["examples_per_second"])])
                start = end
        print(markdown(growth, ["model (K=10)", "examples", "examples/s in the segment"]))
    report = (
        markdown(lines, ["K", "path", "model", "n", "examples/s", "time ÷ GaussianNB", "time ÷ no-op", "peak MiB"])
        + ("\n\n" + markdown(growth, ["model (K=10)", "examples", "examples/s in the segment"]) if growth else "")
    )
    results.path.with_suffix(".md").write_text(
        f"Commit {meta['commit']}, {meta['date']}, {meta['machine']}; command: "
        f"`{shlex.join(['python', 'benchmarks/speed.py', *(sys.argv[1:] if argv is None else argv)])}`\n\n{report}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
