"""What the transaction commands draw: the review between preparing and signing, and the outcome
(the result for scripts, a note for people; a confirmed deposit's refreshed position). `flow`
drives the pipeline and calls these."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from yieldcli import Confirmed, Failed, Sent, Signed, Unsigned
from yieldcli.cli import cli_errors
from yieldcli.cli.render.text import dumps
from yieldcli.client.actions import ACTIONS
from yieldcli.errors import YieldError
from yieldcli.solana.cluster import cluster_of

if TYPE_CHECKING:
    from rich.console import Console

    from yieldcli import Outcome
    from yieldcli.cli.render.output import Output
    from yieldcli.cli.session import Session
    from yieldcli.client.writes import UserRequest


def render_outcome(
    session: Session,
    out: Output,
    request: UserRequest | None,
    outcome: Outcome,
    refresh: Callable[[], bool] = lambda: True,
) -> None:
    """The outcome for people or scripts; a non-zero end raises its error after the result is written.
    `request`: what was reviewed (None: it had landed before any review). `refresh`: whether to read
    the position again after a confirmed action that moves an amount (not once the run has been told
    to stop: the signature comes first)."""
    result = outcome.result
    if isinstance(outcome, Unsigned):
        # The encoded transaction is for scripts (-o json) or for -v: on a screen it is a wall of base64.
        notes = {
            "signed": "reviewed only: it carries every signature it needs (send it with `yield tx send`)",
            "partially-signed": "reviewed only: it still needs signatures from "
            + ", ".join(s["address"] for s in result["review"]["signers"] if not s["signed"]),
        }
        note = notes.get(str(result.get("status")), "not signed: add --sign to sign or --send to sign and send")
        _finish(out, result, note, encoded=session.options.verbose)
    elif isinstance(outcome, Signed):
        _finish(
            out,
            result,
            "fully signed" if outcome.complete else "still needs signatures from " + ", ".join(outcome.missing_signers),
        )
    elif isinstance(outcome, Sent):
        _finish(
            out, result, f"sent {outcome.signature} (not waiting: check with `yield tx status {outcome.signature}`)"
        )
    elif isinstance(outcome, Confirmed):
        row = ACTIONS.get(request.action) if request is not None else None
        if (
            request is not None
            and row is not None
            and row.amount
            and request.wallet
            and request.strategy_id
            and refresh()
        ):
            result["position"] = _refreshed_position(session, request)
        earlier = " (it had landed already: nothing new was sent)" if outcome.already_processed else ""
        confirmed = out.paint("confirmed", "green", stderr=False)
        # No link for a local cluster (`explorer` is None): a public explorer cannot reach it.
        link = f"\n{result['explorer']}" if result.get("explorer") else ""
        _finish(out, result, f"{confirmed} {outcome.signature} in slot {outcome.slot}{earlier}{link}")
        if result.get("position") is not None:
            out.for_people(lambda: _draw_position(out, result["position"]))
    else:
        _finish(out, result, None)
        if isinstance(outcome, Failed):
            logs = outcome.logs

            def show_logs() -> None:
                session.env.stderr.write("".join(f"    {line}\n" for line in logs))

            out.for_people(show_logs)
    error = outcome.error()  # a review that found a problem, or a send that did not end well
    if error is not None:
        error.hint = cli_errors.hint_for(error)
        raise error


def _refreshed_position(session: Session, request: UserRequest) -> dict[str, Any] | None:
    assert request.wallet and request.strategy_id  # a confirmed deposit or withdrawal names both (see _render)
    try:
        body = session.client().answer("positions", request.wallet, request.strategy_id, asset=request.mint)
    except YieldError as exc:
        session.output().warn(
            f"the transaction is confirmed, but the refreshed position could not be read: {exc.message}"
        )
        return None
    items = body.get("data") if isinstance(body, dict) else None
    return items[0] if items else None


def _draw_position(out: Output, position: dict[str, Any]) -> None:
    from yieldcli.api import models
    from yieldcli.api.pagination import PageResult

    out.page(PageResult("positions", [(position, models.position(position, 0))], dict))


def hash_line(message_hash: str) -> str:
    """The Ledger shows `Message Hash` when it blind-signs: the same text, for the person to compare."""
    return f"message hash {message_hash}: compare it with your Ledger"


def cluster_name(session: Session, rpc_url: str) -> str:
    """The cluster as people name it: `sandbox`, `mainnet-beta`, `devnet`, `testnet`, else the RPC's host
    (and port), never the whole URL (it may carry a key, and a loopback port means nothing to read)."""
    if session.options.sandbox and rpc_url == session.sandbox().rpc_url:  # its RPC, not one named with -u
        return "sandbox"
    named = cluster_of(rpc_url)
    if named != "custom":
        return named
    parts = urlsplit(rpc_url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


def show_review(
    out: Output,
    result: dict[str, Any],
    request: UserRequest,
    *,
    cluster: str,
    prompting: bool = False,
    full: bool = False,
    paged: bool = True,
) -> None:
    """The review for people: on stdout in table mode; on stderr in other modes when a prompt follows.
    In brief to fit a screen; `full` (-v) draws every detail and account; `paged` False (--yes): never
    through the pager."""

    def paint(con: Console) -> None:
        from yieldcli.cli.render.review_view import draw_effect, draw_review, draw_simulation

        signed_by_all = bool(result.get("nothing_to_sign"))
        draw_effect(con, result.get("effect"), result.get("fee"), signed_by_all=signed_by_all)
        draw_review(
            con,
            result["review"],
            cluster=cluster,
            title=f"Review: {request.action}",
            verdicts=(result.get("effect") or {}).get("instructions"),
            full=full,
            # Signed by all already and no intent stated: nothing of yours is signed, nothing held against it.
            judged=request.states_an_action or not signed_by_all,
        )
        draw_simulation(con, result["simulation"], full=full)
        if result.get("message_hash"):
            con.print(hash_line(result["message_hash"]), markup=False, highlight=False, soft_wrap=True)

    out.before_prompt(paint, prompting=prompting, paged=paged)


def _finish(out: Output, result: dict[str, Any], note: str | None, *, encoded: bool = True) -> None:
    """The command's data: the whole result as JSON, or (`encoded`) the transaction and a note for people."""

    def lines() -> list[str]:
        shown = []
        if encoded and result.get("status") in ("unsigned", "signed", "partially-signed") and result.get("transaction"):
            shown.append(f"transaction (base64): {result['transaction']}")
        if note:
            shown.append(note)
        return shown

    out.report(public_result(result), lines)


def public_result(result: dict[str, Any]) -> dict[str, Any]:
    simulation = result.get("simulation")
    if simulation and "err" in simulation:
        simulation = {k: v for k, v in simulation.items() if k != "err"} | {"err": _jsonable(simulation["err"])}
    return {**result, "simulation": simulation}


def _jsonable(value: Any) -> Any:
    try:
        dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)
