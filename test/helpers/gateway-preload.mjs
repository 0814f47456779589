/**
 * Preload of a child process in the tests (`node --import test/helpers/gateway-preload.mjs dist/cli.js ...`):
 * the built-in `test` gateway of the built service charges through the fake gateway at TEST_GATEWAY_URL
 * (test/helpers/fake-gateway.ts) over HTTP instead of answering in process. The service's code is
 * otherwise untouched: the module is the one the service imports (one instance per URL), and only
 * its `charge` is replaced, with the same request and answer (src/infra/gateways/types.ts).
 */
import { testCardGateway } from "../../dist/infra/gateways/test-cards.js";

const base = process.env.TEST_GATEWAY_URL;
if (!base) throw new Error("gateway-preload.mjs: TEST_GATEWAY_URL is not set");

testCardGateway.charge = async (request) => {
  const res = await fetch(new URL("/charges", base), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  if (!res.ok) throw new Error(`the gateway answered ${res.status}: ${await res.text()}`);
  return res.json();
};
