"""The attacks of issue 35 on the source the user meant and on rent nobody needs, as doctors for the
stand-in service (tests/cli/stand_in.py), run in the world of tests/cli/effect_world.py: another token
account of the user's taken from instead of the associated one (one holding more, under `--all`), SOL
taken from another wrapped-SOL account instead of wrapping, an unwrap that also closes another
wrapped-SOL account, a withdrawal to a named account that also opens the associated one (rent nobody
needed), and an associated account opened by a plain `Create` a front-runner can make fail.

The user's other accounts are put on the sandbox's chain directly (token accounts at keypair addresses,
owned by the wallet), as any wallet may have them.
"""

from __future__ import annotations

from solders.account import Account
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from tests.cli.effect_world import DEPOSIT, WITHDRAW_SOL_ALL_UNWRAP, Request
from tests.cli.stand_in import TOKEN, USDC_MINT, WALLET, World
from tests.token_accounts import token_account_data
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp
from yieldcli.tokens import WSOL_MINT

WSOL = Pubkey.from_string(WSOL_MINT)
WSOL_ATA = programs.associated_token_address(WALLET, WSOL)
ATA_PROGRAM = Pubkey.from_string(programs.ASSOCIATED_TOKEN_PROGRAM)
SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
USD, SOL = 10**6, 10**9
# The user's other accounts: a USDC account holding more than the associated one (about 2,000), a wrapped-SOL one.
OTHER_USDC = Keypair.from_seed(bytes([35]) * 32).pubkey()
OTHER_WSOL = Keypair.from_seed(bytes([36]) * 32).pubkey()
OTHER_USDC_HELD = 5_000 * USD
OTHER_WSOL_HELD = SOL // 2

DEPOSIT_ALL = Request(
    ("deposit", "--asset", "USDC", "--all"),
    "deposit:USDC:all",
    lambda c: c.deposit("USDC", all=True),
    "/deposit/tx",
    base_asset=str(USDC_MINT),
    all=True,
)
DEPOSIT_SOL = Request(
    ("deposit", "--asset", "SOL", "--amount", "0.5"),
    "deposit:SOL:0.5",
    lambda c: c.deposit("SOL", "0.5"),
    "/deposit/tx",
    base_asset=WSOL_MINT,
    amount=SOL // 2,
)


def other_accounts(w: World) -> None:
    """The user's other USDC account (5,000 USDC) and other wrapped-SOL account (0.5 SOL), on the chain."""
    rent = w.runtime.minimum_balance_for_rent_exemption(programs.TOKEN_ACCOUNT_SIZE)
    usdc = token_account_data(USDC_MINT, WALLET, OTHER_USDC_HELD)
    wsol = token_account_data(WSOL, WALLET, OTHER_WSOL_HELD, native=rent)
    w.runtime.set_account(OTHER_USDC, Account(rent, usdc, TOKEN, False, 0))
    w.runtime.set_account(OTHER_WSOL, Account(rent + OTHER_WSOL_HELD, wsol, TOKEN, False, 0))


def _replace_deposit(source: Pubkey, mint: Pubkey, amount: int, *, keep_wrap: bool = True):
    """The service's deposit instruction taking `amount` from `source` (and, without `keep_wrap`, no wrapping)."""

    def change(ixs: list[Instruction]) -> list[Instruction]:
        kept = [ix for ix in ixs if keep_wrap or ix.program_id not in (ATA_PROGRAM, SYSTEM, TOKEN)]
        ix = sp.deposit(WALLET, WALLET, source, mint, DEMO_STRATEGY_ID, amount)
        return [ix if k.program_id == sp.PROGRAM else k for k in kept]

    return change


def deposit_from(source: Pubkey, mint: Pubkey, amount: int, *, keep_wrap: bool = True):
    def setup(w: World) -> None:
        other_accounts(w)
        w.doctor(_replace_deposit(source, mint, amount, keep_wrap=keep_wrap))

    return setup


def unwrap_closes_other_wsol_account(w: World) -> None:
    """`withdraw --unwrap-wsol` answered with the user's other wrapped-SOL account closed too."""
    other_accounts(w)
    w.doctor(lambda ixs: [*ixs, programs.token_close_account(OTHER_WSOL, WALLET, WALLET)])


WITHDRAW_SOL_TO_OTHER = Request(
    ("withdraw", "--asset", "SOL", "--amount", "0.1", "--token-account", str(OTHER_WSOL)),
    "withdraw:SOL:0.1",  # `--expect` cannot name a token account: tried on the service's path and the Client
    lambda c: c.withdraw("SOL", "0.1", token_account=str(OTHER_WSOL)),
    "/withdraw/tx",
    base_asset=WSOL_MINT,
    amount=SOL // 10,
    user_token_account=str(OTHER_WSOL),
)


def opens_the_associated_account(w: World) -> None:
    """A withdrawal to the named account that also opens the user's associated wrapped-SOL account: rent
    nobody needed (the user's own account, so the instruction rules allow it; only the effect says no)."""
    other_accounts(w)
    assert w.runtime.get_account(WSOL_ATA) is None
    opening = programs.create_associated_token_account(WALLET, WALLET, WSOL)
    w.doctor(lambda ixs: [opening, *ixs])


def plain_create(w: World) -> None:
    """The wrapped-SOL account opened by `Create`, not `CreateIdempotent`: anyone who opens it first makes
    the user's transaction fail, at the user's fee."""
    assert w.runtime.get_account(WSOL_ATA) is None, "the wallet's wrapped-SOL account must not exist yet"

    def change(ixs: list[Instruction]) -> list[Instruction]:
        return [Instruction(ix.program_id, b"\x00", ix.accounts) if ix.program_id == ATA_PROGRAM else ix for ix in ixs]

    w.doctor(change)


# name: (the request, its setup, the exit codes of a refusal)
ATTACKS: dict[str, tuple[Request, object, set[int]]] = {
    "deposit-all-from-a-fuller-usdc-account": (
        DEPOSIT_ALL,
        deposit_from(OTHER_USDC, USDC_MINT, OTHER_USDC_HELD),
        {10},
    ),
    "deposit-10-from-a-non-associated-account": (DEPOSIT, deposit_from(OTHER_USDC, USDC_MINT, 10 * USD), {10}),
    "deposit-sol-from-another-wsol-account": (
        DEPOSIT_SOL,
        deposit_from(OTHER_WSOL, WSOL, SOL // 2, keep_wrap=False),
        {10},
    ),
    "withdraw-unwrap-closes-another-wsol-account": (WITHDRAW_SOL_ALL_UNWRAP, unwrap_closes_other_wsol_account, {10}),
    "withdraw-sol-opens-by-plain-create": (WITHDRAW_SOL_ALL_UNWRAP, plain_create, {10}),
    "withdraw-to-named-account-opens-the-associated-one": (WITHDRAW_SOL_TO_OTHER, opens_the_associated_account, {10}),
}
