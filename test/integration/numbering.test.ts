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
      const res = await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL33", lines: [{ name: `L${i}`, quantity: 1, amount: 1000 }] },
      });
      ids.push(res.body.id);
    }
    const results = await Promise.all(ids.map((id) => s.rest("GET", `/v1/invoices/${id}/finalize/`)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const numbers = results.map((r) => r.body.number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const counter = await s.database.prisma.documentCounter.findFirstOrThrow({
      where: { organizationId: s.orgs.acme, documentTypeId: "CL33", testMode: true },
    });
    expect(counter.lastNumber).toBe(20);
  });

  it("finalizing the same invoice concurrently numbers it once and refuses the rest with 409", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const inv = (await s.rest("POST", "/v1/invoices/", { body: { customer, lines: [{ name: "x", amount: 1 }] } })).body;
    const results = await Promise.all(
      Array.from({ length: 5 }, () => s.rest("GET", `/v1/invoices/${inv.id}/finalize/`)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
  });

  it("numbers per organization and mode independently", async () => {
    const mk = async (key: string) => {
      const customer = (await s.rest("POST", "/v1/customers/", { key, body: chileanCustomer() })).body.id;
      const inv = (
        await s.rest("POST", "/v1/invoices/", { key, body: { customer, lines: [{ name: "x", amount: 1 }] } })
      ).body;
      return (await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`, { key })).body.number;
    };
    expect(await mk(s.keys.other)).toBe(1);
  });

  it(
    "live mode refuses a Chilean tax document before its SII set-up: 409 naming what to set up, nothing " + "numbered",
    async () => {
      const key = s.keys.acmeLive;
      const customer = (await s.rest("POST", "/v1/customers/", { key, body: chileanCustomer() })).body.id;
      const inv = (
        await s.rest("POST", "/v1/invoices/", { key, body: { customer, lines: [{ name: "x", amount: 1 }] } })
      ).body;
      const res = await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`, { key });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("invalid_state");
      expect(res.body.error.message).toBe(
        // the test server's organizations have a RUT in both modes' tax profiles: only the certificate is missing
        "live mode issues CL33 only as an SII electronic tax document (DTE), and live mode is not set up with SII: " +
          "upload the live mode signing certificate (POST /v1/billers/built_in/certificates/, a PKCS#12); " +
          "then upload a CAF for CL33 (POST /v1/billers/built_in/cafs/). Test mode issues it meanwhile as a non-tax " +
          "document in an internal series (docs/sii-setup.md)",
      );
      const after = (await s.rest("GET", `/v1/invoices/${inv.id}/`, { key })).body;
      expect([after.status, after.number, after.numbering]).toEqual(["draft", null, null]);
      expect(
        await s.database.prisma.documentCounter.count({ where: { organizationId: s.orgs.acme, testMode: false } }),
      ).toBe(0);
      // the same through GraphQL
      const gql = await s.graphql(`mutation($id: ID!) { finalizeInvoice(id: $id) { id } }`, { id: inv.id }, key);
      expect(gql.body.errors[0].extensions.code).toBe("invalid_state");
      expect(gql.body.errors[0].message).toContain("live mode is not set up with SII");
    },
  );
});
