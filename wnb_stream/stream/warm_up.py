"""A small fixed stream to warm models up on (``rows``): what ``apps.evaluation.warm_up`` runs
every model's clone on before its clock starts, and what ``distributed.partitioned.load_kernels``
trains a throw-away clone on in rounds, so that a new process loads its compiled kernels first."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["rows"]


def rows(n: int, numeric_only: bool = False) -> list[tuple[dict, Any]]:
    """``n`` rows ``(x, y)``: 4 numeric variables (one with missing values), 2 categorical ones,
    3 classes, from a fixed seed; ``numeric_only`` leaves the categorical ones out.

    >>> first = rows(5)
    >>> len(first), sorted(first[0][0]), first[0][1] in ("a", "b", "c")
    (5, ['g', 'n0', 'n1', 'n2', 'n3', 'tone'], True)
    """
    rng = np.random.default_rng(0)
    labels = ("a", "b", "c")
    out = []
    for i in range(n):
        j = int(rng.integers(0, 3))
        x = {f"n{k}": float(rng.normal(j * (k == 0) + 0.5 * (k == 1) * j, 1.0)) for k in range(4)}
        if i % 7 == 3:
            x["n3"] = None
        if not numeric_only:
            x["tone"] = ("low", "mid", "high")[(j + int(rng.integers(0, 2))) % 3]
            x["g"] = f"g{int(rng.integers(0, 12))}"
        out.append((x, labels[j]))
    return out
