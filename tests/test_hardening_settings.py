"""Settings the CLI cannot use are one line and exit 2, never a traceback, and never silently ignored: a settings
file that is not UTF-8, a ``SERPFUSE_*`` variable serpfuse does not read (with the nearest one it does), and an
engine the source does not have, caught at start-up rather than as a 400 on every search."""

from __future__ import annotations

import json
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
        ('["nope"]', "settings: engines: unknown engine 'nope'; choose from: anysearch, baidu, bing"),
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


DEEP = 100_000  # far past the parsers' own recursion limit (json and tomllib both recurse per level)


@pytest.mark.parametrize(
    ("name", "content", "command", "expected"),
    [
        ("deep.toml", "a = " + "[" * DEEP + "]" * DEEP + "\n", ["search", "x", "--config", "deep.toml"],
         "deep.toml: nests too deeply"),
        ("deep.toml", "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", ["serve", "--config", "deep.toml"],
         "deep.toml: nests too deeply"),
        ("deep.toml", "a = " + "[" * DEEP + "]" * DEEP + "\n", ["search", "x", "--weights", "deep.toml"],
         "deep.toml: nests too deeply"),
        ("deep.json", "[" * DEEP + "]" * DEEP, ["bench", "--replay", "deep.json", "--qrels", "deep.json"],
         "deep.json:1: nests too deeply"),  # the judgments are read first
        ("deep.json", "[" * DEEP + "]" * DEEP, ["calibrate", "--replay", "deep.json", "--qrels", "deep.json"],
         "deep.json nests too deeply"),
        ("deep.json", "[" * DEEP + "]" * DEEP, ["judge", "deep.json", "--port", "0"], "deep.json nests too deeply"),
        ("deep.json", "[" * DEEP + "]" * DEEP, ["record", "--queries", "deep.json", "--out", "rec"], "not valid JSON"),
    ],
)  # fmt: skip
def test_a_deeply_nested_file_is_one_line_and_exit_2(recording, tmp_path, name, content, command, expected):
    (tmp_path / name).write_text(content, encoding="utf-8")
    if command[0] == "search":
        command = [*command, "--replay", str(recording)]
    done = serpfuse(tmp_path, *command)
    assert_one_line_refusal(done, expected)


def test_judgments_nested_deeply_are_one_line(recording, tmp_path):
    (tmp_path / "j.jsonl").write_text("[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    done = serpfuse(tmp_path, "judge", str(recording), "--out", "j.jsonl", "--port", "0")
    assert_one_line_refusal(done, "j.jsonl:1: nests too deeply")


@pytest.mark.parametrize(
    "url", ["redis://[::1", "redis://u:pw-3f9e@[::1/0", "redis://h:99999999/0", "http://h/"]
)
def test_config_show_with_an_unreadable_redis_url_is_one_line(tmp_path, url):
    done = serpfuse(tmp_path, "config", "show", env={"SERPFUSE_REDIS_URL": url})
    assert_one_line_refusal(done, "redis_url: not a Redis URL")
    assert "pw-3f9e" not in done.stderr


def test_engines_with_redis_down_says_so_and_lists_the_engines(tmp_path):
    """Nothing listens at the Redis URL: the engines are still listed (exit 0), with one line saying the
    cooldowns shown are this process's own; the URL's password is never shown."""
    url = f"redis://u:pw-77ab@127.0.0.1:{free_port()}/0"
    done = serpfuse(tmp_path, "engines", "--json", env={"SERPFUSE_REDIS_URL": url})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    names = {row["engine"] for row in json.loads(done.stdout)}
    assert {"ddg", "bing", "brave"} <= names
    assert "redis did not answer" in done.stderr
    assert "pw-77ab" not in done.stderr + done.stdout
