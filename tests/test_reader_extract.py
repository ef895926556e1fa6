"""The reader's extraction: markdown structure, metadata, the short-article rule, PDF and plain text, and the
article-extraction benchmark command scored by the benchmark's own evaluate.py."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from serpfuse.reader.extract import (
    SHORT_ARTICLE,
    ExtractionError,
    extract_html,
    extract_pdf,
    extract_text,
    links_as_references,
    longer,
    page_metadata,
)

FIXTURES = Path(__file__).parent / "fixtures" / "reader"


def test_markdown_keeps_headings_lists_tables_code_and_metadata():
    page = extract_html((FIXTURES / "article_handmade.html").read_text(), "https://coastal.example.org/x")
    md = page.markdown
    assert "## Reading a table" in md
    assert "- High water is the top of the tide" in md
    assert "| Time | Height (m) |" in md
    assert "```\ntwelfths = [1, 2, 3, 3, 2, 1]\nheight = low + range * sum(twelfths[:hour]) / 12\n```" in md
    # links as references: the prose carries [text][n], the URL sits once at the end
    assert "[guide to chart datum][1]" in md
    assert md.rstrip().endswith("[1]: https://coastal.example.org/datum")
    assert "https://coastal.example.org/datum)" not in md
    # navigation, the promo and the footer are not the article
    for furniture in ("Sign up for our newsletter", "All rights reserved", "Privacy"):
        assert furniture not in md and furniture not in page.text
    assert "[1]" not in page.text and "datum](" not in page.text
    assert page.title == "Tide tables explained"
    assert page.author == "Ada Marsh"
    assert page.date == "2024-05-02"
    assert page.language == "en-GB"
    assert page.canonical_url == "https://coastal.example.org/articles/tide-tables"
    assert "<article>" in page.html and "<h2>" in page.html and "<table>" in page.html


def test_links_as_references_numbers_each_url_once():
    md = "See [a](https://a.example/1) and [b](https://b.example/) and [a again](https://a.example/1)."
    assert links_as_references(md) == (
        "See [a][1] and [b][2] and [a again][1].\n\n[1]: https://a.example/1\n[2]: https://b.example/\n"
    )
    assert (
        links_as_references("no links ![img](https://x.example/i.png)")
        == "no links ![img](https://x.example/i.png)"
    )


ARTICLE = [
    "Tide tables give the predicted times and heights of high and low water at a port.",
    "They are computed from harmonic constants describing how the moon and sun pull on the sea.",
    "Each row is one day, with the times of high and low water and their heights above datum.",
    "Chart datum is the lowest level the tide is expected to reach under average weather.",
    "Between high and low water the height does not change evenly through the hours.",
    "Sailors use the rule of twelfths to estimate the height at any hour of the tide.",
    "Strong onshore wind or low air pressure raises the sea above the predicted height.",
    "A careful skipper therefore keeps a margin whenever the depth under the keel is tight.",
]


def test_only_a_short_article_is_replaced_and_only_by_a_longer_text():
    article, teaser = " ".join(ARTICLE), "Tide tables explained: read the full story"
    assert len(article.split()) >= SHORT_ARTICLE > len(teaser.split())
    assert longer(teaser, article)  # readability settled on a teaser: the second reading wins
    assert not longer(article, article + " " + article)  # an article stands, however long the other text
    assert not longer(teaser, "a shorter one")
    assert longer("", "anything at all")
    assert not longer(teaser, article, short=0)  # 0: never a second reading


def _page(body: str) -> str:
    return f"<html><head><title>Tides</title></head><body>{body}</body></html>"


def test_a_page_readability_reads_is_not_read_twice(monkeypatch):
    import serpfuse.reader.extract as extract

    def never(*args, **kwargs):
        raise AssertionError("trafilatura ran on a page whose article readability found")

    monkeypatch.setattr(extract, "trafilatura_reading", never)
    page = extract_html(_page("<article>" + "".join(f"<p>{p}</p>" for p in ARTICLE) + "</article>"))
    assert page.extractor == "readability" and ARTICLE[-1] in page.text


def test_a_short_article_falls_back_to_trafilatura_when_it_reads_more(monkeypatch):
    import serpfuse.reader.extract as extract

    monkeypatch.setattr(extract, "readability_article", lambda html: "<div><p>Read the full story</p></div>")
    page = extract_html(_page("<article>" + "".join(f"<p>{p}</p>" for p in ARTICLE) + "</article>"))
    assert page.extractor == "trafilatura" and ARTICLE[0] in page.text and ARTICLE[-1] in page.text
    monkeypatch.setattr(extract, "readability_article", lambda html: "")
    assert extract_html(_page("<p>" + ARTICLE[0] + "</p>")).text == ARTICLE[0]


def test_empty_and_unreadable_documents_are_errors():
    with pytest.raises(ExtractionError):
        extract_html("<html><body><script>var x = 1;</script></body></html>")
    with pytest.raises(ExtractionError):
        extract_text("  \n ")
    with pytest.raises(ExtractionError, match="PDF"):
        extract_pdf(b"%PDF-1.4 this is not really a pdf")


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF whose content stream draws ``text`` (byte offsets computed, so the xref is valid)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
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


def test_pdf_and_plain_text_are_read():
    page = extract_pdf(minimal_pdf("Tide tables give predicted times of high water"))
    assert "Tide tables give predicted times of high water" in page.text and page.kind == "pdf"
    page = extract_text("line one\r\nline two\n")
    assert page.text == "line one\nline two" and page.kind == "text"


def test_every_benchmark_page_extracts_without_a_crash(data_dir):
    folder = data_dir / "article-extraction" / "html"
    if not folder.is_dir():
        pytest.skip("article-extraction corpus not found")
    pages = sorted(folder.glob("*.html.gz"))
    assert len(pages) == 91
    for path in pages:
        page = extract_html(gzip.decompress(path.read_bytes()))
        assert page.text.strip(), path.name


def test_the_metadata_is_what_trafilaturas_extract_metadata_finds_on_every_benchmark_page(data_dir):
    """page_metadata skips the fields a reading does not return; title, author, date and URL must not move."""
    from trafilatura.metadata import extract_metadata
    from trafilatura.utils import load_html

    base = data_dir / "article-extraction"
    if not (base / "ground-truth-dev.json").is_file():
        pytest.skip("article-extraction corpus not found")
    truth = json.loads((base / "ground-truth-dev.json").read_text(encoding="utf-8"))
    dated = 0
    for page_id, row in sorted(truth.items()):
        tree = load_html(
            gzip.decompress((base / "html" / f"{page_id}.html.gz").read_bytes()).decode("utf-8", "replace")
        )
        theirs = extract_metadata(tree, default_url=row.get("url"), extensive=False)
        ours = page_metadata(tree, row.get("url"))
        want = tuple(v or None for v in (theirs.title, theirs.author, theirs.date, theirs.url))
        assert tuple(v or None for v in (ours.title, ours.author, ours.date, ours.url)) == want, page_id
        dated += bool(ours.date)
    assert dated > 45  # the comparison covers dates, not only missing ones


# --- python -m benchmarks --corpus article-extraction -------------------------------------------------------------


@pytest.fixture
def small_corpus(data_dir, tmp_path) -> Path:
    """Three of the benchmark's pages with their ground truth and the benchmark's evaluate.py beside them."""
    source = data_dir / "article-extraction"
    if not source.is_dir():
        pytest.skip("article-extraction corpus not found")
    truth = json.loads((source / "ground-truth-dev.json").read_text())
    ids = sorted(truth)[:3]
    target = tmp_path / "article-extraction"
    (target / "html").mkdir(parents=True)
    for page_id in ids:
        shutil.copy(source / "html" / f"{page_id}.html.gz", target / "html")
    (target / "ground-truth-dev.json").write_text(json.dumps({k: truth[k] for k in ids}))
    shutil.copy(source / "evaluate.py", target / "evaluate.py")
    return tmp_path


def test_bench_scores_each_extractor_with_the_benchmarks_own_scorer(small_corpus):
    from benchmarks.extraction import CANDIDATES, load_corpus
    from test_bench_crw56 import _json, bench_runner

    cli = bench_runner()
    out = _json(
        cli(
            "--corpus",
            "article-extraction",
            "--data",
            str(small_corpus),
            "--extractors",
            "serpfuse,trafilatura-fast",
            "--json",
        )
    )
    assert out["baseline"] == "trafilatura" and out["pages"] == 3
    names = [c["name"] for c in out["candidates"]]
    assert names == ["trafilatura", "serpfuse", "trafilatura-fast"]
    # the numbers are evaluate.py's own: recompute one candidate's F1 with the scorer directly
    corpus = load_corpus(small_corpus)
    ev = corpus.scorer
    preds = {p.id: {"articleBody": CANDIDATES["trafilatura-fast"][0](p.html, p.url)} for p in corpus.pages}
    truth = {p.id: {"articleBody": p.truth} for p in corpus.pages}
    expected = ev.evaluate(truth, preds, n_bootstrap=2)["f1"]
    fast = next(c for c in out["candidates"] if c["name"] == "trafilatura-fast")
    assert fast["f1"] == pytest.approx(expected)
    assert set(out["compare"]) == {"serpfuse", "trafilatura-fast"}
    assert out["compare"]["serpfuse"]["n"] == 3
    assert all(c["pagesPerSecond"] > 0 for c in out["candidates"])


def test_bench_refuses_an_unknown_extractor_and_missing_data(small_corpus, tmp_path):
    from test_bench_crw56 import bench_runner

    cli = bench_runner()
    result = cli("--corpus", "article-extraction", "--data", str(small_corpus), "--extractors", "nope")
    assert result.exit_code == 2 and "unknown extractor 'nope'" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("--corpus", "article-extraction", "--data", str(empty))
    assert result.exit_code == 2 and "article-extraction corpus incomplete" in result.stderr


def test_a_whole_document_back_from_readability_is_read_from_its_body(monkeypatch):
    import serpfuse.reader.extract as extract

    whole = (
        "<html><head><title>t</title></head><body>"
        + "".join(f"<p>{p}</p>" for p in ARTICLE)
        + "</body></html>"
    )
    monkeypatch.setattr(extract, "readability_article", lambda html: whole)
    page = extract_html(_page("<p>x</p>"))
    assert page.extractor == "readability" and page.text.splitlines()[0] == ARTICLE[0]
    monkeypatch.setattr(
        extract, "readability_article", lambda html: "<html><head><title>only</title></head></html>"
    )
    assert extract.readability_reading("<p>x</p>", None) == (None, "")
