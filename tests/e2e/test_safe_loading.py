"""Nothing tokenmill reads back can run code (issue 19 item 2): an AST scan of every call that deserialises.

``pickle``/``cloudpickle``/``marshal`` and ``yaml.load`` are not used at all, ``dill`` only by the Slurm launcher
(``pipeline/slurm_launch.py``, after a SHA-256 check of the file it loads); ``np.load`` passes
``allow_pickle=False``, ``torch.load`` and accelerate's ``load_state`` ``weights_only=True``. ``joblib.load`` is
allowed in one place: the toxicity scorer's model files, read from the installed ``alt-profanity-check``
package (never from a run folder, an output root or a shared folder).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
FORBIDDEN_MODULES = {"pickle", "cloudpickle", "dill", "marshal", "shelve"}
JOBLIB_ALLOWED = {"pipeline/curate/toxicity.py"}
#: datatrove's Slurm executor can only be launched from its dill pickle: loaded here after a SHA-256 check
DILL_ALLOWED = {"pipeline/slurm_launch.py"}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _keyword(call: ast.Call, name: str):
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return keyword.value.value
        if keyword.arg == name and isinstance(keyword.value, ast.Dict):  # load_kwargs={"weights_only": True}
            return {k.value: v.value for k, v in zip(keyword.value.keys, keyword.value.values, strict=True)}
    return None


def problems(path: Path, relative: str) -> list[str]:
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            forbidden = FORBIDDEN_MODULES - ({"dill"} if relative in DILL_ALLOWED else set())
            found += [f"{relative}:{node.lineno} imports {m}" for m in modules if m.split(".")[0] in forbidden]
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        where = f"{relative}:{node.lineno} {name}"
        if name in ("yaml.load", "yaml.unsafe_load", "yaml.full_load", "yaml.load_all"):
            found.append(f"{where}: use yaml.safe_load")
        elif name in ("np.load", "numpy.load") and _keyword(node, "allow_pickle") is not False:
            found.append(f"{where} without allow_pickle=False")
        elif name == "torch.load" and _keyword(node, "weights_only") is not True:
            found.append(f"{where} without weights_only=True")
        elif name.endswith(".load_state") and (_keyword(node, "load_kwargs") or {}).get("weights_only") is not True:
            found.append(f"{where} without load_kwargs={{'weights_only': True}}")
        elif name == "joblib.load" and relative not in JOBLIB_ALLOWED:
            found.append(f"{where}: joblib unpickles")
    return found


def test_no_call_in_the_product_can_unpickle_what_it_reads() -> None:
    found = []
    for folder in ("pipeline", "training", "flows"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += problems(path, path.relative_to(ROOT).as_posix())
    assert found == []


def test_the_scan_finds_each_kind_of_unsafe_load(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pickle\nimport numpy as np\nimport torch\nimport yaml\nimport joblib\n"
        "np.load('x')\nnp.load('x', allow_pickle=True)\ntorch.load('x')\nyaml.load('x')\njoblib.load('x')\n"
        "acc.load_state('x')\nnp.load('x', allow_pickle=False)\ntorch.load('x', weights_only=True)\n"
        "acc.load_state('x', load_kwargs={'weights_only': True})\n",
        encoding="utf-8",
    )
    assert len(problems(bad, "bad.py")) == 7
