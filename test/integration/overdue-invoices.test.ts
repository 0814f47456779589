/**
 * The overdue sweep (docs/dunning.md "Overdue invoices"): a finalized invoice past its due date with something due
 * gets one `invoice.payment_overdue` event; paid, credited and uncollectible ones none; each invoice is swept once,
 * also by sweeps running at once; a test clock's customers are swept at the clock's time (its advance sweeps them);
 * `dunning run --until` in its own process does the same as the worker and prints what it did.
 */
import { inject } from "vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cloneTemplate } from "../helpers/databases.js";
import { databaseVariables, serviceEnv, startProcess, ROOT } from "../helpers/processes.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { sweepOverdueInvoices } from "../../src/services/overdue-invoices.js";
import { ValidationError } from "../../src/domain/errors.js";

let s: TestServer;
let target: Awaited<ReturnType<typeof cloneTemplate>>;
let customer: string;
let card: string;
beforeAll(async () => {
  target = await cloneTemplate(inject("template"));
  s = await startTestServer({ target: target.target });
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  card = (await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token: "tok_visa" } } }))
    .body.id;
});
afterAll(async () => {
  await s?.close();
  await target?.drop();
});

/** A finalized invoice of 2916 CLP (docs/invoice-totals.md) dated `date`, due `due`. */
async function invoiceDue(date: string, due: string, buyer = customer): Promise<string> {
  const created = await s.rest("POST", "/v1/invoices/", {
    body: {
      customer: buyer,
      date,
      due_date: due,
      lines: [
        { name: "Consultoría", quantity: 2, amount: 1000 },
        { name: "Soporte", amount: 500, discount: 10 },
      ],
    },
  });
  expect(created.status, created.text).toBe(201);
  expect((await s.rest("GET", `/v1/invoices/${created.body.id}/finalize/`)).status).toBe(200);
  return created.body.id;
}

async function pay(invoice: string, amount: number) {
  const payment = await s.rest("POST", "/v1/payments/", { body: { invoice, amount } });
  expect(payment.status, payment.text).toBe(201);
  const charged = await s.rest("POST", `/v1/payments/${payment.body.id}/authorize/`, { body: { source: card } });
  expect(charged.body.status, charged.text).toBe("succeeded");
}

/** The invoice.payment_overdue events, oldest first: [invoice id, its payment_status and amount_due then]. */
async function overdueEvents(): Promise<[string, string, number][]> {
  const res = await s.rest("GET", "/v1/events/?type=invoice.payment_overdue&page_size=100");
  expect(res.status).toBe(200);
  return res.body.results
    .map((e: any) => [e.data.object.id, e.data.object.payment_status, e.data.object.amount_due])
    .reverse();
}

const sweep = (until?: string, now = new Date()) =>
  sweepOverdueInvoices({ prisma: s.database.prisma, settings: DEFAULT_SETTINGS, now: () => now, until });

describe("the overdue sweep", () => {
  it("writes invoice.payment_overdue once for each invoice past its due date with something due", async () => {
    const unpaid = await invoiceDue("2026-11-01", "2026-11-10");
    const paid = await invoiceDue("2026-11-01", "2026-11-10");
    await pay(paid, 2916);
    const partly = await invoiceDue("2026-11-01", "2026-11-10");
    await pay(partly, 1000);
    const writtenOff = await invoiceDue("2026-11-01", "2026-11-10");
    expect((await s.rest("POST", `/v1/invoices/${writtenOff}/mark_uncollectible/`)).status).toBe(200);
    const credited = await invoiceDue("2026-11-01", "2026-11-10");
    // a credit note of the whole invoice: 2450 net + 19 % IVA = 2916
    const note = await s.rest("POST", "/v1/creditnotes/", {
      body: { invoice: credited, lines: [{ name: "Anulación", amount: 2450 }] },
    });
    expect(note.status, note.text).toBe(201);
    expect(note.body.total).toBe(2916);
    expect((await s.rest("GET", `/v1/creditnotes/${note.body.id}/finalize/`)).status).toBe(200);
    const later = await invoiceDue("2026-11-01", "2026-11-11");
    const draft = await s.rest("POST", "/v1/invoices/", {
      body: { customer, date: "2026-11-01", due_date: "2026-11-02", lines: [{ name: "Borrador", amount: 100 }] },
    });
    expect(draft.status).toBe(201);

    // on the due date nothing is overdue yet
    expect(await sweep("2026-11-10")).toEqual({ swept: 0, overdue: 0 });
    expect(await overdueEvents()).toEqual([]);
    // the day after: the five due on the 10th are swept, the unpaid and the partly paid ones are overdue
    expect(await sweep("2026-11-11")).toEqual({ swept: 5, overdue: 2 });
    expect((await overdueEvents()).sort()).toEqual(
      [
        [unpaid, "unpaid", 2916],
        [partly, "partially_paid", 1916],
      ].sort(),
    );
    // swept once: again the same day, nothing more
    expect(await sweep("2026-11-11")).toEqual({ swept: 0, overdue: 0 });
    expect(await sweep("2026-11-12")).toEqual({ swept: 1, overdue: 1 });
    const events = await overdueEvents();
    expect(events).toHaveLength(3);
    expect(events[2]).toEqual([later, "unpaid", 2916]);
    // the finalized document did not change (issued documents never do): same total and number
    const after = await s.rest("GET", `/v1/invoices/${unpaid}/`);
    expect(after.body).toMatchObject({ total: 2916, payment_status: "unpaid", amount_due: 2916 });
    expect(draft.body.status).toBe("draft");
    expect(events.map((e) => e[0])).not.toContain(draft.body.id);
    expect(events.map((e) => e[0])).not.toContain(paid);
    expect(events.map((e) => e[0])).not.toContain(writtenOff);
    expect(events.map((e) => e[0])).not.toContain(credited);
  });

  it("sweeps each invoice once when sweeps run at once", async () => {
    const before = (await overdueEvents()).length;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await invoiceDue("2026-10-01", "2026-10-05"));
    const results = await Promise.all([sweep("2026-10-06"), sweep("2026-10-06"), sweep("2026-10-06")]);
    expect(results.reduce((n, r) => n + r.swept, 0)).toBe(12);
    expect(results.reduce((n, r) => n + r.overdue, 0)).toBe(12);
    const events = await overdueEvents();
    expect(events).toHaveLength(before + 12);
    expect(new Set(events.slice(before).map((e) => e[0]))).toEqual(new Set(ids));
  });

  it("refuses an `until` that is not a date", async () => {
    await expect(sweep("2026-02-30")).rejects.toThrow(ValidationError);
  });

  it("takes a test clock's customers at the clock's time; advancing the clock sweeps them", async () => {
    const clock = (await s.rest("POST", "/v1/test_clocks/", { body: { frozen_time: "2026-03-01T12:00:00Z" } })).body;
    const buyer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ test_clock: clock.id }) })).body.id;
    const invoice = await invoiceDue("2026-03-01", "2026-03-05", buyer);
    const before = (await overdueEvents()).length;
    // the wall clock is long past March, the customer's clock is not: the worker's sweep leaves it
    expect(await sweep(undefined, new Date())).toEqual({ swept: 0, overdue: 0 });
    const moved = await s.rest("POST", `/v1/test_clocks/${clock.id}/advance/`, {
      body: { frozen_time: "2026-03-05T23:00:00Z" },
    });
    expect(moved.body.status, moved.text).toBe("ready");
    // 2026-03-05 20:00 in Santiago: still the due date
    expect(await overdueEvents()).toHaveLength(before);
    const advanced = await s.rest("POST", `/v1/test_clocks/${clock.id}/advance/`, {
      body: { frozen_time: "2026-03-06T12:00:00Z" },
    });
    expect(advanced.body.status, advanced.text).toBe("ready");
    const events = await overdueEvents();
    expect(events).toHaveLength(before + 1);
    expect(events[before]).toEqual([invoice, "unpaid", 2916]);
  });

  it("`dunning run --until` sweeps in a process of its own and prints what it did", async () => {
    const invoice = await invoiceDue("2026-09-01", "2026-09-10");
    const before = (await overdueEvents()).length;
    await s.close();
    const run = startProcess(
      process.execPath,
      ["dist/cli.js", "dunning", "run", "--until", "2026-09-11", "--json", "--no-progress"],
      serviceEnv(databaseVariables(target.target)),
      ROOT,
    );
    expect(await run.exited, run.lines.join("\n")).toBe(0);
    expect(run.lines.map((l) => l.trim()).filter((l) => l.startsWith("{"))).toEqual([
      '{"swept":1,"overdue":1,"entered":0,"attempts":0,"paid":0,"finished":0,"charged":0,"declined":0,"failed":0,' +
        '"emails":0}',
    ]);
    s = await startTestServer({ target: target.target });
    const events = await overdueEvents();
    expect(events).toHaveLength(before + 1);
    expect(events[before][0]).toBe(invoice);
  });
});
