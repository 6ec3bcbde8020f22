"""Forgetting: fading the past, and the response to a change of concept.

At a check point (every ``drift.EVERY`` rows) the engine fades everything learned by the
``half_life``'s factor (``fade``), and gives the monitor the errors of the rows since the last
one (``_watch``). A rise the monitor finds is checked twice before anything is forgotten: once
more after the learner re-fits its weights on the rows before the rise (``_refit``,
``_retest``), and within the classes, so that a change of the class mix alone forgets nothing
(``_rose_within_classes``; ``docs/algorithms/drift.md``). Then ``forget`` keeps only the rows
since the change. ``Forgetting`` holds these steps of ``Engine`` (a part of its class, kept
here); they change the parts through their verbs (``Monitor.snapshot``/``restore``,
``Classes.recount``, ``Registry.renew``, ``History.fade`` …).
"""

from __future__ import annotations

import math

import numpy as np

from ..tables import Batch
from .arrays import as_slice
from .drift import EVERY
from .variable import Variable

__all__ = ["FIRST_REFIT", "MIN_STRATUM", "Forgetting"]

#: Weighted rows a refit needs before the rise (``Engine._refit``): as a learner's first search.
FIRST_REFIT = 32

#: Older rows of a class that give its error rate when a rise is checked within the classes
#: (``Engine._rose_within_classes``).
MIN_STRATUM = 32


class Forgetting:
    """The ``Engine``'s steps of fading and forgetting (``fade``, ``_watch`` and its checks, ``forget``)."""

    def fade(self, factor: float) -> None:
        """Multiply the weight of everything learned so far by ``factor`` (0 < factor ≤ 1).

        Every summary decays (``Summary.decay``), so do the class counts and the sample weights of
        the history's rows: a row a numeric summary has not taken yet enters it with its faded
        weight, and the learners judge older rows with less weight. All share the stream's
        clock, so the model is the one built on the stream with the weight of each example
        times ``factor`` per check point since it came (forward decay).
        """
        for variable in self.registry.variables:
            variable.summary.decay(factor)
        self.classes.fade(factor)
        self.history.fade(factor)
        self.lookup.prior_changed()

    def _watch(self) -> None:
        """A check point: the 0/1 errors of the rows since the last one go to the monitor; on a
        rise of the error, forget what came before the change.

        A row's error is that of the current model on the row's encoding in the history (level 2
        as rebuilt so far, the learner's current weights): both paths of learning meet here in
        the same state, so they detect the same changes.
        """
        h, monitor = self.history, self.monitor
        m = min(EVERY, h.size)
        if len(self.classes) < 2 or m == 0:
            return
        before = monitor.snapshot()
        errors = self._errors(m)
        since = monitor.add(errors)
        if since and self._refit(since):
            since = self._retest(before, errors, since)
        if since and not self._rose_within_classes(since):
            monitor.dismiss()  # the class mix changed, not the concept: nothing is forgotten
            since = 0
        if since:
            self.forget(since)

    def _rose_within_classes(self, since: int) -> bool:
        """Whether the error rose within a class, not only through the mix of classes: the check
        of a rise found in the ``since`` newest weighted rows against the older rows of the
        history (``docs/algorithms/drift.md#a-rise-of-the-class-mix-alone-check-within-classes``).

        Every weighted row of the history is scored by the current model. A class j with at
        least ``MIN_STRATUM`` older rows gives its older error rate p_j; its n_j newer rows would
        make n_j p_j errors if nothing changed within it, with variance
        V_j = n_j p_j (1 − p_j)(1 + n_j / n⁰_j) (n⁰_j older rows). The rise holds when one class
        makes more than n_j p_j + ε_j, ε_j = sqrt(2 V_j ln(4nJ/δ)) + 2/3 ln(4nJ/δ) (the monitor's
        Bernstein bound at δ/2, shared among the J classes; n the rows compared), or when the
        classes together make more than Σ n_j p_j + ε, ε the same bound on Σ V_j at the other
        δ/2 (a change that raises every class a little, as one that swaps which variables tell
        the classes apart: one class's rows are too few to show it). Newer rows of a class
        the older rows hardly hold cannot be compared (a sorted file's next class). A rise
        reaching back past all but ``MIN_STRATUM`` rows of the history cannot be checked and
        holds, as before this check. Cost O(history × K × J), at an alarm only.
        """
        h, J = self.history, len(self.classes)
        rows = h.recent(h.size)  # oldest first
        y = h.y[rows][h.sample_weight[rows] > 0]  # the weighted rows, as ``_errors`` scores them
        cut = len(y) - since
        if cut < MIN_STRATUM:
            return True
        errors = self._errors(h.size).astype(float)
        old_rows, new_rows = np.bincount(y[:cut], minlength=J), np.bincount(y[cut:], minlength=J)
        old_errors, new_errors = np.bincount(y[:cut], errors[:cut], J), np.bincount(y[cut:], errors[cut:], J)
        comparable = (old_rows >= MIN_STRATUM) & (new_rows > 0)
        if not comparable.any():
            return False
        n_old, n_new = old_rows[comparable].astype(float), new_rows[comparable].astype(float)
        p = old_errors[comparable] / n_old
        variance = np.maximum(n_new * p * (1.0 - p) * (1.0 + n_new / n_old), 1.0)
        excess = new_errors[comparable] - n_new * p
        # half of δ for one class at a time (shared among the J), half for all of them together
        log_class = math.log(4.0 * len(y) * J / self.monitor.delta)
        if np.any(excess > np.sqrt(2.0 * variance * log_class) + 2.0 / 3.0 * log_class):
            return True
        log_all = math.log(4.0 * len(y) / self.monitor.delta)
        return bool(excess.sum() > math.sqrt(2.0 * variance.sum() * log_all) + 2.0 / 3.0 * log_all)

    def _retest(self, before: tuple, errors: np.ndarray, since: int) -> int:
        """The test again after a refit on the rows before the rise (``_refit``): the rows since
        the rise, as the refitted model scores them, against the older rows as they were scored.

        The monitor goes back to the state the first test saw (``before`` this check point, with
        its ``errors``); the part older than the rise, the reference, keeps its errors; the
        ``since`` rows after it (whole buckets, all in the history: ``_refit`` checked) are
        scored again by the refitted model, which has not been fitted on them, and the split test
        runs once. Only a rise that survives is a change. Returns the rows since it (0: none).
        """
        monitor = self.monitor
        monitor.restore(before)
        monitor.append(errors)
        tail = np.cumsum(monitor.rows[::-1])  # rows of the newest 1, 2, … buckets
        newer = int(np.searchsorted(tail, since)) + 1  # the newest buckets hold the rows since the rise
        monitor.drop_newest(newer)
        fresh = self._errors(self.history.size)  # every weighted row of the history, oldest first
        return monitor.add(fresh[len(fresh) - int(tail[newer - 1]) :])

    def _errors(self, m: int) -> np.ndarray:
        """0/1 errors of the current model on the ``m`` most recent rows of the history, oldest
        first (rows of sample weight 0 left out)."""
        self.settle_encoding()
        h = self.history
        self.refresh()
        A, J = len(self.slots), len(self.classes)
        rows = as_slice(h.recent(m))
        scores = self.lookup.bias + np.einsum("nkj,kj->nj", h.log_lik[rows, :A, :J], self.lookup.coef[self.slots.variable, :J])
        errors = np.argmax(scores, axis=1) != h.y[rows]
        return errors[h.sample_weight[rows] > 0]

    def _refit(self, since: int) -> bool:
        """Ask the learner to re-fit its weights now (``Optimizer.refit``) on the rows of the
        window older than the ``since`` weighted rows of the rise; True when it did.

        The rows after the rise are left out so that the new test judges them out of sample:
        weights fitted on them could absorb a change of concept (the error of the refitted model
        on them would fall without the model being any good after the change).
        """
        refit = getattr(self.optimizer, "refit", None)
        if refit is None:
            return False
        h = self.history
        rows = h.recent(h.size)  # oldest first
        weighted = np.cumsum(h.sample_weight[rows][::-1] > 0)  # weighted rows among the newest 1, 2, …
        after = int(np.searchsorted(weighted, since)) + 1  # history rows holding the rise's rows
        if after >= len(rows) or weighted[-1] < since + FIRST_REFIT:  # too little before the rise
            return False
        A, J = len(self.slots), len(self.classes)
        self.settle_encoding()
        h.fit_encoding(A, J)
        log_prior = self.classes.log_prior()
        log_prior.flags.writeable = False
        window = Batch(*h.window(rows[: len(rows) - after], A, J), log_prior)
        if not refit(window, self.context()):
            return False
        self.lookup.coefficients_changed()
        return True

    def forget(self, keep: int) -> None:
        """Forget all but the ``keep`` most recent rows of the history (0: everything).

        What the model learned from older examples is dropped: each variable's summary starts
        afresh from the kept rows (its level 2 with it), the class counts are those of the kept
        rows, the learner restarts (a variable it had zeroed can come back) and steps on them.
        The variables, the classes and the clocks stay.
        """
        h, registry, classes = self.history, self.registry, self.classes
        keep = max(0, min(int(keep), h.size))
        h.keep_recent(keep)
        K = len(registry)
        y, w = h.y[:keep], h.sample_weight[:keep]
        classes.recount(y, w)  # every variable is rebuilt below
        labels = classes.typed()
        summaries = self._fresh_summaries([old.kind for old in registry.variables])
        variables = []
        for k, (old, summary) in enumerate(zip(registry.variables, summaries)):
            variable = Variable(old.name, old.kind, summary)
            variables.append(variable)
            if old.kind == "categorical":
                values, present = h.column(slice(0, keep), k, int(registry.column[k]), numeric=False)
                if present.any():
                    variable.summary.update_coded(values[present], y[present], labels, w[present])
        numeric = np.array([v.kind == "numeric" for v in variables], dtype=bool)
        registry.renew(variables, h.counts(slice(0, keep), K).astype(float), np.where(numeric, h.stored - keep, h.stored).astype(np.int64))
        self.restart(keep)
