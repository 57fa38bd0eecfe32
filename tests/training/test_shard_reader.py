"""training/data.py: windows, seeded order, data-parallel sharding, exact resume, and files that are wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.shards.format import ShardError
from pipeline.tokenize.config import TokenizeConfig
from tests.helpers.tokenize import write_run
from training.data import ResumeError, ShardWindows, TorchWindows

SEQ = 15


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    from pipeline.tokenize import run_tokenize

    root = tmp_path_factory.mktemp("reader")
    write_run(root, {"web": 60, "finance": 30}, seed=4)
    config = TokenizeConfig(vocab_size=300, tasks=2, workers=1, heldout_share=0.1, max_shard_tokens=2500, seed=8)
    run_tokenize(root, root / "shards", config)
    return root / "shards"


@pytest.fixture()
def copy(shards: Path, tmp_path: Path) -> Path:
    target = tmp_path / "shards"
    shutil.copytree(shards, target)
    return target


def read(windows: ShardWindows, start: int, stop: int) -> list[np.ndarray]:
    return list(windows.iter_from(start, stop))


def test_one_epoch_is_every_window_once_in_a_seeded_order(shards: Path) -> None:
    plain = ShardWindows(shards, SEQ, shuffle=False)
    mixed = ShardWindows(shards, SEQ, seed=1)
    n = plain.num_windows
    assert n > 50 and len(plain.files) > 1
    epoch = read(mixed, 0, n)
    order = [mixed.global_window(g) for g in range(n)]
    assert all(np.array_equal(w, plain.window(i)) for w, i in zip(epoch, order, strict=True))
    assert sorted(order) == list(range(n)) and order != list(range(n))
    again, other = ShardWindows(shards, SEQ, seed=1), ShardWindows(shards, SEQ, seed=2)
    assert [again.global_window(g) for g in range(n)] == order  # seeded
    assert [other.global_window(g) for g in range(n)] != order
    second = [mixed.global_window(g) for g in range(n, 2 * n)]
    assert sorted(second) == list(range(n)) and second != order  # a new order each epoch
    assert all(len(w) == SEQ + 1 for w in epoch)


@pytest.mark.parametrize("world_size", [1, 2])
def test_resume_from_any_index_replays_the_same_windows(shards: Path, world_size: int) -> None:
    total = ShardWindows(shards, SEQ).num_windows
    steps = (5 * total) // (2 * world_size)  # two and a half epochs, so resumes land mid-epoch and across epochs
    for rank in range(world_size):
        reader = ShardWindows(shards, SEQ, seed=3, rank=rank, world_size=world_size)
        uninterrupted = read(reader, 0, steps)
        per_rank_epoch = total // world_size
        for k in (0, 1, 7, per_rank_epoch - 1, per_rank_epoch, per_rank_epoch + 3, 2 * per_rank_epoch + 5, steps - 1):
            state = json.loads(json.dumps(reader.state_dict(k)))  # what a checkpoint stores
            restarted = ShardWindows(shards, SEQ, seed=3, rank=rank, world_size=world_size)
            start = restarted.resume(state)
            assert start == k
            resumed = read(restarted, start, steps)
            assert all(np.array_equal(a, b) for a, b in zip(resumed, uninterrupted[k:], strict=True))


def test_two_ranks_split_the_stream_without_overlap(shards: Path) -> None:
    single = ShardWindows(shards, SEQ, seed=6)
    ranks = [ShardWindows(shards, SEQ, seed=6, rank=r, world_size=2) for r in range(2)]
    stream = read(single, 0, 40)
    for i in range(20):  # rank r's sample i is global sample 2i + r
        assert np.array_equal(ranks[0][i], stream[2 * i]) and np.array_equal(ranks[1][i], stream[2 * i + 1])


def test_resume_with_another_world_size_continues_the_global_stream(shards: Path) -> None:
    two = ShardWindows(shards, SEQ, seed=6, rank=0, world_size=2)
    state = two.state_dict(10)  # both ranks read 10 samples: 20 consumed
    single = ShardWindows(shards, SEQ, seed=6)
    assert single.resume(state) == 20
    assert np.array_equal(single[20], ShardWindows(shards, SEQ, seed=6)[20])
    three = ShardWindows(shards, SEQ, seed=6, rank=0, world_size=3)
    with pytest.raises(ResumeError, match="do not divide among 3 ranks"):
        three.resume(state)


def test_resume_refuses_changed_shards_or_settings(shards: Path, tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    state = ShardWindows(shards, SEQ, seed=3).state_dict(5)
    with pytest.raises(ResumeError, match="seq_len"):
        ShardWindows(shards, SEQ + 1, seed=3).resume(state)
    with pytest.raises(ResumeError, match="seed"):
        ShardWindows(shards, SEQ, seed=4).resume(state)
    rewritten = tmp_path / "rewritten"
    shutil.copytree(shards.parent / "curated", rewritten / "curated")
    config = TokenizeConfig(vocab_size=300, tasks=2, workers=1, heldout_share=0.1, max_shard_tokens=2500, seed=9)
    run_tokenize(rewritten, rewritten / "shards", config)  # same input, another shuffle: other shards
    with pytest.raises(ResumeError, match="shards changed since the checkpoint"):
        ShardWindows(rewritten / "shards", SEQ, seed=3).resume(state)


def test_truncated_shard_is_named(copy: Path) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    victim = copy / manifest["splits"]["train"]["files"][1]["path"]
    victim.write_bytes(victim.read_bytes()[:-6])
    with pytest.raises(ShardError, match=f"{victim}: holds .* tokens, the manifest says"):
        ShardWindows(copy, SEQ)
    victim.write_bytes(victim.read_bytes()[:-1])
    with pytest.raises(ShardError, match=f"{victim}: .* not a whole number"):
        ShardWindows(copy, SEQ)


def test_truncated_or_corrupt_index_is_named(copy: Path) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    shard = copy / manifest["splits"]["train"]["files"][0]["path"]
    index = Path(f"{shard}.index")
    original = index.read_bytes()
    index.write_bytes(original[:-8])
    with pytest.raises(ShardError, match=f"{index}: holds .* document ends, the manifest says"):
        ShardWindows(copy, SEQ)
    index.write_bytes(original[:-3])
    with pytest.raises(ShardError, match=f"{index}: .* not a whole number of uint64"):
        ShardWindows(copy, SEQ)
    ends = np.frombuffer(original, dtype="<u8").copy()
    ends[[3, 4]] = ends[[4, 3]]  # same size, wrong order
    index.write_bytes(ends.tobytes())
    with pytest.raises(ShardError, match=f"{index}: document end offsets do not strictly increase"):
        ShardWindows(copy, SEQ)
    ends = np.frombuffer(original, dtype="<u8").copy()
    ends[2] -= 1  # still increasing, but no longer at an EOS
    index.write_bytes(ends.tobytes())
    with pytest.raises(ShardError, match=f"{shard}: document 2 does not end with EOS"):
        ShardWindows(copy, SEQ)
    index.unlink()
    with pytest.raises(ShardError, match=f"{index}: index file is missing"):
        ShardWindows(copy, SEQ)


def test_overwritten_tokens_and_missing_files_are_named(copy: Path) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    shard = copy / manifest["splits"]["train"]["files"][0]["path"]
    tokens = np.fromfile(shard, dtype="<u2")
    tokens[:] = 65_000  # garbage of the right size
    tokens.tofile(shard)
    with pytest.raises(ShardError, match=f"{shard}: document 0 does not end with EOS"):
        ShardWindows(copy, SEQ)
    ends = np.fromfile(f"{shard}.index", dtype="<u8")
    tokens[ends.astype(np.int64) - 1] = manifest["tokenizer"]["eos_id"]
    tokens.tofile(shard)
    ShardWindows(copy, SEQ)  # index-level checks pass; the full check reads every id
    with pytest.raises(ShardError, match=f"{shard}: token id 65000 is outside the vocabulary"):
        ShardWindows(copy, SEQ, check="full")
    shard.unlink()
    with pytest.raises(ShardError, match=f"{shard}: shard file is missing"):
        ShardWindows(copy, SEQ)


def test_manifest_missing_or_edited_is_named(copy: Path) -> None:
    path = copy / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["splits"]["train"]["files"][0]["tokens"] += 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(ShardError, match=f"{path}: fingerprint .* does not match"):
        ShardWindows(copy, SEQ)
    path.write_text("{not json")
    with pytest.raises(ShardError, match=f"{path}: not valid JSON"):
        ShardWindows(copy, SEQ)
    path.unlink()
    with pytest.raises(ShardError, match=f"{path}: manifest not found"):
        ShardWindows(copy, SEQ)


def test_heldout_splits_and_bad_arguments(shards: Path) -> None:
    manifest = json.loads((shards / "manifest.json").read_text())
    web = ShardWindows(shards, 7, split="heldout/web", shuffle=False)
    both = ShardWindows(shards, 7, split="heldout", shuffle=False)
    assert both.num_windows >= web.num_windows > 0
    assert all(str(f.relative_to(shards)).startswith("heldout/") for f in both.files)
    assert manifest["splits"]["heldout/web"]["tokens"] // 8 == web.num_windows
    with pytest.raises(ShardError, match="no split 'validation'"):
        ShardWindows(shards, SEQ, split="validation")
    with pytest.raises(ShardError, match="no complete window"):
        ShardWindows(shards, 10**7)
    with pytest.raises(ValueError, match="rank 2 is outside world_size 2"):
        ShardWindows(shards, SEQ, rank=2, world_size=2)


def test_torch_dataloader_yields_the_same_order_from_a_resume_point(shards: Path) -> None:
    import torch
    from torch.utils.data import DataLoader

    reader = ShardWindows(shards, SEQ, seed=2, rank=1, world_size=2)
    data = TorchWindows(reader, start=5, epochs=2)
    assert len(data) == 2 * len(reader) - 5
    batches = list(DataLoader(data, batch_size=4, shuffle=False))
    flat = torch.cat([b["input_ids"] for b in batches])
    assert flat.dtype == torch.int64 and flat.shape == (len(data), SEQ + 1)
    expected = np.stack([reader[i] for i in range(5, 5 + len(data))]).astype(np.int64)
    assert np.array_equal(flat.numpy(), expected)


def test_reader_pickles_without_its_tokens(shards: Path) -> None:
    import pickle

    reader = ShardWindows(shards, SEQ, seed=2, rank=0, world_size=2)
    payload = pickle.dumps(reader)
    assert len(payload) < sum(f.stat().st_size for f in reader.files)  # the files are reopened, not copied
    clone = pickle.loads(payload)
    assert all(np.array_equal(clone[i], reader[i]) for i in range(50))
