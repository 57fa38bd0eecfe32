"""The bundled toxicity model scored without scikit-learn gives scikit-learn's scores exactly (issue 21 item 4:
faster, decisions unchanged)."""

from __future__ import annotations

import gzip
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.curate.toxicity import BundledScorer, bundled_scorer
from pipeline.curate.toxicity_linear import LinearToxicityScorer, UnsupportedModel, bundled_data_dir
from pipeline.text import lid_units

EDGE_CASES = ["", "   \n ", "a", "you are a stupid idiot", "You ARE a STUPID moron!!!", "Ça va très bien, merci"]


def machine_texts(limit: int = 150) -> list[str]:
    """The first ``limit`` man pages of section 1 by name (pinned: sorted), as their roff source text."""
    pages = sorted(Path("/usr/share/man/man1").glob("*.1.gz"))[:limit]
    texts = []
    for page in pages:
        try:
            with gzip.open(page, "rt", encoding="utf-8", errors="replace") as handle:
                texts.append(handle.read()[:20_000])
        except OSError:
            continue
    return texts


def generated_texts(n: int = 300) -> list[str]:
    from sample.domain import build_domain

    return [doc.content for doc in build_domain(random.Random(3), n)][:n]


@pytest.fixture(scope="module")
def scorers() -> tuple[BundledScorer, LinearToxicityScorer]:
    return BundledScorer(), LinearToxicityScorer(bundled_data_dir())


@pytest.mark.parametrize("family", ["machine", "generated"])
def test_scores_equal_scikit_learn_bit_for_bit(scorers, family):
    texts = machine_texts() if family == "machine" else generated_texts()
    if len(texts) < 20:
        pytest.skip(f"only {len(texts)} man pages under /usr/share/man/man1 on this machine")
    texts += EDGE_CASES
    reference, linear = scorers
    for start in range(0, len(texts), 64):
        batch = texts[start : start + 64]
        units = [lid_units(t, 40, 100_000) for t in batch]
        assert linear.score_units(batch, units) == reference.score_units(batch, units)
        assert linear.scores(batch) == reference.scores(batch)


def test_rows_are_summed_one_value_after_the_other():
    import numpy as np

    from pipeline.curate.toxicity_linear import sequential_row_sums

    values = np.array([1e16, 1.0, -1e16, 1.0, 0.1, 0.2, 0.3, 5.0])
    lengths = np.array([4, 0, 3, 1])
    expected = [((1e16 + 1.0) - 1e16) + 1.0, 0.0, (0.1 + 0.2) + 0.3, 5.0]
    assert sequential_row_sums(values, lengths).tolist() == expected  # order-sensitive values
    columns = sequential_row_sums(np.stack([values, 2 * values], axis=1), lengths)
    assert columns[:, 1].tolist() == [2 * e for e in expected]


def test_the_stage_scores_without_importing_scikit_learn():
    code = (
        "import sys; from pipeline.curate.toxicity import bundled_scorer, ToxicityStage; "
        "s = bundled_scorer(); print(type(s).__name__, s.scores(['you idiot'])[0] > 0.5, "
        "'sklearn' in sys.modules, 'scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["LinearToxicityScorer", "True", "False", "False"]


def test_a_pickle_it_does_not_reproduce_falls_back_to_scikit_learn(monkeypatch):
    import pipeline.curate.toxicity_linear as linear

    def refuse(path):
        raise UnsupportedModel("pickled with scikit-learn 0.0, 9.9 installed")

    monkeypatch.setattr(linear, "_load_stubbed", refuse)
    bundled_scorer.cache_clear()
    try:
        assert isinstance(bundled_scorer(), BundledScorer)
    finally:
        bundled_scorer.cache_clear()


def test_another_scikit_learn_version_is_not_reproduced(monkeypatch):
    import pipeline.curate.toxicity_linear as linear

    monkeypatch.setattr(linear, "_installed_sklearn", lambda: "0.0.1")
    with pytest.raises(UnsupportedModel, match="pickled with scikit-learn"):
        LinearToxicityScorer(bundled_data_dir())


def test_the_faster_token_pattern_finds_scikit_learns_tokens():
    import re

    from pipeline.curate.toxicity_linear import DEFAULT_TOKEN_PATTERN, RUNS_OF_TWO_OR_MORE

    rng = random.Random(5)
    alphabet = "ab Z_09 .'-é\u0301ßΩж中\u200b\t\n"  # word characters of several kinds, marks, spaces
    texts = EDGE_CASES + ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(3000)]
    sklearn_tokens = re.compile(DEFAULT_TOKEN_PATTERN).findall
    assert all(RUNS_OF_TWO_OR_MORE.findall(t.lower()) == sklearn_tokens(t.lower()) for t in texts)
