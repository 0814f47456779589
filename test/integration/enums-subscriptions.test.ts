/**
 * Closed sets of plans, subscriptions, test clocks and swaps as GraphQL enums (issue 16; docs/graphql.md
 * "Changes in this release"), with REST keeping the spec's strings: values out as the enum, an
 * unknown value refused by GraphQL validation, enum filters; REST bodies and filters with the
 * spec's strings in and out and a 400 naming the field. Also the references that became objects
 * (Usage.subscriptionLine, UpcomingInvoice.subscription, SubscriptionPendingLine.line) and
 * SubscriptionPendingChanges.requested as DateTime.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customerId: string;
let plans: { pro: string; business: string; api: string };
beforeAll(async () => {
  s = await startTestServer();
  const product = await s.rest("POST", "/v1/products/", {
    body: {
      name: "Nube",
      plans: [
        { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
        { name: "Business", amount: 25000, currency: "CLP", frequency: { id: "monthly" } },
        {
          name: "API",
          amount: 100,
          currency: "CLP",
          frequency: "monthly",
          usage_scheme: "metered",
          usage_aggregation: "last_during_period",
        },
      ],
    },
  });
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  plans = { pro: product.body.plans[0].id, business: product.body.plans[1].id, api: product.body.plans[2].id };
  const customer = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
  expect(customer.status, JSON.stringify(customer.body)).toBe(201);
  customerId = customer.body.id;
});
afterAll(async () => s?.close());

const validationMessage = (res: { body: any }) => {
  expect(res.body.data ?? null).toBeNull();
  expect(res.body.errors[0].extensions.code).toBe("validation_error");
  return res.body.errors[0].message as string;
};

describe("plans and products", () => {
  it("GraphQL: enum values in and out, an unknown value refused by validation, enum filters", async () => {
    const res = await s.graphql(
      `mutation { createProduct(input: { name: "Almacenamiento", plans: [
        { currency: "CLP", frequency: quarterly, usageScheme: metered, usageAggregation: last_ever,
        tiersMode: graduated,
          tiers: [{ upTo: "10", unitAmount: "0" }, { unitAmount: "50" }] }
      ] }) { id status plans { id status frequency { id interval intervalCount } usageScheme usageAggregation
      tiersMode } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    const product = res.body.data.createProduct;
    expect(product).toMatchObject({
      status: "active",
      plans: [
        {
          status: "active",
          frequency: { id: "quarterly", interval: "month", intervalCount: 3 },
          usageScheme: "metered",
          usageAggregation: "last_ever",
          tiersMode: "graduated",
        },
      ],
    });
    const planId = product.plans[0].id;

    expect(
      validationMessage(
        await s.graphql(
          `mutation { createPlan(input: { product: "${product.id}", currency: "CLP", amount: "1", usageScheme: ` +
            `rented }) { id } }`,
        ),
      ),
    ).toMatch(/Value "rented" does not exist in "PlanUsageScheme" enum/);
    // a string literal is not an enum value either
    expect(
      validationMessage(
        await s.graphql(
          `mutation { createPlan(input: { product: "${product.id}", currency: "CLP", amount: "1", frequency: ` +
            `"monthly" }) { id } }`,
        ),
      ),
    ).toMatch(/BillingFrequency/);
    // variables carry the value's name as a string
    const viaVariables = await s.graphql(
      `mutation($input: PlanInput!) { createPlan(input: $input) { frequency { id } tiersMode } }`,
      {
        input: { product: product.id, currency: "CLP", amount: "1", frequency: "yearly" },
      },
    );
    expect(viaVariables.body.data.createPlan).toEqual({ frequency: { id: "yearly" }, tiersMode: null });
    expect(
      (
        await s.graphql(`mutation($input: PlanInput!) { createPlan(input: $input) { id } }`, {
          input: { product: product.id, currency: "CLP", amount: "1", frequency: "fortnightly" },
        })
      ).body.errors[0].extensions.code,
    ).toBe("validation_error");

    const quarterly = await s.graphql(
      `{ plans(first: 50, where: { frequency: { equals: quarterly }, status: { in: [active, archived] } }) { edges { ` +
        `node { id } } } }`,
    );
    expect(quarterly.body.data.plans.edges.map((e: any) => e.node.id)).toEqual([planId]);
    const archived = await s.graphql(`{ products(first: 50, where: { status: { equals: archived } }) { totalCount } }`);
    expect(archived.body.data.products.totalCount).toBe(0);
    expect(
      validationMessage(
        await s.graphql(`{ plans(first: 5, where: { frequency: { equals: biweekly } }) { totalCount } }`),
      ),
    ).toMatch(/biweekly/);

    const introspection = await s.graphql(
      `{ __type(name: "PlanUsageAggregation") { kind enumValues { name description } } }`,
    );
    expect(introspection.body.data.__type.kind).toBe("ENUM");
    expect(introspection.body.data.__type.enumValues.map((v: any) => v.name).sort()).toEqual([
      "last_during_period",
      "last_ever",
      "max",
      "sum",
    ]);
    expect(introspection.body.data.__type.enumValues.every((v: any) => v.description)).toBe(true);
  });

  it(
    "REST: the spec's strings in and out; a value outside the set is a 400 naming the field; " + "enum filters",
    async () => {
      const created = await s.rest("POST", "/v1/plans/", {
        body: {
          product: (await s.rest("GET", `/v1/plans/${plans.pro}/`)).body.product,
          currency: "CLP",
          frequency: { id: "weekly", name: "Weekly" },
          tiers_mode: "",
          amount: 5,
          usage_aggregation: "max",
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({
        frequency: { id: "weekly", name: "Weekly" },
        usage_scheme: "licensed",
        usage_aggregation: "max",
        tiers_mode: null,
        status: "active",
      });

      const bad = await s.rest("POST", "/v1/plans/", {
        body: {
          product: created.body.product,
          currency: "CLP",
          amount: 1,
          usage_scheme: "rented",
          frequency: "month",
          tiers_mode: "stairs",
        },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe("validation_error");
      expect(bad.body.error.fields).toEqual({
        usage_scheme: ["must be one of licensed, metered"],
        frequency: ["must be one of daily, weekly, monthly, quarterly, yearly"],
        tiers_mode: ["must be one of graduated, volume (or null: flat per unit)"],
      });
      const nested = await s.rest("POST", "/v1/products/", {
        body: {
          name: "X",
          plans: [
            { currency: "CLP", amount: 1 },
            { currency: "CLP", amount: 1, usage_aggregation: "avg" },
          ],
        },
      });
      expect([nested.status, nested.body.error.fields]).toEqual([
        400,
        { "plans.1.usage_aggregation": ["must be one of sum, max, last_during_period, last_ever"] },
      ]);
      const wrongType = await s.rest("POST", "/v1/plans/", {
        body: { product: created.body.product, currency: "CLP", amount: 1, usage_scheme: 7 },
      });
      expect([wrongType.status, Object.keys(wrongType.body.error.fields)]).toEqual([400, ["usage_scheme"]]);

      const weekly = await s.rest("GET", "/v1/plans/?frequency=weekly&status__in=active,archived");
      expect(weekly.body.results.map((p: any) => p.id)).toEqual([created.body.id]);
      const filterBad = await s.rest("GET", "/v1/plans/?frequency=month");
      expect([filterBad.status, filterBad.body.error.fields.frequency]).toEqual([
        400,
        [expect.stringMatching(/^must be one of .*monthly/)],
      ]);
      expect((await s.rest("GET", "/v1/products/?status=gone")).status).toBe(400);
      expect((await s.rest("GET", "/v1/products/?status=active")).body.count).toBeGreaterThan(0);
    },
  );
});

describe("subscriptions", () => {
  it(
    "status and prorationBehavior are enums; pending lines point at the line they replace; requested is a " +
      "DateTime",
    async () => {
      const created = await s.rest("POST", "/v1/subscriptions/", {
        body: { customer: customerId, date_start: "2026-11-01", lines: [{ plan: plans.pro, quantity: 2 }] },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const sub = created.body;
      // cycle 1 billed (as the proration tests do), so a change of lines can wait for the renewal
      await s.database.prisma.subscription.update({
        where: { id: sub.id },
        data: { nextBillingCycle: 2, nextBilling: new Date("2026-12-01"), previousBilling: new Date("2026-11-01") },
      });
      const scheduled = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { lines: [{ plan: plans.business }, { plan: plans.pro }], at_period_end: true },
      });
      expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
      // REST keeps the stored strings: the pending line's id and `requested` as stored
      const pending = scheduled.body.pending_changes;
      expect(pending).toMatchObject({
        cycle: 2,
        requested: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      expect(pending.lines[0].id).toBe(sub.lines[0].id);
      expect(pending.lines[1].id).toMatch(/^lin_/);
      expect(pending.lines[1].id).not.toBe(sub.lines[0].id);

      const res = await s.graphql(
        `query($id: ID!) { node(id: $id) { ... on Subscription { status pendingChanges { requested lines { line { id ` +
          `quantity plan { id } } plan quantity } } } } }`,
        { id: sub.id },
      );
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.node).toEqual({
        status: "active",
        pendingChanges: {
          requested: new Date(pending.requested).toISOString(),
          lines: [
            {
              line: { id: sub.lines[0].id, quantity: "2", plan: { id: plans.pro } },
              plan: plans.business,
              quantity: "1",
            },
            { line: null, plan: plans.pro, quantity: "1" },
          ],
        },
      });
      const types = await s.graphql(
        `{ pendingLine: __type(name: "SubscriptionPendingLine") { fields(includeDeprecated: true) { name isDeprecated
        deprecationReason type { name ofType { name } } } }
         changes: __type(name: "SubscriptionPendingChanges") { fields { name type { name ofType { name } } } } }`,
      );
      const id = types.body.data.pendingLine.fields.find((f: any) => f.name === "id");
      expect(id).toMatchObject({
        isDeprecated: true,
        deprecationReason: expect.stringContaining("line { id }"),
        type: { ofType: { name: "String" } },
      });
      expect(types.body.data.changes.fields.find((f: any) => f.name === "requested").type.ofType.name).toBe("DateTime");

      const other = await s.rest("POST", "/v1/subscriptions/", {
        body: { customer: customerId, lines: [{ plan: plans.pro }] },
      });
      expect(
        (await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { status } }`, { id: other.body.id })).body
          .data.pauseSubscription.status,
      ).toBe("paused");
      const paused = await s.graphql(
        `query($c: String) { subscriptions(first: 10, where: { customer: { equals: $c }, status: { in: ` +
          `[paused] } }) { ` +
          `edges { node { id status } } } }`,
        { c: customerId },
      );
      expect(paused.body.data.subscriptions.edges.map((e: any) => e.node)).toEqual([
        { id: other.body.id, status: "paused" },
      ]);
      expect(
        validationMessage(
          await s.graphql(`{ subscriptions(first: 1, where: { status: { equals: PAUSED } }) { totalCount } }`),
        ),
      ).toMatch(/PAUSED/);
      expect(
        (await s.rest("GET", `/v1/subscriptions/?customer=${customerId}&status=paused`)).body.results.map(
          (x: any) => x.id,
        ),
      ).toEqual([other.body.id]);
      const badFilter = await s.rest("GET", "/v1/subscriptions/?status=on_hold");
      expect([badFilter.status, badFilter.body.error.fields.status]).toEqual([
        400,
        ["must be one of active, cancelled, past_due, paused"],
      ]);

      // prorationBehavior: REST string checked with the same message as before; GraphQL the enum
      const badBehavior = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { lines: [{ plan: plans.business }], proration_behavior: "later" },
      });
      expect([badBehavior.status, badBehavior.body.error.fields]).toEqual([
        400,
        { proration_behavior: ["must be one of create_prorations, none, always_invoice"] },
      ]);
      const none = await s.graphql(
        `mutation($id: ID!) { updateSubscription(id: $id, input: { lines: [{ plan: "${plans.business}" }], ` +
          `prorationBehavior: none }) { lines { plan { id } } pendingChanges { cycle } } }`,
        {
          id: sub.id,
        },
      );
      expect(none.body.errors).toBeUndefined();
      expect(none.body.data.updateSubscription).toEqual({
        lines: [{ plan: { id: plans.business } }],
        pendingChanges: null,
      });
    },
  );

  it(
    "Usage.subscriptionLine and UpcomingInvoice.subscription are objects; REST prints their ids; discountScheme is " +
      "the DiscountScheme enum",
    async () => {
      const sub = (
        await s.rest("POST", "/v1/subscriptions/", {
          body: { customer: customerId, date_start: "2026-11-01", lines: [{ plan: plans.pro }, { plan: plans.api }] },
        })
      ).body;
      const metered = sub.lines[1].id;
      const usage = await s.graphql(
        `mutation($line: ID!) { createUsage(input: { subscriptionLine: $line, quantity: "3", dateTime: ` +
          `"2026-11-05T10:00:00Z" }) { id subscriptionLine { id plan { usageScheme usageAggregation } } } }`,
        {
          line: metered,
        },
      );
      expect(usage.body.errors).toBeUndefined();
      expect(usage.body.data.createUsage.subscriptionLine).toEqual({
        id: metered,
        plan: { usageScheme: "metered", usageAggregation: "last_during_period" },
      });
      const rest = await s.rest("GET", `/v1/usages/?subscription_line=${metered}`);
      expect(rest.body.results.map((u: any) => [u.id, u.subscription_line])).toEqual([
        [usage.body.data.createUsage.id, metered],
      ]);

      const preview = await s.graphql(
        `query($id: ID!) { upcomingInvoice(subscription: $id) { subscription { id status customer { id } } ` +
          `discountScheme lines { discountScheme } } }`,
        { id: sub.id },
      );
      expect(preview.body.errors).toBeUndefined();
      expect(preview.body.data.upcomingInvoice.subscription).toEqual({
        id: sub.id,
        status: "active",
        customer: { id: customerId },
      });
      expect(preview.body.data.upcomingInvoice.discountScheme).toBe("percent");
      const restPreview = await s.rest("GET", `/v1/subscriptions/${sub.id}/upcoming_invoice/`);
      expect(restPreview.status, JSON.stringify(restPreview.body)).toBe(200);
      expect(restPreview.body).toMatchObject({ subscription: sub.id, discount_scheme: "%" });
      expect(restPreview.body.lines.every((l: any) => l.discount_scheme === "%")).toBe(true);
    },
  );
});

describe("test clocks and swaps", () => {
  it("TestClock.status is the TestClockStatus enum", async () => {
    const clock = await s.graphql(
      `mutation { createTestClock(input: { frozenTime: "2026-01-01T00:00:00Z" }) { id status } }`,
    );
    expect(clock.body.data.createTestClock.status).toBe("ready");
    const type = await s.graphql(
      `{ __type(name: "TestClock") { fields { name type { kind ofType { name kind } } } } }`,
    );
    expect(type.body.data.__type.fields.find((f: any) => f.name === "status").type.ofType).toEqual({
      name: "TestClockStatus",
      kind: "ENUM",
    });
    expect((await s.rest("GET", `/v1/test_clocks/${clock.body.data.createTestClock.id}/`)).body.status).toBe("ready");
  });

  it(
    "swap status: REST filters stay case-insensitive, an unknown code is a 400; GraphQL refuses a value outside " +
      "SwapReplyStatus",
    async () => {
      expect((await s.rest("GET", "/v1/billers/built_in/swaps/?status=erm")).status).toBe(200);
      const bad = await s.rest("GET", "/v1/billers/built_in/swaps/?status__in=ERM,OK");
      expect([bad.status, bad.body.error.fields["status__in"]]).toEqual([
        400,
        ["must be one of ACD, ERM, RCD, RFP, RFT"],
      ]);
      expect(
        validationMessage(await s.graphql(`{ swaps(first: 1, where: { status: { equals: OK } }) { totalCount } }`)),
      ).toMatch(/SwapReplyStatus/);
      expect(
        validationMessage(await s.graphql(`mutation { updateSwap(id: "swa_x", input: { status: acd }) { id } }`)),
      ).toMatch(/acd/);
      const body = await s.rest("PATCH", "/v1/billers/built_in/swaps/swa_nope/", { body: { status: "OK" } });
      expect([body.status, body.body.error.fields]).toEqual([
        400,
        { status: ["must be one of ACD, ERM, RCD, RFP, RFT, not OK"] },
      ]);
    },
  );
});
