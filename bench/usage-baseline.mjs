/**
 * The bare baseline of `npm run bench:usage` (bench/usage.ts, docs/performance.md "Usage
 * ingestion"): what Node's `node:http` + `pg` on the same PostgreSQL do for POST /v1/usages/
 * without the service's layers, answering the same JSON fields. It shares bench/baseline-server.mjs
 * with bench/baseline.mjs, so it uses every trick the service uses and no more: the API key cache
 * with the service's lifetime (30 s; unknown and revoked keys never cached), named prepared
 * statements, and the headers the service's answers carry (security headers, CSP, Vary,
 * X-Request-Id). Per request: the API key (from the cache, else read by the hex SHA-256 of the
 * bearer token), then ONE named prepared statement: the records (a single body is a batch of one)
 * as arrays through `unnest`, joined to the subscription lines of the key's organization, inserted
 * with ON CONFLICT DO NOTHING on the transaction id's partial unique index, and the answer built
 * with json_agg. No validation beyond the line belonging to the organization, no duplicate
 * resolution (the benchmark sends none).
 * Configured by DATABASE_URL, PORT and HOST (and API_KEY_CACHE_TTL_SECONDS), as the service.
 */
import { iso, newId, prepared, readBody, send, serveBaseline } from "./baseline-server.mjs";

const INSERT = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::timestamptz[], $5::text[]) WITH ORDINALITY
  AS t(id, line, quantity, at, tx, n)
), inserted AS (
  INSERT INTO "Usage" (id, "organizationId", "testMode", "subscriptionLineId", quantity, "dateTime", "transactionId")
  SELECT i.id, $6, $7, i.line, i.quantity, coalesce(i.at, now()), i.tx
  FROM input i JOIN "SubscriptionLine" sl ON sl.id = i.line JOIN "Subscription" s ON s.id = sl."subscriptionId"
  AND s."organizationId" = $6 AND s."testMode" = $7
  ORDER BY i.n
  ON CONFLICT ("organizationId", "testMode", "transactionId") WHERE "transactionId" IS NOT NULL DO NOTHING
  RETURNING *
)
SELECT coalesce(json_agg(json_build_object('id', u.id, 'subscription_line', u."subscriptionLineId", 'quantity',
trim_scale(u.quantity), 'date_time', ${iso('u."dateTime"')},
  'invoice', u."invoiceId", 'created', ${iso('u."createdAt"')}, 'transaction_id', u."transactionId")),
  '[]')::text AS json, count(*)::int AS n FROM inserted u`;

const insert = prepared("baseline_usages", INSERT);

serveBaseline(async (req, res, key, url) => {
  if (req.method === "POST" && /^\/v1\/usages\/?$/.test(url)) {
    const body = JSON.parse(await readBody(req));
    const records = Array.isArray(body.usages) ? body.usages : [body];
    const cols = [
      records.map(() => newId("usa")),
      records.map((r) => r.subscription_line),
      records.map((r) => String(r.quantity)),
      records.map((r) => r.date_time ?? null),
      records.map((r) => r.transaction_id ?? null),
    ];
    const row = (await insert([...cols, key.org, key.test])).rows[0];
    if (row.n !== records.length)
      return send(res, 400, '{"error":{"code":"validation_error","message":"unknown subscription line or duplicate"}}');
    if (!Array.isArray(body.usages)) return send(res, 201, row.json.slice(1, -1));
    return send(res, 201, `{"usages":${row.json},"duplicates":[]}`);
  }
  return send(res, 404, '{"error":{"code":"not_found"}}');
});
