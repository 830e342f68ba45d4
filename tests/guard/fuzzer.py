"""The differential fuzzer: the sandbox's legitimate answers for each action, mutated, put to the guard;
whatever it would sign runs on the sandbox's runtime and the whole chain before and after is compared
with what was asked (tests/guard/oracle.py). A case is failing when the guard signs a transaction whose
effect differs, or refuses a legitimate one.

Every case draws from its own generator, seeded with (seed, case number): one case runs again alone with
`YIELD_FUZZ_SEED=<seed> YIELD_FUZZ_CASE=<n>`, on a chain restored to the same state.
"""

from __future__ import annotations

import base64
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from solders.account import Account
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from tests.cli.stand_in import decompile
from tests.guard.entry import Decision, would_sign
from tests.guard.instructions import Cast
from tests.guard.mutations import Mutant, compile_mutant, mutate
from tests.guard.oracle import Ask, differences, unasked_lifetime
from tests.guard.world import World, front_run, restore
from yieldcli.chain.transact.engine import UserRequest

CAP = 10_000_000  # the cost cap the user allows (lamports of fee and rent): 0.01 SOL


@dataclass(frozen=True)
class Base:
    """One legitimate action: what the user asked and the service's transaction for it."""

    name: str
    request: UserRequest
    ask: Ask
    transaction: VersionedTransaction

    def mutant(self, world: World) -> Mutant:
        ixs = decompile(self.transaction, world.tables)
        used = [lookup.account_key for lookup in self.transaction.message.address_table_lookups]
        return Mutant(ixs, self.transaction.message.account_keys[0], used)


@dataclass
class Failure:
    seed: int
    case: int
    base: str
    recipe: list[str]
    problems: list[str]
    transaction: str  # base64 of the doctored transaction as the guard was handed it
    decision: str = "signed"

    def kind(self) -> tuple[str, ...]:
        """What makes two failures the same kind: the action and the sorts of difference."""
        return (self.base.split(" ")[0], *sorted({_sort_of(p) for p in self.problems}))

    def text(self) -> str:
        lines = [f"case {self.case} (seed {self.seed}), {self.base}, guard: {self.decision}"]
        lines += [f"  mutation: {r}" for r in self.recipe] or ["  mutation: none (the legitimate transaction)"]
        lines += [f"  difference: {p}" for p in self.problems]
        lines.append(f"  transaction: {self.transaction}")
        return "\n".join(lines)


def _sort_of(problem: str) -> str:
    """A difference without its addresses and figures: "position", "SOL of the holdings", ..."""
    return re.split(r" [1-9A-HJ-NP-Za-km-z]{32,44}\b|:", problem, maxsplit=1)[0]


@dataclass
class Tally:
    cases: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)  # refused / signed: passed, cannot land, ...
    refusals: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        rate = self.cases / self.seconds if self.seconds else 0.0
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        return f"{self.cases} cases in {self.seconds:.1f} s ({rate:.0f}/s): {parts}; {len(self.failures)} failing"


Decide = Callable[[Any, str, UserRequest, VersionedTransaction, Keypair, int], Awaitable[Decision]]


class Fuzzer:
    """Cases against one world; `decide` is the guard (tests/guard/entry.py), or a stand-in that
    shows the oracle sees what a guard lets through."""

    def __init__(self, world: World, bases: list[Base], rpc: Any, rpc_url: str, seed: int, decide: Decide = would_sign):
        self.world, self.bases, self.rpc, self.rpc_url, self.seed = world, bases, rpc, rpc_url, seed
        self.decide = decide
        self.cast = Cast.of(world)

    async def run(self, cases: range, tally: Tally | None = None) -> Tally:
        tally = tally or Tally()
        started = time.perf_counter()
        for case in cases:
            await self.one(case, tally)
        tally.seconds += time.perf_counter() - started
        return tally

    async def one(self, case: int, tally: Tally, *, mutated: bool = True) -> None:
        rng = random.Random(f"{self.seed}:{case}")
        base = rng.choice(self.bases) if mutated else self.bases[case]
        mutant = base.mutant(self.world)
        if mutated:
            mutate(rng, mutant, self.cast, self.world)
        built = compile_mutant(mutant, self.world)
        tally.cases += 1
        if built is None:
            tally.outcomes["not a valid transaction"] += 1
            return
        tx, later_table = built
        decision = await self.decide(self.rpc, self.rpc_url, base.request, tx, self.world.user, CAP)
        wire = base64.b64encode(bytes(tx)).decode()
        if decision.signed is None:
            tally.outcomes["refused"] += 1
            tally.refusals[decision.refusal.split(":")[0]] += 1
            if not mutated or decision.crashed:
                problem = f"{'crashed' if decision.crashed else 'refused'}: {decision.refusal}"
                tally.failures.append(Failure(self.seed, case, base.name, mutant.recipe, [problem], wire, "refused"))
            return
        outcome, problems = self.execute(decision.signed, base, later_table, mutant)
        tally.outcomes[outcome] += 1
        if problems:
            tally.failures.append(Failure(self.seed, case, base.name, mutant.recipe, problems, wire))
        elif not mutated and outcome != "signed: landed as asked":
            # A legitimate transaction that does not land is a refusal of another name.
            tally.failures.append(Failure(self.seed, case, base.name, [], [outcome], wire))

    def execute(
        self, signed: VersionedTransaction, base: Base, later_table: Pubkey | None, mutant: Mutant
    ) -> tuple[str, list[str]]:
        """Land the signed transaction (the attacker's slots signed too) and compare; the chain is then
        put back as it was."""
        world, rt = self.world, self.world.runtime
        complete = world.fill_signatures(signed)
        if complete is None:
            return "signed: needs a key nobody here holds", []
        lookups = getattr(signed.message, "address_table_lookups", [])
        keys = {
            *signed.message.account_keys,
            *(lookup.account_key for lookup in lookups),
            *(mutant.missing_table or ()),
        }
        keys |= {a for lookup in lookups for a in world.tables.get(lookup.account_key, ())}
        before = self.accounts(keys)
        try:
            if later_table is not None:
                made = rt.create_lookup_table(list(mutant.missing_table or ()), authority=world.attacker)
                if made != later_table:
                    return "signed: the table could not be made at its address", []
                world.tables[made] = list(mutant.missing_table or ())
            front_run(world, complete)
            sent = rt.send_transaction(complete, skip_preflight=True)
            if not sent.landed or sent.record is None:
                return f"signed: did not land ({sent.fault or 'rejected by the runtime'})", []
            after = self.accounts(keys)
            paid = sent.record.fee if complete.message.account_keys[0] == world.wallet else 0
            # The fee the chain took, judged against the message's own signatures.
            signatures = complete.message.header.num_required_signatures if paid else None
            problems = differences(base.ask, world.wallet, before, after, paid, CAP, signatures)
            lifetime = unasked_lifetime(complete)
            problems += [lifetime] if lifetime else []
            if problems and sent.record.err is not None:
                problems.insert(0, f"it landed and failed: {sent.record.err}")
            return ("signed: landed, differs" if problems else "signed: landed as asked"), problems
        finally:
            if later_table is not None:
                world.tables.pop(later_table, None)
            restore(world, before, keys)
            # The restored chain would refuse these same bytes as a duplicate (a durable nonce makes
            # them repeat): the record of this case goes with the rest of its effects.
            with rt.lock:
                rt._records.pop(str(complete.signatures[0]), None)

    def accounts(self, extra: set[Pubkey]) -> dict[Pubkey, Account]:
        """Every account of the chain (and those a transaction names, whoever owns them)."""
        found = self.world.every_account()
        rt = self.world.runtime
        for key in extra - set(found):
            account = rt.get_account(key)
            if account is not None:
                found[key] = account
        return found
