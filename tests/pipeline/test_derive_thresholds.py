"""benchmarks/derive_thresholds.py's derivations on measures given here (the script measures the real-text set)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import derive_thresholds  # noqa: E402 - a script folder, not a package

from pipeline.curate.config import GopherRepetitionConfig  # noqa: E402


def test_lid_thresholds_scale_min_score_by_each_languages_median_against_englishs() -> None:
    lid = {f"en{i}": ("en", "en", 0.8) for i in range(20)}
    lid |= {f"sl{i}": ("sl", "sl", 0.64) for i in range(20)}  # less sure of Slovenian: 0.5 x 0.64 / 0.8
    lid |= {f"de{i}": ("de", "de", 0.95) for i in range(20)}  # surer than of English: keeps min_score
    lid |= {f"da{i}": ("da", "no", 0.3) for i in range(20)}  # misidentified pages do not count
    lid |= {f"ko{i}": ("ko", "ko", 0.2) for i in range(5)}  # too few pages
    result = derive_thresholds.lid_thresholds(lid, min_score=0.5, min_pages=20)
    assert result["min_score_by_language"] == {"sl": 0.4}
    assert set(result["median_score"]) == {"en", "sl", "de"}


def test_parallel_block_raises_only_what_a_language_repeats_more_than_english_on_enough_pairs() -> None:
    paper = derive_thresholds.paper_thresholds(GopherRepetitionConfig())
    scales = {
        "vi": {"duplicated_5_n_grams": [30, 1.4], "top_2_gram": [30, 1.05]},  # 1.05: noise, not raised
        "ja": {"duplicated_5_n_grams": [12, 1.5]},  # too few pairs
        "de": {"duplicated_5_n_grams": [40, 0.75]},  # repeats less than English
    }
    block = derive_thresholds.parallel_block(paper, scales)
    assert set(block) == {"vi"}
    grams = dict(block["vi"]["gopher_repetition"]["dup_n_grams"])
    assert grams[5] == round(0.15 * 1.4, 3) and grams[6] == 0.14
    # the block is a valid per-language override of the recipe
    from pipeline.curate.config import QualityConfig

    assert QualityConfig(languages=block).for_language("vi").gopher_repetition.dup_n_grams[0] == (5, 0.21)
