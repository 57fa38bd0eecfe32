"""Inputs other than a curation run, a reused tokenizer, and bad input: each a clear error or a counted skip."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.tokenize.config import TokenizeConfig
from tests.helpers.tokenize import decode_all, make_text, write_run

SMALL = {"vocab_size": 300, "tasks": 1, "workers": 1, "heldout_share": 0.0}


def write_jsonl(path: Path, records: list, raw_lines: list[str] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in records] + list(raw_lines)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def texts(prefix: str, n: int) -> list[str]:
    import random

    rng = random.Random(prefix)
    return [make_text(rng, prefix, i) for i in range(n)]


def test_folder_of_jsonl_and_parquet_sources_by_stem_and_field(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.tokenize import run_tokenize

    data = tmp_path / "data"
    write_jsonl(data / "news.jsonl", [{"text": t} for t in texts("news", 30)])
    write_jsonl(data / "mixed.jsonl.gz", [{"text": t, "source": "legal"} for t in texts("legal", 20)])
    data.mkdir(exist_ok=True)
    pq.write_table(pa.table({"content": texts("books", 25)}), data / "books.parquet")
    with pytest.raises(ValueError, match="source .books. has zero tokens.*missing_text.*books.parquet"):
        run_tokenize(data, tmp_path / "s0", TokenizeConfig(**SMALL))  # parquet column is "content", not "text"

    pq.write_table(pa.table({"text": texts("books", 25), "id": [f"b{i}" for i in range(25)]}), data / "books.parquet")
    manifest = run_tokenize(data, tmp_path / "s1", TokenizeConfig(**SMALL)).raw
    docs = {name: entry["documents"]["train"] for name, entry in manifest["sources"].items()}
    assert docs == {"books": 25, "legal": 20, "news": 30}
    decoded = set(decode_all(tmp_path / "s1")["train"])
    assert decoded == set(texts("news", 30) + texts("legal", 20) + texts("books", 25))
    assert manifest["sources"]["news"]["languages"].keys() == {"unknown"}


def test_a_single_file_is_one_source(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    write_jsonl(tmp_path / "corpus.jsonl", [{"text": t} for t in texts("c", 20)])
    manifest = run_tokenize(tmp_path / "corpus.jsonl", tmp_path / "out", TokenizeConfig(**SMALL)).raw
    assert list(manifest["sources"]) == ["corpus"] and manifest["input"]["origin"] == "file"


def test_broken_lines_and_missing_text_are_counted_skips(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    good = texts("web", 30)
    bad_lines = ["{not json", '{"text": "lone \\ud800 surrogate"}', "[1, 2]"]
    write_jsonl(tmp_path / "in" / "web.jsonl", [{"text": t} for t in good] + [{"id": "x"}, {"text": ""}], bad_lines)
    truncated = gzip.compress(("\n".join(json.dumps({"text": t}) for t in texts("news", 200)) + "\n").encode())
    (tmp_path / "in" / "news.jsonl.gz").write_bytes(truncated[: len(truncated) // 2])

    manifest = run_tokenize(tmp_path / "in", tmp_path / "out", TokenizeConfig(**SMALL)).raw
    web = manifest["sources"]["web"]
    assert web["documents"]["train"] == 30
    assert web["skipped"] == {"bad_json": 3, "missing_text": 1, "empty_text": 1}
    news = manifest["sources"]["news"]
    assert news["skipped"] == {"unreadable_file": 1} and 0 < news["documents"]["train"] < 200
    assert any("web" in w and "bad_json" in w for w in manifest["warnings"])


def test_reused_tokenizer_is_copied_and_hashed(tmp_path: Path) -> None:
    from pipeline.fingerprint import sha256_file
    from pipeline.tokenize import run_tokenize

    write_run(tmp_path / "a", {"one": 30}, seed=1, files=1)
    first = run_tokenize(tmp_path / "a", tmp_path / "a" / "shards", TokenizeConfig(**SMALL)).raw
    write_run(tmp_path / "b", {"two": 25}, seed=2, files=1)
    config = TokenizeConfig(**{**SMALL, "tokenizer": str(tmp_path / "a" / "shards" / "tokenizer")})
    second = run_tokenize(tmp_path / "b", tmp_path / "b" / "shards", config).raw
    assert not second["tokenizer"]["trained"]
    assert second["tokenizer"]["sha256"] == first["tokenizer"]["sha256"]
    assert second["tokenizer"]["source"] == str(tmp_path / "a" / "shards" / "tokenizer")
    # the output's own tokenizer reused in place (a rerun with --tokenizer <shards>/tokenizer)
    config = TokenizeConfig(**{**SMALL, "tokenizer": str(tmp_path / "b" / "shards" / "tokenizer")})
    third = run_tokenize(tmp_path / "b", tmp_path / "b" / "shards", config).raw
    assert third["tokenizer"]["sha256"] == first["tokenizer"]["sha256"]
    assert third["fingerprint"] == second["fingerprint"]
    assert sha256_file(tmp_path / "b" / "shards" / "tokenizer" / "tokenizer.json") == first["tokenizer"]["sha256"]
    assert (tmp_path / "b" / "shards" / "tokenizer" / "tokenizer_config.json").is_file()


def test_tokenizer_path_that_does_not_exist_is_named(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize
    from pipeline.tokenize.tokenizer import TokenizerError

    write_run(tmp_path / "r", {"one": 5}, files=1)
    missing = tmp_path / "no" / "such" / "tokenizer.json"
    with pytest.raises(TokenizerError, match=f"{missing}: tokenizer path does not exist"):
        run_tokenize(tmp_path / "r", tmp_path / "out", TokenizeConfig(**{**SMALL, "tokenizer": str(missing)}))
    with pytest.raises(TokenizerError, match="folder has no tokenizer.json"):
        run_tokenize(tmp_path / "r", tmp_path / "out", TokenizeConfig(**{**SMALL, "tokenizer": str(tmp_path)}))
    (tmp_path / "broken.json").write_text("{}")
    with pytest.raises(TokenizerError, match="broken.json: not a tokenizers file"):
        run_tokenize(
            tmp_path / "r", tmp_path / "out", TokenizeConfig(**{**SMALL, "tokenizer": str(tmp_path / "broken.json")})
        )


def big_vocab_tokenizer(path: Path) -> None:
    """A byte-level tokenizer of 70,001 entries whose byte tokens all have ids above 65,535."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {f"<unused{i}>": i for i in range(65_600)}
    vocab.update({char: 65_600 + i for i, char in enumerate(alphabet)})
    vocab.update({f"<more{i}>": i for i in range(len(vocab), 70_000)})
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(["<|endoftext|>"])
    tokenizer.save(str(path))


def test_vocab_over_65536_switches_to_uint32(tmp_path: Path) -> None:
    from pipeline.fingerprint import sha256_file
    from pipeline.tokenize import run_tokenize
    from training.data import ShardWindows

    big_vocab_tokenizer(tmp_path / "big.json")
    source_texts = write_run(tmp_path / "r", {"one": 20}, files=1)["one"]
    config = TokenizeConfig(**{**SMALL, "tokenizer": str(tmp_path / "big.json")})
    manifest = run_tokenize(tmp_path / "r", tmp_path / "out", config).raw
    assert manifest["dtype"] == "uint32" and manifest["token_size"] == 4
    assert manifest["tokenizer"]["vocab_size"] == 70_001
    assert manifest["tokenizer"]["sha256"] == sha256_file(tmp_path / "big.json")  # copied byte for byte
    assert set(decode_all(tmp_path / "out")["train"]) == set(source_texts)
    windows = ShardWindows(tmp_path / "out", seq_len=63, shuffle=False, check="full")
    assert windows.window(0).dtype == np.dtype("<u4") and int(windows.window(0).max()) > 65_535
    try:
        from datatrove.utils.dataset import DatatroveFolderDataset
    except ImportError:  # pragma: no cover
        return
    theirs = DatatroveFolderDataset(str(tmp_path / "out" / "train"), seq_len=63, token_size=4)
    assert len(theirs) == windows.num_windows
    assert all(np.array_equal(theirs[i]["input_ids"].numpy(), windows.window(i)) for i in range(len(theirs)))


def test_weights_that_do_not_sum_fail_before_any_work(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize
    from pipeline.tokenize.mix import MixError

    write_run(tmp_path / "r", {"web": 5, "finance": 5}, files=1)
    with pytest.raises(MixError, match="sum to 1.2"):
        run_tokenize(
            tmp_path / "r",
            tmp_path / "out",
            TokenizeConfig(**SMALL),
            {"web": {"weight": 0.6}, "finance": {"weight": 0.6}},
        )
    assert not (tmp_path / "out").exists()


def test_source_in_the_mix_without_documents_is_named(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    write_run(tmp_path / "r", {"web": 20}, files=1)
    mix = {"web": {"weight": 0.5}, "finance": {"weight": 0.5}}
    with pytest.raises(ValueError, match="finance have zero tokens"):
        run_tokenize(tmp_path / "r", tmp_path / "out", TokenizeConfig(**SMALL), mix)


def test_heavy_repetition_is_warned(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    write_run(tmp_path / "r", {"web": 20, "rare": 4}, files=1)
    manifest = run_tokenize(tmp_path / "r", tmp_path / "out", TokenizeConfig(**SMALL), {"rare": {"epochs": 6}}).raw
    assert manifest["sources"]["rare"]["repeats"] == pytest.approx(6)
    assert any("'rare' is repeated 6.0 times" in w for w in manifest["warnings"])


def test_missing_input_and_empty_run_dir_are_named(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize
    from pipeline.tokenize.inputs import InputError

    with pytest.raises(InputError, match="nowhere: input does not exist"):
        run_tokenize(tmp_path / "nowhere", tmp_path / "out", TokenizeConfig(**SMALL))
    (tmp_path / "run" / "stages").mkdir(parents=True)
    (tmp_path / "run" / "config.yaml").write_text("name: x\n")
    with pytest.raises(InputError, match="no documents under deduped/ or curated/"):
        run_tokenize(tmp_path / "run", tmp_path / "out", TokenizeConfig(**SMALL))


def test_deduped_is_preferred_over_curated(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    write_run(tmp_path / "r", {"web": 30}, files=1)
    write_jsonl(tmp_path / "r" / "deduped" / "web" / "00000.jsonl.gz", [{"text": t} for t in texts("dedup", 10)])
    manifest = run_tokenize(tmp_path / "r", tmp_path / "out", TokenizeConfig(**SMALL)).raw
    assert manifest["input"]["origin"] == "deduped" and manifest["sources"]["web"]["documents"]["train"] == 10


def test_unreadable_parquet_is_a_counted_skip_named_in_the_error(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    write_jsonl(tmp_path / "in" / "news.jsonl", [{"text": t} for t in texts("news", 20)])
    (tmp_path / "in" / "broken.parquet").write_bytes(b"PAR1 this is not a parquet file")
    with pytest.raises(ValueError, match=r"source 'broken' has zero tokens.*unreadable_file.*broken.parquet"):
        run_tokenize(tmp_path / "in", tmp_path / "out", TokenizeConfig(**SMALL))
