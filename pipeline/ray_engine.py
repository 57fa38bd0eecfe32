"""datatrove's Ray executor as tokenmill runs it: each rank's CPU and peak memory recorded (``pipeline.usage``),
and a stage with an unfinished rank stopped (``pipeline.ranks``). Relative paths are made absolute by the
driver (``pipeline.run.absolute_paths``): a Ray worker runs in the directory of its ``ray start``.

A module of its own because importing ``datatrove.executor.ray`` imports ray (seconds), which local and Slurm
runs never need; ``pipeline.executor`` imports it only for ``executor.kind: ray``.
"""

from __future__ import annotations

from datatrove.executor.ray import RayPipelineExecutor

from pipeline.ranks import check_ranks
from pipeline.usage import RecordsUsage


class UsageRayExecutor(RecordsUsage, RayPipelineExecutor):
    """``RayPipelineExecutor`` that fails the stage when a rank did not complete."""

    def run(self) -> None:
        super().run()  # blocks until every rank has ended (datatrove's own wait loop), then only logs a warning
        check_ranks(self, "ray")
