"""The one place the fuzzer asks the guard: the signing pipeline every face uses (`prepare`, then
`complete` with `sign=True`), a confirm that always says yes, the user's keypair, and an `obtain`
that hands over the doctored transaction as `yield tx sign --expect` and `Client...sign()` do.

If the pipeline moves, this function is the only one to change.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from solders.keypair import Keypair
from solders.transaction import VersionedTransaction

from yieldcli.chain.transact.engine import Hooks, Prepared, TransactOptions, UserRequest, complete, prepare
from yieldcli.chain.transact.obtain import given
from yieldcli.chain.transact.outcomes import Signed
from yieldcli.errors import YieldError


@dataclass(frozen=True)
class Decision:
    signed: VersionedTransaction | None  # what the guard signed; None: refused
    refusal: str = ""  # the refusal's kind and message
    crashed: bool = False  # the pipeline raised something that is not a refusal


async def would_sign(
    rpc: Any, rpc_url: str, request: UserRequest, tx: VersionedTransaction, keypair: Keypair, max_sol_cost: int
) -> Decision:
    """Ask the guard whether it signs `tx` for `request`; any refusal means no."""
    hooks = Hooks(confirm=lambda *_: True)
    options = TransactOptions(sign=True, max_sol_cost=max_sol_cost)
    try:
        prepared = await prepare(rpc, rpc_url, request, given(tx), options, hooks, lambda: [keypair])
        outcome = await complete(rpc, prepared, hooks) if isinstance(prepared, Prepared) else prepared
    except YieldError as exc:
        return Decision(None, f"{type(exc).__name__} {getattr(exc, 'kind', '')}: {exc}".strip())
    except Exception as exc:  # a guard that falls over signs nothing, but a traceback is a defect too
        return Decision(None, f"{type(exc).__name__}: {exc}", crashed=True)
    if not isinstance(outcome, Signed):
        return Decision(None, f"no signature: {type(outcome).__name__}")
    return Decision(VersionedTransaction.from_bytes(base64.b64decode(outcome.transaction)))
