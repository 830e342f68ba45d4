"""A confirm callback's answer: only `True` signs.

The question before signing is asked through a callback (`Hooks.confirm`, `confirm_again`) that
Python code supplies. Read as a truth value, an `async def` callback's coroutine (never run), a
string "no" or `NotImplemented` were all yes: the transaction was signed and sent without anyone
having said so. An awaitable answer is awaited (an async callback, with `Client` or `AsyncClient`
alike); then True signs, False declines, and anything else is refused before signing.
"""

from __future__ import annotations

from collections.abc import Awaitable

from yieldcli.errors import UsageError


async def said_yes(answer: object) -> bool:
    """True when the callback answered True, False when it answered False; any other answer raises."""
    if isinstance(answer, Awaitable):
        answer = await answer
    if isinstance(answer, bool):
        return answer
    shown = repr(answer)
    raise UsageError(
        f"the confirm callback answered {shown[:60]}, not True or False: nothing was signed",
        kind="usage.confirm",
        hint="return True to sign, False to decline",
    )
