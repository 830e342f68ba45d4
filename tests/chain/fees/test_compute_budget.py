"""Priority fees and compute budget: parsing, the auto price, the limit from a simulation, the fee cap,
and a service's v0 message with a lookup table compiled again with a new budget, run on LiteSVM."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.compute_budget import (
    request_heap_frame,
    set_compute_unit_limit,
    set_compute_unit_price,
    set_loaded_accounts_data_size_limit,
)
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.system_program import AdvanceNonceAccountParams, TransferParams, advance_nonce_account, transfer

from tests.library.node import node_with
from yieldcli.chain.fees import compute_budget as cb
from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact.confirm import wait_for
from yieldcli.chain.transact.outcomes import Confirmed
from yieldcli.chain.transact.proof import Lifetime
from yieldcli.chain.tx.instructions import build_transaction, decompile_message, fetch_lookup_table, recompile_message
from yieldcli.chain.tx.nonce import (
    advance_instruction,
    build_on_nonce,
    create_nonce_instructions,
    fetch_nonce,
)
from yieldcli.errors import Refused, ServiceError, SimulationFailed, UsageError
from yieldcli.sandbox.runtime import Runtime
from yieldcli.solana import programs

USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
SOL = 1_000_000_000
MEMO = Pubkey.from_string(programs.MEMO_PROGRAM)
JS_DIR = Path(__file__).resolve().parents[2] / "js"


class KnownFees:
    """An RPC whose getRecentPrioritizationFees answers a known set; everything else goes to the real one."""

    def __init__(self, fees: list[int], real: Rpc | None = None):
        self.fees = fees
        self.real = real
        self.asked: list[list[str]] = []

    async def call(self, method, params=None):
        assert method == "getRecentPrioritizationFees"
        self.asked.append(params[0])
        return [{"slot": 1000 + i, "prioritizationFee": fee} for i, fee in enumerate(self.fees)]

    async def simulate(self, tx, *, accounts=(), commitment=None):
        return await self.real.simulate(tx, accounts=accounts, commitment=commitment)

    @property
    def commitment(self):
        return self.real.commitment

    async def batch(self, calls):
        """The fee question answered here, the rest by the real RPC, in one batch: answers in order."""
        from yieldcli.chain.rpc.types import Answer

        others = [c for c in calls if c[0] != "getRecentPrioritizationFees"]
        real = iter(await self.real.batch(others) if others else [])
        return [
            Answer(m, await self.call(m, p)) if m == "getRecentPrioritizationFees" else next(real) for m, p in calls
        ]


def test_parse_every_compute_budget_instruction():
    ixs = [
        set_compute_unit_limit(300_000),
        set_compute_unit_price(12_345),
        request_heap_frame(64 * 1024),
        set_loaded_accounts_data_size_limit(65_536),
        transfer(TransferParams(from_pubkey=Pubkey.default(), to_pubkey=Pubkey.default(), lamports=1)),
    ]
    assert cb.parse_compute_budget(ixs) == cb.ComputeBudget(300_000, 12_345, 64 * 1024, 65_536)
    assert cb.parse_compute_budget(ixs[4:]) == cb.ComputeBudget()


@pytest.mark.parametrize(
    "data, match",
    [
        (b"\x03\x01", "not a compute-budget instruction"),
        (b"\x00" + bytes(8), "not a compute-budget"),
        (b"", "not a compute-budget"),
        (b"\x09\x00\x00\x00\x00", "not a compute-budget"),
    ],
)
def test_malformed_budget_is_refused(data, match):
    with pytest.raises(ServiceError, match=match):
        cb.parse_compute_budget([Instruction(Pubkey.from_string(programs.COMPUTE_BUDGET_PROGRAM), data, [])])


def test_the_same_setting_twice_is_refused():
    with pytest.raises(ServiceError, match="unit price a second time"):
        cb.parse_compute_budget([set_compute_unit_price(1), set_compute_unit_price(2)])


def test_priority_fee_rounds_up_and_limit_margin():
    assert cb.priority_fee(200_000, 5) == 1
    assert cb.priority_fee(200_001, 5) == 2  # 1.000005 lamports is charged as 2
    assert cb.priority_fee(1_400_000, 0) == 0
    assert cb.priority_fee(1_000_000, cb.MAX_U64) == cb.MAX_U64  # exact: no float anywhere
    assert cb.unit_limit_for(0) == 1_000
    assert cb.unit_limit_for(100_000) == 111_000
    assert cb.unit_limit_for(3) == 1_004  # 10% of 3 rounds up to 1
    assert cb.unit_limit_for(1_300_000) == cb.MAX_COMPUTE_UNIT_LIMIT


def test_auto_price_is_the_75th_percentile_of_the_writable_accounts_fees():
    rpc = KnownFees([0, 0, 0, 0, 10, 20, 30, 40, 50, 1_000])
    accounts = [Keypair().pubkey() for _ in range(3)]
    assert asyncio.run(cb.auto_unit_price(rpc, accounts)) == 40  # rank ceil(0.75 × 10) = 8
    assert rpc.asked == [[str(a) for a in accounts]]
    assert cb.percentile([7]) == 7
    assert cb.percentile([]) == 0
    assert cb.percentile([5, 1, 3, 2], 50) == 2
    assert cb.percentile(list(range(1, 101)), 75) == 75


def test_auto_price_asks_for_at_most_128_accounts_and_refuses_nonsense():
    rpc = KnownFees([1])
    asyncio.run(cb.recent_prioritization_fees(rpc, [Keypair().pubkey() for _ in range(130)]))
    assert len(rpc.asked[0]) == 128
    for bad in (-1, "5", 1.5, None, 2**64):
        with pytest.raises(ServiceError, match="invalid fee"):
            asyncio.run(cb.recent_prioritization_fees(KnownFees([bad]), []))


def test_with_compute_budget_replaces_in_place_and_keeps_nonce_first_and_heap():
    payer, nonce = Keypair().pubkey(), Keypair().pubkey()
    work = transfer(TransferParams(from_pubkey=payer, to_pubkey=nonce, lamports=1))
    advance = advance_nonce_account(AdvanceNonceAccountParams(nonce_pubkey=nonce, authorized_pubkey=payer))
    out = cb.with_compute_budget([set_compute_unit_price(1), request_heap_frame(64 * 1024), work], 5_000, 9)
    assert out == [set_compute_unit_limit(5_000), set_compute_unit_price(9), request_heap_frame(64 * 1024), work]
    out = cb.with_compute_budget([advance, set_compute_unit_limit(1), work], 5_000, 9)
    assert out == [advance, set_compute_unit_limit(5_000), set_compute_unit_price(9), work]
    with pytest.raises(UsageError, match="compute-unit limit"):
        cb.budget_instructions(1_400_001, 0)


def test_fee_summary_without_a_limit_uses_the_runtime_default():
    payer = Keypair().pubkey()
    memo = Instruction(Pubkey.from_string(programs.MEMO_PROGRAM), b"note", [])
    ixs = [set_compute_unit_price(10_000), memo]
    message = build_transaction(ixs, payer, Hash.new_unique()).message
    fees = cb.fee_summary(message)
    # 3,000 units for the compute-budget instruction (a builtin's), 200,000 for the memo (not a builtin's)
    assert (fees.signatures, fees.base_fee, fees.unit_limit, fees.unit_price, fees.priority_fee) == (
        1,
        5_000,
        203_000,
        10_000,
        2_030,
    )
    assert fees.total == 7_030 and fees.to_dict()["total_sol"] == "0.00000703"
    assert fees.sol(fees.total) == Decimal("0.00000703")
    # Builtins only (System, Compute Budget): 3,000 units each.
    pay = transfer(TransferParams(from_pubkey=payer, to_pubkey=payer, lamports=1))
    builtins = build_transaction([set_compute_unit_price(10_000), pay], payer, Hash.new_unique()).message
    assert cb.fee_summary(builtins).unit_limit == 6_000
    # SOL as exact text, never an exponent or a float.
    assert [cb.sol_text(n) for n in (0, 1, 5_000, 1_447_680, 1_400 * 10**9)] == [
        "0",
        "0.000000001",
        "0.000005",
        "0.00144768",
        "1400",
    ]


# ---- a service's /tx message, on the sandbox chain over loopback


def service_transaction(runtime: Runtime, user: Keypair):
    """Like the service's /tx: compute budget, create-ATA, a token transfer and a SOL transfer through a
    lookup table (writable and read-only loaded accounts), a memo signed by the user."""
    friend = Keypair().pubkey()
    source = runtime.mint_to(user.pubkey(), USDC, 5_000_000)
    dest = programs.associated_token_address(friend, USDC)
    table = runtime.create_lookup_table([friend, dest, USDC, programs._SYSTEM, programs._TOKEN])
    runtime.advance_slots(1)
    ixs = [
        set_compute_unit_limit(400_000),
        programs.create_associated_token_account(user.pubkey(), friend, USDC),
        set_compute_unit_price(3),
        programs.token_transfer_checked(source, USDC, dest, user.pubkey(), 1_250_000, 6),
        transfer(TransferParams(from_pubkey=user.pubkey(), to_pubkey=friend, lamports=SOL // 10)),
        Instruction(MEMO, b"deposit 1.25", [AccountMeta(user.pubkey(), True, False)]),
    ]
    return ixs, table, dest


def message_wide_flags(ixs: list[Instruction], payer: Pubkey) -> list[Instruction]:
    """A compiled message keeps one signer/writable flag per key: the union over its instructions."""
    signer, writable = {payer}, {payer}
    for ix in ixs:
        signer |= {m.pubkey for m in ix.accounts if m.is_signer}
        writable |= {m.pubkey for m in ix.accounts if m.is_writable}
    return [
        Instruction(
            ix.program_id,
            bytes(ix.data),
            [AccountMeta(m.pubkey, m.pubkey in signer, m.pubkey in writable) for m in ix.accounts],
        )
        for ix in ixs
    ]


def test_service_message_gets_a_new_budget_and_nothing_else_changes(sandbox_chain):
    runtime, server = sandbox_chain
    user = Keypair()
    runtime.airdrop(user.pubkey(), 10 * SOL)
    ixs, table_address, dest = service_transaction(runtime, user)

    async def go():
        async with Rpc(server.url) as rpc:
            table = await fetch_lookup_table(rpc, table_address)
            latest = await rpc.latest_blockhash()
            original = build_transaction(ixs, user.pubkey(), latest.blockhash, [table])
            assert original.message.address_table_lookups, "the service's message loads accounts from its table"
            budgeted = await cb.apply_priority_fee(rpc, original, [table], unit_price=25_000)
            signed = sign_transaction(budgeted.transaction, [user]).transaction
            signature = await rpc.send(signed)
            lifetime = Lifetime.of(signed, latest.last_valid_block_height)
            outcome = await wait_for(rpc, signature, lifetime, poll_interval=0.02, timeout_s=20)
            record = await rpc.transaction(signature)
            return original, budgeted, outcome, record

    original, budgeted, outcome, record = asyncio.run(go())
    table = runtime.lookup_table_addresses(table_address)
    assert isinstance(outcome, Confirmed) and record.err is None
    before, after = original.message, budgeted.transaction.message
    # Same payer, blockhash and lookup table; the same non-budget instructions, metas and order.
    assert after.account_keys[0] == before.account_keys[0] == user.pubkey()
    assert after.recent_blockhash == before.recent_blockhash
    assert [lk.account_key for lk in after.address_table_lookups] == [table_address]
    # The service's message already had a budget: the account layout is identical too.
    assert list(after.account_keys) == list(before.account_keys) and after.header == before.header
    assert after.address_table_lookups == before.address_table_lookups
    tables = [AddressLookupTableAccount(table_address, table)]
    old = decompile_message(before, tables)
    new = decompile_message(after, tables)
    # The decompiler gives back what was compiled, with each key's flags as the message holds them.
    assert old == message_wide_flags(ixs, user.pubkey())
    assert [ix for ix in new if not cb.is_compute_budget(ix)] == [ix for ix in old if not cb.is_compute_budget(ix)]
    limit = cb.unit_limit_for(budgeted.units_consumed)
    assert new[:2] == [set_compute_unit_limit(limit), set_compute_unit_price(25_000)]
    assert cb.parse_compute_budget(new) == cb.ComputeBudget(limit, 25_000)
    assert budgeted.fees == cb.FeeSummary(1, 5_000, limit, 25_000, cb.priority_fee(limit, 25_000))
    # The runtime charged exactly the fee we computed, and the transfer happened.
    assert record.fee == budgeted.fees.total
    assert runtime.token_account(dest)[2] == 1_250_000
    print(f"units consumed {budgeted.units_consumed}, limit {limit}, fees {budgeted.fees.to_dict()}")


def test_max_fee_refuses_above_and_allows_at_the_cap(sandbox_chain):
    runtime, server = sandbox_chain
    user = Keypair()
    runtime.airdrop(user.pubkey(), 10 * SOL)
    ixs, table_address, _ = service_transaction(runtime, user)

    async def go(max_fee):
        async with Rpc(server.url) as rpc:
            table = await fetch_lookup_table(rpc, table_address)
            tx = build_transaction(ixs, user.pubkey(), (await rpc.latest_blockhash()).blockhash, [table])
            rpc_with_fees = KnownFees([100_000] * 4, rpc)
            return await cb.apply_priority_fee(rpc_with_fees, tx, [table], unit_price="auto", max_fee=max_fee)

    allowed = asyncio.run(go(None))
    assert allowed.fees.unit_price == 100_000
    assert asyncio.run(go(allowed.fees.total)).fees == allowed.fees
    with pytest.raises(
        Refused, match=f"would be {allowed.fees.total} lamports .* more than the maximum of {allowed.fees.total - 1}"
    ):
        asyncio.run(go(allowed.fees.total - 1))


def test_a_signed_transaction_keeps_its_fee():
    user = Keypair()
    tx = build_transaction(
        [transfer(TransferParams(from_pubkey=user.pubkey(), to_pubkey=user.pubkey(), lamports=1))],
        user.pubkey(),
        Hash.new_unique(),
    )
    signed = sign_transaction(tx, [user]).transaction
    with pytest.raises(UsageError, match="already carries a signature"):
        asyncio.run(cb.apply_priority_fee(KnownFees([]), signed, unit_price=1))


def test_decompile_refuses_a_table_it_was_not_given_or_an_index_past_its_end():
    payer, a, b = Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey()
    key = Keypair().pubkey()
    message = build_transaction(
        [transfer(TransferParams(from_pubkey=payer, to_pubkey=b, lamports=1))],
        payer,
        Hash.new_unique(),
        [AddressLookupTableAccount(key, [a, b])],
    ).message
    with pytest.raises(ServiceError, match="could not be read"):
        decompile_message(message, [])
    with pytest.raises(ServiceError, match="entry 1 of lookup table"):
        decompile_message(message, [AddressLookupTableAccount(key, [a])])
    assert struct.unpack("<I", bytes(message.instructions[0].data)[:4]) == (2,)


def test_a_nonce_transaction_keeps_its_advance_first_and_lands_with_a_priority_fee(sandbox_chain):
    runtime, server = sandbox_chain
    user, nonce_keypair = Keypair(), Keypair()
    runtime.airdrop(user.pubkey(), 10 * SOL)
    rent = runtime.minimum_balance_for_rent_exemption(80)
    runtime.execute(
        create_nonce_instructions(user.pubkey(), nonce_keypair.pubkey(), user.pubkey(), rent),
        [user, nonce_keypair],
        payer=user,
    )
    friend = Keypair().pubkey()

    async def go():
        async with Rpc(server.url) as rpc:
            nonce = await fetch_nonce(rpc, nonce_keypair.pubkey())
            work = transfer(TransferParams(from_pubkey=user.pubkey(), to_pubkey=friend, lamports=SOL))
            budgeted = await cb.apply_priority_fee(rpc, build_on_nonce([work], user.pubkey(), nonce), unit_price=7)
            runtime.advance_slots(200)  # far past any blockhash's lifetime
            signed = sign_transaction(budgeted.transaction, [user]).transaction
            signature = await rpc.send(signed)
            outcome = await wait_for(rpc, signature, Lifetime.of(signed, None), poll_interval=0.02, timeout_s=20)
            return nonce, budgeted, outcome, await rpc.transaction(signature)

    nonce, budgeted, outcome, record = asyncio.run(go())
    assert isinstance(outcome, Confirmed)
    ixs = decompile_message(budgeted.transaction.message)
    advance = advance_instruction(nonce.address, user.pubkey())
    assert (ixs[0].program_id, bytes(ixs[0].data), [m.pubkey for m in ixs[0].accounts]) == (
        advance.program_id,
        bytes(advance.data),
        [m.pubkey for m in advance.accounts],
    )
    assert [cb.is_compute_budget(ix) for ix in ixs] == [False, True, True, False]
    assert budgeted.transaction.message.recent_blockhash == nonce.nonce
    assert record.fee == budgeted.fees.total and runtime.get_balance(friend) == SOL


def test_no_room_for_a_budget_is_refused_before_signing(sandbox_chain):
    runtime, server = sandbox_chain
    user = Keypair()
    runtime.airdrop(user.pubkey(), 10 * SOL)

    async def go(memo_bytes: int):
        async with Rpc(server.url) as rpc:
            memo = Instruction(MEMO, b"m" * memo_bytes, [AccountMeta(user.pubkey(), True, False)])
            tx = build_transaction([memo], user.pubkey(), (await rpc.latest_blockhash()).blockhash)
            assert len(bytes(tx)) <= cb.PACKET_DATA_SIZE
            return await cb.apply_priority_fee(rpc, tx, unit_price=1)

    base = 1_232 - 1 - 64 - 1 - 3 - 3 * 32 - 32 - 1 - 5 - 1  # a memo filling the packet exactly (v0, one signer)
    assert len(bytes(asyncio.run(go(base - 40)).transaction)) <= cb.PACKET_DATA_SIZE
    with pytest.raises(Refused, match=r"would be \d+ bytes, more than the 1232"):
        asyncio.run(go(base))


def test_a_high_price_is_measured_without_reserving_the_full_limit_at_that_price(sandbox_chain):
    runtime, server = sandbox_chain
    user = Keypair()
    runtime.airdrop(user.pubkey(), SOL // 100)  # 0.01 SOL: 1.4M units at this price would cost 0.07 SOL
    friend = Keypair().pubkey()

    async def go():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            tx = build_transaction(
                [transfer(TransferParams(from_pubkey=user.pubkey(), to_pubkey=friend, lamports=SOL // 1000))],
                user.pubkey(),
                latest.blockhash,
            )
            budgeted = await cb.apply_priority_fee(rpc, tx, unit_price=50_000_000)
            signature = await rpc.send(sign_transaction(budgeted.transaction, [user]).transaction)
            return budgeted, await wait_for(
                rpc, signature, latest.last_valid_block_height, poll_interval=0.02, timeout_s=20
            )

    budgeted, outcome = asyncio.run(go())
    assert isinstance(outcome, Confirmed)
    assert budgeted.fees.priority_fee == cb.priority_fee(budgeted.fees.unit_limit, 50_000_000) < SOL // 100
    assert runtime.get_balance(user.pubkey()) == SOL // 100 - SOL // 1000 - budgeted.fees.total


def test_a_failing_simulation_is_a_simulation_failure(sandbox_chain):
    runtime, server = sandbox_chain
    user = Keypair()  # no lamports at all

    async def go():
        async with Rpc(server.url) as rpc:
            tx = build_transaction(
                [transfer(TransferParams(from_pubkey=user.pubkey(), to_pubkey=user.pubkey(), lamports=1))],
                user.pubkey(),
                (await rpc.latest_blockhash()).blockhash,
            )
            return await cb.apply_priority_fee(rpc, tx, unit_price=1)

    with pytest.raises(SimulationFailed, match="measure compute units failed: .*nothing was signed or sent"):
        asyncio.run(go())


def test_priority_fee_flag_values():
    assert cb.parse_priority_fee("auto") == "auto" and cb.parse_priority_fee(" AUTO ") == "auto"
    assert cb.parse_priority_fee("0") == 0 and cb.parse_priority_fee("25000") == 25_000
    assert cb.parse_priority_fee(str(cb.MAX_U64)) == cb.MAX_U64
    for bad in ("-1", "1.5", "1e6", "", "٣", str(cb.MAX_U64 + 1), "fast"):
        with pytest.raises(UsageError, match="invalid priority fee"):
            cb.parse_priority_fee(bad)


def test_without_a_priority_fee_the_transaction_stays_and_max_fee_still_applies():
    payer = Keypair().pubkey()
    tx = build_transaction(
        [
            set_compute_unit_limit(10_000),
            set_compute_unit_price(1_000_000),
            transfer(TransferParams(from_pubkey=payer, to_pubkey=payer, lamports=1)),
        ],
        payer,
        Hash.new_unique(),
    )
    kept = asyncio.run(cb.budget_transaction(KnownFees([]), tx, priority_fee=None, max_fee=15_000))
    assert kept.transaction == tx and kept.units_consumed is None
    assert (kept.fees.unit_limit, kept.fees.priority_fee, kept.fees.total) == (10_000, 10_000, 15_000)
    with pytest.raises(Refused, match="15000 lamports"):
        asyncio.run(cb.budget_transaction(KnownFees([]), tx, priority_fee=None, max_fee=14_999))


@pytest.mark.parametrize("version", ["legacy", "v0", "v0+table"])
def test_decompile_then_compile_gives_back_the_same_message(version):
    payer, cosigner, reader, table_key = Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey()
    loaded_w, loaded_r = Keypair().pubkey(), Keypair().pubkey()
    ixs = [
        set_compute_unit_price(9),
        Instruction(MEMO, b"a", [AccountMeta(cosigner, True, False), AccountMeta(reader, False, False)]),
        transfer(TransferParams(from_pubkey=payer, to_pubkey=loaded_w, lamports=5)),
        Instruction(
            Pubkey.from_string(programs.TOKEN_PROGRAM),
            b"\x09",
            [AccountMeta(loaded_r, False, False), AccountMeta(cosigner, True, True)],
        ),
    ]
    blockhash = Hash.new_unique()
    tables = (
        [AddressLookupTableAccount(table_key, [Keypair().pubkey(), loaded_r, loaded_w])]
        if version == "v0+table"
        else []
    )
    message = (
        Message.new_with_blockhash(ixs, payer, blockhash)
        if version == "legacy"
        else build_transaction(ixs, payer, blockhash, tables).message
    )
    again = recompile_message(message, decompile_message(message, tables), tables)
    assert bytes(again) == bytes(message)
    if version == "v0+table":
        assert [list(lk.writable_indexes) + list(lk.readonly_indexes) for lk in message.address_table_lookups] == [
            [2, 1]
        ]


def test_web3js_decompiles_the_recompiled_message_as_we_do(sandbox_chain):
    """An independent decompiler (web3.js 1.x TransactionMessage.decompile) agrees with ours, before and after."""
    node = node_with("@solana/web3.js")
    runtime, server = sandbox_chain
    user = Keypair()
    runtime.airdrop(user.pubkey(), 10 * SOL)
    ixs, table_address, _ = service_transaction(runtime, user)

    async def go():
        async with Rpc(server.url) as rpc:
            table = await fetch_lookup_table(rpc, table_address)
            original = build_transaction(ixs, user.pubkey(), (await rpc.latest_blockhash()).blockhash, [table])
            return table, original, (await cb.apply_priority_fee(rpc, original, [table], unit_price=3_000)).transaction

    table, original, budgeted = asyncio.run(go())
    lines = "".join(
        json.dumps(
            {
                "transaction": base64.b64encode(bytes(tx)).decode(),
                "tables": {str(table.key): [str(a) for a in table.addresses]},
            }
        )
        + "\n"
        for tx in (original, budgeted)
    )
    out = subprocess.run(
        [node, str(JS_DIR / "decompile.mjs")], input=lines, capture_output=True, text=True, timeout=60, check=True
    )
    theirs = [json.loads(line) for line in out.stdout.splitlines()]
    ours = [
        [
            {
                "programId": str(ix.program_id),
                "keys": [
                    {"pubkey": str(m.pubkey), "isSigner": m.is_signer, "isWritable": m.is_writable} for m in ix.accounts
                ],
                "data": base64.b64encode(bytes(ix.data)).decode(),
            }
            for ix in decompile_message(tx.message, [table])
        ]
        for tx in (original, budgeted)
    ]
    assert theirs == ours
    budget_program = programs.COMPUTE_BUDGET_PROGRAM
    assert [ix for ix in theirs[1] if ix["programId"] != budget_program] == [
        ix for ix in theirs[0] if ix["programId"] != budget_program
    ]
