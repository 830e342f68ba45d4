// Reads JSON lines {"transaction": base64, "tables": {"TABLE": ["ADDRESS", ...]}} on stdin; prints one
// JSON line each: the message's instructions as @solana/web3.js 1.x decompiles them with those tables,
// [{"programId", "keys": [{"pubkey", "isSigner", "isWritable"}], "data": base64}], independently of solders.
import { AddressLookupTableAccount, PublicKey, TransactionMessage, VersionedTransaction } from "@solana/web3.js";

const input = await new Promise((resolve) => {
  let data = "";
  process.stdin.on("data", (chunk) => (data += chunk));
  process.stdin.on("end", () => resolve(data));
});

for (const line of input.split("\n").map((l) => l.trim()).filter(Boolean)) {
  const { transaction, tables } = JSON.parse(line);
  const tx = VersionedTransaction.deserialize(Buffer.from(transaction, "base64"));
  const addressLookupTableAccounts = Object.entries(tables).map(
    ([key, addresses]) =>
      new AddressLookupTableAccount({
        key: new PublicKey(key),
        state: {
          deactivationSlot: BigInt("18446744073709551615"),
          lastExtendedSlot: 0,
          lastExtendedSlotStartIndex: 0,
          authority: undefined,
          addresses: addresses.map((a) => new PublicKey(a)),
        },
      }),
  );
  const message = TransactionMessage.decompile(tx.message, { addressLookupTableAccounts });
  console.log(JSON.stringify(message.instructions.map((ix) => ({
    programId: ix.programId.toBase58(),
    keys: ix.keys.map((k) => ({ pubkey: k.pubkey.toBase58(), isSigner: k.isSigner, isWritable: k.isWritable })),
    data: Buffer.from(ix.data).toString("base64"),
  }))));
}
