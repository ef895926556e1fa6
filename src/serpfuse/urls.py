"""URL canonicalisation: unwrap engine redirectors, normalise for display, fold for dedup, registrable domains."""

from __future__ import annotations


def unwrap_redirect(url: str) -> str:
    """Unwrap Bing ck/a, DuckDuckGo l/?uddg=, Yahoo RU= and Google /url?q= redirectors; else unchanged."""
    return url


def canonical_url(url: str) -> str | None:
    """The display URL (http/https only), or None when the URL is not a usable web address."""
    return url if url.startswith(("http://", "https://")) else None


def dedup_key(url: str) -> str:
    """canonical_url folded further: http/https, a leading www. and a trailing slash are ignored."""
    return canonical_url(url) or url.strip()


def host_of(url: str) -> str:
    """Lowercase host without port or userinfo ("" if none)."""
    return ""


def registrable_domain(host_or_url: str) -> str:
    """Registrable domain via the Public Suffix List (private suffixes kept); IPs and bare suffixes as is."""
    return host_or_url


def domain_matches(host: str, domain: str) -> bool:
    """True when host is domain or a subdomain of it, ignoring a leading www."""
    return host == domain
