/**
 * Usage records (docs/recurring-billing.md "Usage records"; spec "Usage"): quantities reported for metered
 * subscription lines, billed in arrears by the billing run (domain/billing-cycle.ts), which sets
 * each usage's invoice. Rules: domain/usage.ts checkUsage. A billed usage cannot be deleted (409),
 * so no usage is silently lost. Creating twice with one Idempotency-Key records once (server.ts).
 */
import { Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { preparedSql, queryPrepared } from "../infra/sql/index.js";
import { FieldErrorCollector, InvalidStateError, NotFoundError, ValidationError } from "../domain/errors.js";
import { quote, textLimit, textProblem } from "../domain/input-limits.js";
import { checkUsage } from "../domain/usage.js";
import { toDecimal, type DecimalInput } from "../domain/money.js";
import { lockTenantRow, tenant, type ServiceContext, type TenantKey } from "./context.js";

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

/** A usage row as stored (the Prisma model's scalar fields), as the write returns it. */
export type UsageRow = Prisma.UsageGetPayload<object>;

/** What `recordUsages` recorded: the usage of each input record, in input order, and which were duplicates. */
export interface RecordedUsages {
  /** `usa_` id per input record; a duplicate's is the id of the usage first recorded with its transaction id */
  ids: string[];
  /**
   * the stored usage per input record (the same row for a record and its duplicates), read back by nothing: the
   * INSERT's RETURNING, or for a duplicate of an earlier request its row
   */
  usages: UsageRow[];
  /**
   * 0-based indexes of the input records not counted: their transaction id was already recorded (before, or earlier in
   * the batch)
   */
  duplicates: number[];
}

/**
 * Records one usage (createUsage, REST single-record POST): `recordUsages` of one record whose
 * field errors are named without the `usages.0.` prefix. 400 naming each bad field (unknown or
 * licensed line, negative quantity, future date); 409 for a cancelled subscription. With a
 * `transactionId` already recorded nothing is written and the first usage is returned
 * (`duplicate` true).
 */
export async function createUsage(
  ctx: ServiceContext,
  input: UsageInput,
): Promise<{ id: string; usage: UsageRow; duplicate: boolean }> {
  const recorded = await recordUsageList(ctx, [input], () => "");
  return { id: recorded.ids[0], usage: recorded.usages[0], duplicate: recorded.duplicates.length > 0 };
}

/**
 * Records a batch of 1 to MAX_USAGE_BATCH usages (docs/rest.md "Usage records"), validated
 * as a whole: every record is checked by domain/usage.ts `checkUsage` against its line, the lines
 * (with plan, subscription and the customer's test clock) read by one statement for the whole
 * batch. Any bad record: 400 `validation_error` naming each bad field as `usages.<i>.<field>`; a
 * record of a cancelled subscription: 409 `invalid_state` with the same paths. Either way nothing
 * is written.
 *
 * Valid: the records are written by ONE statement, a multi-row INSERT ... ON CONFLICT DO NOTHING
 * ... RETURNING (atomic: all or none, no transaction needed around it). A record whose
 * `transactionId` is already recorded in this organization and mode, or appears earlier in the
 * batch, is not counted again: its index is in `duplicates` and its usage is the existing one
 * (read by one more statement, only when the INSERT skipped a record). The partial unique index on
 * (organization, mode, transactionId) decides, so concurrent batches sharing a transaction id
 * count it once. Statements: 2 for a batch without duplicates of earlier requests, whatever its
 * size (docs/performance.md "Usage ingestion").
 */
export async function recordUsages(ctx: ServiceContext, inputs: readonly UsageInput[]): Promise<RecordedUsages> {
  if (inputs.length < 1 || inputs.length > MAX_USAGE_BATCH)
    throw ValidationError.field("usages", `must have between 1 and ${MAX_USAGE_BATCH} records`);
  return recordUsageList(ctx, inputs, (i) => `usages.${i}.`);
}

/**
 * A batch's subscription line as validation needs it: its plan's scheme, its subscription's status, the customer's
 * frozen time on a test clock.
 */
interface LineCheck {
  id: string;
  usageScheme: string;
  status: string;
  frozenTime: Date | null;
}

/** The stored usage of a RETURNING or SELECT (`quantity` as text: exact, made a Decimal here). */
interface UsageSqlRow {
  id: string;
  organizationId: string;
  testMode: boolean;
  subscriptionLineId: string;
  quantity: string;
  dateTime: Date;
  invoiceId: string | null;
  transactionId: string | null;
  createdAt: Date;
}

/*
 * The statements of usage ingestion, named prepared statements on PostgreSQL (infra/sql/prepared-sql.ts:
 * straight to the pool outside a transaction, without Prisma's raw-query layer).
 */

/**
 * The lines of a batch with plan, subscription and (test mode) the customer's test clock, in one
 * statement. $1 the line ids, $2 the organization, $3 the mode.
 */
const LINE_CHECK = preparedSql(`SELECT sl."id", p."usageScheme", s."status", tc."frozenTime"
  FROM "SubscriptionLine" sl
  JOIN "Subscription" s ON s."id" = sl."subscriptionId"
  JOIN "Plan" p ON p."id" = sl."planId"
  LEFT JOIN "Customer" c ON s."testMode" AND c."id" = s."customerId"
  LEFT JOIN "TestClock" tc ON tc."id" = c."testClockId"
  WHERE sl."id" = ANY($1::text[]) AND s."organizationId" = $2::text AND s."testMode" = $3::boolean`);

/**
 * ONE statement writing a batch: the rows as one JSON parameter ($3, json_to_recordset) of the
 * organization $1 and mode $2, rows whose transaction id exists skipped by the partial unique
 * index. It returns what only the database knows (the stored quantity, the creation time) of the
 * rows it wrote; the rest of each usage is what was sent. Instants travel as epoch milliseconds
 * both ways (integers, exact at the columns' millisecond precision): no ISO text written for each
 * record here and parsed there, nor the other way round.
 */
const INSERT_USAGES = preparedSql(`INSERT INTO "Usage"
    ("id", "organizationId", "testMode", "subscriptionLineId", "quantity", "dateTime", "transactionId")
  SELECT t."id", $1::text, $2::boolean, t."line", t."quantity",
    timestamptz 'epoch' + t."at" * interval '1 millisecond', t."tx"
  FROM json_to_recordset($3::json)
    AS t("id" text, "line" text, "quantity" numeric, "at" int8, "tx" text)
  ON CONFLICT ("organizationId", "testMode", "transactionId") WHERE "transactionId" IS NOT NULL DO NOTHING
  RETURNING "id", "quantity"::text AS "quantity", (extract(epoch FROM "createdAt") * 1000)::float8 AS "createdAt"`);

/** The stored usages of transaction ids $3 in organization $1 and mode $2 (the duplicates of earlier requests). */
const USAGES_OF_KEYS = preparedSql(`SELECT "id", "organizationId", "testMode", "subscriptionLineId",
    "quantity"::text AS "quantity", "dateTime", "invoiceId", "transactionId", "createdAt"
  FROM "Usage"
  WHERE "organizationId" = $1::text AND "testMode" = $2::boolean AND "transactionId" = ANY($3::text[])`);

const toUsageRow = (r: UsageSqlRow): UsageRow => ({ ...r, quantity: new Prisma.Decimal(r.quantity) });

/** A checked usage record of the batch, in input order (transaction ids not yet deduplicated). */
interface CheckedUsage {
  dateTime: Date;
  subscriptionLineId: string;
  quantity: string;
  transactionId: string | null;
}

/**
 * A usage to insert, under the column names of INSERT_USAGES' json_to_recordset (`at`: epoch ms,
 * `tx`: the transaction id or null).
 */
interface UsageToInsert {
  id: string;
  line: string;
  quantity: string;
  at: number;
  tx: string | null;
}

async function recordUsageList(
  ctx: ServiceContext,
  inputs: readonly UsageInput[],
  prefix: (i: number) => string,
): Promise<RecordedUsages> {
  const tenantOf = tenant(ctx);
  const lineById = await readBatchLines(ctx, tenantOf, inputs);
  const rows = checkUsageRecords(ctx, inputs, lineById, prefix);
  // per checked record: its new id (undefined for a duplicate in the batch); the duplicates' indexes; the instant of
  // each row to insert as the Date the answer carries
  const ids: (string | undefined)[] = [];
  const duplicates: number[] = [];
  const dates: Date[] = [];
  const data = usagesToInsert(rows, ids, duplicates, dates);
  const rowById = await insertUsages(ctx, tenantOf, data, dates);
  const rowOfKey = await rowsOfTransactionIds(ctx, tenantOf, data, rowById);
  const usages: UsageRow[] = rows.map((r, i) => {
    const row = r.transactionId === null ? rowById.get(ids[i]!) : rowOfKey.get(r.transactionId);
    if (!row)
      throw new InvalidStateError(
        `${prefix(i)}transaction_id: the usage recorded with transaction_id ${quote(r.transactionId!)} was deleted ` +
          `while this request ran; send the record again`,
      );
    if (ids[i] !== undefined && ids[i] !== row.id) duplicates.push(i); // recorded before (or by a concurrent request)
    return row;
  });
  return { ids: usages.map((u) => u.id), usages, duplicates: duplicates.sort((a, b) => a - b) };
}

/**
 * The lines the batch names with plan, subscription and (test mode) the customer's test clock, by
 * id: ONE statement (LINE_CHECK), none when no record names a line. Usage of a customer on a test
 * clock happens on the clock's time (services/test-clocks.ts).
 */
async function readBatchLines(
  ctx: ServiceContext,
  tenantOf: TenantKey,
  inputs: readonly UsageInput[],
): Promise<Map<string, LineCheck>> {
  const lineIds = [...new Set(inputs.map((u) => u.subscriptionLine).filter((id): id is string => !!id))];
  const lines = lineIds.length
    ? await queryPrepared<LineCheck>(ctx.prisma, LINE_CHECK, [lineIds, tenantOf.organizationId, tenantOf.testMode])
    : [];
  return new Map(lines.map((l) => [l.id, l]));
}

/**
 * Checks every record (domain/usage.ts checkUsage: a known metered line, a quantity of at least 0,
 * not in the future of its line's clock; transaction_id's length) and returns them in input order,
 * `dateTime` defaulting to the line's clock's now. Field names carry `prefix(i)`. Throws
 * ValidationError (400, "Invalid usage" for a single record, else "Invalid usages") naming every
 * bad field, else InvalidStateError (409) naming the records of cancelled subscriptions.
 */
function checkUsageRecords(
  ctx: ServiceContext,
  inputs: readonly UsageInput[],
  lineById: Map<string, LineCheck>,
  prefix: (i: number) => string,
): CheckedUsage[] {
  const errors = new FieldErrorCollector();
  const cancelled = new FieldErrorCollector();
  const rows: CheckedUsage[] = [];
  inputs.forEach((input, i) => {
    const line = input.subscriptionLine ? lineById.get(input.subscriptionLine) : undefined;
    const now = line?.frozenTime ?? ctx.now();
    const record = new FieldErrorCollector();
    if (!input.subscriptionLine) record.add("subscription_line", "is required");
    else if (!line) record.add("subscription_line", `unknown subscription line ${input.subscriptionLine}`);
    const problem = transactionIdProblem(input.transactionId);
    if (problem) record.add("transaction_id", problem);
    const dateTime = input.dateTime ?? now;
    let quantity: Prisma.Decimal | null | undefined;
    try {
      // parsed once: checkUsage takes the Decimal as it is
      quantity = input.quantity === null || input.quantity === undefined ? input.quantity : toDecimal(input.quantity);
      checkUsage(
        { quantity, dateTime },
        line ? { usageScheme: line.usageScheme, subscriptionStatus: line.status } : null,
        now,
        record,
      );
    } catch (e) {
      if (e instanceof ValidationError) {
        for (const [field, reasons] of Object.entries(e.fields ?? {}))
          for (const reason of reasons) errors.add(`${prefix(i)}${field}`, reason);
        return;
      }
      if (e instanceof InvalidStateError) {
        cancelled.add(`${prefix(i)}subscription_line`, e.message);
        return;
      }
      throw e;
    }
    rows.push({
      subscriptionLineId: line!.id,
      quantity: quantity!.toString(),
      dateTime,
      transactionId: input.transactionId ?? null,
    });
  });
  errors.throwIfAny(inputs.length === 1 && prefix(0) === "" ? "Invalid usage" : "Invalid usages");
  if (!cancelled.empty) {
    const fields = cancelled.collected();
    const message =
      inputs.length === 1 && prefix(0) === ""
        ? "The subscription is cancelled; it takes no more usage"
        : `Cancelled subscriptions take no more usage: ${Object.keys(fields).join(", ")}`;
    throw new InvalidStateError(message, fields);
  }
  return rows;
}

/**
 * The rows to insert: one per transaction id (a later record of the batch with the same id is a
 * duplicate) and one per record without. Fills, per checked record, `ids` (a new `usa_` id, or
 * undefined for a duplicate), `duplicates` (the duplicates' indexes) and, per row to insert,
 * `dates` (its instant as a Date).
 */
function usagesToInsert(
  rows: CheckedUsage[],
  ids: (string | undefined)[],
  duplicates: number[],
  dates: Date[],
): UsageToInsert[] {
  const firstOfKey = new Map<string, number>();
  const data: UsageToInsert[] = [];
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
    data.push({ id, line: r.subscriptionLineId, quantity: r.quantity, at: r.dateTime.getTime(), tx: r.transactionId });
    dates.push(r.dateTime);
  });
  return data;
}

/**
 * Inserts `data` in ONE statement (INSERT_USAGES; no read after the write) and returns the rows
 * written, by id: what was sent (`dates[i]` the instant of `data[i]`) with the stored quantity and
 * creation time. A row whose transaction id was recorded before is skipped, so absent.
 */
async function insertUsages(
  ctx: ServiceContext,
  tenantOf: TenantKey,
  data: UsageToInsert[],
  dates: Date[],
): Promise<Map<string, UsageRow>> {
  const inserted = await queryPrepared<{ id: string; quantity: string; createdAt: number }>(ctx.prisma, INSERT_USAGES, [
    tenantOf.organizationId,
    tenantOf.testMode,
    JSON.stringify(data),
  ]);
  const sent = new Map(data.map((d, i) => [d.id, i]));
  const rowById = new Map<string, UsageRow>();
  for (const u of inserted) {
    const i = sent.get(u.id)!;
    const d = data[i];
    rowById.set(u.id, {
      id: u.id,
      organizationId: tenantOf.organizationId,
      testMode: tenantOf.testMode,
      subscriptionLineId: d.line,
      quantity: new Prisma.Decimal(u.quantity),
      dateTime: dates[i],
      invoiceId: null,
      transactionId: d.tx,
      createdAt: new Date(Number(u.createdAt)),
    });
  }
  return rowById;
}

/**
 * The stored usage of each transaction id of the batch: the rows just inserted, and those recorded
 * before (or by a concurrent request) for the rows the insert skipped, read in ONE statement
 * (USAGES_OF_KEYS; none when nothing was skipped).
 */
async function rowsOfTransactionIds(
  ctx: ServiceContext,
  tenantOf: TenantKey,
  data: UsageToInsert[],
  rowById: Map<string, UsageRow>,
): Promise<Map<string, UsageRow>> {
  const skippedKeys = data.filter((d) => !rowById.has(d.id)).map((d) => d.tx!);
  const existing = skippedKeys.length
    ? await queryPrepared<UsageSqlRow>(ctx.prisma, USAGES_OF_KEYS, [
        tenantOf.organizationId,
        tenantOf.testMode,
        skippedKeys,
      ])
    : [];
  const rowOfKey = new Map<string, UsageRow>(existing.map((u) => [u.transactionId!, toUsageRow(u)]));
  for (const row of rowById.values()) if (row.transactionId) rowOfKey.set(row.transactionId, row);
  return rowOfKey;
}

/** Why `transactionId` is not a usable idempotency key, or null (absent, or 1 to 255 characters). */
export function transactionIdProblem(transactionId: string | null | undefined): string | null {
  if (transactionId === null || transactionId === undefined) return null;
  if (transactionId.length === 0) return "must not be empty (leave it out for no idempotency key)";
  return textProblem(transactionId, textLimit("UsageInput.transactionId"));
}

/** Deletes a usage that no invoice has billed; 404 unknown, 409 billed. One transaction. */
export async function deleteUsage(ctx: ServiceContext, id: string): Promise<void> {
  await ctx.prisma.$transaction(async (tx) => {
    const row = await lockTenantRow(tx, ctx, "Usage", id, ["invoiceId"]);
    if (!row) throw new NotFoundError("usage", id);
    if (row.invoiceId)
      throw new InvalidStateError(`Usage ${id} is billed by invoice ${row.invoiceId}; billed usage cannot be deleted`);
    await tx.usage.delete({ where: { id } });
  });
}
