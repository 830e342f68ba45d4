"""The service's read endpoints, one row each: method, path template, the arguments that fill it, the query
parameters it takes, and whether a failed attempt is tried again.

`ServiceClient` and `AsyncServiceClient` inherit this table (through `yieldcli.api.core.ServiceBase`)
and serve every row the same way: `api.positions(wallet, strategy_id, asset=..., page=...)` is the
row `positions`, bound to the client (its `serve`). A new read endpoint is a new row here (neither
service client changes), its model (`yieldcli.api.models`), its read (`yieldcli.client.clients`:
what it asks, and its line in `Reads`, for both library clients) and its resource
(`yieldcli.cli.resources`: columns, table, command). Writes (POST) are not rows: their paths and
bodies are the order builder's (`yieldcli.client.orders`), and they are never retried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, overload
from urllib.parse import quote

R = TypeVar("R", covariant=True)


class Serves(Protocol[R]):
    """A service client: sends an endpoint's request and gives back what it answered (or an awaitable of it)."""

    def serve(self, endpoint: Endpoint, /, *arguments: Any, **query: Any) -> R: ...


class Endpoint:
    """One read endpoint. `arguments` are taken in order (or by name) and are required: each fills the
    path's `{placeholder}` of its name, else it is a query parameter; `query` names the optional
    query parameters, taken by keyword (None: not sent). Anything else is a TypeError, as a mistyped
    keyword of a method would be."""

    __slots__ = ("arguments", "method", "name", "path", "query", "retried")

    def __init__(
        self,
        path: str,
        *,
        arguments: tuple[str, ...] = (),
        query: tuple[str, ...] = (),
        method: str = "GET",
        retried: bool = True,
    ):
        self.name = path  # until the table names it (__set_name__)
        self.method = method
        self.path = path
        self.arguments = arguments
        self.query = query
        self.retried = retried

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, client: None, owner: type) -> Endpoint: ...
    @overload
    def __get__(self, client: Serves[R], owner: type) -> Callable[..., R]: ...
    def __get__(self, client: Serves[R] | None, owner: type) -> Endpoint | Callable[..., R]:
        if client is None:
            return self
        serve = client.serve

        def call(*arguments: Any, **query: Any) -> R:
            return serve(self, *arguments, **query)

        call.__name__ = call.__qualname__ = self.name
        return call

    def target(self, arguments: tuple[Any, ...], keywords: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The path with its placeholders filled (each value one escaped segment) and the query, in order."""
        if len(arguments) > len(self.arguments):
            raise TypeError(f"{self.name}() takes {len(self.arguments)} arguments but {len(arguments)} were given")
        given = dict(zip(self.arguments, arguments, strict=False))  # fewer may come by name
        for key, value in keywords.items():
            if key in given:
                raise TypeError(f"{self.name}() got multiple values for argument {key!r}")
            if key not in self.arguments and key not in self.query:
                raise TypeError(f"{self.name}() got an unexpected keyword argument {key!r}")
            given[key] = value
        missing = [name for name in self.arguments if name not in given]
        if missing:
            raise TypeError(f"{self.name}() missing required argument {missing[0]!r}")
        in_path = [name for name in self.arguments if "{" + name + "}" in self.path]
        path = self.path.format_map({name: quote(str(given.pop(name)), safe="") for name in in_path})
        return path, given


PAGING = ("page", "limit")
SORTING = ("asset", "sort_by", "sort_order")


class Endpoints:
    """The table. A client inherits it; each row is then a method of the client."""

    health = Endpoint("/health")
    strategy_info = Endpoint("/strategy-info/{strategy_id}", arguments=("strategy_id",))
    positions = Endpoint("/breeze-balances/{wallet}", arguments=("wallet", "strategy_id"), query=SORTING + PAGING)
    balances = Endpoint("/user-balances/{wallet}", arguments=("wallet",), query=SORTING + PAGING)
    earnings = Endpoint("/user-yield/{wallet}", arguments=("wallet",), query=("fund_id", *PAGING))
