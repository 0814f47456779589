/**
 * The billing run's bulk writes (docs/billing-run.md "Throughput"): a batch buffers its invoice
 * drafts, their lines, usage marks and redemption increments, and writes them with a few
 * statements of one JSON parameter each, then advances or cancels its subscriptions with one
 * statement per chunk.
 */
import type { Subscription } from "../../infra/prisma/generated/client.js";
import { Prisma } from "../../infra/prisma/generated/client.js";
import { isoDate } from "../../domain/formats.js";
import { insertRows, sqlRows } from "../../infra/sql/index.js";
import type { Tx } from "../context.js";
import type { FinalizedColumns } from "../document-lifecycle.js";

/**
 * The foreign keys to Invoice of the rows a batch writes besides its invoices, DEFERRABLE INITIALLY
 * IMMEDIATE (migrations 2026113001000001_deferrable_invoice_references and
 * 2026120201000001_organization_of_children): checked at once everywhere else;
 * BatchWrites.flushAllButInvoices defers them, and the flush after it checks them.
 */
const INVOICE_REFERENCES = Prisma.raw('"InvoiceLine_invoiceId_organizationId_fkey", "Usage_invoiceId_fkey"');

/** Rows per bulk statement. */
const ROWS_PER_STATEMENT = 1000;

/** Calls `write` with `rows` in chunks of ROWS_PER_STATEMENT, one after the other. */
async function inChunks<T>(rows: readonly T[], write: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) await write(rows.slice(i, i + ROWS_PER_STATEMENT));
}

/**
 * Columns of an Invoice or InvoiceLine row the run inserts (`@db.Date` columns as `yyyy-mm-dd`,
 * decimals as strings, JSON columns as objects).
 */
export type InsertRow = { id: string } & Record<string, unknown>;

/** Adds `n` to a counter column of each `[id, n]` (coupon redemptions of lines, addon redemptions). */
async function incrementCounters(
  tx: Tx,
  target: { table: "SubscriptionLine" | "SubscriptionAddon"; column: string },
  counts: [string, number][],
  now: Date,
): Promise<void> {
  const table = Prisma.raw(`"${target.table}"`);
  const column = Prisma.raw(`"${target.column}"`);
  await inChunks(counts, (chunk) =>
    sqlRows(
      tx,
      Prisma.sql`
      UPDATE ${table} t SET ${column} = t.${column} + v."n", "updatedAt" = ${now}
      FROM (VALUES ${Prisma.join(chunk.map(([id, n]) => Prisma.sql`(${id}, ${n}::int)`))}) AS v("id", "n")
      WHERE t."id" = v."id"`,
    ),
  );
}

/**
 * The writes of a batch, buffered and written with a few bulk statements (flush): invoice drafts
 * and their lines, usage marks, line coupon and addon redemption increments. Flushed before
 * anything that reads or writes those rows in the database (applyPendingChanges, the no-card
 * balance, markPendingItemsBilled) and at the end of the batch, so the database sees the same
 * rows, in the same order, as with one statement per write.
 */
export class BatchWrites {
  invoices: InsertRow[] = [];
  lines: InsertRow[] = [];
  usageMarks: { id: string; invoiceId: string }[] = [];
  lineRedemptions = new Map<string, number>();
  addonRedemptions = new Map<string, number>();
  /** the issuer snapshot of the finalized invoices buffered, by `organizationId testMode` */
  private issuers = new Map<string, unknown>();
  /** the customer snapshot of the finalized invoices buffered, by customer id */
  private customers = new Map<string, unknown>();

  constructor(private readonly tx: Tx) {}

  /** The ids of the invoices buffered, not inserted yet. */
  bufferedInvoiceIds(): Set<string> {
    return new Set(this.invoices.map((r) => r.id));
  }

  /**
   * Gives each buffered invoice its finalized columns (`columns` by id: number, series, snapshots),
   * so that it is inserted finalized; every buffered invoice must have them (the rows of one insert
   * have the same columns).
   */
  finalize(columns: ReadonlyMap<string, FinalizedColumns>): void {
    for (const row of this.invoices) {
      const finalized = columns.get(row.id);
      if (!finalized) throw new Error(`invoice ${row.id} is buffered without its finalized columns`);
      const { issuerSnapshot, customerSnapshot, ...own } = finalized;
      // the snapshots are sent once each, not in each row (flush): the issuer's per organization
      // and mode, the customer's per customer
      this.issuers.set(`${row.organizationId} ${row.testMode}`, issuerSnapshot);
      this.customers.set(row.customerId as string, customerSnapshot);
      Object.assign(row, own);
    }
  }

  /** Counts one more redemption of `id` in `counter`. */
  static redeem(counter: Map<string, number>, id: string): void {
    counter.set(id, (counter.get(id) ?? 0) + 1);
  }

  /** whether flushAllButInvoices deferred INVOICE_REFERENCES, to be checked by the next flush */
  private deferred = false;

  /**
   * Writes everything buffered: the invoices, then the rows that reference them and the
   * redemptions. After flushAllButInvoices, it then checks the deferred foreign keys at once (`SET
   * CONSTRAINTS ... IMMEDIATE`) rather than leaving them to COMMIT: a violation fails this
   * statement, which every driver reports, where pglite-prisma-adapter 0.7 loses an error of COMMIT
   * (its commit resolves, the transaction rolled back).
   */
  async flush(): Promise<void> {
    const now = new Date();
    await this.writeInvoices(now);
    await this.writeOthers(now);
    if (this.deferred) {
      await sqlRows(this.tx, Prisma.sql`SET CONSTRAINTS ${INVOICE_REFERENCES} IMMEDIATE`);
      this.deferred = false;
    }
  }

  /**
   * Writes everything buffered but the invoices: their lines, the usage marks and the redemption
   * increments, with the foreign keys from lines and usage records to invoices deferred (`SET
   * CONSTRAINTS`, INVOICE_REFERENCES) until the next flush checks them. The invoices stay
   * buffered, to be numbered (finalize) and then inserted (flush) last: the batch holds the
   * organization's numbering counter from numbering to commit (batch.ts finalizeInvoices), and
   * those other rows are then no longer written while it holds it.
   */
  async flushAllButInvoices(): Promise<void> {
    await sqlRows(this.tx, Prisma.sql`SET CONSTRAINTS ${INVOICE_REFERENCES} DEFERRED`);
    this.deferred = true;
    await this.writeOthers(new Date());
  }

  /** Inserts the buffered invoices (finalized ones with their snapshots, each sent once). */
  private async writeInvoices(now: Date): Promise<void> {
    const { issuers, customers, invoices } = this;
    this.issuers = new Map();
    this.customers = new Map();
    this.invoices = [];
    // the parties as issued (finalize), each sent once: the issuer by organization and mode, the customer by id
    const snapshots: Record<string, Prisma.Sql> = issuers.size
      ? {
          issuerSnapshot: Prisma.sql`${JSON.stringify(Object.fromEntries(issuers))}::jsonb
            -> (r."organizationId" || ' ' || r."testMode"::text)`,
          customerSnapshot: Prisma.sql`${JSON.stringify(Object.fromEntries(customers))}::jsonb -> r."customerId"`,
        }
      : {};
    await inChunks(invoices, (rows) =>
      insertRows(this.tx, "Invoice", rows, { updatedAt: Prisma.sql`${now}::timestamptz`, ...snapshots }),
    );
  }

  /** Writes the buffered lines, usage marks and redemption increments. */
  private async writeOthers(now: Date): Promise<void> {
    const { tx } = this;
    const [lines, marks, lineRedemptions, addonRedemptions] = [
      this.lines,
      this.usageMarks,
      [...this.lineRedemptions],
      [...this.addonRedemptions],
    ];
    this.lines = [];
    this.usageMarks = [];
    this.lineRedemptions = new Map();
    this.addonRedemptions = new Map();
    await inChunks(lines, (rows) =>
      insertRows(tx, "InvoiceLine", rows, { updatedAt: Prisma.sql`${now}::timestamptz` }),
    );
    // one JSON parameter for the whole chunk (a VALUES list took two bound parameters per mark); the
    // ids again as an array, whose length the planner knows, so it probes the primary key rather
    // than reading the table into a hash join (it cannot count a JSON document's rows)
    await inChunks(marks, (chunk) =>
      sqlRows(
        tx,
        Prisma.sql`
        UPDATE "Usage" u SET "invoiceId" = v."invoiceId"
        FROM json_to_recordset(${JSON.stringify(chunk)}::json) AS v("id" text, "invoiceId" text)
        WHERE u."id" = ANY(${chunk.map((m) => m.id)}::text[]) AND u."id" = v."id" AND u."invoiceId" IS NULL`,
        { prepared: true },
      ),
    );
    await incrementCounters(tx, { table: "SubscriptionLine", column: "couponRedemptions" }, lineRedemptions, now);
    await incrementCounters(tx, { table: "SubscriptionAddon", column: "addonRedemptions" }, addonRedemptions, now);
  }
}

/**
 * Writes the billing state of `subscriptions` as the run left it in memory (next and previous
 * billing, cycle, coupon redemptions, status, cancellation): one JSON parameter per chunk (a
 * VALUES list took eight bound parameters per subscription), and the ids as an array so that the
 * planner probes the primary key (as the usage marks in BatchWrites.flush).
 */
export async function writeSubscriptions(tx: Tx, subscriptions: readonly Subscription[]): Promise<void> {
  const now = new Date();
  await inChunks(subscriptions, (chunk) =>
    sqlRows(
      tx,
      Prisma.sql`
      UPDATE "Subscription" s SET "nextBilling" = v."nextBilling", "nextBillingCycle" = v."nextBillingCycle",
      "previousBilling" = v."previousBilling",
        "couponRedemptions" = v."couponRedemptions", "status" = v."status", "cancelled" = v."cancelled",
        "cancelReason" = v."cancelReason", "updatedAt" = ${now}
      FROM json_to_recordset(${JSON.stringify(
        chunk.map((sub) => ({
          id: sub.id,
          nextBilling: isoDate(sub.nextBilling),
          nextBillingCycle: sub.nextBillingCycle,
          previousBilling: sub.previousBilling ? isoDate(sub.previousBilling) : null,
          couponRedemptions: sub.couponRedemptions,
          status: sub.status,
          cancelled: sub.cancelled,
          cancelReason: sub.cancelReason,
        })),
      )}::json) AS v("id" text, "nextBilling" date, "nextBillingCycle" int, "previousBilling" date,
      "couponRedemptions" int, "status" text, "cancelled" timestamptz, "cancelReason" text)
      WHERE s."id" = ANY(${chunk.map((sub) => sub.id)}::text[]) AND s."id" = v."id"`,
      { prepared: true },
    ),
  );
}
