"""How a CLI run talks to Prefect: a configured server when it answers, an embedded one otherwise."""

from __future__ import annotations

import os
import urllib.error
import urllib.request

from rich.console import Console

console = Console(stderr=True)


def _server_answers(api_url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(api_url.rstrip("/") + "/health", timeout=timeout_s) as response:  # noqa: S310
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def configured_api_url() -> str | None:
    """PREFECT_API_URL from the environment or the active Prefect profile, if any."""
    url = os.environ.get("PREFECT_API_URL")
    if url:
        return url
    try:
        from prefect.settings import get_current_settings

        value = get_current_settings().api.url
        return str(value) if value else None
    except Exception:  # noqa: BLE001 - no profile means no server configured
        return None


def ensure_prefect_backend() -> str:
    """Use the configured Prefect server if it answers; otherwise run embedded and say so.

    Returns "server" or "embedded". Only loopback and configured addresses are contacted.
    """
    url = configured_api_url()
    if url and _server_answers(url):
        return "server"
    if url:
        console.print(
            f"[yellow]Prefect server at {url} is not answering; running embedded (ephemeral, SQLite) instead.[/]"
        )
        os.environ["PREFECT_API_URL"] = ""
    os.environ.setdefault("PREFECT_SERVER_ALLOW_EPHEMERAL_MODE", "true")
    return "embedded"


def repo_root() -> str:
    """The checkout that holds ``configs/`` (tokenmill runs from a checkout or an editable install)."""
    from pipeline.fingerprint import PACKAGE_ROOT

    return str(PACKAGE_ROOT)
