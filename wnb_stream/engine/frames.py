"""Any table a user holds, as the pandas DataFrame the batch path reads.

``learn_many`` and ``predict_proba_many`` take a pandas DataFrame, and also:

- any eager dataframe that narwhals (a dependency of River) reads: polars, pyarrow tables,
  modin, cuDF …, converted once with ``narwhals``;
- a 2-D NumPy array, whose columns are the features ``0 … a − 1`` (as a DataFrame built from it
  would name them), or a structured array, whose fields are the features;
- a list (or tuple) of dicts, one per row, as ``learn_one`` takes them (a missing key is a
  missing value of that row).

Each is turned into the same pandas DataFrame a user would build by hand, so every input gives
the model pandas would (tested). Series labels, arrays and lists are read by ``rows.labels``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_pandas"]


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
