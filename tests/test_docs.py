"""The documentation site builds cleanly, and no file of the repository cites a document the
project does not contain (a page, or a heading of a page, that is not there)."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# `docs/<page>.md`, optionally followed by `, "<heading>"`: how code cites a page and a section
PAGE_CITATION = re.compile(r'docs/(?P<page>[A-Za-z0-9_./-]+?\.md)(?:, "(?P<heading>[^"\n]+)")?')
EXTERNAL_DESIGN = "DESIGN" + ".md"   # spelt apart so that this file does not cite it itself
HEADING = re.compile(r"^#{1,6}\s+(?P<text>.+?)\s*#*\s*$", re.MULTILINE)


@lru_cache(maxsize=1)
def _text_files() -> tuple[tuple[str, str], ...]:
    """(path, text) of every file git tracks or would track, binary files left out."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                                cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the file list comes from git ls-files")
    files = []
    for name in sorted(filter(None, listed.decode().split("\0"))):
        path = REPO / name
        if not path.is_file():
            continue                  # deleted in the work tree, not yet committed
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            files.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return tuple(files)


def _headings(page: Path) -> set[str]:
    return {match["text"] for match in HEADING.finditer(page.read_text(encoding="utf-8"))}


def test_the_site_builds_strictly(tmp_path):
    """A broken link or anchor, or a page missing from mkdocs.yml's nav, fails the build."""
    missing = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: pip install -e '.[dev]' installs mkdocs-material")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                             str(REPO / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                            cwd=REPO, capture_output=True, text=True,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})   # no banner in the failure message
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "site" / "design" / "index.html").is_file()


def test_every_cited_docs_page_and_heading_exists():
    broken = []
    for name, text in _text_files():
        for match in PAGE_CITATION.finditer(text):
            page = REPO / "docs" / match["page"]
            if not page.is_file():
                broken.append(f"{name}: docs/{match['page']} does not exist")
            elif match["heading"] and match["heading"] not in _headings(page):
                broken.append(f"{name}: docs/{match['page']} has no heading \"{match['heading']}\"")
    assert broken == []


def test_no_file_cites_a_document_outside_the_project():
    citing = [name for name, text in _text_files() if EXTERNAL_DESIGN in text]
    assert citing == []
