"""The quality rules on text no one here wrote, built at run time and never stored in the repository:

* pydoc's plain-text pages of 64 stdlib modules (docstrings by the CPython authors);
* the Python Language Reference topics that pydoc ships (``pydoc_data.topics``), as text and as HTML pages
  extracted by the extract stage;
* man pages under /usr/share/man, rendered with ``man``: a pinned list of base-system pages
  (``tests/helpers/real_text.py``), in English and every translation present; a language with fewer than 3 of
  them is skipped with a printed reason, and the test when English is;
* spam and boilerplate pages assembled from the words of those texts.

It checks that the default rules (the papers' definitions) and the recipes keep real documentation, that
``compat: datatrove`` still makes datatrove's decisions, that obvious spam is dropped, and that every
language the LID model can emit has rules or a counted skip.
"""

from __future__ import annotations

import html
import importlib
import pydoc
import random
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest
from datatrove.data import Document

from pipeline.config import load_recipe
from pipeline.curate.config import QualityConfig
from pipeline.curate.quality import STOP_WORDS, QualityStage
from pipeline.text import NO_SPACE_LANGUAGES, normalize_text
from tests.helpers.real_text import (
    MAX_ENGLISH_MARKER_SHARE,
    english_marker_share,
    pinned_man_pages,
    render_man,
)

REPO = Path(__file__).resolve().parents[2]

MODULES = [
    "argparse", "base64", "bisect", "calendar", "collections", "contextlib", "copy", "csv", "dataclasses",
    "datetime", "decimal", "difflib", "enum", "fnmatch", "fractions", "functools", "getopt", "gettext", "glob",
    "gzip", "hashlib", "heapq", "hmac", "html", "inspect", "io", "ipaddress", "itertools", "json", "logging",
    "math", "operator", "os", "pathlib", "pickle", "pprint", "queue", "random", "re", "secrets", "shlex",
    "shutil", "socket", "sqlite3", "statistics", "string", "struct", "subprocess", "tarfile", "tempfile",
    "textwrap", "threading", "time", "timeit", "tokenize", "traceback", "typing", "unittest", "urllib.parse",
    "uuid", "warnings", "weakref", "zipfile", "zlib",
]  # fmt: skip


@lru_cache(maxsize=1)
def pydoc_pages() -> tuple[str, ...]:
    return tuple(
        normalize_text(pydoc.render_doc(importlib.import_module(name), renderer=pydoc.plaintext)) for name in MODULES
    )


@lru_cache(maxsize=1)
def reference_topics() -> dict[str, str]:
    from pydoc_data.topics import topics

    return {name: normalize_text(text) for name, text in topics.items()}


def topic_page(title: str, text: str) -> str:
    """An HTML page as a documentation site would serve it: paragraphs, indented code blocks as <pre>."""
    blocks = []
    for para in re.split(r"\n\s*\n", text.strip()):
        if para.startswith(("   ", "\t")):
            blocks.append(f"<pre>{html.escape(para)}</pre>")
        else:
            blocks.append(f"<p>{html.escape(' '.join(para.split()))}</p>")
    return (
        f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> <a href='/ref'>Reference</a>"
        f"</nav><main><h1>{html.escape(title)}</h1>{''.join(blocks)}</main><footer>Copyright</footer></body></html>"
    )


@lru_cache(maxsize=1)
def extracted_topic_pages() -> dict[str, str]:
    from pipeline.curate.extract import extract_resiliparse

    return {
        name: normalize_text(extract_resiliparse(topic_page(name, text))) for name, text in reference_topics().items()
    }


def kept_share(config: QualityConfig, texts, language: str = "en") -> tuple[float, list]:
    stage = QualityStage(config)
    failures = [(i, failure) for i, text in enumerate(texts) if (failure := stage.judge(text, language)[0])]
    return 1 - len(failures) / len(texts), failures


def recipe_quality(name: str) -> QualityConfig:
    return load_recipe(REPO / "configs" / name).stages.quality


GOPHER_QUALITY_ONLY = {"gopher_repetition": None, "c4": None, "fineweb": None}

# ---------------------------------------------------------------- the default rules keep real documentation


def test_gopher_quality_rules_keep_real_documentation_and_datatrove_does_not() -> None:
    pages = pydoc_pages()
    share, failures = kept_share(QualityConfig(**GOPHER_QUALITY_ONLY), pages)
    print(f"Gopher quality (paper): {share:.1%} of {len(pages)} pydoc pages kept")
    assert share >= 0.9, failures
    # datatrove's spaCy-style split counts '(' ',' '|' as words without a letter: most real pages fail
    share_dt, failures_dt = kept_share(QualityConfig(compat="datatrove", **GOPHER_QUALITY_ONLY), pages)
    print(f"Gopher quality (compat: datatrove): {share_dt:.1%} kept")
    assert share_dt <= 0.2
    assert sum(rule == "gopher_below_alpha_threshold" for _, (rule, _) in failures_dt) >= 0.8 * len(failures_dt)


def test_web_recipe_keeps_reference_pages_served_as_html() -> None:
    pages = extracted_topic_pages()
    # pages of at least 100 words: shorter topics are stubs that Gopher's 50-word and C4's 3-sentence minimums
    # drop by design, whatever their quality
    long_pages = [text for name, text in pages.items() if len(reference_topics()[name].split()) >= 100]
    assert len(long_pages) >= 40
    share, failures = kept_share(recipe_quality("web.yaml"), long_pages)
    print(f"web.yaml: {share:.1%} of {len(long_pages)} Language Reference pages kept")
    assert share >= 0.9, failures
    assert kept_share(QualityConfig(compat="datatrove"), long_pages)[0] <= 0.1


def test_domain_recipe_keeps_reference_text() -> None:
    topics = list(reference_topics().values())
    share, failures = kept_share(recipe_quality("domain.yaml"), topics)
    print(f"domain.yaml: {share:.1%} of {len(topics)} Language Reference topics (plain text) kept")
    assert share >= 0.9, failures
    # the only drops are stubs under Gopher's 50 words
    assert {rule for _, (rule, _) in failures} <= {"gopher_short_doc"}


#: pages judged per language (English has more), and the fewest that make a language worth judging
MAN_PAGES_PER_LANGUAGE = {"en": 10}
MAN_PAGES_DEFAULT = 4
MIN_MAN_PAGES = 3


def pinned_man_samples() -> tuple[dict[str, list[tuple[str, str]]], list[str]]:
    """language → [(page, rendered text)] of the pinned pages this machine has (``PINNED_MAN_PAGES``), and the
    languages left out, each with its reason. Pages under 100 words are stubs; a translated page whose text is
    mostly English is a partial translation (language identification calls it English), not a page in its
    folder's language."""
    samples: dict[str, list[tuple[str, str]]] = {}
    reasons: list[str] = []
    for language, files in sorted(pinned_man_pages().items()):
        texts, left_out = [], []
        for path in files:
            if len(texts) >= MAN_PAGES_PER_LANGUAGE.get(language, MAN_PAGES_DEFAULT):
                break
            text = render_man(path)
            text = normalize_text(text) if text else ""
            if len(text.split()) < 100:
                left_out.append(f"{path.name}: under 100 words")
            elif language != "en" and english_marker_share(text) > MAX_ENGLISH_MARKER_SHARE:
                left_out.append(f"{path.name}: mostly English")
            else:
                texts.append((path.name, text))
        if len(texts) >= MIN_MAN_PAGES:
            samples[language] = texts
        else:
            reasons.append(
                f"[{language}] skipped: {len(texts)} of the pinned pages usable (need {MIN_MAN_PAGES}); "
                f"{len(files)} present" + (f", left out: {', '.join(left_out)}" if left_out else "")
            )
    return samples, reasons


def test_domain_recipe_keeps_man_pages_in_every_language_present() -> None:
    samples, reasons = pinned_man_samples()
    for reason in reasons:
        print(f"domain.yaml, man pages {reason}")
    if "en" not in samples:
        pytest.skip("no man command, or fewer than 3 of the pinned English man pages on this machine")
    config = recipe_quality("domain.yaml")
    total = kept = 0
    for language, pages in sorted(samples.items()):
        share, failures = kept_share(config, [text for _, text in pages], language)
        names = ", ".join(name for name, _ in pages)
        print(f"domain.yaml, man pages [{language}]: {share:.0%} of {len(pages)} kept ({names})")
        total, kept = total + len(pages), kept + round(share * len(pages))
        assert share >= 0.66, (language, [(pages[i][0], failure) for i, failure in failures])
    assert kept / total >= 0.9, samples.keys()


# ---------------------------------------------------------------- compat: datatrove is datatrove


def test_compat_datatrove_reproduces_datatrove_decisions_on_real_text() -> None:
    pytest.importorskip("spacy")  # datatrove splits English words with a blank spaCy pipeline
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )

    texts = list(pydoc_pages()[:20]) + list(reference_topics().values())[:40]
    texts += list(extracted_topic_pages().values())[:40]
    # with and without the alpha rule, so that both outcomes are well represented
    for alpha in (0.8, None):
        filters = [
            GopherQualityFilter(max_non_alpha_words_ratio=alpha),
            GopherRepetitionFilter(),
            C4QualityFilter(),
            FineWebQualityFilter(),
        ]
        stage = QualityStage(QualityConfig(compat="datatrove", gopher_quality={"min_alpha_words_ratio": alpha}))
        same = kept = 0
        for text in texts:
            doc, theirs = Document(text=text, id="x"), None
            for step in filters:
                verdict = step.filter(doc)
                if verdict is not True:
                    theirs = verdict
                    break
            ours = stage.judge(text, "en")[0]
            kept += theirs is None
            same += (theirs is None) == (ours is None)
        print(f"compat: datatrove, alpha rule {alpha}: {same}/{len(texts)} equal decisions ({kept} kept by datatrove)")
        assert same / len(texts) >= 0.97
        if alpha is None:
            assert kept >= 20


# ---------------------------------------------------------------- obvious spam is still dropped


def _real_words() -> list[str]:
    words = re.findall(r"[A-Za-z]{4,}", " ".join(reference_topics().values()))
    return sorted({w.lower() for w in words} - set(STOP_WORDS["en"]))


def spam_pages() -> dict[str, str]:
    """Spam and boilerplate assembled at run time from the real texts' words and sentences."""
    rng = random.Random(11)
    words = _real_words()
    sentences = re.findall(
        r"[A-Z][^.!?\n]{40,200}[.!?]", " ".join(" ".join(t.split()) for t in reference_topics().values())
    )
    pick = lambda k: " ".join(rng.choice(words) for _ in range(k))  # noqa: E731
    pages = {
        "keyword_stuffing": "\n".join(pick(12).capitalize() + "." for _ in range(20)),
        "repeated_sentence": "\n".join([rng.choice(sentences)] * 25),
        "spun_seo": " ".join(
            f"Best {w} online, cheap {w} deals, buy {w} now and save on {w} today." for w in rng.sample(words, 12)
        )
        * 3,
        "link_farm": "\n".join(f"- {pick(2)}" for _ in range(60)),
        "navigation": "\n".join(rng.choice(["Home", "About", "Contact", "Blog", "Login", "Shop"]) for _ in range(80)),
        "lorem_ipsum": "\n\n".join(rng.sample(sentences, 6))
        + "\n\nLorem ipsum dolor sit amet, consectetur adipiscing elit.",
        "cookie_wall": "We use cookies to improve your experience. Accept all cookies to continue.",
        "login_wall": "Please log in to continue.\nUsername\nPassword\nForgot your password?\nSign up",
        "number_table": "\n".join(" ".join(str(rng.randint(0, 99999)) for _ in range(10)) for _ in range(40)),
        "hashtags": " ".join(f"#{rng.choice(words)}" for _ in range(120)),
        "ellipsis_teasers": "\n".join(rng.choice(sentences)[:60] + "..." for _ in range(20)),
        "repeated_paragraphs": "\n\n".join([" ".join(rng.sample(sentences, 3))] * 6),
    }
    return {name: normalize_text(text) for name, text in pages.items()}


@pytest.mark.parametrize("config_name", ["default", "web.yaml"])
def test_obvious_spam_and_boilerplate_are_dropped(config_name: str) -> None:
    config = QualityConfig() if config_name == "default" else recipe_quality("web.yaml")
    stage = QualityStage(config)
    kept = {name: stage.judge(text, "en") for name, text in spam_pages().items()}
    assert not [name for name, (failure, _, _) in kept.items() if failure is None], kept


# ---------------------------------------------------------------- every language the LID model emits


def _lid_languages() -> list[str]:
    from pipeline.curate.language import default_model_path, label_to_language, load_model

    try:
        model = load_model(default_model_path())
    except (FileNotFoundError, ValueError) as error:
        pytest.skip(f"no LID model: {error}")
    return sorted({label_to_language(label) for label in model.get_labels()})


def _english_page() -> str:
    """A real English page that the default rules keep: the first long Language Reference page."""
    stage = QualityStage(QualityConfig())
    for _name, text in sorted(extracted_topic_pages().items()):
        if len(text.split()) >= 300 and stage.judge(text, "en")[0] is None:
            return text
    raise AssertionError("no Language Reference page passes the default rules")


def test_every_lid_language_has_rules_or_a_counted_skip(tmp_path) -> None:
    languages = _lid_languages()
    assert len(languages) >= 170
    with_list = [lang for lang in languages if lang in STOP_WORDS]
    assert len(with_list) >= 55  # the languages with the most web text have a list
    for words in STOP_WORDS.values():
        assert words == [w for w in words if w == unicodedata.normalize("NFC", w) and w == w.lower()]
    # a language without a list: the stop-word rule is skipped, the skip is counted and noted, the page kept
    stage = QualityStage(QualityConfig(), drops_dir=str(tmp_path))
    text = _english_page()
    docs = [Document(text=text, id=lang, metadata={"language": lang}) for lang in languages if lang not in STOP_WORDS]
    kept = list(stage.run(iter(docs)))
    assert len(kept) == len(docs)  # never a mass drop for want of a list
    stats = stage.stats.to_dict()["stats"]
    for doc in kept:
        assert "gopher_enough_stop_words" in doc.metadata["quality_skipped"], doc.id
        assert stats[f"quality_skipped_gopher_enough_stop_words_{doc.id}"] == 1
    # no-space scripts: stop words are substrings, the average-word-length rule is skipped with a note
    assert {"zh", "ja"} <= set(STOP_WORDS) and {"zh", "ja", "th"} <= NO_SPACE_LANGUAGES


THAI = (
    "ประเทศไทยตั้งอยู่ในเอเชียตะวันออกเฉียงใต้ มีกรุงเทพมหานครเป็นเมืองหลวงและเป็นเมืองที่ใหญ่ที่สุดของประเทศ "
    "คนไทยส่วนใหญ่นับถือศาสนาพุทธ และมีประเพณีที่สำคัญหลายอย่าง เช่น วันสงกรานต์ซึ่งเป็นวันขึ้นปีใหม่ของไทย "
    "อาหารไทยมีชื่อเสียงไปทั่วโลก เพราะมีรสชาติที่หลากหลายทั้งเปรี้ยว หวาน เค็ม และเผ็ด"
)


def test_thai_is_not_dropped_for_lacking_sentence_marks() -> None:
    """Thai separates sentences with spaces, not marks: C4's terminal-punctuation rule would drop every line."""
    text = "\n".join(THAI.split(" คนไทย"))
    verdict = QualityStage(QualityConfig()).assess(text, "th")
    assert verdict.failure is None, verdict
    assert {"c4_terminal_punctuation", "fineweb_line_punct_ratio", "gopher_enough_stop_words"} <= set(verdict.skipped)
    # the same rule still judges languages that do write marks
    assert QualityStage(QualityConfig()).assess(text.replace("\n", " "), "en").failure is not None
