"""Helpers shared by the dedup tests (tiny generated corpora in run-directory layout); no tests here."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from pipeline.ownership import claim


class Words:
    """Random-word documents: distinct documents share almost no 5-word shingle."""

    def __init__(self, seed: int = 0, vocab: int = 4000):
        self.rng = random.Random(seed)
        self.vocab = [f"w{i}" for i in range(vocab)]

    def doc(self, n: int = 250) -> str:
        return " ".join(self.rng.choices(self.vocab, k=n))

    def edit(self, text: str, rate: float) -> str:
        words = text.split()
        for i in self.rng.sample(range(len(words)), max(1, round(rate * len(words)))):
            words[i] = self.rng.choice(self.vocab)
        return " ".join(words)


def write_curated(run_dir: Path, sources: dict[str, list[tuple[str, str]]], files: int = 2) -> None:
    """``<run>/curated/<source>/<rank>.jsonl.gz`` as the curation run's JsonlWriter writes them (in a folder
    claimed as a curation run, as ``prepare_run_dir`` does)."""
    claim(run_dir, "curate")
    for source, docs in sources.items():
        folder = run_dir / "curated" / source
        folder.mkdir(parents=True, exist_ok=True)
        for rank in range(files):
            with gzip.open(folder / f"{rank:05d}.jsonl.gz", "wt", encoding="utf-8") as handle:
                for doc_id, text in docs[rank::files]:
                    row = {"text": text, "id": doc_id, "metadata": {"source": source, "url": f"https://x/{doc_id}"}}
                    handle.write(json.dumps(row) + "\n")


def read_kept(run_dir: Path) -> dict[str, set[str]]:
    kept: dict[str, set[str]] = {}
    for path in sorted((run_dir / "deduped").glob("*/*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            kept.setdefault(path.parent.name, set()).update(json.loads(line)["id"] for line in handle)
    return kept


def read_drops(run_dir: Path, stage: str = "dedup") -> list[dict]:
    rows = []
    for path in sorted((run_dir / "dropped").glob(f"*/{stage}/*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows.extend(json.loads(line) for line in handle)
    return rows


def local_factory(pipeline: list, logging_dir: str, tasks: int):
    from datatrove.executor import LocalPipelineExecutor

    return LocalPipelineExecutor(pipeline=pipeline, logging_dir=logging_dir, tasks=tasks, workers=1)
