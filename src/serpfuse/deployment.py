"""A deployment's engines, built from its settings in one place.

The service (``serpfuse search``, ``serve``, ``mcp`` and the Python API), ``doctor``, ``record`` and ``engines``
each build their source here, so a setting (an engine's base URL or contact, the proxy, impersonation, the
timeout, the connection pool, the body cap) reaches every one of them alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from serpfuse.engines import UnknownEngine
from serpfuse.errors import ConfigError
from serpfuse.models import SearchRequest
from serpfuse.settings import Settings
from serpfuse.sources import open_source
from serpfuse.sources.base import EngineSlot, Source
from serpfuse.sources.fanout import select_slots

if TYPE_CHECKING:
    from serpfuse.sources.live import LiveSource


def live_options(settings: Settings) -> dict[str, Any]:
    """What the live engines take from the settings (``LiveSource.from_environment``'s options)."""
    return {
        "proxy": settings.proxy,
        "impersonate": settings.impersonate,
        "timeout_s": settings.timeout_s,
        "connections": settings.engine_connections,
        "idle_connections": settings.engine_idle_connections,
        "keepalive_s": settings.engine_keepalive_s,
        "max_bytes": settings.engine_max_bytes,
        "base_urls": settings.engine_base_urls,
        "contacts": settings.engine_contacts,
    }


def settings_source(settings: Settings, **overrides: Any) -> Source:
    """The source the settings name: their recording when ``replay`` is set, else the live engines with
    ``live_options`` (``overrides`` on top: the engines asked, the stores the service shares)."""
    return open_source(settings.replay, **{**live_options(settings), **overrides})


def live_source(settings: Settings, **overrides: Any) -> LiveSource:
    """The live engines with ``live_options`` (``overrides`` on top), whatever ``replay`` says: what ``doctor``,
    ``record`` and ``engines`` ask or list."""
    from serpfuse.sources.live import LiveSource

    return LiveSource.from_environment(**{**live_options(settings), **overrides})


def check_engines(settings: Settings, source: Source) -> None:
    """``ConfigError`` when the settings' ``engines`` names one ``source`` does not have (the live registry,
    or a recording's engines; aliases count): caught once at start-up, not as a 400 on every search."""
    if not settings.engines:
        return
    request = SearchRequest(query="engines", engines=settings.engines)
    names = source.engine_names()  # a recording's: every recorded query's
    slots = [EngineSlot(name=e) for e in names] if names is not None else source.slots(request)
    try:
        select_slots(slots, request)
    except UnknownEngine as exc:
        import difflib

        name = exc.names[0]
        near = difflib.get_close_matches(name, exc.valid, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]!r}?" if near else f"choose from: {', '.join(exc.valid)}"
        raise ConfigError(f"settings: engines: unknown engine {name!r}; {hint}") from None
