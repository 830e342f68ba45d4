"""Reading the strategy endpoints' requests as the service does, refusing what it refuses."""

from __future__ import annotations

from typing import Any, NamedTuple, overload

from solders.pubkey import Pubkey

from yieldcli.addresses import is_pubkey


class Refusal(Exception):
    """A request the service refuses: answered with `{"message": ...}`."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


@overload
def pubkey_param(params: dict[str, Any], name: str, *, required: str) -> Pubkey: ...
@overload
def pubkey_param(params: dict[str, Any], name: str, *, required: str | None = None) -> Pubkey | None: ...
def pubkey_param(params: dict[str, Any], name: str, *, required: str | None = None) -> Pubkey | None:
    """The public key in params[name]; `required` is the message when it is missing (else None is fine)."""
    value = params.get(name)
    if value in (None, ""):
        if required:
            raise Refusal(required)
        return None
    if not is_pubkey(value):
        raise Refusal(f"Invalid {name}: {value!r} is not a valid public key")
    return Pubkey.from_string(value)


def amount_or_all(params: dict[str, Any]) -> int | None:
    """The requested amount, or None for everything. With both, `all` wins (as the service does)."""
    amount: int | None = params.get("amount")  # the body was checked as u64 (service._params)
    everything = bool(params.get("all"))
    if everything:
        return None
    if amount is None:
        raise Refusal("Either amount or all must be provided")
    if amount == 0:
        raise Refusal("amount must be greater than 0")
    return amount


class TransferRequest(NamedTuple):
    """What a deposit or a withdrawal asks for."""

    strategy_id: str
    mint: str
    decimals: int
    user: Pubkey
    payer: Pubkey
    given_account: Pubkey | None  # the user's token account, when the request names one
    requested: int | None  # base units; None for everything
    mint_key: Pubkey
