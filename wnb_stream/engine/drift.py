"""Change detection on the model's own error: when its error rate rises, how far back the change is.

The engine scores the rows it has just learned (their encoding by the current level 2 and the
current weights: a 0/1 error each) at each check point, every ``EVERY`` rows of the stream, and
hands the monitor their errors in *buckets* of ``BUCKET`` rows. The monitor keeps the most recent
buckets (counts and error sums, at most ``MAX_BUCKETS``) and tests every split of them into an older and
a newer part, as ADWIN does (Bifet & Gavaldà, "Learning from time-changing data with adaptive
windowing", SDM 2007): the means of the two parts differ significantly when

    |μ_new − μ_old| > ε,  ε = sqrt(2/m · σ² · ln(2/δ')) + 2/(3m) · ln(2/δ'),

with m the harmonic mean of the parts' sizes, σ² the variance of the errors over the window,
and δ' = δ / n for a window of n rows (Bernstein's bound, ADWIN's form). Only a *rise* of the
error is a change: the newest part past the most significant split is then the model's memory
(``detected`` returns its number of rows) and the model forgets everything older
(``docs/algorithms/drift.md``). A significant *fall* (a young model learning) drops the older
buckets from the window and nothing else, so that the reference level follows the model.

Design note. The monitor is ours, not River's ``drift.ADWIN``: its whole state is two small
arrays that a saved model stores in its documented schema, the split test is one vectorised
pass over the buckets, and it answers the question the engine needs (where the change began)
directly. The check points are fixed by the stream's clock (every ``EVERY`` rows), so a loop of
``learn_one`` and ``learn_many`` check at the same rows with the same states.
"""

from __future__ import annotations

import math

import numpy as np

from ..io.registry import register
from ..io.schema import Array, Fields, Float, Int, Schema

__all__ = ["Monitor", "EVERY", "BUCKET"]

#: Rows between two check points: the monitor tests for a change once per this many rows.
EVERY = 256

#: Rows per bucket (a check point adds EVERY / BUCKET of them): where a change began is placed
#: to within a bucket.
BUCKET = 64

#: Buckets kept (the window the test looks at: 256 × 64 = 16,384 rows).
MAX_BUCKETS = 256

#: Buckets needed on each side of a split (the newer side: at least 2 × 64 = 128 rows).
MIN_SIDE = 2


class Monitor:
    """Buckets of 0/1 errors and the one-sided ADWIN test over their splits.

    Parameters
    ----------
    delta
        Confidence of the test (false alarm probability bound per check, δ): smaller detects
        later and more rarely by chance.

    Examples
    --------
    >>> monitor = Monitor(delta=0.002)
    >>> rng = np.random.default_rng(0)
    >>> found = [monitor.add(rng.random(32) < (0.1 if t < 60 else 0.6)) for t in range(80)]
    >>> first = next(t for t, rows in enumerate(found) if rows)
    >>> 60 <= first <= 64, found[first] <= 32 * (first - 59)
    (True, True)
    """

    __slots__ = ("delta", "rows", "errors", "detected")

    def __init__(self, delta: float):
        self.delta = float(delta)
        self.rows = np.zeros(0)  # (B,) rows per bucket, oldest first
        self.errors = np.zeros(0)  # (B,) errors per bucket
        self.detected = 0  # changes detected so far

    def __len__(self) -> int:
        return int(self.rows.sum())

    def reset(self) -> None:
        self.rows, self.errors = np.zeros(0), np.zeros(0)

    def snapshot(self) -> tuple:
        """The monitor's state now, for ``restore``: copies of its buckets and its count of changes. O(B)."""
        return self.rows.copy(), self.errors.copy(), self.detected

    def restore(self, state: tuple) -> None:
        """Go back to a ``snapshot``. O(1)."""
        self.rows, self.errors, self.detected = state

    def drop_newest(self, n_buckets: int) -> None:
        """Drop the ``n_buckets`` newest buckets (a retest scores their rows again). O(B)."""
        end = len(self.rows) - n_buckets
        self.rows, self.errors = self.rows[:end], self.errors[:end]

    def count_detected(self, n: int) -> None:
        """Add ``n`` changes detected elsewhere (a merged model's). O(1)."""
        self.detected += n

    def add(self, errors: np.ndarray) -> int:
        """Add the 0/1 ``errors (m,)`` of the rows since the last check, oldest first, in buckets of
        ``BUCKET`` rows (the oldest bucket takes the remainder), then test; the rows since the
        change if the error rose (else 0)."""
        if not self.append(errors):
            return 0
        split, rose = self._split()
        if split is None:
            return 0
        if not rose:  # the error fell: the older buckets no longer describe the model
            self.rows, self.errors = self.rows[split:], self.errors[split:]
            return 0
        since = int(self.rows[split:].sum())
        self.reset()
        self.detected += 1
        return since

    def dismiss(self) -> None:
        """Take back the last change ``add`` reported (the engine found no change behind it); the
        window, which ``add`` emptied, starts afresh from the next rows."""
        self.detected -= 1

    def append(self, errors: np.ndarray) -> int:
        """Add the 0/1 ``errors (m,)`` in buckets as ``add`` does, without testing; m."""
        errors = np.asarray(errors, dtype=float)
        m = len(errors)
        if m == 0:
            return 0
        n_buckets = max(1, m // BUCKET)
        edges = m - BUCKET * np.arange(n_buckets, 0, -1)  # starts of the buckets, the first at 0
        edges[0] = 0
        sums = np.add.reduceat(errors, edges)
        sizes = np.diff(np.append(edges, m)).astype(float)
        self.rows = np.append(self.rows, sizes)[-MAX_BUCKETS:]
        self.errors = np.append(self.errors, sums)[-MAX_BUCKETS:]
        return m

    def _split(self) -> tuple[int | None, bool]:
        """The most significant split (index of the first newer bucket) and whether the error rose there."""
        B = len(self.rows)
        if B < 2 * MIN_SIDE:
            return None, False
        n = float(self.rows.sum())
        total = float(self.errors.sum())
        mean = total / n
        variance = max(mean * (1.0 - mean), 1.0 / n)  # 0/1 errors; never 0 (a constant window still tests)
        log_term = math.log(2.0 * n / self.delta)
        at = np.arange(MIN_SIDE, B - MIN_SIDE + 1)  # splits: buckets [0, i) old, [i, B) new
        old_rows = np.cumsum(self.rows)[at - 1]
        old_errors = np.cumsum(self.errors)[at - 1]
        new_rows = n - old_rows
        gap = (total - old_errors) / new_rows - old_errors / old_rows
        m = 1.0 / (1.0 / old_rows + 1.0 / new_rows)
        epsilon = np.sqrt(2.0 / m * variance * log_term) + 2.0 / (3.0 * m) * log_term
        excess = np.abs(gap) / epsilon
        best = int(np.argmax(excess))
        if excess[best] <= 1.0:
            return None, False
        return int(at[best]), bool(gap[best] > 0)

    # -- invariants and saved record (docs/saved-model.md) -------------------------------------

    def problems(self) -> list[str]:
        """The broken invariants, each ``"field: what is wrong"`` (the record's field names); empty
        when sound. O(B)."""
        if self.rows.shape != self.errors.shape or self.rows.ndim != 1:
            return [f"errors: must hold one count per bucket of rows, got shapes {self.rows.shape} and {self.errors.shape}"]
        found = []
        if len(self.rows) > MAX_BUCKETS:
            found.append(f"rows: holds {len(self.rows)} buckets, at most {MAX_BUCKETS} are kept")
        if not np.all(self.rows >= 1):
            found.append("rows: every bucket holds at least one row")
        if not np.all(self.errors >= 0):
            found.append("errors: must be >= 0")
        if np.any(self.errors > self.rows):
            found.append("errors: a bucket cannot hold more errors than rows")
        if not 0.0 < self.delta < 1.0:
            found.append(f"delta: must be in (0, 1), got {self.delta!r}")
        if self.detected < 0:
            found.append(f"detected: must be >= 0, got {self.detected!r}")
        return found

    def _check(self) -> None:
        """Assert that ``problems()`` is empty."""
        found = self.problems()
        assert not found, "; ".join(found)

    def record_state(self) -> dict:
        """The state fields of the record: the buckets and the count of changes."""
        return {"rows": self.rows, "errors": self.errors, "detected": self.detected}

    @classmethod
    def from_record(cls, fields: Fields) -> Monitor:
        """The monitor a loaded, schema-checked record describes (its ``problems()`` not yet asked)."""
        monitor = cls(fields.params["delta"])
        monitor.rows, monitor.errors = fields.state["rows"], fields.state["errors"]
        monitor.detected = fields.state["detected"]
        return monitor


register(
    "Monitor",
    Monitor,
    Schema(
        params={"delta": Float(above=0.0, below=1.0, doc="drift_delta, the confidence of the test")},
        state={
            "rows": Array("float64", ("n_buckets",), low=1.0, doc=f"rows per bucket, oldest first (at most {MAX_BUCKETS})"),
            "errors": Array("float64", ("n_buckets",), low=0.0, doc="0/1 errors per bucket"),
            "detected": Int(low=0, doc="changes detected so far"),
        },
        doc="The change detector: recent buckets of the model's errors",
    ),
    state=Monitor.record_state,
    build=Monitor.from_record,
)
