"""One decoder per program a transaction of ours may call: program id → decoder (see `common.Decoder`)."""

from __future__ import annotations

from yieldcli.chain.decoders import associated_token, compute_budget, lookup_table, memo, system, token
from yieldcli.chain.decoders.common import Decoder
from yieldcli.solana import programs as p

DECODERS: dict[str, Decoder] = {
    p.SYSTEM_PROGRAM: system.decode_system,
    p.TOKEN_PROGRAM: token.decode_token,
    p.TOKEN_2022_PROGRAM: token.decode_token,
    p.ASSOCIATED_TOKEN_PROGRAM: associated_token.decode_associated_token,
    p.COMPUTE_BUDGET_PROGRAM: compute_budget.decode_compute_budget,
    p.MEMO_PROGRAM: memo.decode_memo,
    p.MEMO_V1_PROGRAM: memo.decode_memo,
    p.ADDRESS_LOOKUP_TABLE_PROGRAM: lookup_table.decode_lookup_table,
}
