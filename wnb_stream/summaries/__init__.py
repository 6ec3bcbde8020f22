"""Level 1: per-variable stream summaries with class counts (bounded memory, mergeable).

``base.Summary`` states the contract every summary keeps, ``policy`` the input policy they share;
the tables they hand to level 2 live in ``wnb_stream.tables`` and are re-exported here.
"""

from ..tables import Bins, Categories, ClassIndex, Moments
from .base import Summary
from .categorical import Categorical
from .cpid import CPiD
from .gaussian import Gaussian
from .gk import GKClass

__all__ = [
    "Bins",
    "Categorical",
    "Categories",
    "ClassIndex",
    "CPiD",
    "Gaussian",
    "GKClass",
    "Moments",
    "Summary",
]
