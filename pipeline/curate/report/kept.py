"""What the kept documents look like, read back from the run's output (at most 200k documents): their metadata,
languages and lengths, and the quantiles the report gives of lengths and scores."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

MAX_DOCS_FOR_HISTOGRAMS = 200_000


def kept_document_stats(folders: list[Path]) -> dict[str, Any]:
    """Language counts and length (characters) of kept documents, from at most 200k documents."""
    languages: Counter[str] = Counter()
    lengths: list[int] = []
    seen = 0
    for folder in folders:
        for path in sorted(folder.glob("**/*.jsonl.gz")):  # with routed-from-<origin>/ folders
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    if seen >= MAX_DOCS_FOR_HISTOGRAMS:
                        break
                    doc = json.loads(line)
                    languages[(doc.get("metadata") or {}).get("language", "unknown")] += 1
                    lengths.append(len(doc.get("text", "")))
                    seen += 1
    return {"documents_sampled": seen, "languages": dict(languages.most_common()), "lengths": lengths}


def scan_kept(folders: list[Path], limit: int = MAX_DOCS_FOR_HISTOGRAMS):
    """The metadata of up to ``limit`` documents in ``folders`` (for the classify and decontamination sections)."""
    seen = 0
    for folder in folders:
        for path in sorted(folder.glob("**/*.jsonl.gz")) if folder.is_dir() else []:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    if seen >= limit:
                        return
                    if line.strip():
                        seen += 1
                        yield json.loads(line).get("metadata") or {}


_DECILES = (("p10", 0.1), ("p50", 0.5), ("p90", 0.9))


def pick_quantiles(sorted_values: list, points: tuple[tuple[str, float], ...] = _DECILES) -> dict[str, Any]:
    """The value at each ``(name, fraction)`` of an ascending list (the lower one, no interpolation); ``{}`` for
    an empty list. The report's length, classifier-score and toxicity-score quantiles all come from here."""
    n = len(sorted_values)
    return {name: sorted_values[min(n - 1, int(f * n))] for name, f in points} if n else {}


def length_quantiles(sorted_values: list[int]) -> dict[str, int]:
    """p10, p50, p90 and the longest of the kept documents' sorted lengths (report.json's ``length_quantiles``)."""
    return {**pick_quantiles(sorted_values), "max": sorted_values[-1]} if sorted_values else {}
