"""training/ladder/ and ``tokenmill scaling ladder``: the size and lr/batch rules, WSD branching that
reproduces an uninterrupted run, a CPU micro-ladder end to end (runs.csv, fit.json, report), a rerun that
skips finished branches and redoes a missing one identically, and clear errors on bad input."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import flows  # hub offline
import flows.end_to_end  # noqa: F401  (Prefect sets up its log handlers on import: here, not in CliRunner's stderr)
from flows.cli import app
from pipeline.tokenize.config import TokenizeConfig
from tests.helpers.tokenize import write_run
from tests.helpers.train import config as train_config
from training.checkpoint import step_dir
from training.config import TrainConfigError
from training.ladder import (
    COOLDOWN,
    LadderConfig,
    LadderError,
    deepseek_batch_tokens,
    deepseek_lr,
    ladder_shape,
    plan_ladder,
)
from training.metrics import read_rows
from training.schedule import Schedule
from training.train import run_training


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    """~94k training tokens over two sources, 10 % held out: enough for 3 widths × tokens/param 1, 2, 4."""
    from pipeline.tokenize import run_tokenize

    root = tmp_path_factory.mktemp("ladder_data")
    write_run(root, {"web": 400, "finance": 200}, seed=4)
    run_tokenize(root, root / "shards", TokenizeConfig(vocab_size=300, tasks=1, workers=1, heldout_share=0.1, seed=8))
    return root / "shards"


# ------------------------------------------------------------------------------------------------ rules


def test_width_rule_gives_llama_blocks() -> None:
    assert ladder_shape(768) == {
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "num_key_value_heads": 12,
        "intermediate_size": 2048,
        "tie_word_embeddings": True,
    }
    small = ladder_shape(48)
    assert small["num_attention_heads"] == 3 and small["num_hidden_layers"] == 2
    assert small["intermediate_size"] == 128 and small["intermediate_size"] % 16 == 0


def test_deepseek_rules_at_a_known_budget() -> None:
    # DeepSeek LLM 2024, eq. 1, at C = 1e20: lr ≈ 0.3118 · 1e20^-0.125, B ≈ 0.292 · 1e20^0.3271
    assert deepseek_lr(1e20) == pytest.approx(0.3118 * 10 ** (-2.5))
    assert deepseek_batch_tokens(1e20) == pytest.approx(0.292 * 10 ** (20 * 0.3271))
    assert deepseek_lr(1e18) > deepseek_lr(1e20)  # larger runs: lower lr, larger batch
    assert deepseek_batch_tokens(1e18) < deepseek_batch_tokens(1e20)


def test_plan_branches_where_the_wsd_schedule_starts_to_decay(shards: Path, tmp_path: Path) -> None:
    plan = plan_ladder(LadderConfig(shards=str(shards), output=str(tmp_path)))
    assert [r.width for r in plan.rungs] == [32, 48, 64]
    for rung in plan.rungs:
        assert rung.params > rung.non_embedding_params > 0
        assert rung.batch_tokens % (64 * 8) == 0
        longest = max(b.steps for b in rung.branches)
        trunk = Schedule(rung.lr, 0.0, rung.warmup, longest, "wsd", COOLDOWN)
        for branch in rung.branches:
            own = Schedule(rung.lr, 0.0, rung.warmup, branch.steps, "wsd", COOLDOWN)
            assert all(own(s) == trunk(s) for s in range(branch.start + 1))  # identical up to the branch point
            assert own(branch.start + 1) < rung.lr  # … then the cool-down begins
            assert own(branch.steps - 1) < own(branch.start)
    assert plan.rungs[0].params < plan.rungs[-1].params


# ---------------------------------------------------------------------------------------------- branching


def test_a_branch_reproduces_the_uninterrupted_wsd_run(shards: Path, tmp_path: Path) -> None:
    """Trunk (schedule of 32 steps, stopped where a 16-step schedule decays) + branch to 16 == one 16-step run."""
    wsd = {"schedule": "wsd", "min_lr": 0.0, "warmup_steps": 2, "eval_every": 0, "ckpt_every": 0}
    straight = run_training(train_config(shards, tmp_path / "straight", max_steps=16, decay_steps=16, **wsd))
    start = Schedule(3e-3, 0.0, 2, 16, "wsd").total - max(1, round(0.2 * 14))
    run_training(train_config(shards, tmp_path / "trunk", max_steps=start, decay_steps=32, **wsd))
    point = step_dir(tmp_path / "trunk", start)
    branch = run_training(
        train_config(shards, tmp_path / "branch", max_steps=16, decay_steps=16, branch_from=str(point), **wsd)
    )
    assert branch.status == "completed" and branch.step == 16
    assert branch.final_loss == pytest.approx(straight.final_loss, rel=1e-5)
    assert branch.eval["all"]["loss"] == pytest.approx(straight.eval["all"]["loss"], rel=1e-5)
    rows = read_rows(tmp_path / "branch" / "metrics.jsonl")
    assert rows[0]["step"] > start  # the branch trains only its cool-down


def test_a_branch_with_another_peak_is_refused(shards: Path, tmp_path: Path) -> None:
    wsd = {"schedule": "wsd", "min_lr": 0.0, "warmup_steps": 2, "eval_every": 0, "ckpt_every": 0}
    run_training(train_config(shards, tmp_path / "trunk", max_steps=4, decay_steps=32, **wsd))
    point = step_dir(tmp_path / "trunk", 4)
    other = train_config(shards, tmp_path / "b", max_steps=8, decay_steps=8, branch_from=str(point), **wsd)
    with pytest.raises(Exception, match="lr"):
        run_training(other.model_copy(update={"lr": 1e-3}))
    with pytest.raises(TrainConfigError, match="not a complete checkpoint"):
        run_training(other.model_copy(update={"branch_from": str(tmp_path / "nowhere")}))


# ------------------------------------------------------------------------------------ the micro-ladder


def test_cpu_micro_ladder_end_to_end_and_rerun(shards: Path, tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    result = cli(
        "scaling", "ladder", "--shards", str(shards), "--output", str(out), "--sizes", "cpu", "--bootstrap", "20"
    )
    assert result.exit_code == 0, result.output
    with open(out / "runs.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 9
    assert {"params", "non_embedding_params", "tokens", "loss"} <= set(rows[0])
    for row in rows:
        assert int(row["params"]) > int(row["non_embedding_params"])
        assert float(row["loss"]) > 0
    by_width: dict[str, list[float]] = {}
    for row in rows:
        by_width.setdefault(row["width"], []).append(float(row["loss"]))
    assert all(losses[-1] < losses[0] for losses in by_width.values())  # more tokens, lower held-out loss
    fit = json.loads((out / "fit.json").read_text())
    assert {"E", "A", "B", "alpha", "beta", "ci"} <= set(fit) and fit["n_points"] == 9
    report = (out / "ladder_report.md").read_text()
    assert "The fit uses **params**" in report and "Fitted law" in report and "plan it implies" in report
    # the check: the law refitted on widths 32 and 48 predicts width 64's three losses, the error is reported
    check = json.loads((out / "ladder_report.json").read_text())["holdout_check"]
    assert check["width"] == 64 and check["fitted_on"] == 6 and len(check["predictions"]) == 3
    for p in check["predictions"]:
        assert p["error"] == pytest.approx((p["predicted"] - p["measured"]) / p["measured"])
        assert p["baseline"] is not None
    assert "## Check: the largest rung predicted from the others" in report and "Mean absolute error" in report
    assert (out / "fit.png").is_file()
    assert not (out / "size-32" / "tpp-1" / "checkpoints").exists()  # a finished branch keeps only result.json
    built = json.loads((out / "size-64" / "tpp-1" / "train_report.json").read_text())["summary"]["params"]
    assert built == int(rows[-1]["params"])  # the counted parameters are those of the model that trained

    # a rerun skips every finished branch; a branch whose result is missing is redone from the kept trunk
    # checkpoint and gives the same loss
    lost = out / "size-48" / "tpp-2" / "result.json"
    before = json.loads(lost.read_text())
    lost.unlink()
    kept = out / "size-32" / "tpp-4" / "result.json"
    stamp = kept.stat().st_mtime_ns
    again = cli("scaling", "ladder", "--shards", str(shards), "--output", str(out), "--bootstrap", "20", "--json")
    assert again.exit_code == 0, again.output
    assert kept.stat().st_mtime_ns == stamp
    redone = json.loads(lost.read_text())
    assert redone["loss"] == pytest.approx(before["loss"], rel=1e-5)
    rung = json.loads((out / "ladder.json").read_text())["rungs"][1]
    trunk_steps = [r["step"] for r in read_rows(out / "size-48" / "trunk" / "metrics.jsonl")]
    assert max(trunk_steps) == max(b["start"] for b in rung["branches"])  # the trunk was not trained again

    # other settings into the same folder are refused (the trunks were trained under these)
    changed = cli("scaling", "ladder", "--shards", str(shards), "--output", str(out), "--tokens-per-param", "1,3")
    assert changed.exit_code == 2 and "other settings" in changed.output


# ---------------------------------------------------------------------------------------------- errors


def test_dry_run_prices_the_gpu_ladder_without_training(shards: Path, tmp_path: Path) -> None:
    result = cli(
        "scaling", "ladder", "--shards", str(shards), "--output", str(tmp_path / "o"), "--sizes", "gpu", "--dry-run"
    )
    assert result.exit_code == 0, result.output
    assert "| 768 | 12 |" in result.output and "H200-hours" in result.output
    assert "past the 16-epoch limit" in result.output  # the test shards are far too small for it: said, not hidden
    assert not (tmp_path / "o").exists()


def test_the_gpu_ladder_config_plans_six_sizes_and_bad_configs_are_refused(shards: Path, tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    args = ["scaling", "ladder", "--shards", str(shards), "--output", str(tmp_path / "o"), "--dry-run"]
    result = cli(*args, "--config", str(repo / "configs" / "ladder" / "gpu.yaml"))
    assert result.exit_code == 0, result.output
    assert [f"| {w} |" in result.output for w in (128, 256, 384, 512, 640, 768)] == [True] * 6
    for w in (128, 768):
        line = next(x for x in result.output.splitlines() if x.startswith(f"| {w} |"))
        assert int(line.split("|")[6].replace(",", "")) % (1024 * 16) == 0  # whole micro-batches of seq 1024
    flagged = cli(*args, "--config", str(repo / "configs" / "ladder" / "gpu.yaml"), "--sizes", "128,256")
    assert flagged.exit_code == 0 and "| 384 |" not in flagged.output  # a flag wins over the file
    (tmp_path / "list.yaml").write_text("- 1\n")
    (tmp_path / "device.yaml").write_text("device: tpu\n")
    (tmp_path / "key.yaml").write_text("widht: [32]\n")
    for name, message in (
        ("none.yaml", "not found"),
        ("list.yaml", "expected a mapping"),
        ("device.yaml", "not cpu or gpu"),
        ("key.yaml", "unknown key"),
    ):
        bad = cli(*args, "--config", str(tmp_path / name))
        assert bad.exit_code == 2 and "error:" in bad.output and message in bad.output, (name, bad.output)


def test_help_and_bad_input(shards: Path, tmp_path: Path) -> None:
    assert cli("scaling", "ladder", "--help").exit_code == 0
    cases = [
        (["--output", str(tmp_path / "o")], "RECIPE or --shards"),
        (["--shards", str(tmp_path / "none"), "--output", str(tmp_path / "o")], "no manifest.json"),
        (["--shards", str(shards), "--output", str(tmp_path / "o"), "--sizes", "a,b"], "--sizes"),
        (["--shards", str(shards), "--output", str(tmp_path / "o"), "--sizes", "40"], "multiple of 16"),
        (["--shards", str(shards), "--output", str(tmp_path / "o"), "--sizes", "256"], "epochs"),
        (["--shards", str(shards), "--output", str(tmp_path / "o"), "--tokens-per-param", "0,1"], "positive"),
        (["--shards", str(shards), "--output", str(tmp_path / "o"), "--batch-tokens", "100"], "multiple"),
        ([str(tmp_path / "missing.yaml"), "--output", str(tmp_path / "o")], "missing.yaml"),
    ]
    for args, message in cases:
        result = cli("scaling", "ladder", *args)
        assert result.exit_code == 2, (args, result.output)
        assert "error:" in result.output and message in result.output, (args, result.output)


def test_shards_without_heldout_are_refused(tmp_path: Path) -> None:
    from pipeline.tokenize import run_tokenize

    write_run(tmp_path, {"web": 20}, seed=1)
    run_tokenize(tmp_path, tmp_path / "shards", TokenizeConfig(vocab_size=300, tasks=1, workers=1, heldout_share=0.0))
    with pytest.raises(LadderError, match="held-out"):
        plan_ladder(LadderConfig(shards=str(tmp_path / "shards"), output=str(tmp_path / "o")))


def test_a_recipe_names_the_shards_and_the_plan(shards: Path, tmp_path: Path, monkeypatch) -> None:
    import shutil

    import training.ladder as ladder

    recipe = tmp_path / "recipe.yaml"
    run = tmp_path / "run"
    recipe.write_text(
        f"name: r\noutput_dir: {run}\nsources:\n  - {{name: web, kind: folder, path: {tmp_path}}}\n"
        "plan: {gpu: H200, gpus: 8, gpu_hours: 1000}\ntrain: {model: tiny, max_steps: 10}\n"
    )
    missing = cli("scaling", "ladder", str(recipe), "--output", str(tmp_path / "o"))
    assert missing.exit_code == 2 and "run has no shards yet" in missing.output
    both = cli("scaling", "ladder", str(recipe), "--shards", str(shards), "--output", str(tmp_path / "o"))
    assert both.exit_code == 2 and "one of them" in both.output
    shutil.copytree(shards, run / "shards")
    seen = {}

    def fake(config, options, say=None):
        seen.update(config=config, options=options)
        (tmp_path / "r.md").write_text("report")
        return SimpleNamespace(report_md=str(tmp_path / "r.md"))

    monkeypatch.setattr(ladder, "run_ladder", fake)
    result = cli("scaling", "ladder", str(recipe), "--output", str(tmp_path / "o"), "--sizes", "32,48")
    assert result.exit_code == 0, result.output
    assert seen["config"].shards == str(run / "shards") and seen["config"].widths == [32, 48]
    assert seen["options"].gpu == "H200" and seen["options"].gpu_hours == 1000


def test_the_prefect_flow_trains_fits_and_skips_on_rerun(shards: Path, tmp_path: Path, prefect_harness) -> None:
    from flows.scaling_flow import ladder

    config = {
        "shards": str(shards),
        "output": str(tmp_path / "flow"),
        "widths": [32, 48],
        "tokens_per_param": [1, 2, 4],
        "bootstrap": 0,
    }
    result = ladder(config, {"manifest": str(shards / "manifest.json"), "tokens": 1e6})
    assert result["fit"]["n_points"] == 6
    report = json.loads((tmp_path / "flow" / "ladder_report.json").read_text())
    assert report["plan"]["law_used"].startswith("fitted law")  # the team's plan redone with the fitted law
    stamp = (tmp_path / "flow" / "size-32" / "tpp-1" / "result.json").stat().st_mtime_ns
    again = ladder(config, None)
    assert again["fit"]["n_points"] == 6
    assert (tmp_path / "flow" / "size-32" / "tpp-1" / "result.json").stat().st_mtime_ns == stamp


def test_a_degenerate_law_reports_no_optimum_instead_of_crashing() -> None:
    """The demo's ladder fitted A = 0 (exp underflow), the test data's α ≈ 50: fit, frontier and plan must not raise."""
    from training.ladder import _frontier
    from training.plan.laws import ScalingFit
    from training.scaling import _tokens_per_param

    flat = ScalingFit("x", E=0.0, A=0.0, B=942.0, alpha=4.3, beta=0.43, source="")
    assert _frontier(flat, 1e12) == []
    assert math.isnan(_tokens_per_param(flat.constants(), 1e12))
    steep = ScalingFit("y", E=1.0, A=1.0, B=1.0, alpha=60.0, beta=1.0, source="")
    assert steep.loss(37024, 1e5) == pytest.approx(1.0 + 1e-5)  # 37024**60 overflows; 37024**-60 is 0


def test_holdout_check_predicts_a_known_law_and_skips_two_sizes() -> None:
    from training.ladder.check import holdout_check, holdout_lines
    from training.plan.laws import ScalingFit

    law = ScalingFit("known", E=1.7, A=400.0, B=410.0, alpha=0.34, beta=0.28, source="")
    runs = [
        {"width": w, "params": n, "tokens": int(r * n), "tokens_per_param": r, "loss": law.loss(n, r * n)}
        for w, n in ((32, 40_000), (48, 80_000), (64, 160_000), (96, 320_000))
        for r in (1.0, 2.0, 4.0, 8.0)
    ]
    check = holdout_check(runs)
    assert check.width == 96 and check.fitted_on == 12 and len(check.predictions) == 4
    assert check.mean_abs_error < 0.01  # exact data from the law's own form: the refit extrapolates it
    assert check.baseline_mean_abs_error > check.mean_abs_error  # the larger model is better than the one below
    assert "the law extrapolates better" in "\n".join(holdout_lines(check.to_dict()))
    skipped = holdout_check([r for r in runs if r["width"] in (32, 48)])
    assert skipped.skipped and "Not checked" in "\n".join(holdout_lines(skipped.to_dict()))
