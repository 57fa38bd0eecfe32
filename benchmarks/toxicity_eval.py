"""Toxicity stage on a set built at run time: abusive documents dropped, ordinary ones kept, documents per CPU-s.

The ordinary documents are text others wrote, read from installed Debian packages and the Python standard library
(install them with ``apt-get install fortunes dict-gcide dict-devil wordnet-base``; a missing one is reported and
left out, never replaced by text of ours):

- ``fortunes``: every fortune cookie of the English ``fortunes`` package (``/usr/share/games/fortunes``, the
  offensive section is a separate package Debian no longer ships), one document each;
- ``gcide``: the GNU Collaborative International Dictionary of English (``dict-gcide``; Webster 1913 +
  WordNet), consecutive entries packed into documents of ~2 KB, from seeded random places;
- ``devil``: Ambrose Bierce's *The Devil's Dictionary* (``dict-devil``), entries packed into ~2 KB documents;
- ``pydoc``: pydoc's plain-text pages of 20 stdlib modules, cut into ~2 KB documents;
- ``licenses``: the legal texts in ``/usr/share/common-licenses`` (GPL, Apache, MPL...), cut into ~2 KB;
- ``medical/legal``: text that names body parts, sex, crimes and violence: the GCIDE entry (one document each)
  and the WordNet noun glosses (``wordnet-base``, one document per word) of every word in ``SENSITIVE_TERMS``,
  plus the ``medicine`` and ``law`` fortune files. Counted in "ordinary" and shown as its own row.

The abusive documents are assembled from phrases written for this set (``ABUSIVE_LINES``: insults, profanity
and threats aimed at the reader; no identity-based slurs): each document joins 3 to 6 of them, drawn with a
seeded ``random.Random``, one per line, like a comment thread. Three further rows are shown, not part of the
acceptance: ``abusive thread`` (4 to 8 lines, half abusive lines, half fortune cookies), ``abusive in ordinary
text`` (2 abusive lines among the entries of a ~2 KB GCIDE document: too small a share for either rule) and
``implicit abuse`` (``IMPLICIT_LINES``: hostile sentences with no swear word, which a bag-of-words model is
known to miss). ``double-meaning words`` is ordinary text (counted there): the GCIDE entries and WordNet glosses
of ``DOUBLE_MEANING_TERMS`` (bitch: a female dog...), which define words that are also insults.

    python benchmarks/toxicity_eval.py [--abusive 2000] [--show 5] [--threshold T --paragraph-threshold P --share S]

Acceptance (issue 13): abusive dropped >= 90 %, ordinary kept >= 99 %, at the default thresholds.
Throughput: documents scored per CPU-second of this process and its children (one core), over every row.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import random
import sys
from pathlib import Path

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off

FORTUNES = Path("/usr/share/games/fortunes")
DICTD = Path("/usr/share/dictd")
WORDNET = Path("/usr/share/wordnet")
LICENSES = Path("/usr/share/common-licenses")
MODULES = [
    "argparse", "collections", "csv", "datetime", "email", "functools", "json", "logging", "os", "pathlib",
    "re", "shutil", "socket", "sqlite3", "string", "subprocess", "textwrap", "threading", "typing", "unittest",
]  # fmt: skip

# words a word-level model may take for abuse although medical, legal and dictionary text uses them plainly
SENSITIVE_TERMS = [
    "anus", "breast", "buttock", "cervix", "clitoris", "genitals", "nipple", "orgasm", "ovary", "penis",
    "prostate", "rectum", "scrotum", "semen", "sperm", "testicle", "urine", "uterus", "vagina", "vulva",
    "feces", "masturbation", "intercourse", "erection", "ejaculation", "menstruation", "abortion", "syphilis",
    "assault", "murder", "homicide", "manslaughter", "rape", "incest", "sodomy", "prostitution", "pornography",
    "kidnapping", "robbery", "arson", "torture", "suicide", "genocide", "terrorism", "molestation", "slave",
    "drug", "heroin", "cocaine", "kill", "stab", "strangle",
]  # fmt: skip
# words whose plain sense (a female dog, a donkey, a rooster, a cat) is also a common insult or obscenity
DOUBLE_MEANING_TERMS = ["bitch", "ass", "cock", "pussy", "bastard", "whore", "screw", "prick", "dick", "tart"]

# written for this set; clearly abusive: profanity-laden insults and threats at the reader
ABUSIVE_LINES = [
    "You are a fucking idiot and everyone here knows it.",
    "Shut the fuck up, you worthless piece of shit.",
    "Go fuck yourself, moron.",
    "What a stupid bitch, nobody asked for your crap opinion.",
    "You dumb ass, learn to read before you post this shit.",
    "Fuck off and die, loser.",
    "You're a pathetic little dickhead.",
    "I will find you and beat the shit out of you.",
    "Eat shit, you ugly bastard.",
    "This author is a complete asshole and a liar.",
    "You absolute cunt, get lost.",
    "Stupid motherfucker, stop spamming this thread.",
    "Kill yourself, you useless retard.",
    "Suck my dick, fanboy.",
    "Your mom is a whore and you are a son of a bitch.",
    "Shove it up your ass, you arrogant prick.",
    "Nobody cares, you fat fucking slob.",
    "Get a life, you brainless twat.",
    "You're so damn dumb it hurts, idiot.",
    "Screw you and your bullshit article.",
    "Piss off, jackass.",
    "What a load of crap from a total dumbass.",
    "I hope you choke, you miserable fuck.",
    "Hey shithead, delete your account.",
    "You are scum, a filthy disgusting pig.",
    "Fucking hell, how can anyone be this stupid.",
    "Moderators, ban this asshole already, he is a troll and a cocksucker.",
    "Back off, bitch, or you'll regret it.",
    "You wanker, go back under your bridge.",
    "Dumb fuck thinks he's clever.",
]

# hostile with no swear word: a word-level model is known to miss these (reported, not in the acceptance)
IMPLICIT_LINES = [
    "People like you should not be allowed near a keyboard.",
    "Nobody would miss you if you disappeared tomorrow.",
    "I know where you live and I will be waiting outside.",
    "Go back to where you came from, nobody wants you here.",
    "Your opinion is worth less than the dirt under my shoe.",
    "Do everyone a favour and never speak again.",
    "You are the reason this world is getting worse.",
    "Someone should teach you a lesson you will not forget.",
]


def missing(what: str, package: str) -> None:
    print(f"note: {what} not found; apt-get install {package} to include it", file=sys.stderr)


def pack(pieces: list[str], size: int = 2048) -> list[str]:
    """Join consecutive pieces (blank line between) into documents of about ``size`` characters."""
    docs, current = [], ""
    for piece in pieces:
        current = f"{current}\n\n{piece}" if current else piece
        if len(current) >= size:
            docs.append(current)
            current = ""
    if current:
        docs.append(current)
    return docs


def fortunes(names: list[str] | None = None) -> list[str]:
    """Each cookie of the English fortune files (``%`` lines separate them), or of the files in ``names``."""
    if not FORTUNES.is_dir():
        missing("fortunes", "fortunes")
        return []
    files = [FORTUNES / n for n in names] if names else sorted(FORTUNES.glob("*"))
    out = []
    for path in files:
        if path.is_dir() or path.suffix in {".dat", ".u8"} or not path.exists():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        out += [c.strip() for c in text.split("\n%\n") if c.strip()]
    return out


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(value: str) -> int:
    number = 0
    for char in value:
        number = number * 64 + _B64.index(char)
    return number


def dictd_entries(name: str) -> list[tuple[str, str]]:
    """``(headword, entry)`` of a dictd database, in index order (offsets are dictd's base-64 numbers)."""
    index, data = DICTD / f"{name}.index", DICTD / f"{name}.dict.dz"
    if not index.exists() or not data.exists():
        missing(f"dictd database {name}", f"dict-{name}")
        return []
    with gzip.open(data) as handle:  # dictzip is gzip with an index in a header field
        blob = handle.read()
    out = []
    for line in index.read_text(encoding="utf-8", errors="replace").splitlines():
        head, offset, length = line.split("\t")[:3]
        if head.startswith("00"):
            continue
        out.append((head, blob[_b64(offset) : _b64(offset) + _b64(length)].decode("utf-8", "replace").strip()))
    return out


def dictionary_docs(name: str, count: int, rng: random.Random) -> list[str]:
    """``count`` documents of ~2 KB, each consecutive entries from a seeded random place in the dictionary."""
    entries = [e for _, e in dictd_entries(name)]
    if not entries:
        return []
    docs = []
    for _ in range(count):
        start = rng.randrange(len(entries))
        docs += pack(entries[start : start + 40])[:1]
    return docs


def wordnet_glosses(terms: list[str]) -> list[str]:
    """One document per term: its WordNet noun and verb synsets' words and glosses."""
    files = [WORDNET / "data.noun", WORDNET / "data.verb"]
    if not all(f.exists() for f in files):
        missing("WordNet", "wordnet-base")
        return []
    wanted = set(terms)
    found: dict[str, list[str]] = {}
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(" ") or "|" not in line:
                continue
            fields, gloss = line.split("|", 1)
            parts = fields.split()
            words = [parts[4 + 2 * k].replace("_", " ") for k in range(int(parts[3], 16))]
            for word in words:
                if word.lower() in wanted:
                    found.setdefault(word.lower(), []).append(f"{', '.join(words)}: {gloss.strip()}")
    return ["\n".join(found[t]) for t in terms if t in found]


def pydoc_docs() -> list[str]:
    import pydoc

    pages = [pydoc.render_doc(importlib.import_module(m), renderer=pydoc.plaintext) for m in MODULES]
    return pack([line for page in pages for line in page.splitlines()])  # pydoc pages have few blank lines


def license_docs() -> list[str]:
    if not LICENSES.is_dir():
        missing("common licenses", "base-files")
        return []
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(LICENSES.iterdir()) if p.is_file()]
    return pack([p for t in texts for p in t.split("\n\n")])


def abusive_docs(count: int, rng: random.Random, lines: list[str] = ABUSIVE_LINES) -> list[str]:
    return ["\n".join(rng.sample(lines, rng.randint(3, min(6, len(lines))))) for _ in range(count)]


def thread_docs(count: int, rng: random.Random, pool: list[str]) -> list[str]:
    """A comment thread: 4 to 8 lines, half abusive lines, half fortune cookies (flattened to one line)."""
    out = []
    for _ in range(count):
        half = rng.randint(2, 4)
        lines = rng.sample(ABUSIVE_LINES, half) + [" ".join(c.split()) for c in rng.sample(pool, half)]
        rng.shuffle(lines)
        out.append("\n".join(lines))
    return out


def embedded_docs(count: int, rng: random.Random) -> list[str]:
    """Two abusive lines placed among the paragraphs of a ~2 KB dictionary document."""
    base = dictionary_docs("gcide", count, rng)
    out = []
    for doc in base:
        paragraphs = doc.split("\n\n")
        for line in rng.sample(ABUSIVE_LINES, 2):
            paragraphs.insert(rng.randrange(len(paragraphs) + 1), line)
        out.append("\n\n".join(paragraphs))
    return out


def build_sets(n_abusive: int, seed: int = 0) -> dict[str, dict[str, list[str]]]:
    """``{"abusive": {row: docs}, "ordinary": {row: docs}, "extra": {row: docs}}``."""
    rng = random.Random(seed)
    gcide = dict(dictd_entries("gcide"))
    lowered: dict[str, str] = {}
    for head, entry in gcide.items():
        lowered.setdefault(head.lower(), entry)
    sensitive = [lowered[t] for t in SENSITIVE_TERMS if t in lowered]
    sensitive += wordnet_glosses(SENSITIVE_TERMS) + fortunes(["medicine", "law"])
    double = [lowered[t] for t in DOUBLE_MEANING_TERMS if t in lowered] + wordnet_glosses(DOUBLE_MEANING_TERMS)
    cookies = fortunes()
    return {
        "abusive": {"abusive (phrases written for this set)": abusive_docs(n_abusive, rng)},
        "ordinary": {
            "fortunes (all English cookies)": cookies,
            "gcide dictionary, >= 2 KB": dictionary_docs("gcide", 2000, rng),
            "devil's dictionary, >= 2 KB": dictionary_docs("devil", 300, rng),
            "pydoc, >= 2 KB": pydoc_docs(),
            "common licenses, >= 2 KB": license_docs(),
            "medical/legal (gcide, wordnet, fortunes)": sensitive,
            "double-meaning words (gcide, wordnet)": double,
        },
        "extra": {
            "abusive thread (half the lines abusive)": thread_docs(500, rng, cookies),
            "abusive in ordinary text (2 lines in >= 2 KB)": embedded_docs(500, rng),
            "implicit abuse (no swear words)": abusive_docs(200, rng, IMPLICIT_LINES),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--abusive", type=int, default=2000, help="abusive documents assembled")
    parser.add_argument("--show", type=int, default=5, help="ordinary documents dropped to print")
    parser.add_argument("--threshold", type=float)
    parser.add_argument("--paragraph-threshold", type=float)
    parser.add_argument("--share", type=float, help="max_toxic_paragraph_share")
    args = parser.parse_args()

    from datatrove.data import Document

    from pipeline.curate.config import ToxicityConfig
    from pipeline.curate.toxicity import ToxicityStage

    sets = build_sets(args.abusive)
    overrides = {
        key: value
        for key, value in [
            ("threshold", args.threshold),
            ("paragraph_threshold", args.paragraph_threshold),
            ("max_toxic_paragraph_share", args.share),
        ]
        if value is not None
    }
    config = ToxicityConfig(**overrides)
    stage = ToxicityStage(config)
    stage.setup()  # the model load is a fixed cost of the rank, not of each document
    print(
        f"thresholds: document {config.threshold}, paragraph {config.paragraph_threshold}, "
        f"max_toxic_paragraph_share {config.max_toxic_paragraph_share}"
    )
    rows, dropped_ordinary, total_docs, total_cpu = [], [], 0, 0.0
    for group, named in sets.items():
        for row, texts in named.items():
            docs = [Document(text=t, id=f"{row}/{i}", metadata={"language": "en"}) for i, t in enumerate(texts)]
            start = cpu_seconds()
            verdicts = []
            for at in range(0, len(docs), config.batch_size):
                verdicts += stage.process_batch(docs[at : at + config.batch_size])
            spent = cpu_seconds() - start
            total_cpu += spent
            total_docs += len(docs)
            dropped = [(d, v) for d, v in zip(docs, verdicts, strict=True) if v is not None]
            if group == "ordinary":
                dropped_ordinary += dropped
            rows.append((group, row, len(docs), len(dropped), spent, sum(len(t) for t in texts)))
    print()
    print("| set | documents | mean chars | dropped % | kept % | docs / CPU-s |")
    print("|---|---:|---:|---:|---:|---:|")
    for group in ("abusive", "ordinary", "extra"):
        for g, row, n, d, spent, chars in rows:
            if g == group and n:
                rate = f"{n / spent:,.0f}" if spent > 0 else "-"
                cells = f"{n:,} | {chars / n:,.0f} | {100 * d / n:.2f} | {100 * (n - d) / n:.2f} | {rate}"
                print(f"| {row} | {cells} |")
        if group == "ordinary":
            n = sum(r[2] for r in rows if r[0] == group)
            d = sum(r[3] for r in rows if r[0] == group)
            print(f"| **all ordinary** | {n:,} | | {100 * d / n:.2f} | **{100 * (n - d) / n:.2f}** | |")
    print(f"\nthroughput: {total_docs:,} documents in {total_cpu:.2f} CPU-s = {total_docs / total_cpu:,.0f} docs/CPU-s")
    for doc, verdict in dropped_ordinary[: args.show]:
        meta = doc.metadata["toxicity"]
        print(f"\n--- ordinary dropped: {doc.id} rule {verdict.rule} score {verdict.score:.3f} {meta}")
        print(doc.text[:600])


if __name__ == "__main__":
    main()
