"""One exception hierarchy; each class knows its exit code. `app.main` is the only place they become exits."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    UNEXPECTED = 1
    USAGE = 2
    CONFIG = 3
    AUTH = 4
    SERVICE = 5
    NETWORK = 6
    TX_FAILED = 7
    TX_PENDING = 8
    TX_EXPIRED = 9
    REFUSED = 10  # refused before signing: not what was asked, or another guard refusal
    SIMULATION_FAILED = 11  # the simulation failed: nothing was signed or sent
    DECLINED = 12  # declined at the prompt: nothing was signed
    INTERRUPTED = 130


class YieldError(Exception):
    """Base of every error the CLI reports on one line: what failed, and a hint of what to do next."""

    exit_code: ExitCode = ExitCode.UNEXPECTED
    # What went wrong, for programs: stable, dotted from general to specific ("network.proxy").
    kind: str = "error"
    # What the transaction pipeline attaches for whoever reports the error (the command line's hints
    # name them): the transaction's signature, its action, the cluster it was built for, and the
    # result so far (review, effect). Class defaults, so an error that has none carries none.
    signature: str | None = None
    action: str | None = None
    expected_cluster: str | None = None
    report: dict[str, object] | None = None

    def __init__(self, message: str, *, hint: str | None = None, kind: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if kind is not None:
            self.kind = kind

    def __str__(self) -> str:
        return self.message


class UsageError(YieldError):
    """Bad input refused before any request."""

    exit_code = ExitCode.USAGE
    kind = "usage"


class ConfigError(YieldError):
    """No API key source, an unreadable config file or keypair."""

    exit_code = ExitCode.CONFIG
    kind = "config"


class AuthError(YieldError):
    """The service refused the API key (or none was sent)."""

    exit_code = ExitCode.AUTH
    kind = "auth"


class ServiceError(YieldError):
    """The service answered with an error, or with something we cannot read."""

    exit_code = ExitCode.SERVICE
    kind = "service"

    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None, kind: str | None = None):
        super().__init__(message, hint=hint, kind=kind)
        self.status = status


class NetworkError(YieldError):
    """Connection refused, timeout, TLS."""

    exit_code = ExitCode.NETWORK
    kind = "network"


class TransactionFailed(YieldError):
    """The transaction landed and failed on chain."""

    exit_code = ExitCode.TX_FAILED


class TransactionPending(YieldError):
    """Still not at the requested commitment when our timeout ran out."""

    exit_code = ExitCode.TX_PENDING


class TransactionExpired(YieldError):
    """The blockhash expired without the transaction landing: nothing was spent."""

    exit_code = ExitCode.TX_EXPIRED


class Refused(YieldError):
    """Refused before any signature: the transaction does not do what was asked, or a guard said no."""

    exit_code = ExitCode.REFUSED


class SimulationFailed(YieldError):
    """The simulation of the transaction failed: nothing was signed or sent."""

    exit_code = ExitCode.SIMULATION_FAILED


class Declined(YieldError):
    """The user answered no at the prompt: nothing was signed."""

    exit_code = ExitCode.DECLINED
