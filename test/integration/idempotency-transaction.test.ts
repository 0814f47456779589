/**
 * A keyed request runs in one transaction with its key and its stored answer
 * (services/idempotency.ts, services/request-transaction.ts; docs/decisions.md "Idempotency
 * keys"): a failed request frees the key and leaves nothing; a concurrent request with the key
 * never runs a second time; services' own transactions join it as savepoints; mail goes out only
 * after the commit; a charge rolled back after the gateway call is asked again with the same id.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { TEST_DB } from "../helpers/databases.js";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp.js";
import { findGateway, type PaymentGateway } from "../../src/infra/gateways/index.js";
import { derivedId } from "../../src/infra/ids.js";
import { afterCommit, runInTransaction } from "../../src/services/request-transaction.js";

let s: TestServer;
let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ settings: { smtpUrl: smtp.url }, outboxIntervalMs: 0 });
  // a trigger that fails chosen writes, as a broken database or a bug would (a 5xx)
  await s.database.prisma.$executeRawUnsafe(
    `CREATE FUNCTION test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test failure'; END $$`,
  );
});
afterAll(async () => {
  await s?.close();
  await smtp?.close();
});
afterEach(async () => {
  await s.database.prisma.$executeRawUnsafe(`DROP TRIGGER IF EXISTS test_fail ON "Customer"`);
  await s.database.prisma.$executeRawUnsafe(`DROP TRIGGER IF EXISTS test_fail ON "Payment"`);
});

async function post(path: string, body: unknown, key: string) {
  const headers = {
    "content-type": "application/json",
    authorization: `Bearer ${s.keys.acme}`,
    "idempotency-key": key,
  };
  const res = await fetch(`${s.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, replayed: res.headers.get("idempotent-replayed") };
}

const customers = (name: string) => s.database.prisma.customer.count({ where: { organizationId: s.orgs.acme, name } });
const storedKey = (key: string) =>
  s.database.prisma.idempotencyKey.findFirst({ where: { organizationId: s.orgs.acme, key } });

describe("a keyed request that fails", () => {
  it("REST 500: nothing is written, the key stays free, and the retry runs once", async () => {
    await s.database.prisma.$executeRawUnsafe(
      `CREATE TRIGGER test_fail BEFORE INSERT ON "Customer" FOR EACH ROW EXECUTE FUNCTION test_fail()`,
    );
    const failed = await post("/v1/customers/", chileanCustomer({ name: "Falla Uno SpA" }), "fail-rest-1");
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe("internal_error");
    expect(await storedKey("fail-rest-1")).toBeNull();
    expect(await customers("Falla Uno SpA")).toBe(0);

    await s.database.prisma.$executeRawUnsafe(`DROP TRIGGER test_fail ON "Customer"`);
    const retried = await post("/v1/customers/", chileanCustomer({ name: "Falla Uno SpA" }), "fail-rest-1");
    expect(retried).toMatchObject({ status: 201, replayed: null });
    const again = await post("/v1/customers/", chileanCustomer({ name: "Falla Uno SpA" }), "fail-rest-1");
    expect(again).toEqual({ ...retried, replayed: "true" });
    expect(await customers("Falla Uno SpA")).toBe(1);
  });

  it("GraphQL internal_error in the second mutation: the first mutation's write is rolled back too", async () => {
    await s.database.prisma.$executeRawUnsafe(
      `CREATE TRIGGER test_fail BEFORE INSERT ON "Customer" FOR EACH ROW WHEN (NEW."name" = 'Falla Dos SpA') EXECUTE ` +
        `FUNCTION test_fail()`,
    );
    const doc = {
      query:
        `mutation { a: createCustomer(input: { name: "Antes Dos SpA", country: "CL" }) { id } b: ` +
        `createCustomer(input: { name: "Falla Dos SpA", country: "CL" }) { id } }`,
    };
    const failed = await post("/graphql", doc, "fail-gql-1");
    expect(failed.status).toBe(200);
    expect(failed.body.data).toBeNull(); // b is non-null: its error nulls the whole result
    expect(failed.body.errors.map((e: any) => e.extensions.code)).toEqual(["internal_error"]);
    expect(await customers("Antes Dos SpA")).toBe(0);
    expect(await storedKey("fail-gql-1")).toBeNull();

    await s.database.prisma.$executeRawUnsafe(`DROP TRIGGER test_fail ON "Customer"`);
    const retried = await post("/graphql", doc, "fail-gql-1");
    expect(retried.body.errors).toBeUndefined();
    expect(retried.body.data.a.id).toMatch(/^cus_/);
    expect(await post("/graphql", doc, "fail-gql-1")).toEqual({ ...retried, replayed: "true" });
    expect(await customers("Antes Dos SpA")).toBe(1);
    expect(await customers("Falla Dos SpA")).toBe(1);
  });

  it("a 4xx answer is stored with the request's other writes, and what the failed service wrote is not", async () => {
    // a: succeeds; b: createPayment fails validation (400) inside its own service: kept as a 4xx
    const doc = {
      query:
        `mutation { a: createCustomer(input: { name: "Antes Tres SpA", country: "CL" }) { id } b: ` +
        `createPayment(input: { amount: "-1", currency: "CLP", description: "tres" }) { id } }`,
    };
    const first = await post("/graphql", doc, "partial-1");
    expect(first.body.errors.map((e: any) => e.extensions.code)).toEqual(["validation_error"]);
    expect(await customers("Antes Tres SpA")).toBe(1);
    expect(await s.database.prisma.payment.count({ where: { description: "tres" } })).toBe(0);
    expect(await post("/graphql", doc, "partial-1")).toEqual({ ...first, replayed: "true" });
    expect(await customers("Antes Tres SpA")).toBe(1);
  });
});

describe("concurrent requests with one key", () => {
  it.skipIf(TEST_DB !== "postgres")(
    "PostgreSQL: while the first runs, the second gets 409 at once and writes nothing; then the answer is replayed",
    async () => {
      const { url } = s.database.target as { url: string };
      const blocker = new pg.Client({ connectionString: url });
      const observer = new pg.Client({ connectionString: url });
      await blocker.connect();
      await observer.connect();
      try {
        // hold the first request inside its transaction: its insert waits for this table lock
        await blocker.query("BEGIN");
        await blocker.query(`LOCK TABLE "Customer" IN EXCLUSIVE MODE`);
        const body = chileanCustomer({ name: "Carrera SpA" });
        const first = post("/v1/customers/", body, "race-pg-1");
        // wait (by state, not by time) until the first request holds the key's advisory lock
        for (;;) {
          const { rows } = await observer.query(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT ` +
              `oid FROM pg_database WHERE datname = current_database())`,
          );
          if (rows[0].n > 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        const second = await post("/v1/customers/", body, "race-pg-1");
        expect(second.status).toBe(409);
        expect(second.body.error).toMatchObject({
          code: "invalid_state",
          message: expect.stringContaining("still running"),
        });
        await blocker.query("COMMIT");
        const answered = await first;
        expect(answered).toMatchObject({ status: 201, replayed: null });
        expect(await post("/v1/customers/", body, "race-pg-1")).toEqual({ ...answered, replayed: "true" });
        expect(await customers("Carrera SpA")).toBe(1);
      } finally {
        await blocker.end();
        await observer.end();
      }
    },
  );

  it("many at once: one runs, every other one is a 409 or the same answer replayed", async () => {
    const body = chileanCustomer({ name: "Multitud SpA" });
    const results = await Promise.all(Array.from({ length: 8 }, () => post("/v1/customers/", body, "crowd-1")));
    expect(await customers("Multitud SpA")).toBe(1);
    const created = results.filter((r) => r.status === 201);
    expect(created.filter((r) => r.replayed === null)).toHaveLength(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of results.filter((r) => r.status !== 201))
      expect(r).toMatchObject({ status: 409, body: { error: { code: "invalid_state" } } });
    // on PGlite (one connection) keyed requests run one after the other: every later one replays
    if (TEST_DB === "pglite") expect(created).toHaveLength(8);
  });
});

describe("the request transaction", () => {
  it(
    "services' transactions join it as savepoints: a failed one is undone alone; afterCommit work runs after the " +
      "commit only",
    async () => {
      const name = (n: string) => ({
        id: `cus_savepoint${n}00000000000000`.slice(0, 28),
        organizationId: s.orgs.acme,
        testMode: true,
        name: `Savepoint ${n}`,
      });
      const ran: string[] = [];
      await runInTransaction(s.database.prisma, { maxWait: 10_000, timeout: 30_000 }, async (db) => {
        await db.customer.create({ data: name("A") });
        await expect(
          db.$transaction(async (tx) => {
            await tx.customer.create({ data: name("B") });
            throw new Error("service failed");
          }),
        ).rejects.toThrow("service failed");
        // nested: a service calling another one's transaction inside its own
        await db.$transaction(async (tx) =>
          (tx as unknown as typeof db).$transaction(async (inner) => inner.customer.create({ data: name("C") })),
        );
        await afterCommit(db, async (base) => {
          ran.push(`after commit: ${await base.customer.count({ where: { name: { startsWith: "Savepoint " } } })}`);
        });
        expect(ran).toEqual([]);
      });
      expect(ran).toEqual(["after commit: 2"]);
      expect(
        (
          await s.database.prisma.customer.findMany({
            where: { name: { startsWith: "Savepoint " } },
            orderBy: { name: "asc" },
          })
        ).map((c) => c.name),
      ).toEqual(["Savepoint A", "Savepoint C"]);

      await expect(
        runInTransaction(s.database.prisma, { maxWait: 10_000, timeout: 30_000 }, async (db) => {
          await db.customer.create({ data: name("D") });
          await afterCommit(db, async () => void ran.push("never"));
          throw new Error("request failed");
        }),
      ).rejects.toThrow("request failed");
      expect(ran).toEqual(["after commit: 2"]);
      expect(await customers("Savepoint D")).toBe(0);
    },
  );

  it("a keyed reminder sends its mail after the commit, once; its replay sends nothing", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const invoice = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL33", lines: [{ name: "A", quantity: 1, amount: 1000 }] },
      })
    ).body.id;
    smtp.received.length = 0;
    const body = { subject: "Recordatorio con llave", recipient: ["pagos@cliente.cl"], message: "Hola", invoice };
    const first = await post("/v1/reminders/messages/", body, "remind-1");
    expect(first.status).toBe(201);
    // answered inside the transaction, before the first attempt: the stored answer says pending
    expect(first.body.delivery).toMatchObject({ status: "pending", attempts: 1 });
    expect(smtp.received.map((m) => m.parsed.subject)).toEqual(["Recordatorio con llave"]);
    const row = await s.database.prisma.outboxMessage.findFirstOrThrow({ where: { reminderId: first.body.id } });
    expect(row).toMatchObject({ status: "sent", attempts: 1 });
    expect(await post("/v1/reminders/messages/", body, "remind-1")).toEqual({ ...first, replayed: "true" });
    expect(smtp.received).toHaveLength(1);
  });

  it(
    "a charge rolled back after the gateway call is asked again with the same attempt id, and " + "recorded once",
    async () => {
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
      const payment = (
        await s.rest("POST", "/v1/payments/", {
          body: { customer, amount: 2500, currency: "CLP", description: "reintento" },
        })
      ).body.id;
      const source = (
        await s.rest("POST", "/v1/sources/", { body: { gateway: "test", customer, data: { token: "tok_visa" } } })
      ).body.id;
      const gateway = findGateway("test", ["test"]) as Required<PaymentGateway>;
      const charge = vi.spyOn(gateway, "charge");
      try {
        // recording the gateway's answer fails (after the gateway charged): the request is a 500
        await s.database.prisma.$executeRawUnsafe(
          `CREATE TRIGGER test_fail BEFORE UPDATE ON "Payment" FOR EACH ROW WHEN (NEW."status" = 'succeeded') ` +
            `EXECUTE ` +
            `FUNCTION test_fail()`,
        );
        const failed = await post(`/v1/payments/${payment}/authorize/`, { source }, "charge-1");
        expect(failed.status).toBe(500);
        expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: payment } })).toBe(0);
        expect((await s.database.prisma.payment.findUniqueOrThrow({ where: { id: payment } })).status).toBe(
          "requires_payment_method",
        );

        await s.database.prisma.$executeRawUnsafe(`DROP TRIGGER test_fail ON "Payment"`);
        const paid = await post(`/v1/payments/${payment}/authorize/`, { source }, "charge-1");
        expect(paid.status).toBe(200);
        expect(paid.body.status).toBe("succeeded");
        const attempt = derivedId("chg", `${payment}/1`);
        expect(charge.mock.calls.map(([request]) => request.chargeId)).toEqual([attempt, attempt]);
        const charges = await s.database.prisma.paymentCharge.findMany({ where: { paymentId: payment } });
        expect(charges.map((c) => [c.id, c.attempt, c.status, c.reference])).toEqual([
          [attempt, 1, "succeeded", `test_${attempt}`],
        ]);
        expect(await post(`/v1/payments/${payment}/authorize/`, { source }, "charge-1")).toEqual({
          ...paid,
          replayed: "true",
        });
        expect(charge).toHaveBeenCalledTimes(2);
      } finally {
        charge.mockRestore();
      }
    },
  );
});
