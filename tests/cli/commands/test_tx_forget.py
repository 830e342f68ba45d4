"""`yield tx forget`: a record of a chain that is gone (a local validator reset) holds every send, as a
record of a made-up or local cluster must; forgetting it, asked for, frees them, and says what it dropped."""

import json

from tests.cli.commands.test_write_journal import DEPOSIT, UNIT, journal_path
from tests.conftest import usdc_position
from yieldcli.chain.transact.journal import Journal, new_entry
from yieldcli.client.orders import journal_mirror_path
from yieldcli.environment import Environment
from yieldcli.sandbox.demo import DEMO_WALLET

GONE = "3xZ7Lr6qzRbZ8V3oJhWmFQq2pAvuWcKfh8Vfo2GQ2m1r"  # the genesis hash of a local chain since reset
SIGNATURE = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbVbG4qJwsKLyXVvVQm9DhuFGSnvGmtmERz1o8CBhQ4RrS"


def test_a_record_of_a_chain_that_is_gone_holds_sends_until_it_is_forgotten(chain, isolated):
    Journal(journal_path(isolated), journal_mirror_path(Environment())).claim(
        new_entry(SIGNATURE, GONE, 300, "deposit", DEMO_WALLET)
    )
    before = usdc_position(chain)
    held = chain(*DEPOSIT, "-o", "json")
    kind = json.loads(held.stderr.strip().splitlines()[-1])["error"]["kind"]
    assert held.code == 8 and kind == "tx.pending.earlier.cluster_changed", held.stderr
    assert f"yield tx forget {SIGNATURE}" in held.stderr
    unasked = chain("tx", "forget", SIGNATURE, "-o", "json")  # off a terminal, only with --yes
    assert unasked.code == 2 and "--yes" in unasked.stderr
    forgot = chain("tx", "forget", SIGNATURE, "--yes", "-o", "json")
    assert forgot.code == 0, forgot.stderr
    assert forgot.json() == {"signature": SIGNATURE, "forgotten": True, "action": "deposit", "cluster": GONE}
    assert chain("tx", "forget", SIGNATURE, "--yes").code == 2  # nothing left to forget
    sent = chain(*DEPOSIT, "-o", "json")
    assert sent.code == 0, sent.stderr
    assert usdc_position(chain) == before + UNIT
