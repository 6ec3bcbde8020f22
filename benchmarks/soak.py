"""Soak: does memory stay flat over a long stream? (docs/index.md, "The streaming contract")

A seeded synthetic stream of ``--n`` examples (default 10^6), two classes, K = 20 variables:
10 numeric (5 informative, 5 noise, 1% missing), 9 categorical with 3 to 200 values, and one
categorical with 10^5 distinct values (a user or product id; drawn uniformly, so new values keep
arriving until about the middle of a 10^6 stream, then the set is complete).

Two modes:

- ``model`` (default): prequential, ``predict_proba_one`` on every 10th example, ``learn_one`` on
  every example;
- ``runner``: the same examples through ``wnb_stream.stream.StreamRunner`` as events whose labels
  arrive 0 to 2,000 messages later (5% never), with a pending table of ``--capacity`` entries and
  an atomic checkpoint every ``--checkpoint-every`` messages: the whole production loop.

Along the stream, ``--samples`` times, the process RSS (``VmRSS`` of /proc/self/status) and
``model.memory_usage()`` are recorded to ``benchmarks/results/soak.csv`` (mode ``runner`` writes
``soak_runner.csv``). After the warm-up (the first ``--warmup`` share of the stream) the growth of
each from the first post-warm-up sample to the last is reported, and called flat when it is
below ``--tolerance`` (relative). RSS is the whole process: besides the model it holds
module-level tables (``wnb_stream.modl.costs`` keeps a table of lΓ(n) that doubles with the
largest count seen, up to 2^21 entries = 16 MiB, i.e. until about 2·10^6 examples) and what the C
allocator keeps after freeing. ``--tracemalloc`` records the bytes Python itself still holds
(``traced_bytes``; the run is about five times slower) to tell such steps from a leak. At the
end the model is saved once with ``wnb_stream.io`` (size, dump and load times).

Usage (from the repository root)::

    python benchmarks/soak.py --n 100000          # a quick look
    python benchmarks/soak.py                     # 10^6 examples
    python benchmarks/soak.py --mode runner --n 300000
    python benchmarks/soak.py --n 700000 --tracemalloc   # leak or allocator?
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import RESULTS, ResultFile, provenance

from wnb_stream import io

N_NUMERIC = 10
CARDINALITIES = [3, 5, 8, 12, 20, 30, 50, 100, 200]
N_IDS = 100_000


def rss_bytes() -> int:
    """Resident set size now (VmRSS); the peak from getrusage where /proc is missing."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Stream:
    """The seeded soak stream, generated in NumPy chunks and handed out as (x, y) dicts."""

    def __init__(self, n: int, seed: int, chunk: int = 10_000):
        self.n = n
        self.seed = seed
        self.chunk = chunk
        self.names = [f"num{k}" for k in range(N_NUMERIC)] + [f"cat{k}" for k in range(len(CARDINALITIES))] + ["id"]
        # Value labels made once, so that the loop only looks them up.
        self.labels = [[f"c{k}v{v}" for v in range(c)] for k, c in enumerate(CARDINALITIES)]
        self.ids = [f"u{v}" for v in range(N_IDS)]

    def __iter__(self):
        rng = np.random.default_rng(self.seed)
        done = 0
        while done < self.n:
            m = min(self.chunk, self.n - done)
            y = rng.random(m) < 0.3  # (m,) P(y) = 0.3
            numeric = rng.normal(size=(m, N_NUMERIC))  # (m, 10)
            numeric[:, :5] += 0.6 * y[:, None] * np.arange(1, 6) / 5  # informative shifts
            numeric[rng.random((m, N_NUMERIC)) < 0.01] = np.nan  # missing values
            categorical = np.empty((m, len(CARDINALITIES)), dtype=np.intp)  # (m, 9)
            for k, c in enumerate(CARDINALITIES):
                codes = rng.integers(0, c, size=m)
                # class 1 prefers the lower half of the values of the even-numbered variables
                half = np.maximum(1, c // 2)
                categorical[:, k] = np.where(y & (k % 2 == 0) & (rng.random(m) < 0.5), codes % half, codes)
            ids = rng.integers(0, N_IDS, size=m)  # (m,)
            ids = np.where(y & (rng.random(m) < 0.2), ids % 1000, ids)  # some ids carry signal
            numeric_rows = numeric.tolist()
            labels = self.labels
            for i in range(m):
                x = dict(zip(self.names[:N_NUMERIC], numeric_rows[i]))
                for k in range(len(CARDINALITIES)):
                    x[f"cat{k}"] = labels[k][categorical[i, k]]
                x["id"] = self.ids[ids[i]]
                yield x, bool(y[i])
            done += m


class DelayedSource:
    """The stream as messages: each event, and its label 0..2,000 messages later (5% never)."""

    def __init__(self, stream: Stream, seed: int):
        self.stream = stream
        self.seed = seed

    def seek(self, position) -> None:
        if position is not None:
            raise ValueError("the soak source only starts from the beginning")

    def __iter__(self):
        rng = np.random.default_rng(self.seed + 1)
        due: dict[int, list] = {}
        position = 0
        for i, (x, y) in enumerate(self.stream):
            position += 1
            yield position, {"id": i, "x": x}
            if rng.random() < 0.95:
                due.setdefault(i + int(rng.integers(0, 2001)), []).append((i, y))
            for key, label in due.pop(i, []):
                position += 1
                yield position, {"id": key, "y": label}


def growth(samples: list[dict], column: str, warmup: int) -> tuple[float, float]:
    """(relative growth, slope in bytes per 10^5 examples) of ``column`` after the warm-up."""
    after = [s for s in samples if s["examples"] >= warmup]
    if len(after) < 2:
        return float("nan"), float("nan")
    first, last = after[0][column], after[-1][column]
    x = np.array([s["examples"] for s in after], dtype=float)
    v = np.array([s[column] for s in after], dtype=float)
    slope = np.polyfit(x, v, 1)[0] * 1e5
    return (last - first) / first, slope


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="examples in the stream")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--mode", choices=["model", "runner"], default="model")
    parser.add_argument("--samples", type=int, default=50, help="memory samples along the stream")
    parser.add_argument("--warmup", type=float, default=0.5, help="share of the stream before the flatness check")
    parser.add_argument("--tolerance", type=float, default=0.05, help="relative growth still called flat")
    parser.add_argument("--capacity", type=int, default=10_000, help="runner mode: pending table capacity")
    parser.add_argument("--checkpoint-every", type=int, default=200_000, help="runner mode: messages per checkpoint")
    parser.add_argument("--history-size", type=int, default=None, help="model history depth N (default: the model's)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also record the bytes Python allocated and still holds (slower; tells a leak from "
                             "allocator growth)")
    args = parser.parse_args(argv)

    from wnb_stream import WeightedNaiveBayes

    params = {"seed": args.seed}
    if args.history_size is not None:
        params["history_size"] = args.history_size
    model = WeightedNaiveBayes(**params)
    stream = Stream(args.n, args.seed)
    every = max(1, args.n // args.samples)
    meta = {**provenance(), "mode": args.mode, "n": args.n, "seed": args.seed, "model": repr(model).replace("\n", " ")}
    name = "soak" + ("" if args.mode == "model" else "_runner") + ("_traced" if args.tracemalloc else "")
    out = ResultFile(RESULTS / f"{name}.csv", meta)
    samples: list[dict] = []
    if args.tracemalloc:
        tracemalloc.start()
    start = time.perf_counter()
    baseline = rss_bytes()

    def sample(examples: int, extra: dict | None = None) -> None:
        rss = rss_bytes()
        row = {
            "examples": examples,
            "seconds": round(time.perf_counter() - start, 2),
            "rss_bytes": rss,
            "rss_above_start": rss - baseline,
            "model_bytes": model_of().memory_usage(),
            **({"traced_bytes": tracemalloc.get_traced_memory()[0]} if args.tracemalloc else {}),
            **(extra or {}),
        }
        samples.append(row)
        out.add(row)
        print(
            f"{examples:>9,} ex  {row['seconds']:>8.1f} s  RSS {row['rss_bytes'] / 2**20:8.1f} MiB  "
            f"model {row['model_bytes'] / 2**20:8.2f} MiB"
            + (f"  traced {row['traced_bytes'] / 2**20:8.2f} MiB" if args.tracemalloc else "")
            + "".join(f"  {k} {v}" for k, v in (extra or {}).items()),
            flush=True,
        )

    if args.mode == "model":
        model_of = lambda: model  # noqa: E731
        correct = predicted = 0
        for i, (x, y) in enumerate(stream, start=1):
            if i % 10 == 0:
                proba = model.predict_proba_one(x)
                if proba:
                    predicted += 1
                    correct += max(proba, key=proba.get) == y
            model.learn_one(x, y)
            if i % every == 0 or i == args.n:
                sample(i, {"accuracy_1_in_10": round(correct / max(predicted, 1), 4)})
    else:
        from wnb_stream.stream import StreamRunner

        directory = tempfile.mkdtemp(prefix="wnb-soak-")
        runner = StreamRunner(
            model,
            os.path.join(directory, "checkpoint.json"),
            capacity=args.capacity,
            checkpoint_every=args.checkpoint_every,
        )
        model_of = lambda: runner.model  # noqa: E731
        source = DelayedSource(stream, args.seed)
        source.seek(None)
        events = 0
        for position, message in source:
            runner.step(position, message)
            runner.maybe_checkpoint(source)
            if "x" in message:
                events += 1
                if events % every == 0:
                    s = runner.stats
                    sample(events, {k: s[k] for k in ("pending", "learned", "correct", "evicted", "checkpoints")})
        runner.checkpoint(source)
        s = runner.stats
        sample(events, {k: s[k] for k in ("pending", "learned", "correct", "evicted", "checkpoints")})
        size = os.path.getsize(runner.checkpoint_path)
        print(f"checkpoint file: {size / 2**20:.1f} MiB (model, {len(runner.pending):,} pending events, position)")
        shutil.rmtree(directory)
        model = runner.model

    elapsed = time.perf_counter() - start
    print(f"\n{args.n:,} examples in {elapsed:.0f} s ({args.n / elapsed:,.0f} examples/s, mode {args.mode})")
    warmup = int(args.warmup * args.n)
    for column in ("rss_bytes", "model_bytes") + (("traced_bytes",) if args.tracemalloc else ()):
        rel, slope = growth(samples, column, warmup)
        verdict = "flat" if abs(rel) <= args.tolerance else "GROWING"
        print(f"{column:12s} after {warmup:,} examples: {rel:+.1%} to the end, slope {slope / 2**10:+,.1f} KiB "
              f"per 100k examples -> {verdict}")
    t0 = time.perf_counter()
    text = io.dumps(model)
    t1 = time.perf_counter()
    back = io.loads(text)
    t2 = time.perf_counter()
    x, _ = next(iter(Stream(1, args.seed + 7)))
    same = back.predict_proba_one(x) == model.predict_proba_one(x)
    print(f"saved model: {len(text) / 2**20:.1f} MiB gzip-compressed, dumps {t1 - t0:.2f} s, loads {t2 - t1:.2f} s, "
          f"same predictions after loading: {same}")
    print(f"wrote {out.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
