"""Independent pieces of compiled work run in threads: the kernels release the GIL (``nogil``).

When level 2 of every variable falls due in a coordinator's round at K = 1,000, most of the
rebuild is two compiled loops over independent items: the MODL search of each variable's table
(``modl.batch``) and the encoding of each window row (``engine.core._reencode_numeric``). A
round's merges of many GK summaries, and a rebuild's feed of them, are compiled loops over
independent summaries too (``summaries.gk_batch``). Split into pieces that write disjoint
outputs, they run on every core the process may use, with the same floats as one call (each
item is computed by the same code on the same inputs).

Only large work is split (the callers' thresholds): a piece handed to a thread costs tens of
microseconds, so the per-example path and small rebuilds stay in the calling thread. The pool
is the process's own, made at first use with one thread per core the process may run on
(``os.sched_getaffinity``), or ``WNB_STREAM_THREADS`` threads when that environment variable is
set to fewer (1: no thread; for many processes sharing one machine's cores), and dropped in a
child made by ``fork`` (its threads do not exist there). Pieces must not themselves wait for
pieces of the pool.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

__all__ = ["cores", "pieces", "run_all", "run_spans", "spans"]

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


#: The environment variable that caps the threads (a positive integer; others are ignored).
THREADS_VARIABLE = "WNB_STREAM_THREADS"


def cores() -> int:
    """The cores this process may run on (``taskset`` and container limits included), at most
    ``WNB_STREAM_THREADS`` when it is set to a positive integer."""
    try:
        count = max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # (not every platform has it)
        count = max(1, os.cpu_count() or 1)
    cap = os.environ.get(THREADS_VARIABLE, "").strip()
    if cap.isdigit() and int(cap) > 0:
        count = min(count, int(cap))
    return count


def spans(n: int, pieces: int) -> list[tuple[int, int]]:
    """``[0, n)`` cut into at most ``pieces`` consecutive non-empty spans of near-equal length.

    >>> spans(10, 3), spans(2, 4), spans(0, 2)
    ([(0, 3), (3, 6), (6, 10)], [(0, 1), (1, 2)], [])
    """
    pieces = max(1, min(int(pieces), int(n)))
    edges = [n * i // pieces for i in range(pieces + 1)] if n else []
    return [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def pieces(n: int, large: bool) -> list[tuple[int, int]]:
    """How to cut ``[0, n)`` for ``run_all``: one span per core when the work is ``large`` (the
    caller's threshold), else the whole in one span (none when ``n`` is 0).

    >>> pieces(10, large=False), pieces(0, large=False)
    ([(0, 10)], [])
    """
    return spans(n, cores() if large else 1)


def run_all(tasks: list[Callable]) -> list:
    """``[task() for task in tasks]``, the tasks run in the pool's threads when there are several
    (and more than one core); the results in order. The first task's error, in order, is raised
    once every task has ended."""
    if len(tasks) <= 1 or cores() <= 1:
        return [task() for task in tasks]
    futures = [_the_pool().submit(task) for task in tasks]
    errors = [future.exception() for future in futures]
    for error in errors:
        if error is not None:
            raise error
    return [future.result() for future in futures]


def run_spans(task: Callable[[int, int], object], n: int, large: bool) -> list:
    """``task(a, b)`` for the spans ``(a, b)`` of ``pieces(n, large)``, run by ``run_all``:
    ``[((a, b), result)]`` in order (the usual use of the two together).

    >>> run_spans(lambda a, b: b - a, 5, large=False)
    [((0, 5), 5)]
    """
    cut = pieces(n, large)
    return list(zip(cut, run_all([functools.partial(task, a, b) for a, b in cut])))


def _the_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=cores(), thread_name_prefix="wnb_stream")
        return _pool


def _forget_pool() -> None:  # in a forked child: the parent's threads are not there
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
