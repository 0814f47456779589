/**
 * The catalogue over REST and GraphQL (spec "Product", the plan/addon/coupon objects of
 * "Subscription"; docs/catalogue.md): products with nested plans, plans, addons and coupons,
 * list filters and pagination, archive instead of delete when subscriptions use a plan, tenancy,
 * and bad input (400 naming the field, nothing written).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/infra/ids.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

const TIERS = [
  { up_to: 5, unit_amount: 1000, flat_amount: 0 },
  { up_to: 10, unit_amount: 800, flat_amount: 500 },
  { up_to: null, unit_amount: 500, flat_amount: 0 },
];

async function product(body: Record<string, unknown> = {}) {
  const res = await s.rest("POST", "/v1/products/", {
    body: {
      name: "Hosting",
      unit_label: "server",
      plans: [{ name: "Mensual", amount: 10000, currency: "CLP" }],
      ...body,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Row counts of the catalogue tables (to assert that a failed request wrote nothing). */
async function counts() {
  const p = s.database.prisma;
  const [products, plans, addons, coupons] = await Promise.all([
    p.product.count(),
    p.plan.count(),
    p.addon.count(),
    p.coupon.count(),
  ]);
  return { products, plans, addons, coupons };
}

/** A subscription of a new customer with one line on `planId` (subscriptions have no API yet). */
async function subscribe(planId: string, extra: { addonId?: string; couponId?: string } = {}) {
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: `Sub ${planId}` }) })).body
    .id;
  const p = s.database.prisma;
  const subscription = await p.subscription.create({
    data: {
      id: newId("sub"),
      organizationId: s.orgs.acme,
      testMode: true,
      documentTypeId: "CL33",
      customerId: customer,
      dateStart: new Date("2026-11-01"),
      nextBilling: new Date("2026-12-01"),
      userEmail: "ops@acme.cl",
      couponId: extra.couponId ?? null,
    },
  });
  const parent = { subscriptionId: subscription.id, organizationId: subscription.organizationId };
  await p.subscriptionLine.create({ data: { id: newId("lin"), ...parent, planId } });
  if (extra.addonId)
    await p.subscriptionAddon.create({ data: { id: newId("lin"), ...parent, addonId: extra.addonId } });
  return subscription.id;
}

/** Expects a 400 validation_error naming `field`, and no catalogue row written. */
async function expectRejected(method: string, path: string, body: unknown, field: string) {
  const before = await counts();
  const res = await s.rest(method, path, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  expect(Object.keys(res.body.error.fields), JSON.stringify(res.body.error)).toContain(field);
  expect(await counts()).toEqual(before);
  return res.body.error;
}

describe("products over REST", () => {
  it("creates a product with its nested plans, in the given order, and prints the spec's fields", async () => {
    const res = await s.rest("POST", "/v1/products/", {
      body: {
        name: "API",
        unit_label: "request",
        metadata: { team: "core" },
        plans: [
          { name: "Básico", sku: "API-B", amount: "9990", currency: "CLP", frequency: "monthly" },
          {
            name: "Uso",
            currency: "clp",
            frequency: { id: "yearly" },
            usage_scheme: "metered",
            usage_aggregation: "max",
            tiers_mode: "graduated",
            tiers: TIERS,
            exempt: true,
          },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const p = res.body;
    expect(p.id).toMatch(/^pro_[0-9A-Za-z]{24}$/);
    expect(p).toMatchObject({
      name: "API",
      unit_label: "request",
      status: "active",
      test_mode: true,
      archived: null,
      metadata: { team: "core" },
    });
    expect(p.created).toMatch(ISO);
    expect(p.updated).toMatch(ISO);
    expect(p.plans.map((x: any) => x.name)).toEqual(["Básico", "Uso"]);
    const [basic, usage] = p.plans;
    expect(basic).toMatchObject({
      sku: "API-B",
      product: p.id,
      amount: 9990,
      tiers: [],
      tiers_mode: null,
      exempt: false,
      usage_scheme: "licensed",
      usage_aggregation: "sum",
      frequency: { id: "monthly", name: "Monthly" },
      status: "active",
      archived: null,
    });
    expect(basic.id).toMatch(/^pla_/);
    expect(basic.currency).toMatchObject({ id: "CLP", rounded: true });
    expect(usage).toMatchObject({
      amount: 0,
      tiers_mode: "graduated",
      tiers: TIERS,
      exempt: true,
      usage_scheme: "metered",
      usage_aggregation: "max",
      frequency: { id: "yearly", name: "Yearly" },
    });
    // decimals are JSON numbers, printed exactly
    expect(res.text).toContain('"amount":9990');

    const got = await s.rest("GET", `/v1/products/${p.id}/`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(p);
  });

  it("names the plan default after the product; every frequency has a name", async () => {
    const p = await product({
      name: "Soporte",
      plans: ["daily", "weekly", "monthly", "quarterly", "yearly"].map((frequency) => ({
        amount: 1,
        currency: "CLP",
        frequency,
      })),
    });
    expect(p.plans.map((x: any) => [x.name, x.frequency.name])).toEqual([
      ["Soporte", "Daily"],
      ["Soporte", "Weekly"],
      ["Soporte", "Monthly"],
      ["Soporte", "Quarterly"],
      ["Soporte", "Yearly"],
    ]);
  });

  it("updates name, unit_label and metadata; plans are not changed through the product", async () => {
    const p = await product({ metadata: { a: "1", b: "2" } });
    const res = await s.rest("PATCH", `/v1/products/${p.id}/`, {
      body: { name: "Hosting Pro", unit_label: "", metadata: { a: "", c: "3" }, status: "archived", id: "x" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      name: "Hosting Pro",
      unit_label: null,
      metadata: { b: "2", c: "3" },
      status: "active",
    });
    expect(res.body.plans).toHaveLength(1);
    const plans = await s.rest("PATCH", `/v1/products/${p.id}/`, {
      body: { plans: [{ name: "x", amount: 1, currency: "CLP" }] },
    });
    expect(plans.status).toBe(400);
    expect(plans.body.error.fields.plans[0]).toMatch(/POST \/v1\/plans/);
  });

  it("deletes a product nobody uses, with its plans (204, then 404)", async () => {
    const p = await product();
    const del = await s.rest("DELETE", `/v1/products/${p.id}/`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await s.rest("GET", `/v1/products/${p.id}/`)).status).toBe(404);
    expect((await s.rest("GET", `/v1/plans/${p.plans[0].id}/`)).status).toBe(404);
    expect(await s.database.prisma.plan.count({ where: { productId: p.id } })).toBe(0);
  });

  it("archives instead of deleting a product whose plan a subscription uses; it stays readable", async () => {
    const p = await product({
      plans: [
        { name: "A", amount: 1, currency: "CLP" },
        { name: "B", amount: 2, currency: "CLP" },
      ],
    });
    await subscribe(p.plans[0].id);
    const del = await s.rest("DELETE", `/v1/products/${p.id}/`);
    expect(del.status).toBe(204);
    const got = await s.rest("GET", `/v1/products/${p.id}/`);
    expect(got.status).toBe(200);
    expect(got.body.status).toBe("archived");
    expect(got.body.archived).toMatch(ISO);
    expect(got.body.plans.map((x: any) => [x.status, x.archived !== null])).toEqual([
      ["archived", true],
      ["archived", true],
    ]);
    // deleting again changes nothing; an archived product takes no new plans
    expect((await s.rest("DELETE", `/v1/products/${p.id}/`)).status).toBe(204);
    expect((await s.rest("GET", `/v1/products/${p.id}/`)).body.archived).toBe(got.body.archived);
    const add = await s.rest("POST", "/v1/plans/", { body: { product: p.id, amount: 1, currency: "CLP" } });
    expect(add.status).toBe(409);
    expect(add.body.error.code).toBe("invalid_state");
  });

  it("answers 404 for another organization's or mode's product, and changes nothing", async () => {
    const p = await product();
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      expect((await s.rest("GET", `/v1/products/${p.id}/`, { key })).status).toBe(404);
      expect((await s.rest("PATCH", `/v1/products/${p.id}/`, { key, body: { name: "stolen" } })).status).toBe(404);
      const del = await s.rest("DELETE", `/v1/products/${p.id}/`, { key });
      expect(del.status).toBe(404);
      expect(del.body.error.code).toBe("not_found");
      expect((await s.rest("GET", `/v1/plans/${p.plans[0].id}/`, { key })).status).toBe(404);
      expect((await s.rest("PATCH", `/v1/plans/${p.plans[0].id}/`, { key, body: { name: "x" } })).status).toBe(404);
      expect((await s.rest("DELETE", `/v1/plans/${p.plans[0].id}/`, { key })).status).toBe(404);
    }
    expect((await s.rest("GET", `/v1/products/${p.id}/`)).body.name).toBe("Hosting");
    expect(
      (await s.rest("GET", "/v1/products/", { key: s.keys.other })).body.results.map((x: any) => x.id),
    ).not.toContain(p.id);
  });
});

describe("product list", () => {
  it("pages and filters on name, status, created and archived", async () => {
    const { prisma } = s.database;
    // a fresh organization of our own keeps the counts exact: use the live key
    const key = s.keys.acmeLive;
    const make = async (name: string) => {
      const res = await s.rest("POST", "/v1/products/", {
        key,
        body: { name, plans: [{ amount: 1, currency: "CLP" }] },
      });
      expect(res.status).toBe(201);
      return res.body;
    };
    const names = ["Alpha", "Beta", "alphabet", "Gamma", "Delta"];
    const made = [];
    for (const name of names) made.push(await make(name));
    await prisma.product.update({ where: { id: made[0].id }, data: { createdAt: new Date("2026-01-15T12:00:00Z") } });
    // archive Gamma through a subscription in live mode
    const customer = (await s.rest("POST", "/v1/customers/", { key, body: chileanCustomer() })).body.id;
    const sub = await prisma.subscription.create({
      data: {
        id: newId("sub"),
        organizationId: s.orgs.acme,
        testMode: false,
        documentTypeId: "CL33",
        customerId: customer,
        dateStart: new Date("2026-11-01"),
        nextBilling: new Date("2026-12-01"),
        userEmail: "live@acme.cl",
      },
    });
    await prisma.subscriptionLine.create({
      data: {
        id: newId("lin"),
        subscriptionId: sub.id,
        organizationId: sub.organizationId,
        planId: made[3].plans[0].id,
      },
    });
    expect((await s.rest("DELETE", `/v1/products/${made[3].id}/`, { key })).status).toBe(204);

    const list = (q: string) => s.rest("GET", `/v1/products/${q}`, { key });
    const all = await list("");
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(5);
    expect(all.body.results.map((p: any) => p.name)).toEqual(["Delta", "Gamma", "alphabet", "Beta", "Alpha"]);
    expect(all.body.results[0].plans).toHaveLength(1);

    const page1 = await list("?page_size=2");
    expect(page1.body.results.map((p: any) => p.name)).toEqual(["Delta", "Gamma"]);
    expect(page1.body.next).toBe(`${s.url}/v1/products/?page_size=2&page=2`);
    expect(page1.body.previous).toBeNull();
    const page3 = await list("?page_size=2&page=3");
    expect(page3.body.results.map((p: any) => p.name)).toEqual(["Alpha"]);
    expect(page3.body.next).toBeNull();

    const names_ = async (q: string) => (await list(q)).body.results.map((p: any) => p.name).sort();
    expect(await names_("?name=Alpha")).toEqual(["Alpha"]);
    expect(await names_("?name__exact=Beta")).toEqual(["Beta"]);
    expect(await names_("?name__in=Beta,Delta")).toEqual(["Beta", "Delta"]);
    expect(await names_("?name__contains=lpha")).toEqual(["Alpha", "alphabet"]);
    expect(await names_("?name__contains=Alpha")).toEqual(["Alpha"]);
    expect(await names_("?name__icontains=ALPHA")).toEqual(["Alpha", "alphabet"]);
    expect(await names_("?status=archived")).toEqual(["Gamma"]);
    expect(await names_("?status__in=active")).toEqual(["Alpha", "Beta", "Delta", "alphabet"]);
    expect(await names_("?archived=true")).toEqual(["Gamma"]);
    expect(await names_("?archived=false")).toEqual(["Alpha", "Beta", "Delta", "alphabet"]);
    expect(await names_("?created__lte=2026-01-15")).toEqual(["Alpha"]);
    expect(await names_("?created__gte=2026-01-16&archived=false")).toEqual(["Beta", "Delta", "alphabet"]);

    const bad = await list("?colour=red&archived=maybe");
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.fields).sort()).toEqual(["archived", "colour"]);
    expect((await list("?page_size=101")).status).toBe(400);
  });

  it("GraphQL products connection with filters and totalCount", async () => {
    await product({ name: "GraphQL listed" });
    const res = await s.graphql(
      `query($where: ProductWhere) { products(first: 5, where: $where) { totalCount edges { node { id name plans { ` +
        `name frequency { id name } currency { id } } } } } }`,
      { where: { name: { equals: "GraphQL listed" }, archived: false } },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.products.totalCount).toBe(1);
    expect(res.body.data.products.edges[0].node.plans[0]).toEqual({
      name: "Mensual",
      frequency: { id: "monthly", name: "Monthly" },
      currency: { id: "CLP" },
    });
  });
});

describe("plans over REST", () => {
  it("creates, retrieves, lists, updates and deletes a plan of a product", async () => {
    const p = await product();
    const res = await s.rest("POST", "/v1/plans/", {
      body: {
        product: p.id,
        name: "Volumen",
        currency: "USD",
        tiers_mode: "volume",
        tiers: TIERS,
        frequency: "quarterly",
        metadata: { k: "v" },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const plan = res.body;
    expect(plan).toMatchObject({
      product: p.id,
      name: "Volumen",
      tiers_mode: "volume",
      tiers: TIERS,
      frequency: { id: "quarterly", name: "Quarterly" },
      metadata: { k: "v" },
    });
    expect(plan.currency.id).toBe("USD");
    expect((await s.rest("GET", `/v1/plans/${plan.id}/`)).body).toEqual(plan);
    expect((await s.rest("GET", `/v1/products/${p.id}/`)).body.plans.map((x: any) => x.id)).toEqual([
      p.plans[0].id,
      plan.id,
    ]);

    const listed = await s.rest("GET", `/v1/plans/?product=${p.id}&currency=usd`);
    expect(listed.body.results.map((x: any) => x.id)).toEqual([plan.id]);
    expect((await s.rest("GET", `/v1/plans/?product=${p.id}&frequency=monthly`)).body.count).toBe(1);

    const upd = await s.rest("PATCH", `/v1/plans/${plan.id}/`, {
      body: { ...plan, amount: 5, tiers_mode: null, tiers: [], name: "Plano" },
    });
    expect(upd.status, JSON.stringify(upd.body)).toBe(200);
    expect(upd.body).toMatchObject({ amount: 5, tiers_mode: null, tiers: [], name: "Plano" });

    const moved = await s.rest("PATCH", `/v1/plans/${plan.id}/`, { body: { product: (await product()).id } });
    expect(moved.status).toBe(400);
    expect(moved.body.error.fields).toHaveProperty("product");

    expect((await s.rest("DELETE", `/v1/plans/${plan.id}/`)).status).toBe(204);
    expect((await s.rest("GET", `/v1/plans/${plan.id}/`)).status).toBe(404);
  });

  it(
    "freezes the pricing of a plan a subscription uses (409) but lets its name change; delete " + "archives it",
    async () => {
      const p = await product();
      const planId = p.plans[0].id;
      await subscribe(planId);
      const price = await s.rest("PATCH", `/v1/plans/${planId}/`, { body: { amount: 20000 } });
      expect(price.status).toBe(409);
      expect(price.body.error.code).toBe("invalid_state");
      expect(price.body.error.message).toMatch(/amount/);
      // the same values are not a change
      expect(
        (await s.rest("PATCH", `/v1/plans/${planId}/`, { body: { amount: 10000, currency: "CLP", name: "Renamed" } }))
          .status,
      ).toBe(200);
      // a retrieved plan sent back unchanged (tiers included) is not a change either
      const tiered = await product({ plans: [{ currency: "CLP", tiers_mode: "volume", tiers: TIERS }] });
      await subscribe(tiered.plans[0].id);
      const back = await s.rest("PATCH", `/v1/plans/${tiered.plans[0].id}/`, {
        body: { ...tiered.plans[0], description: "same price" },
      });
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect(back.body.tiers).toEqual(TIERS);
      const retiered = await s.rest("PATCH", `/v1/plans/${tiered.plans[0].id}/`, {
        body: { tiers: [{ up_to: null, unit_amount: 1 }] },
      });
      expect(retiered.status).toBe(409);
      expect(retiered.body.error.message).toMatch(/tiers/);
      expect((await s.rest("DELETE", `/v1/plans/${planId}/`)).status).toBe(204);
      const got = await s.rest("GET", `/v1/plans/${planId}/`);
      expect(got.body).toMatchObject({ name: "Renamed", status: "archived", amount: 10000 });
      expect((await s.rest("GET", `/v1/plans/?product=${p.id}&archived=true`)).body.count).toBe(1);
    },
  );

  it("rejects a plan of another organization's product as an unknown product (400), nothing written", async () => {
    const theirs = (await s.rest("POST", "/v1/products/", { key: s.keys.other, body: { name: "Theirs" } })).body;
    const e = await expectRejected("POST", "/v1/plans/", { product: theirs.id, amount: 1, currency: "CLP" }, "product");
    expect(e.fields.product[0]).toMatch(/unknown product/);
  });
});

describe("bad input: 400 naming the field, nothing written", () => {
  const plan = (extra: Record<string, unknown>) => ({
    name: "P",
    plans: [{ amount: 1000, currency: "CLP", ...extra }],
  });

  it("product fields", async () => {
    await expectRejected("POST", "/v1/products/", { unit_label: "x" }, "name");
    await expectRejected("POST", "/v1/products/", { name: "x", colour: "red" }, "colour");
    await expectRejected("POST", "/v1/products/", { name: "x".repeat(201) }, "name");
    await expectRejected(
      "POST",
      "/v1/products/",
      { name: "x", metadata: { ["k".repeat(41)]: "v" } },
      `metadata.${"k".repeat(41)}`,
    );
  });

  it("tiers out of order or without a last open tier", async () => {
    const e = await expectRejected(
      "POST",
      "/v1/products/",
      plan({
        tiers_mode: "graduated",
        tiers: [
          { up_to: 10, unit_amount: 1 },
          { up_to: 5, unit_amount: 1 },
          { up_to: null, unit_amount: 1 },
        ],
      }),
      "plans.0.tiers.1.up_to",
    );
    expect(e.fields["plans.0.tiers.1.up_to"][0]).toMatch(/greater than the previous/);
    await expectRejected(
      "POST",
      "/v1/products/",
      plan({ tiers_mode: "volume", tiers: [{ up_to: 5, unit_amount: 1 }] }),
      "plans.0.tiers.0.up_to",
    );
    await expectRejected("POST", "/v1/products/", plan({ tiers_mode: "volume", tiers: [] }), "plans.0.tiers");
    await expectRejected("POST", "/v1/products/", plan({ tiers: TIERS }), "plans.0.tiers_mode");
    await expectRejected("POST", "/v1/products/", plan({ tiers_mode: "stairs", tiers: TIERS }), "plans.0.tiers_mode");
    await expectRejected(
      "POST",
      "/v1/products/",
      plan({ tiers_mode: "graduated", tiers: [{ up_to: null, unit_amount: -1 }] }),
      "plans.0.tiers.0.unit_amount",
    );
  });

  it("negative amounts, unknown currency, unknown schemes, missing amount, in the second plan too", async () => {
    await expectRejected("POST", "/v1/products/", plan({ amount: -1 }), "plans.0.amount");
    await expectRejected("POST", "/v1/products/", plan({ amount: null }), "plans.0.amount");
    await expectRejected("POST", "/v1/products/", plan({ currency: "XYZ" }), "plans.0.currency");
    await expectRejected("POST", "/v1/products/", plan({ currency: null }), "plans.0.currency");
    await expectRejected("POST", "/v1/products/", plan({ frequency: "hourly" }), "plans.0.frequency");
    await expectRejected("POST", "/v1/products/", plan({ usage_scheme: "prepaid" }), "plans.0.usage_scheme");
    await expectRejected("POST", "/v1/products/", plan({ usage_aggregation: "avg" }), "plans.0.usage_aggregation");
    await expectRejected("POST", "/v1/products/", plan({ amount: "0.0000001" }), "plans.0.amount");
    await expectRejected("POST", "/v1/products/", plan({ amount: "abc" }), "plans.0.amount");
    await expectRejected(
      "POST",
      "/v1/products/",
      {
        name: "P",
        plans: [
          { amount: 1, currency: "CLP" },
          { amount: 1, currency: "CLP", product: "pro_x" },
        ],
      },
      "plans.1.product",
    );
    await expectRejected("POST", "/v1/plans/", { amount: 1, currency: "CLP" }, "product");
  });

  it("coupons: % over 100, limited without duration_times, $ without currency, past valid_until", async () => {
    await expectRejected("POST", "/v1/coupons/", { name: "C", discount_scheme: "%", amount: 101 }, "amount");
    await expectRejected(
      "POST",
      "/v1/coupons/",
      { name: "C", amount: 10, duration_scheme: "limited" },
      "duration_times",
    );
    await expectRejected(
      "POST",
      "/v1/coupons/",
      { name: "C", amount: 10, duration_scheme: "once", duration_times: 3 },
      "duration_times",
    );
    await expectRejected(
      "POST",
      "/v1/coupons/",
      { name: "C", amount: 10, duration_scheme: "limited", duration_times: 0 },
      "duration_times",
    );
    await expectRejected("POST", "/v1/coupons/", { name: "C", amount: 1000, discount_scheme: "$" }, "currency");
    await expectRejected(
      "POST",
      "/v1/coupons/",
      { name: "C", amount: "10.5", discount_scheme: "$", currency: "CLP" },
      "amount",
    );
    await expectRejected("POST", "/v1/coupons/", { name: "C", amount: 0 }, "amount");
    await expectRejected("POST", "/v1/coupons/", { name: "C", amount: -5 }, "amount");
    await expectRejected("POST", "/v1/coupons/", { name: "C", amount: 5, discount_scheme: "x" }, "discount_scheme");
    await expectRejected("POST", "/v1/coupons/", { name: "C", amount: 5, apply_on: "customer" }, "apply_on");
    await expectRejected(
      "POST",
      "/v1/coupons/",
      { name: "C", amount: 5, valid_until: "2020-01-01T00:00:00Z" },
      "valid_until",
    );
    await expectRejected("POST", "/v1/coupons/", { name: "C", amount: 5, valid_until: "tomorrow" }, "valid_until");
    await expectRejected("POST", "/v1/coupons/", { amount: 5 }, "name");
  });

  it("addons: negative amount, unknown currency, rates that do not add up, duration on one-time", async () => {
    const addon = (extra: Record<string, unknown>) => ({ name: "Setup", amount: 300000, currency: "CLP", ...extra });
    await expectRejected("POST", "/v1/addons/", addon({ amount: -1 }), "amount");
    await expectRejected("POST", "/v1/addons/", addon({ currency: "ZZZ" }), "currency");
    await expectRejected("POST", "/v1/addons/", addon({ apply_scheme: "sometimes" }), "apply_scheme");
    await expectRejected("POST", "/v1/addons/", addon({ duration_times: 3 }), "duration_times");
    await expectRejected(
      "POST",
      "/v1/addons/",
      addon({
        rates: [
          { cycle: 1, percent: 50 },
          { cycle: 2, percent: 40 },
        ],
      }),
      "rates",
    );
    await expectRejected("POST", "/v1/addons/", addon({ rates: [{ cycle: 1, amount: 100000 }] }), "rates");
    await expectRejected(
      "POST",
      "/v1/addons/",
      addon({
        rates: [
          { cycle: 2, percent: 50 },
          { cycle: 1, percent: 50 },
        ],
      }),
      "rates.1.cycle",
    );
    await expectRejected("POST", "/v1/addons/", addon({ rates: [{ cycle: 1.5, percent: 100 }] }), "rates.0.cycle");
    await expectRejected(
      "POST",
      "/v1/addons/",
      addon({ apply_scheme: "recurring", rates: [{ cycle: 1, percent: 100 }] }),
      "rates",
    );
  });
});

describe("addons", () => {
  it("creates, retrieves, updates, lists and deletes an addon with rates", async () => {
    const res = await s.rest("POST", "/v1/addons/", {
      body: {
        name: "Instalación",
        sku: "SET-1",
        amount: 300000,
        currency: "CLP",
        rates: [
          { cycle: 1, percent: 50 },
          { cycle: 2, percent: "25" },
          { cycle: 3, percent: 25 },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const a = res.body;
    expect(a.id).toMatch(/^add_/);
    expect(a).toMatchObject({
      apply_scheme: "one_time",
      duration_times: null,
      name: "Instalación",
      sku: "SET-1",
      amount: 300000,
      rates: [
        { cycle: 1, percent: 50 },
        { cycle: 2, percent: 25 },
        { cycle: 3, percent: 25 },
      ],
      status: "active",
      archived: null,
    });
    expect(a.currency.id).toBe("CLP");
    expect(a.created).toMatch(ISO);
    expect((await s.rest("GET", `/v1/addons/${a.id}/`)).body).toEqual(a);

    const upd = await s.rest("PATCH", `/v1/addons/${a.id}/`, {
      body: {
        rates: [
          { cycle: 1, amount: 100000 },
          { cycle: 6, amount: 200000 },
        ],
      },
    });
    expect(upd.status, JSON.stringify(upd.body)).toBe(200);
    expect(upd.body.rates).toEqual([
      { cycle: 1, amount: 100000 },
      { cycle: 6, amount: 200000 },
    ]);
    // changing the amount re-checks the stored rates
    expect((await s.rest("PATCH", `/v1/addons/${a.id}/`, { body: { amount: 1 } })).body.error.fields).toHaveProperty(
      "rates",
    );

    const rec = await s.rest("POST", "/v1/addons/", {
      body: { name: "Backup", amount: "9.99", currency: "USD", apply_scheme: "recurring", duration_times: 12 },
    });
    expect(rec.status, JSON.stringify(rec.body)).toBe(201);
    expect(rec.body).toMatchObject({ apply_scheme: "recurring", duration_times: 12, amount: 9.99, rates: [] });
    expect(
      (await s.rest("GET", "/v1/addons/?apply_scheme=recurring&currency=USD")).body.results.map((x: any) => x.id),
    ).toEqual([rec.body.id]);

    expect((await s.rest("DELETE", `/v1/addons/${rec.body.id}/`)).status).toBe(204);
    expect((await s.rest("GET", `/v1/addons/${rec.body.id}/`)).status).toBe(404);
  });

  it("archives an addon a subscription uses and freezes its pricing; other tenants get 404", async () => {
    const a = (await s.rest("POST", "/v1/addons/", { body: { name: "Extra", amount: 5000, currency: "CLP" } })).body;
    const p = await product();
    await subscribe(p.plans[0].id, { addonId: a.id });
    expect((await s.rest("PATCH", `/v1/addons/${a.id}/`, { body: { amount: 6000 } })).status).toBe(409);
    const withRates = (
      await s.rest("POST", "/v1/addons/", {
        body: {
          name: "Split",
          amount: 300,
          currency: "CLP",
          rates: [
            { cycle: 1, percent: 50 },
            { cycle: 2, percent: 50 },
          ],
        },
      })
    ).body;
    await subscribe(p.plans[0].id, { addonId: withRates.id });
    expect(
      (await s.rest("PATCH", `/v1/addons/${withRates.id}/`, { body: { ...withRates, name: "Split setup" } })).status,
    ).toBe(200);
    expect(
      (await s.rest("PATCH", `/v1/addons/${withRates.id}/`, { body: { rates: [{ cycle: 1, percent: 100 }] } })).status,
    ).toBe(409);
    expect((await s.rest("DELETE", `/v1/addons/${a.id}/`, { key: s.keys.other })).status).toBe(404);
    expect((await s.rest("DELETE", `/v1/addons/${a.id}/`)).status).toBe(204);
    expect((await s.rest("GET", `/v1/addons/${a.id}/`)).body.status).toBe("archived");
    expect((await s.rest("GET", `/v1/addons/${a.id}/`, { key: s.keys.other })).status).toBe(404);
  });
});

describe("coupons", () => {
  it("creates, retrieves, updates, lists and deletes coupons", async () => {
    const res = await s.rest("POST", "/v1/coupons/", {
      body: {
        name: "Bienvenida",
        discount_scheme: "%",
        amount: "12.5",
        duration_scheme: "limited",
        duration_times: 3,
        valid_until: "2099-12-31T23:59:59Z",
        apply_on: "line",
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const c = res.body;
    expect(c.id).toMatch(/^cou_/);
    expect(c).toMatchObject({
      discount_scheme: "%",
      amount: 12.5,
      duration_scheme: "limited",
      duration_times: 3,
      valid_until: "2099-12-31T23:59:59.000+00:00",
      apply_on: "line",
      currency: null,
      status: "active",
    });
    expect((await s.rest("GET", `/v1/coupons/${c.id}/`)).body).toEqual(c);

    const fixed = await s.rest("POST", "/v1/coupons/", {
      body: { name: "Descuento fijo", discount_scheme: "$", amount: 5000, currency: "CLP", duration_scheme: "forever" },
    });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(201);
    expect(fixed.body).toMatchObject({
      duration_scheme: "forever",
      duration_times: null,
      apply_on: "invoice",
      valid_until: null,
    });
    expect(fixed.body.currency.id).toBe("CLP");

    const upd = await s.rest("PATCH", `/v1/coupons/${c.id}/`, {
      body: { duration_scheme: "forever", duration_times: null, valid_until: null },
    });
    expect(upd.status, JSON.stringify(upd.body)).toBe(200);
    expect(upd.body).toMatchObject({ duration_scheme: "forever", duration_times: null, valid_until: null });

    expect(
      (await s.rest("GET", `/v1/coupons/?discount_scheme=$&name__icontains=FIJO`)).body.results.map((x: any) => x.id),
    ).toEqual([fixed.body.id]);
    expect((await s.rest("DELETE", `/v1/coupons/${fixed.body.id}/`)).status).toBe(204);
    expect((await s.rest("GET", `/v1/coupons/${fixed.body.id}/`)).status).toBe(404);
  });

  it("archives a coupon a subscription uses; other tenants get 404", async () => {
    const c = (await s.rest("POST", "/v1/coupons/", { body: { name: "Used", amount: 10 } })).body;
    const p = await product();
    await subscribe(p.plans[0].id, { couponId: c.id });
    expect((await s.rest("PATCH", `/v1/coupons/${c.id}/`, { body: { amount: 20 } })).status).toBe(409);
    expect((await s.rest("PATCH", `/v1/coupons/${c.id}/`, { body: { name: "Still used" } })).status).toBe(200);
    expect((await s.rest("GET", `/v1/coupons/${c.id}/`, { key: s.keys.other })).status).toBe(404);
    expect((await s.rest("DELETE", `/v1/coupons/${c.id}/`)).status).toBe(204);
    const got = (await s.rest("GET", `/v1/coupons/${c.id}/`)).body;
    expect(got).toMatchObject({ name: "Still used", status: "archived" });
    expect((await s.rest("GET", "/v1/coupons/?archived=true")).body.results.map((x: any) => x.id)).toContain(c.id);
  });
});

describe("catalogue over GraphQL", () => {
  it(
    "creates a product with plans, reads it through node(id), adds a plan, addon and coupon, " + "and deletes",
    async () => {
      const created = await s.graphql(
        `mutation($input: ProductInput!) { createProduct(input: $input) { id name plans { id name amount tiersMode ` +
          `tiers { upTo unitAmount flatAmount } frequency { id name interval intervalCount } currency { id } } } }`,
        {
          input: {
            name: "GQL",
            plans: [
              { name: "Flat", amount: "1000", currency: "CLP" },
              {
                name: "Tiered",
                currency: "CLP",
                frequency: "quarterly",
                tiersMode: "graduated",
                tiers: [
                  { upTo: "5", unitAmount: "1000" },
                  { upTo: null, unitAmount: "500", flatAmount: "100" },
                ],
              },
            ],
          },
        },
      );
      expect(created.body.errors).toBeUndefined();
      const p = created.body.data.createProduct;
      expect(p.plans[1]).toMatchObject({
        name: "Tiered",
        amount: "0",
        tiersMode: "graduated",
        tiers: [
          { upTo: "5", unitAmount: "1000", flatAmount: "0" },
          { upTo: null, unitAmount: "500", flatAmount: "100" },
        ],
        frequency: { id: "quarterly", name: "Quarterly", interval: "month", intervalCount: 3 },
      });

      const node = await s.graphql(`query($id: ID!) { node(id: $id) { __typename ... on Product { name } } }`, {
        id: p.id,
      });
      expect(node.body.data.node).toEqual({ __typename: "Product", name: "GQL" });
      const planNode = await s.graphql(
        `query($id: ID!) { node(id: $id) { __typename ... on Plan { product { id } } } }`,
        { id: p.plans[0].id },
      );
      expect(planNode.body.data.node).toEqual({ __typename: "Plan", product: { id: p.id } });
      expect(
        (await s.graphql(`query($id: ID!) { node(id: $id) { id } }`, { id: p.id }, s.keys.other)).body.data.node,
      ).toBeNull();

      const plan = await s.graphql(`mutation($input: PlanInput!) { createPlan(input: $input) { id name status } }`, {
        input: { product: p.id, amount: "5", currency: "CLP", name: "Added" },
      });
      expect(plan.body.data.createPlan).toMatchObject({ name: "Added", status: "active" });
      const upd = await s.graphql(
        `mutation($id: ID!, $input: PlanInput!) { updatePlan(id: $id, input: $input) { name exempt } }`,
        { id: plan.body.data.createPlan.id, input: { exempt: true } },
      );
      expect(upd.body.data.updatePlan).toEqual({ name: "Added", exempt: true });

      const addon = await s.graphql(
        `mutation($input: AddonInput!) { createAddon(input: $input) { id rates { cycle percent amount } } }`,
        {
          input: {
            name: "A",
            amount: "100",
            currency: "CLP",
            rates: [
              { cycle: 1, amount: "40" },
              { cycle: 2, amount: "60" },
            ],
          },
        },
      );
      expect(addon.body.data.createAddon.rates).toEqual([
        { cycle: 1, percent: null, amount: "40" },
        { cycle: 2, percent: null, amount: "60" },
      ]);
      const coupon = await s.graphql(
        `mutation($input: CouponInput!) { createCoupon(input: $input) { id discountScheme validUntil } }`,
        {
          input: { name: "C", amount: "10", validUntil: "2099-01-01T00:00:00Z" },
        },
      );
      expect(coupon.body.data.createCoupon).toMatchObject({
        discountScheme: "percent",
        validUntil: "2099-01-01T00:00:00.000Z",
      });
      const lists = await s.graphql(
        `{ addons(first: 100) { totalCount } coupons(first: 100, where: { archived: false }) { totalCount } ` +
          `plans(first: 1) { totalCount } }`,
      );
      expect(lists.body.errors).toBeUndefined();
      expect(lists.body.data.addons.totalCount).toBeGreaterThan(0);

      const bad = await s.graphql(`mutation($input: CouponInput!) { createCoupon(input: $input) { id } }`, {
        input: { name: "C", amount: "150" },
      });
      expect(bad.body.errors[0].extensions).toMatchObject({
        code: "validation_error",
        fields: { amount: ["a percent discount must be at most 100"] },
      });

      const del = await s.graphql(`mutation($id: ID!) { deleteProduct(id: $id) { id deleted archived } }`, {
        id: p.id,
      });
      expect(del.body.data.deleteProduct).toEqual({ id: p.id, deleted: true, archived: false });
      const missing = await s.graphql(`mutation($id: ID!) { deleteProduct(id: $id) { id } }`, { id: p.id });
      expect(missing.body.errors[0].extensions.code).toBe("not_found");
    },
  );

  it("rejects a product whose nested plan is bad with the plan's field path, writing nothing", async () => {
    const before = await counts();
    const res = await s.graphql(`mutation($input: ProductInput!) { createProduct(input: $input) { id } }`, {
      input: {
        name: "Bad",
        plans: [
          { amount: "1", currency: "CLP" },
          {
            currency: "CLP",
            tiersMode: "graduated",
            tiers: [
              { upTo: "10", unitAmount: "1" },
              { upTo: "3", unitAmount: "1" },
            ],
          },
        ],
      },
    });
    expect(res.body.errors[0].extensions.code).toBe("validation_error");
    expect(Object.keys(res.body.errors[0].extensions.fields)).toEqual(["plans.1.tiers.1.up_to"]);
    expect(await counts()).toEqual(before);
  });

  it("reports archived instead of deleted for a product in use", async () => {
    const p = await product();
    await subscribe(p.plans[0].id);
    const del = await s.graphql(`mutation($id: ID!) { deleteProduct(id: $id) { id deleted archived } }`, { id: p.id });
    expect(del.body.data.deleteProduct).toEqual({ id: p.id, deleted: false, archived: true });
  });
});

describe("query counts (no N+1)", () => {
  it(
    "loads a product list with nested plans and their currencies in the same number of queries for 2 or 10 " +
      "products",
    async () => {
      const LIST =
        `{ products(first: 50) { totalCount edges { node { id name plans { id name frequency { name } ` +
        `currency { id name } product { id } } } } } }`;
      const key = s.keys.other;
      const queriesFor = async () => {
        s.queries.length = 0;
        const res = await s.graphql(LIST, {}, key);
        expect(res.body.errors).toBeUndefined();
        return [...s.queries];
      };
      const add = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const res = await s.rest("POST", "/v1/products/", {
            key,
            body: {
              name: `N${i}`,
              plans: [
                { amount: 1, currency: "CLP" },
                { amount: 2, currency: "USD" },
              ],
            },
          });
          expect(res.status).toBe(201);
        }
      };
      await s.database.prisma.plan.deleteMany({ where: { organizationId: s.orgs.other } });
      await s.database.prisma.product.deleteMany({ where: { organizationId: s.orgs.other } });
      await add(2);
      const withTwo = await queriesFor();
      await add(8);
      const withTen = await queriesFor();
      expect(withTen).toEqual(withTwo);
      expect(withTen.filter((q) => q === "Product.findMany")).toHaveLength(1);
      expect(withTen.filter((q) => q.startsWith("Plan.") || q.startsWith("Currency."))).toEqual([]);
    },
  );
});
