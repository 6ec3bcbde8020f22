"""What the benchmark suites share: provenance, result files, anchors, tables.

Run the suites from the repository root (``python benchmarks/<suite>.py``); they import the
package from the checkout, so no install is needed beyond the dependencies.
"""

from __future__ import annotations

import csv
import datetime
import math
import os
import pathlib
import platform
import shlex
import subprocess
import sys
from typing import Iterable, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: shared/ sits beside the repository (../shared).
ANCHORS = ROOT.parent / "shared" / "anchors"

if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance() -> dict:
    """Commit (``+dirty`` when tracked files other than results and notes differ), UTC date, machine, versions."""
    import numpy
    import river

    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    # results/ and the Markdown notes do not change what runs: a run that follows another is clean
    if _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/results", ":(exclude)*.md"):
        commit += "+dirty"
    return {
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": f"{_cpu()}, {os.cpu_count()} cpu, {platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "river": river.__version__,
        "numpy": numpy.__version__,
    }


class ResultFile:
    """A CSV under benchmarks/results/, rewritten after every added row (so partial runs keep)."""

    def __init__(self, path: str | pathlib.Path, meta: dict):
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.meta = meta
        self.rows: list[dict] = []

    def add(self, row: dict) -> None:
        self.rows.append(dict(row))
        columns: list[str] = []
        for r in self.rows:
            columns += [c for c in r if c not in columns]
        with open(self.path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns + list(self.meta))
            writer.writeheader()
            for r in self.rows:
                writer.writerow({**{c: _cell(r.get(c)) for c in columns}, **self.meta})


def finish_run(results: ResultFile, meta: dict, script: str, argv, report: str, started: float) -> None:
    """End a suite's run: print its total time (since ``started``, a ``time.perf_counter()``) and
    ``report``, and write the report beside ``results``' CSV as Markdown, with its provenance and
    the command that made it (``argv``: the script's arguments; None: those of this process)."""
    import time

    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    print("\n" + report)
    command = shlex.join(["python", f"benchmarks/{script}", *(sys.argv[1:] if argv is None else argv)])
    results.path.with_suffix(".md").write_text(f"Commit {meta['commit']}, {meta['date']}, {meta['machine']}; command: `{command}`\n\n{report}\n")


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return value


def read_csv(path: pathlib.Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def anchor(name: str) -> list[dict]:
    """Rows of ``shared/anchors/<name>`` (empty with a note when shared/ is not there)."""
    path = ANCHORS / name
    if not path.is_file():
        print(f"note: {path} not found; anchor columns left empty", file=sys.stderr)
        return []
    return read_csv(path)


def number(value) -> float:
    """A CSV cell as a float (NaN when empty)."""
    if value in (None, ""):
        return float("nan")
    return float(value)


def fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.{digits}f}"
    return str(value)


def rate(value) -> str:
    """Examples per second, as an integer with thousands separators."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.0f}"


def markdown(rows: Sequence[Sequence], header: Sequence[str]) -> str:
    """A GitHub markdown table (first column left-aligned, the others right-aligned)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def mean(values: Iterable[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else float("nan")


def names(text: str | None) -> list[str] | None:
    return None if text is None else [part.strip() for part in text.split(",") if part.strip()]
