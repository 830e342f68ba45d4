"""`yield tx`: the same review, signing and sending for a transaction that came from anywhere."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from yieldcli.addresses import check_pubkey
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.client.actions import ACTIONS
from yieldcli.errors import Declined, TransactionExpired, TransactionFailed, TransactionPending, UsageError
from yieldcli.files import PIPE_HINT, read_small_file, read_small_stream, reads_stdin
from yieldcli.urls import redact_url

if TYPE_CHECKING:
    from yieldcli.cli.render.output import Output
    from yieldcli.cli.session import Session
    from yieldcli.cli.writing.flow import TxOptions

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


def parse_expect(
    text: str, resolve: Optional[Callable[[str, str], str]] = None
) -> tuple[str, str, Optional[int], Optional[int]]:
    """`deposit:USDC:10` to (action, mint, base units or None for all, the decimals they were converted
    with or None; the guard holds the mint as it reads it to them): each row's own spelling
    (`Action.expect_spelling`), `ACTION:ASSET:AMOUNT` or, for one that takes no amount, `ACTION:ASSET`.
    `resolve(asset, flag)`: how ASSET becomes a mint (default: the built-in symbols or an address)."""
    from yieldcli import tokens
    from yieldcli.amounts import Amount

    resolve = resolve or tokens.resolve_asset

    parts = text.split(":")
    row = ACTIONS.get(parts[0].strip().lower())
    if row is None or len(parts) != row.expect_spelling.count(":") + 1:
        raise UsageError(
            f"invalid --expect {text!r}",
            hint="one of " + ", ".join(a.expect_spelling for a in ACTIONS.values()) + " (AMOUNT may be all)",
        )
    mint = resolve(parts[1].strip(), "--expect asset")
    if not row.amount or parts[2].strip().lower() == "all":
        return row.name, mint, None, None
    known = tokens.by_mint(mint)
    if known is None:
        raise UsageError(f"--expect: the decimals of {mint} are not known", hint="use a known symbol, or :all")
    units = Amount.parse(parts[2].strip(), known.decimals, name="--expect amount").raw
    return row.name, mint, units, known.decimals


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
    from yieldcli.cli.writing.flow import run
    from yieldcli.client.writes import Handed

    if expect is None:
        what = Handed(text, payer=payer, wallet=wallet, nonce=nonce)
    else:
        from yieldcli.cli import token_names

        def resolve(value: str, flag: str) -> str:  # a listed token's symbol too, by its metadata
            return token_names.resolve_asset(session, value, flag, rpc_flag=options.rpc_url)

        action, mint, amount, decimals = parse_expect(expect, resolve)
        # A stated action is in the strategy `yield` is set to, when it is set to one (the guard names it).
        strategy = session.settings.value("strategy") or None
        what = Handed(text, action, mint, amount, payer, wallet, nonce, strategy, decimals)
    # Its cluster: the one its blockhash is known on, as `Client.prepare_transaction`'s.
    run(session, out, options, what)


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
    tx.going(sign=True)
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
    tx.going(send=True)
    tx.check(session)
    _run_on(session, out, tx, read_transaction(session, source), payer, wallet, expect, nonce)


@tx_app.command("forget")
def forget(
    ctx: typer.Context,
    signature: str = typer.Argument(..., help="Transaction signature kept in the journal."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask before forgetting (required off a terminal)."),
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Drop a sent transaction's record without proof of its fate: it no longer holds back your sends.

    Only for a transaction on a chain that is gone (a local validator reset) or whose fate you checked
    elsewhere; `yield tx status SIGNATURE` settles one whose chain is still there.

    Example: yield tx forget 5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    from yieldcli import Client
    from yieldcli.client.chain_methods import check_signature
    from yieldcli.client.orders import journal_path

    check_signature(signature)
    if not yes:
        if not session.env.interactive:
            raise UsageError("forgetting a record needs --yes off a terminal", kind="usage.yes")
        from yieldcli.cli.prompts import ask

        if not ask(f"Forget {signature}? If it can still land, a second send may go out beside it"):
            raise Declined("declined; the record is kept")
    # No RPC is asked: the record is this machine's.
    with Client(rpc_url="http://127.0.0.1:1", journal_path=journal_path(session.env)) as client:
        entry = client.forget_transaction(signature)
    if entry is None:
        raise UsageError(f"no record of {signature} in the journal", kind="usage.journal.unknown")
    result = {"signature": signature, "forgotten": True, "action": entry.action, "cluster": entry.cluster}
    out.report(result, lambda: [f"forgot the record of your {entry.action} {signature}"])


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
    from yieldcli import Client
    from yieldcli.client.chain_methods import check_signature
    from yieldcli.client.orders import journal_path

    check_signature(signature)
    rpc_url = session.rpc_url(url)
    with Client(rpc_url=rpc_url, journal_path=journal_path(session.env), timeout=session.timeout()) as client:
        result = client.transaction_status(signature).to_dict()
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
