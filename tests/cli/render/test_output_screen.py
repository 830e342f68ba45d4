"""What people see on a real terminal (tmux) at 80 and 200 columns: tables that keep every digit,
decimal points in one column, no wrapped rows, the progress bar gone before the table, the pager
for long output only, JSON indented with exact integers, colour only where it means something."""

import json
import re
from decimal import Decimal

import pytest

from tests.cli.tmux import TMUX, Screen
from tests.conftest import TEST_API_KEY, serve_sandbox

pytestmark = pytest.mark.skipif(
    not TMUX, reason="tmux is not installed (the README's test command installs it as root)"
)

VAULT = "9Anfm6V6K2gQjL6B8mvGTmFVfnP598TaRFoaZ3amZqJE"  # the sandbox's USDC vault
POSITION = "C8WoqS8JSWf96gezWMLEPHsT4e1TSgXZY26hTRDvdCE8"  # the demo wallet's USDC position
AMOUNT = re.compile(r"-?\d{1,3}(?:,\d{3})*\.\d+(?!%)\b")
CUT_NUMBER = re.compile(r"[\d,.]…|…[\d,.]")
U128_MAX = 2**128 - 1


@pytest.fixture
def screen(tmp_path):
    screens = []

    def make(width: int, height: int = 40, env: dict | None = None) -> Screen:
        s = Screen(tmp_path, width=width, height=height, env=env)
        screens.append(s)
        return s

    yield make
    for s in screens:
        s.close()


def table_rows(text: str, header_word: str) -> list[str]:
    """The data lines of the table whose header holds `header_word` (up to its footer)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if header_word in line)
    assert set(lines[start + 1].strip()) == {"─"}, lines[start + 1]
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or re.match(r"not shown|page \d|APY \(variable\)|__done__", line):
            break
        rows.append(line)
    return rows


def exact(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def dot_columns(rows: list[str]) -> list[list[int]]:
    """For each row, where the decimal point of each amount is."""
    return [[m.start() + m.group().index(".") for m in AMOUNT.finditer(row)] for row in rows]


@pytest.mark.parametrize("width", [80, 200])
def test_positions_keep_every_digit_in_aligned_unwrapped_rows(run, screen, width):
    expected = run("--sandbox", "positions", "-o", "json").json()["data"]
    text = screen(width).run("yield --sandbox positions")
    rows = table_rows(text, "Deposited")
    assert len(rows) == len(expected), text  # one line per position: no row wrapped
    for row, item in zip(rows, expected, strict=True):
        assert len(row.rstrip()) <= width
        assert row.split()[0] == item["token_symbol"]
        assert not CUT_NUMBER.search(row), row
        shown = [exact(n) for n in AMOUNT.findall(row)][:3]
        scale = Decimal(10) ** -item["decimals"]
        assert shown == [item[k] * scale for k in ("total_deposited_value", "total_position_value", "yield_earned")]
    dots = dot_columns(rows)
    assert all(d[:3] == dots[0][:3] for d in dots), "\n".join(rows)  # decimal points in one column
    if width == 80:
        assert "not shown: Fund, Updated (see -o json, or widen the terminal)" in text
    else:
        assert expected[0]["fund_id"] in rows[0] and "2025-06-02 12:00" in rows[0] and "not shown" not in text
    assert "APY (variable)" in text and "8.42%" in rows[0]


@pytest.mark.parametrize("command, header", [("balances", "Wallet"), ("earnings --all", "Position value")])
def test_balances_and_earnings_fit_80_columns_without_cutting_numbers(run, screen, command, header):
    text = screen(80).run(f"yield --sandbox {command}")
    rows = table_rows(text, header)
    expected = run("--sandbox", *command.split(), "-o", "json").json()["data"]
    assert len(rows) == len(expected), text
    for row in rows:
        assert len(row.rstrip()) <= 80 and not CUT_NUMBER.search(row), row
    # every decimal point sits on one of as many columns as there are amount columns
    dots = dot_columns(rows)
    assert len({p for d in dots for p in d}) == max(len(d) for d in dots), "\n".join(rows)


def test_strategy_assets_shorten_mints_in_the_middle_at_80_columns(run, screen):
    strategy = run("--sandbox", "strategy", "info", "-o", "json").json()
    narrow = screen(80).run("yield --sandbox strategy info")
    wide = screen(200).run("yield --sandbox strategy info")
    usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    assert "EPjF…Dt1v" in narrow and usdc not in narrow
    assert usdc in wide
    assert f"{Decimal(str(strategy['apy'])):.2f}%" in narrow and "18.30%" in narrow  # two decimals, always


def test_the_progress_bar_is_gone_when_the_table_appears(many_wallets, screen, tmp_path):
    server, path = many_wallets
    server.service.latency_ms = 40  # long enough for the bar to be drawn
    s = screen(100, env={"YIELD_API_URL": server.url, "YIELD_API_KEY": TEST_API_KEY})
    s.type(f'clear; yield balances --wallets-file {path} --concurrency 2 --no-pager; echo __do""ne__$?', "Enter")
    s.wait_for("fetching balances of 12 wallets")
    final = s.wait_for("__done__0", timeout=120)
    assert "fetching" not in final and "━" not in final, final
    lines = final.split("\n")
    last_table = max(i for i, line in enumerate(lines) if line.startswith("Balances"))
    assert lines[last_table - 1] == server.addresses[11]  # the last wallet's table, whole, at the end
    assert "APY (variable)" in final


@pytest.fixture
def many_wallets(tmp_path):
    from yieldcli.sandbox.demo import seeded_wallet_addresses

    server = serve_sandbox(tmp_path / "many", seed_wallets=12)
    server.addresses = seeded_wallet_addresses(12)
    path = tmp_path / "wallets.txt"
    path.write_text("\n".join(server.addresses) + "\n")
    yield server, path
    server.stop()


MARK_PAGER = {"YIELD_PAGER": "sed s/^/PAGED:/"}


def test_long_output_goes_through_less_and_short_output_does_not(screen):
    s = screen(80, height=15)
    s.type('clear; yield --sandbox earnings --all; echo __do""ne__$?', "Enter")
    s.wait_for("Earnings", "Sandbox")
    last = [line for line in s.text().split("\n") if line.strip()][-1]
    assert last.strip() == ":" and "__done__" not in s.text()  # less is waiting for a key
    s.type("q")
    s.wait_for("__done__0")

    short = screen(80, height=40, env={"PAGER": "sed s/^/PAGED:/"}).run("yield --sandbox positions")
    assert "Positions" in short and "PAGED:" not in short


@pytest.mark.parametrize(
    "command, paged",
    [
        ("yield --sandbox earnings --all", True),
        ("yield --sandbox --no-pager earnings --all", False),
        ("yield --sandbox earnings --all --no-pager", False),
        ("yield --sandbox earnings --all -o table | cat", False),  # not a terminal: never
        ("YIELD_PAGER= yield --sandbox earnings --all", False),  # empty: no pager
    ],
)
def test_pager_choice(screen, command, paged):
    text = screen(80, height=15, env=MARK_PAGER).run(command)
    assert ("PAGED:" in text) == paged, text


def test_a_pager_that_cannot_start_still_shows_everything(screen, tmp_path):
    s = screen(80, height=15, env={"YIELD_PAGER": "no-such-pager -x 'unbalanced"})
    text = s.run(f"yield --sandbox earnings --all 2>{tmp_path}/err; cat {tmp_path}/err")
    assert "APY (variable)" in text and "__done__0" in text
    assert 'warning: cannot start pager "no-such-pager -x \'unbalanced"' in text.replace("\n", "")


def test_json_on_a_terminal_is_indented_and_exact_piped_compact(run, sandbox, screen):
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

    body = run("--sandbox", "positions", "-o", "json").json()
    body["data"][0]["total_position_value"] = U128_MAX
    body["data"][0]["yield_earned"] = -(2**70)
    sandbox.add_fault("GET", "^/breeze-balances/", 200, json.dumps(body), times=None)
    env = {"YIELD_API_URL": sandbox.url, "YIELD_API_KEY": TEST_API_KEY}
    s = screen(200, height=150, env=env)  # tall enough for the whole document
    text = s.run(f"yield positions {DEMO_WALLET} --strategy {DEMO_STRATEGY_ID} --json --no-pager")
    assert f'    "total_position_value": {U128_MAX},' in text
    assert '{\n  "data": [\n    {' in text
    piped = run("positions", DEMO_WALLET, "--strategy", DEMO_STRATEGY_ID, env=env)
    assert piped.stdout.count("\n") == 1 and json.loads(piped.stdout) == body
    assert f'"total_position_value": {U128_MAX},' in piped.stdout

    # the table keeps the whole u128 amount even at 80 columns; the negative yield is red
    s80 = screen(80, height=150, env=env)  # a row too wide for 80 columns: each row a block, taller
    s80.run(f"yield positions {DEMO_WALLET} --strategy {DEMO_STRATEGY_ID} --no-pager")
    coloured = s80.text(escapes=True).replace("\n", "")
    assert "340,282,366,920,938,463,463,374,607,431,768.211455" in s80.text().replace("\n", "")
    assert re.search(r"\x1b\[31m(\x1b\[49m)?\s*-1,180,591,620,717,411.303424", coloured), coloured


def test_no_colour_with_no_color(screen, sandbox):
    s = screen(80, env={"NO_COLOR": "1"})
    s.run("yield --sandbox doctor -u http://127.0.0.1:9")
    coloured = s.text(escapes=True)
    assert "fail" in coloured and "\x1b[31m" not in coloured
    s2 = screen(80)
    s2.run("yield --sandbox doctor -u http://127.0.0.1:9")
    assert re.search(r"\x1b\[31mfail", s2.text(escapes=True))
    assert re.search(r"\x1b\[32mok", s2.text(escapes=True))


def test_the_readme_shows_the_80_column_positions_table_as_it_appears(screen):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "docs" / "manual" / "reads.md").read_text()
    block = readme.split("<!-- positions-80 -->\n```text\n", 1)[1].split("\n```", 1)[0]
    text = screen(80).run("yield --sandbox positions")
    shown = "\n".join(line.rstrip() for line in text.split("\n"))
    assert block in shown, f"README's table is stale; the screen shows:\n{shown}"


def test_balances_keep_apy_at_80_columns(run, screen):
    expected = run("--sandbox", "balances", "-o", "json").json()["data"]
    text = screen(80).run("yield --sandbox balances")
    rows = table_rows(text, "Wallet")
    assert text.split("\n")[text.split("\n").index("Balances") + 1].split()[-1] == "APY"
    with_apy = [(row, item) for row, item in zip(rows, expected, strict=True) if item.get("yield_balance")]
    assert with_apy
    for row, item in with_apy:
        assert row.split()[0] == item["token_symbol"] and row.endswith(layout_apy(item["yield_balance"]["fund_apy"])), (
            row
        )
    assert "not shown: Name, Yield (see -o json, or widen the terminal)" in text


def layout_apy(value) -> str:
    return f"{Decimal(str(value)):.2f}%"


def logical_lines(s: Screen) -> list[str]:
    """The screen's lines as the program wrote them: a line the terminal wrapped is joined again."""
    return [line.rstrip() for line in s._tmux("capture-pane", "-p", "-J").split("\n")]


def review_lines(s: Screen) -> list[str]:
    """The review: everything the deposit drew before its note that nothing was signed."""
    lines = logical_lines(s)
    start = next(i for i, line in enumerate(lines) if line.startswith("deposit 10 USDC from "))
    end = next(i for i, line in enumerate(lines) if line.startswith("not signed: add --sign"))
    return lines[start:end]


def test_the_deposit_review_fits_80_columns_effect_first_amounts_whole(screen):
    from yieldcli.sandbox.demo import DEMO_WALLET

    s = screen(80, height=100)
    text = s.run("yield --sandbox deposit --asset USDC --amount 10")
    assert "not signed: add --sign" in text and "__done__0" in text
    lines = review_lines(s)
    assert lines[0].startswith(f"deposit 10 USDC from {DEMO_WALLET[:4]}…{DEMO_WALLET[-4:]} to strategy ")
    assert lines[1:5] == [
        "  fee 0.000005 SOL",
        "  your SOL:   -0.000005 SOL",
        "  your USDC: -10 USDC",
        "  matches your request",
    ]
    too_wide = [line for line in lines if len(line) > 80]
    assert not too_wide, "\n".join(too_wide)
    assert not CUT_NUMBER.search(re.sub(r"\b\w{4}…\w{4}\b", "", "\n".join(lines)))  # only addresses shortened
    assert f"  fee payer {DEMO_WALLET}: not signed" in lines  # a line that fits keeps the whole address
    # It fits a screen: the cluster by name, no base64, every account once, by what it may do.
    assert len(lines) + 1 <= 25, "\n".join(lines)  # and the note below it
    assert re.fullmatch(r"Review: deposit on sandbox \(message v0, blockhash \w{4}…\w{4}\)", lines[5]), lines[5]
    assert "transaction (base64)" not in text and "http://" not in text
    at = lines.index("  #2 Sandbox strategy program deposit  Sand…1111")
    assert "      amount: 10 USDC; strategy_key: 0a4c…83c7" in lines[at:]
    assert f"      signs: user, payer {DEMO_WALLET} (writable)" in lines[at:]  # it fits: whole
    assert "      writes: source 7tnd…gv7z, vault 9Anf…ZqJE, position C8Wo…dCE8" in lines[at:]
    token_row = table_rows("\n".join(lines), "Token account")[0]
    assert token_row.split() == [
        "7tnd…gv7z",
        "USDC",
        "1,250.75",
        "1,240.75",
        "-10.00",
        "EPjF…Dt1v",
        f"{DEMO_WALLET[:4]}…{DEMO_WALLET[-4:]}",
    ]
    coloured = s.text(escapes=True)
    assert re.search(r"\x1b\[31m\s*-10\.00", coloured) and re.search(r"\x1b\[31m-10 USDC", coloured)


def test_the_deposit_review_at_200_columns_shows_whole_addresses(screen):
    from yieldcli.sandbox.demo import DEMO_WALLET

    s = screen(200, height=100)
    s.run("yield --sandbox deposit --asset USDC --amount 10")
    lines = review_lines(s)
    usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    assert all(len(line) <= 200 for line in lines)
    assert (
        f"      writes: source 7tndHCqX6xh9jSoy3eaXe7VgPkfciMjnWr6zSEF6gv7z, vault {VAULT}, position {POSITION}"
        in lines
    )
    assert any(
        line == "  #2 Sandbox strategy program deposit  SandboxStrategy1111111111111111111111111111" for line in lines
    )
    token_row = table_rows("\n".join(lines), "Token account")[0]
    assert token_row.split()[1:] == ["USDC", "1,250.75", "1,240.75", "-10.00", usdc, DEMO_WALLET]
    # The summary speaks of the wallet in short; the read-only accounts together would not fit 200 columns.
    assert [line for line in lines[1:] if "…" in line] == [
        "      reads: mint EPjF…Dt1v, authority DM5g…zxSt, systemProgram 1111…1111, tokenProgram Toke…Q5DA"
    ]


def test_the_whole_review_and_the_encoded_transaction_with_verbose(screen):
    s = screen(80, height=150)
    text = s.run("yield --sandbox -v deposit --asset USDC --amount 10 2>/dev/null")
    lines = logical_lines(s)
    assert (
        "  cluster:          sandbox" in lines and "      Account                                       Role" in lines
    )
    assert "      vault: " + VAULT in lines
    assert any(line.startswith("transaction (base64): ") for line in lines) and "__done__0" in text
