"""Mini-batches: a parsed DataFrame through the engine in chunks, the same model as a loop of rows.

``learn_frame`` cuts the batch into chunks that end exactly where a loop of ``learn_row`` would
register a class, create a variable, rebuild level 2, check for a change or step the learner
(``Schedule.chunk_end``); each chunk is counted, summarised and stored in bulk
(``_learn_chunk``), then goes through the tail a row goes through (``Engine._settle``) with the
chunk's encoder (``_encode_chunk``). ``MiniBatches`` holds these steps of ``Engine`` (a part of
its class, kept here).
"""

from __future__ import annotations

import numpy as np

from .arrays import as_slice
from .drift import EVERY
from .rows import Frame, feature_order
from .variable import NOWHERE

__all__ = ["MiniBatches"]


class MiniBatches:
    """The ``Engine``'s mini-batch path (``learn_frame`` and the chunks it cuts)."""

    def learn_frame(self, frame: Frame, labels: np.ndarray, codes: np.ndarray, uniques: list, sample_weight: np.ndarray) -> None:
        """Learn a parsed batch in chunks cut by the schedule (the states of a loop of ``learn_row``)."""
        n = len(labels)
        # A feature takes part from the first row where it is known (a new one: its first value).
        columns = [(name, 0 if name in self.registry.index else first) for name, _, first in frame.columns()]
        if self.collect:  # nothing but level 1 and the history: one chunk
            self._learn_chunk(frame, columns, labels, codes, uniques, sample_weight, 0, n)
            return
        # Row positions of each label: a class count reaching its rebuild threshold ends a chunk
        # (a new class has threshold 1, so its first row ends one).
        by_label = np.argsort(codes, kind="stable")
        positions = dict(zip(uniques, np.split(by_label, np.cumsum(np.bincount(codes, minlength=len(uniques)))[:-1])))
        t = 0
        while t < n:
            end = self.schedule.chunk_end(t, n, positions, columns, self.registry, self.classes, self.target_batch)
            if self.monitor is not None or self.fading is not None or self.params.memory_budget is not None:  # a check point ends a chunk
                end = min(end, t + EVERY - 1 - self.n_seen % EVERY)
            self._learn_chunk(frame, columns, labels, codes, uniques, sample_weight, t, end + 1)
            t = end + 1
            if self._evicted:
                self._evicted = False
                columns = self._reenter(frame, columns, t)

    def _reenter(self, frame: Frame, columns: list, t: int) -> list:
        """``columns`` after an eviction (a memory budget's): a column of the batch whose variable
        left starts again at its next value from row ``t`` (−1: none), where a loop of
        ``learn_one`` would create it anew."""
        index, a = self.registry.index, len(frame.numeric_names)
        out = list(columns)
        for i, (name, start) in enumerate(columns):
            if not 0 <= start < t or name in index:
                continue
            if i < a:
                values = frame.numeric[t:, i]
                held = ~np.isnan(values)
                if self.params.absent is not None:
                    held &= values != self.params.absent
                if frame.numeric_absent is not None:
                    held &= ~frame.numeric_absent[t:, i]
            else:
                held = np.array([value is not None for value in frame.categorical[i - a][1][t:].tolist()], dtype=bool)
                absent = frame.categorical_absent[i - a] if frame.categorical_absent else None
                if absent is not None:
                    held &= ~absent[t:]
            out[i] = (name, t + int(np.argmax(held)) if held.any() else -1)
        return out

    def _learn_chunk(self, frame: Frame, columns: list, labels, codes, uniques, sample_weight, lo: int, hi: int) -> None:
        """Rows ``lo:hi`` in bulk; only the last row may trigger a class, a rebuild or a step."""
        registry, schedule, h = self.registry, self.schedule, self.history
        chunk_weight = sample_weight[lo:hi]
        m = hi - lo
        # class indices through the batch's distinct labels; new ones registered in row order
        known = np.array([self.classes.index.position.get(label, -1) for label in uniques], dtype=np.intp)
        class_index = known[codes[lo:hi]]
        for r in np.flatnonzero(class_index < 0).tolist():
            class_index[r] = self.classes.index.encode(labels[lo + r])
        self._grow_classes()
        self.classes.count_many(class_index, chunk_weight)
        self.n_seen += m
        schedule.tick(m)
        self.lookup.prior_changed()
        new = [(name, kind) for (name, kind, _), (_, start) in zip(frame.columns(), columns) if name not in registry.index and lo <= start < hi]
        if new:
            self._add_variables(sorted(new, key=lambda item: feature_order(item[0])))
        # Columns taking part in the chunk, each from row ``since`` (its first row if it is new).
        a = len(frame.numeric_names)
        numeric = [(i, registry.index.get(name), max(lo, start)) for i, (name, start) in enumerate(columns[:a])]
        numeric = [(i, k, since) for i, k, since in numeric if k is not None and since < hi]
        categorical = []
        absent_keys = frame.categorical_absent or [None] * len(frame.categorical)
        for (name, values, _), (_, start), absent in zip(frame.categorical, columns[a:], absent_keys):
            k = registry.index.get(name)
            if k is not None and start < hi:
                since = max(lo, start)
                held = slice(since, hi) if absent is None else since + np.flatnonzero(~absent[since:hi])  # (a key absent from a dict is not counted)
                registry.variables[k].summary.update_many(values[held], labels[held], sample_weight[held])
                categorical.append((k, values, since, absent))
        ks = np.array([k for _, k, _ in numeric], dtype=np.intp)
        at = np.array([i for i, _, _ in numeric], dtype=np.intp)
        since = np.array([s for _, _, s in numeric], dtype=np.intp)
        default = self.params.absent  # (None: an absent feature is missing)
        if default is None and frame.numeric_absent is None:
            registry.count_many(ks, hi - since)
        self._resize()
        K = len(registry)
        # The raw rows go to the history now (numeric summaries take them from there).
        present = np.zeros((m, K), dtype=bool)
        present[:, ks] = np.arange(lo, hi)[:, None] >= since[None, :]
        for k, _, s, absent in categorical:
            present[s - lo :, k] = True if absent is None else ~absent[s:hi]
            registry.count_many(k, present[s - lo :, k].sum())
        block = frame.numeric[lo:hi][:, at]  # (m, a') NaN before a new variable's first value
        if default is not None:  # a cell holding the default value is absent
            present[:, ks] &= block != default
            registry.count_many(ks, present[:, ks].sum(axis=0))
        elif frame.numeric_absent is not None:  # a key absent from a dict: neither a value nor a missing one
            present[:, ks] &= ~frame.numeric_absent[lo:hi][:, at]
            registry.count_many(ks, present[:, ks].sum(axis=0))
        categories = np.empty((m, len(categorical)), dtype=object)
        for c, (_, values, _, _) in enumerate(categorical):
            categories[:, c] = values[lo:hi]  # None before a new variable's first value
        numeric_columns = registry.column[ks]
        categorical_columns = registry.column[np.array([k for k, _, _, _ in categorical], dtype=np.intp)]
        for start in range(0, m, h.capacity):  # pieces the history can hold at once
            stop = min(m, start + h.capacity)
            registry.make_room(stop - start, h, self.classes)
            h.push_many((numeric_columns, block[start:stop]), (categorical_columns, categories[start:stop]),
                        present[start:stop], None, class_index[start:stop], chunk_weight[start:stop],
                        variables=(ks, [k for k, _, _, _ in categorical]))  # fmt: skip
        self._settle(m, self._encode_chunk, ks, block, present, categorical, m, hi)

    def _encode_chunk(self, ks, block, present, categorical, m: int, hi: int) -> None:
        """Encode the chunk's rows still held in the history with the current level 2."""
        lookup, h, variables, slots = self.lookup, self.history, self.registry.variables, self.slots
        if lookup.stale:
            self._compile()
        A, J = len(slots), len(self.classes)
        if not A:
            return
        kept = min(m, len(h))
        at_rows = as_slice(h.recent(kept))
        if isinstance(at_rows, slice):  # the rows are consecutive in the ring: encode in place
            log_lik = h.log_lik[at_rows, :A, :J]  # (kept, A, J) a view
            log_lik[...] = 0.0
        else:
            log_lik = np.zeros((kept, A, J))  # (kept, A, J)
        held = slots.of[ks] >= 0  # the chunk's numeric variables in level 3
        block, rows = block[m - kept :], slice(m - kept, m)
        if held.all():
            lookup.encode_block(ks, block, present[rows, ks], log_lik, as_slice(slots.of[ks]))
        elif held.any():
            lookup.encode_block(ks[held], block[:, held], present[rows, ks[held]], log_lik, as_slice(slots.of[ks[held]]))
        for k, values, _, _ in categorical:
            variable = variables[k]
            if slots.of[k] < 0:
                continue
            parts = variable.locate_many(values[hi - kept : hi]) if variable.log_prob is not None else None
            if parts is not None:
                found = lookup.categorical_rows(k, parts)
                found[~present[rows, k]] = NOWHERE
                log_lik[:, slots.of[k], :] = lookup.table[found]
        for i in np.flatnonzero(held).tolist():
            k = int(ks[i])
            if variables[k].density:
                ll = variables[k].log_lik_many(block[:, i])
                ll[~present[rows, k]] = 0.0
                log_lik[:, slots.of[k], : ll.shape[1]] = ll
        if lookup.defaults is not None:  # absent numeric features hold the default value
            np.copyto(log_lik, lookup.defaults[slots.variable], where=~present[rows, slots.variable][..., None])
        if not isinstance(at_rows, slice):
            h.log_lik[at_rows, :A, :J] = log_lik
