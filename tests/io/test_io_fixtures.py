"""Saved files of every released format version keep loading (tests/io/fixtures/v<N>/).

The fixtures were written by ``make_io_fixtures.py`` when their version was current and are never
rewritten. Each must load (through the migrations, for older versions) to an object answering as
its recorded facts say; files of the current version must also save back to the same bytes.
"""

from __future__ import annotations

import gzip
import json
import pathlib

import numpy as np
import pytest
from make_io_fixtures import facts

from wnb_stream import io

ROOT = pathlib.Path(__file__).parent / "fixtures"
FILES = sorted(ROOT.glob("v*/*.json.gz"))


def close(found, expected) -> bool:
    if isinstance(expected, dict):
        return isinstance(found, dict) and found.keys() == expected.keys() and all(close(found[k], expected[k]) for k in expected)
    if isinstance(expected, list):
        return isinstance(found, list) and len(found) == len(expected) and all(close(f, e) for f, e in zip(found, expected))
    if isinstance(expected, float | int) and not isinstance(expected, bool):
        return bool(np.isclose(found, expected, rtol=1e-9, atol=1e-12))
    return found == expected


def test_there_are_fixtures_of_the_current_version():
    current = ROOT / f"v{io.VERSION}"
    assert len(list(current.glob("*.json.gz"))) >= 40, "run tests/io/make_io_fixtures.py when releasing a format version"
    recorded = json.loads((current / "facts.json").read_text())
    assert sorted(recorded) == sorted(path.name.removesuffix(".json.gz") for path in current.glob("*.json.gz"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_fixture_loads_to_its_recorded_facts(path):
    expected = json.loads((path.parent / "facts.json").read_text())[path.name.removesuffix(".json.gz")]
    data = path.read_bytes()
    obj = io.loads(data)
    assert type(obj).__name__ == expected["type"]
    if path.parent.name == f"v{io.VERSION}":  # the record format has not drifted within the version
        assert io.dumps(obj, compress=False) == gzip.decompress(data)  # (zlib builds may deflate differently)
    assert close(facts(obj), expected)
