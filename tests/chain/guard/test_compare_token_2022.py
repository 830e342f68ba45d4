"""The guard on a Token-2022 asset, in-process: the sandbox program's real instructions naming the
Token-2022 program, Token-2022 token accounts (165 bytes + account type + extensions) before and after,
the mint account as the chain holds it, and the verdict. Each case fails when the Token-2022 handling
it names is broken."""

from __future__ import annotations

import struct

from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey

from tests.token_accounts import token_account_data
from yieldcli.chain.guard.compare import compare
from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.message import resolve
from yieldcli.chain.tx.state import State, parse_token
from yieldcli.solana import programs, token_layout
from yieldcli.solana import strategy_program as sp

MINT = Keypair().pubkey()
T22 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
SPL = Pubkey.from_string(programs.TOKEN_PROGRAM)
WALLET = Keypair().pubkey()
STRANGER = Keypair().pubkey()
PINNED = programs.SANDBOX_STRATEGY_PROGRAM
S = "strategy-a"
FEE = 5_000
RENT = 2_074_080  # 170 bytes
ATA = programs.associated_token_address(WALLET, MINT, T22)
SPL_ATA = programs.associated_token_address(WALLET, MINT, SPL)  # the SPL Token derivation: not the user's account
STRANGER_ATA = programs.associated_token_address(STRANGER, MINT, T22)
VAULT = sp.vault_address(MINT)
POSITION = sp.position_address(WALLET, S, MINT)
# The account type (2: account) and ImmutableOwner, as the associated token account program makes them.
ACCOUNT_TAIL = bytes([token_layout.ACCOUNT_TYPE_ACCOUNT]) + struct.pack("<HH", 7, 0)


def t22_token(owner, amount, **more) -> State:
    data = token_account_data(MINT, owner, amount, **more) + ACCOUNT_TAIL
    return State(RENT, len(data), parse_token(programs.TOKEN_2022_PROGRAM, data), programs.TOKEN_2022_PROGRAM, data)


def position(deposited, balance) -> State:
    data = sp.POSITION_MAGIC + bytes(WALLET) + sp.strategy_key(S) + bytes(MINT) + struct.pack("<QQ", deposited, balance)
    return State(1_781_760, 128, None, PINNED, data + bytes(8))


def mint(*extensions: tuple[int, bytes]) -> token_layout.MintInfo:
    data = token_layout.mint_data(
        6, authority=STRANGER, extra=[(token_layout.METADATA_POINTER, bytes(64)), *extensions]
    )
    found = token_layout.parse_mint(programs.TOKEN_2022_PROGRAM, data)
    assert found is not None
    return found


def system(lamports) -> State:
    return State(lamports, 0, None, programs.SYSTEM_PROGRAM, b"")


def judge(intent, ixs, before, after, mints=None):
    message = MessageV0.try_compile(WALLET, ixs, [], Hash.default())
    mints = {str(MINT): mint()} if mints is None else mints
    decimals = {address: info.decimals for address, info in mints.items()}  # as read.py reads them
    return compare(intent, before, after, fee=FEE, resolved=resolve(message), mints=mints, decimals=decimals)


def withdraw_world(destination=ATA, **changes):
    """Before and after of a 10-token withdrawal (gross) from a position of 60 into `destination`."""
    net = 10_000_000 - sp.withdrawal_fee(10_000_000)
    before = {
        str(WALLET): system(10**9),
        str(ATA): t22_token(WALLET, 100_000_000),
        str(STRANGER_ATA): t22_token(STRANGER, 0),
        str(VAULT): t22_token(sp.authority_address(), 500_000_000),
        str(POSITION): position(50_000_000, 60_000_000),
    }
    after = {
        **before,
        str(WALLET): system(10**9 - FEE),
        str(destination): t22_token(before[str(destination)].token.owner, before[str(destination)].token.amount + net),
        str(VAULT): t22_token(sp.authority_address(), 500_000_000 - net),
        str(POSITION): position(50_000_000, 50_000_000),
    }
    after.update(changes)
    return before, after


def withdraw_ix(destination=ATA, token_program=T22):
    return sp.withdraw(WALLET, destination, MINT, S, 10_000_000, token_program=token_program)


WITHDRAW = Intent("withdraw", str(WALLET), str(WALLET), str(MINT), 10_000_000, S, strategy_program=PINNED)
DEPOSIT = Intent("deposit", str(WALLET), str(WALLET), str(MINT), 10_000_000, S, strategy_program=PINNED)


def test_token_2022_accounts_are_read_as_token_accounts():
    data = token_account_data(MINT, WALLET, 7) + ACCOUNT_TAIL
    assert programs.parse_token_account(programs.TOKEN_2022_PROGRAM, data) == (str(MINT), str(WALLET), 7)
    assert programs.parse_token_account(programs.TOKEN_PROGRAM, data) is None  # SPL Token's are 165 bytes
    mint_bytes = token_layout.mint_data(6, authority=STRANGER, extra=[(token_layout.METADATA_POINTER, bytes(64))])
    assert programs.parse_token_account(programs.TOKEN_2022_PROGRAM, mint_bytes) is None  # a mint, by its type
    assert programs.parse_mint_decimals(programs.TOKEN_2022_PROGRAM, mint_bytes) == 6
    assert programs.parse_mint_decimals(programs.TOKEN_2022_PROGRAM, data) is None  # an account, by its type
    assert programs.parse_mint_decimals(programs.TOKEN_PROGRAM, mint_bytes) is None  # SPL Token's are 82 bytes


def test_a_withdrawal_to_the_users_token_2022_account_passes():
    check = judge(WITHDRAW, [withdraw_ix()], *withdraw_world())
    assert check.ok, check.differences


def test_the_associated_account_is_derived_with_the_mints_program():
    # The mint as the chain says (Token-2022) decides the user's associated account, not the SPL default.
    before, after = withdraw_world()
    spl_mint = {str(MINT): token_layout.MintInfo(programs.TOKEN_PROGRAM, 6, None, None)}
    check = judge(WITHDRAW, [withdraw_ix()], before, after, mints=spl_mint)
    assert any("names the destination" in d for d in check.differences), check.differences


def test_an_account_derived_with_the_wrong_token_program_is_refused():
    before, after = withdraw_world()
    before[str(SPL_ATA)] = after[str(SPL_ATA)] = None
    check = judge(WITHDRAW, [withdraw_ix(SPL_ATA)], before, after)
    assert any(f"names the destination {str(SPL_ATA)[:4]}" in d for d in check.differences), check.differences
    opened = programs.create_associated_token_account(WALLET, WALLET, MINT, token_program=SPL)
    check = judge(WITHDRAW, [opened, withdraw_ix()], *withdraw_world())
    assert any("with the token program Toke" in d and "not Toke" in d for d in check.differences), check.differences
    right = programs.create_associated_token_account(WALLET, WALLET, MINT, token_program=T22)
    assert judge(WITHDRAW, [right, withdraw_ix()], *withdraw_world()).ok


def test_the_strategy_call_must_name_the_mints_token_program():
    check = judge(WITHDRAW, [withdraw_ix(token_program=SPL)], *withdraw_world())
    assert any("names the token program" in d for d in check.differences), check.differences


def test_a_payout_to_a_token_2022_account_of_someone_else_is_refused():
    check = judge(WITHDRAW, [withdraw_ix(STRANGER_ATA)], *withdraw_world(STRANGER_ATA))
    assert any(f"names the destination {str(STRANGER_ATA)[:4]}" in d for d in check.differences), check.differences


def test_a_token_2022_account_someone_else_may_close_or_spend_from_is_not_paid_into():
    closable = t22_token(WALLET, 100_000_000, close=STRANGER)
    before, after = withdraw_world()
    before[str(ATA)] = closable
    after[str(ATA)] = t22_token(WALLET, after[str(ATA)].token.amount, close=STRANGER)
    check = judge(WITHDRAW, [withdraw_ix()], before, after)
    assert not check.ok, "an account a stranger may close took the payout"
    delegated = dict(delegate=STRANGER, delegated=10**12)
    before, after = withdraw_world()
    before[str(ATA)] = t22_token(WALLET, 100_000_000, **delegated)
    after[str(ATA)] = t22_token(WALLET, after[str(ATA)].token.amount, **delegated)
    check = judge(WITHDRAW, [withdraw_ix()], before, after)
    assert any("may spend" in d and "as its delegate" in d for d in check.differences), check.differences


def test_the_issuers_permanent_delegate_and_transfer_hook_are_shown_not_refused():
    # PYUSD's own rules: a permanent delegate, a transfer hook with no program, a transfer fee at 0.
    before, after = withdraw_world()
    hook_authority = Keypair().pubkey()
    pyusd_like = {
        str(MINT): mint(
            (token_layout.PERMANENT_DELEGATE, bytes(STRANGER)),
            (token_layout.TRANSFER_HOOK, bytes(hook_authority) + bytes(32)),
            (token_layout.TRANSFER_FEE_CONFIG, bytes(STRANGER) + bytes(76)),
        )
    }
    check = judge(WITHDRAW, [withdraw_ix()], before, after, mints=pyusd_like)
    assert check.ok, check.differences
    shown = "\n".join(check.unverified)
    assert f"permanent delegate {STRANGER} may move or burn tokens of any account" in shown, shown
    assert f"transfer-hook authority {hook_authority} may set a program" in shown, shown
    assert "transfer fee is 0 basis points" in shown, shown
    # A hook whose program is set is named: it ran in the simulation, whose whole effect was still exact.
    hook = Keypair().pubkey()
    with_hook = {str(MINT): mint((token_layout.TRANSFER_HOOK, bytes(hook_authority) + bytes(hook)))}
    check = judge(WITHDRAW, [withdraw_ix()], before, after, mints=with_hook)
    assert check.ok and any(f"transfer hook program {hook} runs" in u for u in check.unverified), check
    # ... and a hook (or anything) that changes the effect is refused by the effect itself.
    after[str(ATA)] = t22_token(WALLET, after[str(ATA)].token.amount - 1)
    assert not judge(WITHDRAW, [withdraw_ix()], before, after, mints=with_hook).ok
    # A mint with neither says nothing.
    assert not judge(WITHDRAW, [withdraw_ix()], *withdraw_world()).unverified


def test_a_paused_non_transferable_or_default_frozen_mint_is_refused_with_its_reason():
    before, after = withdraw_world()
    cases = {
        "is paused by its issuer": (token_layout.PAUSABLE, bytes(STRANGER) + b"\x01"),
        "is non-transferable": (token_layout.NON_TRANSFERABLE, b""),
        "freezes every new token account by default": (token_layout.DEFAULT_ACCOUNT_STATE, b"\x02"),
    }
    for reason, extension in cases.items():
        check = judge(WITHDRAW, [withdraw_ix()], before, after, mints={str(MINT): mint(extension)})
        assert any(reason in d for d in check.differences), (reason, check.differences)
    # Pausable but not paused, and accounts initialized by default: nothing to refuse.
    for extension in (
        (token_layout.PAUSABLE, bytes(STRANGER) + b"\x00"),
        (token_layout.DEFAULT_ACCOUNT_STATE, b"\x01"),
    ):
        assert judge(WITHDRAW, [withdraw_ix()], before, after, mints={str(MINT): mint(extension)}).ok


def test_a_deposit_from_the_users_token_2022_account_passes_and_its_amount_is_exact():
    before = {
        str(WALLET): system(10**9),
        str(ATA): t22_token(WALLET, 100_000_000),
        str(VAULT): t22_token(sp.authority_address(), 0),
        str(POSITION): position(50_000_000, 60_000_000),
    }
    after = {
        **before,
        str(WALLET): system(10**9 - FEE),
        str(ATA): t22_token(WALLET, 90_000_000),
        str(VAULT): t22_token(sp.authority_address(), 10_000_000),
        str(POSITION): position(60_000_000, 70_000_000),
    }
    ix = sp.deposit(WALLET, WALLET, ATA, MINT, S, 10_000_000, token_program=T22)
    assert judge(DEPOSIT, [ix], before, after).ok
    after[str(ATA)] = t22_token(WALLET, 89_999_999)
    check = judge(DEPOSIT, [ix], before, after)
    assert any("expected -10" in d and "simulated -10.000001" in d for d in check.differences), check.differences
