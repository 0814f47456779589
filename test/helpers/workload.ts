/**
 * The mixed workload of the scaling tests (docs/scaling.md): customers, invoices finalized,
 * payments charged to a test card, usage records, sent over REST as a careful client does (every
 * POST with an Idempotency-Key, sent again with the same key while the answer is a 502, 503, 504, a
 * "still running" 409 or no answer), what each acknowledged (a 2xx answer) written down, and
 * the checks against the database afterwards: every acknowledged write is there, invoice numbers
 * are gapless, every due billing cycle is billed exactly once.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { PrismaClient } from "../../src/infra/prisma/generated/client.js";
import { chileanCustomer } from "./server.js";

/** An answer: its status and parsed body. */
export interface Answer {
  status: number;
  body: any;
}

/** How long a client keeps sending one request again before it gives up (ms). */
const RETRY_FOR_MS = 20_000;

/** True for an answer that means "not done, send it again": the proxy's 502/504, a 503, a key still running. */
function retryable(answer: Answer): boolean {
  if ([502, 503, 504].includes(answer.status)) return true;
  return answer.status === 409 && /still running/.test(String(answer.body?.error?.message));
}

/** A REST client of one API key that retries as described above and counts what it retried. */
export class Client {
  /** answers that were sent again (proxy errors, 503s, connection failures) */
  retried = 0;
  constructor(
    readonly url: string,
    readonly key: string,
  ) {}

  /** One request, sent again (same Idempotency-Key for a POST) until it gets an answer to keep or RETRY_FOR_MS pass. */
  async call(method: "GET" | "POST", pathname: string, body?: unknown): Promise<Answer> {
    const idempotencyKey = method === "POST" ? randomUUID() : undefined;
    const deadline = Date.now() + RETRY_FOR_MS;
    for (;;) {
      let answer: Answer | null = null;
      let failure: unknown = null;
      try {
        const res = await fetch(`${this.url}${pathname}`, {
          method,
          headers: {
            authorization: `Bearer ${this.key}`,
            "content-type": "application/json",
            ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          // a proxy's HTML error page
        }
        answer = { status: res.status, body: parsed };
      } catch (e) {
        failure = e; // no answer: the connection failed
      }
      if (answer && !retryable(answer)) return answer;
      if (Date.now() > deadline)
        throw new Error(
          `${method} ${pathname}: no answer to keep after ${RETRY_FOR_MS} ms: ${answer?.status ?? failure}`,
        );
      this.retried++;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** A POST whose answer must be `status`; returns its body. */
  async create(pathname: string, body: unknown, status = 201): Promise<any> {
    const answer = await this.call("POST", pathname, body);
    expect(answer.status, `POST ${pathname}: ${JSON.stringify(answer.body)}`).toBe(status);
    return answer.body;
  }
}

/** What the service acknowledged (answered 2xx), by kind. */
export interface Acknowledged {
  customers: string[];
  /** invoice id -> its number */
  invoices: Map<string, number>;
  /** payment id -> its status when acknowledged */
  payments: Map<string, string>;
  /** usage id -> [subscription line, quantity] */
  usages: Map<string, [string, number]>;
}

export function acknowledged(): Acknowledged {
  return { customers: [], invoices: new Map(), payments: new Map(), usages: new Map() };
}

/**
 * One round of the workload: a customer, an invoice finalized (a finalize that a proxy sent again
 * after the first one was done answers 409: the invoice read back says whether it is finalized),
 * a test card and a payment of the invoice charged to it, and a usage record on `meteredLine`.
 */
export async function round(client: Client, ack: Acknowledged, meteredLine: string, n: number): Promise<void> {
  const customer = await client.create("/v1/customers/", chileanCustomer({ name: `Carga ${n}` }));
  ack.customers.push(customer.id);
  const invoice = await client.create("/v1/invoices/", {
    customer: customer.id,
    document: "CL33",
    lines: [{ name: "Servicio", quantity: 2, amount: 1000 }],
  });
  let finalized = await client.call("GET", `/v1/invoices/${invoice.id}/finalize/`);
  if (finalized.status === 409) finalized = await client.call("GET", `/v1/invoices/${invoice.id}/`);
  expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
  expect(finalized.body.status).toBe("finalized");
  ack.invoices.set(invoice.id, finalized.body.number);
  const source = await client.create("/v1/sources/", {
    gateway: "test",
    customer: customer.id,
    data: { token: "tok_visa" },
  });
  const payment = await client.create("/v1/payments/", { invoice: invoice.id, amount: finalized.body.total });
  const charged = await client.create(`/v1/payments/${payment.id}/authorize/`, { source: source.id }, 200);
  ack.payments.set(payment.id, charged.status);
  const quantity = (n % 5) + 1;
  const usage = await client.create("/v1/usages/", { subscription_line: meteredLine, quantity });
  ack.usages.set(usage.id, [meteredLine, quantity]);
}

/** Checks that every acknowledged write of `ack` is in the database as acknowledged. */
export async function expectAcknowledgedKept(prisma: PrismaClient, ack: Acknowledged): Promise<void> {
  const customers = await prisma.customer.count({ where: { id: { in: ack.customers } } });
  expect(customers).toBe(ack.customers.length);
  const invoices = await prisma.invoice.findMany({
    where: { id: { in: [...ack.invoices.keys()] } },
    select: { id: true, number: true, status: true },
  });
  expect(new Map(invoices.map((i) => [i.id, i.number]))).toEqual(ack.invoices);
  expect(invoices.every((i) => i.status === "finalized")).toBe(true);
  const payments = await prisma.payment.findMany({
    where: { id: { in: [...ack.payments.keys()] } },
    select: { id: true, status: true },
  });
  expect(new Map(payments.map((p) => [p.id, p.status]))).toEqual(ack.payments);
  expect([...ack.payments.values()].every((s) => s === "succeeded")).toBe(true);
  const usages = await prisma.usage.findMany({
    where: { id: { in: [...ack.usages.keys()] } },
    select: { id: true, subscriptionLineId: true, quantity: true },
  });
  expect(new Map(usages.map((u) => [u.id, [u.subscriptionLineId, Number(u.quantity)]]))).toEqual(ack.usages);
}

/**
 * Checks that the numbered invoices of `organizationId` are gapless: in each series (document type
 * and numbering), the numbers are 1..n, each once.
 */
export async function expectGaplessNumbers(prisma: PrismaClient, organizationId: string): Promise<number> {
  const numbered = await prisma.invoice.findMany({
    where: { organizationId, number: { not: null } },
    select: { documentTypeId: true, numbering: true, testMode: true, number: true },
  });
  const series = new Map<string, number[]>();
  for (const i of numbered) {
    const key = `${i.testMode} ${i.documentTypeId} ${i.numbering}`;
    series.set(key, [...(series.get(key) ?? []), i.number!]);
  }
  for (const [key, numbers] of series) {
    numbers.sort((a, b) => a - b);
    expect(numbers, `series ${key}`).toEqual(numbers.map((_, i) => i + 1));
  }
  return numbered.length;
}

/** `yyyy-mm-dd` of `date` plus `months` months (the day kept: callers use days up to 28). */
export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split("-").map(Number);
  const total = y * 12 + (m - 1) + months;
  return `${Math.floor(total / 12)}-${String((total % 12) + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

/**
 * A start date with three monthly cycles due today and the fourth well ahead: about 70 days ago, on
 * a day of the month up to 28 (every month has it), whatever the time zone's today.
 */
export function startWithThreeCyclesDue(now = new Date()): string {
  const start = new Date(now.getTime() - 70 * 86_400_000);
  const day = Math.min(start.getUTCDate(), 28);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${start.getUTCFullYear()}-${two(start.getUTCMonth() + 1)}-${two(day)}`;
}

/**
 * Checks that each of `subscriptionIds` has exactly one invoice for each of cycles 1..`cycles`
 * (none twice, none missing), dated on the cycle's start, and waits for its next cycle.
 */
export async function expectBilledOnce(
  prisma: PrismaClient,
  subscriptionIds: string[],
  start: string,
  cycles: number,
): Promise<void> {
  const invoices = await prisma.invoice.findMany({
    where: { subscriptionId: { in: subscriptionIds } },
    select: { subscriptionId: true, billingCycle: true, date: true, status: true },
    orderBy: [{ subscriptionId: "asc" }, { billingCycle: "asc" }],
  });
  for (const id of subscriptionIds) {
    const mine = invoices.filter((i) => i.subscriptionId === id);
    expect(mine.map((i) => [i.billingCycle, i.date.toISOString().slice(0, 10), i.status])).toEqual(
      Array.from({ length: cycles }, (_, c) => [c + 1, addMonths(start, c), "finalized"]),
    );
  }
  const subscriptions = await prisma.subscription.findMany({ where: { id: { in: subscriptionIds } } });
  expect(subscriptions.map((s) => s.nextBillingCycle)).toEqual(subscriptionIds.map(() => cycles + 1));
}
