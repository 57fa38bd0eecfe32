"""How a CLI run talks to Prefect: a configured server when it answers, an embedded one otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
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
        if os.environ.get("PREFECT_API_URL"):
            # unset, not "": with an empty URL Prefect's events worker stops and every event prints a traceback
            del os.environ["PREFECT_API_URL"]
        else:  # the URL comes from the active profile: only an empty override outranks it
            os.environ["PREFECT_API_URL"] = ""
    os.environ.setdefault("PREFECT_SERVER_ALLOW_EPHEMERAL_MODE", "true")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", str(EMBEDDED_START_S))
    guard_embedded_server()
    return "embedded"


#: Seconds the embedded server may take to answer (Prefect's default, 20 s, was missed about once in 50 runs
#: on a busy 2-core machine); a start that still fails is tried once more before the run gives up.
EMBEDDED_START_S = 60


class EmbeddedServerError(RuntimeError):
    """The embedded Prefect server did not start; the message says what to do instead."""


class _GuardedSubprocess:
    """``subprocess`` as Prefect's server module sees it: its uvicorn child runs under ``flows.server_guard``."""

    def __getattr__(self, name: str):
        return getattr(subprocess, name)

    @staticmethod
    def Popen(args, *rest, **kwargs):  # noqa: N802 - stands in for subprocess.Popen
        if list(args[:3]) == [sys.executable, "-m", "uvicorn"]:
            args = [sys.executable, "-m", "flows.server_guard", str(os.getpid()), *args[3:]]
        return subprocess.Popen(args, *rest, **kwargs)


def guard_embedded_server() -> None:
    """Make the embedded server die with this process (kill -9 included) and retry a start that timed out.

    Prefect has no hook for either, so its server module gets a ``subprocess`` whose ``Popen`` wraps the
    uvicorn command (everything else passes through), and ``SubprocessASGIServer.start`` a second try.
    """
    from prefect.server.api import server

    if isinstance(server.subprocess, _GuardedSubprocess):
        return
    server.subprocess = _GuardedSubprocess()
    start = server.SubprocessASGIServer.start

    def start_with_retry(self, timeout: int | None = None) -> None:
        try:
            start(self, timeout)
        except RuntimeError as first:
            if self.server_process is not None and self.server_process.poll() is None:
                self.server_process.kill()
            self.server_process = None
            try:
                start(self, timeout)
            except RuntimeError as second:
                raise EmbeddedServerError(
                    "the embedded Prefect server did not start (tried twice): start one with "
                    "`prefect server start --host 127.0.0.1` and `prefect config set "
                    "PREFECT_API_URL=http://127.0.0.1:4200/api`, or raise "
                    f"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS. Last error: {second}"
                ) from first

    server.SubprocessASGIServer.start = start_with_retry


def repo_root() -> str:
    """The checkout that holds ``configs/`` (tokenmill runs from a checkout or an editable install)."""
    from pipeline.fingerprint import PACKAGE_ROOT

    return str(PACKAGE_ROOT)
