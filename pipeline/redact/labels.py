"""Context shared by the phone and card detectors: an id or barcode label before a number (``Order no.``,
``EAN:``, ``订单号``) makes it an id, and the start of an IBAN before it makes it a mistyped IBAN."""

from __future__ import annotations

import re
from functools import lru_cache

# labels of ids, codes and barcodes: a number right after one is not a phone or a card
ID_WORDS = (
    r"isbn(?:-?1[03])?|issn|ean(?:-?(?:8|13))?|gtin(?:-?1[234])?|upc(?:-?a)?|jan|sscc|barcode|sku|asin|mpn"
    r"|order|invoice|ref|reference|record|serial|s/n|sn|tracking|track|shipment|parcel|consignment"
    r"|transaction|txn|trace|request|req|span|session|job|build|item|article|art|part|model|patent"
    r"|receipt|ticket|case|account|acct|customer|member|policy|contract|doi|po|id|ids|no|nr|num|number"
    r"|entry|entries|catalogue|catalog|registry|register|folio|accession|batch"
    r"|bestell\w*|rechnung\w*|kunden\w*|auftrag\w*|artikel\w*|vertrag\w*|sendung\w*"
    r"|eintrag\w*|katalog\w*|register\w*|entr[ée]e|registro|entrada|cat[áa]logo|catalogo|registre"
    r"|commande|facture|r[ée]f[ée]rence|colis|pedido|factura|referencia|n[°º]"
)
ID_WORDS_CJK = (
    r"订单号?|運單號?|运单号?|快递单号|单号|編號|编号|注文番号|伝票番号|追跡番号|お問い合わせ番号|주문번호|송장번호"
)
# "number", "no." alone: after a phone word they belong to the phone (Phone number 030 …)
GENERIC_NUMBER_WORDS = frozenset({"no", "nr", "num", "number", "id", "n°", "nº"})
# on the number's own line: "… the current user account.\n\n2201…" ends a sentence, it labels nothing
_LABEL_SEPARATORS = frozenset(" \t.:：#=\"'-/")
# where a label can start in a lower-cased ASCII window (see ``id_label_before``)
_LABEL_STARTS = re.compile(r"(?<![a-z])[a-z]|#")


# a label ends right before the number (``$``), after separators and an optional "no."/"nr." (every literal in
# lower case: the case-sensitive copy below relies on it)
_ID_LABEL = (
    rf"(?:(?<![^\W\d_])(?P<label>{ID_WORDS})(?:[_\-](?:id|no|nr|num|number|code))?(?![^\W\d_])"
    rf"|{ID_WORDS_CJK})[ \t.:：#=\"'\-/]*(?:(?:no|nr|num|number|id|code|de)(?![^\W\d_])[ \t.:#=\"'\-]*)?"
    r"[ \t.:：#=\"'\-]*$|#[ \t]*$"
)


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    id_label = re.compile(f"(?i){_ID_LABEL}")
    # the same, case-sensitive, for an ASCII window written in lower case: on ASCII text that is what
    # ``(?i)`` matches (its other case-insensitive matches, "K" for "k", "ſ" for "s", are not ASCII), and the
    # literals of a case-sensitive alternation are skipped on their first character — 2x faster per label
    id_label_lower = re.compile(_ID_LABEL)
    # the start of an IBAN-shaped string right before a number: a mistyped IBAN is not a phone or a card
    iban_prefix = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){0,8} ?$")
    return id_label, iban_prefix, id_label_lower


def id_label_before(text: str, start: int) -> str | None:
    """The id, order, tracking or barcode label that ends right before ``start`` (``Order no. ``, ``EAN:``), in lower
    case (``""`` for ``#`` and the CJK labels), or None."""
    low = max(0, start - 40)
    i = start
    while i > low and text[i - 1] in _LABEL_SEPARATORS:
        i -= 1
    # cheap gate: a label ends in a letter (or is "#"); most numbers follow a digit, a bracket, a comma
    if i == low or not (text[i - 1].isalpha() or "#" in text[i:start]):
        return None
    before = max(0, low - 1)  # the character before the window: the label's lookbehind reads it
    window = text[before:start]
    if window.isascii():
        # a match starts on a letter with none before it (the label's first branch) or on "#" (the last): tried
        # there, in order, it is what ``search`` finds (which tries every position), in a third of the time
        lowered, match = window.lower(), _patterns()[2].match
        for at in _LABEL_STARTS.finditer(lowered, low - before):
            m = match(lowered, at.start())
            if m is not None:
                return m.group("label") or ""
        return None
    m = _patterns()[0].search(text, low, start)
    return None if m is None else (m.group("label") or "").lower()


def after_iban_prefix(text: str, start: int) -> bool:
    return start > 5 and text[start - 1] == " " and bool(_patterns()[1].search(text, max(0, start - 48), start))
