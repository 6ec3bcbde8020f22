"""Memory budget: ``memory_usage()`` at every check point on streams that outgrow the budget.

Three streams (issue 33, item 8), each learnt by ``learn_one`` with the default model:

- ``counts``: a token stream whose vocabulary keeps growing (6 words drawn per row among
  16·(i + 1), two classes), as counts with ``absent=0``; 5 MB budget by default;
- ``names``: the same words as categorical features (one per word, plus the first and last words
  as the values of two categorical features); 20 MB by default;
- ``classes``: 10 Gaussian variables whose means depend on the class, 1,000 classes drawn
  uniformly (``many_classes.py``'s stream); 3 MB by default.

Reported per stream: the largest ``memory_usage()`` seen at a check point (every 256 rows, where
the budget is kept) and at the end, the variables held against the features seen, the window's
rows, the parts (window, lookups, registry) at the end, and the microseconds per ``learn_one``.
With ``--no-budget`` the same model without a budget; with ``--paired`` both, each row learnt by
one then the other, so that a load on the machine hits them alike (the cost of the budget). With
``--root`` another checkout (``git archive OLD | tar -x -C /tmp/old``: before and after).

    python benchmarks/memory_budget.py --streams counts,names --rows 4096,14336
    python benchmarks/memory_budget.py --streams counts --rows 4096 --paired
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

BUDGETS = {"counts": 5_000_000, "names": 20_000_000, "classes": 3_000_000}


def tokens(n: int, kind: str, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    for i in range(n):
        j = int(rng.integers(2))
        words = [f"w{int(w)}" for w in np.unique(rng.integers(0, 8 * (i + 1), size=6) * 2 + j)]
        if kind == "counts":
            yield {w: 1 for w in words}, "ab"[j]
        else:
            yield {w: "yes" for w in words} | {"first": words[0], "last": words[-1]}, "ab"[j]


def classes(n: int, n_classes: int = 1000, n_features: int = 10, seed: int = 42):
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, n_features))
    labels = rng.integers(0, n_classes, n)
    values = centres[labels] + rng.normal(scale=0.5, size=(n, n_features))
    for row, y in zip(values, labels):
        yield {f"x{k}": float(v) for k, v in enumerate(row)}, int(y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]), help="checkout to run")
    parser.add_argument("--streams", default="counts,names,classes")
    parser.add_argument("--rows", default="4096,14336,1024", help="rows of each stream, in the order of --streams")
    parser.add_argument("--budgets", default=None, help="bytes for each stream (default: 5 MB, 20 MB, 3 MB)")
    parser.add_argument("--no-budget", action="store_true", help="the same model without a budget")
    parser.add_argument("--paired", action="store_true", help="with and without the budget, taking turns row by row")
    args = parser.parse_args()
    sys.path.insert(0, args.root)
    import wnb_stream
    from wnb_stream import WeightedNaiveBayes
    from wnb_stream.engine.drift import EVERY

    print(f"wnb_stream from {wnb_stream.__file__}")
    names = args.streams.split(",")
    rows = [int(r) for r in args.rows.split(",")]
    budgets = [int(b) for b in args.budgets.split(",")] if args.budgets else [BUDGETS[name] for name in names]
    WeightedNaiveBayes(absent=0).learn_one({"a": 1.0}, 0)  # (the compiled kernels, before the clock)
    for name, n, budget in zip(names, rows, budgets):
        data = list(tokens(n, name) if name != "classes" else classes(n))
        runs = [None, budget] if args.paired else [None if args.no_budget else budget]
        models = [WeightedNaiveBayes(memory_budget=b, absent=0 if name == "counts" else None, seed=1) for b in runs]
        seen, peak, clock = set(), [0] * len(runs), [0.0] * len(runs)
        for x, y in data:
            seen.update(x)
            for i, model in enumerate(models):
                start = time.perf_counter()
                model.learn_one(x, y)
                clock[i] += time.perf_counter() - start
                if model._engine.n_seen % EVERY == 0:
                    peak[i] = max(peak[i], model.memory_usage())
        for model, b, top, seconds in zip(models, runs, peak, clock):
            e = model._engine
            print(
                f"{name}: {n} rows, budget {b}: at check points max {top / 1e6:.2f} MB; at the end {model.memory_usage() / 1e6:.2f} MB "
                f"(window {e.history.memory_usage() / 1e6:.2f}, lookups {e.lookup.memory_usage() / 1e6:.2f}, "
                f"registry {e.registry.memory_usage() / 1e6:.2f}); {len(e.registry)} variables held of {len(seen)} seen, "
                f"{len(e.slots)} in level 3, {len(e.classes)} classes, window {e.history.capacity} rows; "
                f"learn_one {1e6 * seconds / n:.0f} µs a row",
                flush=True,
            )


if __name__ == "__main__":
    main()
