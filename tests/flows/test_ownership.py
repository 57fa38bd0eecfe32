"""No command deletes or overwrites what it did not write (issue 19 item 1, cases D1 and D2).

Each test plants a user's files in a folder given as ``--output`` and proves the command refuses with one
line, exit 2, and leaves every byte (and the folder's listing) as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from pipeline.layout import RunDirError
from pipeline.ownership import RECORD_NAME, claim, read_record, record_of, remove_owned

ROOT = Path(__file__).parents[2]

#: What a user might keep in a folder that looks like a run (the entries curate, dedup and tokenize write).
USER_FILES = {
    "config.yaml": "name: my own config\n",
    "report.md": "# my report\n",
    "notes.txt": "the user's own notes\n",
    "deduped/web/00000.jsonl.gz": "my deduped data",
    "top_percent/web/00000.jsonl.gz": "my selection",
    "stages/dedup/plan.json": '{"mine": true}',
    "dropped/web/dedup/00000.jsonl.gz": "my drop rows",
    "plots/lengths.png": "not really a png",
    "train/train_00000.ds": "my tokens",
    "train/train_00000.ds.index": "my index",
    "train/old.partial": "half a file",
    "heldout/web/web_00000.ds": "held-out tokens",
    "tokenizer/tokenizer.json": '{"my": "tokenizer"}',
    "tokenizer/tokenizer_config.json": '{"my": "config"}',
    "logs/app.log": "a user's log",
}


def plant(folder: Path) -> dict[str, bytes]:
    for name, text in USER_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return snapshot(folder)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every path under ``folder`` (folders too) with its bytes: a new, removed or changed entry shows."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(folder.rglob("*"))
    }


def refused(result, folder: Path) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "refusing to write into" in lines[0], result.output
    assert "Traceback" not in result.output


@pytest.fixture
def documents(tmp_path: Path) -> Path:
    data = tmp_path / "in"
    data.mkdir()
    for i in range(3):
        (data / f"note{i}.txt").write_text(f"Note {i}: a short text a person wrote about the weather today.\n")
    return data


@pytest.mark.parametrize("overwrite", [False, True], ids=["resume", "overwrite"])
def test_curate_into_a_user_folder_touches_nothing(tmp_path: Path, documents: Path, overwrite: bool) -> None:
    """D1: without --overwrite main b7eca32 deleted deduped/, top_percent/, stages/dedup/, dropped/*/dedup/ and
    overwrote config.yaml and report.md; with it (once F counted as a run) it deleted plots/ and dropped/."""
    folder = tmp_path / "F"
    before = plant(folder)
    args = ["curate", str(ROOT / "configs" / "domain.yaml"), "--input", str(documents), "--output", str(folder)]
    args += ["--prefect", "off"] + (["--overwrite"] if overwrite else [])
    refused(CliRunner().invoke(app, args), folder)
    assert snapshot(folder) == before


def test_a_forged_run_config_does_not_make_a_folder_ours(tmp_path: Path, documents: Path) -> None:
    """A ``config.yaml`` with tokenmill's header line (what b7eca32 took for a run) gives no right to delete."""
    folder = tmp_path / "F"
    plant(folder)
    (folder / "config.yaml").write_text("# resolved by tokenmill; config_hash: abc\nname: x\n", encoding="utf-8")
    before = snapshot(folder)
    args = ["curate", str(ROOT / "configs" / "domain.yaml"), "--input", str(documents), "--output", str(folder)]
    refused(CliRunner().invoke(app, [*args, "--prefect", "off", "--overwrite"]), folder)
    assert snapshot(folder) == before


def test_the_curate_deployment_obeys_the_same_rule(tmp_path: Path, documents: Path, prefect_harness) -> None:
    """D1 through a deployment: ``curate/one-off`` with ``--param output=<a user folder>`` (the flow itself)."""
    from flows.curate import curate

    folder = tmp_path / "F"
    before = plant(folder)
    with pytest.raises(RunDirError, match="refusing to write into"):
        curate(str(ROOT / "configs" / "domain.yaml"), input=str(documents), output=str(folder))
    with pytest.raises(RunDirError, match="refusing to write into"):
        curate(str(ROOT / "configs" / "domain.yaml"), input=str(documents), output=str(folder), overwrite=True)
    assert snapshot(folder) == before


def test_tokenize_into_a_user_folder_touches_nothing(tmp_path: Path) -> None:
    """D2: b7eca32 deleted *.ds, *.ds.index and *.partial under train/ and heldout/ and overwrote tokenizer/*.json."""
    from tests.helpers.tokenize import write_run

    write_run(tmp_path / "run", {"web": 20}, seed=1, files=1)
    folder = tmp_path / "F"
    before = plant(folder)
    args = ["tokenize", "--input", str(tmp_path / "run"), "--output", str(folder), "--vocab-size", "300"]
    refused(CliRunner().invoke(app, [*args, "--tasks", "1", "--workers", "1"]), folder)
    assert snapshot(folder) == before


def test_dedup_into_a_user_folder_touches_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "text": f"document number {i}"}) + "\n" for i in range(5)))
    folder = tmp_path / "F"
    before = plant(folder)
    refused(
        CliRunner().invoke(app, ["dedup", "--input", str(data), "--output", str(folder), "--prefect", "off"]), folder
    )
    refused(CliRunner().invoke(app, ["dedup", "--input", str(data), "--output", str(folder), "--restart"]), folder)
    assert snapshot(folder) == before


def test_overwrite_of_a_run_keeps_files_beside_it_and_rewrites_its_own(tmp_path: Path, documents: Path) -> None:
    """The other side of the rule: a folder tokenmill created is resumed and overwritten, a user's notes stay."""
    folder = tmp_path / "run"
    recipe = tmp_path / "recipe.yaml"  # read and PII only: this test is about the folder, not the stages
    source = {"name": "notes", "kind": "folder", "path": str(documents)}
    stages = {"language": None, "quality": None}
    recipe.write_text(json.dumps({"name": "t", "output_dir": str(folder), "sources": [source], "stages": stages}))
    args = ["curate", str(recipe), "--prefect", "off"]
    assert CliRunner().invoke(app, args).exit_code == 0
    record = read_record(folder)
    assert record is not None and record.kind == "run" and record.commands == ["curate"]
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    kept = sorted(p.name for p in (folder / "curated").rglob("*.jsonl.gz"))
    again = CliRunner().invoke(app, [*args, "--overwrite"])
    assert again.exit_code == 0, again.output
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in (folder / "curated").rglob("*.jsonl.gz")) == kept
    assert (folder / "report.md").is_file() and read_record(folder).commands == ["curate"]


def test_remove_owned_deletes_only_what_the_record_lists(tmp_path: Path) -> None:
    record = claim(tmp_path / "run", "curate")
    (record.root / "deduped" / "web").mkdir(parents=True)
    (record.root / "notes.txt").write_text("mine")
    (record.root / "dropped" / "web" / "dedup").mkdir(parents=True)
    assert remove_owned(record.root / "deduped", record) and not (record.root / "deduped").exists()
    assert remove_owned(record.root / "dropped" / "web" / "dedup", record)
    assert not remove_owned(record.root / "plots", record)  # listed, absent: nothing to do
    for foreign in (record.root / "notes.txt", record.root / RECORD_NAME, tmp_path / "elsewhere", record.root):
        with pytest.raises(RunDirError, match="refusing to delete"):
            remove_owned(foreign, record)
    assert (record.root / "notes.txt").read_text() == "mine"
    with pytest.raises(RunDirError, match="tokenmill did not create it"):
        record_of(tmp_path)


def test_a_folder_of_another_kind_is_refused(tmp_path: Path) -> None:
    """Token shards are not a curation run: tokenize into a run's root (or curate into shards) is refused."""
    claim(tmp_path / "run", "curate")
    claim(tmp_path / "shards", "tokenize")
    with pytest.raises(RunDirError, match="tokenmill run folder .* not a shards folder"):
        claim(tmp_path / "run", "tokenize")
    with pytest.raises(RunDirError, match="tokenmill shards folder"):
        claim(tmp_path / "shards", "curate")
    assert claim(tmp_path / "run", "dedup").commands == ["curate", "dedup"]  # dedup writes into a curation run
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunDirError, match="is a file"):
        claim(tmp_path / "file", "train")


def test_the_demo_claims_its_folder_before_it_writes_the_classifier_into_it(tmp_path: Path, monkeypatch) -> None:
    # on a fresh checkout the demo's first write is models/finance.bin; without a record first, the pipeline flow
    # would then refuse runs/demo as a folder tokenmill did not create
    seen = []

    def fake_classifier(sample_dir, model):
        seen.append(read_record(tmp_path / "demo"))
        raise RunDirError("stop here")  # one line, exit 2

    monkeypatch.setattr("flows.demo.train_demo_classifier", fake_classifier)
    monkeypatch.setattr("flows.runtime.ensure_prefect_backend", lambda: "embedded")
    args = ["demo", "--output", str(tmp_path / "demo"), "--sample-dir", str(tmp_path / "sample"), "--pages", "20"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert seen and seen[0] is not None and "demo" in seen[0].commands
