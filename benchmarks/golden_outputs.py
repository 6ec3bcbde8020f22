"""Golden outputs: every prediction and weight of a fixed set of runs, to compare two checkouts.

A performance change must not change what the model computes. This script runs 5 streams × 13
configurations on both paths (per instance, and mini-batches of 500 rows) with the checkout at
``--root`` and saves every ``predict_proba`` row and the final weights to an ``.npz`` file;
``--compare A B`` reports the arrays that are not equal bit for bit.

Streams: RandomRBF 20 variables × 5 classes (6,000 examples) and 100 × 2 (2,500), River's Phishing,
an Agrawal stream made messy (two categorical variables, 5 % missing values, a feature dropped
from 2 % of the rows; per instance only), and a sparse stream of word counts (``sparse.py``'s, 3,000
features, about 60 non-zero entries per row, 1,500 rows). Configurations: ``Uniform``, the default ``VNS``,
``PGDMB``, ``Graphical``, ``VNS`` on ``CPiD`` summaries, ``Uniform`` on ``Gaussian`` summaries, the
batch searches ``FNB``, ``SNB``, ``SGCF``, ``Direct`` and ``FNB(refine=VNS())``, and the default
model with ``absent=0`` and with a memory budget that cuts its window (the 100-variable stream
runs the first two, the sparse stream ``vns``, ``nb`` and the last two, on its dicts and, on
the mini-batch path, on their table with NaN for the absent entries). Rounds: on RandomRBF 20 × 5
and Phishing, the default model trained in rounds of 1,000 rows shared by 4 deltas
(``model.delta``, ``model.absorb``), each row predicted by the model of the round before, then
merged with a model of the last 400 rows and with itself, and those rows predicted; and on RandomRBF
400 × 2 (4,000 examples), rounds as the drivers run them (each delta flushed, the four merged in a
tree, ``Delta.merge``, then absorbed), wide enough that a round's rebuild runs in threads. A configuration the
checkout cannot build (a learner or parameter it does not have yet) is skipped, and
``--compare`` compares the arrays of its first file, listing those only the second one has.

Usage (from the repository root)::

    git archive OLD | tar -x -C /tmp/old
    python benchmarks/golden_outputs.py --root /tmp/old --output /tmp/old.npz
    python benchmarks/golden_outputs.py --root . --output /tmp/new.npz
    python benchmarks/golden_outputs.py --compare /tmp/old.npz /tmp/new.npz
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import random
import sys


def messy(n: int, seed: int):
    from river.datasets import synth

    rng = random.Random(seed)
    for x, y in itertools.islice(synth.Agrawal(seed=seed, classification_function=2), n):
        x = dict(x)
        x["car"] = f"c{x['car']}"
        x["zipcode"] = f"z{x['zipcode']}"
        for key in list(x):
            if rng.random() < 0.05:
                x[key] = None
        if rng.random() < 0.02:
            x.pop("age", None)
        yield x, y


def run(root: pathlib.Path, output: str) -> None:
    sys.path.insert(0, str(root))
    import numpy as np
    import pandas as pd
    from river.datasets import Phishing, synth
    from sparse import stream as sparse_stream  # (benchmarks/sparse.py, beside this script)

    import wnb_stream
    from wnb_stream import WeightedNaiveBayes, summaries, weights

    if not pathlib.Path(wnb_stream.__file__).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"wnb_stream was imported from {wnb_stream.__file__}, not from {root}")
    streams = {
        "rbf20": lambda: itertools.islice(synth.RandomRBF(seed_model=42, seed_sample=42, n_features=20, n_classes=5), 6000),
        "k100": lambda: itertools.islice(synth.RandomRBF(seed_model=7, seed_sample=7, n_features=100, n_classes=2), 2500),
        "phishing": lambda: iter(Phishing()),
        "messy": lambda: messy(4000, 3),
        "sparse": lambda: ((x, y) for x, y, _ in sparse_stream(3000, 1500, 60, 20, 5)),
    }
    only = {"k100": ("nb", "vns"), "sparse": ("nb", "vns", "absent0", "budget")}
    configs = {
        "nb": lambda: {"optimizer": weights.Uniform()},
        "vns": lambda: {},
        "pgdmb": lambda: {"optimizer": weights.PGDMB()},
        "graphical": lambda: {"optimizer": weights.Graphical()},
        "vns_cpid": lambda: {"numeric": summaries.CPiD()},
        "nb_gauss": lambda: {"optimizer": weights.Uniform(), "numeric": summaries.Gaussian()},
        "fnb": lambda: {"optimizer": weights.FNB()},
        "snb": lambda: {"optimizer": weights.SNB()},
        "sgcf": lambda: {"optimizer": weights.SGCF()},
        "direct": lambda: {"optimizer": weights.Direct()},
        "fnb_vns": lambda: {"optimizer": weights.FNB(refine=weights.VNS())},
        "absent0": lambda: {"absent": 0.0},
        "budget": lambda: {"memory_budget": 400_000},
    }
    result = {}
    for stream, make_stream in streams.items():
        rows = list(make_stream())
        for config, options in configs.items():
            if stream in only and config not in only[stream]:
                continue
            try:
                model = WeightedNaiveBayes(seed=1, **options())
            except (AttributeError, TypeError, ValueError) as error:  # not in this checkout
                print(f"{stream} {config}: skipped ({type(error).__name__}: {error})", flush=True)
                continue
            probabilities = []
            for x, y in rows:
                p = model.predict_proba_one(x)
                probabilities.append([p[c] for c in sorted(p, key=str)] + [np.nan] * (6 - len(p)))
                model.learn_one(x, y)
            result[f"{stream}/{config}/one"] = np.array(probabilities)
            result[f"{stream}/{config}/one/weights"] = np.array([model.weights[k] for k in sorted(model.weights, key=str)])
            if stream == "messy":
                continue
            model = WeightedNaiveBayes(seed=1, **options())
            X, Y = pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows])
            pieces = []
            for i in range(0, len(rows), 500):
                if i:
                    P = model.predict_proba_many(X.iloc[i : i + 500])
                    pieces.append(P.to_numpy()[:, np.argsort([str(c) for c in P.columns], kind="stable")])
                model.learn_many(X.iloc[i : i + 500], Y.iloc[i : i + 500])
            result[f"{stream}/{config}/many"] = np.concatenate(pieces)
            print(stream, config, flush=True)
    for stream in ("rbf20", "phishing"):  # rounds and merges (engine.merge): the default model in rounds of 4 deltas
        rows = list(streams[stream]())
        model = WeightedNaiveBayes(seed=1)
        if not hasattr(model, "absorb"):  # (not in this checkout)
            print(f"{stream} rounds: skipped (no absorb)", flush=True)
            continue
        probabilities, tail = [], rows[-400:]
        for start in range(0, len(rows) - len(tail), 1000):
            chunk = rows[start : min(start + 1000, len(rows) - len(tail))]
            deltas = [model.delta() for _ in range(4)]
            for i, (x, y) in enumerate(chunk):  # each row predicted by the model of the round before it
                p = model.predict_proba_one(x)
                probabilities.append([p.get(c, np.nan) for c in sorted(p, key=str)] + [np.nan] * (6 - len(p)))
                deltas[i % 4].learn_one(x, y)
            model.absorb(deltas)
        other = WeightedNaiveBayes(seed=2)
        for x, y in tail:
            other.learn_one(x, y)
        model.merge(other)
        model.merge(model)  # (a model into itself: its examples twice)
        for x, _ in tail:
            p = model.predict_proba_one(x)
            probabilities.append([p[c] for c in sorted(p, key=str)] + [np.nan] * (6 - len(p)))
        result[f"{stream}/rounds"] = np.array(probabilities)
        result[f"{stream}/rounds/weights"] = np.array([model.weights[k] for k in sorted(model.weights, key=str)])
        print(stream, "rounds", flush=True)
    # rounds as the drivers run them, wide enough that a round's rebuild runs its kernels in
    # threads: each learner's delta flushed, the deltas merged in a tree, the tree absorbed
    rows = list(itertools.islice(synth.RandomRBF(seed_model=11, seed_sample=11, n_features=400, n_classes=2), 4000))
    model = WeightedNaiveBayes(seed=1)
    if hasattr(model, "absorb"):
        from wnb_stream import Delta

        probabilities = []
        for start in range(0, len(rows), 1000):
            deltas = [model.delta() for _ in range(4)]
            for i, (x, y) in enumerate(rows[start : start + 1000]):
                if start:
                    p = model.predict_proba_one(x)
                    probabilities.append([p[c] for c in sorted(p, key=str)])
                deltas[i % 4].learn_one(x, y)
            for delta in deltas:
                delta.flush()
            if hasattr(Delta, "merge"):
                deltas[0].merge(deltas[1])
                deltas[2].merge(deltas[3])
                deltas[0].merge(deltas[2])
                deltas = deltas[:1]
            model.absorb(deltas)
        result["k400/tree rounds"] = np.array(probabilities)
        result["k400/tree rounds/weights"] = np.array([model.weights[k] for k in sorted(model.weights, key=str)])
        print("k400 tree rounds", flush=True)
        # small rounds (4 deltas of 50 rows into 4,000): few variables fall due in one
        probabilities = []
        more = list(itertools.islice(synth.RandomRBF(seed_model=11, seed_sample=12, n_features=400, n_classes=2), 1000))
        for start in range(0, len(more), 200):
            deltas = [model.delta() for _ in range(4)]
            for i, (x, y) in enumerate(more[start : start + 200]):
                p = model.predict_proba_one(x)
                probabilities.append([p[c] for c in sorted(p, key=str)])
                deltas[i % 4].learn_one(x, y)
            model.absorb(deltas)
        result["k400/small rounds"] = np.array(probabilities)
        result["k400/small rounds/weights"] = np.array([model.weights[k] for k in sorted(model.weights, key=str)])
        print("k400 small rounds", flush=True)
    np.savez(output, **result)
    print(f"wrote {len(result)} arrays to {output}")


def compare(a: str, b: str) -> int:
    import numpy as np

    old, new = np.load(a), np.load(b)
    differ = 0
    for key in old.files:
        if key not in new.files or not np.array_equal(old[key], new[key], equal_nan=True):
            differ += 1
            print(f"differs: {key}")
    only_new = [key for key in new.files if key not in old.files]
    if only_new:
        print(f"{len(only_new)} arrays of {b} only, not compared: {', '.join(only_new)}")
    print(f"{len(old.files)} arrays, {differ} differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]), help="checkout to run")
    parser.add_argument("--output", help="the .npz file to write")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two .npz files")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.output:
        parser.error("--output is required to run")
    run(pathlib.Path(args.root), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
