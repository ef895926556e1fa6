"""The docs site builds (``make docs``: mkdocs, strict, so a broken link between pages fails it), and the README
stays a front page: what serpfuse is, the two commands, one example per face, where to read more."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 300


def test_the_docs_site_builds_strict(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "http-api" / "index.html").exists()


def test_every_page_is_in_the_navigation():
    config = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [p for p in pages if f": {p}" not in config] == []


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    links = {line.split("](docs/")[1].split(")")[0] for line in text.splitlines() if "](docs/" in line}
    missing = [name for name in links if not (ROOT / "docs" / name).exists()]
    assert missing == []
