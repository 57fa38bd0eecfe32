"""The end-to-end ``pipeline`` flow: cached stages after a failure, and training-only reruns."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

SMALL_TRAIN = {
    "model": "tiny",
    "model_overrides": {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
    },
    "seq_len": 32,
    "micro_batch": 2,
    "global_batch_tokens": 64,
    "max_steps": 3,
    "lr": 1e-3,
    "warmup_steps": 1,
    "eval_every": 0,
    "eval_batches": 1,
    "ckpt_every": 0,
    "log_every": 1,
    "cpu_threads": 1,
    "tensorboard": False,
}


@pytest.fixture()
def recipe_path(tmp_path: Path) -> Path:
    from sample import generate_sample

    sample = tmp_path / "sample"
    generate_sample(sample, seed=21, pages=40, warc_files=1, domain_docs=8)
    recipe = {
        "name": "e2e",
        "output_dir": str(tmp_path / "run"),
        "sources": [
            {"name": "web", "kind": "warc", "path": str(sample / "crawl" / "*.warc.gz"), "weight": 0.5},
            {
                "name": "notes",
                "kind": "folder",
                "path": str(sample / "domain"),
                "weight": 0.5,
                "priority": 5,
                "stages": {"quality": None},
            },
        ],
        "stages": {
            "language": {"keep": None, "min_score": 0.3},
            "dedup": {"threshold": 0.5},
            "tokenize": {"vocab_size": 400, "heldout_share": 0.1, "tasks": 1},
        },
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
        "plan": {"gpu": "H100-SXM"},
        "train": SMALL_TRAIN,
    }
    path = tmp_path / "e2e.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def task_states(flow_state) -> dict[str, str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    async def read() -> dict[str, str]:
        async with get_client() as client:
            runs = await client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_state.state_details.flow_run_id]))
            )
            return {
                run.name if run.name.startswith("curate-") else run.name.rsplit("-", 1)[0]: run.state.name
                for run in runs
            }

    return asyncio.run(read())


def test_failed_stage_rerun_uses_cache_and_training_change_retrains_only(
    recipe_path: Path, tmp_path: Path, prefect_harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

    import pipeline.tokenize.run as tokenize_run
    from flows.end_to_end import pipeline

    with temporary_settings(updates={PREFECT_LOCAL_STORAGE_PATH: str(tmp_path / "results")}):
        real_tokenize = tokenize_run.run_tokenize

        def broken(*args, **kwargs):
            raise ValueError("tokenizer exploded (test)")

        monkeypatch.setattr(tokenize_run, "run_tokenize", broken)
        failed = pipeline(str(recipe_path), return_state=True)
        assert failed.is_failed()
        first = task_states(failed)
        assert first["curate-web"] == "Completed" and first["dedup"] == "Completed" and first["tokenize"] == "Failed"
        assert "train" not in first

        monkeypatch.setattr(tokenize_run, "run_tokenize", real_tokenize)
        rerun = pipeline(str(recipe_path), return_state=True)
        assert rerun.is_completed(), rerun
        second = task_states(rerun)
        assert second["curate-web"] == "Cached" and second["curate-notes"] == "Cached" and second["dedup"] == "Cached"
        assert second["tokenize"] == "Completed" and second["plan"] == "Completed" and second["train"] == "Completed"
        result = rerun.result()
        assert result["train"]["final_loss"] > 0 and Path(result["report"]).exists()
        assert "Run summary" in Path(result["report"]).read_text()
        from pipeline.report_check import check_report

        assert check_report(Path(result["report"]).parent) == []  # the whole run's report adds up

        data = yaml.safe_load(recipe_path.read_text())
        data["train"]["lr"] = 2e-3
        recipe_path.write_text(yaml.safe_dump(data))
        changed = pipeline(str(recipe_path), return_state=True)
        third = task_states(changed)
        assert {k: v for k, v in third.items() if k.startswith("curate-")} == {
            "curate-web": "Cached",
            "curate-notes": "Cached",
        }
        assert third["dedup"] == "Cached" and third["tokenize"] == "Cached" and third["plan"] == "Cached"
        assert third["train"] == "Completed"


def test_transient_errors_are_retried_deterministic_ones_are_not() -> None:
    from flows.end_to_end import PlanRefused, is_transient
    from pipeline.config import RecipeError

    assert is_transient(OSError("disk hiccup")) and is_transient(TimeoutError()) and is_transient(ConnectionError())
    assert not is_transient(FileNotFoundError("gone")) and not is_transient(RecipeError("bad"))
    assert not is_transient(PlanRefused("no")) and not is_transient(ValueError("bad value"))
