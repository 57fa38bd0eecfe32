"""The token shard format (datatrove's layout) and the manifest fingerprint, shared by writer and reader.

``NAME.ds``: token ids, little-endian ``uint16`` (vocabulary ≤ 65,536) or ``uint32``, each document followed
by the EOS id. ``NAME.ds.index``: little-endian ``uint64`` cumulative end offsets, in tokens, one per document
(the EOS included), so document *i* spans ``[index[i-1], index[i])``. This is what datatrove's
``DocumentTokenizer`` writes and ``DatatroveFolderDataset`` / nanotron read.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.atomic import atomic_open
from pipeline.errors import TokenmillError

INDEX_SUFFIX = ".index"
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
TRAIN_DIR = "train"
HELDOUT_DIR = "heldout"
INDEX_DTYPE = np.dtype("<u8")


class ShardError(TokenmillError, ValueError):
    """A shard or index file that is missing, truncated or inconsistent; the message names the file."""


def numpy_dtype(name: str) -> np.dtype:
    if name not in ("uint16", "uint32"):
        raise ShardError(f"unknown token dtype {name!r} (uint16 or uint32)")
    return np.dtype("<u2" if name == "uint16" else "<u4")


def write_shard(path: Path, tokens: np.ndarray, doc_ends: np.ndarray) -> None:
    """Write ``path`` and ``path.index`` (both through a temporary name, so a crash leaves no half file)."""
    for target, array in ((path, tokens), (Path(f"{path}{INDEX_SUFFIX}"), doc_ends.astype(INDEX_DTYPE, copy=False))):
        with atomic_open(target, "wb") as handle:
            handle.write(memoryview(np.ascontiguousarray(array)).cast("B"))


def open_tokens(path: Path, dtype: np.dtype, expected_tokens: int | None = None) -> np.ndarray:
    """Memory-map a ``.ds`` file as a plain ndarray (memmap slicing is several times slower)."""
    if not path.is_file():
        raise ShardError(f"{path}: shard file is missing")
    size = path.stat().st_size
    if size % dtype.itemsize:
        raise ShardError(f"{path}: {size} bytes is not a whole number of {dtype.itemsize}-byte tokens (truncated?)")
    if expected_tokens is not None and size != expected_tokens * dtype.itemsize:
        raise ShardError(
            f"{path}: holds {size // dtype.itemsize} tokens, the manifest says {expected_tokens} "
            "(truncated or replaced)"
        )
    if size == 0:
        return np.empty(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r").view(np.ndarray)


def read_index(path: Path, expected_documents: int | None = None) -> np.ndarray:
    index_path = Path(f"{path}{INDEX_SUFFIX}")
    if not index_path.is_file():
        raise ShardError(f"{index_path}: index file is missing")
    size = index_path.stat().st_size
    if size % INDEX_DTYPE.itemsize:
        raise ShardError(f"{index_path}: {size} bytes is not a whole number of uint64 offsets (truncated?)")
    if expected_documents is not None and size != expected_documents * INDEX_DTYPE.itemsize:
        raise ShardError(
            f"{index_path}: holds {size // 8} document ends, the manifest says {expected_documents} (truncated?)"
        )
    return np.fromfile(index_path, dtype=INDEX_DTYPE)


def check_shard(tokens: np.ndarray, ends: np.ndarray, path: Path, eos_id: int | None) -> None:
    """Index and tokens agree: offsets increase, the last one is the file's length, each document ends in EOS."""
    index_path = f"{path}{INDEX_SUFFIX}"
    if len(ends) == 0:
        if len(tokens):
            raise ShardError(f"{index_path}: empty index for a shard of {len(tokens)} tokens")
        return
    if int(ends[-1]) != len(tokens):
        raise ShardError(f"{index_path}: last document ends at {int(ends[-1])}, the shard has {len(tokens)} tokens")
    if ends[0] == 0 or (len(ends) > 1 and np.any(ends[1:] <= ends[:-1])):
        raise ShardError(f"{index_path}: document end offsets do not strictly increase (corrupt index)")
    if eos_id is not None:
        last = tokens[(ends - 1).astype(np.int64)]
        bad = np.flatnonzero(last != eos_id)
        if len(bad):
            raise ShardError(
                f"{path}: document {int(bad[0])} does not end with EOS id {eos_id} "
                f"({len(bad)} such documents; corrupt shard or index)"
            )


def fingerprint(manifest: dict[str, Any]) -> str:
    """Hash of what decides the token stream: tokenizer, dtype, EOS and every shard with its counts."""
    splits = manifest.get("splits", {})
    payload = {
        "tokenizer": manifest.get("tokenizer", {}).get("sha256"),
        "eos_id": manifest.get("tokenizer", {}).get("eos_id"),
        "dtype": manifest.get("dtype"),
        "files": sorted(
            (f["path"], f["tokens"], f["documents"]) for split in splits.values() for f in split.get("files", [])
        ),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def load_manifest(directory: str | Path) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise ShardError(f"{path}: manifest not found (is {directory} a tokenmill shards folder?)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ShardError(f"{path}: not valid JSON: {error}") from None
    for key in ("dtype", "tokenizer", "splits"):
        if key not in manifest:
            raise ShardError(f"{path}: missing field {key!r}")
    stored = manifest.get("fingerprint")
    if stored is not None and stored != fingerprint(manifest):
        raise ShardError(f"{path}: fingerprint {stored} does not match its contents (edited by hand?)")
    return manifest


@dataclass(frozen=True)
class SourceEntry:
    """One ``sources.<name>`` entry of the manifest. Only the token counts are typed; other keys (added by later
    stages, e.g. routing) are kept in ``extra`` and never make a manifest unreadable."""

    name: str
    train: float | None = None  # curated unique tokens of the source
    mixed: float | None = None  # what the train shards hold after up/down-sampling
    unique: float | None = None  # a hand-written ``unique_tokens`` (wins over the counts)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, name: str, entry: Any) -> SourceEntry:
        if not isinstance(entry, dict):
            return cls(name)
        tokens = entry.get("tokens") if isinstance(entry.get("tokens"), dict) else {}

        def number(value: Any) -> float | None:
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

        return cls(
            name,
            train=number(tokens.get("train")),
            mixed=number(tokens.get("mixed")),
            unique=number(entry.get("unique_tokens")),
            extra={k: v for k, v in entry.items() if k not in ("tokens", "unique_tokens")},
        )

    @property
    def unique_tokens(self) -> float | None:
        """Unique tokens of this source in the train shards: min(train, mixed) (a down-sampled source holds its
        mixed tokens, a repeated one its train tokens); None when the entry records no counts."""
        if self.unique is not None:
            return self.unique
        if self.train is None:
            return None
        return min(self.train, self.mixed) if self.mixed is not None else self.train


@dataclass(frozen=True)
class ShardManifest:
    """The shard ``manifest.json``: the contract between the tokenize stage (which writes it) and training, the
    plan and the renderers (which read it through this type, not by string keys).

    ``load`` checks a shards folder's manifest as the reader needs it (fields, fingerprint); ``read`` accepts
    any JSON object, e.g. a hand-written ``{"unique_tokens": ...}`` given to the plan. ``raw`` is the JSON.
    """

    path: Path
    raw: dict[str, Any]

    @classmethod
    def load(cls, directory: str | Path) -> ShardManifest:
        return cls(Path(directory) / MANIFEST, load_manifest(directory))

    @classmethod
    def read(cls, path: str | Path) -> ShardManifest:
        """A manifest file (or the folder holding one) without the shard checks. Raises ShardError."""
        path = Path(path)
        if path.is_dir():
            path = path / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ShardError(f"{path} not found") from None
        except (OSError, ValueError) as error:
            raise ShardError(f"{path}: not readable JSON: {error}") from None
        if not isinstance(data, dict):
            raise ShardError(f"{path}: expected a JSON object")
        return cls(path, data)

    @property
    def fingerprint(self) -> str:
        return self.raw.get("fingerprint") or ""

    @property
    def sources(self) -> dict[str, SourceEntry]:
        sources = self.raw.get("sources")
        if not isinstance(sources, dict):
            return {}
        return {name: SourceEntry.from_json(name, entry) for name, entry in sources.items()}

    @property
    def unique_tokens(self) -> float | None:
        """Unique training tokens: a top-level ``unique_tokens`` (hand-written) wins; else the sum over the
        sources, when every source records its counts; else None."""
        given = self.raw.get("unique_tokens")
        if isinstance(given, int | float) and not isinstance(given, bool):
            return float(given)
        counts = [entry.unique_tokens for entry in self.sources.values()]
        if counts and all(count is not None for count in counts):
            return sum(counts)  # type: ignore[arg-type]
        return None

    @property
    def vocab_size(self) -> int | None:
        tokenizer = self.raw.get("tokenizer")
        vocab = self.raw.get("vocab_size") or (tokenizer.get("vocab_size") if isinstance(tokenizer, dict) else None)
        return vocab if isinstance(vocab, int) and vocab > 0 else None

    @property
    def tokenizer(self) -> dict[str, Any]:
        """The tokenizer entry (``path``, ``sha256``, ``vocab_size``, ``eos_id``); empty when not recorded."""
        tokenizer = self.raw.get("tokenizer")
        return tokenizer if isinstance(tokenizer, dict) else {}

    @property
    def train_tokens(self) -> int | None:
        """``totals.train_tokens``: tokens the train split holds."""
        return (self.raw.get("totals") or {}).get("train_tokens")

    @property
    def heldout_splits(self) -> list[str]:
        """The held-out split names (``heldout/<source>``), sorted."""
        return sorted(split for split in self.raw.get("splits", {}) if split.startswith("heldout/"))
