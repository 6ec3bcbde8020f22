"""Sparse streams: rows handed as dicts of their non-zero entries (absent means 0).

A seeded synthetic stream of word counts: K features, about ``--nnz`` non-zero entries per row,
``--informative`` of them carrying the class (a rate that depends on the class), the others noise
whose rates follow a Zipf law (a few frequent words, a long tail). Two classes, balanced.

Models, prequential (``predict_proba_one`` then ``learn_one`` on the same dict), taking turns
``--turn`` rows at a time so that a load spike hits them alike:

- ``wnb0``: ``WeightedNaiveBayes(absent=0)`` (GK summaries, VNS weights), the sparse switch
  (with ``--memory-budget``, its ``memory_budget``);
- ``wnb``: ``WeightedNaiveBayes()`` on the same dicts, absent = missing (today's default);
- ``mnb``, ``bnb``: River's ``MultinomialNB`` and ``BernoulliNB``, the peers on such dicts.

Our models' compiled kernels are loaded (or compiled) by a throw-away model before the clock
starts. Reported: accuracy, log loss (probabilities clipped at 1e-15), examples/s of each model's own
calls, the time per example ÷ MultinomialNB's, the informative variables among the ones our
model weighs (w > 0), ``memory_usage()``, the process's peak RSS while learning, and a checkpoint
of each of our models: the size of ``io.dumps(model)`` and the seconds of ``io.dumps`` and of
``io.loads`` (after the peak is read: a file's bytes and the model read back are held beside the
model for a moment).

    python benchmarks/sparse.py --K 1000 --n 20000
"""

from __future__ import annotations

import argparse
import math
import resource
import time

import numpy as np
from common import RESULTS, ResultFile, markdown, provenance


def stream(K: int, n: int, nnz: int, informative: int, seed: int):
    """``n`` (dict, label) rows: sparse counts, ``informative`` features of class-dependent rate."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, K - informative + 1)
    noise = 1.0 / ranks
    noise *= max(nnz - informative * 0.2, 1.0) / noise.sum()  # expected non-zero noise entries
    noise = np.minimum(noise, 0.9)
    hot = rng.uniform(0.15, 0.45, size=informative)  # rate of an informative word in its class
    cold = hot / rng.uniform(2.0, 4.0, size=informative)  # … and in the other class
    side = rng.integers(0, 2, size=informative)  # which class each informative word favours
    names = [f"w{k}" for k in range(K)]
    order = rng.permutation(K)  # informative words are spread among the noise ones
    for _ in range(n):
        y = int(rng.integers(0, 2))
        rate = np.where(side == y, hot, cold)
        on = np.concatenate([rng.random(informative) < rate, rng.random(K - informative) < noise])
        ks = np.flatnonzero(on)
        counts = 1 + rng.poisson(0.5, size=len(ks))
        yield {names[order[k]]: float(c) for k, c in zip(ks.tolist(), counts.tolist())}, y, {names[order[k]] for k in range(informative)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--K", type=int, default=1000, help="features")
    parser.add_argument("--n", type=int, default=20000, help="rows")
    parser.add_argument("--nnz", type=int, default=100, help="non-zero entries per row, about")
    parser.add_argument("--informative", type=int, default=20)
    parser.add_argument("--history-size", type=int, default=5000)
    parser.add_argument("--memory-budget", type=int, default=None, help="bytes (memory_budget of wnb0; none by default)")
    parser.add_argument("--models", default="wnb0,wnb,mnb,bnb")
    parser.add_argument("--turn", type=int, default=500)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", default=str(RESULTS / "sparse.csv"))
    args = parser.parse_args()

    from river import naive_bayes

    from wnb_stream import WeightedNaiveBayes, io

    makers = {
        "wnb0": lambda: WeightedNaiveBayes(absent=0, history_size=args.history_size, memory_budget=args.memory_budget, seed=args.seed),
        "wnb": lambda: WeightedNaiveBayes(history_size=args.history_size, seed=args.seed),
        "mnb": naive_bayes.MultinomialNB,
        "bnb": naive_bayes.BernoulliNB,
    }
    names = args.models.split(",")
    # Our compiled kernels are loaded from their cache, or compiled on a checkout's first run, by
    # the first model that calls them: a throw-away model of each of ours learns 300 rows of a
    # smaller stream of another seed first, so that this one-off cost is not charged to the run.
    for name in names:
        if name.startswith("wnb"):
            warm = makers[name]()
            for x, y, _ in stream(200, 300, 20, 5, args.seed + 1):
                warm.predict_proba_one(x)
                warm.learn_one(x, y)
    models = {name: makers[name]() for name in names}
    rows = list(stream(args.K, args.n, args.nnz, args.informative, args.seed))
    informative = rows[0][2]
    nnz = np.mean([len(x) for x, _, _ in rows])
    seconds = dict.fromkeys(names, 0.0)
    hits = dict.fromkeys(names, 0)
    loss = dict.fromkeys(names, 0.0)
    for start in range(0, len(rows), args.turn):
        block = rows[start : start + args.turn]
        for name, model in models.items():
            t = time.perf_counter()
            probabilities = []
            for x, y, _ in block:
                probabilities.append(model.predict_proba_one(x))
                model.learn_one(x, y)
            seconds[name] += time.perf_counter() - t
            for p, (_, y, _) in zip(probabilities, block):
                if p:
                    hits[name] += max(p, key=p.get) == y
                loss[name] -= math.log(min(max(p.get(y, 0.0), 1e-15), 1.0)) if p else math.log(0.5)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)
    info = provenance()
    out = []
    for name, model in models.items():
        used = found = saved = save_s = load_s = ""
        if name.startswith("wnb"):
            weighted = {k for k, w in model.weights.items() if w > 0}
            used, found = len(weighted), len(weighted & informative)
            t = time.perf_counter()
            data = io.dumps(model)  # a checkpoint: the model as a file's bytes, and back
            save_s, t = time.perf_counter() - t, time.perf_counter()
            io.loads(data)
            load_s, saved = time.perf_counter() - t, len(data) / 2**20
        out.append({
            "model": name, "K": args.K, "n": args.n, "nnz": round(nnz, 1), "informative": args.informative,
            "accuracy": hits[name] / args.n, "log_loss": loss[name] / args.n,
            "examples_per_s": args.n / seconds[name], "memory_budget": args.memory_budget if name == "wnb0" else "",
            "window_rows": model._engine.history.capacity if name.startswith("wnb") else "", "time_vs_mnb": seconds[name] / seconds["mnb"] if "mnb" in seconds else "",
            "weighted_variables": used, "informative_weighted": found,
            "memory_usage_mib": model.memory_usage() / 2**20 if hasattr(model, "memory_usage") else "",
            "saved_mib": saved, "save_s": save_s, "load_s": load_s,
            "peak_rss_mib": peak,
        })  # fmt: skip
    results = ResultFile(args.output, info)
    for row in out:
        results.add(row)
    print(f"{info['commit']} {info['date']} {info['machine']}; K = {args.K}, n = {args.n}, {nnz:.1f} non-zero entries per row")
    print(markdown([[r["model"], f"{r['accuracy']:.4f}", f"{r['log_loss']:.4f}", f"{r['examples_per_s']:,.0f}",
                     f"{r['time_vs_mnb']:.2f}" if r["time_vs_mnb"] != "" else "", r["weighted_variables"], r["informative_weighted"],
                     f"{r['memory_usage_mib']:.1f}" if r["memory_usage_mib"] != "" else "",
                     f"{r['saved_mib']:.1f}" if r["saved_mib"] != "" else "",
                     f"{r['save_s']:.1f} / {r['load_s']:.1f}" if r["save_s"] != "" else ""] for r in out],
                   ["model", "accuracy", "log loss", "examples/s", "time ÷ mnb", "weighted variables", "of them informative", "memory_usage() MiB", "saved MiB",
                    "save / load s"]))  # fmt: skip
    print(f"peak RSS of the process: {peak:.0f} MiB; windows: {[r['window_rows'] for r in out]}")


if __name__ == "__main__":
    main()
