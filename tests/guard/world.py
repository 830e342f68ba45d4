"""The fuzzer's world: the sandbox served over loopback, the user (the demo wallet), an attacker who holds
keys and accounts of its own, bystanders whose keys nobody in the test holds, and the accounts that make
the user's holdings more than a wallet (a nonce it is authority of, a mint it may mint, a bystander's token
accounts it is delegate of or may close, a second lookup table, a table address not created yet).

The chain is the sandbox's LiteSVM runtime. Once the world is built its state file is let go
(`runtime.state_file = None`): every case restores the accounts it changed, in memory, so nothing is
written to disk between cases and every case starts from the same chain.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from solders.account import Account
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import CreateAccountParams, InitializeNonceAccountParams, create_account
from solders.system_program import initialize_nonce_account as init_nonce
from solders.transaction import VersionedTransaction

from tests.conftest import serve_sandbox
from yieldcli.sandbox.chain.knobs import Network
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, PYUSD_MINT, SECOND_STRATEGY_ID, demo_keypair
from yieldcli.sandbox.server import SandboxServer
from yieldcli.solana import programs
from yieldcli.tokens import KNOWN_TOKENS, WSOL_MINT

LAMPORTS_PER_SOL = 1_000_000_000
NONCE_SIZE = 80
STRATEGIES = (DEMO_STRATEGY_ID, SECOND_STRATEGY_ID)
TOKEN = Pubkey.from_string(programs.TOKEN_PROGRAM)
STRATEGY_PROGRAM = Pubkey.from_string(programs.SANDBOX_STRATEGY_PROGRAM)
WSOL = Pubkey.from_string(WSOL_MINT)
MINTS = tuple(Pubkey.from_string(t.mint) for t in KNOWN_TOKENS)
ATA = Pubkey.from_string(programs.ASSOCIATED_TOKEN_PROGRAM)
TOKEN_2022 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
PYUSD = Pubkey.from_string(PYUSD_MINT)  # the sandbox's Token-2022 asset, with the real one's extensions


def keypair_named(name: str) -> Keypair:
    """The same keypair in every run: a case found once is found again."""
    return Keypair.from_seed(hashlib.sha256(b"yield guard fuzzer: " + name.encode()).digest())


def position_address(user: Pubkey, strategy_id: str, mint: Pubkey) -> Pubkey:
    """The position PDA, from the program's README (seeds "position", user, sha256(id), mint)."""
    key = hashlib.sha256(strategy_id.encode()).digest()
    return Pubkey.find_program_address([b"position", bytes(user), key, bytes(mint)], STRATEGY_PROGRAM)[0]


def ata(owner: Pubkey, mint: Pubkey) -> Pubkey:
    """The associated account, derived with the program that owns the mint (Token-2022 for PYUSD)."""
    program = TOKEN_2022 if mint == PYUSD else TOKEN
    return programs.associated_token_address(owner, mint, program)


@dataclass
class World:
    server: SandboxServer
    user: Keypair
    attacker: Keypair  # the service's operator: its keys sign whatever slots it can
    bystander: Pubkey  # a stranger whose key nobody here holds
    grantor: Keypair  # a bystander whose accounts name the user as delegate and close authority
    nonce_of_user: Pubkey  # a durable nonce whose authority is the user
    nonce_of_attacker: Pubkey
    users_mint: Pubkey  # a mint whose mint and freeze authority is the user
    # The user's token accounts that are not the associated ones: a USDC account holding more than the
    # associated one, a wrapped-SOL account (the source or the unwrap the user did not mean).
    others_of_user: tuple[Pubkey, ...] = ()
    tables: dict[Pubkey, list[Pubkey]] = field(default_factory=dict)  # lookup tables that exist
    owners: list[Pubkey] = field(default_factory=list)  # every program that may own accounts

    @property
    def runtime(self):  # noqa: ANN201 - the sandbox's Runtime
        return self.server.runtime

    @property
    def wallet(self) -> Pubkey:
        return self.user.pubkey()

    def blockhash(self) -> Hash:
        return Hash.from_string(self.runtime.latest_blockhash()[0])

    def keys_of_attacker(self) -> dict[Pubkey, Keypair]:
        """Every key the attacker may sign with: its own and the throwaway keys the mutations make up."""
        return {k.pubkey(): k for k in (self.attacker, *THROWAWAY)}

    def fill_signatures(self, tx: VersionedTransaction) -> VersionedTransaction | None:
        """The user's signed transaction with every other slot the attacker can sign signed; None when
        a slot belongs to a key nobody here holds (it can then never land)."""
        message = tx.message
        count = message.header.num_required_signatures
        keys = self.keys_of_attacker()
        signatures = list(tx.signatures)
        payload = to_bytes_versioned(message) if isinstance(message, MessageV0) else bytes(message)
        for i, key in enumerate(message.account_keys[:count]):
            if signatures[i] != Signature.default() and signatures[i].verify(key, payload):
                continue
            if key not in keys:
                return None
            signatures[i] = keys[key].sign_message(payload)
        return VersionedTransaction.populate(message, signatures)

    def every_account(self) -> dict[Pubkey, Account]:
        """Every account on the chain owned by a program that exists on it. An account owned by a key
        that is no program, or by a loader (a program's own), changes only by a transaction that names
        it: callers add those."""
        found: dict[Pubkey, Account] = {}
        for owner in self.owners:
            for address, account in self.runtime.program_accounts(owner):
                if account.lamports or account.data:
                    found[address] = account
        return found

    def find_owners(self) -> None:
        """Every program on the chain, from the loaders down (once: programs are not deployed by cases)."""
        owners = [o for o in _ROOT_OWNERS if o not in _LOADERS]
        for loader in _LOADERS:
            owners += [a for a, account in self.runtime.program_accounts(loader) if account.executable]
        self.owners = [o for o in dict.fromkeys(owners) if o not in _LOADERS]


# The loaders own every program; the native programs own the rest (sysvars and builtins are no one's holdings).
_LOADERS = tuple(
    Pubkey.from_string(p)
    for p in (
        "BPFLoaderUpgradeab1e11111111111111111111111",
        "BPFLoader2111111111111111111111111111111111",
        "BPFLoader1111111111111111111111111111111111",
        "LoaderV411111111111111111111111111111111111",
        "NativeLoader1111111111111111111111111111111",
    )
)
_ROOT_OWNERS = tuple(
    Pubkey.from_string(p)
    for p in (
        programs.SYSTEM_PROGRAM,
        programs.TOKEN_PROGRAM,
        programs.TOKEN_2022_PROGRAM,
        programs.ADDRESS_LOOKUP_TABLE_PROGRAM,
        programs.SANDBOX_STRATEGY_PROGRAM,
        "Stake11111111111111111111111111111111111111",
        "Vote111111111111111111111111111111111111111",
        "Config1111111111111111111111111111111111111",
    )
)

# Keys the attacker makes up on the spot (a new account to create, a co-signer to add): it holds them all.
THROWAWAY = tuple(keypair_named(f"throwaway {i}") for i in range(3))


def build_world(folder: Path) -> World:
    """The sandbox and the cast around the demo wallet (a few seconds, once per test session)."""
    server = serve_sandbox(folder, api_key="fuzz-key", network=Network(slot_ms=0))
    rt = server.runtime
    user, attacker, grantor = demo_keypair(), keypair_named("attacker"), keypair_named("grantor")
    bystander = keypair_named("bystander").pubkey()
    for who in (attacker.pubkey(), grantor.pubkey(), *(k.pubkey() for k in THROWAWAY)):
        rt.airdrop(who, 50 * LAMPORTS_PER_SOL)
    for mint in MINTS:
        rt.create_associated_token_account(attacker.pubkey(), mint)
        rt.create_associated_token_account(bystander, mint)
    for mint in MINTS[:2]:
        rt.mint_to(attacker.pubkey(), mint, 1_000_000_000)
        rt.mint_to(grantor.pubkey(), mint, 1_000_000_000)
    nonce_of_user = _nonce_account(rt, user, user.pubkey(), "user's nonce")
    nonce_of_attacker = _nonce_account(rt, attacker, attacker.pubkey(), "attacker's nonce")
    users_mint = rt.create_mint(6, authority=user.pubkey(), freeze_authority=user.pubkey())
    rt.create_associated_token_account(user.pubkey(), users_mint)
    rt.execute([programs.token_mint_to(users_mint, ata(user.pubkey(), users_mint), user.pubkey(), 7_000_000)], [user])
    # The grantor lets the user move 5 units of its first mint, and close its second account once empty.
    first, second = (ata(grantor.pubkey(), m) for m in MINTS[:2])
    rt.execute(
        [
            _token_ix(first, 4, (5_000_000).to_bytes(8, "little"), [user.pubkey()], grantor.pubkey()),
            _token_ix(second, 6, bytes([3, 1]) + bytes(user.pubkey()), [], grantor.pubkey()),
        ],
        [grantor],
    )
    others = _other_accounts_of(rt, user.pubkey())
    # A PYUSD position to withdraw from (the issuer's extensions on every transfer of it).
    deposit = programs_deposit_pyusd(user.pubkey())
    rt.execute([deposit], [user])
    world = World(server, user, attacker, bystander, grantor, nonce_of_user, nonce_of_attacker, users_mint, others)
    sandbox_table = server.chain.lookup_table
    world.tables[sandbox_table.key] = list(sandbox_table.addresses)
    theirs = [ata(attacker.pubkey(), m) for m in MINTS] + [ata(bystander, m) for m in MINTS]
    mine = [ata(user.pubkey(), m) for m in MINTS] + [
        position_address(user.pubkey(), s, m) for s in STRATEGIES for m in MINTS
    ]
    table = rt.create_lookup_table([*theirs, *mine, nonce_of_user, users_mint], authority=attacker)
    world.tables[table] = rt.lookup_table_addresses(table)
    rt.advance_slots(1)  # a table is usable from the slot after its last extension
    world.find_owners()
    # From here on the chain lives in memory: cases restore what they change, nothing is saved.
    rt.state_file = None
    rt.on_confirmed = None
    return world


def programs_deposit_pyusd(user: Pubkey) -> Instruction:
    from yieldcli.solana import strategy_program as sp

    return sp.deposit(user, user, ata(user, PYUSD), PYUSD, DEMO_STRATEGY_ID, 100_000_000, token_program=TOKEN_2022)


def _other_accounts_of(rt, user: Pubkey) -> tuple[Pubkey, ...]:  # noqa: ANN001 - a Runtime
    """A USDC account of the user's at a keypair address holding 5,000 USDC, and a wrapped-SOL one with 0.5 SOL."""
    from tests.token_accounts import token_account_data

    rent = rt.minimum_balance_for_rent_exemption(programs.TOKEN_ACCOUNT_SIZE)
    usdc, wsol = keypair_named("user's other USDC").pubkey(), keypair_named("user's other wrapped SOL").pubkey()
    usdc_mint = Pubkey.from_string(next(t.mint for t in KNOWN_TOKENS if t.symbol == "USDC"))
    rt.set_account(usdc, Account(rent, token_account_data(usdc_mint, user, 5_000_000_000), TOKEN, False, 0))
    half = LAMPORTS_PER_SOL // 2
    rt.set_account(wsol, Account(rent + half, token_account_data(WSOL, user, half, native=rent), TOKEN, False, 0))
    return usdc, wsol


def front_run(world: World, tx: VersionedTransaction) -> list[Pubkey]:
    """Whoever sees the transaction first opens each associated account it opens with a plain `Create`
    (which then fails, at the user's fee); the accounts opened so."""
    from tests.token_accounts import token_account_data

    rt, message = world.runtime, tx.message
    keys = list(message.account_keys)
    opened = []
    for ix in message.instructions:
        if (
            ix.program_id_index >= len(keys)
            or keys[ix.program_id_index] != ATA
            or bytes(ix.data)[:1] not in (b"", b"\x00")
        ):
            continue
        named = [keys[i] if i < len(keys) else None for i in ix.accounts]
        if len(named) < 6 or None in named[1:6] or rt.get_account(named[1]) is not None:
            continue
        account, owner, mint, program = named[1], named[2], named[3], named[5]
        rent = rt.minimum_balance_for_rent_exemption(programs.TOKEN_ACCOUNT_SIZE)
        data = token_account_data(mint, owner, 0, native=rent if mint == WSOL else None)
        rt.set_account(account, Account(rent, data, program, False, 0))
        opened.append(account)
    return opened


def _token_ix(account: Pubkey, tag: int, rest: bytes, extra: list[Pubkey], owner: Pubkey) -> Instruction:
    """An SPL Token instruction on `account` (approve: tag 4 + amount, delegate; set_authority: tag 6)."""
    metas = [AccountMeta(account, False, True), *(AccountMeta(k, False, False) for k in extra)]
    return Instruction(TOKEN, bytes([tag]) + rest, [*metas, AccountMeta(owner, True, False)])


def _nonce_account(rt, payer: Keypair, authority: Pubkey, name: str) -> Pubkey:  # noqa: ANN001 - a Runtime
    nonce = keypair_named(name)
    rent = rt.minimum_balance_for_rent_exemption(NONCE_SIZE)
    create = create_account(
        CreateAccountParams(
            from_pubkey=payer.pubkey(),
            to_pubkey=nonce.pubkey(),
            lamports=rent,
            space=NONCE_SIZE,
            owner=Pubkey.from_string(programs.SYSTEM_PROGRAM),
        )
    )
    init = init_nonce(InitializeNonceAccountParams(nonce_pubkey=nonce.pubkey(), authority=authority))
    rt.execute([create, init], [payer, nonce])
    return nonce.pubkey()


def restore(world: World, before: dict[Pubkey, Account], named: set[Pubkey]) -> None:
    """Put back every account as `before` holds it; one not in it did not exist and goes again.
    `named`: the accounts the transaction named (the only ones it could have changed)."""
    rt = world.runtime
    now = world.every_account()
    for address in named - set(now):
        account = rt.get_account(address)
        if account is not None:
            now[address] = account
    for address in set(now) | set(before):
        is_, was = now.get(address), before.get(address)
        if was is None:
            if is_ is not None:
                rt.set_account(address, Account(0, b"", Pubkey.default(), False, 0))
        elif is_ is None or (is_.lamports, is_.owner, bytes(is_.data)) != (was.lamports, was.owner, bytes(was.data)):
            rt.set_account(address, was)


def lookup_accounts(world: World) -> list[AddressLookupTableAccount]:
    return [AddressLookupTableAccount(k, v) for k, v in world.tables.items()]
