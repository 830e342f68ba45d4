// Reads {"path": "44'/501'/0'/0'", "message": "<hex>"} on stdin and prints the APDUs that
// @ledgerhq/hw-app-solana sends for getAppConfiguration, getAddress (with and without display)
// and signTransaction, as hex, recorded by a transport that answers like the app would.
import { createRequire } from "node:module";

// The packages' ES-module builds import paths without extensions, which node refuses: use CommonJS.
const require = createRequire(import.meta.url);
const TransportModule = require("@ledgerhq/hw-transport");
const SolanaModule = require("@ledgerhq/hw-app-solana");

const Transport = TransportModule.default ?? TransportModule;
const Solana = SolanaModule.default ?? SolanaModule;

class Recorder extends Transport {
  constructor() {
    super();
    this.sent = [];
  }
  async exchange(apdu) {
    this.sent.push(Buffer.from(apdu).toString("hex"));
    const ins = apdu[1];
    const body = ins === 0x04 ? Buffer.from([1, 0, 1, 9, 0]) : ins === 0x05 ? Buffer.alloc(32, 7) : ins === 0x06 ? Buffer.alloc(64, 9) : Buffer.alloc(0);
    return Buffer.concat([body, Buffer.from([0x90, 0x00])]);
  }
}

const input = JSON.parse(await new Promise((resolve) => {
  let data = "";
  process.stdin.on("data", (chunk) => (data += chunk));
  process.stdin.on("end", () => resolve(data));
}));
const out = {};
for (const [name, call] of [
  ["configuration", (app) => app.getAppConfiguration()],
  ["address", (app) => app.getAddress(input.path)],
  ["address_confirm", (app) => app.getAddress(input.path, true)],
  ["sign", (app) => app.signTransaction(input.path, Buffer.from(input.message, "hex"))],
]) {
  const transport = new Recorder();
  await call(new Solana(transport));
  out[name] = transport.sent;
}
console.log(JSON.stringify(out));
