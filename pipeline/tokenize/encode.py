"""Encoding in datatrove ranks: documents → token ids, written per source as unshuffled ``.ds`` parts.

datatrove's ``DocumentTokenizer`` writes the same ``.ds``/``.ds.index`` layout, but one file per rank for
every document it sees and nothing about each document; mixing needs each document's source, language,
UTF-8 size and a content hash (for the held-out split), so this step writes, per (source, rank):

  ``<work>/<source>/<group>_<rank>.ds`` + ``.ds.index``   token ids, each document followed by EOS
  ``<work>/<source>/<group>_<rank>.docs.npz``              per document: bytes, xxh3 hash, language number
  ``<work>/<source>/<group>_<rank>.meta.json``             counts, languages, skips, round-trip check

Documents are encoded ``batch_size`` at a time with ``encode_batch_fast`` (no offsets needed). The tokenizer's
own thread pool stays as the library sets it: switching it off inside ranks made no difference beyond the
noise of the shared 2-core machine (benchmarks/tokenize_bench.py measures both). Placeholder documents a reader
marked ``read_error`` and documents the tokenizer rejects are counted skips, never silent losses.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import chain
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from pipeline.shards.format import INDEX_SUFFIX, numpy_dtype

FLUSH_TOKENS = 1 << 24  # tokens held in memory per source before they are appended to the part file


class _SourcePart:
    """One source's output of one rank, appended to as batches arrive."""

    def __init__(self, folder: Path, stem: str, dtype: np.dtype):
        folder.mkdir(parents=True, exist_ok=True)
        self.base = folder / stem
        self.dtype = dtype
        self.pending: list[np.ndarray] = []
        self.pending_tokens = 0
        self.handle: BinaryIO | None = None
        self.lengths: list[int] = []
        self.nbytes: list[int] = []
        self.hashes: list[int] = []
        self.langs: list[int] = []
        self.languages: dict[str, int] = {}
        self.skipped: Counter[str] = Counter()
        self.skip_examples: dict[str, str] = {}
        self.checked = 0
        self.mismatched = 0
        # origin -> [documents, tokens] of the documents routed into this source (classify mode route)
        self.routed_from: dict[str, list[int]] = {}

    def add(self, tokens: np.ndarray, lengths: list[int], nbytes: list[int], hashes: list[int], langs: list[str]):
        self.pending.append(tokens)
        self.pending_tokens += len(tokens)
        self.lengths.extend(lengths)
        self.nbytes.extend(nbytes)
        self.hashes.extend(hashes)
        self.langs.extend(self.languages.setdefault(lang, len(self.languages)) for lang in langs)
        if self.pending_tokens >= FLUSH_TOKENS:
            self.flush()

    def skip(self, rule: str, example: str) -> None:
        self.skipped[rule] += 1
        self.skip_examples.setdefault(rule, example)

    def flush(self) -> None:
        handle = self.handle
        if handle is None:
            handle = self.handle = open(f"{self.base}.ds", "wb")  # noqa: SIM115 - closed in close()
        for array in self.pending:
            handle.write(array.data.cast("B"))
        self.pending, self.pending_tokens = [], 0

    def close(self) -> None:
        self.flush()
        assert self.handle is not None  # flush opened it
        self.handle.close()
        ends = np.cumsum(np.asarray(self.lengths, dtype=np.uint64), dtype=np.uint64)
        ends.astype("<u8").tofile(f"{self.base}.ds{INDEX_SUFFIX}")
        np.savez(
            f"{self.base}.docs.npz",
            nbytes=np.asarray(self.nbytes, dtype=np.uint64),
            hash=np.asarray(self.hashes, dtype=np.uint64),
            lang=np.asarray(self.langs, dtype=np.uint16),
        )
        meta = {
            "documents": len(self.lengths),
            "tokens": int(ends[-1]) if len(ends) else 0,
            "languages": sorted(self.languages, key=self.languages.__getitem__),
            "skipped": dict(self.skipped),
            "skip_examples": self.skip_examples,
            "roundtrip": {"checked": self.checked, "mismatched": self.mismatched},
            "routed_from": self.routed_from,
        }
        Path(f"{self.base}.meta.json").write_text(json.dumps(meta), encoding="utf-8")


class EncodeStep(PipelineStep):
    """Last step of the encode pipeline: a sink that writes each source's token ids for this rank."""

    name = "🔢 Encode (tokenmill)"
    type = "🔢 - TOKENIZER"

    def __init__(
        self,
        tokenizer_file: str,
        eos_id: int,
        dtype: str,
        work_dir: str,
        group: str,
        batch_size: int = 1000,
        verify_docs: int = 50,
    ):
        super().__init__()
        self.tokenizer_file = tokenizer_file
        self.eos_id = eos_id
        self.dtype = dtype
        self.work_dir = work_dir
        self.group = group
        self.batch_size = batch_size
        self.verify_docs = verify_docs

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(self.tokenizer_file)
        tokenizer.encode_special_tokens = True  # literal "<|endoftext|>" in a document stays text
        dtype = numpy_dtype(self.dtype)
        parts: dict[str, _SourcePart] = {}

        def part_for(source: str) -> _SourcePart:
            if source not in parts:
                parts[source] = _SourcePart(Path(self.work_dir) / source, f"{self.group}_{rank:05d}", dtype)
            return parts[source]

        batch: list[Document] = []
        for doc in data:
            if doc.metadata.get("read_error"):
                detail = f"{doc.id}: {doc.metadata.get('read_error_detail', '')}"  # the id names file and row
                part_for(doc.metadata.get("source", "unknown")).skip(doc.metadata["read_error"], str(detail))
                self.stat_update("skipped")
                continue
            batch.append(doc)
            if len(batch) >= self.batch_size:
                self._encode(tokenizer, batch, part_for, dtype)
                batch = []
        if batch:
            self._encode(tokenizer, batch, part_for, dtype)
        for part in parts.values():
            part.close()
        return
        yield  # a sink: nothing goes further down the pipeline

    def _encode(self, tokenizer, batch: list[Document], part_for, dtype: np.dtype) -> None:
        with self.track_time("batch"):
            texts = [doc.text for doc in batch]
            try:
                encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
            except Exception:  # noqa: BLE001 - find the one bad document instead of losing the batch
                encodings = [self._encode_one(tokenizer, text) for text in texts]
            by_source: dict[str, list[int]] = {}
            for i, doc in enumerate(batch):
                if encodings[i] is None:
                    part_for(doc.metadata.get("source", "unknown")).skip("encode_error", str(doc.id))
                    self.stat_update("skipped")
                    continue
                by_source.setdefault(doc.metadata.get("source", "unknown"), []).append(i)
            for source, members in by_source.items():
                part = part_for(source)
                id_lists = [encodings[i].ids for i in members]
                for ids in id_lists:
                    ids.append(self.eos_id)
                lengths = [len(ids) for ids in id_lists]
                tokens = np.fromiter(chain.from_iterable(id_lists), dtype=dtype, count=sum(lengths))
                raw = [texts[i].encode("utf-8", "surrogatepass") for i in members]
                part.add(
                    tokens,
                    lengths,
                    [len(b) for b in raw],
                    [xxhash.xxh3_64_intdigest(b) for b in raw],
                    [str(batch[i].metadata.get("language") or "unknown") for i in members],
                )
                for i, length in zip(members, lengths, strict=True):
                    origin = batch[i].metadata.get("routed_from")
                    if origin:  # routed in by another source's classifier: the report credits that crawl
                        counts = part.routed_from.setdefault(str(origin), [0, 0])
                        counts[0] += 1
                        counts[1] += length
                self._verify(tokenizer, part, [texts[i] for i in members], id_lists)
                self.stat_update("documents", value=len(members))
                self.stat_update("tokens", value=len(tokens))

    @staticmethod
    def _encode_one(tokenizer, text: str) -> Any:
        try:
            return tokenizer.encode_batch_fast([text], add_special_tokens=False)[0]
        except Exception:  # noqa: BLE001
            return None

    def _verify(self, tokenizer, part: _SourcePart, texts: list[str], id_lists: list[list[int]]) -> None:
        """Decode the first few documents again: a lossy tokenizer (normalizer, prefix space) is caught here."""
        todo = min(self.verify_docs - part.checked, len(texts))
        if todo <= 0:
            return
        decoded = tokenizer.decode_batch([ids[:-1] for ids in id_lists[:todo]], skip_special_tokens=False)
        part.checked += todo
        part.mismatched += sum(a != b for a, b in zip(decoded, texts[:todo], strict=True))
