"""Keys: lookup order, the 0600 rule, atomic private writes, masking, and no key in any repr or log."""

from __future__ import annotations

import json
import logging
import os
import stat

import pytest

from serpfuse.engines.base import EngineInfo
from serpfuse.secrets import (
    KeyMaskingFilter,
    KeysFileError,
    KeyStore,
    default_keys_file,
    read_keys_file,
    serpfuse_key_env,
)

BRAVE = EngineInfo(
    name="brave",
    website="https://brave.com",
    tier="primary",
    region="global",
    kind="json",
    needs_key=True,
    key_envs=("SERPFUSE_BRAVE_API_KEY", "BRAVE_API_KEY"),
)
DDG = EngineInfo(
    name="ddg",
    website="https://duckduckgo.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
)
ANYSEARCH = EngineInfo(
    name="anysearch",
    website="https://anysearch.com",
    tier="primary",
    region="both",
    kind="json",
    needs_key=False,
    accepts_key=True,
    key_envs=("ANYSEARCH_API_KEY",),
)
EXA_FREE = EngineInfo(
    name="exa-free", website="https://exa.ai", tier="primary", region="global", kind="mcp", needs_key=False
)
INFOS = {i.name: i for i in (BRAVE, DDG, ANYSEARCH, EXA_FREE)}
KEY = "BSA-1234567890abcdef+/="


def private_file(path, data: dict) -> None:
    path.write_text(json.dumps(data))
    path.chmod(0o600)


def store(tmp_path, env=None, **kw) -> KeyStore:
    return KeyStore(env=env or {}, keys_file=kw.pop("keys_file", tmp_path / "keys.json"), infos=INFOS, **kw)


def test_env_name_convention():
    assert serpfuse_key_env("brave") == "SERPFUSE_BRAVE_API_KEY"
    assert serpfuse_key_env("exa-free") == "SERPFUSE_EXA_FREE_API_KEY"


def test_lookup_order_serpfuse_env_then_familiar_env_then_file(tmp_path):
    private_file(tmp_path / "keys.json", {"brave": "from-file"})
    assert store(tmp_path).get("brave") == "from-file"
    assert store(tmp_path, {"BRAVE_API_KEY": "familiar"}).get("brave") == "familiar"
    both = {"BRAVE_API_KEY": "familiar", "SERPFUSE_BRAVE_API_KEY": "serpfuse"}
    assert store(tmp_path, both).get("brave") == "serpfuse"
    assert store(tmp_path, {"BRAVE_API_KEY": "   "}).get("brave") == "from-file"  # blank counts as unset


def test_dashed_engine_names_use_underscores(tmp_path):
    assert store(tmp_path, {"SERPFUSE_EXA_FREE_API_KEY": "k"}).get("exa-free") == "k"


def test_status_and_hint(tmp_path):
    keys = store(tmp_path, {"ANYSEARCH_API_KEY": "as-key"})
    assert keys.status("brave") == "missing"
    assert keys.status("ddg") == "not needed"
    assert keys.status("anysearch") == "configured"  # keyless engine that uses a key when there is one
    assert store(tmp_path).status("anysearch") == "not needed"
    assert keys.hint("brave") == "set BRAVE_API_KEY"
    assert keys.hint("ddg") == "set SERPFUSE_DDG_API_KEY"


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_keys_file_readable_by_others_is_refused_with_one_line(tmp_path, mode):
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"brave": KEY}))
    path.chmod(mode)
    with pytest.raises(KeysFileError) as info:
        store(tmp_path)
    message = str(info.value)
    assert "\n" not in message and "chmod 600" in message and str(path) in message
    assert KEY not in message


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_owner_only_modes_are_accepted(tmp_path):
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"brave": KEY}))
    for mode in (0o600, 0o400):
        path.chmod(mode)
        assert store(tmp_path).get("brave") == KEY


def test_a_broken_keys_file_never_quotes_its_content(tmp_path):
    path = tmp_path / "keys.json"
    path.write_text('{"brave": "' + KEY + '",,}')
    path.chmod(0o600)
    with pytest.raises(KeysFileError) as info:
        store(tmp_path)
    assert KEY not in str(info.value)
    assert info.value.__context__ is None  # a JSONDecodeError would carry the whole file in its .doc
    private_file(path, {"brave": 42})
    with pytest.raises(KeysFileError):
        store(tmp_path)


def test_missing_keys_file_is_just_no_keys(tmp_path):
    assert read_keys_file(tmp_path / "absent.json") == {}
    assert store(tmp_path).get("brave") is None


def test_keys_file_location(tmp_path, monkeypatch):
    assert default_keys_file({"SERPFUSE_KEYS_FILE": str(tmp_path / "k.json")}) == tmp_path / "k.json"
    assert default_keys_file({}).name == "keys.json" and "serpfuse" in str(default_keys_file({}))
    private_file(tmp_path / "k.json", {"brave": KEY})
    keys = KeyStore(env={"SERPFUSE_KEYS_FILE": str(tmp_path / "k.json")}, infos=INFOS)
    assert keys.get("brave") == KEY


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_write_key_creates_a_private_file_atomically_and_keeps_other_keys(tmp_path):
    path = tmp_path / "conf" / "serpfuse" / "keys.json"
    keys = store(tmp_path, keys_file=path)
    assert keys.write_key("brave", KEY) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    keys.write_key("Tavily", "tvly-abc")
    assert json.loads(path.read_text()) == {"brave": KEY, "tavily": "tvly-abc"}
    assert sorted(p.name for p in path.parent.iterdir()) == ["keys.json"]  # no temp file left behind
    assert store(tmp_path, keys_file=path).get("brave") == KEY  # and it passes its own 0600 check
    with pytest.raises(KeysFileError):
        keys.write_key("brave", "two words")


def test_a_key_written_after_masking_began_is_masked_too(tmp_path):
    keys = store(tmp_path)
    assert keys.mask(f"x {KEY} y") == f"x {KEY} y"  # not a key yet (and the known forms are now cached)
    keys.write_key("brave", KEY)
    assert keys.mask(f"x {KEY} y") == "x *** y"


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_write_key_refuses_to_extend_an_open_file(tmp_path):
    path = tmp_path / "keys.json"
    keys = store(tmp_path)
    keys.write_key("brave", KEY)
    path.chmod(0o644)
    with pytest.raises(KeysFileError):
        keys.write_key("tavily", "tvly-abc")


def test_mask_replaces_raw_and_url_encoded_keys(tmp_path):
    keys = store(tmp_path, {"BRAVE_API_KEY": KEY, "OTHER_API_KEY": "zzz-other-secret"})
    text = f"GET /search?key={KEY}&k2=BSA-1234567890abcdef%2B%2F%3D&k3=BSA-1234567890abcdef%2B%2F%3D x zzz-other-secret"
    masked = keys.mask(text)
    assert "BSA-" not in masked and "zzz-other-secret" not in masked
    assert masked.count("***") == 4
    assert keys.mask("nothing secret here") == "nothing secret here"
    assert keys.mask_bytes(f"body {KEY} end".encode()) == b"body *** end"


def test_no_key_in_repr_or_str(tmp_path):
    private_file(tmp_path / "keys.json", {"brave": KEY})
    keys = store(tmp_path)
    assert KEY not in repr(keys) and KEY not in str(keys)
    assert "brave" in repr(keys)  # says which engines have one


def test_masking_log_filter(tmp_path, caplog):
    keys = store(tmp_path, {"BRAVE_API_KEY": KEY})
    logger = logging.getLogger("serpfuse.test.masking")
    logger.addFilter(KeyMaskingFilter(keys.mask))
    try:
        with caplog.at_level(logging.INFO, logger="serpfuse.test.masking"):
            logger.info("sent %s to brave", KEY)
    finally:
        logger.filters.clear()
    assert "sent *** to brave" in caplog.text and KEY not in caplog.text
