"""The engine behind ``WeightedNaiveBayes``: the parts that hold a model's state, each tested alone.

- ``rows``: one path that validates and codes input (a dict or a DataFrame), changing nothing;
- ``classes``: class labels, the prior's counts and the per-class rebuild thresholds;
- ``registry``: the variables (``Variable``: summary, level 2, locator) and their per-variable
  columns (rebuild schedule, history column, feed state);
- ``schedule``: when level 2 is rebuilt, when the learner steps, where mini-batches are cut;
- ``lookup``: level 2 of all variables compiled into stacked arrays for the hot paths;
- ``params.Params``: the engine's settings, one frozen value;
- ``core.Engine``: the order in which a row or a chunk goes through them (its mini-batch path,
  memory budget and forgetting kept beside it: ``batches``, ``budget``, ``forgetting``);
- ``merge``: plain functions that merge two models' parts (``merge.merged``: two engines into one).
"""

from .core import Engine
from .params import Params

__all__ = ["Engine", "Params"]
