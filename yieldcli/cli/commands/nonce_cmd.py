"""`yield nonce`: create and read durable-nonce accounts, so signatures can wait longer than a blockhash."""

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from yieldcli.addresses import check_pubkey
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.errors import ConfigError, UsageError
from yieldcli.solana.cluster import COMMITMENTS, DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT

if TYPE_CHECKING:
    from solders.keypair import Keypair

    from yieldcli.chain.tx.nonce import NonceAccount

nonce_app = opt.command_group(
    "Create and show durable-nonce accounts (for transactions signed long before they are sent)."
)


@nonce_app.command("create")
def create(
    ctx: typer.Context,
    authority: str = typer.Option(
        ..., "--authority", help="Who may advance (use) the nonce: a public key.", show_default=False
    ),
    outfile: Optional[str] = typer.Option(
        None,
        "--outfile",
        help="Also write the new nonce account's keypair here (0600; never overwritten).",
        show_default=False,
    ),
    keypair: opt.Keypair = None,
    url: opt.RpcUrl = None,
    yes: opt.Yes = False,
    commitment: opt.Commitment = DEFAULT_COMMITMENT,
    timeout: opt.ConfirmTimeout = DEFAULT_CONFIRM_TIMEOUT,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Create a nonce account paid by your keypair.

    As `solana create-nonce-account` does: an 80-byte System account funded with the rent-exempt
    minimum, whose nonce only --authority can advance. Prints its address and nonce.

    Example: yield nonce create --authority COLD_KEY_PUBKEY -k payer.json --yes -o json
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    authority = check_pubkey(authority, "--authority")
    if commitment not in COMMITMENTS:
        raise UsageError(f"invalid --commitment {commitment!r}", hint="use processed, confirmed or finalized")
    if timeout <= 0:
        raise UsageError(f"invalid --confirm-timeout {timeout}: expected a positive number of seconds")
    if not yes and not session.env.interactive:
        raise UsageError(
            "creating a nonce account needs --yes when not on a terminal", hint="add --yes to confirm non-interactively"
        )
    if outfile is not None and Path(outfile).expanduser().exists():
        raise UsageError(f"{outfile} already exists; not overwriting a keypair file", hint="choose another --outfile")
    signer = session.load_signer(str(session.keypair_source(keypair).value))
    from solders.keypair import Keypair

    from yieldcli import Client
    from yieldcli.client.orders import journal_path

    nonce_keypair = Keypair()

    def confirm(question: str, prepared: object) -> bool:
        """The person's yes (not asked with --yes); then the new account's keypair file, before the send."""
        if not yes:
            from yieldcli.cli.prompts import ask

            if not ask(question):
                return False
        if outfile is not None:
            _write_keypair(Path(outfile).expanduser(), nonce_keypair)
        return True

    def sent(signature: str) -> None:
        # Even with --quiet: if the wait is interrupted, the user still knows what may land.
        session.env.stderr.write(f"sent {signature}\n")
        session.env.stderr.flush()

    rpc_url = session.rpc_url(url)
    with Client(
        rpc_url=rpc_url, keypair=signer, journal_path=journal_path(session.env), timeout=session.timeout()
    ) as client:
        created = client.create_nonce_account(
            authority,
            account=nonce_keypair,
            confirm=confirm,
            commitment=commitment,
            timeout=timeout,
            on_sent=sent,
            warn=out.warn,
            log=session.log,
        )
    result = {
        **created.to_dict(),
        "keypair_file": str(Path(outfile).expanduser()) if outfile is not None else None,
    }
    out.report(
        result,
        lambda: (
            f"nonce account {result['address']} (authority {result['authority']}) created in slot {result['slot']}",
            f"nonce: {result['nonce']}",
        ),
    )


def _sol(lamports: int) -> str:
    from yieldcli.chain.fees.compute_budget import sol_text

    return sol_text(lamports)


def _write_keypair(path: Path, keypair: "Keypair") -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(
            f"{path} already exists; not overwriting a keypair file", hint="choose another --outfile"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot write the nonce keypair to {path}: {exc.strerror or type(exc).__name__}") from None
    with os.fdopen(fd, "w") as handle:
        json.dump(list(bytes(keypair)), handle)


@nonce_app.command("show")
def show(
    ctx: typer.Context,
    account: str = typer.Argument(..., metavar="ACCOUNT", help="The nonce account's address."),
    url: opt.RpcUrl = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show a nonce account's authority, nonce and lamports.

    The nonce is the value a transaction built on the account uses as its blockhash.

    Example: yield nonce show NONCE_ACCOUNT -o json | jq -r .nonce
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    account = check_pubkey(account, "ACCOUNT")
    import asyncio

    from solders.pubkey import Pubkey

    from yieldcli.chain.rpc.adapter import Rpc
    from yieldcli.chain.tx.nonce import fetch_nonce

    async def read() -> "NonceAccount":
        async with Rpc(session.rpc_url(url), timeout=session.timeout()) as rpc:
            return await fetch_nonce(rpc, Pubkey.from_string(account))

    nonce = asyncio.run(read())
    out.report(
        nonce.to_dict(),
        lambda: (
            f"address:    {nonce.address}",
            f"authority:  {nonce.authority}",
            f"nonce:      {nonce.nonce}",
            f"lamports:   {nonce.lamports} ({_sol(nonce.lamports)} SOL)",
            f"fee/sig:    {nonce.lamports_per_signature} lamports",
        ),
    )
