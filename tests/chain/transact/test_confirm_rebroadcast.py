"""Rebroadcast until it lands, and waiting for durable-nonce transactions: a network that drops sends
(scripted, with a fake clock), then the sandbox RPC over loopback holding the first sends back."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from solders.hash import Hash
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.rpc.types import AccountInfo, SignatureStatus, TransactionRecord
from yieldcli.chain.transact.confirm import Rebroadcast, wait_for
from yieldcli.chain.transact.outcomes import Confirmed, Expired, expired, pending
from yieldcli.chain.transact.proof import Lifetime
from yieldcli.chain.tx.instructions import build_transaction
from yieldcli.errors import NetworkError
from yieldcli.sandbox.runtime import BLOCKHASH_WINDOW

SIG = "5" * 88
BLOCKHASH = "11111111111111111111111111111111"
LVBH = 1_000


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


class DroppingNetwork:
    """Drops the first `drop` sends; the next one lands. The block height grows one per second of
    the fake clock, from LVBH - `blocks_left`. Sends listed in `errors` (by number) fail."""

    def __init__(
        self, clock: Clock, *, drop: int, blocks_left: int = 150, errors=(), nonce_account: AccountInfo | None = None
    ):
        self.clock = clock
        self.drop = drop
        self.start_height = LVBH - blocks_left
        self.errors = set(errors)
        self.sent: list[tuple[float, bytes, bool]] = []
        self.landed = False
        self.nonce_account = nonce_account

    async def send(self, tx, *, skip_preflight=False):
        number = len(self.sent) + 1
        self.sent.append((self.clock.now, bytes(tx), skip_preflight))
        if number in self.errors:
            raise NetworkError("connection reset")
        if number > self.drop:
            self.landed = True
        return SIG

    async def signature_statuses_at(self, signatures, *, search_history=True):
        return [SignatureStatus(9, None, None, "finalized") if self.landed else None], 10**9

    async def recent_signatures_of(self, address, *, commitment=None, min_context_slot=None):
        return {SIG} if self.landed else set()

    async def first_available_block(self):
        return 0

    async def height_and_slot(self, commitment=None, *, min_context_slot=None):
        height = self.start_height + int(self.clock.now)
        return height, height

    async def blockhash_validity(self, blockhash, commitment=None, *, min_context_slot=None):
        height = self.start_height + int(self.clock.now)
        return height <= LVBH, height

    async def transaction(self, signature, *, commitment=None):
        return TransactionRecord(9, None, (), 5000) if self.landed else None

    async def account_info(self, address, *, commitment=None):
        return self.nonce_account


def wait(network: DroppingNetwork, clock: Clock, wire: bytes, **kwargs):
    rebroadcast = Rebroadcast(network, wire)
    asyncio.run(network.send(wire))  # the first send, as the caller makes it
    outcome = asyncio.run(
        wait_for(
            network, SIG, Lifetime(BLOCKHASH, LVBH), sleep=clock.sleep, clock=clock, rebroadcast=rebroadcast, **kwargs
        )
    )
    return outcome, rebroadcast


def test_dropped_sends_are_resent_every_two_seconds_until_it_lands():
    clock = Clock()
    network = DroppingNetwork(clock, drop=3)
    outcome, rebroadcast = wait(network, clock, b"signed bytes")
    assert isinstance(outcome, Confirmed)
    assert rebroadcast.sends == 4 and len(network.sent) == 4
    assert {wire for _, wire, _ in network.sent} == {b"signed bytes"}  # the same bytes, never re-signed
    assert [skip for _, _, skip in network.sent[1:]] == [True] * 3
    assert [t for t, _, _ in network.sent] == [0.0, 2.0, 4.0, 6.0]


def test_resending_stops_at_the_blockhash_deadline_and_it_expires():
    clock = Clock()
    network = DroppingNetwork(clock, drop=10**6, blocks_left=9)
    outcome, rebroadcast = wait(network, clock, b"never lands", timeout_s=60)
    assert isinstance(outcome, Expired) and outcome.last_valid_block_height == LVBH and outcome.block_height == LVBH + 1
    # Heights 991..1000 are valid (seconds 0..9): sends at 0, 2, 4, 6, 8; none after the deadline.
    assert [t for t, _, _ in network.sent] == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert rebroadcast.sends == 5
    assert clock.now == 10.0


def test_a_failed_resend_does_not_end_the_wait():
    clock = Clock()
    network = DroppingNetwork(clock, drop=2, errors={2, 3})
    outcome, rebroadcast = wait(network, clock, b"x")
    assert isinstance(outcome, Confirmed)
    assert (rebroadcast.sends, rebroadcast.failed_sends, rebroadcast.last_error) == (2, 2, "connection reset")
    assert len(network.sent) == 4


def test_pending_at_the_timeout_while_still_resending():
    clock = Clock()
    network = DroppingNetwork(clock, drop=10**6)
    outcome, rebroadcast = wait(network, clock, b"x", timeout_s=5)
    assert outcome == pending(SIG, None, None)
    assert rebroadcast.sends == 3  # at 0, 2 and 4 s


def nonce_account_info(address: Pubkey, authority: Pubkey, value: Hash) -> AccountInfo:
    data = (
        (1).to_bytes(4, "little")
        + (1).to_bytes(4, "little")
        + bytes(authority)
        + bytes(value)
        + (5000).to_bytes(8, "little")
    )
    return AccountInfo(address, 1_447_680, Pubkey.from_string("11111111111111111111111111111111"), data, False, 0)


def test_a_nonce_transaction_waits_past_any_block_height_until_the_nonce_moves():
    clock = Clock()
    account, authority, value = Keypair().pubkey(), Keypair().pubkey(), Hash.new_unique()
    network = DroppingNetwork(
        clock, drop=10**6, blocks_left=1, nonce_account=nonce_account_info(account, authority, value)
    )
    lifetime = Lifetime(None, None, str(account), str(value))
    rebroadcast = Rebroadcast(network, b"x")

    # Someone else advances the nonce after 30 s: our transaction can no longer land.
    original_sleep = clock.sleep

    async def sleep(seconds):
        await original_sleep(seconds)
        if clock.now >= 30:
            network.nonce_account = nonce_account_info(account, authority, Hash.new_unique())

    clock.sleep = sleep
    outcome = asyncio.run(
        wait_for(network, SIG, lifetime, sleep=clock.sleep, clock=clock, rebroadcast=rebroadcast, timeout_s=600)
    )
    assert outcome == expired(SIG, None, None, str(account))
    assert clock.now == 30.0  # far past the blockhash's height: a nonce transaction does not expire by height
    assert rebroadcast.sends == 15


def test_a_nonce_transaction_that_lands_is_confirmed_not_expired():
    clock = Clock()
    account, authority, value = Keypair().pubkey(), Keypair().pubkey(), Hash.new_unique()
    network = DroppingNetwork(clock, drop=1, nonce_account=nonce_account_info(account, authority, value))
    outcome = asyncio.run(
        wait_for(
            network,
            SIG,
            Lifetime(None, None, str(account), str(value)),
            sleep=clock.sleep,
            clock=clock,
            rebroadcast=Rebroadcast(network, b"x"),
        )
    )
    assert isinstance(outcome, Confirmed)


def test_sandbox_holds_back_the_first_sends_and_rebroadcast_lands_exactly_one(sandbox_chain):
    runtime, server = sandbox_chain
    payer, to = Keypair(), Keypair()
    runtime.airdrop(payer.pubkey(), 10**9)

    async def main():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            ix = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=to.pubkey(), lamports=10**8))
            tx = sign_transaction(build_transaction([ix], payer.pubkey(), latest.blockhash), [payer]).transaction
            # The sandbox drops the first 2 sends of each transaction, as a congested leader does.
            runtime.network = replace(runtime.network, drop_sends=2)
            signature = await rpc.send(tx)
            rebroadcast = Rebroadcast(rpc, bytes(tx), interval=0.05)
            outcome = await wait_for(
                rpc,
                signature,
                Lifetime(str(latest.blockhash), latest.last_valid_block_height),
                timeout_s=20,
                poll_interval=0.02,
                rebroadcast=rebroadcast,
            )
            return signature, outcome, rebroadcast

    signature, outcome, rebroadcast = asyncio.run(main())
    assert isinstance(outcome, Confirmed) and outcome.signature == str(signature)
    assert rebroadcast.sends == 3 and rebroadcast.failed_sends == 0  # two dropped, the third landed
    assert runtime.get_balance(to.pubkey()) == 10**8  # once: the same signature never lands twice
    print(f"sends until landing: {rebroadcast.sends}")


def test_sandbox_never_lands_it_and_resending_ends_when_the_blockhash_passes(sandbox_chain):
    runtime, server = sandbox_chain
    payer, to = Keypair(), Keypair()
    runtime.airdrop(payer.pubkey(), 10**9)
    polls = []

    def on_status(seen):
        polls.append(seen)
        if len(polls) == 12:  # after a few resends, the cluster moves past the blockhash's last valid height
            runtime.advance_slots(BLOCKHASH_WINDOW + 1)

    async def main():
        async with Rpc(server.url) as rpc:
            latest = await rpc.latest_blockhash()
            ix = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=to.pubkey(), lamports=10**8))
            tx = sign_transaction(build_transaction([ix], payer.pubkey(), latest.blockhash), [payer]).transaction
            runtime.network = replace(runtime.network, drop_sends=1_000)  # every send is dropped
            signature = await rpc.send(tx)
            rebroadcast = Rebroadcast(rpc, bytes(tx), interval=0.05)
            outcome = await wait_for(
                rpc,
                signature,
                Lifetime(str(latest.blockhash), latest.last_valid_block_height),
                timeout_s=20,
                poll_interval=0.02,
                rebroadcast=rebroadcast,
                on_status=on_status,
            )
            return signature, outcome, rebroadcast

    signature, outcome, rebroadcast = asyncio.run(main())
    assert isinstance(outcome, Expired) and outcome.block_height > outcome.last_valid_block_height
    assert rebroadcast.sends >= 2 and rebroadcast.failed_sends == 0
    assert len(polls) == 12  # no poll, and so no resend, after the deadline
    assert runtime.get_balance(to.pubkey()) == 0 and runtime.get_balance(payer.pubkey()) == 10**9  # nothing spent
