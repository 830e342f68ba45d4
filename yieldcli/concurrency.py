"""Run a function over items with bounded concurrency, handing results back in input order."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

In = TypeVar("In")
Out = TypeVar("Out")


def ordered_map(
    fn: Callable[[In], Out], items: Iterable[In], concurrency: int, name: str = "worker"
) -> Iterator[tuple[In, Future[Out]]]:
    """Yield (item, finished future) in input order; at most `concurrency` calls run or wait at once,
    so a consumer that writes as it goes keeps memory flat however many items there are."""
    from concurrent.futures import ThreadPoolExecutor  # only commands that fan out pay for it

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix=name)
    pending: deque[tuple[In, Future[Out]]] = deque()
    queue = iter(items)
    try:
        for item in queue:
            pending.append((item, pool.submit(fn, item)))
            if len(pending) >= concurrency:
                break
        while pending:
            item, future = pending.popleft()
            future.exception()  # wait for it
            following = next(queue, None)
            if following is not None:
                pending.append((following, pool.submit(fn, following)))
            yield item, future
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
