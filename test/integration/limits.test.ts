/**
 * Bounded requests and hardening (docs/limits.md): GraphQL document limits and cost refused before
 * anything runs, nodes(ids:) at most 100, the time budget of queries, per-key and failed-auth rate
 * limits (429 with Retry-After in each surface's error shape), security headers on every kind of
 * answer, CORS off by default and by allow-list, /metrics and /readyz's detail behind the token,
 * no field suggestions. Limits are set small per server so nothing depends on timing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import {
  chileanCustomer,
  startTestServer,
  statementTable,
  TEST_METRICS_TOKEN,
  type TestServer,
} from "../helpers/server.js";
import { createApiKey, revokeApiKey } from "../../src/services/api-keys.js";
import { cloneTemplate } from "../helpers/databases.js";
import { createDatabase } from "../../src/infra/database.js";
import { createLogger } from "../../src/infra/logger.js";
import { createApp } from "../../src/server.js";

async function graphql(url: string, query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const codes = (body: any): string[] => (body.errors ?? []).map((e: any) => e.extensions?.code);

describe("GraphQL limits", () => {
  let s: TestServer;
  let invoice: string;
  beforeAll(async () => {
    s = await startTestServer();
    const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
    const created = await s.rest("POST", "/v1/invoices/", {
      body: { customer: customer.body.id, document: "CL33", lines: [{ name: "Plan", quantity: 1, amount: 1000 }] },
    });
    expect(created.status).toBe(201);
    invoice = created.body.id;
  });
  afterAll(async () => s?.close());

  it(
    "refuse the 500-alias PDF query and the 2000-alias node query with query_too_complex before any " +
      "database query",
    async () => {
      const pdfs = Array.from(
        { length: 500 },
        (_, i) => `a${i}: node(id: "${invoice}") { ... on Invoice { pdf } }`,
      ).join(" ");
      const nodes = Array.from({ length: 2000 }, (_, i) => `a${i}: node(id: "${invoice}") { id }`).join(" ");
      for (const query of [`{ ${pdfs} }`, `{ ${nodes} }`]) {
        s.queries.length = 0;
        const res = await s.graphql(query);
        expect(res.body.data).toBeUndefined();
        expect(codes(res.body)).toEqual(["query_too_complex"]);
        expect(res.body.errors[0].message).toMatch(/^Token limit of 1000 exceeded/);
        expect(s.queries).toEqual([]); // not even the API key was looked up
      }
    },
  );

  it(
    "refuse too many aliases, too deep a selection, too many directives and too high a cost, each with " + "its reason",
    async () => {
      const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(" ");
      // __typename is in armor's allow-list: aliases of a real field count
      const aliased = Array.from({ length: 31 }, (_, i) => `a${i}: node(id: "x") { id }`).join(" ");
      let deep = "id";
      for (let i = 0; i < 11; i++) deep = `customer { invoices(first: 1) { edges { node { ${deep} } } } }`;
      const directives = Array.from({ length: 21 }, () => "@include(if: true)").join(" ");
      const pdf = (alias: string) => `${alias}: node(id: "${invoice}") { ... on Invoice { pdf } }`;
      const cases: [string, RegExp][] = [
        [`{ ${aliased} }`, /^Aliases limit of 30 exceeded, found 31/],
        [`{ invoices(first: 1) { edges { node { ${deep} } } } }`, /^Query depth limit of 10 exceeded/],
        [`{ node(id: "x") { id ${directives} } }`, /^Directives limit of 20 exceeded, found 21/],
        [`{ ${pdf("a")} ${pdf("b")} ${pdf("c")} }`, /^The query costs 3003, more than the limit of 3000/],
        [`{ invoices(first: 5) { edges { node { pdf } } } }`, /^The query costs \d+, more than the limit of 3000/],
        [
          `{ a: invoices(first: 100) { edges { node { id lines { id } } } } b: invoices(first: 100) { edges { node { ` +
            `id lines { id } } } } }`,
          /^The query reads up to 1200 rows, more than the limit of 1000/,
        ],
      ];
      expect((await s.graphql(`{ ${aliases} }`)).body.errors).toBeUndefined();
      for (const [query, message] of cases) {
        s.queries.length = 0;
        const res = await s.graphql(query);
        expect(res.body.data).toBeUndefined();
        expect(res.body.errors, JSON.stringify(res.body)).toContainEqual(
          expect.objectContaining({
            message: expect.stringMatching(message),
            extensions: expect.objectContaining({ code: "query_too_complex" }),
          }),
        );
        expect(s.queries.filter((q) => !q.startsWith("ApiKey."))).toEqual([]);
      }
    },
  );

  it(
    "run an ordinary page of 50 invoices with their payments (3,001 when scalars cost 1), and refuse a sixth exact " +
      "totalCount",
    async () => {
      const page = `{ invoices(first: 50, where: { status: { equals: draft } }) { edges { node {
      id number date dueDate status subtotal tax total amountDue note metadata created
      payments { id date paymentDate amount status description metadata created updated } } } } }`;
      const ok = await s.graphql(page);
      expect(ok.body.errors).toBeUndefined();
      expect(ok.body.data.invoices.edges.map((e: any) => e.node.id)).toEqual([invoice]);
      const counts = (n: number) =>
        `{ ${Array.from({ length: n }, (_, i) => `c${i}: invoices(first: 0) { totalCount }`).join(" ")} }`;
      const five = await s.graphql(counts(5));
      expect(five.body.errors).toBeUndefined();
      expect(five.body.data.c4.totalCount).toBe(1);
      s.queries.length = 0;
      const six = await s.graphql(counts(6));
      expect(codes(six.body)).toEqual(["query_too_complex"]);
      expect(six.body.errors[0].message).toMatch(/^The query costs 3006, more than the limit of 3000/);
      expect(s.queries).toEqual([]);
    },
  );

  it("render two PDFs in one request", async () => {
    const res = await s.graphql(
      `{ a: node(id: "${invoice}") { ... on Invoice { pdf } } b: node(id: "${invoice}") { ... on Invoice { pdf } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    for (const alias of ["a", "b"])
      expect(Buffer.from(res.body.data[alias].pdf, "base64").subarray(0, 5).toString()).toBe("%PDF-");
  });

  it("take at most 100 ids in nodes(ids:), as literals or variables", async () => {
    const ids = (n: number) =>
      Array.from({ length: n }, (_, i) => (i === 0 ? invoice : `inv_${String(i).padStart(24, "0")}`));
    const ok = await s.graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: ids(100) });
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.nodes).toHaveLength(100);
    expect(ok.body.data.nodes[0]).toEqual({ id: invoice });
    const over = await s.graphql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: ids(101) });
    expect(over.body.errors).toEqual([
      expect.objectContaining({
        message: "ids: at most 100 ids per request (got 101)",
        extensions: { code: "validation_error", fields: { ids: ["at most 100 ids per request (got 101)"] } },
      }),
    ]);
    const literal = await s.graphql(
      `{ nodes(ids: [${ids(101)
        .map((id) => `"${id}"`)
        .join(",")}]) { id } }`,
    );
    expect(codes(literal.body)).toEqual(["validation_error"]);
  });

  it("the REST adapter still reads lists and PDFs through the same limits", async () => {
    // the costliest documents of the adapter (nested lists under a page of 100), at the largest page
    for (const path of [
      "/v1/subscriptions/?page_size=100",
      "/v1/products/?page_size=100",
      "/v1/customers/?page_size=100",
    ]) {
      const list = await s.rest("GET", path);
      expect(list.status, list.text).toBe(200);
    }
    expect((await s.rest("GET", "/v1/customers/?page_size=100")).body.count).toBe(1);
    const pdf = await s.rest("GET", `/v1/invoices/${invoice}/pdf/`);
    expect(pdf.status, pdf.text).toBe(200);
    expect(Buffer.from(pdf.body.file, "base64").subarray(0, 5).toString()).toBe("%PDF-");
  });

  it("show no field suggestions, with or without a key", async () => {
    for (const headers of [{}, { authorization: `Bearer ${s.keys.acme}` }] as Record<string, string>[]) {
      const res = await graphql(s.url, "{ customers { edges { node { nme } } } }", headers);
      expect(codes(res.body)).toEqual(["validation_error"]);
      expect(res.body.errors[0].message).toBe('Cannot query field "nme" on type "Customer".');
      expect(JSON.stringify(res.body)).not.toContain("Did you mean");
    }
  });
});

describe("time budget of a query", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ settings: { graphqlTimeBudgetMs: 0 } });
  });
  afterAll(async () => s?.close());

  it("stops a query past its budget with request_timeout (503 on REST) and leaves mutations whole", async () => {
    const res = await s.graphql("{ customers { totalCount edges { node { id } } } }");
    expect(res.body).toEqual({
      data: null,
      errors: [expect.objectContaining({ extensions: { code: "request_timeout" } })],
    });
    expect(res.body.errors[0].message).toMatch(/^The query ran longer than its time budget of 0 ms/);
    const rest = await s.rest("GET", "/v1/customers/");
    expect([rest.status, rest.body.error.code]).toEqual([503, "request_timeout"]);
    const created = await s.graphql(
      `mutation { createCustomer(input: { name: "Cliente SpA", country: "CL" }) { id name } }`,
    );
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.createCustomer.name).toBe("Cliente SpA");
    expect(await s.database.prisma.customer.count({ where: { id: created.body.data.createCustomer.id } })).toBe(1);
  });
});

describe("rate limits", () => {
  let s: TestServer;
  let proxied: TestServer;
  let brief: TestServer;
  beforeAll(async () => {
    [s, proxied, brief] = await Promise.all([
      startTestServer({
        settings: {
          rateLimitRequests: 3,
          rateLimitWindowSeconds: 3600,
          rateLimitBurst: 2,
          authFailureLimit: 3,
          authFailureWindowSeconds: 3600,
        },
      }),
      startTestServer({ settings: { authFailureLimit: 2, authFailureWindowSeconds: 3600, trustProxy: true } }),
      startTestServer({ settings: { authFailureLimit: 2, authFailureWindowSeconds: 1 } }),
    ]);
  });
  afterAll(async () => Promise.all([s?.close(), proxied?.close(), brief?.close()]));

  it(
    "give a key its rate and burst, then 429 rate_limited with Retry-After on /v1 and /graphql; other " + "keys go on",
    async () => {
      for (let i = 0; i < 5; i++) expect((await s.rest("GET", "/v1/customers/")).status).toBe(200);
      const res = await fetch(`${s.url}/v1/customers/`, { headers: { authorization: `Bearer ${s.keys.acme}` } });
      expect(res.status).toBe(429);
      const retryAfter = Number(res.headers.get("retry-after"));
      // the burst bucket refills within a minute (docs/limits.md), so that is when a request may succeed again
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await res.json()).toEqual({
        error: { code: "rate_limited", message: `Too many requests for this API key; retry in ${retryAfter} s.` },
      });
      const gql = await graphql(s.url, "{ customers { totalCount } }", { authorization: `Bearer ${s.keys.acme}` });
      expect(gql.status).toBe(429);
      expect(Number(gql.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(gql.body).toEqual({
        errors: [
          {
            message: expect.stringMatching(/^Too many requests for this API key/),
            extensions: { code: "rate_limited" },
          },
        ],
      });
      expect((await s.rest("GET", "/v1/customers/", { key: s.keys.other })).status).toBe(200);
      // health answers are not limited
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    },
  );

  it(
    "refuse an address's bad keys with 429 after its failed authentications, without reading the database for " +
      "each, and serve its valid keys on /v1 and /graphql, cached or not",
    async () => {
      const wrong = (url: string, forwardedFor?: string) =>
        fetch(`${url}/v1/customers/`, {
          headers: {
            authorization: "Bearer sk_test_wrongwrongwrongwrongwrong",
            ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
          },
        });
      const v1 = (key: string) => fetch(`${s.url}/v1/customers/`, { headers: { authorization: `Bearer ${key}` } });
      const keyReads = () => s.statements.filter((sql) => statementTable(sql) === "ApiKey").length;
      expect((await v1(s.keys.other)).status).toBe(200); // now in the key cache
      // no key at all is not a failed authentication (4 here, 1 below: the address's request bucket holds 5)
      for (let i = 0; i < 4; i++) expect((await fetch(`${s.url}/v1/customers/`)).status).toBe(401);
      for (let i = 0; i < 3; i++) expect((await wrong(s.url, `10.0.0.${i}`)).status).toBe(401);

      // past the limit: a bad key is refused before it runs; the live keys' index is read once, then nothing
      s.statements.length = 0;
      const refused = await wrong(s.url, "10.0.0.99");
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(3000);
      expect((await refused.json()).error).toEqual({
        code: "rate_limited",
        message: expect.stringMatching(/^Too many failed authentications from this address/),
      });
      for (const authorization of ["Bearer sk_test_otherwrongotherwrong", "Bearer not-a-key", "Basic YTpi"]) {
        const res = await fetch(`${s.url}/v1/customers/`, { headers: { authorization } });
        expect([res.status, Number(res.headers.get("retry-after")) > 3000]).toEqual([429, true]);
        await res.arrayBuffer();
      }
      const badGql = await graphql(s.url, "{ customers { totalCount } }", { authorization: "Bearer sk_test_nope" });
      expect([badGql.status, codes(badGql.body)]).toEqual([429, ["rate_limited"]]);
      expect(Number(badGql.headers.get("retry-after"))).toBeGreaterThan(3000);
      expect(keyReads()).toBe(1);

      // a valid key is served: one the cache holds, and one this process has not read yet (the index has it)
      expect((await v1(s.keys.other)).status).toBe(200);
      const cachedGql = await graphql(s.url, "{ customers { totalCount } }", {
        authorization: `Bearer ${s.keys.other}`,
      });
      expect([cachedGql.status, cachedGql.body.errors]).toEqual([200, undefined]);
      expect((await v1(s.keys.acmeLive)).status).toBe(200);
      const liveGql = await graphql(s.url, "{ customers { totalCount } }", {
        authorization: `Bearer ${s.keys.acmeLive}`,
      });
      expect([liveGql.status, liveGql.body.errors]).toEqual([200, undefined]);
      // a request without a key is answered as usual
      expect((await fetch(`${s.url}/v1/customers/`)).status).toBe(401);
      // valid keys neither reset nor fed the count: bad keys are still refused until the same window ends
      const still = await wrong(s.url);
      expect(still.status).toBe(429);
      expect(Number(still.headers.get("retry-after"))).toBeLessThanOrEqual(retryAfter);
      expect(Number(still.headers.get("retry-after"))).toBeGreaterThan(retryAfter - 60);

      // a key revoked in this process: refused at once (the index is read again); one expired or revoked
      // elsewhere while the index holds it: read once, refused, then refused without a read
      const revoked = await createApiKey(s.database.prisma, {
        organizationId: s.orgs.other,
        email: "r@other.cl",
        mode: "test",
      });
      const expired = await createApiKey(s.database.prisma, {
        organizationId: s.orgs.other,
        email: "e@other.cl",
        mode: "test",
      });
      await revokeApiKey(s.database.prisma, revoked.id);
      expect((await v1(revoked.key)).status).toBe(429);
      await s.database.prisma.apiKey.update({
        where: { id: expired.id },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      s.statements.length = 0;
      expect((await v1(expired.key)).status).toBe(429);
      expect(keyReads()).toBe(1);
      s.statements.length = 0;
      expect((await v1(expired.key)).status).toBe(429);
      const revokedGql = await graphql(s.url, "{ customers { totalCount } }", {
        authorization: `Bearer ${revoked.key}`,
      });
      expect([revokedGql.status, codes(revokedGql.body)]).toEqual([429, ["rate_limited"]]);
      expect(keyReads()).toBe(0);

      // behind a trusted proxy the address is X-Forwarded-For's last entry
      for (let i = 0; i < 2; i++) expect((await wrong(proxied.url, "203.0.113.7, 198.51.100.1")).status).toBe(401);
      expect((await wrong(proxied.url, "203.0.113.7, 198.51.100.1")).status).toBe(429);
      const sameAddress = await fetch(`${proxied.url}/v1/customers/`, {
        headers: { authorization: `Bearer ${proxied.keys.acme}`, "x-forwarded-for": "10.1.1.1, 198.51.100.1" },
      });
      expect(sameAddress.status).toBe(200);
      expect((await wrong(proxied.url, "198.51.100.1, 198.51.100.2")).status).toBe(401);
      const elsewhere = await fetch(`${proxied.url}/v1/customers/`, {
        headers: { authorization: `Bearer ${proxied.keys.acme}`, "x-forwarded-for": "198.51.100.1, 198.51.100.2" },
      });
      expect(elsewhere.status).toBe(200);
    },
  );

  it("lift the failed-authentication limit when its window ends", async () => {
    const wrong = () =>
      fetch(`${brief.url}/v1/customers/`, { headers: { authorization: "Bearer sk_test_wrongwrongwrongwrongwrong" } });
    // the window starts at the first failure: failures until one is refused (a slow machine may see a window end)
    let refused: Response | undefined;
    for (let i = 0; i < 10 && !refused; i++) {
      const res = await wrong();
      await res.arrayBuffer();
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(401);
    }
    expect(refused).toBeDefined();
    const retryAfter = Number(refused!.headers.get("retry-after"));
    expect(retryAfter).toBe(1);
    expect((await brief.rest("GET", "/v1/customers/")).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    expect((await wrong()).status).toBe(401);
  });
});

describe("hardening", () => {
  let s: TestServer;
  let open: TestServer;
  beforeAll(async () => {
    [s, open] = await Promise.all([
      startTestServer(),
      startTestServer({ settings: { corsOrigins: ["https://app.example.com"], metricsToken: undefined } }),
    ]);
  });
  afterAll(async () => Promise.all([s?.close(), open?.close()]));

  it(
    "sends the security headers on /v1, /graphql, /healthz, /readyz, /metrics, checkout and " + "unknown paths",
    async () => {
      const answers = await Promise.all([
        fetch(`${s.url}/v1/customers/`, { headers: { authorization: `Bearer ${s.keys.acme}` } }),
        fetch(`${s.url}/v1/customers/`),
        fetch(`${s.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"query":"{ __typename }"}',
        }),
        fetch(`${s.url}/healthz`),
        fetch(`${s.url}/readyz`),
        fetch(`${s.url}/metrics`),
        fetch(`${s.url}/checkout/unknown_token`),
        fetch(`${s.url}/nowhere`),
      ]);
      for (const res of answers) {
        expect(res.headers.get("x-content-type-options"), res.url).toBe("nosniff");
        expect(res.headers.get("x-frame-options")).toBe("DENY");
        expect(res.headers.get("referrer-policy")).toBe("no-referrer");
        expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
        await res.arrayBuffer();
      }
      expect(answers[0].headers.get("content-security-policy")).toBe(
        "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'none'",
      );
      const checkout = answers[6];
      expect(checkout.status).toBe(404);
      expect(checkout.headers.get("content-type")).toMatch(/^text\/html/);
      expect(checkout.headers.get("content-security-policy")).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri " +
          "'none'; " +
          "object-src 'none'",
      );
    },
  );

  it("answers no CORS by default and only the allow-listed origin when configured", async () => {
    const origin = { origin: "https://app.example.com" };
    const preflight = {
      ...origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type",
    };
    const plain = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { ...origin, "content-type": "application/json" },
      body: '{"query":"{ __typename }"}',
    });
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();
    const pre = await fetch(`${s.url}/graphql`, { method: "OPTIONS", headers: preflight });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-headers")).toBeNull();

    const allowed = await fetch(`${open.url}/v1/customers/`, {
      headers: { ...origin, authorization: `Bearer ${open.keys.acme}` },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(allowed.headers.get("access-control-allow-credentials")).toBeNull();
    const allowedPre = await fetch(`${open.url}/graphql`, { method: "OPTIONS", headers: preflight });
    expect(allowedPre.status).toBe(204);
    expect(allowedPre.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(allowedPre.headers.get("access-control-allow-headers")).toContain("Authorization");
    const other = await fetch(`${open.url}/v1/customers/`, {
      headers: { origin: "https://evil.example.com", authorization: `Bearer ${open.keys.acme}` },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const otherPre = await fetch(`${open.url}/graphql`, {
      method: "OPTIONS",
      headers: { ...preflight, origin: "https://evil.example.com" },
    });
    expect(otherPre.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("serves /metrics only with the token, and none at all without METRICS_TOKEN", async () => {
    const none = await fetch(`${s.url}/metrics`);
    expect([none.status, (await none.json()).error.code]).toEqual([401, "authentication_required"]);
    const wrong = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.keys.acme}` } });
    expect(wrong.status).toBe(401);
    await wrong.arrayBuffer();
    const right = await fetch(`${s.url}/metrics`, { headers: { authorization: `bearer ${TEST_METRICS_TOKEN}` } });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain("billing_http_requests_total");
    const off = await fetch(`${open.url}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
    expect([off.status, (await off.json()).error.code]).toEqual([404, "not_found"]);
  });

  it("/readyz tells anyone whether it is ready and only the token holder why not", async () => {
    expect(await (await fetch(`${s.url}/readyz`)).json()).toEqual({ status: "ready", detail: "ok" });
    // an app whose database is gone
    const { target, drop } = await cloneTemplate(inject("template"));
    const database = await createDatabase(target);
    const app = createApp({ database, logger: createLogger("silent"), settings: { metricsToken: TEST_METRICS_TOKEN } });
    await database.close();
    try {
      const anyone = await app.handle(new Request("http://localhost/readyz"));
      expect(anyone.status).toBe(503);
      expect(await anyone.json()).toEqual({ status: "not_ready", detail: "database unreachable" });
      const operator = await app.handle(
        new Request("http://localhost/readyz", { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } }),
      );
      expect(operator.status).toBe(503);
      expect((await operator.json()).detail).toMatch(/^database unreachable: ./);
    } finally {
      await app.close();
      await drop();
    }
  });
});

describe("the event loop during database queries", () => {
  it(
    "lets callbacks queued before a query (I/O, setImmediate) run before the query's rows are processed, in and out " +
      "of a transaction",
    async () => {
      const { target, drop } = await cloneTemplate(inject("template"));
      const database = await createDatabase(target);
      try {
        for (const run of [
          (sql: string) => database.prisma.$queryRawUnsafe(sql),
          (sql: string) => database.prisma.$transaction((tx) => tx.$queryRawUnsafe(sql)),
        ]) {
          const order: string[] = [];
          setImmediate(() => order.push("callback"));
          await run("SELECT 1 AS one").then(() => order.push("rows"));
          // PGlite answers in this thread without I/O: without the yield the rows would come first
          expect(order).toEqual(["callback", "rows"]);
        }
      } finally {
        await database.close();
        await drop();
      }
    },
  );
});
