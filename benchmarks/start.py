"""A stream's start in mini-batches: our default model against River's ``GaussianNB.learn_many``.

The first ``--n`` rows of a ``RandomRBF`` stream (``--K`` variables, 2 classes, seed 42), in
DataFrames of ``--batch`` rows: ``predict_proba_many`` then ``learn_many`` (the first batch is
only learned). Each model runs the whole start alone, after a warm-up run on the same rows (the
compiled kernels loaded, NumPy and pandas warm); ``--repeat`` alternating runs, the median rate.
The early phase (level 2 rebuilt for every variable at every one of the first examples) is what
this measures: the same model runs many times faster later in a stream (``throughput.py``).

    python benchmarks/start.py --K 500 --n 10000
    python benchmarks/start.py --K 20 --n 30000
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--K", type=int, default=500)
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import pandas as pd
    from river import naive_bayes
    from river.datasets import synth

    from wnb_stream import WeightedNaiveBayes

    rows = list(synth.RandomRBF(seed_model=42, seed_sample=42, n_classes=2, n_features=args.K).take(args.n))
    X = pd.DataFrame([x for x, _ in rows])
    y = pd.Series([label for _, label in rows])
    makers = {"wnb": lambda: WeightedNaiveBayes(seed=0), "gnb": naive_bayes.GaussianNB}

    def run(name: str) -> float:
        model = makers[name]()
        started = time.perf_counter()
        for start in range(0, args.n, args.batch):
            if start:
                model.predict_proba_many(X.iloc[start : start + args.batch])
            model.learn_many(X.iloc[start : start + args.batch], y.iloc[start : start + args.batch])
        return args.n / (time.perf_counter() - started)

    for name in makers:  # warm-up
        run(name)
    rates = {name: [] for name in makers}
    for _ in range(args.repeat):
        for name in makers:
            rates[name].append(run(name))
    info = provenance()
    wnb, gnb = statistics.median(rates["wnb"]), statistics.median(rates["gnb"])
    print(f"{info['commit']} {info['date']} {info['machine']}; RandomRBF K = {args.K}, first {args.n:,} rows, batches of {args.batch}")
    print(f"wnb {wnb:,.0f} examples/s, GaussianNB.learn_many {gnb:,.0f} examples/s: {wnb / gnb:.2f}× (medians of {args.repeat})")
    print("runs:", {name: [round(r) for r in values] for name, values in rates.items()})


if __name__ == "__main__":
    main()
