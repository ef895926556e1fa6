"""Extraction under a budget: time, memory and input size. A page over it is one clear error ("too large or too
slow to read"), its worker is replaced, and the next page reads; a server keeps answering /healthz at once
while a 5 MB table page and a PDF bomb are being read through /v1/read from a loopback page server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import zlib

import pytest

from fakeserver import FakeServer, Reply
from redis_server import start_serpfuse, stop
from serpfuse.reader import workers
from serpfuse.reader.extract import ExtractionError
from serpfuse.reader.fetch import Fetched
from serpfuse.reader.models import JsShell, PageOverBudget, Unsupported
from serpfuse.reader.workers import Budget
from test_reader_fetch import ARTICLE


def table_page(size: int) -> bytes:
    """An HTML page holding one table of ``size`` bytes: cheap to send, costly to extract (a tree of cells)."""
    rows, n, i = [], 0, 0
    while n < size:
        row = "<tr>" + "".join(f"<td>row {i} col {c} value</td>" for c in range(6)) + "</tr>"
        rows.append(row)
        n, i = n + len(row), i + 1
    head = "<html><head><title>Tide table</title></head><body><article><h1>Tide table</h1><table>"
    return (head + "".join(rows) + "</table></article></body></html>").encode()


def pdf_bomb(ops: int, pages: int = 1) -> bytes:
    """A small PDF whose one Flate content stream inflates to ``ops`` text-drawing operators (36 bytes each),
    shown on ``pages`` pages: 2,000,000 ops are 72 MB of operators in about 200 KB of file."""
    stream = zlib.compress(b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n" * ops, 9)
    kids = " ".join(f"{5 + i} 0 R" for i in range(pages)).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ] + [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
        b"/Resources << /Font << /F1 4 0 R >> >> >>"
    ] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def html(body: bytes, url: str = "http://site.test/p") -> Fetched:
    return Fetched(url, 200, "text/html", "utf-8", body)


def pdf(body: bytes) -> Fetched:
    return Fetched("http://site.test/p.pdf", 200, "application/pdf", None, body)


@pytest.fixture
async def one_worker():
    workers.start(1)
    deadline = time.monotonic() + 60
    while not workers.WORKERS.ready:
        assert time.monotonic() < deadline, "no extraction worker started"
        await asyncio.sleep(0.05)
    try:
        yield workers.WORKERS
    finally:
        workers.close()


async def test_an_ordinary_page_and_the_readers_own_errors_come_back_from_the_worker(one_worker):
    page = await workers.extract(html(ARTICLE), "http://site.test/p", Budget(), in_workers=True)
    assert page.title == "Harbour news" and "berths, tides" in page.text and page.url == "http://site.test/p"
    empty = html(b"<html><body></body></html>")
    with pytest.raises(ExtractionError, match="^no readable text in the page$"):
        await workers.extract(empty, "http://site.test/p", Budget(), in_workers=True)
    shell = html(b"<html><body><script>x()</script></body></html>")  # scripts and no text: a shell (blockers)
    with pytest.raises(JsShell, match="^no readable text: the page is an empty JavaScript shell"):
        await workers.extract(shell, "http://site.test/p", Budget(), in_workers=True)
    photo = Fetched("http://site.test/i", 200, "image/png", None, b"\x89PNG")
    with pytest.raises(Unsupported, match="^unsupported content type image/png$"):
        await workers.extract(photo, "http://site.test/i", Budget(), in_workers=True)


async def test_a_page_over_its_time_is_ended_and_its_worker_replaced(one_worker):
    (before,) = one_worker.pids()
    started = time.monotonic()
    with pytest.raises(
        PageOverBudget, match=r"^the page is too large or too slow to read \(extraction took over 1 s\)$"
    ):
        await workers.extract(html(table_page(2_000_000)), "http://site.test/t", Budget(time_s=1.0), in_workers=True)  # fmt: skip
    assert time.monotonic() - started < 6
    page = await workers.extract(html(ARTICLE), "http://site.test/p", Budget(), in_workers=True)
    assert page.title == "Harbour news"
    assert one_worker.pids() and before not in one_worker.pids()


async def test_a_pdf_bomb_is_over_budget(one_worker):
    bomb = pdf_bomb(2_000_000)
    assert len(bomb) < 300_000
    started = time.monotonic()
    with pytest.raises(PageOverBudget, match="too large or too slow to read"):
        await workers.extract(pdf(bomb), "http://site.test/p.pdf", Budget(time_s=2.0), in_workers=True)
    assert time.monotonic() - started < 7


async def test_a_worker_that_dies_fails_its_page_alone(one_worker):
    """What the memory cap does to a page that needs more: its worker dies (or its MemoryError comes back)."""
    task = asyncio.create_task(
        workers.extract(
            html(table_page(2_000_000)), "http://site.test/t", Budget(time_s=120), in_workers=True
        )
    )
    await asyncio.sleep(1.0)  # the page is in the worker now
    (pid,) = one_worker.pids()
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(PageOverBudget, match="the extraction worker died"):
        await asyncio.wait_for(task, 30)
    page = await workers.extract(html(ARTICLE), "http://site.test/p", Budget(), in_workers=True)
    assert page.title == "Harbour news"


async def test_input_over_the_size_budget_is_refused_before_any_work():
    budget = Budget(max_markup_bytes=10_000, max_pdf_bytes=500)
    with pytest.raises(
        PageOverBudget, match=r"\(20,\d{3} bytes of markup; the reader extracts at most 10,000\)"
    ):
        await workers.extract(html(table_page(20_000)), "http://site.test/t", budget, in_workers=True)
    with pytest.raises(PageOverBudget, match="bytes of PDF; the reader extracts at most 500"):
        await workers.extract(pdf(pdf_bomb(10)), "http://site.test/p.pdf", budget, in_workers=True)
    assert not workers.WORKERS.started  # refused before a worker was even started


async def test_an_extractors_own_crash_is_a_one_line_error(monkeypatch):
    from serpfuse.reader import extract

    def broken(*args, **kwargs):
        raise KeyError("a library bug")

    monkeypatch.setattr(extract, "extract_html", broken)
    with pytest.raises(ExtractionError, match=r"^the extractor failed on this page \(KeyError\)$"):
        await workers.extract(html(ARTICLE), "http://site.test/p", Budget(), in_workers=False)


async def test_in_a_thread_the_time_budget_holds_too():
    started = time.monotonic()
    with pytest.raises(PageOverBudget, match=r"extraction took over 0.5 s"):
        await workers.extract(html(table_page(2_000_000)), "http://site.test/t", Budget(time_s=0.5), in_workers=False)  # fmt: skip
    assert time.monotonic() - started < 5


def test_an_abandoned_thread_cannot_hold_the_programs_exit(tmp_path):
    """A program that read a page in a thread (no workers) and gave up on it exits at once, not when the
    abandoned extraction ends (a 5 MB table: over a minute)."""
    script = tmp_path / "give_up.py"
    script.write_text(
        "import asyncio, sys\n"
        "from serpfuse.reader import workers\n"
        "from serpfuse.reader.fetch import Fetched\n"
        "from serpfuse.reader.models import PageOverBudget\n"
        "body = open(sys.argv[1], 'rb').read()\n"
        "page = Fetched('http://site.test/t', 200, 'text/html', 'utf-8', body)\n"
        "try:\n"
        "    asyncio.run(workers.extract(page, 'http://site.test/t', workers.Budget(time_s=0.5), in_workers=False))\n"
        "except PageOverBudget as exc:\n"
        "    print(exc)\n"
    )  # fmt: skip
    table = tmp_path / "table.html"
    table.write_bytes(table_page(5_000_000))
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(script), str(table)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "too large or too slow to read" in proc.stdout
    assert time.monotonic() - started < 20


# --- a real server ---------------------------------------------------------------------------------------------


def _healthz_ms(base: str) -> float:
    import urllib.request

    started = time.perf_counter()
    with urllib.request.urlopen(base + "/healthz", timeout=30) as resp:
        resp.read()
    return (time.perf_counter() - started) * 1000


@pytest.mark.slow
def test_the_server_answers_healthz_at_once_while_huge_pages_are_extracted(recording, tmp_path):
    table = table_page(5_000_000)
    with FakeServer(lifetime_s=300) as pages:
        pages.route("/robots.txt", Reply(404, {"Content-Type": "text/plain"}, b""))
        pages.route("/table", Reply(200, {"Content-Type": "text/html; charset=utf-8"}, table))
        pages.route("/bomb.pdf", Reply(200, {"Content-Type": "application/pdf"}, pdf_bomb(2_000_000)))
        pages.route("/story", Reply(200, {"Content-Type": "text/html; charset=utf-8"}, ARTICLE))
        env = {
            "SERPFUSE_RATE_LIMIT_BURST": "10000",
            "SERPFUSE_READ_ALLOW_LOOPBACK": "1",
            "SERPFUSE_READ_PORTS": str(pages.port),
        }
        server = start_serpfuse(tmp_path, ["--replay", str(recording)], env=env)
        try:
            # the extraction workers start on the first page: read one, so the measurement is of extraction
            status, _, body = server.json("POST", "/v1/read", {"url": f"{pages.url}/story", "cache": False})
            assert status == 200 and body["title"] == "Harbour news", body
            idle = [_healthz_ms(server.base) for _ in range(20)]
            answers: dict[str, tuple[int, dict]] = {}

            def read(path: str) -> None:
                got, _, reply = server.json("POST", "/v1/read", {"url": f"{pages.url}{path}", "cache": False})
                answers[path] = (got, reply)

            readers = [threading.Thread(target=read, args=(p,)) for p in ("/table", "/bomb.pdf")]
            for t in readers:
                t.start()
            deadline = time.monotonic() + 60
            while not (pages.seen("/table") and pages.seen("/bomb.pdf")):
                assert time.monotonic() < deadline, "the server never fetched the pages"
                time.sleep(0.01)
            busy = []
            while any(t.is_alive() for t in readers) and len(busy) < 2000:
                busy.append(_healthz_ms(server.base))
                time.sleep(0.02)
            for t in readers:
                t.join(60)
            got, reply = answers["/bomb.pdf"]
            assert got == 502 and "too large or too slow to read" in reply["error"]["message"], reply
            # The table page costs seconds of extraction: a quiet machine reads it within the 10 s budget, a
            # loaded one does not. Either answer is right; what this test holds is /healthz meanwhile.
            got, reply = answers["/table"]
            assert (got, reply.get("title")) == (200, "Tide table") or (
                got == 502 and "too large or too slow to read" in reply["error"]["message"]
            ), reply
            status, _, body = server.json("POST", "/v1/read", {"url": f"{pages.url}/story", "cache": False})
            assert status == 200 and body["title"] == "Harbour news"  # the server is whole, its workers back
        finally:
            stop(server.proc)

    def p95(values: list[float]) -> float:
        return sorted(values)[int(0.95 * (len(values) - 1))]

    report = {
        "idle_median_ms": round(statistics.median(idle), 2),
        "idle_p95_ms": round(p95(idle), 2),
        "busy_samples": len(busy),
        "busy_median_ms": round(statistics.median(busy), 2),
        "busy_p95_ms": round(p95(busy), 2),
        "busy_max_ms": round(max(busy), 2),
    }
    print("healthz while extracting:", json.dumps(report))
    assert len(busy) >= 50  # the pages took seconds: /healthz was asked all along
    # Against the idle /healthz of the same run, so a machine busy with other work does not fail it; extraction
    # in the server's own process (a thread) measured median 16.6 ms, p95 108 ms, max 2976 ms against an idle
    # median of 3.9 ms.
    assert report["busy_median_ms"] < 3 * report["idle_median_ms"] + 5
    assert report["busy_p95_ms"] < 50 + 3 * report["idle_p95_ms"]
    assert report["busy_max_ms"] < 1000


def test_pypdfs_own_limits_say_so_in_one_line(monkeypatch):
    """pypdf stops a stream at its own limits (a bomb of 1,200,000 operators reaches its token limit after
    about 15 s): the reader says the page is too large to read, in one line, as when its own budget stops the
    bomb first (which of the two comes first depends on the machine's speed)."""
    import pypdf
    from pypdf.errors import LimitReachedError

    from serpfuse.reader.extract import extract_pdf

    def limited(*args, **kwargs):
        raise LimitReachedError("Reached maximum number of tokens per stream.")

    monkeypatch.setattr(pypdf, "PdfReader", limited)
    with pytest.raises(
        PageOverBudget,
        match=r"^the page is too large or too slow to read \(pypdf: Reached maximum number of tokens per stream\.\)$",
    ):
        extract_pdf(pdf_bomb(10))
