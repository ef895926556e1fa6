"""A serpfuse recording directory is read back through today's parsers (raw bodies re-parsed)."""

from __future__ import annotations

import json
import shutil

from conftest import need
from serpfuse.sources.replay import load_recording


def _recording(tmp_path, raw_src, status: int, stored_rows: list) -> None:
    (tmp_path / "raw").mkdir()
    shutil.copy(raw_src, tmp_path / "raw" / "brave.json")
    entry = {
        "query": "python",
        "engines": {
            "brave": {
                "status": "ok" if stored_rows else "empty",
                "rows": stored_rows,
                "raw_file": "raw/brave.json",
                "http_status": status,
                "content_type": "application/json",
                "latency_ms": 321.0,
            }
        },
    }
    (tmp_path / "q1.json").write_text(json.dumps(entry))
    (tmp_path / "index.json").write_text(
        json.dumps({"format": "serpfuse-replay/1", "queries": [{"query": "python", "file": "q1.json"}]})
    )


def test_raw_body_is_parsed_again(tmp_path, data_dir):
    # The stored rows are stale (empty); the raw capture holds Brave's real 20 web results.
    _recording(tmp_path, need(data_dir / "api-json" / "brave.json"), 200, [])
    answer = load_recording(tmp_path)["python"].variants[""]["brave"]
    assert answer.status == "ok" and len(answer.rows) == 20
    assert [r.rank for r in answer.rows] == list(range(1, 21))
    assert answer.rows[0].url.startswith("https://www.python.org")
    assert answer.latency_ms == 321.0


def test_a_page_todays_parser_rejects_becomes_an_error_answer(tmp_path, data_dir):
    _recording(tmp_path, need(data_dir / "api-json" / "brave.json"), 429, [])
    answer = load_recording(tmp_path)["python"].variants[""]["brave"]
    assert answer.status == "rate-limited" and not answer.rows


def test_raw_file_outside_the_recording_is_ignored(tmp_path, data_dir):
    _recording(tmp_path, need(data_dir / "api-json" / "brave.json"), 200, [])
    entry = json.loads((tmp_path / "q1.json").read_text())
    entry["engines"]["brave"]["raw_file"] = "../../etc/passwd"
    (tmp_path / "q1.json").write_text(json.dumps(entry))
    answer = load_recording(tmp_path)["python"].variants[""]["brave"]
    assert answer.status == "empty" and not answer.rows
