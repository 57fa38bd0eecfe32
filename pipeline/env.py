"""The offline, telemetry-free environment every tokenmill entry point runs in (one home for it), with logs
that print no document text.

tokenmill never reaches the network at run time: no analytics, no model or dataset hub. The variables are
set with ``setdefault`` so that a caller's explicit choice wins. ``offline()`` must run before Prefect or the
Hugging Face libraries are imported, which is why the CLI package, the training entry point, the benchmark
scripts and the test suite call it first. The Makefile exports the same names for the processes it starts.
"""

from __future__ import annotations

import os

OFFLINE_ENV = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
    # loguru's diagnose mode prints every frame's variables in a traceback: the text of the document a rank
    # failed on (docs/pii.md); read when loguru is imported, so it is set here, before datatrove is
    "LOGURU_DIAGNOSE": "NO",
}


def offline() -> None:
    """Switch telemetry and hub access off for this process and its children (unless already set)."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
