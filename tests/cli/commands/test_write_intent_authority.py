"""Accounts the user's signature controls beyond the wallet's token accounts, and destinations that only
look like the user's: each attack appended to a real transaction of every write action, refused before
signing (exit 10, or 11 when its simulation fails) with the chain unchanged, through `yield` and through
the Python client with a confirm that always says yes.
"""

from __future__ import annotations

import struct

import pytest
from solders.account import Account
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from tests.cli.commands.test_write_intent import _token_ix
from tests.cli.stand_in import TOKEN, USDC_MINT, USER_ATA, WALLET, World
from yieldcli.solana import programs

SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
STAKE = Pubkey.from_string("Stake11111111111111111111111111111111111111")
RECENT_BLOCKHASHES = Pubkey.from_string("SysvarRecentB1ockHashes11111111111111111111")
RENT_SYSVAR = Pubkey.from_string("SysvarRent111111111111111111111111111111111")
CLOCK = Pubkey.from_string("SysvarC1ock11111111111111111111111111111111")
STAKE_HISTORY = Pubkey.from_string("SysvarStakeHistory1111111111111111111111111")
SOL = 10**9


class Holdings:
    """What the user's keys control in the sandbox beyond its token accounts, set up on its chain."""

    def __init__(self, w: World):
        rt = w.runtime
        self.nonce = Keypair().pubkey()
        nonce_data = struct.pack("<II", 1, 1) + bytes(WALLET) + bytes(32) + struct.pack("<Q", 5000)
        rt.set_account(self.nonce, Account(SOL, nonce_data, SYSTEM, False, 2**64 - 1))
        self.stake = Keypair().pubkey()
        meta = struct.pack("<IQ", 1, 2_282_880) + bytes(WALLET) + bytes(WALLET) + struct.pack("<qQ", 0, 0) + bytes(32)
        rt.set_account(self.stake, Account(3 * SOL, meta + bytes(200 - len(meta)), STAKE, False, 2**64 - 1))
        self.seed = "yield"
        self.seeded = Pubkey.create_with_seed(WALLET, self.seed, SYSTEM)
        rt.set_account(self.seeded, Account(2 * SOL, b"", SYSTEM, False, 2**64 - 1))
        self.mint = rt.create_mint(6, authority=WALLET)
        self.stranger_mint_account = rt.create_associated_token_account(w.stranger, self.mint)
        # A USDC account a stranger owns in which the wallet is merely delegate and close authority.
        self.delegated = rt.create_associated_token_account(Keypair().pubkey(), USDC_MINT)
        account = rt.get_account(self.delegated)
        data = bytearray(account.data)
        data[64:72] = struct.pack("<Q", 5 * 10**6)  # it holds 5 USDC the wallet may spend
        data[72:108] = struct.pack("<I", 1) + bytes(WALLET)
        data[121:129] = struct.pack("<Q", 2**64 - 1)
        data[129:165] = struct.pack("<I", 1) + bytes(WALLET)
        rt.set_account(self.delegated, Account(account.lamports, bytes(data), account.owner, False, account.rent_epoch))
        # A 1-of-2 token multisig of the wallet and a stranger, and a USDC account it owns.
        self.multisig = Keypair().pubkey()
        ms = bytes([1, 2, 1]) + bytes(WALLET) + bytes(w.stranger) + bytes(32 * 9)
        rt.set_account(self.multisig, Account(rt.minimum_balance_for_rent_exemption(355), ms, TOKEN, False, 2**64 - 1))
        self.multisig_account = rt.create_associated_token_account(self.multisig, USDC_MINT)
        self.empty_usdt = None


def _system(tag: int, metas: list[AccountMeta], tail: bytes = b"") -> Instruction:
    return Instruction(SYSTEM, struct.pack("<I", tag) + tail, metas)


def _signer(key: Pubkey) -> AccountMeta:
    return AccountMeta(key, True, False)


def _w(key: Pubkey) -> AccountMeta:
    return AccountMeta(key, False, True)


def _r(key: Pubkey) -> AccountMeta:
    return AccountMeta(key, False, False)


def withdraw_nonce(w, h):
    return _system(
        5,
        [_w(h.nonce), _w(w.stranger), _r(RECENT_BLOCKHASHES), _r(RENT_SYSVAR), _signer(WALLET)],
        struct.pack("<Q", SOL),
    )


def authorize_nonce(w, h):
    return _system(7, [_w(h.nonce), _signer(WALLET)], bytes(w.stranger))


def transfer_with_seed(w, h):
    seed = struct.pack("<Q", len(h.seed)) + h.seed.encode()
    return _system(11, [_w(h.seeded), _signer(WALLET), _w(w.stranger)], struct.pack("<Q", SOL) + seed + bytes(SYSTEM))


def stake_withdraw(w, h):
    return Instruction(
        STAKE, struct.pack("<IQ", 4, SOL), [_w(h.stake), _w(w.stranger), _r(CLOCK), _r(STAKE_HISTORY), _signer(WALLET)]
    )


def stake_authorize(w, h):
    return Instruction(
        STAKE,
        struct.pack("<I", 1) + bytes(w.stranger) + struct.pack("<I", 1),
        [_w(h.stake), _r(CLOCK), _signer(WALLET)],
    )


def mint_set_authority(w, h):
    return Instruction(TOKEN, bytes([6, 0, 1]) + bytes(w.stranger), [_w(h.mint), _signer(WALLET)])


def mint_to_stranger(w, h):
    return programs.token_mint_to(h.mint, h.stranger_mint_account, WALLET, 10**12)


def approve_on_users_account(w, h):
    return Instruction(TOKEN, struct.pack("<BQ", 4, 2**64 - 1), [_w(USER_ATA), _r(w.stranger), _signer(WALLET)])


def set_owner_of_users_account(w, h):
    return Instruction(TOKEN, bytes([6, 2, 1]) + bytes(w.stranger), [_w(USER_ATA), _signer(WALLET)])


def drain_delegated(w, h):
    """Spend from the stranger's account in which the wallet is delegate: the wallet's signature is used."""
    return programs.token_transfer_checked(h.delegated, USDC_MINT, w.stranger_ata, WALLET, 1, 6)


def sol_to_stranger(w, h):
    return transfer(TransferParams(from_pubkey=WALLET, to_pubkey=w.stranger, lamports=SOL // 10))


APPENDED = {
    "System WithdrawNonceAccount of a nonce the user authorizes": (withdraw_nonce, "System WithdrawNonceAccount"),
    "System AuthorizeNonceAccount of a nonce the user authorizes": (authorize_nonce, "System AuthorizeNonceAccount"),
    "System TransferWithSeed from a seed-derived account": (transfer_with_seed, "System TransferWithSeed"),
    "Stake Withdraw from a stake account the user authorizes": (stake_withdraw, "is not one this request needs"),
    "Stake Authorize on it": (stake_authorize, "is not one this request needs"),
    "SetAuthority on a mint the user controls": (mint_set_authority, "Token SetAuthority of your account"),
    "MintTo from a mint the user controls": (mint_to_stranger, "Token MintTo of your account"),
    "Approve on the user's account": (approve_on_users_account, "Token Approve of your account"),
    "SetAuthority owner on the user's account": (set_owner_of_users_account, "Token SetAuthority of your account"),
    "spending from an account the user is only delegate of": (
        drain_delegated,
        "Token TransferChecked from your account",
    ),
    "SOL to a stranger": (sol_to_stranger, "System Transfer of 0.1 SOL from your wallet"),
}

ACTIONS = {
    "deposit": ("deposit", "--asset", "USDC", "--amount", "10"),
    "deposit --all": ("deposit", "--asset", "USDC", "--all"),
    "deposit SOL": ("deposit", "--asset", "SOL", "--amount", "0.5"),
    "withdraw": ("withdraw", "--asset", "USDC", "--amount", "5"),
    "withdraw --all": ("withdraw", "--asset", "USDC", "--all"),
    "withdraw --exclude-fees": ("withdraw", "--asset", "USDC", "--amount", "5", "--exclude-fees"),
    "withdraw SOL --unwrap-wsol": ("withdraw", "--asset", "SOL", "--amount", "0.2", "--unwrap-wsol"),
    "close-account": ("close-account", "--asset", "USDC"),
}


@pytest.fixture
def world(sandbox, run, tmp_path):
    w = World(sandbox, run, tmp_path)
    w.holdings = Holdings(w)
    yield w
    w.stand_in.stop()


def snapshot(w):
    h = w.holdings
    extra = [h.nonce, h.stake, h.seeded, h.mint, h.stranger_mint_account, h.delegated, h.multisig_account]
    return w.snapshot(), [w.runtime.get_account(a) for a in extra]


@pytest.mark.parametrize("action", list(ACTIONS))
@pytest.mark.parametrize("attack", list(APPENDED))
def test_an_appended_instruction_using_the_users_authority_is_refused(world, attack, action, record_property):
    make, message = APPENDED[attack]
    if "SOL" in action and "withdraw" in action:
        assert world.yield_("deposit", "--asset", "SOL", "--amount", "0.5", "--send", "--yes").code == 0
    world.doctor(lambda ixs: ixs + [make(world, world.holdings)])
    before = snapshot(world)
    refused = world.yield_(*ACTIONS[action], "--send", "--yes", "-o", "json")
    record_property(
        "outcome", f"exit {refused.code}: {refused.stderr.splitlines()[0] if refused.stderr else ''}"
    )  # for the attack table
    assert refused.code in (10, 11), refused.stderr
    if refused.code == 10:
        assert message in refused.stderr, refused.stderr
    else:
        assert "simulation failed" in refused.stderr, refused.stderr
    assert not refused.json().get("signature")
    assert snapshot(world) == before


def replace_deposit_with_transfer_to(account_of):
    def make(w):
        def change(ixs):
            i = _token_ix(ixs)
            amount = struct.unpack_from("<Q", bytes(ixs[i].data), 1)[0]
            ixs[i] = programs.token_transfer_checked(USER_ATA, USDC_MINT, account_of(w), WALLET, amount, 6)
            return ixs

        return change

    return make


LOOKALIKES = {
    "a 1-of-2 multisig of the user and a stranger": lambda w: w.holdings.multisig_account,
    "an account that names the user as delegate and close authority": lambda w: w.holdings.delegated,
}


@pytest.mark.parametrize("name", list(LOOKALIKES))
def test_a_deposit_to_an_account_that_only_looks_like_the_users_is_refused(world, name):
    world.doctor(replace_deposit_with_transfer_to(LOOKALIKES[name])(world))
    before = snapshot(world)
    refused = world.yield_(*ACTIONS["deposit"], "--send", "--yes")
    assert refused.code == 10 and "Token TransferChecked from your account" in refused.stderr, refused.stderr
    assert snapshot(world) == before


def test_the_python_client_refuses_on_every_write_path_with_an_always_yes_confirm(world):
    from yieldcli.errors import Refused

    before = snapshot(world)
    with world.client() as client:
        calls = {
            "deposit": lambda: client.deposit("USDC", "10"),
            "withdraw": lambda: client.withdraw("USDC", "5"),
            "withdraw all": lambda: client.withdraw("USDC", all=True),
            "close": lambda: client.close_account("USDC"),
        }
        for call in calls.values():
            for make, message in (
                APPENDED["System AuthorizeNonceAccount of a nonce the user authorizes"],
                APPENDED["Stake Withdraw from a stake account the user authorizes"],
            ):
                world.doctor(lambda ixs, make=make: ixs + [make(world, world.holdings)])
                with pytest.raises(Refused, match=message):
                    call().send(confirm=lambda *a: True)
    assert snapshot(world) == before
