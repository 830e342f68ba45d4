"""The command line's service client: the library's, with the command line's hints on its errors.

Library errors say what happened and carry a `kind`; what a user of `yield` should do about one
(which flag, which command) is the command line's business and lives in `yieldcli.cli_errors`.
"""

from __future__ import annotations

from typing import Any

from yieldcli.api.core import JSON, Request
from yieldcli.api.sync import ServiceClient
from yieldcli.errors import YieldError


class ApiClient(ServiceClient):
    def __init__(self, base_url: str, api_key: str | None, **options: Any):
        try:
            super().__init__(base_url, api_key, **options)
        except YieldError as exc:
            raise _with_hint(exc) from None

    def _send(self, request: Request) -> JSON:
        try:
            return super()._send(request)
        except YieldError as exc:
            raise _with_hint(exc) from None


def _with_hint(error: YieldError) -> YieldError:
    from yieldcli.cli_errors import hint_for

    error.hint = hint_for(error)
    return error
