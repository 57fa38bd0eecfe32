"""What one ``tokenmill curate`` call costs end to end: CPU of the whole process tree, per input size.

Each run is the real CLI (``python -m flows.cli curate configs/web.yaml --input X --output RUN``) as a child
process, in a fresh working directory (so the recipe's relative dedup index, ``runs/index/web``, starts empty
and no run dedups against an earlier one). Inputs: ``jsonl20`` is a 20-document JSONL (domain documents from
``sample``); a number N is a crawl of N pages from ``sample.generate_sample`` (WARC files,
``--warc-files`` of them, no domain folder). Inputs are generated once into ``--work`` and reused.

What is counted: user + system CPU seconds of every process of the run. The CLI is a child of this script;
the script makes itself a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``), so a grandchild that outlives
its parent -- a worker of a pool, the embedded Prefect server (started by the CLI, terminated at exit), its
uvicorn workers -- is re-parented to this script instead of init and is reaped here; ``RUSAGE_CHILDREN``
after every descendant is reaped covers them all (the kernel adds a reaped child's own reaped children to
its total). Not counted: processes outside the tree (a Prefect server configured with ``PREFECT_API_URL``
that was already running, a Redis server), and the input generation. Wall time is the CLI's start to its
exit (descendants still shutting down after that are waited for but not timed).

    python benchmarks/fixed_cost.py [--sizes jsonl20,2000,8000,32000] [--repeats 1] [--work DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux); False where the call is not available (then orphans are not counted)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_all(grace_s: float = 30.0) -> int:
    """Wait for every remaining descendant (adopted orphans included); kill what is still alive after ``grace_s``.

    Returns how many were reaped here. A descendant still running after the CLI exited is itself a finding
    (the benchmark prints it).
    """
    reaped, deadline = 0, time.monotonic() + grace_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid:
            reaped += 1
            continue
        if time.monotonic() > deadline:
            for child in _adopted():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, 9)
            deadline = time.monotonic() + 5
        time.sleep(0.05)


def _adopted() -> list[int]:
    me = str(os.getpid())
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                pids.append(int(entry))
    return pids


def make_input(size: str, work: Path, warc_files: int) -> Path:
    """The input for one size, generated once under ``work``."""
    if size.startswith("jsonl"):
        count = int(size.removeprefix("jsonl") or 20)
        path = work / f"docs-{count}.jsonl"
        if not path.exists():
            import random

            from sample.domain import build_domain

            docs = build_domain(random.Random(0), count)
            with open(path.with_suffix(".tmp"), "w", encoding="utf-8") as handle:
                for doc in docs[:count]:
                    handle.write(json.dumps({"id": doc.relpath, "text": doc.content}) + "\n")
            os.replace(path.with_suffix(".tmp"), path)
        return path
    pages = int(size)
    folder = work / f"crawl-{pages}-{warc_files}"
    if not (folder / "crawl").is_dir():
        from sample import generate_sample

        generate_sample(folder, seed=0, pages=pages, warc_files=warc_files, domain_docs=0)
    return folder / "crawl"


def documents_read(run_dir: Path) -> int:
    """Documents the run read, from its report (the accounting's ``read``)."""
    try:
        report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    sources = report.get("curation", {}).get("sources", [])
    return sum(int(s.get("read", 0)) for s in sources)


def run_once(input_path: Path, recipe: Path, extra: list[str], keep: bool) -> dict:
    cwd = Path(tempfile.mkdtemp(prefix="tokenmill-fixed-cost-"))
    run_dir = cwd / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-m", "flows.cli", "curate", str(recipe), "--input", str(input_path)]
    command += ["--output", str(run_dir), *extra]
    cpu0 = children_cpu()
    wall0 = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - wall0
    stragglers = reap_all()
    cpu = children_cpu() - cpu0
    row = {"rc": proc.returncode, "wall_s": wall, "cpu_s": cpu, "read": documents_read(run_dir), "orphans": stragglers}
    if proc.returncode != 0:
        row["stderr_tail"] = (proc.stderr or proc.stdout)[-2000:]
    if not keep:
        shutil.rmtree(cwd, ignore_errors=True)
    else:
        row["cwd"] = str(cwd)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="jsonl20,2000,8000,32000", help="comma list: jsonlN or a page count")
    parser.add_argument("--repeats", type=int, default=1, help="runs per size (the table shows each, then min/max)")
    parser.add_argument("--recipe", default=str(REPO / "configs" / "web.yaml"))
    parser.add_argument("--warc-files", type=int, default=4, help="WARC files per generated crawl")
    parser.add_argument("--work", default=None, help="folder for generated inputs (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep each run's working directory")
    parser.add_argument("--json", default=None, help="also write the rows to this JSON file")
    parser.add_argument("cli_args", nargs="*", help="extra arguments for `tokenmill curate` (after --)")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    from pipeline.env import offline

    offline()
    subreaper = become_subreaper()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="tokenmill-inputs-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in [s.strip() for s in args.sizes.split(",") if s.strip()]:
        input_path = make_input(size, work, args.warc_files)
        for repeat in range(args.repeats):
            row = {"size": size, "repeat": repeat, **run_once(input_path, Path(args.recipe), args.cli_args, args.keep)}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    reaper = "yes" if subreaper else "no - orphans not counted"
    print(f"\ncpu: whole process tree (subreaper: {reaper}); nproc {os.cpu_count()}")
    print(f"{'input':>8} {'docs':>7} {'wall s':>8} {'CPU-s':>8} {'pages/CPU-s':>12}  rc")
    for row in rows:
        rate = row["read"] / row["cpu_s"] if row["cpu_s"] else 0.0
        cells = f"{row['size']:>8} {row['read']:>7} {row['wall_s']:>8.1f} {row['cpu_s']:>8.1f} {rate:>12.0f}"
        print(f"{cells}  {row['rc']}")
    if args.repeats > 1:
        print("\nspread (min-max over repeats)")
        for size in dict.fromkeys(r["size"] for r in rows):
            mine = [r for r in rows if r["size"] == size]
            cpus = [r["cpu_s"] for r in mine]
            walls = [r["wall_s"] for r in mine]
            print(f"{size:>8}  CPU-s {min(cpus):.1f}-{max(cpus):.1f}  wall s {min(walls):.1f}-{max(walls):.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
