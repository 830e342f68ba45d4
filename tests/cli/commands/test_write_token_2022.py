"""A base asset on Token-2022 (the sandbox's PYUSD-like mint, with the real one's extensions): balances,
deposit, withdraw and close through `yield`, each reviewed, guarded and confirmed on the sandbox's real
runtime; the issuer's rules shown, a mint that cannot move refused, and the guard refusing what would put
the user's Token-2022 tokens where someone else controls them."""

from __future__ import annotations

import struct

from solders.account import Account
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, PYUSD_MINT
from yieldcli.solana import programs, token_layout
from yieldcli.solana import strategy_program as sp

WALLET = Pubkey.from_string(DEMO_WALLET)
MINT = Pubkey.from_string(PYUSD_MINT)
T22 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
TOKEN = Pubkey.from_string(programs.TOKEN_PROGRAM)
ATA = programs.associated_token_address(WALLET, MINT, T22)  # the Token-2022 one
POSITION = sp.position_address(WALLET, DEMO_STRATEGY_ID, MINT)
USD = 10**6


def held(sandbox, account: Pubkey) -> int:
    found = sandbox.runtime.get_account(account)
    return struct.unpack_from("<Q", bytes(found.data), 64)[0] if found is not None else 0


def position_balance(sandbox) -> int | None:
    found = sandbox.runtime.get_account(POSITION)
    parsed = sp.parse_position(str(found.owner), bytes(found.data)) if found is not None else None
    return parsed.balance if parsed is not None else None


def pyusd_balance(chain) -> tuple[int, int]:
    """(total, in the strategy) of PYUSD through `yield balances`: the service's figures, from the chain."""
    body = chain("balances", "--asset", PYUSD_MINT, "-o", "json").json()
    (item,) = [i for i in body["data"] if i["token_address"] == PYUSD_MINT]
    assert item["token_symbol"] == "PYUSD" and item["decimals"] == 6
    funds = item["yield_balance"]
    return int(item["total_balance"]), int(funds["funds"]) if funds else 0


def test_a_token_2022_asset_is_deposited_withdrawn_and_closed(chain, sandbox):
    account = sandbox.runtime.get_account(ATA)
    assert account is not None and account.owner == T22 and len(account.data) > programs.TOKEN_ACCOUNT_SIZE
    assert held(sandbox, ATA) == 500 * USD and pyusd_balance(chain) == (500 * USD, 0)
    vault = sandbox.runtime.get_account(sp.vault_address(MINT))
    assert vault is not None and vault.owner == T22

    deposited = chain("deposit", "--asset", PYUSD_MINT, "--amount", "100", "--send", "--yes", "-o", "json")
    assert deposited.code == 0, deposited.stderr
    body = deposited.json()
    assert body["status"] == "confirmed" and body["effect"]["differences"] == []
    assert held(sandbox, ATA) == 400 * USD and position_balance(sandbox) == 100 * USD
    assert held(sandbox, sp.vault_address(MINT)) == 100 * USD
    assert pyusd_balance(chain) == (500 * USD, 100 * USD)

    withdrawn = chain("withdraw", "--asset", PYUSD_MINT, "--amount", "40", "--send", "--yes", "-o", "json")
    assert withdrawn.code == 0, withdrawn.stderr
    assert withdrawn.json()["effect"]["differences"] == []
    net = 40 * USD - sp.withdrawal_fee(40 * USD)
    assert held(sandbox, ATA) == 400 * USD + net and position_balance(sandbox) == 60 * USD

    closed = chain("close-account", "--asset", PYUSD_MINT, "--send", "--yes", "-o", "json")
    assert closed.code == 0, closed.stderr
    assert closed.json()["effect"]["differences"] == [] and closed.json()["status"] == "confirmed"
    assert held(sandbox, ATA) == 460 * USD + net and position_balance(sandbox) is None
    assert pyusd_balance(chain) == (460 * USD + net, 0)


def test_a_deposit_review_names_the_token_2022_program_and_reads_its_decimals(chain):
    shown = chain("deposit", "--asset", PYUSD_MINT, "--amount", "2.5", "-o", "json")
    assert shown.code == 0, shown.stderr
    body = shown.json()
    assert body["effect"]["differences"] == []
    # 2.5 with the mint's 6 decimals, read from the Token-2022 mint account (base + extensions).
    assert "deposit 2.5 " in body["effect"]["summary"], body["effect"]["summary"]


def _payout_to(account: Pubkey):
    """A service answer whose strategy call pays `account` instead of the user's own account."""

    def change(ixs):
        for i, ix in enumerate(ixs):
            if str(ix.program_id) == programs.SANDBOX_STRATEGY_PROGRAM:
                metas = list(ix.accounts)
                metas[1] = AccountMeta(account, False, True)
                ixs[i] = Instruction(ix.program_id, ix.data, metas)
        return ixs

    return change


def _with_position(world, amount: str) -> None:
    """The demo wallet deposits PYUSD through `yield`, the service's answer as built."""
    world.stand_in.doctor = None
    deposited = world.yield_("deposit", "--asset", PYUSD_MINT, "--amount", amount, "--send", "--yes")
    assert deposited.code == 0, deposited.stderr


def test_a_close_paying_a_token_2022_account_of_someone_else_is_refused(world):
    # The program pays a close's remainder into any token account of the mint (the service's
    # funds_recipient): only the guard stands between the user's position and a stranger's account.
    stranger = Keypair().pubkey()
    theirs = world.runtime.mint_to(stranger, MINT, 1)
    assert world.runtime.get_account(theirs).owner == T22
    _with_position(world, "10")
    world.doctor(_payout_to(theirs))
    before = held(world.sandbox, theirs), held(world.sandbox, ATA), position_balance(world.sandbox)
    refused = world.yield_("close-account", "--asset", PYUSD_MINT, "--send", "--yes")
    assert refused.code == 10 and f"names the recipient {str(theirs)[:4]}" in refused.stderr, refused.stderr
    assert (held(world.sandbox, theirs), held(world.sandbox, ATA), position_balance(world.sandbox)) == before
    assert before[2] == 10 * USD


def _mint_with(sandbox, extension: int, value: bytes) -> None:
    """The PYUSD mint with the extensions it has (as the real one) and one more, on the chain."""
    account = sandbox.runtime.get_account(MINT)
    info = token_layout.parse_mint(str(account.owner), bytes(account.data))
    data = token_layout.mint_data(
        info.decimals,
        authority=Pubkey.from_string(info.mint_authority),
        supply=struct.unpack_from("<Q", bytes(account.data), 36)[0],
        extra=[*info.extensions.items(), (extension, value)],
    )
    rent = sandbox.runtime.minimum_balance_for_rent_exemption(len(data))
    sandbox.runtime.set_account(MINT, Account(rent, data, T22, False, 2**64 - 1))


def test_the_sandbox_asset_carries_the_real_ones_extensions_and_its_issuer_rules_are_shown(chain, sandbox):
    account = sandbox.runtime.get_account(MINT)
    info = token_layout.parse_mint(str(account.owner), bytes(account.data))
    for extension in (
        token_layout.PERMANENT_DELEGATE,
        token_layout.TRANSFER_HOOK,
        token_layout.METADATA_POINTER,
        token_layout.TRANSFER_FEE_CONFIG,
    ):
        assert extension in info.extensions, extension
    delegate = token_layout.extension_key(info.extensions[token_layout.PERMANENT_DELEGATE])
    assert token_layout.extension_key(info.extensions[token_layout.TRANSFER_HOOK], 32) is None  # no program
    deposited = chain("deposit", "--asset", PYUSD_MINT, "--amount", "1", "--send", "--yes", "-o", "json")
    assert deposited.code == 0, deposited.stderr
    shown = deposited.json()["effect"]["unverified"]
    assert any(f"permanent delegate {delegate} may move or burn tokens of any account" in u for u in shown), shown
    assert any("transfer-hook authority" in u for u in shown), shown
    assert held(sandbox, ATA) == 499 * USD and position_balance(sandbox) == USD
    review = chain("withdraw", "--asset", PYUSD_MINT, "--amount", "1", "--send", "--yes")
    assert review.code == 0, review.stderr
    assert f"permanent delegate {delegate}" in review.stdout + review.stderr
    assert position_balance(sandbox) == 0


def test_a_paused_or_default_frozen_mint_is_refused_with_its_reason(chain, sandbox):
    # A paused mint fails in the simulation itself (Token-2022's MintPaused, 0x43) before the guard can say
    # why (the guard's reason: tests/chain/guard/test_compare_token_2022.py); a frozen default does not.
    for extension, value, code, reason in (
        (token_layout.DEFAULT_ACCOUNT_STATE, b"\x02", 10, "freezes every new token account by default"),
        (token_layout.PAUSABLE, bytes(Keypair().pubkey()) + b"\x01", 11, "custom program error 0x43"),
    ):
        original = sandbox.runtime.get_account(MINT)
        _mint_with(sandbox, extension, value)
        refused = chain("deposit", "--asset", PYUSD_MINT, "--amount", "1", "--send", "--yes")
        assert refused.code == code and reason in refused.stderr, refused.stderr
        assert held(sandbox, ATA) == 500 * USD
        sandbox.runtime.set_account(MINT, original)
