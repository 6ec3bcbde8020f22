"""``engine.core.clones``: the fresh summaries of new variables, as River's ``clone`` makes them."""

from __future__ import annotations

import pickle

from river import base as river_base

from wnb_stream import summaries
from wnb_stream.engine.core import clones

PROTOTYPES = [
    summaries.GKClass(),
    summaries.GKClass(epsilon=0.02, buffer_size=7),
    summaries.GKClass(max_tuples=40),
    summaries.CPiD(),
    summaries.Gaussian(),
    summaries.Categorical(),
]


def state(summary) -> bytes:
    return pickle.dumps((type(summary), summary.__dict__))


def test_clones_are_what_clone_makes():
    for prototype in PROTOTYPES:
        for n in (0, 1, 3):
            made = clones(prototype, n)
            assert len(made) == n and len({id(s) for s in made}) == n
            for summary in made:
                assert summary is not prototype and state(summary) == state(prototype.clone())
                assert summary._get_params() == prototype._get_params()


class Tagged(summaries.GKClass):
    """A summary class with a parameter that is not an atom (``clone`` deep-copies it)."""

    def __init__(self, tags: list | None = None, epsilon: float | None = None):
        super().__init__(epsilon=epsilon)
        self.tags = tags


class OwnParams(summaries.GKClass):
    """A class that reads its parameters its own way: ``clone`` is what counts."""

    def _get_params(self) -> dict:
        return {"epsilon": 0.2}


def test_clones_fall_back_on_clone_where_the_parameters_need_it():
    tags = ["a"]
    made = clones(Tagged(tags=tags, epsilon=0.05), 2)
    assert [s.tags for s in made] == [["a"], ["a"]] and all(s.tags is not tags for s in made)  # deep copies
    assert [s.epsilon for s in made] == [0.05, 0.05]
    assert [s.epsilon for s in clones(OwnParams(epsilon=0.01), 2)] == [0.2, 0.2]
    assert river_base.Base.clone is summaries.GKClass.clone  # (the fast path's premise)
