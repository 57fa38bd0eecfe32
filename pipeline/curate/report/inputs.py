"""The input files of a curation run, as files (not documents): listed, with documents, empty, skipped by
extension or unopened; the ``### Input files`` table and the warnings about skipped and empty files."""

from __future__ import annotations

from pipeline.accounting import SourceAccount


def _ext(ext: str) -> str:
    return "(no extension)" if ext == "none" else f".{ext}"


#: how the report names a reason a listed file was not opened (``pipeline.read.listing``)
SKIP_REASONS = {"run_output": "inside a run folder", "broken_symlink": "broken symlink"}


def _reasons(reasons: dict[str, int]) -> str:
    """``fifo 1, inside a run folder 3``: the files skipped without being opened, by reason."""
    ordered = sorted(reasons.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{SKIP_REASONS.get(reason, reason.replace('_', ' '))} {n:,}" for reason, n in ordered)


def input_files_lines(accounts: list[SourceAccount]) -> list[str]:
    """The ``### Input files`` table: files listed, with documents, empty, skipped by extension."""
    lines: list[str] = []
    lines += [
        "",
        "### Input files",
        "",
        "Files, not documents: a skipped or empty file adds nothing to read; listed = with documents + skipped "
        "+ empty. Skipped unopened: not a regular file (FIFO, socket, device, broken symlink) or inside a run "
        "folder; symlinks to regular files and names that are not UTF-8 (shown escaped) are read.",
        "",
        "| source | listed | with documents | empty | skipped by extension | skipped unopened | symlinks "
        "| non-UTF-8 names |",
        "|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for a in accounts:
        files = a.input_files or {}
        if not files:  # a datasets split: the reader lists no files
            lines.append(f"| {a.source} | — | — | — | — | — | — | — |")
            continue
        skipped = files.get("skipped_by_extension") or {}
        skipped_txt = ", ".join(f"{_ext(e)} {n:,}" for e, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
        reasons_txt = _reasons(files.get("skipped_by_reason") or {})
        lines.append(
            f"| {a.source} | {files.get('listed', 0):,} | {files.get('with_documents', 0):,} |"
            f" {files.get('empty', 0):,} | {skipped_txt or '—'} | {reasons_txt or '—'} |"
            f" {files.get('symlinks_followed', 0):,} | {files.get('undecodable_names', 0):,} |"
        )
    return lines


def input_file_warnings(a: SourceAccount) -> list[str]:
    """The warnings of a source's input files: skipped by extension (per extension), skipped unopened (per
    reason), empty."""
    warnings: list[str] = []
    files = a.input_files or {}
    skipped = files.get("skipped_by_extension") or {}
    if skipped:
        listing = ", ".join(f"{_ext(ext)} {n:,}" for ext, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
        warnings.append(
            f"{a.source}: {sum(skipped.values()):,} input files skipped by extension ({listing}): not read, "
            "not documents (see docs/readers.md for what each kind reads)"
        )
    reasons = files.get("skipped_by_reason") or {}
    if reasons:
        warnings.append(
            f"{a.source}: {sum(reasons.values()):,} input files skipped without being opened "
            f"({_reasons(reasons)}): not read, not documents (see docs/readers.md)"
        )
    if files.get("empty"):
        warnings.append(f"{a.source}: {files['empty']:,} input files are empty (no record in them)")
    return warnings
