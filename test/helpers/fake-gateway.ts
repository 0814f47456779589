/**
 * A payment gateway over HTTP for tests that run the built service as a child process (the billing
 * run killed while a charge is at the gateway: test/integration/sigkill-billing-run.test.ts). The
 * built-in `test` gateway answers in process; started with `node --import GATEWAY_PRELOAD` and
 * TEST_GATEWAY_URL, a child charges through this server instead (test/helpers/gateway-preload.mjs),
 * as a real gateway would be reached: a request that can be held, and a process that can die while
 * it waits.
 *
 * `POST /charges` takes the gateway interface's ChargeRequest (src/infra/gateways/types.ts) as JSON
 * and is idempotent by `chargeId`, as the interface requires of a real gateway: the first request
 * of an id makes the charge (kept in `charges` before it is answered, so a process killed while
 * waiting leaves a charge it never heard of), a later one answers that same charge. The answer is
 * the test gateway's: succeeded, or declined for the declining test card tokens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { TEST_CARDS } from "../../src/infra/gateways/test-cards.js";
import type { ChargeRequest, ChargeResult } from "../../src/infra/gateways/types.js";
import { ROOT } from "./processes.js";

/** The preload a child process is started with (`node --import <this> dist/...`) to charge through TEST_GATEWAY_URL. */
export const GATEWAY_PRELOAD = path.join(ROOT, "test", "helpers", "gateway-preload.mjs");

/** One charge the gateway made: what was asked, its answer, and how many requests asked for it. */
export interface GatewayCharge {
  request: ChargeRequest;
  result: ChargeResult;
  requests: number;
}

export interface FakeGateway {
  /** `http://127.0.0.1:<port>` (TEST_GATEWAY_URL of the child) */
  url: string;
  /** the charges made, by charge id (the idempotency key), in the order they were made */
  charges: Map<string, GatewayCharge>;
  /** the charge id of every request, in order of arrival */
  requests: string[];
  /**
   * awaited after a charge is made (or found) and before it is answered: a test holds the answer
   * until it releases it; default: answered at once
   */
  beforeAnswer: (charge: GatewayCharge) => Promise<void>;
  stop(): Promise<void>;
}

function resultOf(request: ChargeRequest, reference: string): ChargeResult {
  const card = TEST_CARDS[String(request.source.data.token)];
  if (!card) return { status: "declined", reference, failureCode: "invalid_source", failureMessage: "Unknown card." };
  if (card.decline)
    return { status: "declined", reference, failureCode: card.decline.code, failureMessage: card.decline.message };
  return { status: "succeeded", reference };
}

export async function startFakeGateway(): Promise<FakeGateway> {
  const gateway: Omit<FakeGateway, "url" | "stop"> = {
    charges: new Map(),
    requests: [],
    beforeAnswer: async () => {},
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST" || req.url !== "/charges") {
      res.statusCode = 404;
      res.end();
      return;
    }
    const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChargeRequest;
    gateway.requests.push(request.chargeId);
    let charge = gateway.charges.get(request.chargeId);
    if (!charge) {
      charge = { request, result: resultOf(request, `gw_${gateway.charges.size + 1}`), requests: 0 };
      gateway.charges.set(request.chargeId, charge);
    }
    charge.requests++;
    await gateway.beforeAnswer(charge);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(charge.result));
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(gateway, {
    url,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
