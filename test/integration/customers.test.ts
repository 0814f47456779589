import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

async function customerCount() {
  return s.database.prisma.customer.count();
}

describe("POST /v1/customers/", () => {
  it("creates a customer with the spec's fields, RUT normalized, country and state as codes", async () => {
    const res = await s.rest("POST", "/v1/customers/", {
      body: chileanCustomer({ metadata: { crm: "42" }, contacts: [{ name: "Ana", email: "ana@cliente.cl" }] }),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "Cliente SpA",
      address: "Av. Siempre Viva 123",
      country: "CL",
      state: "RM",
      tax_id: "76042235-5",
      email: "pagos@cliente.cl",
      metadata: { crm: "42" },
      contacts: [{ name: "Ana", email: "ana@cliente.cl", phone: null, role: null }],
      currency: null,
      website: null,
    });
    expect(res.body.id).toMatch(/^cus_[0-9A-Za-z]{24}$/);
    expect(res.body.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
    const row = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row).toMatchObject({ organizationId: s.orgs.acme, testMode: true, stateId: "CL-RM", taxId: "76042235-5" });
  });

  it("accepts a free-text state for a country without seeded states", async () => {
    const res = await s.rest("POST", "/v1/customers/", { body: { name: "US Inc", country: "us", state: "CA" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ country: "US", state: "CA" });
  });

  const badInputs: [string, Record<string, unknown>, string][] = [
    ["a state code over six characters", { country: "US", state: "CALIFORNIA" }, "state"],
    ["a Chilean state that does not exist", { country: "CL", state: "XX" }, "state"],
    ["a country code that is not two letters", { country: "CHL" }, "country"],
    ["an unknown country", { country: "ZZ" }, "country"],
    ["a RUT with a wrong check digit", { country: "CL", tax_id: "76042235-4" }, "tax_id"],
    ["a malformed e-mail", { email: "not-an-email" }, "email"],
    ["a wrong type", { name: 42 }, "name"],
    ["an unknown field", { favourite_colour: "red" }, "favourite_colour"],
    ["an unknown currency", { currency: "XYZ" }, "currency"],
  ];
  for (const [what, body, field] of badInputs) {
    it(`rejects ${what} with a 400 naming ${field}, writing nothing`, async () => {
      const before = await customerCount();
      const res = await s.rest("POST", "/v1/customers/", { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields)).toContain(field);
      expect(await customerCount()).toBe(before);
    });
  }

  it("needs an API key (401) and rejects an unknown one", async () => {
    expect((await s.rest("POST", "/v1/customers/", { key: null, body: { name: "x" } })).status).toBe(401);
    const res = await s.rest("GET", "/v1/customers/", { key: "sk_test_unknownunknownunknown" });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("authentication_required");
  });
});

describe("GET and PATCH /v1/customers/{id}/", () => {
  it("retrieves with country and state objects, updates given fields, merges metadata", async () => {
    const created = (
      await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ metadata: { a: "1", b: "2" } }) })
    ).body;
    const got = await s.rest("GET", `/v1/customers/${created.id}/`);
    expect(got.status).toBe(200);
    expect(got.body.country).toEqual({
      id: "CL",
      name: "Chile",
      name_en: "Chile",
      phone_code: "+56",
      has_regulation: true,
      tax_percent: 19,
    });
    expect(got.body.state).toEqual({
      id: "CL-RM",
      code: "RM",
      country: "CL",
      name: "Región Metropolitana de Santiago",
    });
    expect(got.body.sources).toEqual([]);
    await s.database.prisma.source.create({
      data: {
        id: "sou_testsource000000000000001",
        organizationId: s.orgs.acme,
        testMode: true,
        customerId: created.id,
        gateway: "test",
        usage: "reusable",
        data: { last4: "4242" },
      },
    });
    const withSource = await s.rest("GET", `/v1/customers/${created.id}/`);
    expect(withSource.body.sources).toHaveLength(1);
    expect(withSource.body.sources[0]).toMatchObject({
      id: "sou_testsource000000000000001",
      gateway: "test",
      usage: "reusable",
      status: "chargeable",
      flow: "none",
      customer: created.id,
      data: { last4: "4242" },
      amount: null,
    });
    const bySource = await s.rest("GET", "/v1/customers/?sources=sou_testsource000000000000001");
    expect(bySource.body.results.map((c: any) => c.id)).toEqual([created.id]);

    const patched = await s.rest("PATCH", `/v1/customers/${created.id}`, {
      body: {
        email: "nuevo@cliente.cl",
        name: "Cliente Nuevo",
        website: "https://cliente.cl",
        metadata: { a: "", c: "3" },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      email: "nuevo@cliente.cl",
      name: "Cliente Nuevo",
      website: "https://cliente.cl",
      address: "Av. Siempre Viva 123",
      metadata: { b: "2", c: "3" },
    });
    expect(patched.body.metadata).not.toHaveProperty("a");
  });

  it("rejects a bad update with a 400 and leaves the customer unchanged", async () => {
    const created = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body;
    const res = await s.rest("PATCH", `/v1/customers/${created.id}/`, {
      body: { name: "Changed", tax_id: "11111111-2" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toHaveProperty("tax_id");
    const row = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.name).toBe("Cliente SpA");
  });

  it("hides other organizations' and other modes' customers (404, as if absent)", async () => {
    const created = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body;
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      const got = await s.rest("GET", `/v1/customers/${created.id}/`, { key });
      expect(got.status).toBe(404);
      expect(got.body.error.code).toBe("not_found");
      const patched = await s.rest("PATCH", `/v1/customers/${created.id}/`, { key, body: { name: "hijack" } });
      expect(patched.status).toBe(404);
    }
    expect((await s.rest("GET", "/v1/customers/cus_doesnotexist000000000000/")).status).toBe(404);
    expect((await s.rest("GET", "/v1/customers/nonsense/")).status).toBe(404);
  });
});

describe("GET /v1/customers/ (list)", () => {
  it("pages with count/next/previous and filters with the spec's operators", async () => {
    const other = await startTestServer();
    try {
      for (let i = 0; i < 5; i++)
        await other.rest("POST", "/v1/customers/", {
          body: chileanCustomer({ name: `Chile ${i}`, email: `c${i}@x.cl` }),
        });
      await other.rest("POST", "/v1/customers/", { body: { name: "Lima SAC", country: "PE", email: "pe@x.pe" } });
      await other.rest("POST", "/v1/customers/", { body: { name: "Gringo LLC", country: "US", email: "us@x.com" } });
      await other.rest("POST", "/v1/customers/", { key: other.keys.other, body: { name: "Not mine", country: "CL" } });

      const page1 = await other.rest("GET", "/v1/customers/?page_size=3");
      expect(page1.status).toBe(200);
      expect(page1.body.count).toBe(7);
      expect(page1.body.results).toHaveLength(3);
      expect(page1.body.previous).toBeNull();
      expect(page1.body.next).toBe(`${other.url}/v1/customers/?page_size=3&page=2`);
      const page3 = await other.rest("GET", "/v1/customers/?page_size=3&page=3");
      expect(page3.body.results).toHaveLength(1);
      expect(page3.body.next).toBeNull();
      expect(page3.body.previous).toBe(`${other.url}/v1/customers/?page_size=3&page=2`);
      const all = [
        ...page1.body.results,
        ...(await other.rest("GET", "/v1/customers/?page_size=3&page=2")).body.results,
        ...page3.body.results,
      ];
      expect(new Set(all.map((c: any) => c.id)).size).toBe(7);
      expect(page1.body.results[0].country).toHaveProperty("name_en");

      const names = async (q: string) =>
        (await other.rest("GET", `/v1/customers/?${q}`)).body.results.map((c: any) => c.name).sort();
      expect(await names("country__name=Per%C3%BA")).toEqual(["Lima SAC"]);
      expect(await names("country__name__icontains=united")).toEqual(["Gringo LLC"]);
      expect(await names("country__in=PE,US")).toEqual(["Gringo LLC", "Lima SAC"]);
      expect(await names("name__icontains=chile%203")).toEqual(["Chile 3"]);
      expect(await names("name__contains=chile")).toEqual([]);
      expect(await names("email__exact=pe@x.pe")).toEqual(["Lima SAC"]);
      expect(await names("tax_id=76042235-5")).toHaveLength(5);
      expect(await names("created__gte=2000-01-01&created__lte=2999-01-01")).toHaveLength(7);
      expect(await names("created__lte=2000-01-01")).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("rejects unknown filters, operators and bad page sizes with a 400", async () => {
    for (const q of ["colour=red", "name__startswith=a", "page_size=101", "page=0", "created__gte=yesterday"]) {
      const res = await s.rest("GET", `/v1/customers/?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields)[0]).toBe(q.split("=")[0]);
    }
  });
});
