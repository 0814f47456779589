/**
 * Dunning campaigns over REST and GraphQL (docs/dunning.md): create, retrieve, list with pages and filters,
 * update, delete; a customer's `dunning_campaign` and `exclude_from_dunning`; bad input (400 naming the field,
 * nothing written); codes and the default campaign per organization and mode; a campaign customers name cannot be
 * deleted (409).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { openLink, portalGraphql, sessionKey } from "../helpers/portal.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

let codes = 0;
/** A valid campaign body with a fresh code, `overrides` on top. */
function campaign(overrides: Record<string, unknown> = {}) {
  codes += 1;
  return {
    name: "Recordatorio estándar",
    code: `standard-${codes}`,
    thresholds: [{ currency: "CLP", amount: 50000 }],
    days_between_attempts: 3,
    max_attempts: 5,
    ...overrides,
  };
}

async function create(overrides: Record<string, unknown> = {}, key?: string) {
  const res = await s.rest("POST", "/v1/dunning_campaigns/", { body: campaign(overrides), key });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Row counts of what a campaign or customer write touches (to assert that a refused request wrote nothing). */
async function counts() {
  const p = s.database.prisma;
  return {
    campaigns: await p.dunningCampaign.count(),
    thresholds: await p.dunningCampaignThreshold.count(),
    customers: await p.customer.count(),
    linked: await p.customer.count({ where: { dunningCampaignId: { not: null } } }),
    excluded: await p.customer.count({ where: { excludeFromDunning: true } }),
    defaults: await p.dunningCampaign.count({ where: { appliedToOrganization: true } }),
  };
}

/** Expects a 400 validation_error naming `field` and nothing written. */
async function expectRejected(method: string, path: string, body: unknown, field: string, key?: string) {
  const before = await counts();
  const res = await s.rest(method, path, { body, key });
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  expect(Object.keys(res.body.error.fields), JSON.stringify(res.body.error)).toContain(field);
  expect(await counts()).toEqual(before);
  return res.body.error;
}

describe("dunning campaigns over REST", () => {
  it("creates a campaign with its defaults and prints every field; the row and its thresholds are stored", async () => {
    const res = await s.rest("POST", "/v1/dunning_campaigns/", {
      body: {
        name: "Cobranza B2B",
        code: "b2b.default",
        description: "Empresas que pagan por transferencia",
        thresholds: [
          { currency: "CLP", amount: "50000" },
          { currency: "usd", amount: 60.5 },
        ],
        days_between_attempts: 2,
        max_attempts: 8,
      },
    });
    expect(res.status, res.text).toBe(201);
    const c = res.body;
    expect(c.id).toMatch(/^dun_[0-9A-Za-z]{24}$/);
    expect(c).toEqual({
      id: c.id,
      name: "Cobranza B2B",
      code: "b2b.default",
      description: "Empresas que pagan por transferencia",
      thresholds: [
        { currency: "CLP", amount: 50000 },
        { currency: "USD", amount: 60.5 },
      ],
      days_between_attempts: 2,
      max_attempts: 8,
      retry_card: true,
      send_email: true,
      bcc_emails: [],
      final_action: "none",
      applied_to_organization: false,
      created: expect.stringMatching(ISO),
      updated: expect.stringMatching(ISO),
    });
    // exact decimals in the database, in the organization and mode of the key
    const row = await s.database.prisma.dunningCampaign.findUniqueOrThrow({
      where: { id: c.id },
      include: { thresholds: { orderBy: { position: "asc" } } },
    });
    expect(row).toMatchObject({ organizationId: s.orgs.acme, testMode: true, daysBetweenAttempts: 2, maxAttempts: 8 });
    expect(row.thresholds.map((t) => [t.currencyId, t.amount.toFixed(), t.organizationId])).toEqual([
      ["CLP", "50000", s.orgs.acme],
      ["USD", "60.5", s.orgs.acme],
    ]);

    const read = await s.rest("GET", `/v1/dunning_campaigns/${c.id}/`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(c);
    // without the trailing slash too
    expect((await s.rest("GET", `/v1/dunning_campaigns/${c.id}`)).body).toEqual(c);
  });

  it("updates the given fields; thresholds replace the list", async () => {
    const c = await create({
      thresholds: [
        { currency: "CLP", amount: 1000 },
        { currency: "USD", amount: 10 },
      ],
    });
    const res = await s.rest("PATCH", `/v1/dunning_campaigns/${c.id}/`, {
      body: {
        name: "Agresiva",
        thresholds: [{ currency: "EUR", amount: "12.34" }],
        retry_card: false,
        send_email: false,
        bcc_emails: ["cobranza@acme.cl", "contabilidad@acme.cl"],
        final_action: "cancel_subscriptions",
        description: "",
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: c.id,
      name: "Agresiva",
      code: c.code,
      description: null,
      thresholds: [{ currency: "EUR", amount: 12.34 }],
      days_between_attempts: 3,
      max_attempts: 5,
      retry_card: false,
      send_email: false,
      bcc_emails: ["cobranza@acme.cl", "contabilidad@acme.cl"],
      final_action: "cancel_subscriptions",
    });
    expect(await s.database.prisma.dunningCampaignThreshold.count({ where: { campaignId: c.id } })).toBe(1);
    // only what is given changes
    const again = await s.rest("PATCH", `/v1/dunning_campaigns/${c.id}/`, { body: { max_attempts: 20 } });
    expect(again.body).toMatchObject({ max_attempts: 20, thresholds: [{ currency: "EUR", amount: 12.34 }] });
    // a retrieved campaign can be sent back as it is (printed-only keys are ignored)
    const back = await s.rest("PATCH", `/v1/dunning_campaigns/${c.id}/`, { body: again.body });
    expect(back.status, back.text).toBe(200);
    expect(back.body.thresholds).toEqual(again.body.thresholds);
  });

  it("lists newest first in pages, with filters; an unknown filter is a 400", async () => {
    const org = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() }); // no campaign: unaffected
    expect(org.status).toBe(201);
    const made = [await create({ code: "list-a" }), await create({ code: "list-b" }), await create({ code: "list-c" })];
    const all = await s.rest("GET", "/v1/dunning_campaigns/?page_size=100");
    expect(all.status).toBe(200);
    const ids = all.body.results.map((r: { id: string }) => r.id);
    expect(ids.slice(0, 3)).toEqual(made.map((m) => m.id).reverse());
    const page = await s.rest("GET", "/v1/dunning_campaigns/?page_size=2&code__in=list-a,list-b,list-c");
    expect(page.body).toMatchObject({ count: 3, previous: null });
    expect(page.body.results.map((r: { code: string }) => r.code)).toEqual(["list-c", "list-b"]);
    expect(page.body.next).toBe(`${s.url}/v1/dunning_campaigns/?page_size=2&code__in=list-a%2Clist-b%2Clist-c&page=2`);
    const second = await s.rest("GET", "/v1/dunning_campaigns/?page_size=2&code__in=list-a,list-b,list-c&page=2");
    expect(second.body.results.map((r: { code: string }) => r.code)).toEqual(["list-a"]);
    expect(second.body.previous).not.toBeNull();
    const one = await s.rest("GET", "/v1/dunning_campaigns/?code=list-b");
    expect(one.body.results.map((r: { id: string }) => r.id)).toEqual([made[1].id]);
    const bad = await s.rest("GET", "/v1/dunning_campaigns/?max_attempts=3");
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.fields)).toEqual(["max_attempts"]);
  });

  it("deletes a campaign with its thresholds (204); then it is not found", async () => {
    const c = await create({ thresholds: [{ currency: "CLP", amount: 1 }] });
    const del = await s.rest("DELETE", `/v1/dunning_campaigns/${c.id}/`);
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    expect((await s.rest("GET", `/v1/dunning_campaigns/${c.id}/`)).status).toBe(404);
    expect((await s.rest("DELETE", `/v1/dunning_campaigns/${c.id}/`)).status).toBe(404);
    expect(await s.database.prisma.dunningCampaignThreshold.count({ where: { campaignId: c.id } })).toBe(0);
  });
});

describe("bad input: 400 naming the field, nothing written", () => {
  const path = "/v1/dunning_campaigns/";
  it("a threshold in an unknown currency, malformed, duplicated, negative or not in the currency's unit", async () => {
    await expectRejected(
      "POST",
      path,
      campaign({ thresholds: [{ currency: "XYZ", amount: 1 }] }),
      "thresholds.0.currency",
    );
    await expectRejected(
      "POST",
      path,
      campaign({ thresholds: [{ currency: "pesos", amount: 1 }] }),
      "thresholds.0.currency",
    );
    await expectRejected("POST", path, campaign({ thresholds: [{ amount: 1 }] }), "thresholds.0.currency");
    await expectRejected("POST", path, campaign({ thresholds: [{ currency: "CLP" }] }), "thresholds.0.amount");
    await expectRejected(
      "POST",
      path,
      campaign({
        thresholds: [
          { currency: "CLP", amount: 1 },
          { currency: "clp", amount: 2 },
        ],
      }),
      "thresholds.1.currency",
    );
    await expectRejected(
      "POST",
      path,
      campaign({ thresholds: [{ currency: "CLP", amount: -1 }] }),
      "thresholds.0.amount",
    );
    const unit = await expectRejected(
      "POST",
      path,
      campaign({ thresholds: [{ currency: "CLP", amount: "100.5" }] }),
      "thresholds.0.amount",
    );
    expect(unit.fields["thresholds.0.amount"]).toEqual(["must be in the unit of CLP"]);
    await expectRejected("POST", path, campaign({ thresholds: [] }), "thresholds");
    await expectRejected("POST", path, { ...campaign(), thresholds: undefined }, "thresholds");
  });

  it("0 or 61 days between attempts, 0 or 21 attempts, missing or not whole", async () => {
    for (const days of [0, 61, -1])
      await expectRejected("POST", path, campaign({ days_between_attempts: days }), "days_between_attempts");
    for (const attempts of [0, 21])
      await expectRejected("POST", path, campaign({ max_attempts: attempts }), "max_attempts");
    await expectRejected("POST", path, campaign({ max_attempts: 2.5 }), "max_attempts");
    await expectRejected("POST", path, campaign({ days_between_attempts: "3" }), "days_between_attempts");
    const missing = await expectRejected(
      "POST",
      path,
      { name: "x", code: "no-schedule", thresholds: [{ currency: "CLP", amount: 1 }] },
      "days_between_attempts",
    );
    expect(Object.keys(missing.fields).sort()).toEqual(["days_between_attempts", "max_attempts"]);
    // the bounds themselves are fine
    await create({ days_between_attempts: 1, max_attempts: 1 });
    const c = await create({ days_between_attempts: 60, max_attempts: 20 });
    await expectRejected("PATCH", `${path}${c.id}/`, { days_between_attempts: 61 }, "days_between_attempts");
    await expectRejected("PATCH", `${path}${c.id}/`, { max_attempts: 0 }, "max_attempts");
    expect((await s.rest("GET", `${path}${c.id}/`)).body).toMatchObject({
      days_between_attempts: 60,
      max_attempts: 20,
    });
  });

  it("an unknown final action, a bad bcc address, a missing name or code, an unknown field", async () => {
    const action = await expectRejected("POST", path, campaign({ final_action: "send_lawyers" }), "final_action");
    expect(action.fields.final_action).toEqual([
      "must be one of none, pause_subscriptions, cancel_subscriptions, mark_uncollectible",
    ]);
    await expectRejected("POST", path, campaign({ bcc_emails: ["ok@acme.cl", "nope"] }), "bcc_emails.1");
    await expectRejected("POST", path, campaign({ name: "" }), "name");
    await expectRejected("POST", path, campaign({ code: undefined }), "code");
    await expectRejected("POST", path, campaign({ code: "with space" }), "code");
    await expectRejected("POST", path, campaign({ code: "x".repeat(101) }), "code");
    await expectRejected("POST", path, campaign({ colour: "red" }), "colour");
  });

  it("a duplicate code in the organization and mode; in live mode or another organization it is fine", async () => {
    const c = await create({ code: "unique-code" });
    const dup = await expectRejected("POST", path, campaign({ code: "unique-code" }), "code");
    expect(dup.fields.code[0]).toContain(c.id);
    const other = await create({ code: "other" });
    await expectRejected("PATCH", `${path}${other.id}/`, { code: "unique-code" }, "code");
    // PATCH with its own code is no conflict
    expect((await s.rest("PATCH", `${path}${c.id}/`, { body: { code: "unique-code" } })).status).toBe(200);
    await create({ code: "unique-code" }, s.keys.acmeLive);
    await create({ code: "unique-code" }, s.keys.other);
  });

  it("two default campaigns in one organization and mode; one per mode and organization is fine", async () => {
    const first = await create({ applied_to_organization: true });
    expect(first.applied_to_organization).toBe(true);
    const second = await expectRejected(
      "POST",
      path,
      campaign({ applied_to_organization: true }),
      "applied_to_organization",
    );
    expect(second.fields.applied_to_organization[0]).toContain(first.id);
    const other = await create();
    await expectRejected("PATCH", `${path}${other.id}/`, { applied_to_organization: true }, "applied_to_organization");
    // other modes and organizations have their own default
    await create({ applied_to_organization: true }, s.keys.acmeLive);
    await create({ applied_to_organization: true }, s.keys.other);
    // switching: the first stops being the default, then another can be
    expect((await s.rest("PATCH", `${path}${first.id}/`, { body: { applied_to_organization: false } })).status).toBe(
      200,
    );
    const now = await s.rest("PATCH", `${path}${other.id}/`, { body: { applied_to_organization: true } });
    expect(now.body.applied_to_organization).toBe(true);
    const defaults = await s.rest("GET", `${path}?applied_to_organization=true`);
    expect(defaults.body.results.map((r: { id: string }) => r.id)).toEqual([other.id]);
  });

  it("an unknown campaign on a customer (create and update), another mode's or organization's included", async () => {
    const live = await create({}, s.keys.acmeLive);
    const elsewhere = await create({}, s.keys.other);
    for (const id of ["dun_000000000000000000000000", live.id, elsewhere.id, "nope"]) {
      await expectRejected("POST", "/v1/customers/", chileanCustomer({ dunning_campaign: id }), "dunning_campaign");
    }
    const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
    await expectRejected(
      "PATCH",
      `/v1/customers/${customer.body.id}/`,
      { dunning_campaign: live.id },
      "dunning_campaign",
    );
    await expectRejected(
      "PATCH",
      `/v1/customers/${customer.body.id}/`,
      { exclude_from_dunning: "yes" },
      "exclude_from_dunning",
    );
  });
});

describe("concurrent requests", () => {
  it("of five creates with one code, or five that would each be the default, exactly one is created", async () => {
    for (const body of [
      () => campaign({ code: "race" }),
      () => campaign({ applied_to_organization: true, code: `race-default-${Math.random().toString(36).slice(2)}` }),
    ]) {
      // the default of the earlier tests stops being one, so each round starts without a default
      await s.database.prisma.dunningCampaign.updateMany({ data: { appliedToOrganization: false } });
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => s.rest("POST", "/v1/dunning_campaigns/", { body: body() })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 400, 400, 400, 400]);
      for (const refused of answers.filter((a) => a.status === 400))
        expect(Object.keys(refused.body.error.fields)).toEqual([
          body().code === "race" ? "code" : "applied_to_organization",
        ]);
    }
    expect(await s.database.prisma.dunningCampaign.count({ where: { code: "race" } })).toBe(1);
  });

  it("a delete and a customer naming the campaign at once: one of them wins, never both, never a 500", async () => {
    for (let round = 0; round < 3; round++) {
      const c = await create();
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
      const [named, deleted] = await Promise.all([
        s.rest("PATCH", `/v1/customers/${customer}/`, { body: { dunning_campaign: c.id } }),
        s.rest("DELETE", `/v1/dunning_campaigns/${c.id}/`),
      ]);
      const outcome = `${named.status} ${deleted.status}`;
      expect(["200 409", "400 204"], outcome).toContain(outcome);
      const row = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: customer } });
      expect(row.dunningCampaignId).toBe(named.status === 200 ? c.id : null);
    }
  });
});

describe("tenancy", () => {
  it("another organization's or mode's campaign is not found, for reading, updating and deleting", async () => {
    const c = await create();
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      expect((await s.rest("GET", `/v1/dunning_campaigns/${c.id}/`, { key })).status).toBe(404);
      expect((await s.rest("PATCH", `/v1/dunning_campaigns/${c.id}/`, { key, body: { name: "x" } })).status).toBe(404);
      expect((await s.rest("DELETE", `/v1/dunning_campaigns/${c.id}/`, { key })).status).toBe(404);
      const list = await s.rest("GET", "/v1/dunning_campaigns/?page_size=100", { key });
      expect(list.body.results.map((r: { id: string }) => r.id)).not.toContain(c.id);
    }
    expect((await s.rest("GET", `/v1/dunning_campaigns/${c.id}/`)).body.name).toBe("Recordatorio estándar");
    expect((await s.rest("GET", "/v1/dunning_campaigns/", { key: null })).status).toBe(401);
  });
});

describe("customers and their campaign", () => {
  it("a customer names a campaign or none, can be excluded; a campaign customers name cannot be deleted", async () => {
    const c = await create();
    const plain = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
    expect(plain.body).toMatchObject({ dunning_campaign: null, exclude_from_dunning: false });
    const named = await s.rest("POST", "/v1/customers/", {
      body: chileanCustomer({ dunning_campaign: c.id, exclude_from_dunning: true }),
    });
    expect(named.status, named.text).toBe(201);
    expect(named.body).toMatchObject({ dunning_campaign: c.id, exclude_from_dunning: true });
    expect((await s.rest("GET", `/v1/customers/${named.body.id}/`)).body).toMatchObject({
      dunning_campaign: c.id,
      exclude_from_dunning: true,
    });
    const row = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: named.body.id } });
    expect(row).toMatchObject({ dunningCampaignId: c.id, excludeFromDunning: true });

    // deleting it: 409, nothing changes
    const refused = await s.rest("DELETE", `/v1/dunning_campaigns/${c.id}/`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("invalid_state");
    expect(refused.body.error.message).toContain("1 customer");
    expect((await s.rest("GET", `/v1/dunning_campaigns/${c.id}/`)).status).toBe(200);

    // the customer moves back to the default (null) and is included again: the campaign can go
    const moved = await s.rest("PATCH", `/v1/customers/${named.body.id}/`, {
      body: { dunning_campaign: null, exclude_from_dunning: false },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ dunning_campaign: null, exclude_from_dunning: false });
    // the change is a customer.updated event with the old values
    const events = await s.rest("GET", "/v1/events/?type=customer.updated&page_size=100");
    const event = events.body.results.find((e: any) => e.data.object.id === named.body.id);
    expect(event.data.previous_attributes).toEqual({ dunning_campaign: c.id, exclude_from_dunning: true });
    expect((await s.rest("DELETE", `/v1/dunning_campaigns/${c.id}/`)).status).toBe(204);

    // a customer set to a campaign by PATCH, printed object accepted back as `{id}`
    const d = await create();
    const set = await s.rest("PATCH", `/v1/customers/${plain.body.id}/`, { body: { dunning_campaign: { id: d.id } } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.dunning_campaign).toBe(d.id);

    // the customer portal reads neither (the organization's collection policy) and cannot set them
    const cookies = await openLink(s, (await sessionKey(s, plain.body.id)).key);
    const own = await portalGraphql(s, cookies, "{ portal { customer { name } } }");
    expect(own.body.data.portal.customer.name).toBe("Cliente SpA");
    for (const field of ["dunningCampaign { id }", "excludeFromDunning"]) {
      const refused = await portalGraphql(s, cookies, `{ portal { customer { ${field} } } }`);
      expect(refused.body.errors[0].extensions.code, JSON.stringify(refused.body)).toBe("permission_denied");
    }
    const write = await portalGraphql(
      s,
      cookies,
      `mutation($id: ID!) { updateCustomer(id: $id, input: { excludeFromDunning: true }) { id } }`,
      { id: plain.body.id },
    );
    expect(write.body.errors[0].extensions.code).toBe("validation_error");
    expect(await s.database.prisma.customer.count({ where: { excludeFromDunning: true } })).toBe(0);
  });
});

describe("GraphQL", () => {
  const FIELDS =
    "id name code description thresholds { currency { id } amount } daysBetweenAttempts maxAttempts retryCard " +
    "sendEmail bccEmails finalAction appliedToOrganization created updated";

  it("creates, reads through node(id) and the connection, updates and deletes", async () => {
    const created = await s.graphql(
      `mutation($input: DunningCampaignInput!) { createDunningCampaign(input: $input) { ${FIELDS} } }`,
      {
        input: {
          name: "GraphQL",
          code: "gql-1",
          thresholds: [{ currency: "CLP", amount: "1000" }],
          daysBetweenAttempts: 7,
          maxAttempts: 4,
          finalAction: "mark_uncollectible",
          bccEmails: ["a@acme.cl"],
        },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const c = created.body.data.createDunningCampaign;
    expect(c).toMatchObject({
      code: "gql-1",
      thresholds: [{ currency: { id: "CLP" }, amount: "1000" }],
      daysBetweenAttempts: 7,
      maxAttempts: 4,
      retryCard: true,
      sendEmail: true,
      bccEmails: ["a@acme.cl"],
      finalAction: "mark_uncollectible",
      appliedToOrganization: false,
    });
    expect(c.id).toMatch(/^dun_/);

    const node = await s.graphql(`query($id: ID!) { node(id: $id) { __typename ... on DunningCampaign { code } } }`, {
      id: c.id,
    });
    expect(node.body.data.node).toEqual({ __typename: "DunningCampaign", code: "gql-1" });
    const hidden = await s.graphql(`query($id: ID!) { node(id: $id) { id } }`, { id: c.id }, s.keys.other);
    expect(hidden.body.data.node).toBeNull();

    const list = await s.graphql(
      `{ dunningCampaigns(first: 1, where: { code: { equals: "gql-1" } }) { totalCount pageInfo { hasNextPage } ` +
        `edges { cursor node { id } } } }`,
    );
    expect(list.body.data.dunningCampaigns).toMatchObject({
      totalCount: 1,
      pageInfo: { hasNextPage: false },
      edges: [{ node: { id: c.id } }],
    });

    const customer = await s.graphql(
      `mutation($input: CustomerInput!) { createCustomer(input: $input) { id dunningCampaign { id code } ` +
        `excludeFromDunning } }`,
      { input: { name: "GQL", dunningCampaign: c.id } },
    );
    expect(customer.body.data.createCustomer).toMatchObject({
      dunningCampaign: { id: c.id, code: "gql-1" },
      excludeFromDunning: false,
    });

    const updated = await s.graphql(
      `mutation($id: ID!, $input: DunningCampaignInput!) { updateDunningCampaign(id: $id, input: $input) { ` +
        `finalAction thresholds { currency { id } amount } } }`,
      { id: c.id, input: { finalAction: "pause_subscriptions", thresholds: [{ currency: "USD", amount: "9.99" }] } },
    );
    expect(updated.body.data.updateDunningCampaign).toEqual({
      finalAction: "pause_subscriptions",
      thresholds: [{ currency: { id: "USD" }, amount: "9.99" }],
    });

    const del = `mutation($id: ID!) { deleteDunningCampaign(id: $id) { deletedId } }`;
    const refused = await s.graphql(del, { id: c.id });
    expect(refused.body.errors[0].extensions.code).toBe("invalid_state");
    await s.graphql(`mutation($id: ID!) { updateCustomer(id: $id, input: { dunningCampaign: null }) { id } }`, {
      id: customer.body.data.createCustomer.id,
    });
    const deleted = await s.graphql(del, { id: c.id });
    expect(deleted.body.data.deleteDunningCampaign).toEqual({ deletedId: c.id });
    expect((await s.graphql(del, { id: c.id })).body.errors[0].extensions.code).toBe("not_found");
  });

  it("bad input is a validation_error naming the REST field", async () => {
    const before = await counts();
    const res = await s.graphql(
      `mutation($input: DunningCampaignInput!) { createDunningCampaign(input: $input) { id } }`,
      {
        input: {
          name: "Bad",
          code: "bad",
          thresholds: [{ currency: "XYZ", amount: "1" }],
          daysBetweenAttempts: 61,
          maxAttempts: 0,
        },
      },
    );
    expect(res.body.errors[0].extensions.code).toBe("validation_error");
    expect(Object.keys(res.body.errors[0].extensions.fields).sort()).toEqual([
      "days_between_attempts",
      "max_attempts",
      "thresholds.0.currency",
    ]);
    const action = await s.graphql(
      `mutation { createDunningCampaign(input: { name: "x", code: "y", finalAction: explode }) { id } }`,
    );
    expect(action.body.errors).toHaveLength(1);
    expect(await counts()).toEqual(before);
  });
});
