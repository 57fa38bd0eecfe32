"""datatrove's ``LocalPipelineExecutor``, with pool workers that die with the run (``pipeline.orphans``).

datatrove runs ranks in a ``multiprocess`` forkserver pool: the workers are forked by the forkserver, not by
the command, so the command's at-fork guard (``pipeline.orphans.guard_forks``) never runs in them. Measured
on main ``b7eca32``: after ``kill -9`` of ``tokenmill dedup`` a rank worker kept running for 90 s. Here each
worker, before its first rank, starts ``exit_with_parent``: the forkserver exits as soon as the command's
end of its pipe closes, the worker's parent changes, and the worker ends within a second or two (a poll, no
``PR_SET_PDEATHSIG``: that one fires when the forking *thread* exits, see ``pipeline.orphans``).

A rank run in the command's own process (one worker) needs nothing.
"""

from __future__ import annotations

import os
from typing import Any

from datatrove.executor import LocalPipelineExecutor

from pipeline.orphans import exit_with_parent

_watching: list[int] = []  # the pid whose watcher runs (a forked worker inherits the list, not the thread)


class GuardedLocalExecutor(LocalPipelineExecutor):
    """``LocalPipelineExecutor`` whose pool workers exit when the run's process tree is gone (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.owner_pid = os.getpid()

    def _launch_run_for_rank(self, rank: int, ranks_q, completed=None, completed_lock=None):
        if os.getpid() != self.owner_pid and os.getpid() not in _watching:
            _watching[:] = [os.getpid()]
            exit_with_parent()
        return super()._launch_run_for_rank(rank, ranks_q, completed, completed_lock)


__all__ = ["GuardedLocalExecutor"]
