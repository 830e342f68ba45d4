"""Properties of what users type and hand us: amounts, whole numbers, seconds, transaction bytes.

Hypothesis explores the inputs; example counts are bounded so the suite stays fast, and no example
database is written (the runs are reproducible from the printed seed).
"""

from __future__ import annotations

import base64
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli import numbers
from yieldcli.amounts import U64_MAX, Amount, format_units
from yieldcli.chain.tx.decode import PACKET_DATA_SIZE, UndecodableTransaction, decode_transaction
from yieldcli.errors import UsageError
from yieldcli.urls import check_http_url, redact_url, scrub

FAST = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# SPL mints declare 0..255 decimals in a u8; every token we know has at most 18 (9 for SOL).
DECIMALS = st.integers(min_value=0, max_value=18)
RAW = st.integers(min_value=1, max_value=U64_MAX)
# Unicode decimal digits that are not ASCII: Arabic-Indic, fullwidth, mathematical bold, Devanagari...
NON_ASCII_DIGIT = st.characters(whitelist_categories=("Nd",)).filter(lambda ch: not "0" <= ch <= "9")


def plain(raw: int, decimals: int) -> str:
    """Token units as a user would type them: no grouping, no exponent."""
    return format(Amount(raw, decimals).to_decimal(), "f")


# --- amounts -------------------------------------------------------------------------------------


@FAST
@given(raw=RAW, decimals=DECIMALS)
@example(raw=1, decimals=18)
@example(raw=U64_MAX, decimals=0)
@example(raw=U64_MAX, decimals=18)
def test_an_amount_round_trips_through_its_text(raw, decimals):
    assert Amount.parse(plain(raw, decimals), decimals) == Amount(raw, decimals)
    # What tables show (grouped thousands, trailing zeros trimmed) parses back once ungrouped.
    assert Amount.parse(format_units(raw, decimals).replace(",", ""), decimals).raw == raw
    assert Amount.parse_raw(str(raw), decimals).raw == raw


@FAST
@given(whole=st.integers(min_value=0, max_value=10**20), fraction=st.text("0123456789", max_size=18), decimals=DECIMALS)
def test_parsing_is_exact_decimal_scaling(whole, fraction, decimals):
    text = f"{whole}.{fraction}" if fraction else str(whole)
    expected = Decimal(text).scaleb(decimals)
    try:
        amount = Amount.parse(text, decimals)
    except UsageError:
        # Refused only for a reason: too many fraction digits, zero, or past u64.
        assert len(fraction) > decimals or expected == 0 or expected > U64_MAX
        return
    assert Decimal(amount.raw) == expected and isinstance(amount.raw, int)


@pytest.mark.parametrize("decimals", range(19))
def test_u64_boundaries_for_every_decimals_value(decimals):
    assert Amount.parse(plain(U64_MAX, decimals), decimals).raw == U64_MAX
    over = format((Decimal(U64_MAX) + 1).scaleb(-decimals), "f")
    with pytest.raises(UsageError, match="u64"):
        Amount.parse(over, decimals)
    assert Amount.parse_raw(str(U64_MAX), decimals).raw == U64_MAX
    with pytest.raises(UsageError, match="u64"):
        Amount.parse_raw(str(U64_MAX + 1), decimals)


def test_thousands_of_digits_never_reach_int():
    # int() refuses more than 4300 digits with a ValueError of its own: too many digits are
    # refused first, and leading zeros do not count.
    for text in ("9" * 5000, "1." + "0" * 5000):
        with pytest.raises(UsageError) as info:
            Amount.parse(text, 6)
        assert len(info.value.message) < 200
    with pytest.raises(UsageError, match="u64"):
        Amount.parse_raw("9" * 5000, 6)
    assert Amount.parse("0" * 5000 + "1", 6).raw == 10**6
    assert Amount.parse_raw("0" * 5000 + "7", 6).raw == 7
    assert numbers.parse_whole("0" * 5000 + "3", name="--page", maximum=10) == 3


@FAST
@given(
    prefix=st.text("0123456789", max_size=3),
    digit=NON_ASCII_DIGIT,
    suffix=st.text("0123456789.", max_size=3),
    decimals=DECIMALS,
)
@example(prefix="", digit="١", suffix="", decimals=6)
@example(prefix="1", digit="０", suffix="", decimals=6)
@example(prefix="", digit="𝟏", suffix="", decimals=6)
def test_non_ascii_digits_are_refused_everywhere(prefix, digit, suffix, decimals):
    text = prefix + digit + suffix
    assert int(digit) in range(10)  # Python would read it as a number: the hazard is real
    for parse in (
        lambda: Amount.parse(text, decimals),
        lambda: Amount.parse_raw(text, decimals),
        lambda: Amount.check_syntax(text, raw=False),
        lambda: Amount.check_syntax(text, raw=True),
        lambda: numbers.parse_whole(text, name="--page", maximum=2**31 - 1),
        lambda: numbers.parse_seconds(text, name="--timeout"),
    ):
        with pytest.raises(UsageError):
            parse()


@FAST
@given(text=st.text(max_size=40), decimals=DECIMALS)
@example(text="nan", decimals=6)
@example(text="1_000", decimals=6)
@example(text="+1", decimals=6)
@example(text="1e3", decimals=6)
@example(text="\u00a01", decimals=6)
def test_any_text_is_an_amount_or_a_usage_error(text, decimals):
    try:
        amount = Amount.parse(text, decimals)
    except UsageError:
        return
    # Whatever was accepted is plain ASCII decimal text, and means exactly what it says.
    assert set(text.strip(" \t\r\n")) <= set("0123456789.")
    assert Decimal(amount.raw) == Decimal(text.strip()).scaleb(decimals)


@FAST
@given(text=st.text(max_size=20))
def test_whole_numbers_and_seconds_accept_only_plain_ascii(text):
    stripped = text.strip(" \t\r\n")
    try:
        value = numbers.parse_whole(text, name="--limit", maximum=2**31 - 1)
    except UsageError:
        pass
    else:
        assert set(stripped) <= set("0123456789") and value == int(stripped)
    try:
        seconds = numbers.parse_seconds(text, name="--timeout")
    except UsageError:
        pass
    else:
        assert set(stripped) <= set("0123456789.") and 0 < seconds <= numbers.MAX_SECONDS


# --- URLs -----------------------------------------------------------------------------------------

SECRET = st.text(st.characters(min_codepoint=0x30, max_codepoint=0x7A).filter(str.isalnum), min_size=8, max_size=20)


@FAST
@given(text=st.text(max_size=120))
@example(text="http://127.0.0.1:99999")
@example(text="http://[::1")
@example(text="https://" + "a" * 300 + ".com")
@example(text="http://\x00/")
def test_any_text_as_a_url_is_accepted_or_a_usage_error(text):
    shown = redact_url(text)  # never raises
    assert all(ch.isprintable() for ch in shown)
    try:
        parts = check_http_url(text, "RPC URL")
    except UsageError as exc:
        assert "\n" not in exc.message
        return
    assert parts.scheme in ("http", "https") and parts.hostname and 0 < (parts.port or 80) <= 65535


@FAST
@given(
    secret=SECRET,
    query_name=st.sampled_from(["api_key", "api-key", "token", "key"]),
    host=st.sampled_from(["127.0.0.1:8899", "rpc.example.com", "[::1]:80", "xn--bcher-kva.example"]),
)
def test_credentials_in_a_url_never_survive_redaction(secret, query_name, host):
    for url in (
        f"https://user:{secret}@{host}/",
        f"https://{host}/?{query_name}={secret}",
        f"https://{host}/v2/{secret}",
        f"https://{secret}@{host}",
        f"https://{host}?{query_name}={secret}#frag",
    ):
        shown = redact_url(url)
        assert secret not in shown and shown.startswith("https://")
        assert secret not in scrub(f"Not found: GET {url.split(host, 1)[1]}/health", url)


# --- transactions --------------------------------------------------------------------------------


def a_real_transaction() -> bytes:
    payer, to = Keypair(), Keypair()
    ix = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=to.pubkey(), lamports=1))
    message = Message.new_with_blockhash([ix], payer.pubkey(), Hash.default())
    return bytes(VersionedTransaction(message, [payer]))


REAL = a_real_transaction()


def decodes_or_refuses(text: str | bytes) -> None:
    """decode_transaction either returns a transaction or raises our own error: nothing else."""
    try:
        tx = decode_transaction(text)
    except UndecodableTransaction as exc:
        assert exc.exit_code == 2 and exc.message
        return
    assert len(bytes(tx)) <= PACKET_DATA_SIZE


def test_the_real_transaction_decodes():
    assert bytes(decode_transaction(base64.b64encode(REAL).decode())) == REAL


@FAST
@given(data=st.binary(max_size=PACKET_DATA_SIZE + 64))
def test_arbitrary_bytes_never_raise_anything_but_our_error(data):
    decodes_or_refuses(base64.b64encode(data).decode())
    decodes_or_refuses(data)  # bytes handed over as they are, not base64


@FAST
@given(
    edits=st.lists(
        st.tuples(st.integers(min_value=0, max_value=len(REAL) - 1), st.integers(0, 255)), min_size=1, max_size=6
    ),
    cut=st.integers(min_value=0, max_value=len(REAL)),
    tail=st.binary(max_size=8),
)
def test_damaged_real_transactions_never_raise_anything_but_our_error(edits, cut, tail):
    # Random bytes rarely get past the first length prefix; damage to a real transaction reaches
    # the message header, the account keys and the instructions.
    data = bytearray(REAL)
    for position, value in edits:
        data[position] = value
    decodes_or_refuses(base64.b64encode(bytes(data[:cut]) + tail).decode())


@FAST
@given(text=st.text(max_size=200))
def test_arbitrary_text_never_raises_anything_but_our_error(text):
    assume(text.strip())
    decodes_or_refuses(text)
