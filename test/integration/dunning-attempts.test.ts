/**
 * Dunning attempts (docs/dunning.md "Attempts"), driven by test clocks: a declined renewal's customer enters the
 * organization's default campaign the day after the due date, the campaign retries the card every 3 days, 3 times,
 * then cancels the subscription (`unpaid`); paying between attempts ends the run; a hard decline is charged once;
 * excluded customers and organizations without campaigns are not dunned; two rounds at once make each attempt once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { attemptPaymentId, runDunningAttempts } from "../../src/services/dunning-attempts.js";
import { runContext } from "../../src/services/billing-run/run-context.js";
import { withinTransaction } from "../../src/services/context.js";
import { authorizeLocked, createPayment } from "../../src/services/payments.js";
import { derivedId } from "../../src/infra/ids.js";
import { sweepOverdueInvoices } from "../../src/services/overdue-invoices.js";

let s: TestServer;
let plan: string;
beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
  });
  expect(product.status, product.text).toBe(201);
  plan = product.body.plans[0].id;
});
afterAll(async () => s?.close());

/** A clock at `time`, a customer on it with a card of `token` and a subscription to the plan. */
async function subscribed(time: string, token: string, customerFields: Record<string, unknown> = {}) {
  const clock = (await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: time } })).body.id as string;
  const created = await s.rest("POST", "/v1/customers/", {
    body: chileanCustomer({ test_clock: clock, ...customerFields }),
  });
  expect(created.status, created.text).toBe(201);
  const customer = created.body.id as string;
  const card = await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token } } });
  expect(card.status, card.text).toBe(201);
  const sub = await s.rest("POST", "/v1/subscriptions/", { body: { customer, lines: [{ plan }] } });
  expect(sub.status, sub.text).toBe(201);
  return { clock, customer, card: card.body.id as string, subscription: sub.body.id as string };
}

async function advance(clock: string, time: string) {
  const res = await s.rest("POST", `/v1/test_clocks/${clock}/advance/`, { body: { frozen_time: time } });
  expect(res.body.status, res.text).toBe("ready");
}

/** Advances `clock` a day at a time (12:00 UTC) from `from` to `to` (yyyy-mm-dd, both included). */
async function dayByDay(clock: string, from: string, to: string) {
  for (let d = new Date(`${from}T12:00:00Z`); d <= new Date(`${to}T12:00:00Z`); d = new Date(d.getTime() + 86_400_000))
    await advance(clock, d.toISOString());
}

/** The customer's dunning attempts through REST, oldest first. */
async function attemptsOf(customer: string): Promise<any[]> {
  const res = await s.rest("GET", `/v1/dunning_attempts/?customer=${customer}&page_size=50`);
  expect(res.status, res.text).toBe(200);
  return [...res.body.results].reverse();
}

/** The dunning events of `customer`, oldest first: [type, attempt number, outcome, final action]. */
async function dunningEvents(customer: string): Promise<[string, number, string, string | null][]> {
  const res = await s.rest("GET", "/v1/events/?page_size=100&type__in=dunning.attempt,dunning.finished");
  expect(res.status, res.text).toBe(200);
  return res.body.results
    .filter((e: any) => e.data.object.customer === customer)
    .reverse()
    .map((e: any) => [e.type, e.data.object.number, e.data.object.outcome, e.data.object.final_action]);
}

/** The dunning's payments of `customer` (their description says so), oldest first. */
const dunningPayments = (customer: string) =>
  s.database.prisma.payment.findMany({
    where: { customerId: customer, description: { startsWith: "Dunning attempt" } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });

const invoiceOf = async (subscription: string) =>
  (await s.database.prisma.invoice.findFirstOrThrow({ where: { subscriptionId: subscription } })).id;

const subscriptionOf = async (subscription: string) => (await s.rest("GET", `/v1/subscriptions/${subscription}/`)).body;

describe("dunning attempts", () => {
  it("an organization without campaigns: nothing changes (no run, no attempt)", async () => {
    const { clock, customer, subscription } = await subscribed(
      "2026-01-01T12:00:00Z",
      "tok_chargeDeclinedInsufficientFunds",
    );
    await advance(clock, "2026-01-01T13:00:00Z");
    await dayByDay(clock, "2026-01-02", "2026-01-10");
    expect(await s.database.prisma.dunningRun.count({ where: { customerId: customer } })).toBe(0);
    expect(await attemptsOf(customer)).toEqual([]);
    expect(await dunningPayments(customer)).toEqual([]);
    expect((await subscriptionOf(subscription)).status).toBe("past_due");
  });

  it("a declined renewal: attempts on entry, +3 d, +6 d, then the subscription is cancelled (unpaid)", async () => {
    const campaign = await s.rest("POST", "/v1/dunning_campaigns/", {
      body: {
        name: "Estándar",
        code: "standard",
        thresholds: [{ currency: "CLP", amount: 0 }],
        days_between_attempts: 3,
        max_attempts: 3,
        final_action: "cancel_subscriptions",
        applied_to_organization: true,
      },
    });
    expect(campaign.status, campaign.text).toBe(201);
    const { clock, customer, subscription } = await subscribed(
      "2026-03-01T12:00:00Z",
      "tok_chargeDeclinedInsufficientFunds",
    );
    // the renewal: billed, the billing run's charge declined
    await advance(clock, "2026-03-01T13:00:00Z");
    const invoice = await invoiceOf(subscription);
    // due 2026-03-01: not overdue on its due date
    await advance(clock, "2026-03-01T20:00:00Z");
    expect(await attemptsOf(customer)).toEqual([]);
    await dayByDay(clock, "2026-03-02", "2026-03-12");
    const attempts = await attemptsOf(customer);
    expect(attempts.map((a) => [a.number, a.created.slice(0, 10), a.outcome, a.amount_due, a.final_action])).toEqual([
      [1, "2026-03-02", "unpaid", 11900, null],
      [2, "2026-03-05", "unpaid", 11900, null],
      [3, "2026-03-08", "unpaid", 11900, "cancel_subscriptions"],
    ]);
    const payments = await dunningPayments(customer);
    expect(payments).toHaveLength(3);
    expect(payments.map((p) => [p.invoiceId, p.amount.toFixed(), p.status])).toEqual([
      [invoice, "11900", "requires_payment_method"],
      [invoice, "11900", "requires_payment_method"],
      [invoice, "11900", "requires_payment_method"],
    ]);
    attempts.forEach((a, k) => {
      expect(a.customer).toBe(customer);
      expect(a.campaign).toBe(campaign.body.id);
      expect(a.currency).toBe("CLP");
      expect(a.invoices).toEqual([
        {
          invoice,
          amount_due: 11900,
          payment: payments[k].id,
          charge: "declined",
          failure_code: "insufficient_funds",
          decline_kind: "soft",
        },
      ]);
    });
    expect(await dunningEvents(customer)).toEqual([
      ["dunning.attempt", 1, "unpaid", null],
      ["dunning.attempt", 2, "unpaid", null],
      ["dunning.attempt", 3, "unpaid", "cancel_subscriptions"],
      ["dunning.finished", 3, "unpaid", "cancel_subscriptions"],
    ]);
    const cancelled = await subscriptionOf(subscription);
    expect([cancelled.status, cancelled.cancel_reason]).toEqual(["cancelled", "unpaid"]);
    // retrieve, and nothing more after the run finished
    const one = await s.rest("GET", `/v1/dunning_attempts/${attempts[2].id}/`);
    expect(one.body).toEqual(attempts[2]);
    await dayByDay(clock, "2026-03-13", "2026-03-16");
    expect(await attemptsOf(customer)).toHaveLength(3);
    expect(await dunningPayments(customer)).toHaveLength(3);
    const run = await s.database.prisma.dunningRun.findFirstOrThrow({ where: { customerId: customer } });
    expect([run.status, run.attempts, run.finalAction]).toEqual(["finished", 3, "cancel_subscriptions"]);
    // GraphQL reads the same
    const gql = await s.graphql(
      `query($c: StringFilter) { dunningAttempts(where: {customer: $c}) { totalCount edges { node {
        number outcome finalAction invoices { charge declineKind failureCode amountDue } } } } }`,
      { c: { equals: customer } },
    );
    expect(gql.body.errors, JSON.stringify(gql.body)).toBeUndefined();
    expect(gql.body.data.dunningAttempts.totalCount).toBe(3);
    expect(gql.body.data.dunningAttempts.edges[0].node).toEqual({
      number: 3,
      outcome: "unpaid",
      finalAction: "cancel_subscriptions",
      invoices: [{ charge: "declined", declineKind: "soft", failureCode: "insufficient_funds", amountDue: "11900" }],
    });
  });

  it("paying the invoice between attempts ends the run paid, with no further attempts", async () => {
    const { clock, customer, subscription } = await subscribed(
      "2026-04-01T12:00:00Z",
      "tok_chargeDeclinedInsufficientFunds",
    );
    await advance(clock, "2026-04-01T13:00:00Z");
    const invoice = await invoiceOf(subscription);
    await advance(clock, "2026-04-02T12:00:00Z");
    expect((await attemptsOf(customer)).map((a) => a.number)).toEqual([1]);
    // the customer pays with a new card through the payments API
    const card = await s.rest("POST", "/v1/sources/", {
      body: { gateway: "test", customer, data: { token: "tok_visa" } },
    });
    const payment = await s.rest("POST", "/v1/payments/", { body: { invoice, amount: 11900 } });
    const paid = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, { body: { source: card.body.id } });
    expect(paid.body.status, paid.text).toBe("succeeded");
    await dayByDay(clock, "2026-04-03", "2026-04-12");
    const attempts = await attemptsOf(customer);
    // the closing record of the run: nothing charged, nothing due
    expect(attempts.map((a) => [a.number, a.created.slice(0, 10), a.outcome, a.amount_due])).toEqual([
      [1, "2026-04-02", "unpaid", 11900],
      [2, "2026-04-03", "paid", 0],
    ]);
    expect(attempts[1].invoices).toEqual([
      { invoice, amount_due: 0, payment: null, charge: "not_attempted", failure_code: null, decline_kind: null },
    ]);
    expect(await dunningEvents(customer)).toEqual([
      ["dunning.attempt", 1, "unpaid", null],
      ["dunning.finished", 2, "paid", null],
    ]);
    expect(await dunningPayments(customer)).toHaveLength(1);
    const run = await s.database.prisma.dunningRun.findFirstOrThrow({ where: { customerId: customer } });
    expect(run.status).toBe("paid");
    expect((await subscriptionOf(subscription)).status).toBe("active");
  });

  it("a hard decline is charged once; later attempts do not charge that card", async () => {
    const { clock, customer, card, subscription } = await subscribed(
      "2026-05-01T12:00:00Z",
      "tok_chargeDeclinedExpiredCard",
    );
    await advance(clock, "2026-05-01T13:00:00Z");
    const invoice = await invoiceOf(subscription);
    await dayByDay(clock, "2026-05-02", "2026-05-09");
    const attempts = await attemptsOf(customer);
    const payments = await dunningPayments(customer);
    expect(payments).toHaveLength(1);
    expect(attempts.map((a) => [a.number, a.created.slice(0, 10), a.invoices])).toEqual([
      [
        1,
        "2026-05-02",
        [
          {
            invoice,
            amount_due: 11900,
            payment: payments[0].id,
            charge: "declined",
            failure_code: "expired_card",
            decline_kind: "hard",
          },
        ],
      ],
      [
        2,
        "2026-05-05",
        [
          {
            invoice,
            amount_due: 11900,
            payment: null,
            charge: "not_attempted",
            failure_code: null,
            decline_kind: null,
          },
        ],
      ],
      [
        3,
        "2026-05-08",
        [
          {
            invoice,
            amount_due: 11900,
            payment: null,
            charge: "not_attempted",
            failure_code: null,
            decline_kind: null,
          },
        ],
      ],
    ]);
    const run = await s.database.prisma.dunningRun.findFirstOrThrow({ where: { customerId: customer } });
    expect(run.hardDeclinedSourceIds).toEqual([card]);
  });

  it("an excluded customer gets no run", async () => {
    const { clock, customer, subscription } = await subscribed(
      "2026-06-01T12:00:00Z",
      "tok_chargeDeclinedInsufficientFunds",
      { exclude_from_dunning: true },
    );
    await advance(clock, "2026-06-01T13:00:00Z");
    await dayByDay(clock, "2026-06-02", "2026-06-08");
    expect(await s.database.prisma.dunningRun.count({ where: { customerId: customer } })).toBe(0);
    expect(await attemptsOf(customer)).toEqual([]);
    expect((await subscriptionOf(subscription)).status).toBe("past_due");
  });

  it("two rounds at once make each attempt once", async () => {
    const { clock, customer } = await subscribed("2026-07-01T12:00:00Z", "tok_chargeDeclinedInsufficientFunds");
    await advance(clock, "2026-07-01T13:00:00Z");
    const round = () =>
      runDunningAttempts({
        prisma: s.database.prisma,
        settings: DEFAULT_SETTINGS,
        now: () => new Date(),
        testClockId: clock,
      });
    for (const [time, expected] of [
      ["2026-07-02T12:00:00Z", 1],
      ["2026-07-05T12:00:00Z", 2],
    ] as const) {
      // the clock moved without its advance's own round
      const frozen = new Date(time);
      await s.database.prisma.testClock.update({ where: { id: clock }, data: { frozenTime: frozen } });
      await sweepOverdueInvoices({
        prisma: s.database.prisma,
        settings: DEFAULT_SETTINGS,
        now: () => frozen,
        testClockId: clock,
      });
      const [a, b] = await Promise.all([round(), round()]);
      expect(a.entered + b.entered).toBe(expected === 1 ? 1 : 0);
      expect(a.attempts + b.attempts).toBe(1);
      expect(a.declined + b.declined).toBe(1);
      expect(await s.database.prisma.dunningAttempt.count({ where: { customerId: customer } })).toBe(expected);
      expect(await dunningPayments(customer)).toHaveLength(expected);
    }
    expect(await s.database.prisma.dunningRun.count({ where: { customerId: customer } })).toBe(1);
  });

  it("a customer's own campaign: below its threshold no run; mark_uncollectible after the last attempt", async () => {
    const create = async (code: string, fields: Record<string, unknown>) => {
      const res = await s.rest("POST", "/v1/dunning_campaigns/", {
        body: { name: code, code, days_between_attempts: 1, max_attempts: 1, ...fields },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const high = await create("high", { thresholds: [{ currency: "CLP", amount: 50000 }] });
    const write = await create("write-off", {
      thresholds: [{ currency: "CLP", amount: 11900 }],
      retry_card: false,
      final_action: "mark_uncollectible",
    });
    const below = await subscribed("2026-08-01T12:00:00Z", "tok_chargeDeclinedInsufficientFunds", {
      dunning_campaign: high,
    });
    const reached = await subscribed("2026-08-01T12:00:00Z", "tok_chargeDeclinedInsufficientFunds", {
      dunning_campaign: write,
    });
    for (const c of [below, reached]) {
      await advance(c.clock, "2026-08-01T13:00:00Z");
      await dayByDay(c.clock, "2026-08-02", "2026-08-04");
    }
    // 11,900 overdue does not reach 50,000
    expect(await attemptsOf(below.customer)).toEqual([]);
    const invoice = await invoiceOf(reached.subscription);
    const attempts = await attemptsOf(reached.customer);
    expect(attempts.map((a) => [a.number, a.campaign, a.created.slice(0, 10), a.outcome, a.final_action])).toEqual([
      [1, write, "2026-08-02", "unpaid", "mark_uncollectible"],
    ]);
    // retry_card false: no charge
    expect(attempts[0].invoices).toEqual([
      { invoice, amount_due: 11900, payment: null, charge: "not_attempted", failure_code: null, decline_kind: null },
    ]);
    expect(await dunningPayments(reached.customer)).toEqual([]);
    const marked = (await s.rest("GET", `/v1/invoices/${invoice}/`)).body;
    expect([marked.payment_status, marked.amount_due]).toEqual(["uncollectible", 11900]);
    // the write-off makes the past-due subscription active again (docs/dunning.md "Past-due subscriptions")
    expect((await subscriptionOf(reached.subscription)).status).toBe("active");
    expect(await dunningEvents(reached.customer)).toEqual([
      ["dunning.attempt", 1, "unpaid", "mark_uncollectible"],
      ["dunning.finished", 1, "unpaid", "mark_uncollectible"],
    ]);
  });

  it("a process died mid-charge: the next resumes its charge (same ids), writes the attempt once", async () => {
    const { clock, customer, subscription } = await subscribed(
      "2026-09-01T12:00:00Z",
      "tok_chargeDeclinedInsufficientFunds",
    );
    await advance(clock, "2026-09-01T13:00:00Z");
    const invoice = await invoiceOf(subscription);
    const frozen = new Date("2026-09-02T12:00:00Z");
    await s.database.prisma.testClock.update({ where: { id: clock }, data: { frozenTime: frozen } });
    await sweepOverdueInvoices({
      prisma: s.database.prisma,
      settings: DEFAULT_SETTINGS,
      now: () => frozen,
      testClockId: clock,
    });
    // the dead process: it claimed the run (its lease has lapsed), created attempt 1's payment and started its charge
    const inv = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: invoice } });
    const campaign = await s.database.prisma.dunningCampaign.findFirstOrThrow({
      where: { organizationId: inv.organizationId, testMode: true, appliedToOrganization: true },
    });
    const run = await s.database.prisma.dunningRun.create({
      data: {
        id: "dnr_deadprocess0000000000001",
        organizationId: inv.organizationId,
        testMode: true,
        customerId: customer,
        campaignId: campaign.id,
        currencyId: "CLP",
        nextAttemptAt: frozen,
        leaseUntil: new Date(Date.now() - 1000),
        claimToken: "dead",
      },
    });
    const paymentId = attemptPaymentId(run.id, 1, invoice);
    const ctx = runContext(s.database.prisma, DEFAULT_SETTINGS, () => frozen, inv);
    const source = await s.database.prisma.source.findFirstOrThrow({ where: { customerId: customer } });
    await s.database.prisma.$transaction(async (tx) => {
      const txCtx = withinTransaction(ctx, tx as never);
      await createPayment(txCtx, { amount: 11900, invoice, description: "Dunning attempt 1" }, { id: paymentId });
      await authorizeLocked(txCtx, paymentId, source.id);
    });
    const summary = await runDunningAttempts({
      prisma: s.database.prisma,
      settings: DEFAULT_SETTINGS,
      now: () => new Date(),
      testClockId: clock,
    });
    expect(summary).toMatchObject({ entered: 0, attempts: 1, declined: 1, failed: 0 });
    const charges = await s.database.prisma.paymentCharge.findMany({ where: { paymentId } });
    expect(charges.map((c) => [c.id, c.status, c.failureCode])).toEqual([
      [derivedId("chg", `${paymentId}/1`), "declined", "insufficient_funds"],
    ]);
    expect(
      await s.database.prisma.payment.count({ where: { invoiceId: invoice, id: { not: `pay_${invoice.slice(4)}` } } }),
    ).toBe(1);
    const attempts = await attemptsOf(customer);
    expect(attempts.map((a) => [a.number, a.invoices[0].payment, a.invoices[0].charge])).toEqual([
      [1, paymentId, "declined"],
    ]);
    const after = await s.database.prisma.dunningRun.findUniqueOrThrow({ where: { id: run.id } });
    expect([after.attempts, after.claimToken, after.leaseUntil, after.nextAttemptAt.toISOString()]).toEqual([
      1,
      null,
      null,
      "2026-09-05T12:00:00.000Z",
    ]);
    // once more: nothing is due, nothing is written again
    const again = await runDunningAttempts({
      prisma: s.database.prisma,
      settings: DEFAULT_SETTINGS,
      now: () => new Date(),
      testClockId: clock,
    });
    expect(again).toMatchObject({ entered: 0, attempts: 0, paid: 0 });
    expect(await s.database.prisma.dunningAttempt.count({ where: { runId: run.id } })).toBe(1);
  });

  it("claims whose lease lapses at once: takeovers write each attempt once and charge each payment once", async () => {
    const { clock, customer, subscription } = await subscribed(
      "2026-10-01T12:00:00Z",
      "tok_chargeDeclinedInsufficientFunds",
    );
    await advance(clock, "2026-10-01T13:00:00Z");
    const invoice = await invoiceOf(subscription);
    const frozen = new Date("2026-10-02T12:00:00Z");
    await s.database.prisma.testClock.update({ where: { id: clock }, data: { frozenTime: frozen } });
    await sweepOverdueInvoices({
      prisma: s.database.prisma,
      settings: DEFAULT_SETTINGS,
      now: () => frozen,
      testClockId: clock,
    });
    // every claim has lapsed when made: each round may take over the other's run mid-attempt (fenced by the token)
    const lapsing = () =>
      runDunningAttempts({
        prisma: s.database.prisma,
        settings: DEFAULT_SETTINGS,
        now: () => new Date(),
        testClockId: clock,
        leaseMs: -60_000,
      });
    await Promise.all([lapsing(), lapsing(), lapsing()]);
    // a round with a normal lease finishes whatever the takeovers left
    await runDunningAttempts({
      prisma: s.database.prisma,
      settings: DEFAULT_SETTINGS,
      now: () => new Date(),
      testClockId: clock,
    });
    const attempts = await attemptsOf(customer);
    expect(attempts.map((a) => [a.number, a.invoices[0].charge])).toEqual([[1, "declined"]]);
    const payments = await dunningPayments(customer);
    expect(payments.map((p) => p.id)).toEqual([attempts[0].invoices[0].payment]);
    expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: payments[0].id } })).toBe(1);
    expect(payments[0].invoiceId).toBe(invoice);
    expect(await dunningEvents(customer)).toEqual([["dunning.attempt", 1, "unpaid", null]]);
  });

  it("pause_subscriptions pauses the subscription of what is still unpaid after the last attempt", async () => {
    const res = await s.rest("POST", "/v1/dunning_campaigns/", {
      body: {
        name: "Pausa",
        code: "pause",
        thresholds: [{ currency: "CLP", amount: 0 }],
        days_between_attempts: 2,
        max_attempts: 2,
        final_action: "pause_subscriptions",
      },
    });
    expect(res.status, res.text).toBe(201);
    const { clock, customer, subscription } = await subscribed(
      "2026-11-01T12:00:00Z",
      "tok_chargeDeclinedProcessingError",
      { dunning_campaign: res.body.id },
    );
    await advance(clock, "2026-11-01T13:00:00Z");
    await dayByDay(clock, "2026-11-02", "2026-11-06");
    const attempts = await attemptsOf(customer);
    expect(attempts.map((a) => [a.number, a.created.slice(0, 10), a.invoices[0].failure_code, a.final_action])).toEqual(
      [
        [1, "2026-11-02", "processing_error", null],
        [2, "2026-11-04", "processing_error", "pause_subscriptions"],
      ],
    );
    const paused = await subscriptionOf(subscription);
    expect([paused.status, paused.paused_reason]).toEqual(["paused", "unpaid"]);
    expect(await dunningPayments(customer)).toHaveLength(2);
    expect((await dunningEvents(customer)).map((e) => e[0])).toEqual([
      "dunning.attempt",
      "dunning.attempt",
      "dunning.finished",
    ]);
  });
  it("a page of attempts is set-based: six runs send as many statements as two", async () => {
    const prisma = s.database.prisma;
    /** `k` customers on a new clock, half with a declining card, an overdue invoice each: its round's statements */
    const round = async (k: number, analyzeAfterEntry?: number) => {
      const clock = (await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: "2026-12-01T12:00:00Z" } })).body
        .id as string;
      for (let n = 0; n < k; n++) {
        const created = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: clock }) });
        const customer = created.body.id as string;
        const token = n % 2 ? "tok_visa" : "tok_chargeDeclinedInsufficientFunds";
        const card = await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token } } });
        expect(card.status, card.text).toBe(201);
        const invoice = await s.rest("POST", "/v1/invoices/", {
          body: { customer, date: "2026-12-01", due_date: "2026-12-05", lines: [{ name: "Soporte", amount: 1000 }] },
        });
        expect(invoice.status, invoice.text).toBe(201);
        expect((await s.rest("GET", `/v1/invoices/${invoice.body.id}/finalize/`)).status).toBe(200);
      }
      const frozen = new Date("2026-12-10T12:00:00Z");
      await prisma.testClock.update({ where: { id: clock }, data: { frozenTime: frozen } });
      await sweepOverdueInvoices({ prisma, settings: DEFAULT_SETTINGS, now: () => frozen, testClockId: clock });
      s.statements.length = 0;
      const summary = await runDunningAttempts({
        prisma,
        settings: DEFAULT_SETTINGS,
        now: () => new Date(),
        testClockId: clock,
        analyzeAfterEntry,
      });
      expect(summary).toMatchObject({ entered: k, attempts: k, charged: k / 2, declined: k / 2, failed: 0 });
      const analyzes = s.statements.filter((sql) => /^ANALYZE\b/.test(sql)).length;
      expect(analyzes).toBe(analyzeAfterEntry !== undefined && k >= analyzeAfterEntry ? 1 : 0);
      return s.statements.length;
    };
    const two = await round(2);
    expect(await round(6)).toBe(two);
    // a bulk entry (DUNNING_ANALYZE_ENTRY runs, here 2) analyzes the runs before the claims: one statement more
    expect(await round(2, 2)).toBe(two + 1);
  });
});
