"""One list of problems per learner: what the tests assert empty is what a load refuses.

Each weight learner states its invariants once, in ``problems()`` (``"field: what is wrong"``,
the record's field names). Here a trained learner's own state is damaged by hand, as a bug
would; ``problems()`` lists it, and a file of the damaged learner is refused with exactly that
first problem (or, where the schema's ranges already refuse the value, by the schema, naming
the same field).
"""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_weights import make_rows
from testkit import assert_listed_and_refused

from wnb_stream import io
from wnb_stream.weights import FNB, PGDMB, SGCF, SNB, VNS, Context, Direct, Graphical, Uniform

K, J = 8, 2


def _trained(model, steps: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    model.reset(K, J, seed=seed)
    history = make_rows(rng, 300, n_informative=3, n_noise=K - 3, n_classes=J)
    active = np.ones(K, dtype=bool)
    active[-1] = False  # one variable at Level 0: pinned at 0
    context = Context(np.full(K, np.log(K) + 1.0), active)
    for _ in range(steps):
        model.learn(make_rows(rng, 40, n_informative=3, n_noise=K - 3, n_classes=J), history, context)
    return model


MAKERS = {
    "Uniform": lambda: _trained(Uniform(), 2),
    "PGDMB": lambda: _trained(PGDMB(batch_size=40)),
    "VNS": lambda: _trained(VNS(batch_size=40, opti_level=0)),
    "FNB": lambda: _trained(FNB(batch_size=40, refine=PGDMB(batch_size=40))),
    "SNB": lambda: _trained(SNB(batch_size=40)),
    "Graphical": lambda: _trained(Graphical(), 3),
    "SGCF": lambda: _trained(SGCF(batch_size=40), 20),
    "Direct": lambda: _trained(Direct(batch_size=40, n_starts=2), 20),
    "PGDMB-unset": lambda: PGDMB(),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_sound_learner_lists_no_problem_before_and_after_a_round_trip(name):
    model = MAKERS[name]()
    assert model.problems() == []
    assert io.loads(io.dumps(model)).problems() == []


def _inactive_weight(name: str):
    def damage(model):
        array = getattr(model, name).copy()
        array[-1] = 1.0  # the inactive variable
        setattr(model, name, array)

    return damage


def _uniform_sizes(model):
    model._n_classes = -1


def _pgdmb_step(model):
    model._rprop.step[0] = model.step_max * 2.0


def _pgdmb_tolerance(model):
    model._descent.degradations = model.tolerance


def _vns_neighbourhood(model):
    model._neighbourhood = model.neighbourhood / 2.0


def _search_rows(model):
    model._rows_at_search = model._rows_seen + 1


def _snb_subset(model):
    model._subset = model._subset.copy()
    model._subset[0] = 0.5


def _fnb_refiner(model):
    model._refiner._best = model._refiner._best.copy()
    model._refiner._best[-1] = 1.0  # the refiner's inactive variable


def _graphical_moment(model):
    model._v_b = model._v_b.copy()
    model._v_b[0] = -1.0


def _unready_with_sizes(model):
    model._n_variables = 3


DAMAGES = {
    "Uniform: a negative size": ("Uniform", _uniform_sizes, "n_classes: must be >= 0"),
    "PGDMB: an inactive variable weighs": ("PGDMB", _inactive_weight("_best"), "run.best: holds a weight other than 0 for an inactive variable"),
    "PGDMB: a step beyond step_max": ("PGDMB", _pgdmb_step, "run.rprop.step: must lie in [step_min, step_max]"),
    "PGDMB: degradations at the tolerance": ("PGDMB", _pgdmb_tolerance, "run.descent.degradations: must be < tolerance"),
    "PGDMB: sizes without a run": ("PGDMB-unset", _unready_with_sizes, "run: a learner with sizes must have its run state"),
    "VNS: a neighbourhood below its parameter": ("VNS", _vns_neighbourhood, "session.neighbourhood: must be >= the parameter neighbourhood"),
    "FNB: searched after the rows seen": ("FNB", _search_rows, "run.searched_at: must be <= run.rows_seen"),
    "FNB: its refiner's inactive variable": ("FNB", _fnb_refiner, "run.refiner.run.best: holds a weight other than 0 for an inactive variable"),
    "SNB: a subset weight neither 0 nor 1": ("SNB", _snb_subset, "run.best: must hold 0/1 weights"),
    "SNB: an inactive variable weighs": ("SNB", _inactive_weight("_best"), "run.weights: holds a weight other than 0 for an inactive variable"),
    "SGCF: searched after the rows seen": ("SGCF", _search_rows, "run.rows_at_search: must be <= run.rows_seen"),
    "Direct: an inactive variable weighs": ("Direct", _inactive_weight("_best"), "run.best: holds a weight other than 0 for an inactive variable"),
    "Graphical: a negative second moment": ("Graphical", _graphical_moment, "run.v_b: Adam's second moments must be >= 0"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_broken_invariant_is_listed_and_refused_on_load_with_the_same_words(damage):
    name, change, expected = DAMAGES[damage]
    model = MAKERS[name]()
    change(model)
    # Uniform's and Graphical's schema ranges refuse the damage before the build, naming the field
    assert_listed_and_refused(model, expected, schema_first=name in ("Uniform", "Graphical"))
