"""The extract stage: the HTTP-200 HTML gate, extraction in the sandbox, and every failure a counted drop."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest
from datatrove.data import Document
from resiliparse.parse.html import HTMLTree

import pipeline.curate.extract as extract_module
from pipeline.curate.config import ExtractConfig
from pipeline.curate.extract import ExtractStage

PAGE = (
    "<html><body><nav><a href='/'>Home</a> <a href='/about'>About</a></nav><article><h1>Rates</h1>"
    "<p>The central bank kept its policy rate unchanged on Thursday and said inflation was easing.</p>"
    "<p>Analysts expect the first cut early next year if wage growth keeps slowing.</p></article>"
    "<footer>© 2026 Example News</footer></body></html>"
)


def html_doc(doc_id: str, text: str = PAGE, **meta) -> Document:
    return Document(text=text, id=doc_id, metadata={"source": "web", "format": "html", "http_status": 200, **meta})


def run_stage(stage: ExtractStage, docs: list[Document]) -> list[Document]:
    return list(stage.run(iter(docs), rank=0))


def drop_rows(drops: Path) -> dict[str, dict]:
    with gzip.open(drops / "extract" / "00000.jsonl.gz", "rt") as handle:
        return {row["id"]: row for row in map(json.loads, handle)}


def test_gate_and_extraction_keep_or_drop_every_document(tmp_path: Path) -> None:
    docs = [
        html_doc("ok"),
        html_doc("moved", http_status=301),
        html_doc("image", content_type="image/png"),
        html_doc("chrome-only", text="<html><body><nav><a href='/'>Home</a></nav></body></html>"),
        Document(text="plain notes", id="notes.txt", metadata={"source": "web", "format": "text"}),
        Document(text="", id="f#9", metadata={"source": "web", "read_error": "truncated_file", "file": "f"}),
    ]
    kept = run_stage(ExtractStage(drops_dir=str(tmp_path)), docs)
    assert [d.id for d in kept] == ["ok", "notes.txt"]
    assert "central bank" in kept[0].text and "Home" not in kept[0].text
    rows = drop_rows(tmp_path)
    assert {i: (r["stage"], r["rule"]) for i, r in rows.items()} == {
        "moved": ("extract", "http_status"),
        "image": ("extract", "non_html"),
        "chrome-only": ("extract", "empty_extraction"),
        "f#9": ("read", "truncated_file"),
    }
    assert rows["moved"]["score"] == 301 and rows["f#9"]["file"] == "f"


def test_extractor_failures_are_counted_drops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fragile(html: str, *args) -> str:  # runs in the forked sandbox child
        if "RAISE" in html:
            raise ValueError("parser gave up")
        if "DIE" in html:
            os._exit(3)
        if "HANG" in html:
            while True:
                pass
        return "extracted text"

    monkeypatch.setattr(extract_module, "extract_resiliparse", fragile)
    docs = [
        html_doc("raise", "<p>RAISE</p>"),
        html_doc("die", "<p>DIE</p>"),
        html_doc("hang", "<p>HANG</p>"),
        html_doc("after", "<p>fine</p>"),
    ]
    kept = run_stage(ExtractStage(ExtractConfig(timeout_s=0.5), drops_dir=str(tmp_path)), docs)
    assert [d.text for d in kept] == ["extracted text"]  # the sandbox is replaced and the run goes on
    rows = drop_rows(tmp_path)
    assert rows["raise"]["rule"] == "extraction_error" and "parser gave up" in rows["raise"]["error"]
    assert rows["die"]["rule"] == "extraction_error"
    assert rows["hang"]["rule"] == "extraction_timeout"


def _licence_text() -> str:
    """An English licence no one here wrote: the GPL from Debian's common-licenses, else pydoc's help on str."""
    for path in ("/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/GPL-2"):
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read()
    import pydoc

    return pydoc.plaintext.document(str)


def test_unicode_spaces_and_invisible_characters_are_normalised_once(tmp_path: Path) -> None:
    from pipeline.curate.config import QualityConfig
    from pipeline.curate.quality import QualityStage

    licence = _licence_text()
    paragraphs = [p for p in licence.split("\n\n") if p.strip()][:40]
    # the way HTML writers keep words together: &nbsp; between words, &shy; inside them, a zero-width space
    html_body = "".join(
        "<p>" + p.replace(" ", "&nbsp;", 3).replace("ion", "i&shy;on").replace(". ", ".&#8203; ") + "</p>"
        for p in paragraphs
    )
    # a text input exported with NBSPs, CRLF, a BOM and soft hyphens (here inside every stop word)
    hyphenated = re.sub(
        r"\b(the|be|to|of|and|that|have|with)\b",
        lambda m: m[0][0] + "\u00ad" + m[0][1:],
        "\n\n".join(paragraphs),
        flags=re.I,
    )
    text_input = "\ufeff" + hyphenated.replace(" ", "\u00a0").replace("\n", "\r\n")
    docs = [
        html_doc("licence.html", "<html><body>" + html_body + "</body></html>"),
        Document(text=text_input, id="licence.txt", metadata={"source": "web", "format": "text"}),
    ]
    stage = ExtractStage(drops_dir=str(tmp_path))
    kept = run_stage(stage, docs)
    assert [d.id for d in kept] == ["licence.html", "licence.txt"]
    for doc in kept:
        assert not set(doc.text) & set("\u00a0\u00ad\u200b\ufeff\r"), doc.id
        # the English licence passes the stop-word rule (and every Gopher rule) once normalised
        verdict = QualityStage(QualityConfig(gopher_repetition=None, c4=None, fineweb=None)).assess(doc.text, "en")
        assert verdict.failure is None and verdict.metrics["stop_words"] >= 2, (doc.id, verdict)
    assert stage.stats.to_dict()["stats"]["normalised"] == 2
    # without normalisation the same text input has no stop word left: the rule would drop an English licence
    raw = QualityStage(QualityConfig(gopher_repetition=None, c4=None, fineweb=None)).assess(text_input, "en")
    assert raw.failure == ("gopher_enough_stop_words", 0)


def test_normalize_text_contract() -> None:
    import unicodedata

    from pipeline.text import SPACE_CHARS, normalize_text

    unicode_spaces = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs" and c != 0x20)
    assert unicode_spaces == SPACE_CHARS
    assert normalize_text("a\u00a0b\u2009c\u3000d\u202fe") == "a b c d e"
    assert normalize_text("soft\u00adhyphen zero\u200bwidth \ufeffbom \u200eltr") == "softhyphen zerowidth bom ltr"
    assert normalize_text("one\r\ntwo\rthree\u2028four\u2029five\x0csix") == "one\ntwo\nthree\nfour\n\nfive\nsix"
    assert normalize_text("cafe\u0301") == "café"  # NFC
    # kept: ZWNJ/ZWJ spell Persian and Indic words and emoji; full-width and superscript forms are not rewritten
    for kept in ("می\u200cخواهم", "क्\u200dष", "ＡＢＣ x²", "plain ascii\ttext\n"):
        assert normalize_text(kept) == kept


def test_a_pages_own_table_of_contents_is_not_extracted() -> None:
    """DocBook/MediaWiki-style TOCs repeat every heading; left in, the repetition rules drop real manuals."""
    import html
    from pydoc_data.topics import topics

    from pipeline.curate.extract import extract_resiliparse

    names = ["assert", "pass", "del", "return"]
    headings = [f"{i}. The {name} statement" for i, name in enumerate(names, 1)]
    toc = "".join(f'<dt><a href="#s{i}">{html.escape(h)}</a></dt>' for i, h in enumerate(headings, 1))
    body = "".join(
        f'<h2 id="s{i}">{html.escape(h)}</h2><p>{html.escape(topics[n][:600])}</p>'
        for i, (h, n) in enumerate(zip(headings, names, strict=True), 1)
    )
    for toc_html in (
        f'<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc">{toc}</dl></div>',
        f'<div id="toc"><h2>Contents</h2><ul>{toc}</ul></div>',
    ):
        page = f"<html><body><h1>Simple statements</h1>{toc_html}{body}</body></html>"
        for main_content in (True, False):
            text = extract_resiliparse(page, main_content=main_content)
            assert all(text.count(h) == 1 for h in headings), text[:400]
            assert "Table of Contents" not in text and " ".join(topics["pass"].split()[4:12]) in text
        kept = extract_resiliparse(page, main_content=False, drop_toc=False)
        assert all(kept.count(h) == 2 for h in headings)


HELP_PAGE = """<html><body><header><ul><li><a href="/">Home</a></li><li><a href="/help">Help</a></li></ul></header>
<main><h1>Export settings</h1>
<p>The export dialog sets how the table is written to a text file when the document is saved in that format.</p>
<h2>Field options</h2>
<ul><li><p>Each field is written with the separator chosen in the dialog, between the values of one row.</p></li>
<li><p>Text cells are quoted when they contain the separator, so that a reader can split the row again.</p></li></ul>
<p>See also:</p><ul><li><a href="/a">Import settings</a></li><li><a href="/b">Character sets</a></li></ul>
<p>The settings are kept for the next export until they are changed in this dialog again.</p></main>
<footer><ul><li><a href="/c">Contact</a></li></ul></footer></body></html>"""


@pytest.mark.parametrize("keep", [True, False])
def test_main_content_keeps_bullet_lists_of_text_but_not_link_lists(keep: bool) -> None:
    """resiliparse's main-content mode drops every <ul>; the option lists of help-page templates are text."""
    text = extract_module.extract_resiliparse(HELP_PAGE, content_lists=keep)
    assert ("separator chosen in the dialog" in text) is keep
    assert ("quoted when they contain" in text) is keep
    assert "Import settings" not in text and "Contact" not in text and "Home" not in text  # navigation stays out
    assert "kept for the next export" in text
    assert ExtractConfig().keep_content_lists is True


def _command_page(element_id: str) -> str:
    """A reference page as DocBook writes one: navigation, then the command's entry in an element whose id is
    derived from its title (the text is the interpreter's own help on the ``del`` statement)."""
    import html
    from pydoc_data.topics import topics

    paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in topics["del"].split("\n\n") if p.strip())
    return (
        '<html><body><div class="navheader"><a href="a.html">Prev</a> <a href="b.html">Next</a></div>'
        f'<div class="refentry" id="{element_id}"><h2>DELETE</h2>{paragraphs}</div></body></html>'
    )


@pytest.mark.parametrize("keep", [True, False])
def test_main_content_keeps_the_titled_element_whose_id_reads_as_boilerplate(keep: bool) -> None:
    """resiliparse's main-content mode cuts an element whose id names a comment section: PostgreSQL's page on the
    SQL command COMMENT (``id="SQL-COMMENT"``) came out as its navigation only."""
    from pydoc_data.topics import topics

    wanted = " ".join(topics["del"].split()[10:20])
    assert wanted in extract_module.extract_resiliparse(_command_page("SQL-DELETE"))  # an id that is not cut
    text = extract_module.extract_resiliparse(_command_page("SQL-COMMENT"), keep_titled_content=keep)
    assert (wanted in text) is keep
    assert ExtractConfig().keep_titled_content is True
    # a comment thread beside a page's own content stays cut: the title is not inside it
    article = _command_page("entry").replace("</body>", '<div id="comments"><h3>3 comments</h3>')
    article += "<p>Great post, visit my site for cheap flights and hotels in every city.</p>" * 5 + "</div></body>"
    text = extract_module.extract_resiliparse(article, keep_titled_content=keep)
    assert wanted in text and "cheap flights" not in text


@pytest.mark.parametrize("keep", [True, False])
def test_main_content_keeps_the_titled_text_that_a_script_would_show(keep: bool) -> None:
    """LibreOffice's help writes a page's text once per module in ``<span hidden="true" class="WRITER">`` and
    shows the right one by script: read without the script, the Danish and Hungarian pages were empty."""
    from pydoc_data.topics import topics

    wanted = " ".join(topics["del"].split()[10:20])
    page = _command_page("entry").replace('<div class="refentry" id="entry">', '<span hidden="true" class="WRITER">')
    page = page.replace("</div></body>", "</span></body>")
    assert wanted not in extract_module.extract_resiliparse(page, keep_titled_content=False)
    text = extract_module.extract_resiliparse(page, keep_titled_content=keep)
    assert (wanted in text) is keep
    # hidden text that is not the titled content (a menu the script opens) stays out
    menu = page.replace("</body>", '<div hidden="true"><h3>Menu</h3><p>Open the modules menu here.</p></div></body>')
    assert "Open the modules menu" not in extract_module.extract_resiliparse(menu)


def test_the_titled_element_is_found_by_the_page_title_not_by_the_first_h1() -> None:
    """Django's documentation puts the site header in the first ``h1`` and the page's title in a later one (with
    Sphinx's "¶" permalink), and cuts as boilerplate a section whose id names related links; Texinfo's HTML titles
    a node with an ``h4`` and a section number. The heading that names the page is the one the ``<title>`` opens
    with (the site header is part of the title too), and its element is read again as before."""
    from pydoc_data.topics import topics

    wanted = " ".join(topics["del"].split()[10:20])
    page = _command_page("s-related-objects-reference").replace(
        "<html><body>",
        "<html><head><title>The del statement — Example 3.2 documentation</title></head><body>"
        '<div id="hd"><h1><a href="/">Example 3.2 documentation</a></h1></div>',
    )
    page = page.replace("<h2>DELETE</h2>", '<h1>The del statement<a class="headerlink" href="#x">¶</a></h1>')
    assert wanted not in extract_module.extract_resiliparse(page, keep_titled_content=False)
    assert wanted in extract_module.extract_resiliparse(page)
    texinfo = _command_page("Comments-and-the-Help-System").replace(
        "<html><body>", "<html><head><title>The del statement (Example manual)</title></head><body>"
    )
    texinfo = texinfo.replace("<h2>DELETE</h2>", '<h4 class="subsection">2.7.3 The del statement</h4>')
    assert wanted not in extract_module.extract_resiliparse(texinfo, keep_titled_content=False)
    assert wanted in extract_module.extract_resiliparse(texinfo)
    # no heading in the title: the first h1 (then h2), as before
    tree = HTMLTree.parse("<html><head><title>Other</title></head><body><h2>B</h2><h1>A title</h1></body></html>")
    assert extract_module.title_heading(tree).text == "A title"


def test_the_normalisation_table_applied_per_replacement_is_str_translate() -> None:
    import random

    from pipeline.text import _NORMALISE_TABLE, _translate

    rng = random.Random(0)
    alphabet = [chr(code) for code in _NORMALISE_TABLE] + [*"ab \n\t\u00e9\u4e2d\u200c", "\r\n"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert _translate(text) == text.translate(_NORMALISE_TABLE), repr(text)
