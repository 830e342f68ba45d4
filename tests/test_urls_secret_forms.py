"""A secret a hostile server writes back in any of the forms the manual names (as it is, percent-encoded,
base64, hex) is scrubbed wherever it stands: base64 taken at any byte offset of a longer text (HTTP
Basic's `user:KEY`, `k=KEY`) and every byte percent-encoded included."""

from __future__ import annotations

import base64

import pytest

from yieldcli.urls import scrub

KEY = "testkey123-5f1d0c9a"
URL = "http://127.0.0.1:8899/v1/rpcsecret99?api-key=rpcsecret99"


def _b64(data: bytes) -> list[str]:
    return [base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()]


@pytest.mark.parametrize("prefix", [b"", b"k", b"k=", b"user:", b"xyz:", b"p:/"])
@pytest.mark.parametrize("secret", [KEY, "rpcsecret99", "/work/keys/wallet.json"])
def test_base64_at_any_offset_leaves_nothing_of_the_secret(prefix, secret):
    for encoded in _b64(prefix + secret.encode() + b"!tail"):
        shown = scrub(f"error: {encoded} was refused", URL, KEY, "/work/keys/wallet.json")
        assert encoded not in shown
        # What is left of the encoded text decodes to no more than a few bits at its edges.
        for piece in shown.split():
            assert secret.encode() not in _decoded(piece), (encoded, shown)


def _decoded(text: str) -> bytes:
    cleaned = text.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4))
    except ValueError:
        return b""


@pytest.mark.parametrize("secret", [KEY, "rpcsecret99"])
def test_every_byte_percent_encoded_and_hex_are_scrubbed(secret):
    for form in (
        "".join(f"%{b:02X}" for b in secret.encode()),
        "".join(f"%{b:02x}" for b in secret.encode()),
        secret.encode().hex(),
        secret.encode().hex().upper(),
    ):
        assert form not in scrub(f"bad request: {form}", URL, KEY)


@pytest.mark.parametrize(
    "echo",
    [
        KEY.upper(),
        "".join(f"\\u{ord(c):04x}" for c in KEY),
        "".join(f"&#{ord(c)};" for c in KEY),
        "".join(f"&#x{ord(c):x};" for c in KEY),
        KEY.encode().hex(":"),
        "RPCSECRET99",
    ],
    ids=["upper-cased", "json-escaped", "html-entities", "html-hex-entities", "hex-with-colons", "url-part-upper"],
)
def test_a_secret_echoed_in_another_case_or_escaped_is_scrubbed(echo):
    assert echo.lower() not in scrub(f"error: {echo}", URL, KEY).lower()
