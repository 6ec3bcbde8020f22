"""The engine's parameters: one frozen value, checked by the classifier before it is built.

``WeightedNaiveBayes`` checks its parameters once (``_classifier_params.check``) and hands the
engine this value, the parts a None stands for already in place; the engine and every engine
built like it (``Engine.blank``, a merge, a loaded model) read their settings here and nowhere
else.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Params"]


@dataclasses.dataclass(frozen=True, slots=True)
class Params:
    """The settings of an engine.

    Parameters
    ----------
    numeric, categorical
        Summary prototypes, cloned for each new variable.
    optimizer
        The weight learner's prototype: each engine learns with a fresh clone of it, reset
        (``learner``).
    history_size, batch_size, rebuild_growth, rebuild_every, on_type_change, drift_delta, half_life, seed
        As ``WeightedNaiveBayes``'s parameters (``rebuild_every`` is its ``rebuild_every_rows``).
    absent
        None: a feature absent from a row is missing (it contributes nothing). A number: an absent
        numeric feature holds that value (``docs/algorithms/summaries.md#absent-features``); the
        summaries never see it, level 2 adds its mass from the class counts, and rows are scored
        and encoded in proportion to their other entries.
    memory_budget
        None, or bytes: at every check point (``drift.EVERY`` rows) the history window is cut to
        the most recent rows that keep ``memory_usage()`` within it (never below ``MIN_WINDOW``
        rows), then variables outside level 3 are evicted (``Engine.keep_budget``;
        ``docs/algorithms/prediction.md#memory-budget``).

    >>> from wnb_stream import summaries, weights
    >>> params = Params(summaries.Gaussian(), summaries.Categorical(), weights.Uniform(), 100, None, 0.5, 1000, "raise")
    >>> params.history_size, params.drift_delta, params.learner().__class__.__name__
    (100, None, 'Uniform')
    """

    numeric: object
    categorical: object
    optimizer: object
    history_size: int
    batch_size: int | None
    rebuild_growth: float
    rebuild_every: int
    on_type_change: str
    drift_delta: float | None = None
    half_life: float | None = None
    seed: int | None = None
    absent: float | None = None
    memory_budget: int | None = None
    catch_up: bool = False

    def learner(self):
        """A fresh weight learner: a clone of ``optimizer``, reset with ``seed`` (no variable, no class yet)."""
        learner = self.optimizer.clone()
        learner.reset(0, 0, self.seed)
        return learner
