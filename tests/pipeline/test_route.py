"""classify ``mode: route`` (domain mining): routed documents join another source, the accounts balance as
``read + routed_in = kept + routed + dropped``, tokenize counts them under the target, a killed run resumes.

The classifier is trained at run time on text no one here wrote: the Language Reference topics pydoc ships
(positives) vs stdlib source code (negatives), as in tests/pipeline/test_classify_stage.py."""

from __future__ import annotations

import gzip
import importlib
import inspect
import json
from pathlib import Path

import pytest
import yaml

from pipeline.classifier.train import Hyperparameters, train_classifier
from pipeline.classify.scoring import flatten
from pipeline.config import RecipeError, load_recipe
from pipeline.curate.build import curate_source
from pipeline.layout import RunLayout
from pipeline.run import account_all, prepare_run_dir
from tests.helpers.curate import curate_until_killed
from tests.helpers.text import chunks

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, list[str], list[str]]:
    from pydoc_data.topics import topics

    prose = [p for n in sorted(topics) for p in chunks(topics[n])]
    code = [
        p
        for m in ("argparse", "calendar", "csv", "difflib", "enum", "gettext", "shlex", "pathlib", "zipfile")
        for p in chunks(inspect.getsource(importlib.import_module(m)))
    ]
    path = tmp_path_factory.mktemp("model") / "reference.bin"
    train_classifier(
        [flatten(t) for t in prose[::2]],
        [flatten(t) for t in code[::2]],
        path,
        label="reference",
        params=Hyperparameters(epoch=25, lr=0.1, word_ngrams=2, bucket=100_000, calibration="none"),
    )
    return path, prose[1::2], code[1::2]


def write_folder(folder: Path, texts: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    return folder


def recipe_data(tmp_path: Path, corpus, target_kind: str = "routed", tasks: int = 1) -> dict:
    model, prose, code = corpus
    web = write_folder(
        tmp_path / "web",
        {
            **{f"prose{i:02d}": t for i, t in enumerate(prose[:10])},
            **{f"code{i:02d}": t for i, t in enumerate(code[:10])},
        },
    )
    sources = [
        {
            "name": "web",
            "kind": "folder",
            "path": str(web),
            "weight": 0.5,
            "stages": {
                "classify": [
                    {"name": "ref", "model": str(model), "mode": "route", "threshold": 0.5, "route_to": "mined"}
                ]
            },
        }
    ]
    if target_kind == "routed":
        sources.append({"name": "mined", "kind": "routed", "weight": 0.5, "priority": 5})
    else:  # an ordinary source that also receives routed documents
        own = write_folder(tmp_path / "own", {f"own{i:02d}": t for i, t in enumerate(prose[20:24])})
        sources.append({"name": "mined", "kind": "folder", "path": str(own), "weight": 0.5, "priority": 5})
    return {
        "name": "route",
        "output_dir": str(tmp_path / "run"),
        "sources": sources,
        "executor": {"kind": "local", "tasks": tasks, "workers": 1},
        # a pii stage after classify: routed documents still pass their own source's later stages
        "stages": {"language": None, "quality": None, "pii": {}},
    }


def load(tmp_path: Path, data: dict, name: str = "r.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return load_recipe(path)


def curate_all(recipe):
    layout = prepare_run_dir(recipe)
    for source in recipe.sources:
        curate_source(recipe, source, layout)
    return layout, {a.source: a for a in account_all(recipe, layout)}


def read_jsonl(folder: Path, pattern: str = "**/*.jsonl.gz") -> list[dict]:
    rows = []
    for path in sorted(folder.glob(pattern)):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows += [json.loads(line) for line in handle if line.strip()]
    return rows


@pytest.mark.parametrize("target_kind", ["routed", "folder"])
def test_routing_balances_with_two_sources(tmp_path: Path, corpus, target_kind: str) -> None:
    recipe = load(tmp_path, recipe_data(tmp_path, corpus, target_kind))
    layout, accounts = curate_all(recipe)
    web, mined = accounts["web"], accounts["mined"]
    assert web.read == 20
    assert web.routed == {"mined": web.routed_total} and 9 <= web.routed_total <= 15  # mostly the ten prose files
    assert web.read == web.kept_final + web.routed_total + web.dropped_total
    assert mined.routed_in == {"web": web.routed_total}
    assert mined.read == (0 if target_kind == "routed" else 4)
    assert mined.kept_final == mined.read + web.routed_total
    routed = read_jsonl(layout.curated("mined") / "routed-from-web")
    assert len(routed) == web.routed_total
    assert all(d["metadata"]["source"] == "mined" and d["metadata"]["routed_from"] == "web" for d in routed)
    assert all(d["metadata"]["classify"]["ref"] >= 0.5 for d in routed)
    assert sum(d["id"].startswith("prose") for d in routed) >= 8
    own = read_jsonl(layout.curated("web"), "*.jsonl.gz")
    assert len(own) == web.kept_final and all("routed_to" not in d["metadata"] for d in own)
    # the funnel moves routed documents between sources and never goes negative; it ends at what each kept
    from pipeline.curate.report.funnel import funnel, stage_rows

    web_rows, mined_rows = funnel(web), funnel(mined)
    assert ("routed out", web.kept_final) in web_rows and web_rows[-1] == ("routed out", web.kept_final)
    # routed documents join the target where they leave the crawl: after curation, before dedup
    assert mined_rows[0] == ("read", mined.read) and mined_rows[-1] == ("routed in", mined.kept_final)
    assert mined_rows[-1][1] == mined.read + web.routed_total and min(n for _, n in mined_rows) >= 0
    routing = [r for r in stage_rows(web) + stage_rows(mined) if r["stage"].startswith("routed")]
    assert len(routing) == 2 and all(r["dropped"] == 0 for r in routing)
    assert [r["routed_out"] for r in stage_rows(web) if r["routed_out"]] == [web.routed_total]
    for row in stage_rows(web) + stage_rows(mined):  # every row adds up
        assert row["in"] - row["dropped"] + row["routed_in"] - row["routed_out"] == row["out"], row
    # a document missing from the target's folder is caught: the origin's count no longer matches what is there
    from pipeline.accounting import AccountingError

    file = next(iter(sorted((layout.curated("mined") / "routed-from-web").glob("*.jsonl.gz"))))
    with gzip.open(file, "rt", encoding="utf-8") as handle:
        lines = handle.readlines()
    with gzip.open(file, "wt", encoding="utf-8") as handle:
        handle.writelines(lines[1:])
    with pytest.raises(AccountingError, match="web -> mined: routed"):
        account_all(recipe, layout)


def test_routed_documents_are_tokenized_under_the_target(tmp_path: Path, corpus) -> None:
    from pipeline.run import run_tokenize_stage

    data = recipe_data(tmp_path, corpus)
    data["stages"]["tokenize"] = {"vocab_size": 512, "heldout_share": 0.2, "tasks": 1}
    data["stages"]["dedup"] = {"threshold": 0.8}
    recipe = load(tmp_path, data)
    layout, _ = curate_all(recipe)
    from pipeline.executor import executor_factory
    from pipeline.run import run_dedup_stage

    run_dedup_stage(recipe, layout, executor_factory(recipe.executor, "dedup"))
    accounts = {a.source: a for a in account_all(recipe, layout)}
    assert accounts["mined"].kept_final == accounts["mined"].routed_in_total > 0  # dedup read the routed folder
    manifest = run_tokenize_stage(recipe, layout).raw
    mined = manifest["sources"]["mined"]
    docs = mined["documents"]["train"] + mined["documents"]["heldout"]
    assert docs == accounts["mined"].kept_final
    assert mined["routed_from"]["web"]["documents"] == docs
    assert mined["routed_from"]["web"]["tokens"] == mined["tokens"]["train"] + mined["tokens"]["heldout"]
    assert "routed_from" not in manifest["sources"]["web"]


def test_route_to_validation_errors(tmp_path: Path, corpus) -> None:
    data = recipe_data(tmp_path, corpus)
    classifier = data["sources"][0]["stages"]["classify"][0]
    del classifier["route_to"]
    with pytest.raises(RecipeError, match="mode 'route' needs route_to"):
        load(tmp_path, data)
    classifier["route_to"] = "nowhere"
    with pytest.raises(RecipeError, match=r"sources\.0\.stages\.classify\.0\.route_to: 'nowhere'"):
        load(tmp_path, data)
    classifier["route_to"] = "web"
    with pytest.raises(RecipeError, match="is source 'web' itself"):
        load(tmp_path, data)
    classifier["route_to"] = "mined"
    classifier["mode"] = "threshold"
    with pytest.raises(RecipeError, match="route_to applies to mode 'route' only"):
        load(tmp_path, data)
    classifier["mode"] = "route"
    data["sources"][1]["path"] = str(tmp_path)
    with pytest.raises(RecipeError, match="kind 'routed' has no path"):
        load(tmp_path, data)


def test_clearing_an_origin_clears_only_what_it_routed(tmp_path: Path, corpus) -> None:
    from pipeline.curate.build import clear_source_outputs

    recipe = load(tmp_path, recipe_data(tmp_path, corpus, "folder"))
    layout, _ = curate_all(recipe)
    clear_source_outputs(layout, "mined")  # the target's own outputs: what web routed into it stays
    assert list((layout.curated("mined") / "routed-from-web").glob("*.jsonl.gz"))
    assert not list(layout.curated("mined").glob("*.jsonl.gz"))
    clear_source_outputs(layout, "web")
    assert not (layout.curated("mined") / "routed-from-web").exists()


def test_sigkill_of_a_routed_run_then_rerun_equals_uninterrupted(tmp_path: Path, corpus) -> None:
    clean_data = recipe_data(tmp_path / "a", corpus, tasks=4)
    clean_layout, clean_accounts = curate_all(load(tmp_path, clean_data, "clean.yaml"))

    killed_data = recipe_data(tmp_path / "a", corpus, tasks=4)
    killed_data["output_dir"] = str(tmp_path / "killed")
    killed_path = tmp_path / "killed.yaml"
    killed_path.write_text(yaml.safe_dump(killed_data))
    curate_until_killed(killed_path, tmp_path, rank=2, index=2)
    completions = list((tmp_path / "killed" / "stages" / "curate" / "web" / "logs" / "completions").glob("*"))
    assert len(completions) == 2  # ranks 0 and 1 finished, rank 2 died mid-way

    killed_layout, killed_accounts = curate_all(load_recipe(killed_path))

    def documents(root: Path) -> list[tuple[str, str, str, str]]:
        rows = read_jsonl(root / "curated")
        return sorted((d["metadata"]["source"], d["id"], d["text"], d["metadata"].get("routed_from", "")) for d in rows)

    def relative_files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in (root / "curated").rglob("*.jsonl.gz"))

    assert documents(killed_layout.root) == documents(clean_layout.root)
    assert relative_files(killed_layout.root) == relative_files(clean_layout.root)
    strip = lambda accounts: {n: {k: v for k, v in a.to_json().items() if k != "examples"} for n, a in accounts.items()}  # noqa: E731
    assert strip(killed_accounts) == strip(clean_accounts)
    assert clean_accounts["web"].routed_total > 0


def test_domain_mining_recipe_loads_and_builds(tmp_path: Path, corpus) -> None:
    """configs/domain-mining.yaml: a 51 % / 49 % mix, the crawl routed by a classifier into finance-mined,
    decontamination on; with a real model and eval file in place every stage builds in order."""
    from pipeline.curate.build import build_stages
    from pipeline.run import source_mix

    recipe = load_recipe(REPO / "configs" / "domain-mining.yaml")
    by_name = {s.name: s for s in recipe.sources}
    assert by_name["finance-mined"].routed and by_name["finance-mined"].path is None
    mix = source_mix(recipe)
    assert sum(m["weight"] for m in mix.values()) == pytest.approx(1.0)
    assert mix["finance"]["weight"] + mix["finance-mined"]["weight"] == pytest.approx(0.51)
    assert recipe.route_targets(by_name["web"]) == ["finance-mined"]
    assert recipe.route_targets(by_name["finance"]) == []  # the team's folder is not classified
    assert recipe.stages.decontaminate is not None and recipe.stages.dedup is not None
    finance_quality = recipe.stages_for(by_name["finance"]).quality
    assert finance_quality.c4 is None and finance_quality.fineweb is None  # kept whole

    data = yaml.safe_load((REPO / "configs" / "domain-mining.yaml").read_text())
    evals = tmp_path / "benchmark.jsonl"
    evals.write_text(json.dumps({"text": "what is the capital of a country with thirteen words in it"}) + "\n")
    data["stages"]["decontaminate"]["eval_sets"] = [str(evals)]
    data["sources"][1]["stages"]["classify"][0]["model"] = str(corpus[0])
    built = load(tmp_path, data)
    names = [type(s).__name__ for s in build_stages(built.stages_for(built.sources[1]), str(tmp_path / "d"))]
    assert names.index("ClassifyStage") < names.index("DecontaminateStage") < names.index("PIIStage")


def test_a_rerun_of_the_pipeline_flow_after_the_run_folder_was_removed_curates_the_routed_into_source(
    tmp_path: Path, corpus, prefect_harness
) -> None:
    """The web source routes into ``mined`` (an ordinary folder source) before ``mined`` is curated, so its curated
    folder exists early. On ``rm -rf`` of the run and a rerun with Prefect's cache still holding both stages, ``mined``
    used to come back ``Cached`` and the report said it read 0 documents, balanced (found by a second ``make demo``)."""
    import shutil

    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

    from flows.end_to_end import pipeline

    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(recipe_data(tmp_path, corpus, "folder")))
    with temporary_settings(updates={PREFECT_LOCAL_STORAGE_PATH: str(tmp_path / "results")}):
        first = pipeline(str(path))
        shutil.rmtree(tmp_path / "run")
        second = pipeline(str(path))
    recipe = load_recipe(path)
    accounts = {a.source: a for a in account_all(recipe, RunLayout.at(tmp_path / "run"))}
    assert accounts["mined"].read == 4 and accounts["web"].read == 20
    assert second["report"] == first["report"] and Path(second["report"]).is_file()
