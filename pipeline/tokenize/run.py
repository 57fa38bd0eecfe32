"""``run_tokenize``: curated documents → tokenizer → encoded parts (datatrove ranks) → held-out split →
mix → shuffled, size-capped shards → ``manifest.json``.

Output folder (``<run>/shards`` in a run)::

    tokenizer/            tokenizer.json + tokenizer_config.json (AutoTokenizer loads it offline)
    train/train_NNNNN.ds  + .ds.index: the shuffled training mix (point trainers here, not at the parent)
    heldout/<source>/<source>_NNNNN.ds  + .ds.index: each source's held-out documents
    manifest.json         tokenizer hash, dtype, counts per source and split, shares, repeats, fingerprint
    logs/                 datatrove logs and stats of the encode ranks

A rerun rewrites all of it (the encode ranks run again: a changed tokenizer or input must never meet stale
parts). Work files live in ``.work/`` and are removed at the end unless ``keep_work``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import progress
from pipeline.atomic import write_json_atomic
from pipeline.errors import TokenmillError
from pipeline.executor import preload_forkserver
from pipeline.fingerprint import sha256_file
from pipeline.local_executor import GuardedLocalExecutor
from pipeline.lock import hold
from pipeline.ownership import RunRecord, claim, remove_owned
from pipeline.read.listing import write_paths_file
from pipeline.shards.format import (
    HELDOUT_DIR,
    MANIFEST,
    MANIFEST_VERSION,
    TRAIN_DIR,
    ShardManifest,
    fingerprint,
    numpy_dtype,
    open_tokens,
    read_index,
)
from pipeline.tokenize.config import SourceMix, TokenizeConfig
from pipeline.tokenize.encode import EncodeStep
from pipeline.tokenize.inputs import InputPlan, default_source, discover_inputs, iter_texts, make_reader
from pipeline.tokenize.mix import heldout_mask, keyed, normalise_mix, plan_targets, select_documents
from pipeline.tokenize.shards import DocumentTable, remove_shards, write_documents
from pipeline.tokenize.tokenizer import (
    TokenizerError,
    load_tokenizer,
    pick_eos,
    resolve_tokenizer_path,
    save_tokenizer,
    token_dtype,
    train_tokenizer,
    vocab_size,
)

logger = logging.getLogger("tokenmill.tokenize")

# (pipeline, logging_dir, tasks) -> a datatrove executor with .run(); tasks: config.tasks, at most one per input file
ExecutorFactory = Callable[[list, str, int], Any]


class TokenizeError(TokenmillError, ValueError):
    """The tokenize stage cannot produce shards; the message says which source or file and why."""


def run_tokenize(
    run_dir_or_input: str | Path,
    output_dir: str | Path,
    config: TokenizeConfig | None = None,
    sources: Mapping[str, Any] | None = None,
    executor_factory: ExecutorFactory | None = None,
    recipe_hash: str | None = None,
) -> ShardManifest:
    """Tokenize a curation run (or any JSONL/Parquet input) into mixed token shards; return the manifest
    (``ShardManifest``: ``raw`` is the JSON written to ``manifest.json``).

    ``sources`` maps source name → weight/epochs (``SourceMix``, a dict, or the recipe's ``SourceConfig``);
    empty means every source at its natural size. ``executor_factory(pipeline, logging_dir, tasks)`` builds the
    datatrove executor for the encode ranks, ``tasks`` being ``config.tasks`` but never more than the input files
    (default: ``LocalPipelineExecutor``); its ``run()`` must return once every rank is done. ``output_dir`` is
    claimed and locked for the run (``pipeline.ownership``, ``pipeline.lock``).
    """
    mix = normalise_mix(sources)
    if mix:  # weights that cannot work fail here, before any work and before the output folder is made
        plan_targets({name: 1 for name in mix}, mix, (config or TokenizeConfig()).target_tokens)
    with hold(output_dir, "tokenize"):  # a second tokenize on this folder is refused at once
        return _tokenize(run_dir_or_input, Path(output_dir), config, sources, executor_factory, recipe_hash)


def _tokenize(
    run_dir_or_input: str | Path,
    out: Path,
    config: TokenizeConfig | None,
    sources: Mapping[str, Any] | None,
    executor_factory: ExecutorFactory | None,
    recipe_hash: str | None,
) -> ShardManifest:
    started = time.time()
    config = config or TokenizeConfig()
    mix = normalise_mix(sources)
    plan = discover_inputs(run_dir_or_input)
    record = _clear_outputs(out)
    work = out / ".work"

    tokenizer_info = _prepare_tokenizer(plan, config, out / "tokenizer", record)
    for kind, files in plan.files.items():
        _encode(plan, kind, files, tokenizer_info, config, work, out / "logs", executor_factory)

    table, docs, stats = _load_parts(work / "encoded", numpy_dtype(tokenizer_info["dtype"]))
    _check_roundtrip(stats, tokenizer_info)
    manifest = _split_mix_write(table, docs, stats, mix, config, tokenizer_info, out)
    manifest.update(
        {
            "input": {"path": str(Path(run_dir_or_input).resolve()), "origin": plan.origin},
            "recipe_hash": recipe_hash or plan.recipe_hash,
            "config": config.model_dump(mode="json"),
            "mix": {name: spec.model_dump(mode="json") for name, spec in sorted(mix.items())},
            "config_hash": _config_hash(config, mix),
            "seconds": round(time.time() - started, 2),
        }
    )
    manifest["fingerprint"] = fingerprint(manifest)
    _write_json(out / MANIFEST, manifest)
    if not config.keep_work:
        remove_owned(work, record)
    for warning in manifest["warnings"]:
        logger.warning(warning)
    return ShardManifest.from_dict(manifest, out / MANIFEST)


# ---------------------------------------------------------------------------------------------- tokenizer


def _prepare_tokenizer(plan: InputPlan, config: TokenizeConfig, folder: Path, record: RunRecord) -> dict[str, Any]:
    source = None
    if config.tokenizer:
        source = resolve_tokenizer_path(config.tokenizer)
        tokenizer = load_tokenizer(str(source))
        eos = pick_eos(tokenizer, config.eos_token, source.parent)
        path = save_tokenizer(tokenizer, folder, eos, record, source=source)
    else:
        texts = _training_texts(plan, config.train_max_bytes, config.text_key, config.id_key)
        tokenizer = train_tokenizer(texts, config)
        eos = config.eos_token
        path = save_tokenizer(tokenizer, folder, eos, record)
    size = vocab_size(tokenizer)
    eos_id = tokenizer.token_to_id(eos)
    if eos_id is None:  # pragma: no cover - pick_eos and the config validator guarantee it
        raise TokenizerError(f"{path}: EOS token {eos!r} is not in the vocabulary")
    return {
        "path": f"{folder.name}/{path.name}",
        "file": str(path),
        "source": config.tokenizer,  # as given: a path or a hub id
        "source_file": str(source.resolve()) if source else None,
        "trained": config.tokenizer is None,
        "sha256": sha256_file(path),
        "vocab_size": size,
        "eos_token": eos,
        "eos_id": eos_id,
        "dtype": token_dtype(size),
    }


def _training_texts(plan: InputPlan, budget: int, text_key: str = "text", id_key: str = "id") -> Iterator[str]:
    """Up to ``budget`` bytes of text, split evenly across the input's sources, in file order."""
    by_source: dict[str, list[tuple[str, str]]] = {}
    for kind, files in plan.files.items():
        for rel in files:
            by_source.setdefault(default_source(rel), []).append((kind, rel))
    share = max(1, budget // max(1, len(by_source)))
    for entries in by_source.values():
        used = 0
        for kind, rel in entries:
            for _source, text in iter_texts(plan, kind, rel, text_key, id_key):
                yield text
                used += len(text.encode("utf-8", "surrogatepass"))
                if used >= share:
                    break
            if used >= share:
                break


# ------------------------------------------------------------------------------------------------ encoding


def _encode(
    plan: InputPlan,
    kind: str,
    files: list[str],
    tokenizer: dict[str, Any],
    config: TokenizeConfig,
    work: Path,
    logs: Path,
    executor_factory: ExecutorFactory | None,
) -> None:

    work.mkdir(parents=True, exist_ok=True)
    paths_file = work / f"inputs_{kind}.txt"
    write_paths_file(str(paths_file), files)  # keeps a name that is not UTF-8 (pipeline.read.listing)
    pipeline = [
        make_reader(plan, kind, str(paths_file), config.text_key, config.id_key),
        EncodeStep(
            tokenizer_file=tokenizer["file"],
            eos_id=tokenizer["eos_id"],
            dtype=tokenizer["dtype"],
            work_dir=str(work / "encoded"),
            group=kind,
            batch_size=config.batch_size,
            verify_docs=config.verify_docs,
        ),
    ]
    logging_dir = str(logs / f"encode_{kind}")
    tasks = min(config.tasks, len(files))  # a rank without files would only log a warning
    if executor_factory is not None:
        executor = executor_factory(pipeline, logging_dir, tasks)
    else:
        workers = tasks if config.workers == -1 else min(config.workers, tasks)
        if workers > 1:
            preload_forkserver(pipeline)
        if progress.mode() != "off":  # the CLI asked for a progress line
            executor = progress.ProgressExecutor(
                pipeline,
                tasks=tasks,
                workers=workers,
                logging_dir=logging_dir,
                skip_completed=False,
                label=f"tokenize {kind}",
            )
        else:
            executor = GuardedLocalExecutor(
                pipeline, tasks=tasks, workers=workers, logging_dir=logging_dir, skip_completed=False
            )
    executor.run()
    # is_rank_completed() answers False whenever skip_completed is off, so read the markers themselves
    incomplete = [r for r in range(executor.world_size) if not executor.logging_dir.isfile(f"completions/{r:05d}")]
    if incomplete:
        raise TokenizeError(f"encode ranks {incomplete} did not complete; see the logs in {logging_dir}")


# ------------------------------------------------------------------------------------------ parts → table


def _load_parts(encoded: Path, dtype: np.dtype) -> tuple[DocumentTable, dict[str, np.ndarray], dict[str, dict]]:
    """Read every rank's parts back: one document table for all sources, plus per-document columns."""
    table = DocumentTable()
    columns: dict[str, list[np.ndarray]] = {k: [] for k in ("part", "start", "length", "nbytes", "hash", "lang", "src")}
    stats: dict[str, dict] = {}
    if not encoded.is_dir():
        raise TokenizeError("no documents were encoded (every input file was empty?)")
    for source_number, folder in enumerate(sorted(p for p in encoded.iterdir() if p.is_dir())):
        source = folder.name
        info = stats.setdefault(
            source,
            {
                "number": source_number,
                "languages": [],
                "skipped": Counter(),
                "skip_examples": {},
                "checked": 0,
                "bad": 0,
                "routed_from": {},
            },
        )
        for meta_file in sorted(folder.glob("*.meta.json")):
            base = str(meta_file)[: -len(".meta.json")]
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            info["skipped"].update(meta["skipped"])
            for rule, example in meta["skip_examples"].items():
                info["skip_examples"].setdefault(rule, example)
            info["checked"] += meta["roundtrip"]["checked"]
            info["bad"] += meta["roundtrip"]["mismatched"]
            for origin, (documents, tokens) in meta.get("routed_from", {}).items():
                counts = info["routed_from"].setdefault(origin, {"documents": 0, "tokens": 0})
                counts["documents"] += documents
                counts["tokens"] += tokens
            if not meta["documents"]:
                continue
            tokens = open_tokens(Path(f"{base}.ds"), dtype, meta["tokens"])
            ends = read_index(Path(f"{base}.ds"), meta["documents"]).astype(np.int64)
            doc_columns = np.load(f"{base}.docs.npz", allow_pickle=False)
            lang_map = np.array([_intern(info["languages"], lang) for lang in meta["languages"]], dtype=np.int64)
            table.parts.append(tokens)
            columns["part"].append(np.full(len(ends), len(table.parts) - 1, dtype=np.int64))
            columns["start"].append(np.concatenate([[0], ends[:-1]]))
            columns["length"].append(np.diff(ends, prepend=0))
            columns["nbytes"].append(doc_columns["nbytes"].astype(np.int64))
            columns["hash"].append(doc_columns["hash"])
            columns["lang"].append(lang_map[doc_columns["lang"].astype(np.int64)])
            columns["src"].append(np.full(len(ends), source_number, dtype=np.int64))
    docs = {k: (np.concatenate(v) if v else np.empty(0, np.int64)) for k, v in columns.items()}
    table.part, table.start, table.length = docs["part"], docs["start"], docs["length"]
    return table, docs, stats


def _intern(values: list[str], value: str) -> int:
    if value not in values:
        values.append(value)
    return values.index(value)


def _check_roundtrip(stats: dict[str, dict], tokenizer: dict[str, Any]) -> None:
    bad = {source: info["bad"] for source, info in stats.items() if info["bad"]}
    if bad and tokenizer["trained"]:  # a trained byte-level BPE is lossless: a mismatch is a bug, not data
        raise TokenizeError(f"decoded text differs from the input for sources {bad} with the trained tokenizer")


# ------------------------------------------------------------------------------------- split, mix, write


def _split_mix_write(
    table: DocumentTable,
    docs: dict[str, np.ndarray],
    stats: dict[str, dict],
    mix: Mapping[str, SourceMix],
    config: TokenizeConfig,
    tokenizer: dict[str, Any],
    out: Path,
) -> dict[str, Any]:
    dtype = numpy_dtype(tokenizer["dtype"])
    names = sorted(stats, key=lambda s: stats[s]["number"])
    members, train, heldout = _split_sources(docs, stats, names, config)
    train_tokens = {s: int(docs["length"][train[s]].sum()) for s in names}
    _refuse_empty_sources(names, train_tokens, stats)
    targets = plan_targets(train_tokens, mix, config.target_tokens)

    # one generator, drawn in a fixed order (each source's pick, the train order, each held-out order): the same
    # seed gives the same shards
    rng = np.random.default_rng(config.seed)
    chosen = [train[s][select_documents(docs["length"][train[s]], targets[s].target_tokens, rng)] for s in names]
    instances = np.concatenate(chosen) if chosen else np.empty(0, np.int64)
    order = instances[rng.permutation(len(instances))]
    train_files = write_documents(table, order, out / TRAIN_DIR, TRAIN_DIR, dtype, config.max_shard_tokens)
    splits: dict[str, Any] = {TRAIN_DIR: _split_entry(train_files, out)}
    for name in names:
        if len(heldout[name]):
            held_order = heldout[name][rng.permutation(len(heldout[name]))]
            files = write_documents(table, held_order, out / HELDOUT_DIR / name, name, dtype, config.max_shard_tokens)
            splits[f"{HELDOUT_DIR}/{name}"] = _split_entry(files, out)

    mixed_total = int(docs["length"][instances].sum())
    per_source: dict[str, Any] = {}
    warnings: list[str] = []
    for name, picked in zip(names, chosen, strict=True):
        split = {"train": train[name], "heldout": heldout[name], "mixed": picked, "members": members[name]}
        entry, repeats = _source_entry(docs, split, train_tokens[name], targets[name], mix.get(name), stats[name])
        entry["achieved_share"] = round(entry["tokens"]["mixed"] / mixed_total, 6) if mixed_total else 0.0
        if stats[name]["routed_from"]:  # documents other sources routed in (classify mode route), train + held out
            entry["routed_from"] = dict(sorted(stats[name]["routed_from"].items()))
        per_source[name] = entry
        warnings += _source_warnings(name, repeats, stats[name], config)
    return _manifest(tokenizer, dtype, config, per_source, splits, warnings, mixed_total, len(instances))


def _split_sources(
    docs: dict[str, np.ndarray], stats: dict[str, dict], names: list[str], config: TokenizeConfig
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each source's documents (``members``), then its train and held-out parts, as indexes into ``docs``."""
    # each source's documents in the order of their seeded content key: the split, the mix and the shards
    # then do not depend on how many ranks encoded the input or in which order they finished
    members = {}
    for s in names:
        index = np.flatnonzero(docs["src"] == stats[s]["number"])
        members[s] = index[np.argsort(keyed(docs["hash"][index], config.seed), kind="stable")]
    held = {s: heldout_mask(docs["hash"][members[s]], config.heldout_share, config.seed) for s in names}
    train = {s: members[s][~held[s]] for s in names}
    heldout = {s: members[s][held[s]] for s in names}
    return members, train, heldout


def _refuse_empty_sources(names: list[str], train_tokens: dict[str, int], stats: dict[str, dict]) -> None:
    """Name the source and why it is empty before the mix complains about zero tokens."""
    for name in names:
        if not train_tokens[name] and stats[name]["skipped"]:
            skipped = dict(stats[name]["skipped"])
            example = next(iter(stats[name]["skip_examples"].values()), "")
            raise TokenizeError(
                f"source {name!r} has zero tokens: every document was skipped {skipped}; e.g. {example}"
                + ("; pass --text-key FIELD (stages.tokenize.text_key)" if "missing_text" in skipped else "")
            )


def _manifest(
    tokenizer: dict[str, Any],
    dtype: np.dtype,
    config: TokenizeConfig,
    per_source: dict[str, Any],
    splits: dict[str, Any],
    warnings: list[str],
    mixed_total: int,
    train_documents: int,
) -> dict[str, Any]:
    """``manifest.json``: the format, the tokenizer, the split settings, every source's entry and the totals."""
    tokenizer_entry = {k: v for k, v in tokenizer.items() if k not in ("file", "dtype")}
    return {
        "version": MANIFEST_VERSION,
        "created_by": "tokenmill",
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "format": "datatrove .ds/.ds.index, little-endian ids, EOS after each document, uint64 end offsets",
        "tokenizer": tokenizer_entry,
        "vocab_size": tokenizer["vocab_size"],  # also under tokenizer; top level for readers of a summary
        "dtype": tokenizer["dtype"],
        "token_size": dtype.itemsize,
        "seed": config.seed,
        "heldout_share": config.heldout_share,
        "sources": per_source,
        "totals": {
            "train_tokens": mixed_total,
            "train_documents": train_documents,
            "heldout_tokens": sum(e["tokens"]["heldout"] for e in per_source.values()),
            "heldout_documents": sum(e["documents"]["heldout"] for e in per_source.values()),
        },
        "splits": splits,
        "warnings": warnings,
    }


def _source_entry(
    docs: dict[str, np.ndarray],
    split: dict[str, np.ndarray],
    train_tokens: int,
    target: Any,
    spec: SourceMix | None,
    stats: dict[str, Any],
) -> tuple[dict[str, Any], float]:
    """One source's manifest entry (mode and shares of the mix, repeats, documents and tokens per split, skips,
    the round-trip check, bytes per token) and its unrounded repeats. ``achieved_share`` is set by the caller,
    which knows the mixed total."""
    picked = split["mixed"]
    mixed = int(docs["length"][picked].sum())
    repeats = mixed / train_tokens
    copies = np.bincount(picked) if len(picked) else np.zeros(1, np.int64)
    entry = {
        "mode": target.mode,
        "weight": spec.weight if spec is not None else None,
        "epochs": spec.epochs if spec is not None else None,
        "requested_share": round(target.requested_share, 6),
        "achieved_share": 0.0,
        "repeats": round(repeats, 4),
        "max_copies_of_a_document": int(copies.max()),
        "documents": {"train": len(split["train"]), "heldout": len(split["heldout"]), "mixed": len(picked)},
        "tokens": {
            "train": train_tokens,
            "heldout": int(docs["length"][split["heldout"]].sum()),
            "mixed": mixed,
        },
        "skipped": dict(stats["skipped"]),
        "roundtrip": {"checked": stats["checked"], "mismatched": stats["bad"]},
    }
    entry.update(_bytes_per_token(docs, split["members"], stats["languages"]))
    return entry, repeats


def _source_warnings(name: str, repeats: float, stats: dict[str, Any], config: TokenizeConfig) -> list[str]:
    """What the manifest warns about one source: many repeats, documents that do not round-trip, skips."""
    warnings = []
    if repeats > config.max_repeats_warning:
        warnings.append(
            f"source {name!r} is repeated {repeats:.1f} times (more than {config.max_repeats_warning:g}); "
            "repeated data beyond ~4 epochs adds little (Muennighoff et al. 2023)"
        )
    if stats["bad"]:
        warnings.append(
            f"source {name!r}: {stats['bad']} of {stats['checked']} checked documents do not decode "
            "to their text with this tokenizer (it normalises or adds spaces)"
        )
    if stats["skipped"]:
        warnings.append(f"source {name!r}: skipped documents {dict(stats['skipped'])}")
    return warnings


def _split_entry(files: list[dict], out: Path) -> dict[str, Any]:
    listed = [
        {"path": Path(f["path"]).relative_to(out).as_posix(), "tokens": f["tokens"], "documents": f["documents"]}
        for f in files
    ]
    return {
        "tokens": sum(f["tokens"] for f in files),
        "documents": sum(f["documents"] for f in files),
        "files": listed,
    }


def _bytes_per_token(docs: dict[str, np.ndarray], members: np.ndarray, languages: list[str]) -> dict[str, Any]:
    """UTF-8 bytes per token (EOS not counted), for the source and for each of its languages."""

    def ratio(index: np.ndarray) -> dict[str, Any]:
        nbytes = int(docs["nbytes"][index].sum())
        tokens = int(docs["length"][index].sum()) - len(index)
        return {
            "documents": len(index),
            "bytes": nbytes,
            "tokens": tokens,
            "bytes_per_token": round(nbytes / tokens, 4) if tokens else None,
        }

    overall = ratio(members)
    langs = docs["lang"][members]
    per_language = {languages[i]: ratio(members[langs == i]) for i in np.unique(langs).tolist()}
    return {"bytes": overall["bytes"], "bytes_per_token": overall["bytes_per_token"], "languages": per_language}


# ------------------------------------------------------------------------------------------------ helpers


def _clear_outputs(out: Path) -> RunRecord:
    """Claim ``out`` for tokenize (a folder tokenmill did not create is refused, ``pipeline.ownership``) and
    remove what an earlier tokenize wrote there; return the folder's record."""
    record = claim(out, "tokenize")
    remove_owned(out / MANIFEST, record)  # no stale manifest may describe half-written shards
    for name in (TRAIN_DIR, HELDOUT_DIR):
        remove_shards(out / name, record)
    for name in (".work", "logs"):
        remove_owned(out / name, record)
    return record


def _config_hash(config: TokenizeConfig, mix: Mapping[str, SourceMix]) -> str:
    payload = {
        "config": config.model_dump(mode="json", exclude={"tasks", "workers", "keep_work", "batch_size"}),
        "mix": {name: spec.model_dump(mode="json") for name, spec in sorted(mix.items())},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    write_json_atomic(path, payload, end="\n", indent=2, ensure_ascii=False)
