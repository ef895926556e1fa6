"""The "real output" blocks of README.md and the docs site's pages (docs/*.md), made by running the command each
block names on the replay recording.

A block is marked in a page by two HTML comments (invisible on the rendered page) around a fenced block:

    <!-- output columns=100 $ serpfuse search "top restaurants in belgrad" --replay "$DATA/.../x.json" -->
    ```
    ...what the command printed...
    ```
    <!-- /output -->

The command after ``$`` is run as written by bash (so ``${SERPFUSE_DATA:-../shared/data}`` means what it means to
a reader), with this interpreter's ``serpfuse`` first on the PATH, an empty settings and cache environment, the
result cache off, and a terminal of ``columns``. Options before ``$``: ``columns=N``; ``rows=PREFIX,...`` keeps
the header and the whole rows of a table whose first URL line starts with a prefix (an excerpt); ``json=first``
keeps the first result and shortens it where the block says ``…``.

``python tests/readme_output.py --write`` (``make readme-output``) rewrites every block; ``tests/test_readme.py``
checks that each block is what its command prints now, timings aside.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from redis_server import isolated_env  # noqa: E402

README = HERE.parent / "README.md"
PAGES = [README, *sorted((HERE.parent / "docs").glob("*.md"))]  # every page that may hold a block
DEFAULT_DATA = HERE.parent.parent / "shared" / "data"
BLOCK = re.compile(
    r"(?P<open><!-- output (?P<options>[^$]*?)\s*\$ (?P<command>.+?) -->\n)(?P<body>.*?)(?P<close><!-- /output -->)",
    re.S,
)
TIMINGS = re.compile(r"\b\d+(?:\.\d+)? ms\b|(\"tookMs\": )[\d.]+")
ELLIPSIS = "…"


@dataclass
class Block:
    options: dict[str, str]
    command: str
    body: str  # as the README has it, fences included
    span: tuple[int, int]  # of the body in the README text


def blocks(text: str) -> list[Block]:
    found = []
    for m in BLOCK.finditer(text):
        options = dict(part.split("=", 1) for part in m["options"].split())
        found.append(Block(options, m["command"], m["body"], m.span("body")))
    return found


def run(command: str, columns: int, data: Path) -> str:
    with tempfile.TemporaryDirectory() as home:
        env = isolated_env(Path(home), {"COLUMNS": str(columns), "SERPFUSE_CACHE": "off"})
        env["SERPFUSE_DATA"] = str(data)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        # From the repository: the commands' relative paths (../shared/data) are written from there.
        done = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, timeout=300, env=env, cwd=README.parent
        )
    if done.returncode != 0:
        raise RuntimeError(f"{command!r} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def table_rows(output: str, prefixes: list[str]) -> str:
    """The table's header line and each whole row whose URL cell starts with one of ``prefixes``."""
    header, rows = "", []  # each row: the header of its table, then its lines
    for line in output.splitlines():
        cells = line.split("│")
        if line.startswith("┃"):
            header = line
        elif len(cells) < 3:
            continue
        elif cells[1].strip():  # a row's first line: its position cell is filled
            rows.append([header, line])
        elif rows:
            rows[-1].append(line)

    def url(row: list[str]) -> str:
        return row[1].split("│")[2].strip()

    kept = [next((r for r in rows if url(r).startswith(p)), None) for p in prefixes]
    if None in kept:
        raise RuntimeError(f"no table row starts with {prefixes[kept.index(None)]!r}")
    return "\n".join([kept[0][0], *(line for row in kept for line in row[1:])])  # type: ignore[index]


def _inline(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _first_sentence(text: str) -> str:
    end = text.find(". ")
    return text if end < 0 else f"{text[: end + 1]} {ELLIPSIS}"


def first_result(output: str) -> str:
    """The --json response with its first result only, each provenance and engine entry on one line, and the
    parts a reader does not need shortened to ``…``: snippets after their first sentence, each sighting's
    title and snippet, every sighting's URL after the first, and every engine after the first two."""
    data = json.loads(output)
    first = dict(data["results"][0])
    first["snippet"] = _first_sentence(first["snippet"])
    sightings = []
    for i, seen in enumerate(first["provenance"]):
        seen = {**seen, "title": ELLIPSIS, "snippet": ELLIPSIS}
        if i:
            seen["url"] = ELLIPSIS
        sightings.append(seen)
    out = ["{"]
    for key, value in data.items():
        if key == "results":
            out.append('  "results": [')
            out.append("    {")
            for k, v in first.items():
                if k == "provenance":
                    items = ",\n".join(f"        {_inline(s)}" for s in sightings)
                    out.append(f'      "provenance": [\n{items}\n      ],')
                else:
                    out.append(f"      {_inline(k)}: {_inline(v)},")
            out[-1] = out[-1].rstrip(",")
            out.append("    }")
            out.append("  ],")
        elif key == "engines" and len(value) > 2:
            items = ",\n".join(f"    {_inline(e)}" for e in value[:2])
            out.append(f'  "engines": [\n{items},\n    {ELLIPSIS}\n  ],')
        else:
            out.append(f"  {_inline(key)}: {_inline(value)},")
    out[-1] = out[-1].rstrip(",")
    out.append("}")
    return "\n".join(out)


def render(block: Block, data: Path) -> str:
    """The block's body as its command prints it now, fenced."""
    output = run(block.command, int(block.options.get("columns", "100")), data)
    if "rows" in block.options:
        text = table_rows(output, block.options["rows"].split(","))
    elif block.options.get("json") == "first":
        text = first_result(output)
    else:
        text = output.rstrip("\n")
    text = "\n".join(line.rstrip() for line in text.splitlines())  # rich pads lines to the terminal width
    fence = "```json" if block.options.get("json") else "```"
    return f"{fence}\n{text}\n```\n"


def without_timings(text: str) -> str:
    return TIMINGS.sub(lambda m: f"{m[1]}N" if m[1] else "N ms", text)


def stale(pages: list[Path] | None = None, data: Path | None = None) -> list[tuple[Block, str]]:
    """Each block whose body is not what its command prints now (timings aside), with what it prints."""
    data = data or Path(os.environ.get("SERPFUSE_DATA", DEFAULT_DATA))
    out = []
    for page in pages or PAGES:
        for block in blocks(page.read_text()):
            now = render(block, data)
            if without_timings(now) != without_timings(block.body):
                out.append((block, now))
    return out


def write(pages: list[Path] | None = None, data: Path | None = None) -> int:
    data = data or Path(os.environ.get("SERPFUSE_DATA", DEFAULT_DATA))
    written = 0
    for page in pages or PAGES:
        text = page.read_text()
        found = blocks(text)
        for block in reversed(found):  # from the end: earlier spans stay where they are
            start, end = block.span
            text = text[:start] + render(block, data) + text[end:]
        page.write_text(text)
        written += len(found)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the blocks (else: list the stale ones)")
    args = parser.parse_args()
    if args.write:
        print(f"README.md and docs/: {write()} output blocks written")
        return
    old = stale()
    for block, _ in old:
        print(f"stale: {block.command}")
    sys.exit(1 if old else 0)


if __name__ == "__main__":
    main()
