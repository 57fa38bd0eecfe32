"""configs/web.yaml's curation decisions are pinned on a seeded generated crawl, so that speed work changes none.

The stages run one after the other in this process, as ``benchmarks/stage_bench.py web`` runs them (extraction
without its sandbox: the sandbox returns what the extractor returns), on ``sample.generate_sample``'s crawl
(same seed, same bytes). Pinned per stage: each document's verdict (kept, or the drop's rule and score) and, at
the end, the bytes of the kept documents as the curated writer writes them and of every drop row. A failure
names the first stage whose decisions moved.

A change that means to move decisions (a rule, a threshold, the extractor) updates ``EXPECTED`` with the
digests this prints, and says so in its commit:

    python tests/pipeline/test_curate_same_output.py
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
PAGES, SEED = 400, 11

# sha256 per stage as main 02ba3f7 computes them, before the speed work of issue 21 item 4 (which keeps them);
# kept_rows as of web.yaml's c4/fineweb colon_lines (2026-12-07): the same verdicts, the kept texts keep their
# prose lines that end in ':'
EXPECTED = {
    "extract": "a920012a15899de00a269c3cd7519fa0a76b95c17430e7fa3853d4ebded374ee",
    "language": "63fde2edb9c67b2adfec674e97c13bc3554237d8f3e65540f7841825ef3fc841",
    "quality": "0ec0311c0fb5d968b3511db6eed0a53446739aa8fa0ed7623aa7cbe20c646353",
    "toxicity": "4e6183dc43162521365e2cde457026e106e001fc3df6fbb1bc00975588510ea9",
    "pii": "4e6183dc43162521365e2cde457026e106e001fc3df6fbb1bc00975588510ea9",
    "kept_rows": "a136f3fdfbf4e7531a588fede1719678ea50dc31dbea03dc0f08256df2d41693",
    "drop_rows": "1970459200a0d3a9199933175103f8007e589bb38788334a4008c5c6222a76ac",
}


class _InProcess:
    """The sandbox's interface, extracting in this process."""

    def process_batch(self, texts: list[str], extract_fn) -> list:  # noqa: ANN001 - the sandbox's signature
        return [extract_fn(text) for text in texts]


def curate_digests(folder: Path) -> dict[str, str]:
    from datatrove.pipeline.writers import JsonlWriter

    from pipeline.base import drop_row
    from pipeline.config import load_recipe
    from pipeline.curate.build import build_stages
    from pipeline.curate.extract import ExtractStage, _Extractor
    from pipeline.read.warc import WarcReader
    from sample import generate_sample

    generate_sample(folder, seed=SEED, pages=PAGES, warc_files=1, domain_docs=0)
    docs = list(WarcReader(str(folder / "crawl"), source="web").run())
    stages = build_stages(load_recipe(ROOT / "configs" / "web.yaml").stages, str(folder / "dropped"))
    digests: dict[str, str] = {}
    drops: list[bytes] = []
    for step in stages:
        step.setup()
        if isinstance(step, ExtractStage):
            step._sandbox, step._extract_fn = _InProcess(), _Extractor(step.config)  # type: ignore[assignment]
        verdicts, kept = [], []
        size = max(1, step.batch_size)
        for start in range(0, len(docs), size):
            batch = docs[start : start + size]
            for doc, drop in zip(batch, step.process_batch(batch), strict=True):
                if drop is None:
                    kept.append(doc)
                    verdicts.append([doc.id, None, None])
                else:
                    verdicts.append([doc.id, drop.rule, drop.score])
                    drops.append(orjson.dumps(drop_row(doc, step.stage, drop)))
        digests[step.stage] = hashlib.sha256(json.dumps(verdicts).encode()).hexdigest()
        docs = kept
    writer = JsonlWriter(str(folder / "out"))  # datatrove's rows: what the curated writer writes, byte for byte
    digests["kept_rows"] = hashlib.sha256(b"\n".join(orjson.dumps(writer.adapter(doc)) for doc in docs)).hexdigest()
    digests["drop_rows"] = hashlib.sha256(b"\n".join(drops)).hexdigest()
    return digests


def test_curation_decisions_are_unchanged(tmp_path: Path) -> None:
    got = curate_digests(tmp_path)
    moved = [stage for stage in EXPECTED if got[stage] != EXPECTED[stage]]
    assert not moved, f"decisions moved at {moved[0]} (and {moved[1:]}); digests now: {got}"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as work:
        print(json.dumps(curate_digests(Path(work)), indent=4))
