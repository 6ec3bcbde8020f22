"""The memory budget: how the engine keeps ``memory_usage()`` within ``memory_budget`` bytes.

At every check point (``drift.EVERY`` rows) the history window is cut to the most recent rows
that fit, never below ``MIN_WINDOW`` rows, and with the window at that floor the variables
outside level 3 are evicted, the least useful first
(``docs/algorithms/prediction.md#memory-budget``). ``MemoryBudget`` holds these steps of
``Engine`` (a part of its class, kept here); they change the parts through their verbs
(``History.shrink``, ``Registry.remove``, ``Slots.remove``, ``Lookup.invalidate``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_WINDOW", "MemoryBudget"]

#: Fewest rows a memory budget leaves in the history window (``Engine.keep_budget``).
MIN_WINDOW = 32


class MemoryBudget:
    """The ``Engine``'s memory-budget steps (``keep_budget``, ``eviction_order``, ``evict``)."""

    def keep_budget(self, budget: int) -> None:
        """Bring ``memory_usage()`` within ``budget`` bytes: first cut the history window, then,
        with the window at its floor, evict variables outside level 3
        (``docs/algorithms/prediction.md#memory-budget``).

        What the budget cannot bound is left as it is: the variables in level 3 (their summaries,
        level 2 and lookups), what every class holds, and ``MIN_WINDOW`` rows of the window.
        """
        total = self._cut_window(budget)
        if self.history.capacity <= MIN_WINDOW and total > budget:
            self._evict_to(budget, total - self.history.memory_usage() - self.lookup.memory_usage())

    def _cut_window(self, budget: int) -> int:
        """Cut the history window to the most recent rows that bring ``memory_usage()`` within
        ``budget`` bytes (at least ``MIN_WINDOW`` rows; it never grows back). The numeric
        summaries take the rows that go first (as before the ring overwrites a row). Returns
        ``memory_usage()`` after the cut."""
        h, registry = self.history, self.registry
        while True:
            total = self.memory_usage()
            if total <= budget or h.capacity <= MIN_WINDOW:
                return total
            window = h.memory_usage()
            rows = int((budget - (total - window)) // (window / h.capacity))
            rows = max(MIN_WINDOW, min(rows, h.capacity - 1))
            dropped = h.stored - min(h.size, rows)  # rows stored before this one leave the window
            if dropped <= registry.synced_min:
                break
            # the summaries take those rows first; they grow, so measure again
            registry.feed(np.flatnonzero(registry.synced < dropped), h, self.classes)
        h.shrink(rows)
        return total - window + h.memory_usage()

    def _evict_to(self, budget: int, held: int) -> None:
        """Evict the least useful variables outside level 3 (``eviction_order``) until
        ``memory_usage()`` is within ``budget``, or none is left to evict; ``held`` is the
        registry's ``memory_usage()`` (the variables' bytes, an O(K) walk made once).

        Each pass evicts the first variables of the order whose estimated bytes (their own, their
        raw column in the window, their lookup rows) cover the excess, then measures the window
        and the lookups again (the estimates leave out the containers' headroom, which the
        removal frees too); the registry's bytes go down by exactly the evicted variables'.
        Cost O(K + window) per pass, a few passes per check point that finds the model over its
        budget with its window at the floor.
        """
        h, lookup = self.history, self.lookup
        self.evict(np.zeros(0, dtype=np.intp))  # the window's raw blocks without headroom first
        for _ in range(8):
            excess = held + h.memory_usage() + lookup.memory_usage() - budget
            if excess <= 0:
                return
            order = self.eviction_order()
            if not len(order):
                return  # what is left is what the budget cannot bound
            variables = self.registry.variables
            freed, own, n = 0, 0, 0
            for k in order.tolist():
                size = variables[k].memory_usage() + 64  # (``Registry.memory_usage``'s share)
                own += size
                freed += size + h.column_bytes(variables[k].kind == "numeric") + lookup.variable_bytes(k)
                n += 1
                if freed >= excess:
                    break
            self.evict(order[:n])
            held -= own

    def eviction_order(self) -> np.ndarray:
        """The variables a memory budget may evict, the least useful first: ``(m,)`` indices.

        Only variables without a level-3 slot are candidates: their level 2 is flat (one part,
        or not built yet), so they add ℓ = 0 to every score and evicting them changes no
        prediction; what is lost is the evidence their summaries gathered. Among them, those
        absent from the rows of the window go first (not seen lately), then the fewest
        observations (``Registry.count``: the least evidence, the least likely to become
        informative), then the oldest (a variable that has had longer to show something).
        """
        registry, h = self.registry, self.history
        K = len(registry)
        self.slots.grow(K)
        free = np.flatnonzero(self.slots.of[:K] < 0)
        if not len(free):
            return free
        seen = h.counts(h.filled(), K)[free] > 0
        return free[np.lexsort((free, registry.count[free], seen))]

    def evict(self, gone: np.ndarray) -> None:
        """Remove the variables ``gone`` (none with a level-3 slot) from every part: the registry
        and its columns, the window's raw columns, the slots' numbering, the compiled lookups
        (compiled again, for the variables left). An evicted feature seen again is a new
        variable, with a fresh summary. With ``gone`` empty, the window's raw blocks lose their
        headroom. Cost O(K + capacity · columns) and a full compilation of the lookups."""
        registry = self.registry
        self._resize()
        new_index, numeric_columns, categorical_columns = registry.remove(gone)
        self.history.remove(new_index, numeric_columns, categorical_columns)
        self.slots.remove(new_index)
        if len(gone):
            self._evicted = True  # (``learn_frame`` re-enters the batch's evicted columns)
            self.parser.forget_plan()  # (a cache of variable indices)
            self._context = None
            self.lookup.invalidate()
            self.refresh()  # compiled for the variables left, so that their memory is measured
