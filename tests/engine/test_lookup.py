"""``engine.lookup.Lookup`` alone, compiled from real ``Variable``s: its table rows are each
variable's own ``locate``/``log_prob``, ``scores_one`` is the naive weighted sum, ``encode_block``
is ``Variable.log_lik_many``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from wnb_stream import summaries
from wnb_stream.engine.lookup import Lookup, _rows_any
from wnb_stream.engine.registry import Registry
from wnb_stream.engine.rows import RowParser
from wnb_stream.engine.variable import NOWHERE

CLASSES = ("a", "b", "c")
J = len(CLASSES)
# Numeric binned variables first (a run of indices: the slice path of encode_block), then the others.
SPECS = [
    ("n_gk", "numeric", summaries.GKClass, "rebuilt"),
    ("n_cpid", "numeric", lambda: summaries.CPiD(n_bins=20, warm_up=20), "rebuilt"),
    ("n_two_classes", "numeric", summaries.GKClass, "two classes"),  # rebuilt when only 2 classes existed
    ("n_missing_only", "numeric", summaries.GKClass, "missing only"),  # no finite value seen
    ("n_never", "numeric", summaries.GKClass, "never"),  # never rebuilt: no level 2
    ("g", "numeric", summaries.Gaussian, "rebuilt"),  # a density: not in the table
    ("g_never", "numeric", summaries.Gaussian, "never"),
    ("c", "categorical", summaries.Categorical, "rebuilt"),
    ("c_two_classes", "categorical", summaries.Categorical, "two classes"),
    ("c_never", "categorical", summaries.Categorical, "never"),
]
BINNED_NUMERIC = [0, 1, 2, 3, 4]
WORDS = list("uvwxyz")


def build(seed: int):
    """A registry of SPECS' variables, fed class-dependent data and rebuilt; a compiled lookup."""
    rng = np.random.default_rng(seed)
    registry = Registry()
    for name, kind, make, _ in SPECS:
        registry.add(name, kind, make(), 0)
    n = int(rng.integers(30, 300))
    for variable, (_, kind, _, how) in zip(registry.variables, SPECS):
        for _ in range(n):
            j = int(rng.integers(0, 2 if how == "two classes" else J))
            if kind == "numeric":
                x = round(float(rng.normal(1.5 * j, 1.0)), 1)  # ties
                if how == "missing only" or rng.random() < 0.05:
                    x = math.nan
            else:
                x = WORDS[(j + int(rng.integers(0, 3))) % len(WORDS)] if rng.random() > 0.05 else None
            variable.summary.update(x, CLASSES[j], float(rng.choice([1.0, 0.5, 2.0])))
        if how != "never":
            variable.rebuild(CLASSES[:2] if how == "two classes" else CLASSES, selection_cost=math.log(len(SPECS)))
    lookup = Lookup()
    lookup.compile(registry.variables, J)
    coef = rng.uniform(0.0, 1.5, size=(len(SPECS), J))
    learner_bias = rng.normal(size=J)
    log_prior = np.log(rng.dirichlet(np.ones(J)))
    lookup.refresh(registry.variables, J, coef, learner_bias, log_prior)
    return registry, lookup, coef, log_prior + learner_bias, rng


def numeric_probe(variable, rng):
    """A value on a cut, next to one, anywhere, or missing (NaN, None, ±inf)."""
    choice = rng.integers(0, 5)
    if choice == 0 and len(variable.cuts):
        cut = float(rng.choice(variable.cuts))
        return float(rng.choice([cut, np.nextafter(cut, -math.inf), np.nextafter(cut, math.inf)]))
    if choice == 1:
        return [math.nan, None, math.inf, -math.inf][int(rng.integers(0, 4))]
    return round(float(rng.normal(1.5, 3.0)), 1)


def random_row(registry, rng) -> dict:
    x = {}
    for variable in registry.variables:
        if rng.random() < 0.25:
            continue  # absent
        if variable.kind == "numeric":
            x[variable.name] = numeric_probe(variable, rng)
        else:
            x[variable.name] = [*WORDS, "never seen", None][int(rng.integers(0, len(WORDS) + 2))]
    return x


def padded(ll, width=J) -> np.ndarray:
    out = np.zeros(width)
    if ll is not None:
        out[: len(ll)] = ll
    return out


def naive_scores(x: dict, registry, coef, bias) -> np.ndarray:
    """The definition: bias + Σ_k coef_k ⊙ ℓ_k(x_k), ℓ from each variable alone."""
    scores = bias.copy()
    for name, value in x.items():
        k = registry.index[name]
        if isinstance(value, float) and math.isinf(value):
            value = None  # ±inf in a numeric feature is missing (the parser's rule)
        ll = registry.variables[k].log_lik_one(value)
        if ll is not None:
            scores[: len(ll)] += coef[k, : len(ll)] * ll
    return scores


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_table_rows_are_each_variables_own_parts(seed):
    registry, lookup, _, _, rng = build(seed)
    variables = registry.variables
    lookup._check(len(variables), J)
    assert lookup.density == [5, 6]
    parser = RowParser(registry)
    for _ in range(30):
        x = random_row(registry, rng)
        ks, rows = lookup.locate(parser.row(x), variables)
        assert sorted(ks.tolist()) == sorted(registry.index[name] for name in x)
        for k, row in zip(ks.tolist(), rows.tolist()):
            variable, value = variables[k], x[variables[k].name]
            if variable.density or variable.log_prob is None:
                assert row == NOWHERE  # nothing from the table
                continue
            part = variable.locate(value)
            assert row == (NOWHERE if part == NOWHERE else lookup.offsets[k] + part), (variable.name, value)
            if part != NOWHERE:
                assert lookup.row_variable[row] == k
                np.testing.assert_array_equal(lookup.table[row], padded(variable.log_prob[part]))
    assert not lookup.table[NOWHERE].any()


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_scores_one_is_the_weighted_sum_of_log_likelihoods(seed):
    registry, lookup, coef, bias, rng = build(seed)
    parser = RowParser(registry)
    np.testing.assert_array_equal(lookup.bias, bias)
    for _ in range(30):
        x = random_row(registry, rng)
        row = parser.row(x)
        got = lookup.scores_one(row, registry.variables)
        np.testing.assert_allclose(got, naive_scores(x, registry, coef, bias), rtol=1e-12, atol=1e-12)
        assert row.located is not None and row.located[0] == lookup.version
        np.testing.assert_array_equal(lookup.scores_one(row, registry.variables), got)  # located once


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 25), st.booleans())
def test_encode_block_is_log_lik_many(seed, n, as_slice):
    registry, lookup, _, _, rng = build(seed)
    variables = registry.variables
    if as_slice:  # a run of consecutive variables, written through a view
        lo = int(rng.integers(0, len(BINNED_NUMERIC)))
        hi = int(rng.integers(lo + 1, len(BINNED_NUMERIC) + 1))
        ks, at = np.arange(lo, hi, dtype=np.intp), slice(lo, hi)
    else:
        ks = rng.permutation(BINNED_NUMERIC)[: int(rng.integers(1, len(BINNED_NUMERIC) + 1))].astype(np.intp)
        at = ks
    block = np.array([[numeric_probe(variables[k], rng) for k in ks] for _ in range(n)], dtype=float).reshape(n, len(ks))
    block[np.isinf(block)] = np.nan  # rows hold NaN for a missing value
    present = rng.random((n, len(ks))) < 0.8
    out = np.full((n, len(variables) + 2, J + 1), 7.0)  # headroom, as in the history
    lookup.encode_block(ks, block, present, out, at)
    for i, k in enumerate(ks.tolist()):
        expected = np.zeros((n, J))
        ll = variables[k].log_lik_many(block[:, i])
        expected[:, : ll.shape[1]] = ll
        expected[~present[:, i]] = 0.0
        np.testing.assert_array_equal(out[:, k, :J], expected)  # the same floats: table rows are log_prob rows
    untouched = np.ones(out.shape, dtype=bool)
    untouched[:, ks, :J] = False
    assert (out[untouched] == 7.0).all(), "encode_block writes only its variables' first J classes"


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 20))
def test_add_block_adds_what_scores_one_adds(seed, n):
    registry, lookup, coef, bias, rng = build(seed)
    ks = np.array([k for k, v in enumerate(registry.variables) if v.kind == "numeric"], dtype=np.intp)
    ks = rng.permutation(ks)[: int(rng.integers(1, len(ks) + 1))]
    block = np.array([[numeric_probe(registry.variables[k], rng) for k in ks] for _ in range(n)], dtype=float).reshape(n, len(ks))
    scores = np.tile(lookup.bias, (n, 1))
    lookup.add_block(scores, ks, np.where(np.isinf(block), np.nan, block), registry.variables)
    for r in range(n):
        x = {registry.variables[k].name: block[r, i] for i, k in enumerate(ks.tolist())}
        np.testing.assert_allclose(scores[r], naive_scores(x, registry, coef, bias), rtol=1e-12, atol=1e-12)


def test_categorical_rows_and_compilation_version():
    registry, lookup, _, _, _ = build(1)
    k = registry.index["c"]
    parts = np.array([0, NOWHERE, 1], dtype=np.intp)
    assert lookup.categorical_rows(k, parts).tolist() == [lookup.offsets[k], NOWHERE, lookup.offsets[k] + 1]
    row = RowParser(registry).row({"n_gk": 1.0, "c": "u"})
    version = lookup.version
    located = lookup.locate(row, registry.variables)
    assert row.located[0] == version
    lookup.compile(registry.variables, J)  # a new compilation: the row is located again
    assert lookup.version == version + 1 and lookup.stale_coef
    again = lookup.locate(row, registry.variables)
    assert row.located[0] == version + 1
    for a, b in zip(located, again):
        np.testing.assert_array_equal(a, b)


def test_an_empty_lookup():
    lookup = Lookup()
    lookup.compile([], 2)
    lookup._check(0, 2)
    assert lookup.table.shape == (1, 2) and lookup.cuts.shape == (0, 1)
    lookup.refresh([], 2, np.zeros((0, 2)), np.zeros(2), np.log([0.5, 0.5]))
    registry = Registry()
    row = RowParser(registry).row({})
    np.testing.assert_array_equal(lookup.scores_one(row, []), np.log([0.5, 0.5]))


def test_check_catches_broken_lookups():
    registry, lookup, _, _, _ = build(2)
    K = len(registry)
    lookup._check(K, J)
    with pytest.raises(AssertionError):
        lookup._check(K, J + 1)
    with pytest.raises(AssertionError):
        lookup._check(K + 1, J)
    for breakage in (
        lambda: lookup.table.__setitem__((-1, 0), 1.0),  # the NOWHERE row must be zeros
        lambda: lookup.n_cuts.__setitem__(0, lookup.cuts.shape[1]),  # no +inf sentinel left
        lambda: lookup.first_row.__setitem__(0, len(lookup.table) - 1),  # a row past the variables'
        lambda: lookup.weighted.__setitem__((-1, 1), 1.0),
    ):
        saved = {name: getattr(lookup, name).copy() for name in ("table", "n_cuts", "first_row", "weighted")}
        breakage()
        with pytest.raises(AssertionError):
            lookup._check(K, J)
        for name, value in saved.items():
            setattr(lookup, name, value)
    lookup._check(K, J)


@pytest.mark.parametrize("absent", [None, 0.0])
@pytest.mark.parametrize("seed", range(3))
def test_the_incremental_compilation_scores_as_a_full_one(absent, seed):
    """A model's lookup, compiled variable by variable as they are rebuilt and created
    (``mark``/``recompile``), scores and encodes every row exactly as a lookup compiled in full
    from the same variables; and its garbage is packed away."""
    from wnb_stream import WeightedNaiveBayes

    rng = np.random.default_rng(seed)
    model = WeightedNaiveBayes(absent=absent, seed=seed, numeric=summaries.GKClass() if seed else summaries.Gaussian())
    engine = model._engine
    updates, update = [], engine.lookup._update
    engine.lookup._update = lambda *args: (updates.append(args[2]), update(*args))  # count the incremental path
    for i in range(400):
        y = int(rng.integers(0, 2))
        # more and more features (new variables), sparse rows, a categorical one
        x = {f"f{k}": float(rng.integers(1, 4) + y * (k % 3 == 0)) for k in range(min(40, 3 + i // 8)) if rng.random() < 0.3}
        if rng.random() < 0.5:
            x["c"] = WORDS[(y + int(rng.integers(0, 2))) % 3]
        if rng.random() < 0.05 and x:
            x[next(iter(x))] = math.nan
        model.learn_one(x, y)
        if i % 7:
            continue
        engine.refresh()
        full = Lookup(absent)
        K, J_ = len(engine.registry), len(engine.classes)
        full.refresh(engine.registry.variables, J_, engine.lookup.coef, engine.lookup.learner_bias, engine.classes.log_prior())
        full._check(K, J_)
        engine.lookup._check(K, J_)
        for probe in [x, {}, {"f0": 2.0, "f1": math.nan, "c": "zz"}]:
            row = engine.parser.row(probe)
            assert engine.lookup.scores_one(row, engine.registry.variables).tolist() == full.scores_one(engine.parser.row(probe), engine.registry.variables).tolist()
        if absent is not None:
            np.testing.assert_array_equal(engine.lookup.defaults, full.defaults)
        ks = np.array([k for k, v in enumerate(engine.registry.variables) if v.kind == "numeric"], dtype=np.intp)
        block = rng.integers(0, 5, size=(6, len(ks))).astype(float)
        out_a, out_b = np.zeros((6, K, J_)), np.zeros((6, K, J_))
        present = np.ones(block.shape, dtype=bool)
        engine.lookup.encode_block(ks, block, present, out_a, ks)
        full.encode_block(ks, block, present, out_b, ks)
        np.testing.assert_array_equal(out_a, out_b)
    assert len(updates) > 50 and min(map(len, updates)) <= 2  # (the incremental path ran, on a few variables at times)
    assert engine.lookup.garbage <= max(engine.lookup.used, 64)


def live_rows(lookup: Lookup, K: int) -> np.ndarray:
    """The weighted rows the locators reach (every variable's segment, in variable order)."""
    return np.concatenate([lookup.weighted[lookup.offsets[k] : lookup.offsets[k] + lookup.size[k]] for k in range(K)] + [np.zeros((0, lookup.weighted.shape[1]))])


def assert_weighed_as_in_full(engine) -> None:
    """The engine's lookup, compiled and weighed incrementally, holds bit for bit what a lookup
    compiled and weighed in full from the same variables and coefficients holds."""
    lookup = engine.lookup
    K, J_ = len(engine.registry), len(engine.classes)
    full = Lookup(lookup.default)
    full.refresh(engine.registry.variables, J_, lookup.coef, lookup.learner_bias, engine.classes.log_prior())
    assert lookup.coef.tobytes() == full.coef.tobytes()
    assert live_rows(lookup, K).tobytes() == live_rows(full, K).tobytes()
    assert lookup.bias.tobytes() == full.bias.tobytes() and lookup.intercept.tobytes() == full.intercept.tobytes()
    if lookup.default is not None:
        assert lookup.shift.tobytes() == full.shift.tobytes() and lookup.constant.tobytes() == full.constant.tobytes()


# (four tests of a quarter of the examples each: a Gaussian model's example takes some 5 s of CPU)
@pytest.mark.parametrize("gaussian", [False, True])
@pytest.mark.parametrize("absent", [None, 0.0])
@settings(max_examples=examples(2), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_classes=st.integers(2, 3))
def test_the_incremental_weighting_is_the_full_one(gaussian, absent, seed, n_classes):
    """After every example of a sparse stream (new features, rebuilds of a few variables, learner
    steps that move a few coefficients), ``refresh`` weighs only what changed, and its weighted
    table, shift, constant and intercept are those of a full weighing, bit for bit."""
    from wnb_stream import WeightedNaiveBayes

    rng = np.random.default_rng(seed)
    model = WeightedNaiveBayes(absent=absent, seed=seed, numeric=summaries.Gaussian() if gaussian else None)
    engine = model._engine
    weighed = []
    weigh = engine.lookup._weigh
    engine.lookup._weigh = lambda ks: (weighed.append(ks is not None), weigh(ks))  # count the incremental path
    for i in range(200):
        y = int(rng.integers(0, n_classes))
        x = {f"w{k}": float(rng.integers(1, 4)) for k in rng.choice(10 + i, size=int(rng.integers(0, 6)), replace=False).tolist()}
        x.update({f"s{k}": float(1 + (y == k % n_classes)) for k in range(4) if rng.random() < 0.5})
        model.predict_proba_one(x)
        model.learn_one(x, y)
        engine.refresh()
        assert_weighed_as_in_full(engine)
    assert sum(weighed) > 20  # (the incremental path ran)


def test_numpy_sums_the_rows_of_a_table_in_order():
    """``Lookup._weigh`` leaves the zero rows out of ``constant``: exact because NumPy sums the
    rows of a C-contiguous ``(K, J ≥ 2)`` array along axis 0 one after the other, in order (and a
    single column pairwise, which ``_weigh`` sums in full)."""
    rng = np.random.default_rng(0)
    for K, J_ in [(3, 2), (100, 2), (5000, 3), (20000, 2), (1000, 7)]:
        x = rng.standard_normal((K, J_)) * np.exp(rng.uniform(-30, 30, (K, J_)))
        expected = x[0].copy()
        for row in x[1:]:
            expected = expected + row
        assert x.sum(axis=0).tobytes() == expected.tobytes()


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 40), st.integers(0, 11), st.integers(0, 2**32 - 1))
def test_rows_any_is_numpys(K, J, seed):
    """``_rows_any`` (one pass per column) is ``any(axis=1)``: NaN counts, both zeros do not."""
    rng = np.random.default_rng(seed)
    a = rng.choice([0.0, -0.0, 1.5, -2.0, np.nan, np.inf], size=(K, J), p=[0.5, 0.2, 0.1, 0.1, 0.05, 0.05])
    assert _rows_any(a).tolist() == a.any(axis=1).tolist()
    assert _rows_any(a != 0).tolist() == (a != 0).any(axis=1).tolist()


def test_refresh_in_steps_asks_only_for_what_changed():
    registry, lookup, coef, bias, _ = build(3)
    assert lookup.fresh() and not lookup.compile_due(registry.variables, J) and not lookup.weigh()
    lookup.prior_changed()
    assert not lookup.fresh() and not lookup.compile_due(registry.variables, J) and lookup.weigh()
    log_prior = np.log(np.full(J, 1.0 / J))
    lookup.take_prior(log_prior)
    assert lookup.fresh()
    np.testing.assert_array_equal(lookup.bias, log_prior + lookup.learner_bias)
    lookup.coefficients_changed()
    assert lookup.compile_due(registry.variables, J)
    lookup.take_coefficients(coef * 2.0, lookup.learner_bias)
    assert lookup.weigh()  # every variable's coefficients moved: its rows weighed, the bias wanted
    lookup.take_prior(log_prior)
    assert lookup.fresh()
    np.testing.assert_array_equal(lookup.coef, coef * 2.0)
