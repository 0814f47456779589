/**
 * The dashboard's members over real HTTP (docs/dashboard.md "Members and sign-in"): an invitation made by the CLI,
 * accepted (password policy, one use, expiry), sign-in (same 401 for a wrong password and an unknown e-mail,
 * failures limited per e-mail and per client address), /graphql with the session cookie (CSRF header, mode header,
 * the member's e-mail as documents' `user`), the roles (viewer reads only, finance no settings, admin everything),
 * sign-out and the 12-hour idle expiry, and the admins' member management.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { memberCommands } from "../../src/cli/members.js";
import { DEFAULT_SETTINGS, type AppSettings, type Config } from "../../src/infra/config.js";
import { inviteMember } from "../../src/services/members.js";
import { hashKey } from "../../src/services/api-keys.js";
import type { Database } from "../../src/infra/database.js";
import { createSmtpMailer } from "../../src/infra/mail.js";
import { createLogger } from "../../src/infra/logger.js";
import { startSmtpServer } from "../helpers/smtp.js";

let s: TestServer;
let customerId: string;
beforeAll(async () => {
  // TRUST_PROXY: each test signs in from its own address (X-Forwarded-For), so failure counts stay apart
  s = await startTestServer({ settings: { trustProxy: true } });
  const res = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
  expect(res.status).toBe(201);
  customerId = res.body.id;
});
afterAll(async () => s?.close());

const PASSWORD = "correct horse battery staple";
const codeOf = (body: { errors?: { extensions?: { code?: string } }[] }) => body.errors?.[0]?.extensions?.code;

/** Runs `member <args>` in process on the test server's database; the link is its output's last line. */
async function cli(database: Database, args: string[], settings: Partial<AppSettings> = {}) {
  const out: string[] = [];
  const notes: string[] = [];
  await memberCommands({
    openDatabase: async () => ({ ...database, close: async () => {} }),
    out: { write: (t: string) => out.push(t) },
    notes: { write: (t: string) => notes.push(t) },
    database: "the test database",
    settings: async () => ({
      config: { port: 3000 } as Config,
      settings: { ...DEFAULT_SETTINGS, publicUrl: "https://billing.acme.example", ...settings },
    }),
  }).parseAsync(args, { from: "user" });
  return { out: out.join(""), notes: notes.join("") };
}

const tokenOf = (link: string) => link.trim().split("/").at(-1)!;

/** The session a browser holds after signing in or accepting an invitation. */
interface Session {
  cookie: string;
  csrf: string;
  setCookies: string[];
}

async function post(path: string, body: unknown, address = "10.0.0.1", headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": address, ...headers },
    body: JSON.stringify(body),
  });
  const setCookies = res.headers.getSetCookie();
  const value = (name: string) =>
    setCookies
      .find((c) => c.startsWith(`${name}=`))
      ?.split(";")[0]
      .slice(name.length + 1) ?? "";
  return {
    status: res.status,
    body: await res.json(),
    headers: res.headers,
    session: { cookie: value("dashboard_session"), csrf: value("dashboard_csrf"), setCookies } as Session,
  };
}

const accept = (token: string, password: unknown) => post(`/dashboard/api/invites/${token}`, { password });
const signIn = (email: string, password: string, address = "10.0.0.1") =>
  post("/dashboard/api/sign-in", { email, password }, address);

/** A GraphQL call with the session cookie, its CSRF header (unless null) and a mode header (unless absent). */
async function memberGraphql(
  session: Session,
  query: string,
  options: { csrf?: string | null; mode?: string; variables?: Record<string, unknown> } = {},
) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    cookie: `dashboard_session=${session.cookie}; dashboard_csrf=${session.csrf}`,
  };
  const csrf = options.csrf === undefined ? session.csrf : options.csrf;
  if (csrf !== null) headers["x-dashboard-csrf"] = csrf;
  if (options.mode !== undefined) headers["x-dashboard-mode"] = options.mode;
  const res = await fetch(`${s.url}/graphql`, {
    method: "POST",
    headers,
    body: JSON.stringify({ query, variables: options.variables ?? {} }),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** A member of acme with `role`, invited through the service and signed in through its invitation. */
async function signedInMember(email: string, role: "admin" | "finance" | "viewer"): Promise<Session> {
  const invited = await inviteMember(
    { prisma: s.database.prisma, settings: DEFAULT_SETTINGS, baseUrl: s.url, now: new Date() },
    s.orgs.acme,
    { email, role },
  );
  const res = await accept(tokenOf(invited.link), PASSWORD);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.session;
}

const CREATE_INVOICE = `mutation($customer: ID!) {
  createInvoice(input: { customer: $customer, lines: [{ name: "Consultoría", quantity: "2", amount: "1000" }] }) {
    id user } }`;

describe("an invitation from the CLI", () => {
  let link: string;
  it("prints the link under PUBLIC_URL and queues no e-mail without SMTP", async () => {
    const { out, notes } = await cli(s.database, [
      "invite",
      "--organization",
      "Acme SpA",
      "--email",
      " Ana@ACME.cl ",
      "--role",
      "admin",
      "--name",
      "Ana Rojas",
    ]);
    link = out.trim();
    expect(link).toMatch(/^https:\/\/billing\.acme\.example\/dashboard\/invite\/[0-9A-Za-z]{40}$/);
    expect(notes).toContain("invited ana@acme.cl");
    expect(notes).toContain("SMTP_URL is not set");
    const member = await s.database.prisma.member.findFirstOrThrow({ where: { email: "ana@acme.cl" } });
    expect(member).toMatchObject({ organizationId: s.orgs.acme, name: "Ana Rojas", role: "admin", passwordHash: null });
    const invite = await s.database.prisma.memberInvite.findFirstOrThrow({ where: { memberId: member.id } });
    // only the hash is stored; 7 days
    expect(invite.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(invite.tokenHash).not.toContain(tokenOf(link));
    expect(invite.expiresAt.getTime() - invite.createdAt.getTime()).toBe(7 * 24 * 3600 * 1000);
  });

  it("serves the dashboard's page at the link (its set-password form: dashboard-browser.test.ts)", async () => {
    const res = await fetch(`${s.url}/dashboard/invite/${tokenOf(link)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await res.text()).toMatch(
      /<script type="module" crossorigin src="\/dashboard\/assets\/[\w-]+\.js"><\/script>/,
    );
  });

  it("answers the page's other paths without a 500: unknown files, other methods, a malformed link", async () => {
    const missing = await fetch(`${s.url}/dashboard/assets/index-nope.js`);
    expect([missing.status, (await missing.json()).error.code]).toEqual([404, "not_found"]);
    const traversal = await fetch(`${s.url}/dashboard/assets/..%2F..%2Fpackage.json`);
    expect(traversal.status).toBe(404);
    const posted = await fetch(`${s.url}/dashboard`, { method: "POST" });
    expect([posted.status, posted.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    // a token that is not even valid percent-encoding is an unknown link
    const malformed = await accept("%ZZ", PASSWORD);
    expect([malformed.status, malformed.body.error.code]).toEqual([401, "authentication_required"]);
  });

  it("refuses a password under 12 characters with the field, without spending the link", async () => {
    const res = await accept(tokenOf(link), "short pass");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(res.body.error.fields.password[0]).toMatch(/at least 12 characters/);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it("accepts it once: sets an argon2id password and signs in with HttpOnly, SameSite=Strict cookies", async () => {
    const res = await accept(tokenOf(link), PASSWORD);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.member).toMatchObject({ email: "ana@acme.cl", role: "admin", organization: s.orgs.acme });
    const [session, csrf] = res.session.setCookies;
    expect(session).toMatch(/^dashboard_session=[0-9A-Za-z]{40}; Path=\/; SameSite=Strict; HttpOnly$/);
    expect(csrf).toMatch(/^dashboard_csrf=[0-9A-Za-z]{40}; Path=\/; SameSite=Strict$/);
    const member = await s.database.prisma.member.findFirstOrThrow({ where: { email: "ana@acme.cl" } });
    expect(member.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const row = await s.database.prisma.memberSession.findFirstOrThrow({ where: { memberId: member.id } });
    expect(row.tokenHash).not.toContain(res.session.cookie);
    expect(row.csrfHash).not.toContain(res.session.csrf);
    // a second use is refused
    const again = await accept(tokenOf(link), PASSWORD);
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe("authentication_required");
  });

  it("refuses an expired link and an unknown one alike", async () => {
    const { out } = await cli(s.database, [
      "invite",
      "--organization",
      s.orgs.acme,
      "--email",
      "late@acme.cl",
      "--role",
      "viewer",
    ]);
    await s.database.prisma.memberInvite.updateMany({
      where: { member: { email: "late@acme.cl" } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const expired = await accept(tokenOf(out), PASSWORD);
    const unknown = await accept("x".repeat(40), PASSWORD);
    expect(expired.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(expired.body).toEqual(unknown.body);
  });

  it("queues the e-mail through the outbox when SMTP is configured, and refuses a member twice", async () => {
    const { out, notes } = await cli(
      s.database,
      ["invite", "--organization", "Acme SpA", "--email", "mail@acme.cl", "--role", "finance"],
      { smtpUrl: "smtp://127.0.0.1:1" },
    );
    expect(notes).toContain("also e-mailed to mail@acme.cl");
    const message = await s.database.prisma.outboxMessage.findFirstOrThrow({ where: { kind: "member_invite" } });
    expect(message).toMatchObject({ organizationId: s.orgs.acme, recipients: ["mail@acme.cl"], status: "pending" });
    expect(message.body).toContain(out.trim());
    await expect(
      cli(s.database, ["invite", "--organization", "Acme SpA", "--email", "ana@acme.cl", "--role", "viewer"]),
    ).rejects.toThrow(/already a member/);
    await expect(
      cli(s.database, ["invite", "--organization", "Acme SpA", "--email", "x@acme.cl", "--role", "owner"]),
    ).rejects.toThrow(/role: must be one of admin, finance, viewer/);
  });
});

describe("an invitation made in a request (GraphQL's inviteMember)", () => {
  it("e-mails the link right after commit when the request has a mailer", async () => {
    const smtp = await startSmtpServer();
    const mailer = createSmtpMailer(smtp.url);
    try {
      const invited = await inviteMember(
        {
          prisma: s.database.prisma,
          settings: { ...DEFAULT_SETTINGS, smtpUrl: smtp.url, mailFrom: "billing@acme.example" },
          baseUrl: s.url,
          now: new Date(),
          mailer,
          logger: createLogger("silent"),
        },
        s.orgs.acme,
        { email: "mailed@acme.cl", name: "Mailed", role: "viewer" },
      );
      expect(invited.emailQueued).toBe(true);
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0].envelope.to).toEqual(["mailed@acme.cl"]);
      expect(smtp.received[0].parsed.subject).toBe("You are invited to Acme SpA's billing dashboard");
      expect(smtp.received[0].parsed.text).toContain(invited.link);
      const message = await s.database.prisma.outboxMessage.findFirstOrThrow({
        where: { kind: "member_invite", recipients: { has: "mailed@acme.cl" } },
      });
      expect(message.status).toBe("sent");
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});

describe("signing in", () => {
  it("signs in with the password; a wrong password and an unknown e-mail get the same 401", async () => {
    const ok = await signIn("ANA@acme.cl", PASSWORD, "10.1.0.1");
    expect(ok.status).toBe(200);
    expect(ok.session.cookie).toMatch(/^[0-9A-Za-z]{40}$/);
    const wrong = await signIn("ana@acme.cl", "not the password!", "10.1.0.1");
    const unknown = await signIn("nobody@acme.cl", "not the password!", "10.1.0.1");
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error.message).toBe("Wrong e-mail or password");
    // a missing field is a 400 naming it
    const missing = await post("/dashboard/api/sign-in", { email: "ana@acme.cl" }, "10.1.0.1");
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.error.fields)).toEqual(["password"]);
    // `organization` picks the membership: another organization's has no such member
    const sign = (organization: string) =>
      post("/dashboard/api/sign-in", { email: "ana@acme.cl", password: PASSWORD, organization }, "10.1.0.1");
    expect((await sign(s.orgs.acme)).status).toBe(200);
    expect((await sign(s.orgs.other)).status).toBe(401);
    const malformed = await sign("Acme SpA");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.fields).toEqual({ organization: ["must be an organization id (org_...)"] });
  });

  it("answers a wrong password and an unknown e-mail in similar time (a decoy hash is verified)", async () => {
    const median = async (email: string, address: string) => {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        expect((await signIn(email, "not the password!", address)).status).toBe(401);
        times.push(performance.now() - started);
      }
      return times.sort((a, b) => a - b)[1];
    };
    const wrong = await median("ana@acme.cl", "10.2.0.1");
    const unknown = await median("nobody@acme.cl", "10.2.0.2");
    expect(unknown).toBeGreaterThan(wrong / 3);
    expect(wrong).toBeGreaterThan(unknown / 3);
    // ana's failures are forgotten when she signs in
    expect((await signIn("ana@acme.cl", PASSWORD, "10.2.0.3")).status).toBe(200);
  });

  it("limits failures per e-mail: 429 with Retry-After after 5, even with the right password", async () => {
    await signedInMember("limited@acme.cl", "viewer");
    for (let i = 0; i < 5; i++)
      expect((await signIn("limited@acme.cl", "wrong password!", `10.3.0.${i}`)).status).toBe(401);
    const refused = await signIn("limited@acme.cl", PASSWORD, "10.3.0.9");
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(800);
    // another e-mail from the same addresses still signs in
    expect((await signIn("ana@acme.cl", PASSWORD, "10.3.0.1")).status).toBe(200);
  });

  it("limits failures per client address: 429 after 20, whatever the e-mail", async () => {
    for (let i = 0; i < 20; i++)
      expect((await signIn(`guess${i}@acme.cl`, "wrong password!", "10.4.0.1")).status).toBe(401);
    const refused = await signIn("ana@acme.cl", PASSWORD, "10.4.0.1");
    expect(refused.status).toBe(429);
    expect((await signIn("ana@acme.cl", PASSWORD, "10.4.0.2")).status).toBe(200);
  });
});

describe("/graphql with a member's session", () => {
  let admin: Session;
  beforeAll(async () => {
    admin = (await signIn("ana@acme.cl", PASSWORD, "10.5.0.1")).session;
  });

  it("reads as the member, in test mode unless the mode header says live", async () => {
    const me = await memberGraphql(admin, "{ me { email name role invitationPending lastSignInAt } }");
    expect(me.body.errors).toBeUndefined();
    expect(me.body.data.me).toMatchObject({
      email: "ana@acme.cl",
      name: "Ana Rojas",
      role: "admin",
      invitationPending: false,
    });
    const test = await memberGraphql(admin, "{ customers { totalCount } }");
    expect(test.body.data.customers.totalCount).toBe(1);
    const live = await memberGraphql(admin, "{ customers { totalCount } }", { mode: "live" });
    expect(live.body.data.customers.totalCount).toBe(0);
    const bad = await memberGraphql(admin, "{ customers { totalCount } }", { mode: "production" });
    expect(codeOf(bad.body)).toBe("validation_error");
    expect(bad.body.errors[0].extensions.fields).toEqual({
      "x-dashboard-mode": ['must be test or live (got "production")'],
    });
    expect(bad.body.data ?? null).toBeNull();
  });

  it("records the member's e-mail as the document's user", async () => {
    const res = await memberGraphql(admin, CREATE_INVOICE, { variables: { customer: customerId } });
    expect(res.body.errors, JSON.stringify(res.body)).toBeUndefined();
    expect(res.body.data.createInvoice.user).toBe("ana@acme.cl");
  });

  it("refuses a request without the CSRF header, or with another value (403)", async () => {
    for (const csrf of [null, "x".repeat(40)]) {
      const res = await memberGraphql(admin, CREATE_INVOICE, { csrf, variables: { customer: customerId } });
      expect(res.status).toBe(403);
      expect(codeOf(res.body)).toBe("permission_denied");
    }
    expect(await s.database.prisma.invoice.count({ where: { userEmail: "ana@acme.cl" } })).toBe(1);
  });

  it("lets a viewer read but not write", async () => {
    const viewer = await signedInMember("viewer@acme.cl", "viewer");
    const read = await memberGraphql(viewer, "{ customers { totalCount } me { role } }");
    expect(read.body.data).toEqual({ customers: { totalCount: 1 }, me: { role: "viewer" } });
    const invoice = await s.rest("POST", "/v1/invoices/", {
      body: { customer: customerId, lines: [{ name: "Soporte", amount: 500 }] },
    });
    const finalize = await memberGraphql(viewer, `mutation { finalizeInvoice(id: "${invoice.body.id}") { id } }`);
    expect(codeOf(finalize.body)).toBe("permission_denied");
    expect(finalize.body.errors[0].message).toBe(
      "Mutation.finalizeInvoice is not allowed to the viewer role (queries only)",
    );
    const draft = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id: invoice.body.id } });
    expect(draft.status).toBe("draft");
  });

  it("lets finance write documents but not settings or members; an admin does both", async () => {
    const finance = await signedInMember("finance@acme.cl", "finance");
    const created = await memberGraphql(finance, CREATE_INVOICE, { variables: { customer: customerId } });
    expect(created.body.data.createInvoice.user).toBe("finance@acme.cl");
    const branding = `mutation { updateOrganizationBranding(input: { businessName: "Acme" }) { businessName } }`;
    const invite = `mutation { inviteMember(email: "new@acme.cl", role: viewer) { inviteUrl } }`;
    for (const query of [branding, invite, "{ members { email } }"]) {
      const res = await memberGraphql(finance, query);
      expect(codeOf(res.body), query).toBe("permission_denied");
    }
    expect((await memberGraphql(admin, branding)).body.data.updateOrganizationBranding.businessName).toBe("Acme");
    const invited = await memberGraphql(admin, invite);
    expect(invited.body.data.inviteMember.inviteUrl).toMatch(new RegExp(`^${s.url}/dashboard/invite/\\w{40}$`));
    const members = await memberGraphql(admin, "{ members { email role invitationPending } }");
    expect(members.body.data.members).toContainEqual({ email: "new@acme.cl", role: "viewer", invitationPending: true });
  });

  it("keeps the portal's fields to the portal", async () => {
    const res = await memberGraphql(admin, "{ portal { locale } }");
    expect(codeOf(res.body)).toBe("permission_denied");
    expect(res.body.errors[0].message).toBe("Query.portal needs a customer-portal credential");
  });

  it("changes roles and removes members, never the last admin", async () => {
    const list = (await memberGraphql(admin, "{ members { id email role } }")).body.data.members as {
      id: string;
      email: string;
    }[];
    const id = (email: string) => list.find((m) => m.email === email)!.id;
    const demote = await memberGraphql(
      admin,
      `mutation { updateMemberRole(id: "${id("ana@acme.cl")}", role: viewer) { role } }`,
    );
    expect(codeOf(demote.body)).toBe("invalid_state");
    const promoted = await memberGraphql(
      admin,
      `mutation { updateMemberRole(id: "${id("viewer@acme.cl")}", role: finance) { role } }`,
    );
    expect(promoted.body.data.updateMemberRole.role).toBe("finance");
    const finance = (await signIn("finance@acme.cl", PASSWORD, "10.6.0.1")).session;
    expect((await memberGraphql(finance, "{ me { role } }")).status).toBe(200);
    const removed = await memberGraphql(admin, `mutation { removeMember(id: "${id("finance@acme.cl")}") { email } }`);
    expect(removed.body.data.removeMember.email).toBe("finance@acme.cl");
    // the removed member's session opens nothing any more; the invoice keeps its user
    expect((await memberGraphql(finance, "{ me { role } }")).status).toBe(401);
    expect(await s.database.prisma.invoice.count({ where: { userEmail: "finance@acme.cl" } })).toBe(1);
    const unknown = await memberGraphql(admin, `mutation { removeMember(id: "mem_unknown") { email } }`);
    expect(codeOf(unknown.body)).toBe("not_found");
  });
});

describe("ending a session", () => {
  it("signs out over HTTP: the same cookie then gets 401", async () => {
    const session = (await signIn("ana@acme.cl", PASSWORD, "10.7.0.1")).session;
    expect((await memberGraphql(session, "{ me { email } }")).status).toBe(200);
    const out = await post("/dashboard/api/sign-out", {}, "10.7.0.1", {
      cookie: `dashboard_session=${session.cookie}`,
      "x-dashboard-csrf": session.csrf,
    });
    expect(out.status).toBe(200);
    expect(out.session.setCookies[0]).toMatch(/^dashboard_session=; Path=\/; Max-Age=0; SameSite=Strict; HttpOnly$/);
    const after = await memberGraphql(session, "{ me { email } }");
    expect(after.status).toBe(401);
    expect(codeOf(after.body)).toBe("authentication_required");
  });

  it("signs out through GraphQL, for a viewer too", async () => {
    const viewer = await signedInMember("viewer2@acme.cl", "viewer");
    const out = await memberGraphql(viewer, "mutation { signOutMember { email } }");
    expect(out.body.data.signOutMember.email).toBe("viewer2@acme.cl");
    expect(out.headers.getSetCookie()[0]).toMatch(/^dashboard_session=; .*Max-Age=0/);
    expect((await memberGraphql(viewer, "{ me { email } }")).status).toBe(401);
    // an API key has no member session to end
    const key = await s.graphql("mutation { signOutMember { email } }");
    expect(codeOf(key.body)).toBe("permission_denied");
  });

  it("ends a session idle for 12 hours; a request before that extends it", async () => {
    const session = (await signIn("ana@acme.cl", PASSWORD, "10.7.0.3")).session;
    const member = await s.database.prisma.member.findFirstOrThrow({ where: { email: "ana@acme.cl" } });
    const row = await s.database.prisma.memberSession.findFirstOrThrow({
      where: { memberId: member.id, revokedAt: null },
      orderBy: { createdAt: "desc" },
    });
    const hour = 3600_000;
    // used 11 hours ago: still open, and the request moves its expiry 12 hours ahead
    await s.database.prisma.memberSession.update({
      where: { id: row.id },
      data: { lastSeenAt: new Date(Date.now() - 11 * hour), expiresAt: new Date(Date.now() + hour) },
    });
    expect((await memberGraphql(session, "{ me { email } }")).status).toBe(200);
    const touched = await s.database.prisma.memberSession.findUniqueOrThrow({ where: { id: row.id } });
    expect(touched.expiresAt.getTime()).toBeGreaterThan(Date.now() + 11 * hour);
    // used 12 hours and a second ago: ended
    const lastSeenAt = new Date(Date.now() - 12 * hour - 1000);
    await s.database.prisma.memberSession.update({
      where: { id: row.id },
      data: { lastSeenAt, expiresAt: new Date(lastSeenAt.getTime() + 12 * hour) },
    });
    expect((await memberGraphql(session, "{ me { email } }")).status).toBe(401);
  });
});

describe("API keys through GraphQL (the dashboard's Developers page)", () => {
  const LIST = `{ apiKeys { id prefix mode email revokedAt } }`;
  const CREATE = `mutation($mode: ApiKeyMode!) { createApiKey(mode: $mode) { key apiKey { id prefix mode email } } }`;
  const REVOKE = `mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`;
  const keyCount = () => s.database.prisma.apiKey.count();

  it("lists, creates (the key shown once) and revokes the organization's keys; a key stops at once", async () => {
    const listed = await s.graphql(LIST);
    const own = listed.body.data.apiKeys.find((k: { prefix: string }) => s.keys.acme.startsWith(k.prefix));
    expect(own).toMatchObject({ mode: "test", revokedAt: null });
    // the other organization's keys are not there
    const others = await s.database.prisma.apiKey.findMany({ where: { organizationId: s.orgs.other } });
    expect(listed.body.data.apiKeys.map((k: { id: string }) => k.id)).not.toContain(others[0].id);

    const created = await s.graphql(CREATE, { mode: "test" });
    const { key, apiKey } = created.body.data.createApiKey;
    expect(key).toMatch(/^sk_test_/);
    expect(apiKey).toMatchObject({ prefix: key.slice(0, 12), mode: "test" });
    const row = await s.database.prisma.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } });
    // only the hash is stored
    expect([row.organizationId, row.testMode, row.hash]).toEqual([s.orgs.acme, true, hashKey(key)]);
    expect((await s.rest("GET", "/v1/customers/", { key })).status).toBe(200);

    const revoked = await s.graphql(REVOKE, { id: apiKey.id });
    expect(revoked.body.data.revokeApiKey.revokedAt).toEqual(expect.any(String));
    expect((await s.rest("GET", "/v1/customers/", { key })).status).toBe(401);
    // again: nothing changes
    const again = await s.graphql(REVOKE, { id: apiKey.id });
    expect(again.body.data.revokeApiKey.revokedAt).toBe(revoked.body.data.revokeApiKey.revokedAt);
  });

  it("refuses the other mode to an API key, other organizations' keys, and members who are not admins", async () => {
    const before = await keyCount();
    expect(codeOf((await s.graphql(CREATE, { mode: "live" })).body)).toBe("permission_denied");
    const past = await s.graphql(`mutation { createApiKey(mode: test, expiresAt: "2020-01-01T00:00:00Z") { key } }`);
    expect([codeOf(past.body), Object.keys(past.body.errors[0].extensions.fields)]).toEqual([
      "validation_error",
      ["expiresAt"],
    ]);
    const liveKey = await s.database.prisma.apiKey.findFirstOrThrow({
      where: { organizationId: s.orgs.acme, testMode: false },
    });
    expect(codeOf((await s.graphql(REVOKE, { id: liveKey.id })).body)).toBe("permission_denied");
    const otherKey = await s.database.prisma.apiKey.findFirstOrThrow({ where: { organizationId: s.orgs.other } });
    expect(codeOf((await s.graphql(REVOKE, { id: otherKey.id })).body)).toBe("not_found");
    expect((await s.database.prisma.apiKey.findUniqueOrThrow({ where: { id: otherKey.id } })).revokedAt).toBeNull();
    for (const role of ["finance", "viewer"] as const) {
      const session = await signedInMember(`keys-${role}@acme.cl`, role);
      expect(codeOf((await memberGraphql(session, LIST)).body)).toBe("permission_denied");
      const create = await memberGraphql(session, CREATE, { variables: { mode: "test" } });
      expect(codeOf(create.body)).toBe("permission_denied");
    }
    expect(await keyCount()).toBe(before);

    // an admin member makes keys of both modes, acting for the member's e-mail
    const admin = await signedInMember("keys-admin@acme.cl", "admin");
    const live = await memberGraphql(admin, CREATE, { variables: { mode: "live" } });
    expect(live.body.data.createApiKey.apiKey).toMatchObject({ mode: "live", email: "keys-admin@acme.cl" });
    expect(live.body.data.createApiKey.key).toMatch(/^sk_live_/);
    expect(await keyCount()).toBe(before + 1);
  });
});
