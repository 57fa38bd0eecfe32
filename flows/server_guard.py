"""Run Prefect's embedded server (uvicorn) so that it exits when the tokenmill process that started it dies.

``python -m flows.server_guard PARENT_PID UVICORN_ARGS…``. Prefect starts the embedded server as a child
process and stops it from an ``atexit`` hook, which never runs when the CLI is killed with SIGKILL: the
server (and its SQLite handle) then outlived every run. Linux's ``PR_SET_PDEATHSIG`` fires when the
*thread* that forked the child exits, and Prefect may start the server from a short-lived thread, so the
guard watches for re-parenting instead (``pipeline.orphans.exit_with_parent``): once the parent is gone it
asks uvicorn to shut down (SIGTERM) and exits hard if that takes longer.
"""

from __future__ import annotations

import runpy
import sys

from pipeline.orphans import exit_with_parent


def main(argv: list[str]) -> None:
    exit_with_parent(parent=int(argv[0]))  # the CLI that started Prefect's server, not whoever adopts us
    sys.argv = ["uvicorn", *argv[1:]]
    runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
