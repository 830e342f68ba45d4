"""Canned raw answers for matching requests, to test clients against a broken service."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from yieldcli.sandbox.responses import JSON


@dataclass
class Fault:
    """A canned raw answer for matching requests, to test clients against a broken service."""

    method: str
    path_regex: str
    status: int
    body: bytes
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    times: int | None = 1  # None: forever
    delay_s: float = 0.0
    disconnect: bool = False
    hits: int = 0

    def __post_init__(self) -> None:
        self._pattern = re.compile(self.path_regex)

    def matches(self, method: str, path: str) -> bool:
        return (self.method == "*" or self.method.upper() == method.upper()) and bool(self._pattern.search(path))


class Faults:
    """Faults are tried in the order added; each answers its next `times` matching requests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(
        self,
        method: str,
        path_regex: str,
        status: int,
        body: bytes | str = b"",
        content_type: str = JSON,
        headers: Mapping[str, str] | None = None,
        times: int | None = 1,
        delay_s: float = 0.0,
        disconnect: bool = False,
    ) -> Fault:
        """`path_regex` is searched in the path (anchor it with ^ and $ to match exactly)."""
        if isinstance(body, str):
            body = body.encode()
        if times is not None and times < 1:
            raise ValueError("times must be at least 1, or None for every request")
        fault = Fault(method, path_regex, status, body, content_type, dict(headers or {}), times, delay_s, disconnect)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path):
                    fault.hits += 1
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            self._faults.remove(fault)
                    return fault
        return None

    def __len__(self) -> int:
        with self._lock:
            return len(self._faults)

    def pending(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)
