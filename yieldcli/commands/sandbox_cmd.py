"""`yield sandbox`: run the local service, or start its state afresh."""

from typing import Optional

import typer

from yieldcli.commands import options as opt
from yieldcli.commands.context import session_of
from yieldcli.render.output import dumps
from yieldcli.session import sandbox_state_path

sandbox_app = opt.command_group("A local service with demo data: no account, key or network needed.")


@sandbox_app.command("serve")
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback unless --allow-remote)."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port (0 picks a free one)."),
    api_key: Optional[str] = typer.Option(None, "--api-key", help="Key clients must send (default: a random one).", show_default=False),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Allow a non-loopback --host."),
    latency_ms: int = typer.Option(0, "--latency-ms", min=0, help="Delay added to every API response."),
    seed_positions: Optional[int] = typer.Option(None, "--seed-positions", min=0, help="Give the demo wallet N positions, balances and yield records.", show_default=False),
    seed_wallets: Optional[int] = typer.Option(None, "--seed-wallets", min=0, help="Add N wallets with balances and positions.", show_default=False),
) -> None:
    """Serve the sandbox over HTTP until interrupted, printing its URL and API key.

    Example: yield sandbox serve --port 8787
    """
    from yieldcli.sandbox.server import SandboxServer

    session = session_of(ctx)
    server = SandboxServer(
        sandbox_state_path(session.env), host=host, port=port, api_key=api_key, allow_remote=allow_remote,
        latency_ms=latency_ms, seed_positions=seed_positions, seed_wallets=seed_wallets,
    )
    info = {"url": server.url, "api_key": server.api_key}
    rpc_url = getattr(server, "rpc_url", None)
    if rpc_url:
        info["rpc_url"] = rpc_url
    out = session.output()
    if out.mode == "table":
        lines = [f"sandbox service at {server.url}", f"API key: {server.api_key}"]
        if rpc_url:
            lines.append(f"Solana RPC at {rpc_url}")
        lines.append(f"try: YIELD_API_KEY={server.api_key} yield --api-url {server.url} strategy info")
        session.env.stdout.write("\n".join(lines) + "\n")
    else:
        session.env.stdout.write(dumps(info) + "\n")
    session.env.stdout.flush()
    server.serve_forever()


@sandbox_app.command("reset")
def reset(ctx: typer.Context) -> None:
    """Start the sandbox's state afresh (demo balances, no deposits).

    Example: yield sandbox reset
    """
    import shutil

    session = session_of(ctx)
    # Every file of the sandbox (service ledger, chain accounts) lives in this folder; the next
    # start seeds it anew from the demo data.
    folder = sandbox_state_path(session.env).parent
    shutil.rmtree(folder, ignore_errors=True)
    session.output().info(f"sandbox state reset ({folder})")
