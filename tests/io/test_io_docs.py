"""docs/saved-model.md documents every record type with the table its schema prints."""

from __future__ import annotations

import pathlib

import pytest

from wnb_stream import io
from wnb_stream.stream import checkpoints  # noqa: F401  (registers the checkpoints' records)

DOC = pathlib.Path(__file__).parents[2] / "docs" / "saved-model.md"
COMPONENTS = [name for name in io.registered() if io.entry(name).cls.__module__.startswith("wnb_stream.")]


@pytest.mark.parametrize("name", COMPONENTS)
def test_the_schema_document_holds_each_record_table(name):
    table = io.entry(name).schema.markdown()
    assert f"<!-- schema: {name} -->\n\n{table}\n" in DOC.read_text(), (
        f"docs/saved-model.md is out of date for {name}: paste io.entry({name!r}).schema.markdown() after its marker"
    )


def test_the_document_states_the_current_version():
    text = DOC.read_text()
    assert f"**version {io.VERSION}**" in text and f'"format": "{io.FORMAT}"' in text
