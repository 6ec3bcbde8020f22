"""Helpers the test modules share (import them: ``from testkit import require``)."""

from __future__ import annotations

import importlib.util
import os

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
