"""Instructions drawn at random from every program the sandbox chain has: System (transfers, assign,
allocate, new accounts, durable nonces), SPL Token (transfer, approve, set_authority, close, sync_native,
burn, mint, freeze), the associated token program, Compute Budget, Memo, the signature-verification
precompiles (Ed25519, Secp256r1), lookup tables, and the strategy
program's own five instructions with random strategies, mints, users, positions and recipients.

Accounts come from the `Cast`: the user's own accounts and positions (existing or not), the attacker's,
a bystander's, the program's vaults and mints, and keys made up on the spot.
"""

from __future__ import annotations

import hashlib
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass

from solders import system_program as system
from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey

from tests.guard.precompiles import ed25519_verify, secp256r1_verify
from tests.guard.world import (
    MINTS,
    PYUSD,
    STRATEGIES,
    STRATEGY_PROGRAM,
    THROWAWAY,
    TOKEN,
    WSOL,
    World,
    ata,
    position_address,
)
from yieldcli.solana import programs

ATA_PROGRAM = Pubkey.from_string(programs.ASSOCIATED_TOKEN_PROGRAM)
COMPUTE_BUDGET = Pubkey.from_string(programs.COMPUTE_BUDGET_PROGRAM)
SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
ALT = Pubkey.from_string(programs.ADDRESS_LOOKUP_TABLE_PROGRAM)
PROGRAMS = (
    SYSTEM,
    TOKEN,
    ATA_PROGRAM,
    COMPUTE_BUDGET,
    ALT,
    STRATEGY_PROGRAM,
    Pubkey.from_string(programs.MEMO_PROGRAM),
)
SYSVARS = tuple(
    Pubkey.from_string(s)
    for s in ("SysvarRent111111111111111111111111111111111", "SysvarRecentB1ockHashes11111111111111111111")
)
AUTHORITY = Pubkey.find_program_address([b"authority"], STRATEGY_PROGRAM)[0]


def vault(mint: Pubkey) -> Pubkey:
    return Pubkey.find_program_address([b"vault", bytes(mint)], STRATEGY_PROGRAM)[0]


@dataclass(frozen=True)
class Cast:
    """Who and what a mutation may name."""

    user: Pubkey
    attacker: Pubkey
    bystander: Pubkey
    signers: tuple[Pubkey, ...]  # keys that may sign: the user's and the attacker's
    strategy_ids: tuple[str, ...]
    mints: tuple[Pubkey, ...]
    users_tokens: tuple[Pubkey, ...]  # the user's token accounts, and accounts it may move or close
    others_tokens: tuple[Pubkey, ...]  # the attacker's and the bystander's
    positions: tuple[Pubkey, ...]  # the user's, existing or not
    nonces: tuple[tuple[Pubkey, Pubkey], ...]  # (nonce account, authority)
    every: tuple[Pubkey, ...]  # all of the above, and programs, vaults, sysvars, lookup tables

    @classmethod
    def of(cls, world: World) -> Cast:
        user, attacker = world.wallet, world.attacker.pubkey()
        mints = (*MINTS, PYUSD, world.users_mint)
        grantor = world.grantor.pubkey()
        users = (*(ata(user, m) for m in mints), ata(grantor, MINTS[0]), ata(grantor, MINTS[1]), *world.others_of_user)
        others = tuple(ata(who, m) for who in (attacker, world.bystander) for m in MINTS)
        ids = (*STRATEGIES, "sandbox-0000-4000-8000-00000000000f")
        positions = tuple(position_address(user, s, m) for s in ids for m in MINTS)
        nonces = ((world.nonce_of_user, user), (world.nonce_of_attacker, attacker))
        throwaway = tuple(k.pubkey() for k in THROWAWAY)
        every = (user, attacker, world.bystander, grantor, *throwaway, *mints, *users, *others, *positions)
        every += (*(n for n, _ in nonces), *(vault(m) for m in MINTS), AUTHORITY, *PROGRAMS, *SYSVARS, *world.tables)
        return cls(
            user,
            attacker,
            world.bystander,
            (user, attacker, *throwaway),
            ids,
            mints,
            users,
            others,
            positions,
            nonces,
            every,
        )


Maker = Callable[[random.Random, Cast], Instruction]


def amount(rng: random.Random, around: int = 10**9) -> int:
    return rng.choice([0, 1, 5_000, around // 100, around, around * 2, 2**64 - 1, rng.randrange(1, 2**40)])


def _meta(key: Pubkey, signer: bool = False, writable: bool = False) -> AccountMeta:
    return AccountMeta(key, signer, writable)


def _token(tag: int, rest: bytes, accounts: list[AccountMeta]) -> Instruction:
    return Instruction(TOKEN, bytes([tag]) + rest, accounts)


def _signer(rng: random.Random, c: Cast) -> Pubkey:
    return c.user if rng.random() < 0.7 else rng.choice(c.signers)


def _any_token(rng: random.Random, c: Cast) -> Pubkey:
    return rng.choice(c.users_tokens if rng.random() < 0.6 else c.others_tokens)


def sys_transfer(rng: random.Random, c: Cast) -> Instruction:
    return system.transfer(
        system.TransferParams(from_pubkey=_signer(rng, c), to_pubkey=rng.choice(c.every), lamports=amount(rng))
    )


def sys_assign(rng: random.Random, c: Cast) -> Instruction:
    return system.assign(system.AssignParams(pubkey=_signer(rng, c), owner=rng.choice((*PROGRAMS, c.attacker))))


def sys_allocate(rng: random.Random, c: Cast) -> Instruction:
    return system.allocate(system.AllocateParams(pubkey=_signer(rng, c), space=rng.choice([0, 1, 80, 165, 10_240])))


def sys_create(rng: random.Random, c: Cast) -> Instruction:
    new = rng.choice(c.signers[2:])
    owner = rng.choice((SYSTEM, TOKEN, STRATEGY_PROGRAM, c.attacker))
    params = system.CreateAccountParams(
        from_pubkey=_signer(rng, c),
        to_pubkey=new,
        lamports=amount(rng, 10**7),
        space=rng.choice([0, 128, 165]),
        owner=owner,
    )
    return system.create_account(params)


def nonce_advance(rng: random.Random, c: Cast) -> Instruction:
    nonce, authority = rng.choice(c.nonces)
    return system.advance_nonce_account(
        system.AdvanceNonceAccountParams(nonce_pubkey=nonce, authorized_pubkey=authority)
    )


def nonce_withdraw(rng: random.Random, c: Cast) -> Instruction:
    nonce, authority = rng.choice(c.nonces)
    params = system.WithdrawNonceAccountParams(
        nonce_pubkey=nonce, authorized_pubkey=authority, to_pubkey=rng.choice(c.signers), lamports=amount(rng, 10**6)
    )
    return system.withdraw_nonce_account(params)


def nonce_authorize(rng: random.Random, c: Cast) -> Instruction:
    nonce, authority = rng.choice(c.nonces)
    params = system.AuthorizeNonceAccountParams(
        nonce_pubkey=nonce, authorized_pubkey=authority, new_authority=rng.choice(c.signers)
    )
    return system.authorize_nonce_account(params)


def token_transfer(rng: random.Random, c: Cast) -> Instruction:
    accounts = [
        _meta(_any_token(rng, c), writable=True),
        _meta(_any_token(rng, c), writable=True),
        _meta(_signer(rng, c), True),
    ]
    return _token(3, struct.pack("<Q", amount(rng, 10**6)), accounts)


def token_transfer_checked(rng: random.Random, c: Cast) -> Instruction:
    mint = rng.choice(c.mints)
    source, destination = _any_token(rng, c), _any_token(rng, c)
    return programs.token_transfer_checked(
        source, mint, destination, _signer(rng, c), amount(rng, 10**6), rng.choice([6, 9])
    )


def token_approve(rng: random.Random, c: Cast) -> Instruction:
    accounts = [_meta(_any_token(rng, c), writable=True), _meta(rng.choice(c.signers)), _meta(_signer(rng, c), True)]
    return _token(4, struct.pack("<Q", amount(rng, 10**6)), accounts)


def token_revoke(rng: random.Random, c: Cast) -> Instruction:
    return _token(5, b"", [_meta(_any_token(rng, c), writable=True), _meta(_signer(rng, c), True)])


def token_set_authority(rng: random.Random, c: Cast) -> Instruction:
    target = rng.choice((*c.users_tokens, c.mints[-1]))
    kind = rng.choice([0, 1, 2, 3])  # mint, freeze, account owner, close
    new = rng.choice([None, c.attacker, c.user])
    rest = bytes([kind]) + (bytes([1]) + bytes(new) if new else bytes([0]))
    return _token(6, rest, [_meta(target, writable=True), _meta(_signer(rng, c), True)])


def token_close(rng: random.Random, c: Cast) -> Instruction:
    return programs.token_close_account(_any_token(rng, c), rng.choice(c.signers), _signer(rng, c))


def token_sync_native(rng: random.Random, c: Cast) -> Instruction:
    return programs.token_sync_native(rng.choice((ata(c.user, WSOL), ata(c.attacker, WSOL))))


def token_burn(rng: random.Random, c: Cast) -> Instruction:
    accounts = [
        _meta(_any_token(rng, c), writable=True),
        _meta(rng.choice(c.mints), writable=True),
        _meta(_signer(rng, c), True),
    ]
    return _token(8, struct.pack("<Q", amount(rng, 10**6)), accounts)


def token_mint_to(rng: random.Random, c: Cast) -> Instruction:
    return programs.token_mint_to(c.mints[-1], _any_token(rng, c), c.user, amount(rng, 10**6))


def token_freeze(rng: random.Random, c: Cast) -> Instruction:
    accounts = [_meta(_any_token(rng, c), writable=True), _meta(c.mints[-1]), _meta(c.user, True)]
    return _token(rng.choice([10, 11]), b"", accounts)


def ata_create(rng: random.Random, c: Cast) -> Instruction:
    owner = rng.choice((c.user, c.attacker, *c.signers, c.bystander))
    return programs.create_associated_token_account(
        _signer(rng, c), owner, rng.choice(c.mints), idempotent=rng.random() < 0.5
    )


def compute_budget(rng: random.Random, c: Cast) -> Instruction:
    kind = rng.choice([1, 2, 3])
    if kind == 1:  # RequestHeapFrame
        return Instruction(COMPUTE_BUDGET, struct.pack("<BI", 1, rng.choice([32 * 1024, 256 * 1024])), [])
    if kind == 2:  # SetComputeUnitLimit
        return Instruction(COMPUTE_BUDGET, struct.pack("<BI", 2, rng.choice([1, 5_000, 200_000, 1_400_000])), [])
    price = rng.choice([1, 1_000, 1_000_000, 10**9, 2**64 - 1])  # micro-lamports per unit
    return Instruction(COMPUTE_BUDGET, struct.pack("<BQ", 3, price), [])


def memo(rng: random.Random, c: Cast) -> Instruction:
    return programs.memo(rng.choice(["gm", "refund", "x" * 200]), [c.user] if rng.random() < 0.5 else [])


def precompile(rng: random.Random, c: Cast) -> Instruction:
    """A signature-verification precompile verifying one valid signature again and again: it moves
    nothing, and the network charges each declared signature as one of the message's."""
    if rng.random() < 0.5:
        return secp256r1_verify(rng.choice([1, 8]))
    return ed25519_verify(rng.choice([1, 8, 30, 52]))


def lookup_table_create(rng: random.Random, c: Cast) -> Instruction:
    return programs.create_lookup_table(_signer(rng, c), c.user, 300_000_000 + rng.randrange(0, 10**6))[0]


def strategy_init_vault(rng: random.Random, c: Cast) -> Instruction:
    mint = rng.choice(c.mints)
    accounts = [_meta(_signer(rng, c), True, True), _meta(vault(mint), writable=True), _meta(AUTHORITY), _meta(mint)]
    return Instruction(STRATEGY_PROGRAM, bytes([0]), [*accounts, _meta(SYSTEM), _meta(TOKEN)])


def strategy_deposit(rng: random.Random, c: Cast) -> Instruction:
    mint, strategy = rng.choice(c.mints), rng.choice(c.strategy_ids)
    user = _signer(rng, c)
    accounts = [
        _meta(user, True),
        _meta(_signer(rng, c), True, True),
        _meta(ata(user, mint) if rng.random() < 0.8 else _any_token(rng, c), writable=True),
        _meta(mint),
        _meta(vault(mint), writable=True),
        _meta(AUTHORITY),
        _meta(position_address(user, strategy, mint) if rng.random() < 0.8 else rng.choice(c.positions), writable=True),
        _meta(SYSTEM),
        _meta(TOKEN),
    ]
    data = struct.pack("<BQ", 1, amount(rng, 10**6)) + hashlib.sha256(strategy.encode()).digest()
    return Instruction(STRATEGY_PROGRAM, data, accounts)


def _payout(rng: random.Random, c: Cast, data: bytes) -> Instruction:
    mint = rng.choice(c.mints)
    recipient = rng.choice((ata(c.user, mint), ata(c.attacker, mint), ata(c.bystander, mint), _any_token(rng, c)))
    position = rng.choice([p for p in c.positions if rng.random() < 0.3] or list(c.positions))
    accounts = [
        _meta(_signer(rng, c), True, data[0] == 3),
        _meta(recipient, writable=True),
        _meta(mint),
        _meta(vault(mint), writable=True),
        _meta(AUTHORITY),
        _meta(position, writable=True),
        _meta(TOKEN),
    ]
    return Instruction(STRATEGY_PROGRAM, data, accounts)


def strategy_withdraw(rng: random.Random, c: Cast) -> Instruction:
    return _payout(rng, c, struct.pack("<BQB", 2, amount(rng, 10**6), rng.choice([0, 1, 2])))


def strategy_close(rng: random.Random, c: Cast) -> Instruction:
    return _payout(rng, c, bytes([3]))


def strategy_credit_yield(rng: random.Random, c: Cast) -> Instruction:
    return _payout(rng, c, struct.pack("<BQ", 4, amount(rng, 10**6)))


MAKERS: tuple[Maker, ...] = (
    sys_transfer,
    sys_assign,
    sys_allocate,
    sys_create,
    nonce_advance,
    nonce_withdraw,
    nonce_authorize,
    token_transfer,
    token_transfer_checked,
    token_approve,
    token_revoke,
    token_set_authority,
    token_close,
    token_sync_native,
    token_burn,
    token_mint_to,
    token_freeze,
    ata_create,
    compute_budget,
    memo,
    precompile,
    lookup_table_create,
    strategy_init_vault,
    strategy_deposit,
    strategy_withdraw,
    strategy_close,
    strategy_credit_yield,
)
