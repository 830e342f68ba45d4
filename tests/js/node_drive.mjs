// Uses the sandbox's Solana RPC as a test suite written for solana-test-validator does, with
// @solana/web3.js at its defaults (finalized, no transaction version named): wait for block 5 and read
// the first blocks, send a transfer, confirm it with confirmTransaction (signatureSubscribe at
// finalized), then watch blocks with getBlocks/getBlock reading each once.
// Prints one JSON object. Usage: node node_drive.mjs RPC_URL WS_URL SECRET_JSON
import { Connection, Keypair, SystemProgram, Transaction } from "@solana/web3.js";

const [rpcUrl, wsUrl, secret] = process.argv.slice(2);
const payer = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(secret)));
const conn = new Connection(rpcUrl, { wsEndpoint: wsUrl });
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

while ((await conn.getSlot()) < 5) await sleep(50); // as a harness waits for the validator
const early = [];
for (let slot = 0; slot <= 5; slot++) {
  const block = await conn.getBlock(slot);
  early.push({ slot, parentSlot: block.parentSlot, height: block.blockHeight, transactions: block.transactions.length });
}
const first = await conn.getFirstAvailableBlock();

const sent = [];
const from = await conn.getSlot();
for (let i = 0; i < 3; i++) {
  const latest = await conn.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, ...latest }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
  );
  tx.sign(payer);
  const signature = await conn.sendRawTransaction(tx.serialize());
  const confirmed = await conn.confirmTransaction({ signature, ...latest }, "finalized");
  sent.push({ signature, err: confirmed.value.err });
}
const status = (await conn.getSignatureStatus(sent[0].signature)).value;
const seen = [];
for (const slot of await conn.getBlocks(from, await conn.getSlot())) {
  const block = await conn.getBlock(slot);
  seen.push(...block.transactions.map((t) => t.transaction.signatures[0]));
}
const read = (await conn.getTransaction(sent[0].signature)) ?? { slot: null };
console.log(JSON.stringify({ early, first, sent, status: status.confirmationStatus, seen, readSlot: read.slot, statusSlot: status.slot }));
process.exit(0);
