"""API keys: from the environment or a private keys file, and never anywhere else.

Lookup order for engine ``E`` (first set wins): ``SERPFUSE_<E>_API_KEY`` (``-`` becomes ``_``), then the names
the engine declares in ``INFO.key_envs`` (``BRAVE_API_KEY``, ``TAVILY_API_KEY``... the names users already
have), then the keys file: JSON ``{engine: key}`` at ``$SERPFUSE_KEYS_FILE`` or ``<user config dir>/keys.json``.
The file must not be readable by group or others (mode 0600); an open one is refused, not silently used.

Keys never appear in ``repr``/``str``; ``mask`` scrubs them out of any text that might leave the process:
reasons, exceptions, log lines, recorded bodies. An echo is caught raw, JSON-escaped (``\\u0061``),
percent-encoded, as an HTML character reference, base64 (standard or URL-safe, at any alignment in a longer
encoded text) or hex, and in part: any ``PARTIAL_CHARS`` characters of a key in a row are masked (a key minus
its last character is still the key). ``Masker`` does the matching;
``KeyMaskingFilter`` puts it on the logging handlers (``serpfuse.serve.logs``).
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import html
import json
import logging
import os
import re
import stat
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import platformdirs

from serpfuse.engines.base import MASK, EngineInfo
from serpfuse.errors import ConfigError

KeyStatus = Literal["configured", "missing", "not needed"]
PARTIAL_CHARS = 12  # this many characters of a secret in a row are masked wherever they appear
MIN_ENCODED_CHARS = PARTIAL_CHARS  # a shorter encoded form (of a secret under 9 bytes) is not looked for
# What is secret, in one place: every place that masks (the key store, log lines, settings shown, `engines`,
# `doctor`, recordings) reads these names. API keys are the ``*_API_KEY`` variables and the keys file.
SECRET_ENVS = ("SERPFUSE_API_TOKEN",)
# Variables holding a URL whose password is a secret (a SearXNG behind basic auth, a proxy, Redis).
SECRET_URL_ENVS = (
    "SERPFUSE_SEARXNG_URL",
    "SERPFUSE_PROXY",
    "SERPFUSE_REDIS_URL",
    "HTTPS_PROXY",
    "HTTP_PROXY",
)
# ... and every engine's base URL (``SERPFUSE_ENGINES__NAME__BASE_URL``), the form the README recommends.
SECRET_URL_ENV_PATTERN = re.compile(r"SERPFUSE_ENGINES__\w+__BASE_URL", re.IGNORECASE)
# The settings' fields of the same kinds (``[engines.NAME] base_url`` is a URL setting too).
SECRET_SETTINGS = ("api_token",)
SECRET_URL_SETTINGS = ("redis_url", "proxy")
KEYS_FILE_ENV = "SERPFUSE_KEYS_FILE"
_PRIVATE_MODE = 0o600


class Masker:
    """Finds secrets in text however they were echoed, and replaces each echo with ``***``.

    The text is read as a sequence of characters where a JSON ``\\uXXXX``, a ``%XX`` and an ``&#..;`` escape
    each count as the one character they stand for; any run of ``PARTIAL_CHARS`` characters (or a whole
    secret shorter than that) of a secret found in that sequence is masked in the original text, extended
    to the longest run of the secret there. Secrets are found through their 6-character pieces at every
    6th offset: any 12-character run of a secret holds one whole, so each piece is one ``str.find`` pass.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        given = {s for s in secrets if s}
        forms = {form: run for s in given for form, run in encoded_forms(s).items() if form not in given}
        self.secrets = sorted(given | set(forms), key=len, reverse=True)
        self._anchors = _anchors(given)
        # Encoded forms are made of base64/hex characters only, so they are looked for only inside runs of
        # those, each 6-character window of a run looked up once: the extra forms cost one regex scan and a
        # few lookups, not one search per piece.
        self._encoded_pieces: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
        for piece, form, offset in _anchors(forms):
            self._encoded_pieces[piece].append((form, offset, forms[form]))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def mask(self, text: str) -> str:
        if not self.secrets or not text:
            return text
        plain, spans = _unescaped(text)
        hits = self._find(plain)
        if not hits:
            return text
        out, pos = [], 0
        for start, end in hits:  # indexes into plain -> the original text's spans
            a, b = spans[start][0], spans[end - 1][1]
            if a < pos:
                a = pos
            out.append(text[pos:a])
            if b > a:
                out.append(MASK)
            pos = max(pos, b)
        out.append(text[pos:])
        return "".join(out)

    def _find(self, plain: str) -> list[tuple[int, int]]:
        runs = _runs(plain, self._anchors, 0, len(plain))
        if self._encoded_pieces:
            for m in _ENCODED_RUN.finditer(plain):
                begin, stop = m.span()
                for at in range(begin, stop - 5):
                    for form, offset, least in self._encoded_pieces.get(plain[at : at + 6], ()):
                        runs += _extend(plain, form, offset, at, 6, begin, stop, least)
        runs.sort()
        merged: list[tuple[int, int]] = []
        for lo, hi in runs:
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return merged


_Anchor = tuple[str, str, int]  # (piece, secret, offset of the piece in it)


def _anchors(secrets: Iterable[str]) -> list[_Anchor]:
    out = []
    for secret in secrets:
        step = 6 if len(secret) >= PARTIAL_CHARS else len(secret)
        for offset in range(0, len(secret) - step + 1, step):
            out.append((secret[offset : offset + step], secret, offset))
    return out


def _runs(plain: str, anchors: list[_Anchor], begin: int, stop: int) -> list[tuple[int, int]]:
    """Where in ``plain[begin:stop]`` a long enough run of a secret sits, found through its anchors."""
    runs = []
    for piece, secret, offset in anchors:
        at = plain.find(piece, begin, stop)
        while at >= 0:
            runs += _extend(plain, secret, offset, at, len(piece), begin, stop, PARTIAL_CHARS)
            at = plain.find(piece, at + 1, stop)
    return runs


def _extend(
    plain: str, secret: str, offset: int, at: int, size: int, begin: int, stop: int, least: int
) -> list[tuple[int, int]]:
    """The run of ``secret`` around its piece found at ``at``, if it is ``least`` characters long (or the
    whole secret)."""
    start, end = at - offset, at - offset + len(secret)  # where the whole secret would sit
    lo, hi = at, at + size
    while lo > max(begin, start) and plain[lo - 1] == secret[lo - start - 1]:
        lo -= 1
    while hi < min(stop, end) and plain[hi] == secret[hi - start]:
        hi += 1
    return [(lo, hi)] if hi - lo >= min(least, len(secret)) else []


def encoded_forms(secret: str) -> dict[str, int]:
    """The texts a secret becomes when an echo encodes it, each with the run of it that is masked (what
    ``PARTIAL_CHARS`` characters of the secret encode to): hex (either case), and base64 and its URL-safe
    alphabet at each of the three alignments it can have inside a longer encoded text (the characters that
    also depend on the bytes around it left out). Forms shorter than ``MIN_ENCODED_CHARS`` are left out."""
    raw = secret.encode()
    forms = dict.fromkeys([raw.hex(), raw.hex().upper()], 2 * PARTIAL_CHARS)
    for lead in range(3):  # bytes of the encoded text before the secret, modulo 3
        text = base64.b64encode(b"\0" * lead + raw).decode()
        first = -(-8 * lead // 6)  # characters holding a bit of the bytes before
        last = 8 * (lead + len(raw)) // 6  # characters made of the secret's bits alone end here
        core = text[first:last]
        forms |= dict.fromkeys([core, core.translate(_URLSAFE)], -(-8 * PARTIAL_CHARS // 6))
    return {form: run for form, run in forms.items() if len(form) >= MIN_ENCODED_CHARS}


_URLSAFE = str.maketrans("+/", "-_")
_ENCODED_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{MIN_ENCODED_CHARS},}}")  # where an encoded form can be
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|%[0-9a-fA-F]{2}|&#[xX][0-9a-fA-F]{1,6};|&#[0-9]{1,7};|\\/")


def _unescaped(text: str) -> tuple[str, _Spans]:
    """``text`` with JSON, percent and HTML character escapes decoded, and where each character of the result
    came from in ``text``. Linear, and text without escapes is returned as it is (the common case)."""
    spans = _Spans()
    if not _ESCAPE.search(text):
        return text, spans
    parts: list[str] = []
    pos = plain = 0
    for m in _ESCAPE.finditer(text):
        token = m.group()
        if token.startswith("\\u"):
            char = chr(int(token[2:], 16))
        elif token.startswith("%"):  # one byte: ASCII only (a key is ASCII; a UTF-8 sequence is left as is)
            char = chr(int(token[1:], 16)) if int(token[1:], 16) < 0x80 else ""
        elif token == "\\/":
            char = "/"
        else:
            char = html.unescape(token)
        if len(char) != 1:
            continue
        parts.append(text[pos : m.start()])
        plain += m.start() - pos
        spans.add(plain, m.start(), m.end())
        parts.append(char)
        plain += 1
        pos = m.end()
    parts.append(text[pos:])
    return "".join(parts), spans


class _Spans:
    """Where character i of the unescaped text came from: an escape's whole span, or one character at the
    same distance from the escape before it."""

    def __init__(self) -> None:
        self._plain: list[int] = []  # index in the unescaped text of each decoded escape
        self._orig: list[tuple[int, int]] = []  # its span in the original text

    def add(self, plain: int, start: int, end: int) -> None:
        self._plain.append(plain)
        self._orig.append((start, end))

    def __getitem__(self, i: int) -> tuple[int, int]:
        k = bisect.bisect_right(self._plain, i) - 1
        if k < 0:
            return (i, i + 1)
        if self._plain[k] == i:
            return self._orig[k]
        at = self._orig[k][1] + (i - self._plain[k] - 1)
        return (at, at + 1)


def url_password(url: str) -> str | None:
    try:
        return urlsplit(url.strip()).password or None
    except ValueError:
        return None


def is_secret_url_env(name: str) -> bool:
    return name in SECRET_URL_ENVS or SECRET_URL_ENV_PATTERN.fullmatch(name) is not None


def environment_secrets(env: Mapping[str, str]) -> set[str]:
    """Every secret the environment holds: API keys, the API token, passwords inside configured URLs."""
    values = {v.strip() for name, v in env.items() if name.endswith("_API_KEY") and v.strip()}
    values |= {env[name].strip() for name in SECRET_ENVS if env.get(name, "").strip()}
    values |= {p for name, value in env.items() if is_secret_url_env(name) and (p := url_password(value))}
    return values


def url_secrets(urls: Iterable[str | None]) -> set[str]:
    """The passwords inside ``urls`` (a settings file's Redis URL, proxy or engine base URLs)."""
    return {p for url in urls if url and (p := url_password(url))}


class KeysFileError(ConfigError):
    """The keys file cannot be used. The message names the file and the fix, never its content."""


def default_keys_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    explicit = env.get(KEYS_FILE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return platformdirs.user_config_path("serpfuse") / "keys.json"


def serpfuse_key_env(engine: str) -> str:
    return f"SERPFUSE_{engine.replace('-', '_').upper()}_API_KEY"


def key_env_names(engine: str, info: EngineInfo | None) -> list[str]:
    names = [serpfuse_key_env(engine), *(info.key_envs if info else ())]
    return list(dict.fromkeys(names))


def _check_private(path: Path, st: os.stat_result) -> None:
    if os.name == "nt":  # POSIX modes mean nothing there; rely on the user profile's ACL
        return
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise KeysFileError(
            f"keys file {path} is mode {stat.S_IMODE(st.st_mode):04o}, readable by others; "
            f"refusing it (run: chmod 600 {path})"
        )


def read_keys_file(path: Path) -> dict[str, str]:
    """``{engine: key}`` from a private keys file; {} when the file does not exist."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return {}
    _check_private(path, st)
    data: object = None
    # Raised below, unchained: a JSONDecodeError carries the whole file (its .doc), keys included.
    with contextlib.suppress(OSError, UnicodeDecodeError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
    if data is None:
        raise KeysFileError(f'keys file {path} is not readable JSON of the form {{"engine": "key"}}')
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise KeysFileError(f'keys file {path} must be a JSON object of the form {{"engine": "key"}}')
    return {k.strip().lower(): v.strip() for k, v in data.items() if v.strip()}


def _registry_info(engine: str) -> EngineInfo | None:
    from serpfuse.engines import engine_module

    module = engine_module(engine)
    return getattr(module, "INFO", None) if module is not None else None


class KeyStore:
    """The configured keys. ``infos`` maps engine names to their metadata (default: the engine registry)."""

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        keys_file: str | os.PathLike[str] | None = None,
        infos: Mapping[str, EngineInfo] | None = None,
    ) -> None:
        self._env = dict(os.environ if env is None else env)
        self.keys_file = Path(keys_file) if keys_file is not None else default_keys_file(self._env)
        self._file_keys = read_keys_file(self.keys_file)
        self._infos = infos
        self._masker: Masker | None = None  # built on first mask, rebuilt after write_key
        self._extra: set[str] = set()  # also_mask's

    def __repr__(self) -> str:
        configured = sorted(name for name in self._known_engines() if self.get(name))
        return f"KeyStore(keys_file={str(self.keys_file)!r}, configured={configured!r})"

    __str__ = __repr__

    def info(self, engine: str) -> EngineInfo | None:
        if self._infos is not None:
            return self._infos.get(engine)
        return _registry_info(engine)

    def _known_engines(self) -> set[str]:
        from serpfuse.engines import ENGINE_NAMES

        return set(self._file_keys) | set(self._infos if self._infos is not None else ENGINE_NAMES)

    def env_names(self, engine: str) -> list[str]:
        return key_env_names(engine, self.info(engine))

    def get(self, engine: str) -> str | None:
        for name in self.env_names(engine):
            value = self._env.get(name, "").strip()
            if value:
                return value
        return self._file_keys.get(engine)

    def status(self, engine: str) -> KeyStatus:
        info = self.info(engine)
        if self.get(engine):
            return "configured"
        if info is not None and not info.needs_key:
            return "not needed"
        return "missing"

    def hint(self, engine: str) -> str:
        """``set BRAVE_API_KEY``: the variable a user most likely already knows."""
        names = self.env_names(engine)
        familiar = [n for n in names if not n.startswith("SERPFUSE_")]
        return f"set {(familiar or names)[0]}"

    def also_mask(self, secrets: Iterable[str]) -> None:
        """Mask these too (the passwords in a settings file's engine base URLs, which no variable holds)."""
        extra = {s for s in secrets if s} - self._extra
        if extra:
            self._extra |= extra
            self._masker = None

    def masker(self) -> Masker:
        """The masker of every key (and every secret the environment holds). The env is a copy and the file
        changes only through write_key, so this is built once, not on each of the several mask calls every
        engine answer makes."""
        if self._masker is None:
            values = environment_secrets(self._env) | set(self._file_keys.values()) | self._extra
            values |= {key for engine in self._known_engines() if (key := self.get(engine))}
            self._masker = Masker(values)
        return self._masker

    def mask(self, text: str) -> str:
        """``text`` with every echo of a known secret (raw, escaped, encoded or in part) replaced by ``***``."""
        return self.masker().mask(text)

    def mask_bytes(self, data: bytes) -> bytes:
        if not self.masker():
            return data
        # surrogateescape: bytes that are not UTF-8 come back out exactly as they went in.
        return self.mask(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def write_key(self, engine: str, key: str) -> Path:
        """Store ``key`` for ``engine`` in the keys file, created private (0600) and replaced atomically."""
        key = key.strip()
        if not key or any(c.isspace() for c in key):
            raise KeysFileError("a key must be one non-empty word")
        path = self.keys_file
        keys = read_keys_file(path)
        keys[engine.strip().lower()] = key
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # mkstemp creates the file 0600 from the start: there is no moment when it is readable by others.
        fd, tmp = tempfile.mkstemp(prefix=".keys-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(keys, handle, indent=1, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, _PRIVATE_MODE)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        self._file_keys = keys
        self._masker = None
        return path


class KeyMaskingFilter(logging.Filter):
    """A logging filter that scrubs keys from every record it sees (defence in depth: keys are not logged)."""

    def __init__(self, mask: Callable[[str], str]) -> None:
        super().__init__()
        self._mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._mask(record.getMessage())
        record.args = None
        if record.exc_info and record.exc_info[1] is not None:  # a traceback's text can quote a URL or key
            record.exc_text = self._mask(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def mask_url(url: str) -> str:
    """``redis://user:pw@host/0`` -> ``redis://user:***@host/0``; a URL without a password is unchanged."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{user}:{MASK}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
