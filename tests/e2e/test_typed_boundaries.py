"""Typed boundaries (issue 24 item 3): no public function of ``pipeline/``, ``training/`` or ``flows/`` that
another unit calls returns a bare ``dict`` (``dict``, ``Dict``, ``dict[str, Any]``, ``Mapping[str, Any]``), ``Any``,
or nothing annotated at all. What crosses a unit is a dataclass or a pydantic model (``ShardManifest``,
``DedupResult``, ``TrainSummary``, …), turned into JSON by its ``to_dict`` only where JSON is written.

Read with ``ast``: a unit (``tests/e2e/test_architecture.py``'s ``_unit``) uses a function when it imports it
(``from X import f``, resolved through re-exports such as ``pipeline/curate/__init__.py``) or names it through an
imported module (``X.f``); imports under ``if TYPE_CHECKING:`` are not uses. Module-level functions only: a method
call on an instance needs the instance's type, which ``ast`` does not have.

Allowed by design, not counted (``allowed_kind``):

* ``to_dict`` / ``to_json`` / ``model_dump`` and the serialisers named ``*_json``: they exist to produce the JSON
  edge (a file, a printed result, a Prefect result) from a typed value.
* Prefect ``@task`` / ``@flow`` bodies: a persisted task result is JSON (``flows/results.py``: the JSON serializer
  knows pydantic models but writes any other object as its ``str``), and a flow's result is what the CLI prints.
  They are the Prefect edge: what they call returns typed values, they return those values' JSON.

Anything else found is in ``ALLOWED`` with the reason it stays, or the test fails. On main ``02ba3f7`` the scan
found 46 (53 with the allowed kinds); 33 are typed since (results as frozen dataclasses, the rest annotated),
the 13 left are ``ALLOWED``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.e2e.test_architecture import REPO, _modules, _unit

#: return annotations that say nothing of what comes back (the last part of a dotted name)
BARE = {"dict", "Dict", "Mapping", "MutableMapping", "Any", "object"}
#: names that exist to produce the JSON edge from a typed value
JSON_EDGE = {"to_dict", "to_json", "model_dump"}

#: ``module.function``: why its bare return stays
ALLOWED: dict[str, str] = {
    # typer: Option() is typed -> Any so that it can stand as a parameter's default (`id_key: str | None =
    # id_key_option()`); a narrower return type would not type-check the commands
    "flows.options.id_key_option": "typer's Option() idiom",
    "flows.options.prefect_option": "typer's Option() idiom",
    "flows.options.text_key_option": "typer's Option() idiom",
    # the JSONL records themselves: a row has whatever fields its source and stages wrote
    "pipeline.base.drop_row": "the JSON row written to dropped/<source>/ for one dropped document",
    "pipeline.redact.rows.redact_row": "a drop row (a JSON record, any fields) in, the redacted row out",
    "pipeline.redact.url.redact_metadata": "a document's metadata (any keys its reader and stages wrote), redacted",
    # settings before pydantic validates them
    "pipeline.config_base.read_yaml": "a YAML file's content, any value: each caller validates it or refuses it",
    "pipeline.config_base.expand_home": "a config value of any type (str, Path, list; else unchanged): validators",
    "training.units.count_field": "a mode='before' validator's body: pydantic takes any value, the field validates",
    "training.ladder.config.read_ladder_file": "a ladder YAML mapping: flags override it, LadderConfig validates",
    "training.plan.options.complete_from_train": "a plan: mapping filled from train:, before PlanOptions validates it",
    "training.models.llama_kwargs": "LlamaConfig's keywords as the model YAML writes them (shape_from_mapping checks)",
    "training.branch.branch_inherit": "a checkpoint state shaped as state.json (read_state's JSON), read as such",
}


def untyped_return(annotation: ast.expr | None) -> str | None:
    """The annotation's text when it is bare (``dict``, ``dict[str, Any]``, ``Any``, none …), else None. ``X | None``
    and ``Optional[X]`` are judged by ``X``; ``dict[str, float]`` says what comes back and is not bare."""
    if annotation is None:
        return "no annotation"
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [
            s for s in (annotation.left, annotation.right) if not (isinstance(s, ast.Constant) and s.value is None)
        ]
        return next((found for found in map(untyped_return, sides) if found), None)
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = ast.unparse(head).split(".")[-1]
    if isinstance(annotation, ast.Subscript) and name == "Optional":
        return untyped_return(annotation.slice)
    if name not in BARE:
        return None
    if isinstance(annotation, ast.Subscript):  # dict[str, X]: bare only when X is Any/object
        values = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        if ast.unparse(values[-1]).split(".")[-1] not in ("Any", "object"):
            return None
    return ast.unparse(annotation)


def allowed_kind(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A JSON serialiser by name, or a Prefect task or flow (the module docstring says why)."""
    if node.name in JSON_EDGE or node.name.endswith("_json"):
        return True
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ast.unparse(target).split(".")[-1] in ("task", "flow"):
            return True
    return False


def _imported_from(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def boundary_returns() -> list[str]:
    """``path:line module.function -> annotation (used by …)`` for each bare return another unit uses."""
    modules = _modules()
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    functions: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
    reexports: dict[tuple[str, str], tuple[str, str]] = {}  # (module, name it binds) -> (module, name there)
    for name, tree in trees.items():
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                functions[(name, node.name)] = node
            elif isinstance(node, ast.ImportFrom):
                source = _imported_from(name, modules[name], node)
                for alias in node.names:
                    reexports[(name, alias.asname or alias.name)] = (source, alias.name)

    def defined(key: tuple[str, str]) -> tuple[str, str] | None:
        for _ in range(10):  # a chain of re-exports
            if key in functions:
                return key
            if key not in reexports:
                return None
            key = reexports[key]
        return None

    users: dict[tuple[str, str], set[str]] = {}
    for name, tree in trees.items():
        typing_only = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for node in ast.walk(block)
        }
        module_names: dict[str, str] = {}  # a name bound to one of our modules -> that module
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                source = _imported_from(name, modules[name], node)
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        module_names[alias.asname or alias.name] = f"{source}.{alias.name}"
                    elif found := defined((source, alias.name)):
                        users.setdefault(found, set()).add(name)
            elif isinstance(node, ast.Import):
                for alias in node.names:  # ``import a.b as c`` binds c to a.b, ``import a.b`` binds a to a
                    bound = alias.asname or alias.name.split(".")[0]
                    module_names[bound] = alias.name if alias.asname else bound
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in typing_only:
                head, _, rest = ast.unparse(node.value).partition(".")
                if head not in module_names:
                    continue
                module = module_names[head] + (f".{rest}" if rest else "")
                if found := defined((module, node.attr)):
                    users.setdefault(found, set()).add(name)

    found = []
    for (module, function), node in sorted(functions.items()):
        annotation = untyped_return(node.returns)
        others = sorted(user for user in users.get((module, function), ()) if _unit(user) != _unit(module))
        if annotation and others and not allowed_kind(node):
            where = f"{modules[module].relative_to(REPO)}:{node.lineno}"
            found.append(f"{where} {module}.{function} -> {annotation} (used by {', '.join(others)})")
    return found


def test_no_bare_dict_returned_across_a_unit() -> None:
    found = boundary_returns()
    print(f"{len(found)} public functions return a bare dict/Any across a unit")
    named = {line.split(" ")[1] for line in found}
    assert sorted(line for line in found if line.split(" ")[1] not in ALLOWED) == []  # type it (or say why not)
    assert sorted(set(ALLOWED) - named) == []  # typed since (or no longer used across a unit): remove it


@pytest.mark.parametrize(
    ("annotation", "bare"),
    [
        ("dict", True),
        ("dict[str, Any]", True),
        ("Dict[str, Any]", True),
        ("typing.Mapping[str, Any]", True),
        ("Any", True),
        ("dict[str, Any] | None", True),
        ("Optional[dict]", True),
        ("'dict[str, object]'", True),
        ("dict[str, float]", False),
        ("ShardManifest", False),
        ("ShardManifest | None", False),
        ("list[dict[str, Any]]", False),
        ("None", False),
    ],
)
def test_untyped_return_tells_bare_from_typed(annotation: str, bare: bool) -> None:
    assert bool(untyped_return(ast.parse(annotation, mode="eval").body)) is bare
    assert untyped_return(None) == "no annotation"
