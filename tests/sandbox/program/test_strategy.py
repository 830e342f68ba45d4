"""The sandbox strategy program on LiteSVM: the flows, and every refusal shown by hostile instructions
sent straight to the program (someone else's position, another vault, an overdraw, a missing
signature, wrong owners, wrong PDAs, a forged yield)."""

from __future__ import annotations

import hashlib
import struct

import pytest
from solders.account import Account
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.token.state import Mint
from solders.transaction import VersionedTransaction

from yieldcli.sandbox.program_elf import program_elf
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp

STRATEGY = "sandbox-0000-4000-8000-000000000001"
OTHER_STRATEGY = "sandbox-0000-4000-8000-000000000002"
TOKEN = Pubkey.from_string(programs.TOKEN_PROGRAM)
YIELD_KEY = Keypair.from_seed(hashlib.sha256(b"yield sandbox vault authority").digest())


class Chain:
    def __init__(self) -> None:
        self.svm = LiteSVM()
        self.svm.add_program(sp.PROGRAM, program_elf())
        self.svm.airdrop(YIELD_KEY.pubkey(), 10**11)
        self.mint = self.new_mint(6)
        self.other_mint = self.new_mint(6)
        for mint in (self.mint, self.other_mint):
            self.ok([sp.init_vault(YIELD_KEY.pubkey(), mint)], [YIELD_KEY])
        self.yield_source = self.fund(YIELD_KEY.pubkey(), self.mint, 10**9)

    def new_mint(self, decimals: int) -> Pubkey:
        mint = Keypair().pubkey()
        data = bytes(
            Mint(
                mint_authority=YIELD_KEY.pubkey(),
                supply=0,
                decimals=decimals,
                is_initialized=True,
                freeze_authority=None,
            )
        )
        self.svm.set_account(mint, Account(10**9, data, TOKEN, False, 0))
        return mint

    def fund(self, owner: Pubkey, mint: Pubkey, amount: int) -> Pubkey:
        ata = programs.associated_token_address(owner, mint)
        self.ok(
            [
                programs.create_associated_token_account(YIELD_KEY.pubkey(), owner, mint),
                programs.token_mint_to(mint, ata, YIELD_KEY.pubkey(), amount),
            ],
            [YIELD_KEY],
        )
        return ata

    def wallet(self, tokens: int = 10_000_000) -> tuple[Keypair, Pubkey]:
        kp = Keypair()
        self.svm.airdrop(kp.pubkey(), 10**10)
        return kp, self.fund(kp.pubkey(), self.mint, tokens)

    def send(self, ixs: list[Instruction], signers: list[Keypair]):
        msg = MessageV0.try_compile(signers[0].pubkey(), ixs, [], self.svm.latest_blockhash())
        result = self.svm.send_transaction(VersionedTransaction(msg, signers))
        self.svm.expire_blockhash()
        return result

    def ok(self, ixs: list[Instruction], signers: list[Keypair]) -> int:
        result = self.send(ixs, signers)
        assert not hasattr(result, "err"), (result.err(), result.meta().logs())
        return result.compute_units_consumed()

    def refused(self, ixs: list[Instruction], signers: list[Keypair]) -> str:
        result = self.send(ixs, signers)
        assert hasattr(result, "err"), "the program accepted a hostile instruction"
        return str(result.err())

    def position(self, address: Pubkey) -> sp.Position | None:
        account = self.svm.get_account(address)
        return None if account is None else sp.parse_position(str(account.owner), bytes(account.data))

    def tokens(self, account: Pubkey) -> int:
        data = self.svm.get_account(account)
        return 0 if data is None else struct.unpack_from("<Q", bytes(data.data), 64)[0]


def custom(code: int) -> str:
    return f"Custom({code})"


@pytest.fixture
def chain() -> Chain:
    return Chain()


def test_deposit_withdraw_credit_and_close_move_exactly_what_they_say(chain):
    user, ata = chain.wallet(10_000_000)
    vault = sp.vault_address(chain.mint)
    chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 4_000_000)], [user])
    position = sp.position_address(user.pubkey(), STRATEGY, chain.mint)
    found = chain.position(position)
    assert found is not None and (found.deposited, found.balance, found.user) == (
        4_000_000,
        4_000_000,
        str(user.pubkey()),
    )
    assert found.strategy_key == sp.strategy_key(STRATEGY) and chain.tokens(vault) == 4_000_000
    chain.ok([sp.credit_yield(chain.yield_source, chain.mint, position, 100_000)], [YIELD_KEY])
    assert chain.position(position).balance == 4_100_000
    # 1_000_000 gross: the user gets 999_000, the 1_000 fee stays in the vault; yield goes first.
    chain.ok([sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user])
    assert chain.tokens(ata) == 6_999_000 and chain.position(position).balance == 3_100_000
    assert chain.position(position).deposited == 3_100_000
    # exclude fees: the user gets exactly 500_000, the position gives 500_500.
    chain.ok([sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 500_000, exclude_fees=True)], [user])
    assert chain.tokens(ata) == 7_499_000 and chain.position(position).balance == 2_599_500
    rent = chain.svm.get_balance(position)
    before = chain.svm.get_balance(user.pubkey())
    chain.ok([sp.close(user.pubkey(), ata, chain.mint, position)], [user])
    assert chain.svm.get_account(position) is None and chain.tokens(ata) == 10_098_500
    assert chain.svm.get_balance(user.pubkey()) == before + rent - 5000
    assert chain.tokens(vault) == 1_500  # the fees


def test_withdraw_all_takes_the_whole_position_and_another_payer_pays_the_rent(chain):
    user, ata = chain.wallet(3_000_000)
    payer = Keypair()
    chain.svm.airdrop(payer.pubkey(), 10**10)
    user_sol = chain.svm.get_balance(user.pubkey())
    chain.ok([sp.deposit(user.pubkey(), payer.pubkey(), ata, chain.mint, STRATEGY, 3_000_000)], [payer, user])
    assert chain.svm.get_balance(user.pubkey()) == user_sol  # the payer paid fee and rent
    chain.ok([sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, sp.WITHDRAW_ALL)], [user])
    position = chain.position(sp.position_address(user.pubkey(), STRATEGY, chain.mint))
    assert position is not None and position.balance == 0 and chain.tokens(ata) == 3_000_000 - 3_000


def test_someone_elses_position_cannot_be_withdrawn_closed_or_paid_to_a_stranger(chain):
    victim, victim_ata = chain.wallet()
    chain.ok([sp.deposit(victim.pubkey(), victim.pubkey(), victim_ata, chain.mint, STRATEGY, 5_000_000)], [victim])
    thief, thief_ata = chain.wallet(0)
    victim_position = sp.position_address(victim.pubkey(), STRATEGY, chain.mint)
    steal = sp.withdraw(thief.pubkey(), thief_ata, chain.mint, STRATEGY, 1_000_000)
    steal.accounts = [*steal.accounts[:5], AccountMeta(victim_position, False, True), steal.accounts[6]]
    assert custom(6) in chain.refused([steal], [thief])  # NotPositionOwner
    assert custom(6) in chain.refused([sp.close(thief.pubkey(), thief_ata, chain.mint, victim_position)], [thief])
    # The victim's own withdrawal may only pay the victim's token account.
    to_thief = sp.withdraw(victim.pubkey(), thief_ata, chain.mint, STRATEGY, 1_000_000)
    assert custom(10) in chain.refused([to_thief], [victim])  # WrongDestination
    # A close paying what is left into the vault itself: the position would vanish, its tokens kept.
    into_vault = sp.close(victim.pubkey(), sp.vault_address(chain.mint), chain.mint, victim_position)
    assert custom(10) in chain.refused([into_vault], [victim])
    # A deposit naming another strategy's key against an existing position.
    wrong_strategy = sp.deposit(victim.pubkey(), victim.pubkey(), victim_ata, chain.mint, OTHER_STRATEGY, 1)
    wrong_strategy.accounts = [
        *wrong_strategy.accounts[:6],
        AccountMeta(victim_position, False, True),
        *wrong_strategy.accounts[7:],
    ]
    assert custom(6) in chain.refused([wrong_strategy], [victim])
    assert chain.position(victim_position).balance == 5_000_000


def test_a_missing_signature_is_refused(chain):
    user, ata = chain.wallet()
    chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user])
    relayer = Keypair()
    chain.svm.airdrop(relayer.pubkey(), 10**10)
    for ix in (
        sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000),
        sp.deposit(user.pubkey(), relayer.pubkey(), ata, chain.mint, STRATEGY, 1_000),
        sp.close(user.pubkey(), ata, chain.mint, sp.position_address(user.pubkey(), STRATEGY, chain.mint)),
    ):
        ix.accounts = [AccountMeta(user.pubkey(), False, ix.accounts[0].is_writable), *ix.accounts[1:]]
        assert custom(2) in chain.refused([ix], [relayer])  # MissingSignature


def test_an_overdraw_and_an_overflow_are_refused(chain):
    user, ata = chain.wallet()
    chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user])
    assert custom(7) in chain.refused([sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000_001)], [user])
    # exclude_fees: 1_000_000 to the user needs 1_001_000 from the position.
    assert custom(7) in chain.refused(
        [sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000, exclude_fees=True)], [user]
    )
    assert custom(1) in chain.refused([sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 0)], [user])
    # A position worth nearly 2**64 (set directly: no mint has that supply here): one more unit overflows.
    position = sp.position_address(user.pubkey(), STRATEGY, chain.mint)
    account = chain.svm.get_account(position)
    data = bytearray(bytes(account.data))
    struct.pack_into("<Q", data, 112, 2**64 - 1)
    chain.svm.set_account(position, Account(account.lamports, bytes(data), sp.PROGRAM, False, 0))
    assert custom(8) in chain.refused([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1)], [user])
    assert custom(8) in chain.refused([sp.credit_yield(chain.yield_source, chain.mint, position, 1)], [YIELD_KEY])


def test_another_vault_is_refused(chain):
    user, ata = chain.wallet()
    chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user])
    # The vault of another mint.
    other_vault = sp.vault_address(chain.other_mint)
    ix = sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000)
    ix.accounts = [*ix.accounts[:3], AccountMeta(other_vault, False, True), *ix.accounts[4:]]
    assert custom(5) in chain.refused([ix], [user])  # WrongVault
    # A token account of the right mint owned by the authority, but not the vault PDA.
    impostor = Keypair()
    chain.ok([*_token_account(chain, impostor.pubkey(), chain.mint, sp.authority_address())], [YIELD_KEY, impostor])
    for build in (
        lambda: sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000),
        lambda: sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000),
    ):
        ix = build()
        index = [a.pubkey for a in ix.accounts].index(sp.vault_address(chain.mint))
        ix.accounts = [*ix.accounts[:index], AccountMeta(impostor.pubkey(), False, True), *ix.accounts[index + 1 :]]
        assert custom(4) in chain.refused([ix], [user])  # WrongPda
    # A token account owned by the user posing as the vault of a withdrawal.
    ix = sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000)
    ix.accounts = [*ix.accounts[:3], AccountMeta(ata, False, True), *ix.accounts[4:]]
    assert custom(5) in chain.refused([ix], [user])


def _token_account(chain: Chain, address: Pubkey, mint: Pubkey, owner: Pubkey) -> list[Instruction]:
    from solders.system_program import CreateAccountParams, create_account

    rent = chain.svm.minimum_balance_for_rent_exemption(programs.TOKEN_ACCOUNT_SIZE)
    return [
        create_account(
            CreateAccountParams(
                from_pubkey=YIELD_KEY.pubkey(),
                to_pubkey=address,
                lamports=rent,
                space=programs.TOKEN_ACCOUNT_SIZE,
                owner=TOKEN,
            )
        ),
        Instruction(
            TOKEN, bytes([18]) + bytes(owner), [AccountMeta(address, False, True), AccountMeta(mint, False, False)]
        ),
    ]


def test_wrong_owners_and_wrong_pdas_are_refused(chain):
    user, ata = chain.wallet()
    chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user])
    position = sp.position_address(user.pubkey(), STRATEGY, chain.mint)
    real = chain.svm.get_account(position)
    # A forged position with the user's layout, owned by another program.
    forged = Keypair().pubkey()
    chain.svm.set_account(forged, Account(real.lamports, bytes(real.data), TOKEN, False, 0))
    assert custom(3) in chain.refused([sp.close(user.pubkey(), ata, chain.mint, forged)], [user])  # WrongAccountOwner
    # The same bytes owned by the program at an address that is not the PDA they describe.
    chain.svm.set_account(forged, Account(real.lamports, bytes(real.data), sp.PROGRAM, False, 0))
    assert custom(4) in chain.refused([sp.close(user.pubkey(), ata, chain.mint, forged)], [user])  # WrongPda
    # A fake authority (a key the thief controls) in place of the PDA.
    ix = sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000)
    ix.accounts = [*ix.accounts[:4], AccountMeta(user.pubkey(), False, False), *ix.accounts[5:]]
    assert custom(4) in chain.refused([ix], [user])
    # A fake mint: the mint's bytes owned by another program.
    fake_mint = Keypair().pubkey()
    mint_account = chain.svm.get_account(chain.mint)
    chain.svm.set_account(fake_mint, Account(mint_account.lamports, bytes(mint_account.data), sp.PROGRAM, False, 0))
    ix = sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000)
    ix.accounts = [*ix.accounts[:3], AccountMeta(fake_mint, False, False), *ix.accounts[4:]]
    assert custom(3) in chain.refused([ix], [user])
    # A position opened at an address that is not its PDA.
    stranger, stranger_ata = chain.wallet()
    ix = sp.deposit(stranger.pubkey(), stranger.pubkey(), stranger_ata, chain.mint, STRATEGY, 1_000)
    ix.accounts = [*ix.accounts[:6], AccountMeta(Keypair().pubkey(), False, True), *ix.accounts[7:]]
    assert custom(4) in chain.refused([ix], [stranger])
    # A token program that is not the Token program.
    ix = sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000)
    ix.accounts = [*ix.accounts[:6], AccountMeta(Pubkey.from_string(programs.SYSTEM_PROGRAM), False, False)]
    assert custom(12) in chain.refused([ix], [user])
    assert chain.position(position).balance == 1_000_000


def test_only_the_yield_authority_credits_yield_and_a_vault_opens_once(chain):
    user, ata = chain.wallet()
    chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user])
    position = sp.position_address(user.pubkey(), STRATEGY, chain.mint)
    ix = sp.credit_yield(ata, chain.mint, position, 1)
    ix.accounts = [AccountMeta(user.pubkey(), True, False), *ix.accounts[1:]]
    assert custom(11) in chain.refused([ix], [user])  # NotYieldAuthority: a self-credited "yield"
    assert custom(13) in chain.refused([sp.init_vault(YIELD_KEY.pubkey(), chain.mint)], [YIELD_KEY])
    assert custom(1) in chain.refused([Instruction(sp.PROGRAM, bytes([9]), [])], [user])


POSITION_RENT = 1_781_760  # rent exemption of the 128-byte position
TOKEN_ACCOUNT_RENT = 2_039_280
EMPTY_ACCOUNT_RENT = 890_880  # the least a transfer may leave at an address with no data


@pytest.mark.parametrize("donated", [EMPTY_ACCOUNT_RENT, POSITION_RENT, POSITION_RENT + 5])
def test_lamports_sent_to_a_position_before_it_opens_do_not_block_the_first_deposit(chain, donated):
    """Anyone may send lamports to the position's address first; CreateAccount alone would then fail."""
    user, ata = chain.wallet()
    griefer = Keypair()
    chain.svm.airdrop(griefer.pubkey(), 10**10)
    position = sp.position_address(user.pubkey(), STRATEGY, chain.mint)
    chain.ok([transfer(TransferParams(from_pubkey=griefer.pubkey(), to_pubkey=position, lamports=donated))], [griefer])
    user_sol = chain.svm.get_balance(user.pubkey())
    chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user])
    assert chain.svm.minimum_balance_for_rent_exemption(sp.POSITION_SIZE) == POSITION_RENT
    found = chain.position(position)
    assert found is not None and (found.deposited, found.balance) == (1_000_000, 1_000_000)
    assert chain.svm.get_balance(position) == max(donated, POSITION_RENT)
    # The user pays only what rent exemption still lacked (and the fee).
    assert user_sol - chain.svm.get_balance(user.pubkey()) == 5000 + max(0, POSITION_RENT - donated)
    chain.ok([sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, sp.WITHDRAW_ALL)], [user])
    chain.ok([sp.close(user.pubkey(), ata, chain.mint, position)], [user])
    assert chain.svm.get_account(position) is None


def test_a_vault_address_sent_lamports_first_still_opens(chain):
    mint = chain.new_mint(6)
    vault = sp.vault_address(mint)
    chain.ok(
        [transfer(TransferParams(from_pubkey=YIELD_KEY.pubkey(), to_pubkey=vault, lamports=EMPTY_ACCOUNT_RENT))],
        [YIELD_KEY],
    )
    chain.ok([sp.init_vault(YIELD_KEY.pubkey(), mint)], [YIELD_KEY])
    assert chain.svm.get_account(vault).owner == TOKEN and chain.svm.get_balance(vault) == TOKEN_ACCOUNT_RENT
    assert custom(13) in chain.refused([sp.init_vault(YIELD_KEY.pubkey(), mint)], [YIELD_KEY])  # once only


def test_compute_units_per_instruction(chain):
    """Measured, not asserted against a budget: the sandbox sets a 200k limit; each stays far below."""
    user, ata = chain.wallet()
    position = sp.position_address(user.pubkey(), STRATEGY, chain.mint)
    units = {
        "deposit (opens the position)": chain.ok(
            [sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 2_000_000)], [user]
        ),
        "deposit": chain.ok([sp.deposit(user.pubkey(), user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user]),
        "creditYield": chain.ok([sp.credit_yield(chain.yield_source, chain.mint, position, 1_000)], [YIELD_KEY]),
        "withdraw": chain.ok([sp.withdraw(user.pubkey(), ata, chain.mint, STRATEGY, 1_000_000)], [user]),
        "close": chain.ok([sp.close(user.pubkey(), ata, chain.mint, position)], [user]),
    }
    print(units)
    assert all(0 < u < 50_000 for u in units.values())
