"""``tokenmill ablate``: does curation make the model better? Two arms from the same sources, measured in bits
per byte on reference text that neither arm was filtered toward.

* **Arms.** *raw*: the recipe's sources read and extracted only (language, quality, PII and dedup off, per-
  source overrides other than ``extract`` dropped); *curated*: the recipe as it is. Each arm is a normal run
  directory (``<out>/<arm>/run``, accounts checked: every document read is kept or dropped with its rule).
* **Reference set.** (a) the files the user names (``ablate.reference`` / ``--reference``: text, markdown or
  JSONL files, or folders of them), one reference set per path; (b) *held-out clean text per source*:
  a seeded ``heldout_share`` of the curated arm's kept documents of each source (chosen by a hash of the
  document id, capped at ``max_heldout_docs``). Every reference document, by id and by exact text, is removed
  from **both** arms' training documents (the counts are in the report), so neither arm trains on them.
  (b) is by construction text that curation keeps, so it leans toward the curated arm; (a) is the neutral
  test, and the report says so.
* **Training.** The same tokenizer (the curated arm's, trained by the recipe's tokenize settings; the raw arm
  reuses it), the same model and hyper-parameters (the recipe's ``train:`` section), the same number of
  training tokens (``max_steps`` × batch; a recipe that trains "one epoch" gets the curated arm's epoch in
  both arms), and three seeds per arm by default (a seed sets the initialisation and the data order, the same
  in both arms, so the arms are paired by seed).
* **Verdict** (training/ablate_stats.py, rendered by training/ablate_report.py). Per reference: the paired 95 %
  interval of raw − curated bpb (seed noise plus the reference documents' sampling noise), the smallest
  difference the run could detect, and the call: "curation helps" / "curation hurts" only when the interval
  excludes 0, else "no detectable difference". Where the curated arm is not better, the report says so plainly.
* **Progress.** One line per run started and finished, the current run's step every 30 s and the evaluation
  phase, with the whole ablation's ETA (training/progress.py).

Resumable: curation reuses the stages' own fingerprints, shards and the train runs resume, and every finished
(arm, seed) keeps its bpb in ``result.json``.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from pipeline.config_base import StrictModel
from pipeline.errors import TokenmillError
from pipeline.layout import RunLayout
from pipeline.lock import hold
from pipeline.ownership import claim, record_of, remove_owned
from pipeline.shards.format import MANIFEST, ShardManifest
from pipeline.tokenize.config import TokenizeConfig
from training.ablate_report import AblationReport, render_report, spread, summarise, summarise_tasks, verdict

__all__ = ["render_report", "spread", "verdict"]  # the report's functions, imported from here by older callers

ARMS = ("raw", "curated")
TEXT_SUFFIXES = (".txt", ".md", ".rst", ".text")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".json.gz", ".ndjson")
REPORT_MD = "ablation_report.md"
REPORT_JSON = "ablation_report.json"


class AblateError(TokenmillError, ValueError):
    """An ablation that cannot run as asked; the message names the option or the file."""


class AblateConfig(StrictModel):
    """The recipe's ``ablate:`` section (every field documented in docs/scaling.md)."""

    enabled: bool = Field(default=False, description="`tokenmill demo`: run the ablation after the pipeline")
    reference: list[str] = Field(default_factory=list, description="held-out files/folders the user names")
    heldout_share: float = Field(default=0.05, gt=0, lt=0.5, description="clean held-out share per source")
    max_heldout_docs: int = Field(default=200, ge=1, description="… at most this many documents per source")
    seeds: list[int] = Field(
        default_factory=lambda: [1, 2, 3], description="training seeds per arm (two or more; paired across arms)"
    )
    tasks: list[str] = Field(
        default_factory=list, description="multiple-choice tasks each run's model is evaluated on (`tokenmill eval`)"
    )
    max_steps: int | None = Field(default=None, ge=1, description="training steps per run (default: train:'s)")
    train: dict[str, Any] = Field(default_factory=dict, description="TrainConfig keys replacing train:'s")
    seq_len: int | None = Field(default=None, ge=8, description="bpb window (default: the training seq_len)")
    force: bool = Field(default=False, description="train past the budget check")

    @field_validator("seeds")
    @classmethod
    def _two_seeds(cls, value: list[int]) -> list[int]:
        if len(set(value)) < 2:
            raise ValueError("at least two different seeds per arm (the seed spread decides what is real)")
        return value


def load_ablate_config(data: dict[str, Any] | None, origin: str = "ablate") -> AblateConfig:
    try:
        return AblateConfig.model_validate(data or {})
    except ValidationError as error:
        lines = [f"{origin}: invalid ablate settings"]
        for item in error.errors():
            where = ".".join(str(p) for p in item["loc"]) or "(top level)"
            lines.append(f"  ablate.{where}: {'unknown key' if item['type'] == 'extra_forbidden' else item['msg']}")
        raise AblateError("\n".join(lines)) from None


# ------------------------------------------------------------------------------------------------- arms


def arm_recipe(recipe: Any, arm: str, out: Path) -> Any:
    """The recipe of one arm: curated = the recipe; raw = read + extract only. Both write into ``out/<arm>/run``
    and stop after curation (the ablation tokenizes and trains them itself)."""
    data = recipe.model_dump(mode="json")
    data.update(output_dir=str(out / arm / "run"), plan=None, train=None, ablate=None)
    data["stages"]["tokenize"] = None
    if arm == "raw":
        data["stages"].update(language=None, quality=None, pii=None, dedup=None)
        for source in data["sources"]:
            extract = (source.get("stages") or {}).get("extract")
            source["stages"] = {"extract": extract} if extract else None
    return type(recipe).model_validate(data)  # the recipe's own class (training.recipe.Recipe)


def curate_arm(recipe: Any) -> dict[str, Path]:
    """Curate (and dedup) one arm's recipe; return each source's folder of kept documents."""
    from pipeline.curate.build import curate_source
    from pipeline.executor import executor_factory
    from pipeline.run import prepare_run_dir, run_dedup_stage, write_curation_report

    with RunLayout.at(recipe.output_dir).lock():  # as the pipeline does: a second ablation here is refused
        layout = prepare_run_dir(recipe)
        for source in recipe.sources:
            curate_source(recipe, source, layout)
        if recipe.stages.dedup is not None:
            run_dedup_stage(recipe, layout, executor_factory(recipe.executor, "dedup"))
        write_curation_report(recipe, layout)  # read == kept + dropped, or it raises
    kept = layout.deduped if recipe.stages.dedup is not None else layout.curated
    return {s.name: kept(s.name) for s in recipe.sources}


def read_documents(folder: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(folder.rglob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)


def text_key(text: str) -> str:
    """Exact text, whitespace-normalised: what counts as "the same document" across arms and references."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def _id_key(doc_id: str, seed: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{doc_id}".encode()).digest()[:8], "big")


# ------------------------------------------------------------------------------------------- references


def read_reference(path: str | Path) -> list[str]:
    """Documents of one user reference: a text/markdown file (one document), a JSONL file (its ``text``
    fields), or a folder of such files. Errors name the path."""
    path = Path(path)
    if not path.exists():
        raise AblateError(f"reference: {path} does not exist")
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    texts: list[str] = []
    for file in files:
        name = file.name.lower()
        if name.endswith(JSONL_SUFFIXES):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(file, "rt", encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if not line.strip():
                        continue
                    try:
                        text = json.loads(line).get("text")
                    except (ValueError, AttributeError):
                        raise AblateError(f"reference: {file}:{number}: not a JSON object") from None
                    if isinstance(text, str) and text.strip():
                        texts.append(text)
        elif name.endswith(TEXT_SUFFIXES) or not path.is_dir():
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise AblateError(f"reference: {file}: not UTF-8 text") from None
            if text.strip():
                texts.append(text)
    if not texts:
        raise AblateError(f"reference: {path}: no text found (text/markdown files, or JSONL with a text field)")
    return texts


def reference_name(path: str | Path, taken: set[str]) -> str:
    base = Path(path).name.split(".")[0] or "reference"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def build_references(
    settings: AblateConfig, curated: dict[str, Path], out: Path, seed: int = 0
) -> tuple[dict[str, list[str]], set[str], set[str]]:
    """``(reference sets, ids to exclude, text keys to exclude)``; written to ``out/reference/<name>.jsonl.gz``."""
    references: dict[str, list[str]] = {}
    for path in settings.reference:
        references[reference_name(path, set(references))] = read_reference(path)
    ids: set[str] = set()
    for source, folder in curated.items():
        docs = list(read_documents(folder))
        if len(docs) < 2:
            continue
        count = min(settings.max_heldout_docs, max(1, round(settings.heldout_share * len(docs))))
        chosen = sorted(docs, key=lambda d: _id_key(str(d.get("id")), seed))[:count]
        references[f"heldout_{source}"] = [d["text"] for d in chosen]
        ids |= {str(d.get("id")) for d in chosen}
    if not references:
        raise AblateError("no reference text: name files with ablate.reference, or give sources with documents")
    folder = out / "reference"
    folder.mkdir(parents=True, exist_ok=True)
    for name, texts in references.items():
        with gzip.open(folder / f"{name}.jsonl.gz", "wt", encoding="utf-8") as handle:
            handle.writelines(json.dumps({"text": t}) + "\n" for t in texts)
    keys = {text_key(t) for texts in references.values() for t in texts}
    return references, ids, keys


def training_documents(kept: dict[str, Path], target: Path, ids: set[str], keys: set[str]) -> dict[str, dict]:
    """Write an arm's kept documents minus the reference ones to ``target/<source>/``; return the counts."""
    remove_owned(target, record_of(target.parent.parent))
    counts = {}
    for source, folder in kept.items():
        kept_n = excluded = 0
        (target / source).mkdir(parents=True, exist_ok=True)
        with gzip.open(target / source / "00000.jsonl.gz", "wt", encoding="utf-8") as handle:
            for doc in read_documents(folder):
                if str(doc.get("id")) in ids or text_key(doc["text"]) in keys:
                    excluded += 1
                    continue
                metadata = dict(doc.get("metadata") or {})
                metadata["source"] = source
                handle.write(json.dumps({"text": doc["text"], "id": doc.get("id"), "metadata": metadata}) + "\n")
                kept_n += 1
        counts[source] = {"documents": kept_n, "excluded_reference": excluded}
    return counts


# ------------------------------------------------------------------------------------------------ train


def tokenize_arm(recipe: Any, docs: Path, shards: Path, tokenizer: Path | None) -> ShardManifest:
    """Tokenize an arm's training documents with the recipe's mix; ``tokenizer``: reuse it (the raw arm)."""
    from pipeline.run import source_mix
    from pipeline.tokenize.run import run_tokenize

    base = recipe.stages.tokenize.model_dump() if recipe.stages.tokenize is not None else {}
    base.update(heldout_share=0.0)  # the reference set is the held-out text; every training document trains
    if tokenizer is not None:
        base["tokenizer"] = str(tokenizer)
    key, marker = _key(docs, base), shards.parent / "shards.key"
    if (shards / MANIFEST).is_file() and marker.is_file() and marker.read_text().strip() == key:
        return ShardManifest.read(shards)  # same documents: reuse
    remove_owned(marker, record_of(shards.parent.parent))
    manifest = run_tokenize(str(docs), str(shards), TokenizeConfig.model_validate(base), source_mix(recipe))
    marker.write_text(key + "\n", encoding="utf-8")
    return manifest


def _key(docs: Path, settings: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    for path in sorted(docs.rglob("*.jsonl.gz")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def arm_train_config(recipe: Any, settings: AblateConfig, shards: Path, output: Path, seed: int, tokens: int | None):
    from training.config import TrainConfig

    data = dict(recipe.train or {})
    data.update(settings.train)
    if settings.max_steps is not None:
        data.update(max_steps=settings.max_steps, max_tokens=None)
    elif tokens is not None:
        data.update(max_tokens=tokens, max_steps=None)
    data.update(
        shards=str(shards),
        output=str(output),
        seed=seed,
        eval_every=0,
        eval_batches=0,
        tensorboard=False,
    )
    if settings.force:
        data["force"] = True
    return TrainConfig.model_validate(data)


# --------------------------------------------------------------------------------------------- driver


def run_ablation(
    recipe: Any, out: str | Path, settings: AblateConfig, say: Callable[[str], None] | None = None
) -> AblationReport:
    """Both arms, every seed, every reference: the report's JSON (``out/ablation_report.{md,json}``).

    ``out`` is claimed and locked for the ablation (``pipeline.ownership``, ``pipeline.lock``)."""
    out = Path(out)
    with hold(out, "ablate"):
        claim(out, "ablate")
        return _run_ablation(recipe, out, settings, say or (lambda _message: None))


def _run_ablation(recipe: Any, out: Path, settings: AblateConfig, say: Callable[[str], None]) -> AblationReport:
    if recipe.train is None and not settings.train:
        raise AblateError("the recipe has no train: section (the model and hyper-parameters both arms train with)")
    for path in settings.reference:  # before the arms are curated: a typo fails in a second, not minutes
        if not Path(path).exists():
            raise AblateError(f"reference: {path} does not exist")
    kept = {}
    for arm in ARMS:
        say(f"{arm}: curating ({'read + extract only' if arm == 'raw' else 'the recipe'})")
        kept[arm] = curate_arm(arm_recipe(recipe, arm, out))
    references, ids, keys = build_references(settings, kept["curated"], out)
    say("references: " + ", ".join(f"{n} ({len(t)} documents)" for n, t in references.items()))
    documents, manifests = {}, {}
    for arm in ("curated", "raw"):  # the curated arm trains the tokenizer the raw arm reuses
        documents[arm] = training_documents(kept[arm], out / arm / "train_docs", ids, keys)
        tokenizer = out / "curated" / "shards" / "tokenizer" if arm == "raw" else None
        manifests[arm] = tokenize_arm(recipe, out / arm / "train_docs", out / arm / "shards", tokenizer)
    one_epoch = None
    probe = arm_train_config(recipe, settings, out / "curated" / "shards", out / "probe", settings.seeds[0], None)
    if probe.max_steps is None and probe.max_tokens is None:  # "one epoch": of the curated arm, for both arms
        one_epoch = manifests["curated"].train_tokens

    results = train_arms(recipe, settings, out, references, one_epoch, say)
    tokens = {arm: {r["tokens"] for r in results[arm].values()} for arm in ARMS}
    if len(tokens["raw"] | tokens["curated"]) != 1:
        raise AblateError(f"the arms trained on different token counts {tokens}: remove {out} and rerun")
    report = dataclasses.replace(
        summarise(results, references, documents, manifests, settings),
        user_references=[reference_name(p, set()) for p in settings.reference],
        tasks=summarise_tasks(results, settings.seeds),
    )
    data = report.to_dict()
    (out / REPORT_JSON).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    (out / REPORT_MD).write_text(render_report(data), encoding="utf-8")
    return dataclasses.replace(report, report_md=str(out / REPORT_MD))


def train_arms(
    recipe: Any,
    settings: AblateConfig,
    out: Path,
    references: dict[str, list[str]],
    one_epoch: int | None,
    say: Callable[[str], None],
) -> dict[str, dict[int, dict]]:
    """Train and measure every (arm, seed), skipping those with a ``result.json``; progress and ETA across all."""
    from training.bpb import bits_per_byte
    from training.progress import JobProgress
    from training.train import run_training

    plan = [(arm, seed) for arm in ARMS for seed in settings.seeds]
    configs = {
        key: arm_train_config(
            recipe, settings, out / key[0] / "shards", out / key[0] / f"seed-{key[1]}", key[1], one_epoch
        )
        for key in plan
    }
    done = {key: out / key[0] / f"seed-{key[1]}" / "result.json" for key in plan}
    steps = [_planned_steps(configs[key]) for key in plan]
    progress = JobProgress(say, "ablation", steps, done_before=sum(done[k].is_file() for k in plan))
    results: dict[str, dict[int, dict]] = {arm: {} for arm in ARMS}
    for key, planned in zip(plan, steps, strict=True):
        arm, seed = key
        if done[key].is_file():
            results[arm][seed] = json.loads(done[key].read_text(encoding="utf-8"))
            continue
        run = done[key].parent
        progress.start_run(f"{arm} seed {seed}", planned)
        summary = run_training(configs[key], on_step=progress.on_step)
        if summary.status != "completed":
            raise AblateError(f"{run}: training {summary.status}; rerun to continue")
        assert summary.final is not None, "a completed run exports its model"
        progress.evaluating(f"bits per byte on {len(references)} references" + (" and tasks" if settings.tasks else ""))
        seq_len = settings.seq_len or configs[key].seq_len or 512
        measured = {name: bits_per_byte(summary.final, texts, seq_len) for name, texts in references.items()}
        results[arm][seed] = {
            "arm": arm,
            "seed": seed,
            "tokens": summary.tokens,
            "steps": summary.step,
            "params": summary.params,
            "final_loss": summary.final_loss,
            "bpb": {name: m.bpb for name, m in measured.items()},
            "reference_bytes": {name: m.bytes for name, m in measured.items()},
            "doc_bits": {name: m.doc_bits for name, m in measured.items()},
            "doc_bytes": {name: m.doc_bytes for name, m in measured.items()},
        }
        if settings.tasks:
            from training.evals.run import evaluate_model

            results[arm][seed]["tasks"] = evaluate_model(summary.final, settings.tasks).to_dict()
        done[key].write_text(json.dumps(results[arm][seed], indent=2) + "\n", encoding="utf-8")
        progress.end_run()
        say(f"{arm} seed {seed}: " + ", ".join(f"{n} {v:.4f}" for n, v in results[arm][seed]["bpb"].items()))
    return results


def _planned_steps(config: Any) -> int:
    """Steps a run will train (for the ETA): ``max_steps``, or its token budget over the batch."""
    if config.max_steps is not None:
        return config.max_steps
    batch = config.global_batch_tokens or config.micro_batch * (config.seq_len or 512)
    return max(1, round((config.max_tokens or 0) / batch))
