"""A batch search's result as the start of a PGDMB or VNS learner (``refine``, HB24 §4.4).

Shared by the batch searches on the window (:class:`~.search.WindowSearch`): SGCF and Direct
(:class:`~.search.WarmSearch`) and FNB (:class:`~.selection.SelectionSearch`). Hue & Boullé (2024, §4.4) start a
local optimisation from the weights of a cheaper search ("the FNB initialization appears to be
the best trade-off"); here the local optimiser is a streaming learner. Design note
(docs/algorithms/weights.md#batch-searches):

- **Live copy.** ``reset`` clones the ``refine`` prototype and resets it with the search's seed;
  ``resize`` grows it with the search. It takes one step on every batch the search is given
  (``learn``), before and after the first hand-over, so it is an ordinary streaming learner
  whose restarts the search chooses.
- **Restart.** Each hand-over (a search result the search keeps) becomes the refiner's w* and
  the start of its next descent, weights below the refiner's ``zero_threshold`` set to 0 (its
  own sparsification). Nothing else of its state moves: its counters, its Rprop steps of the
  descent it leaves and, for VNS, its session and neighbourhood go on.
- **Prediction.** ``weights``, ``scores``, ``coefficients`` and ``sync`` are the refiner's; the
  search's own result stays in its state (saved, and the start of its next warm start).
- ``refine`` and ``max_variables`` cannot be combined: PGDMB and VNS know no variable budget,
  and the first step would break the budget the search kept.
"""

from __future__ import annotations

import numpy as np

from .base import Batch, Context, VectorWeights
from .pgdmb import PGDMB

__all__ = ["Refinable"]


class Refinable(VectorWeights):
    """A search whose hand-overs may restart a PGDMB or VNS learner (see the module's note).

    Subclasses with a ``refine`` parameter call ``_check_refine`` in ``__init__``, ``_reset_refiner``
    in ``reset``, ``_resize_refiner`` in ``resize``, ``_step_refiner`` at the end of ``learn``
    and ``_restart_refiner`` at each hand-over; ``weights`` and the prediction's weights are
    ``_refiner``'s when it is not None. A subclass without the parameter never refines.
    """

    refine: PGDMB | None = None
    _refiner: PGDMB | None = None

    def _check_refine(self) -> None:
        """``ValueError`` naming ``refine`` unless it is None or a PGDMB (VNS included) and the
        variable budget is off."""
        if self.refine is not None and not isinstance(self.refine, PGDMB):
            raise ValueError(f"refine must be None or a PGDMB or VNS learner, got {self.refine!r}")
        if self.refine is not None and self.max_variables is not None:
            raise ValueError("refine and max_variables cannot be combined (PGDMB and VNS know no variable budget)")

    def _reset_refiner(self, n_variables: int, n_classes: int, seed: int | None) -> None:
        """A fresh live copy of ``refine`` (None without it), reset with the search's seed."""
        self._refiner = None
        if self.refine is not None:
            self._refiner = self.refine.clone()
            self._refiner.reset(n_variables, n_classes, seed)

    def _resize_refiner(self) -> None:
        if self._refiner is not None:
            self._refiner.resize(self._n_variables, self._n_classes)

    def _step_refiner(self, batch: Batch, history: Batch, context: Context | None) -> None:
        """The refiner's own step on the arriving batch (nothing without ``refine``)."""
        if self._refiner is not None:
            self._refiner.learn(batch, history, context)

    def sync(self, context: Context) -> None:
        """The refiner's ``sync`` (it predicts); the search's own result waits for its next search."""
        if self._refiner is not None:
            self._refiner.sync(context)

    def _restart_refiner(self, weights: np.ndarray) -> None:
        """The refiner's w* and its next descent start from ``weights`` (HB24 §4.4); O(K)."""
        refiner = self._refiner
        if refiner is None:
            return
        start = np.array(weights, dtype=float)
        start[(start > 0) & (start < refiner.zero_threshold)] = 0.0  # PGDMB's sparsification
        refiner._best = start.copy()
        refiner._incumbent_is_nb = False
        refiner._start_descent(start, from_best=True)

    def _ready_to_refit(self, history: Batch) -> bool:
        """Whether ``refit`` can search ``history`` now (reset, and a window holding some weight),
        the learner grown first to the window's variables and classes."""
        if not self._ready or not len(history) or not float(np.sum(history.sample_weight)) > 0:
            return False
        n_variables, n_classes = history.log_lik.shape[1], history.log_lik.shape[2]
        if n_variables > self._n_variables or n_classes > self._n_classes:
            self.resize(n_variables, n_classes)
        return True
