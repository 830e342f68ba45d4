// Drives the sandbox's Solana RPC and PubSub with @solana/web3.js, as any dApp would: a plain SOL
// transfer, an SPL token transfer, a memo and a deposit `yield` built, each sent, confirmed by
// signatureSubscribe (onSignature), then read back with getTransaction in every encoding, getBlock
// and getSignaturesForAddress; account, logs and slot subscriptions on the side.
// Prints one JSON object. Usage: node rpc_drive.mjs RPC_URL WS_URL SECRET_JSON MINT DEPOSIT_TX_BASE64
import {
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  VersionedTransaction,
} from "@solana/web3.js";

const [rpcUrl, wsUrl, secret, mintText, depositBase64] = process.argv.slice(2);
const payer = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(secret)));
const mint = new PublicKey(mintText);
const TOKEN = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
const ATA = new PublicKey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");
const MEMO = new PublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
const conn = new Connection(rpcUrl, { commitment: "confirmed", wsEndpoint: wsUrl });
const ata = (owner) => PublicKey.findProgramAddressSync([owner.toBuffer(), TOKEN.toBuffer(), mint.toBuffer()], ATA)[0];
const withTimeout = (promise, what) =>
  Promise.race([promise, new Promise((_, no) => setTimeout(() => no(new Error(`${what}: no notification`)), 20000))]);

// Confirmed by subscription only: onSignature is signatureSubscribe over the WebSocket.
function confirmBySubscription(signature) {
  return withTimeout(
    new Promise((resolve) => conn.onSignature(signature, (result, context) => resolve({ err: result.err, slot: context.slot }))),
    `signature ${signature}`,
  );
}

async function sendLegacy(instructions) {
  const { blockhash } = await conn.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(...instructions);
  tx.sign(payer);
  const signature = await conn.sendRawTransaction(tx.serialize());
  return { signature, notified: await confirmBySubscription(signature) };
}

async function readBack(signature) {
  const config = { maxSupportedTransactionVersion: 0, commitment: "confirmed" };
  const json = await conn.getTransaction(signature, config);
  const parsed = await conn.getParsedTransaction(signature, config);
  const raw = {};
  for (const encoding of ["base58", "base64"]) {
    const answer = await conn._rpcRequest("getTransaction", [signature, { ...config, encoding }]);
    raw[encoding] = answer.result.transaction;
  }
  const block = await conn.getBlock(json.slot, { maxSupportedTransactionVersion: 0 });
  return {
    slot: json.slot,
    version: json.version,
    json_account_keys: json.transaction.message.staticAccountKeys.map(String),
    json_err: json.meta.err,
    json_fee: json.meta.fee,
    parsed_instructions: parsed.transaction.message.instructions.map((ix) =>
      ix.parsed !== undefined ? { program: ix.program, parsed: ix.parsed } : { programId: String(ix.programId) },
    ),
    base58: raw.base58,
    base64: raw.base64,
    block_signatures: block.transactions.map((t) => t.transaction.signatures[0]),
    block_hash: block.blockhash,
  };
}

const out = {};
const recipient = Keypair.generate().publicKey;
const notes = { account: [], logs: [], slot: [] };
const accountSub = conn.onAccountChange(recipient, (info) => notes.account.push(info.lamports), "confirmed");
const logsSub = conn.onLogs(payer.publicKey, (logs) => notes.logs.push(logs.signature), "confirmed");
const slotSub = conn.onSlotChange((slot) => notes.slot.push(slot.slot));

out.sol = await sendLegacy([SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_000_000 })]);

const amount = Buffer.alloc(9);
amount.writeUInt8(3, 0); // Transfer
amount.writeBigUInt64LE(250_000n, 1);
out.token = await sendLegacy([
  new TransactionInstruction({
    programId: ATA,
    keys: [
      { pubkey: payer.publicKey, isSigner: true, isWritable: true },
      { pubkey: ata(recipient), isSigner: false, isWritable: true },
      { pubkey: recipient, isSigner: false, isWritable: false },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
      { pubkey: TOKEN, isSigner: false, isWritable: false },
    ],
    data: Buffer.from([1]), // CreateIdempotent
  }),
  new TransactionInstruction({
    programId: TOKEN,
    keys: [
      { pubkey: ata(payer.publicKey), isSigner: false, isWritable: true },
      { pubkey: ata(recipient), isSigner: false, isWritable: true },
      { pubkey: payer.publicKey, isSigner: true, isWritable: false },
    ],
    data: amount,
  }),
]);
out.memo = await sendLegacy([
  new TransactionInstruction({ programId: MEMO, keys: [{ pubkey: payer.publicKey, isSigner: true, isWritable: false }], data: Buffer.from("hello from web3.js") }),
]);

const deposit = VersionedTransaction.deserialize(Buffer.from(depositBase64, "base64"));
deposit.sign([payer]);
const depositSignature = await conn.sendRawTransaction(deposit.serialize());
out.deposit = { signature: depositSignature, notified: await confirmBySubscription(depositSignature) };

for (const name of ["sol", "token", "memo", "deposit"]) {
  out[name].read = await readBack(out[name].signature);
}
out.history = (await conn.getSignaturesForAddress(payer.publicKey, { limit: 10 })).map((s) => ({
  signature: s.signature,
  memo: s.memo,
  err: s.err,
  confirmationStatus: s.confirmationStatus,
}));
out.recipient_token = (await conn.getParsedAccountInfo(ata(recipient))).value.data.parsed.info.tokenAmount.amount;
out.supply = (await conn.getTokenSupply(mint)).value.amount;
// Wait for a slot notification if none came yet (slots pass every 400 ms).
if (notes.slot.length === 0) {
  await withTimeout(new Promise((resolve) => { const id = conn.onSlotChange(() => { conn.removeSlotChangeListener(id); resolve(); }); }), "slot");
}
// A logs notification may trail the confirmation that came by another subscription: wait for all four.
const sent = ["sol", "token", "memo", "deposit"].map((name) => out[name].signature);
for (let waited = 0; waited < 10_000 && !sent.every((s) => notes.logs.includes(s)); waited += 50) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
out.notes = notes;
await conn.removeAccountChangeListener(accountSub);
await conn.removeOnLogsListener(logsSub);
await conn.removeSlotChangeListener(slotSub);
console.log(JSON.stringify(out));
process.exit(0);
