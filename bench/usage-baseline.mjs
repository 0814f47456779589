/**
 * The bare baseline of `npm run bench:usage` (bench/usage.ts, docs/performance.md "Usage
 * ingestion"): what Node's `node:http` + `pg` on the same PostgreSQL do for POST /v1/usages/
 * without the service's layers, answering the same JSON fields. Per request: the API key looked up
 * by the hex SHA-256 of the bearer token (as bench/baseline.mjs), then ONE statement: the records
 * (a single body is a batch of one) as arrays through `unnest`, joined to the subscription lines of
 * the key's organization, inserted with ON CONFLICT DO NOTHING on the transaction id's partial
 * unique index, and the answer built with json_agg. No validation beyond the line belonging to the
 * organization, no duplicate resolution (the benchmark sends none).
 * Configured by DATABASE_URL, PORT and HOST, as the service.
 */
import http from "node:http";
import crypto from "node:crypto";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const iso = (col) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;
const AUTH = `SELECT "organizationId" AS org, "testMode" AS test FROM "ApiKey" WHERE hash = $1 AND "revokedAt" IS NULL AND ("expiresAt" IS NULL OR "expiresAt" > now())`;
const INSERT = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::timestamptz[], $5::text[]) WITH ORDINALITY AS t(id, line, quantity, at, tx, n)
), inserted AS (
  INSERT INTO "Usage" (id, "organizationId", "testMode", "subscriptionLineId", quantity, "dateTime", "transactionId")
  SELECT i.id, $6, $7, i.line, i.quantity, coalesce(i.at, now()), i.tx
  FROM input i JOIN "SubscriptionLine" sl ON sl.id = i.line JOIN "Subscription" s ON s.id = sl."subscriptionId" AND s."organizationId" = $6 AND s."testMode" = $7
  ORDER BY i.n
  ON CONFLICT ("organizationId", "testMode", "transactionId") WHERE "transactionId" IS NOT NULL DO NOTHING
  RETURNING *
)
SELECT coalesce(json_agg(json_build_object('id', u.id, 'subscription_line', u."subscriptionLineId", 'quantity', u.quantity, 'date_time', ${iso('u."dateTime"')},
  'invoice', u."invoiceId", 'created', ${iso('u."createdAt"')}, 'transaction_id', u."transactionId")), '[]')::text AS json, count(*)::int AS n FROM inserted u`;

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

async function handle(req, res) {
  const url = req.url ?? "/";
  if (url === "/healthz") return send(res, 200, '{"status":"ok"}');
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  if (!token) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
  const hash = crypto.createHash("sha256").update(token).digest("hex");
  const key = (await pool.query(AUTH, [hash])).rows[0];
  if (!key) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
  if (req.method === "POST" && /^\/v1\/usages\/?$/.test(url)) {
    const body = JSON.parse(await readBody(req));
    const records = Array.isArray(body.usages) ? body.usages : [body];
    const cols = [records.map(() => newId("usa")), records.map((r) => r.subscription_line), records.map((r) => String(r.quantity)), records.map((r) => r.date_time ?? null), records.map((r) => r.transaction_id ?? null)];
    const row = (await pool.query(INSERT, [...cols, key.org, key.test])).rows[0];
    if (row.n !== records.length) return send(res, 400, '{"error":{"code":"validation_error","message":"unknown subscription line or duplicate"}}');
    if (!Array.isArray(body.usages)) return send(res, 201, row.json.slice(1, -1));
    return send(res, 201, `{"usages":${row.json},"duplicates":[]}`);
  }
  return send(res, 404, '{"error":{"code":"not_found"}}');
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
