"""Run Prefect's embedded server (uvicorn) so that it exits when the tokenmill process that started it dies.

``python -m flows.server_guard PARENT_PID UVICORN_ARGS…``. Prefect starts the embedded server as a child
process and stops it from an ``atexit`` hook, which never runs when the CLI is killed with SIGKILL: the
server (and its SQLite handle) then outlived every run. Linux's ``PR_SET_PDEATHSIG`` fires when the
*thread* that forked the child exits, and Prefect may start the server from a short-lived thread, so the
guard watches for re-parenting instead: once the parent is gone it asks uvicorn to shut down (SIGTERM) and
exits hard if that takes longer than ``GRACE_S``.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import time

POLL_S = 1.0
GRACE_S = 5.0


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(GRACE_S)
    os._exit(1)


def main(argv: list[str]) -> None:
    parent = int(argv[0])
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-guard").start()
    sys.argv = ["uvicorn", *argv[1:]]
    runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
