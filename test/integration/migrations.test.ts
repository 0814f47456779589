/**
 * In-process migrations (src/infra/migrate.ts) on an empty database of each kind: every migration
 * of prisma/migrations applied once with Prisma's checksum, nothing to do the second time, a
 * failing migration rolled back whole (no table, no bookkeeping row) with its name in the error,
 * and on PostgreSQL two concurrent starts applying each migration exactly once. The backfill of
 * 20261124010000_issued_snapshots writes what finalize writes; that of
 * 2026120201000001_organization_of_children gives child rows their parent's organization.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDatabase, type Database } from "../../src/infra/database.js";
import {
  applyMigrations,
  localMigrations,
  migrationStatus,
  MigrationError,
  MIGRATIONS_DIR,
} from "../../src/infra/migrate.js";
import { emptyTarget, TEST_DB } from "../helpers/databases.js";
import { customerSnapshot, issuerSnapshot } from "../../src/domain/issued-parties.js";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/**
 * Writes a customer row as the service wrote it before a migration, with raw SQL: Prisma's create would also write
 * the columns later migrations add with a default (`excludeFromDunning`), which do not exist yet. JSON columns
 * (`contacts`, `taxSettings`, `metadata`) are given as values and stored as jsonb.
 */
async function insertCustomer(p: Database["prisma"], row: Record<string, unknown>): Promise<void> {
  const names = Object.keys(row);
  const json = new Set(["contacts", "taxSettings", "metadata"]);
  const values = names.map((n) => (json.has(n) ? JSON.stringify(row[n]) : row[n]));
  const placeholders = names.map((n, i) => `$${i + 1}${json.has(n) ? "::jsonb" : ""}`);
  await p.$executeRawUnsafe(
    `INSERT INTO "Customer" (${names.map((n) => `"${n}"`).join(", ")}, "updatedAt") ` +
      `VALUES (${placeholders.join(", ")}, now())`,
    ...values,
  );
}

/** An empty database of this run's kind (test/helpers/databases.ts emptyTarget), closed and removed after the file. */
async function emptyDatabase(): Promise<Database> {
  const { target, drop } = await emptyTarget("migrations");
  cleanup.push(drop);
  const database = await createDatabase(target);
  cleanup.push(() => database.close());
  return database;
}

describe("migrations in process", () => {
  it("applies every migration once with Prisma's checksum, then has nothing to do", async () => {
    const db = await emptyDatabase();
    const local = await localMigrations();
    expect(local.length).toBeGreaterThan(10);
    const first = await db.session((s) => applyMigrations(s));
    expect(first.applied).toEqual(local.map((m) => m.name));
    const rows = await db.session((s) =>
      s.query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
        `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY ` +
          `migration_name`,
      ),
    );
    expect(rows.map((r) => r.migration_name)).toEqual(local.map((m) => m.name));
    const sql = fs.readFileSync(path.join(MIGRATIONS_DIR, local[0].name, "migration.sql"));
    expect(rows[0].checksum).toBe(createHash("sha256").update(sql).digest("hex"));
    expect(rows.every((r) => r.finished_at !== null && r.applied_steps_count === 1)).toBe(true);
    expect((await db.session((s) => applyMigrations(s))).applied).toEqual([]);
    expect(await db.session((s) => migrationStatus(s))).toEqual({
      applied: local.map((m) => m.name),
      pending: [],
      modified: [],
      failed: [],
      unknown: [],
    });
    // the schema is there: a reference list seeded by a migration
    expect(await db.prisma.currency.count()).toBeGreaterThan(0);
  });

  it("a failing migration is rolled back whole and named; the ones before it stay applied", async () => {
    const db = await emptyDatabase();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-migration-dirs-"));
    cleanup.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    fs.mkdirSync(path.join(dir, "20000101000000_first"));
    fs.writeFileSync(
      path.join(dir, "20000101000000_first", "migration.sql"),
      `CREATE TABLE "First" ("id" INTEGER PRIMARY KEY);`,
    );
    fs.mkdirSync(path.join(dir, "20000101000001_broken"));
    fs.writeFileSync(
      path.join(dir, "20000101000001_broken", "migration.sql"),
      `CREATE TABLE "Half" ("id" INTEGER);\nINSERT INTO "Half" VALUES (1);\nSELECT no_such_function();`,
    );
    const local = await localMigrations(dir);
    const error = await db.session((s) => applyMigrations(s, local)).catch((e) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect(error.migration).toBe("20000101000001_broken");
    expect(error.message).toMatch(/^migration 20000101000001_broken failed and was rolled back: .*no_such_function/);
    const tables = await db.session((s) =>
      s.query<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
      ),
    );
    expect(tables.map((t) => t.name)).toEqual(["First", "_prisma_migrations"]);
    expect(await db.session((s) => migrationStatus(s, local))).toMatchObject({
      applied: ["20000101000000_first"],
      pending: ["20000101000001_broken"],
      failed: [],
    });
  });

  it.skipIf(TEST_DB !== "postgres")(
    "two instances starting at once apply each migration exactly once (advisory lock)",
    async () => {
      const db1 = await emptyDatabase();
      const db2 = await createDatabase(db1.target);
      cleanup.push(() => db2.close());
      const [a, b] = await Promise.all([
        db1.session((s) => applyMigrations(s)),
        db2.session((s) => applyMigrations(s)),
      ]);
      const local = await localMigrations();
      expect([...a.applied, ...b.applied].sort()).toEqual(local.map((m) => m.name));
      const rows = await db1.session((s) =>
        s.query<{ n: string }>(`SELECT count(*)::text AS n FROM "_prisma_migrations"`),
      );
      expect(rows[0].n).toBe(String(local.length));
    },
  );
});

describe("20261124010000_issued_snapshots", () => {
  it(
    "backfills finalized documents with the snapshot finalize writes (domain/issued-parties.ts), drafts " +
      "stay without",
    async () => {
      const db = await emptyDatabase();
      const local = await localMigrations();
      const at = local.findIndex((m) => m.name === "20261124010000_issued_snapshots");
      expect(at).toBeGreaterThan(0);
      await db.session((s) => applyMigrations(s, local.slice(0, at)));
      // rows written before the migration (select: the snapshot columns do not exist yet)
      const p = db.prisma;
      const select = { id: true } as const;
      // raw SQL: these columns of Organization moved to OrganizationSettings in a later migration
      await p.$executeRawUnsafe(
        `INSERT INTO "Organization" ("id", "name", "businessName", "taxId", "taxActivity", "taxActivityCode",
        "taxAddress", "taxCommune", "taxResolutionNumber", "taxResolutionDate", "updatedAt")
       VALUES ('org_m', 'Org Name', 'Brand Name', '76042235-5', 'Servicios', '620200,631200', 'Calle 1',
       'Providencia', 80, '2014-08-22T00:00:00Z', now())`,
      );
      await p.$executeRawUnsafe(
        `INSERT INTO "Organization" ("id", "name", "updatedAt") VALUES ('org_n', 'No Profile Ltda', now())`,
      );
      await insertCustomer(p, {
        id: "cus_m",
        organizationId: "org_m",
        testMode: true,
        name: "Cliente SpA",
        address: "Av. 2",
        countryId: "CL",
        stateId: "CL-RM",
        stateCode: "RM",
        email: "a@b.cl",
        taxId: "76042235-5",
        contacts: [{ name: "Ana", email: null, phone: null, role: "pagos" }],
        taxSettings: { activity: "Retail", commune: "Ñuñoa" },
        metadata: { k: "v" },
      });
      await insertCustomer(p, { id: "cus_n", organizationId: "org_n", testMode: false, name: null });
      const doc = { testMode: true, currencyId: "CLP", date: new Date("2026-11-01T00:00:00Z"), userEmail: "ops@x.cl" };
      await p.invoice.create({
        select,
        data: {
          ...doc,
          id: "inv_m",
          organizationId: "org_m",
          customerId: "cus_m",
          documentTypeId: "CL33",
          status: "finalized",
          number: 1,
        },
      });
      await p.invoice.create({
        select,
        data: { ...doc, id: "inv_d", organizationId: "org_m", customerId: "cus_m", documentTypeId: "CL33" },
      });
      await p.invoice.create({
        select,
        data: {
          ...doc,
          testMode: false,
          id: "inv_n",
          organizationId: "org_n",
          customerId: "cus_n",
          documentTypeId: "CL33",
          status: "finalized",
          number: 1,
        },
      });
      await p.order.create({
        select,
        data: {
          ...doc,
          id: "ord_m",
          organizationId: "org_m",
          customerId: "cus_m",
          documentTypeId: "CL52",
          status: "finalized",
          number: 1,
        },
      });
      await p.creditNote.create({
        select,
        data: {
          ...doc,
          id: "cre_m",
          organizationId: "org_m",
          invoiceId: "inv_m",
          documentTypeId: "CL61",
          status: "finalized",
          number: 1,
        },
      });

      await db.session((s) => applyMigrations(s, local.slice(0, at + 1)));
      // the later migrations add columns the client reads (Customer activity, commune, city) and leave the snapshots as
      // they are
      await db.session((s) => applyMigrations(s, local));
      /**
       * A customer snapshot as this migration wrote it: without the keys later snapshots carry (activity, commune,
       * city)
       */
      const asMigrated = ({ activity: _a, commune: _c, city: _ci, ...rest }: ReturnType<typeof customerSnapshot>) =>
        rest;
      const customerM = asMigrated(customerSnapshot(await p.customer.findUniqueOrThrow({ where: { id: "cus_m" } })));
      // siiOffice joined the issuer snapshot later: snapshots backfilled here are without it
      const { siiOffice: _office, ...issuerM } = issuerSnapshot(
        { name: "Org Name", businessName: "Brand Name" },
        {
          taxId: "76042235-5",
          businessName: null,
          activity: "Servicios",
          activityCodes: ["620200", "631200"],
          address: "Calle 1",
          commune: "Providencia",
          city: null,
          resolutionNumber: 80,
          resolutionDate: "2014-08-22",
        },
      );
      expect(issuerM.name).toBe("Brand Name");
      for (const row of [
        await p.invoice.findUniqueOrThrow({ where: { id: "inv_m" } }),
        await p.order.findUniqueOrThrow({ where: { id: "ord_m" } }),
        await p.creditNote.findUniqueOrThrow({ where: { id: "cre_m" } }),
      ]) {
        expect(row.customerSnapshot).toEqual(customerM);
        expect(row.issuerSnapshot).toEqual(issuerM);
      }
      const bare = await p.invoice.findUniqueOrThrow({ where: { id: "inv_n" } });
      expect(bare.customerSnapshot).toEqual(
        asMigrated(customerSnapshot(await p.customer.findUniqueOrThrow({ where: { id: "cus_n" } }))),
      );
      expect(bare.issuerSnapshot).toEqual(
        issuerSnapshot(
          { name: "No Profile Ltda", businessName: null },
          {
            taxId: null,
            businessName: null,
            activity: null,
            activityCodes: [],
            address: null,
            commune: null,
            city: null,
            resolutionNumber: null,
            resolutionDate: null,
          },
        ),
      );
      const draft = await p.invoice.findUniqueOrThrow({ where: { id: "inv_d" } });
      expect([draft.customerSnapshot, draft.issuerSnapshot]).toEqual([null, null]);
    },
  );
});

describe("2026112602000000_document_numbering", () => {
  it(
    "marks every numbered document's series without renumbering (a DTE is a folio, the rest internal), drafts stay " +
      "null; the series then never collide. Later, 2026120201000001_organization_of_children gives the lines and " +
      "charges written before it their parent's organization",
    async () => {
      const db = await emptyDatabase();
      const local = await localMigrations();
      const at = local.findIndex((m) => m.name === "2026112602000000_document_numbering");
      expect(at).toBeGreaterThan(0);
      await db.session((s) => applyMigrations(s, local.slice(0, at)));
      // rows as the service wrote them before the migration (select: the numbering column does not exist yet)
      const p = db.prisma;
      const select = { id: true } as const;
      await p.$executeRawUnsafe(
        `INSERT INTO "Organization" ("id", "name", "updatedAt") VALUES ('org_m', 'Acme SpA', now())`,
      );
      await insertCustomer(p, {
        id: "cus_m",
        organizationId: "org_m",
        testMode: true,
        name: "Cliente SpA",
        countryId: "CL",
      });
      const doc = {
        organizationId: "org_m",
        customerId: "cus_m",
        testMode: true,
        currencyId: "CLP",
        date: new Date("2026-11-01T00:00:00Z"),
        userEmail: "ops@x.cl",
      };
      const dte = (folio: number) => ({ agency: "sii", status: "accepted", folio, document_id: `F${folio}T33` });
      // an organization enrolled after issuing: counter numbers 1..2, then a CAF from 51
      await p.invoice.create({
        select,
        data: { ...doc, id: "inv_1", documentTypeId: "CL33", status: "finalized", number: 1 },
      });
      await p.invoice.create({
        select,
        data: { ...doc, id: "inv_2", documentTypeId: "CL33", status: "finalized", number: 2 },
      });
      await p.invoice.create({
        select,
        data: {
          ...doc,
          id: "inv_51",
          documentTypeId: "CL33",
          status: "finalized",
          number: 51,
          localFile: "inv_51_33_51.xml",
          taxAgency: dte(51),
        },
      });
      await p.invoice.create({ select, data: { ...doc, id: "inv_d", documentTypeId: "CL33" } });
      await p.order.create({
        select,
        data: { ...doc, id: "ord_1", documentTypeId: "CL52", status: "finalized", number: 1 },
      });
      const { customerId: _c, ...noteColumns } = doc;
      await p.creditNote.create({
        select,
        data: {
          ...noteColumns,
          id: "cre_7",
          invoiceId: "inv_51",
          documentTypeId: "CL61",
          status: "finalized",
          number: 7,
          taxAgency: dte(7),
        },
      });
      // lines and a charge as written before 2026120201000001_organization_of_children (without organizationId),
      // of two organizations
      await p.$executeRawUnsafe(
        `INSERT INTO "Organization" ("id", "name", "updatedAt") VALUES ('org_o', 'Otra SpA', now())`,
      );
      await insertCustomer(p, { id: "cus_o", organizationId: "org_o", testMode: true });
      await p.invoice.create({
        select,
        data: { ...doc, id: "inv_o", organizationId: "org_o", customerId: "cus_o", documentTypeId: "CL33" },
      });
      await p.$executeRawUnsafe(
        `INSERT INTO "Payment" ("id", "organizationId", "testMode", "amount", "currencyId", "date", "userEmail",
           "updatedAt") VALUES ('pay_o', 'org_o', true, 100, 'CLP', '2026-11-01', 'ops@x.cl', now())`,
      );
      const line = `"position", "name", "quantity", "amount", "updatedAt"`;
      for (const insert of [
        `INSERT INTO "InvoiceLine" ("id", "invoiceId", ${line}) VALUES ('lin_m', 'inv_1', 0, 'A', 1, 100, now()),
           ('lin_o', 'inv_o', 0, 'B', 1, 100, now())`,
        `INSERT INTO "OrderLine" ("id", "orderId", ${line}) VALUES ('lin_m', 'ord_1', 0, 'A', 1, 100, now())`,
        `INSERT INTO "CreditNoteLine" ("id", "creditNoteId", ${line}) VALUES ('lin_m', 'cre_7', 0, 'A', 1, 100, now())`,
        `INSERT INTO "PaymentCharge" ("id", "paymentId", "attempt", "gateway", "amount", "currencyId", "status",
           "updatedAt") VALUES ('chg_o', 'pay_o', 1, 'test', 100, 'CLP', 'succeeded', now())`,
      ])
        await p.$executeRawUnsafe(insert);

      await db.session((s) => applyMigrations(s, local.slice(0, at + 1)));
      const invoices = await p.invoice.findMany({
        where: { organizationId: "org_m" },
        orderBy: { id: "asc" },
        select: { id: true, number: true, numbering: true },
      });
      expect(invoices).toEqual([
        { id: "inv_1", number: 1, numbering: "internal" },
        { id: "inv_2", number: 2, numbering: "internal" },
        { id: "inv_51", number: 51, numbering: "sii_folio" },
        { id: "inv_d", number: null, numbering: null },
      ]);
      expect(
        await p.order.findUniqueOrThrow({ where: { id: "ord_1" }, select: { number: true, numbering: true } }),
      ).toEqual({ number: 1, numbering: "internal" });
      expect(
        await p.creditNote.findUniqueOrThrow({ where: { id: "cre_7" }, select: { number: true, numbering: true } }),
      ).toEqual({ number: 7, numbering: "sii_folio" });

      // folio 1 of a new CAF beside internal number 1 of the same type: another series
      await p.invoice.create({
        select,
        data: {
          ...doc,
          id: "inv_f1",
          documentTypeId: "CL33",
          status: "finalized",
          number: 1,
          numbering: "sii_folio",
          taxAgency: dte(1),
        },
      });
      // the same number twice in one series is still refused by the unique key
      await expect(
        p.invoice.create({
          select,
          data: {
            ...doc,
            id: "inv_dup",
            documentTypeId: "CL33",
            status: "finalized",
            number: 2,
            numbering: "internal",
          },
        }),
      ).rejects.toMatchObject({ code: "P2002" });
      await db.session((s) => applyMigrations(s, local));

      const owners = { select: { id: true, organizationId: true }, orderBy: { id: "asc" } } as const;
      expect(await p.invoiceLine.findMany(owners)).toEqual([
        { id: "lin_m", organizationId: "org_m" },
        { id: "lin_o", organizationId: "org_o" },
      ]);
      expect(await p.orderLine.findMany(owners)).toEqual([{ id: "lin_m", organizationId: "org_m" }]);
      expect(await p.creditNoteLine.findMany(owners)).toEqual([{ id: "lin_m", organizationId: "org_m" }]);
      expect(await p.paymentCharge.findMany(owners)).toEqual([{ id: "chg_o", organizationId: "org_o" }]);
    },
  );
});
