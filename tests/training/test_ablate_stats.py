"""training/ablate_stats.py: the paired 95 % interval of raw − curated bpb, the smallest detectable difference and
the call, on paired differences whose interval is known in closed form."""

from __future__ import annotations

import math

import pytest
from scipy.stats import t

from training.ablate_stats import HELPS, HURTS, NONE, document_se, in_words, paired_difference


def test_paired_t_interval_of_known_differences() -> None:
    # differences by seed 0.10, 0.11, 0.09: mean 0.10, sd 0.01, se 0.01 / sqrt(3), t(0.975, 2) = 4.3027
    result = paired_difference([1.30, 1.32, 1.31], [1.20, 1.21, 1.22])
    se = 0.01 / math.sqrt(3)
    assert result.difference == pytest.approx(0.10)
    assert result.df == pytest.approx(2)
    assert result.difference_ci95 == pytest.approx((0.10 - 4.302653 * se, 0.10 + 4.302653 * se), rel=1e-5)
    assert result.min_detectable == pytest.approx((t.ppf(0.975, 2) + t.ppf(0.8, 2)) * se)
    assert result.call == HELPS
    assert paired_difference([1.20, 1.21, 1.22], [1.30, 1.32, 1.31]).call == HURTS


def test_pairing_by_seed_sees_what_unpaired_spreads_hide() -> None:
    # the seeds move both arms together (spread 0.1 in each arm) while the paired difference stays near 0.02
    raw, curated = [1.40, 1.50, 1.60], [1.38, 1.481, 1.579]
    result = paired_difference(raw, curated)
    assert result.call == HELPS and result.difference_ci95[0] > 0
    # differences of either sign: the interval holds 0, and the sentence says what could have been seen
    none = paired_difference([1.30, 1.20, 1.25], [1.20, 1.30, 1.20])
    assert none.call == NONE and none.difference_ci95[0] < 0 < none.difference_ci95[1]
    words = in_words("manuals", none)
    assert "no detectable difference — this run could detect ≥" in words and f"{none.min_detectable:.4f}" in words


def test_document_sampling_term() -> None:
    # two documents of 100 bytes, 10 and 30 bits better: d = 0.2 bpb; ratio-estimator se = sqrt(2 * 200) / 200
    assert document_se([10, 30], [100, 100], 0.2) == pytest.approx(0.1)
    assert document_se([10], [100], 0.1) == 0.0  # one document: no spread to estimate
    # seed differences 0.20, 0.21, 0.19 (mean 0.2, the documents' own ratio)
    seeds_only = paired_difference([1.40, 1.42, 1.41], [1.20, 1.21, 1.22])
    both = paired_difference([1.40, 1.42, 1.41], [1.20, 1.21, 1.22], [10, 30], [100, 100])
    assert both.se_documents == pytest.approx(0.1) and both.documents == 2
    assert (
        both.difference_ci95[1] - both.difference_ci95[0]
        > seeds_only.difference_ci95[1] - seeds_only.difference_ci95[0]
    )
    assert both.call == NONE  # the reference set is too small to support the seeds' call
    a, b = seeds_only.se_seeds**2, 0.1**2
    assert both.df == pytest.approx((a + b) ** 2 / (a * a / 2 + b * b / 1))  # Welch–Satterthwaite


def test_identical_arms_and_bad_input() -> None:
    same = paired_difference([1.2, 1.3], [1.2, 1.3])
    assert same.difference == 0 and same.difference_ci95 == (0, 0) and same.call == NONE
    with pytest.raises(ValueError, match="two or more seeds"):
        paired_difference([1.2], [1.1])
    with pytest.raises(ValueError, match="two or more seeds"):
        paired_difference([1.2, 1.3], [1.1])
