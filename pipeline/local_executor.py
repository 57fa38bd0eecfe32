"""datatrove's ``LocalPipelineExecutor``, with pool workers that die with the run (``pipeline.orphans``).

datatrove runs ranks in a ``multiprocess`` forkserver pool: the workers are forked by the forkserver, not by
the command, so the command's at-fork guard (``pipeline.orphans.guard_forks``) never runs in them. Measured
on main ``b7eca32``: after ``kill -9`` of ``tokenmill dedup`` a rank worker kept running for 90 s. Here each
worker, before its first rank, starts ``exit_with_parent``: the forkserver exits as soon as the command's
end of its pipe closes, the worker's parent changes, and the worker ends within a second or two (a poll, no
``PR_SET_PDEATHSIG``: that one fires when the forking *thread* exits, see ``pipeline.orphans``).

A rank run in the command's own process (one worker) needs nothing, and gets no ``multiprocess`` manager either:
datatrove starts one (a server process and a connection per proxy) for its queue of local ranks whatever the
number of workers; with one worker the queue never leaves this process, so a ``queue.Queue`` serves (~14 CPU-ms
per executor run, six runs in a curate run with dedup). Pool runs keep datatrove's manager.
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Any

import multiprocess
from datatrove.executor import LocalPipelineExecutor
from datatrove.executor import local as datatrove_local

from pipeline.orphans import exit_with_parent

_watching: list[int] = []  # the pid whose watcher runs (a forked worker inherits the list, not the thread)
_in_process = threading.local()  # set while this thread runs an executor's ranks in this process


class _QueueManager:
    """What datatrove's one-worker ``run`` asks of its manager: a queue, and ``shutdown``."""

    @staticmethod
    def Queue() -> queue.Queue:  # noqa: N802 - multiprocess's name
        return queue.Queue()

    def shutdown(self) -> None:
        pass


class _Multiprocess:
    """``multiprocess`` as datatrove's local executor sees it: the same module, except ``Manager`` while this
    thread runs ranks in this process (a flag per thread: a pool run in another thread keeps its manager)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(multiprocess, name)

    def Manager(self) -> Any:  # noqa: N802 - multiprocess's name
        return _QueueManager() if getattr(_in_process, "on", False) else multiprocess.Manager()


if not isinstance(datatrove_local.multiprocess, _Multiprocess):
    datatrove_local.multiprocess = _Multiprocess()


class GuardedLocalExecutor(LocalPipelineExecutor):
    """``LocalPipelineExecutor`` whose pool workers exit when the run's process tree is gone (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.owner_pid = os.getpid()

    def run(self) -> Any:
        # set for this run's own manager; a dependency run (``depends``) inside it sets its own and restores this
        before = getattr(_in_process, "on", False)
        _in_process.on = self.workers == 1
        try:
            return super().run()
        finally:
            _in_process.on = before

    def _launch_run_for_rank(self, rank: int, ranks_q, completed=None, completed_lock=None):
        if os.getpid() != self.owner_pid and os.getpid() not in _watching:
            _watching[:] = [os.getpid()]
            exit_with_parent()
        return super()._launch_run_for_rank(rank, ranks_q, completed, completed_lock)


__all__ = ["GuardedLocalExecutor"]
