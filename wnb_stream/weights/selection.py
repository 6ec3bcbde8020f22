"""Fast forward–backward searches for FNB and SNB (docs/algorithms/weights.md#fnb, #snb).

The criterion of a weight vector ``w ∈ [0, 1]^K`` on a window of N rows (HB24 eq. 6, 9, 17, 18):

    CR(w) = −Σ_n a_n log P_w(y_n | x_n) + λ f_F(w)
    f_F(w) = L*(⌈W⌉) − log ⌈W⌉! + Σ_{w_k > 0} B_k w_k^p,   W = Σ_k w_k,   f_F(0) = 0

with a_n the sample weights, B_k = ``Context.prior_costs`` (selection cost log K included), L*
Rissanen's universal code for the integers (:func:`wnb_stream.modl.costs.universal_code_length`)
and p = 0.95. For Boolean weights f_F is HB24's SNB prior f_B (eq. 9). The empty model has prior
0: HB24 writes L*(K_s), defined for K_s ≥ 1 only, and the empty model needs no count.

Design note — incremental scores. A search keeps the ``(N, J)`` score matrix
``S = log P(C) + Σ_k w_k ℓ_k`` of its current weights and the window's ℓ transposed to
``(K, N, J)`` (one contiguous ``(N, J)`` slab per variable). A trial that moves ``w_k`` by Δ
evaluates ``S + Δ·ℓ_k`` (O(N·J)), its log-sum-exp and the prior (O(1), from the running W and
Σ B_k w_k^p), and keeps the candidate matrix only if the move is accepted (HB24 §2.2: "the
log-likelihood can be directly updated taking into account the new weight"). A pass over the
variables costs O(K·N·J).

Acceptance. An addition (forward move) must lower the criterion by more than
``1e-9·(1 + |CR|)``, so that float noise never adds a variable; a removal (backward move) is
kept when it does not raise the criterion (ties go to the sparser model). Every accepted move
therefore leaves the criterion non-increasing, and a pass cannot cycle.

Design note — a binding budget (``max_variables`` = m, FNB). A variable at 0 cannot enter a
full budget, so in a random order the first m variables that lower the criterion fill it,
whichever they are. When a forward pass starts with more variables at 0 than free places, FNB's
pass (:func:`ranked_forward_pass`) therefore lets the selected variables grow first, in the
random order, then fills the free places best first: every candidate's trial w_k ← δ is
evaluated at the current weights (the trial the random pass would make), the one that lowers the
criterion most is tried and kept as usual, and the others are evaluated again before the next
place is filled. This is greedy forward selection on the criterion: each entrant is the best
given those already in, so a variable redundant with a selected one loses to a weaker but
independent one, which a ranking by single-variable gains (computed once, from the empty model)
would not see. It costs one evaluation of the entrants, O(K·N·J) (vectorised), per place filled,
and only in passes where the budget binds; when every candidate fits, the pass is the random one,
move for move, so FNB without a binding budget is unchanged. SNB keeps the random entries: its
averaging wants the subsets of several random orders.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from .._checks import integer
from ..io.generators import GENERATOR, generator_from_state, generator_state
from ..io.schema import Array, Float, Int, Optional, Struct
from ..modl.costs import universal_code_length
from .base import SIZES, WEIGHT_RANGE, Batch
from .criterion import _log_normaliser, negative_log_likelihood
from .search import WindowSearch

__all__ = [
    "Search",
    "Selection",
    "SelectionSearch",
    "average_models",
    "fractional_search",
    "increments",
    "ms_ffwbw",
    "ranked_forward_pass",
    "search_state",
    "selection_criterion",
    "selection_prior",
]

#: Relative margin a forward move must gain (float noise never adds a variable).
_GAIN = 1e-9
#: Most floats of the candidate scores that ``Search.trial_values`` holds at once (32 MB).
_TRIAL_FLOATS = 1 << 22
#: HB24 §4.4: exponent p of the fractional prior (Khiops' default, "from empirical studies").
DEFAULT_EXPONENT = 0.95
SCHEDULES = ("paper", "khiops")
AVERAGING = ("trajectory", "optima")


@functools.lru_cache(maxsize=4096)
def _count_cost(n: int) -> float:
    """``L*(n) − log n!`` for n ≥ 1: the code of the number of selected variables and of their order."""
    return universal_code_length(n) - math.lgamma(n + 1.0)


def _prior(total: float, weighted_costs: float) -> float:
    """f_F from ``W = Σ w_k`` and ``Σ_{w_k>0} B_k w_k^p``."""
    if total <= 0.0:
        return 0.0
    return _count_cost(math.ceil(total)) + weighted_costs


def selection_prior(weights: np.ndarray, prior_costs: np.ndarray, exponent: float = DEFAULT_EXPONENT) -> float:
    """f_F(w) of HB24 eq. 18 (f_B of eq. 9 for Boolean weights); O(K).

    Examples
    --------
    >>> round(selection_prior(np.array([1.0, 0.0, 1.0]), np.array([2.0, 5.0, 3.0])), 6)
    6.052591
    >>> selection_prior(np.zeros(3), np.ones(3))
    0.0
    """
    weights = np.asarray(weights, dtype=float)
    chosen = weights > 0
    weighted = float(np.dot(np.asarray(prior_costs, dtype=float)[chosen], weights[chosen] ** exponent))
    return _prior(float(weights.sum()), weighted)


def selection_criterion(
    weights: np.ndarray,
    data: Batch,
    prior_costs: np.ndarray,
    penalty: float = 0.1,
    exponent: float = DEFAULT_EXPONENT,
) -> float:
    """``CR(w) = NLL(w) + λ f_F(w)`` on ``data`` (HB24 eq. 17), recomputed from scratch; O(N·K·J)."""
    nll = negative_log_likelihood(weights, data.log_lik, data.y, data.log_prior, data.sample_weight)
    return float(nll) + penalty * selection_prior(weights, prior_costs, exponent)


class Search:
    """A forward–backward search on one window: weights, scores and criterion, updated by moves.

    Parameters
    ----------
    data
        The window (rows of sample weight 0 are left out).
    prior_costs
        ``(K,)`` B_k.
    candidates
        ``(K,)`` bool, the variables allowed to enter (``Context.active``).
    penalty, exponent
        λ and p of the criterion.
    max_variables
        At most this many non-zero weights (None: no limit); a variable at 0 cannot enter when
        the budget is full.

    Attributes
    ----------
    weights : (K,) current weights, scores : (N, J) current scores, value : CR(weights),
    trials : moves evaluated, moves : moves accepted.
    """

    def __init__(self, data: Batch, prior_costs, candidates, penalty=0.1, exponent=DEFAULT_EXPONENT, max_variables=None):
        used = np.asarray(data.sample_weight, dtype=float) > 0
        self.log_lik = np.ascontiguousarray(np.moveaxis(np.asarray(data.log_lik, dtype=float)[used], 1, 0))  # (K, N, J)
        self.y = np.asarray(data.y, dtype=np.intp)[used]  # (N,)
        self.sample_weight = np.asarray(data.sample_weight, dtype=float)[used]  # (N,)
        self.log_prior = np.asarray(data.log_prior, dtype=float)  # (J,)
        self.prior_costs = np.asarray(prior_costs, dtype=float)  # (K,)
        self.candidates = np.asarray(candidates, dtype=bool)  # (K,)
        self.penalty, self.exponent, self.max_variables = float(penalty), float(exponent), max_variables
        self._rows = np.arange(len(self.y))
        self.trials = 0
        self.moves = 0
        self.visited: dict[bytes, float] | None = None  # subsets met along the way (SNB), by their mask
        self.restart()

    @property
    def n_rows(self) -> int:
        return len(self.y)

    @property
    def n_selected(self) -> int:
        return self._selected

    def restart(self) -> None:
        """Back to the empty model w = 0 (the start of every FFWBW run, HB24 Alg. 1 and 2)."""
        k = self.log_lik.shape[0]
        self.weights = np.zeros(k)
        self.scores = np.broadcast_to(self.log_prior, (self.n_rows, len(self.log_prior))).copy()  # (N, J)
        self._total = 0.0  # W (a sum of multiples of 2^-i: exact in floats)
        self._weighted = 0.0  # Σ_{w_k > 0} B_k w_k^p
        self._selected = 0
        self.data_cost = self._data_cost(self.scores)
        self.value = self.data_cost  # f_F(0) = 0
        self.empty_value = self.value

    def _data_cost(self, scores: np.ndarray) -> float:
        """``−Σ_n a_n (S_n,y_n − LSE(S_n))``; O(N·J)."""
        observed = scores[self._rows, self.y] - _log_normaliser(scores)
        return -float(np.dot(self.sample_weight, observed))

    def _term(self, k: int, weight: float) -> float:
        return self.prior_costs[k] * weight**self.exponent if weight > 0 else 0.0

    def can_enter(self, k: int) -> bool:
        """Variable k may take a forward move: a candidate below 1, and room for it if it is at 0."""
        w = self.weights[k]
        if not self.candidates[k] or w >= 1.0:
            return False
        return w > 0 or self.max_variables is None or self._selected < self.max_variables

    def trial_values(self, variables: np.ndarray, weight: float) -> np.ndarray:
        """``(len(variables),)`` criterion after ``w_k ← weight`` for each k alone; nothing is kept.

        The values :meth:`try_move` would compute (to rounding: the weighted sums are matrix
        products here), for ranking candidates. Vectorised over the variables, in chunks of at most
        ``_TRIAL_FLOATS`` scores; O(len(variables)·N·J).
        """
        variables = np.asarray(variables, dtype=np.intp)
        values = np.empty(len(variables))
        n_rows, n_classes = self.scores.shape
        chunk = max(1, _TRIAL_FLOATS // max(n_rows * n_classes, 1))
        for start in range(0, len(variables), chunk):
            part = variables[start : start + chunk]
            steps = weight - self.weights[part]  # (c,)
            candidate = self.scores[None] + steps[:, None, None] * self.log_lik[part]  # (c, N, J)
            observed = candidate[:, self._rows, self.y] - _log_normaliser(candidate)  # (c, N)
            data_costs = -(observed @ self.sample_weight)  # (c,)
            for i, k in enumerate(part.tolist()):
                weighted = self._weighted - self._term(k, self.weights[k]) + self._term(k, weight)
                values[start + i] = data_costs[i] + self.penalty * _prior(self._total + steps[i], weighted)
        self.trials += len(variables)
        return values

    def try_move(self, k: int, weight: float, forward: bool) -> bool:
        """Evaluate ``w_k ← weight`` and keep it if it pays (see the module note); O(N·J)."""
        old = self.weights[k]
        candidate = self.scores + (weight - old) * self.log_lik[k]  # (N, J)
        data_cost = self._data_cost(candidate)
        total = self._total + (weight - old)
        weighted = self._weighted - self._term(k, old) + self._term(k, weight)
        value = data_cost + self.penalty * _prior(total, weighted)
        self.trials += 1
        accept = value < self.value - _GAIN * (1.0 + abs(self.value)) if forward else value <= self.value
        if not accept:
            return False
        self.weights[k] = weight
        self.scores = candidate
        self._total, self._weighted = total, weighted
        self._selected += int(weight > 0) - int(old > 0)
        self.data_cost, self.value = data_cost, value
        self.moves += 1
        if self.visited is not None:
            self.visited[(self.weights > 0).tobytes()] = value
        return True


def fast_pass(search: Search, order: np.ndarray, delta: float, forward: bool) -> int:
    """One fast forward (``w_k += δ``) or backward (``w_k −= δ``) pass in ``order``; accepted moves.

    Forward visits the variables that :meth:`Search.can_enter`; backward the selected ones.
    δ = 1 is the Boolean FFWBW of HB24 Alg. 1; δ = 2^-i the fractional passes of Alg. 2.
    Cost O(K·N·J).
    """
    moves = 0
    for k in order.tolist():
        w = search.weights[k]
        if forward:
            if search.can_enter(k):
                moves += search.try_move(k, min(1.0, w + delta), forward=True)
        elif w > 0:
            moves += search.try_move(k, max(0.0, w - delta), forward=False)
    return moves


def ranked_forward_pass(search: Search, order: np.ndarray, delta: float) -> int:
    """Fast forward pass whose entries fill the budget best first (module note); accepted moves.

    The selected variables below 1 grow by δ in ``order``; then, while the budget has a free
    place, the variable at 0 whose trial ``w_k ← δ`` gives the lowest criterion (ties: first in
    ``order``) is tried (:meth:`Search.try_move`, the usual acceptance), and the pass ends at
    the first refusal. Cost O(K·N·J) per place filled, plus the growth moves' O(K·N·J).
    """
    moves = 0
    for k in order.tolist():
        if search.weights[k] > 0 and search.can_enter(k):
            moves += search.try_move(k, min(1.0, search.weights[k] + delta), forward=True)
    while search.max_variables is None or search.n_selected < search.max_variables:
        entrants = order[search.weights[order] == 0.0]
        if not len(entrants):
            break
        best = int(entrants[np.argmin(search.trial_values(entrants, min(1.0, delta)))])
        if not search.try_move(best, min(1.0, delta), forward=True):
            break
        moves += 1
    return moves


def ffwbw_round(search: Search, rng: np.random.Generator, delta: float, ranked: bool = False) -> int:
    """Random order, fast forward; random order, fast backward (one repetition of HB24 Alg. 1/2).

    ``ranked`` (FNB): when the budget binds, more variables at 0 than free places, the forward
    pass is :func:`ranked_forward_pass` (the same random order drawn, for the growth moves).
    """
    candidates = np.flatnonzero(search.candidates)
    order = rng.permutation(candidates)
    if ranked and search.max_variables is not None:
        free = search.max_variables - search.n_selected
        waiting = int(np.count_nonzero(search.weights[candidates] == 0.0))
        if 0 < free < waiting:
            moves = ranked_forward_pass(search, order, delta)
            return moves + fast_pass(search, rng.permutation(candidates), delta, forward=False)
    moves = fast_pass(search, order, delta, forward=True)
    return moves + fast_pass(search, rng.permutation(candidates), delta, forward=False)


def increments(n_rows: int, n_variables: int, schedule: str = "paper") -> list[tuple[float, int]]:
    """(δ, repetitions) of the fractional search.

    ``"paper"`` (HB24 Alg. 2): δ = 1/2^i from 1/2 while δ > 1/N (at least δ = 1/2), each repeated
    ⌈1 + log K / log N⌉ times. ``"khiops"``: δ = 1, 1/2, …, ⌈log2(N + 1)⌉ increments, 2 repetitions.

    >>> increments(10, 5)
    [(0.5, 2), (0.25, 2), (0.125, 2)]
    >>> increments(4, 5, "khiops")
    [(1.0, 2), (0.5, 2), (0.25, 2)]
    """
    n, k = max(int(n_rows), 1), max(int(n_variables), 1)
    if schedule == "khiops":
        return [(2.0**-i, 2) for i in range(max(1, math.ceil(math.log2(n + 1))))]
    repeats = 1 if n < 2 else max(1, math.ceil(1.0 + math.log(k) / math.log(n)))
    out, i = [], 1
    while 2.0**-i > 1.0 / n or i == 1:
        out.append((2.0**-i, repeats))
        i += 1
    return out


def fractional_search(
    data: Batch,
    prior_costs: np.ndarray,
    candidates: np.ndarray,
    rng: np.random.Generator,
    penalty: float = 0.1,
    exponent: float = DEFAULT_EXPONENT,
    max_variables: int | None = None,
    schedule: str = "paper",
) -> Search:
    """FNB (HB24 Algorithm 2): one start from w = 0, fractional FFWBW passes with halving δ.

    At each δ of :func:`increments`, repetitions of (forward, backward) passes in fresh random
    orders; the repetitions stop early once one accepts no move (the point is then a local
    optimum for that δ and further orders cannot move it). The criterion never increases, so the
    final point is the best one visited. With ``max_variables``, a forward pass in which the
    budget binds fills it best first (:func:`ranked_forward_pass`, the module's note). Cost
    O(K·N·J·log(K·N)), plus O(K·N·J) per place a binding budget fills.
    """
    search = Search(data, prior_costs, candidates, penalty, exponent, max_variables)
    for delta, repeats in increments(search.n_rows, int(search.candidates.sum()), schedule):
        for _ in range(repeats):
            if ffwbw_round(search, rng, delta, ranked=True) == 0:
                break
    return search


@dataclasses.dataclass(slots=True)
class Selection:
    """Result of MS(FFWBW): the averaged weights and what they were averaged from."""

    weights: np.ndarray  # (K,) κ-weighted share of the models holding each variable
    best: np.ndarray  # (K,) 0/1, the best subset found (MAP)
    best_value: float  # its criterion
    empty_value: float  # c(∅)
    models: int  # distinct models averaged
    trials: int  # moves evaluated


def average_models(models: dict[bytes, float], empty_value: float, n_variables: int) -> tuple[np.ndarray, int]:
    """Compression-based averaging (Boullé 2007; HB24 §2): ``w_k = Σ_{M ∋ k} κ⁺(M) / Σ_M κ⁺(M)``.

    ``models`` maps a subset mask (``(K,)`` bool as bytes) to its criterion c(M);
    κ(M) = 1 − c(M)/c(∅), negative rates count 0. Returns ``(K,)`` weights (0 when no model
    compresses) and the number of models with κ > 0.

    >>> masks = {np.array([1, 0, 1], bool).tobytes(): 50.0, np.array([1, 0, 0], bool).tobytes(): 75.0}
    >>> w, n = average_models(masks, 100.0, 3)
    >>> w.round(4).tolist(), n
    ([1.0, 0.0, 0.6667], 2)
    """
    weights = np.zeros(n_variables)
    if not empty_value > 0 or not models:
        return weights, 0
    masks = np.array([np.frombuffer(key, dtype=bool) for key in models])  # (m, K)
    rates = np.maximum(0.0, 1.0 - np.array(list(models.values())) / empty_value)  # (m,) κ⁺
    if not rates.sum() > 0:
        return weights, 0
    return rates @ masks / rates.sum(), int(np.count_nonzero(rates))


def ms_ffwbw(
    data: Batch,
    prior_costs: np.ndarray,
    candidates: np.ndarray,
    rng: np.random.Generator,
    penalty: float = 0.1,
    max_variables: int | None = None,
    starts: int | None = None,
    averaging: str = "trajectory",
) -> Selection:
    """SNB (HB24 Algorithm 1, Boullé 2007 §3.5) with compression-based model averaging.

    ``starts`` runs (default ⌈log(K·N)⌉, natural log, at least 1), each from the empty subset:
    up to two repetitions of (random order, fast forward; random order, fast backward) with
    Boolean moves, stopping when one accepts nothing. The models averaged are the distinct
    subsets met after each accepted move (``"trajectory"``, HB24 §2.2) or the local optimum of
    each run (``"optima"``). With ``max_variables`` the averaged weights keep the
    ``max_variables`` largest (ties: lower index). Cost O(K·N·J·log(K·N)).
    """
    search = Search(data, prior_costs, candidates, penalty, 1.0, max_variables)
    k = len(search.weights)
    n_candidates = int(search.candidates.sum())
    if starts is None:
        starts = max(1, math.ceil(math.log(max(n_candidates * search.n_rows, 1))))
    models: dict[bytes, float] = {}
    if averaging == "trajectory":
        search.visited = models
    best, best_value = np.zeros(k), search.value
    for _ in range(starts):
        search.restart()
        for _ in range(2):
            if ffwbw_round(search, rng, 1.0) == 0:
                break
        if averaging == "optima" and search.n_selected:
            models[(search.weights > 0).tobytes()] = search.value
        if search.value < best_value:
            best, best_value = search.weights.copy(), search.value
    weights, n_models = average_models(models, search.empty_value, k)
    if max_variables is not None and np.count_nonzero(weights) > max_variables:
        keep = np.argsort(-weights, kind="stable")[:max_variables]
        kept = np.zeros(k)
        kept[keep] = weights[keep]
        weights = kept
    return Selection(weights, best, float(best_value), float(search.empty_value), n_models, search.trials)


# ------------------------------------------------------------------------------------------------
# The streaming schedule shared by FNB and SNB


def _integer_at_least(name: str, value, low: int) -> None:
    integer(value, name, low=low)


class SelectionSearch(WindowSearch):
    """The family of FNB and SNB: a batch search on the history window, from the empty model,
    rerun as the stream grows (the state is :class:`~.search.WindowSearch`'s).

    Schedule. ``learn`` counts the rows that arrive; a search runs on the whole window inside the
    ``learn`` call once ``FIRST_SEARCH`` rows have been seen, then whenever the rows seen have
    grown by the factor ``growth`` since the last search (doubling by default, as VNS's replay
    sessions: O(log n) searches on a stream of n rows while the window fills), or when
    ``refresh`` × (window size) rows have arrived since the last search (the window has been
    renewed: the weights follow drift and level-2 rebuilds; with the default 1, a window of N
    rows costs one search per N rows, O(K·J·log(K·N)) per row). Each search starts afresh from
    the empty model, as in HB24, and its weights replace w* when it ends (anytime: the cost of
    one call is bounded by one search, O(K·N·J·log(K·N))). Until the first search the weights
    are 1: the plain naive Bayes, as PGDMB starts.

    Variables whose ``Context.active`` is False never enter a search and are pinned at 0. A
    variable that appears (``resize``) gets weight 1 before the first search, 0 after (no
    search has selected it yet). All randomness comes from the seed given to ``reset``.

    Its own state: ``_value``, the criterion of the last search's result on its window.
    Subclasses implement ``_search(window, costs, active)``, which sets ``_best`` and ``_value``.

    Refinement (FNB's ``refine``; :mod:`~.refinement`): every search's result restarts the PGDMB
    or VNS refiner, which steps on every batch and gives the predictions' weights.
    """

    def _validate_schedule(self) -> None:
        _integer_at_least("batch_size", self.batch_size, 1)
        if self.max_variables is not None:
            _integer_at_least("max_variables", self.max_variables, 1)
        if not self.penalty >= 0.0:
            raise ValueError(f"penalty must be >= 0, got {self.penalty}")
        if not self.growth > 1.0:
            raise ValueError(f"growth must be > 1, got {self.growth}")
        if self.refresh is not None and not self.refresh > 0.0:
            raise ValueError(f"refresh must be None or > 0, got {self.refresh}")

    # ------------------------------------------------------------------ the family's schedule and hand-over

    def _reset_family(self) -> None:
        self._value: float | None = None  # criterion of the last search's result on its window

    def _due(self, window_rows: int) -> bool:
        seen = self._rows_seen
        if seen < self.FIRST_SEARCH:
            return False
        if self._searches == 0 or seen >= self.growth * self._rows_at_search:
            return True
        return self.refresh is not None and seen - self._rows_at_search >= self.refresh * window_rows

    def _handover(self, window: Batch, costs: np.ndarray, active: np.ndarray, window_rows: int) -> bool:
        """Every search's result replaces w*; True. O(K·N·J·log(K·N))."""
        self._searches += 1
        self._search(window, costs, active)
        self._incumbent_is_nb = False
        self._restart_refiner(self._best)
        return True

    def _search(self, history: Batch, prior_costs: np.ndarray, active: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ diagnostics

    @property
    def criterion_value(self) -> float | None:
        """CR of the last search's result on the window it searched (None before the first)."""
        return self._value if self._ready else None

    _FIELDS = {"best": "run.weights", "rows_at_search": "run.searched_at"}  # (format version 2's names)

    def problems(self) -> list[str]:
        """The window search's broken invariants, then the family's: the criterion value is
        null, and the weights the plain naive Bayes, exactly before the first search. O(K)."""
        found = super().problems()
        if self._ready and not ((self._searches == 0) == (self._value is None) == self._incumbent_is_nb):
            found.append("run.value: must be null exactly before the first search")
        return found

    # -- saved record (docs/saved-model.md): once reset, the weights of the last search (ones
    # before the first), the active mask, the generator of the variable orders, the rows seen and
    # seen at the last search, the number of searches and the criterion of the last result; FNB
    # adds its refine learner, SNB the best subset and the number of models averaged.

    def _run_state(self) -> dict:
        return {
            "weights": self._best,  # (the saved names are those of format version 2)
            "active": self._active,
            "rng": generator_state(self._rng, "run.rng"),
            "rows_seen": self._rows_seen,
            "searched_at": self._rows_at_search,
            "searches": self._searches,
            "value": self._value,
        }

    def _load_run(self, run: dict) -> None:
        self._best, self._active = run["weights"], run["active"]
        self._rng = generator_from_state(run["rng"])
        self._rows_seen, self._rows_at_search, self._searches = run["rows_seen"], run["searched_at"], run["searches"]
        self._incumbent_is_nb = run["searches"] == 0  # (every search of FNB and SNB replaces the weights)
        self._value = None if run["value"] is None else float(run["value"])


#: The parameters FNB and SNB share in their records.
PARAMS = {
    "batch_size": Int(doc="rows per learn call"),
    "penalty": Float(doc="λ, weight of the prior"),
    "max_variables": Optional(Int(), doc="most non-zero weights (null: no limit)"),
}
#: The schedule's parameters of FNB and SNB.
SCHEDULE = {
    "growth": Float(doc="search when the rows seen have grown by this factor"),
    "refresh": Optional(Float(), doc="search when this many windows of rows have come (null: off)"),
}
#: The search state FNB and SNB share in their records.
RUN = {
    "weights": Array("float64", ("n_variables",), **WEIGHT_RANGE, doc="weights of the last search (ones before the first)"),
    "active": Array("bool", ("n_variables",), doc="variables that may enter a search (Level > 0)"),
    "rng": GENERATOR,
    "rows_seen": Int(low=0, doc="rows of the arriving batches"),
    "searched_at": Int(low=0, doc="rows seen at the last search"),
    "searches": Int(low=0, doc="searches since reset"),
    "value": Optional(Float(), doc="criterion of the last search's result (null before the first)"),
}


def search_state(run: dict) -> dict:
    """The state fields of an FNB or SNB record: the sizes, and ``run`` once reset (null before),
    whose fields are the shared ``RUN`` then the learner's own ``run`` fields."""
    return {
        **SIZES,
        "run": Optional(Struct({**RUN, **run}, doc="the search state, once reset"), doc="null before reset"),
    }
