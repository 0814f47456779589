/**
 * The billing run (services/billing-run.ts, docs/billing-run.md) over subscriptions created through
 * the real REST API: preview = finalized invoice, usage billed once, catch-up, exactly once under
 * two concurrent runners, billing_cycles end, cancel at period end, collection and the no-card rule,
 * several organizations and both modes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, statementTable, type TestServer } from "../helpers/server.js";
import { runBilling, NO_CARD_REASON } from "../../src/services/billing-run.js";
import { customerSnapshot } from "../../src/domain/issued-parties.js";

let s: TestServer;
let plans: { pro: string; api: string; tiered: string };
let setup: string;
let welcome: string;

/** The run, in this process. */
async function run(until: string, extra: Partial<Parameters<typeof runBilling>[0]> = {}) {
  return runBilling({ prisma: s.database.prisma, until, ...extra });
}

async function customer(key?: string) {
  const res = await s.rest("POST", "/v1/customers/", { body: chileanCustomer(), key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function subscribe(body: Record<string, unknown>, key?: string) {
  const res = await s.rest("POST", "/v1/subscriptions/", { body, key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const invoicesOf = (subscriptionId: string) =>
  s.database.prisma.invoice.findMany({ where: { subscriptionId }, orderBy: { billingCycle: "asc" } });

beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: {
      name: "Nube",
      plans: [
        { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
        {
          name: "API",
          amount: 100,
          currency: "CLP",
          frequency: "monthly",
          usage_scheme: "metered",
          usage_aggregation: "sum",
        },
        {
          name: "Storage",
          amount: 0,
          currency: "CLP",
          frequency: "monthly",
          tiers_mode: "graduated",
          tiers: [
            { up_to: 10, unit_amount: 1000, flat_amount: 0 },
            { up_to: null, unit_amount: 500, flat_amount: 0 },
          ],
        },
      ],
    },
  });
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  plans = { pro: product.body.plans[0].id, api: product.body.plans[1].id, tiered: product.body.plans[2].id };
  setup = (
    await s.rest("POST", "/v1/addons/", {
      body: {
        name: "Setup",
        amount: 9000,
        currency: "CLP",
        rates: [
          { cycle: 1, percent: 50 },
          { cycle: 2, percent: 25 },
          { cycle: 3, percent: 25 },
        ],
      },
    })
  ).body.id;
  welcome = (
    await s.rest("POST", "/v1/coupons/", {
      body: { name: "Bienvenida", amount: 10, discount_scheme: "%", duration_scheme: "once" },
    })
  ).body.id;
});
afterAll(async () => s?.close());

describe("billing run", () => {
  it("finalizes the invoice the preview showed, line for line, and bills the period's usage exactly once", async () => {
    // a customer with a card (so the no-card rule does not apply), collected later
    const sub = await subscribe({
      customer: await customerWithCard(),
      date_start: "2026-10-01",
      lines: [{ plan: plans.pro, quantity: 2 }, { plan: plans.api }],
      addons: [{ addon: setup }],
      coupon: welcome,
    });
    const metered = sub.lines[1].id;
    const linesOf = (lines: any[]) =>
      lines.map((l) => [l.name, l.description, l.quantity, l.amount, l.discount, l.discount_scheme, l.exempt, l.total]);
    const totalsOf = (b: any) => [b.amount, b.exempt, b.subtotal, b.tax, b.total, b.discount, b.discount_scheme];

    for (const [cycle, until] of [
      [1, "2026-10-01"],
      [2, "2026-11-01"],
    ] as const) {
      if (cycle === 2) {
        for (const [quantity, at] of [
          [30, "2026-10-05T12:00:00-03:00"],
          [12, "2026-10-31T23:00:00-03:00"],
          [500, "2026-11-01T00:30:00-03:00"],
        ] as const) {
          expect(
            (await s.rest("POST", "/v1/usages/", { body: { subscription_line: metered, quantity, date_time: at } }))
              .status,
          ).toBe(201);
        }
      }
      const preview = await s.rest("GET", `/v1/subscriptions/${sub.id}/upcoming_invoice/`);
      expect(preview.status).toBe(200);
      expect(preview.body.cycle).toBe(cycle);
      const summary = await run(until, { collect: false });
      expect(summary.failed, summary.errors.join("; ")).toBe(0);
      expect(summary.invoices, JSON.stringify(summary)).toBeGreaterThan(0);
      const [row] = (await invoicesOf(sub.id)).filter((i) => i.billingCycle === cycle);
      const invoice = (await s.rest("GET", `/v1/invoices/${row.id}/`)).body;
      expect(invoice.status).toBe("finalized");
      expect(invoice.number).toBeGreaterThan(0);
      expect([invoice.date, invoice.period_start, invoice.period_end]).toEqual([
        preview.body.date,
        preview.body.period_start,
        preview.body.period_end,
      ]);
      expect(linesOf(invoice.lines)).toEqual(linesOf(preview.body.lines));
      expect(totalsOf(invoice)).toEqual(totalsOf(preview.body));
    }
    const [first, second] = await invoicesOf(sub.id);
    // cycle 1: (20 000 + 4 500) - 10 % = 22 050 + 4 190 tax; cycle 2: 20 000 + 42 x 100 + 2 250 = 26 450 + 5 026
    expect([first.total.toString(), second.total.toString()]).toEqual(["26240", "31476"]);
    // finalized in bulk, each invoice stores its parties as a single finalize does (domain/issued-parties.ts)
    const billed = customerSnapshot(
      await s.database.prisma.customer.findUniqueOrThrow({ where: { id: first.customerId } }),
    );
    expect([first.customerSnapshot, second.customerSnapshot]).toEqual([billed, billed]);
    expect(first.issuerSnapshot).toEqual({
      name: "Acme SpA",
      taxId: "76042235-5",
      businessName: "Acme SpA",
      activity: "Servicios informáticos",
      activityCodes: [],
      address: "Av. Providencia 1234",
      commune: "Providencia",
      city: null,
      resolutionNumber: null,
      resolutionDate: null,
      siiOffice: "Providencia",
    });

    // October's usage (30 + 12) is billed by cycle 2; the November record waits for cycle 3
    const usages = await s.database.prisma.usage.findMany({
      where: { subscriptionLineId: metered },
      orderBy: { dateTime: "asc" },
    });
    expect(usages.map((u) => [u.quantity.toString(), u.invoiceId])).toEqual([
      ["30", second.id],
      ["12", second.id],
      ["500", null],
    ]);
    const billedLine = (
      await s.database.prisma.invoiceLine.findMany({ where: { invoiceId: second.id, planId: plans.api } })
    )[0];
    const billedQuantity = usages
      .filter((u) => u.invoiceId === second.id)
      .reduce((sum, u) => sum + Number(u.quantity), 0);
    expect(Number(billedLine.quantity)).toBe(billedQuantity);
    expect((await s.rest("DELETE", `/v1/usages/${usages[0].id}/`)).status).toBe(409);

    const after = (await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body;
    expect([
      after.next_billing,
      after.next_billing_cycle,
      after.previous_billing,
      after.coupon_redemptions,
      after.addons[0].addon_redemptions,
    ]).toEqual(["2026-12-01", 3, "2026-11-01", 1, 2]);
    // running again bills nothing new
    const again = await run("2026-11-01", { collect: false });
    expect([again.invoices, again.cycles]).toEqual([0, 0]);
    expect(await invoicesOf(sub.id)).toHaveLength(2);
  });

  it("two concurrent runners bill every (subscription, cycle) exactly once, catching up in order", async () => {
    const ids: string[] = [];
    const buyer = await customerWithCard();
    for (let i = 0; i < 8; i++) {
      ids.push(
        (
          await subscribe({
            customer: buyer,
            date_start: "2026-08-15",
            lines: [{ plan: i % 2 ? plans.tiered : plans.pro, quantity: i + 1 }],
          })
        ).id,
      );
    }
    // collect what earlier tests left open (nothing of these is due before Aug 15)
    await run("2026-08-01");
    // Aug 15, Sep 15, Oct 15 are due on Oct 20
    const [a, b] = await Promise.all([run("2026-10-20", { batchSize: 2 }), run("2026-10-20", { batchSize: 2 })]);
    expect([a.failed, b.failed], [...a.errors, ...b.errors].join("; ")).toEqual([0, 0]);
    expect(a.invoices + b.invoices).toBe(24);
    expect(a.billed + b.billed).toBe(8);
    // each invoice charged once to the card
    expect(a.collected + b.collected).toBe(24);
    const rows = await s.database.prisma.invoice.findMany({
      where: { subscriptionId: { in: ids } },
      orderBy: [{ subscriptionId: "asc" }, { billingCycle: "asc" }],
    });
    expect(rows).toHaveLength(24);
    for (const id of ids) {
      const mine = rows.filter((r) => r.subscriptionId === id);
      expect(mine.map((r) => [r.billingCycle, r.date.toISOString().slice(0, 10)])).toEqual([
        [1, "2026-08-15"],
        [2, "2026-09-15"],
        [3, "2026-10-15"],
      ]);
      // numbers go up with the cycles (billed in order)
      expect(mine.map((r) => r.number!)).toEqual([...mine.map((r) => r.number!)].sort((x, y) => x - y));
    }
    expect(new Set(rows.map((r) => r.number)).size).toBe(24);
    // seats x 10 000 + 19 % for Pro; graduated tiers (quantity <= 10: x 1 000) + 19 % for Storage
    const expected = (i: number) => (i % 2 ? (i + 1) * 1000 : (i + 1) * 10000) * 1.19;
    const sum = rows.reduce((t, r) => t + Number(r.total), 0);
    expect(sum).toBe(ids.reduce((t, _, i) => t + 3 * Math.round(expected(i)), 0));
    const payments = await s.database.prisma.payment.findMany({ where: { invoiceId: { in: rows.map((r) => r.id) } } });
    expect(payments).toHaveLength(24);
    expect(
      payments.every((p) => p.status === "succeeded" && p.amount.equals(rows.find((r) => r.id === p.invoiceId)!.total)),
    ).toBe(true);
    const subs = await s.database.prisma.subscription.findMany({ where: { id: { in: ids } } });
    expect(subs.every((x) => x.nextBillingCycle === 4 && x.nextBilling.toISOString().startsWith("2026-11-15"))).toBe(
      true,
    );
  });

  it(
    "numbers a batch in creation order when the no-card rule stored some of its invoices as drafts before the " +
      "others were inserted finalized",
    async () => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        // due on their date: from cycle 2 on, the no-card rule reads the balance of the cycle before,
        // so the batch writes what it buffered (drafts) before it reads
        const sub = await subscribe({
          customer: await customerWithCard(),
          date_start: "2026-11-05",
          expiration_days: 0,
          lines: [{ plan: plans.pro }],
        });
        ids.push(sub.id);
      }
      // Nov 5, Dec 5 and Jan 5 in one batch (with what earlier tests left due, claimed after these,
      // whose next billing is later)
      const summary = await run("2027-01-06", { batchSize: 100, collect: false });
      expect(summary.failed, summary.errors.join("; ")).toBe(0);
      const rows = await s.database.prisma.invoice.findMany({
        where: { subscriptionId: { in: ids } },
        orderBy: { number: "asc" },
      });
      expect(rows).toHaveLength(12);
      expect(rows.every((r) => r.status === "finalized" && r.numbering === "internal" && r.finalizedAt)).toBe(true);
      expect(rows.every((r) => r.customerSnapshot !== null && r.issuerSnapshot !== null)).toBe(true);
      // one counter update numbered them: consecutive, in the order they were created (claimed by id, cycles in order)
      expect(rows.map((r) => r.number! - rows[0].number!)).toEqual([...Array(12).keys()]);
      expect(rows.map((r) => [r.subscriptionId, r.billingCycle])).toEqual(
        [...ids].sort().flatMap((id) => [1, 2, 3].map((cycle) => [id, cycle])),
      );
    },
  );

  it("ends a subscription after its billing_cycles, and one cancelled at period end at its renewal", async () => {
    const buyer = await customerWithCard();
    const limited = await subscribe({
      customer: buyer,
      date_start: "2026-07-01",
      billing_cycles: 2,
      lines: [{ plan: plans.pro }],
    });
    expect(limited.end_date).toBe("2026-09-01");
    const scheduled = await subscribe({ customer: buyer, date_start: "2026-07-01", lines: [{ plan: plans.pro }] });
    await run("2026-07-01");
    expect(
      (await s.rest("DELETE", `/v1/subscriptions/${scheduled.id}/?at_period_end=true&cancel_reason=too_expensive`))
        .status,
    ).toBe(200);

    await run("2026-10-01");
    const ended = (await s.rest("GET", `/v1/subscriptions/${limited.id}/`)).body;
    expect([ended.status, ended.cancel_reason, ended.next_billing_cycle]).toEqual(["cancelled", "ended", 3]);
    expect((await invoicesOf(limited.id)).map((i) => i.billingCycle)).toEqual([1, 2]);
    const cancelled = (await s.rest("GET", `/v1/subscriptions/${scheduled.id}/`)).body;
    expect([cancelled.status, cancelled.cancel_reason]).toEqual(["cancelled", "too_expensive"]);
    expect((await invoicesOf(scheduled.id)).map((i) => i.billingCycle)).toEqual([1]);
  });

  it("collects with the customer's reusable card; a declined card leaves the invoice open", async () => {
    const payer = await customer();
    const card = await s.rest("POST", "/v1/sources/", {
      body: { customer: payer, gateway: "test", usage: "reusable", data: { token: "tok_visa" } },
    });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    const declined = await customer();
    expect(
      (
        await s.rest("POST", "/v1/sources/", {
          body: { customer: declined, gateway: "test", usage: "reusable", data: { token: "tok_chargeDeclined" } },
        })
      ).status,
    ).toBe(201);
    const paid = await subscribe({
      customer: payer,
      date_start: "2026-06-10",
      lines: [{ plan: plans.pro, quantity: 3 }],
    });
    const unpaid = await subscribe({ customer: declined, date_start: "2026-06-10", lines: [{ plan: plans.pro }] });

    const summary = await run("2026-06-10");
    expect([summary.invoices, summary.collected, summary.failed]).toEqual([2, 1, 1]);
    const [invoice] = await invoicesOf(paid.id);
    const printed = (await s.rest("GET", `/v1/invoices/${invoice.id}/`)).body;
    expect(printed.total).toBe(35700);
    expect(printed.payments.map((p: any) => [p.status, p.amount])).toEqual([["succeeded", 35700]]);
    const [open] = await invoicesOf(unpaid.id);
    const payments = await s.database.prisma.payment.findMany({ where: { invoiceId: open.id } });
    expect(payments.map((p) => p.status)).toEqual(["requires_payment_method"]);
    // a second run charges nothing again
    const again = await run("2026-06-10");
    expect([again.collected, again.failed]).toEqual([0, 0]);
    expect(await s.database.prisma.payment.count({ where: { invoiceId: invoice.id } })).toBe(1);
  });

  it(
    "no card: the invoice stays open; at the next renewal, unpaid past its due date, the subscription is cancelled " +
      "with no_card",
    async () => {
      const buyer = await customer();
      const sub = await subscribe({
        customer: buyer,
        date_start: "2026-05-03",
        expiration_days: 10,
        lines: [{ plan: plans.pro }],
      });
      const first = await run("2026-05-03");
      expect([first.invoices, first.collected, first.cancelled]).toEqual([1, 0, 0]);
      const [invoice] = await invoicesOf(sub.id);
      expect(invoice.dueDate!.toISOString().slice(0, 10)).toBe("2026-05-13");

      // a customer who paid on time keeps being billed
      const onTime = await subscribe({
        customer: await customer(),
        date_start: "2026-05-03",
        lines: [{ plan: plans.pro }],
      });
      await run("2026-05-03");
      const [onTimeInvoice] = await invoicesOf(onTime.id);
      const payment = await s.rest("POST", "/v1/payments/", { body: { invoice: onTimeInvoice.id, amount: 11900 } });
      expect(payment.status, JSON.stringify(payment.body)).toBe(201);
      const source = await s.rest("POST", "/v1/sources/", {
        body: { gateway: "test", usage: "reusable", data: { token: "tok_visa" } },
      });
      expect(source.status, JSON.stringify(source.body)).toBe(201);
      const authorized = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, {
        body: { source: source.body.id },
      });
      expect(authorized.body.status, JSON.stringify(authorized.body)).toBe("succeeded");

      await run("2026-06-03");
      const cancelled = (await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body;
      expect([cancelled.status, cancelled.cancel_reason]).toEqual(["cancelled", NO_CARD_REASON]);
      expect(await invoicesOf(sub.id)).toHaveLength(1);
      expect((await s.rest("GET", `/v1/subscriptions/${onTime.id}/`)).body.status).toBe("active");
      expect((await invoicesOf(onTime.id)).map((i) => i.billingCycle)).toEqual([1, 2]);
    },
  );

  it("rejects an impossible --until date before touching anything", async () => {
    await expect(runBilling({ prisma: s.database.prisma, until: "2026-02-30" })).rejects.toThrow(
      "until: must be a date yyyy-mm-dd, got 2026-02-30",
    );
    await expect(runBilling({ prisma: s.database.prisma, until: "tomorrow" })).rejects.toMatchObject({ status: 400 });
  });

  it(
    "holds the numbering counter only while it inserts the invoices: their lines and usage marks are written first, " +
      "their foreign keys checked at commit",
    async () => {
      // a test clock scopes the run (its advance) to this customer's subscription
      const clock = (await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: "2026-03-01T12:00:00Z" } })).body;
      const buyer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: clock.id }) });
      const card = await s.rest("POST", "/v1/sources/", {
        body: { gateway: "test", customer: buyer.body.id, data: { token: "tok_visa" } },
      });
      expect(card.status, JSON.stringify(card.body)).toBe(201);
      const sub = await subscribe({ customer: buyer.body.id, lines: [{ plan: plans.pro }, { plan: plans.api }] });
      const metered = sub.lines[1].id;
      const usage = await s.rest("POST", "/v1/usages/", { body: { subscription_line: metered, quantity: 7 } });
      expect(usage.status, JSON.stringify(usage.body)).toBe(201);

      s.statements.length = 0;
      const advanced = await s.rest("POST", `/v1/test_clocks/${clock.id}/advance/`, {
        body: { frozen_time: "2026-04-01T12:00:00Z" },
      });
      expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
      // the statements of each transaction that took a number, from BEGIN to COMMIT
      const transactions: string[][] = [];
      let open: string[] | null = null;
      for (const t of s.statements.map(statementTable)) {
        if (t === "BEGIN") open = [];
        else if (t === "COMMIT" || t === "ROLLBACK") {
          if (open?.includes("DocumentCounter")) transactions.push([...open, t]);
          open = null;
        } else open?.push(t);
      }
      expect(transactions).toHaveLength(1);
      const [batch] = transactions;
      const counter = batch.indexOf("DocumentCounter");
      // before the counter: the constraints deferred, the lines inserted, the usage marked billed
      expect(batch.slice(0, counter)).toEqual(expect.arrayContaining(["SET CONSTRAINTS", "InvoiceLine", "Usage"]));
      // from the counter to commit, nothing but the invoices: cycle 1's, stored as a draft before (cycle 2's
      // no-card rule reads its balance), finalized by one update, and cycle 2's inserted finalized
      // and the deferred foreign keys checked; then their events (invoice.created and invoice.finalized:
      // both invoices printed by one joined read, their payments and notes for amount_paid and amount_due with
      // them; every event and webhook message by one statement), before COMMIT
      expect(batch.slice(counter)).toEqual([
        "DocumentCounter",
        "Invoice",
        "Invoice",
        "SET CONSTRAINTS",
        "Invoice (joined)",
        "Event",
        "COMMIT",
      ]);

      const invoices = await invoicesOf(sub.id);
      expect(invoices.map((i) => [i.billingCycle, i.status, i.total.toString()])).toEqual([
        [1, "finalized", "11900"],
        [2, "finalized", "12733"],
      ]);
      const [record] = await s.database.prisma.usage.findMany({ where: { subscriptionLineId: metered } });
      expect(record.invoiceId).toBe(invoices[1].id);
      expect(
        await s.database.prisma.invoiceLine.count({ where: { invoiceId: { in: invoices.map((i) => i.id) } } }),
      ).toBe(3);

      // everywhere else the foreign key is checked at once; deferred, when the run checks it (IMMEDIATE again),
      // which fails the transaction whole
      const missing = (tx: Pick<typeof s.database.prisma, "$executeRaw">) =>
        tx.$executeRaw`UPDATE "Usage" SET "invoiceId" = 'inv_missing' WHERE "id" = ${record.id}`;
      await expect(missing(s.database.prisma)).rejects.toThrow();
      const steps: string[] = [];
      await expect(
        s.database.prisma.$transaction(async (tx) => {
          await tx.$executeRaw`SET CONSTRAINTS "Usage_invoiceId_fkey" DEFERRED`;
          steps.push(`deferred: ${await missing(tx)} row`);
          await tx.$executeRaw`SET CONSTRAINTS "Usage_invoiceId_fkey" IMMEDIATE`;
          steps.push("checked");
        }),
      ).rejects.toThrow();
      expect(steps).toEqual(["deferred: 1 row"]);
      expect((await s.database.prisma.usage.findUniqueOrThrow({ where: { id: record.id } })).invoiceId).toBe(
        invoices[1].id,
      );
    },
  );

  it(
    "bills every organization and mode, numbering each apart; live mode without SII set-up fails alone; paused " +
      "subscriptions wait",
    async () => {
      const live = await subscribe(
        { customer: await customer(s.keys.acmeLive), date_start: "2026-04-01", lines: [{ plan: await livePlan() }] },
        s.keys.acmeLive,
      );
      const otherOrg = await subscribe(
        { customer: await customer(s.keys.other), date_start: "2026-04-01", lines: [{ plan: await otherPlan() }] },
        s.keys.other,
      );
      const paused = await subscribe({
        customer: await customer(),
        date_start: "2026-04-01",
        lines: [{ plan: plans.pro }],
      });
      const pause = await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { status } }`, { id: paused.id });
      expect(pause.body.data.pauseSubscription.status).toBe("paused");

      const summary = await run("2026-04-01");
      // live mode issues a CL33 only as a DTE: before its SII set-up the cycle fails alone, with the
      // 409 naming what to set up (docs/sii-setup.md "Numbering before enrollment"), nothing written
      expect(await invoicesOf(live.id)).toHaveLength(0);
      expect(summary.errors.join("\n")).toContain(
        `${live.id}: live mode issues CL33 only as an SII electronic tax document (DTE), and live mode is not set up ` +
          `with SII`,
      );
      const [otherInvoice] = await invoicesOf(otherOrg.id);
      expect([otherInvoice.organizationId, otherInvoice.number, otherInvoice.numbering]).toEqual([
        s.orgs.other,
        1,
        "internal",
      ]);
      expect(await invoicesOf(paused.id)).toHaveLength(0);
      expect((await s.rest("GET", `/v1/invoices/${otherInvoice.id}/`, { key: s.keys.other })).status).toBe(200);
      expect((await s.rest("GET", `/v1/invoices/${otherInvoice.id}/`)).status).toBe(404);
      // cancelled, so the later runs of this file do not meet it again
      expect((await s.rest("DELETE", `/v1/subscriptions/${live.id}/`, { key: s.keys.acmeLive })).status).toBe(200);
    },
  );
});

async function customerWithCard() {
  const id = await customer();
  const card = await s.rest("POST", "/v1/sources/", {
    body: { customer: id, gateway: "test", usage: "reusable", data: { token: "tok_visa" } },
  });
  expect(card.status, JSON.stringify(card.body)).toBe(201);
  return id;
}

async function livePlan() {
  const res = await s.rest("POST", "/v1/products/", {
    body: { name: "Live", plans: [{ name: "Live", amount: 5000, currency: "CLP", frequency: "monthly" }] },
    key: s.keys.acmeLive,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.plans[0].id;
}

async function otherPlan() {
  const res = await s.rest("POST", "/v1/products/", {
    body: { name: "Otro", plans: [{ name: "Otro", amount: 7000, currency: "CLP", frequency: "monthly" }] },
    key: s.keys.other,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.plans[0].id;
}

describe("stopping the billing run (server shutdown)", () => {
  it("an aborted signal ends the run after the batch in progress, committed; the next run bills the rest", async () => {
    const subs = [];
    for (let i = 0; i < 3; i++)
      subs.push(
        await subscribe({ customer: await customerWithCard(), date_start: "2027-06-01", lines: [{ plan: plans.pro }] }),
      );
    const controller = new AbortController();
    const batches: number[] = [];
    const stopped = await run("2027-06-01", {
      batchSize: 1,
      collect: false,
      signal: controller.signal,
      onProgress: (done) => {
        batches.push(done);
        controller.abort(); // as the server's worker does on SIGTERM
      },
    });
    expect(batches).toEqual([1]); // one batch of one subscription, then no other batch was claimed
    expect(stopped.failed, stopped.errors.join("; ")).toBe(0);
    const billedNow = await s.database.prisma.invoice.count({
      where: { subscriptionId: { in: subs.map((x) => x.id) } },
    });
    expect(billedNow).toBeLessThanOrEqual(1);
    const rest = await run("2027-06-01", { collect: false });
    expect(rest.failed, rest.errors.join("; ")).toBe(0);
    for (const sub of subs) {
      const invoices = await invoicesOf(sub.id);
      expect(
        invoices.filter((i) => i.billingCycle === 1),
        sub.id,
      ).toHaveLength(1);
    }
  });
});
