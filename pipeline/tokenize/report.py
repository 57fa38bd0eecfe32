"""The tokenize stage's section of the run report (``## Token shards``): tokens and documents per source and split
from the shard manifest, the table the ``token-mix`` artifact, ``tokenmill tokenize`` and ``shards inspect`` show."""

from __future__ import annotations

from typing import Any

from pipeline.markdown import markdown_table
from pipeline.shards.format import ShardManifest
from pipeline.wording import number

#: the per-source table of a shard manifest: report.md's ``shards`` section, the ``token-mix`` artifact (the
#: ``pipeline`` and the ``tokenize`` flows) and ``tokenmill tokenize`` / ``shards inspect``
SHARD_COLUMNS = (
    "source",
    "train tokens (unique)",
    "train tokens (mixed)",
    "repeats",
    "share requested → achieved",
    "held-out tokens",
    "documents train / held-out / mixed",
    "bytes/token",
)
SHARD_ALIGN = "|---|---:|---:|---:|---:|---:|---:|---:|"


def shard_rows(manifest: ShardManifest) -> list[list[str]]:
    """The ``SHARD_COLUMNS`` cells of each source of a shard manifest (``manifest.json``); absent figures as ``—``."""
    out = []
    for name, entry in manifest.sources.items():  # an entry that is not an object shows as a row of dashes
        tokens, docs = entry.tokens, entry.documents
        out.append(
            [
                name,
                number(tokens.train),
                number(tokens.mixed),
                number(entry.repeats, 2),
                f"{_share(entry.requested_share)} → {_share(entry.achieved_share)}",
                number(tokens.heldout),
                f"{number(docs.train)} / {number(docs.heldout)} / {number(docs.mixed)}",
                number(entry.bytes_per_token, 2),
            ]
        )
    return out


def shards_markdown(manifest: ShardManifest) -> str:
    """Tokens per source and split as a table, the mix's repeats explained, the tokenizer's warnings."""
    lines = ["## Token shards", "", f"dtype {manifest.dtype}, vocab {manifest.vocab_size:,}", ""]
    rows = shard_rows(manifest)
    if rows:
        lines += markdown_table(SHARD_COLUMNS, SHARD_ALIGN, rows)
        totals = manifest.totals
        if totals:
            lines.append(
                f"| **total** | | **{number(totals.train_tokens)}** | | |"
                f" **{number(totals.heldout_tokens)}** | {number(totals.train_documents)} (mixed) /"
                f" {number(totals.heldout_documents)} | |"
            )
        lines += [
            "",
            "Unique train tokens are the source's own documents in the train split; mixed tokens are what the "
            "train split holds after the mix. repeats = mixed / unique: above 1 the source is upsampled (its "
            "documents are written more than once — upsampled repeats are extra copies of the same documents, "
            "not new text), below 1 downsampled. Held-out documents are never mixed or repeated.",
            "",
        ]
    for warning in manifest.warnings:
        lines.append(f"- ⚠ {warning}")
    return "\n".join(lines) + "\n"


def _share(value: Any) -> str:
    return f"{100 * value:.1f} %" if isinstance(value, (int, float)) else "—"
