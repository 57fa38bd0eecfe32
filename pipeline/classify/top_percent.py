"""Classify mode ``top_percent``: keep the run's top N % of documents by a classifier's score (DCLM's top 10 %).

A cutoff "the top 10 %" is a property of the whole run, not of one rank or one source, so it cannot be decided
while a rank streams its documents. As with dedup, the decision is a pass over the run after curation: the
classify stage scores every document and keeps it (``metadata["classify"][name]``), and once every source is
curated and deduped, ``run_top_percent``

1. lists the documents the run keeps so far (``deduped/<source>/`` when the run dedups, else ``curated/``),
   pins the file list (size, mtime) and the settings in ``stages/top_percent/plan.json``;
2. reads every document's score (only the scores: ~40 bytes per document in memory) and decides, per run and
   across all sources and ranks that ran the classifier, which documents are in the top ``top_percent`` %;
3. writes each input file's kept documents to ``top_percent/<source>/<file>`` and its drops (stage
   ``classify``, rule ``<name>_below_top_percent``, the score, the cutoff) to
   ``dropped/<source>/top_percent/<file>``, both through a temporary file and ``os.replace``, then a marker
   ``stages/top_percent/done/<source>/<file>.json``.

A rerun or a run killed mid-way (SIGKILL) resumes: the decisions are a pure function of the pinned input, so
they are recomputed, finished files (marker present) are skipped and an unfinished file is rewritten whole. A
changed input or setting starts the pass over (its outputs are removed first; only what it wrote).

**Per run, not per source**: "the top 10 %" of DCLM is of the whole pool being filtered; a per-source cut would
keep 10 % of a source of uniformly poor pages as readily as 10 % of a good one. A recipe that wants a per-source
cut gives each source its own classifier name (``sources[].stages.classify``): the population of a classifier
is every document that carries its score, wherever it comes from. Documents without the score (a source that
does not run the classifier) are neither counted nor dropped.

**Exactly how many**: of ``n`` scored documents, ``k = floor(n * top_percent / 100 + 0.5)`` (round half up) are
kept: those with the highest scores, ties at the cutoff broken by a BLAKE2 hash of (source, id), so the same
documents are kept on every rerun whatever the ranks or file order, and no source is favoured by its name.
Several ``top_percent`` classifiers apply in recipe order, each to the survivors of the previous ones (as
``threshold`` classifiers do in the stage).

Why hand-written: no library step selects a global top-k over a datatrove run with drop rows; it is a sort
over one score array (NumPy ``lexsort``) plus the resumable file rewrite, as ``pipeline.dedup`` does for its
decisions.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from array import array
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from datatrove.data import Document

from pipeline.atomic import atomic_open
from pipeline.base import Drop, drop_row
from pipeline.config_base import RecipeError
from pipeline.fingerprint import digest, read_fingerprint, write_fingerprint
from pipeline.layout import RunLayout
from pipeline.ownership import record_of, remove_owned

STAGE = "classify"
#: the pass's own folder under dropped/<source>/ (its rows carry stage ``classify``)
DROPS_FOLDER = "top_percent"


class TopPercentError(RecipeError):
    """A recipe whose ``top_percent`` classifiers cannot be applied as written (e.g. two sources disagree)."""


@dataclass(frozen=True)
class TopPercentRule:
    name: str
    top_percent: float


def top_percent_rules(recipe: Any) -> list[TopPercentRule]:
    """The recipe's ``mode: top_percent`` classifiers (over every source's stages), in recipe order."""
    rules: dict[str, float] = {}
    for source in recipe.sources:
        for cfg in recipe.stages_for(source).classify or []:
            if cfg.mode != "top_percent":
                continue
            if cfg.name in rules and rules[cfg.name] != cfg.top_percent:
                raise TopPercentError(
                    f"classifier {cfg.name}: top_percent {rules[cfg.name]:g} and {cfg.top_percent:g} in different "
                    "sources; one name is one cut over the run (give the sources different names for per-source cuts)"
                )
            rules[cfg.name] = cfg.top_percent
    return [TopPercentRule(name, share) for name, share in rules.items()]


def keep_count(scored: int, top_percent: float) -> int:
    """How many of ``scored`` documents the top ``top_percent`` % is: round half up (10 % of 25 is 3)."""
    return min(scored, int(np.floor(scored * top_percent / 100.0 + 0.5)))


def clear_outputs(layout: RunLayout) -> None:
    """Remove what the pass wrote (``top_percent/``, ``dropped/*/top_percent/``, ``stages/top_percent/``)."""
    targets = [layout.root / "top_percent", layout.stage_dir("top_percent")]
    if layout.dropped().is_dir():
        targets += [source / DROPS_FOLDER for source in layout.dropped().iterdir()]
    targets = [t for t in targets if t.exists() or t.is_symlink()]
    if targets:
        record = record_of(layout.root)
        for target in targets:
            remove_owned(target, record)


def _input_folder(layout: RunLayout, source: str) -> Path:
    deduped = layout.deduped(source)
    return deduped if deduped.is_dir() else layout.curated(source)


def _tie_key(source: str, doc_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{source}\0{doc_id}".encode(), digest_size=8).digest(), "big")


def _lines(path: Path):
    with gzip.open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                yield line


@contextmanager
def _gzip_writer(path: Path):
    # mtime=0: the same documents give the same bytes, so a resumed pass is byte-identical to an unbroken one
    with (
        atomic_open(path, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=3) as out,
    ):
        yield out


@dataclass(frozen=True)
class TopPercentCut:
    """One ``top_percent`` classifier's cut over the run."""

    top_percent: float  # the share kept, in %
    scored: int  # documents that carry its score (the survivors of the cuts before it)
    kept: int
    dropped: int
    cutoff: float | None  # the lowest kept score; None when it keeps nothing
    per_source: dict[str, dict[str, int]]  # source -> scored, kept


@dataclass(frozen=True)
class TopPercentResult:
    """What ``run_top_percent`` returns; ``to_dict`` is ``stages/top_percent/result.json``."""

    classifiers: dict[str, TopPercentCut]  # by classifier name, in recipe order
    documents: int  # documents the pass read

    def to_dict(self) -> dict[str, Any]:
        return {
            "classifiers": {name: asdict(cut) for name, cut in self.classifiers.items()},
            "documents": self.documents,
        }


def run_top_percent(recipe: Any, layout: RunLayout) -> TopPercentResult | None:
    """Apply the recipe's ``top_percent`` classifiers to the run (module docstring); ``None`` when it has none.

    Returns (and saves as ``stages/top_percent/result.json``) each classifier's cut: ``top_percent``, ``scored``,
    ``kept``, ``dropped``, ``cutoff`` (the lowest kept score) and per source ``scored``/``kept``.
    """
    rules = top_percent_rules(recipe)
    if not rules:
        clear_outputs(layout)
        return None
    stage_dir = layout.stage_dir("top_percent")
    files, names, fingerprint = _pin_inputs(recipe, layout, rules)
    scores = _read_scores(files, rules)
    verdict, result, cutoffs = _decide(rules, scores, files)
    _rewrite_files(layout, files, names, scores.counts, verdict, rules, cutoffs, fingerprint)
    for source in recipe.sources:  # a source with nothing (left) to read still gets its folder: "ran, kept 0"
        (layout.root / "top_percent" / source.name).mkdir(parents=True, exist_ok=True)
    stage_dir.mkdir(parents=True, exist_ok=True)
    (stage_dir / "result.json").write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    return result


def _pin_inputs(
    recipe: Any, layout: RunLayout, rules: list[TopPercentRule]
) -> tuple[list[tuple[str, Path]], list[str], str]:
    """Step 0: the files the run keeps so far as ``(source, path)``, each file's output name and the pass's
    fingerprint (settings + file list with size and mtime); a changed fingerprint clears the pass's outputs."""
    stage_dir = layout.stage_dir("top_percent")
    files: list[tuple[str, Path]] = []
    names: list[str] = []  # each file's output name: curated/<target>/routed-from-<origin>/ files flattened
    for source in recipe.sources:
        folder = _input_folder(layout, source.name)
        found = sorted(folder.glob("**/*.jsonl.gz")) if folder.is_dir() else []
        files += [(source.name, p) for p in found]
        names += [p.relative_to(folder).as_posix().replace("/", "--") for p in found]
    listing = [(s, p.parent.name, p.name, p.stat().st_size, p.stat().st_mtime_ns) for s, p in files]
    fingerprint = digest("top_percent", [(r.name, r.top_percent) for r in rules], listing)
    if read_fingerprint(stage_dir / "plan.json") != fingerprint:
        clear_outputs(layout)
        write_fingerprint(stage_dir / "plan.json", fingerprint, {"rules": [r.__dict__ for r in rules]})
    return files, names, fingerprint


@dataclass
class _Scores:
    """Every document's scores (NaN: not scored by that classifier; one column per rule), tie key and source,
    in file order, and the number of documents in each file."""

    table: np.ndarray
    tie: np.ndarray
    sources: np.ndarray
    counts: list[int]


def _read_scores(files: list[tuple[str, Path]], rules: list[TopPercentRule]) -> _Scores:
    """Step 1: read only the scores. Typed arrays, not lists of Python objects: 8 bytes per score, 8 per tie
    key, 4 per owner."""
    scores, ties, owner = array("d"), array("Q"), array("i")
    counts: list[int] = []
    for number, (source, path) in enumerate(files):
        counts.append(0)
        for line in _lines(path):
            counts[-1] += 1
            doc = orjson.loads(line)
            values = (doc.get("metadata") or {}).get("classify") or {}
            scores.extend(float(values[r.name]) if r.name in values else np.nan for r in rules)
            ties.append(_tie_key(source, str(doc.get("id"))))
            owner.append(number)
    table = np.frombuffer(scores, dtype=np.float64).reshape(len(ties), len(rules))
    tie = np.frombuffer(ties, dtype=np.uint64)
    source_of_file = np.asarray([s for s, _ in files] or [""], dtype=object)
    sources = source_of_file[np.frombuffer(owner, dtype=np.int32)] if len(owner) else np.zeros(0, dtype=object)
    return _Scores(table, tie, sources, counts)


def _decide(
    rules: list[TopPercentRule], scores: _Scores, files: list[tuple[str, Path]]
) -> tuple[np.ndarray, TopPercentResult, list[float | None]]:
    """Step 2: per document ``-1`` (kept) or the index of the rule that dropped it; the result (per classifier)
    and each rule's cutoff (the lowest kept score, ``None`` when it keeps nothing)."""
    table, tie, sources = scores.table, scores.tie, scores.sources
    verdict = np.full(len(tie), -1, dtype=np.int64)
    cuts: dict[str, TopPercentCut] = {}
    cutoffs: list[float | None] = []
    for r_index, rule in enumerate(rules):
        candidates = np.flatnonzero((verdict == -1) & ~np.isnan(table[:, r_index]))
        k = keep_count(len(candidates), rule.top_percent)
        # highest score first; equal scores by the hash key (lexsort: the last key is the primary one)
        order = candidates[np.lexsort((tie[candidates], -table[candidates, r_index]))]
        verdict[order[k:]] = r_index
        cutoff = float(table[order[k - 1], r_index]) if k else None
        cutoffs.append(cutoff)
        per_source = {}
        for name in dict.fromkeys(s for s, _ in files):
            mine = sources[candidates] == name if len(candidates) else np.zeros(0, bool)
            kept_mine = sources[order[:k]] == name if k else np.zeros(0, bool)
            if mine.any():
                per_source[name] = {"scored": int(mine.sum()), "kept": int(kept_mine.sum())}
        cuts[rule.name] = TopPercentCut(
            top_percent=rule.top_percent,
            scored=int(len(candidates)),
            kept=int(k),
            dropped=int(len(candidates) - k),
            cutoff=cutoff,
            per_source=per_source,
        )
    return verdict, TopPercentResult(cuts, len(tie)), cutoffs


def _rewrite_files(
    layout: RunLayout,
    files: list[tuple[str, Path]],
    names: list[str],
    counts: list[int],
    verdict: np.ndarray,
    rules: list[TopPercentRule],
    cutoffs: list[float | None],
    fingerprint: str,
) -> None:
    """Step 3: rewrite each file into kept documents and drop rows, skipping the ones a killed run finished."""
    stage_dir = layout.stage_dir("top_percent")
    position = 0
    for number, (source, path) in enumerate(files):
        count = counts[number]
        mine = verdict[position : position + count]
        position += count
        marker = stage_dir / "done" / source / f"{names[number]}.json"
        if marker.exists():
            continue
        out = layout.root / "top_percent" / source / names[number]
        out.parent.mkdir(parents=True, exist_ok=True)
        if not (mine >= 0).any():
            with atomic_open(out, "wb") as handle, open(path, "rb") as source_file:
                shutil.copyfileobj(source_file, handle)
        else:
            _split_file(path, out, layout.dropped(source) / DROPS_FOLDER / names[number], mine, source, rules, cutoffs)
        write_fingerprint(marker, fingerprint, {"kept": int((mine < 0).sum()), "dropped": int((mine >= 0).sum())})


def _split_file(
    path: Path,
    out: Path,
    drops: Path,
    mine: np.ndarray,
    source: str,
    rules: list[TopPercentRule],
    cutoffs: list[float | None],
) -> None:
    """One input file's kept documents to ``out`` and its drop rows to ``drops``, each through a temporary file."""
    drops.parent.mkdir(parents=True, exist_ok=True)
    # the drops file is in place before the kept one (the inner writer closes first), as the marker expects
    with _gzip_writer(out) as kept_handle, _gzip_writer(drops) as drop_handle:
        for line, decided in zip(_lines(path), mine, strict=True):
            if decided < 0:
                kept_handle.write(line if line.endswith(b"\n") else line + b"\n")
                continue
            rule = rules[int(decided)]
            row = _drop_row(orjson.loads(line), source, rule, cutoffs[int(decided)])
            drop_handle.write(json.dumps(row, ensure_ascii=False).encode() + b"\n")


def _drop_row(doc: dict[str, Any], source: str, rule: TopPercentRule, cutoff: float | None) -> dict[str, Any]:
    metadata = dict(doc.get("metadata") or {})
    metadata.setdefault("source", source)
    document = Document(text=doc.get("text") or "", id=str(doc.get("id")), metadata=metadata)
    score = float(metadata["classify"][rule.name])
    extra = {"top_percent": rule.top_percent, "cutoff": cutoff}
    return drop_row(document, STAGE, Drop(rule=f"{rule.name}_below_top_percent", score=score, extra=extra))


__all__ = ["TopPercentError", "TopPercentRule", "clear_outputs", "keep_count", "run_top_percent", "top_percent_rules"]
