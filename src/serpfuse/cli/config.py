"""`serpfuse config show` (the effective settings, secrets masked) and `serpfuse config keys` (the keys file)."""

from __future__ import annotations

import getpass
import json
import sys
from typing import Annotated, Any

import typer

from serpfuse.cli.errors import fail, fail_on
from serpfuse.errors import SerpfuseError
from serpfuse.secrets import SECRET_SETTINGS, SECRET_URL_SETTINGS, KeysFileError, KeyStore, mask_url
from serpfuse.settings import ENGINE_TABLES, MASK, Settings, find_config_file, load_settings


def _engine_names() -> list[str]:
    from serpfuse.engines import ENGINES

    return sorted(ENGINES)


def _key_statuses() -> dict[str, str]:
    try:
        store = KeyStore()
    except KeysFileError as exc:
        return {"error": str(exc)}
    return {name: store.status(name) for name in _engine_names()}


def _read_secret(engine: str) -> str:
    """``--set brave=-``: read the key without it landing in shell history or the process list."""
    if sys.stdin.isatty():
        return getpass.getpass(f"{engine} API key: ")
    return sys.stdin.readline().strip()


def register(app: typer.Typer) -> None:
    config_app = typer.Typer(
        help="Show the effective settings; manage engine API keys.",
        no_args_is_help=True,
        add_completion=False,
    )

    @config_app.command("show")
    def show(
        config: Annotated[
            str | None, typer.Option("--config", help="TOML settings file (else ./serpfuse.toml).")
        ] = None,
    ) -> None:
        """Print the effective settings (file < SERPFUSE_* < flags) as JSON, every secret masked."""
        try:
            path = find_config_file(config)
            settings = load_settings(config)
        except SerpfuseError as exc:
            fail_on(exc)
        view = {
            "config_file": str(path) if path else None,
            "settings": public_view(settings),
            "keys": _key_statuses(),
        }
        print(json.dumps(view, indent=2, ensure_ascii=False))

    @config_app.command("keys")
    def keys(
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="ENGINE=KEY (repeatable); KEY '-' reads it from stdin."),
        ] = None,
        list_: Annotated[
            bool, typer.Option("--list", help="Each engine's key status (never the key).")
        ] = False,
    ) -> None:
        """Store API keys in the private keys file (mode 0600), or list which engines have one."""
        try:
            store = KeyStore()
        except SerpfuseError as exc:
            fail_on(exc)
        known = _engine_names()
        for item in set_ or []:
            engine, sep, key = item.partition("=")
            engine = engine.strip().lower()
            if not sep or not engine:
                fail(f"--set wants ENGINE=KEY, got {item.split('=')[0]!r}=...")
            if engine not in known:
                fail(f"unknown engine {engine!r}; choose from: {', '.join(known)}")
            if key.strip() == "-":
                key = _read_secret(engine)
            try:
                path = store.write_key(engine, key)
            except SerpfuseError as exc:
                fail_on(exc)
            print(f"serpfuse: saved the {engine} key in {path} (mode 0600)", file=sys.stderr)
        if list_ or not set_:
            for engine in known:
                status = store.status(engine)
                hint = f"  ({store.hint(engine)})" if status == "missing" else ""
                print(f"{engine:12} {status}{hint}")

    app.add_typer(config_app, name="config")


def public_view(settings: Settings) -> dict[str, Any]:
    """The effective settings as JSON, every secret masked (api_token, passwords in URLs)."""
    data = settings.model_dump(mode="json", exclude={"ranking"})
    for name in SECRET_SETTINGS:
        data[name] = MASK if data.get(name) else None
    for name in SECRET_URL_SETTINGS:
        if data.get(name):
            data[name] = mask_url(data[name])
    for table in data.get(ENGINE_TABLES, {}).values():
        if table.get("base_url"):
            table["base_url"] = mask_url(table["base_url"])
    data["cache"] = settings.cache_backend
    data["cache_path"] = str(settings.cache_path) if settings.cache_backend == "sqlite" else None
    data["ranking"] = settings.ranking_config.model_dump(mode="json")
    data["ranking_fingerprint"] = settings.ranking_config.fingerprint()
    return data
