"""Settings: TOML file < SERPFUSE_* environment < flags; unknown keys are one-line errors; secrets never shown."""

from __future__ import annotations

import json
import os
import stat

import pytest
from typer.testing import CliRunner

from serpfuse.cli import app
from serpfuse.cli.config import public_view
from serpfuse.secrets import mask_url
from serpfuse.settings import (
    CONFIG_FILE_NAME,
    ConfigError,
    Settings,
    find_config_file,
    load_settings,
)

SECRET_TOKEN = "tok-5f0a9c2e"
REDIS_PASSWORD = "pw-81b2"
PROXY_PASSWORD = "px-77aa"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No SERPFUSE_* from the caller, no user config; the working directory is a fresh temp dir."""
    for name in list(os.environ):
        if name.startswith("SERPFUSE_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SERPFUSE_KEYS_FILE", str(tmp_path / "keys.json"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_file():
    s = load_settings()
    assert s == Settings()
    assert s.host == "127.0.0.1" and s.limit == 8 and s.cache_backend == "sqlite"
    assert s.ranking_config.strategy == "combmnz"


def test_precedence_file_then_environment_then_flags(isolated, monkeypatch):
    _write(
        isolated / CONFIG_FILE_NAME,
        'limit = 3\ndeadline_s = 5.5\nstrategy = "rrf"\nengines = ["ddg", "bing"]\n[ranking.rrf]\nrrf_constant = 30\n',
    )
    s = load_settings()
    assert (s.limit, s.deadline_s, s.strategy, s.engines) == (3, 5.5, "rrf", ["ddg", "bing"])
    assert s.ranking.rrf.rrf_constant == 30 and s.ranking_config.strategy == "rrf"

    monkeypatch.setenv("SERPFUSE_LIMIT", "4")
    monkeypatch.setenv("SERPFUSE_ENGINES", "brave, mojeek")
    monkeypatch.setenv("SERPFUSE_RANKING__RRF__RRF_CONSTANT", "45")
    s = load_settings()
    assert (s.limit, s.engines, s.deadline_s) == (4, ["brave", "mojeek"], 5.5)
    assert s.ranking.rrf.rrf_constant == 45
    assert s.ranking.rrf.authority_boost == 0.25  # untouched knobs keep their defaults

    s = load_settings(limit=5, strategy=None)  # None is "flag not given"
    assert (s.limit, s.strategy) == (5, "rrf")


def test_config_file_lookup_order(isolated, tmp_path, monkeypatch):
    user = _write(tmp_path / "xdg" / "serpfuse" / CONFIG_FILE_NAME, "limit = 2\n")
    assert find_config_file() == user and load_settings().limit == 2
    local = _write(isolated / CONFIG_FILE_NAME, "limit = 6\n")
    assert find_config_file() == local and load_settings().limit == 6
    explicit = _write(tmp_path / "elsewhere.toml", "limit = 7\n")
    monkeypatch.setenv("SERPFUSE_CONFIG", str(explicit))
    assert load_settings().limit == 7
    assert load_settings(tmp_path / "elsewhere.toml", limit=9).limit == 9
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("limt = 3\n", "unknown key 'limt'"),
        ('[ranking]\nstrategy = "rrf"\nbogus = 1\n', "ranking.bogus: unknown key"),
        ("[ranking.rrf]\nrrf_konstant = 1\n", "ranking.rrf.rrf_konstant: unknown key"),
        ("[ranking.rrf]\nrrf_constant = -1\n", "ranking.rrf.rrf_constant"),
        ('strategy = "best"\n', "unknown strategy 'best'"),
        ('[ranking]\nstrategy = "best"\n', "unknown strategy 'best'"),
        ("limit = 50\n", "limit"),
        ('cache = "memcached"\n', "cache"),
        ("limit = = 3\n", "not valid TOML"),
    ],
)
def test_bad_files_are_one_line_errors(isolated, toml, needle):
    _write(isolated / CONFIG_FILE_NAME, toml)
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert needle in message and "\n" not in message


def test_bad_environment_is_a_one_line_error(monkeypatch):
    monkeypatch.setenv("SERPFUSE_PORT", "not-a-port")
    with pytest.raises(ConfigError, match="port") as info:
        load_settings()
    assert "\n" not in str(info.value)


def test_cache_backend_follows_redis_url_unless_set():
    assert load_settings(redis_url="redis://127.0.0.1:6379/0").cache_backend == "redis"
    assert load_settings(redis_url="redis://127.0.0.1:6379/0", cache="sqlite").cache_backend == "sqlite"
    assert load_settings(cache="off").cache_backend == "off"
    assert load_settings(cache_dir="/tmp/x").cache_path.as_posix() == "/tmp/x/results.sqlite3"


def test_public_view_masks_every_secret():
    s = load_settings(
        api_token=SECRET_TOKEN,
        redis_url=f"redis://user:{REDIS_PASSWORD}@127.0.0.1:6379/0",
        proxy=f"http://me:{PROXY_PASSWORD}@proxy.local:3128",
    )
    dumped = json.dumps(public_view(s))
    for secret in (SECRET_TOKEN, REDIS_PASSWORD, PROXY_PASSWORD):
        assert secret not in dumped and secret not in repr(s) and secret not in str(s)
    view = public_view(s)
    assert view["api_token"] == "***"
    assert view["redis_url"] == "redis://user:***@127.0.0.1:6379/0"
    assert view["ranking_fingerprint"] == s.ranking_config.fingerprint()
    assert mask_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert mask_url("rediss://:pw@h:1") == "rediss://:***@h:1"


# --- the `serpfuse config` commands --------------------------------------------------------------------------


def test_config_show_prints_effective_settings_masked(isolated, monkeypatch):
    _write(isolated / CONFIG_FILE_NAME, "limit = 4\n")
    monkeypatch.setenv("SERPFUSE_API_TOKEN", SECRET_TOKEN)
    monkeypatch.setenv("SERPFUSE_REDIS_URL", f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0")
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key-should-not-show")
    result = CliRunner().invoke(app, ["config", "show"])
    assert result.exit_code == 0, result.output
    for secret in (SECRET_TOKEN, REDIS_PASSWORD, "brave-key-should-not-show"):
        assert secret not in result.output
    shown = json.loads(result.output)
    assert shown["config_file"].endswith(CONFIG_FILE_NAME)
    assert shown["settings"]["limit"] == 4 and shown["settings"]["api_token"] == "***"
    assert shown["settings"]["cache"] == "redis"
    assert shown["keys"]["brave"] == "configured"


def test_config_show_reports_a_bad_file_in_one_line(isolated):
    _write(isolated / CONFIG_FILE_NAME, "colour = 'blue'\n")
    result = CliRunner().invoke(app, ["config", "show"])
    assert result.exit_code == 2
    assert "unknown key 'colour'" in result.output


def test_config_keys_set_writes_a_private_file_and_list_never_shows_keys(tmp_path):
    key = "BSA-test-key-42"
    runner = CliRunner()
    result = runner.invoke(app, ["config", "keys", "--set", f"brave={key}"])
    assert result.exit_code == 0, result.output
    path = tmp_path / "keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"brave": key}
    assert key not in result.output

    listed = runner.invoke(app, ["config", "keys", "--list"])
    assert listed.exit_code == 0 and key not in listed.output
    lines = {line.split()[0]: line for line in listed.output.splitlines() if line.strip()}
    assert "configured" in lines["brave"] and "missing" in lines["exa"]

    via_stdin = runner.invoke(app, ["config", "keys", "--set", "exa=-"], input="exa-key-from-stdin\n")
    assert via_stdin.exit_code == 0 and json.loads(path.read_text())["exa"] == "exa-key-from-stdin"

    bad = runner.invoke(app, ["config", "keys", "--set", "nosuchengine=x"])
    assert bad.exit_code == 2 and "unknown engine 'nosuchengine'" in bad.output
    malformed = runner.invoke(app, ["config", "keys", "--set", "brave"])
    assert malformed.exit_code == 2 and "ENGINE=KEY" in malformed.output
