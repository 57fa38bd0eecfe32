"""Scale mode of ``dedup_bench.py`` (``--scale N``): N documents of ~2 KB, the whole process tree measured.

Corpus, generated in batches of 1,000 straight to ``--files`` JSONL files (the benchmark never holds it):
88 % distinct documents (``dedup_bench``'s word-bigram chain over the standard library's docstrings), 10 %
near-duplicates of a distinct document at 3, 4, 5, 6, 7 and 8 % word edits (substitutions, deletions,
insertions), 2 % exact copies (case or whitespace changed). The ground truth is in the ids
(``n05-<k>-<origin>``), so scoring reads only the drop rows.

``tokenmill``'s dedup runs in a child process (``dedup_dataset`` with ``--ranks`` ranks and ``--workers``
concurrent processes, started by ``fork`` so that every rank is a descendant the child waits for; with the
default ``forkserver`` the ranks are the fork server's children). ``resource.getrusage(RUSAGE_CHILDREN)``
after it gives the whole tree's CPU seconds and the largest single process's peak RSS (``ru_maxrss``: the
maximum over all waited-for descendants); each rank's own peak (``stages/dedup/memory/``) is printed per
step. ``--compare-ranks 1,2`` reruns with other rank counts and checks that the kept ids are identical.

Run:  nice python benchmarks/dedup_bench.py --scale 100000 [--ranks 4 --workers 2 --compare-ranks 1,2]
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time

import numpy as np

RATES = (3, 4, 5, 6, 7, 8)
BATCH = 1000
RSS_FIXED, RSS_PER_DOC = 150 * 2**20, 64  # the target: largest process <= 150 MB + 64 B per document


class Chain:
    """``dedup_bench.TextGenerator``'s word-bigram chain over the standard library's docstrings (follow the chain
    with probability 0.97, else a random word), stepped for a whole batch of documents at once with numpy."""

    def __init__(self, rng: np.random.Generator):
        from dedup_bench import _training_words

        vocab, tokens = np.unique(np.array(_training_words(), dtype=object), return_inverse=True)
        order = np.argsort(tokens[:-1], kind="stable")
        self.vocab, self.tokens, self.rng = vocab, tokens, rng
        self.successors = tokens[1:][order]
        self.counts = np.bincount(tokens[:-1], minlength=len(vocab))
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]])

    def random_words(self, n: int) -> np.ndarray:
        return self.tokens[self.rng.integers(len(self.tokens), size=n)]

    def documents(self, lengths: np.ndarray) -> list[list[str]]:
        rng, m = self.rng, len(lengths)
        out = np.empty((m, int(lengths.max())), dtype=np.int64)
        state = self.random_words(m)
        for t in range(out.shape[1]):
            out[:, t] = state
            count = self.counts[state]
            follow = (count > 0) & (rng.random(m) < 0.97)
            pick = self.starts[state] + (rng.random(m) * np.maximum(count, 1)).astype(np.int64)
            state = np.where(follow, self.successors[np.minimum(pick, len(self.successors) - 1)], self.random_words(m))
        return [list(self.vocab[out[i, : lengths[i]]]) for i in range(m)]

    def edit(self, words: list[str], rate: float) -> list[str]:
        """``TextGenerator.edit``: substitutions, deletions and insertions at random positions."""
        rng, words = self.rng, list(words)
        for _ in range(max(1, round(rate * len(words)))):
            i = int(rng.integers(len(words)))
            op = rng.random()
            if op < 0.5:
                words[i] = self.vocab[self.random_words(1)[0]]
            elif op < 0.75 and len(words) > 10:
                del words[i]
            else:
                words.insert(i, self.vocab[self.random_words(1)[0]])
        return words


def write_scale_corpus(n_docs: int, folder: str, files: int, seed: int) -> list[tuple[str, str, int]]:
    """Write the corpus; returns (near id, origin id, edit %) of every near-duplicate."""
    rng = np.random.default_rng(seed)
    chain = Chain(rng)
    os.makedirs(folder, exist_ok=True)
    near: list[tuple[str, str, int]] = []
    written = 0
    with contextlib.ExitStack() as stack:
        handles = [
            stack.enter_context(gzip.open(os.path.join(folder, f"part-{f:02d}.jsonl.gz"), "wt", compresslevel=1))
            for f in range(files)
        ]
        while written < n_docs:
            n = min(BATCH, n_docs - written)
            n_near, n_exact = n // 10, n // 50
            n_base = n - n_near - n_exact
            docs = []
            bases = []
            for i, doc_words in enumerate(chain.documents(rng.integers(280, 390, size=n_base))):
                bases.append((f"d{written + i:08d}", doc_words))
                docs.append((bases[-1][0], " ".join(doc_words)))
            origins = rng.choice(n_base, size=n_near + n_exact, replace=False)
            for k, origin in enumerate(origins[:n_near].tolist()):
                rate = RATES[k % len(RATES)]
                origin_id, origin_words = bases[origin]
                doc_id = f"n{rate:02d}-{written + n_base + k:08d}-{origin_id}"
                docs.append((doc_id, " ".join(chain.edit(origin_words, rate / 100))))
                near.append((doc_id, origin_id, rate))
            for k, origin in enumerate(origins[n_near:].tolist()):
                origin_id, origin_words = bases[origin]
                text = " ".join(origin_words)
                text = text.upper() if k % 2 else "  " + text.replace(" ", "  ", 3)
                docs.append((f"e-{written + n_base + n_near + k:08d}-{origin_id}", text))
            for j in rng.permutation(len(docs)).tolist():
                doc_id, text = docs[j]
                handles[(written + j) % files].write(json.dumps({"id": doc_id, "text": text}) + "\n")
            written += n
    return near


def _family(doc_id: str) -> str:
    return doc_id if doc_id.startswith("d") else doc_id.rsplit("-", 1)[-1]


def score_scale(out_dir: str, near: list[tuple[str, str, int]]) -> dict:
    survivor: dict[str, str] = {}
    for root, _, names in os.walk(os.path.join(out_dir, "dropped")):
        for name in names:
            with gzip.open(os.path.join(root, name), "rt", encoding="utf-8") as handle:
                for line in handle:
                    row = json.loads(line)
                    survivor[row["id"]] = row["duplicate_of"]
    found, total = collections.Counter(), collections.Counter()
    for doc_id, origin, rate in near:
        total[rate] += 1
        found[rate] += survivor.get(doc_id, doc_id) == survivor.get(origin, origin)
    wrong = sum(1 for d, s in survivor.items() if _family(d) != _family(s))
    le5 = [r for r in total if r <= 5]
    return {
        "recall_by_rate": {f"{r}%": round(found[r] / total[r], 4) for r in sorted(total)},
        "recall_le5": round(sum(found[r] for r in le5) / max(1, sum(total[r] for r in le5)), 4),
        "recall_3_8": round(sum(found.values()) / max(1, sum(total.values())), 4),
        "dropped": len(survivor),
        "wrong_drops": wrong,
        "precision": round(1 - wrong / max(1, len(survivor)), 5),
        "kept_digest": _kept_digest(out_dir),
    }


def _kept_digest(out_dir: str) -> str:
    """A digest of the sorted kept ids (to compare rank counts without holding the ids)."""
    digest = hashlib.sha256()
    ids = []
    for root, _, names in os.walk(os.path.join(out_dir, "deduped")):
        for name in names:
            with gzip.open(os.path.join(root, name), "rt", encoding="utf-8") as handle:
                ids.extend(json.loads(line)["id"] for line in handle)
    for doc_id in sorted(ids):
        digest.update(doc_id.encode() + b"\n")
    return f"{len(ids)}:{digest.hexdigest()[:16]}"


def run_tree(input_dir: str, out_dir: str, ranks: int, workers: int) -> dict:
    """Dedup in a child process; the tree's CPU and largest process RSS from ``RUSAGE_CHILDREN``."""
    shutil.rmtree(out_dir, ignore_errors=True)
    code = (
        "import json;from pipeline.env import offline;offline();"
        "from datatrove.utils.logging import logger;logger.remove();"
        "from pipeline.dedup.config import DedupConfig;"
        "from pipeline.dedup.run import dedup_dataset, local_executor_factory;"
        f"r=dedup_dataset({input_dir!r},{out_dir!r},DedupConfig(tasks={ranks}),source_name='bench',"
        f"executor_factory=local_executor_factory({workers},'fork'));"
        "print(json.dumps({'seconds':r.seconds,'pairs':r.pairs,'memory':r.memory,'ok':r.accounting_ok,"
        "'documents':r.documents,'kept':r.kept}))"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"dedup child failed:\n{proc.stderr[-3000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {
        **report,
        "wall_s": round(wall, 1),
        "tree_cpu_s": round(cpu, 1),
        "largest_process_rss_bytes": after.ru_maxrss * 1024,  # max over every descendant waited for
    }


def main_scale(args) -> None:
    from datatrove.utils.logging import logger

    logger.remove()
    n = args.scale
    input_dir = os.path.join(args.out, f"scale-{n}", "input")
    started = time.process_time()
    shutil.rmtree(input_dir, ignore_errors=True)
    near = write_scale_corpus(n, input_dir, args.files, args.seed)
    gen_cpu = time.process_time() - started
    runs = {}
    for ranks in [args.ranks, *args.compare_ranks]:
        out_dir = os.path.join(args.out, f"scale-{n}", f"ranks-{ranks}")
        tree = run_tree(input_dir, out_dir, ranks, args.workers)
        runs[ranks] = {**tree, "score": score_scale(out_dir, near)}
    main = runs[args.ranks]
    budget = RSS_FIXED + RSS_PER_DOC * n
    peaks = main["memory"].get("peak_rss_bytes", {})
    rows = [
        ("documents", f"{n:,} in {args.files} files, {args.ranks} ranks, {args.workers} workers"),
        ("corpus generation CPU (not counted)", f"{gen_cpu:.0f} s"),
        ("whole-tree CPU", f"{main['tree_cpu_s']:.0f} s = {1000 * main['tree_cpu_s'] / n:.3f} ms/document"),
        ("wall", f"{main['wall_s']:.0f} s"),
        (
            "largest process (RUSAGE_CHILDREN)",
            f"{main['largest_process_rss_bytes'] / 2**20:.0f} MiB "
            f"(target 150 MiB + 64 B × N = {budget / 2**20:.0f} MiB)",
        ),
        ("peak RSS per step (largest rank)", ", ".join(f"{k} {v / 2**20:.0f} MiB" for k, v in peaks.items())),
        (
            "candidate / verified pairs",
            f"{main['pairs'].get('candidates', 0):,} / {main['pairs'].get('verified', 0):,}",
        ),
        ("recall by edit rate", " ".join(f"{k} {v:.3f}" for k, v in main["score"]["recall_by_rate"].items())),
        ("recall ≤ 5 % / 3–8 %", f"{main['score']['recall_le5']:.4f} / {main['score']['recall_3_8']:.4f}"),
        (
            "precision",
            f"{main['score']['precision']:.5f} ({main['score']['wrong_drops']} wrong of {main['score']['dropped']:,})",
        ),
        ("accounting balanced", str(main["ok"])),
    ]
    for ranks, run in runs.items():
        rows.append((f"kept ids, {ranks} ranks", f"{run['score']['kept_digest']} (CPU {run['tree_cpu_s']:.0f} s)"))
    if len(runs) > 1:
        same = len({run["score"]["kept_digest"] for run in runs.values()}) == 1
        rows.append(("same decisions for every rank count", str(same)))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'dedup at scale':<{width}} | result")
    print(f"{'-' * width}-|-------")
    for name, value in rows:
        print(f"{name:<{width}} | {value}")
    with open(os.path.join(args.out, f"scale-{n}", "results.json"), "w", encoding="utf-8") as handle:
        json.dump(
            {"args": vars(args), "generation_cpu_s": gen_cpu, "runs": runs, "load": os.getloadavg()}, handle, indent=1
        )
