"""The one launch path (training/launch.py) and the one plan gate (training/plan/gate.py): who trains in-process,
who launches processes, and that the gate every launch passes is the one the plan stage uses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import training.launch as launch
from pipeline.shards.format import MANIFEST, ShardManifest
from training.config import TrainConfig
from training.plan.gate import NO_GPU_NOTE, plan_gate, train_plan_options
from training.plan.options import PlanOptions
from training.plan.planner import NO_FIT, OVER_BUDGET, RULES, check, plan
from training.report import TrainSummary


def _settings(tmp_path: Path) -> TrainConfig:
    return TrainConfig.model_validate({"shards": str(tmp_path / "shards"), "output": str(tmp_path / "run")})


LAUNCHED = TrainSummary(
    status="completed",
    step=3,
    max_steps=3,
    params=1000,
    precision="fp32",
    final_loss=2.5,
    eval={"all": {"loss": 2.6, "ppl": 13.5}},
    tokens=96,
    tokens_per_s=10.0,
    mfu=None,
    peak_memory_gib=None,
    elapsed_s=9.6,
    resumed_from=None,
    warnings=[],
    output="run",
    final="run/final",
    metrics="run/metrics.jsonl",
    checkpoints="run/checkpoints",
)


def test_one_process_trains_in_process_and_several_launch_accelerate(tmp_path: Path, monkeypatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(launch, "run_training", lambda settings: calls.append("in-process") or {"status": "ok"})
    monkeypatch.setattr(launch, "preflight", lambda settings, world_size: {"notes": [], "world": world_size})
    events: list[tuple[str, object]] = []

    def fake_call(command: list[str]) -> int:
        calls.append(" ".join(command))
        Path(tmp_path / "run" / "train_report.json").write_text(json.dumps({"summary": LAUNCHED.to_dict()}))
        return 0

    monkeypatch.setattr(launch.subprocess, "call", fake_call)
    settings = _settings(tmp_path)
    assert launch.launch_training(settings) == {"status": "ok"}
    assert launch.launch_training(settings, num_processes=1) == {"status": "ok"}
    summary = launch.launch_training(settings, num_processes=2, on_event=lambda k, v: events.append((k, v)))
    assert summary == LAUNCHED  # read back from the report the processes wrote
    assert calls[:2] == ["in-process", "in-process"]
    assert "accelerate.commands.launch --num_processes 2 -m training.train" in calls[2]
    assert calls[2].endswith(str(tmp_path / "run" / launch.LAUNCH_CONFIG))
    assert (tmp_path / "run" / launch.LAUNCH_CONFIG).is_file()  # the config the processes read
    assert [kind for kind, _ in events] == ["preflight", "launch"] and events[0][1]["world"] == 2


def test_a_failed_launch_raises_with_the_exit_code_and_the_last_lines(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(launch, "preflight", lambda settings, world_size: {"notes": []})
    monkeypatch.setattr(
        launch,
        "launch_command",
        lambda *args: [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"],
    )

    class Lines:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def info(self, line: str) -> None:
            self.lines.append(line)

    logger = Lines()
    with pytest.raises(launch.LaunchFailed) as failed:
        launch.launch_training(_settings(tmp_path), in_process=False, logger=logger)
    assert failed.value.code == 3 and failed.value.tail == ["boom"] and logger.lines == ["boom"]
    assert str(failed.value) == "training exited with code 3:\nboom"


def test_the_train_gate_and_the_plan_stage_share_one_gate(tmp_path: Path) -> None:
    manifest = tmp_path / MANIFEST
    manifest.write_text('{"sources": {"web": {"tokens": {"train": 900, "mixed": 700}, "routed_from": "x"}}}')
    settings = TrainConfig.model_validate(
        {"shards": str(tmp_path), "output": "-", "model": "tiny", "seq_len": 64, "max_steps": 10}
    ).model_copy(update={"global_batch_tokens": 640})
    options = train_plan_options(settings, None, 1)
    assert options.gpu == "H100-SXM" and options.tokens == 6400 and options.seq_len == 64
    cpu = plan_gate(options.model_copy(update={"model": "7b", "tokens": 1e6}), memory_applies=False)
    gpu = plan_gate(options.model_copy(update={"model": "7b", "tokens": 1e6}))
    # a 7B model does not fit one GPU: the plan says so either way; only a GPU run is blocked by it
    assert not cpu.plan.memory.fits and cpu.notes == [NO_GPU_NOTE]
    assert not any(p.startswith("does not fit") for p in cpu.problems)
    assert any(p.startswith("does not fit in GPU memory") for p in gpu.problems) and gpu.notes == []
    assert cpu.plan.data["unique_tokens"] == 700  # min(train, mixed); the extra per-source key is tolerated
    assert ShardManifest.read(manifest).sources["web"].extra == {"routed_from": "x"}


def test_each_memory_and_budget_rule_words_its_verdict_and_its_problem_once() -> None:
    result = plan("7b", 1e12, "H100-SXM", budget=None)
    assert not result.memory.fits
    verdict, problem = NO_FIT.verdict(result), check(result)[0]
    assert verdict in result.verdicts and problem.startswith("does not fit in GPU memory")
    assert [rule.name for rule in RULES] == ["memory", "min_tokens", "epochs", "budget"]
    from training.plan.hardware import Budget

    over = plan(1e9, 1e12, "H100-SXM", budget=Budget(flops=1e20))
    assert OVER_BUDGET.verdict(over) in over.verdicts
    assert any(p.startswith("over budget:") for p in check(over))
    assert PlanOptions.model_validate({"tokens": "1.5M"}).tokens == 1.5e6
