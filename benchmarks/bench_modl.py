"""Speed of level 2 (MODL): discretization and value grouping on synthetic level-1 tables.

Run from the repository root::

    python benchmarks/bench_modl.py            # full grid, writes benchmarks/results/modl.csv
    python benchmarks/bench_modl.py --quick    # fewer repeats

Grid (seed 42):

- discretization of ``Bins`` tables with 100, 300, 1,000 and 10,000 bins and 2 or 10 classes, by the
  default method (``auto``), the exact dynamic programme (skipped at 10,000 bins: O(B³)) and the
  greedy search; each bin holds 30 examples drawn from a class profile that varies smoothly along
  the bins (several informative intervals, as on real variables);
- discretization of the tables the classifier rebuilds (task ``discretize-gk``): the ``GKClass()``
  summaries (default ε, about 100–160 tuples) of the 10 variables of a ``RandomRBF`` stream with 2
  or 5 classes after 1,000 and 5,000 examples, by the default method; the figure is the time per
  table (the 20 tables are timed together);
- grouping of ``Categories`` tables with 10, 100 and 1,000 values and 2 or 10 classes (``auto`` and
  ``greedy``); each value holds 5–200 examples drawn from one of 5 hidden class profiles.

Each case is timed by repeated calls (at least 3, up to 50 or about 1 s); the table reports the
minimum and the median in milliseconds (the machines are shared: the minimum is the figure to
compare). The first ``discretize`` call of the run is reported apart (task ``first-call``): it
loads the compiled kernels of ``modl._kernels`` from numba's cache, or compiles them when the
cache is empty. Targets: under 5 ms for a 300-bin, 2-class table with the default method (issue
"Level 2"), and under 0.15 ms for a GKClass table of about 150 bins (issue 7, throughput).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wnb_stream import modl  # noqa: E402
from wnb_stream.summaries import Bins, Categories  # noqa: E402

SEED = 42


def numeric_table(n_bins: int, n_classes: int, rng: np.random.Generator, per_bin: int = 30) -> Bins:
    """``(n_bins, n_classes)`` counts whose class profile varies smoothly along the bins."""
    x = np.linspace(0.0, 1.0, n_bins)
    phases = rng.uniform(0, 2 * np.pi, n_classes)
    frequencies = rng.uniform(0.5, 2.0, n_classes)
    logits = 2.0 * np.sin(2 * np.pi * frequencies[None, :] * x[:, None] + phases[None, :])  # (n_bins, n_classes)
    profile = np.exp(logits)
    profile /= profile.sum(axis=1, keepdims=True)
    counts = np.array([rng.multinomial(per_bin, p) for p in profile])
    return Bins(upper_bounds=x, counts=counts, classes=tuple(range(n_classes)), missing=np.zeros(n_classes))


def categorical_table(n_values: int, n_classes: int, rng: np.random.Generator, n_profiles: int = 5) -> Categories:
    """``(n_values, n_classes)`` counts, each value drawn from one of a few hidden class profiles."""
    profiles = rng.dirichlet(np.full(n_classes, 0.7), size=n_profiles)
    which = rng.integers(0, n_profiles, n_values)
    sizes = rng.integers(5, 200, n_values)
    counts = np.array([rng.multinomial(s, profiles[w]) for s, w in zip(sizes, which)])
    return Categories(
        values=tuple(f"v{i}" for i in range(n_values)),
        counts=counts,
        classes=tuple(range(n_classes)),
        missing=np.zeros(n_classes),
        star=np.zeros(n_classes),
    )


def gk_tables(n_classes: int, seed: int = SEED, n_features: int = 10, checkpoints=(1_000, 5_000)) -> list:
    """Tables of ``GKClass()`` summaries along a ``RandomRBF`` stream, as the classifier rebuilds them."""
    from river.datasets import synth

    from wnb_stream.summaries import GKClass

    stream = synth.RandomRBF(seed_model=seed, seed_sample=seed, n_features=n_features, n_classes=n_classes)
    summaries = [GKClass() for _ in range(n_features)]
    tables = []
    for t, (x, y) in enumerate(stream.take(max(checkpoints)), 1):
        for k, summary in enumerate(summaries):
            summary.update(x[k], y)
        if t in checkpoints:
            tables.extend(summary.table() for summary in summaries)
    return tables


def timed(function, max_repeats: int, budget: float):
    """(result, list of durations in ms): at least 3 calls, at most ``max_repeats`` or ``budget`` s."""
    durations = []
    start = time.perf_counter()
    result = None
    while len(durations) < 3 or (len(durations) < max_repeats and time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        result = function()
        durations.append((time.perf_counter() - t0) * 1e3)
    return result, durations


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> str:
    return f"{platform.machine()} {os.cpu_count()} cpu, {platform.system()} {platform.release()}, Python {platform.python_version()}, NumPy {np.__version__}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results" / "modl.csv"))
    args = parser.parse_args(argv)
    max_repeats, budget = (5, 0.2) if args.quick else (50, 1.0)

    rng = np.random.default_rng(SEED)
    rows = []
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    commit, host = git_commit(), machine()

    def record(task, size, n_classes, method, result, durations, per_call=1):
        durations = [d / per_call for d in durations]
        row = {
            "date": stamp,
            "commit": commit,
            "machine": host,
            "task": task,
            "size": size,
            "n_classes": n_classes,
            "method": method,
            "method_used": result.method,
            "repeats": len(durations),
            "min_ms": round(min(durations), 3),
            "median_ms": round(statistics.median(durations), 3),
            "n_parts": result.n_parts,
            "level": round(result.level, 6),
            "cost": round(result.cost, 6),
        }
        rows.append(row)
        print(
            f"{task:10s} {size:>6d} x {n_classes:<2d} {method:6s} ({result.method:6s}) "
            f"min {row['min_ms']:9.3f} ms  median {row['median_ms']:9.3f} ms  parts {result.n_parts:3d}  "
            f"cost {result.cost:.3f}",
            flush=True,
        )

    # the first call loads the compiled kernels (or compiles them): timed apart
    first_table = numeric_table(20, 2, np.random.default_rng(SEED + 1))
    t0 = time.perf_counter()
    result = modl.discretize(first_table)
    record("first-call", 20, 2, "auto", result, [(time.perf_counter() - t0) * 1e3])

    for n_bins in (100, 300, 1_000, 10_000):
        for n_classes in (2, 10):
            table = numeric_table(n_bins, n_classes, rng)
            for method in ("auto", "exact", "greedy"):
                if method == "exact" and n_bins > 1_000:
                    continue  # O(B³): minutes at 10,000 bins
                repeats = max_repeats if n_bins <= 1_000 else min(max_repeats, 5)
                result, durations = timed(lambda: modl.discretize(table, method=method), repeats, budget)
                record("discretize", n_bins, n_classes, method, result, durations)

    for n_classes in (2, 5):
        tables = gk_tables(n_classes)
        size = int(round(np.mean([len(t.upper_bounds) for t in tables])))
        results, durations = timed(lambda: [modl.discretize(t) for t in tables], max_repeats, budget)
        record("discretize-gk", size, n_classes, "auto", results[-1], durations, per_call=len(tables))

    for n_values in (10, 100, 1_000):
        for n_classes in (2, 10):
            table = categorical_table(n_values, n_classes, rng)
            for method in ("auto", "greedy"):
                repeats = max_repeats if n_values <= 100 else min(max_repeats, 5)
                result, durations = timed(lambda: modl.group(table, method=method), repeats, budget)
                record("group", n_values, n_classes, method, result, durations)

    # estimate the headline figure
    default_300 = next(r for r in rows if r["task"] == "discretize" and r["size"] == 300 and r["n_classes"] == 2 and r["method"] == "auto")
    print(
        f"\n300 bins x 2 classes, default method: {default_300['min_ms']:.3f} ms (min), "
        f"{default_300['median_ms']:.3f} ms (median); 100 variables: {100 * default_300['median_ms'] / 1e3:.3f} s"
    )
    for row in rows:
        if row["task"] == "discretize-gk":
            print(
                f"GKClass tables (~{row['size']} bins x {row['n_classes']} classes), default method: "
                f"{1e3 * row['min_ms']:.0f} us per table (min), {1e3 * row['median_ms']:.0f} us (median)"
            )

    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
