"""The hyper-parameter candidates ``tokenmill classifier train`` tries, and which of them fit its time budget.

Why a grid and not fastText's autotune (``autotuneValidationFile``): on 600 + 600 real man pages (section 3
against the others; docs/classifier.md) a 50-second autotune took 68 s of wall time and reached F1 0.906 /
ROC-AUC 0.973 on the unseen half, where one grid point (50 epochs, lr 1.0, bigrams) took 19 CPU-s for F1 0.985 /
ROC-AUC 0.996; autotune stops on wall-clock time, so the same data and seed give another model on a busier
machine. The grid below is deterministic: which candidates run depends on the data's token count and the
budget, through ``estimate_seconds``, never on a clock.

The candidates, in the order they are tried, come from that measurement and the Python-documentation one: DCLM's
5 epochs at lr 0.1 leave a model trained on ~1,000 documents near its initialisation (scores at 0.500), 25-50
epochs at lr 0.5-1.0 fit it; unigrams cost half of bigrams and are as good on some families. The cheap rows at
the end are what a large training set can afford (there DCLM's settings are right: it trained on ~400k).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: fastText supervised training speed, tokens per second per thread, by word n-gram order: the lowest of the
#: rates measured on the 2-core shared VM (1.3-2.1 M for bigrams, 3.0-4.0 M unigrams, 0.95 M trigrams), so that
#: an estimate errs long
TOKENS_PER_SECOND = {1: 2.5e6, 2: 1.3e6, 3: 0.9e6}
#: seconds to set up and free the input matrix, per bucket x dim float
SECONDS_PER_MATRIX_FLOAT = 1e-8
#: seconds to score a validation token (one predict pass)
SECONDS_PER_SCORED_TOKEN = 2e-7


@dataclass(frozen=True)
class Candidate:
    """One fastText setting the search trains and scores on the validation split."""

    epoch: int
    lr: float
    word_ngrams: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


#: the paper's fixed recipe (DCLM, Li et al. 2024): ``--recipe dclm``
DCLM = Candidate(epoch=5, lr=0.1, word_ngrams=2)
#: ``--recipe tuned`` (the default), in the order tried
GRID = (
    Candidate(25, 0.5, 2),
    Candidate(50, 1.0, 1),
    Candidate(50, 1.0, 2),
    Candidate(25, 1.0, 1),
    Candidate(50, 0.5, 2),
    Candidate(10, 1.0, 2),
    Candidate(10, 1.0, 1),
    Candidate(5, 0.5, 2),
    DCLM,
)


def candidates(recipe: str, epoch: int | None, lr: float | None, word_ngrams: int | None) -> list[Candidate]:
    """The recipe's candidates with each setting the user fixed put in (duplicates removed, order kept)."""
    base = GRID if recipe == "tuned" else (DCLM,)
    out: list[Candidate] = []
    for c in base:
        fixed = Candidate(epoch or c.epoch, lr or c.lr, word_ngrams or c.word_ngrams)
        if fixed not in out:
            out.append(fixed)
    return out


def estimate_seconds(
    candidate: Candidate, train_tokens: int, validation_tokens: int, bucket: int, dim: int, threads: int
) -> float:
    """Seconds one candidate costs: training, matrix set-up, scoring the validation split."""
    order = min(candidate.word_ngrams, 3)
    rate = TOKENS_PER_SECOND[order] * threads / max(1, candidate.word_ngrams - 2)  # 4-grams and up: slower still
    return (
        train_tokens * candidate.epoch / rate
        + bucket * dim * SECONDS_PER_MATRIX_FLOAT
        + validation_tokens * SECONDS_PER_SCORED_TOKEN
    )


def plan(
    options: list[Candidate],
    train_tokens: int,
    validation_tokens: int,
    bucket: int,
    dim: int,
    threads: int,
    budget_s: float,
) -> tuple[list[tuple[Candidate, float]], list[tuple[Candidate, float]]]:
    """``(planned, left out)``: each candidate in order is planned when its estimate fits what the earlier planned
    ones left of ``budget_s``; when none fits, the cheapest alone is planned (a model is always trained)."""
    priced = [(c, estimate_seconds(c, train_tokens, validation_tokens, bucket, dim, threads)) for c in options]
    planned, left_out, spent = [], [], 0.0
    for candidate, seconds in priced:
        if spent + seconds <= budget_s:
            planned.append((candidate, seconds))
            spent += seconds
        else:
            left_out.append((candidate, seconds))
    if not planned:
        cheapest = min(priced, key=lambda item: item[1])
        planned = [cheapest]
        left_out = [item for item in priced if item is not cheapest]
    return planned, left_out
