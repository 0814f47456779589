/**
 * The customer portal's safety over HTTP (docs/customer-portal.md "Security model", docs/limits.md): a
 * portal credential is rate limited like an API key, on its own bucket; the portal's pages are
 * limited per client address; and neither the session key nor the credential or its CSRF token
 * reaches the logs, which the test reads line by line at debug level.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { openLink, portalGraphql, sessionKey, type PortalCookies } from "../helpers/portal.js";

const lines: string[] = [];
const logger = pino(
  { level: "debug", base: undefined },
  new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  }),
);

let s: TestServer;
let key: string;
let cookies: PortalCookies;
beforeAll(async () => {
  // 3 requests an hour plus a burst of 2 per key, credential or address: 5 in all
  s = await startTestServer({
    logger,
    settings: { rateLimitRequests: 3, rateLimitWindowSeconds: 3600, rateLimitBurst: 2 },
  });
  const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Cliente Límite SpA" }) });
  expect(customer.status).toBe(201);
  key = (await sessionKey(s, customer.body.id)).key;
  cookies = await openLink(s, key); // the address's first page request
  expect(cookies.response.status).toBe(200);
});
afterAll(async () => s?.close());

describe("the portal's limits", () => {
  it("refuses a portal credential its sixth request with 429 rate_limited; API keys go on", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await portalGraphql(s, cookies, "{ portal { customer { name } } }");
      expect([res.status, res.body.data?.portal.customer.name]).toEqual([200, "Cliente Límite SpA"]);
    }
    const refused = await portalGraphql(s, cookies, "{ portal { customer { name } } }");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.body).toEqual({
      errors: [{ message: expect.stringMatching(/^Too many requests/), extensions: { code: "rate_limited" } }],
    });
    // the credential's bucket is its own: another key of the organization still answers
    expect((await s.rest("GET", "/v1/customers/", { key: s.keys.other })).status).toBe(200);
  });

  it("limits the portal's pages per client address", async () => {
    // the link opened in beforeAll was the first of five
    for (let i = 0; i < 4; i++) expect((await fetch(`${s.url}/portal/`)).status).not.toBe(429);
    const refused = await fetch(`${s.url}/portal/${key}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // a refused link sets no credential
    expect(refused.headers.getSetCookie()).toEqual([]);
  });

  it("never logs the session key, the credential or its CSRF token", () => {
    const requests = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === "request");
    // the lines are there: the link's request, with its key redacted
    expect(requests.map((entry) => entry.path)).toContain("/portal/[redacted]");
    expect(requests.filter((entry) => entry.path === "/graphql").length).toBeGreaterThanOrEqual(5);
    for (const secret of [key, cookies.credential, cookies.csrf]) {
      expect(secret.length).toBeGreaterThan(20);
      expect(lines.filter((line) => line.includes(secret))).toEqual([]);
    }
  });
});
