import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

describe("reference lists", () => {
  it("lists Chile's document types with every flag of the spec", async () => {
    const res = await s.rest("GET", "/v1/generals/documents/?page_size=100");
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(11);
    const byId = Object.fromEntries(res.body.results.map((d: any) => [d.id, d]));
    expect(Object.keys(byId).sort()).toEqual([
      "CL110",
      "CL111",
      "CL112",
      "CL33",
      "CL34",
      "CL39",
      "CL41",
      "CL46",
      "CL52",
      "CL56",
      "CL61",
    ]);
    expect(byId.CL33).toEqual({
      id: "CL33",
      currency: {
        id: "CLP",
        conversion: null,
        country: "CL",
        default: true,
        is_chargeable: true,
        available: true,
        name: "Peso chileno",
        name_en: "Chilean peso",
        rounded: true,
      },
      tax: 19,
      code: 33,
      name: "Factura electrónica",
      has_taxes: true,
      has_taxes_detail: true,
      has_lines_total: true,
      has_local_format: true,
      hold_taxes: false,
      is_foreign: false,
      is_sale: true,
      is_purshase: false,
      is_order: false,
      send: true,
      given: true,
      country: "CL",
    });
    expect(byId.CL52.is_order).toBe(true);
    expect(byId.CL46.is_purshase).toBe(true);
    expect(byId.CL34.tax).toBe(0);
    const orders = await s.rest("GET", "/v1/generals/documents/?is_order=true");
    expect(orders.body.results.map((d: any) => d.id)).toEqual(["CL52"]);
  });

  it("filters currencies by country (single and __in) and name (__exact, __contains, __icontains)", async () => {
    const ids = async (q: string) =>
      (await s.rest("GET", `/v1/generals/currencies/?${q}`)).body.results.map((c: any) => c.id);
    expect(await ids("country=CL")).toEqual(["CLF", "CLP"]);
    expect(await ids("country__in=CL,US")).toEqual(["CLF", "CLP", "USD"]);
    expect(await ids("name__exact=Euro")).toEqual(["EUR"]);
    expect(await ids("name__contains=Peso")).toEqual(["ARS", "CLP", "COP", "MXN"]);
    expect(await ids("name__icontains=peso chileno")).toEqual(["CLP"]);
    const clf = (await s.rest("GET", "/v1/generals/currencies/?country=CL")).body.results[0];
    expect(clf).toMatchObject({ id: "CLF", conversion: "CLP", rounded: false, default: false });
    expect((await s.rest("GET", "/v1/generals/currencies/")).body.count).toBe(8);
  });

  it("lists Chile's 16 regions with ISO 3166-2 codes and filters them", async () => {
    const res = await s.rest("GET", "/v1/generals/states/?country=CL&page_size=50");
    expect(res.body.count).toBe(16);
    expect(res.body.results.find((r: any) => r.id === "CL-NB")).toEqual({
      id: "CL-NB",
      code: "NB",
      country: "CL",
      name: "Ñuble",
    });
    const named = await s.rest("GET", "/v1/generals/states/?name__icontains=los");
    // "Los Lagos", "Los Ríos" and "Aysén del General Carlos Ibáñez del Campo"
    expect(named.body.results.map((r: any) => r.id).sort()).toEqual(["CL-AI", "CL-LL", "CL-LR"]);
    expect((await s.rest("GET", "/v1/generals/states/?country__in=AR")).body.count).toBe(0);
  });

  it("needs a key and rejects unknown filters", async () => {
    expect((await s.rest("GET", "/v1/generals/currencies/", { key: null })).status).toBe(401);
    const res = await s.rest("GET", "/v1/generals/states/?colour=red");
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toHaveProperty("colour");
  });
});
