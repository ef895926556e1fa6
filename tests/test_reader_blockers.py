"""A bot check or an empty JavaScript shell is never a page's content; a real page that looks like one in part is."""

from __future__ import annotations

from serpfuse.reader.blockers import blocker

CHECK = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><div id='challenge-form'>"
    "<h1>Checking your browser before accessing example.org</h1><p>This process is automatic.</p></div></body></html>"
)
SHELL = "<html><head><script src='/app.js'></script></head><body><div id='root'></div></body></html>"
ARTICLE_WORDS = " ".join(["The council met on Tuesday to discuss the harbour."] * 60)


def test_a_bot_check_and_a_shell_are_told_apart():
    assert blocker(CHECK, 12) == "challenge" and blocker(CHECK, None) == "challenge"
    assert blocker(SHELL, None) == "js_shell"
    assert blocker("<html><body><p>Short but real.</p></body></html>", 3) is None  # no scripts: a short page


def test_a_real_page_with_a_marker_or_odd_markup_is_the_page():
    cookies = f"<html><body><p>{ARTICLE_WORDS}</p><footer>Please enable cookies</footer><script></script></body></html>"
    assert blocker(cookies, 100) is None  # a marker beside hundreds of words of text
    assert blocker(cookies, 600) is None  # a long extraction is the page, whatever the markup says
    # an unclosed <title> swallows the body for one parser; the extraction read the article: not a shell
    odd = f"<html><head><title>News</titlevalue='1'><script></script></head><body><p>{ARTICLE_WORDS}</p></body></html>"
    assert blocker(odd, 120) is None
