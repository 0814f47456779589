/**
 * services/orders.ts createOrder, updateOrder, finalizeOrder and invoiceOrders called directly: the
 * stored order (CL52 by default, totals and per-line tax to the unit, the carrier's RUT normalized),
 * the 400's fields in the order prepare finds them, the internal numbering at finalize (the CL52
 * order counter, gapless), and the draft invoice that bills finalized orders once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInvoice, finalizeInvoice } from "../../src/services/invoices.js";
import { createOrder, finalizeOrder, invoiceOrders, updateOrder } from "../../src/services/orders.js";
import {
  chileanCustomerOf,
  rejection,
  startServiceDatabase,
  type ServiceDatabase,
} from "../helpers/service-context.js";

let s: ServiceDatabase;
let customerId: string;
beforeAll(async () => {
  s = await startServiceDatabase();
  customerId = await chileanCustomerOf(s);
});
afterAll(async () => s?.close());

/** 2 x 1000 taxable and 1 x 500 exempt on a CL52: tax 380, total 2880. */
const LINES = [
  { name: "Cajas", description: "Cartón 40x40", quantity: 2, amount: 1000 },
  { name: "Flete", quantity: 1, amount: 500, exempt: true },
];

const totalsOf = (row: { amount: unknown; exempt: unknown; tax: unknown; total: unknown }) =>
  [row.amount, row.exempt, row.tax, row.total].map(String);

async function stored(id: string) {
  return s.database.prisma.order.findUniqueOrThrow({
    where: { id },
    include: { lines: { orderBy: { position: "asc" } } },
  });
}

async function finalized(input: Parameters<typeof createOrder>[1] = {}) {
  const order = await createOrder(s.acme, { customer: customerId, lines: LINES, ...input });
  return finalizeOrder(s.acme, order.id);
}

describe("createOrder", () => {
  it("stores a CL52 draft in CLP with shipping type 1, the transport fields, totals and per-line tax", async () => {
    const order = await createOrder(s.acme, {
      customer: customerId,
      date: "2026-11-20",
      address: "Camino Lo Boza 120, Pudahuel",
      carrierId: "77.879.240-0",
      carrierName: "Transportes Sur",
      state: "RM",
      licencePlate: "GHJK12",
      lines: LINES,
    });
    const row = await stored(order.id);
    expect(row).toMatchObject({
      organizationId: s.acme.auth.organizationId,
      testMode: true,
      status: "draft",
      number: null,
      numbering: null,
      documentTypeId: "CL52",
      currencyId: "CLP",
      shippingType: "1",
      address: "Camino Lo Boza 120, Pudahuel",
      carrierId: "77879240-0",
      carrierName: "Transportes Sur",
      state: "RM",
      licencePlate: "GHJK12",
      userEmail: "ops@acme.cl",
      invoiceId: null,
    });
    expect(row.date.toISOString().slice(0, 10)).toBe("2026-11-20");
    expect(totalsOf(row)).toEqual(["2000", "500", "380", "2880"]);
    expect(
      row.lines.map((l) => [
        l.position,
        l.name,
        String(l.total),
        l.exempt,
        l.tax?.toString() ?? null,
        String(l.taxPercent),
      ]),
    ).toEqual([
      [0, "Cajas", "2000", false, "380", "19"],
      [1, "Flete", "500", true, null, "0"],
    ]);
    const events = await s.database.prisma.event.findMany({ where: { objectId: order.id } });
    expect(events.map((e) => e.type)).toEqual(["order.created"]);
  });

  it("names every bad field in one 400 in prepare's order, the totals' checks after them; writes nothing", async () => {
    const before = [await s.database.prisma.order.count(), await s.database.prisma.orderLine.count()];
    const error = await rejection(
      createOrder(s.acme, {
        customer: customerId,
        shippingType: "10",
        address: "x".repeat(71),
        carrierName: "x".repeat(101),
        licencePlate: "ABCDEFGHI",
        carrierId: "77879240-1",
        state: "ZZ",
        lines: [{ name: "", amount: 100 }],
      }),
    );
    expect([error.code, error.status]).toEqual(["validation_error", 400]);
    expect(Object.keys(error.fields)).toEqual([
      "shipping_type",
      "address",
      "carrier_name",
      "licence_plate",
      "carrier_id",
      "state",
      "lines.0.name",
    ]);
    expect(error.fields.address).toEqual(["must have at most 70 characters"]);
    expect(error.fields.licence_plate).toEqual(["must have at most 8 characters"]);
    expect(error.fields.carrier_id).toEqual(["must be the carrier's valid Chilean RUT (for example 76042235-5)"]);
    expect(error.message).toMatch(/^Invalid order: /);
    expect([await s.database.prisma.order.count(), await s.database.prisma.orderLine.count()]).toEqual(before);
    // the totals' checks (quantity and amount not negative) run once every other field is good
    const negative = await rejection(
      createOrder(s.acme, { customer: customerId, lines: [{ name: "x", quantity: -1, amount: 100 }] }),
    );
    expect(negative.fields).toEqual({ "lines.0.quantity": ["must not be negative"] });
    expect(await s.database.prisma.order.count()).toBe(before[0]);
  });

  it("refuses an invoice document type and another organization's customer", async () => {
    const invoiceType = await rejection(createOrder(s.acme, { customer: customerId, document: "CL33", lines: LINES }));
    expect(Object.keys(invoiceType.fields)).toEqual(["document"]);
    const foreign = await rejection(createOrder(s.other, { customer: customerId, lines: LINES }));
    expect(Object.keys(foreign.fields)).toContain("customer");
    expect(await s.database.prisma.order.count({ where: { organizationId: s.other.auth.organizationId } })).toBe(0);
  });
});

describe("updateOrder", () => {
  it("replaces the lines, keeps what is not sent and recomputes the totals", async () => {
    const order = await createOrder(s.acme, {
      customer: customerId,
      address: "Origen 1",
      licencePlate: "AB1234",
      lines: LINES,
    });
    const updated = await updateOrder(s.acme, order.id, {
      shippingType: "5",
      address: "Bodega 2",
      lines: [{ name: "Pallet", quantity: 3, amount: 1500 }],
    });
    // 3 x 1500 = 4500 taxable: tax 855
    expect(totalsOf(updated)).toEqual(["4500", "0", "855", "5355"]);
    const row = await stored(order.id);
    expect(row).toMatchObject({ shippingType: "5", address: "Bodega 2", licencePlate: "AB1234", status: "draft" });
    expect(row.lines.map((l) => [l.name, String(l.quantity), String(l.total), String(l.tax)])).toEqual([
      ["Pallet", "3", "4500", "855"],
    ]);
    const events = await s.database.prisma.event.findMany({
      where: { objectId: order.id },
      orderBy: { sequence: "asc" },
    });
    expect(events.map((e) => e.type)).toEqual(["order.created", "order.updated"]);
  });

  it("leaves the draft as it was on a bad update (400) and refuses a finalized order (409)", async () => {
    const order = await createOrder(s.acme, { customer: customerId, lines: LINES });
    const before = await stored(order.id);
    const bad = await rejection(updateOrder(s.acme, order.id, { shippingType: "0", address: "nueva" }));
    expect(Object.keys(bad.fields)).toEqual(["shipping_type"]);
    expect(bad.fields.shipping_type[0]).toContain(
      "1 (Sale), 2 (Sale to be made (venta por efectuar)), 3 (Consignment)",
    );
    expect(await stored(order.id)).toEqual(before);

    const done = await finalizeOrder(s.acme, order.id);
    const locked = await rejection(updateOrder(s.acme, order.id, { address: "otra" }));
    expect([locked.code, locked.status]).toEqual(["invalid_state", 409]);
    expect(locked.message).toContain("finalized order");
    expect((await stored(order.id)).address).toBe(done.address);
  });
});

describe("finalizeOrder", () => {
  it("numbers orders in the internal CL52 order series, one after the other, apart from invoices", async () => {
    const a = await finalized();
    // an invoice finalized in between takes a number of its own series (CL33, kind invoice)
    const draft = await createInvoice(s.acme, { customer: customerId, lines: [{ name: "x", amount: 1000 }] });
    const invoice = await finalizeInvoice(s.acme, draft.id);
    const b = await finalized();
    expect([a.status, a.numbering, b.numbering, invoice.numbering]).toEqual([
      "finalized",
      "internal",
      "internal",
      "internal",
    ]);
    expect(b.number).toBe(a.number! + 1);
    expect(a.finalizedAt).toBeInstanceOf(Date);
    const counters = await s.database.prisma.documentCounter.findMany({
      where: { organizationId: s.acme.auth.organizationId, testMode: true },
      orderBy: { documentTypeId: "asc" },
    });
    expect(counters.map((c) => [c.documentTypeId, c.kind, c.lastNumber])).toEqual([
      ["CL33", "invoice", invoice.number],
      ["CL52", "order", b.number],
    ]);
    // the customer as issued is stored with it
    expect((await stored(a.id)).customerSnapshot).toMatchObject({ name: "Cliente SpA" });
    const events = await s.database.prisma.event.findMany({ where: { objectId: a.id }, orderBy: { sequence: "asc" } });
    expect(events.map((e) => e.type)).toEqual(["order.created", "order.finalized"]);
  });

  it("refuses an order without lines (400 on lines) and uses up no number", async () => {
    const empty = await createOrder(s.acme, { customer: customerId, lines: [] });
    const counter = () =>
      s.database.prisma.documentCounter.findFirst({
        where: { organizationId: s.acme.auth.organizationId, documentTypeId: "CL52", kind: "order" },
      });
    const before = await counter();
    const error = await rejection(finalizeOrder(s.acme, empty.id));
    expect(error.fields).toEqual({ lines: ["an order needs at least one line to be finalized"] });
    expect((await stored(empty.id)).status).toBe("draft");
    expect(await counter()).toEqual(before);
    const next = await finalized();
    expect(next.number).toBe((before?.lastNumber ?? 0) + 1);
  });
});

describe("invoiceOrders", () => {
  it("bills two finalized sale orders with one CL33 draft, lines by order number, and links both", async () => {
    const first = await finalized({ lines: [{ name: "Cajas", quantity: 2, amount: 1000 }] });
    const second = await finalized({ shippingType: "2", lines: [{ name: "Flete", amount: 500, exempt: true }] });
    const invoice = await invoiceOrders(s.acme, { orderIds: [second.id, first.id], date: "2026-11-22" });
    const row = await s.database.prisma.invoice.findUniqueOrThrow({
      where: { id: invoice.id },
      include: { lines: { orderBy: { position: "asc" } } },
    });
    expect(row).toMatchObject({ status: "draft", number: null, customerId, documentTypeId: "CL33", currencyId: "CLP" });
    expect(totalsOf(row)).toEqual(["2000", "500", "380", "2880"]);
    expect(row.lines.map((l) => [l.name, String(l.quantity), String(l.amount), l.exempt])).toEqual([
      ["Cajas", "2", "1000", false],
      ["Flete", "1", "500", true],
    ]);
    const orders = await s.database.prisma.order.findMany({ where: { id: { in: [first.id, second.id] } } });
    expect(orders.map((o) => o.invoiceId)).toEqual([invoice.id, invoice.id]);

    // never twice: 409 naming the invoice, no second invoice
    const invoices = await s.database.prisma.invoice.count();
    const again = await rejection(invoiceOrders(s.acme, { orderIds: [first.id] }));
    expect([again.code, again.message]).toEqual([
      "invalid_state",
      `Order ${first.id} is already invoiced by ${invoice.id}; an order is invoiced once`,
    ]);
    expect(await s.database.prisma.invoice.count()).toBe(invoices);
  });

  it("refuses a draft (409), a transfer (400 on order_ids.0), none (400) and an unknown order (404)", async () => {
    const draft = await createOrder(s.acme, { customer: customerId, lines: LINES });
    const transfer = await finalized({ shippingType: "5" });
    const invoices = await s.database.prisma.invoice.count();
    const drafted = await rejection(invoiceOrders(s.acme, { orderIds: [draft.id] }));
    expect([drafted.code, drafted.status]).toEqual(["invalid_state", 409]);
    expect(drafted.message).toBe(`Order ${draft.id} is a draft; finalize it before invoicing it`);
    const moved = await rejection(invoiceOrders(s.acme, { orderIds: [transfer.id] }));
    expect([moved.code, Object.keys(moved.fields)]).toEqual(["validation_error", ["order_ids.0"]]);
    expect(moved.fields["order_ids.0"][0]).toContain("which is not a sale");
    expect((await rejection(invoiceOrders(s.acme, { orderIds: [] }))).fields).toEqual({
      order_ids: ["give at least one order"],
    });
    const unknown = await rejection(invoiceOrders(s.acme, { orderIds: ["ord_unknown"] }));
    expect([unknown.code, unknown.status]).toEqual(["not_found", 404]);
    // another organization's finalized order is unknown too
    const foreign = await rejection(invoiceOrders(s.other, { orderIds: [transfer.id] }));
    expect(foreign.code).toBe("not_found");
    expect(await s.database.prisma.invoice.count()).toBe(invoices);
    expect(
      await s.database.prisma.order.count({ where: { id: { in: [draft.id, transfer.id] }, invoiceId: { not: null } } }),
    ).toBe(0);
  });
});
