"""What a small run costs before any work: ranks sized to the input, no Prefect where none is configured.

No timing asserts: the tests check the number of ranks, which modules a CLI run imports, what the CLI asks of
Prefect. ``benchmarks/fixed_cost.py`` measures the CPU of the whole process tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.config import load_recipe

REPO = Path(__file__).resolve().parents[2]


def _jsonl(path: Path, count: int, text: str = "A short note that a person wrote about the weather today.") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(json.dumps({"id": f"{path.stem}-{i}", "text": f"{text} Number {i}."}) + "\n")
    return path


def _recipe(tmp_path: Path, source_path: Path, tasks: int = 8) -> Path:
    data = yaml.safe_load((REPO / "configs" / "domain.yaml").read_text())
    data["sources"] = [{"name": "notes", "kind": "auto", "path": str(source_path)}]
    data["output_dir"] = str(tmp_path / "run")
    data["executor"] = {"kind": "local", "tasks": tasks, "workers": 1}
    data["stages"]["dedup"] = None
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_one_small_file_gets_one_rank_and_a_rerun_resumes(tmp_path: Path) -> None:
    from pipeline.curate.build import curate_source
    from pipeline.run import account_all, prepare_run_dir

    recipe = load_recipe(_recipe(tmp_path, _jsonl(tmp_path / "in" / "notes.jsonl", 20), tasks=8))
    layout = prepare_run_dir(recipe)
    first = curate_source(recipe, recipe.sources[0], layout)
    logs = layout.logs("curate", "notes")
    assert sorted(os.listdir(logs / "completions")) == ["00000"]  # not 8 ranks for one file
    assert json.loads((layout.stage_dir("curate", "notes") / "fingerprint.json").read_text())["tasks"] == 1
    assert curate_source(recipe, recipe.sources[0], layout) == first  # same ranks, same fingerprint: resumed
    (account,) = account_all(recipe, layout)
    assert account.read == 20  # not read twice


def test_ranks_follow_the_files_and_never_exceed_tasks(tmp_path: Path) -> None:
    from pipeline.curate.build import source_tasks
    from pipeline.read import build_reader

    for name in ("a", "b", "c"):
        _jsonl(tmp_path / "in" / f"{name}.jsonl", 2)
    (tmp_path / "in" / "README").write_text("not an input")  # not a file the reader reads: no rank for it
    for tasks, expected in ((8, 3), (2, 2), (1, 1)):
        recipe = load_recipe(_recipe(tmp_path, tmp_path / "in", tasks=tasks))
        assert source_tasks(recipe, build_reader(recipe.sources[0])) == expected


def test_workers_auto_runs_a_small_input_in_this_process() -> None:
    from pipeline.config import ExecutorConfig
    from pipeline.executor import IN_PROCESS_BELOW_BYTES, local_workers

    auto, four = ExecutorConfig(tasks=8, workers=-1), ExecutorConfig(tasks=8, workers=4)
    assert local_workers(auto, 4, input_bytes=1000) == 1  # no pool for a small input
    assert local_workers(auto, 4, input_bytes=IN_PROCESS_BELOW_BYTES) == 4
    assert local_workers(auto, 4, input_bytes=None) == 4  # size unknown: every rank at once, as before
    assert local_workers(four, 8, input_bytes=1000) == 4  # workers the recipe names are kept
    assert local_workers(four, 2, input_bytes=None) == 2


def _outputs(root: Path) -> dict[str, bytes]:
    import gzip

    return {
        str(p.relative_to(root)): gzip.decompress(p.read_bytes())
        for folder in ("curated", "dropped")
        for p in sorted((root / folder).glob("**/*.jsonl.gz"))
    }


def test_ranks_in_this_process_write_what_a_pool_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    import pipeline.executor as executor
    from pipeline.curate.build import curate_source
    from pipeline.run import prepare_run_dir
    from sample.domain import build_domain

    docs = build_domain(random.Random(0), 12)[:12]
    for i, name in enumerate("abc"):
        with open(_jsonl(tmp_path / "in" / f"{name}.jsonl", 0), "w", encoding="utf-8") as handle:
            for doc in docs[i::3]:
                handle.write(json.dumps({"id": doc.relpath, "text": doc.content}) + "\n")
    _jsonl(tmp_path / "in" / "d.jsonl", 2, text="x")  # too short for the quality rules: drop rows too
    written = {}
    for mode, threshold in (("in-process", executor.IN_PROCESS_BELOW_BYTES), ("pool", 0)):
        monkeypatch.setattr(executor, "IN_PROCESS_BELOW_BYTES", threshold)
        (tmp_path / mode).mkdir()
        data = yaml.safe_load(_recipe(tmp_path / mode, tmp_path / "in").read_text())
        data["executor"]["workers"] = -1
        (tmp_path / mode / "recipe.yaml").write_text(yaml.safe_dump(data))
        recipe = load_recipe(tmp_path / mode / "recipe.yaml")
        layout = prepare_run_dir(recipe)
        curate_source(recipe, recipe.sources[0], layout)
        written[mode] = _outputs(layout.root)
        ranks = json.loads((layout.logs("curate", "notes") / "executor.json").read_text())
        assert ranks["workers"] == (1 if mode == "in-process" else 4)
    assert {name.split("/")[0] for name in written["pool"]} == {"curated", "dropped"}
    assert written["in-process"] == written["pool"]


def test_a_saved_dataset_keeps_its_ranks(tmp_path: Path) -> None:
    """``save_to_disk`` datasets are split by rows, not files: every configured rank has work."""
    from datasets import Dataset

    from pipeline.curate.build import source_tasks
    from pipeline.read import build_reader

    Dataset.from_dict({"text": [f"row {i}" for i in range(10)]}).save_to_disk(str(tmp_path / "ds"))
    recipe = load_recipe(_recipe(tmp_path, tmp_path / "ds", tasks=4))
    assert source_tasks(recipe, build_reader(recipe.sources[0])) == 4


def test_dedup_ranks_default_to_at_most_one_per_file(tmp_path: Path) -> None:
    from pipeline.dedup.config import DedupConfig
    from pipeline.dedup.io import DedupInput
    from pipeline.dedup.run import plan_dedup

    _jsonl(tmp_path / "in" / "a.jsonl", 3)
    _jsonl(tmp_path / "in" / "b.jsonl", 3)
    source = DedupInput.dataset(str(tmp_path / "in"), "notes")
    assert plan_dedup(source, str(tmp_path / "o1"), DedupConfig(), tasks=8).tasks == 2  # the recipe's 8: capped
    assert plan_dedup(source, str(tmp_path / "o2"), DedupConfig(tasks=3)).tasks == 3  # an explicit --tasks: kept


def test_prefect_backend_needs_no_prefect_when_none_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    import flows.runtime as runtime

    def no_server() -> str:
        raise AssertionError("an embedded server was started for a run that needs none")

    monkeypatch.setattr(runtime, "ensure_prefect_backend", no_server)
    monkeypatch.setattr(runtime, "configured_api_url", lambda: None)
    assert runtime.prefect_backend("auto") == "none"
    assert runtime.prefect_backend("off") == "none"
    monkeypatch.setattr(runtime, "ensure_prefect_backend", lambda: "embedded")
    assert runtime.prefect_backend("embedded") == "embedded"
    monkeypatch.setattr(runtime, "configured_api_url", lambda: "http://127.0.0.1:4200/api")
    assert runtime.prefect_backend("auto") == "embedded"  # configured but (here) not answering: as before
    with pytest.raises(ValueError):
        runtime.prefect_backend("sometimes")


def _prefect_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
    env.update({"PREFECT_HOME": str(home), "PYTHONPATH": str(REPO)})
    env.pop("PREFECT_PROFILES_PATH", None)
    return env


MINE = '[profiles.mine]\nPREFECT_API_URL = "http://10.1.2.3:4200/api"\n'


@pytest.mark.parametrize(
    ("profiles", "profile_env"),
    [
        (None, None),  # no profiles file: Prefect's bundled "ephemeral" profile, no URL
        (None, "local"),  # no file under PREFECT_HOME: Prefect ignores PREFECT_PROFILE too
        ('active = "local"\n', None),  # a profile the file does not define: the bundled default
        ('active = "mine"\n' + MINE, None),
        ('active = "ephemeral"\n' + MINE, "mine"),  # PREFECT_PROFILE wins over the file's active
    ],
)
def test_the_profile_url_is_read_as_prefect_reads_it(tmp_path: Path, profiles: str | None, profile_env) -> None:
    home = tmp_path / "prefect"
    home.mkdir()
    if profiles is not None:
        (home / "profiles.toml").write_text(profiles)
    env = _prefect_env(home)
    if profile_env:
        env["PREFECT_PROFILE"] = profile_env
    probe = (
        "import sys; from flows.runtime import configured_api_url; url = configured_api_url(); "
        "assert 'prefect' not in sys.modules, 'prefect was imported'; "
        "from prefect.settings import get_current_settings; print(url, get_current_settings().api.url)"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ours, prefects = done.stdout.split()
    assert ours == prefects


CLI_PROBE = """
import sys
from flows.cli import app
try:
    app(sys.argv[1:], standalone_mode=False)
finally:
    heavy = ("prefect", "torch", "transformers", "datasets", "sklearn", "scipy", "matplotlib")
    loaded = [m for m in heavy if m in sys.modules]
    print("LOADED", ",".join(loaded) or "-", file=sys.stderr)
"""


def test_cli_curate_without_a_server_starts_no_prefect_and_imports_no_torch(tmp_path: Path) -> None:
    home = tmp_path / "prefect"
    home.mkdir()
    data = _jsonl(tmp_path / "in" / "notes.jsonl", 20)
    args = ["curate", str(REPO / "configs" / "web.yaml"), "--input", str(data), "--output", str(tmp_path / "run")]
    done = subprocess.run(
        [sys.executable, "-c", CLI_PROBE, *args], cwd=tmp_path, env=_prefect_env(home), capture_output=True, text=True
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    # neither Prefect (no server, no flow engine) nor torch/transformers/datasets, nor scikit-learn or scipy (the
    # toxicity model is scored by pipeline.curate.toxicity_linear), nor matplotlib (the plots: pipeline.charts)
    assert "LOADED -" in output
    assert (tmp_path / "run" / "report.md").exists()
    assert sorted(os.listdir(tmp_path / "run" / "stages" / "curate" / "notes" / "logs" / "completions")) == ["00000"]
    assert "PIPELINE" not in output and "Traceback" not in output  # datatrove's per-rank blocks stay in the logs
    # the console contract: each stage ends with its one line, however short, even when not a terminal
    assert "curate-notes: 20 docs in " in output and "docs/s), done" in output, output
    assert "Launching pipeline" not in output
    assert not (home / "prefect.db").exists()


COMMANDS = [
    ["curate"], ["dedup"], ["tokenize"], ["shards", "inspect"], ["shards", "verify"], ["plan"], ["train"],
    ["generate"], ["pipeline"], ["demo"], ["sample"], ["serve"],
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_flag_has_help_and_a_plain_metavar(command: list[str]) -> None:
    import re

    from typer.testing import CliRunner

    from flows.cli import app

    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert not re.search(r"<(str|int|float|bool|path|file|list\[\w+\])>", result.output)  # typer's type labels
    for line in result.output.splitlines():
        match = re.match(r"^│\s+(?:\*\s+)?(--[\w-]+)(.*)│$", line)
        if match:  # the help column: what remains once the names and the metavar are taken away
            rest = re.sub(
                r"(?:^|\s{2,})(?:-\S+|[A-Z][A-Z0-9=_\[\]/:.]*|\[default: [^\]]*\]|\[x>=\d+\])(?=\s{2,}|$)",
                " ",
                match.group(2),
            )
            assert rest.strip(), f"{' '.join(command)} {match.group(1)}: no help text"


def test_tokenize_ranks_never_exceed_its_input_files(tmp_path: Path) -> None:
    """A recipe's executor factory gets ``tasks`` capped at the input files, like the default executor."""
    from datatrove.executor import LocalPipelineExecutor

    from pipeline.tokenize import run_tokenize
    from pipeline.tokenize.config import TokenizeConfig

    _jsonl(tmp_path / "in" / "notes.jsonl", 30)
    asked: list[int] = []

    def factory(pipeline: list, logging_dir: str, tasks: int):
        asked.append(tasks)
        return LocalPipelineExecutor(pipeline, tasks=tasks, workers=1, logging_dir=logging_dir, skip_completed=False)

    config = TokenizeConfig(vocab_size=300, tasks=8, workers=1, heldout_share=0.0)
    run_tokenize(tmp_path / "in" / "notes.jsonl", tmp_path / "shards", config, executor_factory=factory)
    assert asked and set(asked) == {1}
