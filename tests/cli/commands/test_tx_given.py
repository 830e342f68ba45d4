"""`yield tx` with a transaction that carries every signature it needs, through `yield` against the
sandbox served over loopback: sent as it is with no intent to state, refused when a signature does
not verify, and inspected after it landed as landed, with its slot."""

import base64
import json

from tests.conftest import usdc_position

UNIT = 1_000_000  # 1 USDC in base units


def signed_deposit(chain, tmp_path, name="signed.json"):
    made = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json")
    assert made.code == 0, made.stderr
    path = tmp_path / name
    path.write_text(made.stdout)
    return path


def test_a_fully_signed_transaction_is_sent_with_no_intent_to_state(chain, tmp_path):
    before = usdc_position(chain)
    path = signed_deposit(chain, tmp_path)
    sent = chain("tx", "send", str(path), "--yes", "-o", "json")
    assert sent.code == 0, sent.stderr
    body = sent.json()
    assert body["status"] == "confirmed" and body["nothing_to_sign"] is True and body["slot"] > 0
    assert body["transaction"] == json.loads(path.read_text())["transaction"]  # the very bytes: nothing re-signed
    assert body["review"]["signers"][0]["signed"] is True  # the review is still there
    assert body["explorer"] is None  # a local cluster: no public explorer link
    assert usdc_position(chain) == before + UNIT


def test_the_review_of_a_transaction_signed_by_all_says_what_it_does_with_no_cross(chain, tmp_path):
    # Nothing of the user's is signed and no intent is stated: what it does is said, never held against it.
    path = signed_deposit(chain, tmp_path)
    sent = chain("tx", "send", str(path), "--yes", "-o", "table", env={"COLUMNS": "80"})
    assert sent.code == 0, sent.stderr
    assert "✗" not in sent.stdout and "does NOT match" not in sent.stdout, sent.stdout
    assert "every signature is there already" in sent.stdout and "• the strategy's deposit" in sent.stdout
    path = signed_deposit(chain, tmp_path, "second.json")
    checked = chain("tx", "send", str(path), "--yes", "--expect", "deposit:USDC:1", "-o", "table")
    assert checked.code == 0 and "matches your request" in checked.stdout and "✗" not in checked.stdout


def test_a_stated_intent_still_holds_when_nothing_is_signed(chain, tmp_path):
    before = usdc_position(chain)
    path = signed_deposit(chain, tmp_path)
    refused = chain("tx", "send", str(path), "--yes", "--expect", "withdraw:USDC:1", "-o", "json")
    assert refused.code == 10 and refused.json()["status"] == "refused", refused.stderr
    assert usdc_position(chain) == before


def test_a_signature_that_does_not_verify_is_refused_and_nothing_is_sent(chain, tmp_path):
    before = usdc_position(chain)
    path = signed_deposit(chain, tmp_path)
    body = json.loads(path.read_text())
    raw = bytearray(base64.b64decode(body["transaction"]))
    raw[5] ^= 1  # a bit of the fee payer's signature
    path.write_text(json.dumps({**body, "transaction": base64.b64encode(bytes(raw)).decode()}))
    refused = chain("tx", "send", str(path), "--yes", "-o", "json")
    assert refused.code == 10, refused.stderr
    assert "does not verify against this transaction" in refused.stderr
    shown = refused.json()  # scripts still get the review
    assert shown["status"] == "refused" and shown["review"]["signers"][0]["invalid"] is True
    assert usdc_position(chain) == before


def test_inspecting_a_signed_transaction_says_signed_and_after_it_landed_says_landed_with_its_slot(chain, tmp_path):
    path = signed_deposit(chain, tmp_path)
    before = chain("tx", "inspect", str(path), "-o", "json")
    assert before.code == 0, before.stderr
    assert before.json()["status"] == "signed" and before.json()["simulation"]["ok"] is True
    sent = chain("tx", "send", str(path), "--yes", "-o", "json")
    assert sent.code == 0, sent.stderr
    after = chain("tx", "inspect", str(path), "-o", "json")
    assert after.code == 0, after.stderr
    body = after.json()
    assert body["status"] in ("confirmed", "finalized") and body["slot"] == sent.json()["slot"]
    assert body["signature"] == sent.json()["signature"] and body["simulation"] is None
    assert "AlreadyProcessed" not in after.stderr
