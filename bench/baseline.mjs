/**
 * The bare baseline of `npm run bench:http` (bench/http.ts, docs/performance.md): what this stack
 * (Node's `node:http` + `pg` on the same PostgreSQL) does without the service's layers, serving
 * the SAME JSON as the service. bench/http.ts asserts the bodies equal at start, so a schema change
 * that changes the service's JSON fails the bench until this file follows it.
 *
 * Each request: the API key looked up by the hex SHA-256 of the bearer token (the service's
 * api_keys table, revoked and expired keys refused), then one SQL statement that builds the whole
 * JSON with json_build_object/json_agg:
 * - GET /v1/invoices/{id}/: the invoice as the REST adapter prints it (src/rest/serializers.ts invoice());
 * - POST /graphql: the page of 50 invoices of bench/http.ts INVOICES_QUERY (whatever the query
 *   text: the baseline serves that one page), newest first, as `{"data": ...}`;
 * - POST /v1/usages/: a raw INSERT ... RETURNING of one usage record (no validation beyond the
 *   subscription line belonging to the key's organization), as the REST adapter prints it;
 * - GET /healthz.
 * Configured by DATABASE_URL, PORT and HOST, as the service.
 */
import http from "node:http";
import crypto from "node:crypto";
import pg from "pg";

// numeric as text, parsed by the JSON building in SQL; dates as text
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

/** `yyyy-mm-dd hh:mm:ss` in UTC, as the REST adapter prints invoice, customer and payment timestamps. */
const plain = (col) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;
/** ISO 8601 with +00:00, as the REST adapter prints usage timestamps. */
const iso = (col) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;

const AUTH = `SELECT "organizationId" AS org, "testMode" AS test FROM "ApiKey" WHERE hash = $1 AND "revokedAt" IS NULL AND ("expiresAt" IS NULL OR "expiresAt" > now())`;

const INVOICE = `
SELECT json_build_object(
  'id', i.id,
  'customer', json_build_object('id', c.id, 'name', c.name, 'address', c.address, 'state', c."stateCode", 'country', c."countryId",
    'phone', c.phone, 'email', c.email, 'website', c.website, 'tax_settings', c."taxSettings", 'metadata', c.metadata,
    'created', ${plain('c."createdAt"')}, 'updated', ${plain('c."updatedAt"')}),
  'document', json_build_object('id', d.id, 'name', d.name, 'country', d."countryId", 'currency', i."currencyId"),
  'number', i.number,
  'test_mode', i."testMode",
  'date', to_char(i.date, 'YYYY-MM-DD'),
  'due_date', to_char(i."dueDate", 'YYYY-MM-DD'),
  'lines', (SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'description', l.description, 'quantity', l.quantity,
      'amount', l.amount, 'discount', l.discount, 'discount_scheme', l."discountScheme", 'exempt', l.exempt, 'total', l.total) ORDER BY l.position, l.id), '[]')
    FROM "InvoiceLine" l WHERE l."invoiceId" = i.id),
  'collection_method', i."collectionMethod",
  'payments', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'date', to_char(p.date, 'YYYY-MM-DD'), 'amount', p.amount, 'currency', p."currencyId",
      'description', p.description, 'source', NULL, 'payment_date', ${plain('p."paymentDate"')}, 'customer', p."customerId", 'invoice', p."invoiceId",
      'status', p.status, 'return_url', NULL, 'failure_reason', p."failureReason", 'metadata', p.metadata,
      'created', ${plain('p."createdAt"')}, 'updated', ${plain('p."updatedAt"')}) ORDER BY p."createdAt", p.id), '[]')
    FROM "Payment" p WHERE p."invoiceId" = i.id),
  'amount', i.amount, 'exempt', i.exempt, 'tax', i.tax, 'tax_percent', i."taxPercent", 'subtotal', i.subtotal, 'discount', i.discount,
  'discount_scheme', i."discountScheme", 'total', i.total,
  'period_start', to_char(i."periodStart", 'YYYY-MM-DD'), 'period_end', to_char(i."periodEnd", 'YYYY-MM-DD'),
  'local_file', i."localFile", 'note', i.note, 'fiscal_settings', i."fiscalSettings", 'status', i.status, 'metadata', i.metadata,
  'user', i."userEmail", 'created', ${plain('i."createdAt"')}, 'updated', ${plain('i."updatedAt"')}
)::text AS json
FROM "Invoice" i JOIN "Customer" c ON c.id = i."customerId" JOIN "DocumentType" d ON d.id = i."documentTypeId"
WHERE i.id = $1 AND i."organizationId" = $2 AND i."testMode" = $3`;

// the GraphQL page: numbers as the Decimal scalar prints them (strings), dates as the Date scalar
const PAGE = `
SELECT json_build_object('data', json_build_object('invoices', json_build_object('edges', coalesce(json_agg(json_build_object('node', json_build_object(
  'id', i.id, 'number', i.number, 'date', to_char(i.date, 'YYYY-MM-DD'), 'total', trim_scale(i.total)::text,
  'customer', json_build_object('id', c.id, 'name', c.name, 'country', CASE WHEN co.id IS NULL THEN NULL ELSE json_build_object('id', co.id, 'name', co.name) END),
  'lines', (SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'quantity', trim_scale(l.quantity)::text, 'amount', trim_scale(l.amount)::text, 'total', trim_scale(l.total)::text) ORDER BY l.position, l.id), '[]')
    FROM "InvoiceLine" l WHERE l."invoiceId" = i.id),
  'payments', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'amount', trim_scale(p.amount)::text, 'status', p.status) ORDER BY p."createdAt", p.id), '[]')
    FROM "Payment" p WHERE p."invoiceId" = i.id)
)) ORDER BY i."createdAt" DESC, i.id DESC), '[]'))))::text AS json
FROM (SELECT * FROM "Invoice" WHERE "organizationId" = $1 AND "testMode" = $2 ORDER BY "createdAt" DESC, id DESC LIMIT 50) i
JOIN "Customer" c ON c.id = i."customerId" LEFT JOIN "Country" co ON co.id = c."countryId"`;

const USAGE = `
WITH line AS (
  SELECT sl.id FROM "SubscriptionLine" sl JOIN "Subscription" s ON s.id = sl."subscriptionId"
  WHERE sl.id = $2 AND s."organizationId" = $5 AND s."testMode" = $6
), inserted AS (
  INSERT INTO "Usage" (id, "organizationId", "testMode", "subscriptionLineId", quantity, "dateTime")
  SELECT $1, $5, $6, line.id, $3::numeric, coalesce($4::timestamptz, now()) FROM line
  RETURNING *
)
SELECT json_build_object('id', u.id, 'subscription_line', u."subscriptionLineId", 'quantity', u.quantity, 'date_time', ${iso('u."dateTime"')},
  'invoice', u."invoiceId", 'created', ${iso('u."createdAt"')})::text AS json FROM inserted u`;

const ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const newId = (prefix) => {
  const bytes = crypto.randomBytes(24);
  let s = "";
  for (const b of bytes) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return `${prefix}_${s}`;
};

function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const notFound = JSON.stringify({ error: { code: "not_found", message: "not found" } });

async function handle(req, res) {
  const url = req.url ?? "/";
  if (url === "/healthz") return send(res, 200, '{"status":"ok"}');
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  if (!token) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
  const hash = crypto.createHash("sha256").update(token).digest("hex");
  const key = (await pool.query(AUTH, [hash])).rows[0];
  if (!key) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
  const invoice = /^\/v1\/invoices\/([^/]+)\/?$/.exec(url);
  if (req.method === "GET" && invoice) {
    const row = (await pool.query(INVOICE, [invoice[1], key.org, key.test])).rows[0];
    return row ? send(res, 200, row.json) : send(res, 404, notFound);
  }
  if (req.method === "POST" && url === "/graphql") {
    await readBody(req);
    const row = (await pool.query(PAGE, [key.org, key.test])).rows[0];
    return send(res, 200, row.json);
  }
  if (req.method === "POST" && /^\/v1\/usages\/?$/.test(url)) {
    const body = JSON.parse(await readBody(req));
    const row = (await pool.query(USAGE, [newId("usa"), body.subscription_line, String(body.quantity), body.date_time ?? null, key.org, key.test])).rows[0];
    return row ? send(res, 201, row.json) : send(res, 400, '{"error":{"code":"validation_error","fields":{"subscription_line":"not found"}}}');
  }
  return send(res, 404, notFound);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((e) => send(res, 500, JSON.stringify({ error: { code: "internal", message: String(e?.message ?? e) } })));
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 3001), process.env.HOST ?? "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void pool.end().then(() => process.exit(0));
});
