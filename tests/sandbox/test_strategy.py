"""The sandbox's deposit, withdraw and close-account: real transactions on its chain, served over HTTP
and sent over JSON-RPC the way the CLI does (decode, sign, simulate, send, confirm)."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from tests.contract.openapi_doc import pointer, template, validator
from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact.confirm import wait_for
from yieldcli.chain.transact.outcomes import Confirmed
from yieldcli.chain.transact.proof import Lifetime
from yieldcli.chain.tx.decode import decode_transaction
from yieldcli.chain.tx.instructions import build_from_ix
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, SECOND_STRATEGY_ID, demo_keypair
from yieldcli.sandbox.server import SandboxServer
from yieldcli.sandbox.strategy import STRATEGY_PROGRAM, VAULT_AUTHORITY, withdrawal_fee
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp
from yieldcli.solana.programs import SANDBOX_STRATEGY_PROGRAM
from yieldcli.tokens import NATIVE_SOL_PSEUDO_MINT, WSOL_MINT, by_symbol

KEY = "strategy-test-key"
USDC = by_symbol("USDC").mint
USDT = by_symbol("USDT").mint
JLP = by_symbol("JLP").mint
BONK = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263"
SOL = 10**9
TX_FEE = 5000  # lamports per signature
TOKEN_ACCOUNT_RENT = 2_039_280
POSITION_RENT = 1_781_760  # the strategy program's position account (128 bytes), paid by the first deposit
DEMO = demo_keypair()


# ---- fixtures: a seeded chain is made once and copied for every test --------------------------------


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("seeded")
    server = SandboxServer(folder / "state.json", api_key=KEY)
    server.start_chain()  # seeds the chain from the demo ledger
    server.stop()
    return folder


def _copy(seeded: Path, target: Path) -> Path:
    target.mkdir(parents=True)
    for name in ("state.json", "chain.json"):
        shutil.copy(seeded / name, target / name)
    return target / "state.json"


@pytest.fixture
def server(seeded, tmp_path):
    srv = SandboxServer(_copy(seeded, tmp_path / "sandbox"), api_key=KEY).start()
    yield srv
    srv.stop()


# ---- HTTP and RPC helpers ----------------------------------------------------------------------------


def request(srv: SandboxServer, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    url = urlsplit(srv.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        headers = {"x-api-key": KEY}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def post(srv: SandboxServer, path: str, **params: Any) -> tuple[int, Any]:
    return request(srv, "POST", path, {"params": params})


def ok(srv: SandboxServer, path: str, **params: Any) -> Any:
    status, body = post(srv, path, **params)
    assert status == 200, body
    check_success(path, body)
    return body


def check_success(path: str, body: Any) -> None:
    """The body matches the OpenAPI document's 200 schema for the path."""
    tmpl = template(path)
    validator(pointer("paths", tmpl, "post", "responses", "200", "content", "application/json", "schema")).validate(
        body
    )


def refused(srv: SandboxServer, path: str, status: int = 400, **params: Any) -> str:
    got, body = post(srv, path, **params)
    assert got == status, body
    validator("components/schemas/ErrorResponse").validate(body)
    return body["message"]


class Chain:
    """Async steps against the sandbox's RPC, run with asyncio.run like the CLI does."""

    def __init__(self, srv: SandboxServer):
        self.srv = srv

    def _run(self, step):
        async def go():
            async with Rpc(self.srv.rpc_url) as rpc:
                return await step(rpc)

        return asyncio.run(go())

    def send(self, tx: VersionedTransaction, *signers: Keypair) -> tuple[str, list[str]]:
        """Sign, simulate, send and confirm; returns the signature and the logs of the landed transaction."""

        async def step(rpc: Rpc):
            signed = sign_transaction(tx, signers)
            assert signed.complete, signed.missing
            simulation = await rpc.simulate(signed.transaction)
            assert simulation.err is None, simulation.logs
            signature = await rpc.send(signed.transaction)
            latest = await rpc.latest_blockhash()
            lifetime = Lifetime.of(signed.transaction, latest.last_valid_block_height)
            outcome = await wait_for(rpc, signature, lifetime, "confirmed", 10)
            assert isinstance(outcome, Confirmed), outcome
            record = await rpc.transaction(signature)
            return str(signature), list(record.logs or ())

        return self._run(step)

    def from_ix(self, body: Any, payer: Pubkey) -> VersionedTransaction:
        async def step(rpc: Rpc):
            return (await build_from_ix(rpc, body, payer)).transaction

        return self._run(step)

    def fund(self, wallet: Pubkey, lamports: int = 0, tokens: dict[str, int] | None = None) -> None:
        async def step(rpc: Rpc):
            if lamports:
                await rpc.request_airdrop(wallet, lamports)
            for mint, amount in (tokens or {}).items():
                await rpc.call("sandbox_mintTo", [str(wallet), mint, amount])

        self._run(step)

    def lamports(self, address: Pubkey | str) -> int:
        return self._run(lambda rpc: rpc.balance(Pubkey.from_string(str(address))))

    def token(self, address: Pubkey) -> int | None:
        """The token balance of an account read over RPC, None when it does not exist."""

        async def step(rpc: Rpc):
            info = await rpc.account_info(address)
            if info is None:
                return None
            return (await rpc.token_account_balance(address)).amount

        return self._run(step)

    def position(self, wallet: Pubkey | str, mint: str, strategy: str = DEMO_STRATEGY_ID) -> sp.Position | None:
        """The wallet's position account as the chain holds it (read over RPC), None when there is none."""
        address = position_of(wallet, mint, strategy)

        async def step(rpc: Rpc):
            answer = await rpc.call("getAccountInfo", [str(address), {"encoding": "base64", "commitment": "confirmed"}])
            value = answer["value"] if isinstance(answer, dict) and "value" in answer else answer
            if not value:
                return None
            return sp.parse_position(value["owner"], base64.b64decode(value["data"][0]))

        return self._run(step)

    def held(self, wallet: Pubkey | str, mint: str, strategy: str = DEMO_STRATEGY_ID) -> int | None:
        """What the wallet's position is worth on chain, None when it has none."""
        found = self.position(wallet, mint, strategy)
        return None if found is None else found.balance


def ata(wallet: Pubkey | str, mint: str) -> Pubkey:
    return programs.associated_token_address(Pubkey.from_string(str(wallet)), Pubkey.from_string(mint))


def position_of(wallet: Pubkey | str, mint: str, strategy: str = DEMO_STRATEGY_ID) -> Pubkey:
    return sp.position_address(Pubkey.from_string(str(wallet)), strategy, Pubkey.from_string(mint))


def position(srv: SandboxServer, wallet: Pubkey | str, mint: str, strategy: str = DEMO_STRATEGY_ID) -> dict | None:
    status, body = request(srv, "GET", f"/breeze-balances/{wallet}?strategy_id={strategy}&asset={mint}")
    assert status == 200, body
    return body["data"][0] if body["data"] else None


def wallet_part(srv: SandboxServer, wallet: Pubkey | str, mint: str) -> int:
    """What /user-balances says the wallet itself holds of `mint` (its total less its positions)."""
    status, body = request(srv, "GET", f"/user-balances/{wallet}?asset={mint}")
    assert status == 200, body
    if not body["data"]:
        return 0
    item = body["data"][0]
    return item["total_balance"] - int((item["yield_balance"] or {}).get("funds", "0"))


def strategy_data(tx: VersionedTransaction) -> list[bytes]:
    """The data of every instruction to the strategy program."""
    keys = tx.message.account_keys
    return [bytes(ix.data) for ix in tx.message.instructions if keys[ix.program_id_index] == STRATEGY_PROGRAM]


def program_ids(tx: VersionedTransaction) -> list[str]:
    keys = tx.message.account_keys
    return [str(keys[ix.program_id_index]) for ix in tx.message.instructions]


def token_tags(tx: VersionedTransaction) -> list[int]:
    keys = tx.message.account_keys
    return [
        bytes(ix.data)[0] for ix in tx.message.instructions if str(keys[ix.program_id_index]) == programs.TOKEN_PROGRAM
    ]


def deposit_tx(
    srv: SandboxServer, user: Pubkey | str, mint: str, amount: int | None, payer: Pubkey | str | None = None, **extra
) -> VersionedTransaction:
    params = {
        "strategy_id": DEMO_STRATEGY_ID,
        "base_asset": mint,
        "user_key": str(user),
        "payer_key": str(payer or user),
    }
    params.update({"all": True} if amount is None else {"amount": amount})
    params.update(extra)
    return decode_transaction(ok(srv, "/deposit/tx", **params))


def withdraw_tx(srv: SandboxServer, user: Pubkey | str, mint: str, amount: int | None, **extra) -> VersionedTransaction:
    params = {"strategy_id": DEMO_STRATEGY_ID, "base_asset": mint, "user_key": str(user), "payer_key": str(user)}
    params.update({"all": True} if amount is None else {"amount": amount})
    params.update(extra)
    return decode_transaction(ok(srv, "/withdraw/tx", **params))


def new_user(srv: SandboxServer, lamports: int = 2 * SOL, tokens: dict[str, int] | None = None) -> Keypair:
    user = Keypair()
    Chain(srv).fund(user.pubkey(), lamports, tokens)
    return user


# ---- seeding -----------------------------------------------------------------------------------------


def test_the_chain_holds_what_the_demo_ledger_says(server):
    chain = Chain(server)
    for strategy in (DEMO_STRATEGY_ID, SECOND_STRATEGY_ID):
        _, body = request(server, "GET", f"/breeze-balances/{DEMO_WALLET}?strategy_id={strategy}&limit=100")
        assert body["data"]
        for item in body["data"]:
            assert chain.held(DEMO_WALLET, item["token_address"], strategy) == item["total_position_value"]
    _, body = request(server, "GET", f"/user-balances/{DEMO_WALLET}?limit=100")
    parts = {
        i["token_address"]: i["total_balance"] - int((i["yield_balance"] or {}).get("funds", "0")) for i in body["data"]
    }
    assert parts[NATIVE_SOL_PSEUDO_MINT] == chain.lamports(DEMO_WALLET) == 25 * SOL
    for mint in (USDC, USDT, JLP, by_symbol("JitoSOL").mint, by_symbol("mSOL").mint):
        assert parts[mint] == chain.token(ata(DEMO_WALLET, mint)) > 0
    assert parts[BONK] > 0  # tokens the chain does not know stay as the ledger has them


def test_the_strategy_program_is_deployed_and_keeps_the_deposits_in_its_vaults(server):
    program = server.runtime.get_account(STRATEGY_PROGRAM)
    assert program is not None and program.executable and str(STRATEGY_PROGRAM) == SANDBOX_STRATEGY_PROGRAM
    # The vault of a mint: a token account whose owner is the program's authority PDA, not a key anyone holds.
    mint, owner, amount = server.runtime.token_account(sp.vault_address(Pubkey.from_string(USDC)))
    assert (mint, owner) == (USDC, str(sp.authority_address())) and not sp.authority_address().is_on_curve()
    assert owner != str(VAULT_AUTHORITY.pubkey())
    held = Chain(server).position(DEMO_WALLET, USDC)
    assert held is not None and held.user == DEMO_WALLET and held.mint == USDC
    assert held.strategy_key == sp.strategy_key(DEMO_STRATEGY_ID)
    assert amount >= held.balance  # the demo's positions in both strategies


def test_reads_do_not_start_the_chain_and_rpc_url_does(seeded, tmp_path):
    srv = SandboxServer(_copy(seeded, tmp_path / "lazy"), api_key=KEY).start()
    try:
        assert request(srv, "GET", f"/user-balances/{DEMO_WALLET}")[0] == 200
        assert not srv.chain_started
        assert srv.rpc_url.startswith("http://127.0.0.1:")
        assert srv.chain_started
    finally:
        srv.stop()


# ---- deposits ----------------------------------------------------------------------------------------


def test_demo_wallet_deposits_usdc_through_tx(server):
    chain = Chain(server)
    before = position(server, DEMO_WALLET, USDC)
    wallet_before = wallet_part(server, DEMO_WALLET, USDC)
    assert wallet_before == chain.token(ata(DEMO_WALLET, USDC))

    tx = deposit_tx(server, DEMO_WALLET, USDC, 10_000_000)
    # Unsigned: the user (here also the payer) is the only required signer, its slot empty.
    assert tx.message.header.num_required_signatures == 1
    assert list(tx.signatures) == [Signature.default()]
    assert tx.message.account_keys[0] == DEMO.pubkey()
    assert [str(t.account_key) for t in tx.message.address_table_lookups] == [str(server.chain.lookup_table.key)]
    assert strategy_data(tx) == [
        bytes([sp.DEPOSIT]) + (10_000_000).to_bytes(8, "little") + sp.strategy_key(DEMO_STRATEGY_ID)
    ]
    assert program_ids(tx)[0] == programs.COMPUTE_BUDGET_PROGRAM

    _, logs = chain.send(tx, DEMO)
    assert f"Program {SANDBOX_STRATEGY_PROGRAM} success" in logs
    after = position(server, DEMO_WALLET, USDC)
    assert after["total_position_value"] == before["total_position_value"] + 10_000_000
    assert after["total_deposited_value"] == before["total_deposited_value"] + 10_000_000
    assert after["total_position_value"] == chain.held(DEMO_WALLET, USDC)
    assert wallet_part(server, DEMO_WALLET, USDC) == wallet_before - 10_000_000 == chain.token(ata(DEMO_WALLET, USDC))
    assert wallet_part(server, DEMO_WALLET, NATIVE_SOL_PSEUDO_MINT) == 25 * SOL - TX_FEE == chain.lamports(DEMO_WALLET)


def test_new_user_deposits_through_ix_with_a_separate_payer(server):
    chain = Chain(server)
    user = new_user(server, lamports=0, tokens={USDC: 50_000_000})
    payer = new_user(server, lamports=SOL)
    body = ok(
        server,
        "/deposit/ix",
        strategy_id=DEMO_STRATEGY_ID,
        base_asset=USDC,
        amount=12_345_678,
        user_key=str(user.pubkey()),
        payer_key=str(payer.pubkey()),
    )
    assert body["lookup_table"] == str(server.chain.lookup_table.key)
    # Building changed nothing: the user's own transaction opens the position, paid by the payer.
    assert chain.position(user.pubkey(), USDC) is None
    tx = chain.from_ix(body, payer.pubkey())
    assert tx.message.header.num_required_signatures == 2
    assert list(tx.message.account_keys[:2]) == [payer.pubkey(), user.pubkey()]
    assert list(tx.signatures) == [Signature.default()] * 2
    chain.send(tx, payer, user)
    item = position(server, user.pubkey(), USDC)
    assert (item["total_deposited_value"], item["total_position_value"], item["yield_earned"]) == (
        12_345_678,
        12_345_678,
        0,
    )
    assert chain.held(user.pubkey(), USDC) == 12_345_678
    assert chain.token(ata(user.pubkey(), USDC)) == wallet_part(server, user.pubkey(), USDC) == 50_000_000 - 12_345_678
    assert chain.lamports(payer.pubkey()) == SOL - 2 * TX_FEE - POSITION_RENT


def test_deposit_all_and_from_a_named_token_account(server):
    chain = Chain(server)
    user = new_user(server, tokens={USDT: 7_000_000})
    tx = deposit_tx(server, user.pubkey(), USDT, None, user_token_account=str(ata(user.pubkey(), USDT)))
    chain.send(tx, user)
    assert position(server, user.pubkey(), USDT)["total_position_value"] == 7_000_000 == chain.held(user.pubkey(), USDT)
    assert chain.token(ata(user.pubkey(), USDT)) == 0 == wallet_part(server, user.pubkey(), USDT)


# ---- withdrawals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("amount, exclude_fees", [(1_000_000, False), (1_000_000, True), (1_234_567, False), (3, True)])
def test_partial_withdrawal_fee_arithmetic(server, amount, exclude_fees):
    chain = Chain(server)
    mine, vault = ata(DEMO_WALLET, USDC), sp.vault_address(Pubkey.from_string(USDC))
    before = (chain.held(DEMO_WALLET, USDC), chain.token(mine), chain.token(vault))
    deposited_before = position(server, DEMO_WALLET, USDC)["total_deposited_value"]
    fee = withdrawal_fee(amount)
    assert fee == -(-amount * 10 // 10_000) and fee >= 1
    tx = withdraw_tx(server, DEMO_WALLET, USDC, amount, exclude_fees=exclude_fees)
    assert strategy_data(tx) == [bytes([sp.WITHDRAW]) + amount.to_bytes(8, "little") + bytes([int(exclude_fees)])]
    to_user = amount if exclude_fees else amount - fee
    chain.send(tx, DEMO)
    taken = amount + fee if exclude_fees else amount
    assert chain.held(DEMO_WALLET, USDC) == before[0] - taken
    assert chain.token(mine) == before[1] + to_user
    assert chain.token(vault) == before[2] - to_user  # the fee stays in the vault
    item = position(server, DEMO_WALLET, USDC)
    assert item["total_position_value"] == before[0] - taken
    # What is withdrawn comes out of the yield first.
    assert item["total_deposited_value"] == min(deposited_before, before[0] - taken)
    assert wallet_part(server, DEMO_WALLET, USDC) == before[1] + to_user


@pytest.mark.parametrize("exclude_fees", [False, True])
def test_full_withdrawal_takes_the_fee_from_the_position(server, exclude_fees):
    chain = Chain(server)
    mine = ata(DEMO_WALLET, USDT)
    balance, held = chain.held(DEMO_WALLET, USDT), chain.token(mine)
    chain.send(withdraw_tx(server, DEMO_WALLET, USDT, None, exclude_fees=exclude_fees), DEMO)
    assert chain.held(DEMO_WALLET, USDT) == 0
    assert chain.token(mine) == held + balance - withdrawal_fee(balance)
    item = position(server, DEMO_WALLET, USDT)
    assert (item["total_position_value"], item["total_deposited_value"]) == (0, 0)


def test_withdrawal_through_ix_creates_the_token_account(server):
    chain = Chain(server)
    user = new_user(server, tokens={JLP: 5_000_000})
    chain.send(deposit_tx(server, user.pubkey(), JLP, None), user)
    assert chain.token(ata(user.pubkey(), JLP)) == 0
    body = ok(
        server,
        "/withdraw/ix",
        strategy_id=DEMO_STRATEGY_ID,
        base_asset=JLP,
        amount=2_000_000,
        user_key=str(user.pubkey()),
    )
    chain.send(chain.from_ix(body, user.pubkey()), user)
    assert chain.token(ata(user.pubkey(), JLP)) == 2_000_000 - withdrawal_fee(2_000_000)
    assert position(server, user.pubkey(), JLP)["total_position_value"] == 3_000_000


# ---- wrapped SOL -------------------------------------------------------------------------------------


def test_sol_deposit_wraps_native_sol(server):
    chain = Chain(server)
    user = new_user(server, lamports=3 * SOL)
    tx = deposit_tx(server, user.pubkey(), WSOL_MINT, SOL)
    assert program_ids(tx)[:4] == [
        programs.COMPUTE_BUDGET_PROGRAM,
        programs.ASSOCIATED_TOKEN_PROGRAM,
        programs.SYSTEM_PROGRAM,
        programs.TOKEN_PROGRAM,
    ]
    # syncNative; then the strategy program's deposit (which opens the position and moves the WSOL by CPI)
    assert token_tags(tx) == [17] and program_ids(tx)[-1] == SANDBOX_STRATEGY_PROGRAM
    chain.send(tx, user)
    assert chain.lamports(user.pubkey()) == 3 * SOL - SOL - TOKEN_ACCOUNT_RENT - POSITION_RENT - TX_FEE
    assert wallet_part(server, user.pubkey(), NATIVE_SOL_PSEUDO_MINT) == chain.lamports(user.pubkey())
    assert chain.token(ata(user.pubkey(), WSOL_MINT)) == 0
    assert (
        position(server, user.pubkey(), WSOL_MINT)["total_position_value"]
        == SOL
        == chain.held(user.pubkey(), WSOL_MINT)
    )


def test_sol_deposit_all_keeps_a_reserve(server):
    chain = Chain(server)
    user = new_user(server, lamports=2 * SOL)
    chain.send(deposit_tx(server, user.pubkey(), WSOL_MINT, None), user)
    deposited = chain.held(user.pubkey(), WSOL_MINT)
    assert deposited == 2 * SOL - 10_000_000 - TOKEN_ACCOUNT_RENT - POSITION_RENT
    assert chain.lamports(user.pubkey()) == 10_000_000 - TX_FEE


def test_sol_withdrawal_unwraps_to_native_sol(server):
    chain = Chain(server)
    lamports = chain.lamports(DEMO_WALLET)
    balance = chain.held(DEMO_WALLET, WSOL_MINT)
    amount = 2 * SOL
    tx = withdraw_tx(server, DEMO_WALLET, WSOL_MINT, amount, create_wsol_ata=True, unwrap_wsol_ata=True)
    assert (
        token_tags(tx) == [9] and program_ids(tx)[-2] == SANDBOX_STRATEGY_PROGRAM
    )  # withdraw, then close the WSOL account
    chain.send(tx, DEMO)
    assert chain.token(ata(DEMO_WALLET, WSOL_MINT)) is None
    # The WSOL account was created and closed in the same transaction: its rent came back.
    assert chain.lamports(DEMO_WALLET) == lamports + amount - withdrawal_fee(amount) - TX_FEE
    assert wallet_part(server, DEMO_WALLET, NATIVE_SOL_PSEUDO_MINT) == chain.lamports(DEMO_WALLET)
    assert (
        position(server, DEMO_WALLET, WSOL_MINT)["total_position_value"]
        == balance - amount
        == chain.held(DEMO_WALLET, WSOL_MINT)
    )


def test_sol_withdrawal_without_unwrap_keeps_wrapped_sol(server):
    chain = Chain(server)
    tx = withdraw_tx(server, DEMO_WALLET, WSOL_MINT, SOL)  # defaults: create the account, do not unwrap
    assert program_ids(tx)[1] == programs.ASSOCIATED_TOKEN_PROGRAM and token_tags(tx) == []
    chain.send(tx, DEMO)
    assert (
        chain.token(ata(DEMO_WALLET, WSOL_MINT))
        == SOL - withdrawal_fee(SOL)
        == wallet_part(server, DEMO_WALLET, WSOL_MINT)
    )


def test_detect_wsol_ata_overrides_both_flags(server):
    chain = Chain(server)
    # No WSOL account yet: detect means create and unwrap, whatever the flags say.
    tx = withdraw_tx(
        server, DEMO_WALLET, WSOL_MINT, SOL, detect_wsol_ata=True, create_wsol_ata=False, unwrap_wsol_ata=False
    )
    assert programs.ASSOCIATED_TOKEN_PROGRAM in program_ids(tx) and token_tags(tx) == [9]
    chain.send(tx, DEMO)
    assert chain.token(ata(DEMO_WALLET, WSOL_MINT)) is None
    # Now make one exist: detect means neither create nor unwrap.
    chain.send(withdraw_tx(server, DEMO_WALLET, WSOL_MINT, SOL), DEMO)
    held = chain.token(ata(DEMO_WALLET, WSOL_MINT))
    tx = withdraw_tx(
        server, DEMO_WALLET, WSOL_MINT, SOL, detect_wsol_ata=True, create_wsol_ata=True, unwrap_wsol_ata=True
    )
    assert programs.ASSOCIATED_TOKEN_PROGRAM not in program_ids(tx) and token_tags(tx) == []
    chain.send(tx, DEMO)
    assert chain.token(ata(DEMO_WALLET, WSOL_MINT)) == held + SOL - withdrawal_fee(SOL)


def test_missing_wsol_account_without_create_is_refused(server):
    message = refused(
        server,
        "/withdraw/ix",
        strategy_id=DEMO_STRATEGY_ID,
        base_asset=WSOL_MINT,
        amount=SOL,
        user_key=DEMO_WALLET,
        create_wsol_ata=False,
    )
    assert "does not exist" in message and "create_wsol_ata" in message


# ---- closing the fund account ------------------------------------------------------------------------


def test_close_after_full_withdrawal_returns_the_rent(server):
    chain = Chain(server)
    user = new_user(server, tokens={USDC: 3_000_000})
    chain.send(deposit_tx(server, user.pubkey(), USDC, None), user)
    chain.send(withdraw_tx(server, user.pubkey(), USDC, None), user)
    identity = {"user_pubkey": str(user.pubkey()), "strategy_id": DEMO_STRATEGY_ID, "mint": USDC}
    lamports = chain.lamports(user.pubkey())
    body = ok(server, "/close-user-account/tx", **identity)
    assert isinstance(body, str)  # a bare JSON string, like every /tx answer
    tx = decode_transaction(body)
    assert tx.message.header.num_required_signatures == 1 and strategy_data(tx) == [bytes([sp.CLOSE])]
    chain.send(tx, user)
    assert chain.lamports(user.pubkey()) == lamports + POSITION_RENT - TX_FEE
    assert chain.held(user.pubkey(), USDC) is None
    assert position(server, user.pubkey(), USDC) is None
    assert refused(server, "/close-user-account/ix", 404, **identity).startswith("Fund account not found")


def test_closing_an_account_that_holds_funds_sweeps_them_to_the_recipient(server):
    chain = Chain(server)
    user = new_user(server, tokens={USDC: 3_000_000})
    chain.send(deposit_tx(server, user.pubkey(), USDC, None), user)
    identity = {"user_pubkey": str(user.pubkey()), "strategy_id": DEMO_STRATEGY_ID, "mint": USDC}
    recipient = Keypair().pubkey()
    chain_before = Path(server.chain_path).read_bytes()
    tx = decode_transaction(ok(server, "/close-user-account/tx", **identity, funds_recipient=str(recipient)))
    assert Path(server.chain_path).read_bytes() == chain_before  # building changed nothing
    lamports = chain.lamports(user.pubkey())
    chain.send(tx, user)
    assert chain.token(ata(recipient, USDC)) == 3_000_000
    assert chain.held(user.pubkey(), USDC) is None
    # The user paid the recipient's token account and got the position's rent back.
    assert chain.lamports(user.pubkey()) == lamports - TOKEN_ACCOUNT_RENT + POSITION_RENT - TX_FEE
    assert position(server, user.pubkey(), USDC) is None
    # Without a recipient, the funds go back to the user's own token account.
    chain.fund(user.pubkey(), tokens={USDC: 1_000_000})
    chain.send(deposit_tx(server, user.pubkey(), USDC, None), user)
    assert chain.token(ata(user.pubkey(), USDC)) == 0
    chain.send(decode_transaction(ok(server, "/close-user-account/tx", **identity)), user)
    assert chain.token(ata(user.pubkey(), USDC)) == 1_000_000


def test_close_by_fund_account_through_ix(server):
    chain = Chain(server)
    user = new_user(server, tokens={USDC: 1_000_000})
    chain.send(deposit_tx(server, user.pubkey(), USDC, 1_000_000), user)
    chain.send(withdraw_tx(server, user.pubkey(), USDC, None), user)
    lamports = chain.lamports(user.pubkey())
    body = ok(server, "/close-user-account/ix", user_account=str(position_of(user.pubkey(), USDC)))
    assert set(body) == {"close_user_fund_instructions"}
    chain.send(chain.from_ix(body, user.pubkey()), user)
    assert chain.lamports(user.pubkey()) == lamports + POSITION_RENT - TX_FEE
    assert position(server, user.pubkey(), USDC) is None
    # A fresh deposit opens the account again.
    chain.fund(user.pubkey(), tokens={USDC: 500_000})
    chain.send(deposit_tx(server, user.pubkey(), USDC, 500_000), user)
    assert position(server, user.pubkey(), USDC)["total_position_value"] == 500_000


def test_close_identity_problems(server):
    assert (
        refused(server, "/close-user-account/tx", 404, user_account=DEMO_WALLET)
        == f"Fund account {DEMO_WALLET} not found"
    )
    message = refused(server, "/close-user-account/ix", user_pubkey=DEMO_WALLET, strategy_id=DEMO_STRATEGY_ID)
    assert message == "Either user_account or user_pubkey + strategy_id + mint must be provided"
    assert (
        refused(server, "/close-user-account/ix", user_pubkey=DEMO_WALLET, strategy_id="nope", mint=USDC)
        == "Strategy not found"
    )
    message = refused(
        server,
        "/close-user-account/ix",
        user_pubkey=DEMO_WALLET,
        strategy_id=DEMO_STRATEGY_ID,
        mint=USDC,
        funds_recipient=str(ata(DEMO_WALLET, USDT)),
    )
    assert message == f"funds_recipient {ata(DEMO_WALLET, USDT)} is not a {USDC} token account"
    assert "Invalid funds_recipient" in refused(
        server, "/close-user-account/ix", user_account=str(position_of(DEMO_WALLET, USDC)), funds_recipient="x"
    )


# ---- refusals ----------------------------------------------------------------------------------------

D = {"strategy_id": DEMO_STRATEGY_ID, "base_asset": USDC, "user_key": DEMO_WALLET, "payer_key": DEMO_WALLET}
REFUSALS = [
    (
        "/deposit/tx",
        {**D, "amount": 1_250_750_001},
        # In token units with the symbol, as the user typed the amount
        f"Insufficient balance: the wallet holds 1,250.75 USDC (token account {ata(DEMO_WALLET, USDC)}); "
        "1,250.750001 USDC requested",
    ),
    (
        "/deposit/ix",
        {**D, "base_asset": by_symbol("USDS").mint, "all": True},
        "Insufficient balance: the wallet holds no USDS "
        f"(token account {ata(DEMO_WALLET, by_symbol('USDS').mint)}) to deposit",
    ),
    (
        "/withdraw/tx",
        {**D, "amount": 2_547_318_403},
        "Insufficient balance: the position holds 2,547.318402 USDC; "
        "withdrawing 2,547.318403 USDC takes 2,547.318403 USDC (fee 2.547319 USDC included)",
    ),
    (
        "/withdraw/ix",
        {**D, "amount": 2_547_318_402, "exclude_fees": True},
        "Insufficient balance: the position holds 2,547.318402 USDC; "
        "withdrawing 2,547.318402 USDC takes 2,549.865721 USDC (fee 2.547319 USDC included)",
    ),
    (
        "/withdraw/ix",
        {**D, "base_asset": JLP, "amount": 1},
        f"No position: wallet {DEMO_WALLET} has no position in {JLP} in strategy {DEMO_STRATEGY_ID}",
    ),
    (
        "/deposit/tx",
        {**D, "base_asset": BONK, "amount": 1},
        f"Asset {BONK} is not supported by strategy {DEMO_STRATEGY_ID}",
    ),
    (
        "/deposit/ix",
        {**D, "strategy_id": SECOND_STRATEGY_ID, "base_asset": by_symbol("mSOL").mint, "amount": 1},
        f"Asset {by_symbol('mSOL').mint} is not supported by strategy {SECOND_STRATEGY_ID}",
    ),
    ("/deposit/tx", {**D, "strategy_id": "no-such-strategy", "amount": 1}, "Strategy not found"),
    ("/withdraw/ix", {**D, "strategy_id": "no-such-strategy", "amount": 1}, "Strategy not found"),
    ("/deposit/ix", D, "Either amount or all must be provided"),
    ("/withdraw/ix", {**D, "all": False}, "Either amount or all must be provided"),
    ("/deposit/tx", {**D, "amount": 0}, "amount must be greater than 0"),
    ("/withdraw/tx", {**D, "amount": 0}, "amount must be greater than 0"),
    (
        "/deposit/tx",
        {**D, "user_key": "not-a-key", "amount": 1},
        "Invalid user_key: 'not-a-key' is not a valid public key",
    ),
    ("/withdraw/ix", {**D, "payer_key": "0OIl", "amount": 1}, "Invalid payer_key: '0OIl' is not a valid public key"),
    ("/deposit/ix", {**D, "base_asset": "USDC", "amount": 1}, "Invalid base_asset: 'USDC' is not a valid public key"),
    (
        "/deposit/tx",
        {**D, "user_token_account": "nope", "amount": 1},
        "Invalid user_token_account: 'nope' is not a valid public key",
    ),
    ("/deposit/tx", {**D, "payer_key": None, "amount": 1}, "payer_key must be provided"),
    ("/withdraw/tx", {**D, "payer_key": None, "amount": 1}, "payer_key must be provided"),
    ("/deposit/ix", {**D, "user_key": None, "amount": 1}, "user_key must be provided"),
    ("/withdraw/ix", {**D, "base_asset": None, "amount": 1}, "base_asset must be provided"),
    ("/deposit/tx", {"base_asset": USDC, "amount": 1}, "strategy_id must be provided for deposit"),
    ("/withdraw/tx", {"base_asset": USDC, "amount": 1}, "Strategy id must be provided"),
    (
        "/deposit/tx",
        {**D, "user_token_account": str(ata(DEMO_WALLET, USDT)), "amount": 1},
        f"Token account {ata(DEMO_WALLET, USDT)} is not a {USDC} account of {DEMO_WALLET}",
    ),
]


def test_amount_with_all_is_everything(server):
    """The service's own SDK tests send both; `all` wins."""
    both = decode_transaction(ok(server, "/deposit/tx", **D, amount=5, all=True))
    everything = decode_transaction(ok(server, "/deposit/tx", **D, all=True))
    assert strategy_data(both) == strategy_data(everything)


@pytest.mark.parametrize("path, params, message", REFUSALS)
def test_refusals(server, path, params, message):
    assert refused(server, path, **params) == message


def test_refusals_change_nothing(server):
    before = Path(server.ledger.path).read_text()
    for path, params, _ in REFUSALS[:5]:
        refused(server, path, **params)
    assert Path(server.ledger.path).read_text() == before


def test_payer_defaults_to_the_user_on_ix(server):
    body = ok(server, "/withdraw/ix", strategy_id=DEMO_STRATEGY_ID, base_asset=USDC, amount=1_000, user_key=DEMO_WALLET)
    tx = Chain(server).from_ix(body, DEMO.pubkey())
    assert tx.message.header.num_required_signatures == 1


# ---- what the chain says is what is served -----------------------------------------------------------


def test_airdrops_and_mints_over_rpc_show_in_balances(server):
    user = Keypair().pubkey()
    Chain(server).fund(user, 3 * SOL, {USDC: 4_000_000})
    assert wallet_part(server, user, NATIVE_SOL_PSEUDO_MINT) == 3 * SOL
    assert wallet_part(server, user, USDC) == 4_000_000


def test_a_transaction_failing_on_chain_changes_no_position(server):
    chain = Chain(server)
    before = position(server, DEMO_WALLET, USDC)
    server.runtime.set_fault("fail")
    tx = deposit_tx(server, DEMO_WALLET, USDC, 1_000_000)

    async def step(rpc: Rpc):
        signature = await rpc.send(sign_transaction(tx, [DEMO]).transaction)
        return (await rpc.signature_statuses([signature]))[0]

    status = chain._run(step)
    assert status is not None and status.err == {"InstructionError": [0, "ComputationalBudgetExceeded"]}
    assert position(server, DEMO_WALLET, USDC) == before


def test_state_survives_into_the_next_server(seeded, tmp_path):
    state = _copy(seeded, tmp_path / "persist")
    first = SandboxServer(state, api_key=KEY).start()
    try:
        user = new_user(first, tokens={USDC: 9_000_000})
        Chain(first).send(deposit_tx(first, user.pubkey(), USDC, 6_000_000), user)
        Chain(first).send(deposit_tx(first, DEMO_WALLET, USDC, 1_000_000), DEMO)
    finally:
        first.stop()
    second = SandboxServer(state, api_key=KEY).start()
    try:
        chain = Chain(second)
        assert (
            position(second, user.pubkey(), USDC)["total_position_value"]
            == 6_000_000
            == chain.held(user.pubkey(), USDC)
        )
        assert wallet_part(second, user.pubkey(), USDC) == 3_000_000 == chain.token(ata(user.pubkey(), USDC))
        assert (
            position(second, DEMO_WALLET, USDC)["total_position_value"]
            == 2_548_318_402
            == chain.held(DEMO_WALLET, USDC)
        )
        chain.send(withdraw_tx(second, user.pubkey(), USDC, None), user)
        assert chain.token(ata(user.pubkey(), USDC)) == 9_000_000 - withdrawal_fee(6_000_000)
    finally:
        second.stop()


def test_reset_starts_ledger_and_chain_afresh(server):
    chain = Chain(server)
    chain.send(deposit_tx(server, DEMO_WALLET, USDC, 1_000_000), DEMO)
    old_rpc = server.rpc_url
    server.reset()
    assert position(server, DEMO_WALLET, USDC)["total_position_value"] == 2_547_318_402
    assert Chain(server).held(DEMO_WALLET, USDC) == 2_547_318_402
    assert server.rpc_url != old_rpc


# ---- the OpenAPI document ----------------------------------------------------------------------------


def test_success_bodies_match_the_document(server):
    user = new_user(server, tokens={USDC: 2_000_000})
    u = str(user.pubkey())
    chain = Chain(server)
    deposit = {"strategy_id": DEMO_STRATEGY_ID, "base_asset": USDC, "user_key": u, "payer_key": u}
    for path in ("/deposit/tx", "/deposit/ix"):
        ok(server, path, **deposit, amount=1_000_000)
    body = ok(server, "/deposit/tx", **deposit, all=True)
    assert isinstance(body, str) and base64.b64decode(body)
    chain.send(decode_transaction(body), user)
    for path in ("/withdraw/tx", "/withdraw/ix"):
        ok(server, path, **deposit, amount=1_000, exclude_fees=True)
        ok(server, path, **deposit, all=True, detect_wsol_ata=True)
    chain.send(withdraw_tx(server, u, USDC, None), user)
    for path in ("/close-user-account/tx", "/close-user-account/ix"):
        ok(server, path, user_pubkey=u, strategy_id=DEMO_STRATEGY_ID, mint=USDC, payer=u)
        ok(server, path, user_account=str(position_of(u, USDC)))


def test_a_position_changed_on_chain_before_the_ledger_was_saved_is_caught_up_on_the_next_start(seeded, tmp_path):
    state = _copy(seeded, tmp_path / "crash")
    first = SandboxServer(state, api_key=KEY)
    usdc = Pubkey.from_string(USDC)
    # Lands on chain (and the chain file is saved) without the confirmation hook: as if the process
    # had stopped between the two saves.
    first.runtime.execute(
        [sp.deposit(DEMO.pubkey(), DEMO.pubkey(), ata(DEMO_WALLET, USDC), usdc, DEMO_STRATEGY_ID, 3_000_000)], [DEMO]
    )
    stale = first.ledger.positions(DEMO_WALLET, DEMO_STRATEGY_ID, USDC).all()[0]["total_position_value"]
    first.stop()
    second = SandboxServer(state, api_key=KEY).start()
    try:
        assert Chain(second).held(DEMO_WALLET, USDC) == stale + 3_000_000
        assert position(second, DEMO_WALLET, USDC)["total_position_value"] == stale + 3_000_000
        assert (
            position(second, DEMO_WALLET, USDC)["total_deposited_value"]
            == Chain(second).position(DEMO_WALLET, USDC).deposited
        )
    finally:
        second.stop()
