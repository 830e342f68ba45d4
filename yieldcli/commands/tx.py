"""`yield tx`: the same review, signing and sending for a transaction that came from anywhere."""

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from yieldcli.addresses import check_pubkey
from yieldcli.commands import options as opt
from yieldcli.commands.context import session_of
from yieldcli.errors import TransactionExpired, TransactionFailed, TransactionPending, UsageError
from yieldcli.render.output import dumps

tx_app = opt.command_group("Inspect, sign and send transactions from anywhere; check a signature.")

Source = Annotated[str, typer.Argument(metavar="[FILE|-]", help="Base64 transaction file, or - for stdin.")]
PayerOpt = Annotated[Optional[str], typer.Option("--payer", help="The fee payer you expect (default: the keypair's public key).", show_default=False)]
WalletOpt = Annotated[Optional[str], typer.Option("--wallet", help="Another signer you expect to sign later.", show_default=False)]


def read_transaction(session, source: str) -> str:
    """Base64 text from a file or stdin; our own JSON output (with a `transaction` field) works too."""
    if source in ("-", "stdin:"):
        if session.env.stdin_isatty:
            raise UsageError("no transaction given", hint="pass a FILE, or pipe base64 text into `-`")
        text = session.env.stdin.read()
    else:
        try:
            text = Path(source).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read transaction file {source}: {exc.strerror or type(exc).__name__}") from None
        except UnicodeDecodeError:
            raise UsageError(f"transaction file {source} is not text (expected base64)") from None
    text = text.strip()
    if text.startswith(("{", '"')):
        try:
            parsed = json.loads(text)
        except ValueError:
            raise UsageError(f"{source}: looks like JSON but cannot be parsed") from None
        if isinstance(parsed, dict):
            parsed = parsed.get("transaction") or parsed.get("encoded_transaction")
        if not isinstance(parsed, str):
            raise UsageError(f"{source}: no transaction found (expected base64 text or a JSON object with 'transaction')")
        text = parsed
    return text


def _run_on(session, out, options, text: str, payer: Optional[str], wallet: Optional[str]) -> None:
    from yieldcli.chain.decode import decode_transaction
    from yieldcli.commands.txflow import Obtained, Subject, run

    tx = decode_transaction(text)
    named = {k for k in (payer, wallet) if k}
    subject = Subject("transaction", payer, named, wallet)

    async def obtain(rpc) -> Obtained:
        return Obtained(tx)

    run(session, out, options, subject, obtain)


@tx_app.command("inspect")
@opt.with_tx_options(exclude=("ix", "sign", "send", "yes", "no_wait", "commitment", "timeout", "keypair", "again"))
def inspect(
    ctx: typer.Context,
    source: Source = "-",
    output: opt.Output = None,
    json_: opt.Json = False,
    tx=None,  # the shared transaction flags, from with_tx_options
) -> None:
    """Review a transaction: payer, signers, instructions, and a simulation.

    Example: yield tx inspect tx.b64 -o json | jq '.review.instructions[].program'
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    _run_on(session, out, tx, read_transaction(session, source), None, None)


@tx_app.command("sign")
@opt.with_tx_options(exclude=("ix", "sign", "send", "no_wait", "commitment", "timeout", "again"))
def sign(
    ctx: typer.Context,
    source: Source = "-",
    payer: PayerOpt = None,
    wallet: WalletOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    tx=None,  # the shared transaction flags, from with_tx_options
) -> None:
    """Sign the slots your keypair owns and print the transaction and the signers still missing.

    Example: yield tx sign unsigned.b64 -k user.json --payer PAYER -o json > partly-signed.json
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    payer = None if payer is None else check_pubkey(payer, "--payer")
    wallet = None if wallet is None else check_pubkey(wallet, "--wallet")
    tx.sign = True
    tx.check(session)
    _run_on(session, out, tx, read_transaction(session, source), payer, wallet)


@tx_app.command("send")
@opt.with_tx_options(exclude=("ix", "sign", "send"))
def send(
    ctx: typer.Context,
    source: Source = "-",
    payer: PayerOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    tx=None,  # the shared transaction flags, from with_tx_options
) -> None:
    """Sign what is still yours to sign, send, and wait for confirmation.

    Example: yield tx send partly-signed.json -k payer.json --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    payer = None if payer is None else check_pubkey(payer, "--payer")
    tx.send = True
    tx.check(session)
    _run_on(session, out, tx, read_transaction(session, source), payer, None)


@tx_app.command("status")
def status(
    ctx: typer.Context,
    signature: str = typer.Argument(..., help="Transaction signature."),
    url: opt.RpcUrl = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Say what became of a transaction: confirmed, failed, expired or still pending.

    Example: yield tx status 5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb -o json | jq -r .status
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    from solders.signature import Signature

    try:
        Signature.from_string(signature)
    except ValueError:
        raise UsageError(f"invalid signature {signature!r}: expected base58 text of 64 bytes") from None
    import asyncio

    rpc_url = session.rpc_url(url)
    result = asyncio.run(_status(session, rpc_url, signature))
    if out.mode == "table":
        session.env.stdout.write(f"{signature}: {result['status']}" + (f" in slot {result['slot']}" if result.get("slot") else "") + "\n")
    else:
        session.env.stdout.write(dumps(result) + "\n")
    if result["status"] == "failed":
        raise TransactionFailed(f"transaction {signature} failed on chain: {result['error']}")
    if result["status"] == "expired":
        raise TransactionExpired(f"transaction {signature} expired without landing; nothing was spent")
    if result["status"] in ("unknown", "pending", "processed") :
        raise TransactionPending(f"transaction {signature} is {result['status']}", hint="check again later")


async def _status(session, rpc_url: str, signature: str) -> dict:
    from yieldcli.chain.rpc import Rpc, describe_error, explorer_url
    from yieldcli.commands.sending import journal_of
    from yieldcli.errors import ConfigError

    journal = journal_of(session)
    try:
        entry = journal.find(signature)
    except ConfigError:
        # The hint for a damaged journal is to check its signatures here: the journal is only a help.
        journal, entry = None, None
    async with Rpc(rpc_url, timeout=session.timeout()) as rpc:
        height = await rpc.block_height() if entry is not None else None
        statuses = await rpc.signature_statuses([signature])
        found = statuses[0] if statuses else None
        if found is None:
            if entry is not None and height > entry.last_valid_block_height:
                journal.remove(signature)
                return {"signature": signature, "status": "expired", "last_valid_block_height": entry.last_valid_block_height}
            return {"signature": signature, "status": "unknown"}
        if journal is not None:
            journal.remove(signature)
        if found.err is not None:
            return {"signature": signature, "status": "failed", "slot": found.slot, "error": describe_error(found.err)}
        return {"signature": signature, "status": found.confirmation_status or "finalized", "slot": found.slot,
                "explorer": explorer_url(signature, rpc_url)}
