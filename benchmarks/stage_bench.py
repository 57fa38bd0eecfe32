"""Per-stage accuracy and throughput on one process: language ID, quality, PII (the figures docs/filters.md and
docs/pii.md quote). These were the ``__main__`` blocks of the stage test files; the data they measure on stays
with those tests (the hand-written paragraphs of tests/pipeline/test_language.py, the page generator of
tests/pipeline/test_quality.py, the PII generators of tests/pipeline/test_pii.py), so it is imported from there.
benchmarks/curate_bench.py times the same stages only inside a whole curation run, per step and in wall time.

    python benchmarks/stage_bench.py [language] [quality] [pii] [pii-warc] [web]   (default: all five)

``web``: configs/web.yaml's stages one after the other, in this process (extraction without its sandbox), on a
generated 2,000-page crawl and on 200 real HTML pages from /usr/share/doc: CPU per stage and per document.

CPU time is ``time.process_time()`` of this process, as the test files measured it.
"""

from __future__ import annotations

import argparse
import copy
import random
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (the repository on sys.path, telemetry off)


def language_throughput() -> tuple[float, float]:
    """fastText paragraphs per CPU-second, and stage documents (2 KB, mixed languages) per CPU-second."""
    from datatrove.data import Document

    from pipeline.curate.config import LanguageConfig
    from pipeline.curate.language import LanguageStage
    from tests.pipeline.test_language import PARAGRAPHS

    stage = LanguageStage(LanguageConfig(keep=None))
    stage.cache_units = 0  # fastText itself: these documents are drawn from a few hundred paragraphs, which a
    stage.setup()  # rank's cache of predictions would answer after their first time
    rng = random.Random(0)
    paragraphs = [p for paras in PARAGRAPHS.values() for p in paras]
    units = [rng.choice(paragraphs) for _ in range(50_000)]
    start = time.process_time()
    stage.predict(units)
    per_paragraph = len(units) / (time.process_time() - start)

    docs = []
    for i in range(3000):
        lang = rng.choice(sorted(PARAGRAPHS))
        text = ""
        while len(text.encode()) < 2048:
            text += rng.choice(PARAGRAPHS[lang]) + ("\n" if rng.random() < 0.7 else " ")
        docs.append(Document(text=text, id=str(i)))
    start = time.process_time()
    for i in range(0, len(docs), stage.batch_size):
        stage.process_batch(docs[i : i + stage.batch_size])
    per_doc = len(docs) / (time.process_time() - start)
    return per_paragraph, per_doc


def language() -> None:
    from datatrove.data import Document

    from pipeline.curate.config import LanguageConfig
    from pipeline.curate.language import LanguageStage
    from tests.helpers.text import ARTICLES
    from tests.pipeline.test_language import PARAGRAPHS, paragraph_accuracy

    lid = LanguageStage(LanguageConfig(keep=None, min_score=0.0))
    accuracy, wrong = paragraph_accuracy(lid)
    print(f"paragraph accuracy: {accuracy:.1%} on {sum(map(len, PARAGRAPHS.values()))} paragraphs; wrong: {wrong}")
    docs = [Document(text=t, id=lang) for lang, t in ARTICLES.items()]
    lid.process_batch(docs)
    print("document accuracy:", sum(d.metadata["language"] == d.id for d in docs), "/", len(docs))
    per_paragraph, per_doc = language_throughput()
    print(f"fastText lid.176.ftz: {per_paragraph:,.0f} paragraphs/CPU-s; stage: {per_doc:,.0f} docs (2 KB)/CPU-s")


def quality_throughput(n: int = 2000) -> float:
    """Quality-stage judgements of generated 2 KB English pages per CPU-second."""
    from pipeline.curate.quality import QualityStage
    from tests.pipeline.test_quality import _article, _sentence

    rng = random.Random(1)
    docs = []
    while len(docs) < n:
        text = _article(rng, 3)
        while len(text) < 2048:
            text += "\n\n" + " ".join(_sentence(rng) for _ in range(3))
        docs.append(text[:2048])
    stage = QualityStage()
    stage.setup()
    start = time.process_time()
    for text in docs:
        stage.judge(text, "en")
    return n / (time.process_time() - start)


def quality() -> None:
    from tests.pipeline.test_quality import agreement

    share, kept, differ = agreement(1000, seed=1)
    print(f"agreement with datatrove: {share:.2%} of 1000 pages ({kept} kept by datatrove, {len(differ)} differ)")
    print(f"quality stage: {quality_throughput():,.0f} docs (2 KB) per CPU-second")


PROSE_WORDS = (
    "the of and to in a is that for it as was with be by on not this are or from at which but have an they you "
    "were her she there been one all we their has would when if so no will can more about said what out up into "
    "them some could other than then now only its time like over also new these two may first after any most"
)


def benchmark_docs(n: int = 3000, seed: int = 0) -> list[str]:
    """~1 KB web-like documents: prose, ordinary numbers in 40 % of sentences, PII in ~3 %."""
    from tests.pipeline.test_pii import GENERATORS

    rng = random.Random(seed)
    words = PROSE_WORDS.split()
    numbers = ["2024-03-15", "15.03.2024", "$1,299.99", "€45.00", "v2.13.0", "3.11.7", "45 %", "1999", "12:30"]
    numbers += ["Order #A-123456", "+3.2%", "10,000", "page 12", "ISBN 978-3-16-148410-0", "Python 3.11.7"]
    pii = [GENERATORS[k](rng)[0] for k in sorted(GENERATORS) for _ in range(5)]
    out = []
    for _ in range(n):
        parts, size = [], 0
        while size < 1000:
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 18)))
            if rng.random() < 0.4:
                sentence += " " + rng.choice(numbers)
            if rng.random() < 0.03:
                sentence += " " + rng.choice(pii)
            sentence = sentence.capitalize() + ". "
            parts.append(sentence)
            size += len(sentence)
        out.append("".join(parts))
    return out


def pii(n: int = 3000) -> None:
    from datatrove.data import Document

    from pipeline.curate.pii import PIIStage

    docs = benchmark_docs(n)
    stage = PIIStage()
    batch = [Document(text=t, id=str(i)) for i, t in enumerate(docs)]
    start = time.process_time()
    kept = sum(1 for _ in stage.run(iter(batch)))
    elapsed = time.process_time() - start
    replaced = sum(sum(d.metadata["pii"].values()) for d in batch)
    mean_kb = sum(map(len, docs)) / len(docs) / 1000
    print(f"PIIStage: {kept} docs of {mean_kb:.2f} KB in {elapsed:.2f} CPU-s = {kept / elapsed:,.0f} docs/CPU-s")
    print(f"  {replaced} replacements")


def pii_warc() -> None:
    """PIIStage throughput with WARC metadata (docs/pii.md, "What is redacted, and where")."""
    from pipeline.curate.extract import extract_resiliparse
    from pipeline.curate.pii import PIIStage
    from pipeline.read.warc import WarcReader
    from sample import generate_sample

    folder = Path(tempfile.mkdtemp())
    generate_sample(folder, seed=1, pages=600, warc_files=1, domain_docs=2)
    pages = []
    for page in WarcReader(str(folder / "crawl"), source="w").run():
        if page.text and page.metadata.get("http_status") == 200 and page.metadata.get("format") == "html":
            page.text = extract_resiliparse(page.text)
            page.metadata.update(language="en", language_score=0.9)
            pages.append(page)
    best = float("inf")
    for _ in range(5):
        batch, stage = copy.deepcopy(pages), PIIStage()
        stage.setup()
        started = time.process_time()
        for page in batch:
            stage.process(page)
        best = min(best, time.process_time() - started)
    print(f"PIIStage: {len(pages)} pages, {len(pages) / best:,.0f} documents per CPU-second (best of 5)")


def _web_stages(warc_dir: Path, label: str) -> None:
    from pipeline.config import load_recipe
    from pipeline.curate.build import build_stages
    from pipeline.curate.extract import ExtractStage, _Extractor
    from pipeline.read.warc import WarcReader

    class InProcess:  # the sandbox's interface, extracting here: the stage's own CPU, no IPC
        def process_batch(self, texts, extract_fn):
            return [extract_fn(t) for t in texts]

    stages = build_stages(load_recipe(Path(__file__).resolve().parents[1] / "configs" / "web.yaml").stages, None)
    start = time.process_time()
    docs = list(WarcReader(str(warc_dir), source="w").run())
    read = len(docs)
    rows = [("read", time.process_time() - start, read, read)]
    for step in stages:
        step.setup()
        if isinstance(step, ExtractStage):
            step._sandbox, step._extract_fn = InProcess(), _Extractor(step.config)
        start, kept = time.process_time(), []
        for i in range(0, len(docs), max(1, step.batch_size)):
            batch = docs[i : i + max(1, step.batch_size)]
            kept += [d for d, verdict in zip(batch, step.process_batch(batch), strict=True) if verdict is None]
        rows.append((step.stage, time.process_time() - start, len(docs), len(kept)))
        docs = kept
    total = sum(r[1] for r in rows)
    print(f"{label}: {read} records, {total:.2f} CPU-s, {read / total:,.0f} records/CPU-s (no writer, no dedup)")
    for stage, cpu, n_in, n_out in rows:
        print(f"  {stage:>10} {cpu:6.2f} CPU-s  {1000 * cpu / max(1, n_in):6.3f} ms/doc  {n_in:>6} -> {n_out}")


def web() -> None:
    """configs/web.yaml's stages on a generated crawl and on real pages (module docstring)."""
    from curate_bench import real_pages_warc

    from sample import generate_sample

    folder = Path(tempfile.mkdtemp())
    generate_sample(folder / "gen", seed=0, pages=2000, warc_files=1, domain_docs=0)
    _web_stages(folder / "gen" / "crawl", "generated crawl")
    real = real_pages_warc(folder, 200)
    if real is None:
        print("real pages: none under /usr/share/doc on this machine")
    else:
        _web_stages(real, "/usr/share/doc HTML")


BENCHES = {"language": language, "quality": quality, "pii": pii, "pii-warc": pii_warc, "web": web}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stages", nargs="*", metavar="STAGE", help=f"any of {', '.join(BENCHES)} (default: all)")
    stages = parser.parse_args().stages or list(BENCHES)
    unknown = sorted(set(stages) - set(BENCHES))
    if unknown:
        parser.error(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    for name in stages:
        BENCHES[name]()


if __name__ == "__main__":
    main()
