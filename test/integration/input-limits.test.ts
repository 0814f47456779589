/**
 * Bad input is a 400 (or 404 for a malformed id) that names the field and changes nothing, never a
 * 500 (docs/input-limits.md): NUL and unpaired surrogates, nesting, Decimal(20,6) range, ids,
 * text lengths, keys named like Object.prototype's, bounded error messages.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { MAX_DECIMAL } from "../../src/domain/input-limits.js";

let s: TestServer;
let customer: string;
let invoice: string;
beforeAll(async () => {
  s = await startTestServer();
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
  invoice = (
    await s.rest("POST", "/v1/invoices/", {
      body: { customer, document: "CL33", lines: [{ name: "A", quantity: 1, amount: 1000 }] },
    })
  ).body.id;
});
afterAll(async () => s?.close());

const counts = async () => [
  await s.database.prisma.customer.count(),
  await s.database.prisma.invoice.count(),
  await s.database.prisma.invoiceLine.count(),
];

describe("NUL and unpaired surrogates", () => {
  it("a NUL in a body value (raw or \\u0000 escaped) is a 400 naming the field, nothing written", async () => {
    const before = await counts();
    const escaped = await s.rest("POST", "/v1/customers/", { raw: '{"name":"Cliente\\u0000SpA","country":"CL"}' });
    expect(escaped.status).toBe(400);
    expect(escaped.body.error).toMatchObject({
      code: "validation_error",
      fields: { name: [expect.stringMatching(/NUL/)] },
    });
    const line = await s.rest("POST", "/v1/invoices/", {
      body: { customer, document: "CL33", lines: [{ name: "A", description: "x\u0000", quantity: 1, amount: 1 }] },
    });
    expect(line.status).toBe(400);
    expect(line.body.error.fields).toEqual({ "lines.0.description": [expect.stringMatching(/NUL/)] });
    const key = await s.rest("POST", "/v1/customers/", { raw: '{"name":"A","metadata":{"k\\u0000":"v"}}' });
    expect(key.status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  it("an unpaired surrogate is a 400 on REST and GraphQL", async () => {
    const rest = await s.rest("PATCH", `/v1/customers/${customer}/`, { raw: '{"name":"\\ud800"}' });
    expect(rest.status).toBe(400);
    expect(rest.body.error.fields).toEqual({ name: [expect.stringMatching(/surrogate/)] });
    const gql = await s.graphql(`mutation($input: CustomerInput!) { createCustomer(input: $input) { id } }`, {
      input: { name: "ok", address: "a\udc00" },
    });
    expect(gql.body.errors[0].extensions).toMatchObject({
      code: "validation_error",
      fields: { address: [expect.stringMatching(/surrogate/)] },
    });
  });

  it("NUL and odd bytes in a path id are a 404 without a query; in a query string a 400", async () => {
    for (const id of [
      "inv_%00",
      "%00",
      "inv_%C0%AF",
      "inv_%ED%A0%80",
      "inv_abc%27%3B--",
      "constructor",
      "__proto__",
      "inv_" + "a".repeat(300),
    ]) {
      for (const path of [`/v1/invoices/${id}/`, `/v1/invoices/${id}/finalize/`, `/v1/customers/${id}/`]) {
        const res = await s.rest("GET", path);
        expect(res.status, path).toBe(404);
        expect(res.body.error.code).toBe("not_found");
      }
      expect((await s.rest("PATCH", `/v1/customers/${id}/`, { body: { name: "x" } })).status).toBe(404);
      expect((await s.rest("DELETE", `/v1/invoices/${id}/`)).status).toBe(404);
    }
    const query = await s.rest("GET", "/v1/customers/?name=a%00b");
    expect(query.status).toBe(400);
    expect(query.body.error.fields).toEqual({ name: [expect.stringMatching(/NUL/)] });
  });

  it("node and nodes read malformed ids as null", async () => {
    const res = await s.graphql(
      `query($ids: [ID!]!) { a: node(id: "inv_\\u0000") { id } b: node(id: "constructor") { id } nodes(ids: $ids) ` +
        `{ id } }`,
      { ids: [invoice, "x\u0000", "toString_1", "inv_!!"] },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data).toEqual({ a: null, b: null, nodes: [{ id: invoice }, null, null, null] });
  });

  it("a malformed reference id in an input is a 400 on the field", async () => {
    const res = await s.rest("POST", "/v1/invoices/", { body: { customer: "cus_ü", document: "CL33" } });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual({ customer: [expect.stringMatching(/must be an id/)] });
  });
});

describe("nesting and keys", () => {
  it("a body nested 100 000 levels deep is a 400 before parsing, on REST and GraphQL", async () => {
    const deep = `{"name":"A","metadata":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
    const rest = await s.rest("POST", "/v1/customers/", { raw: deep });
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe("validation_error");
    // GraphQL: a JSONObject variable 5000 levels deep (sent as text: JSON.stringify itself would overflow)
    const nested = `${'{"a":'.repeat(5_000)}"x"${"}".repeat(5_000)}`;
    const query = "mutation($input: CustomerInput!) { createCustomer(input: $input) { id } }";
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.keys.acme}` },
      body: `{"query":${JSON.stringify(query)},"variables":{"input":{"name":"A","metadata":${nested}}}}`,
    });
    const gql = await res.json();
    // 100 000 levels inside a GraphQL variable, and a list variable nested as deep: a 4xx-style error, no crash
    for (const variables of [
      `{"m":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`,
      `{"ids":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
    ]) {
      const deepQuery = variables.startsWith('{"m"')
        ? `mutation($m: JSONObject!) { updatePayment(id: "pay_x", metadata: $m) { id } }`
        : `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`;
      const deepRes = await fetch(`${s.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${s.keys.acme}` },
        body: `{"query":${JSON.stringify(deepQuery)},"variables":${variables}}`,
      });
      const deepBody = await deepRes.text();
      expect(deepRes.status, deepBody.slice(0, 300)).toBeLessThan(500);
      expect(deepBody).not.toContain("internal_error");
      expect(deepBody.length).toBeLessThan(3_000);
    }
    expect(gql.errors[0].extensions.code).toBe("validation_error");
    const [[path, reasons]] = Object.entries(gql.errors[0].extensions.fields as Record<string, string[]>);
    expect(path).toBe(`metadata${".a".repeat(32)}`);
    expect(reasons).toEqual(["must not nest arrays and objects more than 32 levels deep"]);
  });

  it(
    "a list argument of more than 1000 items is a 400 on it (a filter's `in` never becomes 100 000 query " +
      "parameters)",
    async () => {
      const res = await s.graphql(
        `query($in: [String!]) { customers(first: 1, where: { name: { in: $in } }) { totalCount } }`,
        { in: Array.from({ length: 100_000 }, (_, i) => `n${i}`) },
      );
      expect(res.body.errors[0].extensions).toMatchObject({
        code: "validation_error",
        fields: { "where.name.in": ["must have at most 1000 items"] },
      });
    },
  );

  it("keys named like Object.prototype's are unknown fields, never a crash", async () => {
    for (const raw of [
      '{"constructor":1}',
      '{"__proto__":{"x":1}}',
      '{"toString":"a","lines":[{"constructor":1,"__proto__":2}]}',
      '{"valueOf":[],"hasOwnProperty":{}}',
    ]) {
      const res = await s.rest("POST", "/v1/invoices/", { raw });
      expect(res.status, raw).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
    const res = await s.rest("POST", "/v1/invoices/", { raw: '{"constructor":1,"__proto__":{"a":1}}' });
    expect(res.body.error.fields).toMatchObject({ constructor: ["unknown field"], __proto__: ["unknown field"] });
  });
});

describe("money and quantity ranges", () => {
  it(`10^14 and above is a 400 naming the field and ${MAX_DECIMAL}; the largest value itself is accepted`, async () => {
    const before = await counts();
    for (const amount of [1e14, "100000000000000", 1e21, "-1e15".replace("e15", "000000000000000")]) {
      const res = await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL33", lines: [{ name: "A", quantity: 1, amount }] },
      });
      expect(res.status, String(amount)).toBe(400);
      expect(res.body.error.fields["lines.0.amount"].join()).toContain(MAX_DECIMAL);
    }
    const gql = await s.graphql(
      `mutation { createInvoice(input: { customer: "${customer}", document: "CL33", lines: [{ name: "A", quantity: ` +
        `"1", amount: "100000000000000" }] }) { id } }`,
    );
    expect(gql.body.errors[0].message).toContain(MAX_DECIMAL); // a literal: GraphQL's document validation error
    const vars = await s.graphql(`mutation($input: InvoiceInput!) { createInvoice(input: $input) { id } }`, {
      input: { customer, document: "CL33", lines: [{ name: "A", quantity: "100000000000000", amount: "1" }] },
    });
    expect(vars.body.errors[0].extensions).toMatchObject({
      code: "validation_error",
      fields: { "lines.0.quantity": [expect.stringContaining(MAX_DECIMAL)] },
    });
    expect(await counts()).toEqual(before);
  });

  it("a computed total over the range (quantity x amount) is a 400, nothing written", async () => {
    const before = await counts();
    const res = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer,
        document: "CL33",
        currency: "USD",
        lines: [{ name: "A", quantity: MAX_DECIMAL, amount: MAX_DECIMAL }],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    expect(await counts()).toEqual(before);
  });
});

describe("text lengths and bounded messages", () => {
  it("a text over its field's maximum is a 400 with the field path; a note may be longer than a name", async () => {
    const long = await s.rest("POST", "/v1/invoices/", {
      body: {
        customer,
        document: "CL33",
        lines: [{ name: "A", description: "d".repeat(1_000_001), quantity: 1, amount: 1 }],
      },
    });
    expect(long.status).toBe(400);
    expect(long.body.error.fields).toEqual({ "lines.0.description": ["must have at most 1000 characters"] });
    const name = await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ name: "n".repeat(1001) }) });
    expect(name.body.error.fields).toEqual({ name: ["must have at most 1000 characters"] });
    const note = await s.rest("PATCH", `/v1/invoices/${invoice}/`, { body: { note: "n".repeat(5000) } });
    expect(note.status).toBe(200);
    expect(
      (await s.rest("PATCH", `/v1/invoices/${invoice}/`, { body: { note: "n".repeat(5001) } })).body.error.fields,
    ).toEqual({ note: ["must have at most 5000 characters"] });
  });

  it("a 4.9 MB value in an error quotes at most 200 characters of it", async () => {
    const huge = "9".repeat(2_400_000); // twice in the body, under the 5 MB body limit
    const rest = await s.rest("POST", "/v1/invoices/", {
      raw: JSON.stringify({
        customer,
        document: "CL33",
        lines: [{ name: "A", quantity: 1, amount: `x${huge}` }],
        [`k${huge}`]: 1,
      }),
    });
    expect(rest.status).toBe(400);
    expect(rest.text.length).toBeLessThan(3_000);
    const gql = await s.graphql(`mutation($input: InvoiceInput!) { createInvoice(input: $input) { id } }`, {
      input: { customer, document: "CL33", lines: [{ name: "A", quantity: "1", amount: `x${huge}` }] },
    });
    expect(JSON.stringify(gql.body).length).toBeLessThan(3_000);
    expect(gql.body.errors[0].extensions.code).toBe("validation_error");
    const literal = await s.graphql(
      `{ node(id: "${huge}") { id } }`.replace("node(", "nodes(").replace('"', '["').replace('")', '"])') +
        ` { __typename }`,
    );
    expect(JSON.stringify(literal.body).length).toBeLessThan(3_000);
  });
});

describe('JSON types (docs/rest.md "Requests")', () => {
  const allCounts = async () => [
    ...(await counts()),
    await s.database.prisma.payment.count(),
    await s.database.prisma.invoice.count({ where: { note: { not: null } } }),
  ];
  let finalized: string;
  beforeAll(async () => {
    finalized = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer, document: "CL33", currency: "CLP", lines: [{ name: "B", quantity: 1, amount: 5000 }] },
      })
    ).body.id;
    expect((await s.rest("GET", `/v1/invoices/${finalized}/finalize/`)).status).toBe(200);
  });

  it("an object or array for a scalar of a customer is a 400 naming it, never null: nothing written", async () => {
    const before = await allCounts();
    // the observed case: an operator object for `state` (a printed state is `{id, code, name}`: no `code`, no state)
    for (const [body, fields] of [
      [chileanCustomer({ state: { $gt: "" } }), { state: ["must be a string"] }],
      [chileanCustomer({ state: { code: { $ne: null } } }), { state: ["must be a string"] }],
      [chileanCustomer({ name: ["Cliente", "SpA"] }), { name: ["must be a string"] }],
      [chileanCustomer({ email: 5, phone: true }), { email: ["must be a string"], phone: ["must be a string"] }],
      [chileanCustomer({ metadata: ["a"] }), { metadata: ["must be a JSON object"] }],
      [chileanCustomer({ contacts: [{ name: {}, email: "a@b.cl" }] }), { "contacts.0.name": ["must be a string"] }],
      [chileanCustomer({ contacts: ["Ana"] }), { contacts: ["item 0: must be an object"] }],
    ] as const) {
      const res = await s.rest("POST", "/v1/customers/", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: "validation_error", fields });
    }
    const patched = await s.rest("PATCH", `/v1/customers/${customer}/`, {
      body: { name: { $set: "x" }, state: [], address: 12 },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error.fields).toEqual({
      name: ["must be a string"],
      state: ["must be a string"],
      address: ["must be a string"],
    });
    expect(await allCounts()).toEqual(before);
    const after = (await s.rest("GET", `/v1/customers/${customer}/`)).body;
    expect([after.name, after.state.code, after.address]).toEqual(["Cliente SpA", "RM", "Av. Siempre Viva 123"]);
    // the printed forms stay accepted: a state object with its code; metadata is an object
    const printed = await s.rest("PATCH", `/v1/customers/${customer}/`, {
      body: { state: { id: "CL-RM", code: "RM", name: "Metropolitana" }, metadata: { crm: "1" } },
    });
    expect(printed.status, printed.text).toBe(200);
  });

  it("an invoice's references, lines and money of the wrong type: 400s naming the path, nothing written", async () => {
    const before = await allCounts();
    const line = { name: "A", quantity: 1, amount: 1000 };
    for (const [body, fields] of [
      [{ customer: { $ne: null }, document: "CL33", lines: [line] }, { customer: ["must be a string"] }],
      [{ customer: 12345, document: "CL33", lines: [line] }, { customer: ["must be a string"] }],
      [{ customer, document: { $gt: "" }, lines: [line] }, { document: ["must be a string"] }],
      [{ customer, document: "CL33", lines: [{ ...line, quantity: { $gt: 0 } }] }, { "lines.0.quantity": [] }],
      [{ customer, document: "CL33", lines: [{ ...line, amount: [1000] }] }, { "lines.0.amount": [] }],
      [{ customer, document: "CL33", lines: [{ ...line, exempt: "true" }] }, { "lines.0.exempt": [] }],
      [{ customer, document: "CL33", lines: [line], note: { a: 1 } }, { note: ["must be a string"] }],
      [{ customer, document: "CL33", lines: [line], date: 20261124 }, { date: ["must be a date yyyy-mm-dd"] }],
      [{ customer, document: "CL33", lines: [line], discount_scheme: { $in: ["%"] } }, { discount_scheme: [] }],
    ] as const) {
      const res = await s.rest("POST", "/v1/invoices/", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const [path] = Object.keys(fields);
      expect(Object.keys(res.body.error.fields), JSON.stringify(body)).toEqual([path]);
      const reasons = (fields as Record<string, readonly string[]>)[path];
      if (reasons.length) expect(res.body.error.fields[path]).toEqual(reasons);
    }
    expect((await s.rest("PATCH", `/v1/invoices/${invoice}/`, { body: { note: ["x"] } })).status).toBe(400);
    expect(await allCounts()).toEqual(before);
    // money as a JSON number or a decimal string, as documented
    const created = await s.rest("POST", "/v1/invoices/", {
      body: { customer, document: "CL33", lines: [{ name: "A", quantity: "2", amount: 1000.5, exempt: false }] },
    });
    expect(created.status).toBe(201);
    await s.rest("DELETE", `/v1/invoices/${created.body.id}/`);
  });

  it("a payment's amount or invoice of the wrong type is a 400 and no payment", async () => {
    const before = await allCounts();
    for (const [body, path, reason] of [
      [{ invoice: finalized, amount: { $gt: 0 } }, "amount", "must be a decimal number"],
      [{ invoice: finalized, amount: true }, "amount", "must be a decimal number"],
      [{ invoice: [finalized], amount: 100 }, "invoice", "must be a string"],
      [{ invoice: finalized, amount: 100, description: { text: "x" } }, "description", "must be a string"],
    ] as const) {
      const res = await s.rest("POST", "/v1/payments/", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.fields).toEqual({ [path]: [reason] });
    }
    expect(await allCounts()).toEqual(before);
    const paid = await s.rest("POST", "/v1/payments/", { body: { invoice: finalized, amount: "100" } });
    expect(paid.status).toBe(201);
  });

  it("an item of a list of strings of the wrong type is reported on the list", async () => {
    const res = await s.rest("POST", "/v1/reminders/messages/", {
      body: { subject: "Factura", recipient: ["a@b.cl", { $ne: "" }], message: "Hola", invoice: finalized },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual({ recipient: ["item 1: must be a string"] });
  });

  it("a query parameter given twice is a 400 naming it, not its first or last value", async () => {
    for (const query of ["name=a&name=b", "name__in=a&name__in=b", "page=1&page=2", "page_size=5&page_size=5"]) {
      const res = await s.rest("GET", `/v1/customers/?${query}`);
      expect(res.status, query).toBe(400);
      const [name] = query.split("=");
      expect(res.body.error.fields, query).toEqual({ [name]: [expect.stringMatching(/given more than once/)] });
    }
    expect((await s.rest("GET", "/v1/orders/?invoiced=true&invoiced=false")).status).toBe(400);
    expect((await s.rest("GET", "/v1/customers/?name__in=a,b")).status).toBe(200);
    expect((await s.rest("GET", "/v1/creditnotes/?expand=invoice&expand=invoice")).status).toBe(200);
  });
});
