/**
 * Closed sets of invoices, orders, credit notes, payments, sources and reminders as GraphQL enums
 * (issue 16; docs/graphql.md "Changes in this release"): GraphQL answers and takes the enum
 * values (the spec's strings, or a word where the spec's string is not a GraphQL name: `%` is
 * percent, shipping type `3` is consignment), refuses a value outside the set in validation, and
 * filters on them; REST keeps the spec's strings in and out, and answers a value outside the set
 * with a 400 naming the field. Source.customer and Payment.customer/invoice are objects.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customerId: string;
beforeAll(async () => {
  s = await startTestServer();
  customerId = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Enums" }) })).body.id;
});
afterAll(async () => s?.close());

describe("document enums over GraphQL", () => {
  it(
    "answers and takes DiscountScheme and CollectionMethod values; REST reads the same invoice " + "with % and $",
    async () => {
      const created = await s.graphql(
        `mutation($input: InvoiceInput!) { createInvoice(input: $input) { id collectionMethod discount ` +
          `discountScheme ` +
          `discountAmount lines { discountScheme discount total } } }`,
        {
          input: {
            customer: customerId,
            collectionMethod: "deferred",
            discount: "100",
            discountScheme: "amount",
            lines: [
              { name: "Horas", quantity: "2", amount: "1000", discount: "10", discountScheme: "percent" },
              { name: "Soporte", amount: "500" },
            ],
          },
        },
      );
      expect(created.body.errors).toBeUndefined();
      const invoice = created.body.data.createInvoice;
      expect(invoice).toMatchObject({
        collectionMethod: "deferred",
        discount: "100",
        discountScheme: "amount",
        discountAmount: "100",
        lines: [
          { discountScheme: "percent", discount: "10", total: "1800" },
          { discountScheme: "percent", discount: "0", total: "500" },
        ],
      });

      const rest = await s.rest("GET", `/v1/invoices/${invoice.id}/`);
      expect(rest.status).toBe(200);
      expect(rest.body).toMatchObject({
        collection_method: "deferred",
        discount: 100,
        discount_scheme: "$",
        lines: [{ discount_scheme: "%" }, { discount_scheme: "%" }],
      });
    },
  );

  it("refuses a value outside an enum in validation, before any resolver, writing nothing", async () => {
    const before = await s.database.prisma.invoice.count();
    for (const [query, enumName] of [
      [
        `mutation { createInvoice(input: { customer: "${customerId}", discountScheme: "%", lines: [{ name: "x", ` +
          `amount: "1" }] }) { id } }`,
        "DiscountScheme",
      ],
      [
        `mutation { createInvoice(input: { customer: "${customerId}", collectionMethod: charge_automatically, lines: ` +
          `[{ name: "x", amount: "1" }] }) { id } }`,
        "CollectionMethod",
      ],
      [
        `mutation { createInvoice(input: { customer: "${customerId}", lines: [{ name: "x", amount: "1", ` +
          `discountScheme: dollars }] }) { id } }`,
        "DiscountScheme",
      ],
    ]) {
      const res = await s.graphql(query);
      expect(res.body.data, query).toBeUndefined();
      expect(res.body.errors[0].extensions.code).toBe("validation_error");
      expect(res.body.errors[0].message).toContain(enumName);
    }
    // as a variable too
    const variable = await s.graphql(`mutation($input: InvoiceInput!) { createInvoice(input: $input) { id } }`, {
      input: { customer: customerId, discountScheme: "$", lines: [{ name: "x", amount: "1" }] },
    });
    expect(variable.body.errors[0].extensions.code).toBe("validation_error");
    expect(variable.body.errors[0].message).toContain("DiscountScheme");
    expect(await s.database.prisma.invoice.count()).toBe(before);
  });

  it("lists the enum values in introspection, with descriptions", async () => {
    const res = await s.graphql(
      `{ ShippingType: __type(name: "ShippingType") { enumValues { name description } } PaymentStatus: __type(name: ` +
        `"PaymentStatus") { enumValues { name } } }`,
    );
    // the printed schema sorts enum values by name
    const shipping = Object.fromEntries(
      res.body.data.ShippingType.enumValues.map((v: { name: string; description: string }) => [v.name, v.description]),
    );
    expect(Object.keys(shipping).sort()).toEqual([
      "consignment",
      "export_sale",
      "export_transfer",
      "free_delivery",
      "internal_transfer",
      "other_transfer",
      "return_guide",
      "sale",
      "sale_to_be_made",
    ]);
    expect(shipping.consignment).toContain("IndTraslado 3");
    expect(shipping.export_sale).toContain("a sale, can be invoiced");
    expect(res.body.data.PaymentStatus.enumValues.map((v: { name: string }) => v.name).sort()).toEqual([
      "canceled",
      "processing",
      "requires_payment_method",
      "succeeded",
    ]);
  });

  it("takes and answers ShippingType, filters orders on it, and REST keeps the SII code", async () => {
    const consignment = await s.graphql(
      `mutation { createOrder(input: { customer: "${customerId}", shippingType: consignment, lines: [{ name: ` +
        `"Cajas", amount: "1000" }] }) { id shippingType } }`,
    );
    expect(consignment.body.data.createOrder.shippingType).toBe("consignment");
    const restOrder = await s.rest("POST", "/v1/orders/", {
      body: { customer: customerId, shipping_type: "5", lines: [{ name: "Pallet", amount: 0 }] },
    });
    expect([restOrder.status, restOrder.body.shipping_type]).toEqual([201, "5"]);
    expect((await s.rest("GET", `/v1/orders/${consignment.body.data.createOrder.id}/`)).body.shipping_type).toBe("3");

    const viaGraphql = await s.graphql(`{ node(id: "${restOrder.body.id}") { ... on Order { shippingType } } }`);
    expect(viaGraphql.body.data.node.shippingType).toBe("internal_transfer");

    const list = await s.graphql(
      `query($c: String) { orders(first: 50, where: { customer: { equals: $c }, shippingType: { in: [consignment, ` +
        `internal_transfer] } }) { edges { node { id shippingType } } } }`,
      { c: customerId },
    );
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data.orders.edges.map((e: { node: { id: string } }) => e.node.id).sort()).toEqual(
      [consignment.body.data.createOrder.id, restOrder.body.id].sort(),
    );
    const sales = await s.graphql(
      `query($c: String) { orders(first: 50, where: { customer: { equals: $c }, shippingType: { equals: sale } }) { ` +
        `totalCount } }`,
      { c: customerId },
    );
    expect(sales.body.data.orders.totalCount).toBe(0);
  });

  it("takes DiscountScheme on credit notes and REST answers % and $", async () => {
    const invoice = (
      await s.rest("POST", "/v1/invoices/", { body: { customer: customerId, lines: [{ name: "x", amount: 10000 }] } })
    ).body;
    expect((await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`)).status).toBe(200);
    const note = await s.graphql(
      `mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id discountScheme lines { ` +
        `discountScheme } } }`,
      {
        input: {
          invoice: invoice.id,
          discount: "500",
          discountScheme: "amount",
          lines: [{ name: "x", amount: "5000", discount: "10", discountScheme: "percent" }],
        },
      },
    );
    expect(note.body.errors).toBeUndefined();
    expect(note.body.data.createCreditNote).toMatchObject({
      discountScheme: "amount",
      lines: [{ discountScheme: "percent" }],
    });
    const rest = await s.rest("GET", `/v1/creditnotes/${note.body.data.createCreditNote.id}/`);
    expect(rest.body).toMatchObject({ discount_scheme: "$", lines: [{ discount_scheme: "%" }] });
  });
});

describe("document enums over REST", () => {
  it("keeps % and $ in and out of invoice bodies", async () => {
    const res = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer: customerId,
        discount: 5,
        discount_scheme: "%",
        collection_method: "deferred",
        lines: [{ name: "x", amount: 1000, discount: 100, discount_scheme: "$" }],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      discount_scheme: "%",
      collection_method: "deferred",
      lines: [{ discount_scheme: "$", total: 900 }],
    });
  });

  const bad: [string, string, Record<string, unknown>, string, string][] = [
    [
      "an invoice discount scheme",
      "/v1/invoices/",
      { discount_scheme: "percent", lines: [{ name: "x", amount: 1 }] },
      "discount_scheme",
      "must be one of $, %",
    ],
    [
      "an invoice line discount scheme",
      "/v1/invoices/",
      { lines: [{ name: "x", amount: 1, discount_scheme: "amount" }] },
      "lines.0.discount_scheme",
      "must be one of $, %",
    ],
    [
      "a collection method",
      "/v1/invoices/",
      { collection_method: "charge_automatically", lines: [{ name: "x", amount: 1 }] },
      "collection_method",
      "must be one of deferred",
    ],
    [
      "a shipping type given as the GraphQL name",
      "/v1/orders/",
      { shipping_type: "consignment", lines: [{ name: "x", amount: 1 }] },
      "shipping_type",
      "1 (Sale)",
    ],
    [
      "a shipping type given as a number out of range",
      "/v1/orders/",
      { shipping_type: 10, lines: [{ name: "x", amount: 1 }] },
      "shipping_type",
      "IndTraslado",
    ],
  ];
  for (const [what, path, body, field, reason] of bad) {
    it(`answers ${what} outside the set with a 400 naming ${field}`, async () => {
      const res = await s.rest("POST", path, { body: { customer: customerId, ...body } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.fields[field]?.join(" ")).toContain(reason);
    });
  }

  it(
    "answers a credit note discount scheme and a source usage outside the set with a 400 naming " + "the field",
    async () => {
      const note = await s.rest("POST", "/v1/creditnotes/", {
        body: { invoice: "inv_x", discount_scheme: "%%", lines: [{ name: "x", amount: 1 }] },
      });
      expect(note.status).toBe(400);
      expect(note.body.error.fields.discount_scheme).toEqual(["must be one of $, %"]);
      const source = await s.rest("POST", "/v1/sources/", {
        body: { gateway: "test", usage: "forever", data: { token: "tok_visa" } },
      });
      expect(source.status).toBe(400);
      expect(source.body.error.fields.usage).toEqual(["must be one of reusable, single_use"]);
    },
  );
});

describe("payment and source enums and references over GraphQL", () => {
  it(
    "answers PaymentStatus, SourceUsage, SourceFlow and SourceStatus, filters payments on status, and " +
      "Source.customer is the customer",
    async () => {
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Pagos" }) })).body.id;
      const source = await s.graphql(
        `mutation($input: SourceInput!) { createSource(input: $input) { id status usage flow gateway customer { id ` +
          `name } } }`,
        { input: { gateway: "test", usage: "reusable", customer, data: { token: "tok_visa" } } },
      );
      expect(source.body.errors).toBeUndefined();
      expect(source.body.data.createSource).toMatchObject({
        status: "chargeable",
        usage: "reusable",
        flow: "none",
        gateway: "test",
        customer: { id: customer, name: "Pagos" },
      });
      const redirect = await s.graphql(
        `mutation { createSource(input: { gateway: "redirect", usage: single_use }) { usage flow customer { id } } }`,
      );
      expect(redirect.body.data.createSource).toEqual({ usage: "single_use", flow: "redirect", customer: null });

      const ids: string[] = [];
      for (const amount of ["100", "200"]) {
        const p = await s.graphql(
          `mutation($input: PaymentInput!) { createPayment(input: $input) { id status customer { id } invoice { ` +
            `id } } }`,
          { input: { amount, currency: "CLP", customer } },
        );
        expect(p.body.data.createPayment).toMatchObject({
          status: "requires_payment_method",
          customer: { id: customer },
          invoice: null,
        });
        ids.push(p.body.data.createPayment.id);
      }
      const paid = await s.graphql(`mutation($id: ID!, $s: ID) { authorizePayment(id: $id, source: $s) { status } }`, {
        id: ids[0],
        s: source.body.data.createSource.id,
      });
      expect(paid.body.data.authorizePayment.status).toBe("succeeded");

      const list = (where: string) =>
        s.graphql(
          `query($c: String) { payments(first: 10, where: { customer: { equals: $c }, status: ${where} }) { edges { ` +
            `node { id status } } } }`,
          { c: customer },
        );
      expect((await list("{ equals: succeeded }")).body.data.payments.edges).toEqual([
        { node: { id: ids[0], status: "succeeded" } },
      ]);
      expect((await list("{ in: [requires_payment_method, canceled] }")).body.data.payments.edges).toEqual([
        { node: { id: ids[1], status: "requires_payment_method" } },
      ]);
      const wrong = await list(`{ equals: "succeeded" }`);
      expect(wrong.body.errors[0].extensions.code).toBe("validation_error");
      expect(wrong.body.errors[0].message).toContain("PaymentStatus");

      // REST keeps the ids and the spec's strings
      const rest = await s.rest("GET", `/v1/payments/${ids[0]}/`);
      expect(rest.body).toMatchObject({
        customer,
        invoice: null,
        status: "succeeded",
        source: { customer, usage: "reusable", flow: "none", status: "chargeable" },
      });
    },
  );

  it("loads Source.customer and Payment.customer of a list without a query per row", async () => {
    s.queries.length = 0;
    const res = await s.graphql(
      `{ payments(first: 20) { edges { node { id customer { id } invoice { id } source { id customer { id } } } } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.payments.edges.length).toBeGreaterThan(1);
    expect(s.queries.filter((q) => q.startsWith("Customer.")).length).toBeLessThanOrEqual(1);
    expect(s.queries.filter((q) => q.startsWith("Source.")).length).toBeLessThanOrEqual(1);
  });
});

describe("reminder delivery status over GraphQL", () => {
  it("answers ReminderDeliveryStatus (kept without SMTP) and REST keeps the string", async () => {
    const invoice = (
      await s.rest("POST", "/v1/invoices/", { body: { customer: customerId, lines: [{ name: "x", amount: 1000 }] } })
    ).body;
    const res = await s.graphql(
      `mutation($input: ReminderInput!) { sendReminder(input: $input) { id delivery { status attempts } } }`,
      { input: { subject: "Recordatorio", recipients: ["pagos@example.com"], message: "Hola", invoice: invoice.id } },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.sendReminder.delivery.status).toBe("kept");
    const rest = await s.rest("GET", "/v1/reminders/messages/", {});
    expect(rest.body.find((r: { id: string }) => r.id === res.body.data.sendReminder.id).delivery.status).toBe("kept");
  });
});
