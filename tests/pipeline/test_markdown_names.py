"""Issue 19 item 7: names from the input (file names, ids) are escaped where report.md shows them."""

from __future__ import annotations

from pathlib import Path

from tests.flows.test_warnings import curate_in_process

#: file names an attacker (or an unlucky crawl) can choose: an escape sequence, Markdown syntax, a backtick
NAMES = ["esc\x1b[2Jclear.txt", "*bold* [link](evil.md).txt", "tick`and|pipe.txt"]


def test_helpers_make_names_inert() -> None:
    from pipeline.markdown import md_code, md_text, md_url

    assert md_code("a\x1b[2Jb\nc") == "`a\\x1b[2Jb\\x0ac`"
    assert md_code("x`y``z") == "```x`y``z```" and md_code("`edge") == "`` `edge ``"
    assert md_code("a|b", table=True) == "`a\\|b`"
    assert md_text("*bold* [x](y)") == "\\*bold\\* \\[x\\]\\(y\\)"
    assert md_code("caf\udce9.txt") == "`caf\\xe9.txt`"  # a byte of a name that is not UTF-8
    assert md_url("http://example.com/a") == "<http://example.com/a>"
    assert md_url("http://e.com/>x<") == "`http://e.com/>x<`"


def test_report_shows_file_names_escaped(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in NAMES:  # one short line each: dropped by quality, so report.md shows each id as an example
        (docs / name).write_text("A short line of text.\n", encoding="utf-8")
    summary, run = curate_in_process(docs, tmp_path / "run")
    assert summary.sources[0]["read"] == 3
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "\x1b" not in report
    assert "`esc\\x1b[2Jclear.txt`" in report
    assert "`*bold* [link](evil.md).txt`" in report  # inside a code span: not a link, not emphasis
    assert "``tick`and|pipe.txt``" in report
