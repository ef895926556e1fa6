"""API keys: from the environment or a private keys file, and never anywhere else.

Lookup order for engine ``E`` (first set wins): ``SERPFUSE_<E>_API_KEY`` (``-`` becomes ``_``), then the names
the engine declares in ``INFO.key_envs`` (``BRAVE_API_KEY``, ``TAVILY_API_KEY``... the names users already
have), then the keys file: JSON ``{engine: key}`` at ``$SERPFUSE_KEYS_FILE`` or ``<user config dir>/keys.json``.
The file must not be readable by group or others (mode 0600); an open one is refused, not silently used.

Keys never appear in ``repr``/``str``; ``mask`` scrubs them (and their URL-encoded forms) out of any text
that might leave the process: reasons, exceptions, log lines, recorded bodies.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import quote, quote_plus

import platformdirs

from .engines.base import MASK, EngineInfo

KeyStatus = Literal["configured", "missing", "not needed"]
KEYS_FILE_ENV = "SERPFUSE_KEYS_FILE"
_PRIVATE_MODE = 0o600


class KeysFileError(Exception):
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
    from .engines import ENGINES  # late: the registry imports every engine module

    module = ENGINES.get(engine)
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
        self._secret_forms: list[str] | None = None  # built on first mask, rebuilt after write_key

    def __repr__(self) -> str:
        configured = sorted(name for name in self._known_engines() if self.get(name))
        return f"KeyStore(keys_file={str(self.keys_file)!r}, configured={configured!r})"

    __str__ = __repr__

    def info(self, engine: str) -> EngineInfo | None:
        if self._infos is not None:
            return self._infos.get(engine)
        return _registry_info(engine)

    def _known_engines(self) -> set[str]:
        from .engines import ENGINES

        return set(self._file_keys) | set(self._infos if self._infos is not None else ENGINES)

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

    def _secrets(self) -> list[str]:
        """Every key's forms, longest first. The env is a copy and the file changes only through write_key, so
        this is computed once, not on each of the several mask calls every engine answer makes."""
        if self._secret_forms is None:
            self._secret_forms = self._collect_secrets()
        return self._secret_forms

    def _collect_secrets(self) -> list[str]:
        values = {v for name, v in self._env.items() if name.endswith("_API_KEY") and v.strip()}
        values |= {v.strip() for v in values}
        values |= set(self._file_keys.values())
        for engine in self._known_engines():
            key = self.get(engine)
            if key:
                values.add(key)
        forms = set()
        for value in values:
            forms |= {value, quote(value, safe=""), quote_plus(value)}
        # Longest first, so a key that contains another is replaced whole.
        return sorted((f for f in forms if f), key=len, reverse=True)

    def mask(self, text: str) -> str:
        """``text`` with every known key (raw or URL-encoded) replaced by ``***``."""
        for secret in self._secrets():
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def mask_bytes(self, data: bytes) -> bytes:
        for secret in self._secrets():
            raw = secret.encode("utf-8")
            if raw in data:
                data = data.replace(raw, MASK.encode())
        return data

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
        self._secret_forms = None
        return path


class KeyMaskingFilter(logging.Filter):
    """A logging filter that scrubs keys from every record it sees (defence in depth: keys are not logged)."""

    def __init__(self, mask: Callable[[str], str]) -> None:
        super().__init__()
        self._mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._mask(record.getMessage())
        record.args = None
        return True
