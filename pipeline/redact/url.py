"""URLs and metadata: a URL's personal data and credentials replaced with its structure kept, and the
metadata fields of a document redacted like its text."""

from __future__ import annotations

import re
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

from pipeline.redact.engine import PIIRedactor

# fields tokenmill itself fills with paths, labels, dates and codes: not text anyone wrote in a document
METADATA_NOT_TEXT = frozenset(
    {"source", "format", "file", "content_type", "date", "language", "pii", "read_error", "offset", "http_status"}
)

# query/fragment parameters whose value is a credential whatever it looks like (OAuth, AWS/GCS signed URLs,
# session ids, API keys); compared lower-case with "-" read as "_"
CREDENTIAL_PARAMETERS = frozenset(
    {
        "access_token", "api_key", "apikey", "auth", "auth_token", "authorization", "awsaccesskeyid",
        "client_secret", "code_verifier", "id_token", "jsessionid", "key", "pass", "passwd", "password", "pw",
        "pswd", "passcode", "passphrase", "credential", "credentials", "private_key", "secret_key", "access_key",
        "phpsessid", "pwd", "refresh_token", "secret", "session", "session_id", "sessionid", "sid", "sig",
        "signature", "token", "x_amz_credential", "x_amz_security_token", "x_amz_signature",
        "x_goog_credential", "x_goog_signature",
    }
)  # fmt: skip

# What a URL component must contain to hold any PII type: "@" or "%"(-encoded "@") for an e-mail, ":"/"=" for
# IPv6 and assignments, 7 digits for a phone/card/IBAN/SSN, a dotted quad for IPv4, a 16-character word run
# for a token. Components without one (``2024``, ``article-000129``) are not given to the redactor: calling
# it on every segment and pair cost 24 µs per generated-crawl URL (measured once, cProfile of the PII stage), an
# eighth of its time per page.
_URL_HINT = re.compile(r"[@%:=]|\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9_]{16,}")


_SEVEN_DIGITS = re.compile(r"(?:\D*\d){7}")  # used with match(): anchored, so it cannot backtrack far
_SEVEN_DIGITS_IN_A_SEGMENT = re.compile(r"\d(?:[^\d/]*\d){6}")


def _may_hold_pii(component: str) -> bool:
    return bool(_URL_HINT.search(component) or _SEVEN_DIGITS.match(component))


# a parameter name that makes its value an assignment-style secret candidate whatever the value looks like
_SECRET_NAME_HINT = re.compile(r"key|secret|pass|pwd|pw|token|auth|sig|session|sid|cred", re.IGNORECASE)
# the words of a parameter name that make its value a credential whatever it looks like (``db_pw``,
# ``stripe-api-key``, ``x_session_token``), beside the whole names of ``CREDENTIAL_PARAMETERS``
_CREDENTIAL_WORDS = frozenset(
    {"key", "apikey", "secret", "pass", "passwd", "password", "pwd", "pw", "token", "auth", "sig", "signature"}
    | {"session", "sid", "credential", "credentials"}
)
# "+" before the "@" of an address in a query value: a literal "+" of the local part (name+tag@host), not
# the form encoding of a space, which would leave "name" outside the address the detector sees
_PLUS_IN_LOCAL_PART = re.compile(r"\+[^&=@\s+]*(?:@|%40)")


def _credential_name(name: str) -> bool:
    lowered = name.lower().replace("-", "_")
    return lowered in CREDENTIAL_PARAMETERS or bool(_CREDENTIAL_WORDS.intersection(lowered.split("_")))


def _add_counts(total: dict[str, int], counts: dict[str, int]) -> None:
    for kind, n in counts.items():
        total[kind] = total.get(kind, 0) + n


def _credential_value(value: str, redactor: PIIRedactor, counts: dict[str, int]) -> str:
    """``value`` redacted as the secret detector redacts ``api_key = "value"`` (so ``types`` without
    ``secret``, an empty value or a placeholder such as ``${TOKEN}`` leave it as it is)."""
    for quote_char in ('"', "'"):
        if quote_char in value:
            continue
        probe = f"api_key = {quote_char}"
        redacted, found = redactor.redact(f"{probe}{value}{quote_char}")
        if found and redacted.startswith(probe) and redacted.endswith(quote_char):
            _add_counts(counts, found)
            return redacted[len(probe) : -1]
        return value
    return value


def _redact_component(raw: str, redactor: PIIRedactor, counts: dict[str, int], plus: bool = False) -> str:
    """One path segment or parameter name/value: decoded, redacted, and percent-encoded again only if it changed."""
    if not raw or not _may_hold_pii(raw):
        return raw
    decoded = unquote_plus(raw) if plus else unquote(raw)
    redacted, found = redactor.redact(decoded)
    if redacted == decoded:
        return raw
    _add_counts(counts, found)
    return quote_plus(redacted, safe="") if plus else quote(redacted, safe="")


def _redact_pairs(raw: str, redactor: PIIRedactor, counts: dict[str, int]) -> str:
    """``a=1&b=2`` (a query, or a fragment holding parameters): each ``name=value`` is redacted as that text,
    so the assignment rules of the secret detector apply (``api_key=…``, ``password=…``); names are kept."""
    out = []
    for pair in raw.split("&"):
        name, eq, value = pair.partition("=")
        if not eq or not value:
            out.append(_redact_component(pair, redactor, counts, plus=True))
            continue
        if not _may_hold_pii(value) and not _may_hold_pii(name) and not _SECRET_NAME_HINT.search(name):
            out.append(pair)
            continue
        plus_is_literal = "+" in value and bool(_PLUS_IN_LOCAL_PART.search(value))
        name_text, value_text = unquote_plus(name), unquote(value) if plus_is_literal else unquote_plus(value)
        redacted, found = redactor.redact(f"{name_text}={value_text}")
        prefix = f"{name_text}="
        if redacted.startswith(prefix):
            new_value = redacted[len(prefix) :]
            new_name = name
        else:  # the detector took the name too: redact the two halves on their own
            new_name = _redact_component(name, redactor, counts, plus=True)
            new_value, found = redactor.redact(value_text)
            found = dict(found)
        if new_value == value_text and _credential_name(name_text):
            new_value = _credential_value(value_text, redactor, found)
        if new_value != value_text:
            _add_counts(counts, found)
            value = quote(new_value, safe="") if plus_is_literal else quote_plus(new_value, safe="")
        out.append(f"{new_name}={value}")
    return "&".join(out)


def _nothing_to_redact(url: str) -> bool:
    """The common crawl URL (no user info, query or fragment, a path without hints) without ``urlsplit``,
    which is not cached for distinct URLs and was most of the 12 µs a document the URL step cost."""
    if "@" in url or "?" in url or "#" in url:
        return False
    scheme_end = url.find("://")
    path_start = url.find("/", scheme_end + 3) if scheme_end >= 0 else 0
    if path_start < 0:
        return True  # scheme://host[:port] only
    path = url[path_start:]
    return not (_URL_HINT.search(path) or _SEVEN_DIGITS_IN_A_SEGMENT.search(path))


def redact_url(url: str, redactor: PIIRedactor, counts: dict[str, int] | None = None) -> str:
    """A URL with its personal data and credentials replaced, its structure kept.

    - user info: the user name is redacted like text (an e-mail address), the password always as a secret;
    - path segments, query parameter values and the fragment are percent-decoded and redacted like text
      (``/users/jane@example.com``, ``?phone=+44…``); ``name=value`` pairs are redacted as that text, so
      ``api_key=…``/``password=…`` are secrets; the value of a parameter named in ``CREDENTIAL_PARAMETERS``
      (``sig``, ``access_token``, ``X-Amz-Signature``…) is a secret whatever it looks like;
    - scheme, host, port and parameter names are kept (they name the site, which dedup and reports need);
    - a changed component is percent-encoded again, so the result is still a URL and decodes to the
      placeholder; unchanged components keep their bytes.

    Everything goes through ``redactor``, so ``PIIConfig.types`` and placeholders apply as in the text
    (``types`` without ``secret`` keeps passwords and keys). A component that cannot hold any type
    (``_URL_HINT``) is skipped. Counts are added to ``counts``. A string that is not a URL at all is redacted
    as text.
    """
    counts = {} if counts is None else counts
    if not url or _nothing_to_redact(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed "[" in the host
        redacted, found = redactor.redact(url)
        _add_counts(counts, found)
        return redacted
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        user = _redact_component(user, redactor, counts)
        if password:
            decoded = unquote(password)
            secret = _credential_value(decoded, redactor, counts)
            password = password if secret == decoded else quote(secret, safe="")
        netloc = f"{user}{colon}{password}@{hostport}"
    path = parts.path
    # one search over the whole path first (no hint can span a "/"): most paths hold nothing worth a closer look
    if _URL_HINT.search(path) or _SEVEN_DIGITS_IN_A_SEGMENT.search(path):
        path = "/".join(_redact_component(segment, redactor, counts) for segment in path.split("/"))
    query = _redact_pairs(parts.query, redactor, counts) if parts.query else parts.query
    fragment = parts.fragment
    if fragment:
        if "=" in fragment:
            fragment = _redact_pairs(fragment, redactor, counts)
        else:
            fragment = _redact_component(fragment, redactor, counts)
    if (netloc, path, query, fragment) == (parts.netloc, parts.path, parts.query, parts.fragment):
        return url
    return urlunsplit((parts.scheme, netloc, path, query, fragment))


def redact_value(value: object, redactor: PIIRedactor, counts: dict[str, int] | None = None) -> object:
    """Strings (also inside lists and dicts) redacted like text; other values as they are."""
    counts = {} if counts is None else counts
    if isinstance(value, str):
        if not value:
            return value
        redacted, found = redactor.redact(value)
        _add_counts(counts, found)
        return redacted
    if isinstance(value, dict):
        return {k: redact_value(v, redactor, counts) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, redactor, counts) for v in value]
    return value


def redact_metadata(metadata: dict, redactor: PIIRedactor, counts: dict[str, int] | None = None) -> dict:
    """Redact ``metadata`` in place: ``url`` with ``redact_url``, every other field except ``METADATA_NOT_TEXT``
    with ``redact_value``. Returns ``metadata``."""
    counts = {} if counts is None else counts
    for key, value in metadata.items():
        if key in METADATA_NOT_TEXT or value is None or isinstance(value, (bool, int, float)):
            continue
        if key == "url" and isinstance(value, str):
            metadata[key] = redact_url(value, redactor, counts)
        else:
            metadata[key] = redact_value(value, redactor, counts)
    return metadata
