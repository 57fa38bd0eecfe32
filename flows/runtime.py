"""How a CLI run talks to Prefect: a configured server when it answers, an embedded one otherwise."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import urllib.error
import urllib.request

from flows.options import PREFECT_MODES
from pipeline.console import make_console
from pipeline.errors import TokenmillError

console = make_console()


def _server_answers(api_url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(api_url.rstrip("/") + "/health", timeout=timeout_s) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def configured_api_url() -> str | None:
    """PREFECT_API_URL from the environment or the active Prefect profile, if any."""
    url = os.environ.get("PREFECT_API_URL")
    if url:
        return url
    if "prefect" not in sys.modules and not _settings_files_here():
        # importing prefect.settings costs ~1.4 CPU-s; without a prefect.toml/.env/pyproject [tool.prefect] in the
        # working directory, the profile file is the only other place a URL can be configured
        return _profile_api_url()
    try:
        from prefect.settings import get_current_settings

        value = get_current_settings().api.url
        return str(value) if value else None
    except Exception:  # noqa: BLE001 - no profile means no server configured
        return None


def _settings_files_here() -> bool:
    """A settings file Prefect reads from the working directory (then only Prefect itself can resolve the URL)."""
    if os.path.exists("prefect.toml") or os.path.exists(".env"):
        return True
    try:
        with open("pyproject.toml", encoding="utf-8") as handle:
            return "[tool.prefect" in handle.read()
    except OSError:
        return False


def _read_toml(path: str) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # requires-python admits 3.10, which has no tomllib (pyproject's dependency on tomli)
        import tomli as tomllib

    try:
        with open(os.path.expanduser(path), "rb") as handle:
            return tomllib.load(handle)
    except (OSError, ValueError):
        return {}


def _profile_api_url() -> str | None:
    """PREFECT_API_URL of the active profile, resolved as Prefect 3's ``ProfileSettingsTomlLoader`` does it
    (``prefect/settings/sources.py``): the profiles file is ``PREFECT_PROFILES_PATH``, else
    ``$PREFECT_HOME/profiles.toml``, else ``~/.prefect/profiles.toml`` when it exists, else the bundled one;
    the active profile is ``PREFECT_PROFILE`` or the file's ``active``; a missing file or profile means the
    bundled default profile (``ephemeral``: no URL). A test for each case compares with Prefect itself."""
    spec = importlib.util.find_spec("prefect")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    bundled_path = os.path.join(next(iter(spec.submodule_search_locations)), "settings", "profiles.toml")
    test_mode = (
        "PREFECT_TEST_MODE",
        "PREFECT_UNIT_TEST_MODE",
        "PREFECT_TESTING_UNIT_TEST_MODE",
        "PREFECT_TESTING_TEST_MODE",
    )
    if any(os.environ.get(name) for name in test_mode):
        path = bundled_path
    elif os.environ.get("PREFECT_PROFILES_PATH"):
        path = os.environ["PREFECT_PROFILES_PATH"]
    elif os.environ.get("PREFECT_HOME"):
        path = os.path.join(os.environ["PREFECT_HOME"], "profiles.toml")
    else:
        home_file = os.path.expanduser("~/.prefect/profiles.toml")
        path = home_file if os.path.exists(home_file) else bundled_path
    bundled = _read_toml(bundled_path)
    default = bundled.get("profiles", {}).get(bundled.get("active", "ephemeral"), {})
    data = _read_toml(path) if os.path.exists(path) else None
    if data is None:
        profile = default
    else:
        active = os.environ.get("PREFECT_PROFILE") or data.get("active")
        profiles = data.get("profiles", {})
        profile = profiles[active] if active and active in profiles else default
    value = profile.get("PREFECT_API_URL")
    return str(value) if value else None


def prefect_backend(mode: str = "auto") -> str:
    """``"server"``, ``"embedded"`` or ``"none"``: whether (and where) a CLI run goes through Prefect.

    ``auto``: a configured server (``PREFECT_API_URL``, the active profile) when one is configured -- it is
    used if it answers, else the embedded one, as before -- and no Prefect at all when none is configured:
    the command then calls the same ``pipeline`` functions the flow's tasks call, in this process. An
    embedded server costs ~6 CPU-s and several seconds of wall time per call (measured with
    ``benchmarks/fixed_cost.py``) and records the run only in a local SQLite database. ``embedded``: always
    a temporary server (the behaviour before; records every run). ``off``: never Prefect.
    """
    if mode not in PREFECT_MODES:
        raise ValueError(f"--prefect: expected one of {', '.join(PREFECT_MODES)}, got {mode!r}")
    if mode == "off" or (mode == "auto" and not configured_api_url()):
        return "none"
    return ensure_prefect_backend()


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


class EmbeddedServerError(TokenmillError, RuntimeError):
    """The embedded Prefect server did not start; the message says what to do instead."""


class _GuardedSubprocess:
    """``subprocess`` as Prefect's server module sees it: its uvicorn child runs under ``flows.server_guard``."""

    def __getattr__(self, name: str):
        return getattr(subprocess, name)

    @staticmethod
    def Popen(args, *rest, **kwargs):  # stands in for subprocess.Popen
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
    server.subprocess = _GuardedSubprocess()  # type: ignore[assignment]  # a stand-in module: Prefect has no hook
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

    server.SubprocessASGIServer.start = start_with_retry  # type: ignore[method-assign]  # Prefect has no retry hook


def repo_root() -> str:
    """The checkout that holds ``configs/`` (tokenmill runs from a checkout or an editable install)."""
    from pipeline.fingerprint import PACKAGE_ROOT

    return str(PACKAGE_ROOT)
