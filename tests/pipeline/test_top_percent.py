"""Classify mode ``top_percent`` (the whole-run pass, ``pipeline.classify.top_percent``), the per-run eval index
of ``decontaminate`` and the report sections / stage order of both. Real text: the Language Reference topics
pydoc ships (positives) vs stdlib source code (negatives), as in tests/pipeline/test_classify_stage.py."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.classify.top_percent import keep_count, run_top_percent
from pipeline.config import load_recipe
from pipeline.layout import RunLayout

REPO = Path(__file__).resolve().parents[2]


def read_docs(folder: Path) -> list[dict]:
    docs = []
    for file in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(file, "rt") as handle:
            docs += [json.loads(line) for line in handle if line.strip()]
    return docs


def write_recipe(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_keep_count_rounds_half_up():
    assert [keep_count(n, 10) for n in (0, 4, 5, 14, 15, 25, 100)] == [0, 0, 1, 1, 2, 3, 10]
    assert keep_count(7, 100) == 7 and keep_count(3, 50) == 2


def test_curate_run_keeps_exactly_the_top_percent_over_sources_and_ranks(model, tmp_path):
    from pipeline.run import curate_run
    from pipeline.tokenize.inputs import discover_inputs

    path, prose, code = model
    for name, texts in (("prose", prose[:10]), ("code", code[:10])):
        folder = tmp_path / name
        folder.mkdir()
        for i, text in enumerate(texts):
            (folder / f"{name}{i}.txt").write_text(text, encoding="utf-8")
    data = {
        "name": "tp",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": n, "kind": "folder", "path": str(tmp_path / n)} for n in ("prose", "code")],
        "executor": {"kind": "local", "tasks": 2, "workers": 1},
        "stages": {
            "language": None,
            "quality": None,
            "pii": None,
            "classify": [{"name": "ref", "model": str(path), "mode": "top_percent", "top_percent": 25}],
        },
    }
    recipe = load_recipe(write_recipe(tmp_path, data))
    layout, summary, _ = curate_run(recipe)
    # curation kept all 20 (scored), the pass kept round(20 * 25 %) = 5 over both sources
    assert [s["kept_curated"] for s in summary["sources"]] == [10, 10]
    kept = read_docs(layout.top_percent("prose")) + read_docs(layout.top_percent("code"))
    assert len(kept) == 5 and sum(s["kept_final"] for s in summary["sources"]) == 5
    assert all(s["balanced"] for s in summary["sources"])
    assert all(d["id"].startswith("prose") for d in kept)  # the model ranks reference prose above code
    rows = [r for s in ("prose", "code") for r in read_docs_rows(layout.dropped(s) / "top_percent")]
    assert len(rows) == 15 and {r["rule"] for r in rows} == {"ref_below_top_percent"}
    assert {r["stage"] for r in rows} == {"classify"}
    cutoff = summary["classify"]["classifiers"]["ref"]["top_percent"]["cutoff"]
    assert min(d["metadata"]["classify"]["ref"] for d in kept) == cutoff
    assert all(r["score"] <= cutoff and r["cutoff"] == cutoff for r in rows)
    report = layout.report_md.read_text()
    assert "## Classify" in report and "ref_below_top_percent" in report
    assert json.loads(layout.report_json.read_text())["classify"]["classifiers"]["ref"]["mode"] == "top_percent"
    assert discover_inputs(layout.root).origin == "top_percent"  # tokenize reads what the pass kept

    # a rerun resumes (nothing changes); a recipe without top_percent removes the pass's outputs
    before = {p: p.read_bytes() for p in layout.top_percent().rglob("*.jsonl.gz")}
    curate_run(recipe)
    assert {p: p.read_bytes() for p in layout.top_percent().rglob("*.jsonl.gz")} == before
    data["stages"]["classify"][0]["mode"] = "annotate"
    _, summary, _ = curate_run(load_recipe(write_recipe(tmp_path, data)))
    assert not layout.top_percent().exists() and sum(s["kept_final"] for s in summary["sources"]) == 20


def read_docs_rows(folder: Path) -> list[dict]:
    return read_docs(folder)


def synthetic_run(tmp_path: Path, scores: list[list[float]], share: float) -> tuple[object, RunLayout]:
    """A run directory whose curated/ holds documents with the given scores (one file per inner list)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    data = {
        "name": "syn",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": "web", "kind": "folder", "path": str(tmp_path)}],
        "stages": {"classify": [{"name": "q", "model": "unused.bin", "mode": "top_percent", "top_percent": share}]},
    }
    recipe = load_recipe(write_recipe(tmp_path, data))
    layout = RunLayout.at(recipe.output_dir)
    folder = layout.curated("web")
    folder.mkdir(parents=True)
    n = 0
    for rank, file_scores in enumerate(scores):
        with gzip.open(folder / f"{rank:05d}.jsonl.gz", "wt") as handle:
            for score in file_scores:
                doc = {"text": f"document {n}", "id": f"d{n}", "metadata": {"source": "web", "classify": {"q": score}}}
                handle.write(json.dumps(doc) + "\n")
                n += 1
    return recipe, layout


def test_ties_are_broken_deterministically_and_exactly_k_kept(tmp_path):
    one, layout_one = synthetic_run(tmp_path / "one", [[0.5] * 10 + [0.9, 0.1]], 30)
    two, layout_two = synthetic_run(tmp_path / "two", [[0.5] * 5, [0.5] * 5 + [0.9, 0.1]], 30)
    result = run_top_percent(one, layout_one)
    run_top_percent(two, layout_two)
    kept_one = {d["id"] for d in read_docs(layout_one.top_percent("web"))}
    kept_two = {d["id"] for d in read_docs(layout_two.top_percent("web"))}
    assert len(kept_one) == keep_count(12, 30) == 4  # 3.6 rounds to 4: the 0.9 and three of the ten 0.5s
    assert "d10" in kept_one and "d11" not in kept_one
    assert kept_one == kept_two  # the same documents whatever the files (ranks) they sit in
    assert result is not None and result.classifiers["q"].cutoff == 0.5 and result.classifiers["q"].dropped == 8


CRASH = """
import os, signal, sys
import pipeline.classify.top_percent as tp
from pipeline.config import load_recipe
from pipeline.layout import RunLayout

real, calls = tp.write_fingerprint, []
def dying(path, *args, **kwargs):
    if "done" in str(path):
        calls.append(path)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGKILL)  # after one file is finished, mid-way through the pass
    return real(path, *args, **kwargs)
tp.write_fingerprint = dying
recipe = load_recipe(sys.argv[1])
tp.run_top_percent(recipe, RunLayout.at(recipe.output_dir))
"""


def test_resume_after_sigkill_gives_identical_outputs(tmp_path):
    scores = [[(i * 37 % 101) / 101 for i in range(start, start + 30)] for start in (0, 30, 60)]
    recipe, layout = synthetic_run(tmp_path / "killed", scores, 10)
    clean_recipe, clean_layout = synthetic_run(tmp_path / "clean", scores, 10)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", CRASH, str(tmp_path / "killed" / "syn.yaml")], env=env, cwd=REPO, check=False
    )
    assert done.returncode == -signal.SIGKILL
    assert len(list((layout.stage_dir("top_percent") / "done").rglob("*.json"))) == 1  # killed after one file
    run_top_percent(recipe, layout)  # resume
    run_top_percent(clean_recipe, clean_layout)

    def outputs(lay: RunLayout) -> dict[str, bytes]:
        files = list(lay.top_percent().rglob("*.jsonl.gz")) + list(lay.dropped().rglob("*.jsonl.gz"))
        return {str(p.relative_to(lay.root)): gzip.decompress(p.read_bytes()) for p in files}

    assert outputs(layout) == outputs(clean_layout)
    assert not list(layout.root.rglob("*.tmp"))
    kept = read_docs(layout.top_percent("web"))
    assert len(kept) == keep_count(90, 10) == 9
    dropped = read_docs(layout.dropped("web") / "top_percent")
    assert len(kept) + len(dropped) == 90  # read = kept + dropped


def test_stage_order_lists_the_model_stages_in_pipeline_order():
    from pipeline.curate.report.funnel import STAGE_ORDER

    order = [s for s in STAGE_ORDER if s in ("quality", "classify", "toxicity", "decontaminate", "pii", "dedup")]
    assert order == ["quality", "classify", "toxicity", "decontaminate", "pii", "dedup"]
    from pipeline.accounting import SourceAccount
    from pipeline.curate.report.funnel import funnel

    account = SourceAccount(source="web", read=10)
    account.dropped = {"pii": {"x": 1}, "decontaminate": {"contaminated_mmlu": 1}}
    account.dropped["classify"] = {"q_below_top_percent": 2}
    rows = funnel(account)
    assert [r[0] for r in rows] == [
        "read", "after read", "after extract", "after language", "after quality", "after classify",
        "after decontaminate", "after pii",
    ]  # fmt: skip
    assert rows[-1] == ("after pii", 6)


def test_eval_index_is_built_once_per_run_and_the_report_lists_each_eval_set(tmp_path, monkeypatch):
    import pipeline.curate.decontaminate as decontaminate
    from pipeline.run import curate_run

    sys.path.insert(0, str(REPO / "tests"))
    from tests.helpers.text import topic_corpus

    items, docs = topic_corpus()
    eval_path = tmp_path / "topics.jsonl"
    with eval_path.open("w", encoding="utf-8") as handle:
        for i, sentence in enumerate(items):
            handle.write(json.dumps({"id": f"t{i}", "text": sentence}) + "\n")
    passage = next(s for s in items if len(s.split()) >= 20)
    clean = [d for d in docs if not any(s in d for s in items)][:6]
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        for i, text in enumerate(clean[:3]):
            (folder / f"clean{i}.txt").write_text(text, encoding="utf-8")
        (folder / "leak.txt").write_text(clean[3][:1200] + "\n\n" + passage + "\n\n" + clean[3][1200:])
    built = []
    original = decontaminate.EvalIndex.__init__

    def counting(self, config):
        built.append(1)
        original(self, config)

    monkeypatch.setattr(decontaminate.EvalIndex, "__init__", counting)
    data = {
        "name": "dc",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": n, "kind": "folder", "path": str(tmp_path / n)} for n in ("a", "b")],
        "executor": {"kind": "local", "tasks": 2, "workers": 1},
        "stages": {"language": None, "quality": None, "pii": None, "decontaminate": {"eval_sets": [str(eval_path)]}},
    }
    layout, summary, _ = curate_run(load_recipe(write_recipe(tmp_path, data)))
    assert len(built) == 1  # two sources x two ranks, one index
    assert len(list(layout.stage_dir("decontaminate").glob("eval-index-*.npz"))) == 1
    assert all(s["dropped"]["decontaminate"] == {"contaminated_topics": 1} for s in summary["sources"])
    entry = summary["decontamination"]["eval_sets"]["topics"]
    item = f"t{items.index(passage)}"
    assert entry["documents_dropped"] == 2 and entry["matches"] >= 2 and entry["items"] == len(items)
    assert entry["top_items"][0] == [item, 2]
    report = layout.report_md.read_text()
    assert "## Decontamination" in report and f"`{item}` 2" in report
    curate_run(load_recipe(write_recipe(tmp_path, data)))  # a resumed run reuses the file
    assert len(built) == 1
    data["stages"]["decontaminate"]["mode"] = "cut"  # cut: the leaks are kept without the passage, and counted
    _, summary, _ = curate_run(load_recipe(write_recipe(tmp_path, data)))
    entry = summary["decontamination"]["eval_sets"]["topics"]
    assert (entry["documents_dropped"], entry["documents_cut"]) == (0, 2) and entry["top_items"][0] == [item, 2]
    assert entry["matches"] >= 2 and len(built) == 1  # the index does not depend on the mode: the same file

    from pipeline.curate.build import curation_fingerprint

    recipe = load_recipe(write_recipe(tmp_path, data))
    before = curation_fingerprint(recipe, recipe.sources[0])
    with eval_path.open("a", encoding="utf-8") as handle:  # the eval set edited in place: same path, new item
        handle.write(json.dumps({"id": "new", "text": clean[0][:400]}) + "\n")
    assert curation_fingerprint(recipe, recipe.sources[0]) != before  # re-curated, not resumed


@pytest.mark.parametrize("mode", ["top_percent"])
def test_top_percent_is_a_classify_mode(mode):
    from pipeline.curate.config import MODES, ClassifierConfig

    assert mode in MODES
    assert ClassifierConfig(name="q", model="m.bin", mode=mode).top_percent == 10


def test_flows_publish_the_report_tables_as_artifacts():
    from flows.artifacts import publish_model_stage_artifacts
    from pipeline.curate.report.classify import classify_markdown
    from pipeline.curate.report.decontaminate import decontamination_markdown

    summary = {
        "classify": {
            "classifiers": {
                "q": {
                    "mode": "top_percent",
                    "kept_scored": 3,
                    "kept_score_quantiles": {"p10": 0.7, "p50": 0.8, "p90": 0.9},
                    "dropped": {"q_below_top_percent": 27},
                    "top_percent": {
                        "top_percent": 10,
                        "scored": 30,
                        "kept": 3,
                        "dropped": 27,
                        "cutoff": 0.7,
                        "per_source": {"web": {"scored": 30, "kept": 3}},
                    },
                }
            }
        },
        "decontamination": {
            "eval_sets": {
                "mmlu": {
                    "items": 9,
                    "indexed": 8,
                    "documents_dropped": 2,
                    "documents_cut": 0,
                    "matches": 5,
                    "top_items": [["q7", 2]],
                }
            }
        },
    }
    published = {}
    publish_model_stage_artifacts(summary, lambda key, md, text: published.setdefault(key, md))
    assert published == {
        "classify-scores": classify_markdown(summary["classify"]),
        "decontamination": decontamination_markdown(summary["decontamination"]),
    }
    assert "| q | 10 | 30 | 3 | 27 | 0.7000 | web 3/30 |" in published["classify-scores"]
    assert "| mmlu | 9 | 8 | 2 | 0 | 5 | `q7` 2 |" in published["decontamination"]
    published.clear()
    publish_model_stage_artifacts({"sources": []}, lambda key, md, text: published.setdefault(key, md))
    assert published == {}  # the stages are off: no artifact


def test_one_name_with_two_cuts_is_a_recipe_error_before_anything_is_written(tmp_path):
    from pipeline.config import RecipeError
    from pipeline.run import prepare_run_dir

    cut = {"name": "q", "model": "m.bin", "mode": "top_percent", "top_percent": 10}
    data = {
        "name": "two",
        "output_dir": str(tmp_path / "run"),
        "sources": [
            {"name": "a", "kind": "folder", "path": str(tmp_path)},
            {"name": "b", "kind": "folder", "path": str(tmp_path), "stages": {"classify": [{**cut, "top_percent": 5}]}},
        ],
        "stages": {"classify": [cut]},
    }
    with pytest.raises(RecipeError, match="classifier q: top_percent 10 and 5 "):
        prepare_run_dir(load_recipe(write_recipe(tmp_path, data)))
    assert not (tmp_path / "run").exists()


def test_the_pipeline_flow_runs_the_pass_and_publishes_the_classify_artifact(
    model,
    tmp_path,
    prefect_harness,
):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

    from flows.end_to_end import pipeline

    path, prose, code = model
    for name, texts in (("prose", prose[:6]), ("code", code[:6])):
        (tmp_path / name).mkdir()
        for i, text in enumerate(texts):
            (tmp_path / name / f"{name}{i}.txt").write_text(text, encoding="utf-8")
    data = {
        "name": "flowtp",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": n, "kind": "folder", "path": str(tmp_path / n)} for n in ("prose", "code")],
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
        "stages": {
            "language": None,
            "quality": None,
            "pii": None,
            "classify": [{"name": "ref", "model": str(path), "mode": "top_percent", "top_percent": 50}],
            "dedup": {"threshold": 0.8},
        },
    }
    with temporary_settings(updates={PREFECT_LOCAL_STORAGE_PATH: str(tmp_path / "results")}):
        result = pipeline(str(write_recipe(tmp_path, data)))
    curation = result["curation"]
    kept = sum(s["kept_final"] for s in curation["sources"])
    cut = curation["classify"]["classifiers"]["ref"]["top_percent"]
    assert kept == cut["kept"] == keep_count(cut["scored"], 50) and cut["scored"] >= 10
    assert all(s["balanced"] for s in curation["sources"])

    async def artifact() -> str:
        async with get_client() as client:
            # the newest of that key: read_artifacts sorts by id (random) unless told, so a classify artifact
            # another test's flow published in this process could come first
            found = await client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["classify-scores"])),
                sort=ArtifactSort.CREATED_DESC,
                limit=1,
            )
            return found[0].data if found else ""

    assert "ref_below_top_percent" in asyncio.run(artifact())
