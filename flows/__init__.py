"""Thin Prefect flows and the ``tokenmill`` CLI.

Importing this package switches telemetry off before Prefect is imported anywhere: tokenmill never
reaches the network at run time (no analytics, no model or dataset hub).
"""

from pipeline.env import offline

offline()
