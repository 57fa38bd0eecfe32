"""A two-node Ray cluster on this host (.ci/ray_cluster.sh, token authentication on) runs the README's "Scaling
out" commands: the kept documents and the shards are byte-identical to a local run, also when the driver is
killed (SIGKILL) mid-run and the same command is run once more; the workers' CPU and peak memory are in the
run's report.

Skipped, with the reason shown (``-rs``), where ray is not installed or the cluster does not start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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

pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[dev]')")


@pytest.fixture(scope="module")
def ray_env(tmp_path_factory: pytest.TempPathFactory):
    state = tmp_path_factory.mktemp("ray")
    script = REPO / ".ci" / "ray_cluster.sh"
    env = {**os.environ, "RAY": str(Path(sys.executable).with_name("ray"))}
    started = subprocess.run([str(script), "start", str(state)], capture_output=True, text=True, env=env, timeout=180)
    if started.returncode != 0:
        subprocess.run([str(script), "stop", str(state)], capture_output=True, env=env, timeout=60)
        pytest.skip(f"the Ray cluster did not start: {(started.stderr or started.stdout).strip()[-500:]}")
    exports = [line.removeprefix("export ").split("=", 1) for line in (state / "env").read_text().splitlines()]
    yield dict(exports)
    subprocess.run([str(script), "stop", str(state)], capture_output=True, env=env, timeout=60)


def test_a_ray_run_killed_mid_dedup_finishes_on_one_rerun_as_the_local_run(
    tmp_path: Path, engine_crawl: Path, local_outputs, ray_env: dict[str, str]
) -> None:
    ray = {"address": "auto", "cpus_per_task": 1, "mem_per_cpu_gb": 0.5}
    recipe = engine_recipe(tmp_path, engine_crawl, "ray", {"kind": "ray", "ray": ray})

    # the driver is killed when its second stage (dedup's signatures, after curation) starts its ranks
    env = {**os.environ, **ray_env}
    pipes = {"stderr": subprocess.PIPE, "stdout": subprocess.DEVNULL, "text": True}
    driver = subprocess.Popen(curate_command(recipe), env=env, **pipes)
    starts = 0
    for line in driver.stderr:
        starts += "Will run pipeline on" in line
        if starts == 2:
            driver.send_signal(signal.SIGKILL)
            break
    driver.wait(timeout=60)
    assert driver.returncode == -signal.SIGKILL, "the run ended before its dedup stage started"
    assert not (run_dir(recipe) / "report.json").exists()

    curate_and_tokenize(recipe, ray_env)  # the same command once more, then tokenize on the cluster
    assert outputs(run_dir(recipe)) == local_outputs
    usage = workers(run_dir(recipe))
    assert usage["cpu_s"] > 0 and usage["peak_rss_mb"] > 0
    assert {"stages/curate/web/logs", "stages/dedup/logs/signatures"} <= set(usage["steps"])
