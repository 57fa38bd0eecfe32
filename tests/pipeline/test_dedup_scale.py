"""Dedup at any scale: the same decisions for any rank count, unit size and chunk size; the clustering step reads
only pairs; the index is read once per run and updated in chunks (issue 20 item 4)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pipeline.dedup import DedupConfig, buckets, index, run_dedup, store
from tests.helpers.dedup import Words, local_factory, read_drops, read_kept, write_curated

PRIORITY = {"web": 0, "finance": 10}


def _corpus() -> dict[str, list[tuple[str, str]]]:
    """Near copies (some chained), exact copies across sources, boilerplate pages, equal lengths (id ties)."""
    words = Words(7)
    base = [words.doc() for _ in range(60)]
    web = [(f"web-{i:02d}", text) for i, text in enumerate(base)]
    web += [(f"web-near-{i:02d}", words.edit(base[i], 0.03)) for i in range(12)]
    web += [(f"web-near2-{i:02d}", words.edit(base[i], 0.05)) for i in range(6)]  # clusters of three
    web += [(f"web-exact-{i:02d}", base[i].upper()) for i in range(12, 20)]
    web += [(f"web-same-{i:02d}", base[i]) for i in range(12, 16)]  # same text and length: the id decides
    header, footer = words.doc(60), words.doc(60)
    web += [(f"web-boiler-{i:02d}", f"{header}\n{words.doc(280)}\n{footer}") for i in range(10)]
    finance = [(f"fin-{i:02d}", base[i]) for i in range(30, 36)]
    finance.append(("fin-near-40", words.edit(base[40], 0.02)))
    return {"web": web, "finance": finance}


def _decisions(run_dir: Path) -> tuple:
    rows = sorted(
        (r["id"], r["rule"], r["duplicate_of"], r["similarity"], r["cluster_size"]) for r in read_drops(run_dir)
    )
    summary = json.loads((run_dir / "stages" / "dedup" / "clusters" / "summary.json").read_text())
    figures = {k: summary[k] for k in ("per_source", "pairs", "clusters", "cluster_size_histogram")}
    return read_kept(run_dir), rows, figures


def test_same_decisions_for_1_2_4_ranks_any_unit_and_chunk_size(tmp_path: Path, monkeypatch) -> None:
    corpus = _corpus()
    seen = []
    for tasks in (1, 2, 4):
        run_dir = tmp_path / f"ranks-{tasks}"
        write_curated(run_dir, corpus, files=4)
        result = run_dedup(str(run_dir), DedupConfig(tasks=tasks), PRIORITY, local_factory)
        assert result.accounting_ok and result.params["tasks"] == tasks
        peaks = result.memory["peak_rss_bytes"]  # every step's ranks record their peak RSS; the report prints it
        assert set(peaks) == {"signatures", "exact", "buckets", "cluster", "filter"} and min(peaks.values()) > 0
        assert len(list((run_dir / "stages" / "dedup" / "memory").glob("signatures-*.json"))) == tasks
        seen.append(_decisions(run_dir))
    # many exact and bucket units (key ranges) and many sorted runs per rank: still the same decisions
    monkeypatch.setattr(buckets, "UNIT_RECORDS", 16)
    monkeypatch.setattr(store, "CHUNK", 7)
    run_dir = tmp_path / "small-units"
    write_curated(run_dir, corpus, files=4)
    run_dedup(str(run_dir), DedupConfig(tasks=2), PRIORITY, local_factory)
    units = len(list((run_dir / "stages" / "dedup" / "buckets").glob("*.npy")))
    assert units > DedupConfig().bands and len(list((run_dir / "stages" / "dedup" / "exact").glob("*.npz"))) > 1
    seen.append(_decisions(run_dir))

    kept, rows, figures = seen[0]
    assert all(other == seen[0] for other in seen[1:])
    by_id = {row[0]: row for row in rows}
    assert by_id["web-same-12"][1:3] == ("exact_duplicate", "web-12")  # equal length: the smaller id survives
    assert by_id["web-30"][1:3] == ("exact_duplicate", "fin-30")  # the finance copy (priority 10) survives
    assert Counter(r[1] for r in rows)["near_duplicate"] >= 18 and figures["pairs"]["verified"] >= 18
    assert not any(doc_id.startswith("web-boiler") for doc_id in by_id)


def test_clustering_reads_only_the_documents_in_pairs(tmp_path: Path, monkeypatch) -> None:
    words = Words(3)
    docs = [(f"d-{i:03d}", words.doc(80)) for i in range(300)]
    docs += [(f"copy-{i}", docs[i][1].upper()) for i in range(3)] + [("near-9", words.edit(docs[9][1], 0.03))]
    write_curated(tmp_path, {"web": docs}, files=2)
    run_dedup(str(tmp_path), DedupConfig(), {}, local_factory)
    stage = tmp_path / "stages" / "dedup"
    pairs = np.concatenate([np.load(p) for p in sorted((stage / "buckets").glob("*.npy"))])
    exact = buckets.load_exact(str(stage / "exact"), len(list((stage / "exact").glob("*.npz"))))
    in_pairs = set(pairs.ravel().tolist()) | set(exact["member"].tolist()) | set(exact["head"].tolist())
    assert len(in_pairs) < 20  # the input of clustering: pairs, not a row per document

    reads: list[tuple[str, int]] = []
    real_rows, real_span = store.read_rows, store.read_span

    def counting_rows(path, dtype, rows, header=0, width=1):
        reads.extend((path, int(r)) for r in np.asarray(rows).tolist())
        return real_rows(path, dtype, rows, header, width)

    def counting_span(path, offset, nbytes, fd=None):
        assert not path.endswith((".bands", ".exact")), f"clustering read the sorted runs {path}"
        return real_span(path, offset, nbytes, fd)

    monkeypatch.setattr(store, "read_rows", counting_rows)
    monkeypatch.setattr(store, "read_span", counting_span)
    from pipeline.dedup.cluster import run_clustering

    shutil.rmtree(stage / "clusters")
    summary = run_clustering(str(stage), str(stage / "clusters"), 2, DedupConfig(), {})
    offsets = np.cumsum(
        [0] + [json.loads((stage / "signatures" / f"{r:05d}.json").read_text())["count"] for r in (0, 1)]
    )
    rows_read = {offsets[int(Path(p).name[:5])] + r for p, r in reads if not p.endswith(".idoff")}
    assert rows_read <= in_pairs and len(rows_read) < 20, rows_read
    assert summary["documents"] == len(docs) and summary["pairs"]["verified"] >= 1


def _index_run(tmp_path: Path, name: str, docs) -> None:
    write_curated(tmp_path / name, {"web": docs})
    run_dedup(str(tmp_path / name), DedupConfig(index={"path": str(tmp_path / "index")}), {}, local_factory)


def test_a_run_reads_the_index_once_and_adds_to_it_in_chunks(tmp_path: Path, monkeypatch) -> None:
    words = Words(11)
    first = [(f"w1-{i:03d}", words.doc()) for i in range(60)]
    second = [(f"w2-copy-{i}", first[i][1].upper()) for i in range(5)]
    second += [(f"w2-near-{i}", words.edit(first[10 + i][1], 0.03)) for i in range(5)]
    second += [(f"w2-new-{i:02d}", words.doc()) for i in range(40)]
    monkeypatch.setattr(store, "CHUNK", 16)  # the index update must stream: at most 16 kept documents at once
    real_add = index.DiskIndex.add
    chunk_sizes: list[int] = []

    def recording_add(self, count, chunks, bands, rows):
        def recorded():
            for chunk in chunks:
                chunk_sizes.append(len(chunk[0]))
                yield chunk

        return real_add(self, count, recorded(), bands, rows)

    monkeypatch.setattr(index.DiskIndex, "add", recording_add)
    _index_run(tmp_path, "week1", first)
    assert max(chunk_sizes) <= 16 and sum(chunk_sizes) == 60 and len(chunk_sizes) >= 4

    read_bytes: Counter = Counter()
    digests: Counter = Counter()
    real_span, real_digest = store.read_span, index._file_digest

    def counting_span(path, offset, nbytes, fd=None):
        if "/index/segments/" in path and nbytes not in (store.INDEX_BAND.itemsize, store.INDEX_EXACT.itemsize):
            read_bytes[Path(path).name] += nbytes  # slices (a binary search probes single records)
        return real_span(path, offset, nbytes, fd)

    def counting_digest(path):
        digests[Path(path).name] += 1
        return real_digest(path)

    monkeypatch.setattr(store, "read_span", counting_span)
    monkeypatch.setattr(store, "_SPAN", 0)  # read exactly the rows asked for (no spans over neighbours)
    monkeypatch.setattr(index, "_file_digest", counting_digest)
    chunk_sizes.clear()
    _index_run(tmp_path, "week2", second)

    segments = tmp_path / "index" / "segments"
    for name in ("week1.bands.bin", "week1.exact.bin"):  # each sorted run file read once, in slices
        assert read_bytes[name] == (segments / name).stat().st_size, (name, read_bytes)
    sig_size = (segments / "week1.sig.npy").stat().st_size
    assert read_bytes["week1.sig.npy"] <= 12 * 512  # the signatures of candidates only (5 near pairs, 2 reads)
    assert read_bytes["week1.sig.npy"] < sig_size / 4
    assert digests["week1.sig.npy"] == 1 and digests["week1.meta.jsonl.gz"] == 1  # checked once, when planning
    drops = {row["id"]: row for row in read_drops(tmp_path / "week2")}
    assert len(drops) == 10 and all(row["matched_run"] == "week1" for row in drops.values())
    assert max(chunk_sizes) <= 16 and sum(chunk_sizes) == 40


def test_an_index_without_sorted_runs_is_sorted_once_into_the_run(tmp_path: Path) -> None:
    """A segment written before the sorted runs existed (or banded otherwise) still matches the same."""
    words = Words(13)
    first = [(f"a-{i:02d}", words.doc()) for i in range(20)]
    second = [(f"b-copy-{i}", first[i][1].upper()) for i in range(3)]
    second += [(f"b-near-{i}", words.edit(first[5 + i][1], 0.03)) for i in range(3)]
    _index_run(tmp_path, "old", first)
    manifest_path = tmp_path / "index" / "index.json"
    manifest = json.loads(manifest_path.read_text())
    for segment in manifest["segments"]:  # what an index of the previous layout holds
        for role in ("bands", "exact_sorted"):
            (tmp_path / "index" / "segments" / segment["files"].pop(role)["name"]).unlink()
        segment.pop("banding"), segment.pop("runs")
    manifest_path.write_text(json.dumps(manifest))
    _index_run(tmp_path, "new", second)
    drops = {row["id"]: row for row in read_drops(tmp_path / "new")}
    assert {r["duplicate_of"] for r in drops.values()} == {"a-00", "a-01", "a-02", "a-05", "a-06", "a-07"}
    assert list((tmp_path / "new" / "stages" / "dedup" / "index").glob("*.bands.bin"))


def test_more_ranks_than_files(tmp_path: Path) -> None:
    write_curated(tmp_path, {"web": [("x", "one two three four five six"), ("y", "ONE two three four five six")]}, 1)
    result = run_dedup(str(tmp_path), DedupConfig(tasks=3), {}, local_factory)
    assert result.accounting_ok and [r["id"] for r in read_drops(tmp_path)] == ["y"]


def test_filter_streams_its_decisions_and_names_a_changed_input(tmp_path: Path) -> None:
    """The filter reads its rank's decisions one line at a time beside the documents (sorted by position)."""
    import gzip

    from datatrove.data import Document

    from pipeline.dedup.filter import DedupFilterStep
    from pipeline.dedup.store import DedupStateError

    decisions = tmp_path / "decisions"
    decisions.mkdir()
    rows = [
        {"position": 1, "id": "b", "action": "drop", "rule": "exact_duplicate", "duplicate_of": "a"}
        | {"duplicate_source": "web", "similarity": 1.0, "cluster_size": 2},
        {"position": 5, "id": "f", "action": "keep", "cluster_size": 2, "duplicates_dropped": 1},
    ]
    with gzip.open(decisions / "00000.jsonl.gz", "wt") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)

    def run(ids: list[str]) -> list[str]:
        step = DedupFilterStep(str(decisions), str(tmp_path / "dropped"), str(tmp_path / "counts"))
        docs = [Document(text=f"text {i}", id=i, metadata={"source": "web"}) for i in ids]
        return [doc.id for doc in step.run(iter(docs), rank=0, world_size=1)]

    kept = run(["a", "b", "c", "d", "e", "f", "g"])
    assert kept == ["a", "c", "d", "e", "f", "g"]
    with pytest.raises(DedupStateError, match="decisions go up to 5"):
        run(["a", "b", "c"])  # fewer documents than were signed
    with pytest.raises(DedupStateError, match="document 1 is 'x' but was signed as 'b'"):
        run(["a", "x", "c"])
