"""Reviews name the sandbox strategy program and decode its instructions with their amounts."""

from __future__ import annotations

from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.chain.tx.review import review_transaction
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp

USER = Keypair().pubkey()
USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
STRATEGY = "sandbox-0000-4000-8000-000000000001"
ATA = programs.associated_token_address(USER, USDC)


def reviewed(ix: Instruction):
    message = MessageV0.try_compile(USER, [ix], [], Hash.new_unique())
    tx = VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)
    review = review_transaction(tx, decimals={str(USDC): 6})
    return review.instructions[0], review.warnings


def test_deposit_withdraw_and_close_are_named_and_decoded():
    deposit, warnings = reviewed(sp.deposit(USER, USER, ATA, USDC, STRATEGY, 12_500_000))
    assert (deposit.program, deposit.kind, deposit.unknown) == (
        "Sandbox strategy program",
        "deposit",
        False,
    ) and not warnings
    assert deposit.details["amount"] == 12_500_000 and deposit.details["ui_amount"] == "12.500000"
    assert deposit.details["user"] == str(USER) and deposit.details["vault"] == str(sp.vault_address(USDC))
    assert deposit.details["strategy_key"] == sp.strategy_key(STRATEGY).hex()
    assert [a.role for a in deposit.accounts][:3] == ["user", "payer", "source"]

    withdraw, _ = reviewed(sp.withdraw(USER, ATA, USDC, STRATEGY, 5_000_000, exclude_fees=True))
    assert (
        withdraw.kind == "withdraw"
        and withdraw.details["amount"] == 5_000_000
        and withdraw.details["exclude_fees"] is True
    )
    everything, _ = reviewed(sp.withdraw(USER, ATA, USDC, STRATEGY, sp.WITHDRAW_ALL))
    assert everything.details["all"] is True and "amount" not in everything.details

    close, _ = reviewed(sp.close(USER, ATA, USDC, sp.position_address(USER, STRATEGY, USDC)))
    assert close.kind == "close" and close.details["recipient"] == str(ATA)
    assert close.details["position"] == str(sp.position_address(USER, STRATEGY, USDC))


def test_data_that_is_no_instruction_of_the_program_is_said():
    bad, warnings = reviewed(Instruction(sp.PROGRAM, bytes([2, 1, 2]), []))
    assert bad.kind is None and any("does not match any Sandbox strategy program instruction" in w for w in warnings)
    mode, warnings = reviewed(Instruction(sp.PROGRAM, bytes([2]) + (1).to_bytes(8, "little") + bytes([7]), []))
    assert mode.kind is None and warnings
