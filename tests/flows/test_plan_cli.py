"""``tokenmill plan`` (flags, --json, a YAML ``plan:`` section, --output, --check) and the Prefect ``plan`` flow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from flows.cli import app

REQUIRED = [
    "params",
    "non_embedding_params",
    "tokens",
    "flops_per_token",
    "flops",
    "pf_days",
    "tokens_per_param",
    "verdicts",
    "optimal",
    "memory",
    "gpu_hours",
]


def run(*args: str):
    return CliRunner().invoke(app, ["plan", *args])


def test_json_has_documented_fields_gpt3() -> None:
    result = run("--params", "175B", "--tokens", "300B", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    for key in REQUIRED:
        assert key in payload, key
    assert set(payload["optimal"]) >= {"params", "tokens"}
    assert set(payload["memory"]) >= {"per_gpu_bytes", "fits"}
    assert isinstance(payload["verdicts"], list) and payload["verdicts"][0].startswith("under-trained")
    assert abs(payload["pf_days"] / 3640 - 1) < 0.01
    assert payload["blocking"]  # 175B does not fit on one H100


def test_flags_for_memory_and_summary_output() -> None:
    result = run("--model", "1b", "--gpu", "H200", "--micro-batch", "8", "--tokens", "22B")
    assert result.exit_code == 0, result.output
    assert "compute-optimal" in result.stdout and "fits" in result.stdout
    checkpointed = run("--model", "7b", "--gpu", "h200", "--activation-checkpointing", "--tokens", "1T", "--json")
    memory = json.loads(checkpointed.stdout)["memory"]
    assert memory["activation_checkpointing"] and memory["fits"]
    assert abs(memory["per_gpu_gib"] / 100.5 - 1) < 0.05


def test_bad_flags_exit_2_with_a_clear_message() -> None:
    unknown = run("--model", "7b", "--gpu", "V100")
    assert unknown.exit_code == 2 and "known: A100-40GB" in unknown.output and "H200" in unknown.output
    mfu = run("--model", "7b", "--mfu", "0")
    assert mfu.exit_code == 2 and "mfu" in mfu.output
    budget = run("--params", "7B", "--flops", "1e22", "--gpu-hours", "100")
    assert budget.exit_code == 2 and "disagree" in budget.output
    negative = run("--params", "-7B")
    assert negative.exit_code == 2 and "--params" in negative.output and "positive" in negative.output
    both = run("--params", "7B", "--model", "7b")
    assert both.exit_code == 2 and "give one" in both.output


def test_check_flag_exits_1_on_blocking_problems() -> None:
    assert run("--model", "7b", "--gpu", "L4", "--tokens", "1T", "--check").exit_code == 1
    assert run("--model", "tiny", "--gpu", "L4", "--check").exit_code == 0


def test_plan_from_yaml_section_with_flag_override_and_report(tmp_path: Path) -> None:
    manifest = tmp_path / "shards" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({"unique_tokens": 5_000_000_000, "vocab_size": 32000}))
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        yaml.safe_dump(
            {
                "name": "demo",
                "plan": {
                    "model": "1b",
                    "tokens": "30B",
                    "gpu": "H100-SXM",
                    "gpus": 8,
                    "strategy": "zero2",
                    "manifest": "shards/manifest.json",
                    "price": 2.5,
                },
            }
        )
    )
    result = run(str(recipe), "--gpu", "H200", "--json", "--output", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["gpu"]["name"] == "H200" and payload["gpus"] == 8  # flag wins, file fills the rest
    assert payload["data"]["unique_tokens"] == 5e9 and payload["data"]["epochs"] == pytest.approx(6.0)
    assert payload["cost"] == pytest.approx(payload["gpu_hours"] * 2.5)
    assert (tmp_path / "out" / "plan.md").is_file() and (tmp_path / "out" / "plots" / "plan.png").is_file()


def test_yaml_errors_name_file_and_field(tmp_path: Path) -> None:
    recipe = tmp_path / "bad.yaml"
    recipe.write_text(yaml.safe_dump({"plan": {"model": "1b", "gpu_count": 8}}))
    result = run(str(recipe))
    assert result.exit_code == 2 and "bad.yaml" in result.output and "plan.gpu_count: unknown key" in result.output
    recipe.write_text(yaml.safe_dump({"plan": {"model": "1b", "mfu": 2}}))
    result = run(str(recipe))
    assert result.exit_code == 2 and "bad.yaml: plan.mfu" in result.output
    recipe.write_text(yaml.safe_dump({"name": "no plan here"}))
    assert "top-level 'plan:'" in run(str(recipe)).output


def test_plan_flow_publishes_the_report_artifact(tmp_path: Path, prefect_harness) -> None:
    import asyncio

    from prefect.client.orchestration import get_client

    from flows.plan import plan

    result = plan(options={"params": "175B", "tokens": "300B", "unique_tokens": "200B"}, output=str(tmp_path))
    assert result["verdicts"][0].startswith("under-trained") and result["data"]["data_limited"]
    assert (tmp_path / "plan.md").is_file()

    async def artifact() -> str:
        async with get_client() as client:
            artifacts = await client.read_latest_artifacts()
            return next(a.data for a in artifacts if a.key == "training-plan")

    assert "data-limited" in asyncio.run(artifact())


def test_plan_recipe_takes_model_tokens_and_seq_len_from_train(tmp_path: Path) -> None:
    """`tokenmill plan RECIPE` plans what `train:` will run, as the pipeline flow's gate does; flags still win."""
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        yaml.safe_dump(
            {
                "plan": {"gpu": "H200", "gpus": 8},
                "train": {"model": "1b", "seq_len": 1024, "max_steps": 100, "global_batch_tokens": 1024 * 64},
            }
        )
    )
    result = run(str(recipe), "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["tokens"] == 100 * 1024 * 64
    assert payload["memory"]["seq_len"] == 1024
    assert payload["model"]["name"] == "1b"
    overridden = json.loads(run(str(recipe), "--json", "--tokens", "1B").stdout)
    assert overridden["tokens"] == 1e9

    only_train = tmp_path / "t.yaml"
    only_train.write_text(yaml.safe_dump({"train": {"model": "tiny", "max_tokens": "2M"}}))
    payload = json.loads(run(str(only_train), "--json").stdout)
    assert payload["tokens"] == 2_000_000
