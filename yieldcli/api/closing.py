"""`with client:` and `async with client:` for every client of the service, service clients and library clients alike.

Its own module, importing nothing: `from yieldcli import Client` must not load the service client's core.
"""

from __future__ import annotations

from typing import Self


class Closes:
    """`with client:` closes the client at the end (its `close`)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncCloses:
    """`async with client:` closes the client at the end (its `aclose`)."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
