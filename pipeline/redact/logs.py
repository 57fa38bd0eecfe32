"""Log records without document text or values: every loguru record (datatrove's task logs and console) is
redacted before a sink sees it.

datatrove logs file names (``Reading input file jane.doe@corp.example.txt``) and, when a rank fails,
``logger.exception(e)``: the exception's message can quote a document, and loguru's ``diagnose`` mode prints
the values of the variables in every frame (the first ~100 characters of ``doc.text``). So ``diagnose`` is
off in every entry point (``LOGURU_DIAGNOSE=NO``, ``pipeline.env``) and on every sink tokenmill adds, and this
patcher redacts the message and the exception's message of each record (a copy of the exception: the one
that propagates is not touched).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loguru import logger

if TYPE_CHECKING:
    from loguru import Record

from pipeline.redact.engine import default_redactor

_installed = False


def _redacted_exception(value: BaseException) -> BaseException | None:
    text = str(value)
    redacted = default_redactor().redact(text)[0] if text else text
    if redacted == text:
        return None
    try:
        copy = type(value)(redacted)
        if str(copy) != redacted:
            raise TypeError
    except Exception:  # noqa: BLE001 - an exception type with another constructor: shown as a plain error
        copy = RuntimeError(f"{type(value).__name__}: {redacted}")
    copy.__traceback__ = value.__traceback__
    return copy


def redact_record(record: Record) -> None:
    """The loguru patcher: ``record["message"]`` and the exception's message, redacted in place."""
    message = record.get("message")
    if message:
        record["message"] = default_redactor().redact(message)[0]
    exception = record.get("exception")
    if exception is not None and exception.value is not None:
        copy = _redacted_exception(exception.value)
        if copy is not None:
            record["exception"] = type(exception)(type(copy), copy, exception.traceback)


def install_log_redaction() -> None:
    """Add ``redact_record`` as loguru's patcher in this process (once; rank workers call it again)."""
    global _installed
    if _installed:
        return
    logger.configure(patcher=redact_record)
    # every sink added from now on (datatrove adds two per rank, without a diagnose argument) defaults to
    # diagnose off, also in a process that imported loguru before LOGURU_DIAGNOSE was set; loguru has no
    # setting for this other than that environment variable, read once at its import
    defaults = getattr(type(logger).add, "__kwdefaults__", None)
    if isinstance(defaults, dict) and "diagnose" in defaults:
        defaults["diagnose"] = False
    _installed = True


# At import, not from a setup hook: a rank worker of a forkserver pool is a fresh process that imports the
# steps' modules (all of which import ``pipeline.redact``) before datatrove logs its first line
# ("Reading input file …"); no tokenmill code runs in it earlier.
install_log_redaction()
