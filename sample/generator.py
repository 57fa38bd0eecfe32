"""Seeded, deterministic generator of the bundled demo data: a web crawl (WARC) and a domain corpus,
plus ``truth.json``, the ground truth that tests and benchmarks score the pipeline against.

``generate_sample(out_dir, seed, pages, warc_files, domain_docs)`` writes::

    out_dir/crawl/crawl-00000.warc.gz …   gzipped WARC/1.0 files, one gzip member per record
    out_dir/domain/…                       a finance team's folder: .txt, .md, .html and one .jsonl
    out_dir/truth.json                     what every record and document really is

Each WARC file starts with a ``warcinfo`` record; every page is a ``response`` record (HTTP/1.1 status
line and headers, ``WARC-Target-URI`` = the page URL, unique per page), about a third of them preceded
by their ``request`` record. ``WARC-Identified-Payload-Type`` mirrors the HTTP Content-Type (so the one
binary payload labelled text/html reaches the extract stage's binary check instead of being skipped by a
reader). ``WARC-Date`` and ``WARC-Record-ID`` come from the seed, and gzip members carry no timestamp,
so the same seed gives byte-identical files.

What the crawl holds (shares of ``pages``; every kind at least once):
  good ~69 % (languages of good pages: en ~55 %, de/fr/es/ru/zh/ja/ar ~6.4 % each), exact_dup 5 %,
  near_dup 7 %, spam 3 %, c4 3 %, http_error 3 %, short 2.5 %, boilerplate 2.5 %, repetition 2.5 %,
  non_html 2 %, binary 0.25 %. PII is planted in ~30 % of good pages, decoys in ~35 %.

``truth.json`` keys:
  version, seed, generator     format version (1), the seed, "sample"
  warc_files                   file names under crawl/, in order
  counts                       {"kind": {kind: n}, "language_good": {lang: n}, "pii_type": {type: n},
                               "decoy_type": {type: n}} over pages (pii/decoys: values planted in pages)
  pages                        one entry per response record, in file order:
    id                         WARC-Record-ID of the response, as in the header ("<urn:uuid:…>")
    doc_id                     the bare UUID: the document id tokenmill's WARC reader gives the record
    url                        WARC-Target-URI (unique)
    warc_file                  which file under crawl/
    kind                       good | spam | short | boilerplate | repetition | c4 | non_html |
                               http_error | binary | exact_dup | near_dup
    variant                    finer kind or null: spam keyword_stuffing|all_caps; c4 lorem_ipsum|
                               javascript|cookie_policy; repetition repeated_line|repeated_paragraph;
                               http_error "301"|"404"|"500"; non_html image/png|application/pdf;
                               exact_dup mirror; near_dup word_edits|reframed|cross_source
    language                   ISO 639-1 code of the text (null where no natural language: non_html,
                               binary, lorem ipsum)
    http_status, content_type  as served
    title                      the article title (null for non-HTML)
    planted_pii                [{type, value}] — every value occurs verbatim in the page's main text;
                               types: see ``pii.PII_TYPES`` (a private_key value is the whole PEM block)
    decoys                     [{type, value}] — look-alikes that must stay untouched (``pii.DECOY_TYPES``)
    duplicate_of               url of the page copied (exact_dup, near_dup) or "domain/<path>" for a web
                               copy of a domain document; null otherwise
    edit_rate                  share of the original's words edited (near_dup word_edits: 0.01–0.10;
                               0.0 for exact_dup, reframed, cross_source); null otherwise
    has_request                whether a request record precedes the response
  domain                       one entry per domain document (a JSONL record is one document):
    id                         "domain/<relpath>" or "domain/<relpath>#<record id>" for JSONL records
    doc_id                     the folder reader's document id: <relpath>, or the record's "id" for JSONL
    path                       file path relative to out_dir; record_id, line: JSONL record id and line
    format, doc_type           txt|md|html|jsonl; earnings_note, filing, board_minutes, ...
    kind, language, title, planted_pii, decoys, duplicate_of, edit_rate   as for pages
  duplicates                   [{id, duplicate_of, kind, edit_rate}] — every planted pair (pages and
                               domain), for dedup recall

The text is assembled from genuine sentences written per language (``text_*.py``) and, for English,
a template grammar over topic word lists, so that fastText LID recognises each page's language and
pages stay distinct. Everything is hand-built: no library generates multilingual fake web pages with
a ground truth of planted PII, duplicates and junk.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import shutil
import unicodedata
import zlib
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from types import ModuleType
from typing import Any

import sample.grammar as grammar
import sample.junk as junk
import sample.pii as P
import sample.text_en as text_en
from pipeline.atomic import write_text_atomic
from sample.article import Article, Heading, Paragraph, edit_words, vocabulary_of
from sample.domain import DomainDoc, build_domain, write_domain
from sample.layouts import LAYOUTS, render_page, site_name
from sample.warc import SAMPLE_VERSION, Page, write_warcs

LANGUAGES = ("en", "de", "fr", "es", "ru", "zh", "ja", "ar")
KINDS = (
    "good",
    "spam",
    "short",
    "boilerplate",
    "repetition",
    "c4",
    "non_html",
    "http_error",
    "binary",
    "exact_dup",
    "near_dup",
)
EN_SHARE = 0.55
PII_PAGE_SHARE = 0.30
DECOY_PAGE_SHARE = 0.35
KIND_SHARES = {
    "exact_dup": 0.05,
    "near_dup": 0.07,
    "spam": 0.03,
    "short": 0.025,
    "boilerplate": 0.025,
    "repetition": 0.025,
    "c4": 0.03,
    "non_html": 0.02,
    "http_error": 0.03,
    "binary": 0.0025,
}
VARIANTS = {
    "exact_dup": ("mirror",),
    "near_dup": ("word_edits", "word_edits", "reframed"),
    "spam": ("keyword_stuffing", "all_caps"),
    "short": ("few_words",),
    "boilerplate": ("link_lists",),
    "repetition": ("repeated_line", "repeated_paragraph"),
    "c4": ("lorem_ipsum", "javascript", "cookie_policy"),
    "non_html": ("image/png", "application/pdf"),
    "http_error": ("301", "404", "500"),
    "binary": ("random_bytes",),
}
MIN_PAGES = 20
# Languages whose words are separated by spaces: word-level near-duplicate edits make sense there.
SPACED = ("en", "de", "fr", "es", "ru", "ar")
MIRRORS = ("newsmirror.net", "archive-cache.org", "feedreader-cache.com", "readlater-mirror.io")
SYNDICATORS = ("newsroundup-daily.com", "aggregator-hub.net", "syndicated-stories.org")
EN_SUBHEADS = ("What happens next", "Background", "Reactions", "The numbers", "What it means for you")
HTML_TYPE = "text/html; charset=utf-8"
_MONTHS = junk.MONTHS


@dataclass
class SampleInfo:
    """Where the generated sample lies and what it holds."""

    out_dir: Path
    crawl_dir: Path
    warc_paths: list[Path]
    domain_dir: Path | None
    truth_path: Path
    pages: int  # response records (one per page)
    warc_records: int  # all records, warcinfo and request records included
    domain_docs: int  # documents in domain/ (each JSONL record counts once)
    kinds: dict[str, int] = field(default_factory=dict)
    languages: dict[str, int] = field(default_factory=dict)  # languages of good pages


def _lang(lang: str) -> ModuleType:
    return importlib.import_module(f"sample.text_{lang}")


def _split(total: int, shares: dict[str, float]) -> dict[str, int]:
    """Largest-remainder split of ``total`` by ``shares`` (deterministic, sums exactly)."""
    raw = {k: total * s for k, s in shares.items()}
    out = {k: int(v) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: (-(raw[k] - out[k]), k))[: total - sum(out.values())]:
        out[k] += 1
    return out


def plan_counts(n_pages: int) -> dict[str, int]:
    """How many pages of each kind a crawl of ``n_pages`` holds."""
    if n_pages < MIN_PAGES:
        raise ValueError(f"pages: at least {MIN_PAGES} are needed to hold every kind of page, got {n_pages}")
    counts = {}
    for kind, share in KIND_SHARES.items():
        count = max(1, round(share * n_pages))
        if n_pages >= 200:
            count = max(count, len(set(VARIANTS[kind])))
        counts[kind] = count
    return {"good": n_pages - sum(counts.values()), **counts}


def _slug(text: str, limit: int = 60) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return "-".join("".join(c if c.isalnum() else " " for c in ascii_text).split())[:limit].strip("-")


class _CrawlBuilder:
    """Builds every page of a crawl in memory (HTML, bytes and truth) from one seeded RNG."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.serial = 0
        self.langs = {lang: _lang(lang) for lang in LANGUAGES}
        en_phrases = [p for t in text_en.TOPICS.values() for key in ("vp", "vi", "things") for p in t[key]]
        self.vocab = {lang: vocabulary_of(mod.SENTENCES) for lang, mod in self.langs.items()}
        self.vocab["en"] = vocabulary_of(list(text_en.SENTENCES) + en_phrases)
        self.pii_turn: dict[str, int] = dict.fromkeys(LANGUAGES, 0)
        self.decoy_turn: dict[str, int] = dict.fromkeys(LANGUAGES, 0)
        self.phone_turn: dict[str, int] = dict.fromkeys(LANGUAGES, 0)

    # -- text -------------------------------------------------------------------------------------

    def en_sentence(self, topic: str, used: set[str] | None = None) -> str:
        return grammar.sentence(self.rng, topic, used)

    def en_title(self, topic: str) -> str:
        return grammar.title(self.rng, topic)

    def _date_words(self) -> str:
        year, month, day = self.rng.randint(2022, 2024), self.rng.randint(1, 12), self.rng.randint(1, 28)
        return f"{day} {_MONTHS[month - 1]} {year}"

    def en_article(self) -> tuple[Article, str]:
        rng = self.rng
        topic = rng.choice(tuple(text_en.TOPICS))
        date_text = self._date_words()
        art = Article(
            "en",
            self.en_title(topic),
            f"By {rng.choice(text_en.FIRST_NAMES)} {rng.choice(text_en.LAST_NAMES)}",
            date_text,
        )
        pool = rng.sample(text_en.SENTENCES, 8)
        used: set[str] = set()
        n_paras = rng.randint(3, 6)
        for i in range(n_paras):
            if i == 3 and n_paras >= 5:
                art.blocks.append(Heading(rng.choice(EN_SUBHEADS)))
            sentences = []
            for _ in range(rng.randint(2, 5)):
                if pool and rng.random() < 0.3:
                    sentences.append(pool.pop())
                    continue
                # stay on topic while it has fresh verb phrases, then drift like a real article does
                fresh = any(vp not in used for vp in text_en.TOPICS[topic]["vp"])
                other = topic if fresh and rng.random() < 0.85 else rng.choice(tuple(text_en.TOPICS))
                sentences.append(self.en_sentence(other, used))
            art.blocks.append(Paragraph(sentences, [False] * len(sentences)))
        return art, topic

    def intl_article(self, lang: str) -> Article:
        rng, mod = self.rng, self.langs[lang]
        sentences = rng.sample(mod.SENTENCES, rng.randint(7, 14))
        n_paras = rng.randint(2, 4)
        cuts = sorted(rng.sample(range(1, len(sentences)), n_paras - 1))
        art = Article(
            lang,
            rng.choice(mod.TITLES),
            mod.CHROME["byline"].format(author=rng.choice(mod.AUTHORS)),
            P.date(rng, "iso"),
        )
        for start, end in zip([0, *cuts], [*cuts, len(sentences)], strict=True):
            art.blocks.append(Paragraph(sentences[start:end], [False] * (end - start)))
        return art

    # -- planted values ---------------------------------------------------------------------------

    def plant_pii(self, art: Article, k: int) -> None:
        rng, lang = self.rng, art.lang
        mod = self.langs[lang]
        types = P.PII_TYPES if lang == "en" else tuple(mod.PII_TEMPLATES)
        for _ in range(k):
            kind = types[self.pii_turn[lang] % len(types)]
            self.pii_turn[lang] += 1
            person = (rng.choice(text_en.FIRST_NAMES), rng.choice(text_en.LAST_NAMES))
            if kind == "private_key":
                value = P.private_key_block(rng)
                art.insert_code(rng, rng.choice(mod.PII_TEMPLATES[kind]), value)
                art.pii.append({"type": kind, "value": value})
                continue
            if kind in ("api_key", "aws_access_key") and rng.random() < 0.5:
                self._plant_config_block(art, kind)
                continue
            value = self._pii_value(kind, lang, person)
            art.insert_sentence(rng, rng.choice(mod.PII_TEMPLATES[kind]).format(v=value))
            art.pii.append({"type": kind, "value": value})

    def _pii_value(self, kind: str, lang: str, person: tuple[str, str]) -> str:
        rng, mod = self.rng, self.langs[lang]
        countries = getattr(mod, "IBAN_COUNTRIES", ("DE", "GB", "FR", "ES", "NL"))
        makers = {
            "email": lambda: P.email(rng, *person),
            "phone": lambda: P.phone(rng, self._phone_format(lang)),
            "ipv4": lambda: P.ipv4_public(rng),
            "ipv6": lambda: P.ipv6_public(rng),
            "credit_card": lambda: P.card_number(rng),
            "iban": lambda: P.iban(rng, rng.choice(countries)),
            "ssn": lambda: P.ssn(rng),
            "aws_access_key": lambda: P.aws_access_key(rng),
            "github_token": lambda: P.github_token(rng),
            "gitlab_token": lambda: P.gitlab_token(rng),
            "slack_token": lambda: P.slack_token(rng),
            "jwt": lambda: P.jwt(rng, " ".join(person)),
            "api_key": lambda: P.api_secret(rng),
        }
        return makers[kind]()

    def _phone_format(self, lang: str) -> str:
        formats = P.EN_PHONE_FORMATS if lang == "en" else self.langs[lang].PHONE_FORMATS
        fmt = formats[self.phone_turn[lang] % len(formats)]
        self.phone_turn[lang] += 1
        return fmt

    def _plant_config_block(self, art: Article, kind: str) -> None:
        rng = self.rng
        if kind == "aws_access_key":
            key, secret = P.aws_access_key(rng), P.aws_secret_key(rng)
            code = f"[default]\naws_access_key_id = {key}\naws_secret_access_key = {secret}\nregion = eu-west-1"
            art.insert_code(rng, "The credentials file that was published with the backup looked like this:", code)
            art.pii += [{"type": "aws_access_key", "value": key}, {"type": "api_key", "value": secret}]
        else:
            value = P.api_secret(rng)
            code = rng.choice(text_en.CODE_TEMPLATES["api_key"]).format(v=value)
            art.insert_code(rng, "The configuration file in the leaked archive contained this line:", code)
            art.pii.append({"type": "api_key", "value": value})

    def plant_decoys(self, art: Article, k: int) -> None:
        rng, lang = self.rng, art.lang
        mod = self.langs[lang]
        types = P.DECOY_TYPES if lang == "en" else tuple(mod.DECOY_TEMPLATES)
        date_style = rng.choice(("iso", "dotted")) if lang == "en" else mod.DATE_STYLE
        price_style = rng.choice(("usd", "eur", "gbp")) if lang == "en" else mod.PRICE_STYLE
        for _ in range(k):
            kind = types[self.decoy_turn[lang] % len(types)]
            self.decoy_turn[lang] += 1
            value = P.decoy(rng, kind, date_style, price_style)
            art.insert_sentence(rng, rng.choice(mod.DECOY_TEMPLATES[kind]).format(v=value))
            art.decoys.append({"type": kind, "value": value})

    # -- pages ------------------------------------------------------------------------------------

    def new_url(self, site: str, section: str, title: str, ext: str = "") -> str:
        self.serial += 1
        rng = self.rng
        host = f"www.{site}" if rng.random() < 0.5 else site
        slug = _slug(title) or "article"
        year, month = rng.randint(2022, 2024), rng.randint(1, 12)
        return f"https://{host}/{section}/{year}/{month:02d}/{slug}-{self.serial:06d}{ext}"

    def _related(self, lang: str) -> list[str]:
        rng = self.rng
        if lang == "en":
            return [self.en_title(rng.choice(tuple(text_en.TOPICS))) for _ in range(rng.randint(3, 5))]
        return rng.sample(self.langs[lang].TITLES, rng.randint(3, 5))

    def render(self, article_html: str, title: str, lang: str, site: str, url: str, layout: str) -> bytes:
        rng, mod = self.rng, self.langs[lang]
        html = render_page(
            layout,
            lang=lang,
            direction=getattr(mod, "DIRECTION", "ltr"),
            title=title,
            site=site,
            url=url,
            chrome=mod.CHROME,
            article_html=article_html,
            related=self._related(lang),
            year=rng.randint(2022, 2024),
            rng=rng,
            cookie_banner=rng.random() < 0.6,
        )
        return html.encode("utf-8")

    @staticmethod
    def _truth(
        kind: str,
        variant: str | None,
        lang: str | None,
        status: int,
        ctype: str,
        title: str | None,
        art: Article | None = None,
    ) -> dict[str, Any]:
        return {
            "id": None,
            "doc_id": None,
            "url": None,
            "warc_file": None,
            "kind": kind,
            "variant": variant,
            "language": lang,
            "http_status": status,
            "content_type": ctype,
            "title": title,
            "planted_pii": [dict(p) for p in art.pii] if art else [],
            "decoys": [dict(d) for d in art.decoys] if art else [],
            "duplicate_of": None,
            "edit_rate": None,
            "has_request": False,
        }

    def _html_page(
        self,
        art: Article,
        kind: str,
        variant: str | None,
        lang: str | None,
        site: str,
        section: str,
        layout: str | None = None,
        url: str | None = None,
    ) -> Page:
        layout = layout or self.rng.choice(LAYOUTS)
        url = url or self.new_url(site, section, art.title)
        body = self.render(art.to_html(), art.title, art.lang, site, url, layout)
        truth = self._truth(kind, variant, lang, 200, HTML_TYPE, art.title, art)
        truth["url"] = url
        return Page(url, 200, "OK", HTML_TYPE, body, truth, art, site, layout)

    def good_page(self, lang: str, pii_k: int, decoy_k: int) -> Page:
        rng = self.rng
        art = self.en_article()[0] if lang == "en" else self.intl_article(lang)
        if pii_k:
            self.plant_pii(art, pii_k)
        if decoy_k:
            self.plant_decoys(art, decoy_k)
        mod = self.langs[lang]
        return self._html_page(art, "good", None, lang, rng.choice(mod.SITES), rng.choice(mod.SECTIONS))

    def exact_dup(self, src: Page) -> Page:
        rng = self.rng
        self.serial += 1
        host, path = src.url.split("/", 3)[2:]
        url = rng.choice(
            (
                f"https://{rng.choice(MIRRORS)}/{host}/{path}?r={self.serial}",
                f"{src.url}?utm_source=newsletter&utm_medium=email&utm_id={self.serial}",
                f"https://m.{host.removeprefix('www.')}/{path}?s={self.serial}",
            )
        )
        truth = {**src.truth, "kind": "exact_dup", "variant": "mirror", "url": url}
        truth.update(
            planted_pii=[dict(p) for p in src.truth["planted_pii"]],
            decoys=[dict(d) for d in src.truth["decoys"]],
            duplicate_of=src.url,
            edit_rate=0.0,
        )
        return Page(url, 200, "OK", src.content_type, src.body, truth, src.article, src.site, src.layout)

    def near_dup(self, src: Page, variant: str) -> Page:
        rng = self.rng
        assert src.article is not None
        lang = src.article.lang
        if variant == "word_edits":
            art, rate = edit_words(rng, src.article, rng.uniform(0.01, 0.095), self.vocab[lang])
            section = src.url.split("/")[3]
            page = self._html_page(art, "near_dup", variant, lang, src.site, section, layout=src.layout)
            page.truth["edit_rate"] = round(rate, 4)
        else:  # reframed: the same article in another site's chrome (syndication)
            sites = [s for s in self.langs[lang].SITES if s != src.site] or list(SYNDICATORS)
            layout = rng.choice([name for name in LAYOUTS if name != src.layout])
            page = self._html_page(src.article, "near_dup", variant, lang, rng.choice(sites), "syndicated", layout)
            page.truth["edit_rate"] = 0.0
        page.truth["duplicate_of"] = src.url
        return page

    def cross_source_copy(self, doc: DomainDoc) -> Page:
        """A web page republishing a domain document (press release) verbatim."""
        assert doc.article is not None
        rng = self.rng
        page = self._html_page(doc.article, "near_dup", "cross_source", "en", rng.choice(text_en.SITES), "business")
        page.truth.update(duplicate_of=doc.truth_id, edit_rate=0.0)
        return page

    # -- junk -------------------------------------------------------------------------------------

    def junk_page(self, kind: str, variant: str) -> Page:
        rng = self.rng
        site, section = rng.choice(text_en.SITES), rng.choice(text_en.SECTIONS)
        if kind == "non_html":
            return self._binary_page(variant, site)
        if kind == "binary":
            body = bytes(b if rng.random() < 0.9 else 0 for b in rng.randbytes(rng.randint(2048, 8192)))
            url = self.new_url(site, section, "page", ".html")
            truth = self._truth(kind, variant, None, 200, HTML_TYPE, None)
            truth["url"] = url
            return Page(url, 200, "OK", HTML_TYPE, body, truth, site=site)
        if kind == "http_error":
            return self._error_page(int(variant), site, section)
        art = Article("en", "")
        lang: str | None = "en"
        article_html = None
        if kind == "spam" and variant == "keyword_stuffing":
            site = rng.choice(junk.SPAM_SITES)
            words = rng.sample(junk.SPAM_KEYWORDS, rng.randint(3, 5))
            art.title = rng.choice(junk.SPAM_TITLES)
            for _ in range(rng.randint(3, 6)):
                art.blocks.append(Paragraph([" ".join(rng.choice(words) for _ in range(rng.randint(40, 80)))], [False]))
        elif kind == "spam":  # all caps shouting
            base, _ = self.en_article()
            art.title = base.title.upper() + "!!!"
            for para in base.paragraphs():
                shout = [s.upper() for s in para.sentences] + [rng.choice(junk.CAPS_EXTRAS)]
                art.blocks.append(Paragraph(shout, [False] * len(shout)))
        elif kind == "short":
            art.title = rng.choice(("Welcome", "Coming soon", "Contact", "Hello"))
            art.blocks.append(Paragraph([rng.choice(junk.SHORT_TEXTS)], [False]))
        elif kind == "boilerplate":
            art.title = rng.choice(("Site map", "All categories", "Archives", "Links"))
            article_html = f"<h1>{escape(art.title)}</h1>\n" + "".join(
                f"<h3>{escape(heading)}</h3>\n<ul>"
                + "".join(
                    f'<li><a href="/c/{rng.randint(1, 9999)}">{escape(self._link_text())}</a></li>'
                    for _ in range(rng.randint(8, 16))
                )
                + "</ul>\n"
                for heading in rng.sample(junk.LINK_LIST_HEADINGS, rng.randint(3, 5))
            )
        elif kind == "repetition":
            topic = rng.choice(tuple(text_en.TOPICS))
            art.title = self.en_title(topic)
            if variant == "repeated_line":
                line = f"{self.en_sentence(topic)} {self.en_sentence(topic)}"
                art.blocks = [Paragraph([line], [False]) for _ in range(rng.randint(15, 40))]
            else:
                block = [self.en_sentence(topic) for _ in range(3)]
                art.blocks = [Paragraph(list(block), [False] * 3) for _ in range(rng.randint(8, 15))]
        elif variant == "lorem_ipsum":
            lang = None
            art.title = rng.choice(("Lorem ipsum dolor sit amet", "Our services", "About us"))
            art.blocks.append(Paragraph([junk.LOREM_OPENING], [False]))  # placeholder text always starts so
            for _ in range(rng.randint(2, 5)):
                words = [rng.choice(junk.LOREM_WORDS) for _ in range(rng.randint(40, 90))]
                art.blocks.append(Paragraph([" ".join(words).capitalize() + "."], [False]))
        elif variant == "javascript":
            art.title = site_name(site)
            notices = rng.sample(junk.JAVASCRIPT_NOTICES, 2)
            article_html = (
                f'<h1>{escape(art.title)}</h1>\n<div id="app"><p>{escape(notices[0])}</p></div>\n'
                f"<noscript><p>{escape(notices[1])}</p></noscript>\n"
            )
        else:  # cookie_policy
            art.title = "Cookie policy"
            for line in rng.sample(junk.COOKIE_POLICY_LINES, rng.randint(4, 7)):
                art.blocks.append(Paragraph([line], [False]))
        layout = rng.choice(LAYOUTS)
        url = self.new_url(site, section, art.title)
        body = self.render(article_html or art.to_html(), art.title, "en", site, url, layout)
        truth = self._truth(kind, variant, lang, 200, HTML_TYPE, art.title)
        truth["url"] = url
        return Page(url, 200, "OK", HTML_TYPE, body, truth, site=site, layout=layout)

    def _link_text(self) -> str:
        rng = self.rng
        if rng.random() < 0.3:
            return f"{rng.choice(_MONTHS)} {rng.randint(2015, 2024)} ({rng.randint(1, 40)})"
        return " ".join(rng.sample(junk.LINK_WORDS, rng.randint(1, 3)))

    def _error_page(self, status: int, site: str, section: str) -> Page:
        rng = self.rng
        reason, message = junk.HTTP_ERROR_PAGES[status]
        url = self.new_url(site, section, rng.choice(("old-page", "archive", "promo", "story")))
        extra = []
        if status == 404:
            body = self.render(
                f"<h1>{escape(reason)}</h1>\n<p>{escape(message)}</p>\n", reason, "en", site, url, rng.choice(LAYOUTS)
            )
        else:
            body = (
                f"<html><head><title>{status} {escape(reason)}</title></head><body><h1>{escape(reason)}</h1>"
                f"<p>{escape(message)}</p><hr><address>nginx</address></body></html>\n"
            ).encode()
            if status == 301:
                extra.append(("Location", f"https://{site}/{section}/{_slug(reason)}-{self.serial:06d}"))
        truth = self._truth("http_error", str(status), "en", status, HTML_TYPE, reason)
        truth["url"] = url
        return Page(url, status, reason, HTML_TYPE, body, truth, site=site, extra_headers=extra)

    def _binary_page(self, mime: str, site: str) -> Page:
        rng = self.rng
        payload = rng.randbytes(rng.randint(1024, 6144))
        if mime == "image/png":
            ihdr = (
                (rng.randint(64, 1024)).to_bytes(4, "big")
                + (rng.randint(64, 768)).to_bytes(4, "big")
                + bytes([8, 6, 0, 0, 0])
            )
            idat = zlib.compress(payload)
            body = b"\x89PNG\r\n\x1a\n" + b"".join(
                len(data).to_bytes(4, "big") + tag + data + zlib.crc32(tag + data).to_bytes(4, "big")
                for tag, data in ((b"IHDR", ihdr), (b"IDAT", idat), (b"IEND", b""))
            )
            url = self.new_url(site, "images", "photo", ".png")
        else:
            stream = zlib.compress(payload)
            body = (
                b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
                b"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n"
                b"3 0 obj\n<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>\nendobj\n"
                + f"4 0 obj\n<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode()
                + stream
                + b"\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
            )
            url = self.new_url(site, "downloads", "annual-report", ".pdf")
        truth = self._truth("non_html", mime, None, 200, mime, None)
        truth["url"] = url
        return Page(url, 200, "OK", mime, body, truth, site=site)

    # -- the whole crawl --------------------------------------------------------------------------

    def build(self, n_pages: int, press: list[DomainDoc]) -> list[Page]:
        rng = self.rng
        counts = plan_counts(n_pages)
        n_good = counts["good"]
        other = (1 - EN_SHARE) / (len(LANGUAGES) - 1)
        langs_split = _split(n_good, {lang: EN_SHARE if lang == "en" else other for lang in LANGUAGES})
        langs = [lang for lang in LANGUAGES for _ in range(langs_split[lang])]
        rng.shuffle(langs)
        pii_pages = set(rng.sample(range(n_good), round(PII_PAGE_SHARE * n_good)))
        decoy_pages = set(rng.sample(range(n_good), round(DECOY_PAGE_SHARE * n_good)))
        good = [
            self.good_page(
                lang,
                rng.randint(1, 3) if i in pii_pages else 0,
                rng.randint(1, 3) if i in decoy_pages else 0,
            )
            for i, lang in enumerate(langs)
        ]
        pages = list(good)
        sources = rng.sample(good, min(len(good), counts["exact_dup"] + counts["near_dup"]))
        for i in range(counts["exact_dup"]):
            pages.append(self.exact_dup(sources[i % len(sources)]))
        near_sources = sources[counts["exact_dup"] :] or sources
        spaced = [p for p in near_sources if p.article and p.article.lang in SPACED] or [
            p for p in good if p.article and p.article.lang in SPACED
        ]
        n_cross = min(2, len(press), counts["near_dup"] - 1)
        for i in range(counts["near_dup"]):
            if i < n_cross:
                pages.append(self.cross_source_copy(press[i]))
                continue
            variant = VARIANTS["near_dup"][i % len(VARIANTS["near_dup"])]
            src = spaced[i % len(spaced)] if variant == "word_edits" else near_sources[i % len(near_sources)]
            pages.append(self.near_dup(src, variant))
        for kind in KIND_SHARES:
            if kind in ("exact_dup", "near_dup"):
                continue
            for i in range(counts[kind]):
                pages.append(self.junk_page(kind, VARIANTS[kind][i % len(VARIANTS[kind])]))
        rng.shuffle(pages)
        return pages


def _domain_truth(doc: DomainDoc) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": doc.truth_id,
        "doc_id": doc.record_id or doc.relpath,
        "path": f"domain/{doc.relpath}",
        "format": doc.fmt,
        "doc_type": doc.doc_type,
        "kind": doc.kind,
        "language": "en",
        "title": doc.title,
        "planted_pii": doc.pii,
        "decoys": doc.decoys,
        "duplicate_of": doc.duplicate_of,
        "edit_rate": doc.edit_rate,
    }
    if doc.record_id is not None:
        entry.update(record_id=doc.record_id, line=doc.line)
    return entry


def _counts(pages: list[dict], key: str, field_name: str | None = None) -> dict[str, int]:
    out: dict[str, int] = {}
    for page in pages:
        values = [v["type"] for v in page[field_name]] if field_name else [page[key]]
        for value in values:
            out[value] = out.get(value, 0) + 1
    return dict(sorted(out.items()))


def _truth_doc(seed: int, pages: list[Page], warc_paths: list[Path], docs: list[DomainDoc]) -> dict[str, Any]:
    by_file = {path.name: i for i, path in enumerate(warc_paths)}
    page_truth = sorted((p.truth for p in pages), key=lambda t: by_file[t["warc_file"]])  # stable: file order
    domain = [_domain_truth(doc) for doc in docs]
    duplicates = [
        {
            "id": t.get("url") or t["id"],
            "duplicate_of": t["duplicate_of"],
            "kind": t["kind"],
            "edit_rate": t["edit_rate"],
        }
        for t in page_truth + domain
        if t["duplicate_of"]
    ]
    return {
        "version": SAMPLE_VERSION,
        "seed": seed,
        "generator": "sample",
        "warc_files": [path.name for path in warc_paths],
        "counts": {
            "kind": _counts(page_truth, "kind"),
            "language_good": _counts([t for t in page_truth if t["kind"] == "good"], "language"),
            "pii_type": _counts(page_truth, "", "planted_pii"),
            "decoy_type": _counts(page_truth, "", "decoys"),
        },
        "pages": page_truth,
        "domain": domain,
        "duplicates": duplicates,
    }


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    """Valid JSON with one list entry per line: greppable and diffable, and written by the fast C encoder
    (``indent=`` falls back to the pure-Python encoder, ~1 s per 5,000 pages)."""
    parts = []
    for key, value in payload.items():
        if isinstance(value, list) and value:
            entries = ",\n".join("  " + json.dumps(entry, ensure_ascii=False) for entry in value)
            parts.append(f" {json.dumps(key)}: [\n{entries}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    write_text_atomic(path, "{\n" + ",\n".join(parts) + "\n}\n")


def _info(
    out_dir: Path,
    crawl_dir: Path,
    warc_paths: list[Path],
    domain_dir: Path | None,
    truth_path: Path,
    truth: dict[str, Any],
    records: int,
) -> SampleInfo:
    return SampleInfo(
        out_dir=out_dir,
        crawl_dir=crawl_dir,
        warc_paths=warc_paths,
        domain_dir=domain_dir,
        truth_path=truth_path,
        pages=len(truth["pages"]),
        warc_records=records,
        domain_docs=len(truth["domain"]),
        kinds=truth["counts"]["kind"],
        languages=truth["counts"]["language_good"],
    )


_MARKER = ".tokenmill-sample"


def _clear_previous(out_dir: Path) -> None:
    """Remove what an earlier run wrote here, so a smaller rerun leaves no stale WARC files behind."""
    crawl_dir, domain_dir = out_dir / "crawl", out_dir / "domain"
    # the marker sits next to domain/, not inside it: a folder reader would count it as a skipped file
    if domain_dir.exists() and any(domain_dir.iterdir()) and not (out_dir / _MARKER).exists():
        raise FileExistsError(
            f"{domain_dir}: exists and was not written by the sample generator; choose another out_dir"
        )
    if domain_dir.exists():
        shutil.rmtree(domain_dir)
    for stale in crawl_dir.glob("crawl-*.warc.gz"):
        stale.unlink()


def generate_sample(
    out_dir: str | Path, seed: int = 0, pages: int = 400, warc_files: int = 4, domain_docs: int = 60
) -> SampleInfo:
    """Write the demo sample (crawl, domain folder, truth.json) under ``out_dir``; same seed, same bytes."""
    if warc_files < 1:
        raise ValueError(f"warc_files: must be at least 1, got {warc_files}")
    if domain_docs < 0:
        raise ValueError(f"domain_docs: must be 0 or more, got {domain_docs}")
    plan_counts(pages)  # validate before touching the disk
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clear_previous(out_dir)
    rng = random.Random(seed)
    docs = build_domain(rng, domain_docs)
    press = [doc for doc in docs if doc.doc_type == "press_release"]
    crawl_pages = _CrawlBuilder(rng).build(pages, press)
    crawl_dir = out_dir / "crawl"
    warc_paths = [crawl_dir / f"crawl-{i:05d}.warc.gz" for i in range(warc_files)]
    records = write_warcs(crawl_pages, warc_paths, rng, seed)
    domain_dir = None
    if docs:
        domain_dir = out_dir / "domain"
        write_domain(docs, domain_dir)
    (out_dir / _MARKER).write_text(f"crawl/, domain/ and truth.json written by sample (seed {seed})\n")
    truth = _truth_doc(seed, crawl_pages, warc_paths, docs)
    truth_path = out_dir / "truth.json"
    _write_json(truth_path, truth)
    _fix_mtimes(out_dir)
    return _info(out_dir, crawl_dir, warc_paths, domain_dir, truth_path, truth, records)


FIXED_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z


def _fix_mtimes(out_dir: Path) -> None:
    """Give every written file the same fixed mtime: the bytes are a function of the seed, so a regenerated
    sample then fingerprints like the old one and a rerun of the demo resumes instead of re-curating."""
    for path in out_dir.rglob("*"):
        if path.is_file():
            os.utime(path, (FIXED_MTIME, FIXED_MTIME))


def generate_crawl(path: str | Path, n_pages: int, seed: int = 0, warc_files: int = 1) -> SampleInfo:
    """Just a crawl, for benchmarks: the same mix of pages as the sample, without the domain folder.

    ``path`` ending in ``.warc.gz`` is the one file to write (truth next to it as ``<name>.truth.json``);
    any other ``path`` is a folder that receives ``crawl-00000.warc.gz …`` and ``truth.json``.
    """
    path = Path(path)
    rng = random.Random(seed)
    crawl_pages = _CrawlBuilder(rng).build(n_pages, [])
    if path.name.endswith(".warc.gz"):
        if warc_files != 1:
            raise ValueError(f"{path}: a single .warc.gz path takes warc_files=1, got {warc_files}")
        warc_paths, crawl_dir = [path], path.parent
        truth_path = path.with_name(path.name.removesuffix(".warc.gz") + ".truth.json")
    else:
        crawl_dir = path
        warc_paths = [path / f"crawl-{i:05d}.warc.gz" for i in range(warc_files)]
        truth_path = path / "truth.json"
        for stale in path.glob("crawl-*.warc.gz"):
            stale.unlink()
    records = write_warcs(crawl_pages, warc_paths, rng, seed)
    truth = _truth_doc(seed, crawl_pages, warc_paths, [])
    _write_json(truth_path, truth)
    return _info(crawl_dir, crawl_dir, warc_paths, None, truth_path, truth, records)
