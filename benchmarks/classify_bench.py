"""Classify stage throughput: documents of ~2 KB per CPU-second, beside datatrove's FastTextClassifierFilter.

A classifier is trained at run time (``pipeline.classifier.train``, 50 epochs) on text no one here wrote:
pydoc's pages of stdlib modules (positives) against the Debian Reference (``debian-reference-en``, negatives;
the Language Reference topics pydoc ships when it is not installed). Both steps then score the same ~2 KB
documents with that model, in this process, one core.

    python benchmarks/classify_bench.py [--docs 20000]
"""

from __future__ import annotations

import argparse
import importlib
import os
import pydoc
import tempfile
import warnings

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off
from decontam_bench import debian_reference, pack

MODULES = [
    "argparse", "asyncio", "collections", "csv", "datetime", "decimal", "email", "enum", "functools", "http",
    "itertools", "json", "logging", "os", "pathlib", "re", "socket", "sqlite3", "string", "subprocess",
    "tarfile", "textwrap", "threading", "typing", "unittest", "urllib", "uuid", "xml", "zipfile", "zlib",
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20_000)
    args = parser.parse_args()

    from datatrove.data import Document

    from pipeline.classifier.train import Hyperparameters, train_classifier
    from pipeline.classify.scoring import flatten
    from pipeline.curate.classify import ClassifyStage
    from pipeline.curate.config import ClassifierConfig

    warnings.simplefilter("ignore")
    positives = pack([pydoc.render_doc(importlib.import_module(m), renderer=pydoc.plaintext) for m in MODULES])
    negatives = debian_reference()
    if not negatives:
        from pydoc_data.topics import topics

        negatives = pack(list(topics.values()))
    print(f"{len(positives)} pydoc documents, {len(negatives)} negative documents of ~2 KB")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "pydoc.bin")
        card = train_classifier(
            [flatten(t) for t in positives[::2]],
            [flatten(t) for t in negatives[::2]],
            model,
            label="pydoc",
            params=Hyperparameters(epoch=50),
        )
        print(f"held-out F1 {card.heldout['f1']}, ROC-AUC {card.heldout['roc_auc']}")
        pool = positives[1::2] + negatives[1::2]
        docs = [pool[i % len(pool)] for i in range(args.docs)]
        mean = sum(len(d.encode()) for d in docs) / len(docs)

        stage = ClassifyStage([ClassifierConfig(name="pydoc", model=model, mode="threshold")])
        stage.setup()
        before = cpu_seconds()
        dropped = 0
        for start in range(0, len(docs), stage.batch_size):
            batch = [Document(text=t, id="d") for t in docs[start : start + stage.batch_size]]
            dropped += sum(v is not None for v in stage.process_batch(batch))
        spent = cpu_seconds() - before
        print(
            f"tokenmill classify: {len(docs):,} docs (mean {mean:,.0f} bytes) in {spent:.2f} CPU-s = "
            f"{len(docs) / spent:,.0f} docs/CPU-s; {dropped:,} dropped"
        )
        top_percent_pass(stage, docs, tmp)
        try:
            from datatrove.pipeline.filters import FastTextClassifierFilter

            block = FastTextClassifierFilter(model_url=model, keep_labels=[("pydoc", 0.5)])
            _ = block.model
            before = cpu_seconds()
            dt_dropped = sum(1 for t in docs if not block.filter(Document(text=t, id="d")))
            dt_spent = cpu_seconds() - before
            print(
                f"datatrove FastTextClassifierFilter: {len(docs):,} docs in {dt_spent:.2f} CPU-s = "
                f"{len(docs) / dt_spent:,.0f} docs/CPU-s; {dt_dropped:,} dropped"
            )
            # both rates are per CPU-second of this process and its reaped children (the process tree)
            print(f"ratio tokenmill / datatrove: {dt_spent / spent:.2f}x (target: >= 5,000 docs/CPU-s for tokenmill)")
        except Exception as error:  # noqa: BLE001 - the comparison is optional; say why it did not run
            print(f"datatrove FastTextClassifierFilter: not run ({type(error).__name__}: {error})")


def top_percent_pass(stage, docs: list[str], tmp: str, files: int = 4) -> None:  # a ClassifyStage
    """``mode: top_percent``'s whole-run pass (``pipeline.classify.top_percent``) over the same documents, scored
    and written as a curated run of ``files`` ranks: documents per CPU-second of the pass alone."""
    import gzip
    import json

    from pipeline.classify.top_percent import run_top_percent
    from pipeline.layout import RunLayout
    from training.recipe import Recipe

    scores = stage.scores(docs)["pydoc"]
    recipe = Recipe.model_validate(
        {
            "name": "bench",
            "output_dir": os.path.join(tmp, "run"),
            "sources": [{"name": "web", "kind": "folder", "path": tmp}],
            "stages": {"classify": [{"name": "pydoc", "model": "unused", "mode": "top_percent", "top_percent": 10}]},
        }
    )
    layout = RunLayout.at(recipe.output_dir)
    layout.curated("web").mkdir(parents=True)
    for rank in range(files):
        with gzip.open(layout.curated("web") / f"{rank:05d}.jsonl.gz", "wt", encoding="utf-8") as handle:
            for i in range(rank, len(docs), files):
                meta = {"source": "web", "classify": {"pydoc": round(scores[i], 6)}}
                handle.write(json.dumps({"text": docs[i], "id": f"d{i}", "metadata": meta}) + "\n")
    before = cpu_seconds()
    result = run_top_percent(recipe, layout)["classifiers"]["pydoc"]
    spent = cpu_seconds() - before
    print(
        f"tokenmill top_percent pass (10 %): {len(docs):,} docs in {spent:.2f} CPU-s = {len(docs) / spent:,.0f} "
        f"docs/CPU-s; kept {result['kept']:,}, dropped {result['dropped']:,}, cutoff {result['cutoff']}"
    )


if __name__ == "__main__":
    main()
