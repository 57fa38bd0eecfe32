"""Decontamination: drop (or cut) documents that share a 13-word passage with an evaluation set.

GPT-3 (Brown et al. 2020, appendix C) and NeMo Curator's task decontamination remove training documents that
share an n-gram of 13 words, after normalisation, with a benchmark the model will be measured on. This stage
does the same against the eval sets a recipe names:

* **Normalisation** (document and eval items alike): lower case, every character that is neither a letter,
  a digit nor whitespace removed (the underscore too), words split on whitespace.
* **Items**: a JSONL row (``fields`` joined, e.g. question + answer) or a line of a text file. An item of at
  least ``ngram`` words contributes its ``ngram``-word windows; a shorter one matches whole, provided it has
  ``min_item_words`` words (NeMo Curator's ``min_ngram_size``, 8: a two-word answer such as "Paris France"
  would otherwise drop every page that names it). Shorter items are ignored and counted.
* **mode: drop**: a document with any match is dropped, rule ``contaminated_<eval set>``, score the number
  of matched windows, with the eval set and the first matched item's id in the drop row.
* **mode: cut**: each matched span is removed with ``cut_margin`` (200) characters either side, as GPT-3 and
  NeMo Curator do; the document is dropped when more than ``max_matches`` (10) spans matched
  (``contaminated_too_many_matches``) or fewer than ``min_remaining_chars`` (200) characters remain
  (``contaminated_too_short``). A cut document records its cuts in ``metadata["decontaminate"]``.

Why hand-written rather than datatrove's ``NGramsDecontFilter`` (measured, ``benchmarks/decontam_bench.py``,
docs/decontaminate.md): its ``NGramsDecontIndexer`` cannot be constructed without lighteval (not a dependency)
and reads eval sets as documents or lighteval tasks, not a team's JSONL fields; its filter hashes every
n-gram string with xxhash in a Python loop (385 documents of 2 KB per CPU-second against 10,000 eval items,
where this stage does 9,350), has no cut mode, and does not name the matched item. Here the eval windows are
hashed once per run: the parent builds the index before any rank starts (``DecontaminateStage.prepare_index``)
into ``<run>/stages/decontaminate/eval-index-<fingerprint>.npz`` (arrays only, no pickle), keyed by the eval
sets' content and the settings, and every rank (and every source of the run) loads that file; a stage used
outside a run builds it itself in ``setup``. A document's windows are hashed with a polynomial rolling hash
over word ids (prefix sums: a few NumPy operations per document whatever the window length), rejected in bulk
by one set ``isdisjoint``, and a hit is confirmed word by word, so a hash collision never drops a document.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
import string
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from datatrove.data import Document

from pipeline import checked_arrays
from pipeline.base import AccountedStep, Drop
from pipeline.curate.config import DecontaminateConfig, EvalSetConfig
from pipeline.read.common import InputError

_NOT_WORD = re.compile(r"[^\w\s]|_")
_ASCII_PUNCT = string.punctuation.encode()
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
INDEX_FORMAT = "tokenmill-eval-index/1"
logger = logging.getLogger(__name__)


def normalize_words(text: str) -> list[str]:
    """Lower-cased words with every non-letter, non-digit character removed (see module docstring).

    ASCII text takes a byte-level ``translate`` (11 µs instead of 56 µs for 2 KB, benchmarks/micro_timings.py);
    the regex path gives the same words and is used for the rest.
    """
    low = text.lower()
    if low.isascii():
        return low.encode().translate(None, _ASCII_PUNCT).decode().split()
    return _NOT_WORD.sub("", low).split()


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans in ``text`` of the words ``normalize_words`` returns, in order (only for cut mode)."""
    spans = []
    for match in re.finditer(r"\S+", text):
        if _NOT_WORD.sub("", match.group().lower()):
            spans.append(match.span())
    return spans


class EvalSetError(InputError):
    """An eval set that cannot be read: missing file, bad JSON, a row without any of the fields (an
    ``InputError``: the CLI reports it as one ``error:`` line)."""


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _field_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "\n".join(_field_text(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(_field_text(v) for v in value.values())
    return str(value)


def read_eval_set(config: EvalSetConfig) -> list[tuple[str, str]]:
    """``[(item id, text)]`` of one eval set; a JSONL row is its ``fields`` joined by newlines."""
    path = Path(config.path)
    if not path.is_file():
        raise EvalSetError(f"{path}: eval set not found")
    name = path.name.removesuffix(".gz")
    items: list[tuple[str, str]] = []
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                if not name.endswith(JSONL_SUFFIXES):
                    items.append((str(number), line.rstrip("\n")))
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise EvalSetError(f"{path}:{number}: not JSON ({error.msg})") from None
                if not isinstance(row, dict) or not any(f in row for f in config.fields):
                    raise EvalSetError(f"{path}:{number}: none of the fields {config.fields} in this row")
                text = "\n".join(t for t in (_field_text(row.get(f)) for f in config.fields) if t)
                items.append((str(row.get(config.id_field, number)), text))
    except UnicodeDecodeError as error:
        raise EvalSetError(f"{path}: not UTF-8 text ({error.reason})") from None
    return items


_RNG = np.random.default_rng(0x13_9E37_79B9)
#: the base of the rolling hash: odd, so it is invertible modulo 2**64
_BASE = np.uint64(int(_RNG.integers(1 << 62, 1 << 63)) | 1)
_BASE_INV = np.uint64(pow(int(_BASE), -1, 1 << 64))


class _Powers:
    """``base**i`` and ``base**-i`` modulo 2**64 for i < n, grown on demand."""

    def __init__(self) -> None:
        self.up = np.ones(1, dtype=np.uint64)
        self.down = np.ones(1, dtype=np.uint64)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if n > len(self.up):
            size = max(n, 2 * len(self.up))
            with np.errstate(over="ignore"):
                self.up = np.cumprod(np.full(size, _BASE, dtype=np.uint64)) * _BASE_INV
                self.down = np.cumprod(np.full(size, _BASE_INV, dtype=np.uint64)) * _BASE
        return self.up[:n], self.down[:n]


def window_hashes(ids: np.ndarray, n: int, powers: _Powers) -> np.ndarray:
    """Hash of every ``n``-word window of ``ids``: sum_j ids[i+j] * base**j modulo 2**64, from prefix sums."""
    m = len(ids) - n + 1
    if m <= 0:
        return np.empty(0, dtype=np.uint64)
    up, down = powers.get(len(ids))
    with np.errstate(over="ignore"):
        prefix = np.concatenate(([np.uint64(0)], np.cumsum(ids * up, dtype=np.uint64)))
        return (prefix[n:] - prefix[:m]) * down[:m]


@dataclass
class Match:
    """Eval windows found in one document: word ranges ``[start, end)`` and the item of the first one."""

    eval_set: str
    item: str
    ranges: list[tuple[int, int]] = field(default_factory=list)


class EvalIndex:
    """The eval windows, hashed once per run (``DecontaminateStage.prepare_index``; see module docstring).

    Two tables: every ``ngram``-word window of the items that long, and the first ``min_item_words`` words of
    each shorter item (whose whole length is then checked). Each is a Python ``set`` of hashes for the common
    case -- a document with no hit, answered by one ``isdisjoint`` (measured once with timeit on a 2-core VM: 13
    µs for 340 windows against
    16,000 hashes and 21 µs against 500,000, where NumPy's ``searchsorted`` took 30 and 90 µs) -- and, for
    hits, a sorted hash array with the item and offset of each hash.
    """

    def __init__(self, config: DecontaminateConfig):
        self.ngram = config.ngram
        self.prefix = min(config.min_item_words, config.ngram)
        self.vocab: dict[str, int] = {}
        self.powers = _Powers()
        self.set_names: list[str] = []
        self.item_ids: list[str] = []
        self.item_set: list[int] = []
        self.item_words: list[np.ndarray] = []
        self.stats: dict[str, dict[str, int]] = {}
        collected: dict[bool, tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]] = {
            True: ([], [], []),
            False: ([], [], []),
        }
        for set_index, eval_set in enumerate(config.sets()):
            name = eval_set.set_name()
            self.set_names.append(name)
            counts = {"items": 0, "indexed": 0, "too_short": 0, "windows": 0}
            for item_id, text in read_eval_set(eval_set):
                counts["items"] += 1
                words = normalize_words(text)
                if len(words) < self.prefix:
                    counts["too_short"] += 1
                    continue
                ids = np.fromiter((self.vocab.setdefault(w, len(self.vocab) + 1) for w in words), np.uint64, len(words))
                long_item = len(ids) >= self.ngram
                hashes = (
                    window_hashes(ids, self.ngram, self.powers)
                    if long_item
                    else window_hashes(ids[: self.prefix], self.prefix, self.powers)
                )
                item = len(self.item_ids)
                self.item_ids.append(item_id)
                self.item_set.append(set_index)
                self.item_words.append(ids)
                lists = collected[long_item]
                lists[0].append(hashes)
                lists[1].append(np.full(len(hashes), item, dtype=np.int64))
                lists[2].append(np.arange(len(hashes), dtype=np.int64))
                counts["indexed"] += 1
                counts["windows"] += len(hashes)
            self.stats[name] = counts
        #: (window length, whole item?) -> (set of hashes, sorted hashes, item of each, offset of each)
        self.tables: list[tuple[int, bool, set[int], np.ndarray, np.ndarray, np.ndarray]] = [
            self._table(long_item, hash_lists, items, offsets)
            for long_item, (hash_lists, items, offsets) in collected.items()
            if hash_lists
        ]

    def _table(
        self, long_item: bool, hash_lists: list[np.ndarray], items: list[np.ndarray], offsets: list[np.ndarray]
    ) -> tuple[int, bool, set[int], np.ndarray, np.ndarray, np.ndarray]:
        """One table from the items' window hashes: its window length, whether a hit must be checked against the
        whole item (a short item), a set for the common no-hit answer, and the hashes sorted with their items
        and offsets for the hits."""
        all_hashes, all_items = np.concatenate(hash_lists), np.concatenate(items)
        all_offsets = np.concatenate(offsets)
        # several short items may share their first words: keep them all (each is checked in full)
        order = np.argsort(all_hashes, kind="stable")
        sorted_hashes = all_hashes[order]
        length = self.ngram if long_item else self.prefix
        return length, not long_item, set(sorted_hashes.tolist()), sorted_hashes, all_items[order], all_offsets[order]

    def save(self, path: Path, card: dict) -> None:
        """Write the index as plain arrays (``pipeline.checked_arrays``: no pickle, checked by SHA-256)."""
        header = {
            "ngram": self.ngram,
            "prefix": self.prefix,
            "set_names": self.set_names,
            "item_ids": self.item_ids,
            "item_set": self.item_set,
            "stats": self.stats,
            "tables": [[length, whole] for length, whole, *_rest in self.tables],
        }
        words = sorted(self.vocab, key=self.vocab.__getitem__)  # ids 1, 2, … in order; words hold no whitespace
        arrays = {
            "vocab": np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8),
            "item_words": np.concatenate(self.item_words) if self.item_words else np.empty(0, np.uint64),
            "item_lengths": np.array([len(w) for w in self.item_words], dtype=np.int64),
        }
        for number, (_length, _whole, _members, hashes, items, offsets) in enumerate(self.tables):
            arrays.update({f"hashes_{number}": hashes, f"items_{number}": items, f"offsets_{number}": offsets})
        checked_arrays.write_arrays(path, INDEX_FORMAT, header, arrays, card)

    @classmethod
    def load(cls, path: Path) -> EvalIndex | None:
        """The index ``save`` wrote to ``path``; ``None`` when missing, changed or not such a file (rebuild)."""
        stored = checked_arrays.read_arrays(path, INDEX_FORMAT)
        if stored is None:
            return None
        header, arrays = stored
        try:
            index = cls.__new__(cls)
            index.ngram, index.prefix = int(header["ngram"]), int(header["prefix"])
            words = bytes(arrays["vocab"]).decode("utf-8")
            index.vocab = {word: n for n, word in enumerate(words.split("\n"), start=1)} if words else {}
            index.powers = _Powers()
            index.set_names = [str(name) for name in header["set_names"]]
            index.item_ids = [str(item) for item in header["item_ids"]]
            index.item_set = [int(number) for number in header["item_set"]]
            flat = np.asarray(arrays["item_words"], dtype=np.uint64)
            bounds = np.concatenate(([0], np.cumsum(np.asarray(arrays["item_lengths"], dtype=np.int64)))).tolist()
            index.item_words = [flat[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
            index.stats = {str(k): {str(a): int(b) for a, b in v.items()} for k, v in header["stats"].items()}
            index.tables = []
            for number, (length, whole) in enumerate(header["tables"]):
                hashes = np.asarray(arrays[f"hashes_{number}"], dtype=np.uint64)
                items = np.asarray(arrays[f"items_{number}"], dtype=np.int64)
                offsets = np.asarray(arrays[f"offsets_{number}"], dtype=np.int64)
                index.tables.append((int(length), bool(whole), set(hashes.tolist()), hashes, items, offsets))
        except (KeyError, TypeError, ValueError, AttributeError, UnicodeDecodeError):
            return None
        return index

    @property
    def windows(self) -> int:
        return sum(len(t[2]) for t in self.tables)

    def doc_ids(self, words: list[str]) -> np.ndarray:
        get = self.vocab.get
        return np.fromiter((get(w, 0) for w in words), np.uint64, len(words))

    def find(self, words: list[str], first_only: bool = False) -> tuple[dict[int, Match], int]:
        """``(matches per eval set index, windows whose hash is indexed)`` in a document's normalised words.

        ``first_only``: stop at the first confirmed match (drop mode needs no more); the window count is then
        that of the hashes alone."""
        found: dict[int, Match] = {}
        hits = 0
        if not self.tables or len(words) < self.prefix:
            return found, hits
        ids = self.doc_ids(words)
        for length, whole, members, sorted_hashes, items, offsets in self.tables:
            hashes = window_hashes(ids, length, self.powers).tolist()
            if members.isdisjoint(hashes):
                continue
            for start, value in enumerate(hashes):
                if value not in members:
                    continue
                hits += 1
                if first_only and found:
                    continue
                slot = int(np.searchsorted(sorted_hashes, np.uint64(value)))
                while slot < len(sorted_hashes) and int(sorted_hashes[slot]) == value:
                    item, offset = int(items[slot]), int(offsets[slot])
                    slot += 1
                    expected = self.item_words[item]
                    expected = expected if whole else expected[offset : offset + length]
                    span = len(expected)
                    if not np.array_equal(ids[start : start + span], expected):
                        continue  # a hash collision, or a short item whose later words differ
                    set_index = self.item_set[item]
                    match = found.get(set_index)
                    if match is None:
                        match = found[set_index] = Match(self.set_names[set_index], self.item_ids[item])
                    match.ranges.append((start, start + span))
                    break
        return found, hits


def index_fingerprint(config: DecontaminateConfig) -> str:
    """What the eval index depends on: each eval set's bytes (SHA-256) and reading settings, the window
    settings, and this module's code (a change to the hashing makes a new file)."""
    parts: list[Any] = [config.ngram, config.min_item_words, hashlib.sha256(Path(__file__).read_bytes()).hexdigest()]
    for eval_set in config.sets():
        path = Path(eval_set.path)
        # a missing file: the stage names it when it starts (EvalSetError); the fingerprint need not fail first
        content = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
        parts.append([eval_set.set_name(), eval_set.fields, eval_set.id_field, Path(eval_set.path).name, content])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:20]


def merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching ``[start, end)`` ranges joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


class DecontaminateStage(AccountedStep):
    """Drop or cut documents sharing an ``ngram``-word window with an eval set (module docstring)."""

    stage = "decontaminate"
    name = "🧪 Decontaminate (13-gram overlap with eval sets)"

    def __init__(self, config: DecontaminateConfig, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config
        self._index: EvalIndex | None = None
        self.index_path: str | None = None  # set by prepare_index: the run's index file, loaded by every rank
        for eval_set in config.sets():  # before any rank starts: a typo in a path is one clear error
            if not Path(eval_set.path).is_file():
                raise EvalSetError(f"{eval_set.path}: eval set not found (stages.decontaminate.eval_sets)")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_index"] = None  # each rank builds its own; the arrays are not shipped to workers
        return state

    def prepare_index(self, folder: str | Path) -> Path:
        """Hash the eval sets once for the whole run: build the index into ``folder`` (unless a file with the
        same fingerprint is there already) and have every rank load it; returns the file.

        The file name carries ``index_fingerprint``: another eval set content or setting gets another file,
        and a run that is resumed or curates a second source reuses the first one's. Written to a temporary
        name and renamed, so a killed build never leaves a half file. It holds NumPy arrays only and is
        loaded without pickle, checked against the SHA-256 in its card ``<name>.json`` (which also holds the
        per-set counts): a file that does not match is rebuilt, with a warning (``pipeline.checked_arrays``).
        """
        folder = Path(folder)
        path = folder / f"eval-index-{index_fingerprint(self.config)}{checked_arrays.SUFFIX}"
        if EvalIndex.load(path) is None:
            if path.exists():
                logger.warning("%s does not match its content hash (%s): rebuilt", path, checked_arrays.card_path(path))

            started = time.process_time()
            index = EvalIndex(self.config)
            seconds = time.process_time() - started
            card = {"eval_sets": index.stats, "windows": index.windows, "build_cpu_seconds": round(seconds, 3)}
            index.save(path, card)
        self.index_path = str(path)
        return path

    def setup(self) -> None:
        if self._index is not None:
            return
        loaded = EvalIndex.load(Path(self.index_path)) if self.index_path is not None else None
        if loaded is None:  # outside a run, or a file changed since prepare_index checked it: build our own
            if self.index_path is not None:
                self.stat_update("eval_index_rebuilt")
            loaded = EvalIndex(self.config)
        self._index = loaded
        for name, counts in self._index.stats.items():
            for key, value in counts.items():
                self.stat_update(f"eval_{name}_{key}", value=value)

    @property
    def index(self) -> EvalIndex:
        self.setup()
        assert self._index is not None
        return self._index

    def process(self, doc: Document) -> Drop | None:
        cfg = self.config
        found, hits = self.index.find(normalize_words(doc.text), first_only=cfg.mode == "drop")
        if not found:
            return None
        if cfg.mode == "drop":
            match = next(iter(found.values()))
            windows = hits
            extra = {"eval_set": match.eval_set, "item": match.item}
            return Drop(rule=f"contaminated_{match.eval_set}", score=float(windows), extra=extra)
        return self._cut(doc, found)

    def _cut(self, doc: Document, found: dict[int, Match]) -> Drop | None:
        cfg = self.config
        spans = word_spans(doc.text)
        word_ranges = merge([r for m in found.values() for r in m.ranges])
        sets = {m.eval_set: m.item for m in found.values()}
        matches = {m.eval_set: len(m.ranges) for m in found.values()}  # per eval set, for the report
        if len(word_ranges) > cfg.max_matches:
            extra = {"eval_sets": sets, "matches": matches}
            return Drop(rule="contaminated_too_many_matches", score=float(len(word_ranges)), extra=extra)
        text = doc.text
        chars = merge(
            [
                (max(0, spans[start][0] - cfg.cut_margin), min(len(text), spans[end - 1][1] + cfg.cut_margin))
                for start, end in word_ranges
            ]
        )
        pieces, last = [], 0
        for start, end in chars:
            pieces.append(text[last:start].strip())
            last = end
        pieces.append(text[last:].strip())
        remaining = "\n\n".join(p for p in pieces if p)
        if len(remaining) < cfg.min_remaining_chars:
            extra = {"eval_sets": sets, "matches": matches}
            return Drop(rule="contaminated_too_short", score=float(len(remaining)), extra=extra)
        doc.text = remaining
        doc.metadata["decontaminate"] = {
            "cut": len(chars),
            "cut_chars": sum(e - s for s, e in chars),
            "eval_sets": sets,
            "matches": matches,
        }
        self.stat_update("cut_documents")
        return None


__all__ = [
    "DecontaminateStage",
    "EvalIndex",
    "EvalSetError",
    "index_fingerprint",
    "normalize_words",
]
