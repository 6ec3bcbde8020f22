"""Throughput against the peers, per instance and per mini-batch, all in the same run.

Streams (River generators, seed 42, generated before the clock starts):

- ``rbf20``: ``RandomRBF(n_features=20, n_classes=5)``, the stream of the peers' anchor table;
- ``k10``, ``k100``, ``k500``, ``k1000``: ``RandomRBF(n_features=K, n_classes=2)`` (the wide streams;
  ``k500`` is the 500-variable stream).

Paths (``benchmarks/README.md``, Speed):

- ``one``: ``predict_proba_one(x)`` then ``learn_one(x, y)`` on dicts;
- ``many``: mini-batches of ``--batch`` rows, ``predict_proba_many(X)`` then ``learn_many(X, y)`` on
  pandas DataFrames (the first batch is only learnt).

Models: ``nb`` (``weights.Uniform()``, plain naive Bayes) and ``vns`` (the default model: GKClass
summaries, ``weights.VNS()``), River's ``GaussianNB`` (per instance; River has no mini-batch
GaussianNB) and a no-op classifier (the ceiling of the loop). Each table row carries its ratios to
the peers timed in the same run: speed-up over GaussianNB, time ÷ no-op, and for ``vns`` the cost
of the weights (time ÷ ``nb``). The models of a table take turns over the stream, 1,000 examples
(or one mini-batch) each, so that a load spike on a shared machine hits them all alike. MOA's
figures come from ``shared/anchors/peers-prequential.csv`` (measured on this kind of machine, not
in this run).

Our compiled kernels (Numba) are loaded from their cache, or compiled on a machine's first run, by
the first model that calls them: before any clock starts, a throw-away model of each of ours runs
both paths on 2,000 rows of another seed, so that this one-off cost (printed, and stored as the
``warm_up`` row) is not charged to whichever model happens to run first.

Then the growth in K (µs per example and per variable), the memory of each model (``--memory-rows``
examples of each stream on the per-instance path under ``tracemalloc``: peak traced bytes while a fresh
model learns, transient buffers included, next to ``model.memory_usage()`` at the end for ours) and,
on a long ``rbf20`` stream of ``--n`` examples, the time per example of each segment (generated
segment by segment, so memory stays flat).

Results go to ``benchmarks/results/throughput.csv`` (commit, date, machine on every row).

Usage (from the repository root)::

    python benchmarks/throughput.py
    python benchmarks/throughput.py --streams rbf20,k500 --rows 20000 --n 1000000 --segments 10
    python benchmarks/throughput.py --rebuild-growth 1.0   # our models with another rebuild schedule
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import tracemalloc

import common  # noqa: F401  (puts the checkout on sys.path)
from common import (
    RESULTS,
    ResultFile,
    anchor,
    fmt,
    markdown,
    names,
    number,
    provenance,
    rate,
)

#: stream name → (number of variables K, number of classes J)
STREAMS = {"rbf20": (20, 5), "k10": (10, 2), "k100": (100, 2), "k500": (500, 2), "k1000": (1000, 2)}
#: the stream of the peers' anchor table (shared/anchors/peers-prequential.csv) matching ``rbf20``
ANCHOR_STREAM = "rbf20_c5"
#: our models by name: plain naive Bayes, the default (VNS) and the other weight learners
OURS = ("nb", "vns", "fnb", "snb", "sgcf", "direct")


def generator(stream: str, seed: int):
    from river.datasets import synth

    k, j = STREAMS[stream]
    return synth.RandomRBF(seed_model=seed, seed_sample=seed, n_features=k, n_classes=j)


def make(name: str, seed: int, options: dict | None = None):
    """A fresh model; ``options`` are extra ``WeightedNaiveBayes`` parameters for ours."""
    from river import naive_bayes

    from wnb_stream import WeightedNaiveBayes, weights
    from wnb_stream.apps.models import NoOp
    if name == "noop":
        return NoOp()
    if name == "gnb":  # the streams are numeric: River's GaussianNB as a user would run it
        return naive_bayes.GaussianNB()
    if name == "nb":
        return WeightedNaiveBayes(optimizer=weights.Uniform(), seed=seed, **(options or {}))
    if name == "vns":
        return WeightedNaiveBayes(seed=seed, **(options or {}))  # the default model: GKClass, VNS
    learners = {"fnb": weights.FNB, "snb": weights.SNB, "sgcf": weights.SGCF, "direct": weights.Direct}
    if name not in learners:
        raise ValueError(f"unknown model {name!r}; known: noop, gnb, {', '.join(OURS)}")
    return WeightedNaiveBayes(optimizer=learners[name](), seed=seed, **(options or {}))


def run_one(model, rows) -> float:
    clock = time.perf_counter()
    for x, y in rows:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    return time.perf_counter() - clock


def run_many(model, batches, first: bool = True) -> float:
    """Seconds to predict then learn each batch (the first only learnt when ``first``)."""
    clock = time.perf_counter()
    for i, (X, y) in enumerate(batches):
        if i or not first:
            model.predict_proba_many(X)
        model.learn_many(X, y)
    return time.perf_counter() - clock


def in_turns(models: dict, chunks: list, batches: list, first: bool = True) -> dict:
    """Seconds spent by each model, the models taking turns piece by piece (same load for all).

    ``models`` maps a key to ``(model, path)``; a "one" model takes the rows of ``chunks[i]``, a
    "many" model the mini-batch ``batches[i]`` (only learnt when it is the stream's first).
    """
    seconds = dict.fromkeys(models, 0.0)
    for i, (rows, batch) in enumerate(zip(chunks, batches)):
        for key, (model, path) in models.items():
            seconds[key] += run_one(model, rows) if path == "one" else run_many(model, [batch], first and i == 0)
    return seconds


def peak_memory(model, rows) -> int:
    """Peak bytes allocated while ``model`` runs the per-instance path over ``rows`` (tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        run_one(model, rows)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base


def frames(rows, batch: int) -> list:
    """The rows as ``(X, y)`` DataFrame/Series pairs of ``batch`` rows."""
    import pandas as pd

    X = pd.DataFrame([x for x, _ in rows])
    y = pd.Series([label for _, label in rows])
    return [(X.iloc[i : i + batch], y.iloc[i : i + batch]) for i in range(0, len(rows), batch)]


def moa_anchor() -> dict:
    """MOA NaiveBayes examples/s on the ``rbf20`` stream, per path label, from the anchors."""
    out = {}
    for row in anchor("peers-prequential.csv"):
        if row["stream"] == ANCHOR_STREAM and row["model"].startswith("moa.NaiveBayes"):
            out[row["model"]] = number(row["inst_per_s"])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=names, default=["rbf20", "k10", "k100", "k500"], help=f"of {', '.join(STREAMS)}")
    parser.add_argument("--rows", type=int, default=100_000, help="examples per stream (capped by --max-cells / K)")
    parser.add_argument("--max-cells", type=int, default=20_000_000, help="cap on examples × K per stream")
    parser.add_argument("--models", type=names, default=["noop", "gnb", "nb", "vns"])
    parser.add_argument("--batch", type=int, default=1000, help="rows per mini-batch")
    parser.add_argument("--n", type=int, default=100_000, help="length of the long rbf20 stream (0 = skip)")
    parser.add_argument("--segments", type=int, default=10, help="segments of the long stream")
    parser.add_argument("--long-models", type=names, default=["vns"], help="models timed along the long stream")
    parser.add_argument("--memory-rows", type=int, default=5000, help="examples per stream of the memory pass (0 = skip)")
    parser.add_argument("--rebuild-growth", type=float, default=None, help="our rebuild_growth (default: the model's)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", default=str(RESULTS / "throughput.csv"))
    args = parser.parse_args(argv)
    for stream in args.streams:
        if stream not in STREAMS:
            parser.error(f"unknown stream {stream!r}; known: {', '.join(STREAMS)}")

    options = {} if args.rebuild_growth is None else {"rebuild_growth": args.rebuild_growth}
    meta = {**provenance(), **options}
    command = "python benchmarks/throughput.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# throughput — commit {meta['commit']}, {meta['date']}, {meta['machine']}\n# {command}")
    results = ResultFile(args.output, meta)
    header = ["stream", "K", "J", "path", "model", "n", "examples/s", "× GaussianNB", "time ÷ no-op", "time ÷ nb"]
    table, per_example, memory = [], {}, []

    clock = time.perf_counter()
    warm = list(itertools.islice(generator("rbf20", args.seed + 1), 2000))
    for name in [m for m in args.models if m in OURS]:
        run_one(make(name, args.seed, options), warm)
        run_many(make(name, args.seed, options), frames(warm, args.batch))
    warm_up = time.perf_counter() - clock
    results.add({"section": "warm_up", "stream": "rbf20", "n": len(warm), "seconds": warm_up})
    print(f"# warm-up (kernel load or first compile, then 2,000 rows per path and model): {warm_up:.2f} s", flush=True)

    for stream in args.streams:
        k, j = STREAMS[stream]
        n = max(args.batch, min(args.rows, args.max_cells // k))
        rows = list(itertools.islice(generator(stream, args.seed), n))
        batches = frames(rows, args.batch)
        chunks = [rows[i : i + args.batch] for i in range(0, n, args.batch)]
        for path in ("one", "many"):
            models = {m: (make(m, args.seed, options), path) for m in args.models if path == "one" or m != "gnb"}
            seconds = in_turns(models, chunks, batches)
            for name in models:
                row = {"section": "paths", "stream": stream, "k": k, "classes": j, "path": path, "model": name,
                       "n": n, "seconds": seconds[name], "examples_per_second": n / seconds[name]}  # fmt: skip
                if "gnb" in seconds:
                    row["speedup_vs_gnb"] = seconds["gnb"] / seconds[name]
                if "noop" in seconds:
                    row["time_vs_noop"] = seconds[name] / seconds["noop"]
                if name != "nb" and name in OURS and "nb" in seconds:
                    row["time_vs_nb"] = seconds[name] / seconds["nb"]
                results.add(row)
                if name in OURS:
                    per_example[(stream, path, name)] = 1e6 * seconds[name] / n
                table.append([stream, k, j, path, name, f"{n:,}", rate(row["examples_per_second"]),
                              fmt(row.get("speedup_vs_gnb"), 2), fmt(row.get("time_vs_noop"), 1),
                              fmt(row.get("time_vs_nb"), 2)])  # fmt: skip
            print(markdown(table[-len(models) :], header), flush=True)
        if args.memory_rows > 0:
            for name in [m for m in args.models if m != "noop"]:
                model = make(name, args.seed, options)
                sample = rows[: args.memory_rows]
                peak = peak_memory(model, sample)
                own = model.memory_usage() if callable(getattr(model, "memory_usage", None)) else None
                results.add({"section": "memory", "stream": stream, "k": k, "classes": j, "path": "one", "model": name,
                             "n": len(sample), "peak_memory_bytes": peak, "model_memory_bytes": own})  # fmt: skip
                memory.append([stream, k, name, f"{len(sample):,}", f"{peak / 2**20:.2f}",
                               "—" if own is None else f"{own / 2**20:.2f}"])  # fmt: skip

    moa = moa_anchor()
    if moa:
        print(f"\nMOA NaiveBayes on {ANCHOR_STREAM} (anchors, not this run): "
              + ", ".join(f"{label} {rate(value)}/s" for label, value in moa.items()))  # fmt: skip

    growth = []
    for (stream, path, name), micros in per_example.items():
        k = STREAMS[stream][0]
        growth.append([stream, k, path, name, f"{micros:,.1f}", f"{micros / k:.3f}"])
    if growth:
        print("\n" + markdown(growth, ["stream", "K", "path", "model", "µs / example", "µs / example / variable"]))

    if memory:
        print("\n" + markdown(memory, ["stream", "K", "model", "examples", "peak MiB", "memory_usage() MiB"]))

    long_table = []
    if args.n > 0:
        segment = max(args.batch, args.n // max(args.segments, 1))
        segment -= segment % args.batch  # whole mini-batches
        long_header = ["model (rbf20)", "path", "examples", "µs / example", "examples/s"]
        print("\n" + "\n".join(markdown([], long_header).split("\n")[:2]), flush=True)
        models = {(name, path): (make(name, args.seed, options), path) for name in args.long_models for path in ("one", "many")}
        source, start = generator("rbf20", args.seed), 0
        while start < args.n:  # the stream is generated segment by segment, outside the clock
            rows = list(itertools.islice(source, min(segment, args.n - start)))
            chunks = [rows[i : i + args.batch] for i in range(0, len(rows), args.batch)]
            seconds = in_turns(models, chunks, frames(rows, args.batch), first=start == 0)
            end = start + len(rows)
            for (name, path), spent in seconds.items():
                row = {"section": "long", "stream": "rbf20", "k": 20, "classes": 5, "path": path, "model": name,
                       "n": end, "segment_start": start, "seconds": spent, "examples_per_second": len(rows) / spent}  # fmt: skip
                results.add(row)
                long_table.append([name, path, f"{start:,}–{end:,}", f"{1e6 * spent / len(rows):,.1f}",
                                   rate(row["examples_per_second"])])  # fmt: skip
                print(markdown(long_table[-1:], long_header).split("\n")[-1], flush=True)
            start = end
    print(f"\nwrote {results.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
