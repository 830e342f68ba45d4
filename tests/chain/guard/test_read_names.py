"""A listed token named by its symbol is the mint whose metadata, in the check's own read, gives that
symbol: an RPC that names another listed mint "SDX" only in the reads that resolve the symbol (SBOND's
Metaplex account answered as "SDX", SDX's own as "SDY") gets nothing signed."""

from __future__ import annotations

import base64
from typing import Any

from solders.pubkey import Pubkey

from tests.rewriting_rpc import RewritingRpc
from yieldcli.sandbox.chain.setup import SANDBOX_AUTHORITY
from yieldcli.sandbox.demo import METADATA_TOKENS, SECOND_STRATEGY_ID, demo_keypair
from yieldcli.solana import token_layout, token_metadata

SDX, SBOND = METADATA_TOKENS[0][1], METADATA_TOKENS[1][1]
SBOND_NAMES = token_metadata.metaplex_address(SBOND)


class NamesLie:
    """An RPC in front of the sandbox's that renames SBOND "SDX" and SDX "SDY" in single (unbatched)
    getMultipleAccounts calls, the way a symbol is resolved, and answers batches (the check's) truly."""

    def __init__(self, upstream: str):
        self.lied = 0
        self.rpc = RewritingRpc(upstream, self.rewrite)
        self.url, self.httpd = self.rpc.url, self.rpc.httpd

    def rewrite(self, call: dict[str, Any], result: dict[str, Any], batched: bool) -> None:
        if not batched and call.get("method") == "getMultipleAccounts" and "result" in result:
            self.rename(call["params"][0], result["result"]["value"])

    def rename(self, keys: list[str], values: list[Any]) -> None:
        authority = SANDBOX_AUTHORITY.pubkey()
        for key, value in zip(keys, values, strict=True):
            if key == SBOND_NAMES and value is not None:
                data = token_metadata.metaplex_data(SBOND, authority, "Sandbox Dollar", "SDX")
            elif key == SDX and value is not None:
                described = token_metadata.token_2022_value(SDX, authority, "Sandbox Dollar", "SDY")
                pointer = (token_layout.METADATA_POINTER, bytes(authority) + bytes(Pubkey.from_string(SDX)))
                extra = [pointer, (token_metadata.TOKEN_METADATA, described)]
                data = token_layout.mint_data(6, authority=authority, extra=extra)
            else:
                continue
            value["data"][0] = base64.b64encode(data).decode()
            self.lied += 1


def held(sandbox, mint: str) -> int:
    ata = sandbox.runtime.associated_token_address(demo_keypair().pubkey(), Pubkey.from_string(mint))
    account = sandbox.runtime.get_account(ata)
    return int.from_bytes(bytes(account.data)[64:72], "little") if account else 0


def test_a_symbol_resolved_from_a_lie_is_refused_by_the_checks_own_read(chain, sandbox):
    for mint in (SDX, SBOND):
        sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(mint), 5_000_000)
    liar = NamesLie(sandbox.rpc_url)
    env = {"YIELD_RPC_URL": liar.url, "YIELD_STRATEGY": SECOND_STRATEGY_ID}
    try:
        done = chain("deposit", "--asset", "SDX", "--amount", "1", "--send", "--yes", "-o", "json", env=env)
    finally:
        liar.httpd.shutdown()
    assert liar.lied >= 2
    shown = done.stdout + done.stderr
    assert done.code == 10, shown
    assert "you named the token 'SDX'" in shown and SBOND in shown, shown
    assert held(sandbox, SBOND) == held(sandbox, SDX) == 5_000_000  # nothing moved
