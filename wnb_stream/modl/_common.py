"""Helpers shared by discretization and grouping: option checks, Level, B(X)."""

from __future__ import annotations

import math

import numpy as np

from .._checks import real
from .costs import data_costs
from .partition import COST_TOLERANCE, METHODS

#: Level below which a variable counts as uninformative (Khiops ``ComputeLevel``,
#: docs/algorithms/modl.md#level-and-prior-cost).
LEVEL_TOLERANCE = 1e-6

# Criteria whose cost starts with log 2 for the choice null / informative model (Khiops forms);
# that bit is common to every model of the variable, so it is no part of B(X).
_KHIOPS_FORMS = ("bins", "khiops")


def check_options(criterion: str, criteria: tuple, method: str, selection_cost) -> None:
    """Validate the keyword options of ``discretize`` / ``group`` (ValueError naming the option)."""
    if criterion not in criteria:
        raise ValueError(f"criterion must be one of {criteria}, got {criterion!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if type(selection_cost) is float and 0.0 <= selection_cost < math.inf:
        return  # the usual argument (a finite float ≥ 0) without the slower checks below
    real(selection_cost, "selection_cost", low=0, finite=True, what="a finite number")


def observed_columns(counts: np.ndarray) -> np.ndarray:
    """Indices of the class columns with a positive total: J in the costs counts these only."""
    return np.flatnonzero(np.asarray(counts).sum(axis=0) > 0)


def is_informative(cost: float, null_cost: float) -> bool:
    """True when a model beats the null model by more than the tolerances.

    docs/algorithms/modl.md#comparing-costs
    """
    return cost < null_cost - COST_TOLERANCE and 1.0 - cost / null_cost >= LEVEL_TOLERANCE


_BELOW_ONE = math.nextafter(1.0, 0.0)


def level(cost: float, null_cost: float, n_parts: int) -> float:
    """Level = 1 − c(M*)/c(M0), 0 for the null model or a level below 1e-6.

    docs/algorithms/modl.md#level-and-prior-cost
    """
    if n_parts <= 1 or null_cost <= 0:
        return 0.0
    value = 1.0 - cost / null_cost
    # c(M*) > 0, so the Level is below 1; it rounds to 1.0 when c(M*) < 1e-16·c(M0) (counts near
    # the float range's end, from huge sample weights): kept at the largest float below 1
    return min(value, _BELOW_ONE) if value >= LEVEL_TOLERANCE else 0.0


def null_construction_cost(criterion: str) -> float:
    """Construction cost of the null model: log 2 for the Khiops forms of the criterion, else 0.

    docs/algorithms/modl.md#level-and-prior-cost
    """
    return math.log(2.0) if criterion in _KHIOPS_FORMS else 0.0


def prior_cost(part_counts: np.ndarray, cost: float, criterion: str) -> float:
    """B(X) = (construction − null construction) + preparation = c(M) − data − null construction.

    docs/algorithms/modl.md#level-and-prior-cost (Khiops ``ComputeSelectionModelAttributeCost``):
    data = Σ_i (log N_i! − Σ_j log N_ij!); the null construction cost is log 2 for the Khiops forms
    of the criterion and 0 for the paper forms, whose priors have no null/informative bit. For an
    informative model this is c_sel + preparation cost; for the null model, log C(N + J − 1, J − 1)
    (+ log N or log V for the paper forms).
    """
    value = cost - float(data_costs(part_counts).sum()) - null_construction_cost(criterion)
    return max(value, 0.0)
