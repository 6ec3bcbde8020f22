"""Change detection and forgetting (``engine/drift.py``, ``Engine.forget``).

The monitor's split test against a brute-force loop, its false alarms on stationary errors, its
estimate of where a rise began; forgetting rebuilds level 1 from the kept rows exactly; both
paths of learning detect the same changes at the same rows; a saved model carries the monitor;
and the default model recovers from a concept flip that the model without forgetting does not.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from engine_cases import assert_same_model, frame, records
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from river.datasets import synth

from wnb_stream import WeightedNaiveBayes, io, summaries, weights
from wnb_stream.engine import core
from wnb_stream.engine.drift import BUCKET, EVERY, MAX_BUCKETS, MIN_SIDE, Monitor

# ---------------------------------------------------------------------- the monitor


def brute_split(rows, errors, delta):
    """The most significant split by a plain loop over every split (the test's oracle)."""
    B = len(rows)
    if B < 2 * MIN_SIDE:
        return None, False
    n, total = sum(rows), sum(errors)
    mean = total / n
    variance = max(mean * (1 - mean), 1 / n)
    log_term = math.log(2 * n / delta)
    excess = []
    for i in range(MIN_SIDE, B - MIN_SIDE + 1):
        n0, n1 = sum(rows[:i]), sum(rows[i:])
        gap = sum(errors[i:]) / n1 - sum(errors[:i]) / n0
        m = 1 / (1 / n0 + 1 / n1)
        epsilon = math.sqrt(2 / m * variance * log_term) + 2 / (3 * m) * log_term
        excess.append((abs(gap) / epsilon, i, gap))
    value, best, best_gap = max(excess, key=lambda e: (e[0], -e[1]))  # the first of the largest
    if value <= 1.0:
        return None, False
    return best, (best is not None and best_gap > 0)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 40), st.floats(0, 1)), min_size=0, max_size=30),
    st.sampled_from([0.002, 0.05, 0.5]),
)
def test_the_split_test_is_the_brute_force_one(buckets, delta):
    monitor = Monitor(delta)
    monitor.rows = np.array([float(r) for r, _ in buckets])
    monitor.errors = np.array([float(round(r * p)) for r, p in buckets])
    split, rose = monitor._split()
    expected, expected_rose = brute_split(monitor.rows.tolist(), monitor.errors.tolist(), delta)
    assert split == expected and (split is None or rose == expected_rose)


@pytest.mark.parametrize("rate", [0.01, 0.2, 0.5])
def test_no_false_alarm_on_a_stationary_error_rate(rate):
    monitor = Monitor(0.002)
    rng = np.random.default_rng(3)
    alarms = sum(monitor.add(rng.random(EVERY) < rate) > 0 for _ in range(640))  # 163,840 rows
    assert alarms == 0
    monitor._check()
    assert len(monitor.rows) <= MAX_BUCKETS


@pytest.mark.parametrize(("before", "after", "within"), [(0.1, 0.9, 256), (0.05, 0.3, 256), (0.2, 0.35, 2048)])
def test_a_rise_is_detected_soon_and_located(before, after, within):
    monitor = Monitor(0.002)
    rng = np.random.default_rng(4)
    for _ in range(40):
        assert monitor.add(rng.random(EVERY) < before) == 0
    for t in range(1, 40):
        since = monitor.add(rng.random(EVERY) < after)
        if since:
            break
    assert since, "the rise was not detected"
    assert t * EVERY <= within
    assert since <= t * EVERY + BUCKET, "the change is placed before it happened"
    assert since >= t * EVERY // 2
    assert len(monitor) == 0, "the monitor starts afresh after a change"


def test_a_fall_is_not_a_change_but_moves_the_reference():
    monitor = Monitor(0.002)
    rng = np.random.default_rng(5)
    for _ in range(30):
        monitor.add(rng.random(EVERY) < 0.6)
    for _ in range(30):
        assert monitor.add(rng.random(EVERY) < 0.1) == 0
    assert len(monitor) < 60 * EVERY, "the older, worse buckets were dropped"
    assert monitor.errors.sum() / monitor.rows.sum() < 0.3


# ---------------------------------------------------------------------- forgetting


def flip_rows(n, flip_at, seed=0):
    """Two informative features (one numeric, one categorical) whose class flips at ``flip_at``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        y = bool(rng.random() < 0.5)
        x = {"n": round(float(rng.normal(2.0 if y else -2.0, 1.0)), 2), "c": ("u" if y else "v") if rng.random() < 0.8 else "w"}
        if i % 17 == 0:
            x["n"] = None
        rows.append((x, (not y) if i >= flip_at else y, 1.0 if i % 5 else 2.0))
    return rows


def spy_forget(monkeypatch):
    calls = []
    original = core.Engine.forget

    def forget(self, keep):
        calls.append((id(self), self.n_seen, keep))
        original(self, keep)

    monkeypatch.setattr(core.Engine, "forget", forget)
    return calls


def test_forgetting_rebuilds_level_one_from_the_kept_rows_exactly():
    model = WeightedNaiveBayes(history_size=300, seed=1, drift_delta=None)
    rows = flip_rows(500, 10**9)
    for x, y, w in rows:
        model.learn_one(x, y, w)
    model._engine.forget(120)
    model._check()
    fresh = {"n": summaries.GKClass(), "c": summaries.Categorical()}
    for x, y, w in rows[-120:]:
        for name, summary in fresh.items():
            if name in x:
                summary.update(x[name], y, w)
    e = model._engine
    for name, summary in fresh.items():
        variable = e.registry.variables[e.registry.index[name]]
        e.registry.feed(np.array([e.registry.index[name]]), e.history, e.classes)
        got, want = variable.summary.table(), summary.table().aligned(variable.summary.table().classes)
        np.testing.assert_allclose(got.counts, want.counts)
        np.testing.assert_allclose(got.missing, want.missing)
    labels = e.classes.labels
    expected = [sum(w for _, y, w in rows[-120:] if y == label) for label in labels]
    np.testing.assert_allclose(e.classes.counts, expected)
    assert len(e.history) == 120 and e.history.stored == 500 and e.n_seen == 500
    # and it keeps learning and predicting
    for x, y, w in rows[:50]:
        model.learn_one(x, y, w)
    model._check()
    assert set(model.predict_proba_one(rows[0][0])) == {True, False}


def test_forgetting_everything_leaves_a_working_model():
    model = WeightedNaiveBayes(seed=1, drift_delta=None)
    for x, y, w in flip_rows(200, 10**9):
        model.learn_one(x, y, w)
    model._engine.forget(0)
    model._check()
    p = model.predict_proba_one({"n": 1.0, "c": "u"})
    assert math.fsum(p.values()) == pytest.approx(1.0)
    for x, y, w in flip_rows(100, 10**9, seed=1):
        model.learn_one(x, y, w)
    model._check()


@pytest.mark.parametrize("optimizer", ["Uniform", "VNS", "PGDMB", "Graphical", "FNB", "SGCF"])
@pytest.mark.parametrize("numeric", ["GKClass", "Gaussian"])
def test_both_paths_forget_at_the_same_rows_and_reach_the_same_model(monkeypatch, optimizer, numeric):
    calls = spy_forget(monkeypatch)
    make = {"Uniform": weights.Uniform, "VNS": lambda: weights.VNS(batch_size=50), "PGDMB": lambda: weights.PGDMB(batch_size=50), "Graphical": weights.Graphical,
            "FNB": lambda: weights.FNB(batch_size=50), "SGCF": lambda: weights.SGCF(batch_size=50)}[optimizer]
    params = dict(numeric=getattr(summaries, numeric)(), optimizer=make(), history_size=200, seed=3)
    a, b = WeightedNaiveBayes(**params), WeightedNaiveBayes(**params)
    rows = flip_rows(900, 450)
    rng = np.random.default_rng(0)
    i = 0
    while i < len(rows):
        size = int(rng.choice([1, 13, 70, 150]))
        chunk = rows[i : i + size]
        X, ys, ws = frame(chunk)
        a.learn_many(X, ys, np.array(ws))
        for x, y, w in zip(records(X), ys, ws, strict=True):
            b.learn_one(x, y, w)
        i += size
        assert_same_model(a, b, [x for x, _, _ in chunk[-3:]])
    a._check()
    b._check()
    by_a = [(n, keep) for who, n, keep in calls if who == id(a._engine)]
    by_b = [(n, keep) for who, n, keep in calls if who == id(b._engine)]
    assert by_a and by_a == by_b, calls
    assert all(450 < n <= 700 for n, _ in by_a), calls


def test_a_saved_model_carries_the_monitor_and_keeps_detecting(monkeypatch):
    calls = spy_forget(monkeypatch)
    rows = flip_rows(1200, 700)
    model = WeightedNaiveBayes(seed=2)
    for x, y, w in rows[:600]:
        model.learn_one(x, y, w)
    copy = io.loads(io.dumps(model))
    np.testing.assert_array_equal(copy._engine.monitor.rows, model._engine.monitor.rows)
    for x, y, w in rows[600:]:
        model.learn_one(x, y, w)
        copy.learn_one(x, y, w)
    by_model = [(n, keep) for who, n, keep in calls if who == id(model._engine)]
    by_copy = [(n, keep) for who, n, keep in calls if who == id(copy._engine)]
    assert by_model and by_model == by_copy
    assert model.changes_detected == copy.changes_detected == len(by_model)
    assert model.predict_proba_one(rows[-1][0]) == copy.predict_proba_one(rows[-1][0])


def test_without_a_detector_nothing_is_forgotten(monkeypatch):
    calls = spy_forget(monkeypatch)
    model = WeightedNaiveBayes(seed=2, drift_delta=None)
    for x, y, w in flip_rows(1200, 600):
        model.learn_one(x, y, w)
    assert calls == [] and model._engine.monitor is None and model.changes_detected == 0
    assert io.to_record(model)["state"]["monitor"] is None


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, math.nan, True, "0.01", 1])
def test_a_bad_drift_delta_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="drift_delta"):
        WeightedNaiveBayes(drift_delta=bad)


def sea_flip(n, seed):
    for i, (x, y) in enumerate(synth.SEA(variant=0, seed=seed).take(n)):
        yield x, (not y) if i >= n // 2 else y


def agrawal_switch(n, seed):
    return itertools.chain(
        synth.Agrawal(classification_function=0, seed=seed).take(n // 2),
        synth.Agrawal(classification_function=2, seed=seed + 1).take(n - n // 2),
    )


@pytest.mark.parametrize("stream", [sea_flip, agrawal_switch], ids=["SEA flipped", "Agrawal 0 to 2"])
def test_the_default_model_recovers_from_an_abrupt_change(stream):
    """Accuracy over the last quarter of a stream changed at its middle: the default model is
    within 3 points of a fresh model started at the change; without forgetting it is far behind."""
    n = 6000
    scores = {}
    for name, params, start in (("default", {}, 0), ("off", {"drift_delta": None}, 0), ("fresh", {}, n // 2)):
        model = WeightedNaiveBayes(seed=1, **params)
        hits = []
        for i, (x, y) in enumerate(stream(n, 7)):
            if i < start:
                continue
            p = model.predict_proba_one(x)
            hits.append(bool(p) and max(p, key=p.get) == y)
            model.learn_one(x, y)
        scores[name] = float(np.mean(hits[-n // 4 :]))
    assert scores["default"] >= scores["fresh"] - 0.03, scores
    assert scores["off"] < scores["fresh"] - 0.1, scores


def test_forget_by_hand_keeps_the_most_recent_rows_and_checks_its_argument():
    model = WeightedNaiveBayes(seed=1, drift_delta=None)
    for x, y, w in flip_rows(300, 10**9):
        model.learn_one(x, y, w)
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="keep"):
            model.forget(bad)
    assert len(model._engine.history) == 300
    model.forget(keep=40)
    model._check()
    assert len(model._engine.history) == 40 and model._engine.classes.seen.sum() == 40
    model.forget()
    model._check()
    assert len(model._engine.history) == 0 and model._engine.classes.counts.sum() == 0


# ---------------------------------------------------------------------- fading (half_life)


def test_fading_is_the_model_of_the_stream_with_each_weight_times_its_decay():
    """With ``half_life`` h the class counts and every summary are those of the stream whose row i
    has weight w_i · f^c, f = 2^(−32/h), c = check points after it (forward decay)."""
    h = 512.0
    model = WeightedNaiveBayes(seed=1, drift_delta=None, half_life=h, history_size=300)
    rows = flip_rows(1100, 10**9)
    for x, y, w in rows:
        model.learn_one(x, y, w)
    model._check()
    f = 0.5 ** (EVERY / h)
    n = len(rows)
    faded = [(x, y, w * f ** (n // EVERY - i // EVERY)) for i, (x, y, w) in enumerate(rows)]  # row i: at n_seen = i + 1
    e = model._engine
    expected = [math.fsum(w for _, y, w in faded if y == label) for label in e.classes.labels]
    np.testing.assert_allclose(e.classes.counts, expected, rtol=1e-12)
    reference = {"n": summaries.GKClass(), "c": summaries.Categorical()}
    for name, summary in reference.items():
        first = next(i for i, (x, _, _) in enumerate(faded) if x.get(name) is not None)  # (created there)
        for x, y, w in faded[first:]:
            if name in x:
                summary.update(x[name], y, w)
    for name, summary in reference.items():
        k = e.registry.index[name]
        e.registry.feed(np.array([k]), e.history, e.classes)
        got = e.registry.variables[k].summary.table()
        want = summary.table().aligned(got.classes)
        np.testing.assert_allclose(got.counts.sum(axis=0), want.counts.sum(axis=0), rtol=1e-9)
        np.testing.assert_allclose(got.missing, want.missing, rtol=1e-9)
    # older rows weigh less in the learners' window too
    order = e.history.order()
    assert e.history.sample_weight[order[0]] < e.history.sample_weight[order[-1]] * (2.0 if rows[0][2] == 2.0 else 1.0)


def test_fading_goes_the_same_way_on_both_paths():
    params = dict(optimizer=weights.VNS(batch_size=50), history_size=150, seed=3, half_life=300)
    a, b = WeightedNaiveBayes(**params), WeightedNaiveBayes(**params)
    rows = flip_rows(600, 300)
    rng = np.random.default_rng(1)
    i = 0
    while i < len(rows):
        chunk = rows[i : i + int(rng.choice([1, 9, 64, 120]))]
        X, ys, ws = frame(chunk)
        a.learn_many(X, ys, np.array(ws))
        for x, y, w in zip(records(X), ys, ws, strict=True):
            b.learn_one(x, y, w)
        i += len(chunk)
        assert_same_model(a, b, [x for x, _, _ in chunk[-2:]])
    a._check()
    copy = io.loads(io.dumps(a))
    assert copy.half_life == 300 and copy._engine.fading == a._engine.fading
    assert copy._engine.schedule.every == 300


@pytest.mark.parametrize("bad", [0, 255, -5.0, math.inf, math.nan, True, "512"])
def test_a_bad_half_life_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="half_life"):
        WeightedNaiveBayes(half_life=bad)


@pytest.mark.parametrize("m", [1, 30, 64, 65, 256, 300])
def test_a_check_point_adds_buckets_of_64_rows_the_oldest_taking_the_remainder(m):
    monitor = Monitor(0.002)
    errors = np.random.default_rng(m).random(m) < 0.3
    monitor.add(errors)
    sizes = monitor.rows.tolist()
    assert sum(sizes) == m and all(size == BUCKET for size in sizes[1:]) and BUCKET <= sizes[0] < 2 * BUCKET or len(sizes) == 1
    ends = np.cumsum(sizes).astype(int)
    starts = np.concatenate([[0], ends[:-1]])
    assert monitor.errors.tolist() == [float(errors[a:b].sum()) for a, b in zip(starts, ends)]


# ---------------------------------------------------------------------- batch searches refit first


def stale_rows(n_first, n_then, share, seed=0):
    """A stream on which a second variable becomes needed little by little: A names the class on
    the first ``n_first`` rows (B agrees 80 % of the time); then a growing part of the rows (up
    to ``share``) has A saying nothing and B naming the class. A model with A and B is right
    throughout; one with A alone (the sparse optimum of a search on the first rows) errs more and
    more until its weights are searched again."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_first + n_then):
        y = "a" if rng.random() < 0.5 else "b"
        if i < n_first or rng.random() >= share * min(1.0, (i - n_first) / n_then):
            a, b = "A" + y, "B" + (y if rng.random() < 0.8 else {"a": "b", "b": "a"}[y])
        else:
            a, b = "Au", "B" + y
        rows.append(({"A": a, "B": b, "C": f"C{rng.integers(3)}"}, y))
    return rows


@pytest.mark.parametrize("optimizer", [weights.FNB, weights.SGCF], ids=["FNB", "SGCF"])
def test_a_batch_search_refits_before_the_detector_forgets(monkeypatch, optimizer):
    """The error of stale searched weights rises on the second part; the detector asks the
    learner to search the rows before the rise again, judges the rows after it with the refitted
    weights, and forgets nothing (before this, FNB and SGCF forgot all but the last few hundred
    rows, where VNS, stepping on every batch, detects nothing). The first part ends just after
    the scheduled search at about row 1,540 (the learner is stepped each time the window has
    grown by half, and searches when its rows have doubled since the last search): the next one
    is due near row 3,050, so the rise between comes before it."""
    calls = spy_forget(monkeypatch)
    refits = []
    original = core.Engine._refit
    monkeypatch.setattr(core.Engine, "_refit", lambda self, since: refits.append(self.history.stored) or original(self, since))
    model = WeightedNaiveBayes(optimizer=optimizer(), seed=1)
    for x, y in stale_rows(1550, 1200, 0.5):
        model.learn_one(x, y)
    model._check()
    assert refits, "the error rose: the detector should have asked for a refit"
    assert calls == [] and model.changes_detected == 0
    assert model.weights["A"] > 0 and model.weights["B"] > 0
    test = stale_rows(300, 600, 0.6, seed=5)
    hits = [max(p := model.predict_proba_one(x), key=p.get) == y for x, y in test]
    assert np.mean(hits) > 0.99


def test_a_batch_search_still_forgets_a_change_it_cannot_refit():
    """Labels flipped at the middle: no weights fit both halves, so the refitted model's error
    still rises and the model forgets; its accuracy over the last quarter is that of a model that
    forgets (as the default model's, above)."""
    n = 4000
    model = WeightedNaiveBayes(optimizer=weights.FNB(), seed=1)
    hits = []
    for x, y in sea_flip(n, 7):
        p = model.predict_proba_one(x)
        hits.append(bool(p) and max(p, key=p.get) == y)
        model.learn_one(x, y)
    assert model.changes_detected >= 1
    assert np.mean(hits[-n // 4 :]) > 0.85


# ---------------------------------------------------------------------- grouped streams (issue 33)
MEANS = np.array([[0.0, 0.0, 0.0, 0.0], [1.2, -0.8, 0.5, 0.0], [-1.0, 1.0, 0.8, 0.0]])  # (J, 4) class means


def gaussian_concept(n: int, rng, means=MEANS) -> list:
    y = rng.integers(len(means), size=n)
    X = rng.normal(size=(n, means.shape[1])) + means[y]
    return [({f"x{k}": float(v) for k, v in enumerate(row)}, "abc"[j]) for row, j in zip(X, y.tolist())]


def in_runs(rows: list, rng) -> list:
    """``rows`` regrouped in runs of 50 to 400 rows of one class (a file grouped by session)."""
    left = {label: [row for row in rows if row[1] == label] for label in "abc"}
    out = []
    while any(left.values()):
        label = rng.choice([label for label in "abc" if left[label]])
        size = int(rng.integers(50, 401))
        out += left[label][:size]
        left[label] = left[label][size:]
    return out


def holdout_accuracy(model, rows) -> float:
    return float(np.mean([model.predict_one(x) == y for x, y in rows]))


@pytest.mark.parametrize("order", ["sorted", "runs"])
def test_a_grouped_stream_of_one_concept_forgets_nothing(order):
    """Classes in runs, or sorted, are not a change of concept: the error rises at each new run,
    but not within the classes, so the model keeps what it learned and scores a shuffled
    hold-out as the model that never forgets (before the check: 2 or 3 changes, 0.51 and 0.36
    against 0.70)."""
    rng = np.random.default_rng(0)
    train, holdout = gaussian_concept(3000, rng), gaussian_concept(600, rng)
    rows = sorted(train, key=lambda row: row[1]) if order == "sorted" else in_runs(train, rng)
    on, off = (WeightedNaiveBayes(optimizer=weights.VNS(batch_size=50), history_size=1000, drift_delta=delta, seed=1) for delta in (0.002, None))
    for x, y in rows:
        on.learn_one(x, y)
        off.learn_one(x, y)
    assert on.changes_detected == 0
    assert holdout_accuracy(on, holdout) >= holdout_accuracy(off, holdout) - 0.01
    on._check()


def test_a_change_within_the_classes_of_a_grouped_stream_is_still_forgotten():
    """Runs of one class before and after a change of concept (the classes' means rotate): the
    error rises within the classes, so the model forgets, and scores the new concept better
    than the model that never forgets. (The check compares the classes of the newest rows with
    their older rows in the history: the history holds several runs of every class here.)"""
    rng = np.random.default_rng(1)
    rotated = MEANS[[2, 0, 1]]
    before, after = in_runs(gaussian_concept(2500, rng), rng), in_runs(gaussian_concept(2500, rng, rotated), rng)
    # (the models as they learned: catching up before the hold-out, docs/algorithms/prediction.md,
    # takes the model that never forgets from 0.418 to 0.493 here, and the other from 0.505 to 0.515)
    on, off = (WeightedNaiveBayes(optimizer=weights.VNS(batch_size=50), history_size=4000, drift_delta=delta, seed=1, catch_up=False)
               for delta in (0.002, None))  # fmt: skip
    for x, y in before + after:
        on.learn_one(x, y)
        off.learn_one(x, y)
    holdout = gaussian_concept(600, rng, rotated)
    assert on.changes_detected >= 1
    assert holdout_accuracy(on, holdout) > holdout_accuracy(off, holdout) + 0.05


def led_swap(n: int, seed: int) -> list:
    """LED digits (10 classes, 10 % noise, 17 irrelevant variables); at n // 2 the 7 relevant
    variables swap places, so every class's error rises a little at once."""
    before = synth.LEDDrift(noise_percentage=0.1, irrelevant_features=True, n_drift_features=0, seed=seed)
    after = synth.LEDDrift(noise_percentage=0.1, irrelevant_features=True, n_drift_features=7, seed=seed + 1)
    return list(itertools.islice(before, n // 2)) + list(itertools.islice(after, n // 2))


@pytest.mark.parametrize("seed", [3, 7])
def test_a_change_that_raises_every_class_a_little_is_forgotten(seed):
    """With 10 classes a check point holds about 25 newer rows per class: too few for any one
    class's rise to pass its share of δ, so the check within classes took the alarm back and the
    model stayed on the old concept (0.225 over the last quarter on seed 7, against 0.77 for a
    model that forgets). The classes' rises taken together pass."""
    n = 6000
    model = WeightedNaiveBayes(seed=1)
    hits = []
    for x, y in led_swap(n, seed):
        p = model.predict_proba_one(x)
        hits.append(bool(p) and max(p, key=p.get) == y)
        model.learn_one(x, y)
    assert model.changes_detected >= 1
    assert np.mean(hits[-n // 4 :]) > 0.7


def test_snapshot_restore_drop_newest_and_count_detected():
    monitor = Monitor(0.002)
    monitor.append(np.zeros(3 * BUCKET))
    before = monitor.snapshot()
    monitor.append(np.ones(2 * BUCKET))
    assert len(monitor.rows) == 5 and len(monitor) == 5 * BUCKET
    monitor.drop_newest(2)
    assert len(monitor) == 3 * BUCKET and monitor.errors.sum() == 0
    monitor.append(np.ones(BUCKET))
    monitor.count_detected(2)
    monitor.restore(before)
    assert len(monitor) == 3 * BUCKET and monitor.errors.sum() == 0 and monitor.detected == 0
    snapshot = monitor.snapshot()
    snapshot[0][0] = -1.0  # a snapshot is a copy: the monitor's buckets stay
    assert monitor.rows[0] == BUCKET
    monitor.count_detected(3)
    assert monitor.detected == 3
    monitor._check()
