"""What every test module shares: the Hypothesis profiles, the rule for optional extras, and the
tests left to CI.

Profiles (``profiles.py``): ``dev`` is loaded here and is the default; ``--hypothesis-profile=ci``
(what ``.ci/run`` passes) replaces it with the counts written in the tests.

Optional extras (Ray, capymoa, mkdocs, redis-server): a test that needs one calls
``testkit.require``; it skips when the extra is missing, except where CI sets
``WNB_REQUIRE_<NAME>=1``, which turns the skip into a failure (CI cannot pass by skipping).

Tests marked ``slow`` (end-to-end runs of the command line, the docs pages that run it, River's
estimator checks of each learner, a Ray cluster...) run with ``--run-slow``, which ``.ci/run``
passes; a developer's ``pytest`` leaves them out and says how many it left.
"""

from __future__ import annotations

import profiles  # noqa: F401  (registers the profiles)
import pytest
from hypothesis import settings

settings.load_profile("dev")


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="run the tests marked slow too (CI does)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (CI does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
