/**
 * Usage records (spec "Usages"): create, list with filters, delete (409 once billed), the
 * Idempotency-Key records a usage once, and bad inputs. Subscriptions are rows here until their API
 * lands; plans come from the catalogue API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/infra/ids.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let meteredLine: string;
let licensedLine: string;
let subscriptionId: string;
beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: {
      name: "API",
      plans: [
        {
          name: "Uso",
          amount: "10",
          currency: "CLP",
          frequency: "monthly",
          usage_scheme: "metered",
          usage_aggregation: "sum",
        },
        { name: "Base", amount: "9990", currency: "CLP", frequency: "monthly" },
      ],
    },
  });
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  const p = s.database.prisma;
  subscriptionId = newId("sub");
  await p.subscription.create({
    data: {
      id: subscriptionId,
      organizationId: s.orgs.acme,
      testMode: true,
      documentTypeId: "CL33",
      customerId: customer,
      dateStart: new Date("2026-11-01"),
      nextBilling: new Date("2026-12-01"),
      userEmail: "ops@acme.cl",
    },
  });
  meteredLine = newId("lin");
  licensedLine = newId("lin");
  const parent = { subscriptionId, organizationId: s.orgs.acme };
  await p.subscriptionLine.create({ data: { id: meteredLine, ...parent, planId: product.body.plans[0].id } });
  await p.subscriptionLine.create({ data: { id: licensedLine, ...parent, planId: product.body.plans[1].id } });
});
afterAll(async () => s?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

describe("usage records over REST", () => {
  it("records a usage of a metered line with the spec's fields and invoice null", async () => {
    const res = await s.rest("POST", "/v1/usages/", {
      body: { subscription_line: meteredLine, quantity: "12.5", date_time: "2026-11-20T15:30:00-03:00" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^usa_/),
      subscription_line: meteredLine,
      quantity: 12.5,
      date_time: "2026-11-20T18:30:00.000+00:00",
      invoice: null,
      created: expect.stringMatching(ISO),
    });
    const row = await s.database.prisma.usage.findUniqueOrThrow({ where: { id: res.body.id } });
    expect([row.quantity.toString(), row.dateTime.toISOString()]).toEqual(["12.5", "2026-11-20T18:30:00.000Z"]);
  });

  it("lists with filters on subscription_line and date_time, latest first, paged", async () => {
    for (const day of ["01", "10", "25"])
      await s.rest("POST", "/v1/usages/", {
        body: { subscription_line: meteredLine, quantity: 1, date_time: `2026-10-${day}T12:00:00Z` },
      });
    const october = await s.rest(
      "GET",
      `/v1/usages/?subscription_line=${meteredLine}&date_time__gte=2026-10-05&date_time__lte=2026-10-31&page_size=1`,
    );
    expect(october.status).toBe(200);
    expect(october.body.count).toBe(2);
    expect(october.body.results.map((u: any) => u.date_time)).toEqual(["2026-10-25T12:00:00.000+00:00"]);
    expect(october.body.next).toContain("page=2");
    expect((await s.rest("GET", "/v1/usages/?subscription_line__in=lin_nope")).body.count).toBe(0);
    expect((await s.rest("GET", "/v1/usages/?colour=red")).status).toBe(400);
    expect((await s.rest("GET", "/v1/usages/", { key: s.keys.other })).body.count).toBe(0);
  });

  it("records once with an Idempotency-Key sent twice", async () => {
    const send = () =>
      fetch(`${s.url}/v1/usages/`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${s.keys.acme}`,
          "idempotency-key": "usage-2026-11-21-a",
        },
        body: JSON.stringify({ subscription_line: meteredLine, quantity: 7, date_time: "2026-11-21T10:00:00Z" }),
      });
    const first = await send();
    const second = await send();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect((await second.json()).id).toBe((await first.json()).id);
    expect(await s.database.prisma.usage.count({ where: { dateTime: new Date("2026-11-21T10:00:00Z") } })).toBe(1);
  });

  it("deletes an unbilled usage (204) and refuses a billed one (409), changing nothing", async () => {
    const a = (await s.rest("POST", "/v1/usages/", { body: { subscription_line: meteredLine, quantity: 3 } })).body;
    expect((await s.rest("DELETE", `/v1/usages/${a.id}/`)).status).toBe(204);
    expect(await s.database.prisma.usage.count({ where: { id: a.id } })).toBe(0);
    expect((await s.rest("DELETE", `/v1/usages/${a.id}/`)).status).toBe(404);

    const b = (await s.rest("POST", "/v1/usages/", { body: { subscription_line: meteredLine, quantity: 4 } })).body;
    const invoice = (
      await s.rest("POST", "/v1/invoices/", {
        body: {
          customer: (await s.database.prisma.subscription.findUniqueOrThrow({ where: { id: subscriptionId } }))
            .customerId,
          lines: [{ name: "Uso", quantity: 4, amount: 10 }],
        },
      })
    ).body;
    await s.database.prisma.usage.update({ where: { id: b.id }, data: { invoiceId: invoice.id } });
    const refused = await s.rest("DELETE", `/v1/usages/${b.id}/`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe(
      `Usage ${b.id} is billed by invoice ${invoice.id}; billed usage cannot be deleted`,
    );
    expect(
      (await s.rest("GET", `/v1/usages/?invoice=${invoice.id}`)).body.results.map((u: any) => [u.id, u.invoice]),
    ).toEqual([[b.id, invoice.id]]);
    expect((await s.rest("DELETE", `/v1/usages/${b.id}/`, { key: s.keys.other })).status).toBe(404);
  });

  const tomorrowPlus = new Date(Date.now() + 26 * 3600_000).toISOString();
  const bad: [string, () => Record<string, unknown>, string, string][] = [
    [
      "a licensed line",
      () => ({ subscription_line: licensedLine }),
      "subscription_line",
      "only lines of metered plans take usage",
    ],
    ["an unknown line", () => ({ subscription_line: "lin_nope" }), "subscription_line", "unknown subscription line"],
    ["no line", () => ({ subscription_line: undefined }), "subscription_line", "is required"],
    ["a negative quantity", () => ({ quantity: -1 }), "quantity", "must not be negative"],
    ["no quantity", () => ({ quantity: undefined }), "quantity", "is required"],
    ["a date more than a day ahead", () => ({ date_time: tomorrowPlus }), "date_time", "more than a day in the future"],
    ["a date without an offset", () => ({ date_time: "2026-11-20T10:00:00" }), "date_time", "ISO 8601"],
    ["an unknown field", () => ({ colour: "red" }), "colour", "unknown field"],
  ];
  for (const [what, body, field, reason] of bad) {
    it(`rejects ${what} (400 on ${field}), writing nothing`, async () => {
      const before = await s.database.prisma.usage.count();
      const res = await s.rest("POST", "/v1/usages/", {
        body: { subscription_line: meteredLine, quantity: 1, ...body() },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.fields[field]?.join(" "), JSON.stringify(res.body)).toContain(reason);
      expect(await s.database.prisma.usage.count()).toBe(before);
    });
  }

  it("a line of another organization is unknown; a cancelled subscription takes no usage (409)", async () => {
    const foreign = await s.rest("POST", "/v1/usages/", {
      key: s.keys.other,
      body: { subscription_line: meteredLine, quantity: 1 },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.fields.subscription_line[0]).toContain("unknown subscription line");
    await s.database.prisma.subscription.update({
      where: { id: subscriptionId },
      data: { status: "cancelled", cancelled: new Date() },
    });
    const cancelled = await s.rest("POST", "/v1/usages/", { body: { subscription_line: meteredLine, quantity: 1 } });
    expect(cancelled.status).toBe(409);
    await s.database.prisma.subscription.update({
      where: { id: subscriptionId },
      data: { status: "active", cancelled: null },
    });
  });

  it("GraphQL: createUsage, usages and deleteUsage with the same rules", async () => {
    const created = await s.graphql(
      `mutation($input: UsageInput!) { createUsage(input: $input) { id quantity invoice { id } subscriptionLine { id ` +
        `plan { usageScheme } } } }`,
      { input: { subscriptionLine: meteredLine, quantity: "2" } },
    );
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.createUsage).toMatchObject({
      quantity: "2",
      invoice: null,
      subscriptionLine: { id: meteredLine, plan: { usageScheme: "metered" } },
    });
    const listed = await s.graphql(
      `query($l: String) { usages(first: 100, where: { subscriptionLine: { equals: $l } }) { totalCount edges { node ` +
        `{ id } } } }`,
      { l: meteredLine },
    );
    expect(listed.body.data.usages.edges.map((e: any) => e.node.id)).toContain(created.body.data.createUsage.id);
    const bad = await s.graphql(`mutation($input: UsageInput!) { createUsage(input: $input) { id } }`, {
      input: { subscriptionLine: licensedLine, quantity: "1" },
    });
    expect(bad.body.errors[0].extensions.code).toBe("validation_error");
    const del = await s.graphql(`mutation($id: ID!) { deleteUsage(id: $id) { deleted } }`, {
      id: created.body.data.createUsage.id,
    });
    expect(del.body.data.deleteUsage.deleted).toBe(true);
  });
});
