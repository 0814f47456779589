/**
 * Seeds `count` due subscriptions straight into the database (bulk inserts, no API), for the
 * billing bench (bench/billing.ts) and the crash test (test/integration/billing-run-crash.test.ts).
 * Mixed plans in turn: licensed seats, graduated tiers, volume tiers, and a metered plan (sum)
 * with `usagesPerMetered` usage records in the first period. Every subscription starts on
 * `dateStart` (monthly), so on `until` = start of cycle 2 each bills two cycles (the metered
 * usage on cycle 2). Customers have no payment source (collection finds nothing to charge);
 * invoices fall due after 45 days, so the no-card rule does not cancel them on cycle 2.
 */
import type { PrismaClient } from "../src/infra/prisma/generated/client.js";
import { newId } from "../src/infra/ids.js";
import { createApiKey } from "../src/services/api-keys.js";

export interface SeedOptions {
  count: number;
  /** `yyyy-mm-dd`, default 2026-01-01 */
  dateStart?: string;
  usagesPerMetered?: number;
  organizationName?: string;
  testMode?: boolean;
}

export interface Seeded {
  organizationId: string;
  subscriptionIds: string[];
  /** metered subscription line ids and the sum of their usage quantities */
  meteredUsage: Map<string, number>;
}

const CHUNK = 1000;

async function inChunks<T>(rows: T[], write: (chunk: T[]) => Promise<unknown>) {
  for (let i = 0; i < rows.length; i += CHUNK) await write(rows.slice(i, i + CHUNK));
}

/** Inserts the organization, a product with four plans, `count` customers with one subscription each, and usages. */
export async function seedSubscriptions(prisma: PrismaClient, options: SeedOptions): Promise<Seeded> {
  const testMode = options.testMode ?? true;
  const dateStart = new Date(`${options.dateStart ?? "2026-01-01"}T00:00:00Z`);
  const usagesPer = options.usagesPerMetered ?? 3;
  const { organization } = await createApiKey(prisma, { organizationName: options.organizationName ?? `Seed ${Date.now()}`, email: "seed@example.cl", mode: testMode ? "test" : "live" });
  const tenant = { organizationId: organization, testMode };
  const productId = newId("pro");
  await prisma.product.create({ data: { id: productId, ...tenant, name: "Seeded" } });
  const tiers = [
    { up_to: "10", unit_amount: "1000", flat_amount: "0" },
    { up_to: null, unit_amount: "500", flat_amount: "2000" },
  ];
  const plans = [
    { id: newId("pla"), name: "Seats", amount: "9990", usageScheme: "licensed", tiersMode: null, tiers: [] },
    { id: newId("pla"), name: "Storage graduated", amount: "0", usageScheme: "licensed", tiersMode: "graduated", tiers },
    { id: newId("pla"), name: "Storage volume", amount: "0", usageScheme: "licensed", tiersMode: "volume", tiers },
    { id: newId("pla"), name: "API calls", amount: "7", usageScheme: "metered", tiersMode: null, tiers: [] },
  ];
  await prisma.plan.createMany({ data: plans.map((p, position) => ({ ...p, ...tenant, productId, position, currencyId: "CLP", frequency: "monthly", usageAggregation: "sum" })) });

  const customers: { id: string; organizationId: string; testMode: boolean; name: string; countryId: string; taxId: string }[] = [];
  const subscriptions: Record<string, unknown>[] = [];
  const lines: Record<string, unknown>[] = [];
  const usages: Record<string, unknown>[] = [];
  const meteredUsage = new Map<string, number>();
  for (let i = 0; i < options.count; i++) {
    const customerId = newId("cus");
    const subscriptionId = newId("sub");
    const lineId = newId("lin");
    const plan = plans[i % plans.length];
    customers.push({ id: customerId, ...tenant, name: `Cliente ${i}`, countryId: "CL", taxId: "76042235-5" });
    subscriptions.push({ id: subscriptionId, ...tenant, documentTypeId: "CL33", customerId, dateStart, nextBilling: dateStart, expirationDays: 45, userEmail: "seed@example.cl" });
    lines.push({ id: lineId, subscriptionId, planId: plan.id, quantity: plan.usageScheme === "metered" ? "1" : String((i % 25) + 1) });
    if (plan.usageScheme === "metered") {
      let sum = 0;
      for (let u = 0; u < usagesPer; u++) {
        const quantity = (i % 7) + u + 1;
        sum += quantity;
        usages.push({ id: newId("usa"), ...tenant, subscriptionLineId: lineId, quantity: String(quantity), dateTime: new Date(dateStart.getTime() + (u + 1) * 3 * 86_400_000) });
      }
      meteredUsage.set(lineId, sum);
    }
  }
  await inChunks(customers, (data) => prisma.customer.createMany({ data }));
  await inChunks(subscriptions, (data) => prisma.subscription.createMany({ data: data as never }));
  await inChunks(lines, (data) => prisma.subscriptionLine.createMany({ data: data as never }));
  await inChunks(usages, (data) => prisma.usage.createMany({ data: data as never }));
  return { organizationId: organization, subscriptionIds: subscriptions.map((s) => s.id as string), meteredUsage };
}
