"""What a curation run says loudly at its end (report.md's ``### Warnings``, the flow's log, ``tokenmill curate``)."""

from __future__ import annotations

from pipeline.accounting import SourceAccount
from pipeline.curate.report.funnel import stages_in
from pipeline.curate.report.inputs import input_file_warnings
from pipeline.wording import index_hint, missing_text_warning, pct


def curation_warnings(
    accounts: list[SourceAccount],
    warn_drop_share: float = 0.5,
    text_keys: dict[str, str] | None = None,
    index: str | None = None,
) -> list[str]:
    """What a run should say loudly at its end: a rule that drops more than ``warn_drop_share`` of a source
    (``missing_text`` for every document also names the fields seen and the key to set), a source that kept
    nothing, input files skipped by extension (per extension) and empty input files."""
    warnings: list[str] = []
    for a in accounts:
        if a.read and a.kept_final == 0:
            duplicates = sum(a.dropped.get("dedup", {}).values())
            why = f" ({duplicates:,} as duplicates){index_hint(index)}" if duplicates else ""
            warnings.append(f"{a.source}: nothing kept: all {a.read:,} documents read were dropped{why}")
        warnings += _rule_warnings(a, warn_drop_share, (text_keys or {}).get(a.source, "text"))
        warnings += input_file_warnings(a)
    return warnings


def _rule_warnings(a: SourceAccount, warn_drop_share: float, key: str) -> list[str]:
    """A source's rules that dropped more than ``warn_drop_share`` of what it read, biggest first per stage."""
    warnings: list[str] = []
    for stage in stages_in(a.dropped):
        for rule, n in sorted(a.dropped[stage].items(), key=lambda kv: -kv[1]):
            if not a.read or n / a.read <= warn_drop_share:
                continue
            if rule == "missing_text":
                how = (
                    "set options.text_key on the source to the field holding the text "
                    "(curate --input: --text-key FIELD)"
                )
                warnings.append(missing_text_warning(a.source, n, a.read, key, list(a.missing_text_fields), how))
                continue
            warnings.append(
                f"{a.source}: rule {stage}/{rule} dropped {n:,} of {a.read:,} documents ({pct(n, a.read)}), "
                f"more than report.warn_drop_share {warn_drop_share:g}"
            )
    return warnings
