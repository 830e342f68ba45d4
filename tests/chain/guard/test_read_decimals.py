"""The amount asked is the amount meant: a token not built in has its token units converted with the
decimals read from its mint at the write, and the guard's own read of that mint must say the same. An RPC
that lies about the mint's decimals in one read (a 9 for SDX's 6: 1000 times the amount asked) gets
nothing signed, whichever read it lies in."""

from __future__ import annotations

import base64

from solders.pubkey import Pubkey

from tests.rewriting_rpc import RewritingRpc
from yieldcli.sandbox.demo import METADATA_TOKENS, SECOND_STRATEGY_ID, demo_keypair

SDX = METADATA_TOKENS[0][1]
LIE = 9  # SDX has 6


class DecimalsLie:
    """An RPC in front of the sandbox's that answers SDX's mint with 9 decimals in `method` (once, or
    `always`)."""

    def __init__(self, upstream: str, method: str, always: bool = False):
        self.method, self.always, self.lied = method, always, 0
        self.rpc = RewritingRpc(upstream, lambda call, result, _: self.lie(call, result))
        self.url, self.httpd = self.rpc.url, self.rpc.httpd

    def lie(self, call: dict, result: dict) -> None:
        method = call.get("method")
        if (self.lied and not self.always) or method not in self.method.split("|") or "result" not in result:
            return
        keys = call["params"][0] if method == "getMultipleAccounts" else [call["params"][0]]
        values = result["result"]["value"]
        for key, value in zip(keys, values if isinstance(values, list) else [values], strict=True):
            if key == SDX and value is not None:
                data = bytearray(base64.b64decode(value["data"][0]))
                data[44] = LIE
                value["data"][0] = base64.b64encode(bytes(data)).decode()
                self.lied += 1


def held(sandbox) -> int:
    ata = sandbox.runtime.associated_token_address(demo_keypair().pubkey(), Pubkey.from_string(SDX))
    account = sandbox.runtime.get_account(ata)
    return int.from_bytes(bytes(account.data)[64:72], "little") if account else 0


def deposit(chain, rpc_url: str, amount: str = "0.01"):
    env = {"YIELD_RPC_URL": rpc_url, "YIELD_STRATEGY": SECOND_STRATEGY_ID}
    return chain("deposit", "--asset", "SDX", "--amount", amount, "--send", "--yes", "-o", "json", env=env)


def test_decimals_lied_in_the_conversions_read_are_refused_by_the_guards_own_read(chain, sandbox):
    sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(SDX), 50_000_000)
    liar = DecimalsLie(sandbox.rpc_url, "getAccountInfo")  # the read the conversion takes the decimals from
    try:
        done = deposit(chain, liar.url)
    finally:
        liar.httpd.shutdown()
    assert liar.lied == 1
    assert done.code == 10, done.stdout + done.stderr
    assert "converted with 9 decimals" in done.stdout + done.stderr and "has 6" in done.stdout + done.stderr
    assert held(sandbox) == 50_000_000  # nothing moved


def test_decimals_lied_in_every_other_read_are_refused_too(chain, sandbox):
    # The token names' reads and the guard's own say 9, the read the amount is converted with says 6:
    # converting with the names' 9 would have moved 1000 times the amount asked.
    sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(SDX), 50_000_000)
    liar = DecimalsLie(sandbox.rpc_url, "getMultipleAccounts", always=True)
    try:
        done = deposit(chain, liar.url)
    finally:
        liar.httpd.shutdown()
    assert liar.lied >= 2
    assert done.code == 10, done.stdout + done.stderr
    assert "converted with 6 decimals" in done.stdout + done.stderr
    assert held(sandbox) == 50_000_000


def test_decimals_lied_in_every_account_read_are_refused_by_the_simulated_transfer(chain, sandbox):
    # Every read of the mint says 9, the simulation is honest: the token program's TransferChecked in it
    # states the mint's real 6 (it fails on any other), and 0.5 at 9 decimals would have been 500 SDX.
    sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(SDX), 1_000_000_000)
    liar = DecimalsLie(sandbox.rpc_url, "getMultipleAccounts|getAccountInfo", always=True)
    try:
        done = deposit(chain, liar.url, "0.5")
    finally:
        liar.httpd.shutdown()
    assert done.code == 10, done.stdout + done.stderr
    assert "in the simulation states 6" in done.stdout + done.stderr
    assert held(sandbox) == 1_000_000_000


def test_an_honest_rpc_moves_what_was_asked(chain, sandbox):
    sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(SDX), 50_000_000)
    done = deposit(chain, sandbox.rpc_url)
    assert done.code == 0, done.stdout + done.stderr
    assert held(sandbox) == 50_000_000 - 10_000  # 0.01 SDX at its 6 decimals
