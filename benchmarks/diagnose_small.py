"""Why the weights lose to plain naive Bayes on small data (issue 28): the default model's weights
against other weights on the same model, the same level 2, the same folds.

For each cut of ``quality_small.py`` (its ``load``) and each of its 5 folds, the default model
learns the training fold as a stream; then, keeping its level 2 and its window as they are at the
end, the test fold is predicted with

- ``online``: the weights the stream left (what the model predicts with);
- ``ones``: weight 1 on every variable of level 3 (plain naive Bayes on the same partitions: what
  ``forget(keep=<every row>)`` predicts with, as the learner has not stepped after it);
- ``optimum``: the minimum of the model's own criterion (NLL + λ·R2 on the window as re-encoded at
  the end), found by L-BFGS-B in [0, 1]^K from 0.5, weights below 1e-3 set to 0;
- ``optimum_nll``: the same without the regulariser;
- ``replay``: one more replay session of the model's own learner on that window (warm, from its
  weights);
- ``ones_t``: plain naive Bayes tempered, t·1 with the t in [0, 1] of least NLL on the window
  (the ranking of plain naive Bayes, calibrated by one parameter);
- ``mid`` and ``mid_opt``: the average of ``ones_t`` with ``online`` and with ``replay``.

``online`` below ``optimum`` measures the loss from weights fitted on an older level 2 and window;
``optimum`` below ``ones`` the loss from the criterion itself. Means over folds, then seeds.

Usage (from the repository root; scipy and scikit-learn)::

    python benchmarks/diagnose_small.py --datasets heart,optdigits,spambase --seeds 3
"""

from __future__ import annotations

import argparse
import copy
import sys

import common  # noqa: F401  (puts the checkout on sys.path)
import numpy as np
from common import fmt, markdown, mean, names
from quality_small import CUTS, load, row_proba, scores

from wnb_stream import WeightedNaiveBayes
from wnb_stream.weights import Batch
from wnb_stream.weights.criterion import criterion, negative_log_likelihood


def window(model) -> Batch:
    """The model's history window as its learner sees it at a step (``Engine._step``)."""
    engine = model._engine
    h, A, J = engine.history, len(engine.slots), len(engine.classes)
    h.fit_encoding(A, J)
    return Batch(*h.window(h.filled(), A, J), engine.classes.log_prior())


def with_weights(model, w: np.ndarray):
    """A copy of ``model`` predicting with the weights ``w`` on its level-3 variables."""
    twin = copy.deepcopy(model)
    twin._engine.optimizer._best = np.asarray(w, dtype=float)
    twin._engine.lookup.coefficients_changed()
    return twin


def replayed(model, data: Batch, context) -> np.ndarray:
    """The weights after one more replay session of ``model``'s VNS on ``data``."""
    learner = copy.deepcopy(model._engine.optimizer)
    n = len(data)
    size = min(int(learner.batch_size), n)
    for _ in range(int(learner.session_budget(learner._budget_variables, n, learner.replay_level))):
        rows = learner._rng.choice(n, size=size, replace=False)
        batch = Batch(data.log_lik[rows], data.y[rows], data.sample_weight[rows], data.log_prior)
        super(type(learner), learner).learn(batch, data, context)  # PGDMB's step, no nested session
    return learner.weights


def main(argv=None) -> int:
    from scipy.optimize import minimize, minimize_scalar
    from sklearn.model_selection import StratifiedKFold

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=names, default=["heart", "optdigits", "spambase"])
    parser.add_argument("--seeds", type=lambda s: [int(v) for v in s.split(",")], default=[3])
    args = parser.parse_args(argv)
    for name in args.datasets:
        found: dict[str, list] = {}
        for seed in args.seeds:
            table = load(name, CUTS[name], seed)
            classes = tuple(sorted(set(table.y), key=str))
            column = {c: j for j, c in enumerate(classes)}
            y = np.array([column[c] for c in table.y])
            for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), y):
                model = WeightedNaiveBayes(seed=seed)
                for i in train:
                    model.learn_one(table.X[i], table.y[i])
                data, context = window(model), model._engine.context()
                regularizer = model._engine.optimizer._regularizer
                A = len(model._engine.slots)
                candidates = {"online": model._engine.optimizer.weights, "ones": np.ones(A)}
                for label, r in (("optimum", regularizer), ("optimum_nll", None)):
                    best = minimize(lambda w, data=data, costs=context.prior_costs, r=r: criterion(w, data, costs, r), np.full(A, 0.5),
                                    method="L-BFGS-B", bounds=[(0.0, 1.0)] * A)  # fmt: skip
                    candidates[label] = np.where(best.x < 1e-3, 0.0, best.x)
                candidates["replay"] = replayed(model, data, context)
                t = minimize_scalar(lambda t, data=data, A=A: negative_log_likelihood(np.full(A, t), data.log_lik, data.y, data.log_prior, data.sample_weight), bounds=(0.0, 1.0), method="bounded").x
                candidates["ones_t"] = np.full(A, t)
                candidates["mid"] = (candidates["online"] + candidates["ones_t"]) / 2
                candidates["mid_opt"] = (candidates["replay"] + candidates["ones_t"]) / 2
                for label, w in candidates.items():
                    twin = with_weights(model, w)
                    proba = np.array([row_proba(twin, table.X[i], column, len(classes)) for i in test])
                    value = float(criterion(w, data, context.prior_costs, regularizer))
                    found.setdefault(label, []).append(scores(proba, y[test]) | {
                        "kept": float(np.sum(w > 0)), "sum_w": float(np.sum(w)), "criterion": value})  # fmt: skip
        lines = [[label, fmt(mean(s["accuracy"] for s in rows), 3), fmt(mean(s["macro_auc"] for s in rows), 3),
                  fmt(mean(s["log_loss"] for s in rows), 3), fmt(mean(s["kept"] for s in rows), 1),
                  fmt(mean(s["sum_w"] for s in rows), 2), fmt(mean(s["criterion"] for s in rows), 1)]
                 for label, rows in found.items()]  # fmt: skip
        print(f"\n### {name}, {CUTS[name]} rows, seeds {args.seeds}\n")
        print(markdown(lines, ["weights", "accuracy", "AUC", "log loss", "kept", "Σw", "criterion on the window"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
