/** Idempotency-Key on POST (REST and GraphQL): one effect per key, the first answer replayed. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customer: string;
beforeAll(async () => {
  s = await startTestServer();
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

async function post(path: string, body: unknown, key: string | null, apiKey = s.keys.acme) {
  const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${apiKey}` };
  if (key !== null) headers["idempotency-key"] = key;
  const res = await fetch(`${s.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, replayed: res.headers.get("idempotent-replayed") };
}

describe("Idempotency-Key", () => {
  it("creates once and replays the first answer for the same key", async () => {
    const body = { customer, amount: 1500, currency: "CLP", description: "una vez" };
    const first = await post("/v1/payments/", body, "pay-once-1");
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    const again = await post("/v1/payments/", body, "pay-once-1");
    expect(again).toEqual({ status: 201, body: first.body, replayed: "true" });
    expect(await s.database.prisma.payment.count({ where: { description: "una vez" } })).toBe(1);
  });

  it("runs concurrent requests with one key once", async () => {
    const body = { customer, amount: 1700, currency: "CLP", description: "carrera" };
    const results = await Promise.all(Array.from({ length: 6 }, () => post("/v1/payments/", body, "race-1")));
    expect(await s.database.prisma.payment.count({ where: { description: "carrera" } })).toBe(1);
    const created = results.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of results.filter((r) => r.status !== 201)) expect(r.body.error.code).toBe("invalid_state");
  });

  it("refuses the key with another body or path (400), and keeps keys per organization", async () => {
    await post("/v1/payments/", { customer, amount: 100, currency: "CLP" }, "reuse-1");
    const otherBody = await post("/v1/payments/", { customer, amount: 200, currency: "CLP" }, "reuse-1");
    expect(otherBody.status).toBe(400);
    expect(otherBody.body.error.fields.idempotency_key[0]).toContain("was used by another request");
    const otherPath = await post("/v1/sources/", { gateway: "test", data: { token: "tok_visa" } }, "reuse-1");
    expect(otherPath.status).toBe(400);
    const otherCustomer = (await s.rest("POST", "/v1/customers/", { key: s.keys.other, body: chileanCustomer() })).body
      .id;
    const otherOrg = await post(
      "/v1/payments/",
      { customer: otherCustomer, amount: 100, currency: "CLP" },
      "reuse-1",
      s.keys.other,
    );
    expect(otherOrg.status).toBe(201);
  });

  it("stores and replays a 400, and runs again once the key is older than 24 hours", async () => {
    const bad = await post("/v1/payments/", { customer, amount: -1, currency: "CLP" }, "bad-1");
    expect(bad.status).toBe(400);
    expect(await post("/v1/payments/", { customer, amount: -1, currency: "CLP" }, "bad-1")).toEqual({
      ...bad,
      replayed: "true",
    });

    const body = { customer, amount: 1900, currency: "CLP", description: "ayer" };
    await post("/v1/payments/", body, "old-1");
    await s.database.prisma.idempotencyKey.updateMany({
      where: { key: "old-1" },
      data: { createdAt: new Date(Date.now() - 25 * 3600_000) },
    });
    const rerun = await post("/v1/payments/", body, "old-1");
    expect(rerun.status).toBe(201);
    expect(rerun.replayed).toBeNull();
    expect(await s.database.prisma.payment.count({ where: { description: "ayer" } })).toBe(2);
  });

  it("works for GraphQL mutations too, and rejects a key that is too long", async () => {
    const mutation = {
      query:
        `mutation { createPayment(input: { customer: "${customer}", amount: "2100", currency: "CLP", ` +
        `description: "gql" }) { id } }`,
    };
    const first = await post("/graphql", mutation, "gql-1");
    const again = await post("/graphql", mutation, "gql-1");
    expect(again.body).toEqual(first.body);
    expect(again.replayed).toBe("true");
    expect(await s.database.prisma.payment.count({ where: { description: "gql" } })).toBe(1);
    const tooLong = await post("/v1/payments/", { customer, amount: 100, currency: "CLP" }, "k".repeat(256));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.fields).toHaveProperty("idempotency_key");
  });
});
