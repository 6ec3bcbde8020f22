"""Per-class softmax graphical model trained by SGD (SLH15 §2.2, docs/algorithms/weights.md#graphical).

Design note. SLH15 rewrites the weighted naive Bayes as a one-layer network with a weight per
(variable, class) and a bias per class: ``H_j = b_j + Σ_k w_kj ℓ_kj(x)``, ``P = softmax(H)``,
trained by per-example SGD on the log loss, ``∂cost/∂H_j = P_j − T_j`` (SLH15 eq. 4, T the
one-hot target), at the fixed rate η = 1e-4 (SLH15 §2.2). Here the class prior stays outside the
learned part, ``H_j = log P(C_j) + b_j + Σ_k w_kj ℓ_kj``, with w = 1 and b = 0 at the start: the
model starts as the plain naive Bayes and keeps following the prior as it is re-estimated.

The weights are unconstrained in sign and size; this is not a [0, 1]-weighted naive Bayes.
``weights`` reports the per-variable mean over classes of ``w_kj`` (so one number per variable
for reports and the classifier's ``weights``); the full ``(K, J)`` array is ``class_weights``.

``adaptive=True`` uses Adam (Kingma & Ba 2015, β = (0.9, 0.999), ε = 1e-8) per parameter. SLH15
point at an adaptive rate as their next step: "high at the beginning and low after", and one that
can follow concept drift (§2.2, §5). Adam is chosen over AdaGrad because its effective rate does
not decay to zero (AdaGrad's shrinks like 1/√t: high then low, but it freezes the model on a long
stream and cannot follow drift), and because it normalises each parameter's step by its own
gradient scale, which matters here: ℓ grows like log N and differs widely between variables. On
the synthetic stream of ``benchmarks/bench_weights.py`` Adam at 1e-3 reaches a lower log loss
than the fixed rates. The bias correction counts the updates of each class column, so a class
that appears late gets properly corrected first steps.

``clip`` bounds the L2 norm of each example's gradient (weights and biases together), useful with
large |ℓ| (MODL's ℓ can reach about −log((N + 1)·N_j), so gradients grow like log N; see
docs/algorithms/weights.md#graphical). Inactive variables (``Context.active`` False) are not
updated.

Sample weights. An example of weight a contributes a·g, g its unit gradient. A large a would
make one step overshoot by orders of magnitude (weights of 1e6 sent w to 1e3, 1e9 to −1e12, and
further to NaN), so the *step is clipped*: a is capped at ``MAX_STEP / (η·‖g‖)``, which bounds
the L2 norm of every SGD step (w and b together) by ``MAX_STEP`` = 1, whatever the weight, and
leaves every step below that bound as it was (the unit-weight runs are unchanged). With Adam,
whose steps are bounded by its rate, a is capped only so that a·‖g‖ ≤ 1e150 (g² stays finite).
After T examples, ‖(w, b) − (1, 0)‖ ≤ T·MAX_STEP: the parameters stay finite for any positive
finite weight.

Cost: O(K·J) time per example, memory (K + 1)·J (three times that with Adam).
"""

from __future__ import annotations

import math

import numpy as np

from ..io.registry import register
from ..io.schema import Array, Bool, Fields, Float, Int, Optional, Schema, Struct
from .base import Batch, Context, Optimizer

__all__ = ["Graphical"]

_ADAM_BETA1 = 0.9
_ADAM_BETA2 = 0.999
_ADAM_EPSILON = 1e-8
#: Largest L2 norm of one SGD step (weights and biases together): a sample weight a scales the
#: step, and is capped at MAX_STEP / (η·‖g‖) for the example whose unit gradient is g.
MAX_STEP = 1.0
#: Largest gradient norm handed to Adam (its square stays finite; Adam's steps are bounded by η).
_ADAM_MAX_GRADIENT = 1e150


def _squared_norms(log_lik: np.ndarray, frozen: np.ndarray | None) -> np.ndarray:
    """``(n, J)``: Σ_k ℓ_kj² over the variables that are updated, plus 1 (the bias): the squared
    norm of an example's unit gradient is Σ_j (P_j − T_j)² times this."""
    if frozen is not None:
        log_lik = np.where(frozen[None, :, None], 0.0, log_lik)
    with np.errstate(over="ignore"):
        return np.einsum("nkj,nkj->nj", log_lik, log_lik) + 1.0


class Graphical(Optimizer):
    """Per-class weights and biases by stochastic gradient descent on the log loss (SLH15).

    Parameters
    ----------
    learning_rate
        η > 0. None means 1e-4 for plain SGD (SLH15 §2.2) and 1e-3 with Adam (Kingma & Ba).
    adaptive
        Use Adam per parameter instead of the fixed rate.
    clip
        If set (> 0), the L2 norm of each example's gradient is clipped to this value.

    Examples
    --------
    >>> import numpy as np
    >>> from wnb_stream.weights import Batch, Graphical
    >>> rng = np.random.default_rng(42)
    >>> n = 2000
    >>> y = rng.integers(0, 2, n)
    >>> agree = rng.random((n, 3)) < 0.8
    >>> hot = np.where(agree, y[:, None], 1 - y[:, None])                    # (n, 3)
    >>> log_lik = np.log(np.where(hot[..., None] == np.arange(2), 0.6, 0.4))  # under-confident
    >>> model = Graphical(adaptive=True)
    >>> model.reset(n_variables=3, n_classes=2)
    >>> model.learn(Batch(log_lik, y, np.ones(n), np.log([0.5, 0.5])))
    >>> model.weights.round(2).tolist()
    [1.2, 1.22, 1.21]
    """

    batch_size = 1

    def __init__(self, learning_rate: float | None = None, adaptive: bool = False, clip: float | None = None):
        if learning_rate is not None and not learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0 or None, got {learning_rate}")
        if not isinstance(adaptive, (bool, np.bool_)):
            raise ValueError(f"adaptive must be True or False, got {adaptive!r}")
        if clip is not None and not clip > 0:
            raise ValueError(f"clip must be > 0 or None, got {clip}")
        self.learning_rate = learning_rate
        self.adaptive = adaptive
        self.clip = clip
        self._ready = False

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"adaptive": True, "clip": 10.0}

    @property
    def rate(self) -> float:
        """The learning rate in use (``learning_rate`` or its default)."""
        if self.learning_rate is not None:
            return float(self.learning_rate)
        return 1e-3 if self.adaptive else 1e-4

    # ------------------------------------------------------------------ protocol

    def reset(self, n_variables: int, n_classes: int, seed: int | None = None) -> None:
        """Plain naive Bayes start: ``w = 1 (K, J)``, ``b = 0 (J,)``; seed unused."""
        k, j = int(n_variables), int(n_classes)
        self._w = np.ones((k, j))  # (K, J) per-class weights
        self._b = np.zeros(j)  # (J,) biases, on top of log P(C_j)
        self._m_w = np.zeros((k, j))  # Adam first and second moments
        self._v_w = np.zeros((k, j))
        self._m_b = np.zeros(j)
        self._v_b = np.zeros(j)
        self._updates = np.zeros(j, dtype=np.int64)  # (J,) Adam steps seen by each class column
        self._examples = 0
        self._ready = True

    def resize(self, n_variables: int, n_classes: int) -> None:
        """New variables get w = 1, new classes w = 1 and b = 0; optimiser statistics start at 0."""
        if not self._ready:
            self.reset(n_variables, n_classes)
            return
        k, j = self._w.shape
        extra_k, extra_j = max(0, int(n_variables) - k), max(0, int(n_classes) - j)
        if extra_k == 0 and extra_j == 0:
            return

        def grow(array: np.ndarray, fill: float) -> np.ndarray:
            if array.ndim == 1:
                return np.concatenate([array, np.full(extra_j, fill, dtype=array.dtype)])
            return np.pad(array, ((0, extra_k), (0, extra_j)), constant_values=fill)

        self._w = grow(self._w, 1.0)
        self._b = grow(self._b, 0.0)
        self._m_w, self._v_w = grow(self._m_w, 0.0), grow(self._v_w, 0.0)
        self._m_b, self._v_b = grow(self._m_b, 0.0), grow(self._v_b, 0.0)
        self._updates = grow(self._updates, 0)

    def learn(self, batch: Batch, history: Batch | None = None, context: Context | None = None) -> None:
        """One SGD (or Adam) step per row of ``batch``, in order; O(n·K·J). ``history`` unused."""
        n, k, j = batch.log_lik.shape
        if not self._ready:
            self.reset(k, j)
        elif k > self._w.shape[0] or j > self._w.shape[1]:
            self.resize(k, j)
        k_model, j_model = self._w.shape
        log_lik = batch.log_lik
        if (k, j) != (k_model, j_model):  # a batch encoded before the last resize: pad with ℓ = 0
            log_lik = np.pad(log_lik, ((0, 0), (0, k_model - k), (0, j_model - j)))
        log_prior = np.full(j_model, -np.inf)
        log_prior[: len(batch.log_prior)] = batch.log_prior
        frozen = None
        if context is not None:
            active = np.ones(k_model, dtype=bool)
            given = np.asarray(context.active, dtype=bool)[:k_model]
            active[: len(given)] = given
            frozen = ~active if not active.all() else None
        rate = self.rate
        # The largest gradient an example may bring (sample weight included): a step of at most
        # MAX_STEP (SGD), or a gradient whose square stays finite (Adam bounds its own steps).
        largest = _ADAM_MAX_GRADIENT if self.adaptive else MAX_STEP / rate
        squares = _squared_norms(log_lik, frozen)  # (n, J) Σ_k ℓ_kj² + 1 over the updated variables
        # ‖gradient‖ ≤ a·√(2·max_j squares): the rows whose gradient may exceed it are checked exactly
        check = np.asarray(batch.sample_weight, dtype=float) > largest / np.sqrt(2.0 * squares.max(axis=1, initial=1.0))
        for row, label, weight, square, checked in zip(log_lik, batch.y, batch.sample_weight, squares, check):
            if weight <= 0:
                continue  # a row of weight 0 changes nothing (not even Adam's statistics)
            # SLH15 eq. 2: H_j = log P(C_j) + b_j + Σ_k w_kj ℓ_kj, P = softmax(H)
            h = log_prior + self._b + np.einsum("kj,kj->j", self._w, row)
            residual = np.exp(h - h.max())  # (J,) max-shifted softmax; a −inf prior gives 0
            residual /= residual.sum()
            residual[label] -= 1.0  # SLH15 eq. 4: ∂cost/∂H_j = P_j − T_j
            if checked:  # the gradient of weight a is a·g: a is capped so that a·‖g‖ ≤ largest
                scale = float(np.max(np.abs(residual)))  # ‖g‖ on the scaled residual: r² may underflow
                if scale > 0.0:
                    unit = scale * math.sqrt(float(np.dot((residual / scale) ** 2, square)))
                    if weight > largest / unit:
                        weight = largest / unit
            residual *= weight
            grad_w = row * residual  # (K, J): ∂cost/∂w_kj = (P_j − T_j) ℓ_kj
            grad_b = residual
            if frozen is not None:
                grad_w[frozen] = 0.0
            if self.clip is not None:
                norm = np.sqrt(np.sum(grad_w * grad_w) + np.dot(grad_b, grad_b))
                if norm > self.clip:
                    grad_w = grad_w * (self.clip / norm)
                    grad_b = grad_b * (self.clip / norm)
            if self.adaptive:
                self._adam(grad_w, grad_b, rate)
            else:
                self._w -= rate * grad_w
                self._b -= rate * grad_b
            self._examples += 1

    def scores(self, log_lik: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
        """``(n, J)`` scores ``log_prior + b + Σ_k w_kj ℓ_kj`` (plain NB before any learning); O(n·K·J)."""
        _, k, j = log_lik.shape
        coefficients, offsets = self.coefficients(k, j)
        return np.asarray(log_prior, dtype=float) + offsets + np.einsum("nkj,kj->nj", log_lik, coefficients)

    def coefficients(self, n_variables: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-(variable, class) multipliers ``(K, J)`` = w_kj and class offsets ``(J,)`` = b_j.

        ``scores = log_prior + offsets + Σ_k coefficients_kj ℓ_kj``; variables and classes the
        model has not been resized to yet get w = 1 and b = 0, as ``resize`` would give. O(K·J).
        """
        k, j = int(n_variables), int(n_classes)
        coefficients, offsets = np.ones((k, j)), np.zeros(j)
        if self._ready:
            k0, j0 = min(k, self._w.shape[0]), min(j, self._w.shape[1])
            coefficients[:k0, :j0] = self._w[:k0, :j0]
            offsets[:j0] = self._b[:j0]
        return coefficients, offsets

    @property
    def weights(self) -> np.ndarray:
        """``(K,)`` mean over classes of the per-class weights (see ``class_weights``)."""
        return self._w.mean(axis=1) if self._ready and self._w.shape[1] else np.zeros(self.n_variables)

    # ------------------------------------------------------------------ diagnostics

    @property
    def class_weights(self) -> np.ndarray:
        """``(K, J)`` per-(variable, class) weights w_kj (a copy)."""
        return self._w.copy() if self._ready else np.zeros((0, 0))

    @property
    def bias(self) -> np.ndarray:
        """``(J,)`` per-class biases b_j, added to log P(C_j) (a copy)."""
        return self._b.copy() if self._ready else np.zeros(0)

    @property
    def n_variables(self) -> int:
        return self._w.shape[0] if self._ready else 0

    @property
    def n_examples(self) -> int:
        """Number of updates made (rows of positive weight) since ``reset``."""
        return self._examples if self._ready else 0

    # ------------------------------------------------------------------ internals

    def _adam(self, grad_w: np.ndarray, grad_b: np.ndarray, rate: float) -> None:
        """One Adam update (Kingma & Ba 2015, Algorithm 1) with per-class-column step counts."""
        self._updates += 1
        correction1 = 1.0 - _ADAM_BETA1 ** self._updates  # (J,)
        correction2 = 1.0 - _ADAM_BETA2 ** self._updates
        for theta, m, v, g in ((self._w, self._m_w, self._v_w, grad_w), (self._b, self._m_b, self._v_b, grad_b)):
            m *= _ADAM_BETA1
            m += (1.0 - _ADAM_BETA1) * g
            v *= _ADAM_BETA2
            v += (1.0 - _ADAM_BETA2) * g * g
            theta -= rate * (m / correction1) / (np.sqrt(v / correction2) + _ADAM_EPSILON)

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. Once reset: the arrays sized (K, J) and (J,) alike, finite weights and
        biases, Adam's second moments >= 0. O(K·J)."""
        if not self._ready:
            return []
        if self._w.ndim != 2:
            return ["run.w: expected a (n_variables, n_classes) array"]
        k, j = self._w.shape
        for name, shape in (("b", (j,)), ("updates", (j,)), ("m_b", (j,)), ("v_b", (j,)), ("m_w", (k, j)), ("v_w", (k, j))):
            if getattr(self, "_" + name).shape != shape:
                return [f"run.{name}: expected shape {shape}, got {getattr(self, '_' + name).shape}"]
        found = []
        if not (np.all(np.isfinite(self._w)) and np.all(np.isfinite(self._b))):
            found.append("run.w: weights and biases must be finite")
        for name in ("v_w", "v_b"):
            if not np.all(getattr(self, "_" + name) >= 0):
                found.append(f"run.{name}: Adam's second moments must be >= 0")
        return found

    # -- saved record (docs/saved-model.md): once reset, the per-class weights and biases, Adam's
    # moments and per-class step counts, and the number of updates

    def record_state(self) -> dict:
        if not self._ready:
            return {"run": None}
        return {"run": {**{name: getattr(self, "_" + name) for name in _ARRAYS}, "examples": self._examples}}

    @classmethod
    def from_record(cls, fields: Fields) -> Graphical:
        model = cls(**fields.params)
        run = fields.state["run"]
        if run is not None:
            for name in _ARRAYS:
                setattr(model, "_" + name, run[name])
            model._examples = run["examples"]
            model._ready = True
        return model


#: The arrays of a Graphical learner's record.
_ARRAYS = ("w", "b", "m_w", "v_w", "m_b", "v_b", "updates")
#: Bound of the magnitude of a weight, bias or first moment in a record: far beyond what a descent
#: reaches, and small enough that a weight times a log-likelihood times the variables stays a
#: finite score.
_LARGE = 1e100
_PARAMETER = {"low": -_LARGE, "high": _LARGE}

register(
    "Graphical",
    Graphical,
    Schema(
        params={
            "learning_rate": Optional(Float(), doc="η (null: the default of the update rule)"),
            "adaptive": Bool(doc="Adam instead of the fixed rate"),
            "clip": Optional(Float(), doc="L2 bound of each example's gradient"),
        },
        state={
            "run": Optional(
                Struct(
                    {
                        "w": Array("float64", ("n_variables", "n_classes"), **_PARAMETER, doc="per-class weights w_kj"),
                        "b": Array("float64", ("n_classes",), **_PARAMETER, doc="per-class biases b_j"),
                        "m_w": Array("float64", ("n_variables", "n_classes"), **_PARAMETER, doc="Adam first moments of w"),
                        "v_w": Array("float64", ("n_variables", "n_classes"), low=0.0, high=_LARGE**2, doc="Adam second moments of w"),
                        "m_b": Array("float64", ("n_classes",), **_PARAMETER, doc="Adam first moments of b"),
                        "v_b": Array("float64", ("n_classes",), low=0.0, high=_LARGE**2, doc="Adam second moments of b"),
                        "updates": Array("int64", ("n_classes",), low=0, doc="Adam steps of each class column"),
                        "examples": Int(low=0, doc="updates made since reset"),
                    }
                ),
                doc="null before reset",
            )
        },
        doc="Per-class softmax weights by SGD (SLH15)",
    ),
    state=Graphical.record_state,
    build=Graphical.from_record,
)
