"""The guard's exact effect, in-process: the sandbox program's real instructions, account states before and
after, and the verdict. Each rule of `yieldcli/chain/guard/` has a case here that fails when it is broken."""

import struct

from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from tests.token_accounts import token_account_data
from yieldcli.chain.guard.compare import compare
from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.message import resolve
from yieldcli.chain.tx.state import State, parse_token
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp
from yieldcli.tokens import WSOL_MINT

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
JITO = "J1toso1uCk3RLmjorhTtrVwY9HJ7X8V9yYac6Y7kGCPn"
WALLET = Keypair().pubkey()
STRANGER = Keypair().pubkey()
PINNED = programs.SANDBOX_STRATEGY_PROGRAM
S, OTHER = "strategy-a", "strategy-b"
FEE = 5_000
RENT = 2_039_280
POSITION_RENT = 1_781_760
ATA = programs.associated_token_address(WALLET, Pubkey.from_string(USDC))
JITO_ATA = programs.associated_token_address(WALLET, Pubkey.from_string(JITO))
STRANGER_ATA = programs.associated_token_address(STRANGER, Pubkey.from_string(USDC))
VAULT = sp.vault_address(Pubkey.from_string(USDC))
POSITION = sp.position_address(WALLET, S, Pubkey.from_string(USDC))
OTHER_POSITION = sp.position_address(WALLET, OTHER, Pubkey.from_string(USDC))


def token(mint, owner, amount, lamports=RENT, **more):
    data = token_account_data(mint, owner, amount, **more)
    return State(lamports, 165, parse_token(programs.TOKEN_PROGRAM, data), programs.TOKEN_PROGRAM, data)


def position(strategy, deposited, balance, mint=USDC):
    data = (
        sp.POSITION_MAGIC
        + bytes(WALLET)
        + sp.strategy_key(strategy)
        + bytes(Pubkey.from_string(mint))
        + struct.pack("<QQ", deposited, balance)
        + bytes(8)
    )
    return State(POSITION_RENT, 128, None, PINNED, data)


def system(lamports):
    return State(lamports, 0, None, programs.SYSTEM_PROGRAM, b"")


def judge(intent, ixs, before, after, fee=FEE):
    message = MessageV0.try_compile(WALLET, ixs, [], Hash.default())
    return compare(intent, before, after, fee=fee, resolved=resolve(message))


def world(**changes):
    """Before and after of a 10 USDC deposit into S: each keyword replaces one account's after state."""
    before = {
        str(WALLET): system(10**9),
        str(ATA): token(USDC, WALLET, 100_000_000),
        str(VAULT): token(USDC, sp.authority_address(), 500_000_000),
        str(POSITION): position(S, 50_000_000, 60_000_000),
        str(OTHER_POSITION): position(OTHER, 70_000_000, 70_000_000),
        str(STRANGER_ATA): token(USDC, STRANGER, 0),
        str(JITO_ATA): token(JITO, WALLET, 8_000_000_000),
    }
    after = {
        **before,
        str(WALLET): system(10**9 - FEE),
        str(ATA): token(USDC, WALLET, 90_000_000),
        str(VAULT): token(USDC, sp.authority_address(), 510_000_000),
        str(POSITION): position(S, 60_000_000, 70_000_000),
    }
    after.update(changes)
    return before, after


def deposit_ix(strategy=S, amount=10_000_000):
    return sp.deposit(WALLET, WALLET, ATA, Pubkey.from_string(USDC), strategy, amount)


DEPOSIT = Intent("deposit", str(WALLET), str(WALLET), USDC, 10_000_000, S, strategy_program=PINNED)


def test_a_deposit_of_exactly_what_was_asked_passes_and_names_its_strategy():
    check = judge(DEPOSIT, [deposit_ix()], *world())
    assert check.ok, check.differences
    strategy = check.instructions[0].strategy
    assert strategy["id"] == S and strategy["key"] == sp.strategy_key(S).hex() and strategy["position"] == str(POSITION)


def test_the_position_must_grow_by_exactly_the_amount():
    check = judge(DEPOSIT, [deposit_ix()], *world(**{str(POSITION): position(S, 60_000_000, 69_999_999)}))
    assert any("position" in d and "expected balance 70 USDC" in d for d in check.differences), check.differences


def test_another_strategys_key_is_refused_on_the_instruction_and_on_the_effect():
    before, after = world()
    after[str(POSITION)] = before[str(POSITION)]
    after[str(OTHER_POSITION)] = position(OTHER, 80_000_000, 80_000_000)
    check = judge(DEPOSIT, [deposit_ix(OTHER)], before, after)
    assert any("targets strategy key" in d for d in check.differences), check.differences
    assert any(str(OTHER_POSITION)[:4] in d for d in check.differences)


def test_closing_another_position_beside_the_deposit_is_refused():
    close = sp.close(WALLET, STRANGER_ATA, Pubkey.from_string(USDC), OTHER_POSITION)
    before, after = world(**{str(OTHER_POSITION): None, str(STRANGER_ATA): token(USDC, STRANGER, 70_000_000)})
    after[str(WALLET)] = system(10**9 - FEE + POSITION_RENT)
    check = judge(DEPOSIT, [deposit_ix(), close], before, after)
    assert any("the strategy's close, which a deposit does not need" in d for d in check.differences)
    assert any(str(OTHER_POSITION)[:4] in d and "simulated closed" in d for d in check.differences)


def test_init_vault_paid_by_the_user_is_refused():
    init = sp.init_vault(WALLET, Pubkey.from_string(JITO))
    before, after = world(**{str(WALLET): system(10**9 - FEE - RENT)})
    check = judge(DEPOSIT, [deposit_ix(), init], before, after)
    assert any("initVault" in d for d in check.differences)
    assert any(d.startswith("your SOL: expected -0.000005 SOL") for d in check.differences), check.differences


def test_sol_to_a_stranger_is_refused():
    pay = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=STRANGER, lamports=1))
    before, after = world(**{str(WALLET): system(10**9 - FEE - 1), str(STRANGER): system(1)})
    before[str(STRANGER)] = None
    check = judge(DEPOSIT, [deposit_ix(), pay], before, after)
    assert any("your SOL: expected -0.000005 SOL, simulated -0.000005001 SOL" in d for d in check.differences)


def test_mints_are_never_added_together():
    # 8 JitoSOL arriving does not cover 5 USDC leaving: each mint is checked in its own units.
    before, after = world(
        **{str(ATA): token(USDC, WALLET, 85_000_000), str(JITO_ATA): token(JITO, WALLET, 16_000_000_000)}
    )
    check = judge(DEPOSIT, [deposit_ix()], before, after)
    assert any("your USDC account" in d and "expected -10 USDC, simulated -15 USDC" in d for d in check.differences)
    assert any("your JitoSOL account" in d and "+8 JitoSOL" in d for d in check.differences)


def test_a_withdrawal_pays_exactly_the_amount_less_the_programs_fee():
    intent = Intent("withdraw", str(WALLET), str(WALLET), USDC, 10_000_000, S, strategy_program=PINNED)
    ix = sp.withdraw(WALLET, ATA, Pubkey.from_string(USDC), S, 10_000_000)
    net = 10_000_000 - sp.withdrawal_fee(10_000_000)
    before, after = world(
        **{
            str(ATA): token(USDC, WALLET, 100_000_000 + net),
            str(POSITION): position(S, 50_000_000, 50_000_000),
            str(VAULT): token(USDC, sp.authority_address(), 500_000_000 - net),
        }
    )
    assert judge(intent, [ix], before, after).ok
    after[str(ATA)] = token(USDC, WALLET, 100_000_000 + net - 1)  # one base unit kept back
    assert not judge(intent, [ix], before, after).ok
    # with --exclude-fees the user gets the amount and the position gives amount + fee
    exact = Intent(
        "withdraw", str(WALLET), str(WALLET), USDC, 10_000_000, S, exclude_fees=True, strategy_program=PINNED
    )
    gross = 10_000_000 + sp.withdrawal_fee(10_000_000)
    after[str(ATA)] = token(USDC, WALLET, 110_000_000)
    after[str(POSITION)] = position(S, 60_000_000 - gross, 60_000_000 - gross)  # taken from yield first
    fees_out = sp.withdraw(WALLET, ATA, Pubkey.from_string(USDC), S, 10_000_000, exclude_fees=True)
    assert judge(exact, [fees_out], before, after).ok
    assert not judge(exact, [ix], before, after).ok  # the mode must be the one asked


def test_a_close_pays_the_remainder_and_closes_the_position():
    intent = Intent("close-account", str(WALLET), str(WALLET), USDC, None, S, strategy_program=PINNED)
    ix = sp.close(WALLET, ATA, Pubkey.from_string(USDC), POSITION)
    before, after = world(
        **{
            str(ATA): token(USDC, WALLET, 160_000_000),
            str(POSITION): None,
            str(WALLET): system(10**9 - FEE + POSITION_RENT),
            str(VAULT): token(USDC, sp.authority_address(), 440_000_000),
        }
    )
    assert judge(intent, [ix], before, after).ok
    to_stranger = sp.close(WALLET, STRANGER_ATA, Pubkey.from_string(USDC), POSITION)
    after[str(ATA)] = before[str(ATA)]
    after[str(STRANGER_ATA)] = token(USDC, STRANGER, 60_000_000)
    assert any("names the recipient" in d for d in judge(intent, [to_stranger], before, after).differences)


def test_the_cost_cap_counts_fee_and_rent():
    intent = Intent("deposit", str(WALLET), str(WALLET), USDC, 10_000_000, S, max_sol_cost=FEE, strategy_program=PINNED)
    before, after = world()
    before[str(POSITION)] = None
    after[str(POSITION)] = position(S, 10_000_000, 10_000_000)
    after[str(WALLET)] = system(10**9 - FEE - POSITION_RENT)
    check = judge(intent, [deposit_ix()], before, after)
    assert check.differences == ("fee and rent come to 0.00178676 SOL, more than the 0.000005 SOL allowed",)


def test_without_a_stated_intent_only_the_fee_may_leave():
    intent = Intent("transaction", str(WALLET), str(WALLET), strategy_program=PINNED)
    check = judge(intent, [deposit_ix()], *world())
    assert any("the strategy's deposit of your position" in d for d in check.differences)
    assert any("your USDC account" in d for d in check.differences)


MAINNET_PROGRAM = "brzp8fNvHCBRi8UcCnTQUgQ2bQ4JnJTJtCvPzpKf2ty"  # its account layout is not public


def layout_free(action, amount, inner, before, after, ixs):
    intent = Intent(action, str(WALLET), str(WALLET), USDC, amount, S, strategy_program=MAINNET_PROGRAM)
    message = MessageV0.try_compile(WALLET, ixs, [], Hash.default())
    return compare(intent, before, after, fee=FEE, resolved=resolve(message), inner=inner)


def held_by_program(*keys):
    return State(POSITION_RENT, 100, None, MAINNET_PROGRAM, b"".join(bytes(k) for k in keys))


def test_without_a_layout_a_deposit_pays_nothing_out_and_says_what_it_could_not_prove():
    from solders.instruction import AccountMeta, Instruction

    account = Keypair().pubkey()
    ix = Instruction(
        Pubkey.from_string(MAINNET_PROGRAM),
        b"\x01",
        [
            AccountMeta(WALLET, True, True),
            AccountMeta(ATA, False, True),
            AccountMeta(VAULT, False, True),
            AccountMeta(STRANGER_ATA, False, True),
            AccountMeta(account, False, True),
            AccountMeta(Pubkey.from_string(programs.TOKEN_PROGRAM), False, False),
        ],
    )
    keys = [str(k) for k in MessageV0.try_compile(WALLET, [ix], [], Hash.default()).account_keys]
    into_vault = (
        keys.index(programs.TOKEN_PROGRAM),
        (keys.index(str(ATA)), keys.index(str(VAULT))),
        b"\x03" + struct.pack("<Q", 10_000_000),
    )
    before = {
        str(WALLET): system(10**9),
        str(ATA): token(USDC, WALLET, 100_000_000),
        str(VAULT): token(USDC, STRANGER, 0),
        str(STRANGER_ATA): token(USDC, STRANGER, 0),
        str(account): held_by_program(WALLET),
    }
    after = {
        **before,
        str(WALLET): system(10**9 - FEE),
        str(ATA): token(USDC, WALLET, 90_000_000),
        str(VAULT): token(USDC, STRANGER, 10_000_000),
    }
    check = layout_free("deposit", 10_000_000, {0: [into_vault]}, before, after, [ix])
    assert check.ok, check.differences
    assert check.unverified and "layout is not public" in check.unverified[0]
    payout = (
        keys.index(programs.TOKEN_PROGRAM),
        (keys.index(str(VAULT)), keys.index(str(STRANGER_ATA))),
        b"\x03" + struct.pack("<Q", 1),
    )
    after[str(STRANGER_ATA)] = token(USDC, STRANGER, 1)
    refused = layout_free("deposit", 10_000_000, {0: [into_vault, payout]}, before, after, [ix])
    assert any("the strategy program pays" in d and "on a deposit" in d for d in refused.differences)
    # two of the program's writable accounts holding the user's key: a request touches at most one
    before[str(STRANGER)] = held_by_program(STRANGER, WALLET)
    after[str(STRANGER)] = held_by_program(STRANGER, WALLET)
    two = Instruction(ix.program_id, ix.data, [*ix.accounts, AccountMeta(STRANGER, False, True)])
    assert any(
        "hold your key" in d
        for d in layout_free("deposit", 10_000_000, {0: [into_vault]}, before, after, [two]).differences
    )


def closable_by(owner, close_authority, mint=USDC, amount=0, lamports=RENT):
    """A token account `owner` owns but `close_authority` may close (SPL Token keeps the close authority
    when the owner changes)."""
    return token(mint, owner, amount, lamports, close=close_authority)


def test_sol_into_a_token_account_someone_else_may_close_is_refused():
    trap = Keypair().pubkey()
    pay = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=trap, lamports=10**8))
    before, after = world(
        **{str(WALLET): system(10**9 - FEE - 10**8), str(trap): closable_by(WALLET, STRANGER, lamports=RENT + 10**8)}
    )
    before[str(trap)] = closable_by(WALLET, STRANGER)
    check = judge(DEPOSIT, [deposit_ix(), pay], before, after)
    assert any("System Transfer of 0.1 SOL" in d for d in check.differences), check.differences
    assert any("someone else may close it" in d for d in check.differences)
    assert any(d.startswith("your SOL: expected -0.000005 SOL") for d in check.differences)


def test_only_the_requests_token_account_may_be_opened():
    other_mint = Keypair().pubkey()
    opened = programs.create_associated_token_account(WALLET, WALLET, other_mint)
    check = judge(DEPOSIT, [deposit_ix(), opened], *world())
    assert any("a token this request does not move" in d for d in check.differences), check.differences


def test_no_token_account_of_the_user_gains_a_delegate_or_another_owner():
    approved = closable_by(WALLET, WALLET, amount=90_000_000)  # close authority the wallet: still the user's
    data = bytearray(approved.data)
    data[72:76] = struct.pack("<I", 1)
    data[76:108] = bytes(STRANGER)
    data[121:129] = struct.pack("<Q", 5)
    state = State(RENT, 165, parse_token(programs.TOKEN_PROGRAM, bytes(data)), programs.TOKEN_PROGRAM, bytes(data))
    check = judge(DEPOSIT, [deposit_ix()], *world(**{str(ATA): state}))
    assert any(d.startswith("Approve:") and "may spend 0.000005 USDC of your USDC" in d for d in check.differences), (
        check.differences
    )
    given_away = token(USDC, STRANGER, 90_000_000)
    assert any(
        "would belong to" in d for d in judge(DEPOSIT, [deposit_ix()], *world(**{str(ATA): given_away})).differences
    )


def test_a_sol_deposit_wraps_no_more_than_it_needs():
    wsol = programs.associated_token_address(WALLET, Pubkey.from_string(WSOL_MINT))
    mint = WSOL_MINT
    intent = Intent("deposit", str(WALLET), str(WALLET), mint, 10**9, S, strategy_program=PINNED)
    ix = sp.deposit(WALLET, WALLET, wsol, Pubkey.from_string(mint), S, 10**9)
    position_w = sp.position_address(WALLET, S, Pubkey.from_string(mint))
    wrap = lambda n: transfer(TransferParams(from_pubkey=WALLET, to_pubkey=wsol, lamports=n))  # noqa: E731

    def native(amount):
        return token(mint, WALLET, amount, lamports=RENT + amount, native=RENT)

    def pos(balance):
        return position(S, balance, balance, mint)

    before = {str(WALLET): system(5 * 10**9), str(wsol): native(0), str(position_w): pos(0)}
    exact = {str(WALLET): system(4 * 10**9 - FEE), str(wsol): native(0), str(position_w): pos(10**9)}
    assert judge(intent, [wrap(10**9), programs.token_sync_native(wsol), ix], before, exact).ok
    extra = {str(WALLET): system(3 * 10**9 - FEE), str(wsol): native(10**9), str(position_w): pos(10**9)}
    check = judge(intent, [wrap(2 * 10**9), programs.token_sync_native(wsol), ix], before, extra)
    assert any(d.startswith("your wrapped SOL: expected") for d in check.differences), check.differences


def test_signatures_a_precompile_verifies_are_charged_like_the_messages():
    from solders.instruction import Instruction

    from yieldcli.chain.tx.state import network_fee

    verify = Instruction(Pubkey.from_string("Ed25519SigVerify111111111111111111111111111"), bytes([3, 0]), [])
    message = MessageV0.try_compile(WALLET, [verify], [], Hash.default())
    assert network_fee(message) == 4 * 5_000  # the payer's signature and the three the precompile verifies


def test_a_close_named_by_its_account_closes_that_position_and_no_other():
    named = Intent(
        "close-account", str(WALLET), str(WALLET), USDC, None, None, strategy_program=PINNED, position=str(POSITION)
    )
    other = sp.close(WALLET, ATA, Pubkey.from_string(USDC), OTHER_POSITION)
    before, after = world(
        **{
            str(ATA): token(USDC, WALLET, 170_000_000),
            str(OTHER_POSITION): None,
            str(POSITION): position(S, 50_000_000, 60_000_000),
            str(WALLET): system(10**9 - FEE + POSITION_RENT),
            str(VAULT): token(USDC, sp.authority_address(), 430_000_000),
        }
    )
    check = judge(named, [other], before, after)
    assert any("names the position" in d for d in check.differences), check.differences


def test_a_deposit_stated_without_a_strategy_goes_only_into_a_position_the_user_holds():
    stated = Intent("deposit", str(WALLET), str(WALLET), USDC, 10_000_000, None, strategy_program=PINNED)
    assert judge(stated, [deposit_ix()], *world()).ok  # the position exists: the review names its key
    hidden = "a-strategy-nobody-named"
    place = sp.position_address(WALLET, hidden, Pubkey.from_string(USDC))
    before, after = world()
    after[str(POSITION)] = before[str(POSITION)]
    before[str(place)] = None
    after[str(place)] = State(POSITION_RENT, 128, None, PINNED, position(hidden, 10_000_000, 10_000_000).data)
    after[str(WALLET)] = system(10**9 - FEE - POSITION_RENT)
    check = judge(stated, [deposit_ix(hidden)], before, after)
    assert any("opens a position in a strategy you did not name" in d for d in check.differences), check.differences


def test_a_priority_fee_nobody_asked_for_is_refused_above_its_small_ceiling():
    from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price

    before, after = world()
    pricey = [set_compute_unit_limit(200_000), set_compute_unit_price(45_000_000), deposit_ix()]
    message = MessageV0.try_compile(WALLET, pricey, [], Hash.default())
    fee = 5_000 + 9_000_000
    after[str(WALLET)] = system(10**9 - fee)
    check = compare(DEPOSIT, before, after, fee=fee, resolved=resolve(message), priority_fee=9_000_000)
    assert any("a priority fee of 0.009 SOL that you did not ask for" in d for d in check.differences)
    asked = Intent(**{**DEPOSIT.__dict__, "max_priority_fee": None})  # the user set a priority fee or a fee cap
    assert compare(asked, before, after, fee=fee, resolved=resolve(message), priority_fee=9_000_000).ok


def test_a_close_to_a_recipient_named_pays_that_recipient_not_the_user():
    recipient = Keypair().pubkey()
    theirs = programs.associated_token_address(recipient, Pubkey.from_string(USDC))
    intent = Intent(
        "close-account",
        str(WALLET),
        str(WALLET),
        USDC,
        None,
        S,
        strategy_program=PINNED,
        funds_recipient=str(recipient),
    )
    before, after = world(
        **{
            str(POSITION): None,
            str(WALLET): system(10**9 - FEE + POSITION_RENT),
            str(VAULT): token(USDC, sp.authority_address(), 440_000_000),
        }
    )
    after[str(ATA)] = before[str(ATA)]
    before[str(theirs)] = token(USDC, recipient, 0)
    after[str(theirs)] = token(USDC, recipient, 60_000_000)
    assert judge(intent, [sp.close(WALLET, theirs, Pubkey.from_string(USDC), POSITION)], before, after).ok
    after[str(theirs)] = before[str(theirs)]
    after[str(ATA)] = token(USDC, WALLET, 160_000_000)  # paid to the user instead
    check = judge(intent, [sp.close(WALLET, ATA, Pubkey.from_string(USDC), POSITION)], before, after)
    assert any("not the recipient" in d for d in check.differences), check.differences
    # An account of the recipient's that someone else may close (found by a fresh attack) is not theirs alone.
    trap = Keypair().pubkey()
    after[str(ATA)] = before[str(ATA)]
    before[str(trap)] = token(USDC, recipient, 0, close=STRANGER)
    after[str(trap)] = token(USDC, recipient, 60_000_000, close=STRANGER)
    check = judge(intent, [sp.close(WALLET, trap, Pubkey.from_string(USDC), POSITION)], before, after)
    assert any("someone else may spend from or close" in d for d in check.differences), check.differences


def test_an_unwrap_leaves_no_wrapped_sol_account_open():
    intent = Intent("withdraw", str(WALLET), str(WALLET), WSOL_MINT, 10**9, S, unwrap=True, strategy_program=PINNED)
    wsol = programs.associated_token_address(WALLET, Pubkey.from_string(WSOL_MINT))
    place = sp.position_address(WALLET, S, Pubkey.from_string(WSOL_MINT))
    net = 10**9 - sp.withdrawal_fee(10**9)
    before = {
        str(WALLET): system(10**9),
        str(place): position(S, 5 * 10**9, 5 * 10**9, WSOL_MINT),
        str(wsol): None,
    }
    after = {
        str(WALLET): system(10**9 - FEE + net),
        str(place): position(S, 4 * 10**9, 4 * 10**9, WSOL_MINT),
        str(wsol): None,
    }
    ixs = [
        programs.create_associated_token_account(WALLET, WALLET, Pubkey.from_string(WSOL_MINT)),
        sp.withdraw(WALLET, wsol, Pubkey.from_string(WSOL_MINT), S, 10**9),
        programs.token_close_account(wsol, WALLET, WALLET),
    ]
    assert judge(intent, ixs, before, after).ok, judge(intent, ixs, before, after).differences
    # the account opened again after the unwrap: rent kept nobody asked for
    empty = token(WSOL_MINT, WALLET, 0)
    after[str(wsol)] = State(RENT, 165, empty.token, programs.TOKEN_PROGRAM, empty.data)
    after[str(WALLET)] = system(10**9 - FEE + net - RENT)
    again = judge(intent, [*ixs, ixs[0]], before, after)
    assert any("is left open: not unwrapped as asked" in d for d in again.differences), again.differences


def test_a_key_signing_besides_the_wallet_and_payer_may_not_be_used_or_changed():
    # A durable nonce's own authority signs only to advance the nonce: an instruction it signs is refused
    # (the instruction rule), and its account changing is refused (the effect over what the user holds).
    cold = Keypair().pubkey()
    drain = transfer(TransferParams(from_pubkey=cold, to_pubkey=STRANGER, lamports=2 * 10**9))
    before, after = world(**{str(cold): system(3 * 10**9), str(STRANGER): system(2 * 10**9)})
    before[str(cold)], before[str(STRANGER)] = system(5 * 10**9), None
    intent = Intent(
        "deposit",
        str(WALLET),
        str(WALLET),
        USDC,
        10_000_000,
        S,
        strategy_program=PINNED,
        signers=(str(WALLET), str(cold)),
    )
    check = judge(intent, [deposit_ix(), drain], before, after)
    assert any("signed by" in d and str(cold)[:4] in d for d in check.differences), check.differences
    assert any("key you sign with" in d and str(cold)[:4] in d and "changes" in d for d in check.differences)
    # The same transaction and effect, with that key not one we sign with: it is not the user's to guard.
    assert judge(DEPOSIT, [deposit_ix(), drain], before, after).ok


WSOL_ATA = programs.associated_token_address(WALLET, Pubkey.from_string(WSOL_MINT))


def wsol(amount, unwrapped=0, **more):
    """The wallet's wrapped-SOL account: `amount` wrapped, `unwrapped` lamports sent in without SyncNative."""
    return token(WSOL_MINT, WALLET, amount, lamports=RENT + amount + unwrapped, native=RENT, **more)


def test_sol_sent_into_the_wrapped_sol_account_without_wrapping_is_refused():
    # Found by a fresh attack: on a USDC deposit, SOL moved from the wallet into its own wrapped-SOL
    # account with no SyncNative was the same SOL total and the same token amount, so it passed; a
    # delegate of that account could then sync it and take it.
    wrap = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=WSOL_ATA, lamports=3 * 10**9))
    before, after = world(**{str(WALLET): system(10**9 - FEE)})
    before[str(WALLET)] = system(4 * 10**9)
    before[str(WSOL_ATA)] = wsol(10**6, delegate=STRANGER, delegated=100 * 10**9)
    after[str(WSOL_ATA)] = wsol(10**6, unwrapped=3 * 10**9, delegate=STRANGER, delegated=100 * 10**9)
    check = judge(DEPOSIT, [deposit_ix(), wrap], before, after)
    # The instruction rule: a transfer into wrapped SOL only when the request moves SOL.
    assert any("System Transfer of 3 SOL from your wallet" in d for d in check.differences), check.differences
    # The effect: SOL left in the account unwrapped.
    assert any("sent in without being wrapped" in d and "3 SOL" in d for d in check.differences)


def test_a_sponsoring_payer_gives_no_more_than_the_fee_and_rent():
    # Found by a fresh attack: the payer's SOL and the wallet's were one sum when we sign for the payer,
    # so the sponsor's SOL could move to the wallet unseen.
    sponsor = Keypair().pubkey()
    intent = Intent(
        "deposit", str(WALLET), str(sponsor), USDC, 10_000_000, S, strategy_program=PINNED, signers=(str(sponsor),)
    )
    before, after = world(**{str(WALLET): system(10**9 + 2 * 10**9)})
    before[str(sponsor)], after[str(sponsor)] = system(5 * 10**9), system(3 * 10**9 - FEE)
    gift = transfer(TransferParams(from_pubkey=sponsor, to_pubkey=WALLET, lamports=2 * 10**9))
    message = MessageV0.try_compile(sponsor, [deposit_ix(), gift], [], Hash.default())
    check = compare(intent, before, after, fee=FEE, resolved=resolve(message))
    assert any(d.startswith(f"the payer {str(sponsor)[:4]}") and "more than the fee" in d for d in check.differences), (
        check.differences
    )
    # Paying the fee only is what a sponsor does.
    honest_before, honest_after = world(**{str(WALLET): system(10**9)})
    honest_before[str(sponsor)], honest_after[str(sponsor)] = system(5 * 10**9), system(5 * 10**9 - FEE)
    message = MessageV0.try_compile(sponsor, [deposit_ix()], [], Hash.default())
    assert compare(intent, honest_before, honest_after, fee=FEE, resolved=resolve(message)).ok


def test_a_precompile_is_refused_by_name_and_its_signatures_count_in_the_unasked_fee():
    from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price

    from tests.guard.precompiles import ed25519_verify

    before, after = world()
    # 60,000 lamports of priority and 10 precompile signatures (50,000): each under the 0.0001 SOL
    # accepted unasked, together over it.
    ixs = [set_compute_unit_limit(200_000), set_compute_unit_price(300_000), deposit_ix(), ed25519_verify(10)]
    message = MessageV0.try_compile(WALLET, ixs, [], Hash.default())
    fee = 5_000 + 60_000 + 50_000
    after[str(WALLET)] = system(10**9 - fee)
    check = compare(
        DEPOSIT, before, after, fee=fee, resolved=resolve(message), priority_fee=60_000, precompile_fee=50_000
    )
    verdict = check.instructions[3]
    assert (verdict.kind, verdict.ok) == ("precompile", False)
    assert verdict.reason == (
        "instruction 4: a signature-verification precompile (Ed25519) declaring 10 signatures, each charged "
        "as a signature's fee (0.00005 SOL in all); this request needs none"
    )
    assert any(
        "a fee of 0.00011 SOL beyond the message's signatures (priority 0.00006 SOL, precompile signatures "
        "0.00005 SOL) that you did not ask for" in d
        for d in check.differences
    ), check.differences
    assert check.observed["fee_detail"] == {
        "signatures": 5_000,
        "precompile_signatures": 50_000,
        "priority": 60_000,
        "total": fee,
    }
    assert "fee 0.000115 SOL (priority 0.00006, precompile signatures 0.00005)" in check.summary
    # The priority alone is within the allowance: only the precompile's own verdict stays.
    alone = compare(DEPOSIT, before, after, fee=fee, resolved=resolve(message), priority_fee=60_000)
    assert not any("did not ask for" in d for d in alone.differences), alone.differences
