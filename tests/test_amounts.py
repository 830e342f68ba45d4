"""Pure logic: amounts, addresses, argument hoisting, settings precedence."""

from decimal import Decimal

import pytest
import typer

from yieldcli import config as cfg
from yieldcli.addresses import b58decode, b58encode, is_pubkey
from yieldcli.amounts import U64_MAX, Amount, format_units
from yieldcli.cli.app import app
from yieldcli.cli.argv import hoist_global_options
from yieldcli.environment import Environment
from yieldcli.errors import UsageError


@pytest.mark.parametrize(
    "text, decimals, raw",
    [
        ("1.5", 6, 1_500_000),
        ("0.000001", 6, 1),
        (".5", 9, 500_000_000),
        ("10", 0, 10),
        ("18446744073709.551615", 6, U64_MAX),
        ("7.", 2, 700),
    ],
)
def test_amounts_parse_exactly(text, decimals, raw):
    amount = Amount.parse(text, decimals)
    assert amount.raw == raw and isinstance(amount.raw, int)
    assert amount.to_decimal() == Decimal(text.rstrip(".") or "0")


@pytest.mark.parametrize(
    "text, decimals, why",
    [
        ("-1", 6, "plain positive"),
        ("0", 6, "greater than zero"),
        ("1e3", 6, "plain positive"),
        ("1.0000001", 6, "fraction digits"),
        ("18446744073709.551616", 6, "u64"),
        ("NaN", 6, "plain positive"),
        ("1_000", 6, "plain positive"),
        ("", 6, "plain positive"),
        (" ", 6, "plain positive"),
    ],
)
def test_amounts_refuse_with_the_value_named(text, decimals, why):
    with pytest.raises(UsageError) as err:
        Amount.parse(text, decimals)
    assert why in err.value.message and repr(text) in err.value.message


def test_format_units_is_exact_and_grouped():
    assert format_units(2**100, 6) == "1,267,650,600,228,229,401,496,703.205376"
    assert format_units(1_500_000, 6) == "1.50"
    assert format_units(-5, 9) == "-0.000000005"


def test_base58_round_trip_and_pubkey_check():
    data = bytes(range(32))
    assert b58decode(b58encode(data)) == data
    assert b58encode(b"\0\0\1") == "112"
    assert is_pubkey("11111111111111111111111111111111")
    assert not is_pubkey("0OIl" * 8)


ROOT = typer.main.get_command(app)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["balances", "W", "--verbose"], ["--verbose", "balances", "W"]),
        (["balances", "W", "--api-url", "U", "-o", "json"], ["--api-url", "U", "balances", "W", "-o", "json"]),
        (["--debug", "strategy", "info", "--profile=p"], ["--debug", "--profile=p", "strategy", "info"]),
        (["deposit", "--confirm-timeout", "90"], ["deposit", "--confirm-timeout", "90"]),  # the command's own option
        (["deposit", "--timeout", "9"], ["--timeout", "9", "deposit"]),  # --timeout is global everywhere
        (["balances", "--", "--verbose"], ["balances", "--", "--verbose"]),
        (["--json"], ["--json"]),
    ],
)
def test_global_options_are_hoisted_in_front_of_the_command(args, expected):
    assert hoist_global_options(ROOT, args) == expected


def test_settings_precedence_and_sources(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('strategy = "top"\n[profiles.p]\nstrategy = "prof"\n')
    config = cfg.ConfigFile.load(path)

    def settings(env_vars, profile="p", flags=None, overrides=None):
        env = Environment(vars={"HOME": str(tmp_path), **env_vars})
        return cfg.Settings(env, config, cfg.Setting("profile", profile, "flag"), flags or {}, overrides or {})

    assert settings({}, profile="default").get("strategy").value == "top"
    assert settings({}).get("strategy").source == "config"
    assert settings({}, overrides={"strategy": "sb"}).get("strategy").value == "sb"
    assert settings({"YIELD_STRATEGY": "env"}, overrides={"strategy": "sb"}).get("strategy").value == "env"
    assert settings({"YIELD_STRATEGY": "env"}, flags={"strategy": "flag"}).get("strategy").source == "flag"
    assert settings({}).get("api_url").source == "default"
