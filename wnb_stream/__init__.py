"""wnb_stream — weighted naive Bayes for data streams (River classifiers)."""

__version__ = "0.1.0"
