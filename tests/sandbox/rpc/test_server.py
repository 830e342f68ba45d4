"""The sandbox's Solana JSON-RPC, driven over loopback with solana-py's AsyncClient and our adapter.

Real transactions on LiteSVM: airdrops, tokens, lookup tables, signing with sign.py, simulation,
confirmation; every fault mode (slow, expired, failed, pending) gives the matching outcome of
the confirmation loop; state survives a restart.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct

import httpx2
import pytest
from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed as ConfirmedLevel
from solana.rpc.commitment import Finalized as FinalizedLevel
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli.addresses import b58encode
from yieldcli.chain.guard.signers import check_signable
from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import PreflightFailed, Rpc, RpcError
from yieldcli.chain.transact.confirm import wait_for
from yieldcli.chain.transact.outcomes import Confirmed, Expired, Failed, Pending
from yieldcli.chain.transact.proof import Lifetime
from yieldcli.chain.tx.instructions import build_from_ix, build_transaction, fetch_lookup_table
from yieldcli.chain.tx.review import review_transaction
from yieldcli.errors import NetworkError, TransactionExpired
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import BLOCKHASH_WINDOW, SANDBOX_AUTHORITY, Runtime
from yieldcli.solana import programs
from yieldcli.tokens import KNOWN_TOKENS, WSOL_MINT

USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
WSOL = Pubkey.from_string(WSOL_MINT)
SOL = 1_000_000_000
FAST = {"poll_interval": 0.02, "timeout_s": 20}


@pytest.fixture
def chain(tmp_path):
    runtime = Runtime(tmp_path / "chain.json")
    server = RpcServer(runtime).start()
    yield runtime, server
    server.stop()


@pytest.fixture
def user(chain):
    runtime, _ = chain
    kp = Keypair()
    runtime.airdrop(kp.pubkey(), 10 * SOL)
    return kp


def arun(coro):
    return asyncio.run(coro)


def rpc_call(url: str, method: str, params: list | None = None) -> dict:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params or []}
    return httpx2.post(url, json=body, timeout=10).json()


async def signed_transfer(rpc: Rpc, payer: Keypair, to: Pubkey, lamports: int):
    latest = await rpc.latest_blockhash()
    ix = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=to, lamports=lamports))
    tx = build_transaction([ix], payer.pubkey(), latest.blockhash)
    return sign_transaction(tx, [payer]).transaction, latest


async def send_and_wait(rpc: Rpc, tx: VersionedTransaction, last_valid: int, **kwargs):
    signature = await rpc.send(tx)
    return await wait_for(rpc, signature, Lifetime.of(tx, last_valid), **{**FAST, **kwargs})


# ---- plain RPC, as solana-py's typed client parses it


def test_async_client_reads_what_the_sandbox_serves(chain):
    runtime, server = chain
    kp = Keypair()

    async def main():
        async with AsyncClient(server.url) as client:
            assert await client.is_connected()
            signature = (await client.request_airdrop(kp.pubkey(), 2 * SOL)).value
            (status,) = (await client.get_signature_statuses([signature], search_transaction_history=True)).value
            # Confirmed once landed; finalized only a fixed depth of slots later, as on a one-node cluster.
            assert status.err is None and str(status.confirmation_status) == "TransactionConfirmationStatus.Confirmed"
            assert (await client.get_balance(kp.pubkey(), ConfirmedLevel)).value == 2 * SOL
            assert (await client.get_balance(kp.pubkey(), FinalizedLevel)).value == 0  # 32 blocks behind, as a node
            latest = (await client.get_latest_blockhash()).value
            height = (await client.get_block_height()).value
            assert latest.last_valid_block_height == height + BLOCKHASH_WINDOW
            assert (await client.get_slot()).value == height  # from genesis at slot 0, none skipped
            account = (await client.get_account_info(kp.pubkey(), ConfirmedLevel)).value
            assert account.lamports == 2 * SOL and account.owner == Pubkey.from_string(programs.SYSTEM_PROGRAM)
            assert (
                await client.get_minimum_balance_for_rent_exemption(165)
            ).value == runtime.minimum_balance_for_rent_exemption(165)
            assert (await client.get_version()).value.solana_core
            mints = (await client.get_multiple_accounts([Pubkey.from_string(t.mint) for t in KNOWN_TOKENS])).value
            assert [m.data[44] for m in mints] == [t.decimals for t in KNOWN_TOKENS]
            tx = (
                await client.get_transaction(signature, "json", ConfirmedLevel, max_supported_transaction_version=0)
            ).value
            assert tx.slot == status.slot and tx.transaction.meta.fee == 5000

    arun(main())


def test_known_mints_sit_at_their_real_addresses(chain):
    runtime, _ = chain
    for token in KNOWN_TOKENS:
        account = runtime.get_account(Pubkey.from_string(token.mint))
        assert account.owner == Pubkey.from_string(programs.TOKEN_PROGRAM) and len(account.data) == 82
        assert runtime.mint_decimals(Pubkey.from_string(token.mint)) == token.decimals
    # Wrapped SOL has no mint authority (it is wrapped, never minted); the others use the sandbox's.
    assert bytes(runtime.get_account(WSOL).data)[:4] == bytes(4)
    assert bytes(runtime.get_account(USDC).data)[4:36] == bytes(SANDBOX_AUTHORITY.pubkey())


# ---- tokens, signing, simulation, confirmation


def test_token_transfer_reviewed_signed_simulated_sent_and_confirmed(chain, user):
    runtime, server = chain
    recipient = Keypair().pubkey()
    source = runtime.mint_to(user.pubkey(), USDC, 5_000_000)
    destination = programs.associated_token_address(recipient, USDC)

    async def main():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            ixs = [
                programs.create_associated_token_account(user.pubkey(), recipient, USDC),
                programs.token_transfer_checked(source, USDC, destination, user.pubkey(), 1_250_000, 6),
            ]
            unsigned = build_transaction(ixs, user.pubkey(), latest.blockhash)
            review = review_transaction(unsigned)
            assert review.instructions[1].details["ui_amount"] == "1.250000"
            check_signable(unsigned, user.pubkey(), {user.pubkey()})  # raises unless ours alone to sign

            simulation = await rpc.simulate(unsigned, accounts=[source, destination])
            assert simulation.ok and simulation.units_consumed > 0 and simulation.logs
            changes = {c.address: c for c in simulation.token_balances}
            assert changes[str(source)].pre == 5_000_000 and changes[str(source)].post == 3_750_000
            assert changes[str(destination)].pre is None and changes[str(destination)].post == 1_250_000
            assert changes[str(destination)].delta == 1_250_000

            signed = sign_transaction(unsigned, [user])
            assert signed.complete and signed.signed == (user.pubkey(),)
            outcome = await send_and_wait(rpc, signed.transaction, latest.last_valid_block_height)
            assert isinstance(outcome, Confirmed) and outcome.commitment == "confirmed"
            mine = await rpc.token_account_balance(source)
            theirs = await rpc.token_account_balance(destination)
            return mine, theirs

    mine, theirs = arun(main())
    assert (mine.amount, mine.decimals, mine.ui_amount_string) == (3_750_000, 6, "3.75")
    assert (theirs.amount, theirs.ui_amount_string) == (1_250_000, "1.25")
    assert runtime.token_balance(recipient, USDC) == 1_250_000


def test_wrapped_sol_balance(chain, user):
    runtime, server = chain
    ata = runtime.mint_to(user.pubkey(), WSOL, 3 * SOL)

    async def main():
        async with Rpc(server.url) as rpc:
            return await rpc.token_account_balance(ata)

    amount = arun(main())
    assert (amount.amount, amount.decimals, amount.ui_amount_string) == (3 * SOL, 9, "3")


def test_token_accounts_by_owner(chain, user):
    runtime, server = chain
    usdc_ata = runtime.mint_to(user.pubkey(), USDC, 10)
    answer = rpc_call(
        server.url,
        "getTokenAccountsByOwner",
        [str(user.pubkey()), {"mint": str(USDC)}, {"encoding": "base64", "commitment": "confirmed"}],
    )
    (entry,) = answer["result"]["value"]
    assert entry["pubkey"] == str(usdc_ata)
    assert (
        programs.parse_token_account(entry["account"]["owner"], base64.b64decode(entry["account"]["data"][0]))[2] == 10
    )


def test_preflight_failure_carries_logs_and_sends_nothing(chain, user):
    runtime, server = chain

    async def main():
        async with Rpc(server.url) as rpc:
            tx, _ = await signed_transfer(rpc, user, Keypair().pubkey(), 1_000 * SOL)
            with pytest.raises(PreflightFailed) as info:
                await rpc.send(tx)
            return info.value, tx

    err, tx = arun(main())
    assert err.err == {"InstructionError": [0, {"Custom": 1}]}
    assert any("insufficient lamports" in line for line in err.logs)
    assert runtime.status(str(tx.signatures[0])) is None
    assert runtime.get_balance(user.pubkey()) == 10 * SOL


def test_skip_preflight_lets_a_failing_transaction_land_and_fail(chain, user):
    runtime, server = chain

    async def main():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, Keypair().pubkey(), 1_000 * SOL)
            signature = await rpc.send(tx, skip_preflight=True)
            return await wait_for(rpc, signature, Lifetime.of(tx, latest.last_valid_block_height), **FAST)

    outcome = arun(main())
    assert isinstance(outcome, Failed)
    assert outcome.err == {"InstructionError": [0, {"Custom": 1}]}
    assert any("insufficient lamports" in line for line in outcome.logs)
    assert runtime.get_balance(user.pubkey()) == 10 * SOL - 5000  # the fee is spent


def test_unsigned_or_stale_transactions_are_refused(chain, user):
    runtime, server = chain

    async def main():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            ix = transfer(TransferParams(from_pubkey=user.pubkey(), to_pubkey=Keypair().pubkey(), lamports=SOL))
            unsigned = build_transaction([ix], user.pubkey(), latest.blockhash)
            with pytest.raises(PreflightFailed, match="signatures"):
                await rpc.send(unsigned)
            runtime.expire_blockhash()
            assert not await rpc.is_blockhash_valid(latest.blockhash)
            with pytest.raises(TransactionExpired, match="BlockhashNotFound"):
                await rpc.send(sign_transaction(unsigned, [user]).transaction)

    arun(main())


def test_simulation_options(chain, user):
    _, server = chain

    async def main():
        async with Rpc(server.url) as rpc:
            tx, _ = await signed_transfer(rpc, user, Keypair().pubkey(), SOL)
        async with AsyncClient(server.url) as client:
            verified = (await client.simulate_transaction(tx, sig_verify=True)).value
            replaced = (await client.simulate_transaction(tx, replace_recent_blockhash=True)).value
            assert verified.err is None and replaced.err is None
            assert replaced.replacement_blockhash is not None

    arun(main())
    raw = base64.b64encode(bytes(Keypair().pubkey())).decode()
    answer = rpc_call(
        server.url,
        "simulateTransaction",
        [raw, {"encoding": "base64", "sigVerify": True, "replaceRecentBlockhash": True}],
    )
    assert answer["error"]["code"] == -32602


def test_base58_send_and_json_rpc_errors(chain, user):
    runtime, server = chain

    async def build():
        async with Rpc(server.url) as rpc:
            return await signed_transfer(rpc, user, Keypair().pubkey(), SOL)

    tx, _ = arun(build())
    answer = rpc_call(server.url, "sendTransaction", [b58encode(bytes(tx))])
    assert answer["result"] == str(tx.signatures[0])
    assert runtime.status(answer["result"]).err is None

    assert rpc_call(server.url, "noSuchMethod")["error"]["code"] == -32601
    assert rpc_call(server.url, "getBalance", ["not-a-key"])["error"]["code"] == -32602
    assert rpc_call(server.url, "sendTransaction", ["%%%", {"encoding": "base64"}])["error"]["code"] == -32602
    assert httpx2.post(server.url, content=b"{oops", timeout=5).json()["error"]["code"] == -32700
    batch = httpx2.post(
        server.url,
        json=[
            {"jsonrpc": "2.0", "id": 1, "method": "getSlot"},
            {"jsonrpc": "2.0", "id": 2, "method": "getBlockHeight"},
        ],
        timeout=5,
    ).json()
    # From genesis at slot 0 no slot is skipped: block height is the slot.
    assert [a["id"] for a in batch] == [1, 2] and batch[0]["result"] == batch[1]["result"]
    assert httpx2.get(server.url + "/health", timeout=5).text == "ok"


# ---- address lookup tables


def test_lookup_table_created_over_rpc_then_used_by_an_ix_transaction(chain, user):
    runtime, server = chain
    vaults = [Keypair().pubkey() for _ in range(4)]
    for vault in vaults:
        runtime.airdrop(vault, SOL)

    async def main():
        async with Rpc(server.url) as rpc:
            slot = await rpc.slot()
            create, table = programs.create_lookup_table(user.pubkey(), user.pubkey(), slot)
            extend = programs.extend_lookup_table(table, user.pubkey(), user.pubkey(), vaults)
            for ix in (create, extend):
                latest = await rpc.latest_blockhash()
                tx = sign_transaction(build_transaction([ix], user.pubkey(), latest.blockhash), [user]).transaction
                assert isinstance(await send_and_wait(rpc, tx, latest.last_valid_block_height), Confirmed)

            read_back = await fetch_lookup_table(rpc, table)
            assert read_back.addresses == vaults

            # What /deposit/ix would answer: keys as 32-integer arrays, plus the table.
            body = {
                "deposit_instructions": [
                    {
                        "program_id": list(bytes(Pubkey.from_string(programs.SYSTEM_PROGRAM))),
                        "accounts": [
                            {"pubkey": list(bytes(user.pubkey())), "is_signer": True, "is_writable": True},
                            {"pubkey": list(bytes(vault)), "is_signer": False, "is_writable": True},
                        ],
                        "data": list(struct.pack("<IQ", 2, 1_000_000)),
                    }
                    for vault in vaults
                ],
                "lookup_table": str(table),
            }
            built = await build_from_ix(rpc, body, user.pubkey())
            assert len(built.transaction.message.address_table_lookups) == 1
            review = review_transaction(built.transaction, lookup_tables=built.lookup_tables)
            assert [ix.accounts[1].address for ix in review.instructions] == [str(v) for v in vaults]
            signed = sign_transaction(built.transaction, [user]).transaction
            outcome = await send_and_wait(rpc, signed, built.last_valid_block_height)
            return outcome, [await rpc.balance(v) for v in vaults]

    outcome, balances = arun(main())
    assert isinstance(outcome, Confirmed)
    assert balances == [SOL + 1_000_000] * 4


def test_runtime_lookup_table_helper(chain):
    runtime, _ = chain
    addresses = [Pubkey.new_unique() for _ in range(25)]
    table = runtime.create_lookup_table(addresses)
    assert runtime.lookup_table_addresses(table) == addresses


# ---- faults


def test_slow_rpc(chain, user):
    runtime, server = chain
    runtime.set_fault("slow", seconds=0.5, methods=["getBalance"])

    async def main():
        async with Rpc(server.url, timeout=0.1) as impatient:
            with pytest.raises(NetworkError, match="did not answer getBalance"):
                await impatient.balance(user.pubkey())
            assert await impatient.block_height() > 0  # other methods are not slowed
        async with Rpc(server.url, timeout=10) as patient:
            assert await patient.balance(user.pubkey()) == 10 * SOL

    arun(main())
    runtime.set_fault("slow", seconds=0.05)
    assert runtime.faults.delay_for("getSlot") == 0.05

    async def confirm_slowly():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, Keypair().pubkey(), SOL)
            return await send_and_wait(rpc, tx, latest.last_valid_block_height)

    assert isinstance(arun(confirm_slowly()), Confirmed)


def test_expired_transaction_spends_nothing(chain, user):
    runtime, server = chain
    runtime.set_fault("expire")
    recipient = Keypair().pubkey()

    async def main():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, recipient, SOL)
            outcome = await send_and_wait(rpc, tx, latest.last_valid_block_height)
            return outcome, latest, await rpc.is_blockhash_valid(latest.blockhash)

    outcome, latest, still_valid = arun(main())
    assert isinstance(outcome, Expired)
    assert outcome.block_height > latest.last_valid_block_height
    assert not still_valid
    assert runtime.get_balance(user.pubkey()) == 10 * SOL
    assert runtime.get_balance(recipient) == 0
    assert runtime.faults.expire == 0


def test_failed_on_chain_pays_the_fee_and_changes_nothing_else(chain, user):
    runtime, server = chain
    runtime.set_fault("fail")
    recipient = Keypair().pubkey()

    async def main():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, recipient, SOL)
            return await send_and_wait(rpc, tx, latest.last_valid_block_height)

    outcome = arun(main())
    assert isinstance(outcome, Failed)
    assert outcome.err == {"InstructionError": [0, "ComputationalBudgetExceeded"]}
    assert outcome.logs and "failed" in outcome.logs[-1]
    assert runtime.get_balance(user.pubkey()) == 10 * SOL - 5000
    assert runtime.get_balance(recipient) == 0

    # The fault was for one transaction only.
    async def again():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, recipient, SOL)
            return await send_and_wait(rpc, tx, latest.last_valid_block_height)

    assert isinstance(arun(again()), Confirmed)
    assert runtime.get_balance(recipient) == SOL


def test_pending_until_released(chain, user):
    runtime, server = chain
    runtime.set_fault("pending")
    recipient = Keypair().pubkey()

    async def main():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, recipient, SOL)
            signature = await rpc.send(tx)
            lifetime = Lifetime.of(tx, latest.last_valid_block_height)
            first = await wait_for(rpc, signature, lifetime, timeout_s=0.3, poll_interval=0.05)
            assert runtime.pending_signatures == [str(signature)]
            released = runtime.release_pending()
            second = await wait_for(rpc, signature, lifetime, **FAST)
            return first, released, second

    first, released, second = arun(main())
    assert isinstance(first, Pending) and first.last_status is None
    assert [o.landed for o in released] == [True]
    assert isinstance(second, Confirmed)
    assert runtime.get_balance(recipient) == SOL


def test_faults_steered_over_json_rpc(chain, user):
    runtime, server = chain
    faults = rpc_call(server.url, "sandbox_setFault", ["pending", {"count": 1}])["result"]
    assert faults["pending"] == 1
    assert rpc_call(server.url, "sandbox_setFault", [{"kind": "slow", "seconds": 0.01, "methods": ["getSlot"]}])[
        "result"
    ]["method_delays"] == {"getSlot": 0.01}
    assert rpc_call(server.url, "sandbox_setFault", ["bogus"])["error"]["code"] == -32602

    async def pending_then_released():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, Keypair().pubkey(), SOL)
            signature = await rpc.send(tx)
            assert (await rpc.signature_statuses([signature])) == [None]
            released = rpc_call(server.url, "sandbox_releasePending")["result"]
            assert released == [{"signature": str(signature), "landed": True}]
            return await wait_for(rpc, signature, Lifetime.of(tx, latest.last_valid_block_height), **FAST)

    assert isinstance(arun(pending_then_released()), Confirmed)

    rpc_call(server.url, "sandbox_setFault", ["expire"])

    async def expired():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, Keypair().pubkey(), SOL)
            return await send_and_wait(rpc, tx, latest.last_valid_block_height)

    assert isinstance(arun(expired()), Expired)

    cleared = rpc_call(server.url, "sandbox_clearFaults")["result"]
    assert cleared == {"delay": 0.0, "method_delays": {}, "expire": 0, "fail": 0, "pending": 0}
    height = rpc_call(server.url, "getBlockHeight", [{"commitment": "processed"}])["result"]
    # (a slot of wall-clock time may pass between the two calls)
    assert rpc_call(server.url, "sandbox_advanceSlots", [10])["result"] in (height + 10, height + 11)
    ata = rpc_call(server.url, "sandbox_mintTo", [str(user.pubkey()), str(USDC), 77])["result"]
    assert (
        ata == str(programs.associated_token_address(user.pubkey(), USDC))
        and runtime.token_balance(user.pubkey(), USDC) == 77
    )


def test_transaction_sent_with_an_expired_window_never_lands(chain, user):
    runtime, server = chain

    async def main():
        async with Rpc(server.url) as rpc:
            tx, latest = await signed_transfer(rpc, user, Keypair().pubkey(), SOL)
            runtime.advance_slots(BLOCKHASH_WINDOW + 1)
            signature = await rpc.send(tx, skip_preflight=True)
            return await wait_for(rpc, signature, Lifetime.of(tx, latest.last_valid_block_height), **FAST)

    assert isinstance(arun(main()), Expired)
    assert runtime.get_balance(user.pubkey()) == 10 * SOL


# ---- hook and persistence


def test_on_confirmed_sees_landed_successes_only():
    seen = []
    runtime = Runtime()
    kp = Keypair()
    runtime.airdrop(kp.pubkey(), 10 * SOL)
    with RpcServer(runtime, on_confirmed=lambda tx, record: seen.append((str(tx.signatures[0]), record.err))) as server:
        runtime.set_fault("fail")

        async def main():
            async with Rpc(server.url) as rpc:
                sigs = []
                for _ in range(2):
                    tx, latest = await signed_transfer(rpc, kp, Keypair().pubkey(), SOL)
                    sigs.append(str(await rpc.send(tx)))
                return sigs

        failed, landed = arun(main())
    assert seen == [(landed, None)]
    assert runtime.status(failed).err is not None


def test_state_survives_a_restart(tmp_path):
    path = tmp_path / "sandbox" / "chain.json"
    first = Runtime(path)
    kp = Keypair()
    airdrop = first.airdrop(kp.pubkey(), 4 * SOL)
    ata = first.mint_to(kp.pubkey(), USDC, 1_234_567)
    table = first.create_lookup_table([kp.pubkey(), USDC])
    blockhash, last_valid = first.latest_blockhash()
    height = first.block_height
    ix = transfer(TransferParams(from_pubkey=kp.pubkey(), to_pubkey=Keypair().pubkey(), lamports=SOL))
    old_blockhash_tx = VersionedTransaction(
        MessageV0.try_compile(kp.pubkey(), [ix], [], Hash.from_string(blockhash)), [kp]
    )
    del first

    state = json.loads(path.read_text())
    assert str(ata) in state["accounts"] and str(table) in state["accounts"]

    second = Runtime(path)
    assert second.get_balance(kp.pubkey()) == 4 * SOL
    assert second.token_balance(kp.pubkey(), USDC) == 1_234_567
    assert second.lookup_table_addresses(table) == [kp.pubkey(), USDC]
    assert second.status(airdrop).err is None
    assert second.block_height >= height
    assert second.is_blockhash_valid(blockhash) and second.last_valid_block_height(blockhash) == last_valid
    # A transaction signed before the restart, with a blockhash still in its window, lands after it.
    outcome = second.send_transaction(old_blockhash_tx)
    assert outcome.landed and outcome.record.err is None
    assert second.get_balance(kp.pubkey()) == 3 * SOL - 5000

    third = Runtime(path)
    assert third.get_balance(kp.pubkey()) == 3 * SOL - 5000


def test_memo_with_signer_runs_for_real(chain, user):
    _, server = chain

    async def main():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            ix = Instruction(
                Pubkey.from_string(programs.MEMO_PROGRAM), b"hello", [AccountMeta(user.pubkey(), True, False)]
            )
            tx = sign_transaction(build_transaction([ix], user.pubkey(), latest.blockhash), [user]).transaction
            outcome = await send_and_wait(rpc, tx, latest.last_valid_block_height)
            record = await rpc.transaction(outcome.signature)
            return outcome, record

    outcome, record = arun(main())
    assert isinstance(outcome, Confirmed)
    assert any("hello" in line for line in record.logs)


def test_rpc_error_for_missing_token_account(chain):
    _, server = chain

    async def main():
        async with Rpc(server.url) as rpc:
            await rpc.token_account_balance(Keypair().pubkey())

    with pytest.raises(RpcError, match="could not find account"):
        arun(main())


def test_failed_simulation_reports_no_balance_changes(chain, user):
    runtime, server = chain
    source = runtime.mint_to(user.pubkey(), USDC, 100)
    destination = runtime.create_associated_token_account(Keypair().pubkey(), USDC)

    async def main():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            ix = programs.token_transfer_checked(source, USDC, destination, user.pubkey(), 101, 6)
            return await rpc.simulate(
                build_transaction([ix], user.pubkey(), latest.blockhash), accounts=[source, destination]
            )

    simulation = arun(main())
    assert not simulation.ok and simulation.err == {"InstructionError": [0, {"Custom": 1}]}
    assert any("insufficient funds" in line.lower() for line in simulation.logs)
    assert simulation.token_balances == () and simulation.accounts == (None, None)


def test_added_program_runs_and_can_be_failed(chain, user):
    runtime, server = chain
    # Any SBF program will do: the Memo program's own ELF, deployed at a new address.
    elf = bytes(runtime.get_account(Pubkey.from_string(programs.MEMO_PROGRAM)).data)
    program = Pubkey.new_unique()
    runtime.add_program(program, elf)

    async def call_it():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            ix = Instruction(program, b"deposit", [AccountMeta(user.pubkey(), True, False)])
            tx = sign_transaction(build_transaction([ix], user.pubkey(), latest.blockhash), [user]).transaction
            return await send_and_wait(rpc, tx, latest.last_valid_block_height)

    assert isinstance(arun(call_it()), Confirmed)
    runtime.set_fault("fail")
    outcome = arun(call_it())
    # An SBF program runs out of its compute meter: the runtime calls that ProgramFailedToComplete.
    assert isinstance(outcome, Failed) and outcome.err == {"InstructionError": [0, "ProgramFailedToComplete"]}
    assert any(str(program) in line and "exceeded CUs meter" in line for line in outcome.logs)


def test_a_damaged_state_file_is_a_clear_configuration_error(tmp_path):
    from yieldcli.errors import ConfigError

    path = tmp_path / "chain.json"
    path.write_text('{"version": 1, "accounts": ')
    with pytest.raises(ConfigError, match="cannot restore the sandbox chain") as info:
        Runtime(path)
    assert "yield sandbox reset" in info.value.hint


def test_a_held_transaction_sent_again_is_held_once(chain, user):
    runtime, server = chain
    runtime.set_fault("pending", count=2)
    recipient = Keypair().pubkey()

    async def main():
        async with Rpc(server.url) as rpc:
            tx, _ = await signed_transfer(rpc, user, recipient, SOL)
            for _ in range(3):  # a rebroadcast sends the same bytes again
                await rpc.send(tx, skip_preflight=True)
            return str(tx.signatures[0])

    signature = arun(main())
    # Held once, like a leader deduplicating by signature; the fault's second hold is still there.
    assert runtime.pending_signatures == [signature] and runtime.faults.pending == 1
    assert [o.landed for o in runtime.release_pending()] == [True]
    assert runtime.get_balance(recipient) == SOL
