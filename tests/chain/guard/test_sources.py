"""The source the user meant and rent only where the action pays (`yieldcli/chain/guard/sources.py`), in
process on Token-2022 worlds (tests/chain/guard/test_compare_token_2022.py): each case is the legitimate
transaction with one thing changed, and fails when the rule it names is broken."""

from __future__ import annotations

from dataclasses import replace

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from tests.chain.guard.test_compare_token_2022 import (
    ATA,
    DEPOSIT,
    MINT,
    PINNED,
    POSITION,
    RENT,
    STRANGER,
    STRANGER_ATA,
    T22,
    VAULT,
    WALLET,
    WITHDRAW,
    judge,
    position,
    system,
    t22_token,
    withdraw_ix,
    withdraw_world,
)
from yieldcli.chain.guard.intent import Intent
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp

OTHER = Keypair().pubkey()  # another token account of the user's, not the associated one
S = "strategy-a"


def deposit_world(source=ATA, amount=10_000_000, other=1_200_000_000):
    before = {
        str(WALLET): system(10**9),
        str(ATA): t22_token(WALLET, 50_750_000),
        str(OTHER): t22_token(WALLET, other),
        str(VAULT): t22_token(sp.authority_address(), 0),
        str(POSITION): position(50_000_000, 60_000_000),
    }
    after = {
        **before,
        str(WALLET): system(10**9 - 5_000),
        str(source): t22_token(WALLET, before[str(source)].token.amount - amount),
        str(VAULT): t22_token(sp.authority_address(), amount),
        str(POSITION): position(50_000_000 + amount, 60_000_000 + amount),
    }
    return before, after


def deposit_ix(source=ATA, amount=10_000_000):
    return sp.deposit(WALLET, WALLET, source, MINT, S, amount, token_program=T22)


def test_a_deposit_takes_from_the_associated_account_only():
    assert judge(DEPOSIT, [deposit_ix()], *deposit_world()).ok
    check = judge(DEPOSIT, [deposit_ix(OTHER)], *deposit_world(OTHER))
    assert any(f"takes from {str(OTHER)[:4]}" in d and "another token account of yours" in d for d in check.differences)


def test_deposit_all_is_the_whole_balance_of_the_associated_account_not_a_fuller_one():
    everything = replace(DEPOSIT, amount=None)
    assert judge(everything, [deposit_ix(amount=50_750_000)], *deposit_world(amount=50_750_000)).ok
    moved = 1_200_000_000
    check = judge(everything, [deposit_ix(OTHER, moved)], *deposit_world(OTHER, moved))
    assert any("takes from" in d for d in check.differences), check.differences


def test_a_named_token_account_is_the_source_and_the_associated_one_is_then_refused():
    named = replace(DEPOSIT, token_account=str(OTHER))
    assert judge(named, [deposit_ix(OTHER)], *deposit_world(OTHER)).ok
    check = judge(named, [deposit_ix()], *deposit_world())
    assert any("not the token account you named" in d for d in check.differences), check.differences


def test_an_associated_create_must_be_idempotent():
    before, after = withdraw_world()
    idempotent = programs.create_associated_token_account(WALLET, WALLET, MINT, token_program=T22)
    assert judge(WITHDRAW, [idempotent, withdraw_ix()], before, after).ok
    plain = programs.create_associated_token_account(WALLET, WALLET, MINT, idempotent=False, token_program=T22)
    check = judge(WITHDRAW, [plain, withdraw_ix()], before, after)
    assert any("ATA Create, not CreateIdempotent" in d for d in check.differences), check.differences


def test_a_withdrawal_to_a_named_account_opens_no_associated_account():
    named = replace(WITHDRAW, token_account=str(OTHER))
    before, after = withdraw_world()
    before[str(OTHER)] = t22_token(WALLET, 0)
    net = 10_000_000 - sp.withdrawal_fee(10_000_000)
    after[str(OTHER)] = t22_token(WALLET, net)
    before[str(ATA)] = after[str(ATA)] = None  # the associated account does not exist yet ...
    assert judge(named, [withdraw_ix(OTHER)], before, after).ok
    after[str(ATA)] = t22_token(WALLET, 0)  # ... and the answer opens it, with the user's rent
    after[str(WALLET)] = system(10**9 - 5_000 - RENT)
    create = programs.create_associated_token_account(WALLET, WALLET, MINT, token_program=T22)
    check = judge(named, [create, withdraw_ix(OTHER)], before, after)
    assert any(f"opens your token account {str(ATA)[:4]}" in d and "receives nothing" in d for d in check.differences)


def test_a_close_of_an_empty_position_opens_no_account_of_the_recipient():
    close = Intent(
        "close-account",
        str(WALLET),
        str(WALLET),
        str(MINT),
        None,
        S,
        strategy_program=PINNED,
        funds_recipient=str(STRANGER),
    )
    before = {
        str(WALLET): system(10**9),
        str(ATA): t22_token(WALLET, 0),
        str(STRANGER_ATA): None,
        str(VAULT): t22_token(sp.authority_address(), 0),
        str(POSITION): position(0, 0),
    }
    after = {**before, str(POSITION): None, str(WALLET): system(10**9 - 5_000 + 1_781_760)}
    ix = sp.close(WALLET, ATA, MINT, POSITION, token_program=T22)
    assert judge(close, [ix], before, after).ok
    opened = {**after, str(STRANGER_ATA): t22_token(STRANGER, 0), str(WALLET): system(10**9 - 5_000 + 1_781_760 - RENT)}
    create = programs.create_associated_token_account(WALLET, STRANGER, MINT, token_program=T22)
    check = judge(close, [create, ix], before, opened)
    assert any(f"opens {str(STRANGER)[:4]}" in d and "receives nothing" in d for d in check.differences), check


def test_an_account_of_yours_loaded_from_a_lookup_table_is_refused():
    # A lookup table's contents are the RPC's word: with the user's token account (or a payout) loaded
    # from one, the signature may cover a stranger's account the RPC showed as the user's.
    from solders.address_lookup_table_account import AddressLookupTableAccount
    from solders.hash import Hash
    from solders.message import MessageV0

    from tests.chain.guard.test_compare_token_2022 import FEE, mint
    from yieldcli.chain.guard.compare import compare
    from yieldcli.chain.guard.message import resolve

    before, after = deposit_world()
    key = Keypair().pubkey()

    def judged(loaded):
        table = AddressLookupTableAccount(key, loaded)
        message = MessageV0.try_compile(WALLET, [deposit_ix()], [table], Hash.default())
        resolved = resolve(message, {str(key): [str(a) for a in loaded]})
        mints = {str(MINT): mint()}
        return compare(DEPOSIT, before, after, fee=FEE, resolved=resolved, mints=mints, decimals={str(MINT): 6})

    assert judged([VAULT]).ok  # the strategy's vault from a table: fine
    check = judged([ATA, VAULT])
    assert any("is loaded from a lookup table" in d and str(ATA)[:4] in d for d in check.differences), check.differences


def test_a_trusted_destination_or_a_recipients_account_loaded_from_a_lookup_table_is_refused():
    # The accounts the guard accepts being paid (a destination the user trusted, the recipient's token
    # account of a close) are the RPC's word too when loaded from a table: a stranger's may be signed.
    from solders.address_lookup_table_account import AddressLookupTableAccount
    from solders.hash import Hash
    from solders.message import MessageV0
    from solders.system_program import TransferParams, transfer

    from tests.chain.guard.test_compare_token_2022 import FEE, mint
    from yieldcli.chain.guard.calls import associated_account
    from yieldcli.chain.guard.compare import compare
    from yieldcli.chain.guard.message import resolve

    before, after = deposit_world()
    key = Keypair().pubkey()
    recipient = Keypair().pubkey()
    recipients_ata = associated_account(str(recipient), str(MINT), str(T22))
    cases = [
        (replace(DEPOSIT, trusted=((str(STRANGER_ATA), str(MINT)),)), STRANGER_ATA),
        (replace(DEPOSIT, funds_recipient=str(recipient)), Pubkey.from_string(recipients_ata)),
    ]
    for intent, loaded in cases:
        touch = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=loaded, lamports=0))
        table = AddressLookupTableAccount(key, [loaded])
        message = MessageV0.try_compile(WALLET, [deposit_ix(), touch], [table], Hash.default())
        resolved = resolve(message, {str(key): [str(loaded)]})
        check = compare(intent, before, after, fee=FEE, resolved=resolved, mints={str(MINT): mint()})
        assert any(
            f"{str(loaded)[:4]}" in d and "(named by you) is loaded from a lookup table" in d for d in check.differences
        ), check.differences
