// The official SDK doing the same GET as `yield strategy info -o json`. Its 1.5.0 release has no
// getStrategyInfo method, so this goes through the SDK's own ApiClient.request, as its methods do.
import { BreezeSDK } from "@breezebaby/breeze-sdk";

const [baseUrl, strategyId] = process.argv.slice(2);
const sdk = new BreezeSDK({ baseUrl, apiKey: process.env.YIELD_API_KEY });
const body = await sdk.getApiClient().request(`strategy-info/${strategyId}`, "GET", {
  headers: { "x-api-key": process.env.YIELD_API_KEY },
});
console.log(JSON.stringify(body));
