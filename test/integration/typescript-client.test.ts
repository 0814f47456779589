/**
 * The TypeScript client (clients/typescript, docs/clients.md): its quickstart program compiles under `strict` with
 * no non-null assertion (the OpenAPI document says what is always there), and run against the service it creates a
 * customer and three invoices, finalizes them, lists them a page at a time, and gets a 400 with its field errors.
 */
import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { promisify } from "node:util";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ROOT } from "../helpers/processes.js";
import { nonNullAssertions } from "../helpers/typescript.js";
import { openApiDocument } from "../../src/rest/openapi.js";
import { receive } from "../../clients/typescript/examples/webhook-receiver.js";

const CLIENT = path.join(ROOT, "clients/typescript");
const QUICKSTART = path.join(CLIENT, "examples/quickstart.ts");

let s: TestServer;
beforeAll(async () => {
  // the key seals webhook endpoints' signing secrets
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) }, webhookWorker: true });
});
afterAll(async () => s?.close());

describe("the TypeScript client", () => {
  it("compiles its quickstart under strict, without a non-null assertion", () => {
    expect(nonNullAssertions(QUICKSTART)).toEqual([]);
    expect(nonNullAssertions(path.join(CLIENT, "src/index.ts"))).toEqual([]);
    const tsc = spawnSync(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", CLIENT], {
      encoding: "utf8",
    });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);
  });

  it("runs its quickstart against the service", async () => {
    // not spawnSync: the service answers in this process, so its event loop must keep running
    const run = await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), QUICKSTART],
      {
        encoding: "utf8",
        env: { ...process.env, BILLING_URL: s.url, BILLING_API_KEY: s.keys.acme },
      },
    );
    expect(run.stderr).toBe("");
    // 2 x 1000 + 19 % IVA = 2380, and so on; listed newest first, two per page
    expect(run.stdout.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/^invoice \d+: 2380 finalized$/),
      expect.stringMatching(/^invoice \d+: 4760 finalized$/),
      expect.stringMatching(/^invoice \d+: 7140 finalized$/),
      "listed: 7140, 4760, 2380",
      "refused: 400 validation_error lines.0.quantity",
    ]);
  });

  it("verifies the service's webhook messages and types them by event (webhook-receiver example)", async () => {
    // a receiver on a local port; test-mode endpoints may deliver to loopback addresses
    const received: { body: string; headers: http.IncomingHttpHeaders }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push({ body, headers: req.headers });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const port = (receiver.address() as AddressInfo).port;
      const endpoint = await s.rest("POST", "/v1/webhook_endpoints/", {
        body: {
          url: `http://127.0.0.1:${port}/hooks`,
          enabled_events: ["invoice.finalized", "invoice.paid", "customer.updated"],
        },
      });
      expect(endpoint.status, endpoint.text).toBe(201);
      const customer = (
        await s.rest("POST", "/v1/customers/", {
          body: { name: "Cliente Hooks SpA", tax_id: "76.086.428-5", country: "CL", state: "RM" },
        })
      ).body.id;
      expect(
        (await s.rest("PATCH", `/v1/customers/${customer}/`, { body: { name: "Cliente Ganchos SpA" } })).status,
      ).toBe(200);
      const invoice = (
        await s.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "Soporte", amount: 1000 }] } })
      ).body.id;
      const finalized = await s.rest("GET", `/v1/invoices/${invoice}/finalize/`);
      expect(finalized.status, finalized.text).toBe(200);
      const number = finalized.body.number;
      const card = await s.rest("POST", "/v1/sources/", {
        body: { gateway: "test", customer, data: { token: "tok_visa" } },
      });
      const payment = await s.rest("POST", "/v1/payments/", { body: { invoice, amount: 1190 } });
      const paid = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, {
        body: { source: card.body.id },
      });
      expect(paid.body.status, paid.text).toBe("succeeded");
      await expect.poll(() => received.length, { timeout: 20_000 }).toBe(3);

      const lines = received.map((m) => receive(m.body, m.headers, endpoint.body.secret));
      expect(lines.sort()).toEqual(
        [
          `customer ${customer} updated: name`,
          `invoice ${invoice} finalized: number ${number}, total 1190`,
          `invoice ${invoice} paid: 1190 paid, 0 due`,
        ].sort(),
      );
      // a changed byte does not verify
      expect(() => receive(received[0].body.replace("}", " }"), received[0].headers, endpoint.body.secret)).toThrow();
      // each body is what the OpenAPI document's `webhooks` declares for its type (keys both ways)
      const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
      const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
      ajv.addSchema(openApiDocument(), "openapi.json");
      for (const m of received) {
        const type = JSON.parse(m.body).type as string;
        const check = ajv.compile({
          $ref: `openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`,
        });
        expect(check(JSON.parse(m.body)), JSON.stringify(check.errors)).toBe(true);
      }
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
