"""run_dedup over a curation run: exact + near, survivor rule, provenance, accounting, bad input, resume."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.dedup import DedupConfig, dedup_report_md, run_dedup
from pipeline.dedup.cluster import DedupStateError
from tests.helpers.dedup import Words, local_factory, read_drops, read_kept, write_curated

PRIORITY = {"web": 0, "finance": 10}


def _corpus() -> dict[str, list[tuple[str, str]]]:
    words = Words(1)
    base = [words.doc() for _ in range(40)]
    web = [(f"web-{i:02d}", text) for i, text in enumerate(base)]
    web += [(f"web-near-{i:02d}", words.edit(base[i], 0.03)) for i in range(10)]
    web += [(f"web-exact-{i:02d}", base[i].upper()) for i in range(10, 15)]
    header, footer = words.doc(60), words.doc(60)  # ~30 % of each page is shared boilerplate
    web += [(f"web-boiler-{i:02d}", f"{header}\n{words.doc(280)}\n{footer}") for i in range(10)]
    finance = [(f"fin-{i:02d}", base[i]) for i in range(20, 25)]
    finance.append(("fin-near-30", words.edit(base[30], 0.02)))
    return {"web": web, "finance": finance}


def _length_rule_ok(rows: list[dict], texts: dict[str, str], sources: dict[str, str]) -> None:
    """Every survivor is preferred by the documented rule: priority, then longer text, then smaller id."""
    for row in rows:
        dropped, kept = row["id"], row["duplicate_of"]
        key_kept = (PRIORITY[sources[kept]], len(texts[kept]), [-ord(c) for c in kept])
        key_dropped = (PRIORITY[sources[dropped]], len(texts[dropped]), [-ord(c) for c in dropped])
        assert key_kept > key_dropped, row


def test_exact_near_priority_provenance_and_accounting(tmp_path: Path) -> None:
    corpus = _corpus()
    write_curated(tmp_path, corpus)
    result = run_dedup(str(tmp_path), DedupConfig(), PRIORITY, local_factory)

    rows = read_drops(tmp_path)
    by_id = {row["id"]: row for row in rows}
    expected = {f"web-near-{i:02d}" for i in range(10)} | {f"web-exact-{i:02d}" for i in range(10, 15)}
    expected |= {f"web-{i:02d}" for i in range(20, 25)} | {"web-30"}
    # every planted copy gone (one of each pair), boilerplate-sharing pages all kept
    assert len(rows) == 21
    for i in range(10):  # near copy vs original: exactly one of the pair dropped, pointing at the other
        pair = {f"web-{i:02d}", f"web-near-{i:02d}"}
        (gone,) = pair & set(by_id)
        assert by_id[gone]["duplicate_of"] == (pair - {gone}).pop()
        assert by_id[gone]["rule"] == "near_duplicate" and 0.5 <= by_id[gone]["similarity"] < 1
    assert expected - {f"web-near-{i:02d}" for i in range(10)} <= set(by_id)
    for i in range(10, 15):
        row = by_id[f"web-exact-{i:02d}"]
        assert (row["rule"], row["duplicate_of"], row["similarity"]) == ("exact_duplicate", f"web-{i:02d}", 1.0)
    for i in range(20, 25):  # identical across sources: the finance copy (priority 10) survives
        row = by_id[f"web-{i:02d}"]
        assert (row["rule"], row["duplicate_of"], row["duplicate_source"]) == (
            "exact_duplicate",
            f"fin-{i:02d}",
            "finance",
        )
    assert by_id["web-30"]["duplicate_of"] == "fin-near-30" and by_id["web-30"]["rule"] == "near_duplicate"
    for row in rows:
        assert row["stage"] == "dedup" and row["source"] == "web" and row["cluster_size"] >= 2
        assert row["score"] == row["similarity"] and row["url"] == f"https://x/{row['id']}" and row["snippet"]
    texts = {doc_id: text for docs in corpus.values() for doc_id, text in docs}
    sources = {doc_id: name for name, docs in corpus.items() for doc_id, _ in docs}
    _length_rule_ok(rows, texts, sources)

    kept = read_kept(tmp_path)
    assert kept["finance"] == {doc_id for doc_id, _ in corpus["finance"]}
    assert kept["web"] == {doc_id for doc_id, _ in corpus["web"]} - set(by_id)
    assert not any(doc_id.startswith("web-boiler") for doc_id in by_id)
    survivor = next(tmp_path.glob("deduped/finance/*.jsonl.gz"))
    with gzip.open(survivor, "rt") as handle:
        metas = [json.loads(line)["metadata"] for line in handle]
    assert any(m.get("dedup", {}).get("cluster_size") == 2 for m in metas)

    assert result.accounting_ok, result.problems
    web = result.per_source["web"]
    assert web.input == len(corpus["web"]) == web.kept + sum(web.dropped.values())
    assert web.dropped == {"near_duplicate": 11, "exact_duplicate": 10}
    assert result.per_source["finance"].kept == len(corpus["finance"])
    json.dumps(result.to_dict())  # the report embeds it
    markdown = dedup_report_md(result)
    assert "| web | 65 | 44 | 10 | 11 |" in markdown and "Largest clusters" in markdown
    assert result.memory["cluster_bound_bytes"] > 0 and result.cluster_size_histogram


def test_empty_and_short_documents_never_collide(tmp_path: Path) -> None:
    docs = [(f"punct-{i}", "!!! ... ???") for i in range(10)]  # no word at all: kept, never compared
    docs += [(f"dash-{i}", "— " * (i + 1)) for i in range(5)]
    docs += [(f"word-{i}", f"word{i}") for i in range(20)]  # distinct one-word documents
    docs += [("hello-a", "hello"), ("hello-b", "Hello"), ("hello-c", "HELLO")]  # one word, three copies
    docs += [("four-a", "a b c d"), ("four-b", "a b C d"), ("four-long", "a b c d e f g h i j k")]
    write_curated(tmp_path, {"misc": docs}, files=1)
    result = run_dedup(str(tmp_path), DedupConfig(), {}, local_factory)

    rows = {row["id"]: row for row in read_drops(tmp_path)}
    assert set(rows) == {"hello-b", "hello-c", "four-b"}
    assert rows["hello-b"]["duplicate_of"] == "hello-a" and rows["four-b"]["duplicate_of"] == "four-a"
    counts = result.per_source["misc"]
    assert (counts.empty, counts.short) == (15, 25) and counts.kept == len(docs) - 3
    assert result.accounting_ok


def _snapshot(run_dir: Path) -> tuple:
    rows = sorted(read_drops(run_dir), key=lambda r: r["id"])
    result = json.loads((run_dir / "stages" / "dedup" / "result.json").read_text())
    for volatile in ("seconds", "memory", "output_dir", "run_name"):
        result.pop(volatile)
    return read_kept(run_dir), rows, result


KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from pipeline.dedup import DedupConfig, run_dedup
    from pipeline.dedup.filter import DedupFilterStep
    from tests.helpers.dedup import local_factory

    original = DedupFilterStep.run

    def killed(self, data, rank=0, world_size=1):
        for i, doc in enumerate(original(self, data, rank, world_size)):
            if rank == 3 and i == 4:
                os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no finally: half-written files stay
            yield doc

    DedupFilterStep.run = killed
    run_dedup(sys.argv[1], DedupConfig(), {"web": 0, "finance": 10}, local_factory)
    """
)


def test_killed_run_resumes_to_the_same_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.dedup.signatures import DedupSignatureStep

    reference, resumed = tmp_path / "reference", tmp_path / "resumed"
    for run_dir in (reference, resumed):
        write_curated(run_dir, _corpus())
    run_dedup(str(reference), DedupConfig(), PRIORITY, local_factory)

    # 1. an exception in rank 2 of the signature stage
    original = DedupSignatureStep.run

    def failing(self, data, rank=0, world_size=1):
        def limited():
            for i, doc in enumerate(data):
                if rank == 2 and i == 5:  # ranks read finance/00000, finance/00001, web/00000, web/00001
                    raise RuntimeError("rank died")
                yield doc

        yield from original(self, limited(), rank, world_size)

    monkeypatch.setattr(DedupSignatureStep, "run", failing)
    with pytest.raises(RuntimeError, match="rank died"):
        run_dedup(str(resumed), DedupConfig(), PRIORITY, local_factory)
    monkeypatch.undo()
    logs = resumed / "stages" / "dedup" / "logs"
    assert sorted(os.listdir(logs / "signatures" / "completions")) == ["00000", "00001"]

    # 2. SIGKILL in rank 3 of the filter stage, in a separate process
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    log = tmp_path / "killed.log"
    with open(log, "wb") as out:  # a file, not a pipe: the executor's manager process outlives the kill
        child = subprocess.Popen(
            [sys.executable, "-c", KILL_SCRIPT, str(resumed)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode = child.wait(timeout=300)
        finally:
            with contextlib.suppress(ProcessLookupError):  # the child's group: its orphaned multiprocess manager
                os.killpg(child.pid, signal.SIGKILL)
    assert returncode == -signal.SIGKILL, log.read_text()[-2000:]
    assert sorted(os.listdir(logs / "filter" / "completions")) == ["00000", "00001", "00002"]
    assert not (resumed / "stages" / "dedup" / "result.json").exists()

    # 3. rerun: finished ranks are skipped, the rest is redone, the outcome is the reference's
    result = run_dedup(str(resumed), DedupConfig(), PRIORITY, local_factory)
    assert result.accounting_ok
    assert _snapshot(resumed) == _snapshot(reference)


def test_changed_settings_or_input_stop_a_resume(tmp_path: Path) -> None:
    write_curated(tmp_path, _corpus())
    run_dedup(str(tmp_path), DedupConfig(), PRIORITY, local_factory)
    with pytest.raises(DedupStateError, match="other settings"):
        run_dedup(str(tmp_path), DedupConfig(threshold=0.7), PRIORITY, local_factory)
    (tmp_path / "curated" / "web" / "00001.jsonl.gz").write_bytes(gzip.compress(b'{"text": "new", "id": "n"}\n'))
    with pytest.raises(DedupStateError, match="input files changed.*00001"):
        run_dedup(str(tmp_path), DedupConfig(), PRIORITY, local_factory)
    result = run_dedup(str(tmp_path), DedupConfig(threshold=0.7), PRIORITY, local_factory, restart=True)
    assert result.per_source["web"].input == len(_corpus()["web"][0::2]) + 1 and result.accounting_ok


def test_dataset_with_unreadable_lines_and_a_fully_dropped_source(tmp_path: Path) -> None:
    from pipeline.dedup import dedup_dataset

    words = Words(2)
    text = words.doc()
    data = tmp_path / "data.jsonl"
    data.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "text": text}),
                "{not json",
                json.dumps({"id": "empty", "text": ""}),
                json.dumps({"id": "b", "text": text, "metadata": {"source": "mirror"}}),
                json.dumps({"id": "c", "text": words.doc()}),
            ]
        )
        + "\n"
    )
    result = dedup_dataset(str(data), str(tmp_path / "out"), DedupConfig(), executor_factory=local_factory)
    rows = {(row["stage"], row["rule"]): row for row in read_drops(tmp_path / "out")}
    assert set(rows) == {("read", "bad_json"), ("read", "missing_text"), ("dedup", "exact_duplicate")}
    assert rows[("read", "bad_json")]["id"].endswith("data.jsonl#1")
    assert rows[("dedup", "exact_duplicate")]["id"] == "b"  # same length: smaller id "a" survives
    assert result.per_source["data"].dropped == {"read:bad_json": 1, "read:missing_text": 1}
    assert result.per_source["mirror"].kept == 0 and (tmp_path / "out" / "deduped" / "mirror").is_dir()
    assert result.accounting_ok and result.documents == 5 and result.kept == 2


def test_parquet_and_jsonl_in_one_folder(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.dedup import dedup_dataset

    words = Words(3)
    shared, other = words.doc(), words.doc()
    folder = tmp_path / "data"
    (folder / "nested").mkdir(parents=True)
    pq.write_table(pa.table({"doc_id": ["p1", "p2"], "body": [shared, other]}), folder / "nested" / "part.parquet")
    (folder / "more.jsonl").write_text(json.dumps({"doc_id": "j1", "body": words.edit(shared, 0.02)}) + "\n")
    (folder / "notes.txt").write_text("not an input file")

    result = dedup_dataset(
        str(folder),
        str(tmp_path / "out"),
        DedupConfig(),
        source_name="mixed",
        executor_factory=local_factory,
        text_key="body",
        id_key="doc_id",
    )
    (row,) = read_drops(tmp_path / "out")
    assert {row["id"], row["duplicate_of"]} == {"p1", "j1"} and row["rule"] == "near_duplicate"
    assert result.per_source["mixed"].input == 3 and result.accounting_ok
    assert result.params["tasks"] == 2  # one rank per input file by default


def test_components_are_the_partition_scipy_finds():
    """``component_labels`` replaces ``scipy.sparse.csgraph.connected_components`` (not imported on the curate
    path): the same grouping of nodes on random graphs, chains and stars, isolated nodes included."""
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from pipeline.dedup.cluster import component_labels

    rng = np.random.default_rng(7)
    for trial in range(300):
        k = int(rng.integers(2, 200))
        if trial % 3 == 0:  # a chain in random order: the longest way for a label to travel
            order = rng.permutation(k)
            u, v = order[:-1], order[1:]
        elif trial % 3 == 1:  # a star and strays
            u, v = np.zeros(k // 2, np.int64), rng.integers(0, k, k // 2)
        else:
            m = int(rng.integers(1, k))
            u, v = rng.integers(0, k, m), rng.integers(0, k, m)
        ours = component_labels(k, u, v)
        _, theirs = connected_components(coo_matrix((np.ones(len(u)), (u, v)), shape=(k, k)), directed=False)
        pairs = set(zip(ours.tolist(), theirs.tolist(), strict=True))
        assert len(pairs) == len(set(ours.tolist())) == len(set(theirs.tolist()))
