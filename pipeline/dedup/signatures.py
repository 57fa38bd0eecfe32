"""Stage 1 of 3, in the parallel ranks: one MinHash signature and one exact hash per document.

Each rank streams its documents' signatures to ``<stage>/signatures/<rank>.sig`` (raw little-endian uint32,
``num_perm`` per document) and keeps only small per-document columns in memory (exact hash 16 B, length 8 B,
kind 1 B, source 2 B) until the end, when it writes ``<rank>.cols.npz``, ``<rank>.docs.jsonl.gz`` (id, source,
url, snippet: what the clustering step needs to name documents) and, last, ``<rank>.json`` (count and
parameters). Memory per rank is therefore ~27 B per document plus the largest document's transient arrays
(~30 B per character). A rerun of a rank rewrites all of its files.
"""

from __future__ import annotations

import gzip
import json
import os

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.dedup.config import DedupConfig
from pipeline.dedup.minhash import KIND_INVALID, KIND_NORMAL, MinHasher, document_hashes

SNIPPET_CHARS = 200
SIGNATURE_FILES = (".sig", ".cols.npz", ".docs.jsonl.gz", ".json")


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


class DedupSignatureStep(PipelineStep):
    """Computes signatures + exact hashes for this rank's documents; yields nothing (terminal step)."""

    name = "🫆 Dedup signatures"
    type = "🧮 - TOKENMILL"

    def __init__(self, config: DedupConfig, signature_dir: str):
        super().__init__()
        self.config = config
        self.signature_dir = signature_dir

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        import numpy as np

        cfg = self.config
        hasher = MinHasher(cfg.num_perm, cfg.seed)
        paths = rank_paths(self.signature_dir, rank)
        os.makedirs(self.signature_dir, exist_ok=True)
        if os.path.exists(paths[".json"]):
            os.remove(paths[".json"])  # the manifest marks a finished rank; a rerun starts without it
        sources: dict[str, int] = {}
        exact_hi: list[int] = []
        exact_lo: list[int] = []
        lengths: list[int] = []
        kinds: list[int] = []
        source_codes: list[int] = []
        empty_sig = hasher.empty.tobytes()
        with (
            atomic_open(paths[".sig"], "wb") as sig_out,
            atomic_open(paths[".docs.jsonl.gz"], "wt", opener=gzip.open, compresslevel=3) as docs_out,
        ):
            for doc in data:
                with self.track_time():
                    meta = doc.metadata
                    source = str(meta.get("source") or "default")
                    code = sources.setdefault(source, len(sources))
                    if meta.get("read_error"):
                        kind, sig_bytes, hi, lo = KIND_INVALID, empty_sig, 0, 0
                    else:
                        mode = choose_mode(cfg, meta.get("language"))
                        hashes, kind, (hi, lo) = document_hashes(
                            doc.text, cfg.shingle_size, cfg.char_shingle_size, mode, cfg.max_chars
                        )
                        sig_bytes = hasher.signature(hashes).tobytes() if kind == KIND_NORMAL else empty_sig
                    sig_out.write(sig_bytes)
                    exact_hi.append(hi)
                    exact_lo.append(lo)
                    lengths.append(len(doc.text))
                    kinds.append(kind)
                    source_codes.append(code)
                    row = [doc.id, source, meta.get("url"), doc.text[:SNIPPET_CHARS]]
                    docs_out.write(json.dumps(row, ensure_ascii=False) + "\n")
                self.stat_update("documents", f"kind_{kind}")
        count = len(kinds)
        with atomic_open(paths[".cols.npz"], "wb") as cols_out:  # a file object: np.savez adds no ".npz"
            np.savez(
                cols_out,
                exact=np.array([exact_hi, exact_lo], dtype=np.uint64).T.reshape(count, 2),
                length=np.array(lengths, dtype=np.int64),
                kind=np.array(kinds, dtype=np.uint8),
                source=np.array(source_codes, dtype=np.int16),
            )
        manifest = {
            "rank": rank,
            "world_size": world_size,
            "count": count,
            "sources": list(sources),
            "fingerprint": cfg.signature_fingerprint(),
        }
        write_json_atomic(paths[".json"], manifest)
        return
        yield  # makes this a generator, as datatrove steps are (never reached)
