"""Dedup benchmark: tokenmill vs datasketch per-shingle ``MinHash.update`` vs datatrove's 4-stage MinHash.

Corpus (default 20,000 documents, each >= 2 KB, generated — no download): "real-looking" English text from a
word-bigram chain trained on the docstrings of Python's standard library, in four kinds:
  * distinct documents;
  * planted near-duplicates of distinct documents at 1, 2, 3, 4, 5, 6, 8 and 10 % word edits (substitutions,
    deletions, insertions at random positions);
  * exact copies (case and whitespace changed: still "exact" under tokenmill's normalisation);
  * boilerplate-sharing but distinct documents: 10 templates whose header + footer make 20–50 % of the words.
Every document has a family (a distinct document with its copies); a drop is correct when the dropped document
and the one it duplicates belong to the same family.

Printed, on the same corpus in the same run:
  * recall by edit rate (a planted copy counts as found when it ends up in its original's cluster), exact-copy
    recall, precision (correct drops / drops) and the number of distinct documents merged;
  * signatures per CPU-second including shingling and the exact hash, against datasketch ``MinHash.update``
    per shingle (and ``update_batch``) on a sample;
  * the clustering step's time and peak memory (run again in a fresh process) against its computed bound, and
    datasketch ``MinHashLSH`` (in-memory storage) filled and queried with the same signatures;
  * datatrove 0.10's ``MinhashDedupSignature/Buckets/Cluster/Filter`` with ``MinhashConfig()`` defaults.

Run:  python benchmarks/dedup_bench.py [--docs 20000] [--out /tmp/tokenmill-dedup-bench] [--skip-datatrove] 2>/dev/null
      python benchmarks/dedup_bench.py --scale 1000000 [--ranks 4 --workers 2 --compare-ranks 1,2]  (dedup_scale.py)
(datatrove logs every rank to stderr; the results go to stdout and ``<out>/results.json``).
Default run: ~5–8 minutes on 2 cores, most of it datatrove (spaCy word splitting).
"""

from __future__ import annotations

import argparse
import ast
import collections
import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import sysconfig
import time

EDIT_RATES = (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10)


# --- corpus ---------------------------------------------------------------------------------------------------


def _training_words(max_modules: int = 400) -> list[str]:
    """Words of the standard library's docstrings (no import of any module, just ``ast``)."""
    stdlib = sysconfig.get_paths()["stdlib"]
    texts = []
    for name in sorted(os.listdir(stdlib))[:max_modules]:
        if not name.endswith(".py"):
            continue
        try:
            with open(os.path.join(stdlib, name), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    texts.append(doc)
    return " ".join(texts).split()


class TextGenerator:
    """Word-bigram chain: English-looking text with a natural word distribution and some common phrases."""

    def __init__(self, seed: int = 0):
        self.words = _training_words()
        self.next = collections.defaultdict(list)
        for a, b in zip(self.words, self.words[1:], strict=False):
            self.next[a].append(b)
        self.rng = random.Random(seed)

    def text(self, n_words: int) -> str:
        rng = self.rng
        word = rng.choice(self.words)
        out = [word]
        for _ in range(n_words - 1):
            options = self.next.get(word)
            word = rng.choice(options) if options and rng.random() < 0.97 else rng.choice(self.words)
            out.append(word)
        # paragraphs, as extracted web text has
        for i in range(60, len(out), rng.randint(50, 90)):
            out[i] = "\n\n" + out[i]
        return " ".join(out)

    def document(self, min_chars: int = 2048) -> str:
        text = self.text(self.rng.randint(360, 520))
        while len(text) < min_chars:
            text += " " + self.text(60)
        return text

    def edit(self, text: str, rate: float) -> str:
        """Change ``rate`` of the words: substitutions, deletions and insertions at random positions."""
        rng = self.rng
        words = text.split(" ")
        n_edits = max(1, round(rate * len(words)))
        for _ in range(n_edits):
            i = rng.randrange(len(words))
            op = rng.random()
            if op < 0.5:
                words[i] = rng.choice(self.words)
            elif op < 0.75 and len(words) > 10:
                del words[i]
            else:
                words.insert(i, rng.choice(self.words))
        return " ".join(words)


def make_corpus(n_docs: int, seed: int = 0) -> list[dict]:
    """Documents with ``id``, ``text`` and ground truth ``family``, ``kind``, ``rate``, ``origin``."""
    gen = TextGenerator(seed)
    rng = gen.rng
    n_near_each = max(1, round(n_docs * 0.015))
    n_exact = max(1, round(n_docs * 0.05))
    n_boiler = max(10, round(n_docs * 0.08))
    n_base = n_docs - n_near_each * len(EDIT_RATES) - n_exact - n_boiler
    docs = []
    for i in range(n_base):
        docs.append({"id": f"base-{i:06d}", "text": gen.document(), "family": i, "kind": "distinct"})
    origins = rng.sample(range(n_base), n_near_each * len(EDIT_RATES) + n_exact)
    k = 0
    for rate in EDIT_RATES:
        for _ in range(n_near_each):
            origin = docs[origins[k]]
            k += 1
            docs.append(
                {
                    "id": f"near{round(rate * 100):02d}-{k:06d}",
                    "text": gen.edit(origin["text"], rate),
                    "family": origin["family"],
                    "kind": "near",
                    "rate": rate,
                    "origin": origin["id"],
                }
            )
    for _ in range(n_exact):
        origin = docs[origins[k]]
        k += 1
        text = origin["text"].replace("\n\n", "\n \n").upper() if rng.random() < 0.5 else "  " + origin["text"]
        docs.append(
            {"id": f"exact-{k:06d}", "text": text, "family": origin["family"], "kind": "exact", "origin": origin["id"]}
        )
    templates = []
    for _ in range(10):
        share = rng.uniform(0.2, 0.5)
        boiler_words = int(450 * share)
        templates.append((gen.text(boiler_words // 2), gen.text(boiler_words - boiler_words // 2), share))
    for i in range(n_boiler):
        header, footer, share = templates[i % len(templates)]
        body = gen.text(int(450 * (1 - share)))
        docs.append(
            {
                "id": f"boiler-{i:06d}",
                "text": f"{header}\n\n{body}\n\n{footer}",
                "family": n_docs + i,
                "kind": "boilerplate",
                "share": share,
            }
        )
    rng.shuffle(docs)
    return docs


def write_corpus(docs: list[dict], folder: str, files: int = 2) -> None:
    os.makedirs(folder, exist_ok=True)
    for f in range(files):
        with gzip.open(os.path.join(folder, f"part-{f:02d}.jsonl.gz"), "wt", encoding="utf-8") as handle:
            for doc in docs[f::files]:
                handle.write(json.dumps({"id": doc["id"], "text": doc["text"]}) + "\n")


# --- scoring --------------------------------------------------------------------------------------------------


def score(docs: list[dict], survivor: dict[str, str], dropped: set[str]) -> dict:
    """Recall by kind/edit rate and precision, from each document's survivor (itself when kept)."""
    by_id = {d["id"]: d for d in docs}
    found = collections.Counter()
    total = collections.Counter()
    for doc in docs:
        if doc["kind"] in ("near", "exact"):
            key = f"near {round(doc['rate'] * 100)}%" if doc["kind"] == "near" else "exact"
            total[key] += 1
            if survivor.get(doc["id"], doc["id"]) == survivor.get(doc["origin"], doc["origin"]):
                found[key] += 1
    wrong = [d for d in dropped if by_id[d]["family"] != by_id[survivor[d]]["family"]]
    near_le5 = [k for k in total if k.startswith("near") and int(k.split()[1][:-1]) <= 5]
    return {
        "recall": {k: round(found[k] / total[k], 4) for k in sorted(total, key=_rate_key)},
        "recall_near_le5": round(sum(found[k] for k in near_le5) / max(1, sum(total[k] for k in near_le5)), 4),
        "recall_near_all": round(
            sum(found[k] for k in total if k.startswith("near"))
            / max(1, sum(total[k] for k in total if k.startswith("near"))),
            4,
        ),
        "dropped": len(dropped),
        "wrong_drops": len(wrong),
        "precision": round(1 - len(wrong) / max(1, len(dropped)), 5),
        "boilerplate_dropped": sum(1 for d in dropped if by_id[d]["kind"] == "boilerplate"),
        "wrong_examples": sorted(wrong)[:5],
    }


def _rate_key(key: str) -> tuple:
    return (0, int(key.split()[1][:-1])) if key.startswith("near") else (1, 0)


def tokenmill_survivors(out_dir: str) -> tuple[dict[str, str], set[str]]:
    survivor, dropped = {}, set()
    for root, _, files in os.walk(os.path.join(out_dir, "dropped")):
        for name in files:
            with gzip.open(os.path.join(root, name), "rt", encoding="utf-8") as handle:
                for line in handle:
                    row = json.loads(line)
                    survivor[row["id"]] = row["duplicate_of"]
                    dropped.add(row["id"])
    return survivor, dropped


# --- measurements ----------------------------------------------------------------------------------------------


def bench_signatures(docs: list[dict]) -> dict:
    from pipeline.dedup.minhash import MinHasher, _tables, document_hashes

    _tables()
    hasher = MinHasher(128, 1)
    texts = [d["text"] for d in docs]
    started = time.process_time()
    for text in texts:  # exactly what the signature step computes per document
        hashes, _, _ = document_hashes(text, 5, 5, "auto", 1_000_000)
        hasher.signature(hashes)
    cpu = time.process_time() - started
    return {"docs": len(texts), "cpu_s": round(cpu, 2), "docs_per_cpu_s": round(len(texts) / cpu)}


def bench_datasketch_update(docs: list[dict], sample: int) -> dict:
    """datasketch's documented way: one ``update`` per shingle (bytes, default SHA-1 hash) and ``update_batch``."""
    from datasketch import MinHash

    from pipeline.dedup.minhash import word_shingles

    texts = [d["text"] for d in docs[:sample]]
    started = time.process_time()
    for text in texts:
        m = MinHash(num_perm=128, seed=1)
        for shingle in word_shingles(text, 5):
            m.update(" ".join(shingle).encode("utf-8"))
    cpu_update = time.process_time() - started
    started = time.process_time()
    for text in texts:
        m = MinHash(num_perm=128, seed=1)
        m.update_batch([" ".join(s).encode("utf-8") for s in word_shingles(text, 5)])
    cpu_batch = time.process_time() - started
    return {
        "docs": len(texts),
        "update_docs_per_cpu_s": round(len(texts) / cpu_update),
        "update_batch_docs_per_cpu_s": round(len(texts) / cpu_batch),
    }


def bench_lsh_storage(signature_dir: str, tasks: int, result_seconds: dict, pairs: dict) -> dict:
    """datasketch ``MinHashLSH`` (dict storage) vs tokenmill's sharded band sort on the same signatures (32 × 4)."""
    import tracemalloc

    import numpy as np
    from datasketch import LeanMinHash, MinHashLSH

    from pipeline.dedup.buckets import UNIT_RECORDS
    from pipeline.dedup.signatures import rank_paths

    sigs = np.concatenate(
        [np.fromfile(rank_paths(signature_dir, r)[".sig"], dtype="<u4").reshape(-1, 128) for r in range(tasks)]
    )
    lean = [LeanMinHash(seed=1, hashvalues=s, scheme="affine32") for s in sigs]
    sample = min(len(lean), 5000)  # bytes per document do not depend on N; tracemalloc is slow
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    lsh = MinHashLSH(num_perm=128, params=(32, 4))
    for i, m in enumerate(lean[:sample]):
        lsh.insert(i, m, check_duplication=False)
    lsh_bytes = (tracemalloc.get_traced_memory()[0] - base) / sample
    tracemalloc.stop()
    del lsh
    started = time.perf_counter()
    lsh = MinHashLSH(num_perm=128, params=(32, 4))
    for i, m in enumerate(lean):
        lsh.insert(i, m, check_duplication=False)
    found = set()
    for i, m in enumerate(lean):
        found.update((min(i, j), max(i, j)) for j in lsh.query(m) if j != i)
    lsh_s = time.perf_counter() - started
    return {
        "docs": len(sigs),
        "minhashlsh_bytes_per_doc": round(lsh_bytes),
        "minhashlsh_insert_query_s": round(lsh_s, 2),
        "minhashlsh_pairs": len(found),
        # a bucket unit holds at most UNIT_RECORDS records of one band and key range, whatever N
        "band_sort_unit_records": UNIT_RECORDS,
        "band_sort_s": round(result_seconds.get("exact", 0) + result_seconds.get("buckets", 0), 2),
        "band_sort_edges": pairs.get("candidates"),
    }


def cluster_in_fresh_process(out_dir: str, config_json: str, tasks: int) -> dict:
    """Rerun the clustering step alone (over the pairs the bucket ranks wrote) in a new interpreter: its
    allocations' peak (tracemalloc sees numpy's buffers) against the computed bound, and its peak RSS."""
    scratch = os.path.join(out_dir, "cluster-rerun")
    shutil.rmtree(scratch, ignore_errors=True)
    code = (
        "import json,tracemalloc;from pipeline.dedup.config import DedupConfig;"
        "from pipeline.dedup.cluster import run_clustering;import scipy.sparse.csgraph;"
        "tracemalloc.start();"
        f"s=run_clustering({os.path.join(out_dir, 'stages', 'dedup')!r},{scratch!r},{tasks},"
        f"DedupConfig.model_validate_json({config_json!r}),{{}});"
        "print(json.dumps({'traced_peak':tracemalloc.get_traced_memory()[1],'process_peak_rss':"
        "s['memory']['peak_rss_bytes'],'bound':s['memory']['bound_bytes'],'seconds':s['seconds']}))"
    )
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def bench_tokenmill(docs: list[dict], input_dir: str, out_dir: str, workers: int) -> dict:
    from pipeline.dedup.config import DedupConfig
    from pipeline.dedup.run import dedup_dataset, local_executor_factory

    shutil.rmtree(out_dir, ignore_errors=True)
    config = DedupConfig(tasks=2)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    started = time.perf_counter()
    result = dedup_dataset(
        input_dir, out_dir, config, source_name="bench", executor_factory=local_executor_factory(workers)
    )
    wall = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    survivor, dropped = tokenmill_survivors(out_dir)
    fresh = cluster_in_fresh_process(out_dir, config.model_dump_json(), config.tasks)
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu1 - cpu0, 1),
        "stage_s": result.seconds,
        "pairs": result.pairs,
        "rules": result.rules,
        "accounting_ok": result.accounting_ok,
        "cluster_fresh_process": fresh,
        "score": score(docs, survivor, dropped),
    }


def bench_datatrove(docs: list[dict], input_dir: str, out_dir: str) -> dict:
    """datatrove's documented 4-stage MinHash with ``MinhashConfig()`` defaults (14 buckets × 8 hashes)."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    shutil.rmtree(out_dir, ignore_errors=True)
    config = MinhashConfig()
    sig_dir, buckets_dir, clusters_dir = (os.path.join(out_dir, n) for n in ("signatures", "buckets", "clusters"))
    stages = {
        "signatures": ([JsonlReader(input_dir), MinhashDedupSignature(output_folder=sig_dir, config=config)], 2),
        "buckets": (
            [MinhashDedupBuckets(input_folder=sig_dir, output_folder=buckets_dir, config=config)],
            config.num_buckets,
        ),
        "cluster": (
            [
                MinhashDedupCluster(
                    input_folder=buckets_dir, output_folder=clusters_dir, config=config, save_cluster_id=True
                )
            ],
            1,
        ),
        "filter": (
            [
                JsonlReader(input_dir),
                MinhashDedupFilter(
                    input_folder=clusters_dir,
                    exclusion_writer=JsonlWriter(os.path.join(out_dir, "removed")),
                    load_cluster_ids=True,
                ),
                JsonlWriter(os.path.join(out_dir, "kept")),
            ],
            2,
        ),
    }
    seconds = {}
    for name, (pipeline, tasks) in stages.items():
        cpu0 = time.process_time()
        LocalPipelineExecutor(
            pipeline=pipeline, tasks=tasks, workers=1, logging_dir=os.path.join(out_dir, "logs", name)
        ).run()
        seconds[name] = round(time.process_time() - cpu0, 2)
    clusters: dict[int, dict[str, list[str]]] = collections.defaultdict(lambda: {"kept": [], "removed": []})
    for part in ("kept", "removed"):
        folder = os.path.join(out_dir, part)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            with gzip.open(os.path.join(folder, name), "rt", encoding="utf-8") as handle:
                for line in handle:
                    row = json.loads(line)
                    cluster = row["metadata"].get("minhash_cluster_id", -1)
                    if cluster != -1:
                        clusters[cluster][part].append(row["id"])
    survivor, dropped = {}, set()
    for members in clusters.values():
        keep = members["kept"][0] if members["kept"] else None
        for doc_id in members["removed"]:
            dropped.add(doc_id)
            survivor[doc_id] = keep or doc_id
    return {
        "cpu_s": seconds,
        "signature_docs_per_cpu_s": round(len(docs) / seconds["signatures"]),
        "score": score(docs, survivor, dropped),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--out", default="/tmp/tokenmill-dedup-bench")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="concurrent ranks for tokenmill (2 ranks)")
    parser.add_argument("--datasketch-sample", type=int, default=500, help="documents for the slow reference")
    parser.add_argument("--skip-datatrove", action="store_true")
    parser.add_argument("--scale", type=int, default=0, help="scale mode: N documents of ~2 KB (dedup_scale.py)")
    parser.add_argument("--files", type=int, default=4, help="scale mode: input files")
    parser.add_argument("--ranks", type=int, default=4, help="scale mode: dedup ranks")
    parser.add_argument(
        "--compare-ranks",
        type=lambda v: [int(x) for x in v.split(",") if x],
        default=[],
        help="scale mode: rerun with these rank counts and compare the kept ids",
    )
    args = parser.parse_args()
    from pipeline.env import offline

    offline()
    if args.scale:
        from dedup_scale import main_scale

        os.makedirs(args.out, exist_ok=True)
        main_scale(args)
        return
    from datatrove.utils.logging import logger

    logger.remove()  # datatrove logs every rank and file; the summary below is what matters
    os.makedirs(args.out, exist_ok=True)
    results: dict = {"args": vars(args), "load_average_at_start": os.getloadavg()}
    t = time.perf_counter()
    docs = make_corpus(args.docs, args.seed)
    input_dir = os.path.join(args.out, "input")
    shutil.rmtree(input_dir, ignore_errors=True)
    write_corpus(docs, input_dir)
    results["corpus"] = {
        "docs": len(docs),
        "mean_chars": round(sum(len(d["text"]) for d in docs) / len(docs)),
        "min_chars": min(len(d["text"]) for d in docs),
        "kinds": dict(collections.Counter(d["kind"] for d in docs)),
        "seconds": round(time.perf_counter() - t, 1),
    }
    print("corpus", results["corpus"], flush=True)
    results["signatures"] = {**bench_signatures(docs), "load_average": os.getloadavg()}
    print("tokenmill signatures", results["signatures"], flush=True)
    results["datasketch"] = bench_datasketch_update(docs, args.datasketch_sample)
    results["datasketch"]["tokenmill_speedup_vs_update"] = round(
        results["signatures"]["docs_per_cpu_s"] / results["datasketch"]["update_docs_per_cpu_s"], 1
    )
    print("datasketch", results["datasketch"], flush=True)
    results["tokenmill"] = bench_tokenmill(docs, input_dir, os.path.join(args.out, "tokenmill"), args.workers)
    print("tokenmill", json.dumps(results["tokenmill"], indent=1), flush=True)
    results["lsh"] = bench_lsh_storage(
        os.path.join(args.out, "tokenmill", "stages", "dedup", "signatures"),
        2,
        results["tokenmill"]["stage_s"],
        results["tokenmill"]["pairs"],
    )
    print("candidates", results["lsh"], flush=True)
    if not args.skip_datatrove:
        results["datatrove"] = bench_datatrove(docs, input_dir, os.path.join(args.out, "datatrove"))
        print("datatrove", json.dumps(results["datatrove"], indent=1), flush=True)
    results["load_average_at_end"] = os.getloadavg()
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
    print(f"\nresults written to {os.path.join(args.out, 'results.json')}")


if __name__ == "__main__":
    main()
