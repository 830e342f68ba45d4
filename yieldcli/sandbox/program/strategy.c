/* The sandbox strategy program: custody of deposits in PDA-owned vaults, one position account per
 * (user, strategy, mint). The interface (accounts, data, errors) is in README.md beside this file.
 *
 * Built by build.py with upstream clang for SBPFv0. Upstream BPF allows 512-byte stack frames and
 * 5 register arguments, so accounts are kept as pointers into the serialized input (8 bytes each)
 * and a SolAccountInfo is built only for the few accounts a CPI needs, in its own small frame. */
#include <solana_sdk.h>

#define ERR_INVALID_INSTRUCTION 1
#define ERR_MISSING_SIGNATURE 2
#define ERR_WRONG_ACCOUNT_OWNER 3
#define ERR_WRONG_PDA 4
#define ERR_WRONG_VAULT 5
#define ERR_NOT_POSITION_OWNER 6
#define ERR_OVERDRAW 7
#define ERR_OVERFLOW 8
#define ERR_WRONG_MINT 9
#define ERR_WRONG_DESTINATION 10
#define ERR_NOT_YIELD_AUTHORITY 11
#define ERR_WRONG_PROGRAM 12
#define ERR_ACCOUNT_STATE 13

#define MAX_ACCOUNTS 9
#define AUTHORITY_BUMP 253 /* find_program_address(["authority"], program id): the id is fixed */
#define POSITION_SIZE 128
#define TOKEN_ACCOUNT_SIZE 165
#define MINT_SIZE 82
/* Token-2022 state past the base layout: an account-type byte at offset 165 (after the padding that
 * makes a mint as long as a token account), then the extensions. */
#define ACCOUNT_TYPE_OFFSET 165
#define ACCOUNT_TYPE_MINT 1
#define ACCOUNT_TYPE_ACCOUNT 2
/* Rent-exempt minimums ((size + 128) * 3480 * 2), as on mainnet and in LiteSVM. */
#define POSITION_RENT 1781760
#define TOKEN_ACCOUNT_RENT 2039280

/* Position layout */
#define P_USER 8
#define P_STRATEGY 40
#define P_MINT 72
#define P_DEPOSITED 104
#define P_BALANCE 112
#define P_BUMP 120
#define P_VAULT_BUMP 121

static const uint8_t TOKEN_PROGRAM[32] = {6, 221, 246, 225, 215, 101, 161, 147, 217, 203, 225, 70, 206, 235, 121, 172,
                                          28, 180, 133, 237, 95, 91, 55, 145, 58, 140, 245, 133, 126, 255, 0, 169};
static const uint8_t TOKEN_2022_PROGRAM[32] = {6, 221, 246, 225, 238, 117, 143, 222, 24, 66, 93, 188, 228, 108, 205, 218,
                                               182, 26, 252, 77, 131, 185, 13, 39, 254, 189, 249, 40, 216, 161, 139, 252};
static const uint8_t SYSTEM_PROGRAM[32] = {0};
/* The sandbox's yield authority: the only key whose yield the program credits to positions. */
static const uint8_t YIELD_AUTHORITY[32] = {216, 242, 204, 182, 32, 62, 27, 30, 245, 81, 85, 14, 73, 27, 78, 202,
                                            253, 45, 131, 186, 206, 17, 56, 198, 166, 31, 199, 10, 115, 191, 193, 226};
static const uint8_t MAGIC[8] = {'Y', 'S', 'P', 'O', 'S', 'I', 'T', '1'};

/* An account: a pointer to its serialized form (dup marker, flags, key, owner, lamports, data). */
typedef uint8_t *Acc;

typedef struct {
  Acc acc[MAX_ACCOUNTS];
  uint64_t count;
  const uint8_t *data;
  uint64_t data_len;
  const SolPubkey *program_id;
} Ctx;

static bool is_signer(Acc a) { return a[1] != 0; }
static bool is_writable(Acc a) { return a[2] != 0; }
static SolPubkey *key_of(Acc a) { return (SolPubkey *)(a + 8); }
static const uint8_t *owner_of(Acc a) { return a + 40; }
static uint64_t *lamports_of(Acc a) { return (uint64_t *)(a + 72); }
static uint64_t data_len_of(Acc a) { return *(uint64_t *)(a + 80); }
static uint8_t *data_of(Acc a) { return a + 88; }

static bool same(const uint8_t *a, const uint8_t *b) {
  for (int i = 0; i < 32; i++) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

static uint64_t read_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static void write_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    p[i] = (uint8_t)v;
    v >>= 8;
  }
}

static void write_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) {
    p[i] = (uint8_t)v;
    v >>= 8;
  }
}

static uint64_t fail(uint64_t code) {
  sol_log_64(0, 0, 0, 0, code);
  return code;
}

static bool parse(uint8_t *in, Ctx *c) {
  uint64_t n = *(uint64_t *)in;
  in += 8;
  c->count = n;
  for (uint64_t i = 0; i < n; i++) {
    uint8_t dup = in[0];
    Acc at = in;
    if (dup == 0xff) {
      uint64_t len = *(uint64_t *)(in + 80);
      in += 88 + len + MAX_PERMITTED_DATA_INCREASE;
      in = (uint8_t *)(((uint64_t)in + 7) & ~(uint64_t)7);
      in += 8; /* rent epoch */
    } else {
      /* A repeated account: the same serialized account as the earlier one it names. */
      in += 8;
      if (i >= MAX_ACCOUNTS) continue;
      if (dup >= i) return false;
      at = c->acc[dup];
    }
    if (i < MAX_ACCOUNTS) c->acc[i] = at;
  }
  c->data_len = *(uint64_t *)in;
  in += 8;
  c->data = in;
  c->program_id = (const SolPubkey *)(in + c->data_len);
  return true;
}

/* ---- cross-program invocations -------------------------------------------------------------- */

static void info_of(Acc a, SolAccountInfo *o) {
  o->key = key_of(a);
  o->lamports = lamports_of(a);
  o->data_len = data_len_of(a);
  o->data = data_of(a);
  o->owner = (SolPubkey *)owner_of(a);
  o->rent_epoch = 0;
  o->is_signer = is_signer(a);
  o->is_writable = is_writable(a);
  o->executable = a[3] != 0;
}

typedef struct {
  const uint8_t *program;
  Acc acc[4];
  bool writable[4];
  bool signer[4];
  uint64_t count;
  uint8_t *data;
  uint64_t data_len;
  const SolSignerSeed *seeds; /* one PDA signer, or NULL */
  uint64_t seeds_len;
} Call;

static uint64_t __attribute__((noinline)) invoke(const Call *call) {
  SolAccountInfo infos[4];
  SolAccountMeta metas[4];
  for (uint64_t i = 0; i < call->count; i++) {
    info_of(call->acc[i], &infos[i]);
    metas[i].pubkey = key_of(call->acc[i]);
    metas[i].is_writable = call->writable[i];
    metas[i].is_signer = call->signer[i];
  }
  SolInstruction ix;
  ix.program_id = (SolPubkey *)call->program;
  ix.accounts = metas;
  ix.account_len = call->count;
  ix.data = call->data;
  ix.data_len = call->data_len;
  SolSignerSeeds signer;
  signer.addr = call->seeds;
  signer.len = call->seeds_len;
  return sol_invoke_signed_c(&ix, infos, (int)call->count, &signer, call->seeds != NULL ? 1 : 0);
}

/* A call to `program` with `data`, no accounts yet and no PDA signer. */
static void new_call(Call *call, const uint8_t *program, uint8_t *data, uint64_t data_len) {
  call->program = program;
  call->count = 0;
  call->data = data;
  call->data_len = data_len;
  call->seeds = NULL;
  call->seeds_len = 0;
}

static void add_account(Call *call, Acc a, bool writable, bool signer) {
  call->acc[call->count] = a;
  call->writable[call->count] = writable;
  call->signer[call->count] = signer;
  call->count++;
}

/* A TransferChecked: signed by `auth` itself, or (program_signs) by the program for the authority PDA.
 * Sent to the program that owns the mint (SPL Token or Token-2022): TransferChecked is the one transfer
 * Token-2022 accepts for every mint. */
typedef struct {
  Acc from, mint, to, auth;
  uint8_t amount_decimals[9];
  bool program_signs;
} Transfer;

static uint64_t __attribute__((noinline)) transfer_checked(Transfer *t, uint64_t amount, uint8_t decimals) {
  write_u64(t->amount_decimals, amount);
  t->amount_decimals[8] = decimals;
  uint8_t data[10];
  data[0] = 12;
  for (int i = 0; i < 9; i++) data[1 + i] = t->amount_decimals[i];
  uint8_t bump = AUTHORITY_BUMP;
  SolSignerSeed seeds[2];
  seeds[0].addr = (const uint8_t *)"authority";
  seeds[0].len = 9;
  seeds[1].addr = &bump;
  seeds[1].len = 1;
  Call call;
  new_call(&call, owner_of(t->mint), data, 10);
  add_account(&call, t->from, true, false);
  add_account(&call, t->mint, false, false);
  add_account(&call, t->to, true, false);
  add_account(&call, t->auth, false, true);
  call.seeds = t->program_signs ? seeds : NULL;
  call.seeds_len = t->program_signs ? 2 : 0;
  return invoke(&call);
}

/* A System call on `account` (a PDA signing with `seeds`): Allocate(space) or Assign(owner). */
static uint64_t __attribute__((noinline)) system_on_pda(uint8_t *data, uint64_t data_len, Acc account,
                                                       const SolSignerSeed *seeds, uint64_t seeds_len) {
  Call call;
  new_call(&call, SYSTEM_PROGRAM, data, data_len);
  add_account(&call, account, true, true);
  call.seeds = seeds;
  call.seeds_len = seeds_len;
  return invoke(&call);
}

/* System Transfer of `lamports` from `payer` to `account`. */
static uint64_t __attribute__((noinline)) top_up(Acc payer, Acc account, uint64_t lamports) {
  uint8_t data[12];
  write_u32(data, 2);
  write_u64(data + 4, lamports);
  Call call;
  new_call(&call, SYSTEM_PROGRAM, data, 12);
  add_account(&call, payer, true, true);
  add_account(&call, account, true, false);
  return invoke(&call);
}

/* Creates `account` (a PDA signing with `seeds`), paid by `payer`, owned by `owner`, `space` bytes.
 *
 * Anyone may send lamports to an address before it exists, and System CreateAccount refuses an
 * account that holds any: a griefer could block a user's first deposit (or a vault) for the cost of
 * one transfer. So an address that already holds lamports is topped up to rent exemption, then
 * allocated and assigned in place, which needs only the PDA's own signature. */
static uint64_t __attribute__((noinline)) create_account(Acc payer, Acc account, uint64_t space, const uint8_t *owner,
                                                         const SolSignerSeed *seeds) {
  uint64_t rent = space == POSITION_SIZE ? POSITION_RENT : TOKEN_ACCOUNT_RENT;
  uint64_t seeds_len = space == POSITION_SIZE ? 5 : 3;
  if (!same(owner_of(account), SYSTEM_PROGRAM) || data_len_of(account) != 0) return ERR_ACCOUNT_STATE;
  uint64_t held = *lamports_of(account);
  if (held == 0) {
    uint8_t data[52];
    write_u32(data, 0);
    write_u64(data + 4, rent);
    write_u64(data + 12, space);
    for (int i = 0; i < 32; i++) data[20 + i] = owner[i];
    Call call;
    new_call(&call, SYSTEM_PROGRAM, data, 52);
    add_account(&call, payer, true, true);
    add_account(&call, account, true, true);
    call.seeds = seeds;
    call.seeds_len = seeds_len;
    return invoke(&call);
  }
  uint64_t err = held < rent ? top_up(payer, account, rent - held) : 0;
  if (err) return err;
  uint8_t allocate[12];
  write_u32(allocate, 8);
  write_u64(allocate + 4, space);
  err = system_on_pda(allocate, 12, account, seeds, seeds_len);
  if (err) return err;
  uint8_t assign[36];
  write_u32(assign, 1);
  for (int i = 0; i < 32; i++) assign[4 + i] = owner[i];
  return system_on_pda(assign, 36, account, seeds, seeds_len);
}

/* ---- checks --------------------------------------------------------------------------------- */

/* The authority PDA: compared with the account given as it, and with the vault's token owner. */
static uint64_t check_authority(const Ctx *c, Acc authority) {
  uint8_t bump = AUTHORITY_BUMP;
  SolSignerSeed seeds[2];
  seeds[0].addr = (const uint8_t *)"authority";
  seeds[0].len = 9;
  seeds[1].addr = &bump;
  seeds[1].len = 1;
  SolPubkey derived;
  if (sol_create_program_address(seeds, 2, c->program_id, &derived) != 0) return ERR_WRONG_PDA;
  if (!same(derived.x, key_of(authority)->x)) return ERR_WRONG_PDA;
  return 0;
}

/* Whether `a` is state of the token program that owns it: SPL Token's base layout of `size` bytes, or
 * Token-2022's, that base (a mint padded to a token account's length) followed by its account type and
 * extensions. */
static bool token_state(Acc a, uint64_t size, uint8_t type) {
  uint64_t len = data_len_of(a);
  if (same(owner_of(a), TOKEN_PROGRAM)) return len == size;
  if (!same(owner_of(a), TOKEN_2022_PROGRAM)) return false;
  return len == size || (len > ACCOUNT_TYPE_OFFSET && data_of(a)[ACCOUNT_TYPE_OFFSET] == type);
}

/* The mint: a mint account of SPL Token or Token-2022; gives its decimals. */
static uint64_t check_mint(Acc mint, uint8_t *decimals) {
  if (!token_state(mint, MINT_SIZE, ACCOUNT_TYPE_MINT)) return ERR_WRONG_ACCOUNT_OWNER;
  *decimals = data_of(mint)[44];
  return 0;
}

/* A token account holding `mint`, of the program that owns the mint. */
static uint64_t check_token_account(Acc account, Acc mint) {
  if (!token_state(account, TOKEN_ACCOUNT_SIZE, ACCOUNT_TYPE_ACCOUNT) || !same(owner_of(account), owner_of(mint)))
    return ERR_WRONG_ACCOUNT_OWNER;
  if (!same(data_of(account), key_of(mint)->x)) return ERR_WRONG_MINT;
  return 0;
}

/* The vault of `mint`: the PDA ["vault", mint, bump], a token account of the mint owned by the authority. */
static uint64_t check_vault(const Ctx *c, Acc vault, Acc mint, Acc authority, uint8_t bump) {
  if (!token_state(vault, TOKEN_ACCOUNT_SIZE, ACCOUNT_TYPE_ACCOUNT) || !same(owner_of(vault), owner_of(mint)))
    return ERR_WRONG_ACCOUNT_OWNER;
  if (!is_writable(vault)) return ERR_WRONG_VAULT;
  if (!same(data_of(vault), key_of(mint)->x) || !same(data_of(vault) + 32, key_of(authority)->x)) return ERR_WRONG_VAULT;
  SolSignerSeed seeds[3];
  seeds[0].addr = (const uint8_t *)"vault";
  seeds[0].len = 5;
  seeds[1].addr = key_of(mint)->x;
  seeds[1].len = 32;
  seeds[2].addr = &bump;
  seeds[2].len = 1;
  SolPubkey derived;
  if (sol_create_program_address(seeds, 3, c->program_id, &derived) != 0) return ERR_WRONG_PDA;
  if (!same(derived.x, key_of(vault)->x)) return ERR_WRONG_PDA;
  return 0;
}

/* The position seeds ["position", user, strategy, mint, bump] into `seeds` (5 entries). */
static void position_seeds(SolSignerSeed *seeds, const uint8_t *user, const uint8_t *strategy, const uint8_t *mint,
                           const uint8_t *bump) {
  seeds[0].addr = (const uint8_t *)"position";
  seeds[0].len = 8;
  seeds[1].addr = user;
  seeds[1].len = 32;
  seeds[2].addr = strategy;
  seeds[2].len = 32;
  seeds[3].addr = mint;
  seeds[3].len = 32;
  seeds[4].addr = bump;
  seeds[4].len = 1;
}

/* An open position: owned by this program, its address derived from what it records, for `mint`. */
static uint64_t __attribute__((noinline)) check_position(const Ctx *c, Acc position, Acc mint) {
  if (!same(owner_of(position), c->program_id->x)) return ERR_WRONG_ACCOUNT_OWNER;
  if (data_len_of(position) != POSITION_SIZE || !is_writable(position)) return ERR_ACCOUNT_STATE;
  uint8_t *p = data_of(position);
  for (int i = 0; i < 8; i++) {
    if (p[i] != MAGIC[i]) return ERR_ACCOUNT_STATE;
  }
  if (!same(p + P_MINT, key_of(mint)->x)) return ERR_NOT_POSITION_OWNER;
  SolSignerSeed seeds[5];
  position_seeds(seeds, p + P_USER, p + P_STRATEGY, p + P_MINT, p + P_BUMP);
  SolPubkey derived;
  if (sol_create_program_address(seeds, 5, c->program_id, &derived) != 0) return ERR_WRONG_PDA;
  if (!same(derived.x, key_of(position)->x)) return ERR_WRONG_PDA;
  return 0;
}

/* The token program account given: the program that owns the mint (checked first, by check_mint). */
static uint64_t check_token_program(Acc program, Acc mint) {
  return same(key_of(program)->x, owner_of(mint)) ? 0 : ERR_WRONG_PROGRAM;
}

/* ---- instructions --------------------------------------------------------------------------- */

/* The vault's seeds with its bump, for CreateAccount. */
static void vault_seeds(SolSignerSeed *seeds, Acc mint, const uint8_t *bump) {
  seeds[0].addr = (const uint8_t *)"vault";
  seeds[0].len = 5;
  seeds[1].addr = key_of(mint)->x;
  seeds[1].len = 32;
  seeds[2].addr = bump;
  seeds[2].len = 1;
}

static uint64_t init_vault(const Ctx *c) {
  if (c->count < 6 || c->data_len != 1) return ERR_INVALID_INSTRUCTION;
  Acc payer = c->acc[0], vault = c->acc[1], authority = c->acc[2], mint = c->acc[3];
  if (!is_signer(payer)) return ERR_MISSING_SIGNATURE;
  uint8_t decimals;
  uint64_t err = check_mint(mint, &decimals);
  if (err) return err;
  if (!same(key_of(c->acc[4])->x, SYSTEM_PROGRAM) || check_token_program(c->acc[5], mint)) return ERR_WRONG_PROGRAM;
  err = check_authority(c, authority);
  if (err) return err;
  if (!same(owner_of(vault), SYSTEM_PROGRAM) || data_len_of(vault) != 0) return ERR_ACCOUNT_STATE;
  uint8_t bump;
  SolSignerSeed seeds[3];
  vault_seeds(seeds, mint, &bump);
  SolPubkey derived;
  if (sol_try_find_program_address(seeds, 2, c->program_id, &derived, &bump) != 0) return ERR_WRONG_PDA;
  if (!same(derived.x, key_of(vault)->x)) return ERR_WRONG_PDA;
  err = create_account(payer, vault, TOKEN_ACCOUNT_SIZE, owner_of(mint), seeds);
  if (err) return err;
  /* InitializeAccount3(vault, mint, owner = authority) */
  uint8_t data[33];
  data[0] = 18;
  for (int i = 0; i < 32; i++) data[1 + i] = key_of(authority)->x[i];
  Call call;
  new_call(&call, owner_of(mint), data, 33);
  add_account(&call, vault, true, false);
  add_account(&call, mint, false, false);
  return invoke(&call);
}

/* Opens the position of (user, strategy, mint), paid by `payer`: finds both bumps and stores them. */
static uint64_t __attribute__((noinline)) open_position(const Ctx *c, Acc user, Acc payer, Acc mint, Acc position) {
  const uint8_t *strategy = c->data + 9;
  if (!is_signer(payer)) return ERR_MISSING_SIGNATURE;
  if (!same(key_of(c->acc[7])->x, SYSTEM_PROGRAM)) return ERR_WRONG_PROGRAM;
  uint8_t bump, vault_bump;
  SolSignerSeed seeds[5];
  SolPubkey derived;
  vault_seeds(seeds, mint, &vault_bump);
  if (sol_try_find_program_address(seeds, 2, c->program_id, &derived, &vault_bump) != 0) return ERR_WRONG_PDA;
  position_seeds(seeds, key_of(user)->x, strategy, key_of(mint)->x, &bump);
  if (sol_try_find_program_address(seeds, 4, c->program_id, &derived, &bump) != 0) return ERR_WRONG_PDA;
  if (!same(derived.x, key_of(position)->x)) return ERR_WRONG_PDA;
  uint64_t err = create_account(payer, position, POSITION_SIZE, c->program_id->x, seeds);
  if (err) return err;
  if (data_len_of(position) != POSITION_SIZE) return ERR_ACCOUNT_STATE;
  uint8_t *p = data_of(position);
  for (int i = 0; i < 8; i++) p[i] = MAGIC[i];
  for (int i = 0; i < 32; i++) {
    p[P_USER + i] = key_of(user)->x[i];
    p[P_STRATEGY + i] = strategy[i];
    p[P_MINT + i] = key_of(mint)->x[i];
  }
  p[P_BUMP] = bump;
  p[P_VAULT_BUMP] = vault_bump;
  return 0;
}

static uint64_t deposit(const Ctx *c) {
  if (c->count < 9 || c->data_len != 41) return ERR_INVALID_INSTRUCTION;
  Acc user = c->acc[0], source = c->acc[2], mint = c->acc[3], vault = c->acc[4], authority = c->acc[5];
  Acc position = c->acc[6];
  uint64_t amount = read_u64(c->data + 1);
  if (amount == 0) return ERR_INVALID_INSTRUCTION;
  if (!is_signer(user)) return ERR_MISSING_SIGNATURE;
  uint8_t decimals;
  uint64_t err = check_mint(mint, &decimals);
  if (err) return err;
  if (check_token_program(c->acc[8], mint)) return ERR_WRONG_PROGRAM;
  err = check_token_account(source, mint);
  if (err == 0) err = check_authority(c, authority);
  if (err) return err;
  if (same(owner_of(position), SYSTEM_PROGRAM)) { /* not opened yet (or only sent lamports) */
    err = open_position(c, user, c->acc[1], mint, position);
    if (err) return err;
  }
  err = check_position(c, position, mint);
  if (err) return err;
  uint8_t *p = data_of(position);
  if (!same(p + P_USER, key_of(user)->x) || !same(p + P_STRATEGY, c->data + 9)) return ERR_NOT_POSITION_OWNER;
  err = check_vault(c, vault, mint, authority, p[P_VAULT_BUMP]);
  if (err) return err;
  uint64_t deposited = read_u64(p + P_DEPOSITED), balance = read_u64(p + P_BALANCE);
  if (deposited + amount < deposited || balance + amount < balance) return ERR_OVERFLOW;
  Transfer t = {source, mint, vault, user, {0}, false};
  err = transfer_checked(&t, amount, decimals);
  if (err) return err;
  write_u64(p + P_DEPOSITED, deposited + amount);
  write_u64(p + P_BALANCE, balance + amount);
  return 0;
}

/* The accounts Withdraw, Close and CreditYield share: signer, token account, mint, vault, authority,
 * position, token program. Checks the data's length and them all but the token account; gives the decimals. */
static uint64_t check_payout_accounts(const Ctx *c, uint64_t data_len, uint8_t *decimals) {
  if (c->count < 7 || c->data_len != data_len) return ERR_INVALID_INSTRUCTION;
  Acc signer = c->acc[0], mint = c->acc[2], vault = c->acc[3], authority = c->acc[4], position = c->acc[5];
  if (!is_signer(signer)) return ERR_MISSING_SIGNATURE;
  uint64_t err = check_mint(mint, decimals);
  if (err) return err;
  if (check_token_program(c->acc[6], mint)) return ERR_WRONG_PROGRAM;
  err = check_authority(c, authority);
  if (err == 0) err = check_position(c, position, mint);
  if (err == 0) err = check_vault(c, vault, mint, authority, data_of(position)[P_VAULT_BUMP]);
  return err;
}

/* As check_payout_accounts, and the position is the signer's own. */
static uint64_t check_own_position(const Ctx *c, uint64_t data_len, uint8_t *decimals) {
  uint64_t err = check_payout_accounts(c, data_len, decimals);
  if (err == 0 && !same(data_of(c->acc[5]) + P_USER, key_of(c->acc[0])->x)) err = ERR_NOT_POSITION_OWNER;
  return err;
}

/* Pays `amount` from the vault (account 3) to `to`, signed by the program for the authority PDA. */
static uint64_t pay_out(const Ctx *c, Acc to, uint64_t amount, uint8_t decimals) {
  Transfer t = {c->acc[3], c->acc[2], to, c->acc[4], {0}, true};
  return transfer_checked(&t, amount, decimals);
}

static uint64_t fee_of(uint64_t gross) { return gross / 1000 + (gross % 1000 != 0 ? 1 : 0); }

static uint64_t withdraw(const Ctx *c) {
  uint8_t decimals;
  uint64_t err = check_own_position(c, 10, &decimals);
  if (err) return err;
  Acc user = c->acc[0], destination = c->acc[1];
  uint8_t *p = data_of(c->acc[5]);
  err = check_token_account(destination, c->acc[2]);
  if (err) return err;
  if (!same(data_of(destination) + 32, key_of(user)->x)) return ERR_WRONG_DESTINATION;
  uint64_t amount = read_u64(c->data + 1), balance = read_u64(p + P_BALANCE);
  uint8_t mode = c->data[9];
  uint64_t gross, to_user;
  if (mode == 0) {
    gross = amount == UINT64_MAX ? balance : amount;
    to_user = gross - fee_of(gross);
  } else if (mode == 1) {
    gross = amount + fee_of(amount);
    if (gross < amount) return ERR_OVERFLOW;
    to_user = amount;
  } else {
    return ERR_INVALID_INSTRUCTION;
  }
  if (gross == 0) return ERR_INVALID_INSTRUCTION;
  if (gross > balance) return ERR_OVERDRAW;
  if (to_user > 0) {
    err = pay_out(c, destination, to_user, decimals);
    if (err) return err;
  }
  uint64_t left = balance - gross, deposited = read_u64(p + P_DEPOSITED);
  write_u64(p + P_BALANCE, left);
  write_u64(p + P_DEPOSITED, deposited < left ? deposited : left);
  return 0;
}

static uint64_t close(const Ctx *c) {
  uint8_t decimals;
  uint64_t err = check_own_position(c, 1, &decimals);
  if (err) return err;
  Acc user = c->acc[0], recipient = c->acc[1], position = c->acc[5];
  uint8_t *p = data_of(position);
  if (!is_writable(user)) return ERR_INVALID_INSTRUCTION;
  uint64_t balance = read_u64(p + P_BALANCE);
  if (balance > 0) {
    err = check_token_account(recipient, c->acc[2]);
    /* Never into an account of the program's own (the vault): the position would vanish, its tokens kept. */
    if (err == 0 && same(data_of(recipient) + 32, key_of(c->acc[4])->x)) err = ERR_WRONG_DESTINATION;
    if (err == 0) err = pay_out(c, recipient, balance, decimals);
    if (err) return err;
  }
  uint64_t rent = *lamports_of(position);
  *lamports_of(user) += rent;
  *lamports_of(position) = 0;
  sol_memset(p, 0, POSITION_SIZE);
  return 0;
}

static uint64_t credit_yield(const Ctx *c) {
  uint8_t decimals;
  uint64_t err = check_payout_accounts(c, 9, &decimals);
  if (err) return err;
  Acc payer = c->acc[0], source = c->acc[1], position = c->acc[5];
  if (!same(key_of(payer)->x, YIELD_AUTHORITY)) return ERR_NOT_YIELD_AUTHORITY;
  err = check_token_account(source, c->acc[2]);
  if (err) return err;
  uint64_t amount = read_u64(c->data + 1);
  uint8_t *p = data_of(position);
  uint64_t balance = read_u64(p + P_BALANCE);
  if (amount == 0) return ERR_INVALID_INSTRUCTION;
  if (balance + amount < balance) return ERR_OVERFLOW;
  Transfer t = {source, c->acc[2], c->acc[3], payer, {0}, false};
  err = transfer_checked(&t, amount, decimals);
  if (err) return err;
  write_u64(p + P_BALANCE, balance + amount);
  return 0;
}

extern uint64_t entrypoint(const uint8_t *input) {
  Ctx c;
  if (!parse((uint8_t *)input, &c) || c.data_len < 1) return fail(ERR_INVALID_INSTRUCTION);
  uint64_t err;
  switch (c.data[0]) {
    case 0: err = init_vault(&c); break;
    case 1: err = deposit(&c); break;
    case 2: err = withdraw(&c); break;
    case 3: err = close(&c); break;
    case 4: err = credit_yield(&c); break;
    default: err = ERR_INVALID_INSTRUCTION;
  }
  return err ? fail(err) : SUCCESS;
}
