"""Mix planning and the held-out split: pure numpy, no files."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.tokenize.config import SourceMix, TokenizeConfig
from pipeline.tokenize.mix import MixError, heldout_mask, normalise_mix, plan_targets, select_documents

TOKENS = {"web": 1_000_000, "finance": 100_000}


def test_weights_are_shares_of_the_natural_total() -> None:
    targets = plan_targets(TOKENS, {"web": SourceMix(weight=0.49), "finance": SourceMix(weight=0.51)})
    assert targets["finance"].target_tokens == pytest.approx(0.51 * 1_100_000)
    assert targets["web"].requested_share == pytest.approx(0.49)


def test_percentages_and_an_explicit_total() -> None:
    targets = plan_targets(TOKENS, {"web": SourceMix(weight=49), "finance": SourceMix(weight=51)}, 2_000_000)
    assert targets["finance"].target_tokens == pytest.approx(1_020_000)
    assert targets["finance"].requested_share == pytest.approx(0.51)


@pytest.mark.parametrize("weights", [(0.6, 0.6), (0.3, 0.3), (30, 30)])
def test_weights_that_do_not_sum_to_one_are_a_clear_error(weights) -> None:
    mix = {"web": SourceMix(weight=weights[0]), "finance": SourceMix(weight=weights[1])}
    with pytest.raises(MixError, match=r"finance=.*web=.*sum to .*must sum to 1"):
        plan_targets(TOKENS, mix)


def test_weights_with_epoch_sources_must_leave_room() -> None:
    mix = {"web": SourceMix(epochs=1), "finance": SourceMix(weight=1.0)}
    with pytest.raises(MixError, match="sum to less than 1"):
        plan_targets(TOKENS, mix)


def test_epochs_fix_tokens_and_weights_take_their_share_of_the_result() -> None:
    targets = plan_targets(TOKENS, {"web": SourceMix(epochs=1), "finance": SourceMix(weight=0.2)})
    total = 1_000_000 / 0.8
    assert targets["web"].target_tokens == pytest.approx(1_000_000)
    assert targets["finance"].target_tokens == pytest.approx(0.2 * total)
    assert targets["web"].requested_share == pytest.approx(0.8)


def test_no_mix_means_natural_sizes() -> None:
    targets = plan_targets(TOKENS, {})
    assert targets["web"].target_tokens == 1_000_000 and targets["finance"].mode == "epochs"


def test_zero_token_and_missing_sources_are_named() -> None:
    with pytest.raises(MixError, match="legal have zero tokens"):
        plan_targets({**TOKENS, "legal": 0}, {})
    mix = {"web": SourceMix(weight=0.5), "finance": SourceMix(weight=0.3), "legal": SourceMix(weight=0.2)}
    with pytest.raises(MixError, match="legal have zero tokens"):
        plan_targets(TOKENS, mix)
    with pytest.raises(MixError, match="finance found in the input but not in the weighted mix"):
        plan_targets(TOKENS, {"web": SourceMix(weight=1.0)})


def test_source_mix_takes_weight_or_epochs_not_both() -> None:
    with pytest.raises(ValueError, match="either a weight or epochs"):
        SourceMix(weight=0.5, epochs=2)
    with pytest.raises(ValueError):
        SourceMix(weight=-1)


def test_normalise_accepts_dicts_and_recipe_sources() -> None:
    from pipeline.config import SourceConfig

    mixed = normalise_mix({"a": {"weight": 0.5}, "b": SourceConfig(name="b", path="x", epochs=2), "c": SourceMix()})
    assert mixed["a"].weight == 0.5 and mixed["b"].epochs == 2 and mixed["c"].weight is None


@pytest.mark.parametrize("target_factor", [0.3, 1.0, 2.37, 6.5])
def test_select_documents_meets_the_target_within_one_document(target_factor: float) -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(20, 400, size=500)
    target = target_factor * lengths.sum()
    chosen = select_documents(lengths, target, np.random.default_rng(1))
    assert abs(lengths[chosen].sum() - target) <= lengths.max() / 2 + 1
    counts = np.bincount(chosen, minlength=len(lengths))
    full = int(target_factor)
    assert counts.min() >= full and counts.max() <= full + 1  # whole passes, then a subset: no doc favoured


def test_heldout_mask_is_seeded_sized_and_keeps_copies_together() -> None:
    hashes = np.arange(1000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    mask = heldout_mask(hashes, 0.05, seed=1)
    assert mask.sum() == 50
    assert np.array_equal(mask, heldout_mask(hashes, 0.05, seed=1))
    assert not np.array_equal(mask, heldout_mask(hashes, 0.05, seed=2))
    # order-independent: shuffling the documents selects the same ones
    perm = np.random.default_rng(0).permutation(1000)
    assert np.array_equal(heldout_mask(hashes[perm], 0.05, seed=1), mask[perm])
    copies = np.concatenate([hashes, hashes[:10]])  # ten texts present twice
    with_copies = heldout_mask(copies, 0.3, seed=4)
    assert np.array_equal(with_copies[:10], with_copies[1000:])
    assert heldout_mask(hashes[:1], 0.5, seed=1).sum() == 0  # a single document always trains
    assert heldout_mask(hashes[:3], 0.01, seed=1).sum() == 1  # a small source still gets one held out


def test_config_rejects_eos_outside_special_tokens() -> None:
    with pytest.raises(ValueError, match="eos_token"):
        TokenizeConfig(eos_token="</s>")
    with pytest.raises(ValueError):
        TokenizeConfig(vocab_size=100)
    with pytest.raises(ValueError):
        TokenizeConfig(unknown_key=1)
