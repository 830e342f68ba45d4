"""`yield ledger address`: the public key of a key on a Ledger, optionally shown on the device to compare."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer

from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.errors import ConfigError

if TYPE_CHECKING:
    from solders.pubkey import Pubkey

    from yieldcli.chain.keys.ledger.signer import LedgerSigner
    from yieldcli.chain.keys.ledger.urls import LedgerUrl
    from yieldcli.cli.session import Session

ledger_app = opt.command_group("Use a Ledger (the Solana app): show the address of one of its keys.")


@ledger_app.command("address")
def address(
    ctx: typer.Context,
    key: Optional[str] = typer.Option(
        None,
        "--key",
        metavar="N[/M]",
        help="The key at m/44'/501'/N'[/M'] (default: the configured usb://ledger keypair, else m/44'/501').",
        show_default=False,
    ),
    confirm: bool = typer.Option(
        False, "--confirm", help="Show the address on the Ledger for you to compare and approve."
    ),
    keypair: opt.Keypair = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Print the public key of a key on a Ledger, as `solana-keygen pubkey usb://ledger?key=0` does.

    Example: yield ledger address --key 0/0 --confirm
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    url = ledger_url(session, key, keypair)
    from yieldcli.chain.keys.ledger.signer import LedgerSigner

    signer = LedgerSigner(url)
    if confirm:
        session.env.stderr.write(f"check the address on your Ledger ({url.path}) and approve it there\n")
        session.env.stderr.flush()
        pubkey = _confirmed(signer)
    else:
        pubkey = signer.pubkey()
    out.report(
        {"address": str(pubkey), "path": url.path, "url": str(url), "confirmed_on_device": confirm},
        lambda: (str(pubkey),),
    )


def ledger_url(session: Session, key: str | None, keypair_flag: str | None) -> LedgerUrl:
    """--key N/M, else the configured keypair when it is a Ledger URL, else `usb://ledger` (m/44'/501')."""
    from yieldcli.chain.keys.ledger.urls import SOLANA_PATH, LedgerUrl, is_ledger_url, parse_key, parse_ledger_url

    if key is not None:
        return LedgerUrl(SOLANA_PATH + parse_key(key))
    try:
        configured = str(session.keypair_source(keypair_flag).value)
    except ConfigError:
        configured = ""
    return parse_ledger_url(configured if is_ledger_url(configured) else "usb://ledger")


def _confirmed(signer: LedgerSigner) -> Pubkey:
    from yieldcli.chain.keys.ledger.errors import LedgerDeclined

    try:
        return signer.confirm_address()
    except LedgerDeclined:
        raise LedgerDeclined("the address was rejected on the Ledger") from None
