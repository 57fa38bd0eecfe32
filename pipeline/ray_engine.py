"""datatrove's Ray executor with each rank's CPU and peak memory recorded (``pipeline.usage``).

A module of its own because importing ``datatrove.executor.ray`` imports ray (seconds), which local and Slurm
runs never need; ``pipeline.executor`` imports it only for ``executor.kind: ray``.
"""

from __future__ import annotations

from datatrove.executor.ray import RayPipelineExecutor

from pipeline.usage import RecordsUsage


class UsageRayExecutor(RecordsUsage, RayPipelineExecutor):
    """``RayPipelineExecutor``; ``run()`` already blocks until every rank has ended (datatrove's own loop)."""
