"""Step 1, in the parallel ranks: one MinHash signature and one exact hash per document, written as files.

Per rank ``<stage>/signatures/<rank>``: ``.sig`` (raw little-endian uint32, ``num_perm`` per document),
``.cols`` (exact hash, length, kind, source: ``store.COLS``), ``.ids`` + ``.idoff`` (the ids, for random
access), ``.docs.jsonl.gz`` (id, source, url, snippet: to name documents and quote them), the sorted runs
``.bands`` (per ``store.CHUNK`` documents, each band's keys sorted) and ``.exact`` (exact hashes sorted), and
last ``.json`` (count, per-source kinds, run lengths, parameters, the rank's peak RSS). A rank holds one chunk
at a time (~``CHUNK`` × (4·num_perm + 60) bytes: 18 MiB at 128 permutations), nothing per document of the
rank beyond it. A rerun of a rank rewrites all of its files.
"""

from __future__ import annotations

import gzip
import json
import os
from contextlib import ExitStack

import numpy as np
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.dedup import store
from pipeline.dedup.config import DedupConfig
from pipeline.dedup.memory import peak_rss, record_peak
from pipeline.dedup.minhash import KIND_INVALID, KIND_NORMAL, KIND_SHORT, MinHasher, document_hashes

SNIPPET_CHARS = 200
LAYOUT = 2  # signature files with sorted runs (store.py); older ones are refused with a hint to restart
SIGNATURE_FILES = (".sig", ".cols", ".ids", ".idoff", ".docs.jsonl.gz", ".bands", ".exact", ".json")


def rank_paths(signature_dir: str, rank: int) -> dict[str, str]:
    stem = os.path.join(signature_dir, f"{rank:05d}")
    return {suffix: stem + suffix for suffix in SIGNATURE_FILES}


def choose_mode(config: DedupConfig, language: str | None) -> str:
    """Word or character shingles for one document (``auto`` falls back on script detection)."""
    if config.shingles != "auto":
        return config.shingles
    if language and language.split("_")[0].split("-")[0] in config.char_languages:
        return "char"
    return "auto"


class _Chunk:
    """One chunk of a rank's documents: signatures and columns, flushed to the rank's files together."""

    def __init__(self, num_perm: int):
        self.sig = np.empty((store.CHUNK, num_perm), dtype=np.uint32)
        self.cols = np.empty(store.CHUNK, dtype=store.COLS)
        self.ids: list[str] = []

    def __len__(self) -> int:
        return len(self.ids)


class DedupSignatureStep(PipelineStep):
    """Computes signatures + exact hashes for this rank's documents; yields nothing (terminal step)."""

    name = "🫆 Dedup signatures"
    type = "🧮 - TOKENMILL"

    def __init__(self, config: DedupConfig, signature_dir: str):
        super().__init__()
        self.config = config
        self.signature_dir = signature_dir

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        cfg = self.config
        hasher = MinHasher(cfg.num_perm, cfg.seed)
        paths = rank_paths(self.signature_dir, rank)
        os.makedirs(self.signature_dir, exist_ok=True)
        if os.path.exists(paths[".json"]):
            os.remove(paths[".json"])  # the manifest marks a finished rank; a rerun starts without it
        sources: dict[str, int] = {}
        kinds: dict[str, list[int]] = {}  # per source: documents of each kind
        runs: dict[str, list[int]] = {"bands": [], "exact": [], "docs": []}
        chunk = _Chunk(cfg.num_perm)
        with ExitStack() as stack:
            out = {
                suffix: stack.enter_context(atomic_open(paths[suffix], "wb"))
                for suffix in (".sig", ".cols", ".ids", ".idoff", ".bands", ".exact")
            }
            docs_out = stack.enter_context(
                atomic_open(paths[".docs.jsonl.gz"], "wt", opener=gzip.open, compresslevel=3)
            )
            ids = store.IdStore(out[".ids"], out[".idoff"])
            for doc in data:
                with self.track_time():
                    meta = doc.metadata
                    source = str(meta.get("source") or "default")
                    code = sources.setdefault(source, len(sources))
                    kind, sig, hi, lo = self._hashed(doc, hasher)
                    at = len(chunk)
                    chunk.sig[at] = sig
                    chunk.cols[at] = (hi, lo, len(doc.text), kind, code)
                    chunk.ids.append(doc.id)
                    kinds.setdefault(source, [0, 0, 0, 0])[kind] += 1
                    row = [doc.id, source, meta.get("url"), doc.text[:SNIPPET_CHARS]]
                    docs_out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    if len(chunk) == store.CHUNK:
                        self._flush(chunk, out, ids, runs)
                self.stat_update("documents", f"kind_{kind}")
            self._flush(chunk, out, ids, runs)
        count = sum(runs["docs"])
        manifest = {
            "rank": rank,
            "world_size": world_size,
            "count": count,
            "sources": list(sources),
            "kinds": kinds,
            "layout": LAYOUT,
            "bands": [cfg.bands, cfg.rows],
            "band_runs": runs["bands"],
            "exact_runs": runs["exact"],
            "fingerprint": cfg.signature_fingerprint(),
            "peak_rss_bytes": peak_rss(),
        }
        write_json_atomic(paths[".json"], manifest)
        record_peak(os.path.dirname(self.signature_dir), "signatures", rank)
        return
        yield  # makes this a generator, as datatrove steps are (never reached)

    def _hashed(self, doc: Document, hasher: MinHasher) -> tuple[int, np.ndarray, int, int]:
        """A document's kind, MinHash signature and exact hash (high, low): a read error is invalid and a
        document too short or empty for shingles gets the empty signature (exact dedup only)."""
        cfg = self.config
        if doc.metadata.get("read_error"):
            return KIND_INVALID, hasher.empty, 0, 0
        mode = choose_mode(cfg, doc.metadata.get("language"))
        hashes, kind, (hi, lo) = document_hashes(doc.text, cfg.shingle_size, cfg.char_shingle_size, mode, cfg.max_chars)
        return kind, hasher.signature(hashes) if kind == KIND_NORMAL else hasher.empty, hi, lo

    def _flush(self, chunk: _Chunk, out: dict, ids: store.IdStore, runs: dict[str, list[int]]) -> None:
        """Append the chunk to the rank's files: rows as they came, bands and exact hashes as sorted runs."""
        n = len(chunk)
        if n == 0:
            return
        cfg = self.config
        base = sum(runs["docs"])  # the rank position of the chunk's first document
        sig, cols = chunk.sig[:n], chunk.cols[:n]
        out[".sig"].write(sig.astype("<u4", copy=False).tobytes())
        out[".cols"].write(cols.tobytes())
        ids.write(chunk.ids)
        normal = np.flatnonzero(cols["kind"] == KIND_NORMAL)
        length = np.minimum(cols["length"], store.LENGTH_CLAMP).astype(np.uint32)

        def fill(keys: np.ndarray, order: np.ndarray) -> np.ndarray:
            rec = np.empty(len(keys), dtype=store.BAND)
            rec["key"], rec["length"] = keys, length[normal[order]]
            rec["pos"], rec["source"] = normal[order] + base, cols["source"][normal[order]]
            return rec

        for records in store.sorted_band_runs(sig[normal], cfg.bands, cfg.rows, fill):
            out[".bands"].write(records.tobytes())
        runs["bands"].append(len(normal))
        eligible = np.flatnonzero((cols["kind"] == KIND_NORMAL) | (cols["kind"] == KIND_SHORT))
        eligible = eligible[np.lexsort((cols["lo"][eligible], cols["hi"][eligible]))]
        rec = np.empty(len(eligible), dtype=store.EXACT)
        rec["hi"], rec["lo"], rec["length"] = cols["hi"][eligible], cols["lo"][eligible], length[eligible]
        rec["pos"], rec["source"] = eligible + base, cols["source"][eligible]
        out[".exact"].write(rec.tobytes())
        runs["exact"].append(len(eligible))
        runs["docs"].append(n)
        chunk.ids = []


class SignatureSet:
    """All ranks' signature files, read by row only: manifests (a few numbers per rank) and random access.

    A global row is the rank's offset plus the position in the rank (ranks in order). Nothing here holds
    per-document state: ``sigs``/``cols``/``ids`` read the rows asked for.
    """

    def __init__(self, signature_dir: str, world_size: int, config: DedupConfig):
        error = store.DedupStateError
        self.dir, self.world_size, self.num_perm = signature_dir, world_size, config.num_perm
        fingerprint = config.signature_fingerprint()
        self.manifests = []
        for rank in range(world_size):
            path = rank_paths(signature_dir, rank)[".json"]
            if not os.path.exists(path):
                raise error(f"{path}: signatures of rank {rank} are missing; rerun the dedup stage to resume")
            with open(path, encoding="utf-8") as handle:
                manifest = json.load(handle)
            if manifest.get("layout") != LAYOUT or manifest.get("bands") != [config.bands, config.rows]:
                raise error(
                    f"{path}: signature files of an older layout or other bands; restart the dedup stage "
                    f"(CLI --restart, or delete {os.path.dirname(os.path.dirname(path))})"
                )
            if manifest["fingerprint"] != fingerprint:
                raise error(
                    f"{path}: signatures were made with other parameters ({manifest['fingerprint']}); "
                    f"delete {os.path.dirname(os.path.dirname(path))} to start the dedup stage over"
                )
            expected = manifest["count"] * config.num_perm * 4
            if os.path.getsize(rank_paths(signature_dir, rank)[".sig"]) != expected:
                raise error(f"{rank_paths(signature_dir, rank)['.sig']}: size differs from {expected} bytes")
            self.manifests.append(manifest)
        self.counts = [m["count"] for m in self.manifests]
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)
        self.total = int(self.offsets[-1])
        self.sources: list[str] = []
        self.source_maps = []  # per rank: local source code -> global code
        for manifest in self.manifests:
            codes = []
            for name in manifest["sources"]:
                if name not in self.sources:
                    self.sources.append(name)
                codes.append(self.sources.index(name))
            self.source_maps.append(np.array(codes or [0], dtype=np.int64))

    def paths(self, rank: int) -> dict[str, str]:
        return rank_paths(self.dir, rank)

    def _split(self, rows: np.ndarray):
        """(rank, positions in the rank, where in ``rows``) for each rank that holds some of ``rows``."""
        rows = np.asarray(rows, dtype=np.int64)
        rank_of = np.searchsorted(self.offsets, rows, side="right") - 1
        for rank in np.unique(rank_of).tolist():
            where = np.flatnonzero(rank_of == rank)
            yield rank, rows[where] - self.offsets[rank], where

    def sigs(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty((len(rows), self.num_perm), dtype=np.uint32)
        for rank, pos, where in self._split(rows):
            out[where] = store.read_rows(self.paths(rank)[".sig"], np.dtype("<u4"), pos, width=self.num_perm)
        return out

    def cols(self, rows: np.ndarray) -> np.ndarray:
        """``store.COLS`` rows with ``source`` mapped to the global source code."""
        out = np.empty(len(rows), dtype=store.COLS)
        for rank, pos, where in self._split(rows):
            part = store.read_rows(self.paths(rank)[".cols"], store.COLS, pos)
            part["source"] = self.source_maps[rank][part["source"]]
            out[where] = part
        return out

    def ids(self, rows: np.ndarray) -> list[str]:
        out: list[str] = [""] * len(rows)
        for rank, pos, where in self._split(rows):
            paths = self.paths(rank)
            for i, doc_id in zip(where.tolist(), store.read_ids(paths[".ids"], paths[".idoff"], pos), strict=True):
                out[i] = doc_id
        return out

    def kind_counts(self) -> dict[str, list[int]]:
        """Per source: documents of each kind (normal, short, empty, invalid), summed over ranks."""
        total: dict[str, list[int]] = {}
        for manifest in self.manifests:
            for source, counts in manifest["kinds"].items():
                acc = total.setdefault(source, [0, 0, 0, 0])
                for k, value in enumerate(counts):
                    acc[k] += value
        return total

    def runs(self, kind: str) -> list[tuple[int, str, int, int]]:
        """Sorted runs of ``kind`` ("bands" or "exact"): (rank, path, first record, records per band)."""
        out = []
        suffix = ".bands" if kind == "bands" else ".exact"
        per = self.manifests[0]["bands"][0] if kind == "bands" and self.manifests else 1
        for rank, manifest in enumerate(self.manifests):
            counts = manifest["band_runs" if kind == "bands" else "exact_runs"]
            for start, count in zip(store.run_starts(counts, per), counts, strict=True):
                out.append((rank, self.paths(rank)[suffix], start, count))
        return out
