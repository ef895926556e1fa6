"""``serpfuse.search()`` builds its deployment from the settings the CLI reads: a ``serpfuse.toml`` in the working
directory sends an engine to its base URL (a loopback fake SearXNG here) and its ``[ranking.weights]`` decide the
order; ``settings=`` given in code wins over the file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import serpfuse
from fakeserver import Reply
from serpfuse.config import RankingConfig
from serpfuse.settings import load_settings

QUERY = "rust async runtime"
# Two pages, each listed first by one of SearXNG's engines: the weights alone say which leads.
RESULTS = [
    {
        "url": "https://tokio.example/rust-async-runtime",
        "title": "Tokio, a Rust async runtime",
        "content": "Tokio is an asynchronous runtime for the Rust programming language.",
        "engine": "bing",
        "engines": ["bing"],
        "positions": [1],
    },
    {
        "url": "https://smol.example/rust-async-runtime",
        "title": "smol, a small Rust async runtime",
        "content": "smol is a small and fast async runtime for Rust.",
        "engine": "google",
        "engines": ["google"],
        "positions": [1],
    },
]


@pytest.fixture
def in_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory of its own, no SERPFUSE_* variable but a cache there."""
    for name in list(os.environ):
        if name.startswith("SERPFUSE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SERPFUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_toml(folder: Path, base_url: str, weights: dict[str, float]) -> None:
    table = "".join(f'"{engine}" = {weight}\n' for engine, weight in weights.items())
    (folder / "serpfuse.toml").write_text(
        f'[engines.searxng]\nbase_url = "{base_url}"\n\n[ranking.weights]\n{table}',
        encoding="utf-8",
    )


def fake_searxng(server) -> None:
    body = json.dumps({"query": QUERY, "results": RESULTS}).encode()
    server.route("/search", Reply(200, {"Content-Type": "application/json"}, body))


@pytest.mark.parametrize(("favoured", "first"), [("bing", "tokio"), ("google", "smol")])
def test_search_reads_serpfuse_toml_in_the_working_directory(server, in_folder, favoured, first):
    fake_searxng(server)
    write_toml(in_folder, server.url, {f"searxng:{favoured}": 4.0})
    response = serpfuse.search(QUERY, engines=["searxng"], use_cache=False)
    asked = [s for s in server.requests if s.path == "/search"]
    assert asked and asked[-1].query["q"] == [QUERY]  # the base URL from the file
    assert [e.engine for e in response.engines] == ["searxng"]
    assert (
        response.results[0].url == f"https://{first}.example/rust-async-runtime"
    )  # the weights from the file
    assert response.config_fingerprint == load_settings().ranking_config.fingerprint()
    assert response.config_fingerprint != RankingConfig().fingerprint()


def test_settings_given_in_code_win_over_the_file(server, in_folder):
    fake_searxng(server)
    write_toml(in_folder, server.url, {"searxng:bing": 4.0})
    settings = load_settings()
    settings.ranking = settings.ranking.model_copy(update={"weights": {"searxng:google": 4.0}})
    response = serpfuse.search(QUERY, engines=["searxng"], settings=settings, use_cache=False)
    assert response.results[0].url == "https://smol.example/rust-async-runtime"


def test_a_repeated_search_is_served_from_the_settings_cache(server, in_folder):
    fake_searxng(server)
    write_toml(in_folder, server.url, {})
    first = serpfuse.search(QUERY, engines=["searxng"])
    again = serpfuse.search(QUERY, engines=["searxng"])
    assert not first.cached and again.cached
    assert len([s for s in server.requests if s.path == "/search"]) == 1
    assert (in_folder / "cache" / "results.sqlite3").exists()


def test_settings_are_read_again_when_the_file_or_environment_changes(server, in_folder, monkeypatch):
    """The settings are kept between searches (a load costs more than a replayed search), but never past a change
    of what they were read from: the file's weights, then a variable, are in the next search's configuration."""
    fake_searxng(server)
    write_toml(in_folder, server.url, {"searxng:bing": 4.0})
    first = serpfuse.search(QUERY, engines=["searxng"], use_cache=False)
    assert first.results[0].url == "https://tokio.example/rust-async-runtime"
    write_toml(in_folder, server.url, {"searxng:google": 4.0, "searxng:bing": 0.5})
    second = serpfuse.search(QUERY, engines=["searxng"], use_cache=False)
    assert second.results[0].url == "https://smol.example/rust-async-runtime"
    monkeypatch.setenv("SERPFUSE_LIMIT", "1")
    assert len(serpfuse.search(QUERY, engines=["searxng"], use_cache=False).results) == 1
