/**
 * Proration of subscription line changes after a billed cycle (docs/proration.md), over REST and
 * GraphQL: create_prorations (pending items on the next invoice and its preview), none,
 * always_invoice (a finalized invoice for a net charge, a credit note against the cycle invoice
 * for a net credit), at_period_end (pending changes, the preview, applyPendingChanges), the
 * billing run's markPendingItemsBilled, and the 400s (nothing written).
 *
 * Cycle 1 is marked billed by hand (next_billing_cycle 2): the billing run is another step.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import type { ServiceContext } from "../../src/services/context.js";
import { applyPendingChanges, markPendingItemsBilled } from "../../src/services/proration.js";
import { cycleInputOf } from "../../src/services/cycle-input.js";
import { cycleInvoice } from "../../src/domain/billing-cycle.js";

let s: TestServer;
let customerId: string;
let pro: any; // 10 000 CLP monthly
let business: any; // 25 000 CLP monthly
let usd: any;
let yearly: any;
let api: any; // metered

async function created(path: string, body: unknown) {
  const res = await s.rest("POST", path, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

beforeAll(async () => {
  s = await startTestServer();
  customerId = (await created("/v1/customers/", chileanCustomer())).id;
  [pro, business, usd, yearly, api] = (
    await created("/v1/products/", {
      name: "Nube",
      plans: [
        { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
        { name: "Business", amount: 25000, currency: "CLP", frequency: "monthly" },
        { name: "Pro USD", amount: 20, currency: "USD", frequency: "monthly" },
        { name: "Pro anual", amount: 100000, currency: "CLP", frequency: "yearly" },
        { name: "API", amount: 100, currency: "CLP", frequency: "monthly", usage_scheme: "metered" },
      ],
    })
  ).plans;
});
afterAll(async () => s?.close());

/** A subscription from 2026-11-01 whose cycle 1 (Nov 1 - Dec 1) has been billed. */
async function billed(lines: unknown[]) {
  const sub = await created("/v1/subscriptions/", { customer: customerId, date_start: "2026-11-01", lines });
  await s.database.prisma.subscription.update({
    where: { id: sub.id },
    data: { nextBillingCycle: 2, nextBilling: new Date("2026-12-01"), previousBilling: new Date("2026-11-01") },
  });
  return sub;
}

/** A finalized invoice of `total`-ish lines standing for cycle 1's invoice of `subscriptionId`. */
async function cycleOneInvoice(subscriptionId: string, amount: number) {
  const invoice = await created("/v1/invoices/", {
    customer: customerId,
    date: "2026-11-01",
    lines: [{ name: "Nube - Business", quantity: 1, amount }],
  });
  expect((await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`)).status).toBe(200);
  await s.database.prisma.invoice.update({ where: { id: invoice.id }, data: { subscriptionId, billingCycle: 1 } });
  return invoice.id as string;
}

const itemsOf = (body: any) =>
  body.pending_invoice_items.map((i: any) => [i.name, i.quantity, i.amount, i.period_start, i.period_end]);
const upcoming = async (id: string) => {
  const res = await s.rest("GET", `/v1/subscriptions/${id}/upcoming_invoice/`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

function serviceContext(): ServiceContext {
  return {
    prisma: s.database.prisma,
    auth: { organizationId: s.orgs.acme, testMode: true, userEmail: "ops@acme.cl", apiKeyId: "key_test" },
    now: () => new Date(),
    settings: DEFAULT_SETTINGS,
    baseUrl: "http://localhost",
  };
}

describe("create_prorations (default)", () => {
  it(
    "REST: 2 -> 3 seats on Nov 21 stores a credit of 6 667 and a charge of 10 000 that the next invoice (and its " +
      "preview) bills",
    async () => {
      const sub = await billed([{ plan: pro.id, quantity: 2 }]);
      const res = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { lines: [{ plan: pro.id, quantity: 3 }], proration_date: "2026-11-21" },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      // the line keeps its id (usage and history stay attached)
      expect(res.body.lines).toMatchObject([{ id: sub.lines[0].id, plan: { id: pro.id }, quantity: 3 }]);
      expect(itemsOf(res.body)).toEqual([
        ["Unused time on 2 x Pro (Nov 21 - Dec 1)", 1, -6667, "2026-11-21", "2026-12-01"],
        ["Remaining time on 3 x Pro (Nov 21 - Dec 1)", 1, 10000, "2026-11-21", "2026-12-01"],
      ]);
      expect(
        await s.database.prisma.pendingInvoiceItem.count({ where: { subscriptionId: sub.id, invoiceId: null } }),
      ).toBe(2);

      const next = await upcoming(sub.id);
      expect(next.lines.map((l: any) => [l.name, l.quantity, l.amount, l.total])).toEqual([
        ["Nube - Pro", 3, 10000, 30000],
        ["Remaining time on 3 x Pro (Nov 21 - Dec 1)", 1, 10000, 10000],
        ["Unused time on 2 x Pro (Nov 21 - Dec 1)", 1, -6667, -6667],
      ]);
      expect(next.lines.map((l: any) => [l.subscription_line, l.pending_item])).toEqual([
        [sub.lines[0].id, null],
        [null, res.body.pending_invoice_items[1].id],
        [null, res.body.pending_invoice_items[0].id],
      ]);
      // 30 000 + 10 000 - 6 667 = 33 333; tax 6 333 (6 333.27); total 39 666
      expect([next.cycle, next.amount, next.tax, next.total]).toEqual([2, 33333, 6333, 39666]);
    },
  );

  it(
    "GraphQL: an upgrade Pro -> Business on Nov 16 credits 5 000 and charges 12 500; a second change in the cycle " +
      "adds its own items",
    async () => {
      const sub = await billed([{ plan: pro.id }]);
      const mutation =
        `mutation($id: ID!, $input: SubscriptionInput!) { updateSubscription(id: $id, input: $input) { ` +
        `lines { id quantity plan { id } } pendingInvoiceItems { name amount quantity periodStart periodEnd } } }`;
      const up = await s.graphql(mutation, {
        id: sub.id,
        input: { lines: [{ plan: business.id }], prorationDate: "2026-11-16" },
      });
      expect(up.body.errors).toBeUndefined();
      expect(up.body.data.updateSubscription.lines).toEqual([
        { id: sub.lines[0].id, quantity: "1", plan: { id: business.id } },
      ]);
      expect(up.body.data.updateSubscription.pendingInvoiceItems.map((i: any) => [i.name, i.amount])).toEqual([
        ["Unused time on 1 x Pro (Nov 16 - Dec 1)", "-5000"],
        ["Remaining time on 1 x Business (Nov 16 - Dec 1)", "12500"],
      ]);
      // 2 seats of Business from Nov 26: -4 167 (25 000 x 5/30) and +8 333
      const again = await s.graphql(mutation, {
        id: sub.id,
        input: {
          lines: [{ plan: business.id, quantity: 2 }],
          prorationDate: "2026-11-26",
          prorationBehavior: "create_prorations",
        },
      });
      expect(again.body.errors).toBeUndefined();
      expect(again.body.data.updateSubscription.pendingInvoiceItems.map((i: any) => i.amount)).toEqual([
        "-5000",
        "12500",
        "-4167",
        "8333",
      ]);
      const preview = await s.graphql(
        `query($id: ID!) { upcomingInvoice(subscription: $id) { amount total lines { name total subscriptionLine } } }`,
        { id: sub.id },
      );
      // 50 000 + 12 500 + 8 333 - 5 000 - 4 167 = 61 666; x 1.19 = 73 382.54 -> tax 11 717, total 73 383
      expect(preview.body.data.upcomingInvoice).toMatchObject({ amount: "61666", total: "73383" });
      expect(preview.body.data.upcomingInvoice.lines.map((l: any) => l.subscriptionLine)).toEqual([
        sub.lines[0].id,
        null,
        null,
        null,
        null,
      ]);
    },
  );
});

describe("none and always_invoice", () => {
  it("none: the new lines bill from the next cycle, nothing is prorated", async () => {
    const sub = await billed([{ plan: pro.id, quantity: 2 }]);
    const res = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
      body: { lines: [{ plan: business.id, quantity: 2 }], proration_behavior: "none" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.pending_invoice_items).toEqual([]);
    expect(await s.database.prisma.pendingInvoiceItem.count({ where: { subscriptionId: sub.id } })).toBe(0);
    const next = await upcoming(sub.id);
    expect(next.lines.map((l: any) => [l.name, l.total])).toEqual([["Nube - Business", 50000]]);
    expect(next.total).toBe(59500);
  });

  it(
    "always_invoice, net charge (REST): a finalized, numbered invoice of 3 333 + tax now; " + "nothing pending",
    async () => {
      const sub = await billed([{ plan: pro.id, quantity: 2 }]);
      const res = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: {
          lines: [{ plan: pro.id, quantity: 3 }],
          proration_behavior: "always_invoice",
          proration_date: "2026-11-21",
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.pending_invoice_items).toEqual([]);
      const invoices = await s.database.prisma.invoice.findMany({
        where: { subscriptionId: sub.id },
        include: { lines: true },
      });
      expect(invoices).toHaveLength(1);
      const [invoice] = invoices;
      expect(invoice.status).toBe("finalized");
      expect(invoice.number).toBeGreaterThan(0);
      expect(invoice.billingCycle).toBeNull();
      expect([invoice.amount.toString(), invoice.tax.toString(), invoice.total.toString()]).toEqual([
        "3333",
        "633",
        "3966",
      ]);
      expect(invoice.lines.map((l) => [l.name, l.description, l.amount.toString()])).toEqual([
        [
          "Proration (Nov 21 - Dec 1)",
          "Unused time on 2 x Pro (Nov 21 - Dec 1): -6667; Remaining time on 3 x Pro (Nov 21 - Dec 1): 10000",
          "3333",
        ],
      ]);
      // the API shows it like any invoice
      const printed = await s.rest("GET", `/v1/invoices/${invoice.id}/`);
      expect(printed.body).toMatchObject({
        status: "finalized",
        total: 3966,
        period_start: "2026-11-21",
        period_end: "2026-12-01",
      });
    },
  );

  it(
    "always_invoice, net credit (GraphQL): a finalized credit note of 10 000 + tax against the cycle invoice; " +
      "without one, the credit waits for the next invoice",
    async () => {
      const sub = await billed([{ plan: business.id }]);
      const cycleInvoiceId = await cycleOneInvoice(sub.id, 25000);
      const mutation =
        `mutation($id: ID!, $input: SubscriptionInput!) { updateSubscription(id: $id, input: $input) { ` +
        `pendingInvoiceItems { name amount } } }`;
      const down = await s.graphql(mutation, {
        id: sub.id,
        input: { lines: [{ plan: pro.id }], prorationBehavior: "always_invoice", prorationDate: "2026-11-11" },
      });
      expect(down.body.errors).toBeUndefined();
      expect(down.body.data.updateSubscription.pendingInvoiceItems).toEqual([]);
      const notes = await s.database.prisma.creditNote.findMany({
        where: { invoiceId: cycleInvoiceId },
        include: { lines: true },
      });
      expect(notes).toHaveLength(1);
      // -16 667 + 6 667 = -10 000: a note of 10 000 + 1 900
      expect([
        notes[0].status,
        notes[0].amount.toString(),
        notes[0].tax.toString(),
        notes[0].total.toString(),
        notes[0].documentTypeId,
      ]).toEqual(["finalized", "10000", "1900", "11900", "CL61"]);
      expect(notes[0].lines.map((l) => [l.name, l.amount.toString()])).toEqual([
        ["Proration (Nov 11 - Dec 1)", "10000"],
      ]);

      // no finalized cycle invoice: the items wait for the next cycle invoice instead
      const other = await billed([{ plan: business.id }]);
      const res = await s.graphql(mutation, {
        id: other.id,
        input: { lines: [{ plan: pro.id }], prorationBehavior: "always_invoice", prorationDate: "2026-11-11" },
      });
      expect(res.body.data.updateSubscription.pendingInvoiceItems).toEqual([
        { name: "Unused time on 1 x Business (Nov 11 - Dec 1)", amount: "-16667" },
        { name: "Remaining time on 1 x Pro (Nov 11 - Dec 1)", amount: "6667" },
      ]);
      expect(await s.database.prisma.creditNote.count({ where: { invoice: { subscriptionId: other.id } } })).toBe(0);
    },
  );
});

describe("at_period_end", () => {
  it(
    "schedules a downgrade for the renewal: lines unchanged now, pending_changes shown, the preview bills the new " +
      "lines; the same lines cancel it",
    async () => {
      const sub = await billed([{ plan: business.id, quantity: 2 }]);
      const res = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { lines: [{ plan: pro.id, quantity: 2 }], at_period_end: true },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.lines).toMatchObject([{ id: sub.lines[0].id, plan: { id: business.id }, quantity: 2 }]);
      expect(res.body.pending_changes).toMatchObject({
        cycle: 2,
        lines: [{ id: sub.lines[0].id, plan: pro.id, quantity: 2, coupon: null }],
      });
      expect(res.body.pending_invoice_items).toEqual([]);
      const next = await upcoming(sub.id);
      expect(next.lines.map((l: any) => [l.name, l.quantity, l.total, l.subscription_line])).toEqual([
        ["Nube - Pro", 2, 20000, sub.lines[0].id],
      ]);
      expect(next.total).toBe(23800);

      // sending the current lines with at_period_end cancels the scheduled change
      const undo = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { lines: [{ plan: business.id, quantity: 2 }], at_period_end: true },
      });
      expect(undo.body.pending_changes).toBeNull();
      expect((await upcoming(sub.id)).total).toBe(59500);
    },
  );

  it(
    "the billing run's helpers: applyPendingChanges writes the scheduled lines at their cycle, " +
      "markPendingItemsBilled links the billed items and carries excess credit",
    async () => {
      const sub = await billed([{ plan: business.id }]);
      // a downgrade now (net credit 10 000 pending) and another one scheduled: the cycle 2 invoice (Pro 10 000) cannot
      // absorb all credits
      expect(
        (
          await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
            body: {
              lines: [{ plan: pro.id, quantity: 3 }],
              proration_date: "2026-11-01",
              proration_behavior: "create_prorations",
            },
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
            body: { lines: [{ plan: pro.id }], at_period_end: true },
          })
        ).status,
      ).toBe(200);
      const ctx = serviceContext();
      expect(await applyPendingChanges(ctx, sub.id, 1)).toBe(false);
      await s.database.prisma.$transaction(async (tx) => {
        const txCtx = { ...ctx, prisma: tx as unknown as ServiceContext["prisma"] };
        expect(await applyPendingChanges(txCtx, sub.id, 2)).toBe(true);
        const { input } = await cycleInputOf(txCtx, sub.id);
        const invoice = cycleInvoice(input);
        // Pro 10 000 + 30 000 (3 x Pro from Nov 1) - 25 000 (Business from Nov 1) = 15 000
        expect(invoice.lines.map((l) => [l.name, l.quantity, l.amount])).toEqual([
          ["Nube - Pro", "1", "10000"],
          ["Remaining time on 3 x Pro (Nov 1 - Dec 1)", "1", "30000"],
          ["Unused time on 1 x Business (Nov 1 - Dec 1)", "1", "-25000"],
        ]);
        expect(invoice.totals.amount.toFixed()).toBe("15000");
        const stored = await tx.invoice.create({
          data: {
            id: "inv_cycle2000000000000000000",
            organizationId: s.orgs.acme,
            testMode: true,
            customerId,
            documentTypeId: "CL33",
            currencyId: "CLP",
            date: new Date("2026-12-01"),
            userEmail: "ops@acme.cl",
            subscriptionId: sub.id,
            billingCycle: 2,
          },
        });
        expect(
          await markPendingItemsBilled(txCtx, sub.id, stored.id, {
            billedPendingItems: invoice.billedPendingItems,
            carriedCredits: [],
          }),
        ).toBe(2);
      });
      const after = (await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body;
      expect(after.lines).toMatchObject([{ id: sub.lines[0].id, plan: { id: pro.id }, quantity: 1 }]);
      expect(after.pending_changes).toBeNull();
      expect(after.pending_invoice_items).toEqual([]);
      expect(
        await s.database.prisma.pendingInvoiceItem.count({ where: { invoiceId: "inv_cycle2000000000000000000" } }),
      ).toBe(2);

      // a credit larger than the invoice: the rest is carried as a new pending item
      await s.database.prisma.pendingInvoiceItem.create({
        data: {
          id: "pii_big00000000000000000000",
          organizationId: s.orgs.acme,
          testMode: true,
          subscriptionId: sub.id,
          name: "Unused time on 5 x Pro (Dec 1 - Jan 1)",
          amount: "-50000",
          periodStart: new Date("2026-12-01"),
          periodEnd: new Date("2027-01-01"),
        },
      });
      await s.database.prisma.subscription.update({ where: { id: sub.id }, data: { nextBillingCycle: 3 } });
      const { input } = await cycleInputOf(ctx, sub.id);
      const invoice = cycleInvoice(input);
      expect(invoice.totals.total.toFixed()).toBe("0");
      await markPendingItemsBilled(ctx, sub.id, "inv_cycle2000000000000000000", invoice);
      expect(
        (await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body.pending_invoice_items.map((i: any) => [
          i.name,
          i.amount,
        ]),
      ).toEqual([["Credit carried over: Unused time on 5 x Pro (Dec 1 - Jan 1)", -40000]]);
    },
  );
});

describe("bad input: a 400 naming the field, nothing written", () => {
  async function expectRejected(id: string, body: Record<string, unknown>, field: string) {
    const before = {
      items: await s.database.prisma.pendingInvoiceItem.count(),
      lines: await s.database.prisma.subscriptionLine.findMany({
        where: { subscriptionId: id },
        orderBy: { position: "asc" },
      }),
    };
    const res = await s.rest("PATCH", `/v1/subscriptions/${id}/`, { body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(Object.keys(res.body.error.fields ?? {}), JSON.stringify(res.body.error)).toContain(field);
    expect(await s.database.prisma.pendingInvoiceItem.count()).toBe(before.items);
    expect(
      await s.database.prisma.subscriptionLine.findMany({
        where: { subscriptionId: id },
        orderBy: { position: "asc" },
      }),
    ).toEqual(before.lines);
    return res.body.error.fields[field];
  }

  it(
    "another currency or frequency, a metered line changed, an unknown behaviour, a date outside the period, " +
      "at_period_end with proration options",
    async () => {
      const sub = await billed([{ plan: pro.id }, { plan: api.id }]);
      expect(await expectRejected(sub.id, { lines: [{ plan: usd.id }] }, "lines.0.plan")).toEqual(
        expect.arrayContaining([expect.stringMatching(/bills USD; the subscription bills CLP/)]),
      );
      expect(await expectRejected(sub.id, { lines: [{ plan: yearly.id }, { plan: api.id }] }, "lines.0.plan")).toEqual(
        expect.arrayContaining([expect.stringMatching(/yearly; the subscription is monthly/)]),
      );
      expect(
        await expectRejected(sub.id, { lines: [{ plan: business.id }, { plan: pro.id }] }, "lines.1.plan"),
      ).toEqual([expect.stringMatching(/is metered/)]);
      expect(
        await expectRejected(
          sub.id,
          { lines: [{ plan: business.id }, { plan: api.id }], proration_behavior: "sometimes" },
          "proration_behavior",
        ),
      ).toEqual(["must be one of create_prorations, none, always_invoice"]);
      expect(
        await expectRejected(
          sub.id,
          { lines: [{ plan: business.id }, { plan: api.id }], proration_date: "2026-12-02" },
          "proration_date",
        ),
      ).toEqual(["must be within the current period 2026-11-01 to 2026-12-01"]);
      await expectRejected(
        sub.id,
        { lines: [{ plan: business.id }, { plan: api.id }], at_period_end: true, proration_behavior: "none" },
        "proration_behavior",
      );
      // GraphQL: the same rule and shape
      const res = await s.graphql(
        `mutation($id: ID!) { updateSubscription(id: $id, input: { lines: [{ plan: "${business.id}" }, { plan: ` +
          `"${api.id}" }], prorationBehavior: later }) { id } }`,
        { id: sub.id },
      );
      // GraphQL: prorationBehavior is the ProrationBehavior enum, so an unknown value fails validation
      expect(res.body.errors[0].message).toMatch(/Value "later" does not exist in "ProrationBehavior" enum/);
      expect(res.body.errors[0].extensions).toMatchObject({ code: "validation_error" });
      // the metered line may stay while the licensed one changes
      const ok = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { lines: [{ plan: business.id }, { plan: api.id }], proration_date: "2026-11-21" },
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.lines.map((l: any) => l.id)).toEqual(sub.lines.map((l: any) => l.id));
      expect(ok.body.pending_invoice_items.map((i: any) => i.amount)).toEqual([-3333, 8333]);
    },
  );
});
