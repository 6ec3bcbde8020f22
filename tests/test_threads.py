"""A model shared between threads: one call at a time (the model's lock), and a save while
another thread learns writes a consistent snapshot (issue 33, item 7)."""

from __future__ import annotations

import copy
import itertools
import pickle
import threading
import time

import pytest
from river import datasets

from wnb_stream import WeightedNaiveBayes, io, weights

ROWS = list(itertools.islice(datasets.Phishing(), 600))


def test_a_call_waits_while_another_thread_holds_the_model():
    model = WeightedNaiveBayes(optimizer=weights.Uniform(), seed=1)
    x, y = ROWS[0]
    done = threading.Event()

    def learn():
        model.learn_one(x, y)
        done.set()

    with model.lock:
        thread = threading.Thread(target=learn)
        thread.start()
        assert not done.wait(0.2)  # it waits for the lock
        assert model.n_seen == 0  # (the lock is re-entrant: this thread may read)
    thread.join(120)  # (a first learn_one may compile kernels: slow on a busy machine)
    assert done.is_set() and model.n_seen == 1
    answers = []  # the same for a prediction
    with model.lock:
        thread = threading.Thread(target=lambda: answers.append(model.predict_proba_one(x)))
        thread.start()
        time.sleep(0.2)
        assert not answers
    thread.join(120)
    assert answers == [model.predict_proba_one(x)]


@pytest.mark.parametrize("optimizer", [weights.Uniform(), weights.VNS(batch_size=50)], ids=["Uniform", "VNS"])
def test_two_threads_learn_one_model_while_a_third_saves_it(tmp_path, optimizer):
    model = WeightedNaiveBayes(optimizer=optimizer, history_size=200, seed=1)
    failures = []

    def learn(part):
        try:
            for i, (x, y) in enumerate(part):
                model.learn_one(x, y)
                if i % 50 == 0:
                    model.predict_proba_one(x)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    def learn_batches(part):
        try:
            for start in range(0, len(part), 25):
                chunk = part[start : start + 25]
                model.learn_many([x for x, _ in chunk], [y for _, y in chunk])
        except Exception as error:  # noqa: BLE001
            failures.append(error)

    threads = [threading.Thread(target=learn, args=(ROWS[0::2],)), threading.Thread(target=learn_batches, args=(ROWS[1::2],))]
    for thread in threads:
        thread.start()
    saved = []
    while any(thread.is_alive() for thread in threads) or not saved:
        path = tmp_path / f"model-{len(saved)}.wnb"
        model.save(path)
        saved.append(path)
        time.sleep(0.001)
    for thread in threads:
        thread.join()
    assert not failures
    assert model.n_seen == len(ROWS)
    model._check()
    seen = [WeightedNaiveBayes.load(path).n_seen for path in saved]  # every file loads (and passes its checks)
    assert seen == sorted(seen) and seen[-1] <= len(ROWS)


def test_a_copy_has_its_own_lock_and_the_same_model():
    model = WeightedNaiveBayes(optimizer=weights.Uniform(), seed=1)
    for x, y in ROWS[:50]:
        model.learn_one(x, y)
    for other in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model), WeightedNaiveBayes.from_dict(model.to_dict())):
        assert other.lock is not model.lock
        assert io.dumps(other) == io.dumps(model)
        with model.lock:  # another model's lock is not this one's
            other.learn_one(*ROWS[50])


def test_threads_predicting_with_one_predictor_get_its_answers():
    """A ``Predictor`` is shared for predictions in parallel: only its parse cache changes, and
    every thread gets the probabilities one thread gets."""
    model = WeightedNaiveBayes(seed=1)
    for x, y in ROWS[:300]:
        model.learn_one(x, y)
    predictor = model.predictor()
    probes = [x for x, _ in ROWS[300:]]
    expected = [predictor.predict_proba_one(x) for x in probes]
    found, failures = {}, []

    def predict(t):
        try:
            found[t] = [predictor.predict_proba_one(x) for x in (probes if t % 2 else probes[::-1])]
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=predict, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    for t, answers in found.items():
        assert answers == (expected if t % 2 else expected[::-1])


@pytest.mark.parametrize("threads", [2, 3])
def test_a_rebuild_run_in_threads_computes_what_one_thread_computes(monkeypatch, threads):
    """A large rebuild runs its compiled pieces in threads (``wnb_stream._threads``: the window's
    re-encoding by rows, the MODL searches by groups of variables). Forced on every rebuild here,
    on any number of cores, the window and every prediction are those of one thread, bit for bit;
    and two models rebuilding in two threads at once share the pool without harm."""
    import numpy as np

    from wnb_stream import _threads
    from wnb_stream.engine import core
    from wnb_stream.modl import batch

    rows = list(itertools.islice(datasets.synth.RandomRBF(seed_model=3, seed_sample=3, n_features=30, n_classes=3), 700))

    def trained():
        model = WeightedNaiveBayes(seed=1)
        answers = []
        for x, y in rows:
            answers.append(model.predict_proba_one(x))
            model.learn_one(x, y)
        return model, answers

    alone, expected = trained()
    monkeypatch.setattr(core, "PARALLEL_CELLS", 0)
    monkeypatch.setattr(batch, "PARALLEL_ATOMS", 0)
    monkeypatch.setattr(_threads, "cores", lambda: threads)
    found = [None, None]

    def run(i):
        found[i] = trained()

    pair = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in pair:
        thread.start()
    for thread in pair:
        thread.join()
    for model, answers in found:
        assert answers == expected
        assert np.array_equal(model._engine.history.log_lik, alone._engine.history.log_lik)
        assert io.dumps(model) == io.dumps(alone)


def test_the_threads_follow_the_cores_and_the_environment_caps_them(monkeypatch):
    """One thread per core the process may run on, at most ``WNB_STREAM_THREADS``; a value that is
    not a positive integer is ignored; with one, the pieces run in the calling thread."""
    import os

    from wnb_stream import _threads

    monkeypatch.delenv("WNB_STREAM_THREADS", raising=False)
    free = _threads.cores()
    assert free == len(os.sched_getaffinity(0))
    for value, expected in (("1", 1), ("0", free), ("many", free), ("-3", free), (str(free + 5), free)):
        monkeypatch.setenv("WNB_STREAM_THREADS", value)
        assert _threads.cores() == expected
    monkeypatch.setenv("WNB_STREAM_THREADS", "1")
    where = _threads.run_all([threading.get_ident, threading.get_ident])
    assert where == [threading.get_ident()] * 2
    assert _threads.spans(7, 3) == [(0, 2), (2, 4), (4, 7)]
