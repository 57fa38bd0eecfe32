"""The ``decontaminate`` stage on text no one here wrote, built at run time: sentences of the Python Language
Reference topics pydoc ships (``pydoc_data.topics``) are the eval set; the other topics, cut into ~2 KB
documents, are the training text eval passages get planted into. Decisions are checked against a brute-force
reference (tuples of normalised words, no hashing)."""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

import pytest
import yaml
from datatrove.data import Document

from pipeline.config import load_recipe
from pipeline.curate.build import build_stages
from pipeline.curate.config import DecontaminateConfig
from pipeline.curate.decontaminate import DecontaminateStage, EvalSetError, normalize_words, word_spans
from tests.helpers.curate import one_stage_recipe
from tests.helpers.text import topic_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    items, docs = topic_corpus()
    assert len(items) > 1000 and len(docs) > 50
    path = tmp_path_factory.mktemp("eval") / "topics.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i, sentence in enumerate(items):
            words = sentence.split()
            half = len(words) // 2
            handle.write(json.dumps({"id": f"t{i}", "question": " ".join(words[:half]), "answer": words[half:]}) + "\n")
    stage = DecontaminateStage(DecontaminateConfig(eval_sets=[{"path": str(path), "fields": ["question", "answer"]}]))
    return path, items, docs, stage


def reference(items: list[str], ngram: int = 13, min_words: int = 8):
    normalised = [normalize_words(s) for s in items]
    grams = {tuple(w[i : i + ngram]) for w in normalised if len(w) >= ngram for i in range(len(w) - ngram + 1)}
    shorts = {tuple(w) for w in normalised if min_words <= len(w) < ngram}

    def contaminated(text: str) -> bool:
        words = normalize_words(text)
        if any(tuple(words[i : i + ngram]) in grams for i in range(len(words) - ngram + 1)):
            return True
        return any(
            tuple(words[i : i + n]) in shorts for n in range(min_words, ngram) for i in range(len(words) - n + 1)
        )

    return contaminated


def plant(doc: str, phrase: str, rng: random.Random) -> str:
    spaces = [m.start() for m in re.finditer(" ", doc)]
    at = rng.choice(spaces)
    return f"{doc[:at]}. {phrase}. {doc[at + 1 :]}"


def test_normalisation_and_spans_agree():
    text = "The  Quick, brown_fox -- (jumps) over\n“the” lazy dog’s back… Ünïcode ΟΔΟΣ."
    words = normalize_words(text)
    assert words == ["the", "quick", "brownfox", "jumps", "over", "the", "lazy", "dogs", "back", "ünïcode", "οδος"]
    assert len(word_spans(text)) == len(words)
    assert normalize_words("Hello, World!") == ["hello", "world"]  # the ASCII fast path


def test_planted_passages_are_caught_and_shorter_phrases_kept(corpus):
    _, items, docs, stage = corpus
    contaminated = reference(items)
    clean = [d for d in docs if not contaminated(d)]
    assert len(clean) > 30
    assert all(stage.process(Document(text=d, id="c")) is None for d in clean)
    long_items = [[w for w in s.split() if normalize_words(w)] for s in items]
    long_items = [w for w in long_items if len(w) >= 14]
    rng = random.Random(0)
    caught, kept, trials = 0, 0, 300
    for _ in range(trials):
        words = rng.choice(long_items)
        length = rng.randint(13, min(40, len(words)))
        start = rng.randint(0, len(words) - length)
        doc = plant(rng.choice(clean), " ".join(words[start : start + length]).upper(), rng)
        drop = stage.process(Document(text=doc, id="p"))
        caught += drop is not None
        if drop is not None:
            assert drop.rule == "contaminated_topics" and drop.extra["eval_set"] == "topics" and drop.score >= 1
            assert drop.extra["item"].startswith("t")
    for _ in range(trials):
        while True:
            words = rng.choice(long_items)
            start = rng.randint(0, len(words) - 12)
            doc = plant(rng.choice(clean), " ".join(words[start : start + 12]), rng)
            if not contaminated(doc):  # the neighbouring words could extend the phrase to 13: then it is a match
                break
        kept += stage.process(Document(text=doc, id="k")) is None
    assert caught / trials >= 0.99
    assert kept / trials >= 0.99


def test_agrees_with_brute_force_on_every_document(corpus):
    _, items, docs, stage = corpus
    contaminated = reference(items)
    for doc in docs:
        assert (stage.process(Document(text=doc, id="d")) is not None) == contaminated(doc)


def test_short_items_match_whole_and_tiny_items_are_ignored(tmp_path):
    path = tmp_path / "qa.txt"
    path.write_text("What is the boiling point of water at sea level\nParis\n\n", encoding="utf-8")
    stage = DecontaminateStage(DecontaminateConfig(eval_sets=[str(path)]))
    assert stage.index.stats["qa"] == {"items": 2, "indexed": 1, "too_short": 1, "windows": 1}
    doc = "Trivia night. WHAT is the boiling point of water, at sea level? Nobody knew. Paris is nice."
    drop = stage.process(Document(text=doc, id="1"))
    assert drop is not None and drop.extra == {"eval_set": "qa", "item": "1"}
    assert stage.process(Document(text="the boiling point of water at sea level is 100 C", id="2")) is None
    assert stage.process(Document(text="I went to Paris.", id="3")) is None


def test_cut_mode_removes_the_span_with_its_margin(corpus):
    path, items, docs, _ = corpus
    cfg = DecontaminateConfig(eval_sets=[{"path": str(path), "fields": ["question", "answer"]}], mode="cut")
    stage = DecontaminateStage(cfg)
    contaminated = reference(items)
    clean = [d for d in docs if not contaminated(d)]
    passage = next(s for s in items if len(normalize_words(s)) >= 20)
    host = clean[0]
    text = host[:1000] + " " + passage + " " + host[1000:] + " " + clean[1]
    doc = Document(text=text, id="x")
    assert stage.process(doc) is None
    assert passage not in doc.text and not contaminated(doc.text)
    removed = len(text) - len(doc.text)
    assert len(passage) + 2 * 200 - 10 <= removed <= len(passage) + 2 * 200 + 10
    assert doc.metadata["decontaminate"]["cut"] == 1 and doc.metadata["decontaminate"]["eval_sets"]
    short = Document(text=passage + " and a few words", id="s")
    drop = stage.process(short)
    assert drop is not None and drop.rule == "contaminated_too_short"
    long_items = [s for s in items if len(normalize_words(s)) >= 13][:12]
    many = " ".join(clean[i % len(clean)][:600] + " " + s for i, s in enumerate(long_items))
    drop = stage.process(Document(text=many, id="m"))
    assert drop is not None and drop.rule == "contaminated_too_many_matches" and drop.score > 10


def test_bad_eval_sets_are_clear_errors(tmp_path):
    with pytest.raises(EvalSetError, match="not found"):
        DecontaminateStage(DecontaminateConfig(eval_sets=[str(tmp_path / "missing.jsonl")]))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{oops\n', encoding="utf-8")
    with pytest.raises(EvalSetError, match=r"bad.jsonl:2: not JSON"):
        DecontaminateStage(DecontaminateConfig(eval_sets=[str(bad)])).setup()
    bad.write_text('{"question": "x"}\n', encoding="utf-8")
    with pytest.raises(EvalSetError, match=r"none of the fields \['text'\]"):
        DecontaminateStage(DecontaminateConfig(eval_sets=[str(bad)])).setup()
    with pytest.raises(ValueError, match="unique"):
        DecontaminateConfig(eval_sets=[str(bad), str(tmp_path / "x" / "bad.jsonl")])


def test_gzipped_jsonl_and_pickling(tmp_path):
    import pickle

    path = tmp_path / "eval.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "a", "text": "one two three four five six seven eight nine ten"}) + "\n")
    stage = DecontaminateStage(DecontaminateConfig(eval_sets=[str(path)]))
    stage.setup()
    clone = pickle.loads(pickle.dumps(stage))
    assert clone._index is None  # each rank builds its own index
    assert clone.process(Document(text="x one two three four five six seven eight nine ten y", id="1")) is not None


def test_recipe_wires_the_stage_between_quality_and_pii(tmp_path, corpus):
    path = corpus[0]
    recipe_path = tmp_path / "r.yaml"
    data = {
        "name": "d",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": "docs", "kind": "folder", "path": str(tmp_path)}],
        "stages": {"decontaminate": {"eval_sets": [{"path": str(path), "fields": ["question", "answer"]}]}},
    }
    recipe_path.write_text(yaml.safe_dump(data))
    recipe = load_recipe(recipe_path)
    assert recipe.stages.decontaminate.ngram == 13 and recipe.stages.decontaminate.mode == "drop"
    names = [type(s).__name__ for s in build_stages(recipe.stages, str(tmp_path / "dropped"))]
    assert names.index("QualityStage") < names.index("DecontaminateStage") < names.index("PIIStage")


def test_curation_run_accounts_for_contaminated_documents(tmp_path, corpus):
    from pipeline.curate.build import curate_source
    from pipeline.run import account_all, prepare_run_dir

    path, items, docs, _ = corpus
    contaminated = reference(items)
    clean = [d for d in docs if not contaminated(d)][:10]
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(clean):
        (folder / f"clean{i}.txt").write_text(text, encoding="utf-8")
    passage = next(s for s in items if len(normalize_words(s)) >= 20)
    for i in range(3):
        (folder / f"leak{i}.txt").write_text(
            clean[i][:1500] + "\n\n" + passage + "\n\n" + clean[i][1500:], encoding="utf-8"
        )
    eval_sets = [{"path": str(path), "fields": ["question", "answer"]}]
    recipe = one_stage_recipe(tmp_path, folder, "d", decontaminate={"eval_sets": eval_sets})
    layout = prepare_run_dir(recipe)
    curate_source(recipe, recipe.sources[0], layout)
    (account,) = account_all(recipe, layout)
    assert account.balanced and account.read == 13
    assert account.dropped["decontaminate"] == {"contaminated_topics": 3}
    rows = []
    for file in Path(layout.dropped("docs"), "decontaminate").glob("*.jsonl.gz"):
        with gzip.open(file, "rt") as handle:
            rows += [json.loads(line) for line in handle]
    assert sorted(r["id"] for r in rows) == [f"leak{i}.txt" for i in range(3)]
    assert all(r["eval_set"] == "topics" and r["item"].startswith("t") for r in rows)


class _Payload:
    """Unpickling this opens (creates) ``marker``: the code-execution probe of issue 19 X1."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _qa_stage(tmp_path: Path) -> DecontaminateStage:
    path = tmp_path / "qa.txt"
    path.write_text("What is the boiling point of water at sea level\nthe quick brown fox jumps over the lazy dog\n")
    return DecontaminateStage(DecontaminateConfig(eval_sets=[str(path)]))


def test_a_pickle_planted_in_the_run_folder_never_runs(tmp_path):
    """X1: a payload at the old (``.pkl``) and the new (``.npz``) index path, the latter even with a card whose
    SHA-256 matches it, is never executed; the index is rebuilt and the stage still finds its matches."""
    import hashlib
    import pickle

    from pipeline.curate.decontaminate import INDEX_FORMAT, index_fingerprint

    stage = _qa_stage(tmp_path)
    folder = tmp_path / "run" / "stages" / "decontaminate"
    folder.mkdir(parents=True)
    marker = tmp_path / "marker"
    payload = pickle.dumps(_Payload(marker))
    stem = f"eval-index-{index_fingerprint(stage.config)}"
    (folder / f"{stem}.pkl").write_bytes(payload)
    (folder / f"{stem}.npz").write_bytes(payload)
    card = {"format": INDEX_FORMAT, "sha256": hashlib.sha256(payload).hexdigest()}
    (folder / f"{stem}.json").write_text(json.dumps(card))
    pickle.loads(pickle.dumps(_Payload(tmp_path / "probe")))  # the probe itself works when unpickled
    assert (tmp_path / "probe").exists()

    path = stage.prepare_index(folder)
    assert path.name == f"{stem}.npz" and not marker.exists()
    rank = pickle.loads(pickle.dumps(stage))  # what a rank gets: loads the rebuilt file
    rank.setup()
    assert not marker.exists()
    assert rank.process(Document(text="Q: what is the boiling point of water at sea level? A: 100 C", id="1"))
    assert rank.process(Document(text="nothing to see here at all today", id="2")) is None
    assert (folder / f"{stem}.pkl").read_bytes() == payload  # never opened, and not ours to delete


def test_the_index_file_round_trips_and_a_changed_file_is_rebuilt(tmp_path):
    import pickle

    from pipeline.curate.decontaminate import EvalIndex

    stage = _qa_stage(tmp_path)
    path = stage.prepare_index(tmp_path / "idx")
    loaded = EvalIndex.load(path)
    built = EvalIndex(stage.config)
    assert loaded is not None and loaded.stats == built.stats and loaded.vocab == built.vocab
    assert [t[:3] for t in loaded.tables] == [t[:3] for t in built.tables]
    words = normalize_words("so the quick brown fox jumps over the lazy dog again")
    assert loaded.find(words)[1] == built.find(words)[1] == 1

    data = bytearray(path.read_bytes())  # a byte changed after prepare_index checked it: the rank rebuilds
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    assert EvalIndex.load(path) is None
    rank = pickle.loads(pickle.dumps(stage))
    rank.setup()
    assert rank.stats["eval_index_rebuilt"].total == 1
    assert stage.prepare_index(tmp_path / "idx") == path and EvalIndex.load(path) is not None  # parent rebuilds
