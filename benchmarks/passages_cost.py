"""What passages cost a search: 8 loopback pages of 200-800 KB, each answering after 100-300 ms.

``python -m benchmarks.passages_cost [--rounds N]``. A page server in its own process serves 8 HTML pages built
from the 8 Natural Questions articles in ``$SERPFUSE_DATA/passages/`` nearest the median length (each article's
text in paragraphs, inside
the markup a real page carries around it: navigation, inline scripts and styles, a footer of links), padded to
200, 285, 370, 455, 545, 630, 715 and 800 KB, answering after 100, 130, ..., 300 ms. A recording holds one search
whose 8 rows are those pages. Each round runs, each in a fresh process (``serpfuse.asearch`` on the recording, no
result or page cache, after one warm-up search that loads what a running server has loaded):

- the search without passages, then
- the same search with ``passages=True``.

Reported per mode, as medians over the rounds: wall time of the search; for the search with passages, the time
from the slowest page's last byte leaving the page server to the answer (``after slowest``: the passages target
is at most 0.5 s); the process's CPU for the search and, for passages, the CPU added per page (the target is
under 60 ms), of which selection (``serpfuse.passages``, timed alone on the same pages); and the process's peak
RSS. Extraction runs in the reader's daemon thread (a library call), so its CPU is this process's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES_KB = [200, 285, 370, 455, 545, 630, 715, 800]
DELAYS_MS = [100, 130, 160, 190, 220, 250, 280, 300]


def load_articles(data: Path) -> list[dict]:
    """The 8 distinct articles nearest the median length (about 25k characters), shortest first."""
    with (data / "passages" / "nq-dev-subset.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    distinct = {r["pages"][0]["title"]: r for r in rows}.values()
    ordered = sorted(distinct, key=lambda r: len(r["pages"][0]["html_or_text"]))
    middle = len(ordered) // 2
    start = max(0, min(middle - len(SIZES_KB) // 2, len(ordered) - len(SIZES_KB)))
    return ordered[start : start + len(SIZES_KB)]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def page_html(row: dict, size_kb: int) -> bytes:
    """An article page: the text in paragraphs of a few sentences, wrapped in a page's usual markup up to
    ``size_kb``."""
    page = row["pages"][0]
    sentences = page["html_or_text"].split(". ")
    paragraphs = [". ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
    body = "".join(f"<p>{_escape(p)}.</p>\n" for p in paragraphs)
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(120))
    head = (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_escape(page['title'])}</title>"
        "<meta name='date' content='2025-06-01'>"
        "<style>" + ".c{margin:0;padding:0;color:#333}" * 400 + "</style></head><body>"
        f"<header><nav><ul>{nav}</ul></nav></header><main><article><h1>{_escape(page['title'])}</h1>{body}"
        "</article></main>"
    )
    tail = (
        "<footer>"
        + "".join(f"<a href='/l/{i}'>link {i}</a> " for i in range(200))
        + "</footer></body></html>"
    )
    filler_len = max(0, size_kb * 1024 - len(head.encode()) - len(tail.encode()))
    script = "<script>var d=" + json.dumps("x" * max(0, filler_len - 40)) + ";</script>"
    return (head + script + tail).encode("utf-8")


# --- the page server (its own process) -------------------------------------------------------------------------


def serve_pages(pages: dict[str, tuple[bytes, float]], ready, sent) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                if path == "/sent":  # when each page's last byte was written, since the last ask
                    body = json.dumps(dict(sent)).encode()
                    sent.clear()
                    kind = "application/json"
                elif path in pages:
                    body, delay = pages[path]
                    await asyncio.sleep(delay)
                    kind = "text/html; charset=utf-8"
                else:
                    body, kind = b"", "text/plain"
                status = "200 OK" if body or path == "/sent" else "404 Not Found"
                writer.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
                if path in pages:
                    sent[path] = time.monotonic()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        ready.put(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    asyncio.run(main())


# --- one measured search (a fresh process) ---------------------------------------------------------------------


def child(mode: str, port: int, recording: Path, query: str) -> dict:
    import urllib.request

    from serpfuse.api import asearch
    from serpfuse.passages import markdown_headings, passages
    from serpfuse.reader.guard import Policy
    from serpfuse.reader.service import Reader

    def make_reader() -> Reader:
        return Reader(policy=Policy(allow_loopback=True, ports=frozenset({port})), robots=False)

    async def run(passages_on: bool, warm: bool = False) -> tuple[object, float, float]:
        started, cpu = time.monotonic(), time.process_time()
        resp = await asearch(
            query if not warm else query,
            replay=recording,
            use_cache=False,
            passages=passages_on or None,
            reader=make_reader(),
            limit=8,
        )
        return resp, time.monotonic() - started, time.process_time() - cpu

    # warm-up: what a running server has already loaded (the extractors, the word tables)
    asyncio.run(run(True, warm=True))
    urllib.request.urlopen(f"http://127.0.0.1:{port}/sent").read()
    resp, wall, cpu = asyncio.run(run(mode == "with"))
    answered = time.monotonic()
    sent = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/sent").read())
    out = {"mode": mode, "wall_s": wall, "cpu_s": cpu, "rows": len(resp.results)}  # type: ignore[attr-defined]
    if mode == "with":
        out["after_slowest_s"] = answered - max(sent.values())
        out["with_passages"] = sum(1 for r in resp.results if r.passages)  # type: ignore[attr-defined]
        # selection alone, on the same pages' text
        reader = make_reader()

        async def texts():
            return [await reader.read(r.url, use_cache=False) for r in resp.results]  # type: ignore[attr-defined]

        pages = asyncio.run(texts())
        cpu0 = time.process_time()
        for page in pages:
            passages(page.text, query, 1500, headings=markdown_headings(page.markdown))
        out["select_cpu_s"] = time.process_time() - cpu0
        out["text_chars"] = [len(p.text) for p in pages]
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.passages_cost", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SERPFUSE_DATA", "../shared/data")))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--child", nargs=4, metavar=("MODE", "PORT", "RECORDING", "QUERY"), help=argparse.SUPPRESS
    )
    args = ap.parse_args(argv)
    if args.child:
        mode, port, recording, query = args.child
        print(json.dumps(child(mode, int(port), Path(recording), query)))
        return 0
    if not (args.data / "passages" / "nq-dev-subset.jsonl").is_file():
        print(
            f"serpfuse: error: no passages data in {args.data / 'passages'} (set SERPFUSE_DATA)",
            file=sys.stderr,
        )
        return 2
    articles = load_articles(args.data)
    pages = {
        f"/page{i}": (page_html(row, kb), ms / 1000)
        for i, (row, kb, ms) in enumerate(zip(articles, SIZES_KB, DELAYS_MS, strict=True))
    }
    query = articles[0]["query"]
    manager = multiprocessing.Manager()
    sent, ready = manager.dict(), manager.Queue()
    server = multiprocessing.Process(target=serve_pages, args=(pages, ready, sent), daemon=True)
    server.start()
    port = ready.get(timeout=30)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            {"url": f"http://127.0.0.1:{port}{path}", "title": f"{query} ({articles[i]['pages'][0]['title']})",
             "content": f"{query}: page {i}", "engines": ["bing", "brave"], "positions": [i + 1, i + 1]}
            for i, path in enumerate(pages)
        ]  # fmt: skip
        recording = Path(tmp) / "cost.json"
        recording.write_text(json.dumps([{"query": query, "results": rows, "unresponsive": []}]))
        runs: dict[str, list[dict]] = {"without": [], "with": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("SERPFUSE_")}
        env.update(SERPFUSE_CACHE="off", XDG_CACHE_HOME=tmp, XDG_CONFIG_HOME=tmp)
        for _ in range(args.rounds):
            for mode in ("without", "with"):
                proc = subprocess.run(
                    [sys.executable, "-m", "benchmarks.passages_cost", "--child", mode, str(port), str(recording), query],
                    capture_output=True, text=True, env=env, timeout=300, cwd=Path(__file__).resolve().parent.parent,
                )  # fmt: skip
                if proc.returncode != 0:
                    print(proc.stderr[-2000:], file=sys.stderr)
                    return 1
                runs[mode].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    server.terminate()
    report = summarise(runs, pages)
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


def summarise(runs: dict[str, list[dict]], pages: dict[str, tuple[bytes, float]]) -> dict:
    def med(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[mode])

    n = len(pages)
    return {
        "rounds": len(runs["with"]),
        "pages": n,
        "page_kb": [round(len(b) / 1024) for b, _ in pages.values()],
        "page_delay_ms": [round(d * 1000) for _, d in pages.values()],
        "text_chars": runs["with"][0]["text_chars"],
        "without": {k: med("without", k) for k in ("wall_s", "cpu_s", "peak_rss_mb")},
        "with": {
            k: med("with", k) for k in ("wall_s", "cpu_s", "peak_rss_mb", "after_slowest_s", "select_cpu_s")
        },
        "with_passages_rows": min(r["with_passages"] for r in runs["with"]),
        "added_cpu_per_page_ms": 1000 * (med("with", "cpu_s") - med("without", "cpu_s")) / n,
        "select_cpu_per_page_ms": 1000 * med("with", "select_cpu_s") / n,
    }


def table(r: dict) -> str:
    w, o = r["with"], r["without"]
    return "\n".join(
        [
            f"{r['pages']} loopback pages of {min(r['page_kb'])}-{max(r['page_kb'])} KB answering after "
            f"{min(r['page_delay_ms'])}-{max(r['page_delay_ms'])} ms; medians of {r['rounds']} rounds, each mode "
            "in a fresh process",
            f"{'':22} {'without':>10} {'with passages':>14}",
            f"{'wall time (s)':22} {o['wall_s']:10.3f} {w['wall_s']:14.3f}",
            f"{'after slowest page (s)':22} {'':>10} {w['after_slowest_s']:14.3f}",
            f"{'CPU (ms)':22} {1000 * o['cpu_s']:10.0f} {1000 * w['cpu_s']:14.0f}",
            f"{'CPU added a page (ms)':22} {'':>10} {r['added_cpu_per_page_ms']:14.1f}",
            f"{'  of which selection':22} {'':>10} {r['select_cpu_per_page_ms']:14.1f}",
            f"{'peak RSS (MB)':22} {o['peak_rss_mb']:10.0f} {w['peak_rss_mb']:14.0f}",
            f"rows with passages: {r['with_passages_rows']} of {r['pages']} (page text {min(r['text_chars'])}-"
            f"{max(r['text_chars'])} characters)",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
