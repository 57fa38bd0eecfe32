"""Thin Prefect flows and the ``tokenmill`` CLI.

Importing this package switches telemetry off before Prefect is imported anywhere: tokenmill never
reaches the network at run time (no analytics, no model or dataset hub).
"""

import os

for _key, _value in {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
}.items():
    os.environ.setdefault(_key, _value)
