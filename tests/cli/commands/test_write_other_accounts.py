"""Users in published integrations: a `user_token_account` that is not the associated one, and a
separate payer who sponsors the fee (and rent). Each reviewed, guarded and confirmed on the sandbox."""

from __future__ import annotations

import struct

from solders.account import Account
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from tests.conftest import usdc_position, write_keypair
from tests.token_accounts import token_account_data
from yieldcli.sandbox.demo import DEMO_WALLET
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp
from yieldcli.tokens import by_symbol

USDC = by_symbol("USDC").mint


def token_balance(sandbox, account: Pubkey) -> int:
    found = sandbox.runtime.get_account(account)
    return struct.unpack_from("<Q", bytes(found.data), 64)[0] if found is not None else 0


def a_second_token_account(sandbox, amount: int) -> Pubkey:
    """A USDC token account of the demo wallet at an address of its own (not the associated one)."""
    address = Keypair().pubkey()
    data = token_account_data(USDC, DEMO_WALLET, amount)
    rent = sandbox.runtime.minimum_balance_for_rent_exemption(len(data))
    sandbox.runtime.set_account(address, Account(rent, data, Pubkey.from_string(programs.TOKEN_PROGRAM), False, 0))
    return address


def test_a_deposit_from_and_a_withdrawal_to_a_token_account_that_is_not_the_associated_one(chain, sandbox):
    account = a_second_token_account(sandbox, 5_000_000)
    associated = programs.associated_token_address(Pubkey.from_string(DEMO_WALLET), Pubkey.from_string(USDC))
    untouched = token_balance(sandbox, associated)
    before = usdc_position(chain)
    deposited = chain(
        "deposit", "--asset", "USDC", "--amount", "2", "--token-account", str(account), "--send", "--yes", "-o", "json"
    )
    assert deposited.code == 0, deposited.stderr
    assert deposited.json()["effect"]["differences"] == [] and deposited.json()["status"] == "confirmed"
    assert token_balance(sandbox, account) == 3_000_000 and token_balance(sandbox, associated) == untouched
    assert usdc_position(chain) == before + 2_000_000
    withdrawn = chain(
        "withdraw", "--asset", "USDC", "--amount", "1", "--token-account", str(account), "--send", "--yes", "-o", "json"
    )
    assert withdrawn.code == 0, withdrawn.stderr
    net = 1_000_000 - sp.withdrawal_fee(1_000_000)
    assert token_balance(sandbox, account) == 3_000_000 + net and token_balance(sandbox, associated) == untouched
    # Another account named: that one, and only it, is paid.
    other = a_second_token_account(sandbox, 0)
    paid = chain("withdraw", "--asset", "USDC", "--amount", "1", "--token-account", str(other), "--send", "--yes")
    assert paid.code == 0 and token_balance(sandbox, other) == net
    assert token_balance(sandbox, account) == 3_000_000 + net and token_balance(sandbox, associated) == untouched


def test_a_withdrawal_whose_fee_a_sponsor_pays(chain, sandbox, tmp_path):
    sponsor = Keypair()
    sandbox.runtime.airdrop(sponsor.pubkey(), 1_000_000_000)
    sponsor_file = write_keypair(tmp_path / "sponsor.json", sponsor)
    wallet_sol = sandbox.runtime.get_balance(Pubkey.from_string(DEMO_WALLET))
    first = chain(
        "withdraw", "--asset", "USDC", "--amount", "1", "--payer", str(sponsor.pubkey()), "--sign", "-o", "json"
    )
    assert first.code == 0, first.stderr
    assert first.json()["effect"]["differences"] == [] and first.json()["missing_signers"] == [str(sponsor.pubkey())]
    partly = tmp_path / "partly.json"
    partly.write_text(first.stdout)
    # The sponsor reviews and sends it, naming the user whose slot is already signed.
    sent = chain("tx", "send", str(partly), "-k", sponsor_file, "--wallet", DEMO_WALLET, "--yes", "-o", "json")
    assert sent.code == 0, sent.stderr
    assert sent.json()["status"] == "confirmed"
    assert sandbox.runtime.get_balance(Pubkey.from_string(DEMO_WALLET)) == wallet_sol  # the user paid no fee
    assert sandbox.runtime.get_balance(sponsor.pubkey()) == 1_000_000_000 - 10_000  # two signatures


def test_a_service_paying_the_associated_account_instead_of_the_one_named_is_refused(world):
    from solders.instruction import AccountMeta, Instruction

    account = a_second_token_account(world.sandbox, 0)
    associated = programs.associated_token_address(Pubkey.from_string(DEMO_WALLET), Pubkey.from_string(USDC))

    def to_the_associated_one(ixs):
        for i, ix in enumerate(ixs):
            if str(ix.program_id) == programs.SANDBOX_STRATEGY_PROGRAM:
                metas = list(ix.accounts)
                metas[1] = AccountMeta(associated, False, True)
                ixs[i] = Instruction(ix.program_id, ix.data, metas)
        return ixs

    world.doctor(to_the_associated_one)
    before = world.snapshot()
    refused = world.yield_(
        "withdraw", "--asset", "USDC", "--amount", "1", "--token-account", str(account), "--send", "--yes"
    )
    assert refused.code == 10 and "names the destination" in refused.stderr, refused.stderr
    assert world.snapshot() == before
