"""JSON-RPC batches: several questions in one HTTP exchange, and questions asked ahead of their use.

A far RPC costs a round trip per HTTP exchange, whatever the exchange carries. A batch (a JSON
array of requests) is answered by an array of answers; each answer is matched to its question by
its `id`, so the order the node lists them in never matters here. A node that refuses batches
(one error object instead of an array) is asked one question at a time instead.

Questions asked ahead (`Rpc.ask_ahead`) are not sent at once: they ride on the next exchange the
`Rpc` makes, whatever it is, and each answer is then used once, by the first call that asks exactly
that question (same method, same parameters). A check that reads the chain twice to compare never
sees a remembered answer twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from yieldcli.chain.rpc.types import Answer, Call, key_of
from yieldcli.errors import YieldError


class Poster(Protocol):
    """solana-py's HTTP provider, as a batch uses it."""

    async def make_request_unparsed(self, body: Any) -> str: ...


class Exchanges(Protocol):
    """What a batch needs of the RPC adapter (`adapter.Rpc`): named here, so this module never
    imports the adapter that imports it."""

    def take_riders(self) -> list[Call]: ...
    def keep_answers(self, answers: dict[str, Answer]) -> None: ...
    def next_id(self) -> int: ...
    def provider(self) -> Poster: ...
    async def call_now(self, method: str, params: list[Any]) -> Any: ...
    def transport_error(self, method: str, cause: BaseException | None) -> YieldError: ...
    def unreadable(self, method: str) -> YieldError: ...
    def answer_error(self, method: str, code: int, message: str, data: Any) -> YieldError: ...


class _Body:
    """What solana-py's provider posts: anything with `to_json`."""

    def __init__(self, text: str):
        self.text = text

    def to_json(self) -> str:
        return self.text


async def send_batch(rpc: Exchanges, calls: Sequence[Call]) -> list[Answer]:
    """Ask `calls` (and any questions asked ahead) in one HTTP exchange; their answers, in order."""
    riders = rpc.take_riders()
    asked = [*riders, *calls]
    if not asked:
        return []
    if len(asked) == 1:
        method, params = asked[0]
        answers = [await _single(rpc, method, params)]
    else:
        answers = await _exchange(rpc, asked)
    rpc.keep_answers({key_of(m, p): a for (m, p), a in zip(riders, answers[: len(riders)], strict=True)})
    return answers[len(riders) :]


async def _single(rpc: Exchanges, method: str, params: list[Any]) -> Answer:
    try:
        return Answer(method, await rpc.call_now(method, params))
    except YieldError as exc:
        return Answer(method, error=exc)


async def _exchange(rpc: Exchanges, calls: Sequence[Call]) -> list[Answer]:
    from solana.exceptions import SolanaRpcException

    first = rpc.next_id()
    body = json.dumps([{"jsonrpc": "2.0", "id": first + n, "method": m, "params": p} for n, (m, p) in enumerate(calls)])
    names = ", ".join(dict.fromkeys(m for m, _ in calls))
    try:
        raw = await rpc.provider().make_request_unparsed(_Body(body))
    except SolanaRpcException as exc:
        raise rpc.transport_error(names, exc.__cause__) from None
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, list):
        # Some nodes and gateways do not take batches: the same questions, one at a time.
        return [await _single(rpc, m, p) for m, p in calls]
    by_id = {item.get("id"): item for item in parsed if isinstance(item, dict)}
    answers = []
    for n, (method, _) in enumerate(calls):
        item = by_id.get(first + n)
        if item is None:
            answers.append(Answer(method, error=rpc.unreadable(method)))
        elif isinstance(item.get("error"), dict):
            err = item["error"]
            code = err.get("code")
            answers.append(
                Answer(
                    method,
                    error=rpc.answer_error(
                        method, code if type(code) is int else -32603, str(err.get("message", "")), err.get("data")
                    ),
                )
            )
        elif "result" in item:
            answers.append(Answer(method, item["result"]))
        else:
            answers.append(Answer(method, error=rpc.unreadable(method)))
    return answers
