"""The domain corpus: a folder of a finance team's documents in .txt, .md, .html and one .jsonl file.

Document types follow what such a folder holds: earnings notes, 10-Q excerpts, board minutes, payment
instructions, runbooks, client onboarding memos, risk reports, press releases and analyst notes. PII
sits where it does in real files (IBANs in payment instructions, an SSN in a KYC memo, keys pasted
into a runbook), about a third of the documents. One earnings note also exists as a lightly edited
draft (a near-duplicate inside the domain source), and press releases are what web pages republish
(cross-source duplicates, made in ``generator.py``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from html import escape

import sample.finance as fin
import sample.pii as P
import sample.text_en as text_en
from sample.article import Article, Heading, Paragraph, edit_words, vocabulary_of

DOC_TYPE_CYCLE = (
    "earnings_note",
    "filing",
    "earnings_note",
    "board_minutes",
    "payment_instructions",
    "earnings_note",
    "runbook",
    "kyc_memo",
    "risk_report",
    "earnings_note",
    "press_release",
    "filing",
    "risk_report",
    "payment_instructions",
    "runbook",
    "kyc_memo",
    "press_release",
    "board_minutes",
    "earnings_note",
)
# Secret types cycled through runbooks so that a small folder still holds every kind.
RUNBOOK_SECRETS = ("aws_access_key", "api_key", "private_key", "github_token", "slack_token", "jwt", "gitlab_token")


@dataclass
class DomainDoc:
    relpath: str
    fmt: str
    doc_type: str
    content: str
    title: str
    pii: list[dict] = field(default_factory=list)
    decoys: list[dict] = field(default_factory=list)
    kind: str = "good"
    duplicate_of: str | None = None
    edit_rate: float | None = None
    record_id: str | None = None
    line: int | None = None
    article: Article | None = None

    @property
    def truth_id(self) -> str:
        return f"domain/{self.relpath}" + (f"#{self.record_id}" if self.record_id else "")


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def _period(rng: random.Random) -> tuple[str, int]:
    return f"Q{rng.randint(1, 4)}", rng.randint(2022, 2025)


def _person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(text_en.FIRST_NAMES), rng.choice(text_en.LAST_NAMES)


class DomainBuilder:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.secret_turn = 0

    # -- one builder per document type; each returns a DomainDoc ----------------------------------

    def earnings_note(self, i: int) -> DomainDoc:
        rng = self.rng
        company, (q, year) = rng.choice(fin.COMPANIES), _period(rng)
        slots = fin.Slots(rng, company, q, year)
        first, last = rng.choice(fin.ANALYSTS)
        art = Article(
            "en",
            f"{company}: {q} {year} earnings note",
            byline=f"Prepared by {first} {last}, equity research",
            date_text=P.date(rng),
        )
        summary = fin.fill(rng, fin.RESULT_TEMPLATES, 2, slots) + rng.sample(fin.PROSE, 3)
        results = fin.fill(rng, fin.RESULT_TEMPLATES, rng.randint(2, 4), slots) + rng.sample(fin.PROSE, 2)
        outlook = fin.fill(rng, fin.COMMENT_TEMPLATES, rng.randint(2, 4), slots) + rng.sample(fin.PROSE, 2)
        art.blocks = [
            Heading("Summary"),
            Paragraph(summary, [False] * len(summary)),
            Heading("Results"),
            Paragraph(results, [False] * len(results)),
            Heading("Outlook"),
            Paragraph(outlook, [False] * len(outlook)),
        ]
        if rng.random() < 0.3:
            value = P.price(rng, "usd")
            art.insert_sentence(rng, f"Our fair value estimate is {value} per share on a sum-of-the-parts basis.")
            art.decoys.append({"type": "price", "value": value})
        fmt = "md" if rng.random() < 0.6 else "txt"
        rel = f"research/notes/{_slug(company)}-{q.lower()}-{year}-{i:03d}.{fmt}"
        return DomainDoc(rel, fmt, "earnings_note", art.to_text(fmt == "md"), art.title, [], art.decoys, article=art)

    def filing(self, i: int) -> DomainDoc:
        rng = self.rng
        company, (q, year) = rng.choice(fin.COMPANIES), _period(rng)
        slots = fin.Slots(rng, company, q, year)
        title = f"{company} — Quarterly report (Form 10-Q), {q} {year}"
        rows = "".join(
            f"<tr><td>{label}</td><td>{cur}</td><td>{prev}</td></tr>"
            for label, cur, prev in (
                ("Total revenue", f"${rng.uniform(200, 5000):,.1f}m", f"${rng.uniform(200, 5000):,.1f}m"),
                ("Net income", f"${rng.uniform(20, 900):,.1f}m", f"${rng.uniform(20, 900):,.1f}m"),
                ("Diluted EPS", f"${rng.uniform(0.2, 4.8):.2f}", f"${rng.uniform(0.2, 4.8):.2f}"),
                ("CET1 ratio", f"{rng.uniform(11, 16.5):.1f}%", f"{rng.uniform(11, 16.5):.1f}%"),
            )
        )
        mdna = " ".join(fin.fill(rng, fin.RESULT_TEMPLATES, rng.randint(4, 6), slots))
        mdna2 = " ".join(fin.fill(rng, fin.COMMENT_TEMPLATES, rng.randint(2, 4), slots))
        risks = " ".join(fin.fill(rng, fin.RISK_TEMPLATES, rng.randint(3, 5), slots))
        html = (
            f'<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>{escape(title)}</title></head>\n'
            f"<body>\n<h1>{escape(title)}</h1>\n<h2>Management's discussion and analysis</h2>\n"
            f"<p>{escape(mdna)}</p>\n<p>{escape(mdna2)}</p>\n"
            f"<table>\n<thead><tr><th>Metric</th><th>{q} {year}</th><th>{q} {year - 1}</th></tr></thead>\n"
            f"<tbody>{rows}</tbody>\n</table>\n<h2>Risk factors</h2>\n<p>{escape(risks)}</p>\n</body>\n</html>\n"
        )
        rel = f"filings/{year}/{_slug(company)}-10q-{q.lower()}-{i:03d}.html"
        return DomainDoc(rel, "html", "filing", html, title)

    def board_minutes(self, i: int) -> DomainDoc:
        rng = self.rng
        company, (q, year) = rng.choice(fin.COMPANIES), _period(rng)
        month = rng.randint(1, 12)
        people = [f"{f} {last}" for f, last in (_person(rng) for _ in range(5))]
        items = [s.format(q=q) for s in rng.sample(fin.MINUTES_ITEMS, rng.randint(4, 6))]
        lines = [
            f"# {company}: minutes of the board meeting, {year}-{month:02d}",
            "",
            f"Present: {', '.join(people[:4])} (chair). Apologies: {people[4]}.",
            "",
            "## Items",
            "",
        ]
        lines += [f"{n}. {item}" for n, item in enumerate(items, 1)]
        lines += ["", "## Actions", ""]
        pii, decoys = [], []
        first, last = people[1].split(" ")
        if rng.random() < 0.5:
            mail = P.email(rng, first, last)
            lines.append(f"- {people[1]} ({mail}) to send the updated capital plan to all members.")
            pii.append({"type": "email", "value": mail})
            number = P.phone(rng, rng.choice(("uk_intl", "us_intl", "de_intl")))
            lines.append(f"- Remote members can dial in on {number} for the next meeting.")
            pii.append({"type": "phone", "value": number})
        else:
            lines.append(f"- {people[1]} to circulate the revised forecast before the next meeting.")
        when = P.date(rng)
        lines.append(f"- The next meeting is scheduled for {when}.")
        decoys.append({"type": "date", "value": when})
        rel = f"board/{year}/minutes-{year}-{month:02d}-{i:03d}.md"
        return DomainDoc(rel, "md", "board_minutes", "\n".join(lines) + "\n", lines[0][2:], pii, decoys)

    def payment_instructions(self, i: int) -> DomainDoc:
        rng = self.rng
        company, client = rng.sample(fin.COMPANIES, 2)
        first, last = _person(rng)
        account = P.iban(rng, rng.choice(("DE", "GB", "FR", "NL")))
        mail, number = P.email(rng, first, last), P.phone(rng, rng.choice(P.EN_PHONE_FORMATS))
        invoice, amount, due = P.order_number(rng), P.price(rng, rng.choice(("usd", "eur", "gbp"))), P.date(rng)
        title = f"Payment instructions for {client}"
        text = (
            f"{title}\n\n"
            f"Please settle invoice {invoice} for {amount} by {due} using the account details below.\n\n"
            f"Beneficiary: {company}\nIBAN: {account}\nReference: {invoice}\n\n"
            f"If you have questions about this payment, contact {first} {last} at {mail} or on {number}.\n"
            "Payments received after the due date may be charged interest at the statutory rate.\n"
        )
        pii = [{"type": "iban", "value": account}, {"type": "email", "value": mail}, {"type": "phone", "value": number}]
        decoys = [
            {"type": "order_number", "value": invoice},
            {"type": "price", "value": amount},
            {"type": "date", "value": due},
        ]
        rel = f"treasury/payments/instructions-{i:03d}.txt"
        return DomainDoc(rel, "txt", "payment_instructions", text, title, pii, decoys)

    def runbook(self, i: int) -> DomainDoc:
        rng = self.rng
        job = rng.choice(fin.JOBS)
        host, ver, reviewed = P.private_ip(rng), P.version(rng), P.date(rng)
        title = f"Runbook: {job}"
        env = [f"export LEDGER_DB_HOST={host}", f"export EXPORT_TOOL_VERSION={ver}"]
        pii: list[dict] = []
        extra_blocks: list[str] = []
        if rng.random() < 0.6:
            for _ in range(2):
                kind = RUNBOOK_SECRETS[self.secret_turn % len(RUNBOOK_SECRETS)]
                self.secret_turn += 1
                line, value = self._secret_line(kind)
                if kind == "private_key":
                    extra_blocks.append(value)
                else:
                    env.append(line)
                pii.append({"type": kind, "value": value})
        steps = rng.sample(fin.RUNBOOK_STEPS, rng.randint(3, 5))
        lines = [f"# {title}", "", f"Owner: data platform team. Last reviewed {reviewed}.", "", "## Steps", ""]
        lines += [f"{n}. {step}" for n, step in enumerate(steps, 1)]
        lines += ["", "## Environment", "", "```bash", *env, './bin/run --date "$(date +%F)"', "```", ""]
        for block in extra_blocks:
            lines += ["The service account key used by the export job:", "", "```", block, "```", ""]
        decoys = [
            {"type": "private_ip", "value": host},
            {"type": "version", "value": ver},
            {"type": "date", "value": reviewed},
        ]
        rel = f"operations/runbooks/{_slug(job)}-{i:03d}.md"
        return DomainDoc(rel, "md", "runbook", "\n".join(lines), title, pii, decoys)

    def _secret_line(self, kind: str) -> tuple[str, str]:
        rng = self.rng
        if kind == "aws_access_key":
            value = P.aws_access_key(rng)
            return f"export AWS_ACCESS_KEY_ID={value}", value
        if kind == "api_key":
            value = P.api_secret(rng)
            return rng.choice((f'api_key = "{value}"', f"API_SECRET: {value}")), value
        if kind == "private_key":
            value = P.private_key_block(rng)
            return value, value
        if kind == "github_token":
            value = P.github_token(rng)
            return f"export GITHUB_TOKEN={value}", value
        if kind == "gitlab_token":
            value = P.gitlab_token(rng)
            return f"export GITLAB_TOKEN={value}", value
        if kind == "slack_token":
            value = P.slack_token(rng)
            return f"export SLACK_BOT_TOKEN={value}", value
        value = P.jwt(rng, " ".join(_person(rng)))
        return f"curl -H 'Authorization: Bearer {value}' https://api.internal.example/v1/exports", value

    def kyc_memo(self, i: int) -> DomainDoc:
        rng = self.rng
        first, last = _person(rng)
        rm_first, rm_last = _person(rng)
        ssn, mail = P.ssn(rng), P.email(rng, first, last)
        number = P.phone(rng, rng.choice(("us_paren", "us_dash", "us_intl")))
        card, addr = P.card_number(rng), P.ipv4_public(rng)
        when, turnover, example = P.date(rng), P.price(rng, "usd"), P.ssn_like(rng)
        title = f"Client onboarding memo: {first} {last}"
        sentences = [
            f"The client, {first} {last}, opened a current account and a brokerage account on {when}.",
            f"Her Social Security number, {ssn}, was checked against the credit bureau record.",
            f"She can be reached at {mail} or by phone on {number}.",
            f"A debit card with the number {card} was issued on the same day.",
            f"The online application was submitted from the IP address {addr}.",
            f"Expected monthly turnover is below {turnover}, mainly salary and savings transfers.",
            f"Note that the scanned form still shows the sample number {example} in the help text.",
            "Risk rating: low. No adverse media and no sanctions matches were found.",
        ]
        pii = [
            {"type": "ssn", "value": ssn},
            {"type": "email", "value": mail},
            {"type": "phone", "value": number},
            {"type": "credit_card", "value": card},
            {"type": "ipv4", "value": addr},
        ]
        decoys = [
            {"type": "date", "value": when},
            {"type": "price", "value": turnover},
            {"type": "ssn_like", "value": example},
        ]
        meta = f"Relationship manager: {rm_first} {rm_last}"
        if rng.random() < 0.5:
            content = f"{title}\n\n{meta}\n\n" + "\n".join(sentences) + "\n"
            fmt = "txt"
        else:
            body = "".join(f"<p>{escape(s)}</p>\n" for s in sentences)
            content = (
                f'<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>{escape(title)}</title>'
                f"</head>\n<body>\n<h1>{escape(title)}</h1>\n<p>{escape(meta)}</p>\n{body}</body>\n</html>\n"
            )
            fmt = "html"
        return DomainDoc(f"clients/onboarding/kyc-memo-{i:03d}.{fmt}", fmt, "kyc_memo", content, title, pii, decoys)

    def risk_report(self, i: int) -> DomainDoc:
        rng = self.rng
        company, (q, year) = rng.choice(fin.COMPANIES), _period(rng)
        slots = fin.Slots(rng, company, q, year)
        title = f"{company} risk report, {q} {year}"
        market = fin.fill(rng, fin.RISK_TEMPLATES, rng.randint(3, 5), slots)
        credit = fin.fill(rng, fin.COMMENT_TEMPLATES, rng.randint(2, 3), slots)
        if rng.random() < 0.5:
            content = (
                f"{title}\n\nMarket and liquidity risk\n\n{' '.join(market)}\n\nCredit risk\n\n{' '.join(credit)}\n"
            )
            fmt = "txt"
        else:
            content = (
                f'<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>{escape(title)}</title>'
                f"</head>\n<body>\n<h1>{escape(title)}</h1>\n<h2>Market and liquidity risk</h2>\n"
                f"<p>{escape(' '.join(market))}</p>\n<h2>Credit risk</h2>\n<p>{escape(' '.join(credit))}</p>\n"
                "</body>\n</html>\n"
            )
            fmt = "html"
        return DomainDoc(f"risk/reports/{year}/risk-{q.lower()}-{i:03d}.{fmt}", fmt, "risk_report", content, title)

    def press_release(self, i: int) -> DomainDoc:
        rng = self.rng
        company, (q, year) = rng.choice(fin.COMPANIES), _period(rng)
        slots = fin.Slots(rng, company, q, year)
        ceo_first, ceo_last = _person(rng)
        art = Article("en", f"{company} reports {q} {year} results")
        lead = [f"{rng.choice(fin.CITIES)} — {company} today reported its results for {q} {year}."]
        prose = rng.sample(fin.PROSE, 5)
        paras = [
            lead + fin.fill(rng, fin.RESULT_TEMPLATES, 2, slots) + prose[:2],
            fin.fill(rng, fin.RESULT_TEMPLATES, 1, slots) + fin.fill(rng, fin.COMMENT_TEMPLATES, 1, slots) + prose[2:],
            [
                f'"We delivered a solid quarter and kept our costs under control," said {ceo_first} {ceo_last}, '
                "chief executive officer.",
                "The company will discuss the results on a conference call with analysts this afternoon.",
            ],
        ]
        art.blocks = [Paragraph(p, [False] * len(p)) for p in paras]
        rel = f"press/{year}/{_slug(company)}-{q.lower()}-results-{i:03d}.txt"
        return DomainDoc(rel, "txt", "press_release", art.to_text(), art.title, article=art)

    def analyst_note_record(self, i: int, plant: bool) -> DomainDoc:
        rng = self.rng
        company, (q, year) = rng.choice(fin.COMPANIES), _period(rng)
        slots = fin.Slots(rng, company, q, year)
        first, last = rng.choice(fin.ANALYSTS)
        sentences = fin.fill(rng, fin.RESULT_TEMPLATES, rng.randint(1, 2), slots)
        sentences += fin.fill(rng, fin.COMMENT_TEMPLATES, rng.randint(1, 2), slots) + rng.sample(fin.PROSE, 3)
        pii = []
        if plant:
            mail = P.email(rng, first, last)
            sentences.append(f"Questions about this note can go to {mail}.")
            pii.append({"type": "email", "value": mail})
        record_id = f"note-{i:05d}"
        doc = DomainDoc(
            "research/analyst_notes.jsonl",
            "jsonl",
            "analyst_note",
            " ".join(sentences),
            f"{company} {q} {year}: quick take",
            pii,
            record_id=record_id,
        )
        doc.article = Article("en", doc.title)
        doc.article.byline, doc.article.date_text = f"{first} {last}", P.date(rng)
        return doc

    def draft_of(self, note: DomainDoc) -> DomainDoc:
        """A lightly edited earlier draft of an earnings note: a near-duplicate within the domain."""
        assert note.article is not None
        rate = self.rng.uniform(0.02, 0.06)
        vocab = vocabulary_of(fin.RESULT_TEMPLATES + fin.COMMENT_TEMPLATES + fin.PROSE)
        edited, realised = edit_words(self.rng, note.article, rate, vocab)
        stem = note.relpath.rsplit("/", 1)[1].rsplit(".", 1)[0]
        return DomainDoc(
            f"research/notes/drafts/{stem}-draft.md",
            "md",
            "earnings_note",
            edited.to_text(markdown=True),
            edited.title,
            [],
            [dict(d) for d in note.decoys],
            kind="near_dup",
            duplicate_of=note.truth_id,
            edit_rate=round(realised, 4),
        )


def build_domain(rng: random.Random, n_docs: int) -> list[DomainDoc]:
    """``n_docs`` documents: files of every type, analyst notes in one JSONL file, one draft near-dup."""
    if n_docs <= 0:
        return []
    builder = DomainBuilder(rng)
    n_jsonl = min(10, max(2, n_docs // 8)) if n_docs >= 4 else 0
    n_draft = 1 if n_docs >= 12 else 0
    n_files = n_docs - n_jsonl - n_draft
    types = [DOC_TYPE_CYCLE[i % len(DOC_TYPE_CYCLE)] for i in range(n_files)]
    rng.shuffle(types)
    docs = [getattr(builder, kind)(i) for i, kind in enumerate(types)]
    planted = set(rng.sample(range(n_jsonl), min(2, n_jsonl)))
    for j in range(n_jsonl):
        record = builder.analyst_note_record(j, j in planted)
        record.line = j
        docs.append(record)
    if n_draft:
        notes = [d for d in docs if d.doc_type == "earnings_note" and d.article is not None and d.fmt != "jsonl"]
        if notes:
            docs.append(builder.draft_of(rng.choice(notes)))
    return docs


def write_domain(docs: list[DomainDoc], domain_dir) -> None:
    """Write every document under ``domain_dir``; analyst notes go into one JSONL file, one per line."""
    from pathlib import Path

    domain_dir = Path(domain_dir)
    jsonl: dict[str, list[str]] = {}
    for doc in docs:
        if doc.fmt == "jsonl":
            assert doc.article is not None
            record = {
                "id": doc.record_id,
                "title": doc.title,
                "author": doc.article.byline,
                "date": doc.article.date_text,
                "text": doc.content,
            }
            jsonl.setdefault(doc.relpath, []).append(json.dumps(record, ensure_ascii=False))
            continue
        path = domain_dir / doc.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc.content, encoding="utf-8")
    for relpath, lines in jsonl.items():
        path = domain_dir / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
