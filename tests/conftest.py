"""Shared fixtures. Recorded data lives outside the package: $SERPFUSE_DATA, default ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def data_root() -> Path:
    return Path(os.environ.get("SERPFUSE_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    root = data_root()
    if not root.is_dir():
        pytest.skip(f"recorded data not found at {root} (set SERPFUSE_DATA)")
    return root


def need(path: Path) -> Path:
    """Skip, saying why, when one recorded data file is missing."""
    if not path.exists():
        pytest.skip(f"recorded data file missing: {path}")
    return path


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Tests (and the serpfuse processes they start) never read or fill the user's real result cache."""
    os.environ["SERPFUSE_CACHE_DIR"] = str(tmp_path_factory.mktemp("serpfuse-cache"))
    yield
