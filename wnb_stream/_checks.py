"""The checks of parameters: one vocabulary for every constructor and setter of the package.

A parameter is checked once, where it is given (``__init__``, a setter), with an error that names
it and states what it must be: ``ValueError("epsilon must be in (0, 0.5), got 0.7")``. Two
predicates say what a number is, for the parameters here and for the saved records' kinds
(``io.schema.Int`` and ``io.schema.Float``):

- ``is_integer(value)``: an integer, never a bool (``True`` is an ``int`` to Python, not a
  count to a user): ``int``, NumPy's integers, any ``numbers.Integral``;
- ``is_real(value)``: a real number, never a bool: ``int``, ``float``, NumPy's integers and
  floats, any ``numbers.Real``.

``integer(value, name, ...)`` and ``real(value, name, ...)`` check a parameter against a range
and raise ``ValueError("{name} must be {requirement}, got {value!r}")``, where the requirement
is written from the bounds (``an integer >= 1``, ``in (0, 1]``, ``None or an integer >= 0``) or
given as it reads best (``a byte offset >= 0``).

>>> integer(5, "batch_size", low=1)
5
>>> integer(True, "batch_size", low=1)
Traceback (most recent call last):
ValueError: batch_size must be an integer >= 1, got True
>>> real(0.7, "epsilon", above=0, below=0.5)
Traceback (most recent call last):
ValueError: epsilon must be in (0, 0.5), got 0.7
>>> real(None, "alpha", above=0, below=1, optional=True) is None
True
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["bound_terms", "integer", "is_integer", "is_real", "real"]


def is_integer(value: Any) -> bool:
    """True for an integer that is not a bool (``int``, a NumPy integer, a ``numbers.Integral``)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: Any) -> bool:
    """True for a real number that is not a bool (NumPy's ``bool_`` is no ``numbers.Real`` either)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _bounds_text(low, high, above, below) -> str:
    """``in [low, high]``-style text when the value is bounded on both sides, else ``>= low``-style."""
    lower = (f"[{low}", low) if low is not None else (f"({above}", above) if above is not None else None
    upper = (f"{high}]", high) if high is not None else (f"{below})", below) if below is not None else None
    if lower and upper:
        return f"in {lower[0]}, {upper[0]}"
    return " and ".join(bound_terms(low, high, above, below))


def bound_terms(low, high, above, below) -> list[str]:
    """One term a bound that is not None, in the order low, above, high, below: ``>= low``,
    ``> above``, ``<= high``, ``< below`` (a bound may be a number or a name). Shared by these
    checks' messages and the saved records' field descriptions (``io.schema``).

    >>> bound_terms(0, None, None, "n_variables")
    ['>= 0', '< n_variables']
    """
    terms = []
    if low is not None:
        terms.append(f">= {low}")
    if above is not None:
        terms.append(f"> {above}")
    if high is not None:
        terms.append(f"<= {high}")
    if below is not None:
        terms.append(f"< {below}")
    return terms


def _within(value, low, high, above, below) -> bool:
    return (
        (low is None or value >= low)
        and (high is None or value <= high)
        and (above is None or value > above)
        and (below is None or value < below)
    )


def _finite(value) -> bool:
    """``math.isfinite``, False for an integer beyond the float range (an ``OverflowError`` there)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _refuse(value, name: str, optional: bool | str, requirement: str):
    either = f"{optional} or " if isinstance(optional, str) else "None or " if optional else ""
    raise ValueError(f"{name} must be {either}{requirement}, got {value!r}")


def integer(
    value: Any,
    name: str,
    low: int | None = None,
    high: int | None = None,
    *,
    below: int | None = None,
    optional: bool = False,
    what: str = "an integer",
    bounds: str | None = None,
    unit: str = "",
) -> Any:
    """``value`` if it is an integer (``is_integer``) within ``low ≤ value ≤ high`` and
    ``value < below`` (the bounds given), or None when ``optional``; else ``ValueError`` naming
    ``name``: ``"{name} must be [None or ]{what} {bounds}{unit}, got {value!r}"``, the bounds
    written from the limits unless ``bounds`` gives them. Cost O(1)."""
    if value is None and optional:
        return None
    if not is_integer(value) or not _within(value, low, high, None, below):
        text = _bounds_text(low, high, None, below) if bounds is None else bounds
        _refuse(value, name, optional, " ".join(part for part in (what, text) if part) + unit)
    return value


def real(
    value: Any,
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    above: float | None = None,
    below: float | None = None,
    finite: bool = False,
    optional: bool | str = False,
    what: str = "",
    unit: str = "",
) -> Any:
    """``value`` if it is a real number (``is_real``) within the bounds given (``low``/``high``
    inclusive, ``above``/``below`` exclusive; NaN is within none), finite when ``finite``, or
    None when ``optional``; else ``ValueError`` naming ``name``: ``"{name} must be [None or ]
    {what} {bounds}{unit}, got {value!r}"`` (``what`` empty: ``"epsilon must be in (0, 0.5)"``;
    ``optional`` a string: the words for None, such as ``"None (missing)"``).
    The value is compared as given, before any conversion, so an int beyond the float range is
    refused, not an ``OverflowError``. Cost O(1)."""
    if value is None and optional:
        return None
    if not is_real(value) or not _within(value, low, high, above, below) or (finite and not _finite(value)):
        text = _bounds_text(low, high, above, below)
        _refuse(value, name, optional, " ".join(part for part in (what, text) if part) + unit)
    return value
