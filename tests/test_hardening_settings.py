"""Settings the CLI cannot use are one line and exit 2, never a traceback, and never silently ignored: a settings
file that is not UTF-8, a ``SERPFUSE_*`` variable serpfuse does not read (with the nearest one it does), and an
engine the source does not have, caught at start-up rather than as a 400 on every search."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks.setups import DATA_ENV
from redis_server import CLI, free_port, isolated_env
from serpfuse.settings import OTHER_ENV

EXIT_BAD_SETTINGS = 2


def serpfuse(tmp_path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        capture_output=True, text=True, cwd=tmp_path, env=isolated_env(tmp_path, env), timeout=120,
    )  # fmt: skip


def assert_one_line_refusal(done: subprocess.CompletedProcess, *expected: str) -> None:
    assert done.returncode == EXIT_BAD_SETTINGS, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("serpfuse: error: "), done.stderr
    for text in expected:
        assert text in lines[0], lines[0]


def test_a_settings_file_that_is_not_utf8(recording, tmp_path):
    (tmp_path / "latin1.toml").write_bytes('limit = 3\nengines = ["café"]\n'.encode("latin-1"))
    done = serpfuse(tmp_path, "search", "x", "--replay", str(recording), "--config", "latin1.toml")
    assert_one_line_refusal(done, "latin1.toml: not UTF-8 (byte 25)")


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ("SERPFUSE_DEADLINE", "SERPFUSE_DEADLINE is no serpfuse setting; did you mean SERPFUSE_DEADLINE_S?"),
        ("SERPFUSE_ENGNES", "did you mean SERPFUSE_ENGINES?"),
        (
            "SERPFUSE_XYZZY",
            "SERPFUSE_XYZZY is no serpfuse setting; `serpfuse config show` lists the settings",
        ),
        ("SERPFUSE_RANKING__NOPE", "ranking.nope: unknown key"),  # nested: the settings model's own check
    ],
)
def test_an_environment_variable_serpfuse_does_not_read(recording, tmp_path, variable, expected):
    done = serpfuse(tmp_path, "search", "x", "--replay", str(recording), env={variable: "3"})
    assert_one_line_refusal(done, expected)


def test_the_variables_serpfuse_reads_besides_its_settings_are_taken(recording, tmp_path):
    assert DATA_ENV in OTHER_ENV  # the benchmark's corpora, named where the settings cannot import it from
    known = {
        "SERPFUSE_DATA": str(tmp_path),
        "SERPFUSE_SEARXNG_URL": "http://127.0.0.1:9",
        "SERPFUSE_BRAVE_API_KEY": "k",
        "SERPFUSE_EXA_FREE_API_KEY": "k",
        "SERPFUSE_LIMIT": "3",
    }
    done = serpfuse(tmp_path, "search", "top restaurants in belgrad", "--replay", str(recording), env=known)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize(
    ("engines", "expected"),
    [
        ('["nope"]', "settings: engines: unknown engine 'nope'; choose from: anysearch, bing"),
        ('["brave", "bravee"]', "settings: engines: unknown engine 'bravee'; did you mean 'brave'?"),
    ],
)
def test_serve_refuses_an_unknown_engine_at_start_up(tmp_path, engines, expected):
    (tmp_path / "serpfuse.toml").write_text(f"engines = {engines}\n")
    done = serpfuse(tmp_path, "serve", "--port", str(free_port()), "--workers", "1")
    assert_one_line_refusal(done, expected)


def test_a_replayed_search_refuses_an_engine_not_in_the_recording(recording, tmp_path):
    (tmp_path / "serpfuse.toml").write_text('engines = ["ddg", "nope"]\n')  # ddg: the recording's duckduckgo
    done = serpfuse(tmp_path, "search", "top restaurants in belgrad", "--replay", str(recording))
    assert_one_line_refusal(done, "unknown engine 'nope'", "duckduckgo")
    (tmp_path / "serpfuse.toml").write_text('engines = ["ddg", "bing"]\n')
    done = serpfuse(tmp_path, "search", "top restaurants in belgrad", "--replay", str(recording))
    assert done.returncode == 0, done.stderr[-2000:]
