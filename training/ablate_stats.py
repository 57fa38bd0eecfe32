"""The ablation's statistics: a 95 % interval for raw − curated bits per byte, what the run could detect, the call.

Two sources of noise decide whether a difference between the arms is real:

* **Seeds.** A seed fixes the initialisation and the data order, the same in both arms, so arm differences are
  *paired* by seed: d_s = bpb_raw(s) − bpb_curated(s). Their mean d̄ has the standard error s_d / √n over n
  seeds (the paired t interval). A bootstrap over seeds is not used: with 3 seeds it has 10 distinct resamples
  and under-covers badly; the t interval is exact for normal seed noise and is what small-n practice uses.
* **Reference documents.** The reference set is a sample of the text it stands for (held-out web pages, your
  manuals): a claim about "that kind of text" must also carry the document-sampling error. bpb is a ratio of
  sums (bits over bytes), so its standard error is the ratio estimator's (Cochran 1977, 6.3):
  se_doc² = m / (m − 1) · Σ_j (D_j − d̄·B_j)² / (Σ_j B_j)², with D_j the seed-mean bit difference of document j
  and B_j its bytes. D_j also holds seed noise, so the two terms overlap a little: the interval is slightly
  conservative, never too narrow.

The two are added (se² = se_seed² + se_doc²) and the t quantile takes Welch–Satterthwaite's degrees of freedom.
The interval is d̄ ± t_{0.975, df} · se. The call is "curation helps" (the interval lies above 0), "curation
hurts" (below 0) or "no detectable difference". ``min_detectable`` is the smallest true difference this run
detects with 80 % power: (t_{0.975, df} + t_{0.80, df}) · se (the usual minimal detectable effect), so "no
detectable difference" reads "this run could detect ≥ min_detectable bpb".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

CONFIDENCE = 0.95
POWER = 0.80
HELPS, HURTS, NONE = "curation helps", "curation hurts", "no detectable difference"
CALLS = (HELPS, HURTS, NONE)
METHOD = (
    "paired t interval over seeds (a seed fixes the initialisation and data order in both arms) plus the "
    "reference documents' sampling variance (ratio estimator of bits over bytes), Welch–Satterthwaite degrees "
    "of freedom; min_detectable = (t_0.975 + t_0.80) × standard error: a true difference this large is detected "
    "with 80 % power"
)


@dataclass(frozen=True)
class PairedDifference:
    """raw − curated bpb of one reference: the estimate, its 95 % interval, what the run could see, the call."""

    difference: float
    difference_ci95: tuple[float, float]
    min_detectable: float
    call: str
    se_seeds: float
    se_documents: float
    df: float
    seeds: int
    documents: int

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["difference_ci95"] = list(self.difference_ci95)
        data["df"] = None if math.isinf(self.df) else self.df
        return data


def document_se(diff_bits: Sequence[float], doc_bytes: Sequence[float], difference: float) -> float:
    """The standard error of a bpb difference from sampling the reference documents (ratio estimator)."""
    m = len(diff_bits)
    total = float(sum(doc_bytes))
    if m < 2 or total <= 0:
        return 0.0
    residual = sum((d - difference * b) ** 2 for d, b in zip(diff_bits, doc_bytes, strict=True))
    return math.sqrt(m / (m - 1) * residual) / total


def _t(quantile: float, df: float) -> float:
    from scipy.stats import norm, t

    return float(norm.ppf(quantile) if math.isinf(df) else t.ppf(quantile, df))


def paired_difference(
    raw: Sequence[float],
    curated: Sequence[float],
    diff_bits: Sequence[float] | None = None,
    doc_bytes: Sequence[float] | None = None,
) -> PairedDifference:
    """The interval and call for ``raw[i]`` and ``curated[i]`` measured with seed i (same order in both).

    ``diff_bits[j]``: document j's raw − curated bits averaged over the seeds, ``doc_bytes[j]`` its bytes; without
    them only the seed term counts (reports written before per-document bits were kept)."""
    if len(raw) != len(curated) or len(raw) < 2:
        raise ValueError("paired seeds: the same two or more seeds in both arms")
    pairs = [r - c for r, c in zip(raw, curated, strict=True)]
    n = len(pairs)
    difference = statistics.fmean(pairs)
    a = statistics.variance(pairs) / n
    b = document_se(diff_bits, doc_bytes, difference) ** 2 if diff_bits and doc_bytes else 0.0
    m = len(diff_bits) if diff_bits else 0
    se = math.sqrt(a + b)
    if se == 0:
        df = math.inf
    else:
        parts = a * a / (n - 1) + (b * b / (m - 1) if m > 1 else 0.0)
        df = (a + b) ** 2 / parts if parts > 0 else math.inf
    half = _t(1 - (1 - CONFIDENCE) / 2, df) * se
    low, high = difference - half, difference + half
    call = HELPS if low > 0 else HURTS if high < 0 else NONE
    detectable = (_t(1 - (1 - CONFIDENCE) / 2, df) + _t(POWER, df)) * se
    return PairedDifference(difference, (low, high), detectable, call, math.sqrt(a), math.sqrt(b), df, n, m)


def in_words(name: str, result: PairedDifference | dict[str, Any]) -> str:
    """The Markdown sentence of one reference's result."""
    v = result.to_dict() if isinstance(result, PairedDifference) else result
    low, high = v["difference_ci95"]
    interval = f"raw − curated {v['difference']:+.4f} bpb, 95 % interval [{low:+.4f}, {high:+.4f}]"
    if v["call"] == HELPS:
        return f"- **Curation helps on {name}**: {interval}."
    if v["call"] == HURTS:
        return f"- **Curation does not help on {name}: curation hurts**: {interval}."
    return (
        f"- **Curation does not help on {name}** detectably: no detectable difference — this run could detect "
        f"≥ {v['min_detectable']:.4f} bpb ({interval})."
    )
