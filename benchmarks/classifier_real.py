"""``tokenmill classifier train`` with its defaults, on real pages no one here wrote, judged on pages it never saw;
built at run time from installed Debian documentation packages (nothing of it is stored in the repository).

Two document families, each against other pages:

* ``python-docs``: the Python documentation's HTML pages (``python3-doc``) against the Debian Administrator's
  Handbook (``debian-handbook``), the Debian Reference (``debian-reference-en``), every other HTML page under
  /usr/share/doc and the packages' README files. HTML goes through the extract stage as in curation.
* ``man3``: section-3 man pages (library functions) against sections 1, 5, 7 and 8 (commands, file formats,
  overviews, administration; the ~16,000 generated ``gcloud`` pages left out), ``--man-pages`` of each drawn
  (seeded) and rendered with ``man -l`` as a reader sees them.

Each side's files are split in half by a seeded shuffle: one half is what the user gives ``classifier train``
(run as the command, in a subprocess: its wall time and CPU-seconds are the table's), the other half is what
``classifier eval`` then judges -- unseen pages of the same families. A third, **foreign** negative set, of a
family no training negative came from (man pages for the Python model, the Python pages for the man-page model),
is scored too: the negatives' p95 and the share scoring >= 0.5 there.

Rows: the default (``--recipe tuned``, ``--budget-s 60``) and the paper's fixed recipe (``--recipe dclm``).

    python benchmarks/classifier_real.py [--families python-docs,man3] [--man-pages 800] [--recipes tuned,dclm]
    python benchmarks/classifier_real.py --mine [--mine-epoch 50] [--mine-threshold 0.5|p95]   # the older mining run
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off

PYTHON_HTML = "/usr/share/doc/python3.11/html"
HANDBOOK = "/usr/share/doc/debian-handbook/html/en-US"
REFERENCE = "/usr/share/doc/debian-reference-en/docs/*.en.html"
FAMILIES = ("python3", "debian-handbook", "debian-reference")
MAN = "/usr/share/man"
TOKENMILL = [sys.executable, "-m", "flows.cli"]


def general_pages(out: str) -> tuple[str, str]:
    """(folder of other packages' HTML pages, folder of README files as .txt), copied under ``out``."""
    html_dir, readme_dir = os.path.join(out, "html"), os.path.join(out, "readme")
    os.makedirs(html_dir)
    os.makedirs(readme_dir)
    for path in sorted(glob.glob("/usr/share/doc/*/**/*.html", recursive=True)):
        package = path.split("/")[4]
        if package.startswith(FAMILIES) or not os.path.isfile(path):
            continue
        shutil.copyfile(path, os.path.join(html_dir, path[len("/usr/share/doc/") :].replace("/", "__")))
    for path in sorted(glob.glob("/usr/share/doc/*/README*")):
        package = path.split("/")[4]
        if package.startswith(FAMILIES) or not os.path.isfile(path):
            continue
        name = path[len("/usr/share/doc/") :].replace("/", "__").removesuffix(".gz") + ".txt"
        opener = gzip.open if path.endswith(".gz") else open
        try:
            with opener(path, "rb") as source:
                data = source.read()
        except OSError:
            continue
        with open(os.path.join(readme_dir, name), "wb") as target:
            target.write(data)
    return html_dir, readme_dir


def mine(
    tmp: str, negative_paths: list[str], epoch: int, seed: int, threshold: float | str = 0.5, balance: bool = True
) -> None:
    """Train on half the files, curate the other half mixed together with the classify stage in route mode; print
    recall and precision of the Python pages routed, and the accounts."""
    import gzip as gz
    import json
    import random

    import yaml

    from pipeline.classifier.data import load_texts
    from pipeline.classifier.train import Hyperparameters, train_classifier
    from pipeline.curate.build import curate_source
    from pipeline.progress import quiet_datatrove
    from pipeline.run import account_all, prepare_run_dir
    from training.recipe import load_recipe

    rng = random.Random(seed)
    python_files = sorted(glob.glob(f"{PYTHON_HTML}/**/*.html", recursive=True))
    other_files = []
    for path in negative_paths:
        found = glob.glob(path) if "*" in path else glob.glob(f"{path}/**/*", recursive=True)
        other_files += sorted(f for f in found if os.path.isfile(f) and f.endswith((".html", ".txt")))
    folders = {name: os.path.join(tmp, "mine", name) for name in ("pos", "neg", "crawl")}
    for folder in folders.values():
        os.makedirs(folder)
    for tag, files, train_folder in (("py", python_files, folders["pos"]), ("other", other_files, folders["neg"])):
        files = list(files)
        rng.shuffle(files)
        half = len(files) // 2
        for i, path in enumerate(files):
            target = train_folder if i < half else folders["crawl"]
            ext = os.path.splitext(path)[1]
            origin = os.path.basename(path).split(".")[0][:40]
            shutil.copyfile(path, os.path.join(target, f"{tag}-{i:05d}-{origin}{ext}"))
    with quiet_datatrove():
        pos = load_texts([folders["pos"]], name="positive")
        neg = load_texts([folders["neg"]], name="negative")
    model = os.path.join(tmp, "mine", "python.bin")
    params = Hyperparameters(recipe="dclm", epoch=epoch, seed=seed, balance=balance)
    card = train_classifier(pos.texts, neg.texts, model, label="python", params=params)
    if isinstance(threshold, str):  # a percentile of the held-out negatives: chosen blind, before the crawl is scored
        picked = threshold
        threshold = float(card.heldout["negative_score_percentiles"][picked])
        print(f"threshold {picked} of the training half's held-out negatives: {threshold:.4f}")
    recipe = {
        "name": "mine",
        "output_dir": os.path.join(tmp, "mine", "run"),
        "sources": [
            {"name": "crawl", "kind": "folder", "path": folders["crawl"]},
            {"name": "python-mined", "kind": "routed"},
        ],
        "executor": {"kind": "local", "tasks": 1, "workers": 1},
        "stages": {
            "language": None,
            "quality": None,
            "pii": None,
            "classify": [
                {"name": "python", "model": model, "mode": "route", "threshold": threshold, "route_to": "python-mined"}
            ],
        },
    }
    recipe_path = os.path.join(tmp, "mine", "recipe.yaml")
    with open(recipe_path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(recipe, handle)
    loaded = load_recipe(recipe_path)
    layout = prepare_run_dir(loaded)
    with quiet_datatrove():
        for source in loaded.sources:
            curate_source(loaded, source, layout)
    account, target = account_all(loaded, layout)  # raises AccountingError unless every account balances
    kept = []  # the routed set: what the crawl's classifier sent to python-mined
    for path in sorted(glob.glob(str(layout.curated("python-mined") / "routed-from-crawl" / "*.jsonl.gz"))):
        with gz.open(path, "rt", encoding="utf-8") as handle:
            kept += [(d["id"], d["metadata"]["classify"]["python"]) for d in map(json.loads, handle)]
    given = sum(1 for name in os.listdir(folders["crawl"]) if name.startswith("py-"))
    found = sum(1 for doc_id, _ in kept if doc_id.startswith("py-"))
    print(
        f"\nmining with mode route (train on half the files: {card.counts['positive']['train']}+"
        f"{card.counts['negative']['train']} documents, {epoch} epochs, threshold {threshold}): mixed crawl of "
        f"{account.read} pages ({given} Python pages); routed {len(kept)} into python-mined: "
        f"{found} Python pages -> recall {found / given:.3f}, precision {found / max(len(kept), 1):.3f}"
    )
    print(
        f"  accounts: crawl read {account.read} = kept {account.kept_final} + routed {account.routed_total} + "
        f"dropped {account.dropped_total} (balanced={account.balanced}, drops {account.dropped}); python-mined "
        f"routed_in {target.routed_in} = kept {target.kept_final} (balanced={target.balanced})"
    )
    chosen = card.heldout["negative_score_percentiles"]
    print(f"  the training half's held-out negative percentiles (chosen before the crawl is seen): {chosen}")
    sweep = [("p95 of held-out negatives", chosen["p95"]), ("p99", chosen["p99"])]
    sweep += [(str(t), t) for t in (0.6, 0.7, 0.8, 0.9)]
    for label, cut in sweep:  # what a higher threshold would have routed (scores of the routed)
        if cut is None or cut < threshold:
            continue
        above = [doc_id for doc_id, score in kept if score >= cut]
        hits = sum(1 for doc_id in above if doc_id.startswith("py-"))
        print(
            f"  at threshold {cut:.4f} ({label}): routed {len(above)}, recall {hits / given:.3f}, "
            f"precision {hits / max(len(above), 1):.3f}"
        )
    false = [doc_id for doc_id, _ in kept if not doc_id.startswith("py-")]
    print(f"  routed non-Python pages, first 10 (copied names): {false[:10]}")


def python_pages() -> list[str]:
    return sorted(glob.glob(f"{PYTHON_HTML}/**/*.html", recursive=True))


def other_doc_pages(tmp: str) -> list[str]:
    html_dir, readme_dir = general_pages(tmp)
    files = sorted(glob.glob(f"{HANDBOOK}/**/*.html", recursive=True)) + sorted(glob.glob(REFERENCE))
    return files + sorted(glob.glob(f"{html_dir}/*")) + sorted(glob.glob(f"{readme_dir}/*"))


def man_pages(sections: tuple[str, ...], count: int, seed: int) -> list[str]:
    found = sorted(p for s in sections for p in glob.glob(f"{MAN}/man{s}/*") if "gcloud" not in os.path.basename(p))
    return sorted(random.Random(seed).sample(found, min(count, len(found))))


def render_man(path: str) -> str:
    """A man page as a reader sees it: ``man -l`` output without overstrike (what ``man foo > foo.txt`` gives)."""
    env = {**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    try:
        result = subprocess.run(["man", "-E", "UTF-8", "-l", path], env=env, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return re.sub(r".\x08", "", result.stdout.decode("utf-8", "replace")) if result.returncode == 0 else ""


def rendered(paths: list[str], folder: str) -> list[str]:
    """Man pages rendered into ``folder`` as .txt files (two at a time); the files written."""
    os.makedirs(folder, exist_ok=True)
    with ThreadPoolExecutor(2) as pool:
        texts = list(pool.map(render_man, paths))
    out = []
    for path, text in zip(paths, texts, strict=True):
        if text.strip():
            target = os.path.join(folder, os.path.basename(path).removesuffix(".gz") + ".txt")
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)
            out.append(target)
    return out


def halves(files: list[str], seed: int) -> tuple[list[str], list[str]]:
    order = list(files)
    random.Random(seed).shuffle(order)
    return order[: len(order) // 2], order[len(order) // 2 :]


def copy_into(files: list[str], folder: str) -> str:
    os.makedirs(folder, exist_ok=True)
    for i, path in enumerate(files):
        shutil.copyfile(path, os.path.join(folder, f"{i:05d}-{os.path.basename(path)}"))
    return folder


def tokenmill(args: list[str]) -> tuple[dict, float, float]:
    """``(JSON output, wall seconds, CPU-seconds of the process tree)`` of one ``tokenmill`` command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([*TOKENMILL, *args, "--json"], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"tokenmill {' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(result.stdout), wall, cpu


def family_sets(name: str, tmp: str, man_count: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    """(positive files, negative files, foreign negative files) of a family."""
    if name == "python-docs":
        foreign = rendered(man_pages(("3",), man_count // 2, seed + 7), os.path.join(tmp, "foreign-man3"))
        return python_pages(), other_doc_pages(tmp), foreign
    if name == "man3":
        pos = rendered(man_pages(("3",), man_count, seed), os.path.join(tmp, "man3"))
        neg = rendered(man_pages(("1", "5", "7", "8"), man_count, seed + 1), os.path.join(tmp, "man-other"))
        return pos, neg, python_pages()
    raise SystemExit(f"unknown family {name!r} (python-docs, man3)")


def run_family(name: str, tmp: str, man_count: int, recipes: list[str], seed: int) -> list[dict]:
    built = time.perf_counter()
    positives, negatives, foreign = family_sets(name, tmp, man_count, seed)
    pos_train, pos_eval = halves(positives, seed)
    neg_train, neg_eval = halves(negatives, seed + 1)
    root = os.path.join(tmp, name)
    folders = {
        "pos-train": copy_into(pos_train, os.path.join(root, "pos-train")),
        "neg-train": copy_into(neg_train, os.path.join(root, "neg-train")),
        "pos-eval": copy_into(pos_eval, os.path.join(root, "pos-eval")),
        "neg-eval": copy_into(neg_eval, os.path.join(root, "neg-eval")),
        "foreign": copy_into(foreign, os.path.join(root, "foreign")),
    }
    print(
        f"{name}: {len(positives)} positive files, {len(negatives)} negative, {len(foreign)} foreign negative "
        f"({time.perf_counter() - built:.0f} s to build)",
        flush=True,
    )
    rows = []
    for recipe in recipes:
        model = os.path.join(root, f"{recipe}.bin")
        train_args = ["classifier", "train", "--positive", folders["pos-train"], "--negative", folders["neg-train"]]
        card, wall, cpu = tokenmill([*train_args, "--output", model, "--label", name, "--recipe", recipe])
        unseen, _, _ = tokenmill(
            ["classifier", "eval", model, "--positive", folders["pos-eval"], "--negative", folders["neg-eval"]]
        )
        strange, _, _ = tokenmill(["classifier", "eval", model, "--negative", folders["foreign"]])
        chosen, search = card["hyperparameters"], card["search"]
        foreign_eval = strange["eval"]
        rows.append(
            {
                "family": name,
                "recipe": recipe,
                "train": f"{card['counts']['positive']['given']}+{card['counts']['negative']['given']}",
                "chosen": f"ep {chosen['epoch']} lr {chosen['lr']} ng {chosen['word_ngrams']}",
                "tried": f"{len(search['candidates'])}/{len(search['candidates']) + len(search['left_out'])}",
                "wall_s": wall,
                "cpu_s": cpu,
                "heldout_f1": card["heldout"]["f1"],
                "eval": unseen["eval"],
                "foreign_p95": foreign_eval["negative_score_percentiles"]["p95"],
                "foreign_fp": foreign_eval["false_positives"] / max(foreign_eval["negatives"], 1),
                "foreign_n": foreign_eval["negatives"],
            }
        )
        print(f"  {recipe}: trained in {wall:.1f} s wall, {cpu:.1f} CPU-s", flush=True)
    return rows


def print_table(rows: list[dict]) -> None:
    print(
        "\n| family | recipe | train docs (pos+neg) | chosen | candidates run | train wall s | train CPU-s "
        "| held-out F1 | unseen pos+neg | unseen precision | unseen recall | unseen F1 | unseen ROC-AUC "
        "| unseen neg p95 | foreign neg p95 | foreign neg >= 0.5 |"
    )
    print("|---" * 16 + "|")
    for r in rows:
        e = r["eval"]
        print(
            f"| {r['family']} | {r['recipe']} | {r['train']} | {r['chosen']} | {r['tried']} | {r['wall_s']:.1f} "
            f"| {r['cpu_s']:.1f} | {r['heldout_f1']} | {e['positives']}+{e['negatives']} | {e['precision']} "
            f"| {e['recall']} | {e['f1']} | {e['roc_auc']} | {e['negative_score_percentiles']['p95']} "
            f"| {r['foreign_p95']} | {r['foreign_fp']:.3f} of {r['foreign_n']} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", default="python-docs,man3")
    parser.add_argument("--recipes", default="tuned,dclm")
    parser.add_argument("--man-pages", type=int, default=800, help="man pages drawn per class (man3 family)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mine", action="store_true", help="only the older mining run (classify stage, route mode)")
    parser.add_argument("--mine-epoch", type=int, default=50)
    parser.add_argument(
        "--mine-threshold",
        type=lambda v: v if v.startswith("p") else float(v),
        default=0.5,
        help="the route classifier's threshold, or a percentile of the held-out negatives' scores (p95, p99)",
    )
    parser.add_argument("--mine-balance", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    if not os.path.isdir(PYTHON_HTML) or not os.path.isdir(HANDBOOK):
        raise SystemExit("needs the packages python3-doc, debian-handbook and debian-reference-en (apt-get install)")
    with tempfile.TemporaryDirectory() as tmp:
        if args.mine:
            html_dir, readme_dir = general_pages(tmp)
            negative_paths = [HANDBOOK, REFERENCE, html_dir, readme_dir]
            mine(tmp, negative_paths, args.mine_epoch, args.seed, args.mine_threshold, args.mine_balance)
            return
        before = cpu_seconds()
        rows = []
        for name in args.families.split(","):
            rows += run_family(name, tmp, args.man_pages, args.recipes.split(","), args.seed)
        print_table(rows)
        print(f"\n{cpu_seconds() - before:.0f} CPU-s in all (building the sets included); {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
