"""Acceptance of ``tokenmill classifier train`` on real text no one here wrote, built at run time from installed
Debian documentation packages (nothing of it is stored in the repository).

Positives: one documentation family, the Python documentation's HTML pages (``python3-doc``:
/usr/share/doc/python3.11/html/**/*.html). Negatives: other families and general pages -- the Debian
Administrator's Handbook (``debian-handbook``, en-US HTML), the Debian Reference (``debian-reference-en``,
English HTML), every other HTML page under /usr/share/doc, and the packages' README files (decompressed into a
temporary folder as .txt). HTML goes through the extract stage as in curation.

For each setting the classifier is trained with DCLM's recipe (10 % of each class held out, balanced classes)
and its held-out metrics printed; the ``tokenmill classifier train`` command doing the same is printed too.

    python benchmarks/classifier_real.py [--epochs 5,20,50] [--no-balance-too]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", default="5,20,50")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not os.path.isdir(PYTHON_HTML) or not os.path.isdir(HANDBOOK):
        raise SystemExit("needs the packages python3-doc, debian-handbook and debian-reference-en (apt-get install)")

    from pipeline.classify.data import load_texts
    from pipeline.classify.model import Hyperparameters, train_classifier
    from pipeline.progress import quiet_datatrove

    with tempfile.TemporaryDirectory() as tmp:
        html_dir, readme_dir = general_pages(tmp)
        positive_paths = [f"{PYTHON_HTML}/**/*.html"]
        negative_paths = [HANDBOOK, REFERENCE, html_dir, readme_dir]
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
                params = Hyperparameters(epoch=epoch, balance=balance, seed=args.seed)
                out = os.path.join(tmp, f"python-{epoch}-{balance}.bin")
                card = train_classifier(positives.texts, negatives.texts, out, label="python", params=params)
                held = card["heldout"]
                print(
                    f"epoch {epoch:>2} balance {balance!s:<5}: train {card['counts']['positive']['train']}+"
                    f"{card['counts']['negative']['train']}, held out {held['positives']}+{held['negatives']}: "
                    f"precision {held['precision']}, recall {held['recall']}, F1 {held['f1']}, "
                    f"ROC-AUC {held['roc_auc']}"
                )
        flags = " ".join(f"--negative '{p}'" for p in (HANDBOOK, REFERENCE))
        print(
            "\nthe same from the command line (general pages: the two folders this script builds):\n"
            f"  tokenmill classifier train --positive '{positive_paths[0]}' {flags} --negative HTML_DIR "
            "--negative README_DIR --output python.bin --label python --epoch N [--no-balance]"
        )


if __name__ == "__main__":
    main()
