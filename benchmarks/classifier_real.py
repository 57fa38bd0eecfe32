"""Acceptance of ``tokenmill classifier train`` on real text no one here wrote, built at run time from installed
Debian documentation packages (nothing of it is stored in the repository).

Positives: one documentation family, the Python documentation's HTML pages (``python3-doc``:
/usr/share/doc/python3.11/html/**/*.html). Negatives: other families and general pages -- the Debian
Administrator's Handbook (``debian-handbook``, en-US HTML), the Debian Reference (``debian-reference-en``,
English HTML), every other HTML page under /usr/share/doc, and the packages' README files (decompressed into a
temporary folder as .txt). HTML goes through the extract stage as in curation.

For each setting the classifier is trained with DCLM's recipe (10 % of each class held out, balanced classes)
and its held-out metrics printed; the ``tokenmill classifier train`` command doing the same is printed too.

Then mining: half of the pages of each side (by file, seeded) train a classifier (``--mine-epoch``, default
50); the other half is copied into one mixed folder (the "crawl") and curated by ``tokenmill curate``'s code
with the ``classify`` stage in ``route`` mode (0.5; extract and classify only) into a ``kind: routed`` source
``python-mined``; the Python pages found in ``curated/python-mined/routed-from-crawl/`` are counted against the
Python pages the crawl held (recall) and against everything routed (precision), and the accounts
(read = kept + routed + dropped, the routed count against the target folder) are checked.

    python benchmarks/classifier_real.py [--epochs 5,20,50] [--mine-epoch 50] [--mine-threshold 0.5|p95] [--mine-only]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import os
import shutil
import tempfile

from _common import cpu_seconds  # also puts the repository on sys.path and turns telemetry off

PYTHON_HTML = "/usr/share/doc/python3.11/html"
HANDBOOK = "/usr/share/doc/debian-handbook/html/en-US"
REFERENCE = "/usr/share/doc/debian-reference-en/docs/*.en.html"
FAMILIES = ("python3", "debian-handbook", "debian-reference")


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
        threshold = float(card["heldout"]["negative_score_percentiles"][picked])
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
        f"\nmining with mode route (train on half the files: {card['counts']['positive']['train']}+"
        f"{card['counts']['negative']['train']} documents, {epoch} epochs, threshold {threshold}): mixed crawl of "
        f"{account.read} pages ({given} Python pages); routed {len(kept)} into python-mined: "
        f"{found} Python pages -> recall {found / given:.3f}, precision {found / max(len(kept), 1):.3f}"
    )
    print(
        f"  accounts: crawl read {account.read} = kept {account.kept_final} + routed {account.routed_total} + "
        f"dropped {account.dropped_total} (balanced={account.balanced}, drops {account.dropped}); python-mined "
        f"routed_in {target.routed_in} = kept {target.kept_final} (balanced={target.balanced})"
    )
    chosen = card["heldout"]["negative_score_percentiles"]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", default="5,20,50")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mine-epoch", type=int, default=50)
    parser.add_argument("--mine-only", action="store_true", help="skip the epoch/balance sweep; only mine")
    parser.add_argument(
        "--mine-threshold",
        type=lambda v: v if v.startswith("p") else float(v),
        default=0.5,
        help="the route classifier's threshold, or a percentile of the held-out negatives' scores (p95, p99)",
    )
    parser.add_argument(
        "--mine-balance",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="down-sample the negatives to the positives' count (DCLM) when training the mining classifier",
    )
    args = parser.parse_args()
    if not os.path.isdir(PYTHON_HTML) or not os.path.isdir(HANDBOOK):
        raise SystemExit("needs the packages python3-doc, debian-handbook and debian-reference-en (apt-get install)")

    from pipeline.classifier.data import load_texts
    from pipeline.classifier.train import Hyperparameters, train_classifier
    from pipeline.progress import quiet_datatrove

    with tempfile.TemporaryDirectory() as tmp:
        html_dir, readme_dir = general_pages(tmp)
        positive_paths = [f"{PYTHON_HTML}/**/*.html"]
        negative_paths = [HANDBOOK, REFERENCE, html_dir, readme_dir]
        if args.mine_only:
            mine(tmp, negative_paths, args.mine_epoch, args.seed, args.mine_threshold, args.mine_balance)
            return
        before = cpu_seconds()
        with quiet_datatrove():
            positives = load_texts(positive_paths, name="positive")
            negatives = load_texts(negative_paths, name="negative")
        print(
            f"positives (Python docs): {positives.summary()}\nnegatives (handbook, reference, other HTML, READMEs): "
            f"{negatives.summary()}  ({cpu_seconds() - before:.1f} CPU-s to read and extract)"
        )
        for epoch in [int(e) for e in args.epochs.split(",")]:
            for balance in (True, False):
                params = Hyperparameters(recipe="dclm", epoch=epoch, balance=balance, seed=args.seed)
                out = os.path.join(tmp, f"python-{epoch}-{balance}.bin")
                card = train_classifier(positives.texts, negatives.texts, out, label="python", params=params)
                held = card["heldout"]
                print(
                    f"epoch {epoch:>2} balance {balance!s:<5}: train {card['counts']['positive']['train']}+"
                    f"{card['counts']['negative']['train']}, held out {held['positives']}+{held['negatives']}: "
                    f"precision {held['precision']}, recall {held['recall']}, F1 {held['f1']}, "
                    f"ROC-AUC {held['roc_auc']}"
                )
        mine(tmp, negative_paths, args.mine_epoch, args.seed, args.mine_threshold, args.mine_balance)
        flags = " ".join(f"--negative '{p}'" for p in (HANDBOOK, REFERENCE))
        print(
            "\nthe same from the command line (general pages: the two folders this script builds):\n"
            f"  tokenmill classifier train --positive '{positive_paths[0]}' {flags} --negative HTML_DIR "
            "--negative README_DIR --output python.bin --label python --epoch N [--no-balance]"
        )


if __name__ == "__main__":
    main()
