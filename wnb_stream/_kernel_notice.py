"""The notice that the compiled kernels are being compiled: once per machine and Python version.

numba compiles a kernel at its first call and writes it to a cache next to its module; later runs
load it from there in a fraction of a second. The first run of the library on a machine thus
spends tens of seconds of CPU compiling (``README.md``, Set-up), before its first result. So that
this pause is not silent, the first compile of one of our kernels in a process logs one line at
level INFO on the ``wnb_stream`` logger: ``wnb-stream evaluate`` prints it on standard error, and a
program shows it with ``logging.basicConfig(level=logging.INFO)``. Loading from the cache logs
nothing (numba broadcasts its ``numba:compile`` event only when it compiles).
"""

from __future__ import annotations

import logging

from numba.core import event

__all__ = ["MESSAGE", "install", "logger"]

logger = logging.getLogger("wnb_stream")

#: What the notice says (the figures: README.md, Set-up).
MESSAGE = (
    "compiling the numba kernels, once on this machine (20 to 60 s of CPU, the busier the machine the longer); "
    "later runs load them from the cache"
)


class _FirstCompile(event.Listener):
    """Logs ``MESSAGE`` at the first compile of a kernel of this package in the process."""

    def __init__(self):
        self.told = False

    def on_start(self, ev: event.Event) -> None:
        if self.told:
            return
        function = getattr(ev.data.get("dispatcher"), "py_func", None)
        if getattr(function, "__module__", "").startswith("wnb_stream."):
            self.told = True
            logger.info(MESSAGE)

    def on_end(self, ev: event.Event) -> None:
        return None


_listener: _FirstCompile | None = None


def install() -> None:
    """Listen to numba's compile events (once per process; each kernel module calls it)."""
    global _listener
    if _listener is None:
        _listener = _FirstCompile()
        event.register("numba:compile", _listener)
