"""Everything a command needs, resolved once per run from the global options: settings, the API
client, the output sink, and (under --sandbox) the embedded sandbox server."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from yieldcli import config as cfg
from yieldcli.addresses import b58encode, check_pubkey
from yieldcli.cli.argv import check_conflicts
from yieldcli.cli.render.ascii_fallback import protect
from yieldcli.cli.render.output import Output, resolve_mode
from yieldcli.config import API_KEY_ENV
from yieldcli.environment import Environment
from yieldcli.errors import AuthError, ConfigError, ExitCode, ServiceError, UsageError
from yieldcli.files import path_forms, read_small_stream, reads_stdin, write_atomically
from yieldcli.numbers import parse_seconds
from yieldcli.solana.cluster import MAINNET_URL, MONIKERS, resolve_rpc_url
from yieldcli.urls import check_base_url, check_http_url, hide_all, keep, secret_forms

if TYPE_CHECKING:
    from yieldcli.api.sync import ServiceClient
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.cli.render.jq_filter import JqFilter
    from yieldcli.client.clients import Client
    from yieldcli.client.prepared import ChainSettings
    from yieldcli.sandbox.server import SandboxServer
    from yieldcli.secrets import ApiKey


class GlobalOptions(NamedTuple):
    profile: str | None = None
    config: str | None = None
    api_url: str | None = None
    timeout: str | None = None
    output: str | None = None
    color: str | None = None
    quiet: bool = False
    verbose: bool = False
    debug: bool = False
    sandbox: bool = False
    no_pager: bool = False
    keypair: str | None = None  # -k/--keypair and -u/--url given to any command (its own, when it has them, win)
    url: str | None = None
    jq: str | None = None
    json: bool = False  # --json before the command: `output` is "json" then, and a command's -o must agree


def check_json_flag(as_json: bool, requested: str | None) -> None:
    """--json is -o json: beside -o of another format it is a contradiction, refused naming both."""
    if as_json and requested is not None and requested.lower() != "json":
        raise UsageError(
            f"--json and -o {requested} cannot be used together", hint="--json is short for -o json; drop one"
        )


class Session:
    def __init__(self, env: Environment, options: GlobalOptions):
        check_conflicts(options)  # before anything is read or started
        self.env = env
        self.options = options
        self._settings: cfg.Settings | None = None
        self._api: ServiceClient | None = None
        self._sandbox: SandboxServer | None = None
        self._closers: list[Callable[[], None]] = []
        self.output_mode: str | None = None  # once a command asked for its output: how errors are written too
        self._stdin_keypair: str | None = None  # a keypair read from standard input (-k -), kept for a second use
        self.creates_profile = False  # `config set` writes the profile it names: it need not exist yet
        self.checks_config = False  # `config validate`, `doctor`: unknown keys are their failure, not a warning
        # What `explain` adds to an error: where the strategy id came from, which key was sent and from where.
        self._strategy_origin: tuple[str, str] | None = None
        self._key_found: ApiKey | None = None
        self._why_no_key: str | None = None
        self._jq: JqFilter | None = None
        self._hidden: list[str] = []  # never in a -v line: the API key, the URLs' parts but host, the keypair's path
        if options.jq is not None:
            from yieldcli.cli.render.jq_filter import JqFilter

            self._jq = JqFilter(options.jq)  # a bad expression is refused before any request

    # --- settings --------------------------------------------------------------------------------

    @property
    def settings(self) -> cfg.Settings:
        if self._settings is None:
            config_path = cfg.resolve_config_path(self.options.config, self.env)
            config = cfg.load_config(config_path, creating=self.creates_profile)
            if not self.checks_config:  # `config validate` and `doctor` report them, and fail on them
                warnings = Output(self.env, "table", color=False)  # the output settings are not read yet
                for line in config.unknown_keys():
                    warnings.warn(line)
            profile = cfg.resolve_profile(self.options.profile, self.env)
            if not self.creates_profile:
                cfg.check_profile(config, profile)
            flags = {
                "api_url": self.options.api_url,
                "timeout": self.options.timeout,
                "output": self.options.output,
                "color": self.options.color,
                "keypair": self.options.keypair,
                "rpc_url": self.options.url,
            }
            forced = {"api_url": lambda: self.sandbox().url} if self.options.sandbox else {}
            self._settings = cfg.Settings(self.env, config, profile, flags, self._sandbox_overrides(), forced)
        return self._settings

    def forget_settings(self) -> None:
        """Read the settings again when next asked: a command that wrote the config file uses what it wrote."""
        self._settings = None

    def _sandbox_overrides(self) -> dict[str, Any]:
        """Under --sandbox the strategy, the RPC and the keypair default to the sandbox's, unless named.

        Functions, so that the sandbox starts (and its demo keypair is written) only when asked for.
        """
        if not self.options.sandbox:
            return {}

        def strategy() -> str:
            from yieldcli.sandbox.demo import DEMO_STRATEGY_ID

            return DEMO_STRATEGY_ID

        return {
            "strategy": strategy,
            "rpc_url": lambda: self.sandbox().rpc_url,
            "keypair": lambda: str(sandbox_keypair_path(self.env)),
        }

    @property
    def profile(self) -> str:
        return str(self.settings.profile.value)

    def timeout(self) -> float:
        """Seconds per request (not money, so a float is the right type)."""
        return self.settings.checked("timeout", lambda value, name: parse_seconds(value, name=name))

    # --- output ----------------------------------------------------------------------------------

    def output(self, requested: str | None = None, as_json: bool = False) -> Output:
        check_json_flag(as_json, requested)
        check_json_flag(self.options.json, requested)
        if as_json and self.options.output not in (None, "json"):
            check_json_flag(True, self.options.output)
        if self._jq is not None:
            requested, as_json = self._jq_mode("json" if as_json else requested), False
        if as_json or requested is not None:
            resolved = resolve_mode("json" if as_json else requested, self.env)
        else:
            resolved = self.settings.checked("output", lambda value, name: resolve_mode(value, self.env))
        color_choice = self.settings.checked("color", _color_choice)
        self.output_mode = resolved
        if resolved != "table":
            protect(self.env.stdout, machine=True)
        if self._jq is not None:  # what the command writes is held for the filter (see jq_filter)
            self._jq.capture(self.env)
        return Output(
            self.env,
            resolved,
            color=self.env.color_enabled(color_choice, self.env.stdout_isatty),
            quiet=self.options.quiet,
            pager=not self.options.no_pager,
            color_choice=color_choice,
        )

    def _jq_mode(self, requested: str | None) -> str:
        """--jq reads JSON: JSON unless NDJSON was asked for; the config file's table does not count."""
        mode = resolve_mode(requested or self.options.output or "json", self.env)
        if mode not in ("json", "ndjson"):
            raise UsageError(f"--jq filters JSON, not {mode}", hint="drop -o, or use -o json")
        return mode

    def log(self, text: str) -> None:
        """--verbose diagnostics on stderr, without a secret of this run (`_hidden`), whoever wrote the text."""
        if self.options.verbose or self.options.debug:
            try:
                self.env.stderr.write(f"[yield] {hide_all(text, self._hidden)}\n")
                self.env.stderr.flush()
            except (OSError, ValueError):
                pass  # a diagnostic no one reads any more must not replace what it was about (a send's outcome)

    # --- the service -----------------------------------------------------------------------------

    def api(self) -> ServiceClient:
        if self._api is None:
            from yieldcli.api.sync import ServiceClient

            url, key = self.service()
            self._api = ServiceClient(
                url,
                key,
                timeout=self.timeout(),
                log=self.log if self.options.verbose or self.options.debug else None,
                sleep=self.env.sleep,
            )
            self._closers.append(self._api.close)
        return self._api

    def client(self, chain: ChainSettings | None = None) -> Client:
        """The library's `Client` over `api()`: it reads, and writes where and as whom `chain` says."""
        from yieldcli.client.clients import Client

        return Client.over(self.api(), chain=chain)

    def service(self) -> tuple[str, str | None]:
        """The service's URL and the API key to send it (None: no key found), resolved for every
        command alike: the embedded sandbox's own under --sandbox, else the settings' URL and the key
        found for the profile (a key that cannot be sent as a header is refused where it is read)."""
        if self.options.sandbox:
            server = self.sandbox()
            self.log(f"embedded sandbox at {server.url}")
            return server.url, server.api_key
        from yieldcli.secrets import find_api_key

        url = keep(self._hidden, self.settings.checked("api_url", lambda value, name: check_base_url(value)))
        found, why_none = find_api_key(self.env, self.profile)
        self._key_found, self._why_no_key = found, why_none  # for `explain`
        if found is None:
            self.log("no API key found" + (f" ({why_none})" if why_none else ""))
            return url, None
        self.log(f"API key from {found.source}")
        return url, keep(self._hidden, found.value, secret_forms)

    def sandbox(self) -> SandboxServer:
        """The embedded sandbox: started on first use, on an ephemeral loopback port, state in the data dir."""
        if self._sandbox is None:
            from yieldcli.sandbox.server import SandboxServer

            # Not stopped at exit: its thread is a daemon, and a clean shutdown would add the
            # server's poll interval to every --sandbox command.
            self._sandbox = SandboxServer(sandbox_state_path(self.env)).start()
        return self._sandbox

    # --- defaults for wallet and strategy ------------------------------------------------------------

    def strategy(self, flag: str | None, given_as: str = "--strategy") -> str:
        value = cfg.not_empty(flag, "--strategy") or self.settings.value("strategy")
        if not value:
            raise UsageError(
                "no strategy given",
                hint="pass --strategy ID, set YIELD_STRATEGY, or `yield config set strategy ID`",
            )
        setting = self.settings.get("strategy")
        self._strategy_origin = (str(value), given_as if flag else (setting.location or setting.source))
        return value

    def explain(self, error: BaseException) -> None:
        """Add to an error what only this run knows: where a strategy id the service does not know came
        from, and which API key the service refused."""
        if isinstance(error, AuthError):
            self._explain_auth(error)
        origin = self._strategy_origin
        if origin and isinstance(error, ServiceError) and "strategy not found" in error.message.lower():
            strategy_id, where = origin
            error.message = f"{error.message}: {strategy_id!r} (from {where})"
            error.exit_code, error.kind = ExitCode.USAGE, "usage.strategy.unknown"  # bad input
            error.hint = "check the id with `yield strategy info ID`; `yield config show` says where it came from"

    def wallet(
        self, given: str | None, *, signing: bool = False, keypair_flag: str | None = None, name: str = "wallet address"
    ) -> str:
        """`given`, else the keypair's public key, else under --sandbox with no keypair named the
        demo wallet. A command that signs (`signing`, with its -k as `keypair_flag`) needs that
        keypair anyway: none is its configuration error, and one on stdin cannot be read twice."""
        if given is not None:  # an empty WALLET ("$UNSET") is refused, not taken as "the default"
            return check_pubkey(given, name)
        if self.options.sandbox and keypair_flag is None and not self._keypair_named():
            from yieldcli.sandbox.demo import DEMO_WALLET

            return DEMO_WALLET
        if signing:
            keypair = self.keypair_source(keypair_flag)
        else:
            keypair = self._keypair_setting(self.settings)
            if keypair.value is None:
                raise UsageError(
                    "no wallet given and no keypair configured",
                    hint="pass a WALLET address, or --keypair / YIELD_KEYPAIR / `yield config set keypair PATH`",
                )
        if reads_stdin(str(keypair.value)):
            from yieldcli.chain.keys.keypairs import read_keypair_bytes

            secret, _, _ = read_keypair_bytes("-", stdin=self.keypair_stdin())
            return b58encode(secret[32:])
        return pubkey_of_keypair_file(str(keypair.value), keypair.source)

    def load_signer(self, source: str) -> Signer:
        """A Ledger for `usb://ledger…`, else a keypair file (or `-`: standard input, read once per run); a file
        others can read is warned about."""
        from yieldcli.chain.keys.keypairs import load_signer

        loaded = load_signer(source, stdin=self.keypair_stdin() if reads_stdin(source) else None)
        if loaded.warning:
            self.output().warn(loaded.warning)
        return loaded.signer

    def keypair_stdin(self) -> io.StringIO:
        """Standard input as a keypair source, read once: the wallet and the signer both come from it."""
        if self._stdin_keypair is None:
            from yieldcli.chain.keys.keypairs import KEYPAIR_MAX_BYTES

            self._stdin_keypair = read_small_stream(
                self.env.stdin, limit=KEYPAIR_MAX_BYTES, what="the keypair", error=ConfigError
            )
        return io.StringIO(self._stdin_keypair)

    def _explain_auth(self, error: AuthError) -> None:
        """Which key the service refused and where it came from; with no usable keyring, the variable."""
        from yieldcli.secrets import mask

        found, why_none = self._key_found, self._why_no_key
        if found is not None and found.source == "env":
            error.message = f"{error.message} (the key {mask(found.value)} from {API_KEY_ENV})"
            error.hint = f"fix or unset {API_KEY_ENV}: it is used before any key stored with `yield auth login`"
        elif found is not None:
            error.message = f"{error.message} (the key {mask(found.value)} from the {found.location})"
            error.hint = f"store the right key with `yield auth login`, or set {API_KEY_ENV}"
        elif why_none:  # the keyring cannot hold a key here: logging in would fail too
            error.hint = f"set {API_KEY_ENV} ({why_none})"

    # --- the chain side --------------------------------------------------------------------------

    def rpc_url(self, flag: str | None) -> str:
        settings = self.settings.with_flags(rpc_url=flag)
        if settings.value("rpc_url") is None:
            return MAINNET_URL
        return keep(self._hidden, settings.checked("rpc_url", rpc_url_of))

    def keypair_source(self, flag: str | None) -> cfg.Setting:
        setting = self._keypair_setting(self.settings.with_flags(keypair=flag))
        if setting.value is None:
            raise ConfigError(
                "no keypair configured",
                hint="pass -k/--keypair PATH (or - for stdin), set YIELD_KEYPAIR, or `yield config set keypair PATH`",
            )
        return keep(self._hidden, setting, path_forms, str(setting.value))

    @staticmethod
    def _keypair_setting(settings: cfg.Settings) -> cfg.Setting:
        """The keypair setting; an empty path (`-k "$UNSET"`) is refused, not read as the current directory."""
        settings.checked("keypair", lambda value, name: cfg.not_empty(value, name))
        return settings.get("keypair")

    def _keypair_named(self) -> bool:
        return self.settings.get("keypair").source in ("flag", "env")

    def close(self) -> None:
        while self._closers:
            self._closers.pop()()
        if self._jq is not None:  # after the rest: a failing expression must not skip a closer
            self._jq.finish()


def sandbox_state_path(env: Environment) -> Path:
    return cfg.data_dir(env) / "sandbox" / "state.json"


def sandbox_keypair_path(env: Environment) -> Path:
    """The sandbox demo wallet's keypair, written once (private to the user) so --sandbox can sign."""
    path = sandbox_state_path(env).parent / "demo-wallet.json"
    if not path.exists():
        from yieldcli.sandbox.demo import demo_keypair

        write_atomically(path, json.dumps(list(bytes(demo_keypair()))))
    return path


def pubkey_of_keypair_file(path: Path | str, source: str = "") -> str:
    """The public half of a solana-keygen file (without importing solders), or a Ledger's for a keypair URL."""
    from yieldcli.chain.keys.keypairs import signer_public_key

    spec = cfg.SPECS["keypair"]
    named = {"flag": spec.flag, "env": spec.env}.get(source, source)
    return signer_public_key(str(path), f" (from {named})" if named else "")


def _color_choice(value: Any, name: str) -> str:
    choice = str(value).lower()
    if choice not in ("auto", "always", "never"):
        raise UsageError(f"invalid value for {name}: {value!r}", hint="use auto, always or never")
    return choice


def rpc_url_of(value: Any, name: str) -> str:
    """A Solana CLI moniker's URL, or an http(s) URL both HTTP stacks can use."""
    text = cfg.not_empty(str(value), name).strip()
    if text not in MONIKERS:
        try:
            check_http_url(text, "RPC URL")
        except UsageError as exc:
            exc.hint = (
                exc.hint or "give an http(s) URL or one of mainnet-beta, devnet, testnet, localhost (or m, d, t, l)"
            )
            raise
    return resolve_rpc_url(text)
