"""Throughput of the level-1 summaries: CPiD, Gaussian, Categorical (exact and sketched).

For each summary: updates per second of a loop of ``update`` (the per-example hot path, one
call per example and feature) and of ``update_many`` on batches, plus the bins (or values) and
memory kept at the end. Peers run in the same process on the same data, so ratios are
meaningful on a shared machine: the ceiling of a Python loop calling a no-op method, River's
``proba.Gaussian`` kept per class (what ``naive_bayes.GaussianNB`` does), a dict of
``collections.Counter`` (exact categorical counts) and River's count-min ``sketch.Counter``
(which counts values but not per class).

    python benchmarks/bench_summaries.py [--n N] [--batch B] [--repeat R] [--seed S]

Each figure is the best of ``R`` runs (default 3) on a fresh summary: the machines are shared.

Writes ``benchmarks/results/summaries.csv`` (one row per measurement, appended; each row has the
date, git commit, machine and library versions) and prints a table.
"""

from __future__ import annotations

import argparse
import collections
import csv
import datetime
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import river  # noqa: E402
from river import proba  # noqa: E402
from river import sketch as river_sketch  # noqa: E402

from wnb_stream.summaries.categorical import Categorical  # noqa: E402
from wnb_stream.summaries.cpid import CPiD  # noqa: E402
from wnb_stream.summaries.gaussian import Gaussian  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "summaries.csv"
FIELDS = [
    "date",
    "commit",
    "machine",
    "python",
    "numpy",
    "river",
    "summary",
    "data",
    "method",
    "n",
    "repeat",
    "seconds",
    "updates_per_second",
    "ratio_to_noop_loop",
    "kept",
    "memory_bytes",
]


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        commit = out.stdout.strip() or "unknown"
        return commit + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _machine() -> str:
    return f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus {platform.system()} {platform.release()}"


class _NoOp:
    def update(self, x, y, w=1.0):
        pass


class _RiverGaussianPerClass:
    """River's GaussianNB layout: one ``proba.Gaussian`` per class, created on first sight."""

    def __init__(self):
        self.dists = collections.defaultdict(proba.Gaussian)

    def update(self, x, y, w=1.0):
        self.dists[y].update(x, w)


class _CounterPerValue:
    """The plain-Python exact baseline: value → Counter of classes."""

    def __init__(self):
        self.counts = collections.defaultdict(collections.Counter)

    def update(self, x, y, w=1.0):
        self.counts[x][y] += w


class _RiverCountMin:
    """River's count-min sketch (one counter per cell: no class counts), ε = 0.001, δ = 0.01."""

    def __init__(self):
        self.sketch = river_sketch.Counter(epsilon=0.001, delta=0.01, seed=0)

    def update(self, x, y, w=1):
        self.sketch.update(x, w)  # integer counters: River's table is int32


def _time_loop(summary, values: list, labels: list) -> float:
    update = summary.update
    start = time.perf_counter()
    for x, y in zip(values, labels):
        update(x, y)
    return time.perf_counter() - start


def _time_batches(summary, values: np.ndarray, labels: np.ndarray, batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(values), batch):
        summary.update_many(values[i : i + batch], labels[i : i + batch])
    return time.perf_counter() - start


def _kept(summary) -> int | str:
    if isinstance(summary, CPiD):
        return len(summary.table().upper_bounds)
    if isinstance(summary, Gaussian):
        return len(summary.classes)
    if isinstance(summary, Categorical):
        return f"{len(summary.table().values)} ({summary.mode})"
    return ""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="values per measurement (default 10^6)")
    parser.add_argument("--batch", type=int, default=10_000, help="batch size of update_many (default 10^4)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    n = args.n
    labels = rng.integers(0, 2, size=n)
    numeric = rng.normal(labels.astype(float), 1.0, size=n)
    few_values = np.array([f"v{i}" for i in range(100)], dtype=object)[rng.integers(0, 100, size=n)]
    many_values = np.array([f"v{i}" for i in range(100_000)], dtype=object)[rng.integers(0, 100_000, size=n)]
    data = {
        "normal": (numeric, numeric.tolist()),
        "100 values": (few_values, few_values.tolist()),
        "1e5 values (uniform)": (many_values, many_values.tolist()),
    }
    label_list = labels.tolist()

    plans = [
        ("no-op loop (ceiling)", _NoOp, "normal", False),
        ("CPiD()", CPiD, "normal", True),
        ("CPiD(tail_split='step')", lambda: CPiD(tail_split="step"), "normal", True),
        ("Gaussian()", Gaussian, "normal", True),
        ("river proba.Gaussian per class", _RiverGaussianPerClass, "normal", False),
        ("Categorical() exact", Categorical, "100 values", True),
        ("dict of Counter", _CounterPerValue, "100 values", False),
        ("Categorical() sketch", Categorical, "1e5 values (uniform)", True),
        ("river sketch.Counter (no classes)", _RiverCountMin, "1e5 values (uniform)", False),
    ]

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": _machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "river": river.__version__,
    }
    rows = []
    noop_rate = None
    for name, factory, data_name, has_many in plans:
        array, as_list = data[data_name]
        seconds = math.inf
        for _ in range(args.repeat):
            summary = factory()
            seconds = min(seconds, _time_loop(summary, as_list, label_list))  # update(x, y): default weight
        rate = n / seconds
        if noop_rate is None:
            noop_rate = rate
        rows.append(
            dict(meta, summary=name, data=data_name, method="update", n=n, repeat=args.repeat,
                 seconds=round(seconds, 4),
                 updates_per_second=round(rate), ratio_to_noop_loop=round(rate / noop_rate, 3),
                 kept=_kept(summary), memory_bytes=summary.memory_usage() if hasattr(summary, "memory_usage") else "")
        )
        if has_many:
            seconds = math.inf
            for _ in range(args.repeat):
                summary = factory()
                seconds = min(seconds, _time_batches(summary, array, labels, args.batch))
            rate = n / seconds
            rows.append(
                dict(meta, summary=name, data=data_name, method=f"update_many({args.batch})", n=n,
                     repeat=args.repeat, seconds=round(seconds, 4), updates_per_second=round(rate),
                     ratio_to_noop_loop=round(rate / noop_rate, 3), kept=_kept(summary),
                     memory_bytes=summary.memory_usage())
            )
        print(f"{name:36s} done", file=sys.stderr, flush=True)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    new_file = not args.output.exists()
    with args.output.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        if new_file:
            writer.writeheader()
        writer.writerows(rows)

    print(f"\n{meta['date']}  commit {meta['commit']}  {meta['machine']}  n = {n:,}")
    header = (
        f"{'summary':36s} {'data':22s} {'method':20s} {'updates/s':>12s} {'x no-op':>8s} {'kept':>14s} "
        f"{'memory':>10s}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['summary']:36s} {row['data']:22s} {row['method']:20s} {row['updates_per_second']:>12,d} "
            f"{row['ratio_to_noop_loop']:>8.3f} {str(row['kept']):>14s} {str(row['memory_bytes']):>10s}"
        )
    print(f"\nappended {len(rows)} rows to {args.output}")


if __name__ == "__main__":
    main()
