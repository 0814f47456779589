/**
 * Orders (spec "Order"; guía de despacho 52) over REST and GraphQL: shape, totals, draft
 * lifecycle, shipping types, PDF, tenancy, and invoiceOrders (one invoice, never twice).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PDFParse } from "pdf-parse";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

let s: TestServer;
let customerId: string;
beforeAll(async () => {
  s = await startTestServer();
  customerId = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

const lines = [
  { name: "Cajas", description: "Cartón 40x40", quantity: 2, amount: 1000 },
  { name: "Flete", quantity: 1, amount: 500, exempt: true },
];

async function createOrder(body: Record<string, unknown> = {}, customer = customerId) {
  const res = await s.rest("POST", "/v1/orders/", { body: { customer, lines, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function finalizedOrder(body: Record<string, unknown> = {}, customer = customerId) {
  const order = await createOrder(body, customer);
  const res = await s.rest("GET", `/v1/orders/${order.id}/finalize/`);
  expect(res.status).toBe(200);
  return res.body;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const PLAIN = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe("orders over REST", () => {
  it(
    "creates a draft with every spec field, per-line tax, the customer's aggregations and the full " + "currency",
    async () => {
      const invoice = (
        await s.rest("POST", "/v1/invoices/", { body: { customer: customerId, lines: [{ name: "x", amount: 1000 }] } })
      ).body;
      await s.rest("GET", `/v1/invoices/${invoice.id}/finalize/`);

      const order = await createOrder({
        date: "2026-11-20",
        address: "Camino Lo Boza 120, Pudahuel",
        carrier_id: "77.879.240-0",
        carrier_name: "Transportes Sur",
        state: "CL-RM",
        licence_plate: "GHJK12",
        shipping_type: 2,
      });
      expect(order).toMatchObject({
        number: null,
        status: "draft",
        test_mode: true,
        date: "2026-11-20",
        address: "Camino Lo Boza 120, Pudahuel",
        carrier_id: "77879240-0",
        carrier_name: "Transportes Sur",
        state: "RM",
        licence_plate: "GHJK12",
        shipping_type: "2",
        amount: 2000,
        exempt: 500,
        tax: 380,
        tax_percent: 19,
        total: 2880,
        local_file: null,
        tax_agency: {},
        document: {
          id: "CL52",
          name: "Guía de despacho electrónica",
          country: "CL",
          currency: {
            id: "CLP",
            available: true,
            conversion: null,
            country: "CL",
            default: true,
            is_chargeable: true,
            name: "Peso chileno",
            name_en: "Chilean peso",
            rounded: true,
          },
        },
        customer: {
          id: customerId,
          name: "Cliente SpA",
          state: "RM",
          country: "CL",
          aggregations: { balance: 1190, sales: 1190, sales_current_period: expect.any(Number) },
        },
      });
      expect(order.id).toMatch(/^ord_/);
      expect(order.lines).toEqual([
        {
          id: expect.stringMatching(/^lin_/),
          name: "Cajas",
          description: "Cartón 40x40",
          quantity: 2,
          amount: 1000,
          exempt: false,
          tax: 380,
          tax_percent: 19,
          total: 2000,
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
        },
        {
          id: expect.stringMatching(/^lin_/),
          name: "Flete",
          description: null,
          quantity: 1,
          amount: 500,
          exempt: true,
          tax: null,
          tax_percent: 0,
          total: 500,
          created: expect.stringMatching(ISO),
          updated: expect.stringMatching(ISO),
        },
      ]);
      expect(order.created).toMatch(ISO);
      expect(order.updated).toMatch(ISO);
      expect(order.customer.created).toMatch(PLAIN);
      const row = await s.database.prisma.order.findUniqueOrThrow({
        where: { id: order.id },
        include: { lines: true },
      });
      expect({
        total: row.total.toString(),
        shippingType: row.shippingType,
        user: row.userEmail,
        lines: row.lines.length,
      }).toEqual({ total: "2880", shippingType: "2", user: "ops@acme.cl", lines: 2 });
    },
  );

  it("defaults to CL52, shipping type 1 and today's date; retrieves what it created", async () => {
    const order = await createOrder({ lines: [{ name: "Uno", amount: 2350 }] });
    expect(order).toMatchObject({
      shipping_type: "1",
      document: { id: "CL52" },
      amount: 2350,
      tax: 447,
      total: 2797,
      address: null,
      carrier_id: null,
      state: null,
    });
    expect(order.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const got = await s.rest("GET", `/v1/orders/${order.id}/`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(order);
  });

  it("updates a draft (lines replaced, given fields only) and recomputes totals", async () => {
    const order = await createOrder({ address: "Origen 1", licence_plate: "AB1234" });
    const res = await s.rest("PATCH", `/v1/orders/${order.id}/`, {
      body: { lines: [{ name: "Pallet", quantity: 3, amount: 1500 }], shipping_type: "5", address: "Bodega 2" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      shipping_type: "5",
      address: "Bodega 2",
      licence_plate: "AB1234",
      amount: 4500,
      exempt: 0,
      tax: 855,
      total: 5355,
    });
    expect(res.body.lines).toHaveLength(1);
    expect(await s.database.prisma.orderLine.count({ where: { orderId: order.id } })).toBe(1);
    // an order sent back as retrieved is accepted (server-assigned and computed fields are ignored)
    const { customer, document, ...rest } = res.body;
    const echo = await s.rest("PATCH", `/v1/orders/${order.id}/`, {
      body: { ...rest, customer: customer.id, document: document.id },
    });
    expect(echo.status).toBe(200);
    expect(echo.body.total).toBe(5355);
  });

  it("finalizes with its own numbering, then refuses update and delete with 409 and changes nothing", async () => {
    const a = await finalizedOrder();
    const b = await finalizedOrder();
    expect(a.status).toBe("finalized");
    expect(b.number).toBe(a.number + 1);
    const counter = await s.database.prisma.documentCounter.findFirstOrThrow({
      where: { organizationId: s.orgs.acme, testMode: true, documentTypeId: "CL52" },
    });
    expect(counter).toMatchObject({ kind: "order", lastNumber: b.number });

    const before = await s.database.prisma.order.findUniqueOrThrow({ where: { id: a.id }, include: { lines: true } });
    for (const [method, path, body] of [
      ["PATCH", `/v1/orders/${a.id}/`, { address: "otra" }],
      ["PATCH", `/v1/orders/${a.id}/`, { lines: [{ name: "x", amount: 1 }] }],
      ["DELETE", `/v1/orders/${a.id}/`, undefined],
      ["GET", `/v1/orders/${a.id}/finalize/`, undefined],
    ] as const) {
      const res = await s.rest(method, path, { body });
      expect(res.status, `${method} ${path}`).toBe(409);
      expect(res.body.error).toMatchObject({
        code: "invalid_state",
        message: expect.stringContaining("finalized order"),
      });
    }
    expect(await s.database.prisma.order.findUniqueOrThrow({ where: { id: a.id }, include: { lines: true } })).toEqual(
      before,
    );
  });

  it("deletes a draft with 204 (lines too), then reads 404", async () => {
    const order = await createOrder();
    const del = await s.rest("DELETE", `/v1/orders/${order.id}/`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await s.rest("GET", `/v1/orders/${order.id}/`)).status).toBe(404);
    expect(await s.database.prisma.orderLine.count({ where: { orderId: order.id } })).toBe(0);
  });

  it("refuses to finalize an order without lines", async () => {
    const order = await createOrder({ lines: [] });
    const res = await s.rest("GET", `/v1/orders/${order.id}/finalize/`);
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual({ lines: ["an order needs at least one line to be finalized"] });
  });

  it("renders a PDF with the guía's name and number, shipping type, transport, lines and totals", async () => {
    const order = await finalizedOrder({
      date: "2026-11-21",
      address: "Camino Lo Boza 120",
      state: "RM",
      carrier_name: "Transportes Sur",
      carrier_id: "77879240-0",
      licence_plate: "GHJK12",
    });
    const res = await s.rest("GET", `/v1/orders/${order.id}/pdf/`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["file"]);
    const pdf = Buffer.from(res.body.file, "base64");
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    const text = (await new PDFParse({ data: new Uint8Array(pdf) }).getText()).text;
    for (const expected of [
      "Acme SpA",
      "Cliente SpA",
      // test mode without SII set-up: a non-tax document of the internal series (docs/sii-setup.md)
      "DOCUMENTO NO TRIBUTARIO",
      `N° interno ${order.number}`,
      "Fecha de emisión: 21-11-2026",
      "Tipo de traslado: 1 (Operación constituye venta)",
      "Dirección de destino: Camino Lo Boza 120, RM",
      "Transportista: Transportes Sur, RUT 77.879.240-0",
      "Patente: GHJK12",
      "Cajas",
      "Flete (exento)",
      "CLP 2.000",
      "CLP 380",
      "CLP 2.880",
    ]) {
      expect(text).toContain(expected);
    }
  });

  const badInputs: [string, Record<string, unknown>, string][] = [
    ["an unknown shipping type", { shipping_type: "10" }, "shipping_type"],
    ["shipping type 0", { shipping_type: 0 }, "shipping_type"],
    ["a shipping type that is not a code", { shipping_type: "sale" }, "shipping_type"],
    ["a carrier id that is not a valid RUT", { carrier_id: "77879240-1" }, "carrier_id"],
    ["a licence plate over 8 characters", { licence_plate: "ABCDEFGHI" }, "licence_plate"],
    ["an address over 70 characters", { address: "x".repeat(71) }, "address"],
    ["an unknown state", { state: "ZZ" }, "state"],
    ["an invoice document type", { document: "CL33" }, "document"],
    ["a negative quantity", { lines: [{ name: "x", quantity: -1, amount: 100 }] }, "lines.0.quantity"],
    ["a line discount (orders have none)", { lines: [{ name: "x", amount: 100, discount: 10 }] }, "lines.0.discount"],
    ["an unknown field", { colour: "red" }, "colour"],
    ["an unknown customer", { customer: "cus_nope" }, "customer"],
  ];
  for (const [what, body, field] of badInputs) {
    it(`rejects ${what} with a 400 naming ${field}, writing nothing`, async () => {
      const before = await s.database.prisma.order.count();
      const res = await s.rest("POST", "/v1/orders/", { body: { customer: customerId, lines, ...body } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(Object.keys(res.body.error.fields)).toContain(field);
      expect(await s.database.prisma.order.count()).toBe(before);
    });
  }

  it("names the SII codes when the shipping type is wrong, and leaves a draft unchanged on a bad update", async () => {
    const order = await createOrder();
    const res = await s.rest("PATCH", `/v1/orders/${order.id}/`, { body: { shipping_type: "0", address: "nueva" } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields.shipping_type[0]).toContain(
      "1 (Sale), 2 (Sale to be made (venta por efectuar)), 3 (Consignment)",
    );
    expect((await s.rest("GET", `/v1/orders/${order.id}/`)).body).toEqual(order);
  });

  it("keeps orders inside their organization and mode (404 for others)", async () => {
    const order = await createOrder();
    for (const key of [s.keys.other, s.keys.acmeLive]) {
      for (const [method, path] of [
        ["GET", `/v1/orders/${order.id}/`],
        ["PATCH", `/v1/orders/${order.id}/`],
        ["DELETE", `/v1/orders/${order.id}/`],
        ["GET", `/v1/orders/${order.id}/finalize/`],
        ["GET", `/v1/orders/${order.id}/pdf/`],
      ]) {
        const res = await s.rest(method, path, { key, body: method === "PATCH" ? { address: "x" } : undefined });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.error.code).toBe("not_found");
      }
    }
    expect((await s.database.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe("draft");
  });
});

const INVOICE_ORDERS = `mutation($ids: [ID!]!, $date: Date) {
  invoiceOrders(orderIds: $ids, date: $date) { id status number customer { id } document { id } total amount exempt
  tax lines { name quantity amount exempt total } orders { id number } }
}`;

describe("invoiceOrders (GraphQL)", () => {
  it(
    "bills finalized sale orders of one customer with one draft invoice, lines by order number, and marks them " +
      "invoiced",
    async () => {
      const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Ferretería" }) })).body
        .id;
      const first = await finalizedOrder({ lines: [{ name: "Cajas", quantity: 2, amount: 1000 }] }, customer);
      const second = await finalizedOrder(
        { shipping_type: "2", lines: [{ name: "Flete", amount: 500, exempt: true }] },
        customer,
      );

      const res = await s.graphql(INVOICE_ORDERS, { ids: [second.id, first.id], date: "2026-11-22" });
      expect(res.body.errors).toBeUndefined();
      const invoice = res.body.data.invoiceOrders;
      expect(invoice).toMatchObject({
        status: "draft",
        number: null,
        customer: { id: customer },
        document: { id: "CL33" },
        amount: "2000",
        exempt: "500",
        tax: "380",
        total: "2880",
        lines: [
          { name: "Cajas", quantity: "2", amount: "1000", exempt: false, total: "2000" },
          { name: "Flete", quantity: "1", amount: "500", exempt: true, total: "500" },
        ],
        orders: [
          { id: first.id, number: first.number },
          { id: second.id, number: second.number },
        ],
      });
      const rows = await s.database.prisma.order.findMany({ where: { id: { in: [first.id, second.id] } } });
      expect(rows.map((r) => r.invoiceId)).toEqual([invoice.id, invoice.id]);

      // never twice: the same order again is a 409 naming the invoice, and nothing is created
      const invoicesBefore = await s.database.prisma.invoice.count();
      const again = await s.graphql(INVOICE_ORDERS, { ids: [first.id] });
      expect(again.body.errors[0].extensions.code).toBe("invalid_state");
      expect(again.body.errors[0].message).toContain(`already invoiced by ${invoice.id}`);
      expect(await s.database.prisma.invoice.count()).toBe(invoicesBefore);

      // GraphQL lists show which orders are billed
      const listed = await s.graphql(
        `query($c: String) { orders(where: { customer: { equals: $c }, invoiced: true }) { totalCount edges { node { ` +
          `id invoice { id } } } } }`,
        { c: customer },
      );
      expect(listed.body.data.orders.totalCount).toBe(2);
      expect(listed.body.data.orders.edges.map((e: any) => e.node.invoice.id)).toEqual([invoice.id, invoice.id]);

      // deleting the draft invoice releases its orders, which can then be invoiced again
      expect((await s.rest("DELETE", `/v1/invoices/${invoice.id}/`)).status).toBe(204);
      expect((await s.database.prisma.order.findUniqueOrThrow({ where: { id: first.id } })).invoiceId).toBeNull();
      const rebilled = await s.graphql(INVOICE_ORDERS, { ids: [first.id] });
      expect(rebilled.body.data.invoiceOrders.total).toBe("2380");
    },
  );

  it("invoices an order once when ten calls race for it", async () => {
    const order = await finalizedOrder();
    const results = await Promise.all(Array.from({ length: 10 }, () => s.graphql(INVOICE_ORDERS, { ids: [order.id] })));
    expect(results.filter((r) => !r.body.errors)).toHaveLength(1);
    expect(results.filter((r) => r.body.errors?.[0].extensions.code === "invalid_state")).toHaveLength(9);
    expect(await s.database.prisma.invoice.count({ where: { orders: { some: { id: order.id } } } })).toBe(1);
  });

  it(
    "refuses drafts (409), unknown or foreign orders (404), non-sales and mixed customers (400), " + "changing nothing",
    async () => {
      const other = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Otro" }) })).body.id;
      const draft = await createOrder();
      const transfer = await finalizedOrder({ shipping_type: "5" });
      const sale = await finalizedOrder();
      const othersSale = await finalizedOrder({}, other);
      const foreignCustomer = (await s.rest("POST", "/v1/customers/", { key: s.keys.other, body: chileanCustomer() }))
        .body.id;
      const foreign = (
        await s.rest("POST", "/v1/orders/", { key: s.keys.other, body: { customer: foreignCustomer, lines } })
      ).body;
      await s.rest("GET", `/v1/orders/${foreign.id}/finalize/`, { key: s.keys.other });

      const invoicesBefore = await s.database.prisma.invoice.count();
      const cases: [string[], string, string | RegExp][] = [
        [[draft.id], "invalid_state", "is a draft"],
        [["ord_unknown"], "not_found", "ord_unknown"],
        [[foreign.id], "not_found", foreign.id],
        [[transfer.id], "validation_error", "which is not a sale"],
        [[sale.id, othersSale.id], "validation_error", "belongs to another customer"],
        [[], "validation_error", "give at least one order"],
      ];
      for (const [ids, code, message] of cases) {
        const res = await s.graphql(INVOICE_ORDERS, { ids });
        expect(res.body.errors?.[0].extensions.code, JSON.stringify(ids)).toBe(code);
        expect(res.body.errors[0].message).toMatch(message);
      }
      expect(await s.database.prisma.invoice.count()).toBe(invoicesBefore);
      expect(
        await s.database.prisma.order.count({
          where: { id: { in: [sale.id, othersSale.id, transfer.id] }, invoiceId: { not: null } },
        }),
      ).toBe(0);
    },
  );

  it("keeps the customer of an invoice that bills orders", async () => {
    const order = await finalizedOrder();
    const invoice = (await s.graphql(INVOICE_ORDERS, { ids: [order.id] })).body.data.invoiceOrders;
    const other = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Otro" }) })).body.id;
    const res = await s.rest("PATCH", `/v1/invoices/${invoice.id}/`, { body: { customer: other } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields.customer[0]).toContain("bills 1 order(s)");
  });
});

describe("orders over GraphQL", () => {
  it("creates, updates, finalizes and deletes with the same rules as REST", async () => {
    const created = await s.graphql(
      `mutation($input: OrderInput!) { createOrder(input: $input) { id status shippingType total lines { tax ` +
        `taxPercent } customer { aggregations { sales } } currency { id } } }`,
      {
        input: { customer: customerId, shippingType: "consignment", lines: [{ name: "Consignación", amount: "1000" }] },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const order = created.body.data.createOrder;
    expect(order).toMatchObject({
      status: "draft",
      shippingType: "consignment",
      total: "1190",
      lines: [{ tax: "190", taxPercent: "19" }],
      currency: { id: "CLP" },
    });

    // a shipping type outside the ShippingType enum is refused by GraphQL validation, before the service
    const bad = await s.graphql(`mutation($id: ID!) { updateOrder(id: $id, input: { shippingType: "3" }) { id } }`, {
      id: order.id,
    });
    expect(bad.body.data).toBeUndefined();
    expect(bad.body.errors[0].extensions.code).toBe("validation_error");
    expect(bad.body.errors[0].message).toContain("ShippingType");

    const fin = await s.graphql(`mutation($id: ID!) { finalizeOrder(id: $id) { status number } }`, { id: order.id });
    expect(fin.body.data.finalizeOrder.status).toBe("finalized");
    const del = await s.graphql(`mutation($id: ID!) { deleteOrder(id: $id) { deleted } }`, { id: order.id });
    expect(del.body.errors[0].extensions.code).toBe("invalid_state");

    const node = await s.graphql(`query($id: ID!) { node(id: $id) { __typename ... on Order { id number } } }`, {
      id: order.id,
    });
    expect(node.body.data.node).toEqual({
      __typename: "Order",
      id: order.id,
      number: fin.body.data.finalizeOrder.number,
    });
  });
});

describe("GET /v1/orders/ (the list)", () => {
  let listed: string;
  /** A (finalized, Oct 1, created in January), B (finalized, Oct 15), C (draft, Nov 1); B and C tie on created */
  let a: any, b: any, c: any;
  const ids = (page: { results: { id: string }[] }) => page.results.map((r) => r.id);
  const list = async (query: string, key?: string) => {
    const res = await s.rest("GET", `/v1/orders/?${query}`, { key });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    listed = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "Pedidos SpA" }) })).body.id;
    const made = [];
    for (const date of ["2026-10-01", "2026-10-15", "2026-11-01"]) made.push(await createOrder({ date }, listed));
    for (const order of made.slice(0, 2))
      expect((await s.rest("GET", `/v1/orders/${order.id}/finalize/`)).status).toBe(200);
    await s.database.prisma.order.update({
      where: { id: made[0].id },
      data: { createdAt: new Date("2026-01-10T09:00:00.000Z") },
    });
    const tie = new Date("2026-11-20T10:00:00.000Z");
    await s.database.prisma.order.updateMany({
      where: { id: { in: [made[1].id, made[2].id] } },
      data: { createdAt: tie },
    });
    [a, b, c] = await Promise.all(made.map(async (o) => (await s.rest("GET", `/v1/orders/${o.id}/`)).body));
  });

  it("pages newest first (a tie of created: the draft, then by number), each order as retrieve prints it", async () => {
    expect(await list(`customer=${listed}&page_size=2`)).toEqual({
      count: 3,
      next: `${s.url}/v1/orders/?customer=${listed}&page_size=2&page=2`,
      previous: null,
      results: [c, b],
    });
    expect((await list(`customer=${listed}&page_size=2&page=2`)).results).toEqual([a]);
  });

  it("filters by status, number, date, created, shipping type and invoiced", async () => {
    const billed = await s.graphql(`mutation($ids: [ID!]!) { invoiceOrders(orderIds: $ids) { id } }`, { ids: [a.id] });
    expect(billed.body.errors).toBeUndefined();
    const invoice = billed.body.data.invoiceOrders.id;
    const cases: [string, string[]][] = [
      ["status=finalized", [b.id, a.id]],
      ["status=draft", [c.id]],
      [`number=${a.number}`, [a.id]],
      [`number__in=${a.number},${b.number}`, [b.id, a.id]],
      ["date=2026-10-15", [b.id]],
      ["date__gte=2026-10-02&date__lte=2026-11-01", [c.id, b.id]],
      ["created__lte=2026-01-31", [a.id]],
      ["created__gte=2026-11-20", [c.id, b.id]],
      ["shipping_type=1", [c.id, b.id, a.id]],
      ["shipping_type__in=2,3", []],
      ["invoiced=true", [a.id]],
      ["invoiced=false", [c.id, b.id]],
      [`invoice=${invoice}`, [a.id]],
    ];
    for (const [query, expected] of cases)
      expect(ids(await list(`customer=${listed}&${query}`)), query).toEqual(expected);
  });

  it("refuses an unknown filter or operator and a bad value with a 400 naming the parameter", async () => {
    for (const [query, field] of [
      ["colour=red", "colour"],
      ["number=x", "number"],
      ["number__contains=1", "number__contains"],
      ["date=2026-13-01", "date"],
      ["date__contains=2026", "date__contains"],
      ["status=paid", "status"],
    ]) {
      const res = await s.rest("GET", `/v1/orders/?${query}`);
      expect(res.status, query).toBe(400);
      expect(Object.keys(res.body.error.fields), query).toEqual([field]);
    }
  });

  it("lists only the caller's organization and mode", async () => {
    expect((await list(`customer=${listed}`, s.keys.other)).count).toBe(0);
    expect((await list(`customer=${listed}`, s.keys.acmeLive)).count).toBe(0);
  });
});
