"""The recipe in two layers: ``pipeline.config.CurationRecipe`` (curation, imports no training) and
``training.recipe.Recipe`` (types ``plan:``, ``train:``, ``ablate:``), which every command loads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from pipeline.config import CurationRecipe, RecipeError, dump_recipe
from pipeline.config import load_recipe as load_curation_recipe
from pipeline.run import recipe_for_input
from training.plan.options import PlanOptions
from training.recipe import Recipe, load_recipe

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def minimal(tmp_path: Path) -> dict:
    return {"name": "t", "output_dir": str(tmp_path / "run"), "sources": [{"name": "web", "path": str(tmp_path)}]}


def test_pipeline_imports_nothing_from_training_or_flows() -> None:
    upward = []
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # in-function imports count too
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            upward += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in ("training", "flows")]
    assert upward == []


def test_a_pipeline_only_load_keeps_the_training_sections_as_written(tmp_path: Path) -> None:
    data = minimal(tmp_path) | {"plan": {"gpu": "A100"}, "train": {"max_stepz": 1}, "ablate": {"seeds": [1, 1]}}
    curation = load_curation_recipe(write(tmp_path, data))
    assert type(curation) is CurationRecipe
    assert curation.plan == {"gpu": "A100"} and curation.train == {"max_stepz": 1}
    assert curation.ablate == {"seeds": [1, 1]}
    # the loader the commands use checks the same file whole, naming the file and the section's field
    with pytest.raises(RecipeError, match=r"recipe\.yaml: invalid recipe\n.*ablate\.seeds: .*two different seeds"):
        load_recipe(write(tmp_path, data))
    with pytest.raises(RecipeError, match=r"recipe\.yaml: invalid recipe\n.*train\.max_stepz: unknown key"):
        load_recipe(write(tmp_path, data | {"ablate": None}))


def test_the_recipe_types_plan_and_checks_ablate(tmp_path: Path) -> None:
    recipe = load_recipe(write(tmp_path, minimal(tmp_path) | {"plan": {"gpu": "A100"}, "train": {"max_steps": 3}}))
    assert isinstance(recipe, CurationRecipe) and isinstance(recipe.plan, PlanOptions)
    assert recipe.plan.gpu == "A100" and recipe.train_config().max_steps == 3
    assert recipe.train_config().shards == str(tmp_path / "run" / "shards")
    with pytest.raises(RecipeError, match=r"ablate\.seeds: .*at least two different seeds"):
        load_recipe(write(tmp_path, minimal(tmp_path) | {"ablate": {"seeds": [3]}}))
    with pytest.raises(RecipeError, match=r"plan\.gpu"):
        load_recipe(write(tmp_path, minimal(tmp_path) | {"plan": {"gpu": 3}}))


@pytest.mark.parametrize("name", ["web.yaml", "domain.yaml"])
def test_without_a_plan_section_both_layers_hash_and_dump_alike(name: str, tmp_path: Path) -> None:
    curation, recipe = load_curation_recipe(REPO / "configs" / name), load_recipe(REPO / "configs" / name)
    assert curation.config_hash() == recipe.config_hash()
    dump_recipe(curation, tmp_path / "a.yaml")
    dump_recipe(recipe, tmp_path / "b.yaml")
    assert (tmp_path / "a.yaml").read_text(encoding="utf-8") == (tmp_path / "b.yaml").read_text(encoding="utf-8")


def test_a_plan_section_is_resolved_in_the_recorded_recipe(tmp_path: Path) -> None:
    recipe = load_recipe(REPO / "configs" / "demo.yaml")
    dump_recipe(recipe, tmp_path / "config.yaml")
    recorded = yaml.safe_load((tmp_path / "config.yaml").read_text(encoding="utf-8"))
    assert recorded["plan"] == PlanOptions.model_validate(recipe.plan.model_dump()).model_dump(mode="json")
    assert Recipe.model_validate(recorded).config_hash() == recipe.config_hash()


def test_applying_an_output_keeps_the_recipe_class(tmp_path: Path) -> None:
    recipe = load_recipe(REPO / "configs" / "demo.yaml")
    moved = recipe_for_input(recipe, None, str(tmp_path / "elsewhere"))
    assert type(moved) is Recipe and moved.plan == recipe.plan and moved.output_dir == str(tmp_path / "elsewhere")
    assert type(recipe_for_input(load_curation_recipe(REPO / "configs" / "demo.yaml"), None, "x")) is CurationRecipe
