// Drives a yield service with the official TypeScript SDK (@breezebaby/breeze-sdk): every method
// the SDK exposes, then the endpoints it has no method for through its own ApiClient.request.
// Prints one JSON object: name -> {ok: true, value} or {ok: false, status, message}.
// Usage: node sdk_drive.mjs BASE_URL API_KEY WALLET STRATEGY_ID FUND_ID MINT
import { BreezeSDK } from "@breezebaby/breeze-sdk";

const [baseUrl, apiKey, wallet, strategyId, fundId, mint] = process.argv.slice(2);
const sdk = new BreezeSDK({ baseUrl, apiKey });
const api = sdk.getApiClient();
const headers = { "x-api-key": apiKey };
const post = (path, params) => () => api.request(path, "POST", { headers, body: { params } });
const move = { strategy_id: strategyId, base_asset: mint, amount: 1000, user_key: wallet, payer_key: wallet };

const calls = {
  getUserYield: () => sdk.getUserYield({ userId: wallet, page: 1, limit: 5 }),
  getUserYieldByFund: () => sdk.getUserYield({ userId: wallet, fundId }),
  getUserBalances: () => sdk.getUserBalances({ userId: wallet, sortBy: "balance", sortOrder: "desc", page: 1, limit: 5 }),
  getUserBalancesBySymbol: () => sdk.getUserBalances({ userId: wallet, asset: "USDC" }),
  // The SDK's write methods send fund_id without strategy_id.
  createDepositTransaction: () => sdk.createDepositTransaction({ fundId, amount: 1000, userKey: wallet, payerKey: wallet }),
  createWithdrawTransaction: () => sdk.createWithdrawTransaction({ fundId, amount: 1000, userKey: wallet, payerKey: wallet }),
  getDepositInstructions: () => sdk.getDepositInstructions({ fundId, amount: 1000, userKey: wallet }),
  getWithdrawInstruction: () => sdk.getWithdrawInstruction({ fundId, amount: 1000, userKey: wallet }),
  strategyInfo: () => api.request(`strategy-info/${strategyId}`, "GET", { headers }),
  breezeBalances: () => api.request(`breeze-balances/${wallet}?strategy_id=${strategyId}&asset=USDC`, "GET", { headers }),
  depositTx: post("deposit/tx", move),
  depositTxAmountAndAll: post("deposit/tx", { ...move, all: true }),
  depositIx: post("deposit/ix", move),
  withdrawTx: post("withdraw/tx", move),
  withdrawIx: post("withdraw/ix", { ...move, all: true }),
  closeTx: post("close-user-account/tx", { user_pubkey: wallet, strategy_id: strategyId, mint }),
  closeIx: post("close-user-account/ix", { user_pubkey: wallet, strategy_id: strategyId, mint }),
};

const out = {};
for (const [name, call] of Object.entries(calls)) {
  try {
    out[name] = { ok: true, value: await call() };
  } catch (err) {
    out[name] = { ok: false, status: err.status ?? null, message: err.message, name: err.name };
  }
}
console.log(JSON.stringify(out));
