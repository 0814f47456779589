/**
 * services/subscriptions.ts createSubscription and updateSubscription called directly: prepare's
 * steps (whatChanges, proration options, customer and document type, the catalogue read, lines,
 * coupons, addons, dates, other columns) through the rows they store and the errors they throw: the
 * 400's fields in the order the steps find them, the 409 after a billed cycle, and the prorations of
 * a line change mid-cycle (docs/proration.md) to the unit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../src/infra/prisma/generated/client.js";
import { createAddon } from "../../src/services/addons.js";
import { createCoupon } from "../../src/services/coupons.js";
import { createProduct } from "../../src/services/products.js";
import { createSubscription, updateSubscription } from "../../src/services/subscriptions.js";
import {
  chileanCustomerOf,
  rejection,
  startServiceDatabase,
  type ServiceDatabase,
} from "../helpers/service-context.js";

let s: ServiceDatabase;
let customerId: string;
let pro: Plan; // 10 000 CLP monthly
let business: Plan; // 25 000 CLP monthly
let usd: Plan; // 20 USD monthly
let api: Plan; // metered, 100 CLP monthly
let tenOff: string; // 10 % forever
let fiveDollars: string; // $5 USD forever
let setup: string; // one-time 30 000 CLP addon

beforeAll(async () => {
  s = await startServiceDatabase();
  customerId = await chileanCustomerOf(s);
  const product = await createProduct(s.acme, {
    name: "Nube",
    plans: [
      { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
      { name: "Business", amount: 25000, currency: "CLP", frequency: "monthly" },
      { name: "Pro USD", amount: 20, currency: "USD", frequency: "monthly" },
      { name: "API", amount: 100, currency: "CLP", frequency: "monthly", usageScheme: "metered" },
    ],
  });
  [pro, business, usd, api] = await s.database.prisma.plan.findMany({
    where: { productId: product.id },
    orderBy: { position: "asc" },
  });
  tenOff = (await createCoupon(s.acme, { name: "10 %", discountScheme: "%", amount: 10, durationScheme: "forever" }))
    .id;
  fiveDollars = (
    await createCoupon(s.acme, {
      name: "US$5",
      discountScheme: "$",
      amount: 5,
      currency: "USD",
      durationScheme: "forever",
    })
  ).id;
  setup = (await createAddon(s.acme, { name: "Instalación", amount: 30000, currency: "CLP", applyScheme: "one_time" }))
    .id;
});
afterAll(async () => s?.close());

const day = (d: Date | null) => d?.toISOString().slice(0, 10) ?? null;

async function stored(id: string) {
  return s.database.prisma.subscription.findUniqueOrThrow({
    where: { id },
    include: { lines: { orderBy: { position: "asc" } }, addons: { orderBy: { position: "asc" } } },
  });
}

/** A subscription from 2026-11-01 of `lines` whose cycle 1 (Nov 1 - Dec 1) is marked billed. */
async function billed(lines: { plan: string; quantity?: number }[]) {
  const sub = await createSubscription(s.acme, { customer: customerId, dateStart: "2026-11-01", lines });
  await s.database.prisma.subscription.update({
    where: { id: sub.id },
    data: { nextBillingCycle: 2, nextBilling: new Date("2026-12-01"), previousBilling: new Date("2026-11-01") },
  });
  return stored(sub.id);
}

describe("createSubscription", () => {
  it("stores the columns, lines and addons: CL33 by default, billed from date_start, ends after 3 cycles", async () => {
    const sub = await createSubscription(s.acme, {
      customer: customerId,
      dateStart: "2026-11-01",
      billingCycles: 3,
      lines: [{ plan: pro.id, quantity: 2, coupon: tenOff }, { plan: business.id }],
      addons: [
        {
          addon: setup,
          rates: [
            { cycle: 1, percent: 50 },
            { cycle: 2, percent: 50 },
          ],
        },
      ],
      note: "",
    });
    const row = await stored(sub.id);
    expect(row).toMatchObject({
      status: "active",
      customerId,
      documentTypeId: "CL33",
      nextBillingCycle: 1,
      billingCycles: 3,
      couponId: null,
      couponRedemptions: 0,
      expirationDays: 0,
      note: null,
      references: [],
      metadata: {},
    });
    expect([day(row.dateStart), day(row.nextBilling), day(row.endDate)]).toEqual([
      "2026-11-01",
      "2026-11-01",
      "2027-02-01",
    ]);
    expect(row.lines.map((l) => [l.position, l.planId, String(l.quantity), l.couponId])).toEqual([
      [0, pro.id, "2", tenOff],
      [1, business.id, "1", null],
    ]);
    expect(row.addons.map((a) => [a.position, a.addonId, a.quantity, a.rates])).toEqual([
      [
        0,
        setup,
        1,
        [
          { cycle: 1, percent: "50" },
          { cycle: 2, percent: "50" },
        ],
      ],
    ]);
  });

  it("names every bad field in one 400, in the steps' order, and writes nothing", async () => {
    const before = await s.database.prisma.subscription.count();
    const error = await rejection(
      createSubscription(s.acme, {
        customer: customerId,
        dateStart: "2026-11-01",
        lines: [{ plan: "pla_unknown" }, { plan: pro.id, quantity: 0 }],
        coupon: fiveDollars,
        addons: [{ addon: "add_unknown" }],
        billingCycles: 0,
        expirationDays: -1,
        references: Array.from({ length: 51 }, () => ({})),
      }),
    );
    expect([error.code, error.status]).toEqual(["validation_error", 400]);
    expect(Object.keys(error.fields)).toEqual([
      "lines.0.plan",
      "lines.1.quantity",
      "coupon",
      "addons.0.addon",
      "billing_cycles",
      "expiration_days",
      "references",
    ]);
    expect(error.fields).toEqual({
      "lines.0.plan": ["unknown plan pla_unknown"],
      "lines.1.quantity": ["must be more than 0"],
      coupon: [`coupon ${fiveDollars} discounts USD; the subscription bills CLP`],
      "addons.0.addon": ["unknown addon add_unknown"],
      billing_cycles: ["must be a positive integer (or null: until cancelled)"],
      expiration_days: ["must be an integer from 0 to 3650"],
      references: ["at most 50 references"],
    });
    expect(error.message).toMatch(/^Invalid subscription: /);
    expect(await s.database.prisma.subscription.count()).toBe(before);
  });

  it("refuses a metered line of quantity 2 and plans of two currencies", async () => {
    const error = await rejection(
      createSubscription(s.acme, { customer: customerId, lines: [{ plan: api.id, quantity: 2 }, { plan: usd.id }] }),
    );
    expect(error.fields["lines.0.quantity"]).toEqual([
      "must be 1 (or absent) on a metered plan: reported usage decides what is billed",
    ]);
    expect(Object.keys(error.fields)).toContain("lines.1.plan");
  });
});

describe("updateSubscription", () => {
  it("before any billed cycle replaces lines and addons and moves date_start with the first billing", async () => {
    const sub = await createSubscription(s.acme, {
      customer: customerId,
      dateStart: "2026-11-01",
      lines: [{ plan: pro.id }],
      addons: [{ addon: setup }],
    });
    const lineId = (await stored(sub.id)).lines[0].id;
    await updateSubscription(s.acme, sub.id, {
      dateStart: "2026-11-15",
      lines: [{ plan: business.id, quantity: 3 }],
      addons: [],
      coupon: tenOff,
    });
    const row = await stored(sub.id);
    expect([day(row.dateStart), day(row.nextBilling), row.couponId]).toEqual(["2026-11-15", "2026-11-15", tenOff]);
    expect(row.lines.map((l) => [l.planId, String(l.quantity)])).toEqual([[business.id, "3"]]);
    expect(row.lines[0].id).not.toBe(lineId);
    expect(row.addons).toEqual([]);
  });

  it("after a billed cycle refuses addons and date_start changes (409) and changes nothing", async () => {
    const sub = await billed([{ plan: pro.id }]);
    const error = await rejection(
      updateSubscription(s.acme, sub.id, { addons: [{ addon: setup }], dateStart: "2026-11-02" }),
    );
    expect([error.code, error.status]).toEqual(["invalid_state", 409]);
    expect(error.message).toBe(
      `Cycle 1 of subscription ${sub.id} has been billed: addons, date_start cannot change any more. ` +
        "Lines (plans and quantities) can change with proration (docs/proration.md).",
    );
    expect(await stored(sub.id)).toEqual(sub);
    // sent back as stored, they are no change
    await updateSubscription(s.acme, sub.id, { dateStart: "2026-11-01", addons: [], note: "ok" });
    expect((await stored(sub.id)).note).toBe("ok");
  });

  it("after a billed cycle prorates 2 -> 3 seats on Nov 21: credit 6 667, charge 10 000, the line kept", async () => {
    const sub = await billed([{ plan: pro.id, quantity: 2 }]);
    await updateSubscription(s.acme, sub.id, {
      lines: [{ plan: pro.id, quantity: 3 }],
      prorationDate: "2026-11-21",
    });
    const row = await stored(sub.id);
    expect(row.lines.map((l) => [l.id, String(l.quantity)])).toEqual([[sub.lines[0].id, "3"]]);
    const items = await s.database.prisma.pendingInvoiceItem.findMany({
      where: { subscriptionId: sub.id },
      orderBy: { position: "asc" },
    });
    expect(items.map((i) => [i.name, String(i.amount), day(i.periodStart), day(i.periodEnd)])).toEqual([
      ["Unused time on 2 x Pro (Nov 21 - Dec 1)", "-6667", "2026-11-21", "2026-12-01"],
      ["Remaining time on 3 x Pro (Nov 21 - Dec 1)", "10000", "2026-11-21", "2026-12-01"],
    ]);
  });

  it("after a billed cycle keeps the currency and the metered lines, and checks the proration options", async () => {
    const sub = await billed([{ plan: api.id }, { plan: pro.id }]);
    const error = await rejection(
      updateSubscription(s.acme, sub.id, {
        lines: [{ plan: pro.id }, { plan: usd.id }],
        atPeriodEnd: true,
        prorationDate: "2026-11-21",
      }),
    );
    expect(error.fields).toEqual({
      proration_date: ["a change at period end is not prorated: send at_period_end or proration options, not both"],
      "lines.1.plan": expect.arrayContaining([
        `plan ${usd.id} bills USD; the subscription bills CLP (cancel it and subscribe again to change currency)`,
      ]),
      "lines.0.plan": [
        `line ${sub.lines[0].id} is metered (plan ${api.id}): once a cycle is billed it stays at its position with ` +
          "its plan, so its usage is billed",
      ],
    });
    expect(await stored(sub.id)).toEqual(sub);
    expect(await s.database.prisma.pendingInvoiceItem.count({ where: { subscriptionId: sub.id } })).toBe(0);
  });
});
