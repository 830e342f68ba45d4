"""The pure rules of the intent guard: instruction verdicts by program and kind, whose accounts are whose, the pin."""

import struct

from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import AssignParams, TransferParams, assign, transfer

from yieldcli.chain.guard.calls import match_calls
from yieldcli.chain.guard.holdings import Holdings, authority_kind
from yieldcli.chain.guard.instructions import Context, verdicts
from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.message import resolve
from yieldcli.chain.guard.pinned import pinned_program, setting_problem
from yieldcli.chain.guard.strategies import layout_for
from yieldcli.chain.rpc.cluster_identity import GENESIS_HASHES
from yieldcli.chain.tx.state import State
from yieldcli.solana import programs
from yieldcli.tokens import STRATEGY_PROGRAM_ID, WSOL_MINT

WALLET = Keypair().pubkey()
STRANGER = Keypair().pubkey()
PINNED = Pubkey.from_string(programs.SANDBOX_STRATEGY_PROGRAM)
WSOL_ATA = programs.associated_token_address(WALLET, Pubkey.from_string(WSOL_MINT))


def judge(action, *ixs, controlled=(), wsol=(), nonce=None, asset=WSOL_MINT, wrap=None, opens=()):
    """`wrap`: (the account a SOL deposit wraps into, the lamports it lacks there); `opens`: what it pays into."""
    message = MessageV0.try_compile(WALLET, list(ixs), [], Hash.default())
    owned = frozenset({str(WALLET), str(WSOL_ATA)})
    ctx = Context(
        action,
        str(WALLET),
        str(WALLET),
        str(PINNED),
        nonce,
        owned,
        owned | {str(c) for c in controlled},
        frozenset(str(w) for w in wsol),
        asset=asset,
        wrap_into=str(wrap[0]) if wrap else None,
        wrap_lamports=wrap[1] if wrap else None,
        opens=frozenset(str(o) for o in opens),
    )
    resolved = resolve(message)
    intent = Intent(action, str(WALLET), str(WALLET), WSOL_MINT, 5, "S", strategy_program=str(PINNED))
    calls = match_calls(intent, resolved, Holdings(intent, {}, {}, layout_for(str(PINNED))), layout_for(str(PINNED)))
    return verdicts(resolved, ctx, calls.verdicts)


def test_a_deposit_may_wrap_sol_into_the_users_own_account_only():
    wrap = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=WSOL_ATA, lamports=5))
    sync = programs.token_sync_native(WSOL_ATA)
    away = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=STRANGER, lamports=5))
    found = judge("deposit", wrap, sync, away, wsol=[WSOL_ATA], wrap=(WSOL_ATA, 5))
    assert [v.ok for v in found] == [True, True, False]
    stranger = f"{str(STRANGER)[:4]}…{str(STRANGER)[-4:]}"
    assert found[2].reason == f"instruction 3: System Transfer of 0.000000005 SOL from your wallet to {stranger}"
    # The same wrap is not a kind a withdrawal needs, nor a deposit of another asset.
    assert not judge("withdraw", wrap)[0].ok
    assert not judge("deposit", wrap, wsol=[WSOL_ATA], asset="EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")[0].ok


def test_a_wrap_is_exactly_what_the_deposit_lacks_once_and_synced_after():
    """Known before the simulation (which a lying RPC may answer for another transaction)."""
    sync = programs.token_sync_native(WSOL_ATA)

    def send(lamports):
        return transfer(TransferParams(from_pubkey=WALLET, to_pubkey=WSOL_ATA, lamports=lamports))

    over = judge("deposit", send(5 + 5 * 10**9), sync, wsol=[WSOL_ATA], wrap=(WSOL_ATA, 5))[0]
    assert not over.ok and "the deposit needs 0.000000005 SOL wrapped there" in over.reason
    unsynced = judge("deposit", sync, send(5), wsol=[WSOL_ATA], wrap=(WSOL_ATA, 5))[1]
    assert not unsynced.ok and "no SyncNative of that account follows" in unsynced.reason
    twice = judge("deposit", send(5), sync, send(5), sync, wsol=[WSOL_ATA], wrap=(WSOL_ATA, 5))
    assert not twice[0].ok and not twice[2].ok and "one of 2 transfers into that account" in twice[2].reason
    # into another wrapped-SOL account of the user's than the one the deposit takes from
    other = Keypair().pubkey()
    elsewhere = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=other, lamports=5))
    assert not judge(
        "deposit", elsewhere, programs.token_sync_native(other), wsol=[WSOL_ATA, other], wrap=(WSOL_ATA, 5)
    )[0].ok


def test_an_account_is_opened_only_where_the_action_pays():
    from solders.instruction import Instruction as Ix

    def idempotent(owner):
        made = programs.create_associated_token_account(WALLET, owner, Pubkey.from_string(WSOL_MINT))
        return Ix(made.program_id, b"\x01", made.accounts)

    assert judge("withdraw", idempotent(WALLET), opens=[WSOL_ATA])[0].ok
    beside = judge("withdraw", idempotent(WALLET), opens=[Keypair().pubkey()])[0]  # paid into another account
    assert not beside.ok and "which the action does not pay into" in beside.reason
    assert not judge("withdraw", idempotent(WALLET))[0].ok  # nothing paid: nothing opened


def test_kinds_are_named_by_index_and_only_the_pinned_program_is_trusted():
    found = judge(
        "withdraw",
        assign(AssignParams(pubkey=WALLET, owner=STRANGER)),
        Instruction(PINNED, b"\x02", [AccountMeta(WALLET, True, False)]),
        Instruction(STRANGER, b"", [AccountMeta(WALLET, True, False)]),
        Instruction(STRANGER, b"", [AccountMeta(Keypair().pubkey(), False, True)]),
    )
    assert found[0].reason == "instruction 1: System Assign of your wallet" and not found[0].ok
    # the pinned program's instruction is decoded: this one is not one of its instructions
    assert not found[1].ok and found[1].kind == "strategy unknown" and "not an instruction of" in found[1].reason
    assert (
        not found[2].ok and "is not one this request needs, and it is given your wallet as a signer" in found[2].reason
    )
    assert found[3].ok  # given none of the user's accounts: it cannot use the user's authority


def test_unwrapping_closes_the_users_wsol_account_to_the_wallet_and_nowhere_else():
    assert judge("withdraw", programs.token_close_account(WSOL_ATA, WALLET, WALLET), wsol=[WSOL_ATA])[0].ok
    assert not judge("withdraw", programs.token_close_account(WSOL_ATA, STRANGER, WALLET), wsol=[WSOL_ATA])[0].ok
    assert not judge("deposit", programs.token_close_account(WSOL_ATA, WALLET, WALLET), wsol=[WSOL_ATA])[0].ok


def test_a_durable_nonce_is_allowed_only_when_asked_for_and_only_first():
    nonce = Keypair().pubkey()
    advance = Instruction(
        Pubkey.from_string(programs.SYSTEM_PROGRAM),
        struct.pack("<I", 4),
        [AccountMeta(nonce, False, True), AccountMeta(WALLET, True, False)],
    )
    assert judge("deposit", advance, nonce=str(nonce))[0].ok
    unasked = judge("deposit", advance)[0]
    assert not unasked.ok and "a durable-nonce lifetime" in unasked.reason and "did not ask for" in unasked.reason
    assert not judge("deposit", advance, nonce=str(Keypair().pubkey()))[0].ok  # another nonce than the one named
    memo = programs.memo("x")
    assert not judge("deposit", memo, advance, nonce=str(nonce))[1].ok  # never after the first instruction


def test_what_the_wallet_controls_is_read_from_the_account():
    wallet = str(WALLET)
    nonce = State(10, 80, None, programs.SYSTEM_PROGRAM, struct.pack("<II", 1, 1) + bytes(WALLET) + bytes(40))
    assert authority_kind(nonce, wallet) == "nonce"
    stake = State(
        10,
        200,
        None,
        "Stake11111111111111111111111111111111111111",
        bytes(12) + bytes(STRANGER) + bytes(WALLET) + bytes(124),
    )
    assert authority_kind(stake, wallet) == "stake"
    mint = State(10, 82, None, programs.TOKEN_PROGRAM, struct.pack("<I", 1) + bytes(WALLET) + bytes(46))
    assert authority_kind(mint, wallet) == "mint"
    assert authority_kind(State(10, 0, None, programs.SYSTEM_PROGRAM, b""), wallet) is None


def test_the_program_is_pinned_per_cluster():
    mainnet = GENESIS_HASHES["mainnet-beta"]
    assert pinned_program(mainnet, None) == STRATEGY_PROGRAM_ID
    assert pinned_program(mainnet, str(STRANGER)) == STRATEGY_PROGRAM_ID  # a setting never replaces mainnet's pin
    assert setting_problem(mainnet, str(STRANGER)) is not None
    assert pinned_program("sandbox-genesis", None) == programs.SANDBOX_STRATEGY_PROGRAM
    assert pinned_program(GENESIS_HASHES["devnet"], str(STRANGER)) == str(STRANGER)
