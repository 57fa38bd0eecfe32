"""The token shard format (datatrove's layout) and the manifest fingerprint, shared by writer and reader.

``NAME.ds``: token ids, little-endian ``uint16`` (vocabulary ≤ 65,536) or ``uint32``, each document followed
by the EOS id. ``NAME.ds.index``: little-endian ``uint64`` cumulative end offsets, in tokens, one per document
(the EOS included), so document *i* spans ``[index[i-1], index[i])``. This is what datatrove's
``DocumentTokenizer`` writes and ``DatatroveFolderDataset`` / nanotron read.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, astuple, dataclass, field, fields
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


def numpy_dtype(name: object) -> np.dtype:  # a manifest's value, checked here
    if name not in ("uint16", "uint32"):
        raise ShardError(f"unknown token dtype {name!r} (uint16 or uint32)")
    return np.dtype("<u2" if name == "uint16" else "<u4")


def write_shard(path: Path, tokens: np.ndarray, doc_ends: np.ndarray) -> None:
    """Write ``path`` and ``path.index`` (both through a temporary name, so a crash leaves no half file)."""
    for target, array in ((path, tokens), (Path(f"{path}{INDEX_SUFFIX}"), doc_ends.astype(INDEX_DTYPE, copy=False))):
        with atomic_open(target, "wb") as handle:
            handle.write(np.ascontiguousarray(array).data.cast("B"))


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


def _number(value: Any) -> int | float | None:
    """A JSON number as written (int stays int, so rendered counts do not change); None for anything else."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    """A JSON count (an int; None for anything else)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class SplitCounts:
    """Documents or tokens of one source per split: its own ``train`` and ``heldout`` documents and what the
    train shards hold of it after the mix (``mixed``). A figure the entry does not record is None."""

    train: int | float | None = None
    heldout: int | float | None = None
    mixed: int | float | None = None

    @classmethod
    def from_json(cls, data: Any) -> SplitCounts:
        data = _object(data)
        return cls(_number(data.get("train")), _number(data.get("heldout")), _number(data.get("mixed")))


@dataclass(frozen=True)
class RoutedCounts:
    """``sources.<target>.routed_from.<origin>``: documents and tokens (train + held out) another source routed
    into this one (classify ``mode: route``)."""

    documents: int
    tokens: int


@dataclass(frozen=True)
class LanguageStats:
    """``sources.<name>.languages.<lang>``: documents of that language and their bytes per token."""

    documents: int | float | None
    bytes_per_token: Any  # rendered as written (a rounded float, or None for an empty language)


@dataclass(frozen=True)
class ShardFile:
    """One ``splits.<split>.files`` item: a ``.ds`` file (path relative to the shards folder) and its counts."""

    path: str
    tokens: int
    documents: int


@dataclass(frozen=True)
class Split:
    """``splits.<name>``: ``train`` or ``heldout/<source>``, its files in manifest order and its totals."""

    name: str
    files: tuple[ShardFile, ...]
    documents: int
    tokens: int

    @classmethod
    def from_json(cls, name: str, data: Any) -> Split:
        data = _object(data)
        try:
            files = tuple(
                ShardFile(str(f["path"]), int(f["tokens"]), int(f["documents"])) for f in data.get("files") or []
            )
            return cls(name, files, int(data.get("documents") or 0), int(data.get("tokens") or 0))
        except (KeyError, TypeError, ValueError) as error:  # a reader cannot find the files: say which split
            raise ShardError(f"splits.{name}: a file entry needs path, tokens and documents ({error!r})") from None


@dataclass(frozen=True)
class Totals:
    """``totals``: tokens and documents of the train split (after the mix) and of all held-out splits."""

    train_tokens: int | None = None
    train_documents: int | None = None
    heldout_tokens: int | None = None
    heldout_documents: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> Totals:
        data = _object(data)
        return cls(**{f.name: _count(data.get(f.name)) for f in fields(cls)})

    def __bool__(self) -> bool:
        """False when the manifest records no totals (a renderer then leaves the total row out)."""
        return any(value is not None for value in astuple(self))

    def to_json(self) -> dict[str, int]:
        """The recorded totals by name, in the manifest's order (what report.json's run summary holds)."""
        return {key: value for key, value in asdict(self).items() if value is not None}


@dataclass(frozen=True)
class TokenizerInfo:
    """The manifest's ``tokenizer`` entry as readers need it: the file (relative to the shards folder), whether
    this run trained it, its hash, vocabulary and EOS. A field the entry lacks is None."""

    path: str | None = None
    trained: bool | None = None
    sha256: str | None = None
    vocab_size: int | None = None
    eos_token: str | None = None
    eos_id: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> TokenizerInfo:
        data = _object(data)
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})


@dataclass(frozen=True)
class SourceEntry:
    """One ``sources.<name>`` entry of the manifest (``pipeline.tokenize.run._source_entry`` writes it).

    ``train``/``mixed``/``unique`` are the token counts as floats (the plan's arithmetic); ``tokens`` and
    ``documents`` are the per-split counts as written (the renderers' figures). Every key but ``tokens`` and
    ``unique_tokens`` stays in ``extra`` as written, and the typed accessors below read it leniently: a key that
    is missing or of another type reads as None (or empty), so keys added by later stages (e.g. ``routed_from``)
    or a hand-written entry never make a manifest unreadable.
    """

    name: str
    train: float | None = None  # curated unique tokens of the source
    mixed: float | None = None  # what the train shards hold after up/down-sampling
    unique: float | None = None  # a hand-written ``unique_tokens`` (wins over the counts)
    extra: dict[str, Any] = field(default_factory=dict)
    tokens: SplitCounts = field(default_factory=SplitCounts)

    @classmethod
    def from_json(cls, name: str, entry: Any) -> SourceEntry:
        if not isinstance(entry, dict):
            return cls(name)
        tokens = SplitCounts.from_json(entry.get("tokens"))

        def number(value: Any) -> float | None:
            return None if _number(value) is None else float(value)

        return cls(
            name,
            train=number(tokens.train),
            mixed=number(tokens.mixed),
            unique=number(entry.get("unique_tokens")),
            extra={k: v for k, v in entry.items() if k not in ("tokens", "unique_tokens")},
            tokens=tokens,
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

    @property
    def documents(self) -> SplitCounts:
        return SplitCounts.from_json(self.extra.get("documents"))

    @property
    def mode(self) -> str | None:
        """How the mix sized this source (``weight``, ``epochs`` or ``natural``)."""
        mode = self.extra.get("mode")
        return mode if isinstance(mode, str) else None

    @property
    def weight(self) -> int | float | None:
        return _number(self.extra.get("weight"))

    @property
    def epochs(self) -> int | float | None:
        return _number(self.extra.get("epochs"))

    @property
    def requested_share(self) -> int | float | None:
        return _number(self.extra.get("requested_share"))

    @property
    def achieved_share(self) -> int | float | None:
        return _number(self.extra.get("achieved_share"))

    @property
    def repeats(self) -> int | float | None:
        """mixed / train tokens, rounded: above 1 upsampled, below 1 downsampled."""
        return _number(self.extra.get("repeats"))

    @property
    def bytes_per_token(self) -> int | float | None:
        return _number(self.extra.get("bytes_per_token"))

    @property
    def skipped(self) -> dict[str, Any]:
        """Documents the tokenizer skipped, by reason."""
        return _object(self.extra.get("skipped"))

    @property
    def languages(self) -> dict[str, LanguageStats]:
        return {
            lang: LanguageStats(_number(stats.get("documents")), stats.get("bytes_per_token"))
            for lang, stats in _object(self.extra.get("languages")).items()
            if isinstance(stats, dict)
        }

    @property
    def routed_from(self) -> dict[str, RoutedCounts]:
        """origin → what it routed into this source; origins without whole counts are left out (a malformed
        entry is tolerated, not fatal: the routed section is a report, not a check)."""
        found = {}
        for origin, counts in sorted(_object(self.extra.get("routed_from")).items()):  # routing.ROUTED_FROM
            documents, tokens = _number(_object(counts).get("documents")), _number(_object(counts).get("tokens"))
            if tokens is not None:
                found[origin] = RoutedCounts(int(documents or 0), int(tokens))
        return found


@dataclass(frozen=True)
class ShardManifest:
    """The shard ``manifest.json``: the contract between the tokenize stage (which writes it) and training, the
    plan and the renderers (which read it through this type, not by string keys).

    ``load`` checks a shards folder's manifest as the reader needs it (fields, fingerprint); ``read`` accepts
    any JSON object, e.g. a hand-written ``{"unique_tokens": ...}`` given to the plan. ``raw`` is the JSON.
    """

    path: Path | None
    raw: dict[str, Any]

    @classmethod
    def from_dict(cls, data: dict[str, Any] | ShardManifest, path: str | Path | None = None) -> ShardManifest:
        """A manifest already in memory: what ``run_tokenize`` (and the tokenize task) returns. A
        ``ShardManifest`` is returned as it is, so a renderer can be handed either."""
        if isinstance(data, ShardManifest):
            return data
        if not isinstance(data, dict):
            raise ShardError(f"a shard manifest is a JSON object, not {type(data).__name__}")
        return cls(Path(path) if path is not None else None, data)

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
        known = [count for count in counts if count is not None]
        if counts and len(known) == len(counts):
            return sum(known)
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
    def tokenizer_info(self) -> TokenizerInfo:
        return TokenizerInfo.from_json(self.raw.get("tokenizer"))

    @property
    def train_tokens(self) -> int | None:
        """``totals.train_tokens``: tokens the train split holds."""
        return self.totals.train_tokens

    @property
    def heldout_splits(self) -> list[str]:
        """The held-out split names (``heldout/<source>``), sorted."""
        return sorted(split for split in self.raw.get("splits", {}) if split.startswith("heldout/"))

    @property
    def dtype(self) -> str | None:
        """The token dtype's name (``uint16`` or ``uint32``) as recorded."""
        dtype = self.raw.get("dtype")
        return dtype if isinstance(dtype, str) else None

    @property
    def token_dtype(self) -> np.dtype:
        """The numpy dtype of the ``.ds`` files; ShardError for an unknown or missing one."""
        return numpy_dtype(self.raw.get("dtype"))

    @property
    def eos_id(self) -> int | None:
        return self.tokenizer.get("eos_id")

    @property
    def splits(self) -> dict[str, Split]:
        """Every split by name, in manifest order (``train`` first, then ``heldout/<source>``)."""
        return {name: Split.from_json(name, entry) for name, entry in _object(self.raw.get("splits")).items()}

    def split_files(self, split: str, where: str | Path) -> list[ShardFile]:
        """The files of ``split`` (``heldout``: every held-out split), sorted by path: the order
        ``DatatroveFolderDataset`` lists them in. ShardError (naming ``where``) for an unknown split."""
        splits = self.splits
        if split == HELDOUT_DIR:
            names = [name for name in self.heldout_splits if name in splits]
        elif split in splits:
            names = [split]
        else:
            raise ShardError(f"{where}: no split {split!r} (has: {', '.join(sorted(splits))})")
        return sorted((f for name in names for f in splits[name].files), key=lambda f: f.path)

    @property
    def totals(self) -> Totals:
        return Totals.from_json(self.raw.get("totals"))

    @property
    def warnings(self) -> list[str]:
        """What the tokenize stage warns about (many repeats, round-trip mismatches, skips)."""
        return [str(warning) for warning in self.raw.get("warnings") or []]
