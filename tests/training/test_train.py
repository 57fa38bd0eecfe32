"""training/: the tiny preset trains on CPU, resumes exactly, exports a HF model that generates and that
another run continues from; bad input (half-written checkpoints, NaN, changed config, other tokenizer, a model
that does not fit) is refused or skipped with a clear message."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

import flows  # noqa: F401  (hub offline)
from pipeline.shards.format import ShardError
from tests.helpers.train import STEPS, config, make_shards
from training.checkpoint import CheckpointMismatch, find_latest
from training.config import TrainConfig, TrainConfigError, load_train_config
from training.metrics import read_rows
from training.modeling import ModelSetupError
from training.preflight import GateError, preflight
from training.report import TrainSummary
from training.steps import TrainingDiverged
from training.train import run_training


def losses(output: Path) -> dict[int, float]:
    return {row["step"]: row["loss"] for row in read_rows(output / "metrics.jsonl")}


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    return make_shards(tmp_path_factory.mktemp("train_data"))


@pytest.fixture(scope="module")
def baseline(shards: Path, tmp_path_factory) -> tuple[Path, TrainSummary]:
    """One uninterrupted run: the reference for every resume test."""
    output = tmp_path_factory.mktemp("baseline") / "train"
    summary = run_training(config(shards, output, tensorboard=True))
    return output, summary


def test_tiny_preset_trains_loss_falls_and_writes_everything(baseline: tuple[Path, TrainSummary]) -> None:
    output, summary = baseline
    assert summary.status == "completed" and summary.step == STEPS
    rows = read_rows(output / "metrics.jsonl")
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    assert all({"step", "loss", "lr", "grad_norm", "tokens_per_s", "peak_memory_gib"} <= set(r) for r in rows)
    first, last = rows[0]["loss"], sum(r["loss"] for r in rows[-3:]) / 3
    assert first > 5.0 and last < first - 1.0, (first, last)  # from ~ln(320) well down
    assert rows[-1]["tokens"] == STEPS * 512
    evals = read_rows(output / "eval.jsonl")
    assert [e["step"] for e in evals] == [8, 16]
    assert {"web", "finance", "all"} <= set(evals[-1]) and evals[-1]["web"]["loss"] < evals[0]["web"]["loss"]
    assert summary.eval["finance"]["ppl"] == pytest.approx(2.718281828 ** summary.eval["finance"]["loss"])
    kept = sorted(p.name for p in (output / "checkpoints").iterdir())
    assert kept == ["step_0000012", "step_0000016"]  # keep_last 2
    report = json.loads((output / "train_report.json").read_text())
    assert report["summary"]["final_loss"] == rows[-1]["loss"]
    assert report["comparison"]["tokens_per_s"]["measured"] > 0
    assert "| tokens/s |" in (output / "train_report.md").read_text()
    assert (output / "plots" / "loss.png").stat().st_size > 1000
    assert list((output / "tensorboard").rglob("events.out.tfevents.*"))
    saved = load_train_config(output / "train_config.yaml")
    assert saved.warmup_steps == 1 and saved.min_lr == pytest.approx(3e-4)


def test_exported_model_loads_with_auto_classes_and_generates(baseline: tuple[Path, TrainSummary]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.generate import generate_sample

    output, summary = baseline
    final = Path(summary.final)
    assert (final / "model.safetensors").is_file()
    model = AutoModelForCausalLM.from_pretrained(final)
    tokenizer = AutoTokenizer.from_pretrained(final)
    assert model.config.vocab_size == 320 and model.config.max_position_embeddings == 32
    ids = tokenizer("The market rose", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(ids).logits
    assert logits.shape == (1, ids.shape[1], 320) and torch.isfinite(logits).all()
    text = generate_sample(final, "The market", max_new_tokens=12)
    assert text.startswith("The market") and len(text) > len("The market")
    assert generate_sample(final, "The market", 12, top_k=5, seed=1) == generate_sample(
        final, "The market", 12, top_k=5, seed=1
    )


def test_sigterm_then_rerun_gives_exactly_the_uninterrupted_losses(shards, baseline, tmp_path) -> None:
    output = tmp_path / "train"

    def terminate_at_5(step: int, _info: dict) -> None:
        if step == 5:
            os.kill(os.getpid(), signal.SIGTERM)

    stopped = run_training(config(shards, output), on_step=terminate_at_5)
    assert stopped.status == "stopped by SIGTERM" and stopped.step == 5 and stopped.final is None
    assert (output / "checkpoints" / "step_0000005" / "trainer_state.json").is_file()
    assert not (output / "final").exists()
    resumed = run_training(config(shards, output))
    assert resumed.resumed_from.endswith("step_0000005") and resumed.status == "completed"
    reference, got = losses(baseline[0]), losses(output)
    assert sorted(got) == sorted(reference)
    assert max(abs(got[s] - reference[s]) for s in reference) < 1e-6


def test_a_kill_during_the_first_checkpoint_repeats_no_step(shards, tmp_path) -> None:
    """Issue 19 item 7: killed while writing its first checkpoint, a run restarts from step 0; the rows the killed
    attempt logged are recomputed, so they are dropped, not logged twice."""
    output = tmp_path / "train"
    run_training(config(shards, output, max_steps=3, ckpt_every=0, eval_every=0))
    # what kill -9 during the first save leaves: metrics rows, a half-written step_N.partial, no final/
    (output / "checkpoints" / "step_0000003").rename(output / "checkpoints" / "step_0000003.partial")
    shutil.rmtree(output / "final")
    again = run_training(config(shards, output, max_steps=3, ckpt_every=0, eval_every=0))
    assert again.resumed_from is None and again.status == "completed"
    assert [row["step"] for row in read_rows(output / "metrics.jsonl")] == [1, 2, 3]


def test_max_steps_k_then_n_continues_exactly(shards, baseline, tmp_path) -> None:
    output = tmp_path / "train"
    first = run_training(config(shards, output, max_steps=6, ckpt_every=0))
    assert first.step == 6
    second = run_training(config(shards, output, max_steps=STEPS, ckpt_every=0))
    assert second.resumed_from.endswith("step_0000006")
    reference, got = losses(baseline[0]), losses(output)
    assert max(abs(got[s] - reference[s]) for s in reference) < 1e-6


def test_half_written_checkpoints_are_skipped(shards, baseline, tmp_path) -> None:
    output = tmp_path / "train"
    shutil.copytree(baseline[0], output)
    root = output / "checkpoints"
    newest = root / "step_0000016"
    shutil.copytree(newest, root / "step_0000020.partial")  # a crash during the rename's preparation
    cut = root / "step_0000024"  # a folder copied by hand and cut short
    shutil.copytree(newest, cut)
    weights = cut / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    folder, state, warnings = find_latest(output)
    assert folder == newest and state["step"] == 16
    assert any("step_0000024: skipped, model.safetensors: 100 bytes" in w for w in warnings)
    assert any("step_0000020.partial: skipped" in w for w in warnings)
    summary = run_training(config(shards, output, max_steps=18))
    assert summary.resumed_from == str(newest) and summary.step == 18
    assert not (root / "step_0000020.partial").exists() and (root / "step_0000018").is_dir()


def test_nan_loss_stops_with_a_clear_message_and_keeps_the_last_good_checkpoint(shards, tmp_path) -> None:
    import torch

    output = tmp_path / "train"

    def poison_at_6(step: int, info: dict) -> None:
        if step == 6:
            with torch.no_grad():
                next(info["model"].parameters()).fill_(float("nan"))

    with pytest.raises(TrainingDiverged, match=r"step 7: the loss or the gradient norm is not finite") as error:
        run_training(config(shards, output), on_step=poison_at_6)
    assert "step_0000004 (step 4), kept" in str(error.value)
    assert sorted(p.name for p in (output / "checkpoints").iterdir()) == ["step_0000004"]


def test_exploding_loss_stops(shards, tmp_path) -> None:
    output = tmp_path / "train"
    with pytest.raises(TrainingDiverged, match=r"exploded past 1.05 × the lowest logged loss"):
        run_training(config(shards, output, lr=5.0, grad_clip=0, explode_factor=1.05, warmup_steps=0))


def test_changed_config_is_refused_unless_forced(shards, tmp_path) -> None:
    output = tmp_path / "train"
    run_training(config(shards, output, max_steps=2, eval_every=0))
    changed = r"config changed since step 2 \(lr: 0.003 → 0.001, min_lr: 0.0003 → 0.0001\)"
    with pytest.raises(CheckpointMismatch, match=changed):
        run_training(config(shards, output, max_steps=3, lr=1e-3))
    forced = run_training(config(shards, output, max_steps=3, lr=1e-3, force=True, eval_every=0))
    assert forced.step == 3 and any("forced: the config changed" in w for w in forced.warnings)
    # micro-batch, precision, cadence and max_steps are "how", not "what": allowed without force
    again = run_training(config(shards, output, max_steps=4, lr=1e-3, micro_batch=4, log_every=2, eval_every=0))
    assert again.step == 4


def test_init_from_an_exported_model_continues_it(shards, baseline, tmp_path) -> None:
    output, summary = baseline
    adapted = run_training(
        config(
            shards, tmp_path / "adapt", model=None, model_overrides={}, init_from=summary.final, lr=None, max_steps=3
        )
    )
    first = losses(tmp_path / "adapt")[1]
    assert first < losses(output)[1] - 1.0  # starts where the base model ended, not from ln(vocab)
    resolved = load_train_config(tmp_path / "adapt" / "train_config.yaml")
    assert resolved.lr == pytest.approx(0.5 * 3e-3)  # re-warm to half the base model's peak
    assert adapted.status == "completed" and Path(adapted.final, "model.safetensors").is_file()


def test_shards_from_another_tokenizer_are_refused(baseline, tmp_path) -> None:
    other = make_shards(tmp_path / "other", vocab=280)
    with pytest.raises(ModelSetupError, match=r"tokenized with another tokenizer than the base model"):
        run_training(config(other, tmp_path / "t", model=None, model_overrides={}, init_from=baseline[1].final))
    with pytest.raises(ShardError, match="manifest not found"):
        run_training(config(tmp_path / "nowhere", tmp_path / "t2"))


def test_gate_refuses_a_model_that_does_not_fit_with_the_cheapest_fix(shards, tmp_path) -> None:
    seven = config(shards, tmp_path / "big", model="7b", model_overrides={}, seq_len=2048, micro_batch=1, gpu="L4")
    with pytest.raises(GateError, match=r"does not fit in GPU memory: .* on L4; cheapest fix: \d+ GPUs with zero3"):
        preflight(seven.model_copy(update={"global_batch_tokens": 2048}))
    with pytest.raises(GateError, match="fewer tokens than the recipe minimum"):
        run_training(config(shards, tmp_path / "few", min_tokens=1e12, max_steps=1))
    forced = run_training(config(shards, tmp_path / "few", min_tokens=1e12, max_steps=1, force=True, eval_every=0))
    assert forced.status == "completed"
    assert "forced past: fewer tokens than the recipe minimum" in (tmp_path / "few" / "train_report.md").read_text()


def test_config_errors_name_the_file_and_field(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("shards: s\noutput: o\nlearning_rate: 1\nmicro_batch: 0\n")
    with pytest.raises(TrainConfigError) as error:
        load_train_config(bad)
    assert f"{bad}: invalid train config" in str(error.value)
    assert "train.learning_rate: unknown key" in str(error.value) and "train.micro_batch" in str(error.value)
    odd = TrainConfig(shards="s", output="o", seq_len=32, micro_batch=3, global_batch_tokens=1000, max_steps=1)
    with pytest.raises(
        TrainConfigError, match=r"global_batch_tokens: 1,000 is not a multiple of .* = 96 \(use 960 or 1,056\)"
    ):
        odd.resolved(model_seq_len=256, world_size=1)
    with pytest.raises(TrainConfigError, match="max_tokens"):
        load_train_config(None, {"shards": "s", "output": "o", "max_steps": 1, "max_tokens": "1B"})
    tokens = TrainConfig(shards="s", output="o", seq_len=32, micro_batch=2, max_tokens="64k")
    assert tokens.resolved(model_seq_len=256, world_size=1).max_steps == 1000


def test_schedules() -> None:
    from training.schedule import Schedule

    cosine = Schedule(peak=1.0, floor=0.1, warmup=2, total=10)
    values = [cosine(s) for s in range(14)]
    assert values[0] > 0 and values[1] < values[2] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(values[2:], values[3:], strict=False))  # never climbs back
    assert values[10:] == [0.1] * 4
    wsd = Schedule(peak=1.0, floor=0.0, warmup=1, total=11, kind="wsd", decay_fraction=0.2)
    assert [wsd(s) for s in range(1, 10)] == [1.0] * 9 and wsd(10) == pytest.approx(1 - 0.5**0.5) and wsd(11) == 0.0
    adapt = TrainConfig(shards="s", output="o", init_from="base", seq_len=32, max_steps=100)
    scratch = TrainConfig(shards="s", output="o", seq_len=32, max_steps=100)
    assert adapt.resolved(model_seq_len=256, world_size=1).lr < scratch.resolved(model_seq_len=256, world_size=1).lr


def test_accelerate_configs_load() -> None:
    from accelerate.commands.config.config_args import load_config_from_file

    folder = Path(__file__).resolve().parents[2] / "configs" / "accelerate"
    loaded = {path.stem: load_config_from_file(str(path)) for path in sorted(folder.glob("*.yaml"))}
    assert set(loaded) == {"single_gpu", "ddp", "fsdp", "multi_node", "tp"}  # tp: issue 15's example
    assert all(c.mixed_precision == "bf16" for c in loaded.values())
    assert loaded["fsdp"].fsdp_config["fsdp_transformer_layer_cls_to_wrap"] == "LlamaDecoderLayer"
    assert loaded["multi_node"].num_machines > 1


def test_cuda_device_names_map_to_the_gpu_table() -> None:
    from training.gpus import gpu_from_name

    assert gpu_from_name("NVIDIA H200", 139.8) == "H200"
    assert gpu_from_name("NVIDIA H100 80GB HBM3", 79.6) == "H100-SXM"
    assert gpu_from_name("NVIDIA A100-SXM4-40GB", 39.4) == "A100-40GB"
    assert gpu_from_name("NVIDIA L40S", 44.5) == "L40S" and gpu_from_name("NVIDIA L4", 22.0) == "L4"
    assert gpu_from_name("Tesla T4", 15.0) is None


def test_progress_lines_when_not_a_terminal_estimate_then_heartbeat() -> None:
    """In a log (no terminal): one estimate after the first steps, then a line after 30 s of silence only."""
    from types import SimpleNamespace

    from training.metrics import Progress as _progress

    now = [0.0]
    printed: list[str] = []

    def say(message: str) -> None:
        printed.append(message)
        say.last = now[0]

    say.last = 0.0
    say.console = SimpleNamespace(is_terminal=False)
    with _progress(True, 100, 0, say, tokens_per_step=1000, clock=lambda: now[0]) as update:
        for step in range(1, 11):  # 2 s per step
            now[0] += 2.0
            update(step)
        assert printed == ["step 3/100: 2.00 s/step, 500 tok/s, about 3 min left"]
        for step in range(11, 30):
            now[0] += 2.0
            update(step)
    assert len(printed) == 2 and printed[1].startswith("step 18/100:")  # 30 s after the estimate at 6 s
    silent = SimpleNamespace(console=SimpleNamespace(is_terminal=False), last=0.0)  # not callable: a print raises
    with _progress(False, 100, 0, silent, clock=lambda: 1e6) as update:  # not the main process: never prints
        update(3)
