"""The sandbox chain as a validator: time that moves, blockhashes that expire, the network knobs,
and the RPC answers in the shapes solana-py's typed client (solders' parsers) reads."""

from __future__ import annotations

import asyncio

import pytest
from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed
from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli.sandbox.chain.knobs import Network
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime
from yieldcli.solana import programs

USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
SOL = 1_000_000_000
DEVNET_GENESIS = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"


class FakeClock:
    def __init__(self) -> None:
        self.ms = 1_800_000_000_000

    def __call__(self) -> int:
        return self.ms


MILLI = 1_000_000  # above the rent-exempt minimum of a new system account


def pay(
    runtime: Runtime, payer: Keypair, lamports: int = MILLI, *, price: int | None = None, blockhash: str | None = None
):
    ixs = [] if price is None else [set_compute_unit_limit(10_000), set_compute_unit_price(price)]
    ixs.append(transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=lamports)))
    message = MessageV0.try_compile(
        payer.pubkey(), ixs, [], Hash.from_string(blockhash or runtime.latest_blockhash()[0])
    )
    return VersionedTransaction(message, [payer])


def funded(runtime: Runtime) -> Keypair:
    kp = Keypair()
    runtime.airdrop(kp.pubkey(), 10 * SOL)
    return kp


def test_slots_pass_with_the_clock_when_nothing_lands(tmp_path):
    clock = FakeClock()
    runtime = Runtime(tmp_path / "chain.json", now_ms=clock)
    slot, (blockhash, _) = runtime.slot, runtime.latest_blockhash()
    clock.ms += 399
    assert runtime.slot == slot and runtime.latest_blockhash()[0] == blockhash
    clock.ms += 1
    assert runtime.slot == slot + 1 and runtime.latest_blockhash()[0] != blockhash
    clock.ms += 4000
    assert runtime.slot == slot + 11 and runtime.block_height == runtime.slot
    # Another process on the same folder sees the same slot and blockhash without anything saved since.
    other = Runtime(tmp_path / "chain.json", now_ms=clock)
    assert (other.slot, other.latest_blockhash()) == (runtime.slot, runtime.latest_blockhash())


def test_a_blockhash_expires_after_its_window(tmp_path):
    clock = FakeClock()
    runtime = Runtime(tmp_path / "chain.json", network=Network(blockhash_window=5), now_ms=clock)
    payer = funded(runtime)
    blockhash, last_valid = runtime.latest_blockhash()
    # The hash of the last complete block, valid 5 blocks after that block, as a validator counts.
    assert last_valid == runtime.block_height - 1 + 5
    clock.ms += 4 * 400
    assert runtime.is_blockhash_valid(blockhash) and runtime.block_height == last_valid
    clock.ms += 400
    assert not runtime.is_blockhash_valid(blockhash)
    outcome = runtime.send_transaction(pay(runtime, payer, blockhash=blockhash), skip_preflight=True)
    assert not outcome.landed and runtime.status(outcome.signature) is None


def test_two_processes_on_one_folder_see_each_others_transactions(tmp_path):
    first = Runtime(tmp_path / "chain.json")
    second = Runtime(tmp_path / "chain.json")
    payer = funded(first)
    assert second.get_balance(payer.pubkey()) == 10 * SOL
    landed = second.send_transaction(pay(second, payer))
    assert landed.landed and first.status(landed.signature) is not None
    again = first.send_transaction(pay(first, payer, 2 * MILLI))
    assert again.landed
    third = Runtime(tmp_path / "chain.json")
    assert third.status(landed.signature) and third.status(again.signature)
    assert third.get_balance(payer.pubkey()) == 10 * SOL - 3 * MILLI - 2 * 5000


def test_genesis_hash_is_the_folders_own(tmp_path):
    a = Runtime(tmp_path / "a" / "chain.json").genesis_hash
    assert a == Runtime(tmp_path / "a" / "chain.json").genesis_hash
    b = Runtime(tmp_path / "b" / "chain.json").genesis_hash
    assert a != b and {a, b}.isdisjoint({DEVNET_GENESIS, MAINNET_GENESIS})


def test_dropped_sends_land_on_the_rebroadcast_once(tmp_path):
    runtime = Runtime(tmp_path / "chain.json", network=Network(drop_sends=2))
    payer = funded(runtime)
    tx = pay(runtime, payer)
    outcomes = [runtime.send_transaction(tx) for _ in range(3)]
    # Once landed, a rebroadcast is a duplicate (preflight would refuse it as AlreadyProcessed).
    outcomes.append(runtime.send_transaction(tx, skip_preflight=True))
    assert [o.landed for o in outcomes] == [False, False, True, False]
    assert [o.fault for o in outcomes[:2]] == ["dropped", "dropped"]
    assert runtime.status(outcomes[0].signature).err is None
    assert runtime.get_balance(payer.pubkey()) == 10 * SOL - MILLI - 5000


def test_underpriced_transactions_never_land_and_fees_say_what_lands(tmp_path):
    clock = FakeClock()
    runtime = Runtime(
        tmp_path / "chain.json", network=Network(min_priority_fee=1_000, blockhash_window=3), now_ms=clock
    )
    server = RpcServer(runtime).start()
    payer = funded(runtime)
    try:
        cheap = runtime.send_transaction(pay(runtime, payer, price=999))
        assert not cheap.landed and cheap.fault == "underpriced" and runtime.status(cheap.signature) is None
        clock.ms += 4 * 400  # its blockhash expires: it never lands
        assert runtime.send_transaction(pay(runtime, payer, price=999)).fault == "underpriced"
        paying = runtime.send_transaction(pay(runtime, payer, price=1_000))
        assert paying.landed and paying.record.fee == 5000 + 10  # 1000 microlamports x 10000 units

        async def main():
            async with AsyncClient(server.url) as client:
                fees = (await client.get_recent_prioritization_fees([payer.pubkey()])).value
                message = pay(runtime, payer, price=2_000).message
                fee = (await client.get_fee_for_message(message)).value
                return fees, fee

        fees, fee = asyncio.run(main())
        assert fees and all(f.prioritization_fee >= 1_000 for f in fees)
        assert fee == 5000 + 20
    finally:
        server.stop()


def test_rpc_answers_parse_as_a_validators(tmp_path):
    runtime = Runtime(tmp_path / "chain.json")
    server = RpcServer(runtime).start()
    user = funded(runtime)
    source = runtime.mint_to(user.pubkey(), USDC, 5_000_000)
    recipient = Keypair().pubkey()
    destination = programs.associated_token_address(recipient, USDC)
    ixs = [
        programs.create_associated_token_account(user.pubkey(), recipient, USDC),
        programs.token_transfer_checked(source, USDC, destination, user.pubkey(), 1_250_000, 6),
    ]

    async def main():
        async with AsyncClient(server.url) as client:
            genesis = (await client.get_genesis_hash()).value
            stale = MessageV0.try_compile(user.pubkey(), ixs, [], Hash.default())
            unsigned = VersionedTransaction.populate(stale, [user.sign_message(to_bytes_versioned(stale))])
            sim = (
                await client.simulate_transaction(
                    unsigned, replace_recent_blockhash=True, accounts_addresses=[source, destination]
                )
            ).value
            latest = (await client.get_latest_blockhash()).value
            message = MessageV0.try_compile(user.pubkey(), ixs, [], latest.blockhash)
            tx = VersionedTransaction(message, [user])
            signature = (await client.send_transaction(tx)).value
            got = (
                await client.get_transaction(signature, "json", Confirmed, max_supported_transaction_version=0)
            ).value
            # At confirmed: solana-py names finalized unless told, where the transfer is not yet.
            accounts = (await client.get_multiple_accounts([source, destination, Keypair().pubkey()], Confirmed)).value
            owned = (await client.get_token_accounts_by_owner(recipient, _mint_filter(USDC), Confirmed)).value
            return genesis, sim, got, accounts, owned

    try:
        genesis, sim, got, accounts, owned = asyncio.run(main())
    finally:
        server.stop()
    assert str(genesis) == runtime.genesis_hash
    assert sim.err is None and sim.accounts[1] is not None and sim.units_consumed > 0
    meta = got.transaction.meta
    assert meta.fee == 5000 and meta.err is None and meta.log_messages
    assert len(meta.pre_balances) == len(meta.post_balances) == len(got.transaction.transaction.message.account_keys)
    pre = {b.account_index: int(b.ui_token_amount.amount) for b in meta.pre_token_balances}
    post = {(str(b.owner), str(b.mint)): int(b.ui_token_amount.amount) for b in meta.post_token_balances}
    assert 5_000_000 in pre.values()
    assert post[(str(recipient), str(USDC))] == 1_250_000 and post[(str(user.pubkey()), str(USDC))] == 3_750_000
    assert meta.inner_instructions and meta.inner_instructions[0].index == 0  # the ATA program's calls
    assert accounts[0] is not None and accounts[2] is None
    assert [str(a.pubkey) for a in owned] == [str(destination)]


def _mint_filter(mint: Pubkey):
    from solana.rpc.models import TokenAccountOpts

    return TokenAccountOpts(mint=mint)


@pytest.mark.parametrize("value", ["-1", "x"])
def test_bad_network_knobs_are_configuration_errors(value):
    from yieldcli.errors import ConfigError

    with pytest.raises(ConfigError, match="YIELD_SANDBOX_DROP_SENDS|must not be negative"):
        Network.from_env({"YIELD_SANDBOX_DROP_SENDS": value})


def test_a_process_killed_while_saving_leaves_the_last_good_state(tmp_path):
    import signal
    import subprocess
    import sys

    path = tmp_path / "chain.json"
    payer = funded(Runtime(path))
    code = (
        "import sys; from yieldcli.sandbox.runtime import Runtime\n"
        "rt = Runtime(sys.argv[1]); print('ready', flush=True)\n"
        "while True: rt.advance_slots(1)\n"
    )
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGKILL)  # somewhere in a save loop, often mid-write
        proc.wait(timeout=30)
        after = Runtime(path)  # loads, and clears what the killed writer left
        assert after.get_balance(payer.pubkey()) == 10 * SOL
        assert not list(tmp_path.glob(".chain.json.*.tmp"))


def test_an_unusable_lock_is_a_configuration_error(tmp_path):
    from yieldcli.errors import ConfigError

    (tmp_path / ".lock").mkdir()
    with pytest.raises(ConfigError, match="cannot lock the sandbox state folder"):
        Runtime(tmp_path / "chain.json")
