"""Does the confidence of a short stream's first predictions cost the default its pooled AUC?
(issue 28, benchmarks/README.md, Small data, item 8)

On the prequential protocol of ``quality_small.py`` (its cuts, seeds and models), every row's
prediction is stored; then, on those stored predictions:

- *by row range*: accuracy / AUC / log loss of the rows of each range alone (pooled over the
  range's rows, means over seeds, then sets), for each model;
- *tempered*: the suite's figures of the first model after row ranges are tempered, P ∝ P^τ
  (a temperature on the whole log posterior, the prior included, so the argmax and the accuracy
  stay): the most any early calibration of that model's predictions could gain, since the best τ
  is chosen knowing the answers.

Usage (from the repository root)::

    python benchmarks/early_confidence.py --models vns,nb
"""

from __future__ import annotations

import argparse
import sys

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import fmt, markdown, mean
from quality_small import CUTS, load, row_proba, scores

from wnb_stream.apps.models import build_model, parse_models

#: Row ranges (first row, last row), 1-based.
RANGES = ((1, 32), (33, 64), (65, 100), (101, 150), (151, 200), (201, 300), (301, 500), (33, 500))
#: (rows 1 to r1 at τ1, rows r1 + 1 to r2 at τ2).
TEMPERED = ((32, 0.2, 32, 1.0), (32, 0.4, 32, 1.0), (64, 0.2, 64, 1.0), (64, 0.4, 64, 1.0), (64, 0.6, 64, 1.0),
            (100, 0.4, 100, 1.0), (150, 0.4, 150, 1.0), (32, 0.2, 64, 0.5))  # fmt: skip


def temper(proba: np.ndarray, tau: float) -> np.ndarray:
    """``(n, J)`` rows of ``proba`` raised to τ and normalised (0 stays 0)."""
    with np.errstate(divide="ignore"):
        log = np.log(proba) * tau
    log -= log.max(axis=1, keepdims=True)
    out = np.exp(log)
    return out / out.sum(axis=1, keepdims=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=parse_models, default=parse_models("vns,nb"))
    parser.add_argument("--seeds", type=lambda s: [int(v) for v in s.split(",")], default=[1, 2, 3])
    args = parser.parse_args(argv)
    stored = {}  # (set, seed, label) -> (proba (n, J), y (n,))
    for name in CUTS:
        for seed in args.seeds:
            table = load(name, CUTS[name], seed)
            classes = tuple(sorted(set(table.y), key=str))
            column = {c: j for j, c in enumerate(classes)}
            y = np.array([column[c] for c in table.y])
            for spec in args.models:
                model = build_model(spec, summary="gk", seed=seed)
                proba = np.zeros((len(table), len(classes)))
                for i, (x, label) in enumerate(table):
                    proba[i] = row_proba(model, x, column, len(classes))
                    model.learn_one(x, label)
                stored[(name, seed, spec.label)] = (proba, y)
    labels = [spec.label for spec in args.models]

    def figures(rows, label, transform=None):
        """Means over seeds, then sets, of (accuracy, AUC, log loss) of ``rows`` (a slice)."""
        per_set = []
        for name in CUTS:
            found = []
            for seed in args.seeds:
                proba, y = stored[(name, seed, label)]
                proba = proba if transform is None else transform(proba)
                proba, y = proba[rows], y[rows]
                if len(y) and len(set(y)) > 1:
                    s = scores(proba, y)
                    found.append((s["accuracy"], s["macro_auc"], s["log_loss"]))
            if found:
                per_set.append([mean(v[i] for v in found) for i in range(3)])
        return [mean(v[i] for v in per_set) for i in range(3)]

    lines = [[f"{a}–{b}"] + [" / ".join(fmt(v, 3) for v in figures(slice(a - 1, b), label)) for label in labels] for a, b in RANGES]
    lines.append(["all"] + [" / ".join(fmt(v, 4) for v in figures(slice(None), label)) for label in labels])
    print(f"### By row range: accuracy / AUC / log loss (means over seeds {args.seeds}, then over sets)\n")
    print(markdown(lines, ["rows"] + labels))
    first = labels[0]
    lines = []
    for r1, t1, r2, t2 in TEMPERED:
        def transform(proba, r1=r1, t1=t1, r2=r2, t2=t2):
            out = proba.copy()
            out[:r1] = temper(proba[:r1], t1)
            out[r1:r2] = temper(proba[r1:r2], t2)
            return out
        what = f"rows 1–{r1} at τ = {t1}" + (f", {r1 + 1}–{r2} at τ = {t2}" if r2 > r1 else "")
        lines.append([what] + [fmt(v, 4) for v in figures(slice(None), first, transform)])
    lines.insert(0, ["none"] + [fmt(v, 4) for v in figures(slice(None), first)])
    print(f"\n### {first}'s stored predictions tempered: accuracy / AUC / log loss of the whole streams\n")
    print(markdown(lines, ["tempered", "accuracy", "AUC", "log loss"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
