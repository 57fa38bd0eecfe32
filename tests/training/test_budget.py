"""The budget check (training/plan/): parameter counts, FLOPs, Chinchilla sizes, verdicts, memory, report.

Reference numbers come from docs/reference.md (Chinchilla Table 3, GPT-3, BloombergGPT, the H200 measurements).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from training.gpus import GIB, GPUS, get_gpu
from training.models import ModelError, count_params, load_shape, preset_names
from training.plan.hardware import Budget, Data, Hardware
from training.plan.laws import compute_optimal, flops_per_token
from training.plan.memory import estimate_memory, korthikanti_bytes, layer_activation_bytes_per_token
from training.plan.options import ManifestInfo, PlanOptions, manifest_info, plan_from_options
from training.plan.planner import check, plan
from training.units import PlanError, parse_count

REPO = Path(__file__).resolve().parents[2]

# Chinchilla Table 3: (params, FLOPs, tokens)
TABLE3 = [
    (400e6, 1.92e19, 8.0e9),
    (1e9, 1.21e20, 20.2e9),
    (10e9, 1.23e22, 205.1e9),
    (67e9, 5.76e23, 1.5e12),
    (175e9, 3.85e24, 3.7e12),
    (280e9, 9.90e24, 5.9e12),
    (520e9, 3.43e25, 11.0e12),
    (1e12, 1.27e26, 21.2e12),
    (10e12, 1.30e28, 216.2e12),
]


def close(value: float, reference: float, tolerance: float) -> bool:
    return abs(value / reference - 1) <= tolerance


# ------------------------------------------------------------------------------------------ parameter counts


@pytest.mark.parametrize(
    ("preset", "expected"),
    [("125m", 134_105_856), ("350m", 373_867_520), ("1b", 1_100_048_384), ("7b", 6_738_415_616)],
)
def test_presets_reproduce_design_parameter_counts(preset: str, expected: int) -> None:
    counts = count_params(load_shape(preset))
    assert counts.total == expected
    shape = load_shape(preset)
    assert counts.non_embedding == expected - 2 * shape.vocab_size * shape.hidden_size  # untied: embed + head


def test_every_preset_loads_and_tiny_is_a_few_million() -> None:
    assert {"tiny", "20m", "125m", "350m", "1b", "3b", "7b"} <= set(preset_names())
    assert 1e6 < count_params(load_shape("tiny")).total < 10e6
    assert load_shape("1b").num_kv_heads == 4


def _hf_numel(model) -> int:
    return sum(p.numel() for p in model.parameters())


def test_count_matches_transformers_for_llama_yaml_and_hf_configs(tmp_path: Path) -> None:
    """The hand count equals what transformers allocates: a preset YAML, and HF config.json folders of
    Llama (tied, GQA, head_dim), Qwen2 (q/k/v biases) and Qwen3 (q/k norms)."""
    torch = pytest.importorskip("torch")
    import yaml
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    kwargs = yaml.safe_load((REPO / "configs/models/tiny.yaml").read_text())
    assert count_params(load_shape("tiny")).total == _hf_numel(LlamaForCausalLM(LlamaConfig(**kwargs)))

    small = dict(
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=300,
    )
    configs = {
        "llama": (LlamaConfig(**small, tie_word_embeddings=True, head_dim=24, attention_bias=True), LlamaForCausalLM),
        "qwen2": (Qwen2Config(**small), Qwen2ForCausalLM),
        "qwen3": (Qwen3Config(**small, head_dim=16), Qwen3ForCausalLM),
    }
    for name, (config, cls) in configs.items():
        folder = tmp_path / name
        folder.mkdir()
        config.to_json_file(str(folder / "config.json"))
        assert count_params(load_shape(folder)).total == _hf_numel(cls(config)), name


def test_budget_modules_import_without_torch() -> None:
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None\n"
        "import training.plan.planner, training.plan.options, training.models, training.gpus, training.plan.report\n"
        "p = training.plan.planner.plan('7b', 1e12); print(p.params)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "6738415616.0"


# ------------------------------------------------------------------------------------------ compute


def test_flops_per_token_conventions_reproduce_design_mfu() -> None:
    shape = load_shape("125m")
    n = count_params(shape).total
    palm = flops_per_token(n, shape, 2048)
    assert palm == 6 * n + 12 * 12 * 768 * 2048
    assert flops_per_token(n, shape, 2048, "causal") == 6 * n + 6 * 12 * 768 * 2048
    assert flops_per_token(n, shape, 2048, "6n") == flops_per_token(n) == 6 * n
    # docs/reference.md: 134M at 371k tok/s = 39 % and 1.10B at 58.6k tok/s = 45.7 % of 989 TFLOP/s
    assert round(palm * 371e3 / 989e12, 2) == 0.39
    one_b = load_shape("1b")
    assert round(flops_per_token(count_params(one_b).total, one_b, 2048) * 58.6e3 / 989e12, 3) == 0.457


@pytest.mark.parametrize(("params", "flops", "tokens"), TABLE3)
def test_chinchilla_table3_default_rule_within_5_percent(params: float, flops: float, tokens: float) -> None:
    n, d = compute_optimal(flops)
    assert close(n, params, 0.05)
    assert close(d, tokens, 0.08)  # tokens follow from C = 6ND; the 67B row's 1.5T is itself off by 7.6 %


@pytest.mark.parametrize(("params", "flops", "tokens"), [row for row in TABLE3 if row[0] <= 1e12])
def test_chinchilla_table3_epoch_fit_within_15_percent(params: float, flops: float, tokens: float) -> None:
    n, _ = compute_optimal(flops, "epoch")
    assert close(n, params, 0.15)


def test_hoffmann_constants_warn_and_imply_many_tokens_per_param() -> None:
    n, d = compute_optimal(5.76e23, "hoffmann")
    assert d / n > 90
    result = plan(67e9, 1.5e12, fit="hoffmann")
    assert any("Hoffmann" in w for w in result.warnings)
    assert plan(67e9, 1.5e12).warnings == []


def test_gpt3_flops_pf_days_verdict_and_optimum() -> None:
    result = plan(175e9, 300e9)
    assert close(result.flops, 3.14e23, 0.01)
    assert close(result.pf_days, 3640, 0.01)
    assert result.verdicts[0].startswith("under-trained")
    assert close(result.optimal["params"], 51e9, 0.05)
    assert close(result.optimal["tokens"], 1e12, 0.05)


def test_bloomberggpt_is_near_optimal_within_the_fit_and_data_limited() -> None:
    result = plan(50.6e9, Data(tokens=569e9, unique_tokens=708e9))
    # 11 tokens/param, below the rule's band, but the fit predicts 2.013 against 2.012 at the optimum: a gap
    # inside the fit's uncertainty is no "under-trained" verdict
    assert result.verdicts[0].startswith("near compute-optimal"), result.verdicts[0]
    assert "2.013 against 2.012" in result.verdicts[0]
    assert result.data_limited
    assert any(v.startswith("data-limited") for v in result.verdicts)
    # with more data than compute-optimal training needs it is not data-limited
    assert not plan(50.6e9, Data(tokens=569e9, unique_tokens=2e12)).data_limited


def test_llama_65b_compute_optimal_and_llama3_8b_over_trained() -> None:
    assert plan(65.2e9, 1.4e12).verdicts[0].startswith("compute-optimal")
    llama3 = plan(8.03e9, 15e12)
    assert llama3.verdicts[0].startswith("over-trained")
    assert "inference-optimal" in llama3.verdicts[0]
    assert close(llama3.tokens_per_param, 1900, 0.05)


def test_repetition_warning_and_epoch_block() -> None:
    result = plan(1e9, Data(tokens=50e9, unique_tokens=10e9))
    assert result.data["epochs"] == pytest.approx(5.0)
    assert any("Muennighoff" in v for v in result.verdicts)
    assert not any("epochs" in p for p in check(result))
    assert any("epochs" in p for p in check(plan(1e9, Data(tokens=50e9, unique_tokens=2e9))))


def test_budget_forms_size_the_model_and_agree() -> None:
    h100 = Hardware(gpu="H100-SXM", gpus=8, mfu=0.4, price_per_gpu_hour=2.5)
    hours = 10_000
    flops = hours * 3600 * 989.4e12 * 0.4
    by_hours = plan(None, None, h100, budget=Budget(gpu_hours=hours))
    assert close(by_hours.budget_flops, flops, 1e-9)
    assert close(by_hours.params, (flops / 120) ** 0.5, 1e-9)  # N* = sqrt(C / 6·20)
    by_money = plan(None, None, h100, budget=Budget(money=hours * 2.5, gpu_hours=hours))  # consistent: accepted
    assert close(by_money.params, by_hours.params, 1e-9)
    by_model = plan("1b", None, h100, budget=Budget(flops=flops))  # tokens = what the budget buys
    assert close(by_model.flops, flops, 1e-9)
    assert close(by_model.cost, hours * 2.5, 1e-6)


def test_domain_adaptive_mode() -> None:
    result = plan("7b", Data(tokens=20e9, base_tokens=2e12))
    assert result.domain["share_of_base"] == pytest.approx(0.01)
    assert result.domain["replay_share"] == [0.05, 0.25]
    assert result.verdicts[0].startswith("domain-adaptive")
    assert "re-warm" in result.verdicts[0]
    assert "prompting" in result.domain["ladder"]


# ------------------------------------------------------------------------------------------ memory


def test_static_memory_16_bytes_per_param() -> None:
    assert close(plan(7e9, 1e9).memory.per_gpu_bytes, 112e9, 1e-9)
    assert close(plan(175e9, 1e9).memory.per_gpu_bytes, 2.8e12, 1e-9)
    psi = 7e9
    for strategy, expected in {
        "zero1": 4 * psi + 12 * psi / 8,
        "zero2": 2 * psi + 14 * psi / 8,
        "zero3": 16 * psi / 8,
    }.items():
        memory = estimate_memory(psi, None, Hardware(gpus=8, strategy=strategy, precision="bf16"))
        assert close(memory.per_gpu_bytes, expected, 1e-9), strategy


def test_memory_matches_h200_measurements() -> None:
    seven_b = plan("7b", 1e9, Hardware(gpu="H200", micro_batch=1, seq_len=2048, activation_checkpointing=True))
    assert close(seven_b.memory.per_gpu_gib, 100.5, 0.05)
    one_b = plan("1b", 1e9, Hardware(gpu="H200", micro_batch=8, seq_len=2048))
    assert close(one_b.memory.per_gpu_gib, 56.6, 0.10)  # the acceptance bound is 25 %; issue 6 wants 10 %
    one_b_recompute = plan("1b", 1e9, Hardware(gpu="H200", micro_batch=1, activation_checkpointing=True))
    assert close(one_b_recompute.memory.per_gpu_gib, 16.5, 0.10)
    # Korthikanti's GPT formula (SDPA: no s×s term) even with fp32 logits misses the 1.1B measurement by > 15 %
    shape = load_shape("1b")
    korthikanti = 16 * count_params(shape).total + shape.num_layers * korthikanti_bytes(2048, 8, 2048, 0)
    korthikanti += 14 * 32000 * 8 * 2048
    assert korthikanti / GIB < 56.6 * 0.85


def _saved_activation_bytes(precision: str, attention: str) -> tuple[float, float]:
    """Bytes autograd saves for a small Llama on the CPU (autocast bf16 or bf16 weights) vs the formula."""
    torch = pytest.importorskip("torch")
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    kwargs = dict(
        hidden_size=256,
        intermediate_size=704,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=2,
        vocab_size=1000,
    )
    model = LlamaForCausalLM(LlamaConfig(**kwargs, attn_implementation=attention))
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        saved.setdefault(storage.data_ptr(), storage.nbytes())
        return tensor

    batch, seq = 2, 128
    ids = torch.randint(0, 1000, (batch, seq))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        if precision == "amp":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                model(ids, labels=ids)
        else:
            model(ids, labels=ids)
    measured = sum(size for ptr, size in saved.items() if ptr not in params)
    shape = load_shape(kwargs)
    memory = estimate_memory(
        count_params(shape).total,
        shape,
        Hardware(micro_batch=batch, seq_len=seq, precision=precision, attention=attention),
    )
    # the saved part of the loss is the fp32 log-probabilities (4 of the 14 bytes per logit counted)
    predicted = (
        memory.breakdown["activations"]
        + memory.breakdown["logits"] * 4 / 14
        + memory.breakdown.get("autocast_weight_copies", 0)
    )
    return measured, predicted


@pytest.mark.parametrize(("precision", "attention"), [("amp", "sdpa"), ("bf16", "sdpa"), ("amp", "eager")])
def test_activation_formula_matches_what_autograd_saves(precision: str, attention: str) -> None:
    measured, predicted = _saved_activation_bytes(precision, attention)
    assert close(predicted, measured, 0.03), (predicted, measured)


def test_layer_activations_grow_with_eager_scores() -> None:
    shape = load_shape("1b")
    sdpa = layer_activation_bytes_per_token(shape, 2048, "amp", "sdpa")
    eager = layer_activation_bytes_per_token(shape, 2048, "amp", "eager")
    assert eager - sdpa >= 6 * 32 * 2048  # fp32 softmax output + bf16 probabilities per head and key


def test_does_not_fit_names_cheapest_fix_and_check_blocks() -> None:
    result = plan("7b", 1e12, Hardware(gpu="H100-SXM", gpus=8, micro_batch=8))
    assert not result.memory.fits
    assert result.memory.suggestion.startswith("strategy zero2")
    problems = check(result)
    assert any("does not fit" in p and "zero2" in p for p in problems)
    fixed = plan("7b", 1e12, Hardware(gpu="H100-SXM", gpus=8, micro_batch=1, strategy="zero2"))
    assert fixed.memory.fits and check(fixed) == []
    one_gpu = plan("7b", 1e12, Hardware(gpu="H100-SXM"))
    assert "GPUs with zero3" in one_gpu.memory.suggestion


def test_check_blocks_on_minimum_tokens_and_budget() -> None:
    small = plan("tiny", Data(tokens=1e6, min_tokens=5e6), Hardware(gpu="L4", seq_len=256))
    assert any("recipe minimum" in p for p in check(small))
    assert check(plan("tiny", 1e6, Hardware(gpu="L4", seq_len=256)), min_tokens=1e5) == []
    over = plan("1b", 1e12, Hardware(gpu="H200"), budget=Budget(flops=1e20))
    assert any("over budget" in p for p in check(over))


# ------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: plan(0, 1e9), "params"),
        (lambda: plan(-7e9, 1e9), "params"),
        (lambda: plan(7e9, -1.0), "tokens"),
        (lambda: plan(7e9, Data(tokens=1e9, unique_tokens=0)), "unique_tokens"),
        (lambda: plan(7e9, 1e9, Hardware(gpus=0)), "gpus"),
        (lambda: plan(7e9, 1e9, Hardware(micro_batch=0)), "micro_batch"),
        (lambda: plan(7e9, 1e9, Hardware(mfu=0)), r"mfu: must be in \(0, 1\]"),
        (lambda: plan(7e9, 1e9, Hardware(mfu=1.2)), r"mfu: must be in \(0, 1\]"),
        (lambda: plan(7e9, 1e9, Hardware(mfu=-0.1)), "mfu"),
        (lambda: plan(7e9, None, budget=Budget(flops=1e22, gpu_hours=10)), "disagree"),
        (lambda: plan(7e9, None, budget=Budget(money=1000)), "price"),
        (lambda: plan(7e9, None, budget=Budget(flops=0)), "flops"),
        (lambda: plan(None, None), "nothing to plan"),
        (lambda: plan("no-such-model", 1e9), "not a preset"),
        (lambda: parse_count("seven billion"), "not a number"),
    ],
)
def test_bad_input_is_a_clear_error(call, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        call()


def test_unknown_gpu_lists_known_ones() -> None:
    with pytest.raises(PlanError) as error:
        Hardware(gpu="V100")
    for name in GPUS:
        assert name in str(error.value)
    assert get_gpu("h100 sxm").name == "H100-SXM" and get_gpu("h200").memory_gib == 141


def test_uncountable_hf_configs_are_refused(tmp_path: Path) -> None:
    gpt2 = tmp_path / "gpt2"
    gpt2.mkdir()
    (gpt2 / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_embd": 768, "n_layer": 12}))
    with pytest.raises(ModelError, match="gpt2.*cannot count|not an architecture"):
        load_shape(gpt2)
    moe = tmp_path / "moe.json"
    moe.write_text(
        json.dumps(
            {
                "model_type": "mistral",
                "hidden_size": 64,
                "intermediate_size": 96,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "vocab_size": 100,
                "num_local_experts": 8,
            }
        )
    )
    with pytest.raises(ModelError, match="mixture-of-experts"):
        load_shape(moe)
    with pytest.raises(PlanError, match="model: .*gpt2"):
        plan(str(gpt2), 1e9)


def test_model_yaml_errors_name_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "mine.yaml"
    bad.write_text((REPO / "configs/models/125m.yaml").read_text() + "hiden_size: 3\n")
    with pytest.raises(ModelError, match=r"mine\.yaml: unknown key\(s\) hiden_size"):
        load_shape(bad)
    zero = tmp_path / "zero.yaml"
    zero.write_text(
        (REPO / "configs/models/125m.yaml").read_text().replace("num_hidden_layers: 12", "num_hidden_layers: 0")
    )
    with pytest.raises(ModelError, match="zero.yaml: num_hidden_layers must be a positive integer"):
        load_shape(zero)


# ------------------------------------------------------------------------------------------ manifest, report


def test_manifest_gives_unique_tokens_and_vocab(tmp_path: Path) -> None:
    """The tokenize stage's manifest: a down-sampled source holds its mixed tokens, a repeated one its train."""
    manifest = tmp_path / "manifest.json"
    sources = {
        "web": {"tokens": {"train": 600, "heldout": 10, "mixed": 300}, "repeats": 0.5},
        "domain": {"tokens": {"train": 400, "heldout": 10, "mixed": 800}, "repeats": 2.0},
    }
    manifest.write_text(json.dumps({"tokenizer": {"vocab_size": 8192}, "sources": sources}))
    assert manifest_info(tmp_path) == ManifestInfo(unique_tokens=700.0, vocab_size=8192)
    result = plan_from_options(PlanOptions(model="tiny", tokens=1400, manifest=str(tmp_path), seq_len=64))
    assert result.data["epochs"] == pytest.approx(2.0) and result.shape.vocab_size == 8192
    manifest.write_text("{}")
    with pytest.raises(PlanError, match="no token counts"):
        manifest_info(manifest)
    with pytest.raises(PlanError, match="not found"):
        manifest_info(tmp_path / "missing.json")


def test_parse_count_suffixes() -> None:
    assert parse_count("1.4T") == 1.4e12
    assert parse_count("7B") == 7e9
    assert parse_count("300e9") == 3e11
    assert parse_count("2,000") == 2000


def test_report_renders_markdown_and_png(tmp_path: Path) -> None:
    from training.plan.report import write_report

    result = plan("1b", Data(tokens=50e9, unique_tokens=20e9, base_tokens=3e12), Hardware(gpu="H200"))
    paths = write_report(result, tmp_path)
    assert paths.png is not None
    png = Path(paths.png)
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    markdown = (tmp_path / "plan.md").read_text()
    assert "![plan](plots/plan.png)" in markdown and "domain-adaptive" in markdown
    assert "Adaptation ladder" in markdown
    payload = json.loads((tmp_path / "plan.json").read_text())
    assert payload["blocking"] == [] and payload["domain"]["share_of_base"] == pytest.approx(50 / 3000)


def test_under_trained_only_beyond_the_fits_uncertainty() -> None:
    # GPT-3's 1.7 tokens/param sits 0.85 % above its optimum in the epoch fit: beyond 0.5 %, so under-trained
    assert plan(175e9, 300e9).verdicts[0].startswith("under-trained")
    # a team's own law with a large scatter (RMSE of log loss 5 %) cannot tell GPT-3's plan from the optimum
    from training.plan.laws import FITS

    noisy = replace(FITS["epoch"], rmse_log=0.05, path="fit.json")
    assert plan(175e9, 300e9, fit=noisy).verdicts[0].startswith("near compute-optimal")


def test_continued_pretraining_gets_no_from_scratch_data_verdicts() -> None:
    # a 7B domain-adaptive plan: 10B continued tokens from 9.9B unique, on a model pre-trained on 2T
    result = plan("7b", Data(tokens=10e9, unique_tokens=9.9e9, base_tokens=2e12), "H200")
    assert result.verdicts[0].startswith("domain-adaptive")
    assert not any("20/param" in v or "compute-optimal model" in v for v in result.verdicts), result.verdicts
    assert not any(v.startswith("repeats data") for v in result.verdicts)  # 1.01 epochs is rounding
    # reading more than there is still says so, against the planned tokens only
    short = plan("7b", Data(tokens=10e9, unique_tokens=4e9, base_tokens=2e12), "H200")
    expected = "data-limited: 4B unique tokens, but the plan trains on 10B"
    assert expected in short.verdicts, short.verdicts
    assert any(v.startswith("repeats data: 2.50 epochs") for v in short.verdicts)


def test_ddp_above_ninety_percent_of_memory_suggests_sharding_with_headroom() -> None:
    result = plan("7b", Data(tokens=10e9, base_tokens=2e12), Hardware(gpu="H200", gpus=8))
    memory = result.memory
    assert memory.fits and memory.per_gpu_bytes > 0.9 * memory.usable_bytes, memory.per_gpu_gib
    assert memory.tight and memory.suggestion.startswith("strategy zero"), memory.suggestion
    gib = float(memory.suggestion.rsplit("→ ", 1)[1].split()[0])
    assert gib * GIB <= 0.9 * memory.usable_bytes
    from training.plan.report import render_markdown

    assert "cheapest change with headroom" in render_markdown(result, png=None)
    # a plan with room to spare gets no suggestion
    roomy = plan("1b", Data(tokens=10e9, base_tokens=2e12), Hardware(gpu="H200", gpus=8))
    assert not roomy.memory.tight and roomy.memory.suggestion is None
