"""Amounts in messages are in token units with the symbol, as the user typed them, never base units:
through `yield` against its embedded sandbox (a fresh demo wallet: 1,250.75 USDC in the wallet,
2,547.318402 USDC in its position)."""

import pytest


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            "deposit",
            "the wallet holds 1,250.75 USDC (token account 7tndHCqX6xh9jSoy3eaXe7VgPkfciMjnWr6zSEF6gv7z); "
            "999,999 USDC requested",
        ),
        ("withdraw", "the position holds 2,547.318402 USDC; withdrawing 999,999 USDC takes 999,999 USDC"),
    ],
)
def test_an_amount_the_wallet_does_not_hold_is_refused_in_token_units(run, command, said):
    refused = run("--sandbox", command, "--asset", "USDC", "--amount", "999999")
    assert refused.code == 5, refused.stderr
    assert said in refused.stderr and "base units" not in refused.stderr
