"""Components of every kind in seeded states, for the round-trip and fixture tests of wnb_stream.io.

Each case is ``(name, make)``: ``make()`` builds the component from a fixed seed, in a state that
exercises a part of its record (a pending buffer, a class registered late, sketch mode...).
``more(component, rng)`` feeds a component further (same calls for an original and its copy).
"""

from __future__ import annotations

import numpy as np

from wnb_stream import modl
from wnb_stream.summaries import Categorical, ClassIndex, CPiD, Gaussian, GKClass
from wnb_stream.summaries.gaussian import GaussianDensity
from wnb_stream.summaries.sketch import CountMinSketch, SpaceSaving
from wnb_stream.weights import FNB, PGDMB, SGCF, SNB, VNS, Batch, Context, Direct, Graphical, Uniform


def numeric_rows(rng: np.random.Generator, n: int, classes=(0, 1), missing: float = 0.0, weights: bool = False):
    """``n`` values (a class-dependent normal mixture), labels and weights (or None)."""
    codes = rng.integers(0, len(classes), n)
    labels = np.empty(n, dtype=object)
    labels[:] = [classes[c] for c in codes]
    values = (rng.normal(size=n) + 1.5 * codes).round(2).astype(object)  # rounded: repeated values
    values[rng.random(n) < missing] = None
    w = rng.uniform(0.5, 2.0, n).round(3) if weights else None
    return values.tolist(), labels.tolist(), w


def categorical_rows(rng: np.random.Generator, n: int, n_values: int, classes=("yes", "no"), missing: float = 0.0):
    values = np.empty(n, dtype=object)
    codes = np.minimum(rng.zipf(1.5, n), n_values)
    pool = [f"v{i}" for i in range(n_values // 2)] + [i for i in range(n_values // 4)] + [(i, "t") for i in range(n_values)]
    values[:] = [pool[c % len(pool)] for c in codes]
    values[rng.random(n) < missing] = None
    labels = np.empty(n, dtype=object)
    labels[:] = [classes[c] for c in rng.integers(0, len(classes), n)]
    return values.tolist(), labels.tolist()


def feed(summary, rows, one_by_one: bool = True) -> None:
    values, labels, *rest = rows
    w = rest[0] if rest else None
    if one_by_one:
        for i, (x, y) in enumerate(zip(values, labels)):
            summary.update(x, y, 1.0 if w is None else float(w[i]))
    else:
        summary.update_many(values, labels, w)


def _fed(summary, rows, one_by_one=True):
    feed(summary, rows, one_by_one)
    return summary


def summary_cases() -> list:
    """(name, make) of summaries in various states."""
    rng = lambda seed: np.random.default_rng(seed)  # noqa: E731
    return [
        ("gk-empty", lambda: GKClass()),
        ("gk-1000", lambda: _fed(GKClass(), numeric_rows(rng(1), 1000))),
        ("gk-pending", lambda: _fed(GKClass(epsilon=0.02, buffer_size=300), numeric_rows(rng(2), 1000, missing=0.05, weights=True), False)),
        ("gk-budget", lambda: _fed(GKClass(max_tuples=12, buffer_size=50), numeric_rows(rng(3), 777, classes=("a", "b", "c")))),
        ("gk-late-class", lambda: _late_class(GKClass(quantiles=10, buffer_size=64))),
        ("gk-merged", lambda: _merged(GKClass(epsilon=0.01), GKClass(max_tuples=8))),
        ("cpid-warm-up", lambda: _fed(CPiD(warm_up=100), numeric_rows(rng(4), 60, missing=0.1))),
        ("cpid-1000", lambda: _fed(CPiD(n_bins=20), numeric_rows(rng(5), 1000, missing=0.05, weights=True))),
        ("cpid-step", lambda: _fed(CPiD(n_bins=8, warm_up=10, tail_split="step", alpha=0.3), numeric_rows(rng(6), 500), False)),
        ("cpid-late-class", lambda: _late_class(CPiD(n_bins=12, warm_up=20))),
        ("gaussian-empty", lambda: Gaussian()),
        ("gaussian-1000", lambda: _fed(Gaussian(), numeric_rows(rng(7), 1000, classes=(True, 2.5, "c"), missing=0.05))),
        ("categorical-exact", lambda: _fed(Categorical(), categorical_rows(rng(8), 1000, 40, missing=0.05))),
        ("categorical-late-class", lambda: _late_class_categorical(Categorical(max_values=50))),
        ("categorical-sketch", lambda: _fed(Categorical(max_values=10, top_k=5, epsilon=0.05, seed=7), categorical_rows(rng(9), 1000, 60))),
        ("categorical-sketch-batch", lambda: _fed(Categorical(max_values=8, top_k=4, epsilon=0.1, delta=0.2), categorical_rows(rng(10), 600, 30, missing=0.1), False)),
        ("categorical-sketch-merged", lambda: _merged(Categorical(max_values=6, top_k=3, epsilon=0.1), Categorical(max_values=6, top_k=3, epsilon=0.1))),
    ]


def _late_class(summary):
    rng = np.random.default_rng(11)
    feed(summary, numeric_rows(rng, 150, classes=("a",)))
    feed(summary, numeric_rows(rng, 150, classes=("a", "b", ("c", 1))), False)
    return summary


def _late_class_categorical(summary):
    rng = np.random.default_rng(12)
    feed(summary, categorical_rows(rng, 200, 20, classes=(1,)))
    feed(summary, categorical_rows(rng, 200, 20, classes=(1, 2, 3)))
    return summary


def _merged(a, b):
    rng = np.random.default_rng(13)
    kind = "categorical" if isinstance(a, Categorical) else "numeric"
    for summary, classes in ((a, ("x", "y")), (b, ("y", "z"))):
        if kind == "numeric":
            feed(summary, numeric_rows(rng, 400, classes=classes))
        else:
            feed(summary, categorical_rows(rng, 400, 30, classes=classes))
    a.merge(b)
    return a


def more_rows(summary, rng: np.random.Generator, n: int = 200):
    """A further stream for ``summary``: rows of its kind, with a new class among them."""
    classes = list(summary.classes[:2]) + ["new class"]
    if summary.kind == "categorical":
        return categorical_rows(rng, n, 70, classes=classes, missing=0.05)
    return numeric_rows(rng, n, classes=classes, missing=0.05, weights=True)


def other_cases() -> list:
    """(name, make) of the class index, the sketches, the partitions and the density."""
    rng = lambda seed: np.random.default_rng(seed)  # noqa: E731
    return [
        ("class-index", lambda: _index(["b", 3, 2.5, True, ("t", None), -0.0, float("inf")])),
        ("count-min", lambda: _sketch()),
        ("space-saving", lambda: _heavy()),
        ("intervals", lambda: modl.discretize(_fed(GKClass(), numeric_rows(rng(20), 800)).table())),
        ("intervals-missing", lambda: modl.discretize(_fed(GKClass(), numeric_rows(rng(21), 800, missing=0.3)).table())),
        ("intervals-null", lambda: modl.null_partition(_fed(CPiD(), numeric_rows(rng(22), 300)).table())),
        ("intervals-only-missing", lambda: modl.discretize(_fed(GKClass(), ([None] * 5, [0, 1, 0, 1, 1])).table())),
        ("groups", lambda: modl.group(_fed(Categorical(), categorical_rows(rng(23), 800, 16, missing=0.1)).table())),
        ("groups-sketch", lambda: modl.group(_fed(Categorical(max_values=10, top_k=6, epsilon=0.05), categorical_rows(rng(24), 900, 40)).table())),
        ("groups-null", lambda: modl.null_partition(_fed(Categorical(), categorical_rows(rng(25), 300, 8)).table())),
        ("density", lambda: GaussianDensity(_fed(Gaussian(), numeric_rows(rng(26), 500, classes=("a", "b", "rare"))).table())),
        ("density-many-classes", lambda: GaussianDensity(_fed(Gaussian(), numeric_rows(rng(27), 900, classes=tuple(range(10)))).table(), 1e-6, 3.0)),
        ("density-one-value", lambda: GaussianDensity(_fed(Gaussian(), ([1.5, 1.5, 2.0], ["a", "a", "b"])).table())),
    ]


def _index(labels):
    index = ClassIndex()
    for label in labels:
        index.encode(label)
    return index


def _sketch():
    sketch = CountMinSketch(*CountMinSketch.dimensions(0.05, 0.1), seed=3, n_classes=2)
    rng = np.random.default_rng(30)
    for value, j in zip(rng.integers(0, 200, 500).tolist(), rng.integers(0, 2, 500).tolist()):
        sketch.add(sketch.cells(value), j, 1.0)
    sketch.grow(3)
    return sketch


def _heavy():
    heavy = SpaceSaving(capacity=6)
    rng = np.random.default_rng(31)
    for value, j, w in zip(rng.zipf(1.3, 400).tolist(), rng.integers(0, 3, 400).tolist(), rng.uniform(0, 2, 400).tolist()):
        heavy.update(value % 40, w, j)
    return heavy


# ------------------------------------------------------------------------------------------------
# Learners


def learner_rows(rng: np.random.Generator, n: int, k: int = 6, j: int = 2) -> Batch:
    """``n`` rows of log-likelihoods: 3 informative variables, the rest noise."""
    y = rng.integers(0, j, n)
    pointed = np.where(rng.random((n, 3)) < 0.7, y[:, None], (y[:, None] + 1) % j)
    informative = np.where(pointed[:, :, None] == np.arange(j), np.log(0.7), np.log(0.3 / (j - 1)))
    noise = np.log(rng.dirichlet(np.ones(j), size=(n, k - 3)))
    return Batch(np.concatenate([informative, noise], axis=1), y, rng.uniform(0.5, 1.5, n), np.full(j, -np.log(j)))


def context(k: int, inactive=()) -> Context:
    active = np.ones(k, dtype=bool)
    active[list(inactive)] = False
    return Context(np.full(k, np.log(k) + 1.0), active)


def train(model, rng: np.random.Generator, steps: int, k: int = 6, j: int = 2, inactive=()) -> None:
    history = learner_rows(rng, 300, k, j)
    for _ in range(steps):
        model.learn(learner_rows(rng, 40, k, j), history, context(k, inactive))


def _trained(model, steps, k=6, j=2, inactive=(), seed=0, resize=None):
    model.reset(k, j, seed=seed)
    rng = np.random.default_rng(40 + steps)
    train(model, rng, steps, k, j, inactive)
    if resize is not None:
        model.resize(*resize)
        train(model, rng, 3, *resize)
    return model


def learner_cases() -> list:
    """(name, make) of learners in various states."""
    return [
        ("uniform", lambda: _trained(Uniform(), 2)),
        ("uniform-unset", lambda: Uniform(batch_size=7)),
        ("pgdmb", lambda: _trained(PGDMB(batch_size=40), 30, inactive=(4,))),
        ("pgdmb-r1-rprop", lambda: _trained(PGDMB(batch_size=40, regularizer="r1", exponent=0.5, rprop="rprop-", tolerance=2), 25)),
        ("pgdmb-unset", lambda: PGDMB(penalty=1)),
        ("pgdmb-resized", lambda: _trained(PGDMB(batch_size=40), 10, resize=(8, 3))),
        ("vns", lambda: _trained(VNS(batch_size=40, opti_level=1), 40, seed=5)),
        ("vns-multi-start", lambda: _trained(VNS(batch_size=40, opti_level=0, multi_start=True, replay_level=None), 30, seed=6)),
        ("vns-unset", lambda: VNS()),
        ("vns-resized", lambda: _trained(VNS(batch_size=20, opti_level=0), 12, seed=7, resize=(9, 3))),
        ("fnb", lambda: _trained(FNB(batch_size=40), 12, inactive=(4,), seed=8)),
        ("fnb-khiops-budget", lambda: _trained(FNB(max_variables=2, schedule="khiops", refresh=None), 9, j=3, seed=9, resize=(8, 3))),
        ("fnb-unset", lambda: FNB(penalty=0.5)),
        ("fnb-refine", lambda: _trained(FNB(batch_size=40, refine=VNS(batch_size=40, opti_level=0)), 12, inactive=(2,), seed=12)),
        ("fnb-refine-pgdmb-resized", lambda: _trained(FNB(batch_size=40, refine=PGDMB(batch_size=40)), 9, j=3, seed=13, resize=(8, 3))),
        ("snb", lambda: _trained(SNB(batch_size=40), 12, seed=10)),
        ("snb-optima-budget", lambda: _trained(SNB(max_variables=2, starts=3, averaging="optima"), 9, inactive=(0,), seed=11, resize=(7, 2))),
        ("snb-unset", lambda: SNB(growth=3.0)),
        ("graphical", lambda: _trained(Graphical(), 3)),
        ("graphical-adam", lambda: _trained(Graphical(adaptive=True, clip=2.0), 3, j=3, inactive=(1,), resize=(7, 4))),
        ("graphical-unset", lambda: Graphical(learning_rate=0.01)),
        ("sgcf", lambda: _trained(SGCF(batch_size=40), 20, inactive=(4,), seed=3)),
        ("sgcf-budget", lambda: _trained(SGCF(batch_size=40, max_variables=2), 20, resize=(8, 3))),
        ("sgcf-refine", lambda: _trained(SGCF(batch_size=40, refine=VNS(batch_size=40, opti_level=0)), 20, seed=4)),
        ("sgcf-unset", lambda: SGCF(penalty=0.1)),
        ("direct", lambda: _trained(Direct(batch_size=40, n_starts=2), 20, seed=5)),
        ("direct-budget", lambda: _trained(Direct(batch_size=40, n_starts=2, max_variables=1), 20, inactive=(0,), seed=6)),
        ("direct-unset", lambda: Direct(sigma=0.3)),
    ]


# ------------------------------------------------------------------------------------------------
# Whole models (``WeightedNaiveBayes`` with every part of the engine)


def model_rows(n: int, seed: int):
    """A messy stream: numeric and categorical features, missing values, an absent feature, 3 classes."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        y = ["low", "mid", "high"][int(rng.integers(0, 3))]
        shift = {"low": -1.0, "mid": 0.0, "high": 1.0}[y]
        x = {"a": float(rng.normal(shift)), "b": float(rng.normal()), "colour": f"c{int(rng.integers(0, 4)) + (y == 'high')}"}
        if rng.random() < 0.1:
            x["a"] = None
        if rng.random() < 0.2:
            del x["b"]
        if i > n // 2:
            x["late"] = float(rng.normal(shift))
        rows.append((x, y))
    return rows


def trained_model(rows, one_by_one: bool = True, **options):
    import pandas as pd

    from wnb_stream import WeightedNaiveBayes

    model = WeightedNaiveBayes(seed=5, **options)
    if one_by_one:
        for x, y in rows:
            model.learn_one(x, y)
    else:
        model.learn_many(pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows]))
    return model


def model_cases() -> list:
    """(name, make) of trained models: every learner, every numeric summary, a wrapped history."""
    return [
        ("model-fresh", lambda: trained_model([])),
        ("model-vns", lambda: trained_model(model_rows(600, 40))),
        ("model-vns-small-history", lambda: trained_model(model_rows(600, 41), history_size=50)),
        ("model-pgdmb-cpid", lambda: trained_model(model_rows(500, 42), numeric=CPiD(), optimizer=PGDMB(batch_size=50))),
        ("model-graphical-gaussian", lambda: trained_model(model_rows(500, 43), numeric=Gaussian(), optimizer=Graphical())),
        ("model-uniform-many", lambda: trained_model(model_rows(500, 44), one_by_one=False, optimizer=Uniform())),
        ("model-sketch", lambda: trained_model(model_rows(400, 45), categorical=Categorical(max_values=3, top_k=2, epsilon=0.05))),
        ("model-absent-zero", lambda: trained_model([({k: round(v) for k, v in x.items() if isinstance(v, float)} | {"colour": x["colour"]}, y) for x, y in model_rows(500, 46)], absent=0.0)),
        ("model-memory-budget", lambda: trained_model(model_rows(800, 47), memory_budget=60_000)),
    ]


#: Rows a model fixture's facts are read on (predictions of a loaded model must not move).
PROBES = [
    {"a": -1.2, "b": 0.3, "colour": "c1"},
    {"a": 0.9, "colour": "c4", "late": 1.1},
    {"a": None, "b": -2.0, "colour": "unseen"},
    {},
]
