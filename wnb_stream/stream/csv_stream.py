"""CSV input: the parsing rules shared by the KEEL tables and CSV streams (missing tokens, numbers,
inferred kinds, stray tokens) and ``CSVStream``, a CSV file or standard input read as a stream.
"""

from __future__ import annotations

import csv
import io  # noqa: F401  (the doctests read io.StringIO)
import pathlib
import shlex
import sys
import warnings
from typing import Any, Iterable, Iterator, TextIO

from .sources import MAX_LINE_BYTES, check_max_line_bytes


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


def na_options(tokens: list[str]) -> str:
    """The command-line options that declare ``tokens`` missing, quoted for a POSIX shell:
    ``--na-values`` for the tokens without a comma (it splits at commas), ``--na-value`` (one
    token as written) for each of the others.

    >>> na_options(["unknown", "-"])
    '--na-values unknown,-'
    >>> na_options(["12,5", "n.a.", "not known"])
    "--na-values 'n.a.,not known' --na-value 12,5"
    """
    plain = [token for token in tokens if "," not in token]
    options = [f"--na-values {shlex.quote(','.join(plain))}"] if plain else []
    options += [f"--na-value {shlex.quote(token)}" for token in tokens if "," in token]
    return " ".join(options)


def _decimal_comma(token: str) -> str:
    """A note when ``token`` is a number written with a decimal comma (``12,5``)."""
    if "," in token and _number(token) is None and _number(token.replace(",", ".", 1)) is not None:
        return " (a decimal comma? numbers are read with a decimal point)"
    return ""


# ---------------------------------------------------------------------------------------------
# CSV read as a stream


class _BoundedLines:
    """The lines of a text handle, each at most ``limit`` characters: a longer one is read on to
    its end in blocks (never held whole) and raises ``csv.Error`` (the csv reader passes it on and
    reads the next line after it). ``number`` counts the lines read."""

    def __init__(self, handle: TextIO, limit: int):
        self.handle, self.limit, self.number = handle, limit, 0
        # (a source without readline, any iterable of lines, is bounded after the fact)
        self._lines = None if callable(getattr(handle, "readline", None)) else iter(handle)

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if self._lines is not None:
            line = next(self._lines)
            self.number += 1
            if len(line) - line.endswith("\n") > self.limit:
                raise csv.Error(f"a line of {len(line)} characters, beyond max_line_bytes = {self.limit}")
            return line
        line = self.handle.readline(self.limit + 1)
        if not line:
            raise StopIteration
        self.number += 1
        if len(line) > self.limit and not line.endswith("\n"):
            size = len(line)
            while part := self.handle.readline(1 << 16):
                size += len(part)
                if part.endswith("\n"):
                    break
            raise csv.Error(f"a line of {size} characters, beyond max_line_bytes = {self.limit}")
        return line


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

    ``drop`` names columns to leave out (an id, a timestamp): they are neither features nor
    checked. ``delimiter`` is the one character between fields (``";"``, ``"\\t"``).

    ``on_bad_value`` says what to do with a later value that is not a number in a numeric column:
    ``"error"`` raises ``DataError`` naming the column and the line (the default), ``"missing"``
    reads it as a missing value, ``"skip"`` skips the row. Under ``"missing"`` and ``"skip"`` a
    row whose number of fields differs from the header's is skipped too (an error otherwise).
    ``bad_values`` counts the values read as missing, ``bad_rows`` the rows skipped for these
    reasons, ``first_bad`` describes the first one.

    A line longer than ``max_line_bytes`` (counted in characters: at most its bytes) is read on
    to its end in blocks, never held whole, and is a bad row: ``DataError`` naming the line under
    ``"error"``, skipped and counted in ``bad_rows`` otherwise; so is a field beyond the ``csv``
    module's ``field_size_limit()`` (128 KiB by default).

    Memory: O(infer_rows · columns) for the inference window, then one row at a time.

    >>> stream = CSVStream(io.StringIO("size,colour,label\\n1.5,red,yes\\n,blue,no\\n2,red,\\n"))
    >>> stream.features, stream.target, sorted(stream.categorical)
    (('size', 'colour'), 'label', ['colour'])
    >>> list(stream), stream.skipped
    ([({'size': 1.5, 'colour': 'red'}, 'yes'), ({'colour': 'blue'}, 'no')], 1)
    >>> stream = CSVStream(io.StringIO("id;size;label\\n7;1.5;yes\\n"), delimiter=";", drop=["id"])
    >>> stream.features, list(stream)
    (('size',), [({'size': 1.5}, 'yes')])
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
        drop: Iterable[str] = (),
        max_line_bytes: int = MAX_LINE_BYTES,
    ):
        max_line_bytes = check_max_line_bytes(max_line_bytes)
        if infer_rows < 1:
            raise ValueError(f"infer_rows must be >= 1, got {infer_rows}")
        if on_bad_value not in BAD_VALUE_POLICIES:
            raise ValueError(f"on_bad_value must be one of {BAD_VALUE_POLICIES}, got {on_bad_value!r}")
        if isinstance(na_values, str):
            na_values = [na_values]
        if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n\"":
            raise ValueError(f"delimiter must be one character (not a quote or a line break), got {delimiter!r}")
        drop = [drop] if isinstance(drop, str) else list(drop)
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
        self._lines = _BoundedLines(self._handle, max_line_bytes)
        self._reader = csv.reader(self._lines, delimiter=delimiter)
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
        unknown = [name for name in drop if name not in header]
        if unknown or target in drop:
            self.close()
            what = f"unknown column(s) {', '.join(unknown)} to drop" if unknown else f"the target {target!r} cannot be dropped"
            raise DataError(f"{self.name}: {what} (columns: {', '.join(header)})")
        self.dropped = tuple(name for name in header if name in drop)
        self.features = tuple(name for name in header if name != target and name not in self.dropped)
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
            if name in self.features
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
            (i, name, name in self.categorical) for i, name in enumerate(header) if name in self.features
        ]
        self._consumed = False

    def _stray_message(self, name: str, tokens: dict[str, int], rows: int) -> str:
        shown = ", ".join(f"{token!r} ×{count}" for token, count in list(tokens.items())[:5])
        more = f" and {len(tokens) - 5} more" if len(tokens) > 5 else ""
        return (
            f"{self.name}: column {name!r} is read as categorical because of {sum(tokens.values())} "
            f"value(s) that are not numbers in its first {rows:,} rows: {shown}{more}. If they mean "
            f"'missing', declare them ({na_options(list(tokens)[:5])}); if the column is numeric, say so "
            f"(--numeric {name})."
        )

    def _next_row(self) -> list[str] | None:
        while True:
            try:
                row = next(self._reader)
            except StopIteration:
                return None
            except csv.Error as error:  # a line beyond max_line_bytes, a field beyond csv.field_size_limit()
                self._line = self._lines.number
                if self.on_bad_value == "error":
                    self.close()
                    raise DataError(f"{self.name}, line {self._line}: {error}") from None
                self.bad_rows += 1
                self._note_bad(f"line {self._line}: {error}")
                continue
            self._line = self._lines.number
            if row and any(field.strip() for field in row):
                return [field.strip() for field in row]

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
                            f"{token!r}{_decimal_comma(token)}; declare it with --categorical {name}, or read "
                            f"such values as missing with --on-bad-value missing (or {na_options([token])})"
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
