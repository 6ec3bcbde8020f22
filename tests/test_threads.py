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
