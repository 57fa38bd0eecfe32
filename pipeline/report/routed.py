"""The routed-token report (``## Routed``): what each crawl's classifier routed into a domain source, counted at
curation and again, as documents and tokens, in the shard manifest."""

from __future__ import annotations

from typing import Any

from pipeline.shards.format import ShardManifest
from pipeline.wording import pct


def routed_section(
    accounts: list[dict[str, Any]], manifest: ShardManifest | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The "Routed" section (classify ``mode: route``): per crawl, the documents and tokens it contributed to each
    domain source; ``None`` when nothing is routed in this run.

    ``accounts``: the curation section's ``sources`` (``SourceAccount.to_json``); documents are those routed
    (counted at curation, before dedup). ``manifest``: the shards manifest, whose
    ``sources.<target>.routed_from.<origin>`` gives the documents and tokens that reached tokenize (after dedup).
    """
    rows = routed_rows(accounts, manifest)
    if not rows:
        return None
    with_tokens = manifest is not None
    lines = [
        "## Routed" + (" (tokens)" if with_tokens else ""),
        "",
        "Documents a crawl's classifier routed into a domain source (classify `mode: route`): they passed the crawl's"
        " own stages and count as the target's documents from then on (its dedup priority, mix weight and held-out"
        " split); the crawl's account is read = kept + routed + dropped.",
        "",
    ]
    if with_tokens:
        lines += _token_lines(rows)
    else:
        lines += ["| crawl | into | routed | % of read |", "|---|---|---:|---:|"]
        lines += [f"| {r['origin']} | {r['target']} | {r['routed']:,} | {pct(r['routed'], r['read'])} |" for r in rows]
    return "\n".join(lines) + "\n", {"rows": rows}


def routed_rows(accounts: list[dict[str, Any]], manifest: ShardManifest | None) -> list[dict[str, Any]]:
    """One row per (crawl, target) pair that routed documents: counted at curation, and with the documents and
    tokens that reached the shards when ``manifest`` is given."""
    tokenized_by = {name: entry.routed_from for name, entry in manifest.sources.items()} if manifest else {}
    rows = []
    by_name = {a["source"]: a for a in accounts}
    for origin in accounts:
        for target, routed in sorted((origin.get("routed") or {}).items()):
            entry: dict[str, Any] = {
                "origin": origin["source"],
                "target": target,
                "read": origin["read"],
                "routed": routed,
                "share_of_read": round(routed / origin["read"], 6) if origin["read"] else 0.0,
                "target_kept": (by_name.get(target) or {}).get("kept_final"),
            }
            tokenized = tokenized_by.get(target, {}).get(origin["source"])
            if tokenized is not None:
                entry["tokenized_documents"] = tokenized.documents
                entry["tokens"] = tokenized.tokens
            rows.append(entry)
    return rows


def _token_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The table with tokens, then a note per pair whose routed documents did not all reach the shards (and
    ``not_tokenized`` set on that row, for report.json)."""
    lines = [
        "| crawl | into | routed | % of read | documents tokenized | tokens (train + held out) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['origin']} | {r['target']} | {r['routed']:,} | {pct(r['routed'], r['read'])} |"
        f" {r.get('tokenized_documents', 0):,} | {r.get('tokens', 0):,} |"
        for r in rows
    ]
    for r in rows:  # routed at curation, counted again at tokenize: what fell between is dedup's
        lost = r["routed"] - r.get("tokenized_documents", 0)
        if lost > 0:
            r["not_tokenized"] = lost
            lines += [
                "",
                f"{lost:,} of the {r['routed']:,} documents {r['origin']} routed into {r['target']} did not reach "
                "the shards: dedup dropped them as duplicates (a domain source's own copy wins by its priority), "
                "or tokenize skipped them (see the Deduplication and Shards sections).",
            ]
    return lines
