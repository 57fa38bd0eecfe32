"""Tokenize stage end to end on tiny curated runs: exact round trip, mix, held-out split, datatrove parity."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pipeline.tokenize.config import TokenizeConfig
from tests.helpers.tokenize import TRICKY, decode_all, write_run


@pytest.fixture(scope="module")
def natural(tmp_path_factory) -> tuple[Path, dict[str, list[str]], dict]:
    """Two sources at their natural size: every input document is in exactly one shard, once."""
    from pipeline.tokenize import run_tokenize

    root = tmp_path_factory.mktemp("natural")
    texts = write_run(root, {"web": 150, "finance": 60}, seed=1, tricky="finance")
    config = TokenizeConfig(vocab_size=500, tasks=2, workers=1, heldout_share=0.1, max_shard_tokens=3000, seed=3)
    manifest = run_tokenize(root, root / "shards", config).raw
    return root / "shards", texts, manifest


@pytest.fixture(scope="module")
def weighted(tmp_path_factory) -> tuple[Path, dict[str, list[str]], dict]:
    """The demo's 51 % domain / 49 % general mix over a small domain and a larger general source."""
    from pipeline.tokenize import run_tokenize

    root = tmp_path_factory.mktemp("weighted")
    texts = write_run(root, {"web": 400, "finance": 90}, seed=2)
    config = TokenizeConfig(vocab_size=400, tasks=2, workers=1, heldout_share=0.05, seed=5)
    manifest = run_tokenize(root, root / "shards", config, {"web": {"weight": 0.49}, "finance": {"weight": 0.51}}).raw
    return root / "shards", texts, manifest


def test_every_document_decodes_to_its_input_text(natural) -> None:
    shards, texts, manifest = natural
    decoded = decode_all(shards)
    everything = Counter(t for split in decoded.values() for t in split)
    assert everything == Counter(t for source in texts.values() for t in source)
    for tricky in TRICKY:  # whitespace, emoji, CRLF, NUL, a literal EOS string: byte for byte
        assert everything[tricky] == 1
    assert all(
        e["roundtrip"]["mismatched"] == 0 and e["roundtrip"]["checked"] > 0 for e in manifest["sources"].values()
    )


def test_literal_special_token_text_does_not_become_eos(natural) -> None:
    from pipeline.shards.format import numpy_dtype, open_tokens

    shards, _texts, manifest = natural
    eos = manifest["tokenizer"]["eos_id"]
    for split in manifest["splits"].values():
        for item in split["files"]:
            tokens = open_tokens(shards / item["path"], numpy_dtype(manifest["dtype"]))
            assert int(np.count_nonzero(tokens == eos)) == item["documents"]  # EOS only between documents


def test_heldout_documents_never_in_training(natural, weighted) -> None:
    for shards, texts, manifest in (natural, weighted):
        decoded = decode_all(shards)
        held = {t for name, split in decoded.items() if name.startswith("heldout/") for t in split}
        assert held and not held & set(decoded["train"])
        for source, source_texts in texts.items():
            held_here = decoded[f"heldout/{source}"]
            assert set(held_here) <= set(source_texts)
            share = manifest["heldout_share"]
            assert (
                len(held_here)
                == manifest["sources"][source]["documents"]["heldout"]
                == round(share * len(source_texts))
            )


def test_achieved_mix_within_one_percent_of_requested(weighted) -> None:
    from pipeline.tokenize.verify import load_shard_tokenizer

    shards, texts, manifest = weighted
    requested = {"web": 0.49, "finance": 0.51}
    source_of = {t: s for s, ts in texts.items() for t in ts}
    tokenizer = load_shard_tokenizer(shards)
    counted: Counter[str] = Counter()
    for text in decode_all(shards)["train"]:  # measured from the shards, not taken from the manifest
        counted[source_of[text]] += len(tokenizer.encode(text).ids) + 1
    total = sum(counted.values())
    for source, share in requested.items():
        assert abs(counted[source] / total - share) <= 0.01
        assert abs(manifest["sources"][source]["achieved_share"] - share) <= 0.01
        assert manifest["sources"][source]["tokens"]["mixed"] == counted[source]
    finance = manifest["sources"]["finance"]
    assert finance["repeats"] > 1 and finance["max_copies_of_a_document"] >= 2  # upsampled by whole documents
    assert manifest["sources"]["web"]["repeats"] < 1


def test_datatrove_folder_dataset_reads_identical_windows(natural) -> None:
    try:
        from datatrove.utils.dataset import DatatroveFolderDataset
    except ImportError:  # pragma: no cover - datatrove's torch extra missing
        pytest.skip("datatrove's DatatroveFolderDataset needs torch")
    from training.data import ShardWindows

    shards, _texts, manifest = natural
    assert len(manifest["splits"]["train"]["files"]) > 1  # windows restart in each file, as in datatrove
    ours = ShardWindows(shards, seq_len=31, shuffle=False)
    theirs = DatatroveFolderDataset(str(shards / "train"), seq_len=31, token_size=2)
    assert len(theirs) == ours.num_windows > 0
    for i in range(len(theirs)):
        assert np.array_equal(theirs[i]["input_ids"].numpy(), ours.window(i).astype(np.int64))


def test_manifest_records_tokenizer_files_and_byte_ratios(natural) -> None:
    from pipeline.fingerprint import sha256_file
    from pipeline.shards.format import fingerprint, load_manifest

    shards, texts, manifest = natural
    assert load_manifest(shards) == manifest
    assert manifest["dtype"] == "uint16" and manifest["token_size"] == 2
    assert manifest["tokenizer"]["sha256"] == sha256_file(shards / manifest["tokenizer"]["path"])
    assert manifest["tokenizer"]["trained"] and manifest["tokenizer"]["vocab_size"] <= 500
    assert manifest["vocab_size"] == manifest["tokenizer"]["vocab_size"]
    assert manifest["recipe_hash"] == "abc123" and manifest["fingerprint"] == fingerprint(manifest)
    for split in manifest["splits"].values():
        for item in split["files"]:
            path = shards / item["path"]
            assert path.stat().st_size == 2 * item["tokens"]
            assert (shards / f"{item['path']}.index").stat().st_size == 8 * item["documents"]
    train_files = manifest["splits"]["train"]["files"]
    assert all(f["tokens"] <= 3000 for f in train_files if f["documents"] > 1)
    for source, entry in manifest["sources"].items():
        assert entry["documents"]["train"] + entry["documents"]["heldout"] == len(texts[source])
        assert set(entry["languages"]) == {"en", "de"}
        assert all(lang["bytes_per_token"] > 1 for lang in entry["languages"].values())
        assert entry["bytes"] == sum(len(t.encode()) for t in texts[source])


def test_autotokenizer_loads_the_saved_folder_offline(natural) -> None:
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    shards, texts, _manifest = natural
    auto = AutoTokenizer.from_pretrained(str(shards / "tokenizer"))
    plain = Tokenizer.from_file(str(shards / "tokenizer" / "tokenizer.json"))
    for text in [texts["web"][0], TRICKY[0], TRICKY[2]]:
        ids = auto(text, add_special_tokens=False)["input_ids"]
        assert ids == plain.encode(text).ids
        assert auto.decode(ids) == text
    assert auto.eos_token == "<|endoftext|>"


def test_same_input_and_seed_give_same_shards_whatever_the_rank_count(weighted, tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    shards, _texts, manifest = weighted
    config = TokenizeConfig(vocab_size=400, tasks=1, workers=1, heldout_share=0.05, seed=5)
    again = run_tokenize(
        shards.parent, tmp_path / "again", config, {"web": {"weight": 0.49}, "finance": {"weight": 0.51}}
    )
    assert again.fingerprint == manifest["fingerprint"] and again.path == tmp_path / "again" / "manifest.json"
    assert again.raw == json.loads(again.path.read_text())  # what it returns is what it wrote
    for item in manifest["splits"]["train"]["files"]:
        assert (tmp_path / "again" / item["path"]).read_bytes() == (shards / item["path"]).read_bytes()


def test_cli_tokenize_inspect_and_verify(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    texts = write_run(tmp_path / "run", {"alpha": 40, "beta": 30}, seed=9, files=1)
    runner = CliRunner()
    out = tmp_path / "shards"
    args = ["tokenize", "--input", str(tmp_path / "run" / "curated"), "--output", str(out), "--vocab-size", "300"]
    result = runner.invoke(app, [*args, "--epochs", "alpha=2", "--heldout-share", "0.1", "--tasks", "1"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sources"]["alpha"]["repeats"] == pytest.approx(2.0)
    assert manifest["sources"]["beta"]["repeats"] == pytest.approx(1.0)

    shown = runner.invoke(app, ["shards", "inspect", str(out), "--doc", "0", "--chars", "5000"])
    assert shown.exit_code == 0, shown.output
    assert "alpha" in shown.output and "uint16" in shown.output
    assert any(text.split(":")[0] in shown.output for ts in texts.values() for text in ts)  # a decoded sample

    verified = runner.invoke(app, ["shards", "verify", str(out), "--input", str(tmp_path / "run")])
    assert verified.exit_code == 0, verified.output
    assert '"ok": true' in verified.output

    both = runner.invoke(app, [*args, "--tokenizer", str(out / "tokenizer")])
    assert both.exit_code != 0 and "exactly one" in both.output
    neither = runner.invoke(app, args[:5])
    assert neither.exit_code != 0 and "exactly one" in neither.output
    missing = runner.invoke(app, [*args[:5], "--tokenizer", str(tmp_path / "nope")])
    assert missing.exit_code == 1 and "nope: tokenizer path does not exist" in missing.output
