"""What every test module shares: the Hypothesis profiles and the rule for optional extras.

Profiles (``profiles.py``): ``dev`` is loaded here and is the default; ``--hypothesis-profile=ci``
(what ``.ci/run`` passes) replaces it with the counts written in the tests.

Optional extras (Ray, capymoa, mkdocs, redis-server): a test that needs one calls
``testkit.require``; it skips when the extra is missing, except where CI sets
``WNB_REQUIRE_<NAME>=1``, which turns the skip into a failure (CI cannot pass by skipping).
"""

from __future__ import annotations

import profiles  # noqa: F401  (registers the profiles)
from hypothesis import settings

settings.load_profile("dev")
