"""Held-out split and source mixing: pure numpy planning, no I/O.

Held-out documents are chosen per source *before* mixing by a seeded key of each document's content hash
(the lowest keys are held out), so the split does not depend on how many ranks encoded the data, and two
copies of the same text always land on the same side.

Mixing turns each source's weight (share of all training tokens) or epochs (repeat count) into a token
target and meets it with whole documents: ``k`` full passes over the source, then a seeded subset of its
documents for the remainder, chosen so the token count lands as close to the target as one document allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pipeline.errors import TokenmillError
from pipeline.tokenize.config import SourceMix

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


class MixError(TokenmillError, ValueError):
    """A mix that cannot be built; the message names the sources involved."""


def keyed(hashes: np.ndarray, seed: int) -> np.ndarray:
    """splitmix64 of ``hash ^ seed``: a seeded reordering of content hashes, vectorised."""
    with np.errstate(over="ignore"):
        x = (hashes.astype(np.uint64) ^ np.uint64(seed & 0xFFFFFFFFFFFFFFFF)) + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return (x ^ (x >> np.uint64(31))) & _MASK


def heldout_mask(hashes: np.ndarray, share: float, seed: int) -> np.ndarray:
    """Boolean mask of held-out documents: ``round(share · n)`` of them (at least one when n ≥ 2 and share > 0).

    Ties at the boundary (identical texts) are all held out, so no text is on both sides.
    """
    n = len(hashes)
    if share <= 0 or n < 2:
        return np.zeros(n, dtype=bool)
    count = min(max(1, round(share * n)), n - 1)
    keys = keyed(hashes, seed)
    threshold = np.partition(keys, count - 1)[count - 1]
    mask = keys <= threshold
    if mask.all():  # every document has the same text: keep it for training
        mask[:] = False
    return mask


@dataclass
class SourceTarget:
    mode: str  # "weight" or "epochs"
    requested_share: float
    target_tokens: float


def normalise_mix(sources: Mapping[str, object] | None) -> dict[str, SourceMix]:
    """Accept ``SourceMix``, plain dicts or the recipe's ``SourceConfig`` objects (anything with weight/epochs)."""
    result: dict[str, SourceMix] = {}
    for name, value in (sources or {}).items():
        if isinstance(value, SourceMix):
            result[name] = value
        elif isinstance(value, Mapping):
            result[name] = SourceMix(**{k: value.get(k) for k in ("weight", "epochs")})
        else:
            result[name] = SourceMix(weight=getattr(value, "weight", None), epochs=getattr(value, "epochs", None))
    return result


def plan_targets(
    train_tokens: Mapping[str, int],
    mix: Mapping[str, SourceMix],
    target_tokens: int | None = None,
) -> dict[str, SourceTarget]:
    """Token target per source.

    * every source weighted: weights are shares and must sum to 1 (or 100, as percentages); the total is
      ``target_tokens`` or, by default, the natural total of all sources;
    * some weighted, the rest by epochs (a source with neither has epochs 1): epoch sources are fixed, the
      weights (summing to less than 1) are shares of the total that results;
    * no weights at all: every source by its epochs (1 when not given).
    With any weight, every input source must be in ``mix``.
    """
    names = sorted(train_tokens)
    if any(spec.weight is not None for spec in mix.values()):  # shares must be explicit; epochs default to 1
        unknown = sorted(set(train_tokens) - set(mix))
        if unknown:
            raise MixError(
                f"source(s) {', '.join(unknown)} found in the input but not in the weighted mix; "
                f"give them a weight or epochs in the recipe, or remove them from the input"
            )
    empty = sorted(set(mix) - set(train_tokens)) + [n for n in names if train_tokens[n] <= 0]
    if empty:
        raise MixError(
            f"source(s) {', '.join(sorted(set(empty)))} have zero tokens after curation "
            "(no readable documents in the input); fix the source or remove it from the mix"
        )
    specs = {name: mix.get(name, SourceMix()) for name in names}
    weighted = {n: float(s.weight) for n, s in specs.items() if s.weight is not None}
    by_epochs = {n: float(s.epochs if s.epochs is not None else 1.0) for n, s in specs.items() if s.weight is None}
    listing = ", ".join(f"{n}={w:g}" for n, w in sorted(weighted.items()))
    total_weight = sum(weighted.values())

    if weighted and not by_epochs:
        if abs(total_weight - 1) <= 1e-3:
            shares = dict(weighted)
        elif abs(total_weight - 100) <= 0.1:
            shares = {n: w / 100 for n, w in weighted.items()}
        else:
            raise MixError(
                f"mixing weights {listing} sum to {total_weight:g}; weights are shares of the training tokens "
                "and must sum to 1 (e.g. 0.51 and 0.49) or 100"
            )
        shares = {n: w / sum(shares.values()) for n, w in shares.items()}  # remove rounding residue
        total = float(target_tokens) if target_tokens else float(sum(train_tokens.values()))
        return {n: SourceTarget("weight", shares[n], shares[n] * total) for n in names}

    if target_tokens and weighted:
        raise MixError("target_tokens applies only when every source has a weight (some sources use epochs)")
    if total_weight >= 1:
        raise MixError(
            f"mixing weights {listing} sum to {total_weight:g} while other sources use epochs; "
            "the weights are shares of the total and must sum to less than 1"
        )
    fixed = {n: e * train_tokens[n] for n, e in by_epochs.items()}
    total = sum(fixed.values()) / (1 - total_weight)
    targets = {n: SourceTarget("epochs", fixed[n] / total, fixed[n]) for n in fixed}
    targets.update({n: SourceTarget("weight", w, w * total) for n, w in weighted.items()})
    return {n: targets[n] for n in names}


def select_documents(lengths: np.ndarray, target: float, rng: np.random.Generator) -> np.ndarray:
    """Document indices (with repeats) whose lengths sum as close to ``target`` as whole documents allow."""
    n = len(lengths)
    total = int(lengths.sum())
    full = int(target // total)
    remainder = target - full * total
    order = rng.permutation(n)
    cumulative = np.cumsum(lengths[order], dtype=np.int64)
    take = int(np.searchsorted(cumulative, remainder, side="left"))  # first prefix reaching the remainder
    if take < n:
        below = cumulative[take - 1] if take > 0 else 0
        if abs(cumulative[take] - remainder) < abs(remainder - below):
            take += 1
    return np.concatenate([np.tile(np.arange(n, dtype=np.int64), full), order[:take].astype(np.int64)])
