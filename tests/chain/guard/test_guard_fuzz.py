"""The guard's differential fuzzer (tests/guard/fuzzer.py): legitimate answers are signed and do what was
asked; thousands of mutants under a fixed seed find no difference; and the oracle is not blind (a
stand-in guard that signs everything is caught at once)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from solders.message import MessageV0

from tests.guard.fuzzer import Base, Fuzzer, Tally
from tests.guard.mutations import compile_mutant
from tests.guard.report import append_findings, message
from tests.guard.settings import SETTINGS
from tests.guard.world import World
from yieldcli.chain.rpc.adapter import Rpc


def fuzz(world: World, bases: list[Base], job: Callable[[Fuzzer], Awaitable[Any]], **kwargs: Any) -> Any:
    async def run() -> Any:
        async with Rpc(world.server.rpc_url) as rpc:
            return await job(Fuzzer(world, bases, rpc, world.server.rpc_url, SETTINGS.seed, **kwargs))

    return asyncio.run(run())


def test_the_mutants_start_from_the_services_own_transactions(fuzz_world, bases):
    """Taken apart and compiled again, each answer is the service's message (a fresh blockhash aside)."""
    for base in bases:
        built = compile_mutant(base.mutant(fuzz_world), fuzz_world)
        assert built is not None and built[1] is None
        ours, theirs = built[0].message, base.transaction.message
        assert isinstance(ours, MessageV0) and isinstance(theirs, MessageV0)
        assert (ours.header, ours.account_keys, ours.instructions, ours.address_table_lookups) == (
            theirs.header,
            theirs.account_keys,
            theirs.instructions,
            theirs.address_table_lookups,
        ), base.name


def legitimate(world: World, bases: list[Base]) -> Tally:
    async def each(fuzzer: Fuzzer) -> Tally:
        tally = Tally()
        for i in range(len(bases)):
            await fuzzer.one(i, tally, mutated=False)
        return tally

    return fuzz(world, bases, each)


def test_every_legitimate_answer_is_signed_and_does_what_was_asked(fuzz_world, bases):
    """No false refusal: each action's answer, unchanged, is signed, lands and passes the oracle."""
    tally = legitimate(fuzz_world, bases)
    assert tally.outcomes == {"signed: landed as asked": len(bases)}, message(tally)
    assert len(bases) == 12


def test_mutants_the_guard_signs_do_only_what_was_asked(fuzz_world, bases):
    tally = fuzz(fuzz_world, bases, lambda fuzzer: fuzzer.run(SETTINGS.cases))
    print(tally.summary())
    print("refusals:", dict(tally.refusals.most_common()))
    if SETTINGS.findings and tally.failures:
        append_findings(SETTINGS.findings, tally, f"seed {SETTINGS.seed}")
    assert not tally.failures, message(tally)
    assert tally.cases == len(SETTINGS.cases)


async def _signs_everything(rpc, rpc_url, request, tx, keypair, max_sol_cost):  # noqa: ANN001, ARG001
    """A guard that checks nothing: the user's slot signed, whatever the transaction does."""
    from solders.message import to_bytes_versioned
    from solders.transaction import VersionedTransaction

    from tests.guard.entry import Decision

    message = tx.message
    payload = to_bytes_versioned(message) if isinstance(message, MessageV0) else bytes(message)
    signatures = list(tx.signatures)
    for i, key in enumerate(message.account_keys[: message.header.num_required_signatures]):
        if key == keypair.pubkey():
            signatures[i] = keypair.sign_message(payload)
    return Decision(VersionedTransaction.populate(message, signatures))


def test_the_oracle_catches_what_a_guard_that_checks_nothing_signs(fuzz_world, bases):
    """Not vacuous: with every mutant signed, the first 200 cases already show the kinds of harm the
    issue names (another position touched, value to someone else, SOL beyond fee and rent, a nonce)."""
    tally = fuzz(fuzz_world, bases, lambda fuzzer: fuzzer.run(range(200)), decide=_signs_everything)
    print(tally.summary())
    text = "\n".join(p for f in tally.failures for p in f.problems)
    assert len(tally.failures) >= 20, tally.summary()
    for harm in ("position ", "token account ", "SOL of the holdings", "account "):
        assert harm in text, harm
    # Every case put the chain back: the legitimate answers still do exactly what was asked.
    assert legitimate(fuzz_world, bases).outcomes == {"signed: landed as asked": len(bases)}
