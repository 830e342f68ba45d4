"""The transaction commands' side of the pipeline (`yieldcli.chain.transact.engine` does the work).

Here: the shared flags and their refusals, the callbacks (the prompt, warnings, the spinner while
waiting, SIGTERM as a cancellation); the review and the outcome are drawn by `txflow_report`; the
hints that name flags and commands come from `yieldcli.cli.cli_errors`.
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from yieldcli.addresses import check_pubkey
from yieldcli.chain.transact import engine as transact
from yieldcli.chain.transact.engine import Hooks, TransactOptions
from yieldcli.chain.transact.journal import Journal
from yieldcli.cli import cli_errors
from yieldcli.cli.commands.txflow_report import cluster_name, hash_line, public_result, render_outcome, show_review
from yieldcli.cli.render.output import Output
from yieldcli.cli.session import Session
from yieldcli.cli.trust_hint import trust_hint
from yieldcli.client.orders import expected_cluster, journal_path
from yieldcli.errors import Refused, UsageError, YieldError
from yieldcli.numbers import parse_whole
from yieldcli.solana.cluster import COMMITMENTS
from yieldcli.trust import default_trust_path

if TYPE_CHECKING:
    from types import TracebackType

    from rich.status import Status

    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact import engine as transact
    from yieldcli.chain.transact.engine import Hooks, Obtain, UserRequest
    from yieldcli.chain.transact.journal import Journal

# The pipeline's own error kinds: their hints (flags, `yield tx status`) come from cli_errors' table.
PIPELINE_KINDS = (
    "tx.",
    "refused.",
    "usage.missing_signers",
    "usage.not_a_signer",
    "usage.no_keypair",
    "simulation",
    "declined.",
)


@dataclass
class TxOptions(TransactOptions):
    """What the user asked for, from the flags every transaction command shares: the library's
    options, and what only the command line has (a prompt to skip, a keypair file, --ix, a nonce)."""

    yes: bool = False
    keypair: str | None = None
    rpc_url: str | None = None
    ix: bool = False  # build from /ix instructions instead of taking /tx whole
    priority_fee_source: str = "flag"  # flag, env or config: only a flag insists on a transaction already signed
    nonce: str | None = None  # durable-nonce account to build on (with --ix)
    nonce_authority: str | None = None  # keypair file or public key of the nonce's authority
    extra_signers: list[Signer] = field(default_factory=list)  # keypairs signing besides --keypair (a nonce authority)
    # A transaction handed to `yield tx`: its cluster is the one its blockhash belongs to, whatever
    # service URL is configured (it may have been built against the sandbox, or by anyone).
    given_transaction: bool = False

    def check(self, session: Session, *, always_confirm: bool = False) -> None:
        """Refusals that need no request: run before anything is fetched."""
        if self.sign and self.send:
            raise UsageError(
                "--sign and --send exclude each other",
                hint="--send signs and sends; --sign signs and prints the transaction without sending",
            )
        self._resolve_fees(session)
        if self.nonce is not None and not self.ix:
            raise UsageError(
                "--nonce needs --ix",
                hint="a durable nonce is built into the transaction yield compiles from /ix instructions",
            )
        if self.nonce_authority is not None and self.nonce is None:
            raise UsageError("--nonce-authority needs --nonce")
        if self.nonce is not None:
            self.nonce = check_pubkey(self.nonce, "--nonce")
        if self.unsafe_allow_mismatch and not session.env.interactive:
            raise Refused(
                "--unsafe-allow-mismatch is refused off a terminal: a person must read the differences first",
                hint="run it on a terminal, or fix the request so the transaction matches it",
            )
        if self.commitment not in COMMITMENTS:
            raise UsageError(f"invalid --commitment {self.commitment!r}", hint="use processed, confirmed or finalized")
        if self.timeout <= 0:
            raise UsageError(f"invalid --confirm-timeout {self.timeout}: expected a positive number of seconds")
        if always_confirm and (self.sign or self.send) and not self.yes and not session.env.interactive:
            raise UsageError(
                "closing an account needs --yes when not on a terminal",
                hint="review it first without --sign/--send, then add --yes",
            )
        if self.send and not self.yes and not session.env.interactive:
            raise UsageError("--send needs --yes when not on a terminal", hint="add --yes to confirm non-interactively")

    def _resolve_fees(self, session: Session) -> None:
        """--priority-fee and --max-fee, else YIELD_PRIORITY_FEE / YIELD_MAX_FEE, else the profile."""
        from yieldcli.chain.fees.compute_budget import MAX_U64, parse_priority_fee

        if isinstance(self.priority_fee, str):
            self.priority_fee = parse_priority_fee(self.priority_fee)
        elif self.priority_fee is None:
            found = session.settings.get("priority_fee")
            if found.value is not None:
                self.priority_fee = session.settings.checked(
                    "priority_fee", lambda value, name: parse_priority_fee(str(value))
                )
                self.priority_fee_source = found.source
        if self.max_fee is None and session.settings.get("max_fee").value is not None:
            self.max_fee = session.settings.checked(
                "max_fee", lambda value, name: parse_whole(str(value), name=name, minimum=0, maximum=MAX_U64)
            )

    def to_library(self, session: Session, request: UserRequest) -> TransactOptions:
        shared = {f.name: getattr(self, f.name) for f in fields(TransactOptions) if f.name != "strategy_program"}
        return TransactOptions(
            **{
                **shared,
                "priority_fee_insists": self.priority_fee_source == "flag",
                "strategy_program": session.settings.value("strategy_program"),
                "trust_file": str(default_trust_path(session.env)),
                "expected_cluster": None if self.given_transaction else _expected_cluster(session, request),
            }
        )


def run(
    session: Session, out: Output, options: TxOptions, request: UserRequest, obtain: Obtain, *, needs_rpc: bool = False
) -> None:
    """Drive the pipeline to one outcome and render it; raises the outcome's error for non-zero exits."""
    try:
        asyncio.run(_run(session, out, options, request, obtain, needs_rpc))
    except YieldError as exc:
        if exc.kind.startswith(PIPELINE_KINDS):
            exc.hint = cli_errors.hint_for(exc)
        if exc.kind.startswith("refused.mismatch.untrusted"):
            exc.hint = trust_hint(session, exc, options.rpc_url) or exc.hint
        report = getattr(exc, "report", None)
        if report is not None:  # scripts still see the review and the effect; people have seen the review drawn
            out.report(public_result(report), lambda: ())
        raise
    except Exception as exc:
        signature = getattr(exc, "sent_signature", None)
        if signature is not None:  # a bug after the send: the signature reaches the user before the error
            session.env.stderr.write(
                f"transaction {signature} was sent and may still land; check it with `yield tx status {signature}`\n"
            )
        raise


async def _run(
    session: Session, out: Output, options: TxOptions, request: UserRequest, obtain: Obtain, needs_rpc: bool
) -> None:
    from yieldcli.chain.rpc.adapter import Rpc

    rpc_url = session.rpc_url(options.rpc_url)
    use_rpc = needs_rpc or options.simulate or options.sign or options.send or options.priority_fee is not None
    rpc = Rpc(rpc_url, timeout=session.timeout(), commitment=options.commitment) if use_rpc else None
    hooks, spinner = _hooks(session, out, options)
    journal = journal_of(session)
    try:
        outcome = await transact.run(
            rpc,
            rpc_url,
            request,
            obtain,
            options.to_library(session, request),
            hooks,
            lambda: [_load_keypair(session, options), *options.extra_signers],
            journal,
        )
        spinner.stop()
        render_outcome(session, out, request, outcome)
    finally:
        spinner.stop()
        if rpc is not None:
            await rpc.close()


def _prompts(session: Session, options: TxOptions, prepared: transact.Prepared) -> bool:
    """A person answers before signing: on a terminal, without --yes or when the effect does not match
    what was asked (a transaction signed by all already, with no intent stated, asks nothing to match)."""
    effect = prepared.effect
    unmatched = effect is not None and not effect.ok
    if prepared.nothing_to_sign and effect is not None and effect.expected.get("action") == "transaction":
        unmatched = False
    return session.env.interactive and (not options.yes or unmatched)


class _Spinner:
    """`waiting for confirmed (seen: processed) …` on a terminal while the transaction is awaited."""

    def __init__(self, session: Session, commitment: str):
        self.session, self.commitment = session, commitment
        self._status: Status | None = None  # created on the first wait

    def update(self, stage: str, seen: str | None) -> None:
        if stage != "waiting" or not self.session.env.interactive:
            return
        if self._status is None:
            from yieldcli.cli.render.consoles import console

            self._status = console(self.session.env, stderr=True, color=True).status(f"waiting for {self.commitment} …")
            self._status.start()
            return
        self._status.update(f"waiting for {self.commitment} (seen: {seen or 'not yet'}) …")

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


def _hooks(session: Session, out: Output, options: TxOptions) -> tuple[Hooks, _Spinner]:
    from yieldcli.cli.prompts import ask

    def confirm(text: str, prepared: transact.Prepared) -> bool:
        prompting = _prompts(session, options, prepared)
        if prompting and prepared.effect is not None:
            from yieldcli.cli.render.consoles import console
            from yieldcli.cli.render.review_view import draw_summary

            draw_summary(console(session.env, stderr=True, color=out.color), prepared.result["effect"])
        if prepared.result.get("message_hash"):
            # Just above our prompt, or (--yes) just before the Ledger shows its own hash.
            session.env.stderr.write(hash_line(prepared.result["message_hash"]) + "\n")
            session.env.stderr.flush()
        if not prompting:
            return True  # --yes (checked in `TxOptions.check`), or no terminal to ask on and --sign only
        return ask(text)

    def allowed_mismatch(differences: list[str]) -> None:
        out.warn("--unsafe-allow-mismatch: the transaction does NOT do what was asked:")
        for difference in differences:
            session.env.stderr.write(f"  ✗ {difference}\n")

    def confirm_again(text: str) -> bool:
        return ask(text)

    def on_review(prepared: transact.Prepared) -> None:
        prompting = prepared.asks_to_sign and _prompts(session, options, prepared)
        show_review(
            out,
            prepared.result,
            prepared.request,
            cluster=cluster_name(session, prepared.rpc_url),
            prompting=prompting,
            full=session.options.verbose,
        )

    spinner = _Spinner(session, options.commitment)
    hooks = Hooks(
        confirm=confirm,
        on_review=on_review,
        confirm_again=confirm_again if session.env.interactive else None,
        warn=out.warn,
        log=session.log,
        progress=spinner.update,
        allowed_mismatch=allowed_mismatch,
        while_sending=_SignalsCancel,
    )
    return hooks, spinner


def journal_of(session: Session) -> Journal:
    return Journal(journal_path(session.env))


class _SignalsCancel:
    """SIGTERM ends the wait as Ctrl-C does (asyncio.run turns SIGINT into a cancellation already)."""

    def __enter__(self) -> _SignalsCancel:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None  # entered inside the pipeline's coroutine, run by asyncio.run
        try:
            self._loop.add_signal_handler(signal.SIGTERM, task.cancel)
            self._installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            self._installed = False
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._installed:
            self._loop.remove_signal_handler(signal.SIGTERM)


def _load_keypair(session: Session, options: TxOptions) -> Signer:
    return session.load_signer(str(session.keypair_source(options.keypair).value))


def _expected_cluster(session: Session, request: UserRequest) -> str | None:
    """The cluster the service builds for: mainnet-beta, except the sandbox (a cluster of its own)."""
    if request.action == "transaction" or session.options.sandbox:
        return None  # `yield tx`: a transaction from anywhere (its blockhash still has to be known); the sandbox

    return expected_cluster(str(session.settings.value("api_url") or ""))
