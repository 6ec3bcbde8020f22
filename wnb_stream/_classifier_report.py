"""What ``WeightedNaiveBayes`` reports about itself: the terms of a score (``explain``), as text
(``debug_one``), and the table of its variables (``summary``). ``Reports`` is a base of the
classifier (it reads the model's engine and ``weights``), kept here so that ``classifier.py``
holds the River face."""

from __future__ import annotations

import math

import numpy as np

from ._classifier_params import one_at_a_time
from .serving.predictor import softmax


class Reports:
    """The reports of ``WeightedNaiveBayes`` (a base of it; no state of its own)."""

    __slots__ = ()

    @one_at_a_time
    def explain(self, x: dict):
        """Each term of the score of ``x``, per class: a pandas DataFrame, one row per term and
        one column per class (``model.classes``' order).

        The first row, ``"prior + bias"``, holds each class's log prior (with the learner's
        bias); then one row per feature of ``x`` the model has a level 2 for, in ``x``'s order,
        holding its weighted log-likelihood ``w_k · log p(x_k | C_j)``; with ``absent``, one more
        row sums the terms of the numeric features absent from ``x``. A column's sum is that
        class's score, and ``predict_proba_one(x)`` is the softmax of these sums: a term is how
        much the feature pushed each class (positive or negative against the others, as in a
        logistic regression's coefficient times its value). Empty before any learning. Input is
        validated as ``predict_proba_one`` does; nothing changes. O(K · J).

        >>> from river import datasets
        >>> from wnb_stream import WeightedNaiveBayes
        >>> model = WeightedNaiveBayes(seed=42)
        >>> for x, y in datasets.Phishing().take(500): model.learn_one(x, y)
        >>> terms = model.explain(x)
        >>> terms.round(3).head(3)
                                   True   False
        prior + bias              -0.872 -0.541
        empty_server_form_handler -1.383 -0.070
        popup_window              -0.838 -0.484
        >>> import numpy as np
        >>> scores = terms.sum().to_numpy()
        >>> round(float(np.exp(scores[0]) / np.exp(scores).sum()), 4), round(model.predict_proba_one(x)[True], 4)
        (0.1426, 0.1426)
        """
        import pandas as pd

        engine = self._engine
        if not len(engine.classes):
            return pd.DataFrame()
        row = engine.parser.row(x)
        engine.refresh()
        numeric = [(k, None if math.isnan(v) else v) for k, v in zip(row.numeric.tolist(), row.values.tolist())]
        values = dict(numeric + row.categorical)  # variable → value, shown in the dict's order
        index = engine.registry.index
        names, terms = ["prior + bias"], [np.asarray(engine.lookup.bias, dtype=float)]
        for name in x:
            k = index.get(name)
            if k in values:
                contribution = engine.contribution(k, values[k])
                if contribution is not None:
                    names.append(name)
                    terms.append(contribution)
        if engine.lookup.shift is not None:  # with a default value: the numeric variables absent from the row
            held = set(row.numeric.tolist())
            ks = [k for k, v in enumerate(engine.registry.variables) if v.kind == "numeric" and k not in held]
            names.append(f"{len(ks)} absent (= {engine.params.absent:g})")
            terms.append(engine.lookup.shift[ks].sum(axis=0))
        return pd.DataFrame(np.array(terms), index=pd.Index(names, dtype=object, name=None),
                            columns=list(engine.classes.labels))  # fmt: skip

    @one_at_a_time
    def debug_one(self, x: dict) -> str:
        """``explain(x)`` as a text table, with the probabilities on the last line."""
        terms = self.explain(x)
        if terms.empty:
            return "no class seen yet"
        labels = [str(name) for name in terms.index]
        width = max(len(label) for label in labels) + 2
        lines = [" " * width + " ".join(f"{str(c):>12}" for c in terms.columns)]
        for label, values in zip(labels, terms.to_numpy()):
            lines.append(f"{label:<{width}}" + " ".join(f"{v:12.4f}" for v in values))
        p = softmax(terms.sum().to_numpy())
        lines.append(f"{'probability':<{width}}" + " ".join(f"{v:12.4f}" for v in p))
        return "\n".join(lines)

    @one_at_a_time
    def summary(self):
        """The variables as a table, as Khiops' variable report gives it: a pandas DataFrame with
        one row per variable (index: the feature names), sorted by ``importance`` then ``level``.

        Columns: ``kind`` ("numeric" or "categorical"); ``summary`` (its level-1 summary);
        ``parts`` (intervals or groups of its level-2 partition, 1 when it found nothing; for a
        Gaussian density, the parts of the discretization that judges it); ``level`` (MODL's
        informativeness in [0, 1]: 1 − cost of the partition / cost of the one-part partition,
        0 for a variable that tells nothing about the class, ``docs/algorithms/modl.md``);
        ``weight`` (``model.weights``); ``kept`` (True when the variable changes predictions: it
        has a level 2 that is not flat and a non-zero weight); ``importance`` (Khiops' variable
        importance, the geometric mean √(level · weight) of a kept variable, 0 otherwise).
        O(K log K).

        >>> from river import datasets
        >>> from wnb_stream import WeightedNaiveBayes
        >>> model = WeightedNaiveBayes(seed=42)
        >>> for x, y in datasets.Phishing().take(500): model.learn_one(x, y)
        >>> print(model.summary().round(3).head(4).to_string())
                                      kind  summary  parts  level  weight  kept  importance
        empty_server_form_handler  numeric  GKClass      2  0.414   0.834  True       0.588
        popup_window               numeric  GKClass      3  0.171   0.776  True       0.364
        https                      numeric  GKClass      3  0.173   0.745  True       0.359
        anchor_from_other_domain   numeric  GKClass      2  0.054   0.566  True       0.174
        """
        import pandas as pd

        engine = self._engine
        engine.refresh()
        weights = self.weights
        rows = []
        for k, v in enumerate(engine.registry.variables):
            weight = weights[v.name]
            kept = bool(engine.slots.of[k] >= 0 and weight != 0) if k < len(engine.slots.of) else False
            importance = math.sqrt(v.level * weight) if kept and weight > 0 else 0.0
            rows.append((v.name, v.kind, type(v.summary).__name__, int(max(v.n_parts, 1)), v.level, weight, kept, importance))
        columns = ["name", "kind", "summary", "parts", "level", "weight", "kept", "importance"]
        table = pd.DataFrame(rows, columns=columns).set_index("name")
        table.index.name = None
        return table.sort_values(["importance", "level"], ascending=False, kind="stable")
