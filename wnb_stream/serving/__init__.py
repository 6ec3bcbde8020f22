"""Serving and shipping a model's state.

- ``predictor``: ``Predictor``, what scoring needs of a model (level 2, weights and prior),
  without the learning state;
- ``delta``: ``Delta``, one partition's examples of a training round at level 1, handed to the
  model that absorbs it.
"""

from .delta import Delta
from .predictor import Predictor

__all__ = ["Delta", "Predictor"]
