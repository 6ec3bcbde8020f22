"""The protocol of level-3 weight learners.

The classifier encodes rows into log-likelihood tensors and drives the learners with batches;
learners never see dicts, summaries or MODL partitions, only arrays:

- ``Batch.log_lik``: ``(n, K, J)`` values ℓ_kj(x_n) = log p(x_nk | C_j) from level 2;
- ``Batch.y``: ``(n,)`` class indices in ``[0, J)``;
- ``Batch.sample_weight``: ``(n,)`` non-negative weights;
- ``Batch.log_prior``: ``(J,)`` log P(C_j).

``Context`` carries what the regularizers need about the variables: ``prior_costs`` B_k
(``(K,)``, MODL preparation cost including the selection cost log K,
docs/algorithms/modl.md#level-and-prior-cost) and
``active`` (``(K,)`` bool, False for variables at Level 0, whose weight stays 0 in the
selective learners).

The classifier's learner sees only the variables in level 3 (those whose level 2 is not flat),
in the order they entered it: K above is their number.

A learner is a River ``Base`` prototype (configuration only in ``__init__``); its state is created
by ``reset`` and grown by ``resize`` when variables or classes appear (new variables and classes
are appended at the end of their axis, never reordered).
"""

from __future__ import annotations

import numpy as np
from river import base

from .._checks import integer
from ..io.schema import Fields, Int
from ..tables import Batch, Context

__all__ = ["Batch", "Context", "Optimizer", "VectorWeights", "toy_batch"]

#: The sizes a learner's record holds: binds ``n_variables``.
SIZES = {
    "n_variables": Int(low=0, binds="n_variables", doc="variables the learner is sized for (K)"),
    "n_classes": Int(low=0, doc="classes the learner is sized for (J)"),
}
#: The range of a weight in a learner's record.
WEIGHT_RANGE = {"low": 0.0, "high": 1.0}


def toy_batch(rng: np.random.Generator, n: int, n_variables: int = 6, n_informative: int = 3) -> Batch:
    """``n`` rows of a two-class toy problem, encoded as a learner sees them.

    The classes are equally likely and every row has weight 1. Each of the first
    ``n_informative`` variables agrees with the row's class with probability 0.7 and then gives
    that class likelihood 0.7 and the other 0.3; on disagreement the two are swapped. The other
    ``n_variables - n_informative`` variables are noise: their two likelihoods are a fresh
    Dirichlet(1, 1) draw on every row, unrelated to the class. A good weight learner keeps the
    informative variables (weight near 1) and drops the noise (weight near 0). It is the problem
    of the learners' examples; every draw comes from ``rng``.

    Returns a :class:`Batch`: ``log_lik (n, n_variables, 2)``, ``y (n,)``, ``sample_weight (n,)``
    of ones, ``log_prior (2,)`` = log(1/2).

    >>> import numpy as np
    >>> from wnb_stream.weights import toy_batch
    >>> batch = toy_batch(np.random.default_rng(42), 1000)
    >>> batch.log_lik.shape, len(batch)
    ((1000, 6, 2), 1000)
    >>> agree = batch.log_lik.argmax(axis=2) == batch.y[:, None]    # (1000, 6) the variable's vote is the class
    >>> agree.mean(axis=0).round(2).tolist()
    [0.7, 0.7, 0.67, 0.49, 0.49, 0.51]
    """
    integer(n, "n", low=0)
    integer(n_variables, "n_variables", low=0)
    integer(n_informative, "n_informative", low=0, high=n_variables)
    y = rng.integers(0, 2, n)
    log_lik = np.log(rng.dirichlet([1, 1], size=(n, n_variables)))  # (n, K, 2) noise
    agree = rng.random((n, n_informative)) < 0.7  # (n, n_informative) the variable votes for y
    vote = np.where(agree, y[:, None], 1 - y[:, None])
    log_lik[:, :n_informative, :] = np.log(np.where(vote[..., None] == np.arange(2), 0.7, 0.3))
    return Batch(log_lik, y, np.ones(n), np.log([0.5, 0.5]))



class Optimizer(base.Base):
    """Base class of weight learners.

    Subclasses implement:

    - ``reset(n_variables, n_classes, seed) -> None``: fresh state;
    - ``resize(n_variables, n_classes) -> None``: grow the state (new variables/classes at the end);
    - ``learn(batch, history, context) -> None``: one optimisation step on an arriving batch;
      ``history`` holds the most recent rows (at most the history depth N), ending with ``batch``;
    - ``scores(log_lik, log_prior) -> (n, J)``: unnormalised log posteriors with the current best
      weights (``log_prior + Σ_k w_k ℓ_k``, or the learner's own form);
    - ``weights``: ``(K,)`` current best weight of each variable;
    - ``coefficients(K, J)``: the prediction's multipliers and offsets (a default is provided for
      weighted naive Bayes learners; per-class learners override it);
    - optionally ``sync(context) -> None``: level 2 as it stands between two steps (the engine
      calls it when it takes the coefficients); it may change what predictions use, never what
      ``learn`` reads. The default does nothing;
    - optionally ``refit(history, context) -> bool``: re-fit the weights on the whole window now,
      True if the learner did. The change detector calls it when it sees the error rise, and
      judges the refitted model before forgetting anything (docs/algorithms/drift.md). The
      default does nothing and returns False: a learner that steps on every batch is never
      more than one batch behind its window.

    ``batch_size`` is the number of rows the learner wants per ``learn`` call (the classifier may
    send smaller batches early in a stream); 1 means per-example updates.

    Each learner also owns its saved record (``docs/saved-model.md``), registered in its module
    with ``io.register``: ``record_state()``, a classmethod ``from_record(fields)``, and
    ``problems()``, the list of its broken invariants that the tests assert empty and a load
    refuses.
    """

    batch_size: int = 1

    #: The weight reported for a variable outside level 3 (its level 2 is flat, so it changes no
    #: score: ``docs/algorithms/prediction.md#compact-window``). 0: it is not used. Plain naive
    #: Bayes (``Uniform``) says 1, as it weighs every variable 1.
    outside_weight: float = 0.0

    def problems(self) -> list[str]:
        """Every broken invariant of the state, each ``"field: what is wrong"`` (the field's name
        in the saved record); empty when sound. The base holds no state of its own, so it lists
        none; each learner lists its own. It raises nothing, whatever the state holds."""
        return []

    def _check(self) -> None:
        """Assert that ``problems()`` is empty (``AssertionError`` listing them otherwise)."""
        found = self.problems()
        assert not found, "; ".join(found)

    def reset(self, n_variables: int, n_classes: int, seed: int | None = None) -> None:  # pragma: no cover
        raise NotImplementedError

    def resize(self, n_variables: int, n_classes: int) -> None:  # pragma: no cover
        raise NotImplementedError

    def learn(self, batch: Batch, history: Batch, context: Context) -> None:  # pragma: no cover
        raise NotImplementedError

    def remap(self, kept: np.ndarray, n_classes: int) -> bool:
        """Carry the learner's run into a new layout of its variables, True if it did.

        Variable i of the new layout is the old variable ``kept[i]``, or a new one where
        ``kept[i]`` is −1 (entering as ``resize`` would enter it); ``n_classes`` may grow. A
        model that absorbs a round's deltas keeps its weights this way (``Engine.restart``). The
        default carries nothing (False): the caller resets the learner.
        """
        return False

    def scores(self, log_lik: np.ndarray, log_prior: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def sync(self, context: Context) -> None:
        """Level 2 as it stands between two steps: ``context`` as the next ``learn`` will get it.

        The engine calls it each time it takes the coefficients after a rebuild, so that
        predictions treat a variable whose level 2 has changed since the last step as that step
        will. It changes nothing a later ``learn`` reads: a model predicts the same whether or not
        it was asked between its steps. The default does nothing.
        """

    def refit(self, history: Batch, context: Context) -> bool:
        """Re-fit the weights on ``history`` now, out of schedule; True if the learner did.

        The default does nothing (False). Batch searches, whose weights can be as old as the
        rows they have seen since their last search, override it.
        """
        return False

    @property
    def weights(self) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def coefficients(self, n_variables: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """The prediction as multipliers and offsets: ``scores = log_prior + bias + Σ_k coef[k] ⊙ ℓ_k``.

        Returns ``coef (K, J)`` and ``bias (J,)``. A weighted naive Bayes has ``coef[k, j] = w_k``
        and no bias; learners with per-class weights override this. Variables the learner does not
        know yet get weight 1 (plain naive Bayes until the learner has seen them).
        """
        w = np.ones(n_variables)
        known = np.asarray(self.weights, dtype=float)[:n_variables]
        w[: len(known)] = known
        return np.repeat(w[:, None], n_classes, axis=1), np.zeros(n_classes)


def sized_from_record(cls, fields):
    """``(model, run)``: a ``cls`` built from a loaded record's parameters and sized by its state
    (``n_variables``, ``n_classes``), and the record's ``run`` (None: the learner never learned, or
    its record has none)."""
    model = cls(**fields.params)
    model._n_variables, model._n_classes = fields.state["n_variables"], fields.state["n_classes"]
    return model, fields.state.get("run")


class VectorWeights(Optimizer):
    """A weighted naive Bayes learner: one weight per variable, the same on every class.

    Subclasses give ``_prediction_weights(K) -> (K,)``, the weights predictions use (those of
    variables not resized to yet included), and ``_n_variables``; this class turns them into
    ``scores`` and ``coefficients``, and pads a batch encoded before some variables existed.
    """

    _n_variables: int = 0

    def _prediction_weights(self, n_variables: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def scores(self, log_lik: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
        """``(n, J)`` scores ``log_prior + Σ_k w_k ℓ_k`` with the prediction's weights; O(n·K·J)."""
        from .criterion import scores

        return scores(log_lik, log_prior, self._prediction_weights(log_lik.shape[1]))

    def coefficients(self, n_variables: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-(variable, class) multipliers ``(K, J)`` (w_k on every class) and offsets ``(J,)`` (0).

        ``scores = log_prior + offsets + Σ_k coefficients_kj ℓ_kj``; variables the learner has not
        been resized to yet get the weight ``resize`` would give them. O(K·J).
        """
        weights = self._prediction_weights(int(n_variables))
        return np.repeat(weights[:, None], int(n_classes), axis=1), np.zeros(int(n_classes))

    def _padded(self, data: Batch) -> Batch:
        """``data`` with ℓ = 0 (no evidence) for variables it was encoded without."""
        missing = self._n_variables - data.log_lik.shape[1]
        if missing <= 0:
            return data
        log_lik = np.pad(data.log_lik, ((0, 0), (0, missing), (0, 0)))
        return Batch(log_lik, data.y, data.sample_weight, data.log_prior)

    # -- saved record (docs/saved-model.md): the sizes, and ``run`` once reset (null before); a
    # learner gives ``_run_state`` and ``_load_run``, the fields of its ``run``

    def record_state(self) -> dict:
        """The state fields of the learner's record: ``n_variables``, ``n_classes`` and ``run``
        (``_run_state()`` once reset, None before)."""
        return {"n_variables": self._n_variables, "n_classes": self._n_classes, "run": self._run_state() if self._ready else None}

    def _run_state(self) -> dict:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def from_record(cls, fields: Fields) -> VectorWeights:
        """The learner a loaded, schema-checked record describes (its ``problems()`` not yet
        asked): sized by the record, and reset from its ``run`` (``_load_run``) when it has one."""
        model, run = sized_from_record(cls, fields)
        if run is not None:
            model._load_run(run)
            model._ready = True
        return model

    def _load_run(self, run: dict) -> None:  # pragma: no cover
        raise NotImplementedError
