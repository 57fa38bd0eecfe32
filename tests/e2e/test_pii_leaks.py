"""Nothing leaves unredacted (issue 11): a planted value never reaches any file a run writes, nor an artifact.

Each leak path gets planted values the detector certainly finds (an e-mail, a Visa test card, the IBAN
registry's German example, a UK drama-range phone number, an assignment-style API key, a password in a
URL). A real run (the ``curate`` flow, or the pipeline functions the flow calls) writes its run directory,
and every file under it -- curated and deduped documents, ``dropped/`` rows, datatrove logs and stats,
dedup signatures, the report -- is read back, gzip files decompressed, and searched for every form of every
value (spaced, compact, percent-encoded). No assertion looks at the placeholder text itself.

The document bodies are ``pydoc`` output of stdlib modules: text no one here wrote.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import pydoc
from pathlib import Path

import pytest
import yaml

from pipeline.base import drop_row
from pipeline.curate.pii import PIIStage
from pipeline.redact import REDACTION_MARGIN, SNIPPET_CHARS, PIIRedactor, redact_url, redacted_snippet
from tests.helpers.warc import response, write_warc

EMAIL = "jane.doe@example.com"
CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"
PHONE = "+44 20 7946 0958"
API_KEY = "q9w8e7r6t5y4"
PASSWORD = "hunter2pass"
# issue 19 "values that leak": query values under any name, a +tag local part, an e-mail inside a malformed
# JSONL line written with JSON escapes, a file name and an id that are e-mail addresses
QUERY_PASSWORD = "pw4hunter77"
STRIPE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
TAGGED_EMAIL = "john.roe+news@example.org"
QUERY_URL = f"https://shop.example/login?pw={QUERY_PASSWORD}&stripe={STRIPE_KEY}&email={TAGGED_EMAIL}&page=2"
ESCAPED_EMAIL = "ren\\u00e9e.dupont@caf\\u00e9.example"  # as it stands in the JSONL file
FILE_EMAIL = "mary.major@corp.example"
PLANTED_TEXT = f'Write to {EMAIL}, pay with {CARD} or to {IBAN}, call {PHONE}; config: api_key = "{API_KEY}".'
LEAKY_URL = (
    f"https://bob:{PASSWORD}@shop.example/account/{EMAIL.replace('@', '%40')}"
    f"?email={EMAIL.replace('@', '%40')}&api_key={API_KEY}&page=2#access_token={API_KEY}"
)
# every form a planted value may take in a file: as written, compact, percent- or form-encoded
NEEDLES = [
    EMAIL,
    EMAIL.replace("@", "%40"),
    CARD,
    CARD.replace(" ", ""),
    CARD.replace(" ", "+"),
    IBAN,
    IBAN.replace(" ", ""),
    IBAN.replace(" ", "+"),
    "7946 0958",
    "79460958",
    "7946+0958",
    "7946%200958",
    API_KEY,
    PASSWORD,
    QUERY_PASSWORD,
    STRIPE_KEY,
    "john.roe",
    "dupont",
    "ren\\u00e9e",
    "renée",
    FILE_EMAIL,
    FILE_EMAIL.replace("@", "%40"),
]


def body(module: str) -> str:
    """A real text: pydoc's plain-text page of a stdlib module (first 3,000 characters)."""
    return pydoc.render_doc(module, renderer=pydoc.plaintext)[:3000]


def file_texts(root: Path) -> dict[str, bytes]:
    """Every file under ``root``, decompressed when gzipped."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        out[str(path.relative_to(root))] = data
    return out


def leaks(files: dict[str, bytes]) -> list[tuple[str, str]]:
    return [(name, needle) for name, data in files.items() for needle in NEEDLES if needle.encode() in data]


def make_inputs(root: Path) -> dict[str, Path]:
    """One input per reader kind, each with a planted value on every path a document can take."""
    root.mkdir(parents=True, exist_ok=True)
    rows = [
        # kept: PII in the text, the URL, a column and a nested metadata object
        {
            "id": "kept",
            "text": body("json") + "\n" + PLANTED_TEXT,
            "url": LEAKY_URL,
            "author": f"Jane Doe <{EMAIL}>",
            "metadata": {"contact": PHONE, "cards": [CARD], "bank": {"iban": IBAN}},
        },
        # two copies: dedup drops one (after the PII stage)
        {"id": "copy-1", "text": body("textwrap") + "\n" + PLANTED_TEXT, "url": LEAKY_URL + "&copy=1"},
        {"id": "copy-2", "text": body("textwrap") + "\n" + PLANTED_TEXT, "url": LEAKY_URL + "&copy=2"},
        # dropped by extract (empty) and by the reader (null text, missing text): before the PII stage
        {"id": "empty", "text": "", "url": LEAKY_URL, "note": PLANTED_TEXT},
        {"id": "null", "text": None, "url": LEAKY_URL, "note": PLANTED_TEXT},
        {"id": "wrong-key", "body": PLANTED_TEXT, "url": LEAKY_URL},
        # kept: every query value redacted, the +tag address whole; an id that is an e-mail address
        {"id": f"from-{FILE_EMAIL}", "text": body("base64"), "url": QUERY_URL},
    ]
    lines = [json.dumps(row) for row in rows]
    lines.insert(3, '{"text": "' + PLANTED_TEXT.replace('"', "'") + '", broken json ' + PLANTED_TEXT)
    lines.insert(4, '{"text": "write to ' + ESCAPED_EMAIL + ' today", "broken"')
    (root / "rows.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # a source whose documents are too short for the quality stage: dropped there, before PII
    junk = [{"text": PLANTED_TEXT, "url": LEAKY_URL + f"&n={i}", "id": f"junk-{i}"} for i in range(2)]
    (root / "junk.jsonl").write_text("".join(json.dumps(r) + "\n" for r in junk), encoding="utf-8")
    page = f"<html><body><p>{body('csv')}</p><p>{PLANTED_TEXT}</p></body></html>".encode()
    write_warc(
        root / "crawl.warc.gz",
        [
            response(LEAKY_URL + "&w=1", page),  # kept after extraction
            response(LEAKY_URL + "&w=2", page, status="404 Not Found"),  # extract/http_status: raw HTML snippet
            response(LEAKY_URL + "&w=3", page, content_type="application/pdf"),  # extract/non_html
        ],
    )
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "note.txt").write_text(body("shlex") + "\n" + PLANTED_TEXT, encoding="utf-8")
    (root / "docs" / f"{FILE_EMAIL}.txt").write_text(body("glob"), encoding="utf-8")  # a name that is PII
    (root / "docs" / "latin.txt").write_bytes((body("string") + "\nCafé " + PLANTED_TEXT).encode("cp1252"))
    return {
        "rows": root / "rows.jsonl",
        "junk": root / "junk.jsonl",
        "crawl": root / "crawl.warc.gz",
        "docs": root / "docs",
    }


def write_recipe(tmp_path: Path, inputs: dict[str, Path], output: Path, pii: dict | None) -> Path:
    recipe = {
        "name": "leaks",
        "output_dir": str(output),
        "sources": [
            {"name": "rows", "kind": "jsonl", "path": str(inputs["rows"])},
            {"name": "junk", "kind": "jsonl", "path": str(inputs["junk"]), "stages": {"quality": {}}},
            {"name": "crawl", "kind": "warc", "path": str(inputs["crawl"])},
            {"name": "docs", "kind": "folder", "path": str(inputs["docs"])},
        ],
        # no language/quality stage on the kept sources: what is kept must not depend on those rules
        "stages": {"extract": {"main_content": False}, "language": None, "quality": None, "pii": pii, "dedup": {}},
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
    }
    path = tmp_path / f"{output.name}.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def artifacts_of(flow_run_id) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    async def read() -> list[str]:
        async with get_client() as client:
            found = await client.read_artifacts(
                artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
            )
            return [str(a.data) for a in found]

    return asyncio.run(read())


def run_flow(recipe: Path, output: Path):
    from flows.curate import curate

    state = curate(str(recipe), output=str(output), return_state=True)
    return state.result(), state.state_details.flow_run_id


def drop_rows(run_dir: Path) -> list[dict]:
    rows = []
    for path in sorted((run_dir / "dropped").rglob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows += [json.loads(line) for line in handle if line.strip()]
    return rows


# ---------------------------------------------------------------------------------------------- whole runs


def test_no_planted_value_reaches_any_written_file_or_artifact(tmp_path: Path, prefect_harness) -> None:
    inputs = make_inputs(tmp_path / "input")
    assert leaks(file_texts(tmp_path / "input"))  # the search sees the values where they are
    run_dir = tmp_path / "run"
    result, flow_run_id = run_flow(write_recipe(tmp_path, inputs, run_dir, pii={}), run_dir)

    # every leak path was taken: kept, deduped, dropped before PII at read, extract and quality, and at dedup
    assert all(s["balanced"] for s in result["sources"])
    rules = {(r["source"], r["stage"], r["rule"]) for r in drop_rows(run_dir)}
    for expected in [
        ("rows", "read", "bad_json"),
        ("rows", "read", "bad_text"),
        ("rows", "read", "missing_text"),
        ("rows", "extract", "empty"),
        ("rows", "dedup", "exact_duplicate"),
        ("crawl", "extract", "http_status"),
        ("crawl", "extract", "non_html"),
    ]:
        assert expected in rules, expected
    assert any(source == "junk" and stage == "quality" for source, stage, _ in rules)
    kept = {s["source"]: s["kept_final"] for s in result["sources"]}
    assert kept["rows"] == 3 and kept["crawl"] == 1 and kept["docs"] == 3

    files = file_texts(run_dir)
    assert any(name.startswith("dropped/") for name in files) and "report.md" in files
    assert leaks(files) == []
    assert [(i, n) for i, text in enumerate(artifacts_of(flow_run_id)) for n in NEEDLES if n in text] == []
    assert not [n for n in NEEDLES if n in json.dumps(result)]  # what the flow returns (CLI prints from it)

    # the URL stays a URL with its structure and parameter names; the kept metadata fields are redacted
    with gzip.open(next((run_dir / "curated" / "rows").glob("*.jsonl.gz")), "rt") as handle:
        doc = next(d for d in map(json.loads, handle) if d["id"] == "kept")
    url = doc["metadata"]["url"]
    assert url.startswith("https://bob:") and "@shop.example/account/" in url
    assert "?email=" in url and "&api_key=" in url and "&page=2" in url and "#access_token=" in url
    assert doc["metadata"]["author"].startswith("Jane Doe <") and doc["metadata"]["pii"]["email"] >= 3


def test_with_the_pii_stage_off_drop_rows_and_report_are_still_redacted(tmp_path: Path, prefect_harness) -> None:
    """``pii: null`` keeps the documents as they are (the user's choice), but what a run writes about
    documents -- drop rows, report examples, dedup examples, artifacts -- is redacted with every type."""
    inputs = make_inputs(tmp_path / "input")
    run_dir = tmp_path / "run"
    result, flow_run_id = run_flow(write_recipe(tmp_path, inputs, run_dir, pii=None), run_dir)
    files = file_texts(run_dir)
    assert any(name.startswith("curated/") for name, _ in leaks(files))  # kept text is not redacted: no PII stage
    about_documents = {
        name: data
        for name, data in files.items()
        if name.startswith("dropped/") or "/logs/" in name or name.endswith("summary.json") or name.startswith("report")
    }
    assert leaks(about_documents) == []
    assert "dedup" in json.loads(files["report.json"])  # dedup examples (snippets of kept text) are in it
    assert [(i, n) for i, text in enumerate(artifacts_of(flow_run_id)) for n in NEEDLES if n in text] == []


# ---------------------------------------------------------------------------------------------- one path each


def test_drop_row_redacts_every_field_of_a_document_dropped_before_pii() -> None:
    from datatrove.data import Document

    from pipeline.base import Drop

    doc = Document(text=PLANTED_TEXT * 3, id="d1", metadata={"source": "s", "url": LEAKY_URL})
    extra = {"read_error_detail": PLANTED_TEXT, "file": f"mail/{EMAIL}.txt", "more": {"list": [CARD, IBAN]}}
    row = drop_row(doc, "extract", Drop(rule="x", score=0.5, extra=extra))
    assert [n for n in NEEDLES if n in json.dumps(row, ensure_ascii=False)] == []
    assert row["id"] == "d1" and row["rule"] == "x" and row["score"] == 0.5 and row["snippet"].startswith("Write to")
    assert set(row) == {"id", "source", "stage", "rule", "score", "url", "snippet", "read_error_detail", "file", "more"}
    assert drop_row(Document(text="", id="d2", metadata={}), "s", Drop(rule="y"))["url"] is None


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        (EMAIL, ["jane.doe", "example.com"]),
        (CARD, ["4111", "1111"]),
        (IBAN, ["DE89", "3704", "0044", "0532", "0130"]),
        (f'api_key = "{API_KEY}"', ["q9w8", "t5y4"]),
    ],
)
def test_snippet_is_cut_after_redaction_with_a_value_at_every_offset(value: str, fragments: list[str]) -> None:
    """The old snippet redacted ``text[:500]`` and then cut 300: placeholders shorter than the values before
    pulled a value cut at the window's edge into the snippet. Here a value sits at every offset around the
    snippet's end and the window's end, after plain text and after a run of other values (which shrink)."""
    redactor = PIIRedactor()
    filler = body("textwrap").replace("\n", " ")
    dense = "".join(f"Card {c}. " for c in ["4111 1111 1111 1111", "5500 0000 0000 0004", "3400 0000 0000 009"] * 6)
    for before in ("", dense):
        for offset in range(0, SNIPPET_CHARS + 2 * REDACTION_MARGIN + 60):
            text = before + filler[:offset] + f" (see {value}) " + filler[offset:]
            snippet = redacted_snippet(text, redactor=redactor)
            assert len(snippet) <= SNIPPET_CHARS
            assert not [f for f in fragments if f in snippet], (offset, bool(before), snippet[-80:])
            if offset % 50 == 0:  # what is shown is the start of the fully redacted text
                assert redactor.redact(text)[0].startswith(snippet)


def test_incomplete_snippet_shows_only_its_safe_part() -> None:
    """A stored prefix (dedup keeps 200 characters) can end inside a value: that end is never shown."""
    redactor = PIIRedactor()
    text = ("word " * 30) + CARD[:12]  # the card is cut by whoever stored the prefix
    assert CARD[:12] in redacted_snippet(text, redactor=redactor)  # as a complete text it is no card
    assert "4111" not in redacted_snippet(text, redactor=redactor, complete=False)
    assert redacted_snippet("short", redactor=redactor, complete=False) == ""


def test_url_redaction_keeps_structure_and_follows_pii_types() -> None:
    from pipeline.curate.config import PIIConfig

    redactor = PIIRedactor()
    counts: dict[str, int] = {}
    url = redact_url(LEAKY_URL, redactor, counts)
    assert [n for n in NEEDLES if n in url] == []
    assert url.startswith("https://bob:") and "@shop.example/account/" in url and "&page=2" in url
    assert counts["email"] == 2 and counts["secret"] == 3  # path + query e-mail; password, api_key, access_token
    assert redact_url(url, redactor) == url  # idempotent: drop rows redact an already redacted URL again
    plain = "https://example.com/docs/page-2.html?lang=en#section-3"
    assert redact_url(plain, redactor) == plain
    signed = "https://bucket.example/o?X-Amz-Signature=0a1b2c3d4e5f&sig=abcDEF123"
    assert "0a1b2c3d4e5f" not in redact_url(signed, redactor) and "abcDEF123" not in redact_url(signed, redactor)
    emails_only = PIIRedactor(PIIConfig(types=["email"]))
    kept_secrets = redact_url(LEAKY_URL, emails_only)
    assert PASSWORD in kept_secrets and API_KEY in kept_secrets and EMAIL not in kept_secrets


def test_pii_stage_redacts_url_and_metadata_strings() -> None:
    from datatrove.data import Document

    doc = Document(
        text=PLANTED_TEXT,
        id="x",
        metadata={
            "source": "s",
            "file": "in/rows.jsonl",
            "url": LEAKY_URL,
            "title": f"Contact {EMAIL}",
            "nested": {"phones": [PHONE], "n": 4111111111111111},
            "language": "en",
        },
    )
    assert PIIStage().process(doc) is None
    dumped = json.dumps({"text": doc.text, "metadata": {k: v for k, v in doc.metadata.items() if k != "nested"}})
    assert [n for n in NEEDLES if n in dumped] == []
    assert PHONE not in json.dumps(doc.metadata["nested"]["phones"])
    assert doc.metadata["nested"]["n"] == 4111111111111111  # numbers are not text
    assert doc.metadata["file"] == "in/rows.jsonl" and doc.metadata["language"] == "en"
    assert doc.metadata["pii"]["email"] >= 3 and doc.metadata["pii"]["secret"] >= 4


# ---------------------------------------------------------------------------------------------- issue 19 item 3


def test_every_query_value_and_a_tagged_local_part_are_redacted() -> None:
    url = redact_url(QUERY_URL, PIIRedactor())
    assert [n for n in NEEDLES if n in url] == []
    assert "john.roe" not in url and "news" not in url  # the whole address, not only "news@example.org"
    assert url.startswith("https://shop.example/login?pw=") and "&stripe=" in url and url.endswith("&page=2")
    # a parameter whose name says credential (db_pw, stripe-api-key) whatever its value looks like
    other = redact_url("https://x.example/?db_pw=abc123x&stripe-api-key=opensesame9&keyword=python", PIIRedactor())
    assert "abc123x" not in other and "opensesame9" not in other and "keyword=python" in other


def test_json_escaped_email_of_a_malformed_line_is_decoded_before_redaction() -> None:
    from datatrove.data import Document

    from pipeline.base import Drop

    line = '{"text": "write to ' + ESCAPED_EMAIL + ' today", "broken"'
    doc = Document(text="", id="rows.jsonl#4", metadata={"source": "rows"})
    row = drop_row(doc, "read", Drop(rule="bad_json", extra={"read_error_detail": f"bad: {line}"}))
    dumped = json.dumps(row, ensure_ascii=False)
    assert "dupont" not in dumped and "caf" not in dumped
    assert row["read_error_detail"].startswith('bad: {"text": "write to ')  # the rest of the line is shown


def test_file_names_and_ids_holding_a_value_are_hashed_and_traceable() -> None:
    from pipeline.redact import hashed_name, redact_name

    name = f"mail/{FILE_EMAIL}.txt"
    redacted = redact_name(name)
    assert redacted == f"mail/{hashed_name(FILE_EMAIL + '.txt')}" and FILE_EMAIL not in redacted
    assert len(hashed_name("x")) == 11 and hashed_name("x")[0] == "~" and int(hashed_name("x")[1:], 16) >= 0
    assert redact_name(redacted) == redacted  # idempotent
    assert redact_name("in/rows.jsonl#3") == "in/rows.jsonl#3"  # a name without a value is kept


CRASH_SCRIPT = """
import sys
from datatrove.pipeline.base import PipelineStep
import pipeline.curate.build as curate_mod
from training.recipe import load_recipe
from pipeline.run import prepare_run_dir

class Crash(PipelineStep):
    name = "crash"
    def run(self, data, rank=0, world_size=1):
        for doc in data:
            text = doc.text
            raise ValueError("cannot handle " + text[:120])
            yield doc

original = curate_mod.build_stages
curate_mod.build_stages = lambda stages, drops: [Crash()] + original(stages, drops)
recipe = load_recipe(sys.argv[1])
layout = prepare_run_dir(recipe)
try:
    for source in recipe.sources:
        curate_mod.curate_source(recipe, source, layout)
except ValueError:
    sys.exit(3)
"""


def test_a_crash_on_a_document_logs_no_text_of_it(tmp_path: Path) -> None:
    """A stage that raises on a document's text: datatrove logs ``logger.exception``, and loguru's diagnose mode
    would print the frame's ``text`` variable; neither the task log nor the console shows a planted value.
    Run in a fresh interpreter without ``LOGURU_DIAGNOSE`` (a library caller, not the CLI)."""
    import os
    import subprocess
    import sys

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "note.txt").write_text(PLANTED_TEXT + "\n" + body("shlex"), encoding="utf-8")
    recipe = {
        "name": "crash",
        "output_dir": str(tmp_path / "run"),
        "sources": [{"name": "docs", "kind": "folder", "path": str(tmp_path / "docs")}],
        "stages": {"extract": {"main_content": False}, "language": None, "quality": None, "pii": {}, "dedup": {}},
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
    }
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(recipe))
    (tmp_path / "crash.py").write_text(CRASH_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "LOGURU_DIAGNOSE"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, str(tmp_path / "crash.py"), str(tmp_path / "r.yaml")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr[-2000:]
    logs = file_texts(tmp_path / "run")
    assert any(name.endswith(".log") and b"ERROR" in data for name, data in logs.items())  # the crash was logged
    assert "ValueError" in done.stderr and "Traceback" in done.stderr
    assert [n for n in NEEDLES if n in done.stderr] == []
    assert leaks(logs) == []
