"""Where Prefect task results persist, they are JSON, and a cached result is read only when it is our JSON.

Seen on main ``b7eca32`` (issue 19, X1): the ``pipeline`` flow's stage tasks persisted their results with
Prefect's default serializer (cloudpickle) under ``$PREFECT_HOME/storage/<cache key>``; the cache key is
computable from the recipe, inputs and code, so anyone who can write a shared ``PREFECT_HOME`` ran code in the
next pipeline. Choosing a JSON serializer for our tasks is not enough: Prefect deserializes a record with the
serializer the *record* names (``ResultRecord.deserialize``), and a JSON serializer may itself name any
``jsonlib`` or object hook to import. So:

* ``SERIALIZER``: JSON through the standard ``json`` module, NumPy values as numbers, anything else unknown as
  ``str`` (``json_default``; the stage results are fingerprints, manifests, summaries), no object hook on the
  way back. Every task that persists
  uses it (``PERSISTED``); the others do not persist (``NOT_PERSISTED``). ``tests/flows/test_results.py`` checks
  every task of ``flows``.
* ``must_refresh(key)``: before a stage task whose cache key is ``key`` runs, the flow reads the stored record
  itself (as bytes, parsing nothing but JSON); a record that names any other serializer makes the task run with
  ``refresh_cache=True``, which skips Prefect's cache lookup, so the planted record is never deserialized and
  the stage's fresh JSON result replaces it. (A result storage block that refused such reads would be tighter,
  but Prefect 3 accepts only blocks saved on a server, and CLI runs have none.)
"""

from __future__ import annotations

import json
from collections.abc import Coroutine
from typing import Any, TypedDict, TypeVar

from prefect._internal.compatibility.blocks import call_explicitly_sync_block_method
from prefect.results import get_default_result_storage
from prefect.serializers import JSONSerializer


def json_default(value: object) -> object:
    """What ``json`` cannot write: NumPy scalars and arrays as numbers and lists (a stage result carries them:
    the dedup summary's quantiles), paths and anything else as text."""
    item = getattr(value, "tolist", None)  # numpy.generic and numpy.ndarray
    if callable(item):
        return item()
    dump = getattr(value, "model_dump", None)  # a pydantic model
    if callable(dump):
        return dump(mode="json")
    return str(value)


SERIALIZER = JSONSerializer(object_encoder="flows.results.json_default", object_decoder=None)


class Persistence(TypedDict, total=False):
    """The keywords of ``prefect.task`` that decide whether and how a task's result persists."""

    persist_result: bool
    result_serializer: JSONSerializer


#: Every task that persists its result (``flows.tasks``, ``flows.end_to_end.STAGE_TASK``).
PERSISTED: Persistence = {"persist_result": True, "result_serializer": SERIALIZER}
#: Every other task: its result is passed on in memory only.
NOT_PERSISTED: Persistence = {"persist_result": False}


_T = TypeVar("_T")


def synchronous(value: _T | Coroutine[Any, Any, _T]) -> _T:
    """The value of a Prefect ``async_dispatch`` function called from synchronous code (typed value | coroutine;
    only a caller inside an event loop gets the coroutine, and none of ours is one)."""
    if isinstance(value, Coroutine):
        value.close()
        raise RuntimeError("a Prefect call returned a coroutine: flows call Prefect from synchronous code only")
    return value


def is_json_record(content: bytes) -> bool:
    """True when ``content`` is a Prefect result record written with ``SERIALIZER`` (nothing but JSON parsed)."""
    try:
        serializer = json.loads(content)["metadata"]["serializer"]
    except (ValueError, KeyError, TypeError):
        return False
    return serializer == SERIALIZER.model_dump(mode="json")


def stored_record(key: str) -> bytes | None:
    """The raw record Prefect's result storage holds under ``key``, or ``None`` when it holds none."""
    try:
        storage = synchronous(get_default_result_storage())
        return call_explicitly_sync_block_method(storage, "read_path", (key,), {})
    except (ValueError, OSError):  # LocalFileSystem says ValueError for a missing path
        return None


def must_refresh(key: str, outputs_present: bool = True) -> bool:
    """``refresh_cache`` for a stage task: run it anew when its outputs are gone or its cached record is not
    ``SERIALIZER``'s JSON (then Prefect never reads that record)."""
    if not outputs_present:
        return True
    content = stored_record(key)
    return content is not None and not is_json_record(content)


__all__ = [
    "NOT_PERSISTED",
    "PERSISTED",
    "SERIALIZER",
    "Persistence",
    "is_json_record",
    "must_refresh",
    "stored_record",
    "synchronous",
]
