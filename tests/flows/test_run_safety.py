"""No command deletes what it did not create: ``--overwrite`` and the tokenize output folder."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
import yaml

from pipeline.config import CurationRecipe
from pipeline.layout import RunDirError, RunLayout
from pipeline.run import prepare_run_dir
from pipeline.tokenize.config import TokenizeConfig
from tests.helpers.processes import descendants
from tests.helpers.tokenize import write_run


def recipe_into(output: Path, data: Path) -> CurationRecipe:
    data.mkdir(parents=True, exist_ok=True)
    (data / "a.txt").write_text("some text\n", encoding="utf-8")
    return CurationRecipe.model_validate(
        {"name": "t", "output_dir": str(output), "sources": [{"name": "d", "kind": "folder", "path": str(data)}]}
    )


def test_overwrite_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    output = tmp_path / "mine"
    (output / "important").mkdir(parents=True)
    (output / "important" / "data.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(RunDirError, match="tokenmill did not create it"):
        prepare_run_dir(recipe_into(output, tmp_path / "in"), overwrite=True)
    assert (output / "important" / "data.txt").read_text(encoding="utf-8") == "keep me"
    assert not (output / "config.yaml").exists()


def test_overwrite_of_a_run_removes_only_what_runs_write(tmp_path: Path) -> None:
    output = tmp_path / "run"
    recipe = recipe_into(output, tmp_path / "in")
    layout = prepare_run_dir(recipe)
    layout.curated("d").mkdir(parents=True)
    (layout.curated("d") / "00000.jsonl.gz").write_bytes(b"x")
    layout.report_md.write_text("old report", encoding="utf-8")
    (output / "notes.txt").write_text("the user's own notes", encoding="utf-8")
    assert layout.is_run()

    again = prepare_run_dir(recipe, overwrite=True)
    assert not again.curated().exists() and not again.report_md.exists()
    assert (output / "notes.txt").read_text(encoding="utf-8") == "the user's own notes"
    assert again.is_run()  # the fresh config.yaml was written after the clear


def test_overwrite_of_a_new_or_empty_folder_just_creates_the_run(tmp_path: Path) -> None:
    for output in (tmp_path / "new", tmp_path / "empty"):
        if output.name == "empty":
            output.mkdir()
        assert prepare_run_dir(recipe_into(output, tmp_path / "in"), overwrite=True).is_run()


def test_an_edited_config_is_not_taken_for_a_run(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("name: my own config\n", encoding="utf-8")
    assert not RunLayout.at(tmp_path).is_run()
    with pytest.raises(RunDirError):
        RunLayout.at(tmp_path).clear()
    assert (tmp_path / "config.yaml").exists()


def test_tokenize_keeps_logs_it_did_not_write_and_reruns_into_its_own_output(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    write_run(tmp_path / "run", {"web": 30}, seed=4, files=1)
    config = TokenizeConfig(vocab_size=300, tasks=1, workers=1, heldout_share=0.1, seed=1)
    foreign = tmp_path / "out"
    (foreign / "logs").mkdir(parents=True)
    (foreign / "logs" / "app.log").write_text("a user's log", encoding="utf-8")
    with pytest.raises(RunDirError, match="tokenmill did not create it"):
        run_tokenize(tmp_path / "run", foreign, config)
    assert (foreign / "logs" / "app.log").read_text(encoding="utf-8") == "a user's log"

    shards = tmp_path / "shards"
    first = run_tokenize(tmp_path / "run", shards, config).raw
    assert (shards / "logs").is_dir()  # its own logs: a rerun may replace them
    second = run_tokenize(tmp_path / "run", shards, config).raw
    assert second["fingerprint"] == first["fingerprint"]


def test_curate_cli_refuses_before_prefect_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing recipe and an --overwrite of a user's folder are refused without starting Prefect."""
    from typer.testing import CliRunner

    import flows.runtime
    from flows.cli import app

    def no_prefect() -> str:
        raise AssertionError("Prefect was started for a run that had to be refused")

    monkeypatch.setattr(flows.runtime, "ensure_prefect_backend", no_prefect)
    runner = CliRunner()
    missing = runner.invoke(app, ["curate", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "recipe file not found" in missing.output

    user = tmp_path / "mine"
    (user / "important").mkdir(parents=True)
    (user / "important" / "data.txt").write_text("keep me", encoding="utf-8")
    data = tmp_path / "in.txt"
    data.write_text("Some text a person wrote.\n", encoding="utf-8")
    recipe = Path(__file__).parents[2] / "configs" / "domain.yaml"
    args = ["curate", str(recipe), "--input", str(data), "--output", str(user), "--overwrite"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "refusing to write into" in refused.output
    assert (user / "important" / "data.txt").read_text(encoding="utf-8") == "keep me"

    pipeline_missing = runner.invoke(app, ["pipeline", str(tmp_path / "nope.yaml")])
    assert pipeline_missing.exit_code == 2 and "recipe file not found" in pipeline_missing.output


GUARDED_PARENT = """
import sys
from flows.runtime import ensure_prefect_backend
ensure_prefect_backend()
from prefect.server.api.server import SubprocessASGIServer
server = SubprocessASGIServer()
server.start()
print(server.server_process.pid, flush=True)
sys.stdin.read()
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in handle)
    except FileNotFoundError:
        return False


def test_embedded_server_dies_with_a_killed_cli(tmp_path: Path) -> None:
    """kill -9 of the process that started the embedded Prefect server leaves no server behind."""
    import os
    import select
    import signal
    import subprocess
    import sys

    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": ""}
    parent = subprocess.Popen(
        [sys.executable, "-c", GUARDED_PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    server_pid = None
    try:
        server_pid = int(parent.stdout.readline())
        assert _alive(server_pid)
        with open(f"/proc/{server_pid}/cmdline", "rb") as handle:
            assert b"flows.server_guard" in handle.read()
        exited = os.pidfd_open(server_pid)  # readable once the server has exited
        parent.kill()
        parent.wait()
        readable, _, _ = select.select([exited], [], [], 30)  # the guard polls each second, uvicorn gets 5 s
        os.close(exited)
        assert readable and not _alive(server_pid)
    finally:
        if parent.poll() is None:
            parent.kill()
        if server_pid is not None and _alive(server_pid):
            os.kill(server_pid, signal.SIGKILL)


def test_a_successful_curate_prints_no_traceback_even_when_the_server_is_down(tmp_path: Path) -> None:
    """The CLI falls back to the embedded server quietly: one yellow line, no Prefect tracebacks."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("A short note that a person wrote about the weather today.\n", encoding="utf-8")
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": f"http://127.0.0.1:{port}/api"}
    recipe = Path(__file__).parents[2] / "configs" / "domain.yaml"
    command = [sys.executable, "-m", "flows.cli", "curate", str(recipe), "--input", str(docs)]
    done = subprocess.run(
        [*command, "--output", str(tmp_path / "run")], capture_output=True, text=True, env=env, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "is not answering; running embedded" in output
    assert "Traceback" not in output


HOLDER = """
import sys
from pipeline.layout import RunLayout
with RunLayout.at(sys.argv[1]).lock():
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_second_run_on_one_output_is_refused_naming_the_holder(tmp_path: Path) -> None:
    import os
    import re
    import socket
    import subprocess
    import sys

    run = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        expected = rf"is being written by pid {holder.pid} on {re.escape(socket.gethostname())} \(curate, started "
        with pytest.raises(RunDirError, match=expected), RunLayout.at(run).lock():
            pass
        with pytest.raises(RunDirError, match=expected):  # the CLI's early check, which creates nothing
            RunLayout.at(run).check_unlocked()
    finally:
        holder.kill()  # kill -9: the kernel drops the flock, the file (with the dead holder) stays
        holder.wait()
    assert (run / ".tokenmill.lock").exists()
    with RunLayout.at(run).lock():  # taken over from the dead holder
        assert f'"pid": {os.getpid()}' in (run / ".tokenmill.lock").read_text(encoding="utf-8")
        with RunLayout.at(run).lock():  # re-entrant in one process
            pass
        assert (run / ".tokenmill.lock").exists()
    assert not (run / ".tokenmill.lock").exists()
    RunLayout.at(run).check_unlocked()
    RunLayout.at(tmp_path / "never-made").check_unlocked()
    assert not (tmp_path / "never-made").exists()


def test_the_curate_flow_holds_the_lock(tmp_path: Path, prefect_harness) -> None:
    """A curate flow into a folder another run holds fails at once and writes nothing."""
    import subprocess
    import sys

    from flows.curate import curate

    run = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        recipe = recipe_into(run, tmp_path / "in")
        path = tmp_path / "recipe.yaml"
        path.write_text(yaml.safe_dump(recipe.model_dump(mode="json")), encoding="utf-8")
        with pytest.raises(RunDirError, match="is being written by pid"):
            curate(str(path))
        assert sorted(p.name for p in run.iterdir()) == [".tokenmill.lock"]
    finally:
        holder.kill()
        holder.wait()


def test_kill_9_of_a_curate_run_leaves_no_process_behind(tmp_path: Path) -> None:
    """SIGKILL of `tokenmill curate` mid-run: every process it started (ranks, pool, sandboxes) exits too."""
    import select
    import signal
    import subprocess
    import sys
    import time

    from sample import generate_sample

    generate_sample(tmp_path / "s", seed=2, pages=600, warc_files=3, domain_docs=2)
    recipe = Path(__file__).parents[2] / "configs" / "web.yaml"
    command = [sys.executable, "-m", "flows.cli", "curate", str(recipe), "--input", str(tmp_path / "s" / "crawl")]
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    env.pop("PREFECT_API_URL", None)
    cli = subprocess.Popen(
        [*command, "--output", str(tmp_path / "run")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        # the input is small, so its 3 ranks run one after the other in the command, each with its extraction
        # sandbox: the second sandbox is mid-way (a rank and dedup still to come)
        while len(seen) < 2 and cli.poll() is None and time.monotonic() < deadline:
            seen |= descendants(cli.pid)
            time.sleep(0.05)
        assert len(seen) >= 2 and cli.poll() is None, "the run ended before it could be killed mid-way"
        seen |= descendants(cli.pid)
        handles = {}
        for pid in seen:
            with contextlib.suppress(ProcessLookupError):
                handles[pid] = os.pidfd_open(pid)
        cli.kill()
        cli.wait()
        for pid, fd in handles.items():  # each becomes readable when that process has exited
            readable, _, _ = select.select([fd], [], [], 30)
            os.close(fd)
            assert readable or not _alive(pid), f"process {pid} outlived the killed run"
        RunLayout.at(tmp_path / "run").check_unlocked()  # and no orphan keeps the run's lock
    finally:
        for pid in seen:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
