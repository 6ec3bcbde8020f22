"""Level 1: per-variable stream summaries with class counts (bounded memory, mergeable)."""

from .base import Bins, Categories, ClassIndex, Moments, Summary
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
