"""The intent guard's rules, in-process: account states before and after, and the verdict."""

import struct

import pytest
from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from tests.token_accounts import token_account_data
from yieldcli.chain.guard.compare import summary
from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.tx.state import State, network_fee, parse_token, rent_exempt_minimum, writable_addresses
from yieldcli.solana import programs
from yieldcli.tokens import WSOL_MINT

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
WALLET = "5PJ1rhA862Qd39y7bTWTRvQN4bqSFnyV82EDgH4kVr9k"
STRANGER = str(Keypair().pubkey())
VAULT = str(Keypair().pubkey())
RENT = rent_exempt_minimum(165)
FEE = 5_000
SOL = 10**9


def token(mint, owner, amount, lamports=RENT, **kw):
    return State(lamports, 165, parse_token(programs.TOKEN_PROGRAM, token_account_data(mint, owner, amount, **kw)))


def system(lamports):
    return State(lamports, 0, None)


USER_ATA, FUND, FEE_ACCOUNT, STRANGER_ATA = (str(Keypair().pubkey()) for _ in range(4))
PINNED = programs.SANDBOX_STRATEGY_PROGRAM
DEPOSIT = Intent("deposit", WALLET, WALLET, USDC, 10_000_000, strategy="S", strategy_program=PINNED)


def strategy(*moves):
    """The message and inner instructions of one call to the pinned program that made these token transfers."""
    from yieldcli.chain.instruction_rules import Resolved

    keys = [WALLET, PINNED, programs.TOKEN_PROGRAM]
    for source, destination, _ in moves:
        keys += [a for a in (source, destination) if a not in keys]
    inner = [
        (2, (keys.index(src), keys.index(dst), 0), b"\x03" + struct.pack("<Q", amount)) for src, dst, amount in moves
    ]
    resolved = Resolved(
        tuple(keys),
        tuple(i == 0 for i in range(len(keys))),
        tuple(i != 1 and i != 2 for i in range(len(keys))),
        ((1, tuple(range(len(keys))), b"\x01"),),
    )
    return {"resolved": resolved, "inner": {0: inner}}


def deposit_states(moved=10_000_000, to=FUND):
    before = {
        WALLET: system(5 * SOL),
        USER_ATA: token(USDC, WALLET, 5_000_000_000),
        FUND: token(USDC, VAULT, 0),
        STRANGER_ATA: token(USDC, STRANGER, 0),
    }
    after = dict(before)
    after[WALLET] = system(5 * SOL - FEE)
    after[USER_ATA] = token(USDC, WALLET, 5_000_000_000 - moved)
    after[to] = token(USDC, VAULT if to == FUND else STRANGER, moved)
    return before, after


def test_the_network_fee_counts_signatures_and_the_priority_fee():
    payer = Keypair().pubkey()
    ixs = [
        set_compute_unit_limit(200_000),
        set_compute_unit_price(1_000_000),
        transfer(TransferParams(from_pubkey=payer, to_pubkey=Keypair().pubkey(), lamports=1)),
    ]
    message = MessageV0.try_compile(payer, ixs, [], Hash.default())
    assert network_fee(message) == 5_000 + 200_000
    plain = MessageV0.try_compile(payer, ixs[2:], [], Hash.default())
    assert network_fee(plain) == 5_000
    # without a limit, as agave reserves: 3,000 units per builtin's instruction (System, Compute Budget)...
    priced = MessageV0.try_compile(payer, ixs[1:], [], Hash.default())
    assert network_fee(priced) == 5_000 + 6_000
    # ... and 200,000 per other program's
    memo = Instruction(Pubkey.from_string(programs.MEMO_PROGRAM), b"note", [])
    noted = MessageV0.try_compile(payer, [ixs[1], memo], [], Hash.default())
    assert network_fee(noted) == 5_000 + 203_000


def test_writable_accounts_need_every_lookup_table():
    from solders.address_lookup_table_account import AddressLookupTableAccount

    payer, hidden, table = Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey()
    ix = Instruction(
        Pubkey.from_string(programs.TOKEN_PROGRAM),
        bytes([9]),
        [AccountMeta(hidden, False, True), AccountMeta(payer, True, False)],
    )
    message = MessageV0.try_compile(payer, [ix], [AddressLookupTableAccount(table, [hidden])], Hash.default())
    assert str(hidden) not in [str(k) for k in message.account_keys]
    assert writable_addresses(message, {str(table): [str(hidden)]}) == [str(payer), str(hidden)]
    with pytest.raises(ValueError, match="could not be read"):
        writable_addresses(message, {})


def test_token_2022_accounts_with_extensions_are_read():
    data = token_account_data(USDC, WALLET, 7, delegate=STRANGER, delegated=3) + bytes([2]) + bytes(20)
    state = parse_token(programs.TOKEN_2022_PROGRAM, data)
    assert state.amount == 7 and state.delegate == STRANGER and state.delegated_amount == 3
    assert parse_token(programs.TOKEN_2022_PROGRAM, data[:165] + bytes([1])) is None  # a mint, not an account


def test_summary_of_a_withdraw_names_its_options():
    intent = Intent("withdraw", WALLET, WALLET, WSOL_MINT, None, strategy="S", exclude_fees=True, unwrap=True)
    assert (
        summary(intent, FEE, 0)
        == "withdraw all SOL from strategy S to 5PJ1…Vr9k (fees excluded, unwrapped to SOL); fee 0.000005 SOL"
    )


def test_an_account_left_without_lamports_is_closed_even_if_its_data_lingers():
    from yieldcli.chain.rpc.types import AccountInfo
    from yieldcli.chain.tx.state import state_of

    data = token_account_data(USDC, WALLET, 0)
    lingering = AccountInfo(Pubkey.from_string(USER_ATA), 0, Pubkey.from_string(programs.TOKEN_PROGRAM), data, False, 0)
    assert state_of(lingering) is None
    live = AccountInfo(Pubkey.from_string(USER_ATA), RENT, Pubkey.from_string(programs.TOKEN_PROGRAM), data, False, 0)
    assert state_of(live).token.owner == WALLET


class _ShiftingRpc:
    """Answers batches as a node does (each answer with its context slot): pre-state reads from a script
    (what a busy account looks like between requests), slots from another; the simulation succeeds."""

    commitment = "confirmed"

    def __init__(self, lamports_per_read, slots=None):
        self.reads, self.simulations = list(lamports_per_read), 0
        self.slots = list(slots or [])

    def _slot(self):
        return self.slots.pop(0) if self.slots else 7

    async def batch(self, calls):
        from yieldcli.chain.rpc.types import Answer

        answers = []
        for method, params in calls:
            if method == "simulateTransaction":
                self.simulations += 1
                n = len(params[1].get("accounts", {}).get("addresses", []))
                value = {"err": None, "logs": [], "accounts": [None] * n, "unitsConsumed": 1}
            else:
                lamports = self.reads.pop(0) if len(self.reads) > 1 else self.reads[0]
                value = [
                    {
                        "lamports": lamports,
                        "owner": str(Pubkey.default()),
                        "data": ["", "base64"],
                        "executable": False,
                        "rentEpoch": 0,
                    }
                    for _ in params[0]
                ]
            answers.append(Answer(method, {"context": {"slot": self._slot()}, "value": value}))
        return answers

    async def genesis_hash(self):
        return "sandbox"


def test_the_pre_state_is_read_again_until_it_holds_still_around_the_simulation():
    import asyncio

    from solders.signature import Signature
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.guard.read import STABLE_READ_ATTEMPTS, AccountsKeptChanging, check_transaction
    from yieldcli.errors import ExitCode

    payer = Pubkey.from_string(WALLET)
    ix = transfer(TransferParams(from_pubkey=payer, to_pubkey=Pubkey.from_string(STRANGER), lamports=1))
    tx = VersionedTransaction.populate(MessageV0.try_compile(payer, [ix], [], Hash.default()), [Signature.default()])
    close = Intent("close-account", WALLET, WALLET, USDC, None)

    # Moves once (a transaction landed between the first read and the simulation), then holds still.
    rpc = _ShiftingRpc([SOL, SOL - FEE, SOL - FEE, SOL - FEE])
    asyncio.run(check_transaction(rpc, tx, close))
    assert rpc.simulations == 2
    # Never holds still: refused before any signature, exit 10.
    rpc = _ShiftingRpc(list(range(SOL, SOL + 100)))
    with pytest.raises(AccountsKeptChanging) as refused:
        asyncio.run(check_transaction(rpc, tx, close))
    assert refused.value.exit_code == ExitCode.REFUSED and rpc.simulations == STABLE_READ_ATTEMPTS
    # Equal reads whose slots say the re-read came from before the simulation (a load-balanced node
    # behind): not shown to hold around it, asked again. Each round reads the pre-state, simulates,
    # reads the pre-state again, then the accounts only read (the request's mint among them).
    rpc = _ShiftingRpc([SOL], slots=[9, 10, 8, 10, 10, 10, 10, 10])
    asyncio.run(check_transaction(rpc, tx, close))
    assert rpc.simulations == 2


def test_a_pre_state_read_ahead_is_trusted_only_if_it_still_holds_after_the_simulation():
    import asyncio

    from solders.signature import Signature
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.guard.read import check_transaction
    from yieldcli.chain.rpc.types import Answer

    payer = Pubkey.from_string(WALLET)
    ix = transfer(TransferParams(from_pubkey=payer, to_pubkey=Pubkey.from_string(STRANGER), lamports=1))
    tx = VersionedTransaction.populate(MessageV0.try_compile(payer, [ix], [], Hash.default()), [Signature.default()])
    close = Intent("close-account", WALLET, WALLET, USDC, None)

    class AheadRpc(_ShiftingRpc):
        """The pre-read was asked ahead and answered on an earlier exchange, before a transaction landed."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.batches = []

        def answered(self, call):
            value = [
                {
                    "lamports": SOL + 1,
                    "owner": str(Pubkey.default()),
                    "data": ["", "base64"],
                    "executable": False,
                    "rentEpoch": 0,
                }
                for _ in call[1][0]
            ]
            return Answer(call[0], {"context": {"slot": 5}, "value": value})

        async def batch(self, calls):
            self.batches.append([m for m, _ in calls])
            return await super().batch(calls)

    rpc = AheadRpc([SOL])
    asyncio.run(check_transaction(rpc, tx, close))
    # The first batch trusted the early pre-read and re-read after simulating: it had moved, so the
    # whole read-simulate-read was asked again, in one batch.
    assert rpc.batches[0][0] == "simulateTransaction" and rpc.batches[1][:2] == [
        "getMultipleAccounts",
        "simulateTransaction",
    ]
    assert rpc.simulations == 2
