"""``tokenmill eval MODEL_DIR``: one model, its bits per byte on each reference set and its multiple-choice tasks,
with the time it took. ``ablate``, ``scaling ladder`` and ``train`` call ``evaluate_model`` on the models they
export when asked (``tasks:``). Missing task data is a note, not a failure: the references are still measured."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from training.bpb import bits_per_byte
from training.evals.tasks import DEFAULT_LIMIT, TaskDataMissing, TaskResult, run_tasks


@dataclass
class EvalReport:
    model: str
    tasks: dict[str, TaskResult] = field(default_factory=dict)
    references: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "tasks": {name: result.to_dict() for name, result in self.tasks.items()},
            "references": self.references,
            "seconds": self.seconds,
            "notes": self.notes,
        }


def load_model(model_dir: str | Path):
    """An exported model folder's model (fp32, eval mode, on CUDA when there is one) and tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    folder = Path(model_dir)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: no config.json (expected an exported model folder such as <run>/final)")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.eval().to(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
    if not torch.cuda.is_available():
        # measured on the 2-core shared machine (load 9): arc_easy, 60 items, demo model: 2 threads 33.7 s wall,
        # 1 thread 3.4 s (OpenMP's threads wait for each other on busy cores, as in training/threads.py)
        torch.set_num_threads(1)
    return model, AutoTokenizer.from_pretrained(folder)


def evaluate_model(
    model_dir: str | Path,
    tasks: list[str] | tuple[str, ...] = (),
    references: dict[str, list[str]] | None = None,
    limit: int | None = DEFAULT_LIMIT,
    seq_len: int = 512,
) -> EvalReport:
    """bpb on ``references`` (name → documents) and the ``tasks`` (packaged names or JSONL files)."""
    started = time.monotonic()
    report = EvalReport(str(model_dir))
    for name, texts in (references or {}).items():
        measured = bits_per_byte(model_dir, texts, seq_len)
        report.references[name] = {"bpb": measured.bpb, "bytes": measured.bytes, "documents": measured.documents}
    if tasks:
        model, tokenizer = load_model(model_dir)
        try:
            report.tasks = run_tasks(model, tokenizer, list(tasks), limit)
        except TaskDataMissing as missing:
            report.notes.append(str(missing))
    report.seconds = time.monotonic() - started
    return report


def render(report: EvalReport) -> str:
    """The report as Markdown tables (what ``tokenmill eval`` prints)."""
    lines = [f"# Evaluation of {report.model} ({report.seconds:.1f} s)", ""]
    if report.references:
        lines += ["| reference | bits per byte | bytes | documents |", "|---|---:|---:|---:|"]
        for name, v in report.references.items():
            lines.append(f"| {name} | {v['bpb']:.4f} | {v['bytes']:,} | {v['documents']:,} |")
        lines.append("")
    if report.tasks:
        lines += [
            "| task | items | accuracy (per byte) | accuracy (raw) | chance | gold bpb | wrong-choice bpb |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, t in report.tasks.items():
            lines.append(
                f"| {name} | {t.items:,} | {t.accuracy:.3f} | {t.accuracy_raw:.3f} | {t.chance:.3f} | "
                f"{t.gold_bpb:.4f} | {t.wrong_bpb:.4f} |"
            )
        lines.append("")
    lines += [f"- note: {note}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"
