"""Python's cyclic garbage collector paused around work that allocates many objects and frees
none of them as cycles: a save or a load of a model, a merge of models.

Such work makes millions (a wide model's file) or tens of thousands (a round's copies and merged
summaries) of small objects that outlive it; the collector, triggered by the allocations, walks
the whole growing heap again and again for nothing (a third of a wide model's load, a tenth of a
round at K = 1,000: ``benchmarks/README.md``). Reference counting still frees what the block
drops.
"""

from __future__ import annotations

import contextlib
import gc
import threading

__all__ = ["collector_paused"]

_lock = threading.Lock()
_paused = 0  # blocks under way
_was_on = False  # whether the collector was on when the first of them began


@contextlib.contextmanager
def collector_paused():
    """The cyclic garbage collector off for the block (back on after it, an error included, if it
    was on). Blocks of several threads nest: the last one out turns the collector back on if it
    was on when the first one came in."""
    global _paused, _was_on
    with _lock:
        if not _paused:
            _was_on = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if not _paused and _was_on:
                gc.enable()
