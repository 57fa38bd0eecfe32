"""Recipes: unknown keys and wrong types are errors naming the file and the field path."""

from pathlib import Path

import pytest
import yaml

from pipeline.config import RecipeError
from training.recipe import load_recipe

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def minimal() -> dict:
    return {"name": "t", "output_dir": "runs/t", "sources": [{"name": "web", "kind": "warc", "path": "x.warc.gz"}]}


@pytest.mark.parametrize("name", ["demo.yaml", "web.yaml", "domain.yaml"])
def test_shipped_recipes_validate(name: str) -> None:
    recipe = load_recipe(REPO / "configs" / name)
    assert recipe.sources and recipe.config_hash() == load_recipe(REPO / "configs" / name).config_hash()


def test_unknown_top_level_key_names_file_and_key(tmp_path: Path) -> None:
    data = minimal() | {"sourcez": []}
    with pytest.raises(RecipeError) as error:
        load_recipe(write(tmp_path, data))
    message = str(error.value)
    assert "recipe.yaml" in message and "sourcez" in message and "unknown key" in message


def test_unknown_nested_key_names_field_path(tmp_path: Path) -> None:
    data = minimal()
    data["stages"] = {"language": {"min_scor": 0.5}}
    with pytest.raises(RecipeError, match=r"stages\.language\.min_scor: unknown key"):
        load_recipe(write(tmp_path, data))


def test_wrong_type_names_field_path(tmp_path: Path) -> None:
    data = minimal()
    data["executor"] = {"tasks": "many"}
    with pytest.raises(RecipeError, match=r"executor\.tasks"):
        load_recipe(write(tmp_path, data))


def test_bad_source_kind_names_index(tmp_path: Path) -> None:
    data = minimal()
    data["sources"][0]["kind"] = "pdf"
    with pytest.raises(RecipeError, match=r"sources\.0\.kind"):
        load_recipe(write(tmp_path, data))


def test_duplicate_source_names_rejected(tmp_path: Path) -> None:
    data = minimal()
    data["sources"].append(dict(data["sources"][0]))
    with pytest.raises(RecipeError, match="repeated: web"):
        load_recipe(write(tmp_path, data))


def test_slurm_without_partition_is_an_error(tmp_path: Path) -> None:
    data = minimal() | {"executor": {"kind": "slurm"}}
    with pytest.raises(RecipeError, match="executor"):
        load_recipe(write(tmp_path, data))


def test_missing_recipe_file(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="recipe file not found"):
        load_recipe(tmp_path / "nope.yaml")


def test_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(RecipeError, match="must be a YAML mapping"):
        load_recipe(path)


def test_stage_can_be_switched_off(tmp_path: Path) -> None:
    data = minimal() | {"stages": {"quality": None, "pii": None}}
    recipe = load_recipe(write(tmp_path, data))
    assert recipe.stages.quality is None and recipe.stages.pii is None and recipe.stages.language is not None


def test_source_stage_overrides_merge_over_recipe_stages(tmp_path: Path) -> None:
    data = minimal() | {"stages": {"language": {"keep": ["en", "de"], "min_score": 0.7}}}
    data["sources"].append(
        {"name": "notes", "kind": "folder", "path": "d", "stages": {"language": {"min_score": 0.2}, "pii": None}}
    )
    recipe = load_recipe(write(tmp_path, data))
    web, notes = recipe.sources
    assert recipe.stages_for(web).language.min_score == 0.7
    merged = recipe.stages_for(notes)
    assert merged.language.min_score == 0.2 and merged.language.keep == ["en", "de"] and merged.pii is None


def test_source_stage_override_errors_name_the_source_path(tmp_path: Path) -> None:
    data = minimal()
    data["sources"][0]["stages"] = {"language": {"min_scor": 0.2}}
    with pytest.raises(RecipeError, match=r"sources\.0\.stages\.language\.min_scor: unknown key"):
        load_recipe(write(tmp_path, data))


def test_readme_recipe_example_validates() -> None:
    readme = (REPO / "README.md").read_text()
    start = readme.index("```yaml\nname: web") + len("```yaml\n")
    recipe = yaml.safe_load(readme[start : readme.index("```", start)])
    from training.recipe import parse_recipe

    parsed = parse_recipe(recipe, "README.md")
    assert parsed.stages.dedup is not None and parsed.train_config().max_tokens == 22e9


def test_tilde_expands_in_every_path_field_and_nowhere_else(tmp_path: Path, monkeypatch) -> None:
    """Issue 19 item 7: ``output_dir: '~'`` made a folder named ``~``; every path field now expands it."""
    from pipeline.curate.config import DecontaminateConfig
    from pipeline.dedup.config import IndexConfig
    from pipeline.tokenize.config import TokenizeConfig
    from training.config import TrainConfig

    monkeypatch.setenv("HOME", str(tmp_path))
    data = minimal() | {"output_dir": "~"}
    data["sources"][0]["path"] = "~/crawl/x.warc.gz"
    recipe = load_recipe(write(tmp_path, data))
    assert recipe.output_dir == str(tmp_path) and recipe.sources[0].path == str(tmp_path / "crawl" / "x.warc.gz")
    assert IndexConfig(path="~/index").path == str(tmp_path / "index")
    evals = DecontaminateConfig(eval_sets=["~/evals/a.jsonl", {"path": "~/evals/b.jsonl"}]).eval_sets
    assert [e if isinstance(e, str) else e.path for e in evals] == [
        str(tmp_path / "evals" / n) for n in ("a.jsonl", "b.jsonl")
    ]
    train = TrainConfig(shards="~/shards", output="~/out", model="tiny")
    assert (train.shards, train.output, train.model) == (str(tmp_path / "shards"), str(tmp_path / "out"), "tiny")
    tokens = ["~", "<|endoftext|>"]
    assert TokenizeConfig(special_tokens=tokens).special_tokens == tokens  # not a path: left alone


def test_curate_with_output_dir_tilde_writes_under_home(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from flows.cli import app
    from tests.flows.test_warnings import MODULES, pydoc_text

    home, work = tmp_path / "home", tmp_path / "work"
    (home / "docs").mkdir(parents=True)
    work.mkdir()
    for name in MODULES[:2]:
        (home / "docs" / f"{name}.txt").write_text(pydoc_text(name), encoding="utf-8")
    data = yaml.safe_load((REPO / "configs" / "domain.yaml").read_text(encoding="utf-8"))
    data["output_dir"] = "~/runs/domain"
    data["sources"][0]["path"] = "~/docs"
    recipe = work / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    result = CliRunner().invoke(app, ["curate", str(recipe), "--prefect", "off"])
    assert result.exit_code == 0, result.output
    assert (home / "runs" / "domain" / "report.md").is_file() and not (work / "~").exists()
    # --input and --output as a shell passes them quoted ('~/docs'), or as a deployment parameter
    args = ["curate", str(recipe), "--input", "~/docs", "--output", "~/runs/quoted", "--prefect", "off"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (home / "runs" / "quoted" / "report.md").is_file() and not (work / "~").exists()
