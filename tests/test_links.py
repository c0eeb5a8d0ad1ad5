"""Every relative link in the project's prose leads somewhere: the README, ``docs/``, the
tutorials' markdown cells and every other ``.md`` / ``.ipynb`` of the checkout.

A link names a file that exists, and its ``#anchor`` (if any) a heading there: for a
``.md`` file the anchor GitHub makes of the heading, for a notebook that one or the one
JupyterLab makes (the heading's text with spaces as hyphens). Links to the web are not
followed (the tests run offline).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {"node_modules", "build", "dist", "site-packages"}

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^)]*[\"'])?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
HTML_ATTR = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""")
HTML_ANCHOR = re.compile(r"""<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def prose_files() -> list[Path]:
    """The project's markdown and notebooks (hidden and build folders left out)."""
    found = []
    for path in sorted([*ROOT.rglob("*.md"), *ROOT.rglob("*.ipynb")]):
        parts = path.relative_to(ROOT).parts[:-1]
        if any(p.startswith(".") or p in SKIPPED_DIRS for p in parts):
            continue
        found.append(path)
    return found


def markdown_of(path: Path) -> str:
    """The markdown a reader sees in ``path`` (a notebook's markdown cells only)."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "markdown"
    )


def _without_code(text: str) -> str:
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links_of(text: str) -> list[str]:
    """Every link target written in ``text`` (inline, reference and HTML), outside code."""
    prose = _without_code(text)
    found = [*INLINE.findall(prose), *REFERENCE.findall(prose), *HTML_ATTR.findall(prose)]
    return [target for target in found if target]


def _heading_text(raw: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    return text.replace("`", "").replace("*", "").strip()


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as -."""
    text = _heading_text(heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    """The anchors a link into ``path`` may name."""
    text = markdown_of(path)
    prose = FENCE.sub("", text)
    anchors = set(HTML_ANCHOR.findall(prose))
    seen: dict[str, int] = {}
    for raw in HEADING.findall(prose):
        slug = github_slug(raw)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
        if path.suffix == ".ipynb":
            anchors.add(_heading_text(raw).replace(" ", "-"))  # JupyterLab's
    return anchors


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """The relative links in ``path`` that lead nowhere, each with the reason."""
    broken = []
    for target in links_of(markdown_of(path)):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or target.startswith("/"):
            continue  # the web (or a server path), not a file of the checkout
        where = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        if not where.exists():
            broken.append(f"{target}: no such file")
            continue
        if root.resolve() not in (where, *where.parents):
            broken.append(f"{target}: outside the checkout")
            continue
        anchor = unquote(parts.fragment)
        if anchor and where.suffix in (".md", ".ipynb") and anchor not in anchors_of(where):
            broken.append(f"{target}: no heading #{anchor} in {where.name}")
    return broken


FILES = prose_files()


def test_the_prose_of_the_checkout_is_found():
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "docs/forms.md", "notebooks/00-quickstart.ipynb"} <= names
    assert sum(n.startswith("notebooks/") for n in names) >= 12
    assert not any(n.startswith(".") for n in names)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_somewhere(path: Path):
    assert broken_links(path) == []


def test_the_check_finds_broken_files_and_anchors(tmp_path: Path):
    (tmp_path / "guide.md").write_text(
        "# Getting started\n\n## Step 1: install `it`\n\n## Step 1: install it\n"
        '<a id="kept"></a>\n',
        encoding="utf-8",
    )
    notebook = {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["## Next steps\n"]}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "01-next.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    page = tmp_path / "index.md"
    page.write_text(
        "\n".join(
            [
                "[ok](guide.md#getting-started) [ok](guide.md#step-1-install-it)",
                "[ok](guide.md#step-1-install-it-1) [ok](guide.md#kept) [ok](#top)",
                "[ok](01-next.ipynb#Next-steps) [ok](01-next.ipynb#next-steps)",
                "![ok](guide.md) [web](https://example.org/nowhere.md)",
                "[gone](07-missing.ipynb) [gone](guide.md#nowhere)",
                '<img src="img/gone.png"> [gone][ref]',
                "`[not a link](in-code.md)`",
                "```",
                "[not a link](in-a-fence.md)",
                "```",
                "[ref]: missing.md",
                "# Top",
            ]
        ),
        encoding="utf-8",
    )
    assert broken_links(page, root=tmp_path) == [
        "07-missing.ipynb: no such file",
        "guide.md#nowhere: no heading #nowhere in guide.md",
        "missing.md: no such file",
        "img/gone.png: no such file",
    ]
