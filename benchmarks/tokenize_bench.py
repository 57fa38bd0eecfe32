"""Tokenize throughput: encoding, shard writing and window reads, with datatrove's DocumentTokenizer beside it.

On a generated corpus of ~2 KB pseudo-English documents (Zipf-distributed pseudo-words, punctuation,
paragraphs; default 32 MB in two sources), with one byte-level BPE tokenizer trained on part of it:

  encode       tokenizers ``encode_batch`` / ``encode_batch_fast`` → numpy ids with EOS, in memory, with
               BPE ``ignore_merges`` on/off and the tokenizer's thread pool on/off: tokens per CPU-second
               (process CPU, all tokenizer threads counted) and per wall-second
  datatrove    ``DocumentTokenizer`` (JsonlReader → tokenize → shuffle → .ds) in one local rank
  tokenmill    ``run_tokenize`` end to end (read, encode in 1 rank, split, mix, write) with the same tokenizer
  shard write  ``write_documents`` of every encoded document 4 times in a random order: tokens/s (wall,
               page cache; no fsync)
  reads        ``ShardWindows`` random sample indices, seq_len 2048: windows/s; DatatroveFolderDataset
               random access beside it (built for sequential reads)

    python benchmarks/tokenize_bench.py [--mb 32] [--vocab 32768] [--seq-len 2048] [--reads 200000] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import random
import tempfile
import time
from pathlib import Path

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off


def lexicon(rng: random.Random, size: int = 30_000) -> list[str]:
    onsets = ["", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "ch", "th"]
    vowels = ["a", "e", "i", "o", "u", "ea", "ou", "ai", "io"]
    codas = ["", "n", "r", "s", "t", "l", "nd", "ng", "st", "ct", "rd"]
    words: set[str] = set()
    while len(words) < size:
        syllables = rng.choices([1, 2, 3, 4], weights=[40, 35, 18, 7])[0]
        words.add("".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(syllables)))
    return sorted(words, key=len)  # short words first: they get the Zipf head, as in real text


def make_corpus(root: Path, megabytes: float, seed: int = 0) -> tuple[int, int]:
    """``root/curated/{web,finance}/0000N.jsonl.gz``: returns (documents, bytes)."""
    import numpy as np

    rng = random.Random(seed)
    words = lexicon(rng)
    weights = 1 / np.arange(1, len(words) + 1) ** 1.07
    cumulative = np.cumsum(weights / weights.sum())
    nprng = np.random.default_rng(seed)
    target = int(megabytes * 1e6)
    docs = size = 0
    with contextlib.ExitStack() as stack:
        handles = {
            (s, n): stack.enter_context(
                gzip.open(_mk(root / "curated" / s) / f"{n:05d}.jsonl.gz", "wt", compresslevel=1)
            )
            for s in ("web", "finance")
            for n in range(2)
        }
        while size < target:
            picks = np.searchsorted(cumulative, nprng.random(nprng.integers(250, 450)))
            tokens = [words[i] for i in picks]
            for i in range(0, len(tokens), 12):
                tokens[i] = tokens[i].capitalize()
            text = " ".join(tokens)
            text = text.replace(" a ", ", a ").replace(" the ", ". The ", 3) + f" ({nprng.integers(1900, 2030)}).\n\n"
            source = "finance" if docs % 3 == 0 else "web"
            record = {"text": text, "id": str(docs), "metadata": {"source": source, "language": "en"}}
            handles[(source, docs % 2)].write(json.dumps(record) + "\n")
            docs += 1
            size += len(text.encode())
    return docs, size


def _mk(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_texts(root: Path) -> list[str]:
    texts = []
    for path in sorted((root / "curated").rglob("*.jsonl.gz")):
        with gzip.open(path, "rt") as handle:
            texts.extend(json.loads(line)["text"] for line in handle)
    return texts


def bench_encode(tokenizer_file: Path, texts: list[str], eos_id: int, rounds: int = 2) -> dict:
    """Each variant on the same texts, ``rounds`` times interleaved (the load of a shared machine drifts),
    each time with a fresh tokenizer so no variant inherits a warm BPE word cache."""
    from itertools import chain

    import numpy as np
    from tokenizers import Tokenizer

    variants = (
        "encode_batch_fast, 1 thread",
        "encode_batch, 1 thread",
        "encode_batch_fast, merges replayed, 1 thread",
        "encode_batch_fast, thread pool",
    )
    totals = {name: [0, 0.0, 0.0] for name in variants}
    for _ in range(rounds):
        for name in variants:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            tokenizer.encode_special_tokens = True
            tokenizer.model.ignore_merges = "replayed" not in name  # tokenmill's trained tokenizers ignore merges
            os.environ["TOKENIZERS_PARALLELISM"] = "false" if "1 thread" in name else "true"  # read at every call
            encode = getattr(tokenizer, name.split(",")[0])
            cpu, wall = cpu_seconds(), time.perf_counter()
            for start in range(0, len(texts), 1000):
                lists = [e.ids for e in encode(texts[start : start + 1000], add_special_tokens=False)]
                for ids in lists:
                    ids.append(eos_id)
                count = sum(map(len, lists))
                np.fromiter(chain.from_iterable(lists), dtype=np.uint16, count=count)
                totals[name][0] += count
            totals[name][1] += cpu_seconds() - cpu
            totals[name][2] += time.perf_counter() - wall
    return {
        name: {
            "tokens": tokens // rounds,
            "cpu_s": cpu / rounds,
            "wall_s": wall / rounds,
            "tokens_per_cpu_s": tokens / cpu,
            "tokens_per_wall_s": tokens / wall,
        }
        for name, (tokens, cpu, wall) in totals.items()
    }


def bench_datatrove(root: Path, tokenizer_file: Path, out: Path) -> dict:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.tokens import DocumentTokenizer

    executor = LocalPipelineExecutor(
        [
            JsonlReader(str(root / "curated"), glob_pattern="*/*.jsonl.gz"),
            DocumentTokenizer(
                str(out),
                tokenizer_name_or_path=str(tokenizer_file),
                eos_token="<|endoftext|>",
                local_working_dir=str(out / "tmp"),
                seed=0,
            ),
        ],
        tasks=1,
        workers=1,
        logging_dir=str(out / "logs"),
        skip_completed=False,
    )
    cpu, wall = cpu_seconds(), time.perf_counter()
    executor.run()
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    tokens = sum(p.stat().st_size for p in out.glob("*.ds")) // 2
    return {"tokens": tokens, "cpu_s": cpu, "wall_s": wall, "tokens_per_cpu_s": tokens / cpu}


def bench_tokenmill(root: Path, tokenizer_file: Path, out: Path) -> dict:
    from pipeline.tokenize import TokenizeConfig, run_tokenize

    config = TokenizeConfig(tokenizer=str(tokenizer_file), tasks=1, workers=1, keep_work=True, heldout_share=0.01)
    cpu, wall = cpu_seconds(), time.perf_counter()
    manifest = run_tokenize(root, out, config)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    totals = manifest.totals
    tokens = totals.train_tokens + totals.heldout_tokens
    return {"tokens": tokens, "cpu_s": cpu, "wall_s": wall, "tokens_per_cpu_s": tokens / cpu}


def bench_write(out: Path, dtype_name: str) -> dict:
    import numpy as np

    from pipeline.shards.format import numpy_dtype
    from pipeline.tokenize.run import _load_parts
    from pipeline.tokenize.shards import write_documents

    table, _docs, _stats = _load_parts(out / ".work" / "encoded", numpy_dtype(dtype_name))
    order = np.random.default_rng(0).permutation(np.tile(np.arange(len(table.length)), 4))
    cpu, wall = cpu_seconds(), time.perf_counter()
    files = write_documents(table, order, out / "bench_write", "w", numpy_dtype(dtype_name), 1 << 28)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    tokens = sum(f["tokens"] for f in files)
    return {
        "tokens": tokens,
        "documents": len(order),
        "wall_s": wall,
        "cpu_s": cpu,
        "tokens_per_s": tokens / wall,
        "tokens_per_cpu_s": tokens / cpu,
    }


def bench_reads(out: Path, seq_len: int, reads: int) -> dict:
    import numpy as np

    from training.data import ShardWindows

    windows = ShardWindows(out, seq_len, seed=0, rank=1, world_size=2)
    samples = np.random.default_rng(0).integers(0, len(windows), reads).tolist()
    wall = time.perf_counter()
    for sample in samples:
        windows[sample]
    wall = time.perf_counter() - wall
    result = {"windows": windows.num_windows, "reads": reads, "wall_s": wall, "reads_per_s": reads / wall}
    try:
        from datatrove.utils.dataset import DatatroveFolderDataset
    except ImportError:
        return result
    theirs = DatatroveFolderDataset(str(out / "train"), seq_len, token_size=windows.dtype.itemsize)
    few = np.random.default_rng(1).integers(0, len(theirs), min(reads, 5000)).tolist()
    wall = time.perf_counter()
    for item in few:
        theirs[item]
    result["datatrove_reads_per_s"] = len(few) / (time.perf_counter() - wall)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=32, help="corpus size in MB of text")
    parser.add_argument("--vocab", type=int, default=32_768)
    parser.add_argument("--train-mb", type=float, default=8, help="text used to train the tokenizer")
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--reads", type=int, default=200_000)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--encode-only", action="store_true", help="only the in-memory encode measurement")
    args = parser.parse_args()

    from loguru import logger

    logger.remove()  # datatrove's per-rank logging would dominate the output
    from pipeline.tokenize.config import TokenizeConfig
    from pipeline.tokenize.inputs import discover_inputs
    from pipeline.tokenize.run import _training_texts
    from pipeline.tokenize.tokenizer import save_tokenizer, train_tokenizer

    with tempfile.TemporaryDirectory(prefix="tokbench-") as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        docs, size = make_corpus(root, args.mb)
        print(f"corpus: {docs:,} documents, {size / 1e6:.1f} MB ({time.perf_counter() - t:.1f} s to generate)")

        config = TokenizeConfig(vocab_size=args.vocab, train_max_bytes=int(args.train_mb * 1e6))
        cpu, wall = cpu_seconds(), time.perf_counter()
        tokenizer = train_tokenizer(_training_texts(discover_inputs(root), config.train_max_bytes), config)
        train = {
            "cpu_s": cpu_seconds() - cpu,
            "wall_s": time.perf_counter() - wall,
            "vocab": tokenizer.get_vocab_size(),
        }
        tokenizer_file = save_tokenizer(tokenizer, root / "tokenizer", "<|endoftext|>")
        print(f"tokenizer: vocab {train['vocab']:,} trained on {args.train_mb:g} MB in {train['wall_s']:.1f} s wall")

        texts = read_texts(root)
        results = {"corpus": {"documents": docs, "bytes": size}, "train_tokenizer": train}
        results["load_average_before"] = os.getloadavg()
        results["encode"] = bench_encode(tokenizer_file, texts, tokenizer.token_to_id("<|endoftext|>"))
        if args.encode_only:
            _print(results, size, args)
            return
        os.environ.pop("TOKENIZERS_PARALLELISM", None)  # both pipelines with the library's default thread pool
        results["datatrove_document_tokenizer"] = bench_datatrove(root, tokenizer_file, root / "dt")
        results["tokenmill_run_tokenize"] = bench_tokenmill(root, tokenizer_file, root / "shards")
        results["shard_write"] = bench_write(root / "shards", "uint16")
        results["window_reads"] = bench_reads(root / "shards", args.seq_len, args.reads)
        results["load_average_after"] = os.getloadavg()
    _print(results, size, args)


def _print(results: dict, size: int, args: argparse.Namespace) -> None:
    print(f"load average (1/5/15 min) before: {' '.join(f'{x:.1f}' for x in results['load_average_before'])}")
    enc = results["encode"]
    print(f"bytes/token: {size / enc['encode_batch_fast, 1 thread']['tokens']:.2f}")
    for name, r in enc.items():
        cpu_rate, wall_rate = r["tokens_per_cpu_s"] / 1e6, r["tokens_per_wall_s"] / 1e6
        print(f"encode {name:<44} {cpu_rate:6.2f} M tokens/CPU-s  {wall_rate:6.2f} M tokens/wall-s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if "shard_write" not in results:
        return
    for key in ("datatrove_document_tokenizer", "tokenmill_run_tokenize"):
        r = results[key]
        rate = r["tokens_per_cpu_s"] / 1e6
        print(f"{key:<51} {rate:6.2f} M tokens/CPU-s  ({r['tokens']:,} tokens, {r['wall_s']:.1f} s wall)")
    w = results["shard_write"]
    print(
        f"shard write                      {w['tokens_per_s'] / 1e6:6.0f} M tokens/s wall, "
        f"{w['tokens_per_cpu_s'] / 1e6:.0f} M/CPU-s ({w['tokens']:,} tokens, {w['documents']:,} docs, random order)"
    )
    r = results["window_reads"]
    line = (
        f"random window reads (seq {args.seq_len})    {r['reads_per_s'] / 1e3:6.0f} k/s over {r['windows']:,} windows"
    )
    if "datatrove_reads_per_s" in r:
        line += f"; DatatroveFolderDataset {r['datatrove_reads_per_s'] / 1e3:.1f} k/s"
    print(line)


if __name__ == "__main__":
    main()
