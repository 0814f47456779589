/**
 * Usage records (issue "Usage records"; spec "Usage"): quantities reported for metered
 * subscription lines, billed in arrears by the billing run (domain/billing-cycle.ts), which sets
 * each usage's invoice. Rules: domain/usage.ts checkUsage. A billed usage cannot be deleted (409),
 * so no usage is silently lost. Creating twice with one Idempotency-Key records once (server.ts).
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { FieldErrorCollector, InvalidStateError, NotFoundError, ValidationError } from "../domain/errors.js";
import { quote, textLimit, textProblem } from "../domain/input-limits.js";
import { checkUsage } from "../domain/usage.js";
import { toDecimal, type DecimalInput } from "../domain/money.js";
import { lockTenantRow, tenant, type ServiceContext } from "./context.js";

export interface UsageInput {
  /** `lin_` id of a subscription line of the caller */
  subscriptionLine?: string | null;
  quantity?: DecimalInput | null;
  /** when it was used; default now */
  dateTime?: Date | null;
  /** the sender's idempotency key (Lago's `transaction_id`), 1 to 255 characters; null: none */
  transactionId?: string | null;
}

/** Most records in one batch (`recordUsages`; REST `POST /v1/usages/` with `{"usages": [...]}`). */
export const MAX_USAGE_BATCH = 1_000;

/** What `recordUsages` recorded: the usage of each input record, in input order, and which were duplicates. */
export interface RecordedUsages {
  /** `usa_` id per input record; a duplicate's is the id of the usage first recorded with its transaction id */
  ids: string[];
  /** 0-based indexes of the input records not counted: their transaction id was already recorded (before, or earlier in the batch) */
  duplicates: number[];
}

/**
 * Records one usage (createUsage, REST single-record POST): `recordUsages` of one record whose
 * field errors are named without the `usages.0.` prefix. 400 naming each bad field (unknown or
 * licensed line, negative quantity, future date); 409 for a cancelled subscription. With a
 * `transactionId` already recorded nothing is written and the first usage's id is returned
 * (`duplicate` true).
 */
export async function createUsage(ctx: ServiceContext, input: UsageInput): Promise<{ id: string; duplicate: boolean }> {
  const recorded = await recordUsageList(ctx, [input], () => "");
  return { id: recorded.ids[0], duplicate: recorded.duplicates.length > 0 };
}

/**
 * Records a batch of 1 to MAX_USAGE_BATCH usages (docs/rest.md "Usage records"), validated
 * as a whole: every record is checked by domain/usage.ts `checkUsage` against its line, the lines
 * (with plan and subscription) read in one query for the whole batch. Any bad record: 400
 * `validation_error` naming each bad field as `usages.<i>.<field>`; a record of a cancelled
 * subscription: 409 `invalid_state` with the same paths. Either way nothing is written.
 *
 * Valid: the records are written with one multi-row INSERT ... ON CONFLICT DO NOTHING (atomic: all
 * or none). A record whose `transactionId` is already recorded in this organization and mode, or
 * appears earlier in the batch, is not counted again: its index is in `duplicates` and its id is
 * the existing usage's. The partial unique index on (organization, mode, transactionId) decides,
 * so concurrent batches sharing a transaction id count it once.
 */
export async function recordUsages(ctx: ServiceContext, inputs: readonly UsageInput[]): Promise<RecordedUsages> {
  if (inputs.length < 1 || inputs.length > MAX_USAGE_BATCH) throw ValidationError.field("usages", `must have between 1 and ${MAX_USAGE_BATCH} records`);
  return recordUsageList(ctx, inputs, (i) => `usages.${i}.`);
}

async function recordUsageList(ctx: ServiceContext, inputs: readonly UsageInput[], prefix: (i: number) => string): Promise<RecordedUsages> {
  // the lines of the whole batch, with plan and subscription, in one query
  const lineIds = [...new Set(inputs.map((u) => u.subscriptionLine).filter((id): id is string => !!id))];
  const lines = lineIds.length
    ? await ctx.prisma.subscriptionLine.findMany({
        where: { id: { in: lineIds }, subscription: tenant(ctx) },
        select: { id: true, plan: { select: { usageScheme: true } }, subscription: { select: { status: true, customerId: true } } },
      })
    : [];
  const lineById = new Map(lines.map((l) => [l.id, l]));
  // usage of a customer on a test clock happens on the clock's time (services/test-clocks.ts): the
  // frozen times of the batch's customers, in one query (test mode only)
  const frozenByCustomer = await frozenTimes(ctx, [...new Set(lines.map((l) => l.subscription.customerId))]);

  const errors = new FieldErrorCollector();
  const cancelled = new FieldErrorCollector();
  const rows: { dateTime: Date; subscriptionLineId: string; quantity: string; transactionId: string | null }[] = [];
  inputs.forEach((input, i) => {
    const at = prefix(i);
    const line = input.subscriptionLine ? lineById.get(input.subscriptionLine) : undefined;
    const now = (line && frozenByCustomer.get(line.subscription.customerId)) ?? ctx.now();
    const record = new FieldErrorCollector();
    if (!input.subscriptionLine) record.add("subscription_line", "is required");
    else if (!line) record.add("subscription_line", `unknown subscription line ${input.subscriptionLine}`);
    const problem = transactionIdProblem(input.transactionId);
    if (problem) record.add("transaction_id", problem);
    const dateTime = input.dateTime ?? now;
    try {
      checkUsage({ quantity: input.quantity, dateTime }, line ? { usageScheme: line.plan.usageScheme, subscriptionStatus: line.subscription.status } : null, now, record);
    } catch (e) {
      if (e instanceof ValidationError) {
        for (const [field, reasons] of Object.entries(e.fields ?? {})) for (const reason of reasons) errors.add(`${at}${field}`, reason);
        return;
      }
      if (e instanceof InvalidStateError) {
        cancelled.add(`${at}subscription_line`, e.message);
        return;
      }
      throw e;
    }
    rows.push({ subscriptionLineId: line!.id, quantity: toDecimal(input.quantity!).toString(), dateTime, transactionId: input.transactionId ?? null });
  });
  errors.throwIfAny(inputs.length === 1 && prefix(0) === "" ? "Invalid usage" : "Invalid usages");
  if (!cancelled.empty) {
    const fields = cancelled.collected();
    const message = inputs.length === 1 && prefix(0) === "" ? "The subscription is cancelled; it takes no more usage" : `Cancelled subscriptions take no more usage: ${Object.keys(fields).join(", ")}`;
    throw new InvalidStateError(message, fields);
  }

  // one row per transaction id: a later record with the same id in the batch is a duplicate
  const firstOfKey = new Map<string, number>();
  const ids: (string | undefined)[] = [];
  const duplicates: number[] = [];
  const data: Prisma.UsageCreateManyInput[] = [];
  rows.forEach((r, i) => {
    if (r.transactionId !== null) {
      if (firstOfKey.has(r.transactionId)) {
        duplicates.push(i);
        ids.push(undefined);
        return;
      }
      firstOfKey.set(r.transactionId, i);
    }
    const id = newId("usa");
    ids.push(id);
    data.push({ id, ...tenant(ctx), subscriptionLineId: r.subscriptionLineId, quantity: r.quantity, dateTime: r.dateTime, transactionId: r.transactionId });
  });
  // ONE multi-row INSERT ... ON CONFLICT DO NOTHING: rows whose transaction id exists are skipped
  // (one record without a key: a plain INSERT, which Prisma sends without BEGIN/COMMIT around it)
  const inserted =
    data.length === 1 && !data[0].transactionId
      ? [await ctx.prisma.usage.create({ data: data[0], select: { id: true } })]
      : await ctx.prisma.usage.createManyAndReturn({ data, skipDuplicates: true, select: { id: true } });
  const insertedIds = new Set(inserted.map((u) => u.id));
  const skippedKeys = data.filter((d) => !insertedIds.has(d.id!)).map((d) => d.transactionId!);
  const existing = skippedKeys.length
    ? await ctx.prisma.usage.findMany({ where: { ...tenant(ctx), transactionId: { in: skippedKeys } }, select: { id: true, transactionId: true } })
    : [];
  const idOfKey = new Map<string, string>(existing.map((u) => [u.transactionId!, u.id]));
  for (const d of data) if (insertedIds.has(d.id!) && d.transactionId) idOfKey.set(d.transactionId, d.id!);
  const result: string[] = rows.map((r, i) => {
    if (r.transactionId === null) return ids[i]!;
    const id = idOfKey.get(r.transactionId);
    if (!id) throw new InvalidStateError(`${prefix(i)}transaction_id: the usage recorded with transaction_id ${quote(r.transactionId)} was deleted while this request ran; send the record again`);
    if (ids[i] !== undefined && ids[i] !== id) duplicates.push(i); // recorded before (or by a concurrent request)
    return id;
  });
  return { ids: result, duplicates: duplicates.sort((a, b) => a - b) };
}

/** Why `transactionId` is not a usable idempotency key, or null (absent, or 1 to 255 characters). */
export function transactionIdProblem(transactionId: string | null | undefined): string | null {
  if (transactionId === null || transactionId === undefined) return null;
  if (transactionId.length === 0) return "must not be empty (leave it out for no idempotency key)";
  return textProblem(transactionId, textLimit("UsageInput.transactionId"));
}

/** Frozen time of each listed customer on a test clock (test mode only); one query. */
async function frozenTimes(ctx: ServiceContext, customerIds: string[]): Promise<Map<string, Date>> {
  if (!ctx.auth.testMode || customerIds.length === 0) return new Map();
  const customers = await ctx.prisma.customer.findMany({
    where: { id: { in: customerIds }, organizationId: ctx.auth.organizationId, testMode: true, testClockId: { not: null } },
    select: { id: true, testClock: { select: { frozenTime: true } } },
  });
  return new Map(customers.flatMap((c) => (c.testClock ? [[c.id, c.testClock.frozenTime] as const] : [])));
}

/** Deletes a usage that no invoice has billed; 404 unknown, 409 billed. One transaction. */
export async function deleteUsage(ctx: ServiceContext, id: string): Promise<void> {
  await ctx.prisma.$transaction(async (tx) => {
    const row = await lockTenantRow(tx, ctx, "Usage", id, ["invoiceId"]);
    if (!row) throw new NotFoundError("usage", id);
    if (row.invoiceId) throw new InvalidStateError(`Usage ${id} is billed by invoice ${row.invoiceId}; billed usage cannot be deleted`);
    await tx.usage.delete({ where: { id } });
  });
}
