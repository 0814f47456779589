/**
 * Payments and sources over REST and GraphQL (spec "Payment", "Payments", "Limits";
 * docs/payments.md): test cards, every status move, the double-charge guard under concurrency,
 * the redirect flow through the hosted checkout's HTTP endpoints, limits and tenancy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customerId: string;
beforeAll(async () => {
  s = await startTestServer();
  customerId = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const PLAIN = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** A finalized CL33 invoice of docs/invoice-totals.md's worked example: total 2916. */
async function finalizedInvoice(customer = customerId) {
  const inv = (
    await s.rest("POST", "/v1/invoices/", {
      body: {
        customer,
        lines: [
          { name: "Consultoría", quantity: 2, amount: 1000 },
          { name: "Soporte", amount: 500, discount: 10 },
        ],
      },
    })
  ).body;
  return (await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`)).body;
}

async function card(token = "tok_visa", customer: string | null = customerId) {
  const res = await s.rest("POST", "/v1/sources/", {
    body: { gateway: "test", data: { token }, ...(customer ? { customer } : {}) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function payment(body: Record<string, unknown> = {}) {
  const res = await s.rest("POST", "/v1/payments/", {
    body: { amount: 2916, currency: "CLP", customer: customerId, description: "Factura 1", ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const authorize = (id: string, source: string, key?: string) =>
  s.rest("POST", `/v1/payments/${id}/authorize/`, { body: { source }, key });

describe("sources", () => {
  it("creates a reusable test card source and retrieves it", async () => {
    const source = await card("tok_mastercard");
    expect(source).toEqual({
      id: expect.stringMatching(/^sou_/),
      amount: null,
      description: null,
      return_url: null,
      status: "chargeable",
      metadata: {},
      created: expect.stringMatching(ISO),
      updated: expect.stringMatching(ISO),
      customer: customerId,
      gateway: "test",
      usage: "reusable",
      flow: "none",
      data: { token: "tok_mastercard", brand: "mastercard", last4: "4444" },
    });
    expect((await s.rest("GET", `/v1/sources/${source.id}/`)).body).toEqual(source);
    // a customer lists its sources
    expect((await s.rest("GET", `/v1/customers/${customerId}/`)).body.sources.map((x: any) => x.id)).toContain(
      source.id,
    );
  });

  it("creates a single-use redirect source whose data.redirect_url is the hosted checkout", async () => {
    const res = await s.rest("POST", "/v1/sources/", {
      body: { gateway: "redirect", return_url: "https://shop.example/return" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      gateway: "redirect",
      usage: "single_use",
      flow: "redirect",
      status: "chargeable",
      return_url: "https://shop.example/return",
    });
    expect(res.body.data.redirect_url).toMatch(new RegExp(`^${s.url}/checkout/chk_[0-9A-Za-z]{32}$`));
    const row = await s.database.prisma.source.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.checkoutTokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.data.redirect_url).not.toContain(row.checkoutTokenHash);
  });

  const bad: [string, Record<string, unknown>, string, string | null][] = [
    ["no gateway", { data: { token: "tok_visa" } }, "gateway", "is required"],
    [
      "an unknown gateway",
      { gateway: "stripe", data: { token: "tok_visa" } },
      "gateway",
      "unknown or disabled gateway stripe",
    ],
    [
      "an unknown test token",
      { gateway: "test", data: { token: "tok_nope" } },
      "data.token",
      "must be a test card token: tok_visa",
    ],
    [
      "a single-use test card",
      { gateway: "test", usage: "single_use", data: { token: "tok_visa" } },
      "usage",
      "reusable",
    ],
    ["a reusable redirect source", { gateway: "redirect", usage: "reusable" }, "usage", "single_use"],
    ["a bad return_url", { gateway: "redirect", return_url: "shop" }, "return_url", "http(s)"],
    ["an unknown field", { gateway: "test", data: { token: "tok_visa" }, colour: 1 }, "colour", "unknown field"],
    [
      "an unknown customer",
      { gateway: "test", data: { token: "tok_visa" }, customer: "cus_other" },
      "customer",
      "unknown customer",
    ],
  ];
  for (const [what, body, field, reason] of bad) {
    it(`rejects ${what} (400 on ${field}), writing nothing`, async () => {
      const before = await s.database.prisma.source.count();
      const res = await s.rest("POST", "/v1/sources/", { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      if (reason) expect(res.body.error.fields[field]?.join(" ")).toContain(reason);
      expect(await s.database.prisma.source.count()).toBe(before);
    });
  }

  it("keeps the built-in gateways to test keys, and sources to their organization", async () => {
    const live = await s.rest("POST", "/v1/sources/", {
      key: s.keys.acmeLive,
      body: { gateway: "test", data: { token: "tok_visa" } },
    });
    expect(live.status).toBe(400);
    expect(live.body.error.fields.gateway).toEqual(["the test gateway works with test keys only"]);
    const source = await card();
    expect((await s.rest("GET", `/v1/sources/${source.id}/`, { key: s.keys.other })).status).toBe(404);
  });
});

describe("payments: create and limits", () => {
  it("creates a payment awaiting a payment method, with the spec's fields", async () => {
    const p = await payment({ metadata: { order: "A-1", empty: "" } });
    expect(p).toEqual({
      id: expect.stringMatching(/^pay_/),
      date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      amount: 2916,
      currency: "CLP",
      description: "Factura 1",
      source: null,
      payment_date: null,
      customer: customerId,
      invoice: null,
      status: "requires_payment_method",
      return_url: null,
      failure_reason: null,
      metadata: { order: "A-1" },
      created: expect.stringMatching(PLAIN),
      updated: expect.stringMatching(PLAIN),
    });
    expect((await s.rest("GET", `/v1/payments/${p.id}/`)).body).toEqual(p);
  });

  it("takes the invoice's currency and customer, and refuses more than is due", async () => {
    const invoice = await finalizedInvoice();
    const p = await payment({ customer: undefined, currency: undefined, amount: 1000, invoice: invoice.id });
    expect(p).toMatchObject({ currency: "CLP", customer: customerId, invoice: invoice.id });
    const over = await s.rest("POST", "/v1/payments/", { body: { amount: 2917, invoice: invoice.id } });
    expect(over.status).toBe(400);
    expect(over.body.error.fields.amount).toEqual([`exceeds what is due on invoice ${invoice.id}: 2916 CLP`]);
  });

  const yesterday = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  const bad: [string, () => Promise<Record<string, unknown>> | Record<string, unknown>, string, string][] = [
    ["a zero amount", () => ({ amount: 0 }), "amount", "must be positive"],
    ["a negative amount", () => ({ amount: -10 }), "amount", "must be positive"],
    ["no amount", () => ({ amount: undefined }), "amount", "is required"],
    ["a fraction of a peso", () => ({ amount: "10.5" }), "amount", "CLP amounts are whole units"],
    ["a date before today", () => ({ date: yesterday }), "date", "must not be before today"],
    ["a 257-character description", () => ({ description: "x".repeat(257) }), "description", "at most 256 characters"],
    ["a currency that is not three letters", () => ({ currency: "PESO" }), "currency", "three-letter"],
    ["an unknown currency", () => ({ currency: "ZZZ" }), "currency", "unknown currency ZZZ"],
    [
      "a currency that cannot be charged (CLF)",
      () => ({ currency: "CLF", amount: 1 }),
      "currency",
      "CLF cannot be charged",
    ],
    [
      "a draft invoice",
      async () => ({
        invoice: (
          await s.rest("POST", "/v1/invoices/", {
            body: { customer: customerId, lines: [{ name: "x", amount: 5000 }] },
          })
        ).body.id,
      }),
      "invoice",
      "only finalized invoices",
    ],
    [
      "another organization's invoice",
      async () => {
        const other = (await s.rest("POST", "/v1/customers/", { key: s.keys.other, body: chileanCustomer() })).body.id;
        const inv = (
          await s.rest("POST", "/v1/invoices/", {
            key: s.keys.other,
            body: { customer: other, lines: [{ name: "x", amount: 5000 }] },
          })
        ).body.id;
        await s.rest("GET", `/v1/invoices/${inv}/finalize/`, { key: s.keys.other });
        return { invoice: inv };
      },
      "invoice",
      "unknown invoice",
    ],
    [
      "another currency than the invoice's",
      async () => ({ invoice: (await finalizedInvoice()).id, currency: "USD", amount: 10 }),
      "currency",
      "must be the invoice's currency CLP",
    ],
    ["an unknown customer", () => ({ customer: "cus_nope" }), "customer", "unknown customer"],
  ];
  for (const [what, body, field, reason] of bad) {
    it(`rejects ${what} (400 on ${field}), writing nothing`, async () => {
      const extra = await body();
      const before = await s.database.prisma.payment.count();
      const res = await s.rest("POST", "/v1/payments/", {
        body: { amount: 2916, currency: "CLP", customer: customerId, ...extra },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.fields[field]?.join(" "), JSON.stringify(res.body)).toContain(reason);
      expect(await s.database.prisma.payment.count()).toBe(before);
    });
  }
});

describe("payments: test cards", () => {
  it("charges a reusable card at once: succeeded, the invoice shows it, the balance drops", async () => {
    const invoice = await finalizedInvoice();
    const p = await payment({ invoice: invoice.id, amount: 2916 });
    const source = await card();
    const res = await authorize(p.id, source.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "succeeded",
      failure_reason: null,
      return_url: `${s.url}/v1/payments/${p.id}/pay/`,
      source: { id: source.id, gateway: "test", data: { last4: "4242" } },
    });
    expect(res.body.payment_date).toMatch(PLAIN);
    const charges = await s.database.prisma.paymentCharge.findMany({ where: { paymentId: p.id } });
    expect(
      charges.map((c) => ({
        attempt: c.attempt,
        status: c.status,
        amount: c.amount.toString(),
        reference: c.reference,
      })),
    ).toEqual([{ attempt: 1, status: "succeeded", amount: "2916", reference: `test_${charges[0].id}` }]);

    const inv = (await s.rest("GET", `/v1/invoices/${invoice.id}/`)).body;
    expect(inv.payments.map((x: any) => [x.id, x.status, x.amount])).toEqual([[p.id, "succeeded", 2916]]);
    const gql = await s.graphql(
      `query($id: ID!) { node(id: $id) { ... on Invoice { total amountPaid amountDue payments { id } } } }`,
      { id: invoice.id },
    );
    expect(gql.body.data.node).toEqual({ total: "2916", amountPaid: "2916", amountDue: "0", payments: [{ id: p.id }] });
    const more = await s.rest("POST", "/v1/payments/", { body: { amount: 1, invoice: invoice.id } });
    expect(more.body.error.fields.amount).toEqual([`exceeds what is due on invoice ${invoice.id}: 0 CLP`]);
  });

  const declines: [string, string][] = [
    ["tok_chargeDeclined", "card_declined"],
    ["tok_chargeDeclinedInsufficientFunds", "insufficient_funds"],
    ["tok_chargeDeclinedProcessingError", "processing_error"],
    ["tok_chargeDeclinedExpiredCard", "expired_card"],
    ["tok_chargeDeclinedIncorrectNumber", "incorrect_number"],
    ["tok_chargeDeclinedLostCard", "lost_card"],
    ["tok_chargeDeclinedStolenCard", "stolen_card"],
    ["tok_chargeDeclinedCardNotSupported", "card_not_supported"],
  ];
  for (const [token, code] of declines) {
    it(`${token}: declined with ${code}, back to requires_payment_method; another card then succeeds`, async () => {
      const p = await payment();
      const declined = await authorize(p.id, (await card(token)).id);
      expect(declined.status).toBe(200);
      expect(declined.body).toMatchObject({ status: "requires_payment_method", payment_date: null });
      expect(declined.body.failure_reason).toMatch(new RegExp(`^${code}: `));
      const ok = await authorize(p.id, (await card("tok_visa")).id);
      expect(ok.body).toMatchObject({ status: "succeeded", failure_reason: null });
      const charges = await s.database.prisma.paymentCharge.findMany({
        where: { paymentId: p.id },
        orderBy: { attempt: "asc" },
      });
      expect(charges.map((c) => [c.attempt, c.status, c.failureCode])).toEqual([
        [1, "declined", code],
        [2, "succeeded", null],
      ]);
    });
  }

  it("charges once when authorize is called twice, or ten times at once", async () => {
    const p = await payment();
    const source = await card();
    const results = await Promise.all(Array.from({ length: 10 }, () => authorize(p.id, source.id)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409).map((r) => r.body.error.code)).toEqual(
      Array(9).fill("invalid_state"),
    );
    expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: p.id } })).toBe(1);
    const again = await authorize(p.id, source.id);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe("Cannot charge a payment that is succeeded: it has succeeded");
    expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: p.id } })).toBe(1);
  });

  it("refuses an unknown source, another customer's source, another organization's source", async () => {
    const p = await payment();
    const other = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Otro" }) })).body.id;
    const foreign = (
      await s.rest("POST", "/v1/sources/", {
        key: s.keys.other,
        body: { gateway: "test", data: { token: "tok_visa" } },
      })
    ).body.id;
    const cases: [string, string][] = [
      ["sou_nope", "unknown source sou_nope"],
      [(await card("tok_visa", other)).id, "belongs to another customer"],
      [foreign, `unknown source ${foreign}`],
    ];
    for (const [source, reason] of cases) {
      const res = await authorize(p.id, source);
      expect(res.status).toBe(400);
      expect(res.body.error.fields.source.join(" ")).toContain(reason);
    }
    const missing = await s.rest("POST", `/v1/payments/${p.id}/authorize/`, { body: {} });
    expect(missing.body.error.fields).toEqual({ source: ["is required"] });
    expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: p.id } })).toBe(0);
    expect((await s.rest("GET", `/v1/payments/${p.id}/`)).body).toMatchObject({
      status: "requires_payment_method",
      source: null,
    });
  });
});

describe("payments: a charge the gateway did not answer", () => {
  it("cannot be canceled while in flight, and pay asks the gateway again with the same attempt", async () => {
    const p = await payment();
    const source = await card();
    // the state a crash or a network failure between the two transactions leaves behind
    await s.database.prisma.$transaction([
      s.database.prisma.paymentCharge.create({
        data: {
          id: "chg_inflight000000000000000",
          paymentId: p.id,
          organizationId: s.orgs.acme,
          attempt: 1,
          sourceId: source.id,
          gateway: "test",
          amount: "2916",
          currencyId: "CLP",
          status: "pending",
        },
      }),
      s.database.prisma.payment.update({ where: { id: p.id }, data: { status: "processing", sourceId: source.id } }),
    ]);
    const del = await s.rest("DELETE", `/v1/payments/${p.id}/`);
    expect(del.status).toBe(409);
    expect(del.body.error.message).toBe("Cannot cancel a payment that is processing: a charge is in progress");
    expect((await authorize(p.id, source.id)).status).toBe(409);

    const pay = await s.rest("GET", `/v1/payments/${p.id}/pay/`);
    expect(pay.status).toBe(200);
    expect(pay.body).toMatchObject({ status: "succeeded", redirect_url: null });
    const charges = await s.database.prisma.paymentCharge.findMany({ where: { paymentId: p.id } });
    expect(charges.map((c) => [c.id, c.attempt, c.status, c.reference])).toEqual([
      ["chg_inflight000000000000000", 1, "succeeded", "test_chg_inflight000000000000000"],
    ]);
  });

  it("the database refuses a second active charge of one payment", async () => {
    const p = await payment();
    const row = {
      paymentId: p.id,
      organizationId: s.orgs.acme,
      gateway: "test",
      amount: "2916",
      currencyId: "CLP",
      status: "pending",
    };
    await s.database.prisma.paymentCharge.create({ data: { ...row, id: "chg_first0000000000000000000", attempt: 1 } });
    await expect(
      s.database.prisma.paymentCharge.create({
        data: { ...row, id: "chg_second000000000000000000", attempt: 2, status: "succeeded" },
      }),
    ).rejects.toThrow();
    await s.database.prisma.paymentCharge.update({
      where: { id: "chg_first0000000000000000000" },
      data: { status: "declined" },
    });
    await expect(
      s.database.prisma.paymentCharge.create({ data: { ...row, id: "chg_second000000000000000000", attempt: 2 } }),
    ).resolves.toBeTruthy();
  });
});

describe("payments: delete cancels", () => {
  it(
    "cancels what has not succeeded (204, then readable as canceled) and refuses succeeded or canceled " + "with 409",
    async () => {
      const p = await payment();
      const del = await s.rest("DELETE", `/v1/payments/${p.id}/`);
      expect(del.status).toBe(204);
      expect((await s.rest("GET", `/v1/payments/${p.id}/`)).body.status).toBe("canceled");
      expect((await s.rest("DELETE", `/v1/payments/${p.id}/`)).status).toBe(409);
      expect((await authorize(p.id, (await card()).id)).status).toBe(409);
      expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: p.id } })).toBe(0);

      const paid = await payment();
      await authorize(paid.id, (await card()).id);
      const refused = await s.rest("DELETE", `/v1/payments/${paid.id}/`);
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toBe("Cannot cancel a payment that is succeeded: it has succeeded");
      expect((await s.rest("GET", `/v1/payments/${paid.id}/`)).body.status).toBe("succeeded");
    },
  );

  it("keeps payments inside their organization and mode (404)", async () => {
    const p = await payment();
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      expect((await s.rest("GET", `/v1/payments/${p.id}/`, { key })).status).toBe(404);
      expect((await s.rest("DELETE", `/v1/payments/${p.id}/`, { key })).status).toBe(404);
      expect((await s.rest("GET", `/v1/payments/${p.id}/pay/`, { key })).status).toBe(404);
      expect((await s.rest("POST", `/v1/payments/${p.id}/authorize/`, { key, body: { source: "sou_x" } })).status).toBe(
        404,
      );
    }
  });
});

describe("payments: redirect flow through the hosted checkout (no browser)", () => {
  async function redirectPayment(amount = 2916) {
    const source = (
      await s.rest("POST", "/v1/sources/", {
        body: { gateway: "redirect", customer: customerId, return_url: "https://shop.example/return?cart=7" },
      })
    ).body;
    const p = await payment({ amount });
    const attached = await authorize(p.id, source.id);
    expect(attached.status).toBe(200);
    expect(attached.body).toMatchObject({
      status: "requires_payment_method",
      source: { id: source.id, flow: "redirect" },
      return_url: `${s.url}/v1/payments/${p.id}/pay/`,
    });
    return { source, payment: p };
  }
  const form = (decision: string) => ({
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `decision=${decision}`,
    redirect: "manual" as const,
  });

  it("pay returns the checkout address; approving there settles the payment and returns to the shop", async () => {
    const { source, payment: p } = await redirectPayment();
    const pay = await s.rest("GET", `/v1/payments/${p.id}/pay/`);
    expect(pay.status).toBe(200);
    expect(pay.body).toMatchObject({ id: p.id, status: "processing", redirect_url: source.data.redirect_url });
    const again = await s.rest("GET", `/v1/payments/${p.id}/pay/`);
    expect(again.body).toMatchObject({ status: "processing", redirect_url: source.data.redirect_url });
    expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: p.id } })).toBe(1);

    const pageRes = await fetch(source.data.redirect_url);
    expect(pageRes.status).toBe(200);
    expect(pageRes.headers.get("content-type")).toContain("text/html");
    const html = await pageRes.text();
    expect(html).toContain("CLP 2.916");
    expect(html).toContain(p.id);
    expect(html).toContain('name="decision" value="approve"');

    const approved = await fetch(source.data.redirect_url, form("approve"));
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe(
      `https://shop.example/return?cart=7&payment=${p.id}&status=succeeded`,
    );
    const after = (await s.rest("GET", `/v1/payments/${p.id}/`)).body;
    expect(after).toMatchObject({ status: "succeeded", source: { status: "consumed" } });
    expect(after.payment_date).toMatch(PLAIN);

    // a second answer changes nothing
    expect((await fetch(source.data.redirect_url, form("reject"))).status).toBe(409);
    expect((await s.rest("GET", `/v1/payments/${p.id}/`)).body.status).toBe("succeeded");
    expect(await s.database.prisma.paymentCharge.count({ where: { paymentId: p.id, status: "succeeded" } })).toBe(1);
  });

  it("rejecting at the checkout returns the payment to requires_payment_method with the reason", async () => {
    const { source, payment: p } = await redirectPayment();
    await s.rest("GET", `/v1/payments/${p.id}/pay/`);
    const rejected = await fetch(source.data.redirect_url, form("reject"));
    expect(rejected.status).toBe(303);
    expect(rejected.headers.get("location")).toContain("status=requires_payment_method");
    const after = (await s.rest("GET", `/v1/payments/${p.id}/`)).body;
    expect(after).toMatchObject({
      status: "requires_payment_method",
      failure_reason: "rejected_by_customer: The customer rejected the payment at the checkout.",
      source: { status: "failed" },
    });
    const retry = await s.rest("GET", `/v1/payments/${p.id}/pay/`);
    expect(retry.status).toBe(400);
    expect(retry.body.error.fields.source[0]).toContain("is failed");
    // a new card pays it
    expect((await authorize(p.id, (await card()).id)).body.status).toBe("succeeded");
  });

  it("a payment canceled while the customer is at the checkout cannot be approved there", async () => {
    const { source, payment: p } = await redirectPayment();
    await s.rest("GET", `/v1/payments/${p.id}/pay/`);
    expect((await s.rest("DELETE", `/v1/payments/${p.id}/`)).status).toBe(204);
    const approved = await fetch(source.data.redirect_url, form("approve"));
    expect(approved.status).toBe(409);
    expect((await s.rest("GET", `/v1/payments/${p.id}/`)).body.status).toBe("canceled");
  });

  it("a single-use source pays one payment only", async () => {
    const { source } = await redirectPayment();
    const other = await payment();
    const res = await authorize(other.id, source.id);
    expect(res.status).toBe(400);
    expect(res.body.error.fields.source[0]).toMatch(/single-use source .* belongs to payment pay_/);
  });

  it(
    "answers 404 for an unknown checkout, 409 before pay, 400 for a bad decision, and pay without a source " +
      "is a 409",
    async () => {
      expect((await fetch(`${s.url}/checkout/chk_unknown`)).status).toBe(404);
      const { source, payment: p } = await redirectPayment();
      expect((await fetch(source.data.redirect_url)).status).toBe(409);
      expect((await fetch(source.data.redirect_url, form("approve"))).status).toBe(409);
      await s.rest("GET", `/v1/payments/${p.id}/pay/`);
      expect((await fetch(source.data.redirect_url, form("maybe"))).status).toBe(400);
      const bare = await payment();
      const pay = await s.rest("GET", `/v1/payments/${bare.id}/pay/`);
      expect(pay.status).toBe(409);
      expect(pay.body.error.message).toContain("has no source");
    },
  );
});

describe("payments over GraphQL", () => {
  it(
    "creates, authorizes, pays and lists with the same rules; customer balance counts succeeded " + "payments",
    async () => {
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "GraphQL" }) })).body.id;
      const invoice = await finalizedInvoice(customer);
      const created = await s.graphql(
        `mutation($input: PaymentInput!) { createPayment(input: $input) { id status currency customer { id } ` +
          `invoice { ` +
          `id } } }`,
        { input: { amount: "1000", invoice: invoice.id } },
      );
      expect(created.body.errors).toBeUndefined();
      const p = created.body.data.createPayment;
      expect(p).toMatchObject({
        status: "requires_payment_method",
        currency: "CLP",
        customer: { id: customer },
        invoice: { id: invoice.id },
      });
      const source = await s.graphql(`mutation($input: SourceInput!) { createSource(input: $input) { id usage } }`, {
        input: { gateway: "test", customer, data: { token: "tok_visa" } },
      });
      const paid = await s.graphql(
        `mutation($id: ID!, $s: ID) { authorizePayment(id: $id, source: $s) { status source { id } returnUrl } }`,
        { id: p.id, s: source.body.data.createSource.id },
      );
      expect(paid.body.data.authorizePayment).toMatchObject({
        status: "succeeded",
        returnUrl: `${s.url}/v1/payments/${p.id}/pay/`,
      });
      expect((await s.rest("GET", `/v1/customers/${customer}/`)).body.aggregations).toMatchObject({
        sales: 2916,
        balance: 1916,
      });

      const list = await s.graphql(
        `query($c: String) { payments(where: { customer: { equals: $c }, status: { equals: succeeded } }) { ` +
          `totalCount ` +
          `edges { node { id amount } } } }`,
        { c: customer },
      );
      expect(list.body.data.payments).toEqual({ totalCount: 1, edges: [{ node: { id: p.id, amount: "1000" } }] });
      const invoiceView = await s.graphql(
        `query($id: ID!) { node(id: $id) { ... on Invoice { amountPaid amountDue } } }`,
        { id: invoice.id },
      );
      expect(invoiceView.body.data.node).toEqual({ amountPaid: "1000", amountDue: "1916" });

      const meta = await s.graphql(
        `mutation($id: ID!) { updatePayment(id: $id, metadata: { a: "1", b: "2" }) { metadata } }`,
        { id: p.id },
      );
      expect(meta.body.data.updatePayment.metadata).toEqual({ a: "1", b: "2" });
      const unset = await s.graphql(`mutation($id: ID!) { updatePayment(id: $id, metadata: { a: "" }) { metadata } }`, {
        id: p.id,
      });
      expect(unset.body.data.updatePayment.metadata).toEqual({ b: "2" });

      const redirect = await s.graphql(`mutation { createSource(input: { gateway: "redirect" }) { id data } }`);
      const second = await s.graphql(`mutation($input: PaymentInput!) { createPayment(input: $input) { id } }`, {
        input: { amount: "500", currency: "CLP" },
      });
      await s.graphql(`mutation($id: ID!, $s: ID) { authorizePayment(id: $id, source: $s) { status } }`, {
        id: second.body.data.createPayment.id,
        s: redirect.body.data.createSource.id,
      });
      const pay = await s.graphql(`mutation($id: ID!) { payPayment(id: $id) { redirectUrl payment { status } } }`, {
        id: second.body.data.createPayment.id,
      });
      expect(pay.body.data.payPayment).toEqual({
        redirectUrl: redirect.body.data.createSource.data.redirect_url,
        payment: { status: "processing" },
      });
    },
  );

  it("loads an invoice list with amountPaid and amountDue in one balance query", async () => {
    s.queries.length = 0;
    const res = await s.graphql(
      `{ invoices(first: 20) { edges { node { id amountPaid amountDue payments { id source { id } } } } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.invoices.edges.length).toBeGreaterThan(3);
    expect(s.queries.filter((q) => q === "Invoice.findMany")).toHaveLength(1);
    expect(s.queries.filter((q) => q.startsWith("Payment.") || q.startsWith("Source."))).toEqual([]);
  });
});
