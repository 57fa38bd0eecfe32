"""Stage ``toxicity``: the bundled English scorer (alt-profanity-check) on text others wrote (pydoc pages and
docstrings of stdlib modules, generated at run time) and on abusive lines written here; a fastText model trained
at run time with ``tokenmill classifier train``'s code replacing it for another language."""

from __future__ import annotations

import gzip
import importlib
import inspect
import json
import pickle
import pydoc
import random

import pytest
import yaml
from datatrove.data import Document
from pydantic import ValidationError

from pipeline.classifier.train import Hyperparameters, train_classifier
from pipeline.config import RecipeError, load_recipe
from pipeline.curate.build import build_stages
from pipeline.curate.config import ToxicityConfig
from pipeline.curate.toxicity import ToxicityError, ToxicityStage
from tests.helpers.curate import one_stage_recipe

# written for these tests: clearly abusive lines aimed at the reader
ABUSIVE = [
    "You are a fucking idiot and everyone here knows it.",
    "Shut the fuck up, you worthless piece of shit.",
    "Go fuck yourself, you stupid moron, nobody wants you here.",
    "Eat shit, you ugly bastard, and get out of this thread.",
    "This author is a complete asshole and a lying sack of crap.",
]
MODULES = ["json", "textwrap", "difflib", "calendar", "gzip", "csv", "argparse", "logging", "tarfile", "sched"]


def pages(size: int = 2000) -> list[str]:
    """pydoc's plain-text pages of stdlib modules, cut at line ends into documents of about ``size`` chars."""
    out = []
    for name in MODULES:
        text = pydoc.render_doc(importlib.import_module(name), renderer=pydoc.plaintext)
        current = ""
        for block in text.splitlines():
            current = f"{current}\n{block}" if current else block
            if len(current) >= size:
                out.append(current)
                current = ""
    return out


def prose_lines() -> list[str]:
    """Lines of stdlib docstrings of at least 40 characters: one sentence-ish line of English prose each."""
    lines = []
    for name in MODULES:
        module = importlib.import_module(name)
        docs = [inspect.getdoc(module) or ""] + [inspect.getdoc(o) or "" for o in vars(module).values()]
        lines += [line.strip() for d in docs for line in d.splitlines() if len(line.strip()) >= 40]
    return list(dict.fromkeys(lines))


def test_config_is_strict_and_checks_its_keys(tmp_path):
    assert ToxicityConfig().scored_languages() == frozenset({"en"})
    with pytest.raises(ValidationError, match="empty languages"):
        ToxicityConfig(languages=[])
    with pytest.raises(ValidationError, match="set model too"):
        ToxicityConfig(label="toxic")
    with pytest.raises(ValidationError, match="English only"):
        ToxicityConfig(languages=["en", "de"])
    with pytest.raises(ValidationError):
        ToxicityConfig(threshold=1.5)
    with pytest.raises(ValidationError):
        ToxicityConfig(treshold=0.5)  # a misspelt key is an error, not ignored
    assert ToxicityConfig(model="m.bin").scored_languages() is None
    with pytest.raises(ToxicityError, match="toxicity model not found"):
        ToxicityStage(ToxicityConfig(model=str(tmp_path / "none.bin")))
    data = {
        "name": "t",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": "docs", "kind": "folder", "path": str(tmp_path)}],
        "stages": {"toxicity": {"max_toxic_paragraph_share": 2}},
    }
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(RecipeError, match=r"stages\.toxicity\.max_toxic_paragraph_share"):
        load_recipe(tmp_path / "r.yaml")
    data["stages"]["toxicity"] = {}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(data))
    assert load_recipe(tmp_path / "r.yaml").stages.toxicity == ToxicityConfig()


def test_a_pickle_for_another_scikit_learn_is_an_error_not_a_warning(monkeypatch):
    import warnings

    import joblib
    from sklearn.exceptions import InconsistentVersionWarning

    from pipeline.curate.toxicity import BundledScorer

    def load(path):
        warnings.warn(
            InconsistentVersionWarning(
                estimator_name="TfidfVectorizer", current_sklearn_version="0.0", original_sklearn_version="9.9"
            ),
            stacklevel=2,
        )

    monkeypatch.setattr(joblib, "load", load)
    with pytest.raises(ToxicityError, match="does not match the installed scikit-learn"):
        BundledScorer()


def test_ordinary_text_others_wrote_is_kept():
    stage = ToxicityStage()
    docs = [Document(text=t, id=str(i), metadata={"language": "en"}) for i, t in enumerate(pages())]
    assert len(docs) > 30
    verdicts = stage.process_batch(docs)
    assert [d.id for d, v in zip(docs, verdicts, strict=True) if v is not None] == []
    scores = [d.metadata["toxicity"]["score"] for d in docs]
    assert max(scores) < 0.5
    assert all(d.metadata["toxicity"]["toxic_paragraph_share"] == 0 for d in docs)


def test_abusive_documents_are_dropped_with_rule_and_score(tmp_path):
    rng = random.Random(0)
    texts = ["\n".join(rng.sample(ABUSIVE, 3)) for _ in range(20)]
    stage = ToxicityStage(drops_dir=str(tmp_path))
    docs = [Document(text=t, id=f"a{i}", metadata={"language": "en"}) for i, t in enumerate(texts)]
    kept = list(stage.run(iter(docs)))
    assert kept == []
    with gzip.open(tmp_path / "toxicity" / "00000.jsonl.gz", "rt") as handle:
        rows = [json.loads(line) for line in handle]
    assert len(rows) == 20
    assert {r["stage"] for r in rows} == {"toxicity"}
    assert {r["rule"] for r in rows} == {"toxic_document"}
    assert all(r["score"] >= ToxicityConfig().threshold for r in rows)
    assert stage.stats["dropped_toxic_document"].total == 20


def test_toxic_paragraph_share_drops_a_thread_the_document_score_lets_through():
    ordinary = prose_lines()[:8]
    text = "\n".join(ordinary[:4] + [ABUSIVE[0]] + ordinary[4:8] + [ABUSIVE[1]])  # 2 of 10 paragraphs
    stage = ToxicityStage(ToxicityConfig(threshold=1.0))  # the document rule off: only the share decides
    ((_, share, toxic),) = stage.score_texts([text])
    assert len(stage.paragraphs(text)) == 10 and share == pytest.approx(0.2) and toxic == 2
    doc = Document(text=text, id="t", metadata={"language": "en"})
    assert stage.process(doc) is None  # 0.2 is not MORE than the default 0.2
    strict = ToxicityStage(ToxicityConfig(threshold=1.0, max_toxic_paragraph_share=0.1))
    drop = strict.process(Document(text=text, id="t", metadata={"language": "en"}))
    assert drop is not None and drop.rule == "toxic_paragraphs" and drop.score == pytest.approx(0.2)
    assert 0 <= drop.extra["toxicity_score"] < 1
    assert doc.metadata["toxicity"]["toxic_paragraph_share"] == pytest.approx(0.2)
    # one toxic paragraph of three is a third, but under min_toxic_paragraphs (2): kept
    short = "\n".join([ordinary[0], ABUSIVE[2], ordinary[1]])
    assert strict.process(Document(text=short, id="s", metadata={"language": "en"})) is None
    one = ToxicityStage(ToxicityConfig(threshold=1.0, max_toxic_paragraph_share=0.1, min_toxic_paragraphs=1))
    assert one.process(Document(text=short, id="s", metadata={"language": "en"})).rule == "toxic_paragraphs"


def test_batches_agree_with_single_documents_and_pickling_drops_the_model():
    texts = pages()[:6] + ["\n".join(ABUSIVE)]
    stage = ToxicityStage()
    batch = [Document(text=t, id=str(i), metadata={"language": "en"}) for i, t in enumerate(texts)]
    verdicts = stage.process_batch(batch)
    clone = pickle.loads(pickle.dumps(stage))
    assert clone._scorer is None
    for doc, verdict in zip(batch, verdicts, strict=True):
        single = Document(text=doc.text, id=doc.id, metadata={"language": "en"})
        again = clone.process(single)
        assert (again and again.rule) == (verdict and verdict.rule)
        assert single.metadata["toxicity"]["score"] == pytest.approx(doc.metadata["toxicity"]["score"], abs=1e-6)
        # the document's counts summed from its paragraphs score as the whole text through the package's vectorizer
        assert doc.metadata["toxicity"]["score"] == pytest.approx(stage._scorer.scores([doc.text])[0], abs=1e-6)
    assert verdicts[-1] is not None and verdicts[-1].rule == "toxic_document"


def test_other_languages_are_kept_unscored_and_counted():
    stage = ToxicityStage()
    abusive = "\n".join(ABUSIVE)
    docs = [
        Document(text=abusive, id="de", metadata={"language": "de"}),
        Document(text=abusive, id="fr", metadata={"language": "fr"}),
        Document(text=abusive, id="de2", metadata={"language": "de"}),
        Document(text=abusive, id="none", metadata={}),  # language stage off: scored, counted
    ]
    verdicts = stage.process_batch(docs)
    assert verdicts[:3] == [None, None, None] and verdicts[3] is not None
    assert all("toxicity" not in d.metadata for d in docs[:3])
    assert stage.stats["toxicity_skipped_de"].total == 2
    assert stage.stats["toxicity_skipped_fr"].total == 1
    assert stage.stats["toxicity_language_unknown"].total == 1


def test_a_fasttext_model_replaces_the_bundled_scorer_for_another_language(tmp_path):
    # labelled lines generated here: German insults vs German-looking neutral sentences
    rng = random.Random(1)
    insults = ["Du Idiot", "Halt die Klappe", "Du Vollidiot", "Verpiss dich", "Du Arschloch", "Du Trottel"]
    neutral = ["Das Wetter", "Der Zug", "Die Sitzung", "Das Handbuch", "Die Bibliothek", "Der Bericht"]
    rest = ["ist heute", "kommt morgen", "steht im Kapitel", "wurde gestern", "liegt auf dem Tisch", "beginnt bald"]

    def line(words: list[str]) -> str:
        return f"{rng.choice(words)} {rng.choice(rest)} {rng.choice(rest)} und {rng.choice(rest)}."

    positives = [line(insults) for _ in range(300)]
    negatives = [line(neutral) for _ in range(300)]
    path = tmp_path / "toxic_de.bin"
    card = train_classifier(
        positives,
        negatives,
        path,
        label="toxic",
        params=Hyperparameters(epoch=25, lr=0.1, word_ngrams=2, calibration="none"),
    )
    assert card.heldout["f1"] >= 0.9
    # a team's own model has its own calibration: its thresholds come from its MODEL.json, not the defaults
    cfg = ToxicityConfig(model=str(path), languages=["de"], threshold=0.5, paragraph_threshold=0.5)
    stage = ToxicityStage(cfg)
    toxic = "\n".join(line(insults) for _ in range(5))
    calm = "\n".join(line(neutral) for _ in range(5))
    docs = [
        Document(text=toxic, id="t", metadata={"language": "de"}),
        Document(text=calm, id="c", metadata={"language": "de"}),
        Document(text=toxic, id="en", metadata={"language": "en"}),  # not in languages: skipped
    ]
    verdicts = stage.process_batch(docs)
    assert verdicts[0] is not None and verdicts[0].rule == "toxic_document" and verdicts[0].score >= 0.5
    assert docs[0].metadata["toxicity"]["toxic_paragraph_share"] == 1.0
    assert verdicts[1] is None and docs[1].metadata["toxicity"]["score"] < 0.5
    assert verdicts[2] is None and stage.stats["toxicity_skipped_en"].total == 1


def test_curation_run_with_toxicity_balances_and_reports_the_rule(tmp_path):
    from pipeline.curate.build import curate_source
    from pipeline.run import account_all, prepare_run_dir, write_curation_report

    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(pages()[:6]):
        (folder / f"page{i}.txt").write_text(text, encoding="utf-8")
    for i in range(3):
        (folder / f"abuse{i}.txt").write_text("\n".join(ABUSIVE[i:] + ABUSIVE[:i]), encoding="utf-8")
    recipe = one_stage_recipe(tmp_path, folder, "t", toxicity={})
    assert [type(s).__name__ for s in build_stages(recipe.stages, str(tmp_path / "d"))] == [
        "ExtractStage",
        "ToxicityStage",
    ]
    layout = prepare_run_dir(recipe)
    curate_source(recipe, recipe.sources[0], layout)
    (account,) = account_all(recipe, layout)
    assert account.balanced and account.read == 9
    assert account.dropped["toxicity"] == {"toxic_document": 3}
    summary = write_curation_report(recipe, layout)
    report = layout.report_md.read_text(encoding="utf-8")
    assert "toxic_document" in report
    # the toxicity section: drops by rule, the six kept pages scored, and (no language stage) all nine counted
    # as scored without a language to check
    section = summary.stages["toxicity"]["sources"]["docs"]
    assert section["dropped"] == {"toxic_document": 3} and section["kept_scored"] == 6
    assert section["skipped"] == {"toxicity_language_unknown": 9}
    assert all(0 <= v < 0.99 for v in section["kept_score_quantiles"].values())
    assert "## Toxicity" in report and "language_unknown: 9" in report
    import json

    assert json.loads(layout.report_json.read_text(encoding="utf-8"))["toxicity"] == summary.stages["toxicity"]


def test_the_forkserver_loads_the_bundled_scorer_once_for_the_ranks(monkeypatch, tmp_path):
    """Each rank loading scikit-learn and the pickles costs ~1.1 CPU-s: the forkserver loads them once."""
    import multiprocess

    from pipeline.curate.toxicity import bundled_scorer
    from pipeline.executor import preload_forkserver

    asked: list[list[str]] = []
    context = multiprocess.get_context("forkserver")
    monkeypatch.setattr(context, "set_forkserver_preload", asked.append)  # not this test process's forkserver
    stage = ToxicityStage(ToxicityConfig())
    assert "pipeline.curate.toxicity_preload" in preload_forkserver([stage]) == asked[0]
    import pipeline.curate.toxicity_preload  # noqa: F401  (what the forkserver imports)

    stage.setup()
    assert stage._scorer is bundled_scorer()  # the rank uses the scorer the forkserver loaded
    model = tmp_path / "m.bin"
    model.write_bytes(b"")  # checked for existence when the stage is built, loaded only in setup
    assert ToxicityStage(ToxicityConfig(model=str(model))).forkserver_preload == ()  # a fastText model: per rank
