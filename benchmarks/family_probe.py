"""Probe a recipe on documentation packages the real-text set does not use: every page it drops, with its rule.

How docs/filters.md's probes of packages are run. Each package is fetched with ``apt-get download`` and
``dpkg-deb -x`` (``_families.fetch``, unpacked once under the real-text set's package folder), and its HTML pages
of at least ``--min-words`` visible words are sampled: up to ``--max`` a package, taken in turn from its folders (a
language, a guide, a library: ``real_text.interleave``, seeded), with source listings, generated indexes and search
pages left out as the real-text builder leaves them out (``_families.LEFT_OUT_FOLDERS`` and ``LEFT_OUT_PAGES``).
The pages go through the recipe's own extract → language → quality stages (``real_text.run_recipe``), with the
language keep-list widened to every language (the real-text set's ``web-all``; ``--as-is`` keeps the recipe's).

Printed: pages probed and kept per package and per folder, and every drop (page, stage, rule, score; ``--show``
adds the drop row's redacted snippet). Whether a drop is right is for a reader to judge: the probe finds where to
look, the classes and counts in docs/filters.md are judged from its output.

    python benchmarks/family_probe.py python-pandas-doc harden-doc gnucash-docs [--max 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _families  # noqa: E402 - benchmarks/ is not a package
import real_text  # noqa: E402


def sample_pages(package_root: Path, max_pages: int, min_words: int, seed: int) -> list[tuple[str, Path]]:
    """(folder, page) of up to ``max_pages`` HTML pages of at least ``min_words`` visible words, taken in turn
    from the package's folders in a seeded order."""
    groups: dict[str, list[Path]] = defaultdict(list)
    for page in sorted(package_root.rglob("*")):
        if page.suffix not in (".html", ".htm") or page.is_symlink() or not page.is_file():
            continue
        parts = page.relative_to(package_root).parts
        if any(part in _families.LEFT_OUT_FOLDERS for part in parts[:-1]):
            continue
        if page.name in _families.LEFT_OUT_PAGES or page.name.endswith(("_source.html", "-tree.html")):
            continue
        groups[str(page.parent.relative_to(package_root))].append(page)
    picked: list[tuple[str, Path]] = []
    for page in real_text.interleave(groups, random.Random(seed)):
        raw = real_text.read_maybe_gz(page)
        if raw is None or real_text.word_count(real_text.visible_lines(raw)) < min_words:
            continue
        picked.append((str(page.parent.relative_to(package_root)), page))
        if len(picked) >= max_pages:
            break
    return picked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="+", metavar="PACKAGE", help="Debian packages of HTML documentation")
    parser.add_argument("--recipe", type=Path, default=Path(__file__).resolve().parents[1] / "configs" / "web.yaml")
    parser.add_argument("--as-is", action="store_true", help="keep the recipe's language keep-list")
    parser.add_argument("--max", type=int, default=300, help="pages per package")
    parser.add_argument("--min-words", type=int, default=200, help="least visible words of a sampled page")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--packages-dir", type=Path, default=Path.home() / ".cache/tokenmill/real_text/packages")
    parser.add_argument("--show", action="store_true", help="print each drop's redacted snippet")
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of tables")
    args = parser.parse_args()

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    missing = set(_families.fetch(args.packages, args.packages_dir, log))
    stages = real_text.recipe_stages(args.recipe, keep="as_is" if args.as_is else None)
    with tempfile.TemporaryDirectory(prefix="family-probe-") as tmp:
        folder, origin = Path(tmp) / "in", {}
        for package in args.packages:
            if package in missing:
                continue
            for i, (group, page) in enumerate(
                sample_pages(args.packages_dir / package, args.max, args.min_words, args.seed)
            ):
                target = folder / package / f"{i:04d}__{page.name}"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(page, target)
                origin[f"{package}/{target.name}"] = (
                    package,
                    group,
                    str(page.relative_to(args.packages_dir / package)),
                )
        kept, rows, read, _ = real_text.run_recipe(folder, stages, Path(tmp) / "run") if origin else (set(), [], 0, {})
    drops = []
    for row in rows:
        package, group, page = origin[row["id"]]
        drop = {"package": package, "folder": group, "page": page, "stage": row["stage"], "rule": row["rule"]}
        drops.append({**drop, "score": row.get("score"), "snippet": row.get("snippet", "")})
    dropped = Counter(d["package"] for d in drops)
    probed = Counter(package for package, _, _ in origin.values())
    by_folder = Counter((package, group) for package, group, _ in origin.values())
    folder_drops = Counter((d["package"], d["folder"]) for d in drops)
    result = {
        "recipe": str(args.recipe),
        "keep": "as is" if args.as_is else "every language",
        "read": read,
        "missing_packages": sorted(missing),
        "packages": {
            p: {"probed": probed[p], "kept": probed[p] - dropped[p]} for p in args.packages if p not in missing
        },
        "folders": {
            f"{p}/{g}": {"probed": n, "kept": n - folder_drops[(p, g)]} for (p, g), n in sorted(by_folder.items())
        },
        "drops": sorted(drops, key=lambda d: (d["package"], d["rule"], d["page"])),
    }
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return
    print(f"{args.recipe.name} ({result['keep']}), {read} pages read")
    for package, counts in result["packages"].items():
        share = counts["kept"] / counts["probed"] if counts["probed"] else 0.0
        rules = Counter(d["rule"] for d in drops if d["package"] == package)
        detail = ", ".join(f"{rule} {n}" for rule, n in rules.most_common())
        print(f"{package:32s} {counts['kept']:4d}/{counts['probed']:<4d} {share:6.1%}  {detail}")
    for drop in result["drops"]:
        score = "" if drop["score"] is None else f" {drop['score']:.4g}"
        print(f"  DROP {drop['package']}/{drop['page']} {drop['stage']}/{drop['rule']}{score}")
        if args.show:
            print("       " + drop["snippet"][:300].replace("\n", " | "))


if __name__ == "__main__":
    main()
