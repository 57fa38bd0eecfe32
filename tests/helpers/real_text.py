"""Real text built at run time from what the machine has (never stored in the repository), pinned so that a test
judges the same pages on every machine that has them and skips, with a printed reason, what a machine lacks.

Shared by ``tests/pipeline/test_quality_real.py`` and ``benchmarks/real_text.py``: the English-share measure
that tells a translated page from a partly translated one, and the rendering of a man page as a reader sees it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import regex

MAN = Path("/usr/share/man")

#: English function words, none of them a common word in the other languages of the sets here: 4.9-14.7 %
#: (median 11.5 %) of the letters of English manual prose and 0-0.2 % of fully translated pages; above 3 %
#: (``MAX_ENGLISH_MARKER_SHARE``), roughly a quarter of a page is English (a partial translation, whose
#: language label would be wrong: the pipeline's language identification calls such a page English).
ENGLISH_MARKERS = frozenset(
    "the and that with this which you from have will can not are be when they there these should must".split()  # noqa: SIM905
)
MAX_ENGLISH_MARKER_SHARE = 0.03
_LETTER = regex.compile(r"\p{L}")
_ASCII_WORD = re.compile(r"[A-Za-z]+")

#: The man pages a test samples, by name: pages of Debian's base system (man-db, shadow's login tools, dpkg,
#: apt, procps, util-linux, coreutils) that manpages-l10n and the packages themselves translate into many
#: languages. A language is judged on those of them the machine has, in this order.
PINNED_MAN_PAGES = (
    "man.1", "apropos.1", "whatis.1", "manpath.1", "mandb.8", "lexgrog.1", "catman.8", "passwd.1", "login.1",
    "su.1", "chsh.1", "chfn.1", "newgrp.1", "chage.1", "useradd.8", "usermod.8", "userdel.8", "groupadd.8",
    "passwd.5", "shadow.5", "login.defs.5", "dpkg.1", "dpkg-query.1", "apt-get.8", "apt-cache.8", "apt.8",
    "sources.list.5", "ps.1", "free.1", "kill.1", "top.1", "mount.8", "ls.1", "cp.1", "rm.1", "tar.1",
)  # fmt: skip


def english_marker_share(text: str) -> float:
    """Letters in English function words / all letters (see ``ENGLISH_MARKERS``)."""
    letters = len(_LETTER.findall(text))
    marked = sum(len(word) for word in _ASCII_WORD.findall(text) if word.lower() in ENGLISH_MARKERS)
    return marked / max(1, letters)


def man_language(folder: str) -> str:
    """The language of a ``/usr/share/man/<folder>``: pt_BR → pt, zh_CN/zh_TW → zh, sr@latin → sr, nb → no."""
    code = folder.split("_")[0].split(".")[0].split("@")[0].lower()
    return {"nb": "no"}.get(code, code)


def pinned_man_pages(root: Path = MAN) -> dict[str, list[Path]]:
    """language → the files of ``PINNED_MAN_PAGES`` present under ``root`` (English: man1/man5/man8; a
    translation: its folder), in the pinned order; empty when the machine has no ``man`` command."""
    found: dict[str, list[Path]] = {}
    if shutil.which("man") is None or not root.is_dir():
        return found
    folders = [("en", root)] + [
        (man_language(p.name), p) for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith("man")
    ]
    for language, folder in folders:
        for name in PINNED_MAN_PAGES:
            section = f"man{name.rsplit('.', 1)[1]}"
            path = next((p for p in (folder / section / f"{name}.gz", folder / section / name) if p.is_file()), None)
            if path is not None and path not in found.get(language, []):
                found.setdefault(language, []).append(path)
    return found


def render_man(path: Path, timeout: float = 30) -> str | None:
    """A man page as a reader sees it: ``man -l`` output without overstrike (what ``man foo > foo.txt`` gives)."""
    env = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    try:
        result = subprocess.run(
            ["man", "-E", "UTF-8", "-l", str(path)], env=env, capture_output=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0 or not result.stdout.strip():
        return None
    return re.sub(r".\x08", "", result.stdout.decode("utf-8", "replace"))
