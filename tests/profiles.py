"""Hypothesis profiles of the suite, and the example counts of the property tests.

- ``dev`` (the default): a developer's ``pytest``, about a tenth of each test's examples (at least
  five), so that the whole suite runs in a few minutes;
- ``ci``: the counts written in the tests (``pytest --hypothesis-profile=ci``; ``.ci/run`` selects it).

A property test writes the count it wants in CI as ``@settings(max_examples=examples(200))``; the
profile scales it. Neither profile has a deadline: the compiled kernels' first call compiles or
loads them, which no per-example deadline should count.
"""

from __future__ import annotations

from hypothesis import settings

CI_EXAMPLES = 100  # Hypothesis' own default: the counts in the tests are meant at this scale

settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=CI_EXAMPLES // 10, deadline=None)


def examples(n: int) -> int:
    """The number of examples of a test that asks for ``n`` in CI, under the loaded profile."""
    scaled = round(n * settings.default.max_examples / CI_EXAMPLES)
    return max(min(n, 5), scaled)
