"""Repetition thresholds derived from real text, per document family and per language, as FineWeb-2 derives its
per-language thresholds from each language's own reference data instead of reusing the English values.

The set is ``benchmarks/real_text.py``'s (built at run time from the machine's manuals, help systems and man pages;
the same ``--corpus-dir`` and parameters reuse its cache). Each real web page is extracted as ``configs/web.yaml``
extracts it, and every Gopher repetition measure is computed on it with the paper's definitions
(``pipeline.curate.quality.gopher_repetition.repetition_ratios``); the generated spam pages are measured alike.

Two derivations, printed as one table and as the ``quality:`` block they suggest:

* **per family** (reference structure): for each measure, the ``--quantile`` (default 0.99) of every family's
  real pages; the derived threshold is the paper's, raised to the highest of those quantiles, so that no family
  of real documents loses more than 1 % of its pages to any one rule. The generated spam pages whose measure lies
  between the paper's threshold and the derived one are printed: those are what the relaxation lets through
  this rule (other rules may still drop them; ``real_text.py`` measures the whole recipe).
* **per language** (FineWeb-2's quantile matching): where the paper's threshold sits in the English pages'
  distribution (its quantile q), the threshold of language L is the q-quantile of L's pages, never below the
  English value; computed for the languages with at least ``--min-pages`` pages.

    python benchmarks/derive_thresholds.py [--corpus-dir DIR] [--quantile 0.99] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path

import real_text  # also puts the repository on sys.path (through _common)

from pipeline.curate.config import GopherRepetitionConfig
from pipeline.curate.extract import extract_resiliparse
from pipeline.curate.quality.document import Text
from pipeline.curate.quality.gopher_repetition import repetition_ratios
from pipeline.text import normalize_text


def paper_thresholds(cfg: GopherRepetitionConfig) -> dict[str, float]:
    out = {
        "dup_para_frac": cfg.dup_para_frac,
        "dup_para_char_frac": cfg.dup_para_char_frac,
        "dup_line_frac": cfg.dup_line_frac,
        "dup_line_char_frac": cfg.dup_line_char_frac,
        **{f"top_{n}_gram": t for n, t in cfg.top_n_grams},
        **{f"duplicated_{n}_n_grams": t for n, t in cfg.dup_n_grams},
    }
    return {k: v for k, v in out.items() if v is not None}


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(corpus: Path, docs: dict[str, dict], cfg: GopherRepetitionConfig) -> list[dict]:
    """One row per page of the web part: label, language, family and every repetition measure."""
    rows = []
    for name, label in sorted(docs.items()):
        raw = (corpus / "web" / name).read_text(encoding="utf-8", errors="replace")
        text = normalize_text(extract_resiliparse(raw, main_content=True))
        if len(text.split()) < 50:
            continue  # Gopher's 50-word minimum drops it before any repetition rule
        ratios = dict(repetition_ratios(Text(text, label["language"]), cfg))
        family = label.get("package", label["type"]) if label["label"] == "real" else "spam"
        rows.append({"name": name, "label": label["label"], "language": label["language"], "family": family, **ratios})
    return rows


def derive(rows: list[dict], paper: dict[str, float], q: float, min_pages: int) -> dict:
    real = [r for r in rows if r["label"] == "real"]
    by_family: dict[str, list[dict]] = defaultdict(list)
    by_language: dict[str, list[dict]] = defaultdict(list)
    for row in real:
        by_family[row["family"]].append(row)
        by_language[row["language"]].append(row)
    families = {f: members for f, members in sorted(by_family.items()) if len(members) >= min_pages}
    derived, per_family, spam_between = {}, {}, {}
    for rule, threshold in paper.items():
        per_family[rule] = {f: round(quantile([m[rule] for m in members], q), 4) for f, members in families.items()}
        derived[rule] = round(max(threshold, *per_family[rule].values()), 3)
        spam_between[rule] = sorted(
            r["name"] for r in rows if r["label"] == "spam" and threshold < r[rule] <= derived[rule]
        )
    english = by_language.get("en", [])
    per_language: dict[str, dict[str, float]] = {}
    for language, members in sorted(by_language.items()):
        if language == "en" or len(members) < min_pages or not english:
            continue
        values = {}
        for rule, threshold in derived.items():
            ordered = sorted(m[rule] for m in english)
            at = bisect_right(ordered, threshold) / len(ordered)  # the English quantile of the threshold
            local = quantile([m[rule] for m in members], min(at, 0.9999))
            if local > threshold:
                values[rule] = round(local, 3)
        if values:
            per_language[language] = values
    return {
        "quantile": q,
        "families": {f: len(m) for f, m in families.items()},
        "paper": paper,
        "per_family_quantile": per_family,
        "derived": derived,
        "spam_between_paper_and_derived": spam_between,
        "per_language": per_language,
    }


def recipe_block(result: dict) -> str:
    """The ``quality: gopher_repetition:`` settings (and ``languages:`` overrides) the derivation suggests."""
    d = result["derived"]
    top = [[int(k.split("_")[1]), v] for k, v in d.items() if k.startswith("top_")]
    dup = [[int(k.split("_")[1]), v] for k, v in d.items() if k.startswith("duplicated_")]
    lines = ["quality:", "  gopher_repetition:"]
    lines += [
        f"    {k}: {d[k]}" for k in ("dup_line_frac", "dup_para_frac", "dup_line_char_frac", "dup_para_char_frac")
    ]
    lines += [f"    top_n_grams: {json.dumps(top)}", f"    dup_n_grams: {json.dumps(dup)}"]
    if result["per_language"]:
        lines.append("  languages:")
        for language, values in result["per_language"].items():
            lines.append(f"    {language}: {{gopher_repetition: {json.dumps(values)}}}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus-dir", type=Path, default=Path.home() / ".cache" / "tokenmill" / "real_text")
    parser.add_argument("--max-per-language", type=int, default=60)
    parser.add_argument("--min-words", type=int, default=200)
    parser.add_argument("--spam", type=int, default=72)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quantile", type=float, default=0.99)
    parser.add_argument("--min-pages", type=int, default=20, help="least pages for a family or language to count")
    parser.add_argument("--no-install", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    real_text.PACKAGES_ROOT = args.corpus_dir / "packages"
    params = {"max_per_language": args.max_per_language, "min_words": args.min_words, "seed": args.seed}
    params["spam"] = args.spam
    corpus, manifest = real_text.load_or_build(
        args.corpus_dir, params, install=not args.no_install, rebuild=False, log=lambda m: print(m, file=sys.stderr)
    )
    cfg = GopherRepetitionConfig()
    rows = measure(corpus, manifest["docs"]["web"], cfg)
    result = derive(rows, paper_thresholds(cfg), args.quantile, args.min_pages)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"repetition measures: {args.quantile:.0%} quantile per family (paper mode, {len(rows)} pages)")
    table.add_column("rule")
    table.add_column("paper", justify="right")
    for family, count in result["families"].items():
        table.add_column(f"{family} ({count})", justify="right")
    table.add_column("derived", justify="right")
    table.add_column("spam in between", justify="right")
    for rule, threshold in result["paper"].items():
        cells = [str(result["per_family_quantile"][rule][f]) for f in result["families"]]
        between = len(result["spam_between_paper_and_derived"][rule])
        table.add_row(rule, str(threshold), *cells, str(result["derived"][rule]), str(between))
    console = Console(width=220)
    console.print(table)
    console.print(recipe_block(result))


if __name__ == "__main__":
    main()
