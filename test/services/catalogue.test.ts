/**
 * The catalogue's pricing called directly: services/products.ts (createProduct with nested plans, updatePlan),
 * services/addons.ts and services/coupons.ts (create, update): the stored rows and their defaults, the 400's fields
 * (a nested plan's under `plans.N.`), and the frozen-pricing rule (domain/catalogue.ts checkPricingUnfrozen): the
 * pricing of a plan, addon or coupon a subscription uses cannot change (409, nothing written), its name can, and
 * the same values sent again are no change.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAddon, updateAddon } from "../../src/services/addons.js";
import { createCoupon, updateCoupon } from "../../src/services/coupons.js";
import { createPlan, createProduct, updatePlan } from "../../src/services/products.js";
import { createSubscription } from "../../src/services/subscriptions.js";
import {
  chileanCustomerOf,
  rejection,
  startServiceDatabase,
  type ServiceDatabase,
} from "../helpers/service-context.js";

let s: ServiceDatabase;
let customerId: string;
beforeAll(async () => {
  s = await startServiceDatabase();
  customerId = await chileanCustomerOf(s);
});
afterAll(async () => s?.close());

/** A product "Nube" with one plan of 10 000 CLP monthly; returns the plan row. */
async function plan() {
  const product = await createProduct(s.acme, {
    name: "Nube",
    plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }],
  });
  return s.database.prisma.plan.findFirstOrThrow({ where: { productId: product.id } });
}

async function subscribe(planId: string, extra: { coupon?: string; addon?: string } = {}) {
  return createSubscription(s.acme, {
    customer: customerId,
    dateStart: "2026-11-01",
    lines: [{ plan: planId, coupon: extra.coupon }],
    addons: extra.addon ? [{ addon: extra.addon }] : [],
  });
}

describe("products and plans", () => {
  it("creates a product with its plans in order: the defaults, the product's name for an unnamed plan", async () => {
    const product = await createProduct(s.acme, {
      name: "Nube",
      unitLabel: "asiento",
      plans: [
        { name: "Pro", amount: "10000", currency: "CLP" },
        { amount: "19.99", currency: "USD", frequency: "yearly", usageScheme: "metered", usageAggregation: "max" },
      ],
    });
    const row = await s.database.prisma.product.findUniqueOrThrow({
      where: { id: product.id },
      include: { plans: { orderBy: { position: "asc" } } },
    });
    expect(row).toMatchObject({ status: "active", unitLabel: "asiento", testMode: true, archivedAt: null });
    expect(
      row.plans.map((p) => [
        p.position,
        p.name,
        String(p.amount),
        p.currencyId,
        p.frequency,
        p.usageScheme,
        p.usageAggregation,
        p.exempt,
      ]),
    ).toEqual([
      [0, "Pro", "10000", "CLP", "monthly", "licensed", "sum", false],
      [1, "Nube", "19.99", "USD", "yearly", "metered", "max", false],
    ]);
  });

  it("names a bad nested plan's fields under plans.N and writes neither the product nor its plans", async () => {
    const before = [await s.database.prisma.product.count(), await s.database.prisma.plan.count()];
    const error = await rejection(
      createProduct(s.acme, {
        name: "Nube",
        plans: [
          { amount: 1, currency: "CLP" },
          { amount: -1, currency: "XYZ", frequency: "hourly", product: "pro_x" },
        ],
      }),
    );
    expect([error.code, error.status, error.message.split(":")[0]]).toEqual([
      "validation_error",
      400,
      "Invalid product",
    ]);
    expect(error.fields).toEqual({
      "plans.1.product": ["is the product being created; leave it out"],
      "plans.1.currency": ["unknown currency XYZ"],
      "plans.1.frequency": ["must be one of daily, weekly, monthly, quarterly, yearly"],
      "plans.1.amount": ["must not be negative"],
    });
    expect([await s.database.prisma.product.count(), await s.database.prisma.plan.count()]).toEqual(before);
  });

  it("changes an unused plan's price; adds a plan at the next position", async () => {
    const pro = await plan();
    const updated = await updatePlan(s.acme, pro.id, { amount: 12000, frequency: "quarterly" });
    expect([String(updated.amount), updated.frequency]).toEqual(["12000", "quarterly"]);
    const added = await createPlan(s.acme, { product: pro.productId, amount: 5, currency: "USD" });
    expect([added.position, added.name, added.currencyId]).toEqual([1, "Nube", "USD"]);
  });

  it("freezes the pricing of a plan a subscription uses (409 naming the fields) and writes nothing", async () => {
    const pro = await plan();
    await subscribe(pro.id);
    const error = await rejection(updatePlan(s.acme, pro.id, { amount: 20000, frequency: "yearly", name: "Pro 2" }));
    expect([error.code, error.status, error.message]).toEqual([
      "invalid_state",
      409,
      `Plan ${pro.id} is used by subscriptions; its pricing (amount, frequency) cannot change. ` +
        "Create a new plan instead.",
    ]);
    expect(await s.database.prisma.plan.findUniqueOrThrow({ where: { id: pro.id } })).toEqual(pro);
    // the same pricing sent again is no change; the name can change
    const renamed = await updatePlan(s.acme, pro.id, { amount: "10000.00", currency: "CLP", name: "Pro 2" });
    expect([renamed.name, String(renamed.amount)]).toEqual(["Pro 2", "10000"]);
    const exempt = await rejection(updatePlan(s.acme, pro.id, { exempt: true }));
    expect(exempt.message).toContain("its pricing (exempt) cannot change");
  });
});

describe("addons", () => {
  it("creates a one-time addon with rates that split its amount", async () => {
    const addon = await createAddon(s.acme, {
      name: "Instalación",
      amount: 300000,
      currency: "CLP",
      rates: [
        { cycle: 1, percent: 50 },
        { cycle: 2, percent: 50 },
      ],
    });
    const row = await s.database.prisma.addon.findUniqueOrThrow({ where: { id: addon.id } });
    expect(row).toMatchObject({
      status: "active",
      applyScheme: "one_time",
      durationTimes: null,
      currencyId: "CLP",
      rates: [
        { cycle: 1, percent: "50" },
        { cycle: 2, percent: "50" },
      ],
    });
    expect(String(row.amount)).toBe("300000");
  });

  it("refuses a duration on a one-time addon and rates that do not add up, writing nothing", async () => {
    const before = await s.database.prisma.addon.count();
    const error = await rejection(
      createAddon(s.acme, {
        name: "Instalación",
        amount: 300000,
        currency: "CLP",
        durationTimes: 3,
        rates: [
          { cycle: 1, percent: 50 },
          { cycle: 2, percent: 40 },
        ],
      }),
    );
    expect(Object.keys(error.fields)).toEqual(["duration_times", "rates"]);
    expect(error.fields.duration_times).toEqual(["applies to recurring addons only (a one-time addon is billed once)"]);
    expect(await s.database.prisma.addon.count()).toBe(before);
  });

  it("freezes the pricing of an addon a subscription uses; rates sent back as stored are no change", async () => {
    const addon = await createAddon(s.acme, {
      name: "Split",
      amount: 300,
      currency: "CLP",
      rates: [
        { cycle: 1, percent: 50 },
        { cycle: 2, percent: 50 },
      ],
    });
    const unused = await updateAddon(s.acme, addon.id, { amount: 400 });
    expect(String(unused.amount)).toBe("400");
    await subscribe((await plan()).id, { addon: addon.id });
    const stored = await s.database.prisma.addon.findUniqueOrThrow({ where: { id: addon.id } });
    const error = await rejection(updateAddon(s.acme, addon.id, { rates: [{ cycle: 1, percent: 100 }] }));
    expect([error.code, error.message]).toEqual([
      "invalid_state",
      `Addon ${addon.id} is used by subscriptions; its pricing cannot change. Create a new addon instead.`,
    ]);
    expect(await rejection(updateAddon(s.acme, addon.id, { amount: 500 }))).toMatchObject({ status: 409 });
    expect(await s.database.prisma.addon.findUniqueOrThrow({ where: { id: addon.id } })).toEqual(stored);
    const renamed = await updateAddon(s.acme, addon.id, {
      name: "Split setup",
      amount: 400,
      rates: [
        { cycle: 1, percent: 50 },
        { cycle: 2, percent: 50 },
      ],
    });
    expect(renamed.name).toBe("Split setup");
  });
});

describe("coupons", () => {
  it("creates a % coupon with its defaults and refuses a $ one without currency or over its unit", async () => {
    const coupon = await createCoupon(s.acme, { name: "Bienvenida", amount: 15 });
    expect(await s.database.prisma.coupon.findUniqueOrThrow({ where: { id: coupon.id } })).toMatchObject({
      discountScheme: "%",
      durationScheme: "once",
      durationTimes: null,
      applyOn: "invoice",
      currencyId: null,
      validUntil: null,
      status: "active",
    });
    const before = await s.database.prisma.coupon.count();
    const noCurrency = await rejection(createCoupon(s.acme, { name: "C", amount: 1000, discountScheme: "$" }));
    expect(noCurrency.fields).toEqual({ currency: ["is required (an ISO 4217 code such as CLP)"] });
    const fraction = await rejection(
      createCoupon(s.acme, { name: "C", amount: "10.5", discountScheme: "$", currency: "CLP" }),
    );
    expect(fraction.fields).toEqual({ amount: ["must be in the unit of CLP"] });
    const limited = await rejection(createCoupon(s.acme, { name: "C", amount: 101, durationScheme: "limited" }));
    expect(limited.fields).toEqual({
      duration_times: ["is required when duration_scheme is limited (number of cycles)"],
      amount: ["a percent discount must be at most 100"],
    });
    expect(await s.database.prisma.coupon.count()).toBe(before);
  });

  it("freezes the discount of a coupon a subscription line uses; its name can change", async () => {
    const coupon = await createCoupon(s.acme, { name: "10 %", amount: 10, durationScheme: "forever" });
    await subscribe((await plan()).id, { coupon: coupon.id });
    const stored = await s.database.prisma.coupon.findUniqueOrThrow({ where: { id: coupon.id } });
    const error = await rejection(updateCoupon(s.acme, coupon.id, { amount: 20 }));
    expect([error.code, error.status, error.message]).toEqual([
      "invalid_state",
      409,
      `Coupon ${coupon.id} is used by subscriptions; its discount cannot change. Create a new coupon instead.`,
    ]);
    expect((await rejection(updateCoupon(s.acme, coupon.id, { durationScheme: "once" }))).status).toBe(409);
    expect(await s.database.prisma.coupon.findUniqueOrThrow({ where: { id: coupon.id } })).toEqual(stored);
    const renamed = await updateCoupon(s.acme, coupon.id, { name: "Diez", amount: "10.000", discountScheme: "%" });
    expect([renamed.name, String(renamed.amount)]).toEqual(["Diez", "10"]);
  });
});
