"""The transaction commands' side of the pipeline (`yieldcli.chain.transact.engine` does the work).

Here: the shared flags and their refusals, the callbacks (the prompt, warnings, the spinner while
waiting, SIGTERM as a cancellation); the review and the outcome are drawn by `report`; the
hints that name flags and commands come from `yieldcli.cli.cli_errors`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Optional, Union

from yieldcli.addresses import check_pubkey
from yieldcli.chain.keys.keypairs import nonce_authority
from yieldcli.cli import cli_errors
from yieldcli.cli.prompts import ask
from yieldcli.cli.render.output import Output, silence_stdout
from yieldcli.cli.session import Session
from yieldcli.cli.trust_hint import trust_hint
from yieldcli.cli.writing.report import cluster_name, hash_line, public_result, render_outcome, show_review
from yieldcli.cli.writing.signals import SendSignals
from yieldcli.client.orders import expected_cluster, journal_path
from yieldcli.client.prepared import ChainSettings
from yieldcli.client.profile import write_defaults
from yieldcli.client.writes import Hooks, Prepared, WriteOptions
from yieldcli.errors import Refused, UsageError, YieldError
from yieldcli.files import reads_stdin
from yieldcli.solana.cluster import COMMITMENTS
from yieldcli.trust import default_trust_path

if TYPE_CHECKING:
    from rich.status import Status

    from yieldcli import Outcome
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.client.writes import Handed, Write

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
class TxOptions:
    """The flags every transaction command shares: the library's `WriteOptions` (`write`), and what
    only the command line has (a prompt to skip, a keypair file, an RPC flag, the nonce flags as typed)."""

    write: WriteOptions = field(default_factory=WriteOptions)
    yes: bool = False
    keypair: Optional[str] = None
    rpc_url: Optional[str] = None
    nonce: Optional[str] = None  # durable-nonce account to build on (checked into `write` by `check`)
    nonce_authority: Optional[str] = None  # keypair file or public key of the nonce's authority

    def going(self, *, sign: bool = False, send: bool = False) -> None:
        """How far this command goes, whatever its flags: `tx sign` signs, `tx send` sends."""
        self.write = replace(self.write, sign=self.write.sign or sign, send=self.write.send or send)

    def check(self, session: Session, *, always_confirm: bool = False) -> None:
        """Refusals that need no request: run before anything is fetched."""
        write = self.write
        if write.sign and write.send:
            raise UsageError(
                "--sign and --send exclude each other",
                hint="--send signs and sends; --sign signs and prints the transaction without sending",
            )
        self._resolve_fees(session)
        if self.nonce_authority is not None and self.nonce is None:
            raise UsageError("--nonce-authority needs --nonce")
        if self.nonce is not None:
            # A durable nonce is built into the transaction yield compiles from /ix instructions
            # (`WriteOptions` asks for them), as `nonce=` does from Python.
            self.write = replace(self.write, nonce=check_pubkey(self.nonce, "--nonce"))
        if write.unsafe_allow_mismatch and not session.env.interactive:
            raise Refused(
                "--unsafe-allow-mismatch is refused off a terminal: a person must read the differences first",
                hint="run it on a terminal, or fix the request so the transaction matches it",
            )
        if write.commitment not in COMMITMENTS:
            raise UsageError(f"invalid --commitment {write.commitment!r}", hint="use processed, confirmed or finalized")
        if write.timeout <= 0:
            raise UsageError(f"invalid --confirm-timeout {write.timeout}: expected a positive number of seconds")
        if always_confirm and (write.sign or write.send) and not self.yes and not session.env.interactive:
            raise UsageError(
                "closing an account needs --yes when not on a terminal",
                hint="review it first without --sign/--send, then add --yes",
            )
        if write.send and not self.yes and not session.env.interactive:
            raise UsageError("--send needs --yes when not on a terminal", hint="add --yes to confirm non-interactively")

    def _resolve_fees(self, session: Session) -> None:
        """--priority-fee checked now; YIELD_PRIORITY_FEE / YIELD_MAX_FEE or the profile's are the
        library's defaults (`write_defaults`), refused now when they are bad."""
        from yieldcli.chain.fees.compute_budget import parse_priority_fee

        if isinstance(self.write.priority_fee, str):
            self.write = replace(self.write, priority_fee=parse_priority_fee(self.write.priority_fee))
        write_defaults(session.settings)

    def resolved(self, session: Session) -> WriteOptions:
        """The write's options with the nonce's authority: a keypair file (`-`: stdin, read once per
        run) or a Ledger URL signs now, a public key is a signer named to sign later."""
        if self.nonce_authority is None:
            return self.write
        stdin = session.keypair_stdin() if reads_stdin(self.nonce_authority) else None
        found = nonce_authority(self.nonce_authority, stdin=stdin)
        if found.warning:
            session.output().warn(found.warning)
        authority: Union[Signer, str] = found.keypair if found.keypair is not None else found.pubkey
        return replace(self.write, nonce_authority=authority)


def chain_settings(session: Session, rpc_flag: str | None = None, keypair_flag: str | None = None) -> ChainSettings:
    """The library's settings for a write from this run's (flags, environment, profile): the
    command line drives the same write path as `Client` and `yield mcp`, with these."""
    defaults = write_defaults(session.settings)
    # The sandbox is a cluster of its own (its transactions' blockhashes must still be known).
    cluster = None if session.options.sandbox else expected_cluster(str(session.settings.value("api_url") or ""))
    return ChainSettings(
        session.rpc_url(rpc_flag),
        None,
        journal_path(session.env),
        session.timeout(),
        cluster,
        defaults.strategy_program,
        default_trust_path(session.env),
        priority_fee=defaults.priority_fee,
        priority_fee_source=defaults.priority_fee_source,
        max_fee=defaults.max_fee,
        # Read when signing first needs it: a review names no keypair.
        load_keypair=lambda: session.load_signer(str(session.keypair_source(keypair_flag).value)),
    )


def run(session: Session, out: Output, options: TxOptions, what: Union[Write, Handed]) -> None:
    """Drive the library's write path (`Client.transact`) to one outcome and render it; raises the
    outcome's error for non-zero exits."""
    try:
        _run(session, out, options, what)
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


def _run(session: Session, out: Output, options: TxOptions, what: Union[Write, Handed]) -> None:
    client = session.client(chain=chain_settings(session, options.rpc_url, options.keypair))
    signals = SendSignals()
    settle: list[Callable[[], None]] = []  # the journal's record of the send, dropped once shown
    seen: list[Prepared] = []  # what was reviewed: its request names the position to refresh
    hooks, spinner = _hooks(session, out, options, signals, settle.append, seen)
    try:
        outcome = client.transact(what, options.resolved(session), hooks)
        spinner.stop()
        with signals.outcome_shown():
            shown = False
            try:
                reviewed = seen[-1].request if seen else None  # none when it had landed before any review
                render_outcome(session, out, reviewed, outcome, refresh=lambda: not signals.received)
                session.env.stdout.flush()  # a reader that went away is met here, not at exit
                shown = True
            except BrokenPipeError:
                shown = _outcome_unread(session, outcome)  # to stderr instead, if that is still read
                error = outcome.error()
                if error is not None:
                    raise error from None  # a send that did not end well keeps its exit code
                raise
            except YieldError:
                shown = True  # the outcome's own error, raised once its result was written
                raise
            finally:
                if shown:
                    for drop in settle:
                        drop()
    finally:
        spinner.stop()
        signals.release()


def _outcome_unread(session: Session, outcome: Outcome) -> bool:
    """stdout's reader went away before a send's outcome was written (`... --send --yes | true`): the
    outcome and signature go to stderr. True when they got there (or nothing was sent): only then is
    the journal's record of the send done with."""
    signature = outcome.result.get("signature")
    silence_stdout()
    if signature is None:
        return True  # nothing was sent: nothing to lose
    try:
        session.env.stderr.write(
            f"stdout was closed before the outcome was written: {outcome.result.get('status')} {signature}\n"
        )
        session.env.stderr.flush()
    except (OSError, ValueError):
        return False  # no one reads stderr either: the record stays for the next send to report
    # A stderr that failed is written to nowhere from then on (`yieldcli.cli.closed_stderr`): not told.
    return not getattr(session.env.stderr, "lost", False)


def _prompts(session: Session, options: TxOptions, prepared: Prepared) -> bool:
    """A person answers before signing: on a terminal, without --yes or when the effect does not match
    what was asked (a transaction signed by all already, with no intent stated, asks nothing to match)."""
    effect = prepared.effect
    unmatched = effect is not None and not effect.ok
    if prepared.nothing_to_sign and effect is not None and not prepared.request.states_an_action:
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


def _hooks(
    session: Session,
    out: Output,
    options: TxOptions,
    signals: SendSignals,
    when_shown: Callable[[Callable[[], None]], None],
    seen: list[Prepared],
) -> tuple[Hooks, _Spinner]:
    def confirm(text: str, prepared: Prepared) -> bool:
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

    def on_review(prepared: Prepared) -> None:
        seen.append(prepared)
        prompting = prepared.asks_to_sign and _prompts(session, options, prepared)
        show_review(
            out,
            prepared.result,
            prepared.request,
            cluster=cluster_name(session, prepared.rpc_url),
            prompting=prompting,
            full=session.options.verbose,
            paged=prompting or not options.yes,  # --yes waits on no one: a pager would wait for a key
        )

    spinner = _Spinner(session, options.write.commitment)
    hooks = Hooks(
        confirm=confirm,
        on_review=on_review,
        confirm_again=confirm_again if session.env.interactive else None,
        warn=out.warn,
        log=session.log,
        progress=spinner.update,
        allowed_mismatch=allowed_mismatch,
        while_sending=signals.while_sending,
        when_shown=when_shown,
    )
    return hooks, spinner
