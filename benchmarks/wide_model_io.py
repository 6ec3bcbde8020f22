"""Save and load a wide sparse model: the model of ``sparse.py --K 100000`` (``wnb0``) after its
first ``--n`` rows, its file, and what a process spends loading and saving it.

    python benchmarks/wide_model_io.py make --n 6000 --path /tmp/wide.json.gz
    python benchmarks/wide_model_io.py measure --path /tmp/wide.json.gz

``make`` trains ``WeightedNaiveBayes(absent=0, history_size=5000, seed=42)`` on the stream
(``sparse.stream``: 100,000 possible words, about 100 per row, 20 informative, seed 42), as
``sparse.py`` runs its ``wnb0``, and writes it with ``model.save``. ``measure`` loads the file in
this process and prints the seconds of ``io.load``, the resident set before the load, after it
(garbage collected) and at its peak (``ru_maxrss``), in MiB, and the median of three
``model.save`` (to a temporary file). For the whole process, time ``python -c "from wnb_stream
import io; io.load('FILE')"`` with ``/usr/bin/time``.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import tempfile
import time


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def make(n: int, path: str) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from sparse import stream

    from wnb_stream import WeightedNaiveBayes

    model = WeightedNaiveBayes(absent=0, history_size=5000, seed=42)
    for x, y, _ in stream(100_000, n, 100, 20, 42):
        model.predict_proba_one(x)
        model.learn_one(x, y)
    model.save(path)
    print(f"{len(model._engine.registry)} variables, {os.path.getsize(path)} bytes: {path}")


def measure(path: str) -> None:
    from wnb_stream import io

    before = _rss_mib()
    t = time.perf_counter()
    model = io.load(path)
    load_s = time.perf_counter() - t
    gc.collect()
    after, peak = _rss_mib(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    saves = []
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(3):
            t = time.perf_counter()
            model.save(os.path.join(directory, "model.json.gz"))
            saves.append(time.perf_counter() - t)
    print(
        f"load {load_s:.2f} s; resident MiB: before {before:.0f}, after {after:.0f}, peak {peak:.0f} "
        f"({peak - after:.0f} above the loaded model, {peak - before:.0f} above the process before); "
        f"save median {statistics.median(saves):.2f} s of {[round(s, 2) for s in saves]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("make", "measure"))
    parser.add_argument("--path", required=True)
    parser.add_argument("--n", type=int, default=6000, help="rows of the stream (make)")
    args = parser.parse_args()
    make(args.n, args.path) if args.what == "make" else measure(args.path)


if __name__ == "__main__":
    main()
