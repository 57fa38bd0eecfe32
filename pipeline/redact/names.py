"""File names and document ids, as a run writes them: a path component that holds a value (a file named
``jane.doe@corp.example.txt``, an id ``order-4111111111111111``) is replaced by ``~`` and the first 10 hex
digits of its BLAKE2b digest; components without one are kept, so ``mail/~3f1c0a9b2e/0`` still names the
folder and the position, and the same name always gives the same hash (a reader who has the original can
compute it: ``hashed_name("jane.doe@corp.example.txt")``).

Why a hash and not a placeholder: ids are how a drop row or a duplicate is traced back to its input, and
two different files would both become ``⟨EMAIL⟩.txt``; a hash keeps them apart and is never PII itself.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pipeline.redact.engine import PIIRedactor, default_redactor

HASH_PREFIX = "~"
HASH_HEX_DIGITS = 10
_SEPARATORS = re.compile(r"([/\\])")


def hashed_name(name: str) -> str:
    """``~`` and 10 hex digits of BLAKE2b of ``name`` (UTF-8; undecodable bytes kept as they were read)."""
    digest = hashlib.blake2b(name.encode("utf-8", "surrogateescape"), digest_size=HASH_HEX_DIGITS // 2)
    return HASH_PREFIX + digest.hexdigest()


def redact_name(name: str, redactor: PIIRedactor | None = None) -> str:
    """``name`` (a path, a file name, an id) with every ``/``- or ``\\``-separated component that holds a value
    the redactor finds replaced by ``hashed_name(component)``. Idempotent: a hash holds no value."""
    if not isinstance(name, str) or not name:
        return name
    redactor = redactor or default_redactor()
    if not redactor.find(name):
        parts = [name]  # the common case: nothing in the whole name, one call
    else:
        parts = _SEPARATORS.split(name)
        parts = [hashed_name(p) if p not in ("/", "\\") and p and redactor.find(p) else p for p in parts]
        joined = "".join(parts)
        if redactor.find(joined):  # a value spread over components (``jane.doe@corp/example.com``)
            return hashed_name(name)
        return joined
    return parts[0]


def redact_names(value: Any) -> Any:
    """Every string in ``value`` (also inside lists and dicts) through ``redact_name``."""
    if isinstance(value, str):
        return redact_name(value)
    if isinstance(value, dict):
        return {k: redact_names(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_names(v) for v in value]
    return value


def save_executor_json(executor: Any, indent: int = 4) -> None:
    """datatrove's ``save_executor_as_json`` with every string through ``redact_name``: the file lists the
    input folder, paths and file names of the run (``executor.json`` under the stage's logs)."""
    from datatrove.executor.base import ExecutorJSONEncoder

    data = json.loads(json.dumps(executor, cls=ExecutorJSONEncoder))
    with executor.logging_dir.open("executor.json", "w") as handle:
        json.dump(redact_names(data), handle, indent=indent)
