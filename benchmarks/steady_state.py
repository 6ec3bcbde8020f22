"""The mini-batch path past a stream's start: examples/s of the default model on rows ``--start`` to
``--stop`` of ``rbf20`` (``RandomRBF``, 20 variables, 5 classes, seed 42), in DataFrames of
``--batch`` rows, ``predict_proba_many`` then ``learn_many``.

The model learns the rows before ``--start`` the same way, off the clock, so the figure is what
a model that has left its dense early rebuilds behind runs at (issue 30's "mini-batch steady
state"). One model, one process; run it from two checkouts one after the other to compare them
(each imports the package of the checkout it is run from).

    python benchmarks/steady_state.py
    python benchmarks/steady_state.py --params '{"drift_delta": null}'
"""

from __future__ import annotations

import argparse
import json
import time

from common import provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=int, default=100_000)
    parser.add_argument("--stop", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--params", default="{}", help="WeightedNaiveBayes parameters, as JSON (seed 0 unless given)")
    args = parser.parse_args()

    import pandas as pd
    from river.datasets import synth

    from wnb_stream import WeightedNaiveBayes

    rows = list(synth.RandomRBF(seed_model=42, seed_sample=42, n_classes=5, n_features=20).take(args.stop))
    X = pd.DataFrame([x for x, _ in rows])
    y = pd.Series([label for _, label in rows])
    model = WeightedNaiveBayes(**{"seed": 0, **json.loads(args.params)})
    started = time.perf_counter()
    for lo in range(0, args.stop, args.batch):
        if lo == args.start:
            started = time.perf_counter()
        if lo:
            model.predict_proba_many(X.iloc[lo : lo + args.batch])
        model.learn_many(X.iloc[lo : lo + args.batch], y.iloc[lo : lo + args.batch])
    rate = (args.stop - args.start) / (time.perf_counter() - started)
    info = provenance()
    print(f"{info['commit']} {info['date']} {info['machine']}; rbf20 rows {args.start:,}–{args.stop:,} in batches of {args.batch:,}, "
          f"params {args.params}: {rate:,.0f} examples/s")  # fmt: skip


if __name__ == "__main__":
    main()
