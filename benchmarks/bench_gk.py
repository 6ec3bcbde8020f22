"""Speed, size and accuracy of the GK summary with class counts (``summaries.GKClass``).

Usage::

    python benchmarks/bench_gk.py [--n N] [--epsilon EPS] [--repeat R] [--classes J] [--out PATH] [--no-blocks]

For a uniform and a sorted stream of ``N`` values (default 10^6, one variable, ``J`` classes), it
times ``update`` (one Python float at a time, as the classifier's hot path does), ``update_many``
on batches of 1,000 and on the whole array, and reports the tuples kept against GK01's bound
``max_tuples_bound(ε, N)``, the memory held, and the largest rank error measured against the
exact sorted stream (in units of N, to compare with ε). In the same run it times the ceiling of
any per-value Python update (a no-op method call) and two River summaries a user has today,
``stats.Quantile`` (P², one quantile) and ``sketch.Histogram`` (256 bins, no class counts);
ratios to the no-op are printed next to the absolute figures (the machines are shared: an
absolute figure alone means little). Results go to ``benchmarks/results/gk.csv`` with the date,
git commit and machine.

Then the classifier's regime (skipped with ``--no-blocks``): a summary warmed to about 150 tuples
(default ε, 30 blocks of 1,000 values with object labels, as ``WeightedNaiveBayes`` feeds them),
then per call, averaged over 200 fresh blocks: ``update_many`` of a block of 1,000 values (absorbed
at once), ``update_many`` of 150 values then ``table()`` (the level-2 rebuild, which flushes the
buffer), and ``table()`` alone. The first row times the very first batch of the process: the
numba kernels' compilation, or their load from the cache. ``run_blocks`` takes the summary class,
so another implementation can be timed alike.
"""

from __future__ import annotations

import argparse
import copy
import csv
import datetime
import os
import pathlib
import platform
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wnb_stream.summaries.gk import GKClass  # noqa: E402


class NoOp:
    """The ceiling: a method call that does nothing."""

    def update(self, x, y, w=1.0):
        pass


def best_time(function, repeat: int) -> float:
    """Best wall time of ``repeat`` runs of ``function()`` (which builds its own state)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> str:
    return f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus, {platform.platform()}".replace("  ", " ")


def max_rank_error(gk: GKClass, sorted_values: np.ndarray, n_probes: int = 2000) -> float:
    """Largest |rank(x) − exact rank| over probes spread across the stream, divided by N."""
    probes = sorted_values[np.linspace(0, len(sorted_values) - 1, n_probes).astype(int)]
    exact = np.searchsorted(sorted_values, probes, side="right")
    estimates = np.array([gk.rank(float(p)) for p in probes])
    return float(np.max(np.abs(estimates - exact)) / len(sorted_values))


def run(n: int, epsilon: float, repeat: int, n_classes: int, seed: int = 42) -> list[dict]:
    rng = np.random.default_rng(seed)
    streams = {"uniform": rng.uniform(size=n), "sorted": np.sort(rng.uniform(size=n))}
    labels = rng.integers(0, n_classes, size=n)
    label_list = labels.tolist()
    bound = GKClass.max_tuples_bound(epsilon, n)
    rows = []
    for stream, values in streams.items():
        value_list = values.tolist()
        sorted_values = np.sort(values)

        def loop(summary):
            update = summary.update
            for x, y in zip(value_list, label_list):
                update(x, y)
            return summary

        def by_update():
            gk = loop(GKClass(epsilon=epsilon))
            gk.n_tuples  # flushes the buffer: part of the cost
            return gk

        def by_batches(size=1000):
            gk = GKClass(epsilon=epsilon)
            for start in range(0, n, size):
                gk.update_many(values[start : start + size], labels[start : start + size])
            gk.n_tuples
            return gk

        def by_array():
            gk = GKClass(epsilon=epsilon)
            gk.update_many(values, labels)
            gk.n_tuples
            return gk

        def river_quantile():
            from river import stats

            q = stats.Quantile(0.5)
            update = q.update
            for x in value_list:
                update(x)

        def river_histogram():
            from river import sketch

            h = sketch.Histogram(max_bins=256)
            update = h.update
            for x in value_list:
                update(x)

        measured = {
            "noop loop (ceiling)": (lambda: loop(NoOp()), None),
            "GKClass.update": (by_update, by_update),
            "GKClass.update_many x1000": (by_batches, by_batches),
            "GKClass.update_many whole": (by_array, by_array),
            "river stats.Quantile(0.5)": (river_quantile, None),
            "river sketch.Histogram(256)": (river_histogram, None),
        }
        noop_rate = None
        for method, (function, builder) in measured.items():
            seconds = best_time(function, repeat)
            rate = n / seconds
            if noop_rate is None:
                noop_rate = rate
            row = {
                "date": datetime.datetime.now().isoformat(timespec="seconds"),
                "commit": git_commit(),
                "machine": machine(),
                "python": platform.python_version(),
                "numpy": np.__version__,
                "n": n,
                "classes": n_classes,
                "epsilon": epsilon,
                "stream": stream,
                "method": method,
                "seconds": round(seconds, 4),
                "updates_per_s": round(rate),
                "ratio_to_noop": round(rate / noop_rate, 4),
                "tuples": "",
                "tuple_bound": "",
                "effective_epsilon": "",
                "max_rank_error_over_n": "",
                "memory_bytes": "",
            }
            if builder is not None:
                gk = builder()
                gk._check()
                row.update(
                    tuples=gk.n_tuples,
                    tuple_bound=bound,
                    effective_epsilon=round(gk.effective_epsilon, 6),
                    max_rank_error_over_n=round(max_rank_error(gk, sorted_values), 6),
                    memory_bytes=gk.memory_usage(),
                )
            rows.append(row)
            extra = ""
            if row["tuples"] != "":
                extra = (
                    f"  tuples {row['tuples']:>5} (bound {bound}, 1/ε = {1 / epsilon:.0f})"
                    f"  ε_eff {row['effective_epsilon']:.5f}  max rank err/N {row['max_rank_error_over_n']:.5f}"
                    f"  memory {row['memory_bytes'] / 1024:.1f} KiB"
                )
            print(f"{stream:8} {method:28} {rate / 1e6:7.3f} M values/s  ({rate / noop_rate:5.3f}× no-op){extra}", flush=True)
    return rows


def first_call(gk_class, n_classes: int, seed: int = 0) -> float:
    """Seconds of the first ``update_many`` of 1,000 values and ``table()`` in this process."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    gk = gk_class()
    gk.update_many(rng.normal(size=1000), rng.integers(0, n_classes, size=1000))
    gk.table()
    return time.perf_counter() - start


def run_blocks(gk_class, n_classes: int, repeat: int, n_blocks: int = 200, seed: int = 42) -> list[dict]:
    """Per-call times in the classifier's regime (see the module docstring); one dict a case."""
    rng = np.random.default_rng(seed)
    names = np.empty(n_classes, dtype=object)
    names[:] = [f"class {j}" for j in range(n_classes)]  # object labels, as the classifier's

    def block(size):  # (values (size,), labels (size,) object, weights (size,))
        return rng.normal(size=size), names[rng.integers(0, n_classes, size=size)], np.ones(size)

    warm = gk_class()
    for values, labels, weights in (block(1000) for _ in range(30)):
        warm.update_many(values, labels, weights)
    full = [block(1000) for _ in range(n_blocks)]
    partial = [block(150) for _ in range(n_blocks)]

    def absorb_blocks():
        gk = copy.deepcopy(warm)
        start = time.perf_counter()
        for values, labels, weights in full:
            gk.update_many(values, labels, weights)
        return time.perf_counter() - start

    def rebuilds():
        gk = copy.deepcopy(warm)
        start = time.perf_counter()
        for values, labels, weights in partial:
            gk.update_many(values, labels, weights)
            gk.table()
        return time.perf_counter() - start

    def tables():
        gk = copy.deepcopy(warm)
        gk.table()
        start = time.perf_counter()
        for _ in range(n_blocks):
            gk.table()
        return time.perf_counter() - start

    cases = {
        "update_many(1000)": (absorb_blocks, 1000),
        "update_many(150) + table()": (rebuilds, 150),
        "table() alone": (tables, 0),
    }
    best = {name: float("inf") for name in cases}
    for _ in range(repeat):  # the cases take turns, so a load spike hits them alike
        for name, (function, _) in cases.items():
            best[name] = min(best[name], function() / n_blocks)
    return [
        {"method": name, "seconds_per_call": best[name], "values_per_call": size, "tuples": warm.n_tuples}
        for name, (_, size) in cases.items()
    ]


def blocks_rows(n_classes: int, repeat: int, first_seconds: float) -> list[dict]:
    """``run_blocks`` of ``GKClass`` as rows of the results file (n = values per call)."""
    base = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "classes": n_classes,
        "epsilon": GKClass().guaranteed_epsilon,
        "stream": "blocks",
        "ratio_to_noop": "",
        "tuple_bound": "",
        "effective_epsilon": "",
        "max_rank_error_over_n": "",
        "memory_bytes": "",
    }
    first = "first update_many(1000) + table()"
    rows = [{**base, "n": 1000, "method": first, "seconds": round(first_seconds, 4), "updates_per_s": "", "tuples": ""}]
    print(f"blocks   {first:34} {first_seconds:8.3f} s  (compilation or cache load)")
    for case in run_blocks(GKClass, n_classes, repeat):
        seconds, size = case["seconds_per_call"], case["values_per_call"]
        rate = round(size / seconds) if size else ""
        rows.append(
            {**base, "n": size, "method": case["method"], "seconds": f"{seconds:.3g}", "updates_per_s": rate, "tuples": case["tuples"]}
        )
        print(f"blocks   {case['method']:34} {seconds * 1e6:8.1f} µs a call  ({case['tuples']} tuples, J = {n_classes})", flush=True)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="values per stream (default 10^6)")
    parser.add_argument("--epsilon", type=float, default=0.005, help="GK ε (default 0.005)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    parser.add_argument("--classes", type=int, default=2, help="number of classes J (default 2)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "benchmarks" / "results" / "gk.csv")
    parser.add_argument("--append", action="store_true", help="append to the CSV instead of replacing it")
    parser.add_argument("--no-blocks", dest="blocks", action="store_false", help="skip the classifier's block regime")
    args = parser.parse_args(argv)
    print(f"GKClass benchmark: N = {args.n:,}, ε = {args.epsilon}, J = {args.classes}, best of {args.repeat}")
    print(f"commit {git_commit()}, {machine()}, Python {platform.python_version()}, NumPy {np.__version__}")
    first_seconds = first_call(GKClass, args.classes)  # before anything else: the compilation
    rows = run(args.n, args.epsilon, args.repeat, args.classes)
    if args.blocks:
        rows += blocks_rows(args.classes, max(args.repeat, 5), first_seconds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    exists = args.out.exists() and args.append
    with open(args.out, "a" if args.append else "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        if not exists:
            writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
