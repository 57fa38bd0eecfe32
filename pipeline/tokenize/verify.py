"""Check a shards folder end to end: every file against the manifest and its index, every document decoded.

With the original input it also proves the round trip: the set of decoded documents equals the set of
readable input documents, and no text is both in training and held-out shards. Texts are compared by a
128-bit hash, so memory stays small.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash
from tokenizers import Tokenizer

from pipeline.shards.format import HELDOUT_DIR, ShardError, ShardManifest, check_shard, open_tokens, read_index
from pipeline.tokenize.inputs import discover_inputs, iter_texts

DECODE_BATCH = 1000


def iter_documents(shards_dir: str | Path, split: str | None = None):
    """Yield ``(split, file, document number, token ids without EOS)`` for every document of the shards."""
    root = Path(shards_dir)
    manifest = ShardManifest.load(root)
    dtype, eos_id = manifest.token_dtype, manifest.eos_id
    for name, entry in sorted(manifest.splits.items()):
        if split is not None and name != split and not (split == HELDOUT_DIR and name.startswith(f"{HELDOUT_DIR}/")):
            continue
        for item in entry.files:
            path = root / item.path
            tokens = open_tokens(path, dtype, item.tokens)
            ends = read_index(path, item.documents)
            check_shard(tokens, ends, path, eos_id)
            start = 0
            for number, end in enumerate(ends.tolist()):
                yield name, item.path, number, tokens[start : end - 1]
                start = end


def read_document(
    shards_dir: str | Path, relative_path: str, number: int, manifest: ShardManifest | None = None
) -> np.ndarray:
    """Token ids (EOS dropped) of document ``number`` of one shard file."""
    manifest = manifest or ShardManifest.load(shards_dir)
    path = Path(shards_dir) / relative_path
    tokens = open_tokens(path, manifest.token_dtype)
    ends = read_index(path)
    start = int(ends[number - 1]) if number else 0
    return tokens[start : int(ends[number]) - 1]


def load_shard_tokenizer(shards_dir: str | Path) -> Tokenizer:
    """The tokenizer the shards were written with (the file the manifest's ``tokenizer.path`` names)."""
    manifest = ShardManifest.load(shards_dir)
    if manifest.tokenizer_info.path is None:
        raise ShardError(f"{manifest.path}: the tokenizer entry names no file (tokenizer.path)")
    return Tokenizer.from_file(str(Path(shards_dir) / manifest.tokenizer_info.path))


@dataclass(frozen=True)
class InputCheck:
    """The round trip against the tokenized input (``verify_shards(..., input_path)``)."""

    input_distinct_texts: int  # distinct texts in the input
    missing_from_shards: int  # input texts decoded from no shard
    not_in_input: int  # decoded texts the input does not hold
    downsampled_sources: list[str]  # sources mixed below their natural size (they leave texts out legitimately)


@dataclass(frozen=True)
class ShardCheck:
    """What ``verify_shards`` found; ``to_dict`` is the JSON ``tokenmill shards verify`` prints."""

    documents: dict[str, int]  # documents decoded, per kind (train, heldout)
    distinct_texts: dict[str, int]  # distinct decoded texts, per kind
    train_heldout_overlap: int  # texts in both training and held-out shards
    problems: list[str]  # the failed checks, worded
    input: InputCheck | None  # the comparison with the input, when one was given

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "documents": self.documents,
            "distinct_texts": self.distinct_texts,
            "train_heldout_overlap": self.train_heldout_overlap,
            "problems": self.problems,
        }
        if self.input is not None:
            data.update(asdict(self.input))
        data["ok"] = self.ok
        return data


def verify_shards(shards_dir: str | Path, input_path: str | Path | None = None) -> ShardCheck:
    """Decode every document; with ``input_path`` compare against the input's texts. ``ok`` is False when
    any check failed (``problems`` says which)."""
    tokenizer = load_shard_tokenizer(shards_dir)
    hashes: dict[str, set[bytes]] = {"train": set(), "heldout": set()}
    counts = {"train": 0, "heldout": 0}
    batch: list[tuple[str, np.ndarray]] = []

    def flush() -> None:
        texts = tokenizer.decode_batch([ids.tolist() for _, ids in batch], skip_special_tokens=False)
        for (kind, _), text in zip(batch, texts, strict=True):
            hashes[kind].add(xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass")))
        batch.clear()

    for name, _path, _number, ids in iter_documents(shards_dir):
        kind = "train" if name == "train" else "heldout"
        counts[kind] += 1
        batch.append((kind, ids))
        if len(batch) >= DECODE_BATCH:
            flush()
    if batch:
        flush()

    overlap = hashes["train"] & hashes["heldout"]
    problems: list[str] = []
    if overlap:
        problems.append(f"{len(overlap)} texts are in both training and held-out shards")
    checked = None
    if input_path is not None:
        expected = _input_hashes(input_path)
        decoded = hashes["train"] | hashes["heldout"]
        missing, extra = len(expected - decoded), len(decoded - expected)
        sources = ShardManifest.load(shards_dir).sources
        downsampled = sorted(name for name, entry in sources.items() if entry.repeats is not None and entry.repeats < 1)
        checked = InputCheck(len(expected), missing, extra, downsampled)
        if missing and not downsampled:  # a source mixed below its natural size legitimately leaves texts out
            problems.append(f"{missing} input texts are in no shard")
        if extra:
            problems.append(f"{extra} decoded texts are not in the input (lossy tokenizer or wrong input)")
    distinct = {k: len(v) for k, v in hashes.items()}
    return ShardCheck(counts, distinct, len(overlap), problems, checked)


def _input_hashes(input_path: str | Path) -> set[bytes]:
    plan = discover_inputs(input_path)
    return {
        xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))
        for kind, files in plan.files.items()
        for rel in files
        for _source, text in iter_texts(plan, kind, rel)
    }
