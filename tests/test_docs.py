"""Every code example of the documentation runs, as a reader would run it (issue 17).

For each page of ``docs/`` (and the README's Python and console blocks; its ``>>>`` examples are
collected by pytest's doctest run), the fenced blocks run in order, in one namespace and one
fresh working directory:

- ```` ```pycon ```` blocks (and ```` ```python ```` blocks of ``>>>`` lines) are doctests;
- ```` ```python ```` blocks are executed;
- ```` ```console ```` blocks hold ``$ command`` lines, each run by bash with ``wnb-stream`` being
  this checkout's command, followed by the output expected (compared as a doctest compares:
  ``...`` stands for anything, whitespace runs are equal). A command must exit with status 0
  (an example that shows an error ends with ``; echo "exit status $?"``).

A page or a block that uses capymoa or Ray is skipped when that extra (or Java, for capymoa) is
missing, except in CI (``testkit.require``: ``.ci/run`` sets ``WNB_REQUIRE_CAPYMOA=1`` in the
virtual environment that holds capymoa, ``WNB_REQUIRE_RAY=1`` in the other). ``mkdocs build
--strict`` runs when mkdocs is here (``WNB_REQUIRE_DOCS=1`` in CI). The pages that use capymoa are
marked ``capymoa``, so that CI can run them alone in capymoa's environment (``pytest -m capymoa``).
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from testkit import require

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# The user's pages: the guides, the API reference, the home page and the README. The reference
# pages on internals (architecture, saved model, algorithms) show sketches of code, not examples.
PAGES = sorted((DOCS / "guides").glob("*.md")) + sorted((DOCS / "api").glob("*.md")) + [DOCS / "index.md", ROOT / "README.md"]
FENCE = re.compile(r"^```(pycon|python|console)[^\n]*\n(.*?)^```", re.S | re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
RAY_IMPORT = re.compile(r"^\s*(import ray\b|from ray\b|from wnb_stream(\.distributed)? import .*\bray\b)", re.M)


def _blocks(page: pathlib.Path) -> list[tuple[str, str, int]]:
    """(kind, code, line) of each block; a ``python`` block of ``>>>`` examples is a doctest."""
    text = page.read_text()
    blocks = []
    for m in FENCE.finditer(text):
        kind, code = m.group(1), m.group(2)
        if kind == "python" and code.lstrip().startswith(">>>"):
            kind = "pycon"
        blocks.append((kind, code, text.count("\n", 0, m.start()) + 2))
    return blocks


def _capymoa_usable() -> bool:
    if importlib.util.find_spec("capymoa") is None:
        return False
    from wnb_stream.apps import compat

    return compat.capymoa_available()


def _skip_without_extras(text: str) -> None:
    """Skip (or, in CI, fail) an example that needs an extra this environment lacks."""
    if "capymoa" in text:
        require("capymoa", _capymoa_usable())
    if RAY_IMPORT.search(text):
        require("ray")


def _commands(block: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console block; ``\\`` continues a command."""
    pairs, command, expected = [], None, []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            if command is not None:
                pairs.append((command, "\n".join(expected)))
            command, expected = line[2:], []
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
        elif command is not None:
            expected.append(line)
        i += 1
    if command is not None:
        pairs.append((command, "\n".join(expected)))
    return pairs


def _shim(directory: pathlib.Path) -> dict:
    """An environment where ``wnb-stream`` and ``python`` are this checkout's."""
    bin_dir = directory / ".bin"
    bin_dir.mkdir()
    (bin_dir / "wnb-stream").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m wnb_stream "$@"\n')
    (bin_dir / "wnb-stream").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT), COLUMNS="200")


def _marks(page: pathlib.Path) -> list:
    """capymoa pages run in CI's capymoa environment; pages that run the command line or start
    Ray are slow (CI runs them); pages that start Ray share one xdist worker with the Ray tests
    (one local cluster at a time)."""
    text = page.read_text()
    marks = [pytest.mark.capymoa] if "capymoa" in text and page.parent.name == "guides" else []
    if "```console" in text or RAY_IMPORT.search(text):  # runs the command line, or starts Ray: CI runs it (--run-slow)
        marks.append(pytest.mark.slow)
    return marks + ([pytest.mark.xdist_group("ray")] if RAY_IMPORT.search(text) else [])


PAGES_WITH_EXAMPLES = [
    pytest.param(p, marks=_marks(p)) for p in PAGES if any(kind != "pycon" or p.name != "README.md" for kind, _, _ in _blocks(p))
]


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_of_the_page_run(page, tmp_path, monkeypatch):
    name = str(page.relative_to(ROOT))
    blocks = _blocks(page)
    if "capymoa" in page.read_text() and page.parent.name == "guides":
        _skip_without_extras("capymoa")
    monkeypatch.chdir(tmp_path)
    env = _shim(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    checker = doctest.OutputChecker()
    for kind, code, line in blocks:
        where = f"{name}, line {line}"
        if kind == "pycon":
            if page.name == "README.md":
                continue  # pytest's doctest run has them
            test = doctest.DocTestParser().get_doctest(code, namespace, where, str(page), line - 1)
            runner = doctest.DocTestRunner(optionflags=FLAGS)
            report = []
            runner.run(test, out=report.append, clear_globs=False)
            namespace.update(test.globs)  # a DocTest works on a copy of the namespace
            assert runner.failures == 0, "".join(report)
        elif kind == "python":
            _skip_without_extras(code)
            exec(compile(code, where, "exec"), namespace)
        else:
            for command, expected in _commands(code):
                done = subprocess.run(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, env=env, timeout=600)  # fmt: skip
                output = done.stdout
                assert done.returncode == 0, f"{where}: `{command}` exited {done.returncode}:\n{output}"
                if not checker.check_output(expected.strip() + "\n", output.strip() + "\n", FLAGS):
                    pytest.fail(f"{where}: `{command}` printed\n{output}\nexpected\n{expected}", pytrace=False)


def test_every_guide_has_an_example():
    for page in sorted((DOCS / "guides").glob("*.md")):
        assert _blocks(page), f"{page.name} has no example"


def test_the_site_builds_strictly(tmp_path):
    require("docs", shutil.which("mkdocs") is not None or importlib.util.find_spec("mkdocs") is not None)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-5000:]
    assert (tmp_path / "site" / "api" / "classifier" / "index.html").is_file()
    page = (tmp_path / "site" / "api" / "classifier" / "index.html").read_text()
    assert "predict_proba_one" in page and "on_type_change" in page
    # issue 32: formulas rendered by MathJax, shipped in the site (nothing fetched, nothing from a CDN)
    site = tmp_path / "site"
    assert (site / "javascripts" / "mathjax" / "tex-chtml.js").is_file()
    assert list((site / "javascripts" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    home = (site / "index.html").read_text()
    assert '<script src="javascripts/mathjax/tex-chtml.js"' in home and 'class="arithmatex"' in home
    assert r"\prod_k p(x_k \mid C_j)^{w_k}" in home
    assert 'class="arithmatex"' in page and 'class="arithmatex"' in (site / "algorithms" / "modl" / "index.html").read_text()
    for html in site.rglob("*.html"):
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', html.read_text()), html
    # the docstrings' docs/... references are links to the pages
    assert '<a href="../../algorithms/drift/"><code>docs/algorithms/drift.md</code></a>' in page
    assert '<a href="../../algorithms/summaries/#absent-features"><code>docs/algorithms/summaries.md#absent-features</code></a>' in page


def test_a_docstring_reference_to_a_missing_page_or_anchor_is_a_warning(tmp_path, caplog):
    """The strict build fails on a warning: a reference to a page or an anchor that does not exist."""
    import types

    sys.path.insert(0, str(ROOT))
    try:
        import mkdocs_hooks
    finally:
        sys.path.remove(str(ROOT))
    pages = {"algorithms/drift.md": types.SimpleNamespace(url="algorithms/drift/", dest_uri="algorithms/drift/index.html")}
    files = types.SimpleNamespace(get_file_from_path=pages.get)
    page = types.SimpleNamespace(url="api/classifier/", file=types.SimpleNamespace(src_uri="api/classifier.md"))
    mkdocs_hooks._checks.clear()
    text = mkdocs_hooks.on_page_content(
        "<p><code>docs/algorithms/drift.md#nowhere</code> and <code>docs/algorithms/gone.md</code></p>", page, None, files
    )  # fmt: skip
    assert text == ('<p><a href="../../algorithms/drift/#nowhere"><code>docs/algorithms/drift.md#nowhere</code></a> '
                    "and <code>docs/algorithms/gone.md</code></p>")  # fmt: skip
    assert "docs/algorithms/gone.md, which is not a page of the site" in caplog.text
    (tmp_path / "algorithms" / "drift").mkdir(parents=True)
    (tmp_path / "algorithms" / "drift" / "index.html").write_text('<h2 id="detection">')
    pytest.importorskip("mathjax")
    mkdocs_hooks.on_post_build(types.SimpleNamespace(site_dir=str(tmp_path)))
    assert "refers to #nowhere of algorithms/drift/index.html, which has no such anchor" in caplog.text
    assert (tmp_path / "javascripts" / "mathjax" / "tex-chtml.js").is_file()
