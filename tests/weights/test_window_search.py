"""One base for the batch searches on the window (weights/search.py): FNB, SNB, SGCF and Direct
share its state, under one set of names, its first-search rule and its protocol."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_weights import context_for, make_rows

from wnb_stream import io
from wnb_stream.weights import FNB, SGCF, SNB, Direct
from wnb_stream.weights import search as search_module
from wnb_stream.weights import selection as selection_module

SEARCHES = [FNB, SNB, SGCF, Direct]
#: The state every window search holds (WindowSearch.reset).
SHARED = ("_best", "_incumbent_is_nb", "_active", "_rng", "_rows_seen", "_rows_at_search", "_searches", "_refiner")


def test_every_window_search_has_the_one_base_and_one_first_search_rule():
    for cls in SEARCHES:
        assert issubclass(cls, search_module.WindowSearch), cls.__name__
        assert cls.FIRST_SEARCH == search_module.FIRST_SEARCH == 32
        defined = [klass.__qualname__ for klass in cls.__mro__ if "FIRST_SEARCH" in vars(klass)]
        assert defined == ["WindowSearch"], defined  # one rule, in the base
    assert getattr(selection_module, "WindowSearch", None) is search_module.WindowSearch  # no second base


@pytest.mark.parametrize("cls", SEARCHES, ids=lambda cls: cls.__name__)
def test_the_shared_state_has_one_set_of_names_and_one_first_search(cls):
    model = cls(batch_size=8)
    model.reset(6, 2, seed=3)
    rng = np.random.default_rng(4)
    window = make_rows(rng, 200, n_informative=2, n_noise=4)
    first = make_rows(rng, cls.FIRST_SEARCH - 1, n_informative=2, n_noise=4)
    model.learn(first, window, context_for(6))
    assert all(hasattr(model, name) for name in SHARED)
    assert model.n_searches == 0 and model._incumbent_is_nb and model.weights.tolist() == [1.0] * 6
    assert model._rows_seen == cls.FIRST_SEARCH - 1 and model._rows_at_search == 0
    model.learn(make_rows(rng, 1, n_informative=2, n_noise=4), window, context_for(6))
    assert model.n_searches == 1 and model._rows_at_search == model._rows_seen == cls.FIRST_SEARCH
    assert model.weights.tolist() == model._best.tolist() != [1.0] * 6
    assert not model.problems()
    model.resize(7, 2)  # a variable that appears after a hand-over: 0 in w*
    assert model._best[-1] == (1.0 if model._incumbent_is_nb else 0.0)
    back = io.loads(io.dumps(model))  # the saved fields keep their names; the state comes back whole
    for name in SHARED:
        found, expected = getattr(back, name), getattr(model, name)
        if isinstance(expected, np.ndarray):
            assert np.array_equal(found, expected), name
        elif name != "_rng":
            assert found == expected, name
    assert io.dumps(back) == io.dumps(model)
