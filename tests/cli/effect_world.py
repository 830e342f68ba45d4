"""The world the issue-25 tests share per module (the sandbox and the stand-in service of
tests/cli/stand_in.py), the user's whole state on the sandbox's chain read before and after each attack,
the service's answer as `yield` would get it, and the actions asked, as `yield`, `--expect`, the Python
client and the service each spell them.
"""

from __future__ import annotations

import json
import urllib.request

import pytest
from solders.pubkey import Pubkey

from tests.cli.stand_in import TOKEN, USDC_MINT, USER_ATA, WALLET, World
from tests.conftest import TEST_API_KEY, serve_sandbox
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, SECOND_STRATEGY_ID, demo_keypair
from yieldcli.solana import strategy_program as sp
from yieldcli.tokens import WSOL_MINT, by_symbol

JITOSOL_MINT = Pubkey.from_string(by_symbol("JitoSOL").mint)
WSOL = Pubkey.from_string(WSOL_MINT)
POSITION = sp.position_address(WALLET, DEMO_STRATEGY_ID, USDC_MINT)
SECOND_POSITION = sp.position_address(WALLET, SECOND_STRATEGY_ID, USDC_MINT)  # the user's other USDC position
SECOND_POSITION_LEFT = 15 * 10**6  # what the other USDC position holds after `prepare_chain`

# ---- the world, shared by the tests of one module -------------------------------------------------


def shared_world(tmp_path_factory) -> World:
    """A sandbox served over loopback with the stand-in in front of it, for a whole module; the other
    USDC position reduced to 15 USDC (so that 1 % of a withdrawal of 8 JitoSOL, in raw units, or of 2,000
    USDC covers it); the stranger has an account of each mint an attack pays it in."""
    root = tmp_path_factory.mktemp("effect-attacks")
    server = serve_sandbox(root / "sandbox")
    world = World(server, None, root)
    prepare_chain(world)
    world.positions = positions(world)
    return world


def prepare_chain(w: World) -> None:
    position = position_of(w, SECOND_POSITION)
    assert position is not None and position.balance > SECOND_POSITION_LEFT
    take = sp.withdraw(WALLET, USER_ATA, USDC_MINT, SECOND_STRATEGY_ID, position.balance - SECOND_POSITION_LEFT)
    w.runtime.execute([take], [demo_keypair()])
    for mint in (JITOSOL_MINT, WSOL):
        w.runtime.create_associated_token_account(w.stranger, mint)


def _shared(tmp_path_factory):
    world = shared_world(tmp_path_factory)
    yield world
    world.stand_in.stop()
    world.sandbox.stop()


def fixtures(*, flows: bool = False):
    """The fixtures a test module holds to use this world: `shared` (one world for the module) and
    `world` (the shared world, given this test's `yield`). With `flows`, the module's tests change the
    positions on purpose; otherwise a test whose positions an earlier test changed fails at once."""

    def _world(shared, run) -> World:
        if flows:
            shared.positions = positions(shared)
        return each_test(shared, run)

    return pytest.fixture(scope="module", name="shared")(_shared), pytest.fixture(name="world")(_world)


def each_test(world: World, run) -> World:
    """The module's world for one test: this test's `yield` (its own HOME), no doctor left from another."""
    if positions(world) != world.positions:
        pytest.fail("an earlier attack of this module landed and changed the user's positions: run this test alone")
    world.run = run
    world.stand_in.doctor = None
    return world


# ---- what the user owns or has a claim on ----------------------------------------------------------


def position_of(w: World, address: Pubkey) -> sp.Position | None:
    account = w.runtime.get_account(address)
    return None if account is None else sp.parse_position(str(account.owner), bytes(account.data))


def positions(w: World) -> dict[str, bytes]:
    return {str(address): bytes(account.data) for address, account in w.runtime.program_accounts(sp.PROGRAM)}


def state(w: World) -> dict[str, object]:
    """Every account of the strategy program (all positions, open or closed), every token account on the
    chain, and the wallet's and the stranger's lamports: whatever an attack changes shows here."""
    seen: dict[str, object] = {}
    for program in (sp.PROGRAM, TOKEN):
        for address, account in w.runtime.program_accounts(program):
            seen[str(address)] = (account.lamports, bytes(account.data))
    for key in (WALLET, w.stranger):
        seen[str(key)] = w.runtime.get_balance(key)
    return seen


# ---- the service's answer, as `yield` would get it -------------------------------------------------


def served(w: World, path: str, params: dict[str, object]) -> str:
    """The stand-in's (doctored) answer to POST `path`: the base64 transaction `yield tx sign` is handed."""
    body = json.dumps({"params": {"user_key": str(WALLET), "payer_key": str(WALLET), **params}}).encode()
    headers = {"content-type": "application/json", "x-api-key": TEST_API_KEY}
    with urllib.request.urlopen(urllib.request.Request(w.stand_in.url + path, body, headers), timeout=30) as answer:
        text = json.loads(answer.read())
    return text if isinstance(text, str) else text["encoded_transaction"]


# ---- the actions asked ------------------------------------------------------------------------------


class Request:
    """An action as `yield` asks it, as `--expect` states it, and as the service is asked for it."""

    def __init__(self, args: tuple[str, ...], expect: str, call, path: str, **params: object):
        self.args, self.expect, self.call, self.path = args, expect, call, path  # call(client): prepared
        self.params = {"strategy_id": DEMO_STRATEGY_ID, **params}


USDC, JITOSOL = str(USDC_MINT), str(JITOSOL_MINT)
DEPOSIT = Request(
    ("deposit", "--asset", "USDC", "--amount", "10"),
    "deposit:USDC:10",
    lambda c: c.deposit("USDC", "10"),
    "/deposit/tx",
    base_asset=USDC,
    amount=10**7,
)
WITHDRAW = Request(
    ("withdraw", "--asset", "USDC", "--amount", "5"),
    "withdraw:USDC:5",
    lambda c: c.withdraw("USDC", "5"),
    "/withdraw/tx",
    base_asset=USDC,
    amount=5 * 10**6,
)
WITHDRAW_ALL = Request(
    ("withdraw", "--asset", "USDC", "--all"),
    "withdraw:USDC:all",
    lambda c: c.withdraw("USDC", all=True),
    "/withdraw/tx",
    base_asset=USDC,
    all=True,
)
WITHDRAW_JITOSOL_ALL = Request(
    ("withdraw", "--asset", "JitoSOL", "--all"),
    "withdraw:JitoSOL:all",
    lambda c: c.withdraw("JitoSOL", all=True),
    "/withdraw/tx",
    base_asset=JITOSOL,
    all=True,
)
WITHDRAW_SOL_ALL_UNWRAP = Request(
    ("withdraw", "--asset", "SOL", "--all", "--unwrap-wsol"),
    "withdraw:SOL:all",
    lambda c: c.withdraw("SOL", all=True, unwrap_wsol=True),
    "/withdraw/tx",
    base_asset=WSOL_MINT,
    all=True,
    unwrap_wsol_ata=True,
)
WITHDRAW_2000_EXCLUDE_FEES = Request(
    ("withdraw", "--asset", "USDC", "--amount", "2000", "--exclude-fees"),
    "withdraw:USDC:2000",  # `--expect` cannot say "exclude fees": this one is tried on the service's path only
    lambda c: c.withdraw("USDC", "2000", exclude_fees=True),
    "/withdraw/tx",
    base_asset=USDC,
    amount=2000 * 10**6,
    exclude_fees=True,
)
CLOSE = Request(
    ("close-account", "--asset", "USDC"),
    "close-account:USDC",
    lambda c: c.close_account("USDC"),
    "/close-user-account/tx",
    user_pubkey=str(WALLET),
    mint=USDC,
    payer=str(WALLET),
)
