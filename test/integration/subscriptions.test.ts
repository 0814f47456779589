/**
 * Subscriptions over REST and GraphQL (spec "Subscription", "Subscriptions"; docs/subscriptions.md):
 * create with every field and the defaults, bad input (400 naming the field, nothing written),
 * list filters and pagination, update rules (addons and date_start: 409 after the first billed cycle), cancel now or at
 * period end, pause and resume, tenancy, and the query count of a list.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { todayIn } from "../../src/domain/formats.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const PLAIN = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

let customerId: string;
let clpMonthly: any; // plan object as the catalogue prints it
let clpMonthly2: any;
let usdMonthly: any;
let clpYearly: any;
let metered: any;
let archivedPlan: any;
let otherOrgPlan: any;
let setupAddon: any;
let percentCoupon: any;
let clpCoupon: any;
let usdCoupon: any;
let expiredCoupon: any;

async function created(path: string, body: unknown, key?: string) {
  const res = await s.rest("POST", path, { body, key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function plansOf(body: Record<string, unknown>, key?: string) {
  return (await created("/v1/products/", { name: "Hosting", ...body }, key)).plans;
}

beforeAll(async () => {
  s = await startTestServer();
  customerId = (await created("/v1/customers/", chileanCustomer())).id;
  [clpMonthly, clpMonthly2, usdMonthly, clpYearly, metered, archivedPlan] = await plansOf({
    plans: [
      { name: "Pro", amount: 10000, currency: "CLP", frequency: "monthly" },
      { name: "Extra", amount: 2000, currency: "CLP", frequency: "monthly" },
      { name: "Pro USD", amount: 20, currency: "USD", frequency: "monthly" },
      { name: "Pro anual", amount: 100000, currency: "CLP", frequency: "yearly" },
      { name: "API", currency: "CLP", frequency: "monthly", usage_scheme: "metered", amount: 1 },
      { name: "Old", amount: 5000, currency: "CLP", frequency: "monthly" },
    ],
  });
  await s.database.prisma.plan.update({
    where: { id: archivedPlan.id },
    data: { status: "archived", archivedAt: new Date() },
  });
  [otherOrgPlan] = await plansOf({ plans: [{ name: "Theirs", amount: 1, currency: "CLP" }] }, s.keys.other);
  setupAddon = await created("/v1/addons/", {
    name: "Instalación",
    amount: 30000,
    currency: "CLP",
    rates: [
      { cycle: 1, percent: 50 },
      { cycle: 2, percent: 50 },
    ],
  });
  percentCoupon = await created("/v1/coupons/", {
    name: "10 %",
    amount: 10,
    duration_scheme: "limited",
    duration_times: 3,
  });
  clpCoupon = await created("/v1/coupons/", { name: "1000 CLP", discount_scheme: "$", amount: 1000, currency: "CLP" });
  usdCoupon = await created("/v1/coupons/", { name: "5 USD", discount_scheme: "$", amount: 5, currency: "USD" });
  expiredCoupon = await created("/v1/coupons/", { name: "Viejo", amount: 5 });
  await s.database.prisma.coupon.update({
    where: { id: expiredCoupon.id },
    data: { validUntil: new Date("2020-01-01T00:00:00Z") },
  });
});
afterAll(async () => s?.close());

async function subscribe(body: Record<string, unknown> = {}) {
  return created("/v1/subscriptions/", { customer: customerId, lines: [{ plan: clpMonthly.id }], ...body });
}

async function counts() {
  const p = s.database.prisma;
  const [subscriptions, lines, addons] = await Promise.all([
    p.subscription.count(),
    p.subscriptionLine.count(),
    p.subscriptionAddon.count(),
  ]);
  return { subscriptions, lines, addons };
}

/** Expects a 400 naming `field` and nothing written. */
async function expectRejected(method: string, path: string, body: unknown, field: string) {
  const before = await counts();
  const res = await s.rest(method, path, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe("validation_error");
  expect(Object.keys(res.body.error.fields ?? {}), JSON.stringify(res.body.error)).toContain(field);
  expect(await counts()).toEqual(before);
  return res.body.error;
}

describe("creating subscriptions over REST", () => {
  it(
    "creates a subscription with every field: computed dates, embedded customer with aggregations, full plan, addon " +
      "and coupon objects",
    async () => {
      const sub = await subscribe({
        document: "CL33",
        date_start: "2026-01-31",
        billing_cycles: 12,
        lines: [
          { plan: clpMonthly.id, quantity: 3, coupon: clpCoupon.id },
          { plan: { id: clpMonthly2.id }, quantity: "1.5" },
        ],
        addons: [{ addon: setupAddon.id, quantity: 2 }],
        coupon: percentCoupon.id,
        expiration_days: 15,
        references: [{ document_type: "801", folio: "OC-1234", date: "2026-01-20" }],
        note: "Contrato anual",
        metadata: { crm: "42" },
        tax_settings: { exempt: false },
        // server fields are accepted and ignored
        status: "cancelled",
        next_billing_cycle: 7,
        test_mode: false,
      });
      expect(sub).toMatchObject({
        document: "CL33",
        customer: {
          id: customerId,
          name: "Cliente SpA",
          state: "RM",
          country: "CL",
          aggregations: { balance: 0, sales: 0, sales_current_period: 0 },
        },
        test_mode: true,
        date_start: "2026-01-31",
        end_date: "2027-01-31",
        billing_cycles: 12,
        next_billing: "2026-01-31",
        next_billing_cycle: 1,
        previous_billing: null,
        coupon: percentCoupon,
        coupon_redemptions: 0,
        expiration_days: 15,
        references: [{ document_type: "801", folio: "OC-1234", date: "2026-01-20" }],
        note: "Contrato anual",
        metadata: { crm: "42" },
        tax_settings: { exempt: false },
        status: "active",
        paused: null,
        paused_reason: null,
        cancelled: null,
        cancel_reason: null,
        cancel_at_period_end: false,
      });
      expect(sub.id).toMatch(/^sub_/);
      expect(sub.customer.created).toMatch(PLAIN);
      expect(sub.created).toMatch(ISO);
      expect(sub.updated).toMatch(ISO);
      expect(sub.lines).toEqual([
        {
          id: expect.stringMatching(/^lin_/),
          plan: clpMonthly,
          quantity: 3,
          coupon: clpCoupon,
          coupon_redemptions: 0,
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
        },
        {
          id: expect.stringMatching(/^lin_/),
          plan: clpMonthly2,
          quantity: 1.5,
          coupon: null,
          coupon_redemptions: 0,
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
        },
      ]);
      expect(sub.addons).toEqual([
        {
          addon: setupAddon,
          addon_redemptions: 0,
          quantity: 2,
          rates: [
            { cycle: 1, percent: 50 },
            { cycle: 2, percent: 50 },
          ],
        },
      ]);
      expect((await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body).toEqual(sub);
      const row = await s.database.prisma.subscription.findUniqueOrThrow({ where: { id: sub.id } });
      expect(row.userEmail).toBe("ops@acme.cl");
    },
  );

  it(
    "defaults: CL33 for a Chilean customer, today in the organization's time zone, until cancelled, quantity 1, the " +
      "addon's rates",
    async () => {
      const org = await s.database.prisma.organization.findUniqueOrThrow({ where: { id: s.orgs.acme } });
      const sub = await subscribe({ addons: [{ addon: setupAddon.id }] });
      const today = todayIn(org.timeZone, new Date());
      expect(sub).toMatchObject({
        document: "CL33",
        date_start: today,
        next_billing: today,
        end_date: null,
        billing_cycles: null,
        coupon: null,
        expiration_days: 0,
        references: [],
        note: null,
        metadata: {},
        tax_settings: {},
        lines: [{ quantity: 1, coupon: null }],
        addons: [
          {
            quantity: 1,
            rates: [
              { cycle: 1, percent: 50 },
              { cycle: 2, percent: 50 },
            ],
          },
        ],
      });
    },
  );

  it(
    "accepts its own rates for a one-time addon, a metered line of quantity 1 and an end_date without " +
      "billing_cycles",
    async () => {
      const sub = await subscribe({
        date_start: "2026-03-01",
        end_date: "2026-09-01",
        lines: [{ plan: clpMonthly.id }, { plan: metered.id }],
        addons: [
          {
            addon: setupAddon.id,
            rates: [
              { cycle: 1, amount: 10000 },
              { cycle: 3, amount: 20000 },
            ],
          },
        ],
      });
      expect(sub).toMatchObject({
        end_date: "2026-09-01",
        billing_cycles: null,
        lines: [{ quantity: 1 }, { plan: { usage_scheme: "metered" }, quantity: 1 }],
      });
      expect(sub.addons[0].rates).toEqual([
        { cycle: 1, amount: 10000 },
        { cycle: 3, amount: 20000 },
      ]);
    },
  );

  it("refuses bad input with a 400 naming the field, writing nothing", async () => {
    const post = (body: Record<string, unknown>, field: string) =>
      expectRejected(
        "POST",
        "/v1/subscriptions/",
        { customer: customerId, lines: [{ plan: clpMonthly.id }], ...body },
        field,
      );
    await post({ customer: undefined }, "customer");
    const unknownCustomer = await post(
      { customer: (await created("/v1/customers/", chileanCustomer(), s.keys.other)).id },
      "customer",
    );
    expect(unknownCustomer.fields.customer[0]).toMatch(/unknown customer/);
    await post({ lines: [] }, "lines");
    await post({ lines: [{ plan: clpMonthly.id }, { plan: usdMonthly.id }] }, "lines.1.plan");
    await post({ lines: [{ plan: clpMonthly.id }, { plan: clpYearly.id }] }, "lines.1.plan");
    const foreign = await post({ lines: [{ plan: otherOrgPlan.id }] }, "lines.0.plan");
    expect(foreign.fields["lines.0.plan"]).toEqual([`unknown plan ${otherOrgPlan.id}`]);
    const archived = await post({ lines: [{ plan: archivedPlan.id }] }, "lines.0.plan");
    expect(archived.fields["lines.0.plan"][0]).toMatch(/archived/);
    await post({ lines: [{ plan: clpMonthly.id, quantity: -1 }] }, "lines.0.quantity");
    await post({ lines: [{ plan: clpMonthly.id, quantity: 0 }] }, "lines.0.quantity");
    await post({ lines: [{ plan: metered.id, quantity: 5 }] }, "lines.0.quantity");
    await post({ lines: [{ plan: clpMonthly.id, price: 5 }] }, "lines.0.price");
    await post({ colour: "red" }, "colour");
    const expired = await post({ coupon: expiredCoupon.id }, "coupon");
    expect(expired.fields.coupon[0]).toMatch(/expired/);
    await post({ coupon: usdCoupon.id }, "coupon");
    await post({ coupon: "cou_nope" }, "coupon");
    await post({ lines: [{ plan: clpMonthly.id, coupon: expiredCoupon.id }] }, "lines.0.coupon");
    await post({ addons: [{ addon: "add_nope" }] }, "addons.0.addon");
    await post({ lines: [{ plan: usdMonthly.id }], addons: [{ addon: setupAddon.id }] }, "addons.0.addon");
    await post({ addons: [{ addon: setupAddon.id, quantity: 0 }] }, "addons.0.quantity");
    await post({ addons: [{ addon: setupAddon.id, quantity: 1.5 }] }, "addons.0.quantity");
    await post({ addons: [{ addon: setupAddon.id, rates: [{ cycle: 1, percent: 40 }] }] }, "addons.0.rates");
    await post({ document: "CL52" }, "document");
    await post({ document: "XX99" }, "document");
    await post({ expiration_days: -1 }, "expiration_days");
    await post({ billing_cycles: 0 }, "billing_cycles");
    await post({ date_start: "2026-05-01", end_date: "2026-04-01" }, "end_date");
    await post({ date_start: "2026-05-01", billing_cycles: 2, end_date: "2026-06-01" }, "end_date");
    await post({ references: "OC-1" }, "references");
  });
});

describe("listing subscriptions", () => {
  it("filters by customer, status and created, and pages", async () => {
    const other = (await created("/v1/customers/", chileanCustomer({ name: "Otro" }))).id;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await subscribe({ customer: other })).id);
    await s.rest("DELETE", `/v1/subscriptions/${ids[0]}/`);
    const byCustomer = await s.rest("GET", `/v1/subscriptions/?customer=${other}&page_size=2`);
    expect(byCustomer.status).toBe(200);
    expect(byCustomer.body.count).toBe(3);
    expect(byCustomer.body.results.map((r: any) => r.id)).toEqual([ids[2], ids[1]]);
    expect(byCustomer.body.next).toContain("page=2");
    const page2 = await s.rest("GET", `/v1/subscriptions/?customer=${other}&page_size=2&page=2`);
    expect(page2.body.results.map((r: any) => r.id)).toEqual([ids[0]]);
    const cancelled = await s.rest("GET", `/v1/subscriptions/?customer=${other}&status=cancelled`);
    expect(cancelled.body.results.map((r: any) => r.id)).toEqual([ids[0]]);
    const active = await s.rest("GET", `/v1/subscriptions/?customer=${other}&status__in=active,paused`);
    expect(active.body.count).toBe(2);
    expect((await s.rest("GET", `/v1/subscriptions/?customer=${other}&created__gte=2000-01-01`)).body.count).toBe(3);
    expect((await s.rest("GET", `/v1/subscriptions/?customer=${other}&created__lte=2000-01-01`)).body.count).toBe(0);
    expect((await s.rest("GET", "/v1/subscriptions/?plan=x")).status).toBe(400);
    // another organization sees none of them
    expect((await s.rest("GET", `/v1/subscriptions/?customer=${other}`, { key: s.keys.other })).body.count).toBe(0);
  });
});

describe("updating subscriptions", () => {
  it(
    "updates note, metadata (merge), tax settings, references, expiration days, billing cycles and " + "the coupon",
    async () => {
      const sub = await subscribe({ date_start: "2026-02-10", metadata: { a: "1", b: "2" } });
      const res = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: {
          note: "n",
          metadata: { a: "", c: "3" },
          tax_settings: { x: 1 },
          references: [{ folio: "9" }],
          expiration_days: 30,
          billing_cycles: 3,
          coupon: percentCoupon.id,
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        note: "n",
        metadata: { b: "2", c: "3" },
        tax_settings: { x: 1 },
        references: [{ folio: "9" }],
        expiration_days: 30,
        billing_cycles: 3,
        end_date: "2026-05-10",
        coupon: { id: percentCoupon.id },
      });
      const cleared = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: { coupon: null, billing_cycles: null },
      });
      expect(cleared.body).toMatchObject({ coupon: null, billing_cycles: null, end_date: null, note: "n" });
      await expectRejected("PATCH", `/v1/subscriptions/${sub.id}/`, { coupon: expiredCoupon.id }, "coupon");
      await expectRejected(
        "PATCH",
        `/v1/subscriptions/${sub.id}/`,
        { customer: (await created("/v1/customers/", chileanCustomer())).id },
        "customer",
      );
    },
  );

  it(
    "replaces lines, addons and date_start before the first billed cycle; afterwards addons and date_start are a " +
      "409 unless sent back unchanged (lines: test/integration/proration.test.ts)",
    async () => {
      const sub = await subscribe({ date_start: "2026-02-10" });
      const replaced = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, {
        body: {
          date_start: "2026-03-01",
          lines: [{ plan: clpMonthly2.id, quantity: 2 }, { plan: clpMonthly.id }],
          addons: [{ addon: setupAddon.id }],
        },
      });
      expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
      expect(replaced.body).toMatchObject({
        date_start: "2026-03-01",
        next_billing: "2026-03-01",
        lines: [
          { plan: { id: clpMonthly2.id }, quantity: 2 },
          { plan: { id: clpMonthly.id }, quantity: 1 },
        ],
        addons: [{ addon: { id: setupAddon.id } }],
      });
      await expectRejected(
        "PATCH",
        `/v1/subscriptions/${sub.id}/`,
        { lines: [{ plan: clpMonthly.id }, { plan: usdMonthly.id }] },
        "lines.1.plan",
      );
      // kept addons must follow the lines' currency
      await expectRejected(
        "PATCH",
        `/v1/subscriptions/${sub.id}/`,
        { lines: [{ plan: usdMonthly.id }] },
        "addons.0.addon",
      );
      expect(await s.database.prisma.subscriptionLine.count({ where: { subscriptionId: sub.id } })).toBe(2);

      await s.database.prisma.subscription.update({
        where: { id: sub.id },
        data: { nextBillingCycle: 2, nextBilling: new Date("2026-04-01"), previousBilling: new Date("2026-03-01") },
      });
      const current = (await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body;
      // a retrieved subscription sent back is not a change
      const same = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, { body: { ...current, note: "again" } });
      expect(same.status, JSON.stringify(same.body)).toBe(200);
      expect(same.body).toMatchObject({ note: "again", next_billing: "2026-04-01", lines: current.lines });
      for (const body of [{ addons: [] }, { date_start: "2026-03-05" }]) {
        const refused = await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, { body });
        expect(refused.status, JSON.stringify(refused.body)).toBe(409);
        expect(refused.body.error.code).toBe("invalid_state");
        expect(refused.body.error.message).toMatch(/proration/);
      }
      // billing cycles can not go below the billed ones
      await expectRejected("PATCH", `/v1/subscriptions/${sub.id}/`, { billing_cycles: 0 }, "billing_cycles");
      expect(
        (await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, { body: { billing_cycles: 1 } })).body.end_date,
      ).toBe("2026-04-01");
    },
  );
});

describe("cancelling, pausing and resuming", () => {
  it(
    "cancels now with the default reason and answers 200 with the subscription; a second cancel " + "is a 409",
    async () => {
      const sub = await subscribe();
      const res = await s.rest("DELETE", `/v1/subscriptions/${sub.id}/`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: sub.id,
        status: "cancelled",
        cancel_reason: "requested_by_customer",
        cancel_at_period_end: false,
      });
      expect(res.body.cancelled).toMatch(ISO);
      const again = await s.rest("DELETE", `/v1/subscriptions/${sub.id}/?cancel_reason=no_card`);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe("invalid_state");
      for (const body of [{ note: "x" }])
        expect((await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, { body })).status).toBe(409);
      const pause = await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { id } }`, { id: sub.id });
      expect(pause.body.errors[0].extensions.code).toBe("invalid_state");
    },
  );

  it(
    "cancels with a reason, or at period end (status stays active, cancelled null), and checks the " + "parameters",
    async () => {
      const now = await subscribe();
      const withReason = await s.rest(
        "DELETE",
        `/v1/subscriptions/${now.id}/?cancel_reason=no_card&at_period_end=false`,
      );
      expect(withReason.body).toMatchObject({ status: "cancelled", cancel_reason: "no_card" });

      const later = await subscribe();
      const bad = await s.rest("DELETE", `/v1/subscriptions/${later.id}/?at_period_end=yes`);
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.error.fields)).toEqual(["at_period_end"]);
      expect((await s.rest("DELETE", `/v1/subscriptions/${later.id}/?reason=x`)).status).toBe(400);
      expect((await s.rest("DELETE", `/v1/subscriptions/${later.id}/?cancel_reason=${"x".repeat(256)}`)).status).toBe(
        400,
      );
      expect((await s.rest("GET", `/v1/subscriptions/${later.id}/`)).body.status).toBe("active");

      const scheduled = await s.rest("DELETE", `/v1/subscriptions/${later.id}/?at_period_end=true`);
      expect(scheduled.status).toBe(200);
      expect(scheduled.body).toMatchObject({
        status: "active",
        cancelled: null,
        cancel_at_period_end: true,
        cancel_reason: "requested_by_customer",
      });
      expect((await s.rest("DELETE", `/v1/subscriptions/${later.id}/?at_period_end=true`)).status).toBe(409);
      // cancelling now is still possible
      expect((await s.rest("DELETE", `/v1/subscriptions/${later.id}/`)).body.status).toBe("cancelled");
    },
  );

  it("pauses and resumes over GraphQL, refusing the moves the status machine does not have", async () => {
    const sub = await subscribe();
    const FIELDS = "id status paused pausedReason cancelled cancelReason cancelAtPeriodEnd";
    const resumeActive = await s.graphql(`mutation($id: ID!) { resumeSubscription(id: $id) { id } }`, { id: sub.id });
    expect(resumeActive.body.errors[0].extensions.code).toBe("invalid_state");
    const paused = await s.graphql(
      `mutation($id: ID!) { pauseSubscription(id: $id, reason: "vacaciones") { ${FIELDS} } }`,
      { id: sub.id },
    );
    expect(paused.body.data.pauseSubscription).toMatchObject({ status: "paused", pausedReason: "vacaciones" });
    expect(paused.body.data.pauseSubscription.paused).toBeTruthy();
    const twice = await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { id } }`, { id: sub.id });
    expect(twice.body.errors[0].extensions.code).toBe("invalid_state");
    expect((await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body).toMatchObject({
      status: "paused",
      paused_reason: "vacaciones",
      paused: expect.stringMatching(ISO),
    });
    const resumed = await s.graphql(`mutation($id: ID!) { resumeSubscription(id: $id) { ${FIELDS} } }`, { id: sub.id });
    expect(resumed.body.data.resumeSubscription).toMatchObject({ status: "active", paused: null, pausedReason: null });
    const cancelled = await s.graphql(
      `mutation($id: ID!) { cancelSubscription(id: $id, cancelReason: "no_card", atPeriodEnd: false) { ${FIELDS} } }`,
      { id: sub.id },
    );
    expect(cancelled.body.data.cancelSubscription).toMatchObject({
      status: "cancelled",
      cancelReason: "no_card",
      cancelAtPeriodEnd: false,
    });
    const resumeCancelled = await s.graphql(`mutation($id: ID!) { resumeSubscription(id: $id) { id } }`, {
      id: sub.id,
    });
    expect(resumeCancelled.body.errors[0].extensions.code).toBe("invalid_state");
  });
});

describe("GraphQL", () => {
  it("creates, reads as a node, updates and lists with the same rules as REST", async () => {
    const createdSub = await s.graphql(
      `mutation($input: SubscriptionInput!) { createSubscription(input: $input) { id status dateStart endDate ` +
        `nextBilling document { id } lines { plan { id frequency { id } } quantity } customer { aggregations { ` +
        `balance } } } }`,
      {
        input: {
          customer: customerId,
          dateStart: "2026-06-15",
          billingCycles: 2,
          lines: [{ plan: clpYearly.id, quantity: "2" }],
        },
      },
    );
    expect(createdSub.body.errors).toBeUndefined();
    const sub = createdSub.body.data.createSubscription;
    expect(sub).toMatchObject({
      status: "active",
      dateStart: "2026-06-15",
      endDate: "2028-06-15",
      nextBilling: "2026-06-15",
      document: { id: "CL33" },
      lines: [{ plan: { id: clpYearly.id, frequency: { id: "yearly" } }, quantity: "2" }],
    });
    const node = await s.graphql(`query($id: ID!) { node(id: $id) { __typename ... on Subscription { id } } }`, {
      id: sub.id,
    });
    expect(node.body.data.node).toEqual({ __typename: "Subscription", id: sub.id });
    const bad = await s.graphql(`mutation($input: SubscriptionInput!) { createSubscription(input: $input) { id } }`, {
      input: { customer: customerId, lines: [{ plan: clpMonthly.id }, { plan: clpYearly.id }] },
    });
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: "validation_error",
      fields: { "lines.1.plan": [expect.stringMatching(/yearly|monthly/)] },
    });
    const updated = await s.graphql(
      `mutation($id: ID!, $input: SubscriptionInput!) { updateSubscription(id: $id, input: $input) { note metadata } }`,
      { id: sub.id, input: { note: "g", metadata: { k: "v" } } },
    );
    expect(updated.body.data.updateSubscription).toEqual({ note: "g", metadata: { k: "v" } });
    const list = await s.graphql(
      `query($c: String) { subscriptions(first: 100, where: { customer: { equals: $c }, status: { equals: active } ` +
        `}) { totalCount edges { node { id } } } }`,
      { c: customerId },
    );
    expect(list.body.data.subscriptions.edges.map((e: any) => e.node.id)).toContain(sub.id);
  });
});

describe("tenancy", () => {
  it("answers 404 for another organization's or mode's subscription, on every path", async () => {
    const sub = await subscribe();
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      expect((await s.rest("GET", `/v1/subscriptions/${sub.id}/`, { key })).status).toBe(404);
      expect((await s.rest("PATCH", `/v1/subscriptions/${sub.id}/`, { key, body: { note: "x" } })).status).toBe(404);
      expect((await s.rest("DELETE", `/v1/subscriptions/${sub.id}/`, { key })).status).toBe(404);
      const pause = await s.graphql(`mutation($id: ID!) { pauseSubscription(id: $id) { id } }`, { id: sub.id }, key);
      expect(pause.body.errors[0].extensions.code).toBe("not_found");
    }
    expect((await s.rest("GET", "/v1/subscriptions/sub_unknown/")).status).toBe(404);
    expect((await s.rest("GET", `/v1/subscriptions/${sub.id}/`)).body.status).toBe("active");
  });
});

describe("query counts (no N+1)", () => {
  it(
    "loads a subscription list with lines, plans, coupons, addons and customer aggregations in the same queries for " +
      "2 and 10 subscriptions",
    async () => {
      // first: 20 (was 50): with every nested list counted at 5 items, 50 subscriptions with lines and addons with
      // rates are 1,800 rows, over the rows limit (docs/limits.md)
      const LIST =
        `query($c: [String!]) { subscriptions(first: 20, where: { customer: { in: $c } }) { totalCount ` +
        `edges { node { id customer { name aggregations { balance sales } } document { id } lines { plan { id ` +
        `currency { id } frequency { id } product { id } } coupon { id currency { id } } } addons { addon { id ` +
        `currency { id } } rates { cycle } } coupon { id } } } } }`;
      const customers: string[] = [];
      const add = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const customer = (await created("/v1/customers/", chileanCustomer({ name: `Q${i}` }))).id;
          customers.push(customer);
          await subscribe({
            customer,
            coupon: percentCoupon.id,
            lines: [{ plan: clpMonthly.id, coupon: clpCoupon.id }, { plan: clpMonthly2.id }],
            addons: [{ addon: setupAddon.id }],
          });
        }
      };
      const run = async () => {
        s.queries.length = 0;
        const res = await s.graphql(LIST, { c: customers });
        expect(res.body.errors).toBeUndefined();
        return { queries: [...s.queries], count: res.body.data.subscriptions.totalCount };
      };
      await add(2);
      const two = await run();
      await add(8);
      const ten = await run();
      expect(two.count).toBe(2);
      expect(ten.count).toBe(10);
      expect(ten.queries).toEqual(two.queries);
      expect(ten.queries.filter((q) => q === "Subscription.findMany")).toHaveLength(1);
    },
  );
});
