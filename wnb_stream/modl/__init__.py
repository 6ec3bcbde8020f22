"""Level 2: MODL discretization and value grouping.

``discretize(table)`` turns a level-1 ``Bins`` value into ``Intervals`` (``discretize_many(tables)``
does many at once, with the same results) and ``group(table)`` turns
a ``Categories`` value into ``Groups`` (docs/algorithms/modl.md); ``null_partition(table)`` gives
the one-part model of either. Cost terms are pure functions in ``modl.costs``.
"""

from . import costs
from .batch import discretize_many
from .discretization import discretization_prior, discretize, null_intervals, null_proven
from .grouping import EXHAUSTIVE_MAX_VALUES, group, grouping_prior, null_groups
from .partition import MISSING, STAR, Groups, Intervals, log_probabilities
from .search import EXACT_MAX_ATOMS

__all__ = [
    "costs",
    "discretize",
    "discretize_many",
    "group",
    "null_partition",
    "null_proven",
    "Intervals",
    "Groups",
    "STAR",
    "MISSING",
    "log_probabilities",
    "discretization_prior",
    "grouping_prior",
    "EXACT_MAX_ATOMS",
    "EXHAUSTIVE_MAX_VALUES",
]


def null_partition(table, *, criterion: str | None = None, selection_cost: float = 0.0):
    """The one-part model of a ``Bins`` or ``Categories`` table (before a rebuild is worthwhile).

    Same as ``discretize(table, method="null")`` or ``group(table, method="null")``; ``criterion``
    defaults to each entry point's default.

    >>> from wnb_stream.summaries import Bins
    >>> table = Bins(upper_bounds=[1.0, 2.0], counts=[[3, 1], [0, 4]], classes=(0, 1), missing=[0, 0])
    >>> partition = null_partition(table)
    >>> partition.n_parts, partition.level, round(partition.cost, 6) == round(partition.null_cost, 6)
    (1, 0.0, True)
    """
    from ..tables import Bins, Categories

    if isinstance(table, Bins):
        return null_intervals(table, criterion=criterion or "bins", selection_cost=selection_cost)
    if isinstance(table, Categories):
        return null_groups(table, criterion=criterion or "khiops", selection_cost=selection_cost)
    raise TypeError(f"table must be a Bins or Categories value, got {type(table).__name__}")
