"""The formats a finance team meets (issue 21 item 2), one case each: what must be replaced, and the look-alikes
that must not be. Every expected span is the value itself, with its type's placeholder."""

from __future__ import annotations

import pytest

from pipeline.redact import PIIRedactor, luhn_valid

# Luhn-valid, outside every brand's issuer range (prefixes 1 and 8 are no card brand's)
NO_BRAND_16 = "1234567890123452"
NO_BRAND_12 = "812345678906"


@pytest.fixture(scope="module")
def redactor() -> PIIRedactor:
    return PIIRedactor()


def spans(redactor: PIIRedactor, text: str) -> list[tuple[str, str]]:
    return [(text[s:e], kind) for s, e, kind in redactor.find(text)]


def test_the_no_brand_numbers_are_luhn_valid() -> None:
    assert luhn_valid(NO_BRAND_16) and luhn_valid(NO_BRAND_12)


@pytest.mark.parametrize(
    "text",
    [
        f"Pay with card {NO_BRAND_16} today.",
        f"card: {NO_BRAND_12}",
        f"Kreditkarte {NO_BRAND_16}",  # de
        f"numéro de carte {NO_BRAND_16}",  # fr
        f"tarjeta {NO_BRAND_16}",  # es
        f"cartão {NO_BRAND_16}",  # pt
        f"номер карты {NO_BRAND_16}",  # ru
        f"kredi kartı {NO_BRAND_16}",  # tr
        f"kortin numero {NO_BRAND_16}",  # fi
        f"numer karty {NO_BRAND_16}",  # pl
        f"信用卡 {NO_BRAND_16}",  # zh
        f"カード番号 {NO_BRAND_16}",  # ja
    ],
)
def test_a_luhn_valid_number_next_to_a_card_word_is_a_card_whatever_its_prefix(redactor, text) -> None:
    assert spans(redactor, text) == [(NO_BRAND_16 if NO_BRAND_16 in text else NO_BRAND_12, "card")]


@pytest.mark.parametrize(
    "text",
    [
        f"Reference {NO_BRAND_16} was filed.",  # bare, outside the brand table: an id
        f"value {NO_BRAND_16}",
        "Catalogue entry 378282246310005 (15 digits, Luhn-valid, an Amex prefix)",
        "Record 4111111111111111 of the archive",
        "entry no. 4111 1111 1111 1111",
    ],
)
def test_a_bare_no_brand_number_or_one_after_an_id_label_is_not_a_card(redactor, text) -> None:
    assert spans(redactor, text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Card 4111.1111.1111.1111 on file", "4111.1111.1111.1111"),
        ("card number 4111 1111\n1111 1111 expires", "4111 1111\n1111 1111"),
        ("Visa 4111-1111-1111\n1111 ok", "4111-1111-1111\n1111"),
    ],
)
def test_dotted_and_line_split_cards(redactor, text, value) -> None:
    assert spans(redactor, text) == [(value, "card")]


def test_dotted_runs_that_are_not_cards_stay(redactor) -> None:
    for text in ("version 4111.1111.1111.1111.2", "OID 1.3.6.1.4.1.311.21.8", "4111.111.1111.1111"):
        assert [k for _, k in spans(redactor, text)] != ["card"], text


@pytest.mark.parametrize("text", ["SSN 123 45 6789.", "social security number: 123-45-6789", "SSN:123 45 6789"])
def test_ssns_with_dashes_or_spaces(redactor, text) -> None:
    value = "123 45 6789" if "123 45" in text else "123-45-6789"
    assert spans(redactor, text) == [(value, "ssn")]


def test_ssn_look_alikes_stay(redactor) -> None:
    for text in ("123 45-6789", "000 12 3456", "table 123 45 6789 12", "666 12 3456"):
        assert [k for _, k in spans(redactor, text)] != ["ssn"], text


@pytest.mark.parametrize(
    "value",
    [
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "rk_live_51H8abcDEFghiJKLmnoPQRstuv",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "sk-" + "a1B2c3D4e5" * 4 + "f6G7h8I9",  # OpenAI, old style: sk- and 48 characters
        "sk-proj-abcDEF123456ghiJKL789mnoPQR_stu-vwx",
        "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",
    ],
)
def test_secret_families(redactor, value) -> None:
    assert spans(redactor, f"the key is {value} here") == [(value, "secret")]


def test_slack_webhook_token_path(redactor) -> None:
    url = "https://hooks.slack.com/services/T0ABC1234/B0DEF5678/abcdefghijklmnopqrstuvwx"
    assert spans(redactor, f"POST to {url} now") == [("T0ABC1234/B0DEF5678/abcdefghijklmnopqrstuvwx", "secret")]


def test_secret_family_look_alikes_stay(redactor) -> None:
    for text in ("pip install sk-learn-user-guide-chapters", "see sk_live_ in the docs", "SG.1 is a section"):
        assert spans(redactor, text) == [], text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("export API_TOKEN=ab12cd34ef56", "ab12cd34ef56"),
        ("export STRIPE_KEY=whatever123", "whatever123"),
        ("export DB_PASS=s3cr3t!", "s3cr3t!"),
        ("api_key = zq8Kp2Lm9Xw4", "zq8Kp2Lm9Xw4"),
        ("[db]\nsecret = hunter2hunter\n", "hunter2hunter"),
        ("auth_token: abc123def456", "abc123def456"),
    ],
)
def test_generic_assignments(redactor, text, value) -> None:
    assert spans(redactor, text) == [(value, "secret")]


def test_assignment_look_alikes_stay(redactor) -> None:
    for text in ('sort_key = "name"', "password = user_password\n", "export PATH=/usr/bin", "key = value"):
        assert spans(redactor, text) == [], text


@pytest.mark.parametrize(
    "value", ["de89 3704 0044 0532 0130 00", "de89370400440532013000", "gb82 west 1234 5698 7654 32"]
)
def test_lower_case_ibans(redactor, value) -> None:
    assert spans(redactor, f"IBAN: {value}.") == [(value, "iban")]


def test_mixed_case_iban_shapes_stay(redactor) -> None:
    assert spans(redactor, "De89370400440532013000") == []


# one national number per country of the 20 most populous, as that country writes it, with no cue word
NATIONAL = [
    ("IN", "call 081234 56789 now"),
    ("CN", "号码 131 2345 6789 谢谢"),
    ("US", "reach (201) 555-0123 today"),
    ("ID", "hubungi 0812-345-678 segera"),
    ("PK", "at 0301 2345678 please"),
    ("NG", "on 0802 123 4567 now"),
    ("BR", "Ligue (11) 96123-4567 hoje"),
    ("BD", "at 01812-345678 now"),
    ("RU", "звоните 8 (912) 345-67-89 сейчас"),
    ("ET", "at 091 123 4567 now"),
    ("MX", "llame 222 123 4567 hoy"),
    ("JP", "東京 03-1234-5678 まで"),
    ("EG", "at 010 01234567 now"),
    ("PH", "at 0905 123 4567 now"),
    ("CD", "at 0991 234 567 now"),
    ("VN", "gọi 0912 345 678 ngay"),
    ("IR", "at 0912 345 6789 now"),
    ("TR", "arayın 0501 234 56 78 şimdi"),
    ("DE", "erreichbar unter 030 123456 ab"),
    ("TH", "โทร 081 234 5678 ค่ะ"),
]


@pytest.mark.parametrize(("country", "text"), NATIONAL, ids=[c for c, _ in NATIONAL])
def test_national_phone_formats_without_a_cue_word(redactor, country, text) -> None:
    found = spans(redactor, text)
    assert len(found) == 1 and found[0][1] == "phone", (country, found)
    assert text.replace(found[0][0], "") == text.replace(found[0][0], "")  # one value
    assert found[0][0][0].isdigit() or found[0][0][0] in "(8"


def test_brazil_mobile_without_a_cue(redactor) -> None:
    assert spans(redactor, "Atendimento: (11) 91234-5678.") == [("(11) 91234-5678", "phone")]
    assert spans(redactor, "(21) 98765-4321") == [("(21) 98765-4321", "phone")]


@pytest.mark.parametrize(
    ("text", "value"),
    [("Telefon: 3012345678", "3012345678"), ("tel 98765 43210", "98765 43210"), ("phone 5551234567", "5551234567")],
)
def test_national_numbers_after_a_cue_word_in_any_grouping(redactor, text, value) -> None:
    assert spans(redactor, text) == [(value, "phone")]


@pytest.mark.parametrize(
    "text",
    [
        "Free Software Foundation, Inc., 51 Franklin St, Boston, MA 02110-1301, USA",
        "zip 94105-1234",
        "Copyright (C) 2001-2007 Python Software Foundation",
        "Update from binutils 2003 0523.",
        "RFC 2047/2243 encoded words",
        "at 98765 43210 x",  # 10 digits in two plain groups, no cue: an id as often as an Indian mobile
    ],
)
def test_zip_codes_year_ranges_and_plain_pairs_are_not_phones(redactor, text) -> None:
    assert [k for _, k in spans(redactor, text)] == [], text


@pytest.mark.parametrize(
    "text", ["18.2.2.1. Scope of this section", "  8.8.8.8) the list item", "1.2.3.4. Introduction\nText"]
)
def test_section_numbers_are_not_ips(redactor, text) -> None:
    assert spans(redactor, text) == []


def test_an_address_at_the_end_of_a_sentence_is_still_one(redactor) -> None:
    assert spans(redactor, "The resolver is 8.8.8.8.") == [("8.8.8.8", "ip_address")]


# ---------------------------------------------------------------------------------------------- issue 22 item 5


def test_groff_look_alikes_of_the_placeholders_are_escaped(redactor) -> None:
    """groff renders ``\\[la]…\\[ra]`` as ``⟨…⟩`` (``⟨ESC⟩``, ``⟨http://…⟩``, ``⟨bug-groff@gnu.org⟩``): in the output
    every ``⟨…⟩`` is a replacement, the source's own become ``<…>``; running it again changes nothing."""
    text = "Press ⟨ESC⟩ then ⟨tab⟩; write to ⟨bug-groff@gnu.org⟩, see ⟨http://\n  www.gnu.org/software/groff⟩."
    out, counts = redactor.redact(text)
    assert out == "Press <ESC> then <tab>; write to <⟨EMAIL⟩>, see <http://\n  www.gnu.org/software/groff>."
    assert counts == {"email": 1}
    assert redactor.redact(out) == (out, {})
    assert "⟨" not in out.replace("⟨EMAIL⟩", "")


def test_an_ascii_placeholder_format_leaves_angle_brackets_alone() -> None:
    from pipeline.redact import RedactionRules, placeholders_for

    ascii_style = PIIRedactor(RedactionRules(placeholders=placeholders_for("<{TYPE}>")))
    assert ascii_style.redact("⟨ESC⟩ jane@example.com") == ("⟨ESC⟩ <EMAIL>", {"email": 1})


def test_a_rendered_groff_page_keeps_no_look_alike(redactor) -> None:
    """The groff(1) page as ``man`` renders it on this machine (skipped where groff's page is not installed)."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    page = Path("/usr/share/man/man1/groff.1.gz")
    if not page.is_file() or shutil.which("man") is None:
        pytest.skip("groff(1) or man is not installed on this machine")
    env = {**os.environ, "MANWIDTH": "90", "MANPAGER": "cat", "LANG": "C.UTF-8"}
    rendered = subprocess.run(["man", "-l", str(page)], capture_output=True, env=env, timeout=60, check=False)
    text = rendered.stdout.decode("utf-8", "replace")
    if "⟨" not in text:
        pytest.skip("this groff renders no ⟨…⟩ in groff(1)")
    out, _ = redactor.redact(text)
    leftover = out
    for placeholder in redactor.placeholders.values():
        leftover = leftover.replace(placeholder, "")
    assert "⟨" not in leftover and "⟩" not in leftover


@pytest.mark.parametrize(
    "text",
    [
        "(since dpkg 1.4.1.19)",  # found by benchmarks/pii_real.py in dpkg(1) in nl, pt, sv
        "(sinds dpkg 1.15.5.4). Dit zegt",
        "-P, --passwd=FILE",  # update-passwd(8)
        "account:password:UID:GID:GECOS:directory:shell",  # passwd(5)
        "scheme://[[user][:Passwort]@]host[:port]/",  # apt-transport-http(1), de
        'Proxy "socks5h://apt:pass@127.0.0.1:9050"',
        "BM\t+3217-06446\tAtlantic/Bermuda",  # zone.tab: ISO 6709 coordinates
    ],
)
def test_man_page_look_alikes_found_by_the_real_set_stay(redactor, text) -> None:
    assert spans(redactor, text) == [], text


def test_since_before_an_address_without_a_package_name_is_no_version(redactor) -> None:
    assert spans(redactor, "conexión desde 8.8.8.8 ok") == [("8.8.8.8", "ip_address")]
