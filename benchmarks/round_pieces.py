"""The pieces of one coordinator round (``model.absorb``) at K features, in one process.

A model that has seen 5,000 rows of RandomRBF (5 classes, ``ray_scaling.rbf``) absorbs ``--deltas``
deltas of ``--rows`` rows each, five times from the same saved model; the medians of the absorb and
of its pieces: the summaries' feeds and merges (``merge._fold``), the merged window
(``merge_histories``), and the restart of levels 2 and 3 (``Engine.restart``), of which level 2's
rebuild and the weights' re-optimisation; "other" is the absorb less the first three (the copies,
the checks).

    python benchmarks/round_pieces.py --features 1000 --rows 50 --deltas 4

``--weights-later`` absorbs with ``step=False`` (``Coordinator(background_weights=True)``): the
absorb is then the round's critical path, and the weights column is the step done after it.

``--tree`` measures the round as ``local.train(merge_workers=...)`` runs it: the deltas merged
pairwise, level by level (``Delta.merge``, each level's merges in parallel on idle cores), then
one absorb of the merged delta. It prints, as medians, each level's slowest merge and the absorb
with its pieces; the round's critical path is their sum. A level's merges run at once on the
cores, each in its own process, so each is timed with its share of the cores
(``WNB_STREAM_THREADS``: the cores ÷ the level's merges, at least 1).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from ray_scaling import rbf

from wnb_stream import WeightedNaiveBayes, _threads
from wnb_stream.engine import core, merge

PIECES = ((merge, "_fold"), (merge, "merge_histories"), (core.Engine, "restart"), (core.Engine, "_rebuild_due"), (core.Engine, "step_if_due"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=50, help="rows per delta")
    parser.add_argument("--deltas", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tree", action="store_true", help="merge the deltas in a tree first (merge_workers)")
    parser.add_argument("--weights-later", action="store_true",
                        help="absorb(step=False): the weights' step (step_weights) timed apart, off the round's critical path")  # fmt: skip
    args = parser.parse_args()
    spent: dict = {}

    def timed(owner, name):
        step = getattr(owner, name)

        def wrapper(*a, **kw):
            start = time.perf_counter()
            try:
                return step(*a, **kw)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - start

        setattr(owner, name, wrapper)

    for owner, name in PIECES:
        timed(owner, name)
    n, count = args.rows, args.deltas
    X, y = rbf(5000 + count * n, args.features)
    base = WeightedNaiveBayes(seed=1)
    first = base.delta()
    first.learn_many(X[:5000], y[:5000])
    base.absorb([first])
    deltas = []
    for p in range(count):
        delta = base.delta()
        delta.learn_many(X[5000 + p * n : 5000 + (p + 1) * n], y[5000 + p * n : 5000 + (p + 1) * n])
        delta.flush()
        deltas.append(delta)
    saved, samples, levels = base.to_dict(), [], []
    for _ in range(args.repeats):
        given = deltas
        if args.tree:  # each level's slowest merge: its merges run in parallel
            given, slowest = _merged_in_a_tree(deltas)
            levels.append(slowest)
        model = WeightedNaiveBayes.from_dict(saved)
        spent.clear()
        start = time.perf_counter()
        model.absorb(given, step=not args.weights_later)
        absorb = time.perf_counter() - start
        pieces = [spent.get(name, 0.0) for _, name in PIECES]
        if args.weights_later:  # the step the round left, in the coordinator's thread (Coordinator(background_weights=True))
            start = time.perf_counter()
            model.step_weights()
            pieces[-1] = time.perf_counter() - start
        samples.append((absorb, *pieces))
    if args.tree:
        tree = [statistics.median(repeat[i] for repeat in levels) for i in range(len(levels[0]))]
        print(f"tree of {count} deltas: slowest merge of each level {', '.join(f'{t:.3f}' for t in tree)} s; "
              f"critical path {sum(tree) + statistics.median(s[0] for s in samples):.3f} s (the tree, then the absorb below)")  # fmt: skip
    absorb, fold, window, restart, rebuild, weights = (statistics.median(s[i] for s in samples) for i in range(6))
    if args.weights_later:
        print("(the weights' step is left out of the absorb: its column is the step done after it, off the critical path)")
    print("| K | rows per delta | deltas | absorb (s) | feeds and merges | merged window | level-2 rebuild | weights | other |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.features:,} | {n:,} | {count} | {absorb:.3f} | {fold:.3f} | {window:.3f} | {rebuild:.3f} | {weights:.3f} | "
          f"{absorb - fold - window - restart:.3f} |")  # fmt: skip


def _merged_in_a_tree(deltas: list) -> tuple[list, list]:
    """The deltas merged pairwise, level by level, as ``local.train``'s pool workers merge the
    reports they unpickled (``partitioned.merge_reports(take=True)``: the left one in place, here
    a copy), and the slowest merge of each level."""
    level, slowest = [copy.deepcopy(delta) for delta in deltas], []
    cores, given = _threads.cores(), os.environ.get(_threads.THREADS_VARIABLE)
    while len(level) > 1:
        merged, times = [], []
        pairs = list(zip(level[::2], level[1::2]))
        # a level's merges share the cores (one process each): each merge is timed alone with its
        # share of them (a merge runs its compiled merges in threads, ``gk_batch.PARALLEL_TUPLES``)
        os.environ[_threads.THREADS_VARIABLE] = str(max(1, cores // len(pairs)))
        for a, b in pairs:
            start = time.perf_counter()
            a.merge(b, in_place=True)
            times.append(time.perf_counter() - start)
            merged.append(a)
        if given is None:
            del os.environ[_threads.THREADS_VARIABLE]
        else:  # (the caller's cap, as it was)
            os.environ[_threads.THREADS_VARIABLE] = given
        level = merged + level[len(merged) * 2 :]
        slowest.append(max(times))
    return level, slowest


if __name__ == "__main__":
    main()
