/**
 * docs/analytics.md's worked example, built through the API on a test clock from January to April 2026 in acme's test
 * mode: used by the revenue analytics test and by the dashboard's charts test.
 */
import { expect } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { runContext } from "../../src/services/billing-run/run-context.js";
import { authorizePayment, createPayment } from "../../src/services/payments.js";
import { chileanCustomer, type TestServer } from "./server.js";

/** docs/analytics.md's table, January to April 2026: mrr, new, expansion, contraction, churned, subscriptions,
 * customers, invoiced, credit notes, debit notes, iva, collected, outstanding, overdue. */
export const WORKED_EXAMPLE = [
  [45000, 45000, 0, 0, 0, 3, 3, 303450, 0, 0, 48450, 184450, 119000, 0],
  [75000, 10000, 20000, 0, 0, 4, 4, 77350, 0, 0, 12350, 127350, 69000, 69000],
  [65000, 0, 0, 10000, 0, 4, 4, 66045, 11900, 0, 8645, 66045, 57100, 57100],
  [40000, 0, 0, 0, 25000, 3, 3, 35700, 0, 0, 5700, 35700, 57100, 57100],
];

export async function ok(s: TestServer, method: string, path: string, body?: unknown) {
  const res = await s.rest(method, path, { body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** docs/analytics.md "A worked example", step by step. */
export async function buildWorkedExample(s: TestServer) {
  const product = await ok(s, "POST", "/v1/products/", {
    name: "Nube",
    plans: [
      { name: "Básico", amount: 10000, currency: "CLP", frequency: "monthly" },
      { name: "Pro", amount: 25000, currency: "CLP", frequency: "monthly" },
      { name: "Anual", amount: 120000, currency: "CLP", frequency: "yearly" },
      { name: "API", amount: 100, currency: "CLP", frequency: "monthly", usage_scheme: "metered" },
    ],
  });
  const [basico, pro, anual, api] = product.plans.map((p: { id: string }) => p.id);
  const clock = await ok(s, "POST", "/v1/test_clocks/", { name: "Analítica", frozen_time: "2026-01-10T12:00:00Z" });
  const advance = (at: string) => ok(s, "POST", `/v1/test_clocks/${clock.id}/advance/`, { frozen_time: at });
  const customer = async (name: string) => {
    const c = await ok(s, "POST", "/v1/customers/", chileanCustomer({ name, test_clock: clock.id }));
    const card = await ok(s, "POST", "/v1/sources/", { gateway: "test", customer: c.id, data: { token: "tok_visa" } });
    return { id: c.id as string, card: card.id as string };
  };
  const subscribe = (c: { id: string }, lines: unknown[]) =>
    ok(s, "POST", "/v1/subscriptions/", { customer: c.id, lines });

  // January 10: Ana (Básico), Beto (Anual), Caro (Pro) subscribe; their first cycles are billed and paid by card
  const [ana, beto, caro, eva] = [
    await customer("Ana"),
    await customer("Beto"),
    await customer("Caro"),
    await customer("Eva"),
  ];
  const anaSub = await subscribe(ana, [{ plan: basico }]);
  await subscribe(beto, [{ plan: anual }]);
  const caroSub = await subscribe(caro, [{ plan: pro }]);
  await advance("2026-01-10T13:00:00Z");
  // Ana goes to 3 seats from her next cycle (no proration)
  await ok(s, "PATCH", `/v1/subscriptions/${anaSub.id}/`, {
    lines: [{ plan: basico, quantity: 3 }],
    proration_behavior: "none",
  });
  // Eva: an implementation invoice dated January 20, due February 5 (100,000 + IVA)
  const evaInvoice = await ok(s, "POST", "/v1/invoices/", {
    customer: eva.id,
    date: "2026-01-20",
    due_date: "2026-02-05",
    lines: [{ name: "Implementación", amount: 100000 }],
  });
  expect((await ok(s, "GET", `/v1/invoices/${evaInvoice.id}/finalize/`)).total).toBe(119000);

  // February 10: second cycles (Ana's 3 seats); Eva pays 50,000 by card that day
  await advance("2026-02-10T13:00:00Z");
  const february10 = runContext(s.database.prisma, DEFAULT_SETTINGS, () => new Date("2026-02-10T13:00:00Z"), {
    organizationId: s.orgs.acme,
    testMode: true,
    userEmail: "cobranza@acme.cl",
  });
  const partial = await createPayment(february10, { invoice: evaInvoice.id, amount: "50000" });
  expect((await authorizePayment(february10, partial.id, eva.card)).status).toBe("succeeded");
  // Dora subscribes to Básico and the metered API plan; Ana goes down to 2 seats from her next cycle
  const dora = await customer("Dora");
  const doraSub = await subscribe(dora, [{ plan: basico }, { plan: api }]);
  await ok(s, "PATCH", `/v1/subscriptions/${anaSub.id}/`, {
    lines: [{ plan: basico, quantity: 2 }],
    proration_behavior: "none",
  });
  await advance("2026-02-10T14:00:00Z");
  await ok(s, "POST", "/v1/usages/", { subscription_line: doraSub.lines[1].id, quantity: 5 });

  // March 5: a credit note of 10,000 + IVA for Eva's invoice
  const note = await ok(s, "POST", "/v1/creditnotes/", {
    invoice: evaInvoice.id,
    date: "2026-03-05",
    lines: [{ name: "Descuento", amount: 10000 }],
  });
  expect((await ok(s, "GET", `/v1/creditnotes/${note.id}/finalize/`)).total).toBe(11900);

  // March 10: third cycles (Dora's bills February's 5 API calls); Caro cancels at the end of her period
  await advance("2026-03-10T13:00:00Z");
  await ok(s, "DELETE", `/v1/subscriptions/${caroSub.id}/?at_period_end=true`);
  // April 10: fourth cycles; Caro's subscription ends without an invoice
  await advance("2026-04-10T13:00:00Z");
  await advance("2026-04-30T13:00:00Z");
  expect((await ok(s, "GET", `/v1/subscriptions/${caroSub.id}/`)).status).toBe("cancelled");
}
