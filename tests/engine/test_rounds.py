"""Rounds of training on partitions (``merge.absorbed``, ``Delta``, ``WeightedNaiveBayes.absorb``).

What is exact is compared with one model fed every partition's rows (class counts,
observations, categorical counts; Gaussian moments up to rounding); the window keeps the newest
rows, the deltas' first; rounds associate; a refused delta changes nothing; a delta learns in
bulk as it does row by row and costs no level-2 or level-3 work.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from merge_cases import EXACT, assert_counts_equal, by_class, categories, fed, fit, stream
from profiles import examples

from wnb_stream import Delta, WeightedNaiveBayes, io, summaries, weights
from wnb_stream.engine import merge


def deltas_of(model, parts) -> list[Delta]:
    out = []
    for rows in parts:
        delta = model.delta()
        for x, y in rows:
            delta.learn_one(x, y)
        out.append(delta)
    return out


def test_one_round_counts_as_one_model_fed_every_partition():
    base_rows, a_rows, b_rows = stream(1, 200), stream(2, 300), stream(3, 150)
    model = fit(base_rows, **EXACT)
    model.absorb(deltas_of(model, [a_rows, b_rows]))
    model._check()
    assert_counts_equal(model, fed(fit(base_rows + a_rows + b_rows, **EXACT)))
    assert model.n_seen == model._engine.history.stored == 650


def test_rounds_associate_and_the_order_of_partitions_does_not_matter_for_counts():
    parts = [stream(seed, 120, labels=labels, features=features) for seed, labels, features in
             ((2, ("a", "b", "c"), ("u", "v", "colour")), (3, ("c", "b", "a"), ("colour", "v", "u")), (4, ("b", "a", "c"), ("v", "colour", "u")))]  # fmt: skip
    one = fit(stream(1, 100), **EXACT)
    one.absorb(deltas_of(one, parts))
    two = fit(stream(1, 100), **EXACT)
    for rows in parts:
        two.absorb(deltas_of(two, [rows]))
    three = fit(stream(1, 100), **EXACT)
    three.absorb(deltas_of(three, parts[::-1]))
    for model in (two, three):
        model._check()
        assert by_class(model) == by_class(one)
        assert categories(model, "colour") == categories(one, "colour")


def test_the_window_keeps_the_newest_rows_the_deltas_first():
    base_rows, a_rows, b_rows = stream(1, 500), stream(2, 30), stream(3, 90)
    model = fit(base_rows, history_size=100, **EXACT)
    model.absorb(deltas_of(model, [a_rows, b_rows]))
    e = model._engine
    held = e.history.numeric[e.history.order(), e.registry.column[e.registry.index["u"]]].tolist()
    assert len(held) == 100
    # every delta row (30 + 70 newest of b, sharing 100 equally with water-filling) ... and no base row
    assert sorted(held) == sorted([x["u"] for x, _ in a_rows] + [x["u"] for x, _ in b_rows[-70:]])
    small = fit(base_rows, history_size=100, **EXACT)
    small.absorb(deltas_of(small, [a_rows[:10]]))
    held = small._engine.history.numeric[small._engine.history.order(), 0].tolist()
    assert held[:90] == [x["u"] for x, _ in base_rows[-90:]] and held[90:] == [x["u"] for x, _ in a_rows[:10]]
    assert merge.window_sizes((10, 500, 500), 100) == (10, 45, 45)


@settings(max_examples=examples(60), deadline=None)
@given(sizes=st.lists(st.integers(0, 300), max_size=5), capacity=st.integers(1, 400))
def test_window_sizes_fill_the_window_fairly(sizes, capacity):
    taken = merge.window_sizes(sizes, capacity)
    assert sum(taken) == min(capacity, sum(sizes))
    assert all(0 <= t <= s for t, s in zip(taken, sizes))
    # a side short of its share takes all it has; the others differ by at most one row
    full = [t for t, s in zip(taken, sizes) if t < s]
    assert not full or max(full) - min(full) <= 1
    assert all(t >= max(full, default=0) - 1 or t == s for t, s in zip(taken, sizes))


def test_a_delta_learns_in_bulk_as_row_by_row_and_does_no_level_2_work():
    import pandas as pd

    model = WeightedNaiveBayes(seed=1)
    rows = stream(5, 400)
    one, many = model.delta(), model.delta()
    for x, y in rows:
        one.learn_one(x, y)
    many.learn_many(pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows]))
    for delta in (one, many):
        e = delta._engine
        assert delta.n_seen == 400
        assert all(v.model is None for v in e.registry.variables)  # never rebuilt
        assert e.history.log_lik.size == 0  # never encoded
    a, b = WeightedNaiveBayes(seed=1), WeightedNaiveBayes(seed=1)
    a.absorb([one])
    b.absorb([many])
    assert io.dumps(a) == io.dumps(b)


def test_refused_deltas_change_nothing():
    model = fit(stream(1, 100))
    before = io.dumps(model)
    other = WeightedNaiveBayes(numeric=summaries.Gaussian())
    with pytest.raises(ValueError, match="numeric"):
        model.absorb([other.delta()])
    kinds = model.delta()
    kinds.learn_one({"u": "high"}, "a")
    good = deltas_of(model, [stream(2, 50)])[0]
    with pytest.raises(ValueError, match="'u'"):
        model.absorb([good, kinds])
    with pytest.raises(TypeError):
        model.absorb([model])
    assert io.dumps(model) == before
    bad = model.delta()
    with pytest.raises(ValueError, match="w"):
        bad.learn_one({"u": 1.0}, "a", w=-1.0)
    assert bad.n_seen == 0


@pytest.mark.parametrize("absent", [None, 0.0])  # the dense window, and the sparse one (entries)
def test_the_absorbed_model_checks_saves_and_keeps_learning(absent):
    model = fit(stream(1, 300), optimizer=weights.VNS(batch_size=20), history_size=200, absent=absent)
    assert model._engine.history.sparse == (absent is not None)
    model.absorb(deltas_of(model, [stream(2, 150), stream(3, 150)]))
    model._check()
    assert model._engine.history.sparse == (absent is not None) and len(model._engine.history) == 200
    loaded = io.loads(io.dumps(model))
    for x, y in stream(4, 100):
        model.learn_one(x, y)
        loaded.learn_one(x, y)
    model._check()
    assert io.dumps(model) == io.dumps(loaded)


def test_fresh_deltas_are_empty_and_deltas_need_collecting_engines():
    model = WeightedNaiveBayes()
    delta = deltas_of(model, [stream(1, 20)])[0]
    assert delta.fresh().n_seen == 0 and delta.nbytes() > 0 and delta.memory_usage() > 0
    with pytest.raises(ValueError):
        Delta(model._engine)
    with pytest.raises(ValueError):
        merge.absorbed(model._engine, [model._engine])


def test_rounds_of_four_partitions_predict_as_one_model():
    from river import datasets

    rows = list(datasets.Phishing())
    train, held = rows[:1000], rows[1000:]
    whole = WeightedNaiveBayes(seed=1)
    for x, y in train:
        whole.learn_one(x, y)
    model = WeightedNaiveBayes(seed=1)
    for start in range(0, len(train), 200):  # rounds of 200 rows over 4 partitions
        chunk = train[start : start + 200]
        model.absorb(deltas_of(model, [chunk[p::4] for p in range(4)]))
    agree = np.mean([whole.predict_one(x) == model.predict_one(x) for x, _ in held])
    assert agree >= 0.97, agree


def window_of(model) -> tuple:
    """The window's rows, oldest first: labels, weights, and each feature's raw values by name."""
    e = model._engine
    h, registry, labels = e.history, e.registry, e.classes.labels
    rows = h.recent(h.size)
    values = {}
    for k, variable in enumerate(registry.variables):
        column, present = h.column(rows, k, int(registry.column[k]), numeric=variable.kind == "numeric")
        values[variable.name] = [repr(v) if p else "-" for v, p in zip(np.asarray(column).tolist(), present.tolist())]
    return [labels[j] for j in h.y[rows]], h.sample_weight[rows].tolist(), values


def tree_of(deltas: list[Delta]) -> Delta:
    """The deltas merged pairwise, as a tree: ((d0 + d1) + (d2 + d3)) + d4 …"""
    level = list(deltas)
    while len(level) > 1:
        pairs = []
        for i in range(0, len(level) - 1, 2):
            level[i].merge(level[i + 1])
            pairs.append(level[i])
        level = pairs + level[len(level) - len(level) % 2 :]
    return level[0]


@pytest.mark.parametrize("absent", [None, 0.0])  # the dense window, and the sparse one (entries)
def test_deltas_merged_in_a_tree_are_absorbed_as_one_by_one(absent):
    parts = [stream(seed, n, labels=labels, features=features) for seed, n, labels, features in
             ((2, 90, ("a", "b", "c"), ("u", "v", "colour")), (3, 140, ("c", "b", "a"), ("colour", "v", "u")),
              (4, 60, ("b", "a", "c"), ("v", "colour", "u")), (5, 100, ("a", "c", "b"), ("u", "colour", "v")),
              (6, 30, ("c", "a", "b"), ("v", "u", "colour")))]  # fmt: skip
    parts[2] = [({**x, "w": "new"}, y) for x, y in parts[2]]  # a feature only the third partition has
    for params in (EXACT, {}):  # Gaussian moments (exact up to rounding), and GK sketches
        one, tree = (fit(stream(1, 300), history_size=200, absent=absent, **params) for _ in range(2))
        deltas = deltas_of(one, parts)
        kept = [window_of_delta(delta) for delta in deltas]
        one.absorb(deltas)
        merged = tree_of(deltas_of(tree, parts))
        assert merged.n_seen == 420 and merged.blocks == (90, 140, 60, 100, 30)
        tree.absorb([merged])
        tree._check()
        assert [window_of_delta(delta) for delta in deltas] == kept  # (absorb changes no delta)
        # the same classes, features and counts in the same order, the same window row for row
        assert tree._engine.classes.labels == one._engine.classes.labels
        assert [v.name for v in tree._engine.registry.variables] == [v.name for v in one._engine.registry.variables]
        if params:
            assert_counts_equal(tree, one)
        else:  # (GK sketches merged in another grouping: their tuples may differ, within the bound)
            assert by_class(tree) == by_class(one) and categories(tree, "colour") == categories(one, "colour")
            assert tree._engine.registry.count.tolist() == one._engine.registry.count.tolist()
        assert window_of(tree) == window_of(one)


def read_only(delta: Delta) -> Delta:
    """``delta`` as Ray's object store hands it: a copy whose NumPy arrays are read-only (pickle
    protocol 5 with its buffers out of band, in immutable bytes)."""
    import pickle

    buffers = []
    data = pickle.dumps(delta, protocol=5, buffer_callback=buffers.append)
    return pickle.loads(data, buffers=[bytes(buffer.raw()) for buffer in buffers])


@pytest.mark.parametrize("flushed", [False, True])
def test_a_round_only_reads_its_deltas_and_runs_again_the_same(flushed):
    """A round and a merge of deltas change no delta: a settled one (``Delta.flush``, as a learner
    hands it over) is only read, even read-only, and another is copied. So the same deltas give
    the same model again, saved bytes and all, after the first model went on learning (nothing of
    theirs is shared with it: a feature only a delta has comes with a copy of its summary), as
    copies of the deltas made before anything would."""

    parts = [stream(seed, 80) for seed in (2, 3, 4)]
    parts[1] = [({**x, "w": x["u"] * 2.0}, y) for x, y in parts[1]]  # a feature only the second delta has
    model = fit(stream(1, 200))
    deltas = deltas_of(model, parts)
    if flushed:
        for delta in deltas:
            delta.flush()
        deltas = [read_only(delta) for delta in deltas]
        assert all(delta._engine.registry.settled(delta._engine.history) for delta in deltas)
    untouched = copy.deepcopy(deltas)
    first, again, reference = (copy.deepcopy(model) for _ in range(3))
    first.absorb(deltas)
    for x, y in stream(5, 60):
        first.learn_one({**x, "w": x["v"]}, y)
    first.absorb(deltas_of(first, [stream(6, 40)]))
    again.absorb(deltas)
    reference.absorb(untouched)
    assert io.dumps(again) == io.dumps(reference)
    # the tree: merging the same two deltas twice gives the same delta, and absorbs to the same model
    once, twice = copy.copy(deltas[0]), copy.copy(deltas[0])
    once.merge(deltas[1])
    twice.merge(deltas[1])
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    a.absorb([once])
    b.absorb([twice])
    assert io.dumps(a) == io.dumps(b)


def window_of_delta(delta: Delta) -> tuple:
    h = delta._engine.history
    return delta.n_seen, h.stored, h.y[h.recent(h.size)].tolist()


def test_a_model_of_categorical_features_absorbs_a_tree_of_deltas_bit_for_bit():
    """Categorical counts add up exactly in any grouping, so the model is the same, saved bytes and all."""
    parts = [[({"colour": x["colour"], "shade": str(round(x["u"]))}, y) for x, y in stream(seed, 150)] for seed in range(2, 7)]
    one, tree = (fit([({"colour": x["colour"], "shade": "0"}, y) for x, y in stream(1, 200)], history_size=300) for _ in range(2))
    one.absorb(deltas_of(one, parts))
    tree.absorb([tree_of(deltas_of(tree, parts))])
    assert io.dumps(tree) == io.dumps(one)


def test_a_merged_delta_refuses_what_would_break_its_blocks_and_a_feature_of_the_other_kind():
    model = fit(stream(1, 50), **EXACT)
    a, b = deltas_of(model, [stream(2, 40), stream(3, 40)])
    before = window_of_delta(a), a.blocks
    other = model.delta()
    other.learn_one({"u": "text"}, "a")  # u is numeric in a
    fresh = WeightedNaiveBayes().delta()
    fresh.learn_one({"brand-new": "x"}, "a")
    with pytest.raises(ValueError, match="feature 'u'"):
        a.merge(other)
    with pytest.raises(ValueError, match="numeric summary"):
        a.merge(fresh)  # (a model of other summaries)
    with pytest.raises(TypeError):
        a.merge(model)
    assert (window_of_delta(a), a.blocks) == before  # nothing changed
    a.merge(b)
    with pytest.raises(ValueError, match="learns nothing more"):
        a.learn_one({"u": 1.0}, "a")
    with pytest.raises(ValueError, match="cannot be trimmed"):
        a.trim(10)
    assert a.fresh().blocks is None and a.n_seen == 80


@pytest.mark.parametrize("flushed", [False, True])
def test_a_delta_merged_in_place_is_the_merge_without_the_copy(flushed):
    """GK sketches (whose tuples depend on the grouping): in place or on a copy, the same merged
    delta, absorbed to the same bytes; a refused merge in place changes nothing either."""
    parts = [stream(seed, n) for seed, n in ((2, 90), (3, 140), (4, 60), (5, 100))]
    parts[2] = [({**x, "w": "new"}, y) for x, y in parts[2]]  # a feature only the third partition has
    model = fit(stream(1, 300), history_size=200)
    deltas = deltas_of(model, parts)
    if flushed:
        for delta in deltas:
            delta.flush()
    copied, in_place = copy.deepcopy(deltas), copy.deepcopy(deltas)
    other = model.delta()
    other.learn_one({"u": "text"}, "a")  # u is numeric in the deltas
    before = io.dumps(absorbed_by(model, [in_place[0]]))
    with pytest.raises(ValueError, match="feature 'u'"):
        in_place[0].merge(other, in_place=True)
    assert io.dumps(absorbed_by(model, [in_place[0]])) == before  # nothing changed
    engines = [delta._engine for delta in in_place]
    for level in (copied, in_place):
        level[0].merge(level[1], in_place=level is in_place)
        level[2].merge(level[3], in_place=level is in_place)
        level[0].merge(level[2], in_place=level is in_place)
    assert in_place[0]._engine.registry is engines[0].registry  # its own parts, changed
    assert copied[0]._engine.registry is not deltas[0]._engine.registry
    assert io.dumps(absorbed_by(model, [in_place[0]])) == io.dumps(absorbed_by(model, [copied[0]]))


def absorbed_by(model, deltas: list[Delta]):
    model = copy.deepcopy(model)
    model.absorb(deltas)
    return model


def test_a_round_rebuilds_level_2_where_one_model_would_not_every_variable():
    """A round follows the rebuild schedule of one model counting the same rows: a few rows more
    rebuild nothing, a new feature gets its first partition, a new class or observations grown by
    ``rebuild_growth`` rebuild every variable. (Until this change every round rebuilt all.)"""
    model = fit(stream(1, 800))

    def level_2() -> dict:
        return {variable.name: variable.model for variable in model._engine.registry.variables}

    before = level_2()
    assert all(m is not None for m in before.values())
    model.absorb(deltas_of(model, [stream(2, 10), stream(3, 10)]))  # 20 rows on 800: nothing due
    assert model.n_seen == 820 and all(level_2()[name] is m for name, m in before.items())
    assert model._engine.registry.count.tolist() == [820.0] * 3  # counted all the same
    model.absorb(deltas_of(model, [[({**x, "w": x["u"] * 2.0}, y) for x, y in stream(4, 10)]]))
    after = level_2()
    assert after["w"] is not None and all(after[name] is m for name, m in before.items())  # only the new feature
    model.absorb(deltas_of(model, [stream(5, 10, labels=("a", "b", "d"))]))  # a new class: every variable
    rebuilt = level_2()
    assert all(rebuilt[name] is not after[name] for name in after)
    model.absorb(deltas_of(model, [stream(6, 300)]))  # grown by more than a quarter: every variable again
    assert all(level_2()[name] is not rebuilt[name] for name in rebuilt)
    model._check()


def test_a_round_keeps_the_weights_and_steps_once_on_the_deltas_rows():
    model = fit(stream(1, 600))
    learner = model._engine.optimizer
    steps, sessions, seen = learner.n_steps, learner.n_sessions, learner._rows_seen
    weights = dict(zip(model._engine.slots.variable.tolist(), learner.weights.tolist()))
    model.absorb(deltas_of(model, [stream(2, 20), stream(3, 20)]))
    learner = model._engine.optimizer
    # one step on the 40 rows absorbed, as on 40 rows learned: no restart, no replay session (the rows
    # have not grown by half); a restart from the initial weights would replay on the whole window
    assert (learner.n_steps, learner.n_sessions, learner._rows_seen) == (steps + 1, sessions, seen + 40)
    after = dict(zip(model._engine.slots.variable.tolist(), learner.iterate.tolist()))
    kept = [k for k in weights if k in after]
    assert kept and max(abs(after[k] - weights[k]) for k in kept) < 0.2  # one Rprop step from where it was
    model._check()


@pytest.mark.parametrize("rows", [20, 300])  # a step on the rows absorbed; and rows enough for a replay session and new rebuilds
def test_a_round_whose_step_is_left_for_later_is_the_round_once_stepped(rows):
    """``absorb(step=False)``: level 2 is that of the round at once, the weights those carried
    from before it; ``step_weights`` then makes the model of ``absorb`` bit for bit, once (the
    predictions between are queries: no catch-up)."""
    model = fit(stream(1, 600), catch_up=False)
    deltas = deltas_of(model, [stream(2, rows), stream(3, rows)])
    at_once, later = copy.deepcopy(model), copy.deepcopy(model)
    carried = later._engine.optimizer.n_steps
    at_once.absorb(deltas)
    later.absorb(deltas, step=False)
    assert later._engine.optimizer.n_steps == carried  # (not stepped yet)
    for a, b in zip(later._engine.registry.variables, at_once._engine.registry.variables):  # level 2 already the round's
        np.testing.assert_array_equal(a.model.log_prob, b.model.log_prob)
    x = [x for x, _ in stream(4, 30)]
    assert [later.predict_proba_one(row) for row in x] != [at_once.predict_proba_one(row) for row in x]
    assert later._engine._owes_encoding  # (the window is encoded by the step, off the round's critical path)
    assert later.step_weights() and not later.step_weights()  # the step it owed, once
    assert not later._engine._owes_encoding
    assert io.dumps(later) == io.dumps(at_once)
    assert [later.predict_proba_one(row) for row in x] == [at_once.predict_proba_one(row) for row in x]
    np.testing.assert_array_equal(later._engine.encoding(), at_once._engine.encoding())
    # a reader of the window before the step gets it encoded, and the step is the same
    read_first = copy.deepcopy(model)
    read_first.absorb(deltas, step=False)
    np.testing.assert_array_equal(read_first._engine.encoding(), at_once._engine.encoding())
    assert not read_first._engine._owes_encoding and read_first.step_weights()
    assert io.dumps(read_first) == io.dumps(at_once)


def test_a_merge_of_two_models_restarts_the_weights():
    a, b = fit(stream(1, 600)), fit(stream(2, 300))
    steps = a._engine.optimizer.n_steps
    a.merge(b)  # two models share no order of rows: the learner starts again, steps on the merged window and replays on it
    learner = a._engine.optimizer
    assert learner.n_steps < steps and learner._rows_seen == learner._replayed_at == len(a._engine.history)


@pytest.mark.parametrize("how", ["absorb", "merge", "tree"])
@pytest.mark.parametrize("fails", [False, True])
def test_a_merge_runs_without_the_cyclic_collector_and_restores_it(monkeypatch, how, fails):
    """Copies and merged summaries are many objects and no garbage: the collector is paused for
    the merge (``_gc.collector_paused``) and back as it was after it, an error included."""
    import gc

    model = fit(stream(3, 200))
    deltas = deltas_of(model, [stream(4, 40), stream(5, 40)])
    seen = []
    original = merge._copies

    def spy(engines, **options):
        seen.append(gc.isenabled())
        if fails:
            raise MemoryError("while copying")
        return original(engines, **options)

    monkeypatch.setattr(merge, "_copies", spy)
    for collector_on in (True, False):
        (gc.enable if collector_on else gc.disable)()
        try:
            run = {
                "absorb": lambda: model.absorb(deltas),
                "merge": lambda: model.merge(fit(stream(6, 50))),
                "tree": lambda: deltas[0].merge(deltas[1]),
            }[how]
            if fails:
                with pytest.raises(MemoryError):
                    run()
            else:
                run()
            assert gc.isenabled() is collector_on
        finally:
            gc.enable()
    assert seen and not any(seen)


@settings(max_examples=examples(20), deadline=None)
@given(
    rows=st.sampled_from([20, 300]),
    ops=st.lists(st.sampled_from(["learn", "read", "step", "forget", "drift"]), max_size=6),
    seed=st.integers(0, 2**16),
)
def test_an_owed_encoding_is_invisible_to_whatever_comes_next(rows, ops, seed):
    """After ``absorb(deltas, step=False)`` the window's encoding is owed (written by its first
    reader). Whatever follows (rows learned, rebuilds, the step, a read, forgetting, the change
    detector's check), the model is the one whose encoding was written at once, bit for bit."""
    model = fit(stream(1, 400), drift_delta=0.002)
    deltas = deltas_of(model, [stream(2, rows), stream(3, rows)])
    owed, written = copy.deepcopy(model), copy.deepcopy(model)
    owed.absorb(deltas, step=False)
    written.absorb(deltas, step=False)
    written._engine.settle_encoding()
    assert owed._engine._owes_encoding and not written._engine._owes_encoding
    chunks = [stream(seed + i, 40) for i in range(len(ops))]  # (rows enough to reach a rebuild and the step owed)
    for op, chunk in zip(ops, chunks):
        for m in (owed, written):
            if op == "learn":
                for x, y in chunk:
                    m.learn_one(x, y)
            elif op == "read":
                m._engine.encoding()
            elif op == "step":
                m.step_weights()
            elif op == "forget":
                m._engine.forget(len(m._engine.history) // 2)
            elif m._engine.monitor is not None:  # the change detector's check of the window
                m._engine._watch()
    assert io.dumps(owed) == io.dumps(written)
    np.testing.assert_array_equal(owed._engine.encoding(), written._engine.encoding())
    x = [x for x, _ in stream(seed + 99, 20)]
    assert [owed.predict_proba_one(row) for row in x] == [written.predict_proba_one(row) for row in x]
