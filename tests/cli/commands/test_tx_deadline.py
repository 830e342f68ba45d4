"""After a send that timed out, the person is told until when it can land: `yield tx status` of the
pending signature and the refusal of the next send both name the block height and about how long,
through `yield` against the sandbox served over loopback (its RPC holds the transaction pending)."""

import re

from tests.conftest import usdc_position

DEPOSIT = ("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
DEADLINE = re.compile(r"until block height ([\d,]+) \(about (\d+) s from now\)")


def test_a_pending_send_says_until_which_block_height_it_can_land(chain, sandbox):
    before = usdc_position(chain)
    sandbox.runtime.set_fault("pending", count=1)
    timed_out = chain(*DEPOSIT, "--confirm-timeout", "1", "-o", "json")
    assert timed_out.code == 8, timed_out.stderr
    signature = timed_out.json()["signature"]
    assert "still pending after the timeout (seen: not yet); it can land until block height " in timed_out.stderr

    status = chain("tx", "status", signature, "-o", "json")
    assert status.code == 8, status.stderr
    body = status.json()
    last_valid = body["last_valid_block_height"]
    assert body["status"] == "pending" and 0 < body["block_height"] <= last_valid
    found = DEADLINE.search(status.stderr)
    assert found and int(found.group(1).replace(",", "")) == last_valid, status.stderr
    assert 0 < int(found.group(2)) <= 70  # 150 blocks of 400 ms at most

    refused = chain(*DEPOSIT)
    assert refused.code == 8 and signature in refused.stderr
    found = DEADLINE.search(refused.stderr)
    assert found and int(found.group(1).replace(",", "")) == last_valid, refused.stderr

    sandbox.runtime.set_fault("clear")
    sandbox.runtime.release_pending()
    assert chain("tx", "status", signature).code == 0
    assert usdc_position(chain) == before + 1_000_000
