"""Read accounts around a simulation in one round trip: the chain facts the intent check stands on.

One JSON-RPC batch carries, in this order:

    getMultipleAccounts(accounts)            the pre-state           (context slot s1)
    simulateTransaction(tx, accounts)        the post-state          (context slot s2)
    getMultipleAccounts(accounts)            the pre-state again     (context slot s3)
    getMultipleAccounts(also_read)           other accounts the caller needs (mints, owners, ...)
    + any questions the caller adds (and those asked ahead on the `Rpc`)

Why the pre-state is shown to hold around the simulation, as when the three were separate requests:
the answer is taken only when both reads are equal and s1 <= s2 <= s3. Every answer is a view of
the chain at its context slot, whatever order or thread the node used to answer the batch: the
accounts were the same at s1 and at s3, and the simulation ran on a bank between the two. At the
usual `confirmed` commitment the three slots are most often one (a frozen bank), and then the
simulation started from exactly the state read. A transaction landing between the reads shows as a
difference or as slots out of order, and everything is asked again (STABLE_READ_ATTEMPTS times, then
refused): another transaction's effect is never taken for this one's. Slots out of order also catch
a load-balanced URL whose batch was split across nodes at different heights.

The list of accounts is the caller's: whatever the check needs to read rides in the same batch.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solders.pubkey import Pubkey

from yieldcli.chain.rpc.types import AccountInfo, RpcError, Simulation, TokenBalanceChange
from yieldcli.errors import Refused
from yieldcli.solana.programs import parse_token_account

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.rpc.types import Answer, Call

STABLE_READ_ATTEMPTS = 5  # pre-state, simulation, pre-state again: tries before giving up on a busy account
MAX_ACCOUNTS_PER_CALL = 100  # getMultipleAccounts takes at most 100 addresses


class AccountsKeptChanging(Refused):
    """Other transactions kept changing the accounts while they were read and simulated."""


@dataclass(frozen=True)
class AroundSimulation:
    before: tuple[AccountInfo | None, ...]  # `accounts` before, as read (and read again, unchanged)
    simulation: Simulation  # `accounts` after, as simulated
    also: dict[Pubkey, AccountInfo | None]  # `also_read` as read in the same batch
    answers: tuple[Answer, ...]  # the extra questions' answers, in order
    slots: tuple[int | None, int | None, int | None]  # pre-read, simulation, re-read


async def read_around(
    rpc: Any,
    accounts: Sequence[Pubkey],
    tx: VersionedTransaction,
    *,
    also_read: Sequence[Pubkey] = (),
    questions: Sequence[Call] = (),
    inner_instructions: bool = False,
    also_read_for: Callable[[Sequence[AccountInfo | None]], Sequence[Pubkey]] | None = None,
) -> AroundSimulation:
    """Pre-state, simulation (post-state of `accounts`) and the pre-state again, in one batch, until
    the pre-state held around the simulation; raise AccountsKeptChanging when it never did.

    When the pre-read was asked ahead (`Rpc.ask_ahead`, answered on an earlier exchange), the first
    try uses that answer (read before the simulation all the same) and `also_read_for(pre-state)`
    names more accounts to read in the same batch (the owners and mints the pre-state shows).
    A failed simulation returns at once (its post-state is empty: there is nothing to compare)."""
    keys = list(accounts)
    sim_call = (
        "simulateTransaction",
        [base64.b64encode(bytes(tx)).decode("ascii"), simulation_config(rpc.commitment, keys, inner_instructions)],
    )
    reads = reads_of(rpc, keys)
    ahead = [rpc.answered(c) for c in reads] if keys and hasattr(rpc, "answered") else []
    for attempt in range(STABLE_READ_ATTEMPTS):
        extra = list(also_read)
        n = len(reads)
        if attempt == 0 and ahead and all(a is not None for a in ahead):
            pre = [a for a in ahead if a is not None]
            before = _accounts(keys, pre)
            extra += [k for k in (also_read_for(before) if also_read_for else ()) if k not in extra]
            answers = await rpc.batch([sim_call, *reads, *reads_of(rpc, extra), *questions])
            sim, re, rest = answers[0], answers[1 : n + 1], answers[n + 1 :]
        else:
            answers = await rpc.batch([*reads, sim_call, *reads, *reads_of(rpc, extra), *questions])
            pre, sim, re, rest = answers[:n], answers[n], answers[n + 1 : 2 * n + 1], answers[2 * n + 1 :]
            before = _accounts(keys, pre)
        with sim.reading() as answered:
            simulation = simulation_of(answered["value"], keys, before)
        slots = (_latest(pre), sim.slot, _earliest(re))  # every pre-read chunk before, every re-read after
        if not simulation.ok:
            break
        if _accounts(keys, re) == before and _in_order(slots):
            break
    else:
        raise AccountsKeptChanging(
            f"the accounts this transaction writes changed during each of {STABLE_READ_ATTEMPTS} checks; "
            "nothing was signed"
        )
    m = len(rest) - len(questions)
    # _accounts answers one account per key or raises: the lengths match.
    also = dict(zip(extra, _accounts(extra, rest[:m]), strict=True))
    return AroundSimulation(tuple(before), simulation, also, tuple(rest[m:]), slots)


def simulation_config(commitment: str, accounts: Sequence[Pubkey], inner_instructions: bool = False) -> dict[str, Any]:
    """Without signature checks and with the transaction's own blockhash; `accounts` returned after it."""
    config: dict[str, Any] = {
        "encoding": "base64",
        "sigVerify": False,
        "replaceRecentBlockhash": False,
        "commitment": commitment,
    }
    if accounts:
        config["accounts"] = {"encoding": "base64", "addresses": [str(a) for a in accounts]}
    if inner_instructions:
        config["innerInstructions"] = True
    return config


def simulation_of(
    value: dict[str, Any], accounts: Sequence[Pubkey], before: Sequence[AccountInfo | None]
) -> Simulation:
    """A simulateTransaction `value` as a Simulation; `before` (the pre-state of `accounts`, or empty)
    gives the token accounts' balances before and after."""
    post_raw = value.get("accounts") or [None] * len(accounts)
    if not isinstance(post_raw, list) or len(post_raw) != len(accounts):
        # Zipping a short answer would drop accounts, which the intent check would then not compare.
        raise RpcError(
            f"the RPC answered simulateTransaction with {len(post_raw) if isinstance(post_raw, list) else 'no'} "
            f"accounts for {len(accounts)} asked"
        )
    after = tuple(account_of(a, raw) for a, raw in zip(accounts, post_raw, strict=True))
    balances = []
    # A failed simulation returns null accounts: there is no "after" to compare with. `before` is the
    # pre-state of the same accounts, or empty (nothing to compare: no balances).
    if value.get("err") is None and value.get("accounts") is not None:
        for address, pre, post in zip(accounts, before, after, strict=False):
            pre_t = parse_token_account(str(pre.owner), pre.data) if pre else None
            post_t = parse_token_account(str(post.owner), post.data) if post else None
            either = pre_t or post_t
            if either:
                mint, owner, _ = either
                balances.append(
                    TokenBalanceChange(
                        str(address), mint, owner, pre_t[2] if pre_t else None, post_t[2] if post_t else None
                    )
                )
    return Simulation(
        err=value.get("err"),
        logs=tuple(value.get("logs") or ()),
        units_consumed=value.get("unitsConsumed"),
        accounts=after,
        token_balances=tuple(balances),
        inner_instructions=value.get("innerInstructions"),
    )


def account_of(address: Pubkey, raw: dict[str, Any] | None) -> AccountInfo | None:
    if raw is None:
        return None
    data = raw.get("data")
    if isinstance(data, list) and len(data) == 2 and data[1] == "base64":
        payload = base64.b64decode(data[0])
    elif isinstance(data, str):
        payload = base64.b64decode(data)
    else:
        raise RpcError(f"the RPC returned account {address} in an encoding other than base64")
    return AccountInfo(
        address=address,
        lamports=int(raw["lamports"]),
        owner=Pubkey.from_string(raw["owner"]),
        data=payload,
        executable=bool(raw.get("executable", False)),
        rent_epoch=int(raw.get("rentEpoch", 0)),
    )


def reads_of(rpc: Any, keys: Sequence[Pubkey]) -> list[Call]:
    """The getMultipleAccounts requests that read `keys` (asked ahead, they are the pre-read's own)."""
    config = {"encoding": "base64", "commitment": rpc.commitment}
    return [
        ("getMultipleAccounts", [[str(k) for k in keys[i : i + MAX_ACCOUNTS_PER_CALL]], config])
        for i in range(0, len(keys), MAX_ACCOUNTS_PER_CALL)
    ]


def _accounts(keys: Sequence[Pubkey], answers: Sequence[Answer]) -> list[AccountInfo | None]:
    out: list[AccountInfo | None] = []
    for n, answer in enumerate(answers):
        chunk = keys[n * MAX_ACCOUNTS_PER_CALL : (n + 1) * MAX_ACCOUNTS_PER_CALL]
        with answer.reading() as answered:
            values = answered["value"]
            if not isinstance(values, list) or len(values) != len(chunk):
                raise RpcError(
                    f"the RPC answered getMultipleAccounts with {len(values) if isinstance(values, list) else 'no'} "
                    f"accounts for {len(chunk)} asked"
                )
            out.extend(account_of(k, raw) for k, raw in zip(chunk, values, strict=True))
    return out


def _latest(answers: Sequence[Answer]) -> int | None:
    slots = [a.slot for a in answers if a.slot is not None]
    return max(slots) if slots else None


def _earliest(answers: Sequence[Answer]) -> int | None:
    slots = [a.slot for a in answers if a.slot is not None]
    return min(slots) if slots else None


def _in_order(slots: tuple[int | None, int | None, int | None]) -> bool:
    """s1 <= s2 <= s3 where the node gave slots (a node without contexts leaves only the comparison)."""
    known = [s for s in slots if s is not None]
    return all(a <= b for a, b in zip(known, known[1:], strict=False))  # each with the next
