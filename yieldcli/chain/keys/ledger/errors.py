"""What can go wrong with a Ledger, as typed errors with dotted kinds (`ledger.declined`, ...).

A device that cannot be used (absent, locked, the Solana app closed, blind signing off, no answer in
time) is a configuration error (exit 3): nothing was signed and the user fixes it at the device. A
refusal on the device is a `Declined` (exit 12), like a no at our prompt.
"""

from __future__ import annotations

from yieldcli.errors import ConfigError, Declined


class LedgerError(ConfigError):
    kind = "ledger"


class LedgerDeclined(Declined):
    kind = "ledger.declined"


def not_found(detail: str) -> LedgerError:
    return LedgerError(f"no Ledger found: {detail}", kind="ledger.not_found")


def locked() -> LedgerError:
    return LedgerError("the Ledger is locked", kind="ledger.locked")


def app_not_open() -> LedgerError:
    return LedgerError("the Solana app is not open on the Ledger", kind="ledger.app_not_open")


def blind_signing_disabled() -> LedgerError:
    return LedgerError(
        "blind signing is off in the Ledger's Solana app: it cannot sign this transaction",
        kind="ledger.blind_signing_disabled",
    )


def timed_out(seconds: float) -> LedgerError:
    return LedgerError(
        f"the Ledger did not answer within {seconds:g} seconds; nothing was signed", kind="ledger.timeout"
    )


def declined() -> LedgerDeclined:
    return LedgerDeclined("declined on the Ledger; nothing was signed")
