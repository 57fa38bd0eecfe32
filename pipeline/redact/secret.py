"""Credentials: private-key blocks, tokens with a vendor prefix, ``Authorization`` header values, passwords in
URLs, and literal values assigned to a name that says key/secret/password/token (``api_key = "…"``,
``PASSWORD=…`` in an env file, ``?password=…``); a name (``password = user_password``), a placeholder
(``${TOKEN}``) or a masked value (``****``) is not one."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from pipeline.redact.numbers import find_all
from pipeline.redact.scripts import CJK_RANGES

_SECRET_KEY_NAMES = (
    r"api[_-]?key|apikey|api[_-]?secret|secret(?:[_-]?access)?(?:[_-]?key)?|client[_-]?secret|private[_-]?key"
    r"|access[_-]?key|password|passwd|passphrase|pwd"
    r"|(?:access|auth|refresh|bearer|api|session|oauth|csrf)[_-]?token|token"
)
_KEY_WORDS = ("key", "secret", "pass", "pwd", "token")
_TOKEN_HINTS = ("AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "eyJ")
# where a vendor key starts, relative to its hint: (hint, offset of the key's first character)
_VENDOR_HINTS = (("k_live_", -1), ("k_test_", -1), ("AIza", 0), ("sk-", 0), ("SG.", 0))
_SLACK_HOOK = "hooks.slack.com/services/"
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_NOT_SECRET_VALUES = frozenset(
    {"null", "none", "nil", "true", "false", "undefined", "required", "optional", "string", "str", "int", "bool"}
    | {"text", "empty", "redacted", "hidden", "secret", "password", "token", "changeit", "your_password"}
    | {"pass", "passwd", "pwd", "user", "username", "login"}  # socks5h://apt:pass@…: the field's name
)
_PLACEHOLDER_PREFIXES = ("<", "⟨", "${", "$(", "{", "%(", "%s", "%d", "%r", "[", "os.", "process.env", "env(", "$")
_PATH_PREFIXES = ("/", "~/", "./", "../")


# One scan that tells whether any family can match: each hint above (exact case) and each key word of the
# assignments (any case, as ``text.lower()`` finds them: only ASCII letters and "K", U+212A, lower to the
# letters of the key words) as an alternative that starts at a rare character of it and looks back for the rest.
# Alternatives that start with a literal give the regex a first-character set, so the scan skips every other
# character in C: on text with no hint (number-dense text) this replaces ~25 substring searches and a lower().
_GATE_PIVOTS = {"PRIVATE KEY": "V", "AKIA": "K", "ASIA": "I", "ghp_": "_", "gho_": "_", "ghu_": "_", "ghs_": "_"}
_GATE_PIVOTS |= {"ghr_": "_", "github_pat_": "_", "glpat-": "p", "xox": "x", "eyJ": "J", "k_live_": "_"}
_GATE_PIVOTS |= {"k_test_": "_", "AIza": "z", "sk-": "k", "SG.": "G", _SLACK_HOOK: "k", "earer": "r", "EARER": "R"}
_GATE_PIVOTS |= {"asic": "i", "ASIC": "I", "://": "/"}
_KEY_WORD_PIVOTS = {"key": "y", "secret": "r", "pass": "p", "pwd": "w", "token": "k"}


def _any_case(ch: str) -> str:
    return "[" + re.escape(ch.lower() + ch.upper() + ("\u212a" if ch == "k" else "")) + "]"


def _gate_pattern() -> str:
    alternatives = []
    for hint, pivot in _GATE_PIVOTS.items():
        j = hint.index(pivot)
        alternatives.append(f"{re.escape(pivot)}(?<={re.escape(hint[: j + 1])}){re.escape(hint[j + 1 :])}")
    for word, pivot in _KEY_WORD_PIVOTS.items():
        j = word.index(pivot)
        before, after = "".join(map(_any_case, word[:j])), "".join(map(_any_case, word[j + 1 :]))
        for case in {pivot.lower(), pivot.upper()} | ({"\u212a"} if pivot == "k" else set()):
            alternatives.append(f"{re.escape(case)}(?<={before}{re.escape(case)}){after}")
    return "|".join(alternatives)


def _mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


class _Patterns:
    def __init__(self) -> None:
        a = re.ASCII
        cjk = CJK_RANGES
        self.pem_full = re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,100000}?"
            r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        )
        # a block cut off before its END line: the BEGIN line, header lines and base64 lines after it
        self.pem_open = re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?:\r?\n[A-Za-z][A-Za-z0-9-]*: [^\r\n]*)*"
            r"(?:(?:\r?\n)+[A-Za-z0-9+/=]{16,})*"
        )
        self.tokens = re.compile(
            r"(?<![\w-])(?:(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])|gh[pousr]_[A-Za-z0-9]{36,255}(?!\w)"
            r"|github_pat_\w{22,255}|glpat-[\w\-]{20,255}|xox[abposr]-[A-Za-z0-9\-]{10,255}"
            r"|eyJ[\w\-]{8,}\.eyJ[\w\-]{8,}\.[\w\-]*)",
            a,
        )
        # Stripe secret and restricted keys; Google API keys; OpenAI (old, project, service-account, admin) and
        # Anthropic keys; SendGrid. Matched only where a prefix was found (``_VENDOR_HINTS``): "sk-" is in every
        # "disk-" and "task-", and a scan of the whole text with this pattern doubled the detector's cost on code
        self.vendor = re.compile(
            r"(?<![\w-])(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,247}(?![A-Za-z0-9])|AIza[\w\-]{35}(?![\w\-])"
            r"|sk-(?:proj-|svcacct-|admin-|ant-(?:api\d\d-)?)?[A-Za-z0-9_\-]{20,255}(?![\w\-])"
            r"|SG\.[\w\-]{16,32}\.[\w\-]{16,64}(?![\w\-]))",
            a,
        )
        # the token path of a Slack incoming webhook, after hooks.slack.com/services/
        self.slack_webhook = re.compile(r"T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{16,32}(?![A-Za-z0-9])", a)
        self.auth_header = re.compile(
            r"[Bb](?<!\w[Bb])(?:earer|EARER|asic|ASIC)[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)(?![\w\-.~+/=])", a
        )
        self.url_credentials = re.compile(r"://[^\s/:@]{0,64}:([^\s/@]{1,128})@")
        self.key_word = re.compile(r"(?:key|secret|pass(?:word|wd|phrase)?|pwd|token)[\"']?[ \t]*[=:]")
        self.key_word_any_case = re.compile(self.key_word.pattern, re.IGNORECASE)
        self.assignment = re.compile(
            # an environment-style upper-case name ending in _KEY or _PASS (STRIPE_KEY, DB_PASS) says secret too;
            # lower-case sort_key/dict_key in code does not
            rf"(?i)(?P<key>(?-i:[A-Z0-9]+(?:_[A-Z0-9]+)*_(?:KEY|PASS))|(?:[a-z0-9]+[_.-]){{0,6}}(?:{_SECRET_KEY_NAMES}))"
            r"(?![\w-])[\"']?"
            r"(?P<sep>[ \t]*(?:=>|:=|=|:)[ \t]*)"
            r"(?:\"(?P<dq>[^\"\r\n]{1,256})\"|'(?P<sq>[^'\r\n]{1,256})'"
            rf"|(?P<bare>[^\s\"'`,;(){{}}\[\]<>{cjk}]{{1,256}}))"
        )
        self.identifier = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?", a)
        self.word_pieces = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
        self.path_segment = re.compile(r"[A-Za-z][a-z0-9._\-~]*|[a-z0-9._\-~]+|[A-Z0-9_.\-]+|\.{1,2}|~")
        self.redacted = re.compile(r"[*xX•.\-_#?]+")
        self.gate = re.compile(_gate_pattern())


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


class SecretDetector:
    def __init__(self, rules=None) -> None:
        self.p = _patterns()

    def find(self, text: str, _: list) -> Iterator[tuple[int, int]]:
        p = self.p
        if not p.gate.search(text):
            return  # no family's hint and no key word: nothing below can match
        if "PRIVATE KEY" in text:
            for m in p.pem_full.finditer(text):
                yield m.span()
            for m in p.pem_open.finditer(text):
                yield m.span()
        if any(hint in text for hint in _TOKEN_HINTS):
            for m in p.tokens.finditer(text):
                yield m.span()
        for hint, offset in _VENDOR_HINTS:
            for i in find_all(text, hint):
                vendor = p.vendor.match(text, max(0, i + offset))
                if vendor and not (vendor.group().startswith("sk-") and not _mixed(vendor.group())):
                    yield vendor.span()  # not sk-learn-user-guide-chapters: a key is random (digits, both cases)
        for i in find_all(text, _SLACK_HOOK):
            hook = p.slack_webhook.match(text, i + len(_SLACK_HOOK))
            if hook:
                yield hook.span()
        if "earer" in text or "asic" in text or "EARER" in text or "ASIC" in text:
            for m in p.auth_header.finditer(text):
                if any(ch.isdigit() for ch in m.group(1)):  # "basic understanding" is prose
                    start, end = m.span(1)
                    if end == len(text) or text[end].isspace():
                        while text[end - 1] == ".":
                            end -= 1  # the full stop of the sentence
                    yield start, end
        for i in find_all(text, "://"):
            credentials = p.url_credentials.match(text, i)
            if credentials and self._literal_secret(credentials.group(1)):
                yield credentials.span(1)
        yield from self._find_assignments(text)

    def _find_assignments(self, text: str) -> Iterator[tuple[int, int]]:
        lower = text.lower()
        if not any(word in lower for word in _KEY_WORDS):
            return
        # lower() can change the length (a few rare letters): then search the text itself, ignoring case
        same_length = len(lower) == len(text)
        hits = self.p.key_word.finditer(lower) if same_length else self.p.key_word_any_case.finditer(text)
        for hit in hits:
            start = hit.start()
            while start and text[start - 1] in _IDENT_CHARS and hit.start() - start < 64:
                start -= 1
            while text[start] in "-._":  # --password=…, .secret: …
                start += 1
            m = self.p.assignment.match(text, start)
            if m:
                span = self._assignment_value_span(text, m)
                if span:
                    yield span

    def _assignment_value_span(self, text: str, m: re.Match) -> tuple[int, int] | None:
        """Accept the value of ``key = value`` only when it looks like a literal credential."""
        for group in ("dq", "sq"):
            value = m.group(group)
            if value is not None:
                return m.span(group) if self._literal_secret(value) else None
        value = m.group("bare").rstrip(".")  # a full stop ends the sentence, not the value
        if not self._literal_secret(value) or len(value) < 4:
            return None
        if value.isalpha() and value.isupper() and text[max(0, m.start() - 2) : m.start()] == "--":
            return None  # a usage line's metavariable: --passwd=FILE
        if value.count(":") >= 2 and all(part.isidentifier() for part in value.split(":")):
            return None  # a list of field names: passwd:UID:GID:GECOS:directory:shell
        if value.startswith(_PATH_PREFIXES) and self._path_like(value):
            return None  # PWD=/home/user; a random value that starts with "/" is still a secret
        if self.p.identifier.fullmatch(value) and not self._random_looking(value):
            # a name, not a literal: ``password = user_password`` in code, ``the secret: patience`` in prose;
            # only ``KEY=value`` (env files, query strings) and ``key: value`` config lines count
            sep = m.group("sep")
            line_start = text.rfind("\n", 0, m.start()) + 1
            prefix = text[line_start : m.start()].strip(" \t\"'-")
            line_end = text.find("\n", m.end())
            rest = text[m.end() : line_end if line_end != -1 else len(text)].strip()
            # "get_cache_token: Returns the current …" is a docstring line, not a YAML value
            config_line = prefix in ("", "export") and sep.strip() == ":" and (not rest or rest[0] == "#")
            # KEY=value in an env file or shell line, ?password=…&, --password=…; not f(password=name)
            env_line = sep == "=" and (prefix in ("", "export") or text[m.start() - 1 : m.start()] in ("?", "&", "-"))
            called = text[m.end("bare") : m.end("bare") + 1] == "("
            # "secret = hunter2hunter" alone on its line (INI, properties, .conf files): a literal with a digit;
            # "password = user_password" in code is a name (no digit), and stays
            ini_line = (
                prefix in ("", "export")
                and sep.strip() == "="
                and (not rest or rest[0] in "#;")
                and any(ch.isdigit() for ch in value)
            )
            if "." in value or called or not (env_line or config_line or ini_line):
                return None
        elif value.isdigit() and len(value) < 6:
            return None  # max_token: 4096
        start = m.start("bare")
        return start, start + len(value)

    def _random_looking(self, value: str) -> bool:
        """A run of letters and digits with no word structure (``wJalrXUtnFEMIK7MDENG``, hex), not a name.

        Names split into few long pieces (``userPassword`` → user, Password); random alphanumerics into many
        short ones (measured on 40-character base62 values: ~2 characters per piece; names: ≥ 4).
        """
        if len(value) < 12 or "_" in value or "." in value:
            return False
        return len(value) < 3.5 * len(self.p.word_pieces.findall(value))

    def _path_like(self, value: str) -> bool:
        """``/home/user``, ``./config/db.yaml``: every segment reads as a file or folder name."""
        segments = [s for s in value.split("/") if s]
        return all(self.p.path_segment.fullmatch(s) for s in segments)

    def _literal_secret(self, value: str) -> bool:
        v = value.strip()
        if len(v) < 4 or v.lower() in _NOT_SECRET_VALUES or v.startswith(_PLACEHOLDER_PREFIXES):
            return False
        if v.endswith(("]", ">", "}")) and not any(ch.isdigit() for ch in v):
            return False  # a template's field: scheme://[[user][:Passwort]@]host, <password>, {token}
        return not self.p.redacted.fullmatch(v)  # already masked: ****, xxxx
