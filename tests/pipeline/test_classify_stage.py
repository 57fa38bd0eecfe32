"""Stage ``classify`` (annotate | threshold) with a model trained at run time by ``tokenmill classifier train``'s
code on text no one here wrote: the Language Reference topics pydoc ships (positives) vs stdlib source code."""

from __future__ import annotations

import gzip
import json
import pickle

import pytest
import yaml
from datatrove.data import Document

from pipeline.classify.scoring import ClassifierError
from pipeline.config import RecipeError, load_recipe
from pipeline.curate.build import build_stages
from pipeline.curate.classify import ClassifyStage
from pipeline.curate.config import ClassifierConfig
from tests.helpers.curate import one_stage_recipe


def test_annotate_keeps_everything_and_writes_scores(model):
    path, prose, code = model
    stage = ClassifyStage([ClassifierConfig(name="ref", model=str(path))])
    docs = [Document(text=t, id=str(i)) for i, t in enumerate(prose[:40] + code[:40])]
    assert stage.process_batch(docs) == [None] * 80
    scores = [d.metadata["classify"]["ref"] for d in docs]
    assert all(0 <= s <= 1 for s in scores)
    assert sum(s >= 0.5 for s in scores[:40]) >= 36 and sum(s < 0.5 for s in scores[40:]) >= 36


def test_threshold_drops_with_rule_and_score_and_batches_agree(model):
    path, prose, code = model
    stage = ClassifyStage([ClassifierConfig(name="ref", model=str(path), mode="threshold", threshold=0.5)])
    texts = prose[:50] + code[:50]
    verdicts = stage.process_batch([Document(text=t, id=str(i)) for i, t in enumerate(texts)])
    single = [stage.process(Document(text=t, id="s")) for t in texts]
    assert [v and (v.rule, round(v.score, 5)) for v in verdicts] == [v and (v.rule, round(v.score, 5)) for v in single]
    dropped = [v for v in verdicts if v is not None]
    assert all(v.rule == "ref_below_threshold" and v.score < 0.5 for v in dropped)
    assert sum(v is None for v in verdicts[:50]) >= 40  # prose mostly kept
    assert sum(v is not None for v in verdicts[50:]) >= 40  # code mostly dropped


def test_several_classifiers_run_in_order_and_a_drop_stops_the_rest(model):
    path, prose, code = model
    stage = ClassifyStage(
        [
            ClassifierConfig(name="strict", model=str(path), mode="threshold", threshold=0.99999),
            ClassifierConfig(name="note", model=str(path), mode="annotate"),
        ]
    )
    docs = [Document(text=code[0], id="c"), Document(text=prose[0], id="p")]
    verdicts = stage.process_batch(docs)
    assert verdicts[0] is not None and verdicts[0].rule == "strict_below_threshold"
    assert set(docs[0].metadata["classify"]) == {"strict"}  # the second classifier never saw the dropped one
    if verdicts[1] is None:
        assert set(docs[1].metadata["classify"]) == {"strict", "note"}


def test_missing_model_and_duplicate_names_are_clear_errors(model, tmp_path):
    with pytest.raises(ClassifierError, match="classifier model not found"):
        ClassifyStage([ClassifierConfig(name="x", model=str(tmp_path / "none.bin"))])
    path = model[0]
    data = {
        "name": "c",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": "docs", "kind": "folder", "path": str(tmp_path)}],
        "stages": {"classify": [{"name": "a", "model": str(path)}, {"name": "a", "model": str(path)}]},
    }
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump(data))
    with pytest.raises(RecipeError, match="classifier names must be unique"):
        load_recipe(recipe)
    data["stages"]["classify"] = [{"name": "a", "model": str(path), "mode": "bogus"}]
    recipe.write_text(yaml.safe_dump(data))
    with pytest.raises(RecipeError, match=r"stages\.classify\.0\.mode"):
        load_recipe(recipe)
    data["stages"]["classify"] = [{"name": "a", "model": str(path), "mode": "route"}]  # route needs route_to
    recipe.write_text(yaml.safe_dump(data))
    with pytest.raises(RecipeError, match=r"stages\.classify\.0: .*mode 'route' needs route_to"):
        load_recipe(recipe)


def test_pickled_stage_loads_its_model_again(model):
    path, prose, _ = model
    stage = ClassifyStage([ClassifierConfig(name="ref", model=str(path))])
    stage.setup()
    clone = pickle.loads(pickle.dumps(stage))
    assert clone._models is None
    doc = Document(text=prose[0], id="1")
    assert clone.process(doc) is None and "ref" in doc.metadata["classify"]


def test_curation_run_with_threshold_balances(model, tmp_path):
    from pipeline.curate.build import curate_source
    from pipeline.run import account_all, prepare_run_dir

    path, prose, code = model
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(prose[:8]):
        (folder / f"prose{i}.txt").write_text(text, encoding="utf-8")
    for i, text in enumerate(code[:8]):
        (folder / f"code{i}.txt").write_text(text, encoding="utf-8")
    classifier = {"name": "ref", "model": str(path), "mode": "threshold", "threshold": 0.5}
    recipe = one_stage_recipe(tmp_path, folder, "c", classify=[classifier])
    names = [type(s).__name__ for s in build_stages(recipe.stages, str(tmp_path / "d"))]
    assert names == ["ExtractStage", "ClassifyStage"]
    layout = prepare_run_dir(recipe)
    curate_source(recipe, recipe.sources[0], layout)
    (account,) = account_all(recipe, layout)
    assert account.balanced and account.read == 16
    dropped = account.dropped["classify"]["ref_below_threshold"]
    assert 6 <= dropped <= 10
    kept = []
    for file in layout.curated("docs").glob("*.jsonl.gz"):
        with gzip.open(file, "rt") as handle:
            kept += [json.loads(line) for line in handle]
    assert len(kept) == 16 - dropped
    assert all(d["metadata"]["classify"]["ref"] >= 0.5 for d in kept)
    assert sum(d["id"].startswith("prose") for d in kept) >= 7


def test_pareto_draw_follows_numpy_pareto_and_is_stable():
    import numpy as np

    from pipeline.curate.classify import pareto_draw

    draws = np.array([pareto_draw(0, f"doc-{i}", 9.0) for i in range(20_000)])
    reference = np.random.default_rng(0).pareto(9.0, 20_000)
    assert abs(np.median(draws) - np.median(reference)) < 0.005  # median of Lomax(9): 2**(1/9) - 1 = 0.080
    assert abs(np.median(draws) - (2 ** (1 / 9) - 1)) < 0.005
    assert pareto_draw(0, "a", 9.0) == pareto_draw(0, "a", 9.0) != pareto_draw(1, "a", 9.0)


def test_pareto_mode_keeps_high_scores_and_some_low_ones(model):
    path, prose, code = model
    stage = ClassifyStage([ClassifierConfig(name="ref", model=str(path), mode="pareto", alpha=3)])
    texts = prose[:60] + code[:60]
    docs = [Document(text=t, id=f"d{i}") for i, t in enumerate(texts)]
    verdicts = stage.process_batch(docs)
    again = stage.process_batch([Document(text=t, id=f"d{i}") for i, t in enumerate(texts)])
    assert [v and v.rule for v in verdicts] == [v and v.rule for v in again]  # same ids, same decisions
    for doc, verdict in zip(docs, verdicts, strict=True):
        score = doc.metadata["classify"]["ref"]
        if verdict is not None:
            assert verdict.rule == "ref_pareto_sampled" and verdict.score == pytest.approx(score, abs=1e-6)
    # P(keep) = P(Lomax(alpha) > 1 - score) = (2 - score) ** -alpha: 1 at score 1, 2 ** -alpha at score 0
    for half in (slice(0, 60), slice(60, 120)):
        expected = sum((2 - d.metadata["classify"]["ref"]) ** -3 for d in docs[half])
        kept = sum(v is None for v in verdicts[half])
        assert abs(kept - expected) < 4 * expected**0.5 + 2
    assert sum(v is None for v in verdicts[:60]) > sum(v is None for v in verdicts[60:])
