"""A one-shot search starts fast: the word tables and the Public Suffix List come from compact files in the
cache directory (built once, from the libraries, with the same contents), the engine modules are imported only
when asked for, and a recording is read once per process while its file is unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from serpfuse import engines, urls
from serpfuse.ranking import specificity
from serpfuse.ranking.specificity import WordTable
from serpfuse.sources.replay import ReplaySource, recording_at

FREQS = {"the": 0.05, "zürich": 1.2e-6, "東京": 3.4e-7, "a": 0.02, "qq": 1e-9}
LEMMAS = {"mice": "mouse", "Hiking": "hike", "größer": "groß", "went": "go"}


@pytest.mark.parametrize("table", [FREQS, LEMMAS])
def test_a_word_table_written_and_mapped_back_holds_what_it_was_built_from(tmp_path: Path, table) -> None:
    path = tmp_path / "t.bin"
    path.write_bytes(WordTable.of(table).dump())
    loaded = WordTable.load(path)
    assert dict(loaded.items()) == table and len(loaded) == len(table)
    assert loaded.get("absent") is None and "absent" not in loaded
    with pytest.raises(KeyError):
        loaded["Mice"]


def test_a_file_that_is_not_a_word_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.bin"
    path.write_bytes(WordTable.of(FREQS).dump()[:-3])
    with pytest.raises(ValueError):
        WordTable.load(path)


def test_the_table_is_built_once_then_read_from_the_cache_directory(tmp_path: Path, monkeypatch) -> None:
    from serpfuse.data import derived

    monkeypatch.delenv("SERPFUSE_CACHE_DIR")
    monkeypatch.setattr(
        derived, "_cache_dir", None
    )  # an earlier test's load_settings named a cache directory
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    built = []

    def build() -> dict:
        built.append(1)
        return LEMMAS

    first = specificity._compact("lemma", "xx", build)
    second = specificity._compact("lemma", "xx", build)
    assert built == [1] and dict(first.items()) == dict(second.items()) == LEMMAS
    (written,) = (tmp_path / "serpfuse" / "word-tables").iterdir()
    assert written.name.startswith("lemma-xx-simplemma")


def test_the_tables_follow_the_cache_directory_the_settings_name(tmp_path: Path, monkeypatch) -> None:
    from serpfuse.data import derived
    from serpfuse.settings import load_settings

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SERPFUSE_CACHE_DIR", str(tmp_path / "env"))
    monkeypatch.setattr(derived, "_cache_dir", None)
    assert derived.derived_path("t.bin") == tmp_path / "env" / "word-tables" / "t.bin"
    settings_file = tmp_path / "serpfuse.toml"
    settings_file.write_text(f'cache_dir = "{tmp_path / "file"}"\n', encoding="utf-8")
    monkeypatch.delenv("SERPFUSE_CACHE_DIR")
    load_settings(settings_file)
    specificity._compact("lemma", "xx", lambda: LEMMAS)
    (written,) = (tmp_path / "file" / "word-tables").iterdir()
    assert written.stat().st_mode & 0o777 == 0o600  # like every file serpfuse keeps
    assert not (tmp_path / "xdg").exists()


def test_the_cached_english_tables_answer_as_the_libraries_do() -> None:
    import wordfreq
    from simplemma.strategies.dictionaries.dictionary_factory import DefaultDictionaryFactory

    specificity.load_tables("en")
    freqs, lemmas = specificity._FREQUENCIES["en"], specificity._LEMMAS["en"]
    want_f = wordfreq.get_frequency_dict("en", wordlist="best")
    want_l = DefaultDictionaryFactory().get_dictionary("en")
    assert len(freqs) == len(want_f) and len(lemmas) == len(want_l)
    for word in list(want_f)[::97] + ["naïve", "zurich", "qxzvbnk"]:
        assert freqs.get(word) == want_f.get(word), word
    for word in list(want_l)[::53] + ["Mice", "mice", "hikes", "qxzvbnk"]:
        assert lemmas.get(word) == want_l.get(word), word


def test_the_cached_suffix_list_finds_the_domains_the_parsed_one_does() -> None:
    from publicsuffixlist import PublicSuffixList

    urls.suffix_list.cache_clear()
    cached, parsed = urls.suffix_list(), PublicSuffixList()
    urls.suffix_list.cache_clear()
    again = urls.suffix_list()  # read from the file the first call wrote (or found)
    hosts = ["www.bbc.co.uk", "foo.github.io", "a.b.kobe.jp", "city.kobe.jp", "www.食狮.中国"]
    hosts += ["www.xn--85x722f.xn--fiqs8s", "example.com", "x.s3.amazonaws.com", "bar.blogspot.co.uk"]
    for host in hosts:
        assert cached.privatesuffix(host) == parsed.privatesuffix(host) == again.privatesuffix(host), host


def test_the_registry_names_every_engine_by_its_module_and_imports_one_when_asked() -> None:
    assert list(engines.ENGINES) == list(engines.ENGINE_NAMES)
    for name, module in engines.ENGINES.items():
        assert module.INFO.name == name and module.__name__.endswith("." + name.replace("-", "_"))
    assert engines.engine_module("duckduckgo") is None  # a recording's name, not a registered engine
    assert engines.category_of("bing-news") == "news" and engines.category_of("duckduckgo") == "general"


def test_a_recording_is_read_once_while_its_file_is_unchanged(tmp_path: Path, recording: Path) -> None:
    copy = tmp_path / "rec.json"
    entries = json.loads(recording.read_text(encoding="utf-8"))
    copy.write_text(json.dumps(entries[:3]), encoding="utf-8")
    assert ReplaySource(copy).recording is recording_at(copy)
    copy.write_text(json.dumps(entries[:2]), encoding="utf-8")  # another size: read again
    os.utime(copy, ns=(1, 1))
    assert len(ReplaySource(copy).recording) == 2


ONE_SHOT = """
import json
import sys
from serpfuse.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = ("wordfreq", "simplemma", "httpx2", "curl_cffi", "dateparser", "trafilatura", "serpfuse.sources.live")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy or m.startswith(heavy))
engines = sorted(m for m in sys.modules if m.startswith("serpfuse.engines.") and m.count(".") == 2)
print(json.dumps({"code": code, "loaded": loaded, "engines": engines}), file=sys.stderr)
"""


def test_a_one_shot_search_of_a_recording_imports_no_client_and_no_table_library(
    tmp_path: Path, recording: Path
) -> None:
    env = {**os.environ, "SERPFUSE_CACHE_DIR": str(tmp_path), "COLUMNS": "100"}
    args = ["search", "--replay", str(recording), "top restaurants in belgrad", "--limit", "3"]
    for _ in range(2):  # the first run may build the tables' files; the second reads them
        proc = subprocess.run(
            [sys.executable, "-c", ONE_SHOT, *args], env=env, capture_output=True, text=True, timeout=120
        )
    seen = json.loads(proc.stderr.strip().splitlines()[-1])
    assert seen["code"] in (0, None), proc.stderr[-800:]
    assert "belgrade" in proc.stdout.lower()
    assert seen["loaded"] == []
    # Only the recording's engines that serpfuse also has (asked for their category) and the SearXNG parser the
    # replay reads with; never the registry's other engines.
    assert "serpfuse.engines.ddg" not in seen["engines"] and "serpfuse.engines.tavily" not in seen["engines"]


def test_every_older_base_url_variable_ends_in_url() -> None:
    """Settings look for them only when some variable ending in _URL is set (so that a search imports no
    engine module it does not ask): a variable named otherwise would go unread."""
    assert all(v.upper().endswith("_URL") for m in engines.ENGINES.values() for v in m.INFO.base_url_envs)
