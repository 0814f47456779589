import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

describe("numbering at finalize", () => {
  it("gives 20 concurrent finalizes the numbers 1..20, each once", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await s.rest("POST", "/v1/invoices/", { body: { customer, document: "CL33", lines: [{ name: `L${i}`, quantity: 1, amount: 1000 }] } });
      ids.push(res.body.id);
    }
    const results = await Promise.all(ids.map((id) => s.rest("GET", `/v1/invoices/${id}/finalize/`)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const numbers = results.map((r) => r.body.number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const counter = await s.database.prisma.documentCounter.findFirstOrThrow({ where: { organizationId: s.orgs.acme, documentTypeId: "CL33", testMode: true } });
    expect(counter.lastNumber).toBe(20);
  });

  it("finalizing the same invoice concurrently numbers it once and refuses the rest with 409", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const inv = (await s.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "x", amount: 1 }] } })).body;
    const results = await Promise.all(Array.from({ length: 5 }, () => s.rest("GET", `/v1/invoices/${inv.id}/finalize/`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
  });

  it("numbers per organization and mode independently", async () => {
    const mk = async (key: string) => {
      const customer = (await s.rest("POST", "/v1/customers/", { key, body: chileanCustomer() })).body.id;
      const inv = (await s.rest("POST", "/v1/invoices/", { key, body: { customer, lines: [{ name: "x", amount: 1 }] } })).body;
      return (await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`, { key })).body.number;
    };
    expect(await mk(s.keys.other)).toBe(1);
    expect(await mk(s.keys.acmeLive)).toBe(1);
  });
});
