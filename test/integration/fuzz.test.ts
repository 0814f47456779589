/**
 * Property-based fuzz of every write route and GraphQL mutation (docs/input-limits.md): bodies
 * mutated from valid ones (wrong types, huge numbers, NUL, unpaired surrogates, deep nesting, huge
 * strings, keys like __proto__/constructor), path ids and query strings of GET routes; and, on every write
 * route, each scalar of a valid body replaced by an object or a list (a 4xx, never a 2xx). For each
 * answer: no 5xx, no `internal_error`, nothing written on a 4xx (a fingerprint of every table:
 * row count and latest updatedAt), and no internals (SQL, stack traces, file paths, Prisma names)
 * in an error body. The routes come from the router and the mutations from the schema, so a new
 * one is fuzzed without touching this file. fast-check with a fixed seed; a bounded number of
 * cases per endpoint.
 */
import fc from "fast-check";
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLInputType,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restRoutes } from "../../src/rest/router.js";
import { snake } from "../../src/rest/printer.js";
import { schema } from "../../src/graphql/schema.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";

const SEED = 20261124;
const REST_CASES = 8;
const GRAPHQL_CASES = 5;
const GET_CASES = 3;

let s: TestServer;
/** fixture ids by REST collection / GraphQL reference name */
const ids: Record<string, string> = {};
let tables: { name: string; updated: boolean }[] = [];

/** Row count and latest updatedAt of every table, in one query (ApiKey's last use is bookkeeping, left out). */
async function fingerprint(): Promise<string> {
  const parts = tables.map(
    (t) =>
      `'${t.name}', json_build_array((SELECT count(*) FROM "${t.name}` +
      `")${t.updated && t.name !== "ApiKey" ? `, (SELECT max("updatedAt") FROM "${t.name}")` : ""})`,
  );
  // at most 100 arguments to a function: one object per 40 tables, merged
  const objects: string[] = [];
  for (let i = 0; i < parts.length; i += 40) objects.push(`jsonb_build_object(${parts.slice(i, i + 40).join(", ")})`);
  const rows = await s.database.prisma.$queryRawUnsafe<{ f: unknown }[]>(`SELECT (${objects.join(" || ")})::text AS f`);
  return String(rows[0].f);
}

const INTERNALS = new RegExp(
  [
    String.raw`PrismaClient|prisma\.|\$queryRaw|\bSELECT\b[\s\S]{0,80}\bFROM\b|INSERT INTO|node_modules|\.[jt]s:\d+`,
    String.raw`\n\s+at |\/work\/|invalid byte sequence|violates .*constraint|numeric field overflow`,
    String.raw`Maximum call stack|is not a function|Cannot read propert`,
  ].join("|"),
);

interface Finding {
  endpoint: string;
  status: number;
  problem: string;
  body: string;
}
const findings: Finding[] = [];

/**
 * The next transaction id: it moves only when a transaction wrote (or locked rows), so an
 * unchanged one proves nothing was written and the full fingerprint need not be read again.
 */
async function nextXid(): Promise<string> {
  const rows = await s.database.prisma.$queryRawUnsafe<{ x: string }[]>(
    `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x`,
  );
  return rows[0].x;
}

/** The fingerprint and next transaction id after the last answer (null: unknown, read before the next request). */
let last: { fingerprint: string; xid: string } | null = null;

async function check(endpoint: string, send: () => Promise<Response>, writes = true): Promise<number> {
  if (writes) last ??= { fingerprint: await fingerprint(), xid: await nextXid() };
  const before = last?.fingerprint;
  const res = await send();
  const text = await res.text();
  const note = (problem: string) => findings.push({ endpoint, status: res.status, problem, body: text.slice(0, 300) });
  if (res.status >= 500) note("5xx");
  if (text.includes('"internal_error"')) note("internal_error");
  const isError = res.status >= 400 || text.includes('"errors"');
  if (isError && INTERNALS.test(text)) note(`internals in the error body: ${INTERNALS.exec(text)![0]}`);
  // a refused request: a 4xx, or a GraphQL answer with errors (one mutation per document, so nothing of it may stay)
  const refused = (res.status >= 400 && res.status < 500) || (res.status < 300 && text.startsWith('{"errors"'));
  if (writes && last && refused) {
    const xid = await nextXid();
    if (xid !== last.xid) {
      last = { fingerprint: await fingerprint(), xid };
      if (last.fingerprint !== before) note("a 4xx wrote something");
    }
  } else last = null; // a success (or a GET) may have written: read it again before the next write

  return res.status;
}

// ------------------------------------------------------------------------------------------------
// mutations of a valid value

const NASTY: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  0.1,
  1e14,
  -1e14,
  1e21,
  1e300,
  -1e300,
  99999999999999.99,
  "100000000000000",
  "-100000000000000.5",
  "1e5",
  "NaN",
  "Infinity",
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\\u0000",
  "\ud800",
  "x\udc00y",
  "\uffff",
  "🙂",
  "constructor",
  "__proto__",
  "cus_\u0000",
  "inv_%00",
  "cus_!!",
  "' OR 1=1; --",
  "%s%n",
  [],
  {},
  [[[]]],
  { id: "\u0000" },
  ["a", 1, null],
  "2026-13-45",
  "9999-12-31T23:59:59Z",
];
const ODD_KEYS = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "prototype",
  "",
  "\u0000",
  "\ud800",
  "a.b",
  "0",
  "x".repeat(300),
];

function nest(depth: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true })) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 300 }).map((d) => nest(d)) },
  { weight: 1, arbitrary: fc.constantFrom(1_001, 5_001, 200_000).map((n) => "x".repeat(n)) },
);

type Op =
  | { kind: "replace"; at: number; value: unknown }
  | { kind: "key"; at: number; key: string; value: unknown }
  | { kind: "drop"; at: number }
  | { kind: "wrap"; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), value: nastyValue }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("key" as const),
      at: fc.nat(),
      key: fc.constantFrom(...ODD_KEYS),
      value: nastyValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("wrap" as const), at: fc.nat() }) },
);

/** Every container (object or array) and leaf position of `value`, as [parent, key] pairs. */
function positions(value: unknown): [Record<string, unknown>, string][] {
  const out: [Record<string, unknown>, string][] = [];
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    for (const key of Object.keys(v)) {
      out.push([v as Record<string, unknown>, key]);
      stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return out;
}

/** `seed` with the mutations applied (1 to 3 of them). */
function mutate(seed: unknown, ops: Op[]): unknown {
  const root = { body: structuredClone(seed) };
  for (const o of ops) {
    const all = positions(root);
    if (all.length === 0) {
      root.body = {};
      continue;
    }
    const [parent, key] = all[o.at % all.length];
    if (o.kind === "replace") parent[key] = o.value;
    else if (o.kind === "drop") delete parent[key];
    else if (o.kind === "wrap") parent[key] = [parent[key]];
    else {
      const containers = all
        .map(([p, k]) => p[k])
        .filter((v): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v));
      const target = containers.length ? containers[o.at % containers.length] : root;
      Object.defineProperty(target, o.key, { value: o.value, enumerable: true, writable: true, configurable: true });
    }
  }
  return root.body;
}

/**
 * The REST names of the schema's JSON-object input fields (`metadata`, a source's `data`): what is under them is
 * free JSON, an object in place of a scalar included.
 */
const JSON_FIELDS = new Set(
  Object.values(schema.getTypeMap()).flatMap((type) =>
    isInputObjectType(type)
      ? Object.values(type.getFields())
          .filter((field) => getNamedType(field.type).name === "JSONObject")
          .map((field) => snake(field.name))
      : [],
  ),
);

/**
 * `seed` twice per scalar value in it (a string, number or boolean outside a JSON-object field): that value
 * replaced by an object of an operator (`{"$gt": value}`, no `id` or `code` a printed form would read) and by
 * a list holding it, with the path it was at.
 */
function typeMismatches(seed: unknown): { path: string; body: unknown }[] {
  const leaves: string[][] = [];
  const walk = (value: unknown, path: string[]) => {
    if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) if (!JSON_FIELDS.has(key)) walk(item, [...path, key]);
    } else if (value !== null && path.length) leaves.push(path);
  };
  walk(seed, []);
  return leaves.flatMap((path) =>
    [(value: unknown) => ({ $gt: value }), (value: unknown) => [value]].map((replace) => {
      const body = structuredClone(seed) as Record<string, unknown>;
      const parent = path.slice(0, -1).reduce((v, key) => v[key] as Record<string, unknown>, body);
      const key = path.at(-1)!;
      parent[key] = replace(parent[key]);
      return { path: path.join("."), body };
    }),
  );
}

const mutations = (seed: unknown, n: number, salt: number) =>
  fc
    .sample(fc.array(op, { minLength: 1, maxLength: 3 }), { seed: SEED + salt, numRuns: n })
    .map((ops) => mutate(seed, ops));

// ------------------------------------------------------------------------------------------------
// REST

/** A valid body for each write route; a route without one starts from `{}` (it is fuzzed all the same). */
function restSeeds(): Record<string, unknown> {
  const line = {
    name: "Consultoría",
    description: "Horas",
    quantity: 2,
    amount: 1000,
    discount: 10,
    discount_scheme: "%",
  };
  return {
    "POST /v1/customers": chileanCustomer({
      metadata: { crm: "1" },
      contacts: [{ name: "Ana", email: "ana@cliente.cl" }],
    }),
    "PATCH /v1/customers/:id": { name: "Cliente Dos SpA", metadata: { a: "b" } },
    "POST /v1/invoices": {
      customer: ids.customers,
      document: "CL33",
      lines: [line],
      discount: 5,
      discount_scheme: "%",
      note: "n",
      metadata: { k: "v" },
    },
    "PATCH /v1/invoices/:id": { lines: [line], note: "otra" },
    "POST /v1/orders": {
      customer: ids.customers,
      shipping_type: "1",
      address: "Camino 1",
      lines: [{ name: "Cajas", quantity: 2, amount: 1000 }],
    },
    "PATCH /v1/orders/:id": { address: "Camino 2" },
    "POST /v1/creditnotes": {
      invoice: ids.finalized,
      lines: [{ name: "Devolución", quantity: 1, amount: 100 }],
      note: "dañado",
    },
    "POST /v1/payments": { invoice: ids.finalized, amount: 100, description: "Abono" },
    "POST /v1/payments/:id/authorize": { source: ids.sources },
    "POST /v1/sources": { gateway: "test", customer: ids.customers, data: { token: "tok_visa" } },
    "POST /v1/usages": { subscription_line: ids.meteredLine, quantity: 5 },
    "POST /v1/customer_base/sessions": { customer: ids.customers, return_url: "https://example.com/back" },
    "POST /v1/reminders/messages": {
      subject: "Factura",
      recipient: ["a@b.cl"],
      message: "Hola",
      invoice: ids.finalized,
    },
    "POST /v1/products": { name: "Pro", unit_label: "seat", metadata: {} },
    "PATCH /v1/products/:id": { name: "Pro 2" },
    "POST /v1/plans": { product: ids.products, name: "Mensual", amount: 1000, currency: "CLP", frequency: "month" },
    "PATCH /v1/plans/:id": { name: "Mensual 2", amount: 1200 },
    "POST /v1/addons": { name: "Setup", amount: 9000, currency: "CLP", rates: [{ cycle: 1, percent: 50 }] },
    "PATCH /v1/addons/:id": { name: "Setup 2" },
    "POST /v1/coupons": { name: "Bienvenida", amount: 10, discount_scheme: "%", duration_scheme: "once" },
    "PATCH /v1/coupons/:id": { name: "Bienvenida 2" },
    "POST /v1/subscriptions": { customer: ids.customers, lines: [{ plan: ids.plans, quantity: 1 }] },
    "PATCH /v1/subscriptions/:id": { note: "n" },
    "POST /v1/test_clocks": { name: "Reloj", frozen_time: "2026-01-15T12:00:00Z" },
    "POST /v1/test_clocks/:id/advance": { frozen_time: "2026-02-15T12:00:00Z" },
    "PATCH /v1/billers/built_in/tax_profile": {
      tax_id: "76.042.235-5",
      business_name: "Acme SpA",
      activity: "Software",
      activity_codes: ["620200"],
      address: "Av. 1",
      commune: "Providencia",
      city: "Santiago",
      resolution_number: 0,
      resolution_date: "2026-01-15",
    },
    "POST /v1/billers/built_in/certificates": { file: "AAAA", password: "x" },
    "POST /v1/billers/built_in/cafs": { file: "PEFVVE9SSVpBQ0lPTj4=" },
    "POST /v1/billers/built_in/purchases": { xml: "<EnvioDTE/>" },
    "PATCH /v1/billers/built_in/swaps/:id": { status: "ACD" },
  };
}

/** The path of `route` with its parameters filled from the fixtures (a well-formed unknown id otherwise). */
function fill(path: string, params: Record<string, string> = {}): string {
  return (
    path.replace(/:([a-z]+)/g, (_m, name: string) => {
      if (params[name] !== undefined) return params[name];
      const collection = path.split("/:")[0].split("/").pop()!;
      return ids[collection] ?? "swa_000000000000000000000000";
    }) + "/"
  );
}

async function rest(method: string, path: string, raw?: string) {
  return fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.keys.acme}`, "content-type": "application/json" },
    body: raw,
  });
}

beforeAll(async () => {
  s = await startTestServer();
  // RateLimit left out: every request spends from its buckets, refused ones too (docs/limits.md), and the burst
  // bucket's first row appears when the requests first outrun the per-second rate, whichever request that is
  tables = (
    await s.database.prisma.$queryRawUnsafe<{ name: string; updated: boolean }[]>(
      `SELECT table_name AS name, bool_or(column_name = 'updatedAt') AS updated FROM information_schema.columns ` +
        `WHERE table_schema = current_schema() AND table_name NOT IN ('_prisma_migrations', 'RateLimit') ` +
        `GROUP BY table_name ORDER BY table_name`,
    )
  ).map((t) => ({ name: t.name, updated: Boolean(t.updated) }));
  const post = async (path: string, body: unknown) => {
    const res = await s.rest("POST", path, { body });
    if (res.status >= 300) throw new Error(`fixture ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  ids.customers = (await post("/v1/customers/", chileanCustomer())).id;
  ids.invoices = (
    await post("/v1/invoices/", {
      customer: ids.customers,
      document: "CL33",
      lines: [{ name: "A", quantity: 1, amount: 1000 }],
    })
  ).id;
  const finalized = (
    await post("/v1/invoices/", {
      customer: ids.customers,
      document: "CL33",
      currency: "CLP",
      lines: [{ name: "B", quantity: 1, amount: 5000 }],
    })
  ).id;
  expect((await s.rest("GET", `/v1/invoices/${finalized}/finalize/`)).status).toBe(200);
  ids.finalized = finalized;
  ids.orders = (
    await post("/v1/orders/", {
      customer: ids.customers,
      shipping_type: "1",
      address: "Camino 1",
      lines: [{ name: "Cajas", quantity: 1, amount: 1000 }],
    })
  ).id;
  ids.payments = (await post("/v1/payments/", { invoice: finalized, amount: 100, description: "Abono" })).id;
  ids.sources = (
    await post("/v1/sources/", { gateway: "test", customer: ids.customers, data: { token: "tok_visa" } })
  ).id;
  ids.products = (await post("/v1/products/", { name: "Pro" })).id;
  ids.plans = (await post("/v1/plans/", { product: ids.products, amount: 1000, currency: "CLP" })).id;
  const metered = (
    await post("/v1/plans/", { product: ids.products, amount: 10, currency: "CLP", usage_scheme: "metered" })
  ).id;
  ids.addons = (await post("/v1/addons/", { name: "Setup", amount: 9000, currency: "CLP" })).id;
  ids.coupons = (
    await post("/v1/coupons/", { name: "B", amount: 10, discount_scheme: "%", duration_scheme: "once" })
  ).id;
  const subscription = await post("/v1/subscriptions/", {
    customer: ids.customers,
    lines: [{ plan: ids.plans }, { plan: metered }],
  });
  ids.subscriptions = subscription.id;
  ids.meteredLine =
    (subscription.lines as { id: string; plan: string | { id: string } }[]).find(
      (l) => (typeof l.plan === "string" ? l.plan : l.plan.id) === metered,
    )?.id ?? "";
  ids.test_clocks = (await post("/v1/test_clocks/", { name: "Reloj", frozen_time: "2026-01-15T12:00:00Z" })).id;
  ids.creditnotes = (
    await post("/v1/creditnotes/", { invoice: finalized, lines: [{ name: "D", quantity: 1, amount: 100 }] })
  ).id;
});
afterAll(async () => s?.close());

describe("fuzz", () => {
  it(
    "every POST and PATCH route of the router: mutated bodies never 5xx, never write on a 4xx, never show " +
      "internals",
    async () => {
      const seeds = restSeeds();
      const routes = restRoutes().filter((r) => r.method === "POST" || r.method === "PATCH");
      expect(routes.length).toBeGreaterThanOrEqual(30);
      let salt = 0;
      for (const route of routes) {
        const seed = seeds[`${route.method} ${route.path}`] ?? {};
        for (const body of mutations(seed, REST_CASES, salt++)) {
          let raw: string;
          try {
            raw = JSON.stringify(body);
          } catch {
            continue;
          }
          await check(`${route.method} ${route.path}`, () => rest(route.method, fill(route.path), raw));
        }
        // raw text a client could send: deep nesting, \u0000 escapes, a lone surrogate escape, broken JSON
        for (const raw of [
          "[".repeat(50_000),
          `{"name":"a\\u0000","id":"\\udfff"}`,
          `{"a":${"[".repeat(100)}${"]".repeat(100)}}`,
          "{",
          "1e999",
        ]) {
          await check(`${route.method} ${route.path} (raw)`, () => rest(route.method, fill(route.path), raw));
        }
      }
      expect(findings).toEqual([]);
    },
  );

  it(
    "every POST and PATCH route of the router: a scalar's value replaced by an object or a list is a 4xx, never " +
      "coerced or dropped",
    async () => {
      const seeds = restSeeds();
      const routes = restRoutes().filter((r) => r.method === "POST" || r.method === "PATCH");
      const accepted: string[] = [];
      let cases = 0;
      for (const route of routes) {
        const endpoint = `${route.method} ${route.path}`;
        for (const { path, body } of typeMismatches(seeds[endpoint] ?? {})) {
          cases++;
          const status = await check(`${endpoint} (${path})`, () =>
            rest(route.method, fill(route.path), JSON.stringify(body)),
          );
          if (status < 400 || status >= 500) accepted.push(`${endpoint} ${path}: ${status}`);
        }
      }
      expect(cases).toBeGreaterThan(50);
      expect(accepted).toEqual([]);
      expect(findings).toEqual([]);
    },
  );

  it("every GET route: odd path ids and query strings never 5xx nor show internals", async () => {
    const routes = restRoutes().filter((r) => r.method === "GET");
    const oddIds = fc.sample(
      fc.oneof(
        fc.constantFrom(
          "%00",
          "inv_%00",
          "cus_%ED%A0%80",
          "%C0%AF",
          "constructor",
          "__proto__",
          "toString",
          "..",
          "inv_" + "a".repeat(500),
          "%27%3B--",
          "inv_%F0%9F%99%82",
        ),
        fc.string({ maxLength: 12 }).map(encodeURIComponent),
      ),
      { seed: SEED, numRuns: GET_CASES },
    );
    const queries = [
      "?page=%00",
      "?page_size=1e999",
      "?page=-1&page_size=0",
      "?name=%00",
      "?name__in=%ED%A0%80",
      "?created__gte=constructor",
      "?__proto__=1",
      "?constructor=x",
      "?expand=%00",
      `?name=${"x".repeat(2000)}`,
      "?status__in=a,,b&page=2",
    ];
    let salt = 0;
    for (const route of routes) {
      if (route.path.includes(":")) {
        for (const id of oddIds)
          await check(
            `GET ${route.path} (id)`,
            () =>
              rest(
                "GET",
                fill(route.path, Object.fromEntries([...route.path.matchAll(/:([a-z]+)/g)].map((m) => [m[1], id]))),
              ),
            false,
          );
      } else {
        const sample = fc.sample(fc.constantFrom(...queries), { seed: SEED + salt++, numRuns: GET_CASES });
        for (const q of sample)
          await check(`GET ${route.path}${q}`, () => rest("GET", `${fill(route.path)}${q}`), false);
      }
    }
    expect(findings).toEqual([]);
  });

  it(
    "every GraphQL mutation of the schema: mutated variables never give internal_error, a 5xx, a write on error or " +
      "internals",
    async () => {
      const mutationType = schema.getMutationType()!;
      const fields = Object.values(mutationType.getFields());
      expect(fields.length).toBeGreaterThan(30);
      const idFor = (name: string, field: string): string => {
        const byName: Record<string, string> = {
          customer: ids.customers,
          invoice: ids.finalized,
          order: ids.orders,
          payment: ids.payments,
          source: ids.sources,
          product: ids.products,
          plan: ids.plans,
          addon: ids.addons,
          coupon: ids.coupons,
          subscription: ids.subscriptions,
          subscriptionLine: ids.meteredLine,
          creditNote: ids.creditnotes,
        };
        if (name === "id") {
          const resource = Object.keys(byName).find((k) => field.toLowerCase().includes(k.toLowerCase()));
          return resource
            ? byName[resource]
            : field.toLowerCase().includes("clock")
              ? ids.test_clocks
              : "swa_000000000000000000000000";
        }
        return byName[name] ?? ids.customers;
      };
      /** A plausible value of `type` (required and optional fields), ids from the fixtures. */
      const valueOf = (type: GraphQLInputType, name: string, field: string, depth = 0): unknown => {
        if (isNonNullType(type)) return valueOf(type.ofType, name, field, depth);
        if (isListType(type)) return [valueOf(type.ofType, name, field, depth)];
        if (isEnumType(type)) return type.getValues()[0].value;
        if (isInputObjectType(type)) {
          if (depth > 3) return {};
          return Object.fromEntries(
            Object.values(type.getFields()).map((f) => [f.name, valueOf(f.type, f.name, field, depth + 1)]),
          );
        }
        if (isScalarType(type)) {
          switch (type.name) {
            case "ID":
              return idFor(name, field);
            case "Int":
              return 1;
            case "Float":
              return 1.5;
            case "Boolean":
              return false;
            case "Decimal":
              return "10";
            case "Date":
              return "2026-01-15";
            case "DateTime":
              return "2026-01-15T12:00:00Z";
            case "JSONObject":
              return { k: "v" };
            default:
              return name === "email"
                ? "a@b.cl"
                : name === "currency"
                  ? "CLP"
                  : name === "country"
                    ? "CL"
                    : name === "document"
                      ? "CL33"
                      : "x";
          }
        }
        return null;
      };
      let salt = 1000;
      for (const field of fields) {
        const selection =
          isObjectType(getNamedType(field.type)) || getNamedType(field.type).constructor.name !== "GraphQLScalarType"
            ? " { __typename }"
            : "";
        const query =
          `mutation(${field.args.map((a) => `$${a.name}: ${String(a.type)}`).join(", ")}) ` +
          `{ ${field.name}` +
          (field.args.length ? `(${field.args.map((a) => `${a.name}: $${a.name}`).join(", ")})` : "") +
          `${selection} }`;
        const seed = Object.fromEntries(field.args.map((a) => [a.name, valueOf(a.type, a.name, field.name)]));
        for (const variables of mutations(seed, GRAPHQL_CASES, salt++)) {
          let raw: string;
          try {
            raw = JSON.stringify({ query, variables });
          } catch {
            continue;
          }
          await check(`mutation ${field.name}`, () =>
            fetch(`${s.url}/graphql`, {
              method: "POST",
              headers: { authorization: `Bearer ${s.keys.acme}`, "content-type": "application/json" },
              body: raw,
            }),
          );
        }
      }
      expect(findings).toEqual([]);
    },
  );
});
