"""What the Chinese and Korean engines share (baidu, sogou, so360, naver): their pages' wrapped result links and
the block pages they answer with.

Each of these engines links its results through its own redirector (``baidu.com/link?url=``,
``sogou.com/link?url=``, ``so.com/link?m=``) whose token expires; the page also names the real target in an
attribute (Baidu's ``mu`` or the ``mu`` of its ``data-log`` JSON, Sogou's ``data-url``, 360's ``data-mdurl``).
``target_url`` takes the attribute when it is one well-formed http(s) URL (360's video cards join several in one
attribute; Sogou's WeChat cards hold a click counter with "&" but no "?"), else the redirector, made absolute, so
the row still leads to the page (dhole-mcp 17.3, 2026-10, keeps only the attribute; the AQL captures of 2018-2019
carry the redirector alone).
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

# Block pages of the Chinese engines when they come back as a 200 with no results (dhole-mcp 17.3: Baidu's
# "百度安全验证" about one search in sixteen under bursts; Sogou's and 360's verification pages alike).
CHINESE_BLOCK_MARKERS = tuple(
    m.encode()
    for m in (
        "百度安全验证",
        "安全校验",
        "请输入验证码",
        "访问过于频繁",
        "异常访问请求",
        "wappass.baidu.com",
        "/antispider",
    )
)


def well_formed(url: str | None) -> str | None:
    """``url`` when it is a single absolute http(s) URL with a host, else None."""
    url = (url or "").strip()
    if not url.startswith(("http://", "https://")) or url.count("://") > 1 or any(c.isspace() for c in url):
        return None
    if "&" in url and "?" not in url:  # a click counter's "path&scene=6": no resource behind it
        return None
    try:
        return url if urlsplit(url).hostname else None
    except ValueError:
        return None


def target_url(attribute: str | None, href: str | None, base: str) -> str | None:
    """The row's URL: the page's named target when usable, else its redirector link made absolute."""
    real = well_formed(attribute)
    if real is not None:
        return real
    if not href or not href.strip():
        return None
    return well_formed(urljoin(base, href.strip()))
