"""Re-measure the micro-timings quoted in code comments and docstrings, so each has a command behind it.

    python benchmarks/micro_timings.py [--repeat 200]

Each row names the comment's file, what it claims, and the figure measured now on this machine (best of
``--repeat`` runs, per call). The text is others' writing, read at run time: the docstrings of the Python
standard library on this machine, cut into 2 KB documents. Figures are machine-dependent; the comments quote
the claim with the date it was measured.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import ipaddress
import re
import subprocess
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.curate.decontaminate import _NOT_WORD, normalize_words
from pipeline.text import _TOKEN_RE, split_lines, split_paragraphs, split_words

MODULES = ("json", "textwrap", "difflib", "argparse", "logging", "tarfile", "email.message", "http.client")


def stdlib_documents(size: int = 2048) -> list[str]:
    """2 KB documents of standard-library docstrings (prose written by the CPython developers)."""
    text = []
    for name in MODULES:
        module = importlib.import_module(name)
        text.append(inspect.getdoc(module) or "")
        text += [inspect.getdoc(obj) or "" for obj in vars(module).values() if inspect.isclass(obj)]
    joined = "\n\n".join(t for t in text if t)
    return [joined[i : i + size] for i in range(0, len(joined) - size, size)][:50]


def best(call, repeat: int) -> float:
    """Seconds per call, best of ``repeat``."""
    return min(timeit.repeat(call, number=1, repeat=repeat))


def per_document(function, documents: list[str], repeat: int) -> float:
    return best(lambda: [function(d) for d in documents], repeat) / len(documents)


def import_ms(module: str, repeat: int = 5) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(repeat)]
    return 1000 * min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    docs = stdlib_documents()
    repeat = args.repeat

    rows = []
    fast = per_document(split_words, docs, repeat)
    slow = per_document(_TOKEN_RE.findall, docs, repeat)
    rows.append(("pipeline/text.py split_words", "~3x faster than the token regex", f"{slow / fast:.1f}x"))
    fast = per_document(split_paragraphs, docs, repeat)
    slow = per_document(lambda d: re.split(r"\n{2,}", d.strip()), docs, repeat)
    rows.append(("pipeline/text.py split_paragraphs", "10x faster than re.split", f"{slow / fast:.1f}x"))
    fast = per_document(split_lines, docs, repeat)
    slow = per_document(lambda d: re.split(r"\n+", d), docs, repeat)
    rows.append(("pipeline/text.py split_lines", "10x faster than re.split", f"{slow / fast:.1f}x"))
    ascii_docs = [d for d in docs if d.isascii()]
    fast = per_document(normalize_words, ascii_docs, repeat)
    slow = per_document(lambda d: _NOT_WORD.sub("", d.lower()).split(), ascii_docs, repeat)
    claim = "24 µs instead of 66 µs per 2 KB"
    rows.append(
        ("pipeline/curate/decontaminate.py normalize_words", claim, f"{1e6 * fast:.0f} µs vs {1e6 * slow:.0f} µs")
    )
    cost = best(lambda: ipaddress.ip_address("192.168.10.20"), repeat * 10)
    rows.append(("pipeline/redact/ip.py", "ipaddress costs ~20 µs each", f"{1e6 * cost:.1f} µs"))
    light, heavy = import_ms("flows.errors"), import_ms("flows.runtime")
    rows.append(("flows/errors.py", "flows.runtime takes ~90 ms to import", f"{heavy - light:.0f} ms more"))

    width = max(len(r[0]) for r in rows)
    claim_width = max(len(r[1]) for r in rows)
    print(f"{'where':<{width}}  {'claim':<{claim_width}}  measured now")
    for where, claim, measured in rows:
        print(f"{where:<{width}}  {claim:<{claim_width}}  {measured}")


if __name__ == "__main__":
    main()
