"""Offline replay: recorded engine answers served through the same seam as live engines.

Two formats are read as they are:
- serpfuse's own (``serpfuse record`` writes it): a directory with ``index.json``
  ``{"format": "serpfuse-replay/1", "queries": [{"query", "file"}]}`` and one JSON per query
  ``{"query", "variants": {variant: {engine: EngineAnswer-json}}}`` (or ``"engines"`` for the main variant only);
  a single JSON file ``{"format": "serpfuse-replay/1", "queries": [<per-query object>, ...]}`` works too.
- a SearXNG JSON recording: a list of ``{query, results[], unresponsive}`` (e.g. crw56's searxng_raw.json); each
  engine's ranked list is rebuilt from every row's ``engines`` and ``positions``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from serpfuse.engines.dates import parse_published
from serpfuse.engines.searxng import assign_positions
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.ranking.query import analyze_query
from serpfuse.sources.base import EngineSlot, SourceBase, SourceError

FORMAT = "serpfuse-replay/1"
T = TypeVar("T")


def normalise_query(query: str) -> str:
    return " ".join(query.split()).casefold()


@dataclass
class RecordedQuery:
    query: str
    # variant text ("" = the main variant) -> engine -> answer
    variants: dict[str, dict[str, EngineAnswer]] = field(default_factory=dict)

    @property
    def engines(self) -> list[str]:
        return sorted({e for answers in self.variants.values() for e in answers})


class ReplayError(SourceError):
    """The recording cannot answer: no such file, an unreadable one, or a query it does not hold. The caller's
    to fix (another query or file), so a 404 and exit 2, not the 503 of a source that is down."""

    http_status = 404
    exit_code = 2


def _status_of_unresponsive(text: str) -> str:
    low = text.lower()
    if "too many requests" in low or "rate" in low:
        return "rate-limited"
    if "captcha" in low or "challenge" in low:
        return "challenge"
    if "timeout" in low:
        return "timeout"
    return "error"


def _from_searxng(entry: dict) -> RecordedQuery:
    rows = entry.get("results") or []
    lists: dict[str, list[tuple[int, dict]]] = {}
    for row, pairs in zip(rows, assign_positions(rows), strict=True):
        for engine, pos in pairs:
            lists.setdefault(engine, []).append((pos, row))
    answers: dict[str, EngineAnswer] = {}
    for engine, ranked in lists.items():
        ranked.sort(key=lambda t: t[0])
        out_rows = [
            EngineRow(
                engine=engine,
                rank=pos,
                url=row["url"],
                title=row.get("title") or "",
                snippet=row.get("content") or "",
                published=parse_published(row.get("publishedDate")),
            )
            for pos, row in ranked
        ]
        answers[engine] = EngineAnswer(engine=engine, status="ok" if out_rows else "empty", rows=out_rows)
    for name, reason in entry.get("unresponsive") or []:
        answers.setdefault(
            name, EngineAnswer(engine=name, status=_status_of_unresponsive(reason), reason=reason)
        )
    return RecordedQuery(query=entry["query"], variants={"": answers})


def reparse(engine: str, variant: str, raw: dict, root: Path) -> list[EngineRow] | EngineAnswer | None:
    """Parse a recorded raw body again with today's parser, so a parser fix also fixes old recordings.

    Returns the rows, an error answer when today's parser rejects the page, or None when there is nothing to
    re-parse (no raw body kept, a multi-step engine, an engine serpfuse no longer has).
    """
    from serpfuse.engines import engine_module, is_multi_step
    from serpfuse.engines.base import EngineError, EngineQuery

    module = engine_module(engine)
    raw_file, status = raw.get("raw_file"), raw.get("http_status")
    if module is None or is_multi_step(module) or not raw_file or not status or raw.get("raw_files"):
        return None
    path = (root / raw_file).resolve()
    if root.resolve() not in path.parents:  # a recording never points outside itself
        return None
    try:
        body = path.read_bytes()
    except OSError:
        return None
    mask = _masker().mask  # a body recorded before masking caught every echo must not show a key now
    try:
        rows = module.parse(
            int(status), {"content-type": raw.get("content_type") or ""}, body, EngineQuery(text=variant)
        )
    except EngineError as exc:
        return EngineAnswer(engine=engine, status=exc.status, reason=mask(exc.message), variant=variant)
    return [
        r.model_copy(
            update={
                "engine": engine,
                "variant": variant,
                "url": mask(r.url),
                "title": mask(r.title),
                "snippet": mask(r.snippet),
            }
        )
        for r in rows
    ]


@functools.lru_cache(maxsize=1)
def _masker():
    """This process's secrets (environment and keys file), as the live source masks with."""
    from serpfuse.secrets import KeysFileError, KeyStore, Masker, environment_secrets

    try:
        return KeyStore().masker()
    except KeysFileError:
        return Masker(environment_secrets(os.environ))


def _inside(root: Path, name: str) -> Path:
    """``root / name`` when it stays inside ``root`` (a recording never points outside itself)."""
    path = (root / name).resolve()
    if root.resolve() not in path.parents:
        raise ReplayError(f"recording entry {name!r} points outside the recording")
    return path


def _from_serpfuse(entry: dict, root: Path | None = None) -> RecordedQuery:
    variants_raw = entry.get("variants") or {"": entry.get("engines") or {}}
    variants: dict[str, dict[str, EngineAnswer]] = {}
    for variant, engines in variants_raw.items():
        answers = {}
        for name, raw in engines.items():
            answer = EngineAnswer.model_validate(
                {"engine": name, **{k: v for k, v in raw.items() if k in EngineAnswer.model_fields}}
            )
            again = reparse(name, variant, raw, root) if root is not None else None
            if isinstance(again, EngineAnswer):
                answer = again.model_copy(update={"latency_ms": answer.latency_ms, "tier": answer.tier})
            elif again is not None:
                answer = answer.model_copy(update={"rows": again, "status": "ok" if again else "empty"})
            answers[name] = answer
        variants[variant] = answers
    return RecordedQuery(query=entry["query"], variants=variants)


class Recording(Mapping[str, RecordedQuery]):
    """A read recording, ``normalised query -> RecordedQuery``: each entry becomes answers when first looked up.
    Rebuilding a SearXNG entry's ranked lists is most of the reading, and a one-shot search of one query
    paid it for every query (56 on crw56, a tenth of the search)."""

    def __init__(self, path: Path, entries: dict[str, Callable[[], RecordedQuery]]):
        self._path = path
        self._entries = entries
        self._read: dict[str, RecordedQuery] = {}

    def __getitem__(self, key: str) -> RecordedQuery:
        recorded = self._read.get(key)
        if recorded is None:
            read = self._entries[key]  # KeyError: not a recorded query
            recorded = self._read[key] = _reading(self._path, read)
        return recorded

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _reading(p: Path, read: Callable[[], T]) -> T:
    """``read()``, any fault of the file a one-line ReplayError (never a KeyError, which would read as a query
    the recording does not hold)."""
    try:
        return read()
    except ReplayError:
        raise
    except FileNotFoundError as exc:
        raise ReplayError(f"replay file not found: {exc.filename or p}") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReplayError(
            f"cannot read replay file {p}: {type(exc).__name__}: {exc}".splitlines()[0]
        ) from None


def load_recording(path: str | Path) -> Recording:
    """Open a recording (either format) as ``normalised query -> RecordedQuery``. Raises ReplayError for a file
    that cannot be read, and on lookup for an entry that cannot."""
    p = Path(path)
    return _reading(p, lambda: Recording(p, _entries(p)))


def _entries(p: Path) -> dict[str, Callable[[], RecordedQuery]]:
    if p.is_dir():
        index = json.loads((p / "index.json").read_text(encoding="utf-8"))
        files = {q["query"]: _inside(p, q["file"]) for q in index["queries"]}
        return {
            normalise_query(query): functools.partial(_from_serpfuse_file, file, p)
            for query, file in files.items()
        }
    data = json.loads(p.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return {normalise_query(e["query"]): functools.partial(_from_searxng, e) for e in data}
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return {normalise_query(e["query"]): functools.partial(_from_serpfuse, e) for e in data["queries"]}
    raise ReplayError(f"replay file {p} is neither a SearXNG recording nor {FORMAT}")


def _from_serpfuse_file(file: Path, root: Path) -> RecordedQuery:
    return _from_serpfuse(json.loads(file.read_text(encoding="utf-8")), root)


_LOADED: dict[tuple[str, int, int], Recording] = {}  # see recording_at
_LOADED_MAX = 8


def recording_at(path: str | Path) -> Recording:
    """``load_recording(path)``, read once per process while the file stays as it was (its path, size and mtime;
    a folder's ``index.json``'s): ``serpfuse.asearch(q, replay=PATH)`` opens a source per call, and reading
    the crw56 recording costs ten times a replayed search. Nothing edits a loaded recording."""
    p = Path(path)
    try:
        st = (p / "index.json" if p.is_dir() else p).stat()
    except OSError:
        return load_recording(p)  # it raises the one-line error
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    recording = _LOADED.get(key)
    if recording is None:
        recording = _LOADED[key] = load_recording(p)
        if len(_LOADED) > _LOADED_MAX:
            del _LOADED[next(iter(_LOADED))]
    return recording


@functools.lru_cache(maxsize=256)
def _main_variant(query: str) -> str:
    """The variant the fan-out asks first: what a SearXNG recording (one variant only) answered."""
    return analyze_query(query).cleaned


class ReplaySource(SourceBase):
    """A Source answering from a recording. A query absent from the recording is an error, never an empty answer."""

    name = "replay"

    def __init__(self, path: str | Path, recording: Mapping[str, RecordedQuery] | None = None):
        self.path = Path(path)
        self.recording = recording if recording is not None else recording_at(path)
        # (query key, engine, variant) -> the recorded rows marked with the variant asked: copied once, not on
        # every search (a copy of every row per engine and variant cost about a tenth of a replayed search).
        # The rows are shared between the answers given; nothing downstream edits a row.
        self._rows: dict[tuple[str, str, str], list[EngineRow]] = {}

    def lookup(self, query: str) -> RecordedQuery:
        rec = self.recording.get(normalise_query(query))
        if rec is None:
            # No path: this message reaches HTTP and MCP callers, who need the query, not the server's files.
            raise ReplayError(f"query {query!r} is not in the recording")
        return rec

    def slots(self, request: SearchRequest) -> list[EngineSlot]:
        rec = self.lookup(request.query)
        tiers = {e: a.tier for answers in rec.variants.values() for e, a in answers.items()}
        return [EngineSlot(name=e, tier=tiers.get(e, "primary")) for e in rec.engines]

    async def ask(self, engine: str, variant: str, request: SearchRequest) -> EngineAnswer:
        rec = self.lookup(request.query)
        answers = rec.variants.get(variant)
        if answers is None and variant == _main_variant(request.query):
            answers = rec.variants.get("")
        if answers is None:
            return EngineAnswer(
                engine=engine, status="skipped", variant=variant, reason="variant not in the recording"
            )
        answer = answers.get(engine)
        if answer is None:
            return EngineAnswer(
                engine=engine, status="skipped", variant=variant, reason="engine not in the recording"
            )
        slot = (normalise_query(request.query), engine, variant)
        rows = self._rows.get(slot)
        if rows is None:
            rows = self._rows[slot] = [r.model_copy(update={"variant": variant}) for r in answer.rows]
        return answer.model_copy(update={"rows": list(rows), "variant": variant})

    def identity(self) -> str:
        """The recording's file and its version: a rewritten recording is another source."""
        path = self.path.resolve()
        try:
            st = path.stat()
            version = f"{st.st_mtime_ns}:{st.st_size}"
        except OSError:
            version = "?"
        return f"replay:{path}:{version}"

    def engine_names(self, query: str | None = None) -> list[str]:
        if query is not None and (rec := self.recording.get(normalise_query(query))) is not None:
            return rec.engines
        return sorted({e for rec in self.recording.values() for e in rec.engines})

    def recorded_queries(self) -> list[str]:
        """In the recording's spelling."""
        return sorted((rec.query for rec in self.recording.values()), key=str.casefold)
