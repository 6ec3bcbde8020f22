"""Level 3: variable weights of the weighted naive Bayes."""

from .base import Batch, Context, Optimizer

__all__ = ["Batch", "Context", "Optimizer"]
