"""What the browser tests share: Debian's Chromium, headless and kept off the network. A test module that
imports this is skipped where the browser is missing. The ``browser`` and ``shots`` fixtures are conftest's."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium; .ci/run installs it)",
        allow_module_level=True,
    )
from playwright.sync_api import expect  # noqa: E402  (only where Chromium is)

ROOT = Path(__file__).resolve().parent.parent
# Without the background-networking flags Chromium dials Google's hosts at every start, and this machine is closed.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
expect.set_options(timeout=20_000)  # a loaded 2-core machine: generous waits, still bounded
