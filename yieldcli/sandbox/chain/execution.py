"""How the sandbox chain runs a transaction and describes it: loaded addresses, token balances,
inner instructions, and a real on-chain failure on demand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from solders.account import Account
from solders.address_lookup_table_account import AddressLookupTable
from solders.compute_budget import ComputeBudget
from solders.hash import Hash
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata, SimulatedTransactionInfo

from yieldcli.addresses import b58encode
from yieldcli.amounts import scale
from yieldcli.sandbox.chain.records import RuntimeRpcError, err_json, live, return_data_json, with_blockhash
from yieldcli.solana import programs

if TYPE_CHECKING:
    from solders.litesvm import LiteSVM
    from solders.transaction_metadata import TransactionResult

    from yieldcli.sandbox.chain.clock import Clock
    from yieldcli.sandbox.chain.lock import SyncedLock
    from yieldcli.sandbox.chain.records import TxRecord

_ADVANCE_NONCE = (4).to_bytes(4, "little")  # System Program instruction AdvanceNonceAccount


class ExecutionHelpers:
    """Parts of `Runtime` (they use its LiteSVM, clock, records and lock)."""

    _svm: LiteSVM
    _clock: Clock

    if TYPE_CHECKING:  # provided by `Runtime`, the class these helpers are mixed into

        def get_account(self, address: Pubkey) -> Account | None: ...
        def is_blockhash_valid(self, blockhash: str) -> bool: ...
        @staticmethod
        def _new_svm() -> LiteSVM: ...

    _programs: dict[Pubkey, bytes]
    _records: dict[str, TxRecord]
    _lock: SyncedLock

    def simulate(
        self,
        tx: VersionedTransaction,
        *,
        sig_verify: bool = False,
        replace_recent_blockhash: bool = False,
        accounts: Sequence[Pubkey] = (),
        inner_instructions: bool = False,
    ) -> dict[str, Any]:
        """The `value` of a simulateTransaction answer (err, logs, accounts, unitsConsumed, ...); inner
        instructions only when asked for, as a validator gives them."""
        with self._lock:
            if sig_verify and replace_recent_blockhash:
                raise RuntimeRpcError(-32602, "sigVerify may not be used with replaceRecentBlockhash")
            if sig_verify and not all(tx.verify_with_results()):
                raise RuntimeRpcError(-32003, "Transaction signature verification failure")
            value: dict[str, Any] = {
                "err": None,
                "logs": [],
                "accounts": None,
                "unitsConsumed": 0,
                "returnData": None,
                "innerInstructions": None,
            }
            if replace_recent_blockhash:
                blockhash, last_valid = self._clock.blockhash(), self._clock.height - 1 + self._clock.window
                tx = with_blockhash(tx, Hash.from_string(blockhash))
                value["replacementBlockhash"] = {"blockhash": blockhash, "lastValidBlockHeight": last_valid}
            elif not self.lifetime_ok(tx):
                value["err"] = "BlockhashNotFound"
                return value
            if str(tx.signatures[0]) in self._records:
                value["err"] = "AlreadyProcessed"
                return value
            result = self._svm.simulate_transaction(tx)
            if isinstance(result, FailedTransactionMetadata):
                value["err"] = err_json(result)
            meta = result.meta()
            value["logs"] = list(meta.logs())
            value["unitsConsumed"] = meta.compute_units_consumed()
            value["returnData"] = return_data_json(meta)
            if inner_instructions:
                value["innerInstructions"] = inner_instructions_json(meta)
            if accounts:
                if isinstance(result, SimulatedTransactionInfo):
                    post = dict(result.post_accounts())
                    value["accounts"] = [live(post[a]) if a in post else self.get_account(a) for a in accounts]
                else:
                    value["accounts"] = [None] * len(accounts)  # as the real RPC answers a failed simulation
            return value

    def lifetime_ok(self, tx: VersionedTransaction) -> bool:
        """A recent blockhash, or (durable nonce) a first AdvanceNonceAccount whose account holds the blockhash."""
        message = tx.message
        if self.is_blockhash_valid(str(message.recent_blockhash)):
            return True
        keys, first = message.account_keys, message.instructions[0] if message.instructions else None
        if (
            first is None
            or first.program_id_index >= len(keys)
            or str(keys[first.program_id_index]) != programs.SYSTEM_PROGRAM
        ):
            return False
        indexes = bytes(first.accounts)
        if bytes(first.data) != _ADVANCE_NONCE or not indexes or indexes[0] >= len(keys):
            return False
        account = self._svm.get_account(keys[indexes[0]])
        # Nonce account: version u32, state u32, authority, durable nonce (bytes 40..72), fee u64.
        data = bytes(account.data) if account is not None else b""
        return len(data) == 80 and data[40:72] == bytes(message.recent_blockhash)

    def _token_balances(self, keys: Sequence[Pubkey]) -> list[dict[str, Any]]:
        """Token balances of the transaction's token accounts, as getTransaction's meta lists them."""
        out = []
        for index, key in enumerate(keys):
            account = self._svm.get_account(key)
            if account is None or str(account.owner) not in programs.TOKEN_PROGRAMS:
                continue
            parsed = programs.parse_token_account(str(account.owner), bytes(account.data))
            if parsed is None:
                continue
            mint, owner, amount = parsed
            mint_account = self._svm.get_account(Pubkey.from_string(mint))
            decimals = (
                programs.parse_mint_decimals(str(mint_account.owner), bytes(mint_account.data))
                if mint_account
                else None
            )
            out.append(
                {
                    "accountIndex": index,
                    "mint": mint,
                    "owner": owner,
                    "programId": str(account.owner),
                    "uiTokenAmount": token_amount_json(amount, decimals or 0),
                }
            )
        return out

    def _execute_failing(self, tx: VersionedTransaction, keys: Sequence[Pubkey]) -> TransactionResult:
        """Run `tx` on a copy of its accounts with a 1-unit compute budget: a real on-chain failure
        (first instruction runs out of compute, fee charged, logs real), then copy the result back."""
        scratch = self._new_svm()
        scratch.warp_to_slot(self._clock.slot)
        scratch.set_clock(self._svm.get_clock())
        scratch.set_slot_hashes(self._svm.get_slot_hashes())
        for program_id, elf in self._programs.items():
            scratch.add_program(program_id, elf)
        tables = [lookup.account_key for lookup in getattr(tx.message, "address_table_lookups", [])]
        touched = [(k, a) for k in (*keys, *tables) if (a := self._svm.get_account(k)) is not None and not a.executable]
        for key, account in touched:
            scratch.set_account(key, account)
        budget = ComputeBudget(False)
        budget.compute_unit_limit = 1
        scratch.with_compute_budget(budget)
        result = scratch.send_transaction(tx)
        for key, _ in touched:
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


def inner_instructions_json(meta: Any) -> list[dict[str, Any]]:
    """LiteSVM's inner instructions in the RPC's shape: one entry per top-level instruction that made any."""
    out = []
    for index, inner in enumerate(meta.inner_instructions()):
        if inner:
            out.append(
                {
                    "index": index,
                    "instructions": [
                        {
                            "programIdIndex": i.instruction().program_id_index,
                            "accounts": list(bytes(i.instruction().accounts)),
                            "data": b58encode(bytes(i.instruction().data)),
                            "stackHeight": i.stack_height(),
                        }
                        for i in inner
                    ],
                }
            )
    return out


def token_amount_json(amount: int, decimals: int) -> dict[str, Any]:
    """A token amount as the RPC gives it (uiAmount is a float there; it is only ever displayed)."""
    value = scale(amount, decimals)
    text = format(value.normalize(), "f") if value else "0"
    return {"amount": str(amount), "decimals": decimals, "uiAmount": float(value), "uiAmountString": text}
