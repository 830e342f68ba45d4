"""`yield sandbox`: run the local service, say where its parts are, fund wallets, start afresh."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from yieldcli.addresses import check_pubkey
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.cli.session import sandbox_keypair_path, sandbox_state_path
from yieldcli.errors import UsageError
from yieldcli.files import write_atomically

if TYPE_CHECKING:
    from yieldcli.cli.session import Session

sandbox_app = opt.command_group(
    "A local service with demo data and a real Solana runtime: no account, key or network needed.\n\n"
    "Positions and balances follow the sandbox chain for every wallet with state on it (the demo\n"
    "wallet, and any wallet you fund with `yield sandbox airdrop`). Synthetic, never on chain: the\n"
    "wallets and positions added by --seed-wallets/--seed-positions, and the whale wallet holding\n"
    "more than a u64 of USDC (it exists to test amounts past 2^64)."
)

# Written by `sandbox serve` beside the state while it runs, so `sandbox info` can name its URLs.
# It holds no API key: the key is printed by `serve` only.
SERVER_FILE = "server.json"


@sandbox_app.command("serve")
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback unless --allow-remote)."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port (0 picks a free one)."),
    rpc_port: int = typer.Option(
        0,
        "--rpc-port",
        min=0,
        max=65534,
        help="Port of the Solana RPC; PubSub takes the next one (0: the last one used when free, else any).",
    ),
    api_key: Optional[str] = typer.Option(
        None,
        "--api-key",
        help="Key clients must send (default: the one kept with the sandbox's state, made on first use).",
        show_default=False,
    ),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Allow a non-loopback --host."),
    latency_ms: int = typer.Option(0, "--latency-ms", min=0, help="Delay added to every API response."),
    seed_positions: Optional[int] = typer.Option(
        None,
        "--seed-positions",
        min=0,
        help="Give the demo wallet N synthetic positions, balances and yield records.",
        show_default=False,
    ),
    seed_wallets: Optional[int] = typer.Option(
        None, "--seed-wallets", min=0, help="Add N synthetic wallets with balances and positions.", show_default=False
    ),
    slot_ms: Optional[int] = typer.Option(
        None,
        "--slot-ms",
        min=0,
        help="Length of a slot in ms (default 400; env YIELD_SANDBOX_SLOT_MS).",
        show_default=False,
    ),
    blockhash_window: Optional[int] = typer.Option(
        None,
        "--blockhash-window",
        min=1,
        help="Blocks a blockhash stays valid (default 150; env YIELD_SANDBOX_BLOCKHASH_WINDOW).",
        show_default=False,
    ),
    drop_sends: Optional[int] = typer.Option(
        None,
        "--drop-sends",
        min=0,
        help="Drop the first N sends of each transaction, as a busy cluster does (env YIELD_SANDBOX_DROP_SENDS).",
        show_default=False,
    ),
    min_priority_fee: Optional[int] = typer.Option(
        None,
        "--min-priority-fee",
        min=0,
        help="Land only transactions paying at least this many microlamports per compute unit "
        "(env YIELD_SANDBOX_MIN_PRIORITY_FEE).",
        show_default=False,
    ),
    start_slot: Optional[int] = typer.Option(
        None,
        "--start-slot",
        min=0,
        help="Slot of a new chain's genesis block (default 0, as a test validator; env YIELD_SANDBOX_START_SLOT). "
        "A chain already saved keeps its own.",
        show_default=False,
    ),
) -> None:
    """Serve the sandbox over HTTP until interrupted, printing its URL, API key and Solana RPC URL.

    Example: yield sandbox serve --port 8787
    """
    from yieldcli.sandbox.chain.knobs import Network
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID
    from yieldcli.sandbox.server import SandboxServer

    session = session_of(ctx)
    network = Network.from_env(
        session.env.vars,
        slot_ms=slot_ms,
        blockhash_window=blockhash_window,
        drop_sends=drop_sends,
        min_priority_fee=min_priority_fee,
        start_slot=start_slot,
    )
    state = sandbox_state_path(session.env)
    if api_key is None:
        from yieldcli.sandbox.keyfile import kept_api_key

        api_key, key_file = kept_api_key(state.parent)
        key_source, key_note = "kept", f"kept in {key_file}; the same after a restart"
    else:
        key_source, key_note = "given", "given by --api-key"
    try:
        server = SandboxServer(
            state,
            host=host,
            port=port,
            rpc_port=rpc_port,
            api_key=api_key,
            allow_remote=allow_remote,
            latency_ms=latency_ms,
            seed_positions=seed_positions,
            seed_wallets=seed_wallets,
            network=network,
        )
    except ValueError as exc:
        raise UsageError(
            str(exc).split(";")[0], hint="serve on 127.0.0.1, or pass --allow-remote to accept it"
        ) from None
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="pick another --port, or --port 0 for any free one",
        ) from None
    try:
        rpc_url = server.rpc_url
    except OSError as exc:
        server.stop()
        raise UsageError(
            f"cannot serve the Solana RPC on port {rpc_port} (and PubSub on {rpc_port + 1}): {exc.strerror or exc}",
            hint="pick another --rpc-port, or leave it out for any free one",
        ) from None
    # Written before the output: whoever reads the URL can find the record (`yield doctor`, `sandbox info`).
    record = state.parent / SERVER_FILE
    _write_private(
        record,
        {
            "url": server.url,
            "rpc_url": server.rpc_url,
            "ws_url": server.rpc.ws_url,
            "pid": os.getpid(),
            "api_key_source": key_source,  # `yield doctor` and `init` say whether a restart keeps the key
        },
    )
    try:
        _emit(
            session,
            {
                "url": server.url,
                "api_key": server.api_key,
                "api_key_source": key_source,
                "rpc_url": rpc_url,
                "ws_url": server.rpc.ws_url,
            },
            [
                f"sandbox service at {server.url}",
                f"API key: {server.api_key} ({key_note})",
                f"Solana RPC at {rpc_url}, PubSub (WebSocket) at {server.rpc.ws_url}",
                f"try: YIELD_API_KEY={server.api_key} yield --api-url {server.url} strategy info {DEMO_STRATEGY_ID}",
            ],
        )
        server.serve_forever()
    finally:
        record.unlink(missing_ok=True)


@sandbox_app.command("info")
def info(ctx: typer.Context) -> None:
    """Say where the sandbox's parts are: demo wallet and its keypair file, strategy and its program,
    state folder, running server.

    Example: yield sandbox info
    """
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET
    from yieldcli.solana.programs import SANDBOX_STRATEGY_PROGRAM

    session = session_of(ctx)
    state = sandbox_state_path(session.env)
    running = _running_server(state.parent / SERVER_FILE)
    body = {
        "demo_wallet": DEMO_WALLET,
        "demo_keypair": str(sandbox_keypair_path(session.env)),
        "strategy_id": DEMO_STRATEGY_ID,
        "strategy_program": SANDBOX_STRATEGY_PROGRAM,
        "state_folder": str(state.parent),
        "server": running,
    }
    lines = [
        f"demo wallet:   {body['demo_wallet']}",
        f"keypair file:  {body['demo_keypair']}",
        f"strategy:      {body['strategy_id']}",
        f"program:       {body['strategy_program']} (the sandbox's strategy program, a model; not the real service's)",
        f"state folder:  {body['state_folder']}",
    ]
    if running:
        lines += [
            f"service URL:   {running['url']}",
            f"Solana RPC:    {running['rpc_url']}",
            f"PubSub:        {running.get('ws_url', 'not told (started by an older yield)')}",
            "API key:       printed by `yield sandbox serve` when it started",
        ]
    else:
        lines.append("server:        none running (start one: yield sandbox serve)")
    _emit(session, body, lines)


@sandbox_app.command("airdrop")
def airdrop(
    ctx: typer.Context,
    address: str = typer.Argument(..., metavar="ADDRESS", help="Wallet to fund."),
    sol: Optional[str] = typer.Option(None, "--sol", help="SOL to give, e.g. 2.5.", show_default=False),
    token: Optional[str] = typer.Option(
        None, "--token", help="Token symbol or mint to give (with --amount).", show_default=False
    ),
    amount: Optional[str] = typer.Option(
        None, "--amount", help="Token units to give with --token, e.g. 100.", show_default=False
    ),
) -> None:
    """Give a wallet SOL or tokens on the sandbox chain (its associated token account is opened if needed).

    Example: yield sandbox airdrop 9xQe...Fin --sol 2 ; yield sandbox airdrop 9xQe...Fin --token USDC --amount 100
    """
    from yieldcli.amounts import Amount
    from yieldcli.sandbox.demo import chain_tokens

    check_pubkey(address, "ADDRESS")
    if (sol is None) == (token is None):
        raise UsageError(
            "give either --sol N or --token SYMBOL --amount X", hint="yield sandbox airdrop ADDRESS --sol 2"
        )
    if token is not None and amount is None:
        raise UsageError("--token needs --amount", hint="yield sandbox airdrop ADDRESS --token USDC --amount 100")
    if sol is not None and amount is not None:
        raise UsageError("--amount goes with --token; for SOL use --sol N alone")
    known = None
    if token is not None:
        on_chain = chain_tokens()  # the sandbox's own: the tokens listed by metadata only are named too
        name = "SOL" if token.lower() == "wsol" else token.lower()  # people type WSOL too
        known = next((t for t in on_chain if token == t[1] or name == t[0].lower()), None)
        if known is None:
            raise UsageError(
                f"the sandbox chain has no mint {token!r}",
                hint="tokens on it: " + ", ".join(t[0] for t in on_chain),
            )
        mint = known[1]
        given = Amount.parse(str(amount), known[2])
    else:
        given = Amount.parse(str(sol), 9, name="--sol")

    from solders.pubkey import Pubkey

    from yieldcli.sandbox.server import SandboxServer

    session = session_of(ctx)
    # The embedded sandbox on the state folder: safe beside a running `sandbox serve` (one lock).
    server = SandboxServer(sandbox_state_path(session.env))
    try:
        chain, owner = server.chain, Pubkey.from_string(address)
        if token is None or known is None:
            signature = chain.runtime.airdrop(owner, given.raw)
            result = {"address": address, "sol": str(given), "signature": signature}
        else:
            account = chain.runtime.mint_to(owner, Pubkey.from_string(mint), given.raw)
            result = {"address": address, "token": known[0], "amount": str(given), "token_account": str(account)}
        chain.sync_wallets([address])
    finally:
        server.stop()
    what = f"{result['sol']} SOL" if token is None else f"{result['amount']} {result['token']}"
    _emit(session, result, [f"gave {what} to {address}"])


_STATUSES = {"live": "Live", "paused": "Paused", "withdraw-only": "WithdrawOnly", "withdrawonly": "WithdrawOnly"}


@sandbox_app.command("fund-status")
def fund_status(
    ctx: typer.Context,
    asset: str = typer.Argument(..., metavar="ASSET", help="The fund's token: a symbol or mint, e.g. USDC."),
    status: Optional[str] = typer.Argument(
        None, metavar="[STATUS]", help="live, paused or withdraw-only; leave out to see the status.", show_default=False
    ),
    strategy: Optional[str] = typer.Option(None, "--strategy", help="Strategy id (default: the demo strategy)."),
) -> None:
    """See or set a sandbox fund's status, as the service publishes it: deposits are refused unless the
    fund is live, withdrawals when it is paused.

    Example: yield sandbox fund-status USDC paused ; yield sandbox fund-status USDC live
    """
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID
    from yieldcli.sandbox.ledger import Ledger, LedgerError
    from yieldcli.sandbox.rows import fund_status as status_of
    from yieldcli.tokens import resolve_asset

    wanted = None if status is None else _STATUSES.get(status.strip().lower())
    if status is not None and wanted is None:
        raise UsageError(f"unknown fund status {status!r}", hint="use live, paused or withdraw-only")
    mint, strategy_id = resolve_asset(asset, "ASSET"), strategy or DEMO_STRATEGY_ID
    session = session_of(ctx)
    ledger = Ledger(sandbox_state_path(session.env))
    try:
        fund = ledger.set_fund_status(strategy_id, mint, wanted) if wanted else ledger.fund_for(strategy_id, mint)
    except LedgerError as exc:
        raise UsageError(str(exc), hint="see the strategy's assets: yield --sandbox strategy info") from None
    if fund is None:
        raise UsageError(f"strategy {strategy_id} has no fund for {asset}")
    body = {"strategy_id": strategy_id, "asset": mint, "fund_id": fund["fund_id"], "status": status_of(fund)}
    _emit(session, body, [f"fund {body['fund_id']} ({asset}): {body['status']}"])


@sandbox_app.command("reset")
def reset(ctx: typer.Context) -> None:
    """Start the sandbox's state afresh (demo balances, no deposits).

    Example: yield sandbox reset
    """
    session = session_of(ctx)
    # Every file of the sandbox (service ledger, chain accounts) lives in this folder; the next
    # start seeds it anew from the demo data.
    folder = sandbox_state_path(session.env).parent
    running = _running_server(folder / SERVER_FILE)
    if running:
        raise UsageError(
            f"a `yield sandbox serve` (pid {running['pid']}) is using {folder}",
            hint="stop it first, then reset",
        )
    shutil.rmtree(folder, ignore_errors=True)
    session.output().info(f"sandbox state reset ({folder})")


def _emit(session: Session, body: dict[str, Any], lines: list[str]) -> None:
    """Lines for people in table mode, else the body (these are not service bodies)."""
    session.output().result(body, lambda: lines)


def _write_private(path: Path, body: dict[str, Any]) -> None:
    write_atomically(path, json.dumps(body))


def _running_server(path: Path) -> dict[str, Any] | None:
    """The server a `sandbox serve` on this folder said it runs, if its process is still alive."""
    try:
        body = json.loads(path.read_text())
        os.kill(int(body["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    running = {"url": str(body.get("url")), "rpc_url": str(body.get("rpc_url")), "pid": int(body["pid"])}
    if isinstance(body.get("ws_url"), str):
        running["ws_url"] = body["ws_url"]
    return running
