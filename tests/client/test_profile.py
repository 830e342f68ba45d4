"""A profile's write settings (priority fee, fee cap, the strategy's program) are resolved in one place
(`yieldcli.client.profile.write_defaults`) and reach the three faces alike: `yield deposit`,
`Client.from_profile` and `yield mcp`, each against the sandbox served over loopback."""

from __future__ import annotations

from tests.conftest import TEST_API_KEY, write_keypair
from tests.mcp.harness import POLICY, server_env, session, structured, write_private
from tests.mcp.harness import run as run_async
from yieldcli import Client
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair

PRICE = "2000"  # micro-lamports per compute unit: the profile's default priority fee


def _profile(home, sandbox, keypair: str, more: str = "") -> None:
    config = home / ".config" / "yield"
    config.mkdir(parents=True, exist_ok=True)
    config.chmod(0o700)
    (config / "config.toml").write_text(
        "[profiles.default]\n"
        f'api_url = "{sandbox.url}"\n'
        f'rpc_url = "{sandbox.rpc_url}"\n'
        f'strategy = "{DEMO_STRATEGY_ID}"\n'
        f'keypair = "{keypair}"\n'
        f"priority_fee = {PRICE}\n" + more
    )
    (config / "config.toml").chmod(0o600)


def test_the_profiles_priority_fee_reaches_every_face(isolated, sandbox, run, tmp_path, monkeypatch):
    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())
    _profile(isolated, sandbox, keypair)
    monkeypatch.setenv("YIELD_API_KEY", TEST_API_KEY)

    cli = run("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    assert cli.code == 0, cli.stderr
    assert cli.json()["fee"]["compute_unit_price"] == int(PRICE)

    with Client.from_profile() as client:
        prepared = client.deposit("USDC", "1")
    assert prepared.fee is not None and prepared.result["fee"]["compute_unit_price"] == int(PRICE)
    assert prepared.result["fee"] == cli.json()["fee"]

    home = tmp_path / "agent"
    policy = write_private(home / "policy.toml", POLICY)
    env = {k: v for k, v in server_env(sandbox, home).items() if k not in ("YIELD_API_URL", "YIELD_RPC_URL")}

    async def agent():
        async with session(env, "--policy", str(policy)) as client:
            return structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))

    proposal = run_async(agent)
    assert proposal["fee_lamports"] == str(cli.json()["fee"]["total"]), proposal


def test_a_bad_profile_fee_is_refused_when_the_client_is_made(isolated, sandbox, tmp_path, monkeypatch):
    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())
    _profile(isolated, sandbox, keypair, more='max_fee = "lots"\n')
    monkeypatch.setenv("YIELD_API_KEY", TEST_API_KEY)
    from yieldcli.errors import ConfigError

    try:
        Client.from_profile()
    except ConfigError as refused:
        assert "max_fee" in refused.message
    else:
        raise AssertionError("a max_fee that is not a number was taken")
