"""Any table a user holds, as the pandas DataFrame the batch path reads.

``learn_many`` and ``predict_proba_many`` take a pandas DataFrame, and also:

- any eager dataframe that narwhals (a dependency of River) reads: polars, pyarrow tables,
  modin, cuDF …, converted once with ``narwhals``;
- a 2-D NumPy array, whose columns are the features ``0 … a − 1`` (as a DataFrame built from it
  would name them), or a structured array, whose fields are the features;
- a list (or tuple) of dicts, one per row, as ``learn_one`` takes them.

Each is turned into the same pandas DataFrame a user would build by hand, so every input gives
the model pandas would (tested). Series labels, arrays and lists are read by ``rows.labels``.

A key absent from a dict is not a missing value: ``learn_one`` reads it as the model's ``absent``
says (a missing value that is not counted, or the default value of a numeric feature). The
DataFrame built from a list of dicts holds NaN in those cells, so ``read`` hands the parser which
cells were absent keys beside it, and the batch reads them as a loop of ``learn_one`` does. A
table has no absent key but a column it does not hold: its cells (NaN, None, null) are values,
and a missing one is missing, as in a dict holding None.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_pandas", "read"]


def as_pandas(X, name: str = "X"):
    """``X`` as a pandas DataFrame (no copy for a DataFrame); ``ValueError`` naming ``name`` otherwise."""
    import pandas as pd

    if isinstance(X, pd.DataFrame):
        return X
    if isinstance(X, np.ndarray):
        if X.dtype.names is not None and X.ndim == 1:  # a structured array: its fields are the features
            return pd.DataFrame({field: X[field] for field in X.dtype.names})
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (rows × features), got shape {X.shape}")
        return pd.DataFrame(X)
    if isinstance(X, list | tuple):
        if not all(isinstance(row, dict) for row in X):
            raise ValueError(f"{name} given as a list must hold one dict of features per row")
        return pd.DataFrame(list(X)) if len(X) else pd.DataFrame(index=pd.RangeIndex(0))
    native = _from_narwhals(X)
    if native is None:
        raise ValueError(
            f"{name} must be a DataFrame (pandas, polars, pyarrow, … ), a 2-D NumPy array or a list of dicts, got {type(X).__name__}"
        )
    return native


def read(X, name: str = "X") -> tuple:
    """``(as_pandas(X), absent)``: ``absent (n, c)`` True where a dict of a list of dicts lacks
    the column's key, None when no cell is such (every other kind of table). O(entries)."""
    frame = as_pandas(X, name)
    if not isinstance(X, list | tuple) or not len(X):
        return frame, None
    width = frame.shape[1]
    if all(len(row) == width for row in X):  # every dict holds every key
        return frame, None
    position = {label: i for i, label in enumerate(frame.columns.tolist())}
    held = np.zeros(frame.shape, dtype=bool)  # (n, c)
    for r, row in enumerate(X):
        at = [position.get(key, -1) for key in row]
        if -1 in at:  # a key pandas made another label (a tuple …): let pandas align the keys
            return frame, _absent_by_pandas(X, frame)
        held[r, at] = True
    return frame, ~held


def _absent_by_pandas(X, frame) -> np.ndarray:
    """``(n, c)`` True where a dict lacks the column's key, the columns aligned by pandas itself."""
    import pandas as pd

    marks = pd.DataFrame([dict.fromkeys(row, True) for row in X]).reindex(columns=frame.columns)
    return marks.isna().to_numpy()


def _from_narwhals(X):
    try:
        import narwhals as nw
    except ImportError:  # pragma: no cover - narwhals comes with River
        return None
    try:
        frame = nw.from_native(X, eager_only=True)
    except TypeError:
        return None
    if not isinstance(frame, nw.DataFrame):
        return None
    return frame.to_pandas()
