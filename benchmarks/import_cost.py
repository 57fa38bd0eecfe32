"""What each import deferred into a function saves: the CPU time its statement costs where it stands.

    python benchmarks/import_cost.py [--markdown | --json] [--repeats 3] [--jobs 2] [--only MODULE]
    python benchmarks/import_cost.py --startup 7   # CPU-s of tokenmill --help and the recipe imports instead

An AST scan of ``pipeline/``, ``training/`` and ``flows/`` finds every import statement inside a function (not
under ``if TYPE_CHECKING:``). Each is classified: one that cannot move keeps a reason (an optional dependency that
may be missing, an import that must run after something, or one whose hoisting would close an import cycle);
every other one is measured, and one under the threshold whose module the CLI's start-up loads (``STARTUP``) but
whose target it does not keeps the reason "start-up": hoisted, it would be paid by every call.

A measurement is what deferring saves: a fresh interpreter imports the enclosing module (its top-level imports;
the benchmarks' offline environment set first), then forks one child per sample; each child executes the
statement and reports its CPU and wall time. The median of ``--repeats`` children is the figure, except where
the first child already takes over ``CERTAIN_MS`` (ten times the threshold: more samples cannot change the
verdict, and these heavy imports are most of the run time): then that one sample. Statements of one module that
import the same module (the same import in many functions) are measured once, together. The table is sorted by
CPU ms; an import that saves under ``THRESHOLD_MS`` and has no reason is one to hoist (docs/imports.md).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "training", "flows")
#: below this a deferral saves too little to be worth a function-level import (issue 24 item 5)
THRESHOLD_MS = 10.0
#: a first sample above this is the figure (one sample, not the median): the verdict is certain
CERTAIN_MS = 10 * THRESHOLD_MS

#: Imported modules (or their top-level package) that may be missing, so the import stays where its absence is
#: handled or where only the feature that needs it reaches it.
OPTIONAL = {
    "ray": "optional dependency: ray is an extra (pip install tokenmill[ray]), needed by engine: ray only",
    "redis": "optional service: the dedup index's Redis backend, reached only with index.backend: redis",
    "liger_kernel": "optional dependency: liger-kernel is not a dependency (GPU only); its absence is an error",
    "tomli": "optional dependency: tomli is installed on Python 3.10 only (tomllib before 3.11)",
    "tomllib": "optional dependency: tomllib is standard from Python 3.11 (tomli before)",
    "torch.distributed.tensor": "optional dependency: torch.distributed pieces absent from some torch builds",
    "torch.distributed.fsdp": "optional dependency: torch.distributed pieces absent from some torch builds",
}

#: (enclosing module, imported module) pairs that must run after something in their function, with the reason
#: (detected too: an import preceded in its function by a write to ``os.environ`` or a call of ``offline()``).
AFTER: dict[tuple[str, str], str] = {}


@dataclass
class Deferred:
    """One name imported inside a function (``from a import b, c`` is two)."""

    path: str
    module: str  # the enclosing module
    line: int
    function: str
    target: str  # the imported module: a product submodule for ``from pkg import sub``, else the statement's module
    statement: str  # absolute, one name: what is measured and what a hoist writes
    names: list[str] = field(default_factory=list)  # the names it binds in its function
    reason: str = ""  # why it stays deferred, whatever it costs
    cpu_ms: float | None = None
    wall_ms: float | None = None
    loaded: bool | None = None  # the target was already imported by the enclosing module's import
    samples: int = 0  # forked children behind the figure
    error: str = ""


def product_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _typing_only(tree: ast.AST) -> set[int]:
    return {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }


def _catches_import_error(node: ast.AST) -> bool:
    """A ``try`` whose handlers name ``ImportError``: the import's absence is handled where it stands."""
    if not isinstance(node, ast.Try):
        return False
    caught = " ".join(ast.unparse(h.type) for h in node.handlers if h.type)
    return "ImportError" in caught or "ModuleNotFoundError" in caught


def _sets_environment(statement: ast.stmt) -> bool:
    """The statement writes ``os.environ`` or calls ``offline()``: what follows may depend on it."""
    for node in ast.walk(statement):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(isinstance(t, ast.Subscript) and ast.unparse(t.value).endswith("environ") for t in targets):
                return True
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith(("environ.setdefault", "environ.update", "environ.pop", "putenv")):
                return True
            if name.split(".")[-1] in ("offline", "quiet_console"):
                return True
    return False


def _split(node: ast.Import | ast.ImportFrom, module: str, path: Path, modules: dict) -> list[tuple[str, str, str]]:
    """(target, absolute statement, bound name) per imported name."""
    out = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            out.append((alias.name, ast.unparse(ast.Import(names=[alias])), bound))
        return out
    source = _resolve(module, path, node)
    for alias in node.names:
        target = f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
        statement = ast.unparse(ast.ImportFrom(module=source, names=[alias], level=0))
        out.append((target, statement, alias.asname or alias.name))
    return out


def scan(modules: dict[str, Path] | None = None) -> list[Deferred]:
    """Every import inside a function of the product code, one entry per imported name."""
    modules = modules or product_modules()
    found = [entry for module, path in modules.items() for entry in _scan_module(module, path, modules)]
    for entry in found:
        entry.reason = entry.reason or _listed_reason(entry)
    _mark_cycles(found, modules)
    return found


def _scan_module(module: str, path: Path, modules: dict[str, Path]) -> list[Deferred]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _typing_only(tree)
    found: list[Deferred] = []

    def visit(node: ast.AST, function: str, guarded: str, before: list[ast.stmt]) -> None:
        """``before``: the statements that run before ``node`` in its function (for "after" reasons)."""
        for name, value in ast.iter_fields(node):
            seen: list[ast.stmt] = list(before) if name in ("body", "orelse") else []
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST):
                    continue
                inner, reason = function, guarded
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    inner = f"{function}.{child.name}" if function else child.name
                if name == "body" and _catches_import_error(node):  # the try's body, not its handlers
                    reason = reason or "optional dependency: its ImportError is handled where it is imported"
                if isinstance(child, (ast.Import, ast.ImportFrom)) and function and id(child) not in typing_only:
                    after = next((s for s in seen if _sets_environment(s)), None)
                    for target, statement, bound in _split(child, module, path, modules):
                        entry = Deferred(str(path.relative_to(REPO)), module, child.lineno, function, target,
                                         statement, [bound], reason)  # fmt: skip
                        if not entry.reason and after is not None:
                            entry.reason = f"after: runs after `{ast.unparse(after).splitlines()[0]}`"
                        found.append(entry)
                new_scope = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                visit(child, inner, reason, seen if isinstance(child, ast.stmt) and not new_scope else [])
                if isinstance(child, ast.stmt):
                    seen.append(child)

    visit(tree, "", "", [])
    return found


def _listed_reason(entry: Deferred) -> str:
    if (entry.module, entry.target) in AFTER:
        return AFTER[(entry.module, entry.target)]
    parts = entry.target.split(".")
    for size in range(len(parts), 0, -1):
        if ".".join(parts[:size]) in OPTIONAL:
            return OPTIONAL[".".join(parts[:size])]
    return ""


def _top_level_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module → product modules its import runs (top-level imports, and the packages above each)."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = _typing_only(tree)
        edges = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in typing_only:
                continue
            if _in_function(tree, node):
                continue
            for target, _, _ in _split(node, module, path, modules):
                parts = target.split(".")
                edges |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        graph[module] = {m for m in edges if m in modules and m != module}
    return graph


def _in_function(tree: ast.AST, node: ast.AST) -> bool:
    if not hasattr(tree, "_parents"):
        parents = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                parents[id(child)] = parent
        tree._parents = parents  # type: ignore[attr-defined]
    parent = tree._parents.get(id(node))  # type: ignore[attr-defined]
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
        parent = tree._parents.get(id(parent))  # type: ignore[attr-defined]
    return False


def _mark_cycles(found: list[Deferred], modules: dict[str, Path]) -> None:
    """A hoist of T into M closes a cycle if importing T (or a package above it) runs M's import."""
    graph = _top_level_graph(modules)
    reach: dict[str, set[str]] = {}

    def reachable(start: str) -> set[str]:
        if start not in reach:
            seen, todo = set(), [start]
            while todo:
                for nxt in graph.get(todo.pop(), ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            reach[start] = seen
        return reach[start]

    for entry in found:
        if entry.reason:
            continue
        parts = entry.target.split(".")
        heads = [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in modules]
        if entry.module in heads or any(entry.module in reachable(head) for head in heads):
            entry.reason = "cycle: importing it at the top runs this module's own import"


# ------------------------------------------------------------------------------------------ measurement


def _child(module: str, groups: list[list[str]], repeats: int, out: str) -> None:
    """In a fresh interpreter: import ``module``, then time each group's statements in forked children."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import importlib

    import _common  # noqa: F401  # the repository on sys.path and the offline environment, as every benchmark

    results: list[dict] = []
    try:
        importlib.import_module(module)
    except BaseException as error:  # noqa: BLE001  # reported in the table, not raised
        results = [{"error": f"importing {module}: {type(error).__name__}: {error}"} for _ in groups]
        Path(out).write_text(json.dumps(results))
        return
    for statements in groups:
        code = compile("\n".join(statements), "<deferred>", "exec")
        first = statements[0].split()[1]
        samples = [_fork_sample(code, first)]
        # far above the threshold more samples cannot change the verdict (and these dominate the run time)
        if samples[0].get("cpu", 0) * 1000 < CERTAIN_MS:
            samples += [_fork_sample(code, first) for _ in range(repeats - 1)]
        errors = [s["error"] for s in samples if s.get("error")]
        if errors:
            results.append({"error": errors[0]})
            continue
        results.append(
            {
                "cpu_ms": statistics.median(s["cpu"] for s in samples) * 1000,
                "wall_ms": statistics.median(s["wall"] for s in samples) * 1000,
                "loaded": samples[0]["loaded"],
                "samples": len(samples),
            }
        )
    Path(out).write_text(json.dumps(results))


def _fork_sample(code, first_module: str, timeout_s: float = 120.0) -> dict:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one execution of the statements, then exit without cleanup
        os.close(read)
        loaded = first_module in sys.modules
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            exec(code, {"__name__": "__deferred__"})
            error = ""
        except BaseException as failure:  # noqa: BLE001  # reported, not raised
            error = f"{type(failure).__name__}: {failure}"
        sample = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "loaded": loaded}
        os.write(write, json.dumps({**sample, "error": error}).encode())
        os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], timeout_s)
    data = os.read(read, 1 << 16) if ready else b""
    os.close(read)
    if not ready:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    return json.loads(data) if data else {"error": f"no answer in {timeout_s:.0f} s"}


def measure(found: list[Deferred], repeats: int, jobs: int) -> None:
    """Fill in the figures of every entry without a reason, one fresh interpreter per enclosing module."""
    by_module: dict[str, dict[str, list[Deferred]]] = {}
    for entry in found:
        if not entry.reason:
            by_module.setdefault(entry.module, {}).setdefault(entry.target, []).append(entry)

    def run(module: str) -> None:
        groups = list(by_module[module].values())
        statements = [list(dict.fromkeys(e.statement for e in group)) for group in groups]
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            command = [sys.executable, __file__, "--child", module, "--repeats", str(repeats), "--out", out.name]
            done = subprocess.run(command, input=json.dumps(statements), text=True, capture_output=True)
            text = Path(out.name).read_text() if Path(out.name).stat().st_size else ""
        results = json.loads(text) if text else [{"error": f"child failed: {done.stderr[-300:]}"}] * len(groups)
        for group, result in zip(groups, results, strict=True):
            for entry in group:
                entry.cpu_ms, entry.wall_ms = result.get("cpu_ms"), result.get("wall_ms")
                entry.loaded, entry.error = result.get("loaded"), result.get("error", "")
                entry.samples = result.get("samples", 0)

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(run, sorted(by_module)))


#: what every CLI call and every recipe load imports: a hoist must not add to them (docs/imports.md)
STARTUP = {
    "tokenmill --help": "import sys; sys.argv = ['tokenmill', '--help']; from flows.cli import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass",
    "import pipeline.config": "import pipeline.config",
    "import training.recipe": "import training.recipe",  # the first step of tokenmill curate/pipeline/ablate
}


def startup_modules() -> dict[str, set[str]]:
    """The modules each start-up case loads, each in a fresh interpreter."""
    loaded = {}
    for case, code in STARTUP.items():
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            dump = f"\nimport json\nopen({out.name!r}, 'w').write(json.dumps(sorted(sys.modules)))"
            prefix = f"import sys; sys.path[:0] = [{str(REPO / 'benchmarks')!r}]; import _common\n"
            subprocess.run([sys.executable, "-c", prefix + code + dump], check=True, capture_output=True)
            loaded[case] = set(json.loads(Path(out.name).read_text()))
    return loaded


def startup_cpu(repeats: int) -> list[dict]:
    """CPU seconds (user + system) of each start-up case in a fresh interpreter: median, min, max of ``repeats``."""
    table = []
    for case, code in STARTUP.items():
        prefix = f"import sys; sys.path[:0] = [{str(REPO / 'benchmarks')!r}]; import _common\n"
        runs = []
        for _ in range(repeats):
            child = subprocess.Popen([sys.executable, "-c", prefix + code], stdout=subprocess.DEVNULL, cwd=REPO)
            _, status, usage = os.wait4(child.pid, 0)
            if status:
                raise SystemExit(f"{case}: exit status {status}")
            runs.append(usage.ru_utime + usage.ru_stime)
        table.append({"case": case, "median": statistics.median(runs), "min": min(runs), "max": max(runs)})
    return table


def mark_startup(found: list[Deferred], loaded: dict[str, set[str]]) -> None:
    """A cheap import that start-up does not load stays deferred in a module that start-up loads: hoisted, its
    milliseconds would be added to every CLI call (the issue's condition: start-up costs do not grow)."""
    for entry in found:
        if entry.reason or entry.error or entry.cpu_ms is None or entry.cpu_ms >= THRESHOLD_MS:
            continue
        for case, modules in loaded.items():
            if entry.module in modules and entry.target not in modules:
                entry.reason = f"start-up: `{case}` imports {entry.module} but not {entry.target}"
                break


# ------------------------------------------------------------------------------------------ the table


def verdict(entry: Deferred) -> str:
    if entry.reason:
        return entry.reason
    if entry.error:
        return f"error: {entry.error}"
    if entry.cpu_ms is None:
        return "not measured"
    return f"≥{THRESHOLD_MS:g} ms" if entry.cpu_ms >= THRESHOLD_MS else "hoist"


def rows(found: list[Deferred]) -> list[dict]:
    """One row per (enclosing module, imported module): the statements' names and lines merged."""
    merged: dict[tuple[str, str], dict] = {}
    for entry in found:
        row = merged.setdefault(
            (entry.module, entry.target),
            {"module": entry.module, "import": entry.target, "names": [], "functions": [], "cpu_ms": entry.cpu_ms,
             "wall_ms": entry.wall_ms, "loaded": entry.loaded, "samples": entry.samples, "verdict": verdict(entry)},
        )  # fmt: skip
        row["names"] = sorted(set(row["names"]) | set(entry.names))
        row["functions"] = sorted(set(row["functions"]) | {entry.function})
        if entry.reason and row["verdict"] != entry.reason:  # one reasoned statement of a pair keeps the pair
            row["verdict"] = entry.reason

    def key(row: dict) -> tuple:  # the costliest first; the unmeasured (a reason) last
        return (row["cpu_ms"] is None, -(row["cpu_ms"] or 0), row["module"], row["import"])

    return sorted(merged.values(), key=key)


def _names(names: list[str], markdown: bool) -> str:
    text = ", ".join(names)
    return text if markdown or len(text) <= 40 else text[:37] + "..."


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def print_table(table: list[dict], markdown: bool) -> None:
    header = ["module", "imports", "names", "functions", "CPU ms", "wall ms", "n", "loaded", "verdict"]
    body = [
        [r["module"], r["import"], _names(r["names"], markdown), _names(r["functions"], markdown), _ms(r["cpu_ms"]),
         _ms(r["wall_ms"]), str(r["samples"] or ""), "" if r["loaded"] is None else ("yes" if r["loaded"] else "no"),
         r["verdict"]]
        for r in table
    ]  # fmt: skip
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---:" if h.endswith("ms") else "---" for h in header) + "|")
        for line in body:
            print("| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |")
        return
    widths = [max(len(h), *(len(line[i]) for line in body)) if body else len(h) for i, h in enumerate(header)]
    for line in [header] + body:
        cells = zip(line, widths, strict=True)
        print("  ".join(c.rjust(w) if i in (4, 5, 6) else c.ljust(w) for i, (c, w) in enumerate(cells)).rstrip())


def summary(found: list[Deferred]) -> dict[str, int]:
    counts = {"deferred imports (names)": len(found), "statements": len({(e.path, e.line) for e in found})}
    for entry in found:
        kind = verdict(entry).split(":")[0]
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--json", action="store_true", help="print every entry as JSON")
    parser.add_argument("--repeats", type=int, default=3, help="forked children per measurement (median)")
    parser.add_argument("--jobs", type=int, default=2, help="enclosing modules measured at once")
    parser.add_argument("--only", help="only enclosing modules starting with this")
    parser.add_argument("--no-measure", action="store_true", help="scan and classify only")
    parser.add_argument("--startup", type=int, metavar="N", help="instead: CPU-s of each start-up case, N runs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, json.loads(sys.stdin.read()), args.repeats, args.out)
        return
    if args.startup:
        print("| start-up case | CPU-s median | min | max |\n|---|---:|---:|---:|")
        for row in startup_cpu(args.startup):
            print(f"| `{row['case']}` | {row['median']:.3f} | {row['min']:.3f} | {row['max']:.3f} |")
        return
    found = scan()
    if args.only:
        found = [e for e in found if e.module.startswith(args.only)]
    if not args.no_measure:
        measure(found, args.repeats, args.jobs)
        mark_startup(found, startup_modules())
    if args.json:
        print(json.dumps({"summary": summary(found), "entries": [asdict(e) for e in found]}, indent=1))
        return
    print_table(rows(found), args.markdown)
    print()
    print(", ".join(f"{k}: {v}" for k, v in summary(found).items()))


if __name__ == "__main__":
    main()
