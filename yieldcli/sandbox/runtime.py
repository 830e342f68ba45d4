"""The sandbox's chain: a real SVM (solders' LiteSVM) with block heights, persistence and fault knobs.

LiteSVM runs transactions for real (System, SPL Token, Token-2022, ATA, Memo, ALT, Compute Budget)
but has no blocks and no history across processes. This wrapper adds what an RPC client relies on:

- Slots and block heights: each landed transaction closes a slot; every slot gets a new blockhash,
  valid for `blockhash_window` block heights (150, as on Solana), then refused.
- Statuses of landed transactions, kept by signature, for getSignatureStatuses/getTransaction.
- Persistence: accounts the runtime created or that a landed transaction touched are saved to a
  JSON file after every change and restored with `set_account` on start.
- Faults for tests: slow answers, a sent transaction that never lands and expires, a transaction
  that fails on chain, a transaction held pending until released.

All public methods are thread-safe (one re-entrant lock around LiteSVM).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from solders.account import Account
from solders.address_lookup_table_account import AddressLookupTable
from solders.compute_budget import ComputeBudget
from solders.hash import Hash
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.token.state import Mint
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata, SimulatedTransactionInfo

from yieldcli.chain import programs as p
from yieldcli.chain.rpc import describe_error
from yieldcli.errors import ConfigError
from yieldcli.tokens import KNOWN_TOKENS, WSOL_MINT

log = logging.getLogger(__name__)

BLOCKHASH_WINDOW = 150
FIRST_SLOT = 300_000_000
# Block height trails the slot, as on a real cluster (skipped slots): clients that mix them up fail here.
FIRST_BLOCK_HEIGHT = 280_000_000
STATE_VERSION = 1
MAX_RECORDS = 2_000
# Statuses kept across restarts: the file is rewritten after every transaction, so keep it small.
MAX_PERSISTED_RECORDS = 256
MAX_SLOT_HASHES = 512
LAMPORTS_PER_SOL = 1_000_000_000

# A deterministic authority for every sandbox mint, so separate processes agree on it.
SANDBOX_AUTHORITY = Keypair.from_seed(hashlib.sha256(b"yield sandbox mint authority").digest())
SANDBOX_FAUCET = Keypair.from_seed(hashlib.sha256(b"yield sandbox faucet").digest())
FAUCET_TOP_UP = 1_000_000 * 1_000_000_000

_SYSVAR_OWNER = Pubkey.from_string("Sysvar1111111111111111111111111111111111111")
_NATIVE_LOADER = Pubkey.from_string("NativeLoader1111111111111111111111111111111")
_TOKEN = Pubkey.from_string(p.TOKEN_PROGRAM)
_WSOL = Pubkey.from_string(WSOL_MINT)
_U64_MAX = 2**64 - 1
_ADVANCE_NONCE = (4).to_bytes(4, "little")  # System Program instruction AdvanceNonceAccount

# Errors for which a transaction never lands (no fee, no status), as a leader would drop it.
_NOT_LANDED = {
    "AccountInUse", "AccountLoadedTwice", "AccountNotFound", "ProgramAccountNotFound", "InsufficientFundsForFee",
    "InvalidAccountForFee", "AlreadyProcessed", "BlockhashNotFound", "SignatureFailure", "InvalidAccountIndex",
    "SanitizeFailure", "TooManyAccountLocks", "AddressLookupTableNotFound", "InvalidAddressLookupTableOwner",
    "InvalidAddressLookupTableData", "InvalidAddressLookupTableIndex", "WouldExceedMaxBlockCostLimit",
    "UnsupportedVersion", "MissingSignatureForFee",
}


class RuntimeRpcError(Exception):
    """A refusal the RPC server sends back as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass
class TxRecord:
    """A landed transaction, as getSignatureStatuses and getTransaction describe it."""

    signature: str
    slot: int
    err: Any  # the RPC's JSON form; None on success
    logs: list[str]
    fee: int
    units_consumed: int
    transaction: str  # base64
    version: Any  # 0 or "legacy"
    block_time: int
    pre_balances: list[int]
    post_balances: list[int]
    loaded_writable: list[str] = field(default_factory=list)
    loaded_readonly: list[str] = field(default_factory=list)


@dataclass
class Faults:
    """Test knobs. Counts apply to the next transactions sent through `send_transaction`."""

    delay: float = 0.0  # seconds added to every RPC call
    method_delays: dict[str, float] = field(default_factory=dict)  # per JSON-RPC method, instead of `delay`
    expire: int = 0  # accept, never land, and push the block height past their blockhash's last valid height
    fail: int = 0  # land and fail on chain (compute budget exhausted in the first instruction): fee paid, nothing else
    pending: int = 0  # accept and hold, status unknown, until `release_pending()`

    def delay_for(self, method: str) -> float:
        return self.method_delays.get(method, self.delay)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SendOutcome:
    signature: str
    landed: bool
    record: TxRecord | None
    fault: str | None = None  # which fault handled it: expire, pending, fail


OnConfirmed = Callable[[VersionedTransaction, TxRecord], Any]


class Runtime:
    """LiteSVM plus slots, blockhash lifetimes, statuses, persistence and faults.

    `on_confirmed(tx, record)` is called after each transaction sent through `send_transaction`
    (or released from pending) lands without error. It runs under the runtime's lock: it may call
    the runtime, but must not wait for another thread that does.
    """

    def __init__(
        self,
        state_file: str | os.PathLike[str] | None = None,
        *,
        blockhash_window: int = BLOCKHASH_WINDOW,
        known_mints: bool = True,
        on_confirmed: OnConfirmed | None = None,
    ):
        self._lock = threading.RLock()
        self.state_file = Path(state_file) if state_file is not None else None
        self.blockhash_window = blockhash_window
        self.faults = Faults()
        self.on_confirmed = on_confirmed
        self._svm = self._new_svm()
        self._slot = FIRST_SLOT
        self._height = FIRST_BLOCK_HEIGHT
        self._blockhashes: dict[str, int] = {}  # blockhash -> block height it was issued at
        self._current = ""
        self._slot_hashes: list[tuple[int, Hash]] = []
        self._records: OrderedDict[str, TxRecord] = OrderedDict()
        self._tracked: set[str] = set()
        self._held: list[VersionedTransaction] = []
        self._programs: dict[Pubkey, bytes] = {}  # added with add_program; not persisted
        with self._lock:
            if self.state_file is not None and self.state_file.exists():
                self._load()
            self._svm.warp_to_slot(self._slot)
            self._new_blockhash()
            if known_mints:
                self.install_known_mints()
            self._save()

    # ---- clock and blockhashes

    @staticmethod
    def _new_svm() -> LiteSVM:
        svm = LiteSVM()
        # Signatures and blockhash lifetimes are checked here, per block height, not by LiteSVM
        # (it only knows its single latest blockhash, and unsigned transactions must simulate).
        svm.with_sigverify(False)
        svm.with_blockhash_check(False)
        return svm

    def _new_blockhash(self) -> None:
        self._svm.expire_blockhash()
        blockhash = self._svm.latest_blockhash()
        self._current = str(blockhash)
        self._blockhashes[self._current] = self._height
        # SlotHashes holds the current slot too, so a slot read by getSlot can create a lookup table.
        self._slot_hashes = [(self._slot, blockhash)] + [e for e in self._slot_hashes if e[0] != self._slot][: MAX_SLOT_HASHES - 1]
        self._svm.set_slot_hashes(self._slot_hashes)
        oldest = self._height - self.blockhash_window
        for stale in [h for h, issued in self._blockhashes.items() if issued < oldest]:
            del self._blockhashes[stale]

    def _advance(self, slots: int = 1) -> None:
        self._slot += slots
        self._height += slots
        self._svm.warp_to_slot(self._slot)
        self._new_blockhash()

    @property
    def slot(self) -> int:
        with self._lock:
            return self._slot

    @property
    def block_height(self) -> int:
        with self._lock:
            return self._height

    def latest_blockhash(self) -> tuple[str, int]:
        """(blockhash, last valid block height)."""
        with self._lock:
            return self._current, self._blockhashes[self._current] + self.blockhash_window

    def last_valid_block_height(self, blockhash: str) -> int | None:
        with self._lock:
            issued = self._blockhashes.get(blockhash)
            return None if issued is None else issued + self.blockhash_window

    def is_blockhash_valid(self, blockhash: str) -> bool:
        with self._lock:
            last = self.last_valid_block_height(blockhash)
            return last is not None and self._height <= last

    def _lifetime_ok(self, tx: VersionedTransaction) -> bool:
        """A recent blockhash, or (durable nonce) a first AdvanceNonceAccount whose account holds the blockhash."""
        message = tx.message
        if self.is_blockhash_valid(str(message.recent_blockhash)):
            return True
        keys, first = message.account_keys, message.instructions[0] if message.instructions else None
        if first is None or first.program_id_index >= len(keys) or str(keys[first.program_id_index]) != p.SYSTEM_PROGRAM:
            return False
        indexes = bytes(first.accounts)
        if bytes(first.data) != _ADVANCE_NONCE or not indexes or indexes[0] >= len(keys):
            return False
        account = self._svm.get_account(keys[indexes[0]])
        # Nonce account: version u32, state u32, authority, durable nonce (bytes 40..72), fee u64.
        data = bytes(account.data) if account is not None else b""
        return len(data) == 80 and data[40:72] == bytes(message.recent_blockhash)

    def advance_slots(self, count: int = 1) -> int:
        """Let `count` empty slots pass (block height moves with them); returns the new block height."""
        with self._lock:
            if count > 0:
                self._advance(count)
                self._save()
            return self._height

    def expire_blockhash(self) -> None:
        """Invalidate the current blockhash at once; the next slot brings a fresh one."""
        with self._lock:
            self._blockhashes.pop(self._current, None)
            self._advance()
            self._save()

    # ---- accounts

    def get_account(self, address: Pubkey) -> Account | None:
        with self._lock:
            return _live(self._svm.get_account(address))

    def get_balance(self, address: Pubkey) -> int:
        with self._lock:
            return self._svm.get_balance(address) or 0

    def add_program(self, program_id: Pubkey, elf: bytes) -> None:
        """Deploy a program (ELF bytes) at `program_id`. Programs are not saved: add them again on each start."""
        with self._lock:
            self._programs[program_id] = bytes(elf)
            self._svm.add_program(program_id, bytes(elf))

    def set_account(self, address: Pubkey, account: Account) -> None:
        with self._lock:
            self._svm.set_account(address, account)
            self._tracked.add(str(address))
            self._save()

    def minimum_balance_for_rent_exemption(self, size: int) -> int:
        with self._lock:
            return self._svm.minimum_balance_for_rent_exemption(size)

    def program_accounts(self, program_id: Pubkey) -> list[tuple[Pubkey, Account]]:
        with self._lock:
            return list(self._svm.get_program_accounts(program_id))

    def token_account(self, address: Pubkey) -> tuple[str, str, int] | None:
        """(mint, owner, amount) of a token account, else None."""
        account = self.get_account(address)
        return None if account is None else p.parse_token_account(str(account.owner), bytes(account.data))

    def mint_decimals(self, mint: Pubkey) -> int | None:
        account = self.get_account(mint)
        return None if account is None else p.parse_mint_decimals(str(account.owner), bytes(account.data))

    def token_balance(self, owner: Pubkey, mint: Pubkey) -> int:
        """The balance of `owner`'s associated token account for `mint` (0 when it does not exist)."""
        info = self.token_account(p.associated_token_address(owner, mint))
        return info[2] if info else 0

    # ---- setup helpers (real transactions signed by the sandbox authority where possible)

    def airdrop(self, address: Pubkey, lamports: int) -> str:
        """A real transfer from the sandbox faucet, so the airdrop has a status and a transaction like any other."""
        with self._lock:
            faucet = SANDBOX_FAUCET.pubkey()
            balance = self._svm.get_balance(faucet) or 0
            if balance < lamports + LAMPORTS_PER_SOL:
                self._svm.set_account(faucet, Account(balance + lamports + FAUCET_TOP_UP, b"", Pubkey.default(), False, _U64_MAX))
                self._tracked.add(str(faucet))
            record = self.execute([transfer(TransferParams(from_pubkey=faucet, to_pubkey=address, lamports=lamports))], [SANDBOX_FAUCET])
            return record.signature

    def create_mint(
        self,
        decimals: int,
        *,
        address: Pubkey | None = None,
        authority: Pubkey | None = SANDBOX_AUTHORITY.pubkey(),
        freeze_authority: Pubkey | None = None,
    ) -> Pubkey:
        """A token mint at `address` (a fresh one if None), set directly so real mint addresses work."""
        mint = address if address is not None else Keypair().pubkey()
        data = bytes(Mint(mint_authority=authority, supply=0, decimals=decimals, is_initialized=True, freeze_authority=freeze_authority))
        lamports = self.minimum_balance_for_rent_exemption(len(data))
        self.set_account(mint, Account(lamports, data, _TOKEN, False, _U64_MAX))
        return mint

    def install_known_mints(self) -> None:
        """Mints of the service's tokens at their real addresses; wrapped SOL has no mint authority."""
        with self._lock:
            for token in KNOWN_TOKENS:
                mint = Pubkey.from_string(token.mint)
                if self._svm.get_account(mint) is None:
                    self.create_mint(token.decimals, address=mint, authority=None if token.mint == WSOL_MINT else SANDBOX_AUTHORITY.pubkey())

    def _fund_authority(self, lamports: int) -> None:
        balance = self._svm.get_balance(SANDBOX_AUTHORITY.pubkey()) or 0
        if balance < lamports + LAMPORTS_PER_SOL:
            self.airdrop(SANDBOX_AUTHORITY.pubkey(), lamports + 100 * LAMPORTS_PER_SOL)

    def execute(self, instructions: Sequence, signers: Sequence[Keypair], *, payer: Keypair | None = None) -> TxRecord:
        """Run instructions in a v0 transaction signed by `signers` (payer: the first, or `payer`); raise on failure."""
        with self._lock:
            fee_payer = payer or signers[0]
            everyone = [fee_payer, *(s for s in signers if s.pubkey() != fee_payer.pubkey())]
            message = MessageV0.try_compile(fee_payer.pubkey(), list(instructions), [], Hash.from_string(self._current))
            tx = VersionedTransaction(message, everyone)
            record = self._land(tx)
            if record is None or record.err is not None:
                reason = "did not land" if record is None else json.dumps(record.err)
                raise RuntimeRpcError(-32603, f"sandbox setup transaction failed: {reason}", {"logs": record.logs if record else []})
            return record

    def create_associated_token_account(self, owner: Pubkey, mint: Pubkey) -> Pubkey:
        with self._lock:
            self._fund_authority(0)
            ix = p.create_associated_token_account(SANDBOX_AUTHORITY.pubkey(), owner, mint)
            self.execute([ix], [SANDBOX_AUTHORITY])
            return p.associated_token_address(owner, mint)

    def mint_to(self, owner: Pubkey, mint: Pubkey, amount: int) -> Pubkey:
        """Give `owner` `amount` base units of `mint` in its associated token account (created if needed).

        For wrapped SOL the authority transfers lamports into the account and syncs it.
        """
        with self._lock:
            ata = p.associated_token_address(owner, mint)
            create = p.create_associated_token_account(SANDBOX_AUTHORITY.pubkey(), owner, mint)
            if mint == _WSOL:
                self._fund_authority(amount)
                ixs = [
                    create,
                    transfer(TransferParams(from_pubkey=SANDBOX_AUTHORITY.pubkey(), to_pubkey=ata, lamports=amount)),
                    p.token_sync_native(ata),
                ]
            else:
                self._fund_authority(0)
                ixs = [create, p.token_mint_to(mint, ata, SANDBOX_AUTHORITY.pubkey(), amount)]
            self.execute(ixs, [SANDBOX_AUTHORITY])
            return ata

    def create_lookup_table(self, addresses: Sequence[Pubkey] = (), *, authority: Keypair | None = None) -> Pubkey:
        """Create an address lookup table (and extend it with `addresses`); usable from the next slot.

        `authority` (default: the sandbox authority) pays and owns it.
        """
        with self._lock:
            if authority is None:
                authority = SANDBOX_AUTHORITY
                self._fund_authority(0)
            ix, table = p.create_lookup_table(authority.pubkey(), authority.pubkey(), self._slot)
            self.execute([ix], [authority])
            if addresses:
                self.extend_lookup_table(table, addresses, authority=authority)
            return table

    def extend_lookup_table(self, table: Pubkey, addresses: Sequence[Pubkey], *, authority: Keypair | None = None) -> None:
        with self._lock:
            authority = authority or SANDBOX_AUTHORITY
            for start in range(0, len(addresses), 20):
                chunk = list(addresses[start : start + 20])
                self.execute([p.extend_lookup_table(table, authority.pubkey(), authority.pubkey(), chunk)], [authority])

    def lookup_table_addresses(self, table: Pubkey) -> list[Pubkey]:
        account = self.get_account(table)
        if account is None:
            return []
        return list(AddressLookupTable.deserialize(bytes(account.data)).addresses)

    # ---- transactions

    def simulate(
        self,
        tx: VersionedTransaction,
        *,
        sig_verify: bool = False,
        replace_recent_blockhash: bool = False,
        accounts: Sequence[Pubkey] = (),
    ) -> dict[str, Any]:
        """The `value` of a simulateTransaction answer (err, logs, accounts, unitsConsumed, ...)."""
        with self._lock:
            if sig_verify and replace_recent_blockhash:
                raise RuntimeRpcError(-32602, "sigVerify may not be used with replaceRecentBlockhash")
            if sig_verify and not all(tx.verify_with_results()):
                raise RuntimeRpcError(-32003, "Transaction signature verification failure")
            value: dict[str, Any] = {
                "err": None, "logs": [], "accounts": None, "unitsConsumed": 0,
                "returnData": None, "innerInstructions": None,
            }
            if replace_recent_blockhash:
                tx = _with_blockhash(tx, Hash.from_string(self._current))
                value["replacementBlockhash"] = {
                    "blockhash": self._current,
                    "lastValidBlockHeight": self._blockhashes[self._current] + self.blockhash_window,
                }
            elif not self._lifetime_ok(tx):
                value["err"] = "BlockhashNotFound"
                return value
            if str(tx.signatures[0]) in self._records:
                value["err"] = "AlreadyProcessed"
                return value
            result = self._svm.simulate_transaction(tx)
            if isinstance(result, FailedTransactionMetadata):
                meta = result.meta()
                value["err"] = _err_json(result)
            else:
                meta = result.meta()
            value["logs"] = list(meta.logs())
            value["unitsConsumed"] = meta.compute_units_consumed()
            if accounts:
                if isinstance(result, SimulatedTransactionInfo):
                    post = dict(result.post_accounts())
                    value["accounts"] = [_live(post[a]) if a in post else self.get_account(a) for a in accounts]
                else:
                    value["accounts"] = [None] * len(accounts)  # as the real RPC answers a failed simulation
            return value

    def send_transaction(self, tx: VersionedTransaction, *, skip_preflight: bool = False) -> SendOutcome:
        """What sendTransaction does: verify and simulate (unless skipped), then apply faults or land it."""
        with self._lock:
            signature = str(tx.signatures[0])
            if not skip_preflight:
                if not all(tx.verify_with_results()):
                    raise RuntimeRpcError(-32003, "Transaction signature verification failure")
                preflight = self.simulate(tx)
                if preflight["err"] is not None:
                    raise RuntimeRpcError(
                        -32002,
                        f"Transaction simulation failed: {describe_error(preflight['err'])}",
                        {**preflight, "accounts": None},
                    )
            if self.faults.expire > 0:
                self.faults.expire -= 1
                last = self.last_valid_block_height(str(tx.message.recent_blockhash))
                target = (last if last is not None else self._height + self.blockhash_window) + 1
                self._advance(max(1, target - self._height))
                self._save()
                return SendOutcome(signature, False, None, "expire")
            if self.faults.pending > 0:
                self.faults.pending -= 1
                self._held.append(tx)
                return SendOutcome(signature, False, None, "pending")
            fail = self.faults.fail > 0
            if fail:
                self.faults.fail -= 1
            record = self._land(tx, fail=fail, notify=True)
            return SendOutcome(signature, record is not None, record, "fail" if fail else None)

    def release_pending(self) -> list[SendOutcome]:
        """Land the held transactions now (those whose blockhash has expired are dropped)."""
        with self._lock:
            held, self._held = self._held, []
            out = []
            for tx in held:
                record = self._land(tx, notify=True)
                out.append(SendOutcome(str(tx.signatures[0]), record is not None, record))
            return out

    def drop_pending(self) -> list[str]:
        with self._lock:
            held, self._held = self._held, []
            return [str(tx.signatures[0]) for tx in held]

    @property
    def pending_signatures(self) -> list[str]:
        with self._lock:
            return [str(tx.signatures[0]) for tx in self._held]

    def set_fault(self, kind: str, **params: Any) -> Faults:
        """slow(seconds, methods=None) | expire(count=1) | fail(count=1) | pending(count=1) | release | clear."""
        with self._lock:
            if kind == "slow":
                seconds = float(params.get("seconds", 1.0))
                methods = params.get("methods")
                if methods:
                    for method in methods:
                        self.faults.method_delays[str(method)] = seconds
                else:
                    self.faults.delay = seconds
            elif kind in ("expire", "fail", "pending"):
                count = int(params.get("count", 1))
                if count < 0:
                    raise ValueError("count must be 0 or more")
                setattr(self.faults, kind, count)
            elif kind == "release":
                self.release_pending()
            elif kind in ("clear", "none"):
                self.faults = Faults()
            else:
                raise ValueError(f"unknown fault {kind!r}; use slow, expire, fail, pending, release or clear")
            return self.faults

    def clear_faults(self) -> None:
        self.set_fault("clear")

    def status(self, signature: str) -> TxRecord | None:
        with self._lock:
            return self._records.get(signature)

    def _land(self, tx: VersionedTransaction, *, fail: bool = False, notify: bool = False) -> TxRecord | None:
        """Execute in the current slot if it can land; record it and close the slot. None if dropped."""
        signature = str(tx.signatures[0])
        if signature in self._records or not all(tx.verify_with_results()):
            return None
        if not self._lifetime_ok(tx):
            return None
        writable, readonly = self._loaded_addresses(tx)
        keys = [*tx.message.account_keys, *writable, *readonly]
        pre = [self._svm.get_balance(k) or 0 for k in keys]
        result = self._execute_failing(tx, keys) if fail else self._svm.send_transaction(tx)
        if isinstance(result, FailedTransactionMetadata):
            err = _err_json(result)
            name = err if isinstance(err, str) else next(iter(err), "") if isinstance(err, dict) else ""
            if name in _NOT_LANDED or result.meta().fee == 0:
                return None
            meta = result.meta()
        else:
            err = None
            meta = result
        self._tracked.update(str(k) for k in keys)
        self._tracked.update(str(lookup.account_key) for lookup in getattr(tx.message, "address_table_lookups", []))
        record = TxRecord(
            signature=signature,
            slot=self._slot,
            err=err,
            logs=list(meta.logs()),
            fee=meta.fee(),
            units_consumed=meta.compute_units_consumed(),
            transaction=base64.b64encode(bytes(tx)).decode("ascii"),
            version="legacy" if isinstance(tx.message, Message) else 0,
            block_time=int(time.time()),
            pre_balances=pre,
            post_balances=[self._svm.get_balance(k) or 0 for k in keys],
            loaded_writable=[str(k) for k in writable],
            loaded_readonly=[str(k) for k in readonly],
        )
        self._remember(record)
        self._advance()
        self._save()
        if notify and err is None and self.on_confirmed is not None:
            try:
                self.on_confirmed(tx, record)
            except Exception:  # the chain accepted it; a listener's bug must not undo that
                log.exception("on_confirmed callback failed for %s", signature)
        return record

    def _execute_failing(self, tx: VersionedTransaction, keys: Sequence[Pubkey]):
        """Run `tx` on a copy of its accounts with a 1-unit compute budget: a real on-chain failure
        (first instruction runs out of compute, fee charged, logs real), then copy the result back."""
        scratch = self._new_svm()
        scratch.warp_to_slot(self._slot)
        scratch.set_slot_hashes(self._slot_hashes)
        for program_id, elf in self._programs.items():
            scratch.add_program(program_id, elf)
        tables = [lookup.account_key for lookup in getattr(tx.message, "address_table_lookups", [])]
        touched = [k for k in (*keys, *tables) if (a := self._svm.get_account(k)) is not None and not a.executable]
        for key in touched:
            scratch.set_account(key, self._svm.get_account(key))
        budget = ComputeBudget(False)
        budget.compute_unit_limit = 1
        scratch.with_compute_budget(budget)
        result = scratch.send_transaction(tx)
        for key in touched:
            after = scratch.get_account(key)
            self._svm.set_account(key, after if after is not None else Account(0, b"", Pubkey.default()))
        return result

    def _loaded_addresses(self, tx: VersionedTransaction) -> tuple[list[Pubkey], list[Pubkey]]:
        writable: list[Pubkey] = []
        readonly: list[Pubkey] = []
        for lookup in getattr(tx.message, "address_table_lookups", []):
            account = self._svm.get_account(lookup.account_key)
            if account is None:
                continue
            try:
                entries = list(AddressLookupTable.deserialize(bytes(account.data)).addresses)
            except BaseException as exc:  # pyo3 panics are BaseExceptions
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                continue
            writable.extend(entries[i] for i in lookup.writable_indexes if i < len(entries))
            readonly.extend(entries[i] for i in lookup.readonly_indexes if i < len(entries))
        return writable, readonly

    def _remember(self, record: TxRecord) -> None:
        self._records[record.signature] = record
        while len(self._records) > MAX_RECORDS:
            self._records.popitem(last=False)

    # ---- persistence

    def save(self) -> None:
        with self._lock:
            self._save()

    def _save(self) -> None:
        if self.state_file is None:
            return
        accounts = {}
        for address in sorted(self._tracked):
            account = self._svm.get_account(Pubkey.from_string(address))
            # Programs and sysvars come with every LiteSVM; closed accounts are simply gone.
            if account is None or account.executable or account.owner in (_SYSVAR_OWNER, _NATIVE_LOADER):
                continue
            if account.lamports == 0 and not account.data:
                continue
            accounts[address] = {
                "lamports": account.lamports,
                "owner": str(account.owner),
                "executable": account.executable,
                "rent_epoch": account.rent_epoch,
                "data": base64.b64encode(bytes(account.data)).decode("ascii"),
            }
        state = {
            "version": STATE_VERSION,
            "slot": self._slot,
            "block_height": self._height,
            "blockhashes": self._blockhashes,
            "accounts": accounts,
            # vars(), not asdict(): asdict deep-copies every log line, ~0.4 ms per record on each save.
            "transactions": [vars(r) for r in list(self._records.values())[-MAX_PERSISTED_RECORDS:]],
        }
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".chain-", suffix=".json", dir=self.state_file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(state, out, separators=(",", ":"))
            os.replace(tmp, self.state_file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _load(self) -> None:
        try:
            state = json.loads(self.state_file.read_text(encoding="utf-8"))
            if state.get("version") != STATE_VERSION:
                raise ValueError(f"unknown state version {state.get('version')!r}")
            for address, raw in state["accounts"].items():
                account = Account(
                    int(raw["lamports"]),
                    base64.b64decode(raw["data"]),
                    Pubkey.from_string(raw["owner"]),
                    bool(raw["executable"]),
                    int(raw["rent_epoch"]),
                )
                self._svm.set_account(Pubkey.from_string(address), account)
                self._tracked.add(address)
            self._slot = int(state["slot"])
            self._height = int(state["block_height"])
            self._blockhashes = {str(k): int(v) for k, v in state.get("blockhashes", {}).items()}
            for raw in state.get("transactions", []):
                record = TxRecord(**raw)
                self._records[record.signature] = record
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"cannot restore the sandbox chain from {self.state_file}: {exc}",
                hint="delete that file to start the sandbox chain afresh",
            ) from None


def _live(account: Account | None) -> Account | None:
    """None for an account that does not exist (closed accounts linger with 0 lamports)."""
    return account if account is not None and (account.lamports or account.data) else None


def _err_json(result: FailedTransactionMetadata) -> Any:
    return json.loads(result.to_json())["err"]


def _with_blockhash(tx: VersionedTransaction, blockhash: Hash) -> VersionedTransaction:
    message = tx.message
    if isinstance(message, MessageV0):
        new = MessageV0(message.header, message.account_keys, blockhash, message.instructions, message.address_table_lookups)
    else:
        h = message.header
        new = Message.new_with_compiled_instructions(
            h.num_required_signatures, h.num_readonly_signed_accounts, h.num_readonly_unsigned_accounts,
            message.account_keys, blockhash, message.instructions,
        )
    return VersionedTransaction.populate(new, tx.signatures)


def decode_wire_transaction(data: bytes) -> VersionedTransaction:
    try:
        return VersionedTransaction.from_bytes(data)
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise RuntimeRpcError(-32602, f"invalid transaction: failed to deserialize VersionedTransaction: {exc}") from None


__all__ = [
    "BLOCKHASH_WINDOW", "Faults", "Runtime", "RuntimeRpcError", "SANDBOX_AUTHORITY", "SANDBOX_FAUCET", "SendOutcome", "TxRecord",
    "decode_wire_transaction",
]
