"""The nightly-crawl path: two nights over overlapping crawls against one persistent dedup index."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def read_rows(paths) -> list[dict]:
    rows = []
    for path in sorted(paths):
        with gzip.open(path, "rt") as handle:
            rows += [json.loads(line) for line in handle]
    return rows


def test_second_night_drops_what_the_first_kept_and_corpus_grows(tmp_path: Path, prefect_harness) -> None:
    from flows.curate import curate
    from sample import generate_sample

    sample = tmp_path / "sample"
    generate_sample(sample, seed=31, pages=60, warc_files=2, domain_docs=2)
    night1, night2 = tmp_path / "in1", tmp_path / "in2"
    night1.mkdir()
    night2.mkdir()
    first, second = sorted((sample / "crawl").glob("*.warc.gz"))
    (night1 / first.name).write_bytes(first.read_bytes())
    (night2 / first.name).write_bytes(first.read_bytes())  # a re-crawl of the same pages ...
    (night2 / second.name).write_bytes(second.read_bytes())  # ... plus new ones
    recipe = {
        "name": "nightly",
        "output_dir": str(tmp_path / "unused"),
        "sources": [{"name": "web", "kind": "warc", "path": "unused"}],
        "stages": {"language": {"keep": None, "min_score": 0.3}, "tokenize": {"vocab_size": 400, "tasks": 1}},
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
    }
    recipe_path = tmp_path / "nightly.yaml"
    recipe_path.write_text(yaml.safe_dump(recipe))
    index, root = tmp_path / "index", tmp_path / "nightly"

    one = curate(
        str(recipe_path), input=str(night1 / "*.warc.gz"), index=str(index), output_root=str(root), tokenize=True
    )
    two = curate(
        str(recipe_path), input=str(night2 / "*.warc.gz"), index=str(index), output_root=str(root), tokenize=True
    )

    assert Path(one["run_dir"]).parent == root and one["run_dir"] != two["run_dir"]
    kept_first = {row["id"] for row in read_rows(Path(one["run_dir"]).glob("deduped/*/*.jsonl.gz"))}
    assert kept_first
    dropped_again = {row["id"]: row for row in read_rows(Path(two["run_dir"]).glob("dropped/*/dedup/*.jsonl.gz"))}
    # every document the first night kept comes back in the re-crawl and is dropped, naming night one's copy
    assert kept_first <= set(dropped_again)
    assert all(dropped_again[i]["duplicate_of"] for i in kept_first)
    assert all(s["balanced"] for s in two["sources"])
    corpus = json.loads((root / "corpus.json").read_text())
    assert [entry["run_dir"] for entry in corpus] == [one["run_dir"], two["run_dir"]]
    assert all(Path(entry["shards"]).exists() for entry in corpus)


def test_three_nights_read_two_then_one_then_nothing_all_completed(tmp_path: Path, prefect_harness) -> None:
    """The nightly deployment's own parameters (prefect.yaml), pointed at a growing folder: files read 2, 1, 0,
    every night Completed, the third saying "nothing new", and the ledger naming each file once."""
    from flows.curate import curate
    from sample import generate_sample

    deployment = next(d for d in yaml.safe_load((REPO / "prefect.yaml").read_text())["deployments"])
    assert deployment["name"] == "nightly-crawl"
    sample = tmp_path / "sample"
    generate_sample(sample, seed=5, pages=30, warc_files=3, domain_docs=0)
    crawl = sorted((sample / "crawl").glob("*.warc.gz"))
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    recipe = {
        "name": "nightly",
        "output_dir": str(tmp_path / "unused"),
        "sources": [{"name": "web", "kind": "warc", "path": "unused"}],
        "stages": {"language": {"keep": None, "min_score": 0.3}, "tokenize": {"vocab_size": 400, "tasks": 1}},
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
    }
    (tmp_path / "nightly.yaml").write_text(yaml.safe_dump(recipe))
    parameters = {
        **deployment["parameters"],
        "recipe": str(tmp_path / "nightly.yaml"),
        "input": str(incoming / "*.warc.gz"),
        "index": str(tmp_path / "index"),
        "output_root": str(tmp_path / "nightly"),
    }

    def night():
        state = curate(**parameters, return_state=True)
        assert state.is_completed(), state.message
        return state.result()

    for path in crawl[:2]:
        (incoming / path.name).write_bytes(path.read_bytes())
    one = night()
    (incoming / crawl[2].name).write_bytes(crawl[2].read_bytes())
    two = night()
    three = night()

    assert [n["ingest"]["read"] for n in (one, two, three)] == [2, 1, 0]
    assert three["nothing_new"] and three["run_dir"] is None and three["ingest"]["already_ingested"] == 3
    assert two["ingest"]["files"] == [crawl[2].name] and one["run_dir"] != two["run_dir"]
    ledger = json.loads(Path(one["ingest"]["ledger"]).read_text())
    assert sorted(ledger["files"]) == sorted(p.name for p in crawl)  # each file once, as a key
    assert {e["run"] for e in ledger["files"].values()} == {one["run_dir"], two["run_dir"]}
    assert all(e["status"] == "done" and len(e["sha256"]) == 64 for e in ledger["files"].values())
    corpus = json.loads((tmp_path / "nightly" / "corpus.json").read_text())
    assert [entry["run_dir"] for entry in corpus] == [one["run_dir"], two["run_dir"]]


def test_a_night_stopped_midway_is_finished_by_the_next_run_without_recurating(
    tmp_path: Path, prefect_harness, monkeypatch
) -> None:
    """Night one stops after curation (its dedup step fails): its files stay ``started``. The next run finishes
    that same run directory with exactly those files (the finished curation ranks are not run again) and leaves
    the file that arrived meanwhile to the run after."""
    import flows.curate as curate_flow
    from sample import generate_sample

    sample = tmp_path / "sample"
    generate_sample(sample, seed=7, pages=20, warc_files=3, domain_docs=0)
    crawl = sorted((sample / "crawl").glob("*.warc.gz"))
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    for path in crawl[:2]:
        (incoming / path.name).write_bytes(path.read_bytes())
    recipe = {
        "name": "nightly",
        "output_dir": str(tmp_path / "unused"),
        "sources": [{"name": "web", "kind": "warc", "path": "unused"}],
        "stages": {"language": {"keep": None, "min_score": 0.3}},
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
    }
    (tmp_path / "nightly.yaml").write_text(yaml.safe_dump(recipe))
    parameters = {
        "recipe": str(tmp_path / "nightly.yaml"),
        "input": str(incoming / "*.warc.gz"),
        "index": str(tmp_path / "index"),
        "output_root": str(tmp_path / "nightly"),
    }

    def stopped(*args, **kwargs):
        raise RuntimeError("the night was stopped here")

    with monkeypatch.context() as patch:
        patch.setattr(curate_flow, "dedup_task", stopped)
        first = curate_flow.curate(**parameters, return_state=True)
    assert first.is_failed()
    ledger_path = next((tmp_path / "nightly" / "ingest").glob("*.json"))
    ledger = json.loads(ledger_path.read_text())["files"]
    assert {e["status"] for e in ledger.values()} == {"started"} and len(ledger) == 2
    (run,) = {e["run"] for e in ledger.values()}
    completion = Path(run) / "stages" / "curate" / "incoming" / "logs" / "completions" / "00000"
    finished_at = completion.stat().st_mtime_ns
    (incoming / crawl[2].name).write_bytes(crawl[2].read_bytes())

    second = curate_flow.curate(**parameters)
    assert second["run_dir"] == run and second["ingest"]["resumed"]
    assert second["ingest"]["files"] == [p.name for p in crawl[:2]] and second["ingest"]["pending"] == [crawl[2].name]
    assert completion.stat().st_mtime_ns == finished_at  # curation's finished rank was not run again
    assert all(s["balanced"] for s in second["sources"])
    third = curate_flow.curate(**parameters)
    assert third["ingest"]["files"] == [crawl[2].name] and third["run_dir"] != run
    ledger = json.loads(ledger_path.read_text())["files"]
    assert sorted(ledger) == sorted(p.name for p in crawl) and {e["status"] for e in ledger.values()} == {"done"}
