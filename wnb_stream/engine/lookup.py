"""The stacked lookup: every binned variable's level 2 compiled into a few arrays for the hot paths.

Design note. A River model pays per example, so a row is scored in a few NumPy calls whatever
the number of variables K. Each rebuild compiles the binned variables' partitions into

- one stacked table ``(R + 1, J)`` of log p(part | C_j), whose last row is zeros (index
  ``NOWHERE`` = −1 lands there: no contribution);
- a padded matrix ``(K, P + 1)`` of the numeric variables' cut points (``+inf`` padded) with the
  number of cuts in use per row, and the table row of each variable's first and missing part;

and the learner's coefficients are folded into a weighted copy of the table after each of its
steps. One row of numeric values is then located by one comparison with the cut matrix
(compiled, ``_locate.py``) and scored by one gather and one sum; categorical values are located
by their variable's dict. Variables scored by a density (per-class Gaussians) are not in the
table: they are added one by one.

``version`` counts the compilations, so a ``Row`` can keep its located table rows between a
``predict_proba_one`` and the ``learn_one`` of the same dict.
"""

from __future__ import annotations

import math

import numpy as np

from ..variable import NOWHERE
from ._locate import encode_rows, locate_rows, row_sums

__all__ = ["Lookup"]


class Lookup:
    """Compiled level-2 lookups of all variables, and the prediction's coefficients.

    Attributes (shapes where born): ``table (R + 1, J)``, ``row_variable (R,)``, ``offsets (K,)``
    first table row of each variable, ``cuts (K, P + 1)``, ``n_cuts (K,)``, ``first_row (K,)``,
    ``missing_row (K,)``, ``density`` the variables scored by a density, ``coef (K, J)`` and
    ``learner_bias (J,)`` the learner's coefficients, ``weighted (R + 1, J)`` the table times
    its variables' coefficients, ``bias (J,)`` log prior + learner offsets.
    """

    def __init__(self):
        self.stale = True  # level 2 changed since ``compile``
        self.stale_coef = True  # the learner stepped since ``refresh``
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

    # ------------------------------------------------------------------ building
    def compile(self, variables: list, n_classes: int) -> None:
        """Compile the binned variables' level 2 (``variables`` in index order, J classes)."""
        K, J = len(variables), n_classes
        offsets = np.zeros(K, dtype=np.intp)
        first_row = np.full(K, NOWHERE, dtype=np.intp)
        missing_row = np.full(K, NOWHERE, dtype=np.intp)
        pieces, owners, cuts, density, start = [], [], [], [], 0
        for k, variable in enumerate(variables):
            offsets[k] = start
            if variable.density:
                density.append(k)
                continue
            if variable.log_prob is None:
                continue
            n_parts = variable.log_prob.shape[0]
            table = np.zeros((n_parts, J))
            table[:, : variable.log_prob.shape[1]] = variable.log_prob
            pieces.append(table)
            owners.append(np.full(n_parts, k, dtype=np.intp))
            if variable.kind == "numeric" and variable.first_part != NOWHERE:
                first_row[k] = start + variable.first_part
                cuts.append((k, variable.cuts))
            if variable.missing_part != NOWHERE:
                missing_row[k] = start + variable.missing_part
            start += n_parts
        width = 1 + max([len(c) for _, c in cuts], default=0)  # at least one +inf per row
        cut_matrix = np.full((K, width), np.inf)  # (K, P + 1)
        n_cuts = np.zeros(K, dtype=np.intp)  # (K,) cuts in use in each row of the matrix
        for k, c in cuts:
            cut_matrix[k, : len(c)] = c
            n_cuts[k] = len(c)
        pieces.append(np.zeros((1, J)))  # the row of NOWHERE (index -1): no contribution
        self.offsets = offsets
        self.table = np.concatenate(pieces)
        self.row_variable = np.concatenate(owners) if owners else np.zeros(0, dtype=np.intp)
        self.cuts = cut_matrix
        self.n_cuts = n_cuts
        self.first_row = first_row
        self.missing_row = missing_row
        self.density = density
        self.stale = False
        self.stale_coef = True
        self.version += 1

    def refresh(self, variables: list, n_classes: int, coefficients, log_prior) -> None:
        """Bring the lookups, the coefficients and the bias up to date.

        ``coefficients()`` returns the learner's ``coef (K, J)`` and ``bias (J,)``; ``log_prior()``
        the ``(J,)`` log prior. Each is called only when it changed.
        """
        if self.stale:
            self.compile(variables, n_classes)
        if self.stale_coef:
            coef, bias = coefficients()
            self.coef = np.asarray(coef, dtype=float)  # (K, J)
            self.learner_bias = np.asarray(bias, dtype=float)  # (J,)
            self.weighted = np.zeros_like(self.table)  # (R + 1, J), the last row stays zero
            self.weighted[:-1] = self.table[:-1] * self.coef[self.row_variable]
            self.stale_coef = False
            self.stale_prior = True
        if self.stale_prior:
            self.bias = log_prior() + self.learner_bias
            self.stale_prior = False

    # ------------------------------------------------------------------ locating
    def locate(self, row, variables: list) -> tuple[np.ndarray, np.ndarray]:
        """Variables of a ``Row`` and their table rows ``(m,)`` each (``NOWHERE`` → the zero row)."""
        if row.located is not None and row.located[0] == self.version:
            return row.located[1:]
        ks, rows = row.numeric, self.locate_block(row.numeric, row.values.reshape(1, -1))[0]
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
        (zeros where ``present (n, a)`` is False); ``at`` is ``ks`` or the same as a slice."""
        J = self.table.shape[1]
        if isinstance(at, slice):  # a view: the compiled lookups write into it
            encode_rows(self.cuts, self.n_cuts, self.first_row, self.missing_row, ks, block, present, self.table, out[:, at, :J])
        else:
            rows = self.locate_block(ks, block)  # (n, a)
            rows[~present] = NOWHERE
            out[:, at, :J] = self.table[rows]

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
        _, rows = self.locate(row, variables)
        scores = self.bias + np.add.reduce(self.weighted[rows], axis=0)  # (J,)
        for k, value in self.density_values(row):
            ll = variables[k].log_lik_one(value)
            if ll is not None:
                scores[: len(ll)] += self.coef[k, : len(ll)] * ll
        return scores

    def add_block(self, scores: np.ndarray, ks: np.ndarray, block: np.ndarray, variables: list) -> None:
        """``scores (n, J) +=`` the numeric variables' terms of a block of values ``(n, a)`` (``ks (a,)``)."""
        scores += row_sums(self.weighted, self.locate_block(ks, block))
        for i, k in enumerate(ks.tolist()):
            variable = variables[k]
            if variable.density:
                ll = variable.log_lik_many(block[:, i])
                if ll.shape[1]:
                    scores[:, : ll.shape[1]] += ll * self.coef[k, : ll.shape[1]]

    def scores_frame(self, frame, n: int, registry) -> np.ndarray:
        """``(n, J)`` unnormalised log posteriors of a parsed batch (``rows.Frame``); ``registry``
        names the variables (``index``, ``variables``)."""
        scores = np.tile(self.bias, (n, 1))  # (n, J)
        known = [(i, registry.index.get(name)) for i, name in enumerate(frame.numeric_names)]
        known = [(i, k) for i, k in known if k is not None]
        if known:
            at = np.array([i for i, _ in known], dtype=np.intp)
            ks = np.array([k for _, k in known], dtype=np.intp)
            self.add_block(scores, ks, frame.numeric[:, at], registry.variables)
        for name, values, _ in frame.categorical:
            k = registry.index.get(name)
            if k is None or registry.variables[k].log_prob is None:
                continue
            scores += self.weighted[self.categorical_rows(k, registry.variables[k].locate_many(values))]
        return scores

    def memory_usage(self) -> int:
        return int(self.table.nbytes + self.weighted.nbytes + self.cuts.nbytes + self.coef.nbytes)

    def _check(self, n_variables: int, n_classes: int) -> None:
        K, J = n_variables, n_classes
        if self.stale:
            return
        assert self.table.shape == (len(self.row_variable) + 1, J) and not self.table[-1].any()
        assert self.cuts.shape[0] == len(self.first_row) == len(self.missing_row) == len(self.n_cuts) == K
        assert np.all(self.n_cuts < self.cuts.shape[1]) and np.all(np.isinf(self.cuts[np.arange(K), self.n_cuts]))
        assert np.all(self.first_row < len(self.table) - 1) and np.all(self.missing_row < len(self.table) - 1)
        if not self.stale_coef:
            assert self.weighted.shape == self.table.shape and not self.weighted[-1].any()
