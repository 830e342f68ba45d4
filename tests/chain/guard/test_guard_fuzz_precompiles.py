"""The precompile family (issue 35): each legitimate answer with a signature-verification precompile that
verifies one valid signature many times. The guard refuses every one by name (`refused.precompile`);
a guard that checks nothing signs them, they land, and the oracle sees the fee the chain took (the
payer's balance delta) pass what the message's signatures cost, while the rest of the effect is as asked."""

from __future__ import annotations

from collections.abc import Callable

from solders.instruction import Instruction

from tests.chain.guard.test_guard_fuzz import _signs_everything, fuzz
from tests.guard.entry import would_sign
from tests.guard.fuzzer import CAP, Fuzzer
from tests.guard.mutations import compile_mutant
from tests.guard.precompiles import ed25519_verify, precompiles, secp256r1_verify
from yieldcli.chain.tx.state import network_fee

FAMILY: tuple[Callable[[int], Instruction], ...] = (ed25519_verify, secp256r1_verify)


def test_every_action_with_a_precompile_is_refused_and_the_oracle_sees_its_fee(fuzz_world, bases):
    async def job(fuzzer: Fuzzer) -> list[tuple[str, int, int, str, list[str]]]:
        seen = []
        for base in bases:
            for make in FAMILY:
                for n in (52, 40, 30, 24, 21):  # as many as the packet holds, past the 0.0001 SOL allowance
                    mutant = base.mutant(fuzz_world)
                    mutant.instructions += precompiles(make, n)
                    built = compile_mutant(mutant, fuzz_world)
                    if built is not None:
                        break
                assert built is not None, base.name
                tx = built[0]
                request, user = base.request, fuzz_world.user
                refused = await would_sign(fuzzer.rpc, fuzzer.rpc_url, request, tx, user, CAP)
                careless = await _signs_everything(fuzzer.rpc, fuzzer.rpc_url, request, tx, user, CAP)
                outcome, problems = fuzzer.execute(careless.signed, base, None, mutant)
                counted = network_fee(tx.message)  # the guard's count from the message
                seen.append((f"{base.name} + {make.__name__} x{n}", n, counted, refused.refusal, [outcome, *problems]))
                assert refused.signed is None, seen[-1]
        return seen

    seen = fuzz(fuzz_world, bases, job)
    assert len(seen) == 2 * len(bases) == 20
    for name, n, counted, refusal, (outcome, *problems) in seen:
        assert refusal.startswith("Refused refused.precompile:"), (name, refusal)
        assert f"declaring {min(n, 8) if 'secp256r1' in name else n} signatures" in refusal, (name, refusal)
        assert outcome == "signed: landed, differs", (name, outcome, problems)
        # The chain charged each declared signature: the fee the oracle read is the balance delta
        # (no other difference), and it is more than the message's signatures and the allowance.
        assert [p.split(":")[0] for p in problems] == ["fee"], (name, problems)
        assert problems[0].startswith(f"fee: {counted} lamports paid for 1 signature(s)"), (name, counted, problems)
        assert counted >= (1 + n) * 5000, (name, counted)
