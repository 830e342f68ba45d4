"""One decoder per program a transaction of ours may call: program id → decoder (see `common.Decoder`)."""

from __future__ import annotations

from yieldcli.chain.tx.decoders import (
    associated_token,
    compute_budget,
    lookup_table,
    memo,
    sandbox_strategy,
    system,
    token,
)
from yieldcli.chain.tx.decoders.common import Decoder
from yieldcli.solana import programs

DECODERS: dict[str, Decoder] = {
    programs.SYSTEM_PROGRAM: system.decode_system,
    programs.TOKEN_PROGRAM: token.decode_token,
    programs.TOKEN_2022_PROGRAM: token.decode_token,
    programs.ASSOCIATED_TOKEN_PROGRAM: associated_token.decode_associated_token,
    programs.COMPUTE_BUDGET_PROGRAM: compute_budget.decode_compute_budget,
    programs.MEMO_PROGRAM: memo.decode_memo,
    programs.MEMO_V1_PROGRAM: memo.decode_memo,
    programs.ADDRESS_LOOKUP_TABLE_PROGRAM: lookup_table.decode_lookup_table,
    programs.SANDBOX_STRATEGY_PROGRAM: sandbox_strategy.decode_sandbox_strategy,
}
