/**
 * Closed sets of addons and coupons as GraphQL enums (issue 16; docs/graphql.md "Enums"): addon
 * `applyScheme` (AddonApplyScheme), coupon `discountScheme` (the shared DiscountScheme: `percent`
 * and `amount`, REST `%` and `$`), `durationScheme`, `applyOn` and the catalogue `status`. GraphQL
 * answers the enum value names, refuses other values with a validation_error and filters with
 * `<Enum>Filter { equals, in }`; REST keeps the spec's strings in bodies, responses and filters
 * and answers any other string with a 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

const COUPON_FIELDS = "id discountScheme durationScheme durationTimes applyOn status currency { id }";

async function couponCount(): Promise<number> {
  const res = await s.graphql(`{ coupons(first: 1) { totalCount } }`);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.coupons.totalCount;
}

describe("catalogue enums over GraphQL", () => {
  it("answers enum value names and takes them as input; the service stores the spec's strings", async () => {
    const coupon = await s.graphql(
      `mutation($input: CouponInput!) { createCoupon(input: $input) { ${COUPON_FIELDS} } }`,
      {
        input: {
          name: "Fijo",
          discountScheme: "amount",
          amount: "5000",
          currency: "CLP",
          durationScheme: "limited",
          durationTimes: 3,
          applyOn: "line",
        },
      },
    );
    expect(coupon.body.errors).toBeUndefined();
    expect(coupon.body.data.createCoupon).toMatchObject({
      discountScheme: "amount",
      durationScheme: "limited",
      durationTimes: 3,
      applyOn: "line",
      status: "active",
      currency: { id: "CLP" },
    });
    // the same coupon over REST: the spec's `$`
    const rest = await s.rest("GET", `/v1/coupons/${coupon.body.data.createCoupon.id}/`);
    expect(rest.body).toMatchObject({
      discount_scheme: "$",
      duration_scheme: "limited",
      apply_on: "line",
      status: "active",
    });

    const addon = await s.graphql(
      `mutation { createAddon(input: { name: "Soporte", amount: "1000", currency: "CLP", applyScheme: recurring, ` +
        `durationTimes: 2 }) { applyScheme status durationTimes } }`,
    );
    expect(addon.body.errors).toBeUndefined();
    expect(addon.body.data.createAddon).toEqual({ applyScheme: "recurring", status: "active", durationTimes: 2 });

    const schema = await s.graphql(
      `{ __type(name: "Coupon") { fields { name type { kind name ofType { kind name } } } } }`,
    );
    const types = Object.fromEntries(
      schema.body.data.__type.fields.map(
        (f: { name: string; type: { ofType: { kind: string; name: string } | null } }) => [f.name, f.type.ofType],
      ),
    );
    expect(types.discountScheme).toEqual({ kind: "ENUM", name: "DiscountScheme" });
    expect(types.durationScheme).toEqual({ kind: "ENUM", name: "CouponDurationScheme" });
    expect(types.applyOn).toEqual({ kind: "ENUM", name: "CouponApplyOn" });
    expect(types.status).toEqual({ kind: "ENUM", name: "CatalogueStatus" });
  });

  it("refuses a value outside the enum with a validation_error naming the field, and writes nothing", async () => {
    const before = await couponCount();
    const bySpecString = await s.graphql(`mutation($input: CouponInput!) { createCoupon(input: $input) { id } }`, {
      input: { name: "C", amount: "10", discountScheme: "%" },
    });
    expect(bySpecString.body.data ?? null).toBeNull();
    expect(bySpecString.body.errors[0].extensions.code).toBe("validation_error");
    expect(bySpecString.body.errors[0].message).toContain("DiscountScheme");

    const literal = await s.graphql(
      `mutation { createCoupon(input: { name: "C", amount: "10", durationScheme: sometimes }) { id } }`,
    );
    expect(literal.body.errors[0].extensions.code).toBe("validation_error");
    expect(literal.body.errors[0].message).toContain("CouponDurationScheme");

    const addon = await s.graphql(`mutation($input: AddonInput!) { createAddon(input: $input) { id } }`, {
      input: { name: "A", amount: "1", currency: "CLP", applyScheme: "weekly" },
    });
    expect(addon.body.errors[0].extensions.code).toBe("validation_error");
    expect(await couponCount()).toBe(before);
  });

  it("filters with equals and in over the enum", async () => {
    const percent = await s.graphql(
      `mutation { createCoupon(input: { name: "Filtro %", amount: "15", discountScheme: percent }) { id } }`,
    );
    expect(percent.body.errors).toBeUndefined();
    const amount = await s.graphql(
      `mutation { createCoupon(input: { name: "Filtro $", amount: "700", discountScheme: amount, currency: "CLP" }) ` +
        `{ id } }`,
    );
    expect(amount.body.errors).toBeUndefined();
    const third = await s.graphql(`mutation { createCoupon(input: { name: "Filtro otro", amount: "20" }) { id } }`);
    expect(third.body.errors).toBeUndefined();
    const list = await s.graphql(
      `query($w: CouponWhere) { coupons(first: 100, where: $w) { edges { node { id discountScheme status } } } }`,
      {
        w: { discountScheme: { equals: "amount" }, name: { contains: "Filtro" } },
      },
    );
    expect(list.body.errors).toBeUndefined();
    const nodes = list.body.data.coupons.edges.map((e: { node: unknown }) => e.node);
    expect(nodes).toEqual([{ id: amount.body.data.createCoupon.id, discountScheme: "amount", status: "active" }]);

    const both = await s.graphql(
      `{ coupons(first: 100, where: { discountScheme: { in: [percent, amount] }, status: { equals: active }, name: { ` +
        `contains: "Filtro" } }) { totalCount } }`,
    );
    expect(both.body.errors).toBeUndefined();
    expect(both.body.data.coupons.totalCount).toBe(3);
    const none = await s.graphql(
      `{ coupons(first: 100, where: { status: { equals: archived }, name: { contains: "Filtro" } }) { totalCount } }`,
    );
    expect(none.body.data.coupons.totalCount).toBe(0);

    const badFilter = await s.graphql(
      `{ coupons(first: 1, where: { discountScheme: { equals: "%" } }) { totalCount } }`,
    );
    expect(badFilter.body.errors[0].extensions.code).toBe("validation_error");

    await s.graphql(
      `mutation { createAddon(input: { name: "Filtro recurrente", amount: "10", currency: "CLP", applyScheme: ` +
        `recurring }) { id } }`,
    );
    await s.graphql(`mutation { createAddon(input: { name: "Filtro único", amount: "10", currency: "CLP" }) { id } }`);
    const addons = await s.graphql(
      `{ addons(first: 100, where: { applyScheme: { equals: recurring }, name: { contains: "Filtro" } }) { edges { ` +
        `node { name applyScheme } } } }`,
    );
    expect(addons.body.errors).toBeUndefined();
    expect(addons.body.data.addons.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { name: "Filtro recurrente", applyScheme: "recurring" },
    ]);
  });
});

describe("catalogue enums over REST keep the spec's strings", () => {
  it("takes and prints % and $, filters by them, and refuses other strings with a 400 naming the field", async () => {
    const created = await s.rest("POST", "/v1/coupons/", {
      body: {
        name: "REST $",
        discount_scheme: "$",
        amount: 900,
        currency: "CLP",
        duration_scheme: "forever",
        apply_on: "invoice",
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      discount_scheme: "$",
      duration_scheme: "forever",
      apply_on: "invoice",
      status: "active",
    });

    const filtered = await s.rest("GET", "/v1/coupons/?discount_scheme=$&name__contains=REST");
    expect(filtered.status, JSON.stringify(filtered.body)).toBe(200);
    expect(filtered.body.results.map((c: { id: string }) => c.id)).toEqual([created.body.id]);
    const inList = await s.rest(
      "GET",
      `/v1/coupons/?discount_scheme__in=${encodeURIComponent("%,$")}&status=active&name__contains=REST`,
    );
    expect(inList.status, JSON.stringify(inList.body)).toBe(200);
    expect(inList.body.results.map((c: { id: string }) => c.id)).toEqual([created.body.id]);

    // GraphQL's names are not REST strings
    const byName = await s.rest("GET", "/v1/coupons/?discount_scheme=amount");
    expect(byName.status).toBe(400);
    expect(byName.body.error.code).toBe("validation_error");
    expect(byName.body.error.fields.discount_scheme).toEqual(["must be one of $, %"]);
    const badStatus = await s.rest("GET", "/v1/coupons/?status=gone");
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.fields.status).toEqual(["must be one of active, archived"]);

    for (const [field, value, allowed] of [
      ["discount_scheme", "percent", "$, %"],
      ["duration_scheme", "sometimes", "forever, limited, once"],
      ["apply_on", "customer", "invoice, line"],
    ] as const) {
      const res = await s.rest("POST", "/v1/coupons/", { body: { name: "C", amount: 5, [field]: value } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.fields[field]).toEqual([`must be one of ${allowed}`]);
    }
  });

  it("addons: apply_scheme in and out, filter, and a 400 for another string", async () => {
    const created = await s.rest("POST", "/v1/addons/", {
      body: { name: "REST recurrente", amount: 100, currency: "CLP", apply_scheme: "recurring" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ apply_scheme: "recurring", status: "active" });
    const list = await s.rest("GET", "/v1/addons/?apply_scheme__in=recurring&name=REST%20recurrente");
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.results.map((a: { id: string }) => a.id)).toEqual([created.body.id]);

    const bad = await s.rest("POST", "/v1/addons/", {
      body: { name: "A", amount: 1, currency: "CLP", apply_scheme: "weekly" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.apply_scheme).toEqual(["must be one of one_time, recurring"]);
    const badFilter = await s.rest("GET", "/v1/addons/?apply_scheme=weekly");
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.error.fields.apply_scheme).toEqual(["must be one of one_time, recurring"]);
    const textOperator = await s.rest("GET", "/v1/addons/?apply_scheme__contains=one");
    expect(textOperator.status).toBe(400);
    expect(Object.keys(textOperator.body.error.fields)).toEqual(["apply_scheme__contains"]);
  });
});
