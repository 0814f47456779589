/**
 * The operator's toolkit: the `api-key` commands (run in process against the test server's
 * database), key expiry, revocation and last use over real HTTP, /metrics' business series, and
 * /readyz through a database outage (PostgreSQL only).
 */
import net from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { chileanCustomer, startTestServer, TEST_METRICS_TOKEN, type TestServer } from "../helpers/server.js";
import { cloneTemplate, TEST_DB } from "../helpers/databases.js";
import { apiKeyCommands } from "../../src/cli/api-keys.js";
import { authenticate, createApiKey, hashKey } from "../../src/services/api-keys.js";
import { forgetApiKey } from "../../src/services/api-key-cache.js";
import { createDatabase, type Database } from "../../src/infra/database.js";
import { createApp, createHttpServer, listen, type App } from "../../src/server.js";
import { createLogger } from "../../src/infra/logger.js";
import { NotFoundError, ValidationError } from "../../src/domain/errors.js";

/** Runs `api-key <args>` in process; the database stays open (it is the server's), closes are counted. */
async function cli(
  database: Database,
  args: string[],
): Promise<{ out: string; notes: string; opened: number; closed: number }> {
  const chunks: string[] = [];
  const notes: string[] = [];
  let opened = 0;
  let closed = 0;
  const open = async (): Promise<Database> => {
    opened++;
    return { ...database, close: async () => void closed++ };
  };
  await apiKeyCommands({
    openDatabase: open,
    out: { write: (t: string) => chunks.push(t) },
    notes: { write: (t: string) => notes.push(t) },
    database: "the test database",
  }).parseAsync(args, { from: "user" });
  return { out: chunks.join(""), notes: notes.join(""), opened, closed };
}

async function cliError(database: Database, args: string[]): Promise<Error> {
  try {
    await cli(database, args);
  } catch (e) {
    return e as Error;
  }
  throw new Error(`api-key ${args.join(" ")} did not fail`);
}

const lastLine = (text: string) => text.trimEnd().split("\n").at(-1)!;

async function get(url: string, key: string) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

async function graphqlStatus(s: TestServer, key: string) {
  const res = await fetch(`${s.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: "{ customers(first: 1) { totalCount } }" }),
  });
  return { status: res.status, body: await res.json() };
}

async function metrics(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** Value of the series written exactly as `series` (name and labels in prom-client's order), or null. */
function sample(text: string, series: string): number | null {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

describe("api-key commands", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s?.close());

  it("creates a key with an expiry (00:00 UTC of the date), prints id and expires_at, and the key works", async () => {
    const run = await cli(s.database, [
      "create",
      "--organization",
      "Ops SpA",
      "--email",
      "ops@ops.cl",
      "--mode",
      "live",
      "--expires",
      "2099-01-01",
    ]);
    expect([run.opened, run.closed]).toEqual([1, 1]);
    const created = JSON.parse(lastLine(run.out));
    expect(Object.keys(created)).toEqual([
      "organization",
      "organization_name",
      "organization_created",
      "id",
      "key",
      "expires_at",
    ]);
    expect(created.organization).toMatch(/^org_/);
    expect([created.organization_name, created.organization_created]).toEqual(["Ops SpA", true]);
    expect(run.notes).toBe(
      `created the organization ${created.organization} "Ops SpA"\nwrote the key to the test database\n`,
    );
    expect(run.out).toBe(`${lastLine(run.out)}\n`);
    expect(created.id).toMatch(/^key_/);
    expect(created.key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(created.expires_at).toBe("2099-01-01T00:00:00.000Z");
    const row = await s.database.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect([
      row.organizationId,
      row.testMode,
      row.userEmail,
      row.expiresAt?.toISOString(),
      row.hash,
      row.prefix,
    ]).toEqual([
      created.organization,
      false,
      "ops@ops.cl",
      "2099-01-01T00:00:00.000Z",
      hashKey(created.key),
      created.key.slice(0, 12),
    ]);
    expect((await get(`${s.url}/v1/customers/`, created.key)).status).toBe(200);

    const iso = JSON.parse(
      lastLine(
        (
          await cli(s.database, [
            "create",
            "--organization",
            "Ops SpA",
            "--email",
            "ops@ops.cl",
            "--expires",
            "2099-06-30T09:00:00-04:00",
          ])
        ).out,
      ),
    );
    expect([iso.organization, iso.expires_at]).toEqual([created.organization, "2099-06-30T13:00:00.000Z"]);
    const never = JSON.parse(
      lastLine((await cli(s.database, ["create", "--organization", "Ops SpA", "--email", "ops@ops.cl"])).out),
    );
    expect(never.expires_at).toBeNull();
  });

  it("says when it joins an existing organization by name, and names one by id", async () => {
    const organizations = await s.database.prisma.organization.count();
    const ops = (await s.database.prisma.organization.findFirstOrThrow({ where: { name: "Ops SpA" } })).id;
    const byName = await cli(s.database, [
      "create",
      "--organization",
      "Ops SpA",
      "--email",
      "ops2@ops.cl",
      "--mode",
      "live",
    ]);
    const joined = JSON.parse(lastLine(byName.out));
    expect([joined.organization, joined.organization_name, joined.organization_created]).toEqual([
      ops,
      "Ops SpA",
      false,
    ]);
    expect(byName.notes).toBe(
      `joined the existing organization ${ops} "Ops SpA" (it has that name; pass --organization ${ops} to name it ` +
        `by id)\nwrote the key to the test database\n`,
    );

    const byId = await cli(s.database, ["create", "--organization", s.orgs.other, "--email", "ops2@other.cl"]);
    const other = JSON.parse(lastLine(byId.out));
    expect([other.organization, other.organization_name, other.organization_created]).toEqual([
      s.orgs.other,
      "Other Ltda",
      false,
    ]);
    expect(byId.notes).toBe(
      `joined the existing organization ${s.orgs.other} "Other Ltda"\nwrote the key to the test database\n`,
    );
    expect((await s.database.prisma.apiKey.findUniqueOrThrow({ where: { id: other.id } })).organizationId).toBe(
      s.orgs.other,
    );
    expect((await get(`${s.url}/v1/customers/`, other.key)).status).toBe(200);
    expect(await s.database.prisma.organization.count()).toBe(organizations);

    // an unknown id never creates an organization; a name two organizations share must be given as an id
    const keys = await s.database.prisma.apiKey.count();
    const unknown = await cliError(s.database, [
      "create",
      "--organization",
      "org_000000000000000000000000",
      "--email",
      "x@acme.cl",
    ]);
    expect([unknown instanceof NotFoundError, unknown.message]).toEqual([
      true,
      "No organization with id org_000000000000000000000000",
    ]);
    await s.database.prisma.organization.create({ data: { id: "org_twin00000000000000000001", name: "Twin SpA" } });
    await s.database.prisma.organization.create({ data: { id: "org_twin00000000000000000002", name: "Twin SpA" } });
    const twins = await cliError(s.database, ["create", "--organization", "Twin SpA", "--email", "x@twin.cl"]);
    expect(twins).toBeInstanceOf(ValidationError);
    expect(twins.message).toContain(
      '2 organizations are named "Twin SpA" (org_twin00000000000000000001, org_twin00000000000000000002): name one ' +
        "by its org_ id",
    );
    expect([await s.database.prisma.apiKey.count(), await s.database.prisma.organization.count()]).toEqual([
      keys,
      organizations + 2,
    ]);
    const twin = JSON.parse(
      lastLine(
        (await cli(s.database, ["create", "--organization", "org_twin00000000000000000002", "--email", "x@twin.cl"]))
          .out,
      ),
    );
    expect(twin.organization).toBe("org_twin00000000000000000002");
  });

  it("a new organization starts with settings of its own in both modes", async () => {
    const created = JSON.parse(
      lastLine((await cli(s.database, ["create", "--organization", "Nueva SpA", "--email", "ops@nueva.cl"])).out),
    );
    const rows = await s.database.prisma.organizationSettings.findMany({
      where: { organizationId: created.organization },
      orderBy: { testMode: "asc" },
    });
    expect(rows.map((r) => [r.testMode, r.businessName, r.taxId])).toEqual([
      [false, "Nueva SpA", null],
      [true, "Nueva SpA", null],
    ]);
  });

  it("takes the Bearer scheme in any case (RFC 7235), the key itself exactly", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
      const res = await fetch(`${s.url}/v1/customers/`, { headers: { authorization: `${scheme} ${s.keys.acme}` } });
      expect(res.status, scheme).toBe(200);
      const gql = await fetch(`${s.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `${scheme} ${s.keys.acme}` },
        body: JSON.stringify({ query: "{ customers(first: 1) { totalCount } }" }),
      });
      expect(gql.status, scheme).toBe(200);
    }
    for (const header of [
      `Basic ${s.keys.acme}`,
      `Bearer ${s.keys.acme.toUpperCase()}`,
      `Bearer${s.keys.acme}`,
      s.keys.acme,
    ]) {
      const res = await fetch(`${s.url}/v1/customers/`, { headers: { authorization: header } });
      expect(res.status, header).toBe(401);
    }
  });

  it("refuses a past or malformed --expires with one ValidationError and writes nothing", async () => {
    const before = await s.database.prisma.apiKey.count();
    const organizations = await s.database.prisma.organization.count();
    const past = await cliError(s.database, [
      "create",
      "--organization",
      "Late SpA",
      "--email",
      "ops@late.cl",
      "--expires",
      "2020-01-01",
    ]);
    expect(past).toBeInstanceOf(ValidationError);
    expect(past.message).toMatch(/^expires: must be in the future, got 2020-01-01T00:00:00\.000Z \(now /);
    const malformed = await cliError(s.database, [
      "create",
      "--organization",
      "Late SpA",
      "--email",
      "ops@late.cl",
      "--expires",
      "31-12-2099",
    ]);
    expect(malformed).toBeInstanceOf(ValidationError);
    expect(malformed.message).toBe(
      "expires: must be a date yyyy-mm-dd or an ISO 8601 timestamp with an offset (2026-12-01T12:00:00Z), got " +
        '"31-12-2099"',
    );
    expect([await s.database.prisma.apiKey.count(), await s.database.prisma.organization.count()]).toEqual([
      before,
      organizations,
    ]);
  });

  it("lists keys with organization, mode, e-mail and times, never a key or its hash", async () => {
    const rows = await s.database.prisma.apiKey.findMany({
      include: { organization: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    const json = await cli(s.database, ["list", "--json"]);
    expect(json.closed).toBe(1);
    const listed = json.out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(listed).toEqual(
      rows.map((r) => ({
        id: r.id,
        prefix: r.prefix,
        organization: { id: r.organizationId, name: r.organization.name },
        mode: r.testMode ? "test" : "live",
        email: r.userEmail,
        created_at: r.createdAt.toISOString(),
        last_used_at: r.lastUsedAt?.toISOString() ?? null,
        expires_at: r.expiresAt?.toISOString() ?? null,
        revoked_at: r.revokedAt?.toISOString() ?? null,
      })),
    );
    const table = (await cli(s.database, ["list"])).out;
    const lines = table.trimEnd().split("\n");
    expect(lines[0].split(/\s{2,}/)).toEqual([
      "ID",
      "PREFIX",
      "ORGANIZATION",
      "NAME",
      "MODE",
      "EMAIL",
      "CREATED",
      "LAST USED",
      "EXPIRES",
      "REVOKED",
    ]);
    expect(lines).toHaveLength(rows.length + 1);
    expect(lines[1]).toContain(rows[0].id);
    for (const secret of [s.keys.acme, s.keys.acmeLive, s.keys.other, ...rows.map((r) => r.hash)]) {
      expect(table).not.toContain(secret);
      expect(json.out).not.toContain(secret);
    }

    const byName = (await cli(s.database, ["list", "--json", "--organization", "Acme SpA"])).out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    const byId = (await cli(s.database, ["list", "--json", "--organization", s.orgs.acme])).out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(byName.map((k) => [k.organization.id, k.email])).toEqual([
      [s.orgs.acme, "ops@acme.cl"],
      [s.orgs.acme, "live@acme.cl"],
    ]);
    expect(byId).toEqual(byName);
    const unknown = await cliError(s.database, ["list", "--organization", "Nobody SpA"]);
    expect([unknown instanceof NotFoundError, unknown.message]).toEqual([true, "No organization with id Nobody SpA"]);
  });

  it(
    "revokes a key: 401 at once on /graphql and /v1; a second revoke keeps the first time; an unknown id is " +
      "one error",
    async () => {
      const created = await createApiKey(s.database.prisma, {
        organizationName: "Acme SpA",
        email: "temp@acme.cl",
        mode: "test",
      });
      expect((await get(`${s.url}/v1/customers/`, created.key)).status).toBe(200);
      expect((await graphqlStatus(s, created.key)).status).toBe(200);

      const first = await cli(s.database, ["revoke", created.id]);
      expect(first.closed).toBe(1);
      expect(first.notes).toBe("revoked in the test database\n");
      const row = await s.database.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } });
      expect(row.revokedAt).not.toBeNull();
      expect(first.out).toBe(
        `${created.id} (${created.key.slice(0, 12)}…) revoked at ${row.revokedAt!.toISOString()}\n`,
      );
      const rest = await get(`${s.url}/v1/customers/`, created.key);
      expect([rest.status, rest.body.error.code, rest.body.error.message]).toEqual([
        401,
        "authentication_required",
        "Unknown or revoked API key",
      ]);
      const gql = await graphqlStatus(s, created.key);
      expect([gql.status, gql.body.errors[0].extensions.code]).toEqual([401, "authentication_required"]);

      const again = await cli(s.database, ["revoke", created.id]);
      expect(again.notes).toBe("");
      expect(again.out).toBe(
        `${created.id} (${created.key.slice(0, 12)}…) was already revoked at ${row.revokedAt!.toISOString()}\n`,
      );
      expect((await s.database.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } })).revokedAt).toEqual(
        row.revokedAt,
      );

      const unknown = await cliError(s.database, ["revoke", "key_doesnotexist"]);
      expect([unknown instanceof NotFoundError, unknown.message]).toEqual([
        true,
        "No API key with id key_doesnotexist",
      ]);
      // the other keys still work
      expect((await get(`${s.url}/v1/customers/`, s.keys.acme)).status).toBe(200);
    },
  );

  it("answers 401 saying expired once a key's expiry has passed", async () => {
    const created = await createApiKey(s.database.prisma, {
      organizationName: "Acme SpA",
      email: "soon@acme.cl",
      mode: "test",
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    expect((await get(`${s.url}/v1/customers/`, created.key)).status).toBe(200);
    const expiredAt = new Date(Date.now() - 1_000);
    await s.database.prisma.apiKey.update({ where: { id: created.id }, data: { expiresAt: expiredAt } });
    // the server holds the key in its cache (API_KEY_CACHE_TTL_SECONDS); a change made in the
    // database directly is seen once that entry ends, which this stands for (the expiry of a
    // cached key itself is checked on every request: statement-counts.test.ts)
    forgetApiKey(created.id);
    const rest = await get(`${s.url}/v1/customers/`, created.key);
    expect([rest.status, rest.body.error.code, rest.body.error.message]).toEqual([
      401,
      "authentication_required",
      `API key expired at ${expiredAt.toISOString()}`,
    ]);
    const gql = await graphqlStatus(s, created.key);
    expect([gql.status, gql.body.errors[0].message]).toEqual([401, `API key expired at ${expiredAt.toISOString()}`]);
  });

  it("writes lastUsedAt on first use and then at most once a minute, with one conditional UPDATE", async () => {
    const created = await createApiKey(s.database.prisma, {
      organizationName: "Acme SpA",
      email: "usage@acme.cl",
      mode: "test",
    });
    const lastUsed = async () =>
      (await s.database.prisma.apiKey.findUniqueOrThrow({ where: { id: created.id } })).lastUsedAt;
    expect(await lastUsed()).toBeNull();

    const t0 = Date.now();
    expect((await get(`${s.url}/v1/customers/`, created.key)).status).toBe(200);
    const first = await lastUsed();
    expect(first!.getTime()).toBeGreaterThanOrEqual(t0 - 5);
    expect(first!.getTime()).toBeLessThanOrEqual(Date.now());
    expect((await get(`${s.url}/v1/customers/`, created.key)).status).toBe(200);
    expect(await lastUsed()).toEqual(first);

    const thirtySecondsAgo = new Date(Date.now() - 30_000);
    await s.database.prisma.apiKey.update({ where: { id: created.id }, data: { lastUsedAt: thirtySecondsAgo } });
    expect((await graphqlStatus(s, created.key)).status).toBe(200);
    expect(await lastUsed()).toEqual(thirtySecondsAgo);

    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await s.database.prisma.apiKey.update({ where: { id: created.id }, data: { lastUsedAt: twoMinutesAgo } });
    forgetApiKey(created.id); // the server reads the key again, as once its cached entry ends
    const t1 = Date.now();
    expect((await graphqlStatus(s, created.key)).status).toBe(200);
    expect((await lastUsed())!.getTime()).toBeGreaterThanOrEqual(t1 - 5);

    // the statements authenticate runs: one SELECT when fresh, SELECT + one UPDATE when stale
    const statements: string[] = [];
    const recorded = s.database.prisma.$extends({
      query: {
        async $allOperations({ model, operation, args, query }) {
          statements.push(model ? `${model}.${operation}` : operation);
          return query(args);
        },
      },
    }) as unknown as Database["prisma"];
    const auth = await authenticate(recorded, `Bearer ${created.key}`);
    expect([auth.apiKeyId, auth.userEmail, auth.testMode]).toEqual([created.id, "usage@acme.cl", true]);
    expect(statements).toEqual(["ApiKey.findUnique"]);
    statements.length = 0;
    const later = new Date(Date.now() + 61_000);
    await authenticate(recorded, `Bearer ${created.key}`, later);
    expect(statements).toEqual(["ApiKey.findUnique", "$executeRaw"]);
    expect(await lastUsed()).toEqual(later);
  });
});

describe("/metrics business series", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s?.close());

  it("counts finalized documents by kind, type and mode", async () => {
    expect(
      sample(await metrics(s.url), 'billing_documents_finalized_total{kind="invoice",document="CL33",mode="test"}'),
    ).toBeNull();
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const invoice = await s.rest("POST", "/v1/invoices/", {
      body: { customer, document: "CL33", lines: [{ name: "Consultoría", quantity: 1, amount: 1000 }] },
    });
    expect(invoice.status).toBe(201);
    const draftOnly = await metrics(s.url);
    expect(
      sample(draftOnly, 'billing_documents_finalized_total{kind="invoice",document="CL33",mode="test"}'),
    ).toBeNull();
    const finalized = await s.rest("GET", `/v1/invoices/${invoice.body.id}/finalize/`);
    expect(finalized.body.status).toBe("finalized");

    const text = await metrics(s.url);
    expect(text).toContain(
      "# HELP billing_documents_finalized_total Documents finalized since the database was created",
    );
    expect(text).toContain("# TYPE billing_documents_finalized_total counter");
    expect(text.split("\n").filter((l) => l.startsWith("billing_documents_finalized_total"))).toEqual([
      'billing_documents_finalized_total{kind="invoice",document="CL33",mode="test"} 1',
    ]);
    expect(sample(text, "billing_database_up")).toBe(1);
  });

  it("reports the SII queue, its oldest pending age, the outbox and charge attempts with exact values", async () => {
    const prisma = s.database.prisma;
    const now = Date.now();
    const submission = (n: number, status: string, testMode: boolean, ageMs: number) => ({
      id: `sub_metrics_${n}`,
      organizationId: s.orgs.acme,
      testMode,
      documentKind: "invoice",
      documentId: `inv_metrics_${n}`,
      dteType: 33,
      folio: n,
      dteFile: `dte_${n}.xml`,
      status,
      createdAt: new Date(now - ageMs),
    });
    await prisma.siiSubmission.createMany({
      data: [
        submission(1, "pending", true, 120_000),
        submission(2, "pending", true, 10_000),
        submission(3, "pending", false, 30_000),
        submission(4, "sent", true, 500_000),
        submission(5, "done", true, 900_000),
      ],
    });
    const message = (n: number, status: string) => ({
      id: `msg_metrics_${n}`,
      organizationId: s.orgs.acme,
      recipients: ["a@b.cl"],
      subject: "s",
      body: "b",
      status,
    });
    await prisma.outboxMessage.createMany({
      data: [
        message(1, "pending"),
        message(2, "pending"),
        message(3, "failed"),
        message(4, "sent"),
        message(5, "kept"),
      ],
    });
    await prisma.payment.create({
      data: {
        id: "pay_metrics_1",
        organizationId: s.orgs.acme,
        testMode: true,
        amount: 1000,
        currencyId: "CLP",
        date: new Date("2026-11-24"),
        userEmail: "ops@acme.cl",
        status: "succeeded",
      },
    });
    await prisma.paymentCharge.createMany({
      data: [
        {
          id: "ch_metrics_1",
          paymentId: "pay_metrics_1",
          organizationId: s.orgs.acme,
          attempt: 1,
          gateway: "test",
          amount: 1000,
          currencyId: "CLP",
          status: "declined",
        },
        {
          id: "ch_metrics_2",
          paymentId: "pay_metrics_1",
          organizationId: s.orgs.acme,
          attempt: 2,
          gateway: "test",
          amount: 1000,
          currencyId: "CLP",
          status: "declined",
        },
        {
          id: "ch_metrics_3",
          paymentId: "pay_metrics_1",
          organizationId: s.orgs.acme,
          attempt: 3,
          gateway: "test",
          amount: 1000,
          currencyId: "CLP",
          status: "succeeded",
        },
      ],
    });
    const before = Date.now();
    const text = await metrics(s.url);
    const after = Date.now();
    const exact = (series: string) => sample(text, series);
    expect([
      exact('billing_sii_submissions_queued{status="pending",mode="test"}'),
      exact('billing_sii_submissions_queued{status="pending",mode="live"}'),
      exact('billing_sii_submissions_queued{status="sent",mode="test"}'),
      exact('billing_sii_submissions_queued{status="sent",mode="live"}'),
      exact('billing_outbox_messages{status="pending"}'),
      exact('billing_outbox_messages{status="failed"}'),
      exact('billing_payment_charge_attempts{gateway="test",status="declined"}'),
      exact('billing_payment_charge_attempts{gateway="test",status="succeeded"}'),
    ]).toEqual([2, 1, 1, 0, 2, 1, 2, 1]);
    const age = exact("billing_sii_oldest_pending_age_seconds")!;
    expect(age).toBeGreaterThanOrEqual((before - (now - 120_000)) / 1000 - 0.01);
    expect(age).toBeLessThanOrEqual((after - (now - 120_000)) / 1000 + 0.01);
    expect(text).toContain(
      "# HELP billing_sii_oldest_pending_age_seconds Age in seconds of the oldest SII submission still pending upload",
    );

    // the queue drains: gauges follow the database
    await prisma.siiSubmission.updateMany({
      where: { id: { in: ["sub_metrics_1", "sub_metrics_2", "sub_metrics_3"] } },
      data: { status: "done" },
    });
    await prisma.outboxMessage.updateMany({ where: { status: "pending" }, data: { status: "sent" } });
    const drained = await metrics(s.url);
    expect([
      sample(drained, 'billing_sii_submissions_queued{status="pending",mode="test"}'),
      sample(drained, "billing_sii_oldest_pending_age_seconds"),
      sample(drained, 'billing_outbox_messages{status="pending"}'),
      sample(drained, 'billing_outbox_messages{status="failed"}'),
    ]).toEqual([0, 0, 0, 1]);
  });

  it(
    "reports the pool on PostgreSQL and leaves it out on PGlite; default metrics keep the event " + "loop lag",
    async () => {
      const text = await metrics(s.url);
      expect(text).toContain("nodejs_eventloop_lag_seconds ");
      if (TEST_DB === "postgres") {
        const inUse = sample(text, 'billing_db_pool_connections{state="in_use"}');
        const idle = sample(text, 'billing_db_pool_connections{state="idle"}');
        expect(inUse).not.toBeNull();
        expect(idle! + inUse!).toBeGreaterThanOrEqual(1);
        expect(idle! + inUse!).toBeLessThanOrEqual(10);
        expect(sample(text, "billing_db_pool_waiting_requests")).toBe(0);
      } else {
        expect(text).not.toContain("billing_db_pool");
      }
    },
  );
});

describe("/metrics of the billing run in the server", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ billingRunIntervalMs: 300 });
  });
  afterAll(async () => s?.close());

  it("counts the cycles and invoices the interval billed and times its rounds", async () => {
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const product = (
      await s.rest("POST", "/v1/products/", {
        body: { name: "Nube", plans: [{ name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" }] },
      })
    ).body;
    const sub = await s.rest("POST", "/v1/subscriptions/", {
      body: { customer, lines: [{ plan: product.plans[0].id, quantity: 1 }] },
    });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    let text = "";
    for (let i = 0; i < 100; i++) {
      text = await metrics(s.url);
      if (sample(text, "billing_run_cycles_billed_total") === 1) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(sample(text, "billing_run_cycles_billed_total")).toBe(1);
    expect(sample(text, "billing_run_invoices_total")).toBe(1);
    expect(sample(text, "billing_run_failures_total")).toBe(0);
    expect(sample(text, 'billing_run_rounds_total{outcome="error"}')).toBe(0);
    expect(sample(text, 'billing_run_rounds_total{outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "billing_run_duration_seconds_count")).toBe(
      sample(text, 'billing_run_rounds_total{outcome="ok"}'),
    );
    expect(sample(text, "billing_run_duration_seconds_sum")).toBeGreaterThan(0);
    const invoice = await s.database.prisma.invoice.findFirstOrThrow({ where: { subscriptionId: sub.body.id } });
    expect(
      sample(
        text,
        `billing_documents_finalized_total{kind="invoice",document="${invoice.documentTypeId}",mode="test"}`,
      ),
    ).toBe(1);
  });
});

/** A TCP proxy in front of PostgreSQL that can be stopped (every connection cut) and started again on the same port. */
class Proxy {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  port = 0;
  constructor(private readonly upstream: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.upstream.port, this.upstream.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe.skipIf(TEST_DB !== "postgres")(
  "/readyz through a database outage (PostgreSQL only: PGlite runs in process, there is no connection to cut)",
  () => {
    let proxy: Proxy;
    let database: Database;
    let app: App;
    let server: Server;
    let url: string;
    let drop: () => Promise<void>;
    let key: string;

    beforeAll(async () => {
      const clone = await cloneTemplate(inject("template"));
      drop = clone.drop;
      if (clone.target.kind !== "postgres") throw new Error("expected a PostgreSQL target");
      const direct = new URL(clone.target.url);
      proxy = new Proxy({ host: direct.hostname, port: Number(direct.port || 5432) });
      await proxy.start();
      const viaProxy = new URL(clone.target.url);
      viaProxy.hostname = "127.0.0.1";
      viaProxy.port = String(proxy.port);
      database = await createDatabase({ kind: "postgres", url: viaProxy.toString() });
      key = (await createApiKey(database.prisma, { organizationName: "Acme SpA", email: "ops@acme.cl", mode: "test" }))
        .key;
      app = createApp({
        database,
        logger: createLogger(process.env.TEST_LOG_LEVEL ?? "silent"),
        settings: { metricsToken: TEST_METRICS_TOKEN },
      });
      server = createHttpServer(app);
      url = await listen(server, 0, "127.0.0.1");
    });
    afterAll(async () => {
      if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
      await app?.close();
      await database?.close();
      await proxy?.stop();
      await drop?.();
    });

    async function readyz(): Promise<{ status: number; body: any; ms: number }> {
      const started = Date.now();
      // with the token /readyz gives the detail (the driver's error); docs/limits.md
      const res = await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
      return { status: res.status, body: await res.json(), ms: Date.now() - started };
    }

    /** Polls /readyz until it answers `status`, for at most `withinMs`; each probe must answer within 2.5 s. */
    async function until(status: number, withinMs: number) {
      const deadline = Date.now() + withinMs;
      let last = await readyz();
      while (last.status !== status && Date.now() < deadline) {
        expect(last.ms).toBeLessThan(2_500);
        await new Promise((r) => setTimeout(r, 100));
        last = await readyz();
      }
      expect(last.ms).toBeLessThan(2_500);
      return last;
    }

    it("answers 503 while the database is unreachable and 200 again once it is back, without a restart", async () => {
      const up = await readyz();
      expect([up.status, up.body]).toEqual([200, { status: "ready", detail: "ok" }]);
      expect((await get(`${url}/v1/customers/`, key)).status).toBe(200);

      await proxy.stop();
      const down = await until(503, 5_000);
      expect(down.status).toBe(503);
      expect(down.body.status).toBe("not_ready");
      expect(down.body.detail).toMatch(/^database unreachable: /);
      const scrape = await metrics(url);
      expect(sample(scrape, "billing_database_up")).toBe(0);

      await proxy.start();
      const back = await until(200, 10_000);
      expect([back.status, back.body]).toEqual([200, { status: "ready", detail: "ok" }]);
      expect((await get(`${url}/v1/customers/`, key)).status).toBe(200);
      expect(sample(await metrics(url), "billing_database_up")).toBe(1);
    });
  },
);
