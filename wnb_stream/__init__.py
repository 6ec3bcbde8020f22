"""wnb_stream — weighted naive Bayes for data streams (River classifiers).

>>> from wnb_stream import WeightedNaiveBayes, summaries, weights
"""

from . import modl, summaries, weights
from .classifier import WeightedNaiveBayes
from .serving import Delta, Predictor

__version__ = "0.1.0"

__all__ = ["Delta", "Predictor", "WeightedNaiveBayes", "modl", "summaries", "weights", "__version__"]
