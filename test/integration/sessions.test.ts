/**
 * Customer sessions over real HTTP (spec "Session", "Sessions"; docs/customer-sessions.md): the
 * key (shown once, stored hashed), expiry, tenancy and mode, the branding snapshot in `settings`,
 * and bad input writing nothing.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customer: string;
beforeAll(async () => {
  s = await startTestServer();
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const sha256 = (v: string) => createHash("sha256").update(v).digest("hex");
const sessionCount = () => s.database.prisma.customerSession.count();

async function createSession(body: Record<string, unknown> = {}, key?: string) {
  const res = await s.rest("POST", "/v1/customer_base/sessions/", {
    key,
    body: { customer, return_url: "https://acme.cl/account", ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const BRANDING_FIELDS =
  "organization name businessName colorBackground colorAsset displayInvoices termsOfServiceUrl " +
  "privacyPolicyUrl updated";
const UPDATE_BRANDING =
  `mutation($input: OrganizationBrandingInput!) { updateOrganizationBranding(input: $input) ` +
  `{ ${BRANDING_FIELDS} } }`;

describe("POST /v1/customer_base/sessions/", () => {
  it(
    "creates a session: ses_ id, a cs_ key of 32 base62 characters, settings from the branding, " + "one hour",
    async () => {
      const before = await sessionCount();
      const res = await s.rest("POST", "/v1/customer_base/sessions/", {
        body: { customer, return_url: "https://acme.cl/account" },
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual([
        "created",
        "customer",
        "expires",
        "id",
        "key",
        "return_url",
        "settings",
        "url",
      ]);
      expect(res.body).toMatchObject({
        customer,
        return_url: "https://acme.cl/account",
        settings: {
          business_name: "Acme SpA",
          color_background: null,
          color_asset: null,
          display_invoices: true,
          terms_of_service_url: null,
          privacy_policy_url: null,
          return_url: "https://acme.cl/account",
        },
      });
      expect(Object.keys(res.body.settings).sort()).toEqual([
        "business_name",
        "color_asset",
        "color_background",
        "display_invoices",
        "privacy_policy_url",
        "return_url",
        "terms_of_service_url",
      ]);
      expect(res.body.id).toMatch(/^ses_[0-9A-Za-z]{24}$/);
      expect(res.body.key).toMatch(/^cs_[0-9A-Za-z]{32}$/); // 32 x log2(62) ~ 190 bits
      // the portal link of the key, on the request's origin (no PUBLIC_URL here)
      expect(res.body.url).toBe(`${s.url}/portal/${res.body.key}`);
      expect(res.body.created).toMatch(ISO);
      expect(res.body.expires).toMatch(ISO);
      expect(Date.parse(res.body.expires) - Date.parse(res.body.created)).toBe(3600 * 1000);
      expect(await sessionCount()).toBe(before + 1);

      // only the hash is stored: no column holds the key
      const row = await s.database.prisma.customerSession.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row).toMatchObject({
        organizationId: s.orgs.acme,
        testMode: true,
        customerId: customer,
        returnUrl: "https://acme.cl/account",
      });
      expect(row.keyHash).toBe(sha256(res.body.key));
      expect(row.keyHash).not.toBe(res.body.key);
      expect(JSON.stringify(row)).not.toContain(res.body.key.slice(3));
      expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(3600 * 1000);
    },
  );

  it("gives every session its own key", async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 5; i++) keys.add((await createSession()).key);
    expect(keys.size).toBe(5);
  });

  it("accepts the customer as an object, and ignores the server-assigned fields of a sent-back session", async () => {
    const first = await createSession();
    const again = await createSession({ ...first, customer: { id: customer } });
    expect(again.id).not.toBe(first.id);
    expect(again.key).not.toBe(first.key);
    expect(again.customer).toBe(customer);
  });

  const badInputs: [string, Record<string, unknown>, string, string?][] = [
    ["a missing customer", { customer: undefined }, "customer", "is required"],
    ["a null customer", { customer: null }, "customer", "is required"],
    [
      "an unknown customer",
      { customer: "cus_000000000000000000000000" },
      "customer",
      "unknown customer cus_000000000000000000000000",
    ],
    ["a customer id of the wrong type", { customer: 42 }, "customer"],
    ["a missing return_url", { return_url: undefined }, "return_url", "is required"],
    ["an empty return_url", { return_url: "" }, "return_url", "is required"],
    ["a relative return_url", { return_url: "/account" }, "return_url", "must be an absolute http(s) URL"],
    ["an ftp return_url", { return_url: "ftp://acme.cl/x" }, "return_url", "must be an absolute http(s) URL"],
    [
      "a javascript: return_url",
      { return_url: "javascript:alert(1)" },
      "return_url",
      "must be an absolute http(s) URL",
    ],
    [
      "a return_url over 2000 characters",
      { return_url: `https://acme.cl/${"a".repeat(2000)}` },
      "return_url",
      "must have at most 2000 characters",
    ],
    ["an unknown field", { colour: "red" }, "colour", "unknown field"],
  ];
  for (const [what, override, field, message] of badInputs) {
    it(`rejects ${what} with a 400 on ${field}, writing nothing`, async () => {
      const before = await sessionCount();
      const res = await s.rest("POST", "/v1/customer_base/sessions/", {
        body: { customer, return_url: "https://acme.cl/account", ...override },
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields)).toContain(field);
      if (message) expect(res.body.error.fields[field]).toEqual([message]);
      expect(await sessionCount()).toBe(before);
    });
  }

  it("names every bad field at once and rejects a body that is not an object", async () => {
    const res = await s.rest("POST", "/v1/customer_base/sessions/", { body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual({ customer: ["is required"], return_url: ["is required"] });
    const array = await s.rest("POST", "/v1/customer_base/sessions/", { body: [] });
    expect(array.status).toBe(400);
    const invalid = await s.rest("POST", "/v1/customer_base/sessions/", { raw: "{" });
    expect(invalid.status).toBe(400);
  });

  it(
    "rejects a session for another organization's customer as an unknown customer (400), " + "writing nothing",
    async () => {
      const foreign = (await s.rest("POST", "/v1/customers/", { key: s.keys.other, body: chileanCustomer() })).body;
      const before = await sessionCount();
      const res = await s.rest("POST", "/v1/customer_base/sessions/", {
        body: { customer: foreign.id, return_url: "https://acme.cl/account" },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: "validation_error",
        fields: { customer: [`unknown customer ${foreign.id}`] },
      });
      expect(await sessionCount()).toBe(before);
    },
  );

  it("needs an API key", async () => {
    const before = await sessionCount();
    const res = await s.rest("POST", "/v1/customer_base/sessions/", {
      key: null,
      body: { customer, return_url: "https://acme.cl/account" },
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("authentication_required");
    expect(await sessionCount()).toBe(before);
  });
});

describe("GET /v1/customer_base/sessions/{key}/", () => {
  it("returns the session, echoing the key it was given (trailing slash optional)", async () => {
    const created = await createSession({ return_url: "http://localhost:8080/back" });
    const res = await s.rest("GET", `/v1/customer_base/sessions/${created.key}/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
    expect(res.body.url).toBe(`${s.url}/portal/${created.key}`);
    expect((await s.rest("GET", `/v1/customer_base/sessions/${created.key}`)).body).toEqual(created);
  });

  it("is a 404 for an unknown or malformed key", async () => {
    for (const key of [`cs_${"A".repeat(32)}`, "cs_short", "anything", "%E0%A4%A"]) {
      const res = await s.rest("GET", `/v1/customer_base/sessions/${key}/`);
      expect(res.status, key + res.text).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });

  it("is a 404 with another organization's key and with the other mode's key", async () => {
    const created = await createSession();
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      const res = await s.rest("GET", `/v1/customer_base/sessions/${created.key}/`, { key });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.text).not.toContain(created.key);
    }
    expect((await s.rest("GET", `/v1/customer_base/sessions/${created.key}/`, { key: null })).status).toBe(401);
  });

  it(
    "keeps live sessions in live mode: a test customer is unknown to a live key, a live session unknown to a " +
      "test key",
    async () => {
      const liveCustomer = (await s.rest("POST", "/v1/customers/", { key: s.keys.acmeLive, body: chileanCustomer() }))
        .body.id;
      const wrongMode = await s.rest("POST", "/v1/customer_base/sessions/", {
        key: s.keys.acmeLive,
        body: { customer, return_url: "https://acme.cl" },
      });
      expect(wrongMode.status).toBe(400);
      expect(wrongMode.body.error.fields.customer).toEqual([`unknown customer ${customer}`]);

      const live = await createSession({ customer: liveCustomer }, s.keys.acmeLive);
      const row = await s.database.prisma.customerSession.findUniqueOrThrow({ where: { id: live.id } });
      expect(row.testMode).toBe(false);
      expect((await s.rest("GET", `/v1/customer_base/sessions/${live.key}/`, { key: s.keys.acmeLive })).status).toBe(
        200,
      );
      expect((await s.rest("GET", `/v1/customer_base/sessions/${live.key}/`)).status).toBe(404);
    },
  );

  it("is a 404 once the session has expired", async () => {
    const created = await createSession();
    await s.database.prisma.customerSession.update({
      where: { id: created.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const res = await s.rest("GET", `/v1/customer_base/sessions/${created.key}/`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    const gql = await s.graphql(
      `query($key: String!, $id: ID!) { customerSession(key: $key) { id } node(id: $id) { id } }`,
      { key: created.key, id: created.id },
    );
    expect(gql.body).toEqual({ data: { customerSession: null, node: null } });
  });

  it("answers 405 to other methods", async () => {
    const created = await createSession();
    expect((await s.rest("DELETE", `/v1/customer_base/sessions/${created.key}/`)).status).toBe(405);
    expect((await s.rest("GET", "/v1/customer_base/sessions/")).status).toBe(405);
  });
});

describe("url: the portal link", () => {
  it("opens the customer portal as the session's customer", async () => {
    const created = await createSession();
    const page = await fetch(created.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="app"></div>');
    const credential = page.headers.getSetCookie().find((c) => c.startsWith("portal_credential="));
    expect(credential).toMatch(/^portal_credential=\w{32};/);
    const row = await s.database.prisma.portalCredential.findFirstOrThrow({
      where: { sessionId: created.id },
      select: { customerId: true },
    });
    expect(row.customerId).toBe(customer);
  });

  it("is on PUBLIC_URL when it is set, in the create answer and the read by key", async () => {
    const behind = await startTestServer({ publicUrl: "https://billing.acme.example" });
    try {
      const cus = (await behind.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
      const created = await behind.rest("POST", "/v1/customer_base/sessions/", {
        body: { customer: cus, return_url: "https://acme.cl" },
      });
      expect(created.status).toBe(201);
      expect(created.body.url).toBe(`https://billing.acme.example/portal/${created.body.key}`);
      const read = await behind.rest("GET", `/v1/customer_base/sessions/${created.body.key}/`);
      expect(read.body.url).toBe(`https://billing.acme.example/portal/${created.body.key}`);
      const gql = await behind.graphql(
        `mutation($input: CustomerSessionInput!) { createCustomerSession(input: $input) { key url } }`,
        { input: { customer: cus, returnUrl: "https://acme.cl" } },
      );
      const { key, url } = gql.body.data.createCustomerSession;
      expect(url).toBe(`https://billing.acme.example/portal/${key}`);
    } finally {
      await behind.close();
    }
  });
});

describe("session lifetime (SESSION_TTL_SECONDS)", () => {
  it("uses the configured TTL and stops answering when it has passed", async () => {
    const short = await startTestServer({ settings: { sessionTtlSeconds: 1 } });
    try {
      const cus = (await short.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
      const created = (
        await short.rest("POST", "/v1/customer_base/sessions/", {
          body: { customer: cus, return_url: "https://acme.cl" },
        })
      ).body;
      expect(Date.parse(created.expires) - Date.parse(created.created)).toBe(1000);
      const row = await short.database.prisma.customerSession.findUniqueOrThrow({ where: { id: created.id } });
      expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(1000);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(created.expires) - Date.now()) + 50));
      expect((await short.rest("GET", `/v1/customer_base/sessions/${created.key}/`)).status).toBe(404);
    } finally {
      await short.close();
    }
  });
});

describe("GraphQL", () => {
  const FIELDS =
    "id key url returnUrl testMode created expires customer { id name } settings { businessName displayInvoices " +
    "returnUrl }";

  it("createCustomerSession returns the key; customerSession(key) echoes it; node(id) has no key", async () => {
    const created = await s.graphql(
      `mutation($input: CustomerSessionInput!) { createCustomerSession(input: $input) { ${FIELDS} } }`,
      {
        input: { customer, returnUrl: "https://acme.cl/gql" },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const session = created.body.data.createCustomerSession;
    expect(session).toMatchObject({
      returnUrl: "https://acme.cl/gql",
      testMode: true,
      customer: { id: customer, name: "Cliente SpA" },
    });
    expect(session.key).toMatch(/^cs_[0-9A-Za-z]{32}$/);
    expect(session.url).toBe(`${s.url}/portal/${session.key}`);

    const read = await s.graphql(`query($key: String!) { customerSession(key: $key) { ${FIELDS} } }`, {
      key: session.key,
    });
    expect(read.body.data.customerSession).toEqual(session);

    const node = await s.graphql(
      `query($id: ID!) { node(id: $id) { __typename ... on CustomerSession { id key url returnUrl } } }`,
      { id: session.id },
    );
    expect(node.body.data.node).toEqual({
      __typename: "CustomerSession",
      id: session.id,
      key: null,
      url: null,
      returnUrl: "https://acme.cl/gql",
    });
    const foreign = await s.graphql(`query($id: ID!) { node(id: $id) { id } }`, { id: session.id }, s.keys.other);
    expect(foreign.body.data.node).toBeNull();
  });

  it(
    "customerSession is null (no error) for an unknown key; bad input is a validation_error naming " + "the fields",
    async () => {
      const missing = await s.graphql(`{ customerSession(key: "cs_${"x".repeat(32)}") { id } }`);
      expect(missing.body).toEqual({ data: { customerSession: null } });

      const before = await sessionCount();
      const bad = await s.graphql(`mutation { createCustomerSession(input: { returnUrl: "mailto:a@b.cl" }) { id } }`);
      expect(bad.body.errors[0].extensions).toMatchObject({
        code: "validation_error",
        fields: { customer: ["is required"], return_url: ["must be an absolute http(s) URL"] },
      });
      expect(await sessionCount()).toBe(before);
    },
  );
});

describe("branding", () => {
  it("reads the organization's branding; an update is copied by later sessions only", async () => {
    const initial = await s.graphql(`{ organizationBranding { ${BRANDING_FIELDS} } }`);
    expect(initial.body.data.organizationBranding).toMatchObject({
      organization: s.orgs.acme,
      name: "Acme SpA",
      businessName: "Acme SpA",
      colorBackground: null,
      colorAsset: null,
      displayInvoices: true,
      termsOfServiceUrl: null,
      privacyPolicyUrl: null,
    });
    const older = await createSession();

    const updated = await s.graphql(UPDATE_BRANDING, {
      input: {
        businessName: "  Acme Portal  ",
        colorBackground: "#F0F",
        colorAsset: "#1A2B3C",
        displayInvoices: false,
        termsOfServiceUrl: "https://acme.cl/terms",
        privacyPolicyUrl: "https://acme.cl/privacy",
      },
    });
    expect(updated.body.errors).toBeUndefined();
    expect(updated.body.data.updateOrganizationBranding).toMatchObject({
      businessName: "Acme Portal",
      colorBackground: "#ff00ff",
      colorAsset: "#1a2b3c",
      displayInvoices: false,
      termsOfServiceUrl: "https://acme.cl/terms",
      privacyPolicyUrl: "https://acme.cl/privacy",
    });

    const newer = await createSession({ return_url: "https://acme.cl/after" });
    expect(newer.settings).toEqual({
      business_name: "Acme Portal",
      color_background: "#ff00ff",
      color_asset: "#1a2b3c",
      display_invoices: false,
      terms_of_service_url: "https://acme.cl/terms",
      privacy_policy_url: "https://acme.cl/privacy",
      return_url: "https://acme.cl/after",
    });
    // a snapshot: the older session keeps the branding it was created with
    expect((await s.rest("GET", `/v1/customer_base/sessions/${older.key}/`)).body.settings).toEqual(older.settings);
    // the other organization is untouched
    const other = await s.graphql(`{ organizationBranding { businessName colorBackground } }`, {}, s.keys.other);
    expect(other.body.data.organizationBranding).toEqual({ businessName: "Other Ltda", colorBackground: null });

    // only given fields change; null clears; no business name falls back to the organization's name
    const cleared = await s.graphql(UPDATE_BRANDING, { input: { businessName: null, colorAsset: "" } });
    expect(cleared.body.data.updateOrganizationBranding).toMatchObject({
      businessName: null,
      colorAsset: null,
      colorBackground: "#ff00ff",
      displayInvoices: false,
    });
    expect((await createSession()).settings).toMatchObject({
      business_name: "Acme SpA",
      color_asset: null,
      color_background: "#ff00ff",
    });
  });

  it("is per mode: a live key's change stays in live mode, a test key's in test mode", async () => {
    const testBefore = (await s.graphql(`{ organizationBranding { testMode colorBackground updated } }`)).body.data
      .organizationBranding;
    const live = await s.graphql(UPDATE_BRANDING, { input: { colorBackground: "#000000" } }, s.keys.acmeLive);
    expect(live.body.data.updateOrganizationBranding).toMatchObject({ colorBackground: "#000000" });
    expect(
      (await s.graphql(`{ organizationBranding { testMode colorBackground } }`, {}, s.keys.acmeLive)).body.data
        .organizationBranding,
    ).toEqual({ testMode: false, colorBackground: "#000000" });
    expect(
      (await s.graphql(`{ organizationBranding { testMode colorBackground updated } }`)).body.data.organizationBranding,
    ).toEqual(testBefore);
    expect(testBefore).toMatchObject({ testMode: true, colorBackground: "#ff00ff" });
  });

  const badBranding: [string, Record<string, unknown>, string][] = [
    ["a colour name", { colorBackground: "red" }, "color_background"],
    ["a colour without #", { colorAsset: "112233" }, "color_asset"],
    ["a colour with alpha", { colorAsset: "#112233ff" }, "color_asset"],
    ["a non-http terms URL", { termsOfServiceUrl: "ftp://acme.cl/terms" }, "terms_of_service_url"],
    ["a relative privacy URL", { privacyPolicyUrl: "/privacy" }, "privacy_policy_url"],
    ["a business name over 100 characters", { businessName: "x".repeat(101) }, "business_name"],
    ["a blank business name", { businessName: "   " }, "business_name"],
    ["a null displayInvoices", { displayInvoices: null }, "display_invoices"],
  ];
  for (const [what, input, field] of badBranding) {
    it(`rejects ${what} (validation_error on ${field}) and changes nothing`, async () => {
      const settings = () =>
        s.database.prisma.organizationSettings.findMany({
          where: { organizationId: s.orgs.acme },
          orderBy: { testMode: "asc" },
        });
      const before = await settings();
      const res = await s.graphql(UPDATE_BRANDING, { input: { businessName: "Changed", ...input } });
      expect(res.body.errors[0].extensions.code).toBe("validation_error");
      expect(Object.keys(res.body.errors[0].extensions.fields)).toEqual([field]);
      expect(await settings()).toEqual(before);
    });
  }
});
