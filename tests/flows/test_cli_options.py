"""Every command's options, as a script calls them, stay what they were before the CLI was generated from the
config models (issue 24 item 4): names, short forms, ``--x/--no-x`` pairs, defaults, types, metavars, required.

``cli_options.json`` was written from the hand-written CLI (main ``878b0d7``) by ``python -m
tests.flows.test_cli_options``; help texts are not in it (they now come from the models' ``Field`` descriptions),
nor the order of the options in ``--help`` (a generated group follows its model).
Rewrite it only for a change of the command line that is meant (and say so in the commit).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("cli_options.json")


def _default(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_default(v) for v in value]
    return repr(value)


def _annotation(param: Any) -> str:
    """The parameter's Python type as typer converts it (``int | None`` and ``Optional[int]`` read the same)."""
    text = str(getattr(param.type_descriptor, "annotation", None))
    text = re.sub(r"typing\.Optional\[(.*)\]", r"\1 | None", text.replace("<class '", "").replace("'>", ""))
    return text.replace("typing.", "").replace("pathlib.", "")


def _param(param: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": param.name,
        "kind": type(param).__name__.removeprefix("Typer"),
        "opts": list(param.opts),
        "secondary_opts": list(param.secondary_opts),
        "required": param.required,
        "default": _default(param.default),
        "type": _annotation(param),
        "min": param.min,
        "max": param.max,
        "multiple": param.multiple,
        "nargs": param.nargs,
        "metavar": param.metavar,
        "is_eager": param.is_eager,
    }
    if hasattr(param, "is_flag"):
        entry |= {"is_flag": param.is_flag, "count": param.count, "hidden": param.hidden}
    return entry


def command_options() -> dict[str, list[dict[str, Any]]]:
    """``{"dedup": [...], "shards inspect": [...], ...}``: every command's parameters, in their order."""
    import typer.main

    from flows.cli import app

    root = typer.main.get_command(app)
    found: dict[str, list[dict[str, Any]]] = {}

    def walk(command: Any, path: list[str]) -> None:
        found[" ".join(path) or "(root)"] = [_param(p) for p in command.params]
        for name in sorted(getattr(command, "commands", {})):
            walk(command.commands[name], [*path, name])

    walk(root, [])
    return found


def test_every_command_keeps_its_options() -> None:
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    actual = command_options()
    assert sorted(actual) == sorted(expected)  # no command lost or gained
    for command, params in expected.items():
        # arguments by position; options by name: a generated group lists its flags in the model's order in --help
        arguments = [p for p in actual[command] if p["kind"] == "Argument"]
        assert arguments == [p for p in params if p["kind"] == "Argument"], command
        options = {p["name"]: p for p in actual[command] if p["kind"] != "Argument"}
        assert options == {p["name"]: p for p in params if p["kind"] != "Argument"}, command


def test_the_snapshot_checks_something() -> None:
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    dedup = {p["name"]: p for p in expected["dedup"]}
    assert dedup["input"]["opts"] == ["--input", "-i"] and dedup["threshold"]["default"] is None
    assert len(expected) >= 12 and sum(len(p) for p in expected.values()) > 150


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(command_options(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}", file=sys.stderr)
