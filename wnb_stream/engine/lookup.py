"""The stacked lookup: every binned variable's level 2 compiled into a few arrays for the hot paths.

Design note. A River model pays per example, so a row is scored in a few NumPy calls whatever
the number of variables K. Each rebuild compiles the binned variables' partitions into

- one stacked table ``(R + 1, J)`` of log p(part | C_j), whose last row is zeros (index
  ``NOWHERE`` = −1 lands there: no contribution);
- a padded matrix ``(K, P + 1)`` of the numeric variables' cut points (``+inf`` padded) with the
  number of cuts in use per row, and the table row of each variable's first and missing part;

and the learner's coefficients are folded into a weighted copy of the table after each of its
steps. One row of numeric values is then located by one comparison with the cut matrix
(compiled, ``_locate.py``) and scored by one compiled sum of its weighted table rows;
categorical values are located by their variable's dict. Variables scored by a density
(per-class Gaussians) are not in the table: they are added one by one.

``version`` counts the compilations, so a ``Row`` can keep its located table rows between a
``predict_proba_one`` and the ``learn_one`` of the same dict.

Incremental compilation (``mark``, ``recompile``). Early in a stream, and on wide streams, a few
variables are rebuilt at almost every example; compiling all K of them each time made the
compilation the largest cost of a 1,000-variable sparse stream. The engine marks the variables
it rebuilt or created, and ``recompile`` writes only those: each gets a new segment at the end of
the table (which grows by doubling; its last row stays the zero row), its cut row and its
first, missing and default rows; the old segment is left as garbage, and a full ``compile``
packs the table again when garbage passes half of it. The arrays then hold the same values at
the rows the locators reach as a full compile would (tested): scores are the same bit for bit.

Incremental weighting (``refresh``). The same holds for what the coefficients make of the
table: after an incremental compilation only the variables it wrote (``reweigh``) get their
weighted rows and their ``shift`` again, and after a learner step only the variables whose
coefficients changed (bit for bit: most of a sparse stream's variables have no slot and keep the
learner's ``outside_weight``). Each of those values is an element-wise product or difference,
the same floats whichever rows are computed together. The sum ``constant`` is not: NumPy sums
the rows of a ``(K, J)`` array (axis 0, J ≥ 2) one after the other in index order, so it is
summed again over the variables whose ``shift`` row is not zero (``terms``), in index order,
which adds the same floats in the same order once the zeros are left out (adding ±0 to a
non-zero sum changes nothing). Only a zero in the result, whose sign the left-out zeros could
set, or a single class (a contiguous column: NumPy's pairwise summation) sums all the rows.

Absent features holding a value (``default``, ``docs/algorithms/summaries.md#absent-features``).
Every variable absent from a row contributes w_k ℓ_kj(default), so a row scores
Σ_k w_k ℓ_kj(default) + Σ_{k in the row} w_k (ℓ_kj(x_k) − ℓ_kj(default)): the first sum is one
per-class constant folded into the ``intercept``, and the weighted table holds the differences
(zero in each variable's default part). A row then costs its non-default entries only, and a
default value given explicitly scores exactly as an absent one. Variables scored by a density
are not folded: their ℓ(default) can be huge (a narrow Gaussian far from the value), and adding
then subtracting it would round away the other terms; each absent one adds its term to the row.
"""

from __future__ import annotations

import math

import numpy as np

from ._locate import encode_rows, locate_and_score, locate_row, locate_rows, row_sums, score_row
from .arrays import extended
from .variable import NOWHERE

__all__ = ["Lookup"]


def _rows_any(a: np.ndarray) -> np.ndarray:
    """``a.any(axis=1)`` of a ``(K, J)`` array, one pass per column: NumPy reduces along a short
    last axis some 50 times slower (0.5 ms at K = 37,000, J = 2, at every row of a wide stream)."""
    if a.ndim != 2 or not 0 < a.shape[1] <= 8:
        return a.any(axis=1)
    out = a[:, 0] != 0
    for j in range(1, a.shape[1]):
        out |= a[:, j] != 0
    return out


class Lookup:
    """Compiled level-2 lookups of all variables, and the prediction's coefficients.

    Attributes (shapes where born): ``table (R + 1, J)``, ``row_variable (R,)``, ``offsets (K,)``
    first table row of each variable, ``cuts (K, P + 1)``, ``n_cuts (K,)``, ``first_row (K,)``,
    ``missing_row (K,)``, ``density`` the variables scored by a density, ``coef (K, J)`` and
    ``learner_bias (J,)`` the learner's coefficients, ``weighted (R + 1, J)`` the table times
    its variables' coefficients, ``bias (J,)`` log prior + learner offsets.

    With a ``default`` value of absent numeric features: ``defaults (K, J)`` each variable's
    ℓ_kj(default) (zeros for categorical variables), ``shift (K, J)`` the same times the
    coefficients, subtracted from ``weighted``; ``intercept (J,)`` = ``bias`` + Σ_k ``shift[k]``, the
    scores of a row with no entry but the density-scored variables' terms (added per row). Without
    one, ``intercept`` is ``bias``.
    """

    default = None  # (a class default: lookups pickled before absent values existed)
    reweigh = None  # (lookups pickled before incremental weighting: weigh everything)
    terms = None
    grown_only = False  # (lookups pickled before it: the coefficients are taken whole)

    def __init__(self, default: float | None = None):
        self.default = default
        self.defaults = None  # (K, J) ℓ_kj(default), with a default value
        self.shift = None  # (K, J) defaults × coef
        self.constant = None  # (J,) Σ shift over the binned variables
        self.intercept = np.zeros(0)
        self.stale = True  # level 2 changed since ``compile``
        self.changed: set | None = None  # variables changed since then (None: unknown, compile all)
        self.used = 0  # table rows holding segments, garbage included (the zero row aside)
        self.garbage = 0  # rows of segments replaced since the last full compile
        self.size = np.zeros(0, dtype=np.intp)  # (K,) rows of each variable's segment
        self.stale_coef = True  # the learner stepped since ``refresh``
        # the coefficients are stale only because variables were added since they were taken
        # (the learner unchanged): ``take_new_coefficients`` gives the new ones theirs, O(new)
        self.grown_only = False
        self.stale_prior = True  # the class counts changed since ``refresh``
        self.offsets = np.zeros(0, dtype=np.intp)
        self.table = np.zeros((1, 0))
        self.row_variable = np.zeros(0, dtype=np.intp)
        self.cuts = np.zeros((0, 1))
        self.n_cuts = np.zeros(0, dtype=np.intp)
        self.first_row = np.zeros(0, dtype=np.intp)
        self.missing_row = np.zeros(0, dtype=np.intp)
        self.density: list[int] = []
        self.coef = np.zeros((0, 0))
        self.learner_bias = np.zeros(0)
        self.weighted = np.zeros((1, 0))
        self.bias = np.zeros(0)
        self.version = 0
        # variables whose weighted rows and ``shift`` the next ``refresh`` computes (None: all of them)
        self.reweigh: set | None = None
        self.terms = None  # (K,) bool, with a default value: the folded variables whose ``shift`` row is not zero

    # ------------------------------------------------------------------ building
    def mark(self, indices) -> None:
        """Level 2 of the variables ``indices`` changed, or they are new: they need compiling."""
        if not self.stale:
            self.stale, self.changed = True, set()
        if self.changed is not None:
            self.changed.update(int(k) for k in indices)

    def invalidate(self) -> None:
        """Anything may have changed: the next compilation is a full one."""
        self.stale, self.changed = True, None
        self.reweigh = None

    def fresh(self) -> bool:
        """True when ``refresh`` has nothing to do."""
        return not (self.stale or self.stale_coef or self.stale_prior or self.reweigh is None or self.reweigh)

    def recompile(self, variables: list, n_classes: int) -> None:
        """Compile what changed since the last compilation (``mark``), or everything."""
        K, J = len(variables), n_classes
        changed = self.changed
        incremental = (
            changed  # nothing marked yet stale: unknown changes
            and self.version > 0
            and self.table.shape[1] == J
            and K >= len(self.offsets)
            and len(self.size) == len(self.offsets)
            and 2 * (self.garbage + int(self.size[[k for k in changed if k < len(self.size)]].sum())) <= max(self.used, 64)
        )
        if incremental:
            self._update(variables, J, sorted(changed))
        else:
            self.compile(variables, J)

    def _segments(self, variables: list, ks: list, J: int, start: int):
        """The segments of the variables ``ks`` laid out one after the other from table row
        ``start``: ``rows (R, J)``, ``owners (R,)``, and per variable of ``ks`` its ``offsets``,
        ``sizes``, ``first_row`` and ``missing_row``; the ``(k, cuts)`` of the numeric ones with a
        first part; the density-scored ones. A binned variable's segment is its ``log_prob`` rows (zeros for the classes it was
        built without), its first and missing parts are located in it (a finite value: first part
        plus the cuts below it), and a numeric variable with no missing part gets, with a default
        value, a row of zeros of its own: its missing values point there, and its weighted row then
        cancels the variable's default term. One Python step per variable reads its level 2; the
        rest is a few NumPy calls (a class threshold recompiles every variable, 10^5 on a wide
        sparse stream)."""
        own = self.default is not None
        sizes, firsts, missings, parts, full, narrow, cuts, density = [], [], [], [], [], [], [], []
        for i, k in enumerate(ks):
            variable = variables[k]
            log_prob = None if variable.density else variable.log_prob
            if log_prob is None:
                if variable.density:
                    density.append(k)
                sizes.append(0)
                firsts.append(NOWHERE)
                missings.append(NOWHERE)
                parts.append(0)
                continue
            n_parts = log_prob.shape[0]
            numeric = variable.kind == "numeric"
            missing = variable.missing_part
            n_rows = n_parts + (own and numeric and missing == NOWHERE)
            sizes.append(n_rows)
            parts.append(n_parts)
            if n_rows == 0:
                firsts.append(NOWHERE)
                missings.append(NOWHERE)
                continue
            if numeric and variable.first_part != NOWHERE:
                firsts.append(variable.first_part)
                cuts.append((k, variable.cuts))
            else:
                firsts.append(NOWHERE)
            missings.append(missing if missing != NOWHERE else (n_rows - 1 if own and numeric else NOWHERE))
            (full if log_prob.shape[1] == J else narrow).append((i, log_prob))
        sizes = np.array(sizes, dtype=np.intp)
        ends = np.cumsum(sizes)
        local = ends - sizes  # each segment's first row, from ``start``
        rows = np.zeros((int(ends[-1]) if len(ends) else 0, J))
        if full:
            at = np.array([i for i, _ in full], dtype=np.intp)
            n_parts = np.array(parts, dtype=np.intp)[at]
            part_ends = np.cumsum(n_parts)
            rows[np.arange(int(part_ends[-1])) + np.repeat(local[at] - (part_ends - n_parts), n_parts)] = np.concatenate([lp for _, lp in full])
        for i, log_prob in narrow:  # (rebuilt when fewer classes existed)
            rows[local[i] : local[i] + log_prob.shape[0], : log_prob.shape[1]] = log_prob
        owners = np.repeat(np.asarray(ks, dtype=np.intp), sizes)
        firsts, missings = np.array(firsts, dtype=np.intp), np.array(missings, dtype=np.intp)
        offsets = start + local
        first_row = np.where(firsts == NOWHERE, NOWHERE, offsets + firsts)
        missing_row = np.where(missings == NOWHERE, NOWHERE, offsets + missings)
        return rows, owners, offsets, sizes, first_row, missing_row, cuts, density

    @staticmethod
    def _cut_rows(cuts: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(variables, n_cuts, row, column, values)`` of the cut lists ``(k, cuts)``: where each cut
        goes in the cut matrix (row ``k``, from column 0 on), and its value."""
        ks = np.array([k for k, _ in cuts], dtype=np.intp)
        lengths = np.array([len(c) for _, c in cuts], dtype=np.intp)
        ends = np.cumsum(lengths)
        column = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths, lengths)
        values = np.array([x for _, c in cuts for x in c], dtype=float)
        return ks, lengths, np.repeat(ks, lengths), column, values

    def _update(self, variables: list, J: int, ks: list) -> None:
        """Compile the variables ``ks`` only (``recompile``)."""
        K, old = len(variables), len(self.offsets)
        if K > old:  # new variables: grow the per-variable arrays
            # (in the room their buffers keep: a row of a wide sparse stream brings dozens)
            self.offsets = extended(self.offsets, K, 0)
            self.first_row = extended(self.first_row, K, NOWHERE)
            self.missing_row = extended(self.missing_row, K, NOWHERE)
            self.n_cuts = extended(self.n_cuts, K, 0)
            self.size = extended(self.size, K, 0)
            self.cuts = extended(self.cuts, K, np.inf)
            if self.defaults is not None:
                self.defaults = extended(self.defaults, K, 0.0)
            if not self.stale_coef:  # (the coefficients of the new variables)
                self.grown_only, self.stale_coef = True, True
        rows, owners, offsets, sizes, first_row, missing_row, cuts, density = self._segments(variables, ks, J, self.used)
        need = self.used + len(rows) + 1  # + the zero row
        if need > len(self.table):  # grow by doubling; new rows are zeros, the last one the zero row
            capacity = max(need, 2 * len(self.table))
            table = np.zeros((capacity, J))
            table[: self.used] = self.table[: self.used]
            row_variable = np.zeros(capacity - 1, dtype=np.intp)
            row_variable[: self.used] = self.row_variable[: self.used]
            self.table, self.row_variable = table, row_variable
        at = np.array(ks, dtype=np.intp)
        self.garbage += int(self.size[at].sum())
        self.table[self.used : self.used + len(rows)] = rows
        self.row_variable[self.used : self.used + len(rows)] = owners
        self.offsets[at], self.first_row[at], self.missing_row[at], self.size[at] = offsets, first_row, missing_row, sizes
        self.used += len(rows)
        self.cuts[at] = np.inf
        self.n_cuts[at] = 0
        if cuts:
            cut_ks, n_cuts, cut_row, cut_column, values = self._cut_rows(cuts)
            width = 1 + int(n_cuts.max())
            if width > self.cuts.shape[1]:
                self.cuts = np.concatenate([self.cuts, np.full((K, width - self.cuts.shape[1]), np.inf)], axis=1)
            self.cuts[cut_row, cut_column] = values
            self.n_cuts[cut_ks] = n_cuts
        self.density = sorted(set(self.density).union(density))
        if self.defaults is not None:
            self.defaults[ks] = self._defaults(variables, np.array(ks, dtype=np.intp), J)
        self._compiled()
        if self.reweigh is not None:  # (the coefficients stay: only these variables' weighted rows change)
            self.reweigh.update(ks)

    def _compiled(self) -> None:
        self.stale = False
        self.changed = set()
        self.version += 1

    def compile(self, variables: list, n_classes: int) -> None:
        """Compile the binned variables' level 2 (``variables`` in index order, J classes)."""
        K, J = len(variables), n_classes
        rows, owners, offsets, size, first_row, missing_row, cuts, density = self._segments(variables, range(K), J, 0)
        self.offsets, self.first_row, self.missing_row = offsets, first_row, missing_row
        start = len(rows)
        width = 1 + max([len(c) for _, c in cuts], default=0)  # at least one +inf per row
        cut_matrix = np.full((K, width), np.inf)  # (K, P + 1)
        n_cuts = np.zeros(K, dtype=np.intp)  # (K,) cuts in use in each row of the matrix
        if cuts:
            cut_ks, lengths, cut_row, cut_column, values = self._cut_rows(cuts)
            cut_matrix[cut_row, cut_column] = values
            n_cuts[cut_ks] = lengths
        self.table = np.concatenate([rows, np.zeros((1, J))])  # the last row: NOWHERE (index -1), no contribution
        self.row_variable = owners
        self.cuts = cut_matrix
        self.n_cuts = n_cuts
        self.density = density
        self.size, self.used, self.garbage = size, start, 0
        self.defaults = None if self.default is None else self._defaults(variables, np.arange(K), J)
        self._compiled()
        self.stale_coef, self.grown_only = True, False  # every row moved: everything is weighed again
        self.reweigh = None

    def _defaults(self, variables: list, ks: np.ndarray, J: int) -> np.ndarray:
        """``(len(ks), J)`` ℓ_kj(default) of the variables ``ks`` (zeros for categorical ones)."""
        defaults = np.zeros((len(ks), J))
        binned = np.flatnonzero(self.first_row[ks] != NOWHERE)
        if len(binned):
            rows = self.locate_block(ks[binned], np.full((1, len(binned)), float(self.default)))[0]
            defaults[binned] = self.table[rows]
        density = set(self.density)
        for i, k in enumerate(ks.tolist()):
            if k in density:
                ll = variables[k].log_lik_one(float(self.default))
                if ll is not None:
                    defaults[i, : len(ll)] = ll
        return defaults

    def prior_changed(self) -> None:
        """The class counts changed: the bias takes the log prior again at the next refresh. O(1)."""
        self.stale_prior = True

    def coefficients_changed(self) -> None:
        """The learner stepped or was resized: the next refresh takes its coefficients. O(1)."""
        self.stale_coef, self.grown_only = True, False

    def refresh(self, variables: list, n_classes: int, coef: np.ndarray, bias: np.ndarray, log_prior: np.ndarray) -> None:
        """Bring the lookups, the coefficients and the bias up to date, given the learner's
        ``coef (K, J)`` and ``bias (J,)`` and the ``(J,)`` log prior (each taken only if it
        changed). A caller for whom these cost something asks in steps: ``compile_due``, then
        ``take_coefficients`` if it says so, ``weigh``, then ``take_prior`` if it says so."""
        if self.compile_due(variables, n_classes):
            self.take_coefficients(coef, bias)
        if self.weigh():
            self.take_prior(log_prior)

    def compile_due(self, variables: list, n_classes: int) -> bool:
        """Compile what changed since the last compilation (if anything); True when the lookups
        want the learner's coefficients (``take_coefficients``)."""
        if self.stale:
            self.recompile(variables, n_classes)
        return self.stale_coef

    def take_coefficients(self, coef, bias) -> None:
        """The learner's ``coef (K, J)`` and ``bias (J,)``: the variables whose coefficients
        changed (bit for bit), and the new ones, are weighed again. O(K · J)."""
        coef = np.asarray(coef, dtype=float)  # (K, J)
        old = self.coef
        if self.reweigh is not None and coef.ndim == old.ndim == 2 and coef.shape[1] == old.shape[1] and len(coef) >= len(old):
            # the variables whose coefficients changed (bit for bit), and the new ones
            n = len(old)
            moved = np.ascontiguousarray(coef[:n]).view(np.uint64) != np.ascontiguousarray(old).view(np.uint64)
            self.reweigh.update((np.flatnonzero(moved) // moved.shape[1]).tolist())  # (a set: repeats are one)
            self.reweigh.update(range(n, len(coef)))
        else:
            self.reweigh = None
        self.coef = coef
        self.learner_bias = np.asarray(bias, dtype=float)  # (J,)
        self.stale_coef = self.grown_only = False
        self.stale_prior = True

    def take_new_coefficients(self, outside: float) -> None:
        """The learner is as it was at the last ``take_coefficients`` and variables were added
        since (``grown_only``): each new variable takes the coefficient ``outside`` (the learner's
        ``outside_weight``: a new variable has no slot in level 3) and is weighed again, as
        ``take_coefficients`` with the learner's whole ``(K, J)`` would do, with nothing else
        moved. O(new variables) where that is O(K): a row of a wide sparse stream adds a dozen
        variables to 10^5."""
        n, K = len(self.coef), len(self.offsets)
        self.coef = extended(self.coef, K, outside)
        if self.reweigh is not None:
            self.reweigh.update(range(n, K))
        self.stale_coef = self.grown_only = False
        self.stale_prior = True

    def weigh(self) -> bool:
        """Weigh the table rows due (``reweigh``); True when the bias wants the log prior (``take_prior``)."""
        if self.reweigh is None or self.reweigh:
            self._weigh(self.reweigh)
            self.reweigh = set()
            self.stale_prior = True
        return self.stale_prior

    def take_prior(self, log_prior: np.ndarray) -> None:
        """The ``(J,)`` log prior: the bias and the intercept. O(J)."""
        self.bias = log_prior + self.learner_bias
        self.intercept = self.bias if self.defaults is None else self.bias + self.constant
        self.stale_prior = False

    def _weigh(self, ks) -> None:
        """``weighted``, ``shift`` and ``constant`` for the coefficients ``coef``: of every variable
        (``ks`` None), or recomputed for the variables ``ks`` only (see the module docstring)."""
        K = len(self.coef)
        if ks is not None and (self.weighted.shape[1] != self.table.shape[1] or len(self.offsets) != K or 8 * len(ks) > K):
            ks = None  # (most variables: one pass over the table is cheaper)
        if ks is None:
            self.weighted = np.zeros_like(self.table)  # (R + 1, J), the last row stays zero
            self.weighted[:-1] = self.table[:-1] * self.coef[self.row_variable]
            if self.defaults is not None:
                self.shift = self.defaults * self.coef
                self.weighted[:-1] -= self.shift[self.row_variable]
                folded = np.ones(len(self.shift), dtype=bool)
                folded[self.density] = False  # the density-scored variables' terms are added per row
                self.constant = self.shift[folded].sum(axis=0)
                self.terms = folded & _rows_any(self.shift)
            return
        if len(self.weighted) != len(self.table):  # the table grew: its rows kept their places
            weighted = np.zeros_like(self.table)
            kept = min(len(self.weighted), len(self.table)) - 1  # (the old zero row onwards holds no kept segment)
            weighted[:kept] = self.weighted[:kept]
            self.weighted = weighted
        ks = np.array(sorted(ks), dtype=np.intp)
        sizes = self.size[ks]
        ends = np.cumsum(sizes)
        rows = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(self.offsets[ks] - (ends - sizes), sizes)  # their segments
        owners = self.row_variable[rows]
        self.weighted[rows] = self.table[rows] * self.coef[owners]
        if self.defaults is None:
            return
        J = self.coef.shape[1]
        if self.shift is None or self.shift.shape[1] != J or self.terms is None or len(self.terms) != len(self.shift) or len(self.shift) > K:
            self.shift = self.defaults * self.coef
            folded = np.ones(K, dtype=bool)
            folded[self.density] = False
            self.terms = folded & _rows_any(self.shift)
        else:
            if len(self.shift) < K:  # new variables (all of them in ``ks``)
                self.shift = extended(self.shift, K, 0.0)
                self.terms = extended(self.terms, K, False)
            self.shift[ks] = self.defaults[ks] * self.coef[ks]
            self.terms[ks] = _rows_any(self.shift[ks])
            if self.density:
                self.terms[self.density] = False
        self.weighted[rows] -= self.shift[owners]
        constant = self.shift[np.flatnonzero(self.terms)].sum(axis=0)
        if len(constant) < 2 or not constant.all():  # (the sign of a zero, or a pairwise sum: all the rows)
            folded = np.ones(K, dtype=bool)
            folded[self.density] = False
            constant = self.shift[folded].sum(axis=0)
        self.constant = constant

    # ------------------------------------------------------------------ locating
    def locate(self, row, variables: list) -> tuple[np.ndarray, np.ndarray]:
        """Variables of a ``Row`` and their table rows ``(m,)`` each (``NOWHERE`` → the zero row)."""
        if row.located is not None and row.located[0] == self.version:
            return row.located[1:]
        ks, rows = row.numeric, locate_row(self.cuts, self.n_cuts, self.first_row, self.missing_row, row.numeric, row.values)
        if row.categorical:
            found = []
            for k, value in row.categorical:
                part = variables[k].locate(value)
                found.append(NOWHERE if part == NOWHERE else self.offsets[k] + part)
            ks = np.concatenate([ks, np.array([k for k, _ in row.categorical], dtype=np.intp)])
            rows = np.concatenate([rows, np.array(found, dtype=np.intp)])
        row.located = (self.version, ks, rows)
        return ks, rows

    def locate_block(self, ks: np.ndarray, block: np.ndarray) -> np.ndarray:
        """Table rows ``(n, a)`` of a block of values ``(n, a)`` of the numeric variables ``ks (a,)``.

        A finite value lies in the first row plus the number of cuts below it (``bisect_left``);
        a missing value (NaN) in the missing part's row.
        """
        return locate_rows(self.cuts, self.n_cuts, self.first_row, self.missing_row, ks, block)

    def encode_block(self, ks: np.ndarray, block: np.ndarray, present: np.ndarray, out: np.ndarray, at) -> None:
        """``out[:, at, :J] = ℓ`` of a block of values ``(n, a)`` of the numeric variables ``ks (a,)``
        (zeros where ``present (n, a)`` is False); ``at``: their slots, an array or a slice. The
        compiled lookups write each column to its slot."""
        if isinstance(at, slice):
            at = np.arange(at.start, at.stop, dtype=np.intp)
        encode_rows(self.cuts, self.n_cuts, self.first_row, self.missing_row, ks, block, present, self.table, out, at)

    def categorical_rows(self, k: int, parts: np.ndarray) -> np.ndarray:
        """Table rows of parts ``(n,)`` of the categorical variable ``k`` (``NOWHERE`` kept)."""
        return np.where(parts == NOWHERE, NOWHERE, self.offsets[k] + parts)

    def density_values(self, row) -> list:
        """(variable, value or None) of a ``Row``'s density-scored variables."""
        if not self.density:
            return []
        density = np.isin(row.numeric, self.density)
        return [(k, None if math.isnan(v) else v) for k, v in zip(row.numeric[density].tolist(), row.values[density].tolist())]

    # ------------------------------------------------------------------ scoring (after ``refresh``)
    def scores_one(self, row, variables: list) -> np.ndarray:
        """``(J,)`` unnormalised log posterior of one ``Row``."""
        if row.categorical or (row.located is not None and row.located[0] == self.version):
            _, rows = self.locate(row, variables)
            scores = score_row(self.weighted, rows, self.intercept)  # (J,) intercept + Σ weighted[rows]
        else:  # (the usual first call on a numeric row: located and scored in one pass, as above)
            rows, scores = locate_and_score(self.cuts, self.n_cuts, self.first_row, self.missing_row, row.numeric,
                                            row.values, self.weighted, self.intercept)  # fmt: skip
            row.located = (self.version, row.numeric, rows)
        held = self.density_values(row)
        for k, value in held:
            ll = variables[k].log_lik_one(value)
            if ll is not None:
                scores[: len(ll)] += self.coef[k, : len(ll)] * ll
        if self.shift is not None and self.density:
            self.add_absent_densities(scores, {k for k, _ in held})
        return scores

    def add_absent_densities(self, scores: np.ndarray, held) -> None:
        """``scores (…, J) +=`` the default terms of the density-scored variables not in ``held``."""
        for k in self.density:
            if k not in held:
                scores += self.shift[k]

    def add_block(self, scores: np.ndarray, ks: np.ndarray, block: np.ndarray, variables: list, absent=None) -> None:
        """``scores (n, J) +=`` the numeric variables' terms of a block of values ``(n, a)`` (``ks (a,)``);
        ``absent (n, a)``, if given, marks cells that score nothing (keys absent from a dict)."""
        rows = self.locate_block(ks, block)
        if absent is not None:
            rows[absent] = NOWHERE
        scores += row_sums(self.weighted, rows)
        for i, k in enumerate(ks.tolist()):
            variable = variables[k]
            if variable.density:
                ll = variable.log_lik_many(block[:, i])
                if absent is not None:
                    ll[absent[:, i]] = 0.0
                if ll.shape[1]:
                    scores[:, : ll.shape[1]] += ll * self.coef[k, : ll.shape[1]]

    def scores_frame(self, frame, n: int, registry) -> np.ndarray:
        """``(n, J)`` unnormalised log posteriors of a parsed batch (``rows.Frame``); ``registry``
        names the variables (``index``, ``variables``)."""
        scores = np.tile(self.intercept, (n, 1))  # (n, J)
        known = [(i, registry.index.get(name)) for i, name in enumerate(frame.numeric_names)]
        known = [(i, k) for i, k in known if k is not None]
        if known:
            at = np.array([i for i, _ in known], dtype=np.intp)
            ks = np.array([k for _, k in known], dtype=np.intp)
            absent = None if frame.numeric_absent is None else frame.numeric_absent[:, at]
            self.add_block(scores, ks, frame.numeric[:, at], registry.variables, absent)
        if self.shift is not None and self.density:
            self.add_absent_densities(scores, {k for _, k in known})
        for (name, values, _), absent in zip(frame.categorical, frame.categorical_absent or [None] * len(frame.categorical)):
            k = registry.index.get(name)
            if k is None or registry.variables[k].log_prob is None:
                continue
            rows = self.categorical_rows(k, registry.variables[k].locate_many(values))
            if absent is not None:
                rows[absent] = NOWHERE
            scores += self.weighted[rows]
        return scores

    def memory_usage(self) -> int:
        return int(self.table.nbytes + self.weighted.nbytes + self.cuts.nbytes + self.coef.nbytes)

    def variable_bytes(self, k: int) -> int:
        """Bytes of the compiled arrays that variable ``k`` holds (its table and weighted rows,
        its cut row, its coefficients): what compiling without it saves, about."""
        row = self.table.shape[1] * self.table.itemsize
        rows = int(self.size[k]) if k < len(self.size) else 0
        return 2 * rows * row + self.cuts.shape[1] * self.cuts.itemsize + row

    def _check(self, n_variables: int, n_classes: int) -> None:
        K, J = n_variables, n_classes
        if self.stale:
            return
        assert self.table.shape == (len(self.row_variable) + 1, J) and not self.table[-1].any()
        assert self.cuts.shape[0] == len(self.first_row) == len(self.missing_row) == len(self.n_cuts) == K
        assert np.all(self.n_cuts < self.cuts.shape[1]) and np.all(np.isinf(self.cuts[np.arange(K), self.n_cuts]))
        assert np.all(self.first_row < len(self.table) - 1) and np.all(self.missing_row < len(self.table) - 1)
        if self.fresh():
            assert self.weighted.shape == self.table.shape and not self.weighted[-1].any()
