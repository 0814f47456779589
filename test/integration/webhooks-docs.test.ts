/**
 * docs/webhooks.md "A receiver": the Node receiver of the docs, run exactly as written (the code
 * block marked `js receiver`) in a process of its own with the `standardwebhooks` package, receives
 * the service's messages for an endpoint with its secret, handles each once, and answers 400 to a
 * message whose signature does not verify.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/processes.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { until } from "../helpers/webhook-receiver.js";

let s: TestServer;
let receiver: ChildProcess | undefined;
beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) }, webhookWorker: true });
});
afterAll(async () => {
  receiver?.kill();
  await s?.close();
});

/** The code block of docs/webhooks.md marked `js receiver`. */
function receiverExample(): string {
  const text = fs.readFileSync(new URL("../../docs/webhooks.md", import.meta.url), "utf8");
  const found = /```js receiver\n([\s\S]*?)```/.exec(text);
  if (!found) throw new Error("docs/webhooks.md has no ```js receiver block");
  return found[1];
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe("docs/webhooks.md's receiver", () => {
  it("verifies and handles the service's messages once, and refuses a forged one", { timeout: 60_000 }, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hooks`;
    const endpoint = await s.rest("POST", "/v1/webhook_endpoints/", { body: { url, enabled_events: ["*"] } });
    expect(endpoint.status, endpoint.text).toBe(201);
    // the example as written, as an ES module run from the project (its node_modules has standardwebhooks)
    const lines: string[] = [];
    receiver = spawn(process.execPath, ["--input-type=module", "-e", receiverExample()], {
      cwd: ROOT,
      env: { ...process.env, WEBHOOK_SECRET: endpoint.body.secret, PORT: String(port) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    receiver.stdout!.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
    await until(
      () =>
        fetch(url, { method: "POST", body: "{}" }).then(
          (r) => r.status,
          () => 0,
        ),
      (status) => status === 400,
    );

    const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
    const printed = await until(
      async () => lines.map((l) => JSON.parse(l)),
      (l) => l.length === 1,
    );
    const [event] = (await s.rest("GET", "/v1/events/?type=customer.created")).body.results;
    expect(printed).toEqual([{ id: event.id, type: "customer.created", object: customer.body.id }]);
    // delivered (204 recorded) ...
    const attempts = await until(
      () => s.rest("GET", `/v1/webhook_endpoints/${endpoint.body.id}/deliveries/`),
      (r) => r.body.results.length === 1,
    );
    expect(attempts.body.results[0]).toMatchObject({ event: event.id, status_code: 204, succeeded: true });
    // ... and sent again (a redelivery): handled once
    await s.rest("POST", `/v1/events/${event.id}/redeliver/`);
    await until(
      () => s.rest("GET", `/v1/webhook_endpoints/${endpoint.body.id}/deliveries/`),
      (r) => r.body.results.length === 2 && r.body.results[0].status_code === 204,
    );
    expect(lines).toHaveLength(1);

    // a message signed with another secret is refused
    const forged = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": "evt_forged",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": `v1,${randomBytes(32).toString("base64")}`,
      },
      body: JSON.stringify({ type: "invoice.paid", timestamp: new Date().toISOString(), data: { object: {} } }),
    });
    expect(forged.status).toBe(400);
    expect(lines).toHaveLength(1);
  });
});
