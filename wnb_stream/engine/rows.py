"""Rows: the one path that validates and codes input, for one example or a batch.

``learn_one``, ``learn_many``, ``predict_proba_one``, ``predict_proba_many`` and ``debug_one`` all
read their input here, and nothing here changes the model: a call that raises leaves the model
as it was, because the model is only touched after its input is parsed.

- ``RowParser.row(x)`` reads a dict into a ``Row``: numeric values as one float array by
  variable index, categorical values apart, features without a variable yet in ``new``.
- ``RowParser.frame(X)`` reads a DataFrame into a ``Frame``: the numeric columns as one
  ``(n, a)`` block, the categorical columns apart.
- ``labels(y)`` and ``check_label(y)`` validate class labels (one rule for both paths).

Both readers apply the same rules, those of ``summaries.policy`` (``feature_value`` decides a
value's kind and the form it is stored in, ``model_label`` a label's, ``model_key`` a new
feature's name): None, NaN, pandas' NA and NaT are missing; ±inf in a numeric feature counts as
missing; dates and durations are numbers of seconds; a value of the other kind raises or is
counted as missing by the ``on_type_change`` policy; a value the saved model could not hold, or a
finite number beyond the float range, raises a ``ValueError`` naming the feature. Whatever they
accept, the engine can learn without raising and the model can save
(``docs/algorithms/summaries.md#input-policy``).

Design note (speed). A stream usually hands dicts with the same keys and value types row after
row, so the first dict of a shape that needs no per-feature check (known features holding plain
numbers or strings) is remembered as a ``Plan``; a dict of that shape is then read in one NumPy
call. The plan is a cache: it is not part of the model's state.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from ..summaries.policy import as_weights, column_array, feature_value, model_key, model_label

__all__ = ["Frame", "Plan", "Row", "RowParser", "check_label", "feature_order", "labels", "same_row"]

POLICIES = ("raise", "missing")


def feature_order(name) -> tuple:
    """A deterministic order for features first seen in the same row (dict order must not matter)."""
    return (type(name).__name__, repr(name))


def _plain_number(kind: type) -> bool:
    """True for the number types a plan converts in bulk (Python and NumPy ints and floats, not bools)."""
    return kind is float or kind is int or issubclass(kind, (np.floating, np.integer))


def _number_dtype(dtype) -> bool:
    """A column dtype read as one float block: numbers, not bools and not complex numbers (whose
    cells ``feature_value`` refuses one by one)."""
    import pandas as pd

    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    return numeric and getattr(getattr(dtype, "numpy_dtype", dtype), "kind", "") != "c"


def check_label(label):
    """A class label as the model stores it (``policy.model_label``): ``ValueError`` naming ``y``
    for a label that cannot be a class: None, NaN, pandas' NA/NaT, unhashable, or a value a saved
    model cannot hold. A Python int, str or bool (the usual labels) is such a label as it is."""
    kind = type(label)
    if kind is int or kind is str or kind is bool:  # (``model_label`` returns them unchanged, tested)
        return label
    return model_label(label)


def labels(y) -> tuple[np.ndarray, np.ndarray, list]:
    """Validate a batch's labels: ``(n,)`` object labels, ``(n,)`` codes into the distinct labels.

    Labels are Python values (NumPy scalars are converted) compared as dict keys, as
    ``ClassIndex`` does; a typed array (bools, ints, strings, floats without NaN) needs no check.
    Any other entry goes through ``check_label``.
    """
    raw = y if isinstance(y, np.ndarray) else column_array(y) if hasattr(y, "to_numpy") else None
    if raw is not None and raw.ndim == 1 and (raw.dtype.kind in "biuU" or (raw.dtype.kind == "f" and not np.isnan(raw).any())):
        # Python scalars, all hashable; np.unique's equality is the dict's for these types
        out = np.empty(len(raw), dtype=object)
        out[:] = raw.tolist()
        uniques, codes = np.unique(raw, return_inverse=True)
        return out, codes.astype(np.intp, copy=False).reshape(-1), uniques.tolist()
    if raw is not None and raw.ndim != 1:
        raise ValueError(f"y must be one label per row, got an array of shape {raw.shape}")
    values = [check_label(v) for v in (raw if raw is not None else y)]
    out = np.empty(len(values), dtype=object)
    out[:] = values
    distinct: dict = {}
    codes = np.fromiter((distinct.setdefault(label, len(distinct)) for label in values), dtype=np.intp, count=len(values))
    return out, codes, list(distinct)


def check_sample_weights(w, n: int) -> np.ndarray:
    """``(n,)`` sample weights of a batch (None: ones); ``ValueError`` naming ``w`` otherwise."""
    if w is None:
        return np.ones(n)
    try:
        sample_weight = as_weights(list(w) if not hasattr(w, "to_numpy") and not isinstance(w, np.ndarray) else w, n)
    except (ValueError, TypeError) as error:
        raise ValueError(f"w must hold one finite weight >= 0 per row of X ({n} rows): {error}") from None
    return np.array(sample_weight, dtype=float)  # a copy: the caller's array is not kept


@dataclasses.dataclass(slots=True)
class Row:
    """One validated example, by variable.

    ``numeric (a,)`` increasing variable indices with ``values (a,)`` floats (NaN for a missing
    value); ``categorical`` a list of (variable index, value or None); ``new`` a list of
    (name, kind, value) for features that have no variable yet (created when learning).
    ``missing`` tells whether some value is NaN. ``located`` keeps the row's table rows for one
    version of the lookup (a row is usually scored by ``predict_proba_one`` then encoded by
    ``learn_one``).
    """

    numeric: np.ndarray
    values: np.ndarray
    categorical: list
    new: list
    missing: bool = True
    located: tuple | None = None


@dataclasses.dataclass(slots=True)
class Plan:
    """How to read a dict with these keys and value types without per-feature validation.

    Every key is a known variable; numeric variables hold plain numbers and categorical ones
    strings, so nothing can be invalid. ``numeric_at``/``categorical_at`` are positions in the
    dict's order, ``numeric_at`` following the increasing variable indices ``numeric``.

    The last row read is kept (``seen``, ``last``): a stream usually hands the same dict to
    ``predict_proba_one`` then ``learn_one``, and ``RowParser.row`` returns that row again when
    the dict holds the same keys, in the same order, and values of the same types that compare
    equal. Values of the same plain type that compare equal convert to the same floats, but for
    the sign of a zero (``-0.0 == 0.0``): a row holding a zero is not kept (``last`` None), so a
    row returned again is always the one a fresh read gives, bit for bit (property-tested, the
    dict changed in place between the calls included).
    """

    keys: tuple
    types: tuple
    numeric: np.ndarray  # (a,) increasing variable indices
    numeric_at: np.ndarray  # (a,) their positions in the dict
    categorical: list  # variable indices
    categorical_at: list
    default: float | None = None  # the value of absent numeric features (entries holding it are left out)
    seen: tuple = ()  # the keys of the last dict read (equal to ``keys``; compared by identity first)
    last: tuple | None = None  # (values, Row) of the last dict read, None if it held a zero

    def __post_init__(self):
        self.seen = self.keys

    def row(self, keys: tuple, values: tuple) -> Row:
        """The ``Row`` of a dict of the plan's shape, given its ``keys`` (equal to the plan's) and ``values``."""
        last = self.last
        if last is not None and last[0] == values:  # plain values of the plan's types: == cannot raise
            self.seen = keys
            return last[1]
        if not self.categorical:  # every value is a number: one conversion, then variable order
            numbers_ = np.fromiter(values, dtype=float, count=len(values))[self.numeric_at]  # (a,)
        else:
            numbers_ = np.array([values[i] for i in self.numeric_at.tolist()], dtype=float)
        missing = not np.isfinite(numbers_).all()
        if missing:
            numbers_[np.isinf(numbers_)] = np.nan  # ±inf counts as missing
        numeric = self.numeric
        if self.default is not None:
            held = numbers_ != self.default
            if not held.all():
                numeric, numbers_ = numeric[held], numbers_[held]
        categorical = [(k, values[i]) for k, i in zip(self.categorical, self.categorical_at)]
        row = Row(numeric, numbers_, categorical, [], missing)
        self.seen = keys
        self.last = (values, row) if _readable_again(row) else None
        return row


@dataclasses.dataclass(slots=True)
class Frame:
    """A validated DataFrame: its numeric columns as one block, its categorical columns apart.

    ``numeric (n, a)`` floats (NaN for missing) of the columns ``numeric_names``, with the first
    row holding a value in ``numeric_first (a,)`` (−1: none); ``categorical`` a list of
    (name, ``(n,)`` object values with None for missing, first row). Columns holding no value of
    a feature not known yet are left out (they create nothing). With a ``default`` value of absent
    numeric features, cells holding it count as absent (``numeric_first`` is the first row
    holding another value).

    The cells of keys absent from a list of dicts (``frames.read``) are read as ``row`` reads an
    absent key: with a ``default``, a numeric one holds it; otherwise ``numeric_absent (n, a)``
    marks them (None: no such cell), and ``categorical_absent`` (one ``(n,)`` mask or None per
    categorical column) marks a categorical column's. Such a cell is neither a value nor a
    missing value: it is not counted and scores nothing.
    """

    numeric_names: list
    numeric: np.ndarray
    numeric_first: np.ndarray
    categorical: list
    numeric_absent: np.ndarray | None = None
    categorical_absent: list | None = None

    def columns(self):
        """(name, kind, first row) of every column."""
        for name, first in zip(self.numeric_names, self.numeric_first.tolist()):
            yield name, "numeric", first
        for name, _, first in self.categorical:
            yield name, "categorical", first


def _type_change(name, known: str, value) -> ValueError:
    return ValueError(
        f"feature {name!r} is {known} but got {value!r}; use on_type_change='missing' to count such values as missing"
    )


def _read(name, value) -> tuple:
    """``policy.feature_value`` of one value, its ``ValueError`` naming the feature."""
    try:
        return feature_value(value)
    except ValueError as error:
        raise ValueError(f"feature {name!r}: {error}") from None


def same_row(a: Row, b: Row) -> bool:
    """Whether two parsed rows hold the same values (a missing value equals a missing value; a
    zero its negative, which scores the same). ``a is b`` in the usual case: the parser hands the
    same row back for an equal dict (``Plan``). O(entries)."""
    if a is b:
        return True
    if len(a.numeric) != len(b.numeric) or a.categorical != b.categorical or a.new != b.new:
        return False
    return bool(np.array_equal(a.numeric, b.numeric) and np.array_equal(a.values, b.values, equal_nan=True))


def _readable_again(row: Row) -> bool:
    """Whether ``row``, read from a dict, may be returned again for an equal dict of the same
    value types: values of the same plain type that compare equal convert to the same floats, but
    for the sign of a zero (``-0.0 == 0.0``), so a row holding a zero, known or new, is read
    afresh (NaN is truthy: ``all`` is False only for a zero)."""
    return bool(row.values.all()) and all(value for _, _, value in row.new)


def _new_name(name):
    """The name of a feature about to be created, as the saved model holds it (``policy.model_key``)."""
    try:
        return model_key(name)
    except ValueError as error:
        raise ValueError(f"feature name {name!r} cannot name a variable: {error}") from None


class RowParser:
    """Reads dicts and DataFrames against the model's variables (``registry``), changing nothing.

    Parameters
    ----------
    registry
        The model's ``Registry`` (read only: names, indices and kinds of the variables).
    on_type_change
        "raise" or "missing": what a value of the other kind is.
    default
        The value of an absent numeric feature (None: absent is missing). A numeric entry holding
        it is read as absent: left out of the row, and no feature is created for it.
    """

    __slots__ = ("registry", "on_type_change", "plan", "default", "last")

    def __init__(self, registry, on_type_change: str = "raise", default: float | None = None):
        if on_type_change not in POLICIES:
            raise ValueError(f"on_type_change must be one of {POLICIES}, got {on_type_change!r}")
        self.registry = registry
        self.on_type_change = on_type_change
        self.default = default
        self.plan: Plan | None = None  # how the last plain dict was read (a cache, not state)
        # (keys, values, types, K, Row) of the last dict of plain numbers with new features read
        # to predict (``_numbers``; a cache, not state): ``learn_one`` usually reads it next
        self.last: tuple | None = None

    def forget_plan(self) -> None:
        """Drop the cached plan and row (variable indices changed: an eviction). O(1)."""
        self.plan = None
        self.last = None

    # ------------------------------------------------------------------ one dict
    def row(self, x: dict, learn: bool = False) -> Row:
        """Validate ``x`` (the plan cache aside, nothing changes): its ``Row``.

        Raises ``ValueError`` naming the feature for unusable input (``policy.feature_value``: an
        unhashable value, a value a saved model cannot hold, a finite number beyond the float
        range; or a value of the other kind under the "raise" policy). With ``learn``, the name
        of a feature that would be created must be a key a saved model can hold. O(a) for a dict
        of a known shape, in one NumPy call.
        """
        if not isinstance(x, dict):
            raise ValueError(f"x must be a dict of features, got {type(x).__name__}")
        plan, keys, values = self.plan, tuple(x), tuple(x.values())
        # (the keys of the plan's last dict: the same dict again compares by identity, at once)
        if plan is None or keys != plan.seen or tuple(map(type, values)) != plan.types:
            last = self.last
            if last is not None and keys == last[0] and values == last[1] and len(self.registry.variables) == last[3]:
                row = self._read_again(last, values, learn)
                if row is not None:
                    return row
            ks = self._plain(x, values)  # (None unless every entry is a number, of a numeric or a new variable)
            plan = None if ks is None or None in ks else self._numeric_plan(x, ks)
            if ks is not None and plan is None:  # plain numbers, some of new features
                row = self._numbers(x, learn, ks)
                if row is not None:
                    if not learn:
                        self._keep(keys, values, row)
                    return row
        if plan is not None:
            try:
                row = plan.row(keys, values)
                self.plan = plan
                return row
            except OverflowError:  # an int beyond the float range: the general path names it
                pass
        row, plain = self._each(x, learn)
        if plain:
            self.plan = self._make_plan(x)
        return row

    def _keep(self, keys: tuple, values: tuple, row: Row) -> None:
        """Keep ``row``, read to predict from a dict of plain numbers with new features, for the
        next read of an equal dict (``_read_again``). Values of the same plain type that compare
        equal convert to the same floats, but for the sign of a zero (``-0.0 == 0.0``): a row
        holding a zero, known or new, is not kept (``_readable_again``, as the plan's ``Plan.row``)."""
        kept = _readable_again(row)
        self.last = (keys, values, tuple(map(type, values)), len(self.registry.variables), row) if kept else None

    def _read_again(self, last: tuple, values: tuple, learn: bool) -> Row | None:
        """The kept row of a dict whose keys and values equal ``last``'s, when its values are of
        the same types and no variable was created since (None otherwise): the row itself to
        predict, and to learn the same row with the new features' names checked as ``_numbers``
        checks them (``_new_name``). A sparse stream hands each dict to ``predict_proba_one``
        then ``learn_one``; its keys change every row, so the plan cannot read it again."""
        if tuple(map(type, values)) != last[2]:
            return None
        row = last[4]
        if not learn:
            return row
        new = [(_new_name(name), kind, value) for name, kind, value in row.new]
        return Row(row.numeric, row.values, [], new, row.missing, row.located)

    def _plain(self, x: dict, values: tuple) -> list | None:
        """The variable index of each key of ``x`` (None: a new feature) when its ``values`` are
        plain numbers (Python ints and floats) and its known features numeric; None for any other
        dict. What ``_numeric_plan`` and ``_numbers`` read in bulk."""
        if not all(kind is float or kind is int for kind in map(type, values)):
            return None
        index, variables = self.registry.index, self.registry.variables
        ks = [index.get(name) for name in x]
        if not all(variables[k].kind == "numeric" for k in ks if k is not None):
            return None
        return ks

    def _numeric_plan(self, x: dict, ks: list | None = None) -> Plan | None:
        """The plan of a dict of plain numbers (Python ints and floats) in known numeric variables,
        made without reading its values one by one (None for any other dict); ``ks``, if given,
        is ``_plain``'s answer for it.

        A sparse stream hands dicts whose keys change from row to row, so the plan of the last
        shape rarely serves the next row; this reads such a row in a few NumPy calls instead of
        a check per entry, with the same result as ``_each`` (tested).
        """
        values = tuple(x.values())
        ks = self._plain(x, values) if ks is None else ks
        if ks is None or None in ks:
            return None
        ks = np.array(ks, dtype=np.intp)
        order = np.argsort(ks)
        return Plan(tuple(x), tuple(map(type, values)), ks[order], order.astype(np.intp), [], [], self.default)

    def _numbers(self, x: dict, learn: bool = False, ks: list | None = None) -> Row | None:
        """The ``Row`` of a dict of plain numbers (Python ints and floats) whose known features are
        numeric and some are new, read as ``_each`` reads it (tested): the known entries in a few
        NumPy calls, the new ones one by one (None for any other dict); ``ks``, if given, is
        ``_plain``'s answer for it.

        The rows of a wide sparse stream bring new features for thousands of rows; with a check
        per entry, ``_each`` cost more than the rest of the row's scoring.
        """
        values = tuple(x.values())
        ks = self._plain(x, values) if ks is None else ks
        if ks is None:
            return None
        known = [i for i, k in enumerate(ks) if k is not None]
        try:
            numbers = np.array([values[i] for i in known], dtype=float)
        except OverflowError:  # an int beyond the float range: the general path names it
            return None
        numeric = np.array([ks[i] for i in known], dtype=np.intp)
        numbers[np.isinf(numbers)] = np.nan  # ±inf counts as missing
        if self.default is not None:  # the value of an absent feature: as if the key were not there
            held = numbers != self.default
            numeric, numbers = numeric[held], numbers[held]
        order = np.argsort(numeric)
        numeric, numbers = numeric[order], numbers[order]
        new = []
        for name, given, k in zip(x, values, ks):
            if k is not None:
                continue
            kind, value = _read(name, given)
            if kind == "numeric" and (math.isinf(value) or value == self.default):
                continue  # (missing, or absent: creates nothing)
            if kind is not None:  # a feature is created at its first non-missing value
                new.append((_new_name(name) if learn else name, kind, value))
        return Row(numeric, numbers, [], new, bool(np.isnan(numbers).any()))

    def _each(self, x: dict, learn: bool = False) -> tuple[Row, bool]:
        """Validate ``x`` feature by feature: its ``Row``, and whether a plan can read it."""
        numeric, values, categorical, new = [], [], [], []
        plain = True
        index, variables = self.registry.index, self.registry.variables
        for name, given in x.items():
            i = index.get(name)
            variable = variables[i] if i is not None else None
            kind, value = _read(name, given)
            # A plan reads known variables holding plain numbers (numeric) or strings (categorical).
            plain = plain and variable is not None and kind == variable.kind
            plain = plain and (_plain_number(type(given)) if kind == "numeric" else type(given) is str)
            if kind is not None and variable is not None and kind != variable.kind:
                if self.on_type_change == "raise":
                    raise _type_change(name, variable.kind, given)
                kind = None
            if kind == "numeric" and math.isinf(value):
                kind = None
            if kind == "numeric" and value == self.default:
                continue  # the value of an absent feature: as if the key were not there
            if kind is None:
                value = None
            if variable is None:
                if kind is not None:  # a feature is created at its first non-missing value
                    new.append((_new_name(name) if learn else name, kind, value))
            elif variable.kind == "numeric":
                numeric.append(i)
                values.append(math.nan if value is None else value)
            else:
                categorical.append((i, value))
        order = np.argsort(numeric)
        values = np.array(values, dtype=float)[order]
        row = Row(np.array(numeric, dtype=np.intp)[order], values, categorical, new, bool(np.isnan(values).any()))
        return row, plain

    def _make_plan(self, x: dict) -> Plan:
        """The plan of a dict whose every key is a known variable holding a plain value."""
        numeric, numeric_at, categorical, categorical_at = [], [], [], []
        index, variables = self.registry.index, self.registry.variables
        for position, name in enumerate(x):
            k = index[name]
            if variables[k].kind == "numeric":
                numeric.append(k)
                numeric_at.append(position)
            else:
                categorical.append(k)
                categorical_at.append(position)
        order = np.argsort(numeric)
        return Plan(tuple(x), tuple(map(type, x.values())), np.array(numeric, dtype=np.intp)[order],
                    np.array(numeric_at, dtype=np.intp)[order], categorical, categorical_at, self.default)  # fmt: skip

    # ------------------------------------------------------------------ a DataFrame
    def frame(self, X, learn: bool = False, absent: np.ndarray | None = None) -> Frame:
        """Validate a DataFrame (nothing changes): numeric columns read in one block. O(n·a).

        ``absent (n, c)``, if given, marks the cells whose key was absent from a row's dict
        (``frames.read``): they are read as ``row`` reads an absent key. ``ValueError`` for
        duplicate column names (two variables cannot share a name), for a cell ``row`` would
        refuse, and (``learn``) for the name of a column that would create a variable but cannot
        be held by a saved model.
        """
        import pandas as pd

        if not isinstance(X, pd.DataFrame):
            raise ValueError(f"X must be a pandas DataFrame, got {type(X).__name__}")
        if X.columns.has_duplicates:
            repeated = list(dict.fromkeys(X.columns[X.columns.duplicated()].tolist()))
            raise ValueError(f"X has duplicate column names {repeated!r}: a feature is one column")
        names, positions, others = [], [], []
        for position, (name, dtype) in enumerate(X.dtypes.items()):
            known = self._known_kind(name)
            if known != "categorical" and _number_dtype(dtype):
                names.append(name)
                positions.append(position)
            else:
                others.append((*self._column(name, X.iloc[:, position]), position))
        # by position: a list of names of mixed types (bytes and ints…) is not a valid pandas selection
        block = (X if len(names) == X.shape[1] else X.iloc[:, positions]).to_numpy(dtype=float, na_value=np.nan)  # (n, a)
        infinite = np.isinf(block)
        if infinite.any():  # ±inf counts as missing (on a copy: the block may share X's memory)
            block = np.where(infinite, np.nan, block)
        columns, categorical, categorical_absent = [block], [], []
        for name, kind, values, first, position in others:
            if kind == "numeric":
                names.append(name)
                positions.append(position)
                columns.append(values[:, None])
            elif kind == "categorical":
                categorical.append((name, values, first))
                categorical_absent.append(None if absent is None or not absent[:, position].any() else absent[:, position])
        numeric = np.concatenate(columns, axis=1) if len(columns) > 1 else block  # (n, a)
        numeric_absent = None
        if absent is not None and absent[:, positions].any():
            numeric_absent = absent[:, positions]  # (n, a) in the order of ``names``
            if self.default is not None:  # an absent key holds the default value (on a copy, as above)
                numeric = np.where(numeric_absent, self.default, numeric)
                numeric_absent = None
        present = ~np.isnan(numeric)
        if self.default is not None:
            present &= numeric != self.default
        if len(numeric):
            first = np.where(present.any(axis=0), present.argmax(axis=0), -1)  # (a,)
        else:  # no row: no column holds a value
            first = np.full(numeric.shape[1], -1, dtype=np.intp)
        if learn:
            for name, _, start in itertools.chain(zip(names, [None] * len(names), first.tolist()), categorical):
                if start >= 0 and name not in self.registry.index:
                    _new_name(name)
        if not any(mask is not None for mask in categorical_absent):
            categorical_absent = None
        return Frame(names, numeric, first, categorical, numeric_absent, categorical_absent)

    def _known_kind(self, name) -> str | None:
        k = self.registry.index.get(name)
        return self.registry.variables[k].kind if k is not None else None

    def _column(self, name, column) -> tuple:
        """Validate one DataFrame column: (name, kind, values, first), changing nothing.

        ``values`` is float with NaN (numeric) or object with None (categorical) for missing;
        ``first`` is the first row holding a non-missing value (-1 if none).
        """

        known = self._known_kind(name)
        if _number_dtype(column.dtype):
            values = np.array(column.to_numpy(dtype=float, na_value=np.nan), dtype=float, copy=True)
            values[np.isinf(values)] = np.nan
            kinds = np.where(np.isnan(values), 0, 1)
        else:
            raw = column.to_numpy(dtype=object)
            kinds = np.zeros(len(raw), dtype=np.int8)
            values = np.empty(len(raw), dtype=object)
            for r, v in enumerate(raw):
                kind, v = _read(name, v)
                if kind is None:
                    continue
                if kind == "categorical":
                    kinds[r] = 2
                else:
                    kinds[r] = 0 if math.isinf(v) else 1
                values[r] = v
        if self.default is not None:  # a cell holding the default value is absent: it decides nothing
            deciding = np.where((kinds == 1) & (values == self.default), 0, kinds)
        else:
            deciding = kinds
        present_kinds = deciding[deciding > 0]
        if known is None and len(present_kinds):
            known = "numeric" if present_kinds[0] == 1 else "categorical"
        if known is not None:
            code = 1 if known == "numeric" else 2
            wrong = (kinds > 0) & (kinds != code)
            if wrong.any():
                if self.on_type_change == "raise":
                    raise _type_change(name, known, values[int(np.flatnonzero(wrong)[0])])
                kinds = np.where(wrong, 0, kinds)
            if known == "numeric":
                out = np.full(len(kinds), np.nan)
                ok = kinds == 1
                out[ok] = np.asarray(values[ok], dtype=float)
            else:
                out = np.empty(len(kinds), dtype=object)
                ok = kinds == 2
                out[ok] = values[ok]
            values = out
        held = kinds > 0  # (after the policy: a value of the other kind may now be missing)
        if self.default is not None:
            held &= ~((kinds == 1) & (values == self.default))
        nonmissing = np.flatnonzero(held)
        return name, known, values, int(nonmissing[0]) if len(nonmissing) else -1
