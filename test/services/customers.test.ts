/**
 * services/customers.ts createCustomer and updateCustomer called directly (resolveCustomerColumns'
 * steps: contact columns, country and state, tax id, commune and city, contacts and settings, test
 * clock and dunning): the stored row, and the 400's fields, in the order the steps find them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCustomer, updateCustomer } from "../../src/services/customers.js";
import { rejection, startServiceDatabase, type ServiceDatabase } from "../helpers/service-context.js";

let s: ServiceDatabase;
beforeAll(async () => {
  s = await startServiceDatabase();
});
afterAll(async () => s?.close());

describe("createCustomer", () => {
  it("stores the checked columns: RUT normalized, country upper case, state by code, official commune", async () => {
    const created = await createCustomer(s.acme, {
      name: "Cliente SpA",
      address: "",
      country: "cl",
      state: "RM",
      taxId: "76.042.235-5",
      email: "pagos@cliente.cl",
      commune: "nunoa",
      city: "Santiago",
      contacts: [{ name: "Ana", email: "ana@cliente.cl" }],
      metadata: { crm: "42" },
    });
    const row = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: created.id } });
    expect(row).toMatchObject({
      organizationId: s.acme.auth.organizationId,
      testMode: true,
      name: "Cliente SpA",
      address: null,
      countryId: "CL",
      stateId: "CL-RM",
      stateCode: "RM",
      taxId: "76042235-5",
      email: "pagos@cliente.cl",
      commune: "Ñuñoa",
      city: "Santiago",
      contacts: [{ name: "Ana", email: "ana@cliente.cl", phone: null, role: null }],
      metadata: { crm: "42" },
      testClockId: null,
      dunningCampaignId: null,
    });
  });

  it("names every bad field in one 400, in the steps' order, and writes nothing", async () => {
    const before = await s.database.prisma.customer.count();
    const error = await rejection(
      createCustomer(s.acme, {
        name: "x".repeat(201),
        email: "not-an-address",
        website: "ftp://example.com",
        country: "CL",
        taxId: "76042235-4",
        commune: "Gotham",
        city: "x".repeat(21),
        contacts: [{ email: "nope" }],
        dunningCampaign: "dun_unknown",
      }),
    );
    expect(error.code).toBe("validation_error");
    expect(error.status).toBe(400);
    expect(Object.keys(error.fields)).toEqual([
      "name",
      "email",
      "website",
      "tax_id",
      "commune",
      "city",
      "contacts.0.email",
      "dunning_campaign",
    ]);
    expect(error.fields.name).toEqual(["must have at most 200 characters"]);
    expect(error.fields.tax_id).toEqual([
      "must be a valid Chilean RUT (for example 76042235-5); the check digit does not match",
    ]);
    expect(error.fields.city).toEqual(["must have at most 20 characters (SII's CiudadRecep)"]);
    expect(error.message).toMatch(/^Invalid customer: /);
    expect(await s.database.prisma.customer.count()).toBe(before);
  });

  it("refuses an unknown country and a malformed one", async () => {
    expect((await rejection(createCustomer(s.acme, { name: "A", country: "ZZ" }))).fields).toEqual({
      country: ["unknown country ZZ"],
    });
    expect((await rejection(createCustomer(s.acme, { name: "A", country: "CHL" }))).fields).toEqual({
      country: ["must be a two-letter ISO 3166-1 code"],
    });
  });
});

describe("updateCustomer", () => {
  it("changes only the given columns, merges metadata, re-checks tax id, commune, city on a new country", async () => {
    const { id } = await createCustomer(s.acme, {
      name: "Cliente SpA",
      country: "CL",
      state: "RM",
      taxId: "76042235-5",
      commune: "Providencia",
      city: "x".repeat(30).slice(0, 20),
      metadata: { a: "1", b: "2" },
    });
    await updateCustomer(s.acme, id, { phone: "+56 2 2345 6789", metadata: { b: "", c: "3" } });
    expect(await s.database.prisma.customer.findUniqueOrThrow({ where: { id } })).toMatchObject({
      name: "Cliente SpA",
      phone: "+56 2 2345 6789",
      commune: "Providencia",
      metadata: { a: "1", c: "3" },
    });
    // a stored tax id, commune and city are re-checked against a new country: to Chile, each must be Chile's
    const { id: abroad } = await createCustomer(s.acme, {
      name: "Cliente SA",
      country: "AR",
      taxId: "20-12345678-9",
      commune: "Palermo Soho",
      city: "Ciudad Autónoma de Buenos Aires",
    });
    const moved = await rejection(updateCustomer(s.acme, abroad, { country: "CL" }));
    expect(Object.keys(moved.fields)).toEqual(["tax_id", "commune", "city"]);
    expect(moved.fields.city).toEqual(["must have at most 20 characters (SII's CiudadRecep)"]);
    expect(await s.database.prisma.customer.findUniqueOrThrow({ where: { id: abroad } })).toMatchObject({
      countryId: "AR",
      taxId: "20-12345678-9",
    });
    const chilean = await updateCustomer(s.acme, abroad, {
      country: "CL",
      taxId: "760422355",
      commune: "ñuñoa",
      city: "Santiago",
    });
    expect(chilean).toMatchObject({ countryId: "CL", taxId: "76042235-5", commune: "Ñuñoa", city: "Santiago" });
  });

  it("refuses a test clock on update and another organization's customer (404)", async () => {
    const { id } = await createCustomer(s.acme, { name: "Cliente SpA" });
    expect((await rejection(updateCustomer(s.acme, id, { testClock: "clk_x" }))).fields).toEqual({
      test_clock: ["is set when the customer is created and cannot change"],
    });
    const foreign = await rejection(updateCustomer(s.other, id, { name: "Mine" }));
    expect([foreign.code, foreign.status]).toEqual(["not_found", 404]);
    expect((await s.database.prisma.customer.findUniqueOrThrow({ where: { id } })).name).toBe("Cliente SpA");
  });
});
