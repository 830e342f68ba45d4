"""The sandbox strategy program with a Token-2022 mint, on LiteSVM (which ships Token-2022): vaults and
payouts of the mint's own program, and every account of another token program refused."""

from __future__ import annotations

from solders.account import Account
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from tests.sandbox.program.test_strategy import STRATEGY, YIELD_KEY, Chain, custom
from tests.token_accounts import token_account_data
from yieldcli.solana import programs, token_layout
from yieldcli.solana import strategy_program as sp

T22 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
SPL = Pubkey.from_string(programs.TOKEN_PROGRAM)


class Token2022Chain(Chain):
    """The program's chain with one more mint, on Token-2022 (base + a metadata pointer), and its vault."""

    def __init__(self) -> None:
        super().__init__()
        self.t22 = Keypair().pubkey()
        pointer = (token_layout.METADATA_POINTER, bytes(YIELD_KEY.pubkey()) + bytes(self.t22))
        data = token_layout.mint_data(6, authority=YIELD_KEY.pubkey(), extra=[pointer])
        self.svm.set_account(self.t22, Account(10**9, data, T22, False, 0))
        self.ok([sp.init_vault(YIELD_KEY.pubkey(), self.t22, token_program=T22)], [YIELD_KEY])

    def fund(self, owner: Pubkey, mint: Pubkey, amount: int) -> Pubkey:
        program = self.svm.get_account(mint).owner
        ata = programs.associated_token_address(owner, mint, program)
        create = programs.create_associated_token_account(YIELD_KEY.pubkey(), owner, mint, token_program=program)
        self.ok(
            [create, programs.token_mint_to(mint, ata, YIELD_KEY.pubkey(), amount, token_program=program)], [YIELD_KEY]
        )
        return ata

    def t22_wallet(self, tokens: int = 10_000_000) -> tuple[Keypair, Pubkey]:
        kp = Keypair()
        self.svm.airdrop(kp.pubkey(), 10**10)
        return kp, self.fund(kp.pubkey(), self.t22, tokens)

    def spl_account_of(self, owner: Pubkey, mint: Pubkey, amount: int) -> Pubkey:
        """An account of SPL Token that says it holds `mint` (a Token-2022 one): never a token account of it."""
        address = Keypair().pubkey()
        self.svm.set_account(address, Account(10**9, token_account_data(mint, owner, amount), SPL, False, 0))
        return address


def test_a_token_2022_vault_takes_deposits_and_pays_withdrawals_and_closes():
    chain = Token2022Chain()
    vault = chain.svm.get_account(sp.vault_address(chain.t22))
    assert vault.owner == T22  # the vault is the mint's program's account
    user, ata = chain.t22_wallet()
    assert chain.svm.get_account(ata).owner == T22 and len(chain.svm.get_account(ata).data) == 170
    key = user.pubkey()
    position = sp.position_address(key, STRATEGY, chain.t22)
    units = {
        "deposit (opens)": chain.ok(
            [sp.deposit(key, key, ata, chain.t22, STRATEGY, 4_000_000, token_program=T22)], [user]
        ),
        "withdraw": chain.ok([sp.withdraw(key, ata, chain.t22, STRATEGY, 1_000_000, token_program=T22)], [user]),
    }
    assert chain.tokens(ata) == 6_000_000 + 1_000_000 - sp.withdrawal_fee(1_000_000)
    assert chain.position(position).balance == 3_000_000
    units["close"] = chain.ok([sp.close(key, ata, chain.t22, position, token_program=T22)], [user])
    assert chain.position(position) is None and chain.tokens(ata) == 10_000_000 - sp.withdrawal_fee(1_000_000)
    print(units)


def test_accounts_of_another_token_program_are_refused():
    chain = Token2022Chain()
    user, ata = chain.t22_wallet()
    key = user.pubkey()
    # The token program account must be the mint's own.
    wrong_program = sp.deposit(key, key, ata, chain.t22, STRATEGY, 1_000_000, token_program=SPL)
    assert custom(12) in chain.refused([wrong_program], [user])
    # An SPL Token account naming the Token-2022 mint is not an account of that mint.
    forged = chain.spl_account_of(key, chain.t22, 5_000_000)
    assert custom(3) in chain.refused([sp.deposit(key, key, forged, chain.t22, STRATEGY, 1, token_program=T22)], [user])
    chain.ok([sp.deposit(key, key, ata, chain.t22, STRATEGY, 2_000_000, token_program=T22)], [user])
    assert custom(3) in chain.refused([sp.withdraw(key, forged, chain.t22, STRATEGY, 1, token_program=T22)], [user])
    position = sp.position_address(key, STRATEGY, chain.t22)
    assert custom(3) in chain.refused([sp.close(key, forged, chain.t22, position, token_program=T22)], [user])
    # An SPL Token mint's deposit naming Token-2022: refused the same way.
    spl_user, spl_ata = chain.wallet()
    assert custom(12) in chain.refused(
        [sp.deposit(spl_user.pubkey(), spl_user.pubkey(), spl_ata, chain.mint, STRATEGY, 1, token_program=T22)],
        [spl_user],
    )
    assert chain.tokens(ata) == 8_000_000 and chain.position(position).balance == 2_000_000
