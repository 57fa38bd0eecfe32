"""Tiny curated run directories for the tokenize, training and flow tests (``curated/<source>/*.jsonl.gz``)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from pipeline.ownership import claim

WORDS = (  # noqa: SIM905 - a word list reads better as one string
    "the of and to in is was for on that with as by at from market stock bond yield risk rate bank fund "
    "quarter revenue growth inflation policy model data river mountain city music history science"
).split()
TRICKY = [
    "  leading and trailing spaces  ",
    "tabs\tand\r\nCRLF\r\nline ends\r",
    "emoji 😀👩‍👩‍👧 flags 🇩🇪🇫🇷 and ZWJ",
    "zero\u200bwidth, combining e\u0301 vs é, NBSP\u00a0here",
    "日本語のテキストと中文文本，还有한국어",
    "عربي مع أرقام ١٢٣ and mixed direction",
    "a literal <|endoftext|> and <|pad|> inside a document",
    "\n\n\n",
    " ",
    "null\x00byte and \x7f delete",
    "x" * 3000,
]


def make_text(rng: random.Random, source: str, i: int, words: list[str] = WORDS) -> str:
    body = " ".join(rng.choice(words) for _ in range(rng.randint(15, 70)))
    return f"{source} doc {i}: {body}.\n\nSecond  paragraph\twith {rng.randint(0, 10**6)} 😀"


def write_run(
    root: Path, docs_per_source: dict[str, int], seed: int = 0, files: int = 2, tricky: str | None = None
) -> dict[str, list[str]]:
    """A curation run dir with ``curated/<source>/0000N.jsonl.gz`` (claimed as a run, as ``prepare_run_dir`` does);
    returns the texts per source."""
    claim(root, "curate")
    rng = random.Random(seed)
    texts: dict[str, list[str]] = {}
    for source, count in docs_per_source.items():
        folder = root / "curated" / source
        folder.mkdir(parents=True, exist_ok=True)
        texts[source] = [make_text(rng, source, i) for i in range(count)]
        if tricky == source:
            texts[source] += TRICKY
        lines: list[list[str]] = [[] for _ in range(files)]
        for i, text in enumerate(texts[source]):
            language = "de" if i % 5 == 0 else "en"
            record = {"text": text, "id": f"{source}-{i}", "metadata": {"source": source, "language": language}}
            lines[i % files].append(json.dumps(record) + "\n")
        for n, chunk in enumerate(lines):
            with gzip.open(folder / f"{n:05d}.jsonl.gz", "wt", encoding="utf-8") as handle:
                handle.writelines(chunk)
    (root / "config.yaml").write_text("# resolved by tokenmill; config_hash: abc123\nname: t\n")
    return texts


def decode_all(shards: Path) -> dict[str, list[str]]:
    """Every document in every split, decoded (train repeats included)."""
    from pipeline.tokenize.verify import iter_documents, load_shard_tokenizer

    tokenizer = load_shard_tokenizer(shards)
    out: dict[str, list[str]] = {}
    for split, _path, _number, ids in iter_documents(shards):
        out.setdefault(split, []).append(tokenizer.decode(ids.tolist(), skip_special_tokens=False))
    return out
