"""Uniform weights: the plain naive Bayes (every w_k = 1, nothing to learn)."""

from __future__ import annotations

import numpy as np

from .._checks import integer
from ..io.registry import register
from ..io.schema import Fields, Int, Schema
from .base import Batch, Context, Optimizer, sized_from_record

__all__ = ["Uniform"]


class Uniform(Optimizer):
    """All weights 1: ``scores = log_prior + Σ_k ℓ_k``, the plain naive Bayes baseline.

    ``learn`` only records the sizes it sees. Cost of ``scores``: O(n·K·J).

    Parameters
    ----------
    batch_size
        Rows per ``learn`` call asked of the classifier. Nothing is learned from them, so a large
        value (default 1000) only spares the classifier needless calls.

    Examples
    --------
    >>> import numpy as np
    >>> from wnb_stream.weights import Uniform
    >>> model = Uniform()
    >>> model.reset(n_variables=2, n_classes=2)
    >>> log_lik = np.log([[[0.7, 0.2], [0.4, 0.5]]])        # (1, 2, 2)
    >>> model.scores(log_lik, np.log([0.6, 0.4])).round(4).tolist()
    [[-1.7838, -3.2189]]
    >>> model.weights.tolist()
    [1.0, 1.0]
    """

    outside_weight = 1.0  # every variable weighs 1

    def __init__(self, batch_size: int = 1000):
        integer(batch_size, "batch_size", low=1)
        self.batch_size = batch_size
        self._n_variables = 0
        self._n_classes = 0

    def reset(self, n_variables: int, n_classes: int, seed: int | None = None) -> None:
        """Record the sizes (no state to build)."""
        self._n_variables = int(n_variables)
        self._n_classes = int(n_classes)

    def resize(self, n_variables: int, n_classes: int) -> None:
        """Record the new sizes."""
        self._n_variables = max(self._n_variables, int(n_variables))
        self._n_classes = max(self._n_classes, int(n_classes))

    def learn(self, batch: Batch, history: Batch | None = None, context: Context | None = None) -> None:
        """Nothing to learn; the sizes follow the batch."""
        self.resize(batch.log_lik.shape[1], batch.log_lik.shape[2])

    def scores(self, log_lik: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
        """``(n, J)`` plain naive Bayes scores ``log_prior + Σ_k ℓ_k``; O(n·K·J)."""
        return np.asarray(log_prior, dtype=float) + log_lik.sum(axis=1)

    def coefficients(self, n_variables: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-(variable, class) multipliers ``(K, J)`` (ones) and class offsets ``(J,)`` (zeros)."""
        return np.ones((int(n_variables), int(n_classes))), np.zeros(int(n_classes))

    @property
    def weights(self) -> np.ndarray:
        """``(K,)`` ones."""
        return np.ones(self._n_variables)

    def problems(self) -> list[str]:
        """The broken invariants (sizes >= 0), each ``"field: what is wrong"``; empty when sound."""
        return [f"{name}: must be >= 0" for name in ("n_variables", "n_classes") if not getattr(self, "_" + name) >= 0]

    # -- saved record (docs/saved-model.md): the sizes it has seen

    def record_state(self) -> dict:
        return {"n_variables": self._n_variables, "n_classes": self._n_classes}

    @classmethod
    def from_record(cls, fields: Fields) -> Uniform:
        return sized_from_record(cls, fields)[0]


register(
    "Uniform",
    Uniform,
    Schema(
        params={"batch_size": Int(doc="rows per learn call asked of the classifier")},
        state={
            "n_variables": Int(low=0, doc="variables seen (K)"),
            "n_classes": Int(low=0, doc="classes seen (J)"),
        },
        doc="All weights 1 (plain naive Bayes)",
    ),
    state=Uniform.record_state,
    build=Uniform.from_record,
)
