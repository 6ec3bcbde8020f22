"""A consumer subprocess for the kill-and-restart tests of the stream runner (file and Redis
sources): its stdout lines are read by a thread, so that every wait is bounded."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time


class Consumer:
    """A consumer subprocess whose stdout lines are read by a thread (so every wait is bounded)."""

    def __init__(self, script, mode, data, checkpoint, out, limit=0):
        self.process = subprocess.Popen(
            [sys.executable, str(script), mode, str(data), str(checkpoint), str(out), str(limit)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, expected: str, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.kill()
                raise AssertionError(f"consumer never printed {expected!r}: {self.process.stderr.read()[-3000:]}")
            if line.startswith(expected):
                return line

    def kill(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
