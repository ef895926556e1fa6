"""Main content of a document as markdown, plain text and HTML, with its metadata.

HTML goes through two extractors made for this and keeps what they agree on:

1. trafilatura (fast mode, comments off) finds the article and its structure: headings, lists, tables, code.
2. readability-lxml finds the article independently, by another algorithm.
3. When the two found the same article (readability holds at least half of trafilatura's 4-word shingles),
   trafilatura's leading and trailing blocks that readability did not keep are page furniture (related links,
   an "about the company" footer, a newsletter prompt) and are cut, unless that would cut more than a third of
   the words. The middle is never cut: extractors disagree at the edges of an article, not inside it. When they
   disagree on the article itself, trafilatura's answer stands; when trafilatura finds nothing, readability's.

Measured on scrapinghub's article-extraction benchmark with its own scorer: ``make bench-reader``
(BENCHMARKS.md, "Page reader"). PDF goes through pypdf, plain text passes through.
"""

from __future__ import annotations

import copy
import io
import logging
import re
from dataclasses import dataclass, field

import lxml.html
import trafilatura
from lxml import etree
from trafilatura.readability_lxml import Document as ReadabilityDocument
from trafilatura.utils import load_html
from trafilatura.xml import xmltotxt

from serpfuse.reader.models import CallerError

# trafilatura warns per page ("discarding data: URL"); the reader says the same once, as its one-line error.
logging.getLogger("trafilatura").setLevel(logging.ERROR)

# A block is "kept by readability" when at least this share of its shingles is in readability's text, and the
# two extractors found the same article when readability holds at least this share of trafilatura's shingles.
AGREEMENT = 0.5
SHINGLE = 4  # the benchmark's own shingle length: long enough that shared shingles mean shared sentences
# Furniture is a small part of a page: a cut of more than this share of the words means readability lost part of
# the article, not that trafilatura added furniture, so nothing is cut.
MAX_CUT = 1 / 3

# One token per CJK character (no spaces between words there), one per run of other word characters.
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|\w+")
_INLINE_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_LANG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")


class ExtractionError(CallerError):
    """The document has no readable text. One line."""


@dataclass
class Extraction:
    markdown: str
    text: str
    html: str
    title: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    canonical_url: str | None = None
    kind: str = "html"  # html | pdf | text
    extractor: str = "trafilatura+readability"
    notes: list[str] = field(default_factory=list)


# --- tokens and agreement ---------------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def shingles(toks: list[str], n: int = SHINGLE) -> set[tuple[str, ...]]:
    return {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}


class _Support:
    """Which pieces of text a second extraction also holds (shingle share, or verbatim for short pieces)."""

    def __init__(self, other_text: str) -> None:
        toks = tokens(other_text)
        self.joined = f" {' '.join(toks)} "
        self.shingles = shingles(toks)

    def share(self, text: str) -> float:
        mine = shingles(tokens(text))
        return len(mine & self.shingles) / len(mine) if mine else 0.0

    def holds(self, text: str) -> bool:
        toks = tokens(text)
        if not toks:
            return True
        if len(toks) < SHINGLE:
            return f" {' '.join(toks)} " in self.joined
        return self.share(text) >= AGREEMENT


def agreed_span(blocks: list[str], other_text: str) -> slice:
    """The blocks to keep: all but the leading and trailing ones the other extraction did not keep, when it
    found the same article; all of them otherwise."""
    support = _Support(other_text)
    if not other_text.strip() or support.share("\n".join(blocks)) < AGREEMENT:
        return slice(0, len(blocks))
    kept = [support.holds(b) for b in blocks]
    if not any(kept):
        return slice(0, len(blocks))
    span = slice(kept.index(True), len(kept) - kept[::-1].index(True))
    sizes = [len(tokens(b)) for b in blocks]
    if sum(sizes) - sum(sizes[span]) > MAX_CUT * sum(sizes):
        return slice(0, len(blocks))
    return span


def _block_text(block: etree._Element) -> str:
    return " ".join(block.itertext())


# --- readability ------------------------------------------------------------------------------------------


def readability_text(tree: lxml.html.HtmlElement) -> str:
    """Readability's article as plain text ('' when it finds none), by trafilatura's port of readability-lxml
    (the one trafilatura's own fallback runs: same algorithm, four times faster than readability-lxml 0.9)."""
    try:
        summary = ReadabilityDocument(tree, min_text_length=25).summary()
    except Exception:  # readability gives up on documents it cannot score: no article then
        return ""
    return lxml.html.fromstring(summary).text_content() if summary and summary.strip() else ""


# --- HTML -------------------------------------------------------------------------------------------------


def _language(tree: lxml.html.HtmlElement) -> str | None:
    for value in (
        tree.get("lang"),
        tree.get("xml:lang"),
        *tree.xpath(
            "//meta[@http-equiv and translate(@http-equiv,'CONTENTLANGUAGE','contentlanguage')"
            "='content-language']/@content"
        ),
        *tree.xpath("//meta[@property='og:locale']/@content"),
    ):
        if value and _LANG.match(value.strip()):
            return value.strip().replace("_", "-")
    return None


def links_as_references(markdown: str) -> str:
    """``[text](url)`` -> ``[text][n]`` with the URLs listed once at the end: prose reads without URLs in it."""
    numbers: dict[str, int] = {}

    def ref(m: re.Match[str]) -> str:
        n = numbers.setdefault(m.group(2), len(numbers) + 1)
        return f"[{m.group(1)}][{n}]"

    body = _INLINE_LINK.sub(ref, markdown)
    if not numbers:
        return markdown
    return body.rstrip() + "\n\n" + "\n".join(f"[{n}]: {url}" for url, n in numbers.items()) + "\n"


def _render(body: etree._Element, *, formatting: bool) -> str:
    return xmltotxt(body, formatting).strip()


def extract_html(html: str | bytes, url: str | None = None, *, metadata: bool = True) -> Extraction:
    """The article of an HTML page. Raises ExtractionError when neither extractor finds any text."""
    if isinstance(html, bytes):
        html = html.decode("utf-8", errors="replace")
    tree = load_html(html)
    if tree is None:
        raise ExtractionError("the page is not parseable HTML")
    doc = trafilatura.bare_extraction(
        copy.deepcopy(tree),
        url=url,
        fast=True,
        include_comments=False,
        include_tables=True,
        include_formatting=True,
        include_links=True,
        with_metadata=metadata,
    )
    other = readability_text(tree)
    if doc is None or not len(doc.body):
        if not other.strip():
            raise ExtractionError("no readable text in the page")
        text = re.sub(r"\n{3,}", "\n\n", other.strip())
        return Extraction(
            markdown=text,
            text=text,
            html=f"<article><pre>{_escape(text)}</pre></article>",
            language=_language(tree),
            extractor="readability",
        )
    plain_body = _without_links(doc.body)
    span = agreed_span([_block_text(b) for b in plain_body], other)
    for body in (doc.body, plain_body):
        blocks = list(body)
        for block in blocks[: span.start] + blocks[span.stop :]:
            body.remove(block)
    text = _render(plain_body, formatting=False)
    if not text:
        raise ExtractionError("no readable text in the page")
    markdown = links_as_references(_render(doc.body, formatting=True))
    if doc.title and not markdown.startswith("#"):  # the trim may take the page's own <h1>; a reader wants it
        markdown = f"# {doc.title}\n\n{markdown}"
    return Extraction(
        markdown=markdown,
        text=text,
        html=_article_html(doc.body),
        title=doc.title or None,
        author=doc.author or None,
        date=doc.date or None,
        language=_language(tree),
        canonical_url=doc.url or url,
    )


def _without_links(body: etree._Element) -> etree._Element:
    plain = copy.deepcopy(body)
    etree.strip_tags(plain, "ref")
    return plain


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _article_html(body: etree._Element) -> str:
    """trafilatura's XML body as plain HTML (its own converter), inside <article>."""
    from trafilatura.htmlprocessing import convert_to_html

    html = convert_to_html(copy.deepcopy(body))
    html.tag = "article"
    return etree.tostring(html, encoding="unicode", method="html")


# --- other types -----------------------------------------------------------------------------------------


def extract_pdf(data: bytes) -> Extraction:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:  # PyPdfError: its read errors and its limits
        raise ExtractionError(
            f"unreadable PDF: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise ExtractionError("no text in the PDF (scanned pages need OCR, which the reader does not do)")
    return _preformatted(
        text,
        kind="pdf",
        extractor="pypdf",
        title=(info.title if info and info.title else None),
        author=(info.author if info and info.author else None),
    )


def extract_text(text: str) -> Extraction:
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise ExtractionError("the document is empty")
    return _preformatted(text, kind="text", extractor="plain")


def _preformatted(text: str, **fields) -> Extraction:
    """Text with no markup of its own (a PDF's, a plain file's): the same text as markdown and as a <pre>."""
    return Extraction(
        markdown=text, text=text, html=f"<article><pre>{_escape(text)}</pre></article>", **fields
    )
