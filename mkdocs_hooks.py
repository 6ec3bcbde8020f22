"""Build hooks of the documentation site (``mkdocs.yml``, ``hooks:``).

- **Math.** Formulas are written ``$...$`` (inline) or ``$$...$$`` (display) in the pages and
  the docstrings; ``pymdownx.arithmatex`` wraps them for MathJax, and MathJax itself comes from
  a Python package (``django-static-mathjax``, in the ``docs`` extra), copied into the site, so
  that the site renders formulas offline and the build fetches nothing.
- **Cross-references in docstrings.** A docstring names a page of the site as
  ``docs/PATH.md`` or ``docs/PATH.md#anchor`` in double backquotes (readable in ``help()``);
  on the site that code becomes a link to the page. A reference to a page or an anchor that
  does not exist is a warning, which fails the strict build.
"""

from __future__ import annotations

import html
import importlib.util
import logging
import pathlib
import posixpath
import re
import shutil

log = logging.getLogger("mkdocs.hooks.wnb_stream")

#: Where MathJax goes in the site (``extra_javascript`` names this file).
MATHJAX_DIR = "javascripts/mathjax"

_REFERENCE = re.compile(r"<code>docs/([\w./-]+\.md)(#[\w-]+)?</code>")
_checks: list[tuple[str, str, str]] = []  # (page, target file in the site, anchor)


def _mathjax_source() -> pathlib.Path:
    spec = importlib.util.find_spec("mathjax")
    root = pathlib.Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None
    source = root / "static" / "mathjax" / "es5" if root else None
    if source is None or not (source / "tex-chtml.js").is_file():
        raise RuntimeError("MathJax is missing: pip install -e '.[docs]' (it installs django-static-mathjax)")
    return source


def on_config(config):
    _checks.clear()
    _mathjax_source()  # fail early, naming the package
    return config


def on_page_content(html_text: str, page, config, files) -> str:
    """Link the ``docs/PATH.md#anchor`` references that docstrings render as code."""

    def link(match: re.Match) -> str:
        path, anchor = match.group(1), match.group(2) or ""
        target = files.get_file_from_path(path)
        if target is None:
            log.warning(f"{page.file.src_uri}: a docstring refers to docs/{path}, which is not a page of the site")
            return match.group(0)
        url = posixpath.relpath(target.url or ".", posixpath.dirname(page.url) or ".") if page.url else target.url
        url = (url.rstrip("/") + "/") if target.url.endswith("/") else url
        _checks.append((page.file.src_uri, target.dest_uri, anchor[1:]))
        return f'<a href="{html.escape(url + anchor)}">{match.group(0)}</a>'

    return _REFERENCE.sub(link, html_text)


def on_post_build(config) -> None:
    site = pathlib.Path(config.site_dir)
    shutil.copytree(_mathjax_source(), site / MATHJAX_DIR, dirs_exist_ok=True)
    for page, target, anchor in _checks:
        if anchor and f'id="{anchor}"' not in (site / target).read_text(encoding="utf-8"):
            log.warning(f"{page}: a docstring refers to #{anchor} of {target}, which has no such anchor")
