"""A plain install can read: ``pip install .`` into a fresh venv, nothing else, then the installed
``serpfuse read`` reads a local HTML page.

The package is installed from a copy of what it ships (pyproject, README, LICENSE, src/), so no build
directory lands in the work tree and nothing of the dev extra or of this checkout's import path leaks in
(PYTHONPATH is dropped). pip reaches the package index as configured on the machine. Bounded: the install
has ``INSTALL_TIMEOUT_S``, the read two minutes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGE = Path(__file__).parent / "fixtures" / "reader" / "article_handmade.html"
INSTALL_TIMEOUT_S = 900  # a cold pip cache downloads every dependency (about 2.5 minutes here)


def _clean_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONPATH" and not k.startswith("SERPFUSE_") and k != "VIRTUAL_ENV"
    }
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), SERPFUSE_CACHE_DIR=str(home / "cache"))
    return env


@pytest.mark.slow
def test_pip_install_dot_alone_then_serpfuse_read_reads_a_page(tmp_path):
    tree = tmp_path / "serpfuse-src"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, tree / name)
    shutil.copytree(REPO / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    venv = tmp_path / "venv"
    env = _clean_env(tmp_path)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env, timeout=120)
    # as the Makefile does: the pip a venv starts with can be old (Python 3.11's 23.2 trips over lxml's extra,
    # spelled html_clean by justext and html-clean by readability-lxml)
    upgrade = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--upgrade", "pip"],
        capture_output=True, text=True, env=env, timeout=INSTALL_TIMEOUT_S, cwd=tmp_path,
    )  # fmt: skip
    assert upgrade.returncode == 0, upgrade.stderr[-2000:]
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--prefer-binary", str(tree)],
        capture_output=True, text=True, env=env, timeout=INSTALL_TIMEOUT_S, cwd=tmp_path,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-2000:]
    # the dev and bench extras are not there (the reader must not lean on them); readability-lxml, a core
    # dependency, is
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import importlib.util as u; print(u.find_spec('resiliparse'), u.find_spec('pytest'), u.find_spec('readability') is not None)"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert probe.stdout.split() == ["None", "None", "True"], probe.stdout + probe.stderr
    page = tmp_path / "page.html"
    shutil.copy2(PAGE, page)
    read = subprocess.run(
        [str(venv / "bin" / "serpfuse"), "read", str(page)],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert read.returncode == 0, read.stderr[-2000:]
    assert "## Reading a table" in read.stdout and "| Time | Height (m) |" in read.stdout
    assert "Traceback" not in read.stderr
