"""The attacks of issue 25 on the guard's proof of the whole effect, as doctors for the stand-in service
(tests/cli/stand_in.py) and as hostile transactions for `yield tx sign/send`, by the issue's kinds; the
world they run in is tests/cli/effect_world.py.

A setup takes the `World` and installs the doctor the stand-in applies to the sandbox's own answer.
Everything an attack needs on chain (a stranger's nonce, an attacker's mint with a pre-funded vault
address, a lookup table holding a stranger's account) is made here, on the sandbox's chain, with the
sandbox's own helpers.
"""

from __future__ import annotations

import base64
import hashlib
import struct

from solders.account import Account
from solders.compute_budget import set_compute_unit_limit
from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import AdvanceNonceAccountParams, advance_nonce_account
from solders.transaction import VersionedTransaction

from tests.cli.commands.test_trust_cmd import plain_transfer
from tests.cli.effect_world import (
    CLOSE,
    DEPOSIT,
    POSITION,
    SECOND_POSITION,
    WITHDRAW,
    WITHDRAW_2000_EXCLUDE_FEES,
    WITHDRAW_ALL,
    WITHDRAW_JITOSOL_ALL,
    WITHDRAW_SOL_ALL_UNWRAP,
    position_of,
)
from tests.cli.stand_in import USDC_MINT, USER_ATA, WALLET, World, decompile
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, SECOND_STRATEGY_ID
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp

SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
ATTACKER_STRATEGY_ID = "attacker-0000-4000-8000-000000000666"  # a strategy no one offered: a new position
NONCE_SIZE = 80


def doctor_tx(w: World, change) -> None:
    """Serve the sandbox's transactions with `change(tx)` applied to the whole transaction."""
    w.stand_in.doctor = change


# ---- kind 1: the pinned program used against the user ----------------------------------------------


def close_other_position(recipient_of):
    """Beside the asked action, the program's Close of the user's other USDC position to `recipient_of(w)`."""
    return lambda w: lambda ixs: ixs + [sp.close(WALLET, recipient_of(w), USDC_MINT, SECOND_POSITION)]


def close_other_position_via_table(w: World):
    """The same Close, the stranger's account loaded only from a lookup table (created for this)."""
    table = w.runtime.create_lookup_table([w.stranger_ata])
    w.runtime.advance_slots(1)
    w.doctor(close_other_position(lambda w: w.stranger_ata)(w), {table: [w.stranger_ata]})


def strategy_index(ixs: list[Instruction], tag: int) -> int:
    return next(i for i, ix in enumerate(ixs) if ix.program_id == sp.PROGRAM and bytes(ix.data)[0] == tag)


# ---- kind 2: allowances instead of exact amounts ----------------------------------------------------


def withdraw_all_one_percent_to_stranger(w: World):
    """`withdraw --all` answered by a Withdraw of 99.02 % to the user's account and the program's Close
    paying the rest of the position (0.98 %, no fee) to a stranger's account of the same mint: under 1 %
    of what the user receives."""

    def change(ixs):
        i = strategy_index(ixs, sp.WITHDRAW)
        destination, mint, position = (ixs[i].accounts[k].pubkey for k in (1, 2, 5))
        balance = position_of(w, position).balance
        to_stranger = balance * 98 // 10_000
        ixs[i] = sp.withdraw(WALLET, destination, mint, DEMO_STRATEGY_ID, balance - to_stranger)
        stranger = programs.associated_token_address(w.stranger, mint)
        ixs.insert(i + 1, sp.close(WALLET, stranger, mint, position))
        return ixs

    return change


def beside_a_withdrawal_the_other_position_to_stranger(w: World):
    """Beside a withdrawal the user's other USDC position (15 USDC, see effect_world.py) closed to a
    stranger: 15·10⁶ raw units are under 1 % of 2,000 USDC received with `--exclude-fees`, and of 8
    JitoSOL's 8·10⁹ raw units (mints added together)."""
    return close_other_position(lambda w: w.stranger_ata)(w)


# ---- kind 3: the wrong position ------------------------------------------------------------------


def deposit_into(strategy_id: str):
    """The asked deposit's instruction carrying another strategy's key: its position gets the tokens."""

    def make(w: World):
        def change(ixs):
            i = strategy_index(ixs, sp.DEPOSIT)
            amount = struct.unpack_from("<Q", bytes(ixs[i].data), 1)[0]
            ixs[i] = sp.deposit(WALLET, WALLET, USER_ATA, USDC_MINT, strategy_id, amount)
            return ixs

        return change

    return make


def strategy_named(verdicts: list[dict], key_of: str) -> list[dict]:
    """The verdicts of strategy-program instructions, each naming the strategy it targets as proposed
    for the guard: `{"strategy": {"id": str | None, "key": hex of sha256(id)}}`."""
    named = [v for v in verdicts if "strategy" in v]
    assert named, verdicts
    assert all(v["strategy"]["key"] == hashlib.sha256(key_of.encode()).hexdigest() for v in named), named
    return named


# ---- kind 4: SOL the program takes -----------------------------------------------------------------


def init_vaults(prefunded: bool):
    """InitVault, paid by the user, for two mints of an attacker: with `prefunded`, their vault addresses
    already hold lamports, so the program tops them up from the user's SOL (Transfer, not CreateAccount)."""

    def make(w: World):
        attacker = Keypair().pubkey()
        mints = [w.runtime.create_mint(6, authority=attacker) for _ in range(2)]
        if prefunded:
            for mint in mints:
                w.runtime.set_account(sp.vault_address(mint), Account(100_000, b"", SYSTEM, False, 2**64 - 1))
        return lambda ixs: ixs + [sp.init_vault(WALLET, mint) for mint in mints]

    return make


# ---- kind 5: no simulation, still signed -------------------------------------------------------------


def through_missing_table(pay):
    """`pay(w, account)` beside the asked action, `account` a stranger's taken from entry 0 of a lookup table
    that does not exist (yet): the simulation cannot run."""

    def make(w: World):
        missing = Keypair().pubkey()
        w.doctor(lambda ixs: ixs + [pay(w, w.stranger_ata)], {missing: [w.stranger_ata]})

    return make


def whole_balance_to(w: World, account: Pubkey) -> Instruction:
    held = w.runtime.token_account(USER_ATA)[2]
    return programs.token_transfer_checked(USER_ATA, USDC_MINT, account, WALLET, held, 6)


def position_closed_to(w: World, account: Pubkey) -> Instruction:
    return sp.close(WALLET, account, USDC_MINT, POSITION)


# ---- kind 6: a lifetime nobody asked for ---------------------------------------------------------------


def nonce_account(w: World, authority: Pubkey) -> tuple[Pubkey, Hash]:
    """A durable-nonce account of `authority` on the sandbox's chain, and its nonce."""
    address, value = Keypair().pubkey(), Hash(hashlib.sha256(bytes(Keypair().pubkey())).digest())
    data = struct.pack("<II", 1, 1) + bytes(authority) + bytes(value) + struct.pack("<Q", 5000)
    w.runtime.set_account(address, Account(w.runtime.minimum_balance_for_rent_exemption(NONCE_SIZE), data, SYSTEM))
    return address, value


def resigned(tx: VersionedTransaction, ixs: list[Instruction], blockhash: Hash, others: list[Keypair]):
    """`ixs` compiled for the same payer on `blockhash`, the slots of `others` already signed by them."""
    payer = tx.message.account_keys[0]
    message = MessageV0.try_compile(payer, ixs, [], blockhash)
    count = message.header.num_required_signatures
    signatures = [Signature.default()] * count
    keys = list(message.account_keys)
    for other in others:
        signatures[keys.index(other.pubkey())] = other.sign_message(to_bytes_versioned(message))
    return VersionedTransaction.populate(message, signatures)


def on_nonce(attackers: bool):
    """The service's transaction rebuilt on a durable nonce: the attacker's own, its signature already in
    place (the attacker decides when it lands), or a fresh one whose authority is the user (valid forever)."""

    def make(w: World):
        attacker = Keypair()
        address, value = nonce_account(w, attacker.pubkey() if attackers else WALLET)
        advance = advance_nonce_account(
            AdvanceNonceAccountParams(
                nonce_pubkey=address, authorized_pubkey=attacker.pubkey() if attackers else WALLET
            )
        )
        signers = [attacker] if attackers else []
        doctor_tx(w, lambda tx: resigned(tx, [advance, *decompile(tx, w.tables)], value, signers))

    return make


def cosigned_by_stranger(w: World):
    """A signature slot the user did not name, already filled: the stranger signs a memo beside the action."""
    stranger = Keypair()

    def change(tx):
        memo = programs.memo("co-signed", [stranger.pubkey()])
        return resigned(tx, [*decompile(tx, w.tables), memo], tx.message.recent_blockhash, [stranger])

    doctor_tx(w, change)


# ---- kind 7: `tx sign` with no stated intent ----------------------------------------------------------


def unstated(w: World, instruction: Instruction) -> str:
    """A transaction from anywhere, paid by the user, whose one real instruction is `instruction`: base64."""
    blockhash = Hash.from_string(w.runtime.latest_blockhash()[0])
    message = MessageV0.try_compile(WALLET, [set_compute_unit_limit(60_000), instruction], [], blockhash)
    tx = VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)
    return base64.b64encode(bytes(tx)).decode()


# ---- the attacks, by the kinds -----------------------------------------------------------------


def install(make):
    """A doctor for `World.doctor`, installed."""
    return lambda w: w.doctor(make(w))


def trusted_deposit_and_close_to_the_trusted_account(w):
    """The deposit made by a plain transfer to a destination the user trusts, and beside it the program's
    Close of the user's other position paying into that same trusted account."""
    added = w.yield_("config", "trust", "add", str(w.stranger_ata), "--asset", "USDC")
    assert added.code == 0, added.stderr
    close = sp.close(WALLET, w.stranger_ata, USDC_MINT, SECOND_POSITION)
    w.doctor(lambda ixs: [*plain_transfer(w.stranger_ata, 10 * 10**6)(ixs), close])


TO_STRANGER = close_other_position(lambda w: w.stranger_ata)

ATTACKS = {
    # name: (request, install the doctor, exit codes that refuse: 11 where the simulation cannot run)
    "k1-deposit-close-other-position": (DEPOSIT, install(TO_STRANGER), {10}),
    "k1-withdraw-close-other-position": (WITHDRAW, install(TO_STRANGER), {10}),
    "k1-close-account-close-other-position": (CLOSE, install(TO_STRANGER), {10}),
    "k1-deposit-close-other-position-recipient-in-table": (DEPOSIT, close_other_position_via_table, {10}),
    "k1-trusted-deposit-close-other-position-into-it": (
        DEPOSIT,
        trusted_deposit_and_close_to_the_trusted_account,
        {10},
    ),
    "k2-withdraw-all-99-to-user-rest-to-stranger": (
        WITHDRAW_ALL,
        install(withdraw_all_one_percent_to_stranger),
        {10},
    ),
    "k2-withdraw-sol-all-unwrap-99-to-user-rest-to-stranger": (
        WITHDRAW_SOL_ALL_UNWRAP,
        install(withdraw_all_one_percent_to_stranger),
        {10},
    ),
    "k2-withdraw-exclude-fees-2000-and-15-usdc-of-other-position-to-stranger": (
        WITHDRAW_2000_EXCLUDE_FEES,
        install(beside_a_withdrawal_the_other_position_to_stranger),
        {10},
    ),
    "k2-withdraw-jitosol-all-covers-15-usdc-of-other-position-to-stranger": (
        WITHDRAW_JITOSOL_ALL,
        install(beside_a_withdrawal_the_other_position_to_stranger),
        {10},
    ),
    "k3-deposit-into-second-strategy": (DEPOSIT, install(deposit_into(SECOND_STRATEGY_ID)), {10}),
    "k3-deposit-opens-position-in-unoffered-strategy": (
        DEPOSIT,
        install(deposit_into(ATTACKER_STRATEGY_ID)),
        {10},
    ),
    "k4-deposit-init-vaults-prefunded": (DEPOSIT, install(init_vaults(prefunded=True)), {10}),
    "k4-withdraw-init-vault": (WITHDRAW, install(init_vaults(prefunded=False)), {10}),
    "k5-deposit-whole-balance-to-missing-table": (
        DEPOSIT,
        through_missing_table(whole_balance_to),
        {10, 11},
    ),
    "k5-deposit-close-position-to-missing-table": (
        DEPOSIT,
        through_missing_table(position_closed_to),
        {10, 11},
    ),
    "k6-deposit-on-attackers-nonce-attacker-signed": (DEPOSIT, on_nonce(attackers=True), {10}),
    "k6-deposit-on-fresh-nonce-of-the-user": (DEPOSIT, on_nonce(attackers=False), {10}),
    "k6-withdraw-cosigned-by-stranger": (WITHDRAW, cosigned_by_stranger, {10}),
}
