"""Ablation power: the smallest training budget (model × tokens) at which `tokenmill ablate` detects the curated
arm's advantage on clean held-out text, and what each budget costs in CPU seconds. Prints one table.

**The raw crawl** is built at run time from real text this machine has (never stored in the repository) plus the
kinds of pages curation exists to remove, at roughly the shares a Common Crawl snapshot holds:

| share | what | from |
|---:|---|---|
| 17 % | clean English pages, unique | python3-doc and debian-handbook (en) HTML chapters |
| 50 % | other languages | debian-handbook / debian-reference translations (24 languages) |
| 17 % | spam and boilerplate (keyword stuffing, link farms, cookie walls, error pages…) | real_text.py |
| 8 % | exact copies of clean pages | — |
| 8 % | near copies (a mirror banner and a date changed) | — |

The shares follow RefinedWeb's removal rates on Common Crawl (Penedo et al. 2023, Fig. 2: after URL filtering
and extraction, English identification removes about half the documents, the repetition and quality filters
about a third of the English rest, and deduplication about half of what is left then) — so of 100 raw pages
about 50 are not English, 17 low quality, 16 duplicates and 17 clean and unique. FineWeb (Penedo et al. 2024,
§3) reports the same orders of magnitude. Real crawls differ by snapshot; ``--shares`` changes them.

**The experiment** is the ablation's own machinery (training/ablate.py): both arms curated once with the
recipe's stages (configs/web.yaml's extract, language, quality, dedup; toxicity and PII off for speed), the same
tokenizer, the curated arm's held-out documents removed from both arms. Each budget trains every seed in both
arms on the same number of tokens and applies the ablation's statistics (training/ablate_stats.py): the paired
95 % interval of raw − curated bpb on ``heldout_web`` (clean held-out pages) and on English man pages neither
arm saw (the neutral reference). Budgets run from the cheapest up; the search stops at the first budget whose
interval on heldout_web lies above 0 (``--all`` runs every budget).

    python benchmarks/ablate_power.py [--clean 240] [--seeds 1,2,3] [--budgets micro:20000,tiny:80000,...]
                                      [--work DIR] [--all] [--json]

CPU cost: user + system seconds of this process and its children per budget (all seeds, both arms, training and
evaluation), on whatever machine runs it: say how busy it was (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off

MODELS = {  # model_overrides of the tiny preset (configs/models/tiny.yaml is width 128, 4 layers)
    "micro": {
        "hidden_size": 64,
        "intermediate_size": 176,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
    },
    "tiny": {},
}
DEFAULT_BUDGETS = "micro:20000,micro:80000,tiny:80000,tiny:320000"
SHARES = {"clean": 0.17, "other_language": 0.50, "spam": 0.17, "exact_copy": 0.08, "near_copy": 0.08}
MAN_PAGES = 40


def build_crawl(folder: Path, clean: int, shares: dict[str, float], seed: int) -> dict[str, int]:
    """HTML pages in ``folder``: ``clean`` clean English ones and the other kinds at ``shares`` of the total."""
    import real_text

    rng = random.Random(seed)
    candidates = real_text.web_candidates()
    english = [page for package, page, _c in candidates.get("en", []) if package in ("python3-doc", "debian-handbook")]
    others = [page for language, pages in candidates.items() if language != "en" for _p, page, _c in pages]
    if len(english) < clean:
        sys.exit(f"only {len(english)} English manual pages here (install python3-doc, debian-handbook)")
    total = clean / shares["clean"]
    counts = {kind: round(total * share) for kind, share in shares.items()}
    counts["clean"] = clean
    rng.shuffle(english)
    rng.shuffle(others)
    folder.mkdir(parents=True, exist_ok=True)
    chosen = english[:clean]
    for i, page in enumerate(chosen):
        shutil.copyfile(page, folder / f"clean-{i:05d}.html")
    for i, page in enumerate(others[: counts["other_language"]]):
        shutil.copyfile(page, folder / f"lang-{i:05d}.html")
    for i, (_kind, _language, text) in enumerate(real_text.generate_spam(counts["spam"], seed)):
        (folder / f"spam-{i:05d}.html").write_text(text, encoding="utf-8")
    for i in range(counts["exact_copy"]):
        shutil.copyfile(chosen[i % clean], folder / f"copy-{i:05d}.html")
    for i in range(counts["near_copy"]):
        text = real_text.read_maybe_gz(chosen[(i * 7 + 3) % clean]) or ""
        banner = f"<p>Mirrored from mirror{i}.example.org on 2024-{1 + i % 12:02d}-{1 + i % 28:02d}.</p>"
        (folder / f"near-{i:05d}.html").write_text(text.replace("<body>", "<body>" + banner, 1), encoding="utf-8")
    counts["other_language"] = min(counts["other_language"], len(others))
    return counts


def man_reference(path: Path, count: int) -> int:
    """English man pages rendered as a reader sees them, one JSONL line each: the neutral reference."""
    from tests.helpers.real_text import MAN, render_man

    pages = sorted((MAN / "man1").glob("*.1.gz"))[: count * 3]
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        for page in pages:
            text = render_man(page)
            if text and len(text.split()) > 150:
                handle.write(json.dumps({"text": text}) + "\n")
                written += 1
            if written >= count:
                break
    return written


def quality_kept_share(path: Path, recipe) -> dict[str, float]:
    """Of the man-page reference: the share of its bytes the curated arm's quality stage keeps (C4's line rewrite
    keeps only lines ending in terminal punctuation), and the same with that rewrite off."""
    from pipeline.curate.quality.stage import QualityStage

    texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    config = recipe.stages.quality
    shares = {}
    c4_kept = config.c4.model_copy(update={"rewrite_text": False}) if config.c4 is not None else None
    for name, cfg in (("as_configured", config), ("c4_rewrite_off", config.model_copy(update={"c4": c4_kept}))):
        stage = QualityStage(cfg)
        stage.setup()
        kept = 0
        for text in texts:
            verdict = stage.assess(text, "en")
            kept += len(verdict.text.encode()) if verdict.failure is None else 0
        shares[name] = kept / sum(len(t.encode()) for t in texts)
    return shares


def recipe_for(crawl: Path, out: Path):
    """configs/web.yaml's stages on the crawl folder (toxicity and PII off: they do not change what this measures
    and cost minutes), the demo's tokenizer size and batch."""
    import yaml

    from training.recipe import load_recipe

    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "configs" / "web.yaml").read_text())
    data.update(name="power", output_dir=str(out / "run"))
    data["sources"] = [{"name": "web", "kind": "folder", "path": str(crawl)}]
    data["stages"].update(toxicity=None, pii=None, tokenize={"vocab_size": 2048, "tasks": 1})
    data["stages"]["dedup"].pop("index", None)
    data["executor"] = {"kind": "local", "tasks": 2, "workers": 2}
    data["train"] = {
        "model": "tiny",
        "seq_len": 128,
        "micro_batch": 4,
        "global_batch_tokens": 512,
        "lr": 3e-3,
        "warmup_steps": 4,
        "ckpt_every": 0,
        "log_every": 50,
        "cpu_threads": 1,
        "tensorboard": False,
    }
    path = out / "power.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_recipe(path)


def prepare(recipe, out: Path, man: Path):
    """Both arms curated and tokenized once (every budget trains on these shards)."""
    from training.ablate import (
        ARMS,
        arm_recipe,
        build_references,
        curate_arm,
        load_ablate_config,
        tokenize_arm,
        training_documents,
    )

    settings = load_ablate_config({"reference": [str(man)], "heldout_share": 0.1})
    kept = {arm: curate_arm(arm_recipe(recipe, arm, out)) for arm in ARMS}
    references, ids, keys = build_references(settings, kept["curated"], out)
    manifests, documents = {}, {}
    for arm in ("curated", "raw"):
        documents[arm] = training_documents(kept[arm], out / arm / "train_docs", ids, keys)
        tokenizer = out / "curated" / "shards" / "tokenizer" if arm == "raw" else None
        manifests[arm] = tokenize_arm(recipe, out / arm / "train_docs", out / arm / "shards", tokenizer)
    return references, manifests, documents


def run_budget(recipe, out: Path, references, model: str, tokens: int, seeds: list[int]) -> dict:
    from training.ablate import ARMS, arm_train_config, load_ablate_config
    from training.ablate_stats import paired_difference
    from training.bpb import BitsPerByte, bits_per_byte
    from training.train import run_training

    steps = max(1, tokens // 512)
    settings = load_ablate_config({"max_steps": steps, "train": {"model_overrides": MODELS[model]}, "seeds": seeds})
    started, wall = cpu_seconds(), time.monotonic()
    measured: dict[str, dict[int, dict[str, BitsPerByte]]] = {arm: {} for arm in ARMS}
    params = 0
    for seed in seeds:
        for arm in ARMS:
            run = out / "budgets" / f"{model}-{tokens}" / arm / f"seed-{seed}"
            config = arm_train_config(recipe, settings, out / arm / "shards", run, seed, None)
            summary = run_training(config)
            params = summary.params
            measured[arm][seed] = {name: bits_per_byte(summary.final, texts, 128) for name, texts in references.items()}
    rows = {}
    for name in references:
        raw = [measured["raw"][s][name].bpb for s in seeds]
        cur = [measured["curated"][s][name].bpb for s in seeds]
        bits = [
            sum(measured["raw"][s][name].doc_bits[j] - measured["curated"][s][name].doc_bits[j] for s in seeds)
            / len(seeds)
            for j in range(len(measured["raw"][seeds[0]][name].doc_bits))
        ]
        result = paired_difference(raw, cur, bits, measured["raw"][seeds[0]][name].doc_bytes)
        rows[name] = result.to_dict() | {"raw": sum(raw) / len(raw), "curated": sum(cur) / len(cur)}
    return {
        "model": model,
        "params": params,
        "tokens": steps * 512,
        "seeds": seeds,
        "references": rows,
        "cpu_s": cpu_seconds() - started,
        "wall_s": time.monotonic() - wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clean", type=int, default=240, help="clean unique English pages in the crawl")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--budgets", default=DEFAULT_BUDGETS, help="model:tokens,… (models: micro, tiny)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tokenmill-ablate-power"))
    parser.add_argument("--all", action="store_true", help="run every budget, not only up to the first detection")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    budgets = [(m, int(t)) for m, t in (b.split(":") for b in args.budgets.split(","))]
    shutil.rmtree(args.work, ignore_errors=True)  # this script's own scratch folder, made below
    crawl, out = args.work / "crawl", args.work / "ablate"
    out.mkdir(parents=True)
    from pipeline.ownership import claim

    claim(out, "ablate")  # as run_ablation does: the arms' folders inside are then tokenmill's to replace
    t0 = cpu_seconds()
    counts = build_crawl(crawl, args.clean, SHARES, seed=0)
    man_count = man_reference(args.work / "man_pages.jsonl", MAN_PAGES)
    recipe = recipe_for(crawl, out)
    references, manifests, documents = prepare(recipe, out, args.work / "man_pages.jsonl")
    prep = cpu_seconds() - t0
    man_kept = quality_kept_share(args.work / "man_pages.jsonl", recipe)
    results = []
    for model, tokens in budgets:
        print(f"budget {model} × {tokens:,} tokens: {len(seeds)} seeds × 2 arms", file=sys.stderr, flush=True)
        results.append(run_budget(recipe, out, references, model, tokens, seeds))
        if results[-1]["references"]["heldout_web"]["call"] == "curation helps" and not args.all:
            break
    meta = {
        "crawl": counts,
        "man_pages": man_count,
        "unique_train_tokens": {a: m.train_tokens for a, m in manifests.items()},
        "documents": documents,
        "prepare_cpu_s": prep,
        "man_page_bytes_kept_by_quality": man_kept,
        "reference_documents": {k: len(v) for k, v in references.items()},
    }
    if args.json:
        print(json.dumps({"meta": meta, "budgets": results}, indent=2))
        return
    print(
        f"crawl: {counts}; curated/raw unique training tokens {meta['unique_train_tokens']['curated']:,} / "
        f"{meta['unique_train_tokens']['raw']:,}; references {meta['reference_documents']}; "
        f"curation + tokenizing {prep:.0f} CPU-s; man-page bytes the quality stage keeps: "
        f"{man_kept['as_configured']:.1%} ({man_kept['c4_rewrite_off']:.1%} with C4's line rewrite off)"
    )
    print(
        "| model | params | tokens/run | reference | raw − curated bpb | 95 % interval | could detect ≥ | call "
        "| CPU-s (all runs) |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---|---:|")
    for r in results:
        for name, v in r["references"].items():
            low, high = v["difference_ci95"]
            print(
                f"| {r['model']} | {r['params']:,} | {r['tokens']:,} | {name} | {v['difference']:+.4f} | "
                f"[{low:+.4f}, {high:+.4f}] | {v['min_detectable']:.4f} | {v['call']} | {r['cpu_s']:.0f} |"
            )
    detected = [r for r in results if r["references"]["heldout_web"]["call"] == "curation helps"]
    if not detected:
        print("\nNo budget tried detects the curated arm's advantage on clean held-out text.")
    elif len(detected) < len(results):
        print(f"\nDetected at {len(detected)} of {len(results)} budgets only: the detection is not robust.")


if __name__ == "__main__":
    main()
