"""Helpers the test modules share (import them: ``from testkit import require``)."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest


def require(name: str, available: bool | None = None, why: str = "") -> None:
    """Skip the calling test unless the optional extra ``name`` is usable here.

    ``available`` defaults to "the module ``name`` imports". Where CI sets
    ``WNB_REQUIRE_<NAME>=1`` a missing extra fails the test instead of skipping it. ``why`` says
    what is missing, where the caller knows better than "it does not import".
    """
    if available is None:
        available = importlib.util.find_spec(name) is not None
    if available:
        return
    if os.environ.get(f"WNB_REQUIRE_{name.upper()}") == "1":
        pytest.fail(f"{name} is required here (WNB_REQUIRE_{name.upper()}=1) but cannot be used {why}", pytrace=False)
    pytest.skip(f"needs {name} {why}".rstrip(), allow_module_level=True)


def assert_listed_and_refused(obj, expected: str, schema_first: bool = False) -> None:
    """A damaged ``obj`` (a part with ``problems()`` and a saved record) lists the damage first,
    with a text starting ``expected``; loading its saved record is refused with that very text (with
    ``schema_first``: the schema's range check refuses it before the build, naming the same field);
    and ``obj._check()`` fails naming the field (the tests' assertion is the same list)."""
    from wnb_stream import io

    found = obj.problems()
    assert found and found[0].startswith(expected), found
    with pytest.raises(io.ModelFileError) as error:
        io.loads(io.dumps(obj))
    field = expected.split(":")[0]
    if schema_first:
        assert str(error.value).startswith(field + ": ")
    else:
        assert str(error.value) == found[0]
    with pytest.raises(AssertionError, match=re.escape(field)):
        obj._check()
