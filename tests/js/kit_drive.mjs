// Uses the sandbox's Solana RPC with @solana/kit and the @solana-program clients, as an application
// written for a test validator does: an airdrop, a SOL transfer, an SPL token mint made, minted and
// transferred, a lookup table made and extended then used by a v0 transaction, a durable nonce account
// made and a transaction that lives by it; every send confirmed over WebSocket (signature
// subscriptions), with account and slot subscriptions open meanwhile.
// Prints one JSON object. Usage: node kit_drive.mjs RPC_URL WS_URL
import {
  address,
  airdropFactory,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  lamports,
  pipe,
  sendAndConfirmDurableNonceTransactionFactory,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  setTransactionMessageLifetimeUsingDurableNonce,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import {
  fetchNonce,
  getCreateAccountInstruction,
  getInitializeNonceAccountInstruction,
  getNonceSize,
  getTransferSolInstruction,
  SYSTEM_PROGRAM_ADDRESS,
} from "@solana-program/system";
import {
  fetchMint,
  fetchToken,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import {
  fetchAddressLookupTable,
  findAddressLookupTablePda,
  getCreateLookupTableInstructionAsync,
  getExtendLookupTableInstruction,
} from "@solana-program/address-lookup-table";

const [rpcUrl, wsUrl] = process.argv.slice(2);
const rpc = createSolanaRpc(rpcUrl);
const rpcSubscriptions = createSolanaRpcSubscriptions(wsUrl);
const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });
const sendAndConfirmNonce = sendAndConfirmDurableNonceTransactionFactory({ rpc, rpcSubscriptions });
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const text = (value) => JSON.parse(JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v)));

const payer = await generateKeyPairSigner();
const recipient = await generateKeyPairSigner();
const watching = new AbortController();

// Subscriptions opened before anything is sent: the recipient's account and the slots.
const accountNotes = [];
const slotNotes = [];
const accountStream = await rpcSubscriptions
  .accountNotifications(recipient.address, { commitment: "confirmed", encoding: "base64" })
  .subscribe({ abortSignal: watching.signal });
const slotStream = await rpcSubscriptions.slotNotifications().subscribe({ abortSignal: watching.signal });
const collect = async (stream, into) => {
  try {
    for await (const note of stream) into.push(note);
  } catch (error) {
    if (!watching.signal.aborted) throw error;
  }
};
const collecting = [collect(accountStream, accountNotes), collect(slotStream, slotNotes)];

async function send(instructions, { tables } = {}) {
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  let message = pipe(
    createTransactionMessage({ version: tables ? 0 : "legacy" }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  if (tables) message = compressTransactionMessageUsingAddressLookupTables(message, tables);
  const signed = await signTransactionMessageWithSigners(message);
  await sendAndConfirm(signed, { commitment: "confirmed" });
  const signature = getSignatureFromTransaction(signed);
  const read = await rpc
    .getTransaction(signature, { commitment: "confirmed", encoding: "json", maxSupportedTransactionVersion: 0 })
    .send();
  return { signature, slot: Number(read.slot), err: read.meta.err, version: read.version, loaded: read.meta.loadedAddresses ?? null };
}

// Airdrop, confirmed by airdropFactory's own signature subscription.
await airdropFactory({ rpc, rpcSubscriptions })({
  recipientAddress: payer.address,
  lamports: lamports(5_000_000_000n),
  commitment: "confirmed",
});
const funded = (await rpc.getBalance(payer.address, { commitment: "confirmed" }).send()).value;

// A SOL transfer.
const sol = await send([getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 1_000_000n })]);
const recipientBalance = (await rpc.getBalance(recipient.address, { commitment: "confirmed" }).send()).value;

// An SPL token: the mint made, an associated account for each side, minted to the payer, moved to the recipient.
const mint = await generateKeyPairSigner();
const mintRent = await rpc.getMinimumBalanceForRentExemption(BigInt(getMintSize())).send();
const mintMade = await send([
  getCreateAccountInstruction({ payer, newAccount: mint, lamports: mintRent, space: getMintSize(), programAddress: TOKEN_PROGRAM_ADDRESS }),
  getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
]);
const [payerAta] = await findAssociatedTokenPda({ owner: payer.address, mint: mint.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
const [recipientAta] = await findAssociatedTokenPda({ owner: recipient.address, mint: mint.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
const minted = await send([
  await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, owner: payer.address, mint: mint.address }),
  getMintToInstruction({ mint: mint.address, token: payerAta, mintAuthority: payer, amount: 1_000_000_000n }),
]);
const moved = await send([
  await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, owner: recipient.address, mint: mint.address }),
  getTransferCheckedInstruction({ source: payerAta, mint: mint.address, destination: recipientAta, authority: payer, amount: 250_000n, decimals: 6 }),
]);
const token = {
  supply: (await fetchMint(rpc, mint.address, { commitment: "confirmed" })).data.supply,
  payer: (await fetchToken(rpc, payerAta, { commitment: "confirmed" })).data.amount,
  recipient: (await fetchToken(rpc, recipientAta, { commitment: "confirmed" })).data.amount,
  parsedBalance: (await rpc.getTokenAccountBalance(recipientAta, { commitment: "confirmed" }).send()).value.amount,
};

// A lookup table of our own, extended with the recipients, then a v0 transaction that loads them from it.
const recentSlot = await rpc.getSlot({ commitment: "finalized" }).send();
const [table] = await findAddressLookupTablePda({ authority: payer.address, recentSlot });
const others = [(await generateKeyPairSigner()).address, (await generateKeyPairSigner()).address];
const tableMade = await send([
  await getCreateLookupTableInstructionAsync({ authority: payer, payer, recentSlot }),
  getExtendLookupTableInstruction({ address: table, authority: payer, payer, systemProgram: SYSTEM_PROGRAM_ADDRESS, addresses: others }),
]);
while ((await rpc.getSlot({ commitment: "confirmed" }).send()) <= BigInt(tableMade.slot)) await sleep(20); // a table is usable a slot after it grows
const tableAccount = await fetchAddressLookupTable(rpc, table, { commitment: "confirmed" });
const v0 = await send(
  others.map((destination) => getTransferSolInstruction({ source: payer, destination, amount: 2_000_000n })),
  { tables: { [table]: tableAccount.data.addresses } },
);
const loadedBalances = [];
for (const other of others) loadedBalances.push((await rpc.getBalance(other, { commitment: "confirmed" }).send()).value);

// A durable nonce account, and a transaction whose lifetime is its nonce (confirmed by kit's nonce watcher).
const nonceAccount = await generateKeyPairSigner();
const nonceRent = await rpc.getMinimumBalanceForRentExemption(BigInt(getNonceSize())).send();
const nonceMade = await send([
  getCreateAccountInstruction({ payer, newAccount: nonceAccount, lamports: nonceRent, space: getNonceSize(), programAddress: SYSTEM_PROGRAM_ADDRESS }),
  getInitializeNonceAccountInstruction({ nonceAccount: nonceAccount.address, nonceAuthority: payer.address }),
]);
const nonceBefore = (await fetchNonce(rpc, nonceAccount.address, { commitment: "confirmed" })).data.blockhash;
const durableMessage = pipe(
  createTransactionMessage({ version: 0 }),
  (m) => setTransactionMessageFeePayerSigner(payer, m),
  (m) => setTransactionMessageLifetimeUsingDurableNonce({ nonce: nonceBefore, nonceAccountAddress: nonceAccount.address, nonceAuthorityAddress: payer.address }, m),
  (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 3_000_000n })], m),
);
const durableSigned = await signTransactionMessageWithSigners(durableMessage);
await sendAndConfirmNonce(durableSigned, { commitment: "confirmed" });
const durableSignature = getSignatureFromTransaction(durableSigned);
const durableStatus = (await rpc.getSignatureStatuses([durableSignature]).send()).value[0];
const nonceAfter = (await fetchNonce(rpc, nonceAccount.address, { commitment: "confirmed" })).data.blockhash;

// A signature subscription of our own, asked after the transaction landed: told at once.
const late = await rpcSubscriptions
  .signatureNotifications(sol.signature, { commitment: "confirmed" })
  .subscribe({ abortSignal: AbortSignal.timeout(10_000) });
let lateNote = null;
for await (const note of late) {
  lateNote = note;
  break;
}
const finalRecipient = (await rpc.getBalance(recipient.address, { commitment: "confirmed" }).send()).value;
while (accountNotes.length < 2) await sleep(20);
watching.abort();
await Promise.allSettled(collecting);

console.log(
  JSON.stringify(
    text({
      payer: payer.address,
      funded,
      sol,
      recipientBalance,
      mintMade,
      minted,
      moved,
      token,
      table: { address: table, made: tableMade, addresses: tableAccount.data.addresses, others },
      v0,
      loadedBalances,
      nonce: { made: nonceMade, before: nonceBefore, after: nonceAfter, signature: durableSignature, status: durableStatus },
      lateNote: lateNote && { slot: lateNote.context.slot, err: lateNote.value.err },
      finalRecipient,
      accountNotes: accountNotes.map((n) => ({ slot: n.context.slot, lamports: n.value.lamports })),
      slotNotes: slotNotes.map((n) => ({ slot: n.slot, parent: n.parent, root: n.root })),
    }),
  ),
);
process.exit(0);
