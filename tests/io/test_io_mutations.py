"""Damaged and hostile model files: every one raises ``io.ModelFileError`` or loads a model that
predicts as the original, learns and predicts on; none crashes or hangs the process.

The cases (``mutations.py``) are seeded mutations of four saved models: truncations and byte
flips of the file, and structural changes of its payload packed again under a fresh checksum, so
that the schema, not the checksum, must catch them. Each is loaded in a child process (many per
child; the child prints the case it tries first, so a crash is pinned on its case), with the
``assert`` statements of ``_check()`` in place and again under ``python -O`` without them.

``WNB_MUTATIONS=20000`` (and ``WNB_MUTATIONS_SEED``) run a larger set; the default, 600 cases
in each mode, takes a few seconds.
"""

from __future__ import annotations

import collections
import os

import mutations
import pytest

COUNT = int(os.environ.get("WNB_MUTATIONS", "600"))
SEED = int(os.environ.get("WNB_MUTATIONS_SEED", "0"))


@pytest.fixture(scope="module")
def cases():
    return mutations.cases(COUNT, SEED)


@pytest.mark.slow  # end to end, seconds even in the dev profile: CI runs it (--run-slow)
@pytest.mark.parametrize("optimize", [False, True], ids=["asserts", "python-O"])
def test_every_mutated_file_is_refused_or_loads_the_same_model(cases, optimize, tmp_path):
    results = mutations.run(cases, tmp_path, timeout=120.0, optimize=optimize)
    report = mutations.report(cases, results)
    print(report)
    outcomes = collections.Counter(outcome for outcome, _ in results)
    failures = [
        i
        for i, (case, (outcome, _)) in enumerate(zip(cases, results))
        if outcome in mutations.FAILURES or (outcome == "valid-other" and case["family"] != "structure")
    ]
    assert not failures, report
    # the cases exercise what they claim: every family, most of them refused
    assert {case["family"] for case in cases} >= {"gzip-truncate", "gzip-flip", "plain-truncate", "plain-flip", "text-flip-regzip", "structure"}
    assert outcomes["rejected"] >= 0.7 * len(cases), report


def test_the_cases_cover_every_structural_mutation(cases):
    labels = " ".join(case["label"] for case in cases if case["family"] == "structure")
    missing = [name for name in mutations.STRUCTURAL if f"{name}:" not in labels]
    assert not missing
    assert set(case["base"] for case in cases) == set(mutations.BASES)


@pytest.mark.slow  # end to end, seconds even in the dev profile: CI runs it (--run-slow)
def test_a_crash_or_a_hang_is_pinned_on_its_case(tmp_path, monkeypatch):
    """The parent's bookkeeping: a child that dies or stalls is blamed on the case it had started."""
    items = mutations.cases(6, seed=1)
    monkeypatch.setenv("WNB_MUTATIONS_FAULT", "crash:2,hang:4")
    results = mutations.run(items, tmp_path, timeout=3.0)
    assert [outcome for outcome, _ in results][2] == "crash" and results[4][0] == "hang"
    assert all(outcome not in mutations.FAILURES for i, (outcome, _) in enumerate(results) if i not in (2, 4))
