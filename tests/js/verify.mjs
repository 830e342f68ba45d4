// Reads base64 transactions (one per line) on stdin; prints one JSON line each:
// {"ok": bool, "version": ..., "feePayer": ..., "signers": [{"key", "signed", "valid"}]}.
// Verification is done by @solana/web3.js 1.x and tweetnacl, independently of solders.
import { VersionedTransaction, PublicKey } from "@solana/web3.js";
import nacl from "tweetnacl";

const input = await new Promise((resolve) => {
  let data = "";
  process.stdin.on("data", (chunk) => (data += chunk));
  process.stdin.on("end", () => resolve(data));
});

for (const line of input.split("\n").map((l) => l.trim()).filter(Boolean)) {
  const tx = VersionedTransaction.deserialize(Buffer.from(line, "base64"));
  const message = tx.message.serialize();
  const keys = tx.message.staticAccountKeys;
  const n = tx.message.header.numRequiredSignatures;
  const signers = [];
  for (let i = 0; i < n; i++) {
    const sig = tx.signatures[i];
    const signed = sig.some((b) => b !== 0);
    const valid = signed && nacl.sign.detached.verify(message, sig, keys[i].toBytes());
    signers.push({ key: new PublicKey(keys[i]).toBase58(), signed, valid });
  }
  console.log(JSON.stringify({
    ok: signers.every((s) => s.valid),
    version: tx.version,
    feePayer: keys[0].toBase58(),
    recentBlockhash: tx.message.recentBlockhash,
    signers,
  }));
}
