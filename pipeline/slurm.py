"""datatrove's Slurm executor, made to behave like a local run: submit, wait, check every rank, fail loudly.

datatrove's ``SlurmPipelineExecutor.run()`` returns as soon as ``sbatch`` does. A tokenmill command runs its
stages in sequence (curate → dedup's four steps → report; tokenize's encode → mix), each reading what the one
before wrote, so returning early made the next stage read an empty folder and pin it (issue 20). Each stage
here **waits**: it submits the job array and datatrove's merge-stats job, polls ``squeue`` until both have left
the queue, then reads datatrove's ``completions/`` markers — the authority, since ``sacct`` needs an accounting
daemon many clusters (and the CI's) do not run. Why waiting and not ``depends=`` chaining: tokenmill decides
between stages in the driver (dedup's plan reads the curated files' list; tokenize sizes its ranks by its input
files; a stage is skipped when its fingerprint matches), which a chain submitted up front cannot do; the
driver is one cheap process on the login node (docs/cluster.md).

A rank that did not finish (failed, cancelled, timed out, node lost) stops the command with
``pipeline.ranks.RankFailed``: one
line naming the rank and its log; the same command resumes (datatrove skips completed ranks). The jobs a
driver submitted are written to ``<logging_dir>/slurm_jobs.json``: a rerun whose previous driver was killed
waits for those jobs instead of submitting the same ranks a second time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import time

from datatrove.executor import SlurmPipelineExecutor
from datatrove.executor.slurm import launch_slurm_job

from pipeline.errors import TokenmillError
from pipeline.ranks import check_ranks, incomplete_ranks
from pipeline.redact import save_executor_json
from pipeline.usage import RecordsUsage

log = logging.getLogger("tokenmill.slurm")
JOBS_FILE = "slurm_jobs.json"


class SlurmError(TokenmillError, RuntimeError):
    """``sbatch``/``squeue`` failed (the message is Slurm's own line)."""


def _slurm(*args: str) -> str:
    try:
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError as exc:
        raise SlurmError(f"{args[0]} not found: executor.kind slurm needs the Slurm client tools on PATH") from exc
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()
        raise SlurmError(f"{' '.join(args[:2])} failed: {detail[-1] if detail else f'exit {exc.returncode}'}") from exc


def queued(job_ids: list[str]) -> list[str]:
    """Which of ``job_ids`` (array tasks included) are still pending or running."""
    if not job_ids:
        return []
    try:
        out = _slurm("squeue", "-h", "-o", "%i %T", "-j", ",".join(job_ids))
    except SlurmError as exc:
        if "Invalid job id" in str(exc):  # every one of them has left the queue (and slurmctld's memory)
            return []
        raise
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def wait_for(job_ids: list[str], poll_s: float = 0.5, max_poll_s: float = 10.0) -> None:
    """Block until none of ``job_ids`` is queued. Polling backs off to ``max_poll_s``: one ``squeue`` call every
    10 s is nothing for slurmctld, and a stage's ranks take minutes on a real cluster."""
    failures = 0
    while True:
        try:
            if not queued(job_ids):
                return
            failures = 0
        except SlurmError:  # slurmctld busy or restarting: the jobs run on; give up after ~2 minutes of errors
            failures += 1
            if failures * max_poll_s > 120:
                raise
        time.sleep(poll_s)
        poll_s = min(max_poll_s, poll_s * 1.5)


class WaitingSlurmExecutor(RecordsUsage, SlurmPipelineExecutor):
    """``SlurmPipelineExecutor`` whose ``run()`` on the submitting side returns when every rank has ended."""

    merge_job_id: str | None = None

    def save_executor_as_json(self, indent: int = 4) -> None:
        save_executor_json(self, indent)  # names no file holding a value (pipeline.redact), as local runs

    def get_launch_file_contents(self, sbatch_args: dict, run_script: str) -> str:
        # the array tasks load executor.pik only if it is still the file written here (pipeline.slurm_launch)
        pickled = self.logging_dir.resolve_paths("executor.pik")
        plain = f"launch_pickled_pipeline {pickled}"
        if plain in run_script:
            with self.logging_dir.open("executor.pik", "rb") as handle:
                digest = hashlib.sha256(handle.read()).hexdigest()
            run_script = run_script.replace(plain, f"python -m pipeline.slurm_launch {pickled} {digest}")
        return super().get_launch_file_contents(sbatch_args, run_script)

    def launch_merge_stats(self) -> None:
        # datatrove's own call, keeping the job id so that it can be waited for (or cancelled when it never can run)
        directives = {"cpus-per-task": 1, "mem-per-cpu": "1G", "dependency": f"afterok:{self.job_id}"}
        stats = self.logging_dir.resolve_paths("stats")
        command = f"merge_stats {stats} -o {self.logging_dir.resolve_paths('stats.json')}"
        contents = self.get_launch_file_contents({**self.get_sbatch_args(), **directives}, command)
        self.merge_job_id = launch_slurm_job(contents, self.job_id_retriever)

    def run(self) -> None:
        if "SLURM_ARRAY_TASK_ID" in os.environ:  # inside an array task: run the rank (datatrove's path)
            return super().run()
        earlier = self._recorded_jobs()
        if queued(earlier):  # a previous driver of this stage was killed; its jobs are still running
            log.info("waiting for slurm jobs %s submitted by an earlier run", ", ".join(earlier))
            self._wait(earlier)
        jobs = self._submit()
        if jobs:
            self._wait(jobs)
        self._check_ranks()

    def _recorded_jobs(self) -> list[str]:
        if not self.logging_dir.isfile(JOBS_FILE):
            return []
        with self.logging_dir.open(JOBS_FILE, "r") as handle:
            return [str(j) for j in json.load(handle)]

    def _submit(self) -> list[str]:
        try:
            self.launch_job()
        except subprocess.CalledProcessError as exc:  # sbatch refused the script (partition, limits, ...)
            message = f"sbatch failed for {self.job_name} (exit {exc.returncode}); Slurm's message is above"
            raise SlurmError(message) from exc
        except FileNotFoundError as exc:
            raise SlurmError("sbatch not found: executor.kind slurm needs the Slurm client tools on PATH") from exc
        if self.job_id == -1:  # every rank already complete: nothing submitted
            return []
        jobs = [str(self.job_id)] + ([str(self.merge_job_id)] if self.merge_job_id else [])
        with self.logging_dir.open(JOBS_FILE, "w") as handle:
            json.dump(jobs, handle)
        log.info("slurm job %s (%s): %d ranks submitted; waiting", self.job_id, self.job_name, self.tasks)
        return jobs

    def _wait(self, jobs: list[str]) -> None:
        try:
            array = jobs[:1]
            wait_for(array)
            if jobs[1:] and self._incomplete():  # the merge job waits on afterok: it would stay pending for ever
                subprocess.run(["scancel", *jobs[1:]], check=False, capture_output=True)
            wait_for(jobs[1:])
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C: do not leave ranks running unsupervised
            subprocess.run(["scancel", *jobs], check=False, capture_output=True)
            raise
        # squeue failing for minutes (SlurmError) leaves the jobs running: a rerun waits for them (JOBS_FILE)

    def _incomplete(self) -> list[int]:
        return incomplete_ranks(self)

    def _check_ranks(self) -> None:
        check_ranks(self, "slurm", self._rank_log)

    def _rank_log(self, rank: int) -> str:
        """The rank's datatrove log if it got that far, else Slurm's output file of its array task (where an
        environment error such as ``launch_pickled_pipeline: No such file or directory`` lands)."""
        task_log = self.logging_dir.resolve_paths(f"logs/task_{rank:05d}.log")
        if os.path.exists(task_log):
            return task_log
        try:
            with self.logging_dir.open("ranks_to_run.json", "r") as handle:
                index = json.load(handle).index(rank)
        except (OSError, ValueError):
            return self.slurm_logs_folder
        jobs = self._recorded_jobs()
        out = os.path.join(self.slurm_logs_folder, f"{jobs[0] if jobs else self.job_id}_{index}.out")
        return out if os.path.exists(out) else f"{out} (not written: the task never started)"
