"""Decontamination: throughput with 10,000 eval items indexed, and recall / false-drop rate on planted passages.

Text no one here wrote, built at run time: pydoc's plain-text pages of the stdlib modules and the Language
Reference topics pydoc ships (``pydoc_data.topics``), cut into paragraphs. Paragraphs are split in two
disjoint halves: sentences of the first half with >= 8 normalised words (the stage's ``min_item_words``, so
every item is indexed) become the eval set, topped up to ``--items`` with sentences of the installed
section-1 man pages when the stdlib's run out (JSONL, ``question`` + ``answer`` fields: the sentence cut in
two); the second half is packed into ~2 KB documents.

* throughput: CPU seconds of ``DecontaminateStage.process`` over the documents (index building timed apart);
  beside it datatrove 0.10.1's ``NGramsDecontFilter`` on the same documents and n-grams (its index written
  with its own ``NGramsDecontIndexer.compute_hashes``: the indexer's ``run`` needs lighteval, not installed);
* planted: a random 13-40-word passage of a random eval item inserted into a document that was clean: caught?
* shorter phrases: a random 12-word (then 6-word) phrase of an eval item inserted: kept?

    python benchmarks/decontam_bench.py [--items 10000] [--docs 20000] [--planted 2000] [--skip-datatrove]
"""

from __future__ import annotations

import argparse
import glob
import importlib
import json
import os
import pkgutil
import pydoc
import random
import re
import tempfile
import time
import warnings

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off

SKIP_PREFIXES = ("test", "idlelib", "tkinter", "turtle", "lib2to3", "ensurepip", "this", "antigravity", "__")


def stdlib_paragraphs(limit_modules: int = 400) -> list[str]:
    """Paragraphs of pydoc's pages of the stdlib's top-level modules and of the Language Reference topics."""
    import sys
    from pydoc_data.topics import topics

    texts = list(topics.values())
    names = sorted(
        m.name
        for m in pkgutil.iter_modules()
        if m.name in sys.stdlib_module_names and not m.name.startswith(SKIP_PREFIXES)
    )
    warnings.simplefilter("ignore")
    for name in names[:limit_modules]:
        try:
            module = importlib.import_module(name)
            texts.append(pydoc.render_doc(module, renderer=pydoc.plaintext))
            subs = [m.name for m in pkgutil.iter_modules(getattr(module, "__path__", []))]
            for sub in subs:
                if not sub.startswith(SKIP_PREFIXES):
                    texts.append(pydoc.render_doc(importlib.import_module(f"{name}.{sub}"), renderer=pydoc.plaintext))
        except Exception:  # noqa: BLE001 - a module that cannot be imported here simply contributes nothing
            continue
    paragraphs = []
    seen = set()
    for text in texts:
        for block in re.split(r"\n\s*\n", text):
            block = " ".join(block.split())
            if len(block.split()) >= 8 and block not in seen:
                seen.add(block)
                paragraphs.append(block)
    return paragraphs


def pack(paragraphs: list[str], size: int = 2048) -> list[str]:
    """The paragraphs joined and cut into documents of about ``size`` characters (at a space)."""
    text = "\n\n".join(paragraphs)
    docs, start = [], 0
    while start < len(text) - size // 2:
        end = text.find(" ", start + size)
        end = len(text) if end < 0 else end
        docs.append(text[start:end].strip())
        start = end + 1
    return docs


def sentences(paragraphs: list[str], min_words: int = 6) -> list[str]:
    """Sentences (split after '. ') of at least ``min_words`` words: eval items are question-sized."""
    out = []
    for p in paragraphs:
        for sentence in re.split(r"(?<=[.?!])\s+", p):
            if len(sentence.split()) >= min_words:
                out.append(sentence)
    return out


def man_page_sentences(min_words: int, enough: int) -> list[str]:
    """Sentences of the section-1 man pages installed here (roff requests and font escapes stripped): eval items
    written by others that top the stdlib's up to ``--items`` when those run out (~10.5k on Python 3.13)."""
    import gzip

    out = []
    for path in sorted(glob.glob("/usr/share/man/man1/*.gz")):
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as handle:
                lines = [line for line in handle if not line.startswith((".", "'"))]
        except (OSError, EOFError):  # a damaged page contributes nothing
            continue
        text = re.sub(r"\\f[BIRP]|\\\(..|\\[-&e]", " ", " ".join(lines))
        out += sentences([" ".join(text.split())], min_words)
        if len(out) >= enough:  # pages in name order until there are enough
            break
    return list(dict.fromkeys(out))


DEBIAN_REFERENCE = "/usr/share/doc/debian-reference-en/docs/debian-reference.en.txt.gz"


def debian_reference() -> list[str]:
    """The Debian Reference (package debian-reference-en) in ~2 KB documents: text of another family, with
    no passage in common with pydoc's pages by construction (empty when the package is not installed)."""
    import gzip

    if not os.path.exists(DEBIAN_REFERENCE):
        return []
    with gzip.open(DEBIAN_REFERENCE, "rt", encoding="utf-8") as handle:
        paragraphs = [" ".join(b.split()) for b in re.split(r"\n\s*\n", handle.read())]
    return pack([p for p in paragraphs if p])


def insert(doc: str, phrase: str, rng: random.Random) -> str:
    """``phrase`` inserted between two words of ``doc``, as its own sentence."""
    spaces = [m.start() for m in re.finditer(r" ", doc)]
    at = rng.choice(spaces) if spaces else len(doc)
    return f"{doc[:at]}. {phrase}. {doc[at + 1 :]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--planted", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-datatrove", action="store_true")
    args = parser.parse_args()

    from datatrove.data import Document

    from pipeline.curate.config import DecontaminateConfig
    from pipeline.curate.decontaminate import DecontaminateStage, normalize_words

    rng = random.Random(args.seed)
    started = time.time()
    paragraphs = stdlib_paragraphs()
    rng.shuffle(paragraphs)
    half = len(paragraphs) // 2

    # items of at least the stage's min_item_words (8), so every item offered is indexed
    def indexable(items: list[str]) -> list[str]:  # >= 8 words as the stage counts them (after normalisation)
        return [s for s in items if len(normalize_words(s)) >= 8]

    eval_paragraphs = indexable(list(dict.fromkeys(sentences(paragraphs[:half], min_words=8))))
    rng.shuffle(eval_paragraphs)
    if len(eval_paragraphs) < args.items:
        have = set(eval_paragraphs)
        wanted = 2 * (args.items - len(eval_paragraphs))
        extra = [s for s in indexable(man_page_sentences(min_words=8, enough=wanted)) if s not in have]
        rng.shuffle(extra)
        print(f"{len(eval_paragraphs)} stdlib items; {len(extra)} man-page sentences to top up from")
        eval_paragraphs += extra[: args.items - len(eval_paragraphs)]
    eval_paragraphs = eval_paragraphs[: args.items]
    doc_pool = pack(paragraphs[half:])
    print(
        f"{len(paragraphs)} paragraphs; {len(eval_paragraphs)} eval items; {len(doc_pool)} documents of ~2 KB "
        f"({time.time() - started:.0f} s to build)"
    )
    if len(eval_paragraphs) < args.items:
        print(f"note: only {len(eval_paragraphs)} eval items available")
    other = debian_reference()
    print(f"{len(other)} documents of ~2 KB from the Debian Reference" if other else "Debian Reference not installed")
    # throughput on text with no passage of the eval set (the common case) when there is some, else on pydoc's
    base = other or doc_pool
    docs = [base[i % len(base)] for i in range(args.docs)]

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stdlib_eval.jsonl")
        with open(path, "w", encoding="utf-8") as handle:
            for i, p in enumerate(eval_paragraphs):
                words = p.split()
                cut = len(words) // 2
                row = {"id": f"item-{i}", "question": " ".join(words[:cut]), "answer": " ".join(words[cut:])}
                handle.write(json.dumps(row) + "\n")
        stage = DecontaminateStage(DecontaminateConfig(eval_sets=[{"path": path, "fields": ["question", "answer"]}]))
        before = cpu_seconds()
        stage.setup()
        index_s = cpu_seconds() - before
        index = stage.index
        print(f"index: {index.windows:,} distinct windows from {len(index.item_ids):,} items in {index_s:.2f} CPU-s")
        # what a rank of a curation run does instead: load the index the parent built once for the run
        index_file = stage.prepare_index(os.path.join(tmp, "run_index"))
        rank_stage = DecontaminateStage(stage.config)
        rank_stage.index_path = str(index_file)
        before = cpu_seconds()
        rank_stage.setup()
        load_s = cpu_seconds() - before
        print(
            f"per-run index file {os.path.getsize(index_file) / 1e6:.1f} MB: a rank loads it in {load_s:.3f} CPU-s "
            f"(building it: {index_s:.2f} CPU-s, once per run)"
        )

        before = cpu_seconds()
        dropped = sum(1 for text in docs if stage.process(Document(text=text, id="d")) is not None)
        spent = cpu_seconds() - before
        mean_bytes = sum(len(d.encode()) for d in docs) / len(docs)
        print(
            f"tokenmill decontaminate: {len(docs):,} docs (mean {mean_bytes:,.0f} bytes) in {spent:.2f} CPU-s = "
            f"{len(docs) / spent:,.0f} docs/CPU-s; {dropped:,} dropped"
        )

        pydoc_dropped = sum(1 for d in doc_pool if stage.process(Document(text=d, id="c")) is not None)
        print(
            f"pydoc documents dropped before any planting (shared boilerplate): {pydoc_dropped:,} of {len(doc_pool):,}"
        )
        pool = other + doc_pool
        clean = [d for d in pool if stage.process(Document(text=d, id="c")) is None]
        print(f"clean documents to plant into: {len(clean):,} of {len(pool):,}")
        # raw words of each item that survive normalisation (pydoc's '|' margins and lone dashes do not)
        items_words = [[w for w in p.split() if normalize_words(w)] for p in eval_paragraphs]
        long_items = [w for w in items_words if len(w) >= 14]

        # the brute-force reference: word tuples, no hashing (what the stage must agree with)
        normalised = [normalize_words(p) for p in eval_paragraphs]
        grams = {tuple(w[i : i + 13]) for w in normalised if len(w) >= 13 for i in range(len(w) - 12)}
        shorts = {tuple(w) for w in normalised if 8 <= len(w) < 13}

        def reference(text: str) -> bool:
            words = normalize_words(text)
            if any(tuple(words[i : i + 13]) in grams for i in range(len(words) - 12)):
                return True
            return any(tuple(words[i : i + n]) in shorts for n in range(8, 13) for i in range(len(words) - n + 1))

        disagree = 0

        def planted(length_range: tuple[int, int]) -> float:
            """Share of documents caught after planting a phrase of that many (normalised) words of an item; for
            phrases under 13 words, only documents the reference finds clean are drawn (a phrase that is itself a
            whole short item, or that the document's neighbouring words extend to 13, is contamination)."""
            nonlocal disagree
            caught = 0
            for _ in range(args.planted):
                while True:
                    words = rng.choice(long_items)
                    length = rng.randint(length_range[0], min(length_range[1], len(words) - 1))
                    start = rng.randint(0, len(words) - length)
                    doc = insert(rng.choice(clean), " ".join(words[start : start + length]), rng)
                    expected = reference(doc)
                    if length >= 13 or not expected:
                        break
                verdict = stage.process(Document(text=doc, id="p")) is not None
                caught += verdict
                disagree += verdict != expected
            return caught / args.planted

        share = planted((13, 40))
        print(f"planted >= 13-word eval passages caught: {share:.2%} of {args.planted:,}")
        for n in (12, 6):
            share = planted((n, n))
            print(f"documents sharing only a {n}-word phrase of an item (of >= 14 words) kept: {1 - share:.2%}")
        print(f"decisions differing from the brute-force reference (word tuples): {disagree} of {3 * args.planted:,}")

        if args.skip_datatrove:
            return
        try:
            import numpy as np
            from datatrove.pipeline.decont import NGramsDecontConfig, NGramsDecontFilter
            from datatrove.utils.hashing import create_hash_func
            from datatrove.utils.text import ngrams, simplify_text
            from datatrove.utils.word_tokenizers import load_word_tokenizer

            config = NGramsDecontConfig(n_grams=13, find_query_ngrams=True, find_overlap_ngrams=False)
            index_dir = os.path.join(tmp, "dt_index")
            os.makedirs(index_dir)
            # NGramsDecontIndexer.compute_hashes, written out: constructing the indexer requires lighteval
            tokenizer = load_word_tokenizer("en")
            hash_func = create_hash_func(config.hash_config)
            before = cpu_seconds()
            hashes = set()
            for p in eval_paragraphs:
                tokens = tokenizer.word_tokenize(simplify_text(p, config.norm_config))
                hashes.update(map(hash_func, map(" ".join, ngrams(tokens, config.n_grams))))
            np.array(sorted(hashes), dtype=config.hash_config.np_descr).tofile(
                os.path.join(index_dir, "stdlib.index.hashes")
            )
            dt_index_s = cpu_seconds() - before
            dt = NGramsDecontFilter(index_folder=index_dir, config=config)
            dt.load_index_hashes()
            before = cpu_seconds()
            dt_dropped = sum(1 for text in docs if dt.filter(Document(text=text, id="d")) is not True)
            dt_spent = cpu_seconds() - before
            print(
                f"datatrove NGramsDecontFilter: {len(docs):,} docs in {dt_spent:.2f} CPU-s = "
                f"{len(docs) / dt_spent:,.0f} docs/CPU-s; {dt_dropped:,} dropped; index {dt_index_s:.2f} CPU-s"
            )
            # both rates are per CPU-second of this process and its reaped children (the process tree)
            print(f"ratio tokenmill / datatrove: {dt_spent / spent:.2f}x (target: >= 5,000 docs/CPU-s for tokenmill)")
        except Exception as error:  # noqa: BLE001 - the comparison is optional; say why it did not run
            print(f"datatrove NGramsDecontFilter: not run ({type(error).__name__}: {error})")


if __name__ == "__main__":
    main()
