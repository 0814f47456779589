/**
 * Events and webhooks (docs/webhooks.md) over real HTTP: an endpoint receives each event of its
 * organization and mode as a Standard Webhooks message that the `standardwebhooks` package verifies;
 * every attempt is recorded; events are listed and read.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { startWebhookReceiver, until, type WebhookReceiver } from "../helpers/webhook-receiver.js";

let s: TestServer;
let receiver: WebhookReceiver;
beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) }, webhookWorker: true });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await s?.close();
  await receiver?.close();
});

describe("webhook endpoints and delivery", () => {
  it("delivers a customer.created event signed as Standard Webhooks says", async () => {
    const created = await s.rest("POST", "/v1/webhook_endpoints/", {
      body: { url: receiver.url, enabled_events: ["customer.created", "customer.updated"], description: "CRM" },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.body).toMatchObject({
      url: receiver.url,
      enabled_events: ["customer.created", "customer.updated"],
      status: "enabled",
      description: "CRM",
    });
    receiver.secrets.push(created.body.secret);
    const read = await s.rest("GET", `/v1/webhook_endpoints/${created.body.id}/`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("secret");

    const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
    expect(customer.status).toBe(201);
    const [message] = await receiver.waitFor(1);
    expect(message.verifiedWith).toEqual([created.body.secret]);
    expect(message.payload.type).toBe("customer.created");
    expect(message.payload.data.object).toEqual((await s.rest("GET", `/v1/customers/${customer.body.id}/`)).body);
    const events = await s.rest("GET", "/v1/events/?type=customer.created");
    expect(events.status).toBe(200);
    expect(events.body.count).toBe(1);
    expect(events.body.results[0]).toMatchObject({ id: message.id, type: "customer.created", test_mode: true });
    expect(events.body.results[0].data.object.id).toBe(customer.body.id);

    const updated = await s.rest("PATCH", `/v1/customers/${customer.body.id}/`, { body: { name: "Nuevo Nombre SpA" } });
    expect(updated.status).toBe(200);
    const [, second] = await receiver.waitFor(2);
    expect(second.payload.type).toBe("customer.updated");
    expect(second.payload.data.previous_attributes).toEqual({ name: "Cliente SpA" });
    expect(second.payload.data.object.name).toBe("Nuevo Nombre SpA");

    // recorded once the receiver has answered; the count is read after the page (docs/graphql.md "Counting"),
    // so an attempt recorded between them can be counted and not listed yet: wait for both
    const deliveries = await until(
      () => s.rest("GET", `/v1/webhook_endpoints/${created.body.id}/deliveries/`),
      (r) => r.status !== 200 || (r.body.count === 2 && r.body.results.length === 2),
    );
    expect(deliveries.status, deliveries.text).toBe(200);
    expect(deliveries.body.count).toBe(2);
    expect(deliveries.body.results[1]).toMatchObject({
      event: message.id,
      status_code: 204,
      succeeded: true,
      attempt: 1,
    });
  });
});
