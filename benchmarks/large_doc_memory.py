"""Peak memory (RSS) of one large document through the curation stages, stage by stage.

    python benchmarks/large_doc_memory.py [--mb 50] [--max-bytes N] [--recipe configs/domain.yaml]

The document is real text written by others: the Python standard library's source files, concatenated until
the size is reached (generated at run time, never stored). For each prefix of the stage list (read; read +
extract; … ; + writer) a fresh subprocess runs the recipe's stages in-process on that one file and reports
its peak RSS (``ru_maxrss``) and the baseline RSS after imports and stage set-up, so the cost of the document
itself is ``peak - baseline`` and each stage's share is the difference to the previous prefix.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.env import offline

offline()

PREFIXES = ["read", "extract", "language", "quality", "pii", "writer"]


def stdlib_text(size: int) -> bytes:
    """``size`` bytes of Python standard library source, file after file (repeated if the library is smaller).

    Only files that are valid UTF-8 (a few test files are Latin-1 on purpose), so the document is one valid
    UTF-8 text as most large documents are; the cut at ``size`` goes back to a line end."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    out, total = [], 0
    while total < size:
        for path in files:
            data = path.read_bytes()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            out.append(data)
            total += len(data)
            if total >= size:
                break
    joined = b"".join(out)[:size]
    return joined[: joined.rfind(b"\n") + 1]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_prefix(recipe_path: str, folder: str, upto: str, max_bytes: int | None) -> dict:
    """In this process: build the stages up to ``upto`` and push the folder's one document through them."""
    from datatrove.pipeline.writers import JsonlWriter

    from pipeline.curate.build import build_stages
    from pipeline.read import build_reader
    from training.recipe import load_recipe

    recipe = load_recipe(recipe_path)
    source = recipe.sources[0].model_copy(update={"path": folder})
    if max_bytes is not None:
        source = source.model_copy(update={"options": source.options.model_copy(update={"max_bytes": max_bytes})})
    out = tempfile.mkdtemp()
    steps = [build_reader(source)]
    stages = build_stages(recipe.stages_for(source), os.path.join(out, "dropped"))
    for stage in stages:  # a stage the recipe switches off is not in the list: its prefix adds nothing
        if PREFIXES.index(stage.stage) <= PREFIXES.index(upto):
            steps.append(stage)
    if upto == "writer":
        steps.append(JsonlWriter(os.path.join(out, "curated"), output_filename="${rank}.jsonl.gz", compression="gzip"))
    for step in steps:
        if hasattr(step, "setup"):
            step.setup()
    baseline = rss_mb()
    data = None
    for step in steps:
        data = step.run(data, rank=0, world_size=1)
    kept = sum(1 for _ in data)
    for step in steps:
        if hasattr(step, "close"):
            step.close()
    return {"upto": upto, "baseline_mb": round(baseline), "peak_mb": round(rss_mb()), "kept": kept}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--max-bytes", type=int, default=None, help="override options.max_bytes")
    parser.add_argument("--recipe", default="configs/domain.yaml")
    parser.add_argument("--child", nargs=2, metavar=("FOLDER", "UPTO"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_prefix(args.recipe, args.child[0], args.child[1], args.max_bytes)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        size = int(args.mb * 1024 * 1024)
        (Path(tmp) / "big.txt").write_bytes(stdlib_text(size))
        print(f"document: {size / 1e6:.1f} MB of stdlib source; recipe {args.recipe}")
        for upto in PREFIXES:
            cmd = [sys.executable, __file__, "--recipe", args.recipe, "--child", tmp, upto]
            if args.max_bytes is not None:
                cmd += ["--max-bytes", str(args.max_bytes)]
            result = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            extra = result["peak_mb"] - result["baseline_mb"]
            print(
                f"up to {upto:9s} baseline {result['baseline_mb']:5d} MB  peak {result['peak_mb']:5d} MB  "
                f"document costs {extra:5d} MB = {extra / (size / 2**20):.1f}x  kept {result['kept']}"
            )


if __name__ == "__main__":
    main()
