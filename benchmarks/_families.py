"""Document families for ``benchmarks/real_text.py`` that the machine does not have installed: Debian packages
fetched with ``apt-get download`` and unpacked with ``dpkg-deb`` under the benchmark's cache folder (no root,
nothing installed, nothing stored in the repository), plus the families every Debian system has (info manuals,
HTML under /usr/share/doc).

Each family yields ``(family, language, page, English counterpart or None)``; the builder samples them in turn
per language and leaves out pages that are short, mostly English or untranslated, as for the Debian manuals.

* ``gimp-help`` — the GIMP user manual (DocBook HTML, one page per dialog or tool), ~25 languages;
* ``libreoffice-help`` — LibreOffice's help pages (one generated template per command: a heading, a paragraph,
  option lists and "Tip"/"Note" boxes), ~30 languages;
* ``postgresql-doc`` — the PostgreSQL manual: system-catalog pages (a table per column of a catalog), function
  references and SQL command pages with option lists;
* ``git-doc`` — git's manual pages as HTML (asciidoc: an option list per command);
* ``apache2-doc`` — the Apache HTTP Server manual: one page per module (a directive reference: the same
  *Description/Syntax/Default/Context/Status/Module* block per directive), in English and 10 translations;
* ``sqlite3-doc`` — SQLite's documentation: SQL syntax and function pages, the C API reference (one page per
  function or constant group), pragma lists;
* ``ffmpeg-doc`` — FFmpeg's manuals (option lists per codec, filter and muxer) and its Doxygen API reference
  (function and struct pages; source listings left out);
* ``cmake-doc`` — CMake's reference (Sphinx: one page per command, variable, property, module, policy);
* ``glib-doc`` — GLib/GObject/GIO's gtk-doc API reference (a signature, a description and a parameter table per
  function);
* ``postfix-doc`` — Postfix's HTML documentation (README guides and its manual pages, ``postconf(5)``'s
  parameter list among them);
* ``javadoc`` — the Java SE 17 API reference (``openjdk-17-doc``: one page per class, package and module, with
  member summaries and details; class-use, source and index pages left out);
* ``octave-doc`` — GNU Octave's manual and liboctave's reference as Texinfo HTML (one page per node, prose
  around code examples, signature lists);
* ``django-doc`` — Django's documentation (Sphinx: topic guides, the reference, release notes of bullet lists);
* ``nodejs-doc`` — Node.js's API reference (one page per module, ``all.html`` the whole of it);
* ``doc-html`` — other HTML under /usr/share/doc (whatever packages ship there);
* ``info`` — GNU info manuals, one file per node (coreutils, find, grep, sed, tar … whatever is installed),
  as plain text (domain part);
* ``man`` translations from manpages-l10n (``manpages-<lang>``), rendered with ``man -l`` (domain part).
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

DOC = Path("/usr/share/doc")
INFO = Path("/usr/share/info")

#: package-name language → the language folder inside the package (when it differs)
GIMP_LANGUAGES = "ca cs da de el es fi fr hu it ja ko nl pt-br ro ru sl sv uk zh-cn".split()  # noqa: SIM905
LIBREOFFICE_LANGUAGES = "cs da de el es fi fr hu id it ja ko nl pl pt-br ru sl sv tr vi zh-cn".split()  # noqa: SIM905
MANPAGES_LANGUAGES = "cs da de el es fi fr hu id it ja ko mk nb nl pl pt-br ro ru sr sv tr uk vi zh".split()  # noqa: SIM905
EXTRA_ENGLISH = ["gimp-help-en", "libreoffice-help-en-us", "postgresql-doc-15", "git-doc"]
#: builder v9: reference documentation of the kinds issue 21 names (function references, option lists,
#: database-schema pages, help pages), English unless the package ships translations (apache2-doc)
REFERENCE_FAMILIES = ["apache2-doc", "sqlite3-doc", "ffmpeg-doc", "cmake-doc", "libglib2.0-doc", "postfix-doc"]
#: builder v10: API references and manuals of other generators (javadoc, Texinfo's HTML, Sphinx release notes
#: and topic guides, Node.js's API pages), after a probe of 7 packages the set did not use (docs/filters.md)
REFERENCE_FAMILIES += ["openjdk-17-doc", "octave-doc", "python-django-doc", "nodejs-doc"]
APACHE_LANGUAGES = "da de es fr ja ko pt-br ru tr zh-cn".split()  # noqa: SIM905

Candidate = tuple[str, str, Path, Path | None]


def packages() -> list[str]:
    """Every Debian package these families are built from."""
    return (
        EXTRA_ENGLISH
        + REFERENCE_FAMILIES
        + [f"gimp-help-{lang}" for lang in GIMP_LANGUAGES]
        + [f"libreoffice-help-{lang}" for lang in LIBREOFFICE_LANGUAGES]
        + [f"manpages-{lang}" for lang in MANPAGES_LANGUAGES]
    )


def fetch(package_names: list[str], root: Path, log) -> list[str]:
    """Unpack each package's documentation files under ``root/<package>`` (``apt-get download`` + ``dpkg-deb``);
    returns the packages that could not be fetched. A package already unpacked is reused."""
    missing = []
    root.mkdir(parents=True, exist_ok=True)
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        log("apt-get/dpkg-deb unavailable: the packaged families are left out")
        return list(package_names)
    for name in package_names:
        target = root / name
        if (target / ".done").exists():
            continue
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            result = subprocess.run(["apt-get", "download", name], cwd=tmp, capture_output=True, text=True)
            debs = list(Path(tmp).glob("*.deb"))
            if result.returncode != 0 or not debs:
                missing.append(name)
                continue
            shutil.rmtree(target, ignore_errors=True)
            unpacked = Path(tmp) / "x"
            subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(unpacked)], check=False, capture_output=True)
            # keep the text: HTML pages, man pages, info files (images and scripts are most of the bytes)
            for path in unpacked.rglob("*"):
                if path.is_file() and (path.suffix in (".html", ".htm") or "/man/" in str(path)):
                    dest = target / path.relative_to(unpacked)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(str(path), dest)
            target.mkdir(parents=True, exist_ok=True)
            (target / ".done").write_text("")
    if missing:
        log(f"could not fetch: {' '.join(missing)}")
    return missing


def _norm(code: str) -> str:
    code = code.replace("_", "-").lower().split("-")[0]
    return {"nb": "no"}.get(code, code)


def web_candidates(root: Path) -> dict[str, list[tuple[str, Path, Path | None]]]:
    """language → [(family, page, English counterpart or None)] for the HTML families."""
    found: dict[str, list[tuple[str, Path, Path | None]]] = defaultdict(list)
    gimp_en = root / "gimp-help-en" / "usr/share/gimp/2.0/help/en"
    for lang in ["en", *GIMP_LANGUAGES]:
        folder = (
            root / f"gimp-help-{lang}" / "usr/share/gimp/2.0/help" / lang.replace("-br", "_BR").replace("-cn", "_CN")
        )
        for page in sorted(folder.glob("*.html")) if folder.is_dir() else []:
            counterpart = None if lang == "en" else gimp_en / page.name
            found[_norm(lang)].append(("gimp-help", page, counterpart))
    lo_en = root / "libreoffice-help-en-us" / "usr/share/libreoffice/help/en-US"
    for lang in ["en-us", *LIBREOFFICE_LANGUAGES]:
        base = root / f"libreoffice-help-{lang}" / "usr/share/libreoffice/help"
        folder = next((p for p in sorted(base.iterdir()) if p.is_dir()), None) if base.is_dir() else None
        if folder is None:
            continue
        for page in sorted(folder.glob("text/*/*/*.html")) + sorted(folder.glob("text/*/*.html")):
            counterpart = None if lang == "en-us" else lo_en / page.relative_to(folder)
            found[_norm(lang)].append(("libreoffice-help", page, counterpart))
    pg = root / "postgresql-doc-15" / "usr/share/doc/postgresql-doc-15/html"
    found["en"].extend(("postgresql-doc", page, None) for page in sorted(pg.glob("*.html")))
    git = root / "git-doc" / "usr/share/doc/git-doc"
    found["en"].extend(("git-doc", page, None) for page in sorted(git.glob("*.html")))
    found["en"].extend(reference_candidates(root))
    apache = root / "apache2-doc" / "usr/share/doc/apache2-doc/manual"
    for lang in ["en", *APACHE_LANGUAGES]:
        folder = apache / lang
        for page in sorted(folder.rglob("*.html")) if folder.is_dir() else []:
            # an untranslated page is a link to the English one; 6 of the package's en/ pages are pt-br ones
            if page.is_symlink() or _html_lang(page) not in (None, _norm(lang)):
                continue
            counterpart = None if lang == "en" else apache / "en" / page.relative_to(folder)
            found[_norm(lang)].append(("apache2-doc", page, counterpart))
    skip = ("python3", "debian-handbook", "debian-reference", "developers-reference", "maint-guide", "debian")
    if DOC.is_dir():
        for page in sorted(DOC.glob("*/**/*.html")):
            if not page.relative_to(DOC).parts[0].startswith(skip):
                found["en"].append(("doc-html", page, None))
    return found


_HTML_LANG = re.compile(rb"<html[^>]*\slang=[\"']?([A-Za-z_-]+)")


def _html_lang(page: Path) -> str | None:
    """The language a page declares in its ``<html lang=...>``, normalised, or None."""
    try:
        with page.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    match = _HTML_LANG.search(head)
    return _norm(match.group(1).decode()) if match else None


#: folders of generated listings: search frames, Sphinx's sources and module code, javadoc's uses and sources
LEFT_OUT_FOLDERS = ("search", "_static", "_sources", "_modules", "class-use", "src-html", "index-files")
#: generated indexes of links (Sphinx, javadoc); javadoc's ``*-tree.html`` class hierarchies by name above
LEFT_OUT_PAGES = ("genindex.html", "search.html", "py-modindex.html", "allclasses-index.html", "allpackages-index.html")


def reference_candidates(root: Path) -> list[tuple[str, Path, None]]:
    """(family, page, None) for the English-only reference families of builders v9 and v10 (``REFERENCE_FAMILIES``
    but Apache's, which is per language): search frames, Doxygen and javadoc source listings, javadoc's class-use
    and index pages and Sphinx's generated index and search pages are left out (a code listing or a list of links
    is not a page of documentation)."""
    where = {
        "sqlite3-doc": ("sqlite3-doc", "usr/share/doc/sqlite3"),
        "ffmpeg-doc": ("ffmpeg-doc", "usr/share/doc/ffmpeg"),
        "cmake-doc": ("cmake-doc", "usr/share/doc/cmake-data/html"),
        "glib-doc": ("libglib2.0-doc", "usr/share/gtk-doc/html"),
        "postfix-doc": ("postfix-doc", "usr/share/doc/postfix/html"),
        "javadoc": ("openjdk-17-doc", "usr/share/doc/openjdk-17-jre-headless/api"),
        "octave-doc": ("octave-doc", "usr/share/doc/octave"),
        "django-doc": ("python-django-doc", "usr/share/doc/python-django-doc/html"),
        "nodejs-doc": ("nodejs-doc", "usr/share/doc/nodejs/api"),
    }
    out: list[tuple[str, Path, None]] = []
    for name, (package, sub) in where.items():
        folder = root / package / sub
        for page in sorted(folder.rglob("*.html")) if folder.is_dir() else []:
            parts = page.relative_to(folder).parts
            if any(p in LEFT_OUT_FOLDERS for p in parts[:-1]):
                continue
            if page.name.endswith(("_source.html", "-tree.html")) or page.name in LEFT_OUT_PAGES:
                continue
            out.append((name, page, None))
    return out


def man_folders(root: Path) -> dict[str, list[Path]]:
    """language → man-page files of the manpages-<lang> packages fetched under ``root``."""
    found: dict[str, list[Path]] = defaultdict(list)
    for lang in MANPAGES_LANGUAGES:
        base = root / f"manpages-{lang}" / "usr/share/man"
        for folder in sorted(base.iterdir()) if base.is_dir() else []:
            for section in ("man1", "man5", "man8"):
                found[_norm(folder.name)].extend(sorted((folder / section).glob("*")))
    return found


_NODE = re.compile(r"\x1f\n?File: [^,\n]*,\s*Node: ([^,\n]+)[^\n]*\n")


def info_nodes(min_words: int) -> list[tuple[str, str]]:
    """(name, text) of each info-manual node of at least ``min_words`` words: what a reader of ``info`` sees
    on one screen of a manual (tables of contents, menus and the tag table left out)."""
    nodes = []
    if not INFO.is_dir():
        return nodes
    for path in sorted(INFO.glob("*.info*")):
        try:
            if path.suffix == ".gz":
                with gzip.open(path) as handle:
                    raw = handle.read()
            else:
                raw = path.read_bytes()
        except (OSError, EOFError):
            continue
        text = raw.decode("utf-8", "replace")
        parts = _NODE.split(text)
        manual = path.name.split(".info")[0]
        for node, body in zip(parts[1::2], parts[2::2], strict=False):
            body = body.split("\x1f", 1)[0]
            body = re.sub(r"\n\* Menu:.*", "", body, flags=re.S)  # the node's menu: links to its children
            if len(body.split()) >= min_words:
                nodes.append((f"{manual}__{re.sub(r'[^A-Za-z0-9]+', '_', node)[:60]}", body.strip() + "\n"))
    return nodes
