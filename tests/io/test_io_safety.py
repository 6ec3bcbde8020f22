"""Loading a saved model never imports a module or runs code named by the file: there is no such
mechanism in wnb_stream.io at all."""

from __future__ import annotations

import ast
import builtins
import importlib
import pathlib

import pytest
from io_cases import learner_cases, other_cases, summary_cases

import wnb_stream.io
from wnb_stream import io

CASES = summary_cases() + other_cases() + learner_cases()
FORBIDDEN_MODULES = {"importlib", "pickle", "marshal", "shelve", "dill", "runpy", "ctypes", "subprocess", "pydoc", "cloudpickle"}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "import_module", "locate", "globals", "vars"}


def test_loading_imports_nothing(monkeypatch):
    files = [io.dumps(make()) for _, make in CASES]
    for data in files:  # first loads may let NumPy or the summaries finish their own lazy set-up
        io.loads(data)
    imported, by_name = [], []
    real_import = builtins.__import__

    def spy(name, *args, **kwargs):
        imported.append(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", lambda name, *a, **k: by_name.append(name))
    monkeypatch.setattr(builtins, "__import__", spy)
    for data in files:
        io.loads(data)
    monkeypatch.undo()
    assert by_name == []
    # NumPy's nan_to_num imports its own core module inside the function (a fixed name)
    assert set(imported) <= {"numpy._core"}


@pytest.mark.parametrize(
    "name",
    ["os.system", "os:system", "builtins.eval", "subprocess.Popen", "wnb_stream.summaries.gk:GKClass", "wnb_stream.summaries.GKClass", "__main__", ""],
)
def test_a_type_name_is_never_resolved_as_a_path(name, monkeypatch):
    imported = []
    real_import = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda n, *a, **k: imported.append(n) or real_import(n, *a, **k))
    with pytest.raises(io.ModelFileError, match="unknown record type"):
        io.loads(io.pack({"type": name, "params": {}, "state": {}}))
    monkeypatch.undo()
    assert imported == []


@pytest.mark.parametrize("node", [{"$": "obj", "cls": "os:system", "state": {}}, {"$": "type", "cls": "builtins:eval"}])
def test_object_graph_nodes_of_the_old_format_are_unknown_values(node):
    record = io.to_record(dict(CASES)["gk-1000"]())
    record["state"]["values"] = node
    with pytest.raises(io.ModelFileError, match="values: expected an array, got an array node with another tag|unknown value tag"):
        io.loads(io.pack(record))


def _sources():
    root = pathlib.Path(wnb_stream.io.__file__).parent
    return sorted(root.glob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_the_io_package_has_no_import_or_eval_machinery(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not {alias.name.split(".")[0] for alias in node.names} & FORBIDDEN_MODULES, ast.dump(node)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            assert node.module.split(".")[0] not in FORBIDDEN_MODULES, node.module
        elif isinstance(node, ast.Call):
            function = node.func
            name = function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else None
            assert name not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {name}"
            if name == "getattr":  # only literal attribute names, or names listed by a schema
                assert isinstance(node.args[1], ast.Constant | ast.Name | ast.BinOp), f"{path.name}:{node.lineno}"
