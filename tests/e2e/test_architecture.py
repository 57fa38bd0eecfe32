"""The tree's shape, checked: dependencies point one way (flows → training → pipeline), no import cycle between
modules, no function over 100 lines (and at most ten over 60, issue 24), and no citation of a file outside the
repository (issue #10).

Imports are read with ``ast`` (those under ``if TYPE_CHECKING:`` are not dependencies at run time); deferred
imports inside functions count like top-level ones, since they are dependencies all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAYERS = {"pipeline": 0, "training": 1, "flows": 2}


def _modules() -> dict[str, Path]:
    modules = {}
    for package in LAYERS:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        else:
            candidates = [alias.name for alias in node.names]
        found += [(c, node.lineno) for c in candidates if c in modules and c != name]
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, list[tuple[str, int]]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_dependencies_point_one_way(graph) -> None:
    upward = [
        f"{source}:{line} imports {target}"
        for source, targets in graph.items()
        for target, line in targets
        if LAYERS[target.split(".")[0]] > LAYERS[source.split(".")[0]]
    ]
    assert upward == []


def test_no_import_cycle_between_modules(graph) -> None:
    edges = {source: {t for t, _ in targets} for source, targets in graph.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_no_function_over_100_lines() -> None:
    long = []
    for path in _modules().values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 100:
                long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})")
    assert long == []


#: issue 24: at most this many functions over 60 lines (``def`` to its last line); the number only goes down
MAX_FUNCTIONS_OVER_60_LINES = 10


def test_at_most_ten_functions_over_60_lines() -> None:
    long = sorted(
        (node.end_lineno - node.lineno + 1, f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
        for path in _modules().values()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60
    )
    assert len(long) <= MAX_FUNCTIONS_OVER_60_LINES, "\n".join(f"{size} {where}" for size, where in reversed(long))


def test_no_citation_of_a_file_outside_the_repository() -> None:
    outside = "DESIGN" + ".md"  # the design notes that were never part of this repository
    folders = ["pipeline", "training", "flows", "sample", "configs", "docs", "benchmarks", "tests"]
    files = [p for folder in folders for p in (REPO / folder).rglob("*") if p.suffix in (".py", ".md", ".yaml")]
    cited = [str(p.relative_to(REPO)) for p in files + [REPO / "README.md"] if outside in p.read_text("utf-8")]
    assert cited == []


def _unit(module: str) -> str:
    """A unit: a sub-package (``pipeline.curate``) or a root module (``pipeline.report``) of a layer."""
    return ".".join(module.split(".")[:2])


def _unit_cycles(graph) -> list[set[str]]:
    """Strongly connected sets of more than one unit in the unit graph (Tarjan)."""
    edges: dict[str, set[str]] = {}
    for source, targets in graph.items():
        for target, _ in targets:
            if _unit(source) != _unit(target):
                edges.setdefault(_unit(source), set()).add(_unit(target))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = set()
            while True:
                member = stack.pop()
                members.add(member)
                if member == node:
                    break
            if len(members) > 1:
                cycles.append(members)

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return cycles


#: Every unit, lower units first: a unit imports only units listed before it (at run time: an import under
#: ``if TYPE_CHECKING:`` is not an edge, so ``pipeline.curate.build`` and ``pipeline.executor`` annotate with
#: the recipe they are handed). ``pipeline.config`` (the recipe) sits above every stage, since it assembles their
#: pydantic-only config modules (``curate.config``, ``dedup.config``, ``tokenize.config``); the stages and the
#: executor do not import it. Classifier scoring (``classify``) sits below curation, classifier training
#: (``classifier``) above the recipe. A new unit takes its place here, below the units it imports.
UNIT_ORDER = [
    # pipeline: what every step shares, then the readers, the stages, the recipe, the run
    "pipeline.hub_deferred",
    "pipeline", "pipeline.errors", "pipeline.atomic", "pipeline.console", "pipeline.env", "pipeline.markdown",
    "pipeline.figures", "pipeline.charts", "pipeline.orphans", "pipeline.text", "pipeline.usage", "pipeline.wording",
    "pipeline.report_check",
    "pipeline.slurm_launch", "pipeline.redact", "pipeline.base", "pipeline.jsonl_writer", "pipeline.config_base",
    "pipeline.lock",
    "pipeline.local_executor", "pipeline.ranks", "pipeline.shards", "pipeline.ownership", "pipeline.progress",
    "pipeline.ray_engine", "pipeline.slurm", "pipeline.executor", "pipeline.layout",
    "pipeline.read", "pipeline.accounting", "pipeline.fingerprint", "pipeline.checked_arrays", "pipeline.ingest",
    "pipeline.classify", "pipeline.dedup", "pipeline.tokenize", "pipeline.report", "pipeline.curate",
    "pipeline.config", "pipeline.classifier", "pipeline.run",
    # training: the plan, the model and the loop, then what runs loops (ladders, ablation), the full recipe
    "training", "training.ablate_stats", "training.bpb", "training.generate", "training.schedule", "training.threads",
    "training.ablate_report", "training.evals", "training.gpus", "training.models", "training.units",
    "training.config", "training.ladder_config", "training.data", "training.checkpoint", "training.metrics",
    "training.parallel",
    "training.branch", "training.progress", "training.modeling", "training.plan", "training.report",
    "training.steps", "training.preflight", "training.scaling", "training.train", "training.ablate",
    "training.ladder", "training.launch", "training.recipe",
    # flows: options and results, the Prefect runtime, the flows, the commands, the CLI
    "flows.options", "flows.model_options", "flows.results", "flows.run_summary", "flows", "flows.server_guard",
    "flows.runtime", "flows.artifacts", "flows.errors", "flows.serve", "flows.plan", "flows.demo", "flows.scaling_flow",
    "flows.train", "flows.dedup_job", "flows.tokenize_job", "flows.dedup", "flows.tasks", "flows.tokenize_flow",
    "flows.curate", "flows.end_to_end",
    "flows.commands", "flows.cli",
]  # fmt: skip


def test_every_unit_has_its_place_in_the_order() -> None:
    units = {_unit(module) for module in _modules()}
    assert sorted(units - set(UNIT_ORDER)) == []  # new: add it to UNIT_ORDER, below the units it imports
    assert sorted(set(UNIT_ORDER) - units) == []  # gone: remove it
    assert len(UNIT_ORDER) == len(set(UNIT_ORDER))


def test_units_import_only_lower_units(graph) -> None:
    place = {unit: index for index, unit in enumerate(UNIT_ORDER)}
    upward = [
        f"{source}:{line} imports {target}: {_unit(target)} is listed after {_unit(source)} in UNIT_ORDER"
        for source, targets in graph.items()
        for target, line in targets
        if place.get(_unit(target), -1) > place.get(_unit(source), -1)
    ]
    assert upward == []


def test_no_new_cycle_among_units(graph) -> None:
    """None left (issue 24: the 6-unit cycle around ``pipeline.config`` and ``training.config`` ↔ ``plan``); the
    order above already rules cycles out, this names the units of one if the order is edited to allow it."""
    assert [sorted(cycle) for cycle in _unit_cycles(graph)] == []
