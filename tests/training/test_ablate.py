"""training/ablate.py, training/bpb.py and ``tokenmill ablate``: two arms from the same sources and tokenizer,
equal tokens, paired seeds, bits per byte on references neither arm trained on; the interval and call; bad input."""

from __future__ import annotations

import gzip
import json
import math
import pydoc
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import flows  # noqa: F401  (hub offline)
from flows.cli import app
from tests.helpers.train import SHRINK
from training.ablate import AblateError, load_ablate_config, read_reference, reference_name, text_key, verdict

TRAIN = {
    "model": "tiny",
    "model_overrides": SHRINK,
    "seq_len": 32,
    "micro_batch": 8,
    "global_batch_tokens": 256,
    "max_steps": 12,
    "lr": 3e-3,
    "warmup_steps": 2,
    "ckpt_every": 0,
    "log_every": 4,
    "cpu_threads": 1,
}


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def write_recipe(tmp_path: Path, **changes) -> Path:
    from sample import generate_sample

    sample = tmp_path / "sample"
    if not sample.exists():
        generate_sample(sample, seed=21, pages=60, warc_files=1, domain_docs=12)
    recipe = {
        "name": "abl",
        "output_dir": str(tmp_path / "run"),
        "sources": [
            {"name": "web", "kind": "warc", "path": str(sample / "crawl" / "*.warc.gz"), "weight": 0.5},
            {"name": "notes", "kind": "folder", "path": str(sample / "domain"), "weight": 0.5, "priority": 5},
        ],
        "stages": {
            "language": {"keep": None, "min_score": 0.3},
            "dedup": {"threshold": 0.5},
            "tokenize": {"vocab_size": 300, "tasks": 1},
        },
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
        "train": TRAIN,
        **changes,
    }
    path = tmp_path / "abl.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def test_verdict_fields() -> None:
    helps = verdict([1.30, 1.32, 1.31], [1.20, 1.21, 1.22]).to_dict()  # as the report's per_reference holds it
    assert helps["call"] == "curation helps" and helps["difference"] == pytest.approx(0.10)
    assert helps["threshold"] == pytest.approx(2 * 0.01)  # the old rule's field, kept: 2 × the larger sample std
    low, high = helps["difference_ci95"]
    assert 0 < low < 0.10 < high and helps["min_detectable"] > (high - low) / 2
    assert verdict([1.30, 1.40], [1.28, 1.37]).call == "no detectable difference"
    assert verdict([1.20, 1.21, 1.22], [1.30, 1.32, 1.31]).call == "curation hurts"


def test_references_read_and_bad_ones_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(pydoc.render_doc(json, renderer=pydoc.plaintext))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.jsonl").write_text(json.dumps({"text": "one"}) + "\n" + json.dumps({"text": "two"}) + "\n")
    assert len(read_reference(tmp_path / "a.txt")) == 1
    assert read_reference(tmp_path / "docs") == ["one", "two"]
    assert reference_name(tmp_path / "a.txt", {"a"}) == "a_2"
    assert text_key("a  b\n") == text_key("a b")
    (tmp_path / "bad.jsonl").write_text("[1]\n")
    (tmp_path / "empty").mkdir()
    for path, message in ((tmp_path / "nope", "does not exist"), (tmp_path / "bad.jsonl", ":1: not a JSON object")):
        with pytest.raises(AblateError, match=message):
            read_reference(path)
    with pytest.raises(AblateError, match="no text found"):
        read_reference(tmp_path / "empty")
    with pytest.raises(AblateError, match="two different seeds"):
        load_ablate_config({"seeds": [1, 1]})
    with pytest.raises(AblateError, match="unknown key"):
        load_ablate_config({"seed": 3})


def test_ablation_end_to_end(tmp_path: Path) -> None:
    user = tmp_path / "mine.txt"  # text others wrote, generated at run time: the json module's documentation
    user.write_text(pydoc.render_doc(json, renderer=pydoc.plaintext), encoding="utf-8")
    task = tmp_path / "quiz.jsonl"  # a two-item multiple-choice task: every run's model is scored on it too
    task.write_text(
        json.dumps({"context": "The company reported", "choices": ["higher revenue.", "blue"], "gold": 0})
        + "\n"
        + json.dumps({"context": "Encode JSON with", "choices": ["json.dumps", "a hammer"], "gold": 0})
        + "\n"
    )
    recipe = write_recipe(tmp_path, ablate={"reference": [str(user)], "seeds": [1, 2], "tasks": [str(task)]})
    out = tmp_path / "run" / "ablate"  # the default: <output_dir>/ablate
    result = cli("ablate", str(recipe), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads((out / "ablation_report.json").read_text())
    assert set(report["per_reference"]) == {"mine", "heldout_web", "heldout_notes"}
    assert report["seeds"] == [1, 2]
    for name, v in report["per_reference"].items():
        assert len(v["raw"]["values"]) == len(v["curated"]["values"]) == 2
        assert v["raw"]["spread"] > 0 and v["curated"]["spread"] > 0, name  # the seeds differ
        calls = ("curation helps", "curation hurts", "no detectable difference")
        assert 0 < v["curated"]["mean"] < 20 and v["call"] in calls
        low, high = v["difference_ci95"]
        assert low <= v["difference"] <= high and v["min_detectable"] > 0
        assert v["call"] == calls[0 if low > 0 else 1 if high < 0 else 2]  # the call follows the interval
        assert v["paired"]["documents"] > 0  # the document-sampling term was measured
    assert report["unique_train_tokens"]["raw"] > report["unique_train_tokens"]["curated"]
    quiz = report["tasks"]["quiz"]
    assert quiz["items"] == 2 and all(0 <= quiz[arm] <= 1 for arm in ("raw", "curated"))
    runs = report["runs"]["raw"] + report["runs"]["curated"]
    assert {r["tokens"] for r in runs} == {12 * 256}  # equal training tokens in every run
    # the same tokenizer in both arms
    manifests = {arm: json.loads((out / arm / "shards" / "manifest.json").read_text()) for arm in ("raw", "curated")}
    assert manifests["raw"]["tokenizer"]["sha256"] == manifests["curated"]["tokenizer"]["sha256"]
    # no reference document is trained on, in either arm
    references = set()
    for file in (out / "reference").glob("*.jsonl.gz"):
        with gzip.open(file, "rt") as handle:
            references |= {text_key(json.loads(line)["text"]) for line in handle}
    for arm in ("raw", "curated"):
        for file in (out / arm / "train_docs").rglob("*.jsonl.gz"):
            with gzip.open(file, "rt") as handle:
                assert not references & {text_key(json.loads(line)["text"]) for line in handle}
        assert sum(c["excluded_reference"] for c in report["documents"][arm].values()) > 0
    markdown = (out / "ablation_report.md").read_text()
    assert (
        "mine (yours)" in markdown and "± " in markdown and "95 % interval" in markdown and "| quiz | 2 |" in markdown
    )
    for name, v in report["per_reference"].items():
        if v["call"] != "curation helps":
            assert f"Curation does not help on {name}" in markdown
        if v["call"] == "no detectable difference":
            assert f"this run could detect ≥ {v['min_detectable']:.4f} bpb" in markdown
    runs_json = json.loads((out / "raw" / "seed-1" / "result.json").read_text())
    assert len(runs_json["doc_bits"]["mine"]) == len(runs_json["doc_bytes"]["mine"]) == 1

    # a rerun reuses every finished run
    stamp = (out / "raw" / "seed-1" / "result.json").stat().st_mtime_ns
    again = cli("ablate", str(recipe), "--output", str(out))
    assert again.exit_code == 0, again.output
    assert (out / "raw" / "seed-1" / "result.json").stat().st_mtime_ns == stamp

    # the demo's switch: off → nothing; on → the same ablation, its table printed
    from rich.console import Console

    from flows.commands.demo import maybe_ablate

    console = Console(record=True, width=200)
    assert maybe_ablate(str(recipe), console) is None
    enabled = write_recipe(tmp_path, ablate={"reference": [str(user)], "seeds": [1, 2], "enabled": True})
    assert maybe_ablate(str(enabled), console) == str(out / "ablation_report.md")
    assert "Ablation: does curation help?" in console.export_text()
    assert (out / "raw" / "seed-1" / "result.json").stat().st_mtime_ns == stamp

    # bits per byte: the model's summed token loss over the bytes, checked against transformers' mean loss
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.bpb import bits_per_byte

    final = out / "curated" / "seed-1" / "final"
    text = "The company reported higher revenue."
    measured = bits_per_byte(final, [text], seq_len=30)
    tokenizer = AutoTokenizer.from_pretrained(final)
    model = AutoModelForCausalLM.from_pretrained(final)
    ids = torch.tensor([[tokenizer.eos_token_id, *tokenizer.encode(text, add_special_tokens=False)]])
    assert ids.shape[1] <= 31
    with torch.no_grad():
        loss = model(input_ids=ids, labels=ids).loss.item()
    expected = loss * (ids.shape[1] - 1) / math.log(2) / len(text.encode())
    assert measured.bpb == pytest.approx(expected, rel=1e-4)
    assert measured.tokens == ids.shape[1] - 1
    assert sum(measured.doc_bits) == pytest.approx(measured.nll_nats / math.log(2))


def test_ablate_errors(tmp_path: Path) -> None:
    assert cli("ablate", "--help").exit_code == 0
    missing = cli("ablate", str(tmp_path / "none.yaml"))
    assert missing.exit_code == 2 and "error:" in missing.output
    no_train = write_recipe(tmp_path, train=None)
    result = cli("ablate", str(no_train), "--output", str(tmp_path / "o"))
    assert result.exit_code == 2 and "no train: section" in result.output
    recipe = write_recipe(tmp_path)
    for args, message in (
        (["--seeds", "1"], "two different seeds"),
        (["--seeds", "x"], "--seeds"),
        (["--reference", str(tmp_path / "nope.txt")], "does not exist"),
    ):
        result = cli("ablate", str(recipe), "--output", str(tmp_path / "o"), *args)
        assert result.exit_code == 2 and "error:" in result.output and message in result.output, (args, result.output)
    bad = write_recipe(tmp_path, ablate={"seeds": [3]})
    result = cli("ablate", str(bad))
    assert result.exit_code == 2 and "ablate" in result.output
