"""PII redaction: the engine (``engine``), one detector per type with its patterns, context words and
validation together (``email``, ``phone``, ``card``, ``iban``, ``ssn``, ``ip``, ``secret``), URLs and
metadata (``url``), file names and ids (``names``), log records (``logs``), and the redaction of what a
run writes outside the kept text (``rows``).

The names below are the public interface; ``from pipeline.redact import PIIRedactor`` is how callers import.
"""

from pipeline.redact.card import card_brand_ok
from pipeline.redact.engine import (
    DEFAULT_PLACEHOLDER_FORMAT,
    DEFAULT_PLACEHOLDERS,
    PII_TYPES,
    PIIRedactor,
    PIIType,
    RedactionRules,
    default_redactor,
    placeholders_for,
)
from pipeline.redact.iban import IBAN_LENGTHS, iban_valid
from pipeline.redact.ip import ip_replaceable
from pipeline.redact.logs import install_log_redaction
from pipeline.redact.names import hashed_name, redact_name, redact_names, save_executor_json
from pipeline.redact.numbers import gs1_valid, luhn_valid
from pipeline.redact.rows import (
    MAX_TOKEN_CHARS,
    REDACTION_MARGIN,
    ROW_KEYS_NOT_TEXT,
    SNIPPET_CHARS,
    cut_at_token,
    decode_json_escapes,
    redact_fields,
    redact_row,
    redacted_snippet,
)
from pipeline.redact.ssn import ssn_valid
from pipeline.redact.url import CREDENTIAL_PARAMETERS, METADATA_NOT_TEXT, redact_metadata, redact_url, redact_value

__all__ = [
    "CREDENTIAL_PARAMETERS",
    "DEFAULT_PLACEHOLDERS",
    "DEFAULT_PLACEHOLDER_FORMAT",
    "IBAN_LENGTHS",
    "MAX_TOKEN_CHARS",
    "METADATA_NOT_TEXT",
    "PII_TYPES",
    "REDACTION_MARGIN",
    "ROW_KEYS_NOT_TEXT",
    "SNIPPET_CHARS",
    "PIIRedactor",
    "PIIType",
    "RedactionRules",
    "card_brand_ok",
    "cut_at_token",
    "decode_json_escapes",
    "hashed_name",
    "redact_name",
    "redact_names",
    "save_executor_json",
    "install_log_redaction",
    "default_redactor",
    "gs1_valid",
    "iban_valid",
    "ip_replaceable",
    "luhn_valid",
    "placeholders_for",
    "redact_fields",
    "redact_metadata",
    "redact_row",
    "redact_url",
    "redact_value",
    "redacted_snippet",
    "ssn_valid",
]
