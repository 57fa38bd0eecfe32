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
  English value; computed for the languages with at least ``--min-pages`` pages. On this set a language's pages
  are mostly one family or another (LibreOffice's help is most of the Danish, Slovenian or Turkish pages), so
  this derivation measures the family as much as the language.
* **per language on parallel pages** (``--parallel-pages N``, default 100): the same page in language L and in
  English (the translated help systems and manuals name their English counterpart), so the family is the same
  and only the language differs. For each measure, the median over the pairs of L's value divided by the English
  page's (pairs whose English value is under 0.02 left out); the threshold for L is the paper's times that
  ratio when it is above 1, as FineWeb-2 scales each language's thresholds to its own text. Printed as the
  ``languages:`` block of the recipe.

* **language ID per language** (FineWeb-2 sets a confidence threshold per language): lid.176's score on real
  pages correctly identified differs by language (Slovenian prose is confusable with Croatian, Bosnian and
  Serbian; Danish with Norwegian). The threshold for L is the recipe's ``min_score`` times L's median score over
  English's median, where that is lower than ``min_score`` (languages with at least ``--min-pages`` correctly
  identified pages); printed as ``stages.language.min_score_by_language``.

    python benchmarks/derive_thresholds.py [--corpus-dir DIR] [--quantile 0.99] [--parallel-pages 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path
from typing import Any

import real_text  # also puts the repository on sys.path (through _common)

from pipeline.curate.config import GopherRepetitionConfig
from pipeline.curate.extract import extract_resiliparse
from pipeline.curate.quality.document import Text
from pipeline.curate.quality.gopher_repetition import repetition_ratios
from pipeline.text import line_words, normalize_text


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


def measure(corpus: Path, docs: dict[str, dict], cfg: GopherRepetitionConfig, lid: dict[str, Any]) -> list[dict]:
    """One row per page of the web part: label, language, family and every repetition measure; ``lid`` gets
    (language, score) of every page with 50 words or more, as the language stage sees it."""
    from datatrove.data import Document

    from pipeline.curate.config import LanguageConfig
    from pipeline.curate.language import LanguageStage

    stage = LanguageStage(LanguageConfig(keep=None, min_score=0.0))
    rows = []
    for name, label in sorted(docs.items()):
        raw = (corpus / "web" / name).read_text(encoding="utf-8", errors="replace")
        text = normalize_text(extract_resiliparse(raw, main_content=True))
        if label["label"] == "real" and len(text.split()) >= 50:
            doc = Document(text=text, id=name)
            stage.process(doc)
            lid[name] = (label["language"], doc.metadata.get("language"), doc.metadata.get("language_score"))
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


def page_ratios(path: Path, language: str, cfg: GopherRepetitionConfig) -> dict[str, float] | None:
    """Every repetition measure of one HTML page as ``configs/web.yaml`` extracts it (None under 100 words)."""
    raw = real_text.read_maybe_gz(path)
    if raw is None:
        return None
    text = normalize_text(extract_resiliparse(raw, main_content=True))
    if len(text.split()) < 100:
        return None
    measures = dict(repetition_ratios(Text(text, language), cfg))
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    # how much text a page is in each language's own counting (parallel pages only compare these): the words
    # C4 and Gopher count (2-character units in Han and kana runs) and the characters without spaces
    measures["c4_words"] = float(sum(line_words(line)[0] for line in lines))
    measures["characters"] = float(sum(len(line.replace(" ", "")) for line in lines))
    return measures


#: a language repeats more than English only when its median ratio over the pairs is above this, on at least
#: this many pairs (medians of 10-19 pairs move by ~0.1 from sample to sample)
PARALLEL_MIN_RATIO = 1.1
PARALLEL_MIN_PAIRS = 20
#: measured on parallel pages beside the repetition measures, never turned into thresholds here: how many words
#: and characters a translation has for the English page's (docs/filters.md, "Units for unsegmented scripts")
TEXT_MEASURES = ("c4_words", "characters")


def parallel_scales(
    paper: dict[str, float], cfg: GopherRepetitionConfig, pairs_per_language: int, seed: int, min_pairs: int
) -> dict[str, dict[str, Any]]:
    """language → {rule: (pairs, median ratio of L's measure to its English counterpart's)} on translated pages."""
    rng = random.Random(seed)
    out: dict[str, dict[str, Any]] = {}
    for language, candidates in sorted(real_text.web_candidates().items()):
        pairs = [(page, english) for _, page, english in candidates if english is not None and english.exists()]
        if language == "en" or not pairs:
            continue
        rng.shuffle(pairs)
        ratios: dict[str, list[float]] = defaultdict(list)
        for page, english in pairs[:pairs_per_language]:
            here, there = page_ratios(page, language, cfg), page_ratios(english, "en", cfg)
            if here is None or there is None:
                continue
            for rule in [*paper, *TEXT_MEASURES]:
                if there[rule] >= 0.02:
                    ratios[rule].append(here[rule] / there[rule])
        scales = {rule: [len(v), round(statistics.median(v), 3)] for rule, v in ratios.items() if len(v) >= min_pairs}
        if scales:
            out[language] = scales
    return out


def parallel_block(paper: dict[str, float], scales: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The ``languages:`` overrides the parallel derivation asks for: the paper's thresholds scaled up where a
    language repeats more than English on the same pages."""
    block: dict[str, dict[str, Any]] = {}
    for language, rules in scales.items():
        raised = {
            rule: round(paper[rule] * ratio, 3)
            for rule, (pairs, ratio) in rules.items()
            if rule in paper and ratio > PARALLEL_MIN_RATIO and pairs >= PARALLEL_MIN_PAIRS
        }
        if not raised:
            continue
        settings: dict[str, Any] = {k: v for k, v in raised.items() if not k.startswith(("top_", "duplicated_"))}
        for prefix, key in (("top_", "top_n_grams"), ("duplicated_", "dup_n_grams")):
            grams = [(int(r.split("_")[1]), t) for r, t in paper.items() if r.startswith(prefix)]
            if any(r.startswith(prefix) for r in raised):
                settings[key] = [
                    [n, raised.get(f"{prefix}{n}_{'gram' if prefix == 'top_' else 'n_grams'}", t)] for n, t in grams
                ]
        block[language] = {"gopher_repetition": settings}
    return block


def lid_thresholds(lid: dict[str, Any], min_score: float, min_pages: int) -> dict[str, Any]:
    """Per-language LID thresholds: ``min_score`` scaled by each language's median score over English's, where
    lower (scores of the real pages identified as their own language)."""
    scores: dict[str, list[float]] = defaultdict(list)
    for want, got, score in lid.values():
        if want == got and score is not None:
            scores[want].append(score)
    medians = {lang: round(statistics.median(v), 3) for lang, v in sorted(scores.items()) if len(v) >= min_pages}
    english = medians.get("en")
    derived = {}
    if english:
        for lang, median in medians.items():
            value = round(min_score * median / english, 2)
            if value < min_score:
                derived[lang] = value
    return {"min_score": min_score, "median_score": medians, "min_score_by_language": derived}


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
    parser.add_argument("--max-english", type=int, default=300)
    parser.add_argument("--min-words", type=int, default=200)
    parser.add_argument("--spam", type=int, default=72)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quantile", type=float, default=0.99)
    parser.add_argument("--min-pages", type=int, default=20, help="least pages for a family or language to count")
    parser.add_argument("--parallel-pages", type=int, default=100, help="translated pages per language (0: skip)")
    parser.add_argument("--no-install", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    real_text.PACKAGES_ROOT = args.corpus_dir / "packages"
    params = {"max_per_language": args.max_per_language, "max_english": args.max_english}
    params.update(min_words=args.min_words, seed=args.seed)
    params["spam"] = args.spam
    corpus, manifest = real_text.load_or_build(
        args.corpus_dir, params, install=not args.no_install, rebuild=False, log=lambda m: print(m, file=sys.stderr)
    )
    cfg = GopherRepetitionConfig()
    lid: dict[str, Any] = {}
    rows = measure(corpus, manifest["docs"]["web"], cfg, lid)
    result = derive(rows, paper_thresholds(cfg), args.quantile, args.min_pages)
    web_language = real_text.recipe_stages(real_text.REPO_ROOT / "configs" / "web.yaml").language
    result["lid"] = lid_thresholds(lid, web_language.min_score, args.min_pages)
    if args.parallel_pages:
        scales = parallel_scales(result["paper"], cfg, args.parallel_pages, args.seed, min_pairs=10)
        result["parallel_scale"] = scales
        result["parallel_languages_block"] = parallel_block(result["paper"], scales)
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
    if "parallel_scale" in result:
        rules = [*result["paper"], *TEXT_MEASURES]
        table = Table(title="per language on parallel pages: median of (L's measure / its English page's)")
        table.add_column("language")
        for rule in rules:
            table.add_column(rule.replace("_n_grams", "").replace("duplicated", "dup"), justify="right")
        for language, scales in result["parallel_scale"].items():
            table.add_row(language, *(f"{scales[r][1]} ({scales[r][0]})" if r in scales else "-" for r in rules))
        console.print(table)
        block = result["parallel_languages_block"]
        console.print(
            f"parallel pages: a language is scaled where its median ratio is over {PARALLEL_MIN_RATIO} "
            f"on at least {PARALLEL_MIN_PAIRS} pairs"
        )
        console.print("quality:\n  languages:" if block else "parallel pages: no language repeats more than English")
        for language, settings in block.items():
            console.print(f"    {language}: {json.dumps(settings)}")
    lid_result = result["lid"]
    console.print(f"language ID: median score of correctly identified real pages {lid_result['median_score']}")
    console.print("stages:\n  language:\n    min_score_by_language: " + json.dumps(lid_result["min_score_by_language"]))


if __name__ == "__main__":
    main()
