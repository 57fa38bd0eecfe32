"""Command-line options generated from a config model's fields: one flag per field, the model's words as its help.

A command whose flags set fields of a pydantic model (``DedupConfig``, ``TokenizeConfig``, ``PlanOptions``,
``TrainConfig``) declares a parameter ``overrides`` where those flags belong and decorates itself with
``options_from(Model, only=...)`` (or ``exclude=``). The decorator puts one ``typer.Option`` per field there:

* the flag is the field's name in kebab case (``max_shard_tokens`` → ``--max-shard-tokens``), a boolean gets
  the pair ``--x/--no-x`` (either one overrides the recipe);
* its type is the field's (``int | None`` → ``int``; a ``Literal`` of strings → ``str``, the model checks the
  value and its error names the flag), unless ``text`` says the command line reads the field as text the model
  parses itself (a count such as ``300B``);
* its default is ``None``: a flag not given keeps the recipe's (or the model's) value;
* its help is the field's ``Field(description=...)``, with the model's default appended when the description
  does not already say it;
* for a field in ``bounded``, its ``ge`` bound is the flag's ``min`` too (typer's usage error and the range in
  ``--help``, as a hand-written ``min=`` gave); opt-in, since the other commands' flags never had one.

The command receives ``overrides``: the fields whose flags were given, ready for ``model_validate`` on top of
the recipe's section. A field added to the model (and to ``only``, where the command selects) is a new flag; no
second list of the flags to keep in step. torchtitan does the same from its dataclass config with tyro
(``torchtitan/config/manager.py``); typer has no such helper, hence these ~80 lines.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar

import typer
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

Command = TypeVar("Command", bound=Callable[..., Any])

#: the parameter of the decorated command that receives the given flags
OVERRIDES = "overrides"


def flag_of(field: str) -> str:
    """``max_shard_tokens`` → ``--max-shard-tokens``."""
    return "--" + field.replace("_", "-")


def _cli_type(annotation: Any) -> Any:
    """The type typer converts the flag's value to: the field's type without ``None``, a ``Literal`` as ``str``."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    if typing.get_origin(annotation) is Literal:
        return str
    if annotation in (str, int, float, bool):
        return annotation
    raise TypeError(f"no command-line type for {annotation!r}: give the field in text= or write its flag by hand")


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _help(info: Any) -> str:
    text = info.description or ""
    default = info.default
    if default is None or default is PydanticUndefined or "default" in text:
        return text
    return f"{text} (default: {_shown(default)})" if text else f"default: {_shown(default)}"


def _minimum(info: Any) -> Any:
    """The field's ``ge`` bound (``Field(ge=8)``: pydantic keeps it as ``annotated_types.Ge`` in the metadata)."""
    return next((item.ge for item in info.metadata if type(item).__name__ == "Ge"), None)


def model_options(
    model: type[BaseModel],
    only: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    metavars: dict[str, str] | None = None,
    text: Iterable[str] = (),
    bounded: Iterable[str] = (),
) -> list[inspect.Parameter]:
    """One keyword parameter with a ``typer.Option`` (default ``None``) per field of ``model``: the fields in
    ``only`` in that order, else every field but ``exclude`` in the model's order. ``metavars``: the value's
    name in ``--help`` per field; ``text``: fields read as text (the model parses them); ``bounded``: fields
    whose ``ge`` bound typer checks as the flag's ``min``."""
    fields = model.model_fields
    names = list(only) if only is not None else [name for name in fields if name not in set(exclude)]
    metavars, text, bounded = metavars or {}, set(text), set(bounded)
    params = []
    for name in names:
        info = fields[name]  # a KeyError here is a typo in the command's only=
        kind = str if name in text else _cli_type(info.annotation)
        decl = f"{flag_of(name)}/--no-{flag_of(name)[2:]}" if kind is bool else flag_of(name)
        minimum = _minimum(info) if name in bounded else None
        option = typer.Option(None, decl, metavar=metavars.get(name), min=minimum, help=_help(info))
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind | None))
    return params


def options_from(
    model: type[BaseModel],
    only: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    metavars: dict[str, str] | None = None,
    text: Iterable[str] = (),
    bounded: Iterable[str] = (),
) -> Callable[[Command], Command]:
    """Decorate a command: its ``overrides`` parameter becomes the options of ``model_options(...)``, and the
    command is called with ``overrides={field: value}`` for the flags that were given."""
    generated = model_options(model, only, exclude, metavars, text, bounded)
    names = [p.name for p in generated]

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        if OVERRIDES not in signature.parameters:
            raise TypeError(f"{command.__name__} needs a parameter {OVERRIDES!r} for the options of {model.__name__}")
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            params.extend(generated if param.name == OVERRIDES else [param.replace(kind=param.KEYWORD_ONLY)])

        @functools.wraps(command)
        def run(**values: Any) -> Any:
            given = {name: values.pop(name) for name in names}
            return command(**values, overrides={name: value for name, value in given.items() if value is not None})

        # typer reads the generated flags from __signature__, which functions do not declare
        run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return typing.cast(Command, run)

    return decorate
