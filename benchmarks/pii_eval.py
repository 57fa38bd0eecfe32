"""PII detection measured on a set built from the standards at run time (``pii_standards.py``), one table.

Rows: per type, the share of planted values replaced exactly (the value, nothing around it, with its
type's placeholder) in spaced European text and written against CJK text; then, per clean corpus, the
placeholders per 100 KB that replaced something that is not personal data.

- ``number-dense (generated)``: barcodes, labelled ids, dates, prices, versions … — every placeholder is false;
- ``stdlib library``: Python's own ``*.py`` files outside its test suites — every placeholder but e-mail is
  counted false (the e-mails are real author addresses: PII);
- ``stdlib test suites``: the same for ``test/``, ``tests/``, ``idle_test/``; their fixtures are deliberately
  addresses (``test_ipaddress.py`` alone holds 300+ public IPv4 literals), ``tel:`` URIs and passwords, so the
  row shows what is replaced there, by type, rather than a false-positive rate;
- ``debian changelogs``: ``/usr/share/doc/*/changelog.Debian.gz`` of this machine, where present (e-mails excluded).

    python benchmarks/pii_eval.py [--per-type 1000] [--clean-kb 1000] [--show 20] [--speed]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: F401  (the repository on sys.path, telemetry off)
import pii_standards as S

from pipeline.redact import PIIRedactor

TEST_DIRS = ("test", "tests", "idle_test")


def recall(redactor: PIIRedactor, items: list[S.Planted]) -> dict[tuple[str, str], tuple[int, int]]:
    hits: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for item in items:
        out, _counts = redactor.redact(item.text)
        key = (item.kind, item.script)
        hits[key][0] += out == item.expected(redactor.placeholders[item.kind])
        hits[key][1] += 1
    return {k: (v[0], v[1]) for k, v in hits.items()}


def false_placeholders(
    redactor: PIIRedactor, docs: list[tuple[str, str]], allowed: frozenset[str], show: int
) -> tuple[float, collections.Counter, int]:
    """(kilobytes, placeholders by type, false ones) — ``allowed`` types are true PII there (e-mails)."""
    size = 0
    by_type: collections.Counter = collections.Counter()
    shown = 0
    for name, text in docs:
        size += len(text.encode("utf-8"))
        for start, end, kind in redactor.find(text):
            by_type[kind] += 1
            if kind not in allowed and shown < show:
                print(f"  {kind:10s} {name}: {text[start:end]!r} in {text[max(0, start - 30) : end + 15]!r}")
                shown += 1
    false = sum(n for kind, n in by_type.items() if kind not in allowed)
    return size / 1000, by_type, false


def speed(redactor: PIIRedactor, text: str, repeat: int = 3) -> float:
    """MB/s of ``redact`` on ``text`` (best of ``repeat`` CPU-time runs)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        redactor.redact(text)
        best = min(best, time.process_time() - start)
    return len(text.encode("utf-8")) / 1e6 / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-type", type=int, default=1000, help="planted values per type and script")
    parser.add_argument("--clean-kb", type=int, default=1000, help="size of the generated number-dense text")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print this many false placeholders per corpus")
    parser.add_argument("--speed", action="store_true", help="also print PIIRedactor.redact MB/s")
    args = parser.parse_args()

    redactor = PIIRedactor()
    rows: list[tuple[str, str, str]] = []
    scores = recall(redactor, S.positives(args.seed, args.per_type))
    for kind in S.TYPES:
        cells = []
        for script in ("spaced", "cjk"):
            found, total = scores[(kind, script)]
            cells.append(f"{found / total:.3f} ({found}/{total})")
        rows.append((f"recall {kind}", cells[0], cells[1]))

    stdlib = list(S.stdlib_sources())
    library = [(n, t) for n, t in stdlib if not set(Path(n).parts) & set(TEST_DIRS)]
    suites = [(n, t) for n, t in stdlib if set(Path(n).parts) & set(TEST_DIRS)]
    clean = S.clean_number_text(args.seed, args.clean_kb * 1000)
    corpora = [
        ("number-dense (generated)", [("clean", clean)], frozenset()),
        ("stdlib library", library, frozenset({"email"})),
        ("stdlib test suites", suites, frozenset({"email"})),
        ("debian changelogs", list(S.debian_changelogs()), frozenset({"email"})),
    ]
    for name, docs, allowed in corpora:
        if not docs:
            rows.append((f"false per 100 KB: {name}", "(not on this machine)", ""))
            continue
        if args.show:
            print(f"-- {name}")
        kb, by_type, false = false_placeholders(redactor, docs, allowed, args.show)
        detail = ", ".join(f"{k} {v}" for k, v in sorted(by_type.items())) or "none"
        rows.append((f"false per 100 KB: {name}", f"{false / kb * 100:.2f} ({false} in {kb:,.0f} KB)", detail))

    bare = S.unlabelled_card_like_ids(args.seed)
    replaced = sum(bool(redactor.find(f"{value}\n")) for value in bare)
    rows.append(("unlabelled random 16-digit ids replaced", f"{replaced / len(bare):.3f} ({replaced}/{len(bare)})", ""))

    if args.speed:
        prose = "".join(text for _name, text in library)[:5_000_000]
        rows.append(("redact MB/s: stdlib library", f"{speed(redactor, prose):.2f}", ""))
        rows.append(("redact MB/s: number-dense", f"{speed(redactor, clean):.2f}", ""))

    widths = [max(len(r[i]) for r in rows + [("", "spaced / value", "CJK / detail")]) for i in range(3)]
    header = ("measure", "spaced / value", "CJK / detail")
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
