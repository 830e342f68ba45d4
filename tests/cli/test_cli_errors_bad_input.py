"""Bad input as users (and their scripts) give it: one line on stderr, the documented exit code,
no traceback, no hang, and nothing sent. Each case here used to end otherwise (noted per test)."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.cli.test_cli_errors_service_answers import one_line_error
from tests.conftest import TEST_API_KEY, YIELD, Result
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

SIGNATURE = "1GMkH3brNXiNNs1tiFZHu4yZSRrzJwxi5wB9bHFtMinfCXNnR1adh8Vo8NTheK4evneedH4qmvjeqcBBNAefgS"
SECRET = "s3cr3t-0f-the-user"
NON_ASCII_DIGITS = ["١٢", "１０", "𝟏𝟎", "٣.٥", "1٠"]  # Arabic-Indic, fullwidth, mathematical bold, mixed


def refuse_every_request(sandbox) -> None:
    """Any request to the service fails loudly: a refusal must come before one."""
    sandbox.add_fault("*", ".*", 500, b'{"message":"should not be called"}', times=None)


def write_config(isolated, text: str):
    folder = isolated / ".config" / "yield"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.toml"
    path.write_text(text)
    return path


def run_with_stdin(args: list[str], stdin_path: str, env: dict[str, str]) -> Result:
    """`yield` with standard input redirected from a file (`< /dev/zero`)."""
    with open(stdin_path, "rb") as stdin:
        proc = subprocess.run(
            [YIELD, *args], stdin=stdin, capture_output=True, text=True, env={**os.environ, **env}, timeout=60
        )
    assert "Traceback" not in proc.stderr, proc.stderr
    return Result(proc.returncode, proc.stdout, proc.stderr)


# --- 1. numbers: ASCII digits only (Python's int() and float() read `١٢` as 12) --------------------


@pytest.mark.parametrize("amount", NON_ASCII_DIGITS)
@pytest.mark.parametrize("raw", [False, True], ids=["units", "raw"])
def test_non_ascii_digits_in_an_amount_are_refused_before_any_request(chain, sandbox, amount, raw):
    # Before: `--amount ١٢` deposited 12 USDC, `--amount １０` 10.
    refuse_every_request(sandbox)
    result = chain("deposit", "--asset", "USDC", "--amount", amount, *(["--raw"] if raw else []), "--send", "--yes")
    assert result.code == 2
    assert "--amount" in one_line_error(result) and "0-9" in result.stderr


@pytest.mark.parametrize("option", ["--page", "--limit", "--concurrency"])
@pytest.mark.parametrize("value", ["１０", "٣", "1_0", "+5", " 7x"])
def test_page_limit_and_concurrency_take_ascii_digits_only(api, sandbox, option, value):
    # Before: `--page ١` asked for page 1, `--limit １０` for 10 items, `1_0` meant 10.
    refuse_every_request(sandbox)
    result = api("balances", DEMO_WALLET, *(["--all"] if option == "--concurrency" else []), option, value)
    assert result.code == 2 and option in one_line_error(result)


def test_page_and_limit_still_take_plain_numbers(api):
    result = api("balances", DEMO_WALLET, "--page", "2", "--limit", "5", "-o", "json")
    assert result.code == 0 and result.json()["meta"]["page"] == 2


@pytest.mark.parametrize("value", ["３０", "nan", "inf", "1e999", "0", "-1", "99999999999999999999999999"])
def test_the_request_timeout_takes_ascii_digits_only(api, sandbox, value):
    # Before: `--timeout ３０` was 30 s, `nan` and `inf` reached the socket, and a 26-digit value
    # ended in "unexpected error: OverflowError" (exit 1).
    refuse_every_request(sandbox)
    result = api(f"--timeout={value}", "health")
    assert result.code == 2 and "timeout" in one_line_error(result)


@pytest.mark.parametrize("value", ["３", "nan", "inf", "100000"])
def test_the_confirmation_timeout_takes_ascii_digits_only(chain, sandbox, value):
    refuse_every_request(sandbox)
    result = chain("deposit", "--asset", "USDC", "--amount", "1", "--confirm-timeout", value)
    assert result.code == 2 and "--confirm-timeout" in one_line_error(result)


def test_a_timeout_from_the_environment_or_the_config_file_is_a_configuration_error(api, isolated):
    result = api("health", env={"YIELD_TIMEOUT": "١٢"})
    assert result.code == 3 and "YIELD_TIMEOUT" in one_line_error(result)
    path = write_config(isolated, 'timeout = "３０"\n')
    result = api("health")
    assert result.code == 3 and str(path) in one_line_error(result)
    assert api("config", "set", "timeout", "١٢").code == 2


# --- 2. keypair and transaction files: bounded, non-blocking reads ---------------------------------


@pytest.fixture(params=["dev-zero", "fifo", "huge", "directory", "binary"])
def hostile_file(request, tmp_path):
    """A path that is not a small text file; reading it whole would hang or exhaust memory."""
    kind = request.param
    if kind == "dev-zero":
        return kind, "/dev/zero"
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)  # nobody ever writes to it: a blocking open would wait forever
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(8 << 30)  # 8 GiB, sparse: costs no disk
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(bytes(range(256)) * 4)
    return kind, str(path)


EXPECTED = {
    "dev-zero": "character device",
    "fifo": "named pipe",
    "huge": "too large",
    "directory": "directory",
    "binary": "not",
}


def test_a_hostile_keypair_file_is_exit_3_at_once(chain, sandbox, hostile_file):
    # Before: `-k /dev/zero` ate memory until killed, and a FIFO hung the command.
    kind, path = hostile_file
    result = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-k", path)
    assert result.code == 3
    assert EXPECTED[kind] in one_line_error(result)
    if kind == "fifo":  # `-k -` reads standard input: the hint says so
        assert "pass - and redirect standard input" in one_line_error(result)
    # The same file as the configured keypair, for a read that only needs its public key.
    result = chain("balances", env={"YIELD_KEYPAIR": path})
    assert result.code == 3 and EXPECTED[kind] in one_line_error(result)


def test_a_hostile_transaction_file_is_exit_2_at_once(chain, hostile_file):
    # Before: `yield tx inspect /dev/zero` ate memory until killed, and a FIFO hung the command.
    kind, path = hostile_file
    result = chain("tx", "inspect", path)
    assert result.code == 2
    assert EXPECTED[kind] in one_line_error(result)
    if kind == "fifo":
        assert "pass - and redirect standard input" in one_line_error(result)


def test_endless_standard_input_is_refused_for_a_keypair_and_a_transaction(chain, sandbox):
    env = {
        "YIELD_API_URL": sandbox.url,
        "YIELD_API_KEY": TEST_API_KEY,
        "YIELD_RPC_URL": sandbox.rpc_url,
        "YIELD_STRATEGY": DEMO_STRATEGY_ID,
    }
    result = run_with_stdin(
        ["deposit", "--asset", "USDC", "--amount", "1", "--sign", "-k", "-", "--wallet", DEMO_WALLET], "/dev/zero", env
    )
    assert result.code == 3 and "too large" in one_line_error(result)
    result = run_with_stdin(["tx", "inspect", "-"], "/dev/zero", env)
    assert result.code == 2 and "too large" in one_line_error(result)


def test_a_transaction_file_of_our_own_json_output_still_works(chain, tmp_path):
    built = chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    path = tmp_path / "deposit.json"
    path.write_text(built.stdout)
    inspected = chain("tx", "inspect", str(path), "-o", "json")
    assert inspected.code == 0 and inspected.json()["review"]["fee_payer"] == DEMO_WALLET


# --- 3. exit 1 ("a bug") where a documented code belongs -----------------------------------------


@pytest.mark.parametrize(
    "url, expected",
    [
        ("http://127.0.0.1:99999", "port"),  # before: exit 1, ValueError: Port out of range
        ("http://127.0.0.1:abc", "port"),  # before: exit 1, ValueError
        ("http://exa mple.com", "spaces"),  # before: refused, but for the wrong reason
        ("https://exa mple.com/v1", "spaces"),
        ("http://[::1", "IPv6"),  # before: exit 1, ValueError: Invalid IPv6 URL
        ("https://" + "a" * 300 + ".com", "host name"),  # before: exit 1, UnicodeError from the idna codec
        ("https://" + "a" * 70_000 + ".com", "too long"),
        ("", "expected http"),
    ],
)
def test_a_bad_api_url_is_a_usage_error(run, url, expected):
    result = run("--api-url", url, "health", env={"YIELD_API_KEY": TEST_API_KEY})
    assert result.code == 2
    line = one_line_error(result)
    assert expected in line and len(line) < 300


@pytest.mark.parametrize(
    "url, expected",
    [
        ("http://127.0.0.1:99999", "port"),  # before: exit 1, ExceptionGroup from a task group
        ("http://127.0.0.1:-1", "port"),
        ("http://" + "a" * 70_000, "too long"),  # before: exit 1, InvalidURL: URL too long
        ("http://127.0.0.1:1/" + "x" * 70_000, "too long"),
        ("http://exa mple.com/", "spaces"),
        ("http://[zz]/", "IPv6"),
        ("", "empty"),  # before: silently mainnet-beta
    ],
)
def test_a_bad_rpc_url_is_a_usage_error(chain, sandbox, url, expected):
    refuse_every_request(sandbox)
    for args in (
        ["tx", "status", SIGNATURE, "-u", url],
        ["deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-u", url],
    ):
        result = chain(*args)
        assert result.code == 2, (args[0], result.stderr)
        line = one_line_error(result)
        assert expected in line and len(line) < 300


@pytest.mark.parametrize(
    "line, command",
    [
        ('output = ["x"]', ["health"]),  # before: exit 1, AttributeError: 'list' object has no attribute 'lower'
        ("output = 1979-05-27", ["health"]),
        ("timeout = true", ["health"]),
        ("color = 1", ["health"]),
        ("api_url = 5", ["health"]),
        ("strategy = { id = 1 }", ["positions", DEMO_WALLET]),
        ("keypair = [1, 2]", ["balances"]),
        ("rpc_url = 1.5", ["tx", "status", SIGNATURE]),
        ("[profiles.default]\noutput = []", ["health"]),
    ],
)
def test_a_config_value_of_the_wrong_type_is_exit_3_naming_the_file(run, sandbox, isolated, line, command):
    path = write_config(isolated, line + "\n")
    result = run(
        *command, env={"YIELD_API_KEY": TEST_API_KEY, **({} if "api_url" in line else {"YIELD_API_URL": sandbox.url})}
    )
    assert result.code == 3
    message = one_line_error(result)
    assert str(path) in message and "expected" in message


@pytest.mark.parametrize(
    "line, command, expected",
    [
        ('output = "yaml"', ["health"], "yaml"),
        ('color = "purple"', ["health"], "purple"),
        ('api_url = "http://127.0.0.1:99999"', ["health"], "port"),
        ('rpc_url = "http://exa mple.com"', ["tx", "status", SIGNATURE], "spaces"),
        ('rpc_url = ""', ["tx", "status", SIGNATURE], "empty"),
        ('keypair = ""', ["balances"], "empty"),
        ('keypair = "/tmp/\\u0000x"', ["balances"], "NUL"),
    ],
)
def test_a_bad_config_value_is_exit_3_saying_where_it_came_from(run, sandbox, isolated, line, command, expected):
    path = write_config(isolated, line + "\n")
    env = {"YIELD_API_KEY": TEST_API_KEY, **({} if "api_url" in line else {"YIELD_API_URL": sandbox.url})}
    result = run(*command, env=env)
    assert result.code == 3
    message = one_line_error(result)
    assert expected in message and (str(path) in message or "(from config)" in message)
    assert "\x00" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--profile", "", "health"],
        ["--config", "", "health"],
        ["balances", ""],
        ["deposit", "--asset", "USDC", "--amount", "1", "--strategy", ""],
        ["deposit", "--asset", "USDC", "--amount", "1", "--sign", "-k", ""],
    ],
)
def test_an_empty_value_is_refused_not_taken_for_the_default(chain, sandbox, args):
    # Before: `--strategy "$UNSET"` used the configured strategy, `-u ""` mainnet-beta,
    # `--profile ""` the default profile, and `balances ""` the keypair's wallet.
    refuse_every_request(sandbox)
    result = chain(*args)
    assert result.code == 2, result.stderr
    one_line_error(result)


def test_sandbox_serve_on_a_remote_host_without_its_flag_is_a_usage_error(run):
    # Before: exit 1, "unexpected error: ValueError".
    result = run("sandbox", "serve", "--host", "0.0.0.0")
    assert result.code == 2
    assert "loopback" in one_line_error(result) and "--allow-remote" in result.stderr


def test_sandbox_serve_on_a_port_in_use_is_a_usage_error(run):
    # Before: exit 1, "unexpected error: OSError: [Errno 98] Address already in use".
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = run("sandbox", "serve", "--port", str(taken.getsockname()[1]))
    assert result.code == 2
    assert "already in use" in one_line_error(result) and "--port" in result.stderr


# --- 4. credentials in URLs never appear -----------------------------------------------------------


def credentialed(url: str, port_path: str = "") -> list[str]:
    base = url.replace("http://", f"http://user:{SECRET}@")
    return [f"{base}{port_path}/?api_key={SECRET}", f"{base}{port_path}?token={SECRET}", f"{base}{port_path}/"]


def test_verbose_never_prints_credentials_in_the_api_url(run, sandbox):
    # Before: `--verbose` printed `GET http://user:SECRET@…/health?api_key=SECRET`.
    for url in credentialed(sandbox.url):
        result = run("-v", "--api-url", url, "balances", DEMO_WALLET, "-o", "json", env={"YIELD_API_KEY": TEST_API_KEY})
        assert result.code == 0, result.stderr
        assert "GET http://127.0.0.1:" in result.stderr  # the trace is there, redacted
        assert SECRET not in result.stderr + result.stdout


def test_a_service_echoing_a_secret_path_back_is_scrubbed(run, sandbox):
    result = run("--api-url", f"{sandbox.url}/v1/{SECRET}", "health", env={"YIELD_API_KEY": TEST_API_KEY})
    assert result.code == 5  # the sandbox does not serve under /v1/…: it answers 404 naming the path
    assert "Not found" in one_line_error(result) and SECRET not in result.stderr


@pytest.mark.parametrize(
    "url",
    [
        f"http://user:{SECRET}@127.0.0.1:1/?api_key={SECRET}",  # unreachable: exit 6
        f"http://user:{SECRET}@127.0.0.1:99999/?api_key={SECRET}",  # bad port: exit 2
        f"http://exa mple.com/{SECRET}",  # a space: exit 2
        f"api.example.com/?api_key={SECRET}",  # no scheme: exit 2
    ],
)
def test_error_messages_never_echo_credentials_in_a_url(chain, url):
    for args in (["--api-url", url, "health"], ["tx", "status", SIGNATURE, "-u", url]):
        result = chain("-v", *args)
        assert result.code in (2, 6), result.stderr
        assert SECRET not in result.stderr + result.stdout


def test_verbose_never_prints_credentials_in_the_rpc_url(chain, sandbox):
    for url in credentialed(sandbox.rpc_url):
        result = chain("-v", "tx", "status", SIGNATURE, "-u", url, "-o", "json")
        assert result.code == 8 and result.json()["status"] == "unknown"  # reached the RPC, which never saw it
        assert SECRET not in result.stderr + result.stdout


# --- found while fuzzing the options ---------------------------------------------------------------


def test_an_endless_wallets_file_is_refused(api):
    # Before: `--wallets-file /dev/zero` read until memory ran out. A pipe is still welcome.
    result = api("balances", "--wallets-file", "/dev/zero")
    assert result.code == 2 and "too large" in one_line_error(result)
    piped = api("balances", "--wallets-file", "-", "-o", "json", input=f"{DEMO_WALLET}\n")
    assert piped.code == 0 and piped.json()["data"][0]["wallet"] == DEMO_WALLET
    # A bad line is named, not echoed whole (it could be megabytes long).
    long_line = api("balances", "--wallets-file", "-", input="x" * 100_000 + "\n")
    assert long_line.code == 2 and len(one_line_error(long_line)) < 300


@pytest.mark.parametrize("key", ["ключ-0123456789", "key\x01with-control", "k" * 5000])
def test_an_api_key_no_header_can_carry_is_refused(run, sandbox, key):
    # Before: a non-Latin-1 key in YIELD_API_KEY ended in "unexpected error: UnicodeEncodeError"
    # (exit 1), and `auth login --with-token` stored such keys (or megabytes of NUL bytes).
    result = run("--api-url", sandbox.url, "health", env={"YIELD_API_KEY": key})
    assert result.code == 3 and "YIELD_API_KEY" in one_line_error(result)
    assert key not in result.stderr
    result = run("auth", "login", "--with-token", input=key)
    assert result.code == 2 and key not in one_line_error(result)


def test_config_set_refuses_what_config_reads_would_refuse(run):
    # Before: `config set rpc_url ١٢` and `config set strategy ""` were written to the file.
    for key, value in (
        ("rpc_url", "١٢"),
        ("rpc_url", "http://exa mple.com"),
        ("strategy", ""),
        ("keypair", " "),
        ("timeout", "٣٠"),
    ):
        result = run("config", "set", key, value)
        assert result.code == 2, (key, value, result.stderr)
        one_line_error(result)
    assert run("config", "set", "rpc_url", "devnet").code == 0


def test_config_show_redacts_credentials_in_urls_and_config_get_prints_them(run):
    url = f"https://rpc.example.com/?api-key={SECRET}"
    assert run("config", "set", "rpc_url", url).code == 0
    shown = run("config", "show", "-o", "json")
    assert shown.code == 0 and SECRET not in shown.stdout
    assert {"name": "rpc_url", "value": "https://rpc.example.com/…"}.items() <= next(
        row for row in shown.json() if row["name"] == "rpc_url"
    ).items()
    assert run("config", "get", "rpc_url").stdout.strip() == url  # asked for by name: scripts need it whole
