"""README.md and the docs site say what the code does now: their "real output" blocks are what their commands
print (timings aside; ``make readme-output`` rewrites them), their replay examples run from a fresh clone as
written, the HTTP API page's endpoint table lists every route and the MCP page counts the server's own tools."""

from __future__ import annotations

import re
import shutil

import pytest
from mcp import Client

from readme_output import PAGES, README, blocks, stale, without_timings
from serpfuse.serve.http_api import ROUTES
from serpfuse.serve.mcp_server import build_server
from serpfuse.service import SearchService
from serpfuse.settings import Settings

TEXT = README.read_text()
DOCS = README.parent / "docs"
EVERY_PAGE = "\n".join(page.read_text() for page in PAGES)
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def test_every_real_output_block_is_what_its_command_prints_now(data_dir):
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    assert blocks(TEXT), "the README's real output is gone"
    found = blocks(EVERY_PAGE)
    assert len(found) >= 4, "the output markers are gone from README.md and docs/"
    old = stale(data=data_dir)
    assert not old, "\n\n".join(
        f"README block for {b.command!r} is stale (make readme-output):\n{without_timings(now)}"
        for b, now in old
    )


def test_timings_are_all_that_is_ignored():
    assert without_timings("took 51 ms · config f2f4") == without_timings("took 823 ms · config f2f4")
    assert without_timings('"tookMs": 61.0,') == without_timings('"tookMs": 839.2,')
    assert without_timings("config f2f4") != without_timings("config ed18")


def test_replay_examples_name_the_data_directory_by_its_variable():
    # ../shared/data only as the default of $SERPFUSE_DATA: a fresh clone elsewhere sets the variable.
    allowed = (
        r"\$\{SERPFUSE_DATA:-\.\./shared/data\}",
        r'"SERPFUSE_DATA", "\.\./shared/data"',
        r"default `\.\./shared/data`",
    )
    rest = EVERY_PAGE
    for form in allowed:
        rest = re.sub(form, "", rest)
    assert "../shared/data" not in rest, [ln for ln in rest.splitlines() if "../shared/data" in ln]


def test_the_endpoint_table_lists_every_route():
    page = (DOCS / "http-api.md").read_text()
    table = page[page.index("| endpoint | what |") :].split("\n\n", 1)[0]
    listed = set(re.findall(r"`(?:GET|POST) (/[\w/.]*)", table))
    missing = [path for path in ROUTES if path not in listed]
    assert not missing, missing


async def test_the_mcp_section_counts_the_servers_own_tools(recording):
    service = SearchService.from_settings(Settings(replay=recording, cache="off"))
    try:
        async with Client(build_server(service)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    finally:
        await service.aclose()
    page = (DOCS / "mcp.md").read_text()
    said = re.search(
        r"`serpfuse mcp` is an MCP server over stdio \(official SDK 2\.x\) with (\w+) tools", page
    )
    assert said and said[1] == NUMBERS[len(names)], said
    section = page[said.end() : page.index("**Claude Desktop**")]
    assert set(re.findall(r"^\| `(\w+)` \|", section, re.M)) == names
