"""The command line's service client: the library's, with the command line's hints on its errors.

Library errors say what happened and carry a `kind`; what a user of `yield` should do about one
(which flag, which command) is the command line's business and lives in `yieldcli.cli_errors`.
"""

from __future__ import annotations

from yieldcli.api.core import JSON, Request
from yieldcli.api.sync import ServiceClient
from yieldcli.errors import YieldError


class ApiClient(ServiceClient):
    def _send(self, request: Request) -> JSON:
        try:
            return super()._send(request)
        except YieldError as exc:
            from yieldcli.cli_errors import hint_for

            exc.hint = exc.hint or hint_for(exc)
            raise
