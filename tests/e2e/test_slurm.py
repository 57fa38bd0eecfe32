"""A two-node Slurm cluster on this host (.ci/slurm_cluster.sh) runs the README's "Scaling out" commands: the
kept documents and the shards are byte-identical to a local run, and a job cancelled mid-run (``scancel``)
ends the command with one line naming the rank and its log, exit 2; the same command then finishes it.

Skipped, with the reason shown (``-rs``), where slurm-wlm and munge are not installed or not root.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.engines import (
    REPO,
    curate_and_tokenize,
    curate_command,
    engine_recipe,
    outputs,
    run_dir,
    workers,
)


@pytest.fixture(scope="module")
def slurm_env(tmp_path_factory: pytest.TempPathFactory):
    missing = [tool for tool in ("munged", "slurmctld", "slurmd", "sbatch", "squeue") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)} missing): apt-get install -y slurm-wlm munge")
    if os.geteuid() != 0:
        pytest.skip("the one-host Slurm cluster needs root (slurmd starts jobs as their user)")
    state = tmp_path_factory.mktemp("slurm")
    script = REPO / ".ci" / "slurm_cluster.sh"
    started = subprocess.run([str(script), "start", str(state)], capture_output=True, text=True, timeout=120)
    if started.returncode != 0:
        subprocess.run([str(script), "stop", str(state)], capture_output=True, timeout=60)
        pytest.skip(f"the Slurm cluster did not start: {(started.stderr or started.stdout).strip()[-500:]}")
    yield {"SLURM_CONF": str(state / "slurm.conf")}
    subprocess.run([str(script), "stop", str(state)], capture_output=True, timeout=60)


def test_a_cancelled_slurm_run_fails_in_one_line_then_one_rerun_matches_the_local_run(
    tmp_path: Path, engine_crawl: Path, local_outputs, slurm_env: dict[str, str]
) -> None:
    slurm = {"partition": "debug", "time": "00:10:00", "mem_per_cpu_gb": 1}
    recipe = engine_recipe(tmp_path, engine_crawl, "slurm", {"kind": "slurm", "slurm": slurm})

    # submit, and cancel the first job array the moment sbatch has accepted it (read from the driver's log)
    env = {**os.environ, **slurm_env}
    pipes = {"stderr": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    driver = subprocess.Popen(curate_command(recipe), env=env, **pipes)
    job = None
    for line in driver.stderr:
        found = re.search(r"Slurm job launched successfully with \(last\) id=(\d+)", line)
        if found:
            job = found.group(1)
            subprocess.run(["scancel", job], env=env, check=True)
            break
    _, rest = driver.communicate(timeout=180)
    assert job is not None, "the driver never submitted a job"
    assert driver.returncode == 2
    error = [line for line in rest.splitlines() if line.startswith("error:")]
    assert len(error) == 1, rest[-2000:]
    assert re.search(r"slurm curate-web: rank \d did not finish .* log: \S+", error[0])
    assert "Traceback" not in rest and "balanced" not in rest

    curate_and_tokenize(recipe, slurm_env)  # the same commands again: resume, then tokenize on the cluster
    assert outputs(run_dir(recipe)) == local_outputs
    usage = workers(run_dir(recipe))
    assert usage["cpu_s"] > 0 and usage["peak_rss_mb"] > 0 and set(usage["hosts"]) <= {"n1", "n2"}
    assert any(step.startswith("shards/logs/encode_") for step in usage["steps"])  # tokenize's ranks ran there too
