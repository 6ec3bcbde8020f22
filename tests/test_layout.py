"""The package's layout and its import contracts (``docs/architecture.md#layout``).

``lint-imports`` checks the contracts of ``pyproject.toml``, but only for the modules they name:
a module that no layer names may import anything. These tests fail when a module under
``wnb_stream/`` is in no contract, when a contract names a module that does not exist, and when
the ``wnb-stream`` script points at a function that is not there.
"""

from __future__ import annotations

import importlib
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wnb_stream"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONTRACTS = PYPROJECT["tool"]["importlinter"]["contracts"]


def modules(package: pathlib.Path = PACKAGE, prefix: str = "wnb_stream") -> set[str]:
    """The dotted names of every module and subpackage under ``package`` (not the package itself)."""
    found = set()
    for path in package.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(f"{prefix}.{path.name}")
            found |= modules(path, f"{prefix}.{path.name}")
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(f"{prefix}.{path.stem}")
    return found


def layer_names(layers: list[str], container: str | None = None) -> set[str]:
    """The modules named by a layers contract (``a | b``, ``a : b`` and ``(a)`` all name ``a``)."""
    names = set()
    for layer in layers:
        for name in re.split(r"[|:]", layer):
            name = name.strip().strip("()").strip()
            names.add(f"{container}.{name}" if container else name)
    return names


def covered(module: str, names: set[str]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


def test_the_walk_finds_the_modules_it_should():
    found = modules()
    assert {"wnb_stream.classifier", "wnb_stream.engine", "wnb_stream.engine.core", "wnb_stream.apps.cli"} <= found
    assert "wnb_stream" not in found and not any(name.endswith("__init__") for name in found)
    # a module missing from every layer is reported (the check below is not vacuous)
    assert not covered("wnb_stream.persistence", layer_names(["wnb_stream.classifier", "wnb_stream.io"]))
    assert covered("wnb_stream.io.files", layer_names(["(wnb_stream.io)"]))


def test_every_module_is_in_the_package_layers():
    top = [c for c in CONTRACTS if c["type"] == "layers" and "containers" not in c]
    assert len(top) == 1, "one layers contract for the whole package"
    names = layer_names(top[0]["layers"])
    # a package whose modules the layers name one by one (``io``): its own module must be held by
    # a contract of its own (``as_packages = false``), and each of its modules is checked here
    own = {m for c in CONTRACTS if c["type"] == "forbidden" and c.get("as_packages") is False for m in c["source_modules"]}
    missing = sorted(m for m in modules() if not covered(m, names) and m not in own)
    assert not missing, f"modules in no layer of pyproject.toml's import contracts: {missing}"


def test_every_module_of_a_layered_subpackage_is_in_its_layers():
    for contract in (c for c in CONTRACTS if c["type"] == "layers" and "containers" in c):
        for container in contract["containers"]:
            names = layer_names(contract["layers"], container)
            path = PACKAGE.joinpath(*container.split(".")[1:])
            missing = sorted(m for m in modules(path, container) if not covered(m, names))
            assert not missing, f"{contract['name']!r}: modules of {container} in no layer: {missing}"


def test_every_module_a_contract_names_exists():
    everything = modules() | {"wnb_stream"}
    for contract in CONTRACTS:
        named = set()
        if contract["type"] == "layers":
            for container in contract.get("containers", [None]):
                named |= layer_names(contract["layers"], container)
        named |= set(contract.get("source_modules", ())) | set(contract.get("forbidden_modules", ()))
        stale = sorted(name for name in named if name not in everything)
        assert not stale, f"{contract['name']!r} names modules that do not exist: {stale}"


def test_the_command_line_script_points_at_a_function():
    for script, target in PYPROJECT["project"]["scripts"].items():
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), script
