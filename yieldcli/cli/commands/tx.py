"""`yield tx`: the same review, signing and sending for a transaction that came from anywhere."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from yieldcli.addresses import check_pubkey
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.errors import ConfigError, TransactionExpired, TransactionFailed, TransactionPending, UsageError
from yieldcli.files import PIPE_HINT, read_small_file, read_small_stream, reads_stdin
from yieldcli.urls import redact_url

if TYPE_CHECKING:
    from yieldcli.chain.transact.journal import InFlight
    from yieldcli.cli.commands.txflow import TxOptions
    from yieldcli.cli.render.output import Output
    from yieldcli.cli.session import Session

tx_app = opt.command_group("Inspect, sign and send transactions from anywhere; check a signature.")

Source = Annotated[str, typer.Argument(metavar="[FILE|-]", help="Base64 transaction file, or - for stdin.")]
PayerOpt = Annotated[
    Optional[str],
    typer.Option("--payer", help="The fee payer you expect (default: the keypair's public key).", show_default=False),
]
WalletOpt = Annotated[
    Optional[str],
    typer.Option(
        "--wallet",
        help="A co-signer you name: one who signs later, or who signed already (the two-party flow). "
        "A signature from a key nobody named is refused.",
        show_default=False,
    ),
]
NonceOpt = Annotated[
    Optional[str],
    typer.Option(
        "--nonce",
        metavar="ACCOUNT",
        help="The durable-nonce account you expect the transaction to be built on. "
        "Without it, a durable-nonce transaction is refused: it could land at any later time.",
        show_default=False,
    ),
]
ExpectOpt = Annotated[
    Optional[str],
    typer.Option(
        "--expect",
        metavar="ACTION:ASSET[:AMOUNT]",
        help="What the transaction must do: deposit:USDC:10, withdraw:USDC:all, close-account:USDC. "
        "Without it, signing may only cost you the network fee.",
        show_default=False,
    ),
]


def parse_expect(text: str) -> tuple[str, str, Optional[int]]:
    """`deposit:USDC:10` to (action, mint, base units or None for all)."""
    from yieldcli import tokens
    from yieldcli.amounts import Amount
    from yieldcli.chain.transact.engine import ACTIONS

    parts = text.split(":")
    action = parts[0].strip().lower()
    wanted = 2 if action == "close-account" else 3
    if action not in ACTIONS or len(parts) != wanted:
        raise UsageError(
            f"invalid --expect {text!r}", hint="e.g. deposit:USDC:10, withdraw:USDC:all or close-account:USDC"
        )
    mint = tokens.resolve_asset(parts[1].strip(), "--expect asset")
    if action == "close-account" or parts[2].strip().lower() == "all":
        return action, mint, None
    known = tokens.by_mint(mint)
    if known is None:
        raise UsageError(f"--expect: the decimals of {mint} are not known", hint="use a known symbol, or :all")
    return action, mint, Amount.parse(parts[2].strip(), known.decimals, name="--expect amount").raw


def read_transaction(session: "Session", source: str) -> str:
    """Base64 text from a file or stdin; our own JSON output (with a `transaction` field) works too.

    Reads are bounded (TX_TEXT_MAX_BYTES) and a file must be a regular one, so `/dev/zero`, a
    huge file or a FIFO nobody writes to ends in one line instead of a hang or a memory blow-up.
    """
    from yieldcli.chain.tx.decode import TX_TEXT_MAX_BYTES

    if reads_stdin(source):
        if session.env.stdin_isatty:
            raise UsageError("no transaction given", hint="pass a FILE, or pipe base64 text into `-`")
        text = read_small_stream(session.env.stdin, limit=TX_TEXT_MAX_BYTES, what="the transaction", error=UsageError)
    else:
        if not source:
            raise UsageError("the transaction file name is empty", hint="pass a FILE, or - for standard input")
        path = Path(source).expanduser()
        found = read_small_file(
            str(path),
            label=f"transaction file {source}",
            limit=TX_TEXT_MAX_BYTES,
            error=UsageError,
            pipe_hint=PIPE_HINT,
        )
        try:
            text = found.data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"transaction file {source} is not text (expected base64)") from None
    text = text.strip()
    if text.startswith(("{", '"')):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            raise UsageError(f"{source}: looks like JSON but cannot be parsed") from None
        if isinstance(parsed, dict):
            parsed = parsed.get("transaction") or parsed.get("encoded_transaction")
        if not isinstance(parsed, str):
            raise UsageError(
                f"{source}: no transaction found (expected base64 text or a JSON object with 'transaction')"
            )
        text = parsed
    return text


def _run_on(
    session: "Session",
    out: "Output",
    options: "TxOptions",
    text: str,
    payer: Optional[str],
    wallet: Optional[str],
    expect: Optional[str],
    nonce: Optional[str] = None,
) -> None:
    from yieldcli.chain.transact.obtain import given
    from yieldcli.chain.tx.decode import decode_transaction
    from yieldcli.cli.commands.txflow import run
    from yieldcli.client.driver import ready_given
    from yieldcli.client.orders import stated_request

    action, mint, amount = parse_expect(expect) if expect else ("transaction", None, None)
    tx = decode_transaction(text)
    # A stated deposit goes into the strategy `yield` is set to, when it is set to one (the guard names it).
    strategy = session.settings.value("strategy") if action != "transaction" else None
    request = stated_request(
        action, mint=mint, amount=amount, payer=payer, wallet=wallet, nonce=nonce, strategy_id=strategy or None
    )
    # Its cluster: the one its blockhash is known on, as `Client.prepare_transaction`'s.
    settings = options.settings(session)
    run(
        session,
        out,
        options,
        settings,
        ready_given(settings, request, given(tx), options.write(session), options.limits()),
    )


@tx_app.command("inspect")
@opt.with_tx_options(
    exclude=(
        "ix",
        "sign",
        "send",
        "yes",
        "no_wait",
        "commitment",
        "timeout",
        "keypair",
        "unsafe_allow_mismatch",
        "again",
        "priority_fee",
        "max_fee",
        "nonce",
        "nonce_authority",
    )
)
def inspect(
    ctx: typer.Context,
    source: Source = "-",
    expect: ExpectOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    *,
    tx: "TxOptions",  # the shared transaction flags, from with_tx_options
) -> None:
    """Review a transaction: payer, signers, instructions, and a simulation.

    Example: yield tx inspect tx.b64 -o json | jq '.review.instructions[].program'
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    _run_on(session, out, tx, read_transaction(session, source), None, None, expect)


@tx_app.command("sign")
@opt.with_tx_options(
    exclude=("ix", "sign", "send", "no_wait", "commitment", "timeout", "again", "nonce", "nonce_authority")
)
def sign(
    ctx: typer.Context,
    source: Source = "-",
    payer: PayerOpt = None,
    wallet: WalletOpt = None,
    expect: ExpectOpt = None,
    nonce: NonceOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    *,
    tx: "TxOptions",  # the shared transaction flags, from with_tx_options
) -> None:
    """Sign the slots your keypair owns and print the transaction and the signers still missing.

    Example: yield tx sign unsigned.b64 -k user.json --payer PAYER -o json > partly-signed.json
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    payer = None if payer is None else check_pubkey(payer, "--payer")
    wallet = None if wallet is None else check_pubkey(wallet, "--wallet")
    nonce = None if nonce is None else check_pubkey(nonce, "--nonce")
    tx.sign = True
    tx.check(session)
    _run_on(session, out, tx, read_transaction(session, source), payer, wallet, expect, nonce)


@tx_app.command("send")
@opt.with_tx_options(exclude=("ix", "sign", "send", "nonce", "nonce_authority"))
def send(
    ctx: typer.Context,
    source: Source = "-",
    payer: PayerOpt = None,
    wallet: WalletOpt = None,
    expect: ExpectOpt = None,
    nonce: NonceOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    *,
    tx: "TxOptions",  # the shared transaction flags, from with_tx_options
) -> None:
    """Sign what is still yours to sign, send, and wait for confirmation.

    Example: yield tx send partly-signed.json -k payer.json --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    payer = None if payer is None else check_pubkey(payer, "--payer")
    wallet = None if wallet is None else check_pubkey(wallet, "--wallet")
    nonce = None if nonce is None else check_pubkey(nonce, "--nonce")
    tx.send = True
    tx.check(session)
    _run_on(session, out, tx, read_transaction(session, source), payer, wallet, expect, nonce)


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
    out.report(
        result,
        lambda: [f"{signature}: {result['status']}" + (f" in slot {result['slot']}" if result.get("slot") else "")],
    )
    if result["status"] == "failed":
        raise TransactionFailed(f"transaction {signature} failed on chain: {result['error']}", kind="tx.failed")
    if result["status"] == "expired":
        raise TransactionExpired(
            f"transaction {signature} expired without landing; nothing was spent", kind="tx.expired"
        )
    if result["status"] == "pending":
        raise TransactionPending(
            f"transaction {signature} is not seen yet; it can still land {result['deadline']}",
            kind="tx.pending",
            hint="check again later; once that passes unseen, it can never land",
        )
    if result["status"] == "unknown":
        raise TransactionPending(
            f"transaction {signature} is unknown to the RPC {redact_url(rpc_url)}",
            kind="tx.unknown",
            hint="check that -u/--url is the cluster it was sent to; if it was sent, check again later",
        )
    if result["status"] == "processed":
        raise TransactionPending(
            f"transaction {signature} is processed, not yet confirmed", kind="tx.pending", hint="check again later"
        )


async def _status(session: "Session", rpc_url: str, signature: str) -> dict[str, Any]:
    from yieldcli.chain.rpc.adapter import Rpc, explorer_url
    from yieldcli.chain.transact.journal import Journal
    from yieldcli.client.orders import journal_path
    from yieldcli.solana.transaction_errors import describe_error

    opened = Journal(journal_path(session.env))
    journal: Journal | None = opened
    entry: InFlight | None = None
    try:
        entry = opened.find(signature)
    except ConfigError:
        # The hint for a damaged journal is to check its signatures here: the journal is only a help.
        journal = None
    from yieldcli.chain.transact.settle import lifetimes_over

    async with Rpc(rpc_url, timeout=session.timeout()) as rpc:
        # Before the status: not seen once its blockhash passed (or its nonce moved on), it never lands.
        over, height = (await lifetimes_over(rpc, [entry])) if entry is not None else ({}, None)
        statuses = await rpc.signature_statuses([signature])
        found = statuses[0] if statuses else None
        if found is None and entry is not None and not over[signature]:
            # Sent from here and not seen yet: it can land until its deadline, which the person is told.
            return {
                "signature": signature,
                "status": "pending",
                "last_valid_block_height": entry.last_valid_block_height,
                "block_height": height,
                "nonce_account": entry.nonce_account,
                "deadline": entry.deadline(height),
            }
        if found is None:
            if entry is not None and journal is not None and over[signature]:
                journal.remove(signature)
                lifetime = (
                    {"nonce_account": entry.nonce_account}
                    if entry.last_valid_block_height is None
                    else {"last_valid_block_height": entry.last_valid_block_height}
                )
                return {"signature": signature, "status": "expired", **lifetime}
            return {"signature": signature, "status": "unknown"}
        if journal is not None:
            journal.remove(signature)
        if found.err is not None:
            return {"signature": signature, "status": "failed", "slot": found.slot, "error": describe_error(found.err)}
        return {
            "signature": signature,
            "status": found.confirmation_status or "finalized",
            "slot": found.slot,
            "explorer": explorer_url(signature, rpc_url),
        }
